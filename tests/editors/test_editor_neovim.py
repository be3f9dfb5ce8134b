"""Neovim 0.11 (headless, the real binary) with editors/neovim against the real `stet-lsp`.

A margin comment in a Python file of a real git repository becomes a Hint diagnostic; its
code action records it to the style sheet and removes the comment; `:Stet note` adds an
anchored note that comes back as an Information diagnostic; `:Stet brief` and `:Stet sheet`
open what they should; `:Stet` completes; `:checkhealth stet` reports no error. `:Stet import`
imports a Claude Code session of the repository (picked with vim.ui.select, then again by its
path) and `:Stet trajectory` opens its narration; `:Stet! mark` marks a step of it.
`:Stet graduate` graduates the entry under the cursor (in a source file and in the sheet),
`:Stet steps` lists the working trajectory's steps, `:Stet capstone` commits it. A paused sheet
refuses `:Stet record` (then `:Stet resume`, `:Stet edit`, `:Stet graduate discard`); a
trajectory's events.jsonl shows its lenses, outline, hover and verdict actions, and a file a
step wrote its provenance lens and hover (the lens, the line's code action and
`:Stet trajectory {id} {step}` each open the step); `:Stet review` and its code
actions graduate the entries. The style sheet holding a pasted secret and a lost anchor
shows both as warnings, and its lenses; "Redact now" puts the marker in the buffer, not on
disk until `:write`. Go to definition from a file-change step of events.jsonl lands on the
line the step changed; a trajectory's schema error and a committed one's secret show as
errors. The help file passes `:helptags`, and the README's minimal configuration attaches
the client.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pygit2
import pytest
from editor_harness import (
    CAPSTONE_MESSAGE,
    EDIT_LINE,
    EDIT_NEW,
    HERE,
    LOST_ANCHOR,
    MARGIN_LINE,
    MARGIN_SOURCE,
    MARGIN_TEXT,
    NEOVIM_PLUGIN,
    REDACTED_TOKEN,
    SCHEMA_MESSAGE,
    SECRET_MESSAGE,
    SECRET_NOTE,
    SESSION_PROMPT,
    SKILL_ENTRY_TEXT,
    SKILL_NAME,
    add_note,
    add_skill_entry,
    check_skill_and_capstone,
    claude_edit_session,
    claude_session,
    claude_transcript,
    committed_events_with_secret,
    editor_missing,
    events_with_schema_error,
    fake_github_token,
    find_line,
    find_nvim,
    fragments,
    isolated_env,
    left_by_deleted_branches,
    make_workspace,
    server_command,
    sheet_entries,
    sheet_with_secret_and_lost_anchor,
    stet,
    stet_command,
    stet_sheet_path,
    working_trajectory,
)

NVIM = find_nvim()
if NVIM is None:
    editor_missing("Neovim 0.11 is not installed")

NOTE_TEXT = "the retry helper lives in payments/retry.py"
NOTE_LINE = 5  # 0-based: "return response.json()" once the margin comment is gone
AGENT_TEXT = "HTTP calls go through payments.http.session"
AGENT_LINE = 0  # 0-based: "import requests"
PAUSE_UNTIL = "2999-01-01"
NO_SUCH_ENTRY = (
    "stet: no entry with id 'nosuch' in the style sheet of main (`stet note list` shows its "
    "entries and their ids; each branch has a sheet of its own)"
)
REQUIRED_SUBCOMMANDS = [
    *("note", "record", "sheet", "brief", "list", "edit", "discard", "pause", "resume"),
    *("import", "trajectory", "steps", "mark", "graduate", "review", "capstone"),
]
"""The subcommands `:Stet` must have at least; the help is checked against the plugin's own."""


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
    # The code action says so, as :Stet record does.
    confirmations = [n["message"] for n in result["notifications"] if "recorded" in n["message"]]
    assert confirmations == [f"stet: margin note recorded as entry {recorded['id']}"], confirmations

    # :Stet note: an anchored note, shown as an Information diagnostic on the cursor line.
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

    # :Stet brief and :Stet sheet.
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

    # :Stet list: every entry in the quickfix list, at its current line.
    quickfix = {item["text"].split("] ", 1)[1]: item for item in result["quickfix"]}
    assert set(quickfix) == {MARGIN_TEXT, NOTE_TEXT, AGENT_TEXT}, result["quickfix"]
    assert quickfix[NOTE_TEXT]["lnum"] == NOTE_LINE + 1
    assert quickfix[AGENT_TEXT]["lnum"] == AGENT_LINE + 1
    assert Path(quickfix[NOTE_TEXT]["file"]).resolve() == file

    # :Stet discard on the agent note's line.
    statuses = {entry["text"]: entry["status"] for entry in sheet_entries(root)}
    assert statuses == {MARGIN_TEXT: "open", NOTE_TEXT: "open", AGENT_TEXT: "discarded"}

    # :Stet pause {date} names the moment the server answered (paused_until); :Stet resume.
    assert f"stet: paused until {PAUSE_UNTIL}T00:00:00Z" in messages, messages
    assert "stet: resumed" in messages, messages
    assert "stet: the style sheet of main was not paused" in messages, messages
    listed = json.loads(stet(root, "note", "list", "--json").stdout)
    assert listed["paused"] is False

    # :Stet completes its subcommands, then their arguments.
    completion = result["completion"]
    assert set(REQUIRED_SUBCOMMANDS) <= set(completion["subcommands"]), completion
    assert sorted(completion["note"]) == ["clarification", "convention"], completion
    assert completion["graduate"] == ["trajectory", "skill", "discard"], completion
    assert completion["mark"] == ["wrong", "clever", "note"], completion
    open_ids = {e["id"] for e in sheet_entries(root) if e["status"] == "open"}
    assert set(completion["ids"]) == open_ids, completion

    # :checkhealth stet: the server and its version, the client attached, Neovim's version.
    health = "\n".join(result["health"])
    assert "ERROR" not in health and "WARNING" not in health, health
    assert "- ✅ OK stet-lsp " in health, health
    assert "attached to src/pay.py" in health, health
    assert "- ✅ OK Neovim 0.1" in health, health


def test_agent_session_imported_and_opened_from_neovim(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "repo")
    session = claude_session(root, tmp_path / "home")

    result = drive(
        tmp_path, root, root / "src" / "pay.py", scenario="import", session_path=str(session)
    )
    print(json.dumps({"steps": result.get("steps"), "total_ms": result.get("total_ms")}))
    assert result.get("ok"), f"{result.get('error')}\n{json.dumps(result, indent=1)}"
    assert not [n for n in result["notifications"] if n["level"] >= 3], result["notifications"]

    # :Stet import asked for the sessions and offered the one session, labelled.
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
    # :Stet import {path}: the same file again.
    assert result["again"].startswith("stet: claude-code session 5e551011 already imported")

    # :Stet trajectory shows its narration.
    assert Path(result["trajectory_buffer"]).resolve() == folder / "narration.md"
    assert result["trajectory_lines"][0] == f"# Trajectory {trajectory['id']}"

    # :Stet steps: the session's heading, its start, the turn's heading, then the turn's steps.
    rows = result["steps_list"]
    assert rows[0]["valid"] == 0 and rows[0]["text"].startswith("session claude-code 2.1.12")
    assert (rows[1]["valid"], rows[1]["lnum"]) == (1, 1)
    assert rows[1]["text"].startswith("step 1 session_start claude-code")
    assert rows[2] == {"text": f"│ turn {SESSION_PROMPT} (turn 1)", "lnum": 0, "valid": 0}
    steps = rows[3:]
    assert [row["lnum"] for row in steps] == list(range(2, trajectory["steps"] + 1))
    assert all(row["valid"] == 1 for row in steps)
    assert steps[0]["text"] == f"step 2 user_message {SESSION_PROMPT}"


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


ANCHORED_TEXT = "import requests only through payments.http"
ANCHORED_LINE = 0  # 0-based: "import requests"


def test_entries_graduated_steps_listed_and_capstone_from_neovim(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "repo")
    entry_id, proposed = add_skill_entry(root)
    anchored_id = add_note(
        root, ANCHORED_TEXT, "--file", "src/pay.py", "--line", str(ANCHORED_LINE + 1)
    )

    result = drive(
        tmp_path,
        root,
        root / "src" / "pay.py",
        scenario="graduate",
        entry_id=entry_id,
        anchored_line=ANCHORED_LINE,
        bad_name="Error Wrapping",
        skill_name=SKILL_NAME,
        capstone_message=CAPSTONE_MESSAGE,
    )
    print(json.dumps({"steps": result.get("steps"), "total_ms": result.get("total_ms")}))
    assert result.get("ok"), f"{result.get('error')}\n{json.dumps(result, indent=1)}"
    assert not [m for m in result["server_messages"] if m["type"] <= 2], result["server_messages"]
    # The one warning: the bad skill name.
    warned = [n["message"] for n in result["notifications"] if n["level"] >= 3]
    assert len(warned) == 1 and "is not a skill name" in warned[0], warned

    # :Stet graduate in the source: the entry anchored at the cursor line, route picked.
    [first_select, second_select] = result["selects"]
    assert first_select["prompt"] == f"Graduate entry {anchored_id}"
    assert first_select["items"] == ["trajectory", "skill", "discard"]
    assert second_select["prompt"] == f"Graduate entry {entry_id}"
    assert result["graduated_anchored"].startswith(
        f"stet: entry {anchored_id} into the trajectory "
    ), result["graduated_anchored"]
    statuses = {entry["id"]: entry["status"] for entry in sheet_entries(root)}
    assert statuses[anchored_id] == "graduated-trajectory", statuses

    # In the sheet, the skill route asked for the name, offering the proposed one; a bad name
    # was refused and asked again; then stet.graduate ran with the name given.
    [first, second] = result["prompts"]
    assert first["prompt"] == f"Skill name for entry {entry_id}: "
    assert first["default"] == proposed != SKILL_NAME
    assert second["default"] == "Error Wrapping"
    assert result["bad_name"].startswith('stet: "Error Wrapping" is not a skill name')
    graduations = [s for s in result["sent"] if s["command"] == "stet.graduate"]
    assert [g["arguments"][0]["id"] for g in graduations] == [anchored_id, entry_id]
    assert graduations[1]["arguments"][0]["route"] == "skill"
    assert graduations[1]["arguments"][0]["skill"] == SKILL_NAME
    relative = f".stet/skills/{SKILL_NAME}/SKILL.md"
    assert (
        result["graduated"]
        == f"stet: entry {entry_id} into the skill {SKILL_NAME} ({relative}, staged)"
    )

    # :Stet steps: a quickfix item per step of the working trajectory, at its events.jsonl line,
    # under a heading for its session (the server's outline: graduation keeps a session of its
    # own).
    # (The capstone has since moved it to .stet/trajectories/, unchanged.)
    [trajectory] = json.loads(stet(root, "trajectory", "list", "--json").stdout)["trajectories"]
    events = root / trajectory["path"] / "events.jsonl"
    lines = events.read_text(encoding="utf-8").splitlines()
    steps = [item for item in result["quickfix"] if item["valid"] == 1]
    headings = [item["text"] for item in result["quickfix"] if item["valid"] == 0]
    assert len(steps) == len(lines) == trajectory["steps"]
    assert headings == ["session graduation (graduation)"], headings
    assert result["quickfix"][0]["text"] == headings[0]
    working = Path(steps[0]["file"]).resolve()
    assert working.name == "events.jsonl"
    assert working.parent.parent == root / ".stet" / "cache" / "trajectories"
    assert result["steps_title"] == f"stet trajectory {working.parent.name}"
    for index, item in enumerate(steps):
        event = json.loads(lines[item["lnum"] - 1])
        assert Path(item["file"]).resolve() == working
        assert item["lnum"] == index + 1
        assert item["text"].startswith(f"step {event['step']} {event['kind']}"), item

    # :Stet! capstone showed what would be committed; :Stet capstone {message} committed it
    # and named the commit.
    assert result["dry_run"][0].startswith("would commit trajectory "), result["dry_run"]
    assert f"  added    {relative}" in result["dry_run"]
    assert "message:" in result["dry_run"]
    check_skill_and_capstone(root, entry_id, CAPSTONE_MESSAGE)
    import pygit2

    # The server's message names the commit, and is the only word of it (no second one from
    # the plugin).
    head = str(pygit2.Repository(str(root)).head.target)
    assert "committed as" in result["committed"] and head[:12] in result["committed"]
    assert result["committed"].endswith(f" on {pygit2.Repository(str(root)).head.shorthand}")
    assert result["capstone_notifications"] == [], result["capstone_notifications"]


PLUGIN_NAMES = """
vim.opt.runtimepath:prepend(vim.env.STET_PLUGIN)
vim.g.stet_enable = false -- no server: only the command and the mappings
local modes = { "n", "x", "s", "o", "i", "c", "t" }
local function mappings()
  local found = {}
  for _, mode in ipairs(modes) do
    for _, map in ipairs(vim.api.nvim_get_keymap(mode)) do
      found[mode .. " " .. map.lhs] = map.lhs
    end
  end
  return found
end
local before = mappings()
vim.cmd.runtime("plugin/stet.lua")
local added = {}
for key, lhs in pairs(mappings()) do
  if before[key] == nil then
    added[#added + 1] = lhs
  end
end
table.sort(added)
io.write(vim.json.encode({ subcommands = require("stet.commands").names(), mappings = added }))
"""


def plugin_names(tmp_path: Path) -> dict[str, list[str]]:
    """The plugin's own lists: the subcommands of `:Stet` (`M.subcommands` of
    lua/stet/commands.lua) and every mapping plugin/stet.lua defines."""
    names: dict[str, list[str]] = lua_json(tmp_path, PLUGIN_NAMES)
    return names


def lua_json(tmp_path: Path, script: str) -> Any:
    """What a Lua script run by a headless Neovim with the plugin on its runtime path writes
    as JSON."""
    done = subprocess.run(
        [NVIM, "--headless", "--clean", "-l", "-"],
        input=script,
        env=isolated_env(tmp_path / "home", STET_PLUGIN=str(NEOVIM_PLUGIN)),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(done.stdout)


def lua_value(value: Any) -> str:
    """A setting's default as the help writes it: Lua (`{}` for an empty list)."""
    if isinstance(value, list):
        return "{" + ", ".join(lua_value(item) for item in value) + "}"
    return json.dumps(value)


def test_help_file_has_clean_tags_for_every_subcommand_mapping_and_setting(
    tmp_path: Path,
) -> None:
    from stet_lsp.server.settings import SCHEMA

    doc = tmp_path / "doc"
    doc.mkdir()
    text = (NEOVIM_PLUGIN / "doc" / "stet.txt").read_text(encoding="utf-8")
    (doc / "stet.txt").write_text(text, encoding="utf-8")
    done = subprocess.run(
        [NVIM, "--headless", "--clean", "-c", f"helptags {doc}", "-c", "qall!"],
        env=isolated_env(tmp_path / "home"),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    # :helptags reports duplicate tags and other problems as errors (on stderr, exit code 1).
    assert done.returncode == 0 and not done.stderr.strip(), (done.returncode, done.stderr)
    tags = {line.split("\t", 1)[0] for line in (doc / "tags").read_text().splitlines()}
    for tag in (":Stet", "stet.setup()", "stet-health", "g:stet_enable", "stet-server-settings"):
        assert tag in tags, sorted(tags)

    # Every subcommand and every mapping, as the plugin itself defines them.
    names = plugin_names(tmp_path)
    assert set(REQUIRED_SUBCOMMANDS) <= set(names["subcommands"]), names
    assert "<Plug>(StetNote)" in names["mappings"], names
    missing = [name for name in names["subcommands"] if f":Stet-{name}" not in tags]
    missing += [lhs for lhs in names["mappings"] if lhs not in tags]
    assert not missing, (missing, sorted(tags))

    # Every server setting of the schema: a tag, its default and its meaning (the schema's
    # description, and the allowed values), in the text up to the next tag.
    for item in SCHEMA:
        assert item.key in tags, (item.key, sorted(tags))
        start = text.index(f"*{item.key}*") + len(item.key) + 2
        following = re.compile(r"\*[^*\s|]+\*").search(text, start)
        about = " ".join(text[start : following.start() if following else len(text)].split())
        kind = "list of strings" if item.type == "array" else item.type
        assert f"{kind}, default {lua_value(item.default)}" in about, (item.key, about)
        assert " ".join(item.description.split()) in about, (item.key, about)
        for allowed in item.enum:
            assert json.dumps(allowed) in about, (item.key, allowed, about)


def readme_minimal_config() -> str:
    readme = (NEOVIM_PLUGIN / "README.md").read_text(encoding="utf-8")
    match = re.search(r"<!-- minimal-config -->\s*```lua\n(.*?)```", readme, re.DOTALL)
    assert match, "README.md has no minimal configuration block"
    lines = [line.strip() for line in match.group(1).splitlines() if line.strip()]
    return "\n".join(lines).replace("/path/to/stet/editors/neovim", str(NEOVIM_PLUGIN)) + "\n"


def test_readme_minimal_configuration_attaches(tmp_path: Path) -> None:
    if len(server_command()) != 1:
        pytest.skip("stet-lsp is not installed as a script (pip install -e .)")
    root = make_workspace(tmp_path / "repo")
    init = tmp_path / "init.lua"
    init.write_text(readme_minimal_config(), encoding="utf-8")
    out = tmp_path / "attached.json"
    check = (
        "lua local ok = vim.wait(30000, function() "
        "local c = vim.lsp.get_clients({bufnr = 0, name = 'stet'})[1] "
        "return c ~= nil and c.initialized end, 50) "
        f"vim.fn.writefile({{vim.json.encode({{attached = ok, "
        "keys = vim.tbl_map(function(m) return m.lhs end, vim.tbl_filter(function(m) "
        "return vim.startswith(m.desc or '', 'Stet:') end, vim.api.nvim_get_keymap('n')))"
        ", loaded = package.loaded['stet'] ~= nil or package.loaded['stet.commands'] ~= nil"
        f"}})}}, {json.dumps(str(out))}) "
        "vim.cmd('qall!')"
    )
    # `stet-lsp` from PATH, as a user has it (isolated_env puts this interpreter's bin first).
    done = subprocess.run(
        [NVIM, "--headless", "--clean", "-u", str(init), "-c", check, str(root / "src" / "pay.py")],
        cwd=root,
        env=isolated_env(tmp_path / "home"),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert out.exists(), (done.returncode, done.stdout, done.stderr)
    seen = json.loads(out.read_text())
    assert seen["attached"] is True, done.stderr
    # Its Lua is required on first use only, and its mappings are all <Plug> ones.
    assert seen["loaded"] is False, seen
    assert "<Plug>(StetNote)" in seen["keys"], seen
    assert all(key.startswith("<Plug>") for key in seen["keys"]), seen


UPKEEP_TEXT = "pay() takes the URL and nothing else"
UPKEEP_EDITED = "pay() takes the URL from settings, never from callers"
UPKEEP_LINE = 3  # 0-based: "def pay(url):"


def test_paused_sheet_entry_edited_and_discarded_from_neovim(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "repo")
    entry_id = add_note(
        root, UPKEEP_TEXT, "--kind", "convention", "--file", "src/pay.py",
        "--line", str(UPKEEP_LINE + 1),
    )  # fmt: skip
    file = root / "src" / "pay.py"

    result = drive(
        tmp_path,
        root,
        file,
        scenario="upkeep",
        margin_line=MARGIN_LINE,
        entry_id=entry_id,
        entry_text=UPKEEP_TEXT,
        edited_text=UPKEEP_EDITED,
    )
    print(json.dumps({"steps": result.get("steps"), "total_ms": result.get("total_ms")}))
    assert result.get("ok"), f"{result.get('error')}\n{json.dumps(result, indent=1)}"
    assert not [m for m in result["server_messages"] if m["type"] <= 2], result["server_messages"]
    assert result["entry_before"]["lnum"] == UPKEEP_LINE
    assert result["entry_before"]["message"] == (
        f"style sheet (convention, human, {entry_id}): {UPKEEP_TEXT}"
    )

    # :Stet pause (no date): paused until resumed, and :Stet list's title says so.
    assert result["paused"] == "stet: paused"
    assert result["list_title"] == "stet style sheet (main) paused"
    # While paused, :Stet record is refused in the server's words; the comment stays, and so
    # does its diagnostic. Which command failed is in the LSP log, not in the message.
    refusal = (
        "the style sheet of main is paused: new agent and margin notes are not recorded "
        "(nothing was removed; `stet resume` resumes)"
    )
    assert result["refused"] == f"stet: {refusal}"
    log = (tmp_path / "home" / "state" / "nvim" / "lsp.log").read_text(encoding="utf-8")
    assert f"stet: stet.margin.record failed: {refusal}" in log, log
    assert result["buffer_paused"][MARGIN_LINE] == f"    # stet: {MARGIN_TEXT}"
    assert result["margin_while_paused"]["lnum"] == MARGIN_LINE
    # Only the errors of the refused record were shown (level 4 = ERROR).
    errors = [n["message"] for n in result["notifications"] if n["level"] >= 3]
    assert errors == [result["refused"]], errors

    # :Stet resume, then :Stet record on the comment's line: recorded, the comment removed.
    assert (
        result["after_record"]
        == MARGIN_SOURCE.replace(f"    # stet: {MARGIN_TEXT}\n", "").splitlines()
    )
    assert file.read_text(encoding="utf-8") == "\n".join(result["after_record"]) + "\n"

    # :Stet edit {id} {text}: the diagnostic shows the new text, at the same line.
    assert result["edited_notice"] == f"stet: note {entry_id} edited"
    assert result["edited"]["lnum"] == UPKEEP_LINE
    assert result["edited"]["message"] == (
        f"style sheet (convention, human, {entry_id}): {UPKEEP_EDITED}"
    )
    # :Stet graduate discard on its line: gone from the buffer, discarded in the sheet.
    assert result["discarded"] == f"stet: entry {entry_id} discarded"
    entries = {entry["id"]: entry for entry in sheet_entries(root)}
    [margin] = [entry for entry in entries.values() if entry["text"] == MARGIN_TEXT]
    assert (margin["kind"], margin["author"], margin["status"]) == ("markup", "human", "open")
    assert result["recorded"] == f"stet: margin note recorded as entry {margin['id']}"
    assert margin["anchor"]["path"] == "src/pay.py"
    assert (entries[entry_id]["text"], entries[entry_id]["status"]) == (UPKEEP_EDITED, "discarded")
    assert len(entries) == 2, entries
    shown = [(d["lnum"], d["message"]) for d in result["diagnostics"]]
    assert shown == [
        (MARGIN_LINE, f"style sheet (markup, human, {margin['id']}): {MARGIN_TEXT}")
    ], shown
    listed = json.loads(stet(root, "note", "list", "--json").stdout)
    assert (listed["paused"], listed["paused_until"]) == (False, None)


RETRY_SOURCE = "def retry(call, times=3):\n    return call()\n"
MINUS = "\N{MINUS SIGN}"  # the sign the server writes before a change's removed lines


def test_trajectory_outline_lenses_hovers_and_provenance_from_neovim(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "repo")
    # The file the session's Write created, as it left it.
    (root / "src" / "retry.py").write_text(RETRY_SOURCE, encoding="utf-8")
    session = claude_session(root, tmp_path / "home")
    imported = stet(root, "trajectory", "import", str(session), "--json")
    assert imported.returncode == 0, imported.stderr
    trajectory = working_trajectory(root)
    events_file = root / trajectory["path"] / "events.jsonl"
    events = [json.loads(line) for line in events_file.read_text(encoding="utf-8").splitlines()]
    [change] = [event for event in events if event["kind"] == "file_change"]
    step_line = events.index(change)

    result = drive(
        tmp_path,
        root,
        root / "src" / "pay.py",
        scenario="trajectory",
        events=str(events_file),
        step_line=step_line,
        written=str(root / "src" / "retry.py"),
        trajectory=trajectory["id"],
        step=change["step"],
    )
    print(json.dumps({"steps": result.get("steps"), "total_ms": result.get("total_ms")}))
    assert result.get("ok"), f"{result.get('error')}\n{json.dumps(result, indent=1)}"
    assert not result["notifications"], result["notifications"]
    assert not [m for m in result["server_messages"] if m["type"] <= 2], result["server_messages"]
    short = trajectory["id"]
    [call] = [e for e in events if e["kind"] == "tool_call" and e["name"] == "Write"]

    # events.jsonl: a title-only lens per step, at its line (the plugin asked for them).
    lenses = result["lenses"]
    assert [(lens["line"], lens["command"]) for lens in lenses] == [
        (at, "") for at in range(len(events))
    ], lenses
    for lens, event in zip(lenses, events, strict=True):
        assert lens["title"].startswith(f"{event['step']} · {event['kind']}"), (lens, event)
    assert (
        lenses[step_line]["title"]
        == f"{change['step']} · file_change create src/retry.py +2 {MINUS}0"
    )
    assert lenses[events.index(call)]["title"] == f"{call['step']} · tool_call Write src/retry.py"
    # The outline (vim.lsp.buf.document_symbol): the session, then its one turn, named by the
    # request.
    assert result["outline"] == [
        {
            "lnum": 1,
            "text": "[Namespace] claude-code 2.1.12 claude-sonnet-4-5-20250929"
            " · 2026-03-01T09:00:00.000Z",
        },
        {"lnum": 2, "text": f"[Event] {SESSION_PROMPT}"},
    ]
    # The hover on the change's line: the step, its diff, the call that made it.
    hover = result["step_hover"]
    assert hover[0] == f"**Step {change['step']} · file\\_change** · {change['time']}", hover
    assert f"create `src/retry.py` +2 {MINUS}0" in hover
    assert hover[hover.index("```diff") : hover.index("```diff") + 7] == [
        "```diff",
        "--- /dev/null",
        "+++ b/src/retry.py",
        "@@ -0,0 +1,2 @@",
        "+def retry(call, times=3):",
        "+    return call()",
        "```",
    ], hover
    assert hover[-1] == f"Made by call `{call['call_id']}` (step {call['step']}).", hover
    # Its code actions: the two verdicts on that step.
    assert [
        (action["title"], action["command"]["command"], action["command"]["arguments"][0]["line"])
        for action in result["actions"]
    ] == [
        (f"Mark step {change['step']} as wrong", "stet.step.mark", step_line),
        (f"Mark step {change['step']} as clever", "stet.step.mark", step_line),
    ]
    assert result["events_diagnostics"] == []  # the import wrote it valid and redacted

    # src/retry.py: its two lines carry one lens and a hover back to the step that wrote them.
    assert [
        (lens["line"], lens["title"], lens["command"]) for lens in result["written_lenses"]
    ] == [
        (
            0,
            f"agent: step {change['step']} of {short[:29]}… wrote 2 lines",
            "stet.trajectory.open",
        )
    ]
    narration = root / trajectory["path"] / "narration.md"
    assert result["provenance_hover"] == [
        f"**Written by step {change['step']}** of trajectory `{short}`",
        "",
        "```diff",
        "--- /dev/null",
        "+++ b/src/retry.py",
        "@@ -0,0 +1,2 @@",
        "+def retry(call, times=3):",
        "+    return call()",
        "```",
        "",
        f"[Open step {change['step']}]({narration.as_uri()}#step-{change['step']}) · "
        f"[events]({narration.with_name('events.jsonl').as_uri()}#L{change['step']})",
    ]
    # Running the lens opened the narration at the step.
    anchor = f'<a id="step-{change["step"]}"></a>**Step {change["step"]} · Created** `src/retry.py`'
    assert Path(result["opened"]).resolve() == narration.resolve()
    assert result["opened_line"].startswith(anchor), result["opened_line"]
    # Without lenses: the code action on the step's second line runs the lens's command with
    # its arguments, and opens the same line; so does :Stet trajectory {id} {step}.
    [action] = [
        a
        for a in result["written_actions"]
        if (a.get("command") or {}).get("command") == "stet.trajectory.open"
    ]
    assert action["title"] == f"Open step {change['step']} of {short[:29]}… (narration)"
    assert action["kind"] == "quickfix"
    assert action["command"]["arguments"] == result["written_lenses"][0]["arguments"]
    for opened in (result["action_opened"], result["command_opened"]):
        assert Path(opened["name"]).resolve() == narration.resolve()
        assert opened["line"].startswith(anchor), opened


CLARIFICATION = "The payment API answers 409 for a repeated idempotency key"


def test_graduation_review_accepted_from_neovim(tmp_path: Path) -> None:
    import pygit2

    root = make_workspace(tmp_path / "repo")
    skill_id, proposed = add_skill_entry(root)
    clarification_id = add_note(root, CLARIFICATION, "--kind", "clarification")

    result = drive(
        tmp_path,
        root,
        root / "src" / "pay.py",
        scenario="review",
        accept_id=clarification_id,
        other_id=skill_id,
    )
    print(json.dumps({"steps": result.get("steps"), "total_ms": result.get("total_ms")}))
    assert result.get("ok"), f"{result.get('error')}\n{json.dumps(result, indent=1)}"
    assert not [m for m in result["server_messages"] if m["type"] <= 2], result["server_messages"]
    assert not [n for n in result["notifications"] if n["level"] >= 3], result["notifications"]

    # :Stet review wrote the review under .stet/cache/graduation/ and showed it: a line per
    # open entry, with its proposed route.
    review = Path(result["review_buffer"])
    assert review.parent == root / ".stet" / "cache" / "graduation", review
    skill_line = f"- [ ] {skill_id} → skill:{proposed} — {SKILL_ENTRY_TEXT}"
    clarification_line = f"- [ ] {clarification_id} → trajectory — {CLARIFICATION}"
    lines = result["review_lines"]
    assert lines[0] == "# Graduation review: main"
    assert lines[-7:] == [
        "## Conventions", "", skill_line, "", "## Clarifications", "", clarification_line,
    ], lines  # fmt: skip
    messages = [n["message"] for n in result["notifications"]]
    assert messages[0] == "stet: 2 open entries to review (code action on a line accepts it)"

    # The code actions on the clarification's line: its own and "Accept every proposal".
    assert result["offered"] == [
        f"Accept the proposal for entry {clarification_id}",
        "Accept every proposal",
    ]
    # Accepted: reported, and the buffer read again holds only the convention's line.
    [trajectory] = json.loads(stet(root, "trajectory", "list", "--json").stdout)["trajectories"]
    assert messages[1] == f"stet: entry {clarification_id} into the trajectory {trajectory['id']}"
    assert result["review_after"] == lines[:-4], result["review_after"]
    # "Accept every proposal" then graduated the convention as the proposed skill, staged.
    relative = f".stet/skills/{proposed}/SKILL.md"
    assert messages[2:] == [
        f"stet: entry {skill_id} into the skill {proposed} ({relative}, staged)"
    ], messages
    assert result["review_shown"][-1] == "No open entries."
    assert result["review_last"] == result["review_shown"]
    statuses = {entry["id"]: entry["status"] for entry in sheet_entries(root)}
    assert statuses == {clarification_id: "graduated-trajectory", skill_id: "graduated-skill"}
    assert SKILL_ENTRY_TEXT in (root / relative).read_text(encoding="utf-8")
    assert relative in pygit2.Repository(str(root)).index
    events = (root / trajectory["path"] / "events.jsonl").read_text(encoding="utf-8")
    assert CLARIFICATION in events


def test_style_sheet_secret_redacted_and_lost_anchor_from_neovim(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "repo")
    token = fake_github_token()
    sheet, ids = sheet_with_secret_and_lost_anchor(root, token)
    original = sheet.read_text(encoding="utf-8")

    result = drive(tmp_path, root, sheet, scenario="sheet")
    print(json.dumps({"steps": result.get("steps"), "total_ms": result.get("total_ms")}))
    assert result.get("ok"), f"{result.get('error')}\n{json.dumps(result, indent=1)}"
    assert not [m for m in result["server_messages"] if m["type"] <= 2], result["server_messages"]
    assert not [n for n in result["notifications"] if n["level"] >= 3], result["notifications"]
    lines = original.splitlines()
    assert result["before"] == lines
    at = {name: find_line(lines, f"id={entry_id} ") for name, entry_id in ids.items()}
    column = lines[at["secret"]].index(token)

    # The sheet's diagnostics: both warnings (2), from stet, the rule or problem as code.
    shown = [
        (d["lnum"], d["col"], d["end_col"], d["severity"], d["code"], d["message"], d["data"])
        for d in result["diagnostics"]
    ]
    lost = (
        at["lost"], 0, len(lines[at["lost"]]), 2, "anchor-lost",
        f"anchor lost ({ids['lost']}): src/pay.py:{LOST_ANCHOR} no longer holds "
        "'response = requests.post(url)'; the entry is kept",
        {"type": "entry", "entryId": ids["lost"]},
    )  # fmt: skip
    assert sorted(shown) == [
        lost,
        (
            at["secret"], column, column + len(token), 2, "github-token",
            "secret (github-token) will be redacted at graduation",
            {"type": "secret", "rule": "github-token"},
        ),
    ], shown  # fmt: skip
    # No fragment of the secret in what is shown: messages, data, lens titles and proposals.
    said = json.dumps([result["diagnostics"], result["offered"]]) + json.dumps(
        [(lens["title"], lens["arguments"][0].get("proposedName")) for lens in result["lenses"]]
    )
    for entry_id in ids.values():  # made at random, an id may hold three letters of it
        said = said.replace(entry_id, "<id>")
    assert not [part for part in fragments(token) if part in said], said

    # A lens per route on each open entry's line, none on the discarded one's.
    lenses = sorted(
        (lens["line"], lens["title"], lens["command"], lens["arguments"][0]["id"],
         lens["arguments"][0]["route"])
        for lens in result["lenses"]
    )  # fmt: skip
    assert lenses == sorted(
        (at[name], title, "stet.graduate", ids[name], route)
        for name in ("lost", "secret")
        for title, route in (
            ("graduate", "trajectory"), ("propose skill", "skill"), ("discard", "discard"),
        )
    ), lenses  # fmt: skip

    # At the secret: the entry's three routes and the gate's quick fix.
    secret_id = ids["secret"]
    assert result["offered"] == [
        f"Graduate entry {secret_id} into the trajectory",
        f"Propose entry {secret_id} as a skill",
        f"Discard entry {secret_id}",
        "Redact now: 1 secret in this file",
    ]
    # "Redact now": one workspace edit, one text edit replacing the token by its marker ...
    [applied] = result["applied_edits"]
    assert applied["label"] == "Redact secrets"
    edit = applied["edit"]
    changes = edit.get("changes") or {
        change["textDocument"]["uri"]: change["edits"] for change in edit["documentChanges"]
    }
    assert [Path(uri.removeprefix("file://")).resolve() for uri in changes] == [sheet]
    [[text_edit]] = changes.values()
    assert text_edit == {
        "range": {
            "start": {"line": at["secret"], "character": column},
            "end": {"line": at["secret"], "character": column + len(token)},
        },
        "newText": REDACTED_TOKEN,
    }
    # ... in the buffer only: modified, the file on disk untouched until :write.
    redacted = original.replace(token, REDACTED_TOKEN)
    assert result["redacted_line"] == redacted.splitlines()[at["secret"]]
    assert result["modified"] is True
    assert result["disk_before_write"] == lines
    # The warning went with the secret; the lost anchor stays.
    assert [
        (d["lnum"], d["col"], d["end_col"], d["severity"], d["code"], d["message"], d["data"])
        for d in result["diagnostics_after"]
    ] == [lost]
    # Saved: the file holds the marker, and the note reads so.
    assert result["buffer_written"] == redacted.splitlines()
    assert sheet.read_text(encoding="utf-8") == redacted
    notes = {entry["id"]: entry["text"] for entry in sheet_entries(root)}
    assert notes[secret_id] == f"{SECRET_NOTE} {REDACTED_TOKEN}"


def test_definition_from_a_trajectory_step_from_neovim(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "repo")
    session = claude_edit_session(root, tmp_path / "home")
    imported = stet(root, "trajectory", "import", str(session), "--json")
    assert imported.returncode == 0, imported.stderr
    events_file = root / working_trajectory(root)["path"] / "events.jsonl"
    events_text = events_file.read_text(encoding="utf-8")
    events = [json.loads(line) for line in events_text.splitlines()]
    [change] = [event for event in events if event["kind"] == "file_change"]
    source = root / "src" / "pay.py"
    source_text = source.read_text(encoding="utf-8")

    result = drive(
        tmp_path, root, source, scenario="definition", events=str(events_file),
        step_line=events.index(change),
    )  # fmt: skip
    print(json.dumps({"steps": result.get("steps"), "total_ms": result.get("total_ms")}))
    assert result.get("ok"), f"{result.get('error')}\n{json.dumps(result, indent=1)}"
    assert not result["notifications"], result["notifications"]

    # The server sends the file-change step to the line the edit changed (0-based on the wire).
    [location] = result["locations"]
    assert Path(location["uri"].removeprefix("file://")).resolve() == source
    assert location["range"]["start"] == {"line": EDIT_LINE - 1, "character": 0}
    # vim.lsp.buf.definition() opened src/pay.py with the cursor on that line (1-based).
    assert Path(result["landed"]).resolve() == source
    assert result["cursor"] == [EDIT_LINE, 0]
    assert result["landed_line"] == EDIT_NEW
    # Nothing changed: neither buffer modified, both files as they were.
    assert (result["landed_modified"], result["events_modified"]) == (False, False)
    assert source.read_text(encoding="utf-8") == source_text
    assert events_file.read_text(encoding="utf-8") == events_text


def _trajectory_diagnostics(
    tmp_path: Path, root: Path, events_file: Path, line: int, code: str
) -> dict[str, Any]:
    text = events_file.read_text(encoding="utf-8")
    result = drive(
        tmp_path, root, events_file, scenario="trajectory_diagnostics",
        events=str(events_file), line=line, code=code,
    )  # fmt: skip
    print(json.dumps({"steps": result.get("steps"), "total_ms": result.get("total_ms")}))
    assert result.get("ok"), f"{result.get('error')}\n{json.dumps(result, indent=1)}"
    assert not [n for n in result["notifications"] if n["level"] >= 3], result["notifications"]
    # Showing the diagnostics changed nothing: the buffer unmodified, the file as it was.
    assert result["modified"] is False
    assert events_file.read_text(encoding="utf-8") == text
    return result


def test_trajectory_schema_error_shown_from_neovim(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "repo")
    events_file, line = events_with_schema_error(root, tmp_path / "home")
    text = events_file.read_text(encoding="utf-8").split("\n")[line]

    result = _trajectory_diagnostics(tmp_path, root, events_file, line, "trajectory-schema")

    # One error (1), over the broken line's text, saying what is wrong with it.
    assert [
        (d["lnum"], d["col"], d["end_col"], d["severity"], d["code"], d["message"], d["data"])
        for d in result["diagnostics"]
    ] == [
        (line, 0, len(text), 1, "trajectory-schema", SCHEMA_MESSAGE,
         {"type": "trajectory", "line": line}),
    ]  # fmt: skip
    assert result["float"] == ["Diagnostics:", f"1. {SCHEMA_MESSAGE} [trajectory-schema]"]


def test_trajectory_secret_shown_from_neovim(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "repo")
    token = fake_github_token()
    events_file, line = committed_events_with_secret(root, tmp_path / "home", token)
    column = events_file.read_text(encoding="utf-8").split("\n")[line].index(token)

    result = _trajectory_diagnostics(tmp_path, root, events_file, line, "github-token")

    # One error over the token, naming the rule; the file is valid, so nothing else.
    assert [
        (d["lnum"], d["col"], d["end_col"], d["severity"], d["code"], d["message"], d["data"])
        for d in result["diagnostics"]
    ] == [
        (line, column, column + len(token), 1, "github-token", SECRET_MESSAGE,
         {"type": "secret", "rule": "github-token"}),
    ]  # fmt: skip
    assert result["float"] == ["Diagnostics:", f"1. {SECRET_MESSAGE} [github-token]"]
    # No fragment of the secret in what the user is shown.
    said = json.dumps([result["diagnostics"], result["float"]])
    assert not [part for part in fragments(token) if part in said], said


# -- short scripts: the plugin with a server that is missing, a file outside any repository,
#    graduation by id away from the entry ----------------------------------------------------

SCRIPT_HEAD = """
vim.opt.runtimepath:prepend(vim.env.STET_PLUGIN)
vim.opt.swapfile = false
vim.opt.shadafile = "NONE"
vim.lsp.config("stet", { cmd = vim.json.decode(vim.env.STET_CMD) })
vim.cmd.runtime("plugin/stet.lua")
local out = { notifications = {} }
vim.notify = function(message, level)
  out.notifications[#out.notifications + 1] = { message = message, level = level }
end
local function settle(ms)
  vim.wait(ms or 500, function() return false end)
end
local function attached(bufnr)
  return vim.wait(30000, function()
    local client = vim.lsp.get_clients({ bufnr = bufnr, name = "stet" })[1]
    return client ~= nil and client.initialized
  end, 50)
end
local function clients()
  local found = {}
  for _, client in ipairs(vim.lsp.get_clients({ name = "stet" })) do
    found[#found + 1] = { root = client.root_dir or vim.NIL, buffers = vim.tbl_count(client.attached_buffers) }
  end
  return found
end
vim.api.nvim_create_autocmd("VimEnter", { once = true, nested = true, callback = function()
  local ok, err = xpcall(function()
"""

SCRIPT_TAIL = """
  end, debug.traceback)
  out.ok = ok
  out.error = not ok and tostring(err) or nil
  vim.fn.writefile({ vim.json.encode(out) }, vim.env.STET_OUT)
  vim.cmd("qall!")
end })
"""


def run_script(
    tmp_path: Path,
    root: Path,
    body: str,
    cmd: list[str] | None = None,
    env: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Runs `body` (Lua, with `out`, `settle`, `attached` and `clients` in scope) in headless
    Neovim with the plugin and the server `cmd` (default this tree's), `env` added to its
    environment; returns `out`."""
    init = tmp_path / "script.lua"
    init.write_text(SCRIPT_HEAD + body + SCRIPT_TAIL, encoding="utf-8")
    out = tmp_path / "script-result.json"
    env = isolated_env(
        tmp_path / "home",
        STET_PLUGIN=str(NEOVIM_PLUGIN),
        STET_CMD=json.dumps(cmd or server_command()),
        STET_OUT=str(out),
        **(env or {}),
    )
    done = subprocess.run(
        [NVIM, "--headless", "--clean", "-u", str(init)],
        cwd=root,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.exists(), (done.returncode, done.stdout, done.stderr)
    result: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    assert result["ok"], result["error"]
    return result


def test_missing_server_said_once_and_by_every_command(tmp_path: Path) -> None:
    """With `stet-lsp` not executable: one warning pointing to :checkhealth stet (not one
    "Spawning language server … failed" per buffer without a filetype, nor silence for the
    others), and a command on a buffer says why no server is attached."""
    root = make_workspace(
        tmp_path / "repo",
        files={"a.py": "x = 1\n", "NOTES": "notes\n", "LICENSE2": "l\n", "b.txt": "b\n"},
    )
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "c.py").write_text("y = 2\n", encoding="utf-8")
    body = f"""
    for _, name in ipairs({{ {json.dumps(str(outside / "c.py"))}, "a.py", "NOTES", "LICENSE2", "b.txt" }}) do
      vim.cmd.edit(vim.fn.fnameescape(name))
      settle(300)
    end
    out.before = #out.notifications
    out.clients = #vim.lsp.get_clients()
    vim.cmd("Stet note a note")
    vim.cmd("Stet list")
    settle(300)
    out.messages = vim.api.nvim_exec2("messages", {{ output = true }}).output
"""
    result = run_script(tmp_path, root, body, cmd=[str(tmp_path / "no" / "stet-lsp")])
    assert result["clients"] == 0
    messages = [n["message"] for n in result["notifications"]]
    assert result["before"] == 1, messages
    program = str(tmp_path / "no" / "stet-lsp")
    assert messages[0] == (
        f"stet: `{program}` is not executable, so the language server cannot start; "
        "see :checkhealth stet"
    )
    assert result["notifications"][0]["level"] == 3  # WARN
    not_attached = (
        "stet: the stet language server is not attached to this buffer: "
        f"`{program}` is not executable (see :checkhealth stet)"
    )
    assert messages[1:] == [not_attached, not_attached], messages
    assert "Spawning" not in result["messages"], result["messages"]


def test_file_outside_a_repository_starts_no_client(tmp_path: Path) -> None:
    """The server attaches to files inside a git repository: a file outside one (with a
    filetype or without) starts no second client with no root, and :Stet says why."""
    root = make_workspace(tmp_path / "repo")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "c.py").write_text("y = 2\n", encoding="utf-8")
    (outside / "NOTES").write_text("notes\n", encoding="utf-8")
    body = f"""
    vim.cmd.edit("src/pay.py")
    out.attached = attached(0)
    out.repository = clients()
    for _, name in ipairs({{ {json.dumps(str(outside / "c.py"))}, {json.dumps(str(outside / "NOTES"))} }}) do
      vim.cmd.edit(vim.fn.fnameescape(name))
      settle(1500)
    end
    out.outside = clients()
    out.on_outside = #vim.lsp.get_clients({{ bufnr = 0 }})
    vim.cmd("Stet note a note")
    vim.cmd("Stet discard")
    vim.cmd("Stet mark wrong")
"""
    result = run_script(tmp_path, root, body)
    assert result["attached"] is True
    assert result["repository"] == [{"root": str(root), "buffers": 1}]
    assert result["outside"] == result["repository"], result["outside"]
    assert result["on_outside"] == 0
    not_attached = (
        "stet: the stet language server is not attached to this buffer: "
        "its file is not inside a git repository"
    )
    # discard and mark said "no style-sheet entry on this line" and "open a trajectory".
    assert [n["message"] for n in result["notifications"]] == [not_attached] * 3


def test_discard_and_graduate_off_an_entry_say_how_to_name_one(tmp_path: Path) -> None:
    """`:Stet discard` and `:Stet graduate` (and their mappings, which cannot give an id) on a
    line with no entry said only "give an id": they say where entries are, and the form."""
    root = make_workspace(tmp_path / "repo")
    body = """
    vim.cmd.edit("src/pay.py")
    out.attached = attached(0)
    vim.cmd("Stet discard")
    vim.cmd("Stet graduate")
    vim.wait(5000, function() return #out.notifications >= 2 end, 50)
"""
    result = run_script(tmp_path, root, body)
    assert result["attached"] is True
    assert [n["message"] for n in result["notifications"]] == [
        "stet: no style-sheet entry on this line: put the cursor on one (:Stet sheet, :Stet "
        "list) or give its id (:Stet discard ID)",
        "stet: no style-sheet entry under the cursor: put the cursor on one (:Stet sheet, "
        ":Stet list) or give its id (:Stet graduate ROUTE ID)",
    ]


def test_graduate_skill_by_id_offers_the_proposal_anywhere(tmp_path: Path) -> None:
    """`:Stet graduate skill ID` on a line the entry is not at (no code action there) still
    offers the server's proposed name (stet.graduate.proposal); for an id the server does not
    know, its refusal is shown and no name is asked for."""
    root = make_workspace(tmp_path / "repo")
    entry_id, proposed = add_skill_entry(root)
    body = f"""
    vim.cmd.edit("src/pay.py")
    out.attached = attached(0)
    vim.api.nvim_win_set_cursor(0, {{ 1, 0 }})
    out.prompts = {{}}
    vim.ui.input = function(opts, on_confirm)
      out.prompts[#out.prompts + 1] = {{ prompt = opts.prompt, default = opts.default }}
      on_confirm(nil) -- cancelled: nothing runs
    end
    vim.cmd("Stet graduate skill {entry_id}")
    vim.wait(10000, function() return #out.prompts > 0 end, 50)
    out.notified_first = vim.deepcopy(out.notifications)
    vim.cmd("Stet graduate skill nosuch")
    vim.wait(10000, function() return #out.notifications > #out.notified_first end, 50)
    settle(300)
"""
    result = run_script(tmp_path, root, body)
    assert result["attached"] is True
    assert result["prompts"] == [
        {"prompt": f"Skill name for entry {entry_id}: ", "default": proposed}
    ], result
    assert not result["notified_first"], result["notified_first"]
    notifications = result["notifications"]
    assert notifications == [{"message": NO_SUCH_ENTRY, "level": 4}], notifications
    statuses = {entry["id"]: entry["status"] for entry in sheet_entries(root)}
    assert statuses[entry_id] == "open"


def test_graduate_skill_with_an_empty_name_takes_the_proposal(tmp_path: Path) -> None:
    """An empty answer to the skill name's prompt sends no `skill`: the server names the skill
    itself, with the name it proposed (docs/editors.md, `:help stet-skill-name`)."""
    root = make_workspace(tmp_path / "repo")
    entry_id, proposed = add_skill_entry(root)
    body = f"""
    vim.cmd.edit("src/pay.py")
    out.attached = attached(0)
    vim.ui.input = function(opts, on_confirm)
      on_confirm("")
    end
    vim.cmd("Stet graduate skill {entry_id}")
    vim.wait(10000, function() return #out.notifications > 0 end, 50)
"""
    result = run_script(tmp_path, root, body)
    assert result["attached"] is True
    relative = f".stet/skills/{proposed}/SKILL.md"
    assert [n["message"] for n in result["notifications"]] == [
        f"stet: entry {entry_id} into the skill {proposed} ({relative}, staged)"
    ]
    assert (root / relative).is_file()


def test_stet_without_a_subcommand_and_a_bad_budget_say_so(tmp_path: Path) -> None:
    """`:Stet` alone names the subcommands (not Vim's E471); `:Stet brief` refuses a budget
    that is not a whole number of tokens, 1 or more, instead of ignoring it; `:Stet note` with
    a kind and no text refuses (it added a note whose text was the kind's name)."""
    root = make_workspace(tmp_path / "repo")
    body = """
    out.errors = {}
    for _, command in ipairs({ "Stet", "Stet brief abc", "Stet brief 0", "Stet brief -5", "Stet brief 1.5", "Stet note convention  " }) do
      local ok, err = pcall(vim.cmd, command)
      if not ok then
        out.errors[#out.errors + 1] = tostring(err)
      end
    end
"""
    result = run_script(tmp_path, root, body)
    assert result["errors"] == [], result["errors"]
    names = plugin_names(tmp_path)["subcommands"]
    usage = "stet: usage: :Stet brief [budget] (a budget is a whole number of tokens, 1 or more)"
    assert result["notifications"] == [
        {"message": f"stet: a subcommand is needed; one of {', '.join(names)}", "level": 4},
        *[{"message": usage, "level": 4}] * 4,
        {
            "message": "stet: usage: :Stet note convention {text} (the note's text after its kind)",
            "level": 4,
        },
    ], result["notifications"]
    assert stet(root, "note", "list").stdout == ""


SESSION_WORDS = """
vim.opt.runtimepath:prepend(vim.env.STET_PLUGIN)
vim.g.stet_enable = false
local stet = require("stet")
local row = { harness = "claude-code", started = "2026-03-01T09:00:02Z", first_prompt = "Fix it",
  size = 2048, imported = false, committed = { "2026-03-01-main-0123456789ab" } }
local result = { events = 5, changed = true, folder = ".stet/cache/trajectories/k",
  redaction = {}, problems = {}, continues = { "2026-03-01-main-0123456789ab" } }
local before = vim.tbl_extend("force", result, { continues = {} })
io.write(vim.json.encode({
  committed = stet.session_label(row),
  imported = stet.session_label(vim.tbl_extend("force", row, { imported = true })),
  continues = stet.import_message(result),
  whole = stet.import_message(before),
}))
"""


def test_a_committed_session_and_an_import_that_went_on_after_a_capstone_say_so(
    tmp_path: Path,
) -> None:
    """`stet trajectory sessions`' `committed` and an import's `continues`, as the picker and
    the message after an import show them."""
    words = lua_json(tmp_path, SESSION_WORDS)
    assert words["committed"].endswith(", committed)")
    assert words["imported"].endswith(", imported)")
    assert words["continues"].endswith("; what came after 2026-03-01-main-0123456789ab")
    assert "came after" not in words["whole"]


CAPSTONE_WORDS = """
vim.opt.runtimepath:prepend(vim.env.STET_PLUGIN)
vim.g.stet_enable = false
local stet = require("stet")
local held = { trajectory = "2026-03-01-main-0123456789ab", changed = false, dry_run = false,
  commit = vim.NIL, archived = ".stet/cache/trajectories/archive/2026-03-01-main-0123456789ab" }
io.write(vim.json.encode({
  archived = stet.capstone_lines(held),
  kept = stet.capstone_lines(vim.tbl_extend("force", held, { archived = vim.NIL })),
}))
"""


def test_a_capstone_of_a_trajectory_head_holds_says_it_archived_the_working_one(
    tmp_path: Path,
) -> None:
    """A capstone that found its trajectory committed already (an earlier one stopped before
    archiving) reads as `stet capstone` prints it: nothing to commit, and where the working
    trajectory went."""
    lines = lua_json(tmp_path, CAPSTONE_WORDS)
    assert lines["archived"] == [
        "trajectory 2026-03-01-main-0123456789ab is already committed; nothing to commit",
        "working trajectory archived to "
        ".stet/cache/trajectories/archive/2026-03-01-main-0123456789ab",
    ]
    assert lines["kept"] == lines["archived"][:1]


def open_sheet() -> str:
    """Lua that opens the style sheet from a source file (`sheet`, and `out.attached`,
    `out.sheet_attached`), with `has(text)` (the buffer holds it) and `add(text)` (the CLI adds
    an agent's note; its exit code)."""
    cli = json.dumps(stet_command())
    return f"""
    vim.cmd.edit("src/pay.py")
    out.attached = attached(0)
    vim.cmd("Stet sheet")
    vim.wait(10000, function() return vim.api.nvim_buf_get_name(0):find("sheets", 1, true) ~= nil end, 50)
    local sheet = vim.api.nvim_get_current_buf()
    out.sheet_attached = attached(sheet)
    local function has(text)
      return table.concat(vim.api.nvim_buf_get_lines(sheet, 0, -1, false), "\\n"):find(text, 1, true) ~= nil
    end
    local function add(text)
      local argv = vim.list_extend(vim.json.decode({json.dumps(cli)}), {{ "note", "add", text, "--author", "agent" }})
      return vim.system(argv, {{ text = true }}):wait(30000).code
    end
"""


def test_open_style_sheet_shows_what_commands_and_the_cli_wrote(tmp_path: Path) -> None:
    """The style sheet open without unsaved changes is read again when the server or the
    `stet` CLI wrote it (Neovim checks files only on focus or :checktime): an agent's note
    shows in the buffer, and an entry discarded from its line says so there, with its lenses
    gone; the buffer stays unmodified."""
    root = make_workspace(tmp_path / "repo")
    entry_id = add_note(root, "first note text", "--kind", "convention")
    body = f"""
{open_sheet()}
    out.cli = add("an agent's note")
    out.agent_note_shown = vim.wait(10000, function() return has("an agent's note") end, 50)
    for index, line in ipairs(vim.api.nvim_buf_get_lines(sheet, 0, -1, false)) do
      if line:find("first note text", 1, true) then
        vim.api.nvim_win_set_cursor(0, {{ index, 0 }})
      end
    end
    vim.cmd("Stet graduate discard")
    out.discarded_shown = vim.wait(10000, function() return has("id={entry_id} author=human status=discarded") end, 50)
    settle(500)
    local line = vim.api.nvim_win_get_cursor(0)[1] - 1
    vim.lsp.codelens.refresh({{ bufnr = sheet }})
    settle(500)
    out.lenses_on_line = #vim.tbl_filter(function(lens) return lens.range.start.line == line end, vim.lsp.codelens.get(sheet))
    out.modified = vim.bo[sheet].modified
"""
    result = run_script(tmp_path, root, body)
    assert result["attached"] is True and result["sheet_attached"] is True
    assert result["cli"] == 0
    assert result["agent_note_shown"] is True
    assert result["discarded_shown"] is True
    assert result["lenses_on_line"] == 0
    assert result["modified"] is False
    assert [n["message"] for n in result["notifications"]] == [f"stet: entry {entry_id} discarded"]


def test_a_style_sheet_written_on_disk_is_read_again_or_kept_merged(tmp_path: Path) -> None:
    """When Neovim checks the sheet's file after the CLI wrote it: without unsaved changes it
    is read again ('autoread' off too: the plugin decides for Stet's own file); with them the
    buffer is kept, the server having merged the agent's entry into it (Neovim offered W12's
    "Load File", which drops the unsaved lines, seen in a terminal), and saving it asks
    nothing while the file holds what was merged: by content, not by the file's time and
    size, which a write landing while the merge was on its way to Neovim would have had."""
    root = make_workspace(tmp_path / "repo")
    add_note(root, "first note text", "--kind", "convention")
    add_note(root, "a named target's note", "--target", "pr-42")
    other = next((root / ".stet/cache/sheets").glob("named--pr-42--*.md"))
    body = f"""
    vim.o.autoread = false
{open_sheet()}
    out.first = add("an agent's first note")
    settle(500)
    vim.cmd.checktime(sheet)
    out.read_again = vim.wait(5000, function() return has("an agent's first note") end, 50)
    out.clean = not vim.bo[sheet].modified
    vim.api.nvim_buf_set_lines(sheet, -1, -1, false, {{ "- typed, not saved yet" }})
    out.second = add("an agent's second note")
    out.merged = vim.wait(10000, function() return has("an agent's second note") end, 50)
    vim.cmd.checktime(sheet)
    settle(300)
    out.kept = has("typed, not saved yet") and has("an agent's second note")
    out.modified = vim.bo[sheet].modified
    out.merges_into_current = require("stet").merges_into(sheet)
    -- Saved without Neovim's "changed since reading it" question (it would hold the script).
    out.saved = pcall(vim.cmd.write)
    out.saved_clean = not vim.bo[sheet].modified
    out.on_disk = table.concat(vim.fn.readfile(vim.api.nvim_buf_get_name(sheet)), "\\n")
    -- Changed since the merge to a text of the same size, at the same time: told by content.
    local name = vim.api.nvim_buf_get_name(sheet)
    local when = os.time() + 100
    vim.api.nvim_buf_set_lines(sheet, -1, -1, false, {{ "- typed once more" }})
    local by_hand = vim.fn.readfile(name)
    by_hand[#by_hand + 1] = "- put on disk by hand"
    vim.fn.writefile(by_hand, name)
    vim.uv.fs_utime(name, when, when)
    out.merged_by_hand = vim.wait(10000, function() return has("put on disk by hand") end, 50)
    settle(300)
    by_hand[#by_hand] = "- PUT on disk by hand"
    vim.fn.writefile(by_hand, name)
    vim.uv.fs_utime(name, when, when)
    vim.api.nvim_feedkeys("n", "t", false)
    pcall(vim.cmd.write)
    out.same_stamp_asked = vim.bo[sheet].modified
      and table.concat(vim.fn.readfile(name), "\\n"):find("PUT on disk", 1, true) ~= nil
    -- A file changed since the server's last merge keeps the question: answered no here.
    vim.api.nvim_buf_set_lines(sheet, -1, -1, false, {{ "- typed again" }})
    local lines = vim.fn.readfile(vim.api.nvim_buf_get_name(sheet))
    lines[#lines + 1] = "- written on disk, not merged yet"
    vim.fn.writefile(lines, vim.api.nvim_buf_get_name(sheet))
    vim.api.nvim_feedkeys("n", "t", false)
    pcall(vim.cmd.write)
    local disk = table.concat(vim.fn.readfile(vim.api.nvim_buf_get_name(sheet)), "\\n")
    out.asked = vim.bo[sheet].modified and disk:find("not merged yet", 1, true) ~= nil
    vim.cmd.edit({json.dumps(str(other))})
    local named = vim.api.nvim_get_current_buf()
    out.named_attached = attached(named)
    out.told = vim.wait(10000, function()
      return #vim.tbl_filter(function(d) return d.code == "other-target" end, vim.diagnostic.get(named)) > 0
    end, 50)
    out.merges_into_named = require("stet").merges_into(named)
"""
    result = run_script(tmp_path, root, body)
    assert result["attached"] is True and result["sheet_attached"] is True
    assert (result["first"], result["second"]) == (0, 0)
    assert result["read_again"] is True and result["clean"] is True
    assert result["merged"] is True and result["kept"] is True and result["modified"] is True
    assert result["saved"] is True and result["saved_clean"] is True
    assert "typed, not saved yet" in result["on_disk"]
    assert "an agent's second note" in result["on_disk"]
    assert result["asked"] is True
    assert result["merged_by_hand"] is True and result["same_stamp_asked"] is True
    # Another target's sheet gets nothing merged in: Neovim's own W12 question is kept for it.
    assert result["merges_into_current"] is True
    assert result["named_attached"] is True and result["told"] is True
    assert result["merges_into_named"] is False


def test_setup_and_a_cmd_of_the_wrong_type_say_so(tmp_path: Path) -> None:
    """`require("stet").setup()` reports an unknown option or one of the wrong type (no Lua
    error, the rest applied); a `cmd` that is not a list (`cmd = "stet-lsp"`) is said once
    when a repository's file opens (not an error from Neovim's rpc.lua for a file without a
    filetype, nor silence for the others), by each command and by :checkhealth stet."""
    root = make_workspace(tmp_path / "repo", files={"a.py": "x = 1\n", "NOTES": "n\n"})
    body = """
    vim.o.columns = 200  -- wide enough for each message whole
    out.errors = {}
    local stet = require("stet")
    for _, opts in ipairs({
      "x", { codelens = "no" }, { lsp = 5 }, { codelense = false },
      { lsp = { cmd = "stet-lsp", settings = { stet = { brief = { budget = 900 } } } } },
    }) do
      local ok, err = pcall(stet.setup, opts)
      if not ok then
        out.errors[#out.errors + 1] = tostring(err)
      end
    end
    out.budget = vim.lsp.config.stet.settings.stet.brief.budget
    out.codelens = vim.g.stet_codelens == nil
    out.setup_messages = vim.tbl_map(function(n) return { n.message, n.level } end, out.notifications)
    out.notifications = {}
    vim.cmd.edit("a.py")
    out.attached = attached(0)
    vim.lsp.config("stet", { cmd = "stet-lsp" })
    for _, name in ipairs({ "NOTES", "README.md" }) do
      vim.cmd.edit(name)
      settle(500)
    end
    vim.cmd("Stet list")
    vim.cmd("checkhealth stet")
    out.health = vim.tbl_filter(function(line)
      return line:find("ERROR", 1, true) ~= nil
    end, vim.api.nvim_buf_get_lines(0, 0, -1, false))
"""
    result = run_script(tmp_path, root, body)
    assert result["errors"] == [], result["errors"]
    assert result["budget"] == 900 and result["codelens"] is True
    assert result["attached"] is True
    assert result["setup_messages"] == [
        ['stet: setup() takes a table of options, not "x"', 3],
        ['stet: setup(): `codelens` must be true or false, not "no"', 3],
        ['stet: setup(): `lsp` must be a table for vim.lsp.config("stet", …), not 5', 3],
        ['stet: setup(): unknown option "codelense" (the options are codelens and lsp)', 3],
        [
            'stet: setup(): `lsp.cmd` must be a list of strings such as { "stet-lsp" } '
            '(or a function), not "stet-lsp"',
            3,
        ],
    ]
    problem = (
        '`cmd` of vim.lsp.config.stet must be a list of strings such as { "stet-lsp" } '
        '(or a function), not "stet-lsp"'
    )
    assert [n["message"] for n in result["notifications"]] == [
        f"stet: {problem}, so the language server cannot start; see :checkhealth stet",
        "stet: the stet language server is not attached to this buffer: "
        f"{problem} (see :checkhealth stet)",
    ]
    assert result["health"] == [
        '- ❌ ERROR `cmd` must be a list of strings such as { "stet-lsp" }, not "stet-lsp"'
    ]


def test_brief_shown_again_replaces_the_one_shown_before(tmp_path: Path) -> None:
    """`:Stet brief` run again (after a note was added) shows the new brief in the brief's
    buffer and window, not in another split beside the old brief under no name."""
    root = make_workspace(tmp_path / "repo")
    add_note(root, "first note text", "--kind", "convention")
    body = """
    vim.cmd.edit("src/pay.py")
    out.attached = attached(0)
    local function brief_shown()
      return vim.wait(10000, function() return vim.bo.filetype == "markdown" end, 50)
    end
    vim.cmd("Stet brief")
    out.first_shown = brief_shown()
    out.first = vim.api.nvim_get_current_buf()
    vim.cmd("wincmd p")
    vim.cmd("Stet note the second note")
    vim.wait(10000, function() return #out.notifications > 0 end, 50)
    vim.cmd("Stet brief")
    vim.wait(10000, function()
      return table.concat(vim.api.nvim_buf_get_lines(out.first, 0, -1, false), "\\n"):find("the second note", 1, true) ~= nil
    end, 50)
    out.current = vim.api.nvim_get_current_buf()
    out.windows = #vim.api.nvim_tabpage_list_wins(0)
    out.names = vim.tbl_map(vim.api.nvim_buf_get_name, vim.api.nvim_list_bufs())
    out.text = table.concat(vim.api.nvim_buf_get_lines(out.first, 0, -1, false), "\\n")
"""
    result = run_script(tmp_path, root, body)
    assert result["attached"] is True and result["first_shown"] is True
    assert result["current"] == result["first"]
    assert result["windows"] == 2
    assert result["names"] == [str(root / "src" / "pay.py"), "stet://brief"]
    assert "the second note" in result["text"] and "first note text" in result["text"]


# Lua: what the message area shows, in out.shown (ext_messages; `ns` to detach).
SHOWN_MESSAGES = """
out.shown = {}
local ns = vim.api.nvim_create_namespace("stet-test-messages")
vim.ui_attach(ns, { ext_messages = true }, function(event, _, content)
  if event == "msg_show" then
    local text = ""
    for _, chunk in ipairs(content) do
      text = text .. chunk[2]
    end
    out.shown[#out.shown + 1] = text
  end
end)
"""


def test_the_servers_progress_is_shown_in_the_message_area(tmp_path: Path) -> None:
    """The server reports work-done progress for work that takes it over a second (an import,
    a capstone); Neovim 0.11 only stores it: the plugin shows it in the message area (not the
    history), a report under its begin's title (Neovim's handler gives it that). The progress
    is given to Neovim's own handler, as the server's messages are: whether a real import
    takes over a second depends on the machine."""
    root = make_workspace(tmp_path / "repo")
    body = (
        """
    vim.cmd.edit("src/pay.py")
    out.attached = attached(0)
    local client = vim.lsp.get_clients({ bufnr = 0, name = "stet" })[1]
"""
        + SHOWN_MESSAGES
        + """
    local ctx = { client_id = client.id, method = "$/progress" }
    local title = "Stet: importing an agent session"
    for _, value in ipairs({
      { kind = "begin", title = title, message = "redacting" },
      { kind = "report", message = "composing", percentage = 80 },
      { kind = "end" },
    }) do
      vim.lsp.handlers["$/progress"](nil, { token = "import-1", value = value }, ctx)
    end
    vim.wait(2000, function() return #out.shown >= 2 end, 20)
    vim.ui_detach(ns)
    out.history = vim.api.nvim_exec2("messages", { output = true }).output
"""
    )
    result = run_script(tmp_path, root, body)
    assert result["attached"] is True
    assert result["shown"][:2] == [
        "Stet: importing an agent session: redacting",
        "Stet: importing an agent session: composing (80%)",
    ], result["shown"]
    assert result["history"] == ""


def test_import_without_sessions_names_every_harness_looked_in(tmp_path: Path) -> None:
    """`:Stet import` in a repository no agent worked in says which harnesses' sessions it
    looked for: every one the server finds sessions of, Qwen Code included."""
    root = make_workspace(tmp_path / "repo")
    body = """
    vim.cmd.edit("src/pay.py")
    out.attached = attached(0)
    vim.cmd("Stet import")
    vim.wait(10000, function() return #out.notifications > 0 end, 50)
"""
    result = run_script(tmp_path, root, body)
    assert result["attached"] is True
    assert [n["message"] for n in result["notifications"]] == [
        "stet: no agent sessions found for this repository (Claude Code, Codex, Gemini CLI, "
        "Qwen Code, aider, OpenHands V1); :Stet import PATH imports a transcript file"
    ]


def test_commands_run_from_the_quickfix_list_and_the_brief(tmp_path: Path) -> None:
    """`:Stet steps` and `:Stet brief` leave the cursor in the list or the brief they show;
    a command about the repository run from there works from the file's window the cursor
    came from (not "not attached: it is not a file"): `:Stet steps` again, `:Stet trajectory`
    (the narration opens in the file's window, the quickfix window keeps the list) and
    `:Stet brief 300`."""
    root = make_workspace(tmp_path / "repo")
    session = claude_session(root, tmp_path / "home")
    imported = stet(root, "trajectory", "import", str(session), "--json")
    assert imported.returncode == 0, imported.stderr
    body = """
    vim.cmd.edit("src/pay.py")
    out.attached = attached(0)
    local file_window = vim.api.nvim_get_current_win()
    local function steps_listed()
      return vim.wait(10000, function() return #vim.fn.getqflist() > 0 end, 50)
    end
    vim.cmd("Stet steps")
    out.listed = steps_listed()
    out.in_quickfix = vim.bo.buftype == "quickfix"
    vim.fn.setqflist({}, "r", { items = {} })
    vim.cmd("Stet steps")
    out.listed_again = steps_listed()
    out.quickfix_window = vim.api.nvim_get_current_win()
    vim.cmd("Stet trajectory")
    vim.wait(10000, function()
      return vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(file_window)):find("narration.md", 1, true) ~= nil
    end, 50)
    out.narration_window = vim.api.nvim_get_current_win() == file_window
    out.quickfix_kept = vim.bo[vim.api.nvim_win_get_buf(out.quickfix_window)].buftype == "quickfix"
    vim.cmd("Stet brief")
    vim.wait(10000, function() return vim.api.nvim_buf_get_name(0) == "stet://brief" end, 50)
    local brief = vim.api.nvim_get_current_buf()
    vim.api.nvim_buf_call(brief, function() vim.bo.modifiable = true; vim.api.nvim_buf_set_lines(brief, 0, -1, false, {}) end)
    vim.cmd("Stet brief 300")
    out.brief_again = vim.wait(10000, function()
      return vim.api.nvim_buf_is_valid(brief) and #table.concat(vim.api.nvim_buf_get_lines(brief, 0, -1, false)) > 0
    end, 50)
    settle(300)
"""
    result = run_script(tmp_path, root, body)
    assert result["attached"] is True
    assert result["listed"] is True and result["in_quickfix"] is True
    assert result["notifications"] == [], result["notifications"]
    assert result["listed_again"] is True
    assert result["narration_window"] is True and result["quickfix_kept"] is True
    assert result["brief_again"] is True


def test_a_steps_verdict_from_its_code_action_says_so(tmp_path: Path) -> None:
    """The code actions "Mark step N as wrong" / "... as clever" on a line of events.jsonl say
    what they recorded, as `:Stet mark` does ("step N marked wrong"), instead of nothing."""
    root = make_workspace(tmp_path / "repo")
    session = claude_session(root, tmp_path / "home")
    imported = stet(root, "trajectory", "import", str(session), "--json")
    assert imported.returncode == 0, imported.stderr
    trajectory = working_trajectory(root)
    events = root / trajectory["path"] / "events.jsonl"
    body = f"""
    vim.cmd.edit({json.dumps(str(events))})
    out.attached = attached(0)
    vim.api.nvim_win_set_cursor(0, {{ {MARK_STEP}, 0 }})
    vim.lsp.buf.code_action({{
      apply = true,
      filter = function(action) return action.title == "Mark step {MARK_STEP} as wrong" end,
    }})
    vim.wait(10000, function() return #out.notifications > 0 end, 50)
    settle(300)
"""
    result = run_script(tmp_path, root, body)
    assert result["attached"] is True
    feedback = root / ".stet" / "feedback" / f"{trajectory['id']}.jsonl"
    verdicts = [json.loads(line) for line in feedback.read_text(encoding="utf-8").splitlines()]
    assert [(v["step"], v["verdict"]) for v in verdicts] == [(MARK_STEP, "wrong")]
    assert result["notifications"] == [
        {"message": f"stet: step {MARK_STEP} marked wrong", "level": 2}
    ], result["notifications"]


CAPSTONE_OF_A_TARGET = """
vim.cmd.edit("src/pay.py")
out.attached = attached(0)
out.server = {}
require("stet").server_message = function(params)
  out.server[#out.server + 1] = params.message
end
-- Completion waits a second for the server: once it has listed the trajectories, it is quick.
local client = vim.lsp.get_clients({ bufnr = 0, name = "stet" })[1]
client:request_sync("workspace/executeCommand", { command = "stet.trajectory.list", arguments = { {} } }, 20000, 0)
out.options = vim.fn.getcompletion("Stet capstone --", "cmdline")
out.targets = vim.fn.getcompletion("Stet capstone --target ", "cmdline")
out.after_dry_run = vim.fn.getcompletion("Stet! capstone --dry-run --target t", "cmdline")
out.after_message = vim.fn.getcompletion("Stet capstone --target topic a --", "cmdline")
vim.cmd("Stet capstone --target nosuch")
vim.wait(10000, function() return #out.notifications > 0 end, 50)
out.refused = out.notifications
out.notifications = {}
vim.cmd("Stet! capstone --target topic")
vim.wait(10000, function() return vim.api.nvim_buf_get_name(0) == "stet://capstone" end, 50)
out.dry_run = vim.api.nvim_buf_get_lines(0, 0, 1, false)[1]
vim.cmd("close")
vim.cmd("Stet capstone --target topic Commit what the topic branch left")
vim.wait(10000, function() return #out.server > 0 or #out.notifications > 0 end, 50)
settle(300)
out.targets_after = vim.fn.getcompletion("Stet capstone --target ", "cmdline")
"""


def test_capstone_of_a_deleted_branch_s_trajectory_by_its_name(tmp_path: Path) -> None:
    """`:Stet capstone --target NAME` commits the working trajectory a deleted branch left, as
    `stet capstone --target NAME` does; <Tab> after `--target` offers the targets left so
    (none once committed); a name with none is the server's refusal, said as it words it."""
    root = make_workspace(tmp_path / "repo")
    left_by_deleted_branches(root, tmp_path / "home", ["topic"])

    result = run_script(tmp_path, root, CAPSTONE_OF_A_TARGET)

    assert result["attached"] is True
    assert result["options"] == ["--dry-run", "--target"]
    assert result["targets"] == ["topic"] and result["after_dry_run"] == ["topic"]
    assert result["after_message"] == []
    [refused] = result["refused"]
    assert refused["level"] == 4 and "nosuch has no working trajectory" in refused["message"]
    assert result["dry_run"].startswith("would commit trajectory "), result["dry_run"]
    assert result["notifications"] == [], result["notifications"]
    [said] = result["server"]
    assert " committed as " in said and said.endswith(" on main"), said
    repo = pygit2.Repository(str(root))
    head = repo.head.peel(pygit2.Commit)
    assert head.message.startswith("Commit what the topic branch left\n"), head.message
    rows = json.loads(stet(root, "trajectory", "list", "--json").stdout)["trajectories"]
    assert [(row["working"], row["orphaned"]) for row in rows] == [(False, False)]
    assert result["targets_after"] == []


def test_marking_a_step_in_a_trajectory_the_capstone_committed_says_so(tmp_path: Path) -> None:
    """The working trajectory's narration open while `:Stet capstone` commits it: the
    capstone sets the folder aside, and `:Stet mark` on a step of the buffer then says where
    the trajectory went, not that narration.md "is not a file of a trajectory"."""
    import pygit2

    root = make_workspace(tmp_path / "repo")
    config = pygit2.Repository(str(root)).config
    config["user.name"] = "Stet Reviewer"
    config["user.email"] = "reviewer@stet.invalid"
    session = claude_session(root, tmp_path / "home")
    imported = stet(root, "trajectory", "import", str(session), "--json")
    assert imported.returncode == 0, imported.stderr
    heading = f'<a id="step-{MARK_STEP}"></a>**Step {MARK_STEP} '
    body = f"""
    vim.cmd.edit("src/pay.py")
    out.attached = attached(0)
    vim.cmd("Stet trajectory")
    vim.wait(10000, function() return vim.api.nvim_buf_get_name(0):find("narration.md", 1, true) ~= nil end, 50)
    for index, line in ipairs(vim.api.nvim_buf_get_lines(0, 0, -1, false)) do
      if vim.startswith(line, {json.dumps(heading)}) then
        vim.api.nvim_win_set_cursor(0, {{ index, 0 }})
      end
    end
    local narration = vim.api.nvim_buf_get_name(0)
    vim.cmd("Stet capstone")
    out.committed = vim.wait(20000, function() return vim.fn.filereadable(narration) == 0 end, 50)
    settle(500)
    vim.cmd("Stet mark wrong")
    vim.wait(10000, function() return #out.notifications > 0 end, 50)
    settle(300)
"""
    result = run_script(tmp_path, root, body)
    assert result["attached"] is True
    assert result["committed"] is True
    assert pygit2.Repository(str(root)).head.peel().message.startswith("Trajectory: ")
    [committed] = [path.name for path in (root / ".stet" / "trajectories").iterdir()]
    assert result["notifications"] == [
        {
            "message": "stet: narration.md is no longer there: a capstone committed its "
            f"trajectory as {committed}; mark the step in "
            f".stet/trajectories/{committed}/narration.md",
            "level": 4,
        }
    ], result["notifications"]
    assert not (root / ".stet" / "feedback").exists()


def test_a_command_run_while_the_server_starts_waits_for_it(tmp_path: Path) -> None:
    """A command run right after a file opened, while the server still answers `initialize`
    (about a second), runs once the server has started: not dropped with "the server did not
    start or has stopped", which was wrong and asked the user to do it again. Each kind of
    command: one through executeCommand (`:Stet note`), one that looks at the cursor line
    first (`:Stet discard`), `:Stet graduate` and `:Stet mark`."""
    root = make_workspace(tmp_path / "repo")
    entry_id = add_note(root, "graduate me", "--kind", "convention")
    body = f"""
    vim.cmd.edit("src/pay.py")
    out.starting = vim.wait(10000, function()
      return #vim.lsp.get_clients({{ bufnr = 0, name = "stet", _uninitialized = true }}) > 0
    end, 1)
    out.initialized_then = #vim.lsp.get_clients({{ bufnr = 0, name = "stet" }}) > 0
    vim.cmd("Stet note an early note")
    vim.cmd("Stet discard nosuch")
    vim.cmd("Stet graduate trajectory {entry_id}")
    vim.cmd("Stet mark wrong")
    vim.wait(20000, function() return #out.notifications >= 4 end, 50)
    settle(300)
"""
    result = run_script(tmp_path, root, body)
    assert result["starting"] is True and result["initialized_then"] is False
    messages = sorted(n["message"] for n in result["notifications"])
    [early] = [entry for entry in sheet_entries(root) if entry["text"] == "an early note"]
    assert early["anchor"]["path"] == "src/pay.py"
    assert messages == sorted(
        [
            f"stet: note {early['id']} added",
            NO_SUCH_ENTRY,
            f"stet: entry {entry_id} into the trajectory {working_trajectory(root)['id']}",
            "stet: open a trajectory (:Stet trajectory) and put the cursor on a step first",
        ]
    ), messages


def test_a_command_run_in_the_same_tick_as_edit_waits_for_the_client(tmp_path: Path) -> None:
    """`:edit file | Stet note …` (or a script doing both at once): Neovim starts the client a
    tick after the buffer is read (the configuration's root_dir answers through
    vim.schedule), so the command found no client at all and said "not attached". It waits
    for the client to appear, then for it to start, as a command run while it starts does;
    a file outside any repository, where no client comes, is still told at once."""
    root = make_workspace(tmp_path / "repo")
    outside = tmp_path / "outside.txt"
    outside.write_text("x\n", encoding="utf-8")
    body = f"""
    vim.cmd("edit src/pay.py | Stet note a same-tick note")
    vim.wait(20000, function() return #out.notifications >= 1 end, 50)
    vim.cmd("edit {outside} | Stet note nowhere")
    vim.wait(20000, function() return #out.notifications >= 2 end, 50)
    settle(300)
"""
    result = run_script(tmp_path, root, body)
    [entry] = [entry for entry in sheet_entries(root) if entry["text"] == "a same-tick note"]
    assert entry["anchor"]["path"] == "src/pay.py"
    assert [n["message"] for n in result["notifications"]] == [
        f"stet: note {entry['id']} added",
        "stet: the stet language server is not attached to this buffer: "
        "its file is not inside a git repository",
    ], result["notifications"]


def test_setup_leaves_out_lsp_fields_that_would_keep_the_server_from_starting(
    tmp_path: Path,
) -> None:
    """`setup({ lsp = … })` with a field of the wrong type that Neovim checks only when it
    starts the server (`filetypes = "python"`, `settings = "x"`, `handlers = 5`, a `cmd`
    holding a number) said nothing: the server never started, Neovim wrote why in its log
    only or showed an error from its own client.lua. Each is reported and left out, the
    others applied, and the server starts; `filetypes` of the wrong type given to
    vim.lsp.config directly is said when a repository's file opens and by :checkhealth."""
    root = make_workspace(tmp_path / "repo")
    body = """
    vim.o.columns = 200  -- wide enough for each message whole
    out.errors = {}
    local stet = require("stet")
    for _, lsp in ipairs({
      { filetypes = "python", settings = { stet = { brief = { budget = 900 } } } },
      { settings = "x" }, { handlers = 5 }, { capabilities = "x" }, { root_dir = 5 },
      { cmd = { "stet-lsp", 5 } },
    }) do
      local ok, err = pcall(stet.setup, { lsp = lsp })
      if not ok then
        out.errors[#out.errors + 1] = tostring(err)
      end
    end
    out.budget = vim.lsp.config.stet.settings.stet.brief.budget
    out.setup_messages = vim.tbl_map(function(n) return n.message end, out.notifications)
    out.notifications = {}
    vim.cmd.edit("src/pay.py")
    out.attached = attached(0)
    vim.lsp.config.stet = vim.tbl_extend("force", vim.lsp.config.stet, { filetypes = "python" })
    vim.cmd.edit("README.md")
    settle(500)
    vim.cmd("checkhealth stet")
    out.health = vim.tbl_filter(function(line)
      return line:find("ERROR", 1, true) ~= nil
    end, vim.api.nvim_buf_get_lines(0, 0, -1, false))
"""
    result = run_script(tmp_path, root, body)
    assert result["errors"] == [], result["errors"]
    assert result["budget"] == 900
    assert result["attached"] is True
    assert result["setup_messages"] == [
        'stet: setup(): `lsp.filetypes` must be a list of strings such as { "python" }, '
        'not "python"',
        'stet: setup(): `lsp.settings` must be a table, not "x"',
        "stet: setup(): `lsp.handlers` must be a table, not 5",
        'stet: setup(): `lsp.capabilities` must be a table, not "x"',
        "stet: setup(): `lsp.root_dir` must be a function or a string, not 5",
        'stet: setup(): `lsp.cmd` must be a list of strings such as { "stet-lsp" } '
        '(or a function), not { "stet-lsp", 5 }',
    ]
    problem = (
        '`filetypes` of vim.lsp.config.stet must be a list of strings such as { "python" }, '
        'not "python"'
    )
    assert [n["message"] for n in result["notifications"]] == [
        f"stet: {problem}, so the language server cannot start; see :checkhealth stet"
    ]
    assert result["health"] == [
        '- ❌ ERROR `filetypes` must be a list of strings, not "python": Neovim starts no '
        "server with it"
    ]


def test_arguments_a_subcommand_does_not_take_and_completion_after_a_modifier(
    tmp_path: Path,
) -> None:
    """`:Stet record al` (a typo of `all`) recorded the note on the cursor line only, and
    `:Stet sheet`, `list`, `resume` and `review` ran whatever followed them: each now says
    what it takes and runs nothing. `<Tab>` after a command modifier (`:vertical Stet `,
    `:silent Stet note c`) completed nothing: the modifier was taken for the command."""
    root = make_workspace(tmp_path / "repo")
    body = """
    vim.cmd.edit("src/pay.py")
    out.attached = attached(0)
    vim.api.nvim_win_set_cursor(0, { 5, 0 })
    for _, command in ipairs({ "Stet record al", "Stet sheet x", "Stet list x", "Stet resume now", "Stet review x" }) do
      vim.cmd(command)
    end
    settle(1500)
    out.buffers = #vim.api.nvim_list_bufs()
    out.margin_kept = vim.api.nvim_buf_get_lines(0, 4, 5, false)[1]
    out.completion = {
      vertical = vim.fn.getcompletion("vertical Stet b", "cmdline"),
      silent = vim.fn.getcompletion("silent! Stet note c", "cmdline"),
      abbreviated = vim.fn.getcompletion("Ste record ", "cmdline"),
      plain = vim.fn.getcompletion("Stet! ca", "cmdline"),
    }
"""
    result = run_script(tmp_path, root, body)
    assert result["attached"] is True
    usages = [
        "record [all] (the note on the cursor line, or all of the buffer's)",
        *(f"{name} (it takes no arguments)" for name in ("sheet", "list", "resume", "review")),
    ]
    assert result["notifications"] == [
        {"message": f"stet: usage: :Stet {usage}", "level": 4} for usage in usages
    ], result["notifications"]
    assert result["buffers"] == 1
    assert "stet:" in result["margin_kept"]
    assert sheet_entries(root) == []
    assert result["completion"] == {
        "vertical": ["brief"],
        "silent": ["convention", "clarification"],
        "abbreviated": ["all"],
        "plain": ["capstone"],
    }, result["completion"]


def test_a_brief_too_small_for_any_entry_says_so(tmp_path: Path) -> None:
    """`:Stet brief 5` on a sheet with entries: no entry, nor the line saying how many were
    left out, fits 5 tokens, so the server's brief is empty; the plugin showed an empty
    buffer and nothing else. It now says the entries were left out and how to see them."""
    root = make_workspace(tmp_path / "repo")
    add_note(root, "first note text", "--kind", "convention")
    add_note(root, "second note text")
    body = """
    vim.cmd.edit("src/pay.py")
    out.attached = attached(0)
    vim.cmd("Stet brief 5")
    vim.wait(10000, function() return #out.notifications > 0 end, 50)
    out.name = vim.api.nvim_buf_get_name(0)
    out.text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\\n")
"""
    result = run_script(tmp_path, root, body)
    assert result["attached"] is True
    assert result["name"] == "stet://brief" and result["text"] == ""
    assert result["notifications"] == [
        {
            "message": "stet: the brief is empty: 2 entries left out to fit 5 tokens; "
            ":Stet brief {budget} with more tokens shows them",
            "level": 3,
        }
    ], result["notifications"]


def test_checkhealth_after_the_server_stopped_says_why_not_where_to_go(tmp_path: Path) -> None:
    """The server gone (killed) under a file of a repository: :checkhealth stet told the user
    to "open a file inside a git repository", which they had; it now says the server did not
    start or has stopped and that :edit starts it again, as the subcommands do. Outside any
    repository it still says to open a file inside one."""
    root = make_workspace(tmp_path / "repo")
    outside = tmp_path / "outside.txt"
    outside.write_text("x\\n", encoding="utf-8")
    body = f"""
    vim.cmd.edit("src/pay.py")
    out.attached = attached(0)
    local children = vim.system({{ "pgrep", "-P", tostring(vim.fn.getpid()) }}, {{ text = true }}):wait().stdout
    for child in children:gmatch("%d+") do
      vim.uv.kill(tonumber(child), "sigkill")
    end
    out.stopped = vim.wait(10000, function() return #vim.lsp.get_clients({{ name = "stet" }}) == 0 end, 50)
    local function health()
      vim.cmd("checkhealth stet")
      local lines = vim.tbl_filter(function(line)
        return line:find("client", 1, true) ~= nil and line:find("^%- ") ~= nil
      end, vim.api.nvim_buf_get_lines(0, 0, -1, false))
      vim.cmd("tabclose")
      return lines
    end
    out.in_repository = health()
    vim.cmd.edit({json.dumps(str(outside))})
    out.outside = health()
"""
    result = run_script(tmp_path, root, body)
    assert result["attached"] is True and result["stopped"] is True
    assert result["in_repository"] == [
        "- ⚠️ WARNING no stet client running: the server did not start or has stopped "
        "(see :LspLog; :edit starts it again)"
    ], result["in_repository"]
    assert result["outside"] == [
        "- no stet client running: its file is not inside a git repository; open a file "
        "inside a git repository (a folder with .git)"
    ], result["outside"]


def test_checkhealth_right_after_the_server_is_told_to_stop(tmp_path: Path) -> None:
    """:checkhealth stet run right after the client was told to stop (vim.lsp.stop_client, a
    restart) said "attached", of a client that answers every request with "the server is
    shut down", as the commands no longer take it for one that is."""
    root = make_workspace(tmp_path / "repo")
    body = """
    vim.cmd.edit("src/pay.py")
    out.attached = attached(0)
    vim.lsp.stop_client(vim.lsp.get_clients({ bufnr = 0, name = "stet" })[1].id)
    vim.cmd("checkhealth stet")
    out.health = vim.tbl_filter(function(line)
      return line:find("client", 1, true) ~= nil and line:find("^%- ") ~= nil
    end, vim.api.nvim_buf_get_lines(0, 0, -1, false))
    vim.cmd("tabclose")
"""
    result = run_script(tmp_path, root, body)
    assert result["attached"] is True
    [line] = result["health"]
    assert line.startswith("- ⚠️ WARNING no stet client running: "), result["health"]


def test_checkhealth_with_another_repository_s_server_running(tmp_path: Path) -> None:
    """Two repositories open, the first one's server gone: :checkhealth stet (and a command) in
    the first one's file said "the server has not attached it yet", as if it were coming,
    because the second one's client was running. It says this repository's server did not
    start or has stopped."""
    first = make_workspace(tmp_path / "first")
    second = make_workspace(tmp_path / "second")
    body = f"""
    vim.cmd.edit("src/pay.py")
    local first_buffer = vim.api.nvim_get_current_buf()
    out.first = attached(0)
    vim.cmd.edit({json.dumps(str(second / "src" / "pay.py"))})
    out.second = attached(0)
    vim.lsp.get_clients({{ bufnr = first_buffer, name = "stet" }})[1]:stop(true)
    out.stopped = vim.wait(10000, function() return #vim.lsp.get_clients({{ name = "stet" }}) == 1 end, 50)
    vim.api.nvim_set_current_buf(first_buffer)
    vim.cmd("checkhealth stet")
    out.health = vim.tbl_filter(function(line)
      return line:find("client", 1, true) ~= nil and line:find("^%- ") ~= nil
    end, vim.api.nvim_buf_get_lines(0, 0, -1, false))
    vim.cmd("tabclose")
    out.why = require("stet").why_not_attached(first_buffer)
"""
    result = run_script(tmp_path, first, body)
    assert result["first"] is True and result["second"] is True and result["stopped"] is True
    assert result["health"] == [
        "- ⚠️ WARNING 1 stet client(s) running, none attached to this buffer: the server did "
        "not start or has stopped (see :LspLog; :edit starts it again)"
    ], result["health"]
    assert result["why"].startswith("the server did not start or has stopped"), result["why"]


def test_a_file_opened_right_after_the_sheet_shows_is_not_left_for_the_sheet(
    tmp_path: Path,
) -> None:
    """`:Stet sheet`, `:Stet trajectory` and `:Stet review` are shown by the server's
    window/showDocument before the command's answer arrives; the plugin then opened the file
    again whenever the current buffer was another, so a file opened in between (a mapping
    going on with `:edit`, `:wincmd p`) was left for the sheet again. The answer's `shown`
    now decides: the plugin opens the file only when the server could not show it."""
    root = make_workspace(tmp_path / "repo")
    add_note(root, "a note to review", "--kind", "convention")
    session = claude_session(root, tmp_path / "home")
    imported = stet(root, "trajectory", "import", str(session), "--json")
    assert imported.returncode == 0, imported.stderr
    body = """
    vim.cmd.edit("src/pay.py")
    out.attached = attached(0)
    out.after = {}
    for _, case in ipairs({ { "Stet sheet", "sheets" }, { "Stet trajectory", "narration.md" }, { "Stet review", "review.md" } }) do
      vim.cmd(case[1])
      local shown = vim.wait(10000, function() return vim.api.nvim_buf_get_name(0):find(case[2], 1, true) ~= nil end, 1)
      vim.cmd.edit("README.md")
      settle(1000)
      out.after[#out.after + 1] = { case[1], shown, vim.fs.basename(vim.api.nvim_buf_get_name(0)) }
    end
"""
    result = run_script(tmp_path, root, body)
    assert result["attached"] is True
    assert result["after"] == [
        ["Stet sheet", True, "README.md"],
        ["Stet trajectory", True, "README.md"],
        ["Stet review", True, "README.md"],
    ], result["after"]


RECORDED_WORDS = """
vim.opt.runtimepath:prepend(vim.env.STET_PLUGIN)
vim.g.stet_enable = false
local stet = require("stet")
local function recorded(count)
  local entries = {}
  for index = 1, count do
    entries[index] = { id = ("id%04d"):format(index) }
  end
  return stet.recorded_message({ recorded = entries, removed = true })
end
io.write(vim.json.encode({ one = recorded(1), six = recorded(6), many = recorded(530) }))
"""


def test_recording_many_margin_notes_names_a_few_ids(tmp_path: Path) -> None:
    """`:Stet record all` on a file of 530 margin notes said so with every id, a message of
    4 KB that filled the screen behind a "Press ENTER" prompt: it names the first five and
    how many more."""
    words = lua_json(tmp_path, RECORDED_WORDS)
    assert words["one"] == "margin note recorded as entry id0001"
    ids = ", ".join(f"id{index:04d}" for index in range(1, 7))
    assert words["six"] == f"6 margin notes recorded as entries {ids}"
    first = ", ".join(f"id{index:04d}" for index in range(1, 6))
    assert words["many"] == (
        f"530 margin notes recorded as entries {first} and 525 more (:Stet list shows them)"
    )


def test_a_buffer_with_unsaved_changes_and_nohidden_keeps_its_window(tmp_path: Path) -> None:
    """With 'hidden' off and unsaved changes in the current buffer, `:Stet trajectory`,
    `:Stet sheet` and `:Stet review` failed with a Lua stack trace (E37, "No write since last
    change") from Neovim's window/showDocument and the plugin's own `:edit`: each opens what
    it shows in a new split, and the buffer keeps its changes."""
    root = make_workspace(tmp_path / "repo")
    session = claude_session(root, tmp_path / "home")
    imported = stet(root, "trajectory", "import", str(session), "--json")
    assert imported.returncode == 0, imported.stderr
    body = """
    vim.o.hidden = false
    vim.cmd.edit("src/pay.py")
    out.attached = attached(0)
    local source = vim.api.nvim_get_current_buf()
    vim.api.nvim_buf_set_lines(source, 0, 0, false, { "# not saved yet" })
    out.shown = {}
    for _, command in ipairs({ "Stet trajectory", "Stet sheet", "Stet review" }) do
      vim.cmd("buffer " .. source .. " | only")
      vim.cmd(command)
      vim.wait(10000, function() return vim.api.nvim_get_current_buf() ~= source end, 50)
      settle(300)
      out.shown[#out.shown + 1] = {
        name = vim.fs.basename(vim.api.nvim_buf_get_name(0)),
        windows = #vim.api.nvim_tabpage_list_wins(0),
        source_shown = #vim.fn.win_findbuf(source),
      }
    end
    out.modified = vim.bo[source].modified
    out.first_line = vim.api.nvim_buf_get_lines(source, 0, 1, false)[1]
    out.errmsg = vim.v.errmsg
    out.messages = vim.api.nvim_exec2("messages", { output = true }).output
"""
    result = run_script(tmp_path, root, body)
    assert result["attached"] is True
    names = [shown["name"] for shown in result["shown"]]
    assert names[0] == "narration.md", result["shown"]
    assert names[1].endswith(".md") and names[2].endswith(".review.md"), result["shown"]
    assert [(s["windows"], s["source_shown"]) for s in result["shown"]] == [(2, 1)] * 3
    assert result["modified"] is True and result["first_line"] == "# not saved yet"
    assert "E37" not in result["messages"] + result["errmsg"], result["messages"]
    assert [n for n in result["notifications"] if n["level"] >= 3] == []


def test_a_command_run_while_the_server_stops_says_it_stopped(tmp_path: Path) -> None:
    """A command run right after the client was told to stop (vim.lsp.stop_client, a
    restart) went to that client, whose server answered "the server is shut down": it is
    not sent, the message says the server stopped and how to start it again, and once it
    has, the command runs."""
    root = make_workspace(tmp_path / "repo")
    add_note(root, "a note to list")
    body = """
    vim.cmd.edit("src/pay.py")
    out.attached = attached(0)
    local client = vim.lsp.get_clients({ bufnr = 0, name = "stet" })[1]
    vim.lsp.stop_client(client.id)
    vim.cmd("Stet list")
    vim.wait(5000, function() return #out.notifications > 0 end, 50)
    out.stopped = vim.wait(10000, function() return vim.lsp.get_client_by_id(client.id) == nil end, 50)
    vim.cmd("edit")
    out.again = attached(0)
    vim.cmd("Stet list")
    out.listed = vim.wait(10000, function() return #vim.fn.getqflist() > 0 end, 50)
"""
    result = run_script(tmp_path, root, body)
    assert result["attached"] is True and result["stopped"] is True
    assert result["again"] is True and result["listed"] is True
    assert result["notifications"] == [
        {
            "message": "stet: the stet language server is not attached to this buffer: the "
            "server did not start or has stopped (see :checkhealth stet and :LspLog; :edit "
            "starts it again)",
            "level": 3,
        }
    ], result["notifications"]


def test_note_mappings_say_what_is_wrong_before_asking_for_the_text(tmp_path: Path) -> None:
    """<Plug>(StetMarkNote) off a trajectory's file, and <Plug>(StetNote) in a file outside any
    repository, asked for the note's text first and then refused it, throwing away what was
    typed: they say so without asking. In a narration the mapping asks and marks the step."""
    root = make_workspace(tmp_path / "repo")
    session = claude_session(root, tmp_path / "home")
    imported = stet(root, "trajectory", "import", str(session), "--json")
    assert imported.returncode == 0, imported.stderr
    outside = tmp_path / "outside.txt"
    outside.write_text("x\n", encoding="utf-8")
    heading = f'<a id="step-{MARK_STEP}"></a>**Step {MARK_STEP} '
    body = f"""
    out.prompts = {{}}
    vim.ui.input = function(opts, on_confirm)
      out.prompts[#out.prompts + 1] = opts.prompt
      on_confirm("typed with care")
    end
    local function plug(name)
      vim.cmd("execute \\"normal \\\\<Plug>(" .. name .. ")\\"")
    end
    vim.cmd.edit("src/pay.py")
    out.attached = attached(0)
    plug("StetMarkNote")
    vim.cmd.edit({json.dumps(str(outside))})
    plug("StetNote")
    out.refused_prompts = vim.deepcopy(out.prompts)
    vim.cmd.edit("src/pay.py")
    vim.cmd("Stet trajectory")
    vim.wait(10000, function() return vim.api.nvim_buf_get_name(0):find("narration.md", 1, true) ~= nil end, 50)
    for index, line in ipairs(vim.api.nvim_buf_get_lines(0, 0, -1, false)) do
      if vim.startswith(line, {json.dumps(heading)}) then
        vim.api.nvim_win_set_cursor(0, {{ index, 0 }})
      end
    end
    plug("StetMarkNote")
    vim.wait(10000, function() return #out.notifications >= 3 end, 50)
    settle(300)
"""
    result = run_script(tmp_path, root, body)
    assert result["attached"] is True
    assert result["refused_prompts"] == [], result["refused_prompts"]
    assert result["prompts"] == ["Note on this step: "]
    assert [n["message"] for n in result["notifications"]] == [
        "stet: open a trajectory (:Stet trajectory) and put the cursor on a step first",
        "stet: the stet language server is not attached to this buffer: "
        "its file is not inside a git repository",
        f"stet: step {MARK_STEP} marked note",
    ], result["notifications"]


def test_import_takes_a_path_with_wildcard_characters_as_it_is(tmp_path: Path) -> None:
    """`:Stet import PATH` ran the path through expand(), which globbed it: a transcript
    named `s{a,b}.jsonl` became two names joined by a newline ("No such file"), `s[1].jsonl`
    another file. The path is taken as written, `~` expanded."""
    root = make_workspace(tmp_path / "repo")
    session = claude_session(root, tmp_path / "home")
    braces = tmp_path / "home" / "s{a,b}.jsonl"
    braces.write_bytes(session.read_bytes())
    other = claude_transcript(root, "5e551011-ed17-4a0b-9c3e-0123456789cd")
    (tmp_path / "home" / "s[1].jsonl").write_text(other, encoding="utf-8")
    (tmp_path / "home" / "s1.jsonl").write_text("not a transcript\n", encoding="utf-8")
    body = f"""
    vim.cmd.edit("src/pay.py")
    out.attached = attached(0)
    vim.cmd("Stet import " .. {json.dumps(str(braces))})
    vim.wait(10000, function() return #out.notifications >= 1 end, 50)
    vim.env.HOME = {json.dumps(str(tmp_path / "home"))}
    vim.cmd("Stet import ~/s[1].jsonl")
    vim.wait(10000, function() return #out.notifications >= 2 end, 50)
"""
    result = run_script(tmp_path, root, body)
    assert result["attached"] is True
    messages = [n["message"] for n in result["notifications"]]
    imported = "stet: 12 events imported into .stet/cache/trajectories/"
    assert [message.startswith(imported) for message in messages] == [True, True], messages


def test_ids_complete_in_the_quickfix_list_of_steps(tmp_path: Path) -> None:
    """`:Stet trajectory`, `:Stet steps` and `:Stet edit` run from the quickfix list that
    `:Stet steps` or `:Stet list` filled work from the file's window, but their ids did not
    complete there (the list is no file of the server's): they complete as in the file."""
    root = make_workspace(tmp_path / "repo")
    session = claude_session(root, tmp_path / "home")
    imported = stet(root, "trajectory", "import", str(session), "--json")
    assert imported.returncode == 0, imported.stderr
    entry_id = add_note(root, "complete me")
    body = """
    vim.cmd.edit("src/pay.py")
    out.attached = attached(0)
    vim.cmd("Stet steps")
    out.listed = vim.wait(10000, function() return vim.bo.buftype == "quickfix" end, 50)
    out.trajectory = vim.fn.getcompletion("Stet trajectory ", "cmdline")
    out.steps = vim.fn.getcompletion("Stet steps ", "cmdline")
    out.edit = vim.fn.getcompletion("Stet edit ", "cmdline")
"""
    result = run_script(tmp_path, root, body)
    assert result["attached"] is True and result["listed"] is True
    trajectory = working_trajectory(root)["id"]
    assert result["trajectory"] == [trajectory] and result["steps"] == [trajectory], result
    assert result["edit"] == [entry_id], result


def test_a_step_marked_from_the_quickfix_list_of_steps(tmp_path: Path) -> None:
    """`:Stet mark` in the quickfix list `:Stet steps` filled said "the stet language server
    is not attached to this buffer: it is not a file": it marks the step of the item under
    the cursor (events.jsonl not open in any buffer), and on a heading says to pick a step."""
    root = make_workspace(tmp_path / "repo")
    session = claude_session(root, tmp_path / "home")
    imported = stet(root, "trajectory", "import", str(session), "--json")
    assert imported.returncode == 0, imported.stderr
    body = f"""
    vim.cmd.edit("src/pay.py")
    out.attached = attached(0)
    vim.cmd("Stet steps")
    out.listed = vim.wait(10000, function() return vim.bo.buftype == "quickfix" end, 50)
    vim.api.nvim_win_set_cursor(0, {{ 1, 0 }}) -- the session's heading
    vim.cmd("Stet mark wrong")
    vim.wait(5000, function() return #out.notifications >= 1 end, 50)
    for index, item in ipairs(vim.fn.getqflist()) do
      if vim.startswith(item.text, "step {MARK_STEP} ") then
        vim.api.nvim_win_set_cursor(0, {{ index, 0 }})
      end
    end
    vim.cmd("Stet mark clever")
    vim.wait(10000, function() return #out.notifications >= 2 end, 50)
    out.still_listed = vim.bo.buftype == "quickfix"
"""
    result = run_script(tmp_path, root, body)
    assert result["attached"] is True and result["listed"] is True
    assert result["still_listed"] is True
    assert result["notifications"] == [
        {
            "message": "stet: put the cursor on a step of the list (:Stet steps), or open a "
            "trajectory (:Stet trajectory)",
            "level": 3,
        },
        {"message": f"stet: step {MARK_STEP} marked clever", "level": 2},
    ], result["notifications"]
    feedback = root / ".stet" / "feedback" / f"{working_trajectory(root)['id']}.jsonl"
    verdicts = [json.loads(line) for line in feedback.read_text(encoding="utf-8").splitlines()]
    assert [(v["step"], v["verdict"]) for v in verdicts] == [(MARK_STEP, "clever")]


def test_import_completes_a_path_with_spaces(tmp_path: Path) -> None:
    """`:Stet import` takes the whole text after it as the path, spaces included, but its
    completion looked at the first word only: past a space in a folder's name it offered
    nothing. It completes the path from the last space on (what Vim replaces)."""
    root = make_workspace(tmp_path / "repo")
    folder = tmp_path / "agent sessions"
    folder.mkdir()
    (folder / "first session.jsonl").write_text("{}\n", encoding="utf-8")
    (folder / "second.jsonl").write_text("{}\n", encoding="utf-8")
    body = f"""
    vim.cmd.edit("src/pay.py")
    out.folder = vim.fn.getcompletion("Stet import {tmp_path}/agent", "cmdline")
    out.files = vim.fn.getcompletion("Stet import {folder}/", "cmdline")
    out.first = vim.fn.getcompletion("Stet import {folder}/first s", "cmdline")
    out.relative = vim.fn.getcompletion("Stet import sr", "cmdline")
"""
    result = run_script(tmp_path, root, body)
    assert result["folder"] == [f"{folder}/"], result
    assert result["files"] == ["sessions/first session.jsonl", "sessions/second.jsonl"], result
    assert result["first"] == ["session.jsonl"], result
    assert result["relative"] == ["src/"], result


def test_entries_discarded_and_graduated_from_the_quickfix_list(tmp_path: Path) -> None:
    """`:Stet discard` and `:Stet graduate` in the quickfix list `:Stet list` filled (which
    their messages point to) said "the stet language server is not attached to this buffer:
    it is not a file": they act on the entry of the item under the cursor, and a route still
    asked for is asked for it."""
    root = make_workspace(tmp_path / "repo")
    first = add_note(root, "first entry", "--kind", "convention")
    second = add_note(root, "second entry", "--kind", "ruled-out")
    body = f"""
    vim.cmd.edit("src/pay.py")
    out.attached = attached(0)
    vim.ui.select = function(items, opts, on_choice)
      out.route_prompt = opts.prompt
      on_choice("trajectory")
    end
    vim.cmd("Stet list")
    out.listed = vim.wait(10000, function() return vim.bo.buftype == "quickfix" end, 50)
    local function to(id)
      for index, item in ipairs(vim.fn.getqflist()) do
        if item.text:find(id, 1, true) then
          vim.api.nvim_win_set_cursor(0, {{ index, 0 }})
        end
      end
    end
    to({json.dumps(first)})
    vim.cmd("Stet discard")
    vim.wait(10000, function() return #out.notifications >= 1 end, 50)
    to({json.dumps(second)})
    vim.cmd("Stet graduate")
    vim.wait(10000, function() return #out.notifications >= 2 end, 50)
"""
    result = run_script(tmp_path, root, body)
    assert result["attached"] is True and result["listed"] is True
    trajectory = working_trajectory(root)["id"]
    assert [n["message"] for n in result["notifications"]] == [
        f"stet: note {first} discarded",
        f"stet: entry {second} into the trajectory {trajectory}",
    ], result["notifications"]
    assert result["route_prompt"] == f"Graduate entry {second}"
    statuses = {entry["id"]: entry["status"] for entry in sheet_entries(root)}
    assert statuses == {first: "discarded", second: "graduated-trajectory"}


MANY_SECRETS_REDACTED = """
vim.cmd.edit(vim.fn.fnameescape(vim.env.STET_SHEET))
local sheet = vim.api.nvim_get_current_buf()
assert(attached(sheet))
local function secrets()
  return vim.tbl_filter(function(d) return d.code == "github-token" end, vim.diagnostic.get(sheet))
end
assert(vim.wait(30000, function() return #secrets() == tonumber(vim.env.STET_COUNT) end, 50))
local client = vim.lsp.get_clients({ bufnr = sheet, name = "stet" })[1]
local apply = client.handlers["workspace/applyEdit"]
out.edited_lines = {}
client.handlers["workspace/applyEdit"] = function(err, params, ctx, config)
  for _, change in ipairs(params.edit.documentChanges or {}) do
    for _, edit in ipairs(change.edits) do
      out.edited_lines[#out.edited_lines + 1] = { edit.range.start.line, edit.range["end"].line }
    end
  end
  for _, edits in pairs(params.edit.changes or {}) do
    for _, edit in ipairs(edits) do
      out.edited_lines[#out.edited_lines + 1] = { edit.range.start.line, edit.range["end"].line }
    end
  end
  return apply(err, params, ctx, config)
end
local first = secrets()[1]
vim.api.nvim_win_set_cursor(0, { first.lnum + 1, first.col })
local started = vim.uv.hrtime()
vim.lsp.buf.code_action({ apply = true, filter = function(action)
  return vim.startswith(action.title, "Redact now")
end })
assert(vim.wait(30000, function() return #secrets() == 0 end, 20), "the secrets' warnings stay")
out.seconds = (vim.uv.hrtime() - started) / 1e9
out.buffer = vim.api.nvim_buf_get_lines(sheet, 0, -1, false)
out.modified = vim.bo[sheet].modified
"""


def test_redact_now_of_hundreds_of_secrets_on_two_lines(tmp_path: Path) -> None:
    """527 secrets on two entries' lines of a sheet (one of them not ASCII) are replaced in
    the buffer by one edit a line, their warnings gone within seconds: as an edit a secret,
    the server walked the long line a character at a time for each change Neovim sent back,
    and Neovim diffed the whole line for each edit, 7 s in all."""
    root = make_workspace(tmp_path / "repo")
    add_note(root, "first")
    add_note(root, "second")
    sheet = stet_sheet_path(root)
    tokens = [fake_github_token(str(number)) for number in range(527)]
    text = sheet.read_text(encoding="utf-8")
    text = text.replace("- first <!--", "- first " + " ".join(tokens[:300]) + " <!--")
    text = text.replace("- second <!--", "- second é😀 " + " ".join(tokens[300:]) + " <!--")
    sheet.write_text(text, encoding="utf-8")
    lines = text.splitlines()
    first, second = find_line(lines, "- first "), find_line(lines, "- second ")

    result = run_script(
        tmp_path,
        root,
        MANY_SECRETS_REDACTED,
        env={"STET_SHEET": str(sheet), "STET_COUNT": str(len(tokens))},
    )

    assert result["edited_lines"] == [[first, first], [second, second]]
    markers = [f"[REDACTED:github-token#{number}]" for number in range(1, 528)]
    expected = list(lines)
    for number, token in enumerate(tokens):
        line = first if number < 300 else second
        expected[line] = expected[line].replace(token, markers[number])
    assert result["buffer"] == expected
    assert result["modified"] is True
    assert result["seconds"] < 5, result["seconds"]
    assert sheet.read_text(encoding="utf-8") == text  # the buffer's until written


BAD_SETTINGS = (
    SHOWN_MESSAGES
    + """
vim.lsp.config("stet", {
  settings = { stet = { brief = { budget = "lots" }, margin = { severty = "information" } } },
})
vim.cmd.edit("src/pay.py")
assert(attached(vim.api.nvim_get_current_buf()))
vim.wait(10000, function() return #vim.tbl_filter(function(text)
  return text:find("Stet setting", 1, true) ~= nil
end, out.shown) >= 1 end, 50)
settle(1000)
vim.ui_detach(ns)
out.running = #vim.lsp.get_clients({ name = "stet" })
out.messages = vim.api.nvim_exec2("messages", { output = true }).output
vim.cmd("checkhealth stet")
out.health = vim.tbl_filter(function(line)
  return line:find("Stet setting", 1, true) ~= nil
end, vim.api.nvim_buf_get_lines(0, 0, -1, false))
"""
)

BUDGET_PROBLEM = (
    'Stet setting stet.brief.budget = "lots" is not a whole number of 1 or more; using 800'
)
SEVERITY_PROBLEM = (
    "Stet setting stet.margin.severty is not one of Stet's settings (ignored); did you mean "
    "stet.margin.severity?"
)


def test_a_server_setting_of_a_bad_value_says_so(tmp_path: Path) -> None:
    """`settings.stet` holding a budget that is no number and a misspelt key: one message in
    the message area, a line that names the first setting and says how many more problems
    :checkhealth stet lists, where each is in full (what the setting takes, the value used
    instead); the server runs."""
    root = make_workspace(tmp_path / "repo")

    result = run_script(tmp_path, root, BAD_SETTINGS)

    said = [text for text in result["shown"] if "Stet setting" in text]
    assert len(said) == 1, result["shown"]
    assert said[0].startswith(f"stet: {BUDGET_PROBLEM[:30]}"), said
    assert said[0].endswith("… (1 more: :checkhealth stet)") and "\n" not in said[0], said
    assert result["messages"] == said[0]
    assert result["health"] == [f"- ⚠️ WARNING {BUDGET_PROBLEM}", f"- ⚠️ WARNING {SEVERITY_PROBLEM}"]
    assert result["notifications"] == []
    assert result["running"] == 1


SETUP_PROBLEMS = """
vim.opt.runtimepath:prepend(vim.env.STET_PLUGIN)
vim.g.stet_enable = false
local said = {}
vim.notify = function(message, level)
  said[#said + 1] = { message, level }
end
vim.o.columns = 200
require("stet").setup({ codelens = "yes", lsp = { root_markers = 5 } })
vim.o.columns = 80
require("stet").setup({ codelens = "yes", lsp = { root_dir = 5, root_markers = 5 }, colour = 1 })
io.write(vim.json.encode({ said = said, kept = require("stet").said }))
"""


def test_the_problems_of_one_setup_call_are_one_message(tmp_path: Path) -> None:
    """Problems in one setup() call: one message, all of them in it when they fit on the
    command line (200 columns), else the first and how many more :checkhealth stet lists in
    full (80 columns)."""
    result = lua_json(tmp_path, SETUP_PROBLEMS)
    assert result["said"] == [
        [
            'stet: setup(): `lsp.root_markers` must be a list such as { ".git" }, not 5; '
            '`codelens` must be true or false, not "yes"',
            3,
        ],
        [
            'stet: setup(): unknown option "colour" … (3 more: :checkhealth stet)',
            3,
        ],
    ]
    assert [kept["text"] for kept in result["kept"]][2:] == [
        'setup(): unknown option "colour" (the options are codelens and lsp)',
        "setup(): `lsp.root_dir` must be a function or a string, not 5",
        'setup(): `lsp.root_markers` must be a list such as { ".git" }, not 5',
        'setup(): `codelens` must be true or false, not "yes"',
    ]


IN_A_TERMINAL = """
-- The Neovim under test runs in a terminal of this headless one, STET_COLUMNS columns by 24
-- lines, as a user sees it: with its screen and its message area, which a headless Neovim
-- has not. Whether it ever asked for Enter is noted as it goes.
vim.o.columns = tonumber(vim.env.STET_COLUMNS)
local screen = vim.api.nvim_get_current_buf()
local job = vim.fn.jobstart(vim.json.decode(vim.env.STET_INNER), { term = true })
local prompted = false
local function server_said()
  for _, line in ipairs(vim.api.nvim_buf_get_lines(screen, 0, -1, false)) do
    prompted = prompted or line:find("Press ENTER", 1, true) ~= nil
  end
  local text = table.concat(vim.api.nvim_buf_get_lines(screen, 0, -1, false), "\\n")
  return prompted or text:find("stet: Ste[^\\n]*:checkhealth stet%)") ~= nil
end
local shown = vim.wait(30000, server_said, 50)
vim.wait(1500, function() server_said() return false end, 50)
vim.fn.writefile({ vim.json.encode({
  shown = shown, prompted = prompted, screen = vim.api.nvim_buf_get_lines(screen, 0, -1, false),
}) }, vim.env.STET_OUT)
vim.fn.jobstop(job)
vim.cmd("qall!")
"""

STARTING_WITH_PROBLEMS = """
vim.opt.runtimepath:prepend(vim.env.STET_PLUGIN)
vim.opt.swapfile = false
vim.opt.shadafile = "NONE"
vim.lsp.config("stet", {
  cmd = vim.json.decode(vim.env.STET_CMD),
  settings = { stet = vim.json.decode(vim.env.STET_SETTINGS) },
})
require("stet").setup({ codelens = "yes", lsp = { root_markers = 5 } })
"""

TWO_BAD_SETTINGS = {"brief": {"budget": "lots"}, "margin": {"severty": "information"}}
UNKNOWN_PROBLEM = "Stet setting stet.gate.entropy is not one of Stet's settings (ignored)"


@pytest.mark.parametrize(
    ("settings", "columns", "message"),
    [
        (TWO_BAD_SETTINGS, 80, f"stet: {BUDGET_PROBLEM[:33]}… (1 more: :checkhealth stet)"),
        (
            {"gate": {"entropy": 1}},
            80,
            f"stet: {UNKNOWN_PROBLEM[:32]}… (in full: :checkhealth stet)",
        ),
        (TWO_BAD_SETTINGS, 50, "stet: Ste… (1 more: :checkhealth stet)"),
    ],
    ids=["two-messages", "one-long-message", "narrow-window"],
)
def test_problems_at_start_up_ask_for_no_enter(
    tmp_path: Path, settings: dict[str, Any], columns: int, message: str
) -> None:
    """Neovim in a terminal, started with two bad options to setup() and bad server settings:
    each pair was two messages, and Neovim's message area then asked the user to press Enter
    before anything else (Neovim's own showMessage handler did even for one message). So did
    a single message wider than the command line (`v:echospace`, 68 at 80 columns), shown
    whole, and two messages in a window of 50 columns, made one line of 40 columns. Each is
    one line that fits now, cut short where needed, and the screen waits for nothing."""
    root = make_workspace(tmp_path / "repo")
    init = tmp_path / "inner.lua"
    init.write_text(STARTING_WITH_PROBLEMS, encoding="utf-8")
    outer = tmp_path / "outer.lua"
    outer.write_text(IN_A_TERMINAL, encoding="utf-8")
    out = tmp_path / "terminal.json"
    env = isolated_env(
        tmp_path / "home",
        STET_PLUGIN=str(NEOVIM_PLUGIN),
        STET_CMD=json.dumps(server_command()),
        STET_OUT=str(out),
        STET_INNER=json.dumps([NVIM, "--clean", "-u", str(init), "src/pay.py"]),
        STET_SETTINGS=json.dumps(settings),
        STET_COLUMNS=str(columns),
    )
    subprocess.run(
        [NVIM, "--headless", "--clean", "-u", str(outer)],
        cwd=root,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=120,
    )
    result = json.loads(out.read_text(encoding="utf-8"))
    screen = "\n".join(result["screen"])
    assert result["shown"] is True, screen
    assert result["prompted"] is False, screen
    said = [line.rstrip() for line in result["screen"] if line.startswith("stet: ")]
    assert said == [message], screen
    assert len(message) <= columns - 12  # the room left of the ruler and the partial command
