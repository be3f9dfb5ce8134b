"""Line attribution of a trajectory as an Agent Trace record (Cursor's open RFC, v0.1.0).

An Agent Trace record names the lines of files that an AI wrote: `files`, each with
`conversations` (who wrote: a `contributor` of type `ai` with a `model_id` such as
`anthropic/claude-opus-4-5`), each with 1-based inclusive line `ranges` (optionally a
`content_hash` of the lines). `vcs` names the revision, `tool` the program that wrote the code,
and `metadata` holds anything else under a vendor key.

The lines come from the trajectory's file changes, placed in the file as it is after all of
them: a later change that inserts or removes lines above a range moves it, and lines a later
change removes drop out. Only anchored diffs (hunk line numbers that are the file's own) say
where lines are; an unanchored change is left out, and so are the positions it may have moved,
and the record's metadata lists both instead of guessing.
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from stet_lsp.core.lines import lines_of
from stet_lsp.trajectory.events import (
    AgentMessage,
    EventBase,
    FileChange,
    SessionStart,
    Usage,
)

AGENT_TRACE_VERSION = "0.1.0"
VENDOR_KEY = "stet"
# models.dev names a model `provider/model`; transcripts name only the model.
_PROVIDERS = (
    ("claude", "anthropic"),
    ("gpt-", "openai"),
    ("o1", "openai"),
    ("o3", "openai"),
    ("o4", "openai"),
    ("codex", "openai"),
    ("gemini", "google"),
)
_HUNK_HEADER = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


@dataclass(frozen=True)
class Hunk:
    """One `@@` hunk of a unified diff: the first old and new line it covers and its lines as
    (" ", "-" or "+", text without the newline)."""

    old_first: int
    new_first: int
    lines: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class LineOrigin:
    """Who wrote a line: the trajectory step of the change, and the line's text."""

    step: int
    text: str


@dataclass(frozen=True)
class LeftOut:
    """A change whose lines have no position, or lines a change left without one."""

    path: str
    step: int
    reason: str
    lines: int


@dataclass
class Attribution:
    """Each file's attributed lines (1-based, in the file after all the changes) and what
    could not be placed."""

    files: dict[str, dict[int, LineOrigin]] = field(default_factory=dict)
    left_out: list[LeftOut] = field(default_factory=list)


def parse_hunks(diff: str) -> list[Hunk]:
    """The hunks of a one-file unified diff, in order. Hunk bodies are read by the counts in
    their headers, so a removed line that starts with `--` is not taken for a header; a
    header with no count means one line; an empty side (`-5,0`) starts after its line."""
    hunks: list[Hunk] = []
    lines = lines_of(diff)
    index = 0
    while index < len(lines):
        match = _HUNK_HEADER.match(lines[index])
        index += 1
        if not match:
            continue
        old_start, old_count, new_start, new_count = match.groups()
        old_left = 1 if old_count is None else int(old_count)
        new_left = 1 if new_count is None else int(new_count)
        body: list[tuple[str, str]] = []
        while index < len(lines) and (old_left > 0 or new_left > 0):
            line = lines[index]
            op, text = (line[:1], line[1:]) if line else (" ", "")
            if op == "\\":
                index += 1
                continue
            if op not in " -+":
                break
            body.append((op, text))
            old_left -= op != "+"
            new_left -= op != "-"
            index += 1
        old_first = int(old_start) + (not any(op != "+" for op, _ in body))
        new_first = int(new_start) + (not any(op != "-" for op, _ in body))
        hunks.append(Hunk(old_first, new_first, tuple(body)))
    return hunks


def apply_hunks(
    lines: dict[int, LineOrigin], hunks: Sequence[Hunk], step: int
) -> dict[int, LineOrigin]:
    """The attributed lines after a change: kept lines move by the lines inserted or removed
    above them, removed lines drop out, and the lines the change added are the step's."""
    moved: dict[int, int | None] = {}
    added: dict[int, LineOrigin] = {}
    after_hunk: list[int] = []  # the first old line after each hunk
    shift_after: list[int] = []  # how far the lines after each hunk move
    for hunk in sorted(hunks, key=lambda hunk: hunk.old_first):
        old, new = hunk.old_first, hunk.new_first
        for op, text in hunk.lines:
            if op == "+":
                added[new] = LineOrigin(step, text)
                new += 1
                continue
            moved[old] = new if op == " " else None
            old += 1
            new += op == " "
        after_hunk.append(old)
        shift_after.append(new - old)
    result: dict[int, LineOrigin] = {}
    for line, origin in lines.items():
        if line in moved:
            target = moved[line]
            if target is None:
                continue
        else:
            index = bisect_right(after_hunk, line) - 1
            target = line + (shift_after[index] if index >= 0 else 0)
        result[target] = origin
    result.update(added)
    return result


def line_attribution(events: Sequence[EventBase]) -> Attribution:
    """Who wrote which line of each file, following every file change in order. A change's
    step is its event's `step` (its 1-based position in `events` before the trajectory is
    stored)."""
    attribution = Attribution()
    for position, event in enumerate(events, 1):
        if isinstance(event, FileChange):
            _follow(attribution, event, event.step or position)
    return attribution


def _follow(attribution: Attribution, change: FileChange, step: int) -> None:
    files = attribution.files
    lines = files.pop(change.path, {})
    if change.operation == "delete":
        return
    if change.operation == "rename" and change.old_path:
        lines = files.pop(change.old_path, {})
    hunks = parse_hunks(change.diff)
    if change.operation == "create" and not any(op != "+" for h in hunks for op, _ in h.lines):
        # A new file: its lines are where the diff says, whatever the importer could anchor.
        lines = apply_hunks({}, hunks, step)
    elif hunks and not change.anchored:
        attribution.left_out.append(LeftOut(change.path, step, "unanchored", change.added))
        reason = f"moved by the unanchored change of step {step}"
        for earlier, count in sorted(Counter(origin.step for origin in lines.values()).items()):
            attribution.left_out.append(LeftOut(change.path, earlier, reason, count))
        lines = {}
    elif hunks:
        lines = apply_hunks(lines, hunks, step)
    if lines:
        files[change.path] = lines


def attributed_lines(events: Sequence[EventBase]) -> dict[str, list[tuple[int, int, int]]]:
    """Each file's lines written in the trajectory as (first line, last line, step) ranges in
    the file after all its changes, in line order; adjacent lines of one step form one range."""
    return {
        path: [(start, end, origins[0].step) for start, end, origins in _runs(lines, _by_step)]
        for path, lines in sorted(line_attribution(events).files.items())
    }


def _by_step(origin: LineOrigin) -> object:
    return origin.step


def _runs(
    lines: dict[int, LineOrigin], key: Callable[[LineOrigin], object]
) -> list[tuple[int, int, list[LineOrigin]]]:
    """Consecutive lines with the same key, as (first, last, origins)."""
    runs: list[tuple[int, int, list[LineOrigin]]] = []
    for line in sorted(lines):
        origin = lines[line]
        if runs and runs[-1][1] == line - 1 and key(runs[-1][2][0]) == key(origin):
            start, _, origins = runs[-1]
            origins.append(origin)
            runs[-1] = (start, line, origins)
        else:
            runs.append((line, line, [origin]))
    return runs


def to_agent_trace(meta: dict[str, Any], events: Sequence[EventBase]) -> dict[str, Any]:
    """The trajectory's attributed lines (meta.json as a dict, its events in order) as one
    Agent Trace record."""
    attribution = line_attribution(events)
    writers = _change_writers(meta, events)
    record: dict[str, Any] = {
        "version": AGENT_TRACE_VERSION,
        "id": "",
        "timestamp": _record_time(meta, events),
    }
    base_commit = meta.get("base_commit")
    if isinstance(base_commit, str) and base_commit:
        record["vcs"] = {"type": "git", "revision": base_commit}
    tool = _tool(meta, events)
    if tool:
        record["tool"] = tool
    record["files"] = [
        {"path": path, "conversations": _conversations(lines, writers)}
        for path, lines in sorted(attribution.files.items())
    ]
    record["metadata"] = {VENDOR_KEY: _vendor_metadata(meta, attribution)}
    record["id"] = _record_id(meta, record)
    return record


@dataclass(frozen=True)
class _Writer:
    session: str
    model: str | None


def _change_writers(meta: dict[str, Any], events: Sequence[EventBase]) -> dict[int, _Writer]:
    """The session and model behind each file change, by step: the model the agent (or
    subagent) that made it was last seen using."""
    models: dict[tuple[str, str | None], str] = {}
    fallback = _meta_model(meta)
    writers: dict[int, _Writer] = {}
    for position, event in enumerate(events, 1):
        if isinstance(event, SessionStart | AgentMessage | Usage) and event.model:
            models[(event.session, event.agent)] = event.model
        elif isinstance(event, FileChange):
            model = models.get((event.session, event.agent))
            model = model or models.get((event.session, None)) or fallback
            writers[event.step or position] = _Writer(event.session, model)
    return writers


def _conversations(
    lines: dict[int, LineOrigin], writers: dict[int, _Writer]
) -> list[dict[str, Any]]:
    """One conversation a session, its contributor the model that wrote most of its lines;
    a range another model wrote names its own contributor."""
    unknown = _Writer("", None)
    sessions: dict[str, dict[int, LineOrigin]] = {}
    for line, origin in sorted(lines.items()):
        sessions.setdefault(writers.get(origin.step, unknown).session, {})[line] = origin
    conversations = []
    for session, session_lines in sorted(sessions.items()):
        model_counts = Counter(writers.get(o.step, unknown).model for o in session_lines.values())
        main_model = model_counts.most_common(1)[0][0]
        ranges = []
        for start, end, origins in _runs(session_lines, lambda o: writers.get(o.step, unknown)):
            entry: dict[str, Any] = {
                "start_line": start,
                "end_line": end,
                "content_hash": _content_hash(origins),
            }
            model = writers.get(origins[0].step, unknown).model
            if model != main_model:
                entry["contributor"] = _contributor(model)
            ranges.append(entry)
        conversation: dict[str, Any] = {"contributor": _contributor(main_model), "ranges": ranges}
        if session:
            conversation["id"] = session
        conversations.append(conversation)
    return conversations


def _contributor(model: str | None) -> dict[str, Any]:
    contributor: dict[str, Any] = {"type": "ai"}
    if model:
        contributor["model_id"] = model_id(model)
    return contributor


def model_id(model: str) -> str:
    """A model's models.dev identifier (`provider/model`), the provider inferred from the name
    when the transcript gave none."""
    if "/" not in model:
        provider = next((name for prefix, name in _PROVIDERS if model.startswith(prefix)), None)
        if provider:
            model = f"{provider}/{model}"
    return model[:250]


def _content_hash(origins: list[LineOrigin]) -> str:
    text = "".join(origin.text + "\n" for origin in origins)
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()


def _tool(meta: dict[str, Any], events: Sequence[EventBase]) -> dict[str, str] | None:
    start = next((event for event in events if isinstance(event, SessionStart)), None)
    if start is not None:
        return {"name": start.harness, "version": start.harness_version or "unknown"}
    harnesses = meta.get("harnesses")
    entry = harnesses[0] if isinstance(harnesses, list) and harnesses else None
    if isinstance(entry, str):
        return {"name": entry, "version": "unknown"}
    if isinstance(entry, dict) and isinstance(entry.get("name"), str):
        version = entry.get("version")
        return {
            "name": entry["name"],
            "version": version if isinstance(version, str) else "unknown",
        }
    return None


def _meta_model(meta: dict[str, Any]) -> str | None:
    models = meta.get("models")
    entry = models[0] if isinstance(models, list) and models else None
    if isinstance(entry, dict):
        entry = entry.get("id") or entry.get("name") or entry.get("model")
    return entry if isinstance(entry, str) and entry else None


def _record_time(meta: dict[str, Any], events: Sequence[EventBase]) -> str:
    """When the recorded lines were written: the trajectory's end (RFC 3339, UTC)."""
    candidates = [meta.get("ended")] + [event.time for event in reversed(events)]
    for value in candidates:
        if isinstance(value, str) and (moment := _parse_time(value)):
            return _rfc3339(moment)
    return _rfc3339(datetime.now(UTC))


def _parse_time(value: str) -> datetime | None:
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _rfc3339(moment: datetime) -> str:
    moment = moment.astimezone(UTC)
    spec = "milliseconds" if moment.microsecond else "seconds"
    return moment.replace(tzinfo=None).isoformat(timespec=spec) + "Z"


# What of meta.json says which content a trajectory holds: the transcripts imported (their
# hashes), the commit the work started from, and what was composed from them.
_CONTENT_KEYS = ("base_commit", "sources", "sessions", "steps", "started", "ended", "files")


def _record_id(meta: dict[str, Any], record: dict[str, Any]) -> str:
    """A UUID of the trajectory's id and its content: the same each time the same trajectory
    is exported, another one for another trajectory under the same id (every repository's
    working trajectory of `main` has one id) or for the same one after an import changed it."""
    trajectory = meta.get("id")
    content = {key: meta.get(key) for key in _CONTENT_KEYS}
    # Not the timestamp: with no time recorded anywhere it is the time of the export.
    content["record"] = {k: v for k, v in record.items() if k not in ("id", "timestamp")}
    text = json.dumps(content, sort_keys=True, ensure_ascii=False, default=str)
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    name = f"stet:agent-trace:{trajectory if isinstance(trajectory, str) else ''}:{digest}"
    return str(uuid.uuid5(uuid.NAMESPACE_URL, name))


def _vendor_metadata(meta: dict[str, Any], attribution: Attribution) -> dict[str, Any]:
    data: dict[str, Any] = {
        "positions": "lines of each file after all the trajectory's changes"
        + (", made on top of vcs.revision" if meta.get("base_commit") else ""),
        "content_hash": "sha256 of the range's lines, each ending in a newline",
    }
    if isinstance(meta.get("id"), str):
        data["trajectory"] = meta["id"]
    if attribution.left_out:
        data["left_out"] = [
            {"path": item.path, "step": item.step, "reason": item.reason, "lines": item.lines}
            for item in attribution.left_out
        ]
    return data
