"""Unified diffs for FileChange events, made the same way by every importer."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator
from dataclasses import dataclass

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


def _diff(
    path: str, old: list[str], new: list[str], anchored: bool, created: bool, deleted: bool
) -> Diff:
    for lines in (old, new):
        if lines and not lines[-1].endswith("\n"):
            lines[-1] += "\n\\ No newline at end of file\n"
    text = "".join(_unified(old, new, headers(path, created, deleted)))
    added, removed = count(text)
    return Diff(text, added, removed, anchored)


def _unified(old: list[str], new: list[str], header: str) -> Iterator[str]:
    """What `difflib.unified_diff(old, new, n=3)` writes, `header` being its `---`/`+++` lines
    (nothing at all when the sides are the same), found faster by `_Matcher`."""
    for number, group in enumerate(_Matcher(old, new).get_grouped_opcodes(3)):
        if number == 0:
            yield header
        first, last = group[0], group[-1]
        yield f"@@ -{_span(first[1], last[2])} +{_span(first[3], last[4])} @@\n"
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                yield _marked(" ", old[i1:i2])
                continue
            if tag in ("replace", "delete"):
                yield _marked("-", old[i1:i2])
            if tag in ("replace", "insert"):
                yield _marked("+", new[j1:j2])


def _marked(mark: str, lines: list[str]) -> str:
    """The lines, each after `mark`, in one string."""
    return mark + mark.join(lines) if lines else ""


def _span(start: int, stop: int) -> str:
    """A hunk's range of lines as unified diffs write it (difflib's `_format_range_unified`)."""
    length = stop - start
    if length == 1:
        return f"{start + 1}"
    return f"{start + 1 if length else start},{length}"


class _Matcher(difflib.SequenceMatcher[str]):
    """difflib's matcher, finding the very same matching blocks sooner when the sides share a
    long head or tail (a file before and after an edit).

    difflib matches the longest run of equal lines between the sides, then does the same in
    what is left before and after it, and so on. A run is made of lines that are not popular
    (standing in over 1% of a side of 200 lines or more); the popular lines next to it join
    it. Each search takes time in proportion to the lines searched times how often each
    stands in the other side: quadratic in a long file of often repeated lines. The first two
    searches span (nearly) the whole file and usually return the common head and tail; where
    it is certain that they do, they are answered without searching. (Cutting the head and
    tail off before diffing would change the diff where as long a run lies elsewhere, or where
    lines are popular in the whole file but not in the part left.) Proving it takes longer
    than those searches where few lines repeat: it is left to where they do."""

    def __init__(self, a: list[str], b: list[str]) -> None:
        super().__init__(None, a, b)
        popular: set[str] = self.bpopular  # type: ignore[attr-defined]
        places: dict[str, list[int]] = self.b2j  # type: ignore[attr-defined]
        repeated = _places_searched(a, places) > _SHORTCUT_PLACES * len(a)
        self._known = _first_matches(a, b, popular) if repeated else {}

    def find_longest_match(
        self, alo: int = 0, ahi: int | None = None, blo: int = 0, bhi: int | None = None
    ) -> difflib.Match:
        # get_matching_blocks searches through this method, naming all four bounds.
        known = self._known.get((alo, ahi, blo, bhi))
        return known if known is not None else super().find_longest_match(alo, ahi, blo, bhi)


# Where difflib's search over the whole of `a` steps through more places in `b` than this
# many a line of `a` (lines repeat), the shortcut's proof (rolling hashes of both sides) costs
# less than the searches it saves; where lines seldom repeat, more (measured on files of 150
# to 5,000 lines).
_SHORTCUT_PLACES = 6


def _places_searched(a: list[str], b2j: dict[str, list[int]]) -> int:
    """How many places in `b` difflib's search over the whole of `a` steps through: where
    each line of `a` stands in `b` (popular lines left out)."""
    return sum(map(len, filter(None, map(b2j.get, a))))


def _first_matches(
    a: list[str], b: list[str], popular: set[str]
) -> dict[tuple[int, int | None, int, int | None], difflib.Match]:
    """What difflib's first two searches (over the whole sides, then over what the first match
    leaves) return, by the bounds searched, where that is certain: the common head or tail,
    when its longest run of lines that are not popular is longer than any run of equal lines
    outside the head and tail. On a tie between the head and the tail the head comes first,
    as difflib keeps the first longest run it meets."""
    la, lb = len(a), len(b)
    shortest = min(la, lb)
    head = 0
    while head < shortest and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < shortest - head and a[la - 1 - tail] == b[lb - 1 - tail]:
        tail += 1
    head_run, tail_run = _longest_run(a[:head], popular), _longest_run(a[la - tail :], popular)
    # The shortest of the two runs that is longer than every run outside (so is a longer one).
    runs = sorted({run for run in (head_run, tail_run) if run > 0})
    longer = next((run for run in runs if not _elsewhere(a, b, run, head, tail, popular)), None)

    def longest(run: int) -> bool:
        return longer is not None and run >= longer

    head_match = difflib.Match(0, 0, head)
    tail_match = difflib.Match(la - tail, lb - tail, tail)
    known: dict[tuple[int, int | None, int, int | None], difflib.Match] = {}
    if head_run >= tail_run and longest(head_run):
        known[0, la, 0, lb] = head_match
        if longest(tail_run):
            known[head, la, head, lb] = tail_match
    elif tail_run > head_run and _ends_there(a, b, tail) and longest(tail_run):
        known[0, la, 0, lb] = tail_match
        if longest(head_run):
            known[0, la - tail, 0, lb - tail] = head_match
    return known


def _ends_there(a: list[str], b: list[str], tail: int) -> bool:
    """Whether the lines before the common tail differ (a tail cut short where the head ends
    may not: difflib's match would then take in more than the tail)."""
    la, lb = len(a), len(b)
    return tail in (la, lb) or a[la - tail - 1] != b[lb - tail - 1]


def _longest_run(lines: list[str], popular: set[str]) -> int:
    """The most lines in a row that are not popular."""
    longest = run = 0
    for line in lines:
        run = 0 if line in popular else run + 1
        longest = max(longest, run)
    return longest


def _elsewhere(
    a: list[str], b: list[str], size: int, head: int, tail: int, popular: set[str]
) -> bool:
    """Whether `size` lines in a row of `a` that are not popular stand in `b` other than at
    their own place in the common head or tail (or may: lines whose hashes are equal count)."""
    starts: dict[int, list[int]] = {}
    for j, key in _windows(b, size, popular):
        starts.setdefault(key, []).append(j)
    shift = len(b) - len(a)
    for i, key in _windows(a, size, popular):
        for j in starts.get(key, ()):
            own_head = j == i and i + size <= head
            own_tail = j == i + shift and i >= len(a) - tail
            if not (own_head or own_tail):
                return True
    return False


_MODULUS = (1 << 61) - 1
_BASE = 1_000_003


def _windows(lines: list[str], size: int, popular: set[str]) -> Iterator[tuple[int, int]]:
    """(start, rolling hash) of every `size` lines in a row that are not popular."""
    values = [hash(line) % _MODULUS for line in lines]
    dropped = pow(_BASE, size - 1, _MODULUS)
    key = run = 0
    for index, value in enumerate(values):
        if index >= size:
            key -= values[index - size] * dropped
        key = (key * _BASE + value) % _MODULUS
        run = 0 if lines[index] in popular else run + 1
        if run >= size:
            yield index - size + 1, key


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
