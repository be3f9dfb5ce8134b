"""Trajectory commands: import an agent session into the working trajectory, list the
sessions and the trajectories, open a trajectory's file (at a step), a trajectory's steps as a
tree, mark a step, and the capstone. Slow ones run in a worker with work-done progress past a
second; each returns what the command line's `--json` prints for the same operation.
What they write passes the gate with the repository's configuration and the editor's
`stet.gate.*` settings added to it (`Settings.gate_config`)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.uris import from_fs_path

from stet_lsp.core.sheet import StyleSheet
from stet_lsp.core.targets import resolve_target
from stet_lsp.server.documents import local_path
from stet_lsp.server.progress import Progress
from stet_lsp.server.requests import answering, argument, field
from stet_lsp.server.server import StetServer

if TYPE_CHECKING:
    from stet_lsp.core.session import RepositorySession
    from stet_lsp.gate.config import GateConfig
    from stet_lsp.server.settings import Settings

IMPORT = "stet.trajectory.import"
SESSIONS = "stet.trajectory.sessions"
LIST = "stet.trajectory.list"
OPEN = "stet.trajectory.open"
OUTLINE = "stet.trajectory.outline"
MARK = "stet.step.mark"
CAPSTONE = "stet.capstone"
_STEP_FILES = ("events.jsonl", "narration.md")


def register(server: StetServer) -> None:
    async def import_(*arguments: Any) -> dict[str, Any]:
        from stet_lsp.trajectory.operations import document, import_session
        from stet_lsp.trajectory.sessions import HARNESSES

        args = argument(arguments)
        session = await server.session_of(field(args, "uri", str, None))
        target = await server.off_loop(session.target)
        path = field(args, "path", str, None)
        wanted = field(args, "session", str, None)
        latest = field(args, "latest", bool, False)
        harness = field(args, "harness", str, None, choices=HARNESSES)
        format_name = field(args, "format", str, None)
        settings = server.settings
        progress = Progress(server, "Stet: importing an agent session", path or wanted)
        work = server.off_loop(
            lambda: document(
                import_session(
                    target,
                    # A relative path is the repository's, not the editor's start folder; an
                    # empty one is none, as on the command line.
                    path=session.root / path if path else None,
                    session=wanted,
                    latest=latest,
                    harness=harness,
                    format_name=format_name,
                    progress=progress.phase,
                    gate_config=settings.gate_config(target.root),
                ).to_json()
            )
        )
        imported = await progress.run(work)
        server.trajectories_changed(session.root)
        return imported

    async def sessions(*arguments: Any) -> dict[str, Any]:
        from stet_lsp.trajectory.operations import session_rows
        from stet_lsp.trajectory.sessions import HARNESSES

        args = argument(arguments)
        session = await server.session_of(field(args, "uri", str, None))
        harness = field(args, "harness", str, None, choices=HARNESSES)
        target = await server.off_loop(session.target)
        return await server.off_loop(session_rows, target, harness)

    async def list_(*arguments: Any) -> dict[str, Any]:
        from stet_lsp.trajectory.operations import trajectory_rows

        args = argument(arguments)
        session = await server.session_of(field(args, "uri", str, None))
        target = await server.off_loop(session.target)
        settings = server.settings
        return await server.off_loop(
            lambda: trajectory_rows(target, _view_gate(settings, target.root))
        )

    async def open_(*arguments: Any) -> dict[str, Any]:
        from stet_lsp.trajectory.operations import TRAJECTORY_FILES

        args = argument(arguments)
        session = await server.session_of(field(args, "uri", str, None))
        wanted = field(args, "id", str, None)
        which = field(args, "file", str, "narration", choices=TRAJECTORY_FILES)
        step = field(args, "step", int, None)
        return await open_trajectory_file(server, session, wanted, which, step)

    async def outline(*arguments: Any) -> dict[str, Any]:
        from stet_lsp.trajectory.operations import trajectory_tree

        args = argument(arguments)
        session = await server.session_of(field(args, "uri", str, None))
        wanted = field(args, "id", str, None)
        target = await server.off_loop(session.target)
        progress = Progress(server, "Stet: reading the trajectory", wanted or target.label)
        settings = server.settings
        shown_lines = _editor_lines(server, session.root)
        answer = await progress.run(
            server.off_loop(
                lambda: trajectory_tree(
                    target, wanted, _view_gate(settings, target.root), shown_lines
                )
            )
        )
        path = answer.pop("path")
        return {**answer, "uri": from_fs_path(path) or ""}

    async def mark(*arguments: Any) -> dict[str, Any]:
        from stet_lsp.trajectory.feedback import VERDICTS
        from stet_lsp.trajectory.feedback import to_sheet as sheet_entry
        from stet_lsp.trajectory.operations import mark_at, mark_by_step, marked

        args = argument(arguments)
        verdict = field(args, "verdict", str, choices=VERDICTS)
        text = field(args, "text", str, None)
        to_sheet = field(args, "toSheet", bool, False)
        step = field(args, "step", int, None)
        settings = server.settings
        if step is not None and args.get("line") is not None:
            raise JsonRpcInvalidParams(
                "give the step either as 'step' (with 'trajectory') or as 'uri' and 'line' of "
                "a trajectory's file, not both"
            )
        if step is not None:  # by trajectory and step, as a provenance lens names them
            session = await server.session_of(field(args, "uri", str, None))
            wanted = _trajectory_named(args)
            target = await server.off_loop(session.target)
            if to_sheet:  # refused before the verdict is written: all or nothing
                await server.off_loop(StyleSheet(target).refuse_tracked)
            recorded = await server.off_loop(
                lambda: mark_by_step(
                    target, wanted, step, verdict, text, settings.gate_config(target.root)
                )
            )
        else:  # by the line of a trajectory's file that shows the step
            document_uri = field(args, "uri", str)
            line = field(args, "line", int, minimum=0)
            session = await server.session_of(document_uri)
            state = server.documents.get(document_uri)
            path = local_path(document_uri)
            content = state.text if state is not None else None
            target = await server.off_loop(session.target)
            if to_sheet:
                await server.off_loop(StyleSheet(target).refuse_tracked)
            recorded = await server.off_loop(
                lambda: mark_at(
                    target, path, content, line, verdict, text, settings.gate_config(target.root)
                )
            )
        entry = None
        if to_sheet:
            entry = await server.write_sheet(session, lambda sheet: sheet_entry(sheet, recorded))
        return marked(recorded, entry)

    async def capstone(*arguments: Any) -> dict[str, Any]:
        from stet_lsp.trajectory.capstone import capstone as commit_trajectory
        from stet_lsp.trajectory.operations import document

        args = argument(arguments)
        session = await server.session_of(field(args, "uri", str, None))
        message = field(args, "message", str, None)
        dry_run = field(args, "dryRun", bool, False)
        detached = field(args, "detached", bool, False)
        named = field(args, "target", str, None)
        settings = server.settings
        if named is None:
            target = await server.off_loop(session.target)
        else:  # as `stet capstone --target NAME`: a deleted branch's or left detached HEAD's
            target = await server.off_loop(resolve_target, session.root, named)
        progress = Progress(server, "Stet: committing the trajectory", target.label)
        result = await progress.run(
            server.off_loop(
                lambda: commit_trajectory(
                    target,
                    message=message,
                    dry_run=dry_run,
                    allow_detached=detached,
                    progress=progress.phase,
                    gate_config=_capstone_gate(settings, target.root),
                )
            )
        )
        if dry_run:
            return document(result.to_json())
        if result.commit:
            said = f"committed as {result.commit[:12]}" + (
                f" on {result.branch}" if result.branch else ""
            )
        else:  # HEAD held it: the capstone archived what an earlier one left
            said = "is already committed" + (
                "; its working copy is archived" if result.archived else ""
            )
        server.message(f"Stet: trajectory {result.trajectory} {said}", types.MessageType.Info)
        server.refresh(outside=True)
        server.trajectories_changed(session.root)
        return document(result.to_json())

    server.write_command(IMPORT)(answering(import_))
    server.write_command(CAPSTONE)(answering(capstone))
    server.write_command(MARK)(answering(mark))
    server.command(OPEN)(answering(open_))
    server.command(OUTLINE)(answering(outline))
    server.command(SESSIONS)(answering(sessions))
    server.command(LIST)(answering(list_))


async def open_trajectory_file(
    server: StetServer, session: RepositorySession, wanted: str | None, which: str, step: int | None
) -> dict[str, Any]:
    """`stet.trajectory.open`: the trajectory's file (`narration`, `events` or `meta`) shown
    at the step's line; `{uri, shown, line}`."""
    from stet_lsp.trajectory.operations import trajectory_file

    target = await server.off_loop(session.target)
    settings = server.settings
    shown_lines = _editor_lines(server, session.root)
    path, line = await server.off_loop(
        lambda: trajectory_file(
            target, wanted, which, step, _view_gate(settings, target.root), shown_lines
        )
    )
    uri = from_fs_path(str(path)) or ""
    position = types.Position(line=line, character=0)
    shown = await server.show_document(
        uri, types.Range(start=position, end=position) if step else None
    )
    return {"uri": uri, "shown": shown, "line": line}


def _trajectory_named(args: Mapping[str, Any]) -> str | None:
    """The trajectory a step is marked in: `trajectory`, or `id` as a provenance lens (and
    `stet.trajectory.open`) names it; None for the working one."""
    named = field(args, "trajectory", str, None)
    lens = field(args, "id", str, None)
    if named is not None and lens is not None and named != lens:
        raise JsonRpcInvalidParams(
            f"give the trajectory once: 'trajectory' {named!r} and 'id' {lens!r} differ"
        )
    return named if named is not None else lens


def _editor_lines(server: StetServer, root: Path) -> dict[Path, list[str]]:
    """The lines of the repository's trajectory files open in the editor, by path (a copy
    of each list, for a worker): a step's line is where the editor shows it."""
    return {
        state.path: list(state.lines)
        for state in server.documents.values()
        if state.path is not None
        and state.session is not None
        and state.session.root == root
        and state.path.name in _STEP_FILES
    }


def _view_gate(settings: Settings, root: Path) -> GateConfig | None:
    """The gate a view composes a trajectory with when it moves to a renamed branch: None
    (the repository's) when that is malformed, so that the view still answers (the move's
    composition is then left to the next import or capstone, which says why)."""
    from stet_lsp.core.errors import StetError

    try:
        return settings.gate_config(root)
    except StetError:
        return None


def _capstone_gate(settings: Settings, root: Path) -> GateConfig:
    """The capstone's gate configuration; a malformed file is the capstone's `gate` refusal."""
    from stet_lsp.core.errors import StetError
    from stet_lsp.trajectory.capstone import CapstoneRefused

    try:
        return settings.gate_config(root)
    except StetError as error:
        raise CapstoneRefused("gate", f"{error} (nothing was changed)") from None
