"""What every `stet` command shares: where it runs, which target, how it prints JSON."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from stet_lsp.cli import CommandParser
from stet_lsp.core.operations import JSON_VERSION
from stet_lsp.core.operations import target_json as target_json
from stet_lsp.core.sheet import StyleSheet
from stet_lsp.core.targets import Target, resolve_target

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
    return resolve_target(Path(args.directory), args.target)


def sheet_of(args: argparse.Namespace) -> StyleSheet:
    return StyleSheet(target_of(args))


def print_json(document: dict[str, Any]) -> None:
    """A result of stet_lsp.core.operations as it is; other documents get the version."""
    json.dump({"version": JSON_VERSION, **document}, sys.stdout, ensure_ascii=False, indent=2)
    sys.stdout.write("\n")


def read_text_argument(text: str) -> str:
    """`-` reads the text from standard input (for multi-line notes from a harness)."""
    return sys.stdin.read() if text == "-" else text


class ProgressLine:
    """A progress line on standard error for work that runs over a second, on a terminal
    only: `phase` names what the work does now, `done` clears the line."""

    def __init__(self, label: str, enabled: bool) -> None:
        self._label = label
        self._enabled = enabled
        self._start = time.monotonic()
        self._shown = False

    def phase(self, name: str) -> None:
        if self._enabled and time.monotonic() - self._start > 1.0:
            sys.stderr.write(f"\r{self._label}: {name}…   ")
            sys.stderr.flush()
            self._shown = True

    def done(self) -> None:
        if self._shown:
            sys.stderr.write("\r" + " " * 40 + "\r")
            sys.stderr.flush()
