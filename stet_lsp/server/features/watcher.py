"""Writes from outside the editor (the CLI, an agent) and branch switches reach open documents.

Where the client watches files for the server (`workspace/didChangeWatchedFiles` with
dynamic registration), it reports changes to style sheets and to git's HEAD and branches;
otherwise a light poll of each repository's HEAD and sheet does, in a worker thread. The
poll also covers repositories whose git folder no watcher in the workspace sees (worktrees,
submodules), and every repository once in a while: an editor's watcher can miss files in
folders made after it started (VS Code does not report a sheet in a `.stet/cache/sheets/`
created while it runs). Either way a repository whose fingerprint moved is reloaded. Each
poll also reaches the features (`Feature.polled`): provenance looks there for trajectories
imported from outside (the CLI, an agent's hook), which no client watcher reports.
Retention runs once per repository.
"""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path

from lsprotocol import types

from stet_lsp.core.errors import StetError
from stet_lsp.core.retention import collect_garbage
from stet_lsp.core.targets import current_target, open_repository
from stet_lsp.server.server import StetServer, log

INTERVAL_SECONDS = 0.3
WATCHED_INTERVAL_SECONDS = 0.6
"""How often repositories whose changes the client reports are polled all the same: a
watcher that misses a write still leaves it shown within a second."""
WATCHED = ("**/.stet/cache/sheets/*.md", "**/.git/HEAD", "**/.git/refs/heads/**")


class Watcher:
    def __init__(self, server: StetServer) -> None:
        self.server = server
        self.collected: set[Path] = set()
        self._checking: asyncio.Task[None] | None = None
        self._again = False
        self.watched = False
        """Whether the client reports file changes."""
        self.failing: dict[Path, str] = {}
        """By repository root: why checking it failed, as last logged (logged once)."""

    async def start(self) -> None:
        if self.server.supports("workspace", "did_change_watched_files", "dynamic_registration"):
            self.watched = await self._register()
        self.server.spawn(self._poll(), "watching for outside changes")

    async def _register(self) -> bool:
        options = types.DidChangeWatchedFilesRegistrationOptions(
            watchers=[types.FileSystemWatcher(glob_pattern=pattern) for pattern in WATCHED]
        )
        registration = types.Registration(
            id="stet-watched-files",
            method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
            register_options=options,
        )
        if await self.server.register_with_client(registration):
            return True
        log.warning("the client did not take the file watchers; polling instead")
        return False

    async def _poll(self) -> None:
        every = max(1, round(WATCHED_INTERVAL_SECONDS / INTERVAL_SECONDS))
        for count in itertools.count(1):
            await asyncio.sleep(INTERVAL_SECONDS)
            try:
                await self.check(polled_only=count % every != 0)
            except Exception:  # keep watching whatever one poll ran into
                log.exception("watching for outside changes failed")

    def changed(self) -> None:
        """Files changed: check the repositories (once more if a check is running)."""
        if self._checking is not None and not self._checking.done():
            self._again = True
            return
        self._checking = self.server.spawn(self._check_until_quiet(), "checking repositories")

    async def _check_until_quiet(self) -> None:
        self._again = True
        while self._again:
            self._again = False
            await self.check()

    async def check(self, *, polled_only: bool = False) -> None:
        """Reload the repositories that changed; `polled_only`: skip those whose changes the
        client reports."""
        for root in [root for root in self.failing if root not in self.server.sessions]:
            del self.failing[root]  # forgotten: said again if it comes back still failing
        for session in list(self.server.sessions.values()):
            if polled_only and self.watched and session.git_dir == session.root / ".git":
                continue
            if session.root not in self.collected:
                self.collected.add(session.root)
                self.server.spawn(
                    self.server.off_loop(_collect, session.root, self.server.settings.ttl_days),
                    f"style-sheet retention in {session.root}",
                )
            for _ in self.server.ask("polled", session.root):
                pass
            try:
                fingerprint = await self.server.off_loop(session.fingerprint)
                if fingerprint != session.seen:
                    await self.server.reload(session)
                    session.seen = fingerprint
            except Exception as error:  # one broken repository must not keep the others unchecked
                self._failed(session.root, error)
            else:
                self.failing.pop(session.root, None)

    def _failed(self, root: Path, error: Exception) -> None:
        """Say once why a repository cannot be checked (deleted, say), not at every poll; a
        failure that is no refusal of Stet's (a bug) with its traceback."""
        said = f"{type(error).__name__}: {error}"
        if self.failing.get(root) == said:
            return
        self.failing[root] = said
        if isinstance(error, StetError):
            log.warning("cannot check %s for outside changes: %s", root, error)
        else:
            log.error("checking %s for outside changes failed", root, exc_info=error)


def register(server: StetServer) -> None:
    watcher = Watcher(server)

    server.startup.append(watcher.start)

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def watched(ls: StetServer, params: types.DidChangeWatchedFilesParams) -> None:
        watcher.changed()


def _collect(root: Path, ttl_days: float) -> None:
    try:
        repo = open_repository(root)  # its own handle: this runs on another thread
        collected = collect_garbage(repo, current_target(repo), ttl_days=ttl_days)
        for move in collected.moved:
            log.info(
                "moved the style sheet %s to %s (%s)", move.path.name, move.to.name, move.reason
            )
        for removal in collected.removed:
            log.info("removed the style sheet %s (%s)", removal.path.name, removal.reason)
    except StetError as error:  # a sheets folder Stet does not write into (a link, say)
        log.warning("style-sheet retention left %s alone: %s", root, error)
    except Exception:
        log.exception("style-sheet retention failed in %s", root)
