"""`stet note …`, `stet brief`, `stet pause`, `stet resume`: the style sheet's entries."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from stet_lsp.cli.common import (
    json_option,
    print_json,
    read_text_argument,
    sheet_of,
    target_json,
    target_options,
)
from stet_lsp.core.anchors import make_anchor, relative_path
from stet_lsp.core.brief import DEFAULT_BUDGET
from stet_lsp.core.errors import StetError
from stet_lsp.core.model import AUTHORS, KINDS, STATUSES, Entry, format_time, parse_time
from stet_lsp.core.sheet import EntryFilter, check_author, check_kind, check_status
from stet_lsp.core.targets import Target


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
    pause.set_defaults(func=_pause)

    resume = commands.add_parser("resume", parents=[shared], help="end a pause")
    resume.set_defaults(func=_resume)


def _add(args: argparse.Namespace) -> int:
    sheet = sheet_of(args)
    anchor = None
    if (args.file is None) != (args.line is None):
        raise StetError("--file and --line go together")
    if args.file is not None:
        anchor = make_anchor(sheet.target.root, _from_directory(args, args.file), args.line)
    entry = sheet.add(
        read_text_argument(args.text),
        kind=check_kind(args.kind),
        author=check_author(args.author),
        anchor=anchor,
    )
    if args.json:
        print_json({"target": target_json(sheet.target), "entry": entry.to_dict()})
    else:
        print(entry.id)
    return 0


def _list(args: argparse.Namespace) -> int:
    sheet = sheet_of(args)
    document = sheet.read()
    where = EntryFilter(
        kind=check_kind(args.kind) if args.kind else None,
        author=check_author(args.author) if args.author else None,
        status=check_status(args.status) if args.status else None,
        file=relative_path(sheet.target.root, _from_directory(args, args.file))
        if args.file
        else None,
    )
    entries = [entry for entry in document.entries() if where(entry)]
    lines = sheet.current_lines(entries)
    if args.json:
        paused, until = sheet.pause_state()
        print_json(
            {
                "target": target_json(sheet.target),
                "sheet": str(sheet.path),
                "paused": paused,
                "paused_until": format_time(until) if until else None,
                "entries": [_entry_json(entry, lines) for entry in entries],
                "problems": [problem.to_dict() for problem in document.problems],
            }
        )
        return 0
    for entry in entries:
        print(_summary(entry, lines))
    for problem in document.problems:
        print(f"{sheet.path}:{problem.line}: {problem.message}")
    return 0


def _show(args: argparse.Namespace) -> int:
    sheet = sheet_of(args)
    entry = sheet.get(args.id)
    lines = sheet.current_lines([entry])
    if args.json:
        print_json({"target": target_json(sheet.target), "entry": _entry_json(entry, lines)})
        return 0
    print(f"id:      {entry.id}")
    print(f"kind:    {entry.kind}")
    print(f"author:  {entry.author}")
    print(f"status:  {entry.status}")
    print(f"created: {format_time(entry.created)}")
    if entry.anchor:
        print(f"anchor:  {_where(entry, lines)}")
    print()
    print(entry.text)
    return 0


def _edit(args: argparse.Namespace) -> int:
    sheet = sheet_of(args)
    entry = sheet.edit_text(args.id, read_text_argument(args.text))
    return _report(args, sheet.target, entry)


def _discard(args: argparse.Namespace) -> int:
    sheet = sheet_of(args)
    entry = sheet.set_status(args.id, "discarded")
    return _report(args, sheet.target, entry)


def _brief(args: argparse.Namespace) -> int:
    if args.budget < 1:
        raise StetError("--budget must be a positive number of tokens")
    sheet = sheet_of(args)
    brief = sheet.brief(args.budget)
    if args.json:
        print_json({"target": target_json(sheet.target), **brief.to_dict()})
    else:
        print(brief.text, end="")
    return 0


def _pause(args: argparse.Namespace) -> int:
    until = None
    if args.until:
        try:
            until = parse_time(args.until)
        except ValueError:
            raise StetError(f"--until {args.until!r} is not an ISO date or time") from None
    sheet = sheet_of(args)
    sheet.pause(until)
    suffix = f" until {format_time(until)}" if until else ""
    print(f"paused the style sheet of {sheet.target.label}{suffix}")
    return 0


def _resume(args: argparse.Namespace) -> int:
    sheet = sheet_of(args)
    sheet.resume()
    print(f"resumed the style sheet of {sheet.target.label}")
    return 0


def _report(args: argparse.Namespace, target: Target, entry: Entry) -> int:
    if args.json:
        print_json({"target": target_json(target), "entry": entry.to_dict()})
    else:
        print(entry.id)
    return 0


def _from_directory(args: argparse.Namespace, path: str) -> Path:
    return Path(args.directory) / path


def _entry_json(entry: Entry, lines: dict[str, int | None]) -> dict[str, Any]:
    data = entry.to_dict()
    if entry.anchor is not None:
        line = lines.get(entry.id)
        data["placement"] = {"line": line, "lost": line is None}
    else:
        data["placement"] = None
    return data


def _where(entry: Entry, lines: dict[str, int | None]) -> str:
    assert entry.anchor is not None
    line = lines.get(entry.id)
    return f"{entry.anchor.path}:{line}" if line else f"{entry.anchor.path} (anchor lost)"


def _summary(entry: Entry, lines: dict[str, int | None]) -> str:
    first = entry.text.split("\n", 1)[0]
    where = f"  [{_where(entry, lines)}]" if entry.anchor else ""
    return f"{entry.id}  {entry.kind:<13} {entry.author:<5} {entry.status:<8} {first}{where}"
