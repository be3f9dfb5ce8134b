"""SWE-agent `.traj` files and mini-swe-agent trajectory JSON: one JSON document a run.

SWE-agent (`<instance_id>.traj`, written with `json.dumps(indent=2)`):

* `trajectory`: the executed steps, each `{"action", "observation", "response", "thought",
  "state", "execution_time"?, "query"? (1.1+) or "messages"? (1.0), "extra_info"?}`.
  `response` is the model's whole output, `thought` the part before the command, `action` the
  command that ran (its first word names the tool: `edit`, `create`, `submit`, `bash`...) and
  `observation` what it printed. `state` holds `working_dir` (a JSON string in 0.x, a dict in
  1.x). `query`/`messages` repeat the conversation the model saw and are not read. A step's
  result is failed when its edit tool says it changed nothing (0.x's `edit`: "Your changes
  have NOT been applied.", 1.x's `str_replace_editor`: "No replacement was performed").
* `history`: the conversation. 0.x items are `{"role", "content", "agent", "is_demo"?}`; 1.x
  items add `message_type` (`system_prompt`, `demonstration`, `observation`, `action`...),
  and for function-calling models `tool_calls` (with the call ids) on actions and
  `tool_call_ids` on observations, and `thinking_blocks`. The system prompt becomes a raw
  event; demonstrations (canned example sessions shown to the model) are skipped and counted
  in `dropped["demonstration"]`; the user messages before the first action (the issue) are
  user messages. The rest of the history repeats the trajectory and is read only for call ids
  and thinking. A function-calling model's command is the call it made: the function's name
  and its arguments (`bash` `{"command": "ls -F"}`, `str_replace_editor` `{"command": "view",
  "path": …}`; without any, the command line), not the command line SWE-agent rendered of
  it; an id the file gave an earlier call already (SWE-agent's own demonstrations repeat
  them) is made unique with `-2`, `-3`, ….
* `info`: `exit_status` (the session's end reason), `submission` (the final patch: a git
  diff, imported as one anchored file change per file; a submission that is no patch, such
  as a capture-the-flag run's flag, a raw event), `model_stats` (`instance_cost`,
  `tokens_sent`, `tokens_received`, `api_calls`: one usage event for the whole run, the cost
  reported; some runs wrote the dict's Python repr, read when it is a flat dict literal),
  `swe_agent_version` (1.x); the rest (hashes, the runtime's version, 0.x's
  `total_cost` of the batch so far) is one raw event before the end, but for
  `edited_files30`, `50` and `70`, excerpts of the files around the submission's changes,
  counted in `dropped["edited_files"]`.
* `environment`: the environment's name (`swe_main`, `main`), a raw event after the start.
* `replay_config` (a JSON string or object): the run's configuration, read for the model
  (`agent.model.name`), the base commit (`env.repo.base_commit`) and the instance id; its
  `env` (the container's image, the repository) a raw event after the environment's name.
* `attempts` (the retry agent): one such document per attempt; each attempt is imported as a
  session of its own (start to end), and the top-level copy of the chosen attempt is skipped.

A file holding only `history` (the demonstrations SWE-agent ships in
`trajectories/demonstrations/`, such as its function-calling one) is read from the history:
the preamble as above, then each action (`action`, `thought`, `tool_calls`) an agent message
and a tool call (the call id from `tool_calls`, else one made of its pointer, `history-4`),
answered by the `tool` or `user` observation after it (the one naming the call in
`tool_call_ids`, else the latest unanswered call; with a `message_type`, only an
`observation` answers); an assistant message that is not an action is an agent message, a
user message that does not answer a call (none waiting, or its `message_type` other than
`observation`) a user message. The file changes are those of `info.submission` when the
file has one (after the submit's result), else those of the diff the `submit` printed (its
terminal line ends and the shell's status lines taken off), one anchored file change per
file.

mini-swe-agent (`<instance_id>.traj.json`): `{"info", "messages", "trajectory_format"}` with
`trajectory_format` `mini-swe-agent-1` (v1) or `mini-swe-agent-1.1` (v2); older files are a
bare list of messages. `info` has `exit_status`, `submission`, `model_stats`
(`instance_cost`, `api_calls`), `mini_version` and `config` (`model.model_name`,
`environment.cwd`). The environment (`config.environment` and `environment_type`) is a raw
event after the start, and the rest of `info` (the agent's and the model's configuration)
one before the end. `messages` are chat messages:

* `system` (the prompt: a raw event), then `user` (the task: a user message);
* `assistant`: in v1 the content is a THOUGHT and one ```` ```bash ```` block (v2 text-based
  models: ```` ```mswea_bash_command ````) holding the command; v2 adds `extra.actions`
  (`[{"command", "tool_call_id"?}]`), `extra.cost` and `extra.response` (the raw API response
  with its `usage`), and tool-calling models put the command in `tool_calls`. Each command is a
  `bash` tool call (an action or a call that is no object, or an action without a command,
  a raw event); a response with its own cost or token counts is one usage event.
* the observation after it: `user` (text models) or `tool` (with `tool_call_id`) content
  `<returncode>N</returncode><output>...</output>`, v2 adding `extra.returncode` and
  `extra.raw_output`; the tool result is ok when the return code is 0.
* a harness message that is not an observation: a v1 format error (after a response that did
  not hold exactly one command) or a v2 message with `extra.interrupt_type` is an error event,
  after the model's reply it keeps as an agent message (a text-based model's
  `extra.model_response`; 2.4.6 on, a tool-calling model's whole `extra.response`, with its
  cost); what a person typed into interactive mini is such a message too, in a sentence of the
  harness (`interrupt_type` `UserInterruption`, `UserRejection`, `UserNewTask`): their words are
  a user message, after an interrupting error for an interruption; a command they typed in
  human mode (a `User command:` message, the command in `extra.actions`) is a `bash` call of
  id `user-command-<message>-<n>`, which the observation after it answers; a v2 `exit` message ends
  the run (`extra.exit_status`); in v1 the last user message is the submitted output.
* Responses API models store the whole response object (`"object": "response"`, its
  `output` items `message`, `reasoning`, `function_call`) and `function_call_output` items.

The folder the run worked in (SWE-agent's first `working_dir`, mini-swe-agent's
`environment.cwd`: a container's `/testbed` or `/<repo>`) is the session's `sandbox_root`
when the submitted patch's files are named in it (a call or an output holding
`/testbed/src/a.py` for the patch's `src/a.py`), else its `sandbox_candidate`.

Lines: a SourceRef points at the element (`/trajectory/3`, `/messages/5`) and its line in the
file when the file is indented JSON (as both harnesses write it), else line 1.
"""

from __future__ import annotations

import ast
import json
import math
import re
from collections import Counter, deque
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from stet_lsp.core.errors import StetError
from stet_lsp.trajectory.events import (
    AgentMessage,
    Error,
    FileChange,
    RawEvent,
    Reasoning,
    SessionEnd,
    SessionStart,
    SourceRef,
    ToolCall,
    ToolResult,
    Usage,
    UserMessage,
)
from stet_lsp.trajectory.importers.base import Importer, ParsedSession, Problem, new_event
from stet_lsp.trajectory.importers.fields import (
    LARGEST_FIGURE,
    cost_field,
    count_field,
    mapping,
    sequence,
    text_field,
    whole_count,
)
from stet_lsp.trajectory.importers.files import file_digest
from stet_lsp.trajectory.importers.jsondoc import JsonDocument, Spec
from stet_lsp.trajectory.importers.patches import patch_changes

Record = dict[str, Any]

# The first key of the document, as both harnesses write it.
_FIRST_KEY = re.compile(r'\{\s*"([A-Za-z_]+)"\s*:')
_TRAJECTORY_ARRAY = re.compile(r'"trajectory"\s*:\s*\[')
# The first step's first members as SWE-agent writes them, for a step whose observation (up
# to 100,000 characters, before `response` and `thought`) runs past the sniffed head.
_FIRST_STEP = re.compile(
    r'"trajectory"\s*:\s*\[\s*\{\s*"action"\s*:\s*"(?:[^"\\]|\\.)*"\s*,\s*"observation"\s*:\s*"'
)
# mini-swe-agent's `info` (first in both versions) starts with `exit_status` (v1) or
# `model_stats` (v2).
_MINI_INFO_FIRST = re.compile(r'\{\s*"info"\s*:\s*\{\s*"(?:exit_status|model_stats)"\s*:')
_MINI_MARKER = re.compile(r'"trajectory_format"\s*:\s*"mini-swe-agent|"mini_version"\s*:')
_LEADING = "\ufeff \t\r\n"
_EDIT_NOT_APPLIED = "Your changes have NOT been applied."
_NO_REPLACEMENT = "No replacement was performed"
_SWE_AGENT_FIRST_KEYS = frozenset(
    {"environment", "trajectory", "history", "info", "attempts", "replay_config"}
)
_MINI_FIRST_KEYS = frozenset({"info", "messages", "trajectory_format", "instance_id"})
# The bare message list early mini-swe-agent wrote (before `info`): a system prompt first,
# and that prompt (or a response soon after) showing the command block the agent parses.
_MINI_LIST_START = re.compile(r'\[\s*\{\s*"role"\s*:\s*"system"\s*,\s*"content"\s*:')
_MINI_BLOCK_MARK = re.compile(r"```(?:bash|mswea_bash_command)\\n")
# The command block of a text-based mini-swe-agent response (v1 `bash`, v2 `mswea_bash_command`).
_ACTION_BLOCK = re.compile(r"```(?:bash|mswea_bash_command)\s*\n(.*?)\n```", re.DOTALL)
_RETURNCODE = re.compile(r"\s*<returncode>\s*(-?\d+)\s*</returncode>")
# A SWE-agent file holding only its `history` (the demonstrations SWE-agent ships): the
# document starts with it, and its first item is a chat message of SWE-agent's.
_HISTORY_ONLY_START = re.compile(r'\{\s*"history"\s*:\s*\[\s*\{\s*"role"\s*:')
_HISTORY_ITEM_MARK = re.compile(r'"(?:agent|message_type)"\s*:\s*"')
# The lines SWE-agent's shell prints after a command's output (its status and prompt).
_STATUS_LINE = re.compile(r"\((?:Open file|Current directory): .*\)|bash-\$\s*|")
_THINKING_TYPES = frozenset({"thinking"})
# The members of a SWE-agent run's `info` read into events (the strings), and of its
# `model_stats` (the usage).
_INFO_READ = frozenset({"exit_status", "submission", "swe_agent_version"})
_MODEL_STATS_READ = frozenset({"instance_cost", "tokens_sent", "tokens_received", "api_calls"})
_EDITED_FILES = re.compile(r"edited_files\d+")
# The same for a mini-swe-agent run (its `info.config` holding the environment's).
_MINI_INFO_READ = frozenset({"exit_status", "submission", "mini_version"})
_MINI_MODEL_STATS_READ = frozenset({"instance_cost", "api_calls"})
_MINI_ENVIRONMENT = ("environment", "environment_type")
_OPAQUE_THINKING_TYPES = frozenset({"redacted_thinking"})


class SweAgentImporter:
    """SWE-agent `.traj` files (0.x and 1.x)."""

    name = "swe-agent"
    label = "SWE-agent .traj"

    def sniff(self, head: str) -> bool:
        first = _FIRST_KEY.match(head.lstrip(_LEADING))
        if first is None or first.group(1) not in _SWE_AGENT_FIRST_KEYS:
            return False
        if _MINI_MARKER.search(head):
            return False
        start = head.lstrip(_LEADING)
        if _HISTORY_ONLY_START.match(start) and _TRAJECTORY_ARRAY.search(head) is None:
            return _HISTORY_ITEM_MARK.search(start) is not None
        return _FIRST_STEP.search(head) is not None or (
            _TRAJECTORY_ARRAY.search(head) is not None
            and '"observation"' in head
            and '"thought"' in head
            and '"response"' in head
        )

    def parse(self, path: Path) -> ParsedSession:
        document = _Document.read(path)
        data = document.data
        if not isinstance(data, dict):
            raise StetError(f"{path}: not a SWE-agent trajectory (the document is not an object)")
        session = ParsedSession(format=self.name, session_id=document.session_id)
        session.sources[document.source] = path
        session.problems += document.problems
        attempts = data.get("attempts")
        if isinstance(attempts, list) and _has_steps(attempts):
            self._attempts(document, attempts, session)
        elif isinstance(data.get("trajectory"), list) or isinstance(data.get("history"), list):
            _SweAgentRun(document, session, data, document.session_id, "").read()
        else:
            raise StetError(f"{path}: not a SWE-agent trajectory (no `trajectory` list)")
        _container_folder(session)
        return session

    def _attempts(self, document: _Document, attempts: list[Any], session: ParsedSession) -> None:
        for index, attempt in enumerate(attempts):
            pointer = f"/attempts/{index}"
            if not isinstance(attempt, dict):
                session.events.append(
                    new_event(
                        RawEvent,
                        session=document.session_id,
                        source=document.ref(pointer),
                        record=attempt,
                        reason="retry attempt is not an object",
                    )
                )
                continue
            run_id = f"{document.session_id}-attempt-{index + 1}"
            _SweAgentRun(document, session, attempt, run_id, pointer).read()


class MiniSweAgentImporter:
    """mini-swe-agent trajectories (`mini-swe-agent-1` and `mini-swe-agent-1.1`)."""

    name = "mini-swe-agent"
    label = "mini-swe-agent trajectory JSON"

    def sniff(self, head: str) -> bool:
        start = head.lstrip(_LEADING)
        if _MINI_LIST_START.match(start):
            return _MINI_BLOCK_MARK.search(start) is not None
        first = _FIRST_KEY.match(start)
        if first is None or first.group(1) not in _MINI_FIRST_KEYS:
            return False
        if _MINI_MARKER.search(head):
            return True
        # v1 writes `info` first and its `submission` (a patch) can push the version marker
        # past the head; SWE-agent never starts with `info`.
        return _MINI_INFO_FIRST.match(head.lstrip(_LEADING)) is not None

    def parse(self, path: Path) -> ParsedSession:
        document = _Document.read(path)
        data = document.data
        if isinstance(data, list):
            info: Record = {}
            messages = data
            pointer = ""
        elif isinstance(data, dict) and isinstance(data.get("messages"), list):
            info = data["info"] if isinstance(data.get("info"), dict) else {}
            messages = data["messages"]
            pointer = "/messages"
        else:
            raise StetError(f"{path}: not a mini-swe-agent trajectory (no `messages` list)")
        session = ParsedSession(format=self.name, session_id=document.session_id)
        session.sources[document.source] = path
        session.problems += document.problems
        title = data.get("instance_id") if isinstance(data, dict) else None
        _MiniRun(document, session, info, messages, pointer, title).read()
        _container_folder(session)
        return session


IMPORTERS: dict[str, Importer] = {
    SweAgentImporter.name: SweAgentImporter(),
    MiniSweAgentImporter.name: MiniSweAgentImporter(),
}


def _container_folder(session: ParsedSession) -> None:
    """The container's folder the run worked in (`/testbed`, `/pydicom__pydicom`), where the
    repository was: the session's `sandbox_root` when the submitted patch's files are named
    in it (`/testbed/src/a.py` for the patch's `src/a.py`), else its `sandbox_candidate`,
    which the import takes for the repository when the files the run named in it are the
    repository's."""
    cwd = next((e.cwd for e in session.events if isinstance(e, SessionStart) and e.cwd), None)
    folder = cwd.rstrip("/") if cwd else ""
    if not folder.startswith("/"):
        return
    patched = {
        f"{folder}/{event.path}"
        for event in session.events
        if isinstance(event, FileChange) and not event.path.startswith("/")
    }
    texts = [
        event.output if isinstance(event, ToolResult) else json.dumps(event.input)
        for event in session.events
        if isinstance(event, ToolResult | ToolCall)
    ]
    if any(path in text for path in patched for text in texts):
        session.sandbox_root = folder
    else:
        session.sandbox_candidate = folder


# --- the document and its lines ------------------------------------------------------------


# The lists of steps a document cut short is read item by item in (SWE-agent's, its retry
# attempts', mini-swe-agent's).
_STEP_LISTS: dict[str, Any] = {
    "trajectory": [None],
    "history": [None],
    "messages": [None],
    "attempts": [{"trajectory": [None], "history": [None]}],
}


@dataclass
class _Document:
    """The parsed file, its session id and where its top-level elements start."""

    source: str
    data: Any
    session_id: str
    key_lines: dict[str, int] = field(default_factory=dict)
    element_lines: dict[str, list[int]] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    """Where bytes that are not UTF-8 were read, and where a document cut short stops: what
    comes before it is read."""

    @classmethod
    def read(cls, path: Path) -> _Document:
        parsed = JsonDocument.read(path)
        try:
            data = json.loads(parsed.text)
        except ValueError:
            # Cut short (a run still being written, a truncated copy): its whole steps.
            spec: Spec = [None] if parsed.text.lstrip().startswith("[") else _STEP_LISTS
            data = parsed.load(spec)
            steps = isinstance(data, list) or (
                isinstance(data, dict)
                and any(isinstance(data.get(key), list) for key in _STEP_LISTS)
            )
            if not steps:  # it stops before any list of steps starts
                message = parsed.error[1] if parsed.error else "no JSON value"
                raise StetError(f"{path}: not JSON: {message}") from None
        document = cls(
            source=path.name,
            data=data,
            session_id=file_digest(path),
            problems=parsed.problems(path.name),
        )
        document._index_lines(parsed.text)
        return document

    def _index_lines(self, text: str) -> None:
        """The lines of the top-level keys and of the elements of top-level arrays, read from
        the indentation of indented JSON (every line of such a file is structure: strings hold
        no raw newlines). Compact JSON gets none: its events point at line 1."""
        lines = text.split("\n")
        if len(lines) < 3 or isinstance(self.data, list):
            if isinstance(self.data, list):
                self.element_lines[""] = _list_elements(lines, len(self.data))
            return
        unit = len(lines[1]) - len(lines[1].lstrip(" "))
        if unit == 0:
            return
        key_prefix = " " * unit + '"'
        element_indent = 2 * unit
        current: list[int] | None = None
        for number, line in enumerate(lines, 1):
            if line.startswith(key_prefix):
                end = line.find('"', unit + 1)
                key = line[unit + 1 : end]
                self.key_lines[key] = number
                current = [] if line.rstrip().endswith("[") else None
                if current is not None:
                    self.element_lines[key] = current
            elif (
                current is not None
                and len(line) > element_indent
                and line[element_indent] not in " }]"
                and line.startswith(" " * element_indent)
            ):
                current.append(number)
        if isinstance(self.data, dict):
            for key, starts in list(self.element_lines.items()):
                value = self.data.get(key)
                if not isinstance(value, list) or len(value) != len(starts):
                    del self.element_lines[key]

    def line_of(self, array: str, index: int) -> int:
        starts = self.element_lines.get(array)
        if starts is not None and index < len(starts):
            return starts[index]
        return 1

    def ref(self, pointer: str, line: int | None = None) -> SourceRef:
        if line is None:
            line = self._line_of_pointer(pointer)
        return SourceRef(file=self.source, line=line, pointer=pointer or None)

    def _line_of_pointer(self, pointer: str) -> int:
        parts = pointer.split("/")
        if len(parts) >= 3 and parts[2].isdigit():
            return self.line_of(parts[1], int(parts[2]))
        if len(parts) >= 2 and parts[1] in self.key_lines:
            return self.key_lines[parts[1]]
        if len(parts) == 2 and parts[1].isdigit():
            return self.line_of("", int(parts[1]))
        return 1


def _list_elements(lines: list[str], expected: int) -> list[int]:
    """Element lines of an indented top-level JSON list (a bare list of messages)."""
    if len(lines) < 3:
        return []
    unit = len(lines[1]) - len(lines[1].lstrip(" "))
    if unit == 0:
        return []
    indent = " " * unit
    starts = [
        number
        for number, line in enumerate(lines, 1)
        if line.startswith(indent) and len(line) > unit and line[unit] not in " }]"
    ]
    return starts if len(starts) == expected else []


def _has_steps(attempts: list[Any]) -> bool:
    return any(isinstance(attempt, dict) and "trajectory" in attempt for attempt in attempts)


# --- SWE-agent -----------------------------------------------------------------------------


class _SweAgentRun:
    """One SWE-agent run (the document, or one retry attempt) as events."""

    def __init__(
        self, document: _Document, session: ParsedSession, data: Record, run_id: str, base: str
    ) -> None:
        self.document = document
        self.session = session
        self.data = data
        self.run_id = run_id
        self.base = base
        self.events = session.events
        info = data.get("info")
        self.info: Record = info if isinstance(info, dict) else {}
        self.model_stats = _model_stats(self.info.get("model_stats"))
        self.replay = _replay_config(data.get("replay_config"))
        self.model = _text_at(self.replay, "agent", "model", "name")
        self.call_ids: set[str] = set()
        self.named_ids: dict[str, str] = {}  # a call's id -> the id the history names it by

    def ref(self, pointer: str) -> SourceRef:
        if self.base:
            # Inside a retry attempt: the attempt's own line is the best known.
            return self.document.ref(self.base + pointer, self.document.ref(self.base).line)
        return self.document.ref(pointer)

    def read(self) -> None:
        trajectory = self.data.get("trajectory")
        steps: list[Any] = trajectory if isinstance(trajectory, list) else []
        history_value = self.data.get("history")
        history: list[Any] = history_value if isinstance(history_value, list) else []
        self._start(steps)
        self._environment()
        for key, value, kind, named in (
            ("trajectory", trajectory, list, "list"),
            ("history", history_value, list, "list"),
            ("info", self.data.get("info"), dict, "object"),
        ):
            if value is not None and not isinstance(value, kind):
                self._raw(f"/{key}", value, f"{key} that is no {named}")
        first_action = self._preamble(history)
        if not isinstance(trajectory, list):
            self._conversation(history, first_action)
        else:
            self._steps(steps, history)
        self._usage()
        self._information()
        self.events.append(
            new_event(
                SessionEnd,
                session=self.run_id,
                source=self.ref("/info"),
                reason=text_field(self.info.get("exit_status")),
            )
        )

    def _environment(self) -> None:
        """The environment the run ran in, kept raw: its name (`environment`) and its
        configuration (`replay_config.env`: the container's image, the repository, the
        commands run after it started)."""
        if "environment" in self.data:
            self._raw("/environment", self.data["environment"], "the environment the run ran in")
        if "env" in self.replay:
            reason = "the configuration of the environment the run ran in"
            self._raw("/replay_config/env", self.replay["env"], reason)

    def _information(self) -> None:
        """What `info` holds that no other event does (the versions and hashes of SWE-agent
        and its runtime, a review, the model stats' other figures), kept raw in one event; the
        excerpts of the edited files (`edited_files30`, ...), which repeat the files around
        the submission's changes, are counted in `dropped["edited_files"]`."""
        info: Record = {}
        for key, value in self.info.items():
            if _EDITED_FILES.fullmatch(key):
                self.session.dropped["edited_files"] += 1
            else:
                info[key] = value
        within = {"model_stats": _MODEL_STATS_READ}
        rest = _unread_information(info, self.model_stats, _INFO_READ, within)
        if rest:
            self._raw("/info", rest, "the run's information that no other event holds")

    def _steps(self, steps: list[Any], history: list[Any]) -> None:
        actions = [item for item in history if _is_history_action(item)]
        paired = actions if len(actions) == len(steps) else [None] * len(steps)
        submit_at: int | None = None
        submit_call: str | None = None
        for index, (step, action_item) in enumerate(zip(steps, paired, strict=True)):
            call_id = self._step(index, step, action_item)
            if call_id is not None and _first_word(step.get("action")) == "submit":
                submit_at, submit_call = len(self.events), call_id
        self._submission(submit_at, submit_call)

    def _conversation(self, history: list[Any], first: int) -> None:
        """A file with no `trajectory` (a demonstration holding only its history): the
        conversation from the first action on. Each action is a tool call, answered by the
        observation after it (the one naming its call id, for function-calling models). The
        file changes are those of `info.submission`, after the submit's result, else those of
        the patch the submit printed."""
        pending: dict[str, str] = {}  # unanswered call ids -> their command's first word
        submit_at: int | None = None
        submit_call: str | None = None
        for index in range(first, len(history)):
            item, pointer = history[index], f"/history/{index}"
            if not isinstance(item, dict):
                self._raw(pointer, item, "history item is not an object")
            elif item.get("is_demo") or item.get("message_type") == "demonstration":
                self.session.dropped["demonstration"] += 1
            elif _is_history_action(item):
                call = self._history_action(pointer, item)
                if call is not None:
                    pending[call[0]] = call[1]
            elif pending and _is_history_observation(item):
                named = sequence(item.get("tool_call_ids"))
                ids = [i for i in pending if self.named_ids.get(i, i) in named]
                call_id = ids[0] if ids else next(reversed(pending))
                name = pending.pop(call_id)
                self._history_result(pointer, item, call_id, name)
                if name == "submit":
                    submit_at, submit_call = len(self.events), call_id
            elif item.get("role") == "user":
                text = _content_text(item.get("content"))
                self.events.append(
                    new_event(UserMessage, session=self.run_id, source=self.ref(pointer), text=text)
                )
            elif item.get("role") == "assistant":  # a message that is not an action
                text = _content_text(item.get("content"))
                self.events.append(
                    new_event(
                        AgentMessage,
                        session=self.run_id,
                        source=self.ref(pointer),
                        text=text,
                        model=self.model,
                    )
                )
            elif item.get("role") == "system" or item.get("message_type") == "system_prompt":
                self._raw(pointer, item, "system prompt")
            else:
                self._raw(pointer, item, "history item that is neither an action nor its result")
        self._submission(submit_at, submit_call)

    def _history_action(self, pointer: str, item: Record) -> tuple[str, str] | None:
        """An action of the history: its reasoning, thought and command; returns the call's
        id and the command's first word when it ran one. With no `thought` member, the
        message's content is what the agent said."""
        action = text_field(item.get("action")) or ""
        thought = (text_field(item.get("thought")) or "") if "thought" in item else None
        call_id = self._turn(
            self.ref(pointer),
            item,
            action,
            thought,
            _content_text(item.get("content")),
            pointer.lstrip("/").replace("/", "-"),
        )
        return None if call_id is None else (call_id, _first_word(action) or "bash")

    def _history_result(self, pointer: str, item: Record, call_id: str, name: str) -> None:
        source = self.ref(pointer)
        output = _content_text(item.get("content"))
        self.events.append(
            new_event(
                ToolResult, session=self.run_id, source=source, call_id=call_id, output=output
            )
        )
        if name == "submit" and self._submitted_patch() is None:
            patch = _printed_patch(output)
            if patch:
                self.events.extend(patch_changes(patch, self.run_id, source, call_id))

    def _start(self, steps: list[Any]) -> None:
        cwd = None
        for step in steps:
            if isinstance(step, dict):
                cwd = _working_dir(step.get("state"))
                if cwd:
                    break
        self.events.append(
            new_event(
                SessionStart,
                session=self.run_id,
                source=self.ref(""),
                harness="swe-agent",
                harness_version=text_field(self.info.get("swe_agent_version")),
                model=self.model,
                cwd=cwd,
                commit=_text_at(self.replay, "env", "repo", "base_commit"),
                title=_text_at(self.replay, "problem_statement", "id"),
            )
        )

    def _preamble(self, history: list[Any]) -> int:
        """The history before the first action: system prompt, demonstrations, the issue.
        Returns the index of the first action (the history's length when none)."""
        for index, item in enumerate(history):
            pointer = f"/history/{index}"
            if not isinstance(item, dict):
                self._raw(pointer, item, "history item is not an object")
                continue
            if _is_history_action(item):
                return index
            kind = item.get("message_type")
            if item.get("is_demo") or kind == "demonstration":
                self.session.dropped["demonstration"] += 1
            elif kind == "system_prompt" or item.get("role") == "system":
                self._raw(pointer, item, "system prompt")
            elif item.get("role") == "user":
                self.events.append(
                    new_event(
                        UserMessage,
                        session=self.run_id,
                        source=self.ref(pointer),
                        text=_content_text(item.get("content")),
                    )
                )
            else:
                self._raw(pointer, item, "history item before the first step")
        return len(history)

    def _step(self, index: int, step: Any, action_item: Record | None) -> str | None:
        """One executed step; returns its call id when it ran a command."""
        pointer = f"/trajectory/{index}"
        if not isinstance(step, dict):
            self._raw(pointer, step, "trajectory step is not an object")
            return None
        source = self.ref(pointer)
        call_id = self._turn(
            source,
            action_item,
            text_field(step.get("action")) or "",
            text_field(step.get("thought")) or "",
            text_field(step.get("response")) or "",
            f"step-{index + 1}",
        )
        observation = _content_text(step.get("observation"))
        if call_id is None:
            if observation.strip():
                self._raw(pointer, step, "observation without an action")
            return None
        tool = (text_field(step.get("action")) or "").split(maxsplit=1)[:1]
        ok = not _edit_refused(tool[0] if tool else "", observation)
        self.events.append(
            new_event(
                ToolResult,
                session=self.run_id,
                source=source,
                call_id=call_id,
                ok=ok,
                output=observation,
            )
        )
        return call_id

    def _turn(
        self,
        source: SourceRef,
        item: Record | None,
        action: str,
        thought: str | None,
        response: str,
        default_id: str,
    ) -> str | None:
        """What the model said and ran in one turn (a trajectory step, or an action of a
        history holding no trajectory): the reasoning in the history item's thinking blocks,
        the thought (the whole `response` instead when there is none and no command ran, or
        when no thought was recorded: None), and the command as a tool call, its id from the
        item's `tool_calls`, else `default_id`. Returns the call id when a command ran."""
        for text in _thinking(mapping(item).get("thinking_blocks"), self.session.dropped):
            self.events.append(new_event(Reasoning, session=self.run_id, source=source, text=text))
        said = (thought or "").strip()
        if not said and (not action.strip() or thought is None):
            said = response.strip()
        if said:
            self.events.append(
                new_event(
                    AgentMessage, session=self.run_id, source=source, text=said, model=self.model
                )
            )
        if not action.strip():
            return None
        named = _history_call_id(item) or default_id
        call_id, number = named, 1
        while call_id in self.call_ids:  # SWE-agent's demonstrations repeat ids
            number += 1
            call_id = f"{named}-{number}"
        if call_id != named:
            self.named_ids[call_id] = named
        self.call_ids.add(call_id)
        name, arguments = _history_function(item)
        self.events.append(
            new_event(
                ToolCall,
                session=self.run_id,
                source=source,
                call_id=call_id,
                name=name or _first_word(action) or "bash",
                input={"command": action} if arguments is None else arguments,
            )
        )
        return call_id

    def _submitted_patch(self) -> str | None:
        patch = self.info.get("submission")
        return patch if isinstance(patch, str) and patch.strip() else None

    def _submission(self, submit_at: int | None, submit_call: str | None) -> None:
        """The file changes of `info.submission`, at `submit_at` (after the submit's result)
        when it is known, else after the run's events."""
        patch = self._submitted_patch()
        if patch is None:
            return
        source = self.ref("/info/submission")
        changes: list[Any] = patch_changes(patch, self.run_id, source, submit_call)
        if not changes:
            # What a run that changes no file submits (a capture-the-flag run's flag).
            reason = "the run's submission, which is no patch"
            raw = new_event(
                RawEvent, session=self.run_id, source=source, record=patch, reason=reason
            )
            changes = [raw]
        if submit_at is None:
            self.events.extend(changes)
        else:
            self.events[submit_at:submit_at] = changes

    def _usage(self) -> None:
        stats = self.model_stats
        if stats is None:
            return
        cost = cost_field(stats.get("instance_cost"))
        self.events.append(
            new_event(
                Usage,
                session=self.run_id,
                source=self.ref("/info/model_stats"),
                model=self.model,
                input_tokens=count_field(stats.get("tokens_sent")),
                output_tokens=count_field(stats.get("tokens_received")),
                cost_usd=cost,
                cost_basis="reported" if cost is not None else None,
                requests=_api_calls(stats),
            )
        )

    def _raw(self, pointer: str, record: Any, reason: str) -> None:
        self.events.append(
            new_event(
                RawEvent,
                session=self.run_id,
                source=self.ref(pointer),
                record=record,
                reason=reason,
            )
        )


def _is_history_action(item: Any) -> bool:
    if not isinstance(item, dict) or item.get("is_demo"):
        return False
    kind = item.get("message_type")
    if kind is not None:
        return bool(kind == "action")
    return item.get("role") == "assistant"


def _is_history_observation(item: Record) -> bool:
    """A history item that can answer a call: a `tool` or `user` message, and when it has a
    `message_type`, an `observation` (a `user` one is what the user said)."""
    kind = item.get("message_type")
    return item.get("role") in ("user", "tool") and kind in (None, "observation")


def _history_call_id(item: Record | None) -> str | None:
    if item is None:
        return None
    calls = item.get("tool_calls")
    if isinstance(calls, list) and calls and isinstance(calls[0], dict):
        return text_field(calls[0].get("id"))
    return None


def _history_function(item: Record | None) -> tuple[str | None, Record | None]:
    """The function a function-calling model called (1.x's `tool_calls`): its name and its
    arguments when they are an object that is not empty (given as one, or as its JSON text;
    `submit` takes none, and the command line stands for the call)."""
    calls = mapping(item).get("tool_calls")
    if not isinstance(calls, list) or not calls or not isinstance(calls[0], dict):
        return None, None
    function = mapping(calls[0].get("function"))
    arguments = function.get("arguments")
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            arguments = None
    if not isinstance(arguments, dict) or not arguments:
        arguments = None
    return text_field(function.get("name")), arguments


def _printed_patch(output: str) -> str | None:
    """The patch a submit command printed (a git diff, the terminal's line ends and the
    shell's status lines after it taken off), None when it printed none."""
    text = output.replace("\r\n", "\n")
    start = text.find("diff --git")
    if start < 0:
        return None
    lines = text[start:].split("\n")
    while lines and _STATUS_LINE.fullmatch(lines[-1]):
        lines.pop()
    return "\n".join(lines) + "\n" if lines else None


def _replay_config(value: Any) -> Record:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return {}
    return value if isinstance(value, dict) else {}


_MODEL_STATS_REPR_LIMIT = 4096
"""The longest `model_stats` repr read: a run's figures take a few hundred characters."""


def _model_stats(value: Any) -> Record | None:
    """A run's `model_stats`: the object, or the Python repr of a flat dict of numbers and
    strings that some SWE-agent runs wrote instead (`"{'instance_cost': 0, ...}"`), read as
    a literal, never run; None for anything else, which stays raw."""
    if isinstance(value, dict):
        return value
    if not isinstance(value, str) or len(value) > _MODEL_STATS_REPR_LIMIT:
        return None
    try:
        stats = ast.literal_eval(value.strip())
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    if not isinstance(stats, dict) or not all(
        isinstance(key, str) and _plain_figure(figure) for key, figure in stats.items()
    ):
        return None
    return stats


def _unread_information(
    info: Record,
    model_stats: Record | None,
    read: Collection[str],
    read_within: Mapping[str, Collection[str]],
) -> Record:
    """What a run's `info` holds that no event does: its members but the strings read into
    events (`read`), and of each object named in `read_within` the members not read from it
    (`model_stats` as `_model_stats` read it, also from a Python repr)."""
    rest: Record = {}
    for key, value in info.items():
        if key == "model_stats" and model_stats is not None:
            value = model_stats
        if key in read_within and isinstance(value, dict):
            other = {k: v for k, v in value.items() if k not in read_within[key]}
            if other:
                rest[key] = other
        elif key not in read or not isinstance(value, str):
            rest[key] = value
    return rest


def _plain_figure(value: Any) -> bool:
    """A value JSON holds as it is: a string, a finite number, a boolean or null. An int past
    ±LARGEST_FIGURE is none (a literal reads `0xfff…` into thousands of digits, which no JSON
    reader takes back)."""
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return -LARGEST_FIGURE <= value <= LARGEST_FIGURE
    return value is None or isinstance(value, str | bool)


def _edit_refused(tool: str, observation: str) -> bool:
    """Whether an edit tool said it changed nothing: 0.x's `edit` refuses an edit that brings
    new syntax errors ("Your changes have NOT been applied"), 1.x's `str_replace_editor` an
    `old_str` it did not find once ("No replacement was performed")."""
    if tool == "edit":
        return _EDIT_NOT_APPLIED in observation
    return tool == "str_replace_editor" and observation.lstrip().startswith(_NO_REPLACEMENT)


def _working_dir(state: Any) -> str | None:
    if isinstance(state, str) and len(state) < 100_000:
        try:
            state = json.loads(state)
        except ValueError:
            # SWE-agent 1.0 wrote the state dict's Python repr.
            try:
                state = ast.literal_eval(state.strip())
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                return None
    if isinstance(state, dict):
        return text_field(state.get("working_dir"))
    return None


def _first_word(action: Any) -> str:
    if not isinstance(action, str):
        return ""
    words = action.split(maxsplit=1)
    return words[0] if words else ""


# --- mini-swe-agent ------------------------------------------------------------------------


class _MiniRun:
    """A mini-swe-agent run as events."""

    def __init__(
        self,
        document: _Document,
        session: ParsedSession,
        info: Record,
        messages: list[Any],
        pointer: str,
        title: Any,
    ) -> None:
        self.document = document
        self.session = session
        self.events = session.events
        self.info = info
        self.model_stats = _model_stats(info.get("model_stats"))
        self.messages = messages
        self.pointer = pointer
        self.title = text_field(title)
        self.model = _text_at(info, "config", "model", "model_name")
        self.id = document.session_id
        self.pending: deque[str] = deque()
        self.awaiting_harness_reply = False
        self.seen_task = False
        self.last_call: str | None = None
        self.submit_call: str | None = None
        self.usage_costs = 0
        self.exit_status: str | None = None
        self.exit_ref: SourceRef | None = None
        self.submission_at: int | None = None
        self.submitted: tuple[str, SourceRef] | None = None
        """The submitting command's output and where it is (v1: the last message)."""
        self.seen_responses: set[str] = set()

    def ref(self, index: int) -> SourceRef:
        return self.document.ref(f"{self.pointer}/{index}")

    def read(self) -> None:
        self.events.append(
            new_event(
                SessionStart,
                session=self.id,
                source=self.document.ref("", 1),
                time=self._first_time(),
                harness="mini-swe-agent",
                harness_version=text_field(self.info.get("mini_version")),
                model=self.model,
                cwd=_text_at(self.info, "config", "environment", "cwd"),
                title=self.title,
            )
        )
        self._environment()
        for index, message in enumerate(self.messages):
            if not isinstance(message, dict):
                self._raw(index, message, "message is not an object")
                continue
            self._message(index, message)
        self._submission()
        self._total_cost()
        self._information()
        end_source = self.exit_ref or (
            self.document.ref("/info") if self.pointer else self.document.ref("", 1)
        )
        self.events.append(
            new_event(
                SessionEnd,
                session=self.id,
                source=end_source,
                time=self._last_time(),
                reason=text_field(self.info.get("exit_status")) or self.exit_status,
            )
        )

    def _environment(self) -> None:
        """The environment the run ran in (`info.config`'s `environment`: the container's
        image, the working folder, the variables set; and `environment_type`), kept raw."""
        config = mapping(self.info.get("config"))
        environment = {key: config[key] for key in _MINI_ENVIRONMENT if key in config}
        if environment:
            self._raw_at("/info/config", environment, "the environment the run ran in")

    def _information(self) -> None:
        """What `info` holds that no other event does (the agent's and the model's
        configuration, the model stats' other figures), kept raw in one event."""
        within = {"model_stats": _MINI_MODEL_STATS_READ, "config": _MINI_ENVIRONMENT}
        rest = _unread_information(self.info, self.model_stats, _MINI_INFO_READ, within)
        if rest:
            self._raw_at("/info", rest, "the run's information that no other event holds")

    def _raw_at(self, pointer: str, record: Any, reason: str) -> None:
        source = self.document.ref(pointer)
        event = new_event(RawEvent, session=self.id, source=source, record=record, reason=reason)
        self.events.append(event)

    def _first_time(self) -> str | None:
        for message in self.messages[:3]:
            if isinstance(message, dict):
                found = _message_time(message)
                if found:
                    return found
        return None

    def _last_time(self) -> str | None:
        """The time of the last message that has one (v2's exit message has none)."""
        for message in reversed(self.messages):
            if isinstance(message, dict):
                found = _message_time(message)
                if found:
                    return found
        return None

    def _message(self, index: int, message: Record) -> None:
        self._event(index, message)
        self._usage(index, message)

    def _event(self, index: int, message: Record) -> None:
        role = message.get("role")
        kind = message.get("type")
        if message.get("object") == "response" or kind == "assistant":
            self._response(index, message)
        elif role == "assistant":
            self._assistant(index, message)
        elif role == "system":
            self._raw(index, message, "system prompt")
        elif role == "tool" or kind == "function_call_output":
            self._observation(index, message)
        elif role == "user":
            self._user(index, message)
        elif role == "exit":
            self._exit(index, message)
        elif kind == "function_call":
            self._function_call(index, message)
        elif kind == "reasoning":
            self._reasoning_item(index, message)
        else:
            self._raw(index, message, "message without a known role")

    def _assistant(self, index: int, message: Record) -> None:
        source = self.ref(index)
        time = _message_time(message)
        self.pending.clear()
        texts = _reasoning_texts(message, self.session.dropped)
        for text in texts + _thinking(message.get("thinking_blocks"), self.session.dropped):
            self.events.append(
                new_event(Reasoning, session=self.id, source=source, time=time, text=text)
            )
        content = _content_text(message.get("content"))
        unread: list[Any] = []
        commands = _message_commands(message, content, unread)
        for action in unread:
            self._raw(index, action, "action that is no command")
        text = content
        if commands and not message.get("tool_calls"):
            blocks = list(_ACTION_BLOCK.finditer(content))
            if len(blocks) == 1:
                text = (content[: blocks[0].start()] + content[blocks[0].end() :]).strip()
        if text.strip():
            self.events.append(
                new_event(
                    AgentMessage,
                    session=self.id,
                    source=source,
                    time=time,
                    text=text.strip(),
                    model=self.model,
                )
            )
        self.awaiting_harness_reply = not commands
        for number, (command, call_id) in enumerate(commands):
            self._bash_call(source, time, call_id or f"message-{index}-{number + 1}", command)

    def _response(self, index: int, message: Record) -> None:
        """A Responses API response object: its output items in order."""
        self.pending.clear()
        output = message.get("output")
        items: list[Any] = output if isinstance(output, list) else []
        time = _message_time(message)
        source = self.ref(index)
        for item in items:
            if not isinstance(item, dict):
                self._raw(index, item, "response output item is not an object")
                continue
            kind = item.get("type")
            if kind == "message":
                text = _content_text(item.get("content"))
                if text.strip():
                    self.events.append(
                        new_event(
                            AgentMessage,
                            session=self.id,
                            source=source,
                            time=time,
                            text=text,
                            model=self.model,
                        )
                    )
            elif kind == "function_call":
                self._function_call(index, item, time)
            elif kind == "reasoning":
                self._reasoning_item(index, item, time)
            else:
                self._raw(index, item, "unknown response output item")
        self.awaiting_harness_reply = not self.pending

    def _function_call(self, index: int, item: Record, time: str | None = None) -> None:
        call = text_field(item.get("call_id")) or text_field(item.get("id")) or f"message-{index}"
        arguments = _json_object(item.get("arguments"))
        self.events.append(
            new_event(
                ToolCall,
                session=self.id,
                source=self.ref(index),
                time=time,
                call_id=call,
                name=text_field(item.get("name")) or "bash",
                input=arguments,
            )
        )
        self.pending.append(call)
        self.last_call = call

    def _reasoning_item(self, index: int, item: Record, time: str | None = None) -> None:
        summary = item.get("summary")
        texts = [
            part.get("text", "")
            for part in summary or []
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        ]
        if any(text.strip() for text in texts):
            self.events.append(
                new_event(
                    Reasoning,
                    session=self.id,
                    source=self.ref(index),
                    time=time,
                    text="\n\n".join(texts),
                )
            )
        elif item.get("encrypted_content"):
            self.session.dropped["opaque_reasoning"] += 1

    def _observation(self, index: int, message: Record) -> None:
        wanted = text_field(message.get("tool_call_id")) or text_field(message.get("call_id"))
        if wanted is not None and wanted in self.pending:
            self.pending.remove(wanted)
            call = wanted
        elif self.pending:
            call = self.pending.popleft()
        else:
            call = wanted or f"message-{index}"
        content = message.get("content") if "content" in message else message.get("output")
        self._result(index, message, call, _content_text(content))

    def _user(self, index: int, message: Record) -> None:
        source = self.ref(index)
        time = _message_time(message)
        text = _content_text(message.get("content"))
        extra = _extra(message)
        if self.pending:
            self._result(index, message, self.pending.popleft(), text)
            return
        if extra.get("interrupt_type") in _TYPED_BY_THE_USER:
            self._typed_by_the_user(source, time, text, extra["interrupt_type"])
            return
        commands = _typed_commands(text, extra)
        if commands:
            self._user_commands(index, source, time, commands)
            return
        if "interrupt_type" in extra or (self.awaiting_harness_reply and self.seen_task):
            model_output = extra.get("model_response")
            if not isinstance(model_output, str) or not model_output.strip():
                model_output = _response_reply(extra.get("response"))
            if model_output.strip():
                self.events.append(
                    new_event(
                        AgentMessage,
                        session=self.id,
                        source=source,
                        time=time,
                        text=model_output.strip(),
                        model=self.model,
                    )
                )
            self.events.append(
                new_event(Error, session=self.id, source=source, time=time, message=text)
            )
            self.awaiting_harness_reply = False
            return
        self.seen_task = True
        if not text.strip():
            return  # the empty message v1 adds when a limit ends the run
        self.events.append(
            new_event(UserMessage, session=self.id, source=source, time=time, text=text)
        )

    def _typed_by_the_user(self, source: SourceRef, time: str | None, text: str, kind: str) -> None:
        """What a person typed into interactive mini, in the harness's sentence: a comment
        after an interruption (the interruption, then the comment, unless they typed none), a
        reason for rejecting the commands (their results say they did not run) or a new task:
        the person's words are a user message."""
        prefix = _TYPED_BY_THE_USER[kind]
        words = text[len(prefix) :].strip() if text.startswith(prefix) else ""
        if kind == "UserInterruption" or not words:
            self.events.append(
                new_event(
                    Error, session=self.id, source=source, time=time, message=text, interrupt=True
                )
            )
        if words and words != _NOTHING_TYPED:
            self.events.append(
                new_event(UserMessage, session=self.id, source=source, time=time, text=words)
            )
        self.awaiting_harness_reply = False

    def _user_commands(
        self, index: int, source: SourceRef, time: str | None, commands: list[str]
    ) -> None:
        """Commands a person typed in interactive mini's human mode: each a `bash` call (its
        id saying who made it) that the observation after it answers."""
        self.pending.clear()
        for number, command in enumerate(commands):
            self._bash_call(source, time, f"user-command-{index}-{number + 1}", command)
        self.awaiting_harness_reply = False

    def _bash_call(self, source: SourceRef, time: str | None, call: str, command: str) -> None:
        """A `bash` call, waiting for the observation that answers it."""
        self.events.append(
            new_event(
                ToolCall,
                session=self.id,
                source=source,
                time=time,
                call_id=call,
                name="bash",
                input={"command": command},
            )
        )
        self.pending.append(call)
        self.last_call = call

    def _result(self, index: int, message: Record, call: str, text: str) -> None:
        extra = _extra(message)
        returncode = extra.get("returncode")
        if isinstance(returncode, int):
            ok = returncode == 0
        elif found := _RETURNCODE.match(text):
            # Whether it is 0, from its digits: Python reads no number of over 4,300 (ValueError).
            ok = found.group(1).lstrip("-").strip("0") == ""
        else:
            ok = not extra.get("exception_info") and "timed out and has been killed" not in text
        raw_output = extra.get("raw_output")
        output = raw_output if isinstance(raw_output, str) else _observation_output(text)
        self.events.append(
            new_event(
                ToolResult,
                session=self.id,
                source=self.ref(index),
                time=_message_time(message),
                call_id=call,
                ok=ok,
                output=output,
            )
        )
        self.awaiting_harness_reply = False
        if index == len(self.messages) - 1:
            # v1 answers the submitting command with the submitted output as the last message.
            self.submit_call = call
            self.submission_at = len(self.events)
            self.submitted = output, self.ref(index)

    def _exit(self, index: int, message: Record) -> None:
        extra = _extra(message)
        status = text_field(extra.get("exit_status"))
        if status == "Submitted" and self.pending:
            # v2 ends the run when a command's output starts with the submit marker: the exit
            # message holds the rest of that output (the submission) and answers the command.
            self._result(
                index, message, self.pending.popleft(), _content_text(message.get("content"))
            )
        self.exit_status = status or _content_text(message.get("content"))
        self.exit_ref = self.ref(index)
        if extra.get("exception_str") or extra.get("traceback"):
            self.events.append(
                new_event(
                    Error,
                    session=self.id,
                    source=self.exit_ref,
                    time=_message_time(message),
                    message=_content_text(message.get("content"))
                    or text_field(extra.get("exception_str"))
                    or "",
                )
            )
        if self.submission_at is None:
            self.submission_at = len(self.events)

    def _usage(self, index: int, message: Record) -> None:
        """One usage event for a message that carries its model request's cost or tokens."""
        extra = _extra(message)
        response = extra.get("response")
        response = response if isinstance(response, dict) else {}
        if message.get("object") == "response":
            response = message
        usage = response.get("usage")
        usage = usage if isinstance(usage, dict) else {}
        cost = cost_field(extra.get("cost"))
        if not usage and cost is None:
            return
        request_id = text_field(response.get("id"))
        if request_id is not None:
            if request_id in self.seen_responses:
                return
            self.seen_responses.add(request_id)
        if cost is not None:
            self.usage_costs += 1
        self.events.append(_request_usage(self, index, message, response, usage, cost))

    def _submission(self) -> None:
        """The file changes of the submitted diff: `info.submission`, or (a run saved as its
        bare message list, which has no `info`) the submitting command's output."""
        patch = self.info.get("submission")
        source = self.document.ref("/info/submission")
        if not isinstance(patch, str) and self.submitted is not None:
            patch, source = self.submitted
        if not isinstance(patch, str) or "+++ " not in patch:
            return
        at = self.submission_at
        call = self.submit_call if at is not None and self.submit_call else None
        changes = patch_changes(patch, self.id, source, call)
        if at is None:
            self.events.extend(changes)
        else:
            self.events[at:at] = changes

    def _total_cost(self) -> None:
        """The run's reported cost when no request carried its own."""
        stats = self.model_stats
        if stats is None or self.usage_costs:
            return
        cost = cost_field(stats.get("instance_cost"))
        if cost is None:
            return
        self.events.append(
            new_event(
                Usage,
                session=self.id,
                source=self.document.ref("/info/model_stats"),
                model=self.model,
                cost_usd=cost,
                cost_basis="reported",
                requests=_api_calls(stats),
            )
        )

    def _raw(self, index: int, record: Any, reason: str) -> None:
        self.events.append(
            new_event(
                RawEvent, session=self.id, source=self.ref(index), record=record, reason=reason
            )
        )


def _api_calls(stats: Record) -> int | None:
    """How many requests a run's `model_stats` count (`api_calls`), when it says."""
    return whole_count(stats.get("api_calls"))


# Interactive mini (`InteractiveAgent`) adds what the person typed as an interruption of the
# run, by `extra.interrupt_type`, in a sentence of its own; a comment left empty is this one.
_TYPED_BY_THE_USER = {
    "UserInterruption": "Interrupted by user:",
    "UserRejection": "Commands not executed. The user rejected your commands with the following "
    "message:",
    "UserNewTask": "The user added a new task:",
}
_NOTHING_TYPED = "Temporary interruption caught."
# Human mode (v2): a user message holding the command the person typed, in `extra.actions`.
_USER_COMMAND = "User command:"


def _typed_commands(text: str, extra: Record) -> list[str]:
    """The commands of a human mode message, or none when the message is not one."""
    actions = extra.get("actions")
    if not text.startswith(_USER_COMMAND) or not isinstance(actions, list) or not actions:
        return []
    commands = [action.get("command") for action in actions if isinstance(action, dict)]
    typed = [command for command in commands if isinstance(command, str)]
    return typed if len(typed) == len(actions) else []


def _response_reply(response: Any) -> str:
    """The text of a model's reply that a format error keeps whole (mini-swe-agent 2.4.6 on,
    for tool-calling models): a chat completion's first choice, or a Responses API response's
    message items."""
    if not isinstance(response, dict):
        return ""
    choices = response.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        message = choices[0].get("message")
        return _content_text(message.get("content")) if isinstance(message, dict) else ""
    output = response.get("output")
    items = output if isinstance(output, list) else []
    texts = [
        _content_text(item.get("content"))
        for item in items
        if isinstance(item, dict) and item.get("type") == "message"
    ]
    return "\n\n".join(text for text in texts if text.strip())


def _request_usage(
    run: _MiniRun, index: int, message: Record, response: Record, usage: Record, cost: float | None
) -> Usage:
    prompt = count_field(usage.get("prompt_tokens") or usage.get("input_tokens"))
    output = count_field(usage.get("completion_tokens") or usage.get("output_tokens"))
    details = usage.get("prompt_tokens_details") or usage.get("input_tokens_details")
    cached = count_field(details.get("cached_tokens")) if isinstance(details, dict) else 0
    cache_read = count_field(usage.get("cache_read_input_tokens")) or cached
    cache_write = count_field(usage.get("cache_creation_input_tokens"))
    # Chat-completions `prompt_tokens` count the cached tokens too.
    fresh = max(0, prompt - cache_read - cache_write) if prompt else 0
    return new_event(
        Usage,
        session=run.id,
        source=run.ref(index),
        time=_message_time(message),
        model=text_field(response.get("model")) or run.model,
        input_tokens=fresh,
        output_tokens=output,
        cache_read_tokens=cache_read,
        cache_write_tokens=cache_write,
        cost_usd=cost,
        cost_basis="reported" if cost is not None else None,
    )


def _message_commands(
    message: Record, content: str, unread: list[Any]
) -> list[tuple[str, str | None]]:
    """The commands a response ran: `extra.actions` (v2), `tool_calls`, or the one command
    block of a text response (v1; none when there is not exactly one). An action or a call
    that is not an object, or an action without a command, goes into `unread`."""
    actions = _extra(message).get("actions")
    if isinstance(actions, list) and actions:
        found = []
        for action in actions:
            if isinstance(action, dict) and isinstance(action.get("command"), str):
                found.append((action["command"], text_field(action.get("tool_call_id"))))
            else:
                unread.append(action)
        return found
    calls = message.get("tool_calls")
    if isinstance(calls, list) and calls:
        found = []
        for call in calls:
            if not isinstance(call, dict):
                unread.append(call)
                continue
            function = call.get("function")
            arguments = _json_object(
                function.get("arguments") if isinstance(function, dict) else None
            )
            command = arguments.get("command")
            found.append((command if isinstance(command, str) else "", text_field(call.get("id"))))
        return found
    blocks = _ACTION_BLOCK.findall(content)
    if len(blocks) == 1:
        return [(blocks[0].strip(), None)]
    return []


def _observation_output(text: str) -> str:
    """The command output inside `<output>...</output>` of a rendered observation."""
    if not text.lstrip().startswith("<returncode>"):
        return text
    start = text.find("<output>")
    end = text.rfind("</output>")
    if start == -1 or end < start:
        return text
    body = text[start + len("<output>") : end]
    return body[1:] if body.startswith("\n") else body


def _message_time(message: Record) -> str | None:
    stamp = message.get("timestamp")
    if stamp is None:
        stamp = _extra(message).get("timestamp")
    if isinstance(stamp, bool):
        return None
    if isinstance(stamp, int | float):
        try:
            return datetime.fromtimestamp(stamp, tz=UTC).isoformat()
        except (OverflowError, OSError, ValueError):
            return None
    return stamp if isinstance(stamp, str) else None


# --- small readers -------------------------------------------------------------------------


def _reasoning_texts(message: Record, dropped: Counter[str]) -> list[str]:
    """The readable reasoning of a model's message: litellm's `reasoning_content`, else
    the `reasoning` (and `reasoning_details`) an OpenRouter response carries, on the message
    or in the response mini-swe-agent keeps in `extra.response`; encrypted details are
    dropped and counted."""
    reasoning = message.get("reasoning_content")
    if isinstance(reasoning, str) and reasoning.strip():
        return [reasoning]
    answer = message
    response = (
        message.get("extra", {}).get("response") if isinstance(message.get("extra"), dict) else None
    )
    choices = response.get("choices") if isinstance(response, dict) else None
    own_text = message.get("reasoning")
    own = (isinstance(own_text, str) and own_text.strip()) or message.get("reasoning_details")
    if not own and isinstance(choices, list) and choices:
        first = choices[0].get("message") if isinstance(choices[0], dict) else None
        answer = first if isinstance(first, dict) else message
    details = answer.get("reasoning_details")
    details = [d for d in details if isinstance(d, dict)] if isinstance(details, list) else []
    encrypted = sum(1 for d in details if d.get("type") == "reasoning.encrypted")
    if encrypted:
        dropped["opaque_reasoning"] += encrypted
    reasoning = answer.get("reasoning")
    if isinstance(reasoning, str) and reasoning.strip():
        return [reasoning]
    readable = [
        text
        for text in (d.get("text") or d.get("summary") for d in details)  # reasoning.summary
        if isinstance(text, str) and text.strip()
    ]
    return ["\n\n".join(readable)] if readable else []


def _thinking(blocks: Any, dropped: Counter[str]) -> list[str]:
    """The readable texts of a message's `thinking_blocks`; redacted ones are counted in
    `dropped`."""
    texts = []
    for block in blocks if isinstance(blocks, list) else []:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind in _THINKING_TYPES and isinstance(block.get("thinking"), str):
            if block["thinking"].strip():
                texts.append(block["thinking"])
        elif kind in _OPAQUE_THINKING_TYPES:
            dropped["opaque_reasoning"] += 1
    return texts


def _extra(message: Record) -> Record:
    return mapping(message.get("extra"))


def _content_text(content: Any) -> str:
    """A message content as text: a string, or the text parts of a list of parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for part in content:
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                texts.append(part["text"])
        return "\n".join(texts)
    return json.dumps(content, ensure_ascii=False)


def _json_object(value: Any) -> Record:
    if isinstance(value, dict):
        return value
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except ValueError:
            return {"arguments": value}
        return parsed if isinstance(parsed, dict) else {"arguments": parsed}
    return {}


def _text_at(record: Any, *keys: str) -> str | None:
    for key in keys:
        if not isinstance(record, dict):
            return None
        record = record.get(key)
    return text_field(record)
