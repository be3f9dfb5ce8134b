"""Gemini CLI sessions: hand-written files in the shapes chatRecordingService writes
(the `.json` document, the `.jsonl` log with its updates and rewinds, subagent sessions),
`logs.json` and checkpoints, modelled on real sessions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from stet_lsp.core.errors import StetError
from stet_lsp.trajectory.events import Error, EventBase, event_json
from stet_lsp.trajectory.importers import detect, importer
from stet_lsp.trajectory.importers.gemini import IMPORTERS, command_failed

GEMINI = IMPORTERS["gemini-cli"]
SESSION = "b7db9eb8-618e-400c-a422-56b794b1ed60"


def kinds(events: list[EventBase]) -> list[str]:
    return [e.kind for e in events]


def of(events: list[EventBase], kind: str) -> list[Any]:
    return [e for e in events if e.kind == kind]


def jsonl(path: Path, records: list[Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def response(call_id: str, name: str, body: dict[str, Any]) -> dict[str, Any]:
    return {"functionResponse": {"id": call_id, "name": name, "response": body}}


READ = response("read_file_1", "read_file", {"output": "flask==3.1.3\n"})
SHELL = response(
    "shell_2",
    "run_shell_command",
    {"error": "[Operation Cancelled] Reason: User denied execution."},
)

MESSAGES: list[Any] = [
    {
        "id": "d049",
        "timestamp": "2026-06-12T04:14:14.034Z",
        "type": "user",
        "content": [
            {
                "text": "<session_context>\nThis is the Gemini CLI.\n- **Workspace Directories:**\n  - /home/u/expense\n- **Directory Structure:**\n"
            }
        ],
    },
    {
        "id": "u1",
        "timestamp": "2026-06-12T04:16:58.419Z",
        "type": "user",
        "content": [{"text": "explain the error"}],
    },
    {
        "id": "g1",
        "timestamp": "2026-06-12T04:17:09.308Z",
        "type": "gemini",
        "content": [
            {"text": "**Analyzing User Errors** I'm examining the traceback.", "thought": True},
            {
                "functionCall": {
                    "id": "read_file_1",
                    "name": "read_file",
                    "args": {"file_path": "requirements.txt"},
                }
            },
            {
                "functionCall": {
                    "id": "shell_2",
                    "name": "run_shell_command",
                    "args": {"command": "pip list"},
                }
            },
        ],
        "thoughts": [
            {
                "subject": "Analyzing User Errors",
                "description": "I'm examining the traceback.",
                "timestamp": "2026-06-12T04:17:07.158Z",
            }
        ],
        "tokens": {
            "input": 12312,
            "output": 172,
            "cached": 3809,
            "thoughts": 525,
            "tool": 7,
            "total": 13016,
        },
        "model": "gemini-3-flash-preview",
        "toolCalls": [
            {
                "id": "read_file_1",
                "name": "read_file",
                "args": {"file_path": "requirements.txt"},
                "result": [READ, SHELL],
                "status": "success",
                "timestamp": "2026-06-12T04:17:54.266Z",
                "resultDisplay": "",
                "displayName": "ReadFile",
            },
            {
                "id": "shell_2",
                "name": "run_shell_command",
                "args": {"command": "pip list"},
                "result": [READ, SHELL],
                "status": "cancelled",
                "timestamp": "2026-06-12T04:17:54.266Z",
                "displayName": "Shell",
            },
        ],
    },
    {
        "id": "g1_response",
        "timestamp": "2026-06-12T11:53:02.301Z",
        "type": "user",
        "content": [READ, SHELL],
    },
    {
        "id": "g2",
        "timestamp": "2026-06-12T04:20:00.000Z",
        "type": "gemini",
        "content": "I'll fix app.py and add a test.",
        "thoughts": [],
        "model": "gemini-3-flash-preview",
        "tokens": {"input": 100, "output": 10, "cached": 0, "thoughts": 0, "tool": 0, "total": 110},
        "toolCalls": [
            {
                "id": "replace_3",
                "name": "replace",
                "args": {
                    "file_path": "/home/u/expense/app.py",
                    "old_string": "b\n",
                    "new_string": "B\n",
                },
                "result": [
                    response("replace_3", "replace", {"output": "Successfully modified file"})
                ],
                "status": "success",
                "timestamp": "2026-06-12T04:20:01.000Z",
                "resultDisplay": {
                    "fileDiff": "Index: app.py\n===\n--- app.py\tCurrent\n+++ app.py\tProposed\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n",
                    "fileName": "app.py",
                    "filePath": "/home/u/expense/app.py",
                    "originalContent": "a\nb\nc\n",
                    "newContent": "a\nB\nc\n",
                },
            },
            {
                "id": "write_4",
                "name": "write_file",
                "args": {
                    "file_path": "/home/u/expense/test_app.py",
                    "content": "def test():\n    pass\n",
                },
                "result": [
                    response(
                        "write_4",
                        "write_file",
                        {"output": "Successfully created and wrote to new file"},
                    )
                ],
                "status": "success",
                "timestamp": "2026-06-12T04:20:02.000Z",
                "resultDisplay": {
                    "fileDiff": "...",
                    "fileName": "test_app.py",
                    "originalContent": None,
                    "newContent": "def test():\n    pass\n",
                    "isNewFile": True,
                },
            },
            {
                "id": "replace_5",
                "name": "replace",
                "args": {
                    "file_path": "/home/u/expense/app.py",
                    "old_string": "x",
                    "new_string": "y",
                },
                "result": [
                    response(
                        "replace_5", "replace", {"error": "Failed to edit, 0 occurrences found"}
                    )
                ],
                "status": "error",
                "timestamp": "2026-06-12T04:20:03.000Z",
                "resultDisplay": "Error: Failed to edit",
            },
            {
                "id": "shell_6",
                "name": "run_shell_command",
                "args": {"command": "pytest"},
                "status": "executing",
                "timestamp": "2026-06-12T04:20:04.000Z",
            },
        ],
    },
    {
        "id": "e1",
        "timestamp": "2026-06-12T13:10:21.208Z",
        "type": "error",
        "content": "Please provide a file path.",
    },
    {
        "id": "i1",
        "timestamp": "2026-06-12T13:10:22.208Z",
        "type": "info",
        "content": "Switched to fallback model.",
    },
    {
        "id": "w1",
        "timestamp": "2026-06-12T13:10:23.208Z",
        "type": "warning",
        "content": "Context window almost full",
    },
    {
        "id": "c1",
        "timestamp": "2026-06-12T13:10:23.208Z",
        "type": "info",
        "content": "Request cancelled.",
    },
]


def test_json_session_maps_every_message_type(tmp_path: Path) -> None:
    document = {
        "sessionId": SESSION,
        "projectHash": "7302744c",
        "startTime": "2026-06-12T04:14:14.031Z",
        "lastUpdated": "2026-06-12T13:10:23.208Z",
        "summary": "Fix the expense tracker",
        "kind": "main",
        "messages": MESSAGES,
    }
    path = tmp_path / "session-2026-06-12T04-14-b7db9eb8.json"
    path.write_text(json.dumps(document, indent=2), encoding="utf-8")
    parsed = GEMINI.parse(path)
    events = parsed.events
    assert kinds(events) == [
        "session_start",
        "raw",  # session context
        "user_message",
        "reasoning",
        "tool_call",
        "tool_call",
        "usage",
        "tool_result",
        "tool_result",
        "agent_message",
        "tool_call",
        "tool_call",
        "tool_call",
        "tool_call",
        "usage",
        "tool_result",
        "file_change",
        "tool_result",
        "file_change",
        "tool_result",
        "error",
        "raw",
        "raw",
        "error",  # the user stopped the request
        "session_end",
    ]
    stopped = events[-2]
    assert isinstance(stopped, Error) and stopped.interrupt
    start = events[0]
    assert (start.harness, start.model, start.cwd, start.title) == (
        "gemini-cli",
        "gemini-3-flash-preview",
        "/home/u/expense",
        "Fix the expense tracker",
    )
    assert (start.time, parsed.session_id) == ("2026-06-12T04:14:14.031Z", SESSION)
    assert events[1].reason == "context the harness sent"
    assert events[2].text == "explain the error" and events[2].source.pointer == "/messages/1"
    assert events[3].text == "Analyzing User Errors: I'm examining the traceback."
    assert events[3].time == "2026-06-12T04:17:07.158Z"
    usage = events[6]
    assert (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens) == (8510, 697, 3809)
    read, shell = events[7], events[8]
    assert (read.call_id, read.ok, read.output) == ("read_file_1", True, "flask==3.1.3\n")
    assert (shell.call_id, shell.ok, shell.output) == (
        "shell_2",
        False,
        "[Operation Cancelled] Reason: User denied execution.",
    )
    assert events[9].text == "I'll fix app.py and add a test."
    modified, created = events[16], events[18]
    assert (modified.call_id, modified.operation, modified.anchored, modified.content) == (
        "replace_3",
        "modify",
        True,
        "a\nB\nc\n",
    )
    assert (
        modified.diff
        == "--- a//home/u/expense/app.py\n+++ b//home/u/expense/app.py\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"
    )
    assert (created.path, created.operation, created.added) == (
        "/home/u/expense/test_app.py",
        "create",
        2,
    )
    failed = events[19]
    assert (failed.call_id, failed.ok, failed.output) == (
        "replace_5",
        False,
        "Failed to edit, 0 occurrences found",
    )
    assert not [r for r in of(events, "tool_result") if r.call_id == "shell_6"]
    assert events[20].message == "Please provide a file path."
    assert [e.reason for e in events[21:23]] == ["info message", "warning message"]
    assert events[-1].time == "2026-06-12T13:10:23.208Z"
    # The user message after the reply only repeats its two calls' results.
    assert parsed.dropped == {"repeated_result": 2}


def test_jsonl_session_updates_rewinds_and_subagents(tmp_path: Path) -> None:
    chats = tmp_path / "chats"
    subagent = "74ce6840-5aef-46f0-af7f-f9c45b43c809"
    jsonl(
        chats / SESSION / f"{subagent}.jsonl",
        [
            {
                "sessionId": subagent,
                "projectHash": "7302",
                "startTime": "2026-06-12T12:39:06Z",
                "kind": "subagent",
                "directories": ["/home/u"],
            },
            {
                "id": "s1",
                "timestamp": "2026-06-12T12:39:06Z",
                "type": "user",
                "content": [{"text": "How do I name a session?"}],
            },
            {
                "id": "s2",
                "timestamp": "2026-06-12T12:39:07Z",
                "type": "gemini",
                "content": "Use --resume.",
                "model": "gemini-3-flash-preview",
            },
        ],
    )
    jsonl(
        chats / SESSION / "other.jsonl",
        [
            {"sessionId": "other", "projectHash": "7302", "kind": "subagent"},
            {
                "id": "o1",
                "timestamp": "2026-06-12T12:50:00Z",
                "type": "user",
                "content": "unreferenced",
            },
        ],
    )
    first_reply = {
        "id": "g1",
        "timestamp": "2026-06-12T12:39:05Z",
        "type": "gemini",
        "content": "",
        "model": "gemini-3-flash-preview",
        "thoughts": [],
    }
    invoke = {
        "id": "invoke_1",
        "name": "invoke_agent",
        "args": {"agent_name": "cli_help", "prompt": "How do I name a session?"},
        "result": [
            response("invoke_1", "invoke_agent", {"output": "Subagent 'cli_help' finished."})
        ],
        "status": "success",
        "timestamp": "2026-06-12T12:40:38Z",
        "agentId": subagent,
        "resultDisplay": {
            "isSubagentProgress": True,
            "agentName": "cli_help",
            "state": "completed",
        },
    }
    records = [
        {
            "sessionId": SESSION,
            "projectHash": "7302",
            "startTime": "2026-06-12T12:39:00Z",
            "lastUpdated": "2026-06-12T12:39:00Z",
            "kind": "main",
        },
        {
            "id": "u1",
            "timestamp": "2026-06-12T12:39:01Z",
            "type": "user",
            "content": [{"text": "name my session"}],
            "displayContent": [{"text": "name my session"}],
        },
        {"$set": {"lastUpdated": "2026-06-12T12:39:01Z"}},
        first_reply,
        {**first_reply, "toolCalls": [invoke]},
        {
            **first_reply,
            "toolCalls": [invoke],
            "tokens": {
                "input": 50,
                "output": 5,
                "cached": 0,
                "thoughts": 0,
                "tool": 0,
                "total": 55,
            },
        },
        {"id": "u2", "timestamp": "2026-06-12T12:45:00Z", "type": "user", "content": "try again"},
        {"$rewindTo": "u2"},
        {
            "$set": {
                "messages": [
                    {"id": "u1", "type": "user", "content": [{"text": "<masked>"}]},
                    {
                        "id": "c1",
                        "timestamp": "2026-06-12T12:46:00Z",
                        "type": "user",
                        "content": [
                            {
                                "text": "<state_snapshot>\n<overall_goal>name the session</overall_goal>\n</state_snapshot>"
                            }
                        ],
                    },
                    {
                        "id": "c2",
                        "timestamp": "2026-06-12T12:46:00Z",
                        "type": "gemini",
                        "content": [{"text": "Got it. Thanks for the additional context!"}],
                    },
                ],
                "summary": "Naming sessions",
            }
        },
        "not a record",
        {"id": "x1", "timestamp": "2026-06-12T12:47:00Z", "content": "no type"},
        {"unknown": True},
    ]
    path = jsonl(chats / "session-2026-06-12T12-39-b7db9eb8.jsonl", records)
    with path.open("a", encoding="utf-8") as stream:
        stream.write('{"id": "cut", "type": "gem')
    parsed = GEMINI.parse(path)
    events = parsed.events
    assert kinds(events) == [
        "session_start",
        "user_message",
        "tool_call",
        "usage",
        "subagent",
        "user_message",
        "agent_message",
        "tool_result",
        "user_message",
        "rewind",
        "compaction",
        "agent_message",
        "raw",
        "raw",
        "raw",
        "subagent",
        "user_message",
        "session_end",
    ]
    start = events[0]
    assert (start.title, start.model, start.time) == (
        "Naming sessions",
        "gemini-3-flash-preview",
        "2026-06-12T12:39:00Z",
    )
    # A message written again keeps its place and takes its last copy.
    assert events[1].text == "name my session" and events[1].source.line == 2
    assert events[2].source.line == 6 and events[3].input_tokens == 50
    spawn = events[4]
    assert (spawn.agent_id, spawn.call_id, spawn.description) == (subagent, "invoke_1", "cli_help")
    assert events[5].agent == subagent and events[5].source.file == f"{SESSION}/{subagent}.jsonl"
    assert events[5].source.line == 2
    assert (events[7].call_id, events[7].agent) == ("invoke_1", None)
    # The rewind to before "try again" leaves that prompt behind, and goes on after the reply.
    rewind = events[9]
    assert (rewind.resumes_after.file, rewind.resumes_after.line) == (path.name, 6)
    assert [e.kind for e in events if e.abandoned] == ["user_message"]
    assert events[8].text == "try again" and events[8].abandoned
    assert (
        events[10].summary.startswith("<state_snapshot>")
        and events[10].source.pointer == "/$set/messages/1"
    )
    assert [e.reason for e in events[12:15]] == [
        "record is not a JSON object",
        "record has no type",
        "record has no type",
    ]
    assert (events[15].agent_id, events[15].call_id) == ("other", None)
    assert events[16].agent == "other"
    assert set(parsed.sources) == {
        path.name,
        f"{SESSION}/{subagent}.jsonl",
        f"{SESSION}/other.jsonl",
    }
    assert [(p.source, p.line) for p in parsed.problems] == [(path.name, len(records) + 1)]


def test_a_rewind_leaves_the_messages_after_it_behind(tmp_path: Path) -> None:
    """`{"$rewindTo": id}` takes the conversation back to before that message: it and every
    message after it are abandoned (a file change among them too), and a message written
    later with the id of one taken back is a new one."""

    def user(message_id: str, text: str) -> dict[str, Any]:
        return {
            "id": message_id,
            "timestamp": "2026-06-12T12:39:01Z",
            "type": "user",
            "content": text,
        }

    edit = {
        "id": "write_1",
        "name": "write_file",
        "args": {"file_path": "/p/a.txt", "content": "one\n"},
        "result": [response("write_1", "write_file", {"output": "Wrote a.txt"})],
        "status": "success",
        "timestamp": "2026-06-12T12:39:03Z",
    }
    records = [
        {"sessionId": SESSION, "projectHash": "7302", "startTime": "2026-06-12T12:39:00Z"},
        user("u1", "first"),
        {"id": "g1", "timestamp": "2026-06-12T12:39:02Z", "type": "gemini", "content": "ok"},
        user("u2", "write a.txt"),
        {"id": "g2", "type": "gemini", "content": "", "toolCalls": [edit]},
        {"$rewindTo": "u2"},
        user("u2", "write b.txt instead"),
        {"$rewindTo": "nowhere"},
        user("u3", "start over"),
    ]
    path = jsonl(tmp_path / "session-2026-06-12T12-39-b7db9eb8.jsonl", records)
    events = GEMINI.parse(path).events
    shown = [
        (e.kind, e.abandoned) for e in events if e.kind not in ("session_start", "session_end")
    ]
    assert shown == [
        ("user_message", True),
        ("agent_message", True),
        ("user_message", True),
        ("tool_call", True),
        ("tool_result", True),
        ("file_change", True),
        ("rewind", True),  # on the branch the second rewind leaves
        ("user_message", True),
        ("rewind", False),
        ("user_message", False),
    ]
    first, second = of(events, "rewind")
    assert (first.resumes_after.line, second.resumes_after) == (3, None)
    assert [e.text for e in of(events, "user_message")] == [
        "first",
        "write a.txt",
        "write b.txt instead",
        "start over",
    ]


def subagent_call(call_id: str, state: str, output: str, **more: Any) -> dict[str, Any]:
    """A subagent tool's call as Gemini CLI of March 2026 recorded it: its progress shown
    (`resultDisplay`), status "success" even when the subagent failed (the tool leaves out
    `error` so that the progress is shown), and no session of the subagent's own."""
    return {
        "id": call_id,
        "name": "generalist",
        "args": {"request": "Create hello.txt"},
        "result": [response(call_id, "generalist", {"output": output})],
        "status": "success",
        "timestamp": "2026-04-01T11:14:15.882Z",
        "resultDisplay": {
            "isSubagentProgress": True,
            "agentName": "generalist",
            "recentActivity": [
                {
                    "id": "3a229858",
                    "type": "tool_call",
                    "content": "activate_skill",
                    "displayName": "activate_skill",
                    "args": '{"skill_name":"skill-creator"}',
                    "status": "error",
                },
                {
                    "id": "feac592a",
                    "type": "thought",
                    "content": "Error: TerminalQuotaError: You have exhausted your daily quota.",
                    "status": "error",
                },
            ],
            "state": state,
        },
        "description": "Delegating to agent 'generalist'",
        "displayName": "Generalist Agent",
        **more,
    }


@pytest.mark.parametrize(
    ("state", "ok"), [("completed", True), ("error", False), ("cancelled", False)]
)
def test_a_subagent_shown_only_by_its_progress(tmp_path: Path, state: str, ok: bool) -> None:
    failed = "Subagent 'generalist' failed. Error: You have exhausted your daily quota."
    call = subagent_call("ip8uyj0a", state, "Subagent 'generalist' finished." if ok else failed)
    session = {
        "sessionId": SESSION,
        "projectHash": "91f1",
        "startTime": "2026-04-01T11:11:56.830Z",
        "lastUpdated": "2026-04-01T11:16:13.947Z",
        "messages": [
            {
                "id": "u1",
                "timestamp": "2026-04-01T11:11:56.830Z",
                "type": "user",
                "content": [{"text": "create a hello world file"}],
            },
            {
                "id": "g1",
                "timestamp": "2026-04-01T11:12:49.033Z",
                "type": "gemini",
                "content": "I will delegate it.",
                "model": "gemini-3-flash-preview",
                "toolCalls": [call],
            },
        ],
        "kind": "main",
    }
    path = tmp_path / "session-2026-04-01T11-11-5cdd2021.json"
    path.write_text(json.dumps(session), encoding="utf-8")
    events = GEMINI.parse(path).events
    assert kinds(events)[3:] == ["tool_call", "subagent", "raw", "tool_result", "session_end"]
    subagent, activity, result = events[4:7]
    assert (subagent.agent_id, subagent.call_id, subagent.agent) == ("generalist", "ip8uyj0a", None)
    assert activity.agent == "generalist"
    assert activity.record == call["resultDisplay"]["recentActivity"]
    assert (result.call_id, result.ok) == ("ip8uyj0a", ok)


def test_a_call_in_the_content_and_in_tool_calls_is_one_call(tmp_path: Path) -> None:
    """Gemini CLI writes a reply's content again from the model's turn in its history
    (`updateMessagesFromHistory`), whose `functionCall` parts carry the id the model gave,
    none for most models, while `toolCalls` records each call under the id the CLI gave it
    then (`<name>-<time>-<random>`). The content's part and the recorded call were two calls,
    one of them never answered; a part of the same name and arguments as a recorded call
    that no part names is that call. A part that matches no recorded call stays a call."""
    args = {"file_path": "app.py"}
    ran = {
        "id": "read_file-1747052074000-3f2a",
        "name": "read_file",
        "args": args,
        "result": [response("read_file-1747052074000-3f2a", "read_file", {"output": "ok"})],
        "status": "success",
        "timestamp": "2026-05-12T12:14:34.000Z",
    }
    path = jsonl(
        tmp_path / "chats" / "session-2026-05-12T12-14-1b2c3d4e.jsonl",
        [
            {"sessionId": SESSION, "projectHash": "h", "startTime": "2026-05-12T12:14:32Z"},
            {
                "id": "u1",
                "timestamp": "2026-05-12T12:14:33.000Z",
                "type": "user",
                "content": [{"text": "read app.py"}],
            },
            {
                "id": "g1",
                "timestamp": "2026-05-12T12:14:34.000Z",
                "type": "gemini",
                "content": [
                    {"functionCall": {"name": "read_file", "args": args}},
                    {"functionCall": {"name": "glob", "args": {"pattern": "*.py"}}},
                ],
                "toolCalls": [ran],
                "model": "gemini-3-flash-preview",
            },
        ],
    )
    events = GEMINI.parse(path).events
    calls = of(events, "tool_call")
    assert [(c.call_id, c.name) for c in calls] == [
        ("3#1", "glob"),  # named by its line and part, as a call only in the content is
        ("read_file-1747052074000-3f2a", "read_file"),
    ]
    assert [(r.call_id, r.ok) for r in of(events, "tool_result")] == [
        ("read_file-1747052074000-3f2a", True)
    ]


def test_thought_parts_without_summaries_and_opaque_signatures(tmp_path: Path) -> None:
    records = [
        {"sessionId": "s", "projectHash": "p"},
        {
            "id": "g",
            "timestamp": "t",
            "type": "gemini",
            "content": [
                {"text": "Binary content received.", "thought": True},
                {"thought": True, "thoughtSignature": "opaque=="},
                {"text": "Here it is."},
            ],
        },
    ]
    parsed = GEMINI.parse(jsonl(tmp_path / "s.jsonl", records))
    assert [e.text for e in of(parsed.events, "reasoning")] == ["Binary content received."]
    assert of(parsed.events, "agent_message")[0].text == "Here it is."
    assert parsed.dropped["opaque_reasoning"] == 1


def test_signatures_on_the_parts_read_are_opaque_reasoning(tmp_path: Path) -> None:
    """A reasoning signature on a text, a thought or a function call is left out and counted,
    once a part (a thought whose only content is its signature counts once); the parts' text
    and calls are read as ever."""
    history = [
        {"role": "user", "parts": [{"text": "check"}]},
        {
            "role": "model",
            "parts": [
                {"text": "Looking.", "thought": True, "thoughtSignature": "c2lnMQ=="},
                {"thought": True, "thoughtSignature": "c2lnMg=="},
                {"text": "Listing the files.", "thoughtSignature": "c2lnMw=="},
                {
                    "functionCall": {"name": "ls", "args": {}, "id": "l1"},
                    "thoughtSignature": "c2ln",
                },
            ],
        },
    ]
    path = tmp_path / "checkpoint-signed.json"
    path.write_text(json.dumps(history), encoding="utf-8")
    parsed = GEMINI.parse(path)
    assert kinds(parsed.events) == [
        "session_start",
        "user_message",
        "reasoning",
        "agent_message",
        "tool_call",
        "session_end",
    ]
    assert parsed.dropped == {"opaque_reasoning": 4}
    assert not any("c2ln" in event_json(e) for e in parsed.events)


def test_a_reply_of_opaque_reasoning_alone_is_counted_once_and_not_stored(
    tmp_path: Path,
) -> None:
    """A reply whose only part is a reasoning signature on an empty text, or a thought
    without text, is counted in `opaque_reasoning` and nothing else: no raw event of a reply
    with nothing readable, which would store the signature the count says was left out."""
    records = [
        {"sessionId": "s", "projectHash": "p"},
        {"id": "u1", "timestamp": "t1", "type": "user", "content": [{"text": "go"}]},
        {
            "id": "g1",
            "timestamp": "t2",
            "type": "gemini",
            "content": [{"text": "", "thoughtSignature": "c2lnMQ=="}],
        },
        {"id": "g2", "timestamp": "t3", "type": "gemini", "content": [{"thought": True}]},
        {"id": "g3", "timestamp": "t4", "type": "gemini", "content": [{"text": "Done."}]},
    ]
    parsed = GEMINI.parse(jsonl(tmp_path / "s.jsonl", records))
    assert kinds(parsed.events) == ["session_start", "user_message", "agent_message", "session_end"]
    assert parsed.dropped == {"opaque_reasoning": 2}
    assert not any("c2ln" in event_json(e) for e in parsed.events)


def test_what_the_harness_sent_for_a_typed_prompt_is_kept_and_its_bytes_counted(
    tmp_path: Path,
) -> None:
    """A prompt whose `content` (what the model was sent: the files an @ named, read) is
    not what the user typed (`displayContent`) keeps that content as a raw event after the
    prompt; the bytes of inline data in a prompt (an image an @ named) are left out of every
    event and counted in `inline_data`, as a reply's are."""
    image = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB"
    sent = [
        {"text": "What is in @shot.png?"},
        {"text": "\n--- Content from referenced files ---"},
        {"inlineData": {"mimeType": "image/png", "data": image}},
        {"text": "\n--- End of content ---"},
    ]
    records = [
        {"sessionId": "s", "projectHash": "p"},
        {
            "id": "u1",
            "timestamp": "t1",
            "type": "user",
            "content": sent,
            "displayContent": [{"text": "What is in @shot.png?"}],
        },
        {"id": "g1", "timestamp": "t2", "type": "gemini", "content": [{"text": "A cat."}]},
        {
            "id": "u2",
            "timestamp": "t3",
            "type": "user",
            "content": [
                {"text": "And this?"},
                {"inlineData": {"mimeType": "image/png", "data": image}},
            ],
        },
    ]
    parsed = GEMINI.parse(jsonl(tmp_path / "s.jsonl", records))
    events = parsed.events
    assert kinds(events) == [
        "session_start",
        "user_message",
        "raw",
        "agent_message",
        "user_message",
        "session_end",
    ]
    assert events[1].text == "What is in @shot.png?"
    assert events[2].reason == "the prompt as the harness sent it for what the user typed"
    assert events[2].record[2] == {"inlineData": {"mimeType": "image/png"}}
    assert [p.get("text") for p in events[2].record] == [p.get("text") for p in sent]
    assert events[4].text == "And this?[inline data: image/png]"
    assert parsed.dropped == {"inline_data": 2}
    assert not any(image in event_json(e) for e in events)


def test_reply_parts_of_every_kind_are_kept(tmp_path: Path) -> None:
    """Parts the Gemini API defines besides text, thoughts and function calls (the code
    execution tool's code and result, inline data, files) and parts of no known kind are
    events or counted, and a record of nothing readable is a raw event, never nothing."""
    image = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg=="
    reply = [
        {"text": "Running it."},
        {"executableCode": {"language": "PYTHON", "code": "print(2 + 2)"}},
        {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "4\n"}},
        {"executableCode": {"id": "c2", "language": "PYTHON", "code": "1 / 0"}},
        {"codeExecutionResult": {"id": "c2", "outcome": "OUTCOME_FAILED", "output": "boom"}},
        {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "stray"}},
        {"inlineData": {"mimeType": "image/png", "data": image}, "thoughtSignature": "c2ln"},
        {"fileData": {"mimeType": "text/csv", "fileUri": "gs://bucket/x.csv"}},
        {"videoMetadata": {"fps": 1}},
    ]
    records = [
        {"sessionId": "s", "projectHash": "p"},
        {"id": "g1", "timestamp": "t", "type": "gemini", "content": reply},
        {"id": "g2", "type": "gemini", "content": {"weird": 1}, "tokens": "many"},
        {"id": "g3", "type": "gemini", "content": []},
        {"id": "g4", "type": "gemini", "content": 7},
        {"id": "u1", "type": "user", "content": [{"weird": 2}]},
        {"id": "u2", "type": "user", "content": [{"text": "see this"}, {"weird": 3}]},
    ]
    parsed = GEMINI.parse(jsonl(tmp_path / "s.jsonl", records))
    events = parsed.events
    assert kinds(events) == [
        "session_start",
        "agent_message",
        "tool_call",
        "tool_result",
        "tool_call",
        "tool_result",
        "raw",
        "raw",
        "raw",
        "raw",
        "raw",
        "raw",
        "raw",
        "agent_message",
        "raw",
        "user_message",
        "raw",
        "session_end",
    ]
    first, second = of(events, "tool_call")
    assert (first.name, first.input) == ("code_execution", reply[1]["executableCode"])
    assert (second.call_id, second.input) == ("c2", {"language": "PYTHON", "code": "1 / 0"})
    results = of(events, "tool_result")
    assert [(r.call_id, r.ok, r.output) for r in results] == [
        (first.call_id, True, "4\n"),
        ("c2", False, "boom"),
    ]
    raws = of(events, "raw")
    assert [r.reason for r in raws] == [
        "code execution result without its code",
        "inline data in the model's reply (its bytes left out)",
        "file in the model's reply",
        "reply part of a kind not understood",
        "reply part of a kind not understood",
        "token counts not understood",
        "model reply with nothing readable",
        "user message without text",
        "user message part of a kind not understood",
    ]
    assert raws[1].record == {"inlineData": {"mimeType": "image/png"}}
    assert [r.record for r in raws[3:6]] == [
        {"videoMetadata": {"fps": 1}},
        {"weird": 1},
        {"tokens": "many"},
    ]
    assert raws[6].record["id"] == "g3" and raws[8].record == {"weird": 3}
    assert of(events, "agent_message")[1].text == "7"
    assert parsed.dropped == {"inline_data": 1, "opaque_reasoning": 1}
    assert not any(image in event_json(e) for e in events)


def test_logs_json_holds_prompts(tmp_path: Path) -> None:
    logs = [
        {
            "sessionId": "s1",
            "messageId": 0,
            "type": "user",
            "message": "first prompt",
            "timestamp": "2025-07-01T10:00:00.000Z",
        },
        {
            "sessionId": "s2",
            "messageId": 0,
            "type": "user",
            "message": "/help",
            "timestamp": "2025-07-02T10:00:00.000Z",
        },
        {
            "sessionId": "s2",
            "messageId": 1,
            "type": "model",
            "message": "?",
            "timestamp": "2025-07-02T10:00:01.000Z",
        },
    ]
    path = tmp_path / "logs.json"
    path.write_text(json.dumps(logs, indent=2), encoding="utf-8")
    parsed = GEMINI.parse(path)
    prompts = of(parsed.events, "user_message")
    assert [(p.session, p.text) for p in prompts] == [("s1", "first prompt"), ("s2", "/help")]
    assert of(parsed.events, "raw")[0].reason == "log entry that is not a prompt"
    assert len(parsed.session_id) == 16  # two sessions: the file names it


def test_checkpoints_are_model_histories(tmp_path: Path) -> None:
    """A checkpoint is one JSON document, spread over lines or written on one (then it is
    no JSON Lines record: a whole object holding `history`)."""
    history = [
        {"role": "user", "parts": [{"text": "list the files"}]},
        {
            "role": "model",
            "parts": [
                {"text": "Listing."},
                {"functionCall": {"name": "list_directory", "args": {"path": "."}}},
            ],
        },
        {
            "role": "user",
            "parts": [
                {"functionResponse": {"name": "list_directory", "response": {"output": "a.py"}}}
            ],
        },
        {"role": "system", "parts": []},
    ]
    for name, document, indent in (
        ("checkpoint-a.json", history, 2),
        ("checkpoint-b.json", {"history": history, "authType": "oauth"}, 2),
        ("checkpoint-c.json", {"history": history, "authType": "oauth"}, None),
    ):
        path = tmp_path / name
        path.write_text(json.dumps(document, indent=indent) + "\n", encoding="utf-8")
        assert detect(path).name == "gemini-cli"
        events = GEMINI.parse(path).events
        if isinstance(document, dict):
            # What the checkpoint holds besides its history is kept, after the start.
            metadata = events.pop(1)
            assert (metadata.kind, metadata.record) == ("raw", {"authType": "oauth"})
            assert metadata.reason == "the session's metadata that no event holds"
        assert kinds(events) == [
            "session_start",
            "user_message",
            "agent_message",
            "tool_call",
            "tool_result",
            "raw",
            "session_end",
        ]
        call, result = events[3], events[4]
        assert call.call_id == result.call_id and call.call_id.endswith("/1#1")
        assert result.output == "a.py"


def test_session_metadata_no_event_holds_is_kept_raw(tmp_path: Path) -> None:
    """A session's metadata fields other than those read (the id, the project's hash, the
    times, the summary, the folders, the kind), first line or a later `$set`, are one raw
    event after the start."""
    records = [
        {"sessionId": "s", "projectHash": "p", "kind": "main", "memory": {"notes": "x"}},
        {"id": "u1", "timestamp": "t1", "type": "user", "content": "hi"},
        {"$set": {"lastUpdated": "t2", "approvalMode": "yolo"}},
    ]
    events = GEMINI.parse(jsonl(tmp_path / "s.jsonl", records)).events
    assert kinds(events) == ["session_start", "raw", "user_message", "session_end"]
    assert events[1].record == {"memory": {"notes": "x"}, "approvalMode": "yolo"}
    assert events[1].source.line == 1


def test_checkpoint_edits_are_file_changes(tmp_path: Path) -> None:
    """A `/chat save` checkpoint holds no FileDiff: an edit that succeeded (its response
    holds no `error`) is the change its arguments tell, as in a public checkpoint of 17
    `replace` calls that gave no file change at all; a failed one changes nothing."""
    history = [
        {"role": "user", "parts": [{"text": "rename the flag"}]},
        {
            "role": "model",
            "parts": [
                {
                    "functionCall": {
                        "name": "replace",
                        "args": {
                            "file_path": "/w/pkg/flags.ts",
                            "old_string": "const keep = true;",
                            "new_string": "const keep = false;",
                        },
                        "id": "r1",
                    },
                    "thoughtSignature": "c2lnbmF0dXJl",
                },
                {
                    "functionCall": {
                        "name": "write_file",
                        "args": {"file_path": "/w/pkg/new.ts", "content": "export {};\n"},
                        "id": "w1",
                    }
                },
                {
                    "functionCall": {
                        "name": "replace",
                        "args": {
                            "file_path": "/w/pkg/flags.ts",
                            "old_string": "x",
                            "new_string": "y",
                        },
                        "id": "r2",
                    }
                },
                {
                    "functionCall": {
                        "name": "replace",
                        "args": {
                            "file_path": "/w/pkg/flags.ts",
                            "old_string": "const gone = 1;",
                            "new_string": "",
                        },
                        "id": "r3",
                    }
                },
            ],
        },
        {
            "role": "user",
            "parts": [
                {
                    "functionResponse": {
                        "id": "r1",
                        "name": "replace",
                        "response": {
                            "output": "Successfully modified file: /w/pkg/flags.ts (1 replacements)."
                        },
                    }
                },
                {
                    "functionResponse": {
                        "id": "w1",
                        "name": "write_file",
                        "response": {
                            "output": "Successfully created and wrote to new file: /w/pkg/new.ts."
                        },
                    }
                },
                {
                    "functionResponse": {
                        "id": "r2",
                        "name": "replace",
                        "response": {
                            "error": "Failed to edit, could not find the string to replace."
                        },
                    }
                },
                {
                    "functionResponse": {
                        "id": "r3",
                        "name": "replace",
                        "response": {
                            # The failure in the output, no `error`: as older builds answered.
                            "output": "Failed to edit, 0 occurrences found for old_string in"
                            " /w/pkg/flags.ts. No edits made."
                        },
                    }
                },
            ],
        },
    ]
    path = tmp_path / "checkpoint-flags.json"
    path.write_text(json.dumps(history, indent=2), encoding="utf-8")
    events = GEMINI.parse(path).events
    results = of(events, "tool_result")
    assert [(r.call_id, r.ok) for r in results] == [
        ("r1", True),
        ("w1", True),
        ("r2", False),
        ("r3", False),
    ]
    changes = of(events, "file_change")
    assert [(c.call_id, c.path, c.operation) for c in changes] == [
        ("r1", "/w/pkg/flags.ts", "modify"),
        ("w1", "/w/pkg/new.ts", "create"),
    ]
    assert "\n-const keep = true;\n" in changes[0].diff
    assert "\n+const keep = false;\n" in changes[0].diff
    assert changes[1].content == "export {};\n"
    # Each change follows the result that reported it.
    assert events.index(changes[0]) == events.index(results[0]) + 1


def test_harness_continuation_and_edits_without_a_file_diff(tmp_path: Path) -> None:
    """Shapes seen in real sessions: the "System: Please continue." turn the CLI sends itself
    (shown as the tool output it follows), and edit calls recorded without a FileDiff."""
    write = {
        "id": "write_file-1",
        "name": "write_file",
        "args": {"file_path": "pkg/tool.py", "content": "print(2)\n"},
        "result": [
            response(
                "write_file-1",
                "write_file",
                {"output": "Successfully created and wrote to new file: /w/pkg/tool.py."},
            )
        ],
        "status": "success",
        "timestamp": "2026-01-02T10:00:03Z",
    }
    replace = {
        "id": "replace-1",
        "name": "replace",
        "args": {"file_path": "pkg/tool.py", "old_string": "print(2)", "new_string": "print(3)"},
        "result": [response("replace-1", "replace", {"output": "Successfully modified file."})],
        "status": "success",
        "resultDisplay": "",
    }
    topic = response("topic-1", "update_topic", {"output": "Intent: done."})
    records = [
        {"sessionId": SESSION, "projectHash": "p", "startTime": "2026-01-02T10:00:00Z"},
        {
            "id": "u1",
            "timestamp": "2026-01-02T10:00:01Z",
            "type": "user",
            "content": [{"text": "make a tool"}],
        },
        {
            "id": "g1",
            "timestamp": "2026-01-02T10:00:02Z",
            "type": "gemini",
            "content": "",
            "toolCalls": [
                write,
                replace,
                {
                    "id": "topic-1",
                    "name": "update_topic",
                    "args": {},
                    "result": [topic],
                    "status": "success",
                },
            ],
        },
        {
            "id": "u2",
            "timestamp": "2026-01-02T10:00:04Z",
            "type": "user",
            "content": [{"text": "System: Please continue."}],
            "displayContent": [topic],
        },
        {
            "id": "u3",
            "timestamp": "2026-01-02T10:00:05Z",
            "type": "user",
            "content": "System: Please continue.",
        },
        {
            "id": "u4",
            "timestamp": "2026-01-02T10:00:06Z",
            "type": "user",
            "content": [{"text": "go on with the plan"}],
            "displayContent": [
                {"functionResponse": {"id": "x", "name": "update_topic", "response": {}}}
            ],
        },
    ]
    events = GEMINI.parse(jsonl(tmp_path / "s.jsonl", records)).events
    assert kinds(events) == [
        "session_start",
        "user_message",
        "tool_call",
        "tool_call",
        "tool_call",
        "tool_result",
        "file_change",
        "tool_result",
        "file_change",
        "tool_result",
        "raw",
        "raw",
        "raw",
        "raw",
        "session_end",
    ]
    created, modified = of(events, "file_change")
    assert (created.path, created.operation, created.content, created.call_id) == (
        "pkg/tool.py",
        "create",
        "print(2)\n",
        "write_file-1",
    )
    assert (modified.operation, modified.added, modified.removed) == ("modify", 1, 1)
    raws = of(events, "raw")
    assert [r.reason for r in raws] == [
        "continuation the harness sent",
        "continuation the harness sent",
        "text the harness sent in the user's turn",
        "tool response without a call",
    ]
    assert raws[0].record["id"] == "u2" and raws[2].record["id"] == "u4"


def test_a_command_that_exits_non_zero_is_a_failed_result(tmp_path: Path) -> None:
    """Gemini CLI records a shell command that ran and exited non-zero as a call of status
    "success" (a checkpoint as a response without `error`): the status lines it writes after
    the command's output say it failed (`Exit Code: 1`), in the form of 0.1 builds
    (`Exit Code: 0` always written) and of later ones (written only when not 0, the whole
    output wrapped in `<untrusted_context>`)."""

    def shell(call_id: str, output: str) -> dict[str, Any]:
        return {
            "id": call_id,
            "name": "run_shell_command",
            "args": {"command": "npm run build"},
            "result": [response(call_id, "run_shell_command", {"output": output})],
            "status": "success",
            "timestamp": "2026-03-17T10:00:03Z",
        }

    failed = "Output: src/a.ts:3:1 - error TS2339\nFound 1 error.\nExit Code: 1\nProcess Group PGID: 8905"
    wrapped = f"<untrusted_context>\n{failed}\n</untrusted_context>"
    old = (
        "Command: npm run build\nDirectory: (root)\nStdout: built\nStderr: (empty)\n"
        "Error: (none)\nExit Code: 0\nSignal: (none)\nBackground PIDs: (none)\n"
        "Process Group PGID: 12"
    )
    printed = "Output: Exit Code: 2\nProcess Group PGID: 7"  # the command printed it
    records = [
        {"sessionId": SESSION, "projectHash": "p", "startTime": "2026-03-17T10:00:00Z"},
        {"id": "u1", "timestamp": "2026-03-17T10:00:01Z", "type": "user", "content": "build"},
        {
            "id": "g1",
            "timestamp": "2026-03-17T10:00:02Z",
            "type": "gemini",
            "content": "",
            "toolCalls": [
                shell("s1", failed),
                shell("s2", wrapped),
                shell("s3", old),
                shell("s4", printed),
            ],
        },
    ]
    results = of(GEMINI.parse(jsonl(tmp_path / "s.jsonl", records)).events, "tool_result")
    assert [(r.call_id, r.ok) for r in results] == [
        ("s1", False),
        ("s2", False),
        ("s3", True),
        ("s4", True),
    ]
    history = [
        {"role": "user", "parts": [{"text": "build"}]},
        {
            "role": "model",
            "parts": [
                {
                    "functionCall": {
                        "id": "c1",
                        "name": "run_shell_command",
                        "args": {"command": "npm run build"},
                    }
                }
            ],
        },
        {"role": "user", "parts": [response("c1", "run_shell_command", {"output": failed})]},
    ]
    path = tmp_path / "checkpoint-build.json"
    path.write_text(json.dumps(history, indent=2), encoding="utf-8")
    (result,) = of(GEMINI.parse(path).events, "tool_result")
    assert (result.call_id, result.ok) == ("c1", False)


def test_2mb_record_and_invalid_utf8(tmp_path: Path) -> None:
    big = "z" * (2 * 1024 * 1024)
    records = [
        {"sessionId": "s", "projectHash": "p"},
        {"id": "u", "timestamp": "t", "type": "user", "content": "caf\u00e9 " + big},
    ]
    path = tmp_path / "s.jsonl"
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    path.write_bytes(text.encode().replace("caf\u00e9".encode(), b"caf\xc3"))
    message = of(GEMINI.parse(path).events, "user_message")[0]
    assert message.text == "caf\ufffd " + big


def test_nothing_readable_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text("not json at all", encoding="utf-8")
    with pytest.raises(StetError):
        GEMINI.parse(path)


def test_sniff_claims_only_gemini() -> None:
    assert GEMINI.sniff('{\n  "sessionId": "x",\n  "projectHash": "y",\n  "messages": [')
    assert GEMINI.sniff('{"sessionId":"x","projectHash":"y","startTime":"t"}\n{"id":"a"')
    assert GEMINI.sniff(
        '[\n  {\n    "sessionId": "s",\n    "messageId": 0,\n    "type": "user",\n    "message": "hi"'
    )
    assert GEMINI.sniff('[{"role": "user", "parts": [{"text": "hi"}]}]')
    assert GEMINI.sniff('{"history": [{"role": "model", "parts": []}], "authType": "x"}')
    assert not GEMINI.sniff('{"parentUuid":null,"sessionId":"x","type":"user"}\n')
    assert not GEMINI.sniff('{"history": [{"role": "system", "content": "x"}], "trajectory": []}')
    assert not GEMINI.sniff('[{"id": 0, "source": "user", "action": "message", "args": {}}]')
    assert not GEMINI.sniff('{"schema_version": "ATIF-v1.6", "steps": []}')
    assert importer("gemini-cli").label == "Gemini CLI session JSON"


def test_a_jsonl_session_whose_messages_name_the_session_is_gemini(tmp_path: Path) -> None:
    """A session's records may carry its sessionId beside a `type` Claude Code also uses;
    the metadata line (with projectHash) says whose they are."""
    path = jsonl(
        tmp_path / "session-2025-11-02T10-00-abc.jsonl",
        [
            {"sessionId": "s-7", "projectHash": "f00d", "startTime": "2025-11-02T10:00:00Z"},
            {
                "id": "m1",
                "timestamp": "2025-11-02T10:00:01Z",
                "type": "user",
                "sessionId": "s-7",
                "content": "Rename the helper",
            },
            {
                "id": "m2",
                "timestamp": "2025-11-02T10:00:05Z",
                "type": "gemini",
                "sessionId": "s-7",
                "content": "Done.",
                "model": "gemini-2.5-pro",
            },
        ],
    )
    assert detect(path).name == "gemini-cli"
    assert kinds(GEMINI.parse(path).events)[1:3] == ["user_message", "agent_message"]


def test_events_serialise(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text(
        json.dumps({"sessionId": SESSION, "projectHash": "p", "messages": MESSAGES}),
        encoding="utf-8",
    )
    assert detect(path).name == "gemini-cli"
    for event in GEMINI.parse(path).events:
        json.loads(event_json(event))


def test_an_exit_code_that_is_no_number_is_no_failure() -> None:
    for output in ("x\nExit Code: --1", "x\nExit Code: \u00b2", "x\nExit Code: 1" + "0" * 40):
        assert command_failed("run_shell_command", output) is False
    assert command_failed("run_shell_command", "x\nExit Code: -1") is True
