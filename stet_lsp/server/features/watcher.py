"""Writes from outside the editor (the CLI, an agent) and branch switches reach open documents:
a light poll of each repository's HEAD and style sheet."""

from __future__ import annotations

import asyncio

from stet_lsp.core.retention import collect_garbage
from stet_lsp.core.session import RepositorySession
from stet_lsp.core.targets import current_target, open_repository
from stet_lsp.server.server import StetServer, log

INTERVAL_SECONDS = 0.3


def register(server: StetServer) -> None:
    server.startup.append(lambda: asyncio.get_running_loop().create_task(watch(server)))


async def watch(ls: StetServer) -> None:
    collected: set[object] = set()
    loop = asyncio.get_running_loop()
    while True:
        await asyncio.sleep(INTERVAL_SECONDS)
        try:
            changed = False
            for session in list(ls.sessions.values()):
                if session.root not in collected:
                    # Retention runs once per repository and session, off the event loop.
                    collected.add(session.root)
                    loop.run_in_executor(None, _collect, session, ls.settings.ttl_days)
                fingerprint = session.fingerprint()
                changed = changed or fingerprint != session.seen
                session.seen = fingerprint
            if changed:
                ls.refresh()
        except Exception:  # keep watching whatever one poll ran into
            log.exception("watching for outside changes failed")


def _collect(session: RepositorySession, ttl_days: float) -> None:
    try:
        repo = open_repository(session.root)  # its own handle: this runs on another thread
        for removal in collect_garbage(repo, current_target(repo), ttl_days=ttl_days):
            log.info("removed the style sheet %s (%s)", removal.path.name, removal.reason)
    except Exception:
        log.exception("style-sheet retention failed in %s", session.root)
