"""Provenance: which step of which trajectory wrote a line of a file as it is now.

A trajectory knows where its file changes left their lines (`attribution.py`: the lines
each anchored change wrote, placed in each file after all the trajectory's changes, through
edits made between them outside the trajectory where a change recorded the file; a change
known only by its search and replace text, placed where its search text is once, in what
the trajectory left of the file or, for a file it had not changed yet, what git held before
it: `gittexts.py`). Since
then people edited the files, committed, renamed them, and the editor's buffer may hold
unsaved text. So a trajectory's lines are not looked up by number:
each file's lines after the trajectory form a *reference* (the texts of the attributed lines
at their positions, and of the lines around them that the diffs showed as context, so that a
line like many others, a `}`, is found by its neighbours; the file's other lines where the
text after the last change is known,
from a recorded content or from one with anchored diffs applied after it; placeholders that
pair with nothing where it is not), and the reference is aligned with the current text. A
line the alignment pairs with an attributed line keeps that line's step; a line edited since
no longer equals its reference line and is not attributed; lines inserted or removed above
only move the pairs. A reference line the gate changed (a secret redacted, a home directory
written `~`) equals a line that differs from it only there: the file holds what the agent
wrote, the trajectory what the gate let through.

The alignment (`align`) pairs equal lines in order: the common head and tail first, then
lines that stand once on each side (patience), then, in the stretches between those, the
same again with uniqueness counted in the stretch, and an exact longest common subsequence
for a small stretch with nothing unique. Where a stretch has the same length on both sides
and every known reference line equals the current line at its place, the lines pair by
position (the unknown lines in between are taken as unchanged). An ordered alignment loses
a block moved past more lines than it holds; such attributed lines are paired afterwards
when a distinctive line of them (`MOVABLE_TEXT`) stands once among the unpaired lines on
both sides, together with the equal lines around it.

Paths: a change's path is taken as the repository-relative path it was recorded as. A path
that stayed absolute (or `~/...`) names a file of the session's working folder as the
harness recorded it (a session recorded on another machine, or before the repository moved):
relative to the session's `cwd`, recorded the same way, it is a repository path; any other
absolute path is outside the repository and left out. A session whose `cwd` holds the work
tree read in (it ran in a folder above the repository, on this machine) maps none: what it
wrote inside the repository the import made relative already.

Renames since the run: a path a trajectory changed that is no longer in the work tree is
followed through git, commit by commit along HEAD's first parents, then from HEAD to the
index and from the index to the work tree (untracked files included), with libgit2's rename
detection in each step. The walk goes back past both marks it has: meta.json's
`base_commit` (HEAD when the trajectory was first imported, which may be after the run and
after a rename) and the trajectory's start (less `CLOCK_SLACK`: the transcript's clock and
the commits' may disagree), and never past `RENAME_WALK_LIMIT` commits. Walking every
commit, not diffing one commit against HEAD, also follows a file the trajectory created
(absent from the base) and renamed later. A file git never tracked, moved with a plain `mv`,
leaves git no rename to see, only a new file: a path still not followed is taken to be the
one file that appeared since the marks (added in a commit walked or the index, or untracked)
whose lines are mostly the trajectory's text of it (`MOVED_LIKENESS`, a distinctive line the
trajectory wrote among them) and that no trajectory wrote at its own path; two such files
(copies), or two paths that one file is equally like, leave it unfollowed, and so do more
than `MOVED_CANDIDATES` new files of a size it could have (only those are read). Nothing is
followed for a file that is still where the trajectory left it.

Several trajectories may have written the same line (a later run rewrote it with the same
text): the newest step wins, by the change's time, then working before committed, then
step number.

Nothing here imports pygls or lsprotocol: the language server and the command line use it.
"""

from __future__ import annotations

import hashlib
import json
import ntpath
import os
import posixpath
import re
import stat
import threading
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from stet_lsp.core.errors import StetError
from stet_lsp.core.lines import lines_of
from stet_lsp.core.safefs import open_regular, read_regular
from stet_lsp.gate.homepaths import REPLACEMENT, normalize_home_paths
from stet_lsp.trajectory.alignment import ABSENT, PLACEHOLDER, align, pair_moved
from stet_lsp.trajectory.attribution import Attribution, LeftOut, epoch, made_order, rewound
from stet_lsp.trajectory.events import EventBase, FileChange, SourceRef
from stet_lsp.trajectory.eventsfile import events_lines
from stet_lsp.trajectory.gittexts import GitTexts
from stet_lsp.trajectory.importers.fields import count_field
from stet_lsp.trajectory.paths import is_absolute, repository_path
from stet_lsp.trajectory.store import EVENTS, META, Folder, folders, read_small

if TYPE_CHECKING:
    import pygit2
    from pygit2.enums import DiffFind

RENAME_WALK_LIMIT = 2000
"""The most commits followed for renames."""
CLOCK_SLACK = 86_400
"""Seconds of disagreement allowed between a transcript's clock and commit times."""
MOVABLE_TEXT = 12
"""The fewest characters (spaces aside) of a line that is followed when moved."""
CACHE_SIZE = 32
"""Results kept per Provenance, by (path, text): an editor asks again for the same text."""
MOVED_LIKENESS = 0.5
"""The least share of a file's lines (of the longer of its text and the trajectory's) that
must be the trajectory's for a file to be taken for one moved where git did not see it."""
MOVED_FILE_BYTES = 4 * 1024 * 1024
"""The largest file read as one a trajectory's file may have been moved to."""
MOVED_CANDIDATES = 256
"""The most new files of a fitting size read for one path gone without a rename: past it
(a build's output left unignored, say), the path stays unfollowed rather than be read
against thousands of files on every load, or be taken for one of a few read."""
BOM = "\ufeff"
"""A byte order mark opening a file: no text of its first line to an editor, which holds the
file without it."""

_NEEDED_KINDS = frozenset(
    {"session_start", "agent_message", "reasoning", "tool_call", "file_change", "commit"}
)
_OPERATIONS = frozenset({"create", "modify", "delete", "rename"})
_NO_SOURCE = SourceRef(file="", line=1)


# -- what callers get ----------------------------------------------------------------------


@dataclass(frozen=True)
class StepDetail:
    """What a hover on an attributed line shows: the change (its step, path, tool call and
    diff) and the agent's message or reasoning that led to it (the agent's last one before
    the change's tool call)."""

    trajectory: str
    step: int
    path: str
    operation: str
    diff: str
    call_id: str | None
    time: str | None
    session: str
    agent: str | None
    message: str | None
    message_step: int | None
    message_kind: str | None


class LineProvenance(NamedTuple):
    """A line of the current text (0-based) that a trajectory step wrote; `path` is the
    repository path the step wrote it to (the file may have been renamed since). A named
    tuple: a file may have thousands, made on each new text."""

    line: int
    trajectory: str
    step: int
    path: str


@dataclass(frozen=True)
class ProvenanceHunk:
    """Consecutive current lines (0-based, inclusive) written by one step: one code lens."""

    first_line: int
    last_line: int
    trajectory: str
    step: int
    path: str


@dataclass(frozen=True)
class Unattributed:
    """A change whose lines could not be placed (an unanchored diff: search and replace text
    without line numbers), or earlier lines such a change may have moved."""

    trajectory: str
    path: str
    step: int
    reason: str
    lines: int


def grouped(lines: Iterable[LineProvenance]) -> list[ProvenanceHunk]:
    """Consecutive lines of one step grouped, in line order."""
    ordered = sorted(lines, key=lambda item: item.line)
    return _runs((item.line, (item.trajectory, item.step, item.path)) for item in ordered)


Origin = tuple[str, int, str]
"""Who wrote a line: (trajectory, step, path written)."""


def _single_runs(
    trajectory: str, path: str, lines: list[int], steps: list[int]
) -> list[ProvenanceHunk]:
    """The runs of one trajectory's claims (lines in order, and their steps)."""
    found: list[ProvenanceHunk] = []
    first = last = -2
    current = 0
    for line, step in zip(lines, steps, strict=True):
        if line == last + 1 and step == current:
            last = line
            continue
        if current:
            found.append(ProvenanceHunk(first, last, trajectory, current, path))
        first = last = line
        current = step
    if current:
        found.append(ProvenanceHunk(first, last, trajectory, current, path))
    return found


def _runs(claims: Iterable[tuple[int, Origin]]) -> list[ProvenanceHunk]:
    """Hunks of claims in line order: a run of consecutive lines with one origin each."""
    found: list[ProvenanceHunk] = []
    first = last = -2
    origin: Origin | None = None
    for line, claim in claims:
        if line == last + 1 and claim == origin:
            last = line
            continue
        if origin is not None:
            found.append(ProvenanceHunk(first, last, *origin))
        first = last = line
        origin = claim
    if origin is not None:
        found.append(ProvenanceHunk(first, last, *origin))
    return found


# -- one trajectory --------------------------------------------------------------------------


@dataclass(frozen=True)
class FileLines:
    """One file's lines after the trajectory, as the reference to align with its current
    text: an id per line (`PLACEHOLDER` when the text is unknown), the step that wrote each
    line (0: not the trajectory's), and the ids of the known texts. `open_end`: the file's
    length is unknown (no recorded content), so lines past the reference are unknown too.
    `movable`: the ids of texts distinctive enough to be followed when moved."""

    path: str
    reference: tuple[int, ...]
    steps: tuple[int, ...]
    ids: dict[str, int]
    open_end: bool
    movable: frozenset[int]
    redacted: dict[str, list[tuple[re.Pattern[str], int]]] = field(default_factory=dict)
    """The known texts the gate changed (a secret redacted, a home path made `~`), each as
    the pattern of the lines it stands for and its id, by what they start with before the
    first change (a line is tried only against the patterns whose start it has)."""

    def current_ids(self, lines: Sequence[str]) -> list[int]:
        get = self.ids.get
        found = [get(line, ABSENT) for line in lines]
        if self.redacted:
            lengths = sorted({len(head) for head in self.redacted})
            for number, line in enumerate(lines):
                if found[number] == ABSENT:
                    found[number] = self._as_redacted(line, lengths)
        return found

    def _as_redacted(self, line: str, lengths: list[int]) -> int:
        candidates = [found for length in lengths for found in self.redacted.get(line[:length], ())]
        if candidates:
            # As the gate wrote the trajectory's text: there the line was a JSON string, each
            # `\` of it doubled, so a `\` after `C:/Users` is a separator (`C:/Users\nancy`),
            # never the start of a JSON escape.
            line = normalize_home_paths(line, json_text=False)
            for pattern, id in candidates:
                if pattern.fullmatch(line):
                    return id
        return ABSENT

    def size_range(self) -> tuple[int, int]:
        """The sizes in bytes a file this like the reference may have (`likeness`): a
        quarter to four times the reference's known text, the top open when its end is
        unknown."""
        texts = {id: text for text, id in self.ids.items()}
        known = sum(
            len(texts[id].encode("utf-8", "surrogatepass")) + 1 for id in self.reference if id >= 0
        )
        top = MOVED_FILE_BYTES if self.open_end else known * 4 + 4096
        return known // 4, top

    def likeness(self, lines: Sequence[str]) -> float:
        """How much a text is this file: the share of the longer of the two (of the known
        lines alone, when the file's end is unknown) that pairs with the reference; 0 under
        `MOVED_LIKENESS`, or when no distinctive line the trajectory wrote is among them."""
        paired = align(self.reference, self.current_ids(lines))
        matched = 0
        distinctive = False
        for id, step, line in zip(self.reference, self.steps, paired, strict=True):
            if line >= 0:
                matched += 1
                distinctive = distinctive or (step != 0 and id in self.movable)
        if self.open_end:
            longer = sum(1 for id in self.reference if id != PLACEHOLDER)
        else:
            longer = max(len(self.reference), len(lines))
        share = matched / longer if longer else 0.0
        return share if distinctive and share >= MOVED_LIKENESS else 0.0

    def claims(self, lines: Sequence[str]) -> tuple[list[int], list[int]]:
        """The current lines (in order) paired with lines the trajectory wrote, and the step
        that wrote each, as two lists."""
        current = self.current_ids(lines)
        reference: Sequence[int] = self.reference
        if self.open_end and len(current) > len(reference):
            reference = self.reference + (PLACEHOLDER,) * (len(current) - len(reference))
        steps = self.steps
        paired = align(reference, current)
        if pair_moved(reference, current, paired, self.movable, steps):
            claimed = sorted(
                (line, step)
                for step, line in zip(steps, paired, strict=False)
                if line >= 0 and step
            )
            return [line for line, _ in claimed], [step for _, step in claimed]
        found_lines: list[int] = []  # two lists of ints, no tuple a line (see align)
        found_steps: list[int] = []
        for step, line in zip(steps, paired, strict=False):
            if line >= 0 and step:
                found_lines.append(line)
                found_steps.append(step)
        return found_lines, found_steps


@dataclass
class TrajectoryLines:
    """What provenance needs of one trajectory, computed once from its events: each file's
    reference lines, each file change's detail, and the changes that could not be placed."""

    id: str
    working: bool
    base_commit: str | None
    started: str | None
    folder: str = ""
    files: dict[str, FileLines] = field(default_factory=dict)
    steps: dict[int, StepDetail] = field(default_factory=dict)
    unattributed: list[Unattributed] = field(default_factory=list)
    order: dict[int, tuple[float, int, int]] = field(default_factory=dict)

    def paths(self) -> set[str]:
        """Every repository path the trajectory's changes placed or left out lines of."""
        return set(self.files) | {item.path for item in self.unattributed}

    @classmethod
    def read(cls, folder: Folder) -> TrajectoryLines:
        """A trajectory folder's lines (StetError when meta.json or events.jsonl is missing
        or meta.json is not JSON)."""
        meta = _read_json(folder, META)
        stream = open_regular(folder.path / EVENTS, folder.root)
        if stream is None:
            raise StetError(f"{folder.relative / EVENTS}: no such file")
        try:
            # Read as bytes, line by line (only "\n" ends a line): most lines are skipped
            # by their kind without being decoded or parsed, and the file is never whole in
            # memory (its file changes are, until they are followed in the order made).
            with stream:
                trajectory = cls.from_lines(
                    folder.id, meta, events_lines(stream), working=folder.working, root=folder.root
                )
        except OSError as error:
            raise StetError(f"{folder.relative / EVENTS}: {error.strerror or error}") from None
        trajectory.folder = str(folder.relative)
        return trajectory

    @classmethod
    def from_lines(
        cls,
        trajectory_id: str,
        meta: dict[str, Any],
        lines: Iterable[str] | Iterable[bytes],
        *,
        working: bool,
        root: Path | None = None,
    ) -> TrajectoryLines:
        """From events.jsonl's lines: only the kinds provenance reads are parsed (a line's
        kind is read from its head, as event_json writes it, before any JSON is parsed)."""
        return cls.from_records(trajectory_id, meta, _records(lines), working=working, root=root)

    @classmethod
    def from_events(
        cls,
        trajectory_id: str,
        meta: dict[str, Any],
        events: Iterable[EventBase],
        *,
        working: bool,
        root: Path | None = None,
    ) -> TrajectoryLines:
        records = (event.model_dump(mode="json") for event in events)
        return cls.from_records(trajectory_id, meta, records, working=working, root=root)

    @classmethod
    def from_records(
        cls,
        trajectory_id: str,
        meta: dict[str, Any],
        records: Iterable[dict[str, Any]],
        *,
        working: bool,
        root: Path | None = None,
    ) -> TrajectoryLines:
        base = meta.get("base_commit")
        started = meta.get("started")
        trajectory = cls(
            id=trajectory_id,
            working=working,
            base_commit=base if isinstance(base, str) and base else None,
            started=started if isinstance(started, str) else None,
        )
        reader = _EventReader(trajectory_id, root, trajectory.base_commit)
        for position, record in enumerate(records, 1):
            reader.read(record, position)
        reader.follow_changes()
        trajectory._place(reader, meta)
        return trajectory

    def _place(self, reader: _EventReader, meta: dict[str, Any]) -> None:
        attribution = reader.attribution
        self.steps = reader.details
        self.unattributed = [_unattributed(self.id, item) for item in attribution.left_out]
        for path, origins in attribution.followed.items():
            if not any(origin.step for origin in origins.values()):
                continue
            content = attribution.text_lines(path)
            self.files[path] = _file_lines(
                path,
                {n: o.step for n, o in origins.items()},
                {n: o.text for n, o in origins.items()},
                content,
            )
        ended = meta.get("ended")
        fallback = epoch(ended) if isinstance(ended, str) else None
        rank = int(self.working)
        for step, detail in self.steps.items():
            moment = epoch(detail.time) if detail.time else None
            self.order[step] = (moment or fallback or 0.0, rank, step)


def _file_lines(
    path: str, steps: dict[int, int], texts: dict[int, str], content: list[str] | None
) -> FileLines:
    """The reference of one file: its recorded content where that agrees with every
    attributed line, else the attributed lines and placeholders between them."""
    if content is not None and all(
        0 < number <= len(content) and content[number - 1] == text for number, text in texts.items()
    ):
        length, open_end = len(content), False
    else:
        content, length, open_end = None, max(texts, default=0), True
    ids: dict[str, int] = {}
    reference: list[int] = []
    line_steps: list[int] = []
    for number in range(1, length + 1):
        text = content[number - 1] if content is not None else texts.get(number)
        if text is not None and number == 1:
            text = text.removeprefix(BOM)
        if text is None:
            reference.append(PLACEHOLDER)
        else:
            reference.append(ids.setdefault(text, len(ids)))
        line_steps.append(steps.get(number, 0))
    movable = frozenset(
        number for text, number in ids.items() if len(text) - text.count(" ") >= MOVABLE_TEXT
    )
    redacted: dict[str, list[tuple[re.Pattern[str], int]]] = {}
    for text, number in ids.items():
        if "[REDACTED:" in text or REPLACEMENT in text:
            head = text[
                : min(i for i in (text.find(REPLACEMENT), text.find("[REDACTED:")) if i >= 0)
            ]
            redacted.setdefault(head, []).append((_as_written(text), number))
    return FileLines(path, tuple(reference), tuple(line_steps), ids, open_end, movable, redacted)


def _as_written(text: str) -> re.Pattern[str]:
    """The lines (their home directories written `~`, as the gate writes them) that a text
    the gate redacted stands for: any value where it wrote a marker, a value that holds no
    character of what follows the marker (`"[REDACTED:…]" if prod else …` is no line of
    `"[REDACTED:…]"`), matched without going back (possessive), so a line that fails to
    match costs its length, whatever the markers."""
    from stet_lsp.gate.redact import MARKER

    literals, position = [], 0  # the text around the markers
    for marker in MARKER.finditer(text):
        literals.append(text[position : marker.start()])
        position = marker.end()
    literals.append(text[position:])
    parts = [re.escape(literals[0])]
    for literal in literals[1:]:
        if not literal:
            continue  # two markers side by side: one value
        parts.append(f"[^{re.escape(literal[0])}]++{re.escape(literal)}")
    if not literals[-1]:
        parts.append(".++")  # the line ends in a value
    return re.compile("".join(parts))


def _unattributed(trajectory: str, item: LeftOut) -> Unattributed:
    return Unattributed(trajectory, item.path, item.step, item.reason, item.lines)


class _EventReader:
    """Reads a trajectory's events in order: each session's working folder, the agent's last
    message at each tool call, and each file change (its path made repository-relative) with
    its detail and the file's content after it, where that is known."""

    def __init__(
        self, trajectory: str, root: Path | None = None, base_commit: str | None = None
    ) -> None:
        self.trajectory = trajectory
        self.root = root
        """The work tree read in: a session whose folder holds it ran in a folder above it."""
        self.cwds: dict[str, str | None] = {}
        self.last_message: dict[tuple[str, str | None], tuple[int, str, str]] = {}
        self.at_call: dict[tuple[str, str], tuple[int, str, str]] = {}
        self.git_texts = GitTexts(root, base_commit) if root is not None else None
        # Not a method of the reader: the attribution holding the reader would be a cycle,
        # which only the collector's full walks free.
        earlier = self.git_texts.earlier if self.git_texts is not None else None
        self.attribution = Attribution(earlier=earlier)
        self.changes: list[tuple[FileChange, int, str | None]] = []
        """Each change, its step and the file after it (when recorded), until followed."""
        self.details: dict[int, StepDetail] = {}

    def read(self, record: dict[str, Any], position: int) -> None:
        kind = record.get("kind")
        session = _text(record.get("session")) or ""
        agent = _text(record.get("agent"))
        step = record.get("step")
        step = step if isinstance(step, int) and step > 0 else position
        if kind == "session_start":
            cwd = _text(record.get("cwd"))
            if cwd and session not in self.cwds:
                # Run above the work tree, on this machine: an absolute path the import left
                # is outside the repository (one inside was made relative), not a path of it.
                self.cwds[session] = None if _holds(cwd, self.root) else cwd
        elif kind in ("agent_message", "reasoning"):
            text = _text(record.get("text"))
            if text:
                self.last_message[(session, agent)] = (step, str(kind), text)
        elif kind == "tool_call":
            call_id = _text(record.get("call_id"))
            message = self.last_message.get((session, agent))
            if call_id and message:
                self.at_call[(session, call_id)] = message
        elif kind == "file_change":
            self._change(record, step, session, agent)
        elif kind == "commit":
            sha = _text(record.get("sha"))
            if sha and self.git_texts is not None:
                self.git_texts.commits.append((session, step, sha))

    def follow_changes(self) -> None:
        """Follows the changes read, in the order they were made."""
        keys = [(change.session, change.time) for change, _, _ in self.changes]
        for index in made_order(keys):
            self.attribution.follow(*self.changes[index])
        self.changes = []

    def _change(self, record: dict[str, Any], step: int, session: str, agent: str | None) -> None:
        cwd = self.cwds.get(session)
        path = repository_path(_text(record.get("path")) or "", cwd)
        operation = record.get("operation")
        recorded_old = _text(record.get("old_path")) or ""
        old_path = repository_path(recorded_old, cwd)
        if operation == "rename" and (path is None) != (old_path is None):
            # Across the repository's edge: the side outside stays as recorded, and the
            # attribution takes it for outside.
            path = path or _text(record.get("path"))
            old_path = old_path or recorded_old
        if path is None or operation not in _OPERATIONS:
            return
        if rewound(record.get("abandoned"), operation):
            return
        diff = _text(record.get("diff")) or ""
        call_id = _text(record.get("call_id"))
        time = _text(record.get("time"))
        # Validating these few fields is faster than pydantic's model_construct.
        change = FileChange.model_validate(
            {
                "source": _NO_SOURCE,
                "step": step,
                "session": session,
                "agent": agent,
                "time": time,
                "path": path,
                "operation": operation,
                "old_path": old_path,
                "diff": diff,
                "anchored": record.get("anchored") is True,
                "added": count_field(record.get("added")),
            }
        )
        # The content is the file after the change: kept until the attribution follows it.
        self.changes.append((change, step, _text(record.get("content"))))
        message = self.at_call.get((session, call_id)) if call_id else None
        message = message or self.last_message.get((session, agent))
        self.details[step] = StepDetail(
            trajectory=self.trajectory,
            step=step,
            path=path,
            operation=str(operation),
            diff=diff,
            call_id=call_id,
            time=time,
            session=session,
            agent=agent,
            message=message[2] if message else None,
            message_step=message[0] if message else None,
            message_kind=message[1] if message else None,
        )


def _holds(cwd: str, root: Path | None) -> bool:
    """Whether the recorded folder `cwd` (`~` this machine's home) is above `root`."""
    if root is None or not is_absolute(cwd):
        return False
    folder = posixpath.normpath(os.path.expanduser(cwd))
    return str(root).startswith(folder.rstrip("/") + "/")


def _records(lines: Iterable[str] | Iterable[bytes]) -> Iterator[dict[str, Any]]:
    """The events.jsonl lines of the kinds provenance reads, parsed; a line of another kind
    (told by its head, as event_json writes it) or that is not JSON gives an empty record
    (validation reports bad lines; provenance keeps going)."""
    for line in lines:
        if not line.strip():
            continue
        if _skipped_kind(line):
            yield {}  # keeps the positions of events without a step
            continue
        yield _parsed(line)


def _parsed(line: str | bytes) -> dict[str, Any]:
    try:
        record = json.loads(line)
    except UnicodeDecodeError:
        assert isinstance(line, bytes)
        return _parsed(line.decode("utf-8", "replace"))
    except (ValueError, RecursionError):  # not JSON, or nested too deep to decode
        return {}
    return record if isinstance(record, dict) else {}


def _skipped_kind(line: str | bytes) -> bool:
    head = line[:40] if isinstance(line, str) else line[:40].decode("utf-8", "replace")
    if not head.startswith('{"kind":"'):
        return False
    end = head.find('"', 9)
    return end > 0 and head[9:end] not in _NEEDED_KINDS


def _read_json(folder: Folder, name: str) -> dict[str, Any]:
    data = read_small(folder.path / name, folder.root, folder.relative / name)
    if data is None:
        raise StetError(f"{folder.relative / name}: no such file")
    try:
        value = json.loads(data)
    except ValueError as error:
        raise StetError(f"{folder.relative / name}: not JSON ({error})") from None
    except RecursionError:
        raise StetError(f"{folder.relative / name}: nested too deeply to read") from None
    if not isinstance(value, dict):
        raise StetError(f"{folder.relative / name}: not a JSON object")
    return value


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


# -- every trajectory of a repository --------------------------------------------------------

FileStamp = tuple[int, int, int] | None
Signature = tuple[tuple[tuple[str, FileStamp, FileStamp], ...], str | None, FileStamp]


class Provenance:
    """Every trajectory of a repository (committed ones and the working ones), ready to
    attribute the lines of any file's current text. Load it once; `stale()` says when the
    trajectories, HEAD or the index changed or a file they wrote left its path (or came back),
    and `load(root, previous)` then reads again only the trajectories whose files changed."""

    def __init__(
        self,
        root: Path,
        trajectories: list[TrajectoryLines],
        stamps: dict[str, tuple[FileStamp, FileStamp]],
        signature: Signature,
        problems: list[str],
        commit_paths: dict[str, CommitPaths] | None = None,
    ) -> None:
        self.root = root
        self.trajectories = trajectories
        self.problems = problems
        self.signature = signature
        self._stamps = stamps
        # The renames and additions each commit made (by commit id): a commit never
        # changes, so they are handed from one load to the next.
        self._commit_paths = {} if commit_paths is None else commit_paths
        self._by_id = {trajectory.id: trajectory for trajectory in reversed(trajectories)}
        index = _PathIndex.build(root, trajectories, self._commit_paths)
        self._by_path = index.files
        self._unattributed = index.unattributed
        self._renamed = index.renamed
        self._present = _present(root, set(index.files) | set(index.unattributed))
        self._cache: OrderedDict[tuple[str, str], tuple[ProvenanceHunk, ...]] = OrderedDict()
        """By path and the text's digest (not the text: 32 copies of a large file's)."""
        self._lock = threading.Lock()

    @classmethod
    def load(cls, root: Path, previous: Provenance | None = None) -> Provenance:
        """Every trajectory under `root`; those whose events.jsonl and meta.json are as
        `previous` read them are taken from it. A trajectory that cannot be read is named in
        `problems` and the others are used."""
        signature = repository_signature(root)
        reusable: dict[str, tuple[tuple[FileStamp, FileStamp], TrajectoryLines]] = {}
        if previous is not None and previous.root == root:
            for trajectory in previous.trajectories:
                key = trajectory.folder
                reusable[key] = (previous._stamps[key], trajectory)
        trajectories: list[TrajectoryLines] = []
        stamps: dict[str, tuple[FileStamp, FileStamp]] = {}
        problems: list[str] = []
        for folder, stamp in _stamped_folders(root):
            key = str(folder.relative)
            known = reusable.get(key)
            if known is not None and known[0] == stamp:
                trajectory = known[1]
            else:
                try:
                    trajectory = TrajectoryLines.read(folder)
                except StetError as error:
                    problems.append(str(error))
                    continue
            trajectories.append(trajectory)
            stamps[key] = stamp
        walked = previous._commit_paths if previous is not None else None
        return cls(root, trajectories, stamps, signature, problems, walked)

    def stale(self) -> bool:
        """Whether a trajectory, HEAD or the index changed since this was loaded, or a file
        with lines of the trajectories came or went at the path they were found under (moved
        in the work tree with a plain `mv`, which neither HEAD nor the index shows)."""
        if repository_signature(self.root) != self.signature:
            return True
        return _present(self.root, set(self._present)) != self._present

    def paths(self) -> list[str]:
        """The current paths of the files some trajectory wrote lines of (these may have
        attributed lines; other files have none)."""
        return sorted(self._by_path)

    def current_path(self, folder: str, path: str) -> str:
        """Where the file that the trajectory in `folder` (relative to the root) wrote at
        `path` is now: the path git saw it renamed to since, else `path`."""
        return self._renamed.get((folder, path), path)

    def step(self, trajectory: str, step: int) -> StepDetail | None:
        """A file change's detail for a hover (None for a step that changed no file)."""
        found = self._by_id.get(trajectory)
        return found.steps.get(step) if found is not None else None

    def unattributed(self, path: str) -> list[Unattributed]:
        """The changes to the file now at `path` whose lines are not attributed, and why."""
        return list(self._unattributed.get(path, []))

    def hunks(self, path: str, text: str) -> list[ProvenanceHunk]:
        """The runs of lines of `text` (the current text of the file at the repository path
        `path`, saved or not) that one trajectory step wrote, in line order. Kept for the
        last CACHE_SIZE texts: an editor asks again for a text it already asked for (lenses,
        then hovers), and a few hunks cost the garbage collector less than every line."""
        entries = self._by_path.get(path)
        if not entries:
            return []
        text = text.removeprefix(BOM)  # what the editor holds of it, and the reference too
        key = (path, hashlib.blake2b(text.encode("utf-8", "surrogatepass")).hexdigest())
        with self._lock:
            cached = self._cache.get(key)
            if cached is not None:
                self._cache.move_to_end(key)
                return list(cached)
        # The file's lines as the reference counts them (`lines_of`): the empty string after
        # the last line break is no line, and paired it put the blank last line past the end.
        found = tuple(_hunks(entries, lines_of(text)))
        with self._lock:
            self._cache[key] = found
            while len(self._cache) > CACHE_SIZE:
                self._cache.popitem(last=False)
        return list(found)

    def attribute(self, path: str, text: str) -> list[LineProvenance]:
        """Each line of `text` that a trajectory step wrote, in line order. Lenses and hovers
        are better served by `hunks` and `at`: thousands of lines are thousands of objects
        made on each new text."""
        return [
            LineProvenance(line, hunk.trajectory, hunk.step, hunk.path)
            for hunk in self.hunks(path, text)
            for line in range(hunk.first_line, hunk.last_line + 1)
        ]

    def at(self, path: str, text: str, line: int) -> ProvenanceHunk | None:
        """The hunk holding a line (0-based) of `text`, for a hover."""
        found = self.hunks(path, text)
        index = bisect_right([hunk.first_line for hunk in found], line) - 1
        if index >= 0 and found[index].last_line >= line:
            return found[index]
        return None


def _hunks(
    entries: list[tuple[TrajectoryLines, FileLines]], lines: list[str]
) -> list[ProvenanceHunk]:
    """Each trajectory's pairs; a line several trajectories claim goes to the newest step."""
    if len(entries) == 1:
        trajectory, file = entries[0]
        return _single_runs(trajectory.id, file.path, *file.claims(lines))
    best: dict[int, tuple[tuple[float, int, int], Origin]] = {}
    for trajectory, file in entries:
        claimed_lines, claimed_steps = file.claims(lines)
        for line, step in zip(claimed_lines, claimed_steps, strict=True):
            order = trajectory.order.get(step, (0.0, int(trajectory.working), step))
            known = best.get(line)
            if known is None or order > known[0]:
                best[line] = (order, (trajectory.id, step, file.path))
    return _runs((line, claim) for line, (_, claim) in sorted(best.items()))


def _present(root: Path, paths: set[str]) -> dict[str, bool]:
    """Whether each repository path is a file in the work tree."""
    files = _WorkTreeFiles(root)
    return {path: files.size(path) is not None for path in paths}


_WINDOWS = os.name == "nt"


def _rooted(path: str, windows: bool = _WINDOWS) -> bool:
    """Whether joining `path` to a folder leaves it, or goes through what Windows reads as a
    separator or a drive (`windows`): `/etc/x`; on Windows also `\\x`, `C:\\x`, `C:x` (the
    drive's current folder), `\\\\host\\share\\x` and `a\\..\\..\\x`. Told from the string
    alone, as every Python reads it (os.path.isabs takes `/x` for a relative path on Windows
    from Python 3.13)."""
    if path.startswith("/"):
        return True
    return windows and ("\\" in path or bool(ntpath.splitdrive(path)[0]))


class _WorkTreeFiles:
    """The regular files of the work tree, by repository path (a stat each, and one a folder
    however many paths it holds). Anything else is none: a link, or a path through one (a
    cloned repository's may lead anywhere: to /dev/zero, or to a file outside it), a FIFO
    or device, a path leaving the repository, one this file system cannot have (a name
    longer than it takes, as another system's trajectory may record)."""

    __slots__ = ("_folders", "_root")

    def __init__(self, root: Path) -> None:
        self._root = os.fspath(root)
        self._folders: dict[str, bool] = {"": True}

    def size(self, path: str) -> int | None:
        folder, _, name = path.rpartition("/")
        if name in ("", ".", "..") or _rooted(path) or not self._folder(folder):
            return None
        try:
            status = os.lstat(os.path.join(self._root, path))
        except (OSError, ValueError):
            return None
        return status.st_size if stat.S_ISREG(status.st_mode) else None

    def _folder(self, folder: str) -> bool:
        known = self._folders.get(folder)
        if known is None:
            parent, _, name = folder.rpartition("/")
            known = name not in ("", ".", "..") and self._folder(parent)
            if known:
                try:
                    known = stat.S_ISDIR(os.lstat(os.path.join(self._root, folder)).st_mode)
                except (OSError, ValueError):
                    known = False
            self._folders[folder] = known
        return known


def _stamped_folders(root: Path) -> list[tuple[Folder, tuple[FileStamp, FileStamp]]]:
    return [
        (folder, (_stamp(folder.path / EVENTS), _stamp(folder.path / META)))
        for folder in folders(root)
    ]


def repository_signature(root: Path) -> Signature:
    """What provenance depends on, cheaply: each trajectory folder's events.jsonl and
    meta.json (modification time, size, inode), HEAD's commit and the index file."""
    trajectories = tuple(
        (str(folder.relative), *stamps) for folder, stamps in _stamped_folders(root)
    )
    head, index = _head_and_index(root)
    return trajectories, head, index


def _head_and_index(root: Path) -> tuple[str | None, FileStamp]:
    import pygit2

    from stet_lsp.core.targets import open_repository

    try:
        repository = open_repository(root)
    except (StetError, pygit2.GitError):
        return None, None
    head = None if repository.head_is_unborn else str(repository.head.target)
    return head, _stamp(Path(repository.path) / "index")


def _stamp(path: Path) -> FileStamp:
    try:
        status = os.stat(path)
    except OSError:
        return None
    return status.st_mtime_ns, status.st_size, status.st_ino


# -- renames since the run -------------------------------------------------------------------


@dataclass
class _PathIndex:
    """Each trajectory's attributed files and unattributed changes by the path the file has
    now (renames since the run followed)."""

    files: dict[str, list[tuple[TrajectoryLines, FileLines]]] = field(default_factory=dict)
    unattributed: dict[str, list[Unattributed]] = field(default_factory=dict)
    renamed: dict[tuple[str, str], str] = field(default_factory=dict)
    """(trajectory folder, path it wrote) → the path now, for the files renamed since."""

    @classmethod
    def build(
        cls,
        root: Path,
        trajectories: list[TrajectoryLines],
        commit_paths: dict[str, CommitPaths],
    ) -> _PathIndex:
        moved = _moves(root, trajectories, commit_paths)
        index = cls()
        for number, trajectory in enumerate(trajectories):
            for path, file in trajectory.files.items():
                current = moved.get((number, path), path)
                index.files.setdefault(current, []).append((trajectory, file))
            for item in trajectory.unattributed:
                current = moved.get((number, item.path), item.path)
                index.unattributed.setdefault(current, []).append(item)
        for (number, path), current in moved.items():
            index.renamed[(trajectories[number].folder, path)] = current
        return index


def _moves(
    root: Path, trajectories: list[TrajectoryLines], commit_paths: dict[str, CommitPaths]
) -> dict[tuple[int, str], str]:
    """(trajectory's place in the list, path) → the path now, for each path a trajectory
    changed that is no longer in the work tree and that git saw renamed since, or that a
    file new since then holds (`_moved_untracked`: moved where git never saw it)."""
    files = _WorkTreeFiles(root)
    missing = [
        (number, trajectory, path)
        for number, trajectory in enumerate(trajectories)
        for path in sorted(trajectory.paths())
        if files.size(path) is None
    ]
    if not missing:
        return {}
    import pygit2

    from stet_lsp.core.targets import open_repository

    try:
        repository = open_repository(root)
    except (StetError, pygit2.GitError):
        return {}
    walks: dict[tuple[str | None, str | None], _Walk] = {}
    moves: dict[tuple[int, str], str] = {}
    unfollowed: list[tuple[int, TrajectoryLines, str]] = []
    for number, trajectory, path in missing:
        key = (trajectory.base_commit, trajectory.started)
        if key not in walks:
            walks[key] = _rename_steps(repository, key, commit_paths)
        current = path
        for renames in walks[key].renames:
            current = renames.get(current, current)
        if current != path and files.size(current) is not None:
            moves[(number, path)] = current
        else:
            unfollowed.append((number, trajectory, path))
    if unfollowed:
        taken = set(moves.values()) | {
            path
            for trajectory in trajectories
            for path in trajectory.paths()
            if files.size(path) is not None
        }
        moves.update(_moved_untracked(root, files, unfollowed, walks, taken))
    return moves


def _moved_untracked(
    root: Path,
    files: _WorkTreeFiles,
    unfollowed: list[tuple[int, TrajectoryLines, str]],
    walks: dict[tuple[str | None, str | None], _Walk],
    taken: set[str],
) -> dict[tuple[int, str], str]:
    """Where files gone from their paths with no rename git saw (moved with a plain `mv`
    while git did not track them) are now: in the one file that appeared since the
    trajectory's marks, that no trajectory wrote at its path, and whose lines are at least
    `MOVED_LIKENESS` like the trajectory's text of the file, with a distinctive line of the
    trajectory's among them. A path two such files are equally like, or a file two paths
    are equally like, stays unfollowed, and so does one with more than `MOVED_CANDIDATES`
    new files of a size it could have."""
    candidates: dict[str, set[str]] = {}
    for _, trajectory, path in unfollowed:
        if path in trajectory.files:
            new = walks[(trajectory.base_commit, trajectory.started)].new_paths
            candidates.setdefault(path, set()).update(new - taken)
    texts: dict[str, list[str] | None] = {}
    likeness: dict[str, dict[str, float]] = {}
    sizes: dict[str, int | None] = {}
    too_many: set[str] = set()
    for _, trajectory, path in unfollowed:
        file = trajectory.files.get(path)
        if file is None:
            continue
        scores = likeness.setdefault(path, {})
        low, high = file.size_range()
        fitting = []
        for candidate in sorted(candidates.get(path, ())):
            if candidate not in sizes:
                sizes[candidate] = files.size(candidate)
            size = sizes[candidate]
            if size is not None and low <= size <= high:
                fitting.append(candidate)
        if len(fitting) > MOVED_CANDIDATES:
            too_many.add(path)  # unfollowed, whatever another trajectory's text finds
            continue
        for candidate in fitting:
            if candidate not in texts:
                texts[candidate] = _small_text_lines(root, candidate)
            lines = texts[candidate]
            if lines is not None:
                score = file.likeness(lines)
                scores[candidate] = max(score, scores.get(candidate, 0.0))
    best: dict[str, tuple[float, str]] = {}
    for path, scores in likeness.items():
        if path in too_many:
            continue
        ranked = sorted(
            ((score, candidate) for candidate, score in scores.items() if score), reverse=True
        )
        if ranked and (len(ranked) == 1 or ranked[0][0] > ranked[1][0]):
            best[path] = ranked[0]
    claimed: dict[str, list[tuple[float, str]]] = {}
    for path, (score, candidate) in best.items():
        claimed.setdefault(candidate, []).append((score, path))
    found: dict[str, str] = {}
    for candidate, claims in claimed.items():
        claims.sort(reverse=True)
        if len(claims) == 1 or claims[0][0] > claims[1][0]:
            found[claims[0][1]] = candidate
    return {(number, path): found[path] for number, _, path in unfollowed if path in found}


def _small_text_lines(root: Path, path: str) -> list[str] | None:
    """The lines of the regular file at `path` in the work tree as provenance counts them,
    when it is a text of at most `MOVED_FILE_BYTES`."""
    try:
        data = read_regular(root / path, root, limit=MOVED_FILE_BYTES + 1)
    except StetError:
        return None
    if data is None or len(data) > MOVED_FILE_BYTES or b"\0" in data:
        return None
    return lines_of(data.decode("utf-8", "replace").removeprefix(BOM))


CommitPaths = tuple[dict[str, str], frozenset[str]]
"""What one commit did to paths: its renames (old path → new path) and the paths it added."""


@dataclass
class _Walk:
    """What git saw happen to paths since a trajectory's marks."""

    renames: list[dict[str, str]] = field(default_factory=list)
    """The renames (old path → new path) of each step, oldest first."""
    new_paths: set[str] = field(default_factory=set)
    """The paths (as they are now) of the files that appeared since, renamed from nothing."""

    def add(self, renames: dict[str, str], added: Iterable[str]) -> None:
        self.renames.append(renames)
        self.new_paths = {renames.get(path, path) for path in self.new_paths}
        self.new_paths.update(added)


def _rename_steps(
    repository: pygit2.Repository,
    marks: tuple[str | None, str | None],
    commit_paths: dict[str, CommitPaths],
) -> _Walk:
    """The renames and additions of each commit since the trajectory's marks (base commit,
    start), oldest first, then of the index against HEAD and of the work tree against the
    index (its untracked files). Each commit's are kept in `commit_paths`."""
    import pygit2
    from pygit2.enums import DiffFind, DiffOption

    walk = _Walk()
    for commit in _commits_since(repository, *marks):
        if commit.parents:
            key = str(commit.id)
            if key not in commit_paths:
                diff = repository.diff(commit.parents[0], commit)
                commit_paths[key] = _paths_changed(diff, DiffFind.FIND_RENAMES)
            walk.add(*commit_paths[key])
    try:
        if repository.head_is_unborn:
            walk.add({}, [entry.path for entry in repository.index])
        else:
            head = repository.head.peel(pygit2.Commit).tree
            staged = repository.index.diff_to_tree(head)
            walk.add(*_paths_changed(staged, DiffFind.FIND_RENAMES))
        untracked = DiffOption.INCLUDE_UNTRACKED | DiffOption.RECURSE_UNTRACKED_DIRS
        unstaged = repository.index.diff_to_workdir(untracked)
        find = DiffFind.FIND_RENAMES | DiffFind.FIND_FOR_UNTRACKED
        walk.add(*_paths_changed(unstaged, find))
    except pygit2.GitError:
        pass
    return walk


def _paths_changed(diff: pygit2.Diff, find: DiffFind) -> CommitPaths:
    """Old path → new path of the renames in a diff, and the paths it adds (untracked files
    too)."""
    from pygit2.enums import DeltaStatus

    diff.find_similar(find)
    renames = {}
    added = set()
    for delta in diff.deltas:
        if delta.status == DeltaStatus.RENAMED:
            renames[delta.old_file.path] = delta.new_file.path
        elif delta.status in (DeltaStatus.ADDED, DeltaStatus.UNTRACKED):
            added.add(delta.new_file.path)
    return renames, frozenset(added)


def _commits_since(
    repository: pygit2.Repository, base: str | None, started: str | None
) -> list[pygit2.Commit]:
    """HEAD's first-parent commits made after the earlier of the trajectory's base commit
    and its start (less CLOCK_SLACK), oldest first, at most RENAME_WALK_LIMIT. A base commit
    that is not an ancestor of HEAD, or not on its first-parent line (once the walk is past
    its time), no longer holds the walk back; with neither mark the limit ends it."""
    import pygit2

    if repository.head_is_unborn:
        return []
    head = repository.head.peel(pygit2.Commit)
    moment = epoch(started) if started else None
    start_mark = None if moment is None else moment - CLOCK_SLACK
    base_commit = _ancestor_commit(repository, head, base)
    pending_base = base_commit is not None
    chain: list[pygit2.Commit] = []
    commit: pygit2.Commit | None = head
    while commit is not None and len(chain) < RENAME_WALK_LIMIT:
        if base_commit is not None and pending_base:
            pending_base = commit.id != base_commit.id and (
                commit.commit_time >= base_commit.commit_time - CLOCK_SLACK
            )
        marked = base_commit is not None or start_mark is not None
        before_start = start_mark is None or commit.commit_time < start_mark
        if marked and not pending_base and before_start:
            break
        chain.append(commit)
        commit = commit.parents[0] if commit.parents else None
    chain.reverse()
    return chain


def _ancestor_commit(
    repository: pygit2.Repository, head: pygit2.Commit, base: str | None
) -> pygit2.Commit | None:
    """The base commit when it is HEAD or one of its ancestors."""
    import pygit2

    if not base:
        return None
    try:
        found = repository.revparse_single(base)
    except (KeyError, ValueError, pygit2.GitError):
        return None
    if not isinstance(found, pygit2.Commit):
        return None
    if found.id == head.id or repository.descendant_of(head.id, found.id):
        return found
    return None
