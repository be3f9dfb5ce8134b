"""A Python file's lines with margin notes of every shape among repeated lines, for the
tests of recording many notes at once (core and server alike)."""

from __future__ import annotations

REPEATED = ["def handler(request):", "    return request.send()", "", "    pass"]


def notes_among_repeated_lines(count: int) -> list[str]:
    """`count` lines of four repeated ones, with notes on their own lines, after code, and
    over two lines among them."""
    lines: list[str] = []
    for number in range(count):
        lines.append(REPEATED[number % 4])
        if number % 9 == 3:
            lines.append(f"    # stet: keep the retry count in one place ({number})")
        if number % 13 == 5:
            lines[-1] += f"  # stet: trailing {number}"
        if number % 29 == 7:
            lines += ["    # stet(convention): a note", "    # over two lines"]
    return lines
