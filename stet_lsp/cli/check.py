"""`stet check`: what the language server would show, for the whole repository."""

from __future__ import annotations

import argparse
from typing import Any

from stet_lsp.cli.common import json_option, target_options


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "check",
        parents=[target_options()],
        help="list what the editor would show (margin notes, entries, sheet problems, secrets)",
    )
    parser.add_argument(
        "--strict", action="store_true", help="exit 1 while margin notes are unrecorded"
    )
    parser.add_argument(
        "--marker",
        type=_marker,
        metavar="WORD",
        help="the margin-note marker word (default: stet)",
    )
    json_option(parser)
    parser.set_defaults(func=run)


def _marker(value: str) -> str:
    from stet_lsp.core.errors import StetError
    from stet_lsp.core.margin import check_marker

    try:
        return check_marker(value)
    except StetError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def run(args: argparse.Namespace) -> int:
    # Loaded only when run: stet_lsp.check imports pygit2 and the gate.
    from stet_lsp.check import CheckOptions, check
    from stet_lsp.cli.common import print_json, target_of
    from stet_lsp.core.margin import DEFAULT_MARKER
    from stet_lsp.core.operations import result
    from stet_lsp.core.targets import open_repository

    target = target_of(args)
    shown = check(
        open_repository(target.root), target, CheckOptions(marker=args.marker or DEFAULT_MARKER)
    )
    if args.json:
        print_json(result(target, shown=[s.to_dict() for s in shown]))
    else:
        for item in shown:
            print(item)
    unrecorded = sum(1 for s in shown if s.item.kind == "margin-note")
    return 1 if args.strict and unrecorded else 0
