"""Qwen Code sessions: hand-written files in the shapes chatRecordingService writes (the
records of 0.21 builds, and the token summaries of early ones), modelled on real sessions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_import_gemini import jsonl, kinds, of

from stet_lsp.core.errors import StetError
from stet_lsp.trajectory.events import ToolResult, event_json
from stet_lsp.trajectory.importers import detect, importer
from stet_lsp.trajectory.importers.qwen_code import IMPORTERS

QWEN = IMPORTERS["qwen-code"]
SESSION = "5c0ffee0-1111-4222-8333-944445555666"
CWD = "/home/u/shop"


def record(uuid: str, parent: str | None, second: int, kind: str, **extra: Any) -> dict[str, Any]:
    return {
        "uuid": uuid,
        "parentUuid": parent,
        "sessionId": SESSION,
        "timestamp": f"2026-08-20T09:00:{second:02d}.000Z",
        "type": kind,
        "cwd": CWD,
        "version": "0.21.13",
        "gitBranch": "main",
        **extra,
    }


def prompt(uuid: str, parent: str | None, second: int, text: str, **extra: Any) -> dict[str, Any]:
    return record(
        uuid,
        parent,
        second,
        "user",
        systemPayload={"displayText": text},
        message={"role": "user", "parts": [{"text": text}]},
        **extra,
    )


def reply(uuid: str, parent: str, second: int, *parts: Any, **extra: Any) -> dict[str, Any]:
    return record(
        uuid,
        parent,
        second,
        "assistant",
        model="qwen3-coder-plus",
        message={"role": "model", "parts": list(parts)},
        **extra,
    )


def call(call_id: str, name: str, **args: Any) -> dict[str, Any]:
    return {"functionCall": {"id": call_id, "name": name, "args": args}}


def result(
    uuid: str, parent: str, second: int, call_id: str, name: str, body: Any, **info: Any
) -> dict[str, Any]:
    response = {"functionResponse": {"id": call_id, "name": name, "response": body}}
    return record(
        uuid,
        parent,
        second,
        "tool_result",
        message={"role": "user", "parts": [response]},
        toolCallResult={"callId": call_id, **info},
    )


def system(uuid: str, parent: str | None, second: int, subtype: str, payload: Any) -> dict:
    return record(uuid, parent, second, "system", subtype=subtype, systemPayload=payload)


USAGE = {
    "promptTokenCount": 1200,
    "candidatesTokenCount": 80,
    "cachedContentTokenCount": 1000,
    "thoughtsTokenCount": 20,
    "totalTokenCount": 1300,
}
EDIT_DISPLAY = {
    "fileDiff": "Index: cart.py\n===\n--- cart.py\tCurrent\n+++ cart.py\tProposed\n@@ -1,2 +1,2 @@\n def total(items):\n-    return sum(items)\n+    return round(sum(items), 2)\n",
    "fileName": "cart.py",
    "originalContent": "def total(items):\n    return sum(items)\n",
    "newContent": "def total(items):\n    return round(sum(items), 2)\n",
}
SESSION_RECORDS: list[Any] = [
    system("s0", None, 0, "session_source", {"sourceType": "cli"}),
    record(
        "u1",
        "s0",
        1,
        "user",
        systemPayload={"displayText": "round the cart total", "hookContext": "ctx"},
        message={
            "role": "user",
            "parts": [
                {"text": "round the cart total"},
                {
                    "text": "<qwen:user-prompt-submit-context>\nctx\n</qwen:user-prompt-submit-context>"
                },
            ],
        },
    ),
    system("t1", "u1", 1, "ui_telemetry", {"uiEvent": {"event.name": "qwen-code.api_response"}}),
    reply(
        "a1",
        "t1",
        2,
        {"text": "The total should be rounded.", "thought": True},
        {"text": "I'll edit cart.py."},
        call("call_edit", "edit", file_path=f"{CWD}/cart.py", old_string="x", new_string="y"),
        call("call_shell", "run_shell_command", command="pytest -q"),
        usageMetadata=USAGE,
    ),
    result(
        "r1",
        "a1",
        3,
        "call_edit",
        "edit",
        {"output": "The file cart.py has been updated."},
        status="success",
        resultDisplay=EDIT_DISPLAY,
    ),
    result(
        "r2",
        "r1",
        4,
        "call_shell",
        "run_shell_command",
        {"error": "Command exited with code 1"},
        status="error",
        resultDisplay="1 failed",
    ),
    record(
        "m1",
        "r2",
        5,
        "user",
        subtype="mid_turn_user_message",
        systemPayload={"displayText": "also keep the old name"},
        message={"role": "user", "parts": [{"text": "also keep the old name"}]},
    ),
    reply(
        "a2",
        "m1",
        6,
        call("call_write", "write_file", file_path=f"{CWD}/notes.md", content="# Notes\n"),
    ),
    result(
        "r3",
        "a2",
        7,
        "call_write",
        "write_file",
        {"output": "Successfully created and wrote to new file."},
        status="success",
        resultDisplay={
            "fileDiff": "--- notes.md\n+++ notes.md\n@@ -0,0 +1 @@\n+# Notes\n",
            "fileName": "notes.md",
            "originalContent": None,
            "newContent": "# Notes\n",
        },
    ),
    system(
        "c1",
        "r3",
        8,
        "chat_compression",
        {
            "info": {"originalTokenCount": 9000, "newTokenCount": 900, "compressionStatus": 1},
            "compressedHistory": [
                {
                    "role": "user",
                    "parts": [{"text": "<state_snapshot>rounded the total</state_snapshot>"}],
                },
                {"role": "model", "parts": [{"text": "Got it."}]},
            ],
        },
    ),
    system("n1", "c1", 9, "custom_title", {"customTitle": "Round totals", "titleSource": "auto"}),
    record(
        "b1",
        "n1",
        10,
        "user",
        subtype="notification",
        systemPayload={"displayText": "Background shell finished"},
        message={"role": "user", "parts": [{"text": "Background shell finished"}]},
    ),
    system("k1", "b1", 11, "slash_command", {"phase": "invocation", "rawCommand": "/stats"}),
    system("x1", "k1", 12, "some_future_record", {"a": 1}),
    system("z1", "x1", 13, "turn_result", {"promptId": "p", "state": "cancelled", "endedAt": 1}),
]


def test_records_become_events(tmp_path: Path) -> None:
    path = jsonl(tmp_path / f"{SESSION}.jsonl", SESSION_RECORDS)
    assert detect(path).name == "qwen-code"
    parsed = QWEN.parse(path)
    events = parsed.events
    assert parsed.format == "qwen-code" and parsed.session_id == SESSION
    assert parsed.problems == [] and parsed.sources == {path.name: path}
    assert kinds(events) == [
        "session_start",
        "raw",  # session_source
        "user_message",
        "raw",  # ui_telemetry
        "reasoning",
        "agent_message",
        "tool_call",
        "tool_call",
        "usage",
        "tool_result",
        "file_change",
        "tool_result",
        "user_message",  # typed while the tools ran
        "tool_call",
        "tool_result",
        "file_change",
        "compaction",
        "raw",  # custom_title
        "raw",  # notification
        "raw",  # slash_command
        "raw",  # unknown subtype
        "error",  # turn cancelled
        "session_end",
    ]
    start = events[0]
    assert (start.harness, start.harness_version, start.model) == (
        "qwen-code",
        "0.21.13",
        "qwen3-coder-plus",
    )
    assert (start.cwd, start.branch, start.title) == (CWD, "main", "Round totals")
    assert start.time == "2026-08-20T09:00:00.000Z"
    assert [m.text for m in of(events, "user_message")] == [
        "round the cart total",
        "also keep the old name",
    ]
    assert of(events, "reasoning")[0].text == "The total should be rounded."
    assert of(events, "agent_message")[0].model == "qwen3-coder-plus"
    usage = of(events, "usage")[0]
    assert (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens) == (200, 100, 1000)
    edit, shell, write = of(events, "tool_result")
    assert (edit.call_id, edit.ok, edit.output) == (
        "call_edit",
        True,
        "The file cart.py has been updated.",
    )
    assert (shell.ok, shell.output) == (False, "Command exited with code 1")
    assert write.ok
    modify, create = of(events, "file_change")
    assert (modify.path, modify.operation, modify.call_id) == (
        "/home/u/shop/cart.py",
        "modify",
        "call_edit",
    )
    assert "+    return round(sum(items), 2)" in modify.diff
    assert (modify.added, modify.removed) == (1, 1)
    assert (create.path, create.operation, create.content) == (
        "/home/u/shop/notes.md",
        "create",
        "# Notes\n",
    )
    assert (
        of(events, "compaction")[0].summary == "<state_snapshot>rounded the total</state_snapshot>"
    )
    reasons = [e.reason for e in of(events, "raw")]
    assert reasons[2:] == [
        "session title",
        "notification the harness sent the model (a background task's)",
        "slash command",
        "system record of unknown subtype 'some_future_record'",
    ]
    error = of(events, "error")[0]
    assert error.interrupt and error.message == "turn cancelled"
    assert all(e.source.file == path.name and e.source.line >= 1 for e in events)
    assert [e.source.line for e in of(events, "tool_result")] == [5, 6, 9]
    assert events[-1].time == "2026-08-20T09:00:13.000Z"
    for event in events:
        json.loads(event_json(event))


def shell_output(command: str, output: str, code: int) -> str:
    """The output Qwen Code's shell tool gives the model for a command that ran."""
    return (
        f"Command: {command}\nDirectory: (root)\nOutput: {output}\nError: (none)\n"
        f"Exit Code: {code}\nSignal: (none)\nProcess Group PGID: 4242"
    )


def test_a_command_that_exited_non_zero_failed(tmp_path: Path) -> None:
    # Qwen Code records a command that ran as a success whatever its exit code.
    long_run = "\n\nNote: this foreground command ran for 75s. Next time you run a similar"
    runs = [
        ("npm test", shell_output("npm test", "1 failing", 1), False),
        ("npm run build", shell_output("npm run build", "Exit Code: 1", 0), True),
        ("npm run e2e", shell_output("npm run e2e", "2 failing", 2) + long_run, False),
    ]
    records = [prompt("u1", None, 0, "run the checks")]
    parent = "u1"
    for index, (command, output, _) in enumerate(runs):
        records.append(
            reply(
                f"a{index}",
                parent,
                2 * index + 1,
                call(f"c{index}", "run_shell_command", command=command),
            )
        )
        records.append(
            result(
                f"r{index}",
                f"a{index}",
                2 * index + 2,
                f"c{index}",
                "run_shell_command",
                {"output": output},
                status="success",
            )
        )
        parent = f"r{index}"
    parsed = QWEN.parse(jsonl(tmp_path / f"{SESSION}.jsonl", records))
    results = [event for event in parsed.events if isinstance(event, ToolResult)]
    assert [(r.call_id, r.ok) for r in results] == [
        (f"c{index}", ok) for index, (_, _, ok) in enumerate(runs)
    ]


def test_rewind_abandons_the_records_off_its_line(tmp_path: Path) -> None:
    path = jsonl(
        tmp_path / "s.jsonl",
        [
            prompt("u1", None, 0, "first"),
            reply("a1", "u1", 1, {"text": "one"}),
            # Written beside the conversation: hangs from a1, continued by nothing.
            system("s1", "a1", 2, "session_sources_snapshot", {"sources": []}),
            prompt("u2", "a1", 3, "second"),
            reply("a2", "u2", 4, call("c9", "read_file", path="x")),
            system("n1", "a2", 5, "custom_title", {"customTitle": "Left", "titleSource": "manual"}),
            # Back to before the second prompt: the parent is the record before it.
            system("w1", "a1", 6, "rewind", {"truncatedCount": 3}),
            prompt("u3", "w1", 7, "second, again"),
            reply("a3", "u3", 8, {"text": "two"}),
        ],
    )
    events = QWEN.parse(path).events
    assert kinds(events) == [
        "session_start",
        "user_message",
        "agent_message",
        "raw",
        "user_message",
        "tool_call",
        "raw",
        "rewind",
        "user_message",
        "agent_message",
        "session_end",
    ]
    assert [e.abandoned for e in events[1:7]] == [False, False, False, True, True, True]
    assert not any(e.abandoned for e in events[7:])
    assert of(events, "rewind")[0].resumes_after.line == 2
    assert events[0].title is None  # the only title was on the branch left


def test_a_compression_with_no_history_is_summarised_by_its_counts(tmp_path: Path) -> None:
    info = {"originalTokenCount": 91234, "newTokenCount": 8100, "compressionStatus": 1}
    records = [
        prompt("u1", None, 1, "Round the totals"),
        system("c1", "u1", 2, "chat_compression", {"info": info}),
        system("c2", "c1", 3, "chat_compression", {"info": {}, "compressedHistory": []}),
        system("c3", "c2", 4, "chat_compression", {"info": {"newTokenCount": 300}}),
        # a count past 2**63 is no count
        system("c4", "c3", 5, "chat_compression", {"info": {"originalTokenCount": 10**400}}),
    ]
    parsed = QWEN.parse(jsonl(tmp_path / f"{SESSION}.jsonl", records))
    assert [c.summary for c in of(parsed.events, "compaction")] == [
        "Context compressed from 91,234 to 8,100 tokens (no summary recorded).",
        "Context compressed (no summary recorded).",
        "Context compressed to 300 tokens (no summary recorded).",
        "Context compressed (no summary recorded).",
    ]


def test_reply_parts_that_are_no_text_or_call_are_kept(tmp_path: Path) -> None:
    """A reply's parts are Gemini API parts: code the code execution tool ran is a call its
    result answers, and inline data and parts of no known kind are raw events."""
    records = [
        prompt("u1", None, 1, "Plot it"),
        reply(
            "a1",
            "u1",
            2,
            {"executableCode": {"language": "PYTHON", "code": "print(1)"}},
            {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "1\n"}},
            {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}},
            {"weird": 1},
        ),
    ]
    parsed = QWEN.parse(jsonl(tmp_path / f"{SESSION}.jsonl", records))
    assert kinds(parsed.events)[2:6] == ["tool_call", "tool_result", "raw", "raw"]
    call, answer, image, weird = parsed.events[2:6]
    assert (call.name, answer.call_id, answer.output) == ("code_execution", call.call_id, "1\n")
    assert (image.record, weird.record) == ({"inlineData": {"mimeType": "image/png"}}, {"weird": 1})
    assert parsed.dropped["inline_data"] == 1


def test_a_rewind_to_the_first_prompt_resumes_after_nothing(tmp_path: Path) -> None:
    path = jsonl(
        tmp_path / "s.jsonl",
        [
            system("s0", None, 0, "session_source", {"sourceType": "cli"}),
            prompt("u1", "s0", 1, "first"),
            reply("a1", "u1", 2, {"text": "one"}),
            system("w1", "s0", 3, "rewind", {"truncatedCount": 2}),
            prompt("u2", "w1", 4, "first, again"),
        ],
    )
    events = QWEN.parse(path).events
    assert [e.abandoned for e in events] == [False, False, True, True, False, False, False]
    assert of(events, "rewind")[0].resumes_after is None


def test_pieces_of_one_message_count_their_usage_once(tmp_path: Path) -> None:
    """Records sharing a uuid are one message: the last usage among them counts."""
    thought = record(
        "a1",
        "u1",
        1,
        "assistant",
        message={"role": "model", "parts": [{"text": "hm", "thought": True}]},
    )
    first = reply("a1", "u1", 2, {"text": "Done."}, usageMetadata={"promptTokenCount": 5})
    last = reply(
        "a1",
        "u1",
        3,
        call("c1", "ls", path="."),
        usageMetadata={"promptTokenCount": 50, "candidatesTokenCount": 7},
    )
    path = jsonl(tmp_path / "s.jsonl", [prompt("u1", None, 0, "go"), thought, first, last])
    events = QWEN.parse(path).events
    assert kinds(events) == [
        "session_start",
        "user_message",
        "reasoning",
        "agent_message",
        "tool_call",
        "usage",
        "session_end",
    ]
    usage = of(events, "usage")[0]
    assert (usage.source.line, usage.input_tokens, usage.output_tokens) == (4, 50, 7)
    assert usage.model == "qwen3-coder-plus"


def test_early_token_summaries_and_reasoning_inside_the_candidates(tmp_path: Path) -> None:
    path = jsonl(
        tmp_path / "s.jsonl",
        [
            prompt("u1", None, 0, "go"),
            reply(
                "a1",
                "u1",
                1,
                {"text": "a"},
                usageMetadata={
                    "input": 100,
                    "output": 10,
                    "cached": 40,
                    "thoughts": 5,
                    "total": 115,
                },
            ),
            reply(
                "a2",
                "a1",
                2,
                {"text": "b"},
                usageMetadata={
                    "promptTokenCount": 100,
                    "candidatesTokenCount": 30,
                    "thoughtsTokenCount": 20,
                    "totalTokenCount": 130,
                },
            ),
            reply("a3", "a2", 3, {"text": "c"}, usageMetadata={}),
        ],
    )
    usages = of(QWEN.parse(path).events, "usage")
    assert [(u.input_tokens, u.output_tokens, u.cache_read_tokens) for u in usages] == [
        (60, 15, 40),
        (100, 30, 0),
    ]


def test_truncated_file_diffs_and_calls_without_results(tmp_path: Path) -> None:
    """A FileDiff cut for the session keeps its diff; one whose diff was replaced by a
    placeholder gives the change its arguments tell. A response naming no call, or a call
    answered already, is kept raw."""
    cut = {**EDIT_DISPLAY, "truncatedForSession": True, "originalContent": "def total(…"}
    placeholder = {
        **EDIT_DISPLAY,
        "fileDiff": "--- cart.py\n+++ cart.py\n@@ -1 +1 @@\n-Full diff omitted\n+Saved session preview only\n",
        "truncatedForSession": True,
        "fileDiffTruncated": True,
    }
    path = jsonl(
        tmp_path / "s.jsonl",
        [
            prompt("u1", None, 0, "go"),
            reply(
                "a1",
                "u1",
                1,
                call("e1", "edit", file_path="/w/cart.py", old_string="a", new_string="b"),
                call("e2", "edit", file_path="/w/cart.py", old_string="b", new_string="c"),
                call("e3", "read_file", path="/w/cart.py"),
            ),
            result(
                "r1", "a1", 2, "e1", "edit", {"output": "ok"}, status="success", resultDisplay=cut
            ),
            result(
                "r2",
                "r1",
                3,
                "e2",
                "edit",
                {"output": "ok"},
                status="success",
                resultDisplay=placeholder,
            ),
            result("r3", "r2", 4, "nope", "edit", {"output": "?"}, status="success"),
            result("r4", "r3", 5, "e2", "edit", {"output": "again"}, status="success"),
            # No id: the call toolCallResult names, not the oldest open one of the tool.
            reply(
                "a2", "r4", 6, call("g1", "glob", pattern="*.py"), call("g2", "glob", pattern="*")
            ),
            record(
                "r5",
                "a2",
                7,
                "tool_result",
                message={
                    "role": "user",
                    "parts": [
                        {"functionResponse": {"name": "glob", "response": {"output": "all"}}}
                    ],
                },
                toolCallResult={"callId": "g2", "status": "success"},
            ),
        ],
    )
    events = QWEN.parse(path).events
    first, second = of(events, "file_change")
    assert first.content is None and "+    return round(sum(items), 2)" in first.diff
    assert "-b" in second.diff and "+c" in second.diff
    assert [r.call_id for r in of(events, "tool_result")] == ["e1", "e2", "g2"]
    assert [(r.reason, r.source.line) for r in of(events, "raw")] == [
        ("tool response without a call", 5),
        ("tool response to a call answered already", 6),
    ]
    assert not any(r.call_id == "e3" for r in of(events, "tool_result"))


def test_odd_lines_are_reported_and_the_import_goes_on(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    lines = [
        json.dumps(prompt("u1", None, 0, "go")),
        "[1, 2]",
        json.dumps({k: v for k, v in reply("a1", "u1", 1, {"text": "x"}).items() if k != "type"}),
        json.dumps(record("q1", "a1", 2, "bookmark")),
        json.dumps(record("a2", "a1", 3, "assistant", model="m")),
        "{broken",
        json.dumps(reply("a3", "a1", 4, {"text": "last"}))[:40],
    ]
    path.write_text("\n".join(lines), encoding="utf-8")
    parsed = QWEN.parse(path)
    assert [(p.line, p.message.split(":")[0]) for p in parsed.problems] == [
        (6, "not JSON"),
        (7, "not JSON"),
    ]
    assert [(e.source.line, e.reason) for e in of(parsed.events, "raw")] == [
        (2, "record is not a JSON object"),
        (3, "record has no type"),
        (4, "unknown record type 'bookmark'"),
        (5, "assistant record without content"),
    ]
    assert parsed.events[-1].kind == "session_end"


def test_nothing_readable_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text("not json at all\n", encoding="utf-8")
    with pytest.raises(StetError):
        QWEN.parse(path)


def test_sniff_claims_only_qwen_code() -> None:
    assert QWEN.sniff(json.dumps(prompt("u1", None, 0, "hi")) + "\n")
    assert QWEN.sniff(json.dumps(system("t1", None, 0, "ui_telemetry", {"uiEvent": {}})) + "\n")
    # An assistant record without a message says nothing yet; the next one does.
    bare = json.dumps(record("a1", None, 0, "assistant", model="m"))
    assert QWEN.sniff(bare + "\n" + json.dumps(result("r", "a1", 1, "c", "ls", {})) + "\n")
    assert not QWEN.sniff(bare + "\n")
    assert QWEN.sniff(
        '{"uuid":"u","parentUuid":null,"sessionId":"s","timestamp":"t","type":"user","message":{"parts":[{"text":"'
        + "x" * 100
    )
    claude = {"parentUuid": None, "uuid": "u", "sessionId": "s", "type": "user", "cwd": "/w"}
    assert not QWEN.sniff(json.dumps({**claude, "message": {"role": "user", "content": "hi"}}))
    assert not QWEN.sniff(
        '{"parentUuid":null,"isSidechain":false,"sessionId":"s","type":"user","message":{"content":"'
        + "x" * 100
    )
    assert not QWEN.sniff('{"sessionId":"x","projectHash":"y","startTime":"t"}\n{"id":"a"}\n')
    assert not QWEN.sniff('{"timestamp":"t","type":"session_meta","payload":{"id":"x"}}\n')
    assert not QWEN.sniff('{"type": "summary", "summary": "x", "leafUuid": "u"}\n')
    assert importer("qwen-code").label == "Qwen Code session JSONL"


def test_other_importers_leave_qwen_sessions_alone(tmp_path: Path) -> None:
    head = "\n".join(json.dumps(r) for r in SESSION_RECORDS[:3]) + "\n"
    for name in ("claude-code", "codex", "gemini-cli", "atif", "openhands"):
        assert not importer(name).sniff(head), name
    bare = jsonl(tmp_path / "t.jsonl", SESSION_RECORDS[2:4])
    assert detect(bare).name == "qwen-code"
