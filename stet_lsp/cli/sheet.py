"""`stet sheet …`: where the style sheet lives, and retention."""

from __future__ import annotations

import argparse

from stet_lsp.cli.common import json_option, print_json, target_json, target_of, target_options
from stet_lsp.core.retention import DEFAULT_TTL_DAYS

TYPE_CHECKING = False  # as typing's, without importing typing (start-up of the command line)
if TYPE_CHECKING:
    from typing import Any


def register(commands: Any) -> None:
    shared = target_options()
    sheet = commands.add_parser("sheet", help="the style sheet file and retention")
    actions = sheet.add_subparsers(dest="action", metavar="ACTION", required=True)

    path = actions.add_parser("path", parents=[shared], help="print the style sheet's path")
    json_option(path)
    path.set_defaults(func=_path)

    gc = actions.add_parser(
        "gc",
        parents=[shared],
        help="remove sheets whose branch is gone or that are older than the TTL",
    )
    gc.add_argument("--dry-run", action="store_true", help="list what would be removed")
    gc.add_argument(
        "--ttl",
        type=float,
        default=DEFAULT_TTL_DAYS,
        metavar="DAYS",
        help=f"remove sheets untouched for longer (default {DEFAULT_TTL_DAYS})",
    )
    json_option(gc)
    gc.set_defaults(func=_gc)


def _path(args: argparse.Namespace) -> int:
    target = target_of(args)
    if args.json:
        print_json(
            {
                "target": target_json(target),
                "sheet": str(target.sheet_path),
                "exists": target.sheet_path.exists(),
            }
        )
    else:
        print(target.sheet_path)
    return 0


def _gc(args: argparse.Namespace) -> int:
    from stet_lsp.core.retention import collect_garbage
    from stet_lsp.core.targets import open_repository

    target = target_of(args)
    collected = collect_garbage(
        open_repository(target.root), target, ttl_days=args.ttl, dry_run=args.dry_run
    )
    if args.json:
        print_json(
            {
                "target": target_json(target),
                "dry_run": args.dry_run,
                "removed": [removal.to_dict() for removal in collected.removed],
                "moved": [move.to_dict() for move in collected.moved],
            }
        )
        return 0
    for move in collected.moved:
        verb = "would move" if args.dry_run else "moved"
        print(f"{verb} {move.path} to {move.to} ({move.reason})")
    verb = "would remove" if args.dry_run else "removed"
    for removal in collected.removed:
        print(f"{verb} {removal.path} ({removal.target}: {removal.reason})")
    if not collected.removed and not collected.moved:
        print("nothing to remove")
    return 0
