"""What Stet keeps of each open document: its lines (kept in step with the client's edits in
proportion to their size), its comments and margin notes, its repository, and whether the
editor holds unsaved edits.

A long text's comments (over `LEX_ON_LOOP` lines) are lexed a step at a time between the
loop's other work: until then the document has an index with no comments and no margin
notes, and records its edits, which are spliced into the lexed index when it is done
(`PendingComments`)."""

from __future__ import annotations

import asyncio
import itertools
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.uris import to_fs_path

from stet_lsp.core.comments import SYNTAXES, CommentIndex, Syntax, language_of
from stet_lsp.core.lines import split_breaks, split_lines
from stet_lsp.core.margin import MarginNote, find_notes
from stet_lsp.core.session import RepositorySession
from stet_lsp.core.targets import SHEETS_DIR, is_stet_file
from stet_lsp.server.positions import server_position

LEX_ON_LOOP = 5000
"""The most lines whose comments are lexed at once, as the document opens (about 7 µs a
line); a longer text's are lexed `LEX_STEP` lines at a time."""
LEX_STEP = 2000
"""Lines lexed between two turns of the loop (about 15 ms)."""
_revisions = itertools.count(1)


@dataclass
class PendingComments:
    """A text whose comments are being lexed: the edits made to it since (each
    (first line, lines removed, lines added)). A new one each time the whole text is
    replaced: a lex of an older text is not taken."""

    edits: list[tuple[int, int, int]] = field(default_factory=list)


@dataclass
class DocumentState:
    uri: str
    path: Path | None
    language_id: str | None
    lines: list[str]
    comments: CommentIndex
    disk_lines: list[str]
    """The lines of the text the editor takes to be on disk: as opened or saved, or as
    written from outside while the buffer had no unsaved edits (the editor then reloads it).
    A list of its own whose strings `lines` shares until they are edited: no second copy of
    a large document's text."""
    version: int | None = None
    """The client's version of the text, for versioned edits and published diagnostics."""
    revision: int = field(default_factory=lambda: next(_revisions))
    """Which text this is, new with each change the server applies (and each document
    opened): what a view computed from the text is kept for. Not the client's version,
    which a client may send twice."""
    session: RepositorySession | None = None
    relative: str | None = None
    """The path inside the repository (POSIX), once the repository is known."""
    notes: list[MarginNote] = field(default_factory=list)
    base_known: bool = False
    """Whether `disk_text` is known to have been on disk (read back, saved, or reloaded); a
    buffer opened with unsaved edits (after a restart) has a `disk_text` that never was."""
    modified: bool = False
    """Whether the editor holds unsaved edits, from its own notifications: an edit makes the
    buffer modified unless it leaves exactly `disk_text`; a save clears it. A sheet opened
    with a text that is not on disk (unsaved edits the editor restored) is modified too, once
    the server has read the disk and found another text there
    (`StetServer._compare_with_disk`, `sheet_sync.merge_from_disk`)."""
    base_lost: bool = False
    """The sheet was read missing or empty (or blank) since `disk_text` was (a save caught
    half way, or one removed): the next merge into the buffer, or back into the disk at a
    save, starts from `disk_text` but takes no entry as deleted on disk
    (`sheet_sync.merge_from_disk`, `sheet_sync.saved_sheet`)."""
    saves: int = 0
    """How often the editor saved the document (a merge running across a save keeps the
    saved text as what is on disk)."""
    expected_reload: str | None = None
    """A sheet written on disk while the buffer had no unsaved edits: the editor reloads it.
    An edit that leaves this text is that reload; any other edit came first, and what was
    written on disk is then merged into it. With unsaved edits: what was written on disk
    and not merged into them yet (the editor cannot apply edits, or refused them), merged
    at the next edit, or back into the disk when the buffer is saved or closed."""
    ready: asyncio.Future[None] | None = None
    """Done once the document's repository is known (finding it reads the disk) and its
    comments are lexed."""
    pending: PendingComments | None = None
    """Set while the comments are being lexed (`comments` holds none meanwhile)."""
    lexing: asyncio.Task[None] | None = None
    """The task lexing a long text's comments, once one started."""
    breaks: list[str] | None = None
    """The break that ends each line ("" after the last), once the text held a `\\r`: an
    edit can join a lone `\\r` and a `\\n` into one break (None: every break is `\\n`)."""
    line_edits: list[tuple[int, int, int]] = field(default_factory=list)
    """The edits since a feature last caught up with them, each as (first line, lines
    replaced, lines written): a large text's views move with them while they are computed
    again in a worker. The feature that reads them clears them."""

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    @property
    def disk_text(self) -> str:
        return "\n".join(self.disk_lines)

    @disk_text.setter
    def disk_text(self, text: str) -> None:
        self.disk_lines = split_lines(text)

    @property
    def is_sheet(self) -> bool:
        return self.relative is not None and self.relative.startswith(SHEETS_DIR.as_posix() + "/")

    def attach(self, session: RepositorySession | None) -> None:
        """Place the document in its repository (None: it is in none)."""
        self.session, self.relative = None, None
        if session is None or self.path is None:
            return
        try:
            self.relative = self.path.relative_to(session.root).as_posix()
        except ValueError:
            return
        self.session = session

    def rescan_notes(self, marker: str) -> None:
        """Margin notes belong in code: Stet's own files (the sheet, trajectories) have none."""
        if self.relative is not None:
            own = is_stet_file(self.relative)
        else:  # not placed in its repository yet: judged by its path, as its comments are
            own = self.path is not None and ".stet" in self.path.parts
        unknown = self.pending is not None  # found once the comments are lexed
        self.notes = [] if own or unknown else find_notes(self.lines, self.comments, marker)

    def lexed(self, pending: PendingComments, index: CommentIndex) -> bool:
        """Takes the comments lexed from the text `pending` was made for,
        bringing them up to the edits made since; False when the whole text was replaced
        meanwhile (the index is of no current text), or an edit since changed how more
        than LEX_STEP lines lex (the text is then to be lexed again a step at a time)."""
        if self.pending is not pending:
            return False
        if index.catch_up(self.lines, pending.edits, limit=LEX_STEP) is None:
            # An edit meanwhile changed how the rest lexes (a string closed): lexed again.
            self.pending = PendingComments()
            return False
        self.comments, self.pending = index, None
        return True

    def apply(self, change: types.TextDocumentContentChangeEvent, codec: Any) -> None:
        self.revision = next(_revisions)
        if isinstance(change, types.TextDocumentContentChangePartial):
            lines = self.lines
            start_line, start = server_position(codec, lines, change.range.start)
            end_line, end = server_position(codec, lines, change.range.end)
            if (end_line, end) < (start_line, start):
                start_line, start, end_line, end = end_line, end, start_line, start
            text = lines[start_line][:start] + change.text + lines[end_line][end:]
            if self.breaks is None and "\r" not in change.text:
                added = text.split("\n")
                lines[start_line : end_line + 1] = added
                edit = (start_line, end_line - start_line + 1, len(added))
            else:
                edit = self._splice_breaks(start_line, end_line, text)
            self.line_edits.append(edit)
            if self.pending is not None:
                self.comments.splice(*edit)
                self.pending.edits.append(edit)
            elif self.comments.update(lines, *edit, limit=LEX_STEP) is None:
                # It changed how the rest of a long text lexes (a string opened above it):
                # lexed again a step at a time, as a text replaced whole is.
                self.comments, self.pending = _comments(lines, self.comments.syntax, lex=True)
        else:
            replaced = len(self.lines)
            self.lines, self.breaks = split_breaks(change.text)
            self.line_edits.append((0, replaced, len(self.lines)))
            self.comments, self.pending = _comments(self.lines, self.comments.syntax, lex=True)

    def _splice_breaks(self, start_line: int, end_line: int, text: str) -> tuple[int, int, int]:
        """Writes `text` over lines `start_line` to `end_line` where a break may be a `\\r`,
        and returns the edit as (first line, lines replaced, lines written). A lone `\\r`
        that the edit brought next to a `\\n` (either before or after the text) makes one
        break with it, and the empty line the two seemed to hold is not a line."""
        lines = self.lines
        if self.breaks is None:
            self.breaks = ["\n"] * (len(lines) - 1) + [""]
        breaks = self.breaks
        added, added_breaks = split_breaks(text)
        if added_breaks is None:
            added_breaks = ["\n"] * (len(added) - 1) + [""]
        added_breaks[-1] = breaks[end_line]
        lines[start_line : end_line + 1] = added
        breaks[start_line : end_line + 1] = added_breaks
        first, replaced, written = start_line, end_line - start_line + 1, len(added)
        for joint in sorted({start_line + written - 2, start_line - 1}, reverse=True):
            if joint < 0 or breaks[joint] != "\r" or breaks[joint + 1] != "\n":
                continue
            if lines[joint + 1] == "":
                breaks[joint] = "\r\n"
                del lines[joint + 1], breaks[joint + 1]
                written -= 1
                if joint < first:  # the line above is in the edit: its break changed
                    first, replaced, written = joint, replaced + 1, written + 1
        return first, replaced, written


def new_document(
    uri: str, text: str, language_id: str | None, version: int | None
) -> DocumentState:
    path = local_path(uri)
    lines, breaks = split_breaks(text)
    language = language_of(path.name if path else uri, language_id)
    own = path is not None and ".stet" in path.parts  # Stet's files hold no margin notes
    comments, pending = _comments(lines, SYNTAXES[language], lex=not own)
    return DocumentState(
        uri,
        path,
        language_id,
        lines,
        comments,
        list(lines),
        version=version,
        pending=pending,
        breaks=breaks,
    )


def _comments(
    lines: list[str], syntax: Syntax, *, lex: bool
) -> tuple[CommentIndex, PendingComments | None]:
    """The comments of a new text: lexed now, or (a long text) none until lexed a step at a time."""
    if lex and len(lines) > LEX_ON_LOOP:
        return CommentIndex(lines, syntax, lex=False), PendingComments()
    return CommentIndex(lines, syntax, lex=lex), None


def local_path(uri: str) -> Path | None:
    """The absolute path of a `file:` URI; None for any other URI, or one naming no path this
    system can have (relative, a NUL, a lone surrogate, a name too long)."""
    if not uri.startswith("file:"):
        return None
    path = to_fs_path(uri)
    if not path or "\0" in path or not os.path.isabs(path):
        return None
    try:
        os.fsencode(path)
        return Path(path).resolve()
    except (OSError, UnicodeError, ValueError):
        return None
