"""Unified diffs for FileChange events, made the same way by every importer."""

from __future__ import annotations

import difflib
from dataclasses import dataclass


@dataclass(frozen=True)
class Diff:
    text: str
    added: int
    removed: int
    anchored: bool


def file_diff(path: str, before: str | None, after: str | None) -> Diff:
    """The whole-file diff from `before` to `after` (None: the file does not exist on that
    side). Hunk line numbers are the file's own, so the diff is anchored."""
    old = (before or "").splitlines(keepends=True)
    new = (after or "").splitlines(keepends=True)
    return _diff(path, old, new, anchored=True, created=before is None, deleted=after is None)


def fragment_diff(path: str, old_text: str, new_text: str, first_line: int | None = None) -> Diff:
    """The diff of replacing `old_text` with `new_text` somewhere in the file. With
    `first_line` (1-based line where `old_text` starts) the hunks carry real line numbers and
    the diff is anchored; without, they count from line 1 and only the text is known."""
    old = old_text.splitlines(keepends=True)
    new = new_text.splitlines(keepends=True)
    diff = _diff(path, old, new, anchored=first_line is not None, created=False, deleted=False)
    if first_line is None or first_line == 1:
        return diff
    return Diff(_shift(diff.text, first_line - 1), diff.added, diff.removed, True)


def count(diff_text: str) -> tuple[int, int]:
    """(added, removed) lines of a unified diff."""
    added = removed = 0
    for line in diff_text.splitlines():
        if line.startswith("+") and not line.startswith("+++"):
            added += 1
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
    return added, removed


def _diff(
    path: str, old: list[str], new: list[str], anchored: bool, created: bool, deleted: bool
) -> Diff:
    for lines in (old, new):
        if lines and not lines[-1].endswith("\n"):
            lines[-1] += "\n\\ No newline at end of file\n"
    before = "/dev/null" if created else f"a/{path}"
    after = "/dev/null" if deleted else f"b/{path}"
    text = "".join(difflib.unified_diff(old, new, before, after, n=3, lineterm="\n"))
    added, removed = count(text)
    return Diff(text, added, removed, anchored)


def _shift(text: str, offset: int) -> str:
    out = []
    for line in text.splitlines(keepends=True):
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
