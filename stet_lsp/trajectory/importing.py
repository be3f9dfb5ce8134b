"""Importing a transcript into a target's working trajectory.

read (an importer) → normalise (relative paths, `.stetignore`) → serialise → the gate (every
byte, before anything is written, even to the cache) → `sessions/<n>.jsonl` → compose
`events.jsonl`, `meta.json` and `narration.md` from every session imported so far.
Importing the same session again with the same source bytes changes nothing (unless the
gate's configuration changed since: then it is gated again).

A value one session gives away only by its context stays redacted in every other session of
the trajectory, whichever is imported first: what the session's gate redacted is redacted in
the others as it is composed (`compose`'s `redacted`), and what the others hold redacted is
read again from their transcripts for it (`_redacted_in_other_sessions`).

The gate runs with the repository's configuration (`stet_lsp.gate.load_config`: the reviewed
allowlist and `.stet/gate.toml`), or the one a front end passes (which adds its own settings
to the repository's).

Graduation (stet_lsp/trajectory/graduation.py) keeps its events in a session of its own,
`sessions/graduation.jsonl` with its record, written through `write_session` and composed
with the imported ones.
"""

from __future__ import annotations

import codecs
import collections
import contextlib
import hashlib
import json
import os
import posixpath
import re
import stat
from collections import Counter
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from stet_lsp.core.collector import collector_paused
from stet_lsp.core.errors import StetError
from stet_lsp.core.gitindex import index_holds_under, index_tracks
from stet_lsp.core.jsonread import object_or_none
from stet_lsp.core.safefs import (
    atomic_write,
    atomic_writer,
    keep_aside,
    make_dirs,
    read_regular,
    remove_regular,
)
from stet_lsp.core.sheet_format import SHEET_LIMIT, written_name
from stet_lsp.core.targets import Target
from stet_lsp.trajectory import checkout
from stet_lsp.trajectory.checkout import checked_out_part
from stet_lsp.trajectory.continuation import (
    CommittedPart,
    CountedTwice,
    committed_part,
    leave_out,
    refuse_nothing_since,
)
from stet_lsp.trajectory.events import Event, EventBase, SessionStart, event_json, parse_event
from stet_lsp.trajectory.importers import detect, importer, read_head, sniffs
from stet_lsp.trajectory.importers.base import EVENT_DEPTH, Importer, ParsedSession, Problem
from stet_lsp.trajectory.importers.files import open_source
from stet_lsp.trajectory.jsontext import without_lone_surrogates
from stet_lsp.trajectory.meta import Meta, ProblemRecord, SourceFile, TargetRef, summarise
from stet_lsp.trajectory.normalize import Normalizer, inside_repository, sandbox_paths
from stet_lsp.trajectory.printed import secrets_calls_printed
from stet_lsp.trajectory.redacted_before import RedactedBefore
from stet_lsp.trajectory.renames import follow_rename
from stet_lsp.trajectory.store import (
    ARCHIVE,
    COMPOSING,
    EVENTS,
    GRADUATION_SESSION,
    KEPT_BEFORE_COMPOSE,
    KEPT_BEFORE_IMPORT,
    META,
    NARRATION,
    SESSIONS,
    Folder,
    TooLarge,
    folders,
    mark_composing,
    put_back_all,
    read_small,
    refuse_tracked,
    settle,
    working_folder,
    working_lock,
)

if TYPE_CHECKING:
    from stet_lsp.gate.config import GateConfig
    from stet_lsp.gate.findings import Finding
    from stet_lsp.gate.report import RedactionReport
    from stet_lsp.gate.stream import Carried, Earlier

Progress = Callable[[str], None]
"""Told what the import is doing now (a phase name), for a progress line or report."""

RECORD_FORMAT = 1
"""The version of a session record (`sessions/<n>.json`) this code reads and writes."""
GRADUATION_IMPORTER = "stet-graduation"
_RECORD_FORMAT = RECORD_FORMAT  # the name bench/bench_import.py reads
BLOCK_CHARACTERS = 1 << 20
"""About how much of a session's events is serialised at a time (see `_jsonl_blocks`)."""


@dataclass(frozen=True)
class ImportResult:
    trajectory: str
    folder: str
    session: str
    format: str
    events: int
    changed: bool
    problems: list[ProblemRecord] = field(default_factory=list)
    redaction: dict[str, int] = field(default_factory=dict)
    dropped: dict[str, int] = field(default_factory=dict)
    outside: bool = False
    """The session worked outside this repository (its paths are kept as they were)."""
    continues: list[str] = field(default_factory=list)
    """The committed trajectories that hold the session's earlier part, left out here."""
    also_in: list[str] = field(default_factory=list)
    """Other targets' working trajectories that hold the session too: each capstone would
    commit its steps."""
    warnings: list[str] = field(default_factory=list)
    """What the import could not make sure of (`_redacted_in_other_sessions`)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "trajectory": self.trajectory,
            "folder": self.folder,
            "session": self.session,
            "format": self.format,
            "events": self.events,
            "changed": self.changed,
            "problems": [problem.model_dump() for problem in self.problems],
            "redaction": self.redaction,
            "dropped": self.dropped,
            "outside_repository": self.outside,
            "continues": self.continues,
            "also_in": self.also_in,
            "warnings": self.warnings,
        }


def import_transcript(
    target: Target,
    source: Path,
    *,
    format_name: str | None = None,
    progress: Progress | None = None,
    gate_config: GateConfig | None = None,
) -> ImportResult:
    """Import the transcript at `source` into the target's working trajectory, through the
    gate: `gate_config`, else the repository's (`load_config`: its allowlist and
    `.stet/gate.toml`)."""
    from stet_lsp.gate import load_config

    tell = progress or (lambda phase: None)
    tell("reading")
    config = gate_config or load_config(target.root)  # a malformed file: nothing is done
    source = transcript_source(source)
    chosen: Importer = importer(format_name) if format_name else detect(source)
    if format_name and not sniffs(chosen, read_head(source)):
        raise StetError(
            f"{source}: not in the format it was named as ({chosen.label}); name another "
            "format, or none to have it detected"
        )
    # Paused for the whole import: the events (parsed, then composed) are alive through most
    # of it, and a collection between its phases would walk every one of them.
    with collector_paused():
        return _import(target, source, chosen, tell, config)


def _import(
    target: Target, source: Path, chosen: Importer, tell: Progress, config: GateConfig
) -> ImportResult:
    parsed = chosen.parse(source)
    if not parsed.events:
        raise StetError(f"{source}: no events in this {chosen.label}")
    follow_rename(target, config, wait=True)
    folder = working_folder(target)
    outside = _worked_outside(target.root, parsed)
    stem = _session_stem(parsed)
    sources = [
        SourceFile(name=name, sha256=_sha256(path), format=parsed.format, session=parsed.session_id)
        for name, path in sorted(parsed.sources.items())
    ]
    with working_lock(folder):
        refuse_tracked(folder)
        _refuse_a_session_twice(folder, stem, parsed, source)  # before any event is left out
        checked_out = checked_out_part(target.root, parsed, _previous_base(folder))
        checkout.leave_out(parsed, checked_out)
        checkout.refuse_nothing_since(source, parsed, checked_out)
        # Under the lock a capstone holds while it commits: what it commits is seen here.
        try:
            part = committed_part(target.root, parsed, config)
        except CountedTwice as error:
            raise StetError(f"{source}: {error}") from None
        digest = sources_sha256(sources, parsed.consulted, part)
        committed: list[EventBase] = []
        if part is not None:
            committed = leave_out(parsed, part)
            refuse_nothing_since(source, parsed, part)
        record = read_record(folder, stem)
        config = _as_strict_as_before(config, record)
        if part is not None:
            config = _as_strict_as_committed(config, target.root, part, stem)
        if (
            record is not None
            and record.get("sources_sha256") == digest
            and record.get("gate") == config.fingerprint
        ):
            if _composed(folder, record["sources"]):
                return _result(folder, parsed, record, changed=False, outside=outside)
            # Stored, but not in the trajectory (graduation's events wait, a file of it was
            # removed): compose now.
            tell("composing")
            compose(target, folder, config)
            return _result(folder, parsed, record, changed=True, outside=outside)
        tell("redacting")
        held = _held_in_committed(target, parsed, part, committed, config)
        del committed
        in_others, warnings = _redacted_in_other_sessions(target, folder, stem, config)
        held += in_others
        del in_others
        continues = part.trajectories if part is not None else ()
        # What its gate redacts, for the other stored sessions: with none, the compose has
        # nothing to carry it into (and would read the session just stored again for it).
        others = any(other != stem for other, _ in _records(folder))
        redacted: list[tuple[str, str]] | None = [] if others else None
        with _stored_until_composed(target, folder, stem):
            record = _store_session(
                target,
                folder,
                stem,
                parsed,
                sources,
                digest,
                config,
                continues,
                record,
                held,
                redacted,
                source,
            )
            tell("composing")
            compose(target, folder, config, redacted or ())
            del redacted
    return _result(folder, parsed, record, changed=True, outside=outside, warnings=warnings)


@contextlib.contextmanager
def _stored_until_composed(target: Target, folder: Folder, stem: str) -> Iterator[None]:
    """The session stored in the block, taken back when composing it fails (its events do
    not read back as events, a write fails): the session's files are again what they were,
    so the error's "nothing was changed" holds and the next import is not refused by them.
    A stop (an interrupt) takes it back too, unless its compose was done, as the next command
    that reads the trajectory does after a kill (`store.settle`)."""
    sessions = folder.path / SESSIONS
    # Put back in this order, removed in the other: a session file whose record is missing
    # is imported again, one beside another session's record would be taken for it.
    paths = [sessions / f"{stem}.jsonl", sessions / f"{stem}.json"]
    before = {path: keep_aside(path, target.root, KEPT_BEFORE_IMPORT) for path in paths}
    marker = read_regular(sessions / COMPOSING, target.root) if pending(folder) else None
    try:
        yield
    except Exception:
        _put_back(target, before, paths[-1])
        if marker is None:
            remove_regular(sessions / COMPOSING, target.root)
        else:  # as it was: what else it marked is still to compose
            atomic_write(sessions / COMPOSING, marker, target.root)
        raise
    except BaseException:
        with contextlib.suppress(StetError, OSError):  # else the next reader settles it
            settle(folder)
        raise
    _let_go(before)


_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _as_strict_as_before(config: GateConfig, record: dict[str, Any] | None) -> GateConfig:
    """`config`, strict and redacting the environment variables' values the session was
    gated with before (`import --env-name` or `--strict` once, then a plain import by a hook):
    importing a session again never writes a value an earlier import redacted."""
    kept = record.get("gate_settings") if record is not None else None
    if not isinstance(kept, dict):
        return config
    names = kept.get("env_names")
    known = (
        [n for n in names if isinstance(n, str) and _ENV_NAME.fullmatch(n)]
        if isinstance(names, list)
        else []
    )
    strict = kept.get("strict") is True
    if (config.strict or not strict) and set(known) <= set(config.env_names):
        return config
    return replace(config, strict=config.strict or strict, env_names=(*config.env_names, *known))


def _as_strict_as_committed(
    config: GateConfig, root: Path, part: CommittedPart, stem: str
) -> GateConfig:
    """`config`, as strict as the session's part a capstone committed was gated: the working
    trajectory that part was imported into is archived with its sessions' records
    (`.stet/cache/trajectories/.archive/<target-key>-<id>/`), so what came since is never
    gated less strictly than the part committed (a plain import by a hook after `import
    --strict`)."""
    try:
        archived = os.listdir(root / ARCHIVE)
    except OSError:  # none (a clone of the repository): nothing is known of the settings
        return config
    for trajectory in part.trajectories:
        for name in archived:
            if name.endswith(f"-{trajectory}"):
                path = ARCHIVE / name / SESSIONS / f"{stem}.json"
                if index_tracks(root, path.as_posix()) is not False:
                    continue  # committed with the repository (or cannot be told): no record
                try:
                    data = read_small(root / path, root, path)
                except (TooLarge, StetError):
                    continue
                record = object_or_none(data) if data is not None else None
                config = _as_strict_as_before(config, record)
    return config


def _refuse_a_session_twice(folder: Folder, stem: str, parsed: ParsedSession, source: Path) -> None:
    """A session the trajectory holds from another format (its transcript, and now an ATIF
    document of it, such as Stet's own export) would be counted twice: refused."""
    sessions = parsed.session_ids()
    for other, record in _records(folder):
        if other != stem and record.get("session") in sessions:
            raise StetError(
                f"{source}: session {record['session']} is in this trajectory already, imported "
                f"as {record.get('importer')}; importing it again as {parsed.format} would count "
                "it twice"
            )


def write_session(
    target: Target, folder: Folder, stem: str, text: str, record: dict[str, Any]
) -> None:
    """Store one session of the working trajectory: its events (`text`, already through the
    gate) and then its record, each atomically. Call it holding the working trajectory's
    lock; `compose` afterwards puts the session into the trajectory."""
    sessions = make_dirs(target.root, folder.relative / SESSIONS)
    mark_composing(folder)
    # The old record goes first: a session file whose record is missing is imported again,
    # one beside another session's record would be taken for it.
    remove_regular(sessions / f"{stem}.json", target.root)
    atomic_write(sessions / f"{stem}.jsonl", text.encode("utf-8"), target.root)
    _write_record(target, sessions / f"{stem}.json", record)


def _write_record(target: Target, path: Path, record: dict[str, Any]) -> None:
    record_text = json.dumps(record, ensure_ascii=False, indent=2) + "\n"
    atomic_write(path, record_text.encode("utf-8"), target.root)


def compose(
    target: Target,
    folder: Folder,
    gate_config: GateConfig | None = None,
    redacted: Iterable[tuple[str, str]] = (),
) -> None:
    """events.jsonl, meta.json and narration.md from every session of the working folder (the
    imported ones and graduation's), in the order the sessions started (their records'
    `first_time`); steps are numbered from 1 across them. The narration passes the gate
    (`gate_config`, else the repository's). `redacted`: (rule, value as JSON text writes it)
    of each value a session stored now had redacted wherever it stands (`redact_blocks`),
    redacted in the narration, the events and every stored session as the narration's
    findings are: another session may show bare a value only that one's context gave away.
    When a write fails, the files written before it are put back as they were. Call it
    holding the working trajectory's lock (`store.working_lock`: what a writer killed midway
    left is settled first)."""
    from stet_lsp.gate import load_config
    from stet_lsp.gate.stream import Carried, known_value

    config = gate_config or load_config(target.root)
    refuse_tracked(folder)
    records = _records(folder)
    lines: list[str] = []
    events: list[Event] = []
    redaction: Counter[str] = Counter()
    dropped: Counter[str] = Counter()
    problems: list[ProblemRecord] = []
    sources: list[SourceFile] = []
    for stem, record in records:
        data = read_regular(folder.path / SESSIONS / f"{stem}.jsonl", target.root)
        if data is None:
            raise StetError(f"{folder.relative / SESSIONS / stem}.jsonl: missing; import again")
        # Only "\n" ends a line: a text may hold U+2028, NEL and the like (json.dumps with
        # ensure_ascii=False writes them as they are), which str.splitlines() would split at.
        # Split as bytes, each decoded alone (no UTF-8 sequence holds a newline byte): the
        # file is never held as text, twice the size of its bytes once one character is not
        # ASCII.
        stored = data.split(b"\n")
        del data
        for number, raw in enumerate(stored, 1):
            if raw:
                line = _with_step(raw.decode("utf-8", "replace"), len(lines) + 1)
                if line is None:
                    raise _not_an_event(folder, stem, number, "not a JSON object of an event")
                lines.append(line)
                events.append(_stored_event(line, folder, stem, number))
        del stored
        redaction.update(record.get("redaction", {}))
        dropped.update(record.get("dropped", {}))
        problems += [ProblemRecord(**problem) for problem in record.get("problems", [])]
        sources += [SourceFile(**source) for source in record.get("sources", [])]
    previous = _previous_base(folder)
    meta = summarise(
        trajectory_id=folder.id,
        target=TargetRef(kind=target.kind, name=written_name(target.name), key=target.key),
        base_commit=previous,
        events=events,
        redaction=redaction,
        dropped=dropped,
        problems=problems,
        sources=sources,
    )
    if meta.base_commit is None:
        meta.base_commit = _head(target.root)
    meta_path = folder.path / META
    # narration.md kept first, as it is written first: `store.settle` tells by it whether a
    # compose killed midway had begun to write.
    replaced = _kept_aside(target, [folder.path / name for name in (NARRATION, EVENTS, META)])
    carried = Carried()
    known = [(value, known_value(rule, value)) for rule, value in redacted]
    gated = gated_narration(meta, events, lines, config, carried, known)

    def carry() -> None:
        if carried.values:
            _carry_into_sessions(target, folder, records, carried, replaced)

    try:
        with contextlib.closing(gated):  # a helper still at work stops if a write fails
            # The narration is written first: a value its gate found is redacted in the events
            # too (counted in meta.json, written last), and in the stored sessions before
            # meta.json is written, which ends the compose (`store.settle`). Line by line: one
            # string of every line would take up to four bytes a character, all of them as
            # wide as the widest.
            shown = carried.redact_json_lines(lines, "events.jsonl", meta.redaction)
            events_bytes = (line.encode("utf-8") + b"\n" for line in shown)
            narration = (text.encode("utf-8") for text in gated)
            folder.write(events_bytes, meta, narration, before_meta=carry)
    except Exception:
        # A write failed after others were done (events.jsonl after narration.md, a stored
        # session after the trajectory): every file is put back, as the error's "nothing
        # was changed" says.
        _put_back(target, _ending_with(replaced, meta_path), folder.path / NARRATION)
        raise
    except BaseException:
        # A stop (an interrupt): as a kill's, settled by whether meta.json was written.
        with contextlib.suppress(StetError, OSError):  # else the next reader settles it
            settle(folder)
        raise
    # The marker before the files kept: while they are there, a settling sees meta.json
    # written and removes the marker itself.
    if pending(folder):
        remove_regular(folder.path / SESSIONS / COMPOSING, target.root)
    _let_go(_ending_with(replaced, meta_path))


def _kept_aside(target: Target, paths: list[Path]) -> dict[Path, Path | None]:
    """Each regular file of `paths` kept aside (None for one not there), to put back; a
    path that is no regular file is left out (nothing can be written there)."""
    kept: dict[Path, Path | None] = {}
    for path in paths:
        if path.is_symlink() or (path.exists() and not path.is_file()):
            continue
        # A file that cannot be kept (no room for a copy) stops the compose before it writes.
        kept[path] = keep_aside(path, target.root, KEPT_BEFORE_COMPOSE)
    return kept


def _put_back(target: Target, files: dict[Path, Path | None], decisive: Path) -> None:
    """Each file as it was: those that were not there removed, the last first (meta.json before
    the files it completes, a session's record before its events), then those kept aside put
    back so that a stop midway leaves what the next settling finishes (`store.put_back_all`,
    `decisive` the file it judges by)."""
    for path, aside in reversed(files.items()):
        if aside is None:
            remove_regular(path, target.root)
    put_back_all({path: aside for path, aside in files.items() if aside}, decisive, target.root)


def _let_go(files: dict[Path, Path | None]) -> None:
    """The files kept aside are not needed: the new ones stay."""
    for aside in files.values():
        if aside is not None:
            with contextlib.suppress(OSError):
                os.unlink(aside)


def _ending_with(files: dict[Path, Path | None], last: Path) -> dict[Path, Path | None]:
    """`files` with `last` (the file a writer writes last) moved to the end: its copy is put
    back or let go after the others, so while it is kept they all are (`store.settle`)."""
    return {path: files[path] for path in sorted(files, key=lambda path: path == last)}


def _carry_into_sessions(
    target: Target,
    folder: Folder,
    records: list[tuple[str, dict[str, Any]]],
    carried: Carried,
    replaced: dict[Path, Path | None],
) -> None:
    """What the narration's gate found, redacted in the stored sessions too (as in
    events.jsonl, under the same markers), each counted in its session's record: the cache
    keeps no value the trajectory redacts, and composing again finds nothing more to carry.
    The session file first: a stop between the two leaves a count short, never a value.
    Each file is kept aside in `replaced` before it is replaced, for a failure to put back."""
    for stem, record in records:
        path = folder.path / SESSIONS / f"{stem}.jsonl"
        data = read_regular(path, target.root)
        if data is None:
            continue
        counts: dict[str, int] = {}
        lines = [raw.decode("utf-8", "replace") for raw in data.split(b"\n")]
        del data
        shown = list(carried.redact_json_lines(lines, "events.jsonl", counts))
        if not counts:
            continue
        record_path = path.with_suffix(".json")
        replaced.update(_kept_aside(target, [path, record_path]))
        atomic_write(path, "\n".join(shown).encode("utf-8"), target.root)
        redaction = Counter(record.get("redaction", {}))
        redaction.update(counts)
        _write_record(target, record_path, {**record, "redaction": dict(redaction)})


def compose_pending(target: Target, folder: Folder, gate_config: GateConfig | None = None) -> bool:
    """Compose when a session was stored and not composed yet (a graduation stopped, or
    failed, between the two; a folder moved to a renamed branch's key). Call it holding the
    working trajectory's lock (`store.working_lock`, which settles what a writer killed
    midway left first). Whether it composed."""
    if not pending(folder):
        return False
    compose(target, folder, gate_config)
    return True


def gated_narration(
    meta: Meta,
    events: list[Event],
    lines: list[str],
    config: GateConfig,
    carried: Carried | None = None,
    known: Sequence[tuple[str, list[Finding]]] = (),
) -> Generator[str, None, None]:
    """narration.md of the composed `events` (`lines`: their lines of events.jsonl), through
    the gate a run of parts at a time (on two cores when long): it is never held whole.
    `carried` keeps what its gate found; `known`, values redacted wherever they stand."""
    from stet_lsp.gate.parallel import MIN_PARALLEL_SIZE
    from stet_lsp.gate.redact import used_numbers
    from stet_lsp.gate.scan import CHUNK_SIZE
    from stet_lsp.gate.stream import redact_runs
    from stet_lsp.trajectory.narration import Narration

    narration = Narration.of(meta.model_dump(mode="json"), events)
    runs = narration.runs([len(line) for line in lines], CHUNK_SIZE)
    # Its markers come from the events and meta (both in these lines and parts), or are new.
    used: dict[str, int] = {}
    for text in (*lines, narration.head, narration.tail):
        used_numbers(text, used)
    return redact_runs(
        runs,
        lambda run: "".join(map(narration.part, run)),
        config,
        "narration.md",
        used,
        parallel=sum(map(len, lines)) >= MIN_PARALLEL_SIZE,
        carried=carried,
        known=known,
    )


def _store_session(
    target: Target,
    folder: Folder,
    stem: str,
    parsed: ParsedSession,
    sources: list[SourceFile],
    digest: str,
    config: GateConfig,
    continues: tuple[str, ...],
    previous: dict[str, Any] | None = None,
    held: list[tuple[str, int, str]] | None = None,
    redacted: list[tuple[str, str]] | None = None,
    transcript: Path | None = None,
) -> dict[str, Any]:
    """Store the parsed session as `write_session` does, its events through the gate on the
    way to the file (a chunk at a time: the redacted text is never held whole, nor a second
    copy of it); its record, also through the gate, is written after and returned. What the
    session stored before (its record `previous`) held redacted stays redacted
    (`redacted_before`): a value carried into it from another session's findings. So do the
    values `held` redacted in the part of the session a capstone committed
    (`_held_in_committed`). `redacted` gains the values redacted wherever they stand, as
    `redact_blocks` gives them."""
    from stet_lsp.gate.parallel import MIN_PARALLEL_SIZE
    from stet_lsp.gate.stetignore import StetIgnore
    from stet_lsp.gate.stream import redact_blocks

    cwds = _cwds(parsed)
    sandbox = _sandbox_root(target.root, parsed)
    normalizer = Normalizer(target.root, StetIgnore.load(target.root), cwds, sandbox)
    events = normalizer.events(parsed.events)
    too_deep: list[EventBase] = []
    blocks = _jsonl_blocks(events, normalizer, too_deep)
    for event in too_deep:
        message = f"a {event.kind} nested more than {EVENT_DEPTH} deep: left out"
        parsed.problems.append(Problem(event.source.file, event.source.line, message))
    if too_deep:
        parsed.dropped[NESTED_TOO_DEEP] += len(too_deep)
    first_time = next((event.time for event in events if event.time), None)
    count = len(events) - len(too_deep)
    known = [*secrets_calls_printed(events, config), *secrets_in_sheet(target, config)]
    # What is gated and written from here on is the text: the events go before the gate.
    events.clear()
    parsed.events.clear()
    sessions = make_dirs(target.root, folder.relative / SESSIONS)
    before = RedactedBefore.read(
        sessions / f"{stem}.jsonl",
        target.root,
        config,
        _source_names(previous),
        [source.name for source in sources],
    )
    earlier = _and_held(before, held or [])
    with atomic_writer(sessions / f"{stem}.jsonl", target.root) as stream:
        report = redact_blocks(
            lambda: blocks,
            config,
            "events.jsonl",
            lambda chunk: stream.write(chunk.encode("utf-8")),
            parallel=sum(map(len, blocks)) >= MIN_PARALLEL_SIZE,
            known=known,
            earlier=earlier,
            redacted=redacted,
        )
        del before, earlier
        record = _session_record(
            parsed, sources, digest, config, first_time, count, report, continues, transcript
        )
        # Before the new file replaces the old: see `write_session`. Named in the marker, the
        # session goes again when its compose does not finish (`store.settle`).
        mark_composing(folder, stem)
        remove_regular(sessions / f"{stem}.json", target.root)
    _write_record(target, sessions / f"{stem}.json", record)
    return record


def _and_held(before: RedactedBefore | None, held: list[tuple[str, int, str]]) -> Earlier | None:
    """What the session stored before held redacted, and the values `held` besides."""
    if not held:
        return before.values if before is not None else None

    def earlier(drafts: Iterator[str]) -> list[tuple[str, int, str]]:
        values = list(before.values(drafts)) if before is not None else []
        collections.deque(drafts, maxlen=0)  # read to its end: the gate learns what it finds now
        return [*values, *held]

    return earlier


def _held_in_committed(
    target: Target,
    parsed: ParsedSession,
    part: CommittedPart | None,
    committed: list[EventBase],
    config: GateConfig,
) -> list[tuple[str, int, str]]:
    """The values the committed trajectories of `part` hold redacted in the session's events
    they hold (`committed`, left out of this import): the part imported since is gated alone,
    and shows bare a value its context there gave away (`export API_TOKEN=…`, a command that
    printed it), or a value carried into it from another session. (rule, marker's number,
    value as events.jsonl writes it), as `RedactedBefore.values` gives them."""
    from stet_lsp.gate.homepaths import normalize_home_paths
    from stet_lsp.gate.stetignore import StetIgnore

    if part is None or not committed:
        return []
    committed_lines = RedactedBefore.committed(part, target.root, config)
    if committed_lines is None:
        return []
    # As the import that committed them made them relative: its session's working folders.
    cwds = [
        *_cwds(parsed),
        *(event.cwd for event in committed if isinstance(event, SessionStart) and event.cwd),
    ]
    sandbox = _sandbox_root(target.root, parsed)
    normalizer = Normalizer(target.root, StetIgnore.load(target.root), cwds, sandbox)
    # Only the records whose committed lines hold a marker are written out to compare.
    marked, pointers = committed_lines.source_lines(), committed_lines.source_pointers()
    events = [
        e
        for e in normalizer.events(committed)
        if e.source.line in marked or e.source.pointer in pointers
    ]
    lines = (
        line
        for block in _normalised_blocks(events, normalizer, [])
        for line in block.split("\n")
        if line
    )
    # As the gate read them before its markers: only their home paths made `~`, as the
    # import that committed them made them (no rule has a fixed replacement of its own).
    return committed_lines.values_of_lines(lines, normalize_home_paths)


def _redacted_in_other_sessions(
    target: Target, folder: Folder, stem: str, config: GateConfig
) -> tuple[list[tuple[str, int, str]], list[str]]:
    """The values the working trajectory's other stored sessions hold redacted, for the
    session `stem` to redact wherever it shows them: a value one session's context gave away
    (`export API_TOKEN=…`, a command that printed it) may stand bare in another. No value is
    kept anywhere: each session that holds a marker has its transcript (the file its record
    names) imported again, nothing written, and its stored lines compared with the lines made
    now, as a session stored before is (`RedactedBefore`). (rule, marker's number, value as
    events.jsonl writes it), and a warning for each session whose values could not all be
    read again (its transcript gone, changed, or failing to read: which never fails this
    import)."""
    values: list[tuple[str, int, str]] = []
    warnings: list[str] = []
    for held_in, other, record in _other_sessions(target, folder, stem, warnings):
        unknown = (
            f"session {record.get('session')}'s values redacted in "
            f"{held_in.relative / SESSIONS / other}.jsonl may show in this session"
        )
        try:
            found, problem = _values_of_session(target, held_in, other, record, config)
        except Exception as error:  # a damaged or hostile file: this import goes on
            found, problem = [], f"it cannot be read again ({_error_text(error)})"
        values += found
        if problem is not None:
            warnings.append(f"{unknown}: {problem}")
    return values, warnings


def _error_text(error: Exception) -> str:
    return str(error) if isinstance(error, (StetError, OSError)) else type(error).__name__


def _values_of_session(
    target: Target, held_in: Folder, other: str, record: dict[str, Any], config: GateConfig
) -> tuple[list[tuple[str, int, str]], str | None]:
    """The values session `other` (stored in `held_in`) holds redacted, read again from its
    transcript, and what kept some from being read, if anything did."""
    from stet_lsp.gate.homepaths import normalize_home_paths
    from stet_lsp.gate.stetignore import StetIgnore

    names = _source_names(record)
    stored = held_in.path / SESSIONS / f"{other}.jsonl"
    marked = RedactedBefore.read(stored, target.root, config, names, names)
    if marked is None:
        return [], None
    transcript = record.get("transcript")
    if not isinstance(transcript, str):
        # Imported before records named it: importing the same bytes again writes nothing.
        return [], "its record names no transcript"
    try:
        path = transcript_source(Path(os.path.expanduser(transcript)))
        parsed = importer(str(record.get("importer"))).parse(path)
    except (StetError, OSError, ValueError, RecursionError) as error:
        # A transcript changed since into one its importer refuses reads as one gone.
        return [], f"its transcript cannot be read again ({error})"
    sandbox = _sandbox_root(target.root, parsed)
    normalizer = Normalizer(target.root, StetIgnore.load(target.root), _cwds(parsed), sandbox)
    lines, pointers = marked.source_lines(), marked.source_pointers()
    events = [
        event
        for event in normalizer.events(parsed.events)
        if event.source.line in lines or event.source.pointer in pointers
    ]
    del parsed
    fresh = (
        line
        for block in _normalised_blocks(events, normalizer, [])
        for line in block.split("\n")
        if line
    )
    found = marked.values_of_lines(fresh, normalize_home_paths)
    if marked.unread:
        return found, (
            f"{marked.unread} of its events that hold one no longer read so in {transcript} "
            "(changed since it was imported)"
        )
    return found, None


def _other_sessions(
    target: Target, folder: Folder, stem: str, warnings: list[str]
) -> Iterator[tuple[Folder, str, dict[str, Any]]]:
    """The imported sessions other than `stem` stored in the working trajectory and in those
    of the target that capstones committed and archived (`.archive/<target-key>-<id>/`):
    none of the archived ones where git's index holds anything under `.archive` (it came
    with the repository, which is no archive of this clone's capstones), or where that
    cannot be told, nor one behind a link; each folder left so, or that cannot be read, is
    named in `warnings`. (their folder, stem, record)."""
    held_in = [folder]
    archive = target.root / ARCHIVE
    ours = [
        name
        for name in _listed(archive)
        if name.startswith(f"{target.key}-") and not (archive / name).is_symlink()
    ]
    if ours:
        tracked = index_holds_under(target.root, ARCHIVE.as_posix())
        if tracked is False and not archive.is_symlink():
            held_in += [Folder(target.root, ARCHIVE / name, working=False) for name in ours]
        else:
            why = "git tracks files there" if tracked else "whether git tracks them is unknown"
            warnings.append(
                f"the sessions archived under {ARCHIVE.as_posix()} are not read ({why}): "
                "a value only their context gave away may show in this session"
            )
    for stored in held_in:
        try:
            records = _records(stored)
        except StetError as error:  # a link or a damaged folder
            warnings.append(
                f"the sessions stored in {stored.relative.as_posix()} cannot be read ({error}): "
                "a value only their context gave away may show in this session"
            )
            continue
        for other, record in records:
            if other != stem and record.get("importer") != GRADUATION_IMPORTER:
                yield stored, other, record


def _listed(folder: Path) -> list[str]:
    """The names in `folder`, sorted; none when it is no folder (or a link to one)."""
    if folder.is_symlink():
        return []
    try:
        return sorted(os.listdir(folder))
    except OSError:
        return []


def _source_names(record: dict[str, Any] | None) -> list[str]:
    """The names of the source files a session's record lists."""
    listed = record.get("sources") if record is not None else None
    if not isinstance(listed, list):
        return []
    return [
        str(source["name"]) for source in listed if isinstance(source, dict) and "name" in source
    ]


def secrets_in_sheet(
    target: Target, config: GateConfig, text: str | None = None
) -> list[tuple[str, list[Finding]]]:
    """The target's style sheet (its `text`, when given: an editor's buffer) and the secrets
    the gate finds in it: a value a note holds where a rule sees it (`DB_PASSWORD=…`) is a
    secret wherever a transcript or another entry repeats it bare (`connect with …`), which no
    rule could tell from another word. A text each way the sheet's file is read
    (`_sheet_texts_scanned`) with the secrets found in it."""
    from stet_lsp.gate.scan import scan_text

    texts = [text] if text is not None else _sheet_texts_scanned(target)
    known: list[tuple[str, list[Finding]]] = []
    for scanned in texts:
        found = scan_text(scanned, config=config, path=target.sheet_path.name, cache=None)
        if found:
            known.append((scanned, found))
    return known


# Byte order marks of the encodings a sheet is written in by mistake (PowerShell's `>` and
# Out-File wrote UTF-16 until PowerShell 6), UTF-32's first: its little-endian one starts with
# UTF-16's.
_WIDE_MARKS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


def _sheet_texts_scanned(target: Target) -> list[str]:
    """The target's style sheet file as the gate reads it for the values it holds (none when
    there is none). A sheet Stet will not work with still holds them: one that is not UTF-8 is
    read with what does not decode replaced, and also as UTF-16 or UTF-32 when it starts with
    their byte order mark, and with its NUL bytes left out when it has any (the ASCII text of
    UTF-16 or UTF-32 without a mark, or of a UTF-16 line amid UTF-8 ones); one whose lines end
    in a carriage return alone with line feeds for them. One whose bytes cannot be read (not a
    regular file, over the sheet's size limit) refuses: what it holds would pass the gate
    unknown."""
    path = target.sheet_path
    redacted = "the values it holds as secrets are redacted wherever they are repeated"
    try:
        data = read_regular(path, target.root, limit=SHEET_LIMIT + 1)
    except StetError as error:
        raise StetError(f"the style sheet cannot be read, and {redacted}: {error}") from None
    if data is None:
        return []
    if len(data) > SHEET_LIMIT:
        raise StetError(
            f"{path} is larger than {SHEET_LIMIT // 2**20} MiB, not read, and {redacted}: "
            "move it away or shorten it, nothing was changed"
        )
    texts = [data.decode("utf-8", "replace")]
    wide = next((codec for mark, codec in _WIDE_MARKS if data.startswith(mark)), None)
    if wide is not None:
        texts.append(data.decode(wide, "replace"))
    if b"\0" in data:
        texts.append(data.replace(b"\0", b"").decode("utf-8", "replace"))
    read: list[str] = []
    for text in texts:
        if "\r" in text and "\n" not in text:
            text = text.replace("\r", "\n")
        if text and text not in read:
            read.append(text)
    return read


def _cwds(parsed: ParsedSession) -> list[str]:
    """The working folders the session recorded."""
    return [event.cwd for event in parsed.events if isinstance(event, SessionStart) and event.cwd]


def _sandbox_root(root: Path, parsed: ParsedSession) -> str | None:
    """The folder the session's repository was in, in a sandbox of its own, when it stands
    for this repository: no such folder is on this machine (one that is, outside the
    repository, is another project's); the importer's candidate when the session's paths in
    it are this repository's, else the folder it was sure of."""
    folder = _absent_folder(root, parsed.sandbox_root)
    candidate = _absent_folder(root, parsed.sandbox_candidate)
    if candidate is not None and _holds_the_repository(root, candidate, folder, parsed.events):
        return candidate
    return folder


def _absent_folder(root: Path, folder: str | None) -> str | None:
    if not folder or not os.path.isabs(folder) or inside_repository(root, folder):
        return None
    return None if os.path.lexists(folder) else os.path.normpath(folder)


# How many of the paths a session named in a sandbox's folder are looked for in the repository.
_PATHS_CHECKED = 200


def _holds_the_repository(
    root: Path, candidate: str, sandbox: str | None, events: list[EventBase]
) -> bool:
    """Whether the paths the session named in `candidate` are those of this repository: one
    of them is a file or folder of it (or the candidate has the repository's name), and when
    the candidate is a folder of the sandbox's, none is one of it as named from there (the
    candidate being then a folder of the repository, not the repository)."""
    named = sorted(sandbox_paths(candidate, events))[:_PATHS_CHECKED]
    if not named:
        return False
    if sandbox is not None and candidate.startswith(sandbox + "/"):
        inner = candidate[len(sandbox) + 1 :]
        if any(os.path.lexists(root / inner / path) for path in named if path):
            return False
    return posixpath.basename(candidate) == root.name or any(
        os.path.lexists(root / path) for path in named if path
    )


def _worked_outside(root: Path, parsed: ParsedSession) -> bool:
    """Whether the session recorded working folders, none of them in this repository (nor
    in the sandbox folder that stands for it)."""
    cwds = _cwds(parsed)
    if _sandbox_root(root, parsed) is not None:
        return False
    return bool(cwds) and not any(inside_repository(root, cwd) for cwd in cwds)


def _jsonl_blocks(
    events: list[EventBase], normalizer: Normalizer, too_deep: list[EventBase]
) -> list[str]:
    """The events as JSON Lines, paths made relative, cut as the gate cuts JSON text into
    chunks (`stream_chunks`): each of its passes takes them as they are, none copied again.
    An event nested too deeply to be read back (`EVENT_DEPTH`) is left out, into `too_deep`."""
    from stet_lsp.gate.scan import stream_chunks

    return list(stream_chunks(_normalised_blocks(events, normalizer, too_deep)))


def _normalised_blocks(
    events: list[EventBase], normalizer: Normalizer, too_deep: list[EventBase]
) -> Iterator[str]:
    """The events as JSON Lines, paths made relative, in blocks of whole lines of about
    BLOCK_CHARACTERS each: each pass (relative paths, lone surrogates) copies one block, not
    the whole text, and no list of every line is kept beside it."""
    lines: list[str] = []
    size = 0
    for event in events:
        line = _event_line(event)
        if line is None:
            too_deep.append(event)
            continue
        lines.append(line)
        size += len(lines[-1]) + 1
        if size >= BLOCK_CHARACTERS:
            yield _block(lines, normalizer)
            lines.clear()
            size = 0
    if lines:
        yield _block(lines, normalizer)


NESTED_TOO_DEEP = "nested_too_deeply"
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_BRACKET = re.compile(r"[\[\]{}]")


def _event_line(event: EventBase) -> str | None:
    """The event's line of events.jsonl, or None when it nests more than EVENT_DEPTH deep."""
    try:
        line = event_json(event)
    except RecursionError:
        return None
    except ValueError as error:  # pydantic's "Circular reference detected (depth exceeded)"
        if "depth exceeded" not in str(error):
            raise
        return None
    if line.count("{") + line.count("[") <= EVENT_DEPTH:  # most lines: no deeper look
        return line
    depth = deepest = 0
    for bracket in _BRACKET.findall(_STRING.sub("", line)):
        depth += 1 if bracket in "[{" else -1
        deepest = max(deepest, depth)
    return line if deepest <= EVENT_DEPTH else None


def _block(lines: list[str], normalizer: Normalizer) -> str:
    return without_lone_surrogates(normalizer.relative("\n".join([*lines, ""])))


def _session_record(
    parsed: ParsedSession,
    sources: list[SourceFile],
    digest: str,
    config: GateConfig,
    first_time: str | None,
    count: int,
    report: RedactionReport,
    continues: tuple[str, ...],
    transcript: Path | None = None,
) -> dict[str, Any]:
    """A session's record, through the gate: it names files and quotes parse errors.
    `transcript`, the file imported, is read again by the imports of the trajectory's other
    sessions (`_redacted_in_other_sessions`)."""
    from stet_lsp.gate import redact_text

    record: dict[str, Any] = {
        "format": RECORD_FORMAT,
        "importer": parsed.format,
        "session": parsed.session_id,
        "first_time": first_time,
        "events": count,
        "sources": [source.model_dump() for source in sources],
        "sources_sha256": digest,
        "redaction": dict(sorted(report.counts().items())),
        "dropped": dict(sorted(parsed.dropped.items())),
        "problems": [
            {"source": p.source, "line": p.line, "message": p.message} for p in parsed.problems
        ],
        "gate": config.fingerprint,
        "gate_settings": {"strict": config.strict, "env_names": list(config.env_names)},
        "continues": list(continues),
    }
    if transcript is not None:
        record["transcript"] = str(transcript.absolute())
    gated_record = redact_text(
        json.dumps(record, ensure_ascii=False), config=config, path="record.json", cache=None
    )
    gated: dict[str, Any] = json.loads(gated_record.text)
    return gated


def sources_sha256(
    sources: list[SourceFile],
    consulted: dict[str, Path] | None = None,
    committed: CommittedPart | None = None,
) -> str:
    """What a session was imported from (its files' names and hashes, those of the files its
    importer consulted, and the part of it committed already), as a digest the record keeps:
    the record's own `sources` pass the gate, which in strict mode may redact a file's name,
    so they cannot tell a re-import of the same bytes."""
    read: list[Any] = [
        {"consulted": name, "sha256": _sha256(path)}
        for name, path in sorted((consulted or {}).items())
    ]
    if committed is not None:
        read.append({"committed": committed.fingerprint()})
    listed = json.dumps([source.model_dump() for source in sources] + read, sort_keys=True)
    return hashlib.sha256(listed.encode("utf-8", "surrogatepass")).hexdigest()


def _with_step(line: str, step: int) -> str | None:
    """The serialised event with its step: `"step"` follows `"kind"` in event_json's order;
    None when the line is not one Stet wrote."""
    head, comma, rest = line.partition(",")
    if not head.startswith('{"kind":') or not comma:
        return None
    if rest.startswith('"step":'):
        rest = rest.partition(",")[2]
    return f'{head},"step":{step},{rest}'


def _stored_event(line: str, folder: Folder, stem: str, number: int) -> Event:
    """A line of a stored session as an event; one that is none (a session file edited by
    hand, or committed in a cloned repository's `.stet/cache`) is a clear error."""
    try:
        return parse_event(line)
    except ValidationError as error:
        problem = error.errors()[0]["msg"] if error.errors() else str(error)
        raise _not_an_event(folder, stem, number, problem) from None


def _not_an_event(folder: Folder, stem: str, number: int, problem: str) -> StetError:
    where = f"{folder.relative / SESSIONS / stem}.jsonl:{number}"
    error = StetError(
        f"{where} is not a trajectory event ({problem}): correct or remove that line, or "
        "remove that session file and import its transcript again; nothing was changed"
    )
    error.reason = "no-working-trajectory"  # the capstone's refusal (docs/cli.md)
    return error


def _also_in(folder: Folder, sessions: set[str]) -> list[str]:
    """The other working trajectories of the repository that hold one of `sessions`."""
    return [
        other.id
        for other in folders(folder.root)
        if other.working
        and other.relative != folder.relative
        and any(record.get("session") in sessions for _, record in _records(other))
    ]


def _records(folder: Folder) -> list[tuple[str, dict[str, Any]]]:
    directory = folder.path / SESSIONS
    found: list[tuple[str, dict[str, Any]]] = []
    if directory.is_dir():
        for path in sorted(directory.glob("*.json")):
            record = read_record(folder, path.stem)
            if record is not None:
                found.append((path.stem, record))
        if all(stem != GRADUATION_SESSION for stem, _ in found):
            graduation = _graduation_record(folder)
            if graduation is not None:
                found.append((GRADUATION_SESSION, graduation))
    found.sort(key=lambda item: (item[1].get("first_time") or "", item[0]))
    return found


def _graduation_record(folder: Folder) -> dict[str, Any] | None:
    """A record for graduation's stored events when theirs is missing or torn (removed or
    edited by hand): an imported session so left out comes back when its transcript is
    imported again, but graduation's decisions have no transcript, and would be left out
    of the trajectory, and of its commit, until the next graduation wrote the record again."""
    data = read_regular(folder.path / SESSIONS / f"{GRADUATION_SESSION}.jsonl", folder.root)
    lines = [line for line in (data or b"").split(b"\n") if line.strip()]
    if not lines:
        return None
    first = object_or_none(lines[0])
    time = first.get("time") if first is not None else None
    return {
        "format": RECORD_FORMAT,
        "importer": GRADUATION_IMPORTER,
        "session": GRADUATION_SESSION,
        "first_time": time if isinstance(time, str) else None,
        "events": len(lines),
        "sources": [],
        "redaction": {},
        "dropped": {},
        "problems": [],
    }


def read_record(folder: Folder, stem: str) -> dict[str, Any] | None:
    """The record of session `stem`; None when there is none or it cannot be read."""
    try:
        data = read_small(folder.path / SESSIONS / f"{stem}.json", folder.root, stem)
    except TooLarge:
        return None  # taken for a torn record, as a hand-edited one is
    if data is None:
        return None
    record = object_or_none(data)  # None for a torn record: the session is imported again
    if record is None or record.get("format") != RECORD_FORMAT:
        return None
    return record if _well_formed(record) else None


def _well_formed(record: dict[str, Any]) -> bool:
    """Whether the fields composing and importing read have the types Stet writes. A record
    edited by hand, or committed in a cloned repository's `.stet/cache`, is otherwise taken
    for a torn one (its session is left out, and imported again when its transcript is)."""
    first, events = record.get("first_time"), record.get("events", 0)
    if not (first is None or isinstance(first, str)) or type(events) is not int:
        return False
    for key in ("redaction", "dropped"):
        counts = record.get(key, {})
        if not isinstance(counts, dict) or any(type(n) is not int for n in counts.values()):
            return False
    for key, model in (("sources", SourceFile), ("problems", ProblemRecord)):
        items = record.get(key, [])
        if not isinstance(items, list):
            return False
        try:
            for item in items:
                model.model_validate(item)
        except ValidationError:
            return False
    return True


def _composed(folder: Folder, sources: list[Any]) -> bool:
    """Whether the session is in the trajectory: no composition was left unfinished, the files
    composed are there (one removed by hand is composed again), and meta.json (written last)
    lists its sources."""
    if pending(folder) or not all(
        os.path.isfile(folder.path / name) for name in (EVENTS, NARRATION)
    ):
        return False
    try:
        data = read_small(folder.path / META, folder.root, META)
    except TooLarge:
        return False
    meta = object_or_none(data) if data is not None else {"sources": []}
    listed = meta.get("sources") if meta is not None else None
    return isinstance(listed, list) and all(source in listed for source in sources)


def pending(folder: Folder) -> bool:
    """Whether a session is stored and not composed yet: the marker is there, a regular
    file (a link someone put in its place is neither followed nor taken for it; storing a
    session replaces it)."""
    try:
        return stat.S_ISREG(os.lstat(folder.path / SESSIONS / COMPOSING).st_mode)
    except OSError:
        return False


def _previous_base(folder: Folder) -> str | None:
    """The base commit the working trajectory recorded first (it does not move with HEAD)."""
    try:
        data = read_small(folder.path / META, folder.root, META)
    except TooLarge:
        return None
    meta = object_or_none(data) if data is not None else None
    base = meta.get("base_commit") if meta is not None else None
    return base if isinstance(base, str) else None


def _head(root: Path) -> str | None:
    import pygit2

    from stet_lsp.core.targets import open_repository

    try:
        repository = open_repository(root)
        return None if repository.head_is_unborn else str(repository.head.target)
    except (StetError, pygit2.GitError):  # no repository or no HEAD: no base to record
        return None


def _session_stem(parsed: ParsedSession) -> str:
    """A file name for the session, whatever characters its id holds."""
    digest = hashlib.sha256(f"{parsed.format}\0{parsed.session_id}".encode()).hexdigest()
    return digest[:20]


def transcript_source(source: Path) -> Path:
    """A transcript is a regular file with something in it (a FIFO would block the read); an
    OpenHands V1 conversation folder is read from its base_state.json. The file to read."""
    if os.path.isfile(os.path.join(source, "base_state.json")):
        source = source / "base_state.json"
    try:
        status = os.stat(source)
    except OSError as error:
        raise StetError(f"{source}: {error.strerror or error}") from None
    except ValueError:  # no file's path holds a NUL
        raise StetError(f"{str(source)!r}: no such file (a path holds no NUL)") from None
    if stat.S_ISDIR(status.st_mode):
        raise StetError(
            f"{source}: a folder, and no OpenHands V1 conversation (it holds no "
            "base_state.json): give the transcript's file"
        )
    if not stat.S_ISREG(status.st_mode):
        raise StetError(f"{source}: not a regular file")
    if status.st_size == 0:
        raise StetError(f"{source}: the file is empty; there is no transcript to import")
    return source


def _sha256_or_none(path: Path) -> str | None:
    try:
        return _sha256(path)
    except (OSError, StetError):  # gone since it was read: the next import reads it again
        return None


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open_source(path) as stream:
        while block := stream.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def _result(
    folder: Folder,
    parsed: ParsedSession,
    record: dict[str, Any],
    *,
    changed: bool,
    outside: bool,
    warnings: list[str] | None = None,
) -> ImportResult:
    return ImportResult(
        trajectory=folder.id,
        folder=str(folder.relative),
        # As the files hold it: an id may hold a secret, redacted there.
        session=str(record.get("session") or parsed.session_id),
        format=parsed.format,
        events=int(record.get("events", len(parsed.events))),
        changed=changed,
        problems=[ProblemRecord(**problem) for problem in record.get("problems", [])],
        redaction=dict(record.get("redaction", {})),
        dropped=dict(record.get("dropped", {})),
        outside=outside,
        continues=[str(t) for t in record.get("continues", []) if isinstance(t, str)],
        also_in=_also_in(folder, set(parsed.session_ids()) | {str(record.get("session"))}),
        warnings=warnings or [],
    )


def imported_sessions(target: Target) -> set[tuple[str, str]]:
    """(format, session id) of every session in the target's working trajectory."""
    folder = working_folder(target)
    return {
        (str(record.get("importer")), str(record.get("session"))) for _, record in _records(folder)
    }
