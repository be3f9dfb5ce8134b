"""OpenHands event lists: the trajectory OpenHands saves (`--save-trajectory-path`, the
web UI's trajectory download), a JSON array of serialised events; and the objects whose
`history` holds the events as such or as `[action, observation]` pairs: an evaluation's
output (`instance_id`, `instruction`, `metadata`, `test_result`…) and the issue resolver's
(`issue` or `pr_review`, `instruction`, `base_commit`, `git_patch`…), one object a file or a
line. Their other members can fill the sniffed bytes before `history` starts, so their
leading names recognise them too.

Every event has `id`, `timestamp`, `source` ("user", "agent" or "environment") and
`message`, and is one of:

* an action (`action`, `args`): `message` (a user or agent message), `system` (the system
  prompt; `args.openhands_version`, `args.agent_class`), `run`, `run_ipython`, `read`,
  `write`, `edit` (str_replace_editor commands; older files encode them in
  `args.translated_ipython_code`), `browse`, `browse_interactive`, `call_tool_mcp`,
  `delegate`, `recall`, `task_tracking`, `condensation_request` (tools), `think`, `finish`,
  `reject`, `condensation` (the history was condensed into `args.summary`),
  `change_agent_state`. An action the model chose carries `tool_call_metadata` (the tool
  name and the whole model response, with its `usage`) and `llm_metrics` (the session's
  cost and tokens so far: `accumulated_cost`, `accumulated_token_usage`).
  `args.thought` is the text the model wrote beside the call.
* an observation (`observation`, `content`, `extras`, `cause`: the id of the action it
  answers): `run` (`extras.metadata.exit_code`, `working_dir`: a command that exited with 0
  and moved files with `mv` or `git mv` is a rename for each, where its command line leaves
  no doubt, `shell_moves`, from that folder), `read`, `write`, `edit`
  (`extras.diff`, or `old_content`/`new_content`), `error`, `browse`, `mcp`, `recall`
  (workspace context: `working_dir`, the workspace, `repo_directory`, the folder in it that
  the repository was cloned into, and `repo_branch`), `agent_state_changed`, `condense`,
  `null`, `think`, `user_rejected`, `success`, `delegate`, `task_tracking`. An edit or read
  observation whose content starts with `ERROR:` is the file editor refusing the command
  (an `old_str` it did not find): a failed result, with no file change.

Older files (2024) write the same actions and observations in other forms, read as the
current one: the issue resolver's output until 2025 holds each event's fields flat, beside
`action` or `observation` (no `args` or `extras`), with no `id`, `source`, `timestamp` or
`cause`; evaluation outputs of mid-2024 hold `[action, observation]` pairs whose halves have
`args` or `extras` but no ids; some lists have `source` but no ids. An action without an id
gets one made of its JSON pointer (`history/3`, `history/2/0`); an observation without a
cause answers the action of its pair, or else the last tool action before it that is not yet
answered (those lists run one action at a time); a message without a source is the agent's
when it waits for a response (`wait_for_response`), else the user's. Their file edits are
agentskills calls in a `run_ipython` action's `code` (`edit_file_by_replace`,
`insert_content_at_line`, `append_file`, `create_file`), read when their arguments are
literals and the output says the edit was made. Such outputs record the usage of the whole
run only in their `metrics`: when no event carries usage, each entry of `costs` (one model
request each) is a Usage with its cost, placed after the action the request chose when
there are as many as the agent's actions (else after them all), or the totals are one.

An output's patch (`git_patch`, or `test_result.git_patch`) is what the run changed. The
events show a file that a command or Python code wrote only as that command: such a file
gets a file change from the patch, after the events (no call made it that is known). A file
an event changed gets one only for the patch's hunks its events' changes do not explain (a
command that changed it after an edit), under the events' name for it. A move the events
show (a command's rename) is theirs: the patch's rename of the file gives only the hunks they
do not explain (their changes under every name the file had, a → b → c), as a change of the
file where it was moved to; so do its deletion of the old path and creation of the new one
(git's form of a move that changed most of the file), compared as the file's text before and
after (nothing when the patch holds no lines of them: a binary or empty file); its creation
of the new path alone (git did not track the file where it was) gives its lines, as a change
of the new path.

OpenHands works in a sandbox whose workspace is `/workspace`: the folder the events name the
patch's files from, else the recalled repository's, else the workspace itself when the
session ran commands or changed files in it, is its `sandbox_root`, which the import takes
for the repository.

Tool actions become tool calls whose id is the action's id, answered by the observations
that name it as their `cause`. `llm_metrics` is cumulative, so each action's usage is what
was added since the one before (with the cost OpenHands reported, when the accumulated cost
grew: it stays at 0.0 for a model OpenHands has no price for); a file without it gives
the usage of each model response once, from the responses themselves. Agent state changes,
empty observations and the think tool's acknowledgements have no event of their own and are
counted in `dropped`.
"""

from __future__ import annotations

import ast
import json
import posixpath
from dataclasses import dataclass
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
    SessionEnd,
    SessionStart,
    SourceRef,
    Subagent,
    ToolCall,
    ToolResult,
    Usage,
    UserMessage,
)
from stet_lsp.trajectory.importers.base import ParsedSession, new_event
from stet_lsp.trajectory.importers.diffs import Diff, count, file_diff, fragment_diff, hunks_diff
from stet_lsp.trajectory.importers.edits import (
    EDITOR_REFUSAL,
    Edit,
    change_fields,
    edits_from_arguments,
    file_change_fields,
)
from stet_lsp.trajectory.importers.fields import (
    as_text,
    cost_field,
    count_field,
    holds_int_past_figures,
    mapping,
    sequence,
    text_field,
)
from stet_lsp.trajectory.importers.files import file_digest
from stet_lsp.trajectory.importers.jsondoc import JsonDocument, Spec, leading_members
from stet_lsp.trajectory.importers.openhands_metrics import CumulativeUsage
from stet_lsp.trajectory.importers.patches import patch_changes, whole_text
from stet_lsp.trajectory.importers.shell_moves import moved_paths

FORMAT = "openhands"
SANDBOX_WORKSPACE = "/workspace"


_TOOL_ACTIONS = frozenset(
    {
        "run",
        "run_ipython",
        "read",
        "write",
        "edit",
        "browse",
        "browse_interactive",
        "call_tool_mcp",
        "delegate",
        "recall",
        "task_tracking",
        "condensation_request",
    }
)
# Actions that are not a model's choice (the request costs of an older output are matched to
# the others).
_NOT_CHOSEN = frozenset({"system", "recall", "change_agent_state", "condensation"})
_FAILED_OBSERVATIONS = frozenset({"error", "user_rejected"})
# Arguments that say how OpenHands ran a call rather than what the model asked for.
_BOOKKEEPING_ARGS = frozenset(
    {"thought", "translated_ipython_code", "impl_source", "confirmation_state", "hidden"}
)
_EVENT_KEYS = frozenset({"id", "timestamp", "source", "message"})
# The screenshots of the page a browser's observation holds in its extras, as `data:` URLs.
_SCREENSHOTS = ("screenshot", "set_of_marks")
# The older forms (see the module's docstring): the kinds an event without `source`, `args`
# or `extras` is recognised by, and the members that stay beside `args` and `extras`.
_OLDER_ACTIONS = _TOOL_ACTIONS | {
    "message",
    "think",
    "finish",
    "reject",
    "talk",
    "kill",
    "summarize",
    "add_task",
    "modify_task",
    "push",
    "github_push",
    "change_agent_state",
}
_OLDER_OBSERVATIONS = frozenset(
    {"run", "run_ipython", "read", "write", "edit", "browse", "error", "recall", "message"}
    | {"delegate", "success", "user_rejected", "null", "agent_state_changed", "think", "chat"}
)
_ACTION_MEMBERS = frozenset(
    {"id", "timestamp", "source", "message", "cause", "action", "tool_call_metadata"}
    | {"llm_metrics", "timeout"}
)
_OBSERVATION_MEMBERS = frozenset(
    {"id", "timestamp", "source", "message", "cause", "observation", "content"}
    | {"tool_call_metadata", "llm_metrics"}
)
# The agentskills functions an older run_ipython action edits files with, and what their
# output says on success.
_SKILL_EDITS = frozenset(
    {"edit_file_by_replace", "insert_content_at_line", "append_file", "create_file"}
)
_SKILL_EDITED = "lines total after edit)]"
# Members of an evaluation's output besides `instance_id`, and of the resolver's.
_EVALUATION_KEYS = frozenset({"test_result", "metadata", "history"})
_RESOLVER_KEYS = frozenset({"instruction", "base_commit", "git_patch"})
_SOURCES = frozenset({"user", "agent", "environment"})
_FILE_EDITOR = "print(file_editor(**"
_INTERRUPTING_STATES = frozenset({"stopped", "paused"})


class OpenHandsImporter:
    name = FORMAT
    label = "OpenHands event list JSON"

    def sniff(self, head: str) -> bool:
        """A JSON array whose first item is an OpenHands event, an object whose `history`
        starts with one (alone or as the first of an action/observation pair), or an object
        that begins as an evaluation's or the resolver's output does."""
        start = head.lstrip()[:1]
        if start == "[":
            return _looks_like_event(leading_members(head, (0,)))
        if start == "{":
            if _looks_like_event(leading_members(head, ("history", 0))) or _looks_like_event(
                leading_members(head, ("history", 0, 0))
            ):
                return True
            # `history` beyond the sniffed bytes, or its first event cut off by them: the
            # members before it decide.
            members = leading_members(head)
            return members.get("history") is None and _output_name(members) is not None
        return False

    def parse(self, path: Path) -> ParsedSession:
        return _Reader(path).read()


IMPORTERS = {FORMAT: OpenHandsImporter()}


def _output_name(members: dict[str, Any]) -> str | None:
    """What an evaluation's or the resolver's output is the run of (`members` its leading
    members, a cut one None): its instance, or its issue or pull request with the number when
    known; None for an object of neither."""
    names = members.keys()
    instance = members.get("instance_id")
    if isinstance(instance, str) and names & _EVALUATION_KEYS:
        return instance
    if names >= _RESOLVER_KEYS and ("issue" in names or "pr_review" in names):
        subject = members.get("issue") or members.get("pr_review")
        number = subject.get("number") if isinstance(subject, dict) else None
        what = "issue" if "issue" in names else "pull request"
        return f"{what} #{number}" if isinstance(number, int) else what
    return None


def _looks_like_event(members: dict[str, Any]) -> bool:
    source = members.get("source")
    if not isinstance(source, str):
        source = None
    if "action" in members or "observation" in members:
        if text_field(source) in _SOURCES or "args" in members or "extras" in members:
            return True
        # The older form: the arguments or extras beside `action` or `observation`.
        if "observation" not in members:
            return text_field(members["action"]) in _OLDER_ACTIONS
        return (
            "action" not in members
            and "content" in members
            and members["observation"] in _OLDER_OBSERVATIONS
        )
    # A first event too long for the sniffed bytes (a system prompt): its leading keys.
    return members.keys() >= _EVENT_KEYS and source in _SOURCES


@dataclass
class _Call:
    """A tool action waiting for its observation."""

    action: str
    name: str
    arguments: dict[str, Any]
    answered: bool = False


@dataclass
class _Facts:
    """What the session start says, gathered from the whole file first."""

    version: str | None = None
    model: str | None = None
    cwd: str | None = None
    repository: str | None = None  # the folder a workspace recall names
    branch: str | None = None
    metered: bool = False  # whether any action carries llm_metrics


class _Reader:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.name = path.name
        self.parsed = ParsedSession(format=FORMAT, session_id="")
        self.document = JsonDocument.read(path)
        self.calls: dict[str, _Call] = {}
        self.other_actions: set[str] = set()
        self.responses: set[str] = set()  # model responses whose usage and reasoning are out
        self.usage = CumulativeUsage()
        self.end_reason: str | None = None
        self.last_error: str | None = None
        self.facts = _Facts()
        # The events as read, by pointer, where the older forms were rewritten as the
        # current one (raw events keep them as read).
        self.records: dict[str, Any] = {}
        self.record: Any = None
        self.pending: list[str] = []  # made-up ids of older tool actions not yet answered
        self.requests: list[int] = []  # where each action the model chose ends in the events
        self.patch_root: str | None = None  # the folder the run's patch is of, in the events

    def read(self) -> ParsedSession:
        spec: Spec = [None]
        if self._is_object():
            spec = {
                "history": [[None]],
                "metrics": None,
                "git_patch": None,
                "test_result": {"git_patch": None},
            }
        root = self.document.load(spec)
        self._refuse_several_instances(root)
        self.parsed.problems += self.document.problems(self.name)
        events = self._events(root)
        if events is None:
            raise StetError(f"{self.path}: not an OpenHands event list")
        self.parsed.session_id = file_digest(self.path)
        self.parsed.sources[self.name] = self.path
        self._gather(events)
        facts = self.facts
        if isinstance(root, dict) and facts.model is None:
            facts.model = _run_model(mapping(root.get("metadata")))
        first_time = next((_time(e) for _, e in events if _time(e)), None)
        self.parsed.emit(
            SessionStart,
            SourceRef(file=self.name, line=1, pointer=""),
            first_time,
            harness=FORMAT,
            harness_version=facts.version,
            model=facts.model,
            cwd=facts.cwd,
            branch=facts.branch,
        )
        for pointer, event in events:
            self._event(pointer, event)
        if isinstance(root, dict) and not any(isinstance(e, Usage) for e in self.parsed.events):
            self._run_metrics(root.get("metrics"))
        if isinstance(root, dict):
            self._run_patch(root)
        self.parsed.sandbox_root = sandbox_folder(
            self.patch_root or facts.repository or _workspace_used(facts.cwd, self.parsed.events)
        )
        last_pointer, last_event = events[-1] if events else ("", None)
        self.parsed.emit(
            SessionEnd,
            self._at(last_pointer),
            _time(last_event),
            reason=self.end_reason,
        )
        return self.parsed

    def _refuse_several_instances(self, root: Any) -> None:
        """An evaluation's or the resolver's `output.jsonl` holds one run per line, each on a
        task of its own: importing the first and dropping the rest would lose them quietly."""
        error = self.document.error
        if not isinstance(root, dict) or not isinstance(root.get("history"), list) or not error:
            return
        names: list[str] = []
        for number, line in enumerate(self.document.text.splitlines(), 1):
            try:
                run = json.loads(line)
            except ValueError:
                return  # not one run per line: a document with trailing garbage
            if isinstance(run, dict) and isinstance(run.get("history"), list):
                names.append(_output_name(run) or _other_run_name(run, number))
        if len(names) < 2:
            return
        shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
        raise StetError(
            f"{self.path}: {len(names)} OpenHands runs, one per line ({shown}); a trajectory "
            "is one run: put the line of the run to import in a file of its own and import "
            "that file"
        )

    def _is_object(self) -> bool:
        return self.document.text.lstrip()[:1] == "{"

    def _events(self, root: Any) -> list[tuple[str, Any]] | None:
        """The events with their JSON pointers, pairs flattened, the older forms rewritten
        as the current one."""
        if isinstance(root, dict):
            history, prefix = root.get("history"), "/history"
        else:
            history, prefix = root, ""
        if not isinstance(history, list):
            return None
        events: list[tuple[str, Any]] = []
        for index, item in enumerate(history):
            if isinstance(item, list):
                partner: str | None = None  # the pair's action answers to it
                for i, event in enumerate(item):
                    pointer = f"{prefix}/{index}/{i}"
                    current = self._current_form(pointer, event, partner)
                    if isinstance(current, dict) and isinstance(current.get("action"), str):
                        partner = as_text(current.get("id")) or None
                    events.append((pointer, current))
            else:
                pointer = f"{prefix}/{index}"
                events.append((pointer, self._current_form(pointer, item, None)))
        return events

    def _current_form(self, pointer: str, event: Any, partner: str | None) -> Any:
        """An event of an older form as the current form has it: the members beside
        `action` moved into `args` and those beside `observation` into `extras`; an action
        without an id gets one made of its pointer, and an observation without a cause
        answers the action of its pair, or else the last tool action without an id of its
        own still unanswered (the older flat lists run one action at a time); a message
        without a source is the agent's when it waits for a response, else the user's."""
        if not isinstance(event, dict):
            return event
        current = event
        if isinstance(event.get("action"), str) and "observation" not in event:
            if "args" not in event:
                current = {k: v for k, v in event.items() if k in _ACTION_MEMBERS}
                current["args"] = {k: v for k, v in event.items() if k not in _ACTION_MEMBERS}
            if event.get("id") is None:
                current = {**current, "id": pointer.lstrip("/")}
                if current["action"] in _TOOL_ACTIONS:
                    self.pending.append(current["id"])
            if current["action"] == "message" and event.get("source") is None:
                waits = mapping(current.get("args")).get("wait_for_response") is True
                current = {**current, "source": "agent" if waits else "user"}
        elif isinstance(event.get("observation"), str) and "action" not in event:
            if "extras" not in event:
                current = {k: v for k, v in event.items() if k in _OBSERVATION_MEMBERS}
                current["extras"] = {
                    k: v for k, v in event.items() if k not in _OBSERVATION_MEMBERS
                }
            if event.get("cause") is None and event.get("id") is None:
                cause = self._cause(event["observation"], partner)
                if cause is not None:
                    current = {**current, "cause": cause}
        if current is not event:
            self.records[pointer] = event
        return current

    def _cause(self, kind: str, partner: str | None) -> str | None:
        if kind == "null":
            return None  # the pair's action had no observation
        if partner is not None:
            if partner in self.pending:
                self.pending.remove(partner)
            return partner
        return self.pending.pop() if self.pending else None

    def _gather(self, events: list[tuple[str, Any]]) -> None:
        facts = self.facts
        for _, event in events:
            if not isinstance(event, dict):
                continue
            args, extras = mapping(event.get("args")), mapping(event.get("extras"))
            if event.get("action") == "system":
                facts.version = facts.version or text_field(args.get("openhands_version"))
            if "llm_metrics" in event and "action" in event:
                facts.metered = True
            if facts.model is None:
                facts.model = _model(event)
            if event.get("observation") == "recall":
                facts.repository = facts.repository or _recalled_repository(extras)
                facts.cwd = facts.cwd or facts.repository
                facts.branch = facts.branch or text_field(extras.get("repo_branch"))
            elif event.get("observation") == "run" and facts.cwd is None:
                facts.cwd = text_field(mapping(extras.get("metadata")).get("working_dir"))

    # -- events -----------------------------------------------------------------------------

    def _event(self, pointer: str, event: Any) -> None:
        at = self._at(pointer)
        self.record = self.records.get(pointer, event)
        if not isinstance(event, dict):
            self.parsed.emit(
                RawEvent, at, None, record=self.record, reason="event is not a JSON object"
            )
            return
        time = _time(event)
        if isinstance(event.get("action"), str):
            self._action(event, at, time)
        elif isinstance(event.get("observation"), str):
            self._observation(event, at, time)
        else:
            reason = "event is neither an action nor an observation"
            self.parsed.emit(RawEvent, at, time, record=self.record, reason=reason)

    def _action(self, event: dict[str, Any], at: SourceRef, time: str | None) -> None:
        kind, source = event["action"], event.get("source")
        args = mapping(event.get("args"))
        event_id = as_text(event.get("id"))
        response = self._new_response(event)
        if response is not None:
            self._reasoning(response, at, time)
        if kind in _TOOL_ACTIONS:
            self._tool_action(event, kind, args, at, time)
        elif kind == "message":
            self._message(event, args, source, at, time)
        elif kind == "think":
            self.parsed.emit(Reasoning, at, time, text=as_text(args.get("thought")))
        elif kind in ("finish", "reject"):
            self._finish(kind, args, at, time)
        elif kind == "condensation":
            summary = text_field(args.get("summary")) or _forgotten(args)
            self.parsed.emit(Compaction, at, time, summary=summary)
        elif kind == "system":
            self.parsed.emit(RawEvent, at, time, record=self.record, reason="system prompt")
        elif kind == "change_agent_state":
            self.parsed.dropped["agent_state_change"] += 1
        else:
            self.parsed.emit(
                RawEvent, at, time, record=self.record, reason=f"unknown action {kind!r}"
            )
        if kind not in _TOOL_ACTIONS and event_id:
            self.other_actions.add(event_id)
        if self.facts.metered:
            self._usage(event, at, time)
        elif response is not None:
            self._response_usage(response, at, time)
        if source in ("agent", None) and kind not in _NOT_CHOSEN:
            self.requests.append(len(self.parsed.events))

    def _tool_action(
        self,
        event: dict[str, Any],
        kind: str,
        args: dict[str, Any],
        at: SourceRef,
        time: str | None,
    ) -> None:
        thought = text_field(args.get("thought"))
        if thought:
            self.parsed.emit(AgentMessage, at, time, text=thought, model=_model(event))
        metadata = mapping(event.get("tool_call_metadata"))
        name = text_field(metadata.get("function_name")) or kind
        arguments = _arguments(args)
        call_id = as_text(event.get("id"))
        if not call_id:
            self.parsed.emit(RawEvent, at, time, record=self.record, reason="action without an id")
            return
        self.calls[call_id] = _Call(kind, name, arguments)
        self.parsed.emit(ToolCall, at, time, call_id=call_id, name=name, input=arguments)
        if kind == "delegate":
            inputs = mapping(args.get("inputs"))
            agent_id = as_text(args.get("agent")) or "delegate"
            description = text_field(inputs.get("task"))
            self.parsed.emit(
                Subagent, at, time, agent_id=agent_id, call_id=call_id, description=description
            )

    def _message(
        self,
        event: dict[str, Any],
        args: dict[str, Any],
        source: Any,
        at: SourceRef,
        time: str | None,
    ) -> None:
        text = as_text(args.get("content", event.get("message")))
        urls = [*sequence(args.get("image_urls")), *sequence(args.get("file_urls"))]
        text = "\n".join([text, *(self._attachment(as_text(u)) for u in urls)]) if urls else text
        if source == "user":
            self.parsed.emit(UserMessage, at, time, text=text)
            self.end_reason = None  # the session goes on after a finish
        elif source == "agent":
            self.parsed.emit(AgentMessage, at, time, text=text, model=_model(event))
        else:
            self.parsed.emit(
                RawEvent, at, time, record=self.record, reason=f"message from {source!r}"
            )

    def _attachment(self, url: str) -> str:
        """A message's image or file as its text names it: by its address, or, when it is
        given as data (a `data:` URL, as the web UI sends an uploaded image), by its media
        type alone, the bytes left out and counted."""
        if not url.startswith("data:"):
            return f"[attachment: {url}]"
        self.parsed.dropped["inline_data"] += 1
        return f"[attachment: {url[5:].split(';', 1)[0].split(',', 1)[0] or 'data'}]"

    def _finish(self, kind: str, args: dict[str, Any], at: SourceRef, time: str | None) -> None:
        outputs = mapping(args.get("outputs"))
        texts = [
            text_field(args.get("thought")),
            text_field(args.get("final_thought")),
            text_field(outputs.get("reason")) or text_field(outputs.get("content")),
        ]
        for text in dict.fromkeys(t for t in texts if t):
            self.parsed.emit(AgentMessage, at, time, text=text)
        self.end_reason = kind

    def _observation(self, event: dict[str, Any], at: SourceRef, time: str | None) -> None:
        kind = event["observation"]
        cause = as_text(event.get("cause"))
        content = as_text(event.get("content"))
        call = self.calls.get(cause)
        if call is not None:
            self._result(event, kind, cause, call, content, at, time)
        elif kind == "error":
            self._error(content or as_text(event.get("message")), at, time, interrupt=False)
        elif kind == "condense":
            self.parsed.emit(Compaction, at, time, summary=content or "history condensed")
        elif kind == "agent_state_changed":
            self._state(mapping(event.get("extras")), at, time)
        elif kind == "think":
            self.parsed.dropped["think_acknowledgement"] += 1
        elif kind == "null" or (not content and cause in self.other_actions):
            self.parsed.dropped["empty_observation"] += 1
        else:
            reason = "observation without a matching action"
            self.parsed.emit(RawEvent, at, time, record=self.record, reason=reason)

    def _result(
        self,
        event: dict[str, Any],
        kind: str,
        call_id: str,
        call: _Call,
        content: str,
        at: SourceRef,
        time: str | None,
    ) -> None:
        extras = mapping(event.get("extras"))
        exit_code = mapping(extras.get("metadata")).get("exit_code", extras.get("exit_code"))
        failed = (
            kind in _FAILED_OBSERVATIONS
            or (isinstance(exit_code, int) and exit_code > 0)
            or (kind in ("edit", "read") and content.startswith(EDITOR_REFUSAL))
        )
        call.answered = True
        self.parsed.emit(ToolResult, at, time, call_id=call_id, ok=not failed, output=content)
        # A browser's screenshots of the page (`data:` URLs), which the output leaves out.
        for key in _SCREENSHOTS:
            if as_text(extras.get(key)).startswith("data:"):
                self.parsed.dropped["inline_data"] += 1
        if failed:
            return
        for edit in self._edits(kind, call, extras, content):
            self.parsed.emit(FileChange, at, time, call_id=call_id, **file_change_fields(edit))
        # Input to a command still running (`is_input`) is no command of its own.
        if kind == "run" and exit_code == 0 and not call.arguments.get("is_input"):
            command = text_field(call.arguments.get("command")) or ""
            cwd = text_field(mapping(extras.get("metadata")).get("working_dir"))
            for old, new in moved_paths(command, cwd):
                change = change_fields(new, "rename", old_path=old)
                self.parsed.emit(FileChange, at, time, call_id=call_id, anchored=True, **change)

    def _edits(self, kind: str, call: _Call, extras: dict[str, Any], content: str) -> list[Edit]:
        if kind == "run_ipython":
            return _skill_edits(call.arguments.get("code"), content)
        path = text_field(extras.get("path")) or text_field(call.arguments.get("path"))
        if path is None:
            return []
        if kind == "edit":
            recorded = _recorded_edit(path, call, extras)
            if recorded is not None:
                return [recorded] if recorded.diff is None or recorded.diff.text else []
            return edits_from_arguments(call.name, call.arguments, content)
        whole_file = (
            call.arguments.get("start", 0) in (0, 1) and call.arguments.get("end", -1) == -1
        )
        written = call.arguments.get("content")
        if kind == "write" and whole_file and isinstance(written, str):
            return [Edit(path, "modify", None, written)]
        return []

    def _state(self, extras: dict[str, Any], at: SourceRef, time: str | None) -> None:
        state = as_text(extras.get("agent_state"))
        reason = text_field(extras.get("reason"))
        if state == "error":
            self._error(reason or "agent error", at, time, interrupt=False)
        elif state in _INTERRUPTING_STATES:
            self._error(reason or f"agent {state}", at, time, interrupt=True)
        else:
            self.parsed.dropped["agent_state_change"] += 1
        if state and self.end_reason not in ("finish", "reject"):
            self.end_reason = state

    def _error(self, message: str, at: SourceRef, time: str | None, interrupt: bool) -> None:
        # An error observation and the state change it causes often say the same thing.
        if message == self.last_error and not interrupt:
            return
        self.last_error = message
        self.parsed.emit(Error, at, time, message=message, interrupt=interrupt)

    # -- model responses ----------------------------------------------------------------------

    def _new_response(self, event: dict[str, Any]) -> dict[str, Any] | None:
        """The model response behind an action, the first time an action shows it (the
        actions of one response, and their observations, all carry it)."""
        response = mapping(mapping(event.get("tool_call_metadata")).get("model_response"))
        response_id = as_text(response.get("id"))
        if not response_id or response_id in self.responses:
            return None
        self.responses.add(response_id)
        return response

    def _reasoning(self, response: dict[str, Any], at: SourceRef, time: str | None) -> None:
        """A response's readable reasoning; redacted thinking is counted and left out."""
        choices = sequence(response.get("choices"))
        message = mapping(mapping(choices[0]).get("message")) if choices else {}
        reasoning = text_field(message.get("reasoning_content"))
        blocks = [b for b in sequence(message.get("thinking_blocks")) if isinstance(b, dict)]
        if reasoning is None:
            readable = [t for b in blocks if (t := text_field(b.get("thinking")))]
            reasoning = "\n\n".join(readable) or None
        opaque = sum(1 for b in blocks if b.get("type") == "redacted_thinking")
        if opaque:
            self.parsed.dropped["opaque_reasoning"] += opaque
        if reasoning:
            self.parsed.emit(Reasoning, at, time, text=reasoning)

    def _response_usage(self, response: dict[str, Any], at: SourceRef, time: str | None) -> None:
        usage = mapping(response.get("usage"))
        prompt = count_field(usage.get("prompt_tokens"))
        cached = count_field(
            mapping(usage.get("prompt_tokens_details")).get("cached_tokens")
            or usage.get("cache_read_input_tokens")
        )
        written = count_field(usage.get("cache_creation_input_tokens"))
        output = count_field(usage.get("completion_tokens"))
        if prompt or output:
            self.parsed.emit(
                Usage,
                at,
                time,
                model=text_field(response.get("model")),
                input_tokens=max(prompt - cached - written, 0),
                output_tokens=output,
                cache_read_tokens=cached,
                cache_write_tokens=written,
            )

    def _usage(self, event: dict[str, Any], at: SourceRef, time: str | None) -> None:
        """What an action's cumulative metrics added since the last ones: the requests that
        produced it."""
        metrics = event.get("llm_metrics")
        if not isinstance(metrics, dict) or event.get("source") != "agent":
            return
        fields = self.usage.added(metrics)
        if fields is not None:
            fields["model"] = fields["model"] or _model(event)
            # What the figures added since the last ones: one request or more, it does not say.
            self.parsed.emit(Usage, at, time, **fields, requests=None)

    def _run_metrics(self, metrics: Any) -> None:
        """The usage an evaluation's or the resolver's output records of the whole run, when
        its events carry none: the cost of each request (`costs`, placed after the actions
        the requests chose when there are as many), or the run's totals."""
        if not isinstance(metrics, dict):
            return
        fields = CumulativeUsage().added(metrics)
        if fields is not None and (fields["input_tokens"] or fields["output_tokens"]):
            fields["model"] = fields["model"] or self.facts.model
            self.parsed.emit(Usage, self._at("/metrics"), None, **fields, requests=None)
            return
        costs = [_request_cost(c) for c in sequence(metrics.get("costs"))]
        pointers = [f"/metrics/costs/{index}" for index in range(len(costs))]
        requests: int | None = 1
        if not costs or None in costs:
            total = cost_field(metrics.get("accumulated_cost"))
            costs, pointers = ([total], ["/metrics/accumulated_cost"]) if total else ([], [])
            requests = None
        usages = [
            new_event(
                Usage,
                session=self.parsed.session_id,
                source=self._at(pointer),
                model=self.facts.model,
                cost_usd=round(cost or 0.0, 10),
                cost_basis="reported",
                requests=requests,
            )
            for cost, pointer in zip(costs, pointers, strict=True)
        ]
        if len(usages) > 1 and len(usages) == len(self.requests):
            # One cost a request, in order: each after the action it chose.
            for position, usage in reversed(list(zip(self.requests, usages, strict=True))):
                self.parsed.events.insert(position, usage)
        else:
            self.parsed.events.extend(usages)

    # -- helpers ----------------------------------------------------------------------------

    def _run_patch(self, root: dict[str, Any]) -> None:
        """The files the run's patch changed (`git_patch`, the resolver's; `test_result.
        git_patch`, an evaluation's) that no event changed: what a command or Python code
        wrote, which the events show only as the command. Of a file that events changed,
        only the hunks their changes do not explain, so their lines are not counted twice;
        of a file they moved, not the move again."""
        patch, pointer = root.get("git_patch"), "/git_patch"
        if not isinstance(patch, str):
            pointer = "/test_result/git_patch"
            patch = mapping(root.get("test_result")).get("git_patch")
        if not isinstance(patch, str) or not patch.strip():
            return
        if "\r\n" in patch and "\n" not in patch.replace("\r\n", ""):
            patch = patch.replace("\r\n", "\n")  # written with CRLF line ends throughout
        changes = patch_changes(patch, self.parsed.session_id, self._at(pointer), None)
        paths = {c.path for c in changes} | {c.old_path for c in changes if c.old_path}
        self.patch_root = _patch_root(paths, self.parsed.events)
        files = _EventFiles(paths, self.parsed.events)
        deletions = {change.path: change for change in changes if change.operation == "delete"}
        for change in changes:
            file = files.named.get(change.path)
            made = files.made[file] if file is not None else None
            moved_from = files.origin[file] if file is not None else change.path
            if file is not None and moved_from != change.path and change.operation != "delete":
                # The events moved it (through any names): the patch adds only what else
                # changed in the file, as a change where it went.
                if change.operation == "create" and moved_from in deletions:
                    # Git's form of a move it did not pair (the content changed a lot): the
                    # file as it was deleted, and as it was created.
                    paired = _paired_move(moved_from, deletions[moved_from], change)
                    if paired is None:
                        continue
                    change = paired
                elif change.operation in ("rename", "create"):
                    change = change.model_copy(update={"operation": "modify", "old_path": None})
                rest = _unexplained(change, files.made[file], files.name[file])
            elif change.operation == "delete" and change.path in files.moved:
                continue  # where a file the events moved was: the events' move is its end
            else:
                rest = change if made is None else _unexplained(change, made)
            if rest is not None:
                self.parsed.events.append(rest)

    def _at(self, pointer: str) -> SourceRef:
        return SourceRef(file=self.name, line=self.document.line(pointer), pointer=pointer)


class _EventFiles:
    """The files the events changed, followed through the moves they made (a → b → c is one
    file), by the patch's names for them where it has them."""

    def __init__(self, paths: set[str], events: list[EventBase]) -> None:
        self.named: dict[str, int] = {}  # a file by its name after the events
        self.origin: list[str] = []  # each file's name before the events moved it
        self.name: list[str] = []  # each file's last name in the events' own spelling
        self.made: list[list[FileChange]] = []  # each file's changes, under all its names
        for event in events:
            if not isinstance(event, FileChange):
                continue
            name = _patch_path(event.path, paths) or event.path
            if event.operation == "rename" and event.old_path:
                old = _patch_path(event.old_path, paths) or event.old_path
                file = self._file(old)
                del self.named[old]
                self.named[name] = file
            else:
                file = self._file(name)
            self.made[file].append(event)
            self.name[file] = event.path

    @property
    def moved(self) -> set[str]:
        """The names the files the events moved had before."""
        return {self.origin[file] for name, file in self.named.items() if self.origin[file] != name}

    def _file(self, name: str) -> int:
        file = self.named.get(name)
        if file is None:
            file = self.named[name] = len(self.origin)
            self.origin.append(name)
            self.name.append(name)
            self.made.append([])
        return file


def _paired_move(old: str, deleted: FileChange, created: FileChange) -> FileChange | None:
    """A patch's deletion of `old` and creation of the file where the events moved it, as one
    anchored change from the one text to the other (the rename git did not find); None when
    the patch does not hold their lines (a binary file)."""
    before, after = whole_text(deleted), whole_text(created)
    if before is None or after is None:
        return None
    diff = file_diff(created.path, before, after)
    text = diff.text.replace(f"--- a/{created.path}\n", f"--- a/{old}\n", 1)
    return created.model_copy(
        update={
            "operation": "modify",
            "old_path": None,
            "diff": text,
            "anchored": True,
            "added": diff.added,
            "removed": diff.removed,
            "content": None,
        }
    )


def _patch_root(paths: set[str], events: list[EventBase]) -> str | None:
    """The folder the events name the patch's files from (`/workspace/app` for an event's
    `/workspace/app/pkg/x.py` and the patch's `pkg/x.py`): the repository's."""
    for event in events:
        if isinstance(event, FileChange) and posixpath.isabs(event.path):
            found = _patch_path(event.path, paths)
            if found is not None and found != event.path:
                return event.path[: -len(found) - 1] or "/"
    return None


def _workspace_used(cwd: str | None, events: list[EventBase]) -> str | None:
    """The sandbox's workspace when the session ran commands in it (`cwd`, the first one's
    folder, which may be a folder inside it) or changed files in it, with no repository
    recalled or patched: OpenHands' work folder, where it was given none to clone into."""
    inside = SANDBOX_WORKSPACE + "/"
    if cwd is not None and (cwd == SANDBOX_WORKSPACE or cwd.startswith(inside)):
        return SANDBOX_WORKSPACE
    for event in events:
        if isinstance(event, FileChange) and event.path.startswith(inside):
            return SANDBOX_WORKSPACE
    return None


def sandbox_folder(folder: str | None) -> str | None:
    """`folder` when it is in the workspace of OpenHands' sandbox (`/workspace`, where the
    sandbox holds the work folder it was given or clones the repository into)."""
    if folder and (folder == SANDBOX_WORKSPACE or folder.startswith(SANDBOX_WORKSPACE + "/")):
        return posixpath.normpath(folder)
    return None


def _patch_path(path: str, paths: set[str]) -> str | None:
    """The patch's name for a file an event names by a container's path
    (`/workspace/pkg/app.py`): the longest patch path it ends with (not `app.py`)."""
    same = [p for p in paths if path == p or path.endswith("/" + p)]
    return max(same, key=len) if same else None


def _unexplained(
    change: FileChange, made: list[FileChange], name: str | None = None
) -> FileChange | None:
    """The patch's change of a file that events changed too, cut to the hunks their changes
    do not explain (a line added or removed that none of them added or removed): what a
    command or code wrote to the file besides them, under the events' name for the file
    (`name`, else the first change's). None when they explain every hunk."""
    added = {line for event in made for line in _changed_lines(event.diff, "+")}
    removed = {line for event in made for line in _changed_lines(event.diff, "-")}
    head, hunks = _hunks(change.diff)
    kept = [
        hunk
        for hunk in hunks
        if not (_changed_lines(hunk, "+") <= added and _changed_lines(hunk, "-") <= removed)
    ]
    if not kept:
        return None
    diff = head + "".join(kept)
    counted_added, counted_removed = count(diff)
    return change.model_copy(
        update={
            "path": name or made[0].path,
            "diff": diff,
            "added": counted_added,
            "removed": counted_removed,
            "content": None,
        }
    )


def _hunks(diff: str) -> tuple[str, list[str]]:
    """A unified diff's file headers, and its hunks (each from its `@@` line)."""
    head: list[str] = []
    hunks: list[list[str]] = []
    for line in diff.splitlines(keepends=True):
        if line.startswith("@@"):
            hunks.append([line])
        elif hunks:
            hunks[-1].append(line)
        else:
            head.append(line)
    return "".join(head), ["".join(hunk) for hunk in hunks]


def _changed_lines(diff: str, mark: str) -> set[str]:
    """The lines a diff's hunks add (`+`) or remove (`-`), without their ends' whitespace."""
    _, hunks = _hunks(diff)
    return {
        line[1:].rstrip()
        for hunk in hunks
        for line in hunk.splitlines()[1:]
        if line.startswith(mark)
    }


def _other_run_name(run: dict[str, Any], line: int) -> str:
    """A run of an output of another benchmark, by its question or line."""
    for key in ("question_id", "task_id", "id"):
        value = run.get(key)
        if isinstance(value, (str, int)) and not isinstance(value, bool):
            return f"{key} {value}"
    return f"line {line}"


def _run_model(metadata: dict[str, Any]) -> str | None:
    """The model an evaluation's metadata names."""
    return text_field(mapping(metadata.get("llm_config")).get("model")) or text_field(
        metadata.get("model_name")
    )


def _request_cost(cost: Any) -> float | None:
    """One entry of `costs`: a number, or a mapping with its `cost`."""
    return cost_field(cost.get("cost") if isinstance(cost, dict) else cost)


def _skill_edits(code: Any, output: str) -> list[Edit]:
    """The changes an older run_ipython action made with the agentskills edit functions
    (`edit_file_by_replace`, `insert_content_at_line`, `append_file`, `create_file`), each
    call's arguments literal; only when the output shows every one of them succeeded."""
    if not isinstance(code, str) or not any(name in code for name in _SKILL_EDITS):
        return []
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return []
    edits: list[Edit] = []
    calls = 0
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
            continue
        if node.func.id not in _SKILL_EDITS:
            continue
        arguments = _literal_arguments(node, _SKILL_PARAMETERS[node.func.id])
        edit = _skill_edit(node.func.id, arguments) if arguments is not None else None
        if node.func.id == "create_file":
            if edit is None or f"[File {edit.path} created.]" not in output:
                return []
        else:
            calls += 1
        if edit is not None:
            edits.append(edit)
    if output.count(_SKILL_EDITED) < calls:
        return []
    return edits


_SKILL_PARAMETERS = {
    "edit_file_by_replace": ("file_name", "to_replace", "new_content"),
    "insert_content_at_line": ("file_name", "line_number", "content"),
    "append_file": ("file_name", "content"),
    "create_file": ("filename",),
}


def _literal_arguments(call: ast.Call, names: tuple[str, ...]) -> dict[str, Any] | None:
    """A call's arguments by parameter name, None when one is not a literal."""
    arguments: dict[str, Any] = {}
    try:
        for name, node in zip(names, call.args, strict=False):
            arguments[name] = ast.literal_eval(node)
        for keyword in call.keywords:
            if keyword.arg is None:
                return None
            arguments[keyword.arg] = ast.literal_eval(keyword.value)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    return None if holds_int_past_figures(arguments) else arguments


def _skill_edit(function: str, arguments: dict[str, Any]) -> Edit | None:
    path = text_field(arguments.get("file_name", arguments.get("filename")))
    if path is None:
        return None
    if function == "create_file":
        return Edit(path, "create", file_diff(path, None, ""), "")
    if function == "edit_file_by_replace":
        old, new = arguments.get("to_replace"), arguments.get("new_content")
        if isinstance(old, str) and isinstance(new, str) and old != new:
            return Edit(path, "modify", fragment_diff(path, old, new))
    elif function == "insert_content_at_line":
        line, text = arguments.get("line_number"), arguments.get("content")
        if isinstance(text, str) and text and isinstance(line, int) and line >= 1:
            return Edit(path, "modify", fragment_diff(path, "", text, first_line=line))
    elif function == "append_file":
        text = arguments.get("content")
        if isinstance(text, str) and text:
            return Edit(path, "modify", fragment_diff(path, "", text))
    return None


def _recalled_repository(extras: dict[str, Any]) -> str | None:
    """The folder a workspace recall names: its repository's, `repo_directory`, which is the
    folder the repository was cloned into, named within the workspace (`working_dir`, as
    OpenHands writes it; older files name it absolutely); else the workspace."""
    workspace = text_field(extras.get("working_dir"))
    directory = text_field(extras.get("repo_directory"))
    if directory is None or posixpath.isabs(directory):
        return directory or workspace
    return posixpath.join(workspace, directory) if workspace else None


def _time(event: Any) -> str | None:
    return text_field(event.get("timestamp")) if isinstance(event, dict) else None


def _model(event: dict[str, Any]) -> str | None:
    response = mapping(mapping(event.get("tool_call_metadata")).get("model_response"))
    tokens = mapping(mapping(event.get("llm_metrics")).get("accumulated_token_usage"))
    return text_field(response.get("model")) or text_field(tokens.get("model"))


def _arguments(args: dict[str, Any]) -> dict[str, Any]:
    """A tool action's arguments as the model gave them: older files hold the editor's
    arguments only in `translated_ipython_code` ("print(file_editor(**{...}))")."""
    arguments = {k: v for k, v in args.items() if k not in _BOOKKEEPING_ARGS}
    code = args.get("translated_ipython_code")
    if isinstance(code, str) and code.startswith(_FILE_EDITOR) and code.endswith("))"):
        try:
            editor = ast.literal_eval(code[len(_FILE_EDITOR) : -2])
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            editor = None
        if isinstance(editor, dict) and not holds_int_past_figures(editor):
            arguments.update({str(k): v for k, v in editor.items()})
    return arguments


def _recorded_edit(path: str, call: _Call, extras: dict[str, Any]) -> Edit | None:
    """The change an edit observation recorded: the whole-file diff OpenHands computed, or
    the file before and after (the LLM-based editor). None when it recorded neither."""
    created = call.arguments.get("command") == "create"
    diff_text = extras.get("diff")
    if isinstance(diff_text, str) and diff_text.strip():
        hunks = diff_text[diff_text.find("@@") :] if "@@" in diff_text else ""
        return Edit(path, "create" if created else "modify", hunks_diff(path, hunks, created))
    old, new = extras.get("old_content"), extras.get("new_content")
    if extras.get("impl_source") == "llm_based_edit" and isinstance(new, str):
        before = old if isinstance(old, str) and extras.get("prev_exist") is not False else None
        if before == new:
            return Edit(path, "modify", Diff("", 0, 0, True))
        return Edit(
            path, "create" if before is None else "modify", file_diff(path, before, new), new
        )
    return None


def _forgotten(args: dict[str, Any]) -> str:
    ids = args.get("forgotten_event_ids")
    if isinstance(ids, list):
        return f"forgot {len(ids)} events"
    first, last = args.get("forgotten_events_start_id"), args.get("forgotten_events_end_id")
    return f"forgot events {as_text(first)} to {as_text(last)}"
