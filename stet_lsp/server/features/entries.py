"""Style-sheet entries beside the code: a diagnostic, a code lens and a hover at each anchor."""

from __future__ import annotations

from lsprotocol import types

from stet_lsp.core.items import entry_items
from stet_lsp.core.model import Entry
from stet_lsp.server.documents import DocumentState
from stet_lsp.server.feature import Feature
from stet_lsp.server.features.graduation import actions_for
from stet_lsp.server.positions import diagnostic, line_range
from stet_lsp.server.server import StetServer

DISCARD = "stet.note.discard"


class Entries(Feature):
    name = "entries"

    def __init__(self, server: StetServer) -> None:
        super().__init__(server)
        self.placed: dict[str, dict[int, list[Entry]]] = {}
        """By document URI: the open entries anchored in it, by 0-based line."""

    def analyse(self, state: DocumentState) -> None:
        snapshot = self.server.snapshot(state.session) if state.session else None
        if snapshot is None or state.is_sheet or state.relative is None:
            return
        document = snapshot.document
        items = entry_items(
            state.relative, state.lines, document.entries(), self.server.settings.entry_severity
        )
        placed: dict[int, list[Entry]] = {}
        for item in items:
            entry = document.find(item.data["entryId"])
            if entry is not None:
                placed.setdefault(item.line, []).append(entry)
        self.placed[state.uri] = placed
        codec = self.server.workspace.position_codec
        self.server.diagnostics.set(
            state.uri, "entries", [diagnostic(codec, state.lines, item) for item in items]
        )

    def code_lenses(self, state: DocumentState) -> list[types.CodeLens]:
        codec = self.server.workspace.position_codec
        lenses = []
        for line, entries in sorted(self.placed.get(state.uri, {}).items()):
            count = len(entries)
            title = f"style sheet: {count} note{'s' if count != 1 else ''}"
            lenses.append(
                types.CodeLens(
                    range=line_range(codec, state.lines, line),
                    command=types.Command(
                        title=title,
                        command="stet.sheet.open",
                        arguments=[{"uri": state.uri}],
                    ),
                )
            )
        return lenses

    def hover(self, state: DocumentState, line: int) -> str | None:
        entries = self.placed.get(state.uri, {}).get(line)
        if not entries:
            return None
        blocks = [
            f"**Style sheet** · {entry.kind} · {entry.author} · `{entry.id}`\n\n{entry.text}"
            for entry in entries
        ]
        return "\n\n---\n\n".join(blocks)

    def code_actions(
        self, state: DocumentState, params: types.CodeActionParams
    ) -> list[types.CodeAction]:
        placed = self.placed.get(state.uri, {})
        lines = range(params.range.start.line, params.range.end.line + 1)
        actions = []
        for entry in (entry for line in lines for entry in placed.get(line, [])):
            related = [
                item
                for item in params.context.diagnostics
                if isinstance(item.data, dict) and item.data.get("entryId") == entry.id
            ]
            actions += actions_for(state.uri, entry, related)
        return actions

    def forget(self, uri: str) -> None:
        self.placed.pop(uri, None)
