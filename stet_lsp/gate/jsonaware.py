"""JSON and JSONL: string literals decoded for scanning, spans mapped back to the raw text.

A span found in a decoded value maps to whole escape sequences in the raw text, and a span
found in the raw text is trimmed to whole escape sequences inside its literal, so replacing
spans never breaks a literal: redacted JSON stays JSON with the same structure.
"""

from __future__ import annotations

import bisect
import json
import json.decoder
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cached_property

from stet_lsp.core.lines import LineIndex

# A JSON string literal; raw newlines cannot occur inside one, so a broken line cannot
# swallow the next. The unrolled form matches in linear time.
_STRING_LITERAL = re.compile(r'"([^"\\\n]*(?:\\.[^"\\\n]*)*)"')
_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|(.))", re.DOTALL)
# json's C string scanner (typeshed does not list it): (decoded, offset after the quote).
_ScanString = Callable[[str, int, bool], tuple[str, int]]
_scan_string: _ScanString = json.decoder.scanstring  # type: ignore[attr-defined]
_SIMPLE_ESCAPES = {
    '"': '"',
    "\\": "\\",
    "/": "/",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
}


@dataclass(frozen=True)
class Literal:
    start: int
    """Offset of the first content character (after the opening quote)."""
    end: int
    """Offset of the closing quote."""
    raw: str

    @property
    def has_escapes(self) -> bool:
        return "\\" in self.raw

    @cached_property
    def decoded(self) -> tuple[str, list[int]] | None:
        """The value and, per decoded character, its raw offset (plus one past the end)."""
        return decode_with_offsets(self.raw)


def decode_with_offsets(raw: str) -> tuple[str, list[int]] | None:
    parts: list[str] = []
    offsets: list[int] = []
    position = 0
    pending_high: tuple[int, int] | None = None
    for match in _ESCAPE.finditer(raw):
        if match.start() > position:
            if pending_high is not None:
                parts.append(chr(pending_high[0]))
                offsets.append(pending_high[1])
                pending_high = None
            parts.append(raw[position : match.start()])
            offsets.extend(range(position, match.start()))
        hex_digits, simple = match.groups()
        if hex_digits is not None:
            code = int(hex_digits, 16)
            if pending_high is not None and 0xDC00 <= code <= 0xDFFF:
                high, high_at = pending_high
                parts.append(chr(0x10000 + ((high - 0xD800) << 10) + (code - 0xDC00)))
                offsets.append(high_at)
                pending_high = None
            else:
                if pending_high is not None:
                    parts.append(chr(pending_high[0]))
                    offsets.append(pending_high[1])
                    pending_high = None
                if 0xD800 <= code <= 0xDBFF:
                    pending_high = (code, match.start())
                else:
                    parts.append(chr(code))
                    offsets.append(match.start())
        else:
            if pending_high is not None:
                parts.append(chr(pending_high[0]))
                offsets.append(pending_high[1])
                pending_high = None
            replacement = _SIMPLE_ESCAPES.get(simple)
            if replacement is None:
                return None
            parts.append(replacement)
            offsets.append(match.start())
        position = match.end()
    if pending_high is not None:
        parts.append(chr(pending_high[0]))
        offsets.append(pending_high[1])
    parts.append(raw[position:])
    offsets.extend(range(position, len(raw)))
    offsets.append(len(raw))
    return "".join(parts), offsets


class LiteralIndex:
    """String literals of the lines that need them, found lazily, line by line."""

    def __init__(self, text: str, lines: LineIndex) -> None:
        self.text = text
        self.lines = lines
        self._by_line: dict[int, tuple[list[int], list[Literal]]] = {}

    def _literals_of_line(self, line: int) -> tuple[list[int], list[Literal]]:
        cached = self._by_line.get(line)
        if cached is None:
            start, end = self.lines.line_bounds(line)
            literals = [
                Literal(m.start(1), m.end(1), m.group(1))
                for m in _STRING_LITERAL.finditer(self.text, start, end)
            ]
            cached = ([literal.start for literal in literals], literals)
            self._by_line[line] = cached
        return cached

    def literal_at(self, offset: int) -> Literal | None:
        """The literal whose content (or closing quote) holds `offset`, if any."""
        found = self.line_literals(offset)
        return None if found is None else found[0][found[1]]

    def line_literals(self, offset: int) -> tuple[list[Literal], int] | None:
        """The literals of the line holding `offset`, in order, and the index of the one whose
        content (or closing quote) holds it."""
        starts, literals = self._literals_of_line(self.lines.line_of(offset))
        index = bisect.bisect_right(starts, offset) - 1
        if index >= 0 and literals[index].start <= offset <= literals[index].end:
            return literals, index
        return None


def snap_to_literal(literal: Literal, start: int, end: int) -> tuple[int, int] | None:
    """Trim a raw span to the literal's content and to whole escape sequences."""
    start = max(start, literal.start)
    end = min(end, literal.end)
    if literal.has_escapes and literal.decoded is not None:
        _, offsets = literal.decoded
        relative_start = start - literal.start
        relative_end = end - literal.start
        first = bisect.bisect_left(offsets, relative_start)
        last = bisect.bisect_right(offsets, relative_end) - 1
        if first >= len(offsets) or last < 0:
            return None
        start = literal.start + offsets[first]
        end = literal.start + offsets[last]
    return (start, end) if end > start else None


class View:
    """A decoded copy of `raw[base:...]` and the way back: each decoded character that came
    from an escape sequence is a mark (view offset, raw start, raw end); every other
    character maps one to one."""

    def __init__(
        self,
        text: str,
        base: int,
        marks: list[tuple[int, int, int]] | Callable[[], list[tuple[int, int, int]]],
    ) -> None:
        self.text = text
        self.base = base
        self._marks_source = marks

    @cached_property
    def _marks(self) -> list[tuple[int, int, int]]:
        source = self._marks_source
        return source if isinstance(source, list) else source()

    @cached_property
    def _at(self) -> list[int]:
        return [mark[0] for mark in self._marks]

    def _char(self, offset: int) -> tuple[int, int]:
        """Raw bounds of the view character at `offset`."""
        index = bisect.bisect_right(self._at, offset) - 1
        if index < 0:
            return self.base + offset, self.base + offset + 1
        at, start, end = self._marks[index]
        if at == offset:
            return start, end
        raw = end + offset - at - 1
        return raw, raw + 1

    def to_raw(self, start: int, end: int) -> tuple[int, int]:
        """Raw bounds of the view span [start, end): whole escape sequences."""
        if end <= start:
            raw = self._char(start)[0] if start < len(self.text) else self._end()
            return raw, raw
        return self._char(start)[0], self._char(end - 1)[1]

    def _end(self) -> int:
        if not self.text:
            return self.base
        return self._char(len(self.text) - 1)[1]


def view_replacing(
    text: str, start: int, end: int, replaced: Iterable[tuple[int, int, str]]
) -> View | None:
    """`text[start:end]` with each raw range (start, end, in order, within the range) read as
    its one replacement character; None when there is none."""
    parts: list[str] = []
    marks: list[tuple[int, int, int]] = []
    length = 0
    position = start
    for raw_start, raw_end, char in replaced:
        parts.append(text[position:raw_start])
        length += raw_start - position
        parts.append(char)
        marks.append((length, raw_start, raw_end))
        length += 1
        position = raw_end
    if not marks:
        return None
    parts.append(text[position:end])
    return View("".join(parts), start, marks)


def escape_view(text: str, start: int, end: int) -> View:
    """`text[start:end]` with every JSON escape decoded (surrogate pairs joined). `start` must
    not fall inside an escape sequence (a line start does not). An invalid escape stays raw.

    A span found in a view is rare: the way back (a mark per escape) is worked out only when
    one is mapped. The text comes from the C decoder, string literal by string literal, when
    every escape in the range is valid JSON inside a literal; otherwise escape by escape."""
    decoded = _decoded_literals(text, start, end)
    if decoded is None:
        view_text, marks = _decode_escapes(text, start, end)
        return View(view_text, start, marks)
    return View(decoded, start, lambda: _decode_escapes(text, start, end)[1])


def _decoded_literals(text: str, start: int, end: int) -> str | None:
    """`text[start:end]` with each string literal decoded by json's C scanner; None when a
    backslash stands outside a literal, an escape is not JSON or a literal does not end in
    the range (the escape-by-escape decoder keeps such text as it is)."""
    # The scanner reads on to a literal's end, which for one never closed in the range may
    # be the text's: it reads the range alone, so a line costs its own length.
    text = text[start:end]
    parts: list[str] = []
    position = 0
    while (quote := text.find('"', position)) >= 0:
        try:
            value, after = _scan_string(text, quote + 1, False)
        except ValueError:
            return None
        parts.append(text[position : quote + 1])
        parts.append(value)
        parts.append('"')
        position = after
    parts.append(text[position:])
    if any("\\" in parts[index] for index in range(0, len(parts), 3)):
        return None
    return "".join(parts)


def _decode_escapes(text: str, start: int, end: int) -> tuple[str, list[tuple[int, int, int]]]:
    parts: list[str] = []
    marks: list[tuple[int, int, int]] = []
    length = 0
    position = start
    pending: tuple[int, int, int] | None = None  # a high surrogate: (code, raw start, end)

    def flush() -> None:
        nonlocal pending, length
        if pending is not None:
            parts.append(chr(pending[0]))
            marks.append((length, pending[1], pending[2]))
            length += 1
            pending = None

    for match in _ESCAPE.finditer(text, start, end):
        if match.start() > position:
            flush()
            parts.append(text[position : match.start()])
            length += match.start() - position
        hex_digits, simple = match.groups()
        if hex_digits is not None:
            code = int(hex_digits, 16)
            if pending is not None and 0xDC00 <= code <= 0xDFFF:
                joined = 0x10000 + ((pending[0] - 0xD800) << 10) + (code - 0xDC00)
                parts.append(chr(joined))
                marks.append((length, pending[1], match.end()))
                length += 1
                pending = None
            else:
                flush()
                if 0xD800 <= code <= 0xDBFF:
                    pending = (code, match.start(), match.end())
                else:
                    parts.append(chr(code))
                    marks.append((length, match.start(), match.end()))
                    length += 1
        else:
            flush()
            replacement = _SIMPLE_ESCAPES.get(simple)
            if replacement is None:  # not JSON (a broken line): kept as it is
                parts.append(match.group())
                length += len(match.group())
            else:
                parts.append(replacement)
                marks.append((length, match.start(), match.end()))
                length += 1
        position = match.end()
    flush()
    parts.append(text[position:end])
    return "".join(parts), marks


def literals_between(text: str, lines: LiteralIndex, start: int, end: int) -> list[Literal]:
    """The string literals whose content meets [start, end), in order (line by line)."""
    found: list[Literal] = []
    line = lines.lines.line_of(start)
    last = lines.lines.line_of(max(start, end - 1))
    while line <= last:
        starts, literals = lines._literals_of_line(line)
        # Literals do not overlap: those meeting the span follow the last one starting at or
        # before `start` (a bisect, so many spans on one long line stay linear).
        index = max(0, bisect.bisect_right(starts, start) - 1)
        while index < len(literals) and literals[index].start < end:
            if literals[index].end > start:
                found.append(literals[index])
            index += 1
        line += 1
    return found


def json_decodings(value: str) -> list[str]:
    r"""`value`, then what it stands for read as the inside of a JSON string, again while it
    holds an escape and reads so: `Zr7\\qW3…`, `Zr7\qW3…`, `Zr7\qW3…`. Each is shorter."""
    decodings = [value]
    while "\\" in value:
        try:
            value = str(json.loads(f'"{value}"'))
        except ValueError:
            break
        if value == decodings[-1]:
            break
        decodings.append(value)
    return decodings
