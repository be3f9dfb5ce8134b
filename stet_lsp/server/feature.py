"""The contract every editor feature implements.

A feature owns one kind of knowledge (margin notes, entries, the sheet file, the gate's
findings) and answers its part of the shared requests. The server asks every feature in
turn; one that raises is logged and skipped, and the others still answer.
"""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types

if TYPE_CHECKING:
    from stet_lsp.server.documents import DocumentState
    from stet_lsp.server.positions import LensesJSON
    from stet_lsp.server.server import StetServer


class Feature:
    """Every method has a default that contributes nothing: a feature overrides only what it
    offers. All methods run on the event loop and must not block."""

    name = "feature"

    def __init__(self, server: StetServer) -> None:
        self.server = server

    def started(self) -> None:
        """The client is initialized: start background work, register commands late."""

    def analyse(self, state: DocumentState) -> None:
        """Recompute this feature's view of the document and store its diagnostics."""

    def code_actions(
        self, state: DocumentState, params: types.CodeActionParams
    ) -> Sequence[types.CodeAction]:
        return ()

    def code_lenses(self, state: DocumentState) -> Sequence[types.CodeLens] | LensesJSON:
        """The document's lenses: objects, or (very many of them) already written as JSON."""
        return ()

    def hover(self, state: DocumentState, line: int) -> str | Awaitable[str | None] | None:
        """Markdown about the line; or, for work that would hold the loop (reading a step of
        megabytes), an awaitable of it that runs the work in a worker thread."""
        return None

    def symbols(self, state: DocumentState) -> Sequence[types.DocumentSymbol]:
        return ()

    def definition(
        self, state: DocumentState, line: int
    ) -> Sequence[types.Location] | Awaitable[Sequence[types.Location]]:
        """Where the line leads; or, as for `hover`, an awaitable of it."""
        return ()

    def workspace_symbols(
        self, query: str, roots: Sequence[Path]
    ) -> Sequence[types.WorkspaceSymbol]:
        """The symbols of the repositories at `roots` (the workspace folders' and the open
        documents'). Runs in a worker thread (it may read files): use only state that is safe
        there."""
        return ()

    def polled(self, root: Path) -> None:
        """The watcher's poll reached the repository (several times a second): a chance to
        look for changes to files no client reports, as often as the feature needs to."""

    def trajectories_changed(self, root: Path) -> None:
        """A command of the server wrote the repository's trajectories (an import, the
        capstone, a graduation): what the feature read of them is to be read again now."""

    def forgotten(self, root: Path) -> None:
        """The repository at `root` left the workspace (no folder or open document is in
        it): drop what is kept about it."""

    async def settled(self, state: DocumentState) -> None:
        """Return once this feature's background work on the document (indexing a large
        file, loading what it shows) is done: for requests a client cannot be told to
        repeat, such as the outline (and lenses, for a client that cannot refresh them)."""

    def forget(self, uri: str) -> None:
        """The document was closed: drop what is kept about it."""
