"""VS Code 1.100 (code-server) with the packaged extension against the real `stet-lsp`.

code-server runs the .vsix in a throwaway profile; Debian's Chromium, driven by playwright-core
(tests/editors/vscode_drive.mjs), works as a reviewer would; the files on disk (the style
sheet, the trajectory, the commit) are the proof, and screenshots are kept in the test's tmp
folder (`screenshots/`, printed with -s).

- The review scenario, in one window: a margin note in the Problems panel, recorded with the
  quick fix; the entry in the side bar (the status bar item opens it) and, once the file is
  opened again, in a comment thread; an agent session imported from the quick pick and its
  narration; a step opened from the trajectory tree and a file change's diff; the provenance
  hover on a line the agent wrote; the entry graduated from the tree; the capstone's commit.
- Notes: "Stet: Add Note at Cursor", a note through a new comment thread, an agent's note
  written with the CLI, a `stet.*` setting changed in the Settings editor.
- Comment threads mirroring entries recorded before the window opened: they follow lines
  inserted above them, and are edited, replied to, discarded and graduated from the thread.
- A step marked from the narration ("Stet: Mark Step…"); an entry proposed as a skill and the
  capstone (dry run, then commit); the server found in the workspace's `.venv`.
- The sheet paused, an entry edited and another discarded, the sheet resumed, all from the
  command palette; the status bar and the Problems panel after.
- A subagent's steps grouped under the turn whose Task call started it, in the side bar's
  trajectory tree.
- The style sheet holding a pasted secret and a lost anchor: both in the Problems panel, the
  lenses above the open entries, "Redact now" from Ctrl+. (the editor changed, the file on
  disk not until Ctrl+S).
- A file outside the repository active: the status bar, "Stet: Open Style Sheet" and "Stet:
  Add Note at Cursor" keep to the repository; a folder holding a repository below it starts
  the server.
- One behaviour each: "Stet: Show Brief" (and a CLI note in the open brief); "Stet:
  Graduation Review" and "Accept every proposal"; "Stet: Restart Language Server" and a note through
  the new server; the Stet view once a killed server is started again, and once a refused sheet is readable; the skill and discard routes from the side bar; a whole comment thread
  discarded; an edit of a note cancelled with Escape; Go to Definition from a step of
  events.jsonl; a trajectory's schema error and a committed one's secret in the Problems panel;
  a `stet.server.*` setting of a wrong type named in a notification; an entry whose file is
  gone, picked in "Stet: List Entries"; the status bar and the Stet view with two branches'
  working trajectories, and after a switch to a branch without one; a folder in no repository;
  a server that ends at once; "Stet: Add Note at Cursor" in the style sheet; "Stet: Mark Step…"
  above the first step; "Stet: Record Margin Notes in File" twice; a session imported from the
  command line under the Stet view; the capstone with no working trajectory; two repositories
  on one branch; a style sheet the server will not read; "Stet: Open Trajectory" after the
  capstone; the comment gutter outside the repository.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pygit2
import pytest
from claude_transcript import unplaced_session
from editor_harness import (
    CAPSTONE_MESSAGE,
    EDIT_LINE,
    EDIT_NEW,
    EDIT_PROMPT,
    EDIT_SESSION_ID,
    HERE,
    INNER_DESCRIPTION,
    INNER_ID,
    LOST_ANCHOR,
    MARGIN_LINE,
    MARGIN_SOURCE,
    MARGIN_TEXT,
    REDACTED_TOKEN,
    SCHEMA_MESSAGE,
    SECOND_PROMPT,
    SECRET_MESSAGE,
    SECRET_NOTE,
    SESSION_ID,
    SESSION_PROMPT,
    SKILL_ENTRY_TEXT,
    SKILL_NAME,
    SUBAGENT_DESCRIPTION,
    SUBAGENT_ID,
    SUBAGENT_PROMPT,
    SUBAGENT_SESSION_ID,
    VSIX,
    add_note,
    add_skill_entry,
    check_skill_and_capstone,
    claude_edit_session,
    claude_session,
    claude_subagent_session,
    committed_events_with_secret,
    editor_missing,
    events_with_schema_error,
    fake_github_token,
    find_chromium,
    find_code_server,
    find_line,
    fragments,
    free_port,
    isolated_env,
    left_by_deleted_branches,
    make_workspace,
    playwright_installed,
    server_command,
    sheet_entries,
    sheet_with_secret_and_lost_anchor,
    stet,
    stet_command,
    stet_sheet_path,
    working_trajectory,
)

CODE_SERVER = find_code_server()
CHROMIUM = find_chromium()
NODE = shutil.which("node")
_missing = [
    what
    for what, present in (
        ("code-server", CODE_SERVER),
        ("chromium", CHROMIUM),
        ("node", NODE),
        ("playwright-core (tests/editors/node_modules)", playwright_installed()),
        (f"the extension build ({VSIX.relative_to(VSIX.parents[2])})", VSIX.is_file()),
    )
    if not present
]
if _missing:
    editor_missing(f"missing {', '.join(_missing)}")

NOTE_TEXT = "Money amounts are integers of cents"
NOTE_LINE = 5  # 0-based: "return response.json()" once the margin comment is gone
COMMENT_TEXT = "Keep this module free of Django imports"
COMMENT_LINE = 0  # 0-based: "import requests"
AGENT_TEXT = "Payment functions take the URL from settings"
AGENT_LINE = 3  # 0-based: "def pay(url):"

SETTINGS = {
    "security.workspace.trust.enabled": False,
    "workbench.startupEditor": "none",
    "workbench.tips.enabled": False,
    "workbench.welcomePage.walkthroughs.openOnInstall": False,
    "telemetry.telemetryLevel": "off",
    "update.mode": "none",
    "extensions.autoUpdate": False,
    "extensions.autoCheckUpdates": False,
    "extensions.ignoreRecommendations": True,
    "git.enabled": False,
    "chat.disableAIFeatures": True,
    "files.autoSave": "off",
    # VS Code opens the Comments panel over the Problems panel the first time a file with
    # comment threads opens; the tests open it themselves.
    "comments.openView": "never",
}


@pytest.fixture
def code_server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """code-server with the extension in a throwaway profile: (base URL, workspace root).

    Parametrized indirectly with a dict, that dict's settings are set over the usual ones.

    Parametrized indirectly with "venv", it sets no `stet.server.path`: the workspace has a
    `.venv` whose `bin/stet-lsp` leaves a mark, then runs the real server. With "logged",
    `stet.server.path` is a script that appends a line to `server-starts` in the test's tmp
    folder, then runs the real server; with "broken", it names no file (that script is there,
    `stet-lsp-logged`, for the test to set); with "crashing", it is a script that appends the
    server's process id to `server-pids`, and waits three seconds before every start after the
    first."""
    assert CODE_SERVER is not None
    root = make_workspace(tmp_path / "repo")
    venv = getattr(request, "param", None) == "venv"
    if venv:
        script = root / ".venv" / "bin" / "stet-lsp"
        script.parent.mkdir(parents=True)
        script.write_text(
            f"#!/bin/sh\necho started > {tmp_path / 'venv-server-started'}\n"
            f'exec {_server_path()} "$@"\n',
            encoding="utf-8",
        )
        script.chmod(0o755)
    server_path = _server_path()
    if getattr(request, "param", None) in ("logged", "broken"):
        # Each start of the server appends a line to `server-starts`.
        wrapper = tmp_path / "stet-lsp-logged"
        wrapper.write_text(
            f'#!/bin/sh\necho started >> {tmp_path / "server-starts"}\nexec {server_path} "$@"\n',
            encoding="utf-8",
        )
        wrapper.chmod(0o755)
        server_path = str(wrapper)
    if getattr(request, "param", None) == "crashing":
        # Each start appends its process id (exec keeps it the server's) to `server-pids`;
        # every start after the first takes three seconds, as a slow machine's would.
        pids = tmp_path / "server-pids"
        wrapper = tmp_path / "stet-lsp-pids"
        wrapper.write_text(
            f'#!/bin/sh\n[ -s {pids} ] && sleep 3\necho $$ >> {pids}\nexec {server_path} "$@"\n',
            encoding="utf-8",
        )
        wrapper.chmod(0o755)
        server_path = str(wrapper)
    profile = tmp_path / "profile"
    extensions, user = profile / "ext", profile / "user"
    (user / "User").mkdir(parents=True)
    settings = {
        **SETTINGS,
        "stet.server.path": (
            ""
            if venv
            else "/nonexistent/stet-lsp"
            if getattr(request, "param", None) == "broken"
            else server_path
        ),
        # The Problems panel leaves out Hint diagnostics (the default for margin notes): list
        # them as Information, which also proves the settings reach the server.
        "stet.margin.severity": "information",
    }
    if isinstance(getattr(request, "param", None), dict):
        # Parametrized with a dict: settings of its own, over the ones above.
        settings.update(request.param)
    settings_file = user / "User" / "settings.json"
    settings_file.write_text(json.dumps(settings, indent=1), encoding="utf-8")
    env = isolated_env(tmp_path / "home")
    common = ["--extensions-dir", str(extensions), "--user-data-dir", str(user)]
    installed = subprocess.run(
        [CODE_SERVER, *common, "--install-extension", str(VSIX)],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr

    port = free_port()
    log = (tmp_path / "code-server.log").open("wb")
    process = subprocess.Popen(
        [
            CODE_SERVER,
            "--auth",
            "none",
            "--bind-addr",
            f"127.0.0.1:{port}",
            "--disable-telemetry",
            "--disable-update-check",
            "--disable-workspace-trust",
            "--disable-getting-started-override",
            *common,
            str(root),
        ],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group, ended as a whole below
    )
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{base}/healthz", timeout=2):
                    break
            except (urllib.error.URLError, OSError):
                if process.poll() is not None or time.monotonic() > deadline:
                    log.flush()
                    pytest.fail(
                        "code-server did not come up:\n"
                        + (tmp_path / "code-server.log").read_text(errors="replace")
                    )
                time.sleep(0.2)
        yield base, root
    finally:
        try:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=10)
        except ProcessLookupError:
            pass
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)
        log.close()


def _server_path() -> str:
    command = server_command()
    if len(command) != 1:
        pytest.skip("the stet-lsp script is not installed (pip install -e .)")
    return command[0]


def drive(tmp_path: Path, base: str, root: Path, **extra: Any) -> dict[str, Any]:
    shots = tmp_path / "screenshots"
    shots.mkdir()
    out = tmp_path / "vscode-result.json"
    config = {
        "url": f"{base}/?folder={root}",
        "file": "src/pay.py",
        "fileName": "pay.py",
        "marginLine": MARGIN_LINE,
        "noteLine": NOTE_LINE,
        "noteText": NOTE_TEXT,
        "commentLine": COMMENT_LINE,
        "commentText": COMMENT_TEXT,
        "root": str(root),
        "stetCli": stet_command(),
        "agentLine": AGENT_LINE,
        "agentText": AGENT_TEXT,
        "screenshots": str(shots),
        "out": str(out),
        "chromium": CHROMIUM,
        "timeoutMs": 30_000,
        **extra,
    }
    config_path = tmp_path / "vscode-drive.json"
    config_path.write_text(json.dumps(config), encoding="utf-8")
    assert NODE is not None
    done = subprocess.run(
        [NODE, str(HERE / "vscode_drive.mjs"), str(config_path)],
        cwd=HERE,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=150,
    )
    if not out.exists():
        pytest.fail(
            f"the driver wrote no result (exit {done.returncode}):\n{done.stdout}\n{done.stderr}"
        )
    result: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    for path in result.get("screenshots", []):
        print(f"screenshot: {path}")
    print(json.dumps({"steps": result.get("steps"), "totalMs": result.get("totalMs")}))
    if not result.get("ok"):
        server_log = tmp_path / "code-server.log"
        pytest.fail(
            f"{result.get('error')}\n{json.dumps(result, indent=1)}\ncode-server log:\n"
            + (server_log.read_text(errors="replace")[-4000:] if server_log.exists() else "-")
        )
    return result


def test_margin_note_recorded_and_note_added_from_vscode(
    tmp_path: Path, code_server: tuple[str, Path]
) -> None:
    base, root = code_server
    result = drive(tmp_path, base, root)

    # The Problems panel listed the margin note, and Ctrl+. offered both record actions.
    margin_message = f"margin note (markup): {MARGIN_TEXT}"
    assert any(margin_message in row for row in result["problems"]), result["problems"]
    assert any("Record margin note to style sheet" in row for row in result["actions"])
    assert any("Record all margin notes in this file" in row for row in result["actions"])

    # Recording removed the comment (saved with Ctrl+S) and wrote the entry.
    source = (root / "src" / "pay.py").read_text(encoding="utf-8")
    assert "stet:" not in source
    assert "    response = requests.post(url)" in source
    entries = sheet_entries(root)
    recorded = [entry for entry in entries if MARGIN_TEXT in entry["text"]]
    assert len(recorded) == 1, entries
    assert recorded[0]["kind"] == "markup"
    assert recorded[0]["author"] == "human"
    assert recorded[0]["anchor"]["path"] == "src/pay.py"
    assert any(lens.startswith("style sheet:") for lens in result["lenses"]), result["lenses"]

    # "Stet: Add Note at Cursor" anchored a convention at the cursor line.
    notes = [entry for entry in entries if entry["text"] == NOTE_TEXT]
    assert len(notes) == 1, entries
    assert notes[0]["kind"] == "convention"
    assert notes[0]["anchor"] == {
        "path": "src/pay.py",
        "line": NOTE_LINE + 1,
        "text": "return response.json()",
    }
    # The extension read the entry from the command's result ({…, "entry": {…}}).
    assert f"note {notes[0]['id']} added" in result["noteStatus"], result["noteStatus"]
    note_message = f"style sheet (convention, human, {notes[0]['id']}): {NOTE_TEXT}"
    assert any(note_message in row for row in result["problemsAfterNote"]), result[
        "problemsAfterNote"
    ]

    # A reviewer's comment thread on a line went to the style sheet as an anchored note.
    comments = [entry for entry in entries if entry["text"] == COMMENT_TEXT]
    assert len(comments) == 1, entries
    assert comments[0]["kind"] == "note"
    assert comments[0]["author"] == "human"
    assert comments[0]["anchor"]["path"] == "src/pay.py"
    assert comments[0]["anchor"]["line"] == COMMENT_LINE + 1

    # Changing stet.entries.severity in the Settings editor reached the running server: the
    # entries became warnings.
    assert result["warningRows"] >= 3

    # An agent's CLI write shows without an edit: VS Code reports the sheet's changes to the
    # server (workspace/didChangeWatchedFiles, which the server registers for).
    agents = [entry for entry in sheet_entries(root) if entry["text"] == AGENT_TEXT]
    assert len(agents) == 1
    # VS Code's watcher misses a sheet in a `.stet/cache/sheets/` made while it runs (a
    # fresh repository, as here); the server's slow poll of watched repositories covers it.
    assert result["agentRefreshMs"] is not None, "the agent's note never reached the editor"
    agent_message = f"style sheet (convention, agent, {agents[0]['id']}): {AGENT_TEXT}"
    assert any(agent_message in row for row in result["problemsAfterAgent"]), result[
        "problemsAfterAgent"
    ]
    assert result["agentRefreshMs"] < 10_000
    assert result["warningRows"] >= 4


MARK_TEXT = "retry.py duplicates payments/retry.py"
MARK_STEP = 6  # the Write that created src/retry.py


def test_step_marked_from_vscode(tmp_path: Path, code_server: tuple[str, Path]) -> None:
    base, root = code_server
    session = claude_session(root, tmp_path / "home")
    imported = stet(root, "trajectory", "import", str(session), "--json")
    assert imported.returncode == 0, imported.stderr
    trajectory = working_trajectory(root)
    narration = root / ".stet" / "cache" / "trajectories" / trajectory["id"] / "narration.md"
    heading = f'<a id="step-{MARK_STEP}"></a>**Step {MARK_STEP} '
    lines = narration.read_text(encoding="utf-8").split("\n")
    line = next(n for n, text in enumerate(lines) if text.startswith(heading))

    result = drive(tmp_path, base, root, scenario="mark", markLine=line, markText=MARK_TEXT)

    # The picker names the step the server finds at the cursor.
    assert result["markTitle"] == f"Stet: Mark step {MARK_STEP}", result["markTitle"]

    # The server found the step at the cursor's line: the verdict is in the feedback file and,
    # as picked, in the style sheet.
    feedback = root / ".stet" / "feedback" / f"{trajectory['id']}.jsonl"
    verdicts = [json.loads(text) for text in feedback.read_text(encoding="utf-8").splitlines()]
    assert [(v["step"], v["verdict"], v["text"]) for v in verdicts] == [
        (MARK_STEP, "wrong", MARK_TEXT)
    ]
    entries = [entry for entry in sheet_entries(root) if MARK_TEXT in entry["text"]]
    assert len(entries) == 1, sheet_entries(root)
    assert entries[0]["kind"] == "markup"
    assert result["marked"].startswith(
        f"Stet: step {MARK_STEP} marked wrong; style sheet entry {entries[0]['id']} added"
    ), result["marked"]


def test_step_marked_on_a_line_with_no_step_from_vscode(
    tmp_path: Path, code_server: tuple[str, Path]
) -> None:
    """Stet: Mark Step… with the cursor above the narration's first step says at once that
    there is no step there, not after a verdict, a text and a choice were asked for."""
    base, root = code_server
    session = claude_session(root, tmp_path / "home")
    assert stet(root, "trajectory", "import", str(session)).returncode == 0

    result = drive(tmp_path, base, root, scenario="marknostep")

    assert result["asked"] == "message", result
    assert result["toasts"] == [
        "Stet: no step at line 1 of narration.md: put the cursor on a step (its line of "
        "events.jsonl, or its section of narration.md) first."
    ], result["toasts"]
    assert not (root / ".stet" / "feedback").exists()


def test_view_follows_an_import_from_outside_from_vscode(
    tmp_path: Path, code_server: tuple[str, Path]
) -> None:
    """A session imported into the working trajectory from the command line (as the
    SessionEnd hook does) while the Stet view shows it: the row's steps follow (the view
    was listed again only when the working trajectory came or went)."""
    base, root = code_server
    home = tmp_path / "home"
    assert stet(root, "trajectory", "import", str(claude_session(root, home))).returncode == 0
    steps = working_trajectory(root)["steps"]
    second = claude_edit_session(root, home)

    result = drive(tmp_path, base, root, scenario="outsideimport", transcript=str(second))

    assert result["before"]["description"].startswith(f"{steps} steps"), result["before"]
    now = working_trajectory(root)["steps"]
    assert now > steps
    assert result["after"]["description"].startswith(f"{now} steps"), result["after"]


def test_subagent_steps_grouped_in_the_tree_from_vscode(
    tmp_path: Path, code_server: tuple[str, Path]
) -> None:
    base, root = code_server
    session = claude_subagent_session(root, tmp_path / "home")
    imported = stet(root, "trajectory", "import", str(session), "--json")
    assert imported.returncode == 0, imported.stderr
    trajectory = working_trajectory(root)
    events_file = root / trajectory["path"] / "events.jsonl"
    events = [json.loads(line) for line in events_file.read_text(encoding="utf-8").splitlines()]

    expand = [f"session {SUBAGENT_SESSION_ID[:8]}", SUBAGENT_PROMPT, SUBAGENT_ID, INNER_ID]
    expand.append(SECOND_PROMPT)
    result = drive(
        tmp_path, base, root, scenario="tree", expand=["working ", *expand], viewportHeight=1300
    )

    # The tree, rebuilt from the rows' levels: each row's children, by the row's index.
    rows = result["treeRows"]
    children: dict[int, list[int]] = {}
    parents: list[int] = []
    for at, row in enumerate(rows):
        del parents[row["level"] - 1 :]
        if parents:
            children.setdefault(parents[-1], []).append(at)
        parents.append(at)

    def labels(at: int) -> list[str]:
        return [rows[child]["label"] for child in children.get(at, [])]

    def the_row(label: str) -> int:
        found = [at for at, row in enumerate(rows) if row["label"] == label]
        assert len(found) == 1, (label, rows)
        return found[0]

    def label(event: dict[str, Any]) -> str:
        return f"{event['step']} · {event['kind']}"

    # The events as imported: each subagent right after the call that started it (the main
    # agent's Task call, the subagent's own Agent call), then the steps of its own.
    def started(agent_id: str) -> tuple[dict[str, Any], dict[str, Any], list[dict[str, Any]]]:
        [spawn] = [e for e in events if e["kind"] == "subagent" and e["agent_id"] == agent_id]
        [call] = [
            e for e in events if e.get("call_id") == spawn["call_id"] and e["kind"] == "tool_call"
        ]
        assert events.index(spawn) == events.index(call) + 1, [label(e) for e in events]
        own = [e for e in events if e.get("agent") == agent_id and e is not spawn]
        return call, spawn, own

    outer_call, outer_spawn, outer_own = started(SUBAGENT_ID)
    inner_call, inner_spawn, inner_own = started(INNER_ID)
    assert outer_call["name"] == "Task" and inner_call["name"] == "Agent"
    assert inner_spawn["agent"] == SUBAGENT_ID and inner_spawn in outer_own
    main = [e for e in events if e.get("agent") is None and e is not outer_spawn]
    first, second = [e for e in main if e["kind"] == "user_message"]
    turn1 = main[main.index(first) : main.index(second)]
    turn2 = main[main.index(second) :]
    after = turn1[turn1.index(outer_call) + 1 :]  # the Task's result, the reply: the main agent's
    assert [e["kind"] for e in after][:2] == ["usage", "tool_result"], [label(e) for e in after]
    outer_own.remove(inner_spawn)
    inner_after = outer_own[outer_own.index(inner_call) + 1 :]  # the subagent's, after its call

    # Each subagent's group row, named by the server's outline (its id and meta.json's
    # description, the step that started it), holds that step and every step of its own...
    outer_label = f"{SUBAGENT_ID}: {SUBAGENT_DESCRIPTION}"
    inner_label = f"{INNER_ID}: {INNER_DESCRIPTION}"
    outer, inner = the_row(outer_label), the_row(inner_label)
    steps = 1 + len(outer_own) + 1 + len(inner_own)
    assert rows[outer]["description"] == f"{steps} steps · subagent · step {outer_spawn['step']}"
    steps = 1 + len(inner_own)
    assert rows[inner]["description"] == f"{steps} steps · subagent · step {inner_spawn['step']}"
    assert labels(inner) == [label(inner_spawn), *(label(e) for e in inner_own)], rows
    # ... the subagent's own subagent right after the call that started it, ...
    assert labels(outer) == [
        label(outer_spawn),
        *(label(e) for e in outer_own[: outer_own.index(inner_call) + 1]),
        inner_label,
        *(label(e) for e in inner_after),
    ], rows
    # ... and the first one under the first turn, right after the Task call, before the main
    # agent's later steps (none of which are in a subagent's group).
    turn = the_row(SUBAGENT_PROMPT)
    assert rows[turn]["description"].endswith("turn 1"), rows[turn]
    assert labels(turn) == [
        *(label(e) for e in turn1[: turn1.index(outer_call) + 1]),
        outer_label,
        *(label(e) for e in after),
    ], rows
    assert not {label(e) for e in after + turn2} & set(labels(outer) + labels(inner))
    # The second turn holds only the main agent's steps of the second request.
    later = the_row(SECOND_PROMPT)
    assert rows[later]["description"].endswith("turn 2"), rows[later]
    assert labels(later) == [label(e) for e in turn2], rows
    # Both turns under the session row, beside its start.
    session_row = next(at for at, row in enumerate(rows) if turn in children.get(at, []))
    assert [at for at in children[session_row] if at in (turn, later)] == [turn, later]


def test_entry_proposed_as_skill_and_capstone_from_vscode(
    tmp_path: Path, code_server: tuple[str, Path]
) -> None:
    base, root = code_server
    entry_id, proposed = add_skill_entry(root)
    sheet = Path(json.loads(stet(root, "sheet", "path", "--json").stdout)["sheet"])
    lines = sheet.read_text(encoding="utf-8").split("\n")
    line = next(n for n, text in enumerate(lines) if f"id={entry_id} " in text)

    result = drive(
        tmp_path,
        base,
        root,
        scenario="graduate",
        entryId=entry_id,
        entryLine=line,
        entryText=SKILL_ENTRY_TEXT,
        badName="Error Wrapping",
        skillName=SKILL_NAME,
        capstoneMessage=CAPSTONE_MESSAGE,
    )

    # The quick fix asked for the name with the proposed one filled in, refused a bad one and
    # ran stet.graduate with the name typed.
    assert result["proposed"] == proposed != SKILL_NAME
    assert "lowercase letters, digits and hyphens" in result["refused"]
    relative = f".stet/skills/{SKILL_NAME}/SKILL.md"
    assert (
        f"entry {entry_id} into the skill {SKILL_NAME} ({relative}, staged)" in result["graduated"]
    )

    # The message box said what an empty message gives; the dry run listed the paths and that
    # message; the commit used the one typed.
    prompt = result["capstonePrompt"]
    assert "'Trajectory: ' and the first line of the agent's first request" in prompt, prompt
    assert f"added    {relative}" in result["dryRun"], result["dryRun"]
    assert "Trajectory: " in result["dryRun"]
    check_skill_and_capstone(root, entry_id, CAPSTONE_MESSAGE)
    assert "committed as" in result["committed"], result["committed"]


TREE_TEXT = "Payment functions return cents"


def test_capstone_with_no_working_trajectory_from_vscode(
    tmp_path: Path, code_server: tuple[str, Path]
) -> None:
    """Stet: Commit Trajectory (Capstone) on a branch with no working trajectory says so at
    once (with the import at hand), not after a message and a mode were asked for."""
    base, root = code_server
    head = _git_head(root)

    result = drive(tmp_path, base, root, scenario="capstonenone")

    assert result["asked"] == "message", result
    assert result["toasts"] == [
        "Stet: main has no working trajectory to commit: import an agent session or graduate "
        "an entry first."
    ], result["toasts"]
    assert _git_head(root) == head


def test_capstone_of_a_deleted_branch_s_trajectory_from_vscode(
    tmp_path: Path, code_server: tuple[str, Path]
) -> None:
    """Working trajectories that deleted branches left were committed only by `stet capstone
    --target NAME`: the Stet view marks their rows, whose context menu commits one (here
    refused while git's index is locked: the server's refusal comes back, nothing changed),
    and Stet: Commit Trajectory (Capstone) offers them after the branch's own, then commits
    the one picked on top of HEAD."""
    base, root = code_server
    left_by_deleted_branches(root, tmp_path / "home", ["spike", "topic"])
    # main's own working trajectory, the default of the palette's pick.
    session = claude_session(root, tmp_path / "home")
    assert stet(root, "trajectory", "import", str(session)).returncode == 0
    lock = root / ".git" / "index.lock"
    lock.write_text("", encoding="utf-8")
    head = _git_head(root)

    result = drive(
        tmp_path,
        base,
        root,
        scenario="capstonetarget",
        viewTarget="spike",
        paletteTarget="topic",
        indexLock=str(lock),
        capstoneMessage=CAPSTONE_MESSAGE,
    )

    left_rows = sorted(
        row["label"] for row in result["treeRows"] if row["label"].startswith("left ")
    )
    assert [label.split("--")[:2] for label in left_rows] == [
        ["left branch", "spike"],
        ["left branch", "topic"],
    ], result["treeRows"]
    assert "Commit Trajectory (Capstone)…" in result["menu"], result["menu"]
    assert "spike" in result["viewBox"]["title"], result["viewBox"]
    assert "index" in result["refusal"] and "locked" in result["refusal"], result["refusal"]
    # The current branch first (the default), then what the deleted branches left.
    rows = result["targets"]["rows"]
    assert len(rows) == 3 and "main" in rows[0], rows
    assert sorted(row.strip()[: len("spike")] for row in rows[1:]) == ["spike", "topic"], rows
    assert all("left · " in row for row in rows[1:]), rows
    assert "committed as" in result["committed"], result["committed"]
    repo = pygit2.Repository(str(root))
    commit = repo.head.peel(pygit2.Commit)
    assert commit.message.startswith(CAPSTONE_MESSAGE + "\n") and str(commit.parents[0].id) == head
    listed = json.loads(stet(root, "trajectory", "list", "--json").stdout)["trajectories"]
    left = sorted(row["target"] for row in listed if row["working"] and row["orphaned"])
    assert left == ["spike"], listed


def test_two_repositories_on_one_branch_from_vscode(
    tmp_path: Path, code_server: tuple[str, Path]
) -> None:
    """A window of two repositories, both on main: the status bar item and the Stet view name
    the repository they show (both said "main" alike), and follow the active file's, as does
    Stet: Import Agent Session (which did not say where the session would go)."""
    base, first = code_server
    second = make_workspace(tmp_path / "billing")
    add_note(second, "billing keeps cents", "--kind", "convention")
    workspace = tmp_path / "two.code-workspace"
    workspace.write_text(json.dumps({"folders": [{"path": str(first)}, {"path": str(second)}]}))

    result = drive(
        tmp_path, base, first, scenario="multiroot", url=f"{base}/?workspace={workspace}",
        folders=[second.name, first.name],
    )  # fmt: skip

    [billing, repo] = result["seen"]
    assert billing["status"].strip() == f"Stet: {second.name} · main · 1 open", billing
    assert billing["group"] == f"Entries · {second.name} · main", billing
    assert repo["status"].strip() == f"Stet: {first.name} · main · 0 open", repo
    assert repo["group"] == f"Entries · {first.name} · main", repo
    # Stet: Import Agent Session names the repository the session goes into.
    assert billing["importing"] == f"Stet: Import Agent Session into {second.name}", billing
    assert repo["importing"] == f"Stet: Import Agent Session into {first.name}", repo


def test_view_says_why_it_lists_nothing_from_vscode(
    tmp_path: Path, code_server: tuple[str, Path]
) -> None:
    """A style sheet the server refuses to read (a symbolic link, which Stet never follows):
    the Stet view says so in a row, not "the Stet language server is starting, or this folder
    is not in a git repository", which is neither."""
    base, root = code_server
    add_note(root, "an entry", "--kind", "note")
    sheet = stet_sheet_path(root)
    elsewhere = tmp_path / "elsewhere.md"
    before = sheet.read_bytes()
    elsewhere.write_bytes(before)
    sheet.unlink()
    sheet.symlink_to(elsewhere)

    result = drive(tmp_path, base, root, scenario="viewproblem", problem="is a symbolic link")

    [row] = result["rows"]
    assert row["label"] == (
        f"{sheet} is a symbolic link; Stet does not follow links in the repository "
        "(nothing was changed)"
    ), row
    assert result["welcome"] == [], result["welcome"]
    assert elsewhere.read_bytes() == before  # nothing written through the link


def test_view_lists_again_once_the_sheet_is_readable_from_vscode(
    tmp_path: Path, code_server: tuple[str, Path]
) -> None:
    """The style sheet is for a while a link the server refuses to read: the view, refreshed
    then, says so in a row; the file back as it was, the view lists the entries again without
    being asked (the status bar's poll sees the change), where it kept the refusal until the
    next save or command."""
    base, root = code_server
    add_note(root, "an entry", "--kind", "note")
    sheet = stet_sheet_path(root)
    before = sheet.read_bytes()

    result = drive(
        tmp_path, base, root, scenario="viewrecover", sheetPath=str(sheet),
        linkTarget=str(tmp_path / "elsewhere.md"), problem="is a symbolic link",
    )  # fmt: skip

    assert [row["label"] for row in result["rowsBroken"]] == [
        f"{sheet} is a symbolic link; Stet does not follow links in the repository "
        "(nothing was changed)"
    ], result["rowsBroken"]
    assert result["after"] == result["before"], (result["before"], result["after"])
    assert not [row for row in result["rowsAfter"] if "symbolic link" in row["label"]]
    assert sheet.read_bytes() == before


def test_committed_trajectory_opened_from_the_palette_from_vscode(
    tmp_path: Path, code_server: tuple[str, Path]
) -> None:
    """After the capstone the branch has no working trajectory: Stet: Open Trajectory offers
    the repository's trajectories (the server's refusal asked for an id the palette cannot
    take) and opens the one picked."""
    base, root = code_server
    session = claude_session(root, tmp_path / "home")
    assert stet(root, "trajectory", "import", str(session)).returncode == 0
    assert stet(root, "capstone").returncode == 0
    listed = json.loads(stet(root, "trajectory", "list", "--json").stdout)["trajectories"]
    [committed] = [row["id"] for row in listed if not row["working"]]

    result = drive(tmp_path, base, root, scenario="opencommitted")

    assert result["asked"] == "question", result
    assert result["pick"]["placeholder"] == "main has no working trajectory yet: pick a trajectory"
    assert any(committed in row for row in result["pick"]["rows"]), result["pick"]
    assert f"trajectories/{committed}/narration.md" in result["opened"], result["opened"]


def _git_head(root: Path) -> str:
    return subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True
    ).stdout.strip()


@pytest.mark.parametrize("code_server", ["venv"], indirect=True)
def test_server_found_in_the_workspace_venv(tmp_path: Path, code_server: tuple[str, Path]) -> None:
    base, root = code_server
    added = stet(root, "note", "add", TREE_TEXT, "--file", "src/pay.py", "--line", "4")
    assert added.returncode == 0, added.stderr

    # With no stet.server.path, the extension started the workspace's .venv/bin/stet-lsp.
    result = drive(tmp_path, base, root, scenario="sidebar", branch="main", entryText=TREE_TEXT)
    assert (tmp_path / "venv-server-started").exists()
    assert "Stet: main" in result["status"] and "1 open" in result["status"], result["status"]


THREAD_ENTRIES = [
    # (text, kind, author, 1-based line): two on one line share a thread.
    ("Payment functions take the URL as their only argument", "convention", "human", 4),
    ("Callers retry, not pay()", "clarification", "agent", 4),
    ("Return the parsed body, never the response", "convention", "human", 7),
]
EDITED_TEXT = "Payment functions take the URL and nothing else"
REPLY_TEXT = "Checked with the payments team"


def add_thread_entries(root: Path) -> list[str]:
    """THREAD_ENTRIES written with the `stet` CLI, anchored in src/pay.py; their ids."""
    return [
        add_note(
            root,
            text,
            "--kind",
            kind,
            "--author",
            author,
            "--file",
            "src/pay.py",
            "--line",
            str(line),
        )
        for text, kind, author, line in THREAD_ENTRIES
    ]


def test_comment_threads_mirror_the_sheet_from_vscode(
    tmp_path: Path, code_server: tuple[str, Path]
) -> None:
    base, root = code_server
    ids = add_thread_entries(root)

    started = time.monotonic()
    result = drive(
        tmp_path,
        base,
        root,
        scenario="threads",
        threadEntries=[{"text": text, "line": line} for text, _, _, line in THREAD_ENTRIES],
        editedText=EDITED_TEXT,
        replyText=REPLY_TEXT,
    )
    print(f"comment threads: {time.monotonic() - started:.1f} s")

    # Entries written before the window opened showed as threads at their lines, moved down
    # with the two lines inserted above them; the line with two entries has one thread with
    # both.
    assert "[Ln 4]" in " ".join(result["threadsAtOpen"]), result["threadsAtOpen"]
    assert "[Ln 9]" in " ".join(result["threadsMoved"]), result["threadsMoved"]
    assert THREAD_ENTRIES[0][0] in result["threadText"], result["threadText"]
    assert THREAD_ENTRIES[1][0] in result["threadText"], result["threadText"]
    # The reply joined the edited entry's thread.
    assert REPLY_TEXT in result["threadReplied"] and EDITED_TEXT in result["threadReplied"]
    assert any("2 replies" in row for row in result["threadsReplied"]), result["threadsReplied"]

    # Editing, replying and discarding in the threads changed the sheet on disk.
    entries = {entry["id"]: entry for entry in sheet_entries(root)}
    assert entries[ids[0]]["text"] == EDITED_TEXT, entries[ids[0]]
    assert entries[ids[0]]["status"] == "open"
    # The second entry was graduated into the working trajectory from its comment's menu.
    assert any("Propose as a Skill" in item for item in result["commentMenu"]), result[
        "commentMenu"
    ]
    assert entries[ids[1]]["status"] == "graduated-trajectory", entries[ids[1]]
    assert entries[ids[2]]["status"] == "discarded", entries[ids[2]]
    [reply] = [entry for entry in entries.values() if entry["text"] == REPLY_TEXT]
    assert (reply["kind"], reply["author"], reply["status"]) == ("note", "human", "open")
    assert reply["anchor"]["path"] == "src/pay.py"
    assert reply["anchor"]["text"] == "def pay(url):"
    # The file was saved with the two new lines: every anchor on "def pay" is at line 6 now.
    assert reply["placement"] == {"line": 6, "lost": False}, reply
    assert entries[ids[0]]["placement"] == {"line": 6, "lost": False}


RETRY_SOURCE = "def retry(call, times=3):\n    return call()\n"


def test_review_scenario_from_vscode(tmp_path: Path, code_server: tuple[str, Path]) -> None:
    """The whole flow in one window, from a margin note to the capstone's commit."""
    import pygit2

    base, root = code_server
    # The file the agent's session wrote, as it left it; a committer for the capstone.
    (root / "src" / "retry.py").write_text(RETRY_SOURCE, encoding="utf-8")
    config = pygit2.Repository(str(root)).config
    config["user.name"] = "Stet Reviewer"
    config["user.email"] = "reviewer@stet.invalid"
    session = claude_session(root, tmp_path / "home")
    # The session's steps, as the import numbers them (the same transcript, imported apart).
    events = _imported_events(tmp_path / "scratch", session)
    call = next(event for event in events if event["kind"] == "tool_call")
    change = next(event for event in events if event["kind"] == "file_change")

    started = time.monotonic()
    result = drive(
        tmp_path,
        base,
        root,
        scenario="scenario",
        timeoutMs=45_000,
        branch="main",
        entryText=MARGIN_TEXT,
        entryLine=MARGIN_LINE + 1,  # 1-based: the line under the comment, once it is removed
        sessionPrompt=SESSION_PROMPT,
        sessionLabel=f"session {SESSION_ID[:8]}",  # the session's row: its description
        stepLabel=f"{call['step']} · tool_call",
        stepLine=events.index(call) + 1,
        changeLabel=f"{change['step']} · file_change",
        diffTitle=f"src/retry.py (step {change['step']})",
        diffShows="def retry(call, times=3):",
        provenanceFile="src/retry.py",
        provenanceFileName="retry.py",
        capstoneMessage=CAPSTONE_MESSAGE,
    )
    print(f"review scenario: {time.monotonic() - started:.1f} s")

    # The margin note was listed in the Problems panel and recorded through the quick fix.
    margin_message = f"margin note (markup): {MARGIN_TEXT}"
    assert any(margin_message in row for row in result["problems"]), result["problems"]
    assert any("Record all margin notes in this file" in row for row in result["actions"])
    assert "stet:" not in (root / "src" / "pay.py").read_text(encoding="utf-8")
    [entry] = [entry for entry in sheet_entries(root) if entry["text"] == MARGIN_TEXT]

    # The side bar listed it (open, at its anchor), and so did a comment thread on its line
    # once the file was opened again.
    [row] = [row for row in result["tree"] if MARGIN_TEXT in row]
    assert f"open · src/pay.py:{MARGIN_LINE + 1}" in row, row
    assert "Stet: main" in result["status"] and "1 open" in result["status"]
    assert result["cursor"].startswith(f"Ln {MARGIN_LINE + 1}, Col 1"), result["cursor"]
    assert any(MARGIN_TEXT in row for row in result["threadRows"]), result["threadRows"]
    assert MARGIN_TEXT in result["threadText"] and entry["id"] in result["threadText"]

    # The session picked in the quick pick was imported through the gate.
    # (harness, start, first prompt; size; the file: a row's text runs them together; then
    # the row that opens a file dialog)
    [offered, choose_file] = result["sessions"]
    assert choose_file.strip().startswith("Choose a transcript file…"), choose_file
    label = f"claude-code · 2026-03-01 09:00 · {SESSION_PROMPT}"
    assert re.match(rf"{re.escape(label)}\d+\.\d KB{re.escape(str(session))}", offered), offered
    # (The capstone has since moved the working trajectory to .stet/trajectories/.)
    imported = re.fullmatch(
        rf"Stet: {len(events)} events imported into \.stet/cache/trajectories/([^,/]+), "
        r"redacted 1 \(github-token 1\)",
        result["imported"],
    )
    assert imported is not None, result["imported"]
    [committed] = (root / ".stet" / "trajectories").glob("*/events.jsonl")
    events_text = committed.read_text(encoding="utf-8")
    assert SESSION_PROMPT in events_text and "ghp_" not in events_text
    # "Stet: Open Trajectory" showed its narration.
    assert "narration.md" in result["activeTab"]
    assert f"# Trajectory {imported.group(1)}" in result["trajectoryText"]

    # The tree: session → turn (named by the request) → steps. A step opened events.jsonl at
    # its line, the file change its diff.
    assert any(SESSION_PROMPT in row and "turn 1" in row for row in result["stepRows"]), result[
        "stepRows"
    ]
    assert "events.jsonl" in result["stepTab"]
    assert result["stepCursor"].startswith(f"Ln {events.index(call) + 1}, Col 1")
    assert "src/retry.py (step" in result["diffTab"], result["diffTab"]
    assert "return call()" in result["diffText"], result["diffText"]
    # The session created the file: the diff adds its two lines to an empty left side.
    assert result["diffAdded"] == 2, result["diffText"]

    # The provenance hover named the step that wrote the line.
    assert f"Written by step {change['step']}" in result["hover"], result["hover"]

    # The entry graduated from the tree into the trajectory; the capstone committed it and
    # said the commit's id.
    [graduated] = [row for row in sheet_entries(root) if row["id"] == entry["id"]]
    assert graduated["status"] == "graduated-trajectory", graduated
    head = pygit2.Repository(str(root)).head.peel(pygit2.Commit)
    assert head.message.startswith(CAPSTONE_MESSAGE + "\n"), head.message
    assert "Stet-Trajectory: " in head.message
    assert str(head.id)[:7] in result["committed"], (result["committed"], str(head.id))


def _imported_events(folder: Path, session: Path) -> list[dict[str, Any]]:
    """The events `stet trajectory import` makes of `session`, imported into a scratch copy of
    the workspace (so the editor's own import is the first there)."""
    scratch = make_workspace(folder)
    (scratch / "src" / "retry.py").write_text(RETRY_SOURCE, encoding="utf-8")
    done = stet(scratch, "trajectory", "import", str(session), "--json")
    assert done.returncode == 0, done.stderr
    events_file = next((scratch / ".stet" / "cache" / "trajectories").glob("*/events.jsonl"))
    return [json.loads(line) for line in events_file.read_text(encoding="utf-8").splitlines()]


UPKEEP_ENTRIES = [
    # (text, kind, 1-based line)
    ("pay() takes the URL and nothing else", "convention", 4),
    ("Callers retry, not pay()", "clarification", 6),
]
UPKEEP_EDITED = "pay() takes the URL from settings, never from callers"
PAUSE_UNTIL = "2999-01-01"


def test_sheet_paused_entry_edited_and_discarded_from_vscode(
    tmp_path: Path, code_server: tuple[str, Path]
) -> None:
    base, root = code_server
    ids = []
    for text, kind, line in UPKEEP_ENTRIES:
        ids.append(
            add_note(root, text, "--kind", kind, "--file", "src/pay.py", "--line", str(line))
        )
    (edit_text, _, edit_line), (discard_text, _, _) = UPKEEP_ENTRIES

    result = drive(
        tmp_path,
        base,
        root,
        scenario="upkeep",
        pauseUntil=PAUSE_UNTIL,
        editText=edit_text,
        editedText=UPKEEP_EDITED,
        discardText=discard_text,
    )
    edit_id, discard_id = ids
    until = f"{PAUSE_UNTIL}T00:00:00Z"

    # "Stet: Pause Style Sheet…": the date asked for, the server's answer in the status bar,
    # the item marked paused, the sheet's header paused until then.
    assert result["statusBefore"].strip() == "Stet: main · 2 open"
    assert result["pauseBox"]["title"] == "Stet: Pause Style Sheet"
    # A date the server refused ("soon") was asked for again with its reason, the text kept,
    # where the command failed and the date had to be typed again from the palette.
    assert result["pauseRefused"]["value"] == "soon", result["pauseRefused"]
    assert result["pauseRefused"]["message"].startswith("until 'soon' is not an ISO date or time")
    assert result["paused"] == f"Stet: main paused until {until}"
    assert result["statusPaused"].strip() == "Stet: main · 2 open ·  paused"
    assert result["pausedOnDisk"] == {"paused": True, "paused_until": until}

    # "Stet: Edit Note…": the open entries offered (text, kind · author · id, anchor), the
    # picked one's text filled in, the new text written.
    assert result["editPicks"] == [
        f"{text}{kind} · human · {entry_id}src/pay.py:{line}"
        for (text, kind, line), entry_id in zip(UPKEEP_ENTRIES, ids, strict=True)
    ]
    assert result["editBox"]["title"] == f"Stet: Edit entry {edit_id}"
    assert result["editBox"]["value"] == edit_text
    assert result["edited"] == f"Stet: entry {edit_id} edited"
    # "Stet: Discard Entry…": the list shows the edited text; the other one discarded.
    assert result["discardPicks"][0].startswith(f"{UPKEEP_EDITED}convention · human · {edit_id}")
    assert result["discarded"] == f"Stet: entry {discard_id} discarded"
    assert result["statusDiscarded"].strip() == "Stet: main · 1 open ·  paused"
    # "Stet: Resume Style Sheet".
    assert result["resumed"] == "Stet: main resumed"
    assert result["statusResumed"].strip() == "Stet: main · 1 open"
    assert result["resumedAgain"] == "Stet: main was not paused"

    # On disk: the edited entry open at its line, the other discarded, the sheet resumed.
    listed = json.loads(stet(root, "note", "list", "--json").stdout)
    assert (listed["paused"], listed["paused_until"]) == (False, None)
    entries = {entry["id"]: entry for entry in listed["entries"]}
    assert (entries[edit_id]["text"], entries[edit_id]["status"]) == (UPKEEP_EDITED, "open")
    assert entries[edit_id]["placement"] == {"line": edit_line, "lost": False}
    assert (entries[discard_id]["text"], entries[discard_id]["status"]) == (
        discard_text,
        "discarded",
    )
    # The Problems panel: the edited entry at its line, nothing of the discarded one.
    message = f"style sheet (convention, human, {edit_id}): {UPKEEP_EDITED}"
    assert f"{message}stetconvention[Ln {edit_line}, Col 1]" in result["problems"]
    assert not [row for row in result["problems"] if discard_text in row], result["problems"]


def test_style_sheet_secret_redacted_and_lost_anchor_from_vscode(
    tmp_path: Path, code_server: tuple[str, Path]
) -> None:
    base, root = code_server
    token = fake_github_token()
    sheet, ids = sheet_with_secret_and_lost_anchor(root, token)
    original = sheet.read_text(encoding="utf-8")
    lines = original.splitlines()
    at = {name: find_line(lines, f"id={entry_id} ") for name, entry_id in ids.items()}

    result = drive(
        tmp_path,
        base,
        root,
        scenario="sheetfile",
        secretNote=SECRET_NOTE,
        secretLine=at["secret"],
        secretId=ids["secret"],
        sheetPath=str(sheet),
        lensCount=2,
    )
    secret_id = ids["secret"]

    # The Problems panel: the sheet's two warnings, from stet, the rule or problem as code, at
    # their lines (1-based; the secret's column where the token starts).
    column = lines[at["secret"]].index(token) + 1
    lost = (
        f"anchor lost ({ids['lost']}): src/pay.py:{LOST_ANCHOR} no longer holds "
        f"'response = requests.post(url)'; the entry is keptstetanchor-lost[Ln {at['lost'] + 1}, Col 1]"
    )
    secret = (
        "secret (github-token) will be redacted at graduation"
        f"stetgithub-token[Ln {at['secret'] + 1}, Col {column}]"
    )
    rows = [row for row in result["problems"] if "[Ln " in row["text"]]
    assert [row["text"] for row in rows] == [lost, secret], result["problems"]
    assert all("codicon codicon codicon-warning" in row["icons"] for row in rows), rows
    # No fragment of the secret in what is shown: the rows, the lenses, the quick fixes.
    said = json.dumps([[row["text"] for row in rows], result["actions"]]) + json.dumps(
        [lens["text"] for lens in result["lenses"]]
    )
    for entry_id in ids.values():  # made at random, an id may hold three letters of it
        said = said.replace(entry_id, "<id>")
    assert not [part for part in fragments(token) if part in said], said

    # The lenses: one row of the three routes above each open entry's line (not the discarded).
    above = [
        (
            lens["text"],
            [name for name, entry in ids.items() if f"id={entry} " in (lens["line"] or "")],
        )
        for lens in result["lenses"]
    ]
    routes = "graduate | propose skill | discard"
    assert above == [(routes, ["lost"]), (routes, ["secret"])], result["lenses"]

    # Ctrl+. at the secret: "Redact now" first, then the entry's routes.
    assert result["actions"] == [
        "Quick Fix",
        "Redact now: 1 secret in this file",
        f"Graduate entry {secret_id} into the trajectory",
        f"Propose entry {secret_id} as a skill",
        f"Discard entry {secret_id}",
    ]
    # "Redact now" changed the editor only: the marker in the line, the tab dirty, the file on
    # disk as it was; the warning gone from the Problems panel, the lost anchor still there.
    redacted = original.replace(token, REDACTED_TOKEN)
    shown = result["redactedLine"]  # the first row of the wrapped line
    assert REDACTED_TOKEN in shown and redacted.splitlines()[at["secret"]].startswith(shown)
    assert result["dirty"] == 1
    assert result["diskBeforeSave"] == original
    after = [row["text"] for row in result["problemsAfter"] if "[Ln " in row["text"]]
    assert after == [lost], result["problemsAfter"]
    # Ctrl+S wrote the marker; the note reads so.
    assert result["diskAfterSave"] == redacted == sheet.read_text(encoding="utf-8")
    notes = {entry["id"]: entry["text"] for entry in sheet_entries(root)}
    assert notes[secret_id] == f"{SECRET_NOTE} {REDACTED_TOKEN}"


def _git_status(root: Path) -> str:
    done = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=root, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return done.stdout


BRIEF_ENTRIES = [
    # (text, kind, where)
    ("Money amounts are integers of cents", "convention", ["--file", "src/pay.py", "--line", "4"]),
    ("The payment API answers 409 for a repeated key", "clarification", []),
]
BRIEF_DISCARDED = "Use httpx instead of requests"


def test_graduation_review_accepted_from_vscode(
    tmp_path: Path, code_server: tuple[str, Path]
) -> None:
    """Stet: Graduation Review, then "Accept every proposal" from a line's quick fixes: both
    entries graduate as proposed, the status bar says so (it said nothing: a code action's
    command answers no one), and the review is written again without them."""
    base, root = code_server
    note = add_note(root, "Check the cache headers before the release", "--kind", "note")
    ruled = add_note(root, "A global retry decorator retried writes", "--kind", "ruled-out")

    result = drive(tmp_path, base, root, scenario="review")

    assert any("Accept every proposal" in action for action in result["actions"]), result
    assert result["said"].strip() == "Stet: 2 entries accepted: 2 into the trajectory", result
    statuses = {
        entry["id"]: entry["status"]
        for entry in json.loads(stet(root, "note", "list", "--json").stdout)["entries"]
    }
    assert statuses == {note: "graduated-trajectory", ruled: "graduated-trajectory"}
    assert "- [ ]" not in result["reviewAfter"]


def test_brief_shown_from_vscode(tmp_path: Path, code_server: tuple[str, Path]) -> None:
    base, root = code_server
    for text, kind, where in BRIEF_ENTRIES:
        add_note(root, text, "--kind", kind, *where)
    discarded = add_note(root, BRIEF_DISCARDED, "--kind", "ruled-out")
    assert stet(root, "note", "discard", discarded).returncode == 0
    brief = json.loads(stet(root, "brief", "--json").stdout)["text"]
    sheet = stet_sheet_path(root)
    sheet_before, status_before = sheet.read_bytes(), _git_status(root)

    result = drive(
        tmp_path, base, root, scenario="brief", briefTab="Stet brief.md",
        briefShows=f"- {BRIEF_ENTRIES[0][0]}", agentText="an agent's note added later",
    )  # fmt: skip

    # Shown twice, one tab: a read-only editor (a key typed changes nothing, nothing to save),
    # in Markdown, holding the brief as the server gives it (its lines as the editor draws
    # them, long ones wrapped), nothing of the discarded entry.
    assert result["tabs"] == ["Stet brief.md"], result["tabs"]
    assert result["dirtyTabs"] == 0
    assert result["briefTextAfterTyping"] == result["briefText"]
    assert result["language"].strip() == "Markdown", result["language"]
    assert "".join(result["briefLines"]) == brief.replace("\n", ""), result["briefLines"]
    for text, _, _ in BRIEF_ENTRIES:
        assert any(line.startswith(f"- {text}") for line in result["briefLines"])
    assert BRIEF_DISCARDED not in result["briefText"]
    # Nothing written by showing it: no file added or changed in the repository.
    assert _git_status(root) == status_before
    # A note the command line added afterwards shows in the open brief (it kept the first
    # brief until shown again); the sheet changed by that note alone.
    assert result["briefFollowed"] is True
    assert sheet.read_bytes() != sheet_before
    listed = json.loads(stet(root, "note", "list", "--json").stdout)["entries"]
    assert listed[-1]["text"] == "an agent's note added later"


RESTART_TEXT = "pay() takes the URL and nothing else"
RESTART_NOTE = "Retries belong to the caller"
RESTART_LINE = 4  # 1-based: "def pay(url):"


@pytest.mark.parametrize("code_server", ["logged"], indirect=True)
def test_server_restarted_from_vscode(tmp_path: Path, code_server: tuple[str, Path]) -> None:
    base, root = code_server
    entry_id = add_note(root, RESTART_TEXT, "--file", "src/pay.py", "--line", str(RESTART_LINE))

    result = drive(
        tmp_path, base, root, scenario="restart", entryText=RESTART_TEXT,
        entryLine=RESTART_LINE, noteText=RESTART_NOTE,
        startLog=str(tmp_path / "server-starts"),
    )  # fmt: skip

    # "Stet: Restart Language Server" started a second server ...
    assert (result["startsBefore"], result["startsAfter"]) == (1, 2)
    assert (tmp_path / "server-starts").read_text(encoding="utf-8") == "started\n" * 2
    # ... which ran "Stet: Add Note at Cursor" and showed both entries: the new note's row in
    # the Problems panel and the lens's count can only come from the new server (the old one
    # had stopped before it started).
    message = f"style sheet (note, human, {entry_id}): {RESTART_TEXT}"
    for rows in (result["problemsBefore"], result["problemsAfterRestart"]):
        assert any(f"{message}stetnote[Ln {RESTART_LINE}, Col 1]" in row for row in rows), rows
    assert not [toast for toast in result["toasts"] if "Stet" in toast], result["toasts"]
    entries = {entry["text"]: entry for entry in sheet_entries(root)}
    note = entries[RESTART_NOTE]
    assert result["noteStatus"] == f"Stet: note {note['id']} added", result["noteStatus"]
    assert (note["kind"], note["author"], note["status"]) == ("convention", "human", "open")
    assert (note["anchor"]["path"], note["anchor"]["line"]) == ("src/pay.py", RESTART_LINE)
    assert any(RESTART_NOTE in row for row in result["problemsAfterNote"])
    assert any(
        "style sheet: 2 notes" in lens.replace("\xa0", " ") for lens in result["lensAfterNote"]
    )
    assert entries[RESTART_TEXT]["status"] == "open"


@pytest.mark.parametrize("code_server", ["crashing"], indirect=True)
def test_stet_view_heals_once_a_crashed_server_is_back(
    tmp_path: Path, code_server: tuple[str, Path]
) -> None:
    """The server ends without being asked (killed) while the Stet view shows the working
    trajectory; the language client starts it again, and the view, refreshed while it was
    down (nothing to show then), lists the trajectory again once it is back: it stayed on
    "the Stet language server is starting" until the next save or command."""
    base, root = code_server
    assert (
        stet(root, "trajectory", "import", str(claude_session(root, tmp_path / "home"))).returncode
        == 0
    )
    steps = working_trajectory(root)["steps"]

    result = drive(tmp_path, base, root, scenario="viewheal", pidLog=str(tmp_path / "server-pids"))

    assert len(result["pidsAfter"]) == 2, result["pidsAfter"]
    assert result["before"]["description"].startswith(f"{steps} steps"), result["before"]
    assert result["rowsWhileDown"] == [], result["rowsWhileDown"]
    assert result["after"]["description"] == result["before"]["description"], result["after"]
    assert result["stepAfter"], result


@pytest.mark.parametrize("code_server", ["broken"], indirect=True)
def test_server_started_after_a_failed_start_from_vscode(
    tmp_path: Path, code_server: tuple[str, Path]
) -> None:
    base, root = code_server
    start_log = tmp_path / "server-starts"

    result = drive(
        tmp_path, base, root, scenario="failedstart", startLog=str(start_log),
        serverPath=str(tmp_path / "stet-lsp-logged"),
    )  # fmt: skip

    # stet.server.path named no file: one notification, Stet's (where the path came from and
    # how to install the server), not the language client's as well; the status bar says the
    # server is not running.
    failure = "Stet: could not start the language server '/nonexistent/stet-lsp'"
    for toasts in (result["failureToasts"], result["restartToasts"]):
        assert len(toasts) == 1 and toasts[0].startswith(failure), toasts
    status = [item.strip() for item in result["statusAfterFailure"]]
    assert status == ["Stet"], status
    # "Stet: Restart Language Server" after the failure tried again: no dialog saying the
    # client "is not running and can't be stopped".
    assert result["dialogs"] == [], result["dialogs"]
    # The path set in the Settings editor started the server at once, the first time.
    assert result["starts"] == 1
    assert start_log.read_text(encoding="utf-8") == "started\n"
    assert not [toast for toast in result["toasts"] if "Stet" in toast], result["toasts"]


SERVER_LAST_WORDS = "ModuleNotFoundError: No module named 'pygls'"


@pytest.mark.parametrize(
    "code_server",
    [
        {
            # A broken install: a server that says why on standard error and ends at once.
            "stet.server.path": sys.executable,
            "stet.server.args": [
                "-c",
                'import sys; sys.stderr.write("Traceback (most recent call last):\\n'
                f'{SERVER_LAST_WORDS}\\n"); sys.exit(1)',
            ],
        }
    ],
    indirect=True,
)
def test_server_that_ends_at_once_from_vscode(
    tmp_path: Path, code_server: tuple[str, Path]
) -> None:
    """The notification says what the server said last (not the pipe's 'write EPIPE'), and
    its "Show Output" shows the whole of it."""
    base, root = code_server

    result = drive(tmp_path, base, root, scenario="crashedstart", serverSays=SERVER_LAST_WORDS)

    assert len(result["failureToasts"]) == 1, result["failureToasts"]
    toast = result["failureToasts"][0]
    assert toast.startswith(
        f"Stet: could not start the language server '{sys.executable}' (from stet.server.path): "
        f"it ended saying '{SERVER_LAST_WORDS}'."
    ), toast
    assert "EPIPE" not in toast
    assert SERVER_LAST_WORDS in result["output"]  # the Stet output channel, shown


def test_margin_notes_recorded_from_the_palette_from_vscode(
    tmp_path: Path, code_server: tuple[str, Path]
) -> None:
    """Stet: Record Margin Notes in File says what it recorded (the status bar), and run again
    on the file with none left says so as information, not as a failure."""
    base, root = code_server

    result = drive(tmp_path, base, root, scenario="recordall")

    [entry] = sheet_entries(root)
    assert entry["text"] == MARGIN_TEXT
    assert result["recorded"].strip() == f"Stet: margin note recorded as entry {entry['id']}"
    assert result["toasts"] == [
        "Stet: src/pay.py holds no margin note to record (a comment holding 'stet:')."
    ], result["toasts"]


def test_record_refused_while_the_sheet_is_paused_from_vscode(
    tmp_path: Path, code_server: tuple[str, Path]
) -> None:
    base, root = code_server
    assert stet(root, "pause").returncode == 0
    sheet = stet_sheet_path(root)
    sheet_before = sheet.read_bytes()

    result = drive(tmp_path, base, root, scenario="pausedrecord")

    # The server refused the quick fix: one notification with its reason, not the language
    # client's "Request workspace/executeCommand failed" as well; nothing recorded or removed.
    assert len(result["toasts"]) == 1, result["toasts"]
    assert result["toasts"][0].startswith("Stet: the style sheet of main is paused"), result[
        "toasts"
    ]
    assert "stet:" in result["editor"].replace("\xa0", " ")
    assert sheet.read_bytes() == sheet_before


def test_transcript_file_imported_from_vscode(
    tmp_path: Path, code_server: tuple[str, Path]
) -> None:
    base, root = code_server
    # A transcript outside where Claude Code keeps sessions: none is found for the repository.
    found = claude_session(root, tmp_path / "home")
    transcript = tmp_path / "transcript.jsonl"
    found.rename(transcript)

    result = drive(tmp_path, base, root, scenario="importfile", transcript=str(transcript))

    # The pick said no session was found (naming every harness the server looks in) and
    # offered the file dialog, whose file was imported.
    pick = result["importPick"]
    assert [row.strip() for row in pick["rows"]] == ["Choose a transcript file…"], pick
    assert (
        "Claude Code, Codex, Gemini CLI, Qwen Code, aider, OpenHands V1" in pick["placeholder"]
    ), pick
    trajectory = working_trajectory(root)
    assert "events imported into" in result["imported"], result["imported"]
    assert trajectory["id"] in result["imported"], result["imported"]


def test_entry_proposed_as_skill_from_the_tree_from_vscode(
    tmp_path: Path, code_server: tuple[str, Path]
) -> None:
    import pygit2

    base, root = code_server
    entry_id, proposed = add_skill_entry(root)

    result = drive(
        tmp_path, base, root, scenario="treeroute", entryText=SKILL_ENTRY_TEXT,
        menuItem="Propose as a Skill", skillName=proposed, said="into the skill",
        status="graduated-skill", openAfter="0 open",
    )  # fmt: skip

    # The entry's context menu offered the three routes. The name box offered the name the
    # server proposes (stet.graduate.proposal, as its code actions carry it), and Enter on it
    # graduated the entry into that skill.
    assert [item for item in result["menu"] if item.strip()][:3] == [
        "Graduate into the Trajectory", "Propose as a Skill…", "Discard, Recorded in the Trajectory",
    ], result["menu"]  # fmt: skip
    box = result["nameBox"]
    assert box["value"] == proposed, box
    assert "empty" not in box["message"] + (box["placeholder"] or ""), box
    relative = f".stet/skills/{proposed}/SKILL.md"
    said = f"Stet: entry {entry_id} into the skill {proposed} ({relative}, staged)"
    assert result["said"] == said, result["said"]
    [row] = [row for row in result["treeAfter"] if SKILL_ENTRY_TEXT in row]
    assert "graduated-skill" in row, row
    # On disk: the skill file, staged; the entry graduated.
    assert SKILL_ENTRY_TEXT in (root / relative).read_text(encoding="utf-8")
    assert relative in pygit2.Repository(str(root)).index
    [entry] = [entry for entry in sheet_entries(root) if entry["id"] == entry_id]
    assert entry["status"] == "graduated-skill", entry


TREE_DISCARD_TEXT = "Payment functions return cents"


def test_entry_discarded_from_the_tree_from_vscode(
    tmp_path: Path, code_server: tuple[str, Path]
) -> None:
    base, root = code_server
    entry_id = add_note(root, TREE_DISCARD_TEXT, "--file", "src/pay.py", "--line", "4")

    result = drive(
        tmp_path, base, root, scenario="treeroute", entryText=TREE_DISCARD_TEXT,
        menuItem="Discard, Recorded in the Trajectory", said="is now discarded", status="discarded",
        openAfter="0 open",
    )  # fmt: skip

    assert result["said"] == f"Stet: entry {entry_id} is now discarded", result["said"]
    # Open, the entry's menu offered its routes and "Edit Note…"; discarded, only to open its
    # anchor (the server refuses to edit or graduate a closed entry).
    menu_before = [item.strip() for item in result["menu"] if item.strip()]
    assert "Edit Note…" in menu_before and "Open Anchor" in menu_before, menu_before
    menu_after = [item.strip() for item in result["menuAfter"] if item.strip()]
    assert menu_after == ["Open Anchor"], menu_after
    [row] = [row for row in result["treeAfter"] if TREE_DISCARD_TEXT in row]
    assert "discarded · src/pay.py:4" in row, row
    # On disk: the entry discarded, its text kept; nothing graduated anywhere.
    [entry] = sheet_entries(root)
    assert (entry["id"], entry["text"], entry["status"]) == (
        entry_id,
        TREE_DISCARD_TEXT,
        "discarded",
    )
    # The working trajectory records the decision; no skill was written.
    events_file = root / working_trajectory(root)["path"] / "events.jsonl"
    events = [json.loads(line) for line in events_file.read_text(encoding="utf-8").splitlines()]
    assert [(e["kind"], e["entry_id"], e["route"]) for e in events] == [
        ("graduation", entry_id, "discard")
    ], events
    assert not (root / ".stet" / "skills").exists()


def test_comment_thread_discarded_from_vscode(
    tmp_path: Path, code_server: tuple[str, Path]
) -> None:
    base, root = code_server
    ids = add_thread_entries(root)
    (first, _, _, _), (second, _, _, _), (other, _, _, other_line) = THREAD_ENTRIES

    result = drive(
        tmp_path, base, root, scenario="threaddiscard",
        threadEntries=[{"text": text, "line": line} for text, _, _, line in THREAD_ENTRIES],
    )  # fmt: skip

    # The thread showed both entries of its line; its title action discarded both, and it went
    # from the Comments panel and the editor; the other line's thread stayed.
    assert first in result["threadText"] and second in result["threadText"]
    assert any(other in row and f"[Ln {other_line}]" in row for row in result["threadsAfter"])
    assert result["widgets"] == 0
    # The Problems panel lists the other entry (at its line's first non-blank) and no other.
    line_text = MARGIN_SOURCE.splitlines()[other_line - 1]
    column = len(line_text) - len(line_text.lstrip()) + 1
    message = f"style sheet (convention, human, {ids[2]}): {other}"
    rows = [row["text"] for row in result["problems"] if "style sheet (" in row["text"]]
    assert rows == [f"{message}stetconvention[Ln {other_line}, Col {column}]"], rows
    # On disk: the thread's two entries discarded, the other open.
    statuses = {entry["id"]: entry["status"] for entry in sheet_entries(root)}
    assert statuses == {ids[0]: "discarded", ids[1]: "discarded", ids[2]: "open"}


CANCELLED_TEXT = "pay() takes the URL from the environment"


def test_note_edit_cancelled_from_vscode(tmp_path: Path, code_server: tuple[str, Path]) -> None:
    base, root = code_server
    ids = [
        add_note(root, text, "--kind", kind, "--file", "src/pay.py", "--line", str(line))
        for text, kind, line in UPKEEP_ENTRIES
    ]
    (edit_text, _, _), (other_text, _, _) = UPKEEP_ENTRIES
    sheet = stet_sheet_path(root)
    before = sheet.read_bytes()

    result = drive(
        tmp_path, base, root, scenario="editcancel", editText=edit_text,
        typedText=CANCELLED_TEXT,
    )  # fmt: skip

    # The box held the entry's text, then what was typed; Escape dismissed it.
    assert result["editBox"]["title"] == f"Stet: Edit entry {ids[0]}"
    assert result["editBox"]["value"] == edit_text
    assert result["typed"] == CANCELLED_TEXT
    # Nothing was sent: no "edited" message, no error, and the server still lists the old text.
    assert not [item for item in result["statusItems"] if "edited" in item], result["statusItems"]
    assert not result["toasts"], result["toasts"]
    assert any(row.startswith(edit_text) for row in result["listed"]), result["listed"]
    assert not [row for row in result["listed"] if CANCELLED_TEXT in row], result["listed"]
    # On disk: the sheet byte for byte as it was.
    assert sheet.read_bytes() == before
    assert {e["id"]: e["text"] for e in sheet_entries(root)} == {
        ids[0]: edit_text, ids[1]: other_text,
    }  # fmt: skip


def _edit_session_events(root: Path, events_file: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in events_file.read_text(encoding="utf-8").splitlines()]


STEP_COLUMN = 20  # where the cursor stands on the step's line (1-based)


def test_definition_from_a_trajectory_step_from_vscode(
    tmp_path: Path, code_server: tuple[str, Path]
) -> None:
    base, root = code_server
    session = claude_edit_session(root, tmp_path / "home")
    imported = stet(root, "trajectory", "import", str(session), "--json")
    assert imported.returncode == 0, imported.stderr
    events_file = root / working_trajectory(root)["path"] / "events.jsonl"
    events_text = events_file.read_text(encoding="utf-8")
    events = _edit_session_events(root, events_file)
    [change] = [event for event in events if event["kind"] == "file_change"]
    [call] = [event for event in events if event["kind"] == "tool_call"]
    source = root / "src" / "pay.py"
    source_text = source.read_text(encoding="utf-8")

    result = drive(
        tmp_path, base, root, scenario="definition", fileName="pay.py",
        sessionLabel=f"session {EDIT_SESSION_ID[:8]}", sessionPrompt=EDIT_PROMPT,
        stepLabel=f"{call['step']} · tool_call", changeLine=events.index(change) + 1,
        changeColumn=STEP_COLUMN,
    )  # fmt: skip

    # From the file change's line, Go to Definition opened src/pay.py at the line it changed.
    assert "events.jsonl" in result["stepTab"]
    assert result["landedTab"].strip().startswith("pay.py"), result["landedTab"]
    assert result["cursor"].startswith(f"Ln {EDIT_LINE}, Col 1"), result["cursor"]
    assert source_text.splitlines()[EDIT_LINE - 1] == EDIT_NEW
    assert EDIT_NEW in result["landedText"]
    # Nothing changed: no tab dirty, both files as they were.
    assert result["dirty"] == 0
    assert source.read_text(encoding="utf-8") == source_text
    assert events_file.read_text(encoding="utf-8") == events_text


def test_changes_that_could_not_be_placed_picked_from_vscode(
    tmp_path: Path, code_server: tuple[str, Path]
) -> None:
    """Past three changes provenance could not place, a file's first line has one lens for
    them all. Its command offered them through `window/showMessageRequest`, which VS Code
    shows as a notification with a button a change (six here, thirty elsewhere); VS Code
    offers them in a quick pick instead, worded as their lenses, and the step of the one
    picked opens in the narration at its line."""
    base, root = code_server
    imported = stet(root, "trajectory", "import", str(unplaced_session(root, tmp_path)))
    assert imported.returncode == 0, imported.stderr
    blamed = stet(root, "trajectory", "blame", "src/u.py", "--json")
    unplaced = json.loads(blamed.stdout)["unattributed"]
    assert len(unplaced) == 6, unplaced
    trajectory = working_trajectory(root)
    short = trajectory["id"] if len(trajectory["id"]) <= 32 else trajectory["id"][:29] + "…"
    titles = [
        f"agent: step {item['step']} of {short} changed {item['lines']} "
        f"line{'s' if item['lines'] != 1 else ''} that could not be placed: {item['reason']}"
        for item in unplaced
    ]
    picked = unplaced[2]

    result = drive(
        tmp_path, base, root, scenario="unplaced", file="src/u.py", fileName="u.py",
        fileShows="TWO", lensTitle="agent: 6 changes that could not be placed",
        pickTitle=titles[2],
    )  # fmt: skip

    assert "u.py" in result["pick"]["title"] and "6 changes" in result["pick"]["title"]
    assert sorted(result["labels"]) == sorted(titles), result["labels"]
    assert result["toasts"] == [], result["toasts"]
    assert "narration.md" in result["openedTab"], result["openedTab"]
    narration = (root / trajectory["path"] / "narration.md").read_text(encoding="utf-8")
    anchor = find_line(narration.splitlines(), f'<a id="step-{picked["step"]}"></a>')
    shown = re.match(r"Ln (\d+),", result["cursor"])
    assert shown is not None and int(shown.group(1)) == anchor + 1, (result["cursor"], anchor)


def test_trajectory_schema_error_shown_from_vscode(
    tmp_path: Path, code_server: tuple[str, Path]
) -> None:
    base, root = code_server
    events_file, line = events_with_schema_error(root, tmp_path / "home")
    text = events_file.read_text(encoding="utf-8")
    events = text.split("\n")
    call_step = next(json.loads(e)["step"] for e in events if '"kind":"tool_call"' in e)

    result = drive(
        tmp_path, base, root, scenario="eventsdiag", message=SCHEMA_MESSAGE,
        sessionLabel=f"session {EDIT_SESSION_ID[:8]}", sessionPrompt=EDIT_PROMPT,
        stepLabel=f"{call_step} · tool_call",
    )  # fmt: skip

    # One error, from stet, at the broken line (1-based), saying what is wrong with it.
    rows = [row for row in result["problems"] if "[Ln " in row["text"]]
    assert [row["text"] for row in rows] == [
        f"{SCHEMA_MESSAGE}stettrajectory-schema[Ln {line + 1}, Col 1]"
    ], result["problems"]
    assert "codicon-error" in " ".join(rows[0]["icons"]), rows
    # Opening it changed nothing.
    assert result["dirty"] == 0
    assert events_file.read_text(encoding="utf-8") == text


def test_trajectory_secret_shown_from_vscode(tmp_path: Path, code_server: tuple[str, Path]) -> None:
    base, root = code_server
    token = fake_github_token()
    events_file, line = committed_events_with_secret(root, tmp_path / "home", token)
    text = events_file.read_text(encoding="utf-8")
    column = text.split("\n")[line].index(token)

    result = drive(
        tmp_path, base, root, scenario="eventsdiag", message="unredacted secret",
        eventsFile=str(events_file.relative_to(root)), eventsShows='"kind"',
    )  # fmt: skip

    # One error over the token (1-based line and column), naming the rule.
    rows = [row for row in result["problems"] if "[Ln " in row["text"]]
    assert [row["text"] for row in rows] == [
        f"{SECRET_MESSAGE}stetgithub-token[Ln {line + 1}, Col {column + 1}]"
    ], result["problems"]
    assert "codicon-error" in " ".join(rows[0]["icons"]), rows
    # No fragment of the secret in what the Problems panel shows.
    said = json.dumps(result["problems"])
    assert not [part for part in fragments(token) if part in said], said
    # Opening it changed nothing.
    assert result["dirty"] == 0
    assert events_file.read_text(encoding="utf-8") == text


SUBFOLDER_NOTE = "amounts are integers of cents"


def test_a_subfolder_of_a_repository_opened_alone_from_vscode(
    tmp_path: Path, code_server: tuple[str, Path]
) -> None:
    """A folder with no .git of its own, inside a repository (a package of a monorepo):
    the extension starts by itself, with no command run, and the server finds the
    repository above the folder."""
    base, root = code_server
    app = root / "services" / "billing"
    app.mkdir(parents=True)
    (app / "pay.py").write_text(f"def pay(url):\n    # stet: {SUBFOLDER_NOTE}\n    return url\n")
    assert not (app / ".git").exists() and not (app / ".stet").exists()

    result = drive(
        tmp_path, base, app, scenario="eventsdiag", message=SUBFOLDER_NOTE,
        eventsFile="pay.py", eventsName="pay.py", eventsShows="def pay",
    )  # fmt: skip

    rows = [row for row in result["problems"] if SUBFOLDER_NOTE in row["text"]]
    assert len(rows) == 1 and "margin-note" in rows[0]["text"], result["problems"]
    assert "[Ln 2, Col" in rows[0]["text"], rows
    assert result["dirty"] == 0


OUTSIDE_SOURCE = "def helper():\n    return 42\n"


def test_a_file_outside_the_repository_active_from_vscode(
    tmp_path: Path, code_server: tuple[str, Path]
) -> None:
    """With a file outside the repository active (a library's, opened by go to definition),
    the repository commands keep to the window's repository: the status bar still shows it
    (not "not inside a git repository" every 4 s), "Stet: Open Style Sheet" opens its sheet,
    and "Stet: Add Note at Cursor" says why it adds no note there (one message)."""
    base, root = code_server
    add_note(root, "the helper is the library's", "--kind", "note")
    outside = tmp_path / "library"
    outside.mkdir()
    (outside / "helper.py").write_text(OUTSIDE_SOURCE, encoding="utf-8")
    sheet = stet_sheet_path(root)

    result = drive(
        tmp_path, base, root, scenario="outside", outsideFile=str(outside / "helper.py"),
        outsideName="helper.py", outsideShows="def helper", sheetName=sheet.name,
    )  # fmt: skip

    status = result["status"]
    assert any("Stet: main · 1 open" in text for text in status), status
    assert sheet.name in result["sheetTab"]
    failures = [text for text in result["toasts"] if "failed" in text]
    assert not failures, result["toasts"]
    why = [text for text in result["toasts"] if "not inside a git repository" in text]
    assert why == [
        "Stet: helper.py is not inside a git repository: a note is anchored to a file of one."
    ], why
    assert [entry["text"] for entry in sheet_entries(root)] == ["the helper is the library's"]


def test_no_comment_threads_outside_the_repository_from_vscode(
    tmp_path: Path, code_server: tuple[str, Path]
) -> None:
    """A file outside any git repository offers no comment threads (the gutter's "+"): a
    note typed there could only be refused, after the typing."""
    base, root = code_server
    outside = tmp_path / "library"
    outside.mkdir()
    (outside / "helper.py").write_text(OUTSIDE_SOURCE, encoding="utf-8")

    result = drive(
        tmp_path, base, root, scenario="commentranges", outsideFile=str(outside / "helper.py"),
        outsideName="helper.py", outsideShows="def helper",
    )  # fmt: skip

    assert result["inRepository"] > 0
    assert result["outside"] == 0, result


def test_a_folder_holding_repositories_from_vscode(
    tmp_path: Path, code_server: tuple[str, Path]
) -> None:
    """A folder that is in no repository but holds one directly below it (checkouts side by
    side): the server starts, and a margin note of the repository below shows in Problems."""
    base, _ = code_server
    checkouts = tmp_path / "checkouts"
    checkouts.mkdir()
    make_workspace(checkouts / "service")
    assert not (checkouts / ".git").exists()

    result = drive(
        tmp_path, base, checkouts, scenario="eventsdiag", message=MARGIN_TEXT,
        eventsFile="service/src/pay.py", eventsName="pay.py", eventsShows="def pay",
    )  # fmt: skip

    rows = [row for row in result["problems"] if MARGIN_TEXT in row["text"]]
    assert len(rows) == 1 and "margin-note" in rows[0]["text"], result["problems"]


@pytest.mark.parametrize(
    ("code_server", "problem"),
    [
        (
            {"stet.server.args": "--verbose"},
            'stet.server.args must be a list of strings (such as ["--flag"]), not "--verbose"',
        ),
        (
            {"stet.server.path": 42},
            "stet.server.path must be a string (the stet-lsp executable), not 42",
        ),
    ],
    indirect=["code_server"],
)
def test_server_settings_of_a_wrong_type_from_vscode(
    tmp_path: Path, code_server: tuple[str, Path], problem: str
) -> None:
    """settings.json takes a value of any type: a `stet.server.args` that is not a list of
    strings, or a `stet.server.path` that is not a string, is named in one notification (the
    server is not started), not left to a silent failure or a raw TypeError."""
    base, root = code_server

    result = drive(tmp_path, base, root, scenario="messages", toastShows="stet.server.")

    assert result["toasts"] == [f"Stet: {problem}: the language server was not started."], result[
        "toasts"
    ]
    assert [item.strip() for item in result["status"]] == ["Stet"], result["status"]


@pytest.mark.parametrize(
    "code_server",
    [{"stet.brief.budget": "lots", "stet.margin.severty": "information"}],
    indirect=True,
)
def test_a_server_setting_of_a_bad_value_from_vscode(
    tmp_path: Path, code_server: tuple[str, Path]
) -> None:
    """settings.json holding a `stet.brief.budget` that is no number and a misspelt key: the
    server says so in a notification each, naming the setting, what it takes and the value
    used instead; the server runs."""
    base, root = code_server

    result = drive(tmp_path, base, root, scenario="messages", toastShows="stet.brief.budget")

    assert sorted(result["toasts"]) == [
        'Stet setting stet.brief.budget = "lots" is not a whole number of 1 or more; using 800',
        "Stet setting stet.margin.severty is not one of Stet's settings (ignored); "
        "did you mean stet.margin.severity?",
    ], result["toasts"]
    assert [item.strip() for item in result["status"]] == ["Stet: main · 0 open"], result["status"]


DIRTY_ENTRY = "Prices are Decimal, never float"
DIRTY_TYPED = "- Amounts are rounded half-even"
DIRTY_AGENT = "The retry helper lives in src/retry.py"


def test_sheet_with_unsaved_edits_keeps_an_agent_note_from_vscode(
    tmp_path: Path, code_server: tuple[str, Path]
) -> None:
    """The style sheet open with an unsaved line while `stet note add` writes an agent's note:
    the server merges the note into the editor; Ctrl+S then meets VS Code's own check (the file
    on disk is newer than the editor's), and its Overwrite writes the editor's text, which holds
    both: nothing is lost."""
    base, root = code_server
    add_note(root, DIRTY_ENTRY, "--kind", "convention")
    sheet = stet_sheet_path(root)

    result = drive(
        tmp_path, base, root, scenario="dirtysheet", entryText=DIRTY_ENTRY, typed=DIRTY_TYPED,
        agentText=DIRTY_AGENT,
    )  # fmt: skip

    assert len(result["toasts"]) == 1 and "The content of the file is newer" in result["toasts"][0]
    assert result["dialogs"] == [] and result["dirtyAfterSave"] == 1
    assert result["dirty"] == 0
    on_disk = sheet.read_text(encoding="utf-8")
    assert DIRTY_TYPED in on_disk and DIRTY_AGENT in on_disk and DIRTY_ENTRY in on_disk
    assert on_disk.count(DIRTY_AGENT) == 1
    assert on_disk.replace("\n", "") == result["editor"].replace("\n", "")


GONE_TEXT = "The legacy client is kept for the batch jobs"


def test_entry_whose_file_is_gone_listed_from_vscode(
    tmp_path: Path, code_server: tuple[str, Path]
) -> None:
    """ "Stet: List Entries" on an entry whose anchored file was deleted since."""
    base, root = code_server
    gone = root / "src" / "legacy.py"
    gone.write_text("def legacy():\n    return 1\n", encoding="utf-8")
    entry_id = add_note(root, GONE_TEXT, "--file", "src/legacy.py", "--line", "1")
    gone.unlink()

    result = drive(tmp_path, base, root, scenario="listgone", entryText=GONE_TEXT)

    # One message saying where the entry was anchored, not "listing the entries failed" with
    # VS Code's "Unable to resolve nonexistent file"; no tab opened.
    assert result["toasts"] == [
        f"Stet: entry {entry_id} is anchored in src/legacy.py, which is no longer there."
    ], result["toasts"]
    assert result["tabs"] == []


def test_branch_switched_away_from_a_working_trajectory_from_vscode(
    tmp_path: Path, code_server: tuple[str, Path]
) -> None:
    """The status bar item and the Stet view on a branch with a working trajectory while
    another branch has one too, then the item on a branch without."""
    base, root = code_server
    home = tmp_path / "home"
    subprocess.run(["git", "branch", "plain"], cwd=root, check=True)
    working = {}
    for checkout, session in ((["-b", "feature"], claude_session), (["main"], claude_edit_session)):
        subprocess.run(["git", "checkout", "-q", *checkout], cwd=root, check=True)
        branch = checkout[-1]
        imported = stet(root, "trajectory", "import", str(session(root, home)), "--json")
        assert imported.returncode == 0, imported.stderr
        working[branch] = working_trajectory_of(root, branch)

    result = drive(
        tmp_path, base, root, scenario="branchswitch", branch="main", otherBranch="plain"
    )

    # On main the item names its working trajectory, and the view lists it first, before
    # feature's (which stays in .stet/cache/ until feature's capstone) ...
    # (The item's icons are blanks in its text.)
    before, after, later = (
        " ".join(result[key].split()) for key in ("statusBefore", "statusAfter", "statusLater")
    )
    assert before == "Stet: main · 0 open · trajectory", before
    rows = [row for row in result["treeBefore"] if row["level"] == 2]
    assert [row["label"] for row in rows[:2]] == [
        f"working {working['main']}",
        f"working {working['feature']}",
    ], rows
    # ... and on plain, which has none (the capstone there refuses), it says nothing of one.
    assert after == later == "Stet: plain · 0 open", (after, later)
    refused = stet(root, "capstone", "--dry-run")
    assert refused.returncode != 0 and "no working trajectory" in refused.stderr, refused.stderr


def working_trajectory_of(root: Path, branch: str) -> str:
    """The id of `branch`'s working trajectory (`stet trajectory list` lists every branch's)."""
    done = stet(root, "trajectory", "list", "--json")
    assert done.returncode == 0, done.stderr
    [found] = [
        row["id"]
        for row in json.loads(done.stdout)["trajectories"]
        if row["working"] and row["target"] == branch
    ]
    return str(found)


def test_a_folder_in_no_repository_from_vscode(
    tmp_path: Path, code_server: tuple[str, Path]
) -> None:
    """A folder in no git repository: no server starts, and nothing says it failed. The status
    bar item has no warning and says that no repository is open, and a command says the same
    (not "the Stet language server is not running", which Restart would not mend)."""
    base, _ = code_server
    plain = tmp_path / "notes"
    plain.mkdir()
    (plain / "todo.py").write_text("# stet: a margin note with no repository\n")

    result = drive(tmp_path, base, plain, scenario="norepo")

    assert not [icon for icon in result["statusIcons"] if "warning" in icon], result["statusIcons"]
    assert "no git repository is open in this window" in result["statusTooltip"]
    assert result["toasts"] == [
        "Stet: opening the style sheet failed: no git repository is open in this window: Stet "
        "works on the files of a git repository (open a folder inside one, or a file of one; "
        "git init makes one)"
    ], result["toasts"]


def test_no_note_anchored_in_the_style_sheet_from_vscode(
    tmp_path: Path, code_server: tuple[str, Path]
) -> None:
    """Stet: Add Note at Cursor with the style sheet itself active says why no note is
    anchored there (every write rewrites the sheet) and asks nothing; nothing is written."""
    base, root = code_server
    add_note(root, "an entry so that the sheet exists", "--kind", "note")
    sheet = stet_sheet_path(root)
    before = sheet.read_bytes()

    result = drive(tmp_path, base, root, scenario="scratchnote", sheetName=sheet.name)

    assert result["asked"] == "message", result
    assert len(result["toasts"]) == 1, result["toasts"]
    assert result["toasts"][0].startswith(
        f"Stet: {sheet.name} is Stet's local scratch (.stet/cache/: the style sheet, working "
        "trajectories): anchor the note in a file of the repository"
    ), result["toasts"]
    assert sheet.read_bytes() == before
