"""Offsets in a text to (line, column) pairs: 0-based, columns in Python characters."""

from __future__ import annotations

import bisect


class LineIndex:
    def __init__(self, text: str) -> None:
        self.length = len(text)
        starts = [0]
        at = text.find("\n")
        while at >= 0:
            starts.append(at + 1)
            at = text.find("\n", at + 1)
        self.starts = starts

    def line_of(self, offset: int) -> int:
        return bisect.bisect_right(self.starts, offset) - 1

    def position(self, offset: int) -> tuple[int, int]:
        line = self.line_of(offset)
        return line, offset - self.starts[line]

    def line_bounds(self, line: int) -> tuple[int, int]:
        """Start of the line and offset of its newline (or the end of the text)."""
        start = self.starts[line]
        end = self.starts[line + 1] - 1 if line + 1 < len(self.starts) else self.length
        return start, end
