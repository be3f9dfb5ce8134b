"""`stet note …`, `stet brief`, `stet pause`, `stet resume`: the style sheet's entries.

Each command calls one function of stet_lsp.core.operations; `--json` prints its result as
it is, and the text output is read from the same result."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from stet_lsp.cli.common import (
    json_option,
    print_json,
    read_text_argument,
    sheet_of,
    target_options,
)
from stet_lsp.core import operations
from stet_lsp.core.brief import DEFAULT_BUDGET
from stet_lsp.core.errors import StetError
from stet_lsp.core.model import AUTHORS, KINDS, STATUSES

TYPE_CHECKING = False  # as typing's, without importing typing (start-up of the command line)
if TYPE_CHECKING:
    from typing import Any


def register(commands: Any) -> None:
    shared = target_options()
    note = commands.add_parser("note", help="add, list, edit and discard style-sheet entries")
    actions = note.add_subparsers(dest="action", metavar="ACTION", required=True)

    add = actions.add_parser("add", parents=[shared], help="add an entry")
    add.add_argument("text", help="the entry's text; - reads it from standard input")
    add.add_argument("--kind", default="note", choices=KINDS)
    add.add_argument("--author", default="human", choices=AUTHORS)
    add.add_argument("--file", metavar="PATH", help="anchor the entry to this file…")
    add.add_argument("--line", type=int, metavar="N", help="…at this line (1-based)")
    json_option(add)
    add.set_defaults(func=_add)

    listing = actions.add_parser("list", parents=[shared], help="list entries")
    listing.add_argument("--kind", choices=KINDS)
    listing.add_argument("--author", choices=AUTHORS)
    listing.add_argument("--status", choices=STATUSES)
    listing.add_argument("--file", metavar="PATH", help="only entries anchored in this file")
    json_option(listing)
    listing.set_defaults(func=_list)

    show = actions.add_parser("show", parents=[shared], help="show one entry")
    show.add_argument("id")
    json_option(show)
    show.set_defaults(func=_show)

    edit = actions.add_parser("edit", parents=[shared], help="replace an entry's text")
    edit.add_argument("id")
    edit.add_argument("text", help="the new text; - reads it from standard input")
    json_option(edit)
    edit.set_defaults(func=_edit)

    discard = actions.add_parser("discard", parents=[shared], help="discard an entry")
    discard.add_argument("id")
    json_option(discard)
    discard.set_defaults(func=_discard)

    brief = commands.add_parser(
        "brief", parents=[shared], help="the style sheet as a block for the next agent run"
    )
    brief.add_argument("--budget", type=int, default=DEFAULT_BUDGET, metavar="TOKENS")
    json_option(brief)
    brief.set_defaults(func=_brief)

    pause = commands.add_parser(
        "pause", parents=[shared], help="refuse new agent and margin notes, forgetting nothing"
    )
    pause.add_argument("--until", metavar="DATE", help="ISO date or time the pause ends")
    json_option(pause)
    pause.set_defaults(func=_pause)

    resume = commands.add_parser("resume", parents=[shared], help="end a pause")
    json_option(resume)
    resume.set_defaults(func=_resume)


def _add(args: argparse.Namespace) -> int:
    if (args.file is None) != (args.line is None):
        raise StetError("--file and --line go together")
    result = operations.add_entry(
        sheet_of(args),
        read_text_argument(args.text),
        kind=args.kind,
        author=args.author,
        file=_from_directory(args, args.file) if args.file is not None else None,
        line=args.line,
    )
    return _print_id(args, result)


def _list(args: argparse.Namespace) -> int:
    result = operations.list_entries(
        sheet_of(args),
        kind=args.kind,
        author=args.author,
        status=args.status,
        file=_from_directory(args, args.file) if args.file else None,
    )
    if args.json:
        print_json(result)
        return 0
    entries = result["entries"]
    columns = ("id", "kind", "author", "status")
    widths = {name: max((len(entry[name]) for entry in entries), default=0) for name in columns}
    for entry in entries:
        where = f"  [{_where(entry)}]" if entry["anchor"] else ""
        first = entry["text"].split("\n", 1)[0]
        cells = "  ".join(f"{entry[name]:<{widths[name]}}" for name in columns)
        print(f"{cells}  {first}{where}")
    for problem in result["problems"]:
        print(f"{result['sheet']}:{problem['line']}: {problem['message']}")
    return 0


def _show(args: argparse.Namespace) -> int:
    result = operations.show_entry(sheet_of(args), args.id)
    if args.json:
        print_json(result)
        return 0
    entry = result["entry"]
    for name in ("id", "kind", "author", "status", "created"):
        value = entry[name]
        if value is None:  # a line typed without metadata gets one at the next write,
            value = "— (no time stored)"  # metadata written without created never does
        print(f"{name + ':':<9}{value}")
    if entry["anchor"]:
        print(f"anchor:  {_where(entry)}")
    print()
    print(entry["text"])
    return 0


def _edit(args: argparse.Namespace) -> int:
    result = operations.edit_entry(sheet_of(args), args.id, read_text_argument(args.text))
    return _print_id(args, result)


def _discard(args: argparse.Namespace) -> int:
    return _print_id(args, operations.discard_entry(sheet_of(args), args.id))


def _brief(args: argparse.Namespace) -> int:
    result = operations.brief(sheet_of(args), args.budget)
    if args.json:
        print_json(result)
    else:
        print(result["text"], end="")
    return 0


def _pause(args: argparse.Namespace) -> int:
    result = operations.pause(sheet_of(args), args.until)
    until = f" until {result['paused_until']}" if result["paused_until"] else ""
    return _print_state(args, result, "paused", until)


def _resume(args: argparse.Namespace) -> int:
    result = operations.resume(sheet_of(args))
    if not result["was_paused"] and not args.json:
        print(f"the style sheet of {result['target']['label']} was not paused")
        return 0
    return _print_state(args, result, "resumed")


def _print_state(
    args: argparse.Namespace, result: dict[str, Any], verb: str, until: str = ""
) -> int:
    if args.json:
        print_json(result)
    else:
        print(f"{verb} the style sheet of {result['target']['label']}{until}")
    return 0


def _print_id(args: argparse.Namespace, result: dict[str, Any]) -> int:
    if args.json:
        print_json(result)
    else:
        print(result["entry"]["id"])
    return 0


def _from_directory(args: argparse.Namespace, path: str) -> Path:
    return (Path(args.directory) / path).resolve()


def _where(entry: dict[str, Any]) -> str:
    path, line = entry["anchor"]["path"], entry["placement"]["line"]
    if not path.isprintable():  # a line break in a path must not open a line of its own
        path = json.dumps(path)
    return f"{path}:{line}" if line else f"{path} (anchor lost)"
