"""One pass over the text that finds every anchor literal of the active rules.

An Aho-Corasick automaton (a DFA, from `ahocorasick_rs`) over all anchors runs once over the
whole lowercased text as bytes, in native code, and reports every occurrence, overlapping ones
included: time is linear in the text whatever it holds. The text is lowercased one byte per
character (anything not ASCII becomes `?`), so byte offsets are string offsets; the rare anchor
that is not plain ASCII (a configured variable name) is searched for in the text itself,
ignoring case.
"""

from __future__ import annotations

import re
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
        # Overlapping occurrences, either case, at the text's own offsets.
        self._other_patterns = tuple(
            re.compile(f"(?={re.escape(anchor)})", re.IGNORECASE) for anchor in self._others
        )
        self._automaton = (
            ahocorasick_rs.BytesAhoCorasick(
                [anchor.encode("ascii") for anchor in self._plain],
                implementation=ahocorasick_rs.Implementation.DFA,
            )
            if self._plain
            else None
        )

    def find(self, lowered: str, text: str | None = None) -> list[AnchorHit]:
        """Every anchor occurrence in `lowered` (the scanned text through `ascii_lower`),
        ordered by offset, then anchor. Anchors that are not plain ASCII are looked for in
        `text`, the scanned text itself (or `lowered` when not given)."""
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
            source = lowered if text is None else text
            for anchor, pattern in zip(self._others, self._other_patterns, strict=True):
                hits.extend((match.start(), anchor) for match in pattern.finditer(source))
            hits.sort()
        return hits


@lru_cache(maxsize=16)
def prefilter_for(anchors: tuple[str, ...]) -> Prefilter:
    return Prefilter(anchors)


def ascii_lower(text: str) -> str:
    """ASCII letters lowercased and every other character `?`: one character per character,
    so offsets are the text's. (bytes.lower touches ASCII only, and is far faster than
    str.lower on text that is not all ASCII.)"""
    return text.encode("ascii", "replace").lower().decode("ascii")
