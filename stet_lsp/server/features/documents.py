"""The lifecycle and the documents: start the features once the client is initialized; on
open, change, save and close keep each document's state and re-analyse what changed.

An edit by the client is followed by the client's own pull (or gets pushed diagnostics), so
it never makes the server ask the client to refresh."""

from __future__ import annotations

import asyncio

from lsprotocol import types

from stet_lsp.server.server import StetServer
from stet_lsp.server.sheet_sync import normalized, saved_sheet


def _load_slow_modules() -> None:
    """Imported after initialize (the answer does not wait for them), in a worker thread, so
    the first scan or git call does not pay for them on the loop."""
    import pygit2  # noqa: F401

    import stet_lsp.check
    import stet_lsp.gate  # noqa: F401


def register(server: StetServer) -> None:
    @server.feature(types.INITIALIZED)
    async def initialized(ls: StetServer, params: types.InitializedParams) -> None:
        ls.loop = asyncio.get_running_loop()
        for _ in ls.ask("started"):
            pass
        ls.spawn(ls.off_loop(_load_slow_modules), "loading the gate")
        for start in ls.startup:  # each on its own: one that waits or fails stops no other
            ls.spawn(start(), f"starting {getattr(start, '__qualname__', start)}")

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: StetServer, params: types.DidOpenTextDocumentParams) -> None:
        document = params.text_document
        state = ls.open_document(
            document.uri, document.text, document.language_id, document.version
        )
        if state.ready is None:
            ls.refresh([state], outside=False)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: StetServer, params: types.DidChangeTextDocumentParams) -> None:
        document = params.text_document
        state = ls.change_document(document.uri, params.content_changes, document.version)
        if state is not None and (state.ready is None or state.ready.done()):
            ls.refresh([state], outside=False)

    # The text saved comes with the notification: typing while the editor writes the file
    # reaches the server before the save does, and a sheet's merges start from what is on disk.
    @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=True))
    def did_save(ls: StetServer, params: types.DidSaveTextDocumentParams) -> None:
        state = ls.documents.get(params.text_document.uri)
        if state is None:
            return
        base = state.disk_text if state.base_known else ""
        unmerged, deletions = state.expected_reload, not state.base_lost
        saved, earlier = None, None
        if state.is_sheet and params.text is not None:
            saved = normalized(params.text)
        if saved is None or saved.rstrip("\n") == state.text.rstrip("\n"):
            # What the editor saved is its lines: shared, not joined and split again.
            state.disk_lines, state.modified = list(state.lines), False
        else:  # typed in since, or merged in while the editor wrote the file
            state.disk_text, state.modified = saved, True
            earlier = (saved, state.text)
        state.base_known, state.saves = True, state.saves + 1
        state.expected_reload, state.base_lost = None, False
        if state.is_sheet and state.session is not None:
            if unmerged == (state.text if saved is None else saved):
                unmerged = None  # the save held it all
            # A saved sheet changes what every open document shows.
            ls.spawn(
                saved_sheet(ls, state, base, unmerged, deletions, earlier),
                "reading the saved style sheet",
            )

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    def folders_changed(ls: StetServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
        # pygls has changed the workspace's folders already.
        ls.folders_changed = True
        ls.forget_repositories()

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: StetServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        ls.close_document(uri)
        if not ls.pulls_diagnostics:
            ls.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=uri, diagnostics=[])
            )
