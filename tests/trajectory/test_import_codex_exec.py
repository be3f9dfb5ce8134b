"""The `codex exec --json` event stream: hand-written streams in the shapes of Codex's exec
events (serde's field names, `type` tags, nulls for options), one item of every type."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from samples import SAMPLES

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
    event_json,
)
from stet_lsp.trajectory.importers import FORMATS, detect, importer
from stet_lsp.trajectory.importers.codex_exec import IMPORTERS

EXEC = IMPORTERS["codex-exec"]
THREAD = "0199a213-81c0-7800-8aa1-bbab2a035a53"
REPO = "/home/runner/work/shop/shop"


def item(kind: str, item_id: str, state: str = "completed", **fields: Any) -> dict[str, Any]:
    return {"type": f"item.{state}", "item": {"id": item_id, "type": kind, **fields}}


def command(text: str, output: str, code: int | None, status: str) -> dict[str, Any]:
    return {
        "command": text,
        "aggregated_output": output,
        "exit_code": code,
        "status": status,
    }


def usage(input_tokens: int, cached: int, output: int) -> dict[str, Any]:
    return {
        "type": "turn.completed",
        "usage": {
            "input_tokens": input_tokens,
            "cached_input_tokens": cached,
            "output_tokens": output,
        },
    }


LS = "/bin/bash -lc 'ls src'"
STREAM: list[dict[str, Any]] = [
    {"type": "thread.started", "thread_id": THREAD},
    {"type": "turn.started"},
    item("reasoning", "item_0", text="**Looking at the cart module**"),
    item("command_execution", "item_1", "started", **command(LS, "", None, "in_progress")),
    item("command_execution", "item_1", **command(LS, "cart.py\n", 0, "completed")),
    item("todo_list", "item_2", "started", items=[{"text": "Fix total", "completed": False}]),
    item(
        "file_change",
        "item_3",
        changes=[
            {"path": f"{REPO}/src/cart.py", "kind": "update"},
            {"path": f"{REPO}/src/tax.py", "kind": "add"},
            {"path": f"{REPO}/src/old.py", "kind": "delete"},
        ],
        status="completed",
    ),
    item(
        "mcp_tool_call",
        "item_4",
        server="docs",
        tool="search",
        arguments={"q": "rounding"},
        result={"content": [{"type": "text", "text": "Use Decimal."}], "structured_content": None},
        error=None,
        status="completed",
    ),
    item("web_search", "item_5", query="python decimal rounding"),
    item(
        "command_execution",
        "item_6",
        **command("/bin/bash -lc pytest", "1 failed\n", 1, "failed"),
    ),
    item("error", "item_7", message="command timed out"),
    item("todo_list", "item_2", "updated", items=[{"text": "Fix total", "completed": True}]),
    item("todo_list", "item_2", items=[{"text": "Fix total", "completed": True}]),
    item("agent_message", "item_8", text="The total now rounds half up."),
    usage(1200, 200, 345),
]


def _parse(folder: Path, records: list[Any]) -> list[EventBase]:
    return EXEC.parse(jsonl(folder / "exec.jsonl", records)).events


def jsonl(path: Path, records: list[Any], tail: str = "") -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records) + tail, encoding="utf-8")
    return path


def of(events: list[EventBase], kind: type[EventBase]) -> list[Any]:
    return [event for event in events if isinstance(event, kind)]


@pytest.fixture
def parsed(tmp_path: Path) -> Any:
    return EXEC.parse(jsonl(tmp_path / "exec.jsonl", STREAM))


def test_the_session_is_the_thread(parsed: Any) -> None:
    start = parsed.events[0]
    assert isinstance(start, SessionStart)
    assert (parsed.format, parsed.session_id, start.harness) == ("codex-exec", THREAD, "codex")
    assert {event.session for event in parsed.events} == {THREAD}
    assert isinstance(parsed.events[-1], SessionEnd)
    assert parsed.problems == []


def test_every_item_type_becomes_its_events(parsed: Any) -> None:
    kinds = [event.kind for event in parsed.events]
    assert kinds == [
        "session_start",
        "reasoning",
        "tool_call",  # ls
        "tool_result",
        "tool_call",  # the plan as it was set
        "tool_result",
        "tool_call",  # apply_patch
        "tool_result",
        "file_change",
        "file_change",
        "file_change",
        "tool_call",  # mcp
        "tool_result",
        "tool_call",  # web search
        "tool_result",
        "tool_call",  # pytest
        "tool_result",
        "raw",  # an error item: a warning the run went on after
        "tool_call",  # the plan as it was updated
        "tool_result",
        "agent_message",
        "usage",
        "session_end",
    ]
    assert [r.text for r in of(parsed.events, Reasoning)] == ["**Looking at the cart module**"]
    assert [a.text for a in of(parsed.events, AgentMessage)] == ["The total now rounds half up."]
    calls = {call.call_id: (call.name, call.input) for call in of(parsed.events, ToolCall)}
    assert calls == {
        "item_1": ("shell", {"command": LS}),
        "item_3": (
            "apply_patch",
            {
                "changes": [
                    {"path": f"{REPO}/src/cart.py", "kind": "update"},
                    {"path": f"{REPO}/src/tax.py", "kind": "add"},
                    {"path": f"{REPO}/src/old.py", "kind": "delete"},
                ]
            },
        ),
        "item_4": ("mcp__docs__search", {"q": "rounding"}),
        "item_5": ("web_search", {"query": "python decimal rounding"}),
        "item_6": ("shell", {"command": "/bin/bash -lc pytest"}),
        "item_2": ("update_plan", {"plan": [{"step": "Fix total", "status": "pending"}]}),
        "item_2-update1": (
            "update_plan",
            {"plan": [{"step": "Fix total", "status": "completed"}]},
        ),
    }
    assert of(parsed.events, Error) == []
    (warning,) = [raw for raw in of(parsed.events, RawEvent) if raw.record.get("type") == "error"]
    assert warning.reason == "a warning Codex reported while the run went on"


def test_command_results_carry_the_exit_code_and_fail_when_it_is_not_zero(parsed: Any) -> None:
    results = {r.call_id: (r.ok, r.output) for r in of(parsed.events, ToolResult)}
    assert results["item_1"] == (True, "Exit code: 0\nOutput:\ncart.py\n")
    assert results["item_6"] == (False, "Exit code: 1\nOutput:\n1 failed\n")
    assert results["item_4"] == (True, "Use Decimal.")
    assert results["item_3"] == (True, "")


def test_a_declined_command_or_one_that_failed_to_start_fails(tmp_path: Path) -> None:
    """A command the approval policy declined, or one that could not start, has no exit
    code: its status says it failed."""
    records = [
        {"type": "thread.started", "thread_id": THREAD},
        item("command_execution", "item_0", **command("rm -rf /", "", None, "declined")),
        item("command_execution", "item_1", **command("nope", "", None, "failed")),
    ]
    assert [r.ok for r in _parse(tmp_path, records) if isinstance(r, ToolResult)] == [
        False,
        False,
    ]


def test_file_changes_name_their_operation_and_hold_no_diff(parsed: Any) -> None:
    changes = [(c.path, c.operation, c.diff, c.call_id) for c in of(parsed.events, FileChange)]
    assert changes == [
        (f"{REPO}/src/cart.py", "modify", "", "item_3"),
        (f"{REPO}/src/tax.py", "create", "", "item_3"),
        (f"{REPO}/src/old.py", "delete", "", "item_3"),
    ]
    lines = [json.loads(event_json(c)) for c in of(parsed.events, FileChange)]
    assert all("diff" not in line and "content" not in line for line in lines)


def test_a_patch_that_failed_changes_no_file(tmp_path: Path) -> None:
    records = [
        {"type": "thread.started", "thread_id": THREAD},
        item(
            "file_change", "item_0", changes=[{"path": "/r/a.py", "kind": "add"}], status="failed"
        ),
    ]
    events = _parse(tmp_path, records)
    assert [(r.call_id, r.ok) for r in of(events, ToolResult)] == [("item_0", False)]
    assert of(events, FileChange) == []


def test_later_versions_diffs_are_kept(tmp_path: Path) -> None:
    """Codex's app server gives each change a `diff`: an added file's text, a deleted file's
    text, an update's hunks."""
    changes = [
        {"path": "/r/new.py", "kind": "add", "diff": "x = 1\n"},
        {"path": "/r/gone.py", "kind": "delete", "diff": "y = 2\n"},
        {"path": "/r/cart.py", "kind": "update", "diff": "@@ -1 +1 @@\n-total = 1\n+total = 0\n"},
    ]
    records = [item("file_change", "item_0", changes=changes, status="completed")]
    found = {c.path: c for c in of(_parse(tmp_path, records), FileChange)}
    assert (found["/r/new.py"].content, found["/r/new.py"].added) == ("x = 1\n", 1)
    assert found["/r/new.py"].diff.startswith("--- /dev/null\n+++ b//r/new.py\n@@ -0,0 +1 @@")
    assert (found["/r/gone.py"].removed, found["/r/gone.py"].added) == (1, 0)
    assert found["/r/cart.py"].diff.endswith("@@ -1 +1 @@\n-total = 1\n+total = 0\n")
    assert (found["/r/cart.py"].added, found["/r/cart.py"].removed) == (1, 1)
    assert found["/r/cart.py"].anchored


def test_started_and_updated_items_are_counted_as_repeats(parsed: Any) -> None:
    # item_1 started once; item_2 (the plan) completed as its update left it.
    assert parsed.dropped["repeated_item"] == 2
    assert parsed.dropped["turn_marker"] == 1


def test_turn_usage_splits_the_cached_input_and_has_no_cost(parsed: Any) -> None:
    (turn,) = of(parsed.events, Usage)
    assert (turn.input_tokens, turn.cache_read_tokens, turn.output_tokens) == (1000, 200, 345)
    assert (turn.cost_usd, turn.requests) == (None, None)


def test_a_resumed_threads_turn_counts_what_its_totals_grew_by(tmp_path: Path) -> None:
    """Codex prints the thread's running totals at each turn's end."""
    records = [
        {"type": "thread.started", "thread_id": THREAD},
        usage(1000, 100, 50),
        {"type": "thread.started", "thread_id": THREAD},
        usage(2500, 900, 80),
        {"type": "thread.started", "thread_id": "another"},
        usage(300, 0, 10),
    ]
    events = _parse(tmp_path, records)
    figures = [(u.input_tokens, u.cache_read_tokens, u.output_tokens) for u in of(events, Usage)]
    assert figures == [(900, 100, 50), (700, 800, 30), (300, 0, 10)]
    assert [r.reason for r in of(events, RawEvent)] == [
        "a thread started again in the same stream (a resumed run)"
    ] * 2


def test_a_failed_turn_and_a_stream_error_are_errors(tmp_path: Path) -> None:
    records = [
        {"type": "thread.started", "thread_id": THREAD},
        {"type": "turn.started"},
        item("command_execution", "item_0", "started", **command(LS, "", None, "in_progress")),
        {"type": "error", "message": "stream disconnected before completion"},
        {"type": "turn.failed", "error": {"message": "exceeded retry limit, last status: 429"}},
    ]
    events = _parse(tmp_path, records)
    assert [e.message for e in of(events, Error)] == [
        "stream disconnected before completion",
        "exceeded retry limit, last status: 429",
    ]
    # The command that never completed is its call, without a result, before the failure.
    assert [(e.kind, e.source.line) for e in events[1:-1]] == [
        ("error", 4),
        ("tool_call", 3),
        ("error", 5),
    ]
    assert of(events, ToolResult) == []


def test_malformed_and_truncated_lines_are_problems_and_the_import_goes_on(
    tmp_path: Path,
) -> None:
    path = tmp_path / "cut.jsonl"
    lines = [json.dumps(r) for r in STREAM[:3]]
    path.write_text(
        "\n".join([lines[0], "{not json", *lines[1:]])
        + "\n"
        + '{"type":"item.completed","item":{"id":"item_9","type":"agent_mess',
        encoding="utf-8",
    )
    session = EXEC.parse(path)
    assert [(p.line, p.message.split(":")[0]) for p in session.problems] == [
        (2, "not JSON"),
        (5, "not JSON"),
    ]
    assert [r.text for r in of(session.events, Reasoning)] == ["**Looking at the cart module**"]
    assert session.events[-1].source.line == 4


def test_unknown_events_and_items_are_kept_raw(tmp_path: Path) -> None:
    later = {"type": "thread.archived", "thread_id": THREAD}
    listed = {"type": ["turn.started"]}
    newer = item("image_generation", "item_0", status="completed")
    records = [{"type": "thread.started", "thread_id": THREAD}, later, listed, newer]
    raws = of(_parse(tmp_path, records), RawEvent)
    assert [(r.record, r.source.line) for r in raws] == [(later, 2), (listed, 3), (newer, 4)]
    assert [r.reason for r in raws] == [
        "event of a type not known here",
        "event of a type not known here",
        "item of a type not known here",
    ]


def test_events_name_their_source_lines(parsed: Any) -> None:
    lines = [(event.kind, event.source.line) for event in parsed.events]
    assert all(line >= 1 for _, line in lines)
    assert lines[:4] == [
        ("session_start", 1),
        ("reasoning", 3),
        ("tool_call", 5),
        ("tool_result", 5),
    ]
    assert lines[-2:] == [("usage", 15), ("session_end", 15)]
    assert {event.source.file for event in parsed.events} == {"exec.jsonl"}


def test_a_stream_without_its_thread_start_is_named_by_its_digest(tmp_path: Path) -> None:
    session = EXEC.parse(jsonl(tmp_path / "tail.jsonl", STREAM[2:4]))
    assert len(session.session_id) == 16 and session.session_id != THREAD


def test_a_file_of_no_events_is_refused(tmp_path: Path) -> None:
    with pytest.raises(StetError):
        EXEC.parse(jsonl(tmp_path / "empty.jsonl", [], "not json\n"))


# -- detection --------------------------------------------------------------------------------


def test_sniff_claims_the_stream_from_any_of_its_first_events() -> None:
    head = "".join(json.dumps(r) + "\n" for r in STREAM[:4])
    assert EXEC.sniff(head)
    assert EXEC.sniff(json.dumps(STREAM[1]) + "\n" + json.dumps(STREAM[2]) + "\n")
    assert EXEC.sniff(json.dumps(usage(1, 0, 1)) + "\n")
    assert not EXEC.sniff('{"type": "error", "message": "x"}\n')  # says nothing of its own
    assert not EXEC.sniff('{"timestamp":"t","type":"session_meta","payload":{"id":"x"}}\n')
    assert not EXEC.sniff('{"type":"turn.started","payload":{}}\n')
    assert not EXEC.sniff('{"type":"user","uuid":"u","sessionId":"s"}\n')
    assert not EXEC.sniff("")
    assert importer("codex-exec").label == "Codex exec --json event stream"


def test_no_other_importer_claims_the_stream(tmp_path: Path) -> None:
    head = "".join(json.dumps(r) + "\n" for r in STREAM[:4])
    for name in FORMATS:
        if name != "codex-exec":
            assert not importer(name).sniff(head), name
    assert detect(jsonl(tmp_path / "exec.jsonl", STREAM)).name == "codex-exec"


def test_codex_rollouts_still_detect_as_codex() -> None:
    folder = SAMPLES / "codex"
    rollouts = sorted(folder.glob("*.jsonl")) if folder.is_dir() else []
    if not rollouts:
        pytest.skip("the public Codex rollout samples are not here")
    for rollout in rollouts:
        assert not EXEC.sniff(Path(rollout).read_text(encoding="utf-8")[:65536]), rollout
        assert detect(rollout).name == "codex", rollout


def test_a_stream_after_a_line_that_is_no_json_is_still_one(tmp_path: Path) -> None:
    """`codex exec --json 2>&1` captures the standard error too: `Reading prompt from
    stdin...` comes before the first event. The stream is still recognised and read, the line
    a problem of the import."""
    path = tmp_path / "run.jsonl"
    lines = [
        "Reading prompt from stdin...",
        json.dumps({"type": "thread.started", "thread_id": THREAD}),
        json.dumps({"type": "turn.started"}),
        json.dumps(
            {
                "type": "item.completed",
                "item": {"id": "item_0", "type": "agent_message", "text": "hi"},
            }
        ),
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert detect(path).name == "codex-exec"
    parsed = EXEC.parse(path)
    assert [a.text for a in of(parsed.events, AgentMessage)] == ["hi"]
    assert [problem.line for problem in parsed.problems] == [1]


def test_the_first_releases_item_type_is_read(tmp_path: Path) -> None:
    """The stream's first releases named an item's kind `item_type` and a message
    `assistant_message`: every item was a raw event."""
    path = tmp_path / "run.jsonl"
    records = [
        {"type": "thread.started", "thread_id": THREAD},
        {
            "type": "item.completed",
            "item": {"id": "item_0", "item_type": "reasoning", "text": "Plan"},
        },
        {
            "type": "item.completed",
            "item": {"id": "item_1", "item_type": "assistant_message", "text": "Done."},
        },
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    assert detect(path).name == "codex-exec"
    events = EXEC.parse(path).events
    assert [r.text for r in of(events, Reasoning)] == ["Plan"]
    assert [a.text for a in of(events, AgentMessage)] == ["Done."]
    assert of(events, RawEvent) == []


def test_a_resumed_runs_items_keep_calls_of_their_own(tmp_path: Path) -> None:
    """Each run numbers its items from item_0: a resumed run printed into the same file gave
    two calls one id, whose results could not be told apart."""
    records = [
        {"type": "thread.started", "thread_id": THREAD},
        item("command_execution", "item_0", **command(LS, "a\n", 0, "completed")),
        {"type": "thread.started", "thread_id": THREAD},
        item("command_execution", "item_0", **command(LS, "b\n", 0, "completed")),
    ]
    events = _parse(tmp_path, records)
    assert [call.call_id for call in of(events, ToolCall)] == ["item_0", "item_0-run2"]
    assert [result.call_id for result in of(events, ToolResult)] == ["item_0", "item_0-run2"]


# -- items closed as the stream closes them -----------------------------------------------------


def _plan(*steps: tuple[str, bool]) -> list[dict[str, Any]]:
    return [{"text": text, "completed": done} for text, done in steps]


def test_each_state_of_a_todo_list_is_an_answered_plan_update(tmp_path: Path) -> None:
    """Codex's exec events start a `todo_list` item at the turn's first `update_plan` call,
    update it (same id, whole plan) at each later one, and complete it as the turn ends with
    the last plan: each call is answered where it was made, and the completion adds none."""
    records = [
        {"type": "thread.started", "thread_id": THREAD},
        {"type": "turn.started"},
        item("todo_list", "item_1", "started", items=_plan(("Read", False), ("Fix", False))),
        item("command_execution", "item_2", **command(LS, "cart.py\n", 0, "completed")),
        item("todo_list", "item_1", "updated", items=_plan(("Read", True), ("Fix", False))),
        item("todo_list", "item_1", "updated", items=_plan(("Read", True), ("Fix", True))),
        item("agent_message", "item_3", text="Fixed."),
        item("todo_list", "item_1", items=_plan(("Read", True), ("Fix", True))),
        usage(100, 0, 10),
    ]
    parsed = EXEC.parse(jsonl(tmp_path / "exec.jsonl", records))
    plans = [
        (call.call_id, call.source.line, [s["status"] for s in call.input["plan"]])
        for call in of(parsed.events, ToolCall)
        if call.name == "update_plan"
    ]
    assert plans == [
        ("item_1", 3, ["pending", "pending"]),
        ("item_1-update1", 5, ["completed", "pending"]),
        ("item_1-update2", 6, ["completed", "completed"]),
    ]
    results = {r.call_id: (r.ok, r.output, r.source.line) for r in of(parsed.events, ToolResult)}
    assert results["item_1"] == (True, "", 3)
    assert results["item_1-update2"] == (True, "", 6)
    assert {c.call_id for c in of(parsed.events, ToolCall)} == set(results)
    assert parsed.dropped["repeated_item"] == 1  # the completion, the last update again
    assert of(parsed.events, SessionEnd)[0].reason is None


def test_a_todo_list_completed_with_another_plan_is_one_more_update(tmp_path: Path) -> None:
    records = [
        item("todo_list", "item_0", "started", items=_plan(("Run tests", False))),
        item("todo_list", "item_0", items=_plan(("Run tests", True))),
        item("todo_list", "item_9", items=_plan(("Only completed", True))),
    ]
    events = _parse(tmp_path, records)
    assert [c.call_id for c in of(events, ToolCall)] == ["item_0", "item_0-update1", "item_9"]
    assert [r.call_id for r in of(events, ToolResult)] == ["item_0", "item_0-update1", "item_9"]


def test_a_completed_web_search_is_answered_with_what_it_searched(tmp_path: Path) -> None:
    """Codex's exec events start a search with an empty query and complete it, once its
    results reached the model, with its query and `action`; the pages are not in them."""
    action = {"type": "search", "query": "python release", "queries": ["python release"]}
    records = [
        {"type": "thread.started", "thread_id": THREAD},
        {"type": "turn.started"},
        item("web_search", "ws_01", "started", query="", action={"type": "other"}),
        item("web_search", "ws_01", query="python release", action=action),
        usage(100, 0, 10),
    ]
    events = _parse(tmp_path, records)
    (call,) = of(events, ToolCall)
    assert (call.call_id, call.name, call.input, call.source.line) == (
        "ws_01",
        "web_search",
        {"query": "python release", "action": action},
        4,
    )
    assert [(r.call_id, r.ok, r.output) for r in of(events, ToolResult)] == [("ws_01", True, "")]


def test_an_mcp_call_without_arguments_has_an_empty_input(tmp_path: Path) -> None:
    """Codex's exec events write `arguments: null` for an MCP call made without any."""
    fields = {"server": "github", "tool": "search_issues", "result": None, "error": None}
    records = [
        item("mcp_tool_call", "item_0", arguments=None, status="completed", **fields),
        item("mcp_tool_call", "item_1", arguments="raw text", status="completed", **fields),
    ]
    inputs = [call.input for call in of(_parse(tmp_path, records), ToolCall)]
    assert inputs == [{}, {"arguments": "raw text"}]


def test_a_stream_that_stops_mid_turn_says_so_at_its_end(tmp_path: Path) -> None:
    """A run killed (or interrupted) while a command ran: no `turn.completed`, the command
    never completed."""
    records = [
        {"type": "thread.started", "thread_id": THREAD},
        {"type": "turn.started"},
        item("command_execution", "item_0", **command(LS, "a\n", 0, "completed")),
        item(
            "command_execution", "item_1", "started", **command("pytest", "", None, "in_progress")
        ),
        item("agent_message", "item_2", text="The suite is still running."),
    ]
    events = _parse(tmp_path, records)
    end = events[-1]
    assert isinstance(end, SessionEnd)
    assert (end.reason, end.source.line) == ("stopped mid-turn", 5)
    assert [c.call_id for c in of(events, ToolCall)] == ["item_0", "item_1"]
    assert [r.call_id for r in of(events, ToolResult)] == ["item_0"]
    # A turn that ended, completed or failed, leaves the end without a reason.
    for last in (usage(1, 0, 1), {"type": "turn.failed", "error": {"message": "quota"}}):
        ended = _parse(tmp_path, [*records, last])
        assert [e.reason for e in of(ended, SessionEnd)] == [None]


def test_a_run_resumed_after_one_cut_short_keeps_the_earlier_call_its_own(
    tmp_path: Path,
) -> None:
    records = [
        {"type": "thread.started", "thread_id": THREAD},
        {"type": "turn.started"},
        item("command_execution", "item_0", "started", **command(LS, "", None, "in_progress")),
        {"type": "thread.started", "thread_id": THREAD},
        {"type": "turn.started"},
        item("command_execution", "item_0", **command(LS, "b\n", 0, "completed")),
        usage(10, 0, 1),
    ]
    events = _parse(tmp_path, records)
    assert [(c.call_id, c.source.line) for c in of(events, ToolCall)] == [
        ("item_0", 3),
        ("item_0-run2", 6),
    ]
    assert [r.call_id for r in of(events, ToolResult)] == ["item_0-run2"]
    assert [e.reason for e in of(events, SessionEnd)] == [None]


def test_subagent_tool_calls_are_calls_answered_by_the_agents_states(tmp_path: Path) -> None:
    """Codex's exec events give each call of a tool driving subagents a `collab_tool_call`
    item: the tool, the sending and receiving threads, the prompt, each receiver's state."""
    child = "019a0000-0000-7000-8000-00000000c41d"
    spawned = {child: {"status": "running", "message": None}}
    done = {child: {"status": "completed", "message": "Tests added."}}
    collab = {"sender_thread_id": THREAD, "receiver_thread_ids": [child]}
    records = [
        {"type": "thread.started", "thread_id": THREAD},
        item(
            "collab_tool_call",
            "item_0",
            "started",
            tool="spawn_agent",
            sender_thread_id=THREAD,
            receiver_thread_ids=[],
            prompt="Write tests",
            agents_states={},
            status="in_progress",
        ),
        item(
            "collab_tool_call",
            "item_0",
            tool="spawn_agent",
            prompt="Write tests",
            agents_states=spawned,
            status="completed",
            **collab,
        ),
        item(
            "collab_tool_call",
            "item_1",
            tool="wait",
            prompt=None,
            agents_states=done,
            status="completed",
            **collab,
        ),
        item(
            "collab_tool_call",
            "item_2",
            tool="send_input",
            prompt="Stop",
            agents_states={child: {"status": "not_found", "message": None}},
            status="failed",
            **collab,
        ),
    ]
    events = _parse(tmp_path, records)
    assert [(c.call_id, c.name, c.input) for c in of(events, ToolCall)] == [
        ("item_0", "spawn_agent", {"receiver_thread_ids": [child], "prompt": "Write tests"}),
        ("item_1", "wait", {"receiver_thread_ids": [child]}),
        ("item_2", "send_input", {"receiver_thread_ids": [child], "prompt": "Stop"}),
    ]
    results = [(r.call_id, r.ok, json.loads(r.output)) for r in of(events, ToolResult)]
    assert results == [
        ("item_0", True, spawned),
        ("item_1", True, done),
        ("item_2", False, {child: {"status": "not_found", "message": None}}),
    ]
    assert of(events, RawEvent) == []
