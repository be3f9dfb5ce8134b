"""The style sheet open in the editor and the one on disk, kept from losing each other's
entries: writes go into a buffer with unsaved edits, outside writes are merged into it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from lsprotocol import types

from stet_lsp.core.errors import StetError
from stet_lsp.core.lines import split_lines
from stet_lsp.core.merge import merge_sheets
from stet_lsp.core.session import Snapshot
from stet_lsp.core.sheet import StyleSheet
from stet_lsp.core.targets import Target
from stet_lsp.server.positions import client_position

if TYPE_CHECKING:
    from stet_lsp.server.documents import DocumentState
    from stet_lsp.server.server import StetServer

T = TypeVar("T")
ATTEMPTS = 3
EDIT_WAIT_STEPS = 100


async def write_into_buffer(
    server: StetServer,
    state: DocumentState,
    target: Target,
    operation: Callable[[StyleSheet], T],
) -> T:
    """Run the operation on the buffer's text and send the change as an edit; typing during
    the operation makes it run again on the new text."""
    async with server.sheet_edits:
        for _ in range(ATTEMPTS):
            version, text = state.version, state.text
            sheet = StyleSheet(target, buffer=text)
            result = await server.off_loop(operation, sheet)
            if server.documents.get(state.uri) is not state or state.version != version:
                continue
            changed = sheet.buffer is not None and sheet.buffer != text
            if changed and not await replace_text(
                server, state, sheet.buffer or "", "Update the style sheet"
            ):
                continue
            await _edit_arrived(state, version, changed)
            return result
    raise StetError("the style sheet kept changing in the editor; nothing was written")


async def sync_open_sheet(server: StetServer, snapshot: Snapshot) -> None:
    """The sheet as read from disk now, for the editor's copy if it is open."""
    state = server.open_sheet(snapshot.target)
    if state is not None and snapshot.text is not None:
        await merge_from_disk(server, state, snapshot.text)


async def merge_from_disk(server: StetServer, state: DocumentState, theirs: str) -> None:
    """The sheet on disk holds `theirs`. A buffer without unsaved edits is the editor's to
    reload (the reload is expected, see `DocumentState.expected_reload`); one with unsaved
    edits gets what changed on disk merged in, entry by entry."""
    async with server.sheet_edits:
        base = state.disk_text
        if theirs == base:
            state.expected_reload = None
            return
        if not state.modified:
            state.expected_reload = theirs
            return
        for _ in range(ATTEMPTS):
            ours, version = state.text, state.version
            result = await server.off_loop(merge_sheets, base, ours, theirs)
            if state.text != ours:
                continue  # typed meanwhile: merge the new text
            if result.changed and not await replace_text(
                server, state, result.text, "Merge style-sheet changes from disk"
            ):
                continue  # the editor refused a stale edit
            await _edit_arrived(state, version, result.changed)
            state.disk_text, state.expected_reload = theirs, None
            for conflict in result.conflicts:
                server.message(f"style sheet: {conflict.message}", types.MessageType.Warning)
            return
        server.message(
            "style sheet: changes on disk could not be merged into the unsaved editor text; "
            "save or revert it, nothing on disk was lost",
        )


async def _edit_arrived(state: DocumentState, version: int | None, changed: bool) -> None:
    """Wait (briefly) for the editor to report the edit it applied, so the next merge starts
    from the merged text."""
    for _ in range(EDIT_WAIT_STEPS):
        if not changed or state.version != version:
            return
        await asyncio.sleep(0.02)


async def replace_text(server: StetServer, state: DocumentState, new: str, label: str) -> bool:
    """Replace the document's text by `new` with one edit spanning only the changed lines,
    versioned where the client checks versions."""
    old_lines, new_lines = state.lines, split_lines(new)
    first = 0
    limit = min(len(old_lines), len(new_lines))
    while first < limit and old_lines[first] == new_lines[first]:
        first += 1
    tail = 0
    while (
        tail < limit - first
        and old_lines[len(old_lines) - 1 - tail] == new_lines[len(new_lines) - 1 - tail]
    ):
        tail += 1
    codec = server.workspace.position_codec
    old_end = len(old_lines) - tail
    replacement = new_lines[first : len(new_lines) - tail]
    if old_end < len(old_lines):
        start = client_position(codec, old_lines, first, 0)
        end = client_position(codec, old_lines, old_end, 0)
        text = "".join(line + "\n" for line in replacement)
    else:  # the change reaches the end of the text
        last = len(old_lines) - 1
        end = client_position(codec, old_lines, last, len(old_lines[last]))
        if first < len(old_lines) and replacement:
            start, text = client_position(codec, old_lines, first, 0), "\n".join(replacement)
        elif first < len(old_lines):  # lines removed at the end: from the previous line's end
            start = (
                client_position(codec, old_lines, first - 1, len(old_lines[first - 1]))
                if first
                else types.Position(line=0, character=0)
            )
            text = ""
        else:  # lines added at the end
            start, text = end, "\n" + "\n".join(replacement)
    edit = types.TextEdit(range=types.Range(start=start, end=end), new_text=text)
    answer = await server.workspace_apply_edit_async(
        types.ApplyWorkspaceEditParams(edit=versioned_edit(server, state, [edit]), label=label)
    )
    return bool(answer and answer.applied)


def versioned_edit(
    server: StetServer,
    state: DocumentState,
    edits: list[types.TextEdit | types.AnnotatedTextEdit | types.SnippetTextEdit],
    version: int | None = None,
) -> types.WorkspaceEdit:
    """Versioned (the document's current version, or `version`: the one the edits were
    computed for) when the client can check it: an edit for a stale text is refused."""
    version = state.version if version is None else version
    if version is None or not server.supports("workspace", "workspace_edit", "document_changes"):
        return types.WorkspaceEdit(changes={state.uri: list(edits)})  # type: ignore[arg-type]
    document = types.OptionalVersionedTextDocumentIdentifier(uri=state.uri, version=version)
    return types.WorkspaceEdit(
        document_changes=[types.TextDocumentEdit(text_document=document, edits=edits)]
    )
