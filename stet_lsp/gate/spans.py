"""Spans of text to redact, and how overlapping spans combine."""

from __future__ import annotations

from typing import NamedTuple


class Span(NamedTuple):
    start: int
    end: int
    rule: str
    priority: int
    """Lower wins when spans overlap: specific formats before generic ones."""
    replacement: str | None = None
    """A fixed replacement (e.g. `~`), or None for a numbered marker."""
    prefix: str = ""
    found_as: str = ""
    """"" where a rule found it; "copy" or "part": a copy of a value found elsewhere in the
    text, whole or in part (stet_lsp/gate/repeats.py)."""

    def shifted(self, offset: int) -> Span:
        return self._replace(start=self.start + offset, end=self.end + offset)


# Spans that join say what found the first: a rule, else a copy, else a part.
_FOUND_RANK = ("", "copy", "part")


def merge_spans(spans: list[Span]) -> list[Span]:
    """Sorted, non-overlapping spans; overlapping ones join and keep the specific rule."""
    merged: list[Span] = []
    for span in sorted(spans, key=lambda s: (s.start, -s.end, s.priority)):
        if span.end <= span.start:
            continue
        if merged and span.start < merged[-1].end:
            last = merged[-1]
            winner = last if last.priority <= span.priority else span
            # A fixed replacement (home path) never swallows a secret next to it.
            if last.replacement is not None and span.replacement is None:
                winner = span
            merged[-1] = Span(
                last.start,
                max(last.end, span.end),
                winner.rule,
                winner.priority,
                winner.replacement if winner.replacement and last.replacement else None,
                winner.prefix,
                min(last.found_as, span.found_as, key=_FOUND_RANK.index),
            )
            continue
        merged.append(span)
    return merged
