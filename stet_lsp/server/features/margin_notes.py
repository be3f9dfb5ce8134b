"""Margin notes: comments carrying the marker become hints with actions to record them."""

from __future__ import annotations

from typing import Any

from lsprotocol import types

from stet_lsp.core.anchors import line_key
from stet_lsp.core.errors import StetError
from stet_lsp.core.items import margin_items
from stet_lsp.core.margin import MarginNote, anchor_lines_after_removal, without_notes
from stet_lsp.core.model import Anchor, Entry
from stet_lsp.core.sheet import NewEntry, StyleSheet
from stet_lsp.server.documents import DocumentState
from stet_lsp.server.feature import Feature
from stet_lsp.server.positions import client_range, diagnostic
from stet_lsp.server.requests import answering, argument, field
from stet_lsp.server.server import StetServer
from stet_lsp.server.sheet_sync import APPLY_TIMEOUT_SECONDS, versioned_edit

RECORD = "stet.margin.record"
RECORD_ONE = "Record margin note to style sheet"
RECORD_ALL = "Record all margin notes in this file"


class MarginNotes(Feature):
    name = "margin notes"

    def __init__(self, server: StetServer) -> None:
        super().__init__(server)
        server.write_command(RECORD)(answering(self.record))

    def analyse(self, state: DocumentState) -> None:
        if state.session is None or state.is_sheet:
            return
        codec = self.server.workspace.position_codec
        items = margin_items(state.notes, self.server.settings.margin_severity)
        self.server.diagnostics.set(
            state.uri,
            "margin",
            [diagnostic(codec, state.lines, item, uri=state.uri) for item in items],
        )

    def code_actions(
        self, state: DocumentState, params: types.CodeActionParams
    ) -> list[types.CodeAction]:
        if not state.notes or state.session is None:
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
        state = await server.document(field(args, "uri", str))
        marker = server.settings.marker
        every = field(args, "all", bool, False)
        if every:
            notes = list(state.notes)
        else:
            line = field(args, "line", int)
            notes = [note for note in state.notes if note.line <= line <= note.end_line]
        if not notes:
            name = state.relative or (state.path.name if state.path else state.uri)
            error = StetError(
                f"{name} holds no margin note to record (a comment holding '{marker}:')"
                if every
                else f"there is no margin note on line {line + 1} to record (a comment holding "
                f"'{marker}:'; the whole file's: record all)"
            )
            error.reason = "no-margin-note"
            raise error
        if state.session is None or state.relative is None:
            raise StetError(f"{state.uri} is not inside a git repository")
        remove = server.settings.remove_comment_on_record
        # Everything is taken from the text now: the write runs while the user may type.
        # The notes are removed together, so each anchor moves by every removal above it.
        if remove:
            lines, text = anchor_lines_after_removal(notes), without_notes(state.lines, notes)
        else:
            lines, text = [note.anchor_line for note in notes], state.lines
        assert state.relative is not None
        anchored = [
            (note, Anchor(state.relative, line + 1, line_key(text[line])))
            for note, line in zip(notes, lines, strict=True)
        ]
        revision = state.revision  # the client's version may repeat: the text's own
        removal = self._removal(state, notes)

        def write(sheet: StyleSheet) -> list[Entry]:
            # One write for all of them: a file's hundred notes are one lock and one fsync.
            return sheet.add_all(
                [
                    NewEntry(
                        note.text or "(empty margin note)",
                        kind=note.kind,
                        author="human",
                        anchor=anchor,
                        via="margin",
                    )
                    for note, anchor in anchored
                ]
            )

        recorded: list[Entry] = await server.write_sheet(state.session, write)
        removed = False
        if remove and server.documents.get(state.uri) is state and state.revision == revision:
            answer = await server.from_client(
                server.workspace_apply_edit_async(
                    types.ApplyWorkspaceEditParams(
                        edit=versioned_edit(server, state, removal), label=_label(len(notes))
                    )
                ),
                "workspace/applyEdit",
                APPLY_TIMEOUT_SECONDS,
            )
            removed = bool(answer and answer.applied)
        return {"recorded": [entry.to_dict() for entry in recorded], "removed": removed}

    def _removal(
        self, state: DocumentState, notes: list[MarginNote]
    ) -> list[types.TextEdit | types.AnnotatedTextEdit | types.SnippetTextEdit]:
        codec = self.server.workspace.position_codec
        return [
            types.TextEdit(range=client_range(codec, state.lines, *note.removal), new_text="")
            for note in sorted(notes, key=lambda note: note.line, reverse=True)
        ]


def _label(count: int) -> str:
    """The edit's label, which editors show (Neovim in its messages, VS Code in undo)."""
    return "Record margin note" if count == 1 else f"Record {count} margin notes"


def _action(
    title: str, args: dict[str, Any], diagnostics: list[types.Diagnostic]
) -> types.CodeAction:
    return types.CodeAction(
        title=title,
        kind=types.CodeActionKind.QuickFix,
        diagnostics=diagnostics or None,
        command=types.Command(title=title, command=RECORD, arguments=[args]),
    )
