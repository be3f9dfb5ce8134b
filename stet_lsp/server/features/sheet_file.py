"""The style sheet file itself: lenses and actions per entry, problems, an outline."""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsprotocol import types

from stet_lsp.core.anchors import place
from stet_lsp.core.items import (
    Item,
    lost_anchor_items,
    open_entries,
    other_target_item,
    problem_items,
)
from stet_lsp.core.model import SECTION_TITLES, Entry
from stet_lsp.core.sheet_format import EntryBlock, SheetDocument
from stet_lsp.core.targets import Target
from stet_lsp.server.documents import DocumentState
from stet_lsp.server.feature import Feature
from stet_lsp.server.features.graduation import actions_for, lenses_for
from stet_lsp.server.positions import diagnostic, line_range
from stet_lsp.server.server import StetServer

DISCARD = "stet.note.discard"


class SheetFile(Feature):
    name = "sheet file"

    def __init__(self, server: StetServer) -> None:
        super().__init__(server)
        self.parsed: dict[str, SheetDocument] = {}
        self.lost: dict[str, list[Item]] = {}
        """By sheet URI: the entries whose anchor is lost, as last checked off the loop."""
        self._checking: dict[str, asyncio.Task[None]] = {}

    def analyse(self, state: DocumentState) -> None:
        if not state.is_sheet or state.session is None:
            return
        document = SheetDocument.parse(state.text)
        self.parsed[state.uri] = document
        self._check_anchors(state, document)
        self._publish(state)

    def _publish(self, state: DocumentState) -> None:
        codec = self.server.workspace.position_codec
        document = self.parsed[state.uri]
        items = problem_items(document, state.lines) + self.lost.get(state.uri, [])
        current = self._other_target(state)
        if current is not None:
            kind, name = document.meta.target_kind, document.meta.target_name
            if not name:  # a sheet whose header was lost: named by its file
                kind, name = "sheet", state.path.name if state.path else state.uri
            items.append(other_target_item(state.lines, kind, name, current.label))
        self.server.diagnostics.set(
            state.uri, "sheet", [diagnostic(codec, state.lines, item) for item in items]
        )

    def _check_anchors(self, state: DocumentState, document: SheetDocument) -> None:
        """Reading the anchored files is I/O: it runs in a worker thread, the newest text
        replacing a check still running."""
        assert state.session is not None
        running = self._checking.pop(state.uri, None)
        if running is not None:
            running.cancel()
        entries = open_entries(document)
        if not any(entry.anchor for entry in entries):
            self.lost.pop(state.uri, None)
            return
        buffers = self._open_buffers()
        root = state.session.root
        self._checking[state.uri] = self.server.spawn(
            self._lost_anchors(state, document, root, entries, buffers),
            "checking the style sheet's anchors",
        )

    async def _lost_anchors(
        self,
        state: DocumentState,
        document: SheetDocument,
        root: Path,
        entries: list[Entry],
        buffers: dict[str, str],
    ) -> None:
        placements = await self.server.off_loop(place, root, entries, buffers)
        if self.parsed.get(state.uri) is not document:
            return  # the text changed meanwhile: its own check follows
        lost = lost_anchor_items(state.lines, placements)
        if lost != self.lost.get(state.uri, []):
            self.lost[state.uri] = lost
            self._publish(state)
            self.server.announce([state], outside=True)  # a finished background check

    def forget(self, uri: str) -> None:
        self.parsed.pop(uri, None)
        self.lost.pop(uri, None)
        running = self._checking.pop(uri, None)
        if running is not None:
            running.cancel()

    def _open_buffers(self) -> dict[str, str]:
        return {
            state.relative: state.text
            for state in self.server.documents.values()
            if state.relative is not None and not state.is_sheet
        }

    def _entries(self, state: DocumentState) -> list[Entry]:
        document = self.parsed.get(state.uri)
        return list(document.entries()) if document else []

    def _other_target(self, state: DocumentState) -> Target | None:
        """The target HEAD is on (as last read) when this sheet is not its: the graduation
        commands work on the current target's sheet, so this one's entries graduate from
        elsewhere. None: it is the current target's, or HEAD is not read yet."""
        snapshot = self.server.snapshot(state.session) if state.session else None
        if snapshot is None or state.path == snapshot.target.sheet_path:
            return None
        return snapshot.target

    def code_lenses(self, state: DocumentState) -> list[types.CodeLens]:
        if self._other_target(state) is not None:
            return []
        codec = self.server.workspace.position_codec
        lenses = []
        for entry in self._entries(state):
            where = line_range(codec, state.lines, entry.source_line - 1)
            if entry.status != "open":
                continue
            lenses += lenses_for(state.uri, entry, where)
        return lenses

    def code_actions(
        self, state: DocumentState, params: types.CodeActionParams
    ) -> list[types.CodeAction]:
        if not state.is_sheet or self._other_target(state) is not None:
            return []
        first, last = params.range.start.line + 1, params.range.end.line + 1
        actions = []
        for entry in self._entries(state):
            if first <= entry.source_line <= last and entry.status == "open":
                actions += actions_for(state.uri, entry)
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
