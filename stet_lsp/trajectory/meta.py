"""meta.json: a trajectory's header, computed from its events and the import's records."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from stet_lsp.trajectory.events import (
    SCHEMA_VERSION,
    EventBase,
    FileChange,
    SessionStart,
    Usage,
    UserMessage,
)
from stet_lsp.trajectory.pricing import session_costs, total_cost

_BRIEF_LIMIT = 2000


class TargetRef(BaseModel):
    model_config = ConfigDict(extra="forbid")

    kind: str = Field(description="branch, detached or named")
    name: str
    key: str = Field(description="the target's file-name-safe key")


class Harness(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    version: str | None = None


class Totals(BaseModel):
    model_config = ConfigDict(extra="forbid")

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float | None = None
    cost_basis: Literal["reported", "estimated", "mixed"] | None = Field(
        None, description="reported by the harness, estimated from token prices, or both"
    )


class FileStat(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str
    added: int = 0
    removed: int = 0


class SourceFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="the name events' `source.file` use")
    sha256: str
    format: str
    session: str


class ProblemRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    source: str
    line: int
    message: str


class Superseded(BaseModel):
    model_config = ConfigDict(extra="forbid")

    trajectory: str = Field(description="the id of the capstone this one follows")
    commit: str = Field(description="the commit that added it (this capstone's parent)")


class Meta(BaseModel):
    model_config = ConfigDict(extra="forbid")

    schema_version: str = SCHEMA_VERSION
    id: str
    target: TargetRef
    base_commit: str | None = None
    harnesses: list[Harness] = Field(default_factory=list)
    models: list[str] = Field(default_factory=list)
    sessions: list[str] = Field(default_factory=list)
    started: str | None = None
    ended: str | None = None
    steps: int = 0
    totals: Totals = Field(default_factory=Totals)
    files: list[FileStat] = Field(default_factory=list)
    brief: str | None = Field(None, description="the first user request")
    redaction: dict[str, int] = Field(
        default_factory=dict, description="spans the gate redacted, by rule"
    )
    dropped: dict[str, int] = Field(
        default_factory=dict, description="what the importers left out, by reason"
    )
    problems: list[ProblemRecord] = Field(
        default_factory=list, description="source records that could not be read"
    )
    sources: list[SourceFile] = Field(default_factory=list)
    supersedes: Superseded | None = Field(
        None, description="the capstone HEAD was when this one was made (committed ones only)"
    )


def summarise(
    *,
    trajectory_id: str,
    target: TargetRef,
    base_commit: str | None,
    events: Sequence[EventBase],
    redaction: Counter[str],
    dropped: Counter[str],
    problems: Iterable[ProblemRecord],
    sources: Iterable[SourceFile],
) -> Meta:
    harnesses: dict[Harness, None] = {}
    models: dict[str, None] = {}
    sessions: dict[str, None] = {}
    # Summed in plain integers, the models made at the end: setting a model's attribute goes
    # through pydantic's __setattr__, several times slower, and a request has four.
    changes: dict[str, list[int]] = {}  # path -> [added, removed]
    input_tokens = output_tokens = cache_read_tokens = cache_write_tokens = 0
    times = [event.time for event in events if event.time]
    usages: list[Usage] = []
    brief = None
    for event in events:
        sessions.setdefault(event.session)
        if isinstance(event, SessionStart):
            harnesses.setdefault(Harness(name=event.harness, version=event.harness_version))
            if event.model:
                models.setdefault(event.model)
            if base_commit is None and event.commit:
                base_commit = event.commit
        elif isinstance(event, Usage):
            if event.model:
                models.setdefault(event.model)
            input_tokens += event.input_tokens
            output_tokens += event.output_tokens
            cache_read_tokens += event.cache_read_tokens
            cache_write_tokens += event.cache_write_tokens
            usages.append(event)
        elif isinstance(event, FileChange):
            counts = changes.setdefault(event.path, [0, 0])
            counts[0] += event.added
            counts[1] += event.removed
        elif isinstance(event, UserMessage) and brief is None and event.agent is None:
            brief = request_of(event.text)[:_BRIEF_LIMIT]
    totals = Totals(
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cache_read_tokens=cache_read_tokens,
        cache_write_tokens=cache_write_tokens,
    )
    totals.cost_usd, totals.cost_basis = total_cost(usages, session_costs(events))
    files = [FileStat(path=path, added=a, removed=r) for path, (a, r) in sorted(changes.items())]
    started, ended = first_and_last(times)
    return Meta(
        id=trajectory_id,
        target=target,
        base_commit=base_commit,
        harnesses=list(harnesses),
        models=list(models),
        sessions=list(sessions),
        started=started,
        ended=ended,
        steps=len(events),
        totals=totals,
        files=files,
        brief=brief,
        redaction=dict(sorted(redaction.items())),
        dropped=dict(sorted(dropped.items())),
        problems=list(problems),
        sources=list(sources),
    )


def request_of(text: str) -> str:
    """What a user asked, without the context an editor put before it: Claude Code's IDE
    extensions start a prompt with `<ide_opened_file>` or `<ide_selection>` elements, and
    Codex's with `# Context from my IDE setup:` (the active file, open tabs) or `# Files
    mentioned by the user:`, the request following `## My request for Codex:`."""
    if text.lstrip().startswith(_CODEX_IDE_CONTEXT):
        _, found, request = text.partition(_CODEX_IDE_REQUEST)
        return request.strip() if found and request.strip() else text
    context = _CLAUDE_IDE_CONTEXT.match(text)
    if context and text[context.end() :].strip():
        return text[context.end() :].strip()
    return text


_CODEX_IDE_CONTEXT = ("# Context from my IDE setup:", "# Files mentioned by the user:")
_CODEX_IDE_REQUEST = "\n## My request for Codex:"
_CLAUDE_IDE_CONTEXT = re.compile(r"(?:\s*<(ide_\w+)>.*?</\1>)+", re.DOTALL)


def first_and_last(times: Sequence[str]) -> tuple[str | None, str | None]:
    """The earliest and the latest of `times` by the moment they name (see `_moment`). Times
    written alike (one length, all in UTC as `Z`, as most harnesses write them) order as text,
    and are not parsed."""
    if not times:
        return None, None
    if len({len(time) for time in times}) == 1 and all(time.endswith("Z") for time in times):
        return min(times), max(times)
    return min(times, key=_moment), max(times, key=_moment)


def _moment(time: str) -> tuple[int, float, str]:
    """A key ordering event times by the moment they name, whatever zone each is written in
    (harnesses write `Z`, `+02:00` or none: a time without a zone is taken as UTC). Text that
    is no time comes after every time, in its own order."""
    try:
        parsed = datetime.fromisoformat(time)
    except ValueError:
        return (1, 0.0, time)
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return (0, parsed.timestamp(), time)
