"""Human verdicts on steps (`.stet/feedback/<trajectory-id>.jsonl`), in real repositories with
an imported Claude Code session: through the gate, under a lock, never through a link, and
`stet trajectory mark` as a person or a harness runs it."""

from __future__ import annotations

import io
import json
import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pygit2
import pytest
from test_importing import SESSION_A, SESSION_B, START, simple_session

from stet_lsp.core.errors import StetError
from stet_lsp.core.sheet import StyleSheet
from stet_lsp.core.targets import resolve_target
from stet_lsp.gate import scan_text
from stet_lsp.trajectory.feedback import (
    MAX_TEXT,
    Verdict,
    current_step,
    feedback_path,
    mark_step,
    moved_lines,
    read_feedback,
    read_verdicts,
    to_sheet,
)
from stet_lsp.trajectory.importing import import_transcript
from stet_lsp.trajectory.store import Folder, working_folder

Run = Callable[..., tuple[int, str, str]]
TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
NOW = datetime(2026, 3, 2, 10, 30, tzinfo=UTC)


def imported(root: Path, tmp_path: Path, session: str, start: datetime = START) -> Folder:
    source = simple_session(root, session, f"Add module {session[:4]}", start)
    target = resolve_target(root)
    import_transcript(target, source.save(tmp_path / f"{session}.jsonl"))
    return working_folder(target)


@pytest.fixture
def trajectory(root: Path, tmp_path: Path) -> Folder:
    """The working trajectory of one session: session_start, user_message, tool_call, usage,
    tool_result, file_change, agent_message, usage, session_end (steps 1 to 9)."""
    return imported(root, tmp_path, SESSION_A)


def feedback_file(root: Path, folder: Folder) -> Path:
    return root / ".stet" / "feedback" / f"{folder.id}.jsonl"


def lines_of(path: Path) -> list[dict[str, Any]]:
    text = path.read_text(encoding="utf-8")
    assert text.endswith("\n")
    return [json.loads(line) for line in text.split("\n")[:-1]]


# -- the file ------------------------------------------------------------------------------


def test_a_verdict_lands_in_the_feedback_file_with_the_steps_identity(
    root: Path, trajectory: Folder
) -> None:
    event = trajectory.read_events()[2]
    assert (event.step, event.kind) == (3, "tool_call")

    verdict = mark_step(root, trajectory, 3, "wrong", "  use the existing helper \n", now=NOW)

    assert lines_of(feedback_file(root, trajectory)) == [
        {
            "schema_version": "1.0",
            "trajectory": trajectory.id,
            "step": 3,
            "session": SESSION_A,
            "kind": "tool_call",
            "source": {"file": event.source.file, "line": event.source.line},
            "part": 0,
            "verdict": "wrong",
            "text": "use the existing helper",
            "author": "human",
            "time": "2026-03-02T10:30:00Z",
        }
    ]
    assert read_verdicts(root, trajectory.id) == [verdict]
    assert feedback_path(trajectory.id) == Path(".stet/feedback") / f"{trajectory.id}.jsonl"


def test_events_of_one_source_record_are_told_apart_by_their_part(
    root: Path, trajectory: Folder
) -> None:
    """session_start and user_message both come from the transcript's first line."""
    first = mark_step(root, trajectory, 1, "clever", now=NOW)
    second = mark_step(root, trajectory, 2, "clever", now=NOW)
    assert (first.source, first.part, first.kind) == (second.source, 0, "session_start")
    assert (second.part, second.kind) == (1, "user_message")


def test_the_same_verdict_twice_is_recorded_twice(root: Path, trajectory: Folder) -> None:
    for _ in range(2):
        mark_step(root, trajectory, 5, "clever", now=NOW)
    verdicts = read_verdicts(root, trajectory.id)
    assert len(verdicts) == 2 and verdicts[0] == verdicts[1]
    assert "text" not in lines_of(feedback_file(root, trajectory))[0]


def test_a_verdict_finds_its_step_again_after_the_steps_are_renumbered(
    root: Path, tmp_path: Path, trajectory: Folder
) -> None:
    verdict = mark_step(root, trajectory, 3, "wrong", "no", now=NOW)
    # A session that started an hour earlier is composed first: every step moves by nine.
    imported(root, tmp_path, SESSION_B, START - timedelta(hours=1))
    assert trajectory.read_events()[2].session == SESSION_B
    assert current_step(trajectory, verdict) == 12
    assert trajectory.read_events()[11].kind == "tool_call"


def test_a_step_marked_in_an_unsaved_narration_is_the_one_its_line_shows(
    root: Path, tmp_path: Path, trajectory: Folder
) -> None:
    """narration.md open with unsaved text while an earlier session is imported: the steps
    on disk are numbered again, the editor's are not. A verdict on a line of the editor's
    text is refused (the step's opening line on disk is another event's), never recorded on
    the event now holding its number; the text as it is on disk marks it."""
    from stet_lsp.trajectory.operations import mark_at

    narration = trajectory.path / "narration.md"
    shown = narration.read_text(encoding="utf-8")
    line = next(n for n, text in enumerate(shown.split("\n")) if "Step 3 · Tool call" in text)
    target = resolve_target(root)
    unsaved = shown + "\n"
    assert mark_at(target, narration, unsaved, line, "note", "before").step == 3

    imported(root, tmp_path, SESSION_B, START - timedelta(hours=1))
    with pytest.raises(StetError, match="changed on disk since the editor read it"):
        mark_at(target, narration, unsaved, line, "wrong", None)
    assert [v.verdict for v in read_verdicts(root, trajectory.id)] == ["note"]

    reloaded = narration.read_text(encoding="utf-8")
    line = next(n for n, text in enumerate(reloaded.split("\n")) if "Step 12 · Tool call" in text)
    marked = mark_at(target, narration, reloaded + "\n", line, "wrong", None)
    assert (marked.step, marked.kind, marked.session) == (12, "tool_call", SESSION_A)


def test_a_calls_line_that_gained_its_results_anchor_is_the_same_step(
    root: Path, trajectory: Folder
) -> None:
    """The narration shows a call and its result on one line, each with its anchor: a call
    whose result came in a later import gains the result's anchor. The editor's text from
    before is the same step: marked, not refused as renumbered."""
    import re

    from stet_lsp.trajectory.operations import mark_at

    narration = trajectory.path / "narration.md"
    disk = narration.read_text(encoding="utf-8")
    pair = re.compile(r'(<a id="step-(\d+)"></a>)<a id="step-\d+"></a>')
    line = next(n for n, text in enumerate(disk.split("\n")) if pair.match(text))
    found = pair.match(disk.split("\n")[line])
    assert found is not None
    shown = "\n".join(
        pair.sub(r"\1", text, count=1) if n == line else text
        for n, text in enumerate(disk.split("\n"))
    )
    marked = mark_at(resolve_target(root), narration, shown + "\n", line, "clever", None)
    assert marked.step == int(found[2])


def test_no_verdicts_yet_is_an_empty_list(root: Path, trajectory: Folder) -> None:
    assert read_verdicts(root, trajectory.id) == []
    assert not (root / ".stet" / "feedback").exists()


def test_lines_that_are_not_verdicts_are_skipped_and_reported(
    root: Path, trajectory: Folder
) -> None:
    mark_step(root, trajectory, 2, "note", "first", now=NOW)
    path = feedback_file(root, trajectory)
    with path.open("a", encoding="utf-8") as stream:
        stream.write('not json\n{"verdict": "wrong"}\n\n{"schema_version": "1.0"}')  # no "\n"
    mark_step(root, trajectory, 4, "note", "second", now=NOW)

    feedback = read_feedback(root, trajectory.id)
    assert [verdict.text for verdict in feedback.verdicts] == ["first", "second"]
    assert [skipped.line for skipped in feedback.skipped] == [2, 3, 5]
    assert all(skipped.message for skipped in feedback.skipped)


def test_a_verdict_line_of_another_shape_is_no_verdict() -> None:
    base = {
        "trajectory": "t",
        "step": 1,
        "session": "s",
        "kind": "user_message",
        "source": {"file": "a.jsonl", "line": 1},
        "time": "2026-03-02T10:30:00Z",
    }
    Verdict.model_validate({**base, "verdict": "clever"})
    for bad in (
        {"verdict": "note"},  # a note without text
        {"verdict": "great"},
        {"verdict": "wrong", "time": "yesterday"},
        {"verdict": "wrong", "step": 0},
        {"verdict": "wrong", "extra": 1},
    ):
        with pytest.raises(ValueError):
            Verdict.model_validate({**base, **bad})


# -- the gate ------------------------------------------------------------------------------


def test_a_secret_in_the_text_is_redacted_before_it_is_written(
    root: Path, trajectory: Folder
) -> None:
    verdict = mark_step(root, trajectory, 3, "wrong", f"it pasted {TOKEN} into the call")

    data = feedback_file(root, trajectory).read_text(encoding="utf-8")
    assert TOKEN[4:12] not in data and TOKEN not in (verdict.text or "")
    assert verdict.text == "it pasted [REDACTED:github-token#1] into the call"
    assert read_verdicts(root, trajectory.id) == [verdict]
    assert scan_text(data, path="feedback.jsonl") == []


def test_a_home_path_in_the_text_becomes_a_tilde(root: Path, trajectory: Folder) -> None:
    verdict = mark_step(root, trajectory, 3, "note", "see /home/alice/notes.txt", now=NOW)
    assert verdict.text == "see ~/notes.txt"


# -- what is refused -----------------------------------------------------------------------


def test_an_unknown_step_is_a_clear_error_and_writes_nothing(
    root: Path, trajectory: Folder
) -> None:
    with pytest.raises(StetError, match=r"has no step 10 \(its steps are 1 to 9\)"):
        mark_step(root, trajectory, 10, "wrong")
    for step in (0, -1, True):
        with pytest.raises(StetError, match="whole number from 1"):
            mark_step(root, trajectory, step, "wrong")
    assert not (root / ".stet" / "feedback").exists()


def test_a_bad_verdict_or_author_is_refused(root: Path, trajectory: Folder) -> None:
    with pytest.raises(StetError, match=r"unknown verdict 'great' \(expected one of: wrong"):
        mark_step(root, trajectory, 3, "great")
    with pytest.raises(StetError, match="unknown author 'robot'"):
        mark_step(root, trajectory, 3, "wrong", author="robot")
    assert not (root / ".stet" / "feedback").exists()


def test_a_note_needs_a_text(root: Path, trajectory: Folder) -> None:
    for text in (None, "", "  \n "):
        with pytest.raises(StetError, match="a note needs a text"):
            mark_step(root, trajectory, 3, "note", text)
    with pytest.raises(StetError, match="at most"):
        mark_step(root, trajectory, 3, "note", "x" * (MAX_TEXT + 1))
    assert not (root / ".stet" / "feedback").exists()


def test_a_lone_surrogate_in_the_text_is_replaced(root: Path, trajectory: Folder) -> None:
    """What a non-UTF-8 command-line argument becomes in Python."""
    verdict = mark_step(root, trajectory, 3, "note", "bad \udcff byte")
    assert verdict.text == "bad \ufffd byte"
    feedback_file(root, trajectory).read_text(encoding="utf-8")


def test_a_trajectory_id_that_names_no_file_is_refused(root: Path) -> None:
    for bad in ("", "..", "a/b", "..\\x", "a\0b"):
        with pytest.raises(StetError, match="is not a trajectory id"):
            read_verdicts(root, bad)


def test_a_link_at_the_feedback_folder_is_refused_and_nothing_is_written_outside(
    root: Path, tmp_path: Path, trajectory: Folder
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / ".stet" / "feedback").symlink_to(outside, target_is_directory=True)
    with pytest.raises(StetError, match="symbolic link"):
        mark_step(root, trajectory, 3, "wrong", "no")
    with pytest.raises(StetError, match="symbolic link"):
        read_verdicts(root, trajectory.id)
    assert list(outside.iterdir()) == []


def test_a_link_at_the_feedback_file_is_refused_and_its_target_unchanged(
    root: Path, tmp_path: Path, trajectory: Folder
) -> None:
    outside = tmp_path / "elsewhere.jsonl"
    outside.write_text("keep\n")
    (root / ".stet" / "feedback").mkdir()
    feedback_file(root, trajectory).symlink_to(outside)
    with pytest.raises(StetError, match="symbolic link"):
        mark_step(root, trajectory, 3, "wrong", "no")
    assert outside.read_text() == "keep\n"
    assert feedback_file(root, trajectory).is_symlink()


# -- concurrency ---------------------------------------------------------------------------


def test_concurrent_writers_lose_nothing(root: Path, trajectory: Folder) -> None:
    errors: list[BaseException] = []

    def writer(number: int) -> None:
        try:
            for count in range(6):
                mark_step(root, trajectory, 1 + count, "note", f"writer {number} mark {count}")
        except BaseException as error:  # reported below, not lost in the thread
            errors.append(error)

    threads = [threading.Thread(target=writer, args=(number,)) for number in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert errors == []
    feedback = read_feedback(root, trajectory.id)
    assert feedback.skipped == []
    texts = sorted(verdict.text or "" for verdict in feedback.verdicts)
    assert texts == sorted(f"writer {n} mark {c}" for n in range(6) for c in range(6))
    # The lock lives in the cache; the committed folder holds the feedback file only.
    assert [path.name for path in (root / ".stet" / "feedback").iterdir()] == [
        f"{trajectory.id}.jsonl"
    ]


# -- the style sheet -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("verdict", "text", "kind", "entry_text"),
    [
        ("wrong", "retried forever", "markup", "Step {} was wrong: retried forever"),
        ("clever", None, "convention", "Step {} was clever."),
        ("note", "ask first", "note", "Note on step {}: ask first"),
    ],
)
def test_a_verdict_goes_to_the_current_targets_style_sheet(
    root: Path, trajectory: Folder, verdict: str, text: str | None, kind: str, entry_text: str
) -> None:
    marked = mark_step(root, trajectory, 3, verdict, text)
    entry = to_sheet(StyleSheet(resolve_target(root)), marked)
    assert (entry["kind"], entry["author"], entry["status"]) == (kind, "human", "open")
    assert entry["text"] == entry_text.format(f"3 (tool_call) of trajectory {trajectory.id}")
    entries = StyleSheet(resolve_target(root)).entries()
    assert [(e.id, e.kind, e.text) for e in entries] == [(entry["id"], kind, entry["text"])]
    assert f"- {entry['text']}\n" in StyleSheet(resolve_target(root)).brief().text  # next run


def test_the_style_sheet_gets_the_redacted_text(root: Path, trajectory: Folder) -> None:
    to_sheet(
        StyleSheet(resolve_target(root)), mark_step(root, trajectory, 3, "wrong", f"leaked {TOKEN}")
    )
    sheet = StyleSheet(resolve_target(root))
    assert TOKEN[4:12] not in sheet.read_text()


# -- the command line ----------------------------------------------------------------------


def mark(stet: Run, root: Path, *args: str) -> tuple[int, str, str]:
    return stet("trajectory", "mark", *args, "-C", str(root))


def test_mark_prints_what_it_recorded(stet: Run, root: Path, trajectory: Folder) -> None:
    prefix = trajectory.id[:10]
    code, out, err = mark(stet, root, prefix, "3", "--verdict", "wrong", "--text", "use the helper")
    assert (code, err) == (0, "")
    assert out == (
        f"step 3 of {trajectory.id}: wrong: use the helper\n"
        f"  recorded in .stet/feedback/{trajectory.id}.jsonl\n"
    )
    assert [v.text for v in read_verdicts(root, trajectory.id)] == ["use the helper"]


def test_mark_note_without_its_text_names_the_option(
    stet: Run, root: Path, trajectory: Folder
) -> None:
    """`--verdict note` with no `--text` said only "a note needs a text": it names the option."""
    code, out, err = mark(stet, root, trajectory.id, "3", "--verdict", "note")
    assert (code, out) == (1, "")
    assert err == (
        "stet: error: --verdict note needs its text: --text TEXT (`-` reads standard input)\n"
    )
    assert read_verdicts(root, trajectory.id) == []


def test_mark_note_to_sheet_adds_the_entry(stet: Run, root: Path, trajectory: Folder) -> None:
    code, out, err = mark(
        stet, root / "src", trajectory.id, "5", "--verdict", "clever", "--note-to-sheet"
    )
    assert (code, err) == (0, "")
    entries = StyleSheet(resolve_target(root)).entries()
    assert len(entries) == 1 and entries[0].kind == "convention"
    assert out.splitlines()[-1] == f"  style sheet entry {entries[0].id} (convention)"


def test_mark_note_to_sheet_refuses_a_sheet_git_tracks_before_the_verdict(
    stet: Run, root: Path, trajectory: Folder
) -> None:
    """A sheet the index holds is not written: the verdict is not recorded either, so the
    mark is all or nothing, and the same mark without --note-to-sheet is recorded."""
    sheet = StyleSheet(resolve_target(root))
    sheet.add("staged with the rest")
    relative = sheet.path.relative_to(root).as_posix()
    repo = pygit2.Repository(str(root))
    repo.index.add(relative)  # git add -f
    repo.index.write()
    before = sheet.path.read_bytes()
    code, out, err = mark(stet, root, trajectory.id, "5", "--verdict", "clever", "--note-to-sheet")
    assert (code, out) == (1, "")
    assert f"git's index holds {relative}" in err and f"git rm --cached {relative}" in err
    assert sheet.path.read_bytes() == before
    assert read_verdicts(root, trajectory.id) == []
    assert not feedback_file(root, trajectory).exists()
    assert mark(stet, root, trajectory.id, "5", "--verdict", "clever")[0] == 0
    assert [v.verdict for v in read_verdicts(root, trajectory.id)] == ["clever"]


def test_mark_json_is_the_documented_shape(stet: Run, root: Path, trajectory: Folder) -> None:
    """`stet trajectory mark ID STEP --verdict V [--text T] [--note-to-sheet] --json` prints
    {"version": 1, "verdict": the line written to the feedback file, "entry": the style
    sheet entry as `note add --json` shows it, or null without --note-to-sheet}."""
    code, out, err = mark(
        stet, root, trajectory.id, "2", "--verdict", "note", "--text", "ask first", "--json"
    )
    assert (code, err) == (0, "")
    document = json.loads(out)
    assert set(document) == {"version", "verdict", "entry"}
    assert document["version"] == 1 and document["entry"] is None
    assert document["verdict"] == lines_of(feedback_file(root, trajectory))[0]
    assert document["verdict"]["kind"] == "user_message"

    code, out, err = mark(
        stet, root, trajectory.id, "2", "--verdict", "wrong", "--note-to-sheet", "--json"
    )
    assert (code, err) == (0, "")
    entry = json.loads(out)["entry"]
    assert set(entry) >= {"id", "kind", "author", "status", "text", "created", "anchor"}
    assert (entry["kind"], entry["author"]) == ("markup", "human")


def test_mark_reads_the_text_from_standard_input(
    stet: Run, root: Path, trajectory: Folder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("line one\nline two\n"))
    code, _, err = mark(stet, root, trajectory.id, "7", "--verdict", "note", "--text", "-")
    assert (code, err) == (0, "")
    assert [v.text for v in read_verdicts(root, trajectory.id)] == ["line one\nline two"]


def test_mark_refuses_bad_input_and_writes_nothing(
    stet: Run, root: Path, trajectory: Folder
) -> None:
    code, out, err = mark(stet, root, trajectory.id, "99", "--verdict", "wrong")
    assert (code, out) == (1, "")
    assert "has no step 99 (its steps are 1 to 9); nothing was written" in err

    code, out, err = mark(stet, root, "nosuch", "1", "--verdict", "wrong")
    assert (code, out) == (1, "")
    assert "no trajectory 'nosuch'" in err

    code, _, err = mark(stet, root, trajectory.id, "1", "--verdict", "great")
    assert code == 2 and "invalid choice: 'great'" in err

    code, _, err = mark(stet, root, trajectory.id, "1", "--verdict", "note", "--text", " ")
    assert code == 1 and "a note needs a text" in err
    assert not (root / ".stet" / "feedback").exists()


# -- moved at the capstone -----------------------------------------------------------------


def test_moved_lines_name_the_committed_id_and_keep_everything_else(
    root: Path, trajectory: Folder
) -> None:
    mark_step(root, trajectory, 3, "note", text="naïve, façade", now=NOW)
    path = feedback_file(root, trajectory)
    other = '{"trajectory":"someone-else","step":1}'
    path.write_text(path.read_text(encoding="utf-8") + f"\nnot json\n{other}\n", encoding="utf-8")

    moved = moved_lines(path.read_bytes(), trajectory.id, "2026-03-01-main-0123456789ab")

    assert len(moved) == 3 and moved[1:] == ["not json", other]
    verdict = Verdict.model_validate_json(moved[0])
    assert verdict.trajectory == "2026-03-01-main-0123456789ab"
    assert verdict.text == "naïve, façade"
    assert moved[0] == verdict.line()  # written as mark_step writes
    with pytest.raises(StetError):
        moved_lines(path.read_bytes(), trajectory.id, "../elsewhere")
