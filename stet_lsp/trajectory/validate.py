"""Checking a trajectory against the open format: each line of events.jsonl is an event of
the schema, steps count from 1, meta.json agrees; every problem with its line."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from stet_lsp.core.errors import StetError
from stet_lsp.core.safefs import read_regular
from stet_lsp.core.targets import git_holders
from stet_lsp.trajectory.events import (
    SCHEMA_VERSION,
    ToolCall,
    ToolResult,
    first_error,
    parse_event,
)
from stet_lsp.trajectory.eventsfile import BOM, events_text
from stet_lsp.trajectory.meta import Meta
from stet_lsp.trajectory.store import EVENTS, META, NARRATION, TooLarge, read_small


@dataclass(frozen=True)
class Issue:
    file: str
    line: int
    message: str
    severity: str = "error"

    def to_json(self) -> dict[str, object]:
        return {
            "file": self.file,
            "line": self.line,
            "severity": self.severity,
            "message": self.message,
        }


def validate_path(path: Path) -> list[Issue]:
    """A trajectory folder (named by itself, its meta.json or its narration.md), or an
    events.jsonl on its own. Inside a work tree (as the path
    reads, links left unresolved), its files are read with the work tree as the boundary:
    no link is followed, as a cloned repository may commit one pointing anywhere."""
    path = Path(os.path.abspath(path))
    root = next(git_holders(path), None)
    if path.name in (META, NARRATION) and os.path.isfile(path):
        path = path.parent  # a file of a trajectory: the trajectory, not its lines as events
    is_folder = os.path.isdir(path)
    if is_folder:
        events_path, meta_path = path / EVENTS, path / META
    else:
        events_path, meta_path = path, path.with_name(META)
    data = read_regular(events_path, root)
    if data is None:
        raise StetError(f"{events_path}: no such file")
    data = data.removeprefix(BOM)
    issues, steps = validate_events(events_text(data), events_path.name)
    issues = sorted([*issues, *_not_utf8(data, events_path.name)], key=lambda issue: issue.line)
    if not is_folder and steps and len(issues) >= steps:
        _refuse_a_transcript(events_path)
    try:
        meta_data = (
            read_small(meta_path, root, meta_path.name)
            if is_folder or os.path.lexists(meta_path)
            else None
        )
    except TooLarge as error:
        return [*issues, Issue(META, 1, error.detail)]
    if meta_data is not None:
        issues += _validate_meta(meta_data, meta_path.name, steps)
    elif is_folder:
        issues.append(Issue(META, 1, "missing"))
    return issues


def _not_utf8(data: bytes, name: str) -> list[Issue]:
    """An error on each line holding bytes that are not UTF-8 (the format's text is; read
    with U+FFFD in their place, such a line may otherwise parse)."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    else:
        return []
    issues = []
    for number, line in enumerate(data.split(b"\n"), 1):
        try:
            line.decode("utf-8")
        except UnicodeDecodeError as error:
            column = len(line[: error.start].decode("utf-8")) + 1  # in characters, as editors
            issues.append(Issue(name, number, f"not UTF-8 (column {column})"))
    return issues


def _refuse_a_transcript(path: Path) -> None:
    """A file none of whose lines is an event may be an agent's transcript, which is
    imported, not validated: one clear line says so instead of an error for every line."""
    from stet_lsp.trajectory.importers import detect

    try:
        found = detect(path)
    except StetError:
        return
    raise StetError(
        f"{path}: a {found.label}, not a trajectory; import it with `stet trajectory import`"
        " and validate the trajectory that makes"
    )


def validate_events(text: str | Sequence[str], name: str = EVENTS) -> tuple[list[Issue], int]:
    """The problems of an events.jsonl text (or of its lines), and how many events it holds."""
    issues: list[Issue] = []
    calls: set[str] = set()
    count = 0
    for number, line in enumerate(_lines(text) if isinstance(text, str) else text, 1):
        if not line.strip():
            continue
        count += 1
        try:
            event = parse_event(line)
        except ValidationError as error:
            issues.append(Issue(name, number, first_error(error, line)))
            continue
        if event.step != count:
            issues.append(Issue(name, number, f"step is {event.step}, expected {count}"))
        if isinstance(event, ToolCall):
            calls.add(event.call_id)
        elif isinstance(event, ToolResult) and event.call_id not in calls:
            message = f"result of call {event.call_id!r}, which no earlier step made"
            issues.append(Issue(name, number, message, "warning"))
    return issues, count


def _validate_meta(data: bytes, name: str, steps: int) -> list[Issue]:
    try:
        json.loads(data)
    except json.JSONDecodeError as error:  # placed by its line, its column in characters
        return [Issue(name, error.lineno, f"not JSON: {error.msg} at column {error.colno}")]
    except ValueError as error:
        return [Issue(name, 1, f"not JSON: {error}")]
    except RecursionError:
        return [Issue(name, 1, "nested deeper than a meta.json is")]
    try:
        meta = Meta.model_validate_json(data)
    except ValidationError as error:  # the field and what is wrong with it, not a summary
        return [Issue(name, 1, first_error(error, data))]
    issues = []
    if not _readable(meta.schema_version):
        message = f"schema_version {meta.schema_version}; this Stet reads up to {SCHEMA_VERSION}"
        issues.append(Issue(name, 1, message, "warning"))
    if meta.steps != steps:
        issues.append(Issue(name, 1, f"steps is {meta.steps}, events.jsonl holds {steps}"))
    return issues


def _readable(version: str) -> bool:
    """Whether this Stet reads a file of `version`: the same major version, no newer minor."""
    try:
        major, minor = (int(part) for part in version.split(".", 1))
        own_major, own_minor = (int(part) for part in SCHEMA_VERSION.split(".", 1))
    except ValueError:
        return False
    return major == own_major and minor <= own_minor


def _lines(text: str) -> Iterator[str]:
    """The lines of `text`, one at a time (a copy of a large events.jsonl split at once would
    double its memory). Only "\n" ends a line: str.splitlines() would also split at a U+2028
    inside a text."""
    start = 0
    while start <= len(text):
        end = text.find("\n", start)
        if end < 0:
            yield text[start:]
            return
        yield text[start:end]
        start = end + 1
