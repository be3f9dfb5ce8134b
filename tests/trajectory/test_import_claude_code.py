"""The Claude Code session importer: hand-written records in the real shape (modelled on
Claude Code 1.0, 2.0 and 2.1 sessions) and the public sample."""

from __future__ import annotations

import hashlib
import json
import random
import time
from pathlib import Path
from typing import Any, TypeVar

import pytest
from claude_transcript import Transcript
from samples import sample

from stet_lsp.core.errors import StetError
from stet_lsp.trajectory.attribution import line_attribution
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
    event_json,
)
from stet_lsp.trajectory.importers import detect, importer
from stet_lsp.trajectory.importers.base import SNIFF_BYTES
from stet_lsp.trajectory.importers.claude_code import IMPORTERS, by_time

E = TypeVar("E", bound=EventBase)
IMPORTER = IMPORTERS["claude-code"]
SID = "5c0ffee0-1111-4222-8333-444455556666"
MODEL = "claude-opus-4-5-20251101"
COMMON = {
    "isSidechain": False,
    "userType": "external",
    "cwd": "/work/app",
    "sessionId": SID,
    "version": "2.1.12",
    "gitBranch": "feature/x",
}


def user(uuid: str, parent: str | None, content: Any, ts: str, **extra: Any) -> dict[str, Any]:
    message = {"role": "user", "content": content}
    record = {"parentUuid": parent, **COMMON, "type": "user", "message": message, "uuid": uuid}
    return record | {"timestamp": ts, **extra}


def assistant(
    uuid: str,
    parent: str | None,
    msg_id: str,
    blocks: list[Any],
    ts: str,
    usage: dict[str, int] | None = None,
    model: str = MODEL,
    **extra: Any,
) -> dict[str, Any]:
    message = {
        "model": model,
        "id": msg_id,
        "type": "message",
        "role": "assistant",
        "content": blocks,
        "stop_reason": None,
        "usage": usage or {"input_tokens": 10, "output_tokens": 3},
    }
    record = {"parentUuid": parent, **COMMON, "message": message, "requestId": f"req_{msg_id}"}
    return record | {"type": "assistant", "uuid": uuid, "timestamp": ts, **extra}


def tool_use(call_id: str, name: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": tool_input}


def result(call_id: str, content: Any, is_error: bool = False) -> dict[str, Any]:
    return {"tool_use_id": call_id, "type": "tool_result", "content": content, "is_error": is_error}


def write(path: Path, records: list[Any]) -> Path:
    """One record a line: dicts and lists as JSON, str and bytes as they are."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as stream:
        for record in records:
            if isinstance(record, bytes):
                stream.write(record + b"\n")
            elif isinstance(record, str):
                stream.write(record.encode() + b"\n")
            else:
                stream.write(json.dumps(record).encode() + b"\n")
    return path


def of(events: list[EventBase], kind: type[E]) -> list[E]:
    return [event for event in events if isinstance(event, kind)]


def kinds(events: list[EventBase]) -> list[str]:
    return [event.kind for event in events]


def file_history_delta(message_id: str, path: str, version: int = 1) -> dict[str, Any]:
    """A `file-history-delta` record as later 2.1 builds write it: one file's backup added to
    the snapshot of the prompt `messageId` names (no uuid, no sessionId)."""
    backup = {
        "backupFileName": f"{hashlib.sha256(path.encode()).hexdigest()[:16]}@v{version}",
        "version": version,
        "backupTime": "2026-09-30T10:00:04.500Z",
        "realParentDir": "/work/app",
    }
    return {
        "type": "file-history-delta",
        "messageId": message_id,
        "snapshotMessageId": message_id,
        "trackingPath": path,
        "backup": backup,
        "timestamp": "2026-09-30T10:00:04.500Z",
    }


def call_ids(events: list[EventBase]) -> list[str]:
    return [event.call_id for event in events if isinstance(event, ToolCall | ToolResult)]


# -- sniff ---------------------------------------------------------------------------------


def test_sniff_accepts_the_first_records_claude_code_writes() -> None:
    heads = [
        user("u1", None, "hi", "2026-01-01T00:00:00Z"),
        {"type": "summary", "summary": "A title", "leafUuid": "u9"},
        {
            "type": "file-history-snapshot",
            "messageId": "m1",
            "snapshot": {},
            "isSnapshotUpdate": False,
        },
        {"type": "queue-operation", "operation": "enqueue", "timestamp": "t", "sessionId": SID},
        {"type": "permission-mode", "permissionMode": "acceptEdits", "sessionId": SID},
        file_history_delta("m1", "src/app.py"),
        # no parentUuid or uuid: older converters write only sessionId beside type
        {"type": "user", "timestamp": "t", "sessionId": "s", "message": {"content": "x"}},
    ]
    for head in heads:
        assert IMPORTER.sniff(json.dumps(head) + "\n"), head


def test_a_session_teleported_from_the_web_starts_with_its_teleported_from_record(
    tmp_path: Path,
) -> None:
    """A session brought over from Claude Code on the web starts with a `teleported-from`
    record, which names none of the keys the other records carry: a file holding only that
    record (public sessions of 2.1.9x, where nothing followed the teleport) was refused as
    no known format. It is Claude Code's, kept as a raw event, before the conversation."""
    teleport = {
        "type": "teleported-from",
        "remoteSessionId": "session_01AbCdEfGhIjKlMnOpQrStUv",
        "branch": "claude/explain-readme-X1y2Z",
        "messageCount": 0,
    }
    assert IMPORTER.sniff(json.dumps(teleport) + "\n")
    assert detect(write(tmp_path / "alone.jsonl", [teleport])).name == "claude-code"
    alone = IMPORTER.parse(tmp_path / "alone.jsonl")
    assert kinds(alone.events) == ["session_start", "raw", "session_end"]
    raw = of(alone.events, RawEvent)[0]
    assert raw.reason == "session teleported from Claude Code on the web"
    assert raw.record == teleport
    path = write(
        tmp_path / f"{SID}.jsonl",
        [teleport, user("u1", None, "go on", "2026-04-09T10:00:00Z")],
    )
    parsed = IMPORTER.parse(path)
    assert parsed.session_id == SID
    assert kinds(parsed.events)[:3] == ["session_start", "raw", "user_message"]


def test_sniff_reads_a_first_record_larger_than_the_sniff_window() -> None:
    huge = assistant("a1", None, "msg_1", [{"type": "text", "text": "x" * 200_000}], "t")
    head = json.dumps(huge, separators=(",", ":"))[:SNIFF_BYTES]
    assert "\n" not in head
    assert IMPORTER.sniff(head)


def test_sniff_reads_a_first_queued_prompt_larger_than_the_sniff_window(tmp_path: Path) -> None:
    """A session whose first record is a prompt queued while the agent worked, longer than
    the sniff window (a pasted conversation of 77 KB, in a public 2.1.92 session), was no
    known format: only a first message record was recognised when cut off."""
    queued = {
        "type": "queue-operation",
        "operation": "enqueue",
        "timestamp": "2026-04-07T00:30:15.223Z",
        "sessionId": SID,
        "content": "Fact check this conversation: " + "y" * 80_000,
    }
    head = json.dumps(queued, separators=(",", ":"))[:SNIFF_BYTES]
    assert "\n" not in head
    assert IMPORTER.sniff(head)
    path = write(tmp_path / f"{SID}.jsonl", [queued, user("u1", None, "go", "t")])
    assert detect(path).name == "claude-code"
    # A type Claude Code does not write, or no key of its own, is not taken.
    other = {"type": "message", "id": "x", "content": "y" * 80_000}
    assert not IMPORTER.sniff(json.dumps(other, separators=(",", ":"))[:SNIFF_BYTES])
    unkeyed = {"type": "summary", "summary": "y" * 80_000}
    assert not IMPORTER.sniff(json.dumps(unkeyed, separators=(",", ":"))[:SNIFF_BYTES])


def test_a_teammate_session_starts_with_its_agent_setting_record(tmp_path: Path) -> None:
    """A session run as an agent (`--agent`, an agent team's teammate; 2.1.97+) starts with an
    `agent-setting` record, and later builds add `agent-color`, `tag` and `bridge-session`
    records: none was a type known here, so a first prompt past the sniff window after one
    made the file no known format, and each was kept as an unknown record type."""
    setting = {"type": "agent-setting", "agentSetting": "reviewer", "sessionId": SID}
    prompt = user("u1", None, "Review this diff: " + "z" * 80_000, "2026-09-01T10:00:00Z")
    head = (
        json.dumps(setting, separators=(",", ":"))
        + "\n"
        + json.dumps(prompt, separators=(",", ":"))
    )[:SNIFF_BYTES]
    assert IMPORTER.sniff(head)
    # Past a record of a type still unknown here, the prompt the window cut off is read as a
    # first record would be; a broken line with records after it is not taken for one.
    unknown = json.dumps({"type": "brand-new-kind", "sessionId": SID})
    cut = head.split("\n")[1]
    assert IMPORTER.sniff(unknown + "\n" + cut)
    assert not IMPORTER.sniff(unknown + "\n" + cut[:200] + "\n" + unknown)
    records: list[Any] = [
        setting,
        prompt,
        {"type": "agent-color", "agentColor": "blue", "sessionId": SID},
        {"type": "tag", "tag": "pinned", "sessionId": SID},
        {
            "type": "bridge-session",
            "sessionId": SID,
            "bridgeSessionId": "cse_01AbCdEf",
            "lastSequenceNum": 0,
        },
    ]
    path = write(tmp_path / f"{SID}.jsonl", records)
    assert detect(path).name == "claude-code"
    parsed = IMPORTER.parse(path)
    assert kinds(parsed.events) == [
        "session_start",
        "raw",
        "user_message",
        "raw",
        "raw",
        "raw",
        "session_end",
    ]
    assert [raw.reason for raw in of(parsed.events, RawEvent)] == [
        "agent the session runs as (--agent, or a teammate's agent type)",
        "agent color",
        "session tag",
        "remote-control bridge session mirroring this one",
    ]


def test_sniff_leaves_other_formats_alone() -> None:
    codex = {"timestamp": "t", "type": "session_meta", "payload": {"id": "x", "cwd": "/w"}}
    codex_item = {"timestamp": "t", "type": "response_item", "payload": {"type": "message"}}
    gemini = {"sessionId": "s", "projectHash": "h", "messages": [{"type": "user", "content": "x"}]}
    heads = [
        json.dumps(codex) + "\n" + json.dumps(codex_item) + "\n",
        json.dumps(gemini),
        json.dumps(gemini, indent=2),
        '[{"id": 0, "source": "user", "action": "message"}]',
        '{\n  "schema_version": "ATIF-v1.2",\n  "session_id": "x",\n  "steps": []\n}',
        '{"trajectory": [], "history": [{"role": "system", "content": "x"}], "info": {}}',
        "# aider chat started at 2025-01-01 10:00:00\n\n#### fix the bug\n",
        json.dumps({"timestamp": "t", "sessionId": "s", "message": {"role": "assistant"}}),
        # Qwen Code's headless output, shaped as Claude Code's
        '{"type":"system","subtype":"init","session_id":"s","qwen_code_version":"0.14.0"}',
        "",
    ]
    for head in heads:
        assert not IMPORTER.sniff(head), head


def test_an_empty_git_branch_is_no_branch(tmp_path: Path) -> None:
    """Claude Code 2.0 run outside a git repository records `gitBranch` as ""."""
    records = [
        user("u1", None, "hello", "2025-11-19T22:54:26.336Z", gitBranch=""),
        assistant("a1", "u1", "m1", [{"type": "text", "text": "Hi."}], "2025-11-19T22:54:28Z")
        | {"gitBranch": ""},
    ]
    start = IMPORTER.parse(write(tmp_path / f"{SID}.jsonl", records)).events[0]
    assert isinstance(start, SessionStart)
    assert (start.cwd, start.branch) == ("/work/app", None)


def test_sniff_leaves_qwen_code_sessions_alone() -> None:
    """Qwen Code's session records carry Claude Code's keys around a Gemini API message."""
    envelope = {"parentUuid": None, "sessionId": "s", "timestamp": "t", "cwd": "/w"}
    prompt = envelope | {
        "uuid": "u1",
        "type": "user",
        "version": "0.21.0",
        "message": {"role": "user", "parts": [{"text": "fix the bug"}]},
    }
    reply = envelope | {
        "uuid": "a1",
        "parentUuid": "u1",
        "type": "assistant",
        "message": {"role": "model", "parts": [{"text": "Done."}]},
    }
    head = json.dumps(prompt) + "\n" + json.dumps(reply) + "\n"
    assert not IMPORTER.sniff(head)


def test_registry_names_the_importer() -> None:
    assert importer("claude-code") is IMPORTER
    assert IMPORTER.name == "claude-code"
    assert IMPORTER.label == "Claude Code session JSONL"


# -- conversation --------------------------------------------------------------------------


def conversation(tmp_path: Path) -> Path:
    """A 2.1-style turn: a prompt, a reply of four blocks written as four records of one
    message id, a tool call and its result, and the metadata records around them."""
    usage_1 = {"input_tokens": 10, "output_tokens": 3, "cache_creation_input_tokens": 4000}
    usage_2 = usage_1 | {"output_tokens": 250, "cache_read_input_tokens": 100}
    return write(
        tmp_path / f"{SID}.jsonl",
        [
            {"type": "summary", "summary": "Another conversation", "leafUuid": "elsewhere"},
            {"type": "summary", "summary": "Fix the parser", "leafUuid": "a4"},
            {"type": "file-history-snapshot", "messageId": "u1", "snapshot": {}},
            user("u1", None, "Fix the parser please", "2026-01-22T03:41:30.416Z"),
            assistant(
                "a1",
                "u1",
                "msg_A",
                [{"type": "thinking", "thinking": "The parser drops tabs.", "signature": "Eu4C"}],
                "2026-01-22T03:41:36.000Z",
                usage_1,
            ),
            assistant(
                "a2",
                "a1",
                "msg_A",
                [{"type": "thinking", "thinking": "", "signature": "EpAx"}],
                "2026-01-22T03:41:36.500Z",
                usage_1,
            ),
            assistant(
                "a3",
                "a2",
                "msg_A",
                [{"type": "redacted_thinking", "data": "opaque"}],
                "2026-01-22T03:41:37.000Z",
                usage_2,
            ),
            assistant(
                "a4",
                "a3",
                "msg_A",
                [
                    {"type": "text", "text": "Let me look."},
                    tool_use("toolu_1", "Bash", {"command": "ls", "description": "List"}),
                ],
                "2026-01-22T03:41:38.000Z",
                usage_1,
            ),
            user(
                "r1",
                "a4",
                [result("toolu_1", "parser.py\nREADME.md")],
                "2026-01-22T03:41:39.000Z",
                toolUseResult={
                    "stdout": "parser.py\nREADME.md",
                    "stderr": "",
                    "interrupted": False,
                },
            ),
            assistant(
                "a5",
                "r1",
                "msg_B",
                [tool_use("toolu_2", "Read", {"file_path": "/work/app/parser.py"})],
                "2026-01-22T03:41:40.000Z",
                {"input_tokens": 5, "output_tokens": 7, "cache_read_input_tokens": 4100},
            ),
            {"type": "system", "subtype": "turn_duration", "durationMs": 38110, **COMMON}
            | {"timestamp": "2026-01-22T03:41:41.000Z", "uuid": "s1", "parentUuid": "a5"},
        ],
    )


def test_a_turn_becomes_messages_reasoning_calls_and_one_usage_per_request(
    tmp_path: Path,
) -> None:
    parsed = IMPORTER.parse(conversation(tmp_path))
    events = parsed.events
    assert parsed.format == "claude-code"
    assert parsed.session_id == SID
    assert parsed.sources == {f"{SID}.jsonl": tmp_path / f"{SID}.jsonl"}
    assert kinds(events) == [
        "session_start",
        "raw",
        "raw",
        "raw",
        "user_message",
        "reasoning",
        "usage",
        "agent_message",
        "tool_call",
        "tool_result",
        "tool_call",
        "usage",
        "raw",
        "session_end",
    ]
    assert all(event.session == SID and event.agent is None for event in events)
    start = events[0]
    assert isinstance(start, SessionStart)
    assert (start.harness, start.harness_version, start.model) == ("claude-code", "2.1.12", MODEL)
    assert (start.cwd, start.branch, start.title) == ("/work/app", "feature/x", "Fix the parser")
    assert start.source.line == 1
    prompt = of(events, UserMessage)[0]
    assert (prompt.text, prompt.source.line, prompt.time) == (
        "Fix the parser please",
        4,
        "2026-01-22T03:41:30.416Z",
    )
    assert [r.text for r in of(events, Reasoning)] == ["The parser drops tabs."]
    assert parsed.dropped["opaque_reasoning"] == 2
    first, second = of(events, Usage)
    # msg_A's four records count once, with the largest counts any of them reported
    assert (first.input_tokens, first.output_tokens) == (10, 250)
    assert (first.cache_read_tokens, first.cache_write_tokens) == (100, 4000)
    assert (first.model, first.source.line, first.cost_usd) == (MODEL, 5, None)
    assert (second.output_tokens, second.cache_read_tokens, second.source.line) == (7, 4100, 10)
    assert of(events, AgentMessage)[0].text == "Let me look."
    assert of(events, AgentMessage)[0].model == MODEL
    call, read = of(events, ToolCall)
    assert (call.call_id, call.name, call.input) == (
        "toolu_1",
        "Bash",
        {"command": "ls", "description": "List"},
    )
    assert (read.call_id, read.name) == ("toolu_2", "Read")
    (output,) = of(events, ToolResult)
    assert (output.call_id, output.ok, output.output) == ("toolu_1", True, "parser.py\nREADME.md")
    assert output.source.line == 9
    raws = of(events, RawEvent)
    assert [raw.record.get("type") for raw in raws] == [
        "summary",
        "summary",
        "file-history-snapshot",
        "system",
    ]
    assert "turn_duration" in (raws[-1].reason or "")
    end = events[-1]
    assert isinstance(end, SessionEnd)
    assert (end.time, end.source.line) == ("2026-01-22T03:41:41.000Z", 11)
    for event in events:  # every event serialises
        assert json.loads(event_json(event))["kind"] == event.kind


def test_counts_and_costs_past_what_a_run_reports_are_no_figures(tmp_path: Path) -> None:
    """A token count or `costUSD` past 2**63 (10**400: no float holds it) is read as none,
    never an error; a request with no figure left gives no usage."""
    ts = "2026-01-22T03:41:30.000Z"
    huge = {"input_tokens": 10**400, "output_tokens": 3, "cache_read_input_tokens": 2**63}
    records = [
        user("u1", None, "hello", ts),
        assistant("a1", "u1", "msg_1", [{"type": "text", "text": "hi"}], ts, huge, costUSD=10**400),
        assistant("a2", "a1", "msg_2", [{"type": "text", "text": "so"}], ts, costUSD=2**63),
        assistant(
            "a3",
            "a2",
            "msg_3",
            [{"type": "text", "text": "and"}],
            ts,
            {"input_tokens": 10**30, "output_tokens": 0},
        ),
        assistant("a4", "a3", "msg_4", [{"type": "text", "text": "done"}], ts, costUSD=0.25),
    ]
    events = IMPORTER.parse(write(tmp_path / f"{SID}.jsonl", records)).events
    assert [
        (u.input_tokens, u.output_tokens, u.cache_read_tokens, u.cost_usd)
        for u in of(events, Usage)
    ] == [(0, 3, 0, None), (10, 3, 0, None), (10, 3, 0, 0.25)]


def test_tool_results_as_text_images_errors_and_calls_without_results(tmp_path: Path) -> None:
    path = write(
        tmp_path / "s.jsonl",
        [
            assistant(
                "a1",
                None,
                "msg_1",
                [
                    tool_use("t1", "mcp__ide__getDiagnostics", {"uri": "/w/a.py"}),
                    tool_use("t2", "Read", {"file_path": "/w/shot.png"}),
                    tool_use("t3", "Bash", {"command": "false"}),
                    tool_use("t4", "ToolSearch", {"query": "select:TaskCreate"}),
                    tool_use("t5", "Bash", {"command": "sleep 999"}),
                ],
                "2026-01-01T00:00:01Z",
            ),
            user(
                "r1", "a1", [result("t1", [{"type": "text", "text": "[]"}])], "2026-01-01T00:00:02Z"
            ),
            user(
                "r2",
                "r1",
                [
                    result(
                        "t2",
                        [
                            {"type": "text", "text": "A screenshot:"},
                            {"type": "image", "source": {"type": "base64", "data": "iVBOR"}},
                        ],
                    )
                ],
                "2026-01-01T00:00:03Z",
            ),
            user(
                "r3",
                "r2",
                [result("t3", "<tool_use_error>Exit code 1</tool_use_error>", True)],
                "2026-01-01T00:00:04Z",
                toolUseResult="Error: Exit code 1",
            ),
            user(
                "r4",
                "r3",
                [result("t4", [{"type": "tool_reference", "tool_name": "TaskCreate"}])],
                "2026-01-01T00:00:05Z",
            ),
        ],
    )
    parsed = IMPORTER.parse(path)
    events = parsed.events
    results = {r.call_id: r for r in of(events, ToolResult)}
    assert set(results) == {"t1", "t2", "t3", "t4"}  # t5 never answered: fine
    assert results["t1"].output == "[]"
    assert results["t2"].output == "A screenshot:\n[image]"
    assert "iVBOR" not in event_json(results["t2"])
    assert parsed.dropped["inline_data"] == 1  # the image's bytes, left out
    assert (results["t3"].ok, results["t3"].output) == (
        False,
        "<tool_use_error>Exit code 1</tool_use_error>",
    )
    assert results["t4"].output == "[tool: TaskCreate]"
    assert [c.call_id for c in of(events, ToolCall)] == ["t1", "t2", "t3", "t4", "t5"]


def test_tool_result_blocks_the_text_only_names_are_kept_raw(tmp_path: Path) -> None:
    """A tool result's block of a kind its text does not read (a search result, the results
    of a server-side web search) is named in the output by its kind and kept whole as a raw
    event after the result, never left out."""
    found = {
        "type": "search_result",
        "source": "https://docs.example.com/retry",
        "title": "Retrying requests",
        "content": [{"type": "text", "text": "Use session() for retries."}],
    }
    page = {"type": "web_search_result", "url": "https://example.com", "title": "Example"}
    path = write(
        tmp_path / "s.jsonl",
        [
            user("u1", None, "How do retries work?", "2026-01-01T00:00:00Z"),
            assistant(
                "a1",
                "u1",
                "msg_1",
                [
                    tool_use("t1", "mcp__docs__search", {"query": "retry"}),
                    {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {}},
                    {"type": "web_search_tool_result", "tool_use_id": "s1", "content": [page]},
                ],
                "2026-01-01T00:00:01Z",
            ),
            user("r1", "a1", [result("t1", [found])], "2026-01-01T00:00:02Z"),
        ],
    )
    events = IMPORTER.parse(path).events
    outputs = [(r.call_id, r.output) for r in of(events, ToolResult)]
    assert outputs == [("s1", "[web_search_result]"), ("t1", "[search_result]")]
    raws = of(events, RawEvent)
    assert [(r.record, r.reason) for r in raws] == [
        (page, "tool result content block of a kind not understood"),
        (found, "tool result content block of a kind not understood"),
    ]
    assert events.index(raws[1]) == events.index(of(events, ToolResult)[1]) + 1


def test_a_message_written_again_by_a_resumed_session_is_read_once(tmp_path: Path) -> None:
    """Claude Code writes a session's last message again when it is resumed, under the new
    session's id and a later time: the call it answers gets one result, and the copy is
    counted in `dropped`. Other records sharing a uuid are not messages and stay."""
    answer = user("r1", "a1", [result("t1", "ok")], "2026-01-01T00:00:02Z")
    resumed = "6d0ffee0-1111-4222-8333-444455556666"
    path = write(
        tmp_path / "s.jsonl",
        [
            assistant(
                "a1",
                None,
                "msg_1",
                [tool_use("t1", "Bash", {"command": "true"})],
                "2026-01-01T00:00:01Z",
            ),
            answer,
            answer | {"sessionId": resumed, "timestamp": "2026-01-01T01:00:00Z"},
            user("u2", "r1", "go on", "2026-01-01T01:00:01Z", sessionId=resumed),
            {"type": "user", "uuid": ["not", "a", "string"], "message": {"content": "odd"}},
        ],
    )
    parsed = IMPORTER.parse(path)
    assert [r.call_id for r in of(parsed.events, ToolResult)] == ["t1"]
    assert [m.text for m in of(parsed.events, UserMessage)] == ["go on", "odd"]
    assert parsed.dropped["repeated_message"] == 1
    assert parsed.session_id == resumed


def test_user_images_and_interruptions(tmp_path: Path) -> None:
    path = write(
        tmp_path / "s.jsonl",
        [
            user(
                "u1",
                None,
                [
                    {"type": "image", "source": {"type": "base64", "data": "iVBOR"}},
                    {"type": "text", "text": "What is wrong here?"},
                ],
                "2026-01-01T00:00:01Z",
            ),
            assistant("a1", "u1", "m1", [tool_use("t1", "Bash", {"command": "make"})], "t"),
            user(
                "r1",
                "a1",
                [result("t1", "The user doesn't want to proceed with this tool use.", True)],
                "2026-01-01T00:00:03Z",
            ),
            user(
                "u2",
                "r1",
                [{"type": "text", "text": "[Request interrupted by user for tool use]"}],
                "2026-01-01T00:00:04Z",
            ),
            user("u3", "u2", "[Request interrupted by user]", "2026-01-01T00:00:05Z"),
        ],
    )
    parsed = IMPORTER.parse(path)
    events = parsed.events
    assert of(events, UserMessage)[0].text == "[image]\n\nWhat is wrong here?"
    assert parsed.dropped["inline_data"] == 1  # the image's bytes, left out
    assert of(events, ToolResult)[0].ok is False
    errors = of(events, Error)
    assert [(e.message, e.interrupt, e.source.line) for e in errors] == [
        ("[Request interrupted by user for tool use]", True, 4),
        ("[Request interrupted by user]", True, 5),
    ]


def test_images_given_by_url_keep_their_address(tmp_path: Path) -> None:
    """An image or document given by URL is no bulk data: its address is kept in the text
    that names it, where the gate reads it, and nothing is counted as left out."""
    linked = {"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}}
    paper = {"type": "document", "source": {"type": "url", "url": "https://example.com/b.pdf"}}
    path = write(
        tmp_path / "s.jsonl",
        [
            user(
                "u1",
                None,
                [linked, paper, {"type": "text", "text": "What is wrong here?"}],
                "2026-01-01T00:00:01Z",
            ),
            assistant("a1", "u1", "m1", [tool_use("t1", "Fetch", {"url": "x"})], "t"),
            user("r1", "a1", [result("t1", [linked])], "2026-01-01T00:00:03Z"),
        ],
    )
    parsed = IMPORTER.parse(path)
    said = "[image: https://example.com/a.png]\n\n[document: https://example.com/b.pdf]"
    assert of(parsed.events, UserMessage)[0].text == said + "\n\nWhat is wrong here?"
    assert of(parsed.events, ToolResult)[0].output == "[image: https://example.com/a.png]"
    assert "inline_data" not in parsed.dropped


def test_images_given_by_file_id_keep_their_id(tmp_path: Path) -> None:
    """An image or document uploaded through the Files API (`source.type` "file") is given
    by its `file_id`: no bytes to count, and the id is kept in the text that names it."""
    uploaded = {"type": "image", "source": {"type": "file", "file_id": "file_011CNha8iCJcU1"}}
    paper = {"type": "document", "source": {"type": "file", "file_id": "file_011CPMxVD3fH"}}
    path = write(
        tmp_path / "s.jsonl",
        [
            user("u1", None, [uploaded, paper, {"type": "text", "text": "Read these"}], "t"),
            assistant("a1", "u1", "m1", [tool_use("t1", "Fetch", {"url": "x"})], "t"),
            user("r1", "a1", [result("t1", [uploaded])], "t"),
        ],
    )
    parsed = IMPORTER.parse(path)
    said = "[image: file_011CNha8iCJcU1]\n\n[document: file_011CPMxVD3fH]\n\nRead these"
    assert of(parsed.events, UserMessage)[0].text == said
    assert of(parsed.events, ToolResult)[0].output == "[image: file_011CNha8iCJcU1]"
    assert "inline_data" not in parsed.dropped


def test_a_background_tasks_notification_is_no_prompt(tmp_path: Path) -> None:
    """When a background command or agent ends, Claude Code sends the model a user record of
    `<task-notification>` text (a string or a text block; later builds mark it `origin.kind`
    "task-notification"): the harness wrote it, so it is kept raw, not a user message."""
    notice = "<task-notification>\n<task-id>b1</task-id>\n<status>completed</status>\n"
    notice += '<summary>Background command "Run the build" completed</summary>\n'
    notice += "</task-notification>"
    path = write(
        tmp_path / "s.jsonl",
        [
            user("u1", None, "Start the build", "2026-01-01T00:00:01Z"),
            assistant("a1", "u1", "m1", [tool_use("t1", "Bash", {"command": "make"})], "t"),
            user("r1", "a1", [result("t1", "Running in the background (id b1)")], "t"),
            assistant("a2", "r1", "m2", [{"type": "text", "text": "Started."}], "t"),
            user("n1", "a2", notice, "t", origin={"kind": "task-notification"}),
            assistant("a3", "n1", "m3", [{"type": "text", "text": "The build is done."}], "t"),
            user("n2", "a3", [{"type": "text", "text": notice}], "t"),
            user("u2", "n2", "Now the tests", "t", origin={"kind": "human"}),
        ],
    )
    events = IMPORTER.parse(path).events
    assert [u.text for u in of(events, UserMessage)] == ["Start the build", "Now the tests"]
    raws = [r for r in of(events, RawEvent) if "notification" in (r.reason or "")]
    assert [r.source.line for r in raws] == [5, 7]
    assert not of(events, Rewind)


# -- file changes --------------------------------------------------------------------------


def edit_session(tmp_path: Path, tool: dict[str, Any], structured: Any, ok: bool = True) -> Path:
    call_id = tool["id"]
    return write(
        tmp_path / "edit.jsonl",
        [
            assistant("a1", None, "m1", [tool], "2026-01-01T00:00:01Z"),
            user(
                "r1",
                "a1",
                [result(call_id, "The file has been updated successfully.", not ok)],
                "2026-01-01T00:00:02Z",
                **({} if structured is None else {"toolUseResult": structured}),
            ),
        ],
    )


def only_change(path: Path) -> FileChange:
    events = IMPORTER.parse(path).events
    (change,) = of(events, FileChange)
    index = events.index(change)
    before = events[index - 1]
    assert isinstance(before, ToolResult) and before.call_id == change.call_id  # right after it
    return change


def test_edit_with_the_original_file_is_a_whole_file_diff(tmp_path: Path) -> None:
    original = "a\nb\nc\nd\n"
    tool = tool_use(
        "t1", "Edit", {"file_path": "/w/f.txt", "old_string": "b\n", "new_string": "B\nB2\n"}
    )
    structured = {
        "filePath": "/w/f.txt",
        "oldString": "b\n",
        "newString": "B\nB2\n",
        "originalFile": original,
        "structuredPatch": [
            {"oldStart": 1, "oldLines": 4, "newStart": 1, "newLines": 5, "lines": []}
        ],
        "userModified": False,
        "replaceAll": False,
    }
    change = only_change(edit_session(tmp_path, tool, structured))
    assert (change.path, change.operation, change.call_id) == ("/w/f.txt", "modify", "t1")
    assert change.diff == (
        "--- a//w/f.txt\n+++ b//w/f.txt\n@@ -1,4 +1,5 @@\n a\n-b\n+B\n+B2\n c\n d\n"
    )
    assert (change.anchored, change.added, change.removed) == (True, 2, 1)
    assert change.content == "a\nB\nB2\nc\nd\n"


def test_edit_with_only_the_structured_patch_keeps_its_line_numbers(tmp_path: Path) -> None:
    tool = tool_use("t1", "Edit", {"file_path": "/w/f.py", "old_string": "y", "new_string": "Y"})
    structured = {
        "filePath": "/w/f.py",
        "oldString": "y",
        "newString": "Y",
        "structuredPatch": [
            {
                "oldStart": 45,
                "oldLines": 3,
                "newStart": 45,
                "newLines": 3,
                "lines": [" x", "-y", "+Y", " z", "\\ No newline at end of file"],
            }
        ],
    }
    change = only_change(edit_session(tmp_path, tool, structured))
    assert change.diff == (
        "--- a//w/f.py\n+++ b//w/f.py\n@@ -45,3 +45,3 @@\n x\n-y\n+Y\n z\n"
        "\\ No newline at end of file\n"
    )
    assert (change.anchored, change.added, change.removed, change.content) == (True, 1, 1, None)


def test_edit_without_a_structured_result_is_an_unanchored_fragment(tmp_path: Path) -> None:
    tool = tool_use(
        "t1", "Edit", {"file_path": "/w/f.py", "old_string": "x = 1\n", "new_string": "x = 2\n"}
    )
    change = only_change(edit_session(tmp_path, tool, None))
    assert change.diff == "--- a//w/f.py\n+++ b//w/f.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"
    assert (change.anchored, change.added, change.removed) == (False, 1, 1)


def test_a_failed_edit_changes_nothing(tmp_path: Path) -> None:
    tool = tool_use("t1", "Edit", {"file_path": "/w/f.py", "old_string": "a", "new_string": "b"})
    path = edit_session(tmp_path, tool, "Error: String to replace not found in file.", ok=False)
    assert of(IMPORTER.parse(path).events, FileChange) == []


def test_multi_edit_applies_its_edits_to_the_original(tmp_path: Path) -> None:
    edits = [
        {"old_string": "one", "new_string": "ONE", "replace_all": False},
        {"old_string": "two", "new_string": "TWO", "replace_all": True},
    ]
    tool = tool_use("t1", "MultiEdit", {"file_path": "/w/m.txt", "edits": edits})
    structured = {
        "filePath": "/w/m.txt",
        "edits": edits,
        "originalFileContents": "one\ntwo\nthree\ntwo\n",
        "structuredPatch": [],
        "userModified": False,
    }
    change = only_change(edit_session(tmp_path, tool, structured))
    assert change.content == "ONE\nTWO\nthree\nTWO\n"
    assert (change.anchored, change.added, change.removed) == (True, 3, 3)


def test_write_that_creates_a_file(tmp_path: Path) -> None:
    content = "def hello():\n    return 1\n"
    tool = tool_use("t1", "Write", {"file_path": "/w/new.py", "content": content})
    structured: dict[str, Any] = {"type": "create", "filePath": "/w/new.py", "content": content}
    structured |= {"structuredPatch": [], "originalFile": None}
    change = only_change(edit_session(tmp_path, tool, structured))
    assert change.operation == "create"
    assert change.diff.startswith("--- /dev/null\n+++ b//w/new.py\n@@ -0,0 +1,2 @@\n")
    assert (change.added, change.removed, change.anchored, change.content) == (2, 0, True, content)


def test_write_that_replaces_a_file(tmp_path: Path) -> None:
    tool = tool_use("t1", "Write", {"file_path": "/w/r.md", "content": "# New\n"})
    with_original: dict[str, Any] = {"type": "update", "filePath": "/w/r.md", "content": "# New\n"}
    with_original |= {"originalFile": "# Old\n", "structuredPatch": []}
    change = only_change(edit_session(tmp_path / "a", tool, with_original))
    assert (change.operation, change.added, change.removed, change.anchored) == (
        "modify",
        1,
        1,
        True,
    )
    # Claude Code 2.0 left originalFile out: the hunks still place the change
    patch_only = {
        "type": "update",
        "filePath": "/w/r.md",
        "content": "# New\n",
        "structuredPatch": [
            {
                "oldStart": 1,
                "oldLines": 1,
                "newStart": 1,
                "newLines": 1,
                "lines": ["-# Old", "+# New"],
            }
        ],
    }
    change = only_change(edit_session(tmp_path / "b", tool, patch_only))
    assert change.diff == "--- a//w/r.md\n+++ b//w/r.md\n@@ -1,1 +1,1 @@\n-# Old\n+# New\n"
    assert (change.anchored, change.content) == (True, "# New\n")


# -- compaction, system records and the rest -----------------------------------------------


def test_compaction_boundary_and_its_summary_make_one_compaction(tmp_path: Path) -> None:
    summary = "This session is being continued from a previous conversation. Summary: ..."
    path = write(
        tmp_path / "c.jsonl",
        [
            user("u1", None, "Start", "2026-01-01T00:00:00Z"),
            {"parentUuid": None, "logicalParentUuid": "u1", **COMMON, "type": "system"}
            | {
                "subtype": "compact_boundary",
                "content": "Conversation compacted",
                "level": "info",
                "compactMetadata": {"trigger": "auto", "preTokens": 155025},
                "timestamp": "2026-01-01T00:10:00Z",
                "uuid": "c1",
            },
            user(
                "cs1",
                "c1",
                summary,
                "2026-01-01T00:10:01Z",
                isCompactSummary=True,
                isVisibleInTranscriptOnly=True,
            ),
            user("u2", "cs1", "Go on", "2026-01-01T00:11:00Z"),
            # an older summary with no boundary before it
            user(
                "cs2",
                "u2",
                [{"type": "text", "text": "Earlier summary"}],
                "t",
                isCompactSummary=True,
            ),
        ],
    )
    events = IMPORTER.parse(path).events
    compactions = of(events, Compaction)
    assert [(c.summary, c.source.line) for c in compactions] == [
        (summary, 2),
        ("Earlier summary", 5),
    ]
    assert [u.text for u in of(events, UserMessage)] == ["Start", "Go on"]


def test_micro_compaction_is_a_compaction_without_a_summary(tmp_path: Path) -> None:
    """2.1.2x clears old tool results from the context (`microcompact_boundary`, Claude Code
    2.1.22's shape): a compaction that says what it cleared; the next user record is no
    summary of it."""
    base = {**COMMON, "type": "system", "level": "info", "timestamp": "2026-01-01T00:10:00Z"}
    micro = base | {
        "parentUuid": "u1",
        "subtype": "microcompact_boundary",
        "content": "Context microcompacted",
        "microcompactMetadata": {
            "trigger": "auto",
            "preTokens": 50745,
            "tokensSaved": 26741,
            "compactedToolIds": ["toolu_1", "toolu_2", "toolu_3", "toolu_4", "toolu_5"],
        },
        "uuid": "m1",
    }
    bare = base | {"parentUuid": "u2", "subtype": "microcompact_boundary", "uuid": "m2"}
    path = write(
        tmp_path / "m.jsonl",
        [
            user("u1", None, "Start", "2026-01-01T00:00:00Z"),
            micro,
            user("u2", "m1", "Go on", "2026-01-01T00:11:00Z"),
            bare,
        ],
    )
    events = IMPORTER.parse(path).events
    assert [(c.summary, c.source.line) for c in of(events, Compaction)] == [
        ("Context microcompacted: 5 tool results cleared, 26741 of 50745 tokens saved (auto)", 2),
        ("Context microcompacted", 4),
    ]
    assert [u.text for u in of(events, UserMessage)] == ["Start", "Go on"]
    assert not of(events, RawEvent)


def test_system_records(tmp_path: Path) -> None:
    base = {**COMMON, "type": "system", "timestamp": "2026-01-01T00:00:00Z"}
    api_error = base | {
        "subtype": "api_error",
        "level": "error",
        "error": {"status": 529, "error": {"type": "error", "error": {"message": "Overloaded"}}},
        "retryInMs": 558.9,
        "retryAttempt": 1,
        "maxRetries": 10,
    }
    command = "<command-name>/model</command-name>\n<command-message>model</command-message>"
    path = write(
        tmp_path / "s.jsonl",
        [
            api_error,
            base | {"subtype": "local_command", "content": command, "level": "info"},
            base
            | {
                "subtype": "local_command",
                "content": "<local-command-stdout>ok</local-command-stdout>",
            },
            base | {"subtype": "stop_hook_summary", "hookCount": 1, "hookErrors": []},
            base
            | {"content": "Claude Opus 4 limit reached, now using Sonnet 4", "level": "warning"},
            base | {"subtype": "informational", "content": "Hook failed", "level": "error"},
            assistant(
                "a1",
                None,
                "m1",
                [{"type": "text", "text": "API Error: 529 Overloaded"}],
                "t",
                {"input_tokens": 0, "output_tokens": 0},
                model="<synthetic>",
                isApiErrorMessage=True,
                error="server_error",
            ),
        ],
    )
    events = IMPORTER.parse(path).events
    assert [e.message for e in of(events, Error)] == [
        "API error 529: Overloaded (retry 1 of 10)",
        "Hook failed",
        "API Error: 529 Overloaded",
    ]
    assert [u.text for u in of(events, UserMessage)] == [command]
    assert [r.source.line for r in of(events, RawEvent)] == [3, 4, 5]
    assert of(events, Usage) == [] and of(events, AgentMessage) == []
    assert of(events, SessionStart)[0].model is None  # the synthetic one is not the model


def test_what_a_local_command_printed_as_a_user_record_is_no_prompt(tmp_path: Path) -> None:
    """Builds before the `local_command` system records (2.0 and 2.1 to the 40s) write a
    slash command run by the harness (`/ide`, `/exit`) as user records: the caveat (isMeta),
    the command typed, and what it printed in `<local-command-stdout>` (or `-stderr`). The
    command is what the user typed, a prompt as the system record's is; its output is the
    harness's, raw as the system record's is."""
    caveat = "<local-command-caveat>Caveat: The messages below were generated by the user."
    command = "<command-name>/ide</command-name>\n<command-message>ide</command-message>"
    # A prompt that quotes such output, pasted, is the user's.
    quoted = "<local-command-stdout>MCP server failed</local-command-stdout>\n\nwhy is that?"
    records: list[Any] = [
        user("u1", None, "Start", "2026-01-22T16:00:00Z"),
        assistant("a1", "u1", "m1", [{"type": "text", "text": "Hi."}], "2026-01-22T16:00:01Z"),
        user("u2", "a1", caveat, "2026-01-22T16:01:00Z", isMeta=True),
        user("u3", "u2", command, "2026-01-22T16:01:00Z"),
        user("u4", "u3", "<local-command-stdout>Connected to VS Code.</local-command-stdout>", "t"),
        user("u5", "u4", "<local-command-stderr>Not connected</local-command-stderr>", "t"),
        user(
            "u6",
            "u5",
            [{"type": "text", "text": "<local-command-stdout>Bye!</local-command-stdout>"}],
            "t",
        ),
        user("u7", "u6", "Go on", "2026-01-22T16:02:00Z"),
        user("u8", "u7", quoted, "2026-01-22T16:03:00Z"),
    ]
    events = IMPORTER.parse(write(tmp_path / "c.jsonl", records)).events
    assert [(u.text, u.source.line) for u in of(events, UserMessage)] == [
        ("Start", 1),
        (command, 4),
        ("Go on", 8),
        (quoted, 9),
    ]
    raws = of(events, RawEvent)
    assert [r.source.line for r in raws] == [3, 5, 6, 7]
    assert {r.reason for r in raws[1:]} == {
        "output of a local command (a slash command the harness ran)"
    }
    assert of(events, Rewind) == []


def test_a_reply_the_harness_wrote_in_the_models_place_is_no_agent_message(
    tmp_path: Path,
) -> None:
    """A session resumed after a conversation that ends on a user record (here `/exit` and
    its output) gets a reply of the model `<synthetic>` the harness writes itself, "No
    response requested.", with no request behind it: raw, not something the model said,
    and no usage. A synthetic reply that is an API error stays an error."""
    zero = {"input_tokens": 0, "output_tokens": 0}
    sentinel = [{"type": "text", "text": "No response requested."}]
    limit = [{"type": "text", "text": "Claude AI usage limit reached|1751234567"}]
    command = "<command-name>/exit</command-name>\n<command-message>exit</command-message>"
    records: list[Any] = [
        user("u1", None, "Start", "2026-01-07T11:00:00Z"),
        assistant("a1", "u1", "m1", [{"type": "text", "text": "Hi."}], "2026-01-07T11:00:01Z"),
        user("u2", "a1", command, "2026-01-07T11:01:00Z"),
        user("u3", "u2", "<local-command-stdout>Bye!</local-command-stdout>", "t"),
        assistant("a2", "u3", "m2", sentinel, "2026-01-07T11:27:31Z", zero, model="<synthetic>"),
        user("u4", "a2", "Go on", "2026-01-07T11:28:00Z"),
        assistant("a3", "u4", "m3", [{"type": "text", "text": "On it."}], "2026-01-07T11:28:01Z"),
        user("u5", "a3", "And?", "2026-01-07T11:29:00Z"),
        assistant("a4", "u5", "m4", limit, "2026-01-07T11:29:01Z", zero, model="<synthetic>"),
    ]
    events = IMPORTER.parse(write(tmp_path / "r.jsonl", records)).events
    # An earlier build's error without `isApiErrorMessage`, in the same words.
    assert [e.message for e in of(events, Error)] == ["Claude AI usage limit reached|1751234567"]
    assert [(m.text, m.model) for m in of(events, AgentMessage)] == [
        ("Hi.", MODEL),
        ("On it.", MODEL),
    ]
    synthetic = [r for r in of(events, RawEvent) if r.source.line == 5]
    assert [r.reason for r in synthetic] == [
        "reply the harness wrote in the model's place (no request)"
    ]
    assert len(of(events, Usage)) == 2 and of(events, Rewind) == []
    assert of(events, SessionStart)[0].model == MODEL


def test_records_without_an_event_of_their_own_are_kept(tmp_path: Path) -> None:
    progress = {**COMMON, "type": "progress", "timestamp": "t", "parentToolUseID": "x"}
    attachment = {**COMMON, "type": "attachment", "timestamp": "t"}
    records: list[Any] = [
        {"type": "file-history-snapshot", "messageId": "m", "snapshot": {"trackedFileBackups": {}}},
        {"type": "queue-operation", "operation": "enqueue", "content": "also x", "sessionId": SID},
        {"type": "last-prompt", "lastPrompt": "do it", "sessionId": SID},
        {"type": "permission-mode", "permissionMode": "plan", "sessionId": SID},
        {"type": "ai-title", "aiTitle": "Generated title", "sessionId": SID},
        {"type": "custom-title", "customTitle": "My title", "sessionId": SID},
        progress | {"data": {"type": "hook_progress", "hookEvent": "Stop", "command": "x"}},
        progress | {"data": {"type": "bash_progress", "output": "building...", "totalLines": 1}},
        attachment | {"attachment": {"type": "hook_success", "stdout": "ok", "exitCode": 0}},
        attachment | {"attachment": {"type": "skill_listing", "content": "- a skill"}},
        attachment
        | {
            "attachment": {
                "type": "queued_command",
                "prompt": "and the tests",
                "commandMode": "prompt",
            }
        },
        attachment
        | {
            "attachment": {
                "type": "queued_command",
                "prompt": "<task-notification>done</task-notification>",
                "commandMode": "task-notification",
            }
        },
        user("m1", None, "<local-command-caveat>Caveat</local-command-caveat>", "t", isMeta=True),
        {"type": "brand-new-kind", "sessionId": SID},
        {"no": "type"},
        [1, 2],
        '"just a string"',
        file_history_delta("m", "src/app.py"),
        {"type": "pr-link", "prNumber": 7, "prUrl": "https://x.test/o/r/pull/7", "sessionId": SID},
    ]
    events = IMPORTER.parse(write(tmp_path / "k.jsonl", records)).events
    raws = of(events, RawEvent)
    assert len(raws) == len(records) - 1  # all but the queued prompt
    by_line = {raw.source.line: raw for raw in raws}
    assert by_line[1].record["type"] == "file-history-snapshot"
    assert by_line[18].record["type"] == "file-history-delta"
    assert by_line[18].reason == "file history delta (one file's backup for rewinding edits)"
    assert by_line[19].reason == "pull request the session is linked to"
    assert "progress" in (by_line[8].reason or "")
    assert by_line[16].record == [1, 2] and by_line[17].record == "just a string"
    assert "unknown record type" in (by_line[14].reason or "")
    assert "no type" in (by_line[15].reason or "")
    assert "isMeta" in (by_line[13].reason or "")
    assert [(u.text, u.source.line) for u in of(events, UserMessage)] == [("and the tests", 11)]
    assert of(events, SessionStart)[0].title == "My title"


def test_a_prompt_the_running_turn_absorbed_is_a_prompt_once(tmp_path: Path) -> None:
    """A prompt typed while the agent works and absorbed into its turn leaves an `enqueue`, a
    `remove` of reason `absorbed_mid_turn` and (in some builds, before or after the remove) a
    queued_command attachment: one prompt, from whichever holds it first. A task's
    notification absorbed so is no prompt, nor is a remove with no reason."""

    def queue(operation: str, content: str, **extra: Any) -> dict[str, Any]:
        return {"type": "queue-operation", "operation": operation, "timestamp": "t"} | {
            "content": content,
            "sessionId": SID,
            **extra,
        }

    def queued(prompt: str, mode: str = "prompt") -> dict[str, Any]:
        attachment = {"type": "queued_command", "prompt": prompt, "commandMode": mode}
        return {**COMMON, "type": "attachment", "timestamp": "t", "attachment": attachment}

    absorbed = {"reason": "absorbed_mid_turn"}
    notice = "<task-notification>build done</task-notification>"
    records: list[Any] = [
        user("u1", None, "Fix the parser.", "t"),
        queue("enqueue", "only in the queue"),
        queue("remove", "only in the queue", **absorbed),  # 3
        queue("enqueue", "attachment first"),
        queued("attachment first"),  # 5
        queue("remove", "attachment first", **absorbed),
        queue("enqueue", "queue first"),
        queue("remove", "queue first", **absorbed),  # 8
        queued("queue first"),
        queue("remove", "a notice in prompt's words", **absorbed),
        queued("a notice in prompt's words", "task-notification"),
        queue("remove", notice, **absorbed),
        queue("remove", "withdrawn"),
    ]
    events = IMPORTER.parse(write(tmp_path / "q.jsonl", records)).events
    assert [(u.text, u.source.line) for u in of(events, UserMessage)] == [
        ("Fix the parser.", 1),
        ("only in the queue", 3),
        ("attachment first", 5),
        ("queue first", 8),
    ]
    assert len(of(events, RawEvent)) == len(records) - 4


def test_a_remove_naming_its_text_without_a_reason_is_no_prompt(tmp_path: Path) -> None:
    """Builds that write a removed entry's text say why in `reason` (`absorbed_mid_turn`,
    `dropped_by_hook`); a `remove` naming its text without one is no prompt: the prompt,
    when it reached the model, comes with its own record after it, the queued_command
    attachment (as for every removed message of anthropics/claude-code#88357) or its user
    record (sent as a prompt of its own), and one withdrawn comes with none."""

    def queue(operation: str, content: str) -> dict[str, Any]:
        record = {"type": "queue-operation", "operation": operation, "timestamp": "t"}
        return record | {"sessionId": SID, "content": content}

    attachment = {"type": "queued_command", "prompt": "and the docs", "commandMode": "prompt"}
    records: list[Any] = [
        user("u1", None, "Fix the trailer.", "t"),
        queue("enqueue", "and the docs"),
        queue("remove", "and the docs"),
        {**COMMON, "type": "attachment", "timestamp": "t", "attachment": attachment},  # 4
        queue("enqueue", "then commit"),
        queue("remove", "then commit"),
        user("u2", "u1", "then commit", "t"),  # 7
        queue("enqueue", "never mind"),
        queue("remove", "never mind"),
    ]
    events = IMPORTER.parse(write(tmp_path / "q.jsonl", records)).events
    assert [(u.text, u.source.line) for u in of(events, UserMessage)] == [
        ("Fix the trailer.", 1),
        ("and the docs", 4),
        ("then commit", 7),
    ]
    assert [r.source.line for r in of(events, RawEvent)] == [2, 3, 5, 6, 8, 9]


def test_a_prompt_only_an_enqueue_and_a_bare_remove_hold_is_a_prompt(tmp_path: Path) -> None:
    """Builds up to 2.1.42 write a prompt the running turn took in only as an `enqueue` and,
    when the turn takes it, a `remove` naming nothing: a prompt, where the remove stands.
    A remove takes what waits longest but a task's notification; a slash command stays
    raw, as does a prompt popped back into the input box (`popAll`); one sent as a prompt
    of its own (`dequeue`, or a remove naming it) is its user record, and off the queue."""

    def queue(operation: str, content: str | None = None, **extra: Any) -> dict[str, Any]:
        record = {"type": "queue-operation", "operation": operation, "timestamp": "t"}
        named = {} if content is None else {"content": content}
        return record | {"sessionId": SID} | named | extra

    notice = "<task-notification>build done</task-notification>"
    reply = assistant("a2", "u2", "m2", [{"type": "text", "text": "The trailer, then."}], "t")
    records: list[Any] = [
        user("u1", None, "Fix the trailer.", "t"),
        assistant("a1", "u1", "m1", [tool_use("toolu_1", "Bash", {"command": "git log"})], "t"),
        user("u2", "a1", [result("toolu_1", "abc123 first")], "t"),
        queue("enqueue", "it's not adding the trailer properly??"),
        reply,
        queue("remove"),  # 6
        queue("enqueue", "/help"),
        queue("remove"),
        queue("enqueue", "can we do this in a subagent?"),
        queue("popAll", "can we do this in a subagent?"),
        queue("enqueue", "/compact"),
        queue("dequeue"),
        queue("enqueue", "and the tests"),
        queue("remove", "and the tests", reason="absorbed_mid_turn"),  # 14
        queue("enqueue", notice),
        queue("enqueue", "why is this different for gemini?"),
        queue("remove"),  # 17
        queue("enqueue", "then commit"),
        queue("dequeue"),
        user("u3", "a2", "then commit", "t"),  # 20
        queue("enqueue", "and push"),
        queue("remove", "and push"),
        user("u4", "u3", "and push", "t"),  # 23
        queue("remove"),
    ]
    events = IMPORTER.parse(write(tmp_path / "q.jsonl", records)).events
    assert [(u.text, u.source.line) for u in of(events, UserMessage)] == [
        ("Fix the trailer.", 1),
        ("it's not adding the trailer properly??", 6),
        ("and the tests", 14),
        ("why is this different for gemini?", 17),
        ("then commit", 20),
        ("and push", 23),
    ]
    raws = of(events, RawEvent)
    queued = [4, 7, 8, 9, 10, 11, 12, 13, 15, 16, 18, 19, 21, 22, 24]
    assert [r.source.line for r in raws] == queued


def test_the_removes_of_one_drain_of_the_queue_follow_the_queue_order(tmp_path: Path) -> None:
    """A turn that takes in several entries of the queue at once writes a bare `remove` for
    each, one after another, in the order the queue holds them; it takes typed prompts
    before the harness's notifications, which stay queued when it takes one entry alone
    (a public 2.1.37 session: a prompt queued after two task notifications was taken by one
    remove, the notifications sent later as user records). So the prompt of a drain that
    took a notification queued before it is the second remove, not the first."""

    def queue(operation: str, content: str | None = None) -> dict[str, Any]:
        record = {"type": "queue-operation", "operation": operation, "timestamp": "t"}
        return record | {"sessionId": SID} | ({} if content is None else {"content": content})

    first = "<task-notification>lint done</task-notification>"
    second = "<task-notification>tests done</task-notification>"
    records: list[Any] = [
        user("u1", None, "Fix the trailer.", "t"),
        queue("enqueue", first),
        queue("enqueue", "and the docs"),
        queue("enqueue", "/model"),
        queue("enqueue", "then commit"),
        queue("remove"),
        queue("remove"),
        queue("remove"),
        queue("remove"),  # 9
        queue("enqueue", second),
        queue("enqueue", "why is this slow?"),
        queue("remove"),  # 12
        user("u2", "u1", second, "t"),
    ]
    events = IMPORTER.parse(write(tmp_path / "q.jsonl", records)).events
    assert [(u.text, u.source.line) for u in of(events, UserMessage)] == [
        ("Fix the trailer.", 1),
        ("and the docs", 7),
        ("then commit", 9),
        ("why is this slow?", 12),
    ]
    raws = of(events, RawEvent)
    assert [r.source.line for r in raws] == [2, 3, 4, 5, 6, 8, 10, 11, 13]
    assert [r.record for r in raws if r.source.line in (6, 8)] == [queue("remove")] * 2


def test_a_drain_put_in_queue_order_stays_so_as_its_removes_go_on(tmp_path: Path) -> None:
    """A drain whose second remove already put its entries in the queue's order (a prompt
    taken past a notification queued before it) keeps that order when a third remove takes
    an entry queued after both."""

    def queue(operation: str, content: str | None = None) -> dict[str, Any]:
        record = {"type": "queue-operation", "operation": operation, "timestamp": "t"}
        return record | {"sessionId": SID} | ({} if content is None else {"content": content})

    records: list[Any] = [
        user("u1", None, "Fix the trailer.", "t"),
        queue("enqueue", "<task-notification>lint done</task-notification>"),
        queue("enqueue", "and the docs"),
        queue("enqueue", "<task-notification>tests done</task-notification>"),
        queue("remove"),
        queue("remove"),  # 6
        queue("remove"),
    ]
    events = IMPORTER.parse(write(tmp_path / "q.jsonl", records)).events
    assert [(u.text, u.source.line) for u in of(events, UserMessage)] == [
        ("Fix the trailer.", 1),
        ("and the docs", 6),
    ]
    assert [r.source.line for r in of(events, RawEvent)] == [2, 3, 4, 5, 7]


def test_a_hook_that_blocked_stopped_or_failed_is_an_error_with_its_words(tmp_path: Path) -> None:
    """2.1 builds write a hook's refusal (a PreToolUse hook exiting 2, a Stop hook sending the
    agent back to work) as a `hook_blocking_error` attachment, a PostToolUse hook ending the
    turn as `hook_stopped_continuation`, a hook that could not run as
    `hook_error_during_execution`: errors with the words the agent was given, so a reader
    sees why the agent changed course. Other hook results stay raw."""
    attachment = {**COMMON, "type": "attachment", "timestamp": "t"}
    blocked = {
        "type": "hook_blocking_error",
        "hookName": "PreToolUse:Bash",
        "toolUseID": "toolu_1",
        "hookEvent": "PreToolUse",
        "blockingError": {"blockingError": "rm -rf is not allowed here", "command": "guard.sh"},
    }
    stopped = {
        "type": "hook_stopped_continuation",
        "message": "Build broken: fix it before going on",
        "hookName": "PostToolUse:Edit",
        "toolUseID": "toolu_2",
        "hookEvent": "PostToolUse",
    }
    failed = {
        "type": "hook_error_during_execution",
        "hookName": "PostToolUse:Write",
        "hookEvent": "PostToolUse",
        "content": "Failed with non-blocking status code: /bin/sh: prettier: not found",
        "command": "prettier --write",
    }
    records: list[Any] = [
        attachment | {"attachment": blocked},
        attachment | {"attachment": {"type": "hook_blocking_error", "hookEvent": "Stop"}},
        attachment | {"attachment": {"type": "hook_non_blocking_error", "hookEvent": "Stop"}},
        attachment | {"attachment": stopped},
        attachment | {"attachment": failed},
    ]
    events = IMPORTER.parse(write(tmp_path / "h.jsonl", records)).events
    assert [(e.message, e.interrupt, e.source.line) for e in of(events, Error)] == [
        ("PreToolUse:Bash hook blocked: rm -rf is not allowed here", False, 1),
        ("Stop hook blocked", False, 2),
        ("PostToolUse:Edit hook stopped the turn: Build broken: fix it before going on", False, 4),
        (
            "PostToolUse:Write hook failed: Failed with non-blocking status code: /bin/sh: "
            "prettier: not found",
            False,
            5,
        ),
    ]
    assert [r.reason for r in of(events, RawEvent)] == ["attachment (hook_non_blocking_error)"]


def test_a_prompt_a_hook_stopped_is_followed_by_an_error_not_a_prompt(tmp_path: Path) -> None:
    """A UserPromptSubmit hook that stops the turn (`continue: false`) keeps the prompt and
    has the harness answer it with a user record of its own, `Operation stopped by hook:`
    and the hook's reason: an error, the model never saw it. The same words typed as a
    prompt later (a user asking about them) are a prompt."""
    stop = "Operation stopped by hook: Another session is active"
    records: list[Any] = [
        user("u1", None, "fix tests", "2026-02-03T00:25:13.595Z"),
        user("u2", "u1", stop, "2026-02-03T00:25:14.150Z"),
        user("u3", "u2", "fix tests", "2026-02-03T00:25:21.762Z"),
        user("u4", "u3", "Operation stopped by hook", "2026-02-03T00:25:22.000Z"),
        assistant("a1", "u4", "msg_1", [{"type": "text", "text": "Done."}], "2026-02-03T00:26Z"),
        user("u5", "a1", f"what does {stop!r} mean?", "2026-02-03T00:27:00.000Z"),
        assistant("a2", "u5", "msg_2", [{"type": "text", "text": "A hook."}], "2026-02-03T00:27Z"),
        user("u6", "a2", stop + " (it says so again)", "2026-02-03T00:28:00.000Z"),
        user("u7", "u6", [{"type": "text", "text": stop}], "2026-02-03T00:29:00.000Z"),
        user("u8", "u7", "go", "2026-02-03T00:30:00.000Z"),
        user("u9", "u8", [{"type": "text", "text": "[Request interrupted by user]"}], "t"),
        user("u10", "u9", stop + "\n\nwhy?", "2026-02-03T00:31:00.000Z"),
    ]
    events = IMPORTER.parse(write(tmp_path / "s.jsonl", records)).events
    assert [(e.message, e.interrupt, e.source.line) for e in of(events, Error)] == [
        (stop, False, 2),
        ("Operation stopped by hook", False, 4),
        (stop, False, 9),  # its content a list of text blocks
        ("[Request interrupted by user]", True, 11),
    ]
    # After an interruption (no prompt) the same words are what the user typed.
    assert [u.source.line for u in of(events, UserMessage)] == [1, 3, 6, 8, 10, 12]


def test_an_agent_stopped_at_its_turn_limit_is_an_error(tmp_path: Path) -> None:
    """A `max_turns_reached` attachment (2.1 builds: a subagent, or a run given --max-turns,
    hit its cap) ends the run short of its answer: an error saying so, not an interrupt
    (which says the user stopped it)."""
    attachment = {**COMMON, "type": "attachment", "timestamp": "t"}
    records: list[Any] = [
        attachment | {"attachment": {"type": "max_turns_reached", "maxTurns": 8, "turnCount": 8}},
        attachment | {"attachment": {"type": "max_turns_reached"}},
    ]
    events = IMPORTER.parse(write(tmp_path / "m.jsonl", records)).events
    assert [(e.message, e.interrupt) for e in of(events, Error)] == [
        ("stopped at its turn limit (8 turns)", False),
        ("stopped at its turn limit", False),
    ]


# -- subagents -----------------------------------------------------------------------------


def subagent_record(agent_id: str, uuid: str, parent: str | None, content: Any, ts: str) -> Any:
    return user(uuid, parent, content, ts, isSidechain=True, agentId=agent_id)


def test_subagent_files_follow_the_call_that_started_them(tmp_path: Path) -> None:
    session = write(
        tmp_path / f"{SID}.jsonl",
        [
            user("u1", None, "Survey the repo", "2026-01-01T00:00:00Z"),
            assistant(
                "a1",
                "u1",
                "m1",
                [
                    tool_use(
                        "toolu_web",
                        "Agent",
                        {
                            "description": "Survey web",
                            "prompt": "Survey src/web.",
                            "subagent_type": "x",
                        },
                    ),
                    tool_use(
                        "toolu_jobs",
                        "Task",
                        {"description": "Survey jobs", "prompt": "Survey src/jobs."},
                    ),
                ],
                "2026-01-01T00:00:01Z",
            ),
            user(
                "r1",
                "a1",
                [result("toolu_web", [{"type": "text", "text": "Web is fine."}])],
                "2026-01-01T00:01:00Z",
                toolUseResult={"status": "completed", "agentId": "aweb1", "totalTokens": 10},
            ),
            user(
                "r2",
                "r1",
                [result("toolu_jobs", "Jobs are fine.")],
                "2026-01-01T00:01:01Z",
            ),
        ],
    )
    folder = tmp_path / SID / "subagents"
    write(
        folder / "agent-aweb1.jsonl",
        [
            subagent_record("aweb1", "w1", None, "Survey src/web.", "2026-01-01T00:00:02Z"),
            assistant(
                "w2",
                "w1",
                "mw",
                [
                    tool_use(
                        "tw",
                        "Write",
                        {"file_path": "/work/app/NOTES.md", "content": "notes\n"},
                    )
                ],
                "2026-01-01T00:00:03Z",
                isSidechain=True,
                agentId="aweb1",
            ),
            subagent_record(
                "aweb1",
                "w3",
                "w2",
                [result("tw", "File created successfully at: /work/app/NOTES.md")],
                "2026-01-01T00:00:04Z",
            )
            | {
                "toolUseResult": {
                    "type": "create",
                    "filePath": "/work/app/NOTES.md",
                    "content": "notes\n",
                }
            },
        ],
    )
    (folder / "agent-aweb1.meta.json").write_text(
        json.dumps({"agentType": "general-purpose", "description": "Web survey (meta)"})
    )
    # matched by its prompt: the call's result does not name it
    write(
        folder / "agent-ajobs2.jsonl",
        [subagent_record("ajobs2", "j1", None, "Survey src/jobs.", "t")],
    )
    # started by no call of this session
    write(
        folder / "agent-aprompt_suggestion-1.jsonl",
        [subagent_record("x", "s1", None, "Suggest", "t")],
    )

    parsed = IMPORTER.parse(session)
    events = parsed.events
    assert set(parsed.sources) == {
        f"{SID}.jsonl",
        f"{SID}/subagents/agent-aweb1.jsonl",
        f"{SID}/subagents/agent-ajobs2.jsonl",
        f"{SID}/subagents/agent-aprompt_suggestion-1.jsonl",
    }
    subagents = of(events, Subagent)
    assert [(s.agent_id, s.call_id, s.description, s.agent) for s in subagents] == [
        ("aweb1", "toolu_web", "Web survey (meta)", None),
        ("ajobs2", "toolu_jobs", "Survey jobs", None),
        ("aprompt_suggestion-1", None, None, None),
    ]
    web = events.index(subagents[0])
    assert call_ids(events[web - 1 : web]) == ["toolu_web"]
    web_events = events[web + 1 : web + 1 + 6]
    assert kinds(web_events) == [
        "user_message",
        "tool_call",
        "usage",
        "tool_result",
        "file_change",
        "tool_call",  # the second call of the same reply, then its subagent
    ]
    assert all(e.agent == "aweb1" for e in web_events[:5])
    assert web_events[0].source.file == f"{SID}/subagents/agent-aweb1.jsonl"
    assert web_events[0].source.line == 1
    notes = web_events[4]
    assert isinstance(notes, FileChange)
    assert (notes.path, notes.operation, notes.call_id) == ("/work/app/NOTES.md", "create", "tw")
    jobs = events.index(subagents[1])
    assert call_ids(events[jobs - 1 : jobs]) == ["toolu_jobs"]
    assert events[jobs + 1].agent == "ajobs2"
    assert isinstance(events[-1], SessionEnd)
    assert events[-2].agent == "aprompt_suggestion-1"
    assert all(e.session == SID for e in events)


def test_the_copy_of_the_conversation_a_compaction_agent_starts_with_is_left_out(
    tmp_path: Path,
) -> None:
    """The compaction agent's file (`agent-acompact-<id>.jsonl`, as the side question's) holds
    every record of the main conversation again, same uuids, before its own prompt and
    answer (public 2.1.8x sessions: 190 of 193 records copied): read as the subagent's, the
    calls, file changes and token counts of the conversation came twice. The copy is counted
    in `copied_history`; the agent's own request stays."""
    write_call = tool_use("tw", "Write", {"file_path": "/work/app/a.txt", "content": "a\n"})
    main = [
        user("u1", None, "write a", "2026-03-31T01:00:00Z"),
        assistant("a1", "u1", "m1", [write_call], "2026-03-31T01:00:01Z"),
        user("r1", "a1", [result("tw", "File created successfully")], "2026-03-31T01:00:02Z")
        | {"toolUseResult": {"type": "create", "filePath": "/work/app/a.txt", "content": "a\n"}},
    ]
    later = user("u2", "r1", "and b", "2026-03-31T01:06:00Z")
    session = write(tmp_path / f"{SID}.jsonl", [*main, later])
    copy = [record | {"isSidechain": True, "agentId": "acompact-1f2e"} for record in main]
    own = [
        subagent_record(
            "acompact-1f2e", "c1", "r1", "Summarize the conversation.", "2026-03-31T01:04:59Z"
        ),
        assistant(
            "c2",
            "c1",
            "mc",
            [{"type": "text", "text": "<summary>a was written</summary>"}],
            "2026-03-31T01:05:00Z",
            usage={"input_tokens": 7, "output_tokens": 40},
            isSidechain=True,
            agentId="acompact-1f2e",
        ),
    ]
    write(tmp_path / SID / "subagents" / "agent-acompact-1f2e.jsonl", copy + own)
    parsed = IMPORTER.parse(session)
    agent = [e for e in parsed.events if e.agent == "acompact-1f2e"]
    assert kinds(agent) == ["user_message", "agent_message", "usage"]
    assert [(c.call_id, c.agent) for c in of(parsed.events, ToolCall)] == [("tw", None)]
    assert len(of(parsed.events, FileChange)) == 1
    assert [u.output_tokens for u in of(parsed.events, Usage)] == [3, 40]
    assert parsed.dropped["copied_history"] == 3
    # No call started it: it stands where it ran, before the prompt written after it.
    start = next(e for e in parsed.events if isinstance(e, Subagent))
    prompts = of(parsed.events, UserMessage)
    assert [p.text for p in prompts if p.agent is None] == ["write a", "and b"]
    assert parsed.events.index(start) < parsed.events.index(prompts[-1])
    assert parsed.events.index(agent[-1]) < parsed.events.index(prompts[-1])


def test_a_subagent_of_a_subagent_and_an_unreadable_subagent_file(tmp_path: Path) -> None:
    session = write(
        tmp_path / f"{SID}.jsonl",
        [
            assistant("a1", None, "m1", [tool_use("t1", "Agent", {"prompt": "Plan"})], "t"),
            user(
                "r1",
                "a1",
                [result("t1", "agentId: aouter (use SendMessage to continue)")],
                "t",
            ),
        ],
    )
    folder = tmp_path / SID / "subagents"
    write(
        folder / "agent-aouter.jsonl",
        [
            subagent_record("aouter", "o1", None, "Plan", "t"),
            assistant("o2", "o1", "mo", [tool_use("t2", "Agent", {"prompt": "Dig"})], "t"),
            subagent_record("aouter", "o3", "o2", [result("t2", "dug")], "t")
            | {"toolUseResult": {"status": "completed", "agentId": "ainner"}},
        ],
    )
    write(folder / "agent-ainner.jsonl", [subagent_record("ainner", "i1", None, "Dig", "t")])
    (folder / "agent-broken.jsonl").mkdir()
    parsed = IMPORTER.parse(session)
    assert [(s.agent_id, s.call_id, s.agent) for s in of(parsed.events, Subagent)] == [
        ("aouter", "t1", None),
        ("ainner", "t2", "aouter"),
    ]
    assert [(e.kind, e.agent) for e in parsed.events if e.kind != "usage"][1:9] == [
        ("tool_call", None),
        ("subagent", None),
        ("user_message", "aouter"),
        ("tool_call", "aouter"),
        ("subagent", "aouter"),
        ("user_message", "ainner"),
        ("tool_result", "aouter"),
        ("tool_result", None),
    ]
    (problem,) = parsed.problems
    assert problem.source == f"{SID}/subagents/agent-broken.jsonl"


def test_older_agent_files_beside_the_session_file(tmp_path: Path) -> None:
    """Claude Code 2.0 wrote `agent-<id>.jsonl` next to the session file; the Task result's
    toolUseResult names the agent."""
    session = write(
        tmp_path / f"{SID}.jsonl",
        [
            assistant(
                "a1",
                None,
                "m1",
                [tool_use("t1", "Task", {"prompt": "Look", "description": "Look around"})],
                "t",
            ),
            user(
                "r1",
                "a1",
                [result("t1", [{"type": "text", "text": "Done"}])],
                "t",
                toolUseResult={"status": "completed", "agentId": "c8d9b115", "prompt": "Look"},
            ),
        ],
    )
    write(tmp_path / "agent-c8d9b115.jsonl", [subagent_record("c8d9b115", "s1", None, "Look", "t")])
    other = dict(subagent_record("0000aaaa", "o1", None, "Look", "t"), sessionId="another-session")
    write(tmp_path / "agent-0000aaaa.jsonl", [other])
    parsed = IMPORTER.parse(session)
    (subagent,) = of(parsed.events, Subagent)
    assert (subagent.agent_id, subagent.call_id, subagent.description) == (
        "c8d9b115",
        "t1",
        "Look around",
    )
    assert set(parsed.sources) == {f"{SID}.jsonl", "agent-c8d9b115.jsonl"}
    assert [u.agent for u in of(parsed.events, UserMessage)] == ["c8d9b115"]


def test_a_background_agent_without_records_still_starts(tmp_path: Path) -> None:
    """2.1.x launches a Task with `run_in_background` and returns at once (`isAsync`,
    `status: async_launched`); when the session keeps no file and no progress of that agent,
    its start still follows the call, as a subagent's whose records a file holds does (a
    real 2.1.37 session launched three of six so), with no events of its own; a call that
    failed starts none."""
    task = {"description": "Refactor the parser", "prompt": "Do it", "run_in_background": True}
    launched = {
        "isAsync": True,
        "status": "async_launched",
        "agentId": "af9e8ed",
        "description": "Refactor the parser",
    }
    session = write(
        tmp_path / f"{SID}.jsonl",
        [
            assistant("a1", None, "m1", [tool_use("t1", "Task", task)], "2026-02-01T10:00:00Z"),
            user(
                "r1",
                "a1",
                [result("t1", "Async agent launched successfully.\nagentId: af9e8ed")],
                "2026-02-01T10:00:01Z",
                toolUseResult=launched,
            ),
            assistant(
                "a2", "r1", "m2", [{"type": "text", "text": "Started."}], "2026-02-01T10:00:02Z"
            ),
        ],
    )
    events = IMPORTER.parse(session).events
    assert [e.kind for e in events if e.kind != "usage"][1:-1] == [
        "tool_call",
        "subagent",
        "tool_result",
        "agent_message",
    ]
    (subagent,) = of(events, Subagent)
    assert (subagent.agent_id, subagent.call_id, subagent.description, subagent.agent) == (
        "af9e8ed",
        "t1",
        "Refactor the parser",
        None,
    )
    assert subagent.source.line == 1
    assert not [e for e in events if e.agent == "af9e8ed"]
    failed = [
        assistant("a1", None, "m1", [tool_use("t1", "Task", task)], "2026-02-01T10:00:00Z"),
        user(
            "r1",
            "a1",
            [result("t1", "Agent failed to start.\nagentId: af9e8ed", is_error=True)],
            "2026-02-01T10:00:01Z",
        ),
    ]
    events = IMPORTER.parse(write(tmp_path / "failed" / f"{SID}.jsonl", failed)).events
    assert not of(events, Subagent)


def test_agent_files_of_the_session_that_no_call_names(tmp_path: Path) -> None:
    """Claude Code 2.0 warms its Explore and Plan agents' cache when a session starts: a
    request of their own, answered in an `agent-<id>.jsonl` beside the session file that no
    Task call names. Its tokens were spent, so it is a subagent no call started."""
    session = write(
        tmp_path / f"{SID}.jsonl",
        [
            user("u1", None, "Fix the queue", "2025-11-19T22:54:26Z"),
            assistant(
                "a1", "u1", "m1", [{"type": "text", "text": "On it."}], "2025-11-19T22:54:40Z"
            ),
        ],
    )
    warmup = assistant(
        "w1",
        None,
        "mw",
        [{"type": "text", "text": "Ready to search the codebase."}],
        "2025-11-19T22:54:30Z",
        usage={"input_tokens": 601, "output_tokens": 161},
        model="claude-haiku-4-5-20251001",
    )
    write(
        tmp_path / "agent-e52c839d.jsonl", [warmup | {"isSidechain": True, "agentId": "e52c839d"}]
    )
    other = dict(subagent_record("0000aaaa", "o1", None, "Look", "t"), sessionId="another-session")
    write(tmp_path / "agent-0000aaaa.jsonl", [other])
    parsed = IMPORTER.parse(session)
    assert set(parsed.sources) == {f"{SID}.jsonl", "agent-e52c839d.jsonl"}
    assert kinds(parsed.events) == [
        "session_start",
        "user_message",
        "subagent",
        "agent_message",
        "usage",
        "agent_message",
        "usage",
        "session_end",
    ]
    subagent = of(parsed.events, Subagent)[0]
    assert (subagent.agent_id, subagent.call_id, subagent.agent) == ("e52c839d", None, None)
    warm = of(parsed.events, Usage)[0]
    assert (warm.agent, warm.input_tokens, warm.output_tokens) == ("e52c839d", 601, 161)


def test_inline_sidechain_records_are_a_subagent(tmp_path: Path) -> None:
    """Claude Code 1.0 wrote a Task's conversation into the session file, marked
    isSidechain, starting with the Task's prompt."""
    sidechain = {"isSidechain": True}
    path = write(
        tmp_path / "old.jsonl",
        [
            user("u1", None, "Debug the test", "t"),
            assistant(
                "a1",
                "u1",
                "m1",
                [
                    tool_use(
                        "t1", "Task", {"description": "Debug", "prompt": "Find why test_x fails."}
                    )
                ],
                "t",
            ),
            user("s1", None, "Find why test_x fails.", "t") | sidechain,
            assistant("s2", "s1", "m2", [tool_use("t2", "Read", {"file_path": "/w/t.py"})], "t")
            | sidechain,
            user("s3", "s2", [result("t2", "def test_x(): ...")], "t") | sidechain,
            # its parent record is missing from the file: still the same subagent
            assistant("s5", "s4", "m3", [{"type": "text", "text": "It fails because..."}], "t")
            | sidechain,
            user("r1", "a1", [result("t1", "It fails because...")], "t"),
            assistant("a2", "r1", "m4", [{"type": "text", "text": "Fixed."}], "t"),
        ],
    )
    events = IMPORTER.parse(path).events
    (subagent,) = of(events, Subagent)
    assert (subagent.agent_id, subagent.call_id, subagent.description) == (
        "sidechain-1",
        "t1",
        "Debug",
    )
    assert subagent.source.line == 3
    index = events.index(subagent)
    assert events[index - 2].kind == "tool_call"  # the Task call, then its usage
    inside = [e for e in events if e.agent == "sidechain-1"]
    assert [e.source.line for e in inside] == [3, 4, 4, 5, 6, 6]
    assert of(events, UserMessage)[0].agent is None
    assert of(events, AgentMessage)[-1].agent is None


def test_agent_progress_is_the_subagent_when_it_has_no_file(tmp_path: Path) -> None:
    def progress(agent_id: str, nested: dict[str, Any]) -> dict[str, Any]:
        data = {
            "type": "agent_progress",
            "agentId": agent_id,
            "prompt": "Explore",
            "message": nested,
        }
        return {**COMMON, "type": "progress", "data": data, "parentToolUseID": "t1"} | {
            "toolUseID": "agent_msg_1",
            "timestamp": "2026-01-01T00:00:05Z",
        }

    nested_user = {"type": "user", "message": {"role": "user", "content": "Explore"}, "uuid": "n1"}
    nested_reply = {
        "type": "assistant",
        "timestamp": "2026-01-01T00:00:06Z",
        "message": {"id": "mn", "model": MODEL, "content": [{"type": "text", "text": "Explored."}]},
    }
    path = write(
        tmp_path / f"{SID}.jsonl",
        [
            assistant(
                "a1",
                None,
                "m1",
                [tool_use("t1", "Task", {"prompt": "Explore", "description": "Explore it"})],
                "t",
            ),
            progress("a123", nested_user),
            progress("a123", nested_reply),
            progress("afile", nested_user),
            user("r1", "a1", [result("t1", "Explored.")], "t"),
        ],
    )
    write(
        tmp_path / SID / "subagents" / "agent-afile.jsonl",
        [subagent_record("afile", "f1", None, "Other", "t")],
    )
    events = IMPORTER.parse(path).events
    # afile has its own file: it follows the Task call; a123 starts at its first progress
    assert [s.agent_id for s in of(events, Subagent)] == ["afile", "a123"]
    mapped = of(events, Subagent)[1]
    assert (mapped.agent_id, mapped.call_id, mapped.description, mapped.source.line) == (
        "a123",
        "t1",
        "Explore it",
        2,
    )
    assert [(e.kind, e.source.line, e.time) for e in events if e.agent == "a123"] == [
        ("user_message", 2, "2026-01-01T00:00:05Z"),
        ("agent_message", 3, "2026-01-01T00:00:06Z"),
    ]
    (raw,) = of(events, RawEvent)  # afile's progress: its own file has the message
    assert raw.source.line == 4


# -- odd input -----------------------------------------------------------------------------


def test_truncated_lines_invalid_utf8_and_a_huge_record(tmp_path: Path) -> None:
    huge_output = "line of output\n" * 150_000  # 2.2 MB in one record
    records: list[Any] = [
        assistant("a1", None, "m1", [tool_use("t1", "Bash", {"command": "cat big.log"})], "t"),
        user("r1", "a1", [result("t1", huge_output)], "t"),
        json.dumps(user("u2", "r1", "caf@", "t")).encode().replace(b"@", b"\xe9"),  # Latin-1
        '{"parentUuid": "u2", "type": "assistant", "message": {"content": [{"type": "te',
    ]
    path = write(tmp_path / "odd.jsonl", records)
    assert path.stat().st_size > 2_000_000
    parsed = IMPORTER.parse(path)
    assert of(parsed.events, ToolResult)[0].output == huge_output
    assert of(parsed.events, UserMessage)[0].text == "caf\ufffd"
    latin, truncated = parsed.problems
    assert (latin.source, latin.line) == ("odd.jsonl", 3)
    assert "not UTF-8" in latin.message and "U+FFFD" in latin.message
    assert (truncated.source, truncated.line) == ("odd.jsonl", 4)
    assert "not JSON" in truncated.message
    assert isinstance(parsed.events[-1], SessionEnd)
    assert IMPORTER.sniff(path.read_text(errors="replace")[:SNIFF_BYTES])


def test_two_records_on_one_line_are_both_read(tmp_path: Path) -> None:
    """A record written with no line break after it, and the next one after it on the same
    line (seen in public sessions: the session's last answer, then its summary)."""
    last = assistant("a1", None, "m1", [{"type": "text", "text": "Done."}], "t")
    title = {"type": "summary", "summary": "Logging fix", "leafUuid": "a1"}
    path = write(tmp_path / "joined.jsonl", [json.dumps(last) + json.dumps(title)])
    parsed = IMPORTER.parse(path)
    assert of(parsed.events, AgentMessage)[0].text == "Done."
    assert [(p.line, p.message) for p in parsed.problems] == [
        (1, "2 JSON values on one line (a line break missing): each read")
    ]
    assert all(event.source.line == 1 for event in parsed.events)


def test_session_id_without_one_in_the_transcript_is_the_file_hash(tmp_path: Path) -> None:
    path = write(tmp_path / "anon.jsonl", [{"type": "summary", "summary": "x", "leafUuid": "y"}])
    parsed = IMPORTER.parse(path)
    expected = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    assert parsed.session_id == expected
    assert all(e.session == expected for e in parsed.events)


def test_nothing_readable_is_an_error(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    with pytest.raises(StetError):
        IMPORTER.parse(empty)
    with pytest.raises(StetError):
        IMPORTER.parse(write(tmp_path / "bad.jsonl", ["not json", "{also not"]))
    with pytest.raises(StetError):
        IMPORTER.parse(tmp_path / "missing.jsonl")


def test_a_large_session_imports_quickly(tmp_path: Path) -> None:
    records: list[Any] = []
    for n in range(6000):
        records.append(
            assistant(
                f"a{n}", None, f"m{n}", [tool_use(f"t{n}", "Bash", {"command": f"echo {n}"})], "t"
            )
        )
        records.append(user(f"r{n}", f"a{n}", [result(f"t{n}", "x" * 1500)], "t"))
    path = write(tmp_path / "big.jsonl", records)
    started = time.process_time()
    events = IMPORTER.parse(path).events
    # Processor time, not the clock's, which a loaded machine stretches: the bound keeps out
    # a parse that grows faster than the session (speed targets belong in bench/).
    assert time.process_time() - started < 5
    assert len(of(events, ToolResult)) == 6000 and len(of(events, Usage)) == 6000


# -- the public sample ---------------------------------------------------------------------


def test_public_sample_claude_code_2_1_12() -> None:
    path = sample("claude-code/entireio-cli__37_995ebed6e4_0_full.jsonl")
    assert IMPORTER.sniff(path.read_text()[:SNIFF_BYTES])
    parsed = IMPORTER.parse(path)
    events = parsed.events
    assert parsed.session_id == "48f428f9-72d8-40b2-9594-953019809473"
    assert parsed.problems == []
    start = events[0]
    assert isinstance(start, SessionStart)
    assert (start.harness_version, start.model, start.cwd) == (
        "2.1.12",
        "claude-opus-4-5-20251101",
        "/Users/gtrrz-victor/wks/cli",
    )
    assert start.branch == "gtrrz-victor/goreleaser-release-homebrew-tap"
    # no summary names a record of this file: the last one
    assert start.title == "GoReleaser Pro Homebrew Tap Auto-Release Setup"
    assert [u.text[:30] for u in of(events, UserMessage)] == [
        "brews is being phased out in f",
        "how can I install the generate",
        "brew tap local/test ~/homebrew",
    ]
    calls = of(events, ToolCall)
    results = of(events, ToolResult)
    assert [c.name for c in calls] == [
        "WebFetch",
        "WebFetch",
        "Read",
        "WebFetch",
        "Edit",
        "mcp__ide__getDiagnostics",
        "Read",
    ]
    assert [r.call_id for r in results] == [c.call_id for c in calls]
    assert all(r.ok for r in results)
    # ten API requests, each written as two or three records
    usages = of(events, Usage)
    assert len(usages) == 10
    assert usages[0].cache_write_tokens == 46900 and usages[0].model == start.model
    assert len(of(events, Reasoning)) == 10 and parsed.dropped["opaque_reasoning"] == 0
    (change,) = of(events, FileChange)
    assert change.path == "/Users/gtrrz-victor/wks/cli/.goreleaser.yaml"
    assert change.anchored and change.call_id == calls[4].call_id
    assert "@@ -45,18 +45,18 @@" in change.diff
    assert "-brews:\n+homebrew_casks:\n" in change.diff
    assert (change.added, change.removed) == (8, 8)
    assert change.content is not None and "homebrew_casks:\n  - name: entire\n" in change.content
    assert change.source.line == 41
    assert len(of(events, RawEvent)) == 33  # summaries, snapshots, hooks, progress, timings
    assert events[-1].source.line == 67


def test_an_edit_that_deletes_a_line_takes_its_break_too(tmp_path: Path) -> None:
    """Deleting text that ends where a line does (`old_string` "b" without its break, and
    an empty `new_string`), the Edit tool removes the line's break too: rebuilt from the
    original file, the change removes the line, adds no empty one, and the file it records
    is the file on disk, which the next edit's original file then agrees with. The lines
    each step wrote follow from that: the deletion wrote none."""
    original = "a\nb\nc\nd\n"

    def edit(
        call: str, uuid: str, parent: str | None, before: str, old: str, new: str
    ) -> list[Any]:
        tool = tool_use(
            call, "Edit", {"file_path": "/w/f.txt", "old_string": old, "new_string": new}
        )
        structured = {
            "filePath": "/w/f.txt",
            "oldString": old,
            "newString": new,
            "originalFile": before,
            "structuredPatch": [],
            "userModified": False,
            "replaceAll": False,
        }
        return [
            assistant(uuid, parent, f"m{uuid}", [tool], "2026-01-01T00:00:01Z"),
            user(
                f"r{uuid}",
                uuid,
                [result(call, "The file has been updated.")],
                "2026-01-01T00:00:02Z",
                toolUseResult=structured,
            ),
        ]

    records = [
        *edit("t1", "a1", None, original, "b", ""),
        *edit("t2", "a2", "ra1", "a\nc\nd\n", "d", "D"),
    ]
    events = IMPORTER.parse(write(tmp_path / "delete.jsonl", records)).events
    first, second = of(events, FileChange)
    assert first.content == "a\nc\nd\n"
    assert first.diff == "--- a//w/f.txt\n+++ b//w/f.txt\n@@ -1,4 +1,3 @@\n a\n-b\n c\n d\n"
    assert (first.added, first.removed) == (0, 1)
    for step, event in enumerate(events, 1):
        event.step = step
    # The deletion wrote no line (an empty line 2 was credited to it); the next edit, line 3.
    through_first = events[: events.index(first) + 1]
    assert line_attribution(through_first).files.get("/w/f.txt", {}) == {}
    followed = line_attribution(events).files["/w/f.txt"]
    assert {line: origin.step for line, origin in followed.items()} == {3: second.step}


def persisted_notice(path: str, preview: str) -> str:
    """A tool result too large for the conversation, as Claude Code writes it."""
    return (
        f"<persisted-output>\nOutput too large (34.3KB). Full output saved to: {path}\n\n"
        f"Preview (first 2KB):\n{preview}\n...\n</persisted-output>"
    )


def test_a_persisted_output_is_read_whole_from_the_session_s_tool_results(
    tmp_path: Path,
) -> None:
    """A result Claude Code kept in `<session>/tool-results/` (the transcript holds a notice
    and a 2 KB preview) is imported whole, and the file is one of the session's sources. The
    notice's path is where the harness's machine kept it: only its name is used, inside this
    session's folder; a file that is gone (or named so as to leave the folder) keeps the
    preview, and so does a link."""
    whole = "".join(f"src/app.py:{n}: match\n" for n in range(2000))
    results = tmp_path / SID / "tool-results"
    results.mkdir(parents=True)
    (results / "toolu_big.txt").write_text(whole)
    (tmp_path / "secret.txt").write_text("outside the session folder")
    (results / "toolu_link.txt").symlink_to(tmp_path / "secret.txt")
    elsewhere = f"C:\\Users\\me\\.claude\\projects\\x\\{SID}\\tool-results\\toolu_big.txt"
    notices = {
        "toolu_big": persisted_notice(elsewhere, whole[:2048]),
        "toolu_gone": persisted_notice(f"/home/me/{SID}/tool-results/toolu_gone.txt", "gone"),
        "toolu_out": persisted_notice("/home/me/../secret.txt", "out"),
        "toolu_dots": persisted_notice("/home/me/tool-results/..", "dots"),
        "toolu_link": persisted_notice(f"/home/me/{SID}/tool-results/toolu_link.txt", "link"),
    }
    records: list[Any] = [user("u1", None, "Search for match.", "2026-01-01T00:00:00Z")]
    parent = "u1"
    for n, (call, notice) in enumerate(notices.items()):
        calls = [tool_use(call, "Grep", {"pattern": "match"})]
        records.append(assistant(f"a{n}", parent, f"m{n}", calls, f"2026-01-01T00:0{n}:01Z"))
        records.append(user(f"r{n}", f"a{n}", [result(call, notice)], f"2026-01-01T00:0{n}:02Z"))
        parent = f"r{n}"
    parsed = IMPORTER.parse(write(tmp_path / f"{SID}.jsonl", records))
    outputs = {event.call_id: event.output for event in of(parsed.events, ToolResult)}
    assert outputs["toolu_big"] == whole
    for call in ("toolu_gone", "toolu_out", "toolu_dots", "toolu_link"):
        assert outputs[call] == notices[call]
    assert parsed.sources == {
        f"{SID}.jsonl": tmp_path / f"{SID}.jsonl",
        f"{SID}/tool-results/toolu_big.txt": results / "toolu_big.txt",
    }


def test_mode_and_worktree_state_records_are_kept_as_what_they_are(tmp_path: Path) -> None:
    """Claude Code 2.1 writes a `mode` record (the session's mode) and a `worktree-state`
    record (the git worktree the session entered, or null once it left it) beside the
    conversation. Both came out as raw events of an unknown record type, and a file that
    starts with one was not recognised from its head."""
    mode = {"type": "mode", "mode": "normal", "sessionId": SID}
    entered = {
        "type": "worktree-state",
        "worktreeSession": {
            "originalCwd": "/work/app",
            "worktreePath": "/work/app/.claude/worktrees/fix",
            "worktreeName": "fix",
            "worktreeBranch": "worktree-fix",
            "originalBranch": "main",
            "originalHeadCommit": "0" * 40,
            "sessionId": SID,
        },
        "sessionId": SID,
    }
    left = {"type": "worktree-state", "worktreeSession": None, "sessionId": SID}
    assert IMPORTER.sniff(json.dumps(mode) + "\n")
    assert IMPORTER.sniff(json.dumps(entered) + "\n")
    records = [mode, user("u1", None, "go", "2026-08-03T10:00:00Z"), entered, left]
    path = write(tmp_path / f"{SID}.jsonl", records)
    assert detect(path).name == "claude-code"
    raws = of(IMPORTER.parse(path).events, RawEvent)
    assert [(raw.source.line, raw.reason) for raw in raws] == [
        (1, "session mode"),
        (3, "git worktree the session works in (null once it left it)"),
        (4, "git worktree the session works in (null once it left it)"),
    ]
    assert raws[1].record == entered


def test_a_published_page_record_is_kept_as_what_it_is(tmp_path: Path) -> None:
    """Claude Code 2.1.19x writes a `frame-link` record after the Artifact tool published a
    page: its path, the address it is shown at and its title. It came out as a raw event of
    an unknown record type, and a file that starts with one was not recognised."""
    link = {
        "type": "frame-link",
        "sessionId": SID,
        "path": "/work/app/report.html",
        "frameUrl": "https://claude.ai/code/artifact/11111111-2222-3333-4444-555555555555",
        "title": "Flaky tests",
        "timestamp": "2026-07-02T10:00:02.500Z",
    }
    assert IMPORTER.sniff(json.dumps(link) + "\n")
    path = write(
        tmp_path / f"{SID}.jsonl", [user("u1", None, "publish it", "2026-07-02T10:00:00Z"), link]
    )
    (raw,) = of(IMPORTER.parse(path).events, RawEvent)
    assert (raw.source.line, raw.reason, raw.record) == (
        2,
        "page the session published (an artifact) and the address it is shown at",
        link,
    )


def test_later_bookkeeping_records_are_kept_as_what_they_are(tmp_path: Path) -> None:
    """Builds of 2.1.2xx write records beside the conversation that came out as raw events of
    an unknown record type: `atis-latch` (among a session's first records), `relocated`,
    `content-replacement`, `attribution-snapshot`, `task-summary`, `speculation-accept`."""
    records = [
        {"type": "atis-latch", "atis": "", "sessionId": SID},
        user("u1", None, "go", "2026-09-21T15:30:32Z"),
        {"type": "relocated", "sessionId": SID, "relocatedCwd": "/work/app2"},
        {
            "type": "content-replacement",
            "sessionId": SID,
            "replacements": [{"kind": "tool-result", "toolUseId": "t1", "replacement": "…"}],
        },
        {"type": "attribution-snapshot", "messageId": "u1", "surface": "cli", "fileStates": {}},
        {"type": "task-summary", "summary": "Fixing", "sessionId": SID, "timestamp": "t"},
        {"type": "speculation-accept", "timestamp": "t", "timeSavedMs": 1200},
    ]
    assert IMPORTER.sniff(json.dumps(records[0]) + "\n")
    raws = of(IMPORTER.parse(write(tmp_path / f"{SID}.jsonl", records)).events, RawEvent)
    assert [raw.source.line for raw in raws] == [1, 3, 4, 5, 6, 7]
    assert not [raw for raw in raws if (raw.reason or "").startswith("unknown record type")]
    assert raws[1].reason == "the session was moved to another working folder (relocatedCwd)"


def test_the_last_cost_state_is_the_sessions_reported_cost(tmp_path: Path) -> None:
    """Later 2.1 builds write the session's running cost again as it grows (`cost-state`),
    every model's requests counted, the side requests to another model that no assistant
    record holds among them: the last one is session_end's `cost_usd`, each kept raw; none
    when it says a model's cost is unknown to it, or when a request follows it (a resumed or
    running session: the requests' own figures count then)."""

    def cost(total: float, **extra: Any) -> dict[str, Any]:
        usage = {"claude-haiku-4-5": {"inputTokens": 975, "outputTokens": 914, "costUSD": 0.01}}
        state = {"type": "cost-state", "sessionId": SID, "totalCostUSD": total}
        return state | {"modelUsage": usage, **extra}

    reply = [{"type": "text", "text": "Done."}]
    records = [
        user("u1", None, "go", "2026-09-01T00:00:00Z"),
        assistant("a1", "u1", "m1", reply, "2026-09-01T00:00:05Z"),
        cost(0.25),
        cost(1.75),
    ]
    events = IMPORTER.parse(write(tmp_path / f"{SID}.jsonl", records)).events
    assert of(events, SessionEnd)[0].cost_usd == 1.75
    assert [raw.source.line for raw in of(events, RawEvent)] == [3, 4]
    unknown = [*records, cost(2.0, hasUnknownModelCost=True)]
    events = IMPORTER.parse(write(tmp_path / f"{SID}.jsonl", unknown)).events
    assert of(events, SessionEnd)[0].cost_usd is None
    resumed = [
        *records,
        user("u2", "a1", "and the docs", "2026-09-02T00:00:00Z"),
        assistant("a2", "u2", "m2", reply, "2026-09-02T00:00:05Z"),
    ]
    events = IMPORTER.parse(write(tmp_path / f"{SID}.jsonl", resumed)).events
    assert of(events, SessionEnd)[0].cost_usd is None
    assert len(of(events, Usage)) == 2


def test_a_shell_commands_output_in_bash_mode_is_no_prompt(tmp_path: Path) -> None:
    """A command the user runs in bash mode (`!git status`) is written as a user record of
    `<bash-input>`, what the user typed, then one of what it printed (`<bash-stdout>`,
    `<bash-stderr>`): the output was read as a prompt (33 times in Entire's public 2.1
    checkpoints); it is kept raw, as a local command's output is."""
    output = "<bash-stdout>* main 706e2e3 Merge</bash-stdout><bash-stderr></bash-stderr>"
    records = [
        user("u1", None, "<bash-input>git branch -v</bash-input>", "2026-02-03T04:14:15Z"),
        user("u2", "u1", output, "2026-02-03T04:14:16Z"),
        user("u3", "u2", "rebase it", "2026-02-03T04:15:00Z"),
    ]
    events = IMPORTER.parse(write(tmp_path / "b.jsonl", records)).events
    assert [u.source.line for u in of(events, UserMessage)] == [1, 3]
    (raw,) = of(events, RawEvent)
    assert (raw.source.line, raw.reason) == (
        2,
        "output of a shell command the user ran in bash mode (!)",
    )
    assert not of(events, Rewind)


def test_a_message_no_one_typed_in_the_session_is_no_prompt(tmp_path: Path) -> None:
    """Later 2.1 builds say where a user message came from (`origin.kind`): another session's
    or agent's message (`peer`) and a coordinator's are no prompt of the person's (Claude Code
    does not count them as the user's), nor, in builds that write no origin, a relayed
    teammate's or session's message; they were read as prompts. So is a queued prompt's
    attachment of such an origin. Every other kind stays a prompt (`human`, `channel`, a
    phone's `bridge`, a kind of a later build); a tool's result stays a result, whatever
    origin its record names."""
    relay = (
        'Another Claude session sent a message:\n<agent-message from="review">ok</agent-message>'
    )
    teammate = '<teammate-message teammate_id="tester">All tests pass.</teammate-message>'
    peer = {"kind": "peer", "from": "uds:/tmp/s.sock", "name": "review"}
    queued = {"type": "queued_command", "prompt": "from a peer", "commandMode": "prompt"}
    records = [
        user("u1", None, "Fix it", "2026-09-27T05:00:00Z", origin={"kind": "human"}),
        user("u2", "u1", relay, "2026-09-27T05:01:00Z", origin=peer),
        user("u3", "u2", teammate, "2026-09-27T05:02:00Z"),
        user("u4", "u3", "go on", "2026-09-27T05:03:00Z", origin={"kind": "bridge"}),
        user(
            "u5",
            "u4",
            '<channel source="telegram">ship it</channel>',
            "t",
            origin={"kind": "channel"},
        ),
        {**COMMON, "type": "attachment", "timestamp": "t", "attachment": queued | {"origin": peer}},
        assistant("a1", "u5", "m1", [tool_use("t1", "Bash", {"command": "ls"})], "t"),
        user("r1", "a1", [result("t1", "a.txt")], "t", origin={"kind": "cli"}),
    ]
    events = IMPORTER.parse(write(tmp_path / "p.jsonl", records)).events
    assert [u.source.line for u in of(events, UserMessage)] == [1, 4, 5]
    assert [r.output for r in of(events, ToolResult)] == ["a.txt"]
    raws = {raw.source.line: raw.reason for raw in of(events, RawEvent)}
    assert raws[2] == raws[3] == "a message another Claude Code session or agent sent this one"
    assert 4 not in raws
    assert 6 in raws


def test_a_relayed_message_the_running_turn_took_in_is_no_prompt(tmp_path: Path) -> None:
    """A teammate's message (or another session's) that reaches a working lead is queued and
    taken into the running turn: a `remove` of reason `absorbed_mid_turn` naming it (builds
    up to 2.1.42: its `enqueue` and a `remove` naming nothing) may be all the session holds
    of it. It was read as a prompt, though its user record would not be; with its attachment
    read first the remove stays raw as well. Prompts the person typed and that the turn took
    in the same way, one quoting a teammate's message among them, stay prompts."""

    def queue(operation: str, content: str | None = None, **extra: Any) -> dict[str, Any]:
        record = {"type": "queue-operation", "operation": operation, "timestamp": "t"}
        named = {} if content is None else {"content": content}
        return record | {"sessionId": SID} | named | extra

    def queued(prompt: str) -> dict[str, Any]:
        attachment = {"type": "queued_command", "prompt": prompt, "commandMode": "prompt"}
        return {**COMMON, "type": "attachment", "timestamp": "t", "attachment": attachment}

    absorbed = {"reason": "absorbed_mid_turn"}
    tester = (
        '<teammate-message teammate_id="tester" color="blue" summary="Tests pass">\n'
        "All 42 tests pass.\n</teammate-message>"
    )
    reviewer = '<teammate-message teammate_id="reviewer">One nit in parse.py.</teammate-message>'
    session = '<cross-session-message from="docs">Docs are built.</cross-session-message>'
    quoting = f"the tester said:\n{tester}\nso ship it"
    records: list[Any] = [
        user("u1", None, "Fix the parser.", "t"),
        queue("enqueue", tester),
        queue("remove", tester, **absorbed),  # 3
        queue("enqueue", "and the docs"),
        queue("remove", "and the docs", **absorbed),  # 5
        queue("enqueue", session),
        queue("remove", session, **absorbed),  # 7
        queue("enqueue", quoting),
        queue("remove", quoting, **absorbed),  # 9
        queued(reviewer),
        queue("remove", reviewer, **absorbed),  # 11
        queue("enqueue", reviewer),
        queue("remove"),  # 13
        queue("enqueue", "then commit"),
        queue("remove"),  # 15
    ]
    events = IMPORTER.parse(write(tmp_path / "q.jsonl", records)).events
    assert [(u.text, u.source.line) for u in of(events, UserMessage)] == [
        ("Fix the parser.", 1),
        ("and the docs", 5),
        (quoting, 9),
        ("then commit", 15),
    ]
    relayed = "a message another Claude Code session or agent sent this one"
    raws = {raw.source.line: raw.reason for raw in of(events, RawEvent)}
    assert [line for line, reason in raws.items() if reason == relayed] == [3, 7, 11, 13]
    assert len(raws) == len(records) - 4


def another_session_then_own(origin: str) -> tuple[list[Any], list[Any]]:
    """The records of session `origin` (a request, a Write and its result) that a branched or
    forked session's file starts with, and that session's own (a request, a Write)."""
    write_call = tool_use("tw", "Write", {"file_path": "/work/app/a.txt", "content": "a\n"})
    history = [
        user("u1", None, "write a", "2026-03-31T01:00:00Z", sessionId=origin),
        assistant("a1", "u1", "m1", [write_call], "2026-03-31T01:00:01Z", sessionId=origin),
        user(
            "r1",
            "a1",
            [result("tw", "File created successfully")],
            "2026-03-31T01:00:02Z",
            sessionId=origin,
            toolUseResult={"type": "create", "filePath": "/work/app/a.txt", "content": "a\n"},
        ),
    ]
    own = [
        user("u2", "r1", "now b instead", "2026-03-31T02:00:00Z"),
        assistant(
            "a2",
            "u2",
            "m2",
            [tool_use("tb", "Write", {"file_path": "/work/app/b.txt", "content": "b\n"})],
            "2026-03-31T02:00:01Z",
            usage={"input_tokens": 20, "output_tokens": 5},
        ),
    ]
    return history, own


def test_the_copy_a_forked_session_starts_with_is_left_out(tmp_path: Path) -> None:
    """`claude --resume ID --fork-session` writes a file named by the new session's id that
    starts with the other session's records unchanged, their `sessionId` the other's, and
    no `forkedFrom`; its own records carry the new id. Imported beside the other session,
    the copy came twice: it is left out and counted in `copied_history`."""
    origin = "0ffee0c0-1111-4222-8333-444455556666"
    history, own = another_session_then_own(origin)
    history = [{"type": "file-history-snapshot", "messageId": "u1", "snapshot": {}}, *history]
    parsed = IMPORTER.parse(write(tmp_path / f"{SID}.jsonl", [*history, *own]))
    assert parsed.session_id == SID
    assert [u.text for u in of(parsed.events, UserMessage)] == ["now b instead"]
    assert [c.call_id for c in of(parsed.events, ToolCall)] == ["tb"]
    assert not of(parsed.events, FileChange)
    assert parsed.dropped["copied_history"] == 3
    assert not of(parsed.events, Rewind)
    assert of(parsed.events, SessionStart)[0].time == "2026-03-31T02:00:00Z"

    # The origin's own file, and one named by no session id: nothing in them is a copy.
    for name in (f"{origin}.jsonl", "exported.jsonl"):
        whole = IMPORTER.parse(write(tmp_path / name, [*history, *own]))
        assert [u.text for u in of(whole.events, UserMessage)] == ["write a", "now b instead"]
        assert whole.dropped["copied_history"] == 0


def test_a_session_resumed_under_a_new_id_in_its_own_file_keeps_its_start(
    tmp_path: Path,
) -> None:
    """Some builds resume a session in its own file under a new id: the file's name is the
    first id, its last records carry the second. Neither part is a copy of another file's."""
    resumed = "6d0ffee0-1111-4222-8333-444455556666"
    records = [
        user("u1", None, "write a", "2026-03-31T01:00:00Z"),
        assistant("a1", "u1", "m1", [{"type": "text", "text": "done"}], "2026-03-31T01:00:01Z"),
        user("u2", "a1", "go on", "2026-03-31T02:00:00Z", sessionId=resumed),
    ]
    parsed = IMPORTER.parse(write(tmp_path / f"{SID}.jsonl", records))
    assert [u.text for u in of(parsed.events, UserMessage)] == ["write a", "go on"]
    assert parsed.dropped["copied_history"] == 0
    assert parsed.session_id == resumed


def test_the_copy_a_branched_conversation_starts_with_is_left_out(tmp_path: Path) -> None:
    """`/branch` writes a new session file that starts with a copy of every message of the
    conversation it branched from: the same uuids, times and content, under the new
    session's id, each marking where it came from (`forkedFrom`: the session and the
    message's uuid there). Those calls, changes and requests are the other session's:
    imported with this one, beside it, they came twice. The copy is counted in
    `copied_history`; the new session starts with its own first record."""
    origin = "0ffee0c0-1111-4222-8333-444455556666"
    history, own = another_session_then_own(origin)
    copy = [
        record
        | {"sessionId": SID, "forkedFrom": {"sessionId": origin, "messageUuid": record["uuid"]}}
        for record in history
    ]
    title = {"type": "custom-title", "customTitle": "write a (Branch)", "sessionId": SID}
    parsed = IMPORTER.parse(write(tmp_path / f"{SID}.jsonl", [*copy, title, *own]))
    assert parsed.session_id == SID
    assert [u.text for u in of(parsed.events, UserMessage)] == ["now b instead"]
    assert [c.call_id for c in of(parsed.events, ToolCall)] == ["tb"]
    assert not of(parsed.events, FileChange)
    assert [u.output_tokens for u in of(parsed.events, Usage)] == [5]
    assert parsed.dropped["copied_history"] == 3
    # Its prompt hangs from the last message copied: no rewind.
    assert not of(parsed.events, Rewind)
    start = of(parsed.events, SessionStart)[0]
    assert (start.time, start.cwd, start.branch) == (
        "2026-03-31T02:00:00Z",
        "/work/app",
        "feature/x",
    )


def test_a_text_block_of_blank_lines_is_counted_and_one_of_no_text_kept(tmp_path: Path) -> None:
    """Claude Code writes text blocks of blank lines alone between a reply's parts: nothing
    to show, but read, so counted in `dropped.empty_text`; a block whose text is no string
    is kept raw."""
    transcript = Transcript(tmp_path).user("Go on.")
    transcript.assistant({"type": "text", "text": "\n\n"})
    transcript.assistant({"type": "text", "text": 42})
    transcript.say("Done.")
    parsed = IMPORTER.parse(transcript.save(tmp_path / "s.jsonl"))
    assert [e.text for e in of(parsed.events, AgentMessage)] == ["Done."]
    assert parsed.dropped["empty_text"] == 1
    [raw] = [e for e in parsed.events if e.kind == "raw" and e.record.get("text") == 42]
    assert raw.reason == "unknown assistant content block"


def _moved_one_by_one(
    events: list[EventBase], blocks: list[tuple[int, int, str | None]]
) -> list[EventBase]:
    """The blocks appended in turn, each then moved to before the first event of the main
    conversation (no subagent's start, with a time) after its time, read one by one."""
    out = events[: blocks[0][0]] if blocks else list(events)
    for start, end, began in blocks:
        at = len(out)
        out.extend(events[start:end])
        for index in range(at):
            other = out[index]
            main = other.agent is None and not isinstance(other, Subagent)
            if began is not None and main and other.time is not None and other.time > began:
                out[index:index] = out[at:]
                del out[len(out) - (end - start) :]
                break
    return out


@pytest.mark.parametrize("seed", range(300))
def test_subagents_no_call_started_stand_where_they_ran(seed: int) -> None:
    """Hundreds of subagents no call started (compactions, side questions) each went back
    over the session's events to find where it ran; placed at once, they stand where moving
    them one by one puts them, also when a block holds events of the main conversation."""
    rng = random.Random(seed)
    times = [None, *(f"2026-01-01T00:00:{second:02d}Z" for second in range(12))]

    def event(agent: str | None) -> EventBase:
        kind = rng.choice([AgentMessage, AgentMessage, Subagent])
        fields: dict[str, Any] = {"session": "s", "agent": agent, "time": rng.choice(times)}
        fields["source"] = SourceRef(file="f.jsonl", line=rng.randrange(1, 99))
        fields |= {"text": "t"} if kind is AgentMessage else {"agent_id": "x"}
        return kind(**fields)

    events = [event(rng.choice([None, None, "a"])) for _ in range(rng.randrange(30))]
    blocks: list[tuple[int, int, str | None]] = []
    for _ in range(rng.randrange(6)):
        start = len(events)
        agent = None if rng.random() < 0.1 else f"b{start}"
        events += [event(agent) for _ in range(rng.randrange(1, 4))]
        blocks.append((start, len(events), rng.choice(times)))
    placed = by_time(list(events), blocks)
    assert [id(e) for e in placed] == [id(e) for e in _moved_one_by_one(events, blocks)]


def headless_run(result: dict[str, Any], session: str = SID) -> list[dict[str, Any]]:
    """`claude -p --output-format stream-json --verbose`, as Claude Code 2.0 prints it: an
    `init` record, the run's replies and tool results (`session_id`, no `parentUuid`), pieces
    of a reply as it streamed (`--include-partial-messages`), and the run's `result`."""
    keys = {"session_id": session, "parent_tool_use_id": None}
    usage = {"input_tokens": 3, "output_tokens": 8, "cache_creation_input_tokens": 1200}
    model = "claude-sonnet-4-5-20250929"
    return [
        {
            "type": "system",
            "subtype": "init",
            "cwd": "/home/ada/src/app",
            "tools": ["Bash", "Read", "Edit"],
            "model": model,
            "permissionMode": "acceptEdits",
            "claude_code_version": "2.0.62",
            **keys,
        },
        {
            "type": "stream_event",
            "event": {"type": "content_block_delta", "delta": {"type": "text_delta"}},
            **keys,
        },
        {
            "type": "assistant",
            "message": {
                "id": "msg_01A",
                "role": "assistant",
                "model": model,
                "content": [
                    {
                        "type": "tool_use",
                        "id": "toolu_01X",
                        "name": "Bash",
                        "input": {"command": "ls"},
                    }
                ],
                "usage": usage,
            },
            **keys,
        },
        {
            "type": "user",
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "toolu_01X", "content": "src"}],
            },
            **keys,
        },
        {
            "type": "assistant",
            "message": {
                "id": "msg_01B",
                "role": "assistant",
                "model": model,
                "content": [{"type": "text", "text": "One folder: src."}],
                "usage": usage,
            },
            **keys,
        },
        {"type": "result", "num_turns": 2, "result": "One folder: src.", **keys, **result},
    ]


# What other tools' streams of a headless run's shape start with: Amp's (its tools' names in
# its own case, its threads' ids), Factory's Droid's (Claude Code's tools' names, no permission
# mode) and Cursor's agent's (no tools listed, its models' names).
AMP_INIT = {
    "type": "system",
    "subtype": "init",
    "cwd": "/home/ada/src/app",
    "session_id": "T-5c0ffee0-1111-4222-8333-444455556666",
    "tools": ["Bash", "Read", "Grep", "Task", "edit_file", "create_file", "glob"],
    "mcp_servers": [],
}
DROID_INIT = {
    "type": "system",
    "subtype": "init",
    "cwd": "/home/ada/src/app",
    "session_id": "acp-sess-001",
    "tools": ["Read", "LS", "Execute", "Edit", "MultiEdit", "Glob", "Create", "TodoWrite"],
    "model": "claude-sonnet-4-5-20250929",
    "reasoning_effort": "high",
}
CURSOR_INIT = {
    "type": "system",
    "subtype": "init",
    "apiKeySource": "login",
    "cwd": "/home/ada/src/app",
    "session_id": SID,
    "model": "Claude 4 Sonnet",
    "permissionMode": "default",
}


@pytest.mark.parametrize(
    ("init", "theirs"),
    [
        ({"claude_code_version": "2.0.62"}, True),
        ({"tools": ["Task", "Bash", "Glob", "Read", "Edit"], "permissionMode": "default"}, True),
        ({"model": "claude-sonnet-4-20250514", "permissionMode": "bypassPermissions"}, True),
        (
            {"tools": ["Task", "Bash", "Read", "mcp__gh__comment"], "permissionMode": "default"},
            False,
        ),
        (AMP_INIT, False),
        (CURSOR_INIT, False),
        (DROID_INIT, False),
        ({"claude_code_version": "2.0.62", "qwen_code_version": "0.4.0"}, False),
    ],
    ids=["version", "own-tools", "claude-model", "shared-tools", "amp", "cursor", "droid", "qwen"],
)
def test_a_headless_runs_init_is_told_from_other_tools_streams(
    init: dict[str, Any], theirs: bool
) -> None:
    """Builds before 2.0 name no version in a headless run's `init`; they name the permission
    mode beside tools only Claude Code has or a Claude model, which other tools' streams of
    the same shape do not (Factory's Droid lists Claude Code's tools, without a permission
    mode). Those runs were no known format."""
    base = {"type": "system", "subtype": "init", "session_id": SID}
    records = [{**base, **init}, *headless_run({"subtype": "success"})[1:]]
    assert IMPORTER.sniff("".join(json.dumps(r) + "\n" for r in records)) is theirs
    assert IMPORTER.sniff(json.dumps(records, indent=2)) is theirs


def test_a_headless_run_in_a_ci_log_is_read_past_its_other_lines(tmp_path: Path) -> None:
    """A CI job's log holds a headless run's output with what the run printed to standard
    error (`npm warn …`, `[DEBUG] …`): it was no known format. The run is read, on lines of
    its own or as one array on one line (each record naming that line), and every other line
    is a problem of the import."""
    records = headless_run({"subtype": "success", "is_error": False, "total_cost_usd": 0.0123})
    noise = [
        "npm warn exec The following package was not found and will be installed: x@1.0.115",
        "[DEBUG] Watching for changes in setting files /tmp/.claude/settings.json...",
        "[ERROR] Failed to save config with lock: Error: ENOENT",
    ]
    stream = IMPORTER.parse(write(tmp_path / "run.jsonl", records))
    for name, lines in (
        (
            "lines.log",
            [*noise, *map(json.dumps, records[:3]), noise[1], *map(json.dumps, records[3:])],
        ),
        ("array.log", [*noise, json.dumps(records), "[DEBUG] Stream closed"]),
    ):
        path = tmp_path / name
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        assert detect(path).name == "claude-code"
        parsed = IMPORTER.parse(path)
        assert [e.kind for e in parsed.events] == [e.kind for e in stream.events]
        assert of(parsed.events, SessionEnd)[0].cost_usd == 0.0123
        not_json = [n for n, line in enumerate(lines, 1) if not line.startswith(("{", "[{"))]
        assert [problem.line for problem in parsed.problems] == not_json
    (call,) = of(parsed.events, ToolCall)
    assert call.source.line == len(noise) + 1

    # A log whose first line is a bracketed one is no array.
    path = tmp_path / "debug.log"
    path.write_text("\n".join([noise[1], *map(json.dumps, records)]) + "\n", encoding="utf-8")
    assert detect(path).name == "claude-code"
    assert [e.kind for e in IMPORTER.parse(path).events] == [e.kind for e in stream.events]

    # A log whose JSON is no Claude Code run's stays unknown.
    other = tmp_path / "other.log"
    other.write_text("\n".join([*noise, json.dumps(AMP_INIT)]) + "\n", encoding="utf-8")
    with pytest.raises(StetError, match="not a transcript of a known format"):
        detect(other)

    # An aider history whose edit writes a run's records (a test's fixture) is aider's.
    history = "\n".join(
        [
            "# aider chat started at 2025-06-02 11:00:00",
            "",
            "> Aider v0.84.0  ",
            "",
            "#### add the fixture  ",
            "",
            "tests/run.jsonl",
            "```",
            "<<<<<<< SEARCH",
            "=======",
            *map(json.dumps, records),
            ">>>>>>> REPLACE",
            "```",
        ]
    )
    quoting = tmp_path / ".aider.chat.history.md"
    quoting.write_text(history + "\n", encoding="utf-8")
    assert detect(quoting).name == "aider"


def test_a_headless_runs_session_compaction_and_rate_limits_are_its_own(tmp_path: Path) -> None:
    """A headless run's session is its file's digest, not the run's `session_id`: another
    file may hold other runs of that session (a resumed run saved apart), or the session's
    own file all of them, and an import of one would replace the other. The summary a run's
    compaction writes (`isSynthetic`, after its `compact_boundary`) was a prompt; it is the
    compaction's summary. A `rate_limit_event` was an unknown record."""
    first = headless_run({"subtype": "success", "total_cost_usd": 0.01})
    resumed = headless_run({"subtype": "success", "total_cost_usd": 0.02})
    one = IMPORTER.parse(write(tmp_path / "a.jsonl", first)).session_id
    other = IMPORTER.parse(write(tmp_path / "b.jsonl", resumed[:1] + resumed[4:])).session_id
    assert len({one, other, SID}) == 3

    keys = {"session_id": SID, "parent_tool_use_id": None}
    summary = "This session is being continued from a previous conversation. Summary: ..."
    records = [
        first[0],
        {"type": "system", "subtype": "compact_boundary", **keys},
        {
            "type": "user",
            "message": {"role": "user", "content": [{"type": "text", "text": summary}]},
            "isSynthetic": True,
            **keys,
        },
        {
            "type": "rate_limit_event",
            "rate_limit_info": {"status": "allowed", "rateLimitType": "five_hour"},
            **keys,
        },
        *first[2:],
    ]
    events = IMPORTER.parse(write(tmp_path / "c.jsonl", records)).events
    assert [c.summary for c in of(events, Compaction)] == [summary]
    assert not of(events, UserMessage)
    reasons = [raw.reason for raw in of(events, RawEvent)]
    assert "the account's rate limit status (a headless run's)" in reasons


def test_a_headless_runs_output_tokens_are_counted_whole(tmp_path: Path) -> None:
    """A reply's records in a headless run's output carry its usage as the reply began (its
    output counted as the first tokens streamed): the run's output tokens were far too few.
    The `result`'s totals count the same requests whole; the output beyond the replies' is a
    usage event of no request of its own, when the totals count the same input."""
    totals = {
        "input_tokens": 6,
        "cache_creation_input_tokens": 2400,
        "cache_read_input_tokens": 0,
        "output_tokens": 166,
    }
    run = headless_run({"subtype": "success", "total_cost_usd": 0.01, "usage": totals})
    events = IMPORTER.parse(write(tmp_path / "run.jsonl", run)).events
    usages = of(events, Usage)
    assert [(u.output_tokens, u.requests) for u in usages] == [(8, 1), (8, 1), (150, 0)]
    assert usages[-1].model == "claude-sonnet-4-5-20250929"
    assert sum(u.output_tokens for u in usages) == 166

    # Totals that count other requests too (a build that counted each twice) are left be.
    doubled = {**totals, "input_tokens": 12}
    run = headless_run({"subtype": "success", "usage": doubled})
    usages = of(IMPORTER.parse(write(tmp_path / "doubled.jsonl", run)).events, Usage)
    assert [u.output_tokens for u in usages] == [8, 8]


def test_a_headless_runs_output_is_a_session_with_its_cost_and_failure(tmp_path: Path) -> None:
    """A headless run's stream (no session keys but `session_id`) was a Claude Code session
    only when its records carried a `uuid` (later builds), its `result` an unknown record and
    its streamed pieces one raw event each. The run's reported cost is session_end's, a
    failed run is an error saying why, and streamed pieces are counted as left out."""
    done = headless_run({"subtype": "success", "is_error": False, "total_cost_usd": 0.0123})
    path = write(tmp_path / "run.jsonl", done)
    assert detect(path).name == "claude-code"
    parsed = IMPORTER.parse(path)
    events = parsed.events
    (start,) = of(events, SessionStart)
    assert (start.harness_version, start.cwd) == ("2.0.62", "/home/ada/src/app")
    assert [call.name for call in of(events, ToolCall)] == ["Bash"]
    assert [message.text for message in of(events, AgentMessage)] == ["One folder: src."]
    assert of(events, SessionEnd)[0].cost_usd == 0.0123
    assert not of(events, Error)
    assert [raw.reason for raw in of(events, RawEvent)] == [
        "harness notice (init)",
        "a headless run's result",
    ]
    assert parsed.dropped["partial_message"] == 1

    failed = headless_run(
        {"subtype": "error_max_turns", "is_error": True, "total_cost_usd": 0.5, "result": ""}
    )
    (error,) = of(IMPORTER.parse(write(tmp_path / "failed.jsonl", failed)).events, Error)
    assert error.message == "the run stopped at its limit of turns (error_max_turns)"
    listed = headless_run({"subtype": "error_during_execution", "errors": ["Boom", " "]})
    (error,) = of(IMPORTER.parse(write(tmp_path / "listed.jsonl", listed)).events, Error)
    assert error.message == "the run failed (error_during_execution): Boom"

    # Two runs saved in one file: each total counts one run, so neither is the session's.
    twice = [*done, *headless_run({"subtype": "success", "total_cost_usd": 0.02})]
    events = IMPORTER.parse(write(tmp_path / "twice.jsonl", twice)).events
    assert of(events, SessionEnd)[0].cost_usd is None


def test_a_headless_run_saved_as_one_json_array_is_read_as_its_stream(tmp_path: Path) -> None:
    """claude-code-action saves a run's records as one pretty-printed JSON array (its
    execution file), which no importer knew: it is read as the stream is, each event naming
    the line its record starts on. A document cut short keeps the records before the cut
    and says where it stops."""
    records = headless_run({"subtype": "success", "is_error": False, "total_cost_usd": 0.0123})
    stream = IMPORTER.parse(write(tmp_path / "run.jsonl", records))
    text = json.dumps(records, indent=2)
    path = tmp_path / "claude-execution-output.json"
    path.write_text(text, encoding="utf-8")
    assert detect(path).name == "claude-code"
    parsed = IMPORTER.parse(path)
    assert parsed.problems == []
    assert parsed.dropped == stream.dropped
    assert [event.kind for event in parsed.events] == [event.kind for event in stream.events]
    lines = text.splitlines()
    starts = [number for number, line in enumerate(lines, 1) if line == "  {"]
    assert len(starts) == len(records)
    (call,) = of(parsed.events, ToolCall)
    assert call.source.line == starts[2]  # the third record: the reply calling Bash
    assert of(parsed.events, SessionEnd)[0].cost_usd == 0.0123

    # Written without indentation, on one line, the same.
    path.write_text(json.dumps(records), encoding="utf-8")
    assert [e.kind for e in IMPORTER.parse(path).events] == [e.kind for e in stream.events]

    # A byte order mark before it; text after it (a log's last line), a problem.
    path.write_text("\ufeff" + text + "\n[DEBUG] done\n", encoding="utf-8")
    assert detect(path).name == "claude-code"
    parsed = IMPORTER.parse(path)
    assert [e.kind for e in parsed.events] == [e.kind for e in stream.events]
    assert [problem.line for problem in parsed.problems] == [len(lines) + 1]

    # A record nested too deeply to read ends the document there, with a problem.
    deep = json.dumps(records[:4], indent=2)[:-2] + ",\n  " + "[" * 5000 + "]" * 5000 + "\n]"
    path.write_text(deep, encoding="utf-8")
    parsed = IMPORTER.parse(path)
    assert [call.name for call in of(parsed.events, ToolCall)] == ["Bash"]
    assert [problem.message for problem in parsed.problems] == [
        "not JSON: JSON nested too deeply to read"
    ]

    cut = text[: text.index('"One folder: src."')]
    path.write_text(cut, encoding="utf-8")
    parsed = IMPORTER.parse(path)
    assert [call.name for call in of(parsed.events, ToolCall)] == ["Bash"]
    assert not of(parsed.events, AgentMessage)
    (problem,) = parsed.problems
    assert problem.line == len(cut.splitlines()) and problem.message.startswith("not JSON")


def test_only_a_headless_runs_array_is_claude_codes(tmp_path: Path) -> None:
    """A JSON array is Claude Code's when its first items hold a headless run's `init`: not
    a Gemini CLI `logs.json` (a list of records naming their sessionId and type), another
    tool's run of the same shape (`AMP_INIT`), or Qwen Code's. A JSON Lines file whose first
    record is an array is read line by line, as before."""
    records = headless_run({"subtype": "success", "total_cost_usd": 0.1})
    assert IMPORTER.sniff(json.dumps(records, indent=2))
    assert not IMPORTER.sniff(json.dumps([AMP_INIT, *records[1:]], indent=2))
    qwen = {**records[0], "qwen_code_version": "0.1.0"}
    assert not IMPORTER.sniff(json.dumps([qwen, *records[1:]], indent=2))
    logs = [{"sessionId": SID, "messageId": 0, "type": "user", "message": "hi"}]
    path = tmp_path / "logs.json"
    path.write_text(json.dumps(logs, indent=2), encoding="utf-8")
    assert detect(path).name == "gemini-cli"

    lines = write(tmp_path / "lines.jsonl", [[1, 2], *records])
    parsed = IMPORTER.parse(lines)
    assert [call.name for call in of(parsed.events, ToolCall)] == ["Bash"]
    first = of(parsed.events, RawEvent)[0]
    assert (first.source.line, first.reason) == (1, "not a JSON object")


def test_a_headless_runs_subagent_and_structured_results_are_read(tmp_path: Path) -> None:
    """A headless run's stream writes a subagent's records inline, naming the Task call that
    started it (`parent_tool_use_id`), and a tool's structured output as `tool_use_result`:
    the subagent's records were the main agent's, and an Edit's patch was left unread. Other
    tools' streams of the same shape (`AMP_INIT`) are not Claude Code's."""
    run = headless_run({"subtype": "success", "total_cost_usd": 0.1})
    keys = {"session_id": SID}
    task = {"type": "tool_use", "id": "toolu_task", "name": "Task"}
    task["input"] = {"description": "Find things", "prompt": "Find things", "subagent_type": "x"}
    patch = [{"oldStart": 1, "oldLines": 1, "newStart": 1, "newLines": 1, "lines": ["-a", "+b"]}]
    edit_input = {"file_path": "/home/ada/src/app/x.py", "old_string": "a", "new_string": "b"}
    records = [
        run[0],
        {
            "type": "assistant",
            "message": {"id": "msg_T", "role": "assistant", "content": [task]},
            "parent_tool_use_id": None,
            **keys,
        },
        {
            "type": "assistant",
            "message": {
                "id": "msg_S",
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": "toolu_E", "name": "Edit", "input": edit_input}
                ],
            },
            "parent_tool_use_id": "toolu_task",
            **keys,
        },
        {
            "type": "user",
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "toolu_E", "content": "ok"}],
            },
            "parent_tool_use_id": "toolu_task",
            "tool_use_result": {
                "filePath": "/home/ada/src/app/x.py",
                "oldString": "a",
                "newString": "b",
                "originalFile": "a\n",
                "structuredPatch": patch,
            },
            **keys,
        },
        {
            "type": "user",
            "message": {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_task", "content": "done"}
                ],
            },
            "parent_tool_use_id": None,
            **keys,
        },
        run[-1],
    ]
    events = IMPORTER.parse(write(tmp_path / "run.jsonl", records)).events
    (subagent,) = of(events, Subagent)
    assert subagent.call_id == "toolu_task"
    (edit,) = [call for call in of(events, ToolCall) if call.name == "Edit"]
    assert edit.agent == subagent.agent_id
    assert [call.agent for call in of(events, ToolCall) if call.name == "Task"] == [None]
    (change,) = of(events, FileChange)
    assert change.agent == subagent.agent_id
    assert (change.diff or "").endswith("@@ -1 +1 @@\n-a\n+b\n")

    head = "".join(json.dumps(record) + "\n" for record in [AMP_INIT, *run[1:]])
    assert not IMPORTER.sniff(head)
