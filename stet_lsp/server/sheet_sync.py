"""The style sheet open in the editor and the one on disk, kept from losing each other's
entries: writes go into a buffer with unsaved edits, outside writes are merged into it.

Everything here runs under `StetServer.sheet_edits`, so one change to an open sheet is
computed and applied at a time, in the order the disk was read.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

from lsprotocol import types

from stet_lsp.core.errors import StetError
from stet_lsp.core.lines import split_lines
from stet_lsp.core.merge import dropped_by_the_save, holds_the_buffer, merge_sheets
from stet_lsp.core.sheet import StyleSheet
from stet_lsp.core.targets import Target
from stet_lsp.server.positions import client_position

if TYPE_CHECKING:
    from stet_lsp.server.documents import DocumentState
    from stet_lsp.server.server import StetServer

T = TypeVar("T")
ATTEMPTS = 3
EDIT_WAIT_STEPS = 100
APPLY_TIMEOUT_SECONDS = 30.0
HOLDS = "stet/sheetHolds"
"""A notification before an edit of the open style sheet, to a client whose capabilities'
`experimental.stetSheetHolds` is true: `{"uri", "sha256"}`, the SHA-256 of the text on disk
(UTF-8, line breaks as \\n) whose every entry the buffer holds once the edit is applied."""
DIGEST_INLINE_LIMIT = 1 << 20
"""Texts up to this many characters get their `HOLDS` digest on the event loop (a
millisecond at most); longer ones, up to a sheet's 8 MiB (about 10 ms), in a worker thread,
which hashlib lets the loop run beside."""


def _wants_holds(server: StetServer) -> bool:
    experimental = getattr(server.client_capabilities, "experimental", None)
    return isinstance(experimental, dict) and experimental.get("stetSheetHolds") is True


def normalized(text: str) -> str:
    """A text as the server keeps a document's lines (its line breaks as \\n)."""
    return "\n".join(split_lines(text))


@dataclass(frozen=True)
class Staged:
    """How an operation with effects beyond the sheet (a skill file, the working trajectory)
    goes into a buffer with unsaved edits: those effects happen once, and only once the
    editor holds the sheet's change, which is computed without them (again, each time the
    editor's text changes meanwhile)."""

    change: Callable[[StyleSheet], object]
    """The operation's change to the sheet alone, with no other effect (in a worker)."""
    undo: Callable[[str, str], str]
    """`(changed, reached)`: the text `change` made, with what the operation did not carry
    out set back; `reached` is the operation's own sheet text where it stopped (in a
    worker)."""


async def write_into_buffer(
    server: StetServer,
    state: DocumentState,
    target: Target,
    operation: Callable[[StyleSheet], T],
    staged: Staged | None = None,
) -> T | None:
    """Run the operation on the buffer's text and send the change as an edit; typing during
    the operation makes it run again on the new text. None: the buffer is gone or was saved
    meanwhile (the caller then writes to disk). With `staged`, only its change runs until
    the editor applied it; the operation then runs once, on the text the change was made to,
    and what it fails to carry out is set back in the buffer."""
    for _ in range(ATTEMPTS):
        if server.documents.get(state.uri) is not state or not state.modified:
            return None
        revision, text = state.revision, state.text
        sheet = StyleSheet(target, buffer=text)
        result: T | None = None
        if staged is None:
            result = await server.off_loop(operation, sheet)
        else:
            await server.off_loop(staged.change, sheet)
        if server.documents.get(state.uri) is not state or state.revision != revision:
            continue
        changed = sheet.buffer is not None and sheet.buffer != text
        if changed and not await replace_text(
            server, state, sheet.buffer or "", "Update the style sheet", _held(state)
        ):
            continue
        await _edit_arrived(state, revision, changed)
        if staged is None:
            return result
        return await _carry_out(server, state, target, operation, staged, text, sheet.buffer)
    raise StetError(
        "the style sheet kept changing in the editor, or the editor refused the change; "
        "nothing was written"
    )


async def _carry_out(
    server: StetServer,
    state: DocumentState,
    target: Target,
    operation: Callable[[StyleSheet], T],
    staged: Staged,
    before: str,
    changed: str | None,
) -> T:
    """Run the operation once, on the text its change was made to (the editor holds that
    change already). When it fails, what it did not carry out is set back in the buffer; an
    error says so when that cannot be done."""
    sheet = StyleSheet(target, buffer=before)
    try:
        return await server.off_loop(operation, sheet)
    except Exception as error:
        changed = before if changed is None else changed
        reached = before if sheet.buffer is None else sheet.buffer
        wanted = await server.off_loop(staged.undo, changed, reached)
        if wanted == changed or await merge_into_buffer(
            server, state, changed, wanted, "Set the style sheet back"
        ):
            raise
        note = (
            "the editor's style sheet still shows the change that was not carried out: "
            "undo it there before saving"
        )
        if isinstance(error, StetError):
            raise StetError(f"{error}; {note}") from None
        server.message(f"style sheet: {note}")
        raise


async def merge_into_buffer(
    server: StetServer, state: DocumentState, base: str, theirs: str, label: str
) -> bool:
    """Bring the changes from `base` to `theirs` into the buffer (which may have been typed
    in since it held `base`), entry by entry. False: the buffer is gone, the change meets
    one the person made, or the editor did not take it."""
    for _ in range(ATTEMPTS):
        if server.documents.get(state.uri) is not state:
            return False
        ours, revision = state.text, state.revision
        result = await server.off_loop(merge_sheets, base, ours, theirs)
        if server.documents.get(state.uri) is not state:
            return False
        if state.text != ours:
            continue  # typed meanwhile: merge into the new text
        if result.conflicts:
            return False
        if result.changed and not await replace_text(
            server, state, result.text, label, _held(state)
        ):
            continue
        await _edit_arrived(state, revision, result.changed)
        return True
    return False


def shows_the_disk(state: DocumentState, text: str) -> bool:
    """Whether the buffer, whose text is what the disk holds (`text`), is in step with it. Not
    when it has unsaved edits that lack a write not merged into them: the editor saved over
    that write, and the disk was read before it said so; the save's notification merges the
    write back (`saved_sheet`) from the base the buffer had, which stays as it is until then."""
    return state.text == text and (not state.modified or state.expected_reload in (None, text))


async def merge_from_disk(server: StetServer, state: DocumentState, theirs: str | None) -> None:
    """The sheet on disk holds `theirs` (None: what the editor was expected to reload). A
    buffer without unsaved edits is the editor's to reload; one with unsaved edits (or
    opened with a text that is not on disk) gets what changed on disk merged in, entry by
    entry. Call with `sheet_edits` held."""
    if theirs is None:
        theirs = state.expected_reload
    if theirs is None or server.documents.get(state.uri) is not state:
        return
    theirs = normalized(theirs)
    if state.text == theirs:
        if shows_the_disk(state, theirs):
            state.disk_text, state.base_known, state.expected_reload = theirs, True, None
            state.modified = state.base_lost = False
        return
    if theirs == state.disk_text:
        state.base_known, state.expected_reload, state.base_lost = True, None, False
        return
    if state.base_known and not theirs.strip():
        # No sheet, or an empty one: another program's save caught half way (Vim renames the
        # old file away first), or a sheet emptied or removed for good. Its text would be a
        # base that takes every entry the buffer changed for one added on disk: the next
        # merge starts from the last text read before it, but takes nothing as deleted there.
        state.base_lost = True
        if not state.modified:
            state.expected_reload = theirs  # the editor's to reload
        elif not (state.expected_reload or "").strip():
            state.expected_reload = None  # a write not merged yet still is, at an edit or save
        return
    if not state.base_known:
        # Opened with a text that is not the one on disk (the editor restored unsaved edits,
        # which it reports no change for), and never seen in step with the disk: the buffer
        # has unsaved edits, and the disk's text is merged in from an empty base, so that
        # nothing either side holds is dropped and saving the buffer keeps the disk's entries.
        state.modified = True
    elif not state.modified:
        state.expected_reload = theirs
        return
    base = state.disk_text if state.base_known else ""
    deletions = not state.base_lost
    saves = state.saves
    for _ in range(ATTEMPTS):
        ours, revision = state.text, state.revision
        result = await server.off_loop(
            partial(merge_sheets, deletions=deletions), base, ours, theirs
        )
        if server.documents.get(state.uri) is not state:
            return
        if state.text != ours:
            continue  # typed meanwhile: merge the new text
        if result.changed and not await replace_text(
            server, state, result.text, "Merge style-sheet changes from disk", theirs
        ):
            continue  # the editor refused a stale edit
        await _edit_arrived(state, revision, result.changed)
        if state.saves == saves:  # else the saved text is what is on disk now
            state.disk_text, state.base_known, state.expected_reload = theirs, True, None
            state.modified, state.base_lost = state.text != theirs, False
        for conflict in result.conflicts:
            server.message(f"style sheet: {conflict.message}", types.MessageType.Warning)
        return
    if state.saves != saves:
        # Saved while the merge was tried: the save wrote over what is on disk, and did not
        # know it held more (it came before this was known to be unmerged).
        server.spawn(
            saved_sheet(server, state, base, theirs, deletions),
            "merging back what a save wrote over",
        )
        return
    earlier = state.expected_reload
    if (
        earlier is not None
        and earlier != theirs
        and earlier.strip()
        and await server.off_loop(holds_the_buffer, base, state.text, theirs)
    ):
        # The editor wrote its buffer over a write not merged into it, and the disk changed
        # again before its save was said: that write is still owed to the disk, so what the
        # disk holds now is merged into it (otherwise the disk's text is that write's next
        # version, its changes and removals included, and replaces it).
        merged = await server.off_loop(
            partial(merge_sheets, deletions=deletions), base, earlier, theirs
        )
        theirs = merged.text
    state.expected_reload = theirs  # tried again at the next edit
    server.message(
        "style sheet: the changes on disk are not merged into the unsaved editor text yet; "
        "they will be at the next edit, or into the disk when it is saved (nothing is lost)",
    )


async def closed_sheet(
    server: StetServer, state: DocumentState, base: str, unmerged: str, deletions: bool
) -> None:
    """A sheet closed with unsaved edits and a write on disk never merged into them: when
    the disk holds the buffer (the editor wrote it and never said it saved), that write is
    merged back into the disk; otherwise the disk is as the other writers left it."""
    session = state.session
    if session is None:
        return
    snapshot = await server.off_loop(session.load)
    disk = normalized(snapshot.text or "")
    if await server.off_loop(holds_the_buffer, base, state.text, disk):
        await saved_sheet(server, state, base, unmerged, deletions)


async def _edit_arrived(state: DocumentState, revision: int, changed: bool) -> None:
    """Wait (briefly) for the editor to report the edit it applied, so the next merge starts
    from the merged text (told by the text's own revision: a client may repeat a version)."""
    for _ in range(EDIT_WAIT_STEPS):
        if not changed or state.revision != revision:
            return
        await asyncio.sleep(0.02)


def _held(state: DocumentState) -> str | None:
    """The text on disk that the buffer holds every entry of, when it is known."""
    return state.disk_text if state.base_known else None


async def replace_text(
    server: StetServer, state: DocumentState, new: str, label: str, holds: str | None
) -> bool:
    """Replace the document's text by `new` with one edit spanning only the changed lines,
    versioned where the client checks versions. False: the client did not apply it.
    `holds`: the text on disk whose every entry the buffer holds once edited, told first
    (`HOLDS`) to a client that asked, so that it can save over that file without asking."""
    if not server.supports("workspace", "apply_edit"):
        return False
    if holds is not None and _wants_holds(server):
        revision = state.revision
        if len(holds) <= DIGEST_INLINE_LIMIT:
            digest = _digest(holds)
        else:
            digest = await server.off_loop(_digest, holds)
            if server.documents.get(state.uri) is not state or state.revision != revision:
                return False  # typed in meanwhile: the caller computes its change again
        server.protocol.notify(HOLDS, {"uri": state.uri, "sha256": digest})
    edit = line_edit(server.workspace.position_codec, state.lines, split_lines(new))
    answer = await server.from_client(
        server.workspace_apply_edit_async(
            types.ApplyWorkspaceEditParams(edit=versioned_edit(server, state, [edit]), label=label)
        ),
        "workspace/applyEdit",
        APPLY_TIMEOUT_SECONDS,
    )
    if answer is None:
        server.message("style sheet: the editor did not apply the change (see the server's log)")
        return False
    return bool(answer and answer.applied)


def _digest(text: str) -> str:
    # A lone surrogate (a client's JSON may send one) as the editor may have saved it.
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def line_edit(codec: Any, old: list[str], new: list[str]) -> types.TextEdit:
    """One edit turning the lines `old` into `new`, spanning only the lines that differ."""
    first, limit = 0, min(len(old), len(new))
    while first < limit and old[first] == new[first]:
        first += 1
    tail = 0
    while tail < limit - first and old[len(old) - 1 - tail] == new[len(new) - 1 - tail]:
        tail += 1
    replacement, last = new[first : len(new) - tail], len(old) - 1
    if tail:  # whole lines in the middle
        start = client_position(codec, old, first, 0)
        end = client_position(codec, old, len(old) - tail, 0)
        text = "".join(line + "\n" for line in replacement)
    else:  # the change reaches the end of the text
        end = client_position(codec, old, last, len(old[last]))
        if first > last:  # lines added at the end
            start, text = end, "\n" + "\n".join(replacement)
        elif replacement or not first:
            start, text = client_position(codec, old, first, 0), "\n".join(replacement)
        else:  # lines removed at the end: from the end of the last line kept
            start, text = client_position(codec, old, first - 1, len(old[first - 1])), ""
    if start == end == types.Position(last, 0) and last > 0 and not old[last] and text[-1:] == "\n":
        # An insertion past the break that ends the text is made before that break: Neovim
        # takes the position past it for a line past the buffer's end, and leaves an empty
        # line there.
        start = end = client_position(codec, old, last - 1, len(old[last - 1]))
        text = "\n" + text[:-1]
    return types.TextEdit(range=types.Range(start=start, end=end), new_text=text)


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


async def saved_sheet(
    server: StetServer,
    state: DocumentState,
    base: str,
    unmerged: str | None,
    deletions: bool = True,
    earlier: tuple[str, str] | None = None,
) -> None:
    """The editor saved the sheet. What was written on disk and never reached its buffer
    (`unmerged`, when it is not the text saved: the editor refused the merge, or cannot
    apply edits) was written over:
    it is merged back into the sheet on disk, which the editor then reloads (`deletions`
    False: the sheet was read missing or empty since `base`, `DocumentState.base_lost`).
    `earlier`: (the text saved, the buffer's text) when the editor saved an earlier text of
    its buffer: the entries `base` held that the save lacks and the buffer holds since (a
    merge the editor applied while it wrote the file) are put back too."""
    session = state.session
    if session is None:
        return
    merges = [] if unmerged is None else [(base, unmerged, deletions)]
    if earlier is not None:
        saved, buffer = earlier
        restored = await server.off_loop(dropped_by_the_save, base, saved, buffer)
        if restored is not None:
            merges.append((saved, restored, True))
    if merges:
        target = await server.off_loop(session.target)
        if state.path == target.sheet_path:
            async with server.sheet_edits:
                try:
                    for before, theirs, deleting in merges:
                        merge = partial(StyleSheet(target).merge_in, deletions=deleting)
                        await server.off_loop(merge, before, theirs)
                except StetError as error:
                    server.message(
                        f"style sheet: what the save wrote over is not merged back: {error}"
                    )
    await server.reload(session)
