"""Margin notes: comments carrying the marker become hints with actions to record them."""

from __future__ import annotations

from typing import Any

from lsprotocol import types

from stet_lsp.core.anchors import line_key
from stet_lsp.core.margin import MarginNote
from stet_lsp.core.model import Anchor, Entry
from stet_lsp.server.protocol import SOURCE, answering, argument, client_range, field
from stet_lsp.server.server import DocumentState, StetServer

RECORD = "stet.margin.record"
RECORD_ONE = "Record margin note to style sheet"
RECORD_ALL = "Record all margin notes in this file"


class MarginNotes:
    def __init__(self, server: StetServer) -> None:
        self.server = server
        server.command(RECORD)(answering(self.record))

    def analyse(self, state: DocumentState) -> None:
        if state.comments is None:
            return
        codec = self.server.workspace.position_codec
        severity = self.server.settings.severity("margin")
        diagnostics = []
        for note in state.notes:
            message = f"margin note: record to style sheet — {note.text or '(empty)'}"
            if note.unknown_kind:
                message += f" (unknown kind {note.unknown_kind!r}: recorded as markup)"
            diagnostics.append(
                types.Diagnostic(
                    range=client_range(
                        codec, state.lines, note.line, note.column, note.end_line, note.end_column
                    ),
                    message=message,
                    severity=severity,
                    source=SOURCE,
                    code="margin-note",
                    data={"type": "margin", "uri": state.uri, "line": note.line},
                )
            )
        self.server.diagnostics.set(state.uri, "margin", diagnostics)

    def code_actions(
        self, state: DocumentState, params: types.CodeActionParams
    ) -> list[types.CodeAction]:
        if not state.notes:
            return []
        first, last = params.range.start.line, params.range.end.line
        here = [note for note in state.notes if note.line <= last and note.end_line >= first]
        diagnostics = [
            item
            for item in params.context.diagnostics
            if isinstance(item.data, dict) and item.data.get("type") == "margin"
        ]
        actions = [
            _action(RECORD_ONE, {"uri": state.uri, "line": note.line}, diagnostics) for note in here
        ]
        actions.append(_action(RECORD_ALL, {"uri": state.uri, "all": True}, diagnostics))
        return actions

    async def record(self, *arguments: Any) -> dict[str, Any]:
        args = argument(arguments)
        server = self.server
        state = server.document(field(args, "uri", str))
        if field(args, "all", bool, False):
            notes = list(state.notes)
        else:
            line = field(args, "line", int)
            notes = [note for note in state.notes if note.line <= line <= note.end_line]
        if not notes:
            from stet_lsp.core.errors import StetError

            raise StetError("there is no margin note there to record")
        assert state.session is not None and state.relative is not None
        remove = server.settings.remove_comment_on_record

        def write(sheet: Any) -> list[Entry]:
            return [
                sheet.add(
                    note.text or "(empty margin note)",
                    kind=note.kind,
                    author="human",
                    anchor=self._anchor(state, note, remove),
                    via="margin",
                )
                for note in notes
            ]

        recorded: list[Entry] = await server.write_sheet(state.session, write)
        removed = False
        if remove:
            removed = await self._remove(state, notes)
        return {"recorded": [entry.to_dict() for entry in recorded], "removed": removed}

    def _anchor(self, state: DocumentState, note: MarginNote, remove: bool) -> Anchor:
        assert state.relative is not None
        line = note.anchor_line_after_removal if remove else note.anchor_line
        return Anchor(state.relative, line + 1, line_key(state.lines[note.anchor_line]))

    async def _remove(self, state: DocumentState, notes: list[MarginNote]) -> bool:
        codec = self.server.workspace.position_codec
        edits = [
            types.TextEdit(range=client_range(codec, state.lines, *note.removal), new_text="")
            for note in sorted(notes, key=lambda note: note.line, reverse=True)
        ]
        result = await self.server.workspace_apply_edit_async(
            types.ApplyWorkspaceEditParams(
                edit=types.WorkspaceEdit(changes={state.uri: edits}),
                label="Record margin notes",
            )
        )
        return bool(result and result.applied)


def _action(
    title: str, args: dict[str, Any], diagnostics: list[types.Diagnostic]
) -> types.CodeAction:
    return types.CodeAction(
        title=title,
        kind=types.CodeActionKind.QuickFix,
        diagnostics=diagnostics or None,
        command=types.Command(title=title, command=RECORD, arguments=[args]),
    )
