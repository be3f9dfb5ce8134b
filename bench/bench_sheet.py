"""Style-sheet speed on a 5,000-entry sheet: add one entry, parse, brief.

Run: python bench/bench_sheet.py [--entries N] [--rounds N]

Each figure is the median of several rounds, printed beside a baseline measured in the same
run on the same disk (writing and fsyncing the same bytes; reading them), so the ratio says
what Stet adds to the unavoidable I/O on this machine. Targets: add under 10 ms, parse under
50 ms.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pygit2

from stet_lsp.core.model import KINDS
from stet_lsp.core.sheet import StyleSheet
from stet_lsp.core.sheet_format import SheetDocument
from stet_lsp.core.targets import resolve_target


def median_ms(action: Callable[[], object], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        action()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def build_sheet(root: Path, count: int) -> StyleSheet:
    sheet = StyleSheet(resolve_target(root))
    with sheet.edit() as document:
        from stet_lsp.core.model import Entry, utc_now

        for number in range(count):
            document.add(
                Entry(
                    id=f"e{number:05d}",
                    kind=KINDS[number % len(KINDS)],
                    author="agent" if number % 2 else "human",
                    text=f"Entry {number}: wrap errors with the helper in module {number % 97}.",
                    created=utc_now(),
                )
            )
    return sheet


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--entries", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="stet-bench-") as folder:
        root = Path(folder)
        pygit2.init_repository(folder, initial_head="main")
        sheet = build_sheet(root, args.entries)
        data = sheet.path.read_bytes()
        text = data.decode()
        scratch = root / "baseline.md"

        def write_baseline() -> None:
            with open(scratch, "wb") as stream:
                stream.write(data)
                stream.flush()
                os.fsync(stream.fileno())

        rows = [
            (
                "add one entry (lock, parse, render, fsync, rename)",
                median_ms(lambda: sheet.add("one more entry", author="agent"), args.rounds),
                median_ms(write_baseline, args.rounds),
                "write+fsync same bytes",
                10.0,
            ),
            (
                "parse the sheet",
                median_ms(lambda: SheetDocument.parse(text), args.rounds),
                median_ms(lambda: scratch.read_bytes().decode(), args.rounds),
                "read+decode",
                50.0,
            ),
            (
                "brief (800 tokens)",
                median_ms(lambda: sheet.brief(), args.rounds),
                median_ms(lambda: scratch.read_bytes().decode(), args.rounds),
                "read+decode",
                None,
            ),
        ]
    print(
        f"sheet: {args.entries} entries, {len(data) / 1024:.0f} KiB; median of {args.rounds} rounds"
    )
    for name, measured, baseline, baseline_name, target in rows:
        verdict = ""
        if target is not None:
            verdict = f"  target < {target:.0f} ms: {'met' if measured < target else 'MISSED'}"
        print(
            f"{name:<52} {measured:8.2f} ms   baseline ({baseline_name}) {baseline:7.2f} ms"
            f"   ratio {measured / baseline:6.1f}x{verdict}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
