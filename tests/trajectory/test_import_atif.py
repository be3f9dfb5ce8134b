"""ATIF trajectories: hand-written files in the real shapes (Harbor's models, v1.0 to v1.8)
and the public sample."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from samples import sample

from stet_lsp.core.errors import StetError
from stet_lsp.trajectory.events import EventBase, event_json
from stet_lsp.trajectory.importers import detect, importer
from stet_lsp.trajectory.importers.atif import IMPORTERS
from stet_lsp.trajectory.importers.edits import edits_from_arguments
from stet_lsp.trajectory.importers.jsondoc import JsonDocument, leading_members

ATIF = IMPORTERS["atif"]


def write(path: Path, document: Any) -> Path:
    path.write_text(json.dumps(document, indent=2), encoding="utf-8")
    return path


def kinds(events: list[EventBase]) -> list[str]:
    return [e.kind for e in events]


def of(events: list[EventBase], kind: str) -> list[Any]:
    return [e for e in events if e.kind == kind]


def trajectory(steps: list[Any], **root: Any) -> dict[str, Any]:
    return {
        "schema_version": "ATIF-v1.7",
        "session_id": "sess-1",
        "agent": {"name": "claude-code", "version": "2.1.178", "model_name": "claude-opus-4-6"},
        "steps": steps,
        **root,
    }


EDIT_STEP = {
    "step_id": 2,
    "timestamp": "2026-06-16T12:35:55.543Z",
    "source": "agent",
    "model_name": "claude-opus-4-6",
    "message": "I'll fix the hostname filter.",
    "reasoning_content": "The test expects a second parameter.",
    "tool_calls": [
        {
            "tool_call_id": "toolu_edit",
            "function_name": "Edit",
            "arguments": {
                "replace_all": False,
                "file_path": "/repo/pkg/providers.go",
                "old_string": "func get(l string) {\n",
                "new_string": "func get(l string, hosts []string) {\n",
            },
            "extra": {"tool_use_name": "Edit"},
        },
        {
            "tool_call_id": "toolu_bash",
            "function_name": "Bash",
            "arguments": {"command": "go test ./...", "description": "Run tests"},
        },
        {
            "tool_call_id": "toolu_pending",
            "function_name": "Read",
            "arguments": {"file_path": "/a"},
        },
    ],
    "observation": {
        "results": [
            {
                "source_call_id": "toolu_edit",
                "content": "The file /repo/pkg/providers.go has been updated.",
            },
            {
                "source_call_id": "toolu_bash",
                "content": "FAIL\n[error] tool reported failure",
                "extra": {"tool_result_is_error": True},
            },
        ]
    },
    "metrics": {
        "prompt_tokens": 43273,
        "completion_tokens": 846,
        "cached_tokens": 38961,
        "cost_usd": 0.0123,
        "extra": {"cache_creation_input_tokens": 4300},
    },
}


def test_agent_step_maps_to_reasoning_message_calls_usage_results_and_changes(
    tmp_path: Path,
) -> None:
    steps = [
        {
            "step_id": 1,
            "timestamp": "2026-06-16T12:35:24.221Z",
            "source": "user",
            "message": "Fix it.",
        },
        EDIT_STEP,
    ]
    parsed = ATIF.parse(write(tmp_path / "trajectory.json", trajectory(steps)))
    events = parsed.events
    assert kinds(events) == [
        "session_start",
        "user_message",
        "reasoning",
        "agent_message",
        "tool_call",
        "tool_call",
        "tool_call",
        "usage",
        "tool_result",
        "file_change",
        "tool_result",
        "session_end",
    ]
    start = events[0]
    assert (start.harness, start.harness_version, start.model) == (
        "claude-code",
        "2.1.178",
        "claude-opus-4-6",
    )
    assert start.time == "2026-06-16T12:35:24.221Z"
    assert parsed.session_id == "sess-1" and all(e.session == "sess-1" for e in events)
    assert events[1].text == "Fix it." and events[1].source.pointer == "/steps/0"
    assert events[2].text == "The test expects a second parameter."
    assert events[3].model == "claude-opus-4-6"
    calls = of(events, "tool_call")
    assert [c.call_id for c in calls] == ["toolu_edit", "toolu_bash", "toolu_pending"]
    assert calls[1].input == {"command": "go test ./...", "description": "Run tests"}
    usage = of(events, "usage")[0]
    assert (usage.input_tokens, usage.cache_read_tokens, usage.cache_write_tokens) == (
        12,
        38961,
        4300,
    )
    assert (usage.output_tokens, usage.cost_usd, usage.cost_basis) == (846, 0.0123, "reported")
    assert usage.requests == 1  # no llm_call_count: one request
    results = of(events, "tool_result")
    assert [(r.call_id, r.ok) for r in results] == [("toolu_edit", True), ("toolu_bash", False)]
    change = of(events, "file_change")[0]
    assert change.call_id == "toolu_edit" and change.path == "/repo/pkg/providers.go"
    assert change.operation == "modify" and not change.anchored
    assert "-func get(l string) {\n+func get(l string, hosts []string) {\n" in change.diff
    assert (change.added, change.removed) == (1, 1)
    # Every event of the edit step names the line the step starts on.
    document = (tmp_path / "trajectory.json").read_text().splitlines()
    line = events[2].source.line
    assert document[line - 1].strip() == "{" and '"step_id": 2' in document[line]
    assert events[-1].source.pointer == "/steps/1"


def test_tool_calls_or_metrics_it_cannot_read_are_kept_raw(tmp_path: Path) -> None:
    steps = [
        {"step_id": 1, "source": "user", "message": "go"},
        {"step_id": 2, "source": "agent", "message": "a", "tool_calls": "x"},
        {"step_id": 3, "source": "agent", "message": "b", "metrics": "many"},
        {
            "step_id": 4,
            "source": "agent",
            "message": "c",
            "metrics": {"prompt_tokens": "lots", "completion_tokens": -5},
        },
        {"step_id": 5, "source": "agent", "message": "d", "metrics": {"prompt_tokens": 0}},
    ]
    parsed = ATIF.parse(write(tmp_path / "t.json", trajectory(steps)))
    raws = [(e.reason, e.record) for e in of(parsed.events, "raw")]
    assert raws == [
        ("tool_calls that are no list", "x"),
        ("metrics that are no object", "many"),
        ("unreadable metrics", {"prompt_tokens": "lots", "completion_tokens": -5}),
    ]
    assert not of(parsed.events, "usage")  # a zero count is read, and is no request's usage


def test_system_steps_copied_context_and_multimodal_content(tmp_path: Path) -> None:
    steps = [
        {"step_id": 1, "source": "system", "message": "You are a coding agent."},
        {"step_id": 2, "source": "user", "message": "old prompt", "is_copied_context": True},
        {
            "step_id": 3,
            "source": "user",
            "message": [
                {"type": "text", "text": "What is in this screenshot?"},
                {"type": "image", "source": {"media_type": "image/png", "path": "images/shot.png"}},
                {
                    "type": "audio",
                    "source": {"media_type": "audio/wav", "path": "a.wav", "duration_sec": 2},
                },
            ],
        },
        {
            "step_id": 4,
            "source": "system",
            "message": "Performed context summarization and handoff to continue task.",
            "extra": {"context_management": {"type": "compaction", "boundary": "replace"}},
        },
        {"step_id": 5, "source": "agent", "message": "dispatch", "llm_call_count": 0},
    ]
    parsed = ATIF.parse(write(tmp_path / "t.json", trajectory(steps, schema_version="ATIF-v1.8")))
    events = parsed.events
    assert kinds(events) == [
        "session_start",
        "raw",
        "user_message",
        "compaction",
        "agent_message",
        "session_end",
    ]
    assert events[1].reason == "system prompt or harness message"
    assert events[1].record["message"] == "You are a coding agent."
    assert events[2].text == "What is in this screenshot?\n[image: images/shot.png]\n[audio: a.wav]"
    assert events[3].summary.startswith("Performed context summarization")
    assert parsed.dropped["copied_context"] == 1
    assert not of(events, "usage")


def test_media_given_as_data_are_named_and_counted(tmp_path: Path) -> None:
    """An image or audio part whose path is a `data:` URL holds its bytes: its text names it
    by its kind alone, a raw record keeps the URL's head without them, and each is counted in
    `dropped.inline_data`, as the other importers count data."""
    data = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"
    shot = {
        "type": "image",
        "source": {"media_type": "image/png", "path": f"data:image/png;base64,{data}"},
    }
    sound = {
        "type": "audio",
        "source": {"media_type": "audio/wav", "path": f"data:audio/wav;base64,{data}"},
    }
    steps = [
        {"step_id": 1, "source": "system", "message": [{"type": "text", "text": "Look"}, shot]},
        {
            "step_id": 2,
            "source": "user",
            "message": [{"type": "text", "text": "What is it?"}, shot, sound],
        },
        {
            "step_id": 3,
            "source": "agent",
            "message": "Taking a screenshot",
            "tool_calls": [{"tool_call_id": "c1", "function_name": "screenshot", "arguments": {}}],
            "observation": {
                "results": [{"source_call_id": "c1", "content": [shot]}, {"content": [shot]}]
            },
        },
    ]
    parsed = ATIF.parse(write(tmp_path / "t.json", trajectory(steps, schema_version="ATIF-v1.8")))
    events = parsed.events
    assert of(events, "user_message")[0].text == "What is it?\n[image]\n[audio]"
    assert of(events, "tool_result")[0].output == "[image]"
    raws = of(events, "raw")
    assert raws[0].record["message"][1]["source"]["path"] == "data:image/png;base64"
    assert raws[1].record["content"][0]["source"]["path"] == "data:image/png;base64"
    assert parsed.dropped["inline_data"] == 5
    assert not any(data in json.dumps(event_json(e)) for e in events)


def test_media_given_as_a_data_url_without_data_count_nothing_left_out(tmp_path: Path) -> None:
    """An image or audio part whose `data:` URL holds no bytes (`data:,`, a head alone) keeps
    its path whole, and nothing is counted in `dropped.inline_data`."""
    parts = [
        {"type": "image", "source": {"path": "data:,"}},
        {"type": "audio", "source": {"media_type": "audio/wav", "path": "data:audio/wav"}},
    ]
    steps = [
        {"step_id": 1, "source": "system", "message": parts},
        {"step_id": 2, "source": "user", "message": parts},
    ]
    parsed = ATIF.parse(write(tmp_path / "t.json", trajectory(steps)))
    assert of(parsed.events, "user_message")[0].text == "[image]\n[audio]"
    assert [r.record["message"] for r in of(parsed.events, "raw")] == [parts]
    assert parsed.dropped["inline_data"] == 0


def test_content_parts_of_a_kind_atif_does_not_define_are_kept_raw(tmp_path: Path) -> None:
    """A content part that is neither text, an image nor audio keeps its fields: a `raw`
    event after the event its message's or result's text went into, not `[video: ]`."""
    video = {"type": "video", "source": {"media_type": "video/mp4", "url": "https://x/v.mp4"}}
    table = {"type": "table", "rows": [["a", 1]]}
    linked = {"type": "image", "source": {"media_type": "image/png", "path": "https://x/a.png"}}
    steps = [
        {"step_id": 1, "source": "user", "message": [{"type": "text", "text": "Watch"}, video]},
        {
            "step_id": 2,
            "source": "agent",
            "message": [{"type": "text", "text": "Reading it"}, table, 7],
            "tool_calls": [{"tool_call_id": "c1", "function_name": "look", "arguments": {}}],
            "observation": {
                "results": [{"source_call_id": "c1", "content": [linked, {"type": "image"}, table]}]
            },
        },
    ]
    parsed = ATIF.parse(write(tmp_path / "t.json", trajectory(steps, schema_version="ATIF-v1.8")))
    events = parsed.events
    assert kinds(events)[1:-1] == [
        "user_message",
        "raw",
        "agent_message",
        "raw",
        "raw",
        "tool_call",
        "tool_result",
        "raw",
    ]
    assert events[1].text == "Watch"
    assert events[3].text == "Reading it"
    assert events[7].output == "[image: https://x/a.png]\n[image]"
    raws = of(events, "raw")
    assert [r.record for r in raws] == [video, table, 7, table]
    assert [r.reason for r in raws] == [
        "message content part of a kind not understood",
        "message content part of a kind not understood",
        "message content part of a kind not understood",
        "result content part of a kind not understood",
    ]


def test_compaction_and_error_steps_of_stets_own_export(tmp_path: Path) -> None:
    """Stet's export marks a compaction `extra.compaction` and an error `extra.error`: they
    come back as what they were (a Gemini CLI checkpoint's compression summary and aider's
    interrupts came back as raw system steps), an opaque summary and a harness error
    without a message as the empty text the export wrote a placeholder for."""
    steps = [
        {"step_id": 1, "source": "user", "message": "go on"},
        {
            "step_id": 2,
            "source": "system",
            "message": "<state_snapshot>the goal</state_snapshot>",
            "extra": {"compaction": True, "event_steps": [3, 3]},
        },
        {
            "step_id": 3,
            "source": "system",
            "message": "(context compacted)",
            "extra": {"compaction": True},
        },
        {
            "step_id": 4,
            "source": "system",
            "message": "^C KeyboardInterrupt",
            "extra": {"error": {"interrupt": True}},
        },
        {"step_id": 5, "source": "system", "message": "(an error)", "extra": {"error": {}}},
    ]
    events = ATIF.parse(write(tmp_path / "t.json", trajectory(steps))).events
    assert kinds(events)[1:-1] == [
        "user_message",
        "compaction",
        "raw",
        "compaction",
        "error",
        "error",
    ]
    # Not Stet's own export (its root `extra` holds no `meta`): its bookkeeping is not read.
    assert of(events, "raw")[0].record == {"extra": {"event_steps": [3, 3]}}
    assert [c.summary for c in of(events, "compaction")] == [
        "<state_snapshot>the goal</state_snapshot>",
        "",
    ]
    assert [(e.message, e.interrupt) for e in of(events, "error")] == [
        ("^C KeyboardInterrupt", True),
        ("", False),
    ]


def test_embedded_subagent_follows_the_call_that_started_it(tmp_path: Path) -> None:
    child = trajectory(
        [
            {"step_id": 1, "source": "user", "message": "Find the config."},
            {
                "step_id": 2,
                "source": "agent",
                "message": "It is in conf/app.yaml.",
                "metrics": {"prompt_tokens": 100, "completion_tokens": 7},
            },
        ],
        trajectory_id="child-1",
        session_id="sess-1",
    )
    orphan = trajectory(
        [{"step_id": 1, "source": "user", "message": "never referenced"}], trajectory_id="child-2"
    )
    steps = [
        {
            "step_id": 1,
            "source": "agent",
            "message": "",
            "tool_calls": [
                {
                    "tool_call_id": "call_1",
                    "function_name": "spawn_agent",
                    "arguments": {"task": "find"},
                }
            ],
            "observation": {
                "results": [
                    {
                        "source_call_id": "call_1",
                        "content": '{"task_name": "finder"}',
                        "subagent_trajectory_ref": [
                            {
                                "trajectory_id": "child-1",
                                "session_id": "sess-1",
                                "extra": {"agent_name": "finder"},
                            }
                        ],
                    }
                ]
            },
        }
    ]
    path = write(tmp_path / "t.json", trajectory(steps, subagent_trajectories=[child, orphan]))
    events = ATIF.parse(path).events
    assert kinds(events) == [
        "session_start",
        "tool_call",
        "subagent",
        "user_message",
        "agent_message",
        "usage",
        "tool_result",
        "subagent",
        "user_message",
        "session_end",
    ]
    spawn = events[2]
    assert (spawn.agent_id, spawn.call_id, spawn.description, spawn.agent) == (
        "child-1",
        "call_1",
        "finder",
        None,
    )
    assert [e.agent for e in events[3:6]] == ["child-1"] * 3
    assert events[3].source.pointer == "/subagent_trajectories/0/steps/0"
    assert events[6].call_id == "call_1" and events[6].agent is None
    assert (events[7].agent_id, events[7].call_id) == ("child-2", None)
    assert events[8].agent == "child-2" and events[8].text == "never referenced"


def test_subagent_and_continuation_files_are_read_as_the_same_session(tmp_path: Path) -> None:
    summary = trajectory(
        [
            {"step_id": 1, "source": "user", "message": "Summarise."},
            {"step_id": 2, "source": "agent", "message": "Done so far: x."},
        ],
        session_id="sess-1-summary",
    )
    write(tmp_path / "trajectory.summarization-1-summary.json", summary)
    continuation = trajectory(
        [
            {
                "step_id": 1,
                "source": "user",
                "message": "the task again",
                "is_copied_context": True,
            },
            {"step_id": 2, "source": "agent", "message": "Continuing."},
        ]
    )
    write(tmp_path / "trajectory.cont-1.json", continuation)
    main = trajectory(
        [
            {"step_id": 1, "source": "user", "message": "Do the task."},
            {
                "step_id": 2,
                "source": "system",
                "message": "Performed context summarization and handoff to continue task.",
                "observation": {
                    "results": [
                        {
                            "subagent_trajectory_ref": [
                                {
                                    "session_id": "sess-1-summary",
                                    "trajectory_path": "trajectory.summarization-1-summary.json",
                                    "extra": {
                                        "summary": "Context summarization 1: Step 1 - Summary generation"
                                    },
                                },
                                {
                                    "session_id": "missing",
                                    "trajectory_path": "trajectory.nowhere.json",
                                },
                            ]
                        }
                    ]
                },
                "extra": {"context_management": {"type": "compaction", "boundary": "replace"}},
            },
        ],
        continued_trajectory_ref="trajectory.cont-1.json",
    )
    parsed = ATIF.parse(write(tmp_path / "trajectory.json", main))
    events = parsed.events
    assert kinds(events) == [
        "session_start",
        "user_message",
        "compaction",
        "subagent",
        "user_message",
        "agent_message",
        "subagent",
        "agent_message",
        "session_end",
    ]
    assert events[3].agent_id == "sess-1-summary" and events[3].description.endswith(
        "Summary generation"
    )
    assert events[4].source.file == "trajectory.summarization-1-summary.json"
    assert events[4].agent == "sess-1-summary"
    assert events[6].agent_id == "missing"
    assert events[7].source.file == "trajectory.cont-1.json" and events[7].agent is None
    assert set(parsed.sources) == {
        "trajectory.json",
        "trajectory.summarization-1-summary.json",
        "trajectory.cont-1.json",
    }
    assert parsed.dropped["copied_context"] == 1


def test_odd_input_is_kept_and_a_tool_call_may_have_no_result(tmp_path: Path) -> None:
    steps = [
        "not a step",
        {"step_id": 2, "message": "no source"},
        {"step_id": 3, "source": "robot", "message": "?"},
        {
            "step_id": 4,
            "source": "agent",
            "message": "",
            "tool_calls": [{"function_name": "Bash", "arguments": {}}],
            "observation": {"results": [{"content": "orphan output"}, 7]},
        },
    ]
    parsed = ATIF.parse(write(tmp_path / "t.json", {"schema_version": "ATIF-v1.0", "steps": steps}))
    raws = of(parsed.events, "raw")
    assert [r.reason for r in raws] == [
        "step is not a JSON object",
        "step has no source",
        "unknown step source 'robot'",
        "tool call without an id",
        "observation result without a tool call",
        "observation result is not a JSON object",
    ]
    assert raws[0].record == "not a step"
    start = parsed.events[0]
    assert start.harness == "atif" and start.model is None
    # No session id in the file: the file's digest names the session.
    assert len(parsed.session_id) == 16 and int(parsed.session_id, 16) >= 0


def test_result_without_an_id_answers_the_steps_only_call(tmp_path: Path) -> None:
    steps = [
        {
            "step_id": 1,
            "source": "agent",
            "message": "",
            "tool_calls": [
                {
                    "tool_call_id": "c1",
                    "function_name": "bash_command",
                    "arguments": {"keystrokes": "ls\n"},
                }
            ],
            "observation": {"results": [{"content": "a.txt\n"}]},
        }
    ]
    events = ATIF.parse(write(tmp_path / "t.json", trajectory(steps))).events
    result = of(events, "tool_result")[0]
    assert (result.call_id, result.output) == ("c1", "a.txt\n")


def test_truncated_document_keeps_the_steps_before_the_cut(tmp_path: Path) -> None:
    text = json.dumps(
        trajectory([{"step_id": 1, "source": "user", "message": "one"}, EDIT_STEP]), indent=2
    )
    cut = text.index('"tool_calls"')
    path = tmp_path / "t.json"
    path.write_text(text[:cut], encoding="utf-8")
    parsed = ATIF.parse(path)
    assert kinds(parsed.events) == ["session_start", "user_message", "session_end"]
    assert len(parsed.problems) == 1
    problem = parsed.problems[0]
    assert problem.source == "t.json" and problem.line == text[:cut].count("\n") + 1


def test_invalid_utf8_and_a_2mb_record(tmp_path: Path) -> None:
    big = "x" * (2 * 1024 * 1024)
    steps = [{"step_id": 1, "source": "user", "message": "caf\u00e9 " + big}]
    document = json.dumps(trajectory(steps), ensure_ascii=False)
    raw = document.encode().replace("caf\u00e9".encode(), b"caf\xff")
    path = tmp_path / "t.json"
    path.write_bytes(raw)
    parsed = ATIF.parse(path)
    text = of(parsed.events, "user_message")[0].text
    assert text.startswith("caf\ufffd ") and len(text) == len(big) + 5
    # The replaced byte is a problem of its line, as in the JSON Lines formats.
    column = document.index("caf\u00e9") + 4
    assert [(p.source, p.line, p.message) for p in parsed.problems] == [
        ("t.json", 1, f"bytes that are not UTF-8 at column {column}, read as U+FFFD")
    ]
    assert ATIF.sniff(raw[:65536].decode("utf-8", "replace"))


def test_nothing_readable_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text("[1, 2", encoding="utf-8")
    with pytest.raises(StetError):
        ATIF.parse(path)


def test_sniff_claims_only_atif() -> None:
    assert ATIF.sniff('{\n  "schema_version": "ATIF-v1.4",\n  "session_id": "x"')
    assert ATIF.sniff('{"session_id": "x", "schema_version": "ATIF-v1.2", "steps": [')
    assert not ATIF.sniff('{"schema_version": "2.0", "steps": []}')
    assert not ATIF.sniff('[{"schema_version": "ATIF-v1.2"}]')
    # ATIF quoted inside another transcript's string is not ATIF.
    assert not ATIF.sniff('{"type": "user", "text": "{\\"schema_version\\": \\"ATIF-v1.2\\"}"}')
    assert not ATIF.sniff('{"type":"session_meta","payload":{}}\n')


def test_detect_picks_atif(tmp_path: Path) -> None:
    path = write(
        tmp_path / "whatever.txt", trajectory([{"step_id": 1, "source": "user", "message": "hi"}])
    )
    assert detect(path).name == "atif"
    assert importer("atif").label == "ATIF trajectory JSON (v1.0-v1.8)"


def test_edits_from_arguments_covers_the_common_edit_tools() -> None:
    create = edits_from_arguments(
        "str_replace_editor", {"command": "create", "path": "a.py", "file_text": "x\ny\n"}, ""
    )
    assert (
        create[0].operation == "create" and create[0].diff is not None and create[0].diff.added == 2
    )
    assert create[0].diff.text.startswith("--- /dev/null\n+++ b/a.py\n")
    insert = edits_from_arguments(
        "str_replace_editor",
        {"command": "insert", "path": "a.py", "insert_line": 4, "new_str": "z\n"},
        "",
    )
    assert (
        insert[0].diff is not None
        and insert[0].diff.anchored
        and "@@ -4,0 +5 @@" in insert[0].diff.text
    )
    multi = edits_from_arguments(
        "MultiEdit",
        {
            "file_path": "b.py",
            "edits": [
                {"old_string": "1", "new_string": "2"},
                {"old_string": "3", "new_string": "4"},
            ],
        },
        "",
    )
    assert len(multi) == 2
    written = edits_from_arguments(
        "Write", {"file_path": "c.py", "content": "print()\n"}, "File created successfully at: c.py"
    )
    assert written[0].operation == "create" and written[0].content == "print()\n"
    overwritten = edits_from_arguments(
        "Write", {"file_path": "c.py", "content": "print()\n"}, "The file c.py has been updated."
    )
    assert overwritten[0].operation == "modify" and overwritten[0].diff is None
    assert edits_from_arguments("Bash", {"command": "ls", "path": "x"}, "") == []
    assert (
        edits_from_arguments(
            "Edit", {"file_path": "d.py", "old_string": "same", "new_string": "same"}, ""
        )
        == []
    )


def test_json_document_locates_lines_and_leading_members() -> None:
    document = JsonDocument('{\n "a": 1,\n "steps": [\n  {"x": 1},\n\n  {"y": 2}\n ]\n}\n')
    value = document.load({"steps": [None]})
    assert value == {"a": 1, "steps": [{"x": 1}, {"y": 2}]}
    assert (document.line("/steps"), document.line("/steps/0"), document.line("/steps/1")) == (
        3,
        4,
        6,
    )
    assert leading_members('{"a": 1, "b": {"c": [1, 2]}, "d": "cut') == {
        "a": 1,
        "b": {"c": [1, 2]},
        "d": None,
    }
    assert leading_members('{"h": [{"role": "user", "parts": [', ("h", 0)) == {
        "role": "user",
        "parts": None,
    }
    assert leading_members('[{"k": 1}, 2]', (0,)) == {"k": 1}


def test_public_sample_claude_code_run() -> None:
    path = sample("atif/harbor__trajectory_pass.json")
    assert detect(path).name == "atif"
    parsed = ATIF.parse(path)
    events = parsed.events
    assert parsed.session_id == "a3b10bae-3ebd-4b8e-8779-3d21ce098521"
    assert (
        not parsed.problems
        and events[0].kind == "session_start"
        and events[-1].kind == "session_end"
    )
    assert (events[0].harness, events[0].harness_version) == ("claude-code", "2.1.178")
    calls, results = of(events, "tool_call"), of(events, "tool_result")
    assert len(calls) == 12 and {r.call_id for r in results} == {c.call_id for c in calls}
    assert len(of(events, "usage")) == 11
    changes = of(events, "file_change")
    assert len(changes) == 3 and {c.path for c in changes} == {
        "/repo/maas-controller/pkg/controller/maas/providers_llmisvc.go"
    }
    for change in changes:
        position = next(i for i, e in enumerate(events) if e is change)
        assert (
            events[position - 1].kind == "tool_result"
            and events[position - 1].call_id == change.call_id
        )
    for event in events:
        json.loads(event_json(event))


def test_string_arguments_and_references_outside_the_folder(tmp_path: Path) -> None:
    outside = write(
        tmp_path / "outside.json",
        trajectory([{"step_id": 1, "source": "user", "message": "secret"}]),
    )
    folder = tmp_path / "run"
    folder.mkdir()
    steps = [
        {
            "step_id": 1,
            "source": "agent",
            "message": "",
            "tool_calls": [
                {"tool_call_id": "c1", "function_name": "Bash", "arguments": '{"command": "ls"}'}
            ],
            "observation": {
                "results": [
                    {
                        "source_call_id": "c1",
                        "content": "ok",
                        "subagent_trajectory_ref": [
                            {"session_id": "x", "trajectory_path": f"../{outside.name}"}
                        ],
                    }
                ]
            },
        }
    ]
    parsed = ATIF.parse(write(folder / "trajectory.json", trajectory(steps)))
    assert of(parsed.events, "tool_call")[0].input == {"command": "ls"}
    assert of(parsed.events, "subagent")[0].agent_id == "x"
    assert "secret" not in [e.text for e in of(parsed.events, "user_message")]
    assert list(parsed.sources) == ["trajectory.json"]


def test_a_response_split_into_steps_with_its_metrics_on_each_counts_once(
    tmp_path: Path,
) -> None:
    """Early Harbor Claude Code trajectories give a response's text and each of its tool
    calls a step of their own, each with the whole response's metrics."""
    usage = {"prompt_tokens": 9000, "completion_tokens": 80, "cached_tokens": 8500}
    later = {"prompt_tokens": 9400, "completion_tokens": 25, "cached_tokens": 9000}

    def step(number: int, metrics: dict[str, Any], call: str | None = None) -> dict[str, Any]:
        found: dict[str, Any] = {"step_id": number, "source": "agent", "metrics": dict(metrics)}
        if call is None:
            found["message"] = "Let me look at both files."
        else:
            found["message"] = f"Executed Read {call}"
            found["tool_calls"] = [
                {"tool_call_id": call, "function_name": "Read", "arguments": {"file_path": call}}
            ]
            found["observation"] = {"results": [{"source_call_id": call, "content": "x = 1"}]}
        return found

    steps = [
        {"step_id": 1, "source": "user", "message": "Why does the build fail?"},
        step(2, usage),
        step(3, usage, "a.py"),
        step(4, usage, "b.py"),
        step(5, later),
        {"step_id": 6, "source": "user", "message": "And now?"},
        step(7, later),
    ]
    path = write(tmp_path / "trajectory.json", trajectory(steps, schema_version="ATIF-v1.2"))
    parsed = ATIF.parse(path)
    assert [u.output_tokens for u in of(parsed.events, "usage")] == [80, 25, 25]
    assert len(of(parsed.events, "tool_result")) == 2
    assert parsed.dropped["repeated_metrics"] == 2


def harbor_cc_step(
    number: int, time: str, message: str, sidechain: bool, call: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A step as Harbor's early Claude Code converter (ATIF v1.2, Claude Code 2.0.46) wrote
    one: a tool call's step says `Executed <tool> <id>`, and every step says whether it is
    the sidechain's (a subagent's)."""
    step: dict[str, Any] = {
        "step_id": number,
        "timestamp": time,
        "source": "agent",
        "message": message,
        "extra": {"stop_reason": "end_turn", "cwd": "/workspace", "is_sidechain": sidechain},
    }
    if call is not None:
        step["tool_calls"] = [call]
        step["message"] = f"Executed {call['function_name']} {call['tool_call_id']}"
        step["observation"] = {
            "results": [{"source_call_id": call["tool_call_id"], "content": "done"}]
        }
    return step


def test_harbor_claude_code_sidechains_are_subagents_and_tool_steps_say_nothing(
    tmp_path: Path,
) -> None:
    """The converter put the subagents' steps (`is_sidechain`) first, without their agent:
    those whose times fall between a Task call's step and the main line's next step are the
    subagent its result names (`tool_result_metadata.tool_use_result.agentId`), after the
    call; the warm-up replies before any call are an agent of their own. A tool step's
    `Executed …` message is the converter's, counted in `dropped.placeholder_message`."""
    glob = {"tool_call_id": "toolu_glob", "function_name": "Glob", "arguments": {"pattern": "*"}}
    task = {
        "tool_call_id": "toolu_task",
        "function_name": "Task",
        "arguments": {"description": "Find the refresh endpoint", "prompt": "Find it."},
    }
    read = {"tool_call_id": "toolu_read", "function_name": "Read", "arguments": {"file_path": "a"}}
    task_step = harbor_cc_step(6, "2025-11-19T22:11:33.610Z", "", False, task)
    task_step["extra"]["tool_result_metadata"] = {
        "tool_use_result": {"status": "completed", "agentId": "966714e8"}
    }
    steps = [
        harbor_cc_step(1, "2025-11-19T22:11:24.481Z", "I'm ready to help!", True),
        harbor_cc_step(2, "2025-11-19T22:11:34.971Z", "I'll find the endpoint.", True),
        harbor_cc_step(3, "2025-11-19T22:11:35.777Z", "", True, glob),
        harbor_cc_step(4, "2025-11-19T22:11:57.741Z", "It is in main.py.", True),
        {"step_id": 5, "timestamp": "2025-11-19T22:11:21.799Z", "source": "user"}
        | {"message": "Fix the refresh race."},
        task_step,
        harbor_cc_step(7, "2025-11-19T22:12:00.712Z", "", False, read),
    ]
    path = write(tmp_path / "trajectory.json", trajectory(steps, schema_version="ATIF-v1.2"))
    parsed = ATIF.parse(path)
    shown = [
        (e.kind, e.agent, getattr(e, "agent_id", None) or getattr(e, "text", None))
        for e in parsed.events
        if e.kind in ("subagent", "agent_message", "user_message", "tool_call")
    ]
    assert shown == [
        ("subagent", None, "sidechain-1"),
        ("agent_message", "sidechain-1", "I'm ready to help!"),
        ("user_message", None, "Fix the refresh race."),
        ("tool_call", None, None),
        ("subagent", None, "966714e8"),
        ("agent_message", "966714e8", "I'll find the endpoint."),
        ("tool_call", "966714e8", None),
        ("agent_message", "966714e8", "It is in main.py."),
        ("tool_call", None, None),
    ]
    spawn = of(parsed.events, "subagent")[1]
    assert (spawn.call_id, spawn.description) == ("toolu_task", "Find the refresh endpoint")
    assert parsed.dropped["placeholder_message"] == 3
    assert not any("is_sidechain" in json.dumps(e.record) for e in of(parsed.events, "raw"))


def test_harbor_claude_code_sidechains_of_parallel_calls_are_no_ones_in_particular(
    tmp_path: Path,
) -> None:
    """Parallel Task calls are a step each, a few milliseconds apart, and share one window:
    which agent a sidechain step is cannot be told, so no call gets it (an agent of its own
    for the run); a step that is no object beside them is kept raw, and times written with
    and without milliseconds compare as times."""

    def task(number: int, time: str, call_id: str, agent_id: str) -> dict[str, Any]:
        arguments = {"description": f"Look {number}", "prompt": "Look."}
        call = {"tool_call_id": call_id, "function_name": "Task", "arguments": arguments}
        step = harbor_cc_step(number, time, "", False, call)
        step["extra"]["tool_result_metadata"] = {"tool_use_result": {"agentId": agent_id}}
        return step

    steps = [
        {"step_id": 1, "timestamp": "2025-11-19T22:11:00Z", "source": "user", "message": "Go"},
        task(2, "2025-11-19T22:11:01.100Z", "toolu_a", "aaaa1111"),
        task(3, "2025-11-19T22:11:01.180Z", "toolu_b", "bbbb2222"),
        harbor_cc_step(4, "2025-11-19T22:11:05.500Z", "I am agent one.", True),
        harbor_cc_step(5, "2025-11-19T22:11:06Z", "I am agent two.", True),
        "not a step",
        harbor_cc_step(7, "2025-11-19T22:11:20.000Z", "Both are done.", False),
    ]
    path = write(tmp_path / "trajectory.json", trajectory(steps, schema_version="ATIF-v1.2"))
    parsed = ATIF.parse(path)
    spawns = [(e.agent_id, e.call_id) for e in of(parsed.events, "subagent")]
    assert spawns == [("sidechain-4", None)]
    messages = [(e.agent, e.text) for e in of(parsed.events, "agent_message")]
    assert messages == [
        ("sidechain-4", "I am agent one."),
        ("sidechain-4", "I am agent two."),
        (None, "Both are done."),
    ]
    assert [r.reason for r in of(parsed.events, "raw")].count("step is not a JSON object") == 1
    # one call alone, its sidechain written with whole seconds, the call with milliseconds
    one = [steps[0], steps[1], harbor_cc_step(3, "2025-11-19T22:11:02Z", "Mine.", True), steps[6]]
    path = write(tmp_path / "one.json", trajectory(one, schema_version="ATIF-v1.2"))
    events = ATIF.parse(path).events
    assert [(e.agent_id, e.call_id) for e in of(events, "subagent")] == [("aaaa1111", "toolu_a")]
    assert [e.agent for e in of(events, "agent_message")] == ["aaaa1111", None]


def test_equal_metrics_after_terminal_output_are_a_request_of_their_own(
    tmp_path: Path,
) -> None:
    """Terminus gives each reply a step whose observation is the terminal's screen, answering
    no call: the next step's request read it, so equal metrics there are no repeat of a
    split response, and both requests count."""
    same = {"prompt_tokens": 850, "completion_tokens": 40, "cost_usd": 0.0025}

    def step(number: int, text: str) -> dict[str, Any]:
        screen = {"results": [{"content": f"root@box:/app# step {number}\n"}]}
        return {
            "step_id": number,
            "source": "agent",
            "message": text,
            "observation": screen,
            "metrics": dict(same),
        }

    steps = [
        {"step_id": 1, "source": "user", "message": "Create hello.txt"},
        step(2, '{"analysis": "Created it.", "commands": ["cat hello.txt"]}'),
        step(3, '{"analysis": "Verified.", "task_complete": true}'),
    ]
    agent = {"name": "terminus-2", "version": "2.0.0", "model_name": "openai/gpt-4o"}
    parsed = ATIF.parse(write(tmp_path / "trajectory.json", trajectory(steps, agent=agent)))
    assert [u.input_tokens for u in of(parsed.events, "usage")] == [850, 850]
    assert parsed.dropped["repeated_metrics"] == 0


def test_terminus_screen_after_a_step_of_several_commands_answers_the_last(
    tmp_path: Path,
) -> None:
    """Terminus 2 (v1.7) gives each command of a reply a `bash_command` call and the reply one
    observation result without `source_call_id`: the terminal's screen after the last
    command. It answers that call; the earlier ones have no result of their own."""

    def command(call_id: str, keys: str) -> dict[str, Any]:
        arguments = {"keystrokes": keys, "duration": 0.1}
        return {"tool_call_id": call_id, "function_name": "bash_command", "arguments": arguments}

    def complete(call_id: str) -> dict[str, Any]:
        return {"tool_call_id": call_id, "function_name": "mark_task_complete", "arguments": {}}

    steps = [
        {"step_id": 1, "source": "user", "message": "Sort the files"},
        {
            "step_id": 2,
            "source": "agent",
            "message": "Analysis: nothing yet.\nPlan: look around.",
            "tool_calls": [command("call_0_1", "ls\n"), command("call_0_2", "pwd\n")],
            "observation": {"results": [{"content": "$ ls\na.txt\n$ pwd\n/app\n"}]},
            "metrics": {"prompt_tokens": 900, "completion_tokens": 30},
        },
        {
            "step_id": 3,
            "source": "agent",
            "message": "Analysis: done.",
            "tool_calls": [complete("call_1_task_complete")],
            "observation": {"results": [{"content": "$ \n"}]},
            "metrics": {"prompt_tokens": 900, "completion_tokens": 30},
        },
        {
            "step_id": 4,
            "source": "agent",
            "message": "Analysis: checking once more, then done.",
            "tool_calls": [command("call_2_1", "ls\n"), complete("call_2_task_complete")],
            "observation": {"results": [{"content": "$ ls\na.txt\n"}]},
            "metrics": {"prompt_tokens": 950, "completion_tokens": 20},
        },
    ]
    agent = {"name": "terminus-2", "version": "2.0.0", "model_name": "anthropic/claude-x"}
    parsed = ATIF.parse(write(tmp_path / "trajectory.json", trajectory(steps, agent=agent)))
    assert not of(parsed.events, "raw")
    results = of(parsed.events, "tool_result")
    assert [(r.call_id, r.output) for r in results] == [
        ("call_0_2", "$ ls\na.txt\n$ pwd\n/app\n"),
        ("call_1_task_complete", "$ \n"),
        ("call_2_1", "$ ls\na.txt\n"),  # the command's screen, not the completion's
    ]
    # the next reply read that screen: a request of its own, whatever its metrics
    assert len(of(parsed.events, "usage")) == 3
    assert parsed.dropped["repeated_metrics"] == 0


def test_equal_metrics_after_a_result_without_an_id_are_a_request_of_their_own(
    tmp_path: Path,
) -> None:
    """Terminus 2 names no call in its results (v1.5): the screen after a step's only call
    answers it, and the next step, whose request read it, is no repeat of a split response
    even when its metrics are the same."""
    same = {"prompt_tokens": 850, "completion_tokens": 40, "cost_usd": 0.0025}

    def step(number: int, call_id: str, name: str, keys: str | None) -> dict[str, Any]:
        arguments = {"keystrokes": keys, "duration": 0.1} if keys else {}
        return {
            "step_id": number,
            "source": "agent",
            "message": f"Analysis: step {number}.",
            "tool_calls": [
                {"tool_call_id": call_id, "function_name": name, "arguments": arguments}
            ],
            "observation": {"results": [{"content": f"root@box:/app# step {number}\n"}]},
            "metrics": dict(same),
        }

    steps = [
        {"step_id": 1, "source": "user", "message": "Create hello.txt"},
        step(2, "call_4_1", "bash_command", "cat hello.txt\n"),
        step(3, "call_5_task_complete", "mark_task_complete", None),
    ]
    agent = {"name": "terminus-2", "version": "2.0.0", "model_name": "openai/gpt-4o"}
    document = trajectory(steps, agent=agent, schema_version="ATIF-v1.5")
    parsed = ATIF.parse(write(tmp_path / "trajectory.json", document))
    assert [r.call_id for r in of(parsed.events, "tool_result")] == [
        "call_4_1",
        "call_5_task_complete",
    ]
    assert [u.input_tokens for u in of(parsed.events, "usage")] == [850, 850]
    assert parsed.dropped["repeated_metrics"] == 0


def terminus_step(number: int, message: str, screen: str) -> dict[str, Any]:
    """A step of Terminus 2 run with its JSON parser: the reply as the message, no calls, and
    the terminal's screen after its commands as the observation."""
    return {
        "step_id": number,
        "source": "agent",
        "message": message,
        "observation": {"results": [{"content": screen}]},
        "metrics": {"prompt_tokens": 900 + number, "completion_tokens": 30},
    }


# Terminus 2's replies: one running two commands, one saying the task is complete.
TERMINUS_FIRST = {
    "analysis": "A fresh shell in /app.",
    "plan": "List the files, then read the task.",
    "commands": [
        {"keystrokes": "ls -la\n", "duration": 0.1},
        {"keystrokes": "cat task.md\n", "duration": 0.5},
    ],
    "task_complete": False,
}
TERMINUS_DONE = {"analysis": "The tests pass.", "plan": "", "commands": [], "task_complete": "true"}
TERMINUS_AGENT = {"name": "terminus-2", "version": "2.0.0", "model_name": "anthropic/claude-x"}


def test_a_terminus_reply_written_as_text_is_its_calls(tmp_path: Path) -> None:
    """Terminus 2 run with its JSON parser keeps each reply, a JSON object, as the step's
    message with no calls: its analysis and plan are the message, each command a
    `bash_command` call, `task_complete` a `mark_task_complete` call, and the terminal's
    screen answers the last command (the completion when it ran none); the calls' ids number
    the replies read so. A message that is more than such a reply stays a message, and so
    does a reply Terminus refused (a required field missing: it ran none of its commands)."""
    reply = terminus_step
    first, done = TERMINUS_FIRST, TERMINUS_DONE
    unplanned = {"analysis": "Clean up.", "commands": [{"keystrokes": "rm -rf build\n"}]}
    refused = {**unplanned, "plan": "Remove it.", "commands": [{"keystrokes": "rm -rf b\n"}]}
    refusal = "Previous response had parsing errors:\nERROR: Missing required fields: plan"
    steps = [
        {"step_id": 1, "source": "user", "message": "Fix the build"},
        reply(2, json.dumps(first, indent=2), "New Terminal Output:\n\nroot@box:/app# ls"),
        reply(3, json.dumps(unplanned), refusal),
        reply(4, json.dumps(refused), refusal + "\nWARNINGS: Extra text detected"),
        reply(5, "```json\n" + json.dumps(done) + "\n```", "Are you sure? Run again."),
        reply(6, 'Here it is: {"analysis": "x", "commands": []}', "root@box:/app#"),
        reply(7, json.dumps({**done, "commands": ["ls"]}), "root@box:/app#"),
    ]
    document = trajectory(steps, agent=TERMINUS_AGENT)
    parsed = ATIF.parse(write(tmp_path / "trajectory.json", document))
    assert [m.text for m in of(parsed.events, "agent_message")] == [
        "A fresh shell in /app.\n\nList the files, then read the task.",
        json.dumps(unplanned),
        json.dumps(refused),
        "The tests pass.",
        'Here it is: {"analysis": "x", "commands": []}',
        json.dumps({**done, "commands": ["ls"]}),
    ]
    assert [(c.call_id, c.name, c.input) for c in of(parsed.events, "tool_call")] == [
        ("terminus-1-1", "bash_command", {"keystrokes": "ls -la\n", "duration": 0.1}),
        ("terminus-1-2", "bash_command", {"keystrokes": "cat task.md\n", "duration": 0.5}),
        ("terminus-2-done", "mark_task_complete", {}),
    ]
    assert [(r.call_id, r.output) for r in of(parsed.events, "tool_result")] == [
        ("terminus-1-2", "New Terminal Output:\n\nroot@box:/app# ls"),
        ("terminus-2-done", "Are you sure? Run again."),
    ]
    # the replies that are not such an object, or that Terminus refused, keep their screens
    # raw: they answer no call
    raws = [r.reason for r in of(parsed.events, "raw")]
    assert raws == ["observation result without a tool call"] * 4


def test_root_fields_no_event_holds_are_counted_as_dropped(tmp_path: Path) -> None:
    steps = [{"step_id": 1, "source": "user", "message": "hi"}]
    document = trajectory(
        steps,
        final_metrics={"total_prompt_tokens": 5, "total_steps": 1},
        notes="converted by harbor",
    )
    document["agent"]["tool_definitions"] = [{"name": "Bash"}]
    parsed = ATIF.parse(write(tmp_path / "t.json", document))
    assert {
        name: parsed.dropped[name] for name in ("final_metrics", "notes", "tool_definitions")
    } == {
        "final_metrics": 1,
        "notes": 1,
        "tool_definitions": 1,
    }
    bare = ATIF.parse(write(tmp_path / "bare.json", trajectory(steps)))
    assert not bare.dropped


USAGE_STEP = {
    "step_id": 2,
    "source": "agent",
    "model_name": "claude-opus-4-6",
    "message": "Done.",
    "metrics": {"prompt_tokens": 1000, "completion_tokens": 100, "cached_tokens": 0},
}


@pytest.mark.parametrize(
    ("final_metrics", "kept"),
    [
        ({"total_cost_usd": 0.462381, "total_steps": 2}, 0.462381),
        ({"total_cost_usd": 0, "extra": {"cost_basis": "reported"}}, 0.0),
        ({"total_cost_usd": 0.5, "extra": {"cost_basis": "estimated"}}, None),
        ({"total_cost_usd": 0.5, "extra": {"cost_basis": "mixed"}}, None),
        ({"total_cost_usd": -1}, None),
        ({"total_cost_usd": "0.5"}, None),
        ({"total_cost_usd": True}, None),
        ({"total_cost_usd": 10**400}, None),  # past a float: no figure, never an error
        ({"total_cost_usd": 2**63}, None),
    ],
)
def test_the_reported_total_cost_is_the_sessions(
    tmp_path: Path, final_metrics: dict[str, Any], kept: float | None
) -> None:
    """A total the harness reported is kept on the session's end (a total Stet's own export
    marks as an estimate is not: it was computed from the steps again)."""
    steps = [{"step_id": 1, "source": "user", "message": "hi"}, USAGE_STEP]
    parsed = ATIF.parse(write(tmp_path / "t.json", trajectory(steps, final_metrics=final_metrics)))
    end = of(parsed.events, "session_end")[0]
    assert end.cost_usd == kept
    assert parsed.dropped["final_metrics"] == (kept is None)


def test_a_request_count_past_what_a_run_reports_counts_one(tmp_path: Path) -> None:
    """An `llm_call_count` past 2**63 is no count: the step's metrics are one request's."""
    steps = [
        {"step_id": 1, "source": "user", "message": "hi"},
        USAGE_STEP | {"llm_call_count": 10**400},
        USAGE_STEP | {"step_id": 3, "llm_call_count": 2**63, "message": "Again."},
        USAGE_STEP | {"step_id": 4, "llm_call_count": 3, "message": "Thrice."},
    ]
    parsed = ATIF.parse(write(tmp_path / "t.json", trajectory(steps)))
    assert [u.requests for u in of(parsed.events, "usage")] == [1, 1, 3]


def test_the_figures_of_a_step_that_made_no_request_are_kept_raw(tmp_path: Path) -> None:
    """A step whose `llm_call_count` is 0 made no request: figures it gives all the same are
    no request's usage, and were left out with nothing to say so; they are kept as given."""
    steps = [
        {"step_id": 1, "source": "user", "message": "hi"},
        USAGE_STEP | {"llm_call_count": 0},
        USAGE_STEP | {"step_id": 3, "llm_call_count": 0, "metrics": {"prompt_tokens": 0}},
    ]
    parsed = ATIF.parse(write(tmp_path / "t.json", trajectory(steps)))
    assert not of(parsed.events, "usage")
    kept = of(parsed.events, "raw")
    assert [(r.reason, r.record) for r in kept] == [
        ("metrics of a step that made no request (llm_call_count 0)", USAGE_STEP["metrics"])
    ]


def test_a_continued_session_keeps_the_total_its_last_file_reports(
    tmp_path: Path,
) -> None:
    """Each file's final_metrics counts the run up to its end, the files before it included
    (Harbor's Terminus 2 golden runs: the continuation's total is every file's steps')."""
    second = trajectory([USAGE_STEP], final_metrics={"total_cost_usd": 0.75})
    write(tmp_path / "trajectory.cont-1.json", second)
    first = trajectory(
        [USAGE_STEP],
        final_metrics={"total_cost_usd": 0.5},
        continued_trajectory_ref="trajectory.cont-1.json",
    )
    parsed = ATIF.parse(write(tmp_path / "trajectory.json", first))
    assert of(parsed.events, "session_end")[0].cost_usd == 0.75
    del second["final_metrics"]
    write(tmp_path / "trajectory.cont-1.json", second)
    parsed = ATIF.parse(write(tmp_path / "trajectory.json", first))
    assert of(parsed.events, "session_end")[0].cost_usd is None
    assert parsed.dropped["final_metrics"] == 1


def test_a_steps_extra_and_reasoning_effort_are_kept_without_repeating_the_calls(
    tmp_path: Path,
) -> None:
    """What a step holds that no event does (its `reasoning_effort`, its `extra`, its calls'
    `extra`) is one raw event after its events, shaped as the step; a member that repeats a
    call's arguments (the object, or its JSON text) or name, as Harbor's `raw_arguments` and
    `tool_use_name` do, is counted in `dropped.repeated_extra` instead, and so is what Claude
    Code recorded of the result of a call that has its result (`tool_result_metadata`'s
    `raw_tool_result` and `tool_use_result`). What the reader reads from `extra` (a compaction's `context_management`) is
    not kept again."""
    recorded = {"type": "tool_result", "tool_use_id": "c3", "content": "", "is_error": False}
    arguments = {"command": "ls", "description": "List"}
    steps = [
        {"step_id": 1, "source": "user", "message": "List the files"},
        {
            "step_id": 2,
            "source": "agent",
            "message": "Listing.",
            "reasoning_effort": "high",
            "tool_calls": [
                {
                    "tool_call_id": "c1",
                    "function_name": "Bash",
                    "arguments": arguments,
                    "extra": {
                        "raw_arguments": arguments,
                        "tool_use_name": "Bash",
                        "caller": {"type": "direct"},
                    },
                },
                {"tool_call_id": "c2", "function_name": "Read", "arguments": {"path": "a"}},
            ],
            "observation": {
                "results": [
                    {"source_call_id": "c1", "content": "a"},
                    {"source_call_id": "c2", "content": "x"},
                ]
            },
            "extra": {
                "stop_reason": "tool_use",
                "requestId": "req_011",
                "raw_arguments": json.dumps(arguments),
            },
        },
        {
            "step_id": 3,
            "source": "system",
            "message": "Summary so far",
            "extra": {"context_management": {"type": "compaction"}},
        },
        {"step_id": 4, "source": "agent", "message": "Done.", "reasoning_effort": 0.5},
        {
            "step_id": 5,
            "source": "agent",
            "message": "",
            "tool_calls": [
                {"tool_call_id": "c3", "function_name": "Bash", "arguments": {"command": ":"}}
            ],
            "extra": {
                "tool_result_metadata": {
                    "raw_tool_result": recorded,
                    "tool_use_result": {"stdout": "", "interrupted": False},
                }
            },
        },
    ]
    parsed = ATIF.parse(write(tmp_path / "t.json", trajectory(steps, schema_version="ATIF-v1.8")))
    events = parsed.events
    assert kinds(events)[1:-1] == [
        "user_message",
        "agent_message",
        "tool_call",
        "tool_call",
        "tool_result",
        "tool_result",
        "raw",
        "compaction",
        "agent_message",
        "raw",
        "tool_call",
        "tool_result",
    ]
    kept = of(events, "raw")
    assert kept[0].record == {
        "reasoning_effort": "high",
        "extra": {"stop_reason": "tool_use", "requestId": "req_011"},
        "tool_calls": [{"tool_call_id": "c1", "extra": {"caller": {"type": "direct"}}}],
    }
    assert kept[1].record == {"reasoning_effort": 0.5}
    assert {r.reason for r in kept} == {"what the step holds that no event does"}
    assert [r.source.pointer for r in kept] == ["/steps/1", "/steps/3"]
    assert parsed.dropped["repeated_extra"] == 5


def test_only_the_members_of_extra_read_into_a_steps_events_are_not_kept(
    tmp_path: Path,
) -> None:
    """A member of a step's `extra` is left out of what the step keeps only where it was
    read into the step's events: a compaction's mark on the system step read as one, an
    error's on the error step, a rewind's, `abandoned`. Elsewhere (an `error` or a
    `compaction` a user or an agent step holds), and outside Stet's own export the names its
    bookkeeping uses (`session`, `commits`, `file_changes`, `raw_records`), are kept."""
    steps = [
        {
            "step_id": 1,
            "source": "user",
            "message": "hi",
            "extra": {"error": "overloaded", "session": "abc", "raw_records": [1]},
        },
        {
            "step_id": 2,
            "source": "agent",
            "message": "ok",
            "extra": {
                "error": "rate limited",
                "compaction": True,
                "context_management": {"type": "x"},
                "commits": ["abc"],
                "file_changes": [],
                "abandoned": False,
            },
        },
        {
            "step_id": 3,
            "source": "system",
            "message": "Summary",
            "extra": {"compaction": True, "error": {"interrupt": True}, "abandoned": True},
        },
        {
            "step_id": 4,
            "source": "system",
            "message": "boom",
            "extra": {"error": {}, "compaction": False, "rewind": "no"},
        },
        {"step_id": 5, "source": "system", "message": "", "extra": {"rewind": {}, "error": 1}},
    ]
    events = ATIF.parse(write(tmp_path / "t.json", trajectory(steps))).events
    assert kinds(events)[1:-1] == [
        "user_message",
        "raw",
        "agent_message",
        "raw",
        "compaction",
        "raw",
        "error",
        "raw",
        "rewind",
        "raw",
    ]
    assert [r.record for r in of(events, "raw")] == [
        {"extra": {"error": "overloaded", "session": "abc", "raw_records": [1]}},
        {
            "extra": {
                "error": "rate limited",
                "compaction": True,
                "context_management": {"type": "x"},
                "commits": ["abc"],
                "file_changes": [],
            }
        },
        {"extra": {"error": {"interrupt": True}}},
        {"extra": {"compaction": False, "rewind": "no"}},
        {"extra": {"error": 1}},
    ]


def test_what_claude_code_recorded_of_a_result_is_not_kept_again_nor_any_bytes(
    tmp_path: Path,
) -> None:
    """The structured result Harbor keeps beside the recorded one (`tool_use_result`, which
    its converter writes into the result's content) repeats a call's result as
    `raw_tool_result` does: counted in `dropped.repeated_extra`, and never stored with the
    bytes of the image it holds, nor again as the step's `metadata`, which Harbor's converter
    gives the step of a result it found no call for. What a step's or a call's `extra` keeps
    otherwise is kept without the bytes of its data (a `data:` URL, base64, an MCP image's
    `data`), counted in `dropped.inline_data`."""
    data = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJ" * 8
    source = {"type": "base64", "media_type": "image/png", "data": data}
    recorded = {
        "type": "tool_result",
        "tool_use_id": "c1",
        "content": [{"type": "image", "source": source}],
    }
    image = {"type": "image", "file": {"base64": data, "type": "image/png", "originalSize": 352}}
    shot = {"type": "image", "source": {"path": f"data:image/png;base64,{data}"}}
    steps = [
        {
            "step_id": 1,
            "source": "agent",
            "message": "Reading.",
            "tool_calls": [
                {
                    "tool_call_id": "c1",
                    "function_name": "Read",
                    "arguments": {"file_path": "shot.png"},
                    "extra": {"preview": f"data:image/png;base64,{data}"},
                }
            ],
            "observation": {"results": [{"source_call_id": "c1", "content": [shot]}]},
            "extra": {
                "tool_result_metadata": {"raw_tool_result": recorded, "tool_use_result": image},
                "metadata": {"raw_tool_result": recorded, "tool_use_result": image},
                "is_sidechain": False,
            },
        },
        {
            "step_id": 2,
            "source": "agent",
            "message": "Again.",
            "extra": {"tool_result_metadata": {"tool_use_result": image}, "shown": recorded},
        },
        {
            "step_id": 3,
            "source": "agent",
            "message": "Shot.",
            "extra": {"shot": {"type": "image", "data": data, "mimeType": "image/png"}},
        },
    ]
    parsed = ATIF.parse(write(tmp_path / "t.json", trajectory(steps, schema_version="ATIF-v1.8")))
    kept = of(parsed.events, "raw")
    assert [r.record for r in kept] == [
        {
            # `is_sidechain` is read: the step is the main line's
            "tool_calls": [{"tool_call_id": "c1", "extra": {"preview": "data:image/png;base64"}}],
        },
        {
            "extra": {
                "tool_result_metadata": {
                    "tool_use_result": {
                        "type": "image",
                        "file": {"type": "image/png", "originalSize": 352},
                    }
                },
                "shown": recorded
                | {
                    "content": [
                        {"type": "image", "source": {"type": "base64", "media_type": "image/png"}}
                    ]
                },
            }
        },
        {"extra": {"shot": {"type": "image", "mimeType": "image/png"}}},
    ]
    assert data[:40] not in "".join(event_json(e) for e in parsed.events)
    assert parsed.dropped["repeated_extra"] == 3
    assert parsed.dropped["inline_data"] == 5


def test_an_empty_object_in_extra_repeats_no_arguments(tmp_path: Path) -> None:
    """A call without arguments (`{}`) has nothing a member of `extra` could repeat: an
    empty object there (`raw_arguments`, `metadata`) is kept as any other member, and not
    counted in `dropped.repeated_extra`; the call's name, given again, still is."""
    call = {
        "tool_call_id": "c1",
        "function_name": "shot",
        "arguments": {},
        "extra": {"raw_arguments": "{}", "metadata": {}, "tool_use_name": "shot"},
    }
    steps = [
        {
            "step_id": 1,
            "source": "agent",
            "message": "ok",
            "tool_calls": [call],
            "extra": {"context": {}},
        }
    ]
    parsed = ATIF.parse(write(tmp_path / "t.json", trajectory(steps)))
    assert [r.record for r in of(parsed.events, "raw")] == [
        {
            "extra": {"context": {}},
            "tool_calls": [
                {"tool_call_id": "c1", "extra": {"raw_arguments": "{}", "metadata": {}}}
            ],
        }
    ]
    assert parsed.dropped["repeated_extra"] == 1


def test_a_results_extra_and_the_metrics_extra_are_kept_but_for_what_events_hold(
    tmp_path: Path,
) -> None:
    """A result's `extra` and the step's `metrics.extra` are kept with the step's other
    fields (a result's by its `source_call_id`), but for what the events hold: whether the
    result failed (`is_error`, `tool_result_is_error`, and `tool_result_metadata.is_error`
    when it agrees), what Claude Code recorded of the result (where Harbor's current
    converter puts it), the cache writes and the cost's basis, and the cached tokens
    again; the repeats counted in `dropped.repeated_extra`, the bytes left out."""
    data = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJ" * 8
    recorded = {"type": "tool_result", "tool_use_id": "c1", "content": "boom", "is_error": True}
    metadata = {"raw_tool_result": recorded, "tool_use_result": "Error: boom", "is_error": True}
    steps = [
        {
            "step_id": 1,
            "source": "agent",
            "message": "Running.",
            "tool_calls": [
                {"tool_call_id": "c1", "function_name": "Bash", "arguments": {"command": "x"}},
                {"tool_call_id": "c2", "function_name": "Bash", "arguments": {"command": "y"}},
            ],
            "observation": {
                "results": [
                    {
                        "source_call_id": "c1",
                        "content": "boom\n\n[error] tool reported failure",
                        "extra": {
                            "tool_result_metadata": metadata,
                            "tool_result_is_error": True,
                            "duration_ms": 12,
                        },
                    },
                    {
                        "source_call_id": "c2",
                        "content": "fine",
                        "extra": {"is_error": False, "shot": f"data:image/png;base64,{data}"},
                    },
                ]
            },
            "metrics": {
                "prompt_tokens": 120,
                "completion_tokens": 5,
                "cached_tokens": 100,
                "cost_usd": 0.01,
                "extra": {
                    "cache_creation_input_tokens": 10,
                    "cache_read_input_tokens": 100,
                    "service_tier": "standard",
                    "cost_basis": "reported",
                },
            },
        }
    ]
    parsed = ATIF.parse(write(tmp_path / "t.json", trajectory(steps)))
    assert kinds(parsed.events)[-2] == "raw"
    assert of(parsed.events, "raw")[0].record == {
        "observation": {
            "results": [
                {"source_call_id": "c1", "extra": {"duration_ms": 12}},
                {"source_call_id": "c2", "extra": {"shot": "data:image/png;base64"}},
            ]
        },
        "metrics": {"extra": {"service_tier": "standard"}},
    }
    assert parsed.dropped["repeated_extra"] == 4
    assert parsed.dropped["inline_data"] == 1


def test_the_metrics_extra_keeps_what_the_usage_does_not_hold(tmp_path: Path) -> None:
    """Of a step's `metrics.extra`, only what its usage holds is left out: the cache writes
    it read (under the first name given, a count) and its cost's basis. The cache writes
    under a second name, a count that is a word, a basis the usage does not give, and the
    cache writes of metrics that give no usage stay in the step's raw event."""

    def step(number: int, metrics: dict[str, Any]) -> dict[str, Any]:
        return {"step_id": number, "source": "agent", "message": "hi", "metrics": metrics}

    two = {"cache_creation_input_tokens": 50, "cache_write_tokens": 70, "cost_basis": "list"}
    steps = [
        step(1, {"prompt_tokens": 100, "completion_tokens": 5, "cost_usd": 0.01, "extra": two}),
        step(2, {"prompt_tokens": 0, "extra": {"cache_creation_input_tokens": 5000}}),
        step(
            3,
            {
                "prompt_tokens": 100,
                "completion_tokens": 5,
                "extra": {"cache_creation_input_tokens": "many", "cost_basis": "reported"},
            },
        ),
    ]
    parsed = ATIF.parse(write(tmp_path / "t.json", trajectory(steps)))
    usages = [
        (u.input_tokens, u.cache_write_tokens, u.cost_basis) for u in of(parsed.events, "usage")
    ]
    assert usages == [(50, 50, "reported"), (100, 0, None)]
    assert [r.record for r in of(parsed.events, "raw")] == [
        {"metrics": {"extra": {"cache_write_tokens": 70, "cost_basis": "list"}}},
        {"metrics": {"extra": {"cache_creation_input_tokens": 5000}}},
        {"metrics": {"extra": {"cache_creation_input_tokens": "many", "cost_basis": "reported"}}},
    ]


def test_figures_it_cannot_read_beside_ones_it_reads_are_kept_raw(tmp_path: Path) -> None:
    """A step's metrics that give a count it reads beside figures it cannot read (a count
    that is a word or below zero, a cost that is no number) give the usage of what it read,
    and keep the others as they were given, in the raw event of what the step holds that no
    event does, as metrics it cannot read at all are kept."""
    metrics = {
        "prompt_tokens": 1200,
        "completion_tokens": "eighty",
        "cached_tokens": -3,
        "cost_usd": "n/a",
        "extra": {"service_tier": "standard"},
    }
    steps = [
        {"step_id": 1, "source": "user", "message": "go"},
        {"step_id": 2, "source": "agent", "message": "a", "metrics": metrics},
        {"step_id": 3, "source": "agent", "message": "b", "metrics": {"prompt_tokens": 7}},
    ]
    parsed = ATIF.parse(write(tmp_path / "t.json", trajectory(steps)))
    usages = [(u.input_tokens, u.output_tokens, u.cost_usd) for u in of(parsed.events, "usage")]
    assert usages == [(1200, 0, None), (7, 0, None)]
    [raw] = of(parsed.events, "raw")
    assert raw.reason == "what the step holds that no event does"
    assert raw.record == {
        "metrics": {
            "completion_tokens": "eighty",
            "cached_tokens": -3,
            "cost_usd": "n/a",
            "extra": {"service_tier": "standard"},
        }
    }


def test_the_bytes_harbor_writes_into_a_results_text_are_left_out(tmp_path: Path) -> None:
    """Harbor's Claude Code converter writes a result's content blocks into its text as
    JSON, an image with its base64 data, and the tool's structured output after
    `[metadata] `, an image Read's with the file's `base64` (an MCP tool's, a list of
    content blocks): the text keeps that JSON without the bytes, counted in
    `dropped.inline_data`. A block of another kind, and JSON the tool printed, stay as they
    are."""
    data = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJ" * 8
    source = {"type": "base64", "media_type": "image/png", "data": data}
    structured = {"type": "image", "file": {"base64": data, "type": "image/png"}}
    printed = json.dumps({"type": "text", "base64": data})
    blocks = [{"type": "text", "text": "shot"}, {"type": "image", "source": source}]
    lines = [
        json.dumps({"type": "image", "source": source}),
        "",
        "[metadata] " + json.dumps(structured),
        printed,
        "[metadata] " + json.dumps(blocks),
        "[metadata] " + json.dumps([{"type": "image", "data": data, "mimeType": "image/png"}]),
    ]
    steps = [
        {
            "step_id": 1,
            "source": "agent",
            "message": "",
            "tool_calls": [
                {"tool_call_id": "t1", "function_name": "Read", "arguments": {"file_path": "a"}}
            ],
            "observation": {"results": [{"source_call_id": "t1", "content": "\n".join(lines)}]},
        }
    ]
    parsed = ATIF.parse(write(tmp_path / "t.json", trajectory(steps)))
    [result] = of(parsed.events, "tool_result")
    assert result.output.split("\n") == [
        '{"type": "image", "source": {"type": "base64", "media_type": "image/png"}}',
        "",
        '[metadata] {"type": "image", "file": {"type": "image/png"}}',
        printed,
        '[metadata] [{"type": "text", "text": "shot"}, {"type": "image", "source": {"type": '
        '"base64", "media_type": "image/png"}}]',
        '[metadata] [{"type": "image", "mimeType": "image/png"}]',
    ]
    assert parsed.dropped["inline_data"] == 4


def test_a_whole_tool_result_block_in_a_results_text_loses_its_bytes(tmp_path: Path) -> None:
    """A line of a result's text that is a whole `tool_result` content block (its content
    an image with its base64 data) keeps the block without the bytes, counted in
    `dropped.inline_data`: the image's source still says what it was."""
    data = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJ" * 8
    source = {"type": "base64", "media_type": "image/png", "data": data}
    block = {
        "type": "tool_result",
        "tool_use_id": "toolu_inner",
        "content": [{"type": "text", "text": "shot"}, {"type": "image", "source": source}],
    }
    steps = [
        {
            "step_id": 1,
            "source": "agent",
            "message": "",
            "tool_calls": [
                {"tool_call_id": "t1", "function_name": "Task", "arguments": {"prompt": "look"}}
            ],
            "observation": {
                "results": [{"source_call_id": "t1", "content": "Done.\n" + json.dumps(block)}]
            },
        }
    ]
    parsed = ATIF.parse(write(tmp_path / "t.json", trajectory(steps)))
    [result] = of(parsed.events, "tool_result")
    kept = {"type": "base64", "media_type": "image/png"}
    assert result.output.split("\n") == [
        "Done.",
        json.dumps(block | {"content": [block["content"][0], {"type": "image", "source": kept}]}),
    ]
    assert parsed.dropped["inline_data"] == 1


def test_an_image_block_harbor_writes_into_a_message_loses_its_bytes(tmp_path: Path) -> None:
    """Harbor's Claude Code converter writes a message's content block that is neither a
    text nor a call (an image the user pasted) into the message's text as its JSON: the
    line keeps that JSON without the base64, counted in `dropped.inline_data`."""
    data = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJ" * 8
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}}
    steps = [
        {"step_id": 1, "source": "user", "message": "What is this?\n\n" + json.dumps(image)},
        {"step_id": 2, "source": "agent", "message": json.dumps(image) + "\n\nA pixel."},
    ]
    parsed = ATIF.parse(write(tmp_path / "t.json", trajectory(steps)))
    kept = '{"type": "image", "source": {"type": "base64", "media_type": "image/png"}}'
    assert [e.text for e in of(parsed.events, "user_message")] == [f"What is this?\n\n{kept}"]
    assert [e.text for e in of(parsed.events, "agent_message")] == [f"{kept}\n\nA pixel."]
    assert parsed.dropped["inline_data"] == 2


def test_a_line_of_json_that_holds_no_bytes_stays_as_it_was_written(tmp_path: Path) -> None:
    """A line of a message's or a result's text that is JSON Harbor's converter may have
    written (a `tool_result` block, structured output after `[metadata] `) but that holds
    no bytes stays byte for byte, and nothing is counted; a line beside it that holds some
    is the only one written again."""
    data = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJ" * 8
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}}
    lines = [
        "Is this payload right?",
        '{"type":"tool_result","tool_use_id":"t1","content":"file is base64","is_error":false}',
        '[metadata] {"encoding":"base64","size":1e3}',
    ]
    text = "\n".join(lines)
    steps = [
        {"step_id": 1, "source": "user", "message": text},
        {
            "step_id": 2,
            "source": "agent",
            "message": text,
            "tool_calls": [{"tool_call_id": "c1", "function_name": "Read", "arguments": {}}],
            "observation": {
                "results": [{"source_call_id": "c1", "content": f"{text}\n{json.dumps(image)}"}]
            },
        },
    ]
    parsed = ATIF.parse(write(tmp_path / "t.json", trajectory(steps)))
    assert [e.text for e in of(parsed.events, "user_message")] == [text]
    assert [e.text for e in of(parsed.events, "agent_message")] == [text]
    kept = {"type": "image", "source": {"type": "base64", "media_type": "image/png"}}
    assert [r.output for r in of(parsed.events, "tool_result")] == [f"{text}\n{json.dumps(kept)}"]
    assert parsed.dropped["inline_data"] == 1


def test_a_record_kept_whole_keeps_no_bytes_either(tmp_path: Path) -> None:
    """A result no call answers (Harbor's converter gives one it found no call for a step
    of its own), a step without a source and metrics it cannot read are kept whole, without
    the bytes of the data they hold: the result's text without the base64 Harbor's converter
    wrote into it, its `extra` and the others without a `base64` member, a `data:` URL or
    the `data` of a source of type `base64`, each counted in `dropped.inline_data`."""
    data = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJ" * 8
    source = {"type": "base64", "media_type": "image/png", "data": data}
    structured = {"type": "image", "file": {"base64": data, "type": "image/png"}}
    text = json.dumps({"type": "image", "source": source}) + "\n[metadata] "
    text += json.dumps(structured)
    result = {
        "source_call_id": "toolu_orphan",
        "content": text,
        "extra": {"tool_result_metadata": {"tool_use_result": structured}},
    }
    shot = {"type": "image", "source": {"path": f"data:image/png;base64,{data}"}}
    steps = [
        {"step_id": 1, "source": "agent", "message": "", "observation": {"results": [result]}},
        {"step_id": 2, "message": [shot]},
        {
            "step_id": 3,
            "source": "agent",
            "message": "b",
            "metrics": {"prompt_tokens": "lots", "extra": {"shown": source}},
        },
    ]
    parsed = ATIF.parse(write(tmp_path / "t.json", trajectory(steps)))
    without = {"type": "image", "file": {"type": "image/png"}}
    assert [r.record for r in of(parsed.events, "raw")] == [
        {
            "source_call_id": "toolu_orphan",
            "content": '{"type": "image", "source": {"type": "base64", "media_type": "image/png"}}'
            '\n[metadata] {"type": "image", "file": {"type": "image/png"}}',
            "extra": {"tool_result_metadata": {"tool_use_result": without}},
        },
        {"step_id": 2, "message": [{"type": "image", "source": {"path": "data:image/png;base64"}}]},
        {
            "prompt_tokens": "lots",
            "extra": {"shown": {"type": "base64", "media_type": "image/png"}},
        },
    ]
    assert data[:40] not in "".join(event_json(e) for e in parsed.events)
    assert parsed.dropped["inline_data"] == 5


def test_a_result_no_call_answers_keeps_no_bytes_in_its_content_parts(tmp_path: Path) -> None:
    """A result no call answers whose content is a list of parts (ATIF v1.6) is kept raw
    as a result with a call has its text read: the lines of JSON Harbor's converter wrote
    into a text part lose the base64 of an image, counted in `dropped.inline_data`."""
    data = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJ" * 8
    source = {"type": "base64", "media_type": "image/png", "data": data}
    structured = {"type": "image", "file": {"base64": data, "type": "image/png"}}
    text = json.dumps({"type": "image", "source": source}) + "\n[metadata] "
    text += json.dumps(structured)
    result = {"source_call_id": None, "content": [{"type": "text", "text": text}, text]}
    steps = [{"step_id": 1, "source": "agent", "message": "", "observation": {"results": [result]}}]
    parsed = ATIF.parse(write(tmp_path / "t.json", trajectory(steps, schema_version="ATIF-v1.6")))
    kept = (
        '{"type": "image", "source": {"type": "base64", "media_type": "image/png"}}'
        '\n[metadata] {"type": "image", "file": {"type": "image/png"}}'
    )
    [raw] = of(parsed.events, "raw")
    assert raw.record == {"source_call_id": None, "content": [{"type": "text", "text": kept}, kept]}
    assert parsed.dropped["inline_data"] == 4


def test_an_mcp_resources_blob_is_kept_nowhere(tmp_path: Path) -> None:
    """An MCP tool's embedded resource holds its bytes as base64 in `blob` (`{"type":
    "resource", "resource": {"uri", "mimeType", "blob"}}`): as a result's content part kept
    raw, in the structured output Harbor writes after `[metadata] ` and in a step's `extra`,
    it is kept without the blob (its uri and mime type say what it was), each counted in
    `dropped.inline_data`."""
    data = "JVBERi0xLjQKJcfsj6IKNSAwIG9iago8PC9MZW5ndGggNiAwIFI" * 8
    resource = {"uri": "file:///r/report.pdf", "mimeType": "application/pdf", "blob": data}
    embedded = {"type": "resource", "resource": resource}
    without = {"type": "resource", "resource": {k: v for k, v in resource.items() if k != "blob"}}
    output = "Fetched.\n[metadata] " + json.dumps([embedded])
    steps = [
        {
            "step_id": 1,
            "source": "agent",
            "message": "",
            "tool_calls": [
                {"tool_call_id": "c1", "function_name": "mcp__docs__fetch", "arguments": {}},
                {"tool_call_id": "c2", "function_name": "mcp__docs__fetch", "arguments": {}},
            ],
            "observation": {
                "results": [
                    {"source_call_id": "c1", "content": [{"type": "text", "text": "r"}, embedded]},
                    {"source_call_id": "c2", "content": output},
                ]
            },
            "extra": {"resource": embedded},
        }
    ]
    parsed = ATIF.parse(write(tmp_path / "t.json", trajectory(steps, schema_version="ATIF-v1.6")))
    assert [r.output for r in of(parsed.events, "tool_result")] == [
        "r",
        "Fetched.\n[metadata] " + json.dumps([without]),
    ]
    assert [r.record for r in of(parsed.events, "raw")] == [
        without,
        {"extra": {"resource": without}},
    ]
    assert data[:40] not in "".join(event_json(e) for e in parsed.events)
    assert parsed.dropped["inline_data"] == 3


def test_a_data_url_inside_a_text_keeps_only_its_head(tmp_path: Path) -> None:
    """A `data:` URL inside a longer text (a markdown image in a message, an `<img>` in a
    tool's output, a system prompt kept raw) keeps its head (`data:image/png;base64`), which
    says what it held, without its bytes, each counted in `dropped.inline_data`. Code that
    only builds one (the head, then a variable) is no data and stays as it is."""
    data = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJ" * 8
    url = f"data:image/png;base64,{data}=="
    code = 'src = "data:image/png;base64," + encoded'
    steps = [
        {"step_id": 1, "source": "system", "message": f"Logo: ![logo]({url})"},
        {"step_id": 2, "source": "user", "message": f"What is this? ![shot]({url})"},
        {
            "step_id": 3,
            "source": "agent",
            "message": f"It is ![shot]({url}), a pixel.",
            "reasoning_content": f"The image {url} is one pixel.",
            "tool_calls": [
                {"tool_call_id": "c1", "function_name": "Read", "arguments": {"path": "a.html"}}
            ],
            "observation": {
                "results": [{"source_call_id": "c1", "content": f'<img src="{url}">\n{code}'}]
            },
        },
    ]
    parsed = ATIF.parse(write(tmp_path / "t.json", trajectory(steps)))
    head = "data:image/png;base64"
    [system] = of(parsed.events, "raw")
    assert system.record["message"] == f"Logo: ![logo]({head})"
    assert [e.text for e in of(parsed.events, "user_message")] == [f"What is this? ![shot]({head})"]
    assert [e.text for e in of(parsed.events, "agent_message")] == [
        f"It is ![shot]({head}), a pixel."
    ]
    assert [e.text for e in of(parsed.events, "reasoning")] == [f"The image {head} is one pixel."]
    assert [e.output for e in of(parsed.events, "tool_result")] == [f'<img src="{head}">\n{code}']
    assert data[:40] not in "".join(event_json(e) for e in parsed.events)
    assert parsed.dropped["inline_data"] == 5


def test_only_a_data_url_that_holds_data_loses_it(tmp_path: Path) -> None:
    """Code that builds a `data:` URL from a template, and words that merely look like
    one, stay as they are in a text and in a raw record. A URL that holds data loses it:
    a long run of base64 (its slashes escaped in JSON text, or wrapped on lines of 76,
    with a line break or an escaped one), or data up to where the URL ends that is long
    (an SVG percent-encoded in CSS). Only what is left out is counted."""
    data = base64.b64encode(bytes(range(256)) * 2).decode()
    wrapped = "\n".join(data[i : i + 76] for i in range(0, len(data), 76))
    escaped = data.replace("/", "\\/")
    svg = (
        "%3Csvg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 8 8'%3E"
        "%3Cpath d='M0 0h8v8H0z'/%3E%3C/svg%3E"
    )
    kept = [
        "const url = `data:image/svg+xml,${encodeURIComponent(svg)}`;",
        'curl -d "data:text/plain,$PAYLOAD" http://localhost:8080',
        'url = "data:text/html;charset=utf-8,%s" % quote(html)',
        'val uri = "data:text/plain,$body"',
        'src = "data:text/html,#{html}"',
        "minified: {data:e/t,loaded:n}",
        "split data:train/test,80/20 for the run",
        'src = "data:image/png;base64," + encoded',
    ]
    cut = {
        f'{{"src":"data:image/png;base64,{escaped}"}}': '{"src":"data:image/png;base64"}',
        f'background: url("data:image/svg+xml,{svg}");': 'background: url("data:image/svg+xml");',
        f"data:image/png;base64,{wrapped}\nThe form above": "data:image/png;base64\nThe form above",
        json.dumps(
            {"shot": f"data:image/png;base64,{wrapped}"}
        ): '{"shot": "data:image/png;base64"}',
    }
    steps = [{"step_id": 1, "source": "system", "message": "\n".join(kept)}]
    steps += [
        {"step_id": i + 2, "source": "agent", "message": text}
        for i, text in enumerate([*kept, *cut])
    ]
    parsed = ATIF.parse(write(tmp_path / "t.json", trajectory(steps)))
    [system] = of(parsed.events, "raw")
    assert system.record["message"] == "\n".join(kept)
    assert [e.text for e in of(parsed.events, "agent_message")] == [*kept, *cut.values()]
    assert data[:40] not in "".join(event_json(e) for e in parsed.events)
    assert parsed.dropped["inline_data"] == 4


def test_a_word_after_wrapped_base64_is_not_taken_for_its_last_line(tmp_path: Path) -> None:
    """Base64 wrapped at 76 or 64 letters a line ends with a shorter line, so a word on the
    line after whole lines of it (`Done`, `exit`, `PASS`) looked like that last line and was
    left out with the data. A line shaped like a word stays; a real last line, padded or
    not shaped like one, is left out."""

    def wrapped(size: int, width: int) -> str:
        data = base64.b64encode(bytes(range(size))).decode()
        return "\n".join(data[n : n + width] for n in range(0, len(data), width))

    head = "data:image/png;base64,"
    zeros = base64.b64encode(bytes(range(171)) + bytes(6)).decode()
    zeros = "\n".join(zeros[n : n + 76] for n in range(0, len(zeros), 76))
    cut = {
        f"{head}{wrapped(171, 76)}\nDone": "data:image/png;base64\nDone",
        f"{head}{wrapped(96, 64)}\nexit\n$ ls": "data:image/png;base64\nexit\n$ ls",
        f"{head}{wrapped(171, 76)}\nPASS": "data:image/png;base64\nPASS",
        f"{head}{wrapped(172, 76)}\nDone": "data:image/png;base64\nDone",  # ends qw==
        f"{head}{wrapped(174, 76)}\nDone": "data:image/png;base64\nDone",  # ends q6yt
        f"{head}{wrapped(99, 64)}\nOK": "data:image/png;base64\nOK",  # ends YGFi
        # Zero bytes at the end are a last line of one letter, `AAAAAAAA`: no word.
        f"{head}{zeros}\nDone": "data:image/png;base64\nDone",
    }
    steps = [{"step_id": i + 1, "source": "agent", "message": text} for i, text in enumerate(cut)]
    parsed = ATIF.parse(write(tmp_path / "t.json", trajectory(steps)))
    assert [e.text for e in of(parsed.events, "agent_message")] == list(cut.values())
    assert parsed.dropped["inline_data"] == len(cut)


def test_a_number_after_wrapped_base64_is_not_taken_for_its_last_line(tmp_path: Path) -> None:
    """A number alone on the line after whole lines of wrapped base64 (a size, `1024`, an
    exit code, `0`) looked like the data's last line and was left out with it. Encoders pad
    a last line to a group of four, so `0` could never be one, and four digits unpadded are
    one in 1,700 last lines: the number stays. Two letters unpadded (`YQ`) no encoder
    writes either, and stay too; a padded last line is the data's."""

    def wrapped(size: int, width: int) -> str:
        data = base64.b64encode(bytes(range(size))).decode()
        return "\n".join(data[n : n + width] for n in range(0, len(data), width))

    head = "data:image/png;base64,"
    cut = {
        f"{head}{wrapped(171, 76)}\n1024": "data:image/png;base64\n1024",
        f"{head}{wrapped(96, 64)}\n0\n$ ls": "data:image/png;base64\n0\n$ ls",
        f"{head}{wrapped(96, 64)}\n4096\nexit 0": "data:image/png;base64\n4096\nexit 0",
        f"{head}{wrapped(171, 76)}\nYQ": "data:image/png;base64\nYQ",
        f"{head}{wrapped(172, 76)}\n1024": "data:image/png;base64\n1024",  # ends qw==
    }
    steps = [{"step_id": i + 1, "source": "agent", "message": text} for i, text in enumerate(cut)]
    parsed = ATIF.parse(write(tmp_path / "t.json", trajectory(steps)))
    assert [e.text for e in of(parsed.events, "agent_message")] == list(cut.values())
    assert parsed.dropped["inline_data"] == len(cut)


def test_a_data_url_inside_one_that_holds_no_data_loses_its_data(tmp_path: Path) -> None:
    """A `data:` URL that holds no data (built from a template, too short, its quote never
    closed) may hold one that does: the inner URL's base64 is left out all the same, and
    one that holds no data (a template, a few letters) stays."""
    data = base64.b64encode(bytes(range(45))).decode()  # 60 letters
    cut = {
        f'src = "data:text/html,<img src=data:image/png;base64,{data}>$name"': (
            'src = "data:text/html,<img src=data:image/png;base64>$name"'
        ),
        f"<a href=\"data:text/html,<img src='data:image/png;base64,{data}'>\">logo</a>": (
            "<a href=\"data:text/html,<img src='data:image/png;base64'>\">logo</a>"
        ),
        f'"data:text/html,<img src=data:image/png;base64,{data}> and no closing quote': (
            '"data:text/html,<img src=data:image/png;base64> and no closing quote'
        ),
    }
    kept = [
        'src = "data:text/html,<img src=data:image/png;base64,${b64}>"',
        'src = "data:text/html,<img src=data:image/png;base64,QUJD>$name"',
    ]
    steps = [
        {"step_id": i + 1, "source": "agent", "message": text}
        for i, text in enumerate([*cut, *kept])
    ]
    parsed = ATIF.parse(write(tmp_path / "t.json", trajectory(steps)))
    assert [e.text for e in of(parsed.events, "agent_message")] == [*cut.values(), *kept]
    assert parsed.dropped["inline_data"] == len(cut)


def test_a_raw_string_that_starts_with_a_data_url_keeps_the_text_after_it(
    tmp_path: Path,
) -> None:
    """A string of a raw record that starts with a `data:` URL loses the URL's data alone:
    the text after it stays (a result's text after a screenshot, a note that merely starts
    with one). A string that is such a URL whole loses its data whatever its length, but
    for a template (`$PAYLOAD`) and a URL with no data (`data:,`)."""
    shot = "data:image/png;base64,iVBORw0KGgo="
    text = "The screenshot above shows the login form; its submit button is disabled."
    note = "data:,see the attached notes below for the full explanation of the change"
    base64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJ" * 40
    wrapped = {  # base64 wrapped at any width, a whole number of groups of four
        f"wrapped at {width}": "data:image/png;base64,"
        + "\n".join(base64[n : n + width] for n in range(0, len(base64), width))
        for width in (60, 72, 76)
    }
    extra = {
        "note": note,
        "shot": shot,
        "plain": "data:text/plain,hello",
        "template": "data:text/plain,$PAYLOAD",
        "empty": "data:,",
        **wrapped,
    }
    result = {"source_call_id": None, "content": f"{shot}\n{text}"}
    steps = [
        {"step_id": 1, "source": "agent", "message": "", "observation": {"results": [result]}},
        {"step_id": 2, "source": "agent", "message": "ok", "extra": extra},
    ]
    parsed = ATIF.parse(write(tmp_path / "t.json", trajectory(steps)))
    assert [r.record for r in of(parsed.events, "raw")] == [
        {"source_call_id": None, "content": f"data:image/png;base64\n{text}"},
        {
            "extra": extra
            | {"shot": "data:image/png;base64", "plain": "data:text/plain"}
            | dict.fromkeys(wrapped, "data:image/png;base64")
        },
    ]
    assert parsed.dropped["inline_data"] == 6


def test_a_part_of_a_kind_not_read_is_kept_without_its_bytes(tmp_path: Path) -> None:
    """A content part of a kind the text does not read (a video) is kept raw, after the
    event the text went into or in the step kept whole, without the bytes of its data (a
    `data:` URL keeps its head), counted in `dropped.inline_data`."""
    data = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJ" * 8
    video = {"type": "video", "source": {"path": f"data:video/mp4;base64,{data}"}}
    kept = {"type": "video", "source": {"path": "data:video/mp4;base64"}}
    steps = [
        {"step_id": 1, "source": "user", "message": [{"type": "text", "text": "hi"}, video]},
        {"step_id": 2, "source": "system", "message": [video]},
    ]
    parsed = ATIF.parse(write(tmp_path / "t.json", trajectory(steps)))
    raws = of(parsed.events, "raw")
    assert [r.record for r in raws] == [kept, {"step_id": 2, "source": "system", "message": [kept]}]
    assert parsed.dropped["inline_data"] == 2


def test_public_sample_repeats_each_calls_arguments_and_name_in_its_extra() -> None:
    """Harbor's Claude Code trajectory keeps each call's arguments and name again in the
    call's `extra`: counted, nothing kept twice."""
    parsed = ATIF.parse(sample("atif/harbor__trajectory_pass.json"))
    assert parsed.dropped["repeated_extra"] == 24
    assert not of(parsed.events, "raw")


def test_public_sample_keeps_the_reported_total() -> None:
    parsed = ATIF.parse(sample("atif/harbor__trajectory_pass.json"))
    assert of(parsed.events, "session_end")[0].cost_usd == pytest.approx(0.462381)
    assert "final_metrics" not in parsed.dropped


def test_a_result_left_out_of_a_step_is_read_from_its_recorded_tool_result(
    tmp_path: Path,
) -> None:
    """Harbor's early Claude Code converter left out the observation of a call whose output
    was empty; the step's `extra.tool_result_metadata.raw_tool_result` still holds the result
    Claude Code recorded, which answers the call (ok or error as it says). A recorded result
    of another call answers nothing."""

    def step(number: int, call: str, recorded: dict[str, Any] | None) -> dict[str, Any]:
        found: dict[str, Any] = {
            "step_id": number,
            "source": "agent",
            "message": f"Executed Bash {call}",
            "tool_calls": [
                {"tool_call_id": call, "function_name": "Bash", "arguments": {"command": "sleep 3"}}
            ],
        }
        if recorded is not None:
            raw = {"tool_use_id": call, "type": "tool_result", **recorded}
            found["extra"] = {"tool_result_metadata": {"raw_tool_result": raw}}
        return found

    failure = [{"type": "text", "text": "Exit code 1"}]
    other = step(4, "toolu_4", {"content": "", "is_error": False})
    other["extra"]["tool_result_metadata"]["raw_tool_result"]["tool_use_id"] = "toolu_1"
    steps = [
        {"step_id": 1, "source": "user", "message": "Start the server and wait."},
        step(2, "toolu_2", {"content": "", "is_error": False}),
        step(3, "toolu_3", {"content": failure, "is_error": True}),
        other,
        step(5, "toolu_5", None),
    ]
    path = write(tmp_path / "trajectory.json", trajectory(steps, schema_version="ATIF-v1.2"))
    results = of(ATIF.parse(path).events, "tool_result")
    assert [(r.call_id, r.ok, r.output) for r in results] == [
        ("toolu_2", True, ""),
        ("toolu_3", False, "Exit code 1"),
    ]
    assert [r.source.pointer for r in results] == ["/steps/1", "/steps/2"]


def test_an_edit_the_openhands_file_editor_refused_changes_no_file(tmp_path: Path) -> None:
    """Harbor's conversion of an OpenHands run keeps the file editor's output as the result:
    one starting with ERROR: is the editor refusing the command (an old_str it did not find),
    a failed result with no file change. Another tool's output may start so and stay ok."""

    def step(number: int, tool: str, arguments: dict[str, Any], output: str) -> dict[str, Any]:
        call = f"toolu_{number}"
        return {
            "step_id": number,
            "source": "agent",
            "message": "",
            "tool_calls": [{"tool_call_id": call, "function_name": tool, "arguments": arguments}],
            "observation": {"results": [{"source_call_id": call, "content": output}]},
        }

    def replace(old: str, new: str) -> dict[str, Any]:
        path = "/workspace/lib/calc.py"
        return {"command": "str_replace", "path": path, "old_str": old, "new_str": new}

    refusal = "ERROR:\nNo replacement was performed, old_str `total =+ 1` did not appear verbatim."
    steps = [
        {"step_id": 1, "source": "user", "message": "Fix the counters in calc.py"},
        step(2, "str_replace_editor", replace("total =+ 1", "total += 1"), refusal),
        step(3, "str_replace_editor", replace("total =- 1", "total -= 1"), "The file was edited."),
        step(4, "execute_bash", {"command": "cat log.txt"}, "ERROR:\ndisk full\n"),
    ]
    agent = {"name": "openhands", "version": "0.59.0", "model_name": "gpt-5"}
    events = ATIF.parse(write(tmp_path / "t.json", trajectory(steps, agent=agent))).events
    results = [(r.call_id, r.ok) for r in of(events, "tool_result")]
    assert results == [("toolu_2", False), ("toolu_3", True), ("toolu_4", True)]
    [change] = of(events, "file_change")
    assert (change.call_id, change.added, change.removed) == ("toolu_3", 1, 1)


def test_a_record_nested_deeper_than_an_event_may_is_read_without_a_crash(tmp_path: Path) -> None:
    """A step that is a list nested 900 deep (or a result's extra so nested) is kept raw and
    then left out as nested too deeply when written; taking the bytes of data out of it
    walked every level, past Python's recursion limit, and stopped the import."""
    deep: Any = "x"
    for _ in range(900):
        deep = [deep]
    steps = [
        {"step_id": 1, "source": "user", "message": "hi"},
        deep,
        {
            "step_id": 3,
            "source": "agent",
            "message": "",
            "observation": {"results": [{"source_call_id": "none", "extra": {"k": deep}}]},
        },
    ]
    parsed = ATIF.parse(write(tmp_path / "t.json", trajectory(steps)))
    assert len(of(parsed.events, "raw")) == 2
