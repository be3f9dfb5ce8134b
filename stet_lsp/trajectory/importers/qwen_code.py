"""Qwen Code sessions: `~/.qwen/projects/<project>/chats/<session id>.jsonl` (`<project>` the
project's path with everything but ASCII letters and digits as "-"; `$QWEN_RUNTIME_DIR` in
place of `~/.qwen` when set; early versions wrote to `~/.qwen/tmp/<sha256 of the path>/chats/`).

One JSON object a line, appended as the session runs, each with Claude Code's keys (`uuid`,
`parentUuid`, `sessionId`, `timestamp`, `type`, `cwd`, `version`, `gitBranch`) around a Gemini
API message (`message`: `role` and `parts`). The records, by `type`:

* `user`: a prompt; `systemPayload.displayText` is what the user typed (the parts may add a
  hook's context, `<qwen:…>` text). Subtype `mid_turn_user_message` is a prompt the user
  typed while tools ran, and is a prompt too; `notification` (a background task's notice to
  the model), `cron` (a scheduled prompt) and `goal_runtime` are the harness's, kept raw.
* `assistant`: a model reply: text parts, `thought: true` parts (reasoning), `functionCall`
  parts (`id`, `name`, `args`), `model`, and `usageMetadata` (the API's `promptTokenCount`
  including `cachedContentTokenCount`, `candidatesTokenCount`, `thoughtsTokenCount`,
  `toolUsePromptTokenCount`; early versions a summary of `input`, `output`, `cached`,
  `thoughts`, `tool`). Records that share a `uuid` are one message written in pieces: their
  parts add up, and the last usage among them counts, once.
* `tool_result`: `functionResponse` parts (`id`, `name`, `response`: `output` or `error`)
  answering the calls, and `toolCallResult` (`callId`, `status` "success", "error",
  "cancelled"…, `resultDisplay`: for an edit or a write, Gemini CLI's FileDiff with
  `fileDiff`, `fileName`, `originalContent`, `newContent`; when a content passes 16,000
  characters, the diff 50,000 or the three 100,000, each content is cut to 16,000 in the
  middle (`truncatedForSession`) and only the diff is whole, unless the diff passed 50,000:
  then it is a placeholder too (`fileDiffTruncated`), and the change is taken from the
  call's arguments). A `run_shell_command` whose command ran and exited non-zero is a
  "success" there, as in Gemini CLI: the `Exit Code: N` line of its output makes it failed.
* `system`, by `subtype`: `chat_compression` (the history after a compression in
  `systemPayload.compressedHistory`, the summary first; a record with only
  `systemPayload.info` is summarised by its token counts), `rewind` (the user took back turns:
  its `parentUuid` is the record the conversation goes on from), `custom_title` (the title
  `/rename` or the harness set; the last one on the conversation kept names the session),
  `turn_result` (a daemon turn's end: cancelled or failed), and records kept for resuming
  (`ui_telemetry`, `slash_command`, `at_command`, snapshots of attribution, file history,
  artifacts and sources, session settings and notes, goals, branch checkpoints).

A rewind: the events of the records written before it that are not on its line of parents
are `abandoned`, and a `Rewind` resumes after the nearest message among those parents.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stet_lsp.core.errors import StetError
from stet_lsp.trajectory.events import (
    Compaction,
    Error,
    FileChange,
    RawEvent,
    Rewind,
    SessionEnd,
    SessionStart,
    SourceRef,
    ToolCall,
    ToolResult,
    Usage,
    UserMessage,
)
from stet_lsp.trajectory.importers import head_records
from stet_lsp.trajectory.importers.base import ParsedSession
from stet_lsp.trajectory.importers.edits import edits_from_arguments, file_change_fields
from stet_lsp.trajectory.importers.fields import (
    as_text,
    count_field,
    mapping,
    sequence,
    text_field,
    whole_count,
)
from stet_lsp.trajectory.importers.files import file_digest, jsonl_records
from stet_lsp.trajectory.importers.gemini import (
    command_failed,
    content_parts,
    emit_reply,
    file_diff_fields,
    parts_text,
    response_text,
    token_fields,
)

FORMAT = "qwen-code"

_TYPES = frozenset({"user", "assistant", "tool_result", "system"})
_MESSAGE_TYPES = frozenset({"user", "assistant", "tool_result"})
_PROMPT_SUBTYPES = frozenset({"mid_turn_user_message", "realtime_message"})
# Text Qwen Code adds to a prompt's parts (a UserPromptSubmit hook's context).
_HARNESS_TAG = "<qwen:"

_USER_RECORDS = {
    "notification": "notification the harness sent the model (a background task's)",
    "cron": "prompt a scheduled task sent",
    "goal_runtime": "message the goal runtime sent the model",
}
# Written beside the conversation (`updateActiveTail: false`): the next record does not hang
# from them.
_BESIDE = frozenset(
    {
        "custom_title",
        "session_source",
        "session_artifact_event",
        "session_artifact_snapshot",
        "session_sources_snapshot",
    }
)
_SYSTEM_RECORDS = {
    "ui_telemetry": "UI telemetry event (replayed for /stats on resume)",
    "slash_command": "slash command",
    "at_command": "@-command (files read into the prompt)",
    "custom_title": "session title",
    "attribution_snapshot": "attribution snapshot (AI contribution tracking)",
    "file_history_snapshot": "file history snapshot (backups for rewinding edits)",
    "session_notes": "session notes",
    "parent_session": "session that spawned this one",
    "session_source": "integration that created the session",
    "session_execution_engine": "execution engine that owns the session",
    "session_model": "model the session restores",
    "session_approval_mode": "approval mode the session restores",
    "omni_recall": "media memory recalled into the request",
    "agent_bootstrap": "history a forked agent started with",
    "agent_launch_prompt": "prompt an agent was launched with",
    "agent_retry": "agent retry",
    "agent_session_ready": "agent session ready",
    "user_text_elements": "text elements of a prompt",
    "session_artifact_event": "session artifact event",
    "session_artifact_snapshot": "session artifact snapshot",
    "session_sources_snapshot": "session sources snapshot",
    "branch_checkpoint": "branch checkpoint (a completed turn)",
    "goal_state": "goal state",
    "goal_turn_end": "goal turn end",
    "turn_result": "turn result",
    "background_task_completed": "background task completed",
    "managed_session_header_v1": "managed session header",
    "managed_session_event_v1": "managed session event",
    "managed_session_commit_v1": "managed session commit",
}


class QwenCodeImporter:
    name = FORMAT
    label = "Qwen Code session JSONL"

    def sniff(self, head: str) -> bool:
        """A JSONL file whose first records have Claude Code's keys and one thing only Qwen
        Code writes there (`is_qwen_record`); a first record larger than the sniff window
        starts with `uuid` (Claude Code's with `parentUuid` or `type`)."""
        records, cut = head_records(head)
        for value in records:
            if not isinstance(value, dict) or text_field(value.get("type")) not in _TYPES:
                return False
            if not {"uuid", "sessionId"} <= value.keys() or "content" in mapping(
                value.get("message")
            ):
                return False
            if is_qwen_record(value):
                return True
        return cut is not None and _cut_record(cut[:8192])

    def parse(self, path: Path) -> ParsedSession:
        return _Reader(path).read()


IMPORTERS = {FORMAT: QwenCodeImporter()}


def is_qwen_record(record: dict[str, Any]) -> bool:
    """Whether a record with Claude Code's keys is Qwen Code's: a message of Gemini API
    `parts`, a `systemPayload`, `usageMetadata` or the `tool_result` type, none of which
    Claude Code writes."""
    message = record.get("message")
    return (
        (isinstance(message, dict) and "parts" in message and "content" not in message)
        or "systemPayload" in record
        or "usageMetadata" in record
        or record.get("type") == "tool_result"
    )


def _cut_record(start: str) -> bool:
    return start.startswith(('{"uuid":', '{"backgroundTurn":')) and all(
        f'"{key}":' in start for key in ("uuid", "parentUuid", "sessionId")
    )


@dataclass
class _Entry:
    """A record where it was read, and the events made of it."""

    at: SourceRef
    record: Any
    first: int = 0
    end: int = 0

    @property
    def uuid(self) -> str | None:
        return text_field(self.record.get("uuid")) if isinstance(self.record, dict) else None


@dataclass
class _Call:
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    answered: bool = False


class _Reader:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.name = path.name
        self.parsed = ParsedSession(format=FORMAT, session_id="")
        self.entries: list[_Entry] = []
        self.parents: dict[str, str | None] = {}
        self.models: dict[str, str] = {}
        self.usage_lines: dict[str, int] = {}
        self.calls: dict[str, _Call] = {}

    def read(self) -> ParsedSession:
        for line, record in jsonl_records(self.path, self.name, self.parsed.problems):
            self.entries.append(_Entry(SourceRef(file=self.name, line=line), record))
        if not self.entries:
            raise StetError(f"{self.path}: no Qwen Code records")
        self.parsed.sources[self.name] = self.path
        self._index()
        records = [e.record for e in self.entries if isinstance(e.record, dict)]
        self.parsed.session_id = next(
            (s for r in records if (s := text_field(r.get("sessionId")))), None
        ) or file_digest(self.path)
        start = self._start(records)
        for index, entry in enumerate(self.entries):
            entry.first = len(self.parsed.events)
            self._record(index, entry)
            entry.end = len(self.parsed.events)
        start.title = self._title()
        last = self.parsed.events[-1]
        end_time = next(
            (t for r in reversed(records) if (t := text_field(r.get("timestamp")))), None
        )
        self.parsed.emit(SessionEnd, last.source, end_time)
        return self.parsed

    def _index(self) -> None:
        """Each uuid's parent (its first record's), model (the first named) and the record
        whose usage counts (the last that has one)."""
        for index, entry in enumerate(self.entries):
            uuid = entry.uuid
            if uuid is None:
                continue
            record = entry.record
            self.parents.setdefault(uuid, text_field(record.get("parentUuid")))
            if (model := text_field(record.get("model"))) is not None:
                self.models.setdefault(uuid, model)
            if isinstance(record.get("usageMetadata"), dict):
                self.usage_lines[uuid] = index

    def _start(self, records: list[dict[str, Any]]) -> SessionStart:
        def first(key: str) -> str | None:
            return next((v for r in records if (v := text_field(r.get(key)))), None)

        at = self.entries[0].at
        return self.parsed.emit(
            SessionStart,
            at,
            first("timestamp"),
            harness=FORMAT,
            harness_version=first("version"),
            model=next(
                (
                    m
                    for r in records
                    if r.get("type") == "assistant" and (m := text_field(r.get("model")))
                ),
                None,
            ),
            cwd=first("cwd"),
            branch=first("gitBranch"),
        )

    def _title(self) -> str | None:
        """The last title set on the conversation as it ended."""
        for entry in reversed(self.entries):
            record = entry.record
            if (
                isinstance(record, dict)
                and record.get("subtype") == "custom_title"
                and not any(e.abandoned for e in self.parsed.events[entry.first : entry.end])
            ):
                title = text_field(mapping(record.get("systemPayload")).get("customTitle"))
                if title:
                    return title
        return None

    # -- records ------------------------------------------------------------------------------

    def _record(self, index: int, entry: _Entry) -> None:
        record, at = entry.record, entry.at
        if not isinstance(record, dict):
            self._raw(at, None, None, record, "record is not a JSON object")
            return
        time = text_field(record.get("timestamp"))
        agent = text_field(record.get("agentId")) if record.get("isSidechain") else None
        kind, subtype = record.get("type"), record.get("subtype")
        if kind == "user":
            self._user(record, at, time, agent)
        elif kind == "assistant":
            self._assistant(index, record, at, time, agent)
        elif kind == "tool_result":
            self._tool_result(record, at, time, agent)
        elif kind == "system" and subtype == "chat_compression":
            summary = _compression_summary(mapping(record.get("systemPayload")))
            self.parsed.emit(Compaction, at, time, agent, summary=summary)
        elif kind == "system" and subtype == "rewind":
            self._rewind(index, record, at, time)
        elif kind == "system" and subtype == "turn_result":
            self._turn_result(record, at, time, agent)
        elif kind == "system":
            reason = _SYSTEM_RECORDS.get(as_text(subtype)) or (
                "system record without a subtype"
                if subtype is None
                else f"system record of unknown subtype {subtype!r}"
            )
            self._raw(at, time, agent, record, reason)
        else:
            reason = "record has no type" if kind is None else f"unknown record type {kind!r}"
            self._raw(at, time, agent, record, reason)

    def _raw(
        self, at: SourceRef, time: str | None, agent: str | None, record: Any, reason: str
    ) -> None:
        self.parsed.emit(RawEvent, at, time, agent, record=record, reason=reason)

    def _user(
        self, record: dict[str, Any], at: SourceRef, time: str | None, agent: str | None
    ) -> None:
        subtype = record.get("subtype")
        parts = _message_parts(record)
        if subtype is not None and text_field(subtype) not in _PROMPT_SUBTYPES:
            reason = _USER_RECORDS.get(
                as_text(subtype), f"user record of unknown subtype {subtype!r}"
            )
            self._raw(at, time, agent, record, reason)
        else:
            shown = text_field(mapping(record.get("systemPayload")).get("displayText"))
            text = shown or parts_text([p for p in parts if not _harness_part(p)])
            if text.strip():
                self.parsed.emit(UserMessage, at, time, agent, text=text)
            elif not _responses(parts):
                self._raw(at, time, agent, record, "user record without text")
        self._answers(record, parts, at, time, agent)

    def _assistant(
        self, index: int, record: dict[str, Any], at: SourceRef, time: str | None, agent: str | None
    ) -> None:
        uuid = text_field(record.get("uuid"))
        model = text_field(record.get("model")) or (self.models.get(uuid) if uuid else None)
        parts = _message_parts(record)
        emit_reply(self.parsed, parts, at, time, agent, model)
        for position, part in enumerate(parts):
            call = part.get("functionCall")
            if isinstance(call, dict):
                self._call(call, f"{at.line}#{position}", at, time, agent)
        counted = uuid is None or self.usage_lines.get(uuid) == index
        emitted = counted and self._usage(record.get("usageMetadata"), model, at, time, agent)
        if not parts and not emitted:
            self._raw(at, time, agent, record, "assistant record without content")

    def _call(
        self,
        call: dict[str, Any],
        fallback_id: str,
        at: SourceRef,
        time: str | None,
        agent: str | None,
    ) -> None:
        call_id = text_field(call.get("id")) or fallback_id
        name = text_field(call.get("name")) or "tool"
        arguments = call.get("args")
        arguments = arguments if isinstance(arguments, dict) else {"args": arguments}
        self.calls[call_id] = _Call(name, arguments)
        self.parsed.emit(ToolCall, at, time, agent, call_id=call_id, name=name, input=arguments)

    def _usage(
        self, metadata: Any, model: str | None, at: SourceRef, time: str | None, agent: str | None
    ) -> bool:
        fields = token_fields(_token_summary(metadata))
        if fields is None:
            return False
        self.parsed.emit(Usage, at, time, agent, model=model, **fields)
        return True

    # -- tool results -------------------------------------------------------------------------

    def _tool_result(
        self, record: dict[str, Any], at: SourceRef, time: str | None, agent: str | None
    ) -> None:
        parts = _message_parts(record)
        answered = self._answers(record, parts, at, time, agent)
        text = parts_text([p for p in parts if not _harness_part(p)])
        if text.strip():
            # Text sent with the results: a prompt typed while the tools ran, in older builds.
            self._raw(at, time, agent, {"parts": parts}, "text sent with tool results")
        elif not answered:
            self._raw(at, time, agent, record, "tool result naming no call")

    def _answers(
        self,
        record: dict[str, Any],
        parts: list[dict[str, Any]],
        at: SourceRef,
        time: str | None,
        agent: str | None,
    ) -> bool:
        """The results a record's functionResponse parts (and `toolCallResult`) give; whether
        it gave any."""
        info = mapping(record.get("toolCallResult"))
        info_id = text_field(info.get("callId"))
        responses = _responses(parts)
        if not responses and info_id:
            responses = [{"id": info_id}]
        for response in responses:
            # Without an id, the call `toolCallResult` names (when it answers this one alone),
            # else the oldest open call of the tool.
            named = info_id if len(responses) == 1 else None
            call_id = (
                text_field(response.get("id")) or named or self._open_call(response.get("name"))
            )
            own = info if info_id == call_id or (info_id is None and len(responses) == 1) else {}
            self._result(call_id, response, own, at, time, agent)
        return bool(responses)

    def _open_call(self, name: Any) -> str | None:
        """The oldest unanswered call of a tool (a response without an id answers it)."""
        return next((k for k, c in self.calls.items() if c.name == name and not c.answered), None)

    def _result(
        self,
        call_id: str | None,
        response: dict[str, Any],
        info: dict[str, Any],
        at: SourceRef,
        time: str | None,
        agent: str | None,
    ) -> None:
        call = self.calls.get(call_id) if call_id else None
        if call is None or call_id is None:
            self._raw(at, time, agent, response, "tool response without a call")
            return
        if call.answered:
            self._raw(at, time, agent, response, "tool response to a call answered already")
            return
        call.answered = True
        body = response.get("response")
        status = text_field(info.get("status"))
        failed = (isinstance(body, dict) and "error" in body) or info.get("error") is not None
        output = response_text(body) if body is not None else ""
        ok = status == "success" if status else not failed
        ok = ok and not command_failed(call.name, output)
        display = info.get("resultDisplay")
        if not output:
            output = display if isinstance(display, str) else _error_text(info.get("error"))
        self.parsed.emit(ToolResult, at, time, agent, call_id=call_id, ok=ok, output=output)
        if ok:
            for fields in _changes(call, display, output):
                self.parsed.emit(FileChange, at, time, agent, call_id=call_id, **fields)

    # -- system records -----------------------------------------------------------------------

    def _rewind(self, index: int, record: dict[str, Any], at: SourceRef, time: str | None) -> None:
        """The user took back turns: what was written since the record the rewind hangs from
        is on a branch left behind."""
        kept = set(self._lineage(text_field(record.get("parentUuid"))))
        for entry in self.entries[:index]:
            if entry.uuid in kept or _side_chain(entry.record) or self._beside(entry, kept):
                continue
            for event in self.parsed.events[entry.first : entry.end]:
                event.abandoned = True
        self.parsed.emit(Rewind, at, time, resumes_after=self._resumes_after(kept, index))

    def _beside(self, entry: _Entry, kept: set[str]) -> bool:
        """A record Qwen Code writes beside the conversation, hanging from a record kept but
        continued by none (a title, the session's sources and artifacts): no turn taken
        back."""
        record = entry.record
        return (
            isinstance(record, dict)
            and record.get("type") == "system"
            and record.get("subtype") in _BESIDE
            and self.parents.get(entry.uuid or "") in kept
        )

    def _lineage(self, uuid: str | None) -> Iterator[str]:
        seen: set[str] = set()
        while uuid is not None and uuid not in seen:
            seen.add(uuid)
            yield uuid
            uuid = self.parents.get(uuid)

    def _resumes_after(self, kept: set[str], index: int) -> SourceRef | None:
        """The last record before the rewind of the nearest message it keeps."""
        for entry in reversed(self.entries[:index]):
            if entry.uuid in kept and text_field(entry.record.get("type")) in _MESSAGE_TYPES:
                return entry.at
        return None

    def _turn_result(
        self, record: dict[str, Any], at: SourceRef, time: str | None, agent: str | None
    ) -> None:
        payload = mapping(record.get("systemPayload"))
        state = payload.get("state")
        if state == "cancelled":
            self.parsed.emit(Error, at, time, agent, message="turn cancelled", interrupt=True)
        elif state == "error":
            message = _error_text(payload.get("error")) or "turn failed"
            self.parsed.emit(Error, at, time, agent, message=message)
        else:
            self._raw(at, time, agent, record, _SYSTEM_RECORDS["turn_result"])


def _message_parts(record: dict[str, Any]) -> list[dict[str, Any]]:
    message = record.get("message")
    return content_parts(message.get("parts")) if isinstance(message, dict) else []


def _responses(parts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [p["functionResponse"] for p in parts if isinstance(p.get("functionResponse"), dict)]


def _harness_part(part: dict[str, Any]) -> bool:
    return as_text(part.get("text")).lstrip().startswith(_HARNESS_TAG)


def _side_chain(record: Any) -> bool:
    return isinstance(record, dict) and record.get("isSidechain") is True


def _error_text(error: Any) -> str:
    if isinstance(error, dict):
        return as_text(error.get("message")) or as_text(error)
    return as_text(error)


def _token_summary(metadata: Any) -> dict[str, int] | None:
    """The API's usage metadata as Gemini CLI's token summary. Thinking is counted beside
    the candidates unless the total shows it inside them (as OpenAI-compatible backends
    count reasoning inside completion tokens)."""
    if not isinstance(metadata, dict):
        return None
    if "promptTokenCount" not in metadata and "candidatesTokenCount" not in metadata:
        return metadata  # the summary early versions wrote
    prompt = count_field(metadata.get("promptTokenCount"))
    candidates = count_field(metadata.get("candidatesTokenCount"))
    thoughts = count_field(metadata.get("thoughtsTokenCount"))
    tool = count_field(metadata.get("toolUsePromptTokenCount"))
    total = count_field(metadata.get("totalTokenCount"))
    if thoughts and total and total < prompt + tool + candidates + thoughts:
        thoughts = 0
    return {
        "input": prompt,
        "output": candidates,
        "cached": count_field(metadata.get("cachedContentTokenCount")),
        "thoughts": thoughts,
        "tool": tool,
    }


def _changes(call: _Call, display: Any, output: str) -> list[dict[str, Any]]:
    """The file changes of a call that succeeded: its FileDiff, else its arguments."""
    if isinstance(display, dict) and "fileDiff" in display:
        whole = display
        if display.get("truncatedForSession") is True:
            # The contents were cut in the middle: only a whole diff says what changed.
            whole = {k: v for k, v in display.items() if k != "newContent"}
            if whole.get("originalContent") is not None:
                del whole["originalContent"]
        if display.get("fileDiffTruncated") is not True:
            fields = file_diff_fields(whole, call.arguments)
            return [fields] if fields is not None else []
    return [
        file_change_fields(edit) for edit in edits_from_arguments(call.name, call.arguments, output)
    ]


def _compression_summary(payload: dict[str, Any]) -> str:
    """The summary a compression left: the text of the history's first content (the
    summary turn), else of all of it; with no history, what its `info` counted."""
    history = [c for c in sequence(payload.get("compressedHistory")) if isinstance(c, dict)]
    texts = [parts_text(c.get("parts")) for c in history]
    summary = next((t for t in texts if t.strip()), "")
    if summary:
        return summary
    info = mapping(payload.get("info"))
    before, after = info.get("originalTokenCount"), info.get("newTokenCount")
    counted = (f" from {before:,}" if _is_count(before) else "") + (
        f" to {after:,}" if _is_count(after) else ""
    )
    counted += " tokens" if counted else ""
    return f"Context compressed{counted} (no summary recorded)."


def _is_count(value: object) -> bool:
    return whole_count(value) is not None
