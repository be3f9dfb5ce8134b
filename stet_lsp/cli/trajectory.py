"""`stet trajectory …`: import agent sessions, list, show, render, validate and export
trajectories. Registering imports nothing of the trajectory modules (other commands start
fast)."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path
from typing import Any

from stet_lsp.cli.common import (
    ProgressLine,
    encodable,
    json_option,
    print_json,
    target_of,
    target_options,
)
from stet_lsp.core.errors import StetError
from stet_lsp.gate.cli import add_config_options, config_of

# sessions.HARNESSES, written out so that building the parser loads nothing (a test holds
# the two equal).
_HARNESSES = ("claude-code", "codex", "gemini-cli", "qwen-code", "aider", "openhands-v1")


def register(commands: Any) -> None:
    shared = target_options()
    trajectory = commands.add_parser("trajectory", help="agent runs as versioned artifacts")
    actions = trajectory.add_subparsers(dest="action", metavar="ACTION", required=True)

    imports = actions.add_parser(
        "import", parents=[shared], help="import a transcript into the working trajectory"
    )
    which = imports.add_mutually_exclusive_group(required=True)
    which.add_argument(
        "path", nargs="?", help="a transcript file, or an OpenHands V1 conversation folder"
    )
    which.add_argument(
        "--latest", action="store_true", help="the session the harness wrote to last"
    )
    which.add_argument("--session", metavar="ID", help="a session found, by id or prefix")
    imports.add_argument("--harness", choices=_HARNESSES, help="with --latest: only this one")
    imports.add_argument(
        "--format", dest="format_name", metavar="FORMAT", choices=_formats(), help=_formats_help()
    )
    add_config_options(imports)
    json_option(imports)
    imports.set_defaults(func=_import)

    sessions = actions.add_parser(
        "sessions", parents=[shared], help="the agent sessions of this repository"
    )
    sessions.add_argument("--harness", choices=_HARNESSES, help="only this harness")
    json_option(sessions)
    sessions.set_defaults(func=_sessions)

    listing = actions.add_parser("list", parents=[shared], help="the trajectories")
    json_option(listing)
    listing.set_defaults(func=_list)

    show = actions.add_parser("show", parents=[shared], help="a trajectory's steps")
    show.add_argument("id", nargs="?", help="trajectory id (default: the working one)")
    show.add_argument(
        "--tree", action="store_true", help="steps under their sessions, turns and subagents"
    )
    json_option(show)
    show.set_defaults(func=_show)

    render = actions.add_parser("render", parents=[shared], help="print narration.md")
    render.add_argument("id", nargs="?", help="trajectory id (default: the working one)")
    render.set_defaults(func=_render)

    validate = actions.add_parser("validate", help="check a trajectory against the format")
    validate.add_argument("path", help="a trajectory folder or its events.jsonl")
    json_option(validate)
    validate.set_defaults(func=_validate)

    export = actions.add_parser("export", parents=[shared], help="export to another format")
    export.add_argument("id", nargs="?", help="trajectory id (default: the working one)")
    export.add_argument(
        "--format", dest="export_format", required=True, choices=("atif", "agent-trace")
    )
    export.add_argument("-o", "--output", metavar="FILE", help="write here, not to stdout")
    export.set_defaults(func=_export)

    mark = actions.add_parser("mark", parents=[shared], help="record a verdict on a step")
    mark.add_argument("id", help="trajectory id (or an unambiguous prefix)")
    mark.add_argument("step", type=int, help="the step's number (stet trajectory show)")
    mark.add_argument("--verdict", required=True, choices=("wrong", "clever", "note"))
    mark.add_argument("--text", help="what is wrong, clever or to note (`-` reads stdin)")
    mark.add_argument(
        "--note-to-sheet", action="store_true", help="also add it to the target's style sheet"
    )
    add_config_options(mark)
    json_option(mark)
    mark.set_defaults(func=_mark)

    blame = actions.add_parser(
        "blame", parents=[shared], help="which trajectory step wrote a file's lines, and why"
    )
    blame.add_argument("path", help="a file in the repository, as it is on disk")
    blame.add_argument("--line", type=int, help="only the run of lines holding this line (1-based)")
    json_option(blame)
    blame.set_defaults(func=_blame)


def _formats() -> tuple[str, ...]:
    from stet_lsp.trajectory.importers import FORMATS

    return FORMATS


def _formats_help() -> str:
    return "the transcript's format, when detection is not wanted: " + ", ".join(_formats())


def _import(args: argparse.Namespace) -> int:
    from stet_lsp.trajectory.continuation import COMMITTED
    from stet_lsp.trajectory.operations import import_session

    if args.path is not None and args.harness:
        raise StetError(
            "--harness chooses among the sessions found (--latest, --session), not a PATH; "
            "--format names a file's format"
        )
    if args.path == "-":
        raise StetError("-: a transcript is read from a file, not from standard input")
    if args.path == "":
        raise StetError("the transcript's path is empty: give the file its harness wrote")
    target = target_of(args)
    config = config_of(target.root, args)
    progress = ProgressLine("importing", enabled=not args.json and sys.stderr.isatty())
    try:
        result = import_session(
            target,
            path=Path(args.path) if args.path else None,
            session=args.session,
            latest=args.latest,
            harness=args.harness,
            format_name=args.format_name,
            progress=progress.phase,
            reached=Path(args.directory),
            gate_config=config,
        )
    finally:
        progress.done()
    if args.json:
        print_json(result.to_json())
        return 0
    state = "imported" if result.changed else "already imported, unchanged"
    print(f"{result.format} session {result.session}: {state}")
    print(f"  {result.events} events into {result.folder}")
    if result.outside:
        print("  the session worked outside this repository: its paths are kept as they were")
    if result.continues:
        left = result.dropped.get(COMMITTED, 0)
        print(f"  went on after {', '.join(result.continues)}: its {left} events there left out")
    if result.also_in:
        print(
            f"  note: the working trajectory of another target holds this session too "
            f"({', '.join(result.also_in)}): the capstone of each would commit its steps"
        )
    redacted = sum(result.redaction.values())
    if redacted:
        rules = ", ".join(f"{rule} {n}" for rule, n in result.redaction.items())
        print(f"  redacted {redacted} span(s): {rules}")
    for reason, count in result.dropped.items():
        if reason == COMMITTED:
            continue
        print(f"  dropped {count} ({reason})")
    for problem in result.problems:
        print(f"  {problem.source}:{problem.line}: {problem.message}")
    for warning in result.warnings:
        print(f"  warning: {warning}")
    return 0


def _sessions(args: argparse.Namespace) -> int:
    from stet_lsp.trajectory.operations import session_rows

    target = target_of(args)
    rows = session_rows(target, args.harness, Path(args.directory))["sessions"]
    if args.json:
        print_json({"sessions": rows})
        return 0
    if not rows:
        print(f"no agent sessions found for {target.root}")
    width = max(len(row["harness"]) for row in rows) if rows else 0
    for row in rows:
        mark = "*" if row["imported"] else "c" if row["committed"] else " "
        started = (row["started"] or "?")[:19]
        prompt = row["first_prompt"] or ""
        session, size = row["session"][:12], _size(row["size"])
        print(f"{mark} {started}  {row['harness']:<{width}} {session:<12}  {size}  {prompt}")
    if any(row["imported"] for row in rows):
        print("(* already imported)")
    if any(row["committed"] and not row["imported"] for row in rows):
        print("(c committed: importing it again brings only what came since)")
    return 0


def _list(args: argparse.Namespace) -> int:
    from stet_lsp.trajectory.operations import trajectory_rows

    listed = trajectory_rows(target_of(args))
    rows = listed["trajectories"]
    if args.json:
        print_json({"trajectories": rows, "problems": listed["problems"]})
        return 0
    for problem in listed["problems"]:
        warning = f"stet: warning: {problem['path']}: not listed: {problem['message']}"
        print(warning, file=sys.stderr)
    if not rows:
        print("no trajectories yet (stet trajectory import …)")
    for row in rows:
        kind = "working " if row["working"] else "committed"
        brief = " ".join((row["brief"] or "").split())[:60]
        print(f"{kind} {row['id']}  {row['steps']} steps  {','.join(row['harnesses'])}  {brief}")
        if row["orphaned"]:
            name = row["target"]
            left = (  # a working trajectory's id is its target's key: `<kind>--…`
                f"its detached HEAD {name} was left"
                if row["id"].startswith("detached--")
                else f"its branch {name} was deleted"
            )
            print(f"  {left}: stet capstone --target {shlex.quote(name)} commits it")
    return 0


def _folder(args: argparse.Namespace) -> Any:
    from stet_lsp.trajectory.operations import trajectory_folder

    return trajectory_folder(target_of(args), args.id)


def _show(args: argparse.Namespace) -> int:
    from stet_lsp.trajectory.operations import trajectory_steps

    if args.tree:
        return _show_tree(args)
    shown = trajectory_steps(_folder(args))
    if args.json:
        print_json(shown)
        return 0
    for step in shown["steps"]:
        agent = f"  [{step['agent']}]" if step["agent"] else ""
        print(f"{step['step']:>5}  {step['kind']:<13} {step['summary']}{agent}")
    return 0


def _show_tree(args: argparse.Namespace) -> int:
    from stet_lsp.trajectory.operations import trajectory_tree

    tree = trajectory_tree(target_of(args), _folder(args).id)
    if args.json:
        print_json(tree)
        return 0
    rows: list[str] = []
    _tree_rows(tree["nodes"], 0, rows)
    print(encodable("\n".join(rows)))
    return 0


def _tree_rows(nodes: list[dict[str, Any]], depth: int, rows: list[str]) -> None:
    indent = "  " * depth
    for node in nodes:
        if node["type"] == "step":
            rows.append(f"{indent}{node['step']:>5}  {node['kind']:<13} {node['title']}")
            continue
        detail = f"  ({node['detail']})" if node["detail"] else ""
        rows.append(f"{indent}{node['type']} {node['name']}{detail}")
        _tree_rows(node["children"], depth + 1, rows)


def _render(args: argparse.Namespace) -> int:
    from stet_lsp.core.safefs import read_regular

    folder = _folder(args)
    data = read_regular(folder.path / "narration.md", folder.root)
    if data is None:
        raise StetError(f"{folder.relative}/narration.md: no such file")
    sys.stdout.write(data.decode("utf-8", "replace"))
    return 0


def _validate(args: argparse.Namespace) -> int:
    from stet_lsp.trajectory.validate import validate_path

    issues = validate_path(Path(args.path))
    errors = [issue for issue in issues if issue.severity == "error"]
    if args.json:
        print_json({"valid": not errors, "issues": [issue.to_json() for issue in issues]})
    else:
        for issue in issues:
            print(f"{issue.file}:{issue.line}: {issue.severity}: {issue.message}")
        print(
            f"{args.path}: {'valid' if not errors else f'{len(errors)} error(s)'}", file=sys.stderr
        )
    return 1 if errors else 0


def _export(args: argparse.Namespace) -> int:
    folder = _folder(args)
    meta = folder.read_meta().model_dump(mode="json")
    events = folder.read_events()
    document: dict[str, Any]
    if args.export_format == "atif":
        from stet_lsp.trajectory.export_atif import to_atif

        document = to_atif(meta, events)
    else:
        from stet_lsp.trajectory.export_agent_trace import to_agent_trace

        document = to_agent_trace(meta, events, folder.root)
    text = json.dumps(document, ensure_ascii=False, indent=2) + "\n"
    if args.output is not None:
        from stet_lsp.core.safefs import atomic_write

        output = _export_path(args.output, folder.root)
        atomic_write(output, text.encode("utf-8"))
    else:
        sys.stdout.write(text)
    return 0


_ELSEWHERE = " (give -o a path outside it)"


def _export_path(given: str, root: Path) -> Path:
    """Where `export -o` writes: anywhere but git's folder and Stet's own (`.stet/`), whose
    files an export would replace (a repository's config, a trajectory's events)."""
    if not given:
        raise StetError("-o: an empty path; give a file (or leave -o out for standard output)")
    output = Path(given)
    if not output.parent.is_dir():
        raise StetError(
            f"{given}: no folder {output.parent}; nothing was written (make the folder, or "
            "give -o another path)"
        )
    placed = output.parent.resolve() / output.name
    from stet_lsp.core.targets import open_repository

    kept = {
        root.resolve() / ".stet": "Stet's folder",
        Path(open_repository(root).path).resolve(): "the git folder",
    }
    for folder, name in kept.items():
        if placed == folder or folder in placed.parents:
            raise StetError(f"{given}: inside {name} ({folder}); nothing was written{_ELSEWHERE}")
    # Named in another case (a file system that ignores it), or a submodule's git folder.
    inside = root.resolve() in placed.parents
    parts = [part.casefold() for part in placed.relative_to(root.resolve()).parts] if inside else []
    if parts[:1] == [".stet"] or ".git" in parts:
        raise StetError(f"{given}: inside a git folder or Stet's; nothing was written{_ELSEWHERE}")
    return output


def _mark(args: argparse.Namespace) -> int:
    from stet_lsp.cli.common import read_text_argument
    from stet_lsp.core.sheet import StyleSheet
    from stet_lsp.trajectory.feedback import feedback_path, mark_step, to_sheet
    from stet_lsp.trajectory.operations import marked
    from stet_lsp.trajectory.store import find_folder

    if args.verdict == "note" and args.text is None:
        raise StetError("--verdict note needs its text: --text TEXT (`-` reads standard input)")
    target = target_of(args)
    config = config_of(target.root, args)
    folder = find_folder(target.root, args.id)
    text = read_text_argument(args.text) if args.text is not None else None
    if args.note_to_sheet:  # refused before the verdict is written: all or nothing
        StyleSheet(target).refuse_tracked()
    verdict = mark_step(target.root, folder, args.step, args.verdict, text, gate_config=config)
    entry = to_sheet(StyleSheet(target), verdict) if args.note_to_sheet else None
    if args.json:
        print_json(marked(verdict, entry))
        return 0
    said = f": {verdict.text}" if verdict.text else ""
    print(f"step {verdict.step} of {verdict.trajectory}: {verdict.verdict}{said}")
    print(f"  recorded in {feedback_path(verdict.trajectory)}")
    if entry is not None:
        print(f"  style sheet entry {entry['id']} ({entry['kind']})")
    return 0


def _blame(args: argparse.Namespace) -> int:
    from stet_lsp.trajectory.operations import line_origins

    found = line_origins(target_of(args).root, Path(args.directory) / args.path, args.line)
    if args.json:
        print_json(found)
        return 0
    for problem in found["problems"]:
        print(f"stet: warning: {problem}", file=sys.stderr)
    path, runs = found["path"], found["runs"]
    if not runs:
        where = f"{path}:{args.line}" if args.line is not None else path
        print(f"{where}: no trajectory step wrote {'this line' if args.line else 'its lines'}")
    for run in runs:
        lines = f"{run['first_line']}-{run['last_line']}"
        change = ", ".join(filter(None, (run["operation"], run["time"])))
        print(f"{path}:{lines}  step {run['step']} of {run['trajectory']}  ({change})")
        if run["written_as"] != path:
            print(f"  written as {run['written_as']}")
        if run["message"]:
            why = run["message"] if args.line is not None else _first_line(run["message"], 100)
            print(f"  why (step {run['message_step']}): {why}")
    for item in found["unattributed"]:
        changed = (
            f"changed {item['lines']} line(s) that could not be placed"
            if item["lines"]
            else "changed the file at a place that could not be found"  # it only removed lines
        )
        print(f"{path}: step {item['step']} of {item['trajectory']} {changed}: {item['reason']}")
    return 0


def _first_line(text: str, width: int) -> str:
    first = " ".join(text.strip().split("\n", 1)[0].split())
    return first if len(first) <= width else first[: width - 1] + "…"


def _size(size: int) -> str:
    for unit in ("B", "KB", "MB"):
        if size < 1000:
            return f"{size:>4}{unit}" if unit == "B" else f"{size:>4.0f}{unit}"
        size /= 1000  # type: ignore[assignment]
    return f"{size:>4.0f}GB"
