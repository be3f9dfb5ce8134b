"""The requests every feature answers a part of: code actions, lenses, hovers, the outline,
definitions, workspace symbols and pulled diagnostics. Each asks the features and joins their
answers; a request about a document whose repository is still being looked up waits for it."""

from __future__ import annotations

import json

from lsprotocol import types

from stet_lsp.server.positions import LensesJSON, RawJSON, server_line
from stet_lsp.server.server import StetServer


def register(server: StetServer) -> None:
    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]),
    )
    async def code_action(ls: StetServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        state = await ls.ready(params.text_document.uri)
        if state is None:
            return []
        server_line(state.lines, params.range.start)
        # LSP has no request to make the client ask again once a file is indexed: wait for it
        # (the editors name the step at the cursor by its quick fixes).
        await ls.settled(state)
        return ls.gather("code_actions", state, params)

    @server.feature(types.TEXT_DOCUMENT_CODE_LENS, types.CodeLensOptions(resolve_provider=False))
    async def code_lens(
        ls: StetServer, params: types.CodeLensParams
    ) -> list[types.CodeLens] | RawJSON:
        state = await ls.ready(params.text_document.uri)
        if state is None:
            return []
        if not ls.supports("workspace", "code_lens", "refresh_support"):
            # Such a client (Neovim 0.11) cannot be asked to ask again once the background
            # work is done: as the outline, it waits for it. One that can is answered at
            # once (a large text's attribution would hold every answer) and refreshed.
            await ls.settled(state)
        answers = [answer for _, answer in ls.ask("code_lenses", state) if answer]
        written = [answer.items for answer in answers if isinstance(answer, LensesJSON)]
        lenses = [
            lens for answer in answers if not isinstance(answer, LensesJSON) for lens in answer
        ]
        if not written:
            return lenses
        converter = ls.protocol._converter  # pygls' own, as for every other answer
        items = [*written, *(json.dumps(converter.unstructure(lens)) for lens in lenses)]
        return RawJSON("[" + ",".join(item for item in items if item) + "]")

    @server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    async def symbols(
        ls: StetServer, params: types.DocumentSymbolParams
    ) -> list[types.DocumentSymbol]:
        state = await ls.ready(params.text_document.uri)
        if state is None:
            return []
        await ls.settled(state)
        return ls.gather("symbols", state)

    @server.feature(types.TEXT_DOCUMENT_DEFINITION)
    async def definition(ls: StetServer, params: types.DefinitionParams) -> list[types.Location]:
        state = await ls.ready(params.text_document.uri)
        if state is None:
            return []
        line = server_line(state.lines, params.position)
        await ls.settled(state)  # a trajectory file's steps, indexed in a worker
        answers = await ls.ask_awaiting("definition", state, line)
        return [location for _, found in answers for location in found or ()]

    @server.feature(types.WORKSPACE_SYMBOL)
    async def workspace_symbols(
        ls: StetServer, params: types.WorkspaceSymbolParams
    ) -> list[types.WorkspaceSymbol]:
        roots = await ls.shown_roots()  # the folders' repositories, whether or not a file is open
        return await ls.off_loop(ls.gather, "workspace_symbols", params.query, roots)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def hover(ls: StetServer, params: types.HoverParams) -> types.Hover | None:
        state = await ls.ready(params.text_document.uri)
        if state is None:
            return None
        await ls.settled(state)
        line = server_line(state.lines, params.position)
        parts = [text for _, text in await ls.ask_awaiting("hover", state, line) if text]
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
    async def diagnostic(
        ls: StetServer, params: types.DocumentDiagnosticParams
    ) -> types.FullDocumentDiagnosticReport | types.UnchangedDocumentDiagnosticReport:
        uri = params.text_document.uri
        await ls.ready(uri)
        result_id = ls.diagnostics.result_id(uri)
        if params.previous_result_id == result_id:
            return types.UnchangedDocumentDiagnosticReport(result_id=result_id)
        return types.FullDocumentDiagnosticReport(
            items=ls.diagnostics.get(uri), result_id=result_id
        )
