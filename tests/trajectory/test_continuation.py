"""A session that goes on after a capstone, imported again (as the Stop hook does at the end of
every turn), in real repositories made with pygit2: what the committed trajectory holds is left
out, so the next capstone commits only the work done since, and no step twice."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from claude_transcript import Transcript
from repos import make_repo

from stet_lsp.core.errors import StetError
from stet_lsp.core.locking import file_lock
from stet_lsp.core.sheet import StyleSheet
from stet_lsp.core.targets import Target, resolve_target
from stet_lsp.trajectory.capstone import CapstoneRefused, CapstoneResult, capstone
from stet_lsp.trajectory.graduation import graduate
from stet_lsp.trajectory.importing import ImportResult, import_transcript
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


def first_turn_committed(
    root: Path, tmp_path: Path
) -> tuple[Target, Transcript, Path, CapstoneResult]:
    """The first turn imported and committed by a capstone: the target, the transcript (to
    go on with), its file and the capstone."""
    target = resolve_target(root)
    transcript = first_turn(root)
    source = transcript.save(tmp_path / f"{SESSION}.jsonl")
    import_transcript(target, source)
    return target, transcript, source, capstone(target)


def committed_events(root: Path, trajectory: str) -> list[dict[str, object]]:
    text = (root / ".stet" / "trajectories" / trajectory / "events.jsonl").read_text()
    return [json.loads(line) for line in text.splitlines()]


def kinds_and_lines(events: list[dict[str, object]]) -> list[tuple[object, object]]:
    return [(e["kind"], e["source"]["line"]) for e in events]  # type: ignore[index]


def test_a_session_imported_again_after_a_capstone_brings_only_what_came_since(
    root: Path, tmp_path: Path
) -> None:
    target, transcript, source, first = first_turn_committed(root, tmp_path)
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


def test_a_committed_session_under_another_name_brings_only_what_came_since(
    root: Path, tmp_path: Path
) -> None:
    """The session's file copied under another name (or a rollout compressed since): the
    same session by its id, so what the committed trajectory holds is left out as for the
    file it read; a copy with nothing since is refused, and no step is committed twice."""
    target, transcript, source, first = first_turn_committed(root, tmp_path)
    copy = tmp_path / "copied" / "session.jsonl"
    copy.parent.mkdir()
    copy.write_bytes(source.read_bytes())
    with pytest.raises(StetError, match=f"committed already, in trajectory {first.trajectory}"):
        import_transcript(target, copy)

    second_turn(transcript, root).save(copy)
    result = import_transcript(target, copy)
    assert result.continues == [first.trajectory]
    meta = working_folder(target).read_meta()
    assert [f.path for f in meta.files] == ["src/version.py"]
    assert meta.brief == "Now make it return the version"


def test_a_committed_session_imported_again_from_another_format_is_refused(
    root: Path, tmp_path: Path, stet: Run
) -> None:
    """Stet's own ATIF export of a committed trajectory, imported: the same session by its
    id, from another format, whose records cannot be matched to the transcript's. Imported,
    every step of it would be committed twice: refused, saying which trajectory holds it."""
    target, _, _, first = first_turn_committed(root, tmp_path)
    exported = tmp_path / "exported.json"
    arguments = ["-C", str(root), "trajectory", "export", first.trajectory, "--format", "atif"]
    assert stet(*arguments, "-o", str(exported))[0] == 0
    refusal = (
        f"session {SESSION} is committed already, in trajectory {first.trajectory}, "
        "imported as claude-code; importing it again as atif would count it twice"
    )
    with pytest.raises(StetError, match=refusal):
        import_transcript(target, exported)
    assert not working_folder(target).path.exists()


def test_a_committed_line_nested_too_deeply_is_skipped_when_importing_again(
    root: Path, tmp_path: Path
) -> None:
    """A committed events.jsonl holding a line nested deeper than json decodes (a
    RecursionError, not a ValueError) is read past like any line that is not JSON."""
    target, transcript, source, first = first_turn_committed(root, tmp_path)
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


def atif_step(step_id: int, text: str) -> dict[str, object]:
    return {"step_id": step_id, "source": "user" if step_id % 2 else "agent", "message": text}


def atif_run(steps: int, cost: float) -> dict[str, object]:
    """An ATIF document of `steps` steps, an embedded subagent run and the whole run's
    reported cost, pretty-printed as Harbor writes it."""
    child = {
        "schema_version": "ATIF-v1.7",
        "session_id": "child-1",
        "agent": {"name": "claude-code", "version": "2.1.0"},
        "steps": [atif_step(1, "look around"), atif_step(2, "found it")],
    }
    return {
        "schema_version": "ATIF-v1.7",
        "session_id": "run-1",
        "agent": {"name": "claude-code", "version": "2.1.0", "model_name": "claude-opus-4-6"},
        "steps": [atif_step(n, f"step {n}") for n in range(1, steps + 1)],
        "subagent_trajectories": [child],
        "final_metrics": {"total_cost_usd": cost},
    }


def test_a_json_document_that_grew_brings_its_new_items_not_its_subagents_again(
    root: Path, tmp_path: Path
) -> None:
    """In a file that is one JSON document, a record's position is its index in its array
    (`/steps/12`), not its line (the document is written anew as it grows) nor a pointer
    compared as text (`/subagent_trajectories/0/...` would sort after every `/steps/...`).
    The whole run's reported cost is the committed part's: what is left counts its own."""
    target = resolve_target(root)
    source = tmp_path / "trajectory.json"
    source.write_text(json.dumps(atif_run(4, cost=1.5), indent=2))
    import_transcript(target, source)
    first = capstone(target)

    source.write_text(json.dumps(atif_run(7, cost=2.0), indent=2))
    result = import_transcript(target, source)

    assert result.continues == [first.trajectory]
    messages = [e.text for e in working_folder(target).read_events() if e.kind == "user_message"]
    assert messages == ["step 5", "step 7"]
    working = working_folder(target).read_events()
    assert not [e for e in working if e.source.pointer and "subagent" in e.source.pointer]
    ends = [e for e in working if e.kind == "session_end"]
    assert ends and all(e.cost_usd is None for e in ends)


def test_a_committed_trajectory_that_cannot_be_read_is_passed_over(
    root: Path, tmp_path: Path
) -> None:
    target, transcript, source, first = first_turn_committed(root, tmp_path)
    events = root / ".stet" / "trajectories" / first.trajectory / "events.jsonl"
    events.unlink()
    events.mkdir()  # a folder where the file was: read_regular refuses it

    second_turn(transcript, root).save(source)
    result = import_transcript(target, source)

    assert result.continues == [] and "committed" not in result.dropped


def test_an_import_waiting_for_a_capstone_sees_what_it_committed(
    root: Path, tmp_path: Path
) -> None:
    """A hook's import that starts while a capstone holds the working trajectory's lock reads
    the committed trajectories after the capstone, not before: else the whole session went
    into the next working trajectory, to be committed twice. The capstone is played back:
    its trajectory appears and the working one is archived while the lock is held."""
    target = resolve_target(root)
    transcript = first_turn(root)
    source = transcript.save(tmp_path / f"{SESSION}.jsonl")
    import_transcript(target, source)
    done = capstone(target)
    committed = root / ".stet" / "trajectories" / done.trajectory
    assert done.archived is not None
    # As before the capstone: its trajectory aside, the working one back.
    committed.rename(tmp_path / "committed")
    folder = working_folder(target)
    (root / done.archived).rename(folder.path)
    second_turn(transcript, root).save(source)

    results: list[ImportResult] = []
    with file_lock(folder.path, target.root, "the working trajectory"):
        waiting = threading.Thread(target=lambda: results.append(import_transcript(target, source)))
        waiting.start()
        time.sleep(0.5)  # the import has read the session and waits for the lock
        (tmp_path / "committed").rename(committed)
        folder.path.rename(root / done.archived)
    waiting.join(60)

    assert results and results[0].continues == [done.trajectory]


def test_a_session_whose_id_strict_mode_redacts_is_listed_as_committed(
    root: Path, tmp_path: Path, stet: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The committed trajectories hold the id as the gate wrote it: in strict mode, a random
    id is a marker, which the list compares the harness's id with after the same gate."""
    (root / ".stet").mkdir(exist_ok=True)
    (root / ".stet" / "gate.toml").write_text("strict = true\n")
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    session = "a3f9Xk2LmQ8vR7tW4yZ1bN6cP0dS5e"
    folder = home / ".claude" / "projects" / claude_project_folder(str(root))
    transcript = Transcript(root, session).user("Add a health check").say("Done.")
    source = transcript.save(folder / f"{session}.jsonl")
    target = resolve_target(root)
    import_transcript(target, source)
    done = capstone(target)
    meta = (root / ".stet" / "trajectories" / done.trajectory / "meta.json").read_text()
    assert session not in meta  # redacted

    code, out, _ = stet("trajectory", "sessions", "--json", "-C", str(root))

    assert code == 0
    (row,) = json.loads(out)["sessions"]
    assert row["committed"] == [done.trajectory]


TOKEN = "q7Vd2LmX9pKr4TsWz8Hn3Bc"
"""A value no rule finds alone: only its context (`export API_TOKEN=…`) gives it away."""


def holding(root: Path, value: str) -> list[str]:
    """The files under `.stet/` that hold `value` in clear."""
    return sorted(
        str(path.relative_to(root))
        for path in (root / ".stet").rglob("*")
        if path.is_file() and value.encode() in path.read_bytes()
    )


def told_bare(transcript: Transcript, value: str) -> Transcript:
    """A turn that shows `value` where no rule sees it: a file's text, the agent's reply."""
    return (
        transcript.user("What is in notes.txt?")
        .tool("toolu_5", "Bash", {"command": "cat notes.txt"}, f"{value}\n")
        .say(f"It is {value}, from notes.txt.")
    )


def test_a_value_its_context_gave_away_before_a_capstone_stays_redacted_after_it(
    root: Path, tmp_path: Path, stet: Run
) -> None:
    """The part imported after a capstone is gated alone, without the context that told the
    value in the committed part: the committed trajectory's markers tell it."""
    from stet_lsp.gate import load_config
    from stet_lsp.gate.scan import scan_text

    config = load_config(root)
    assert not scan_text(f"It is {TOKEN}, from notes.txt.\n{TOKEN}\n", config=config, path="x.md")
    transcript = (
        Transcript(root, SESSION)
        .user("Set up the API client")
        # a home path before it, which the committed line holds as `~`
        .tool("toolu_1", "Bash", {"command": f"ls /home/ada/keys && export API_TOKEN={TOKEN}"}, "")
        .write_file("toolu_2", f"{root}/src/client.py", "import os\n")
        .say("Done.")
    )
    source = transcript.save(tmp_path / f"{SESSION}.jsonl")
    assert stet("-C", str(root), "trajectory", "import", str(source))[0] == 0
    assert stet("-C", str(root), "capstone")[0] == 0

    told_bare(transcript, TOKEN).save(source)
    code, out, _ = stet("-C", str(root), "trajectory", "import", str(source))

    assert code == 0 and "left out" in out
    assert holding(root, TOKEN) == []
    events = working_folder(resolve_target(root)).read_events()
    (reply,) = [e.model_dump() for e in events if e.kind == "agent_message"]
    # under the committed part's marker: the same value, the same name in both
    assert reply["text"] == "It is [REDACTED:secret-assignment#1], from notes.txt."


def test_a_value_a_command_printed_before_a_capstone_stays_redacted_after_it(
    root: Path, tmp_path: Path
) -> None:
    target = resolve_target(root)
    value = "Xk9mQ2vLp8rT4wZ"
    transcript = (
        Transcript(root, SESSION)
        .user("Check the token")
        .tool("toolu_1", "Bash", {"command": "printenv GITHUB_TOKEN"}, f"{value}\n")
        .say("It is set.")
    )
    source = transcript.save(tmp_path / f"{SESSION}.jsonl")
    import_transcript(target, source)
    capstone(target)

    told_bare(transcript, value).save(source)
    result = import_transcript(target, source)

    assert result.continues and result.redaction == {"printed-secret": 2}
    assert holding(root, value) == []


def test_a_value_committed_two_capstones_ago_stays_redacted_in_a_copied_session(
    root: Path, tmp_path: Path
) -> None:
    """Every committed trajectory that holds part of the session is read, under the name its
    file had there, and the value stays redacted as the session grows."""
    target = resolve_target(root)
    transcript = (
        Transcript(root, SESSION)
        .user("Set up the API client")
        .tool("toolu_1", "Bash", {"command": f"export API_TOKEN={TOKEN}"}, "")
        .say("Done.")
    )
    source = transcript.save(tmp_path / f"{SESSION}.jsonl")
    import_transcript(target, source)
    first = capstone(target)
    second_turn(transcript, root).save(source)
    import_transcript(target, source)
    second = capstone(target)

    copy = tmp_path / "copied" / "session.jsonl"
    told_bare(transcript, TOKEN).save(copy)
    result = import_transcript(target, copy)

    assert sorted(result.continues) == sorted([first.trajectory, second.trajectory])
    assert holding(root, TOKEN) == []
    transcript.user("Once more?").say(f"Still {TOKEN}.").save(copy)
    import_transcript(target, copy)
    assert holding(root, TOKEN) == []


def test_what_came_since_a_capstone_is_gated_as_strictly_as_the_part_committed(
    root: Path, tmp_path: Path, stet: Run
) -> None:
    """A session imported with `--strict`, committed, then imported again plainly (as the
    Stop hook does): its record went with the archived working trajectory, which still tells
    how it was gated."""
    value = "Zq8Wm3Rt7Yp2Lk9Vx4Bn6Hc1"  # a random word strict mode takes, the default not
    transcript = first_turn(root)
    source = transcript.save(tmp_path / f"{SESSION}.jsonl")
    assert stet("-C", str(root), "trajectory", "import", "--strict", str(source))[0] == 0
    assert stet("-C", str(root), "capstone")[0] == 0

    transcript.user("Which build?").say(f"The build id is {value}.").save(source)
    code, out, _ = stet("-C", str(root), "trajectory", "import", str(source))

    assert code == 0 and "left out" in out
    assert holding(root, value) == []


def test_a_value_committed_from_a_json_document_stays_redacted_after_its_lines_move(
    root: Path, tmp_path: Path, stet: Run
) -> None:
    """A Gemini CLI session is one JSON document, written anew as it grows: a header added
    before its messages (a summary) moves every message's line. The committed part's records
    are known by their place in the document (`/messages/1`), not by a line."""
    value = "q7Vd2LmX9pKr4TsWz8Hn3Bc"

    def message(number: int, kind: str, text: str) -> dict[str, object]:
        stamp = f"2026-06-12T04:1{number}:00.000Z"
        return {"id": f"m{number}", "timestamp": stamp, "type": kind, "content": [{"text": text}]}

    document: dict[str, object] = {
        "sessionId": "b7db9eb8-618e-400c-a422-56b794b1ed60",
        "projectHash": "7302744c",
        "startTime": "2026-06-12T04:14:14.031Z",
        "lastUpdated": "2026-06-12T04:15:00.000Z",
        "messages": [
            message(1, "user", "Set up the client"),
            message(2, "user", f"run: export API_TOKEN={value}"),
            message(3, "gemini", "Done."),
        ],
    }
    source = tmp_path / "session-2026-06-12T04-14-b7db9eb8.json"
    source.write_text(json.dumps(document, indent=2))
    assert stet("-C", str(root), "trajectory", "import", str(source))[0] == 0
    assert stet("-C", str(root), "capstone")[0] == 0
    assert holding(root, value) == []

    messages = document.pop("messages")
    assert isinstance(messages, list)
    messages += [message(4, "user", "What is the token?"), message(5, "gemini", f"It is {value}.")]
    grown = {**document, "summary": "Set up\nthe API client", "messages": messages}
    source.write_text(json.dumps(grown, indent=2))
    code, out, _ = stet("-C", str(root), "trajectory", "import", str(source))

    assert code == 0 and "left out" in out
    assert holding(root, value) == []


def test_a_record_of_an_archived_session_the_repository_commits_sets_no_gate(
    root: Path, tmp_path: Path, stet: Run
) -> None:
    """A session's archived record says how strictly what came since a capstone is gated; one
    a repository commits under `.stet/cache` (a hostile clone) would make a user's session
    strict, with names of its choosing read as secrets' (`HOME`, `PATH`)."""
    import pygit2

    transcript = first_turn(root)
    source = transcript.save(tmp_path / f"{SESSION}.jsonl")
    assert stet("-C", str(root), "trajectory", "import", str(source))[0] == 0
    assert stet("-C", str(root), "capstone")[0] == 0
    archive = root / ".stet/cache/trajectories/.archive"
    (record,) = archive.glob("*/sessions/*.json")
    data = json.loads(record.read_text())
    data["gate_settings"] = {"strict": True, "env_names": ["HOME", "PATH"]}
    record.write_text(json.dumps(data))
    repo = pygit2.Repository(str(root))
    repo.index.add(record.relative_to(root).as_posix())
    repo.index.write()

    transcript.user("Which build?").say("The build is done.").save(source)
    assert stet("-C", str(root), "trajectory", "import", str(source))[0] == 0

    (stored,) = (root / ".stet/cache/trajectories").glob("branch--*/sessions/*.json")
    assert json.loads(stored.read_text()).get("gate_settings", {}).get("strict") is not True
