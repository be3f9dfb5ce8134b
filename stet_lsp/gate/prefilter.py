"""One pass over the text that finds every anchor literal of the active rules.

Python's `re` has no multi-literal search, and an alternation of ~150 keywords tries every
alternative at almost every position. Instead each anchor is split at a rare character
(the pivot): the pattern starts with a character class of pivots only, which the regex engine
skips through in a tight loop, and fixed-width look-arounds confirm the rest of the anchor.
Pivots are rare in code, JSON and prose, so most positions cost one table lookup.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

# Pivots by preference. Each distinct pivot costs its frequency in every scanned text, so the
# first choices are characters many anchors share (punctuation), then rare letters; the rest
# ranks rare to common in source code, JSON and English text.
_PREFERENCE = "-._=/~jzkwbc"
_RARITY = "~`^|$@;!?{}<>%&*+7q695438j20z1/[]#x=-vykbw.:_\\g\"',)(hmcpudflonaiesrt "
_RANK: dict[str, int] = {}
for _char in _PREFERENCE + _RARITY:
    _RANK.setdefault(_char, len(_RANK))


def _pivot_index(anchor: str) -> int:
    return min(range(len(anchor)), key=lambda i: _RANK.get(anchor[i], -1))


@dataclass(frozen=True)
class AnchorHit:
    offset: int
    anchor: str


class Prefilter:
    def __init__(self, anchors: Iterable[str]) -> None:
        self.anchors = tuple(sorted({a for a in anchors if a}))
        by_pivot: dict[str, list[tuple[str, int]]] = {}
        for anchor in self.anchors:
            index = _pivot_index(anchor)
            by_pivot.setdefault(anchor[index], []).append((anchor, index))
        branches = []
        # Common pivots first: the engine tries the branches in order at each candidate.
        for pivot in sorted(by_pivot, key=lambda c: -_RANK.get(c, -1)):
            checks = []
            for anchor, index in by_pivot[pivot]:
                head = f"(?<={re.escape(anchor[:index])}.)" if index else ""
                tail = anchor[index + 1 :]
                # Consume the pivot only, so that overlapping anchors are all found.
                checks.append(head + (f"(?={re.escape(tail)})" if tail else ""))
            body = "|".join(checks)
            branches.append(re.escape(pivot) + (f"(?:{body})" if any(checks) else ""))
        self._by_pivot = by_pivot
        self._pattern = re.compile("|".join(branches)) if branches else None

    def find(self, lowered: str, start: int = 0, end: int | None = None) -> list[AnchorHit]:
        """Every anchor occurrence in `lowered` (the scanned text, ASCII-lowercased)."""
        if self._pattern is None:
            return []
        stop = len(lowered) if end is None else end
        hits: list[AnchorHit] = []
        by_pivot = self._by_pivot
        for match in self._pattern.finditer(lowered, start, stop):
            pivot_at = match.start()
            # Several anchors may share the pivot and overlap here; report each one.
            for anchor, index in by_pivot[lowered[pivot_at]]:
                begin = pivot_at - index
                if begin >= 0 and lowered.startswith(anchor, begin):
                    hits.append(AnchorHit(begin, anchor))
        return hits


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
