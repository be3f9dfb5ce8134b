"""Reading transcripts: plain or zstd-compressed text, JSONL records with their line numbers,
and the digest of a file's bytes."""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import IO, Any, BinaryIO

from stet_lsp.core.errors import StetError
from stet_lsp.core.safefs import open_regular
from stet_lsp.trajectory.importers.base import Problem

_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_BLANK = frozenset(b" \t\n\r\x0b\x0c")  # what bytes.strip() strips


def open_source(path: Path) -> BinaryIO:
    """A transcript's file open for reading: a regular file (links followed), refused at once
    when it is anything else (a FIFO would block the read forever)."""
    try:
        stream = open_regular(path)
    except OSError as error:
        raise StetError(f"{path}: {error.strerror or error}") from None
    if stream is None:
        raise StetError(f"{path}: no such file")
    return stream


def open_bytes(path: Path) -> IO[bytes]:
    """The file's bytes, line by line if need be; zstd frames are decompressed whatever the
    file is called."""
    raw: IO[bytes] = open_source(path)
    if raw.read(4) == _ZSTD_MAGIC:
        raw.seek(0)
        import zstandard

        reader = zstandard.ZstdDecompressor().stream_reader(raw, closefd=True)
        return io.BufferedReader(reader)  # a raw stream: no readline of its own
    raw.seek(0)
    return raw


def open_text(path: Path) -> IO[str]:
    """The file as text (invalid UTF-8 replaced, never an error); zstd frames are decompressed
    whatever the file is called."""
    return io.TextIOWrapper(open_bytes(path), encoding="utf-8", errors="replace", newline="")


def read_text(path: Path) -> tuple[str, list[tuple[int, int]]]:
    """The whole file as text (zstd frames decompressed), with bytes that are not UTF-8 read as
    U+FFFD; and where such bytes are: the line and column of the first of each line holding
    some, for a Problem (`not_utf8`) to name."""
    with open_bytes(path) as stream:
        data = stream.read()
    try:
        return data.decode("utf-8"), []
    except UnicodeDecodeError:
        pass
    found = []
    for number, line in enumerate(data.split(b"\n"), 1):
        try:
            line.decode("utf-8")
        except UnicodeDecodeError as error:
            found.append((number, len(line[: error.start].decode("utf-8", "replace")) + 1))
    return data.decode("utf-8", "replace"), found


def not_utf8(source: str, line: int, column: int) -> Problem:
    return Problem(source, line, f"bytes that are not UTF-8 at column {column}, read as U+FFFD")


def not_json(line: str, error: json.JSONDecodeError) -> str:
    """A line that is not JSON, placed as the problem's other columns are: 1-based, in
    characters of the line (json's own place counts the line's break as a line of its own,
    and from 0)."""
    column = min(error.pos, len(line.rstrip("\r\n"))) + 1
    said = error.msg if error.msg.endswith(" at") else f"{error.msg} at"  # "starting at"
    return f"not JSON: {said} column {column}"


def jsonl_records(path: Path, source: str, problems: list[Problem]) -> Iterator[tuple[int, Any]]:
    """(line number, decoded value) of every JSON line; blank lines are skipped and a line
    that is not JSON (a truncated last line, say) becomes a Problem and is skipped. Bytes that
    are not UTF-8 are read as U+FFFD, and a Problem says where.

    msgspec decodes a line in about a third of json.loads' time; what it refuses (NaN, a lone
    surrogate escape, a number out of range, invalid UTF-8, broken JSON) goes to json.loads,
    so every value and every error message is json's."""
    import msgspec

    decode = msgspec.json.Decoder().decode
    with open_bytes(path) as stream:
        for number, line in enumerate(stream, 1):
            # A line's first byte tells most apart from a blank one without copying it.
            if line[0] in _BLANK and not line.strip():
                continue
            try:
                value = decode(line)
            except (msgspec.DecodeError, RecursionError):
                try:
                    text = line.decode("utf-8")
                except UnicodeDecodeError as error:
                    column = len(line[: error.start].decode("utf-8", "replace")) + 1
                    problems.append(not_utf8(source, number, column))
                    text = line.decode("utf-8", "replace")
                try:
                    value = json.loads(text)
                except json.JSONDecodeError as error:
                    joined = _joined_values(text) if error.msg == "Extra data" else []
                    if not joined:
                        problems.append(Problem(source, number, not_json(text, error)))
                        continue
                    said = (
                        f"{len(joined)} JSON values on one line (a line break missing): each read"
                    )
                    problems.append(Problem(source, number, said))
                    for value in joined:
                        yield number, value
                    continue
                except ValueError as error:
                    problems.append(Problem(source, number, f"not JSON: {error}"))
                    continue
                except RecursionError:
                    problems.append(Problem(source, number, "JSON nested too deeply to read"))
                    continue
            yield number, value


def _joined_values(text: str) -> list[Any]:
    """The JSON values of a line that holds several, one after the other (a writer stopped
    before its line break, and the next record written after it); [] when what follows the
    first is not JSON values alone."""
    values: list[Any] = []
    decoder, position, end = json.JSONDecoder(), 0, len(text.rstrip())
    while position < end:
        while text[position].isspace():
            position += 1
        try:
            value, position = decoder.raw_decode(text, position)
        except (ValueError, RecursionError):
            return []
        values.append(value)
    return values if len(values) > 1 else []


def file_digest(path: Path) -> str:
    """The first 16 hex digits of the SHA-256 of a file's bytes (as stored: a compressed file's
    compressed bytes): the session id of a transcript that names none."""
    digest = hashlib.sha256()
    with open_source(path) as stream:
        for block in iter(partial(stream.read, 1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:16]
