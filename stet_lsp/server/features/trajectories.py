"""Trajectory commands: import an agent session into the working trajectory (work-done
progress when it takes over a second), list the sessions and the trajectories. Each returns
what `stet trajectory … --json` prints for the same operation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.uris import from_fs_path

from stet_lsp.core.errors import StetError
from stet_lsp.core.targets import Target
from stet_lsp.server.progress import Progress
from stet_lsp.server.requests import answering, argument, field
from stet_lsp.server.server import StetServer

IMPORT = "stet.trajectory.import"
SESSIONS = "stet.trajectory.sessions"
LIST = "stet.trajectory.list"
OPEN = "stet.trajectory.open"
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
        if which not in _FILES:
            raise JsonRpcInvalidParams(f'"file" is one of {", ".join(_FILES)}')
        target = await server.off_loop(session.target)
        path = await server.off_loop(_trajectory_file, target, wanted, _FILES[which])
        uri = from_fs_path(str(path)) or ""
        shown = False
        if server.supports("window", "show_document", "support"):
            answer = await server.window_show_document_async(
                types.ShowDocumentParams(uri=uri, take_focus=True)
            )
            shown = bool(answer and answer.success)
        return {"uri": uri, "shown": shown}

    server.command(IMPORT)(answering(import_))
    server.command(OPEN)(answering(open_))
    server.command(SESSIONS)(answering(sessions))
    server.command(LIST)(answering(list_))


def _trajectory_file(target: Target, wanted: str | None, name: str) -> Path:
    """A file of the trajectory `wanted` (an id or prefix), or of the target's working one."""
    from stet_lsp.trajectory.store import find_folder, working_folder

    folder = find_folder(target.root, wanted) if wanted else working_folder(target)
    path = folder.path / name
    if not path.is_file():
        raise StetError(f"{folder.relative / name}: no such file (stet trajectory import …)")
    return path
