"""VS Code 1.100 (code-server) with the packaged extension against the real `stet-lsp`.

code-server runs the .vsix in a throwaway profile; Debian's Chromium, driven by playwright-core
(tests/editors/vscode_drive.mjs), opens a file with a margin comment, sees the note in the
Problems panel, records it with Ctrl+. and Enter, adds a note with "Stet: Add Note at Cursor"
and one through a comment thread, and changes a `stet.*` setting in the Settings editor. The
style sheet on disk is the proof; screenshots are kept in the test's tmp folder. Two shorter
runs import a Claude Code session of the repository ("Stet: Import Agent Session…"), open its
narration ("Stet: Open Trajectory") and mark a step of it ("Stet: Mark Step…"). One reads the
status bar item (branch, open entries, trajectory), opens the Stet view from it, opens an entry's
anchor and a step from its tree and graduates the entry from its context menu; one finds the
server in the workspace's `.venv` with no `stet.server.path`.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from editor_harness import (
    CAPSTONE_MESSAGE,
    HERE,
    INSTALL_HINT,
    MARGIN_LINE,
    MARGIN_TEXT,
    SESSION_PROMPT,
    SKILL_ENTRY_TEXT,
    SKILL_NAME,
    VSIX,
    add_skill_entry,
    check_skill_and_capstone,
    claude_session,
    find_chromium,
    find_code_server,
    free_port,
    isolated_env,
    make_workspace,
    playwright_installed,
    server_command,
    sheet_entries,
    stet,
    stet_command,
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
    pytest.skip(f"missing {', '.join(_missing)}: {INSTALL_HINT}", allow_module_level=True)

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
}


@pytest.fixture
def code_server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """code-server with the extension in a throwaway profile: (base URL, workspace root).

    Parametrized indirectly with "venv", it sets no `stet.server.path`: the workspace has a
    `.venv` whose `bin/stet-lsp` leaves a mark, then runs the real server."""
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
    profile = tmp_path / "profile"
    extensions, user = profile / "ext", profile / "user"
    (user / "User").mkdir(parents=True)
    settings = {
        **SETTINGS,
        "stet.server.path": "" if venv else _server_path(),
        # The Problems panel leaves out Hint diagnostics (the default for margin notes): list
        # them as Information, which also proves the settings reach the server.
        "stet.margin.severity": "information",
    }
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


def test_agent_session_imported_and_opened_from_vscode(
    tmp_path: Path, code_server: tuple[str, Path]
) -> None:
    base, root = code_server
    # Where Claude Code keeps the sessions of `root` (CLAUDE_CONFIG_DIR in the editor's env).
    session = claude_session(root, tmp_path / "home")
    result = drive(tmp_path, base, root, scenario="import", sessionPrompt=SESSION_PROMPT)

    # The quick pick offered the session: harness, start, first prompt; its size.
    # (A row's text runs label, description and detail together.)
    [offered] = result["sessions"]
    label = f"claude-code · 2026-03-01 09:00 · {SESSION_PROMPT}"
    assert re.match(rf"{re.escape(label)}\d+\.\d KB{re.escape(str(session))}", offered), offered

    # The working trajectory is under .stet/cache/trajectories/, the token redacted ...
    trajectory = working_trajectory(root)
    folder = root / ".stet" / "cache" / "trajectories" / trajectory["id"]
    assert trajectory["harnesses"] == ["claude-code"]
    events = (folder / "events.jsonl").read_text(encoding="utf-8")
    assert SESSION_PROMPT in events and "ghp_" not in events
    # ... as the notification said.
    rel = folder.relative_to(root)
    assert result["imported"] == (
        f"Stet: {trajectory['steps']} events imported into {rel}, redacted 1 (github-token 1)"
    )

    # "Stet: Open Trajectory" showed its narration.
    assert "narration.md" in result["activeTab"]
    assert f"# Trajectory {trajectory['id']}" in result["trajectoryText"]


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

    # The dry run listed the paths and the default message; the commit used the one typed.
    assert f"added    {relative}" in result["dryRun"], result["dryRun"]
    assert "Trajectory: " in result["dryRun"]
    check_skill_and_capstone(root, entry_id, CAPSTONE_MESSAGE)
    assert "committed as" in result["committed"], result["committed"]


TREE_TEXT = "Payment functions return cents"
TREE_LINE = 4  # 1-based: "def pay(url):"
TREE_STEP = MARK_STEP  # the Write that created src/retry.py


def test_status_bar_and_side_bar_from_vscode(tmp_path: Path, code_server: tuple[str, Path]) -> None:
    base, root = code_server
    session = claude_session(root, tmp_path / "home")
    imported = stet(root, "trajectory", "import", str(session), "--json")
    assert imported.returncode == 0, imported.stderr
    trajectory = working_trajectory(root)
    added = stet(
        root,
        "note",
        "add",
        TREE_TEXT,
        "--kind",
        "convention",
        "--file",
        "src/pay.py",
        "--line",
        str(TREE_LINE),
        "--json",
    )
    assert added.returncode == 0, added.stderr
    entry_id = json.loads(added.stdout)["entry"]["id"]
    events = root / ".stet" / "cache" / "trajectories" / trajectory["id"] / "events.jsonl"
    step_line = next(
        n
        for n, text in enumerate(events.read_text(encoding="utf-8").splitlines())
        if json.loads(text).get("step") == TREE_STEP
    )
    step_kind = json.loads(events.read_text(encoding="utf-8").splitlines()[step_line])["kind"]

    result = drive(
        tmp_path,
        base,
        root,
        scenario="sidebar",
        branch="main",
        entryText=TREE_TEXT,
        sessionPrompt=SESSION_PROMPT,
        stepLabel=f"{TREE_STEP} · {step_kind}",
        stepLine=step_line + 1,
    )

    # The status bar item names the branch, counts the open entries, shows the trajectory.
    status = result["status"]
    assert "Stet: main" in status and "1 open" in status and "trajectory" in status, status
    # Clicking it showed the view; its tree lists the entry (by kind, with status and anchor).
    assert any("convention" in row for row in result["tree"]), result["tree"]
    [row] = [row for row in result["tree"] if TREE_TEXT in row]
    assert f"open · src/pay.py:{TREE_LINE}" in row, row
    # Clicking the entry opened its file at the anchor.
    assert "pay.py" in result["activeTab"]
    assert result["cursor"].startswith(f"Ln {TREE_LINE}, Col 1"), result["cursor"]

    # The working trajectory's session lists its steps; a click opens events.jsonl at the step.
    assert "events.jsonl" in result["stepTab"]
    assert result["stepCursor"].startswith(f"Ln {step_line + 1}, Col 1"), result["stepCursor"]

    # The entry's context menu graduated it into the working trajectory.
    assert any("Propose as a Skill" in item for item in result["menu"]), result["menu"]
    assert "0 open" in result["statusAfter"]
    [graduated] = [entry for entry in sheet_entries(root) if entry["id"] == entry_id]
    assert graduated["status"] == "graduated-trajectory", graduated


@pytest.mark.parametrize("code_server", ["venv"], indirect=True)
def test_server_found_in_the_workspace_venv(tmp_path: Path, code_server: tuple[str, Path]) -> None:
    base, root = code_server
    added = stet(root, "note", "add", TREE_TEXT, "--file", "src/pay.py", "--line", "4")
    assert added.returncode == 0, added.stderr

    # With no stet.server.path, the extension started the workspace's .venv/bin/stet-lsp.
    result = drive(tmp_path, base, root, scenario="sidebar", branch="main", entryText=TREE_TEXT)
    assert (tmp_path / "venv-server-started").exists()
    assert "Stet: main" in result["status"] and "1 open" in result["status"], result["status"]
