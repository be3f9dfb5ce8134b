"""The requests every feature answers a part of: code actions, lenses, hovers, the outline and
pulled diagnostics. Each asks the features that offer it and joins their answers."""

from __future__ import annotations

from typing import Any

from lsprotocol import types

from stet_lsp.server.protocol import server_line
from stet_lsp.server.server import StetServer


def gather(ls: StetServer, uri: str, method: str, *args: Any) -> list[Any]:
    """Every feature's answer to `method` for the document, joined (none when not open)."""
    state = ls.documents.get(uri)
    if state is None:
        return []
    return [
        item
        for feature in ls.features
        if hasattr(feature, method)
        for item in getattr(feature, method)(state, *args)
    ]


def register(server: StetServer) -> None:
    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]),
    )
    def code_action(ls: StetServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        state = ls.documents.get(params.text_document.uri)
        if state is not None:
            server_line(state.lines, params.range.start)
        return gather(ls, params.text_document.uri, "code_actions", params)

    @server.feature(types.TEXT_DOCUMENT_CODE_LENS, types.CodeLensOptions(resolve_provider=False))
    def code_lens(ls: StetServer, params: types.CodeLensParams) -> list[types.CodeLens]:
        return gather(ls, params.text_document.uri, "code_lenses")

    @server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    def symbols(ls: StetServer, params: types.DocumentSymbolParams) -> list[types.DocumentSymbol]:
        return gather(ls, params.text_document.uri, "symbols")

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: StetServer, params: types.HoverParams) -> types.Hover | None:
        state = ls.documents.get(params.text_document.uri)
        if state is None:
            return None
        line = server_line(state.lines, params.position)
        parts = [
            text
            for feature in ls.features
            if hasattr(feature, "hover") and (text := feature.hover(state, line))
        ]
        if not parts:
            return None
        return types.Hover(
            contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value="\n\n".join(parts))
        )

    @server.feature(
        types.TEXT_DOCUMENT_DIAGNOSTIC,
        types.DiagnosticOptions(
            identifier="stet", inter_file_dependencies=True, workspace_diagnostics=False
        ),
    )
    def diagnostic(
        ls: StetServer, params: types.DocumentDiagnosticParams
    ) -> types.FullDocumentDiagnosticReport:
        uri = params.text_document.uri
        return types.FullDocumentDiagnosticReport(
            items=ls.diagnostics.get(uri), result_id=ls.diagnostics.result_id(uri)
        )
