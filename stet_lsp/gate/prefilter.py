"""One pass over the text that finds every anchor literal of the active rules.

An Aho-Corasick automaton (a DFA, from `ahocorasick_rs`) over all anchors runs once over the
whole lowercased text as bytes, in native code, and reports every occurrence, overlapping ones
included: time is linear in the text whatever it holds. The text is encoded one byte per
character (anything not ASCII becomes `?`), so byte offsets are string offsets; the rare anchor
that is not plain ASCII (a configured variable name) is searched for with `str.find`.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from operator import itemgetter

import ahocorasick_rs

_INDEX = itemgetter(0)
_START = itemgetter(1)
_START_THEN_INDEX = itemgetter(1, 0)


AnchorHit = tuple[int, str]
"""(offset, anchor): where an anchor occurs in the scanned text."""


class Prefilter:
    def __init__(self, anchors: Iterable[str]) -> None:
        self.anchors = tuple(sorted({a for a in anchors if a}))
        self._plain = tuple(a for a in self.anchors if a.isascii() and "?" not in a)
        self._others = tuple(a for a in self.anchors if a not in self._plain)
        self._automaton = (
            ahocorasick_rs.BytesAhoCorasick(
                [anchor.encode("ascii") for anchor in self._plain],
                implementation=ahocorasick_rs.Implementation.DFA,
            )
            if self._plain
            else None
        )

    def find(self, lowered: str) -> list[AnchorHit]:
        """Every anchor occurrence in `lowered` (the scanned text, ASCII-lowercased), ordered
        by offset, then anchor."""
        hits: list[AnchorHit] = []
        if self._automaton is not None:
            data = lowered.encode("ascii", "replace")
            found = self._automaton.find_matches_as_indexes(data, overlapping=True)
            # (anchor index, start, end) by start, then anchor (indexes follow the sorted
            # anchors); tens of thousands of hits are common: the work stays in built-ins.
            found.sort(key=_START_THEN_INDEX)
            anchors = map(self._plain.__getitem__, map(_INDEX, found))
            hits = list(zip(map(_START, found), anchors, strict=True))
        if self._others:
            hits.extend((offset, a) for a in self._others for offset in _offsets(lowered, a))
            hits.sort()
        return hits


def _offsets(text: str, literal: str) -> list[int]:
    found = []
    at = text.find(literal)
    while at >= 0:
        found.append(at)
        at = text.find(literal, at + 1)
    return found


@lru_cache(maxsize=16)
def prefilter_for(anchors: tuple[str, ...]) -> Prefilter:
    return Prefilter(anchors)


_ASCII_LOWER = str.maketrans({chr(c): chr(c + 32) for c in range(ord("A"), ord("Z") + 1)})


def ascii_lower(text: str) -> str:
    """Lowercase with offsets preserved (str.lower may lengthen some non-ASCII characters)."""
    lowered = text.lower()
    if len(lowered) == len(text):
        return lowered
    return text.translate(_ASCII_LOWER)
