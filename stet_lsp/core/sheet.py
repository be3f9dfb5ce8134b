"""One target's style sheet on disk: safe concurrent writes and the operations on entries."""

from __future__ import annotations

import os
import re
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from functools import partial

from stet_lsp.core.anchors import check_anchor_path, place
from stet_lsp.core.brief import DEFAULT_BUDGET, Brief, render_brief
from stet_lsp.core.errors import StetError, TrackedSheetError
from stet_lsp.core.lines import undecodable_at
from stet_lsp.core.locking import file_lock
from stet_lsp.core.model import (
    AUTHORS,
    KINDS,
    STATUSES,
    Anchor,
    Entry,
    choice,
    format_time,
    utc_now,
)
from stet_lsp.core.records import FrozenRecord
from stet_lsp.core.safefs import (
    ChangedMeanwhile,
    atomic_write,
    ensure_stet_gitignore,
    read_regular,
)
from stet_lsp.core.sheet_format import (
    SHEET_LIMIT,
    SheetDocument,
    SheetMeta,
    header_of,
    insert_entry,
    new_document,
    normalize_text,
    written_name,
)
from stet_lsp.core.targets import Target

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
"""What a text decoded with surrogateescape holds for a byte that is not UTF-8."""
TYPE_CHECKING = False  # as typing's, without importing typing (start-up of the command line)
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Final, Literal, TypeVar

    from stet_lsp.core.model import Author, Kind, Status

    Via = Literal["direct", "margin"]
    _Choice = TypeVar("_Choice", bound=str)

SAVE_SETTLE_SECONDS = 2.0
"""How long a sheet that does not end with a newline is taken to be in the middle of a save
(see `StyleSheet.settled_text`) by a write, which would write what it read back."""
READ_SETTLE_SECONDS = 0.3
"""The same for the language server's read of the sheet on disk, which a sheet saved without
a final newline would otherwise hold up after every save: an editor's save ends within
milliseconds, and one caught all the same costs a conflict shown, no entry."""


class UndecodableSheet(StetError):
    """The sheet's bytes are not UTF-8 (or a save is caught inside a character)."""


# 32 characters: each random byte picks one of them with the same chance.
_ID_ALPHABET = "abcdefghijklmnopqrstuvwxyz234567"
_ID_LENGTH = 6
ENTRY_TEXT_LIMIT = 20_000
"""The most characters an entry's text may have when a command writes it: working memory,
a brief's line, not a file's content (a sheet edited by hand is read whatever it holds)."""
_WRITE_ATTEMPTS = 5
"""How often a write is merged with a save that landed meanwhile before it gives up."""


class NewEntry(FrozenRecord):
    """An entry to add (`StyleSheet.add_all`): its text and how it came."""

    __slots__ = ("anchor", "author", "kind", "text", "via")
    text: Final[str]
    kind: Final[Kind]
    author: Final[Author]
    anchor: Final[Anchor | None]
    via: Final[Via]

    def __init__(
        self,
        text: str,
        *,
        kind: Kind = "note",
        author: Author = "human",
        anchor: Anchor | None = None,
        via: Via = "direct",
    ) -> None:
        self.text = text
        self.kind = kind
        self.author = author
        self.anchor = anchor
        self.via = via


class EntryFilter(FrozenRecord):
    """Which entries to keep; `file`: a repository-relative path, for entries anchored in it."""

    __slots__ = ("author", "file", "kind", "status")
    kind: Final[Kind | None]
    author: Final[Author | None]
    status: Final[Status | None]
    file: Final[str | None]

    def __init__(
        self,
        kind: Kind | None = None,
        author: Author | None = None,
        status: Status | None = None,
        file: str | None = None,
    ) -> None:
        self.kind = kind
        self.author = author
        self.status = status
        self.file = file

    def __call__(self, entry: Entry) -> bool:
        return (
            (self.kind is None or entry.kind == self.kind)
            and (self.author is None or entry.author == self.author)
            and (self.status is None or entry.status == self.status)
            and (self.file is None or (entry.anchor is not None and entry.anchor.path == self.file))
        )


def check_kind(value: str) -> Kind:
    return _checked(value, KINDS, "kind")


def check_author(value: str) -> Author:
    return _checked(value, AUTHORS, "author")


def check_status(value: str) -> Status:
    return _checked(value, STATUSES, "status")


def _checked(value: str, allowed: tuple[_Choice, ...], what: str) -> _Choice:
    try:
        return choice(value, allowed, what)
    except ValueError as error:
        raise StetError(str(error)) from None


class StyleSheet:
    """The style sheet of one target. Every write holds the sheet's lock for a whole
    read-modify-write and replaces the file atomically, so concurrent writers (CLI, server,
    agents) never lose an entry and a crash never leaves a torn file."""

    def __init__(self, target: Target, buffer: str | None = None) -> None:
        """`buffer`: work on this text (an editor's unsaved copy of the sheet) instead of the
        file; writes then replace `self.buffer` and leave the file alone."""
        self.target = target
        self.path = target.sheet_path
        self.buffer = buffer

    # -- reading -----------------------------------------------------------------------

    def read(self) -> SheetDocument:
        """The sheet as it is on disk now (an empty one if it does not exist yet)."""
        return self.parse(self.read_text())

    def read_text(self) -> str:
        """The sheet's text (the buffer's, or the file's; "" when there is no file)."""
        if self.buffer is not None:
            return self.buffer
        return self._read_file(self.path)

    def _read_file(self, path: Path) -> str:
        data = read_regular(path, self.target.root, limit=SHEET_LIMIT + 1)
        if data is None:
            return ""
        if len(data) > SHEET_LIMIT:
            raise StetError(
                f"{path} is larger than {SHEET_LIMIT // 2**20} MiB, not read: a style sheet "
                "is working memory; move it away or shorten it, nothing was changed"
            )
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as error:
            raise UndecodableSheet(
                f"{path} is not UTF-8 ({undecodable_at(data, error)}); "
                "fix or move it, nothing was changed"
            ) from None
        if text.count("\0") * 3 >= len(text) > 0:
            # UTF-32, or UTF-16 of ASCII text, with no byte order mark decodes as UTF-8 with a
            # NUL beside each character: read so, it held no entries, and a write put a new
            # sheet in front of the old text. A NUL here and there is the sheet's text.
            raise StetError(
                f"{path} is mostly NUL bytes (UTF-16 or UTF-32?); "
                "save it as UTF-8, nothing was changed"
            )
        if "\r" in text and "\n" not in text:
            # Read as one line, its entries would be none, and a write would add a second
            # sheet after them.
            raise StetError(
                f"{path} ends its lines with a carriage return alone (classic Mac OS); "
                "make them line feeds (or CR LF), nothing was changed"
            )
        return text

    def parse(self, text: str) -> SheetDocument:
        """`text` as this target's sheet (a new one when empty); refused if another's."""
        if not text:
            return self._new_document()
        document = SheetDocument.parse(text)
        self._check_owner(document)
        return document

    def entries(self, where: EntryFilter | None = None) -> list[Entry]:
        return [entry for entry in self.read().entries() if where is None or where(entry)]

    def get(self, entry_id: str) -> Entry:
        return find_entry(self.read(), entry_id, self.target.label)

    def current_lines(
        self, entries: list[Entry], texts: dict[str, str] | None = None
    ) -> dict[str, int | None]:
        """Where each anchored entry's line is now (None: anchor lost), by entry id."""
        return {p.entry.id: p.line for p in place(self.target.root, entries, texts)}

    def brief(self, budget: int = DEFAULT_BUDGET, texts: dict[str, str] | None = None) -> Brief:
        entries = self.entries()
        return render_brief(self.target.label, entries, budget, self.current_lines(entries, texts))

    def pause_state(self) -> tuple[bool, datetime | None]:
        meta = self.read().meta
        return _is_paused(meta), meta.paused_until if _is_paused(meta) else None

    def tracked_path(self) -> str | None:
        """The sheet's repository path when git's index holds it (a clone that commits its
        `.stet/cache/`, or a sheet staged by hand), else None."""
        from stet_lsp.core.gitindex import index_holds  # reads the index file only if need be

        relative = self.path.relative_to(self.target.root).as_posix()
        return relative if index_holds(self.target.root, relative) else None

    def refuse_tracked(self) -> None:
        """Refuse to write a sheet git's index holds: it came with the repository (or was
        staged), is not this clone's working memory, and what is written to it would be
        committed. Every write checks this before it takes the lock or writes anything, into
        an editor's buffer of the sheet too."""
        relative = self.tracked_path()
        if relative is not None:
            raise TrackedSheetError(tracked_write_message(self.target.label, relative))

    # -- writing -----------------------------------------------------------------------

    def add(
        self,
        text: str,
        *,
        kind: Kind = "note",
        author: Author = "human",
        anchor: Anchor | None = None,
        via: Via = "direct",
    ) -> Entry:
        return self.add_all([NewEntry(text, kind=kind, author=author, anchor=anchor, via=via)])[0]

    def add_all(self, new: list[NewEntry]) -> list[Entry]:
        """Add every entry of `new`, in one write: all of them or, on an error, none."""
        bodies = [_entry_text(item.text, "an entry needs some text") for item in new]
        for item in new:
            if item.anchor is not None:
                check_anchor_path(item.anchor.path)
        self.refuse_tracked()
        with self._locked():
            current = self.settled_text()
            header = header_of(current) if current else self._new_document()
            self._check_owner(header)
            watched = any(item.author == "agent" or item.via == "margin" for item in new)
            if watched and _is_paused(header.meta):
                raise StetError(self._paused_message(header.meta))
            updated = current
            entries = []
            for item, body in zip(new, bodies, strict=True):
                entry = Entry(
                    id=_new_id(updated),
                    kind=item.kind,
                    author=item.author,
                    text=body,
                    created=utc_now(),
                    anchor=item.anchor,
                )
                inserted = insert_entry(updated, entry) if updated and not header.dirty else None
                if inserted is None:
                    document = self.parse(updated)
                    document.add(entry)
                    document.adopt_hand_written(entry.created)
                    inserted = document.render()
                    header = header_of(inserted)
                updated = inserted
                entries.append(entry)
            self._write(updated, current)
        return entries

    def edit_text(self, entry_id: str, text: str) -> Entry:
        body = _entry_text(text, "an entry needs some text; to remove one, discard it")
        with self.edit() as document:
            entry = find_entry(document, entry_id, self.target.label)
            entry.text = body
            document.touch(entry_id)
        return entry

    def set_status(self, entry_id: str, status: Status) -> Entry:
        with self.edit() as document:
            entry = find_entry(document, entry_id, self.target.label)
            entry.status = status
            document.touch(entry_id)
        return entry

    def reanchor(self, texts: dict[str, str] | None = None) -> list[Entry]:
        """Store the current line of every open anchored entry whose code moved."""
        moved = []
        with self.edit() as document:
            open_entries = [entry for entry in document.entries() if entry.status == "open"]
            for placement in place(self.target.root, open_entries, texts):
                anchor = placement.entry.anchor
                if placement.line is not None and anchor and placement.line != anchor.line:
                    placement.entry.anchor = Anchor(anchor.path, placement.line, anchor.text)
                    document.touch(placement.entry.id)
                    moved.append(placement.entry)
        return moved

    def pause(self, until: datetime | None = None) -> None:
        if until is not None and until <= utc_now():
            raise StetError(f"{format_time(until)} is in the past")
        with self.edit() as document:
            meta = document.meta.copy()
            meta.paused, meta.paused_until = True, until
            document.set_meta(meta)

    def resume(self) -> bool:
        """End a pause; whether one was in effect (a pause whose time is up was not, though
        its header is cleared). Nothing is written, nor locked, when the header holds no
        pause."""
        self.refuse_tracked()
        meta = self.read().meta
        if not meta.paused and meta.paused_until is None:
            return False
        with self._locked():
            current = self.settled_text()
            document = self.parse(current)
            meta = document.meta.copy()
            if not meta.paused and meta.paused_until is None:
                return False
            was_paused = _is_paused(meta)
            meta.paused, meta.paused_until = False, None
            document.set_meta(meta)
            document.adopt_hand_written(utc_now())
            self._write(document.render(), current)
        return was_paused

    def merge_in(self, base: str, theirs: str, *, deletions: bool = True) -> bool:
        """Bring the changes from `base` to `theirs` (a text the sheet held, which an editor's
        save wrote over) into the sheet, entry by entry; whether anything was written. A
        sheet git's index holds is merged all the same: what comes back is what was on disk
        (a pull, a person's other editor), not a write of Stet's own. `deletions` False: an
        entry `theirs` lacks is no deletion (see `merge_sheets`)."""
        from stet_lsp.core.merge import merge_sheets  # not loaded by a short command

        with self._locked():
            current = self.settled_text()
            merged = merge_sheets(base, current, theirs, deletions=deletions)
            if merged.changed:
                self._write(merged.text, current)
        return merged.changed

    @contextmanager
    def edit(self) -> Iterator[SheetDocument]:
        """Read, let the caller change, and write back atomically, all under the lock."""
        self.refuse_tracked()
        with self._locked():
            current = self.settled_text()
            document = self.parse(current)
            yield document
            document.adopt_hand_written(utc_now())
            self._write(document.render(), current)

    def settled_text(self, still: float = SAVE_SETTLE_SECONDS) -> str:
        """The text a write starts from, and the one the server merges into an open buffer
        as the disk's. An editor that saves in place truncates the file, then writes it: read
        in between, a part of the sheet (or nothing) would be taken for the whole, and written
        back (losing the rest) or made the base of the next merge (the buffer's edits then
        conflict with the disk's entries). Stet's sheets and nearly every saved file end with
        a newline; a file that does not (or is cut inside a character), changed in the last
        `still` seconds, is read again until it does or has been still that long (by this
        process's clock: a time in the future, from another machine's or a clock set back,
        is waited for no longer). A save cut at a line's end is not told from a whole file."""
        text: str | None = None
        still_since = time.monotonic()
        while True:
            previous, undecodable = text, None
            try:
                text = self.read_text()
            except UndecodableSheet as error:
                text, undecodable = None, error
            settled = self.buffer is not None or not self._changed_lately(still)
            if not settled and text is not None and text.endswith("\n"):
                settled = True
            elif not settled and text == previous:
                settled = time.monotonic() - still_since >= still
            elif not settled:
                still_since = time.monotonic()
            if settled:
                if undecodable is not None:
                    raise undecodable
                assert text is not None
                return text
            time.sleep(0.02)

    def _changed_lately(self, still: float) -> bool:
        try:
            return time.time() - os.stat(self.path).st_mtime < still
        except OSError:  # no file: nothing is being saved
            return False

    @contextmanager
    def _locked(self) -> Iterator[None]:
        if self.buffer is not None:  # an editor's text: nothing on disk to guard
            yield
            return
        ensure_stet_gitignore(self.target.root)
        with file_lock(self.path, self.target.root, "the style sheet"):
            yield

    def _write(self, text: str, read: str) -> None:
        """Write `text`, made from `read` (the text the write started from). An editor takes
        no lock: a person's save that lands meanwhile is merged into `text` entry by entry,
        as the disk's changes are into an editor's buffer, rather than written over."""
        if self.buffer is not None:
            self.buffer = text
            return
        try:
            mode = os.lstat(self.path).st_mode
        except OSError:
            mode = stat.S_IWUSR  # no sheet yet: a new one is made
        if not mode & stat.S_IWUSR:
            raise StetError(
                f"{self.path} is read-only: nothing was changed (make it writable, "
                "chmod u+w, for Stet to write it)"
            )
        for _ in range(_WRITE_ATTEMPTS):
            # A style sheet is private working memory: a new one is readable by its owner only.
            data = _LONE_SURROGATE.sub("\ufffd", text).encode("utf-8")  # undecodable bytes
            try:
                atomic_write(self.path, data, self.target.root, 0o600, partial(self._holds, read))
                return
            except ChangedMeanwhile:
                from stet_lsp.core.merge import merge_sheets

                current = self.settled_text()
                merged = merge_sheets(read, text, current, deletions=False)
                text, read = merged.text, current
        raise StetError(
            f"{self.path} kept changing while Stet wrote it; nothing was changed, try again"
        )

    def _holds(self, text: str, path: Path) -> bool:
        """Whether the sheet's file (at `path`, a name it may have been moved to) holds `text`."""
        return self._read_file(path) == text

    # -- helpers -----------------------------------------------------------------------

    def _new_document(self) -> SheetDocument:
        return new_document(self.target.kind, self.target.name, self.target.label)

    def _check_owner(self, document: SheetDocument) -> None:
        meta = document.meta
        if meta.target_name and (meta.target_kind, written_name(meta.target_name)) != (
            self.target.kind,
            written_name(self.target.name),
        ):
            raise StetError(
                f"{self.path} belongs to target {meta.target_name!r}, not {self.target.name!r}; "
                "nothing was changed"
            )
        if not meta.target_name:
            owned = meta.copy()
            owned.target_kind, owned.target_name = self.target.kind, self.target.name
            document.set_meta(owned)

    def _paused_message(self, meta: SheetMeta) -> str:
        until = f" until {format_time(meta.paused_until)}" if meta.paused_until else ""
        return (
            f"the style sheet of {self.target.label} is paused{until}: new agent and margin "
            "notes are not recorded (nothing was removed; `stet resume` resumes)"
        )


def _is_paused(meta: SheetMeta) -> bool:
    return meta.paused and (meta.paused_until is None or meta.paused_until > utc_now())


def find_entry(document: SheetDocument, entry_id: str, label: str) -> Entry:
    """The entry `entry_id` of the style sheet of the target `label`, refused with where to
    find the ids when it holds none."""
    entry = document.find(entry_id)
    if entry is None:
        raise StetError(missing_entry(entry_id, label))
    return entry


def tracked_write_message(label: str, relative: str) -> str:
    return (
        f"the style sheet of {label} is not written: git's index holds {relative}, so it came "
        "with the repository (or was staged) and is not this clone's own working memory, and "
        "what is written to it would be committed. To keep its entries, untrack it: git rm "
        f"--cached {relative}, and commit that (the file and its entries stay on disk, and "
        "Stet writes it from then on); to drop them, delete the file too. Nothing was changed"
    )


def missing_entry(entry_id: str, label: str) -> str:
    return (
        f"no entry with id {entry_id!r} in the style sheet of {label} (`stet note list` "
        "shows its entries and their ids; each branch has a sheet of its own)"
    )


def _new_id(sheet_text: str) -> str:
    """A random id that appears nowhere in the sheet yet."""
    while True:
        candidate = "".join([_ID_ALPHABET[byte % 32] for byte in os.urandom(_ID_LENGTH)])
        if candidate not in sheet_text:
            return candidate


def _entry_text(text: str, empty: str) -> str:
    """`text` as an entry's text, refused with `empty` when it has none, or when it is longer
    than ENTRY_TEXT_LIMIT."""
    body = normalize_text(text)
    if not body:
        raise StetError(empty)
    if "\0" in body:  # as the servers refuse it: no text of Stet's holds one
        raise StetError("the text holds a NUL character; nothing was changed")
    if len(body) > ENTRY_TEXT_LIMIT:
        raise StetError(
            f"the text has {len(body):,} characters; an entry takes {ENTRY_TEXT_LIMIT:,} at most "
            "(working memory: a finding, a decision, a pointer to a file; nothing was changed)"
        )
    return body
