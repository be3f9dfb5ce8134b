"""`stet mcp`: the style sheet's tools for agents over the Model Context Protocol (stdio);
`stet mcp install CLIENT`: the configuration an MCP client reads to start it (docs/mcp.md).

Registering these commands imports neither the MCP SDK nor the install logic: the server's
modules load when it starts."""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path
from typing import Any

from stet_lsp.cli.common import json_option, print_json, target_options

_CLIENTS = ("claude-code", "codex", "cursor", "vscode")
_SCOPES = ("local", "user")


def register(commands: Any) -> None:
    mcp = commands.add_parser(
        "mcp",
        parents=[target_options()],
        help="serve the style sheet to agents over MCP (stdio)",
        usage=(
            "stet mcp [--target NAME] [-C DIR]\n"
            "       stet mcp install {claude-code,codex,cursor,vscode} [--scope {local,user}] "
            "[--dry-run] [--json] [-C DIR]"
        ),
        description=(
            "Serve this target's style sheet (add, list, show and edit notes, the brief) and "
            "trajectory marks to an agent over the Model Context Protocol on standard input "
            "and output. An MCP client starts it; `stet mcp install CLIENT` configures one."
        ),
    )
    mcp.set_defaults(func=_serve)
    # Without `prog`, argparse names the action after the parent's custom usage, both lines.
    actions = mcp.add_subparsers(dest="action", metavar="ACTION", prog="stet mcp")
    install = actions.add_parser(
        "install",
        help="write the configuration an MCP client reads to start `stet mcp`",
        description=(
            "Add the stet server to the MCP configuration CLIENT reads, keeping everything "
            "else in that file. local (the default; codex: user) is this repository only "
            "and never committed; user is every project. See docs/mcp.md."
        ),
    )
    install.add_argument("client", choices=_CLIENTS)
    install.add_argument(
        "--scope", choices=_SCOPES, help="local: this repository only; user: every project"
    )
    install.add_argument(
        "--dry-run", action="store_true", help="show the exact change as a diff; write nothing"
    )
    install.add_argument(
        "-C",
        dest="directory",
        metavar="DIR",
        default=argparse.SUPPRESS,
        help="run as if started in DIR (any folder inside the repository)",
    )
    json_option(install)
    install.set_defaults(func=_install)


def _serve(args: argparse.Namespace) -> int:
    from stet_lsp.mcp.server import serve  # the SDK loads here, and only here
    from stet_lsp.mcp.tools import Place

    return serve(Place(Path(args.directory), args.target))


def _install(args: argparse.Namespace) -> int:
    from stet_lsp.mcp.install import apply, plan

    planned = plan(args.client, args.scope, directory=Path(args.directory))
    if not args.dry_run:
        apply(planned)
    if args.json:
        print_json(planned.to_json(args.dry_run))
        return 0
    label = f"{planned.client}, {planned.scope} scope"
    if planned.action == "unchanged":
        print(f"{planned.shown}: the stet server is there already ({planned.where}; {label})")
    else:
        verb = "would add" if args.dry_run else "added"
        print(f"{verb} the stet server to {planned.shown} ({planned.where}; {label})")
    exclusion = planned.exclusion
    if exclusion is not None:
        verb = "would keep" if args.dry_run else "kept"
        print(
            f"{verb} {planned.shown} out of commits: {exclusion.pattern} in {exclusion.path} "
            "(the repository's own ignore list, never committed)"
        )
    command = [planned.server["command"], *planned.server["args"]]
    print(f"  command: {' '.join(shlex.quote(part) for part in command)}")
    for note in planned.notes:
        print(f"  {note}")
    if args.dry_run and planned.action != "unchanged":
        print()
        print(planned.diff(), end="")
    return 0
