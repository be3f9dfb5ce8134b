"""A secret found once is a secret wherever its value appears again in the same text: an agent
given a token (`export API_TOKEN=…`, found) echoes it where no rule could tell it from any
other word (`curl -H 'X-Custom: …'`, `I used … for the call`).

Only values that cannot be ordinary text are looked for again (`repeatable`): eight
characters or more (at most `MAX_LENGTH`: a key block's own rule finds it wherever it
stands), not words alone (a configured variable's `development` stays where it is another
word; a generated run of letters is no word), not a path, dotted name or piece of code a
generic rule took for a value (`TestParse/empty_input`, `create_access_token({`), not a JWT's
header alone, and not a fixed replacement (a home path's `~`). A copy counts where it stands
as a token of its own: not inside a longer run of letters and digits (a password `12345678`
is not redacted out of the timestamp `1712345678901`), and in JSON text only inside a string
literal, on whole escape sequences, so the text stays valid JSON. A value found JSON-escaped
(in a JSON string, or a JSON document inside one) is also looked for as it reads decoded, an
agent's message showing it bare. Copies of several values that overlap are one span. A copy
that overlaps a span found already is left to that span. Each copy gets the marker of the
value it is a copy of.

A long value is also looked for in part, as printed truncated (`I set it to Xk9q2LmWp4Tz…`,
`${TOKEN:0:16}`, `…R7vBn3Hc6Jd1`): by its first or last characters (stet_lsp/gate/parts.py),
read on as far as the text goes on as the value does (of values that share those
characters, the one it goes on as longest). Such a part counts as a copy by the same tests
as a whole one, so another key that shares a value's first characters runs on past them
and is no copy."""

from __future__ import annotations

import json
import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Sequence
from operator import itemgetter

import ahocorasick_rs

from stet_lsp.core.lines import LineIndex
from stet_lsp.gate.findings import Finding, finding_for
from stet_lsp.gate.generated import looks_generated
from stet_lsp.gate.heuristics import looks_like_reference
from stet_lsp.gate.jsonaware import LiteralIndex, json_decodings, snap_to_literal
from stet_lsp.gate.parts import pieces
from stet_lsp.gate.spans import Span

MIN_LENGTH = 8
MAX_LENGTH = 512
# An automaton that searched this many texts unchanged (every chunk of a long file is searched
# for the same values) is built again as a DFA, which finds the same matches a few times
# faster, when its values are few enough for the DFA to stay small and quick to build.
_SEARCHES_BEFORE_DFA = 4
_DFA_PATTERN_BYTES = 1 << 14
_WORDS = re.compile(r"[A-Za-z]+(?:[ _.\-/:][A-Za-z]+)*")
# Code a generic rule may take for a value (`create_access_token({`, `{tokens[`): a copy of
# it elsewhere is more code.
_CODE = re.compile(r"[A-Za-z_]{3,}\w*\(|\{[A-Za-z_]\w*[\[.(]")


def repeatable(value: str) -> bool:
    if not MIN_LENGTH <= len(value) <= MAX_LENGTH:
        return False
    if _WORDS.fullmatch(value) is not None and not looks_generated(value):
        return False
    if _CODE.search(value) or (looks_like_reference(value) and not _a_word(value)):
        return False
    # A JWT's header alone (`eyJhbGciOiJIUzI1NiIs`, a printed token's first characters) is
    # the same in every token signed alike; a whole token is looked for again.
    return not (value.startswith("eyJ") and "." not in value)


class Repeats:
    """The values of the spans found so far in a text, and where else they stand."""

    def __init__(self, as_json: bool = False) -> None:
        self.as_json = as_json
        self._origins: dict[str, Span] = {}
        self._automaton: ahocorasick_rs.BytesAhoCorasick | None = None
        self._values: list[str] = []
        self._pieces: list[_Piece] = []
        """What the automaton looks for after the values (whose indexes are theirs): pieces."""
        self._searches = 0  # by the automaton as it is
        self._decoded: set[str] = set()
        """The values remembered as what a value found stands for (`_add_decoded`)."""

    def __bool__(self) -> bool:
        return bool(self._origins)

    def add(self, text: str, spans: Iterable[Span], offset: int = 0) -> None:
        """Remember the values of `spans` (positions in `text` less `offset`)."""
        for span in spans:
            value = text[span.start - offset : span.end - offset]
            if span.replacement is None and value not in self._origins and repeatable(value):
                self._origins[value] = span
                self._add_decoded(value, span, repeatable)
                self._automaton = None

    def add_findings(self, text: str, findings: Iterable[Finding], offset: int = 0) -> None:
        self.add(text, (_span_of(finding) for finding in findings), offset)

    def add_known(self, text: str, findings: Iterable[Finding]) -> None:
        """Remember values rules found in another text, one the text searched does not show
        them in (what a command printed, paired with the command by an importer): a secret
        there whatever it looks like, so only their length is asked (`printed-secret` takes
        six characters)."""
        for finding in findings:
            value = text[finding.offset : finding.end_offset]
            if finding.replacement is None and len(value) <= MAX_LENGTH:
                origin = self._origins.setdefault(value, _span_of(finding))
                self._add_decoded(value, origin, lambda _: True)
                self._automaton = None

    def _add_decoded(self, value: str, origin: Span, wanted: Callable[[str], bool]) -> None:
        r"""Remember what `value` stands for when the text it was found in is JSON-escaped,
        once or twice (a JSON string, or a JSON document inside one), as the same secret: a
        transcript's line writes `Zr7\\qW3…` where the document it holds has `Zr7\qW3…`
        and an agent's message `Zr7\qW3…`."""
        for decoded in json_decodings(value)[1:]:
            if decoded not in self._origins and wanted(decoded):
                self._origins[decoded] = origin
                self._decoded.add(decoded)

    def values(self) -> list[tuple[str, str]]:
        """(rule, value) of each value remembered, as the text it was found in writes it."""
        return [
            (origin.rule, value)
            for value, origin in self._origins.items()
            if value not in self._decoded
        ]

    def in_json(self) -> Repeats:
        """The same values, looked for in JSON text: each also as a JSON string writes it
        (`"` and `\\` escaped), under the same marker."""
        copies = Repeats(as_json=True)
        copies._decoded = self._decoded
        for value, origin in self._origins.items():
            copies._origins.setdefault(value, origin)
            written = json.dumps(value, ensure_ascii=False)[1:-1]
            if written != value and len(written) <= MAX_LENGTH:
                copies._origins.setdefault(written, origin)
        return copies

    def spans(self, text: str, found: Sequence[Span]) -> list[Span]:
        """Each copy in `text` of a remembered value that no span of `found` (sorted, not
        overlapping) meets."""
        if not self._origins:
            return []
        matches = self._matches(text)
        if not matches:
            return []
        starts = [span.start for span in found]
        literals: LiteralIndex | None = None
        repeated: list[Span] = []
        for run in _runs(matches):
            start, end = run[0][1], max(match[2] for match in run)
            if _meets(found, starts, start, end):
                continue  # most often the value where it was found
            if self.as_json and literals is None:
                literals = LiteralIndex(text, LineIndex(text))
            if not _a_token(text, start, end, literals):
                continue
            for index, first, last in _joined(run):
                value = self._values[index]
                found_as = "part" if last - first < len(value) else "copy"
                repeated.append(
                    self._origins[value]._replace(
                        start=first, end=last, replacement=None, found_as=found_as
                    )
                )
        return repeated

    def _matches(self, text: str) -> list[_Match]:
        """(value's index, start, end) of every copy, whole or in part, overlapping ones too.
        Searched as UTF-8 bytes, the automaton's fast form (a file's undecodable bytes, kept
        as lone surrogates, pass as they are); offsets are mapped back to characters only for
        text that is not ASCII."""
        if self._automaton is None:
            self._values = list(self._origins)
            self._pieces = _pieces_of(self._values, self._origins)
            self._automaton = ahocorasick_rs.BytesAhoCorasick(self._patterns())
            self._searches = 0
        elif self._searches == _SEARCHES_BEFORE_DFA:
            patterns = self._patterns()
            if sum(map(len, patterns)) <= _DFA_PATTERN_BYTES:
                self._automaton = ahocorasick_rs.BytesAhoCorasick(
                    patterns, implementation=ahocorasick_rs.Implementation.DFA
                )
        self._searches += 1
        data = _utf8(text)
        found = self._automaton.find_matches_as_indexes(data, overlapping=True)
        if found and len(data) != len(text):  # not ASCII: a byte is no character
            found.sort(key=lambda match: match[1])
            characters: dict[int, int] = {}
            byte, character = 0, 0
            for position in sorted({offset for _, start, end in found for offset in (start, end)}):
                character += len(data[byte:position].decode("utf-8", "surrogatepass"))
                characters[position] = character
                byte = position
            found = [(index, characters[start], characters[end]) for index, start, end in found]
        return self._read_on(text, found)

    def _patterns(self) -> list[bytes]:
        return [_utf8(value) for value in self._values] + [
            _utf8(piece.text) for piece in self._pieces
        ]

    def _read_on(self, text: str, found: list[_Match]) -> list[_Match]:
        """The matches, each of a piece read on as far as the text goes on as the value of
        that piece it agrees with longest does. A piece's match inside a copy read on already
        is left out: it is part of that copy, and reading each on made a text of a value
        repeated quadratic."""
        values = len(self._values)
        if not self._pieces:
            return found
        matches = [match for match in found if match[0] < values]
        parts = sorted((match for match in found if match[0] >= values), key=_START)
        # Where whole copies start and end (most pieces' matches are inside one): a piece
        # none of whose values is longer than the copy there is read on no further.
        whole_ends: dict[int, int] = {}
        whole_starts: dict[int, int] = {}
        for _, start, end in matches:
            whole_ends[start] = max(end, whole_ends.get(start, end))
            whole_starts[end] = min(start, whole_starts.get(end, start))
        reached: dict[int, int] = {}
        for pattern, start, _ in parts:
            piece = self._pieces[pattern - values]
            if piece.at_head and whole_ends.get(start, start) - start >= piece.reach:
                continue
            if piece.at_head and (piece.recurs or start >= reached.get(pattern, -1)):
                index, length = piece.longest(text[start : start + piece.reach])
                reached[pattern] = start + length
                matches.append((index, start, start + length))
        for pattern, _, end in reversed(sorted(parts, key=_END)):
            piece = self._pieces[pattern - values]
            if piece.at_head or end - whole_starts.get(end, end) >= piece.reach:
                continue
            if piece.recurs or end <= reached.get(pattern, len(text) + 1):
                index, length = piece.longest(text[max(0, end - piece.reach) : end][::-1])
                start = end - length
                if self.as_json:
                    # Read back into an escape (`\u2026` before the part: its last digit):
                    # the part starts after it.
                    start = _past_escape(text, start)
                reached[pattern] = start
                if end - start >= len(piece.text):
                    matches.append((index, start, end))
        return matches

    def findings(self, text: str, found: Sequence[Finding]) -> list[Finding]:
        """`spans` as findings of `text` (positions in it)."""
        spans = self.spans(text, [_span_of(finding) for finding in found])
        if not spans:
            return []
        lines = LineIndex(text)
        return [finding_for(span, text, lines) for span in spans]


_Match = tuple[int, int, int]  # (value's index, start, end)
_START = itemgetter(1)
_END = itemgetter(2)


def _runs(matches: list[_Match]) -> list[list[_Match]]:
    """The matches in order, those that overlap or touch in one run: a run stands as a token
    of its own or not at all (`<v><v>` is two copies side by side)."""
    runs: list[list[_Match]] = []
    end = -1
    for match in sorted(matches, key=lambda match: (match[1], -match[2])):
        if runs and match[1] <= end:
            runs[-1].append(match)
        else:
            runs.append([match])
        end = max(end, match[2]) if len(runs[-1]) > 1 else match[2]
    return runs


def _joined(run: list[_Match]) -> list[_Match]:
    """A run's overlapping matches as one (the first value's index), side by side ones apart."""
    joined: list[_Match] = []
    for index, start, end in run:
        if joined and start < joined[-1][2]:
            joined[-1] = (joined[-1][0], joined[-1][1], max(joined[-1][2], end))
        else:
            joined.append((index, start, end))
    return joined


def _meets(found: Sequence[Span], starts: list[int], start: int, end: int) -> bool:
    index = bisect_right(starts, start) - 1
    if index >= 0 and found[index].end > start:
        return True
    return index + 1 < len(found) and found[index + 1].start < end


def _a_token(text: str, start: int, end: int, literals: LiteralIndex | None) -> bool:
    """Whether the copy stands as a token of its own (see the module's docstring)."""
    if literals is None:
        before = _before(text, start)
        after = text[end] if end < len(text) else ""
        return _apart(before, text[start], text[end - 1], after)
    literal = literals.literal_at(start)
    if literal is None or end > literal.end or snap_to_literal(literal, start, end) != (start, end):
        return False
    decoded = literal.decoded if literal.has_escapes else None
    value, first, last = literal.raw, start - literal.start, end - literal.start
    if decoded is not None:
        value, offsets = decoded
        first, last = bisect_left(offsets, first), bisect_left(offsets, last)
    before = _before(value, first)
    after = value[last] if last < len(value) else ""
    return _apart(before, value[first], value[last - 1], after)


# Escapes that stand for a separator, though they end in a letter or a digit.
_SEPARATOR_ESCAPE = re.compile(r"\\[nrt]|%[0-9A-Fa-f]{2}")


def _before(text: str, start: int) -> str:
    """The character before `start`; a blank after an escape that stands for a separator
    (`printf 'ok\\n…'`, `?q=%20…`), whose last character starts no run with the copy."""
    for width in (2, 3):
        if start >= width and _SEPARATOR_ESCAPE.fullmatch(text, start - width, start):
            return " "
    return text[start - 1] if start else ""


def _apart(before: str, first: str, last: str, after: str) -> bool:
    """Not a run of letters and digits going on past either end."""
    return not (before.isalnum() and first.isalnum()) and not (last.isalnum() and after.isalnum())


def _span_of(finding: Finding) -> Span:
    # The preview keeps a format's public prefix (`gh…`): the copies show it too.
    prefix = finding.preview.removesuffix("…")
    return Span(finding.offset, finding.end_offset, finding.rule, 0, finding.replacement, prefix)


class _Piece:
    """A piece some values share (parts.py): the values, sorted as read from it (backwards
    for a last piece), so the one a text agrees with longest is found by bisection."""

    def __init__(self, text: str, at_head: bool, owners: list[tuple[str, int]]) -> None:
        self.text = text
        self.at_head = at_head
        owners.sort()
        self.keys = [key for key, _ in owners]
        self.indexes = [index for _, index in owners]
        self.reach = max(map(len, self.keys))
        # Whether the piece stands again inside a value (`Qa7-Zb9-Qa7-…`): then a match inside
        # a copy read on already may start another.
        self.recurs = any(key.find(text if at_head else text[::-1], 1) > 0 for key in self.keys)

    def longest(self, held: str) -> tuple[int, int]:
        """(value's index, length) of the value whose reading `held` (a text from where this
        piece starts, or backwards from where it ends) agrees with longest."""
        at = bisect_left(self.keys, held)
        best = (-1, -1)
        for neighbour in (at - 1, at):
            if 0 <= neighbour < len(self.keys):
                length = _common_length(held, self.keys[neighbour])
                if length > best[1]:
                    best = (self.indexes[neighbour], length)
        return best


def _pieces_of(values: list[str], origins: dict[str, Span]) -> list[_Piece]:
    """The distinct pieces of the values, each with the values that hold it."""
    shared: dict[tuple[bool, str], list[tuple[str, int]]] = {}
    for index, value in enumerate(values):
        for at_head, piece in pieces(value, origins[value].rule):
            key = value if at_head else value[::-1]
            shared.setdefault((at_head, piece), []).append((key, index))
    return [_Piece(text, at_head, owners) for (at_head, text), owners in shared.items()]


def _common_length(one: str, other: str) -> int:
    """How many first characters the two share (by bisection: slices compare at C speed)."""
    low, high = 0, min(len(one), len(other))
    while low < high:
        middle = (low + high + 1) // 2
        if one[:middle] == other[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def _past_escape(text: str, position: int) -> int:
    """`position`, or where the JSON escape sequence it falls inside ends."""
    slash = text.rfind("\\", max(0, position - 5), position)
    if slash < 0:
        return position
    run = slash
    while run > 0 and text[run - 1] == "\\":
        run -= 1
    if (slash - run) % 2:  # the second of `\\`, an escaped backslash, which ends there
        return position
    end = slash + (6 if text.startswith("u", slash + 1) else 2)
    return max(position, end)


def _a_word(value: str) -> bool:
    """Letters, digits and `_` alone: a short password reads as a name as much as a name does."""
    return value.replace("_", "").isalnum()


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")
