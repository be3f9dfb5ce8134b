"""Claude Code session transcripts: `~/.claude/projects/<cwd with separators as ->/<id>.jsonl`.

One JSON object a line, appended as the session runs. The records, by `type`:

* `user`: what went to the model in the user role. `message.content` is the prompt text, or a
  list of `text`/`image` blocks and `tool_result` blocks (the answer to a `tool_use`, with the
  tool's structured output beside it in `toolUseResult`: an Edit's `structuredPatch` and
  `originalFile`, a Write's `type` "create"/"update" and `content`, a Task's `agentId`; an
  Edit's file after it is rebuilt from `originalFile` as the tool makes it, an empty
  `new_string` taking the break of the line its text ends, and diffed whole). A
  Bash call that succeeded (not in the background) and moved files with `mv` or `git mv`
  where its command line leaves no doubt (`shell_moves`) is a rename for each, from the
  folder the record names (`cwd`).
  `isCompactSummary` marks the summary that replaces a compacted conversation, `isMeta` text
  the harness added (command caveats, skill bodies); "[Request interrupted by user…]" is the
  user stopping the agent; `<task-notification>` text (`origin.kind` "task-notification" in
  later builds) is the harness telling the model a background task ended, kept raw, as is
  a message whose `origin.kind` says another session or agent wrote it (`peer`,
  `coordinator`; every other kind is the person's in some way and stays a prompt),
  or that relays, in builds that write no origin, another session's or a teammate's message
  (`<teammate-message `, `<cross-session-message `, "Another Claude session sent a
  message"), and what a shell command
  the user ran in bash mode (`!`) printed (`<bash-stdout>`, `<bash-stderr>`, after the
  `<bash-input>` record, a prompt);
  "Operation stopped by hook: <reason>" answering the prompt just before it is the harness
  saying a UserPromptSubmit hook stopped the turn, an error; a record of nothing but
  `<local-command-stdout>` (and `-stderr`) elements is what a slash command printed, kept raw
  as the `local_command` system records of later builds that hold it are.
* `assistant`: one content block of a model reply (`text`, `thinking`, `redacted_thinking`,
  `tool_use`). A reply with several blocks is written as several records that repeat the same
  `message.id`, `requestId` and `usage`. `isApiErrorMessage` marks an error the harness wrote
  in the model's place, as is a `<synthetic>` reply of text alone saying `API Error…` or
  `Claude AI usage limit reached|<time>`; other text alone of the model `<synthetic>` is the
  harness's too (the "No response requested." a resumed session adds after a conversation
  that ends on a user record), kept raw.
* `system`: harness events by `subtype`: `compact_boundary` (the conversation was compacted;
  the summary follows as a `user` record), `microcompact_boundary` (old tool results were
  cleared from the context, no summary), `api_error` (a retried request), `local_command`
  (a slash command), `turn_duration`, `stop_hook_summary`, informational notices.
* `summary` (a title for the conversation ending at `leafUuid`), `ai-title`, `custom-title`,
  and the session metadata of 2.1 builds: `agent-name`, `agent-color`, `tag`, `mode`,
  `agent-setting` (the agent a session runs as: `--agent`, or a teammate's type; it starts
  the file), `bridge-session` (the remote-control session mirroring this one), and in later
  builds `atis-latch`, `relocated` (the session moved to another folder),
  `content-replacement`, `attribution-snapshot`, `task-summary`, `speculation-accept` and
  `cost-state` (the session's running cost as the harness counts it, its side requests to
  other models included: the last one is the session's reported cost when no request
  follows it, and when it knows every model's cost).
* A headless run's output (`claude -p --output-format stream-json --verbose`, and the Agent
  SDK's messages) writes the same `user`, `assistant` and `system` records without the
  session's keys (`session_id` where a session writes `sessionId`, not the session's id: a
  file may hold other runs of it, a session file the whole; `tool_use_result` for
  `toolUseResult`; its `cwd`, when a GitHub Actions job's checkout, a sandbox's that stands
  for the repository imported into when the paths it named are the repository's; a subagent's
  records inline naming the call that started it in `parent_tool_use_id`), a `system` `init`
  record first (its `claude_code_version` the harness's version, which tells it from other
  tools' streams of the same shape; builds before 2.0 name none, and are told by their
  permission mode beside tools only Claude Code has or a Claude model), and a `result` record at
  the end of each run: its `total_cost_usd` is the run's whole cost as the harness counts it
  (as a `cost-state`'s, when the file holds one run), and a run that failed (`is_error`, a
  subtype other than `success`: `error_max_turns`, `error_during_execution`,
  `error_max_budget_usd`) is an error saying why; the record stays raw beside them (its
  `result` repeats the last message). A reply's records carry its usage as the reply began
  (its output counted as the first tokens streamed); the `result`'s `usage` counts the turn's
  requests whole, and when it counts the same input as the main agent's replies, the output
  beyond theirs is a usage event of no request of its own (`requests` 0). The summary a
  compaction writes is a `user` record marked `isSynthetic` after its `compact_boundary`. The
  pieces of replies it streams (`stream_event`, with `--include-partial-messages`) are
  counted in `dropped.partial_message`: each reply's records follow whole.
  The same records saved as one JSON array (claude-code-action's execution file,
  `claude-execution-output.json`, pretty-printed) are read alike, each from the line its item
  starts on, when the array's first items hold the `init`; so is a CI job's log of a run's
  output and standard error (`[DEBUG] …` lines, each a problem of the import), the run's
  records on lines of their own or as one array on one line.
* `progress` (hook, bash, MCP and subagent progress; `agent_progress` carries a subagent's
  messages while it runs), `attachment` (context the harness attached: hook output, skill
  listings, a prompt queued while the agent worked), `queue-operation` (a `remove` of reason
  `absorbed_mid_turn` holds a prompt the running turn took in, which the attachment may
  repeat before or after it: one prompt, unless it relays a teammate's or another session's
  message as a user record would (`<teammate-message …>`, kept raw); one naming its text
  without a reason is no prompt, which its attachment or its user record delivers; builds up
  to 2.1.42 write only the `enqueue` that holds it and a `remove` naming nothing when the
  turn takes it, and a `dequeue` when it is sent as a prompt of its own, a `popAll` when it
  goes back to the input box), `last-prompt`, `permission-mode`, `pr-link` (a pull request
  the session created or was linked to), `frame-link` (a page the Artifact tool published:
  its `path`, `frameUrl` and `title`), `teleported-from` (the first record of a session
  brought over from Claude Code on the web: `remoteSessionId`, `branch`, `messageCount`;
  alone in the file when nothing followed).
* `file-history-snapshot` and (later 2.1 builds) `file-history-delta`: the backups kept for
  rewinding edits, outside the tree. A snapshot lists every file tracked for the prompt its
  `messageId` names (`snapshot.trackedFileBackups`); a delta adds one file's backup
  (`trackingPath`, `backup`) to the snapshot of `snapshotMessageId`, under the `messageId`
  it was written for.

Rewinds: the records form a tree by `uuid` and `parentUuid` (a compaction boundary's parent
is its `logicalParentUuid`). When the user rewinds the conversation (Esc Esc, `/rewind`, or
editing an earlier prompt), nothing says so: the next prompt's `parentUuid` names an earlier
record, and the messages written since that record are a branch the conversation left. A
prompt whose nearest message above it (through hook progress and system records, and a local
command's records, which hang off the tree beside the messages) is not the last message of
the main conversation starts a `Rewind`; the events of the records written since that
message, but for those the prompt descends from and the file-history snapshots and deltas of
messages that stay, are `abandoned`, and so are subagents a call on the abandoned branch
started.
A prompt whose records lead to no message goes back to before the first message (a `Rewind`
whose `resumes_after` is null, everything since the first message abandoned but for the
records before it) when they lead to the records the first message hangs from, or to no
parent at all, as the first message's do.
Side chains (`isSidechain`) have trees of their own and a compaction is no rewind, nor is a
prompt whose records lead to a record the file does not hold (a Stop hook's progress), nor a
cleared context: records that lead to a SessionStart hook's progress or output, or to the
`/clear` command's records, written after the first message, or a plan implemented in a
cleared context without a parent ("Implement the following plan:"). Whether "restore code"
was chosen is not written to the session (the backups live in `~/.claude/file-history/`).

Subagents: older versions wrote a subagent's records into the session file itself, marked
`isSidechain`; later ones write each to `agent-<id>.jsonl`, first beside the session file and
now in `<session id>/subagents/` (with `agent-<id>.meta.json` holding its description). Their
events follow the Task/Agent call that started them, after a Subagent event. An
`agent-<id>.jsonl` beside the session file that no call names but whose records are the
session's (2.0 builds warm their Explore and Plan agents with a request when a session starts)
is a subagent no call started, standing where it ran. The agents 2.1
runs on the conversation itself, the compaction (`agent-acompact-<id>`) and a side question
(`agent-aside_question-<id>`), start their file with a copy of every record of the main
conversation (the same uuids) before their own prompt and answer: the copy is left out and
counted in `dropped.copied_history`, as its requests were the main conversation's. So is
the copy `/branch` starts a new session's file with: every message of the conversation it
branched from, same uuids and times, under the new session's id, each naming where it came
from (`forkedFrom`: that session's id and the message's uuid there); and the copy
`--resume --fork-session` starts one with, the other session's records as they were, its
`sessionId` included, in a file named by the new session's id, whose own records carry that.

A tool's output too large for the conversation is kept in `<session id>/tool-results/` and the
transcript holds a `<persisted-output>` notice with a 2 KB preview: the result is the file's
whole text when the folder still has it.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from itertools import accumulate, pairwise
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from stet_lsp.core.errors import StetError
from stet_lsp.core.safefs import read_regular
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
from stet_lsp.trajectory.importers import head_records
from stet_lsp.trajectory.importers.base import SNIFF_BYTES, ParsedSession, Problem
from stet_lsp.trajectory.importers.claude_code_changes import (
    backgrounded,
    file_changes,
    tool_of_result,
)
from stet_lsp.trajectory.importers.edits import change_fields
from stet_lsp.trajectory.importers.fields import (
    cost_field,
    mapping,
    sequence,
    text_field,
    whole_count,
)
from stet_lsp.trajectory.importers.files import file_digest, jsonl_records, open_text
from stet_lsp.trajectory.importers.jsondoc import (
    array_records,
    leading_items,
    starts_an_array_of_objects,
)
from stet_lsp.trajectory.importers.qwen_code import is_qwen_record
from stet_lsp.trajectory.importers.shell_moves import moved_paths

FORMAT = "claude-code"

_RECORD_TYPES = frozenset(
    {
        "user",
        "assistant",
        "system",
        "result",
        "summary",
        "progress",
        "attachment",
        "file-history-snapshot",
        "file-history-delta",
        "queue-operation",
        "last-prompt",
        "permission-mode",
        "ai-title",
        "custom-title",
        "agent-name",
        "agent-color",
        "agent-setting",
        "tag",
        "bridge-session",
        "pr-link",
        "teleported-from",
        "mode",
        "worktree-state",
        "frame-link",
        "atis-latch",
        "cost-state",
        "relocated",
        "content-replacement",
        "attribution-snapshot",
        "task-summary",
        "speculation-accept",
    }
)
# A headless run's `init` names the harness's version (other tools' streams of the same shape,
# Amp's, Cursor's agent's, do not); Qwen Code's names its own.
_HEADLESS_VERSION = "claude_code_version"
_QWEN_RUN = "qwen_code_version"
# Tools only Claude Code names so, which an `init` of builds before 2.0 (no version) lists: Amp's
# are lower-case (`edit_file`, `glob`), Cursor's agent lists none.
_OWN_TOOLS = frozenset(
    {
        "Edit",
        "Write",
        "MultiEdit",
        "Glob",
        "LS",
        "TodoWrite",
        "NotebookEdit",
        "WebFetch",
        "WebSearch",
        "ExitPlanMode",
        "BashOutput",
        "KillBash",
        "KillShell",
        "Skill",
        "SlashCommand",
    }
)
# How many lines of a log a headless run's `init` is looked for in (see `_headless_in_log`).
_LOG_LINES = 1000
# A GitHub Actions job's checkout of its repository: `$GITHUB_WORKSPACE`, on GitHub's runners,
# in a job's container and on a self-hosted runner.
_RUNNER_CHECKOUT = re.compile(r"(?:/home/runner/work|/__w|/[^\0]*/_work)/([^/]+)/\1(?=/|$)")
_LEADING_TYPE = re.compile(r'\{\s*"type"\s*:\s*"([a-z-]+)"')
# Keys only Claude Code's records carry next to `type` (other JSONL formats have none of them).
_RECORD_KEYS = (
    "sessionId",
    "parentUuid",
    "uuid",
    "leafUuid",
    "messageId",
    "remoteSessionId",
)

# Records kept as they are, with what they are.
_KEPT_RECORDS = {
    "summary": "conversation title (summary of the conversation ending at leafUuid)",
    "ai-title": "session title the harness generated",
    "custom-title": "session title the user set",
    "agent-name": "agent name",
    "agent-color": "agent color",
    "agent-setting": "agent the session runs as (--agent, or a teammate's agent type)",
    "tag": "session tag",
    "bridge-session": "remote-control bridge session mirroring this one",
    "file-history-snapshot": "file history snapshot (backups for rewinding edits)",
    "file-history-delta": "file history delta (one file's backup for rewinding edits)",
    "queue-operation": "prompt queue operation",
    "last-prompt": "pointer to the last prompt",
    "permission-mode": "permission mode change",
    "pr-link": "pull request the session is linked to",
    "teleported-from": "session teleported from Claude Code on the web",
    "mode": "session mode",
    "worktree-state": "git worktree the session works in (null once it left it)",
    "frame-link": "page the session published (an artifact) and the address it is shown at",
    "atis-latch": "a value the harness keeps for the session across a resume or /branch (atis)",
    "cost-state": "the session's cost so far as the harness counts it, every model's requests "
    "included (the last one is session_end's cost_usd)",
    "relocated": "the session was moved to another working folder (relocatedCwd)",
    "content-replacement": "tool results the model was shown shortened (a preview of output "
    "kept in a file), recorded so that a resumed session shows them so again",
    "attribution-snapshot": "how much of each file the agent wrote, kept to attribute commits",
    "task-summary": "the harness's note of what the session is doing",
    "speculation-accept": "a step the harness ran ahead of time and the user accepted",
    "rate_limit_event": "the account's rate limit status (a headless run's)",
}

_SPAWN_TOOLS = frozenset({"Task", "Agent"})
_INTERRUPTED = "[Request interrupted by user"
# What the harness writes, as a user record answering the prompt just before it, when a
# UserPromptSubmit hook stopped the turn (`continue: false`, and its `stopReason`).
_HOOK_STOPPED = "Operation stopped by hook"
_TASK_NOTIFICATION = "<task-notification>"
# What the harness queues for the model beside the prompts typed while the agent works.
_QUEUED_NOTICES = (_TASK_NOTIFICATION, "<agent-notification>")
# A queued slash command (`/help`, `/model opus`), run by the harness, not sent as typed.
_SLASH_COMMAND = re.compile(r"/[\w:.-]+(?:\s|$)")
# The most prompts followed while queued: a person types a few while the agent works.
_QUEUE_HELD = 256
_SYNTHETIC_MODEL = "<synthetic>"
# Errors earlier builds wrote as a `<synthetic>` reply without `isApiErrorMessage`.
_HARNESS_ERROR = re.compile(r"API Error\b|Claude AI usage limit reached\|\d+$")
_AGENT_ID_MARK = "agentId: "

E = TypeVar("E", bound=EventBase)


class ClaudeCodeImporter:
    name = FORMAT
    label = "Claude Code session JSONL"

    def sniff(self, head: str) -> bool:
        """A JSONL file whose first records are Claude Code's: a known `type` beside one of
        its own keys (sessionId, parentUuid, uuid, leafUuid, messageId, a headless run's
        `claude_code_version`) and no `payload`
        (Codex rollouts wrap everything in one) or `projectHash` (a Gemini CLI session's
        metadata, whose messages may name their sessionId too), and none of Qwen Code's,
        which have Claude Code's keys around a Gemini API message (`is_qwen_record`); or a JSON
        array of a headless run's records (`_is_headless_array`), or such a run in a log that
        holds other lines (`_headless_in_log`)."""
        if starts_an_array_of_objects(head):
            return _is_headless_array(leading_items(head.lstrip("\ufeff")))
        records, cut = head_records(head)
        known = False
        for value in records:
            if isinstance(value, dict) and _is_qwens(value):
                return False  # whatever came before: Qwen's first records may be as Claude's
            if known:
                continue  # read on only for Qwen's
            if not isinstance(value, dict) or "payload" in value or "projectHash" in value:
                return False
            kind = text_field(value.get("type"))
            known = kind in _RECORD_TYPES and (
                any(key in value for key in _RECORD_KEYS)
                or _HEADLESS_VERSION in value
                or _is_headless_init(value)
            )
        if known:
            return True
        if not records and _headless_in_log(head):
            return True
        # A record larger than the sniff window, first or after records of types not known
        # here (a teammate's session starts with `agent-setting`): a message (Claude Code
        # writes its parentUuid first) or a record that starts with its type (a long prompt
        # queued while the agent worked: `{"type":"queue-operation",...,"sessionId":…`).
        if cut is None:
            return False
        start = cut[:8192]
        if start.startswith('{"parentUuid":'):
            return '"sessionId":' in start
        typed = _LEADING_TYPE.match(start)
        return (
            typed is not None
            and typed.group(1) in _RECORD_TYPES
            and any(re.search(f'"{key}"\\s*:', start) for key in _RECORD_KEYS)
        )

    def parse(self, path: Path) -> ParsedSession:
        return _SessionReader(path).read()


IMPORTERS = {FORMAT: ClaudeCodeImporter()}


class _At(NamedTuple):
    """Where and when a record was written, and which agent wrote it."""

    source: SourceRef
    time: str | None
    agent: str | None


@dataclass
class _Spawn:
    """A Task/Agent call: what the subagent it started was told."""

    call_id: str
    prompt: str | None
    description: str | None


@dataclass
class _Transcript:
    """The events of one file (the session or one subagent), before subagents are placed."""

    source: str
    agent: str | None
    events: list[EventBase] = field(default_factory=list)
    records: int = 0
    first_line: int = 1
    last_line: int = 1
    first_time: str | None = None
    last_time: str | None = None
    session_id: str | None = None
    version: str | None = None
    cwd: str | None = None
    branch: str | None = None
    model: str | None = None
    first_prompt: str | None = None
    # The session's cost as its last cost-state record (or a headless run's result) counts it.
    cost_usd: float | None = None
    runs: int = 0  # a headless run's `result` records
    headless: bool = False  # a headless run's output, by its `init`
    uuids: set[str] = field(default_factory=set)
    summaries: list[tuple[str | None, str]] = field(default_factory=list)
    titles: dict[str, str] = field(default_factory=dict)
    call_ids: set[str] = field(default_factory=set)
    spawns: dict[str, _Spawn] = field(default_factory=dict)
    agent_calls: dict[str, str] = field(default_factory=dict)  # subagent id -> call id
    run_calls: dict[str, str] = field(default_factory=dict)  # workflow run id -> call id
    # Set for subagent files: the workflow run folder it is in and its meta.json description.
    run: str | None = None
    description: str | None = None


@dataclass
class _Shared:
    """What the readers of one session's files share."""

    problems: list[Problem] = field(default_factory=list)
    dropped: Counter[str] = field(default_factory=Counter)
    agent_files: dict[str, Path] = field(default_factory=dict)
    folder: Path = Path()
    beside: dict[str, bool] = field(default_factory=dict)  # agent id -> agent-<id>.jsonl exists
    session_folder: Path = Path()  # <session id>/ beside the session file: subagents, results
    persisted: dict[str, Path] = field(default_factory=dict)  # source name -> file read

    def persisted_output(self, preview: str) -> str | None:
        """The whole output a `<persisted-output>` notice previews, from the session's own
        `tool-results/` folder (by the file's name only: the notice's path is where the
        harness's machine kept it); None when it is not there or over PERSISTED_LIMIT."""
        found = _PERSISTED_FILE.search(preview, 0, 4096)
        if found is None:
            return None
        name = re.split(r"[\\/]", found[1].strip())[-1]
        if not _RESULT_FILE.fullmatch(name):
            return None
        file = self.session_folder / _RESULTS / name
        try:
            data = read_regular(file, self.session_folder, PERSISTED_LIMIT + 1)
        except (StetError, OSError):
            return None
        if data is None or len(data) > PERSISTED_LIMIT:
            return None
        self.persisted[file.relative_to(self.folder).as_posix()] = file
        return data.decode("utf-8", "replace")

    def has_own_file(self, agent_id: str) -> bool:
        if agent_id in self.agent_files:
            return True
        if agent_id not in self.beside:
            self.beside[agent_id] = (self.folder / f"agent-{agent_id}.jsonl").is_file()
        return self.beside[agent_id]


class _SessionReader:
    """Reads a session file and the subagent files that belong to it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.shared = _Shared(
            folder=path.parent, session_folder=path.parent / path.name.split(".", 1)[0]
        )
        self.sources: dict[str, Path] = {path.name: path}

    def read(self) -> ParsedSession:
        self._find_subagent_folder_files()
        main = _FileReader(
            self.path.name, None, self.shared, another_session=copied_from_another(self.path)
        ).read(self.path)
        if main.records == 0:
            raise StetError(f"{self.path}: no Claude Code records in it")
        session_id = main.session_id or file_digest(self.path)
        subagents = self._read_subagents(main, session_id)
        events: list[EventBase] = [_session_start(main)]
        events.extend(_place_subagents(main, subagents))
        events.append(
            SessionEnd(
                step=0,
                session=session_id,
                agent=None,
                time=main.last_time,
                source=SourceRef(file=main.source, line=main.last_line),
                cost_usd=main.cost_usd,
            )
        )
        for event in events:
            event.session = session_id
        self.sources.update(sorted(self.shared.persisted.items()))
        return ParsedSession(
            format=FORMAT,
            session_id=session_id,
            events=events,
            problems=self.shared.problems,
            dropped=self.shared.dropped,
            sources=self.sources,
            sandbox_candidate=_runner_checkout(main.cwd) if main.headless else None,
        )

    def _find_subagent_folder_files(self) -> None:
        folder = self.shared.session_folder / "subagents"
        if not folder.is_dir():
            return
        for file in sorted(folder.rglob("agent-*.jsonl")):
            self.shared.agent_files.setdefault(file.name[len("agent-") : -len(".jsonl")], file)

    def _read_subagents(self, main: _Transcript, session_id: str) -> list[_Transcript]:
        """Every subagent file in the session's folder, then the older `agent-<id>.jsonl`
        files beside the session file that a Task call of this session names, then those
        beside it that no call names but whose records are this session's."""
        read: list[_Transcript] = []
        done = set(self.shared.agent_files)
        for agent_id, file in self.shared.agent_files.items():
            self._read_subagent(agent_id, file, read, main.uuids)
        pending = [main, *read]
        while pending:
            transcript = pending.pop()
            for agent_id in transcript.agent_calls:
                if agent_id in done:
                    continue
                done.add(agent_id)
                file = self.path.parent / f"agent-{agent_id}.jsonl"
                if file.is_file() and _first_session_id(file) in (session_id, None):
                    pending.extend(self._read_subagent(agent_id, file, read, main.uuids))
        for agent_id, file in self._unnamed_agent_files(session_id, done):
            self._read_subagent(agent_id, file, read, main.uuids)
        return read

    def _unnamed_agent_files(self, session_id: str, named: set[str]) -> list[tuple[str, Path]]:
        """The `agent-<id>.jsonl` files beside the session file that no call named and whose
        first record is this session's: 2.0 builds warm the cache of their Explore and Plan
        agents with a request of their own when a session starts, and write its answer
        there (requests paid for, so read as subagents no call started)."""
        if self.path.name.startswith("agent-"):
            return []
        found = []
        for file in sorted(self.path.parent.glob("agent-*.jsonl")):
            agent_id = file.name[len("agent-") : -len(".jsonl")]
            if agent_id in named or not file.is_file():
                continue
            if _first_session_id(file) == session_id:
                found.append((agent_id, file))
        return found

    def _read_subagent(
        self, agent_id: str, file: Path, read: list[_Transcript], main_uuids: set[str]
    ) -> list[_Transcript]:
        """Reads one subagent file into `read`; returns it (nothing when it cannot be read).
        The records it holds of the main conversation (by uuid) are a copy, not its own."""
        name = file.relative_to(self.path.parent).as_posix()
        try:
            transcript = _FileReader(name, agent_id, self.shared, main_uuids).read(file)
        except StetError as error:
            self.shared.problems.append(Problem(name, 1, str(error)))
            return []
        self.sources[name] = file
        if file.parent.parent.name == "workflows":
            transcript.run = file.parent.name
        transcript.description = self._meta_description(file, name)
        read.append(transcript)
        return [transcript]

    def _meta_description(self, file: Path, name: str) -> str | None:
        meta = file.with_name(file.name[: -len(".jsonl")] + ".meta.json")
        if not meta.is_file():
            return None
        try:
            with open_text(meta) as stream:
                value = json.loads(stream.read())
        except (ValueError, StetError) as error:
            self.shared.problems.append(Problem(name, 1, f"unreadable {meta.name}: {error}"))
            return None
        return _str(value.get("description")) if isinstance(value, dict) else None


class _FileReader:
    """Translates the records of one file into events."""

    def __init__(
        self,
        source: str,
        agent: str | None,
        shared: _Shared,
        copied: set[str] | None = None,
        another_session: _Copied | None = None,
    ) -> None:
        self.out = _Transcript(source=source, agent=agent)
        self.shared = shared
        # The uuids of the main conversation's records, for a subagent's file: an agent that
        # works on the conversation itself (compaction, a side question) starts its file with
        # a copy of every record of it.
        self.copied = copied or set()
        # For a session's file: whether a record is another session's, copied into it.
        self.another_session = another_session or branched_from
        self.calls: dict[str, tuple[str, dict[str, Any]]] = {}
        self.usage: dict[str, Usage] = {}
        self.sidechain_of: dict[str, str] = {}  # record uuid -> inline sidechain agent id
        self.call_of_record: dict[str, list[str]] = {}  # assistant record uuid -> its calls
        self.started: set[str] = set()  # agents whose Subagent event is out
        self.prompt_uuid: str | None = None  # the main chain's last record, if a prompt
        self.pending_compaction: Compaction | None = None
        self.latest_sidechain: str | None = None
        self.record_cwd: str | None = None  # the folder the record was written in
        self.tree = _Tree()
        # Per event: the uuid of its record, or for a record outside the tree the message
        # it names ("@" and its messageId: a file-history snapshot or delta), else None.
        self.event_keys: list[str | None] = []
        self.record_key: str | None = None
        # Prompts the running turn absorbed: the texts of the queued_command attachments not
        # yet matched by their queue record, and the prompts taken from queue records (their
        # event's index and record) not yet matched by an attachment.
        self.queued_texts: Counter[str] = Counter()
        self.absorbed: dict[str, list[tuple[int, _At, dict[str, Any]]]] = {}
        # The texts queued while the agent worked and not yet taken off the queue, oldest
        # first: what a `remove` that names none took.
        self.waiting: list[str] = []
        # The run of `remove` records naming nothing being read, one drain of the queue:
        # the queue as the drain found it, and for each remove, where it stands, what it
        # took (its place in that queue, its text) and the index of its event.
        self.drain_queue: list[str | None] = []
        self.drain: list[tuple[_At, dict[str, Any], int, str, int]] = []
        # Where the headless run (or turn) the next `result` ends starts in the events.
        self.run_start = 0

    def read(self, path: Path) -> _Transcript:
        problems = self.shared.problems
        with open_text(path) as stream:
            array = starts_an_array_of_objects(stream.read(SNIFF_BYTES))
        items = array_records(path, self.out.source, problems) if array else None
        records = jsonl_records(path, self.out.source, problems) if items is None else items
        for line, value in _runs_unpacked(records):
            if self.out.records == 0:
                self.out.first_line = line
            self.out.records += 1
            self.out.last_line = line
            if self.drain and not (
                line == self.drain[-1][0].source.line + 1 and _names_nothing_removed(value)
            ):
                self._end_drain()
            self._record(line, value)
        if self.drain:
            self._end_drain()
        return self.out

    # -- records ---------------------------------------------------------------------------

    def _record(self, line: int, record: Any) -> None:
        source = SourceRef(file=self.out.source, line=line)
        if not isinstance(record, dict):
            self._emit(
                RawEvent,
                _At(source, None, self.out.agent),
                record=record,
                reason="not a JSON object",
            )
            return
        time = _str(record.get("timestamp"))
        kind = record.get("type")
        uuid = record.get("uuid")
        if isinstance(uuid, str) and uuid in self.copied:
            self.shared.dropped["copied_history"] += 1
            return
        if self.out.agent is None and self.another_session(record):
            # The copy of a conversation a branched or forked session's file starts with: its
            # messages are the other session's. Only `/branch`'s copies carry the new id.
            if branched_from(record):
                self.out.session_id = _str(record.get("sessionId")) or self.out.session_id
            self.shared.dropped["copied_history"] += 1
            return
        repeated = (
            kind in ("user", "assistant") and isinstance(uuid, str) and uuid in self.out.uuids
        )
        self._note_metadata(record, time)
        if repeated:
            # A resumed session writes its last message again, under the new session's id:
            # read twice, its tool result would answer one call twice.
            self.shared.dropped["repeated_message"] += 1
            return
        agent = self.out.agent
        sidechain = record.get("isSidechain") is True
        message_id = _str(record.get("messageId"))
        self.record_key = (
            uuid if isinstance(uuid, str) else ("@" + message_id if message_id else None)
        )
        if agent is None and sidechain:
            agent = self._sidechain_agent(source, time, record)
        elif agent is None and (call_id := _str(record.get("parent_tool_use_id"))):
            agent = self._headless_subagent(source, time, call_id)
        at = _At(source, time, agent)
        if agent is None and isinstance(uuid, str):
            self._place_in_tree(at, uuid, record)
        if not isinstance(kind, str):
            self._emit(RawEvent, at, record=record, reason="record has no type")
        elif kind in ("user", "assistant"):
            self._message(at, record)
        elif kind == "system":
            self._system(at, record)
        elif kind == "progress":
            self._progress(at, record)
        elif kind == "attachment":
            self._attachment(at, record)
        elif kind == "queue-operation":
            self._queue_operation(at, record)
        elif kind == "result":
            self._run_result(at, record)
        elif kind == "stream_event":
            # A piece of a reply as it streamed (`--include-partial-messages`): the reply's
            # own records follow whole.
            self.shared.dropped["partial_message"] += 1
        elif kind in _KEPT_RECORDS:
            self._note_title(kind, record)
            if kind == "cost-state":
                self._note_cost(record)
            self._emit(RawEvent, at, record=record, reason=_KEPT_RECORDS[kind])
        else:
            self._emit(RawEvent, at, record=record, reason=f"unknown record type {kind!r}")
        if agent is None and kind in ("user", "assistant") and isinstance(uuid, str):
            self.tree.ends[uuid] = len(self.out.events)

    def _note_metadata(self, record: dict[str, Any], time: str | None) -> None:
        out = self.out
        if time is not None:
            out.first_time = out.first_time or time
            out.last_time = time
        uuid = record.get("uuid")
        if isinstance(uuid, str):
            out.uuids.add(uuid)
        # The last: a continued conversation starts with records copied from the one before.
        out.session_id = _str(record.get("sessionId")) or out.session_id
        out.version = (
            out.version or _str(record.get("version")) or _str(record.get(_HEADLESS_VERSION))
        )
        self.record_cwd = _str(record.get("cwd")) or self.record_cwd
        out.cwd = out.cwd or self.record_cwd
        # Outside a git repository 2.0 builds write an empty gitBranch.
        out.branch = out.branch or text_field(record.get("gitBranch"))

    def _note_title(self, kind: str, record: dict[str, Any]) -> None:
        if kind == "summary":
            summary = _str(record.get("summary"))
            if summary:
                self.out.summaries.append((_str(record.get("leafUuid")), summary))
            return
        title = _str(record.get("customTitle" if kind == "custom-title" else "aiTitle"))
        if title:
            self.out.titles[kind] = title

    def _note_cost(self, record: dict[str, Any]) -> None:
        """The session's whole cost as the harness last counted it: its running total of every
        request (its side requests to other models, which no assistant record holds, and its
        subagents' included), written again as it grows; none when the record says the cost
        of one of the models is not known to it (`hasUnknownModelCost`), or once a request
        follows it (`_usage`)."""
        known = record.get("hasUnknownModelCost") is not True
        cost = cost_field(record.get("totalCostUSD"))
        self.out.cost_usd = cost if known and cost is not None and cost >= 0 else None

    def _run_result(self, at: _At, record: dict[str, Any]) -> None:
        """The end of a headless run: its whole cost as the harness counts it, as a
        `cost-state`'s (none when the file holds several runs, whose totals each count one,
        or once a request follows it), and an error when the run failed."""
        out = self.out
        out.runs += 1
        cost = cost_field(record.get("total_cost_usd"))
        out.cost_usd = cost if out.runs == 1 and cost is not None and cost >= 0 else None
        subtype = _str(record.get("subtype"))
        if record.get("is_error") is True or (subtype is not None and subtype != "success"):
            self._emit(Error, at, message=_failed_run(record, subtype))
        self._output_not_counted(at, record.get("usage"))
        self._emit(RawEvent, at, record=record, reason="a headless run's result")
        self.run_start = len(self.out.events)

    def _output_not_counted(self, at: _At, totals: Any) -> None:
        """A reply's records in a headless run's output carry its usage as the reply began:
        its output counted as the first tokens streamed. The `result`'s totals (of the turn)
        count the same requests whole: when they count the same input as the main agent's
        replies since the run began, the output they count beyond is a usage event of no
        request of its own (`requests` 0)."""
        if not isinstance(totals, dict):
            return
        replies = [
            event
            for event in self.out.events[self.run_start :]
            if isinstance(event, Usage) and event.agent is None and event.requests == 1
        ]
        if not replies:
            return
        same_input = all(
            _int(totals.get(key)) == sum(getattr(reply, name) for reply in replies)
            for key, name in (
                ("input_tokens", "input_tokens"),
                ("cache_read_input_tokens", "cache_read_tokens"),
                ("cache_creation_input_tokens", "cache_write_tokens"),
            )
        )
        beyond = _int(totals.get("output_tokens")) - sum(reply.output_tokens for reply in replies)
        if same_input and beyond > 0:
            self._emit(Usage, at, model=replies[-1].model, output_tokens=beyond, requests=0)

    def _message(self, at: _At, record: dict[str, Any]) -> None:
        message = record.get("message")
        if not isinstance(message, dict):
            self._emit(RawEvent, at, record=record, reason="message record without a message")
        elif record["type"] == "assistant":
            self._assistant(at, record, message)
        else:
            self._user(at, record, message)

    def _user(self, at: _At, record: dict[str, Any], message: dict[str, Any]) -> None:
        content = message.get("content")
        text = _text_of(content)
        if record.get("isCompactSummary") or (
            # A headless run's summary after its compact_boundary.
            record.get("isSynthetic") is True and self.pending_compaction is not None
        ):
            self._compaction_summary(at, text)
            return
        self.pending_compaction = None
        if at.agent is None and _is_prompt(record) and not record.get("isMeta"):
            self._sent_from_queue(text)
        if record.get("isMeta"):
            reason = "text the harness added to the conversation (isMeta)"
            self._emit(RawEvent, at, record=record, reason=reason)
            return
        if _is_task_notification(record, content):
            reason = "a background task's notification the harness sent the model"
            self._emit(RawEvent, at, record=record, reason=reason)
            return
        if _COMMAND_OUTPUT.fullmatch(text):
            reason = "output of a local command (a slash command the harness ran)"
            self._emit(RawEvent, at, record=record, reason=reason)
            return
        if _SHELL_OUTPUT.fullmatch(text):
            reason = "output of a shell command the user ran in bash mode (!)"
            self._emit(RawEvent, at, record=record, reason=reason)
            return
        relayed = _relayed(record, text) if _is_prompt(record) else None
        if relayed is not None:
            self._emit(RawEvent, at, record=record, reason=relayed)
            return
        if at.agent is None:
            parent = record.get("parentUuid")
            if _stopped_by_hook(text) and parent is not None and parent == self.prompt_uuid:
                self._emit(Error, at, message=text)
                return
            typed = _is_prompt(record) and not text.startswith(_INTERRUPTED)
            self.prompt_uuid = _str(record.get("uuid")) if typed else None
        if isinstance(content, str):
            self._user_text(at, content)
            return
        if not isinstance(content, list):
            self._emit(RawEvent, at, record=record, reason="user message without content")
            return
        results = sum(1 for b in content if isinstance(b, dict) and b.get("type") == "tool_result")
        # A headless run's stream writes it `tool_use_result`.
        structured = record.get("toolUseResult", record.get("tool_use_result"))
        structured = structured if results == 1 else None
        texts: list[str] = []
        for block in content:
            kind = block.get("type") if isinstance(block, dict) else None
            if kind == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
                continue
            if kind in ("image", "document"):
                texts.append(_named_block(block))
                self._count_inline_data([block])
                continue
            self._user_text(at, "\n\n".join(texts))
            texts = []
            if kind == "tool_result":
                self._tool_result(at, block, structured)
            else:
                self._emit(RawEvent, at, record=block, reason="unknown user content block")
        self._user_text(at, "\n\n".join(texts))

    def _user_text(self, at: _At, text: str) -> None:
        if not text:
            return
        if text.startswith(_INTERRUPTED):
            self._emit(Error, at, message=text, interrupt=True)
            return
        if self.out.first_prompt is None:
            self.out.first_prompt = text
        self._emit(UserMessage, at, text=text)

    def _compaction_summary(self, at: _At, summary: str) -> None:
        pending, self.pending_compaction = self.pending_compaction, None
        if pending is not None:
            pending.summary = summary
        else:
            self._emit(Compaction, at, summary=summary)

    def _assistant(self, at: _At, record: dict[str, Any], message: dict[str, Any]) -> None:
        self.pending_compaction = None
        content = message.get("content")
        if record.get("isApiErrorMessage"):
            text = _text_of(content) or _str(record.get("error")) or "API error"
            self._emit(Error, at, message=text)
            return
        model = _str(message.get("model"))
        if model == _SYNTHETIC_MODEL and _only_text(content):
            if _HARNESS_ERROR.match(text := _text_of(content)):
                self._emit(Error, at, message=text)
                return
            reason = "reply the harness wrote in the model's place (no request)"
            self._emit(RawEvent, at, record=record, reason=reason)
            return
        if model and model != _SYNTHETIC_MODEL and self.out.model is None:
            self.out.model = model
        if isinstance(content, str):
            if content:
                self._emit(AgentMessage, at, text=content, model=model)
        elif isinstance(content, list):
            calls = [self._assistant_block(at, block, model) for block in content]
            uuid = _str(record.get("uuid"))
            if uuid:
                self.call_of_record[uuid] = [call for call in calls if call]
        self._usage(at, record, message, model)

    def _assistant_block(self, at: _At, block: Any, model: str | None) -> str | None:
        """Emits one content block of a reply; returns the call id of a Task/Agent call."""
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text" and isinstance(block.get("text"), str):
            text = block["text"]
            if text.strip():
                self._emit(AgentMessage, at, text=text, model=model)
            else:
                self.shared.dropped["empty_text"] += 1  # blank lines only: read, and counted
        elif kind == "thinking" and (_str(block.get("thinking")) or "").strip():
            self._emit(Reasoning, at, text=block["thinking"])
        elif kind in ("thinking", "redacted_thinking"):
            self.shared.dropped["opaque_reasoning"] += 1
        elif kind in ("tool_use", "server_tool_use") and isinstance(block.get("id"), str):
            return self._tool_call(at, block)
        elif isinstance(kind, str) and kind.endswith("_tool_result"):
            call_id = _str(block.get("tool_use_id")) or ""
            output = _result_text(block.get("content"))
            self._count_inline_data(block.get("content"))
            self._emit(ToolResult, at, call_id=call_id, output=output)
            self._unread_result_blocks(at, block.get("content"))
        else:
            self._emit(RawEvent, at, record=block, reason="unknown assistant content block")
        return None

    def _unread_result_blocks(self, at: _At, content: Any) -> None:
        """The blocks of a tool result's content that its text only names by their kind
        (`[search_result]`), each kept raw after the result."""
        for block in content if isinstance(content, list) else ():
            if isinstance(block, dict) and not _is_read_result_block(block):
                reason = "tool result content block of a kind not understood"
                self._emit(RawEvent, at, record=block, reason=reason)

    def _count_inline_data(self, content: Any) -> None:
        """The image and document blocks of content that hold their bytes, which the text
        naming them (`[image]`) leaves out: counted."""
        held = _blocks_holding_data(content)
        if held:
            self.shared.dropped["inline_data"] += held

    def _tool_call(self, at: _At, block: dict[str, Any]) -> str | None:
        call_id: str = block["id"]
        name = _str(block.get("name")) or ""
        tool_input = block.get("input")
        if not isinstance(tool_input, dict):
            tool_input = {} if tool_input is None else {"input": tool_input}
        self.calls[call_id] = (name, tool_input)
        self.out.call_ids.add(call_id)
        self._emit(ToolCall, at, call_id=call_id, name=name, input=tool_input)
        if name not in _SPAWN_TOOLS:
            return None
        prompt = _str(tool_input.get("prompt"))
        description = _str(tool_input.get("description"))
        self.out.spawns[call_id] = _Spawn(call_id, prompt, description)
        return call_id

    def _usage(
        self, at: _At, record: dict[str, Any], message: dict[str, Any], model: str | None
    ) -> None:
        """One Usage event per model request: the records that repeat a request's message id
        (or request id) update the first one's counts to the largest seen."""
        usage = message.get("usage")
        if not isinstance(usage, dict):
            return
        counts = {
            "input_tokens": _int(usage.get("input_tokens")),
            "output_tokens": _int(usage.get("output_tokens")),
            "cache_read_tokens": _int(usage.get("cache_read_input_tokens")),
            "cache_write_tokens": _int(usage.get("cache_creation_input_tokens")),
        }
        cost_usd = cost_field(record.get("costUSD"))
        if cost_usd is not None and cost_usd < 0:
            cost_usd = None
        if not any(counts.values()) and cost_usd is None:
            return
        key = _str(message.get("id")) or _str(record.get("requestId"))
        known = self.usage.get(key) if key else None
        if known is None:
            # A request after the last cost-state: that total leaves it out (a resumed or
            # running session), and the requests' own figures count instead.
            self.out.cost_usd = None
            basis = "reported" if cost_usd is not None else None
            event = self._emit(
                Usage, at, model=model, cost_usd=cost_usd, cost_basis=basis, **counts
            )
            if key:
                self.usage[key] = event
            return
        for name, value in counts.items():
            if value > getattr(known, name):  # most repeats carry the same counts
                setattr(known, name, value)
        if cost_usd is not None:
            known.cost_usd = max(known.cost_usd or 0.0, cost_usd)
            known.cost_basis = "reported"

    # -- tool results and the changes they made --------------------------------------------

    def _tool_result(self, at: _At, block: dict[str, Any], structured: Any) -> None:
        call_id = _str(block.get("tool_use_id")) or ""
        ok = not block.get("is_error")
        output = _result_text(block.get("content"))
        self._count_inline_data(block.get("content"))
        if output.startswith(_PERSISTED):
            output = self.shared.persisted_output(output) or output
        self._emit(ToolResult, at, call_id=call_id, ok=ok, output=output)
        self._unread_result_blocks(at, block.get("content"))
        name, tool_input = self.calls.get(call_id, ("", {}))
        name = name or tool_of_result(structured)
        if name in _SPAWN_TOOLS or (isinstance(structured, dict) and "runId" in structured):
            self._note_spawned(call_id, structured, output)
        if ok and name:
            for change in file_changes(name, tool_input, structured, output):
                self._emit(FileChange, at, call_id=call_id, **change)
        if ok and name == "Bash" and not backgrounded(tool_input, output):
            command = _str(tool_input.get("command")) or ""
            for old, new in moved_paths(command, self.record_cwd):
                change = change_fields(new, "rename", old_path=old)
                self._emit(FileChange, at, call_id=call_id, anchored=True, **change)

    def _note_spawned(self, call_id: str, structured: Any, output: str) -> None:
        """Which subagent (or workflow run) a call started, from its structured result or
        the "agentId: …" line of its output."""
        agent_id = _str(structured.get("agentId")) if isinstance(structured, dict) else None
        if agent_id is None and _AGENT_ID_MARK in output:
            rest = output.split(_AGENT_ID_MARK, 1)[1]
            agent_id = rest.split(None, 1)[0].strip("(),.;") if rest.strip() else None
        if agent_id:
            self.out.agent_calls.setdefault(agent_id, call_id)
        run_id = _str(structured.get("runId")) if isinstance(structured, dict) else None
        if run_id:
            self.out.run_calls.setdefault(run_id, call_id)

    # -- system, progress, attachments -----------------------------------------------------

    def _system(self, at: _At, record: dict[str, Any]) -> None:
        subtype = _str(record.get("subtype"))
        content = _str(record.get("content")) or ""
        if subtype == "init":
            self.run_start = len(self.out.events)
            self.out.headless = self.out.headless or _is_headless_init(record)
        if subtype == "compact_boundary":
            compaction = self._emit(Compaction, at, summary=content or "Conversation compacted")
            self.pending_compaction = compaction
        elif subtype == "microcompact_boundary":
            summary = _microcompaction(content, record.get("microcompactMetadata"))
            self._emit(Compaction, at, summary=summary)
        elif subtype == "api_error":
            self._emit(Error, at, message=_api_error_text(record))
        elif subtype == "local_command" and "<command-name>" in content:
            self._emit(UserMessage, at, text=content)
        elif record.get("level") == "error" and content:
            self._emit(Error, at, message=content)
        else:
            reason = f"harness notice ({subtype or record.get('level') or 'system'})"
            self._emit(RawEvent, at, record=record, reason=reason)

    def _progress(self, at: _At, record: dict[str, Any]) -> None:
        data = record.get("data")
        kind = _str(data.get("type")) if isinstance(data, dict) else None
        if isinstance(data, dict) and kind == "agent_progress":
            self._agent_progress(at, record, data)
            return
        self._emit(RawEvent, at, record=record, reason=f"{kind or 'unknown'} progress")

    def _agent_progress(self, at: _At, record: dict[str, Any], data: dict[str, Any]) -> None:
        """A message of a running subagent. When the subagent has its own file the message is
        there too and this record stays raw; otherwise it is the only copy and is read as the
        subagent's."""
        agent_id = _str(data.get("agentId"))
        call_id = _str(record.get("parentToolUseID"))
        if agent_id and call_id:
            self.out.agent_calls.setdefault(agent_id, call_id)
        nested = data.get("message")
        if (
            not agent_id
            or self.shared.has_own_file(agent_id)
            or not isinstance(nested, dict)
            or nested.get("type") not in ("user", "assistant")
        ):
            self._emit(RawEvent, at, record=record, reason="subagent progress")
            return
        self._start_subagent(at, agent_id, call_id, self.out.spawns.get(call_id or ""))
        time = _str(nested.get("timestamp")) or at.time
        self._message(_At(at.source, time, agent_id), nested)

    def _queue_operation(self, at: _At, record: dict[str, Any]) -> None:
        """A prompt the running turn absorbed (`remove`, reason `absorbed_mid_turn`) is a
        prompt, unless the queued_command attachment that says so too was read already (it
        is written before or after the queue record, or not at all). Builds up to 2.1.42
        write such a `remove` with no content and no reason: it took the prompt queued
        first (`enqueue`) and not yet taken off the queue, a `dequeue` sending it as a
        prompt of its own, a `popAll` back to the input box. A teammate's or another
        session's message taken in so (`<teammate-message …>`) is no prompt, as its user
        record would not be. A task's or agent's notification leaves the queue without a
        record in some builds: a `remove` takes one only when no prompt waits (the turn takes
        typed prompts first), but the removes of one drain follow the queue's order
        (`_end_drain`)."""
        operation = record.get("operation")
        text = _text_of(record.get("content"))
        waiting = self.waiting
        absorbed = record.get("reason") == "absorbed_mid_turn"
        if operation == "enqueue":
            waiting.append(text)
            del waiting[:-_QUEUE_HELD]  # a queue no one takes from costs no more to search
        elif operation == "dequeue" and waiting:
            waiting.pop(0)
        elif operation == "popAll":
            waiting.clear()
        elif operation == "remove" and record.get("content") is None and waiting:
            if not self.drain:
                self.drain_queue = list(waiting)
            typed = [queued for queued in waiting if not _is_queued_notice(queued)]
            text = (typed or waiting)[0]
            waiting.remove(text)
            absorbed = not _SLASH_COMMAND.match(text.lstrip())
            place = self.drain_queue.index(text)
            self.drain_queue[place] = None  # a text queued twice is taken once each time
            self.drain.append((at, record, place, text, len(self.out.events)))
        elif operation == "remove" and text in waiting:
            waiting.remove(text)
        if operation != "remove" or not absorbed or not text.strip() or _is_queued_notice(text):
            self._emit(RawEvent, at, record=record, reason=_KEPT_RECORDS["queue-operation"])
            return
        relayed = _relayed(record, text)
        if self.queued_texts[text] > 0:
            self.queued_texts[text] -= 1
            reason = relayed or "prompt queue operation (the absorbed prompt its attachment holds)"
            self._emit(RawEvent, at, record=record, reason=reason)
        elif relayed is not None:
            self._emit(RawEvent, at, record=record, reason=relayed)
        else:
            self.absorbed.setdefault(text, []).append((len(self.out.events), at, record))
            self._user_text(at, text)

    def _end_drain(self) -> None:
        """Puts what the removes of a drain took (read to its last) in the order the queue
        held it: the drain takes typed prompts and commands before the harness's
        notifications, but writes a `remove` for each entry it took in the queue's order,
        so a prompt taken past a notification queued before it is a later remove's. Each
        remove gave one event; an event moved to another remove takes its place, time and
        record."""
        drain, self.drain = self.drain, []
        if all(earlier[2] < later[2] for earlier, later in pairwise(drain)):
            return
        in_order = sorted(drain, key=lambda removed: removed[2])
        events = self.out.events
        taken = [events[removed[4]] for removed in in_order]  # all read before any is moved
        moved: dict[int, tuple[int, _At, dict[str, Any]]] = {}
        for (at, record, _, _, index), came_from, event in zip(drain, in_order, taken, strict=True):
            place: dict[str, Any] = {"source": at.source, "time": at.time, "agent": at.agent}
            if isinstance(event, RawEvent):
                place["record"] = record
            events[index] = event.model_copy(update=place)
            moved[came_from[4]] = (index, at, record)
        first = min(moved)
        for text in {removed[3] for removed in drain}:  # its prompt, for its attachment
            earlier = self.absorbed.get(text, [])
            back = len(earlier) - 1  # the drain's prompts were the last to be added
            while back >= 0 and earlier[back][0] >= first:
                earlier[back] = moved.get(earlier[back][0], earlier[back])
                back -= 1

    def _sent_from_queue(self, text: str) -> None:
        """A prompt sent as its own (after the turn it was queued in) is off the queue, with
        or without a `dequeue` saying so."""
        sent = next((queued for queued in self.waiting if queued.strip() == text.strip()), None)
        if sent is not None:
            self.waiting.remove(sent)

    def _queued_command(self, at: _At, record: dict[str, Any], attachment: dict[str, Any]) -> bool:
        """A prompt queued while the agent worked: a prompt (unless a queue record gave it
        already); another mode's (a task's notification) stays raw. Whether it is handled."""
        text = _text_of(attachment.get("prompt"))
        earlier = self.absorbed.get(text)
        prompt = attachment.get("commandMode", "prompt") == "prompt" and not _relayed(
            attachment, text
        )
        if not earlier:
            self.queued_texts[text] += 1
            if prompt and text:
                self._user_text(at, text)
                return True
            return False
        index, earlier_at, earlier_record = earlier.pop(0)
        if not prompt:
            # No one typed it: the queue record's prompt was the harness's.
            self.out.events[index] = RawEvent(
                session="",
                agent=earlier_at.agent,
                time=earlier_at.time,
                source=earlier_at.source,
                record=earlier_record,
                reason=_KEPT_RECORDS["queue-operation"],
            )
            return False
        reason = "queued prompt (imported from its queue record)"
        self._emit(RawEvent, at, record=record, reason=reason)
        return True

    def _attachment(self, at: _At, record: dict[str, Any]) -> None:
        attachment = record.get("attachment")
        kind = _str(attachment.get("type")) if isinstance(attachment, dict) else None
        if (
            isinstance(attachment, dict)
            and kind == "queued_command"
            and self._queued_command(at, record, attachment)
        ):
            return
        if isinstance(attachment, dict) and kind in _HOOK_ERRORS:
            self._emit(Error, at, message=_hook_error_text(kind, attachment))
            return
        if isinstance(attachment, dict) and kind == "max_turns_reached":
            limit = _int(attachment.get("maxTurns"))
            said = f" ({limit} turns)" if limit else ""
            # Not `interrupt`: that says the user stopped it.
            self._emit(Error, at, message=f"stopped at its turn limit{said}")
            return
        self._emit(RawEvent, at, record=record, reason=f"attachment ({kind or 'unknown'})")

    # -- subagents written into the session file -------------------------------------------

    def _sidechain_agent(self, source: SourceRef, time: str | None, record: dict[str, Any]) -> str:
        """The subagent an inline sidechain record belongs to: its agentId, else the one its
        parent record belongs to. A prompt whose parent is not a sidechain record starts a new
        one (started by the Task call whose prompt it repeats, or that its parent made); any
        other record with an unknown parent continues the latest one."""
        parent = _str(record.get("parentUuid"))
        agent_id = _str(record.get("agentId"))
        if agent_id is None and parent in self.sidechain_of:
            agent_id = self.sidechain_of[parent or ""]
        if agent_id is None and self.latest_sidechain and not _is_prompt(record):
            agent_id = self.latest_sidechain
        if agent_id is None:
            agent_id = f"sidechain-{len(self.started) + 1}"
        uuid = _str(record.get("uuid"))
        if uuid:
            self.sidechain_of[uuid] = agent_id
        self.latest_sidechain = agent_id
        if agent_id not in self.started:
            spawn = self._spawn_for_sidechain(parent, record)
            call_id = spawn.call_id if spawn else None
            self._start_subagent(_At(source, time, None), agent_id, call_id, spawn)
        return agent_id

    def _headless_subagent(self, source: SourceRef, time: str | None, call_id: str) -> str:
        """The subagent a headless run's record belongs to: the one the call it names
        (`parent_tool_use_id`) started, which the run's stream holds inline."""
        agent_id = f"agent-{call_id}"
        spawn = self.out.spawns.get(call_id)
        self._start_subagent(_At(source, time, None), agent_id, call_id, spawn)
        return agent_id

    def _start_subagent(
        self, at: _At, agent_id: str, call_id: str | None, spawn: _Spawn | None
    ) -> None:
        """The `subagent` event of an agent whose records start here (once), linked to the
        call that started it when it is known."""
        if agent_id in self.started:
            return
        self.started.add(agent_id)
        description = spawn.description if spawn else None
        self._emit(Subagent, at, agent_id=agent_id, call_id=call_id, description=description)
        if call_id:
            self.out.agent_calls.setdefault(agent_id, call_id)

    def _spawn_for_sidechain(self, parent: str | None, record: dict[str, Any]) -> _Spawn | None:
        claimed = set(self.out.agent_calls.values())
        free = [s for s in self.out.spawns.values() if s.call_id not in claimed]
        message = record.get("message")
        prompt = _text_of(message.get("content")) if isinstance(message, dict) else ""
        for spawn in free:
            if prompt and spawn.prompt and spawn.prompt.strip() == prompt.strip():
                return spawn
        parent_calls = self.call_of_record.get(parent or "", [])
        return next((s for s in free if s.call_id in parent_calls), None)

    def _emit(self, event_type: type[E], at: _At, **fields: Any) -> E:
        event = event_type(session="", agent=at.agent, time=at.time, source=at.source, **fields)
        self.out.events.append(event)
        self.event_keys.append(self.record_key)
        return event

    # -- rewinds ---------------------------------------------------------------------------

    def _place_in_tree(self, at: _At, uuid: str, record: dict[str, Any]) -> None:
        """Notes a main-conversation record in the tree; a prompt that branches off before
        the last message starts a Rewind (emitted before the prompt's own events)."""
        tree = self.tree
        parent = _str(record.get("parentUuid"))
        if parent is None and record.get("subtype") == "compact_boundary":
            parent = _str(record.get("logicalParentUuid"))
        kind = record.get("type")
        # A local command's records (`/exit`, `/model`: caveat, command, output) hang beside
        # the messages, as system records do: `claude --continue` after `/exit` goes on from
        # the turn before them.
        message = kind in ("user", "assistant") and not _is_local_command(record)
        rewind = (
            kind == "user"
            and tree.last_message is not None
            and (parent in tree.parent or (parent is None and tree.linked))
            and not record.get("isMeta")
            and not record.get("isCompactSummary")
            and _is_prompt(record)
        )
        tree.linked = tree.linked or parent is not None
        tree.parent[uuid] = parent
        tree.message_above[uuid] = uuid if message else tree.message_above.get(parent or "")
        # Where the records above one that is no message lead, when not to a message.
        if _starts_context(record):
            tree.origin[uuid] = "cleared"
        elif parent is None:
            tree.origin[uuid] = "root"
        elif parent not in tree.parent:
            tree.origin[uuid] = "missing"
        elif parent in tree.origin:
            tree.origin[uuid] = tree.origin[parent]
        if rewind:
            self._rewind(at, uuid, parent, record)
        if message:
            if tree.first_message is None:
                tree.first_message = uuid
            tree.last_message = uuid
            tree.line[uuid] = at.source.line
        elif tree.first_message is None:
            tree.before_first.add(uuid)

    def _rewind(self, at: _At, uuid: str, parent: str | None, record: dict[str, Any]) -> None:
        tree = self.tree
        above = tree.message_above.get(parent) if parent is not None else None
        if above is not None and above == tree.last_message:
            return
        # The records the prompt hangs from up to the message above them: they stay.
        kept = {uuid}
        walking: str | None = parent
        while walking is not None and walking not in kept:
            kept.add(walking)
            if walking == tree.message_above.get(walking):
                break
            walking = tree.parent.get(walking)
        if above is not None:
            start = tree.ends.get(above, len(self.out.events))
            after: SourceRef | None = SourceRef(file=self.out.source, line=tree.line[above])
        else:
            # Records that lead to no message: back to before the first message when they
            # lead to the records the first message hangs from, or end where a conversation
            # starts (no parent), as the first message's do. A Stop hook's progress that hangs
            # from a record the file does not hold is no rewind, nor is a plan implemented in
            # a cleared context, which starts from its SessionStart hooks' progress (whose
            # first has no parent), or without a parent when no hook ran.
            origin = "root" if parent is None else tree.origin.get(parent)
            start_of_first = not kept.isdisjoint(tree.before_first)
            if _starts_context(record) or (
                not start_of_first and (origin != "root" or _is_plan_in_cleared_context(record))
            ):
                return
            # Everything since the first message goes, but for the records before it.
            start, after = 0, None
            kept |= tree.before_first
        self._abandon(start, kept)
        self._emit(Rewind, at, resumes_after=after)
        # The conversation now ends at the message it went back to (a local command's records,
        # which may start the new branch, are no message of it).
        tree.last_message = above

    def _abandon(self, start: int, kept: set[str]) -> None:
        """Marks the events from `start` to now abandoned, but for those of the `kept`
        records and the snapshots of messages that are not abandoned. Runs marked before are
        crossed in one step (only what they kept is looked at again), so that rewinding again
        and again stays linear."""
        tree = self.tree
        events = self.out.events
        end = len(events)
        left: list[int] = []
        named: list[int] = []
        index = start
        while index < end:
            run = tree.runs.pop(index, None)
            if run is not None:
                run_end, run_left = run
                for earlier in run_left:
                    self._abandon_one(earlier, kept, left, named)
                index = run_end
                continue
            self._abandon_one(index, kept, left, named)
            index += 1
        for index in named:
            key = self.event_keys[index] or ""
            if key[1:] in tree.abandoned:
                events[index].abandoned = True
            else:
                left.append(index)
        tree.runs[start] = (end, left)

    def _abandon_one(self, index: int, kept: set[str], left: list[int], named: list[int]) -> None:
        key = self.event_keys[index]
        if key is None or key in kept:
            left.append(index)
        elif key.startswith("@"):
            named.append(index)
        else:
            self.out.events[index].abandoned = True
            self.tree.abandoned.add(key)


# -- placing subagents ---------------------------------------------------------------------


def _place_subagents(main: _Transcript, subagents: list[_Transcript]) -> list[EventBase]:
    """The session's events with each subagent file's events after the call that started it
    (found by the agent id in the call's result, its workflow run, or the prompt it was
    given); a subagent no call started stands where it ran, by the time it started; one a
    call's result names whose records no file holds starts after that call, as one whose
    records a file holds does, with no events."""
    transcripts = [main, *subagents]
    agent_calls: dict[str, str] = {}
    run_calls: dict[str, str] = {}
    spawns: dict[str, _Spawn] = {}
    known_calls: set[str] = set()
    for transcript in transcripts:
        for agent_id, started_by in transcript.agent_calls.items():
            agent_calls.setdefault(agent_id, started_by)
        for run_id, started_by in transcript.run_calls.items():
            run_calls.setdefault(run_id, started_by)
        spawns.update(transcript.spawns)
        known_calls |= transcript.call_ids
    children: dict[str, list[_Transcript]] = {}
    claimed: set[str] = set()
    for subagent in subagents:
        call_id = agent_calls.get(subagent.agent or "")
        if call_id is None and subagent.run:
            call_id = run_calls.get(subagent.run)
        if call_id is None:
            call_id = _call_by_prompt(subagent, spawns, claimed)
        if call_id is not None and call_id in known_calls:
            claimed.add(call_id)
            children.setdefault(call_id, []).append(subagent)
    # A subagent a call's result names whose records no file holds (a background agent
    # launched without a transcript, a subagent file left behind): its start, no events; not
    # for a call that started one already (an inline side chain) or failed.
    running = {subagent.agent for subagent in subagents}
    taken = set(claimed)
    for transcript in transcripts:
        for event in transcript.events:
            if isinstance(event, Subagent):
                running.add(event.agent_id)
                taken.add(event.call_id or "")
            elif isinstance(event, ToolResult) and not event.ok:
                taken.add(event.call_id)
    unrecorded = {
        call_id: agent_id
        for agent_id, call_id in agent_calls.items()
        if agent_id not in running and call_id in known_calls and call_id not in taken
    }
    placer = _Placer(children, spawns, unrecorded)
    placer.place(main)
    unstarted: list[tuple[int, int, str | None]] = []
    for subagent in subagents:
        if id(subagent) in placer.placed:
            continue
        at = len(placer.out)
        source = SourceRef(file=subagent.source, line=subagent.first_line)
        start = _subagent_event(
            subagent.agent or "", None, subagent.description, subagent.first_time, source
        )
        placer.out.append(start)
        placer.place(subagent)
        unstarted.append((at, len(placer.out), subagent.first_time))
    return by_time(placer.out, unstarted)


def by_time(events: list[EventBase], blocks: list[tuple[int, int, str | None]]) -> list[EventBase]:
    """`events` with each block (its first and end index, and when it started), of a subagent
    no call started (such as the compaction or a side question) appended at the end, moved in
    turn to before the first event of the main conversation written after it started, so
    that it stands where it ran. Each block went back over the events one by one, which a
    session of hundreds of such subagents took minutes over."""
    if not blocks:
        return events
    main_end = blocks[0][0]
    if any(_in_main(event) for start, end, _ in blocks for event in events[start:end]):
        # A block holding events of the main conversation moves those after it: in turn.
        out = events[:main_end]
        for start, end, time in blocks:
            at = len(out)
            out.extend(events[start:end])
            _move_by_time(out, at, time)
        return out
    anchors = [index for index in range(main_end) if _in_main(events[index])]
    latest = list(accumulate((events[index].time or "" for index in anchors), max))
    before: dict[int, list[tuple[int, int]]] = {}
    last: list[tuple[int, int]] = []
    for start, end, time in blocks:
        found = len(anchors) if time is None else bisect_right(latest, time)
        (before.setdefault(anchors[found], []) if found < len(anchors) else last).append(
            (start, end)
        )
    out = []
    for index in range(main_end):
        for start, end in before.get(index, ()):
            out.extend(events[start:end])
        out.append(events[index])
    for start, end in last:
        out.extend(events[start:end])
    return out


def _in_main(event: EventBase) -> bool:
    """An event of the main conversation with a time (a subagent's start is none)."""
    return event.agent is None and not isinstance(event, Subagent) and event.time is not None


def _move_by_time(events: list[EventBase], start: int, time: str | None) -> None:
    """Moves the events from `start` on to before the first event of the main conversation
    written after `time`."""
    if time is None:
        return
    for index, event in enumerate(events[:start]):
        if _in_main(event) and (event.time or "") > time:
            block = events[start:]
            del events[start:]
            events[index:index] = block
            return


def _call_by_prompt(
    subagent: _Transcript, spawns: dict[str, _Spawn], claimed: set[str]
) -> str | None:
    """The first unclaimed Task/Agent call whose prompt is the subagent's first message."""
    prompt = (subagent.first_prompt or "").strip()
    if not prompt:
        return None
    for spawn in spawns.values():
        if spawn.call_id not in claimed and spawn.prompt and spawn.prompt.strip() == prompt:
            return spawn.call_id
    return None


@dataclass
class _Tree:
    """The main conversation's records as a tree (side chains apart), for finding rewinds."""

    parent: dict[str, str | None] = field(default_factory=dict)
    # The nearest user or assistant record at or above each record.
    message_above: dict[str, str | None] = field(default_factory=dict)
    line: dict[str, int] = field(default_factory=dict)  # a message record's line
    last_message: str | None = None
    first_message: str | None = None
    # Whether a record so far named its parent: in a file whose records name none (as some
    # tools write them), a prompt without a parent is no rewind to the start.
    linked: bool = False
    before_first: set[str] = field(default_factory=set)  # records before the first message
    # Where the records above a record that is no message end, when not at a message: "root"
    # (no parent), "missing" (a parent the file does not hold), "cleared" (a new context: a
    # SessionStart hook's record, or `/clear`'s).
    origin: dict[str, str] = field(default_factory=dict)
    abandoned: set[str] = field(default_factory=set)
    # Marked runs of events: start -> (end, the indexes in it left unmarked).
    runs: dict[int, tuple[int, list[int]]] = field(default_factory=dict)
    ends: dict[str, int] = field(default_factory=dict)  # events up to a message record's last


class _Placer:
    """Lays out transcripts, each subagent right after the call that started it."""

    def __init__(
        self,
        children: dict[str, list[_Transcript]],
        spawns: dict[str, _Spawn],
        unrecorded: dict[str, str],
    ) -> None:
        self.children = children
        self.spawns = spawns
        self.unrecorded = unrecorded  # call id -> the agent it started, of no records
        self.placed: set[int] = set()
        self.out: list[EventBase] = []

    def place(self, transcript: _Transcript, abandoned: bool = False) -> None:
        """Lays out `transcript`; `abandoned`: the call that started it was on a branch a
        rewind left, and so is everything it did."""
        self.placed.add(id(transcript))
        for event in transcript.events:
            if abandoned:
                event.abandoned = True
            self.out.append(event)
            if not isinstance(event, ToolCall):
                continue
            spawn = self.spawns.get(event.call_id)
            described = spawn.description if spawn else None
            if event.call_id in self.unrecorded:
                agent_id = self.unrecorded.pop(event.call_id)
                self.out.append(
                    _subagent_event(agent_id, event, described, event.time, event.source)
                )
            for child in self.children.pop(event.call_id, []):
                if id(child) in self.placed:
                    continue
                self.out.append(
                    _subagent_event(
                        child.agent or "",
                        event,
                        child.description or described,
                        child.first_time,
                        SourceRef(file=child.source, line=child.first_line),
                    )
                )
                self.place(child, event.abandoned)


def _subagent_event(
    agent_id: str,
    call: ToolCall | None,
    description: str | None,
    time: str | None,
    source: SourceRef,
) -> Subagent:
    """A subagent's start, after the call that started it (None: no call did)."""
    return Subagent(
        step=0,
        session="",
        agent=call.agent if call else None,
        time=time,
        source=source,
        agent_id=agent_id,
        call_id=call.call_id if call else None,
        description=description,
        abandoned=call.abandoned if call else False,
    )


_FAILED_RUNS = {
    "error_max_turns": "the run stopped at its limit of turns",
    "error_max_budget_usd": "the run stopped at its budget",
    "error_during_execution": "the run failed",
    "error_max_structured_output_retries": "the run gave up on its structured output",
}


def _failed_run(record: dict[str, Any], subtype: str | None) -> str:
    """What a failed headless run's `result` record says: its errors (later builds list them),
    else its result's text, else what its subtype means."""
    errors = [error for error in sequence(record.get("errors")) if isinstance(error, str)]
    said = "; ".join(error for error in errors if error.strip()) or (
        _str(record.get("result")) or ""
    )
    meaning = _FAILED_RUNS.get(subtype or "", "the run failed")
    detail = f" ({subtype})" if subtype and subtype != "success" else ""
    return f"{meaning}{detail}: {said}" if said.strip() else f"{meaning}{detail}"


def _is_qwens(record: dict[str, Any]) -> bool:
    """Whether the record is Qwen Code's: a session's, or a headless run's naming its version."""
    return is_qwen_record(record) or _QWEN_RUN in record


def _is_headless_init(record: dict[str, Any]) -> bool:
    """Whether the record is a headless run's `init`: naming the harness's version (2.0 builds
    on) or, in earlier builds', its permission mode beside tools only Claude Code has or a
    Claude model (Factory's Droid lists Claude Code's tools but no permission mode; Cursor's
    agent names its models otherwise); not Qwen Code's."""
    if text_field(record.get("type")) != "system" or record.get("subtype") != "init":
        return False
    if _QWEN_RUN in record:
        return False
    if _HEADLESS_VERSION in record:
        return True
    if "permissionMode" not in record:
        return False
    tools = record.get("tools")
    if isinstance(tools, list) and any(isinstance(t, str) and t in _OWN_TOOLS for t in tools):
        return True
    model = record.get("model")
    return isinstance(model, str) and model.startswith("claude-")


def _runner_checkout(cwd: str | None) -> str | None:
    """The checkout of a GitHub Actions job a headless run worked in (or in a folder of):
    on another machine, a clone of the repository it may be imported into
    (`ParsedSession.sandbox_candidate`, taken when the paths the run named there are the
    repository's)."""
    found = _RUNNER_CHECKOUT.match(cwd or "")
    return found.group(0) if found else None


def _is_headless_array(items: list[Any]) -> bool:
    """Whether the first items of a JSON array are a headless run's records: its `init`
    among them, and none of them Qwen Code's."""
    if any(isinstance(item, dict) and _is_qwens(item) for item in items):
        return False
    return any(isinstance(item, dict) and _is_headless_init(item) for item in items)


def _headless_in_log(head: str) -> bool:
    """Whether a file that starts with lines that are no JSON holds a headless run: a CI
    job's log of its output and standard error (`npm warn …`, `[DEBUG] …` lines), where the
    run's `init` stands on a line of its own, or its records as one array on one line. A
    line inside a Markdown fence is text quoting a run (an aider history holding an edit of
    a test's fixture), not one."""
    fenced = False
    for line in head.splitlines()[:_LOG_LINES]:
        text = line.strip()
        if text.startswith(("```", "~~~")):
            fenced = not fenced
        elif fenced:
            continue
        elif text.startswith("{"):
            try:
                value = json.loads(text)
            except (ValueError, RecursionError):
                continue
            if isinstance(value, dict) and _is_qwens(value):
                return False
            if isinstance(value, dict) and _is_headless_init(value):
                return True
        elif text.startswith("[") and _is_headless_array(leading_items(text)):
            return True
    return False


def _runs_unpacked(records: Iterable[tuple[int, Any]]) -> Iterator[tuple[int, Any]]:
    """The records, a headless run's records saved as one array on one line of a log read
    one by one (each naming that line)."""
    for line, value in records:
        if isinstance(value, list) and _is_headless_array(value[:20]):
            for item in value:
                yield line, item
        else:
            yield line, value


def _session_start(main: _Transcript) -> SessionStart:
    return SessionStart(
        step=0,
        session="",
        agent=None,
        time=main.first_time,
        source=SourceRef(file=main.source, line=main.first_line),
        harness=FORMAT,
        harness_version=main.version,
        model=main.model,
        cwd=main.cwd,
        branch=main.branch,
        title=_title(main),
    )


def _title(main: _Transcript) -> str | None:
    """The title the user set, else the one the harness generated, else the summary of this
    file's conversation (or, when none names a record here, the last summary)."""
    if "custom-title" in main.titles:
        return main.titles["custom-title"]
    if "ai-title" in main.titles:
        return main.titles["ai-title"]
    own = [summary for leaf, summary in main.summaries if leaf in main.uuids]
    if own:
        return own[-1]
    return main.summaries[-1][1] if main.summaries else None


# -- values --------------------------------------------------------------------------------


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _int(value: Any) -> int:
    """A count written as an int, 0 when none (or past what a count can be: `whole_count`)."""
    return whole_count(value) or 0


# What a local command (`/exit`, `/ide`, `/mcp`) prints, which the harness writes as a user
# record of its own: no message the user wrote (a prompt that quotes such output is one).
_COMMAND_OUTPUT = re.compile(
    r"\s*(?:<local-command-(stdout|stderr)>.*?</local-command-\1>\s*)+", re.DOTALL
)
# What a shell command the user ran in bash mode (`!git status`) printed, written as a user
# record of its own after the one holding the command (`<bash-input>`).
_SHELL_OUTPUT = re.compile(r"\s*(?:<bash-(stdout|stderr)>.*?</bash-\1>\s*)+", re.DOTALL)
_LOCAL_COMMAND_TAGS = (
    "<local-command-caveat>",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<command-name>",
    "<command-message>",
)


def _is_local_command(record: dict[str, Any]) -> bool:
    """Whether a user record is one a slash command wrote (the caveat before a local command,
    the command's name, its output) rather than a message the model was sent."""
    message = record.get("message")
    if record.get("type") != "user" or not isinstance(message, dict):
        return False
    return _text_of(message.get("content")).lstrip().startswith(_LOCAL_COMMAND_TAGS)


def _starts_context(record: dict[str, Any]) -> bool:
    """Whether a record is a SessionStart hook's (its progress, or its output attached) or
    the `/clear` command's: a new context starts there (a session, a cleared conversation, or
    a plan implemented in a cleared context)."""
    for key in ("data", "attachment"):
        value = record.get(key)
        if isinstance(value, dict) and value.get("hookEvent") == "SessionStart":
            return True
    message = record.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return _is_local_command(record) and _CLEAR_COMMAND in _text_of(content)


_CLEAR_COMMAND = "<command-name>/clear</command-name>"


# How Claude Code starts a plan's implementation in a cleared context.
_CLEARED_PLAN = "Implement the following plan:"


def _is_plan_in_cleared_context(record: dict[str, Any]) -> bool:
    message = record.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return _text_of(content).lstrip().startswith(_CLEARED_PLAN)


def _is_task_notification(record: dict[str, Any], content: Any) -> bool:
    """Whether a user record is the notice Claude Code sends the model when a background
    task (a command, an agent, a monitor) ends or reports: `<task-notification>` text, its
    `origin.kind` "task-notification" in later builds. No one typed it."""
    origin = record.get("origin")
    if isinstance(origin, dict) and origin.get("kind") == "task-notification":
        return True
    if isinstance(content, list) and not all(
        isinstance(b, dict) and b.get("type") == "text" for b in content
    ):
        return False
    return _text_of(content).lstrip().startswith(_TASK_NOTIFICATION)


# Where a user message came from, as later 2.1 builds write it (`origin.kind`): another
# session or agent (`peer`) and the coordinating agent (`coordinator`) wrote these, not the
# person (`task-notification`, the harness's: `_is_task_notification`). Every other kind is
# the person's in some way (`human`, `channel`, `bridge` from a phone, `sdk`, `composer`, a
# kind of a later build) and stays a prompt.
_RELAYED_ORIGINS = {
    "peer": "a message another Claude Code session or agent sent this one",
    "coordinator": "an instruction the coordinating agent sent (coordinator mode)",
}
# How builds that write no origin relay a message from another session or a teammate.
_RELAYED_TEXTS = (
    "<teammate-message ",
    "<cross-session-message ",
    "Another Claude session sent a message",
)


def _relayed(record: dict[str, Any], text: str) -> str | None:
    """Why a user message (or a queued prompt: its attachment) is no prompt of the person's
    though it reads as one, from its origin or, without one, the text relaying another
    session's or a teammate's message; None when it is a prompt."""
    origin = record.get("origin")
    kind = origin.get("kind") if isinstance(origin, dict) else None
    if isinstance(kind, str):
        return _RELAYED_ORIGINS.get(kind)
    if text.lstrip().startswith(_RELAYED_TEXTS):
        return _RELAYED_ORIGINS["peer"]
    return None


def _names_nothing_removed(record: Any) -> bool:
    """Whether `record` is a `queue-operation` `remove` naming nothing (builds up to 2.1.42)."""
    return (
        isinstance(record, dict)
        and record.get("type") == "queue-operation"
        and record.get("operation") == "remove"
        and record.get("content") is None
    )


def _is_queued_notice(text: str) -> bool:
    """Whether queued text is the harness's notice to the model (a background task or an
    agent ended), which no one typed."""
    return text.lstrip().startswith(_QUEUED_NOTICES)


def _only_text(content: Any) -> bool:
    if isinstance(content, str):
        return True
    return isinstance(content, list) and all(
        isinstance(block, dict) and block.get("type") == "text" for block in content
    )


def _stopped_by_hook(text: str) -> bool:
    return text == _HOOK_STOPPED or text.startswith(_HOOK_STOPPED + ": ")


def _is_prompt(record: dict[str, Any]) -> bool:
    """Whether a record is a user message with text (not tool results): how a subagent's
    conversation starts."""
    message = record.get("message")
    if record.get("type") != "user" or not isinstance(message, dict):
        return False
    content = message.get("content")
    if isinstance(content, list):
        return not any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)
    return isinstance(content, str)


def _text_of(content: Any) -> str:
    """The text of message content: a string, or the text blocks of a list (images and
    documents as a short placeholder)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict) and isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif isinstance(block, dict) and block.get("type") in ("image", "document"):
            parts.append(_named_block(block))
    return "\n\n".join(parts)


def _named_block(block: dict[str, Any]) -> str:
    """An image or document block as the text names it: its kind, and the address of one
    given by URL (`[image: https://…]`) or the id of one uploaded through the Files API
    (`[image: file_011…]`), which, unlike bytes given as data, are kept."""
    source = mapping(block.get("source"))
    url = source.get("url")
    if isinstance(url, str) and url.startswith(("http://", "https://")):
        return f"[{block['type']}: {url}]"
    file_id = source.get("file_id")
    if source.get("type") == "file" and isinstance(file_id, str) and file_id:
        return f"[{block['type']}: {file_id}]"
    return f"[{block['type']}]"


_NAMED_RESULT_BLOCKS = frozenset({"image", "document", "tool_reference"})
_PERSISTED = "<persisted-output>"
_PERSISTED_FILE = re.compile(r"Full output saved to: ([^\n]+)")
_RESULTS = "tool-results"
_RESULT_FILE = re.compile(r"[\w-][\w.-]*")
PERSISTED_LIMIT = 64 << 20
"""The most bytes of a tool's output read from the session's `tool-results/` folder; a larger
output keeps the notice and its preview."""


def _blocks_holding_data(content: Any) -> int:
    """How many image and document blocks of content hold their bytes (`source.data`,
    base64 or text)."""
    if not isinstance(content, list):
        return 0
    return sum(
        1
        for block in content
        if isinstance(block, dict)
        and block.get("type") in ("image", "document")
        and isinstance(block.get("source"), dict)
        and "data" in block["source"]
    )


def _is_read_result_block(block: dict[str, Any]) -> bool:
    """A tool result's block whose text `_result_text` reads: a text, an image or a document
    (named, their bytes counted), a tool reference (by the tool's name)."""
    return isinstance(block.get("text"), str) or block.get("type") in _NAMED_RESULT_BLOCKS


def _result_text(content: Any) -> str:
    """A tool result's content as text: a string, or its blocks one a line (an image as
    "[image]", or with its URL, a tool reference by the tool's name)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return json.dumps(content, ensure_ascii=False)
    parts = []
    for block in content:
        if not isinstance(block, dict):
            parts.append(block if isinstance(block, str) else json.dumps(block))
        elif isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif block.get("type") == "tool_reference":
            parts.append(f"[tool: {block.get('tool_name')}]")
        elif block.get("type") in ("image", "document"):
            parts.append(_named_block(block))
        else:
            parts.append(f"[{block.get('type') or 'block'}]")
    return "\n".join(parts)


# A hook's result that changed the run, by attachment type (2.1 builds): what it did, and
# where its words are. A hook that blocked: a PreToolUse hook refusing a call, a Stop hook
# sending the agent back to work; one that stopped the turn: a PostToolUse hook's `continue:
# false`; one that failed: it exited with an error of its own or could not run.
_HOOK_ERRORS = {
    "hook_blocking_error": ("blocked", "blockingError"),
    "hook_stopped_continuation": ("stopped the turn", "message"),
    "hook_error_during_execution": ("failed", "content"),
}


def _hook_error_text(kind: str, attachment: dict[str, Any]) -> str:
    """The hook, what it did, and the words the agent was given (or the hook's error)."""
    hook = _str(attachment.get("hookName")) or _str(attachment.get("hookEvent")) or "a"
    did, field = _HOOK_ERRORS[kind]
    said = attachment.get(field)
    words = _str(said.get(field)) if isinstance(said, dict) else _str(said)
    return f"{hook} hook {did}: {words}" if words else f"{hook} hook {did}"


def _microcompaction(content: str, metadata: Any) -> str:
    """What a micro-compaction did: `Context microcompacted: 5 tool results cleared, 26741 of
    50745 tokens saved (auto)`."""
    text = content or "Context microcompacted"
    if not isinstance(metadata, dict):
        return text
    cleared = metadata.get("compactedToolIds")
    saved, before = metadata.get("tokensSaved"), metadata.get("preTokens")
    trigger = _str(metadata.get("trigger"))
    parts = []
    if isinstance(cleared, list):
        parts.append(f"{len(cleared)} tool result{'s' if len(cleared) != 1 else ''} cleared")
    if type(saved) is int and type(before) is int:
        parts.append(f"{saved} of {before} tokens saved")
    detail = ", ".join(parts)
    if trigger:
        detail = f"{detail} ({trigger})" if detail else trigger
    return f"{text}: {detail}" if detail else text


def _api_error_text(record: dict[str, Any]) -> str:
    """ "API error 529: overloaded (retry 1 of 10)" from a system api_error record."""
    error = record.get("error")
    status: Any = None
    detail = _str(record.get("content")) or _str(error)
    while isinstance(error, dict):
        status = status or error.get("status")
        detail = _str(error.get("message")) or _str(error.get("code")) or detail
        error = error.get("error") if isinstance(error.get("error"), dict) else error.get("cause")
    text = "API error" + (f" {status}" if status else "") + (f": {detail}" if detail else "")
    attempt, retries = record.get("retryAttempt"), record.get("maxRetries")
    if isinstance(attempt, int):
        text += f" (retry {attempt}" + (f" of {retries})" if isinstance(retries, int) else ")")
    return text


def _first_session_id(path: Path) -> str | None:
    """The sessionId of a file's first record (None when it has none)."""
    try:
        with open_text(path) as stream:
            value = json.loads(stream.readline())
    except (ValueError, StetError):
        return None
    return _str(value.get("sessionId")) if isinstance(value, dict) else None


_Copied = Callable[[dict[str, Any]], bool]
_SESSION_FILE = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_SESSION_ID = re.compile(rb'"sessionId"\s*:\s*"([^"\\]*)"')
_TAIL_BYTES = (64 * 1024, 4 * 1024 * 1024)


def copied_from_another(path: Path) -> _Copied:
    """What tells the records of the session file at `path` that another session's records
    were copied into: `/branch`'s copies name their origin (`forkedFrom`); the copies a
    `--resume --fork-session` starts its file with are the origin's records unchanged, their
    `sessionId` the origin's, where the file is named by the new session's id and its own
    last records carry it. A file whose name is no session id, or whose last records carry
    another id (a resumed session that went on under a new id in the same file), has no
    such copies: nothing in it is taken for one."""
    own = path.name.removesuffix(".jsonl")
    if not _SESSION_FILE.fullmatch(own) or _last_session_id(path) != own:
        return branched_from

    def copied(record: dict[str, Any]) -> bool:
        session = record.get("sessionId")
        return (isinstance(session, str) and session != own) or branched_from(record)

    return copied


def _last_session_id(path: Path) -> str | None:
    """The `sessionId` the file names last, read from its end: a short window, then a long
    one (a record's id comes before its message, which may be longer than the first)."""
    try:
        with path.open("rb") as stream:
            size = stream.seek(0, 2)
            for window in _TAIL_BYTES:
                stream.seek(max(0, size - window))
                found: list[bytes] = _SESSION_ID.findall(stream.read(window))
                if found:
                    return found[-1].decode("utf-8", "replace")
                if window >= size:
                    break
    except OSError:
        return None
    return None


def branched_from(record: dict[str, Any]) -> bool:
    """Whether the record is one of the copies `/branch` writes at the start of the new
    session's file: `forkedFrom` names the session it was copied from (and the message's
    uuid there), under the new session's own id."""
    origin = record.get("forkedFrom")
    if not isinstance(origin, dict):
        return False
    session = _str(origin.get("sessionId"))
    return session is not None and session != record.get("sessionId")
