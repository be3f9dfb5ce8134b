"""A session that goes on after a capstone: the part of it a committed trajectory holds
already is left out when it is imported again (the Stop hook imports the whole session at the
end of every turn), so no step is committed twice. What is left is the work done since, into
the next working trajectory; the session's start stays, as the context its steps need."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from stet_lsp.core.errors import StetError
from stet_lsp.core.safefs import read_regular
from stet_lsp.trajectory.events import EventBase, SessionEnd, SourceRef
from stet_lsp.trajectory.importers.base import ParsedSession
from stet_lsp.trajectory.meta import Meta
from stet_lsp.trajectory.store import EVENTS, META, Folder, folders, read_small

if TYPE_CHECKING:
    from stet_lsp.gate.config import GateConfig

COMMITTED = "committed"
"""The reason `dropped` counts the events a committed trajectory holds already."""

Place = tuple[str, str | None]
"""Where a record's position counts: its file, and in a file that is one JSON document the
array the record is an item of (`/steps`, `/messages`), else None (a line of the file)."""


def place_and_index(source: SourceRef) -> tuple[Place, int] | None:
    """A record's place and its position there: its line in a file of lines; in a JSON
    document, its index in the first array its pointer enters (`/steps/12/...` is item 12
    of `/steps`), for a document rewritten as it grows keeps its items' indexes, not their
    lines. None for a record of a document that is in no array (the document's own fields:
    its start, its end, its totals)."""
    if source.pointer is None:
        return (source.file, None), source.line
    segments = source.pointer.split("/")[1:]
    for depth, segment in enumerate(segments):
        if segment.isascii() and segment.isdigit() and len(segment) <= 9:
            return (source.file, "/".join(["", *segments[:depth]])), int(segment)
    return None


@dataclass(frozen=True)
class CommittedPart:
    """The committed trajectories that hold part of a session, and for each of its files the
    last record they hold."""

    trajectories: tuple[str, ...]
    reached: dict[Place, int]
    events_files: tuple[Path, ...] = ()
    """The events.jsonl of each of `trajectories`."""
    sessions: frozenset[str] = frozenset()
    """The session's ids (its own and its subagents'), as imported and as the gate wrote them."""
    renamed: dict[str, str] = field(default_factory=dict)
    """A file's name in those trajectories → its name now (a copy, a rollout compressed since)."""

    def fingerprint(self) -> str:
        places = sorted(
            json.dumps([file, array, index]) for (file, array), index in self.reached.items()
        )
        return json.dumps([self.trajectories, places])


def committed_part(root: Path, parsed: ParsedSession, config: GateConfig) -> CommittedPart | None:
    """The part of `parsed` that the repository's committed trajectories hold, if any, by
    session id: a file of the session under another name (a copy, a rollout compressed since)
    holds the same records as the file the trajectory read. Raises CountedTwice when a
    committed trajectory holds the session from another format (its transcript, and now an
    ATIF document of it). A trajectory that cannot be read is passed over: it holds nothing
    this import can trust."""
    committed = [folder for folder in folders(root) if not folder.working]
    if not committed:
        return None
    ids = _session_ids(parsed, config)
    written = [json.dumps(id, ensure_ascii=False)[1:-1].encode() for id in ids]
    own_file = _main_file(parsed)
    trajectories: list[str] = []
    events_files: list[Path] = []
    reached: dict[Place, int] = {}
    aliases: dict[str, str] = {}
    for folder in committed:
        try:
            data = read_small(folder.path / META, root, folder.relative / META)
            # Most trajectories hold other sessions: told without reading them as a model.
            if data is None or not any(id in data for id in written):
                continue
            held = [s for s in Meta.model_validate_json(data).sources if s.session in ids]
            places, started_in = _places(folder, ids)
        except (StetError, ValidationError, RecursionError):
            continue
        other = next((s for s in held if s.format != parsed.format), None)
        if other is not None:
            raise CountedTwice(other.session, folder.id, other.format, parsed.format)
        names = {source.name for source in held}
        renamed = [name for name in started_in if name in names and name not in parsed.sources]
        alias: dict[str, str] = {}
        if own_file is not None and own_file not in names and len(renamed) == 1:
            alias[renamed[0]] = own_file
            names.add(own_file)
        found = False
        for (name, array), index in places.items():
            name = alias.get(name, name)
            if name in names and name in parsed.sources:
                place = (name, array)
                reached[place] = max(reached.get(place, 0), index)
                found = True
        if found:
            trajectories.append(folder.id)
            events_files.append(folder.path / EVENTS)
            aliases.update(alias)
    if not reached:
        return None
    return CommittedPart(tuple(trajectories), reached, tuple(events_files), frozenset(ids), aliases)


class CountedTwice(StetError):
    """A committed trajectory holds the session as another format imported it."""

    def __init__(self, session: str, trajectory: str, held_as: str, importing_as: str) -> None:
        super().__init__(
            f"session {session} is committed already, in trajectory {trajectory}, imported as "
            f"{held_as}; importing it again as {importing_as} would count it twice"
        )


def _main_file(parsed: ParsedSession) -> str | None:
    """The file the session started in (its start's source), not a subagent's."""
    return next(
        (
            event.source.file
            for event in parsed.events
            if event.kind == "session_start" and event.agent is None
        ),
        None,
    )


def committed_sessions(root: Path) -> dict[tuple[str, str], list[str]]:
    """(format, session id) of each session the repository's committed trajectories hold (in
    part or whole) → those trajectories, as their meta.json's `sources` name them."""
    held: dict[tuple[str, str], list[str]] = {}
    for folder in folders(root):
        if folder.working:
            continue
        try:
            meta = folder.read_meta()
        except (StetError, RecursionError):
            continue
        for key in dict.fromkeys((source.format, source.session) for source in meta.sources):
            held.setdefault(key, []).append(folder.id)
    return held


def leave_out(parsed: ParsedSession, part: CommittedPart) -> list[EventBase]:
    """Takes out of `parsed` the events and problems of the records `part` holds (the main
    session's start aside), and returns those events. The session's end no longer carries the
    whole session's reported cost: the part committed counted it already, and what is left
    counts its own requests."""
    kept = []
    held = []
    for event in parsed.events:
        own_start = (
            event.kind == "session_start"
            and event.agent is None
            and event.session == parsed.session_id
        )
        if own_start or not _held(part, event.source):
            kept.append(event)
        else:
            held.append(event)
    left = len(held)
    parsed.events[:] = kept
    parsed.problems[:] = [
        problem
        for problem in parsed.problems
        if not _held(part, SourceRef(file=problem.source, line=max(problem.line, 1)))
    ]
    for event in kept:
        if isinstance(event, SessionEnd):
            event.cost_usd = None
    if left:
        parsed.dropped[COMMITTED] += left
    return held


class CommittedAlready(StetError):
    """The session has nothing since what committed trajectories hold of it."""

    def __init__(self, source: Path, session: str, trajectories: tuple[str, ...]) -> None:
        self.short = f"committed already, in trajectory {', '.join(trajectories)}"
        super().__init__(f"{source}: session {session} is {self.short}, and has nothing since")


def refuse_nothing_since(source: Path, parsed: ParsedSession, part: CommittedPart) -> None:
    """Raises CommittedAlready when all that is left of the session is its start and end and
    records no event kind reads (what a harness writes as a session closes)."""
    if not parsed.has_work():
        raise CommittedAlready(source, parsed.session_id, part.trajectories)


def _held(part: CommittedPart, source: SourceRef) -> bool:
    found = place_and_index(source)
    if found is None:
        return False
    place, index = found
    last = part.reached.get(place)
    return last is not None and index <= last


def _session_ids(parsed: ParsedSession, config: GateConfig) -> set[str]:
    """The session's ids (its own and its subagents'), as imported and as the gate writes
    them: a committed trajectory holds them gated."""
    ids = parsed.session_ids()
    return {*ids, *gated_ids(ids, config).values()}


def gated_ids(ids: Iterable[str], config: GateConfig) -> dict[str, str]:
    """Each session id as events.jsonl holds it: through the gate, as a JSON Lines field."""
    from stet_lsp.gate import redact_text

    ordered = sorted(set(ids))
    text = "".join(json.dumps({"session": id}, ensure_ascii=False) + "\n" for id in ordered)
    gated = redact_text(text, config=config, path="events.jsonl").text.splitlines()
    return {id: json.loads(line)["session"] for id, line in zip(ordered, gated, strict=True)}


def _places(folder: Folder, ids: set[str]) -> tuple[dict[Place, int], set[str]]:
    """The last record of each place the events of `folder` read for a session of `ids`,
    and the files those sessions started in (their main session's start)."""
    data = read_regular(folder.path / EVENTS, folder.root)
    places: dict[Place, int] = {}
    started_in: set[str] = set()
    for line in (data or b"").split(b"\n"):
        found = _source(line, ids)
        if found is None:
            continue
        (place, index), started = found
        places[place] = max(places.get(place, 0), index)
        if started:
            started_in.add(place[0])
    return places, started_in


def _source(line: bytes, ids: set[str]) -> tuple[tuple[Place, int], bool] | None:
    """Where an event line's record is, and whether it is a main session's start."""
    try:
        event: Any = json.loads(line)
        source = event["source"]
        name, number, pointer = source["file"], source["line"], source.get("pointer")
    except (ValueError, RecursionError, TypeError, KeyError, AttributeError):
        return None
    if not isinstance(name, str) or event.get("session") not in ids:
        return None
    if isinstance(number, bool) or not isinstance(number, int) or number < 1:
        return None
    if not isinstance(pointer, str | None):
        return None
    found = place_and_index(SourceRef(file=name, line=number, pointer=pointer))
    if found is None:
        return None
    return found, event.get("kind") == "session_start" and event.get("agent") is None
