"""The contract every importer keeps: recognise its format from the content, parse a file into
events. Importers only read and translate: they do not redact, relativise paths or write
(the import pipeline does that, on everything an importer returns)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

from stet_lsp.trajectory.events import EventBase, SourceRef

E = TypeVar("E", bound=EventBase)

# How much of a file `sniff` sees: enough for a header record or the first few JSONL lines.
EVENT_DEPTH = 200
"""The most arrays and objects an event's line may nest, itself included: what the format's
readers (pydantic's, `parse_event`) take. A transcript's value nested deeper (json reads a
thousand levels) would make a line no reader can read back, and past some 500 levels one
that cannot be written: such an event is left out."""

SNIFF_BYTES = 64 * 1024


@dataclass(frozen=True)
class Problem:
    """A record the importer could not read (the import goes on without it)."""

    source: str
    line: int
    message: str


_NO_WORK = frozenset({"session_start", "session_end", "raw"})


@dataclass
class ParsedSession:
    """One agent session read from one transcript (and the files that belong to it, such as
    Claude Code's subagent files). `sources` maps each `SourceRef.file` name the events use to
    the file on disk. Events are in the session's order; `step` is left at 0."""

    format: str
    session_id: str
    events: list[EventBase] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    dropped: Counter[str] = field(default_factory=Counter)
    sources: dict[str, Path] = field(default_factory=dict)
    consulted: dict[str, Path] = field(default_factory=dict)
    """Files read for what the events say but not imported (a Codex subagent thread's parent
    rollout, which names the call that spawned it): not sources, yet the import depends on
    them, so importing again when one appears or changes is not a no-op."""

    sandbox_root: str | None = None
    """Where the session's repository was in a sandbox of the harness's own (an OpenHands
    container's `/workspace`): when no such folder is on this machine, the import takes it for
    the repository the session is imported into, so its paths become relative to it."""

    sandbox_candidate: str | None = None
    """A folder of such a sandbox that the repository may have been in, which the transcript
    alone does not make sure of (a folder the OpenHands app server cloned it into, in its
    working folder; a SWE-agent container's `/testbed`): the import takes it for the
    repository, in place of `sandbox_root`, when the paths the session named in it are the
    repository's (see `importing._holds_the_repository`)."""

    def session_ids(self) -> set[str]:
        """The session's id and those of the subagent sessions its events belong to."""
        return {self.session_id, *(event.session for event in self.events)}

    def has_work(self) -> bool:
        """Whether an event is more than the session's start, its end and records no event
        kind reads (what a harness writes as a session opens or closes)."""
        return any(event.kind not in _NO_WORK for event in self.events)

    def emit(
        self,
        kind: type[E],
        at: SourceRef,
        time: str | None,
        agent: str | None = None,
        **fields: Any,
    ) -> E:
        """Adds an event of `kind` of this session, read from `at`; returns it."""
        event = kind(session=self.session_id, source=at, time=time, agent=agent, **fields)
        self.events.append(event)
        return event


class Importer(Protocol):
    name: str  # the --format value: "claude-code", "codex", ...
    label: str  # how an error names it: "Claude Code session JSONL"

    def sniff(self, head: str) -> bool:
        """Whether the file is in this format, from its first SNIFF_BYTES (decoded as UTF-8
        with replacement; the last line may be cut off)."""
        ...

    def parse(self, path: Path) -> ParsedSession:
        """The session in `path`. Raises StetError only when nothing of it can be read."""
        ...


def new_event(kind: type[E], **fields: Any) -> E:
    """An event of `kind` (built through keywords: the models' positional `Field` defaults are
    not seen by type checkers)."""
    return kind(**fields)
