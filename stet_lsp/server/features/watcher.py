"""Writes from outside the editor (the CLI, an agent) and branch switches reach open documents:
a light poll of each repository's HEAD and style sheet."""

from __future__ import annotations

import asyncio

from stet_lsp.server.server import StetServer, log

INTERVAL_SECONDS = 0.3


def register(server: StetServer) -> None:
    server.startup.append(lambda: asyncio.get_running_loop().create_task(watch(server)))


async def watch(ls: StetServer) -> None:
    while True:
        await asyncio.sleep(INTERVAL_SECONDS)
        try:
            changed = False
            for session in list(ls.sessions.values()):
                fingerprint = session.fingerprint()
                changed = changed or fingerprint != session.seen
                session.seen = fingerprint
            if changed:
                ls.refresh()
        except Exception:  # keep watching whatever one poll ran into
            log.exception("watching for outside changes failed")
