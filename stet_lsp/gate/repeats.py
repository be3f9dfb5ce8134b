"""A secret found once is a secret wherever its value appears again in the same text: an agent
given a token (`export API_TOKEN=…`, found) echoes it where no rule could tell it from any
other word (`curl -H 'X-Custom: …'`, `I used … for the call`).

Only values that cannot be ordinary text are looked for again: eight characters or more,
not made of words alone (a configured variable's `development` stays where it is another
word), and not a fixed replacement (a home path's `~`). An occurrence inside a span found
already is that span's; each other one is a span of the rule that found the value, so it
gets the same marker."""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Sequence

import ahocorasick_rs

from stet_lsp.core.lines import LineIndex
from stet_lsp.gate.findings import Finding, finding_for
from stet_lsp.gate.spans import Span

MIN_LENGTH = 8
_WORDS = re.compile(r"[A-Za-z]+(?:[ _.\-/:][A-Za-z]+)*")


def repeatable(value: str) -> bool:
    return len(value) >= MIN_LENGTH and _WORDS.fullmatch(value) is None


class Repeats:
    """The values of the spans found so far in a text, and where else they stand."""

    def __init__(self) -> None:
        self._rules: dict[str, Span] = {}
        self._automaton: ahocorasick_rs.BytesAhoCorasick | None = None
        self._values: list[str] = []

    def __bool__(self) -> bool:
        return bool(self._rules)

    def add(self, text: str, spans: Iterable[Span], offset: int = 0) -> None:
        """Remember the values of `spans` (positions in `text` less `offset`)."""
        for span in spans:
            value = text[span.start - offset : span.end - offset]
            if span.replacement is None and value not in self._rules and repeatable(value):
                self._rules[value] = span
                self._automaton = None

    def add_findings(self, text: str, findings: Iterable[Finding], offset: int = 0) -> None:
        self.add(text, (_span_of(finding) for finding in findings), offset)

    def spans(self, text: str, found: Sequence[Span]) -> list[Span]:
        """Each occurrence in `text` of a remembered value that no span of `found` (sorted,
        not overlapping) covers."""
        if not self._rules:
            return []
        starts = [span.start for span in found]
        repeated: list[Span] = []
        for index, start, end in self._occurrences(text):
            if _covered(found, starts, start, end):
                continue
            origin = self._rules[self._values[index]]
            repeated.append(Span(start, end, origin.rule, origin.priority, None, origin.prefix))
        return repeated

    def _occurrences(self, text: str) -> list[tuple[int, int, int]]:
        """(value's index, start, end) of each occurrence, leftmost first, the longest value
        where several start at one place. Searched as UTF-8 bytes (the automaton's fastest
        form; a file's undecodable bytes, kept as lone surrogates, pass as they are)."""
        if self._automaton is None:
            self._values = list(self._rules)
            self._automaton = ahocorasick_rs.BytesAhoCorasick(
                [_utf8(value) for value in self._values],
                matchkind=ahocorasick_rs.MatchKind.LeftmostLongest,
                implementation=ahocorasick_rs.Implementation.DFA,
            )
        data = _utf8(text)
        found = self._automaton.find_matches_as_indexes(data)
        if not found or len(data) == len(text):  # ASCII: a byte is a character
            return found
        occurrences = []
        byte, character = 0, 0
        for index, start, end in found:
            character += len(data[byte:start].decode("utf-8", "surrogatepass"))
            length = len(data[start:end].decode("utf-8", "surrogatepass"))
            occurrences.append((index, character, character + length))
            byte, character = end, character + length
        return occurrences

    def findings(self, text: str, found: Sequence[Finding]) -> list[Finding]:
        """`spans` as findings of `text` (positions in it)."""
        spans = self.spans(text, [_span_of(finding) for finding in found])
        if not spans:
            return []
        lines = LineIndex(text)
        return [finding_for(span, text, lines) for span in spans]


def _covered(found: Sequence[Span], starts: list[int], start: int, end: int) -> bool:
    index = bisect_right(starts, start) - 1
    if index >= 0 and found[index].end > start:
        return True
    return index + 1 < len(found) and found[index + 1].start < end


def _span_of(finding: Finding) -> Span:
    return Span(finding.offset, finding.end_offset, finding.rule, 0, finding.replacement)


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")
