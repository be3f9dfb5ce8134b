"""The SWE-agent `.traj` and mini-swe-agent trajectory importers: hand-written files in the
harnesses' shapes (written with `json.dumps(indent=2)` as both write them), odd input, and
the public sample."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any, TypeVar

import pytest
from samples import sample

from stet_lsp.core.errors import StetError
from stet_lsp.trajectory.events import (
    AgentMessage,
    Error,
    EventBase,
    FileChange,
    RawEvent,
    Reasoning,
    SessionEnd,
    SessionStart,
    ToolCall,
    ToolResult,
    Usage,
    UserMessage,
)
from stet_lsp.trajectory.importers import detect
from stet_lsp.trajectory.importers.base import SNIFF_BYTES
from stet_lsp.trajectory.importers.swe_agent import IMPORTERS

SWE = IMPORTERS["swe-agent"]
MINI = IMPORTERS["mini-swe-agent"]
Kind = TypeVar("Kind", bound=EventBase)

PATCH = (
    "diff --git a/src/app.py b/src/app.py\n"
    "index 1111111..2222222 100644\n"
    "--- a/src/app.py\n"
    "+++ b/src/app.py\n"
    "@@ -10,3 +10,4 @@ def main():\n"
    "     a = 1\n"
    "-    b = 2\n"
    "+    b = 3\n"
    "+    c = 4\n"
    "     return a\n"
    "diff --git a/docs/new.md b/docs/new.md\n"
    "new file mode 100644\n"
    "index 0000000..3333333\n"
    "--- /dev/null\n"
    "+++ b/docs/new.md\n"
    "@@ -0,0 +1 @@\n"
    "+hello\n"
)


def of(events: list[EventBase], kind: type[Kind]) -> list[Kind]:
    return [event for event in events if isinstance(event, kind)]


def write_text(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def write(tmp_path: Path, value: Any, name: str, indent: int | None = 2) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(value, indent=indent), encoding="utf-8")
    return path


def line_of(path: Path, needle: str, occurrence: int = 1) -> int:
    found = 0
    for number, line in enumerate(path.read_text().split("\n"), 1):
        if needle in line:
            found += 1
            if found == occurrence:
                return number
    raise AssertionError(needle)


def swe_agent_1x() -> dict[str, Any]:
    """A SWE-agent 1.x run with a function-calling model."""
    return {
        "trajectory": [
            {
                "action": "str_replace_editor view /repo/src/app.py",
                "observation": "1 a = 1",
                "response": "Let me look at the file.",
                "thought": "Let me look at the file.",
                "execution_time": 0.1,
                "state": {"open_file": "n/a", "working_dir": "/repo"},
                "query": [{"role": "system", "content": "..."}],
                "extra_info": {},
            },
            {
                "action": "",
                "observation": "",
                "response": "I am stuck.",
                "thought": "",
                "execution_time": 0.0,
                "state": {},
                "query": [],
                "extra_info": {},
            },
            "not a step",
            {
                "action": "submit",
                "observation": PATCH,
                "response": "Done.",
                "thought": "Done.",
                "execution_time": 0.2,
                "state": {},
                "query": [],
                "extra_info": {},
            },
        ],
        "history": [
            {
                "role": "system",
                "content": "SETTING: ...",
                "agent": "main",
                "message_type": "system_prompt",
            },
            {
                "role": "user",
                "content": "Here is a demonstration...",
                "agent": "main",
                "is_demo": True,
                "message_type": "demonstration",
            },
            {
                "role": "user",
                "content": "Fix the bug in app.py",
                "agent": "main",
                "message_type": "observation",
            },
            {
                "role": "assistant",
                "content": "Let me look at the file.",
                "thought": "Let me look at the file.",
                "action": "str_replace_editor view /repo/src/app.py",
                "agent": "main",
                "tool_calls": [
                    {
                        "id": "call_view",
                        "type": "function",
                        "function": {"name": "str_replace_editor", "arguments": "{}"},
                    }
                ],
                "message_type": "action",
                "thinking_blocks": [
                    {"type": "thinking", "thinking": "The bug is in main.", "signature": "x"},
                    {"type": "redacted_thinking", "data": "opaque"},
                ],
            },
            {
                "role": "tool",
                "content": "1 a = 1",
                "agent": "main",
                "message_type": "observation",
                "tool_call_ids": ["call_view"],
            },
            {
                "role": "assistant",
                "content": "I am stuck.",
                "thought": "",
                "action": "",
                "agent": "main",
                "message_type": "action",
            },
            {
                "role": "assistant",
                "content": "x",
                "thought": "x",
                "action": "x",
                "agent": "main",
                "message_type": "action",
            },
            {
                "role": "assistant",
                "content": "Done.",
                "thought": "Done.",
                "action": "submit",
                "agent": "main",
                "tool_calls": [
                    {
                        "id": "call_submit",
                        "type": "function",
                        "function": {"name": "submit", "arguments": "{}"},
                    }
                ],
                "message_type": "action",
            },
        ],
        "info": {
            "swe_agent_hash": "abc",
            "swe_agent_version": "1.1.0",
            "submission": PATCH,
            "exit_status": "submitted",
            "edited_files30": "...",
            "model_stats": {
                "instance_cost": 0.42,
                "tokens_sent": 12000,
                "tokens_received": 345,
                "api_calls": 4,
            },
        },
        "replay_config": json.dumps(
            {
                "agent": {"model": {"name": "claude-sonnet-4"}},
                "env": {"repo": {"base_commit": "deadbeef"}},
                "problem_statement": {"id": "repo__issue-1"},
            }
        ),
        "environment": "main",
    }


def test_swe_agent_1x(tmp_path: Path) -> None:
    path = write(tmp_path, swe_agent_1x(), "repo__issue-1.traj")
    parsed = SWE.parse(path)
    events = parsed.events
    assert [e.kind for e in events] == [
        "session_start",
        "raw",
        "raw",
        "raw",
        "user_message",
        "reasoning",
        "agent_message",
        "tool_call",
        "tool_result",
        "agent_message",
        "raw",
        "agent_message",
        "tool_call",
        "tool_result",
        "file_change",
        "file_change",
        "usage",
        "raw",
        "session_end",
    ]
    start = events[0]
    assert isinstance(start, SessionStart)
    assert (start.harness, start.harness_version, start.model) == (
        "swe-agent",
        "1.1.0",
        "claude-sonnet-4",
    )
    assert (start.cwd, start.commit, start.title) == ("/repo", "deadbeef", "repo__issue-1")
    assert parsed.dropped == Counter({"demonstration": 1, "opaque_reasoning": 1, "edited_files": 1})
    # The environment the run ran in: its name, and its configuration from replay_config.
    environment, configuration = events[1:3]
    assert isinstance(environment, RawEvent) and isinstance(configuration, RawEvent)
    assert (environment.record, environment.source.pointer) == ("main", "/environment")
    assert environment.source.line == line_of(path, '"environment"')
    assert configuration.record == {"repo": {"base_commit": "deadbeef"}}
    assert configuration.source.pointer == "/replay_config/env"
    system = events[3]
    assert isinstance(system, RawEvent) and system.reason == "system prompt"
    assert system.source.pointer == "/history/0"
    user = events[4]
    assert isinstance(user, UserMessage) and user.text == "Fix the bug in app.py"
    assert of(events, Reasoning)[0].text == "The bug is in main."
    call, result = of(events, ToolCall)[0], of(events, ToolResult)[0]
    assert (call.call_id, call.name, call.input) == (
        "call_view",
        "str_replace_editor",
        {"command": "str_replace_editor view /repo/src/app.py"},
    )
    assert (result.call_id, result.output, result.ok) == ("call_view", "1 a = 1", True)
    assert call.source.pointer == "/trajectory/0"
    assert call.source.line == line_of(path, '"trajectory"') + 1
    assert of(events, AgentMessage)[1].text == "I am stuck."
    bad = events[10]
    assert isinstance(bad, RawEvent) and bad.record == "not a step"
    assert bad.source.pointer == "/trajectory/2"
    # The patch: one anchored change per file, right after the submit call's result.
    submit = of(events, ToolCall)[1]
    assert submit.call_id == "call_submit"
    changes = of(events, FileChange)
    assert [(c.path, c.operation, c.call_id, c.anchored) for c in changes] == [
        ("src/app.py", "modify", "call_submit", True),
        ("docs/new.md", "create", "call_submit", True),
    ]
    assert changes[0].diff.startswith("--- a/src/app.py\n+++ b/src/app.py\n@@ -10,3 +10,4 @@")
    assert (changes[0].added, changes[0].removed) == (2, 1)
    assert changes[1].diff == "--- /dev/null\n+++ b/docs/new.md\n@@ -0,0 +1 @@\n+hello\n"
    usage = events[-3]
    assert isinstance(usage, Usage)
    assert (usage.input_tokens, usage.output_tokens, usage.cost_usd, usage.cost_basis) == (
        12000,
        345,
        0.42,
        "reported",
    )
    assert usage.model == "claude-sonnet-4"
    assert usage.requests == 4  # the run's totals: model_stats.api_calls
    # What info holds besides the end, the submission, the usage and the version.
    information = events[-2]
    assert isinstance(information, RawEvent) and information.source.pointer == "/info"
    assert information.record == {"swe_agent_hash": "abc"}
    end = events[-1]
    assert isinstance(end, SessionEnd) and end.reason == "submitted"
    assert end.source.line == line_of(path, '"info"')
    assert {e.session for e in events} == {parsed.session_id}


def test_swe_agent_0x_and_compact_json(tmp_path: Path) -> None:
    data = {
        "environment": "swe_main",
        "trajectory": [
            {
                "action": "create reproduce.py\n",
                "observation": "[File: /repo/reproduce.py (1 lines total)]",
                "response": "First, reproduce.\n\n```\ncreate reproduce.py\n```",
                "state": '{"open_file": "n/a", "working_dir": "/repo"}\n',
                "thought": "First, reproduce.\n\n",
            }
        ],
        "history": [
            {"role": "system", "content": "SETTING", "agent": "primary"},
            {
                "agent": "primary",
                "content": "Here is a demonstration",
                "is_demo": True,
                "role": "user",
            },
            {"role": "user", "content": "ISSUE: it breaks", "agent": "primary"},
            {
                "role": "assistant",
                "content": "...",
                "thought": "...",
                "action": "create reproduce.py\n",
            },
        ],
        "info": {
            "exit_status": "exit_cost",
            "model_stats": {
                "instance_cost": 1.5,
                "tokens_sent": 10,
                "tokens_received": 2,
                "api_calls": 1,
            },
        },
    }
    path = write(tmp_path, data, "old.traj", indent=None)
    parsed = SWE.parse(path)
    kinds = [e.kind for e in parsed.events]
    assert kinds == [
        "session_start",
        "raw",
        "raw",
        "user_message",
        "agent_message",
        "tool_call",
        "tool_result",
        "usage",
        "session_end",
    ]
    environment = parsed.events[1]
    assert isinstance(environment, RawEvent) and environment.record == "swe_main"
    assert parsed.dropped["demonstration"] == 1
    start = parsed.events[0]
    assert isinstance(start, SessionStart) and start.cwd == "/repo"
    call = of(parsed.events, ToolCall)[0]
    assert (call.call_id, call.name) == ("step-1", "create")
    assert of(parsed.events, AgentMessage)[0].text == "First, reproduce."
    # One line of compact JSON: every event points at line 1.
    assert {e.source.line for e in parsed.events} == {1}
    end = parsed.events[-1]
    assert isinstance(end, SessionEnd) and end.reason == "exit_cost"


def test_a_submission_that_is_no_patch_is_kept_raw(tmp_path: Path) -> None:
    """A run that changes no file (SWE-agent's capture-the-flag demonstrations submit a flag)
    keeps what it submitted, after the submit's result, where a patch's changes would be."""
    flag = "\nflag{an example flag}\n"
    data = {
        "environment": "swe_main",
        "trajectory": [
            {
                "action": "submit 'flag{an example flag}'\n",
                "observation": flag,
                "response": "Found it.\n\n```\nsubmit 'flag{an example flag}'\n```",
                "state": '{"open_file": "n/a", "working_dir": "/ctf"}',
                "thought": "Found it.\n\n",
            }
        ],
        "history": [{"role": "user", "content": "Find the flag", "agent": "primary"}],
        "info": {"exit_status": "submitted", "submission": flag},
    }
    parsed = SWE.parse(write(tmp_path, data, "ctf.traj"))
    assert [e.kind for e in parsed.events][3:] == [
        "agent_message",
        "tool_call",
        "tool_result",
        "raw",
        "session_end",
    ]
    submitted = of(parsed.events, RawEvent)[-1]
    assert submitted.record == flag and submitted.source.pointer == "/info/submission"
    assert submitted.reason == "the run's submission, which is no patch"


def ctf_run(model_stats: Any) -> dict[str, Any]:
    """A one-step run whose `model_stats` is as given."""
    step = {
        "action": "ls\n",
        "observation": "flag.txt\n",
        "response": "Look.\n\n```\nls\n```",
        "state": '{"open_file": "n/a", "working_dir": "/ctf"}',
        "thought": "Look.\n\n",
    }
    history = [{"role": "user", "content": "Find the flag", "agent": "primary"}]
    info = {"exit_status": "submitted", "model_stats": model_stats}
    return {"environment": "swe_main", "trajectory": [step], "history": history, "info": info}


def test_model_stats_written_as_a_python_repr_give_the_usage(tmp_path: Path) -> None:
    """Some SWE-agent runs (its capture-the-flag demonstrations among them) wrote
    `model_stats` as the Python repr of the dict: a flat dict literal is read (as a literal,
    never run) for the usage, and its other figures are kept raw as those of an object are."""
    stats = "{'total_cost': 2.5, 'instance_cost': 0.75, 'tokens_sent': 1200, 'tokens_received': 80, 'api_calls': 3}"
    parsed = SWE.parse(write(tmp_path, ctf_run(stats), "ctf.traj"))
    (usage,) = of(parsed.events, Usage)
    assert (usage.input_tokens, usage.output_tokens, usage.requests) == (1200, 80, 3)
    assert (usage.cost_usd, usage.cost_basis) == (0.75, "reported")
    assert usage.source.pointer == "/info/model_stats"
    information = of(parsed.events, RawEvent)[-1]
    assert information.record == {"model_stats": {"total_cost": 2.5}}


@pytest.mark.parametrize(
    "stats",
    [
        "__import__('os').getcwd()",
        "{'instance_cost': 1e999}",
        "{'instance_cost': [1, 2]}",
        "{1: 2}",
        "{'instance_cost': 0.5, " + "'x': 0, " * 1000 + "}",
        "not a dict",
        # a hex literal of thousands of digits: no JSON reader takes such an int back
        pytest.param("{'instance_cost': 0.5, 'x': 0x" + "f" * 4000 + "}", id="hex-other"),
        pytest.param("{'instance_cost': 0x" + "f" * 4000 + "}", id="hex-cost"),
        pytest.param("{'tokens_sent': -0x" + "f" * 4000 + "}", id="hex-tokens"),
        pytest.param("{'api_calls': " + str(2**63) + "}", id="past-2**63"),
    ],
)
def test_model_stats_that_are_no_plain_dict_literal_stay_raw(tmp_path: Path, stats: str) -> None:
    parsed = SWE.parse(write(tmp_path, ctf_run(stats), "ctf.traj"))
    assert not of(parsed.events, Usage)
    information = of(parsed.events, RawEvent)[-1]
    assert information.record == {"model_stats": stats}


def test_model_stats_figures_no_count_or_cost_holds_are_left_out(tmp_path: Path) -> None:
    """A cost, token or request count past what a run reports (an int too large for a float,
    one past 2**63, an infinity) gives no cost, no tokens and no count, never an error."""
    stats = {
        "instance_cost": 10**400,
        "tokens_sent": 10**400,
        "tokens_received": 1e300,
        "api_calls": 10**400,
    }
    parsed = SWE.parse(write(tmp_path, ctf_run(stats), "ctf.traj"))
    (usage,) = of(parsed.events, Usage)
    assert (usage.cost_usd, usage.input_tokens, usage.output_tokens) == (None, 0, 0)
    assert usage.requests is None
    stats = {"instance_cost": 2.0**64, "tokens_sent": 2**63, "tokens_received": 12, "api_calls": 2}
    parsed = SWE.parse(write(tmp_path, ctf_run(stats), "ctf.traj"))
    (usage,) = of(parsed.events, Usage)
    assert (usage.cost_usd, usage.input_tokens, usage.output_tokens) == (None, 0, 12)
    assert usage.requests == 2
    text = write(tmp_path, ctf_run({"instance_cost": 0.5}), "ctf.traj").read_text()
    infinite = write_text(tmp_path / "inf.traj", text.replace("0.5", "Infinity"))
    (usage,) = of(SWE.parse(infinite).events, Usage)
    assert usage.cost_usd is None


def test_swe_agent_retry_attempts(tmp_path: Path) -> None:
    attempt = swe_agent_1x()
    data = {"attempts": [attempt, dict(attempt, info={"exit_status": "exit_format"})]}
    data |= attempt
    parsed = SWE.parse(write(tmp_path, data, "retry.traj"))
    starts = of(parsed.events, SessionStart)
    assert [s.session for s in starts] == [
        f"{parsed.session_id}-attempt-1",
        f"{parsed.session_id}-attempt-2",
    ]
    assert [e.reason for e in of(parsed.events, SessionEnd)] == ["submitted", "exit_format"]
    assert of(parsed.events, ToolCall)[0].source.pointer == "/attempts/0/trajectory/0"


def test_swe_agent_odd_input(tmp_path: Path) -> None:
    whole = SWE.parse(write(tmp_path, swe_agent_1x(), "whole.traj"))
    text = json.dumps(swe_agent_1x(), indent=2)
    # Cut inside the step that submits: those before it are read, and the problem says
    # where it stopped.
    cut_at = text.index("submit")
    truncated = tmp_path / "cut.traj"
    truncated.write_text(text[:cut_at], encoding="utf-8")
    parsed = SWE.parse(truncated)
    (problem,) = parsed.problems
    assert problem.source == "cut.traj" and "not JSON" in problem.message
    assert problem.line == text[:cut_at].count("\n") + 1
    calls = [event.input for event in of(parsed.events, ToolCall)]
    assert calls and calls == [event.input for event in of(whole.events, ToolCall)][: len(calls)]
    assert len(calls) < len(of(whole.events, ToolCall))
    with pytest.raises(StetError, match="not JSON"):
        SWE.parse(write_text(tmp_path / "nothing.traj", "{"))
    listed = write(tmp_path, [1, 2], "list.traj")
    with pytest.raises(StetError):
        SWE.parse(listed)
    # A history or an info of the wrong shape is kept as it is, not left out.
    shapes = swe_agent_1x() | {"history": {"oops": []}, "info": ["no", "object"]}
    odd = SWE.parse(write(tmp_path, shapes, "shapes.traj"))
    raws = {(e.source.pointer, e.reason) for e in of(odd.events, RawEvent)}
    assert {("/history", "history that is no list"), ("/info", "info that is no object")} <= raws
    data = swe_agent_1x()
    big = "y" * (2 * 1024 * 1024)
    data["trajectory"][0]["observation"] = big
    path = write(tmp_path, data, "big.traj")
    raw = path.read_bytes().replace(b"Fix the bug", b"Fix the \xff bug")
    path.write_bytes(raw)
    parsed = SWE.parse(path)
    assert of(parsed.events, ToolResult)[0].output == big
    assert of(parsed.events, UserMessage)[0].text == "Fix the \ufffd bug in app.py"


def demonstration() -> dict[str, Any]:
    """A SWE-agent demonstration that holds only its `history` (no `trajectory`, `info`):
    a function-calling model's actions, each answered by the tool message naming its call,
    and the patch printed by `submit` as SWE-agent's shell prints it."""

    def action(
        call: str, name: str, command: str, thought: str, arguments: dict[str, Any]
    ) -> dict[str, Any]:
        function = {"arguments": json.dumps(arguments), "name": name}
        return {
            "role": "assistant",
            "content": thought,
            "thought": thought,
            "action": command,
            "agent": "main",
            "tool_calls": [{"function": function, "id": call, "type": "function"}],
            "message_type": "action",
        }

    def result(call: str, text: str) -> dict[str, Any]:
        status = "\n(Open file: /repo/src/app.py)\n(Current directory: /repo)\nbash-$"
        return {
            "role": "tool",
            "content": text + status,
            "agent": "main",
            "message_type": "observation",
            "tool_call_ids": [call],
        }

    printed = PATCH.split("diff --git a/docs")[0].replace("\n", "\r\n")
    return {
        "history": [
            {
                "role": "system",
                "content": "You are an autonomous programmer.",
                "agent": "main",
                "message_type": "system_prompt",
            },
            {
                "role": "user",
                "content": "Fix the bug in app.py",
                "agent": "main",
                "message_type": "observation",
            },
            action(
                "call_a",
                "bash",
                "grep -n b src/app.py",
                "Find the line.",
                {"command": "grep -n b src/app.py"},
            ),
            result("call_a", "11:    b = 2"),
            action(
                "call_b",
                "edit",
                "edit 'b = 2' 'b = 3'",
                "Change it.",
                {"search": "b = 2", "replace": "b = 3"},
            ),
            result("call_b", "Text replaced."),
            {"role": "user", "content": "Also keep c.", "agent": "main"},
            {"role": "assistant", "content": "Sure.", "agent": "main", "message_type": "thought"},
            action("call_c", "submit", "submit", "Submit.", {}),
            result("call_c", "\r\n" + printed),
            {"role": "critic", "content": "?", "agent": "main"},
        ]
    }


def test_a_call_id_the_history_repeats_is_made_unique(tmp_path: Path) -> None:
    """SWE-agent's own function-calling demonstrations give several calls one id
    (`call_5iDd…` four times in `replay__marshmallow…function_calling`): each call keeps
    its own, the later ones with `-2`, `-3`, and the observation after each answers it."""
    document = demonstration()
    history = document["history"]
    for item in history:
        for call in item.get("tool_calls", []):
            call["id"] = "call_same"
        if item.get("tool_call_ids"):
            item["tool_call_ids"] = ["call_same"]
    path = write(tmp_path, document, "function_calling.traj")
    events = SWE.parse(path).events
    calls, results = of(events, ToolCall), of(events, ToolResult)
    ids = ["call_same", "call_same-2", "call_same-3"]
    assert [c.call_id for c in calls] == ids
    assert [r.call_id for r in results] == ids
    assert results[1].output.startswith("Text replaced.")
    # an id made unique is never one the file gives another call
    named = ["x", "x", "x-2"]
    calls_made = [item for item in history if item.get("tool_calls")]
    answers = [item for item in history if item.get("tool_call_ids")]
    for item, answer, call_id in zip(calls_made, answers, named, strict=True):
        item["tool_calls"][0]["id"] = call_id
        answer["tool_call_ids"] = [call_id]
    events = SWE.parse(write(tmp_path, document, "function_calling.traj")).events
    ids = ["x", "x-2", "x-2-2"]
    assert [c.call_id for c in of(events, ToolCall)] == ids
    assert [r.call_id for r in of(events, ToolResult)] == ids


def test_swe_agent_demonstration_holding_only_its_history(tmp_path: Path) -> None:
    path = write(tmp_path, demonstration(), "function_calling.traj")
    assert SWE.sniff(path.read_text()) and not MINI.sniff(path.read_text())
    assert detect(path) is SWE
    parsed = SWE.parse(path)
    events = parsed.events
    assert [e.kind for e in events] == [
        "session_start",
        "raw",
        "user_message",
        "agent_message",
        "tool_call",
        "tool_result",
        "agent_message",
        "tool_call",
        "tool_result",
        "user_message",
        "agent_message",
        "agent_message",
        "tool_call",
        "tool_result",
        "file_change",
        "raw",
        "session_end",
    ]
    assert of(events, RawEvent)[0].reason == "system prompt"
    assert [m.text for m in of(events, UserMessage)] == ["Fix the bug in app.py", "Also keep c."]
    calls, results = of(events, ToolCall), of(events, ToolResult)
    # The calls the model made, not the command lines SWE-agent rendered of them; a call
    # without arguments (`submit`) is its command line.
    assert [(c.call_id, c.name, c.input) for c in calls] == [
        ("call_a", "bash", {"command": "grep -n b src/app.py"}),
        ("call_b", "edit", {"search": "b = 2", "replace": "b = 3"}),
        ("call_c", "submit", {"command": "submit"}),
    ]
    assert [r.call_id for r in results] == ["call_a", "call_b", "call_c"]
    assert results[0].output.startswith("11:    b = 2\n(Open file:")
    # Each event names its history item and the line it starts on.
    assert calls[1].source.pointer == "/history/4"
    assert calls[1].source.line == line_of(path, '"content": "Change it."') - 2  # its "{"
    # The patch the submit printed is the file change, without the shell's status lines.
    (change,) = of(events, FileChange)
    assert (change.path, change.operation, change.call_id) == ("src/app.py", "modify", "call_c")
    assert change.anchored and (change.added, change.removed) == (2, 1)
    assert change.diff.endswith("+    c = 4\n     return a\n")
    assert of(events, RawEvent)[1].record == {"role": "critic", "content": "?", "agent": "main"}
    assert of(events, SessionEnd)[0].reason is None

    # Without call ids (a model without function calling), each observation answers the
    # action before it, and the calls get ids made of their pointer.
    data = demonstration()
    for item in data["history"]:
        item.pop("tool_calls", None)
        item.pop("tool_call_ids", None)
        if item["role"] == "tool":
            item["role"] = "user"
    events = SWE.parse(write(tmp_path, data, "plain.traj")).events
    assert [c.call_id for c in of(events, ToolCall)] == ["history-2", "history-4", "history-8"]
    assert [r.call_id for r in of(events, ToolResult)] == ["history-2", "history-4", "history-8"]
    assert len(of(events, FileChange)) == 1

    # A user's message while a call waits is theirs, not the call's result: with a
    # `message_type`, only an observation answers a call.
    data["history"].insert(
        3, {"role": "user", "content": "Stop, use ripgrep", "agent": "main", "message_type": "user"}
    )
    events = SWE.parse(write(tmp_path, data, "interrupted.traj")).events
    assert [e.kind for e in events][4:8] == [
        "tool_call",
        "user_message",
        "tool_result",
        "agent_message",
    ]
    assert [m.text for m in of(events, UserMessage)] == [
        "Fix the bug in app.py",
        "Stop, use ripgrep",
        "Also keep c.",
    ]
    results = of(events, ToolResult)
    assert [r.call_id for r in results] == ["history-2", "history-5", "history-9"]
    assert results[0].output.startswith("11:    b = 2\n")
    assert len(of(events, FileChange)) == 1


def test_swe_agent_history_action_reads_as_a_step_does(tmp_path: Path) -> None:
    """An action of a history-only file gives what a trajectory step gives: the reasoning of
    its thinking blocks, its thought (its whole content when it records none, or when it ran
    no command) and its command as a tool call."""
    data = demonstration()
    history = data["history"]
    history[2]["thinking_blocks"] = [
        {"type": "thinking", "thinking": "Where is b set?", "signature": "EqQB"},
        {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"},
    ]
    del history[4]["thought"]
    history[4]["content"] = "Change it.\n\nedit 'b = 2' 'b = 3'"
    history[8]["thought"], history[8]["action"] = "", ""
    history[8]["content"] = "Nothing left to run."
    parsed = SWE.parse(write(tmp_path, data, "turns.traj"))
    events = parsed.events
    assert [e.kind for e in events][3:9] == [
        "reasoning",
        "agent_message",
        "tool_call",
        "tool_result",
        "agent_message",
        "tool_call",
    ]
    assert of(events, Reasoning)[0].text == "Where is b set?"
    assert parsed.dropped["opaque_reasoning"] == 1
    assert [m.text for m in of(events, AgentMessage)] == [
        "Find the line.",
        "Change it.\n\nedit 'b = 2' 'b = 3'",
        "Sure.",
        "Nothing left to run.",
    ]
    assert [c.call_id for c in of(events, ToolCall)] == ["call_a", "call_b"]
    assert not of(events, FileChange)


def test_swe_agent_history_only_with_its_submission(tmp_path: Path) -> None:
    """With `info.submission` the file changes are the submission's, once (not the printed
    patch as well), right after the submit's result."""
    data = demonstration()
    data["info"] = {"submission": PATCH, "exit_status": "submitted"}
    path = write(tmp_path, data, "submitted.traj")
    assert detect(path) is SWE
    events = SWE.parse(path).events
    assert [e.kind for e in events][12:] == [
        "tool_call",
        "tool_result",
        "file_change",
        "file_change",
        "raw",
        "session_end",
    ]
    changes = of(events, FileChange)
    assert [(c.path, c.operation, c.call_id, c.anchored) for c in changes] == [
        ("src/app.py", "modify", "call_c", True),
        ("docs/new.md", "create", "call_c", True),
    ]
    assert {c.source.pointer for c in changes} == {"/info/submission"}
    assert of(events, SessionEnd)[0].reason == "submitted"

    # No submit answered: the submission's changes come after the run's events.
    data["history"] = data["history"][:9]
    events = SWE.parse(write(tmp_path, data, "unanswered.traj")).events
    assert [e.kind for e in events][-4:] == [
        "tool_call",
        "file_change",
        "file_change",
        "session_end",
    ]
    assert [c.call_id for c in of(events, FileChange)] == [None, None]


def mini_v1() -> dict[str, Any]:
    return {
        "info": {
            "exit_status": "Submitted",
            "submission": PATCH,
            "model_stats": {"instance_cost": 0.25, "api_calls": 4},
            "mini_version": "1.17.5",
            "config": {
                "model": {"model_name": "anthropic/claude-sonnet-4"},
                "environment": {"cwd": "/testbed"},
            },
        },
        "messages": [
            {
                "role": "system",
                "content": "You are a helpful assistant.",
                "timestamp": 1750000000.0,
            },
            {
                "role": "user",
                "content": "Please solve this issue: it breaks",
                "timestamp": 1750000001.0,
            },
            {
                "role": "assistant",
                "content": "THOUGHT: look around.\n\n```bash\nls -la\n```",
                "timestamp": 1750000002.0,
                "extra": {
                    "response": {
                        "id": "resp-1",
                        "model": "claude-sonnet-4-20250514",
                        "usage": {
                            "prompt_tokens": 1000,
                            "completion_tokens": 50,
                            "prompt_tokens_details": {"cached_tokens": 600},
                        },
                    }
                },
            },
            {
                "role": "user",
                "content": "<returncode>0</returncode>\n<output>\nfile.py\n</output>",
                "timestamp": 1750000003.0,
            },
            {
                "role": "assistant",
                "content": "THOUGHT: two commands\n```bash\na\n```\n```bash\nb\n```",
                "timestamp": 1750000004.0,
            },
            {
                "role": "user",
                "content": "Please always provide EXACTLY ONE action in triple backticks.",
                "timestamp": 1750000005.0,
            },
            {
                "role": "assistant",
                "content": "THOUGHT: slow one.\n```bash\nsleep 100\n```",
                "timestamp": 1750000006.0,
            },
            {
                "role": "user",
                "content": "The last command <command>sleep 100</command> timed out and has been killed.",
                "timestamp": 1750000007.0,
            },
            {
                "role": "assistant",
                "content": "THOUGHT: fails.\n```bash\nfalse\n```",
                "timestamp": 1750000008.0,
            },
            {
                "role": "user",
                "content": "<returncode>1</returncode>\n<output>\n</output>",
                "timestamp": 1750000009.0,
            },
            {
                "role": "assistant",
                "content": "THOUGHT: submit.\n```bash\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff\n```",
                "timestamp": 1750000010.0,
            },
            42,
            {"content": "no role"},
            {"role": "user", "content": PATCH, "timestamp": 1750000011.0},
        ],
        "trajectory_format": "mini-swe-agent-1",
        "instance_id": "repo__issue-2",
    }


def test_mini_swe_agent_v1(tmp_path: Path) -> None:
    path = write(tmp_path, mini_v1(), "repo__issue-2.traj.json")
    parsed = MINI.parse(path)
    events = parsed.events
    start = events[0]
    assert isinstance(start, SessionStart)
    assert (start.harness, start.harness_version, start.model, start.cwd, start.title) == (
        "mini-swe-agent",
        "1.17.5",
        "anthropic/claude-sonnet-4",
        "/testbed",
        "repo__issue-2",
    )
    assert start.time == "2025-06-15T15:06:40+00:00"
    assert of(events, UserMessage)[0].text == "Please solve this issue: it breaks"
    messages = [m.text for m in of(events, AgentMessage)]
    assert messages[0] == "THOUGHT: look around."
    # A response without exactly one command is kept whole, and the harness's reply is an error.
    assert messages[1].startswith("THOUGHT: two commands\n```bash\na\n```")
    errors = of(events, Error)
    assert [e.message for e in errors] == [
        "Please always provide EXACTLY ONE action in triple backticks."
    ]
    calls = of(events, ToolCall)
    results = of(events, ToolResult)
    assert [c.input["command"] for c in calls] == [
        "ls -la",
        "sleep 100",
        "false",
        "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff",
    ]
    assert [c.call_id for c in calls] == [r.call_id for r in results]
    assert [(r.ok, r.output) for r in results][:3] == [
        (True, "file.py\n"),
        (False, "The last command <command>sleep 100</command> timed out and has been killed."),
        (False, ""),
    ]
    assert results[0].source.pointer == "/messages/3"
    # The line the message's object starts on (its `role` and `content` follow).
    assert results[0].source.line == line_of(path, "<returncode>0</returncode>") - 2
    assert results[0].time == "2025-06-15T15:06:43+00:00"
    raws = of(events, RawEvent)
    assert [r.reason for r in raws] == [
        "the environment the run ran in",
        "system prompt",
        "message is not an object",
        "message without a known role",
        "the run's information that no other event holds",
    ]
    # The environment after the start, and the rest of info (the model's configuration)
    # before the end.
    assert events[1] is raws[0] and events[-2] is raws[-1]
    assert (raws[0].source.pointer, raws[0].record) == (
        "/info/config",
        {"environment": {"cwd": "/testbed"}},
    )
    assert (raws[-1].source.pointer, raws[-1].record) == (
        "/info",
        {"config": {"model": {"model_name": "anthropic/claude-sonnet-4"}}},
    )
    # The submitted patch follows the result of the command that submitted it.
    last_result = events.index(results[-1])
    assert [e.kind for e in events[last_result + 1 : last_result + 3]] == [
        "file_change",
        "file_change",
    ]
    assert of(events, FileChange)[0].call_id == results[-1].call_id
    usage = of(events, Usage)
    assert [
        (u.input_tokens, u.cache_read_tokens, u.output_tokens, u.cost_usd, u.model) for u in usage
    ] == [
        (400, 600, 50, None, "claude-sonnet-4-20250514"),
        (0, 0, 0, 0.25, "anthropic/claude-sonnet-4"),
    ]
    end = events[-1]
    assert isinstance(end, SessionEnd) and end.reason == "Submitted"


def test_mini_swe_agent_model_stats_written_as_a_python_repr_give_the_usage(
    tmp_path: Path,
) -> None:
    """mini-swe-agent's `model_stats` written as the Python repr of the dict is read as
    SWE-agent's is (a literal, never run): the run's cost when no request carried its own,
    and its other figures kept raw as those of an object are; a repr that is no plain dict
    literal stays raw, whole."""
    trajectory = mini_v1()
    messages = trajectory["messages"]
    messages[2] = {key: value for key, value in messages[2].items() if key != "extra"}
    trajectory["info"]["model_stats"] = "{'instance_cost': 0.25, 'api_calls': 4, 'rate': 1.5}"
    events = MINI.parse(write(tmp_path, trajectory, "repr.traj.json")).events
    (usage,) = of(events, Usage)
    assert (usage.cost_usd, usage.cost_basis, usage.requests) == (0.25, "reported", 4)
    assert usage.source.pointer == "/info/model_stats"
    assert of(events, RawEvent)[-1].record["model_stats"] == {"rate": 1.5}
    trajectory["info"]["model_stats"] = "__import__('os').getcwd()"
    events = MINI.parse(write(tmp_path, trajectory, "code.traj.json")).events
    assert not of(events, Usage)
    assert of(events, RawEvent)[-1].record["model_stats"] == "__import__('os').getcwd()"


def test_mini_swe_agent_the_folder_its_patch_is_of(tmp_path: Path) -> None:
    """The container folder the run worked in is the repository when a command named the
    patch's file in it; otherwise it is a candidate the import checks in the repository."""
    trajectory = mini_v1()
    assert MINI.parse(write(tmp_path, trajectory, "a.traj.json")).sandbox_candidate == "/testbed"
    trajectory["messages"][2]["content"] = "THOUGHT: look.\n\n```bash\ncat /testbed/src/app.py\n```"
    parsed = MINI.parse(write(tmp_path, trajectory, "b.traj.json"))
    assert (parsed.sandbox_root, parsed.sandbox_candidate) == ("/testbed", None)


def test_mini_swe_agent_reasoning_in_an_openrouter_response(tmp_path: Path) -> None:
    """A model reached through OpenRouter (Gemini 3, in public mini-swe-agent runs) answers
    with `reasoning` and `reasoning_details` on the response's message, which mini-swe-agent
    keeps in `extra.response`: the readable part is a reasoning event, the encrypted part
    dropped and counted."""
    trajectory = mini_v1()
    assistant = trajectory["messages"][2]
    assistant["extra"]["response"]["choices"] = [
        {
            "message": {
                "role": "assistant",
                "content": assistant["content"],
                "reasoning": "**Looking around**\n\nFirst the layout.",
                "reasoning_details": [
                    {"type": "reasoning.text", "text": "**Looking around**", "index": "0"},
                    {"type": "reasoning.encrypted", "data": "CiQB4/H/Xj6u", "index": "0"},
                ],
            }
        }
    ]
    parsed = MINI.parse(write(tmp_path, trajectory, "repo__issue-2.traj.json"))
    assert [r.text for r in of(parsed.events, Reasoning)] == [
        "**Looking around**\n\nFirst the layout."
    ]
    assert parsed.dropped["opaque_reasoning"] == 1
    # An explicit null on the message does not hide the response's; a summary is readable.
    assistant["reasoning"] = None
    message = assistant["extra"]["response"]["choices"][0]["message"]
    del message["reasoning"]
    message["reasoning_details"] = [{"type": "reasoning.summary", "summary": "Look first."}]
    parsed = MINI.parse(write(tmp_path, trajectory, "repo__issue-2.traj.json"))
    assert [r.text for r in of(parsed.events, Reasoning)] == ["Look first."]
    # Nor does an empty or blank one.
    for blank in ("", "  \n"):
        assistant["reasoning"] = blank
        parsed = MINI.parse(write(tmp_path, trajectory, "repo__issue-2.traj.json"))
        assert [r.text for r in of(parsed.events, Reasoning)] == ["Look first."]


def test_mini_swe_agent_nothing_dropped_counts_nothing(tmp_path: Path) -> None:
    """A run whose model gave no reasoning at all (DeepSeek through litellm, in public
    mini-swe-agent 2.3 runs) drops nothing: `dropped` does not name opaque reasoning with a
    count of 0."""
    trajectory = mini_v1()
    for message in trajectory["messages"]:
        if isinstance(message, dict) and message.get("role") == "assistant":
            message["provider_specific_fields"] = None
            extra = message.setdefault("extra", {})
            extra["response"] = {
                "choices": [{"message": {"role": "assistant", "content": message["content"]}}]
            }
    parsed = MINI.parse(write(tmp_path, trajectory, "repo__issue-2.traj.json"))
    assert of(parsed.events, Reasoning) == []
    assert "opaque_reasoning" not in parsed.dropped


def test_mini_swe_agent_an_action_that_is_no_command_is_kept(tmp_path: Path) -> None:
    def reply(**fields: Any) -> dict[str, Any]:
        return {"role": "assistant", "content": "Checking.", **fields}

    bash = {"id": "c3", "type": "function", "function": {"arguments": '{"command": "pwd"}'}}
    data = {
        "info": {"mini_version": "2.0.0", "exit_status": "Submitted"},
        "messages": [
            {"role": "user", "content": "List files."},
            reply(extra={"actions": [{"command": "ls"}, {"command": 5}, "junk"]}),
            reply(tool_calls=["junk", bash]),
        ],
        "trajectory_format": "mini-swe-agent-1.1",
    }
    events = MINI.parse(write(tmp_path, data, "run.traj.json")).events
    assert [c.input["command"] for c in of(events, ToolCall)] == ["ls", "pwd"]
    raws = [(r.record, r.reason) for r in of(events, RawEvent)]
    assert raws == [(r, "action that is no command") for r in ({"command": 5}, "junk", "junk")]


def test_mini_swe_agent_v2_toolcalls(tmp_path: Path) -> None:
    data = {
        "info": {
            "model_stats": {"instance_cost": 0.03, "api_calls": 2},
            "config": {"model": {"model_name": "openai/gpt-5"}},
            "mini_version": "2.0.0",
            "exit_status": "Submitted",
            "submission": "",
        },
        "messages": [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": "List files."},
            {
                "role": "assistant",
                "content": "Checking.",
                "reasoning_content": "I should list.",
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "bash", "arguments": '{"command": "ls"}'},
                    },
                    {
                        "id": "call_2",
                        "type": "function",
                        "function": {"name": "bash", "arguments": '{"command": "pwd"}'},
                    },
                ],
                "extra": {
                    "actions": [
                        {"command": "ls", "tool_call_id": "call_1"},
                        {"command": "pwd", "tool_call_id": "call_2"},
                    ],
                    "cost": 0.01,
                    "timestamp": 1750000000.5,
                    "response": {
                        "id": "r1",
                        "usage": {"prompt_tokens": 100, "completion_tokens": 10},
                    },
                },
            },
            {
                "role": "tool",
                "tool_call_id": "call_2",
                "content": "<returncode>0</returncode>\n<output>\n/w\n</output>",
                "extra": {"returncode": 0, "raw_output": "/w\n"},
            },
            {
                "role": "tool",
                "tool_call_id": "call_1",
                "content": "<returncode>2</returncode>\n<output>\nerr\n</output>",
                "extra": {"returncode": 2, "raw_output": "err\n"},
            },
            {
                "role": "user",
                "content": "No tool calls found.",
                "extra": {
                    "interrupt_type": "FormatError",
                    "cost": 0.02,
                    "response": {"id": "r2", "usage": {"prompt_tokens": 5}},
                },
            },
            {
                "object": "response",
                "id": "r3",
                "output": [
                    {"type": "reasoning", "summary": [], "encrypted_content": "gAAA"},
                    {
                        "type": "message",
                        "role": "assistant",
                        "content": [{"type": "output_text", "text": "Submitting."}],
                    },
                    {
                        "type": "function_call",
                        "call_id": "fc_1",
                        "name": "bash",
                        "arguments": '{"command": "echo done"}',
                    },
                ],
                "usage": {"input_tokens": 50, "output_tokens": 5},
                "extra": {"cost": 0.005},
            },
            {
                "type": "function_call_output",
                "call_id": "fc_1",
                "output": "done",
                "extra": {"returncode": 0},
            },
            {
                "role": "exit",
                "content": "Submitted",
                "extra": {"exit_status": "Submitted", "submission": ""},
            },
        ],
        "trajectory_format": "mini-swe-agent-1.1",
    }
    parsed = MINI.parse(write(tmp_path, data, "run.traj.json"))
    events = parsed.events
    assert of(events, Reasoning)[0].text == "I should list."
    assert parsed.dropped["opaque_reasoning"] == 1
    calls = of(events, ToolCall)
    assert [(c.call_id, c.input) for c in calls] == [
        ("call_1", {"command": "ls"}),
        ("call_2", {"command": "pwd"}),
        ("fc_1", {"command": "echo done"}),
    ]
    results = of(events, ToolResult)
    assert [(r.call_id, r.ok, r.output) for r in results] == [
        ("call_2", True, "/w\n"),
        ("call_1", False, "err\n"),
        ("fc_1", True, "done"),
    ]
    assert of(events, Error)[0].message == "No tool calls found."
    assert [m.text for m in of(events, AgentMessage)] == ["Checking.", "Submitting."]
    usage = of(events, Usage)
    assert [(u.input_tokens, u.output_tokens, u.cost_usd) for u in usage] == [
        (100, 10, 0.01),
        (5, 0, 0.02),
        (50, 5, 0.005),
    ]
    end = events[-1]
    assert isinstance(end, SessionEnd) and end.reason == "Submitted"
    assert end.source.pointer == "/messages/8"


def test_mini_swe_agent_a_format_error_keeps_what_the_model_said(tmp_path: Path) -> None:
    """Since mini-swe-agent 2.4.6 a tool-calling model's reply that made no usable call is
    kept only in the format error message, whole (`extra.response`), with its cost: the text
    of the reply (a chat completion's, or a Responses API message) is the model's message
    before the error, as a text-based model's `extra.model_response` is."""
    error = "<error>No tool calls found in the response.</error>"

    def completion(content: str) -> dict[str, Any]:
        return {
            "id": "chatcmpl-2",
            "choices": [{"finish_reason": "stop", "message": {"content": content}}],
            "usage": {"prompt_tokens": 1002, "completion_tokens": 50},
        }

    data = {
        "info": {
            "model_stats": {"instance_cost": 0.003, "api_calls": 2},
            "config": {"model": {"model_name": "openai/gpt-5-mini"}},
            "mini_version": "2.4.6",
            "exit_status": "LimitsExceeded",
            "submission": "",
        },
        "messages": [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": "Fix the bug."},
            {
                "role": "user",
                "content": error,
                "extra": {
                    "interrupt_type": "FormatError",
                    "cost": 0.002,
                    "response": completion("The loop is off by one; I will fix it."),
                },
            },
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": error}],
                "extra": {
                    "interrupt_type": "FormatError",
                    "cost": 0.001,
                    "response": {
                        "id": "resp_3",
                        "output": [
                            {"type": "reasoning", "summary": []},
                            {
                                "type": "message",
                                "content": [{"type": "output_text", "text": "Done, I think."}],
                            },
                        ],
                        "usage": {"input_tokens": 1100, "output_tokens": 5},
                    },
                },
            },
            {
                "role": "exit",
                "content": "LimitsExceeded",
                "extra": {"exit_status": "LimitsExceeded", "submission": ""},
            },
        ],
        "trajectory_format": "mini-swe-agent-1.1",
    }
    events = MINI.parse(write(tmp_path, data, "run.traj.json")).events
    said = [e for e in events if isinstance(e, AgentMessage | Error)]
    assert [(type(e).__name__, getattr(e, "text", None)) for e in said] == [
        ("AgentMessage", "The loop is off by one; I will fix it."),
        ("Error", None),
        ("AgentMessage", "Done, I think."),
        ("Error", None),
    ]
    assert {m.model for m in of(events, AgentMessage)} == {"openai/gpt-5-mini"}
    assert [u.cost_usd for u in of(events, Usage)] == [0.002, 0.001]


def test_mini_swe_agent_what_the_user_typed_in_interactive_mini(tmp_path: Path) -> None:
    """Interactive `mini` adds what the person typed as an interruption of the run
    (`extra.interrupt_type`): a comment after Ctrl-C, a reason for rejecting the commands, a
    new task when the agent wanted to finish. Each was an error, the person's words in it, and
    a new task started no turn."""

    def typed(content: str, kind: str) -> dict[str, Any]:
        return {"role": "user", "content": content, "extra": {"interrupt_type": kind}}

    call = {
        "role": "assistant",
        "content": "Deleting the cache.",
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "bash", "arguments": '{"command": "rm -rf cache"}'},
            }
        ],
        "extra": {"actions": [{"command": "rm -rf cache", "tool_call_id": "call_1"}]},
    }
    not_executed = {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": "<returncode>-1</returncode>",
        "extra": {"returncode": -1, "exception_info": "action was not executed"},
    }
    data = {
        "info": {"config": {"model": {"model_name": "gpt-5"}}, "mini_version": "2.4.6"},
        "messages": [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": "Clean up."},
            typed("Interrupted by user: look at the logs first", "UserInterruption"),
            typed("Interrupted by user: Temporary interruption caught.", "UserInterruption"),
            call,
            not_executed,
            typed(
                "Commands not executed. The user rejected your commands with the following"
                " message: keep the cache",
                "UserRejection",
            ),
            typed("The user added a new task: now write the changelog", "UserNewTask"),
            {"role": "exit", "content": "Submitted", "extra": {"exit_status": "Submitted"}},
        ],
        "trajectory_format": "mini-swe-agent-1.1",
    }
    events = MINI.parse(write(tmp_path, data, "run.traj.json")).events
    told = [
        (type(e).__name__, e.text if isinstance(e, UserMessage) else e.interrupt)
        for e in events
        if isinstance(e, UserMessage | Error)
    ]
    assert told == [
        ("UserMessage", "Clean up."),
        ("Error", True),
        ("UserMessage", "look at the logs first"),
        ("Error", True),
        ("UserMessage", "keep the cache"),
        ("UserMessage", "now write the changelog"),
    ]
    assert [(r.call_id, r.ok) for r in of(events, ToolResult)] == [("call_1", False)]


def test_mini_swe_agent_a_command_typed_in_human_mode_is_a_call(tmp_path: Path) -> None:
    """Human mode (`/u`) runs what the person types: a user message holding the command in
    `extra.actions`, answered by a user message (no tool call id) with its output."""
    data = {
        "info": {"config": {"model": {"model_name": "gpt-5"}}, "mini_version": "2.4.6"},
        "messages": [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": "Clean up."},
            {
                "role": "user",
                "content": "User command: \n```bash\nls cache\n```",
                "extra": {"actions": [{"command": "ls cache"}], "timestamp": 1767225600.0},
            },
            {
                "role": "user",
                "content": "<returncode>2</returncode>\n<output>\nno such file\n</output>",
                "extra": {"raw_output": "no such file\n", "returncode": 2},
            },
            {"role": "user", "content": "User command: but no actions", "extra": {}},
        ],
        "trajectory_format": "mini-swe-agent-1.1",
    }
    events = MINI.parse(write(tmp_path, data, "run.traj.json")).events
    assert [e.kind for e in events[2:]] == [
        "user_message",
        "tool_call",
        "tool_result",
        "user_message",
        "raw",
        "session_end",
    ]
    call, result = of(events, ToolCall)[0], of(events, ToolResult)[0]
    assert (call.call_id, call.name, call.input) == (
        "user-command-2-1",
        "bash",
        {"command": "ls cache"},
    )
    assert (result.call_id, result.ok, result.output) == (
        "user-command-2-1",
        False,
        "no such file\n",
    )
    assert [u.text for u in of(events, UserMessage)] == [
        "Clean up.",
        "User command: but no actions",
    ]


def test_mini_swe_agent_bare_list_and_errors(tmp_path: Path) -> None:
    messages = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "task"},
        {"role": "assistant", "content": "Run it.\n\n```mswea_bash_command\necho hi\n```"},
        {"role": "user", "content": "<returncode>0</returncode>\n<output>\nhi\n</output>"},
    ]
    path = write(tmp_path, messages, "local.traj.json")
    parsed = MINI.parse(path)
    assert [e.kind for e in parsed.events] == [
        "session_start",
        "raw",
        "user_message",
        "agent_message",
        "tool_call",
        "tool_result",
        "session_end",
    ]
    assert of(parsed.events, ToolResult)[0].output == "hi\n"
    assert of(parsed.events, ToolCall)[0].source.line == line_of(path, "Run it.") - 2
    with pytest.raises(StetError):
        MINI.parse(write(tmp_path, {"something": "else"}, "other.json"))


def test_mini_swe_agent_bare_list_is_detected(tmp_path: Path) -> None:
    """Early mini-swe-agent runs saved `agent.messages` alone: found from the content."""
    messages = [
        {
            "role": "system",
            "content": "Reply with a THOUGHT and one block:\n```bash\nyour_command\n```",
        },
        {"role": "user", "content": "Fix the bug."},
        {"role": "assistant", "content": "THOUGHT: look.\n\n```bash\nls\n```"},
        {"role": "user", "content": "<returncode>0</returncode>\n<output>\na.py\n</output>"},
    ]
    path = write(tmp_path, messages, "run.traj.json")
    assert detect(path) is MINI
    assert [r.output for r in of(MINI.parse(path).events, ToolResult)] == ["a.py\n"]
    chat = json.dumps([{"role": "system", "content": "You are helpful."}, {"role": "user"}])
    assert not MINI.sniff(chat)


def test_mini_swe_agent_bare_list_submission_is_its_file_changes(tmp_path: Path) -> None:
    """A run saved as its message list has no `info.submission`: the submitted diff is the
    submitting command's output, the last message."""
    diff = (
        "diff --git a/calc.py b/calc.py\nindex 20edef5..f55e657 100755\n--- a/calc.py\n"
        "+++ b/calc.py\n@@ -1,2 +1,2 @@\n-def div(a, b)\n+def div(a, b):\n     return a/b\n"
    )
    messages = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "Fix the syntax error."},
        {
            "role": "assistant",
            "content": "Submit.\n\n```mswea_bash_command\ngit add -A && git diff --cached"
            " && echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n```",
        },
        {"role": "user", "content": diff},
    ]
    path = write(tmp_path, messages, "github_issue.traj.json")
    events = MINI.parse(path).events
    (change,) = of(events, FileChange)
    call = of(events, ToolCall)[0]
    assert (change.path, change.operation, change.added, change.removed) == (
        "calc.py",
        "modify",
        1,
        1,
    )
    assert change.call_id == call.call_id and change.source.pointer == "/3"
    assert [e.kind for e in events][-3:] == ["tool_result", "file_change", "session_end"]


def test_mini_swe_agent_v2_submission_answers_the_submitting_call(tmp_path: Path) -> None:
    """v2 ends a run in the middle of a step: the exit message holds the output of the
    command that submitted (the patch), and the patch's changes belong to that call."""
    data = {
        "info": {
            "model_stats": {"instance_cost": 0.01, "api_calls": 1},
            "mini_version": "2.2.0",
            "exit_status": "Submitted",
            "submission": PATCH,
        },
        "messages": [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": "task", "extra": {"timestamp": 1760000000.0}},
            {
                "role": "assistant",
                "content": "Submitting.",
                "tool_calls": [
                    {
                        "id": "call_9",
                        "type": "function",
                        "function": {
                            "name": "bash",
                            "arguments": '{"command": "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"}',
                        },
                    }
                ],
                "extra": {
                    "actions": [{"command": "echo ...", "tool_call_id": "call_9"}],
                    "timestamp": 1760000100.0,
                },
            },
            {
                "role": "exit",
                "content": PATCH,
                "extra": {"exit_status": "Submitted", "submission": PATCH},
            },
        ],
        "trajectory_format": "mini-swe-agent-1.1",
    }
    events = MINI.parse(write(tmp_path, data, "run.traj.json")).events
    result = of(events, ToolResult)[0]
    assert (result.call_id, result.ok, result.output) == ("call_9", True, PATCH)
    changes = of(events, FileChange)
    assert [c.call_id for c in changes] == ["call_9", "call_9"]
    assert events.index(result) < events.index(changes[0])
    end = events[-1]
    assert isinstance(end, SessionEnd) and end.reason == "Submitted"
    assert end.time is not None and end.time.startswith("2025-10-09T08:55:00")


def test_sniff(tmp_path: Path) -> None:
    swe = json.dumps(swe_agent_1x(), indent=2)
    old = json.dumps(
        {
            "environment": "swe_main",
            "trajectory": [
                {"action": "ls", "observation": "", "response": "", "state": "", "thought": ""}
            ],
        }
    )
    mini = json.dumps(mini_v1(), indent=2)
    assert SWE.sniff(swe) and SWE.sniff(old)
    assert not MINI.sniff(swe) and not MINI.sniff(old)
    assert MINI.sniff(mini) and not SWE.sniff(mini)
    # v1 files whose long submission pushes the version marker out of the head.
    assert MINI.sniff(
        '{\n  "info": {\n    "exit_status": "Submitted",\n    "submission": "diff --git a/x b/x\\n'
    )
    assert not MINI.sniff('{\n  "info": {\n    "name": "x"')
    claude = '{"type":"user","message":{"content":"\\"trajectory\\": [ \\"observation\\" \\"thought\\" \\"response\\""}}\n'
    assert not SWE.sniff(claude) and not MINI.sniff(claude)
    assert not SWE.sniff('[{"role": "user"}]') and not MINI.sniff('[{"role": "user"}]')
    assert not SWE.sniff("# aider chat started at 2025-01-01 00:00:00\n")


def test_a_first_observation_longer_than_the_sniffed_head(tmp_path: Path) -> None:
    """SWE-agent writes a step's `observation` before its `response` and `thought`, and keeps
    up to 100,000 characters of it: a first command that printed more than the sniffed head
    (a `find` over a large tree) leaves only the step's first members to tell."""
    run = swe_agent_1x()
    listing = "".join(f"./src/module_{n}/file_{n}.py\n" for n in range(3000))
    assert len(listing) > SNIFF_BYTES
    run["trajectory"][0]["observation"] = listing
    for indent in (2, None):
        path = write(tmp_path, run, f"long-{indent}.traj", indent=indent)
        assert detect(path).name == "swe-agent"
        events = SWE.parse(path).events
        assert any(
            e.kind == "tool_result" and e.output.startswith("./src/module_0/") for e in events
        )


def test_an_edit_the_tool_did_not_apply_is_a_failed_result(tmp_path: Path) -> None:
    """SWE-agent's edit tools say so when they change nothing (0.x's `edit` an edit that
    brings new syntax errors, 1.x's `str_replace_editor` an `old_str` not found once); the
    same words printed by another command are its output."""
    refused = (
        "Your proposed edit has introduced new syntax error(s).\n...\n"
        "Your changes have NOT been applied. Please fix your edit command and try again.\n"
    )
    steps = [
        ("edit 3:3\n    x = (\nend_of_edit", refused),
        (
            "str_replace_editor str_replace /repo/a.py --old_str x --new_str y",
            ("No replacement was performed, old_str `x` did not appear verbatim in /repo/a.py."),
        ),
        ("cat tools/edit_linting.py", f"print({refused!r})"),
        ("edit 3:3\n    x = 1\nend_of_edit", "[File: /repo/a.py (3 lines total)]"),
    ]
    run = {
        "trajectory": [
            {
                "action": action,
                "observation": observation,
                "response": "",
                "thought": "",
                "state": {"working_dir": "/repo"},
            }
            for action, observation in steps
        ],
        "history": [],
        "info": {},
    }
    events = SWE.parse(write(tmp_path, run, "run.traj")).events
    assert [r.ok for r in of(events, ToolResult)] == [False, False, True, True]


def test_public_swe_agent_sample() -> None:
    parsed = SWE.parse(sample("swe-agent/SWE-agent__pydicom__pydicom-1458.traj"))
    counts = Counter(e.kind for e in parsed.events)
    assert counts == Counter(
        {
            "session_start": 1,
            "raw": 3,
            "user_message": 1,
            "agent_message": 12,
            "tool_call": 12,
            "tool_result": 12,
            "file_change": 1,
            "usage": 1,
            "session_end": 1,
        }
    )
    assert parsed.dropped["demonstration"] == 1
    raws = of(parsed.events, RawEvent)
    assert [(r.source.pointer, r.record) for r in raws[::2]] == [
        ("/environment", "swe_main"),
        ("/info", {"model_stats": {"total_cost": 1.26719}}),  # the batch's cost so far
    ]
    calls = of(parsed.events, ToolCall)
    assert [c.name for c in calls][:2] == ["create", "edit"] and calls[-1].name == "submit"
    change = of(parsed.events, FileChange)[0]
    assert change.path == "pydicom/pixel_data_handlers/numpy_handler.py"
    assert (change.added, change.removed, change.call_id) == (3, 2, calls[-1].call_id)
    usage = of(parsed.events, Usage)[0]
    assert (usage.input_tokens, usage.output_tokens, usage.cost_usd) == (122612, 1369, 1.26719)
    assert calls[0].source.line == 4
    # The three edits whose lines had syntax errors were not applied.
    failed = [r.call_id for r in of(parsed.events, ToolResult) if not r.ok]
    assert failed == ["step-6", "step-7", "step-8"]
    # The container folder the run's patch is of (its files named in it) is the repository.
    assert (parsed.sandbox_root, parsed.sandbox_candidate) == ("/pydicom__pydicom", None)


def test_the_public_sample_imported_has_the_repositorys_paths(stet: Any, root: Path) -> None:
    """SWE-agent works in the container's copy of the repository (`/pydicom__pydicom`,
    `/testbed`): its paths there are the repository's, relative once imported."""
    path = sample("swe-agent/SWE-agent__pydicom__pydicom-1458.traj")
    code, out, err = stet("trajectory", "import", str(path), "--json", "-C", str(root))
    assert (code, err) == (0, "")
    result = json.loads(out)
    assert result["outside_repository"] is False
    text = (root / result["folder"] / "events.jsonl").read_text(encoding="utf-8")
    assert json.loads(text.splitlines()[0])["cwd"] == "."
    assert "/pydicom__pydicom" not in text.replace("SWE-agent__pydicom__pydicom", "")
    assert "[File: pydicom/pixel_data_handlers/numpy_handler.py (372 lines total)]" in text


@pytest.mark.parametrize("in_repository", [True, False])
def test_a_run_without_a_patch_in_the_repositorys_files(
    stet: Any, root: Path, tmp_path: Path, in_repository: bool
) -> None:
    """With no patch to tell, the container folder is the repository when the files the
    run named in it are the repository's (the `root` fixture holds `src/app.py`)."""
    name = "src/app.py" if in_repository else "lib/other.py"
    step = {
        "action": f"str_replace_editor view /testbed/{name}",
        "observation": "1\tline 1",
        "response": "",
        "thought": "Look at it.",
        "state": {"working_dir": "/testbed"},
    }
    run = {"trajectory": [step], "history": [], "info": {"exit_status": "exit_cost"}}
    path = write(tmp_path, run, "run.traj")
    code, out, err = stet("trajectory", "import", str(path), "--json", "-C", str(root))
    assert (code, err) == (0, "")
    result = json.loads(out)
    assert result["outside_repository"] is not in_repository
    lines = (root / result["folder"] / "events.jsonl").read_text(encoding="utf-8").splitlines()
    [call] = [json.loads(line) for line in lines if '"tool_call"' in line]
    expected = name if in_repository else f"/testbed/{name}"
    assert call["input"]["command"] == f"str_replace_editor view {expected}"


def test_a_return_code_of_thousands_of_digits_is_a_failure_not_a_crash(tmp_path: Path) -> None:
    """Python reads no number of over 4,300 digits (ValueError): a result whose return code
    had that many stopped the import with a traceback. Its only meaning is whether it is 0."""
    document = mini_v1()
    huge = "9" * 5_000
    document["messages"][3]["content"] = f"<returncode>{huge}</returncode>\n<output>\nx\n</output>"
    document["messages"][9]["content"] = (
        f"<returncode>-{'0' * 5_000}</returncode>\n<output>\n</output>"
    )
    events = MINI.parse(write(tmp_path, document, "repo__issue-2.traj.json")).events
    results = of(events, ToolResult)
    assert [(r.ok, r.output) for r in results][:3] == [
        (False, "x\n"),
        (False, "The last command <command>sleep 100</command> timed out and has been killed."),
        (True, ""),
    ]
