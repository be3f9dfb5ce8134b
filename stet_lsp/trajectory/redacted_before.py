"""What a stored session held redacted, kept redacted when the session is stored again.

A session's stored events can hold redactions its own transcript does not explain: a value
the narration's gate found in another session, carried into every stored session
(`importing._carry_into_sessions`). Gating the transcript again (the session grew, the gate
changed) finds no such value, and once every stored session holds it redacted no compose
finds it either. So the session stored before is compared with the one gated now, as the
gate reads it before any marker of its own, event by event (each event points back to its
source file and line): where the earlier line has a marker and the new one has text, that
text is the value, and it is redacted wherever it stands in the new session, under the
earlier marker. Read before its markers, a line whose other text the gate redacts now (a
value the grown session gives away) is still the earlier line but for the markers' places.
Nothing keeps the values but the comparison: the earlier session is read a line at a time,
and only its lines that hold a marker are kept.

A session that goes on after a capstone is compared so with the committed trajectories that
hold its earlier part (`RedactedBefore.committed`): the events left out of it
(`continuation.leave_out`) are read against their committed lines, so that a value redacted
there (found from its context, or carried from another session) is redacted wherever the part
imported since shows it.

The other sessions of the working trajectory (and of those of its target a capstone committed
and archived) are compared so too, each with its own transcript imported again without writing
(`importing._redacted_in_other_sessions`): a value one session's context gave away is redacted
where the session imported shows it bare.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from stet_lsp.core.safefs import open_regular
from stet_lsp.gate.config import GateConfig
from stet_lsp.gate.redact import MARKER
from stet_lsp.gate.repeats import repeatable

if TYPE_CHECKING:
    from stet_lsp.trajectory.continuation import CommittedPart

_SOURCE = re.compile(
    r',"source":\{"file":"((?:[^"\\]|\\.)*)"(,"line":\d+(?:,"pointer":"(?:[^"\\]|\\.)*")?)\}'
)
"""An event line's source: its file's name and the rest, as the line writes them. The fields
before it are strings, whose quotes are escaped: its first match is the event's own."""
_SESSION = re.compile(r'\{"kind":"[^"\\]*"(?:,"step":\d+)?,"session":"((?:[^"\\]|\\.)*)"')
"""An event line's session, as the line writes it (after its kind and its step)."""
_LINE = re.compile(r',"line":(\d+)')
_POINTER = re.compile(r',"pointer":"((?:[^"\\]|\\.)*)"')
_ABANDONED = ',"abandoned":true'
_KIND = re.compile(r'\{"kind":"([^"\\]*)"')
_PRINTED = "printed-secret"
"""The rule of a value a command printed (`rules_generic.PRINTED_SECRET`, not loaded here:
the rules load after the gate's modules)."""
_TRIES = 1000
"""How many places for the text between two markers one line may try."""

Key = tuple[str, str, str, int]
"""(source file, its line, or its pointer in a JSON document, kind, how many events of that
kind the record gave before), as the line writes them."""


class _Keys:
    """Each line's key, the events of one source record being written one after another."""

    def __init__(self, renamed: dict[str, str]) -> None:
        self.renamed = {_written(name): _written(other) for name, other in renamed.items()}
        self.record: tuple[str, str] | None = None
        self.kinds: dict[str, int] = {}

    def of(self, line: str) -> Key | None:
        kind = _KIND.match(line)
        source = _SOURCE.search(line)
        if kind is None or source is None:
            return None
        name, place = source.group(1, 2)
        if ',"pointer":' in place:
            # A record of a JSON document is known by its place in it: the document is written
            # anew as it grows, and its lines move (a header added before the messages).
            place = _LINE.sub("", place, count=1)
        record = (self.renamed.get(name, name), place)
        if record != self.record:
            self.record = record
            self.kinds = {}
        count = self.kinds[kind[1]] = self.kinds.get(kind[1], 0) + 1
        return (*record, kind[1], count)


def _written(name: str) -> str:
    """A file's name as a JSON string writes it."""
    return json.dumps(name, ensure_ascii=False)[1:-1]


class RedactedBefore:
    """The lines of a session stored before that hold a marker, by their events' keys."""

    def __init__(self, lines: dict[Key, list[str]], config: GateConfig) -> None:
        self.lines = lines
        self.config = config
        self.unread = 0
        """How many of the events holding a marker `values_of_lines` did not read again: the
        lines it was given have no such event, or its line no longer reads as it did but
        for the markers' places."""

    @classmethod
    def read(
        cls,
        path: Path,
        root: Path,
        config: GateConfig,
        before: list[str],
        now: list[str],
    ) -> RedactedBefore | None:
        """The session stored at `path`, None when there is none or it holds no marker.
        `before`, `now`: the names of its source files then and now; one name that went and
        one that came are the same file, renamed."""
        gone, came = set(before) - set(now), set(now) - set(before)
        renamed = {gone.pop(): came.pop()} if len(gone) == len(came) == 1 else {}
        keys = _Keys(renamed)
        lines: dict[Key, list[str]] = {}
        stream = open_regular(path, root)
        if stream is None:
            return None
        with stream:
            for raw in stream:
                line = raw.decode("utf-8", "replace").rstrip("\n")
                key = keys.of(line)
                if key is not None and "[REDACTED:" in line and MARKER.search(line):
                    lines.setdefault(key, []).append(line)
        return cls(lines, config) if lines else None

    @classmethod
    def committed(
        cls, part: CommittedPart, root: Path, config: GateConfig
    ) -> RedactedBefore | None:
        """The lines of the committed trajectories of `part` that hold a marker and are the
        session's (by its ids and its files), None when there are none."""
        keys = _Keys(part.renamed)
        files = {_written(name) for name, _ in part.reached}
        lines: dict[Key, list[str]] = {}
        for path in part.events_files:
            stream = open_regular(path, root)
            if stream is None:
                continue
            with stream:
                for raw in stream:
                    line = raw.decode("utf-8", "replace").rstrip("\n")
                    key = keys.of(line)
                    if (
                        key is not None
                        and key[0] in files
                        and "[REDACTED:" in line
                        and MARKER.search(line)
                        and _session(line) in part.sessions
                    ):
                        lines.setdefault(key, []).append(line)
        return cls(lines, config) if lines else None

    def source_lines(self) -> set[int]:
        """The source lines of the events whose earlier lines hold a marker."""
        return {int(found[1]) for key in self.lines if (found := _LINE.match(key[1]))}

    def source_pointers(self) -> set[str]:
        """The places in a JSON document of the events whose earlier lines hold a marker."""
        return {
            json.loads(f'"{found[1]}"') for key in self.lines if (found := _POINTER.match(key[1]))
        }

    def values_of_lines(
        self, lines: Iterable[str], before_markers: Callable[[str], str]
    ) -> list[tuple[str, int, str]]:
        """As `values`, of `lines` not gated yet: `before_markers` gives a line as the gate
        reads it before any marker of its own, asked only of the lines an earlier one with a
        marker is compared with."""
        found: dict[str, tuple[str, int]] = {}
        keys = _Keys({})
        read: set[Key] = set()
        for line in lines:
            key = keys.of(line)
            if (
                key is not None
                and key in self.lines
                and self._compare_at(key, before_markers(line), found)
            ):
                read.add(key)
        self.unread = len(self.lines.keys() - read)
        return [(rule, number, value) for value, (rule, number) in found.items()]

    def values(self, chunks: Iterator[str]) -> Iterable[tuple[str, int, str]]:
        """(rule, marker's number, value as the line writes it) of each value an earlier line
        held redacted where the same event's line in `chunks` (the session gated again, before
        any marker of its own, a chunk at a time) shows it."""
        found: dict[str, tuple[str, int]] = {}
        keys = _Keys({})
        rest = ""
        for chunk in chunks:
            lines = (rest + chunk).split("\n")
            rest = lines.pop()
            for line in lines:
                self._compare(keys, line, found)
        if rest:
            self._compare(keys, rest, found)
        return [(rule, number, value) for value, (rule, number) in found.items()]

    def _compare(self, keys: _Keys, line: str, found: dict[str, tuple[str, int]]) -> None:
        key = keys.of(line)
        if key is not None:
            self._compare_at(key, line, found)

    def _compare_at(self, key: Key, line: str, found: dict[str, tuple[str, int]]) -> bool:
        """Whether `line` reads as an earlier line of the event but for its markers' places
        (the values there go into `found`)."""
        for old in self.lines.get(key, ()):
            if old == line:
                return True
            literals, markers = _split(_headed_as(old, line))
            values = _captures(line, literals)
            if values is None:
                continue
            for (rule, number), value in zip(markers, values, strict=True):
                if self._redactable(value, rule):
                    found.setdefault(value, (rule, number))
            return True
        return False

    def _redactable(self, value: str, rule: str) -> bool:
        """Whether a value held redacted before is one to redact again: no marker (the new
        line redacts it too), a value no word or path could be (`repeats.repeatable`), or one
        a command printed, which its gating redacted wherever it stands whatever it reads as
        (six characters at least, as `printed-secret` takes), and not one the allowlist has
        allowed since."""
        if not value or "[REDACTED:" in value:
            return False
        try:
            decoded = json.loads(f'"{value}"')
        except ValueError:
            return False
        allowlist = self.config.allowlist
        return (
            isinstance(decoded, str)
            and (repeatable(decoded) or (rule == _PRINTED and len(decoded) >= 6))
            and not (allowlist is not None and allowlist.allows(decoded))
        )


def _session(line: str) -> str | None:
    """The session an event line belongs to, decoded."""
    written = _SESSION.match(line)
    if written is None:
        return None
    try:
        session = json.loads(f'"{written[1]}"')
    except ValueError:
        return None
    return session if isinstance(session, str) else None


def _headed_as(old: str, line: str) -> str:
    """The earlier line with the new line's fields up to its source, and whether it is
    abandoned: its file may have been renamed, and a rewind in what the transcript gained
    since abandons the events before it."""
    was, now = _SOURCE.search(old), _SOURCE.search(line)
    if was is None or now is None:
        return old
    return line[: _head_end(line, now.end())] + old[_head_end(old, was.end()) :]


def _head_end(line: str, source_end: int) -> int:
    return source_end + (len(_ABANDONED) if line.startswith(_ABANDONED, source_end) else 0)


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


def _captures(line: str, literals: list[str]) -> list[str] | None:
    """The texts of `line` that stand where the markers stood between `literals` (the earlier
    line's text around them, none empty but the first and the last), or None when the line
    does not read so. A value is inside one JSON string: it holds no quote but an escaped one.
    The first reading found is taken, each value as short as the others allow."""
    first, last = literals[0], literals[-1]
    if len(line) < len(first) + len(last) or not (line.startswith(first) and line.endswith(last)):
        return None
    end = len(line) - len(last)
    count = len(literals) - 1
    starts = [len(first)]  # where each value placed so far starts
    limits = [_string_end(line, len(first), end)]  # and where its string ends
    looks = [len(first) + 1]  # where to look next for the text after it
    ends: list[int] = []
    tries = _TRIES
    while tries > 0:
        level = len(ends)
        if level == count - 1:
            if starts[level] < end <= limits[level]:
                return [line[a:b] for a, b in zip(starts, [*ends, end], strict=True)]
        else:
            after = literals[level + 1]
            at = line.find(after, looks[level], end)
            tries -= 1
            if 0 <= at <= limits[level]:
                looks[level] = at + 1
                ends.append(at)
                begin = at + len(after)
                starts.append(begin)
                limits.append(_string_end(line, begin, end))
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
