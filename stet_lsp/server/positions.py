"""Translation between Stet's positions (0-based lines, str columns) and the client's (lines
and code units in the negotiated encoding)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from json.encoder import encode_basestring_ascii
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from stet_lsp.core.items import Item
from stet_lsp.server.settings import SEVERITIES

SOURCE = "stet"
"""`Diagnostic.source` of everything Stet shows."""


def client_position(codec: Any, lines: list[str], line: int, column: int) -> types.Position:
    text = lines[line] if 0 <= line < len(lines) else ""
    return types.Position(line=line, character=units(codec, text[:column]))


def units(codec: Any, text: str) -> int:
    """How many code units of the negotiated encoding `text` takes (encoded in C: the
    codec's own count walks the text a character at a time in Python)."""
    if text.isascii():
        return len(text)
    encoding = getattr(codec, "encoding", types.PositionEncodingKind.Utf16)
    if encoding == types.PositionEncodingKind.Utf8:
        return len(text.encode("utf-8", "surrogatepass"))
    if encoding == types.PositionEncodingKind.Utf32:
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def client_range(
    codec: Any, lines: list[str], line: int, column: int, end_line: int, end_column: int
) -> types.Range:
    return types.Range(
        start=client_position(codec, lines, line, column),
        end=client_position(codec, lines, end_line, end_column),
    )


def line_range(codec: Any, lines: list[str], line: int) -> types.Range:
    """The text of one line, from its first non-blank character."""
    text = lines[line] if 0 <= line < len(lines) else ""
    start = len(text) - len(text.lstrip())
    return client_range(codec, lines, line, start, line, len(text))


def whole_text_range(codec: Any, lines: list[str]) -> types.Range:
    last = len(lines) - 1
    return types.Range(
        start=types.Position(line=0, character=0),
        end=client_position(codec, lines, last, len(lines[last])),
    )


def server_line(lines: list[str], position: types.Position) -> int:
    if position.line < 0 or position.line >= max(len(lines), 1):
        raise JsonRpcInvalidParams(
            f"line {position.line} is outside the document ({len(lines)} lines)"
        )
    return position.line


def server_position(codec: Any, lines: list[str], position: types.Position) -> tuple[int, int]:
    """A client position as (line, str index), clamped to the document."""
    if position.line >= len(lines):
        return len(lines) - 1, len(lines[-1])
    line = lines[max(position.line, 0)]
    if line.isascii():
        return position.line, min(max(position.character, 0), len(line))
    # The first index whose prefix takes at least that many code units (a position inside a
    # character is past it), found by halves: a walk a character at a time made each change
    # of a long line cost the line's length in Python calls, and an edit of hundreds of
    # changes on one line (a redaction of every secret in it) seconds.
    low, high = 0, len(line)
    while low < high:
        middle = (low + high) // 2
        if units(codec, line[:middle]) >= position.character:
            high = middle
        else:
            low = middle + 1
    return position.line, low


def diagnostic(codec: Any, lines: list[str], item: Item, **data: Any) -> types.Diagnostic:
    """One of core's check items as the client sees it; `data` adds to the item's data."""
    return types.Diagnostic(
        range=client_range(codec, lines, item.line, item.column, item.end_line, item.end_column),
        message=item.message,
        severity=SEVERITIES[item.severity],
        source=SOURCE,
        code=item.code,
        data={**item.data, **data} if item.data or data else None,
    )


class RawJSON(str):
    """A result already written as JSON text, sent as it is (`StetProtocol._send_response`)."""


@dataclass(frozen=True)
class LensesJSON:
    """Code lenses already written as JSON, the items of their array joined by commas: a
    trajectory's 100,000 step lenses are made once, in the worker that indexes it, and each
    answer sends the text instead of making and converting an object per lens."""

    items: str

    @classmethod
    def at_line_starts(cls, lenses: Iterable[tuple[int, str]]) -> LensesJSON:
        """A lens with a title (and no command) at the start of each line."""
        return cls(",".join(_lens_json(line, title) for line, title in lenses))


def _lens_json(line: int, title: str) -> str:
    start = f'{{"line":{line},"character":0}}'
    command = f'{{"title":{encode_basestring_ascii(title)},"command":""}}'
    return f'{{"range":{{"start":{start},"end":{start}}},"command":{command}}}'
