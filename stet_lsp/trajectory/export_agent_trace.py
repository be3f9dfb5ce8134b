"""Line attribution of a trajectory as an Agent Trace record (Cursor's open RFC: its record
schema v1, `version` "1.0").

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
import urllib.parse
import uuid
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from stet_lsp.trajectory.attribution import Attribution, LineOrigin, line_attribution
from stet_lsp.trajectory.events import (
    AgentMessage,
    EventBase,
    FileChange,
    SessionStart,
    Usage,
    UserMessage,
)
from stet_lsp.trajectory.gittexts import GitTexts

AGENT_TRACE_VERSION = "1.0"
"""The record schema's version: MAJOR.MINOR, as the schema requires (the RFC's text is 0.1.0)."""
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


def to_agent_trace(
    meta: dict[str, Any], events: Sequence[EventBase], root: Path | None = None
) -> dict[str, Any]:
    """The trajectory's attributed lines (meta.json as a dict, its events in order) as one
    Agent Trace record. With the repository's `root`, a change known only by its search and
    replace text to a file the trajectory holds no earlier text of is placed in what git held
    (`gittexts.py`), as provenance places it."""
    earlier = None
    if root is not None:
        base = meta.get("base_commit")
        texts = GitTexts.of_events(root, base if isinstance(base, str) else None, events)
        earlier = texts.earlier
    attribution = line_attribution(events, earlier)
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
    files = sorted(attribution.files.items())
    record["files"] = [
        {"path": path, "conversations": _conversations(lines, writers)}
        for path, lines in files
        if _in_repository(path)
    ]
    outside = [(path, lines) for path, lines in files if not _in_repository(path)]
    record["metadata"] = {VENDOR_KEY: _vendor_metadata(meta, attribution, outside)}
    record["id"] = _record_id(meta, record)
    return record


@dataclass(frozen=True)
class _Writer:
    session: str
    model: str | None


def _change_writers(meta: dict[str, Any], events: Sequence[EventBase]) -> dict[int, _Writer]:
    """The session and model behind each file change, by step: the model of the turn (from
    a prompt to the next) of the agent (or subagent) that made it, as the text, usage or
    session start nearest before it in that turn names it, else the nearest after it (Codex
    and aider write a request's usage after its changes: the first request after a model
    switch names its model only there), else the model that agent was last seen using."""
    fallback = _meta_model(meta)
    turns: dict[tuple[str, str | None], int] = {}
    # Per agent and turn: the positions of the events naming a model, and those models.
    named: dict[tuple[str, str | None, int], tuple[list[int], list[str]]] = {}
    last_seen: dict[tuple[str, str | None], str] = {}
    changes: list[tuple[int, FileChange, int, str | None]] = []
    for position, event in enumerate(events, 1):
        key = (event.session, event.agent)
        if isinstance(event, UserMessage):
            turns[key] = turns.get(key, 0) + 1
        elif isinstance(event, SessionStart | AgentMessage | Usage) and event.model:
            at, models = named.setdefault((*key, turns.get(key, 0)), ([], []))
            at.append(position)
            models.append(event.model)
            last_seen[key] = event.model
        elif isinstance(event, FileChange):
            seen = last_seen.get(key) or last_seen.get((event.session, None))
            changes.append((position, event, turns.get(key, 0), seen))
    writers: dict[int, _Writer] = {}
    for position, change, turn, seen in changes:
        at, models = named.get((change.session, change.agent, turn), ([], []))
        # A turn of thousands of calls names a model thousands of times: no scan per change.
        index = bisect_left(at, position)
        model = models[index - 1] if index else models[index] if index < len(models) else None
        writers[change.step or position] = _Writer(change.session, model or seen or fallback)
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
            conversation["related"] = [{"type": "session", "url": session_urn(session)}]
        conversations.append(conversation)
    return conversations


def session_urn(session: str) -> str:
    """The session's id as a URI (the RFC's `related` entries are URLs): `urn:stet:session:`
    and the id, percent-encoded."""
    return "urn:stet:session:" + urllib.parse.quote(session, safe="")


def _in_repository(path: str) -> bool:
    """The RFC's paths are relative to the repository's root: an event's path is one unless
    it is outside it (`~/…`, absolute, or `../…`)."""
    return not (path.startswith(("~", "/", "../")) or path == ".." or path[1:3] in (":\\", ":/"))


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


def _vendor_metadata(
    meta: dict[str, Any],
    attribution: Attribution,
    outside: list[tuple[str, dict[int, LineOrigin]]],
) -> dict[str, Any]:
    data: dict[str, Any] = {
        "positions": "lines of each file after all the trajectory's changes"
        + (", made on top of vcs.revision" if meta.get("base_commit") else ""),
        "content_hash": "sha256 of the range's lines, each ending in a newline",
    }
    if isinstance(meta.get("id"), str):
        data["trajectory"] = meta["id"]
    left_out = [
        {"path": item.path, "step": item.step, "reason": item.reason, "lines": item.lines}
        for item in attribution.left_out
    ]
    for path, lines in outside:
        for step, count in sorted(Counter(origin.step for origin in lines.values()).items()):
            left_out.append(
                {"path": path, "step": step, "reason": "outside the repository", "lines": count}
            )
    if left_out:
        data["left_out"] = left_out
    return data
