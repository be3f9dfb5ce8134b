"""No entry is lost whatever the order in which the editor's writes and notifications, other
writers' notes and the server's poll of the disk meet. A scripted editor (`sheet_editor`)
writes the file and says it saved in separate steps, so that the poll can read the disk
between them, as it can in a real editor."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sheet_editor import EDITS, NO_EDITS, SheetEditor, add, entry_texts

from stet_lsp.core.sheet import StyleSheet
from stet_lsp.core.sheet_format import SheetDocument
from stet_lsp.core.targets import resolve_target

EXPECTED = ["first", "note from another writer", "typed by hand"]


@pytest.fixture
def editors(root: Path) -> Iterator[Any]:
    made: list[SheetEditor] = []

    def make(capabilities: dict[str, Any], answers: str = "refuse") -> SheetEditor:
        add(root, "first")
        editor = SheetEditor(root, capabilities, answers)
        made.append(editor)
        editor.open()
        editor.type_entry("typed by hand")
        editor.sync()
        return editor

    yield make
    for editor in made:
        editor.server.close()


def _holding_a_note(root: Path, editors: Any) -> SheetEditor:
    """An editor that cannot apply edits, holding another writer's note it could not take."""
    editor = editors(NO_EDITS)
    add(root, "note from another writer")
    editor.wait_not_merged()
    return editor


def _saved_with_a_merge_in_flight(root: Path, editors: Any) -> tuple[SheetEditor, Any]:
    """The merge of another writer's note sent and not answered yet, the buffer saved."""
    editor = editors(EDITS, answers="hold")
    add(root, "note from another writer")
    request = editor.pump(until=lambda m: m.get("method") == "workspace/applyEdit")
    editor.held.clear()
    editor.save()
    editor.sync()
    return editor, request


def test_a_merge_refused_across_a_save_reaches_the_disk(root: Path, editors: Any) -> None:
    """The merge of another writer's note is in flight when the person saves; the editor
    then refuses it: the save wrote over the note, which is merged back into the disk."""
    editor, request = _saved_with_a_merge_in_flight(root, editors)
    editor.answers = "refuse"
    editor.answer(request, applied=False)
    assert editor.on_disk_within(EXPECTED) == EXPECTED
    editor.type_entry("typed later")  # and saved again: the note stays
    editor.sync()
    editor.save()
    editor.polled()
    assert "note from another writer" in editor.disk()


def test_a_merge_applied_across_a_save_stays_in_the_buffer(root: Path, editors: Any) -> None:
    editor, request = _saved_with_a_merge_in_flight(root, editors)
    editor.answer(request, applied=True)
    editor.polled()
    assert entry_texts(editor.text) == EXPECTED
    editor.save()
    assert editor.on_disk_within(EXPECTED) == EXPECTED


@pytest.mark.parametrize("then", ["kept", "closed"])
def test_a_merge_applied_after_the_editor_wrote_reaches_the_disk(
    root: Path, editors: Any, then: str
) -> None:
    """The editor applies the merge of another writer's note after it wrote the file and
    before it says it saved: the save's text lacks the note the buffer now holds, which is
    put back on disk, so a buffer then closed unsaved loses nothing."""
    editor = editors(EDITS, answers="hold")
    add(root, "note from another writer")
    request = editor.pump(until=lambda m: m.get("method") == "workspace/applyEdit")
    editor.held.clear()
    written = editor.write()
    editor.answers = "apply"
    editor.answer(request, applied=True)
    editor.did_save(written)
    editor.sync()
    if then == "closed":
        editor.close()
    assert editor.on_disk_within(EXPECTED) == EXPECTED


@pytest.mark.parametrize("save_read_first", [False, True], ids=["", "the save read first"])
def test_a_note_added_to_the_saved_file_before_the_save_is_said(
    root: Path, editors: Any, save_read_first: bool
) -> None:
    """An editor that cannot apply edits holds a note it could not merge, saves over it, and
    another note is added to the saved file before the save is said: the second write on
    disk does not replace the first, both reach the disk."""
    editor = _holding_a_note(root, editors)
    written = editor.write()
    if save_read_first:
        editor.polled()
    add(root, "second note")
    editor.polled()
    editor.did_save(written)
    expected = sorted([*EXPECTED, "second note"])
    assert editor.on_disk_within(expected) == expected


@pytest.mark.parametrize("capabilities", [NO_EDITS, EDITS], ids=["no edits", "edits"])
def test_an_entry_typed_while_the_editor_writes_is_kept(
    editors: Any, capabilities: dict[str, Any]
) -> None:
    """Typed after the editor wrote the file and before it said so: the save's text (sent
    with its notification) is what is on disk, and the entry typed is an unsaved edit, not
    one deleted on disk."""
    editor = editors(capabilities, answers="apply")
    written = editor.write()
    editor.type_entry("typed while saving")
    editor.did_save(written)
    editor.polled()
    editor.type_entry("typed after")
    editor.polled()
    assert "typed while saving" in entry_texts(editor.text)
    editor.save()
    expected = ["first", "typed after", "typed by hand", "typed while saving"]
    assert editor.on_disk_within(expected) == expected


@pytest.mark.parametrize("save_read_first", [False, True], ids=["", "the save read first"])
def test_a_command_between_a_write_and_its_save_loses_no_note(
    root: Path, editors: Any, save_read_first: bool
) -> None:
    """A note added by a command after the editor wrote the file and before it said so: the
    command writes into the buffer, which this editor cannot change, so it says it wrote
    nothing; the other writer's note the save wrote over still comes back."""
    editor = _holding_a_note(root, editors)
    written = editor.write()
    if save_read_first:
        editor.polled()
    arguments = [{"uri": editor.uri, "text": "from a command"}]
    answer = editor.request(
        "workspace/executeCommand", {"command": "stet.note.add", "arguments": arguments}
    )
    assert "nothing was written" in answer["error"]["message"]
    editor.did_save(written)
    assert editor.on_disk_within(EXPECTED) == EXPECTED


def test_a_buffer_written_and_closed_without_its_save_said(root: Path, editors: Any) -> None:
    """The disk holds the buffer, which lacks a note it could not merge, and the editor
    closes it without saying it saved: the note is merged back into the disk."""
    editor = _holding_a_note(root, editors)
    editor.write()
    editor.polled()
    editor.close()
    assert editor.on_disk_within(EXPECTED) == EXPECTED


def test_a_buffer_written_without_its_save_said_then_typed_in(root: Path, editors: Any) -> None:
    """No save is said after the write: the next edit is told the note is not merged yet,
    and the next save brings it back."""
    editor = _holding_a_note(root, editors)
    editor.write()
    editor.polled()
    said = len(editor.messages("not merged"))
    editor.type_entry("typed after")
    editor.polled()
    assert len(editor.messages("not merged")) > said
    editor.save()
    expected = sorted([*EXPECTED, "typed after"])
    assert editor.on_disk_within(expected) == expected


def test_two_saves_with_a_note_between(root: Path, editors: Any) -> None:
    editor = _holding_a_note(root, editors)
    editor.save()
    editor.polled()
    add(root, "second note")
    editor.polled()
    editor.type_entry("typed second")
    editor.sync()
    written = editor.write()
    editor.polled()
    editor.did_save(written)
    expected = sorted([*EXPECTED, "second note", "typed second"])
    assert editor.on_disk_within(expected) == expected


def test_a_sheet_removed_then_saved_back(root: Path, editors: Any) -> None:
    editor = _holding_a_note(root, editors)
    editor.sheet.path.unlink()  # a save caught half way
    editor.polled()
    written = editor.write()
    editor.polled()
    editor.did_save(written)
    assert editor.on_disk_within(EXPECTED) == EXPECTED


def test_a_save_said_without_its_text(root: Path, editors: Any) -> None:
    """A client that leaves the text out of its save notification: the buffer is taken for
    what it saved, as before."""
    editor = _holding_a_note(root, editors)
    editor.write()
    editor.polled()
    saved = {"textDocument": {"uri": editor.uri}}
    editor.server.send({"method": "textDocument/didSave", "params": saved})
    assert editor.on_disk_within(EXPECTED) == EXPECTED


def _rewritten(root: Path, change: Any) -> None:
    """Another writer rewrites the sheet on disk in one write (`change`: old text -> new)."""
    sheet = StyleSheet(resolve_target(root))
    sheet.path.write_text(change(sheet.path.read_text(encoding="utf-8")), encoding="utf-8")


def _without(entry: str) -> Any:
    return lambda text: "".join(line for line in text.splitlines(True) if f"- {entry}" not in line)


def _statuses(editor: SheetEditor) -> list[tuple[str, str]]:
    text = editor.sheet.path.read_text(encoding="utf-8")
    return sorted((entry.text, entry.status) for entry in SheetDocument.parse(text).entries())


# A write not merged into the buffer, then changed again on disk by the other writers (not
# by the editor's save): the later text is that write's next version, and what it removed or
# changed stays so at the save and at a close.


@pytest.mark.parametrize("then", ["saved", "closed"])
def test_a_note_not_merged_then_removed_by_hand_stays_removed(
    root: Path, editors: Any, then: str
) -> None:
    editor = _holding_a_note(root, editors)
    _rewritten(root, lambda text: _without("note from another writer")(text) + "- second note\n")
    editor.polled()
    if then == "saved":
        editor.save()
        expected = ["first", "second note", "typed by hand"]
    else:  # the person discards the buffer: the disk stays as the other writers left it
        editor.close()
        expected = ["first", "second note"]
    assert editor.on_disk_within(expected) == expected


def test_a_note_not_merged_removed_just_before_a_close(root: Path, editors: Any) -> None:
    editor = _holding_a_note(root, editors)
    _rewritten(root, _without("note from another writer"))
    editor.close()  # before the poll read the removal
    assert editor.on_disk_within(["first"]) == ["first"]


def test_a_note_not_merged_then_discarded_or_edited(root: Path, editors: Any) -> None:
    editor = editors(NO_EDITS)
    sheet = StyleSheet(resolve_target(root))
    discarded = sheet.add("to discard", author="agent")
    edited = sheet.add("to edit", author="agent")
    editor.wait_not_merged()
    sheet.set_status(discarded.id, "discarded")
    sheet.edit_text(edited.id, "edited")
    editor.polled()
    editor.save()
    editor.polled(3)
    assert _statuses(editor) == [
        ("edited", "open"),
        ("first", "open"),
        ("to discard", "discarded"),
        ("typed by hand", "open"),
    ]


def test_an_entry_edited_twice_while_its_first_edit_is_not_merged(root: Path, editors: Any) -> None:
    editor = editors(NO_EDITS)
    sheet = StyleSheet(resolve_target(root))
    first = next(iter(sheet.entries()))
    sheet.edit_text(first.id, "first, second version")
    editor.wait_not_merged()
    sheet.edit_text(first.id, "first, third version")
    editor.polled()
    editor.save()
    expected = ["first, third version", "typed by hand"]
    assert editor.on_disk_within(expected) == expected


def test_a_save_whose_text_lacks_the_final_line_break(root: Path, editors: Any) -> None:
    """Saved and written without the buffer's final line break: the buffer is what was
    saved, not an unsaved edit, so a command writes to disk."""
    editor = editors(NO_EDITS)
    editor.sheet.path.write_text(editor.text.rstrip("\n"), encoding="utf-8")
    editor.did_save(editor.text.rstrip("\n"))
    editor.polled()
    arguments = [{"uri": editor.uri, "text": "from a command"}]
    answer = editor.request(
        "workspace/executeCommand", {"command": "stet.note.add", "arguments": arguments}
    )
    assert "error" not in answer, answer
    assert "from a command" in editor.disk()
