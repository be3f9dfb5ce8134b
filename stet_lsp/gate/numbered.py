"""A file as a Read tool shows it: each line after its number and a tab (or `→`).

Rules that read a value over several lines (a netrc entry, a YAML block scalar, a `name:` and
its `value:`, a key block) find the numbers between the lines. A run of numbered lines that
holds such a rule's anchor is also scanned as a view without the numbers; a span found there
maps back to the raw text (over the numbers of the lines it covers)."""

from __future__ import annotations

import re
from collections.abc import Callable

from stet_lsp.gate.jsonaware import View

_NUMBER = re.compile(r" {0,8}\d{1,7}[\t→]")
# The first line's number just inside a string, as a transcript's line decoded whole shows a
# file: `{"content": "     1→machine …`.
_QUOTED_NUMBER = re.compile(r"(?<=\") {0,8}\d{1,7}[\t→]")
# The numbered lines after a line's end, and each one's number (with the newline before it).
_RUN = re.compile(r"(?:\n {0,8}\d{1,7}[\t→][^\n]*)*")
_NUMBERS = re.compile(r"\n {0,8}\d{1,7}[\t→]")
# How far a run is followed from the anchor: back to a value's name, on over a key block.
_LINES_BEFORE = 32
_REACH_AFTER = 96 * 1024


def numbered_views(text: str, hits: list[int]) -> list[View]:
    """A view of each run of numbered lines around `hits` (offsets, in order), the numbers
    left out."""
    views: list[View] = []
    covered = -1
    line, read_to, quoted = -1, -1, None
    # The start of the last hit's line, and how far the text was searched for it: each
    # stretch of the text is searched once, however many hits a long line holds.
    first = searched = 0
    for hit in hits:
        if hit < covered:
            continue
        newline = text.rfind("\n", searched, hit)
        first = first if newline < 0 else newline + 1
        searched = hit
        opening = _NUMBER.match(text, first)
        if opening is None:
            # On the run's first line: each stretch of a line is searched once, whatever
            # the number of hits on it.
            if first != line:
                line, read_to, quoted = first, first, None
            quoted = _last_quoted_number(text, read_to, hit) or quoted
            read_to = hit
            if quoted is None:
                continue
            opening = quoted
        else:
            opening = _run_opening(text, first, opening)
        line_end = text.find("\n", hit)
        line_end = len(text) if line_end < 0 else line_end
        run = _RUN.match(text, line_end, min(len(text), hit + _REACH_AFTER))
        covered = end = run.end() if run is not None else line_end
        start = opening.end()
        # The way back (a mark per number) is worked out only when a span is mapped.
        views.append(View(_NUMBERS.sub("\n", text[start:end]), start, _marks(text, start, end)))
    return views


def _run_opening(text: str, first: int, opening: re.Match[str]) -> re.Match[str]:
    """The number of the run's first line, back from the line at `first` (numbered at its
    start): a line's start, or a string's (the line before, decoded from a transcript)."""
    for _ in range(_LINES_BEFORE):
        if first == 0:
            break
        before = text.rfind("\n", 0, first - 1) + 1
        earlier = _NUMBER.match(text, before)
        if earlier is None:
            return _last_quoted_number(text, before, first - 1) or opening
        first, opening = before, earlier
    return opening


def _last_quoted_number(text: str, start: int, end: int) -> re.Match[str] | None:
    return max(_QUOTED_NUMBER.finditer(text, start, end), key=re.Match.start, default=None)


def _marks(text: str, start: int, end: int) -> Callable[[], list[tuple[int, int, int]]]:
    """Each number's newline as a mark (view offset, raw start, raw end) of the view."""

    def marks() -> list[tuple[int, int, int]]:
        found = []
        removed = 0
        for number in _NUMBERS.finditer(text, start, end):
            found.append((number.start() - start - removed, number.start(), number.end()))
            removed += number.end() - number.start() - 1
        return found

    return marks
