"""A session that goes on after a capstone, imported again (as the Stop hook does at the end of
every turn), in real repositories made with pygit2: what the committed trajectory holds is left
out, so the next capstone commits only the work done since, and no step twice."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from claude_transcript import Transcript
from repos import make_repo

from stet_lsp.core.errors import StetError
from stet_lsp.core.sheet import StyleSheet
from stet_lsp.core.targets import Target, resolve_target
from stet_lsp.trajectory.capstone import CapstoneRefused, capstone
from stet_lsp.trajectory.graduation import graduate
from stet_lsp.trajectory.importing import import_transcript
from stet_lsp.trajectory.sessions import claude_project_folder
from stet_lsp.trajectory.store import working_folder

Run = Callable[..., tuple[int, str, str]]
SESSION = "aaaaaaaa-1111-4222-8333-444455556666"


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    made = make_repo(tmp_path / "repo", files={"src/app.py": "x = 1\n"})
    made.config["user.name"] = "Ada Reviewer"
    made.config["user.email"] = "ada@example.invalid"
    monkeypatch.chdir(tmp_path)
    return Path(made.workdir)


def first_turn(root: Path) -> Transcript:
    return (
        Transcript(root, SESSION)
        .user("Add a health check endpoint")
        .write_file("toolu_1", f"{root}/src/health.py", "ok = 1\n")
        .say("Added src/health.py.")
    )


def second_turn(transcript: Transcript, root: Path) -> Transcript:
    return (
        transcript.user("Now make it return the version")
        .write_file("toolu_2", f"{root}/src/version.py", "VERSION = '1.0'\n")
        .say("Added src/version.py.")
    )


def committed_events(root: Path, trajectory: str) -> list[dict[str, object]]:
    text = (root / ".stet" / "trajectories" / trajectory / "events.jsonl").read_text()
    return [json.loads(line) for line in text.splitlines()]


def kinds_and_lines(events: list[dict[str, object]]) -> list[tuple[object, object]]:
    return [(e["kind"], e["source"]["line"]) for e in events]  # type: ignore[index]


def test_a_session_imported_again_after_a_capstone_brings_only_what_came_since(
    root: Path, tmp_path: Path
) -> None:
    target = resolve_target(root)
    transcript = first_turn(root)
    source = transcript.save(tmp_path / f"{SESSION}.jsonl")
    import_transcript(target, source)
    first = capstone(target)
    held = committed_events(root, first.trajectory)
    last_line = max(int(e["source"]["line"]) for e in held)  # type: ignore[index]

    second_turn(transcript, root).save(source)
    result = import_transcript(target, source)

    assert result.continues == [first.trajectory]
    assert result.to_json()["continues"] == [first.trajectory]
    working = working_folder(target).read_events()
    assert working[0].kind == "session_start"
    assert all(e.source.line > last_line for e in working[1:])
    # every committed event but the session's start, and its end, which has moved on
    assert result.dropped["committed"] == len(held) - 2
    meta = working_folder(target).read_meta()
    assert meta.brief == "Now make it return the version"
    assert [f.path for f in meta.files] == ["src/version.py"]

    second = capstone(target)
    again = committed_events(root, second.trajectory)
    assert second.supersedes is not None and second.supersedes.trajectory == first.trajectory
    # every record of the session is committed once, but the session's start
    repeated = set(kinds_and_lines(held)) & set(kinds_and_lines(again))
    assert repeated == {("session_start", held[0]["source"]["line"])}  # type: ignore[index]


def test_a_committed_line_nested_too_deeply_is_skipped_when_importing_again(
    root: Path, tmp_path: Path
) -> None:
    """A committed events.jsonl holding a line nested deeper than json decodes (a
    RecursionError, not a ValueError) is read past like any line that is not JSON."""
    target = resolve_target(root)
    transcript = first_turn(root)
    source = transcript.save(tmp_path / f"{SESSION}.jsonl")
    import_transcript(target, source)
    first = capstone(target)
    events = root / ".stet" / "trajectories" / first.trajectory / "events.jsonl"
    with events.open("a") as stream:
        stream.write('{"a":' * 5_000 + "1" + "}" * 5_000 + "\n")

    second_turn(transcript, root).save(source)
    result = import_transcript(target, source)

    assert result.continues == [first.trajectory]
    assert [f.path for f in working_folder(target).read_meta().files] == ["src/version.py"]


def test_the_same_session_again_after_its_capstone_has_nothing_to_import(
    root: Path, tmp_path: Path
) -> None:
    target = resolve_target(root)
    source = first_turn(root).save(tmp_path / f"{SESSION}.jsonl")
    import_transcript(target, source)
    # a graduation's decision makes the working trajectory differ from what is committed
    sheet = StyleSheet(target)
    graduate(sheet, sheet.add("Wrap errors with the helper.", kind="convention").id, "trajectory")
    done = capstone(target)

    with pytest.raises(StetError, match=f"committed already, in trajectory {done.trajectory}"):
        import_transcript(target, source)

    assert not working_folder(target).path.exists()
    with pytest.raises(CapstoneRefused):
        capstone(target)


def test_a_call_committed_before_its_result_keeps_the_result_after(
    root: Path, tmp_path: Path
) -> None:
    target = resolve_target(root)
    transcript = first_turn(root)
    transcript.tool("toolu_9", "Bash", {"command": "pytest -q"}, "3 passed")
    whole = [json.dumps(record) + "\n" for record in transcript.records]
    source = tmp_path / f"{SESSION}.jsonl"
    source.write_text("".join(whole[:-1]))  # the turn stopped between the call and its result
    import_transcript(target, source)
    capstone(target)

    source.write_text("".join(whole))
    import_transcript(target, source)

    kinds = [e.kind for e in working_folder(target).read_events()]
    assert kinds == ["session_start", "tool_result", "session_end"]


def test_sessions_lists_what_a_capstone_committed(
    root: Path, tmp_path: Path, stet: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    folder = home / ".claude" / "projects" / claude_project_folder(str(root))
    source = first_turn(root).save(folder / f"{SESSION}.jsonl")
    target = resolve_target(root)
    import_transcript(target, source)
    done = capstone(target)

    code, out, _ = stet("trajectory", "sessions", "--json", "-C", str(root))
    assert code == 0
    (row,) = json.loads(out)["sessions"]
    assert (row["imported"], row["committed"]) == (False, [done.trajectory])
    code, out, _ = stet("trajectory", "sessions", "-C", str(root))
    assert code == 0 and out.startswith("c ") and "(c committed:" in out


def test_the_command_line_says_what_was_left_out(root: Path, tmp_path: Path, stet: Run) -> None:
    target: Target = resolve_target(root)
    transcript = first_turn(root)
    source = transcript.save(tmp_path / f"{SESSION}.jsonl")
    import_transcript(target, source)
    first = capstone(target)
    second_turn(transcript, root).save(source)

    code, out, _ = stet("trajectory", "import", "-C", str(root), str(source))

    assert code == 0
    assert f"went on after {first.trajectory}: its " in out
    assert "dropped" not in out
