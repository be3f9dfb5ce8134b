"""events.jsonl as read from disk: the one reader of its bytes for every part of Stet that
reads the file (the command line's `show`, `validate` and `export`, provenance, the editor's
narration, definitions and workspace symbols, step marks, the capstone).

Stet writes no byte order mark, but an editor on Windows may save one before the first line
when the file is edited by hand: it is no part of the first event's JSON (RFC 8259 lets a
reader ignore it), so it is left out here and step 1 reads as any other."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from stet_lsp.core.safefs import read_regular

BOM = b"\xef\xbb\xbf"


def events_text(data: bytes) -> str:
    """events.jsonl's bytes as text, a byte that is not UTF-8 read as U+FFFD."""
    return data.removeprefix(BOM).decode("utf-8", "replace")


def read_events_text(path: Path, root: Path | None) -> str | None:
    """The text of the events.jsonl at `path` (a regular file inside `root`, when given);
    None when there is none."""
    data = read_regular(path, root)
    return None if data is None else events_text(data)


def events_lines(lines: Iterable[bytes]) -> Iterator[bytes]:
    """The lines of an events.jsonl read line by line (a binary stream), the first without
    a byte order mark."""
    iterator = iter(lines)
    first = next(iterator, None)
    if first is None:
        return
    yield first.removeprefix(BOM)
    yield from iterator
