"""`stet mcp`: the style sheet's tools for agents over the Model Context Protocol (stdio);
`stet mcp install CLIENT`: the configuration an MCP client reads to start it, and `stet mcp
uninstall CLIENT` to take it out again (docs/mcp.md).

Registering these commands imports neither the MCP SDK nor the install logic: the server's
modules load when it starts."""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from stet_lsp.cli.common import json_option, print_json, target_options

_Plan = TypeVar("_Plan")

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
            "[--dry-run] [--json] [-C DIR]\n"
            "       stet mcp uninstall {claude-code,codex,cursor,vscode} [--scope {local,user}] "
            "[--dry-run] [--json] [-C DIR]"
        ),
        description=(
            "Serve this target's style sheet (add, list, show and edit notes, the brief) and "
            "trajectory marks to an agent over the Model Context Protocol on standard input "
            "and output. An MCP client starts it; `stet mcp install CLIENT` configures one, "
            "`stet mcp uninstall CLIENT` takes that out again."
        ),
    )
    mcp.set_defaults(func=_serve, serve_in_missing_folder=_serve_in_missing_folder)
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
    _client_options(install)
    install.set_defaults(func=_install, serve_in_missing_folder=None)
    uninstall = actions.add_parser(
        "uninstall",
        help="take the stet server out of an MCP client's configuration again",
        description=(
            "Take the stet server out of the MCP configuration CLIENT reads: the file's "
            "original bytes when nothing else in it changed since `stet mcp install` (a file "
            "it created goes), else only the stet entry; and the info/exclude line install "
            "added. See docs/mcp.md."
        ),
    )
    _client_options(uninstall)
    uninstall.set_defaults(func=_uninstall, serve_in_missing_folder=None)


def _client_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("client", choices=_CLIENTS)
    parser.add_argument(
        "--scope", choices=_SCOPES, help="local: this repository only; user: every project"
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="show the exact change as a diff; write nothing"
    )
    parser.add_argument(
        "-C",
        dest="directory",
        metavar="DIR",
        default=argparse.SUPPRESS,
        help="run as if started in DIR (any folder inside the repository)",
    )
    json_option(parser)


def _serve(args: argparse.Namespace) -> int:
    from stet_lsp.mcp.server import serve  # the SDK loads here, and only here
    from stet_lsp.mcp.tools import Place

    # Absolute: a folder removed while serving (a worktree taken away) is then named in each
    # call's error, where the working folder could no longer be read at all.
    try:
        directory = Path(args.directory).absolute()
    except OSError:  # started in a folder removed before: served, each call saying so
        return serve(Place(Path(args.directory), args.target, gone=True))
    return serve(Place(directory, args.target))


def _serve_in_missing_folder(args: argparse.Namespace, folder: str) -> int:
    """Serve where `-C` points though it cannot be changed to (a folder that is not there,
    or not one): `initialize` is answered, and each call names the folder in its error."""
    from stet_lsp.mcp.server import serve
    from stet_lsp.mcp.tools import Place

    # `stet -C GONE mcp -C sub`: the server's folder is sub of GONE.
    directory = Path(folder) / args.directory
    # Relative: to a working folder removed before the server started, which nothing names.
    return serve(Place(directory, args.target, gone=not directory.is_absolute()))


def _install(args: argparse.Namespace) -> int:
    from stet_lsp.mcp.install import apply, plan

    planned = _planned_and_applied(
        lambda: plan(args.client, args.scope, directory=Path(args.directory)),
        apply,
        args.dry_run,
    )
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


def _uninstall(args: argparse.Namespace) -> int:
    from stet_lsp.mcp.uninstall import apply_removal, plan_removal

    removal = _planned_and_applied(
        lambda: plan_removal(args.client, args.scope, directory=Path(args.directory)),
        apply_removal,
        args.dry_run,
    )
    if args.json:
        print_json(removal.to_json(args.dry_run))
        return 0
    target = removal.target
    label = f"{target.client}, {target.scope} scope"
    remove, take = ("would remove", "would take") if args.dry_run else ("removed", "took")
    if removal.action == "unchanged":
        print(f"{target.shown}: no stet server to remove ({target.where}; {label})")
    elif removal.action == "delete":
        print(f"{remove} {target.shown}, which stet mcp install created ({label})")
    elif removal.action == "restore":
        print(
            f"{take} the stet server out of {target.shown} ({target.where}; {label}): "
            "the file as it was before stet mcp install"
        )
    else:
        print(
            f"{take} the stet server out of {target.shown} ({target.where}; {label}); "
            "the rest of the file is kept"
        )
    gone = removal.unexclusion
    if gone is not None:
        print(f"{take} {gone.pattern} out of {gone.path}")
    for note in removal.notes:
        print(f"  {note}")
    if args.dry_run and removal.action != "unchanged":
        print()
        print(removal.diff(), end="")
    return 0


def _planned_and_applied(
    make_plan: Callable[[], _Plan], apply: Callable[[_Plan], object], dry_run: bool
) -> _Plan:
    """The plan, applied unless `dry_run`: planned again from what the files hold now when one
    changed while it was written (core/rewrites.py)."""
    from stet_lsp.core.rewrites import retried

    def attempt() -> _Plan:
        planned = make_plan()
        if not dry_run:
            apply(planned)
        return planned

    return retried(attempt)
