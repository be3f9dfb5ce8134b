"""Provenance end to end, in real repositories: hand-written Claude Code (and Codex) transcripts
imported into trajectories, then the lines of the files' current texts (saved, committed,
renamed, or only in an editor's buffer) attributed to the steps that wrote them."""

from __future__ import annotations

import difflib
import itertools
import json
import os
import random
import re
import shutil
import sys
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pygit2
import pytest
from bounded import within
from claude_transcript import Transcript
from hypothesis import given, settings
from hypothesis import strategies as st
from repos import commit_files
from test_importing import SESSION_A, SESSION_B, START, Claude, codex_rollout

from stet_lsp.core.targets import Target, resolve_target
from stet_lsp.trajectory.alignment import ABSENT, PLACEHOLDER, align
from stet_lsp.trajectory.attribution import made_order, parse_hunks
from stet_lsp.trajectory.events import FileChange
from stet_lsp.trajectory.export_agent_trace import attributed_lines
from stet_lsp.trajectory.importing import import_transcript
from stet_lsp.trajectory.provenance import (
    MOVED_CANDIDATES,
    LineProvenance,
    Provenance,
    ProvenanceHunk,
    TrajectoryLines,
    _rooted,
    grouped,
    repository_path,
)
from stet_lsp.trajectory.store import COMMITTED, working_folder

APP = "".join(f"line {number}\n" for number in range(1, 21))  # the `repo` fixture's src/app.py
NEW = "def greet(name):\n    return f'hello {name}'\n\n\nprint(greet('you'))\n"


# -- transcripts ------------------------------------------------------------------------------


def structured_patch(before: str, after: str) -> list[dict[str, Any]]:
    """An Edit result's `structuredPatch`: the hunks of the change with their line numbers."""
    hunks: list[dict[str, Any]] = []
    diff = difflib.unified_diff(before.split("\n"), after.split("\n"), lineterm="", n=3)
    for line in list(diff)[2:]:
        header = re.match(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", line)
        if header:
            old_start, old_lines, new_start, new_lines = header.groups()
            hunks.append(
                {
                    "oldStart": int(old_start),
                    "oldLines": int(old_lines or 1),
                    "newStart": int(new_start),
                    "newLines": int(new_lines or 1),
                    "lines": [],
                }
            )
        else:
            hunks[-1]["lines"].append(line)
    return hunks


def edit(
    session: Transcript,
    call_id: str,
    path: str,
    before: str,
    old: str,
    new: str,
    *,
    anchored: bool = True,
    original: bool = True,
) -> str:
    """An Edit call and its result; with `anchored` the result carries `originalFile` (unless
    not `original`, as older versions wrote it) and `structuredPatch` as Claude Code writes
    them, else there is no structured result (only the search and replace text is known).
    Returns the file's text after the edit."""
    after = before.replace(old, new, 1)
    tool_input = {"file_path": path, "old_string": old, "new_string": new}
    structured = {
        "filePath": path,
        "oldString": old,
        "newString": new,
        "originalFile": before,
        "structuredPatch": structured_patch(before, after),
        "userModified": False,
        "replaceAll": False,
    }
    if not original:
        del structured["originalFile"]
    output = f"The file {path} has been updated successfully."
    session.tool(call_id, "Edit", tool_input, output, structured if anchored else None)
    return after


def run_into(target: Target, session: Transcript, tmp_path: Path) -> None:
    name = f"{session.session[:8]}-{len(session.records)}.jsonl"
    import_transcript(target, session.save(tmp_path / "transcripts" / name))


def change_step(root: Path, call_id: str, target: Target | None = None) -> int:
    """The step of the file change a tool call made."""
    folder = working_folder(target or resolve_target(root))
    changes = [e for e in folder.read_events() if isinstance(e, FileChange)]
    (step,) = [change.step for change in changes if change.call_id == call_id]
    return step


def attributed(provenance: Provenance, path: str, text: str) -> dict[int, int]:
    """Each attributed line (0-based) of the text and the step that wrote it."""
    return {line.line: line.step for line in provenance.attribute(path, text)}


def write(root: Path, path: str, text: str) -> None:
    (root / path).parent.mkdir(parents=True, exist_ok=True)
    (root / path).write_text(text, encoding="utf-8")


def later_signature(days: int) -> pygit2.Signature:
    """A signature dated after the transcripts' sessions (they ran in March 2026)."""
    moment = START + timedelta(days=days)
    return pygit2.Signature("Stet tests", "tests@stet.invalid", int(moment.timestamp()), 0)


def commit_all(repo: pygit2.Repository, message: str, signature: pygit2.Signature) -> None:
    """Commit the work tree as it is (additions, changes and removals)."""
    repo.index.add_all()
    repo.index.write()
    tree = repo.index.write_tree()
    repo.create_commit("HEAD", signature, signature, message, tree, [repo.head.target])


def git_mv(repo: pygit2.Repository, old: str, new: str) -> None:
    root = Path(repo.workdir)
    (root / new).parent.mkdir(parents=True, exist_ok=True)
    (root / old).rename(root / new)
    repo.index.remove(old)
    repo.index.add(new)
    repo.index.write()


@pytest.fixture
def edited_app(root: Path, tmp_path: Path) -> str:
    """A run that rewrote line 5 of src/app.py as two lines and created src/new.py; the work
    tree holds both files as the run left them. Returns src/app.py's text."""
    session = Claude(SESSION_A, root).user("Make line five two constants, and add a greeter")
    session.say("Line five becomes two constants.")
    app = edit(
        session,
        "toolu_e1",
        f"{root}/src/app.py",
        APP,
        "line 5\n",
        "FIVE_SECONDS = 5\nSIX_SECONDS = 6\n",
    )
    session.say("Now the greeter.")
    session.write_file("toolu_w1", f"{root}/src/new.py", NEW)
    session.say("Done.")
    run_into(resolve_target(root), session, tmp_path)
    write(root, "src/app.py", app)
    write(root, "src/new.py", NEW)
    return app


# -- attribution after the run ----------------------------------------------------------------


def test_lines_written_in_the_run_are_attributed(root: Path, edited_app: str) -> None:
    provenance = Provenance.load(root)
    assert provenance.problems == []
    assert provenance.paths() == ["src/app.py", "src/new.py"]
    edit_step, write_step = change_step(root, "toolu_e1"), change_step(root, "toolu_w1")
    trajectory = resolve_target(root).key

    lines = provenance.attribute("src/app.py", edited_app)
    assert lines == [
        LineProvenance(4, trajectory, edit_step, "src/app.py"),
        LineProvenance(5, trajectory, edit_step, "src/app.py"),
    ]
    assert provenance.hunks("src/app.py", edited_app) == [
        ProvenanceHunk(4, 5, trajectory, edit_step, "src/app.py")
    ]
    assert grouped(lines) == provenance.hunks("src/app.py", edited_app)
    assert provenance.at("src/app.py", edited_app, 5) == ProvenanceHunk(
        4, 5, trajectory, edit_step, "src/app.py"
    )
    assert provenance.at("src/app.py", edited_app, 6) is None

    created = provenance.hunks("src/new.py", NEW)
    assert created == [ProvenanceHunk(0, 4, trajectory, write_step, "src/new.py")]

    detail = provenance.step(trajectory, edit_step)
    assert detail is not None
    assert (detail.path, detail.operation, detail.call_id) == ("src/app.py", "modify", "toolu_e1")
    assert (detail.message, detail.message_kind) == (
        "Line five becomes two constants.",
        "agent_message",
    )
    assert detail.message_step is not None and detail.message_step < edit_step
    assert "-line 5\n+FIVE_SECONDS = 5\n+SIX_SECONDS = 6\n" in detail.diff
    greeter = provenance.step(trajectory, write_step)
    assert greeter is not None and greeter.message == "Now the greeter."
    assert greeter.operation == "create"
    assert provenance.unattributed("src/app.py") == []


def test_the_hunks_kept_for_a_text_do_not_keep_the_text(root: Path, edited_app: str) -> None:
    """An editor's every keystroke is a new text: kept whole for the last 32, a 30 MB file
    held a gigabyte."""
    provenance = Provenance.load(root)
    text = "".join([edited_app, "# one more line\n"])  # a text of its own
    held = sys.getrefcount(text)
    first = provenance.hunks("src/app.py", text)
    assert sys.getrefcount(text) == held
    assert provenance.hunks("src/app.py", text) == first  # and still found again


def test_the_message_is_the_agents_last_before_the_tool_call(root: Path, tmp_path: Path) -> None:
    """Two calls whose results come back together: each change gets the message that came
    before its own call (reasoning counts), not one written after it."""

    def write_call(call_id: str, name: str) -> dict[str, Any]:
        content = f"{name.upper()} = 1\n"
        tool_input = {"file_path": f"{root}/src/{name}.py", "content": content}
        return {"type": "tool_use", "id": call_id, "name": "Write", "input": tool_input}

    def result(call_id: str, name: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        path = f"{root}/src/{name}.py"
        structured = {"type": "create", "filePath": path, "content": f"{name.upper()} = 1\n"}
        output = f"File created successfully at: {path}"
        return [{"tool_use_id": call_id, "type": "tool_result", "content": output}], structured

    session = Claude(SESSION_A, root).user("Add two modules")
    session.say("Writing a.")
    session.assistant(write_call("toolu_a", "a"))
    thinking = {"type": "thinking", "thinking": "b matters more.", "signature": "EqQBCkYIBxgC"}
    session.assistant(thinking, write_call("toolu_b", "b"))
    for call_id, name in (("toolu_a", "a"), ("toolu_b", "b")):
        blocks, structured = result(call_id, name)
        session.user(blocks, toolUseResult=structured)
    session.say("Both written.")
    run_into(resolve_target(root), session, tmp_path)
    write(root, "src/a.py", "A = 1\n")
    write(root, "src/b.py", "B = 1\n")

    provenance = Provenance.load(root)
    messages = {}
    for name in ("a", "b"):
        (line,) = provenance.attribute(f"src/{name}.py", f"{name.upper()} = 1\n")
        detail = provenance.step(line.trajectory, line.step)
        assert detail is not None
        messages[name] = (detail.message, detail.message_kind)
    assert messages == {
        "a": ("Writing a.", "agent_message"),
        "b": ("b matters more.", "reasoning"),
    }


@pytest.mark.parametrize("inside", ["\u2028", "\u2029", "\x0c", "\x1c", "\x85", "\x0b"])
def test_a_line_holding_what_splitlines_breaks_at_is_one_line(
    root: Path, tmp_path: Path, inside: str
) -> None:
    """Only \\n, \\r\\n and \\r end a line, in an editor and in Stet's diffs: a line holding a
    U+2028 or a form feed is one line, attributed to the step that wrote it."""
    content = f'const SEP = "{inside}";\nconst OTHER = 1;\n'
    session = Claude(SESSION_A, root).user("Add the separator")
    session.write_file("toolu_sep", f"{root}/src/sep.js", content)
    edit(session, "toolu_sep2", f"{root}/src/sep.js", content, "OTHER = 1", "OTHER = 2")
    run_into(resolve_target(root), session, tmp_path)
    text = content.replace("OTHER = 1", "OTHER = 2")
    write(root, "src/sep.js", text)
    found = attributed(Provenance.load(root), "src/sep.js", text)
    assert found == {
        0: change_step(root, "toolu_sep"),
        1: change_step(root, "toolu_sep2"),
    }


def test_recorded_content_is_split_where_an_editor_splits_it() -> None:
    from stet_lsp.trajectory.attribution import Attribution

    attribution = Attribution(texts={"a.py": 'a = "\u2028\x0c"\r\nb\rc\n'})
    assert attribution.text_lines("a.py") == ['a = "\u2028\x0c"', "b", "c"]


def test_a_persons_edit_between_two_imported_sessions_moves_the_first_ones_lines(
    root: Path, tmp_path: Path
) -> None:
    # Session A writes a file; a person adds a docstring above it; session B (imported
    # after it, as the session-end hook does) edits a line: A's lines are where the person's
    # edit moved them, blank lines included, and the person's lines are nobody's.
    target = resolve_target(root)
    first = Claude(SESSION_A, root).user("Add two functions")
    written = "def one():\n    return 1\n\n\ndef two():\n    return 2\n"
    first.write_file("toolu_a", f"{root}/src/two.py", written)
    run_into(target, first, tmp_path)
    by_person = '"""Numbers."""\n\n' + written
    write(root, "src/two.py", by_person)
    second = Claude(SESSION_B, root, START + timedelta(hours=1)).user("One returns 11")
    after = edit(second, "toolu_b", f"{root}/src/two.py", by_person, "return 1\n", "return 11\n")
    run_into(target, second, tmp_path)
    write(root, "src/two.py", after)
    step_a, step_b = change_step(root, "toolu_a"), change_step(root, "toolu_b")
    assert attributed(Provenance.load(root), "src/two.py", after) == {
        2: step_a,
        3: step_b,
        4: step_a,
        5: step_a,
        6: step_a,
        7: step_a,
    }


def test_a_session_that_goes_on_after_another_started_is_followed_in_time(
    root: Path, tmp_path: Path
) -> None:
    """Sessions are composed in the order they started: session A names line 3, session B
    adds a header, then A (resumed) adds imports above the header. The changes are followed
    in the order they were made, so each line is its own step's, in the editor and in the
    Agent Trace export, and the imports are not taken for B's header."""
    target = resolve_target(root)
    path = f"{root}/src/app.py"
    first = Claude(SESSION_A, root).user("Name line 3")
    named = edit(first, "toolu_a1", path, APP, "line 3\n", "THIRD = 3\n")
    second = Claude(SESSION_B, root, START + timedelta(hours=1)).user("Add a header")
    header = edit(second, "toolu_b", path, named, "line 1\n", "# header\n# notes\nline 1\n")
    run_into(target, second, tmp_path)
    first.clock = START + timedelta(hours=2)
    first.user("Import what the header needs")
    imports = "import os\nimport sys\n\n"
    text = edit(first, "toolu_a2", path, header, "# header\n", imports + "# header\n")
    run_into(target, first, tmp_path)
    write(root, "src/app.py", text)
    name, head, top = (change_step(root, c) for c in ("toolu_a1", "toolu_b", "toolu_a2"))
    assert head > top  # B's steps come after all of A's
    assert attributed(Provenance.load(root), "src/app.py", text) == {
        0: top,
        1: top,
        2: top,
        3: head,
        4: head,
        7: name,
    }
    events = working_folder(target).read_events()
    assert attributed_lines(events) == {"src/app.py": [(1, 3, top), (4, 5, head), (8, 8, name)]}


def test_a_human_edit_on_an_attributed_line_drops_it(root: Path, edited_app: str) -> None:
    provenance = Provenance.load(root)
    step = change_step(root, "toolu_e1")
    changed = edited_app.replace("SIX_SECONDS = 6\n", "SIX_SECONDS = 7  # a person changed this\n")
    assert attributed(provenance, "src/app.py", changed) == {4: step}
    # typed back as it was: the line is the run's again
    assert attributed(provenance, "src/app.py", edited_app) == {4: step, 5: step}
    # both lines rewritten: nothing is left of the run
    rewritten = edited_app.replace("FIVE_SECONDS = 5\nSIX_SECONDS = 6\n", "five, six = 5, 6\n")
    assert attributed(provenance, "src/app.py", rewritten) == {}


def test_lines_the_gate_changed_are_still_the_runs(root: Path, tmp_path: Path) -> None:
    """The run wrote a token and a home path: the trajectory holds them as the gate wrote
    them (`[REDACTED:…]`, `~`), the file as the agent wrote them. Those lines are still the
    run's, and a person's edit elsewhere on such a line still takes it away."""
    token = "ghp_" + "Zq8RkT3vXw9LmN2pQs7YbC4dFg6HjK1aVe5U"
    text = f"import os\n\nTOKEN = '{token}'\nLOG = '/home/alice/app.log'\nDEBUG = False\n"
    session = Claude(SESSION_A, root).user("Add the settings")
    session.write_file("toolu_s1", f"{root}/src/settings.py", text)
    session.say("Done.")
    run_into(resolve_target(root), session, tmp_path)
    written = (working_folder(resolve_target(root)).path / "events.jsonl").read_text()
    assert token not in written and "/home/alice" not in written
    write(root, "src/settings.py", text)

    provenance = Provenance.load(root)
    step = change_step(root, "toolu_s1")
    assert attributed(provenance, "src/settings.py", text) == dict.fromkeys(range(5), step)
    assert provenance.unattributed("src/settings.py") == []
    edited = text.replace("LOG = '/home/alice/app.log'", "LOG = '/var/log/app.log'")
    assert attributed(provenance, "src/settings.py", edited) == {0: step, 1: step, 2: step, 4: step}


def test_a_windows_home_path_with_a_backslash_n_is_still_the_runs(
    root: Path, tmp_path: Path
) -> None:
    """A file's line is plain text: the `\\n` after `C:/Users` in `C:/Users\\nancy` is a
    separator, as the gate read it in the trajectory's JSON text (where it is `\\\\n`), not
    the start of a JSON escape; the line the gate wrote `~\\proj` stands for it."""
    text = "import os\n\nPROJECT = r'C:/Users\\nancy\\proj'\nDEBUG = False\n"
    session = Claude(SESSION_A, root).user("Add the settings")
    session.write_file("toolu_s1", f"{root}/src/settings.py", text)
    session.say("Done.")
    run_into(resolve_target(root), session, tmp_path)
    written = (working_folder(resolve_target(root)).path / "events.jsonl").read_text()
    assert "nancy" not in written and r"PROJECT = r'~\\proj'" in written
    write(root, "src/settings.py", text)

    step = change_step(root, "toolu_s1")
    assert attributed(Provenance.load(root), "src/settings.py", text) == dict.fromkeys(
        range(4), step
    )


def test_a_redacted_line_stands_for_its_value_only_and_fails_to_match_at_once() -> None:
    """A line the gate redacted matches a line with any value in the marker's place, but
    not one edited past the value (`"…" if prod else "other"`); a line of many markers that
    a person edited fails to match in its length's time (a pattern that went back over each
    marker's value took 38 s for ten of them)."""
    from stet_lsp.trajectory.provenance import _file_lines

    one = 'API_KEY = "[REDACTED:generic-secret#1]"'
    many = ", ".join(f'"k{n}": "[REDACTED:generic-secret#{n}]"' for n in range(12))
    lines = _file_lines("src/keys.py", {1: 5, 2: 5}, {1: one, 2: many}, None)
    values = ", ".join(f'"k{n}": "a value, {n} of them"' for n in range(12))
    assert lines.current_ids(['API_KEY = "sk-live-Zq8RkT3v"']) == [0]
    assert lines.current_ids(['API_KEY = "sk-live-Zq8RkT3v" if prod else "other"']) == [ABSENT]
    assert lines.current_ids([values]) == [1]
    assert within(5, lambda: lines.current_ids([values + " # a person's note"])) == [ABSENT]


def test_a_file_ending_in_a_blank_line_keeps_it_after_an_edit(root: Path, tmp_path: Path) -> None:
    """The empty string after a text's last line break is no line of the file: the blank
    last line stays the run's, and nothing is attributed past the end."""
    text = "{\n}\n{\n}\n{\n}\n\n"
    session = Claude(SESSION_A, root).user("Write the braces")
    session.write_file("toolu_tb", f"{root}/src/braces.txt", text)
    run_into(resolve_target(root), session, tmp_path)
    write(root, "src/braces.txt", text)
    provenance = Provenance.load(root)
    hunks = provenance.hunks("src/braces.txt", text)
    assert [(h.first_line, h.last_line) for h in hunks] == [(0, 6)]
    edited = text.replace("{\n}\n{", "{\n}\nHUMAN", 1)
    hunks = provenance.hunks("src/braces.txt", edited)
    assert [(h.first_line, h.last_line) for h in hunks] == [(0, 1), (3, 6)]


def test_a_last_line_that_only_gains_or_loses_its_line_break_keeps_its_writer(
    root: Path, repo: pygit2.Repository, tmp_path: Path
) -> None:
    """A file without a final line break: appending below its last line adds the break to it,
    and the diff removes the line and adds it back. The line is still its writer's (the
    file's own, or an earlier step's), in the editor and in the Agent Trace export; so is a
    line that loses its break when the lines below it are removed."""
    original = "import os\n\nLIMIT = 10"
    commit_files(repo, {"src/limit.py": original})
    session = Claude(SESSION_A, root).user("Add a helper, then a flag")
    path = f"{root}/src/limit.py"
    text = edit(session, "toolu_h", path, original, "LIMIT = 10", "LIMIT = 10\n\ndef helper():")
    text = edit(session, "toolu_f", path, text, "def helper():", "def helper():\n    return 1")
    flagged = edit(session, "toolu_d", path, text, "    return 1", "    return 1\nDEBUG = 1\n")
    text = edit(session, "toolu_r", path, flagged, "\nDEBUG = 1\n", "")
    run_into(resolve_target(root), session, tmp_path)
    write(root, "src/limit.py", text)
    helper, body = change_step(root, "toolu_h"), change_step(root, "toolu_f")
    assert text == "import os\n\nLIMIT = 10\n\ndef helper():\n    return 1"
    found = attributed(Provenance.load(root), "src/limit.py", text)
    assert found == {3: helper, 4: helper, 5: body}
    events = working_folder(resolve_target(root)).read_events()
    assert attributed_lines(events) == {"src/limit.py": [(4, 5, helper), (6, 6, body)]}


def test_lines_inserted_or_removed_above_move_the_attribution(root: Path, edited_app: str) -> None:
    provenance = Provenance.load(root)
    step = change_step(root, "toolu_e1")
    above = "import os\nimport sys\n\n" + edited_app
    assert attributed(provenance, "src/app.py", above) == {7: step, 8: step}
    fewer = edited_app.replace("line 1\nline 2\n", "")
    assert attributed(provenance, "src/app.py", fewer) == {2: step, 3: step}
    between = edited_app.replace("FIVE_SECONDS = 5\n", "FIVE_SECONDS = 5\n# a comment\n")
    assert attributed(provenance, "src/app.py", between) == {4: step, 6: step}
    # the two lines moved to the end, past more lines than they are: followed as a move
    moved = (
        edited_app.replace("FIVE_SECONDS = 5\nSIX_SECONDS = 6\n", "")
        + "FIVE_SECONDS = 5\nSIX_SECONDS = 6\n"
    )
    assert attributed(provenance, "src/app.py", moved) == {19: step, 20: step}


def test_lines_of_a_file_whose_text_was_never_recorded(root: Path, tmp_path: Path) -> None:
    """An Edit recorded with its hunks only: the run's lines are known, the file's other
    lines are not, and the attributed lines are still followed."""
    session = Claude(SESSION_A, root).user("Name lines 8 and 15")
    app = edit(
        session,
        "toolu_1",
        f"{root}/src/app.py",
        APP,
        "line 8\n",
        "EIGHTH_LINE = 8\n",
        original=False,
    )
    app = edit(
        session,
        "toolu_2",
        f"{root}/src/app.py",
        app,
        "line 15\n",
        "FIFTEENTH = 15\n",
        original=False,
    )
    run_into(resolve_target(root), session, tmp_path)
    changes = [
        e for e in working_folder(resolve_target(root)).read_events() if isinstance(e, FileChange)
    ]
    assert [(c.anchored, c.content) for c in changes] == [(True, None), (True, None)]
    provenance = Provenance.load(root)
    (file,) = provenance.trajectories[0].files.values()
    assert file.open_end and PLACEHOLDER in file.reference
    first, second = change_step(root, "toolu_1"), change_step(root, "toolu_2")
    assert attributed(provenance, "src/app.py", app) == {7: first, 14: second}
    edited = "# top\n" + app.replace("line 1\n", "").replace("line 10\n", "line 10\nmore\n")
    assert attributed(provenance, "src/app.py", edited) == {7: first, 15: second}
    assert attributed(provenance, "src/app.py", edited + "tail\n" * 50) == {7: first, 15: second}
    assert attributed(provenance, "src/app.py", "".join(app.splitlines(True)[:10])) == {7: first}


def test_a_line_like_many_written_without_the_files_text_is_placed_by_its_context(
    root: Path, repo: pygit2.Repository, tmp_path: Path
) -> None:
    """An Edit recorded with its hunks only adds a closing brace: the file's other braces are
    not the run's. A person adds a class above it (in the buffer, then on disk before a later
    session's Edit recorded the file): the brace is found by the lines around it that the
    hunk showed, not at the first brace of the file, which is the person's."""
    original = "class A {\n  int a;\n\nclass B {\n  int b;\n}\n"
    commit_files(repo, {"src/Shapes.java": original})
    target = resolve_target(root)
    path = f"{root}/src/Shapes.java"
    first = Claude(SESSION_A, root).user("Close class A")
    closed = edit(first, "toolu_c", path, original, "  int a;\n", "  int a;\n}\n", original=False)
    run_into(target, first, tmp_path)
    brace = change_step(root, "toolu_c")
    above = "class C {\n  int c;\n}\n\n" + closed
    assert attributed(Provenance.load(root), "src/Shapes.java", above) == {6: brace}
    second = Claude(SESSION_B, root, START + timedelta(hours=1)).user("Rename a")
    text = edit(second, "toolu_r", path, above, "int a;", "int alpha;")
    run_into(target, second, tmp_path)
    write(root, "src/Shapes.java", text)
    renamed = change_step(root, "toolu_r")
    assert attributed(Provenance.load(root), "src/Shapes.java", text) == {5: renamed, 6: brace}
    events = working_folder(target).read_events()
    assert attributed_lines(events) == {"src/Shapes.java": [(6, 6, renamed), (7, 7, brace)]}


def test_edits_then_a_commit_then_more_edits_in_the_buffer(
    root: Path, repo: pygit2.Repository, edited_app: str
) -> None:
    """Commits made since the run change nothing by themselves: the current text is what is
    aligned. A buffer holds unsaved text."""
    step = change_step(root, "toolu_e1")
    commit_files(repo, {"src/app.py": edited_app, "src/new.py": NEW}, "the agent's work")
    provenance = Provenance.load(root)
    first = "# header\n" + edited_app.replace("line 10\n", "line ten\n")
    commit_files(repo, {"src/app.py": first}, "a person's edits")
    second = first.replace("line 2\n", "").replace("line 19\n", "line 19\nline 19b\n")
    commit_files(repo, {"src/app.py": second}, "more edits")
    assert attributed(provenance, "src/app.py", second) == {4: step, 5: step}
    buffer = "#!/usr/bin/env python3\n" + second.replace(
        "FIVE_SECONDS = 5\n", "FIVE_SECONDS = 5  # kept?\n"
    )
    assert attributed(provenance, "src/app.py", buffer) == {6: step}
    assert attributed(provenance, "src/new.py", "# greeter\n" + NEW) == {
        n: change_step(root, "toolu_w1") for n in range(1, 6)
    }


def test_reloading_reads_only_what_changed(
    root: Path, repo: pygit2.Repository, edited_app: str, tmp_path: Path
) -> None:
    provenance = Provenance.load(root)
    assert not provenance.stale()
    commit_files(repo, {"src/app.py": edited_app}, "commit")
    assert provenance.stale()  # HEAD moved: renames may have happened
    again = Provenance.load(root, provenance)
    assert not again.stale()
    assert again.trajectories[0] is provenance.trajectories[0]  # not read again

    session = Claude(SESSION_B, root, START + timedelta(hours=1)).user("One more file")
    session.write_file("toolu_w2", f"{root}/src/more.py", "B = 2\n")
    run_into(resolve_target(root), session, tmp_path)
    assert again.stale()
    third = Provenance.load(root, again)
    assert third.trajectories[0] is not again.trajectories[0]
    assert attributed(third, "src/more.py", "B = 2\n") == {0: change_step(root, "toolu_w2")}


# -- renames ----------------------------------------------------------------------------------


MADE = "def made(value):\n    return value * 2\n"


def test_a_file_the_run_moved_in_a_shell_keeps_its_lines(root: Path, tmp_path: Path) -> None:
    # Created, then moved with `mv`, then its folder moved with another into lib/, before
    # git knew it: the transcript says where it went. A move whose meaning is not certain
    # (`mv -n`, a background command) is none.
    session = Claude(SESSION_A, root).user("Add made() and move it")
    session.write_file("toolu_made", f"{root}/src/pkg/made.py", MADE)
    session.tool("toolu_mv", "Bash", {"command": "mv src/pkg/made.py src/pkg/kept.py"}, "")
    session.tool("toolu_mv2", "Bash", {"command": "git mv src/pkg README.md lib"}, "")
    session.tool("toolu_n", "Bash", {"command": "mv -n lib/pkg/kept.py src/app.py"}, "")
    background = {"command": "mv lib/pkg/kept.py src/app.py", "run_in_background": True}
    session.tool("toolu_bg", "Bash", background, "Command running in background with ID: 1")
    sent = {"command": "sleep 600 && mv lib/pkg/kept.py src/app.py", "timeout": 600000}
    session.tool("toolu_sent", "Bash", sent, "Command running in background with ID: 2")
    run_into(resolve_target(root), session, tmp_path)
    write(root, "lib/pkg/kept.py", MADE)
    changes = [
        e for e in working_folder(resolve_target(root)).read_events() if isinstance(e, FileChange)
    ]
    assert [(c.operation, c.old_path, c.path) for c in changes] == [
        ("create", None, "src/pkg/made.py"),
        ("rename", "src/pkg/made.py", "src/pkg/kept.py"),
        ("rename", "src/pkg", "lib/pkg"),
        ("rename", "README.md", "lib/README.md"),
    ]
    provenance = Provenance.load(root)
    assert provenance.paths() == ["lib/pkg/kept.py"]
    step = change_step(root, "toolu_made")
    assert attributed(provenance, "lib/pkg/kept.py", MADE) == {0: step, 1: step}


@pytest.mark.parametrize(
    "command",
    [
        "mv src/pkg/made.py {away}/elsewhere.py",  # the file out of the repository
        "mv src/pkg src/other.txt {away}",  # its folder out, with another file
        "mv -f {away}/backup.py src/pkg/made.py",  # a file from outside over it
    ],
    ids=["file out", "folder out", "file in over it"],
)
def test_what_moves_across_the_repositorys_edge_is_not_the_runs(
    root: Path, tmp_path: Path, command: str
) -> None:
    # A person's file written later where the run's was is not the run's.
    session = Claude(SESSION_A, root).user("Add made() and move things")
    session.write_file("toolu_made", f"{root}/src/pkg/made.py", MADE)
    away = tmp_path / "away"
    session.tool("toolu_mv", "Bash", {"command": command.format(away=away)}, "")
    run_into(resolve_target(root), session, tmp_path)
    write(root, "src/pkg/made.py", MADE)
    provenance = Provenance.load(root)
    assert provenance.attribute("src/pkg/made.py", MADE) == []


def test_a_file_renamed_since_is_found_under_its_new_path(
    root: Path, repo: pygit2.Repository, edited_app: str
) -> None:
    commit_files(repo, {"src/app.py": edited_app, "src/new.py": NEW}, "the agent's work")
    git_mv(repo, "src/new.py", "lib/greeting.py")
    commit_all(repo, "move the greeter", later_signature(2))
    provenance = Provenance.load(root)
    assert provenance.paths() == ["lib/greeting.py", "src/app.py"]
    (hunk,) = provenance.hunks("lib/greeting.py", NEW)
    assert (hunk.first_line, hunk.last_line, hunk.path) == (0, 4, "src/new.py")
    assert provenance.hunks("src/new.py", NEW) == []

    # renamed again, staged only
    git_mv(repo, "lib/greeting.py", "lib/hello.py")
    assert provenance.stale()
    provenance = Provenance.load(root, provenance)
    assert [h.first_line for h in provenance.hunks("lib/hello.py", NEW)] == [0]

    # and again in the work tree only (untracked)
    (root / "lib/hello.py").rename(root / "lib/hi.py")
    provenance = Provenance.load(root, provenance)
    assert [h.first_line for h in provenance.hunks("lib/hi.py", NEW)] == [0]


def test_a_file_moved_in_the_work_tree_only_makes_the_provenance_stale(
    root: Path, repo: pygit2.Repository, edited_app: str
) -> None:
    """A plain `mv` changes neither HEAD nor the index: the provenance loaded before it says
    it is stale all the same, and loaded again finds the file under its new path."""
    commit_files(repo, {"src/app.py": edited_app, "src/new.py": NEW}, "the agent's work")
    provenance = Provenance.load(root)
    assert not provenance.stale()
    (root / "src/new.py").rename(root / "src/greeting.py")
    assert provenance.stale()
    provenance = Provenance.load(root, provenance)
    assert [h.first_line for h in provenance.hunks("src/greeting.py", NEW)] == [0]
    assert not provenance.stale()
    # moved out of the repository: gone, and stale no more once that is known
    (root / "src/greeting.py").rename(root.parent / "greeting.py")
    assert provenance.stale()
    provenance = Provenance.load(root, provenance)
    assert not provenance.stale()
    assert provenance.paths() == ["src/app.py", "src/new.py"]


def test_a_file_git_never_tracked_is_followed_through_a_plain_mv(
    root: Path, repo: pygit2.Repository, edited_app: str
) -> None:
    """src/new.py was never added: git sees no rename, only a new untracked file. The one
    file new since the run that is mostly the run's text is where it went, edited or not."""
    step = change_step(root, "toolu_w1")
    (root / "src/new.py").rename(root / "src/greeting.py")
    provenance = Provenance.load(root)
    assert provenance.paths() == ["src/app.py", "src/greeting.py"]
    assert attributed(provenance, "src/greeting.py", NEW) == dict.fromkeys(range(5), step)
    folder = str(working_folder(resolve_target(root)).relative)
    assert provenance.current_path(folder, "src/new.py") == "src/greeting.py"

    # edited since, then added and committed under its new name, then moved again
    edited = NEW.replace("print(greet('you'))", "print(greet('me'))")
    write(root, "src/greeting.py", edited)
    commit_all(repo, "the greeter", later_signature(1))
    (root / "src/greeting.py").rename(root / "lib.py")
    provenance = Provenance.load(root, provenance)
    assert attributed(provenance, "lib.py", edited) == dict.fromkeys(range(4), step)


@pytest.mark.parametrize(
    "files",
    [
        {"src/a.py": NEW, "src/b.py": NEW},  # copied twice: which is the run's?
        {"src/other.py": "x = 1\n"},  # a file of its own
        {"src/other.py": "def greet(name):\n" + "".join(f"x{n} = {n}\n" for n in range(9))},
        {"src/other.py": "\n\n\n"},  # only lines like any file's
    ],
    ids=["two copies", "unlike", "one line of it", "no distinctive line"],
)
def test_a_file_gone_without_a_rename_is_not_found_in_a_file_unlike_it(
    root: Path, edited_app: str, files: dict[str, str]
) -> None:
    (root / "src/new.py").unlink()
    for path, text in files.items():
        write(root, path, text)
    provenance = Provenance.load(root)
    assert provenance.paths() == ["src/app.py", "src/new.py"]
    for path, text in files.items():
        assert provenance.hunks(path, text) == []


def test_a_file_gone_is_never_looked_for_through_a_link_or_a_fifo(
    root: Path, tmp_path: Path
) -> None:
    """A cloned repository may hold links where a moved file would be looked for: to a file
    or a folder outside it holding the run's text (which was read, and taken for the moved
    file), to
    /dev/zero (read until memory ran out, the size of a character device being 0, which a
    file of one short line may have), or a FIFO (the read never ended). None is a file."""
    session = Claude(SESSION_A, root).user("Add a marker")
    session.write_file("toolu_w1", f"{root}/src/mark.py", "ab\n")
    session.write_file("toolu_w2", f"{root}/src/new.py", NEW)
    run_into(resolve_target(root), session, tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "greeting.py").write_text(NEW)
    (root / "src/greeting.py").symlink_to(outside / "greeting.py")
    (root / "lib").symlink_to(outside)  # lib/greeting.py: a path through a link
    (root / "src/zero.py").symlink_to("/dev/zero")
    os.mkfifo(root / "src/pipe.py")
    provenance = within(20, lambda: Provenance.load(root))
    assert provenance.paths() == ["src/mark.py", "src/new.py"]
    assert provenance.hunks("src/greeting.py", NEW) == []
    # a file with the run's text in the repository is still where src/new.py went
    write(root, "src/kept.py", NEW)
    assert "src/kept.py" in Provenance.load(root).paths()


@pytest.mark.parametrize(
    ("path", "on_windows", "on_posix"),
    [
        ("src/app.py", False, False),
        ("/etc/passwd", True, True),
        ("//server/share/x", True, True),
        ("\\x", True, False),
        ("C:\\x", True, False),
        ("C:/x", True, False),
        ("C:x", True, False),
        ("\\\\server\\share\\x", True, False),
        ("a\\b", True, False),
        ("src\\..\\..\\x", True, False),
        ("..", False, False),  # a name left out by the caller, as `.` and `` are
    ],
)
def test_a_path_rooted_or_through_a_backslash_on_windows_is_no_work_tree_file(
    path: str, on_windows: bool, on_posix: bool
) -> None:
    """Whether joining a trajectory's path to the work tree would lead out of it, or through
    what Windows reads as a separator or a drive, told from the string on any system: on
    Windows a drive (`C:x` too: that drive's current folder), a UNC path or any backslash;
    elsewhere only a leading `/` (`a\b` is a file name there)."""
    assert _rooted(path, windows=True) is on_windows
    assert _rooted(path, windows=False) is on_posix


def test_a_file_gone_among_too_many_new_files_of_its_size_is_not_followed(
    root: Path, edited_app: str
) -> None:
    """A build's output left unignored: reading every file against the run's text on every
    load would cost seconds, and reading a few could miss the copy that makes it ambiguous."""
    for number in range(MOVED_CANDIDATES + 1):
        write(root, f"out/part{number:04d}.txt", f"filler value {number:04d}\n")
    (root / "src/new.py").rename(root / "src/greeting.py")
    provenance = Provenance.load(root)
    assert provenance.paths() == ["src/app.py", "src/new.py"]
    assert provenance.hunks("src/greeting.py", NEW) == []


def test_a_rename_committed_before_the_import_is_followed(
    root: Path, repo: pygit2.Repository, tmp_path: Path
) -> None:
    """The working trajectory's base commit is HEAD at its first import, here after the
    rename: the walk goes back to the run's start."""
    write(root, "src/new.py", NEW)
    commit_all(repo, "the agent's work", later_signature(1))
    git_mv(repo, "src/new.py", "src/greeter.py")
    commit_all(repo, "rename", later_signature(2))
    session = Claude(SESSION_A, root).user("Add a greeter")
    session.write_file("toolu_w", f"{root}/src/new.py", NEW)
    run_into(resolve_target(root), session, tmp_path)
    provenance = Provenance.load(root)
    assert provenance.paths() == ["src/greeter.py"]
    assert attributed(provenance, "src/greeter.py", NEW) == dict.fromkeys(
        range(5), change_step(root, "toolu_w")
    )


# -- paths ------------------------------------------------------------------------------------


def test_a_session_recorded_on_another_machine(root: Path, tmp_path: Path) -> None:
    """Recorded in /home/alice/proj (stored as ~/proj) and in /srv/build: paths under the
    session's working folder are the repository's, others are left out."""
    alice = Claude(SESSION_A, "/home/alice/proj").user("Edit app and notes")
    alice.say("Editing.")
    app = edit(alice, "toolu_a", "/home/alice/proj/src/app.py", APP, "line 3\n", "THREE = 3\n")
    alice.write_file("toolu_n", "/home/alice/notes.md", "outside the project\n")
    run_into(resolve_target(root), alice, tmp_path)
    build = Claude(SESSION_B, "/srv/build", START + timedelta(hours=1)).user("Add a tool")
    build.write_file("toolu_t", "/srv/build/tools/run.py", "run()\n")
    run_into(resolve_target(root), build, tmp_path)
    raw = (working_folder(resolve_target(root)).path / "events.jsonl").read_text()
    assert '"path":"~/proj/src/app.py"' in raw and '"cwd":"~/proj"' in raw
    write(root, "src/app.py", app)
    write(root, "tools/run.py", "run()\n")

    provenance = Provenance.load(root)
    assert provenance.paths() == ["src/app.py", "tools/run.py"]
    assert attributed(provenance, "src/app.py", app) == {2: change_step(root, "toolu_a")}
    assert attributed(provenance, "tools/run.py", "run()\n") == {0: change_step(root, "toolu_t")}


def test_a_session_run_in_a_folder_above_the_repository(root: Path, tmp_path: Path) -> None:
    """Run in the folder holding the repository: a file it wrote beside the repository is
    not the repository's file of that name; one it wrote inside is attributed."""
    write(root, "setup.cfg", "[metadata]\nname = app\n")
    session = Claude(SESSION_A, root.parent).user("Set up the workspace")
    session.write_file("toolu_out", f"{root.parent}/setup.cfg", "[metadata]\nname = ws\n")
    session.write_file("toolu_in", f"{root}/src/new.py", "NEW = 1\n")
    run_into(resolve_target(root), session, tmp_path)
    write(root, "src/new.py", "NEW = 1\n")
    provenance = Provenance.load(root)
    assert attributed(provenance, "setup.cfg", "[metadata]\nname = app\n") == {}
    assert attributed(provenance, "src/new.py", "NEW = 1\n") == {0: change_step(root, "toolu_in")}
    assert provenance.paths() == ["src/new.py"]


@pytest.mark.parametrize(
    ("path", "cwd", "expected"),
    [
        ("src/a.py", None, "src/a.py"),
        ("./src/../src/a.py", ".", "src/a.py"),
        ("../outside.py", ".", None),
        ("~/proj/src/a.py", "~/proj", "src/a.py"),
        ("~/proj/src/a.py", "~/proj/", "src/a.py"),
        ("~/project/a.py", "~/proj", None),
        ("/other/root/src/a.py", "/other/root", "src/a.py"),
        ("/other/root/src/a.py", ".", None),
        ("/other/root/src/a.py", None, None),
        ("/other/root", "/other/root", None),
        ("", ".", None),
    ],
)
def test_repository_paths(path: str, cwd: str | None, expected: str | None) -> None:
    assert repository_path(path, cwd) == expected


# -- several trajectories -----------------------------------------------------------------------


@pytest.mark.parametrize("second_is_newer", [True, False])
def test_the_newest_step_wins_a_line_two_trajectories_wrote(
    root: Path, tmp_path: Path, second_is_newer: bool
) -> None:
    """One run created src/both.py and its trajectory was committed; the file was removed
    and another run created it again with the same first lines."""
    older = resolve_target(root, "earlier-work")
    first = Claude(SESSION_A, root).user("Create both.py")
    first.write_file("toolu_1", f"{root}/src/both.py", "a = 1\nb = 2\nc = 3\n")
    run_into(older, first, tmp_path)
    first_step = change_step(root, "toolu_1", older)
    committed = root / COMMITTED / "first-run"
    committed.parent.mkdir(parents=True)
    shutil.move(working_folder(older).path, committed)

    moment = START + timedelta(days=1 if second_is_newer else -1)
    second = Claude(SESSION_B, root, moment).user("Create both.py again")
    second.write_file("toolu_2", f"{root}/src/both.py", "a = 1\nb = 2\nc = 3\nd = 4\n")
    run_into(resolve_target(root), second, tmp_path)
    second_step = change_step(root, "toolu_2")
    text = "a = 1\nb = 2\nc = 3\nd = 4\n"
    write(root, "src/both.py", text)

    provenance = Provenance.load(root)
    working = resolve_target(root).key
    assert [trajectory.id for trajectory in provenance.trajectories] == ["first-run", working]
    newest = (working, second_step) if second_is_newer else ("first-run", first_step)
    claims = [(line.trajectory, line.step) for line in provenance.attribute("src/both.py", text)]
    assert claims == [newest, newest, newest, (working, second_step)]
    # a line only one run wrote as it is now is that run's, whichever is newer
    changed = text.replace("d = 4\n", "d = 5\n")
    claims = [(line.trajectory, line.step) for line in provenance.attribute("src/both.py", changed)]
    assert claims == [newest, newest, newest]


def test_a_repository_without_trajectories(root: Path) -> None:
    provenance = Provenance.load(root)
    assert (provenance.trajectories, provenance.problems, provenance.paths()) == ([], [], [])
    assert provenance.attribute("src/app.py", APP) == []
    assert not provenance.stale()


def test_a_broken_trajectory_is_named_and_the_others_are_used(root: Path, edited_app: str) -> None:
    broken = root / COMMITTED / "broken"
    broken.mkdir(parents=True)
    (broken / "meta.json").write_text("{not json")
    (broken / "events.jsonl").write_text("")
    provenance = Provenance.load(root)
    assert len(provenance.problems) == 1 and "broken/meta.json" in provenance.problems[0]
    assert attributed(provenance, "src/app.py", edited_app) == dict.fromkeys(
        (4, 5), change_step(root, "toolu_e1")
    )


def test_json_nested_too_deeply_is_a_problem_not_a_crash(
    root: Path, edited_app: str, stet: Any
) -> None:
    """A committed meta.json, or an events.jsonl line, nested deeper than json decodes (a
    RecursionError, not a ValueError): the first trajectory is named as a problem, the line
    of the second is skipped as one that is not JSON, and the others are used."""
    deep = '{"a":' * 5_000 + "1" + "}" * 5_000
    for name, meta, events in (("deep-meta", deep, ""), ("deep-line", "{}", deep + "\n")):
        folder = root / COMMITTED / name
        folder.mkdir(parents=True)
        (folder / "meta.json").write_text(meta)
        (folder / "events.jsonl").write_text(events)
    provenance = Provenance.load(root)
    assert len(provenance.problems) == 1 and "deep-meta/meta.json" in provenance.problems[0]
    assert attributed(provenance, "src/app.py", edited_app) == dict.fromkeys(
        (4, 5), change_step(root, "toolu_e1")
    )
    code, _, err = stet("trajectory", "blame", "-C", str(root), "src/app.py")
    assert code == 0 and "deep-meta/meta.json: nested too deeply" in err, err


# -- what is not attributed -------------------------------------------------------------------


def test_a_file_the_run_created_then_deleted_has_no_attribution(root: Path, tmp_path: Path) -> None:
    """Codex's apply_patch adds a file, then deletes it; a person later writes a file of the
    same name and text."""
    patches = [
        "*** Begin Patch\n*** Add File: src/gone.py\n+x = 1\n+y = 2\n*** End Patch",
        "*** Begin Patch\n*** Delete File: src/gone.py\n*** End Patch",
    ]
    records = []
    for number, patch in enumerate(patches):
        call = f"call_{number}"
        records += [
            {
                "type": "response_item",
                "payload": {
                    "type": "custom_tool_call",
                    "name": "apply_patch",
                    "input": patch,
                    "call_id": call,
                },
            },
            {
                "type": "response_item",
                "payload": {"type": "custom_tool_call_output", "call_id": call, "output": "Done"},
            },
        ]
    source = tmp_path / "rollout-2026-03-01T09-00-00-gone.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in codex_rollout(root, records)))
    import_transcript(resolve_target(root), source)
    changes = [
        e for e in working_folder(resolve_target(root)).read_events() if isinstance(e, FileChange)
    ]
    assert [(c.path, c.operation) for c in changes] == [
        ("src/gone.py", "create"),
        ("src/gone.py", "delete"),
    ]
    write(root, "src/gone.py", "x = 1\ny = 2\n")
    provenance = Provenance.load(root)
    assert provenance.paths() == []
    assert provenance.attribute("src/gone.py", "x = 1\ny = 2\n") == []


def test_an_unanchored_change_is_placed_where_its_search_text_is_once(
    root: Path, tmp_path: Path
) -> None:
    """An Edit known only by its search and replace text (no line numbers) over a file whose
    text the trajectory knows: its search text is there once, so that is where it wrote."""
    session = Claude(SESSION_A, root).user("Write and fix u.py")
    session.write_file("toolu_w", f"{root}/src/u.py", "one\ntwo\nthree\n")
    fixed = edit(
        session,
        "toolu_e",
        f"{root}/src/u.py",
        "one\ntwo\nthree\n",
        "two\n",
        "TWO\nTWO AGAIN\n",
        anchored=False,
    )
    run_into(resolve_target(root), session, tmp_path)
    write(root, "src/u.py", fixed)
    provenance = Provenance.load(root)
    write_step, edit_step = change_step(root, "toolu_w"), change_step(root, "toolu_e")
    found = [(item.line, item.step) for item in provenance.attribute("src/u.py", fixed)]
    assert found == [(0, write_step), (1, edit_step), (2, edit_step), (3, write_step)]
    assert provenance.unattributed("src/u.py") == []


def test_unanchored_changes_found_twice_give_no_attribution_and_say_so(
    root: Path, tmp_path: Path
) -> None:
    """A search text the file holds twice (an Edit with replace_all) has no one place: its
    lines are not placed, nor are the lines written before it that it may have moved."""
    session = Claude(SESSION_A, root).user("Write and fix u.py")
    session.write_file("toolu_w", f"{root}/src/u.py", "one\ntwo\nthree\ntwo\n")
    fixed = edit(
        session,
        "toolu_e",
        f"{root}/src/u.py",
        "one\ntwo\nthree\ntwo\n",
        "two\n",
        "TWO\n",
        anchored=False,
    )
    run_into(resolve_target(root), session, tmp_path)
    write(root, "src/u.py", fixed)
    provenance = Provenance.load(root)
    assert provenance.attribute("src/u.py", fixed) == []
    write_step, edit_step = change_step(root, "toolu_w"), change_step(root, "toolu_e")
    reasons = [(item.step, item.reason) for item in provenance.unattributed("src/u.py")]
    assert reasons == [
        (edit_step, "unanchored"),
        (write_step, f"moved by the unanchored change of step {edit_step}"),
    ]
    detail = provenance.step(resolve_target(root).key, edit_step)
    assert detail is not None and "+TWO" in detail.diff  # the hover can still show the change


AIDER_RUN = """
# aider chat started at 2025-07-15 11:38:37

> Aider v0.85.1
> Main model: gpt-4o with diff edit format

#### say hello

src/hello.py
```python
<<<<<<< SEARCH
def main():
    pass
=======
def main():
    print("hello")
>>>>>>> REPLACE
```

> Applied edit to src/hello.py
> Commit {sha} feat: say hello
"""


def test_an_edit_to_a_file_the_trajectory_never_wrote_is_placed_in_what_git_held(
    root: Path, tmp_path: Path, stet: Callable[..., tuple[int, str, str]]
) -> None:
    """aider records its edits as search and replace text, and commits each: the file before
    the edit is in the parent of the commit the session recorded after it."""
    before = "import os\n\n\ndef main():\n    pass\n\n\nmain()\n"
    after = before.replace("    pass", '    print("hello")')
    repository = pygit2.Repository(str(root))
    commit_files(repository, {"src/hello.py": before}, "before the run")
    sha = str(commit_files(repository, {"src/hello.py": after}, "feat: say hello"))
    history = tmp_path / ".aider.chat.history.md"
    history.write_text(AIDER_RUN.format(sha=sha[:7]), encoding="utf-8")
    commit_files(repository, {"src/hello.py": "# a line above\n" + after}, "later")
    write(root, "src/hello.py", "# a line above\n" + after)
    import_transcript(resolve_target(root), history)

    provenance = Provenance.load(root)
    found = provenance.attribute("src/hello.py", "# a line above\n" + after)
    assert [item.line for item in found] == [5]  # print("hello"), below the line added since
    assert provenance.unattributed("src/hello.py") == []

    # The Agent Trace export places it in the same text: line 5 of the file after the run.
    code, out, _ = stet("trajectory", "export", "--format", "agent-trace", "-C", str(root))
    trace = json.loads(out)
    assert code == 0 and [entry["path"] for entry in trace["files"]] == ["src/hello.py"]
    ranges = trace["files"][0]["conversations"][0]["ranges"]
    assert [(r["start_line"], r["end_line"]) for r in ranges] == [(5, 5)]
    assert trace["metadata"]["stet"].get("left_out", []) == []


@pytest.mark.parametrize("days", [-1, 1], ids=["base before the run", "work committed first"])
def test_a_first_edit_is_placed_in_the_base_commit_only_when_it_is_older(
    root: Path, tmp_path: Path, days: int
) -> None:
    """An edit known by its search and replace text alone, to a file the run never wrote and
    no commit event follows: placed in the base commit's file when that commit is older than
    the edit; a base made after it (the work committed, then imported) may hold the edit
    already, and is not read."""
    before = "import os\n\n\ndef main():\n    pass\n\n\nmain()\n"
    hello = 'def main():\n    print("hello")\n'
    after = before.replace("def main():\n", hello)
    repository = pygit2.Repository(str(root))
    write(root, "src/hello.py", before if days < 0 else after)
    commit_all(repository, "the base", later_signature(days))
    session = Claude(SESSION_A, root).user("Say hello")
    edit(
        session,
        "toolu_h",
        f"{root}/src/hello.py",
        before,
        "def main():\n",
        hello,
        anchored=False,
    )
    run_into(resolve_target(root), session, tmp_path)
    write(root, "src/hello.py", after)
    found = [item.line for item in Provenance.load(root).attribute("src/hello.py", after)]
    assert found == ([4] if days < 0 else [])


# -- the alignment --------------------------------------------------------------------------------

lines_of_few_texts = st.lists(st.integers(min_value=0, max_value=5), max_size=40)


@settings(max_examples=300, deadline=None)
@given(
    reference=lines_of_few_texts, current=lines_of_few_texts, unknown=st.sets(st.integers(0, 39))
)
def test_pairs_are_equal_lines_in_order(
    reference: list[int], current: list[int], unknown: set[int]
) -> None:
    reference = [PLACEHOLDER if n in unknown else value for n, value in enumerate(reference)]
    paired = align(reference, current)
    assert len(paired) == len(reference)
    pairs = [(i, j) for i, j in enumerate(paired) if j >= 0]
    assert all(reference[i] == current[j] >= 0 for i, j in pairs)
    assert all(a[1] < b[1] for a, b in itertools.pairwise(pairs))


@settings(max_examples=300, deadline=None)
@given(
    reference=lines_of_few_texts,
    inserted=st.lists(st.tuples(st.integers(0, 40), st.integers(0, 9)), max_size=10),
)
def test_lines_inserted_anywhere_leave_every_line_paired(
    reference: list[int], inserted: list[tuple[int, int]]
) -> None:
    current: list[int] = list(reference)
    for place, value in inserted:
        current.insert(min(place, len(current)), value)
    paired = align(reference, current)
    assert -1 not in paired
    assert align(reference, reference) == list(range(len(reference)))


@pytest.mark.parametrize(("size", "edits"), [(2000, 2), (2000, 3), (50_000, 8)])
def test_a_file_of_few_distinct_lines_keeps_every_untouched_line_after_edits(
    size: int, edits: int
) -> None:
    """Braces and `pass`: no line is unique, and pairing the rarest line's places in order
    lost hundreds of untouched lines after two lines were replaced."""
    rng = random.Random(3)
    reference = [rng.choice([0, 1, 2]) for _ in range(size)]
    current = list(reference)
    replaced = {(n + 1) * size // (edits + 1) for n in range(edits)}
    for place in replaced:
        current[place] = ABSENT  # a person's line, no reference line's text
    paired = align(reference, current)
    # Every current line but the person's pairs with a line of the same text (which of
    # several equal lines is not told apart).
    assert sorted(j for j in paired if j >= 0) == sorted(set(range(size)) - replaced)
    assert all(reference[i] == current[j] for i, j in enumerate(paired) if j >= 0)


@settings(max_examples=60, deadline=None)
@given(
    reference=st.lists(st.integers(0, 2), min_size=150, max_size=400),
    edits=st.lists(
        st.tuples(st.integers(0, 399), st.sampled_from(["insert", "delete", "replace"])),
        max_size=6,
    ),
)
def test_few_edits_to_a_long_text_of_few_lines_pair_all_the_rest(
    reference: list[int], edits: list[tuple[int, str]]
) -> None:
    current = list(reference)
    for place, kind in edits:
        place = min(place, len(current) - 1)
        if kind == "insert":
            current.insert(place, ABSENT)
        elif kind == "delete":
            del current[place]
        else:
            current[place] = ABSENT
    paired = align(reference, current)
    pairs = [(i, j) for i, j in enumerate(paired) if j >= 0]
    assert all(reference[i] == current[j] for i, j in pairs)
    assert all(a[1] < b[1] for a, b in itertools.pairwise(pairs))
    assert len(pairs) >= len(reference) - len(edits)  # each edit costs a line at most


def test_unknown_lines_pair_with_nothing() -> None:
    assert align([PLACEHOLDER, 0, PLACEHOLDER], [ABSENT, 0, ABSENT]) == [-1, 1, -1]
    assert align([0, 1], [ABSENT, ABSENT]) == [-1, -1]


def test_a_trajectory_from_events_in_memory() -> None:
    """TrajectoryLines reads the same from events as from events.jsonl."""
    source = {"file": "s.jsonl", "line": 1}
    change = FileChange(
        step=2,
        session="s",
        source=source,
        path="a.py",
        operation="create",
        diff="--- /dev/null\n+++ b/a.py\n@@ -0,0 +1,2 @@\n+x\n+y\n",
        anchored=True,
    )
    trajectory = TrajectoryLines.from_events("t", {}, [change], working=True)
    assert trajectory.files["a.py"].claims(["x", "y"]) == ([0, 1], [2, 2])
    lines = [json.dumps(change.model_dump(mode="json") | {"kind": "file_change"})]
    same = TrajectoryLines.from_lines("t", {}, lines, working=True)
    assert same.files["a.py"].claims(["z", "x", "y"]) == ([1, 2], [2, 2])


# -- a guard against slow alignment ---------------------------------------------------------------


def test_a_large_file_is_attributed_quickly(root: Path, tmp_path: Path) -> None:
    """A generous guard (not a benchmark): a 5,000-line file the run wrote, edited in 30
    places since, is attributed in well under a second a text."""
    body = "".join(
        f"def function_{n}(value):\n    return value + {n}\n\n" if n % 3 else "\n"
        for n in range(2200)
    )
    lines = body.splitlines(keepends=True)[:5000]
    assert len(lines) == 5000
    text = "".join(lines)
    session = Claude(SESSION_A, root).user("Write the big module")
    session.write_file("toolu_big", f"{root}/src/big.py", text)
    run_into(resolve_target(root), session, tmp_path)
    write(root, "src/big.py", text)
    provenance = Provenance.load(root)
    step = change_step(root, "toolu_big")
    for round_number in range(5):
        edited = list(lines)
        for n in range(30):
            place = (n * 167 + round_number * 31) % len(edited)
            edited.insert(place, f"# note {round_number} {n}\n")
        started = time.thread_time()
        found = provenance.attribute("src/big.py", "".join(edited))
        assert time.thread_time() - started < 1.0
        assert len(found) == len(lines) and {line.step for line in found} == {step}


def test_a_diff_placing_lines_past_the_line_limit_is_left_out(
    root: Path, edited_app: str, stet: Any
) -> None:
    """A committed trajectory's diff whose hunk starts at line 2,000,000 (past LINE_LIMIT):
    placing its line took room for every line above it (at line 100,000,000, 3 GB; at 2**63,
    without end). The change is left out, saying why, and the other trajectories are used."""
    far = 2_000_000
    folder = root / COMMITTED / "far"
    folder.mkdir(parents=True)
    (folder / "meta.json").write_text("{}")
    events = [
        FileChange(
            step=step,
            session="s",
            source={"file": "s.jsonl", "line": step},
            path="src/app.py",
            operation=operation,
            diff=f"--- a/src/app.py\n+++ b/src/app.py\n@@ -{far},1 +{far},1 @@\n-old\n+line 4\n",
            anchored=True,
        )
        for step, operation in ((1, "modify"), (2, "create"))
    ]
    (folder / "events.jsonl").write_text(
        "".join(
            json.dumps(e.model_dump(mode="json") | {"kind": "file_change"}) + "\n" for e in events
        )
    )
    provenance = within(30, lambda: Provenance.load(root))
    assert attributed(provenance, "src/app.py", edited_app) == dict.fromkeys(
        (4, 5), change_step(root, "toolu_e1")
    )
    reasons = {
        (item.trajectory, item.step, item.reason) for item in provenance.unattributed("src/app.py")
    }
    assert {
        ("far", 1, "placed past line 1,000,000"),
        ("far", 2, "placed past line 1,000,000"),
    } <= reasons
    code, out, _ = stet("trajectory", "blame", "-C", str(root), "src/app.py", "--json")
    assert code == 0 and "placed past line 1,000,000" in out


def test_a_file_codex_moved_in_a_shell_keeps_its_lines(root: Path, tmp_path: Path) -> None:
    """Codex adds a file with apply_patch, then moves it with `bash -lc "mv …"`; a move whose
    command failed (exit code 1), or has not ended (no exit code), is no move."""
    add = "*** Begin Patch\n*** Add File: src/made.py\n+x = 1\n+y = 2\n*** End Patch"
    records: list[dict[str, Any]] = [
        {
            "type": "response_item",
            "payload": {
                "type": "custom_tool_call",
                "name": "apply_patch",
                "input": add,
                "call_id": "p",
            },
        },
        {
            "type": "response_item",
            "payload": {"type": "custom_tool_call_output", "call_id": "p", "output": "Done"},
        },
    ]
    for call, command, code in (
        ("m1", "mv src/made.py src/kept.py", 0),
        ("m2", "mv src/kept.py src/never.py", 1),
        ("m3", "mv src/kept.py src/later.py", None),  # still running: no exit code
    ):
        arguments = {"command": ["bash", "-lc", command], "workdir": str(root)}
        output: Any = {"output": "", "metadata": {"exit_code": code}}
        if code is None:
            output = "Process running with session ID 7"
        records += [
            {
                "type": "response_item",
                "payload": {
                    "type": "function_call",
                    "name": "shell",
                    "arguments": json.dumps(arguments),
                    "call_id": call,
                },
            },
            {
                "type": "response_item",
                "payload": {
                    "type": "function_call_output",
                    "call_id": call,
                    "output": output if isinstance(output, str) else json.dumps(output),
                },
            },
        ]
    source = tmp_path / "rollout-2026-03-01T09-00-00-moved.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in codex_rollout(root, records)))
    import_transcript(resolve_target(root), source)
    changes = [
        e for e in working_folder(resolve_target(root)).read_events() if isinstance(e, FileChange)
    ]
    assert [(c.operation, c.old_path, c.path) for c in changes] == [
        ("create", None, "src/made.py"),
        ("rename", "src/made.py", "src/kept.py"),
    ]
    write(root, "src/kept.py", "x = 1\ny = 2\n")
    provenance = Provenance.load(root)
    assert provenance.paths() == ["src/kept.py"]
    assert set(attributed(provenance, "src/kept.py", "x = 1\ny = 2\n")) == {0, 1}


def test_a_hunk_header_with_a_number_too_long_for_a_line_is_read_past() -> None:
    """int() refuses a number of thousands of digits: such a header is no hunk's."""
    diff = f"--- a/x.py\n+++ b/x.py\n@@ -{'9' * 5000},1 +1,1 @@\n-a\n+b\n@@ -3,1 +3,1 @@\n-c\n+d\n"
    assert [hunk.new_first for hunk in parse_hunks(diff)] == [3]


def test_a_change_without_a_time_takes_its_own_sessions_time() -> None:
    """Session A at 1 and 10; session B's first change has no time, its second is at 5: B's
    first takes B's own time, not A's 10, and both of B's come between A's."""
    changes = [
        ("A", "2026-01-01T00:00:01Z"),
        ("A", "2026-01-01T00:00:10Z"),
        ("B", None),
        ("B", "2026-01-01T00:00:05Z"),
    ]
    assert made_order(changes) == [0, 2, 3, 1]
    # a session without any time follows the change before it in the trajectory
    assert made_order([("A", "2026-01-01T00:00:01Z"), ("C", None), ("A", None)]) == [0, 1, 2]
