"""The style sheet file itself: lenses and actions per entry, problems, an outline."""

from __future__ import annotations

from lsprotocol import types

from stet_lsp.core.anchors import place
from stet_lsp.core.model import SECTION_TITLES, Entry
from stet_lsp.core.sheet_format import EntryBlock, SheetDocument
from stet_lsp.server.protocol import SOURCE, line_range
from stet_lsp.server.server import DocumentState, StetServer

DISCARD = "stet.note.discard"


class SheetFile:
    def __init__(self, server: StetServer) -> None:
        self.server = server
        self.parsed: dict[str, SheetDocument] = {}

    def analyse(self, state: DocumentState) -> None:
        if not state.is_sheet or state.session is None:
            return
        document = SheetDocument.parse(state.text)
        self.parsed[state.uri] = document
        codec = self.server.workspace.position_codec
        diagnostics = [
            types.Diagnostic(
                range=line_range(codec, state.lines, problem.line - 1),
                message=problem.message,
                severity=types.DiagnosticSeverity.Warning,
                source=SOURCE,
                code=problem.code,
            )
            for problem in document.problems
        ]
        open_entries = [entry for entry in document.entries() if entry.status == "open"]
        buffers = self._open_buffers()
        for placement in place(state.session.root, open_entries, buffers):
            if placement.lost and placement.entry.anchor is not None:
                anchor = placement.entry.anchor
                diagnostics.append(
                    types.Diagnostic(
                        range=line_range(codec, state.lines, placement.entry.source_line - 1),
                        message=f"anchor lost: {anchor.path}:{anchor.line} no longer holds "
                        f"{anchor.text!r}; the entry is kept",
                        severity=types.DiagnosticSeverity.Warning,
                        source=SOURCE,
                        code="anchor-lost",
                        data={"type": "entry", "entryId": placement.entry.id},
                    )
                )
        self.server.diagnostics.set(state.uri, "sheet", diagnostics)

    def forget(self, uri: str) -> None:
        self.parsed.pop(uri, None)

    def _open_buffers(self) -> dict[str, str]:
        return {
            state.relative: state.text
            for state in self.server.documents.values()
            if state.relative is not None and not state.is_sheet
        }

    def _entries(self, state: DocumentState) -> list[Entry]:
        document = self.parsed.get(state.uri)
        return list(document.entries()) if document else []

    def code_lenses(self, state: DocumentState) -> list[types.CodeLens]:
        codec = self.server.workspace.position_codec
        lenses = []
        for entry in self._entries(state):
            where = line_range(codec, state.lines, entry.source_line - 1)
            if entry.status != "open":
                continue
            lenses.append(
                types.CodeLens(
                    range=where,
                    command=types.Command(
                        title="discard",
                        command=DISCARD,
                        arguments=[{"uri": state.uri, "id": entry.id}],
                    ),
                )
            )
        return lenses

    def code_actions(
        self, state: DocumentState, params: types.CodeActionParams
    ) -> list[types.CodeAction]:
        if not state.is_sheet:
            return []
        first, last = params.range.start.line + 1, params.range.end.line + 1
        actions = []
        for entry in self._entries(state):
            if first <= entry.source_line <= last and entry.status == "open":
                title = f"Discard entry {entry.id}"
                actions.append(
                    types.CodeAction(
                        title=title,
                        kind=types.CodeActionKind.QuickFix,
                        command=types.Command(
                            title=title,
                            command=DISCARD,
                            arguments=[{"uri": state.uri, "id": entry.id}],
                        ),
                    )
                )
        return actions

    def symbols(self, state: DocumentState) -> list[types.DocumentSymbol]:
        document = self.parsed.get(state.uri)
        if document is None:
            return []
        codec = self.server.workspace.position_codec
        symbols = []
        line = sum(part.count("\n") for part in document.preamble)
        for section in document.sections:
            heading = line_range(codec, state.lines, line)
            line += 1
            children = []
            for item in section.items:
                if isinstance(item, EntryBlock):
                    entry = item.entry
                    where = line_range(codec, state.lines, entry.source_line - 1)
                    children.append(
                        types.DocumentSymbol(
                            name=entry.text.split("\n", 1)[0][:80],
                            detail=f"{entry.id} · {entry.author} · {entry.status}",
                            kind=types.SymbolKind.String,
                            range=where,
                            selection_range=where,
                        )
                    )
                    line += (item.raw or "").count("\n")
                else:
                    line += item.text.count("\n")
            title = (
                SECTION_TITLES[section.kind] if section.kind else section.heading.strip("# \r\n")
            )
            symbols.append(
                types.DocumentSymbol(
                    name=title,
                    kind=types.SymbolKind.Namespace,
                    range=heading,
                    selection_range=heading,
                    children=children,
                )
            )
        return symbols
