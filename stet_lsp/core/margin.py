"""Margin notes: comments carrying the marker (`stet:` or `stet(<kind>):`) in any language."""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import accumulate

from stet_lsp.core.comments import Comment, CommentIndex
from stet_lsp.core.errors import StetError
from stet_lsp.core.model import KINDS, Kind

DEFAULT_MARKER = "stet"
MARKER_PATTERN = r"^\s*[^\s:()]+:?\s*$"
"""A marker: one word (no space, colon or parenthesis in it), a trailing `:` optional."""
MARKER_EXPECTED = "a word such as 'stet' (optionally with a trailing ':')"


def clean_marker(marker: str) -> str:
    """The word of a marker that matches MARKER_PATTERN."""
    return marker.strip().rstrip(":")


def check_marker(marker: str) -> str:
    """The marker's word; an error for what is no marker (an empty or blank one would make
    every comment holding a colon a margin note)."""
    if not re.match(MARKER_PATTERN, marker):
        raise StetError(f"the marker must be {MARKER_EXPECTED}, not {marker!r}")
    return clean_marker(marker)


@lru_cache(maxsize=16)
def marker_pattern(marker: str) -> re.Pattern[str]:
    word = re.escape(marker.rstrip(":").strip())
    return re.compile(rf"(?<![\w-]){word}(?:\((?P<kind>[A-Za-z-]*)\))?:")


@dataclass(frozen=True)
class MarginNote:
    line: int
    """0-based line of the marker."""
    column: int
    end_line: int
    end_column: int
    kind: Kind
    text: str
    removal: tuple[int, int, int, int]
    """(line, column, end line, end column) to delete to remove the note from the code."""
    anchor_line: int
    """0-based line of the code the note is about, in the text as it is (where it is once
    notes are removed: `anchor_lines_after_removal`)."""
    unknown_kind: str | None = None
    """A kind written in the marker that is not one of Stet's (recorded as markup)."""


def find_notes(
    lines: list[str], index: CommentIndex, marker: str = DEFAULT_MARKER
) -> list[MarginNote]:
    pattern = marker_pattern(marker)
    word = marker.rstrip(":").strip()
    notes = []
    used: set[int] = set()
    code = _CodeLines(lines, index)
    for number in [number for number, line in enumerate(lines) if word in line]:
        if number in used:
            continue
        line = lines[number]
        for comment in index.comments[number]:
            match = pattern.search(line, comment.start, comment.end)
            if match is None:
                continue
            note = _note_at(lines, index, number, comment, match, pattern, code)
            used.update(range(note.line, note.end_line + 1))
            notes.append(note)
            break
    return notes


def _note_at(
    lines: list[str],
    index: CommentIndex,
    number: int,
    comment: Comment,
    match: re.Match[str],
    pattern: re.Pattern[str],
    code: _CodeLines,
) -> MarginNote:
    written_kind = match.group("kind")
    kind: Kind = "markup"
    unknown = None
    if written_kind:
        if written_kind.lower() in KINDS:
            kind = KINDS[KINDS.index(written_kind.lower())]
        else:
            unknown = written_kind
    parts = [lines[number][match.end() : comment.end].strip()]
    last_line, last = number, comment
    # The note goes on over the following lines of the same comment.
    while last_line + 1 < len(lines):
        following = _continuation(lines, index, last_line + 1, last, pattern)
        if following is None:
            break
        text = _clean(lines[last_line + 1][following.start : following.end])
        if not text and not following.block:
            break
        last_line, last = last_line + 1, following
        if text:
            parts.append(text)
        if following.end_with_delimiter != following.end or following.end < len(lines[last_line]):
            break
    text = " ".join(part for part in parts if part).strip()
    if comment.block and text.endswith(("*/", "-->")):
        text = text.rsplit(None, 1)[0] if " " in text else ""
    removal = _removal(lines, number, comment, match, last_line, last)
    anchor = _anchor_line(code, number, comment, last_line)
    return MarginNote(
        line=number,
        column=match.start(),
        end_line=last_line,
        end_column=last.end,
        kind=kind,
        text=text,
        removal=removal,
        anchor_line=anchor,
        unknown_kind=unknown,
    )


def anchor_lines_after_removal(notes: Sequence[MarginNote]) -> list[int]:
    """Each note's anchor line once every one of `notes` is removed: notes recorded together
    are removed together, so each anchor moves up by the lines all the removals above it take."""
    # As line_after_removals of each, in one pass: removals sorted by their first line
    # end where the next begins or above it, so each removal above a line takes all of its
    # lines from it but the last one above it, which may hold the line.
    removals = sorted(note.removal for note in notes)
    starts = [start for start, _, _, _ in removals]
    taken = list(accumulate(end - start for start, _, end, _ in removals))
    moved = []
    for note in notes:
        line = note.anchor_line
        above = bisect_left(starts, line)
        if above:
            start, _, end, _ = removals[above - 1]
            line -= taken[above - 1] - (end - start) + min(line, end) - start
        moved.append(line)
    return moved


def without_notes(lines: Sequence[str], notes: Sequence[MarginNote]) -> list[str]:
    """The lines once every one of `notes` is removed from the code (the text recording them
    leaves): a note at the end of a line of code leaves that line without it."""
    kept = list(lines)
    # From the last note up, the lines below each removal kept as they are: every line is
    # copied once, however many notes there are.
    pieces = []
    below = len(kept)  # kept[below:] is in `pieces`
    for note in sorted(notes, key=lambda note: note.line, reverse=True):
        line, column, end_line, end = note.removal
        tail = kept[end_line][end:] if end_line < len(kept) else ""
        pieces.append(kept[end_line + 1 : below])
        kept[line] = kept[line][:column] + tail
        below = line + 1
    pieces.append(kept[:below])
    return [text for piece in reversed(pieces) for text in piece]


def line_after_removals(line: int, removals: Iterable[tuple[int, int, int, int]]) -> int:
    """Where 0-based `line` is once the (non-overlapping) `removals` are deleted. A removal
    takes the line breaks it spans; a line it ends on joins the line it starts on."""
    shift = 0
    for start, _, end, _ in removals:
        if line > start:
            shift += min(line, end) - start
    return line - shift


def _continuation(
    lines: list[str], index: CommentIndex, number: int, previous: Comment, pattern: re.Pattern[str]
) -> Comment | None:
    found = index.comments[number]
    if not found:
        return None
    first = found[0]
    if previous.block:
        carried = first.opener == "" and first.start == 0
        return first if carried else None
    if first.code_before or first.block or first.opener != previous.opener:
        return None
    if pattern.search(lines[number], first.start, first.end):
        return None
    return first


def _clean(text: str) -> str:
    """Comment text without decoration: a block comment's leading `*`, surrounding space."""
    stripped = text.strip()
    if stripped.startswith("*") and not stripped.startswith("*/"):
        stripped = stripped[1:].strip()
    return stripped


def _removal(
    lines: list[str],
    number: int,
    comment: Comment,
    match: re.Match[str],
    last_line: int,
    last: Comment,
) -> tuple[int, int, int, int]:
    first_line_text = lines[number]
    before = first_line_text[comment.start : match.start()].strip()
    whole_comment = not before or set(before) <= {"*", "/", "-", "!", "#", "<"}
    after_end = lines[last_line][last.end_with_delimiter :].strip()
    if whole_comment and comment.block and comment.opener == "":
        return _removal_in_block(lines, number, last_line, last)
    if whole_comment and not comment.code_before and not after_end:
        return number, 0, last_line + 1, 0  # whole lines
    if whole_comment and not after_end:
        # A trailing comment: from the end of the code to the end of the line.
        start = len(first_line_text[: comment.start_with_delimiter].rstrip())
        return number, start, last_line, len(lines[last_line])
    if whole_comment and comment.block and comment.opener:
        # A block comment with code after its closer (`bar(); /* stet: … */ baz();`): the
        # comment goes with its delimiters, and the blanks after it where blanks stand before.
        start, end, rest = comment.start_with_delimiter, last.end_with_delimiter, lines[last_line]
        if start == 0 or first_line_text[start - 1] in " \t":
            end = len(rest) - len(rest[end:].lstrip(" \t"))
        return number, start, last_line, end
    # Inside a longer comment: only the note's own text.
    return number, match.start(), last_line, last.end


def _removal_in_block(
    lines: list[str], number: int, last_line: int, last: Comment
) -> tuple[int, int, int, int]:
    """A note in a block comment opened on an earlier line: its own lines go, the comment's
    closer stays (with what follows it), so the opener still has it."""
    if last.end_with_delimiter == last.end:
        return number, 0, last_line + 1, 0  # the comment runs on past the note (unclosed)
    if last_line > number and not _clean(lines[last_line][last.start : last.end]):
        return number, 0, last_line, 0  # the closer on a line of its own: keep that line
    # The closer right after the note's text: keep it, at the note's indentation.
    first_line_text = lines[number]
    indent = len(first_line_text) - len(first_line_text.lstrip())
    return number, indent, last_line, last.end


def _anchor_line(code: _CodeLines, number: int, comment: Comment, last_line: int) -> int:
    if comment.code_before:
        return number
    found = code.after(last_line + 1)
    if found is None:
        found = code.before(number - 1)
    return number if found is None else found


class _CodeLines:
    """The nearest line of code after or before a line, each line judged once per scan: a file
    of nothing but notes would otherwise be walked to its end for each of them."""

    def __init__(self, lines: list[str], index: CommentIndex) -> None:
        self.lines, self.index = lines, index
        self._after: dict[int, int | None] = {}
        self._before: dict[int, int | None] = {}

    def after(self, start: int) -> int | None:
        return self._walk(start, len(self.lines), 1, self._after)

    def before(self, start: int) -> int | None:
        return self._walk(start, -1, -1, self._before)

    def _walk(self, start: int, stop: int, step: int, known: dict[int, int | None]) -> int | None:
        visited = []
        found: int | None = None
        for number in range(start, stop, step):
            if number in known:
                found = known[number]
                break
            visited.append(number)
            if _is_code(self.lines, self.index, number):
                found = number
                break
        for number in visited:
            known[number] = found
        return found


def _is_code(lines: list[str], index: CommentIndex, number: int) -> bool:
    text = lines[number]
    if not text.strip():
        return False
    found = index.comments[number]
    if not found:
        return True
    return found[0].code_before or bool(text[: found[0].start_with_delimiter].strip())
