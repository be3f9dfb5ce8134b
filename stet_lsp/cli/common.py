"""What every `stet` command shares: where it runs, which target, how it prints JSON."""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from pathlib import Path
from typing import TextIO

from stet_lsp.cli import CommandParser
from stet_lsp.core.errors import StetError
from stet_lsp.core.lines import undecodable_at
from stet_lsp.core.operations import JSON_VERSION
from stet_lsp.core.operations import target_json as target_json
from stet_lsp.core.sheet import StyleSheet
from stet_lsp.core.targets import Target, names_a_branch, resolve_target

TYPE_CHECKING = False  # as typing's, without importing typing (start-up of the command line)
if TYPE_CHECKING:
    from typing import Any


def target_options() -> argparse.ArgumentParser:
    options = CommandParser(add_help=False)
    options.add_argument(
        "--target",
        metavar="NAME",
        help="an explicit target (a pull request, say) instead of the current branch",
    )
    options.add_argument(
        "-C",
        dest="directory",
        metavar="DIR",
        default=".",
        help="run as if started in DIR (any folder inside the repository)",
    )
    return options


def json_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON (see docs/cli.md)")


def target_of(args: argparse.Namespace) -> Target:
    target = resolve_target(Path(args.directory), args.target)
    if names_a_branch(target):
        print(
            f"stet: note: --target {target.name} names a target of its own, not the branch "
            f"{target.name} (leave --target out to work on the current branch)",
            file=sys.stderr,
        )
    if target.kind == "detached":
        _note_kept_apart(target)
    return target


def _note_kept_apart(target: Target) -> None:
    """A detached HEAD's sheet beside the one of the commit it was made from: both kept."""
    from stet_lsp.core.renames import kept_apart
    from stet_lsp.core.targets import open_repository

    source = kept_apart(open_repository(target.root), target)
    if source is not None:
        print(
            f"stet: note: the style sheet of {source.label}, the commit HEAD was made from, is "
            f"kept apart from this one, which HEAD's commit had of its own: check out "
            f"{source.name} to see its entries ({source.sheet_path})",
            file=sys.stderr,
        )


def sheet_of(args: argparse.Namespace) -> StyleSheet:
    return StyleSheet(target_of(args))


def print_json(document: dict[str, Any]) -> None:
    """A result of stet_lsp.core.operations as it is; other documents get the version."""
    text = json.dumps({"version": JSON_VERSION, **document}, ensure_ascii=False, indent=2)
    sys.stdout.write(encodable(text) + "\n")


def encodable(text: str) -> str:
    """`text` with each lone surrogate made U+FFFD: JSON lets a committed file write one
    ("\\ud800"), and no UTF-8 output can hold it."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        from stet_lsp.trajectory.jsontext import without_lone_surrogates

        return without_lone_surrogates(text)
    return text


def read_text_argument(text: str) -> str:
    """`-` reads the text from standard input (for multi-line notes from a harness)."""
    return read_stdin() if text == "-" else text


def read_stdin() -> str:
    """Standard input as UTF-8, whatever the locale: text that is not UTF-8 is refused, not
    kept with replacement characters where its bytes were."""
    buffer = getattr(sys.stdin, "buffer", None)
    if buffer is None:  # a text stream set in its place (an embedding program, a test)
        return sys.stdin.read()
    data: bytes = buffer.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise StetError(
            f"standard input is not UTF-8 ({undecodable_at(data, error)}): give the text as "
            "UTF-8; "
            "nothing was changed"
        ) from None


class ProgressLine:
    """A progress line on standard error for work that runs over a second, on a terminal
    only: `phase` names what the work does now; from a second on, the line shows it with the
    time so far, redrawn while a long phase runs; `done` clears the line."""

    def __init__(
        self,
        label: str,
        enabled: bool,
        *,
        stream: TextIO | None = None,
        after: float = 1.0,
        every: float = 0.5,
    ) -> None:
        self._label = label
        self._stream = stream or sys.stderr
        self._after = after
        self._every = every
        self._start = time.monotonic()
        self._phase = "starting"
        self._width = 0
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._ticker: threading.Thread | None = None
        if enabled:
            self._ticker = threading.Thread(target=self._tick, name="progress line", daemon=True)
            self._ticker.start()

    def phase(self, name: str) -> None:
        self._phase = name
        if self._ticker is not None and time.monotonic() - self._start >= self._after:
            self._draw()

    def done(self) -> None:
        self._stopped.set()
        if self._ticker is not None:
            self._ticker.join()
        with self._lock:
            if self._width:
                self._stream.write("\r" + " " * self._width + "\r")
                self._stream.flush()
                self._width = 0

    def _tick(self) -> None:
        if self._stopped.wait(self._after):
            return
        while True:
            self._draw()
            if self._stopped.wait(self._every):
                return

    def _draw(self) -> None:
        with self._lock:
            if self._stopped.is_set():
                return
            seconds = time.monotonic() - self._start
            line = f"{self._label}: {self._phase}… {seconds:.0f} s"
            self._stream.write("\r" + line.ljust(self._width))
            self._stream.flush()
            self._width = max(self._width, len(line))
