"""Language-server latency: didChange of one line in a 20,000-line file to publishDiagnostics,
the same while a style-sheet write waits on a held lock or with style-sheet entries anchored
in the file, and the initialize response time.

Run: python bench/bench_server.py [--lines N] [--edits N] [--blocks N] [--rounds N] [--quick]
     [--anchors] [--long-lines N]

Every figure stands beside a baseline measured in the same run:
- one-line (incremental) edits against full-text edits of the same file (every change sends
  the whole document, so the server re-lexes all of it): what incremental re-lexing saves;
- one-line edits while `stet.note.add` waits for the sheet's lock (held by this process)
  against the same edits in the same server with no write waiting, in alternating blocks
  (each edit adds or removes a margin note, so the work per edit stays the same): whether
  anything blocks the loop;
- one-line edits of a file in which style-sheet entries are anchored (`MOVED` whose lines
  moved, `LOST` whose text is gone, so the server searches for similar lines; the edits
  also change the moved entries' own lines now and then) against the same edits of the
  same text with none, each in its own server, in alternating blocks: what keeping the
  anchors in step with the edits costs;
- one-line edits of a small file, each sent right after another file of `--long-lines`
  lines (5 MB at the default) is opened, against the same edits with nothing opened, in
  alternating rounds in one server: whether opening a long file holds up the loop;
- start-up (spawn to the initialize answer) against a bare pygls server with no features
  (Python, pygls and lsprotocol alone), interleaved, both from compiled bytecode.
Targets: p99 under 30 ms per edit (with anchored entries too), under 50 ms while a write
waits; initialize within 1.1x of the bare server.
"""

from __future__ import annotations

import argparse
import os
import queue
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

from stet_lsp.core.anchors import line_key
from stet_lsp.core.locking import held as held_lock
from stet_lsp.core.model import Anchor
from stet_lsp.core.sheet import StyleSheet
from stet_lsp.core.targets import resolve_target

BARE_PYGLS = "from pygls.lsp.server import LanguageServer\nLanguageServer('bare', '0').start_io()\n"
# A push client (no pull capability) that wants the document's version on each publish.
PUSH_CLIENT = {"textDocument": {"publishDiagnostics": {"versionSupport": True}}}
ADD_ID = 2
OUTLINE_ID = 1000
MOVED, LOST = 10, 3


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


class Document:
    """One big Python file open in a fresh server. Messages other than the awaited
    diagnostics are kept in `seen` by id, so an answer arriving mid-edit is not lost."""

    def __init__(self, path: Path, lines: int, text: list[str] | None = None) -> None:
        self.body = list(text) if text is not None else body(lines)
        self.original = list(self.body)
        path.write_text(self.text())
        self.uri = from_fs_path(str(path))
        self.version = 1
        self.edits = 0
        self.seen: dict[Any, dict[str, Any]] = {}
        self.server = PipeServer()
        self.server.send({"id": 1, "method": "initialize", "params": {"capabilities": PUSH_CLIENT}})
        self.server.answer(1)
        self.server.send({"method": "initialized", "params": {}})
        self.server.send(
            {
                "method": "textDocument/didOpen",
                "params": {
                    "textDocument": {
                        "uri": self.uri,
                        "languageId": "python",
                        "version": 1,
                        "text": self.text(),
                    }
                },
            }
        )
        self.wait_diagnostics()

    def text(self) -> str:
        return "\n".join(self.body) + "\n"

    def settle(self) -> None:
        """Wait for the server's background work on the document (the outline waits for it)."""
        self.server.send(
            {
                "id": OUTLINE_ID,
                "method": "textDocument/documentSymbol",
                "params": {"textDocument": {"uri": self.uri}},
            }
        )
        self.answer(OUTLINE_ID, timeout=60)

    def keep(self, message: dict[str, Any]) -> bool:
        if "id" in message and "method" not in message:
            self.seen[message["id"]] = message
        return False

    def wait_diagnostics(self) -> None:
        self.server.wait_for(
            lambda m: (
                self.keep(m)
                or (
                    m.get("method") == "textDocument/publishDiagnostics"
                    and m["params"]["uri"] == self.uri
                    and m["params"].get("version") == self.version
                )
            )
        )

    def edit(self, incremental: bool) -> float:
        """Change one more line (each edit adds a margin note, so the diagnostics grow)."""
        line = (self.edits * 97) % len(self.body)
        return self.change(
            line,
            f"value_{line} = compute({line} + {self.edits})  # stet: edit {self.edits}",
            incremental,
        )

    def toggle(self) -> float:
        """Add a margin note to a line, or take the last one away: the diagnostics change
        every time but do not grow, so blocks of these compare fairly wherever they fall."""
        line = (self.edits // 2 * 97) % len(self.body)
        text = self.original[line] if self.edits % 2 else f"{self.original[line]}  # stet: toggled"
        return self.change(line, text, True)

    def change(self, line: int, new: str, incremental: bool) -> float:
        """Milliseconds from sending didChange to its diagnostics."""
        old, self.body[line] = self.body[line], new
        self.edits += 1
        self.version += 1
        change: dict[str, Any] = (
            {
                "range": {
                    "start": {"line": line, "character": 0},
                    "end": {"line": line, "character": len(old)},
                },
                "text": new,
            }
            if incremental
            else {"text": self.text()}
        )
        start = time.perf_counter()
        self.server.send(
            {
                "method": "textDocument/didChange",
                "params": {
                    "textDocument": {"uri": self.uri, "version": self.version},
                    "contentChanges": [change],
                },
            }
        )
        self.wait_diagnostics()
        return (time.perf_counter() - start) * 1000

    def answer(self, request_id: int, timeout: float = 30) -> dict[str, Any]:
        if request_id in self.seen:
            return self.seen.pop(request_id)
        return self.server.answer(request_id, timeout)


def body(lines: int) -> list[str]:
    text = [f"value_{n} = compute({n})  # plain comment {n}" for n in range(lines)]
    for n in range(0, lines, 1000):
        text[n] = f"# stet: note number {n}"
    return text


def edits_ms(root: Path, lines: int, edits: int, incremental: bool) -> list[float]:
    """Edits of a document whose opening the server has finished with (`settle`), as in the
    other cases: the first edit right after opening 20,000 lines waits for that work."""
    document = Document(root / f"big_{'inc' if incremental else 'full'}.py", lines)
    try:
        document.settle()
        return [document.edit(incremental) for _ in range(edits)]
    finally:
        document.server.close()


def locked_ms(
    root: Path, lines: int, edits: int, blocks: int
) -> tuple[list[float], list[float], list[float]]:
    """Blocks of one-line edits with no write waiting, alternating with blocks sent while a
    `stet.note.add` waits for the sheet's lock held here; and each add's answer time after
    the lock is let go (its entry must then be on disk)."""
    target = resolve_target(root)
    StyleSheet(target).add("seed entry: the sheet and its folder exist")
    lock = target.sheet_path.with_name(target.sheet_path.name + ".lock")
    document = Document(root / "big_lock.py", lines)
    free: list[float] = []
    held: list[float] = []
    answers: list[float] = []
    try:
        for _ in range(6):
            document.toggle()  # warm-up, not counted
        for block in range(blocks):
            free += [document.toggle() for _ in range(edits // blocks)]
            note = f"written while the lock was held, {block}"
            request = ADD_ID + block
            with held_lock(lock, root, 0):
                document.server.send(
                    {
                        "id": request,
                        "method": "workspace/executeCommand",
                        "params": {
                            "command": "stet.note.add",
                            "arguments": [{"uri": document.uri, "text": note}],
                        },
                    }
                )
                time.sleep(0.3)  # let the add reach the lock
                started = time.monotonic()
                held += [document.toggle() for _ in range(edits // blocks)]
                if time.monotonic() - started > 12:
                    raise SystemExit("edits outlasted the server's 15 s lock wait; use fewer")
                if request in document.seen:
                    raise SystemExit(f"the add answered while the lock was held: {document.seen}")
            released = time.perf_counter()
            answer = document.answer(request)
            answers.append((time.perf_counter() - released) * 1000)
            if "result" not in answer:
                raise SystemExit(f"stet.note.add failed: {answer}")
            if note not in [entry.text for entry in StyleSheet(target).entries()]:
                raise SystemExit("stet.note.add answered but its entry is not on disk")
    finally:
        document.server.close()
    return free, held, answers


def anchored_ms(root: Path, lines: int, edits: int, blocks: int) -> tuple[list[float], list[float]]:
    """Blocks of one-line edits (`Document.toggle`) of a file with no anchored entries,
    alternating with the same edits of the same text in which `MOVED` entries are anchored
    40 lines above where their line now is (every 3rd on a line the edits change, so its
    anchor is found by similarity until the edit is undone) and `LOST` entries whose text
    is gone. The entries' lines are unlike the others, as in most code (where every line
    resembles the anchored one, searching for it once its line is edited takes seconds)."""
    sheet = StyleSheet(resolve_target(root))
    text = body(lines)
    step = 97 * max(1, lines // 97 // (MOVED + 1))
    for number in range(MOVED):
        line = step * (number + 1) + (0 if number % 3 == 0 else 1)  # toggles edit 97*k
        text[line] = f"def handler_{number}(request, response):  # an entry's line"
        sheet.add(
            f"moved entry {number}",
            anchor=Anchor("big_anchored.py", line + 1 - 40, line_key(text[line])),
        )
    for number in range(LOST):
        gone = f"result_{number} = removed_helper(arguments)  # gone {number}"  # as long as a line
        anchor = Anchor("big_anchored.py", 100 * (number + 1), gone)
        sheet.add(f"lost entry {number}", anchor=anchor)
    plain = Document(root / "big_plain.py", lines, text)
    anchored = Document(root / "big_anchored.py", lines, text)
    without: list[float] = []
    with_anchors: list[float] = []
    try:
        for document in (plain, anchored):
            document.settle()
            for _ in range(6):
                document.toggle()  # warm-up, not counted
            document.settle()
        for _ in range(blocks):
            without += [plain.toggle() for _ in range(edits // blocks)]
            with_anchors += [anchored.toggle() for _ in range(edits // blocks)]
    finally:
        plain.server.close()
        anchored.server.close()
    return without, with_anchors


def long_open_ms(root: Path, long_lines: int, rounds: int) -> tuple[list[float], list[float]]:
    """One-line edits of a 200-line file (`Document.toggle`), alternately with nothing else
    going on and sent right after the didOpen of a file of `long_lines` lines (closed again
    after the edit's diagnostics, and a second given to free it)."""
    small = Document(root / "small.py", 200)
    text = "\n".join(body(long_lines)) + "\n"
    quiet: list[float] = []
    opening: list[float] = []
    try:
        small.settle()
        for _ in range(6):
            small.toggle()  # warm-up, not counted
        for number in range(rounds):
            quiet.append(small.toggle())
            uri = from_fs_path(str(root / f"long_{number}.py"))
            document = {"uri": uri, "languageId": "python", "version": 1, "text": text}
            small.server.send(
                {"method": "textDocument/didOpen", "params": {"textDocument": document}}
            )
            opening.append(small.toggle())
            small.server.send(
                {"method": "textDocument/didClose", "params": {"textDocument": {"uri": uri}}}
            )
            time.sleep(1)  # the long text freed: 0.1-0.2 s of the loop's time just after
    finally:
        small.server.close()
    return quiet, opening


def initialize_ms(rounds: int) -> tuple[list[float], list[float]]:
    """Times from process start to the initialize answer, Stet's and a bare pygls server's
    (the floor any pygls server pays), interleaved, after one untimed start of each."""
    bare: list[float] = []
    stet: list[float] = []
    for number in range(rounds + 1):
        for name, command, times in (
            ("bare pygls", [sys.executable, "-c", BARE_PYGLS], bare),
            ("stet-lsp", None, stet),
        ):
            start = time.perf_counter()
            server = PipeServer(command)
            server.send({"id": 1, "method": "initialize", "params": {"capabilities": {}}})
            try:
                server.answer(1, timeout=30)
            except queue.Empty:
                status = server.process.poll()
                state = "running" if status is None else f"exited with {status}"
                raise SystemExit(f"{name} gave no initialize answer in 30 s ({state})") from None
            else:
                if number:  # the first round is untimed
                    times.append((time.perf_counter() - start) * 1000)
            finally:
                server.close()
    return stet, bare


def row(name: str, times: list[float], note: str = "") -> str:
    return (
        f"  {name:<34} p50 {percentile(times, 0.5):7.2f}   p99 {percentile(times, 0.99):7.2f}"
        f"   {note}"
    )


def verdict(met: bool) -> str:
    return "met" if met else "MISSED"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lines", type=int, default=20_000)
    parser.add_argument("--edits", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--blocks", type=int, default=4, help="lock-held blocks of edits")
    parser.add_argument("--quick", action="store_true", help="50 edits, 2 blocks, 3 rounds")
    parser.add_argument("--anchors", action="store_true", help="only the anchored-entries case")
    parser.add_argument("--long-lines", type=int, default=300_000, help="the long file opened")
    args = parser.parse_args()
    if args.quick:
        args.edits, args.blocks, args.rounds = 50, 2, 3
    with tempfile.TemporaryDirectory(prefix="stet-bench-") as folder:
        # Servers start from compiled bytecode, as an installed package does, even where
        # PYTHONDONTWRITEBYTECODE is set (pygls and lsprotocol come with theirs).
        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
        os.environ["PYTHONPYCACHEPREFIX"] = str(Path(folder) / "bytecode")
        anchored_root = Path(folder) / "anchored"
        pygit2.init_repository(str(anchored_root), initial_head="main")
        unanchored, anchored = anchored_ms(anchored_root, args.lines, args.edits, args.blocks)
        if not args.anchors:
            root = Path(folder) / "repo"
            pygit2.init_repository(str(root), initial_head="main")
            incremental = edits_ms(root, args.lines, args.edits, incremental=True)
            full = edits_ms(root, args.lines, args.edits, incremental=False)
            free, held, answers = locked_ms(root, args.lines, args.edits, args.blocks)
            quiet, opening = long_open_ms(root, args.long_lines, args.rounds)
            stet, bare = initialize_ms(args.rounds)

    print(f"didChange -> publishDiagnostics (ms), {args.lines} lines, {args.edits} edits each")
    print(row("one-line edit, no anchored entries", unanchored))
    print(
        row(
            f"one-line edit, {MOVED} moved + {LOST} lost",
            anchored,
            f"target p99 < 30: {verdict(percentile(anchored, 0.99) < 30)}",
        )
    )
    if args.anchors:
        return 0
    p50 = percentile(incremental, 0.5)
    print(
        row(
            "one-line edit (incremental)",
            incremental,
            f"target p99 < 30: {verdict(percentile(incremental, 0.99) < 30)}",
        )
    )
    print(row("full-text change", full, f"p50 {percentile(full, 0.5) / p50:.1f}x incremental"))
    print(row("one-line edit, no write waiting", free))
    print(
        row(
            "one-line edit, add waits on lock",
            held,
            f"target p99 < 50: {verdict(percentile(held, 0.99) < 50)}",
        )
    )
    print(
        f"  {'ratio waiting/free':<34} p50 {percentile(held, 0.5) / percentile(free, 0.5):6.2f}x"
        f"   p99 {percentile(held, 0.99) / percentile(free, 0.99):6.2f}x"
    )
    print(
        f"  {len(answers)} adds answered {min(answers):.0f}-{max(answers):.0f} ms after the lock"
        " was let go; entries on disk"
    )
    print(f"a 200-line file's one-line edit, {args.rounds} rounds")
    print(row("nothing else going on", quiet))
    print(
        row(
            f"sent after a {args.long_lines}-line didOpen",
            opening,
            f"p50 {percentile(opening, 0.5) / percentile(quiet, 0.5):.1f}x",
        )
    )
    ratio = statistics.median(stet) / statistics.median(bare)
    print(f"initialize, spawn to answer (ms), median of {args.rounds} interleaved")
    for name, times in (("stet-lsp", stet), ("bare pygls server", bare)):
        runs = " ".join(f"{t:.0f}" for t in times)
        print(f"  {name:<34} {statistics.median(times):7.0f}   runs {runs}")
    print(f"  {'ratio':<34} {ratio:7.2f}x  target <= 1.1x: {verdict(ratio <= 1.1)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
