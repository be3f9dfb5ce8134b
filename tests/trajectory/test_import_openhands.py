"""OpenHands event lists: hand-written trajectories in the shapes OpenHands serialises
(`event_to_trajectory`), modelled on its own test trajectories."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from stet_lsp.core.errors import StetError
from stet_lsp.trajectory.events import EventBase, event_json
from stet_lsp.trajectory.importers import detect, importer
from stet_lsp.trajectory.importers.base import SNIFF_BYTES
from stet_lsp.trajectory.importers.openhands import IMPORTERS

OPENHANDS = IMPORTERS["openhands"]

# A sandbox's folder that is on this machine is another project's (the import leaves it).
NO_LOCAL_WORKSPACE = pytest.mark.skipif(
    os.path.lexists("/workspace"), reason="this machine has a /workspace folder"
)


def write(path: Path, document: Any) -> Path:
    path.write_text(json.dumps(document, indent=4), encoding="utf-8")
    return path


def kinds(events: list[EventBase]) -> list[str]:
    return [e.kind for e in events]


def of(events: list[EventBase], kind: str) -> list[Any]:
    return [e for e in events if e.kind == kind]


def response(
    response_id: str, content: str = "", reasoning: str | None = None, **usage: int
) -> dict[str, Any]:
    message: dict[str, Any] = {"content": content, "role": "assistant", "tool_calls": []}
    if reasoning is not None:
        message["reasoning_content"] = reasoning
    return {
        "id": response_id,
        "created": 1737433775,
        "model": "claude-3-5-sonnet-20241022",
        "object": "chat.completion",
        "choices": [{"finish_reason": "tool_calls", "index": 0, "message": message}],
        "usage": {
            "completion_tokens": usage.get("output", 0),
            "prompt_tokens": usage.get("prompt", 0),
            "prompt_tokens_details": {"cached_tokens": usage.get("cached", 0)},
            "cache_creation_input_tokens": usage.get("written", 0),
            "cache_read_input_tokens": usage.get("cached", 0),
        },
    }


def metadata(tool: str, call: str, model_response: dict[str, Any]) -> dict[str, Any]:
    return {
        "function_name": tool,
        "tool_call_id": call,
        "model_response": model_response,
        "total_calls_in_response": 1,
    }


def metrics(
    cost: float, prompt: int, output: int, cached: int = 0, written: int = 0
) -> dict[str, Any]:
    return {
        "accumulated_cost": cost,
        "max_budget_per_task": None,
        "accumulated_token_usage": {
            "model": "claude-sonnet-4",
            "prompt_tokens": prompt,
            "completion_tokens": output,
            "cache_read_tokens": cached,
            "cache_write_tokens": written,
            "context_window": 200000,
            "per_turn_token": 0,
            "response_id": "",
        },
        "costs": [],
        "response_latencies": [],
        "token_usages": [],
    }


def session() -> list[Any]:
    """A session of the current serialisation: every record type the importer maps."""
    first = response("chatcmpl-1", "Let me look.", reasoning="The user wants a fix.")
    return [
        {
            "id": 0,
            "timestamp": "2025-06-01T10:00:00.000001",
            "source": "agent",
            "message": "You are OpenHands agent...",
            "action": "system",
            "args": {
                "content": "You are OpenHands agent...",
                "tools": [],
                "openhands_version": "0.40.0",
                "agent_class": "CodeActAgent",
            },
        },
        {
            "id": 1,
            "timestamp": "2025-06-01T10:00:01",
            "source": "user",
            "message": "Fix the greeting in app.py",
            "action": "message",
            "args": {
                "content": "Fix the greeting in app.py",
                "image_urls": ["https://x/y.png"],
                "wait_for_response": False,
            },
        },
        {
            "id": 2,
            "timestamp": "2025-06-01T10:00:01.5",
            "source": "user",
            "message": "Retrieving content for: Fix the greeting",
            "action": "recall",
            "args": {
                "recall_type": "workspace_context",
                "query": "Fix the greeting in app.py",
                "thought": "",
            },
        },
        {
            "id": 3,
            "timestamp": "2025-06-01T10:00:01.6",
            "source": "environment",
            "message": "Added workspace context",
            "cause": 2,
            "observation": "recall",
            "content": "Added workspace context",
            "extras": {
                "recall_type": "workspace_context",
                "repo_name": "acme/app",
                "repo_directory": "/workspace/app",
                "repo_branch": "main",
            },
        },
        {
            "id": 4,
            "timestamp": "2025-06-01T10:00:05",
            "source": "agent",
            "message": "Running command: cat app.py",
            "action": "run",
            "tool_call_metadata": metadata("execute_bash", "toolu_1", first),
            "llm_metrics": metrics(0.01, 1000, 50, cached=200, written=300),
            "args": {
                "command": "cat app.py",
                "is_input": False,
                "thought": "Let me look.",
                "blocking": False,
                "hidden": False,
                "confirmation_state": "confirmed",
            },
        },
        {
            "id": 5,
            "timestamp": "2025-06-01T10:00:06",
            "source": "agent",
            "message": "Command `cat app.py` executed with exit code 0.",
            "cause": 4,
            "observation": "run",
            "tool_call_metadata": metadata("execute_bash", "toolu_1", first),
            "content": "print('helo')\n",
            "extras": {
                "command": "cat app.py",
                "metadata": {"exit_code": 0, "working_dir": "/workspace/app"},
                "hidden": False,
            },
            "success": True,
        },
        {
            "id": 6,
            "timestamp": "2025-06-01T10:00:09",
            "source": "agent",
            "message": "",
            "action": "edit",
            "tool_call_metadata": metadata("str_replace_editor", "toolu_2", response("chatcmpl-2")),
            "llm_metrics": metrics(0.025, 2100, 120, cached=900, written=300),
            "args": {
                "path": "/workspace/app/app.py",
                "command": "str_replace",
                "file_text": None,
                "old_str": "print('helo')",
                "new_str": "print('hello')",
                "insert_line": None,
                "content": "",
                "start": 1,
                "end": -1,
                "thought": "",
                "impl_source": "oh_aci",
            },
        },
        {
            "id": 7,
            "timestamp": "2025-06-01T10:00:09.1",
            "source": "agent",
            "message": "I edited the file /workspace/app/app.py.",
            "cause": 6,
            "observation": "edit",
            "content": "The file /workspace/app/app.py has been edited.",
            "extras": {
                "path": "/workspace/app/app.py",
                "prev_exist": False,
                "old_content": "print('helo')",
                "new_content": "print('hello')",
                "impl_source": "oh_aci",
                "diff": "--- /workspace/app/app.py\n+++ /workspace/app/app.py\n@@ -1 +1 @@\n-print('helo')\n+print('hello')\n",
            },
        },
        {
            "id": 8,
            "timestamp": "2025-06-01T10:00:10",
            "source": "agent",
            "message": "I am thinking...",
            "action": "think",
            "tool_call_metadata": metadata("think", "toolu_3", response("chatcmpl-3")),
            "llm_metrics": metrics(0.025, 2100, 120, cached=900, written=300),
            "args": {"thought": "Tests should pass now."},
        },
        {
            "id": 9,
            "timestamp": "2025-06-01T10:00:10.1",
            "source": "agent",
            "message": "Your thought has been logged.",
            "cause": 8,
            "observation": "think",
            "content": "Your thought has been logged.",
            "extras": {},
        },
        {
            "id": 10,
            "timestamp": "2025-06-01T10:00:11",
            "source": "agent",
            "message": "Running command: pytest",
            "action": "run",
            "tool_call_metadata": metadata("execute_bash", "toolu_4", response("chatcmpl-4")),
            "llm_metrics": metrics(0.04, 3300, 160),
            "args": {"command": "pytest", "is_input": False, "thought": ""},
        },
        {
            "id": 11,
            "timestamp": "2025-06-01T10:00:15",
            "source": "agent",
            "message": "Command `pytest` executed with exit code 1.",
            "cause": 10,
            "observation": "run",
            "content": "1 failed",
            "extras": {"command": "pytest", "metadata": {"exit_code": 1}},
            "success": False,
        },
        {
            "id": 12,
            "timestamp": "2025-06-01T10:00:16",
            "source": "agent",
            "message": "Running command: sleep 999",
            "action": "run",
            "args": {"command": "sleep 999", "thought": ""},
        },
        {
            "id": 13,
            "timestamp": "2025-06-01T10:00:17",
            "source": "agent",
            "message": "",
            "observation": "error",
            "content": "Agent got stuck in a loop",
            "extras": {"error_id": "AGENT_ERROR"},
        },
        {
            "id": 14,
            "timestamp": "2025-06-01T10:00:18",
            "source": "environment",
            "message": "",
            "observation": "agent_state_changed",
            "content": "",
            "extras": {"agent_state": "error", "reason": "Agent got stuck in a loop"},
        },
        {
            "id": 15,
            "timestamp": "2025-06-01T10:00:19",
            "source": "environment",
            "message": "",
            "observation": "agent_state_changed",
            "content": "",
            "extras": {"agent_state": "running"},
        },
        {
            "id": 16,
            "timestamp": "2025-06-01T10:00:20",
            "source": "agent",
            "message": "Summary: ...",
            "action": "condensation",
            "args": {
                "forgotten_event_ids": None,
                "forgotten_events_start_id": 4,
                "forgotten_events_end_id": 9,
                "summary": "Fixed the typo; tests fail.",
                "summary_offset": 1,
            },
        },
        {
            "id": 17,
            "timestamp": "2025-06-01T10:00:21",
            "source": "agent",
            "message": "Delegating",
            "action": "delegate",
            "args": {"agent": "BrowsingAgent", "inputs": {"task": "Read the docs"}, "thought": ""},
        },
        {
            "id": 18,
            "timestamp": "2025-06-01T10:00:30",
            "source": "agent",
            "message": "Done.",
            "cause": 17,
            "observation": "delegate",
            "content": "The docs say X.",
            "extras": {"outputs": {}},
        },
        {
            "id": 19,
            "timestamp": "2025-06-01T10:00:31",
            "source": "agent",
            "message": "Anything else?",
            "action": "message",
            "args": {
                "content": "The typo is fixed.",
                "image_urls": None,
                "wait_for_response": True,
            },
        },
        {
            "id": 20,
            "timestamp": "2025-06-01T10:00:31.1",
            "source": "agent",
            "message": "No observation",
            "cause": 19,
            "observation": "null",
            "content": "",
            "extras": {},
        },
        {
            "id": 21,
            "timestamp": "2025-06-01T10:00:40",
            "source": "agent",
            "message": "All done!",
            "action": "finish",
            "tool_call_metadata": metadata("finish", "toolu_5", response("chatcmpl-5")),
            "llm_metrics": metrics(0.05, 4000, 200),
            "args": {
                "final_thought": "Fixed the greeting.",
                "outputs": {},
                "thought": "Wrapping up.",
            },
        },
        {
            "id": 22,
            "timestamp": "2025-06-01T10:00:41",
            "source": "environment",
            "message": "",
            "observation": "agent_state_changed",
            "content": "",
            "extras": {"agent_state": "finished"},
        },
    ]


def test_every_record_type_of_a_session(tmp_path: Path) -> None:
    path = write(tmp_path / "abc.json", session())
    parsed = OPENHANDS.parse(path)
    events = parsed.events
    assert kinds(events) == [
        "session_start",
        "raw",  # system prompt
        "user_message",
        "tool_call",  # recall
        "tool_result",
        "reasoning",
        "agent_message",
        "tool_call",
        "usage",
        "tool_result",
        "tool_call",  # edit
        "usage",
        "tool_result",
        "file_change",
        "reasoning",  # think (no new usage: the metrics did not move)
        "tool_call",
        "usage",
        "tool_result",
        "tool_call",  # sleep: no result
        "error",
        "compaction",
        "tool_call",
        "subagent",
        "tool_result",
        "agent_message",
        "agent_message",
        "agent_message",
        "usage",
        "session_end",
    ]
    start = events[0]
    assert (start.harness, start.harness_version, start.model) == (
        "openhands",
        "0.40.0",
        "claude-3-5-sonnet-20241022",
    )
    assert (start.cwd, start.branch, start.time) == (
        "/workspace/app",
        "main",
        "2025-06-01T10:00:00.000001",
    )
    assert events[1].reason == "system prompt"
    assert events[2].text == "Fix the greeting in app.py\n[attachment: https://x/y.png]"
    assert events[5].text == "The user wants a fix."
    assert events[6].text == "Let me look." and events[6].model == "claude-3-5-sonnet-20241022"
    run = events[7]
    assert (run.call_id, run.name) == ("4", "execute_bash")
    assert run.input == {"command": "cat app.py", "is_input": False, "blocking": False}
    first_usage = events[8]
    assert (first_usage.input_tokens, first_usage.output_tokens) == (500, 50)
    assert (first_usage.cache_read_tokens, first_usage.cache_write_tokens) == (200, 300)
    assert (first_usage.cost_usd, first_usage.cost_basis, first_usage.model) == (
        0.01,
        "reported",
        "claude-sonnet-4",
    )
    assert (events[9].call_id, events[9].output, events[9].ok) == ("4", "print('helo')\n", True)
    second_usage = events[11]
    assert (second_usage.input_tokens, second_usage.cache_read_tokens, second_usage.cost_usd) == (
        400,
        700,
        0.015,
    )
    change = events[13]
    assert (change.call_id, change.path, change.operation, change.anchored) == (
        "6",
        "/workspace/app/app.py",
        "modify",
        True,
    )
    assert change.diff == (
        "--- a//workspace/app/app.py\n+++ b//workspace/app/app.py\n@@ -1 +1 @@\n-print('helo')\n+print('hello')\n"
    )
    assert (change.added, change.removed) == (1, 1)
    assert events[14].text == "Tests should pass now."
    assert (events[17].call_id, events[17].ok) == ("10", False)
    assert events[18].call_id == "12" and not [
        r for r in of(events, "tool_result") if r.call_id == "12"
    ]
    errors = of(events, "error")
    assert len(errors) == 1 and errors[0].message == "Agent got stuck in a loop"
    assert events[20].summary == "Fixed the typo; tests fail."
    assert (events[22].agent_id, events[22].call_id, events[22].description) == (
        "BrowsingAgent",
        "17",
        "Read the docs",
    )
    assert events[23].output == "The docs say X."
    assert [e.text for e in events[24:27]] == [
        "The typo is fixed.",
        "Wrapping up.",
        "Fixed the greeting.",
    ]
    assert events[-1].reason == "finish"
    assert parsed.dropped == {
        "agent_state_change": 2,
        "empty_observation": 1,
        "think_acknowledgement": 1,
    }
    assert all(e.session == parsed.session_id for e in events) and len(parsed.session_id) == 16
    lines = path.read_text().splitlines()
    assert events[2].source.pointer == "/1"
    assert (
        lines[events[2].source.line - 1] == "    {" and '"id": 1,' in lines[events[2].source.line]
    )


def test_older_files_without_metrics_take_usage_and_edits_from_the_responses(
    tmp_path: Path,
) -> None:
    first = response(
        "chatcmpl-a", "I'll create it.", prompt=3439, output=104, cached=0, written=3435
    )
    editor = "print(file_editor(**{'command': 'create', 'path': '/workspace/todo/index.html', 'file_text': '<html>\\n</html>\\n'}))"
    events_in = [
        {
            "id": 0,
            "timestamp": "2025-01-20T20:29:13",
            "source": "environment",
            "message": "",
            "observation": "agent_state_changed",
            "content": "",
            "extras": {"agent_state": "loading"},
        },
        {
            "id": 1,
            "timestamp": "2025-01-20T20:29:32",
            "source": "environment",
            "message": "Agent state changed to init",
            "action": "change_agent_state",
            "args": {"agent_state": "init", "thought": ""},
        },
        {
            "id": 2,
            "timestamp": "2025-01-20T20:29:32.1",
            "source": "environment",
            "message": "No observation",
            "cause": 1,
            "observation": "null",
            "content": "",
            "extras": {},
        },
        {
            "id": 9,
            "timestamp": "2025-01-20T20:29:48",
            "source": "agent",
            "message": "",
            "action": "edit",
            "tool_call_metadata": metadata("str_replace_editor", "toolu_9", first),
            "args": {
                "path": "/workspace/todo/index.html",
                "content": "",
                "start": 1,
                "end": -1,
                "thought": "Let's create the page:",
                "impl_source": "oh_aci",
                "translated_ipython_code": editor,
            },
        },
        {
            "id": 10,
            "timestamp": "2025-01-20T20:29:49",
            "source": "agent",
            "message": "I edited the file /workspace/todo/index.html.",
            "cause": 9,
            "observation": "edit",
            "tool_call_metadata": metadata("str_replace_editor", "toolu_9", first),
            "content": "--- /workspace/todo/index.html\n+++ /workspace/todo/index.html\n@@ -0,0 +1,2 @@\n+<html>\n+</html>\n",
            "extras": {
                "path": "/workspace/todo/index.html",
                "prev_exist": False,
                "old_content": None,
                "new_content": "<html>\n</html>\n",
                "impl_source": "oh_aci",
                "formatted_output_and_error": "File created successfully at: /workspace/todo/index.html",
            },
        },
        {
            "id": 11,
            "timestamp": "2025-01-20T20:29:50",
            "source": "agent",
            "message": "Writing file",
            "action": "write",
            "args": {
                "path": "/workspace/todo/a.txt",
                "content": "a\n",
                "start": 0,
                "end": -1,
                "thought": "",
            },
        },
        {
            "id": 12,
            "timestamp": "2025-01-20T20:29:51",
            "source": "agent",
            "message": "I wrote to the file",
            "cause": 11,
            "observation": "write",
            "content": "",
            "extras": {"path": "/workspace/todo/a.txt"},
        },
        {
            "id": 13,
            "timestamp": "2025-01-20T20:29:52",
            "source": "environment",
            "message": "",
            "observation": "agent_state_changed",
            "content": "",
            "extras": {"agent_state": "awaiting_user_input"},
        },
    ]
    parsed = OPENHANDS.parse(write(tmp_path / "t.json", events_in))
    events = parsed.events
    assert kinds(events) == [
        "session_start",
        "agent_message",
        "tool_call",
        "usage",
        "tool_result",
        "file_change",
        "tool_call",
        "tool_result",
        "file_change",
        "session_end",
    ]
    call = events[2]
    assert call.input == {
        "path": "/workspace/todo/index.html",
        "content": "",
        "start": 1,
        "end": -1,
        "command": "create",
        "file_text": "<html>\n</html>\n",
    }
    usage = events[3]
    assert (usage.input_tokens, usage.cache_write_tokens, usage.output_tokens, usage.cost_usd) == (
        4,
        3435,
        104,
        None,
    )
    created = events[5]
    assert (created.operation, created.anchored, created.added) == ("create", True, 2)
    assert created.diff.startswith(
        "--- /dev/null\n+++ b//workspace/todo/index.html\n@@ -0,0 +1,2 @@"
    )
    written = events[8]
    assert (written.path, written.operation, written.content, written.diff) == (
        "/workspace/todo/a.txt",
        "modify",
        "a\n",
        "",
    )
    assert events[-1].reason == "awaiting_user_input"
    assert parsed.dropped == {"agent_state_change": 3, "empty_observation": 1}


def test_history_pairs_of_evaluation_outputs(tmp_path: Path) -> None:
    history = [
        [
            {
                "id": 1,
                "timestamp": "2024-06-01T10:00:00",
                "source": "user",
                "message": "Solve it",
                "action": "message",
                "args": {"content": "Solve it", "images_urls": None, "wait_for_response": False},
            },
            {"message": "No observation", "observation": "null", "content": "", "extras": {}},
        ],
        [
            {
                "id": 2,
                "timestamp": "2024-06-01T10:00:05",
                "source": "agent",
                "message": "Running command: ls",
                "action": "run",
                "args": {"command": "ls", "thought": "First, list files."},
            },
            {
                "id": 3,
                "timestamp": "2024-06-01T10:00:06",
                "source": "agent",
                "message": "Command `ls` executed with exit code 0.",
                "cause": 2,
                "observation": "run",
                "content": "a.py",
                "extras": {"command_id": -1, "command": "ls", "exit_code": 0},
            },
        ],
    ]
    path = write(tmp_path / "output.json", {"instance_id": "x__y-1", "history": history})
    assert OPENHANDS.sniff(path.read_text())
    events = OPENHANDS.parse(path).events
    assert kinds(events) == [
        "session_start",
        "user_message",
        "agent_message",
        "tool_call",
        "tool_result",
        "session_end",
    ]
    assert events[1].source.pointer == "/history/0/0"
    assert (events[4].source.pointer, events[4].call_id, events[4].output) == (
        "/history/1/1",
        "2",
        "a.py",
    )


def test_an_evaluation_output_of_several_instances_is_refused_by_name(tmp_path: Path) -> None:
    def instance(number: int) -> str:
        history = [
            {
                "id": 1,
                "source": "user",
                "message": f"Task {number}",
                "action": "message",
                "args": {"content": f"Task {number}"},
            }
        ]
        return json.dumps({"instance_id": f"repo__issue-{number}", "history": history})

    path = tmp_path / "output.jsonl"
    path.write_text("".join(instance(n) + "\n" for n in range(7)), encoding="utf-8")
    assert detect(path) is OPENHANDS
    with pytest.raises(StetError) as raised:
        OPENHANDS.parse(path)
    message = str(raised.value)
    assert "7 OpenHands runs, one per line" in message
    assert "repo__issue-0, repo__issue-1, repo__issue-2, repo__issue-3, repo__issue-4" in message
    assert "and 2 more" in message

    # One instance on its own (as the message asks) imports.
    single = tmp_path / "one.json"
    single.write_text(instance(3) + "\n", encoding="utf-8")
    events = OPENHANDS.parse(single).events
    assert [e.text for e in of(events, "user_message")] == ["Task 3"]


def resolver_output(number: int, patch_bytes: int) -> dict[str, Any]:
    """What the issue resolver writes for one issue (a line of its output.jsonl): the issue,
    the instruction and the patch come before `history`."""
    return {
        "issue": {"owner": "acme", "repo": "app", "number": number, "title": "Crash", "body": "x"},
        "issue_type": "issue",
        "instruction": "Please fix the crash.",
        "base_commit": "0" * 40,
        "git_patch": "diff --git a/app.py b/app.py\n" + "+pass\n" * (patch_bytes // 6),
        "history": session(),
        "metrics": {"accumulated_cost": 0.25},
        "success": True,
        "comment_success": None,
        "result_explanation": "Fixed.",
        "error": None,
    }


def test_resolver_and_evaluation_outputs_are_recognised_past_the_sniffed_bytes(
    tmp_path: Path,
) -> None:
    plain = kinds(OPENHANDS.parse(write(tmp_path / "plain.json", session())).events)
    # A patch longer than the sniffed bytes pushes `history` out of them.
    for name, patch_bytes in (("small.json", 100), ("large.json", 2 * SNIFF_BYTES)):
        path = write(tmp_path / name, resolver_output(7, patch_bytes))
        assert detect(path) is OPENHANDS, name
        events = OPENHANDS.parse(path).events
        assert kinds(events) == plain
        assert all(e.source.pointer.startswith("/history/") for e in events[1:-1])
    line = tmp_path / "line.jsonl"
    line.write_text(json.dumps(resolver_output(7, 2 * SNIFF_BYTES)) + "\n", encoding="utf-8")
    assert detect(line) is OPENHANDS
    evaluation = {
        "instance_id": "acme__app-7",
        "test_result": {"git_patch": "+pass\n" * SNIFF_BYTES},
        "instruction": "Fix the crash.",
        "metadata": {"agent_class": "CodeActAgent"},
        "history": session(),
    }
    path = write(tmp_path / "evaluation.json", evaluation)
    assert detect(path) is OPENHANDS
    assert kinds(OPENHANDS.parse(path).events) == plain
    # Leading members alone claim nothing else: no `instance_id` with other members, nor a
    # resolver's members without an issue or pull request.
    assert not OPENHANDS.sniff(json.dumps({"instance_id": "x", "model_patch": "+x"}))
    assert not OPENHANDS.sniff(
        json.dumps({"instruction": "i", "base_commit": "c", "git_patch": ""})
    )
    # With `history` in the sniffed bytes, its events decide.
    assert not OPENHANDS.sniff(json.dumps({"instance_id": "x", "history": [{"role": "user"}]}))


def test_a_resolver_output_of_several_issues_is_refused_by_name(tmp_path: Path) -> None:
    path = tmp_path / "output.jsonl"
    lines = [json.dumps(resolver_output(number, 100)) for number in (7, 9)]
    review = resolver_output(12, 100)
    review["pr_review"] = review.pop("issue")
    lines.append(json.dumps(review))
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    with pytest.raises(StetError) as raised:
        OPENHANDS.parse(path)
    assert "3 OpenHands runs, one per line (issue #7, issue #9, pull request #12)" in str(
        raised.value
    )


def older_resolver_output(number: int) -> dict[str, Any]:
    """A line of the issue resolver's output.jsonl as it was written in late 2024: each
    event's fields flat beside `action` or `observation`, with no id, source, timestamp or
    cause, and the cost of each model request in `metrics.costs`."""
    replace = (
        "edit_file_by_replace(\n'/workspace/app.py',\n"
        'to_replace="""print(\'hi\')""",\nnew_content="""print(\'hello\')""",\n)'
    )
    return {
        "issue": {"owner": "acme", "repo": "app", "number": number, "title": "Greet", "body": "x"},
        "issue_type": "issue",
        "instruction": "Please fix the greeting.",
        "base_commit": "",
        "git_patch": "diff --git a/app.py b/app.py\n",
        "history": [
            {
                "content": "Please fix the greeting.",
                "images_urls": None,
                "wait_for_response": False,
                "action": "message",
                "security_risk": None,
            },
            {
                "command": "cat app.py",
                "thought": "Let me look at the file.",
                "keep_prompt": True,
                "action": "run",
                "is_confirmed": "confirmed",
                "security_risk": None,
            },
            {
                "content": "print('hi')\r\n",
                "command_id": -1,
                "command": "cat app.py",
                "exit_code": 0,
                "observation": "run",
            },
            {
                "code": replace.replace("hello", "hey"),
                "thought": "Replace the greeting.",
                "action": "run_ipython",
                "is_confirmed": "confirmed",
                "security_risk": None,
                "kernel_init_code": "from agentskills import *",
            },
            {
                "content": "[No exact match found in /workspace/app.py for\n```\nprint('hi')\n```\n]",
                "code": replace.replace("hello", "hey"),
                "observation": "run_ipython",
            },
            {
                "code": replace,
                "thought": "Try again.",
                "action": "run_ipython",
                "is_confirmed": "confirmed",
                "security_risk": None,
                "kernel_init_code": "from agentskills import *",
            },
            {
                "content": "[File: /workspace/app.py (1 lines total after edit)]\n1|print('hello')",
                "code": replace,
                "observation": "run_ipython",
            },
            {
                "command": "false",
                "thought": "",
                "keep_prompt": True,
                "action": "run",
                "is_confirmed": "confirmed",
                "security_risk": None,
            },
            {
                "content": "",
                "command_id": -1,
                "command": "false",
                "exit_code": 1,
                "observation": "run",
            },
            {"target": "moon", "action": "teleport"},
            {"outputs": {}, "thought": "The greeting is fixed.", "action": "finish"},
        ],
        "metrics": {"accumulated_cost": 0.8, "costs": [0.1, 0.2, 0.15, 0.15, 0.1, 0.1]},
        "success": True,
        "comment_success": None,
        "result_explanation": "Fixed.",
        "error": None,
    }


def test_the_older_flat_form_of_resolver_outputs(tmp_path: Path) -> None:
    path = tmp_path / "line.jsonl"
    path.write_text(json.dumps(older_resolver_output(5)) + "\n", encoding="utf-8")
    assert detect(path) is OPENHANDS
    parsed = OPENHANDS.parse(path)
    events = parsed.events
    # One cost a request: each usage follows the action the request chose.
    assert kinds(events) == [
        "session_start",
        "user_message",
        "agent_message",
        "tool_call",
        "usage",
        "tool_result",
        "agent_message",
        "tool_call",
        "usage",
        "tool_result",
        "agent_message",
        "tool_call",
        "usage",
        "tool_result",
        "file_change",
        "tool_call",
        "usage",
        "tool_result",
        "raw",
        "usage",
        "agent_message",
        "usage",
        "session_end",
    ]
    assert events[1].text == "Please fix the greeting."
    calls, results = of(events, "tool_call"), of(events, "tool_result")
    # Each action gets an id made of its pointer; each observation answers the action before.
    assert [c.call_id for c in calls] == ["history/1", "history/3", "history/5", "history/7"]
    assert [r.call_id for r in results] == [c.call_id for c in calls]
    assert [r.source.pointer for r in results] == [f"/history/{i}" for i in (2, 4, 6, 8)]
    assert calls[0].name == "run" and calls[0].input["command"] == "cat app.py"
    assert "action" not in calls[0].input and "thought" not in calls[0].input
    assert [r.ok for r in results] == [True, True, True, False]
    # Only the edit whose output shows it was made is a file change.
    (change,) = of(events, "file_change")
    assert (change.path, change.operation, change.call_id) == (
        "/workspace/app.py",
        "modify",
        "history/5",
    )
    assert "\n-print('hi')\n" in change.diff and "\n+print('hello')\n" in change.diff
    assert not change.anchored
    # What is not understood is kept as it was read.
    raw = of(events, "raw")[0]
    assert raw.record == {"target": "moon", "action": "teleport"}
    assert raw.reason == "unknown action 'teleport'"
    usage = of(events, "usage")
    assert [u.cost_usd for u in usage] == [0.1, 0.2, 0.15, 0.15, 0.1, 0.1]
    assert [u.source.pointer for u in usage] == [f"/metrics/costs/{i}" for i in range(6)]
    # Costs that do not match the actions one to one are listed after them.
    output = older_resolver_output(5)
    output["metrics"] = {"accumulated_cost": 0.3, "costs": [0.1, 0.2]}
    path.write_text(json.dumps(output) + "\n", encoding="utf-8")
    events = OPENHANDS.parse(path).events
    assert kinds(events)[-4:] == ["agent_message", "usage", "usage", "session_end"]
    output["metrics"] = {"accumulated_cost": 0.3}
    path.write_text(json.dumps(output) + "\n", encoding="utf-8")
    (usage,) = of(OPENHANDS.parse(path).events, "usage")
    assert (usage.cost_usd, usage.source.pointer) == (0.3, "/metrics/accumulated_cost")
    assert events[-1].reason == "finish"
    assert parsed.problems == [] and not parsed.dropped

    # Several issues, one a line, are refused by name as the current form is.
    several = tmp_path / "output.jsonl"
    lines = [json.dumps(older_resolver_output(n)) for n in (5, 6)]
    several.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    with pytest.raises(StetError, match=r"2 OpenHands runs, one per line \(issue #5, issue #6\)"):
        OPENHANDS.parse(several)


LICENSE_PATCH = (
    "diff --git a/LICENSE b/LICENSE\n"
    "new file mode 100644\n"
    "index 0000000..dbf96a3\n"
    "--- /dev/null\n"
    "+++ b/LICENSE\n"
    "@@ -0,0 +1,2 @@\n"
    "+MIT License\n"
    "+Copyright (c) 2024\n"
)
APP_PATCH = (
    "diff --git a/app.py b/app.py\n"
    "index 1b2c3d4..5e6f7a8 100644\n"
    "--- a/app.py\n"
    "+++ b/app.py\n"
    "@@ -1 +1 @@\n"
    "-print('hi')\n"
    "+print('hello')\n"
)


@pytest.mark.parametrize("line_end", ["\n", "\r\n"])
def test_the_run_patch_adds_the_files_no_event_changed(tmp_path: Path, line_end: str) -> None:
    """The resolver's `git_patch` (and an evaluation's `test_result.git_patch`) holds what
    the run changed: a file written by a command has no file change among the events, so it
    gets one from the patch, anchored, after the events; a file an edit changed keeps that
    edit's change alone. The resolver wrote some patches with CRLF line ends throughout."""
    output = older_resolver_output(5)
    output["git_patch"] = (LICENSE_PATCH + APP_PATCH).replace("\n", line_end)
    path = write(tmp_path / "output.json", output)
    events = OPENHANDS.parse(path).events
    assert kinds(events)[-3:] == ["usage", "file_change", "session_end"]
    edit, license_change = of(events, "file_change")
    assert (edit.path, edit.call_id) == ("/workspace/app.py", "history/5")
    assert (license_change.path, license_change.operation) == ("LICENSE", "create")
    assert license_change.call_id is None and license_change.anchored
    assert (license_change.added, license_change.removed) == (2, 0)
    assert license_change.diff == LICENSE_PATCH[LICENSE_PATCH.index("--- ") :]
    assert license_change.source.pointer == "/git_patch"
    lines = path.read_text(encoding="utf-8").split("\n")
    (line,) = [n for n, text in enumerate(lines, 1) if text.startswith('    "git_patch": ')]
    assert license_change.source.line == line

    evaluation = {
        "instance_id": "acme__app-5",
        "test_result": {"git_patch": APP_PATCH.replace("app.py", "lib/util.py")},
        "instruction": "Please fix the greeting.",
        "metadata": {},
        "history": output["history"],
    }
    events = OPENHANDS.parse(write(tmp_path / "evaluation.json", evaluation)).events
    changes = of(events, "file_change")
    assert [(c.path, c.operation, c.added, c.removed) for c in changes] == [
        ("/workspace/app.py", "modify", 1, 1),
        ("lib/util.py", "modify", 1, 1),
    ]
    assert changes[1].source.pointer == "/test_result/git_patch"
    # An event's container path matches the longest patch path it ends with: a new `app.py`
    # at the root, which a command wrote, is not the `pkg/app.py` the edit changed.
    nested = older_resolver_output(5)
    for item in nested["history"]:
        for field in ("code", "content"):
            if isinstance(item.get(field), str):
                item[field] = item[field].replace("/workspace/app.py", "/workspace/pkg/app.py")
    root_app = APP_PATCH.replace("index 1b2c3d4..5e6f7a8 100644", "new file mode 100644")
    root_app = root_app.replace("--- a/app.py", "--- /dev/null").replace(
        "@@ -1 +1 @@", "@@ -0,0 +1 @@"
    )
    root_app = root_app.replace("-print('hi')\n", "")
    nested["git_patch"] = root_app + APP_PATCH.replace("app.py", "pkg/app.py")
    events = OPENHANDS.parse(write(tmp_path / "nested.json", nested)).events
    changes = of(events, "file_change")
    assert [(c.path, c.operation, c.call_id) for c in changes] == [
        ("/workspace/pkg/app.py", "modify", "history/5"),
        ("app.py", "create", None),
    ]
    for empty in ("", "\n"):
        output["git_patch"] = empty
        events = OPENHANDS.parse(write(tmp_path / "output.json", output)).events
        assert len(of(events, "file_change")) == 1


def test_the_older_history_pairs_and_flat_lists_without_ids(tmp_path: Path) -> None:
    """Evaluation outputs of mid-2024: `[action, observation]` pairs, each half holding
    `action`/`args` or `observation`/`content`/`extras` and a `message`, without ids."""
    history = [
        [
            {
                "action": "message",
                "args": {"content": "Add a README.", "wait_for_response": False},
                "message": "Add a README.",
            },
            {"observation": "null", "content": "", "extras": {}, "message": "No observation"},
        ],
        [
            {
                "action": "write",
                "args": {"path": "README.md", "content": "# App\n", "start": 0, "end": -1},
                "message": "Writing file README.md",
            },
            {
                "observation": "write",
                "content": "",
                "extras": {"path": "README.md"},
                "message": "I wrote to the file README.md.",
            },
        ],
        [
            {"action": "run", "args": {"command": "ls", "thought": ""}, "message": "Running ls"},
            {
                "observation": "error",
                "content": "sandbox died",
                "extras": {},
                "message": "sandbox died",
            },
        ],
        [
            {
                "action": "message",
                "args": {"content": "Done: README added.", "wait_for_response": True},
                "message": "Done: README added.",
            },
            {"observation": "null", "content": "", "extras": {}, "message": "No observation"},
        ],
    ]
    output = {
        "instance_id": "acme__app-3",
        "metadata": {"agent_class": "CodeActAgent", "model_name": "gpt-4o-2024-05-13"},
        "history": history,
        "error": None,
    }
    path = write(tmp_path / "output.json", output)
    assert detect(path) is OPENHANDS
    parsed = OPENHANDS.parse(path)
    events = parsed.events
    assert kinds(events) == [
        "session_start",
        "user_message",
        "tool_call",
        "tool_result",
        "file_change",
        "tool_call",
        "tool_result",
        "agent_message",
        "session_end",
    ]
    assert events[0].model == "gpt-4o-2024-05-13"
    # A message that waits for a response is the agent's; the others are the user's.
    assert (events[1].text, events[7].text) == ("Add a README.", "Done: README added.")
    write_call, write_result, change = events[2:5]
    assert write_call.call_id == write_result.call_id == change.call_id == "history/1/0"
    assert (change.path, change.operation, change.content) == ("README.md", "modify", "# App\n")
    assert (events[6].call_id, events[6].ok, events[6].output) == (
        "history/2/0",
        False,
        "sandbox died",
    )
    assert parsed.dropped["empty_observation"] == 2

    # A bare list of such events, with `source` but no ids, pairs each observation with the
    # action before it.
    flat = [
        {"source": "agent", "action": "run", "args": {"command": "git status", "thought": ""}},
        {
            "source": "agent",
            "observation": "run",
            "content": "fatal: not a git repository",
            "extras": {"command_id": -1, "command": "git status", "exit_code": 128},
        },
        {"source": "agent", "action": "reject", "args": {"reason": "No repository."}},
    ]
    events = OPENHANDS.parse(write(tmp_path / "flat.json", flat)).events
    assert kinds(events) == ["session_start", "tool_call", "tool_result", "session_end"]
    assert (events[2].call_id, events[2].ok) == ("0", False)
    assert events[-1].reason == "reject"


def test_several_runs_of_another_benchmark_are_refused(tmp_path: Path) -> None:
    def run(number: int) -> str:
        event = {
            "id": 0,
            "timestamp": "2024-05-26T07:28:56",
            "source": "user",
            "message": f"Question {number}",
            "action": "message",
            "args": {"content": f"Question {number}", "wait_for_response": False},
        }
        return json.dumps({"question_id": number, "text": "x", "history": [[event]]})

    path = tmp_path / "output.jsonl"
    path.write_text("".join(run(n) + "\n" for n in (1, 2, 3)), encoding="utf-8")
    assert detect(path) is OPENHANDS
    with pytest.raises(StetError, match=r"3 OpenHands runs, one per line \(question_id 1, "):
        OPENHANDS.parse(path)


def test_sniffing_the_older_forms() -> None:
    assert OPENHANDS.sniff(json.dumps([{"command": "ls", "thought": "", "action": "run"}]))
    assert OPENHANDS.sniff(json.dumps([{"content": "a", "observation": "run", "exit_code": 0}]))
    pair = [{"action": "message", "args": {"content": "x"}}, {"observation": "null"}]
    assert OPENHANDS.sniff(json.dumps({"history": [pair]}))
    # The resolver's first event cut off by the sniffed bytes: the members before decide.
    head = json.dumps(older_resolver_output(5))
    cut = head.index('"history"') + len('"history": [{"content": "Please')
    assert OPENHANDS.sniff(head[:cut])
    # A step of another harness holds both an action and its observation.
    assert not OPENHANDS.sniff(json.dumps([{"action": "run", "observation": "ok"}]))
    assert not OPENHANDS.sniff(json.dumps([{"action": "ls -la", "thought": "look"}]))
    assert not OPENHANDS.sniff(json.dumps([{"observation": "done", "content": "x"}]))


def test_metrics_whose_cost_stays_zero_report_no_cost(tmp_path: Path) -> None:
    """OpenHands adds a request's cost only when it can price the model: a proxy's model keeps
    `accumulated_cost` at 0.0 while its tokens grow, and what those requests cost is unknown
    (estimated from list prices where there are any), not a reported $0."""

    def run(number: int, cost: float, prompt: int, output: int) -> dict[str, Any]:
        return {
            "id": number,
            "timestamp": f"2025-06-01T10:00:0{number}",
            "source": "agent",
            "message": "Running command: ls",
            "action": "run",
            "llm_metrics": metrics(cost, prompt, output),
            "args": {"command": "ls", "thought": ""},
        }

    events = [
        {"id": 1, "source": "user", "action": "message", "args": {"content": "list"}},
        run(2, 0.0, 1000, 50),
        run(3, 0.0, 2100, 80),
        run(4, 0.02, 3300, 90),
    ]
    parsed = OPENHANDS.parse(write(tmp_path / "trajectory.json", events))
    assert [(u.input_tokens, u.cost_usd, u.cost_basis) for u in of(parsed.events, "usage")] == [
        (1000, None, None),
        (1100, None, None),
        (1200, 0.02, "reported"),
    ]


def test_images_given_as_data_are_named_and_counted_not_stored(tmp_path: Path) -> None:
    """An image the web UI uploads with a message is a `data:` URL in `image_urls`: the
    message names it by its media type and the bytes are counted in `inline_data`; a
    browser observation's screenshots, which the output leaves out, are counted too."""
    image = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB"
    screenshot = "data:image/png;base64,U0NSRUVOU0hPVA=="
    browser = metadata("browser", "t1", response("r1"))
    events = [
        {
            "id": 0,
            "timestamp": "2025-06-01T10:00:00",
            "source": "user",
            "message": "Look",
            "action": "message",
            "args": {
                "content": "Look at this",
                "image_urls": [image, "https://x/y.png"],
                "wait_for_response": False,
            },
        },
        {
            "id": 1,
            "timestamp": "2025-06-01T10:00:01",
            "source": "agent",
            "message": "Browsing",
            "action": "browse",
            "tool_call_metadata": browser,
            "args": {"url": "https://x", "thought": ""},
        },
        {
            "id": 2,
            "timestamp": "2025-06-01T10:00:02",
            "source": "environment",
            "message": "Visited https://x",
            "observation": "browse",
            "content": "the page",
            "cause": 1,
            "tool_call_metadata": browser,
            "extras": {"url": "https://x", "screenshot": screenshot, "set_of_marks": screenshot},
        },
    ]
    parsed = OPENHANDS.parse(write(tmp_path / "t.json", events))
    (said,) = of(parsed.events, "user_message")
    assert said.text == "Look at this\n[attachment: image/png]\n[attachment: https://x/y.png]"
    assert of(parsed.events, "tool_result")[0].output == "the page"
    assert parsed.dropped["inline_data"] == 3
    assert not any("base64" in event_json(e) for e in parsed.events)


def test_odd_input(tmp_path: Path) -> None:
    records = [
        "text",
        {"id": 1, "source": "agent", "message": "?"},
        {"id": 2, "source": "agent", "message": "", "action": "teleport", "args": {}},
        {
            "id": 3,
            "source": "agent",
            "message": "",
            "observation": "browse",
            "content": "<html>",
            "cause": 99,
            "extras": {},
        },
        {
            "id": 4,
            "source": "environment",
            "message": "",
            "action": "message",
            "args": {"content": "from env"},
        },
    ]
    events = OPENHANDS.parse(write(tmp_path / "t.json", records)).events
    assert [e.reason for e in of(events, "raw")] == [
        "event is not a JSON object",
        "event is neither an action nor an observation",
        "unknown action 'teleport'",
        "observation without a matching action",
        "message from 'environment'",
    ]
    assert of(events, "raw")[0].record == "text"


def recall(number: int, **extras: str) -> dict[str, Any]:
    return {
        "id": number,
        "timestamp": "2025-06-01T10:00:01.5",
        "source": "environment",
        "message": "Added workspace context",
        "cause": number - 1,
        "observation": "recall",
        "content": "Added workspace context",
        "extras": {"recall_type": "workspace_context", **extras},
    }


@pytest.mark.parametrize(
    ("extras", "cwd"),
    [
        # As OpenHands writes it: the folder the repository was cloned into, in the workspace.
        ({"working_dir": "/workspace", "repo_directory": "app"}, "/workspace/app"),
        ({"working_dir": "/workspace", "repo_directory": "/srv/app"}, "/srv/app"),
        ({"working_dir": "/workspace", "repo_directory": ""}, "/workspace"),
        # No workspace to place a folder name in: the commands' folder tells.
        ({"repo_directory": "app"}, "/workspace/app/src"),
    ],
)
def test_the_recalled_repository_folder_is_in_the_workspace(
    tmp_path: Path, extras: dict[str, str], cwd: str
) -> None:
    records = [
        {
            "id": 1,
            "timestamp": "2025-06-01T10:00:01",
            "source": "user",
            "message": "Fix it",
            "action": "message",
            "args": {"content": "Fix it"},
        },
        recall(2, repo_name="acme/app", repo_branch="main", **extras),
        {
            "id": 3,
            "source": "agent",
            "message": "Running command: ls",
            "action": "run",
            "args": {"command": "ls"},
        },
        {
            "id": 4,
            "source": "agent",
            "message": "",
            "cause": 3,
            "observation": "run",
            "content": "",
            "extras": {"metadata": {"exit_code": 0, "working_dir": "/workspace/app/src"}},
        },
    ]
    start = OPENHANDS.parse(write(tmp_path / "t.json", records)).events[0]
    assert (start.cwd, start.branch) == (cwd, "main")


def sandbox_edit(folder: str, number: int) -> list[dict[str, Any]]:
    """A command run in the sandbox's workspace, and an edit of line 5 of `src/app.py` of
    the repository at `folder` in it."""
    path = f"{folder}/src/app.py"
    return [
        {
            "id": number,
            "source": "agent",
            "message": f"Running command: grep -n 'line 5' {path}",
            "action": "run",
            "args": {"command": f"grep -n 'line 5' {path}"},
        },
        {
            "id": number + 1,
            "source": "agent",
            "message": "",
            "cause": number,
            "observation": "run",
            "content": f"{path}:5:line 5",
            "extras": {"metadata": {"exit_code": 0, "working_dir": "/workspace"}},
        },
        {
            "id": number + 2,
            "source": "agent",
            "message": f"I am editing {path}.",
            "action": "edit",
            "args": {
                "path": path,
                "command": "str_replace",
                "old_str": "line 5\n",
                "new_str": "line five\n",
            },
        },
        {
            "id": number + 3,
            "source": "agent",
            "message": f"I edited the file {path}.",
            "cause": number + 2,
            "observation": "edit",
            "content": f"The file {path} has been edited.",
            "extras": {
                "path": path,
                "diff": f"--- {path}\n+++ {path}\n@@ -5 +5 @@\n-line 5\n+line five\n",
            },
        },
    ]


@NO_LOCAL_WORKSPACE
@pytest.mark.parametrize("form", ["recalled", "patched", "unnamed", "moved"])
def test_a_sandboxs_workspace_stands_for_the_repository(
    stet: Any, root: Path, tmp_path: Path, form: str
) -> None:
    """OpenHands works in its container's `/workspace`, where the repository is cloned into
    a folder of its own (the recall names it) or was put (the run's patch is of it): the
    paths the agent wrote there are the repository's once imported."""
    user = {
        "id": 1,
        "source": "user",
        "message": "Change line 5",
        "action": "message",
        "args": {"content": "Change line 5"},
    }
    if form == "recalled":
        extras = {"working_dir": "/workspace", "repo_directory": "repo"}
        document: Any = [user, recall(2, **extras), *sandbox_edit("/workspace/repo", 3)]
    elif form == "unnamed":
        # No folder recalled, no command's folder reported: the workspace the edit was in.
        document = [user, *sandbox_edit("/workspace", 3)]
        document[2]["extras"]["metadata"].pop("working_dir")
    elif form == "moved":
        # The first command ran in a folder inside the workspace: the workspace is the root.
        document = [user, *sandbox_edit("/workspace", 3)]
        document[2]["extras"]["metadata"]["working_dir"] = "/workspace/src"
    else:
        patch = (
            "diff --git a/src/app.py b/src/app.py\nindex 1b2c3d4..5e6f7a8 100644\n"
            "--- a/src/app.py\n+++ b/src/app.py\n@@ -5 +5 @@\n-line 5\n+line five\n"
        )
        document = {
            "instance_id": "acme__repo-5",
            "instruction": "Change line 5",
            "metadata": {},
            "history": [user, *sandbox_edit("/workspace/acme__repo", 3)],
            "test_result": {"git_patch": patch},
        }
    path = write(tmp_path / "trajectory.json", document)
    code, out, err = stet("trajectory", "import", str(path), "--json", "-C", str(root))
    assert (code, err) == (0, "")
    result = json.loads(out)
    assert result["outside_repository"] is False
    folder = root / result["folder"]
    lines = (folder / "events.jsonl").read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    [call] = [r for r in records if r["kind"] == "tool_call" and r["name"] == "run"]
    assert call["input"]["command"] == "grep -n 'line 5' src/app.py"
    [change] = [r for r in records if r["kind"] == "file_change"]
    assert (change["path"], change["operation"], change["call_id"]) == ("src/app.py", "modify", "5")
    assert change["diff"].startswith("--- a/src/app.py\n+++ b/src/app.py\n@@ -5 +5 @@")
    meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    assert meta["files"] == [{"path": "src/app.py", "added": 1, "removed": 1}]
    narration = (folder / "narration.md").read_text(encoding="utf-8")
    assert "/workspace/" not in narration and "`src/app.py`" in narration


def test_interrupting_states_and_redacted_reasoning(tmp_path: Path) -> None:
    thinking = response("chatcmpl-t", "")
    thinking["choices"][0]["message"]["thinking_blocks"] = [
        {"type": "thinking", "thinking": "Check the file first.", "signature": "sig"},
        {"type": "redacted_thinking", "data": "opaque"},
    ]
    records = [
        {
            "id": 1,
            "timestamp": "t1",
            "source": "agent",
            "message": "",
            "action": "run",
            "tool_call_metadata": metadata("execute_bash", "c", thinking),
            "args": {"command": "ls"},
        },
        {
            "id": 2,
            "timestamp": "t2",
            "source": "environment",
            "message": "",
            "observation": "agent_state_changed",
            "content": "",
            "extras": {"agent_state": "stopped"},
        },
    ]
    parsed = OPENHANDS.parse(write(tmp_path / "t.json", records))
    assert of(parsed.events, "reasoning")[0].text == "Check the file first."
    assert parsed.dropped["opaque_reasoning"] == 1
    error = of(parsed.events, "error")[0]
    assert (error.message, error.interrupt) == ("agent stopped", True)
    assert parsed.events[-1].reason == "stopped"


def test_truncated_file_2mb_record_and_invalid_utf8(tmp_path: Path) -> None:
    big = "y" * (2 * 1024 * 1024)
    records = [
        {
            "id": 1,
            "timestamp": "t",
            "source": "user",
            "message": "caf\u00e9",
            "action": "message",
            "args": {"content": "caf\u00e9 " + big},
        },
        {
            "id": 2,
            "timestamp": "t",
            "source": "agent",
            "message": "",
            "action": "run",
            "args": {"command": "ls"},
        },
    ]
    text = json.dumps(records, indent=4, ensure_ascii=False)
    cut = text.index('"command": "ls"')
    path = tmp_path / "t.json"
    path.write_bytes(text[:cut].encode().replace("caf\u00e9 ".encode(), b"caf\xfe "))
    parsed = OPENHANDS.parse(path)
    assert kinds(parsed.events) == ["session_start", "user_message", "session_end"]
    assert parsed.events[1].text == "caf\ufffd " + big
    replaced = text[: text.index('"content": "caf')].count("\n") + 1
    assert [(p.line, p.message[:22]) for p in parsed.problems] == [
        (replaced, "bytes that are not UTF"),
        (text[:cut].count("\n") + 1, "not JSON: Expecting pr"),
    ]


def test_nothing_readable_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text('{"instance_id": "x"}', encoding="utf-8")
    with pytest.raises(StetError):
        OPENHANDS.parse(path)


def test_sniff_claims_only_openhands(tmp_path: Path) -> None:
    assert OPENHANDS.sniff(json.dumps(session()[:2], indent=4))
    # A system prompt longer than the sniffed bytes: the leading keys decide.
    assert OPENHANDS.sniff(
        '[\n    {\n        "id": 0,\n        "timestamp": "2025", "source": "agent", "message": "You are'
        + "x" * 100
    )
    assert not OPENHANDS.sniff(
        '[{"sessionId": "s", "messageId": 0, "type": "user", "message": "hi"}]'
    )
    assert not OPENHANDS.sniff('[{"role": "user", "parts": [{"text": "\\"action\\": \\"run\\""}]}]')
    assert not OPENHANDS.sniff(
        '{"environment": "swe_main", "trajectory": [{"action": "ls", "observation": "a"}], "history": [{"role": "system", "content": "x", "agent": "main"}]}'
    )
    assert not OPENHANDS.sniff('{"schema_version": "ATIF-v1.2", "steps": []}')
    path = write(tmp_path / "trajectory.txt", session())
    assert detect(path).name == "openhands"
    assert importer("openhands").label == "OpenHands event list JSON"


def test_events_serialise(tmp_path: Path) -> None:
    for event in OPENHANDS.parse(write(tmp_path / "t.json", session())).events:
        json.loads(event_json(event))


def test_a_file_an_edit_and_then_a_command_changed_gets_the_commands_hunks(
    tmp_path: Path,
) -> None:
    """The edit's change explains the patch's first hunk of app.py; a second hunk (a line a
    command appended) is no event's: it comes from the patch, named as the edit names it."""
    output = older_resolver_output(5)
    appended = "@@ -9,2 +9,3 @@\n def main():\n     greet()\n+    print('done')\n"
    output["git_patch"] = APP_PATCH + appended
    events = OPENHANDS.parse(write(tmp_path / "output.json", output)).events
    edit, rest = of(events, "file_change")
    assert (edit.path, edit.call_id) == ("/workspace/app.py", "history/5")
    assert (rest.path, rest.call_id, rest.anchored) == ("/workspace/app.py", None, True)
    assert rest.diff == "--- a/app.py\n+++ b/app.py\n" + appended
    assert (rest.added, rest.removed) == (1, 0)
    # A patch whose every hunk the edit explains adds nothing.
    output["git_patch"] = APP_PATCH
    events = OPENHANDS.parse(write(tmp_path / "output.json", output)).events
    assert len(of(events, "file_change")) == 1


def test_an_edit_the_file_editor_refused_changes_no_file(tmp_path: Path) -> None:
    """The file editor answers a str_replace whose old_str it could not find with an edit
    observation whose content starts with ERROR: (its diff empty): a failed call, no change."""

    def edit(number: int, old: str, new: str) -> dict[str, Any]:
        return {
            "id": number,
            "timestamp": f"2025-03-02T09:00:0{number}",
            "source": "agent",
            "message": "",
            "action": "edit",
            "tool_call_metadata": metadata(
                "str_replace_editor", f"toolu_{number}", response(f"chatcmpl-{number}")
            ),
            "args": {
                "path": "/workspace/lib/calc.py",
                "command": "str_replace",
                "old_str": old,
                "new_str": new,
                "impl_source": "oh_aci",
            },
        }

    def answer(number: int, content: str, diff: str) -> dict[str, Any]:
        return {
            "id": number + 1,
            "timestamp": f"2025-03-02T09:00:0{number}.5",
            "source": "agent",
            "message": "I edited the file /workspace/lib/calc.py.",
            "cause": number,
            "observation": "edit",
            "content": content,
            "extras": {"path": "/workspace/lib/calc.py", "impl_source": "oh_aci", "diff": diff},
        }

    refusal = "ERROR:\nNo replacement was performed, old_str `total =+ 1` did not appear verbatim."
    fixed = (
        "--- /workspace/lib/calc.py\n+++ /workspace/lib/calc.py\n"
        "@@ -3 +3 @@\n-total =- 1\n+total -= 1\n"
    )
    history = [
        {
            "id": 0,
            "timestamp": "2025-03-02T09:00:00",
            "source": "user",
            "message": "Fix the counters in calc.py",
            "action": "message",
            "args": {"content": "Fix the counters in calc.py", "wait_for_response": False},
        },
        edit(1, "total =+ 1", "total += 1"),
        answer(1, refusal, ""),
        edit(3, "total =- 1", "total -= 1"),
        answer(3, "The file /workspace/lib/calc.py has been edited.", fixed),
    ]
    events = OPENHANDS.parse(write(tmp_path / "trajectory.json", history)).events
    assert [(r.call_id, r.ok) for r in of(events, "tool_result")] == [("1", False), ("3", True)]
    [change] = of(events, "file_change")
    assert (change.call_id, change.added, change.removed) == ("3", 1, 1)


def run_pair(
    number: int, command: str, exit_code: int, is_input: bool = False
) -> list[dict[str, Any]]:
    """A `run` action (id `number`) and its observation."""
    call = metadata("execute_bash", f"toolu_{number}", response(f"chatcmpl-{number}"))
    return [
        {
            "id": number,
            "timestamp": f"2025-04-01T08:00:0{number}",
            "source": "agent",
            "message": f"Running command: {command}",
            "action": "run",
            "tool_call_metadata": call,
            "args": {"command": command, "is_input": is_input, "blocking": False},
        },
        {
            "id": number + 1,
            "timestamp": f"2025-04-01T08:00:0{number}.5",
            "source": "agent",
            "message": f"Command `{command}` executed with exit code {exit_code}.",
            "cause": number,
            "observation": "run",
            "tool_call_metadata": call,
            "content": "",
            "extras": {
                "command": command,
                "metadata": {"exit_code": exit_code, "working_dir": "/workspace/app"},
            },
        },
    ]


MOVES_HISTORY = [
    {
        "id": 0,
        "timestamp": "2025-04-01T08:00:00",
        "source": "user",
        "message": "Rename util.py to helpers.py and game.py to main.py",
        "action": "message",
        "args": {"content": "Rename util.py to helpers.py and game.py to main.py"},
    },
    *run_pair(1, "git mv util.py helpers.py && mv -v game.py /workspace/app/main.py", 0),
    *run_pair(3, "mv notes.txt notes.md", 1),
    *run_pair(5, "mv a.py b.py", 0, is_input=True),
]
GAME_RENAME = (
    "diff --git a/game.py b/main.py\n"
    "similarity index 80%\n"
    "rename from game.py\n"
    "rename to main.py\n"
    "index 1b2c3d4..5e6f7a8 100644\n"
    "--- a/game.py\n"
    "+++ b/main.py\n"
    "@@ -1 +1 @@\n"
    "-run()\n"
    "+run(fast=True)\n"
)


def test_a_command_that_moved_files_renames_them_and_the_patch_does_not_again(
    tmp_path: Path,
) -> None:
    """A run whose exit code is 0 and whose command line moves files (`shell_moves`) is a
    rename for each, from the observation's working folder; a failed one, or input to a
    running command, moves nothing. An output's patch then adds no second move: its rename
    of a moved file gives only the hunks no event explains, as a change where the file went,
    and so do its deletion and creation of the two paths (a move git did not pair)."""
    events = OPENHANDS.parse(write(tmp_path / "trajectory.json", MOVES_HISTORY)).events
    moves = [(c.old_path, c.path, c.operation, c.call_id) for c in of(events, "file_change")]
    assert moves == [
        ("/workspace/app/util.py", "/workspace/app/helpers.py", "rename", "1"),
        ("/workspace/app/game.py", "/workspace/app/main.py", "rename", "1"),
    ]
    assert all(c.anchored and c.source.pointer == "/2" for c in of(events, "file_change"))

    util_rename = (
        "diff --git a/util.py b/helpers.py\n"
        "similarity index 100%\nrename from util.py\nrename to helpers.py\n"
    )
    output = {
        "instruction": "Please rename the modules.",
        "base_commit": "0" * 40,
        "git_patch": util_rename + GAME_RENAME + APP_PATCH,
        "history": MOVES_HISTORY,
    }
    events = OPENHANDS.parse(write(tmp_path / "output.json", output)).events
    changes = [(c.path, c.operation, c.old_path, c.call_id) for c in of(events, "file_change")]
    assert changes == [
        ("/workspace/app/helpers.py", "rename", "/workspace/app/util.py", "1"),
        ("/workspace/app/main.py", "rename", "/workspace/app/game.py", "1"),
        ("/workspace/app/main.py", "modify", None, None),
        ("app.py", "modify", None, None),
    ]
    rest = of(events, "file_change")[2]
    assert rest.diff == GAME_RENAME[GAME_RENAME.index("--- ") :]
    assert (rest.added, rest.removed) == (1, 1)

    unpaired = (
        "diff --git a/game.py b/game.py\ndeleted file mode 100644\nindex 1b2c3d4..0000000\n"
        "--- a/game.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-run()\n"
        "diff --git a/main.py b/main.py\nnew file mode 100644\nindex 0000000..5e6f7a8\n"
        "--- /dev/null\n+++ b/main.py\n@@ -0,0 +1 @@\n+run(fast=True)\n"
    )
    output["git_patch"] = unpaired
    events = OPENHANDS.parse(write(tmp_path / "output.json", output)).events
    changes = [(c.path, c.operation, c.old_path) for c in of(events, "file_change")]
    assert changes == [
        ("/workspace/app/helpers.py", "rename", "/workspace/app/util.py"),
        ("/workspace/app/main.py", "rename", "/workspace/app/game.py"),
        ("/workspace/app/main.py", "modify", None),
    ]
    assert of(events, "file_change")[2].diff == rest.diff


def test_a_file_written_by_a_command_then_moved_keeps_its_lines(tmp_path: Path) -> None:
    """A file git did not track, written by a command and then moved: the patch creates only
    where it went (no deletion of where it was), and its lines are that file's change."""
    created = (
        "diff --git a/main.py b/main.py\nnew file mode 100644\nindex 0000000..5e6f7a8\n"
        "--- /dev/null\n+++ b/main.py\n@@ -0,0 +1,2 @@\n+run()\n+stop()\n"
    )
    output = {
        "instruction": "Please rename the modules.",
        "base_commit": "0" * 40,
        "git_patch": created,
        "history": MOVES_HISTORY,
    }
    events = OPENHANDS.parse(write(tmp_path / "output.json", output)).events
    changes = [(c.path, c.operation, c.added) for c in of(events, "file_change")]
    assert changes == [
        ("/workspace/app/helpers.py", "rename", 0),
        ("/workspace/app/main.py", "rename", 0),
        ("/workspace/app/main.py", "modify", 2),
    ]


def edit_pair(number: int, path: str, hunks: str) -> list[dict[str, Any]]:
    """A str_replace `edit` action (id `number`) of `path` and its observation, which records
    the change as `hunks`."""
    call = metadata("str_replace_editor", f"toolu_{number}", response(f"chatcmpl-{number}"))
    return [
        {
            "id": number,
            "timestamp": f"2025-04-01T08:00:0{number}",
            "source": "agent",
            "message": "",
            "action": "edit",
            "tool_call_metadata": call,
            "args": {"path": path, "command": "str_replace", "old_str": "x", "new_str": "y"},
        },
        {
            "id": number + 1,
            "timestamp": f"2025-04-01T08:00:0{number}.5",
            "source": "agent",
            "message": f"I edited the file {path}.",
            "cause": number,
            "observation": "edit",
            "content": f"The file {path} has been edited.",
            "extras": {"path": path, "diff": f"--- {path}\n+++ {path}\n{hunks}"},
        },
    ]


GAME = "".join(f"step({n})\n" for n in range(1, 21))
# The file after the run: the edit's line in place of the first two, and a line a command
# wrote in place of the eighteenth.
MAIN = GAME.replace("step(1)\nstep(2)\n", "import fast\n").replace("step(18)", "log()")


def whole(mark: str, text: str) -> str:
    return "".join(f"{mark}{line}\n" for line in text.splitlines())


def test_a_move_git_did_not_pair_keeps_the_files_later_changes(tmp_path: Path) -> None:
    """A command moved game.py to main.py, an edit and another command then changed it, and
    git shows the deletion of game.py and the creation of main.py, not a rename (it pairs
    them only when enough of the file is unchanged). The file's changes after the move are
    the two texts' difference: the hunk no event explains (the command's line) is a change of
    main.py, while the edit's lines and the lines the run did not change are not counted."""
    history = [
        MOVES_HISTORY[0],
        *run_pair(1, "mv game.py main.py", 0),
        *edit_pair(
            3, "/workspace/app/main.py", "@@ -1,2 +1 @@\n-step(1)\n-step(2)\n+import fast\n"
        ),
    ]
    output = {
        "instruction": "Please rename the module.",
        "base_commit": "0" * 40,
        "git_patch": (
            "diff --git a/game.py b/game.py\ndeleted file mode 100644\nindex 1b2c3d4..0000000\n"
            f"--- a/game.py\n+++ /dev/null\n@@ -1,20 +0,0 @@\n{whole('-', GAME)}"
            "diff --git a/main.py b/main.py\nnew file mode 100644\nindex 0000000..5e6f7a8\n"
            f"--- /dev/null\n+++ b/main.py\n@@ -0,0 +1,19 @@\n{whole('+', MAIN)}"
        ),
        "history": history,
    }
    events = OPENHANDS.parse(write(tmp_path / "output.json", output)).events
    changes = [(c.path, c.operation, c.call_id) for c in of(events, "file_change")]
    assert changes == [
        ("/workspace/app/main.py", "rename", "1"),
        ("/workspace/app/main.py", "modify", "3"),
        ("/workspace/app/main.py", "modify", None),
    ]
    rest = of(events, "file_change")[2]
    assert rest.anchored and rest.content is None and (rest.added, rest.removed) == (1, 1)
    assert rest.diff == (
        "--- a/game.py\n+++ b/main.py\n"
        "@@ -15,6 +14,6 @@\n step(15)\n step(16)\n step(17)\n-step(18)\n+log()\n"
        " step(19)\n step(20)\n"
    )
    # A binary file's deletion and creation hold no lines to compare: nothing is added.
    output["git_patch"] = (
        "diff --git a/game.py b/game.py\ndeleted file mode 100644\nindex 1b2c3d4..0000000\n"
        "Binary files a/game.py and /dev/null differ\n"
        "diff --git a/main.py b/main.py\nnew file mode 100644\nindex 0000000..5e6f7a8\n"
        "Binary files /dev/null and b/main.py differ\n"
    )
    events = OPENHANDS.parse(write(tmp_path / "output.json", output)).events
    assert [c.call_id for c in of(events, "file_change")] == ["1", "3"]


@pytest.mark.parametrize("paired", [True, False])
def test_a_file_moved_twice_is_matched_under_every_name(tmp_path: Path, paired: bool) -> None:
    """game.py moved to play.py, edited there, then moved to main.py: the patch's change of
    main.py (a rename from game.py, or git's deletion and creation) is explained by the
    changes under all three names, so the edit's line under the middle name is not counted
    again; only the line a command wrote is."""
    history = [
        MOVES_HISTORY[0],
        *run_pair(1, "mv game.py play.py", 0),
        *edit_pair(3, "/workspace/app/play.py", "@@ -1 +1 @@\n-run()\n+run(fast=True)\n"),
        *run_pair(5, "mv play.py main.py", 0),
    ]
    if paired:
        patch = (
            "diff --git a/game.py b/main.py\nsimilarity index 60%\n"
            "rename from game.py\nrename to main.py\nindex 1b2c3d4..5e6f7a8 100644\n"
            "--- a/game.py\n+++ b/main.py\n"
            "@@ -1,5 +1,5 @@\n-run()\n+run(fast=True)\n a\n b\n c\n d\n"
            "@@ -9,4 +9,5 @@\n e\n f\n g\n h\n+log()\n"
        )
    else:
        before = "run()\na\nb\nc\nd\nx\ny\nz\ne\nf\ng\nh\n"
        after = before.replace("run()", "run(fast=True)") + "log()\n"
        patch = (
            "diff --git a/game.py b/game.py\ndeleted file mode 100644\nindex 1b2c3d4..0000000\n"
            f"--- a/game.py\n+++ /dev/null\n@@ -1,12 +0,0 @@\n{whole('-', before)}"
            "diff --git a/main.py b/main.py\nnew file mode 100644\nindex 0000000..5e6f7a8\n"
            f"--- /dev/null\n+++ b/main.py\n@@ -0,0 +1,13 @@\n{whole('+', after)}"
        )
    output = {
        "instruction": "Please rename the module.",
        "base_commit": "0" * 40,
        "git_patch": patch,
        "history": history,
    }
    events = OPENHANDS.parse(write(tmp_path / "output.json", output)).events
    changes = [(c.path, c.operation, c.call_id) for c in of(events, "file_change")]
    assert changes == [
        ("/workspace/app/play.py", "rename", "1"),
        ("/workspace/app/play.py", "modify", "3"),
        ("/workspace/app/main.py", "rename", "5"),
        ("/workspace/app/main.py", "modify", None),
    ]
    rest = of(events, "file_change")[3]
    assert (rest.added, rest.removed) == (1, 0)
    assert rest.diff.endswith(" h\n+log()\n")


@pytest.mark.parametrize(
    ("text", "relative"),
    [
        ("cd /workspace/app && ls", "cd app && ls"),
        ('"/workspace/a.py"', '"a.py"'),
        ("--- a//workspace/x.py", "--- a/x.py"),
        ("file:///workspace/x.py", "x.py"),
        ("/workspace", "."),
        ("see https://app.slack.com/workspace/settings", None),
        ("cd /home/alice/workspace/other && ls", None),
        ("kubectl get /api/v1/workspace", None),
        ("~/workspace/x and /workspace-old/x", None),
    ],
)
def test_a_sandbox_folder_is_made_relative_only_where_no_name_runs_into_it(
    tmp_path: Path, text: str, relative: str | None
) -> None:
    """`/workspace` also ends other paths and URLs: those keep it."""
    from stet_lsp.trajectory.normalize import Normalizer

    normalizer = Normalizer(tmp_path, None, (), "/workspace")
    assert normalizer.relative(text) == (text if relative is None else relative)


def test_a_sandbox_folder_after_an_escaped_line_break_in_json_is_made_relative(
    tmp_path: Path,
) -> None:
    from stet_lsp.trajectory.normalize import Normalizer

    normalizer = Normalizer(tmp_path, None, (), "/workspace")
    line = '{"output":"found:\\n/workspace/a.py\\t/workspace/b.py"}'
    assert normalizer.relative(line) == '{"output":"found:\\na.py\\tb.py"}'


HEX = "0x" + "f" * 4000  # a literal of some 4,800 digits, past what JSON or `str` take back


def test_an_int_literal_past_2_63_in_an_editor_call_is_not_read(tmp_path: Path) -> None:
    """`translated_ipython_code` is read as a literal: an argument no JSON reader takes back
    would be written into the session and refused when it is composed, so the editor's
    arguments holding one are not read from it; every event still reads back."""
    editor = f"print(file_editor(**{{'command': 'view', 'path': '/workspace/a.py', 'view_range': [1, {HEX}]}}))"
    model = response("chatcmpl-a", "I'll look.", prompt=10, output=5, cached=0, written=0)
    events_in = [
        {"id": 0, "source": "user", "action": "message", "args": {"content": "Look at a.py"}},
        {
            "id": 1,
            "source": "agent",
            "action": "read",
            "tool_call_metadata": metadata("str_replace_editor", "toolu_1", model),
            "args": {"path": "/workspace/a.py", "translated_ipython_code": editor},
        },
    ]
    parsed = OPENHANDS.parse(write(tmp_path / "t.json", events_in))
    for event in parsed.events:
        json.loads(event_json(event))
    (call,) = [e for e in parsed.events if e.kind == "tool_call"]
    assert "view_range" not in call.input and call.input["path"] == "/workspace/a.py"


def test_a_line_number_past_2_63_in_a_skill_call_is_no_edit(tmp_path: Path) -> None:
    """An agent skill's call is read as a literal for the edit it made: a line number no
    string can hold (`str` refuses past 4,300 digits) made the import fail; it is no edit."""
    run = older_resolver_output(7)
    for item in run["history"]:
        if "code" in item:
            item["code"] = f"insert_content_at_line('/workspace/app.py', {HEX}, 'x')"
    path = tmp_path / "output.jsonl"
    path.write_text(json.dumps(run) + "\n", encoding="utf-8")
    parsed = OPENHANDS.parse(path)
    assert not [e for e in parsed.events if e.kind == "file_change" and e.call_id is not None]
    for event in parsed.events:
        json.loads(event_json(event))
