"""OpenHands V1 conversations (software-agent-sdk, the `openhands` CLI): hand-written
conversation folders in the shapes the SDK persists.

Where each shape comes from (github.com/OpenHands/software-agent-sdk):

* the folder and file names: openhands-sdk/openhands/sdk/conversation/persistence_const.py
  (`base_state.json`, `events/event-{idx:05d}-{event_id}.json`), written by
  conversation/event_store.py and conversation/state.py with
  `model_dump_json(exclude_none=True)`: one line, no null members, the computed `kind` (the
  class name, from utils/models.py `DiscriminatedUnionMixin`) last;
* `base_state.json`: conversation/state.py `ConversationState`, modelled on the SDK's
  tests/fixtures/conversations/v1_11_5_cli_default/base_state.json; its
  `stats.usage_to_metrics` values are llm/utils/metrics.py `Metrics` (`costs`,
  `response_latencies`, `token_usages`, filled by llm/utils/telemetry.py);
* the events: event/base.py (`id`, `timestamp`, `source`, `parent_id`),
  event/llm_convertible/{message,action,observation,system}.py, event/condenser.py,
  event/conversation_state.py, event/user_action.py; the message parts are llm/message.py
  (`TextContent` with `cache_prompt`, `ThinkingBlock`, `RedactedThinkingBlock`,
  `MessageToolCall`); an action and its observation follow the SDK's own recorded events in
  tests/sdk/conversation/goal/fixtures/events.jsonl;
* the tools: openhands-tools/openhands/tools/terminal/definition.py (`TerminalAction`,
  `TerminalObservation` with metadata.py `CmdOutputMetadata`),
  file_editor/definition.py and editor.py (`FileEditorObservation`: the whole file as
  `old_content` and `new_content`), sdk/tool/builtins/{finish,think}.py;
* the CLI's conversations folder: OpenHands/OpenHands-CLI openhands_cli/locations.py.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from samples import SAMPLES

from stet_lsp.core.targets import resolve_target
from stet_lsp.trajectory.events import EventBase, event_json
from stet_lsp.trajectory.importers import detect, importer
from stet_lsp.trajectory.importers.base import SNIFF_BYTES
from stet_lsp.trajectory.importers.openhands_v1 import IMPORTERS
from stet_lsp.trajectory.importing import import_transcript
from stet_lsp.trajectory.sessions import find_sessions
from stet_lsp.trajectory.store import working_folder

V1 = IMPORTERS["openhands-v1"]
CONVERSATION = "4f1c2a7e-9b3d-4e8a-a6c5-0d2e8f9b1c34"
FOLDER = CONVERSATION.replace("-", "")

# A sandbox's folder that is on this machine is another project's (the import leaves it).
NO_LOCAL_WORKSPACE = pytest.mark.skipif(
    os.path.lexists("/workspace"), reason="this machine has a /workspace folder"
)
MODEL = "litellm_proxy/claude-sonnet-4-5-20250929"
RESPONSE_1 = "chatcmpl-0680149d625114e6a97f54b158714212"
RESPONSE_2 = "chatcmpl-1eb65bb322e7473f855c2dcf26ae8e08"
RESPONSE_3 = "chatcmpl-9051d3d10f914188a3ff0c1d2e4b5a67"
RESPONSE_CONDENSER = "chatcmpl-c0ffee00aa114e6a97f54b1587142bb"
RESPONSE_TITLE = "chatcmpl-7171e000aa114e6a97f54b1587142ccc"
BEFORE = "".join(f"line {n}\n" for n in range(1, 11))
AFTER = BEFORE.replace("line 5\n", "line five\n")


# -- the shapes ---------------------------------------------------------------------------------


def text(value: str) -> dict[str, Any]:
    return {"cache_prompt": False, "type": "text", "text": value}


def token_usage(response_id: str, prompt: int, output: int, cached: int = 0) -> dict[str, Any]:
    return {
        "model": MODEL,
        "prompt_tokens": prompt,
        "completion_tokens": output,
        "cache_read_tokens": cached,
        "cache_write_tokens": 0,
        "reasoning_tokens": 0,
        "context_window": 200000,
        "per_turn_token": prompt + output,
        "response_id": response_id,
    }


def metrics(usages: list[dict[str, Any]], costs: list[float]) -> dict[str, Any]:
    return {
        "model_name": MODEL,
        "accumulated_cost": sum(costs),
        "accumulated_token_usage": {
            "model": MODEL,
            "prompt_tokens": sum(u["prompt_tokens"] for u in usages),
            "completion_tokens": sum(u["completion_tokens"] for u in usages),
            "cache_read_tokens": sum(u["cache_read_tokens"] for u in usages),
            "cache_write_tokens": 0,
            "reasoning_tokens": 0,
            "context_window": 200000,
            "per_turn_token": 0,
            "response_id": "",
        },
        "costs": [{"model": MODEL, "cost": c, "timestamp": 1781589558.8} for c in costs],
        "response_latencies": [
            {"model": MODEL, "latency": 2.5, "response_id": u["response_id"]} for u in usages
        ],
        "token_usages": usages,
    }


def llm(usage_id: str) -> dict[str, Any]:
    return {
        "model": MODEL,
        "api_key": "**********",
        "num_retries": 5,
        "timeout": 300,
        "temperature": 0.0,
        "max_input_tokens": 200000,
        "max_output_tokens": 64000,
        "stream": False,
        "drop_params": True,
        "caching_prompt": True,
        "native_tool_calling": True,
        "reasoning_effort": "high",
        "usage_id": usage_id,
        "litellm_extra_body": {},
    }


def base_state(
    working_dir: Path | str, usage: dict[str, Any] | None = None, status: str = "finished"
) -> dict[str, Any]:
    if usage is None:
        usage = {
            "agent": metrics(
                [
                    token_usage(RESPONSE_1, 12000, 300, cached=8000),
                    token_usage(RESPONSE_2, 13000, 200, cached=11000),
                    token_usage(RESPONSE_3, 14000, 100, cached=12000),
                ],
                [0.02, 0.015, 0.01],
            ),
            # The condenser's costs are not all there: none of its requests gets one.
            "condenser": metrics(
                [
                    token_usage(RESPONSE_CONDENSER, 9000, 400),
                    token_usage(RESPONSE_TITLE, 500, 12),
                ],
                [0.03],
            ),
        }
    return {
        "id": CONVERSATION,
        "agent": {
            "llm": llm("agent"),
            "tools": [
                {"name": "terminal", "params": {}},
                {"name": "file_editor", "params": {}},
                {"name": "task_tracker", "params": {}},
            ],
            "mcp_config": {},
            "include_default_tools": ["FinishTool", "ThinkTool"],
            "system_prompt_filename": "system_prompt.j2",
            "condenser": {
                "llm": llm("condenser"),
                "max_size": 80,
                "keep_first": 4,
                "kind": "LLMSummarizingCondenser",
            },
            "kind": "Agent",
        },
        "workspace": {"working_dir": str(working_dir), "kind": "LocalWorkspace"},
        "persistence_dir": f"/home/dev/.openhands/conversations/{FOLDER}",
        "max_iterations": 500,
        "stuck_detection": True,
        "execution_status": status,
        "confirmation_policy": {"kind": "NeverConfirm"},
        "activated_knowledge_skills": [],
        "blocked_actions": {},
        "blocked_messages": {},
        "stats": {"usage_to_metrics": usage},
        "secret_registry": {"secret_sources": {}},
        "agent_state": {},
    }


class Clock:
    """Event ids and the SDK's naive local timestamps, in order."""

    def __init__(self) -> None:
        self.count = 0

    def stamp(self) -> dict[str, str]:
        self.count += 1
        return {
            "id": f"{self.count:08x}-1111-4222-8333-444455556666",
            "timestamp": f"2026-06-16T05:39:{self.count:02d}.809928",
        }


def system_prompt(clock: Clock) -> dict[str, Any]:
    return {
        **clock.stamp(),
        "source": "agent",
        "system_prompt": text("You are OpenHands agent, a helpful AI assistant..."),
        "tools": [
            {
                "description": "Execute a bash command in the terminal...",
                "action_type": "TerminalAction",
                "observation_type": "TerminalObservation",
                "annotations": {"title": "terminal", "readOnlyHint": False},
                "kind": "TerminalTool",
            }
        ],
        "kind": "SystemPromptEvent",
    }


def user_message(clock: Clock, said: str) -> dict[str, Any]:
    return {
        **clock.stamp(),
        "source": "user",
        "llm_message": {"role": "user", "content": [text(said)], "thinking_blocks": []},
        "activated_skills": [],
        "extended_content": [],
        "kind": "MessageEvent",
    }


def agent_message(clock: Clock, said: str, response_id: str) -> dict[str, Any]:
    return {
        **clock.stamp(),
        "source": "agent",
        "llm_message": {
            "role": "assistant",
            "content": [text(said)],
            "thinking_blocks": [
                {"type": "thinking", "thinking": "Done; tell the user.", "signature": "EqQB"},
                {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"},
            ],
        },
        "llm_response_id": response_id,
        "activated_skills": [],
        "extended_content": [],
        "kind": "MessageEvent",
    }


def action(
    clock: Clock,
    tool: str,
    call_id: str,
    arguments: dict[str, Any],
    action_kind: str | None,
    response_id: str,
    thought: str = "",
    reasoning: str | None = None,
) -> dict[str, Any]:
    event: dict[str, Any] = {
        **clock.stamp(),
        "source": "agent",
        "thought": [text(thought)] if thought else [],
        "thinking_blocks": [],
    }
    if reasoning is not None:
        event["reasoning_content"] = reasoning
    if action_kind is not None:
        event["action"] = {**arguments, "kind": action_kind}
    event.update(
        {
            "tool_name": tool,
            "tool_call_id": call_id,
            "tool_call": {
                "id": call_id,
                "name": tool,
                "arguments": json.dumps(arguments),
                "origin": "completion",
            },
            "llm_response_id": response_id,
            "security_risk": "LOW",
            "summary": f"{tool} call",
            "kind": "ActionEvent",
        }
    )
    return event


def observation(
    clock: Clock, tool: str, call_id: str, action_id: str, result: dict[str, Any]
) -> dict[str, Any]:
    return {
        **clock.stamp(),
        "source": "environment",
        "tool_name": tool,
        "tool_call_id": call_id,
        "observation": result,
        "action_id": action_id,
        "kind": "ObservationEvent",
    }


def terminal_result(output: str, exit_code: int, working_dir: str) -> dict[str, Any]:
    return {
        "content": [text(output)],
        "is_error": False,
        "command": "pytest -q",
        "exit_code": exit_code,
        "timeout": False,
        "metadata": {
            "exit_code": exit_code,
            "pid": -1,
            "username": "dev",
            "hostname": "box",
            "working_dir": working_dir,
            "prefix": "",
            "suffix": "",
        },
        "kind": "TerminalObservation",
    }


def conversation(root: Path | str) -> list[dict[str, Any]]:
    """Every event kind the importer maps, in the order a run writes them."""
    clock = Clock()
    app = f"{root}/src/app.py"
    events = [system_prompt(clock), user_message(clock, "Fix line 5 of src/app.py")]
    run = action(
        clock,
        "terminal",
        "toolu_01",
        {"command": "pytest -q", "is_input": False, "reset": False},
        "TerminalAction",
        RESPONSE_1,
        thought="Let me run the tests first.",
        reasoning="The user wants line 5 fixed.",
    )
    # A second call of the same response: parallel tool calls share the reasoning.
    view = action(
        clock,
        "file_editor",
        "toolu_02",
        {"command": "view", "path": app},
        "FileEditorAction",
        RESPONSE_1,
        reasoning="The user wants line 5 fixed.",
    )
    events += [run, view]
    events.append(
        observation(
            clock, "terminal", "toolu_01", run["id"], terminal_result("1 failed", 1, str(root))
        )
    )
    events.append(
        observation(
            clock,
            "file_editor",
            "toolu_02",
            view["id"],
            {
                "content": [text(BEFORE)],
                "is_error": False,
                "command": "view",
                "path": app,
                "prev_exist": True,
                "kind": "FileEditorObservation",
            },
        )
    )
    edit_arguments = {
        "command": "str_replace",
        "path": app,
        "old_str": "line 5\n",
        "new_str": "line five\n",
    }
    edit = action(clock, "file_editor", "toolu_03", edit_arguments, "FileEditorAction", RESPONSE_2)
    events.append(edit)
    events.append(
        observation(
            clock,
            "file_editor",
            "toolu_03",
            edit["id"],
            {
                "content": [text(f"The file {app} has been edited. ...")],
                "is_error": False,
                "command": "str_replace",
                "path": app,
                "prev_exist": True,
                "old_content": BEFORE,
                "new_content": AFTER,
                "kind": "FileEditorObservation",
            },
        )
    )
    # An invalid call: no action, an AgentErrorEvent answers it.
    bad = action(clock, "browser", "toolu_04", {"url": "x"}, None, RESPONSE_3)
    events.append(bad)
    events.append(
        {
            **clock.stamp(),
            "source": "agent",
            "tool_name": "browser",
            "tool_call_id": "toolu_04",
            "error": "Tool 'browser' not found. Available: ['terminal', 'file_editor']",
            "classification": {"kind": "agent_action", "retryable": False},
            "kind": "AgentErrorEvent",
        }
    )
    rejected = action(
        clock,
        "terminal",
        "toolu_05",
        {"command": "rm -rf build", "is_input": False, "reset": False},
        "TerminalAction",
        RESPONSE_3,
    )
    events.append(rejected)
    events.append(
        {
            **clock.stamp(),
            "source": "user",
            "tool_name": "terminal",
            "tool_call_id": "toolu_05",
            "rejection_reason": "Not that folder",
            "rejection_source": "user",
            "action_id": rejected["id"],
            "kind": "UserRejectObservation",
        }
    )
    think = action(
        clock,
        "think",
        "toolu_06",
        {"thought": "The fix is in place."},
        "ThinkAction",
        "chatcmpl-think",
    )
    events.append(think)
    events.append(
        observation(
            clock,
            "think",
            "toolu_06",
            think["id"],
            {
                "content": [text("Your thought has been logged.")],
                "is_error": False,
                "kind": "ThinkObservation",
            },
        )
    )
    events.append(
        {
            **clock.stamp(),
            "source": "environment",
            "forgotten_event_ids": [run["id"], view["id"]],
            "summary": "The tests failed; line 5 was fixed.",
            "summary_offset": 1,
            "llm_response_id": RESPONSE_CONDENSER,
            "kind": "Condensation",
        }
    )
    events.append(
        {
            **clock.stamp(),
            "source": "environment",
            "summary": "Earlier: the tests failed.",
            "kind": "CondensationSummaryEvent",
        }
    )
    events.append(
        {
            **clock.stamp(),
            "source": "environment",
            "key": "execution_status",
            "value": "running",
            "kind": "ConversationStateUpdateEvent",
        }
    )
    events.append(
        {
            **clock.stamp(),
            "source": "environment",
            "key": "stats",
            "value": {"usage_to_metrics": {"agent": {"model_name": MODEL}}},
            "kind": "ConversationStateUpdateEvent",
        }
    )
    events.append({**clock.stamp(), "source": "user", "kind": "PauseEvent"})
    events.append(
        {
            **clock.stamp(),
            "source": "agent",
            "shiny": "a kind this importer does not know",
            "kind": "FutureEvent",
        }
    )
    events.append(agent_message(clock, "Line 5 now reads 'line five'.", "chatcmpl-final"))
    finish = action(
        clock,
        "finish",
        "toolu_07",
        {"message": "Fixed line 5."},
        "FinishAction",
        "chatcmpl-finish",
    )
    events.append(finish)
    events.append(
        observation(
            clock,
            "finish",
            "toolu_07",
            finish["id"],
            {"content": [text("Fixed line 5.")], "is_error": False, "kind": "FinishObservation"},
        )
    )
    return events


def write_conversation(
    conversations: Path,
    state: dict[str, Any] | None,
    events: list[Any],
    folder: str = FOLDER,
) -> Path:
    """The conversation's folder, written as the SDK writes it (compact JSON)."""
    path = conversations / folder
    (path / "events").mkdir(parents=True)
    if state is not None:
        (path / "base_state.json").write_text(compact(state), encoding="utf-8")
    for index, event in enumerate(events):
        event_id = event.get("id", "x") if isinstance(event, dict) else "x"
        name = f"event-{index:05d}-{event_id}.json"
        (path / "events" / name).write_text(compact(event), encoding="utf-8")
    (path / "events" / ".eventlog.lock").write_text("", encoding="utf-8")
    return path


def compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def kinds(events: list[EventBase]) -> list[str]:
    return [e.kind for e in events]


def of(events: list[EventBase], kind: str) -> list[Any]:
    return [e for e in events if e.kind == kind]


# -- mapping ------------------------------------------------------------------------------------


def test_every_event_kind_of_a_conversation(tmp_path: Path) -> None:
    folder = write_conversation(tmp_path, base_state("/work/app"), conversation("/work/app"))
    parsed = V1.parse(folder / "base_state.json")
    events = parsed.events
    assert parsed.format == "openhands-v1"
    assert parsed.session_id == CONVERSATION
    assert kinds(events) == [
        "session_start",
        "raw",  # the system prompt
        "user_message",
        "reasoning",  # once for the response's two calls
        "agent_message",
        "tool_call",
        "usage",
        "tool_call",
        "tool_result",
        "tool_result",
        "tool_call",
        "usage",
        "tool_result",
        "file_change",
        "tool_call",
        "usage",
        "tool_result",  # the AgentErrorEvent
        "tool_call",
        "tool_result",  # the rejection
        "reasoning",  # the think tool
        "compaction",
        "usage",  # the condenser's request
        "compaction",
        "error",  # the pause
        "raw",  # the unknown kind
        "reasoning",
        "agent_message",
        "agent_message",  # the finish tool's message
        "usage",  # the title's request: no event of its own
        "session_end",
    ]
    start = events[0]
    assert (start.harness, start.model, start.cwd) == ("openhands", MODEL, "/work/app")
    assert start.harness_version is None  # the SDK records no version
    assert start.time == "2026-06-16T05:39:01.809928"
    assert start.source.file == f"{FOLDER}/base_state.json"
    assert events[1].record["kind"] == "SystemPromptEvent"
    assert events[1].reason == "system prompt"
    assert of(events, "user_message")[0].text == "Fix line 5 of src/app.py"
    assert of(events, "reasoning")[0].text == "The user wants line 5 fixed."
    assert of(events, "reasoning")[1].text == "The fix is in place."
    assert of(events, "reasoning")[2].text == "Done; tell the user."
    messages = [m.text for m in of(events, "agent_message")]
    assert messages == [
        "Let me run the tests first.",
        "Line 5 now reads 'line five'.",
        "Fixed line 5.",
    ]
    assert all(m.model == MODEL for m in of(events, "agent_message"))
    assert [c.summary for c in of(events, "compaction")] == [
        "The tests failed; line 5 was fixed.",
        "Earlier: the tests failed.",
    ]
    pause = of(events, "error")[0]
    assert (pause.message, pause.interrupt) == ("paused by the user", True)
    unknown = of(events, "raw")[1]
    assert unknown.record["shiny"] == "a kind this importer does not know"
    assert unknown.reason == "unknown event kind 'FutureEvent'"
    assert events[-1].reason == "finish"
    assert parsed.dropped == {
        "think_acknowledgement": 1,
        "finish_acknowledgement": 1,
        "state_update": 2,
        "opaque_reasoning": 1,
        "unattributed_cost": 1,
    }
    assert parsed.problems == []


def test_every_event_names_its_file(tmp_path: Path) -> None:
    events = conversation("/work/app")
    folder = write_conversation(tmp_path, base_state("/work/app"), events)
    parsed = V1.parse(folder / "base_state.json")
    names = sorted(p.name for p in (folder / "events").glob("event-*.json"))
    assert set(parsed.sources) == {f"{FOLDER}/base_state.json"} | {
        f"{FOLDER}/events/{name}" for name in names
    }
    assert all(path.is_file() for path in parsed.sources.values())
    for event in parsed.events:
        assert event.source.file in parsed.sources
        assert event.source.pointer is not None
    calls = of(parsed.events, "tool_call")
    assert calls[0].source.file == f"{FOLDER}/events/{names[2]}"
    assert (calls[0].source.line, calls[0].source.pointer) == (1, "")
    usages = of(parsed.events, "usage")
    assert usages[0].source.file == f"{FOLDER}/base_state.json"
    assert usages[0].source.pointer == "/stats/usage_to_metrics/agent/token_usages/0"
    assert usages[-1].source.pointer == "/stats/usage_to_metrics/condenser/token_usages/1"


def test_tool_calls_are_paired_with_their_results(tmp_path: Path) -> None:
    folder = write_conversation(tmp_path, base_state("/work/app"), conversation("/work/app"))
    events = V1.parse(folder / "base_state.json").events
    calls = {c.call_id: c for c in of(events, "tool_call")}
    results = {r.call_id: r for r in of(events, "tool_result")}
    assert list(calls) == ["toolu_01", "toolu_02", "toolu_03", "toolu_04", "toolu_05"]
    assert set(results) == set(calls)
    assert calls["toolu_01"].name == "terminal"
    assert calls["toolu_01"].input == {"command": "pytest -q", "is_input": False, "reset": False}
    # a non-zero exit status is a failure
    assert (results["toolu_01"].ok, results["toolu_01"].output) == (False, "1 failed")
    assert (results["toolu_02"].ok, results["toolu_02"].output) == (True, BEFORE)
    assert results["toolu_03"].ok
    # an invalid call keeps the arguments the model wrote; its error answers it
    assert (calls["toolu_04"].name, calls["toolu_04"].input) == ("browser", {"url": "x"})
    assert not results["toolu_04"].ok
    assert results["toolu_04"].output.startswith("Tool 'browser' not found")
    assert not results["toolu_05"].ok
    assert results["toolu_05"].output == "Action rejected: Not that folder"


def test_a_file_edit_is_a_change_with_the_files_own_diff(tmp_path: Path) -> None:
    folder = write_conversation(tmp_path, base_state("/work/app"), conversation("/work/app"))
    (change,) = of(V1.parse(folder / "base_state.json").events, "file_change")
    assert (change.path, change.operation, change.call_id) == (
        "/work/app/src/app.py",
        "modify",
        "toolu_03",
    )
    assert change.anchored
    assert change.content == AFTER
    assert (change.added, change.removed) == (1, 1)
    assert change.diff == (
        "--- a//work/app/src/app.py\n"
        "+++ b//work/app/src/app.py\n"
        "@@ -2,7 +2,7 @@\n"
        " line 2\n"
        " line 3\n"
        " line 4\n"
        "-line 5\n"
        "+line five\n"
        " line 6\n"
        " line 7\n"
        " line 8\n"
    )


def test_created_files_patches_and_edits_known_only_from_arguments(tmp_path: Path) -> None:
    clock = Clock()
    created = action(
        clock,
        "file_editor",
        "c1",
        {"command": "create", "path": "/w/new.py", "file_text": "x = 1\n"},
        "FileEditorAction",
        "r1",
    )
    # An early (2025) editor observation: `output` text, no contents recorded.
    old_style = action(
        clock,
        "str_replace_editor",
        "c2",
        {"command": "str_replace", "path": "/w/a.py", "old_str": "a", "new_str": "b"},
        "StrReplaceEditorAction",
        "r2",
    )
    patch = action(
        clock, "apply_patch", "c3", {"patch": "*** Begin Patch..."}, "ApplyPatchAction", "r3"
    )
    events = [
        created,
        observation(
            clock,
            "file_editor",
            "c1",
            created["id"],
            {
                "content": [text("File created successfully at: /w/new.py")],
                "is_error": False,
                "command": "create",
                "path": "/w/new.py",
                "prev_exist": False,
                "new_content": "x = 1\n",
                "kind": "FileEditorObservation",
            },
        ),
        old_style,
        observation(
            clock,
            "str_replace_editor",
            "c2",
            old_style["id"],
            {
                "command": "str_replace",
                "output": "The file /w/a.py has been edited.",
                "path": "/w/a.py",
                "prev_exist": True,
                "kind": "StrReplaceEditorObservation",
            },
        ),
        patch,
        observation(
            clock,
            "apply_patch",
            "c3",
            patch["id"],
            {
                "content": [text("Done!")],
                "is_error": False,
                "message": "Done!",
                "fuzz": 0,
                "commit": {
                    "changes": {
                        "gone.py": {"type": "delete", "old_content": "old\n"},
                        "b.py": {
                            "type": "update",
                            "old_content": "1\n2\n",
                            "new_content": "1\n3\n",
                            "move_path": "c.py",
                        },
                    }
                },
                "kind": "ApplyPatchObservation",
            },
        ),
    ]
    folder = write_conversation(tmp_path, base_state("/w", usage={}), events)
    changes = of(V1.parse(folder / "base_state.json").events, "file_change")
    assert [(c.path, c.operation, c.old_path) for c in changes] == [
        ("/w/new.py", "create", None),
        ("/w/a.py", "modify", None),
        ("gone.py", "delete", None),
        ("c.py", "rename", "b.py"),
    ]
    assert changes[0].diff == "--- /dev/null\n+++ b//w/new.py\n@@ -0,0 +1 @@\n+x = 1\n"
    assert not changes[1].anchored and changes[1].diff.endswith(
        "-a\n\\ No newline at end of file\n+b\n\\ No newline at end of file\n"
    )
    assert changes[3].diff.startswith("--- a/b.py\n+++ b/c.py\n@@ -1,2 +1,2 @@\n")


def test_usage_is_counted_once(tmp_path: Path) -> None:
    folder = write_conversation(tmp_path, base_state("/work/app"), conversation("/work/app"))
    usages = of(V1.parse(folder / "base_state.json").events, "usage")
    assert [(u.input_tokens, u.cache_read_tokens, u.output_tokens) for u in usages] == [
        (4000, 8000, 300),
        (2000, 11000, 200),
        (2000, 12000, 100),
        (9000, 0, 400),
        (500, 0, 12),
    ]
    # the agent's costs line up with its requests; the condenser's do not
    assert [u.cost_usd for u in usages] == [0.02, 0.015, 0.01, None, None]
    assert [u.cost_basis for u in usages] == ["reported"] * 3 + [None, None]
    assert {u.model for u in usages} == {MODEL}


def test_a_token_usage_that_is_not_an_object_is_kept_raw(tmp_path: Path) -> None:
    usages = [token_usage(RESPONSE_1, 12000, 300), "12000 tokens", None]
    usage = {"agent": {**metrics(usages[:1], []), "token_usages": usages}}
    folder = write_conversation(tmp_path, base_state("/w", usage=usage), conversation("/w"))
    events = V1.parse(folder / "base_state.json").events
    assert len(of(events, "usage")) == 1
    raws = [e for e in of(events, "raw") if e.source.file.endswith("base_state.json")]
    assert [(r.record, r.source.pointer) for r in raws] == [
        ("12000 tokens", "/stats/usage_to_metrics/agent/token_usages/1"),
        (None, "/stats/usage_to_metrics/agent/token_usages/2"),
    ]


def test_without_per_request_usage_the_cumulative_stats_give_it(tmp_path: Path) -> None:
    clock = Clock()
    snapshot = {
        "model_name": MODEL,
        "accumulated_cost": 0.0,
        "max_budget_per_task": None,
        "accumulated_token_usage": {"model": MODEL, "prompt_tokens": 0, "completion_tokens": 0},
    }

    def stats(cost: float, prompt: int, output: int, cached: int) -> dict[str, Any]:
        tokens = {
            "model": MODEL,
            "prompt_tokens": prompt,
            "completion_tokens": output,
            "cache_read_tokens": cached,
            "cache_write_tokens": 0,
            "reasoning_tokens": 0,
            "context_window": 0,
            "per_turn_token": 0,
            "response_id": "",
        }
        value = {**snapshot, "accumulated_cost": cost, "accumulated_token_usage": tokens}
        return {
            **clock.stamp(),
            "source": "environment",
            "key": "stats",
            "value": {"usage_to_metrics": {"default": value, "condenser": snapshot}},
            "kind": "ConversationStateUpdateEvent",
        }

    events = [
        stats(0.01, 596, 775, 0),
        stats(0.01, 596, 775, 0),  # the same figures again: nothing new
        stats(0.03, 35895, 960, 1115),
    ]
    # September 2025: a metrics snapshot on the action itself
    early = action(clock, "terminal", "c1", {"command": "ls"}, "TerminalAction", "r1")
    early["metrics"] = {**snapshot, "accumulated_cost": 0.5}
    early["metrics"]["accumulated_token_usage"] = {"prompt_tokens": 100, "completion_tokens": 5}
    events.append(early)
    folder = write_conversation(tmp_path, base_state("/w", usage={}), events)
    usages = of(V1.parse(folder / "base_state.json").events, "usage")
    assert [(u.input_tokens, u.cache_read_tokens, u.output_tokens, u.cost_usd) for u in usages] == [
        (596, 0, 775, 0.01),
        (34184, 1115, 185, 0.02),
        (100, 0, 5, 0.5),
    ]


def test_cumulative_stats_whose_cost_stays_zero_report_no_cost(tmp_path: Path) -> None:
    """A model OpenHands has no price for (a proxy's model) keeps `accumulated_cost` at 0.0
    while its tokens grow: the requests' cost is unknown, not a reported $0."""
    clock = Clock()

    def stats(cost: float, prompt: int, output: int) -> dict[str, Any]:
        tokens = {"model": "litellm_proxy/m2", "prompt_tokens": prompt, "completion_tokens": output}
        value = {"model_name": "litellm_proxy/m2", "accumulated_cost": cost}
        value["accumulated_token_usage"] = tokens
        return {
            **clock.stamp(),
            "source": "environment",
            "key": "stats",
            "value": {"usage_to_metrics": {"default": value}},
            "kind": "ConversationStateUpdateEvent",
        }

    events = [stats(0.0, 600, 70), stats(0.0, 1900, 90), stats(0.004, 3000, 100)]
    folder = write_conversation(tmp_path, base_state("/w", usage={}), events)
    usages = of(V1.parse(folder / "base_state.json").events, "usage")
    assert [(u.input_tokens, u.cost_usd, u.cost_basis) for u in usages] == [
        (600, None, None),
        (1300, None, None),
        (1100, 0.004, "reported"),
    ]


def test_a_malformed_event_file_is_a_problem_and_the_import_goes_on(tmp_path: Path) -> None:
    events = conversation("/work/app")
    folder = write_conversation(tmp_path, base_state("/work/app"), events)
    broken = sorted((folder / "events").glob("event-00003-*.json"))[0]
    broken.write_text('{"id": "cut off', encoding="utf-8")
    (folder / "events" / "event-00004-x.json").write_text("[1, 2]", encoding="utf-8")
    parsed = V1.parse(folder / "base_state.json")
    (problem,) = parsed.problems
    assert problem.source == f"{FOLDER}/events/{broken.name}"
    assert problem.message.startswith("not JSON: Unterminated string")
    assert f"{FOLDER}/events/{broken.name}" in parsed.sources
    raw = [e for e in of(parsed.events, "raw") if e.reason == "event is not a JSON object"]
    assert [r.record for r in raw] == [[1, 2]]
    assert of(parsed.events, "session_end")
    # the lost file held the second call: its result has nothing to answer
    assert [c.call_id for c in of(parsed.events, "tool_call")][:2] == ["toolu_01", "toolu_03"]
    orphans = [e for e in of(parsed.events, "raw") if e.reason.startswith("observation without")]
    assert [o.record["tool_call_id"] for o in orphans] == ["toolu_02"]


def test_any_file_of_the_folder_reads_the_whole_conversation(tmp_path: Path) -> None:
    folder = write_conversation(tmp_path, base_state("/work/app"), conversation("/work/app"))
    whole = V1.parse(folder / "base_state.json")
    for event_file in sorted((folder / "events").glob("event-*.json"))[::7]:
        again = V1.parse(event_file)
        assert again.sources == whole.sources
        assert [event_json(e) for e in again.events] == [event_json(e) for e in whole.events]


def test_a_loose_event_file_or_event_lines_are_read_alone(tmp_path: Path) -> None:
    clock = Clock()
    said = user_message(clock, "Hello")
    single = tmp_path / "message.json"
    single.write_text(json.dumps(said, indent=2), encoding="utf-8")
    parsed = V1.parse(single)
    assert kinds(parsed.events) == ["session_start", "user_message", "session_end"]
    assert parsed.session_id == said["id"]
    assert list(parsed.sources) == ["message.json"]
    lines = tmp_path / "events.jsonl"
    lines.write_text(
        compact(said) + "\n" + compact(agent_message(clock, "Hi", "r1")) + "\n",
        encoding="utf-8",
    )
    parsed = V1.parse(lines)
    assert kinds(parsed.events)[1:4] == ["user_message", "reasoning", "agent_message"]
    assert parsed.events[3].source.line == 2


def test_reasoning_written_inline_is_not_repeated_as_the_agents_text(tmp_path: Path) -> None:
    """Models served through an OpenAI-compatible endpoint write their reasoning inline,
    `<think>…</think>` before the reply, and the SDK keeps it in the thought (or message)
    beside `reasoning_content`: it is the reasoning, not something the agent said."""
    clock = Clock()
    plan = "Run the tests, then fix line 5.\n"
    run = action(
        clock,
        "terminal",
        "call_1",
        {"command": "pytest -q"},
        "TerminalAction",
        RESPONSE_1,
        thought=f"<think>{plan}</think>\n\nI'll start with the tests.\n",
        reasoning=plan,
    )
    again = action(
        clock,
        "terminal",
        "call_2",
        {"command": "pytest -q -x"},
        "TerminalAction",
        RESPONSE_2,
        thought="<think>Chain them with &&.\n</think>\n\n",  # no reasoning field
    )
    done = agent_message(clock, "<think>All green.</think>\nFixed.", RESPONSE_3)
    done["llm_message"]["thinking_blocks"] = []
    update = {**system_prompt(clock), "kind": "SystemPromptUpdateEvent"}
    # A user's message is what they typed, a `<think>` block in it too.
    asked = user_message(clock, "<think>Consider the cache first.</think>\nPlease fix the bug")
    lines = tmp_path / "events.jsonl"
    lines.write_text("\n".join(compact(e) for e in (run, again, done, update, asked)) + "\n")
    events = V1.parse(lines).events
    said = [
        (e.kind, e.text) for e in events if e.kind in ("reasoning", "agent_message", "user_message")
    ]
    assert said == [
        ("reasoning", plan),
        ("agent_message", "I'll start with the tests.\n"),
        ("reasoning", "Chain them with &&."),
        ("reasoning", "All green."),
        ("agent_message", "Fixed."),
        ("user_message", "<think>Consider the cache first.</think>\nPlease fix the bug"),
    ]
    assert [e.reason for e in of(events, "raw")] == ["system prompt"]


def test_an_mcp_tools_call_and_result(tmp_path: Path) -> None:
    """An MCP tool's action (`MCPToolAction`, SDK 1.49) keeps the model's arguments in its
    `data`; its observation (`MCPToolObservation`) gives a line naming the tool, then the
    tool's content, each a text part of its own, which the SDK sends the model a line each."""
    clock = Clock()
    arguments = {"path": "notes.txt"}
    call = action(clock, "read_file", "call_read_file", {}, None, RESPONSE_1)
    call["action"] = {"data": arguments, "kind": "MCPToolAction"}
    call["tool_call"]["arguments"] = json.dumps(arguments)
    result = {
        "content": [text("[Tool 'read_file' executed.]"), text("hello\nworld")],
        "is_error": False,
        "tool_name": "read_file",
        "kind": "MCPToolObservation",
    }
    events = [
        user_message(clock, "Read notes.txt"),
        call,
        observation(clock, "read_file", "call_read_file", call["id"], result),
    ]
    folder = write_conversation(tmp_path, base_state(tmp_path / "work"), events)
    parsed = V1.parse(folder / "base_state.json")
    assert [c.input for c in of(parsed.events, "tool_call")] == [{"path": "notes.txt"}]
    assert [r.output for r in of(parsed.events, "tool_result")] == [
        "[Tool 'read_file' executed.]\nhello\nworld"
    ]


def test_content_parts_of_other_kinds_are_kept_raw(tmp_path: Path) -> None:
    """A message's, a thought's or an observation's content part that is neither text nor an
    image (a kind a later SDK may add) is a raw event after the event its text went into,
    never left out; an image given as data is named, its bytes counted."""
    clock = Clock()
    audio = {"type": "audio", "format": "wav", "data": "UklGRg=="}
    document = {"type": "file", "file_id": "file-7", "cache_prompt": False}
    prompt = user_message(clock, "Read the attached notes")
    images = ["data:image/png;base64,iVBORw0KGgo=", "https://example.com/a.png"]
    prompt["llm_message"]["content"] += [{"type": "image", "image_urls": images}, document]
    call = action(clock, "terminal", "toolu_01", {"command": "ls"}, "TerminalAction", RESPONSE_1)
    call["thought"] = [text("Listing."), {"type": "citation", "url": "https://example.com"}]
    result = terminal_result("a.py\n", 0, str(tmp_path / "work"))
    result["content"].append(audio)
    events = [
        prompt,
        call,
        observation(clock, "terminal", "toolu_01", call["id"], result),
        agent_message(clock, "Done.", RESPONSE_2),
    ]
    events[-1]["llm_message"]["content"].insert(0, "a bare string")
    folder = write_conversation(tmp_path, base_state(tmp_path / "work"), events)
    parsed = V1.parse(folder / "base_state.json")
    assert kinds(parsed.events)[1:13] == [
        "user_message",
        "raw",
        "agent_message",
        "raw",
        "tool_call",
        "usage",
        "tool_result",
        "raw",
        "reasoning",
        "agent_message",
        "raw",
        "usage",
    ]
    raws = of(parsed.events, "raw")
    assert [r.record for r in raws] == [document, call["thought"][1], audio, "a bare string"]
    assert [r.reason for r in raws] == [
        "message content part of a kind not understood",
        "thought content part of a kind not understood",
        "observation content part of a kind not understood",
        "message content part of a kind not understood",
    ]
    said = "Read the attached notes\n[image]\n[image: https://example.com/a.png]"
    assert of(parsed.events, "user_message")[0].text == said
    assert of(parsed.events, "tool_result")[0].output == "a.py\n"
    # The bytes of the image given as data are left out, and counted.
    assert parsed.dropped["inline_data"] == 1


def delegation(clock: Clock, tasks: dict[str, str], call_id: str, response_id: str) -> list[Any]:
    """The delegate tool's call handing `tasks` to sub-agents, and its observation."""
    arguments = {"command": "delegate", "tasks": tasks}
    call = action(clock, "delegate", call_id, arguments, "DelegateAction", response_id)
    results = "\n".join(f"Agent {agent}: done" for agent in tasks)
    result = {
        "content": [text(f"Completed delegation of {len(tasks)} tasks\n\nResults:\n{results}")],
        "is_error": False,
        "command": "delegate",
        "kind": "DelegateObservation",
    }
    return [call, observation(clock, "delegate", call_id, call["id"], result)]


def sub_conversation(clock: Clock, tasks: list[str], prefix: str) -> list[Any]:
    """A sub-agent's conversation: each task it was given, a command and its answer."""
    events: list[Any] = [system_prompt(clock)]
    for number, task in enumerate(tasks, 1):
        run = action(
            clock,
            "terminal",
            f"{prefix}-call-{number}",
            {"command": "ls", "is_input": False, "reset": False},
            "TerminalAction",
            f"{prefix}-response-{number}",
        )
        events += [
            user_message(clock, task),
            run,
            observation(
                clock,
                "terminal",
                f"{prefix}-call-{number}",
                run["id"],
                terminal_result("a.py", 0, "/w"),
            ),
            agent_message(clock, f"{prefix} finished task {number}", f"{prefix}-answer-{number}"),
        ]
    return events


def test_delegated_sub_conversations_are_subagents_of_their_calls(tmp_path: Path) -> None:
    """The delegate tool runs each task in a sub-agent's own conversation, persisted in
    `subagents/<id>/` of the parent's folder: its events follow the call that gave it the
    task, as the sub-agent's; each sub-agent's usage, which the parent's state holds under
    `delegate:<agent>`, is placed at its events once."""
    clock = Clock()
    parent = [
        system_prompt(clock),
        user_message(clock, "Plan a trip"),
        *delegation(clock, {"lodging": "Find hotels", "food": "Find food"}, "call-a", "r-1"),
        *delegation(clock, {"lodging": "Cheaper ones"}, "call-b", "r-2"),
        # The same task for both: each in its own conversation.
        *delegation(clock, {"food": "Sum up", "lodging": "Sum up"}, "call-c", "r-4"),
        agent_message(clock, "Here is the plan.", "r-3"),
    ]
    sub_clock = Clock()
    lodging = sub_conversation(sub_clock, ["Find hotels", "Cheaper ones", "Sum up"], "lodging")
    food = sub_conversation(sub_clock, ["Find food", "Sum up"], "food")
    spawned = sub_conversation(sub_clock, ["A task nobody gave"], "stray")
    usage = {
        "agent": metrics([token_usage(f"r-{n}", 1000, 10) for n in (1, 2, 3)], []),
        "delegate:lodging": metrics(
            [
                token_usage(f"lodging-{k}-{n}", 500, 5)
                for n in (1, 2)
                for k in ("response", "answer")
            ],
            [],
        ),
        "delegate:food": metrics(
            [token_usage(f"food-{k}-1", 400, 4) for k in ("response", "answer")], []
        ),
    }
    conversations = tmp_path / "conversations"
    folder = write_conversation(conversations, base_state("/w", usage), parent)
    for name, events in [("aaaa", lodging), ("bbbb", food), ("cccc", spawned)]:
        sub_state = {**base_state("/w", {}), "id": name}
        write_conversation(folder / "subagents", sub_state, events, folder=name)
    parsed = IMPORTERS["openhands-v1"].parse(folder / "base_state.json")
    events = parsed.events
    subagents = of(events, "subagent")
    assert [(s.agent_id, s.call_id, s.description) for s in subagents] == [
        ("lodging", "call-a", "Find hotels"),
        ("food", "call-a", "Find food"),
        ("lodging", "call-b", "Cheaper ones"),
        ("food", "call-c", "Sum up"),
        ("lodging", "call-c", "Sum up"),
        ("cccc", None, None),
    ]
    said = [(e.agent, e.text, e.source.file.split("/")[2]) for e in of(events, "user_message")]
    assert said[1:] == [
        ("lodging", "Find hotels", "aaaa"),
        ("food", "Find food", "bbbb"),
        ("lodging", "Cheaper ones", "aaaa"),
        ("food", "Sum up", "bbbb"),
        ("lodging", "Sum up", "aaaa"),
        ("cccc", "A task nobody gave", "cccc"),
    ]
    # Each run follows its call, and the call's result follows the runs.
    order = [(e.kind, e.agent) for e in events if e.kind in ("tool_call", "tool_result")]
    assert order == [
        ("tool_call", None),
        ("tool_call", "lodging"),
        ("tool_result", "lodging"),
        ("tool_call", "food"),
        ("tool_result", "food"),
        ("tool_result", None),
        ("tool_call", None),
        ("tool_call", "lodging"),
        ("tool_result", "lodging"),
        ("tool_result", None),
        ("tool_call", None),
        ("tool_call", "food"),
        ("tool_result", "food"),
        ("tool_call", "lodging"),
        ("tool_result", "lodging"),
        ("tool_result", None),
        ("tool_call", "cccc"),
        ("tool_result", "cccc"),
    ]
    usages = [(u.agent or "", u.input_tokens) for u in of(events, "usage")]
    assert sorted(usages) == sorted([("", 1000)] * 3 + [("lodging", 500)] * 4 + [("food", 400)] * 2)
    assert events[-1].kind == "session_end" and events[-1].reason == "finished"
    sources = sorted(parsed.sources)
    assert f"{FOLDER}/subagents/aaaa/events/" in "".join(sources)
    assert not [e for e in events if e.kind == "raw" and e.reason != "system prompt"]


def test_a_sub_agent_that_delegates_in_turn(root: Path, tmp_path: Path) -> None:
    """A sub-agent's own sub-agents keep their conversations in `subagents/` of its folder:
    their runs follow its calls, as its subagents; a link back up is not followed."""
    clock = Clock()
    parent = [
        user_message(clock, "Plan a trip"),
        *delegation(clock, {"lodging": "Find hotels"}, "call-a", "r-1"),
    ]
    sub_clock = Clock()
    lodging = [
        user_message(sub_clock, "Find hotels"),
        *delegation(sub_clock, {"prices": "Check prices"}, "call-n", "n-1"),
        agent_message(sub_clock, "Hotel A.", "n-2"),
    ]
    prices = sub_conversation(Clock(), ["Check prices"], "prices")
    folder = write_conversation(tmp_path / "conversations", base_state("/w", {}), parent)
    sub = write_conversation(folder / "subagents", None, lodging, folder="aaaa")
    nested = write_conversation(sub / "subagents", None, prices, folder="dddd")
    (nested / "subagents").mkdir()
    (nested / "subagents" / "up").symlink_to(folder, target_is_directory=True)
    parsed = IMPORTERS["openhands-v1"].parse(folder / "base_state.json")
    assert [(s.agent_id, s.call_id, s.agent) for s in of(parsed.events, "subagent")] == [
        ("lodging", "call-a", None),
        ("prices", "call-n", "lodging"),
    ]
    said = [(e.agent, e.text) for e in of(parsed.events, "user_message")]
    assert said == [(None, "Plan a trip"), ("lodging", "Find hotels"), ("prices", "Check prices")]
    assert f"{FOLDER}/subagents/aaaa/subagents/dddd/events/" in "".join(parsed.sources)
    home = tmp_path / "home"
    conversations = home / ".openhands" / "conversations"
    listed = write_conversation(conversations, base_state(root), conversation(root))
    nested_copy = write_conversation(
        listed / "subagents" / "aaaa" / "subagents", None, prices, "dddd"
    )
    [session] = [s for s in find_sessions(root, home=home, env={}) if s.harness == "openhands-v1"]
    files = [listed / "base_state.json", *(listed / "events").glob("event-*.json")]
    files += (nested_copy / "events").glob("event-*.json")
    assert session.size == sum(path.stat().st_size for path in files)


def test_a_sub_agent_whose_conversation_is_not_kept_is_still_a_subagent(tmp_path: Path) -> None:
    """The task tool's sub-agent conversations are removed when they end, and a delegate's
    are kept only when the conversation persists: their calls still started sub-agents."""
    clock = Clock()
    arguments = {
        "description": "Find the tests",
        "prompt": "List the test files",
        "subagent_type": "explore",
    }
    task = action(clock, "task", "call-t", arguments, "TaskAction", "r-1")
    result = {
        "content": [text("tests/")],
        "is_error": False,
        "task_id": "task_00000001",
        "subagent": "explore",
        "status": "completed",
        "kind": "TaskObservation",
    }
    events = [
        user_message(clock, "Where are the tests?"),
        task,
        observation(clock, "task", "call-t", task["id"], result),
        *delegation(clock, {"lodging": "Find hotels"}, "call-d", "r-2"),
    ]
    folder = write_conversation(tmp_path / "conversations", base_state("/w", {}), events)
    parsed = IMPORTERS["openhands-v1"].parse(folder / "base_state.json")
    subagents = of(parsed.events, "subagent")
    assert [(s.agent_id, s.call_id, s.description, s.agent) for s in subagents] == [
        ("explore", "call-t", "Find the tests", None),
        ("lodging", "call-d", "Find hotels", None),
    ]
    assert [e.kind for e in parsed.events if e.agent is not None] == []


def test_a_branch_left_by_navigating_back_is_abandoned(tmp_path: Path) -> None:
    """The SDK keeps the conversation as a tree (each event's `parent_id`; mid-2026 on):
    navigating back and going on leaves a branch, whose events stay in the log. They are
    abandoned, and the event that starts the new branch follows a rewind to its parent."""
    clock = Clock()
    first = {**user_message(clock, "Name the module"), "parent_id": "__root__"}
    reply = {**agent_message(clock, "Call it util.", "r-1"), "parent_id": first["id"]}
    again = {**user_message(clock, "Shorter?"), "parent_id": reply["id"]}
    short = {**agent_message(clock, "u.", "r-2"), "parent_id": again["id"]}
    running = {
        **clock.stamp(),
        "source": "environment",
        "parent_id": short["id"],
        "key": "execution_status",
        "value": "running",
        "kind": "ConversationStateUpdateEvent",
    }
    instead = {**user_message(clock, "Longer instead"), "parent_id": reply["id"]}
    long = {**agent_message(clock, "utilities.", "r-3"), "parent_id": instead["id"]}
    events = [first, reply, again, short, running, instead, long]
    state = {**base_state("/w", {}), "leaf_event_id": long["id"]}
    folder = write_conversation(tmp_path / "conversations", state, events)
    parsed = IMPORTERS["openhands-v1"].parse(folder / "base_state.json")
    shown = [
        (e.kind, getattr(e, "text", None), e.abandoned)
        for e in parsed.events
        if e.kind in ("user_message", "agent_message", "rewind")
    ]
    assert shown == [
        ("user_message", "Name the module", False),
        ("agent_message", "Call it util.", False),
        ("user_message", "Shorter?", True),
        ("agent_message", "u.", True),
        ("rewind", None, False),
        ("user_message", "Longer instead", False),
        ("agent_message", "utilities.", False),
    ]
    [rewind] = of(parsed.events, "rewind")
    assert rewind.resumes_after.file.endswith(f"event-00001-{reply['id']}.json")
    # Without `leaf_event_id` (HEAD moved past in an older state file) the last event is HEAD.
    del state["leaf_event_id"]
    again_folder = write_conversation(tmp_path / "again", state, events)
    parsed = IMPORTERS["openhands-v1"].parse(again_folder / "base_state.json")
    assert [e.abandoned for e in of(parsed.events, "user_message")] == [False, True, False]
    # A `leaf_event_id` of an event not written yet (a conversation still running): the last
    # event is HEAD, where every step was abandoned.
    state["leaf_event_id"] = "not-written-yet"
    ahead_folder = write_conversation(tmp_path / "ahead", state, events)
    parsed = IMPORTERS["openhands-v1"].parse(ahead_folder / "base_state.json")
    assert [e.abandoned for e in of(parsed.events, "user_message")] == [False, True, False]


def test_an_acp_tool_calls_text_blocks_are_its_output(tmp_path: Path) -> None:
    """The SDK stores an ACP tool call's content as the ACP schema's models dump them: a
    text is wrapped in a `content` block. Without a `raw_output`, those texts are the
    result's output; a block of another kind (a terminal) is kept raw after it."""
    clock = Clock()
    started = {
        **clock.stamp(),
        "source": "agent",
        "tool_call_id": "acp-2",
        "title": "Run the tests",
        "status": "in_progress",
        "tool_kind": "execute",
        "raw_input": {"command": "pytest -q"},
        "is_error": False,
        "kind": "ACPToolCallEvent",
    }
    terminal = {"type": "terminal", "terminal_id": "term-1"}
    done = {
        **started,
        **clock.stamp(),
        "status": "completed",
        "content": [
            {"type": "content", "content": {"type": "text", "text": "3 passed"}},
            {"type": "content", "text": "in 0.12s"},
            terminal,
        ],
    }
    folder = write_conversation(tmp_path, base_state(tmp_path / "work"), [started, done])
    parsed = V1.parse(folder / "base_state.json")
    (result,) = of(parsed.events, "tool_result")
    assert (result.call_id, result.ok, result.output) == ("acp-2", True, "3 passed\nin 0.12s")
    raws = of(parsed.events, "raw")
    assert [(r.record, r.reason) for r in raws] == [
        (terminal, "ACP tool call content block of a kind not understood")
    ]
    assert parsed.events.index(raws[0]) == parsed.events.index(result) + 1


def test_an_acp_tool_calls_image_audio_and_blob_are_named_without_their_bytes(
    tmp_path: Path,
) -> None:
    """An image, audio or a resource's blob in an ACP tool call's content was kept raw whole,
    base64 bytes and all, and not counted. The output names each; the block is kept without
    its bytes and counted in `inline_data`, as the images of messages and observations."""
    clock = Clock()
    started = {
        **clock.stamp(),
        "source": "agent",
        "tool_call_id": "acp-3",
        "title": "Screenshot",
        "status": "in_progress",
        "tool_kind": "other",
        "raw_input": {},
        "is_error": False,
        "kind": "ACPToolCallEvent",
    }
    data = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJ" * 20
    image = {"type": "image", "mimeType": "image/png", "data": data}
    audio = {"type": "audio", "mimeType": "audio/wav", "data": data}
    resource = {"uri": "file:///w/shot.png", "mimeType": "image/png", "blob": data}
    done = {
        **started,
        **clock.stamp(),
        "status": "completed",
        "content": [
            {"type": "content", "content": {"type": "text", "text": "took it"}},
            {"type": "content", "content": image},
            audio,
            {"type": "content", "content": {"type": "resource", "resource": resource}},
        ],
    }
    folder = write_conversation(tmp_path, base_state(tmp_path / "work"), [started, done])
    parsed = V1.parse(folder / "base_state.json")
    (result,) = of(parsed.events, "tool_result")
    assert result.output == "took it\n[image]\n[audio]\n[resource]"
    raws = of(parsed.events, "raw")
    assert [r.record for r in raws] == [
        {"type": "content", "content": {"type": "image", "mimeType": "image/png"}},
        {"type": "audio", "mimeType": "audio/wav"},
        {
            "type": "content",
            "content": {
                "type": "resource",
                "resource": {"uri": "file:///w/shot.png", "mimeType": "image/png"},
            },
        },
    ]
    assert all(data not in str(r.record) for r in raws)
    assert parsed.dropped["inline_data"] == 3


def test_less_common_event_kinds(tmp_path: Path) -> None:
    clock = Clock()
    acp = {
        **clock.stamp(),
        "source": "agent",
        "tool_call_id": "acp-1",
        "title": "Edit src/app.py",
        "status": "in_progress",
        "tool_kind": "edit",
        "raw_input": {"file_path": "/w/src/app.py"},
        "is_error": False,
        "kind": "ACPToolCallEvent",
    }
    done = {
        **acp,
        **clock.stamp(),
        "status": "completed",
        "raw_output": "ok",
        "content": [
            {"type": "diff", "path": "/w/src/app.py", "old_text": "a\n", "new_text": "b\n"}
        ],
    }
    events = [
        acp,
        done,
        {**clock.stamp(), "source": "environment", "kind": "CondensationRequest"},
        {
            **clock.stamp(),
            "source": "agent",
            "prompt_token_ids": [1, 2],
            "response_token_ids": [3],
            "kind": "TokenEvent",
        },
        {
            **clock.stamp(),
            "source": "hook",
            "hook_event_type": "PreToolUse",
            "hook_command": "./check.sh",
            "tool_name": "terminal",
            "success": True,
            "blocked": False,
            "exit_code": 0,
            "stdout": "",
            "stderr": "",
            "kind": "HookExecutionEvent",
        },
        {
            **clock.stamp(),
            "source": "environment",
            "key": "execution_status",
            "value": "error",
            "kind": "ConversationStateUpdateEvent",
        },
        {
            **clock.stamp(),
            "source": "environment",
            "code": "LLMBadRequestError",
            "detail": "context window exceeded",
            "kind": "ConversationErrorEvent",
        },
        {**clock.stamp(), "source": "user", "kind": "InterruptEvent"},
    ]
    folder = write_conversation(tmp_path, base_state("/w", usage={}, status="error"), events)
    parsed = V1.parse(folder / "base_state.json")
    assert kinds(parsed.events) == [
        "session_start",
        "tool_call",
        "tool_result",
        "file_change",
        "raw",
        "error",
        "error",
        "error",
        "session_end",
    ]
    call, result, change = parsed.events[1:4]
    assert (call.call_id, call.name, call.input) == (
        "acp-1",
        "edit",
        {"file_path": "/w/src/app.py"},
    )
    assert (result.ok, result.output) == (True, "ok")
    assert change.diff == "--- a//w/src/app.py\n+++ b//w/src/app.py\n@@ -1 +1 @@\n-a\n+b\n"
    assert parsed.events[4].reason == "hook execution"
    errors = of(parsed.events, "error")
    assert [(e.message, e.interrupt) for e in errors] == [
        ("the conversation is error", False),
        ("context window exceeded", False),
        ("interrupted by the user", True),
    ]
    assert parsed.events[-1].reason == "error"
    assert parsed.dropped == {"condensation_request": 1, "token_ids": 1}


# -- detection ----------------------------------------------------------------------------------


def test_sniff_claims_v1_files_and_nothing_else(tmp_path: Path) -> None:
    events = conversation("/work/app")
    state = base_state("/work/app")
    assert V1.sniff(compact(state))
    assert V1.sniff(json.dumps(state, indent=2))
    for event in events:
        assert V1.sniff(compact(event)), event["kind"]
    # a first event longer than the sniffed bytes: its leading members decide
    long_prompt = system_prompt(Clock())
    long_prompt["system_prompt"]["text"] = "x" * (2 * SNIFF_BYTES)
    assert V1.sniff(compact(long_prompt)[:SNIFF_BYTES])
    huge_agent = {**state, "agent": {**state["agent"], "mcp_config": {"x": "y" * SNIFF_BYTES}}}
    assert V1.sniff(compact(huge_agent)[:SNIFF_BYTES])
    # early versions wrote the dotted class path as the kind
    assert V1.sniff('{"id":"e-0","source":"user","kind":"openhands.sdk.event.MessageEvent"}')
    # the V0 formats: integer ids, string actions, arrays, an evaluation's history
    v0_event = {"id": 4, "timestamp": "2025-06-01T10:00:05", "source": "agent", "message": ""}
    assert not V1.sniff(json.dumps({**v0_event, "action": "run", "args": {}}))
    assert not V1.sniff(json.dumps([{**v0_event, "action": "run", "args": {}}]))
    assert not V1.sniff(json.dumps({"instance_id": "x", "history": [v0_event]}))
    assert not V1.sniff(json.dumps([compact(events[1])]))
    # other formats' records
    assert not V1.sniff('{"schema_version": "ATIF-v1.2", "session_id": "s", "steps": []}')
    assert not V1.sniff('{"sessionId": "s", "projectHash": "p", "messages": []}')
    assert not V1.sniff('{"timestamp": "t", "type": "session_meta", "payload": {"id": "x"}}')
    assert not V1.sniff('{"kind":"session_start","session":"s","source":{"file":"f","line":1}}')
    assert not V1.sniff('{"id": "x", "source": "user", "kind": "Unrelated"}')
    for path in sorted(SAMPLES.rglob("*")) if SAMPLES.is_dir() else []:
        if path.is_file():
            head = path.read_bytes()[:SNIFF_BYTES].decode("utf-8", "replace")
            assert not V1.sniff(head), path


def test_detection_by_content(tmp_path: Path) -> None:
    folder = write_conversation(tmp_path, base_state("/work/app"), conversation("/work/app"))
    assert detect(folder / "base_state.json") is V1
    for event_file in (folder / "events").glob("event-*.json"):
        assert detect(event_file) is V1
    renamed = tmp_path / "state-copy.txt"
    renamed.write_bytes((folder / "base_state.json").read_bytes())
    assert detect(renamed) is V1
    v0 = tmp_path / "trajectory.json"
    v0.write_text(
        json.dumps(
            [
                {
                    "id": 0,
                    "timestamp": "2025-06-01T10:00:00",
                    "source": "user",
                    "message": "hi",
                    "action": "message",
                    "args": {"content": "hi"},
                }
            ]
        ),
        encoding="utf-8",
    )
    assert detect(v0) is importer("openhands")


# -- import and discovery -----------------------------------------------------------------------


def test_importing_twice_changes_nothing(root: Path, tmp_path: Path) -> None:
    conversations = tmp_path / "conversations"
    events = conversation(root)
    folder = write_conversation(conversations, base_state(root), events)
    target = resolve_target(root)
    first = import_transcript(target, folder / "base_state.json")
    assert first.changed and first.format == "openhands-v1"
    assert first.session == CONVERSATION
    trajectory = working_folder(target).path
    files = {p: p.read_bytes() for p in sorted(trajectory.rglob("*")) if p.is_file()}
    times = {p: p.stat().st_mtime_ns for p in files}

    again = import_transcript(target, folder / "base_state.json")
    assert not again.changed
    assert not import_transcript(target, folder).changed  # the folder stands for its state
    # any file of the conversation is the same session from the same sources
    event_file = sorted((folder / "events").glob("event-*.json"))[5]
    assert not import_transcript(target, event_file).changed
    assert {p: p.read_bytes() for p in files} == files
    assert {p: p.stat().st_mtime_ns for p in files} == times

    meta = json.loads((trajectory / "meta.json").read_text(encoding="utf-8"))
    assert len(meta["sources"]) == 1 + len(events)
    assert {s["format"] for s in meta["sources"]} == {"openhands-v1"}
    assert meta["harnesses"] == [{"name": "openhands", "version": None}]
    assert meta["files"] == [{"path": "src/app.py", "added": 1, "removed": 1}]
    assert meta["totals"]["output_tokens"] == 300 + 200 + 100 + 400 + 12
    assert meta["brief"] == "Fix line 5 of src/app.py"
    lines = (trajectory / "events.jsonl").read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[0])["cwd"] == "."

    # a new event changes the session, and only its file is new among the sources
    (folder / "events" / f"event-{len(events):05d}-extra.json").write_text(
        compact(user_message(Clock(), "One more thing")), encoding="utf-8"
    )
    grown = import_transcript(target, folder / "base_state.json")
    assert grown.changed and grown.events == first.events + 1


@NO_LOCAL_WORKSPACE
def test_a_sandboxs_workspace_stands_for_the_repository(root: Path, tmp_path: Path) -> None:
    """The SDK's agent server works in its container's `/workspace/project`: its paths are
    the repository's, relative once imported; `/workspace/other` stays as it was."""
    events = conversation("/workspace/project")
    events.append(
        user_message(Clock(), "Also compare with /workspace/other/app.py and /workspace/project")
    )
    folder = write_conversation(
        tmp_path / "conversations", base_state("/workspace/project"), events
    )
    result = import_transcript(resolve_target(root), folder / "base_state.json")
    assert not result.outside
    trajectory = working_folder(resolve_target(root)).path
    lines = (trajectory / "events.jsonl").read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    assert records[0]["cwd"] == "."
    [change] = [r for r in records if r["kind"] == "file_change"]
    assert change["path"] == "src/app.py"
    assert change["diff"].startswith("--- a/src/app.py\n+++ b/src/app.py\n")
    said = [r["text"] for r in records if r["kind"] == "user_message"]
    assert said[-1] == "Also compare with /workspace/other/app.py and ."
    meta = json.loads((trajectory / "meta.json").read_text(encoding="utf-8"))
    assert meta["files"] == [{"path": "src/app.py", "added": 1, "removed": 1}]


@NO_LOCAL_WORKSPACE
def test_a_repository_cloned_into_the_working_folder_stands_for_the_repository(
    root: Path, tmp_path: Path
) -> None:
    """The OpenHands app server works in `/workspace/project` and clones the repository a
    conversation was started on into `/workspace/project/<name>`, which nothing in the
    conversation names: the one folder its paths lead into, whose files are the repository's,
    is the repository."""
    events = conversation("/workspace/project/shop")
    events.append(user_message(Clock(), "See /workspace/project/shop/src/app.py"))
    folder = write_conversation(
        tmp_path / "conversations", base_state("/workspace/project"), events
    )
    result = import_transcript(resolve_target(root), folder / "base_state.json")
    assert not result.outside
    trajectory = working_folder(resolve_target(root)).path
    lines = (trajectory / "events.jsonl").read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    assert records[0]["cwd"] == "/workspace/project"
    [change] = [r for r in records if r["kind"] == "file_change"]
    assert change["path"] == "src/app.py"
    said = [r["text"] for r in records if r["kind"] == "user_message"]
    assert said[-1] == "See src/app.py"


def test_sessions_lists_the_conversations_of_this_repository(root: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    conversations = home / ".openhands" / "conversations"
    write_conversation(conversations, base_state(root), conversation(root))
    other = base_state("/somewhere/else")
    other["id"] = "0a0b0c0d-0000-4000-8000-000000000000"
    write_conversation(conversations, other, conversation("/else"), folder="0a0b0c0d")
    write_conversation(conversations, None, conversation(root), folder="no-state")
    found = [s for s in find_sessions(root, home=home, env={}) if s.harness == "openhands-v1"]
    assert len(found) == 1
    (session,) = found
    assert session.session_id == CONVERSATION
    assert session.path == conversations / FOLDER / "base_state.json"
    assert session.started == "2026-06-16T05:39:01.809928"
    assert session.first_prompt == "Fix line 5 of src/app.py"
    # its size is the whole conversation's: the state and every event file
    files = [conversations / FOLDER / "base_state.json"]
    files += (conversations / FOLDER / "events").glob("event-*.json")
    assert session.size == sum(path.stat().st_size for path in files)
    # and its sub-agents' event files, which the import reads too
    sub = write_conversation(
        conversations / FOLDER / "subagents", None, [user_message(Clock(), "A task")], "sub"
    )
    [session] = [s for s in find_sessions(root, home=home, env={}) if s.harness == "openhands-v1"]
    files += (sub / "events").glob("event-*.json")
    assert session.size == sum(path.stat().st_size for path in files)
    # the folder the CLI is told to use
    moved = tmp_path / "elsewhere"
    write_conversation(moved, base_state(root / "src"), conversation(root), folder="moved")
    env = {"OPENHANDS_CONVERSATIONS_DIR": str(moved)}
    found = [s for s in find_sessions(root, home=home, env=env) if s.harness == "openhands-v1"]
    assert [s.path.parent.name for s in found] == ["moved"]
    env = {"OPENHANDS_PERSISTENCE_DIR": str(home / ".openhands")}
    found = [s for s in find_sessions(root, home=None, env=env) if s.harness == "openhands-v1"]
    assert [s.session_id for s in found] == [CONVERSATION]


@pytest.mark.parametrize("state", ["{", "not json", None])
def test_a_conversation_without_a_readable_state(tmp_path: Path, state: str | None) -> None:
    folder = write_conversation(tmp_path, base_state("/w"), conversation("/w"))
    if state is None:
        (folder / "base_state.json").unlink()
    else:
        (folder / "base_state.json").write_text(state, encoding="utf-8")
    parsed = V1.parse(sorted((folder / "events").glob("event-*.json"))[0])
    if state is None:
        assert parsed.problems == []
        assert f"{FOLDER}/base_state.json" not in parsed.sources
    else:
        assert parsed.problems[0].source == f"{FOLDER}/base_state.json"
    assert len(parsed.sources) == len(list((folder / "events").glob("event-*.json"))) + (
        state is not None
    )
    assert parsed.session_id == FOLDER
    assert len(of(parsed.events, "tool_call")) == 5
    assert of(parsed.events, "session_start")[0].cwd == "/w"  # from the terminal's metadata


def test_the_command_line_lists_and_imports_a_conversation(
    stet: Callable[..., tuple[int, str, str]],
    root: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    home = tmp_path / "home"
    for name in ("OPENHANDS_CONVERSATIONS_DIR", "OPENHANDS_PERSISTENCE_DIR"):
        monkeypatch.delenv(name, raising=False)
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    write_conversation(home / ".openhands" / "conversations", base_state(root), conversation(root))
    code, out, _ = stet("trajectory", "sessions", "--harness", "openhands-v1", "-C", str(root))
    assert code == 0
    (row,) = out.splitlines()
    assert row.startswith(f"  2026-06-16T05:39:01  openhands-v1 {CONVERSATION[:12]}  ")
    assert row.endswith("Fix line 5 of src/app.py")
    code, out, _ = stet(
        "trajectory", "import", "--latest", "--harness", "openhands-v1", "--json", "-C", str(root)
    )
    assert code == 0
    assert (json.loads(out)["session"], json.loads(out)["format"]) == (CONVERSATION, "openhands-v1")


def test_sessions_read_no_event_through_a_link_out_of_the_conversation(
    root: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    conversations = home / ".openhands" / "conversations"
    folder = write_conversation(conversations, base_state(root), conversation(root))
    outside = tmp_path / "outside.json"
    outside.write_text(compact(user_message(Clock(), "Read from elsewhere")), encoding="utf-8")
    # The conversation's request, replaced by a link to a file outside its folder.
    [request] = [
        path
        for path in (folder / "events").glob("event-*.json")
        if "Fix line 5" in path.read_text(encoding="utf-8")
    ]
    request.unlink()
    request.symlink_to(outside)
    [session] = [s for s in find_sessions(root, home=home, env={}) if s.harness == "openhands-v1"]
    assert session.first_prompt != "Read from elsewhere"
