"""Neovim 0.11 (headless, the real binary) with editors/neovim against the real `stet-lsp`.

A margin comment in a Python file of a real git repository becomes a Hint diagnostic; its
code action records it to the style sheet and removes the comment; `:StetNote` adds an
anchored note that comes back as an Information diagnostic; `:StetBrief` and `:StetSheet`
open what they should. `:StetImport` imports a Claude Code session of the repository (picked
with vim.ui.select, then again by its path) and `:StetTrajectory` opens its narration;
`:StetMark!` marks a step of it.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from editor_harness import (
    CAPSTONE_MESSAGE,
    HERE,
    INSTALL_HINT,
    MARGIN_LINE,
    MARGIN_TEXT,
    NEOVIM_PLUGIN,
    SESSION_PROMPT,
    SKILL_NAME,
    add_skill_entry,
    check_skill_and_capstone,
    claude_session,
    find_nvim,
    isolated_env,
    make_workspace,
    server_command,
    sheet_entries,
    stet,
    stet_command,
    working_trajectory,
)

NVIM = find_nvim()
if NVIM is None:
    pytest.skip(f"Neovim 0.11 is not installed: {INSTALL_HINT}", allow_module_level=True)

NOTE_TEXT = "the retry helper lives in payments/retry.py"
NOTE_LINE = 5  # 0-based: "return response.json()" once the margin comment is gone
AGENT_TEXT = "HTTP calls go through payments.http.session"
AGENT_LINE = 0  # 0-based: "import requests"
PAUSE_UNTIL = "2999-01-01"


def drive(tmp_path: Path, root: Path, file: Path, **settings: Any) -> dict[str, Any]:
    out = tmp_path / "nvim-result.json"
    config = {
        "plugin": str(NEOVIM_PLUGIN),
        "cmd": server_command(),
        "file": str(file),
        "out": str(out),
        "timeout_ms": 30_000,
        **settings,
    }
    config_path = tmp_path / "nvim-test.json"
    config_path.write_text(json.dumps(config), encoding="utf-8")
    env = isolated_env(tmp_path / "home", STET_NVIM_TEST=str(config_path))
    done = subprocess.run(
        [NVIM, "--headless", "--clean", "-u", str(HERE / "nvim_drive.lua")],
        cwd=root,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    if not out.exists():
        log = tmp_path / "home" / "state" / "nvim" / "lsp.log"
        pytest.fail(
            f"nvim wrote no result (exit {done.returncode})\nstdout: {done.stdout}\n"
            f"stderr: {done.stderr}\nlsp.log: {log.read_text() if log.exists() else '-'}"
        )
    result: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return result


def test_margin_note_recorded_and_note_added_from_neovim(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "repo")
    file = root / "src" / "pay.py"

    result = drive(
        tmp_path,
        root,
        file,
        root_dir=str(root),
        note_line=NOTE_LINE,
        note_text=NOTE_TEXT,
        stet_cli=stet_command(),
        agent_text=AGENT_TEXT,
        agent_line=AGENT_LINE,
        pause_until=PAUSE_UNTIL,
    )
    print(json.dumps({"steps": result.get("steps"), "total_ms": result.get("total_ms")}))
    assert result.get("ok"), f"{result.get('error')}\n{json.dumps(result, indent=1)}"

    assert Path(result["root_dir"]).resolve() == root
    # No errors or warnings from the server (1 = Error, 2 = Warning) nor from the plugin.
    assert not [m for m in result["server_messages"] if m["type"] <= 2], result["server_messages"]
    assert not [n for n in result["notifications"] if n["level"] >= 3], result["notifications"]

    # The margin comment as a diagnostic.
    margin = result["margin"]
    assert margin["lnum"] == MARGIN_LINE
    assert margin["severity"] == 4  # vim.diagnostic.severity.HINT
    assert margin["code"] == "margin-note"
    assert margin["message"] == f"margin note (markup): {MARGIN_TEXT}"
    assert MARGIN_TEXT in margin["message"]
    assert margin["data"]["type"] == "margin"
    assert margin["data"]["line"] == MARGIN_LINE

    # Its two quick fixes, each a stet.margin.record command.
    titles = {action["title"]: action for action in result["actions"]}
    assert "Record margin note to style sheet" in titles, titles
    assert "Record all margin notes in this file" in titles, titles
    for action in titles.values():
        if action["title"].startswith("Record"):
            assert action["kind"] == "quickfix"
            assert action["command"]["command"] == "stet.margin.record"

    # Recording removed the comment from the buffer (and so from the file once written) ...
    assert not any("stet:" in line for line in result["after_record"])
    assert "    response = requests.post(url)" in result["after_record"]
    assert "stet:" not in file.read_text(encoding="utf-8")

    # ... and put an anchored human markup entry in the style sheet.
    entries = sheet_entries(root)
    margin_entries = [entry for entry in entries if MARGIN_TEXT in entry["text"]]
    assert len(margin_entries) == 1, entries
    recorded = margin_entries[0]
    assert recorded["author"] == "human"
    assert recorded["kind"] == "markup"
    assert recorded["anchor"]["path"] == "src/pay.py"

    # :StetNote: an anchored note, shown as an Information diagnostic on the cursor line.
    note = result["note"]
    assert note["severity"] == 3  # vim.diagnostic.severity.INFO
    assert note["lnum"] == NOTE_LINE
    assert note["data"]["type"] == "entry"
    note_entries = [entry for entry in sheet_entries(root) if entry["text"] == NOTE_TEXT]
    assert len(note_entries) == 1
    assert note["data"]["entryId"] == note_entries[0]["id"]
    assert note["code"] == note_entries[0]["kind"]
    assert note_entries[0]["anchor"]["path"] == "src/pay.py"
    assert note_entries[0]["anchor"]["line"] == NOTE_LINE + 1  # the sheet counts from 1
    assert note_entries[0]["anchor"]["text"] == "return response.json()"
    # The plugin read the new entry's id from the command's result ({…, "entry": {…}}).
    messages = [n["message"] for n in result["notifications"]]
    assert f"stet: note {note['data']['entryId']} added" in messages, messages
    assert note["message"] == f"style sheet (note, human, {note['data']['entryId']}): {NOTE_TEXT}"

    # A lens and a hover on the note's line.
    lenses = result["lenses"]
    titles = [lens["title"] or "" for lens in lenses if lens["line"] == note["lnum"]]
    assert any(title.startswith("style sheet: ") for title in titles), lenses
    assert NOTE_TEXT in (result.get("hover") or ""), result.get("hover")

    # :StetBrief and :StetSheet.
    assert NOTE_TEXT in result["brief"]
    sheet = stet_sheet_path(root)
    assert Path(result["sheet_buffer"]).resolve() == sheet

    # An agent's CLI write reaches the open buffer without an edit (the server watches the sheet).
    agent = result["agent"]
    assert agent["lnum"] == AGENT_LINE
    assert agent["severity"] == 3
    assert agent["code"] == "convention"
    assert agent["message"].startswith("style sheet (convention, agent, ")
    assert result["agent_refresh_ms"] < 10_000

    # :StetList: every entry in the quickfix list, at its current line.
    quickfix = {item["text"].split("] ", 1)[1]: item for item in result["quickfix"]}
    assert set(quickfix) == {MARGIN_TEXT, NOTE_TEXT, AGENT_TEXT}, result["quickfix"]
    assert quickfix[NOTE_TEXT]["lnum"] == NOTE_LINE + 1
    assert quickfix[AGENT_TEXT]["lnum"] == AGENT_LINE + 1
    assert Path(quickfix[NOTE_TEXT]["file"]).resolve() == file

    # :StetDiscard on the agent note's line.
    statuses = {entry["text"]: entry["status"] for entry in sheet_entries(root)}
    assert statuses == {MARGIN_TEXT: "open", NOTE_TEXT: "open", AGENT_TEXT: "discarded"}

    # :StetPause {date} names the moment the server answered (paused_until); :StetResume.
    assert f"stet: paused until {PAUSE_UNTIL}T00:00:00Z" in messages, messages
    assert "stet: resumed" in messages, messages
    listed = json.loads(stet(root, "note", "list", "--json").stdout)
    assert listed["paused"] is False


def stet_sheet_path(root: Path) -> Path:
    done = stet(root, "sheet", "path", "--json")
    assert done.returncode == 0, done.stderr
    return Path(json.loads(done.stdout)["sheet"]).resolve()


def test_agent_session_imported_and_opened_from_neovim(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "repo")
    session = claude_session(root, tmp_path / "home")

    result = drive(
        tmp_path, root, root / "src" / "pay.py", scenario="import", session_path=str(session)
    )
    print(json.dumps({"steps": result.get("steps"), "total_ms": result.get("total_ms")}))
    assert result.get("ok"), f"{result.get('error')}\n{json.dumps(result, indent=1)}"
    assert not [n for n in result["notifications"] if n["level"] >= 3], result["notifications"]

    # :StetImport asked for the sessions and offered the one session, labelled.
    assert [item["path"] for item in result["offered"]] == [str(session)]
    label = result["offered"][0]["label"]
    assert label.startswith(f"claude-code · 2026-03-01 09:00 · {SESSION_PROMPT}  ("), label
    assert label.endswith(" KB)"), label  # not imported yet
    uri = result["sent"][0]["arguments"][0]["uri"]
    assert result["sent"][:2] == [
        {"command": "stet.trajectory.sessions", "arguments": [{"uri": uri}]},
        {"command": "stet.trajectory.import", "arguments": [{"uri": uri, "path": str(session)}]},
    ]

    # The working trajectory is under .stet/cache/trajectories/, the token redacted.
    trajectory = working_trajectory(root)
    folder = root / ".stet" / "cache" / "trajectories" / trajectory["id"]
    assert trajectory["path"] == str(folder.relative_to(root))
    assert trajectory["harnesses"] == ["claude-code"]
    events = (folder / "events.jsonl").read_text(encoding="utf-8")
    assert SESSION_PROMPT in events
    assert "ghp_" not in events
    rel = folder.relative_to(root)
    assert result["imported"] == (
        f"stet: {trajectory['steps']} events imported into {rel}, redacted 1 (github-token 1)"
    )
    # :StetImport {path}: the same file again.
    assert result["again"].startswith("stet: claude-code session 5e551011 already imported")

    # :StetTrajectory shows its narration.
    assert Path(result["trajectory_buffer"]).resolve() == folder / "narration.md"
    assert result["trajectory_lines"][0] == f"# Trajectory {trajectory['id']}"


MARK_TEXT = "retry.py duplicates payments/retry.py"
MARK_STEP = 6  # the Write that created src/retry.py


def test_step_marked_from_neovim(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "repo")
    session = claude_session(root, tmp_path / "home")
    imported = stet(root, "trajectory", "import", str(session), "--json")
    assert imported.returncode == 0, imported.stderr
    trajectory = working_trajectory(root)

    result = drive(
        tmp_path,
        root,
        root / "src" / "pay.py",
        scenario="mark",
        mark_heading=f'<a id="step-{MARK_STEP}"></a>**Step {MARK_STEP} ',
        mark_text=MARK_TEXT,
    )
    print(json.dumps({"steps": result.get("steps"), "total_ms": result.get("total_ms")}))
    assert result.get("ok"), f"{result.get('error')}\n{json.dumps(result, indent=1)}"

    # Outside a trajectory file nothing was sent; in the narration, the cursor's line was.
    narration = root / ".stet" / "cache" / "trajectories" / trajectory["id"] / "narration.md"
    assert Path(result["trajectory_buffer"]).resolve() == narration
    marks = [sent for sent in result["sent"] if sent["command"] == "stet.step.mark"]
    assert len(marks) == 1, result["sent"]
    argument = marks[0]["arguments"][0]
    assert Path(argument.pop("uri").removeprefix("file://")).resolve() == narration
    assert argument == {
        "line": result["mark_line"],
        "verdict": "wrong",
        "text": MARK_TEXT,
        "toSheet": True,
    }

    # The server found the step at that line: the verdict is in the feedback file, and in the
    # style sheet (the bang).
    feedback = root / ".stet" / "feedback" / f"{trajectory['id']}.jsonl"
    verdicts = [json.loads(line) for line in feedback.read_text(encoding="utf-8").splitlines()]
    assert [(v["step"], v["verdict"], v["text"]) for v in verdicts] == [
        (MARK_STEP, "wrong", MARK_TEXT)
    ]
    entries = [entry for entry in sheet_entries(root) if MARK_TEXT in entry["text"]]
    assert len(entries) == 1, sheet_entries(root)
    assert entries[0]["kind"] == "markup"
    assert (
        result["marked"]
        == f"stet: step {MARK_STEP} marked wrong; style sheet entry {entries[0]['id']} added"
    )


def test_entry_proposed_as_skill_and_capstone_from_neovim(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "repo")
    entry_id, proposed = add_skill_entry(root)

    result = drive(
        tmp_path,
        root,
        root / "src" / "pay.py",
        scenario="graduate",
        entry_id=entry_id,
        bad_name="Error Wrapping",
        skill_name=SKILL_NAME,
        capstone_message=CAPSTONE_MESSAGE,
    )
    print(json.dumps({"steps": result.get("steps"), "total_ms": result.get("total_ms")}))
    assert result.get("ok"), f"{result.get('error')}\n{json.dumps(result, indent=1)}"
    assert not [m for m in result["server_messages"] if m["type"] <= 2], result["server_messages"]

    # The code action's command asked for the name, offering the proposed one; a bad name
    # was refused and asked again; then stet.graduate ran with the name given.
    [first, second] = result["prompts"]
    assert first["prompt"] == f"Skill name for entry {entry_id}: "
    assert first["default"] == proposed != SKILL_NAME
    assert second["default"] == "Error Wrapping"
    assert result["bad_name"].startswith('stet: "Error Wrapping" is not a skill name')
    [sent] = [s for s in result["sent"] if s["command"] == "stet.graduate"]
    assert sent["arguments"][0]["route"] == "skill"
    assert sent["arguments"][0]["skill"] == SKILL_NAME
    relative = f".stet/skills/{SKILL_NAME}/SKILL.md"
    assert (
        result["graduated"]
        == f"stet: entry {entry_id} into the skill {SKILL_NAME} ({relative}, staged)"
    )

    # :StetCapstone! showed what would be committed; :StetCapstone {message} committed it.
    assert result["dry_run"][0].startswith("would commit trajectory "), result["dry_run"]
    assert f"  added    {relative}" in result["dry_run"]
    assert "message:" in result["dry_run"]
    check_skill_and_capstone(root, entry_id, CAPSTONE_MESSAGE)
    assert "committed as" in result["committed"]
