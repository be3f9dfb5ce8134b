"""Three-way merge of style-sheet texts by entry, for an editor buffer with unsaved edits
that another writer (the CLI, an agent, another editor) changed on disk meanwhile.

The rules are in docs/style-sheet.md, "When the editor and another writer change the sheet
at once". The buffer's bytes are kept wherever nothing from the disk applies.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from stet_lsp.core.model import Entry
from stet_lsp.core.sheet_format import (
    Block,
    EntryBlock,
    RawBlock,
    SheetDocument,
    end_with_newline,
    provisional_id,
)

CONFLICT_OF = "conflict-of"
"""Metadata key of a conflicting version kept from the disk: the id of the entry it shadows."""

_FIELDS = ("kind", "author", "text", "status", "anchor", "created")
_COMMENT = re.compile(r"<!--[ \t]*stet[ \t]")
_ID_FIELD = re.compile(r"\bid=\"?([A-Za-z0-9_-]{1,64})")


@dataclass(frozen=True)
class Conflict:
    entry_id: str
    line: int
    """1-based line in the merged text of the version kept from the disk."""
    message: str


@dataclass(frozen=True)
class MergeResult:
    text: str
    conflicts: list[Conflict]
    changed: bool
    """Whether `text` differs from the buffer."""


def merge_sheets(base: str, ours: str, theirs: str, *, deletions: bool = True) -> MergeResult:
    """Merge the changes from `base` to `theirs` (the disk) into `ours` (the buffer).
    `deletions` False: an entry `theirs` lacks stays in `ours` (`theirs` was made from a
    text that may never have held it)."""
    return _Merge(base, ours, theirs).run(deletions)


def dropped_by_the_save(before: str, saved: str, buffer: str) -> str | None:
    """The text saved, with the entries the disk held `before` the save that it lacks and the
    buffer holds (they reached the buffer after the editor wrote it); None when there are
    none. An entry the buffer lost too was deleted by the person, and stays so."""
    document = SheetDocument.parse(saved)
    kept = {entry.id for entry in document.entries()}
    held = {entry.id for entry in SheetDocument.parse(buffer).entries()}
    dropped = [
        entry
        for entry in SheetDocument.parse(before).entries()
        if entry.id in held and entry.id not in kept
    ]
    for entry in dropped:
        document.add(entry)
    return document.render() if dropped else None


def holds_the_buffer(base: str, buffer: str, disk: str) -> bool:
    """Whether the disk holds every change a buffer with unsaved edits made since `base`: the
    editor wrote the buffer there, over whatever the disk held that the buffer lacked."""
    return buffer != base and not merge_sheets(base, disk, buffer).changed


def conflict_markers(document: SheetDocument) -> list[Entry]:
    """The conflicting versions a merge kept, each waiting for a person to choose."""
    return [entry for entry in document.entries() if CONFLICT_OF in entry.extra]


def _content(entry: Entry) -> tuple[object, ...]:
    """What a change to an entry is: all but its id, position and creation time (which
    changes when a hand-written entry gets its id stored)."""
    return (entry.kind, entry.author, entry.text, entry.status, entry.anchor, entry.extra)


def _fields(entry: Entry) -> tuple[object, ...]:
    return (*_content(entry), entry.created)


def _merge_entry(base: Entry, ours: Entry, theirs: Entry) -> Entry | None:
    """`ours` with the fields only `theirs` changed; None when both changed one differently."""
    merged = ours.copy()
    merged.extra = {}
    for name in _FIELDS:
        was, mine, other = (getattr(entry, name) for entry in (base, ours, theirs))
        if mine == was:
            setattr(merged, name, other)
        # Both storing a hand-written entry's id sets its time twice: not a real conflict.
        elif other not in (was, mine) and name != "created":
            return None
    for key in dict.fromkeys([*ours.extra, *theirs.extra, *base.extra]):
        was_value, mine_value, other_value = (e.extra.get(key) for e in (base, ours, theirs))
        if mine_value == was_value:
            value = other_value
        elif other_value in (was_value, mine_value):
            value = mine_value
        else:
            return None
        if value is not None:
            merged.extra[key] = value
    return merged


def _blocks(document: SheetDocument) -> dict[str, EntryBlock]:
    return {
        item.entry.id: item
        for section in document.sections
        for item in section.items
        if isinstance(item, EntryBlock)
    }


def _mentioned_ids(document: SheetDocument) -> set[str]:
    """Ids named in lines whose metadata could not be read (a half-typed or damaged entry)."""
    texts = [
        item.text if isinstance(item, RawBlock) else item.raw or ""
        for section in document.sections
        for item in section.items
        if isinstance(item, RawBlock) or item.hand_written
    ]
    return {name for text in texts for line in text.split("\n") for name in _ids_after(line)}


def _ids_after(line: str) -> Iterator[str]:
    """The first `id=` after each `<!-- stet ` of the line (one regex scan of `.*?` to the
    line's end from each comment took a line a few kilobytes long seconds)."""
    position = 0
    while (comment := _COMMENT.search(line, position)) is not None:
        field = _ID_FIELD.search(line, comment.end())
        if field is None:
            return  # none after this comment: none after the later ones either
        yield field.group(1)
        position = field.end()


def _remove(document: SheetDocument, block: Block) -> None:
    for section in document.sections:
        for number, item in enumerate(section.items):
            if item is block:
                del section.items[number]
                return


def _insert_after(document: SheetDocument, block: Block, new: Block) -> None:
    for section in document.sections:
        for number, item in enumerate(section.items):
            if item is block:
                end_with_newline(item)
                section.items.insert(number + 1, new)
                return


def _added_block(document: SheetDocument, entry: Entry) -> EntryBlock:
    """Add `entry` where `SheetDocument.add` puts it and return its block."""
    document.add(entry)
    for section in document.sections:
        if section.kind == entry.kind:
            for item in reversed(section.items):
                if isinstance(item, EntryBlock) and item.entry is entry:
                    return item
    raise AssertionError("SheetDocument.add did not add the entry")


class _Merge:
    def __init__(self, base: str, ours: str, theirs: str) -> None:
        self.ours_text = ours
        self.base = SheetDocument.parse(base)
        self.theirs = SheetDocument.parse(theirs)
        self.result = SheetDocument.parse(ours)
        self.base_entries = {entry.id: entry for entry in self.base.entries()}
        self.ours_blocks = _blocks(self.result)
        self.unreadable_in_ours = _mentioned_ids(self.result)
        self.taken = {
            *self.base_entries,
            *self.ours_blocks,
            *_blocks(self.theirs),
            *self.unreadable_in_ours,
            *_mentioned_ids(self.theirs),
        }
        # (id of the entry, id of the version kept in the result, message)
        self.conflicts: list[tuple[str, str, str]] = []
        self.modified = False

    def run(self, deletions: bool = True) -> MergeResult:
        self._merge_meta()
        theirs_blocks = _blocks(self.theirs)
        for entry_id, block in theirs_blocks.items():
            theirs = block.entry
            mine = self.ours_blocks.get(entry_id)
            base = self.base_entries.get(entry_id)
            if mine is None:
                if base is None:
                    self._add(block, None)
                elif _content(theirs) != _content(base):
                    self._add(block, "deleted in the editor but changed on disk")
            elif base is None:
                if _content(mine.entry) != _content(theirs):
                    self._keep_both(mine, theirs, "added in the editor and on disk")
            elif _fields(theirs) != _fields(base):
                merged = _merge_entry(base, mine.entry, theirs)
                if merged is None:
                    self._keep_both(mine, theirs, "changed in the editor and on disk")
                elif _fields(merged) != _fields(mine.entry):
                    self._replace(mine, merged)
        if not deletions or not self.theirs.meta.target_name:
            return self._result()  # an empty or truncated file on disk deletes nothing
        kept_on_disk = theirs_blocks.keys() | _mentioned_ids(self.theirs)
        for entry_id, base in self.base_entries.items():
            mine = self.ours_blocks.get(entry_id)
            if (
                entry_id not in kept_on_disk
                and mine is not None
                and _content(mine.entry) == _content(base)
            ):
                _remove(self.result, mine)
                self.modified = True
        return self._result()

    def _merge_meta(self) -> None:
        base, ours, theirs = self.base.meta, self.result.meta, self.theirs.meta
        if not theirs.target_name or theirs == base:
            return  # nothing changed on disk, or a header that cannot be read there
        merged = ours.copy()
        for name in ("target_kind", "target_name", "paused", "paused_until", "extra"):
            if getattr(ours, name) == getattr(base, name):
                setattr(merged, name, getattr(theirs, name))
        if merged != ours:
            self.result.set_meta(merged)
            self.modified = True

    def _add(self, block: EntryBlock, conflict: str | None) -> None:
        """Add the disk's entry to the buffer; under a new id if the buffer has an unreadable
        line naming its id (the person may be fixing it)."""
        entry = block.entry
        if entry.id in self.unreadable_in_ours:
            self._keep_both(None, entry, "changed on disk while the editor has it unreadable")
            return
        added = _added_block(self.result, entry.copy())
        if block.hand_written and block.raw is not None:
            added.raw = block.raw if block.raw.endswith("\n") else block.raw + "\n"
            added.hand_written = True
        self.modified = True
        if conflict:
            self.conflicts.append((entry.id, entry.id, conflict))

    def _keep_both(self, mine: EntryBlock | None, theirs: Entry, why: str) -> None:
        for entry in conflict_markers(self.result):
            copy = entry.copy()
            if copy.extra.pop(CONFLICT_OF) == theirs.id and _content(copy) == _content(theirs):
                self.conflicts.append((theirs.id, entry.id, why))
                return  # kept by an earlier merge
        self._add_copy(theirs, mine, why)

    def _add_copy(self, theirs: Entry, mine: EntryBlock | None, why: str) -> None:
        number = 0
        while (new_id := provisional_id(theirs.kind, f"{theirs.id}\0{theirs.text}", number)) in (
            self.taken
        ):
            number += 1
        self.taken.add(new_id)
        copy = theirs.copy()
        copy.id = new_id
        copy.extra[CONFLICT_OF] = theirs.id
        if mine is not None and mine.entry.kind == copy.kind:
            _insert_after(self.result, mine, EntryBlock(copy, None))
        else:
            self.result.add(copy)
        self.modified = True
        self.conflicts.append((theirs.id, new_id, why))

    def _replace(self, block: EntryBlock, merged: Entry) -> None:
        if merged.kind != block.entry.kind:
            _remove(self.result, block)
            self.ours_blocks[merged.id] = _added_block(self.result, merged)
        else:
            block.entry = merged
            block.raw = None
            block.hand_written = False
        self.modified = True

    def _result(self) -> MergeResult:
        text = self.result.render() if self.modified else self.ours_text
        merged = SheetDocument.parse(text) if self.conflicts else None
        conflicts = []
        for entry_id, kept_id, why in self.conflicts:
            kept = merged.find(kept_id) if merged else None
            message = f"entry {entry_id} was {why}: "
            if kept_id == entry_id:
                message += "the disk's version is back"
            else:
                message += f"the disk's version is kept as {kept_id}; keep one, discard the other"
            conflicts.append(Conflict(entry_id, kept.source_line if kept else 1, message))
        return MergeResult(text, conflicts, text != self.ours_text)
