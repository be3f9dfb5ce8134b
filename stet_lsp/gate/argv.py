"""A command given as a list of arguments (`{"command": ["docker", "login", "-p", "…"]}`) is
one line to the rules, as a shell shows it: in JSON text, an array of strings that holds a
flag (`"-p"`, `"--body"`), or an element ending as a name does before its value (`"token="`,
`"password:"`, `"Authorization: Bearer"`), is joined by spaces and scanned as one line, and
each span lands back in the elements it covers."""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from stet_lsp.gate.jsonaware import Literal, LiteralIndex
from stet_lsp.gate.spans import Span

_SEPARATORS = ('", "', '","')
# Where one element ends and the next is an argument (in the lowered text). A hit is at the
# joint's first character; the element before it ends at the first quote from there.
JOINTS = (
    *(separator + "-" for separator in _SEPARATORS),
    *(end + separator for end in ("=", ":", "bearer", "basic") for separator in _SEPARATORS),
)
_FIRSTS = frozenset(joint[0] for joint in JOINTS)
# What the joint must be, read in the raw text: a flag after it (one word: a removed line of a
# diff, `"-    return x"`, is no flag), or a name before it (`"DB_PASSWORD="`, not the end of
# a base64 line or of a line of code).
_FLAG_AFTER = re.compile(r'"[ \t]{0,8},[ \t]{0,8}"--?[A-Za-z](?:[^\s"\\]|\\.){0,127}"')
_NAME = re.compile(r"-{0,2}[A-Za-z_][\w.-]{0,63} ?[=:]|(?:[\w-]{1,64}: ?)?(?:bearer|basic)", re.I)
_MAX_NAME = 80
_GAP = re.compile(r"[ \t]{0,8},[ \t]{0,8}")
_OPEN = re.compile(r"\[[ \t]{0,8}")
_CLOSE = re.compile(r"[ \t]{0,8}\]")
# Longer lists are data, not a command line (their strings are scanned on their own anyway).
_MAX_ELEMENTS = 64
_MAX_LENGTH = 16 * 1024


def is_joint(text: str, lowered: str, offset: int) -> bool:
    """Whether a prefilter hit at `offset` (`lowered`: the text through `ascii_lower`) is one
    of the `JOINTS` that stands between arguments."""
    if lowered[offset] not in _FIRSTS or not lowered.startswith(JOINTS, offset):
        return False
    if lowered[offset] == '"':
        return _FLAG_AFTER.match(text, offset) is not None
    quote = text.find('"', offset)
    opening = text.rfind('"', max(0, quote - _MAX_NAME), offset)
    return opening >= 0 and _NAME.fullmatch(text, opening + 1, quote) is not None


@dataclass(frozen=True)
class _Element:
    at: int
    """Where its decoded value starts in the joined text."""
    literal: Literal
    offsets: list[int]
    """Raw offset (in the literal) of each decoded character, and one past the end."""


class ArgvView:
    """The argument lists around `hits`, each joined by spaces on a line of `text`."""

    def __init__(self, literals: LiteralIndex, hits: list[int]) -> None:
        lines: list[str] = []
        self._elements: list[_Element] = []
        length = 0
        seen: set[int] = set()
        for hit in hits:
            elements = _array_at(literals, hit)
            if elements is None or elements[0].start in seen:
                continue
            seen.add(elements[0].start)
            values = []
            for literal in elements:
                decoded = literal.decoded
                assert decoded is not None  # _array_at keeps only decodable elements
                self._elements.append(_Element(length, literal, decoded[1]))
                values.append(decoded[0])
                length += len(decoded[0]) + 1
            lines.append(" ".join(values) + "\n")
        self.text = "".join(lines)
        self._starts = [element.at for element in self._elements]

    def to_raw(self, span: Span) -> list[Span]:
        """`span` (found in `text`) as a span in each element it covers, in the raw text."""
        mapped = []
        index = max(0, bisect.bisect_right(self._starts, span.start) - 1)
        while index < len(self._elements) and self._elements[index].at < span.end:
            element = self._elements[index]
            size = len(element.offsets) - 1
            first = max(span.start - element.at, 0)
            last = min(span.end - element.at, size)
            if last > first:
                start = element.literal.start
                mapped.append(
                    span._replace(
                        start=start + element.offsets[first], end=start + element.offsets[last]
                    )
                )
            index += 1
        return mapped


def _array_at(literals: LiteralIndex, hit: int) -> list[Literal] | None:
    """The strings of the array whose element ends at the first quote from `hit`, when the
    array holds strings alone (short enough, each decodable)."""
    text = literals.text
    quote = text.find('"', hit, hit + 8)
    if quote < 0:
        return None
    found = literals.line_literals(quote)
    if found is None:
        return None
    line, index = found
    if line[index].end != quote:
        return None
    # Walked no further than a list of `_MAX_ELEMENTS` reaches: a longer one is no command,
    # and each of its joints would walk it all again.
    first = index
    while (
        first > 0
        and index - first <= _MAX_ELEMENTS
        and _GAP.fullmatch(text, line[first - 1].end + 1, line[first].start - 1)
    ):
        first -= 1
    last = index
    while (
        last + 1 < len(line)
        and last - first < _MAX_ELEMENTS
        and _GAP.fullmatch(text, line[last].end + 1, line[last + 1].start - 1)
    ):
        last += 1
    elements = line[first : last + 1]
    if len(elements) < 2 or len(elements) > _MAX_ELEMENTS:
        return None
    if elements[-1].end - elements[0].start > _MAX_LENGTH:
        return None
    opening = text.rfind("[", max(0, elements[0].start - 10), elements[0].start)
    if opening < 0 or not _OPEN.fullmatch(text, opening, elements[0].start - 1):
        return None
    if not _CLOSE.match(text, elements[-1].end + 1):
        return None
    if any(literal.decoded is None for literal in elements):
        return None
    return elements
