"""Merging an outside write into an editor buffer with unsaved edits: nobody loses an entry."""

from __future__ import annotations

import difflib
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stet_lsp.core.merge import (
    conflict_markers,
    dropped_by_the_save,
    holds_the_buffer,
    merge_sheets,
)
from stet_lsp.core.model import KINDS, STATUSES, Anchor, Entry, Kind
from stet_lsp.core.sheet import StyleSheet
from stet_lsp.core.sheet_format import EntryBlock, SheetDocument, SheetMeta, new_document
from stet_lsp.core.targets import resolve_target

MOMENT = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
LATER = datetime(2026, 12, 1, 9, 30, tzinfo=UTC)


_Copied = TypeVar("_Copied", Entry, SheetMeta)


def copied(record: _Copied, **fields: object) -> _Copied:
    """A copy of `record` with `fields` changed (the record itself stays as it is)."""
    copy = record.copy()
    for name, value in fields.items():
        setattr(copy, name, value)
    return copy


def note(entry_id: str, text: str, kind: Kind = "note", **fields: object) -> Entry:
    entry = Entry(id=entry_id, kind=kind, author="agent", text=text, created=MOMENT)
    for name, value in fields.items():
        setattr(entry, name, value)
    return entry


def sheet(*entries: Entry) -> str:
    document = new_document("branch", "main", "main")
    for entry in entries:
        document.add(entry)
    return document.render()


def edited(text: str, change: Callable[[SheetDocument], None]) -> str:
    document = SheetDocument.parse(text)
    change(document)
    return document.render()


def changed(sheet_text: str, entry_id: str, **fields: object) -> str:
    def change(document: SheetDocument) -> None:
        entry = document.find(entry_id)
        assert entry is not None
        for name, value in fields.items():
            setattr(entry, name, value)
        document.touch(entry_id)

    return edited(sheet_text, change)


def added(text: str, *entries: Entry) -> str:
    def change(document: SheetDocument) -> None:
        for entry in entries:
            document.add(entry)

    return edited(text, change)


def moved(sheet_text: str, entry_id: str, kind: Kind) -> str:
    entry = SheetDocument.parse(sheet_text).find(entry_id)
    assert entry is not None
    return added(deleted(sheet_text, entry_id), copied(entry, kind=kind))


def deleted(text: str, entry_id: str) -> str:
    def change(document: SheetDocument) -> None:
        for section in document.sections:
            section.items = [
                item
                for item in section.items
                if not (isinstance(item, EntryBlock) and item.entry.id == entry_id)
            ]

    return edited(text, change)


def entries(text: str) -> dict[str, Entry]:
    document = SheetDocument.parse(text)
    assert document.problems == []
    return {entry.id: entry for entry in document.entries()}


def line_diff(before: str, after: str) -> tuple[list[str], list[str]]:
    """The lines only `before` has, and those only `after` has."""
    lines = list(difflib.ndiff(before.splitlines(True), after.splitlines(True)))
    return [line[2:] for line in lines if line[0] == "-"], [
        line[2:] for line in lines if line[0] == "+"
    ]


def line_of(text: str, entry_id: str) -> str:
    return next(line for line in text.splitlines(keepends=True) if f"id={entry_id} " in line)


BASE = sheet(
    note("conv01", "Wrap errors with %w.", "convention"),
    note("note01", "The retry helper lives in payments.http."),
    note("note02", "Tests need the fake clock."),
)


def test_nothing_changed_on_disk_keeps_the_buffer_byte_for_byte() -> None:
    ours = BASE.replace("\n", "\r\n").replace("## Notes", "## notes") + "* typed, no metadata\n"
    result = merge_sheets(BASE, ours, BASE)
    assert result.text == ours
    assert not result.changed
    assert result.conflicts == []


def test_an_entry_added_on_disk_joins_its_section_with_all_its_metadata() -> None:
    anchor = Anchor("src/app.py", 7, "x = 1")
    new = note("mrk001", "Use the helper.", "markup", anchor=anchor, author="human")
    new.status = "graduated-skill"
    new.extra = {"origin": "review 12"}
    theirs = added(BASE, new)
    ours = BASE.replace("Tests need the fake clock.", "Tests need the fake clock, always.")
    result = merge_sheets(BASE, ours, theirs)
    assert result.changed
    assert result.conflicts == []
    merged = SheetDocument.parse(result.text)
    entry = merged.find("mrk001")
    assert entry is not None and copied(entry, source_line=0) == new
    markup = next(section for section in merged.sections if section.kind == "markup")
    assert [item.entry for item in markup.items if isinstance(item, EntryBlock)] == [entry]
    removed, inserted = line_diff(ours, result.text)
    assert removed == []
    assert [line for line in inserted if line.strip()] == [line_of(result.text, "mrk001")]


def test_a_section_missing_from_the_buffer_is_created_for_an_added_entry() -> None:
    ours = BASE.replace("## Clarifications\n\n", "")
    theirs = added(BASE, note("clr001", "Retry means idempotent retry.", "clarification"))
    result = merge_sheets(BASE, ours, theirs)
    merged = SheetDocument.parse(result.text)
    assert [section.kind for section in merged.sections].count("clarification") == 1
    assert merged.find("clr001") is not None
    assert merged.problems == []


def test_a_hand_written_line_added_on_disk_stays_as_written() -> None:
    theirs = BASE + "* typed in another editor\n  over two lines\n"
    result = merge_sheets(BASE, BASE, theirs)
    assert result.text == theirs
    assert result.conflicts == []


def test_status_and_text_changes_on_disk_apply_where_the_buffer_did_not_change_them() -> None:
    theirs = changed(BASE, "note01", status="discarded")
    theirs = changed(theirs, "note02", text="Tests need the fake clock and a seed.")
    ours = changed(BASE, "note01", text="The retry helper lives in payments/http.py.")
    result = merge_sheets(BASE, ours, theirs)
    assert result.conflicts == []
    merged = entries(result.text)
    assert merged["note01"].text == "The retry helper lives in payments/http.py."
    assert merged["note01"].status == "discarded"
    assert merged["note02"].text == "Tests need the fake clock and a seed."
    assert len(merged) == 3


def test_a_new_kind_on_disk_moves_the_entry_to_its_section() -> None:
    theirs = moved(BASE, "note02", "ruled-out")
    result = merge_sheets(BASE, BASE, theirs)
    merged = SheetDocument.parse(result.text)
    ruled_out = next(section for section in merged.sections if section.kind == "ruled-out")
    assert [item.entry.id for item in ruled_out.items if isinstance(item, EntryBlock)] == ["note02"]
    assert result.text == theirs


def test_a_conflict_keeps_both_versions_and_points_at_the_disk_version() -> None:
    ours = changed(BASE, "note01", text="Edited in the editor.")
    theirs = changed(BASE, "note01", text="Edited by the agent.", status="discarded")
    result = merge_sheets(BASE, ours, theirs)
    merged = SheetDocument.parse(result.text)
    assert merged.find("note01").text == "Edited in the editor."  # type: ignore[union-attr]
    [copy] = conflict_markers(merged)
    assert copy.extra == {"conflict-of": "note01"}
    assert (copy.text, copy.status, copy.kind) == ("Edited by the agent.", "discarded", "note")
    assert copy.id not in {"conv01", "note01", "note02"}
    [conflict] = result.conflicts
    assert conflict.entry_id == "note01"
    assert conflict.line == copy.source_line
    assert result.text.splitlines()[conflict.line - 1].startswith("- Edited by the agent.")
    # Right after the buffer's version.
    assert copy.source_line == merged.find("note01").source_line + 1  # type: ignore[union-attr]
    assert copy.id in conflict.message and "note01" in conflict.message
    # Merging again adds nothing; the conflict is still reported at the same copy.
    again = merge_sheets(BASE, result.text, theirs)
    assert again.text == result.text
    assert not again.changed
    assert [c.line for c in again.conflicts] == [conflict.line]


def test_the_same_change_on_both_sides_is_no_conflict() -> None:
    ours = changed(BASE, "note01", status="graduated-trajectory")
    theirs = changed(BASE, "note01", status="graduated-trajectory")
    result = merge_sheets(BASE, ours, theirs)
    assert result.text == ours
    assert result.conflicts == []


def test_the_same_id_added_on_both_sides() -> None:
    same = note("new001", "Both wrote this.")
    result = merge_sheets(BASE, added(BASE, same), added(BASE, same))
    assert not result.changed
    assert result.conflicts == []
    ours = added(BASE, same)
    theirs = added(BASE, note("new001", "Someone else wrote this."))
    result = merge_sheets(BASE, ours, theirs)
    merged = entries(result.text)
    assert merged["new001"].text == "Both wrote this."
    [copy] = conflict_markers(SheetDocument.parse(result.text))
    assert copy.text == "Someone else wrote this."
    assert [conflict.entry_id for conflict in result.conflicts] == ["new001"]


def test_deleted_in_the_buffer_stays_deleted_unless_the_disk_changed_it() -> None:
    ours = deleted(BASE, "note01")
    theirs = added(BASE, note("new001", "From the CLI."))
    result = merge_sheets(BASE, ours, theirs)
    assert "note01" not in entries(result.text)
    assert "new001" in entries(result.text)
    assert result.conflicts == []

    theirs = changed(BASE, "note01", status="graduated-skill")
    result = merge_sheets(BASE, ours, theirs)
    assert entries(result.text)["note01"].status == "graduated-skill"
    [conflict] = result.conflicts
    assert conflict.entry_id == "note01"
    assert "id=note01 " in result.text.splitlines()[conflict.line - 1]
    assert conflict_markers(SheetDocument.parse(result.text)) == []


def test_a_line_being_retyped_in_the_buffer_gets_the_disk_version_under_a_new_id() -> None:
    ours = BASE.replace(
        "status=open created=2026-11-30T12:00:00Z -->\n- Tests", "status=op\n- Tests"
    )
    assert "note01" not in {e.id for e in SheetDocument.parse(ours).entries()}
    theirs = changed(BASE, "note01", status="discarded")
    result = merge_sheets(BASE, ours, theirs)
    merged = SheetDocument.parse(result.text)
    assert merged.find("note01") is None
    [copy] = conflict_markers(merged)
    assert (copy.extra["conflict-of"], copy.status) == ("note01", "discarded")
    assert "status=op\n" in result.text
    assert merge_sheets(BASE, result.text, theirs).text == result.text


def test_deleted_on_disk_is_removed_unless_the_buffer_changed_it() -> None:
    theirs = deleted(deleted(BASE, "note01"), "note02")
    ours = changed(BASE, "note02", text="Changed in the editor.")
    result = merge_sheets(BASE, ours, theirs)
    merged = entries(result.text)
    assert "note01" not in merged
    assert merged["note02"].text == "Changed in the editor."
    assert result.conflicts == []


def test_an_empty_or_headless_disk_text_deletes_nothing() -> None:
    ours = changed(BASE, "note01", text="Changed in the editor.")
    assert merge_sheets(BASE, ours, "").text == ours
    headless = "\n".join(line for line in BASE.split("\n") if "stet-sheet" not in line)
    assert merge_sheets(BASE, ours, deleted(headless, "note02")).text == ours


def test_an_entry_damaged_on_disk_is_not_taken_as_deleted() -> None:
    theirs = BASE.replace("id=note01 author=agent", "id=note01 author=robot")
    assert SheetDocument.parse(theirs).problems
    result = merge_sheets(BASE, BASE, theirs)
    assert result.text == BASE


def test_malformed_lines_on_either_side_stay_and_do_not_stop_the_merge() -> None:
    broken = "- half an entry <!-- stet id=zzz999 created=yesterday -->\n"
    ours = BASE + broken
    theirs = added(BASE + "## Unknown section\n  stray indented line\n- x\n", note("n3", "New."))
    assert len(SheetDocument.parse(theirs).problems) == 2
    result = merge_sheets(BASE, ours, theirs)
    assert broken in result.text
    assert "stray indented line" not in result.text
    assert "n3" in {entry.id for entry in SheetDocument.parse(result.text).entries()}


def test_a_hand_written_entry_stored_by_the_cli_takes_its_id_and_time_without_conflict() -> None:
    base = BASE + "- typed by a person\n"
    [hand] = [e for e in SheetDocument.parse(base).entries() if e.author == "human"]

    def adopt(document: SheetDocument) -> None:
        document.adopt_hand_written(LATER)

    theirs = edited(base, adopt)
    result = merge_sheets(base, base, theirs)
    assert result.text == theirs
    assert result.conflicts == []
    # Both storing it at different times is no conflict either.
    ours = edited(base, lambda document: document.adopt_hand_written(MOMENT))
    result = merge_sheets(base, ours, theirs)
    assert (result.text, result.conflicts) == (ours, [])
    # Edited in the buffer meanwhile (a new provisional id): the old one does not come back.
    ours = base.replace("typed by a person", "typed by a person, then edited")
    result = merge_sheets(base, ours, theirs)
    assert result.text == ours
    assert hand.id not in entries(result.text)


def test_the_sheet_header_takes_values_changed_only_on_disk() -> None:
    def paused(document: SheetDocument) -> None:
        document.set_meta(copied(document.meta, paused=True, paused_until=LATER))

    theirs = edited(BASE, paused)
    ours = changed(BASE, "note01", status="discarded")
    result = merge_sheets(BASE, ours, theirs)
    meta = SheetDocument.parse(result.text).meta
    assert (meta.paused, meta.paused_until) == (True, LATER)
    assert entries(result.text)["note01"].status == "discarded"

    def resumed_target(document: SheetDocument) -> None:
        document.set_meta(copied(document.meta, paused=False, target_name="other"))

    result = merge_sheets(BASE, theirs, edited(BASE, resumed_target))
    meta = SheetDocument.parse(result.text).meta
    assert (meta.paused, meta.target_name) == (True, "other")
    # A header the disk lost changes nothing.
    headless = "\n".join(line for line in BASE.split("\n") if "stet-sheet" not in line)
    assert merge_sheets(BASE, theirs, headless).text == theirs


def test_four_cli_writers_and_an_editor_with_unsaved_edits_lose_nothing(root: Path) -> None:
    target = resolve_target(root)
    cli = StyleSheet(target)
    first = cli.add("Wrap errors with %w.", kind="convention", author="agent")
    second = cli.add("The retry helper lives in payments.http.", author="agent")
    third = cli.add("Tests need the fake clock.", kind="ruled-out", author="agent")
    base = cli.path.read_text()

    # The person's unsaved edits: a text changed, an entry discarded, a line typed by hand.
    ours = changed(base, first.id, text="Wrap errors with %w at package boundaries.")
    ours = changed(ours, third.id, status="discarded")
    ours += "- typed in the editor, not saved yet\n"

    def writer(number: int) -> None:
        agent = StyleSheet(target)
        for count in range(50):
            agent.add(f"writer {number} note {count}", kind=KINDS[count % 5], author="agent")

    threads = [threading.Thread(target=writer, args=(number,)) for number in range(4)]
    for thread in threads:
        thread.start()
    merges = 0
    while True:
        running = any(thread.is_alive() for thread in threads)
        disk = cli.path.read_text()
        if disk != base:
            result = merge_sheets(base, ours, disk)
            assert result.conflicts == []
            assert merge_sheets(disk, result.text, disk).text == result.text
            ours, base = result.text, disk
            merges += 1
        if not running:
            break
    for thread in threads:
        thread.join()
    assert merges >= 1

    cli.path.write_text(ours)  # the editor saves its buffer
    saved = cli.read()
    assert saved.problems == []
    texts = [entry.text for entry in saved.entries()]
    expected = {f"writer {w} note {n}" for w in range(4) for n in range(50)}
    assert sorted(text for text in texts if text.startswith("writer ")) == sorted(expected)
    assert texts.count("Wrap errors with %w at package boundaries.") == 1
    assert "Wrap errors with %w." not in texts
    assert texts.count("typed in the editor, not saved yet") == 1
    assert saved.find(second.id) is not None
    assert saved.find(third.id).status == "discarded"  # type: ignore[union-attr]
    assert len(texts) == 204


# -- property: random edits on both sides ---------------------------------------------------

WORDS = st.sampled_from(["alpha", "beta", "gamma", "delta beta", "tab\there", "x -->"])
operations = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.integers(0, 6), st.sampled_from(KINDS), WORDS),
        st.tuples(st.just("hand"), WORDS),
        st.tuples(st.just("adopt")),
        st.tuples(st.just("text"), st.integers(0, 20), WORDS),
        st.tuples(st.just("status"), st.integers(0, 20), st.sampled_from(STATUSES)),
        st.tuples(st.just("kind"), st.integers(0, 20), st.sampled_from(KINDS)),
        st.tuples(st.just("extra"), st.integers(0, 20), WORDS),
        st.tuples(st.just("delete"), st.integers(0, 20)),
    ),
    max_size=8,
)


def apply(text: str, side: str, steps: list[tuple[Any, ...]]) -> str:
    """`text` after the steps; lines typed by hand go at the end, in the Notes section."""
    typed: list[str] = []
    moment = MOMENT if side == "ours" else LATER
    for name, *args in steps:
        current = list(SheetDocument.parse(text).entries())
        if name == "add":
            number, kind, words = args
            if f"n{number}" not in {entry.id for entry in current}:
                text = added(text, note(f"n{number}", words, kind))
        elif name == "hand":
            # Typed twice, a line's provisional id would depend on its position.
            line = f"- typed {args[0]}\n"
            typed += [] if line in typed else [line]
        elif name == "adopt":  # a write stores the ids of hand-written entries, at its time
            text = edited(text, lambda document: document.adopt_hand_written(moment))
        elif current:
            entry = current[args[0] % len(current)]
            if name == "delete":
                text = deleted(text, entry.id)
            elif name == "kind":
                text = moved(text, entry.id, args[1])
            elif name == "extra":
                text = changed(text, entry.id, extra={**entry.extra, "tag": args[1]})
            else:
                text = changed(text, entry.id, **{name: args[1]})
    return text + "".join(typed)


def content(entry: Entry) -> dict[str, object]:
    return {
        "kind": entry.kind,
        "author": entry.author,
        "text": entry.text,
        "status": entry.status,
        "anchor": entry.anchor,
        **{f"extra {key}": value for key, value in entry.extra.items()},
    }


def changes(before: Entry | None, after: Entry) -> dict[str, object]:
    fields = content(after)
    old = content(before) if before else {}
    return {key: value for key, value in fields.items() if old.get(key) != value}


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.tuples(st.sampled_from(KINDS), WORDS), max_size=5),
    st.lists(WORDS, max_size=2, unique=True),
    operations,
    operations,
)
def test_random_edits_on_both_sides_lose_no_entry_and_no_change(
    start: list[tuple[Kind, str]],
    typed: list[str],
    ours_steps: list[tuple[Any, ...]],
    theirs_steps: list[tuple[Any, ...]],
) -> None:
    base = sheet(*(note(f"b{number}", text, kind) for number, (kind, text) in enumerate(start)))
    base += "".join(f"- {words}\n" for words in typed)
    ours = apply(base, "ours", ours_steps)
    theirs = apply(base, "theirs", theirs_steps)
    result = merge_sheets(base, ours, theirs)
    merged_document = SheetDocument.parse(result.text)
    assert merged_document.problems == []
    merged = {entry.id: entry for entry in merged_document.entries()}
    copies = conflict_markers(merged_document)
    was = {entry.id: entry for entry in SheetDocument.parse(base).entries()}
    mine = {entry.id: entry for entry in SheetDocument.parse(ours).entries()}
    other = {entry.id: entry for entry in SheetDocument.parse(theirs).entries()}

    for entry_id, entry in mine.items():
        if entry_id in was and entry_id not in other and not changes(was[entry_id], entry):
            assert entry_id not in merged  # deleted on disk
            continue
        assert entry_id in merged
        for key, value in changes(was.get(entry_id), entry).items():
            assert content(merged[entry_id]).get(key) == value
    for entry_id, entry in other.items():
        if entry_id in was and entry_id not in mine and not changes(was[entry_id], entry):
            continue  # deleted in the buffer
        wanted = changes(was.get(entry_id), entry)
        versions = [merged.get(entry_id)] + [
            copy for copy in copies if copy.extra["conflict-of"] == entry_id
        ]
        assert any(
            version is not None
            and all(content(version).get(key) == value for key, value in wanted.items())
            for version in versions
        ), (entry_id, wanted)
    assert merge_sheets(base, result.text, theirs).text == result.text
    assert result.changed == (result.text != ours)


def test_a_save_of_an_earlier_buffer_gives_back_what_reached_the_buffer_after_it() -> None:
    """The disk held a note; the editor wrote a text of its buffer without it, then took the
    note in: the note comes back, an entry the person deleted from the buffer does not, and
    a save that dropped nothing gives nothing back."""
    first, gone, other = note("aaaaaa", "first"), note("bbbbbb", "deleted"), note("cccccc", "N")
    before = sheet(first, gone, other)
    saved = sheet(first, note("dddddd", "typed"))
    buffer = added(saved, other, note("eeeeee", "typed since"))
    restored = dropped_by_the_save(before, saved, buffer)
    assert restored is not None
    assert sorted(entries(restored)) == ["aaaaaa", "cccccc", "dddddd"]
    assert dropped_by_the_save(before, added(saved, other), added(saved, other)) is None


def test_the_disk_holds_the_buffer_when_it_has_every_change_the_buffer_made() -> None:
    base = sheet(note("aaaaaa", "first"))
    buffer = added(base, note("dddddd", "typed"))
    assert holds_the_buffer(base, buffer, added(buffer, note("cccccc", "N")))
    assert not holds_the_buffer(base, buffer, added(base, note("cccccc", "N")))
    assert not holds_the_buffer(base, base, base)  # no unsaved edits: nothing to tell
