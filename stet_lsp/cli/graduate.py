"""`stet graduate`: make style-sheet entries durable, one by one or through a review.

    stet graduate ID --to trajectory|skill|discard [--skill NAME] [--text TEXT] [--recreate]
    stet graduate --review            # every open entry with a proposed route, as Markdown
    stet graduate --apply FILE        # carry out the lines checked in a reviewed document

Each calls one function of stet_lsp.trajectory.graduation; `--json` prints its result as it
is. Registering imports nothing of the trajectory modules (other commands start fast)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from stet_lsp.cli.common import (
    json_option,
    print_json,
    read_stdin,
    read_text_argument,
    sheet_of,
    target_options,
)
from stet_lsp.core.errors import StetError
from stet_lsp.core.lines import undecodable_at
from stet_lsp.core.safefs import read_regular
from stet_lsp.gate.cli import add_config_options, config_of

_ROUTES = ("trajectory", "skill", "discard")


def register(commands: Any) -> None:
    graduate = commands.add_parser(
        "graduate",
        parents=[target_options()],
        help="make style-sheet entries durable: into the trajectory, a skill, or discard them",
    )
    graduate.add_argument("id", nargs="?", help="the entry to graduate")
    graduate.add_argument("--to", dest="route", choices=_ROUTES, help="where the entry goes")
    graduate.add_argument("--skill", metavar="NAME", help="with --to skill: the skill's name")
    graduate.add_argument(
        "--text", help="graduate this text instead of the entry's (`-` reads standard input)"
    )
    graduate.add_argument(
        "--recreate",
        action="store_true",
        help="make a skill anew that was deleted on purpose (in a commit, or a staged deletion)",
    )
    graduate.add_argument(
        "--review", action="store_true", help="print every open entry with a proposed route"
    )
    graduate.add_argument(
        "--apply", metavar="FILE", help="carry out the checked lines of a review (`-`: stdin)"
    )
    add_config_options(graduate)
    json_option(graduate)
    graduate.set_defaults(func=_run, graduate_parser=graduate)


def _run(args: argparse.Namespace) -> int:
    _check_usage(args)
    if args.review:
        return _review(args)
    if args.apply is not None:
        return _apply(args)
    return _one(args)


def _check_usage(args: argparse.Namespace) -> None:
    """Exactly one of ID, --review, --apply; --to with an ID; --skill and --text only then."""
    parser: argparse.ArgumentParser = args.graduate_parser
    modes = [args.id is not None, args.review, args.apply is not None]
    if sum(modes) != 1:
        parser.error("give one of: an entry ID (with --to), --review, --apply FILE")
    if args.id is not None and args.route is None:
        parser.error("--to trajectory|skill|discard is required with an entry ID")
    if args.id is None and (args.route or args.skill or args.text is not None):
        parser.error("--to, --skill and --text go with an entry ID")
    if args.recreate and args.review:
        parser.error("--recreate goes with an entry ID or --apply")


def _one(args: argparse.Namespace) -> int:
    from stet_lsp.trajectory.graduation import graduate

    sheet = sheet_of(args)
    config = config_of(sheet.target.root, args)
    text = read_text_argument(args.text) if args.text is not None else None
    result = graduate(
        sheet,
        args.id,
        args.route,
        skill_name=args.skill,
        text=text,
        gate_config=config,
        recreate=args.recreate,
    )
    if args.json:
        print_json(result)
    else:
        print(_describe(result))
    return 0


def _review(args: argparse.Namespace) -> int:
    from stet_lsp.trajectory.graduation import proposals, render_review

    sheet = sheet_of(args)
    config = config_of(sheet.target.root, args)
    found = proposals(sheet, gate_config=config)
    document = render_review(sheet.target, found, config)
    if not args.json:
        print(document, end="")
        return 0
    from stet_lsp.core.operations import result

    listed = [
        {
            "id": proposal.entry.id,
            "route": proposal.route,
            "skill": proposal.skill,
            "reason": proposal.reason,
        }
        for proposal in found
    ]
    print_json(result(sheet.target, document=document, proposals=listed))
    return 0


def _apply(args: argparse.Namespace) -> int:
    from stet_lsp.core.operations import result
    from stet_lsp.trajectory.graduation import apply_review

    sheet = sheet_of(args)
    config = config_of(sheet.target.root, args)
    results = apply_review(sheet, _read_document(args), gate_config=config, recreate=args.recreate)
    if args.json:
        print_json(result(sheet.target, results=results))
        return 0
    for done in results:
        print(_describe(done))
    if not results:
        print("no line is checked: nothing was changed")
    return 0


def _read_document(args: argparse.Namespace) -> str:
    if args.apply == "-":
        return read_stdin()
    path = Path(args.directory) / args.apply
    data = read_regular(path)
    if data is None:
        raise StetError(f"{path}: no such file (`stet graduate --review > FILE` writes a review)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise StetError(
            f"{path} is not UTF-8 ({undecodable_at(data, error)}): save the review as UTF-8; "
            "nothing was "
            "changed"
        ) from None


def _describe(result: dict[str, Any]) -> str:
    entry = result["entry"]["id"]
    edited = " (text edited)" if result["edited"] else ""
    if result["route"] == "discard":
        return f"{entry}: discarded"
    if result["route"] == "trajectory":
        return f"{entry}: into the trajectory {result['trajectory']}{edited}"
    skill = result["skill"]
    state = "staged" if result["staged"] else "already in it, unchanged"
    return f"{entry}: into the skill {skill['name']} ({skill['path']}, {state}){edited}"
