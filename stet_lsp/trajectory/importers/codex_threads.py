"""How a Codex thread links to its parent: the parent's call that spawned a subagent thread
(read from the parent's rollout where Codex keeps it), and the copy of the parent's history
a forked thread starts with, which is the parent's and left out (see `codex.py`)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from stet_lsp.core.errors import StetError
from stet_lsp.core.jsonread import value_or_none
from stet_lsp.trajectory.importers.base import Problem
from stet_lsp.trajectory.importers.codex_records import (
    SAFE_ID,
    Record,
    rollout_record,
    tool_output,
)
from stet_lsp.trajectory.importers.fields import text_field
from stet_lsp.trajectory.importers.files import open_text


def spawning_call(path: Path, meta: Record, thread_id: str) -> tuple[str | None, list[Path]]:
    """The id of the parent thread's call that spawned this subagent thread, when the parent's
    rollout is found where Codex keeps it (beside this one, or in another day's folder of the
    same `sessions` tree): its `collab_agent_spawn_end` names the call and the new thread, and
    the `spawn_agent` call's output names the thread (`agent_id`) or its agent path
    (`task_name`). None when the parent's rollout is not there or does not name this thread.
    With it, the rollouts read to find it."""
    source = meta.get("source")
    origin = source.get("subagent") if isinstance(source, dict) else None
    spawn = origin.get("thread_spawn") if isinstance(origin, dict) else None
    spawn = spawn if isinstance(spawn, dict) else {}
    parent = text_field(spawn.get("parent_thread_id")) or text_field(meta.get("parent_thread_id"))
    if not parent or parent == thread_id or not SAFE_ID.fullmatch(parent):
        return None, []
    agent_path = text_field(spawn.get("agent_path")) or text_field(meta.get("agent_path"))
    read: list[Path] = []
    for rollout in _parent_rollouts(path, parent):
        try:
            found = _spawn_call_in(rollout, thread_id, agent_path)
        except (OSError, StetError, ValueError):
            continue
        read.append(rollout)
        if found is not None:
            return found, read
    return None, read


def _parent_rollouts(path: Path, parent: str) -> Iterator[Path]:
    """The files that may be the parent thread's rollout: named after it (`rollout-<time>-<id>`)
    beside this rollout, then in the other day folders (`YYYY/MM/DD`) of its `sessions` tree."""
    folder = path.parent
    seen: set[Path] = set()
    patterns = (f"*{parent}.jsonl", f"*{parent}.jsonl.zst")
    for pattern in patterns:
        for candidate in sorted(folder.glob(pattern)):
            if candidate != path and candidate not in seen:
                seen.add(candidate)
                yield candidate
    days = folder.parents
    if len(days) < 3 or not all(
        part.isdigit() for part in (folder.name, days[0].name, days[1].name)
    ):
        return
    root = days[2]
    for pattern in patterns:
        for candidate in sorted(root.glob(f"[0-9]*/[0-9]*/[0-9]*/{pattern}"), reverse=True):
            if candidate != path and candidate not in seen and candidate.is_file():
                seen.add(candidate)
                yield candidate


def _spawn_call_in(rollout: Path, thread_id: str, agent_path: str | None) -> str | None:
    """The call in `rollout` that spawned `thread_id` (see spawning_call). Only the lines that
    name the thread or its path are decoded."""
    marks = [thread_id] + ([agent_path] if agent_path else [])
    by_output: str | None = None
    with open_text(rollout) as stream:
        for line in stream:
            if not any(mark in line for mark in marks):
                continue
            found = rollout_record(value_or_none(line))
            if found is None:
                continue
            kind, payload = found
            call_id = text_field(payload.get("call_id"))
            if not call_id:
                continue
            if kind == "event_msg" and payload.get("type") == "collab_agent_spawn_end":
                if text_field(payload.get("new_thread_id")) == thread_id:
                    return call_id
            elif (
                kind == "response_item"
                and payload.get("type") == "function_call_output"
                and by_output is None
            ):
                named = value_or_none(tool_output(payload.get("output"))[0])
                if isinstance(named, dict) and (
                    text_field(named.get("agent_id")) == thread_id
                    or (agent_path is not None and text_field(named.get("task_name")) == agent_path)
                ):
                    by_output = call_id
    return by_output


# --- a forked thread's copy of its parent's history --------------------------------------------

# The copy is written in one go when the fork starts: each of its lines is stamped within
# milliseconds of the one before, and the fork's own first record comes later.
_COPY_GAP = timedelta(milliseconds=25)
# A long copy is not written that fast throughout: where the parent's rollout vouches for each
# record, a pause of up to a second inside it does not end it.
_MATCHED_COPY_GAP = timedelta(seconds=1)
# What Codex adds at the end of a subagent's copy: an output of the parent's spawn call.
_SPAWN_NOTICE = "You are the newly spawned agent"


@dataclass
class Copy:
    lines: set[int] = field(default_factory=set)
    last_total: Any = None
    read: list[Path] = field(default_factory=list)
    # A fork by reference whose parent's total at the fork is not known: the line of its
    # token count that repeats that total, which counts no request of the fork's own.
    inherited_line: int | None = None
    problems: list[Problem] = field(default_factory=list)

    def note_total(self, value: Any) -> None:
        """Keeps the token total of a copied token_count (the thread's totals go on from it)."""
        found = rollout_record(value)
        if found is not None and found[0] == "event_msg" and found[1].get("type") == "token_count":
            info = found[1].get("info")
            if isinstance(info, dict) and info.get("total_token_usage") is not None:
                self.last_total = info["total_token_usage"]


def copied_history(path: Path, records: list[tuple[int, Any]]) -> Copy:
    """The lines of a forked thread's rollout (`forked_from_id`: a `/fork`, or a subagent
    spawned as a fork) that copy its parent's history: the parent's records, its
    session_meta first, written right after the thread's own session_meta. They are the
    parent's events, not this thread's (importing them would count the parent's requests and
    changes again). The copy is the lines written in one go (each within 25 ms of the one
    before, or within a second when the parent's rollout vouches for them) that are the
    parent's records in order, when its rollout is where Codex keeps it (the copy may leave
    records out), up to the notice Codex adds to a subagent's copy
    (an output of the parent's spawn call). Where the session_meta says where the thread's
    own records start (`subagent_history_start_ordinal`, in a paginated rollout whose
    records carry an `ordinal`), the copy is the records numbered below it, whatever their
    times. The last token total in the copy is where this thread's totals go on from."""
    copy = Copy()
    start = next(
        (i for i, (_, value) in enumerate(records) if _kind(value) == "session_meta"), None
    )
    if start is None:
        return copy
    meta = records[start][1]["payload"]
    parent = text_field(meta.get("forked_from_id"))
    rest = records[start + 1 :]
    boundary = meta.get("subagent_history_start_ordinal")
    if isinstance(boundary, int) and not isinstance(boundary, bool) and boundary >= 0:
        numbered = [(line, value, _ordinal(value)) for line, value in rest]
        if any(ordinal is not None for _, _, ordinal in numbered):
            for line, value, ordinal in numbered:
                if ordinal is not None and ordinal < boundary:
                    copy.lines.add(line)
                    copy.note_total(value)
            return copy
    if parent and isinstance(meta.get("history_base"), dict) and SAFE_ID.fullmatch(parent):
        # A fork that refers to its parent's history copies none; its token totals go on from
        # the parent's at the fork (the records numbered below forked_from_ordinal_exclusive).
        end = meta.get("forked_from_ordinal_exclusive")
        if isinstance(end, int) and not isinstance(end, bool):
            copy.last_total = _parent_total(path, parent, end, copy.read)
        if copy.last_total is None:
            copy.inherited_line = _inherited_count(rest)
        if isinstance(end, int) and not copy.read:
            taken = (
                f"its token count on line {copy.inherited_line} is taken for that total"
                if copy.inherited_line is not None
                else "no token count of the fork was taken for that total"
            )
            copy.problems.append(
                Problem(
                    path.name,
                    records[start][0],
                    f"forked from thread {parent}, whose rollout is not in this sessions tree:"
                    f" the token total the fork goes on from is not known ({taken})",
                )
            )
        return copy
    if not parent or not rest or _kind(rest[0][1]) != "session_meta":
        return copy  # not a fork
    items = _parent_items(path, parent, copy.read) if SAFE_ID.fullmatch(parent) else None
    position = 0
    previous = _stamp(rest[0][1])
    gap = _COPY_GAP if items is None else _MATCHED_COPY_GAP
    for line, value in rest:
        stamp = _stamp(value)
        if stamp is None or previous is None:
            if items is None:
                break  # no time to tell the copy by, and no parent to match
        elif not previous <= stamp <= previous + gap:
            break
        previous = stamp or previous
        found = rollout_record(value)
        notice = _is_spawn_notice(found)
        if items is not None and not notice:
            while position < len(items) and items[position] != found:
                position += 1
            if position == len(items):
                break
            position += 1
        copy.lines.add(line)
        copy.note_total(value)
        if notice:
            break
    return copy


def _inherited_count(records: list[tuple[int, Any]]) -> int | None:
    """The line of a fork's token count that repeats its parent's total at the fork (a fork by
    reference goes on from the parent's running total, and may write it again before its own
    first request is counted), for when the parent's rollout does not say what that total
    was: the fork's first token count when no request of the fork can be counted in it, as
    no output of the model comes before it, or none between it and the next token count with
    another total (which counts the request that output came from). None when the first
    token count is a request's, or there is none."""
    counts = [
        (index, total)
        for index, (_, value) in enumerate(records)
        if (total := _token_total(value)) is not None
    ]
    if not counts:
        return None
    first, total = counts[0]
    following = next((index for index, other in counts[1:] if other != total), None)
    if not any(_model_output(value) for _, value in records[:first]) or (
        following is not None
        and not any(_model_output(value) for _, value in records[first + 1 : following])
    ):
        return records[first][0]
    return None


def _token_total(value: Any) -> Any:
    """A token_count record's running total; None for another record, or one without."""
    found = rollout_record(value)
    if found is None or found[0] != "event_msg" or found[1].get("type") != "token_count":
        return None
    info = found[1].get("info")
    return info.get("total_token_usage") if isinstance(info, dict) else None


def _model_output(value: Any) -> bool:
    """Whether a record is output of the model (its message, reasoning or a call it made),
    which a request's token count follows."""
    found = rollout_record(value)
    if found is None:
        return False
    kind, payload = found
    if kind == "event_msg":
        return payload.get("type") in ("agent_message", "agent_reasoning")
    if kind != "response_item":
        return False
    item = payload.get("type")
    if item == "message":
        return payload.get("role") == "assistant"
    return item == "reasoning" or (isinstance(item, str) and item.endswith("_call"))


def _is_spawn_notice(found: tuple[str, Record] | None) -> bool:
    if found is None or found[0] != "response_item":
        return False
    payload = found[1]
    if payload.get("type") != "function_call_output":
        return False
    return tool_output(payload.get("output"))[0].lstrip().startswith(_SPAWN_NOTICE)


def _parent_items(path: Path, parent: str, read: list[Path]) -> list[Any] | None:
    """The records of the parent thread's rollout (see _parent_rollouts), in order; None when
    it is not found."""
    for rollout in _parent_rollouts(path, parent):
        try:
            with open_text(rollout) as stream:
                items = [rollout_record(value_or_none(line)) for line in stream if line.strip()]
        except (OSError, StetError, ValueError):
            continue
        read.append(rollout)
        first = items[0] if items else None
        if first is not None and first[0] == "session_meta" and first[1].get("id") == parent:
            return items
    return None


def _ordinal(value: Any) -> int | None:
    """The `ordinal` a paginated rollout gives each record (from 0, its session_meta's)."""
    ordinal = value.get("ordinal") if isinstance(value, dict) else None
    return ordinal if isinstance(ordinal, int) and not isinstance(ordinal, bool) else None


def _parent_total(path: Path, parent: str, end: int, read: list[Path]) -> Any:
    """The parent thread's token total at a fork that refers to its history: that of its last
    token_count numbered below `end`, in the pages of its rollout found where Codex keeps
    them; None when none is found."""
    best: tuple[int, Any] | None = None
    for rollout in _parent_rollouts(path, parent):
        try:
            with open_text(rollout) as stream:
                values = [value_or_none(line) for line in stream if line.strip()]
        except (OSError, StetError, ValueError):
            continue
        first = rollout_record(values[0]) if values else None
        if first is None or first[0] != "session_meta" or first[1].get("id") != parent:
            continue
        read.append(rollout)
        copy = Copy()
        for value in values:
            ordinal = _ordinal(value)
            if ordinal is None or ordinal >= end or (best is not None and ordinal <= best[0]):
                continue
            copy.note_total(value)
            if copy.last_total is not None:
                best = (ordinal, copy.last_total)
                copy.last_total = None
    return best[1] if best is not None else None


def _kind(value: Any) -> str | None:
    found = rollout_record(value)
    return found[0] if found is not None else None


def _stamp(value: Any) -> datetime | None:
    text = text_field(value.get("timestamp")) if isinstance(value, dict) else None
    try:
        stamp = datetime.fromisoformat(text) if text else None
    except ValueError:
        return None
    return stamp.replace(tzinfo=UTC) if stamp is not None and stamp.tzinfo is None else stamp
