"""The JSONL event stream `codex exec --json` prints (what CI jobs and wrappers such as the Codex
GitHub Action capture), as codex-rs/exec/src/exec_events.rs defines it: one `ThreadEvent` a
line, tagged by `type`. It is not a rollout (those are `codex.py`'s): the prompt, the model,
the working folder and the times are not in it.

* `thread.started` (`thread_id`, in some versions `timestamp`): the session's id. A later one
  (a resumed or another run printed into the same file) is kept raw, after the items the
  earlier run left unfinished.
* `turn.started`: counted in `dropped.turn_marker`. A stream that stops inside a turn (no
  `turn.completed` or `turn.failed` after it, or items never completed: Codex interrupted, or
  its output cut short) ends in a SessionEnd whose reason is `stopped mid-turn`.
* `turn.completed` (`usage`: `input_tokens`, which include `cached_input_tokens`, and
  `output_tokens`): a Usage event of the turn. Codex prints the thread's running totals there,
  so a later turn of the same thread counts what its totals grew by; the number of model
  requests is not said.
* `turn.failed` (`error.message`) and `error` (`message`): Error events.
* `item.started`, `item.updated`, `item.completed` (`item`: `id`, `type` and the fields of its
  type): an item is imported as it completed; each earlier state of it is counted in
  `dropped.repeated_item`, and an item that never completed (the stream cut short) is
  imported from its last state, a call then without its result. By `item.type`:
  `agent_message` and `plan` (`text`) are agent messages, `reasoning` (`text`, the readable
  summary) reasoning; `command_execution` (`command`, `aggregated_output`, `exit_code`,
  `status` in_progress, completed, failed or declined) a `shell` call and its result, headed
  `Exit code: N` as Codex shows the model, failed when the status is not `completed` or the
  exit code is not 0; `file_change` (`changes`: `path`, `kind` add, delete or update, and in
  later versions `diff`: a new or deleted file's text, an update's hunks; `status`) an
  `apply_patch` call, its result and, when it applied, a FileChange of each file (without a
  diff where the stream holds none); `mcp_tool_call` (`server`, `tool`, `arguments`,
  `result`, `error`, `status`) an `mcp__server__tool` call (of no arguments when they are
  null) and its result; `web_search` (`query`, later `action`) a `web_search` call, answered
  with no output when it completed (the pages found reach only the model); `collab_tool_call`
  (`tool` spawn_agent, send_input, wait or close_agent, `sender_thread_id`,
  `receiver_thread_ids`, `prompt`, `agents_states`, `status`) a call of that tool and its
  result, the subagents' states; `todo_list` (`items`: `text`, `completed`; started at a
  turn's first `update_plan` call, updated at each later one, completed when the turn ends)
  an answered `update_plan` call at its start and at each update, its completion a repeat of
  the last; `error` (`message`), a warning the run went on after, kept raw. Item types added
  later are kept raw.
* `item.plan.delta` (a plan's text streamed in pieces, which its `plan` item holds whole):
  counted in `dropped.repeated_event`; `request_user_input` and unknown types are kept raw.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stet_lsp.core.errors import StetError
from stet_lsp.trajectory import events as ev
from stet_lsp.trajectory.importers import head_records
from stet_lsp.trajectory.importers.base import ParsedSession
from stet_lsp.trajectory.importers.diffs import file_diff, hunks_diff
from stet_lsp.trajectory.importers.edits import change_fields
from stet_lsp.trajectory.importers.fields import (
    as_text,
    count_field,
    mapping,
    sequence,
    text_blocks,
    text_field,
)
from stet_lsp.trajectory.importers.files import file_digest, jsonl_records

FORMAT = "codex-exec"

_ITEM_EVENTS = frozenset({"item.started", "item.updated", "item.completed"})
_EVENT_TYPES = frozenset(
    {
        "thread.started",
        "turn.started",
        "turn.completed",
        "turn.failed",
        "item.plan.delta",
        "request_user_input",
        "error",
        *_ITEM_EVENTS,
    }
)
_OPERATIONS = {"add": "create", "delete": "delete", "update": "modify"}
# How a session ends whose stream stops inside a turn (no `turn.completed` or `turn.failed`
# after its `turn.started`, or items never completed): Codex interrupted, or its output cut
# short; the stream does not say which.
_STOPPED_MID_TURN = "stopped mid-turn"

Record = dict[str, Any]


# How many lines that are no JSON may come before the stream (each a problem of the import).
_LEADING_NOTES = 5


class CodexExecImporter:
    name = FORMAT
    label = "Codex exec --json event stream"

    def sniff(self, head: str) -> bool:
        """JSONL whose first records are all thread events (a `type` exec_events.rs names and
        nothing a rollout record wraps in `payload`), one of them in a shape only that stream
        has: a thread's start with its id, a turn's start, end or failure, or an item. A few
        lines that are no JSON may come first (`Reading prompt from stdin...`, a log line: the
        standard error captured with the stream)."""
        lines = head.lstrip("\ufeff").splitlines(keepends=True)
        skipped = 0
        while skipped < min(len(lines), _LEADING_NOTES) and not lines[skipped].lstrip().startswith(
            "{"
        ):
            skipped += 1
        records, _ = head_records("".join(lines[skipped:]))
        if not records:
            return False
        for record in records:
            if not isinstance(record, dict) or text_field(record.get("type")) not in _EVENT_TYPES:
                return False
            if "payload" in record:
                return False
        return any(_is_thread_event(record) for record in records)

    def parse(self, path: Path) -> ParsedSession:
        return _Reader(path).read()


IMPORTERS = {FORMAT: CodexExecImporter()}


def _is_thread_event(record: Record) -> bool:
    kind = record["type"]
    if kind == "thread.started":
        return isinstance(record.get("thread_id"), str)
    if kind == "turn.started":
        return record.keys() == {"type"}
    if kind == "turn.completed":
        return isinstance(record.get("usage"), dict)
    if kind == "turn.failed":
        return isinstance(record.get("error"), dict)
    if kind in _ITEM_EVENTS:
        item = record.get("item")
        return isinstance(item, dict) and isinstance(item.get("id"), str) and bool(_item_type(item))
    return False


@dataclass
class _Pending:
    """An item started or updated that has not completed yet: its last state."""

    line: int
    item: Record


@dataclass
class _Plan:
    """The states of a to-do list imported so far (each an `update_plan` call) and its last."""

    states: int
    steps: list[dict[str, str]]


@dataclass
class _Reader:
    path: Path
    parsed: ParsedSession = field(init=False)
    line: int = 0
    pending: dict[str, _Pending] = field(default_factory=dict)
    totals: tuple[int, int, int] | None = None
    started: bool = False
    runs: int = 1  # the runs the stream holds so far (a resumed run prints its thread again)
    turn_open: bool = False  # a turn started that has not ended (completed or failed) yet
    plans: dict[str, _Plan] = field(default_factory=dict)  # the run's to-do lists by item id

    def __post_init__(self) -> None:
        self.parsed = ParsedSession(format=FORMAT, session_id="")

    @property
    def source(self) -> str:
        return self.path.name

    def read(self) -> ParsedSession:
        records = list(jsonl_records(self.path, self.source, self.parsed.problems))
        if not records:
            raise StetError(f"{self.path}: no codex exec events could be read")
        self.parsed.sources[self.source] = self.path
        first = next(
            (r for _, r in records if isinstance(r, dict) and r.get("type") == "thread.started"),
            {},
        )
        self.parsed.session_id = text_field(first.get("thread_id")) or file_digest(self.path)
        self.line = records[0][0]
        self.emit(ev.SessionStart, harness="codex", time=text_field(first.get("timestamp")))
        for line, record in records:
            self.line = line
            self.record(record)
        stopped = self.turn_open or bool(self.pending)
        self.unfinished()
        self.line = records[-1][0]
        self.emit(ev.SessionEnd, reason=_STOPPED_MID_TURN if stopped else None)
        return self.parsed

    def emit(self, kind: type[ev.EventBase], time: str | None = None, **fields: Any) -> None:
        self.parsed.emit(kind, ev.SourceRef(file=self.source, line=self.line), time, **fields)

    def raw(self, record: Any, reason: str) -> None:
        self.emit(ev.RawEvent, record=record, reason=reason)

    def record(self, record: Any) -> None:
        kind = text_field(record.get("type")) if isinstance(record, dict) else None
        if kind == "thread.started":
            self.thread_started(record)
        elif kind == "turn.started":
            self.parsed.dropped["turn_marker"] += 1
            self.turn_open = True
        elif kind == "turn.completed":
            self.unfinished()
            self.turn_open = False
            self.turn_completed(record)
        elif kind == "turn.failed":
            self.unfinished()
            self.turn_open = False
            self.error(mapping(record.get("error")), record)
        elif kind == "error":
            self.error(record, record)
        elif kind in _ITEM_EVENTS:
            item = record.get("item")
            if isinstance(item, dict):
                self.item_event(kind, item, record)
            else:
                self.raw(record, "item event without its item")
        elif kind == "item.plan.delta":
            self.parsed.dropped["repeated_event"] += 1  # its plan item holds the whole text
        elif kind == "request_user_input":
            self.raw(record, "the model's request for the user's input")
        else:
            self.raw(record, "event of a type not known here")

    def unfinished(self) -> None:
        """The items of a turn that ended (or of a stream cut short) without completing, from
        their last state: Codex completes every item it finishes before the turn's end."""
        line = self.line
        for pending in self.pending.values():
            self.line = pending.line
            self.item(pending.item, finished=False)
        self.pending.clear()
        self.line = line

    def thread_started(self, record: Record) -> None:
        if self.started:
            self.unfinished()  # the earlier run's: the next one numbers its items anew
            self.plans.clear()
            self.turn_open = False
            self.runs += 1
            self.raw(record, "a thread started again in the same stream (a resumed run)")
            if text_field(record.get("thread_id")) != self.parsed.session_id:
                self.totals = None  # another thread: its token totals start anew
        self.started = True

    def turn_completed(self, record: Record) -> None:
        usage = record.get("usage")
        if not isinstance(usage, dict):
            self.raw(record, "turn end without its usage")
            return
        figures = (
            count_field(usage.get("input_tokens")),
            count_field(usage.get("cached_input_tokens")),
            count_field(usage.get("output_tokens")),
        )
        grown = self.totals is not None and all(
            now >= before for now, before in zip(figures, self.totals, strict=True)
        )
        base = self.totals if grown and self.totals is not None else (0, 0, 0)
        self.totals = figures
        input_tokens, cached, output_tokens = (
            now - before for now, before in zip(figures, base, strict=True)
        )
        self.emit(
            ev.Usage,
            input_tokens=max(input_tokens - cached, 0),
            cache_read_tokens=cached,
            output_tokens=output_tokens,
            requests=None,
        )

    def error(self, error: Record, record: Record) -> None:
        message = text_field(error.get("message"))
        if message is None:
            self.raw(record, "error without its message")
        else:
            self.emit(ev.Error, message=message)

    def item_event(self, kind: str, item: Record, record: Record) -> None:
        if _item_type(item) == "todo_list":
            self.todo_list(item, kind)
            return
        item_id = text_field(item.get("id"))
        earlier = self.pending.pop(item_id, None) if item_id else None
        if earlier is not None:
            self.parsed.dropped["repeated_item"] += 1  # a state this one supersedes
        if kind == "item.completed":
            self.item(item, finished=True, record=record)
        elif item_id is not None:
            self.pending[item_id] = _Pending(self.line, item)
        else:
            self.raw(record, "item without its id")

    def item(self, item: Record, finished: bool, record: Record | None = None) -> None:
        handler = _ITEM_HANDLERS.get(_item_type(item) or "")
        if handler is None:
            self.raw(record or item, "item of a type not known here")
        else:
            handler(self, item, finished)

    # --- items -----------------------------------------------------------------------------

    def agent_message(self, item: Record, finished: bool) -> None:
        text = text_field(item.get("text"))
        if text is not None and text.strip():
            self.emit(ev.AgentMessage, text=text)
        else:
            self.parsed.dropped["empty_text"] += 1

    def reasoning(self, item: Record, finished: bool) -> None:
        text = text_field(item.get("text"))
        if text is not None and text.strip():
            self.emit(ev.Reasoning, text=text)
        else:
            self.parsed.dropped["empty_reasoning"] += 1

    def command_execution(self, item: Record, finished: bool) -> None:
        call_id = self.call(item, "shell", {"command": as_text(item.get("command"))})
        status = item.get("status")
        if not finished or status == "in_progress":
            return
        exit_code = item.get("exit_code")
        output = as_text(item.get("aggregated_output"))
        if isinstance(exit_code, int) and not isinstance(exit_code, bool):
            output = f"Exit code: {exit_code}\nOutput:\n{output}"
        ok = status == "completed" and exit_code in (0, None)
        self.emit(ev.ToolResult, call_id=call_id, ok=ok, output=output)

    def file_change(self, item: Record, finished: bool) -> None:
        changes = [change for change in sequence(item.get("changes")) if isinstance(change, dict)]
        listed = [{"path": c.get("path"), "kind": c.get("kind")} for c in changes]
        call_id = self.call(item, "apply_patch", {"changes": listed})
        status = item.get("status")
        if not finished or status == "in_progress":
            return
        applied = status == "completed"
        self.emit(ev.ToolResult, call_id=call_id, ok=applied, output="")
        for change in changes if applied else ():
            fields = _change_fields(change)
            if fields is None:
                self.raw(change, "file change of a kind not known here")
            else:
                self.emit(ev.FileChange, call_id=call_id, **fields)

    def mcp_tool_call(self, item: Record, finished: bool) -> None:
        server = text_field(item.get("server")) or "unknown"
        tool = text_field(item.get("tool")) or "unknown"
        arguments = item.get("arguments")
        if isinstance(arguments, dict):
            tool_input = arguments
        else:  # none (Codex writes null for a call without arguments), or not an object
            tool_input = {} if arguments is None else {"arguments": arguments}
        call_id = self.call(item, f"mcp__{server}__{tool}", tool_input)
        status = item.get("status")
        if not finished or status == "in_progress":
            return
        error = mapping(item.get("error"))
        if error:
            output = as_text(error.get("message"))
        else:
            output = _mcp_output(mapping(item.get("result")))
        ok = status == "completed" and not error
        self.emit(ev.ToolResult, call_id=call_id, ok=ok, output=output)

    def web_search(self, item: Record, finished: bool) -> None:
        """A search Codex ran, which completes when its results reached the model: the stream
        keeps what was asked (`query`, `action`), not what was found, so a completed search is
        answered with no output."""
        tool_input: dict[str, Any] = {"query": as_text(item.get("query"))}
        if isinstance(item.get("action"), dict | str):
            tool_input["action"] = item["action"]
        call_id = self.call(item, "web_search", tool_input)
        if finished:
            self.emit(ev.ToolResult, call_id=call_id, ok=True, output="")

    def collab_tool_call(self, item: Record, finished: bool) -> None:
        """A call of a tool that drives subagents (`tool`: spawn_agent, send_input, wait,
        close_agent), the call of that name: the threads it acted on and the prompt it sent;
        its result, the subagents' states as it left them (each one's `status` and last
        `message`), failed when its status is `failed`."""
        tool_input: dict[str, Any] = {
            "receiver_thread_ids": sequence(item.get("receiver_thread_ids"))
        }
        prompt = item.get("prompt")
        if prompt is not None:
            tool_input["prompt"] = as_text(prompt)
        sender = text_field(item.get("sender_thread_id"))
        if sender is not None and sender != self.parsed.session_id:
            tool_input["sender_thread_id"] = sender
        call_id = self.call(item, text_field(item.get("tool")) or "unknown", tool_input)
        status = item.get("status")
        if not finished or status == "in_progress":
            return
        states = mapping(item.get("agents_states"))
        output = as_text(states) if states else ""
        self.emit(ev.ToolResult, call_id=call_id, ok=status == "completed", output=output)

    def todo_list(self, item: Record, kind: str) -> None:
        """The agent's plan. Codex starts the item at the turn's first `update_plan` call and
        updates it at each later one, with the whole plan each time; it completes the item
        when the turn ends, with the plan as the last call left it. Each start and update is
        an `update_plan` call (the first one named by the item's id, the next ones
        `<id>-update1`, `<id>-update2`, ...), answered where it stands with no output (the
        stream keeps none: the plan was set); the completion, repeating the last of them, is
        counted in `dropped.repeated_item`, and is a call of its own only when the plan it
        holds is another."""
        steps = [
            {
                "step": as_text(step.get("text")),
                "status": "completed" if step.get("completed") is True else "pending",
            }
            for step in sequence(item.get("items"))
            if isinstance(step, dict)
        ]
        item_id = text_field(item.get("id"))
        earlier = self.plans.get(item_id) if item_id is not None else None
        if kind == "item.completed" and earlier is not None and earlier.steps == steps:
            self.parsed.dropped["repeated_item"] += 1
            return
        states = earlier.states + 1 if earlier is not None else 1
        if item_id is not None:
            self.plans[item_id] = _Plan(states, steps)
        suffix = f"-update{states - 1}" if states > 1 else ""
        call_id = self.call(item, "update_plan", {"plan": steps}, suffix)
        self.emit(ev.ToolResult, call_id=call_id, ok=True, output="")

    def error_item(self, item: Record, finished: bool) -> None:
        """An error item is a warning the run went on after (a retried connection, a model
        rerouted, a deprecation): kept raw, saying so. A failure ends a turn (`turn.failed`)
        or the stream (an `error` event)."""
        self.raw(item, "a warning Codex reported while the run went on")

    def call(self, item: Record, name: str, tool_input: dict[str, Any], suffix: str = "") -> str:
        call_id = (text_field(item.get("id")) or f"{name}@{self.line}") + suffix
        if self.runs > 1:
            call_id += f"-run{self.runs}"  # each run numbers its items from item_0
        self.emit(ev.ToolCall, call_id=call_id, name=name, input=tool_input)
        return call_id


_ITEM_HANDLERS = {
    "agent_message": _Reader.agent_message,
    "plan": _Reader.agent_message,
    "reasoning": _Reader.reasoning,
    "command_execution": _Reader.command_execution,
    "file_change": _Reader.file_change,
    "mcp_tool_call": _Reader.mcp_tool_call,
    "web_search": _Reader.web_search,
    "collab_tool_call": _Reader.collab_tool_call,
    "error": _Reader.error_item,
}


def _item_type(item: Record) -> str | None:
    """An item's kind: `type`, or `item_type` in the first releases of the stream (0.4x), whose
    messages were `assistant_message`."""
    kind = text_field(item.get("type")) or text_field(item.get("item_type"))
    return "agent_message" if kind == "assistant_message" else kind


def _change_fields(change: Record) -> dict[str, Any] | None:
    """FileChange fields of one change of a file_change item; None for a kind not known. A
    `diff` (later versions) is an added file's text, a deleted file's text or an update's
    hunks; without it the change has no diff."""
    path = text_field(change.get("path"))
    operation = _OPERATIONS.get(text_field(change.get("kind")) or "")
    if path is None or operation is None:
        return None
    text = text_field(change.get("diff"))
    if text is None:
        return change_fields(path, operation)
    if operation == "create":
        return change_fields(path, operation, file_diff(path, None, text), content=text)
    if operation == "delete":
        return change_fields(path, operation, file_diff(path, text, None))
    hunks = text.find("@@")
    if hunks < 0:
        return change_fields(path, operation)
    return change_fields(path, operation, hunks_diff(path, text[hunks:]))


def _mcp_output(result: Record) -> str:
    """An MCP result's text: its text content blocks, else its content or structured content
    as JSON."""
    blocks = sequence(result.get("content"))
    texts = text_blocks(blocks)
    if texts and len(texts) == len(blocks):
        return "\n".join(texts)
    if blocks:
        return as_text(blocks)
    structured = result.get("structured_content")
    return "" if structured is None else as_text(structured)
