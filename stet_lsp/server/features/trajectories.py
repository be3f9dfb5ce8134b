"""Trajectory commands: import an agent session into the working trajectory (work-done
progress when it takes over a second), list the sessions and the trajectories. Each returns
what `stet trajectory … --json` prints for the same operation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from stet_lsp.server.progress import Progress
from stet_lsp.server.requests import answering, argument, field
from stet_lsp.server.server import StetServer

IMPORT = "stet.trajectory.import"
SESSIONS = "stet.trajectory.sessions"
LIST = "stet.trajectory.list"


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

    server.command(IMPORT)(answering(import_))
    server.command(SESSIONS)(answering(sessions))
    server.command(LIST)(answering(list_))
