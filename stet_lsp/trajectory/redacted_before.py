"""What a stored session held redacted, kept redacted when the session is stored again.

A session's stored events can hold redactions its own transcript does not explain: a value
the narration's gate found in another session, carried into every stored session
(`importing._carry_into_sessions`). Gating the transcript again (the session grew, the gate
changed) finds no such value, and once every stored session holds it redacted no compose
finds it either. So each line of the session stored before that holds a marker (and of the
committed trajectories that hold part of the session: what it brings after a capstone is
compared with the records they hold, which the import leaves out) is compared with the lines
of the one gated now that are the same event, read as the gate reads them (before any marker
of its own: a value the grown session gives away beside the carried one leaves the line the
same): where the earlier line has a marker and the new one has text between the same texts
around it (`CONTEXT` characters either side, `_windows`), that text is the value, and it is
redacted wherever it stands in the new session, under the earlier marker. An event is known
by what it holds, not by where it came from: its fields up to its source (its kind, session,
agent and time) and what follows the source up to the first marker (at most `CONTEXT`
characters of it). A harness that writes a record again at another line, a file renamed
(with its subagents' files, too) and a rewind since that abandons the event leave it the
same event. Nothing keeps the values but the comparison: the earlier lines are read one at a
time, and only those that hold a marker are kept.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from stet_lsp.core.safefs import open_regular
from stet_lsp.gate.config import GateConfig
from stet_lsp.gate.redact import MARKER
from stet_lsp.gate.repeats import MAX_LENGTH, repeatable

if TYPE_CHECKING:
    from stet_lsp.trajectory.events import EventBase

_SOURCE = re.compile(
    r',"source":\{"file":"(?:[^"\\]|\\.)*"(?:,"line":\d+(?:,"pointer":"(?:[^"\\]|\\.)*")?)\}'
)
"""An event line's source, as the line writes it. The fields before it are strings, whose
quotes are escaped: its first match is the event's own."""
_ABANDONED = ',"abandoned":true'
_STEP = re.compile(r'^(\{"kind":"[^"\\]*"),"step":\d+')
"""A composed event's step, which a stored session's events do not have yet."""
CONTEXT = 64
"""How much of what an event line holds after its source keys it at the most, and how much
text either side of a marker finds its value again."""
_TRIES = 1000
"""How many places in one line a window's first text may try, and each text after a marker."""


def _parts(line: str) -> tuple[str, str] | None:
    """An event line's fields before its source, and what follows the source (and whether
    the event is abandoned); None for a line that names no source."""
    source = _SOURCE.search(line)
    if source is None:
        return None
    end = source.end()
    if line.startswith(_ABANDONED, end):
        end += len(_ABANDONED)
    return line[: source.start()], line[end:]


_Window = tuple[list[str], list[tuple[str, int]]]
"""Markers of an earlier line and the texts around them (`_split`)."""


class _Earlier:
    """A line of the session stored before that holds a marker: what follows its source, and
    its markers in windows."""

    __slots__ = ("rest", "windows")

    def __init__(self, rest: str) -> None:
        self.rest = rest
        self.windows = _windows(rest)


class RedactedBefore:
    """The lines of a session stored before that hold a marker, by what their events hold:
    their fields before the source, then by how many characters of what follows the source
    key them (up to the first marker, at most `CONTEXT`) and those characters."""

    def __init__(
        self, lines: dict[str, dict[int, dict[str, list[_Earlier]]]], config: GateConfig
    ) -> None:
        self.lines = lines
        self.config = config
        self.heads = {_head_fields(head) for head in lines}

    def may_hold(self, event: EventBase) -> bool:
        """Whether a line of `event` may be one of the earlier lines' events: the same fields
        before the source (told from what they hold, without writing the event's line)."""
        return (event.kind, event.session, event.agent, event.time) in self.heads

    @classmethod
    def read(cls, paths: list[Path], root: Path, config: GateConfig) -> RedactedBefore | None:
        """The events of `paths` (the session stored before; the `events.jsonl` of committed
        trajectories that hold part of it, whose steps are left aside), None when none is
        there or they hold no marker."""
        lines: dict[str, dict[int, dict[str, list[_Earlier]]]] = {}
        for path in paths:
            stream = open_regular(path, root)
            if stream is None:
                continue
            with stream:
                for raw in stream:
                    line = raw.decode("utf-8", "replace").rstrip("\n")
                    if "[REDACTED:" not in line:
                        continue
                    parts = _parts(line)
                    if parts is None:
                        continue
                    head, rest = parts
                    first = MARKER.search(rest)
                    if first is None:  # a marker in the head or the source: no value kept
                        continue
                    head = _STEP.sub(r"\1", head, count=1)
                    length = min(first.start(), CONTEXT)
                    by_prefix = lines.setdefault(head, {}).setdefault(length, {})
                    by_prefix.setdefault(rest[:length], []).append(_Earlier(rest))
        return cls(lines, config) if lines else None

    def values(self, chunks: Iterator[str]) -> Iterable[tuple[str, int, str]]:
        """(rule, marker's number, value as the line writes it) of each value an earlier line
        held redacted where a line of the same event in `chunks` (the session gated again as
        the gate reads it, before its own markers, a chunk at a time) shows it."""
        found: dict[str, tuple[str, int]] = {}
        rest = ""
        for chunk in chunks:
            lines = (rest + chunk).split("\n")
            rest = lines.pop()
            for line in lines:
                self._compare(line, found)
        if rest:
            self._compare(rest, found)
        return [(rule, number, value) for value, (rule, number) in found.items()]

    def _compare(self, line: str, found: dict[str, tuple[str, int]]) -> None:
        parts = _parts(line)
        if parts is None:
            return
        head, rest = parts
        by_length = self.lines.get(head)
        if by_length is None:
            return
        earlier = [
            old
            for length, by_prefix in by_length.items()
            for old in by_prefix.get(rest[:length], ())
        ]
        if any(old.rest == rest for old in earlier):
            return  # the same line: it shows nothing the earlier one held redacted
        for old in earlier:
            for literals, markers in old.windows:
                for values in _readings(rest, literals):
                    for (rule, number), value in zip(markers, values, strict=True):
                        if self._redactable(value):
                            found.setdefault(value, (rule, number))

    def _redactable(self, value: str) -> bool:
        """Whether a value held redacted before is one to redact again: no marker (the new
        line redacts it too), a value no word or path could be (`repeats.repeatable`), and not
        one the allowlist has allowed since."""
        if not value or "[REDACTED:" in value:
            return False
        try:
            decoded = json.loads(f'"{value}"')
        except ValueError:
            return False
        allowlist = self.config.allowlist
        return (
            isinstance(decoded, str)
            and repeatable(decoded)
            and not (allowlist is not None and allowlist.allows(decoded))
        )


def _head_fields(head: str) -> tuple[object, ...] | None:
    """(kind, session, agent, time) of a line's fields before its source."""
    try:
        fields = json.loads(head + "}")
    except ValueError:
        return None
    if not isinstance(fields, dict):
        return None
    return tuple(fields.get(name) for name in ("kind", "session", "agent", "time"))


def _windows(rest: str) -> list[_Window]:
    """The markers of what follows an earlier line's source, each with up to `CONTEXT`
    characters of the text either side of it (after it, to the end of its JSON string at the
    most: a harness that writes a record again adds its fields after): markers closer than
    twice that share a window, with the whole text between them. A window is read wherever
    its first text stands in the new line, so a change elsewhere in the line leaves it."""
    literals, markers = _split(rest)
    windows: dict[tuple[str, ...], _Window] = {}  # one of each: the same texts read the same
    texts, held = [literals[0][-CONTEXT:]], []
    for index, marker in enumerate(markers):
        held.append(marker)
        after = literals[index + 1]
        if index < len(markers) - 1 and len(after) < 2 * CONTEXT:
            texts.append(after)
            continue
        texts.append(after[: min(CONTEXT, _string_end(after, 0, len(after)) + 1)])
        if texts[0] and texts[-1]:
            windows.setdefault(tuple(texts), (texts, held))
        texts, held = [after[-CONTEXT:]], []
    return list(windows.values())


def _readings(line: str, literals: list[str]) -> Iterator[list[str]]:
    """The values at each place of `line` where a window's texts (`literals`) stand around
    them."""
    tries = _TRIES
    at = line.find(literals[0])
    while at >= 0 and tries > 0:
        values = _captures(line, literals, at)
        if values is not None:
            yield values
        at = line.find(literals[0], at + 1)
        tries -= 1


def _split(line: str) -> tuple[list[str], list[tuple[str, int]]]:
    """The line's texts around its markers, and the markers' rules and numbers. Markers side
    by side stand for one text, taken for the first one's value."""
    literals = [""]
    markers: list[tuple[str, int]] = []
    position = 0
    for match in MARKER.finditer(line):
        text = line[position : match.start()]
        position = match.end()
        if markers and not text:
            continue
        literals[-1] += text
        literals.append("")
        markers.append((match.group(1), int(match.group(2))))
    literals[-1] += line[position:]
    return literals, markers


def _captures(line: str, literals: list[str], start: int) -> list[str] | None:
    """The texts of `line` that stand where the markers stood between `literals` (the earlier
    line's texts around them, none empty), the first text at `start`, or None when the line
    does not read so there. A value is inside one JSON string: it holds no quote but an
    escaped one. The first reading found is taken, each value as short as the others allow."""
    count = len(literals) - 1
    begin = start + len(literals[0])
    starts = [begin]  # where each value placed so far starts
    limits = [_value_end(line, begin)]  # and where it may end at the latest
    looks = [begin + 1]  # where to look next for the text after it
    ends: list[int] = []
    tries = _TRIES
    while tries > 0:
        level = len(ends)
        after = literals[level + 1]
        at = line.find(after, looks[level], limits[level] + len(after))
        tries -= 1
        if at >= 0 and after[0] == '"' and at < limits[level]:
            looks[level] = at + 1  # an escaped quote inside the value
            continue
        if at >= 0:
            if level == count - 1:
                return [line[a:b] for a, b in zip(starts, [*ends, at], strict=True)]
            looks[level] = at + 1
            ends.append(at)
            begin = at + len(after)
            starts.append(begin)
            limits.append(_value_end(line, begin))
            looks.append(begin + 1)
            continue
        if level == 0:
            return None
        # No (other) place for this value: the next place of the one before.
        starts.pop()
        limits.pop()
        looks.pop()
        ends.pop()
    return None


def _value_end(line: str, start: int) -> int:
    """Where a value that starts at `start` ends at the latest: where its JSON string does,
    and no further than the longest value looked for again may be written (a character
    each escape of six)."""
    return _string_end(line, start, min(len(line), start + 6 * MAX_LENGTH))


def _string_end(line: str, start: int, end: int) -> int:
    """Where the JSON string that `start` is inside ends (its closing quote), at most `end`."""
    quote = line.find('"', start, end)
    while quote >= 0:
        slashes = 0
        while quote - slashes - 1 >= start and line[quote - slashes - 1] == "\\":
            slashes += 1
        if slashes % 2 == 0:
            return quote
        quote = line.find('"', quote + 1, end)
    return end
