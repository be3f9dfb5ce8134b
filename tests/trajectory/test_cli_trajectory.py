"""`stet trajectory …` in real repositories: import (a path, --latest, --session), sessions,
list, show, render, validate and export, as a person or a harness runs them."""

from __future__ import annotations

import errno
import io
import json
import os
import shutil
import sys
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pygit2
import pytest
from repos import make_repo
from test_import_atif import TERMINUS_AGENT, TERMINUS_DONE, TERMINUS_FIRST, terminus_step
from test_import_atif import trajectory as atif_trajectory
from test_import_claude_code import headless_run
from test_import_codex import (
    call_output,
    event,
    function_call,
    message,
    meta,
    said,
    turn_context,
    wrapped_output,
)
from test_import_codex import write as write_rollout
from test_import_codex_exec import command, item, usage
from test_importing import MODEL, SESSION_A, SESSION_B, START, Claude, simple_session
from test_sessions import qwen_session

from stet_lsp.core.targets import resolve_target
from stet_lsp.trajectory.events import SCHEMA_VERSION
from stet_lsp.trajectory.sessions import claude_project_folder
from stet_lsp.trajectory.store import working_folder

Run = Callable[..., tuple[int, str, str]]
GIVE_PATH = ": give the transcript's path instead"
"""What a refusal to find a session says to do."""


def folder_of(root: Path) -> Path:
    return working_folder(resolve_target(root)).path


def imported(stet: Run, root: Path, source: Path) -> dict[str, Any]:
    code, out, err = stet("trajectory", "import", str(source), "--json", "-C", str(root))
    assert (code, err) == (0, ""), err
    document: dict[str, Any] = json.loads(out)
    return document


@pytest.fixture
def two_sessions(root: Path, tmp_path: Path) -> tuple[Path, Path]:
    """Two Claude Code sessions in the repository, an hour apart; not imported."""
    first = simple_session(root, SESSION_A, "Add the greeting module", START)
    second = simple_session(root, SESSION_B, "Add the farewell module", START + timedelta(hours=1))
    return first.save(tmp_path / f"{SESSION_A}.jsonl"), second.save(tmp_path / f"{SESSION_B}.jsonl")


# -- import ----------------------------------------------------------------------------------


def test_import_json_is_the_documented_shape(
    stet: Run, root: Path, two_sessions: tuple[Path, Path]
) -> None:
    """`stet trajectory import PATH --json` prints one object:

    - version: the JSON output version (1)
    - trajectory: the working trajectory's id (the target's key)
    - folder: where it is, relative to the repository root
    - session: the imported session's id; format: the importer that read it
    - events: how many events the session gave
    - changed: false when the same source bytes were imported before (nothing was written)
    - problems: [{source, line, message}] records that could not be read
    - redaction: {rule: spans} the gate replaced; dropped: {reason: count} left out
    - outside_repository: the session worked in folders none of which is in this repository
    - continues: the committed trajectories that hold the session's earlier part (left out)
    - also_in: other targets' working trajectories that hold the session too
    - warnings: what the import could not make sure of (another session's redacted values)
    """
    source, _ = two_sessions
    document = imported(stet, root, source)
    key = resolve_target(root).key
    assert document == {
        "version": 1,
        "trajectory": key,
        "folder": f".stet/cache/trajectories/{key}",
        "session": SESSION_A,
        "format": "claude-code",
        "events": document["events"],
        "changed": True,
        "problems": [],
        "redaction": {},
        "dropped": {},
        "outside_repository": False,
        "continues": [],
        "also_in": [],
        "warnings": [],
    }
    assert document["events"] == len(stored_events(root, document)) >= 6
    assert imported(stet, root, source) == document | {"changed": False}


def test_import_prints_what_it_did(stet: Run, root: Path, tmp_path: Path) -> None:
    session = Claude(SESSION_A, root).user("Clean up /home/carol/scratch please").say("Done.")
    source = session.save(tmp_path / "s.jsonl")
    code, out, err = stet("trajectory", "import", str(source), "-C", str(root / "src"))
    assert (code, err) == (0, "")
    key = resolve_target(root).key
    assert out.splitlines() == [
        f"claude-code session {SESSION_A}: imported",
        f"  5 events into .stet/cache/trajectories/{key}",
        "  redacted 1 span(s): home-path 1",
    ]
    code, out, _ = stet("trajectory", "import", str(source), "-C", str(root))
    assert out.splitlines()[0] == f"claude-code session {SESSION_A}: already imported, unchanged"


def test_a_session_of_another_folder_is_imported_and_said_to_be(
    stet: Run, root: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "other-project"
    elsewhere.mkdir()
    session = simple_session(elsewhere, SESSION_A, "Add the greeting module")
    source = session.save(tmp_path / "s.jsonl")
    assert imported(stet, root, source)["outside_repository"] is True
    code, out, _ = stet("trajectory", "import", str(source), "-C", str(root))
    assert code == 0 and "already imported" in out
    assert "the session worked outside this repository" in out
    inner = simple_session(root / "src", SESSION_B, "Add the farewell module")
    assert imported(stet, root, inner.save(tmp_path / "t.jsonl"))["outside_repository"] is False


def test_import_errors_are_one_clear_line(stet: Run, root: Path, tmp_path: Path) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text("# Notes\n\nNothing here.\n")
    code, out, err = stet("trajectory", "import", str(notes), "-C", str(root))
    assert (code, out) == (1, "")
    assert err.startswith(f"stet: error: {notes}: not a transcript of a known format (tried ")
    assert "Claude Code session JSONL" in err and err.count("\n") == 1
    code, _, err = stet("trajectory", "import", str(notes), "--format", "nonsense", "-C", str(root))
    assert code == 2  # a usage error, as a bad --harness is
    assert "stet trajectory import: error: argument --format: invalid choice: 'nonsense'" in err
    assert "(choose from 'atif', 'claude-code', 'codex'," in err
    code, _, err = stet("trajectory", "import", str(tmp_path / "gone.jsonl"), "-C", str(root))
    assert code == 1 and "No such file or directory" in err
    code, _, err = stet("trajectory", "import", str(notes), "--harness", "aider", "-C", str(root))
    assert code == 1 and "--harness chooses among the sessions found" in err
    code, _, err = stet("trajectory", "import", "-", "-C", str(root))
    assert code == 1 and "not from standard input" in err
    events = tmp_path / "events.jsonl"
    events.write_text(
        json.dumps({"kind": "user_message", "step": 1, "session": "s", "source": {}}) + "\n"
    )
    code, _, err = stet("trajectory", "import", str(events), "-C", str(root))
    assert code == 1 and "a Stet trajectory's events.jsonl, not an agent's transcript" in err
    assert not (root / ".stet").exists()


def test_an_empty_path_or_session_id_is_named_as_such(stet: Run, root: Path) -> None:
    """An empty PATH or `--session ""` (a variable that was not set) was told to give one of
    a path, a session id or `latest`, which it had."""
    code, out, err = stet("trajectory", "import", "", "-C", str(root))
    assert (code, out, err) == (
        1,
        "",
        "stet: error: the transcript's path is empty: give the file its harness wrote\n",
    )
    code, out, err = stet("trajectory", "import", "--session", "", "-C", str(root))
    assert (code, out, err) == (
        1,
        "",
        "stet: error: a session id cannot be empty (`stet trajectory sessions` lists them)\n",
    )


def test_import_help_says_what_path_may_be(stet: Run) -> None:
    code, out, _ = stet("trajectory", "import", "--help")
    assert code == 0
    assert "a transcript file, or an OpenHands V1 conversation folder" in " ".join(out.split())


def test_import_with_an_explicit_format(
    stet: Run, root: Path, two_sessions: tuple[Path, Path]
) -> None:
    code, out, _ = stet(
        "trajectory",
        "import",
        str(two_sessions[0]),
        "--format",
        "claude-code",
        "--json",
        "-C",
        str(root),
    )
    assert code == 0 and json.loads(out)["format"] == "claude-code"
    code, _, err = stet(
        "trajectory", "import", str(two_sessions[1]), "--format", "codex", "-C", str(root)
    )
    assert (code, err) == (
        1,
        f"stet: error: {two_sessions[1]}: not in the format it was named as (Codex CLI rollout "
        "JSONL); name another format, or none to have it detected\n",
    )


def test_an_import_problem_is_shown_with_its_line(stet: Run, root: Path, tmp_path: Path) -> None:
    session = simple_session(root, SESSION_A, "Cut short")
    source = session.save(tmp_path / "cut.jsonl")
    with open(source, "a") as stream:
        stream.write('{"type": "assistant", "message": {"content": [{"type": "te')
    document = imported(stet, root, source)
    (problem,) = document["problems"]
    assert problem["source"] == "cut.jsonl" and problem["line"] == len(session.records) + 1
    assert problem["message"].startswith("not JSON: ")


def stored_events(root: Path, document: dict[str, Any]) -> list[dict[str, Any]]:
    """The events an import wrote, as events.jsonl holds them."""
    lines = (root / document["folder"] / "events.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def test_a_codex_rollout_with_phases_is_stored_with_them_and_valid(
    stet: Run, root: Path, tmp_path: Path
) -> None:
    """A rollout of Codex 0.104+ marks each assistant message `commentary` or `final_answer`:
    imported through the command line, events.jsonl holds each agent_message once with its
    phase under Stet's name (`final` for `final_answer`), and the trajectory is valid."""
    records = [
        meta(cwd=str(root), cli_version="0.104.0"),
        event({"type": "task_started", "turn_id": "t1"}),
        turn_context(),
        message("user", "Fix the cart total"),
        said("Looking at cart.py first.", "commentary"),
        event(
            {"type": "agent_message", "message": "Looking at cart.py first.", "phase": "commentary"}
        ),
        function_call("shell", json.dumps({"command": ["cat", "cart.py"]}), "call_1"),
        call_output("call_1", wrapped_output("total = 1\n", 0)),
        said("The total now starts at 0.", "final_answer"),
        event({"type": "task_complete", "turn_id": "t1"}),
    ]
    document = imported(stet, root, write_rollout(tmp_path / "rollout.jsonl", records))
    assert (document["format"], document["problems"]) == ("codex", [])
    agents = [e for e in stored_events(root, document) if e["kind"] == "agent_message"]
    assert [(e["text"], e["phase"]) for e in agents] == [
        ("Looking at cart.py first.", "commentary"),
        ("The total now starts at 0.", "final"),
    ]
    folder = root / document["folder"]
    code, out, err = stet("trajectory", "validate", str(folder))
    assert (code, out, err) == (0, "", f"{folder}: valid\n")


def test_an_atif_trajectory_of_terminus_replies_is_stored_as_its_calls(
    stet: Run, root: Path, tmp_path: Path
) -> None:
    """Terminus 2 run with its JSON parser keeps each reply as an ATIF step's message:
    imported through the command line, events.jsonl holds each command as a `bash_command`
    call, the completion as a `mark_task_complete` call, and the screen after them as their
    result, and the trajectory is valid."""
    steps = [
        {"step_id": 1, "source": "user", "message": "Fix the build"},
        terminus_step(2, json.dumps(TERMINUS_FIRST, indent=2), "root@box:/app# ls\ntask.md"),
        terminus_step(3, json.dumps(TERMINUS_DONE), "root@box:/app#"),
    ]
    source = tmp_path / "trajectory.json"
    source.write_text(json.dumps(atif_trajectory(steps, agent=TERMINUS_AGENT), indent=2))
    document = imported(stet, root, source)
    assert (document["format"], document["problems"]) == ("atif", [])
    events = stored_events(root, document)
    calls = [(e["call_id"], e["name"], e.get("input")) for e in events if e["kind"] == "tool_call"]
    assert calls == [
        ("terminus-1-1", "bash_command", {"keystrokes": "ls -la\n", "duration": 0.1}),
        ("terminus-1-2", "bash_command", {"keystrokes": "cat task.md\n", "duration": 0.5}),
        ("terminus-2-done", "mark_task_complete", None),  # an empty input is not written
    ]
    results = [(e["call_id"], e["output"]) for e in events if e["kind"] == "tool_result"]
    assert results == [
        ("terminus-1-2", "root@box:/app# ls\ntask.md"),
        ("terminus-2-done", "root@box:/app#"),
    ]
    messages = [e["text"] for e in events if e["kind"] == "agent_message"]
    assert messages == [
        "A fresh shell in /app.\n\nList the files, then read the task.",
        "The tests pass.",
    ]
    folder = root / document["folder"]
    code, out, err = stet("trajectory", "validate", str(folder))
    assert (code, out, err) == (0, "", f"{folder}: valid\n")


def test_a_codex_exec_stream_is_stored_with_relative_paths_and_valid(
    stet: Run, root: Path, tmp_path: Path
) -> None:
    """What `codex exec --json` printed in a CI job, its paths absolute in the repository:
    imported through the command line, its file changes and the patch's call name the files
    relative to it, the failed command's result is failed, and the trajectory is valid."""
    records = [
        {"type": "thread.started", "thread_id": "0199a213-81c0-7800-8aa1-bbab2a035a53"},
        {"type": "turn.started"},
        item(
            "command_execution", "item_0", "started", **command("pytest", "", None, "in_progress")
        ),
        item("command_execution", "item_0", **command("pytest", "1 failed\n", 1, "failed")),
        item(
            "file_change",
            "item_1",
            changes=[{"path": f"{root}/src/cart.py", "kind": "update"}],
            status="completed",
        ),
        item("agent_message", "item_2", text=f"Fixed {root}/src/cart.py."),
        usage(1200, 200, 345),
    ]
    source = tmp_path / "codex-exec.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in records))
    document = imported(stet, root, source)
    assert (document["format"], document["problems"]) == ("codex-exec", [])
    events = stored_events(root, document)
    assert events[0]["harness"] == "codex"
    changes = [
        (e["path"], e["operation"], "diff" in e) for e in events if e["kind"] == "file_change"
    ]
    assert changes == [("src/cart.py", "modify", False)]
    calls = [e["input"] for e in events if e["kind"] == "tool_call" and e["name"] == "apply_patch"]
    assert calls == [{"changes": [{"path": "src/cart.py", "kind": "update"}]}]
    results = [(e["call_id"], e.get("ok", True)) for e in events if e["kind"] == "tool_result"]
    assert results == [("item_0", False), ("item_1", True)]
    assert [e["text"] for e in events if e["kind"] == "agent_message"] == ["Fixed src/cart.py."]
    folder = root / document["folder"]
    code, out, err = stet("trajectory", "validate", str(folder))
    assert (code, out, err) == (0, "", f"{folder}: valid\n")


# -- list, show, render ----------------------------------------------------------------------


def test_list_show_and_render(stet: Run, root: Path, two_sessions: tuple[Path, Path]) -> None:
    code, out, _ = stet("trajectory", "list", "-C", str(root))
    assert (code, out) == (0, "no trajectories yet (stet trajectory import …)\n")
    code, _, err = stet("trajectory", "show", "-C", str(root))
    assert code == 1 and err == (
        "stet: error: main has no working trajectory yet: import an agent session (Stet's "
        "import command in the editor, or stet trajectory import) or graduate an entry first, "
        "or name a committed trajectory\n"
    )
    for source in two_sessions:
        imported(stet, root, source)
    key = resolve_target(root).key
    meta = json.loads((folder_of(root) / "meta.json").read_text())

    code, out, _ = stet("trajectory", "list", "--json", "-C", str(root))
    assert code == 0
    assert json.loads(out) == {
        "version": 1,
        "trajectories": [
            {
                "id": key,
                "working": True,
                "path": f".stet/cache/trajectories/{key}",
                "target": "main",
                "steps": meta["steps"],
                "started": meta["started"],
                "ended": meta["ended"],
                "harnesses": ["claude-code"],
                "brief": "Add the greeting module",
                "orphaned": False,
            }
        ],
        "problems": [],
    }
    code, out, _ = stet("trajectory", "list", "-C", str(root))
    assert out == f"working  {key}  {meta['steps']} steps  claude-code  Add the greeting module\n"

    # A committed trajectory whose meta.json is nested deeper than json goes (a clone can
    # hold one): the others are listed, it is named, and validate says what is wrong.
    evil = root / ".stet" / "trajectories" / "evil"
    evil.mkdir(parents=True)
    (evil / "meta.json").write_text("[" * 100_000 + "]" * 100_000)
    (evil / "events.jsonl").write_text("")
    code, out, err = stet("trajectory", "list", "--json", "-C", str(root))
    listed = json.loads(out)
    assert code == 0 and [row["id"] for row in listed["trajectories"]] == [key]
    assert [problem["path"] for problem in listed["problems"]] == [".stet/trajectories/evil"]
    code, out, err = stet("trajectory", "validate", str(evil))
    assert code == 1 and "nested deeper" in out + err and "Traceback" not in out + err
    shutil.rmtree(evil)

    code, out, _ = stet("trajectory", "show", "-C", str(root))
    rows = out.splitlines()
    assert code == 0 and len(rows) == meta["steps"]
    assert rows[0] == f"    1  session_start claude-code 2.1.12, {MODEL} on main"
    assert "    2  user_message  Add the greeting module" in rows
    assert any(row.startswith("    ") and "tool_call     Write src/aaaa.py" in row for row in rows)
    assert any("file_change   create src/aaaa.py +2 -0" in row for row in rows)

    code, out, _ = stet("trajectory", "show", key[:12], "--json", "-C", str(root))
    document = json.loads(out)
    assert set(document) == {"version", "trajectory", "total", "more", "steps"}
    assert document["trajectory"] == key and document["more"] == 0
    steps = document["steps"]
    assert [step["step"] for step in steps] == list(range(1, meta["steps"] + 1))
    assert set(steps[0]) == {"step", "kind", "agent", "time", "summary", "abandoned"}
    assert steps[1] | {"time": None} == {
        "step": 2,
        "kind": "user_message",
        "agent": None,
        "time": None,
        "summary": "Add the greeting module",
        "abandoned": False,
    }
    assert steps[1]["time"] == "2026-03-01T09:00:02.000Z"
    code, _, err = stet("trajectory", "show", "nothing-like-it", "-C", str(root))
    assert code == 1 and f"no trajectory 'nothing-like-it' (trajectories: {key})" in err

    code, out, _ = stet("trajectory", "render", "-C", str(root))
    assert code == 0
    assert out.encode() == (folder_of(root) / "narration.md").read_bytes()
    assert out.index("Add the greeting module") < out.index("Add the farewell module")


def test_list_names_each_harness_once_whatever_its_versions(
    stet: Run, root: Path, two_sessions: tuple[Path, Path]
) -> None:
    second = two_sessions[1]
    second.write_text(second.read_text().replace('"version": "2.1.12"', '"version": "2.2.0"'))
    for source in two_sessions:
        imported(stet, root, source)
    meta = json.loads((folder_of(root) / "meta.json").read_text())
    assert [h["version"] for h in meta["harnesses"]] == ["2.1.12", "2.2.0"]
    code, out, _ = stet("trajectory", "list", "--json", "-C", str(root))
    assert code == 0 and json.loads(out)["trajectories"][0]["harnesses"] == ["claude-code"]
    code, out, _ = stet("trajectory", "list", "-C", str(root))
    assert f"  {meta['steps']} steps  claude-code  Add the greeting module" in out


# -- export ----------------------------------------------------------------------------------


def test_show_tree_groups_the_steps_as_the_editors_outline(
    stet: Run, root: Path, two_sessions: tuple[Path, Path]
) -> None:
    code, _, err = stet("trajectory", "show", "--tree", "-C", str(root))
    assert code == 1 and "has no working trajectory yet" in err
    for source in two_sessions:
        imported(stet, root, source)
    meta = json.loads((folder_of(root) / "meta.json").read_text())

    code, out, _ = stet("trajectory", "show", "--tree", "--json", "-C", str(root))
    document = json.loads(out)
    assert set(document) == {"version", "trajectory", "path", "nodes"}
    assert document["path"] == str(folder_of(root) / "events.jsonl")
    sessions = document["nodes"]
    assert [node["detail"] for node in sessions] == [SESSION_A, SESSION_B]
    assert {node["type"] for node in sessions} == {"session"}

    def steps(nodes: list[dict[str, Any]]) -> list[int]:
        found: list[int] = []
        for node in nodes:
            found += [node["step"]] if node["type"] == "step" else steps(node["children"])
        return found

    # Every step once, in order; each session's first row its start, then its turn.
    assert steps(sessions) == list(range(1, meta["steps"] + 1))
    start, turn = sessions[0]["children"]
    assert (start["kind"], turn["type"], turn["name"]) == (
        "session_start",
        "turn",
        "Add the greeting module",
    )

    code, out, _ = stet("trajectory", "show", "--tree", "-C", str(root))
    rows = out.splitlines()
    assert code == 0 and rows[0].startswith("session claude-code 2.1.12") and SESSION_A in rows[0]
    assert rows[1] == f"      1  session_start claude-code 2.1.12 {MODEL}"
    assert rows[2] == "  turn Add the greeting module  (turn 1)"
    assert rows[3] == "        2  user_message  Add the greeting module"
    assert sum(1 for row in rows if row.lstrip().split(" ")[0].isdigit()) == meta["steps"]


def test_show_tree_of_a_committed_lone_surrogate(stet: Run, tmp_path: Path) -> None:
    """JSON lets a committed events.jsonl write a lone surrogate ("\\ud800"), which the
    outline reads as json does and no UTF-8 output can hold: it is shown as U+FFFD, in the
    rows and in the JSON, where printing it ended in a traceback."""
    from repos import hostile_clone

    event = (
        '{"kind":"tool_call","step":1,"session":"s\\ud800","time":"2026-01-01T00:00:00Z",'
        '"call_id":"c","name":"Bash\\udfff"}\n'
    )
    folder = ".stet/trajectories/t"
    root = hostile_clone(tmp_path, {f"{folder}/events.jsonl": event, f"{folder}/meta.json": "{}"})
    code, out, err = stet("trajectory", "show", "t", "--tree", "-C", str(root))
    assert code == 0 and "Traceback" not in err, err
    assert "session s\ufffd" in out and "Bash\ufffd" in out
    code, out, err = stet("trajectory", "show", "t", "--tree", "--json", "-C", str(root))
    assert code == 0, err
    assert json.loads(out)["nodes"][0]["name"].endswith("\ufffd")


def test_export_atif_and_agent_trace(
    stet: Run, root: Path, repo: pygit2.Repository, tmp_path: Path, two_sessions: tuple[Path, Path]
) -> None:
    for source in two_sessions:
        imported(stet, root, source)
    code, out, err = stet("trajectory", "export", "--format", "atif", "-C", str(root))
    assert (code, err) == (0, "")
    atif = json.loads(out)
    assert atif["schema_version"] == "ATIF-v1.8"
    assert atif["agent"]["name"] == "claude-code" and atif["agent"]["model_name"] == MODEL
    assert [step["step_id"] for step in atif["steps"]] == list(range(1, len(atif["steps"]) + 1))
    users = [step["message"] for step in atif["steps"] if step["source"] == "user"]
    assert users == ["Add the greeting module", "Add the farewell module"]
    calls = [call for step in atif["steps"] for call in step.get("tool_calls", [])]
    assert [(call["function_name"], call["arguments"]["file_path"]) for call in calls] == [
        ("Write", "src/aaaa.py"),
        ("Write", "src/bbbb.py"),
    ]
    written = tmp_path / "out" / "trajectory.atif.json"
    written.parent.mkdir()
    code, out, _ = stet(
        "trajectory", "export", "--format", "atif", "-o", str(written), "-C", str(root)
    )
    assert (code, out) == (0, "")
    assert json.loads(written.read_text()) == atif

    code, out, _ = stet("trajectory", "export", "--format", "agent-trace", "-C", str(root))
    trace = json.loads(out)
    assert trace["vcs"] == {"type": "git", "revision": str(repo.head.target)}
    assert [entry["path"] for entry in trace["files"]] == ["src/aaaa.py", "src/bbbb.py"]
    ranges = trace["files"][0]["conversations"][0]["ranges"]
    assert [(r["start_line"], r["end_line"]) for r in ranges] == [(1, 2)]
    written = tmp_path / "trace.json"
    code, _, _ = stet(
        "trajectory", "export", "--format", "agent-trace", "-o", str(written), "-C", str(root)
    )
    assert code == 0 and json.loads(written.read_text()) == trace
    nowhere = tmp_path / "no-such-folder" / "trace.json"
    code, out, err = stet(
        "trajectory", "export", "--format", "atif", "-o", str(nowhere), "-C", str(root)
    )
    assert (code, out) == (1, "") and err == (
        f"stet: error: {nowhere}: no folder {nowhere.parent}; nothing was written "
        "(make the folder, or give -o another path)\n"
    )
    assert ".tmp" not in err and not nowhere.parent.exists()
    code, _, err = stet("trajectory", "export", "--format", "nope", "-C", str(root))
    assert code == 2 and "invalid choice: 'nope'" in err


def test_export_never_writes_into_git_or_stet_folders(
    stet: Run,
    root: Path,
    tmp_path: Path,
    two_sessions: tuple[Path, Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An export replaces the file it is given: git's config or a trajectory's events would
    be lost. Relative paths are the command's -C folder's, as `stet -C DIR` makes them."""
    # Started elsewhere: a relative path taken from where the process runs lands there.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    imported(stet, root, two_sessions[0])
    events = folder_of(root) / "events.jsonl"
    kept = {path: path.read_bytes() for path in (root / ".git" / "config", events)}
    for output in (".git/config", str(events), ".stet/x.json", "src/.git/x.json", ""):
        code, out, err = stet(
            "trajectory", "export", "--format", "atif", "-o", output, "-C", str(root)
        )
        assert (code, out) == (1, "") and err.startswith("stet: error: "), output
        hints = ("(give -o a path outside it)\n", "(make the folder, or give -o another path)\n")
        assert err.endswith(hints) or "an empty path" in err, err
    assert {path: path.read_bytes() for path in kept} == kept
    # -C's folder is where a relative path starts, for -o and for the transcript alike.
    copy = root / "session-copy.jsonl"
    copy.write_bytes(two_sessions[1].read_bytes())
    code, _, err = stet("trajectory", "import", copy.name, "-C", str(root))
    assert code == 0, err
    code, _, err = stet(
        "trajectory", "export", "--format", "atif", "-o", "out.json", "-C", str(root)
    )
    assert code == 0, err
    assert json.loads((root / "out.json").read_text())["schema_version"] == "ATIF-v1.8"
    assert list(elsewhere.iterdir()) == []


def test_a_session_already_imported_is_refused_in_another_format(
    stet: Run, root: Path, tmp_path: Path, two_sessions: tuple[Path, Path]
) -> None:
    """Stet's own ATIF export of a session, imported beside the transcript it came from,
    would count every step and token twice."""
    imported(stet, root, two_sessions[0])
    exported = tmp_path / "export.json"
    assert (
        stet("trajectory", "export", "--format", "atif", "-o", str(exported), "-C", str(root))[0]
        == 0
    )
    meta = (folder_of(root) / "meta.json").read_bytes()
    code, out, err = stet("trajectory", "import", str(exported), "-C", str(root))
    assert (code, out) == (1, "")
    assert f"session {SESSION_A} is in this trajectory already, imported as claude-code" in err
    assert "importing it again as atif would count it twice" in err
    assert (folder_of(root) / "meta.json").read_bytes() == meta
    # Into a trajectory that does not hold it, it is imported.
    code, _, err = stet(
        "trajectory", "import", str(exported), "--target", "review", "-C", str(root)
    )
    assert code == 0, err


def test_import_prints_the_session_id_as_the_files_hold_it(
    stet: Run, root: Path, tmp_path: Path
) -> None:
    token = "ghp_" + "Zq8Xw2Lm4Np6Rt8Vb0Cd2Fg4Hj6Kl8Mn0Pq2S"
    source = simple_session(root, f"sess-{token}", "Add it").save(tmp_path / "s.jsonl")
    for args in (("--json",), ()):
        code, out, err = stet("trajectory", "import", str(source), *args, "-C", str(root))
        assert code == 0 and token not in out + err and "sess-[REDACTED:github-token#1]" in out


def test_a_session_imported_again_keeps_what_a_stricter_import_redacted(
    stet: Run, root: Path, tmp_path: Path
) -> None:
    """`--env-name` (or `--strict`) once, then a plain import (what the hooks run): the
    session is gated as strictly as before, and no value comes back."""
    value = "corvette1985"
    source = simple_session(root, SESSION_A, f"run with ACME_REGION_CODE={value} now")
    path = source.save(tmp_path / "s.jsonl")
    code, _, err = stet(
        "trajectory", "import", str(path), "--env-name", "ACME_REGION_CODE", "-C", str(root)
    )
    assert code == 0, err

    def written() -> list[str]:
        stet_folder = root / ".stet"
        return [str(f) for f in stet_folder.rglob("*") if f.is_file() and value in f.read_text()]

    assert written() == []
    code, out, _ = stet("trajectory", "import", str(path), "--json", "-C", str(root))
    assert code == 0 and json.loads(out)["changed"] is False
    path.write_text(path.read_text() + "\n")  # the transcript grew: stored again
    code, out, _ = stet("trajectory", "import", str(path), "--json", "-C", str(root))
    assert code == 0 and json.loads(out)["changed"] is True
    assert written() == []


def test_a_failed_write_to_standard_output_is_one_clear_line(
    stet: Run, root: Path, two_sessions: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    imported(stet, root, two_sessions[0])

    class Full(io.StringIO):
        def write(self, text: str) -> int:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(sys, "stdout", Full())
    from stet_lsp.cli import main

    for args in (("export", "--format", "atif"), ("show",)):
        error = io.StringIO()
        monkeypatch.setattr(sys, "stderr", error)
        assert main(["trajectory", *args, "-C", str(root)]) == 1
        assert error.getvalue() == "stet: error: No space left on device\n"


def test_a_terminal_is_shown_control_characters_as_their_pictures(
    stet: Run, root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A prompt (or any text of a transcript) holding escape sequences that would write the
    clipboard and clear the screen reaches a terminal as visible pictures; a pipe gets it as
    it is."""
    prompt = "Fix it \x1b]52;c;ZXZpbA==\x07\x1b[2J\x9bdone"
    source = simple_session(root, SESSION_A, prompt).save(tmp_path / "s.jsonl")
    imported(stet, root, source)
    piped = stet("trajectory", "show", "-C", str(root))[1]
    assert "\x1b]52;c;ZXZpbA==\x07\x1b[2J" in piped

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    from stet_lsp.cli import main

    shown = Terminal()
    monkeypatch.setattr(sys, "stdout", shown)
    assert main(["trajectory", "show", "-C", str(root)]) == 0
    assert "Fix it ␛]52;c;ZXZpbA==␇␛[2J\ufffddone" in shown.getvalue()
    assert not any(
        0x80 <= ord(c) < 0xA0 or (ord(c) < 0x20 and c not in "\t\n") for c in shown.getvalue()
    )
    assert sys.stdout is shown  # put back after the command
    # An error quoting what it was given is shown the same way.
    said = Terminal()
    monkeypatch.setattr(sys, "stderr", said)
    assert main(["trajectory", "import", str(tmp_path / "x\x1b[2J.jsonl"), "-C", str(root)]) == 1
    assert "x␛[2J.jsonl" in said.getvalue() and "\x1b" not in said.getvalue()


def test_a_repository_whose_config_git_cannot_read_is_a_clear_error(stet: Run, root: Path) -> None:
    config = root / ".git" / "config"
    config.write_text(config.read_text() + "[core\n")
    for args in (("trajectory", "list"), ("note", "list")):
        code, out, err = stet(*args, "-C", str(root))
        assert (code, out) == (1, "")
        assert err.startswith("stet: error: cannot open the repository: ") and "config" in err


# -- validate --------------------------------------------------------------------------------


def test_validate_a_trajectory_and_a_broken_events_file(
    stet: Run, root: Path, tmp_path: Path, two_sessions: tuple[Path, Path]
) -> None:
    imported(stet, root, two_sessions[0])
    folder = folder_of(root)
    code, out, err = stet("trajectory", "validate", str(folder))
    assert (code, out, err) == (0, "", f"{folder}: valid\n")
    code, out, _ = stet("trajectory", "validate", str(folder), "--json")
    assert json.loads(out) == {"version": 1, "valid": True, "issues": []}

    lines = (folder / "events.jsonl").read_text().splitlines()
    broken_folder = tmp_path / "broken"
    broken_folder.mkdir()
    (broken_folder / "meta.json").write_bytes((folder / "meta.json").read_bytes())
    lines[1] = '{"kind": "user_message", "text": "no step, session or source"}'
    lines[2] = "this is not JSON"
    third = json.loads(lines[3])
    lines[3] = json.dumps(third | {"step": 9})  # a step out of order
    lines.insert(5, "")  # a blank line is skipped, and still counted as a line
    (broken_folder / "events.jsonl").write_text("\n".join(lines) + "\n")
    code, out, err = stet("trajectory", "validate", str(broken_folder))
    assert code == 1
    rows = out.splitlines()
    assert rows[0] == "events.jsonl:2: error: user_message.session: Field required"
    assert rows[1].startswith("events.jsonl:3: error: Invalid JSON")
    assert rows[2] == "events.jsonl:4: error: step is 9, expected 4"
    # the call on line 3 is gone: its result is a warning, not an error
    assert (
        rows[3]
        == "events.jsonl:5: warning: result of call 'toolu_aaaa', which no earlier step made"
    )
    assert len(rows) == 4
    assert err == f"{broken_folder}: 3 error(s)\n"

    code, out, _ = stet("trajectory", "validate", str(broken_folder / "events.jsonl"), "--json")
    document = json.loads(out)
    assert code == 1 and document["valid"] is False
    assert [(i["file"], i["line"], i["severity"]) for i in document["issues"]] == [
        ("events.jsonl", 2, "error"),
        ("events.jsonl", 3, "error"),
        ("events.jsonl", 4, "error"),
        ("events.jsonl", 5, "warning"),
    ]

    # meta.json that does not agree with events.jsonl, and one that is missing
    (broken_folder / "events.jsonl").write_text(
        "\n".join((folder / "events.jsonl").read_text().splitlines()[:3]) + "\n"
    )
    code, out, _ = stet("trajectory", "validate", str(broken_folder))
    steps = json.loads((folder / "meta.json").read_text())["steps"]
    assert (code, out) == (1, f"meta.json:1: error: steps is {steps}, events.jsonl holds 3\n")
    (broken_folder / "meta.json").unlink()
    code, out, _ = stet("trajectory", "validate", str(broken_folder))
    assert (code, out) == (1, "meta.json:1: error: missing\n")
    code, _, err = stet("trajectory", "validate", str(tmp_path / "nowhere"))
    assert code == 1 and "no such file" in err


def test_validate_reads_a_trajectory_of_an_earlier_minor_version_and_warns_of_a_later_one(
    stet: Run, root: Path, two_sessions: tuple[Path, Path]
) -> None:
    """A 1.4 trajectory (no agent message has a `phase`) is valid to this Stet; one that names
    a later minor version is read with a warning."""
    imported(stet, root, two_sessions[0])
    folder = folder_of(root)
    assert '"phase"' not in (folder / "events.jsonl").read_text()
    meta = json.loads((folder / "meta.json").read_text())
    (folder / "meta.json").write_text(json.dumps(meta | {"schema_version": "1.4"}))
    code, out, err = stet("trajectory", "validate", str(folder))
    assert (code, out, err) == (0, "", f"{folder}: valid\n")
    major, minor = SCHEMA_VERSION.split(".")
    later = f"{major}.{int(minor) + 1}"
    (folder / "meta.json").write_text(json.dumps(meta | {"schema_version": later}))
    code, out, _ = stet("trajectory", "validate", str(folder))
    assert code == 0
    assert out == (
        f"meta.json:1: warning: schema_version {later}; this Stet reads up to {SCHEMA_VERSION}\n"
    )


def test_validate_given_a_trajectory_s_meta_json_or_narration_checks_the_trajectory(
    stet: Run, root: Path, tmp_path: Path, two_sessions: tuple[Path, Path]
) -> None:
    """A trajectory's meta.json or narration.md was read as an events.jsonl: an error for
    every line of a valid trajectory. Either names its folder, which is checked."""
    imported(stet, root, two_sessions[0])
    folder = folder_of(root)
    for name in ("meta.json", "narration.md"):
        code, out, err = stet("trajectory", "validate", str(folder / name))
        assert (code, out, err) == (0, "", f"{folder / name}: valid\n")
    meta = json.loads((folder / "meta.json").read_text())
    (folder / "meta.json").write_text(json.dumps(meta | {"steps": 1}))
    code, out, _ = stet("trajectory", "validate", str(folder / "meta.json"))
    assert code == 1 and out.startswith("meta.json:1: error: steps is 1"), out


def test_validate_refuses_bytes_that_are_not_utf8(
    stet: Run, root: Path, tmp_path: Path, two_sessions: tuple[Path, Path]
) -> None:
    imported(stet, root, two_sessions[0])
    data = (folder_of(root) / "events.jsonl").read_bytes().split(b"\n")
    data[1] = data[1].replace(b"Add the", b"Add\xff the", 1)
    assert b"\xff" in data[1]
    broken = tmp_path / "events.jsonl"
    broken.write_bytes(b"\n".join(data))
    column = len(data[1][: data[1].index(b"\xff")].decode()) + 1
    code, out, _ = stet("trajectory", "validate", str(broken))
    assert (code, out) == (1, f"events.jsonl:2: error: not UTF-8 (column {column})\n")


def test_validate_places_broken_json_by_its_column_in_characters(
    stet: Run, root: Path, tmp_path: Path, two_sessions: tuple[Path, Path]
) -> None:
    """A line that is not JSON is placed as a compiler places it, `file:line:` and the
    column in characters on that line, not pydantic's own `line 1` and its column in bytes."""
    imported(stet, root, two_sessions[0])
    lines = (folder_of(root) / "events.jsonl").read_text().split("\n")
    lines[1] = '{"note": "caf\u00e9 \u2192 x" oops}'
    broken = tmp_path / "events.jsonl"
    broken.write_text("\n".join(lines))
    code, out, _ = stet("trajectory", "validate", str(broken))
    assert (code, out) == (
        1,
        "events.jsonl:2: error: Invalid JSON: expected `,` or `}` at column 21\n",
    )


def test_a_meta_json_that_is_not_json_is_placed_alike_everywhere(
    stet: Run, root: Path, two_sessions: tuple[Path, Path]
) -> None:
    """A meta.json edited into broken JSON: `trajectory list` gave pydantic's place, the
    column in bytes (`column 17` past an `é`; `line 2 column 0` after a line break), and
    validate `meta.json:1` with json's `line N column 16 (char …)`. Both give the line and
    column 16, in characters, as an editor shows them."""
    imported(stet, root, two_sessions[0])
    folder = folder_of(root)
    text = json.dumps(json.loads((folder / "meta.json").read_text()), indent=2)
    rows = text.split("\n")
    number = next(n for n, row in enumerate(rows, 1) if row.startswith('  "steps": '))
    rows[number - 1] = '  "steps": "\u00e9" x,'
    (folder / "meta.json").write_text("\n".join(rows))
    code, out, _ = stet("trajectory", "validate", str(folder))
    assert (code, out) == (
        1,
        f"meta.json:{number}: error: not JSON: Expecting ',' delimiter at column 16\n",
    )
    code, _, err = stet("trajectory", "list", "-C", str(root))
    assert code == 0 and err.endswith(
        f"meta.json: Invalid JSON: expected `,` or `}}` at line {number}, column 16\n"
    ), err
    (folder / "meta.json").write_text("{\n")
    code, _, err = stet("trajectory", "list", "-C", str(root))
    assert err.endswith(
        "meta.json: Invalid JSON: EOF while parsing an object at line 2, column 1\n"
    )


def test_validating_a_transcript_says_to_import_it(stet: Run, root: Path, tmp_path: Path) -> None:
    source = simple_session(root, SESSION_A, "Add the greeting module").save(tmp_path / "s.jsonl")
    code, out, err = stet("trajectory", "validate", str(source))
    assert (code, out) == (1, "")
    assert err.strip().endswith(
        "a Claude Code session JSONL, not a trajectory; import it with `stet trajectory "
        "import` and validate the trajectory that makes"
    )
    assert len(err.splitlines()) == 1


def test_validate_names_the_field_a_broken_meta_json_gets_wrong(
    stet: Run, root: Path, two_sessions: tuple[Path, Path]
) -> None:
    imported(stet, root, two_sessions[0])
    folder = folder_of(root)
    meta = json.loads((folder / "meta.json").read_text())
    (folder / "meta.json").write_text(json.dumps(meta | {"steps": "many"}))
    code, out, _ = stet("trajectory", "validate", str(folder))
    assert code == 1
    assert out.startswith("meta.json:1: error: steps: ")


# -- sessions, --latest, --session -----------------------------------------------------------


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake home folder; no harness is configured elsewhere."""
    path = tmp_path / "home"
    path.mkdir()
    monkeypatch.setenv("HOME", str(path))
    for name in (
        "CLAUDE_CONFIG_DIR",
        "CODEX_HOME",
        "GEMINI_CLI_HOME",
        "QWEN_RUNTIME_DIR",
        "OPENHANDS_CONVERSATIONS_DIR",
        "OPENHANDS_PERSISTENCE_DIR",
    ):
        monkeypatch.delenv(name, raising=False)
    return path


def claude_home_sessions(home: Path, root: Path) -> tuple[Path, Path]:
    """The two sessions where Claude Code keeps them for the repository."""
    projects = home / ".claude" / "projects" / claude_project_folder(str(root))
    first = simple_session(root, SESSION_A, "Add the greeting module", START)
    second = simple_session(root, SESSION_B, "Add the farewell module", START + timedelta(hours=1))
    return first.save(projects / f"{SESSION_A}.jsonl"), second.save(projects / f"{SESSION_B}.jsonl")


def test_sessions_latest_and_session_prefix(stet: Run, root: Path, home: Path) -> None:
    code, out, _ = stet("trajectory", "sessions", "-C", str(root))
    assert (code, out) == (0, f"no agent sessions found for {root}\n")
    code, _, err = stet("trajectory", "import", "--latest", "-C", str(root))
    assert code == 1 and err == f"stet: error: no agent sessions found for {root}{GIVE_PATH}\n"

    older, newer = claude_home_sessions(home, root)
    # a session of another project beside them is not this repository's
    simple_session(root.parent / "elsewhere", "cccccccc-1111-4222-8333-444455556666", "Other").save(
        home
        / ".claude"
        / "projects"
        / claude_project_folder(str(root.parent / "elsewhere"))
        / "c.jsonl"
    )
    code, out, _ = stet("trajectory", "sessions", "--json", "-C", str(root))
    assert code == 0
    document = json.loads(out)
    assert document == {
        "version": 1,
        "sessions": [
            {
                "harness": "claude-code",
                "session": SESSION_B,
                "started": "2026-03-01T10:00:02.000Z",
                "first_prompt": "Add the farewell module",
                "size": newer.stat().st_size,
                "path": str(newer),
                "imported": False,
                "committed": [],
            },
            {
                "harness": "claude-code",
                "session": SESSION_A,
                "started": "2026-03-01T09:00:02.000Z",
                "first_prompt": "Add the greeting module",
                "size": older.stat().st_size,
                "path": str(older),
                "imported": False,
                "committed": [],
            },
        ],
    }

    code, out, _ = stet("trajectory", "import", "--latest", "--json", "-C", str(root))
    assert code == 0 and json.loads(out)["session"] == SESSION_B
    code, out, _ = stet("trajectory", "sessions", "--json", "-C", str(root))
    assert [(s["session"], s["imported"]) for s in json.loads(out)["sessions"]] == [
        (SESSION_B, True),
        (SESSION_A, False),
    ]
    code, out, _ = stet("trajectory", "sessions", "-C", str(root))
    rows = out.splitlines()
    assert rows[0].startswith(f"* 2026-03-01T10:00:02  claude-code {SESSION_B[:12]}  ")
    assert rows[0].endswith("Add the farewell module")
    assert rows[1].startswith(f"  2026-03-01T09:00:02  claude-code {SESSION_A[:12]}  ")
    assert rows[2] == "(* already imported)"

    code, out, _ = stet("trajectory", "import", "--session", "AAAA", "--json", "-C", str(root))
    assert code == 0 and json.loads(out)["session"] == SESSION_A
    code, out, _ = stet(
        "trajectory", "sessions", "--harness", "claude-code", "--json", "-C", str(root)
    )
    assert all(s["imported"] for s in json.loads(out)["sessions"])
    meta = json.loads((folder_of(root) / "meta.json").read_text())
    assert meta["sessions"] == [SESSION_A, SESSION_B]
    assert [s["name"] for s in meta["sources"]] == [older.name, newer.name]
    code, out, _ = stet("trajectory", "import", "--latest", "--json", "-C", str(root))
    assert json.loads(out)["changed"] is False

    code, _, err = stet("trajectory", "import", "--session", "ffff", "-C", str(root))
    assert code == 1 and "no session id starts with 'ffff' (2 sessions were found" in err
    code, _, err = stet("trajectory", "import", "--latest", "--harness", "codex", "-C", str(root))
    assert (
        code == 1
        and err == f"stet: error: no agent sessions of codex found for {root}{GIVE_PATH}\n"
    )
    code, _, err = stet("trajectory", "import", "--latest", str(older), "-C", str(root))
    assert code == 2 and "not allowed with argument" in err


def test_latest_takes_the_session_written_to_last(stet: Run, root: Path, home: Path) -> None:
    """A session resumed today started before another one did: --latest takes the one the
    harness wrote to last, as a harness's own `--continue` does, not the one started last."""
    older, newer = claude_home_sessions(home, root)
    later = newer.stat().st_mtime_ns + 60 * 10**9
    os.utime(older, ns=(later, later))
    code, out, _ = stet("trajectory", "import", "--latest", "--json", "-C", str(root))
    assert code == 0 and json.loads(out)["session"] == SESSION_A


def test_latest_passes_over_a_session_file_with_nothing_in_it_yet(
    stet: Run, root: Path, home: Path
) -> None:
    _, newer = claude_home_sessions(home, root)
    empty = newer.with_name("cccccccc-1111-4222-8333-444455556666.jsonl")
    empty.touch()  # a session just started: its file is made before anything is written
    os.utime(empty, (newer.stat().st_mtime + 60,) * 2)
    listed = json.loads(stet("trajectory", "sessions", "--json", "-C", str(root))[1])
    assert listed["sessions"][0]["path"] == str(empty)
    code, out, err = stet("trajectory", "import", "--latest", "--json", "-C", str(root))
    assert (code, err) == (0, "") and json.loads(out)["session"] == SESSION_B
    code, _, err = stet(
        "trajectory", "import", "--session", SESSION_A[:8], "--harness", "codex", "-C", str(root)
    )
    assert (code, err) == (
        1,
        f"stet: error: no agent sessions of codex found for {root}{GIVE_PATH}\n",
    )


def test_a_qwen_code_session_is_listed_imported_and_valid(
    stet: Run, root: Path, home: Path
) -> None:
    """Where Qwen Code keeps the repository's sessions, as a user finds and imports one."""
    chats = home / ".qwen" / "projects" / claude_project_folder(str(root)) / "chats"
    path = qwen_session(chats, "qwen-1", root, "Fix the parser", "2026-03-02T10:00:00.000Z")
    (chats / "qwen-1.ledger.jsonl").write_text('{"v":1,"promptId":"p1","state":"done","at":1}\n')
    code, out, _ = stet(
        "trajectory", "sessions", "--harness", "qwen-code", "--json", "-C", str(root)
    )
    listed = json.loads(out)["sessions"]
    assert code == 0 and [(s["session"], s["path"]) for s in listed] == [("qwen-1", str(path))]
    code, out, _ = stet(
        "trajectory", "import", "--latest", "--harness", "qwen-code", "--json", "-C", str(root)
    )
    assert code == 0 and json.loads(out)["session"] == "qwen-1"
    code, out, _ = stet("trajectory", "validate", str(folder_of(root)), "--json")
    assert code == 0 and json.loads(out)["valid"] is True
    events = [json.loads(line) for line in (folder_of(root) / "events.jsonl").open()]
    assert events[0]["harness"] == "qwen-code"
    assert [e["text"] for e in events if e["kind"] == "user_message"] == ["Fix the parser"]


def test_a_session_s_first_prompt_is_listed_through_the_gate(
    stet: Run, root: Path, home: Path
) -> None:
    """The listing is read by people and by harnesses: a token in the first prompt is
    redacted as in the trajectory's brief (nothing of the session is written)."""
    token = "ghp_" + "Zq8RkT3vXw9LmN2pQs7YbC4dFg6HjK1aVe5U"
    projects = home / ".claude" / "projects" / claude_project_folder(str(root))
    simple_session(root, SESSION_A, f"GITHUB_TOKEN={token} please set this up", START).save(
        projects / f"{SESSION_A}.jsonl"
    )
    for args in (["--json"], []):
        code, out, _ = stet("trajectory", "sessions", *args, "-C", str(root))
        assert code == 0 and token not in out and "GITHUB_TOKEN=[REDACTED:" in out


def test_sessions_of_a_repository_reached_through_a_link(
    stet: Run, root: Path, home: Path, tmp_path: Path
) -> None:
    """Claude Code recorded the linked path (its project folder is named after it): the
    session is found from either path, and its paths become relative."""
    link = tmp_path / "linked-repo"
    link.symlink_to(root, target_is_directory=True)
    projects = home / ".claude" / "projects" / claude_project_folder(str(link))
    source = simple_session(link, SESSION_A, f"Tidy {link}/README.md").save(
        projects / f"{SESSION_A}.jsonl"
    )
    code, out, _ = stet("trajectory", "sessions", "--json", "-C", str(link))
    assert [s["path"] for s in json.loads(out)["sessions"]] == [str(source)]
    code, out, _ = stet("trajectory", "import", "--latest", "--json", "-C", str(link))
    assert code == 0
    meta = json.loads((folder_of(root) / "meta.json").read_text())
    assert meta["brief"] == "Tidy README.md"
    assert meta["files"] == [{"path": "src/aaaa.py", "added": 2, "removed": 0}]


# -- the repository boundary -----------------------------------------------------------------


def test_a_linked_cache_is_refused_with_a_clear_error(
    stet: Run, root: Path, tmp_path: Path, two_sessions: tuple[Path, Path]
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / ".stet").mkdir()
    (root / ".stet" / "cache").symlink_to(outside, target_is_directory=True)
    code, out, err = stet("trajectory", "import", str(two_sessions[0]), "-C", str(root))
    assert (code, out) == (1, "")
    assert err == (
        f"stet: error: {root}/.stet/cache is a symbolic link; Stet does not follow links in "
        "the repository (nothing was changed)\n"
    )
    assert list(outside.iterdir()) == []
    code, out, _ = stet("trajectory", "list", "-C", str(root))
    assert (code, out) == (0, "no trajectories yet (stet trajectory import …)\n")


def test_an_empty_trajectory_id_is_refused(
    stet: Run, root: Path, two_sessions: tuple[Path, Path]
) -> None:
    """'' is no id (as a prefix it named every trajectory), nor the working trajectory."""
    imported(stet, root, two_sessions[0])
    code, _, err = stet("trajectory", "show", "", "-C", str(root))
    assert code == 1 and "a trajectory id cannot be empty" in err
    # `mark` needs an id: the message points to where the ids are, not to leaving it out.
    code, _, err = stet("trajectory", "mark", "", "2", "--verdict", "wrong", "-C", str(root))
    assert code == 1 and "cannot be empty (`stet trajectory list` shows the ids)" in err


# -- blame -----------------------------------------------------------------------------------


def test_blame_of_changes_it_cannot_place(stet: Run, root: Path, tmp_path: Path) -> None:
    """An Edit known only by its search and replace text has no line numbers, and one whose
    search text the file holds twice has no one place: blame says what it could not place,
    the lines it wrote or, for one that only removed lines, the change."""
    path = f"{root}/src/u.py"
    session = Claude(SESSION_A, root, START).user("Write and trim u.py")
    session.write_file("toolu_w", path, "one\ntwo\nthree\ntwo\n")
    session.tool(
        "toolu_e", "Edit", {"file_path": path, "old_string": "two\n", "new_string": ""}, "ok"
    )
    session.tool(
        "toolu_f", "Edit", {"file_path": path, "old_string": "one", "new_string": "ONE"}, "ok"
    )
    (root / "src" / "u.py").write_text("ONE\nthree\ntwo\n", encoding="utf-8")
    trajectory = imported(stet, root, session.save(tmp_path / "session.jsonl"))["trajectory"]

    code, out, err = stet("trajectory", "blame", "src/u.py", "-C", str(root))

    assert (code, err) == (0, "")
    assert "changed 0 line(s)" not in out
    assert "changed the file at a place that could not be found: unanchored" in out
    assert "changed 1 line(s) that could not be placed: unanchored" in out
    assert trajectory in out


def test_blame_names_the_step_that_wrote_each_run_of_lines(
    stet: Run, root: Path, tmp_path: Path
) -> None:
    """`stet trajectory blame PATH [--line N] [--json]`: the runs of the file's lines on disk
    that a step wrote (1-based, inclusive), each with the change and the agent's message that
    led to it; a line no step wrote has none; a line past the end is an error."""
    written = "def greet(name):\n    return f'hello {name}'\n"
    source = (
        Claude(SESSION_A, root, START)
        .user("Add the greeting module")
        .say("I will add a greeting module under src.")
        .write_file("toolu_greet", f"{root}/src/greet.py", written)
        .say("Created src/greet.py.")
        .save(tmp_path / "session.jsonl")
    )
    (root / "src" / "greet.py").write_text("# by hand\n" + written, encoding="utf-8")
    trajectory = imported(stet, root, source)["trajectory"]

    code, out, err = stet("trajectory", "blame", "src/greet.py", "--json", "-C", str(root))
    assert (code, err) == (0, ""), err
    found = json.loads(out)
    assert (found["version"], found["path"], found["lines"]) == (1, "src/greet.py", 3)
    assert (found["unattributed"], found["problems"]) == ([], [])
    [run] = found["runs"]
    assert (run["first_line"], run["last_line"]) == (2, 3)
    assert (run["trajectory"], run["written_as"], run["operation"]) == (
        trajectory,
        "src/greet.py",
        "create",
    )
    assert run["message"] == "I will add a greeting module under src."
    assert run["message_step"] < run["step"] and run["time"]

    code, out, _ = stet("trajectory", "blame", "src/greet.py", "--line", "3", "-C", str(root))
    assert code == 0
    assert f"src/greet.py:2-3  step {run['step']} of {trajectory}  (create, " in out
    assert f"why (step {run['message_step']}): I will add a greeting module under src." in out
    code, out, _ = stet("trajectory", "blame", "src/greet.py", "--line", "1", "-C", str(root))
    assert (code, out) == (0, "src/greet.py:1: no trajectory step wrote this line\n")
    code, _, err = stet("trajectory", "blame", "src/greet.py", "--line", "4", "-C", str(root))
    assert code == 1 and "src/greet.py has 3 lines; line 4 does not exist" in err
    code, _, err = stet("trajectory", "blame", "../outside.py", "-C", str(root))
    assert code == 1 and "outside the repository" in err


def test_an_interrupted_import_says_so_and_the_next_one_finishes(
    root: Path, tmp_path: Path
) -> None:
    """Ctrl-C (SIGINT to the process group, as a terminal sends it) once the import holds the
    working trajectory's lock: exit 130 with one line, no traceback; importing again finishes
    and the trajectory is valid."""
    import os
    import signal
    import subprocess
    import sys
    import time

    session = Claude(SESSION_A, root).user("Read every module.")
    for n in range(400):
        body = "".join(f"    value_{n}_{i} = handler({i})  # retry\n" for i in range(300))
        session = session.tool(f"toolu_{n}", "Bash", {"command": f"cat m{n}.py"}, body)
    source = session.save(tmp_path / f"{SESSION_A}.jsonl")
    lock = root / ".stet/cache/trajectories" / f"{resolve_target(root).key}.lock"
    command = [sys.executable, "-m", "stet_lsp", "trajectory", "import", str(source)]
    process = subprocess.Popen(
        command, cwd=root, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    deadline = time.monotonic() + 60
    while not lock.exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    os.killpg(process.pid, signal.SIGINT)
    _, err = process.communicate(timeout=60)

    if process.returncode == 0:
        pytest.skip("the import ended before the interrupt reached it")
    assert process.returncode == 130
    assert err.strip().splitlines()[-1].startswith("stet: interrupted: ")
    assert "Traceback" not in err
    finished = subprocess.run([*command, "--json"], cwd=root, capture_output=True, text=True)
    assert finished.returncode == 0, finished.stderr
    folder = working_folder(resolve_target(root))
    checked = subprocess.run(
        [sys.executable, "-m", "stet_lsp", "trajectory", "validate", str(folder.path)],
        cwd=root,
        capture_output=True,
        text=True,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_sessions_after_a_rename_of_the_branch_are_still_imported(
    stet: Run, root: Path, home: Path
) -> None:
    claude_home_sessions(home, root)
    code, out, _ = stet("trajectory", "import", "--latest", "--json", "-C", str(root))
    assert code == 0 and json.loads(out)["session"] == SESSION_B
    repo = pygit2.Repository(str(root))
    repo.branches.local[repo.head.shorthand].rename("renamed")

    code, out, _ = stet("trajectory", "sessions", "--json", "-C", str(root))

    assert code == 0
    assert [(s["session"], s["imported"]) for s in json.loads(out)["sessions"]] == [
        (SESSION_B, True),
        (SESSION_A, False),
    ]


def test_an_events_file_saved_with_a_byte_order_mark_keeps_its_first_step(
    stet: Run, root: Path, tmp_path: Path
) -> None:
    """A byte order mark an editor saved before the first line is no part of its JSON: show,
    the tree, validate and blame read step 1 as they do without it."""
    written = "def greet(name):\n    return name\n"
    source = (
        Claude(SESSION_A, root, START)
        .user("Add the greeting module")
        .write_file("toolu_greet", f"{root}/src/greet.py", written)
        .save(tmp_path / "session.jsonl")
    )
    (root / "src" / "greet.py").write_text(written, encoding="utf-8")
    imported(stet, root, source)
    events = folder_of(root) / "events.jsonl"
    commands = [
        ("trajectory", "show", "--json"),
        ("trajectory", "show", "--tree", "--json"),
        ("trajectory", "validate", str(events.parent)),
        ("trajectory", "blame", "src/greet.py", "--json"),
    ]
    without = [stet(*command, "-C", str(root)) for command in commands]
    assert json.loads(without[0][1])["steps"][0]["kind"] == "session_start"

    events.write_bytes(b"\xef\xbb\xbf" + events.read_bytes())

    assert [stet(*command, "-C", str(root)) for command in commands] == without


def test_a_headless_claude_run_on_a_ci_runner_names_the_clones_files(
    stet: Run, root: Path, tmp_path: Path
) -> None:
    """A headless run in a GitHub Actions job worked in the runner's checkout of the
    repository (/home/runner/work/<name>/<name>), a folder this machine does not have: its
    paths stayed absolute and the session was taken for another project's. When the files it
    named there are the repository's, they are named as the repository's, as a sandbox's
    are, from the checkout's root when the run worked in a folder of it."""
    (root / "packages" / "web" / "src").mkdir(parents=True)
    (root / "package.json").write_text("{}\n", encoding="utf-8")
    (root / "packages" / "web" / "src" / "x.py").write_text("a\n", encoding="utf-8")
    checkout = "/home/runner/work/app/app"
    runner = f"{checkout}/packages/web"
    records = headless_run({"subtype": "success", "total_cost_usd": 0.01})
    records[0] = {**records[0], "cwd": runner}
    edit = {"file_path": f"{runner}/src/x.py", "old_string": "a", "new_string": "b"}
    patch = [{"oldStart": 1, "oldLines": 1, "newStart": 1, "newLines": 1, "lines": ["-a", "+b"]}]
    keys = {"session_id": records[0]["session_id"], "parent_tool_use_id": None}
    records[2:2] = [
        {
            "type": "assistant",
            "message": {
                "id": "msg_E",
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "toolu_E", "name": "Edit", "input": edit}],
            },
            **keys,
        },
        {
            "type": "user",
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "toolu_E", "content": "ok"}],
            },
            "tool_use_result": {
                "filePath": f"{runner}/src/x.py",
                "oldString": "a",
                "newString": "b",
                "originalFile": "a\n",
                "structuredPatch": patch,
            },
            **keys,
        },
    ]
    source = tmp_path / "claude-execution-output.json"
    source.write_text(json.dumps(records, indent=2), encoding="utf-8")
    document = imported(stet, root, source)
    assert document["outside_repository"] is False
    changes = [e for e in stored_events(root, document) if e["kind"] == "file_change"]
    assert [change["path"] for change in changes] == ["packages/web/src/x.py"]

    # A folder of another machine that is no job's checkout stays another project's.
    elsewhere = json.dumps(records, indent=2).replace(checkout, "/srv/build/app")
    source.write_text(elsewhere, encoding="utf-8")
    document = imported(stet, root, source)
    assert document["outside_repository"] is True
    source.write_text(json.dumps(records, indent=2), encoding="utf-8")

    # A repository without those files is another project: its paths stay as they were.
    other = make_repo(tmp_path / "other", files={"README.md": "x\n"})
    other_root = Path(other.workdir)
    document = imported(stet, other_root, source)
    assert document["outside_repository"] is True
    changes = [e for e in stored_events(other_root, document) if e["kind"] == "file_change"]
    assert [change["path"] for change in changes] == [f"{runner}/src/x.py"]


@pytest.mark.parametrize("saved", ["stream", "execution file"])
def test_a_headless_claude_runs_output_is_stored_with_its_cost_and_valid(
    stet: Run, root: Path, tmp_path: Path, saved: str
) -> None:
    """What `claude -p --output-format stream-json --verbose` printed, saved by a CI job as
    it came or as claude-code-action's execution file (one JSON array, pretty-printed) and
    imported through the command line: a Claude Code session whose call, result and answer
    are stored, session_end holding the run's reported cost, and the trajectory valid."""
    records = headless_run({"subtype": "success", "is_error": False, "total_cost_usd": 0.0123})
    if saved == "stream":
        source = tmp_path / "run.jsonl"
        text = "".join(json.dumps(record) + "\n" for record in records)
    else:
        source = tmp_path / "claude-execution-output.json"
        text = json.dumps(records, indent=2)
    source.write_text(text, encoding="utf-8")
    document = imported(stet, root, source)
    assert (document["format"], document["problems"]) == ("claude-code", [])
    events = stored_events(root, document)
    assert [e["name"] for e in events if e["kind"] == "tool_call"] == ["Bash"]
    assert [e["text"] for e in events if e["kind"] == "agent_message"] == ["One folder: src."]
    assert [e.get("cost_usd") for e in events if e["kind"] == "session_end"] == [0.0123]
    folder = root / document["folder"]
    code, out, err = stet("trajectory", "validate", str(folder))
    assert (code, out, err) == (0, "", f"{folder}: valid\n")
