"""`stet hooks install|uninstall|status|run`: harness hooks (docs/agents.md).

Everything is imported when a command runs, not when it is registered: `stet hooks run
session-start` starts every agent session and loads no more than the brief needs."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

HARNESSES = ("claude-code", "codex")


def register(commands: Any) -> None:
    hooks = commands.add_parser(
        "hooks",
        help="harness hooks: the brief into new agent sessions, finished ones into the trajectory",
    )
    actions = hooks.add_subparsers(dest="action", metavar="ACTION", required=True)

    install = actions.add_parser(
        "install", help="set a harness up to run Stet's hooks (local, uncommitted settings)"
    )
    _harness_options(install)
    install.add_argument(
        "--keep-notify",
        action="store_true",
        help="codex: leave an existing notify program (one that calls Stet itself) in place "
        "and only let this repository import Codex turns",
    )
    install.set_defaults(func=_install)

    uninstall = actions.add_parser("uninstall", help="take out exactly what install added")
    _harness_options(uninstall)
    uninstall.set_defaults(func=_uninstall)

    status = actions.add_parser("status", help="what is installed where")
    _directory_option(status)
    status.add_argument("--json", action="store_true", help="print JSON (see docs/agents.md)")
    status.set_defaults(func=_status)

    run = actions.add_parser(
        "run",
        help="what a harness runs (Claude Code's JSON on standard input); always exits 0",
        description="EVENT: session-start, session-end, stop [--every SECONDS] (Claude Code), "
        "codex-notify JSON (Codex's notify). Always exits 0; problems go to "
        ".stet/cache/hooks/hooks.log.",
    )
    run.add_argument("event", nargs="?", metavar="EVENT")
    run.add_argument("arguments", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    run.set_defaults(func=_run)


def _directory_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-C",
        dest="directory",
        metavar="DIR",
        default=".",
        help="run as if started in DIR (any folder inside the repository)",
    )


def _harness_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("harness", choices=HARNESSES)
    parser.add_argument(
        "--dry-run", action="store_true", help="show what would be written, write nothing"
    )
    _directory_option(parser)
    parser.add_argument("--json", action="store_true", help="print JSON (see docs/agents.md)")


def _root(args: argparse.Namespace) -> Path:
    from stet_lsp.core.targets import open_repository, repository_root

    return repository_root(open_repository(Path(args.directory)))


def _home() -> Path | None:
    from stet_lsp.core.home import home_folder

    return home_folder(os.environ)


def _install(args: argparse.Namespace) -> int:
    import os

    root = _root(args)
    if args.harness == "claude-code":
        from stet_lsp.hooks import claude_code

        result = claude_code.install(root, dry_run=args.dry_run)
        result["elsewhere"] = _stet_hooks_elsewhere(root)
        result.update(claude_code.disabled_fields(root, _home(), os.environ))
    else:
        from stet_lsp.hooks import codex

        result = codex.install(
            root,
            home=_home(),
            env=os.environ,
            dry_run=args.dry_run,
            keep_notify=args.keep_notify,
        )
    return _print_change(args, root, result, installing=True)


def _stet_hooks_elsewhere(root: Path) -> list[dict[str, Any]]:
    """The other settings files Claude Code reads (the project's, the user's) that run Stet's
    hooks too: Claude Code runs the hooks of every one, so such an event runs Stet twice (the
    brief twice in a session's context)."""
    import os

    from stet_lsp.hooks import claude_code

    settings = claude_code.status(root, _home(), os.environ)["settings"]
    return [
        {"path": entry["path"], "events": entry["events"]}
        for entry in settings
        if entry["scope"] != "local" and entry["events"]
    ]


def _uninstall(args: argparse.Namespace) -> int:
    import os

    root = _root(args)
    if args.harness == "claude-code":
        from stet_lsp.hooks import claude_code

        result = claude_code.uninstall(root, dry_run=args.dry_run)
    else:
        from stet_lsp.hooks import codex

        result = codex.uninstall(root, home=_home(), env=os.environ, dry_run=args.dry_run)
    return _print_change(args, root, result, installing=False)


def _print_change(
    args: argparse.Namespace, root: Path, result: dict[str, Any], *, installing: bool
) -> int:
    if args.json:
        _print_json(result)
        return 0
    path = _shown(root, Path(result["path"]))
    would = "would " if result["dry_run"] else ""
    if result["harness"] == "claude-code":
        if installing:
            _print_claude_install(root, path, result, would)
        else:
            _print_claude_uninstall(path, result, would)
    else:
        _print_codex(path, result, would, installing)
    if result["dry_run"] and result["content"] is not None:
        print(f"\n{path} would read:\n")
        sys.stdout.write(result["content"])
    return 0


def _print_claude_install(root: Path, path: str, result: dict[str, Any], would: str) -> None:
    if result["renewed"]:
        print(f"Claude Code: {would}start Stet as this install does in {path}:")
        for event in result["renewed"]:
            print(f"  {event:<13} {result['commands'][event]}")
    if not result["added"]:
        if not result["renewed"]:
            print(f"Claude Code: Stet's hooks are in {path} already; nothing changed")
    else:
        verb = "create" if result["created"] else "add to"
        print(f"Claude Code: {would}{verb} {path}:")
        for event in result["added"]:
            print(f"  {event:<13} {result['commands'][event]}")
    if result.get("excluded"):
        print(f"  and {would}keep it out of commits with a line in {result['excluded']}")
    for other in result.get("elsewhere", []):
        print(
            f"warning: {_shown(root, Path(other['path']))} runs Stet's "
            f"{', '.join(other['events'])} too, and Claude Code runs the hooks of each settings "
            "file: take Stet's out of one of them, or the brief may go into a session twice"
        )
    warning = _disabled_warning(root, result)
    if warning:
        print(f"warning: {warning}")
    print(
        "The brief goes into each new session; each finished session is imported into the "
        "working trajectory."
    )
    print("For notes and the brief as tools: stet mcp install claude-code")


def _disabled_warning(root: Path, result: dict[str, Any]) -> str | None:
    """What keeps Claude Code from running Stet's hooks (`hooks_disabled_by`), in words."""
    disabled = result.get("hooks_disabled_by")
    if not disabled:
        return None
    path = _shown(root, Path(disabled))
    from stet_lsp.hooks.claude_code import managed_settings_files, managed_settings_folder

    managed = Path(disabled) in managed_settings_files(managed_settings_folder(os.environ))
    if result.get("hooks_disabled_setting") == "allowManagedHooksOnly":
        return (
            f"{path}, Claude Code's managed settings, sets allowManagedHooksOnly to true: "
            "Claude Code runs only the hooks of the managed settings, not Stet's; your "
            "organisation's administrators decide that setting"
        )
    if managed:
        return (
            f"{path}, Claude Code's managed settings, sets disableAllHooks to true: Claude "
            "Code runs no hooks, Stet's included; your organisation's administrators decide "
            "that setting"
        )
    return (
        f"{path} sets disableAllHooks to true: Claude Code runs no hooks, Stet's included, "
        "until it is false (or taken out)"
    )


def _print_claude_uninstall(path: str, result: dict[str, Any], would: str) -> None:
    if not result["removed"]:
        print(f"Claude Code: no Stet hooks in {path}; nothing changed")
    elif result["removed_file"]:
        print(f"Claude Code: {would}remove {path} (Stet created it)")
    else:
        print(f"Claude Code: {would}take {', '.join(result['removed'])} out of {path}")


def _print_codex(path: str, result: dict[str, Any], would: str, installing: bool) -> None:
    if installing:
        if result["changed"]:
            print(f"Codex: {would}set notify = {json.dumps(result['notify'])} in {path}")
        elif result["kept_notify"]:
            print(f"Codex: notify in {path} left as it is")
        else:
            print(f"Codex: notify runs Stet in {path} already")
        if result["consent_added"]:
            print(f"Codex: {would}import finished turns into this repository")
        print("For notes and the brief in Codex: stet mcp install codex")
        return
    if result["removed_file"]:
        print(f"Codex: {would}remove {path} (Stet created it)")
    elif result.get("kept_created_file"):
        print(
            f"Codex: {would}take Stet's notify out of {path}, and leave it empty: Stet created "
            "it, but it is reached through a symbolic link now (a dotfiles manager's)"
        )
    elif result["changed"]:
        print(f"Codex: {would}take Stet's notify out of {path}")
    else:
        print(f"Codex: no Stet notify in {path}")
    if result["consent_removed"]:
        print(f"Codex: {would}stop importing turns into this repository")


def _status(args: argparse.Namespace) -> int:
    import os

    from stet_lsp.hooks import claude_code, codex, files

    root = _root(args)
    home = _home()
    document: dict[str, Any] = {
        "repository": str(root),
        "claude_code": claude_code.status(root, home, os.environ),
        "codex": codex.status(root, home=home, env=os.environ),
        "stet_on_path": shutil.which("stet") is not None,
        "log": str(root / files.LOG),
        "last_log_line": files.last_log_line(root),
    }
    if args.json:
        _print_json(document)
        return 0
    claude = document["claude_code"]
    for entry in claude["settings"]:
        where = _shown(root, Path(entry["path"]))
        if entry["problem"]:
            state = f"unreadable: {entry['problem']}"
        elif not entry["exists"]:
            state = "no file"
        else:
            state = ", ".join(entry["events"]) or "no Stet hooks"
        if entry["scope"] == "local" or entry["events"] or entry["problem"]:
            print(f"Claude Code  {where}: {state}")
    if claude["ignored_by_git"] is False and claude["settings"][0]["exists"]:
        print(f"  warning: git does not ignore {claude_code.LOCAL_SETTINGS}; keep it uncommitted")
    warning = _disabled_warning(root, claude)
    if warning:
        print(f"  warning: {warning}")
    entry = document["codex"]
    if entry["problem"]:
        print(f"Codex        unreadable: {entry['problem']}")
    else:
        where = _shown(root, Path(entry["path"]))
        if entry["installed"]:
            state = "notify runs Stet"
        elif entry["notify"] is not None:
            state = f"notify runs {json.dumps(entry['notify'], ensure_ascii=False)}, not Stet"
        else:
            state = "no notify" if entry["exists"] else "no file"
        consent = "has" if entry["repository"] else "has not"
        print(f"Codex        {where}: {state}; this repository {consent} opted in to imports")
    bare = [entry for entry in [*claude["settings"], document["codex"]] if entry["bare_name"]]
    if bare and not document["stet_on_path"]:
        for entry in bare:
            print(
                f"warning: `stet` is not on PATH, and {_shown(root, Path(entry['path']))} runs "
                "Stet's hooks by that name; install them again to run it by its full path"
            )
    last = document["last_log_line"]
    print(f"log          {_shown(root, Path(document['log']))}" + (f": {last}" if last else ""))
    return 0


def _run(args: argparse.Namespace) -> int:
    from stet_lsp.hooks.run import run_hook

    return run_hook(args.event, args.arguments)


def _shown(root: Path, path: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        home = _home()
        if home is not None:
            try:
                return "~/" + path.relative_to(home).as_posix()
            except ValueError:
                pass
        return str(path)


def _print_json(document: dict[str, Any]) -> None:
    from stet_lsp.cli.common import encodable  # a path that is not UTF-8: U+FFFD, as elsewhere

    text = json.dumps({"version": 1, **document}, ensure_ascii=False, indent=2)
    sys.stdout.write(encodable(text) + "\n")
