"""Lines as editors and the Language Server Protocol count them: only `\\n`, `\\r\\n` and `\\r`
end a line. `str.splitlines()` also breaks at form feed, vertical tab, `\\x1c`-`\\x1e`, `\\x85`,
`\\u2028` and `\\u2029`, so a line number counted that way can point below the line meant."""

from __future__ import annotations

import bisect
import re

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_NEWLINE = re.compile("\n")
_LINE_WITH_BREAK = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")
_LINE_BREAK_KEPT = re.compile(r"(\r\n|\r|\n)")


def lines_of(text: str, *, keep_breaks: bool = False) -> list[str]:
    """`text.splitlines(keep_breaks)`, broken only where an editor breaks a line."""
    if keep_breaks:
        if "\r" in text:
            return _LINE_WITH_BREAK.findall(text)
        *lines, last = text.split("\n")
        return [line + "\n" for line in lines] + ([last] if last else [])
    lines = split_lines(text)
    if lines and not lines[-1]:
        lines.pop()
    return lines


def split_lines(text: str) -> list[str]:
    """The lines of `text` without their breaks; a text ending in a break ends in ""."""
    return _LINE_BREAK.split(text) if "\r" in text else text.split("\n")


def split_breaks(text: str) -> tuple[list[str], list[str] | None]:
    """`split_lines(text)` and the break that ends each line ("" after the last), or None for
    the breaks of a text that holds no `\\r` (each is then `\\n`)."""
    if "\r" not in text:
        return text.split("\n"), None
    parts = _LINE_BREAK_KEPT.split(text)
    return parts[::2], [*parts[1::2], ""]


def undecodable_at(data: bytes, error: UnicodeDecodeError) -> str:
    """Where `data`'s first byte that is not UTF-8 (`error`, of decoding `data` whole) is, as
    editors and compilers number a place for people: `line L, column C`, both 1-based, the
    column counted in characters."""
    before = split_lines(data[: error.start].decode("utf-8", "replace"))
    return f"line {len(before)}, column {len(before[-1]) + 1}"


class LineIndex:
    """Offsets in a text to (line, column) pairs: 0-based, columns in Python characters."""

    def __init__(self, text: str) -> None:
        self.length = len(text)
        self.starts = [0]
        """Offset of each line's first character."""
        self._ends: list[int] | None = None
        """Offset of each line's break, where a break can be two characters (`\\r\\n`)."""
        if "\r" in text:
            self._ends = []
            for found in _LINE_BREAK.finditer(text):
                self._ends.append(found.start())
                self.starts.append(found.end())
            self._ends.append(self.length)
        else:
            self.starts += [found.end() for found in _NEWLINE.finditer(text)]

    def line_of(self, offset: int) -> int:
        return bisect.bisect_right(self.starts, offset) - 1

    def position(self, offset: int) -> tuple[int, int]:
        line = self.line_of(offset)
        return line, offset - self.starts[line]

    def line_bounds(self, line: int) -> tuple[int, int]:
        """Start of the line and offset of its break (or the end of the text)."""
        if self._ends is not None:
            return self.starts[line], self._ends[line]
        last = line + 1 == len(self.starts)
        return self.starts[line], self.length if last else self.starts[line + 1] - 1
