"""One line per step: what `stet trajectory show` prints and an editor's outline lists."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from stet_lsp.trajectory.events import (
    AgentMessage,
    Commit,
    Compaction,
    Error,
    EventBase,
    FileChange,
    Graduation,
    Note,
    RawEvent,
    Reasoning,
    Rewind,
    SessionEnd,
    SessionStart,
    Subagent,
    ToolCall,
    ToolResult,
    Usage,
    UserMessage,
)
from stet_lsp.trajectory.index import SALIENT_INPUT_KEYS, graduation_summary

if TYPE_CHECKING:
    from stet_lsp.trajectory.index import OutlineNode, TrajectoryIndex

WIDTH = 100


def summary(event: EventBase, width: int = WIDTH) -> str:
    """A short, single-line description of the event (no kind prefix); an event a rewind
    left is marked "abandoned", as the editor's outline marks it."""
    described = _describe(event)
    return _one_line(f"abandoned · {described}" if event.abandoned else described, width)


def _describe(event: EventBase) -> str:
    if isinstance(event, SessionStart):
        version = f" {event.harness_version}" if event.harness_version else ""
        model = f", {event.model}" if event.model else ""
        branch = f" on {event.branch}" if event.branch else ""
        return f"{event.harness}{version}{model}{branch}"
    if isinstance(event, UserMessage | AgentMessage | Reasoning):
        return event.text
    if isinstance(event, ToolCall):
        return f"{event.name} {_arguments(event.input)}"
    if isinstance(event, ToolResult):
        state = "ok" if event.ok else "error"
        return f"{state}: {event.output}"
    if isinstance(event, FileChange):
        moved = f" (from {event.old_path})" if event.old_path else ""
        return f"{event.operation} {event.path}{moved} +{event.added} -{event.removed}"
    if isinstance(event, Usage):
        cost = f", ${event.cost_usd:.4f}" if event.cost_usd is not None else ""
        return f"{event.input_tokens} in, {event.output_tokens} out{cost}"
    if isinstance(event, Compaction):
        return event.summary
    if isinstance(event, Subagent):
        return f"{event.agent_id}: {event.description or ''}"
    if isinstance(event, Commit):
        sha = f"{event.sha[:10]} " if event.sha else ""
        return f"{sha}{event.message}"
    if isinstance(event, Error):
        return ("interrupted: " if event.interrupt else "") + event.message
    if isinstance(event, Note):
        return f"[{event.entry_kind}] {event.text}"
    if isinstance(event, Graduation):
        return graduation_summary(
            event.entry_id, event.entry_kind, event.route, event.skill, event.edited
        )
    if isinstance(event, SessionEnd):
        return event.reason or ""
    if isinstance(event, Rewind):
        after = event.resumes_after
        return f"back to line {after.line} of {after.file}" if after else "back to the start"
    if isinstance(event, RawEvent):
        return event.reason or "kept as recorded"
    return ""


def _arguments(arguments: dict[str, object]) -> str:
    """What a call was asked to do, by the arguments the editor's outline names it by (a
    command given as a list of words is the words), else all of them."""
    for key in SALIENT_INPUT_KEYS:
        value = arguments.get(key)
        if isinstance(value, str) and value.strip():
            return value
        if isinstance(value, list) and value and all(isinstance(word, str) for word in value):
            return " ".join(value)
    return json.dumps(arguments, ensure_ascii=False)


def _one_line(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def step_at(file_name: str, text: str, line: int) -> int | None:
    """The step shown at 0-based `line` of a trajectory's events.jsonl (the step of that line)
    or narration.md (the step whose anchor is the nearest above)."""
    from stet_lsp.trajectory.index import NarrationIndex, TrajectoryIndex

    if not file_name.endswith(".jsonl"):
        return NarrationIndex(text).step_at(line)
    entry = TrajectoryIndex.from_events_text(text).at_line(line)
    return entry.step if entry is not None and entry.step else None


def tree(index: TrajectoryIndex) -> list[dict[str, Any]]:
    """The outline as a tree view shows it: sessions, turns and subagents (as the outline
    places them), each holding its steps and child nodes in the order of their lines.

    A node is `{"type": "session"|"turn"|"subagent", "name", "detail", "line", "step",
    "children"}`; a step `{"type": "step", "step", "kind", "line", "title"}`, with `path` and
    `operation` for a file change. Lines are 0-based lines of events.jsonl."""
    return [_tree_node(index, node) for node in index.outline()]


def _tree_node(index: TrajectoryIndex, node: OutlineNode) -> dict[str, Any]:
    placed: list[tuple[int, dict[str, Any]]] = [
        (child.line, _tree_node(index, child)) for child in node.children
    ]
    for entry in node.steps:
        step: dict[str, Any] = {
            "type": "step",
            "step": entry.step,
            "kind": entry.kind,
            "line": entry.line,
            "title": entry.summary,
        }
        if entry.kind == "file_change":
            record = index.record(entry) or {}
            step["path"] = record.get("path")
            step["operation"] = record.get("operation")
        placed.append((entry.line, step))
    placed.sort(key=lambda item: item[0])
    return {
        "type": node.kind,
        "name": node.name,
        "detail": node.detail,
        "line": node.line,
        "step": node.step,
        "children": [item for _, item in placed],
    }
