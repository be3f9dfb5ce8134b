"""Open, change, save, close: keep each document's state and re-analyse what changed."""

from __future__ import annotations

from lsprotocol import types

from stet_lsp.server.server import StetServer


def register(server: StetServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: StetServer, params: types.DidOpenTextDocumentParams) -> None:
        document = params.text_document
        with ls.lock:
            state = ls.open_document(
                document.uri, document.text, document.language_id, document.version
            )
        ls.refresh([state])

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: StetServer, params: types.DidChangeTextDocumentParams) -> None:
        with ls.lock:
            document = params.text_document
            state = ls.change_document(document.uri, list(params.content_changes), document.version)
        if state is not None:
            ls.refresh([state])

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: StetServer, params: types.DidSaveTextDocumentParams) -> None:
        state = ls.documents.get(params.text_document.uri)
        if state is not None and state.is_sheet:
            ls.refresh()  # a saved sheet changes what every open document shows

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: StetServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        with ls.lock:
            ls.close_document(uri)
        if not ls.pulls_diagnostics:
            ls.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=uri, diagnostics=[])
            )
