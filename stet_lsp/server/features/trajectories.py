"""Trajectory commands: import an agent session into the working trajectory, list the
sessions and the trajectories, open a trajectory's file (at a step), mark a step, and the
capstone. Slow ones run in a worker with work-done progress past a second; each returns what
the command line's `--json` prints for the same operation."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.uris import from_fs_path

from stet_lsp.core.errors import StetError
from stet_lsp.core.targets import Target
from stet_lsp.server.documents import local_path
from stet_lsp.server.progress import Progress
from stet_lsp.server.requests import answering, argument, field
from stet_lsp.server.server import StetServer

if TYPE_CHECKING:
    from stet_lsp.core.sheet import StyleSheet
    from stet_lsp.trajectory.feedback import Verdict

IMPORT = "stet.trajectory.import"
SESSIONS = "stet.trajectory.sessions"
LIST = "stet.trajectory.list"
OPEN = "stet.trajectory.open"
MARK = "stet.step.mark"
CAPSTONE = "stet.capstone"
_FILES = {"narration": "narration.md", "events": "events.jsonl", "meta": "meta.json"}


def register(server: StetServer) -> None:
    async def import_(*arguments: Any) -> dict[str, Any]:
        from stet_lsp.trajectory.operations import document, import_session

        args = argument(arguments)
        session = await server.session_of(field(args, "uri", str, None))
        target = await server.off_loop(session.target)
        path = field(args, "path", str, None)
        wanted = field(args, "session", str, None)
        latest = field(args, "latest", bool, False)
        harness = field(args, "harness", str, None)
        format_name = field(args, "format", str, None)
        progress = Progress(server, "Stet: importing an agent session", path or wanted)
        work = server.off_loop(
            lambda: document(
                import_session(
                    target,
                    path=None if path is None else Path(path),
                    session=wanted,
                    latest=latest,
                    harness=harness,
                    format_name=format_name,
                    progress=progress.phase,
                ).to_json()
            )
        )
        return await progress.run(work)

    async def sessions(*arguments: Any) -> dict[str, Any]:
        from stet_lsp.trajectory.operations import session_rows

        args = argument(arguments)
        session = await server.session_of(field(args, "uri", str, None))
        harness = field(args, "harness", str, None)
        target = await server.off_loop(session.target)
        return await server.off_loop(session_rows, target, harness)

    async def list_(*arguments: Any) -> dict[str, Any]:
        from stet_lsp.trajectory.operations import trajectory_rows

        args = argument(arguments)
        session = await server.session_of(field(args, "uri", str, None))
        return await server.off_loop(trajectory_rows, session.root)

    async def open_(*arguments: Any) -> dict[str, Any]:
        args = argument(arguments)
        session = await server.session_of(field(args, "uri", str, None))
        wanted = field(args, "id", str, None)
        which = field(args, "file", str, "narration")
        step = field(args, "step", int, None)
        if which not in _FILES:
            raise JsonRpcInvalidParams(f'"file" is one of {", ".join(_FILES)}')
        target = await server.off_loop(session.target)
        path, line = await server.off_loop(_trajectory_file, target, wanted, _FILES[which], step)
        uri = from_fs_path(str(path)) or ""
        shown = False
        if server.supports("window", "show_document", "support"):
            position = types.Position(line=line, character=0)
            answer = await server.window_show_document_async(
                types.ShowDocumentParams(
                    uri=uri,
                    take_focus=True,
                    selection=types.Range(start=position, end=position) if step else None,
                )
            )
            shown = bool(answer and answer.success)
        return {"uri": uri, "shown": shown, "line": line}

    async def mark(*arguments: Any) -> dict[str, Any]:
        from stet_lsp.trajectory.operations import document

        args = argument(arguments)
        document_uri = field(args, "uri", str)
        line = field(args, "line", int)
        verdict = field(args, "verdict", str)
        text = field(args, "text", str, None)
        to_sheet = field(args, "toSheet", bool, False)
        session = await server.session_of(document_uri)
        state = server.documents.get(document_uri)
        path = local_path(document_uri)
        content = state.text if state is not None else None
        target = await server.off_loop(session.target)
        recorded = await server.off_loop(_mark, target, path, content, line, verdict, text)
        entry = None
        if to_sheet:
            added = await server.write_sheet(session, lambda sheet: _sheet_entry(sheet, recorded))
            entry = added["entry"]
        return document({"verdict": recorded.model_dump(mode="json"), "entry": entry})

    async def capstone(*arguments: Any) -> dict[str, Any]:
        from stet_lsp.trajectory.capstone import capstone as commit_trajectory
        from stet_lsp.trajectory.operations import document

        args = argument(arguments)
        session = await server.session_of(field(args, "uri", str, None))
        message = field(args, "message", str, None)
        dry_run = field(args, "dryRun", bool, False)
        detached = field(args, "detached", bool, False)
        target = await server.off_loop(session.target)
        progress = Progress(server, "Stet: committing the trajectory", target.label)
        result = await progress.run(
            server.off_loop(
                lambda: commit_trajectory(
                    target,
                    message=message,
                    dry_run=dry_run,
                    allow_detached=detached,
                    progress=progress.phase,
                )
            )
        )
        if result.changed and not dry_run and result.commit:
            server.message(
                f"Stet: trajectory {result.trajectory} committed as {result.commit[:12]}",
                types.MessageType.Info,
            )
            server.refresh(outside=True)
        return document(result.to_json())

    server.command(IMPORT)(answering(import_))
    server.command(CAPSTONE)(answering(capstone))
    server.command(MARK)(answering(mark))
    server.command(OPEN)(answering(open_))
    server.command(SESSIONS)(answering(sessions))
    server.command(LIST)(answering(list_))


def _trajectory_file(
    target: Target, wanted: str | None, name: str, step: int | None
) -> tuple[Path, int]:
    """A file of the trajectory `wanted` (an id or prefix), or of the target's working one,
    and the 0-based line where `step` shows in it (0 without a step)."""
    from stet_lsp.trajectory.index import NarrationIndex, TrajectoryIndex
    from stet_lsp.trajectory.store import find_folder, working_folder

    folder = find_folder(target.root, wanted) if wanted else working_folder(target)
    path = folder.path / name
    if not path.is_file():
        raise StetError(f"{folder.relative / name}: no such file (stet trajectory import …)")
    if step is None or name == "meta.json":
        return path, 0
    text = path.read_text(encoding="utf-8", errors="replace")
    if name == "narration.md":
        line = NarrationIndex(text).line_of(step)
    else:
        try:
            line = TrajectoryIndex.from_events_text(text).get(step).line
        except KeyError:
            line = None
    if line is None:
        raise StetError(f"no step {step} in {folder.relative / name}")
    return path, line


def _mark(
    target: Target, path: Path, content: str | None, line: int, verdict: str, text: str | None
) -> Verdict:
    """A verdict on the step at `line` of an events.jsonl or narration.md."""
    from stet_lsp.core.safefs import read_regular
    from stet_lsp.trajectory.feedback import mark_step
    from stet_lsp.trajectory.outline import step_at
    from stet_lsp.trajectory.store import folder_of

    folder = folder_of(target.root, path)
    if folder is None:
        raise StetError(f"{path.name} is not a file of a trajectory")
    if content is None:
        data = read_regular(path, target.root)
        content = "" if data is None else data.decode("utf-8", "replace")
    step = step_at(path.name, content, line)
    if step is None:
        raise StetError(f"no step at line {line + 1} of {path.name}")
    return mark_step(target.root, folder, step, verdict, text)


def _sheet_entry(sheet: StyleSheet, verdict: Verdict) -> dict[str, Any]:
    from stet_lsp.core.operations import add_entry
    from stet_lsp.trajectory.feedback import SHEET_KINDS, sheet_text

    kind = SHEET_KINDS[verdict.verdict]
    return add_entry(sheet, sheet_text(verdict), kind=kind, author=verdict.author)
