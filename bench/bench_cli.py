"""Start-up of the commands agents call often, as whole processes.

Run: python bench/bench_cli.py [--rounds N]

`stet note add` and `stet brief` run as processes (as the `stet` console script runs them)
in a throwaway repository with a small style sheet, interleaved with `python -c pass` in the
same run, so the ratio says what Stet adds to starting the interpreter. Target: each command
within 5x of `python -c pass` (median of the rounds). Two interpreters: the one a user's
install gives (bench/interpreters.py) and this machine's own, start-up hooks and all.
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

sys.path.insert(0, str(Path(__file__).resolve().parent))  # interpreters

from interpreters import Interpreter, clean_interpreter, machine_interpreter

TARGET_RATIO = 5.0


def run_ms(argv: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(argv, cwd=cwd, check=True, stdout=subprocess.DEVNULL)
    return (time.perf_counter() - start) * 1000


def measure(interpreter: Interpreter, rounds: int, root: Path) -> dict[str, list[float]]:
    stet = interpreter.stet
    commands = {
        "python -c pass": [interpreter.python, "-c", "pass"],
        "stet note add": [*stet, "note", "add", "--author", "agent", "x"],
        "stet brief": [*stet, "brief"],
        "stet gate --help": [*stet, "gate", "--help"],
    }
    times: dict[str, list[float]] = {label: [] for label in commands}
    for _ in range(rounds):
        for label, argv in commands.items():  # interleaved: load drifts hit all alike
            times[label].append(run_ms(argv, root))
    return times


def report(title: str, times: dict[str, list[float]]) -> bool:
    floor = statistics.median(times["python -c pass"])
    print(f"\n{title}")
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
    return failed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=15)
    options = parser.parse_args()
    print(f"Python {sys.version.split()[0]} on {os.cpu_count()} CPU(s), {options.rounds} rounds")
    with tempfile.TemporaryDirectory(prefix="stet-bench-cli-") as name:
        root = Path(name) / "repository"
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        clean = clean_interpreter(Path(name) / "venv")
        first = [*clean.stet, "note", "add", "Wrap errors with the helper."]
        subprocess.run(first, cwd=root, check=True, stdout=subprocess.DEVNULL)
        # A repository's HEAD is rarely seconds old: wait until the branch cache believes it
        # (stet_lsp.core.targets, two seconds) and let one run write it, or the first rounds
        # all load libgit2.
        time.sleep(max(0.0, 2.5 - (time.time() - (root / ".git" / "HEAD").stat().st_mtime)))
        subprocess.run([*clean.stet, "brief"], cwd=root, check=True, stdout=subprocess.DEVNULL)
        failed = report("as a user's install runs it", measure(clean, options.rounds, root))
        machine = measure(machine_interpreter(), options.rounds, root)
        failed |= report("through this machine's interpreter", machine)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
