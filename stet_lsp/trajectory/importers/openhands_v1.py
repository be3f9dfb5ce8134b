"""OpenHands V1 conversations: what the software-agent-sdk (and the `openhands` CLI built on
it) persists for a conversation, a folder `<conversations>/<conversation id hex>/` holding

* `base_state.json`: the conversation's state, one JSON object: `id` (the conversation's
  UUID), `agent` (`llm.model`, `llm.usage_id`, the tools, the condenser and its own `llm`),
  `workspace` (`working_dir`: the folder the agent worked in), `execution_status` (`idle`,
  `running`, `paused`, `finished`, `error`, `stuck`, ...) and `stats.usage_to_metrics`: for
  each of the conversation's LLMs (by usage id) its `token_usages`, one per model request
  with the request's `response_id`, `prompt_tokens` (cached ones included),
  `completion_tokens`, `cache_read_tokens` and `cache_write_tokens`, and its `costs` (only
  the positive ones, without a response id);
* `events/event-<index, 5 digits or more>-<event id>.json`: one event a file, in the order
  of the index. Every event has `id`, `timestamp` (local time, no zone), `source` ("user",
  "agent", "environment" or "hook") and `kind`, its class name (early versions wrote the
  dotted module path): `MessageEvent` (`llm_message`: `role`, `content` parts, readable
  `reasoning_content`, `thinking_blocks`, `responses_reasoning_item`; `llm_response_id`),
  `ActionEvent` (a tool call: `tool_name`, `tool_call_id`, `action` holding the tool's
  arguments and its own `kind`, or null when the call was invalid, `tool_call` with the raw
  `arguments`, `thought` text parts, the reasoning fields, `llm_response_id`),
  `ObservationEvent` (`tool_call_id`, `action_id`, `observation`: `content` parts and
  `is_error`, plus the tool's fields: a terminal's `exit_code` and `metadata.working_dir`, the
  file editor's `command`, `path`, `prev_exist` and the whole file as `old_content` and
  `new_content`; before late 2025 an `output` text and an `error` instead of `content`),
  `AgentErrorEvent` (`error`, answering a tool call), `UserRejectObservation`
  (`rejection_reason`), `SystemPromptEvent` (and `SystemPromptUpdateEvent`), `Condensation`
  (`forgotten_event_ids`, `summary`), `CondensationSummaryEvent`, `CondensationRequest`,
  `ConversationStateUpdateEvent` (`key`, `value`: an execution status, or cumulative `stats`),
  `ConversationErrorEvent` (`code`, `detail`), `PauseEvent`, `InterruptEvent`,
  `HookExecutionEvent`, `ACPToolCallEvent`, `TokenEvent` and `LLMCompletionLogEvent`. Events
  of September 2025 carried a cumulative `metrics` snapshot instead of `stats`.

The delegate tool's sub-agents persist their conversations in `subagents/<id>/` of the
conversation's folder (the same layout): each is cut into the runs of the tasks it was given
(a run starts at the user's message that gave the task), and a run follows the delegate call
whose `tasks` holds that task, as a Subagent (the call's agent name) and the sub-agent's
events; a run no call names follows the conversation's events. A task whose conversation is
not there, and a call of the task tool (whose sub-agent conversations are removed when they
end), is a Subagent without events. The sub-agents' usage is in the parent's `stats`
(`delegate:<agent>`), by response, so it is placed at their events.

The path given may be `base_state.json` (by content, whatever it is called) or any event
file of the folder: the whole conversation is read, and every file read is a source (an event
file that is not JSON is a problem named after it, and the rest is read). An event file
outside such a folder (or a file of events one a line) is read on its own. The session is the
conversation's UUID; the SDK records no version of its own. A working folder in the workspace
of OpenHands' sandbox (`/workspace/project`) is the session's `sandbox_root`, and the one
folder of it that the session's files, commands and terminals were in its
`sandbox_candidate` (the app server clones a selected repository there).

Tool calls are paired with their results by `tool_call_id` (or `action_id`); an agent error
or a rejection answering a call is a failed result, and the reports of an ACP agent's tool
call give one call and one result. The `think` and `finish` tools become reasoning and an
agent message (their acknowledgements are counted in `dropped`). A file editor's observation
gives the file change as a diff of the whole file before and after; `apply_patch`
observations list their changes; otherwise the change comes from the call's arguments.
Events are read in the order of their files. Since mid-2026 the SDK keeps the conversation as
a tree (each event's `parent_id`, `__root__` for a root; base_state.json's `leaf_event_id`
its HEAD): events off the branch from HEAD back to the root (left by navigating back) are
abandoned, and an event whose parent is not the event before it starts a branch, after a
Rewind to that parent. Each model request's usage is taken once from
`base_state.json`, placed at the first event of its response (the others, such as a title's,
at the end, and after them, raw, an entry of `token_usages` that is no object); a cost is
kept only when every request of an LLM has one, the list having no response ids. Without
per-request usage the cumulative `stats` updates (or `metrics` snapshots) give it as
differences, with a cost only where `accumulated_cost` grew. System
prompts, hook executions and kinds not known here are kept raw; state updates, condensation
requests, token ids, completion logs and the context the harness added to a message
(`extended_content`) are counted in `dropped`. Readable reasoning is kept, redacted thinking
and encrypted reasoning are counted as `opaque_reasoning`; reasoning a model wrote inline
before its reply (`<think>…</think>`, kept in the thought or message text beside
`reasoning_content`) is reasoning, not agent text. A pause or an interrupt is an
interrupting error; the session ends with `finish` or the conversation's last status.
Content parts are text and images (named in the text, `[image: <url>]`); a part of another
kind is kept raw after the event its text went into.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stet_lsp.core.errors import StetError
from stet_lsp.trajectory.events import (
    AgentMessage,
    Compaction,
    Error,
    EventBase,
    FileChange,
    RawEvent,
    Reasoning,
    Rewind,
    SessionEnd,
    SessionStart,
    SourceRef,
    Subagent,
    ToolCall,
    ToolResult,
    Usage,
    UserMessage,
)
from stet_lsp.trajectory.importers import read_head
from stet_lsp.trajectory.importers.base import E, ParsedSession, Problem
from stet_lsp.trajectory.importers.diffs import Diff, file_diff, headers
from stet_lsp.trajectory.importers.edits import (
    change_fields,
    edits_from_arguments,
    file_change_fields,
)
from stet_lsp.trajectory.importers.fields import (
    as_text,
    cost_field,
    count_field,
    mapping,
    sequence,
    text_field,
)
from stet_lsp.trajectory.importers.files import file_digest, jsonl_records, open_text
from stet_lsp.trajectory.importers.jsondoc import JsonDocument, escape, leading_members
from stet_lsp.trajectory.importers.openhands import sandbox_folder
from stet_lsp.trajectory.importers.openhands_metrics import CumulativeUsage

FORMAT = "openhands-v1"
HARNESS = "openhands"
BASE_STATE = "base_state.json"
EVENTS_FOLDER = "events"
SUBAGENTS_FOLDER = "subagents"
ROOT_PARENT = "__root__"  # the `parent_id` of a root of the conversation tree
DELEGATE_TOOL = "delegate"
TASK_TOOL = "task"
EVENT_FILE = re.compile(r"^event-(\d{5,})-(.+)\.json$")


_SOURCES = frozenset({"user", "agent", "environment", "hook"})
_THINK = re.compile(r"\A\s*<think>(.*?)</think>\s*", re.DOTALL)
_KINDS = frozenset(
    {
        "MessageEvent",
        "ActionEvent",
        "ObservationEvent",
        "AgentErrorEvent",
        "UserRejectObservation",
        "SystemPromptEvent",
        "SystemPromptUpdateEvent",
        "Condensation",
        "CondensationSummaryEvent",
        "CondensationRequest",
        "ConversationStateUpdateEvent",
        "ConversationErrorEvent",
        "PauseEvent",
        "InterruptEvent",
        "HookExecutionEvent",
        "ACPToolCallEvent",
        "TokenEvent",
        "LLMCompletionLogEvent",
        "StreamingDeltaEvent",
    }
)
# Members only V1 events have, for an event whose `kind` (written last) is past the sniffed head.
_EVENT_MEMBERS = frozenset(
    {
        "parent_id",
        "thought",
        "llm_message",
        "tool_name",
        "tool_call_id",
        "system_prompt",
        "forgotten_event_ids",
        "llm_response_id",
        "rejection_reason",
    }
)
_UNRECORDED = {
    "CondensationRequest": "condensation_request",
    "TokenEvent": "token_ids",
    "LLMCompletionLogEvent": "completion_log",
    "StreamingDeltaEvent": "streaming_delta",
}
_FAILED_STATUSES = frozenset({"error", "stuck"})
_ACP_DONE = frozenset({"completed", "failed"})


class OpenHandsV1Importer:
    name = FORMAT
    label = "OpenHands V1 conversation (base_state.json or events/event-*.json)"

    def sniff(self, head: str) -> bool:
        """A conversation's `base_state.json` (an object starting with `id` then `agent`) or
        one of its events (an object with a string `id`, a `source` and a V1 `kind` or member;
        the V0 formats' events have integer ids)."""
        if not head.lstrip().startswith("{"):
            return False
        members = leading_members(head)
        return _is_base_state(members) or _is_event(members)

    def parse(self, path: Path) -> ParsedSession:
        return _Reader(path).read()


IMPORTERS = {FORMAT: OpenHandsV1Importer()}


def _is_base_state(members: dict[str, Any]) -> bool:
    if list(members)[:2] != ["id", "agent"] or not isinstance(members["id"], str):
        return False
    agent = members["agent"]  # None: cut off by the end of the head
    return agent is None or (isinstance(agent, dict) and ("llm" in agent or "kind" in agent))


def _is_event(members: dict[str, Any]) -> bool:
    if not isinstance(members.get("id"), str) or text_field(members.get("source")) not in _SOURCES:
        return False
    kind, stamped = event_kind(members.get("kind")), isinstance(members.get("timestamp"), str)
    if kind:
        # A kind of a later version than this importer knows is still an event.
        return kind in _KINDS or (stamped and kind.endswith("Event"))
    return stamped and not _EVENT_MEMBERS.isdisjoint(members)


def event_kind(kind: Any) -> str:
    """An event's class name, from `kind` as any version wrote it."""
    return kind.rpartition(".")[2] if isinstance(kind, str) else ""


def event_files(folder: Path) -> list[Path]:
    """The event files of a conversation folder, in the order of their index."""
    try:
        names = [entry.name for entry in (folder / EVENTS_FOLDER).iterdir()]
    except OSError:
        return []
    numbered = [(int(found.group(1)), name) for name in names if (found := EVENT_FILE.match(name))]
    return [folder / EVENTS_FOLDER / name for _, name in sorted(numbered)]


def subagent_folders(folder: Path) -> list[Path]:
    """The conversation folders of the sub-agents a conversation's delegate tool started."""
    try:
        return sorted(p for p in (folder / SUBAGENTS_FOLDER).iterdir() if p.is_dir())
    except OSError:
        return []


def delegated_folders(folder: Path) -> list[Path]:
    """The conversation folders of a conversation's sub-agents and of theirs in turn (a link
    back to a folder listed already is not followed)."""
    found: list[Path] = []
    seen = {folder.resolve()}
    pending = subagent_folders(folder)
    while pending:
        sub = pending.pop(0)
        if sub.resolve() in seen:
            continue
        seen.add(sub.resolve())
        found.append(sub)
        pending += subagent_folders(sub)
    return found


def conversation_folder(path: Path) -> Path | None:
    """The conversation folder `path` belongs to: the folder of a `base_state.json`, or the
    one above the `events/` folder of an event file named as the SDK names them."""
    if path.name == BASE_STATE:
        return path.parent
    if path.parent.name == EVENTS_FOLDER and EVENT_FILE.match(path.name):
        return path.parent.parent
    return None


def conversation_id(state: Any, folder: Path | None) -> str | None:
    """The conversation's id: its UUID as `base_state.json` has it, else the folder's name."""
    found = text_field(mapping(state).get("id"))
    return found or (folder.name if folder is not None else None)


def working_dir(state: Any) -> str | None:
    return text_field(mapping(mapping(state).get("workspace")).get("working_dir"))


@dataclass
class _Record:
    """One event as read, with where it came from."""

    at: SourceRef
    value: Any


@dataclass
class _Tree:
    """The conversation tree of the SDK's events (mid-2026 on): each event's `parent_id`
    (`__root__` for a root; an event written before the tree has the one before it in the
    log), and the events on the active branch, from base_state.json's `leaf_event_id` (HEAD)
    back to the root. State updates are in the log but are no branch of their own."""

    parents: dict[str, str | None]
    nodes: dict[str, SourceRef]  # the events of the tree (not state updates), where read
    active: set[str]

    @classmethod
    def of(cls, records: list[_Record], state: dict[str, Any]) -> _Tree | None:
        """The tree, None for a conversation written before it (no event has a parent)."""
        if not any(isinstance(mapping(r.value).get("parent_id"), str) for r in records):
            return None
        tree = cls({}, {}, set())
        previous: str | None = None
        last: str | None = None
        for record in records:
            event = mapping(record.value)
            event_id = text_field(event.get("id"))
            if event_id is None:
                continue
            parent = event.get("parent_id")
            tree.parents[event_id] = (
                None if parent == ROOT_PARENT else parent if isinstance(parent, str) else previous
            )
            previous = event_id
            kind = event_kind(event.get("kind"))
            if kind != "ConversationStateUpdateEvent":
                tree.nodes[event_id] = record.at
                last = event_id if kind != "ConversationErrorEvent" else last
        leaf = text_field(state.get("leaf_event_id"))
        if leaf is not None and leaf not in tree.parents:
            leaf = None  # written ahead of its event (a conversation still running): the last
        if leaf is None and state.get("head_is_empty") is not True:
            leaf = last
        while leaf is not None and leaf in tree.parents and leaf not in tree.active:
            tree.active.add(leaf)
            leaf = tree.parents[leaf]
        return tree

    def node(self, record: _Record) -> str | None:
        """The record's event id when it is an event of the tree."""
        event_id = text_field(mapping(record.value).get("id"))
        return event_id if event_id in self.nodes else None

    def parent(self, node: str) -> str | None:
        """The event of the tree `node` follows, past the state updates between them."""
        seen = {node}
        parent = self.parents.get(node)
        while parent is not None and parent not in self.nodes and parent not in seen:
            seen.add(parent)
            parent = self.parents.get(parent)
        return parent if parent in self.nodes else None


@dataclass
class _Run:
    """The part of a sub-agent's conversation that one task started."""

    conversation: str  # the folder name of the sub-agent's conversation
    task: str | None  # the user's message it starts with
    records: list[_Record]
    done: bool = False


@dataclass
class _Call:
    call_id: str
    name: str
    arguments: dict[str, Any]
    answered: bool = False


@dataclass
class _RequestUsage:
    at: SourceRef
    model: str | None
    prompt: int
    output: int
    cached: int
    written: int
    cost: float | None


@dataclass
class _State:
    """What base_state.json says."""

    value: dict[str, Any] = field(default_factory=dict)
    model: str | None = None
    cwd: str | None = None
    status: str | None = None
    requests: dict[str, list[_RequestUsage]] = field(default_factory=dict)
    unplaced: list[_RequestUsage] = field(default_factory=list)
    unread: list[tuple[SourceRef, Any]] = field(default_factory=list)  # usages not objects


class _Reader:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.folder = conversation_folder(path)
        self.state_path: Path | None = None
        if self.folder is not None:
            self.state_path = self.folder / BASE_STATE
        elif _is_base_state(leading_members(read_head(path))):
            self.state_path = path  # a base state under another name: its folder is the rest
            self.folder = path.parent
        # Sources are named from the conversation's folder on, so two conversations' files
        # never share a name.
        self.prefix = f"{self.folder.name}/" if self.folder is not None else ""
        self.per_request = False  # whether base_state.json gave each request's usage
        self.parsed = ParsedSession(format=FORMAT, session_id="")
        self.state = _State()
        self.calls: dict[str, _Call] = {}
        self.absorbed: set[str] = set()  # think and finish calls: no tool call of their own
        self.responses: set[str] = set()  # responses whose reasoning and usage are out
        self.usage = CumulativeUsage()
        self.end_reason: str | None = None
        self.last_time: str | None = None
        self.agent: str | None = None  # the sub-agent whose events are being read
        self.delegated: list[_Run] = []  # the runs of the sub-agents' tasks
        self.conversations: dict[str, str] = {}  # each sub-agent's conversation, once found

    # -- reading ----------------------------------------------------------------------------

    def read(self) -> ParsedSession:
        # An event file's folder may have lost its base_state.json: the events still tell.
        base_state = self.state_path if self.state_path and self.state_path.is_file() else None
        records: list[_Record] = []
        if base_state is not None:
            self._read_state(base_state)
        if self.folder is not None:
            for event_file in event_files(self.folder):
                records.extend(self._read_event_file(event_file))
        else:
            records.extend(self._read_loose_events(self.path))
        if not records and base_state is None:
            raise StetError(f"{self.path}: no OpenHands V1 events in it")
        self.parsed.session_id = (
            conversation_id(self.state.value, self.folder)
            or _first_conversation(records)
            or file_digest(self.path)
        )
        self._start(base_state, records)
        if self.folder is not None:
            self.delegated = self._sub_conversations(self.folder)
        tree = _Tree.of(records, self.state.value)
        last_node: str | None = None  # the tree event read last
        for record in records:
            first = len(self.parsed.events)
            node = tree.node(record) if tree is not None else None
            if tree is not None and node is not None:
                parent = tree.parent(node)
                if last_node is not None and parent != last_node:
                    # Appended after navigating back: a branch from an earlier event.
                    resumes_after = tree.nodes[parent] if parent is not None else None
                    time = _time(record.value)
                    self._emit(Rewind, record.at, time, resumes_after=resumes_after)
                last_node = node
            self._event(record)
            if tree is not None and node is not None and node not in tree.active:
                for event in self.parsed.events[first:]:
                    event.abandoned = True
            self.last_time = _time(record.value) or self.last_time
        for run in self.delegated:
            if not run.done:  # a run no call's task names: after the conversation's events
                self._run_of_subagent(run, run.conversation, None, None)
        for usage in [u for usages in self.state.requests.values() for u in usages]:
            self._emit_usage(usage, None)
        for usage in self.state.unplaced:
            self._emit_usage(usage, None)
        for at, value in self.state.unread:
            unread = "a request's token usage that is not an object"
            self._emit(RawEvent, at, None, record=value, reason=unread)
        end_at = records[-1].at if records else self._state_ref()
        reason = self.end_reason or self.state.status
        self._emit(SessionEnd, end_at, self.last_time, reason=reason)
        if self.parsed.sandbox_root is not None:
            self.parsed.sandbox_candidate = _cloned_repository(
                self.parsed.sandbox_root, self.parsed.events, records
            )
        return self.parsed

    def _emit(self, kind: type[E], at: SourceRef, time: str | None, **fields: Any) -> E:
        """An event of the agent whose events are being read (None: the conversation's own)."""
        return self.parsed.emit(kind, at, time, self.agent, **fields)

    def _state_ref(self) -> SourceRef:
        name = self.prefix + (self.state_path or self.path).name
        return SourceRef(file=name, line=1, pointer="")

    def _read_state(self, path: Path) -> None:
        name = self.prefix + path.name
        self.parsed.sources[name] = path
        document = JsonDocument.read(path)
        first = document.load(None)
        self.parsed.problems += document.problems(name)
        if not isinstance(first, dict):
            if first is not None:
                self.parsed.problems.append(Problem(name, 1, f"{path.name} is not an object"))
            return
        # Again, locating each request's usage, so that its event can name its line.
        usage_ids = list(mapping(mapping(first.get("stats")).get("usage_to_metrics")))
        spec = {"stats": {"usage_to_metrics": {u: {"token_usages": [None]} for u in usage_ids}}}
        located = JsonDocument(document.text)
        state = located.load(spec)
        state = state if isinstance(state, dict) else first
        agent = mapping(state.get("agent"))
        self.state = _State(
            value=state,
            model=text_field(mapping(agent.get("llm")).get("model")),
            cwd=working_dir(state),
            status=text_field(state.get("execution_status")),
        )
        metrics = mapping(mapping(state.get("stats")).get("usage_to_metrics"))
        for usage_id, llm_metrics in metrics.items():
            self._request_usages(name, located, usage_id, mapping(llm_metrics))
        self.per_request = bool(self.state.requests or self.state.unplaced)

    def _request_usages(
        self, name: str, document: JsonDocument, usage_id: str, metrics: dict[str, Any]
    ) -> None:
        usages = sequence(metrics.get("token_usages"))
        costs = [cost_field(mapping(c).get("cost")) for c in sequence(metrics.get("costs"))]
        if costs and len(costs) != len(usages):
            # Costs are listed without response ids and only when positive: unless every
            # request has one, which request cost what is unknown.
            self.parsed.dropped["unattributed_cost"] += len(costs)
            costs = []
        prefix = f"/stats/usage_to_metrics/{escape(usage_id)}/token_usages"
        for index, usage in enumerate(usages):
            pointer = f"{prefix}/{index}"
            at = SourceRef(file=name, line=document.line(pointer), pointer=pointer)
            if not isinstance(usage, dict):
                self.state.unread.append((at, usage))
                continue
            request = _RequestUsage(
                at=at,
                model=text_field(usage.get("model")) or text_field(metrics.get("model_name")),
                prompt=count_field(usage.get("prompt_tokens")),
                output=count_field(usage.get("completion_tokens")),
                cached=count_field(usage.get("cache_read_tokens")),
                written=count_field(usage.get("cache_write_tokens")),
                cost=costs[index] if costs else None,
            )
            response_id = text_field(usage.get("response_id"))
            if response_id is None:
                self.state.unplaced.append(request)
            else:
                self.state.requests.setdefault(response_id, []).append(request)

    def _sub_conversations(self, folder: Path) -> list[_Run]:
        """The conversations of the sub-agents the delegate tool started (`subagents/<id>/`
        of the conversation's folder, and theirs in turn), each cut into the runs of the
        tasks it was given: a run starts at a message of the user's (the task), and what
        comes before the first one (the system prompt) goes with it."""
        runs: list[_Run] = []
        for sub in delegated_folders(folder):
            prefix = f"{self.prefix}{sub.relative_to(folder).as_posix()}/"
            mine: list[_Run] = []
            for path in event_files(sub):
                for record in self._read_event_file(path, prefix):
                    task = _user_text(record.value)
                    if not mine or (task is not None and mine[-1].task is not None):
                        mine.append(_Run(sub.name, task, []))
                    elif task is not None:
                        mine[-1].task = task  # the first task, after the system prompt
                    mine[-1].records.append(record)
            runs.extend(mine)
        return runs

    def _subagents(
        self, call_id: str, tool: str, arguments: dict[str, Any], at: SourceRef, time: str | None
    ) -> None:
        """The sub-agents a call started: each task of a delegate call (`tasks`: agent ->
        task), or a task call's prompt (its `subagent_type`), a Subagent followed by its run
        when the sub-agent's conversation holds it (the task tool's are removed when they
        end)."""
        tasks: dict[str, tuple[str, str | None]] = {}
        if tool == DELEGATE_TOOL:
            for agent, task in mapping(arguments.get("tasks")).items():
                if isinstance(task, str):
                    tasks[str(agent)] = (task, task)
        elif tool == TASK_TOOL and (prompt := text_field(arguments.get("prompt"))):
            agent = text_field(arguments.get("subagent_type")) or TASK_TOOL
            tasks[agent] = (prompt, text_field(arguments.get("description")) or prompt)
        for agent, (task, description) in tasks.items():
            run = self._run_of_task(agent, task)
            if run is None:
                self._emit(
                    Subagent, at, time, agent_id=agent, call_id=call_id, description=description
                )
            else:
                self._run_of_subagent(run, agent, call_id, description, at, time)

    def _run_of_task(self, agent: str, task: str) -> _Run | None:
        """The run of `task` among the sub-agents' conversations: in the agent's own once a
        task found it, else in one no other agent's task found."""
        own = self.conversations.get(agent)
        taken = set(self.conversations.values()) - {own}
        runs = [r for r in self.delegated if not r.done and r.task == task.strip()]
        run = next((r for r in runs if r.conversation == own), None) or next(
            (r for r in runs if r.conversation not in taken), None
        )
        if run is not None:
            self.conversations[agent] = run.conversation
        return run

    def _run_of_subagent(
        self,
        run: _Run,
        agent: str,
        call_id: str | None,
        task: str | None,
        at: SourceRef | None = None,
        time: str | None = None,
    ) -> None:
        """A sub-agent's run as its events, after the event that starts it (at the call that
        gave it its task, or at its first record when no call did)."""
        run.done = True
        first = run.records[0]
        start_at, start_time = (at, time) if at is not None else (first.at, _time(first.value))
        self._emit(
            Subagent, start_at, start_time, agent_id=agent, call_id=call_id, description=task
        )
        outer = self.agent, self.end_reason
        self.agent = agent
        try:
            for record in run.records:
                self._event(record)
        finally:
            self.agent, self.end_reason = outer

    def _read_event_file(self, path: Path, prefix: str | None = None) -> Iterator[_Record]:
        name = f"{self.prefix if prefix is None else prefix}{EVENTS_FOLDER}/{path.name}"
        self.parsed.sources[name] = path
        try:
            with open_text(path) as stream:
                text = stream.read()
        except (StetError, OSError) as error:
            self.parsed.problems.append(Problem(name, 1, f"unreadable: {error}"))
            return
        try:
            value = json.loads(text)
        except ValueError as error:
            line = error.lineno if isinstance(error, json.JSONDecodeError) else 1
            self.parsed.problems.append(Problem(name, line, f"not JSON: {error}"))
            return
        yield _Record(SourceRef(file=name, line=1, pointer=""), value)

    def _read_loose_events(self, path: Path) -> Iterator[_Record]:
        """An event file on its own: one event (pretty-printed or not) or one a line."""
        name = path.name
        self.parsed.sources[name] = path
        with open_text(path) as stream:
            text = stream.read()
        try:
            yield _Record(SourceRef(file=name, line=1, pointer=""), json.loads(text))
            return
        except ValueError:
            pass
        for line, value in jsonl_records(path, name, self.parsed.problems):
            yield _Record(SourceRef(file=name, line=line), value)

    def _start(self, base_state: Path | None, records: list[_Record]) -> None:
        model = self.state.model or next(
            (u.model for usages in self.state.requests.values() for u in usages if u.model),
            None,
        )
        self.state.model = model
        cwd = self.state.cwd or _terminal_dir(records)
        self.parsed.sandbox_root = sandbox_folder(cwd)
        at = self._state_ref() if base_state is not None else records[0].at
        first_time = next((t for r in records if (t := _time(r.value))), None)
        self._emit(SessionStart, at, first_time, harness=HARNESS, model=model, cwd=cwd)

    # -- events -----------------------------------------------------------------------------

    def _event(self, record: _Record) -> None:
        event, at = record.value, record.at
        if not isinstance(event, dict):
            self._emit(RawEvent, at, None, record=event, reason="event is not a JSON object")
            return
        time = _time(event)
        kind = event_kind(event.get("kind"))
        if kind == "MessageEvent":
            self._message(event, at, time)
        elif kind == "ActionEvent":
            self._action(event, at, time)
        elif kind == "ObservationEvent":
            self._observation(event, at, time)
        elif kind == "AgentErrorEvent":
            self._failure(event, as_text(event.get("error")), at, time)
        elif kind == "UserRejectObservation":
            reason = text_field(event.get("rejection_reason")) or "the user rejected the action"
            self._failure(event, f"Action rejected: {reason}", at, time)
        elif kind in ("SystemPromptEvent", "SystemPromptUpdateEvent"):
            self._emit(RawEvent, at, time, record=event, reason="system prompt")
        elif kind in ("Condensation", "CondensationSummaryEvent"):
            self._compaction(event, at, time)
        elif kind == "ConversationStateUpdateEvent":
            self._state_update(event, at, time)
        elif kind == "ConversationErrorEvent":
            detail = text_field(event.get("detail")) or as_text(event.get("code"))
            self._emit(Error, at, time, message=detail or "conversation error")
        elif kind in ("PauseEvent", "InterruptEvent"):
            verb = "paused" if kind == "PauseEvent" else "interrupted"
            self._emit(Error, at, time, message=f"{verb} by the user", interrupt=True)
        elif kind == "ACPToolCallEvent":
            self._acp_tool_call(event, at, time)
        elif kind == "HookExecutionEvent":
            self._emit(RawEvent, at, time, record=event, reason="hook execution")
        elif kind in _UNRECORDED:
            self.parsed.dropped[_UNRECORDED[kind]] += 1
        else:
            shown = as_text(event.get("kind")) or "none"
            self._emit(RawEvent, at, time, record=event, reason=f"unknown event kind {shown!r}")
        if kind != "ConversationStateUpdateEvent" and isinstance(event.get("metrics"), dict):
            key = "condenser" if kind == "Condensation" else "agent"
            self._cumulative_usage(key, mapping(event["metrics"]), at, time)

    def _message(self, event: dict[str, Any], at: SourceRef, time: str | None) -> None:
        message = mapping(event.get("llm_message"))
        text = _content_text(message.get("content"), "\n")
        if event.get("extended_content"):
            # Context the harness added for the model (skills, rules), not what was said.
            self.parsed.dropped["agent_context"] += 1
        source, role = event.get("source"), message.get("role")
        if source == "user" and role in ("user", None):
            # A user's text is theirs whole, a `<think>` block in it too.
            self._emit(UserMessage, at, time, text=text)
            self._unread_parts(message.get("content"), "message", at, time)
            self.end_reason = None  # the conversation goes on after a finish
        elif source == "agent" and role in ("assistant", None):
            think, text = _split_think(text)
            self._response(event, message, at, time, think)
            if text:
                self._emit(AgentMessage, at, time, text=text, model=self.state.model)
            self._unread_parts(message.get("content"), "message", at, time)
            self._response_usage(event, at, time)
        else:
            reason = f"message from {as_text(source)!r} with role {as_text(role)!r}"
            self._emit(RawEvent, at, time, record=event, reason=reason)

    def _action(self, event: dict[str, Any], at: SourceRef, time: str | None) -> None:
        think, thought = _split_think(_content_text(event.get("thought"), "\n\n"))
        self._response(event, event, at, time, think)
        if thought:
            self._emit(AgentMessage, at, time, text=thought, model=self.state.model)
        self._unread_parts(event.get("thought"), "thought", at, time)
        call_id = as_text(event.get("tool_call_id"))
        name = as_text(event.get("tool_name")) or "tool"
        action = event.get("action")
        arguments = _arguments(action, mapping(event.get("tool_call")).get("arguments"))
        action_kind = event_kind(mapping(action).get("kind"))
        if action_kind == "ThinkAction" or (name == "think" and "thought" in arguments):
            self.absorbed.add(call_id)
            self._emit(Reasoning, at, time, text=as_text(arguments.get("thought")))
        elif action_kind == "FinishAction" or (name == "finish" and "message" in arguments):
            self.absorbed.add(call_id)
            text = as_text(arguments.get("message"))
            if text:
                self._emit(AgentMessage, at, time, text=text, model=self.state.model)
            self.end_reason = "finish"
        elif not call_id:
            self._emit(RawEvent, at, time, record=event, reason="action without a tool_call_id")
        else:
            self.calls[call_id] = _Call(call_id, name, arguments)
            action_id = text_field(event.get("id"))
            if action_id is not None:
                self.calls.setdefault(action_id, self.calls[call_id])
            self._emit(ToolCall, at, time, call_id=call_id, name=name, input=arguments)
            self._subagents(call_id, name, arguments, at, time)
        self._response_usage(event, at, time)

    def _observation(self, event: dict[str, Any], at: SourceRef, time: str | None) -> None:
        call = self._call_of(event)
        if call is None:
            if as_text(event.get("tool_call_id")) in self.absorbed:
                tool = as_text(event.get("tool_name")) or "tool"
                self.parsed.dropped[f"{tool}_acknowledgement"] += 1
                return
            reason = "observation without a matching action"
            self._emit(RawEvent, at, time, record=event, reason=reason)
            return
        observation = mapping(event.get("observation"))
        output = _observation_text(observation)
        failed = _failed(observation)
        call.answered = True
        self._emit(ToolResult, at, time, call_id=call.call_id, ok=not failed, output=output)
        self._unread_parts(observation.get("content"), "observation", at, time)
        if failed:
            return
        for change in _observed_changes(call, observation, output):
            self._emit(FileChange, at, time, call_id=call.call_id, **change)

    def _failure(
        self, event: dict[str, Any], message: str, at: SourceRef, time: str | None
    ) -> None:
        """An error or a rejection answering a tool call (an error of its own without one)."""
        call = self._call_of(event)
        if call is None:
            self._emit(Error, at, time, message=message)
            return
        call.answered = True
        self._emit(ToolResult, at, time, call_id=call.call_id, ok=False, output=message)

    def _call_of(self, event: dict[str, Any]) -> _Call | None:
        for key in ("tool_call_id", "action_id"):
            call = self.calls.get(as_text(event.get(key)))
            if call is not None and not call.answered:
                return call
        return None

    def _compaction(self, event: dict[str, Any], at: SourceRef, time: str | None) -> None:
        summary = text_field(event.get("summary"))
        if summary is None:
            forgotten = event.get("forgotten_event_ids")
            count = len(forgotten) if isinstance(forgotten, list) else 0
            summary = f"forgot {count} events"
        self._emit(Compaction, at, time, summary=summary)
        self._response_usage(event, at, time)

    def _state_update(self, event: dict[str, Any], at: SourceRef, time: str | None) -> None:
        key, value = event.get("key"), event.get("value")
        if key == "execution_status" and isinstance(value, str):
            if value in _FAILED_STATUSES:
                self._emit(Error, at, time, message=f"the conversation is {value}")
            else:
                self.parsed.dropped["state_update"] += 1
            return
        if key == "stats" and not self.per_request:
            for usage_id, snapshot in mapping(mapping(value).get("usage_to_metrics")).items():
                self._cumulative_usage(usage_id, mapping(snapshot), at, time)
            return
        self.parsed.dropped["state_update"] += 1

    def _acp_tool_call(self, event: dict[str, Any], at: SourceRef, time: str | None) -> None:
        """A tool call an ACP agent (Claude Code, Codex, ... behind OpenHands) reported; the
        same call may be reported again as it progresses."""
        call_id = as_text(event.get("tool_call_id"))
        if not call_id:
            self._emit(RawEvent, at, time, record=event, reason="ACP tool call without an id")
            return
        call = self.calls.get(call_id)
        if call is None:
            raw = event.get("raw_input")
            arguments = raw if isinstance(raw, dict) else ({} if raw is None else {"input": raw})
            name = text_field(event.get("tool_kind")) or as_text(event.get("title")) or "tool"
            call = self.calls[call_id] = _Call(call_id, name, arguments)
            self._emit(ToolCall, at, time, call_id=call_id, name=name, input=arguments)
        status = event.get("status")
        if call.answered or status not in _ACP_DONE:
            return
        call.answered = True
        failed = status == "failed" or event.get("is_error") is True
        blocks = sequence(event.get("content"))
        texts = [shown for block in blocks if (shown := _acp_block_shown(block)) is not None]
        output = as_text(event.get("raw_output")) or "\n".join(texts)
        self._emit(ToolResult, at, time, call_id=call_id, ok=not failed, output=output)
        for block in blocks:
            if _acp_block_text(block) is not None or mapping(block).get("type") == "diff":
                continue
            held = _acp_inline_data(block)
            if held is None:
                reason = "ACP tool call content block of a kind not understood"
                self._emit(RawEvent, at, time, record=block, reason=reason)
            else:
                self.parsed.dropped["inline_data"] += 1
                reason = f"ACP tool call content block holding data: {held[1]}"
                self._emit(RawEvent, at, time, record=held[0], reason=reason)
        if failed:
            return
        for block in blocks:
            block = mapping(block)
            path = text_field(block.get("path"))
            new = block.get("new_text", block.get("newText"))
            if block.get("type") != "diff" or path is None or not isinstance(new, str):
                continue
            old = block.get("old_text", block.get("oldText"))
            before = old if isinstance(old, str) else None
            operation = "modify" if before is not None else "create"
            fields = change_fields(path, operation, file_diff(path, before, new), new)
            self._emit(FileChange, at, time, call_id=call_id, **fields)

    def _unread_parts(self, parts: Any, held_by: str, at: SourceRef, time: str | None) -> None:
        """What the text of content parts leaves out: each part of a kind not read as text
        (neither text nor an image) is kept raw after the event their text went into, and
        the bytes of an image given as data (`data:` URL, named `[image]`) are counted."""
        if isinstance(parts, str):
            return
        for part in sequence(parts):
            if not _is_read_part(part):
                reason = f"{held_by} content part of a kind not understood"
                self._emit(RawEvent, at, time, record=part, reason=reason)
            elif mapping(part).get("type") == "image":
                urls = sequence(mapping(part).get("image_urls"))
                inline = sum(1 for url in urls if as_text(url).startswith("data:"))
                if inline:
                    self.parsed.dropped["inline_data"] += inline

    # -- reasoning and usage --------------------------------------------------------------------

    def _response(
        self,
        event: dict[str, Any],
        holder: dict[str, Any],
        at: SourceRef,
        time: str | None,
        think: str | None = None,
    ) -> None:
        """The readable reasoning of a model response, the first time one of its events shows
        it (the actions of one response share it); opaque reasoning is counted. `think` is the
        reasoning the model wrote inline in its text (`<think>…</think>`), used when no
        reasoning field holds it."""
        response_id = text_field(event.get("llm_response_id"))
        if response_id is not None and response_id in self.responses:
            return
        blocks = [b for b in sequence(holder.get("thinking_blocks")) if isinstance(b, dict)]
        item = mapping(holder.get("responses_reasoning_item"))
        opaque = sum(1 for b in blocks if b.get("type") == "redacted_thinking")
        opaque += 1 if text_field(item.get("encrypted_content")) else 0
        if opaque:
            self.parsed.dropped["opaque_reasoning"] += opaque
        text = text_field(holder.get("reasoning_content"))
        if text is None:
            readable = [t for b in blocks if (t := text_field(b.get("thinking")))]
            readable = readable or [
                t for part in sequence(item.get("summary")) if (t := text_field(part))
            ]
            readable = readable or [
                t for part in sequence(item.get("content")) if (t := text_field(part))
            ]
            text = "\n\n".join(readable) or think
        if text:
            self._emit(Reasoning, at, time, text=text)

    def _response_usage(self, event: dict[str, Any], at: SourceRef, time: str | None) -> None:
        """The usage of the requests behind a response, at the first of its events."""
        response_id = text_field(event.get("llm_response_id"))
        if response_id is None or response_id in self.responses:
            return
        self.responses.add(response_id)
        for usage in self.state.requests.pop(response_id, []):
            self._emit_usage(usage, time)

    def _emit_usage(self, usage: _RequestUsage, time: str | None) -> None:
        if not (usage.prompt or usage.output or usage.cost):
            return
        self._emit(
            Usage,
            usage.at,
            time,
            model=usage.model,
            input_tokens=max(usage.prompt - usage.cached - usage.written, 0),
            output_tokens=usage.output,
            cache_read_tokens=usage.cached,
            cache_write_tokens=usage.written,
            cost_usd=usage.cost,
            cost_basis="reported" if usage.cost is not None else None,
        )

    def _cumulative_usage(
        self, key: str, snapshot: dict[str, Any], at: SourceRef, time: str | None
    ) -> None:
        """What an LLM's cumulative figures added since it last showed them. Per-request
        usage from base_state.json, when there is any, already counts them."""
        if self.per_request:
            return
        fields = self.usage.added(snapshot, key)
        if fields is not None:
            fields["model"] = fields["model"] or text_field(snapshot.get("model_name"))
            self._emit(Usage, at, time, **fields, requests=None)  # one or more

    # -- helpers ----------------------------------------------------------------------------


def _time(event: Any) -> str | None:
    return text_field(event.get("timestamp")) if isinstance(event, dict) else None


def _user_text(event: Any) -> str | None:
    """The text of a user's message event (stripped), None for any other event."""
    event = mapping(event)
    if event_kind(event.get("kind")) != "MessageEvent" or event.get("source") != "user":
        return None
    return _content_text(mapping(event.get("llm_message")).get("content"), "\n").strip()


def _first_conversation(records: list[_Record]) -> str | None:
    """A loose event file has no conversation id: its first event's id stands in."""
    return next((i for r in records if (i := text_field(mapping(r.value).get("id")))), None)


def _terminal_dir(records: list[_Record]) -> str | None:
    """The working folder a terminal reported, when base_state.json has no workspace."""
    for record in records:
        observation = mapping(mapping(record.value).get("observation"))
        found = text_field(mapping(observation.get("metadata")).get("working_dir"))
        if found:
            return found
    return None


def _cloned_repository(
    working_folder: str, events: list[EventBase], records: list[_Record]
) -> str | None:
    """The folder of the working folder that the session's paths in it all lead into (the
    OpenHands app server clones a selected repository into `/workspace/project/<name>`, and
    nothing in the conversation names it): the one folder its files, commands and terminals
    were in."""
    from stet_lsp.trajectory.normalize import sandbox_path, sandbox_paths

    named = sandbox_paths(working_folder, events)
    for record in records:
        observation = mapping(mapping(record.value).get("observation"))
        terminal = sandbox_path(
            working_folder, mapping(observation.get("metadata")).get("working_dir")
        )
        if terminal is not None:
            named.add(terminal)
    firsts = {path.split("/", 1)[0] for path in named if path}
    return f"{working_folder}/{firsts.pop()}" if len(firsts) == 1 else None


def _split_think(text: str) -> tuple[str | None, str]:
    """(the reasoning, the rest) of a text that opens with the model's reasoning inline, as
    models served through an OpenAI-compatible endpoint write it (`<think>…</think>` before the
    reply, the same reasoning `reasoning_content` holds); (None, the text) otherwise."""
    found = _THINK.match(text)
    if found is None:
        return None, text
    return found.group(1).strip() or None, text[found.end() :]


def _acp_block_text(block: Any) -> str | None:
    """The text of an ACP tool call's content block: a text block wrapped in a `content`
    block (`{"type": "content", "content": {"type": "text", "text"}}`, as the SDK stores
    the ACP schema's models) or given flat; None for any other block (a diff, a terminal)."""
    block = mapping(block)
    wrapped = block.get("content")
    inner = wrapped if block.get("type") == "content" and isinstance(wrapped, dict) else block
    text = inner.get("text")
    return text if isinstance(text, str) else None


def _acp_block_shown(block: Any) -> str | None:
    """What an ACP tool call's content block puts in the result's output: its text, or the
    name of the data it holds (`[image]`); None for any other block."""
    text = _acp_block_text(block)
    if text is not None:
        return text
    held = _acp_inline_data(block)
    return held[1] if held is not None else None


_ACP_DATA_KINDS = {"image": "[image]", "audio": "[audio]", "resource": "[resource]"}


def _acp_inline_data(block: Any) -> tuple[dict[str, Any], str] | None:
    """An ACP tool call's content block holding bytes as base64 (an image, audio, or a
    resource's `blob`), wrapped in a `content` block or given flat: the block without them,
    and how the output names it. None for any other block."""
    block = mapping(block)
    wrapped = block.get("content")
    is_wrapped = block.get("type") == "content" and isinstance(wrapped, dict)
    inner = wrapped if is_wrapped else block
    kind = inner.get("type")
    name = _ACP_DATA_KINDS.get(kind) if isinstance(kind, str) else None
    if name is None:
        return None
    if kind == "resource":
        resource = mapping(inner.get("resource"))
        if "blob" not in resource:
            return None
        kept = {**inner, "resource": {k: v for k, v in resource.items() if k != "blob"}}
    elif "data" in inner:
        kept = {k: v for k, v in inner.items() if k != "data"}
    else:
        return None
    return ({**block, "content": kept} if is_wrapped else kept), name


def _is_read_part(part: Any) -> bool:
    """A content part `_content_text` reads: a text, or an image (which it names)."""
    part = mapping(part)
    return part.get("type") == "image" or isinstance(part.get("text"), str)


def _content_text(parts: Any, separator: str) -> str:
    """The text of a list of content parts; images are named, not kept, and parts of other
    kinds left to `_unread_parts`."""
    if isinstance(parts, str):
        return parts
    texts: list[str] = []
    for part in sequence(parts):
        part = mapping(part)
        if part.get("type") == "image":
            for url in sequence(part.get("image_urls")):
                shown = as_text(url)
                texts.append("[image]" if shown.startswith("data:") else f"[image: {shown}]")
        elif isinstance(part.get("text"), str):
            texts.append(part["text"])
    return separator.join(text for text in texts if text)


def _arguments(action: Any, raw_arguments: Any) -> dict[str, Any]:
    """A tool call's arguments: the validated action's fields, or, for a call that could not
    be validated (`action` null), the arguments as the model wrote them. An MCP tool's action
    (`MCPToolAction`) holds them in its `data`."""
    if isinstance(action, dict):
        data = action.get("data")
        if event_kind(action.get("kind")) == "MCPToolAction" and isinstance(data, dict):
            return dict(data)
        return {k: v for k, v in action.items() if k != "kind" and v is not None}
    if isinstance(raw_arguments, str):
        try:
            parsed = json.loads(raw_arguments)
        except ValueError:
            return {"arguments": raw_arguments}
        return parsed if isinstance(parsed, dict) else {"arguments": parsed}
    return {}


def _observation_text(observation: dict[str, Any]) -> str:
    text = _content_text(observation.get("content"), "\n")
    if text:
        return text
    error = observation.get("error")
    return as_text(observation.get("output")) or (error if isinstance(error, str) else "")


def _failed(observation: dict[str, Any]) -> bool:
    error = observation.get("error")
    if observation.get("is_error") is True or error is True or text_field(error):
        return True
    exit_code = observation.get("exit_code")
    if not isinstance(exit_code, int):
        exit_code = mapping(observation.get("metadata")).get("exit_code")
    return isinstance(exit_code, int) and not isinstance(exit_code, bool) and exit_code > 0


def _observed_changes(
    call: _Call, observation: dict[str, Any], output: str
) -> list[dict[str, Any]]:
    """The file changes a successful call made: as its observation recorded them (the whole
    file before and after, or an applied patch's changes), else from its arguments."""
    commit = mapping(observation.get("commit"))
    if commit:
        return list(_patch_changes(mapping(commit.get("changes"))))
    command = observation.get("command", call.arguments.get("command"))
    if command == "view":
        return []
    path = (
        text_field(observation.get("path"))
        or text_field(observation.get("file_path"))
        or text_field(call.arguments.get("path"))
        or text_field(call.arguments.get("file_path"))
    )
    new = observation.get("new_content")
    old = observation.get("old_content")
    created = observation.get("prev_exist") is False or observation.get("is_new_file") is True
    if path is not None and isinstance(new, str) and (created or isinstance(old, str)):
        if not created and old == new:
            return []
        before = None if created else old
        operation = "create" if created else "modify"
        return [change_fields(path, operation, file_diff(path, before, new), new)]
    return [file_change_fields(e) for e in edits_from_arguments(call.name, call.arguments, output)]


def _patch_changes(changes: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """apply_patch's `commit.changes`: path -> `{type: add|delete|update, old_content,
    new_content, move_path}` (paths relative to the workspace)."""
    for path, change in changes.items():
        change = mapping(change)
        kind = change.get("type")
        old, new = change.get("old_content"), change.get("new_content")
        old = old if isinstance(old, str) else None
        new = new if isinstance(new, str) else None
        if kind == "add":
            yield change_fields(path, "create", file_diff(path, None, new or ""), new or "")
        elif kind == "delete":
            yield change_fields(path, "delete", file_diff(path, old, None) if old else None)
        elif kind == "update":
            target = text_field(change.get("move_path")) or path
            if old is None or new is None:
                yield change_fields(target, "modify", old_path=path if target != path else None)
                continue
            diff = file_diff(target, old, new)
            if target != path and "@@" in diff.text:
                # The hunks of the file's own lines, under headers naming both of its paths.
                text = headers(path, new_path=target) + diff.text[diff.text.index("@@") :]
                diff = Diff(text, diff.added, diff.removed, diff.anchored)
            operation = "rename" if target != path else "modify"
            yield change_fields(
                target, operation, diff, new, old_path=path if target != path else None
            )
