"""`stet capstone`: commit the working trajectory as the branch's final commit. Registering
imports nothing of the trajectory modules nor pygit2 (other commands start fast)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from stet_lsp.cli.common import (
    ProgressLine,
    json_option,
    print_json,
    target_of,
    target_options,
)
from stet_lsp.gate.cli import add_config_options, config_of

if TYPE_CHECKING:
    from stet_lsp.trajectory.capstone import CapstoneResult


def register(commands: Any) -> None:
    capstone = commands.add_parser(
        "capstone",
        parents=[target_options()],
        help="commit the working trajectory on top of HEAD",
        description="Run the target's working trajectory through the redaction gate once "
        "more and commit it as the branch's final commit, with what graduation made for it "
        "(the skills its decisions name, as staged, and the verdicts on its steps) and "
        "nothing else: other staged files, .stet/ ones included, stay staged (docs/cli.md).",
    )
    capstone.add_argument(
        "-m", "--message", metavar="M", help="the commit message (the trailers are added)"
    )
    capstone.add_argument(
        "--dry-run", action="store_true", help="print what would be committed; change nothing"
    )
    capstone.add_argument(
        "--detached", action="store_true", help="allow committing on a detached HEAD"
    )
    add_config_options(capstone)
    json_option(capstone)
    capstone.set_defaults(func=_capstone)


def _capstone(args: argparse.Namespace) -> int:
    from stet_lsp.trajectory.capstone import capstone

    target = target_of(args)
    config = config_of(target.root, args)
    progress = ProgressLine("capstone", enabled=not args.json and sys.stderr.isatty())
    try:
        result = capstone(
            target,
            message=args.message,
            dry_run=args.dry_run,
            allow_detached=args.detached,
            progress=progress.phase,
            gate_config=config,
        )
    finally:
        progress.done()
    if args.json:
        print_json(result.to_json())
    else:
        _print(result)
    return 0


def _print(result: CapstoneResult) -> None:
    where = result.branch or "detached HEAD"
    parent = result.parent[:12]
    if not result.changed and not result.dry_run:
        print(f"trajectory {result.trajectory} is already committed; nothing to commit")
        if result.archived:
            print(f"working trajectory archived to {result.archived}")
        for warning in result.warnings:
            print(f"stet: warning: {warning}", file=sys.stderr)
        return
    if result.dry_run and not result.paths:  # a trajectory always commits its own files
        print(f"trajectory {result.trajectory} is already committed; nothing would be committed")
        print("the working trajectory would be archived")
        return
    if result.dry_run:
        print(f"would commit trajectory {result.trajectory} on top of {parent} ({where}):")
    else:
        commit = (result.commit or "")[:12]
        print(f"committed trajectory {result.trajectory} as {commit} on {where}:")
    for change in result.paths:
        print(f"  {change.status:<8} {change.path}")
    for path in result.left_staged:
        print(f"  left staged (graduation did not stage it): {path}")
    if result.supersedes is not None:
        superseded = result.supersedes
        print(f"  follows {superseded.trajectory} ({superseded.commit[:12]})")
    print("message:")
    for line in result.message.rstrip("\n").split("\n"):
        print(f"  {line}".rstrip())
    if result.archived:
        print(f"working trajectory archived to {result.archived}")
    for warning in result.warnings:
        print(f"stet: warning: {warning}", file=sys.stderr)
