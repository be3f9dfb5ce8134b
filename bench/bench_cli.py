"""Start-up of the commands agents call often, as whole processes.

Run: python bench/bench_cli.py [--rounds N]

`stet note add` and `stet brief` run as processes (`python -m stet_lsp ...`) in a throwaway
repository with a small style sheet, interleaved with `python -c pass` in the same run, so
the ratio says what Stet adds to starting the interpreter on this machine. Target: each
command within 5x of `python -c pass` (median of the rounds).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_RATIO = 5.0


def run_ms(argv: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(argv, cwd=cwd, check=True, stdout=subprocess.DEVNULL)
    return (time.perf_counter() - start) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=15)
    options = parser.parse_args()
    python = sys.executable
    commands = {
        "python -c pass": [python, "-c", "pass"],
        "stet note add": [python, "-m", "stet_lsp", "note", "add", "--author", "agent", "x"],
        "stet brief": [python, "-m", "stet_lsp", "brief"],
        "stet gate --help": [python, "-m", "stet_lsp", "gate", "--help"],
    }
    with tempfile.TemporaryDirectory(prefix="stet-bench-cli-") as name:
        root = Path(name)
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        env_note = [python, "-m", "stet_lsp", "note", "add", "Wrap errors with the helper."]
        subprocess.run(env_note, cwd=root, check=True, stdout=subprocess.DEVNULL)
        times: dict[str, list[float]] = {label: [] for label in commands}
        for _ in range(options.rounds):
            for label, argv in commands.items():  # interleaved: load drifts hit all alike
                times[label].append(run_ms(argv, root))
    floor = statistics.median(times["python -c pass"])
    print(f"Python {sys.version.split()[0]} on {os.cpu_count()} CPU(s), {options.rounds} rounds")
    print(f"{'command':<20} {'median ms':>10} {'min ms':>8} {'x python -c pass':>17}")
    failed = False
    for label, values in times.items():
        median = statistics.median(values)
        ratio = median / floor
        mark = ""
        if label in ("stet note add", "stet brief"):
            ok = ratio <= TARGET_RATIO
            failed |= not ok
            mark = "  ok" if ok else f"  MISSED (target {TARGET_RATIO:.0f}x)"
        print(f"{label:<20} {median:>10.1f} {min(values):>8.1f} {ratio:>16.2f}x{mark}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
