"""Graduation end to end, in real repositories with real style sheets: into the working
trajectory, into a skill staged in the git index (and nothing else staged), discarded; the
decisions as events; the gate on every file written; the review and its application; the CLI."""

from __future__ import annotations

import json
import os
import re
import subprocess
import threading
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pygit2
import pytest
import yaml
from repos import skip_worktree

from stet_lsp.core.anchors import make_anchor
from stet_lsp.core.errors import StetError
from stet_lsp.core.locking import file_lock, held
from stet_lsp.core.model import Entry, Kind, format_time, utc_now
from stet_lsp.core.sheet import StyleSheet
from stet_lsp.core.targets import resolve_target
from stet_lsp.gate import GateConfig
from stet_lsp.trajectory.events import EventBase, Graduation, Note
from stet_lsp.trajectory.graduation import (
    apply_review,
    graduate,
    parse_review,
    retarget_skill,
    review,
    skill_proposal,
)
from stet_lsp.trajectory.importing import import_transcript
from stet_lsp.trajectory.skills import propose_name, validate_skill
from stet_lsp.trajectory.store import working_folder
from stet_lsp.trajectory.validate import validate_path

Run = Callable[..., tuple[int, str, str]]
TOKEN = "ghp_" + "Zq8RkT3vXw9LmN2pQs7YbC4dFg6HjK1aVe5U"  # 36 alphanumerics after the prefix
RESULT_KEYS = {"version", "target", "entry", "route", "trajectory", "edited", "staged"}
NOW = utc_now()


@pytest.fixture
def sheet(root: Path) -> StyleSheet:
    return StyleSheet(resolve_target(root))


def add(
    sheet: StyleSheet, text: str, kind: Kind = "note", line: int | None = None, **extra: Any
) -> Entry:
    root = sheet.target.root
    anchor = make_anchor(root, root / "src/app.py", line) if line is not None else None
    return sheet.add(text, kind=kind, anchor=anchor, **extra)


def events(sheet: StyleSheet) -> list[EventBase]:
    return working_folder(sheet.target).read_events()


def of(found: list[EventBase], kind: type[Any]) -> list[Any]:
    return [event for event in found if isinstance(event, kind)]


def status(sheet: StyleSheet, entry: Entry) -> str:
    return sheet.get(entry.id).status


def transcript(folder: Path, session: str, start: str, prompt: str) -> Path:
    """A two-record Claude Code session starting at `start`."""
    common = {"cwd": str(folder), "sessionId": session, "version": "2.1.12", "gitBranch": "main"}
    records = [
        {
            **common,
            "type": "user",
            "uuid": f"{session}-1",
            "parentUuid": None,
            "timestamp": start,
            "message": {"role": "user", "content": prompt},
        },
        {
            **common,
            "type": "assistant",
            "uuid": f"{session}-2",
            "parentUuid": f"{session}-1",
            "timestamp": start,
            "message": {
                "id": f"m-{session}",
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": [{"type": "text", "text": "Done."}],
            },
        },
    ]
    path = folder.parent / f"{session}.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path


def stamp(delta: timedelta) -> str:
    return (NOW + delta).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def stet_files(root: Path) -> dict[str, str]:
    """Every file under .stet/ but the style sheets (working memory, never committed)."""
    return {
        str(path.relative_to(root)): path.read_text(encoding="utf-8")
        for path in sorted((root / ".stet").rglob("*"))
        if path.is_file() and "sheets" not in path.parts
    }


def frontmatter(text: str) -> dict[str, Any]:
    fields: dict[str, Any] = yaml.safe_load(text.split("---\n")[1])
    return fields


# -- the three routes -----------------------------------------------------------------------------


def test_into_the_trajectory_between_imported_sessions(sheet: StyleSheet, root: Path) -> None:
    import_transcript(sheet.target, transcript(root, "before", stamp(-timedelta(days=1)), "first"))
    entry = add(sheet, "Tried urllib3's Retry: it retries POSTs.", "ruled-out", author="agent")

    done = graduate(sheet, entry.id, "trajectory", now=NOW)

    assert set(done) == RESULT_KEYS
    assert done["route"] == "trajectory" and done["staged"] == [] and done["edited"] is False
    assert done["trajectory"] == working_folder(sheet.target).id == sheet.target.key
    assert done["entry"]["id"] == entry.id and done["entry"]["status"] == "graduated-trajectory"
    assert status(sheet, entry) == "graduated-trajectory"
    import_transcript(sheet.target, transcript(root, "after", stamp(timedelta(hours=1)), "later"))

    found = events(sheet)
    assert [event.step for event in found] == list(range(1, len(found) + 1))
    sessions = [event.session for event in found]
    assert sessions.index("graduation") > max(i for i, s in enumerate(sessions) if s == "before")
    assert sessions.index("after") > max(i for i, s in enumerate(sessions) if s == "graduation")
    (note,) = of(found, Note)
    sheet_name = sheet.path.relative_to(root).as_posix()
    assert (note.entry_id, note.entry_kind, note.author) == (entry.id, "ruled-out", "agent")
    assert note.text == entry.text and note.source.file == sheet_name
    line = sheet.path.read_text().split("\n")[note.source.line - 1]
    assert f"id={entry.id}" in line and note.time == format_time(NOW)
    (decision,) = of(found, Graduation)
    assert (decision.entry_id, decision.route, decision.edited) == (entry.id, "trajectory", False)
    assert decision.skill is None and decision.proposed_name is None
    assert decision.step == note.step + 1 and decision.time == note.time
    assert validate_path(working_folder(sheet.target).path) == []
    assert not [
        path
        for path, flags in pygit2.Repository(str(root)).status().items()
        if flags & pygit2.enums.FileStatus.INDEX_NEW
    ]


@pytest.mark.parametrize("record", ["removed", "torn"])
def test_graduations_record_lost_by_hand_loses_no_decision(
    sheet: StyleSheet, root: Path, record: str
) -> None:
    """Graduation's session record removed or edited by hand: an import composing the
    trajectory still holds the decisions (an imported session's record lost is made again
    by importing its transcript; graduation's decisions have none), and so does the commit."""
    from stet_lsp.trajectory.capstone import capstone

    entry = add(sheet, "Tried urllib3's Retry: it retries POSTs.", "ruled-out")
    graduate(sheet, entry.id, "trajectory", now=NOW)
    kept = working_folder(sheet.target).path / "sessions" / "graduation.json"
    if record == "removed":
        kept.unlink()
    else:
        kept.write_text("{torn", encoding="utf-8")

    import_transcript(sheet.target, transcript(root, "after", stamp(timedelta(hours=1)), "later"))

    (note,) = of(events(sheet), Note)
    assert note.entry_id == entry.id
    assert [event.session for event in events(sheet)][:2] == ["graduation", "graduation"]
    result = capstone(sheet.target)
    commit = pygit2.Repository(str(root)).head.peel(pygit2.Commit)
    committed = commit.tree / ".stet" / "trajectories" / result.trajectory / "events.jsonl"
    assert f'"entry_id":"{entry.id}"' in committed.data.decode()


def test_the_proposed_name_is_the_skill_routes_and_holds_no_secret(sheet: StyleSheet) -> None:
    entry = add(sheet, f"Deploy keys live in the vault, never {TOKEN} inline.", "convention")
    asked = skill_proposal(sheet, entry.id)
    assert asked["entry"]["id"] == entry.id
    name = asked["proposed_name"]
    assert not any(TOKEN[i : i + 4].lower() in name for i in range(len(TOKEN) - 3)), name
    assert status(sheet, entry) == "open"  # asking changes nothing
    assert graduate(sheet, entry.id, "skill", now=NOW)["skill"]["name"] == name
    with pytest.raises(StetError, match="no entry"):
        skill_proposal(sheet, "zzzz")


def test_into_a_skill_stages_it_and_nothing_else(
    sheet: StyleSheet, root: Path, repo: pygit2.Repository
) -> None:
    (root / "src/app.py").write_text("staged change\n" + (root / "src/app.py").read_text())
    repo.index.add("src/app.py")
    repo.index.write()
    staged_app = repo.index["src/app.py"].id
    (root / "README.md").write_text("not staged\n")
    entry = add(sheet, "Wrap errors with wrap_error(). Never raise bare.", "convention", line=5)

    done = graduate(sheet, entry.id, "skill", now=NOW)

    name = propose_name(entry.text)
    path = f".stet/skills/{name}/SKILL.md"
    assert set(done) == RESULT_KEYS | {"skill"}
    assert done["skill"] == {
        "name": name,
        "path": path,
        "proposed_name": name,
        "created": True,
        "added": True,
    }
    assert done["staged"] == [path] and status(sheet, entry) == "graduated-skill"
    text = (root / path).read_text()
    assert validate_skill(text, folder=name) == []
    fields = frontmatter(text)
    assert fields["name"] == name == Path(path).parent.name
    assert 1 <= len(fields["description"]) <= 1024
    assert fields["metadata"] == {
        "stet-entries": entry.id,
        "stet-target": "main",
        "stet-trajectory": sheet.target.key,
    }
    assert "Wrap errors with wrap_error(). Never raise bare." in text
    assert (
        "Noted at `src/app.py`, line 5:\n\n```python\nline 2\nline 3\nline 4\nline 5\nline 6\n```"
        in text
    )

    after = pygit2.Repository(str(root))
    assert after.index["src/app.py"].id == staged_app
    assert after[after.index[path].id].data == (root / path).read_bytes()
    staged = {p: f for p, f in after.status().items() if f & ~pygit2.enums.FileStatus.WT_NEW}
    assert staged == {
        path: pygit2.enums.FileStatus.INDEX_NEW,
        "src/app.py": pygit2.enums.FileStatus.INDEX_MODIFIED,
        "README.md": pygit2.enums.FileStatus.WT_MODIFIED,
    }
    (decision,) = of(events(sheet), Graduation)
    assert (decision.route, decision.skill, decision.proposed_name) == ("skill", name, None)
    assert not of(events(sheet), Note)


def test_the_code_around_a_last_line_has_no_line_the_file_lacks(
    sheet: StyleSheet, root: Path
) -> None:
    entry = add(sheet, "The last line stays last", "convention", line=20)
    graduate(sheet, entry.id, "skill", skill_name="last-line")
    text = (root / ".stet/skills/last-line/SKILL.md").read_text()
    assert "```python\nline 18\nline 19\nline 20\n```" in text


def test_discard(sheet: StyleSheet, root: Path) -> None:
    entry = add(sheet, "a passing thought about zebrafish", "note")
    done = graduate(sheet, entry.id, "discard", now=NOW)
    assert set(done) == RESULT_KEYS and done["entry"]["status"] == "discarded"
    assert status(sheet, entry) == "discarded" and done["staged"] == []
    (decision,) = of(events(sheet), Graduation)
    assert (decision.entry_id, decision.entry_kind, decision.route) == (entry.id, "note", "discard")
    assert not of(events(sheet), Note) and not (root / ".stet/skills").exists()
    for name, content in stet_files(root).items():
        assert "zebrafish" not in content, name


def test_edited_text_and_a_chosen_name_are_recorded(sheet: StyleSheet, root: Path) -> None:
    convention = add(sheet, "Prefer dataclasses for records", "convention")
    ruled = add(sheet, "Tried threads", "ruled-out")

    skill = graduate(
        sheet, convention.id, "skill", skill_name="records", text="Use frozen dataclasses"
    )
    note = graduate(sheet, ruled.id, "trajectory", text="Tried threads: the GIL\n")

    assert skill["edited"] and note["edited"]
    assert skill["skill"]["proposed_name"] == "frozen-dataclasses"
    text = (root / ".stet/skills/records/SKILL.md").read_text()
    assert "Use frozen dataclasses" in text and "Prefer dataclasses" not in text
    found = events(sheet)
    first, second = of(found, Graduation)
    assert (first.skill, first.proposed_name, first.edited) == (
        "records",
        "frozen-dataclasses",
        True,
    )
    assert second.edited and second.proposed_name is None
    assert of(found, Note)[0].text == "Tried threads: the GIL"
    assert sheet.get(ruled.id).text == "Tried threads"  # the sheet keeps what was written
    unchanged = add(sheet, "Same text", "ruled-out")
    assert graduate(sheet, unchanged.id, "trajectory", text="Same text")["edited"] is False


# -- the gate ---------------------------------------------------------------------------------------


def test_a_value_found_in_the_code_is_redacted_in_the_entrys_text_too(
    sheet: StyleSheet, root: Path
) -> None:
    """The code around the entry assigns a password, the entry quotes it bare (where no rule
    would find it), whole and its first characters: one value, one marker, in the text and in
    the code."""
    value = "k9Qm2xR7tLw4Zp8Vn3Hc6Jd1"
    lines = (root / "src/app.py").read_text().split("\n")
    lines[9] = f'DB_PASSWORD = "{value}"'
    (root / "src/app.py").write_text("\n".join(lines))
    entry = add(
        sheet,
        f"Staging logs in with {value} (it starts {value[:16]}…); read it from the vault",
        "convention",
        10,
    )
    graduate(sheet, entry.id, "skill", text=None)
    skill = next(text for name, text in stet_files(root).items() if name.endswith("SKILL.md"))
    assert value[:16] not in skill and value[-12:] not in skill
    assert skill.count("[REDACTED:secret-assignment#1]") >= 3
    assert "secret-assignment#2" not in skill


def test_a_planted_secret_reaches_no_file(
    sheet: StyleSheet, root: Path, repo: pygit2.Repository
) -> None:
    lines = (root / "src/app.py").read_text().split("\n")
    lines[9] = f'TOKEN = "{TOKEN}"'
    (root / "src/app.py").write_text("\n".join(lines))
    routes: dict[str, Kind] = {"trajectory": "ruled-out", "skill": "convention", "discard": "note"}
    for route, kind in routes.items():
        entry = add(sheet, f"Push with GITHUB_TOKEN={TOKEN} ({route})", kind, line=10)
        done = graduate(sheet, entry.id, route, text=None)
        assert done["route"] == route

    written = stet_files(root)
    assert any(name.endswith("SKILL.md") for name in written)
    assert any(name.endswith("sessions/graduation.json") for name in written)
    for name, content in written.items():
        for part in (TOKEN, TOKEN[4:], TOKEN[-16:], TOKEN[:14]):
            assert part not in content, (name, part)
    skill = next(content for name, content in written.items() if name.endswith("SKILL.md"))
    # one value, one marker: in the description, the heading, the text and the code around it
    assert skill.count("[REDACTED:github-token#1]") == 4 and "github-token#2" not in skill
    assert (
        "[REDACTED:github-token#"
        in written[f"{working_folder(sheet.target).relative}/events.jsonl"]
    )
    record = json.loads(
        written[f"{working_folder(sheet.target).relative}/sessions/graduation.json"]
    )
    assert record["redaction"]["github-token"] >= 1 and record["session"] == "graduation"
    index = pygit2.Repository(str(root)).index
    for entry in index:
        if entry.path.startswith(".stet/"):
            assert TOKEN[4:] not in repo[entry.id].data.decode(), entry.path
    add(sheet, "x" * 60 + f" {TOKEN} where the review cuts the line", "ruled-out")
    document = review(sheet)
    assert "[REDACTED:github-token#1]" in document
    for part in (TOKEN[4:], TOKEN[:14], TOKEN[4:20]):
        assert part not in document


def test_code_around_an_entry_in_the_middle_of_a_key_is_redacted(
    sheet: StyleSheet, root: Path, repo: pygit2.Repository
) -> None:
    """The gate finds a private key's block from its header: the lines around an entry on
    line 10 of a 20-line key, read alone, hold none, and are redacted as the file's."""
    import random

    rng = random.Random(5)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    body = ["".join(rng.choice(alphabet) for _ in range(64)) for _ in range(20)]
    key = ["-----BEGIN RSA PRIVATE KEY-----", *body, "-----END RSA PRIVATE KEY-----"]
    (root / "src/app.py").write_text('KEY = """\n' + "\n".join(key) + '\n"""\n')
    quoted = f"Never inline a key such as\n{body[9]}\nread it from the vault"  # line 11's
    entry = add(sheet, quoted, "convention", line=12)
    graduate(sheet, entry.id, "skill", skill_name="no-inline-keys")

    path = ".stet/skills/no-inline-keys/SKILL.md"
    staged = repo[pygit2.Repository(str(root)).index[path].id].data.decode()
    for text in (staged, (root / path).read_text()):
        assert not any(line[:24] in text for line in body), text
        # Lines 10 to 14, and the line the entry's text quotes (in its text and in the
        # description made from it): one marker.
        assert text.count("[REDACTED:private-key#1]") == 7


# -- refusals ---------------------------------------------------------------------------------------


def test_a_skill_is_staged_once_git_lets_go_of_its_index(
    sheet: StyleSheet, root: Path, repo: pygit2.Repository
) -> None:
    # `git status` (an editor's git extension, every few seconds) holds index.lock a moment.
    lock = Path(repo.path) / "index.lock"
    lock.write_bytes(b"")
    threading.Timer(0.5, lock.unlink).start()
    entry = add(sheet, "Wrap errors with wrap_error(). Never raise bare.", "convention", line=5)
    done = graduate(sheet, entry.id, "skill", now=NOW)
    repo.index.read(True)
    assert done["staged"] and all(path in repo.index for path in done["staged"])


@pytest.mark.parametrize(
    ("name", "rule"),
    [
        ("Bad_Name", "name: only lowercase letters a-z, digits and hyphens"),
        ("-x", "name: must not start or end with a hyphen"),
        ("a--b", "name: must not contain consecutive hyphens"),
        ("x" * 65, "name: at most 64 characters"),
    ],
)
def test_a_bad_skill_name_is_refused_with_the_rule(
    sheet: StyleSheet, root: Path, name: str, rule: str
) -> None:
    entry = add(sheet, "Use the retry helper", "convention")
    with pytest.raises(StetError, match=rule):
        graduate(sheet, entry.id, "skill", skill_name=name)
    assert status(sheet, entry) == "open"
    assert not (root / ".stet/skills").exists()
    assert not (working_folder(sheet.target).path / "events.jsonl").exists()


def test_refusals_change_nothing(sheet: StyleSheet, root: Path) -> None:
    entry = add(sheet, "Keep it", "ruled-out")
    cases: list[tuple[dict[str, Any], str]] = [
        ({"entry_id": "nosuch"}, "no entry with id 'nosuch'"),
        ({"route": "archive"}, "unknown route 'archive'"),
        ({"route": "trajectory", "skill_name": "x"}, "a skill name goes with the skill route"),
        ({"route": "discard", "text": "new"}, "a discarded entry keeps no text"),
        ({"route": "trajectory", "text": "  \n"}, "the text to graduate is empty"),
        ({"entry_id": 3}, "id must be a string"),
    ]
    before = sheet.path.read_bytes()
    for arguments, message in cases:
        call = {"entry_id": entry.id, "route": "trajectory", **arguments}
        with pytest.raises(StetError, match=message):
            graduate(sheet, call.pop("entry_id"), call.pop("route"), **call)
    assert sheet.path.read_bytes() == before
    assert not (working_folder(sheet.target).path).exists()
    graduate(sheet, entry.id, "trajectory")
    with pytest.raises(StetError, match="is graduated-trajectory: only open entries graduate"):
        graduate(sheet, entry.id, "discard")


def test_a_paused_sheet_still_graduates(sheet: StyleSheet) -> None:
    """A pause refuses agent and margin entries; graduation is a person's decision."""
    entry = add(sheet, "Found: config lives in settings.toml", "clarification", author="agent")
    sheet.pause()
    with pytest.raises(StetError, match="paused"):
        add(sheet, "another agent note", author="agent")
    assert (
        graduate(sheet.target, entry.id, "trajectory")["entry"]["status"] == "graduated-trajectory"
    )
    assert sheet.pause_state()[0] is True


def test_a_hand_written_entry_graduates_under_its_id(sheet: StyleSheet) -> None:
    add(sheet, "first", "convention")
    sheet.path.write_text(sheet.path.read_text() + "- typed by hand: no ORMs\n")
    (hand,) = [entry for entry in sheet.entries() if entry.text.startswith("typed")]
    graduate(sheet, hand.id, "trajectory")
    assert sheet.get(hand.id).status == "graduated-trajectory"
    assert of(events(sheet), Note)[0].text == "typed by hand: no ORMs"


def test_graduations_at_once_all_land(sheet: StyleSheet, root: Path) -> None:
    """Threads graduating into one working trajectory and one skill lose nothing."""
    notes = [add(sheet, f"ruled out number {n}", "ruled-out") for n in range(4)]
    conventions = [add(sheet, f"convention number {n}", "convention") for n in range(3)]
    calls = [(entry.id, "trajectory", None) for entry in notes]
    calls += [(entry.id, "skill", "shared") for entry in conventions]
    failures: list[BaseException] = []

    def run(entry_id: str, route: str, name: str | None) -> None:
        try:
            graduate(StyleSheet(sheet.target), entry_id, route, skill_name=name)
        except BaseException as error:  # reported below
            failures.append(error)

    threads = [threading.Thread(target=run, args=call) for call in calls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    found = events(sheet)
    assert sorted(note.entry_id for note in of(found, Note)) == sorted(e.id for e in notes)
    assert len(of(found, Graduation)) == 7
    assert [event.step for event in found] == list(range(1, 12))
    skill = frontmatter((root / ".stet/skills/shared/SKILL.md").read_text())
    assert sorted(skill["metadata"]["stet-entries"].split()) == sorted(e.id for e in conventions)
    assert {entry.status for entry in sheet.entries()} == {
        "graduated-trajectory",
        "graduated-skill",
    }


def test_an_edit_made_while_an_entry_graduates_waits_for_it(sheet: StyleSheet, root: Path) -> None:
    """The entry is read and closed under the sheet's lock: a person's edit made while the
    graduation waits (here, for the working trajectory an import holds) comes after it,
    instead of the graduation closing the entry over the text the edit replaced."""
    entry = add(sheet, "Use requests directly", "ruled-out")
    folder = working_folder(sheet.target)
    graduated: list[Any] = []
    edited: list[Entry] = []
    with file_lock(folder.path, root, "the working trajectory"):  # an import running
        graduation = threading.Thread(
            target=lambda: graduated.append(graduate(sheet, entry.id, "trajectory"))
        )
        graduation.start()
        # Graduate has read the entry, and waits holding the sheet's lock (waited for: a
        # loaded machine may start it after any fixed time, and the edit would come first).
        lock = sheet.path.with_name(sheet.path.name + ".lock")
        deadline = time.monotonic() + 20
        while True:
            with held(lock, root, 0) as free:
                pass
            if not free:
                break
            assert time.monotonic() < deadline, "the graduation never took the sheet's lock"
            time.sleep(0.02)
        edit = threading.Thread(
            target=lambda: edited.append(
                StyleSheet(sheet.target).edit_text(entry.id, "Do not use requests directly")
            )
        )
        edit.start()
        time.sleep(0.5)
        assert not edited  # waits for the graduation: its lock
    graduation.join(20)
    edit.join(20)
    assert graduated and graduated[0]["entry"]["status"] == "graduated-trajectory"
    [note] = of(events(sheet), Note)
    assert note.text == "Use requests directly"
    assert [e.text for e in edited] == ["Do not use requests directly"]  # after, not lost


def test_the_sheet_is_not_held_while_the_trajectory_is_composed(
    sheet: StyleSheet, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Composing a long working trajectory takes seconds: an agent's note added meanwhile is
    not kept waiting for it (the sheet's lock is let go once the entry is closed)."""
    import stet_lsp.trajectory.importing as importing

    import_transcript(sheet.target, transcript(root, "before", stamp(-timedelta(days=1)), "first"))
    entry = add(sheet, "Wrap errors with wrap_error().", "convention")
    real = importing.compose
    added: list[Entry] = []

    def compose_with_a_note_meanwhile(*args: Any, **kwargs: Any) -> None:
        meanwhile = threading.Thread(
            target=lambda: added.append(StyleSheet(sheet.target).add("A note meanwhile."))
        )
        meanwhile.start()
        meanwhile.join(10)  # the sheet's lock is waited for up to 15 s
        assert added, "the note waited for the composition"
        real(*args, **kwargs)

    monkeypatch.setattr(importing, "compose", compose_with_a_note_meanwhile)
    done = graduate(sheet, entry.id, "trajectory")

    assert done["entry"]["status"] == "graduated-trajectory"
    assert [note.text for note in of(events(sheet), Note)] == [entry.text]
    assert sheet.get(added[0].id).text == "A note meanwhile."


def graduated_with_a_failed_composition(
    sheet: StyleSheet, root: Path, monkeypatch: pytest.MonkeyPatch
) -> Entry:
    """An entry graduated into the trajectory whose composition failed (a full disk), in a
    repository with an identity for the capstone."""
    import stet_lsp.trajectory.importing as importing

    repository = pygit2.Repository(str(root))
    repository.config["user.name"] = "Reviewer"
    repository.config["user.email"] = "reviewer@example.com"
    entry = add(sheet, "Tried urllib3's Retry: it retries POSTs.", "ruled-out")

    def full_disk(*args: Any, **kwargs: Any) -> None:
        raise StetError("no space left on device")

    with monkeypatch.context() as patched:
        patched.setattr(importing, "compose", full_disk)
        with pytest.raises(StetError, match="graduated, but the working trajectory was not"):
            graduate(sheet, entry.id, "trajectory")
    return entry


def test_a_composition_that_fails_is_done_by_the_capstone(
    sheet: StyleSheet, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The entry is closed before the trajectory is composed: when composing fails, the
    graduation says so, its events stay stored, and the capstone composes them before it
    commits (as it does for an import stopped between storing and composing)."""
    from stet_lsp.trajectory.capstone import capstone

    import_transcript(sheet.target, transcript(root, "before", stamp(-timedelta(days=1)), "first"))
    entry = graduated_with_a_failed_composition(sheet, root, monkeypatch)
    assert status(sheet, entry) == "graduated-trajectory"
    assert of(events(sheet), Note) == []  # stored, not composed yet

    result = capstone(sheet.target)

    repository = pygit2.Repository(str(root))
    commit = repository.head.peel(pygit2.Commit)
    committed = commit.tree / ".stet" / "trajectories" / result.trajectory / "events.jsonl"
    notes = [json.loads(line) for line in committed.data.decode().splitlines()]
    assert [event["text"] for event in notes if event["kind"] == "note"] == [entry.text]


def test_a_first_graduation_left_uncomposed_is_committed_and_previewed(
    sheet: StyleSheet, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No session imported, and the first graduation's composition fails: there is no
    meta.json yet, and the capstone (its dry run too) composes the stored events first."""
    from stet_lsp.trajectory.capstone import capstone

    graduated_with_a_failed_composition(sheet, root, monkeypatch)

    preview = capstone(sheet.target, dry_run=True)
    result = capstone(sheet.target)
    assert preview.trajectory == result.trajectory and result.changed


def test_a_session_file_broken_by_hand_is_named_and_no_decision_is_lost(
    sheet: StyleSheet, root: Path
) -> None:
    """A line of graduation's session file edited by hand into no event: the next graduation
    closes its entry and stores its decision, then says which line of which file to correct
    (not that nothing was changed); once it is removed, the capstone commits every note."""
    from stet_lsp.trajectory.capstone import CapstoneRefused, capstone

    first, second = add(sheet, "First note."), add(sheet, "Second note.")
    graduate(sheet, first.id, "trajectory")
    stored = working_folder(sheet.target).path / "sessions" / "graduation.jsonl"
    kept = stored.read_text(encoding="utf-8")
    stored.write_text(kept + "not json\n", encoding="utf-8")

    with pytest.raises(StetError) as refused:
        graduate(sheet, second.id, "trajectory")
    said = str(refused.value)
    assert "graduation.jsonl:3 is not a trajectory event" in said
    assert "correct or remove that line" in said and "nothing was changed" not in said
    assert status(sheet, second) == "graduated-trajectory"
    with pytest.raises(
        CapstoneRefused, match=r"graduation\.jsonl:3 is not a trajectory event"
    ) as caught:
        capstone(sheet.target)
    assert caught.value.reason == "no-working-trajectory"

    lines = stored.read_text(encoding="utf-8").split("\n")
    stored.write_text("\n".join(line for line in lines if line != "not json"), encoding="utf-8")
    result = capstone(sheet.target)
    commit = pygit2.Repository(str(root)).head.peel(pygit2.Commit)
    committed = commit.tree / ".stet" / "trajectories" / result.trajectory / "events.jsonl"
    notes = [json.loads(line) for line in committed.data.decode().splitlines()]
    assert [event["text"] for event in notes if event["kind"] == "note"] == [
        "First note.",
        "Second note.",
    ]


# -- extending a skill ------------------------------------------------------------------------------


HAND_WRITTEN_SKILL = """---
name: logging
# Reviewed by the platform team; do not widen without asking them.
description: >
  How we log. Use when adding log lines.
license: Apache-2.0
allowed-tools: Bash(git:*) Read
metadata:
  owner: platform  # on-call rotation
---

# Logging

Hand-written body.
"""


def test_a_hand_written_skill_keeps_its_frontmatter_as_written(
    sheet: StyleSheet, root: Path
) -> None:
    """Extending a skill a person wrote changes only its metadata's Stet keys (added at the
    end of the block) and its body's end: comments, order and folded scalars stay; the
    capstone's renaming of the trajectory does the same."""
    path = root / ".stet/skills/logging/SKILL.md"
    path.parent.mkdir(parents=True)
    path.write_text(HAND_WRITTEN_SKILL)
    entry = add(sheet, "Log fields are snake_case", "convention")

    graduate(sheet, entry.id, "skill", skill_name="logging")

    extended = path.read_text()
    head, body = HAND_WRITTEN_SKILL.split("\n---\n", 1)
    trajectory = working_folder(sheet.target).id
    assert extended.startswith(
        head + f'\n  stet-entries: "{entry.id}"\n  stet-target: "main"\n'
        f'  stet-trajectory: "{trajectory}"\n---\n' + body
    )
    assert extended.endswith("\n## Log fields are snake_case\n\nLog fields are snake_case\n")
    renamed = retarget_skill(
        extended, "logging", (trajectory,), "2026-03-01-main-abc", GateConfig()
    )
    assert renamed == extended.replace(trajectory, "2026-03-01-main-abc")


def test_a_skill_whose_metadata_is_a_flow_mapping_is_refused(sheet: StyleSheet, root: Path) -> None:
    path = root / ".stet/skills/logging/SKILL.md"
    path.parent.mkdir(parents=True)
    written = HAND_WRITTEN_SKILL.replace(
        "metadata:\n  owner: platform  # on-call rotation", "metadata: {owner: platform}"
    )
    path.write_text(written)
    entry = add(sheet, "Log fields are snake_case", "convention")
    with pytest.raises(StetError, match="cannot be extended as written: write its metadata"):
        graduate(sheet, entry.id, "skill", skill_name="logging")
    assert path.read_text() == written and status(sheet, entry) == "open"


def test_a_cloned_skill_nested_too_deeply_is_refused_naming_it(tmp_path: Path, stet: Run) -> None:
    """A clone can commit a SKILL.md whose frontmatter nests flow sequences some thousands
    deep, far under the size limit: the YAML parser recursed out of the stack and graduating
    into that skill ended in a traceback. It breaks the spec like any other: refused, naming
    the file, nothing changed."""
    from repos import hostile_clone

    deep = "---\nname: deep\ndescription: " + "[" * 100_000 + "\n---\nbody\n"
    root = hostile_clone(tmp_path, {".stet/skills/deep/SKILL.md": deep})
    code, entry, err = stet("note", "add", "-C", str(root), "Use the retry helper")
    assert code == 0, err
    before = StyleSheet(resolve_target(root)).path.read_bytes()
    code, _, err = stet(
        "graduate", "-C", str(root), entry.strip(), "--to", "skill", "--skill", "deep"
    )
    assert code == 1 and "Traceback" not in err
    assert ".stet/skills/deep/SKILL.md does not follow the Agent Skills spec" in err
    assert "frontmatter: not valid YAML (nested too deeply)" in err
    assert StyleSheet(resolve_target(root)).path.read_bytes() == before
    assert (root / ".stet/skills/deep/SKILL.md").read_text() == deep


def test_extending_a_skill_never_duplicates_an_entry(sheet: StyleSheet, root: Path) -> None:
    first = add(sheet, "HTTP calls go through the session helper", "convention")
    second = add(sheet, "Timeouts are 10 seconds", "convention", line=3)
    graduate(sheet, first.id, "skill", skill_name="http")
    path = root / ".stet/skills/http/SKILL.md"
    text = path.read_text().replace("Use when writing", "Use when you write")  # a person's edit
    path.write_text(text)

    done = graduate(sheet, second.id, "skill", skill_name="http")

    assert done["skill"]["created"] is False and done["skill"]["added"] is True
    assert done["skill"]["proposed_name"] == "timeouts-10-seconds"
    extended = path.read_text()
    assert validate_skill(extended, folder="http") == []
    fields = frontmatter(extended)
    assert fields["metadata"]["stet-entries"] == f"{first.id} {second.id}"
    assert fields["metadata"]["stet-target"] == "main"
    assert "Use when you write" in fields["description"]
    assert extended.count("## ") == 2 and extended.index("HTTP calls") < extended.index("Timeouts")
    assert text.split("\n---\n", 1)[1] in extended  # the body so far, as it was

    sheet.set_status(second.id, "open")  # by hand: the same entry graduates again
    again = graduate(sheet, second.id, "skill", skill_name="http")
    assert again["skill"]["added"] is False and again["staged"] == []
    assert path.read_text() == extended


def test_a_skill_that_cannot_be_staged_is_taken_back(
    sheet: StyleSheet, root: Path, repo: pygit2.Repository
) -> None:
    entry = add(sheet, "Use the retry helper", "convention")
    lock = Path(repo.path) / "index.lock"  # another git process is writing the index
    lock.write_text("")
    with pytest.raises(StetError, match="could not be staged") as refused:
        graduate(sheet, entry.id, "skill")
    assert f"({lock}): try again once the git process" in str(refused.value)
    assert "remove that file if none is running; nothing was changed" in str(refused.value)
    assert not (root / ".stet/skills/retry-helper/SKILL.md").exists()
    assert status(sheet, entry) == "open"
    lock.unlink()
    assert graduate(sheet, entry.id, "skill")["staged"] == [".stet/skills/retry-helper/SKILL.md"]


def test_a_skill_written_but_never_staged_is_staged_when_done_again(
    sheet: StyleSheet, root: Path
) -> None:
    entry = add(sheet, "Use the retry helper", "convention")
    path = ".stet/skills/retry-helper/SKILL.md"
    graduate(sheet, entry.id, "skill")
    index = pygit2.Repository(str(root)).index
    index.remove(path)  # as if it stopped between writing and staging
    index.write()
    sheet.set_status(entry.id, "open")
    again = graduate(sheet, entry.id, "skill")
    assert again["skill"]["added"] is False and again["staged"] == [path]
    assert path in pygit2.Repository(str(root)).index


def git_status(root: Path) -> list[str]:
    done = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    )
    return sorted(line for line in done.stdout.splitlines() if " .stet/cache/" not in line)


def test_a_graduation_killed_before_staging_a_new_skill_is_taken_back(
    sheet: StyleSheet, root: Path, stet: Run
) -> None:
    """Killed (SIGKILL) between writing a new SKILL.md and staging it: the file was left
    untracked. The next command that takes a working trajectory (a graduation into the
    trajectory here) removes it and the folder made for it; graduating the entry again
    writes and stages it."""
    from test_settle import killed_before

    entry = add(sheet, "Use the retry helper", "convention")
    other = add(sheet, "Tried urllib3's Retry directly", "ruled-out")
    path = ".stet/skills/retry-helper/SKILL.md"
    before = git_status(root)
    killed_before(r"unlink index\.stet-\S+", root, "graduate", entry.id, "--to", "skill")
    assert f"?? {path}" in git_status(root)

    code, _, err = stet("graduate", other.id, "--to", "trajectory", "-C", str(root))

    assert code == 0, err
    assert git_status(root) == before
    assert not (root / ".stet/skills").exists()
    assert status(sheet, entry) == "open"
    code, _, err = stet("graduate", entry.id, "--to", "skill", "-C", str(root))
    assert code == 0, err
    assert f"A  {path}" in git_status(root)


def test_a_graduation_killed_before_staging_an_existing_skill_is_taken_back(
    sheet: StyleSheet, root: Path, repo: pygit2.Repository, stet: Run
) -> None:
    """A committed skill extended, killed before staging: the work tree held the new section
    unstaged, and graduating again found the entry in the file and staged nothing, so the
    capstone would have committed the skill without it. Graduating again now puts the file
    back first, then extends and stages it."""
    from test_settle import killed_before

    first = add(sheet, "Use the retry helper", "convention")
    graduate(sheet, first.id, "skill", skill_name="retry")
    path = ".stet/skills/retry/SKILL.md"
    subprocess.run(["git", "commit", "-q", "-m", "skill"], cwd=root, check=True)
    committed = (root / path).read_bytes()
    entry = add(sheet, "Time out after 10 s", "convention")
    killed_before(
        r"unlink index\.stet-\S+", root, "graduate", entry.id, "--to", "skill", "--skill", "retry"
    )
    assert f" M {path}" in git_status(root)

    code, _, err = stet("graduate", entry.id, "--to", "skill", "--skill", "retry", "-C", str(root))

    assert code == 0, err
    assert f"M  {path}" in git_status(root)
    staged = pygit2.Repository(str(root)).index[path].id
    assert (root / path).read_bytes() == pygit2.Repository(str(root))[staged].data
    assert (root / path).read_bytes() != committed
    assert "Time out after 10 s" in (root / path).read_text()


def test_a_graduation_killed_as_it_wrote_its_record_leaves_no_temporary_file(
    sheet: StyleSheet, root: Path, stet: Run
) -> None:
    """Killed before the temporary file of the skill write's record was renamed into place:
    that file stayed in `.stet/cache/skills/` for good. The next command that reads the
    working trajectory removes it; the skill is graduated as if none had been stopped."""
    from test_settle import killed_before

    other = add(sheet, "Tried urllib3's Retry directly", "ruled-out")
    code, _, err = stet("graduate", other.id, "--to", "trajectory", "-C", str(root))
    assert code == 0, err
    entry = add(sheet, "Use the retry helper", "convention")
    record = "retry-helper.staging"
    killed_before(
        rf"replace \.{re.escape(record)}\.[0-9a-f]{{16}}\.tmp \S+",
        root, "graduate", entry.id, "--to", "skill",
    )  # fmt: skip
    cache = root / ".stet/cache/skills"
    assert len(list(cache.glob(f".{record}.*.tmp"))) == 1

    code, _, err = stet("trajectory", "list", "-C", str(root))

    assert code == 0, err
    assert not list(cache.glob(f".{record}*")) and not (cache / record).exists()
    code, _, err = stet("graduate", entry.id, "--to", "skill", "-C", str(root))
    assert code == 0, err
    assert "A  .stet/skills/retry-helper/SKILL.md" in git_status(root)


def test_a_stopped_skill_write_with_an_index_git_cannot_read_leaves_the_list_alone(
    sheet: StyleSheet, root: Path, repo: pygit2.Repository, stet: Run
) -> None:
    """Settling a stopped skill write needs the index; a damaged one makes it fail, and a
    command that only reads (the list) reads all the same: the record stays for later."""
    from test_settle import killed_before

    other = add(sheet, "Tried urllib3's Retry directly", "ruled-out")
    code, _, err = stet("graduate", other.id, "--to", "trajectory", "-C", str(root))
    assert code == 0, err
    entry = add(sheet, "Use the retry helper", "convention")
    killed_before(r"unlink index\.stet-\S+", root, "graduate", entry.id, "--to", "skill")
    (Path(repo.path) / "index").write_bytes(b"DIRC\0\0\0\2 torn")

    code, _, err = stet("trajectory", "list", "-C", str(root))

    assert code == 0, err
    assert list((root / ".stet/cache/skills").glob("*.staging"))


def test_a_skill_holding_a_secret_typed_in_is_refused_and_never_staged(
    sheet: StyleSheet, root: Path, repo: pygit2.Repository
) -> None:
    """Its file may have been edited since it was written (here, while the index lost it):
    graduation does not rewrite a person's text through the gate unseen, nor stage it."""
    entry = add(sheet, "Use the retry helper", "convention")
    path = ".stet/skills/retry-helper/SKILL.md"
    graduate(sheet, entry.id, "skill")
    index = pygit2.Repository(str(root)).index
    index.remove(path)
    index.write()
    with (root / path).open("a") as file:
        file.write(f"\nDeploy with {TOKEN}\n")
    written = (root / path).read_bytes()
    sheet.set_status(entry.id, "open")
    with pytest.raises(StetError, match=r"holds a secret \(github-token at line \d+\): redact"):
        graduate(sheet, entry.id, "skill")
    assert (root / path).read_bytes() == written and status(sheet, entry) == "open"
    assert path not in pygit2.Repository(str(root)).index
    blobs = [repo[oid] for oid in repo.odb if repo[oid].type == pygit2.enums.ObjectType.BLOB]
    assert not any(TOKEN.encode() in blob.data for blob in blobs)


def test_a_staged_skill_holding_a_secret_typed_in_is_refused_and_left_staged(
    sheet: StyleSheet, root: Path, repo: pygit2.Repository
) -> None:
    """The index's version holds the secret, the work tree's not (cleaned after staging):
    graduation does not rewrite the staged text through the gate unseen either."""
    path = ".stet/skills/house/SKILL.md"
    file = root / path
    file.parent.mkdir(parents=True)
    file.write_text(f'---\nname: house\ndescription: "x"\n---\nDeploy with {TOKEN}\n')
    index = repo.index
    index.read()
    index.add(path)
    index.write()
    staged = index[path].id
    file.write_text('---\nname: house\ndescription: "x"\n---\nDeploy with the vault.\n')
    entry = add(sheet, "Use the retry helper", "convention")

    with pytest.raises(StetError) as refused:
        graduate(sheet, entry.id, "skill", skill_name="house")

    assert str(refused.value).startswith(f"the staged {path} holds a secret (github-token at")
    assert f"stage the work tree's version (git add {path})" in str(refused.value)
    index.read(True)
    assert index[path].id == staged and status(sheet, entry) == "open"
    assert "Deploy with the vault." in file.read_text()


def test_a_skill_that_breaks_the_spec_is_not_extended(sheet: StyleSheet, root: Path) -> None:
    folder = root / ".stet/skills/http"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: web\ndescription: d\n---\nbody\n")
    entry = add(sheet, "x", "convention")
    with pytest.raises(
        StetError, match=r"does not follow the Agent Skills spec \(name: must match"
    ):
        graduate(sheet, entry.id, "skill", skill_name="http")
    assert status(sheet, entry) == "open"


def test_a_skill_past_the_size_guidance_is_refused(sheet: StyleSheet, root: Path) -> None:
    entry = add(sheet, "\n".join(f"rule {n}" for n in range(600)), "convention")
    with pytest.raises(StetError, match=r"would break the Agent Skills spec: size: SKILL\.md has"):
        graduate(sheet, entry.id, "skill", skill_name="big")
    assert not (root / ".stet/skills/big/SKILL.md").exists() and status(sheet, entry) == "open"


# -- the review -------------------------------------------------------------------------------------


def test_a_note_typed_by_hand_is_not_proposed_for_discard_as_old(sheet: StyleSheet) -> None:
    """A line typed into the sheet has no time until the next write stores one: it was
    typed recently, not in 1970, so it goes to the trajectory like any recent note."""
    add(sheet, "an older entry, so the sheet has its sections", "note")
    text = sheet.path.read_text(encoding="utf-8")
    first = text.index("\n- ", text.index("## Notes")) + 1
    typed = "- Typed by hand: check the cache headers\n"
    sheet.path.write_text(text[:first] + typed + text[first:], encoding="utf-8")
    (entry,) = [e for e in sheet.entries() if e.text.startswith("Typed by hand")]
    assert not entry.has_time
    document = review(sheet, now=NOW + timedelta(days=15))
    assert "→ trajectory — Typed by hand: check the cache headers" in document


def test_the_review_proposes_and_apply_carries_out_only_checked_lines(
    sheet: StyleSheet, root: Path
) -> None:
    convention = add(sheet, "Use the retry helper for HTTP calls", "convention")
    ruled = add(sheet, "Tried urllib3 Retry", "ruled-out")
    clarification = add(sheet, "The API is internal only", "clarification")
    markup = add(sheet, "No bare requests.post here", "markup", line=2)
    note = add(sheet, "look at the cache later", "note")
    graduated = add(sheet, "already done", "note")
    graduate(sheet, graduated.id, "discard")

    document = review(sheet)
    named, lines = parse_review(document)
    assert named == ("branch", "main")
    routes = {line.entry_id: (line.route, line.skill, line.checked) for line in lines}
    assert routes == {
        convention.id: ("skill", "retry-helper-http-calls", False),
        ruled.id: ("trajectory", None, False),
        clarification.id: ("trajectory", None, False),
        markup.id: ("trajectory", None, False),
        note.id: ("trajectory", None, False),
    }
    assert (
        f"- [ ] {convention.id} → skill:retry-helper-http-calls — Use the retry helper" in document
    )
    later = review(sheet, now=NOW + timedelta(days=15))
    assert f"- [ ] {note.id} → discard — look at the cache later" in later
    assert apply_review(sheet, document) == []  # nothing checked: nothing happens

    checked = (
        document.replace(
            f"[ ] {convention.id} → skill:retry-helper-http-calls",
            f"[x] {convention.id} → skill:http-style",
        )
        .replace(f"[ ] {ruled.id}", f"[x] {ruled.id}")
        .replace(f"[ ] {note.id} → trajectory", f"[X] {note.id} -> discard")
    )
    results = apply_review(sheet.target, checked)

    assert [(r["entry"]["id"], r["route"]) for r in results] == [
        (convention.id, "skill"),
        (ruled.id, "trajectory"),
        (note.id, "discard"),
    ]
    assert results[0]["skill"]["name"] == "http-style" and results[0]["staged"]
    assert [status(sheet, e) for e in (convention, ruled, note, clarification, markup)] == [
        "graduated-skill",
        "graduated-trajectory",
        "discarded",
        "open",
        "open",
    ]
    decision = next(e for e in of(events(sheet), Graduation) if e.entry_id == convention.id)
    assert (decision.skill, decision.proposed_name) == ("http-style", "retry-helper-http-calls")
    with pytest.raises(StetError, match=f"entry {ruled.id} is graduated-trajectory, not open"):
        apply_review(sheet, checked)


def test_a_bad_review_changes_nothing(sheet: StyleSheet, root: Path) -> None:
    entry = add(sheet, "Tried threads", "ruled-out")
    document = review(sheet).replace("[ ]", "[x]")
    before = sheet.path.read_bytes()
    cases = {
        document + "- [x] zzzzzz → trajectory — gone\n": "line 17: no entry with id 'zzzzzz'",
        document + f"- [x] {entry.id} → discard\n": f"entry {entry.id} is checked twice",
        document.replace("→ trajectory", "→ skill:Bad"): "line 16: name: only lowercase",
        document + "- [x] oops\n": "line 17: not a review line",
        document.replace('target="main"', 'target="other"'): "this review is for target 'other'",
        document.replace("stet-review", "review"): "this review has no header naming its target",
        document.replace("version=1 ", f"version={'9' * 5000} "): "review version 9999",
        document.replace('target="main"', 'target="m\\qain"'): "names no target it can read",
    }
    for text, message in cases.items():
        with pytest.raises(StetError, match=message):
            apply_review(sheet, text)
    assert sheet.path.read_bytes() == before
    assert review(StyleSheet(resolve_target(root, "empty"))).endswith("\nNo open entries.\n")


def test_a_checkbox_typed_wrong_is_an_error_not_unchecked(sheet: StyleSheet) -> None:
    entry = add(sheet, "Tried threads", "ruled-out")
    header = '<!-- stet-review version=1 kind=branch target="main" -->\n'
    for line in (
        f"- [x {entry.id} → trajectory — t",
        f"-[x] {entry.id} → trajectory — t",
        f"1. [x] {entry.id} → trajectory — t",
        f"- [xx] {entry.id} → trajectory — t",
        f"[x] {entry.id} → trajectory — t",
    ):
        with pytest.raises(StetError, match="line 2: not a review line"):
            apply_review(sheet, header + line + "\n")
    assert status(sheet, entry) == "open"


def test_a_review_of_a_branch_whose_name_the_gate_redacts_applies(root: Path) -> None:
    """The review passes the gate, its header too: a branch named with a token (or, in strict
    mode, a random suffix) is named there redacted, and the review still applies to it."""
    branch = "fix-ghp_" + "Zq8Xw2Lm4Np6Rt8Vb0Cd2Fg4Hj6Kl8Mn0Pq2S"
    repository = pygit2.Repository(str(root))
    repository.branches.local.create(branch, repository.head.peel(pygit2.Commit))
    repository.checkout(f"refs/heads/{branch}")
    sheet = StyleSheet(resolve_target(root))
    assert sheet.target.name == branch
    entry = add(sheet, "Tried threads", "ruled-out")
    document = review(sheet)
    assert branch not in document and "[REDACTED:github-token#1]" in document
    [result] = apply_review(sheet, document.replace("[ ]", "[x]"))
    assert result["route"] == "trajectory" and status(sheet, entry) == "graduated-trajectory"
    # Another branch's review, its name redacted the same way, is still refused.
    other = document.replace('target="fix-', 'target="feat-')
    with pytest.raises(StetError, match="this review is for target 'feat-"):
        apply_review(sheet, other.replace("[ ]", "[x]"))


def test_a_review_whose_skill_would_grow_past_the_spec_changes_nothing(
    sheet: StyleSheet, root: Path
) -> None:
    """A skill the checked lines would make too large is found before the first line is
    carried out, as a skill that cannot be extended is; lines into one skill add up."""
    first = add(sheet, "Tried threads", "ruled-out")
    second = add(sheet, "Long convention", "convention")
    # Made long by hand: a command writes no entry past 20,000 characters.
    long = "Long convention " + "word " * 30000
    sheet.path.write_text(sheet.path.read_text().replace("Long convention", long.strip()))
    document = (
        '<!-- stet-review version=1 kind=branch target="main" -->\n'
        f"- [x] {first.id} → trajectory — Tried threads\n"
        f"- [x] {second.id} → skill:long-one — Long\n"
    )
    before = sheet.path.read_bytes()
    with pytest.raises(StetError) as raised:
        apply_review(sheet, document)
    message = str(raised.value)
    assert message.startswith("line 3: the skill long-one would break the Agent Skills spec")
    assert message.endswith("; nothing was changed")
    assert sheet.path.read_bytes() == before
    assert not (root / ".stet" / "skills" / "long-one").exists()
    # Two lines into one skill, each small enough alone, are checked together.
    halves = [add(sheet, f"Half {n} " + "word " * 3000, "convention") for n in (1, 2)]
    together = '<!-- stet-review version=1 kind=branch target="main" -->\n' + "".join(
        f"- [x] {half.id} → skill:halves — Half\n" for half in halves
    )
    with pytest.raises(StetError, match=r"^line 3: the skill halves.*5,000.*nothing was changed$"):
        apply_review(sheet, together)
    assert [status(sheet, half) for half in halves] == ["open", "open"]
    header, first_half, _ = together.split("\n")[:3]
    [alone] = apply_review(sheet, f"{header}\n{first_half}\n")
    assert alone["route"] == "skill"
    # A skill a person wrote grows past the spec's size the same way: the skill breaks the spec
    # (its frontmatter, kept as written, was blamed).
    grown = root / ".stet" / "skills" / "grown" / "SKILL.md"
    grown.parent.mkdir(parents=True)
    grown.write_text("---\nname: grown\ndescription: Conventions.\n---\n\n" + "word " * 3000)
    held = grown.read_bytes()
    more = add(sheet, "More " + "word " * 1500, "convention")
    with pytest.raises(StetError, match=r"^line 2: the skill grown would break the Agent Skills"):
        apply_review(sheet, f"{header}\n- [x] {more.id} → skill:grown — More\n")
    assert grown.read_bytes() == held and status(sheet, more) == "open"


def test_a_review_whose_later_line_names_a_broken_skill_changes_nothing(
    sheet: StyleSheet, root: Path
) -> None:
    """A skill that cannot be extended (its SKILL.md breaks the spec) is found before the
    first line is carried out, not after it."""
    first = add(sheet, "Tried threads", "ruled-out")
    second = add(sheet, "Log with structlog", "convention")
    broken = root / ".stet" / "skills" / "logging" / "SKILL.md"
    broken.parent.mkdir(parents=True)
    broken.write_text("No frontmatter here.\n")
    document = (
        '<!-- stet-review version=1 kind=branch target="main" -->\n'
        f"- [x] {first.id} → trajectory — Tried threads\n"
        f"- [x] {second.id} → skill:logging — Log with structlog\n"
    )
    before = sheet.path.read_bytes()
    with pytest.raises(StetError, match=r"line 3: .*does not follow the Agent Skills spec"):
        apply_review(sheet, document)
    assert sheet.path.read_bytes() == before
    assert status(sheet, first) == "open"
    assert not (working_folder(sheet.target).path / "sessions").exists()  # no event stored


@pytest.mark.parametrize("where", ["work tree", "index"])
def test_a_review_whose_later_line_names_a_skill_holding_a_secret_changes_nothing(
    sheet: StyleSheet, root: Path, repo: pygit2.Repository, where: str
) -> None:
    """A skill holding a secret typed in (in its file, or in the version the index holds)
    is refused before the first line is carried out, as a broken one is."""
    first = add(sheet, "Tried threads", "ruled-out")
    second = add(sheet, "Log with structlog", "convention")
    path = ".stet/skills/logging/SKILL.md"
    file = root / path
    file.parent.mkdir(parents=True)
    file.write_text(f'---\nname: logging\ndescription: "x"\n---\nDeploy with {TOKEN}\n')
    if where == "index":
        index = repo.index
        index.read()
        index.add(path)
        index.write()
        file.write_text('---\nname: logging\ndescription: "x"\n---\nDeploy with the vault.\n')
    document = (
        '<!-- stet-review version=1 kind=branch target="main" -->\n'
        f"- [x] {first.id} → trajectory — Tried threads\n"
        f"- [x] {second.id} → skill:logging — Log with structlog\n"
    )
    before = sheet.path.read_bytes()
    with pytest.raises(StetError, match=r"line 3: .*holds a secret .*; nothing was changed$"):
        apply_review(sheet, document)
    assert sheet.path.read_bytes() == before
    assert status(sheet, first) == "open"
    assert not (working_folder(sheet.target).path / "sessions").exists()  # no event stored


# -- the command line -------------------------------------------------------------------------------


def test_cli(sheet: StyleSheet, root: Path, stet: Run, tmp_path: Path) -> None:
    first = add(sheet, "Tried threads", "ruled-out")
    second = add(sheet, "Use the retry helper", "convention")
    third = add(sheet, "scratch", "note")

    code, out, err = stet("graduate", first.id, "--to", "trajectory", "-C", str(root), "--json")
    assert (code, err) == (0, "")
    done = json.loads(out)
    assert set(done) == RESULT_KEYS and done["entry"]["status"] == "graduated-trajectory"

    code, out, _ = stet("graduate", "--review", "-C", str(root), "--json")
    listed = json.loads(out)
    assert set(listed) == {"version", "target", "document", "proposals"}
    assert listed["proposals"] == [
        {
            "id": second.id,
            "route": "skill",
            "skill": "retry-helper",
            "reason": "a convention is house style",
        },
        {
            "id": third.id,
            "route": "trajectory",
            "skill": None,
            "reason": "part of the record of this work",
        },
    ]
    code, out, _ = stet("graduate", "--review", "-C", str(root))
    assert out == listed["document"]
    reviewed = tmp_path / "review.md"
    reviewed.write_text(out.replace(f"[ ] {second.id}", f"[x] {second.id}"))
    code, out, _ = stet("graduate", "--apply", str(reviewed), "-C", str(root), "--json")
    applied = json.loads(out)
    assert set(applied) == {"version", "target", "results"}
    assert [r["skill"]["path"] for r in applied["results"]] == [
        ".stet/skills/retry-helper/SKILL.md"
    ]

    code, out, _ = stet("graduate", third.id, "--to", "discard", "-C", str(root))
    assert (code, out) == (0, f"{third.id}: discarded\n")
    code, _, err = stet("graduate", "nosuch", "--to", "discard", "-C", str(root))
    assert code == 1 and "no entry with id 'nosuch'" in err
    for usage in ([], [first.id], ["--review", "--to", "skill"], [first.id, "--review"]):
        code, _, err = stet("graduate", *usage, "-C", str(root))
        assert code == 2, usage


def test_a_review_that_cannot_be_read_says_what_to_do(
    root: Path, stet: Run, tmp_path: Path
) -> None:
    missing, latin = tmp_path / "missing.md", tmp_path / "latin.md"
    latin.write_bytes(b"- [x] caf\xe9")
    code, _, err = stet("graduate", "--apply", str(missing), "-C", str(root))
    assert (code, err) == (
        1,
        f"stet: error: {missing}: no such file (`stet graduate --review > FILE` writes a review)\n",
    )
    code, _, err = stet("graduate", "--apply", str(latin), "-C", str(root))
    assert (code, err) == (
        1,
        f"stet: error: {latin} is not UTF-8 (line 1, column 10): save the review as UTF-8; "
        "nothing was changed\n",
    )


def test_a_decision_is_shown_as_which_entry_went_where(
    sheet: StyleSheet, root: Path, stet: Run
) -> None:
    from stet_lsp.trajectory.index import TrajectoryIndex

    ruled = add(sheet, "Tried threads", "ruled-out")
    convention = add(sheet, "Use the retry helper", "convention")
    thought = add(sheet, "scratch", "note")
    graduate(sheet, ruled.id, "trajectory", text="Tried threads: the GIL")
    graduate(sheet, convention.id, "skill", skill_name="retries")
    graduate(sheet, thought.id, "discard")
    wanted = [
        f"[ruled-out] {ruled.id} → the trajectory (text edited)",
        f"[convention] {convention.id} → skill retries",
        f"[note] {thought.id} → discarded",
    ]
    code, out, _ = stet("trajectory", "show", "-C", str(root))
    rows = [row for row in out.splitlines() if "  graduation  " in row]
    assert code == 0 and [row.split("graduation", 1)[1].strip() for row in rows] == wanted
    code, out, _ = stet("trajectory", "show", "--json", "-C", str(root))
    steps = json.loads(out)["steps"]
    assert [step["summary"] for step in steps if step["kind"] == "graduation"] == wanted
    # The editor's lenses and outline say the same.
    text = (working_folder(sheet.target).path / "events.jsonl").read_text()
    index = TrajectoryIndex.from_events_text(text)
    assert [line.summary for line in index.steps if line.kind == "graduation"] == wanted


def test_apply_refuses_a_review_without_its_header(
    sheet: StyleSheet, root: Path, tmp_path: Path, stet: Run
) -> None:
    entry = add(sheet, "Tried threads", "ruled-out")
    reviewed = tmp_path / "review.md"
    reviewed.write_text(f"- [x] {entry.id} → trajectory — Tried threads\n")
    before = sheet.path.read_bytes()
    code, out, err = stet("graduate", "--apply", str(reviewed), "-C", str(root))
    assert (code, out) == (1, "")
    assert err.startswith("stet: error: this review has no header naming its target (`<!-- stet-")
    assert err.endswith("; nothing was changed\n")
    assert sheet.path.read_bytes() == before and status(sheet, entry) == "open"
    assert not working_folder(sheet.target).path.exists()


def test_retarget_skill_names_the_committed_trajectory_for_the_working_one(
    sheet: StyleSheet, root: Path
) -> None:
    entry = add(sheet, "Wrap errors with context.", kind="convention")
    graduate(sheet, entry.id, "skill", skill_name="error-wrapping")
    path = root / ".stet/skills/error-wrapping/SKILL.md"
    key = sheet.target.key
    text = path.read_text(encoding="utf-8").replace(
        f'stet-trajectory: "{key}"', f'stet-trajectory: "2026-01-01-main-aaaaaaaaaaaa {key}"'
    )

    rewritten = retarget_skill(
        text, "error-wrapping", (key,), "2026-03-01-main-bbbbbbbbbbbb", GateConfig()
    )

    trajectories = frontmatter(rewritten)["metadata"]["stet-trajectory"]
    assert trajectories == "2026-01-01-main-aaaaaaaaaaaa 2026-03-01-main-bbbbbbbbbbbb"
    assert rewritten.split("---\n", 2)[2] == text.split("---\n", 2)[2]  # the body as written
    assert validate_skill(rewritten, folder="error-wrapping") == []
    # a skill that does not name the working trajectory is returned as it is
    assert retarget_skill(rewritten, "error-wrapping", (key,), "x", GateConfig()) == rewritten
    with pytest.raises(StetError):
        retarget_skill("no frontmatter\n", "error-wrapping", (key,), "x", GateConfig())


def test_unstaged_changes_to_a_skill_stay_unstaged(sheet: StyleSheet, root: Path) -> None:
    """Graduating into a skill whose SKILL.md has unstaged changes stages the index's own
    version with the new entry: the person's changes stay unstaged (and out of the capstone),
    and the work tree keeps them with the entry added too."""
    first = add(sheet, "Wrap errors with wrap_error(). Never raise bare.", "convention")
    name = graduate(sheet, first.id, "skill", now=NOW)["skill"]["name"]
    path = root / f".stet/skills/{name}/SKILL.md"
    staged_before = path.read_text()
    path.write_text(staged_before + "\nWIP: my own notes, not for commit.\n")
    second = add(sheet, "Log the wrapped error once, at the top.", "convention")

    done = graduate(sheet, second.id, "skill", skill_name=name, now=NOW)

    assert done["staged"] == [f".stet/skills/{name}/SKILL.md"]
    repository = pygit2.Repository(str(root))
    blob = repository.get(repository.index[f".stet/skills/{name}/SKILL.md"].id)
    assert isinstance(blob, pygit2.Blob)
    staged = blob.data.decode()
    assert "Log the wrapped error once" in staged and "WIP" not in staged
    assert validate_skill(staged, folder=name) == []
    worked = path.read_text()
    assert "Log the wrapped error once" in worked and "WIP: my own notes" in worked


# -- a skill deleted on purpose ------------------------------------------------------------------


def _commit_index(repo: pygit2.Repository, message: str) -> None:
    signature = pygit2.Signature("Stet tests", "tests@stet.invalid", 1_700_000_000, 0)
    tree = repo.index.write_tree()
    repo.create_commit("HEAD", signature, signature, message, tree, [repo.head.target])


def removed_http_calls(sheet: StyleSheet) -> tuple[pygit2.Repository, Path]:
    """The skill http-calls graduated into, committed, then its file removed: the repository
    and the file's path."""
    root = sheet.target.root
    repo = pygit2.Repository(str(root))
    first = add(sheet, "HTTP calls go through payments.http.session()", "convention")
    graduate(sheet, first.id, "skill", "http-calls")
    _commit_index(repo, "Add the http-calls skill")
    path = root / ".stet/skills/http-calls/SKILL.md"
    path.unlink()
    return repo, path


def refused_as_deleted(sheet: StyleSheet, stet: Run, entry: Entry, how: str) -> None:
    """Graduating `entry` into the skill http-calls, on the command line or by a review, is
    refused as a skill deleted on purpose (`how`), and changes nothing."""
    root = sheet.target.root
    index = Path(pygit2.Repository(str(root)).path) / "index"
    index_before = index.read_bytes()
    code, _, err = into_http_calls(stet, root, entry)
    assert code != 0 and f"the skill http-calls was deleted ({how})" in err
    assert "--recreate" in err and "nothing was changed" in err
    assert status(sheet, entry) == "open"
    assert not (root / ".stet/skills/http-calls/SKILL.md").exists()
    assert index.read_bytes() == index_before
    checked = review(sheet).replace(f"[ ] {entry.id} → skill:", f"[x] {entry.id} → skill:")
    checked = re.sub(rf"(\[x\] {entry.id} → skill:)[a-z0-9-]+", r"\1http-calls", checked)
    with pytest.raises(StetError, match=r"line [0-9]+: the skill http-calls was deleted"):
        apply_review(sheet, checked)
    assert status(sheet, entry) == "open"


def into_http_calls(stet: Run, root: Path, entry: Entry, *extra: str) -> tuple[int, str, str]:
    """`stet graduate ENTRY --to skill --skill http-calls`, with `extra`."""
    return stet(
        "graduate", entry.id, "--to", "skill", "--skill", "http-calls", *extra, "-C", str(root)
    )


def test_a_skill_deleted_on_purpose_is_not_made_again_unless_asked(
    sheet: StyleSheet, root: Path, stet: Run
) -> None:
    """A skill someone removed in a commit (or whose removal is staged) is not brought back by
    the next entry graduated under its name: refused, nothing changed, until --recreate."""
    repo, path = removed_http_calls(sheet)
    repo.index.remove(".stet/skills/http-calls/SKILL.md")
    repo.index.write()
    staged = add(sheet, "HTTP calls time out after five seconds", "convention")
    code, _, err = into_http_calls(stet, root, staged)
    assert code != 0 and "the skill http-calls was deleted (its deletion is staged)" in err
    _commit_index(repo, "Drop the http-calls skill\n\nIt was wrong.")
    dropped = repo.head.peel(pygit2.Commit).short_id

    how = f"in commit {dropped}, 'Drop the http-calls skill'"
    refused_as_deleted(sheet, stet, staged, how)

    code, out, err = into_http_calls(stet, root, staged, "--recreate")
    assert code == 0, err
    assert "http-calls" in out and status(sheet, staged) == "graduated-skill"
    text = path.read_text(encoding="utf-8")
    assert "five seconds" in text and "payments.http.session" not in text
    repo.index.read()
    assert ".stet/skills/http-calls/SKILL.md" in repo.index


def test_a_skill_removed_from_the_work_tree_alone_is_deleted_on_purpose(
    sheet: StyleSheet, root: Path, stet: Run
) -> None:
    """A skill removed with a plain `rm` (git still tracks it) is not written again by the next
    entry graduated under its name; --recreate makes it anew, staged as the work tree has it."""
    repo, path = removed_http_calls(sheet)
    again = add(sheet, "HTTP calls time out after five seconds", "convention")
    refused_as_deleted(sheet, stet, again, "from the work tree, its deletion not staged")

    code, _, err = into_http_calls(stet, root, again, "--recreate")
    assert code == 0, err
    text = path.read_text(encoding="utf-8")
    assert "five seconds" in text and "payments.http.session" not in text
    repo.index.read()
    blob = repo.get(repo.index[".stet/skills/http-calls/SKILL.md"].id)
    assert isinstance(blob, pygit2.Blob) and blob.data.decode("utf-8") == text


def test_a_skill_a_sparse_checkout_leaves_out_is_not_taken_for_deleted(
    sheet: StyleSheet, root: Path, stet: Run
) -> None:
    """A skill missing from the work tree only because a sparse checkout leaves it out (git's
    index marks it skip-worktree) was refused as deleted on purpose, with --recreate offered,
    which would have written it over what git holds of it. It is refused, naming the sparse
    checkout and how to include it, with --recreate too, and nothing changes."""
    repo = pygit2.Repository(str(root))
    first = add(sheet, "HTTP calls go through payments.http.session()", "convention")
    graduate(sheet, first.id, "skill", "http-calls")
    _commit_index(repo, "Add the http-calls skill")
    skip_worktree(repo, ".stet/skills/http-calls/SKILL.md")
    index = Path(repo.path) / "index"
    index_before = index.read_bytes()
    again = add(sheet, "HTTP calls time out after five seconds", "convention")
    # marked by hand, with no sparse checkout: `git sparse-checkout add` would fail
    code, _, err = into_http_calls(stet, root, again)
    assert code != 0 and "nothing was changed" in err
    assert (
        "the skill http-calls is marked skip-worktree in git's index (.stet/skills/http-calls/"
        "SKILL.md is left out of the work tree): bring it back (git update-index "
        "--no-skip-worktree .stet/skills/http-calls/SKILL.md && git checkout -- "
        ".stet/skills/http-calls/SKILL.md) and graduate again"
    ) in err
    repo.config["core.sparseCheckout"] = True
    said = (
        "the skill http-calls is outside the sparse checkout (.stet/skills/http-calls/SKILL.md "
        "is left out of the work tree): include it (git sparse-checkout add "
        ".stet/skills/http-calls) and graduate again"
    )
    for extra in [(), ("--recreate",)]:
        code, _, err = into_http_calls(stet, root, again, *extra)
        assert code != 0 and said in err and "nothing was changed" in err
        assert "was deleted" not in err
    checked = review(sheet).replace(f"[ ] {again.id} → skill:", f"[x] {again.id} → skill:")
    checked = re.sub(rf"(\[x\] {again.id} → skill:)[a-z0-9-]+", r"\1http-calls", checked)
    for recreate in [False, True]:
        with pytest.raises(StetError, match=rf"line [0-9]+: {re.escape(said)}"):
            apply_review(sheet, checked, recreate=recreate)
    assert status(sheet, again) == "open"
    assert not (root / ".stet/skills/http-calls/SKILL.md").exists()
    assert index.read_bytes() == index_before


def test_a_skill_a_sparse_index_leaves_out_is_refused_for_the_sparse_checkout(
    sheet: StyleSheet, root: Path, stet: Run
) -> None:
    """git's own sparse checkout, with a sparse index (which libgit2 can neither write nor
    read: git's command line makes it): the refusal names the sparse checkout first, not
    the index that could not be read."""
    repo = pygit2.Repository(str(root))
    first = add(sheet, "HTTP calls go through payments.http.session()", "convention")
    graduate(sheet, first.id, "skill", "http-calls")
    _commit_index(repo, "Add the http-calls skill")
    skill = root / ".stet/skills/http-calls/SKILL.md"
    # Older than the index, or git takes the file for changed since it was staged (racily
    # clean) and leaves it in the work tree.
    os.utime(skill, (1_700_000_000, 1_700_000_000))
    git = ["git", "-C", str(root)]
    subprocess.run([*git, "update-index", "-q", "--refresh"], check=True, capture_output=True)
    sparse = ["sparse-checkout", "set", "--cone", "--sparse-index", "src"]
    subprocess.run([*git, *sparse], check=True, capture_output=True)
    assert not skill.exists()
    again = add(sheet, "HTTP calls time out after five seconds", "convention")
    code, _, err = into_http_calls(stet, root, again, "--recreate")
    assert code != 0 and "the skill http-calls is outside the sparse checkout" in err
    assert "git sparse-checkout add .stet/skills/http-calls" in err
    assert status(sheet, again) == "open"


def test_a_review_may_recreate_a_deleted_skill(sheet: StyleSheet, root: Path) -> None:
    repo = pygit2.Repository(str(root))
    first = add(sheet, "Use the retry helper for HTTP calls", "convention")
    graduate(sheet, first.id, "skill", "retry")
    _commit_index(repo, "Add the retry skill")
    (root / ".stet/skills/retry/SKILL.md").unlink()
    repo.index.remove(".stet/skills/retry/SKILL.md")
    repo.index.write()
    _commit_index(repo, "Drop the retry skill")
    again = add(sheet, "Retry with jitter", "convention")
    checked = re.sub(
        rf"\[ \] {again.id} → skill:[a-z0-9-]+", f"[x] {again.id} → skill:retry", review(sheet)
    )
    [result] = apply_review(sheet, checked, recreate=True)
    assert result["skill"]["created"] and status(sheet, again) == "graduated-skill"


# -- a value another entry holds as a secret ------------------------------------------------------

BARE = "Xq9LmTz4RwPa8v"  # no rule tells it from a word alone; `DB_PASSWORD=` makes it a secret


def test_a_value_another_entry_holds_as_a_secret_is_redacted_in_what_graduates(
    sheet: StyleSheet, root: Path
) -> None:
    """The skill's name, its text and the review, and a note in the trajectory: none holds a
    value the sheet holds as a secret elsewhere, where this entry repeats it bare."""
    add(sheet, f"DB_PASSWORD={BARE} for the staging database")
    convention = add(sheet, f"Staging connects with {BARE} through the pooler", "convention")
    note = add(sheet, f"Remember {BARE} rotates monthly")

    assert BARE not in review(sheet)
    assert BARE.lower() not in skill_proposal(sheet, convention.id)["proposed_name"]
    done = graduate(sheet, convention.id, "skill")
    name = done["skill"]["name"]
    assert BARE.lower() not in name and name == "staging-connects-through-pooler"
    text = (root / done["skill"]["path"]).read_text(encoding="utf-8")
    assert BARE not in text and "[REDACTED:secret-assignment#1]" in text
    graduate(sheet, note.id, "trajectory")
    folder = working_folder(sheet.target)
    for path in (folder.path / "sessions").glob("graduation.jsonl"):
        assert BARE not in path.read_text(encoding="utf-8")
    (note_event,) = of(events(sheet), Note)
    assert note_event.text == "Remember [REDACTED:secret-assignment#1] rotates monthly"


def test_a_staged_skill_repeating_a_value_the_sheet_holds_is_refused_by_the_capstone(
    sheet: StyleSheet, root: Path
) -> None:
    from stet_lsp.trajectory.capstone import CapstoneRefused, capstone

    repo = pygit2.Repository(str(root))
    repo.config["user.name"], repo.config["user.email"] = "Ada", "ada@example.invalid"
    add(sheet, f"DB_PASSWORD={BARE} for the staging database")
    convention = add(sheet, "Staging connects through the pooler", "convention")
    done = graduate(sheet, convention.id, "skill")
    path = root / done["skill"]["path"]
    path.write_text(path.read_text(encoding="utf-8") + f"\nIts password is {BARE}.\n")
    repo.index.add(done["skill"]["path"])
    repo.index.write()
    head = repo.head.target
    with pytest.raises(CapstoneRefused, match="repeats a value the style sheet holds as a secret"):
        capstone(sheet.target)
    assert repo.head.target == head


@pytest.mark.parametrize("state", ["MERGE_HEAD", "rebase-merge", "CHERRY_PICK_HEAD"])
def test_no_skill_is_staged_while_git_is_in_the_middle_of_an_operation(
    sheet: StyleSheet, root: Path, state: str
) -> None:
    """The merge commit, or the commit a rebase replays, would take the staged skill in: it
    waits until the operation is done; the other routes do not touch the index."""
    repo = pygit2.Repository(str(root))
    marker = Path(repo.path) / state
    if state.endswith("HEAD"):
        marker.write_text(f"{repo.head.target}\n")
    else:
        marker.mkdir()
        (marker / "head-name").write_text("refs/heads/main\n")
    index_before = (Path(repo.path) / "index").read_bytes()
    convention = add(sheet, "Use the retry helper for HTTP calls", "convention")
    with pytest.raises(StetError, match=r"is in progress: .*finish or abort it first"):
        graduate(sheet, convention.id, "skill")
    checked = review(sheet).replace(f"[ ] {convention.id}", f"[x] {convention.id}")
    with pytest.raises(StetError, match=r"line [0-9]+: a .* is in progress"):
        apply_review(sheet, checked)
    assert status(sheet, convention) == "open"
    assert (Path(repo.path) / "index").read_bytes() == index_before
    assert not (root / ".stet/skills").exists()
    graduate(sheet, convention.id, "trajectory")
    assert status(sheet, convention) == "graduated-trajectory"


def test_a_skill_write_record_a_clone_commits_refuses_graduating_into_that_skill(
    tmp_path: Path,
) -> None:
    """A repository can commit `.stet/cache/skills/<name>.staging`, the record a graduation
    keeps while it writes the skill `<name>`: graduating into that skill overwrote the file,
    then removed it. Git tracking it refuses the graduation before anything is written,
    naming the file and how to untrack it; the entry stays open."""
    from repos import hostile_clone

    relative = ".stet/cache/skills/retry.staging"
    planted = '{"garbage": 1}'
    root = hostile_clone(tmp_path, {relative: planted, "README.md": "hi\n"})
    sheet = StyleSheet(resolve_target(root))
    entry = add(sheet, "Use the retry helper", "convention")
    before = sheet.path.read_bytes()

    with pytest.raises(StetError, match=rf"{re.escape(relative)} is tracked by git") as caught:
        graduate(sheet, entry.id, "skill", skill_name="retry")
    assert f"git rm --cached {relative}" in str(caught.value)
    assert (root / relative).read_text() == planted
    assert sheet.path.read_bytes() == before
    assert not (root / ".stet/skills/retry").exists()
    assert relative in pygit2.Repository(str(root)).index


@pytest.mark.parametrize("how", ["one entry", "a review"])
def test_a_refused_graduation_into_a_skill_whose_record_git_tracks_makes_no_file(
    tmp_path: Path, stet: Run, how: str
) -> None:
    """The refusal came once the skill's lock was taken, whose file it had made in
    `.stet/cache/skills/` beside the tracked record (and a review carried out the lines
    before the skill's): a refusal changes nothing, no file either."""
    from repos import hostile_clone

    relative = ".stet/cache/skills/retry.staging"
    root = hostile_clone(tmp_path, {relative: '{"garbage": 1}', "README.md": "hi\n"})
    ids = []
    for text, kind in (("Tried urllib3's Retry directly", "ruled-out"), ("Use retry", "note")):
        code, out, err = stet("note", "add", "-C", str(root), "--json", "--kind", kind, text)
        assert code == 0, err
        ids.append(json.loads(out)["entry"]["id"])
    review = root.parent / "review.md"
    code, out, err = stet("graduate", "--review", "-C", str(root))
    assert code == 0, err
    review.write_text(
        out.replace(f"- [ ] {ids[0]} →", f"- [x] {ids[0]} →").replace(
            f"- [ ] {ids[1]} → trajectory", f"- [x] {ids[1]} → skill:retry"
        )
    )
    assert review.read_text().count("- [x]") == 2

    def files() -> dict[str, bytes]:
        return {
            path.relative_to(root).as_posix(): path.read_bytes()
            for path in sorted(root.rglob("*"))
            if path.is_file() and ".git" not in path.relative_to(root).parts
        }

    before = files()
    if how == "one entry":
        arguments = [ids[1], "--to", "skill", "--skill", "retry"]
    else:
        arguments = ["--apply", str(review)]
    code, _, err = stet("graduate", *arguments, "-C", str(root))

    assert code == 1 and f"{relative} is tracked by git" in err, err
    assert files() == before
