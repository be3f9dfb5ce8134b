"""Language-server latency: didChange of one line in a 20,000-line file to publishDiagnostics,
and the initialize response time.

Run: python bench/bench_server.py [--lines N] [--edits N]

Incremental edits (one changed line) are measured against full-text edits of the same file in
the same run (every change sends the whole document, so the server re-lexes all of it): the
ratio shows what incremental re-lexing saves. Start-up is measured beside a bare pygls server
with no features in the same run (Python, pygls and lsprotocol alone). Targets: p99 under
30 ms per edit; initialize under 500 ms.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pygit2

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # lsp_pipe
from lsp_pipe import PipeServer
from pygls.uris import from_fs_path

BARE_PYGLS = "from pygls.lsp.server import LanguageServer\nLanguageServer('bare', '0').start_io()\n"


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def initialize_ms(rounds: int) -> tuple[float, float]:
    """Median time from process start to the initialize answer: Stet, and a bare pygls
    server with no features (the floor any pygls server pays: Python, pygls, lsprotocol)."""
    bare, stet = [], []
    for _ in range(rounds):
        for command, times in (([sys.executable, "-c", BARE_PYGLS], bare), (None, stet)):
            start = time.perf_counter()
            server = PipeServer(command)
            server.send({"id": 1, "method": "initialize", "params": {"capabilities": {}}})
            server.wait_for(lambda m: m.get("id") == 1)
            times.append((time.perf_counter() - start) * 1000)
            server.close()
    return statistics.median(stet), statistics.median(bare)


def edits_ms(root: Path, lines: int, edits: int, incremental: bool) -> list[float]:
    path = root / f"big_{'inc' if incremental else 'full'}.py"
    body = [f"value_{n} = compute({n})  # plain comment {n}" for n in range(lines)]
    for n in range(0, lines, 1000):
        body[n] = f"# stet: note number {n}"
    path.write_text("\n".join(body) + "\n")
    uri = from_fs_path(str(path))
    server = PipeServer()
    server.send({"id": 1, "method": "initialize", "params": {"capabilities": {}}})
    server.wait_for(lambda m: m.get("id") == 1)
    server.send({"method": "initialized", "params": {}})
    server.send(
        {
            "method": "textDocument/didOpen",
            "params": {
                "textDocument": {
                    "uri": uri,
                    "languageId": "python",
                    "version": 1,
                    "text": "\n".join(body) + "\n",
                }
            },
        }
    )
    server.wait_for(lambda m: m.get("method") == "textDocument/publishDiagnostics")
    times = []
    for number in range(edits):
        line = (number * 97) % lines
        new = f"value_{line} = compute({line} + {number})  # stet: edit {number}"
        old = body[line]
        body[line] = new
        if incremental:
            change: dict[str, Any] = {
                "range": {
                    "start": {"line": line, "character": 0},
                    "end": {"line": line, "character": len(old)},
                },
                "text": new,
            }
        else:
            change = {"text": "\n".join(body) + "\n"}
        start = time.perf_counter()
        server.send(
            {
                "method": "textDocument/didChange",
                "params": {
                    "textDocument": {"uri": uri, "version": number + 2},
                    "contentChanges": [change],
                },
            }
        )
        server.wait_for(lambda m: m.get("method") == "textDocument/publishDiagnostics")
        times.append((time.perf_counter() - start) * 1000)
    server.close()
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lines", type=int, default=20_000)
    parser.add_argument("--edits", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="stet-bench-") as folder:
        root = Path(folder)
        pygit2.init_repository(folder, initial_head="main")
        incremental = edits_ms(root, args.lines, args.edits, incremental=True)
        full = edits_ms(root, args.lines, args.edits, incremental=False)
    initialize, bare = initialize_ms(args.rounds)
    print(f"didChange -> publishDiagnostics, {args.lines} lines, {args.edits} edits")
    for name, times in (("one-line edit (incremental)", incremental), ("full-text change", full)):
        print(
            f"  {name:<30} p50 {percentile(times, 0.5):7.2f} ms"
            f"   p99 {percentile(times, 0.99):7.2f} ms"
        )
    p99 = percentile(incremental, 0.99)
    print(
        f"  ratio full/incremental p50 {percentile(full, 0.5) / percentile(incremental, 0.5):.1f}x;"
        f" target p99 < 30 ms: {'met' if p99 < 30 else 'MISSED'}"
    )
    print(
        f"initialize response {initialize:.0f} ms (median of {args.rounds}); a bare pygls server"
        f" {bare:.0f} ms; ratio {initialize / bare:.2f}x;"
        f" target < 500 ms: {'met' if initialize < 500 else 'MISSED'}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
