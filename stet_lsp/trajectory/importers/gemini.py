"""Gemini CLI sessions: `~/.gemini/tmp/<project>/chats/session-<time>-<id>.jsonl` (and
`.json` before April 2026), the older `logs.json` and `/chat save` checkpoints.

A session file starts with its metadata (`sessionId`, `projectHash`, `startTime`,
`lastUpdated`, `summary`, `directories`, `kind`; any other field, a raw event after the
start). The `.json` form is one document holding
`messages`; the `.jsonl` form appends records as the session runs: the metadata line, each
message (written again, whole, each time it changes, so the last copy of an id counts),
`{"$set": {...}}` metadata updates (a `messages` list there re-syncs the history after a
compression or a resume) and `{"$rewindTo": id}` (the user rewound the conversation to
before that message: a Rewind, the events of that message and the ones after it abandoned).
A message has `id`, `timestamp`, `type` and `content` (a string or
Gemini API parts):

* `user`: the prompt (`displayContent` is what the user typed when it differs: the content
  sent, a command's prompt or the files an @ named, is then kept raw after it; inline data's
  bytes are left out, counted in `inline_data`); parts
  holding only `functionResponse`s repeat tool results (counted in `repeated_result`; one
  or two such messages follow a reply whose calls ran); `<session_context>` text is the
  workspace context the harness sends first; `<state_snapshot>` text is the summary a
  compression left.
* `gemini`: a model reply: text (parts of the API's other kinds: the code execution tool's
  `executableCode` a `code_execution` call that its `codeExecutionResult` answers,
  `inlineData` a raw event without its bytes, anything else a raw event; a part's opaque
  `thoughtSignature` left out, counted in `opaque_reasoning`), `thoughts`
  (`subject`, `description`), `tokens` (`input` including `cached`, `output`, `cached`,
  `thoughts`, `tool`, `total`), `model`, and `toolCalls`: `id`, `name`, `args`, `result`
  (functionResponse parts), `status` ("success", "error", "cancelled"...), `resultDisplay`
  (for edits a FileDiff with `originalContent` and `newContent`; for a subagent's call its
  progress: `isSubagentProgress`, `agentName`, `recentActivity`, its last few steps, and
  `state`, "error" or "cancelled" for a subagent that failed, whose call is recorded as a
  success), `agentId` when the call ran a subagent whose session was recorded (from April
  2026). The content may hold the reply's calls as `functionCall` parts too (written from
  the model's turn in the CLI's history), with the model's id or none: a part that repeats
  a recorded call (the same id, or the same name and arguments as a call no part names) is
  that call. A shell command that ran and exited non-zero is a call of status "success" whose
  output ends with the tool's status lines, one of them `Exit Code: N`: its result is
  failed.
* `info`, `warning`: notices the CLI showed; `error`: an error it showed.

A subagent's session is `<session id>/<agent id>.jsonl` beside the main file; its events
follow the call that ran it. A subagent's call without one keeps what its progress showed of
it (`recentActivity`) as a raw event of the subagent. `logs.json` is a list of `{sessionId,
messageId, type, message, timestamp}` prompts; a checkpoint is the model history itself
(`{role, parts}` contents, alone or under `history`): a call there is answered by a
`functionResponse` in the user's next content (failed when it holds an `error`, when a
command's output ends with a non-zero `Exit Code: N`, or when an edit's output says it made
no change: `Failed to edit, 0 occurrences found…`), and an edit that succeeded is the change
its arguments tell (`replace`'s old and new strings, `write_file`'s content).
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
from stet_lsp.trajectory.importers.base import ParsedSession
from stet_lsp.trajectory.importers.diffs import file_diff, hunks_diff
from stet_lsp.trajectory.importers.edits import (
    change_fields,
    edits_from_arguments,
    file_change_fields,
)
from stet_lsp.trajectory.importers.fields import as_text, count_field, mapping, sequence, text_field
from stet_lsp.trajectory.importers.files import file_digest, jsonl_records, open_text
from stet_lsp.trajectory.importers.jsondoc import JsonDocument, leading_members

FORMAT = "gemini-cli"


_HARNESS_CONTEXT = ("<session_context>", "<hook_context>")
_SNAPSHOT = "<state_snapshot>"
# What the CLI sends in the user's turn to make the model go on (after an invalid stream).
_CONTINUE = "System: Please continue."
_FINISHED = frozenset({"success", "error", "cancelled"})
_SUBAGENT_FAILED = frozenset({"error", "cancelled"})
_CANCELLED = "Request cancelled."
"""The info message Gemini CLI records when the user stops a request."""
_WORKSPACE_MARK = "Workspace Directories:**"
_OLD_WORKSPACE_MARK = "I'm currently working in the directory: "

# How Gemini CLI's edit and write tools begin an output that reports no change made.
_EDIT_FAILURES = ("Failed to edit", "Error:", "Error writing", "Error executing")

# The shell tool's status lines after a command's output (`Error:` comes before the exit code),
# Qwen Code's advice after a long command, and the tag later builds wrap the whole output in.
_EXIT_CODE = "Exit Code: "
_STATUS_AFTER_EXIT = (
    "Signal:",
    "Background PIDs:",
    "Process Group PGID:",
    "Note: this foreground command ran for ",
)
_UNTRUSTED_END = "</untrusted_context>"
_EXIT_NUMBER = re.compile(r"-?[0-9]{1,10}")

# The call a reply's `executableCode` part (code the API's own code execution tool ran) is.
CODE_EXECUTION = "code_execution"
_CODE_FAILED = frozenset({"OUTCOME_FAILED", "OUTCOME_DEADLINE_EXCEEDED"})
# The session metadata read: what no event holds is kept raw.
_METADATA_READ = frozenset(
    {"sessionId", "projectHash", "startTime", "lastUpdated", "summary", "directories", "kind"}
)
# The parts of a user message that its text (`parts_text`) or its responses hold.
_USER_PARTS = frozenset({"text", "inlineData", "fileData", "functionResponse"})
# Why a reply's part of another kind the Gemini API defines is kept raw.
_OTHER_PARTS = {
    "inlineData": "inline data in the model's reply (its bytes left out)",
    "fileData": "file in the model's reply",
    "codeExecutionResult": "code execution result without its code",
    "functionResponse": "function response in the model's reply",
}


class GeminiImporter:
    name = FORMAT
    label = "Gemini CLI session JSON"

    def sniff(self, head: str) -> bool:
        """A session (its metadata first: `sessionId` then `projectHash`), a `logs.json`
        list of prompts, or a checkpoint (a list of `{role, parts}` contents, or one under
        `history`)."""
        start = head.lstrip()[:1]
        if start == "{":
            members = leading_members(head)
            if "sessionId" in members and "projectHash" in members:
                return True
            return _is_content(leading_members(head, ("history", 0)))
        if start == "[":
            first = leading_members(head, (0,))
            return _is_content(first) or {"sessionId", "messageId", "type"} <= first.keys()
        return False

    def parse(self, path: Path) -> ParsedSession:
        return _Reader(path).read()


IMPORTERS = {FORMAT: GeminiImporter()}


def _is_subagent_progress(display: Any) -> bool:
    """Whether a call's `resultDisplay` is a subagent's progress (`isSubagentProgress`)."""
    return isinstance(display, dict) and display.get("isSubagentProgress") is True


def _is_content(members: dict[str, Any]) -> bool:
    return "parts" in members and members.get("role") in ("user", "model")


@dataclass
class _Entry:
    """A record of a transcript where it was read; messages are keyed by id."""

    at: SourceRef
    record: Any
    message_id: str | None = None


@dataclass
class _Transcript:
    """One session file read into the order its records mean."""

    name: str
    path: Path
    metadata: dict[str, Any] = field(default_factory=dict)
    entries: list[_Entry] = field(default_factory=list)
    messages: dict[str, _Entry] = field(default_factory=dict)
    form: str = "session"  # or "logs", "checkpoint"

    def add_message(self, at: SourceRef, record: Any, replace: bool) -> None:
        message_id = text_field(record.get("id")) if isinstance(record, dict) else None
        if message_id is None:
            self.entries.append(_Entry(at, record))
        elif message_id not in self.messages:
            entry = _Entry(at, record, message_id)
            self.messages[message_id] = entry
            self.entries.append(entry)
        elif replace:
            self.messages[message_id].at = at
            self.messages[message_id].record = record

    def rewind(self, message_id: str) -> None:
        """The conversation taken back to before `message_id` (before all of it when no
        message has that id, as Gemini CLI reads it): a message written after this with the
        id of one taken back is a new message."""
        ids = list(self.messages)
        for gone in ids[ids.index(message_id) if message_id in ids else 0 :]:
            del self.messages[gone]


@dataclass
class _Call:
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    answered: bool = False


@dataclass
class _Context:
    """Where the events being made go: whose they are and the calls they answer."""

    transcript: _Transcript
    agent: str | None
    calls: dict[str, _Call] = field(default_factory=dict)


class _Reader:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.folder = path.parent
        self.parsed = ParsedSession(format=FORMAT, session_id="")
        self.loaded: set[Path] = set()

    def read(self) -> ParsedSession:
        main = self._transcript(self.path, self.path.name)
        if main is None:
            raise StetError(f"{self.path}: not a Gemini CLI session")
        self.parsed.session_id = self._session_id(main)
        self._start(main)
        self._events(_Context(main, None))
        for sub, agent_id in self._unplaced_subagents(main):
            at = SourceRef(file=sub.name, line=1)
            self.parsed.emit(Subagent, at, None, None, agent_id=agent_id)
            self._events(_Context(sub, agent_id))
        last = self.parsed.events[-1]
        end_time = text_field(main.metadata.get("lastUpdated")) or last.time
        self.parsed.emit(SessionEnd, last.source, end_time, None)
        return self.parsed

    def _session_id(self, main: _Transcript) -> str:
        if main.form == "logs":
            ids = {e.record.get("sessionId") for e in main.entries if isinstance(e.record, dict)}
            if len(ids) == 1 and (only := text_field(ids.pop())):
                return only
        return text_field(main.metadata.get("sessionId")) or file_digest(self.path)

    # -- reading files ----------------------------------------------------------------------

    def _transcript(self, path: Path, name: str) -> _Transcript | None:
        resolved = path.resolve()
        if resolved in self.loaded:
            return None
        self.loaded.add(resolved)
        transcript = _Transcript(name, path)
        with open_text(path) as stream:
            first_line = stream.readline()
        opening = first_line.lstrip()[:1]
        if opening == "{" and _is_jsonl_record(first_line):
            self._read_jsonl(transcript)
        elif opening in ("{", "["):
            if not self._read_document(transcript):
                return None
        else:
            return None
        self.parsed.sources[name] = path
        return transcript

    def _read_jsonl(self, transcript: _Transcript) -> None:
        name = transcript.name
        for line, record in jsonl_records(transcript.path, name, self.parsed.problems):
            at = SourceRef(file=name, line=line)
            if not isinstance(record, dict) or "$rewindTo" in record:
                if isinstance(record, dict) and isinstance(record["$rewindTo"], str):
                    transcript.rewind(record["$rewindTo"])
                transcript.entries.append(_Entry(at, record))
            elif isinstance(record.get("$set"), dict):
                update = record["$set"]
                self._metadata(transcript, update, at, "/$set/messages")
            elif "id" in record and "type" in record:
                transcript.add_message(at, record, replace=True)
            elif "sessionId" in record and "projectHash" in record:
                self._metadata(transcript, record, at, "/messages")
            else:
                transcript.entries.append(_Entry(at, record))

    def _metadata(
        self, transcript: _Transcript, update: dict[str, Any], at: SourceRef, pointer: str
    ) -> None:
        """Metadata, and the messages a metadata record carries: the ones not seen yet join
        the conversation here (a re-synced history repeats the rest, possibly masked)."""
        transcript.metadata.update({k: v for k, v in update.items() if k != "messages"})
        for index, message in enumerate(sequence(update.get("messages"))):
            where = SourceRef(file=at.file, line=at.line, pointer=f"{pointer}/{index}")
            transcript.add_message(where, message, replace=False)

    def _read_document(self, transcript: _Transcript) -> bool:
        name = transcript.name
        document = JsonDocument.read(transcript.path)
        root = document.load(
            {"messages": [None], "history": [None]}
            if document.text.lstrip().startswith("{")
            else [None]
        )
        self.parsed.problems += document.problems(name)
        if isinstance(root, dict) and isinstance(root.get("messages"), list):
            transcript.metadata = {k: v for k, v in root.items() if k != "messages"}
            items, pointer = root["messages"], "/messages"
        elif isinstance(root, dict) and isinstance(root.get("history"), list):
            transcript.form, items, pointer = "checkpoint", root["history"], "/history"
            transcript.metadata = {k: v for k, v in root.items() if k != "history"}
        elif isinstance(root, list):
            first = root[0] if root and isinstance(root[0], dict) else {}
            transcript.form = "logs" if "messageId" in first else "checkpoint"
            items, pointer = root, ""
        else:
            return False
        for index, item in enumerate(items):
            item_pointer = f"{pointer}/{index}"
            at = SourceRef(file=name, line=document.line(item_pointer), pointer=item_pointer)
            if transcript.form == "session":
                transcript.add_message(at, item, replace=True)
            else:
                transcript.entries.append(_Entry(at, item))
        return True

    # -- session start ----------------------------------------------------------------------

    def _start(self, main: _Transcript) -> None:
        metadata = main.metadata
        records = [e.record for e in main.entries if isinstance(e.record, dict)]
        model = next((m for r in records if (m := text_field(r.get("model")))), None)
        directories = [d for d in sequence(metadata.get("directories")) if text_field(d)]
        cwd = directories[0] if directories else _context_directory(records)
        first_time = text_field(metadata.get("startTime")) or next(
            (t for r in records if (t := text_field(r.get("timestamp")))), None
        )
        self.parsed.emit(
            SessionStart,
            SourceRef(file=main.name, line=1),
            first_time,
            None,
            harness=FORMAT,
            model=model,
            cwd=cwd,
            title=text_field(metadata.get("summary")),
        )

    # -- events -----------------------------------------------------------------------------

    def _events(self, context: _Context) -> None:
        transcript = context.transcript
        unread = {k: v for k, v in transcript.metadata.items() if k not in _METADATA_READ}
        if unread:
            # A checkpoint's `authType`, fields of versions newer than this reader.
            at = SourceRef(file=transcript.name, line=1)
            reason = "the session's metadata that no event holds"
            self.parsed.emit(RawEvent, at, None, context.agent, record=unread, reason=reason)
        shown: list[tuple[_Entry, int]] = []  # the messages read, each with its first event
        for entry in transcript.entries:
            record, at = entry.record, entry.at
            first = len(self.parsed.events)
            if transcript.form == "logs":
                self._log_entry(context, record, at)
            elif transcript.form == "checkpoint":
                self._content(context, record, at)
            elif isinstance(record, dict) and isinstance(record.get("$rewindTo"), str):
                self._rewind(context, record["$rewindTo"], at, shown)
            else:
                self._message(context, record, at)
            if entry.message_id is not None:
                shown.append((entry, first))

    def _rewind(
        self, context: _Context, message_id: str, at: SourceRef, shown: list[tuple[_Entry, int]]
    ) -> None:
        """The user took the conversation back to before `message_id`: the events of that
        message and of those after it are on a branch left behind."""
        taken = next(
            (i for i in range(len(shown) - 1, -1, -1) if shown[i][0].message_id == message_id),
            0,
        )
        if taken < len(shown):
            for event in self.parsed.events[shown[taken][1] :]:
                event.abandoned = True
        resumes_after = shown[taken - 1][0].at if taken else None
        del shown[taken:]
        self.parsed.emit(Rewind, at, None, context.agent, resumes_after=resumes_after)

    def _message(self, context: _Context, record: Any, at: SourceRef) -> None:
        agent = context.agent
        if not isinstance(record, dict):
            self.parsed.emit(
                RawEvent, at, None, agent, record=record, reason="record is not a JSON object"
            )
            return
        time = text_field(record.get("timestamp"))
        kind = record.get("type")
        if "$rewindTo" in record:
            reason = "the user rewound the conversation to before this message"
            self.parsed.emit(RawEvent, at, time, agent, record=record, reason=reason)
        elif kind == "user":
            self._user(context, record, at, time)
        elif kind == "gemini":
            self._reply(context, record, at, time)
        elif kind == "error":
            self.parsed.emit(Error, at, time, agent, message=parts_text(record.get("content")))
        elif kind == "info" and parts_text(record.get("content")).strip() == _CANCELLED:
            # The user stopped the request (Esc): an interrupt.
            self.parsed.emit(Error, at, time, agent, message=_CANCELLED, interrupt=True)
        elif kind in ("info", "warning"):
            self.parsed.emit(RawEvent, at, time, agent, record=record, reason=f"{kind} message")
        else:
            reason = "record has no type" if kind is None else f"unknown message type {kind!r}"
            self.parsed.emit(RawEvent, at, time, agent, record=record, reason=reason)

    def _user(
        self, context: _Context, record: dict[str, Any], at: SourceRef, time: str | None
    ) -> None:
        agent = context.agent
        shown = record.get("displayContent")
        sent = parts_text(record.get("content"))
        text = parts_text(shown) if shown is not None else sent
        stripped = text.strip()
        record = self._without_bytes(record)
        if stripped.startswith(_HARNESS_CONTEXT):
            self.parsed.emit(
                RawEvent, at, time, agent, record=record, reason="context the harness sent"
            )
        elif _SNAPSHOT in text:
            self.parsed.emit(Compaction, at, time, agent, summary=text)
        elif _CONTINUE in (stripped, sent.strip()):
            reason = "continuation the harness sent"
            self.parsed.emit(RawEvent, at, time, agent, record=record, reason=reason)
        elif stripped:
            self.parsed.emit(UserMessage, at, time, agent, text=text)
            if shown is not None and sent.strip() and sent.strip() != stripped:
                # What the harness sent for what the user typed: the prompt of a command
                # (`/init`), the files an @ named, read.
                reason = "the prompt as the harness sent it for what the user typed"
                self.parsed.emit(RawEvent, at, time, agent, record=record["content"], reason=reason)
        elif sent.strip():
            # Shown as something else (a tool's output, say): text the harness sent itself.
            reason = "text the harness sent in the user's turn"
            self.parsed.emit(RawEvent, at, time, agent, record=record, reason=reason)
        responses = _function_responses(record.get("content"))
        if not responses and shown is not None:
            responses = _function_responses(shown)
        if not (stripped or sent.strip() or responses):
            reason = "user message without text"
            self.parsed.emit(RawEvent, at, time, agent, record=record, reason=reason)
            return
        for part in content_parts(record.get("content")):
            if not part.keys() & _USER_PARTS:
                reason = "user message part of a kind not understood"
                self.parsed.emit(RawEvent, at, time, agent, record=part, reason=reason)
        for response in responses:
            self._late_response(context, response, at, time)

    def _without_bytes(self, record: dict[str, Any]) -> dict[str, Any]:
        """A user message with the bytes of its inline data (an image an @ named) left out,
        and counted: its text names them (`[inline data: image/png]`)."""
        copy = dict(record)
        for key in ("content", "displayContent"):
            parts = record.get(key)
            if not isinstance(parts, list):
                continue
            kept: list[Any] = []
            for part in parts:
                blob = part.get("inlineData") if isinstance(part, dict) else None
                if isinstance(blob, dict) and "data" in blob:
                    part = {**part, "inlineData": {k: v for k, v in blob.items() if k != "data"}}
                    self.parsed.dropped["inline_data"] += 1
                kept.append(part)
            copy[key] = kept
        return copy

    def _reply(
        self, context: _Context, record: dict[str, Any], at: SourceRef, time: str | None
    ) -> None:
        agent = context.agent
        first = len(self.parsed.events)
        opaque = self.parsed.dropped["opaque_reasoning"]
        model = text_field(record.get("model"))
        parts = content_parts(record.get("content"))
        thoughts = [t for t in sequence(record.get("thoughts")) if isinstance(t, dict)]
        for thought in thoughts:
            text = _thought_text(thought)
            if text:
                self.parsed.emit(
                    Reasoning, at, text_field(thought.get("timestamp")) or time, agent, text=text
                )
        emit_reply(self.parsed, parts, at, time, agent, model, thoughts_given=bool(thoughts))
        calls = sequence(record.get("toolCalls"))
        recorded = {text_field(c.get("id")) for c in calls if isinstance(c, dict)}
        in_content = [part.get("functionCall") for part in parts]
        # A reply's content may hold its calls too (Gemini CLI writes the model's turn from
        # its history over the content), without the id the CLI gave a call the model gave
        # none: a call of the same name and arguments as a recorded one it holds by no id
        # is that call.
        content_ids = {text_field(c.get("id")) for c in in_content if isinstance(c, dict)}
        unmatched = [
            _call_key(c)
            for c in calls
            if isinstance(c, dict) and text_field(c.get("id")) not in content_ids
        ]
        for index, call in enumerate(in_content):
            if not isinstance(call, dict) or text_field(call.get("id")) in recorded:
                continue
            if _call_key(call) in unmatched:
                unmatched.remove(_call_key(call))
                continue
            # Calls only in the content (checkpoints, older files) may have no id.
            call_id = text_field(call.get("id")) or f"{at.pointer or at.line}#{index}"
            self._call(context, {**call, "id": call_id}, at, time)
        for call in calls:
            if not isinstance(call, dict) or not text_field(call.get("id")):
                self.parsed.emit(
                    RawEvent, at, time, agent, record=call, reason="tool call without an id"
                )
            else:
                self._call(context, call, at, time)
        self._usage(record, model, at, time, agent)
        for call in calls:
            if isinstance(call, dict) and text_field(call.get("id")):
                self._outcome(context, call, at, text_field(call.get("timestamp")) or time)
        if len(self.parsed.events) == first and self.parsed.dropped["opaque_reasoning"] == opaque:
            # A reply of opaque reasoning alone is counted, not stored: it has its signature.
            reason = "model reply with nothing readable"
            self.parsed.emit(RawEvent, at, time, agent, record=record, reason=reason)

    def _call(
        self, context: _Context, call: dict[str, Any], at: SourceRef, time: str | None
    ) -> None:
        name = as_text(call.get("name")) or "tool"
        call_id = as_text(call.get("id"))
        arguments = call.get("args")
        arguments = arguments if isinstance(arguments, dict) else {"args": arguments}
        context.calls[call_id] = _Call(name, arguments)
        self.parsed.emit(
            ToolCall, at, time, context.agent, call_id=call_id, name=name, input=arguments
        )

    def _outcome(
        self, context: _Context, call: dict[str, Any], at: SourceRef, time: str | None
    ) -> None:
        """A recorded call's subagent, result and file change."""
        agent, call_id = context.agent, call["id"]
        display = call.get("resultDisplay")
        progress = display if _is_subagent_progress(display) else None
        agent_id = text_field(call.get("agentId"))
        if agent_id or progress is not None:
            description = text_field(mapping(display).get("agentName")) or text_field(
                mapping(call.get("args")).get("agent_name")
            )
            subagent = agent_id or description or context.calls[call_id].name
            self.parsed.emit(
                Subagent,
                at,
                time,
                agent,
                agent_id=subagent,
                call_id=call_id,
                description=description,
            )
            sub = self._subagent_file(context.transcript, agent_id) if agent_id else None
            if sub is not None:
                self._events(_Context(sub, agent_id))
            elif progress is not None and sequence(progress.get("recentActivity")):
                reason = "the subagent's last steps as the CLI showed them (no session of its own)"
                record = progress["recentActivity"]
                self.parsed.emit(RawEvent, at, time, subagent, record=record, reason=reason)
        status = as_text(call.get("status"))
        if status not in _FINISHED:
            return
        output = _result_text(call.get("result"), call_id) or (
            display if isinstance(display, str) else ""
        )
        ok = status == "success" and not command_failed(context.calls[call_id].name, output)
        # A subagent that failed is recorded as a call that succeeded (so that the CLI shows
        # its progress rather than the error): its progress's state tells.
        ok = ok and mapping(progress).get("state") not in _SUBAGENT_FAILED
        context.calls[call_id].answered = True
        self.parsed.emit(ToolResult, at, time, agent, call_id=call_id, ok=ok, output=output)
        if not ok:
            return
        arguments = mapping(call.get("args"))
        if isinstance(display, dict) and "fileDiff" in display:
            fields = file_diff_fields(display, arguments)
            if fields is not None:
                self.parsed.emit(FileChange, at, time, agent, call_id=call_id, **fields)
            return
        # An edit recorded without its FileDiff: the change as its arguments tell it.
        name = context.calls[call_id].name
        for edit in edits_from_arguments(name, arguments, output):
            self.parsed.emit(
                FileChange, at, time, agent, call_id=call_id, **file_change_fields(edit)
            )

    def _late_response(
        self, context: _Context, response: dict[str, Any], at: SourceRef, time: str | None
    ) -> None:
        """A functionResponse in the user role: a copy of a result already taken from the
        call's record, or the only record of the result of a call made in the content."""
        call_id = text_field(response.get("id"))
        if call_id is None:
            # Responses without ids answer the oldest open call of their tool.
            name = response.get("name")
            call_id = next(
                (k for k, c in context.calls.items() if c.name == name and not c.answered), None
            )
        call = context.calls.get(call_id) if call_id else None
        if call is not None and call.answered:
            self.parsed.dropped["repeated_result"] += 1
            return
        if call is None or call_id is None:
            self.parsed.emit(
                RawEvent,
                at,
                time,
                context.agent,
                record=response,
                reason="tool response without a call",
            )
            return
        call.answered = True
        body = response.get("response")
        output = response_text(body)
        ok = not (isinstance(body, dict) and "error" in body) and not command_failed(
            call.name, output
        )
        # No FileDiff recorded: the change as the call's arguments tell it, unless the tool
        # said in its output that it made none (a response without `error` may still hold
        # "Failed to edit, 0 occurrences found…").
        edits = edits_from_arguments(call.name, call.arguments, output) if ok else []
        if edits and output.lstrip().startswith(_EDIT_FAILURES):
            ok, edits = False, []
        self.parsed.emit(ToolResult, at, time, context.agent, call_id=call_id, ok=ok, output=output)
        for edit in edits:
            self.parsed.emit(
                FileChange, at, time, context.agent, call_id=call_id, **file_change_fields(edit)
            )

    def _usage(
        self,
        record: dict[str, Any],
        model: str | None,
        at: SourceRef,
        time: str | None,
        agent: str | None,
    ) -> None:
        tokens = record.get("tokens")
        fields = token_fields(tokens)
        if fields is not None:
            self.parsed.emit(Usage, at, time, agent, model=model, **fields)
        elif tokens is not None and not isinstance(tokens, dict):
            reason = "token counts not understood"
            self.parsed.emit(RawEvent, at, time, agent, record={"tokens": tokens}, reason=reason)

    # -- logs.json and checkpoints ------------------------------------------------------------

    def _log_entry(self, context: _Context, record: Any, at: SourceRef) -> None:
        if not isinstance(record, dict):
            self.parsed.emit(
                RawEvent, at, None, None, record=record, reason="log entry is not a JSON object"
            )
            return
        time = text_field(record.get("timestamp"))
        if record.get("type") == "user" and isinstance(record.get("message"), str):
            event = self.parsed.emit(UserMessage, at, time, None, text=record["message"])
            # logs.json holds the prompts of every session of a project.
            event.session = text_field(record.get("sessionId")) or event.session
        else:
            self.parsed.emit(
                RawEvent, at, time, None, record=record, reason="log entry that is not a prompt"
            )

    def _content(self, context: _Context, record: Any, at: SourceRef) -> None:
        """One content of a checkpoint's model history."""
        if not isinstance(record, dict) or record.get("role") not in ("user", "model"):
            self.parsed.emit(
                RawEvent, at, None, None, record=record, reason="not a user or model content"
            )
            return
        kind = "user" if record["role"] == "user" else "gemini"
        self._message(context, {"type": kind, "content": record.get("parts")}, at)

    # -- subagents ----------------------------------------------------------------------------

    def _subagent_file(self, parent: _Transcript, agent_id: str) -> _Transcript | None:
        session = text_field(parent.metadata.get("sessionId"))
        if session is None:
            return None
        folder = self.folder / _safe(session)
        for suffix in (".jsonl", ".json"):
            candidate = folder / f"{_safe(agent_id)}{suffix}"
            if candidate.is_file():
                name = candidate.relative_to(self.folder).as_posix()
                return self._transcript(candidate, name)
        return None

    def _unplaced_subagents(self, main: _Transcript) -> Iterator[tuple[_Transcript, str]]:
        """Subagent sessions in the session's folder that no recorded call named."""
        session = text_field(main.metadata.get("sessionId"))
        folder = self.folder / _safe(session) if session else None
        if folder is None or not folder.is_dir():
            return
        for candidate in sorted(folder.iterdir()):
            if candidate.suffix in (".jsonl", ".json") and candidate.resolve() not in self.loaded:
                sub = self._transcript(candidate, candidate.relative_to(self.folder).as_posix())
                if sub is not None:
                    yield sub, text_field(sub.metadata.get("sessionId")) or candidate.stem

    # -- helpers ------------------------------------------------------------------------------


def _call_key(call: dict[str, Any]) -> tuple[str | None, str]:
    """A call's name and arguments, to tell a call recorded twice."""
    return text_field(call.get("name")), json.dumps(call.get("args"), sort_keys=True)


def _is_jsonl_record(line: str) -> bool:
    """Whether a file's first line is a whole JSON object that is a JSONL record, not the
    start of a document spread over lines, nor a checkpoint written on one line (a session's
    records never hold a `history`)."""
    try:
        record = json.loads(line)
    except ValueError:
        return False
    return isinstance(record, dict) and not isinstance(record.get("history"), list)


def _safe(part: str) -> str:
    """A file name part as Gemini CLI writes it: anything but letters, digits, - and _ as _."""
    return "".join(c if c.isascii() and (c.isalnum() or c in "-_") else "_" for c in part)


def content_parts(content: Any) -> list[dict[str, Any]]:
    """Content as parts: a string (or another value that is no part) is one text part."""
    if isinstance(content, dict):
        return [content]
    if isinstance(content, list):
        return [p if isinstance(p, dict) else {"text": as_text(p)} for p in content]
    return [] if content is None else [{"text": as_text(content)}]


def _function_responses(content: Any) -> list[dict[str, Any]]:
    parts = content_parts(content)
    return [p["functionResponse"] for p in parts if isinstance(p.get("functionResponse"), dict)]


def parts_text(content: Any) -> str:
    """The text of content: its text parts, and what other parts hold by name."""
    texts = []
    for part in content_parts(content):
        if part.get("thought") is True or "functionResponse" in part:
            continue
        if "text" in part:
            texts.append(as_text(part["text"]))
        elif isinstance(part.get("inlineData"), dict):
            texts.append(f"[inline data: {as_text(part['inlineData'].get('mimeType'))}]")
        elif isinstance(part.get("fileData"), dict):
            texts.append(f"[file: {as_text(part['fileData'].get('fileUri'))}]")
    return "".join(texts)


def emit_reply(
    parsed: ParsedSession,
    parts: list[dict[str, Any]],
    at: SourceRef,
    time: str | None,
    agent: str | None,
    model: str | None,
    thoughts_given: bool = False,
) -> None:
    """A reply's `thought: true` parts as reasoning (unless its thoughts were given apart:
    `thoughts_given`; one without text is opaque, counted), its other text as one message,
    then its parts of other kinds but function calls (the caller's): code the API's code
    execution tool ran as a call that its result answers, and anything else as a raw event
    (inline data without its bytes, counted in `inline_data`). The opaque signature of the
    model's reasoning that a part may carry (`thoughtSignature`) is left out and counted in
    `opaque_reasoning`, once a part."""
    for part in parts:
        if not _is_read_part(part):
            continue  # its signature is counted with the part (_emit_other_part)
        shown_thought = part.get("thought") is True and not thoughts_given
        readable = shown_thought and text_field(part.get("text")) is not None
        if readable:
            parsed.emit(Reasoning, at, time, agent, text=part["text"])
        opaque_thought = shown_thought and not readable
        if opaque_thought or part.get("thoughtSignature") is not None:
            parsed.dropped["opaque_reasoning"] += 1
    text = "".join(
        as_text(p.get("text")) for p in parts if "text" in p and p.get("thought") is not True
    )
    if text.strip():
        parsed.emit(AgentMessage, at, time, agent, text=text, model=model)
    open_code: list[str] = []  # the reply's code not answered yet, by call id
    for index, part in enumerate(parts):
        if _is_read_part(part):
            continue
        call_id = f"{at.pointer or at.line}#{index}"
        _emit_other_part(parsed, part, call_id, open_code, at, time, agent)


def _is_read_part(part: dict[str, Any]) -> bool:
    """A reply's part of text, a thought or a function call (the others are kept whole)."""
    return "text" in part or "functionCall" in part or part.get("thought") is True


def _emit_other_part(
    parsed: ParsedSession,
    part: dict[str, Any],
    fallback_id: str,
    open_code: list[str],
    at: SourceRef,
    time: str | None,
    agent: str | None,
) -> None:
    """A reply's part that is neither text, thought nor function call."""
    code, result = part.get("executableCode"), part.get("codeExecutionResult")
    if isinstance(code, dict):
        call_id = text_field(code.get("id")) or fallback_id
        open_code.append(call_id)
        arguments = {k: v for k, v in code.items() if k != "id"}
        parsed.emit(
            ToolCall, at, time, agent, call_id=call_id, name=CODE_EXECUTION, input=arguments
        )
        return
    if isinstance(result, dict) and open_code:
        # The result follows its code; an id, when the API gives one, names it.
        named = text_field(result.get("id"))
        call_id = named if named in open_code else open_code[-1]
        if named is None or named == call_id:
            open_code.remove(call_id)
            ok = as_text(result.get("outcome")) not in _CODE_FAILED
            output = as_text(result.get("output"))
            parsed.emit(ToolResult, at, time, agent, call_id=call_id, ok=ok, output=output)
            return
    if part.keys() == {"thoughtSignature"}:
        parsed.dropped["opaque_reasoning"] += 1
        return
    record, reason = (
        dict(part),
        _OTHER_PARTS.get(
            next((k for k in _OTHER_PARTS if k in part), ""), "reply part of a kind not understood"
        ),
    )
    if record.pop("thoughtSignature", None) is not None:
        parsed.dropped["opaque_reasoning"] += 1
    blob = part.get("inlineData")
    if isinstance(blob, dict) and "data" in blob:
        record["inlineData"] = {k: v for k, v in blob.items() if k != "data"}
        parsed.dropped["inline_data"] += 1
    parsed.emit(RawEvent, at, time, agent, record=record, reason=reason)


def token_fields(tokens: Any) -> dict[str, int] | None:
    """A Usage's token fields from a token summary (`input`, `output`, `cached`, `thoughts`,
    `tool`); None when it counts nothing. Gemini counts cached tokens inside `input` and
    thinking beside `output`."""
    if not isinstance(tokens, dict):
        return None
    prompt, cached = count_field(tokens.get("input")), count_field(tokens.get("cached"))
    output = count_field(tokens.get("output")) + count_field(tokens.get("thoughts"))
    if not (prompt or output):
        return None
    return {
        "input_tokens": max(prompt - cached, 0) + count_field(tokens.get("tool")),
        "output_tokens": output,
        "cache_read_tokens": min(cached, prompt) if prompt else cached,
    }


def _thought_text(thought: dict[str, Any]) -> str:
    subject = as_text(thought.get("subject")).strip()
    description = as_text(thought.get("description")).strip()
    if subject and description:
        return f"{subject}: {description}"
    return subject or description


def _result_text(result: Any, call_id: str) -> str:
    """A call's output from its result parts. A call of several made together may hold all
    of their responses; its own is the one with its id."""
    parts = content_parts(result) if result is not None else []
    responses = [
        p["functionResponse"] for p in parts if isinstance(p.get("functionResponse"), dict)
    ]
    own = [r for r in responses if r.get("id") == call_id]
    if own or len(responses) == 1:
        texts = [response_text((own or responses)[0].get("response"))]
    else:
        texts = []
    texts.append(parts_text([p for p in parts if "functionResponse" not in p]))
    return "\n".join(t for t in texts if t)


def command_failed(name: str, output: str) -> bool:
    """Whether a `run_shell_command` output ends with a non-zero `Exit Code: N` among the
    status lines the tool writes after the command's output: Gemini CLI (and Qwen Code, its
    fork) records a command that ran and failed as a call that succeeded, and only that line
    says it failed."""
    if name != "run_shell_command":
        return False
    for line in reversed(output.splitlines()):
        line = line.strip()
        if not line or line == _UNTRUSTED_END or line.startswith(_STATUS_AFTER_EXIT):
            continue
        code = line.removeprefix(_EXIT_CODE)
        return code != line and _EXIT_NUMBER.fullmatch(code) is not None and int(code) != 0
    return False


def response_text(body: Any) -> str:
    if isinstance(body, dict) and body.keys() <= {"output", "error"}:
        return "\n".join(as_text(body[k]) for k in ("output", "error") if body.get(k))
    return as_text(body)


def file_diff_fields(display: dict[str, Any], args: dict[str, Any]) -> dict[str, Any] | None:
    """A FileChange's fields from an edit's FileDiff: the whole file before and after when
    recorded, else the diff the CLI showed."""
    path = text_field(display.get("filePath")) or next(
        (p for key in ("file_path", "absolute_path", "path") if (p := text_field(args.get(key)))),
        None,
    )
    path = path or text_field(display.get("fileName"))
    if path is None:
        return None
    before, after = display.get("originalContent"), display.get("newContent")
    created = display.get("isNewFile") is True or ("originalContent" in display and before is None)
    if isinstance(after, str) and (before is None or isinstance(before, str)):
        if before == after:
            return None
        diff = file_diff(path, None if created else before or "", after)
        content: str | None = after
    else:
        diff = hunks_diff(path, _shown_hunks(as_text(display.get("fileDiff"))), created)
        content = None
        if not diff.text:
            return None
    return change_fields(path, "create" if created else "modify", diff, content)


def _shown_hunks(shown: str) -> str:
    """The hunks of the patch the CLI displayed (empty when it shows none)."""
    start = shown.find("\n@@")
    if start < 0 and not shown.startswith("@@"):
        return ""
    return shown[start + 1 :] if start >= 0 else shown


def _context_directory(records: list[dict[str, Any]]) -> str | None:
    """The working directory the harness's first context message names."""
    for record in records[:5]:
        if record.get("type") != "user":
            continue
        text = parts_text(record.get("content"))
        if not text.lstrip().startswith("<session_context>"):
            continue
        at = text.find(_WORKSPACE_MARK)
        if at >= 0:
            first = text[at + len(_WORKSPACE_MARK) :].lstrip("\n").split("\n", 1)[0].strip()
            if first.startswith("- "):
                return first[2:].strip() or None
            return None
        at = text.find(_OLD_WORKSPACE_MARK)
        if at >= 0:
            return text[at + len(_OLD_WORKSPACE_MARK) :].split("\n", 1)[0].strip() or None
    return None
