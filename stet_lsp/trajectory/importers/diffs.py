"""Unified diffs for FileChange events, made the same way by every importer."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import chain

from stet_lsp.core.lines import lines_of


@dataclass(frozen=True)
class Diff:
    text: str
    added: int
    removed: int
    anchored: bool


def file_diff(path: str, before: str | None, after: str | None) -> Diff:
    """The whole-file diff from `before` to `after` (None: the file does not exist on that
    side). Hunk line numbers are the file's own, so the diff is anchored."""
    old = lines_of(before or "", keep_breaks=True)
    new = lines_of(after or "", keep_breaks=True)
    return _diff(path, old, new, anchored=True, created=before is None, deleted=after is None)


def fragment_diff(path: str, old_text: str, new_text: str, first_line: int | None = None) -> Diff:
    """The diff of replacing `old_text` with `new_text` somewhere in the file. With
    `first_line` (1-based line where `old_text` starts) the hunks carry real line numbers and
    the diff is anchored; without, they count from line 1 and only the text is known."""
    old = lines_of(old_text, keep_breaks=True)
    new = lines_of(new_text, keep_breaks=True)
    diff = _diff(path, old, new, anchored=first_line is not None, created=False, deleted=False)
    if first_line is None or first_line == 1:
        return diff
    return Diff(_shift(diff.text, first_line - 1), diff.added, diff.removed, True)


def hunks_diff(path: str, hunks: str, created: bool = False) -> Diff:
    """A diff a harness recorded as its hunks (from the first `@@` line on), with the file
    headers every importer writes; its line numbers are the file's (anchored). No hunks: an
    empty diff."""
    if not hunks:
        return Diff("", 0, 0, True)
    if not hunks.endswith("\n"):
        hunks += "\n"
    text = headers(path, created=created) + hunks
    added, removed = count(text)
    return Diff(text, added, removed, True)


def headers(
    path: str, created: bool = False, deleted: bool = False, new_path: str | None = None
) -> str:
    """The `---`/`+++` lines of a diff of `path` (renamed to `new_path`): `/dev/null` on the
    side where the file does not exist."""
    before = "/dev/null" if created else f"a/{path}"
    after = "/dev/null" if deleted else f"b/{new_path or path}"
    return f"--- {before}\n+++ {after}\n"


def count(diff_text: str) -> tuple[int, int]:
    """(added, removed) lines of a unified diff. Inside a hunk whose header gives its lengths,
    every line counts, even one that reads like a file header (`-- a comment`, `++i`)."""
    added = removed = 0
    old_left = new_left = 0
    for line in diff_text.split("\n"):
        if old_left > 0 or new_left > 0:
            if line.startswith("+"):
                added, new_left = added + 1, new_left - 1
            elif line.startswith("-"):
                removed, old_left = removed + 1, old_left - 1
            elif not line.startswith("\\"):
                old_left, new_left = old_left - 1, new_left - 1
            continue
        header = _HUNK_LENGTHS.match(line)
        if header is not None:
            old_left = 1 if header.group(1) is None else int(header.group(1))
            new_left = 1 if header.group(2) is None else int(header.group(2))
        elif line.startswith("+") and not line.startswith("+++"):
            added += 1  # a hunk without lengths: file headers are told apart by their marks
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
    return added, removed


# Numbers of at most 10 digits, as attribution reads them: Python reads no number of over
# 4,300 digits (ValueError), and a transcript can write one anywhere.
_HUNK_LENGTHS = re.compile(r"@@ -\d{1,10}(?:,(\d{1,10}))? \+\d{1,10}(?:,(\d{1,10}))? @@")


# old[a:b] replaced by new[c:d], (a, b, c, d), one of the two may be empty. The lines between
# two changes are the same on both sides.
_Change = tuple[int, int, int, int]


def _diff(
    path: str, old: list[str], new: list[str], anchored: bool, created: bool, deleted: bool
) -> Diff:
    for lines in (old, new):
        if lines and not lines[-1].endswith("\n"):
            lines[-1] += "\n\\ No newline at end of file\n"
    changes = _changes(old, new)
    text = "".join(_unified(old, new, changes, headers(path, created, deleted)))
    # Counted by the changes: `count` would read a line that ends in a lone \r as part of the
    # next, as git does.
    added = sum(new_stop - new_start for _, _, new_start, new_stop in changes)
    removed = sum(old_stop - old_start for old_start, old_stop, _, _ in changes)
    return Diff(text, added, removed, anchored)


def _unified(old: list[str], new: list[str], changes: list[_Change], header: str) -> Iterator[str]:
    """What `difflib.unified_diff(old, new, n=3)` writes of `changes`, `header` being its
    `---`/`+++` lines (nothing at all without changes): changes at most 6 lines apart share a
    hunk, each hunk has up to 3 lines of context either side."""
    for number, group in enumerate(_grouped(changes)):
        if number == 0:
            yield header
        (first, _, first_new, _), (_, last, _, last_new) = group[0], group[-1]
        # Lines before the first change and after the last are the same on both sides.
        before, after = min(_CONTEXT, first), min(_CONTEXT, len(old) - last)
        start, stop = first - before, last + after
        yield f"@@ -{_span(start, stop)} +{_span(first_new - before, last_new + after)} @@\n"
        for old_start, old_stop, new_start, new_stop in group:
            yield _marked(" ", old[start:old_start])
            yield _marked("-", old[old_start:old_stop])
            yield _marked("+", new[new_start:new_stop])
            start = old_stop
        yield _marked(" ", old[start:stop])


_CONTEXT = 3


def _grouped(changes: list[_Change]) -> Iterator[list[_Change]]:
    """The changes in hunks: a change more than twice the context after the one before starts
    a hunk (their contexts would not meet)."""
    group: list[_Change] = []
    for change in changes:
        if group and change[0] - group[-1][1] > 2 * _CONTEXT:
            yield group
            group = []
        group.append(change)
    if group:
        yield group


def _changes(old: list[str], new: list[str]) -> list[_Change]:
    """The changes from `old` to `new`, in order, as libgit2's diff finds them (git's xdiff:
    Myers's algorithm, nearly the fewest lines changed: it bounds its search, and a line that
    stands many times on one side among changed lines is taken for changed too), in about
    linear time where difflib's matching is quadratic (changes throughout a file whose lines
    repeat). Each distinct line is given to it as a line holding only its number, so that it
    compares the lines as `lines_of` splits them, whole, whatever they hold: git would take a
    text with a NUL for binary, and break lines at \\n alone."""
    if old == new:
        return []
    if not old or not new:
        return [(0, len(old), 0, len(new))]
    import pygit2  # only a diff of two texts needs it
    from pygit2.enums import DiffOption

    # Numbered in the order they first stand, on the old side then the new.
    distinct = dict.fromkeys(chain(old, new))
    numbers = dict(zip(distinct, map("{}\n".format, range(len(distinct))), strict=True))
    old_text, new_text = ("".join(map(numbers.__getitem__, lines)).encode() for lines in (old, new))
    patch = pygit2.Patch.create_from(
        old_text, new_text, flag=DiffOption.FORCE_TEXT, context_lines=0
    )
    changes = []
    for hunk in patch.hunks:
        # Where a side has no lines its start is the line before the change.
        old_start = hunk.old_start - 1 if hunk.old_lines else hunk.old_start
        new_start = hunk.new_start - 1 if hunk.new_lines else hunk.new_start
        changes.append(
            (old_start, old_start + hunk.old_lines, new_start, new_start + hunk.new_lines)
        )
    return changes


def _marked(mark: str, lines: list[str]) -> str:
    """The lines, each after `mark`, in one string."""
    return mark + mark.join(lines) if lines else ""


def _span(start: int, stop: int) -> str:
    """A hunk's range of lines as unified diffs write it (difflib's `_format_range_unified`)."""
    length = stop - start
    if length == 1:
        return f"{start + 1}"
    return f"{start + 1 if length else start},{length}"


def _shift(text: str, offset: int) -> str:
    out = []
    for line in lines_of(text, keep_breaks=True):
        if line.startswith("@@ "):
            head, _, rest = line[3:].partition(" @@")
            old, new = head.split(" ")
            line = f"@@ {_move(old, offset)} {_move(new, offset)} @@{rest}"
        out.append(line)
    return "".join(out)


def _move(span: str, offset: int) -> str:
    sign, numbers = span[0], span[1:]
    start, comma, length = numbers.partition(",")
    return f"{sign}{int(start) + offset}{comma}{length}"
