"""JSON documents read with the line each located value starts on (so that a record inside
one document can name its line), and sniffing the leading members of a document from a file's
first bytes."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from functools import partial
from json.decoder import scanstring  # type: ignore[attr-defined]
from pathlib import Path
from typing import Any

from stet_lsp.trajectory.importers.base import Problem
from stet_lsp.trajectory.importers.files import not_utf8, read_text

# Which parts of a document to locate: a dict names the members of an object to descend into,
# a one-element list applies its element to every item of an array, None decodes the value
# whole. Every value reached through a spec has its offset recorded under its JSON pointer.
Spec = dict[str, Any] | list[Any] | None

_DECODER = json.JSONDecoder()
_WHITESPACE = re.compile(r"[ \t\n\r]*")
_MORE_DATA = "more data after the JSON document"


class _Stop(Exception):
    def __init__(self, position: int, message: str) -> None:
        super().__init__(message)
        self.position = position
        self.message = message


class JsonDocument:
    """A file that is one JSON document, decoded with the offset of each located value, so
    that a record inside it can name the line it starts on. A document cut short decodes as
    far as it goes (`error` then says where it stopped)."""

    def __init__(self, text: str, not_utf8: Sequence[tuple[int, int]] = ()) -> None:
        self.text = text
        self.offsets: dict[str, int] = {}
        self.error: tuple[int, str] | None = None
        self.not_utf8 = not_utf8  # (line, column) of bytes read as U+FFFD
        self._lines: dict[int, int] | None = None

    @classmethod
    def read(cls, path: Path) -> JsonDocument:
        return cls(*read_text(path))

    def load(self, spec: Spec) -> Any:
        """The document's value (None when not even its start is JSON)."""
        holder: list[Any] = []
        try:
            end = self._value(self._skip(0), spec, "", holder.append)
            end = self._skip(end)
            if end < len(self.text):
                raise _Stop(end, _MORE_DATA)
        except _Stop as stop:
            self.error = (stop.position, stop.message)
        return holder[0] if holder else None

    def line(self, pointer: str) -> int:
        """The 1-based line the value at `pointer` starts on (1 when it was not located)."""
        offset = self.offsets.get(pointer)
        return 1 if offset is None else self.line_at(offset)

    def line_at(self, offset: int) -> int:
        if self._lines is None:
            # One pass over the located offsets in order: linear in the document's size.
            self._lines = {}
            line, last = 1, 0
            for position in sorted({*self.offsets.values()}):
                line += self.text.count("\n", last, position)
                last = position
                self._lines[position] = line
        found = self._lines.get(offset)
        return found if found is not None else 1 + self.text.count("\n", 0, offset)

    def problems(self, source: str) -> list[Problem]:
        """Where bytes that are not UTF-8 were read as U+FFFD, and where a document cut short
        stops."""
        found = [not_utf8(source, line, column) for line, column in self.not_utf8]
        if self.error is not None:
            position, message = self.error
            found.append(Problem(source, self.line_at(position), f"not JSON: {message}"))
        return found

    def _skip(self, position: int) -> int:
        match = _WHITESPACE.match(self.text, position)
        return match.end() if match else position

    def _decode(self, position: int) -> tuple[Any, int]:
        try:
            return _DECODER.raw_decode(self.text, position)
        except json.JSONDecodeError as error:
            raise _Stop(error.pos, error.msg) from None
        except RecursionError:
            raise _Stop(position, "JSON nested too deeply to read") from None

    def _value(self, position: int, spec: Spec, pointer: str, put: Callable[[Any], Any]) -> int:
        self.offsets[pointer] = position
        opening = self.text[position : position + 1]
        if isinstance(spec, dict) and opening == "{":
            return self._object(position, spec, pointer, put)
        if isinstance(spec, list) and opening == "[":
            return self._array(position, spec[0], pointer, put)
        value, end = self._decode(position)
        put(value)
        return end

    def _object(
        self, position: int, spec: dict[str, Any], pointer: str, put: Callable[[Any], Any]
    ) -> int:
        text = self.text
        members: dict[str, Any] = {}
        put(members)
        position = self._skip(position + 1)
        if text.startswith("}", position):
            return position + 1
        while True:
            if not text.startswith('"', position):
                raise _Stop(position, "expected a member name")
            try:
                key, position = scanstring(text, position + 1)
            except ValueError as error:
                raise _Stop(position, str(error)) from None
            position = self._skip(position)
            if not text.startswith(":", position):
                raise _Stop(position, "expected ':'")
            position = self._skip(position + 1)
            if key in spec:
                put_member = partial(members.__setitem__, key)
                position = self._value(position, spec[key], f"{pointer}/{escape(key)}", put_member)
            else:
                members[key], position = self._decode(position)
            position = self._skip(position)
            if text.startswith(",", position):
                position = self._skip(position + 1)
            elif text.startswith("}", position):
                return position + 1
            else:
                raise _Stop(position, "expected ',' or '}'")

    def _array(self, position: int, spec: Spec, pointer: str, put: Callable[[Any], Any]) -> int:
        text = self.text
        items: list[Any] = []
        put(items)
        position = self._skip(position + 1)
        if text.startswith("]", position):
            return position + 1
        while True:
            position = self._value(position, spec, f"{pointer}/{len(items)}", items.append)
            position = self._skip(position)
            if text.startswith(",", position):
                position = self._skip(position + 1)
            elif text.startswith("]", position):
                return position + 1
            else:
                raise _Stop(position, "expected ',' or ']'")


def starts_an_array_of_objects(head: str) -> bool:
    """Whether a file's start (`head`) opens a JSON array of objects (or an empty one): not
    a log line such as `[DEBUG] …`. A byte order mark before it is skipped."""
    rest = head.lstrip("\ufeff \t\r\n")
    return rest[:1] == "[" and rest[1:].lstrip()[:1] in ("{", "]")


def array_records(path: Path, source: str, problems: list[Problem]) -> list[tuple[int, Any]] | None:
    """(line it starts on, item) of every item of a file that is one JSON array (a run's
    records saved as one document, pretty-printed or not, a byte order mark before it
    skipped); None when the array is the first line of JSON Lines (more values follow it). A
    document cut short gives the items before the cut and a problem saying where it stops;
    text after a document of several lines is a problem too."""
    text, not_utf8 = read_text(path)
    if text.startswith("\ufeff"):
        text = " " + text[1:]  # the same offsets, and lines
    document = JsonDocument(text, not_utf8)
    items = document.load([None])
    if document.error is not None and document.error[1] == _MORE_DATA:
        end = len(text[: document.error[0]].rstrip())
        if "\n" not in text[:end].lstrip():
            return None
    problems.extend(document.problems(source))
    if not isinstance(items, list):
        return []
    return [(document.line(f"/{index}"), item) for index, item in enumerate(items)]


def escape(key: str) -> str:
    """A member name as a JSON Pointer token."""
    return key.replace("~", "~0").replace("/", "~1")


def leading_members(head: str, path: Sequence[str | int] = ()) -> dict[str, Any]:
    """The members of the object at `path` (member names and 0 for an array's first item)
    that are whole within `head`, the start of a file; a member cut off by the end of `head`
    maps to None. Empty when `head` does not start that way. For sniffing: cheap, and never
    fooled by JSON quoted inside a string."""
    found: dict[str, Any] = {}
    document = JsonDocument(head)
    try:
        position = document._skip(0)
        for step in path:
            position = _enter(document, position, step)
        if not head.startswith("{", position):
            return found
        position = document._skip(position + 1)
        while head.startswith('"', position):
            key, position = scanstring(head, position + 1)
            position = document._skip(position)
            if not head.startswith(":", position):
                break
            found[key] = None
            found[key], position = document._decode(document._skip(position + 1))
            position = document._skip(position)
            if not head.startswith(",", position):
                break
            position = document._skip(position + 1)
    except (_Stop, ValueError):
        pass
    return found


def leading_items(head: str, limit: int = 20) -> list[Any]:
    """The items (at most `limit`) of the array a file starts with that are whole within
    `head`, its start; empty when `head` starts no array. For sniffing, as `leading_members`."""
    items: list[Any] = []
    document = JsonDocument(head)
    try:
        position = _enter(document, document._skip(0), 0)
        while len(items) < limit and not head.startswith("]", position):
            item, position = document._decode(position)
            items.append(item)
            position = document._skip(position)
            if not head.startswith(",", position):
                break
            position = document._skip(position + 1)
    except _Stop:
        pass
    return items


def _enter(document: JsonDocument, position: int, step: str | int) -> int:
    head = document.text
    if isinstance(step, int):
        if not head.startswith("[", position):
            raise _Stop(position, "not an array")
        return document._skip(position + 1)
    if not head.startswith("{", position):
        raise _Stop(position, "not an object")
    position = document._skip(position + 1)
    while head.startswith('"', position):
        key, position = scanstring(head, position + 1)
        position = document._skip(position)
        if not head.startswith(":", position):
            break
        position = document._skip(position + 1)
        if key == step:
            return position
        _, position = document._decode(position)
        position = document._skip(position)
        if not head.startswith(",", position):
            break
        position = document._skip(position + 1)
    raise _Stop(position, f"no member {step!r}")
