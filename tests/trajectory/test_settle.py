"""What a writer of the working trajectory killed midway leaves, and how the next command that
takes or reads the trajectory settles it (`store.settle`): each writer runs as `stet` in a
process of its own, killed right before a chosen write."""

from __future__ import annotations

import json
import subprocess
import sys
import tracemalloc
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pygit2
import pytest
from repos import age_head, commit_files
from test_importing import (
    NPM_COMMAND,
    NPM_TOKEN,
    SESSION_A,
    SESSION_B,
    START,
    Claude,
    records_of,
    simple_session,
    target_of,
    trajectory_files,
)

from stet_lsp.core.sheet import StyleSheet
from stet_lsp.trajectory.importing import import_transcript
from stet_lsp.trajectory.store import folders, working_folder

Stet = Callable[..., tuple[int, str, str]]
SESSION_C = "cccccccc-1111-4222-8333-444455556666"

KILLED = """
import os, re, sys

pattern = re.compile(sys.argv[1])
interrupted = sys.argv[2] == "interrupted"
stopped = []


def dying(name):
    real = getattr(os, name)

    def call(*args, **kwargs):
        names = " ".join(os.path.basename(os.fspath(arg)) for arg in args[:2])
        if not stopped and pattern.fullmatch(f"{name} {names}"):
            if not interrupted:
                os._exit(137)
            stopped.append(name)
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    setattr(os, name, call)


for name in ("replace", "rename", "link", "unlink"):
    dying(name)
from stet_lsp.cli import main

sys.exit(main(sys.argv[3:]))
"""


def killed_before(pattern: str, root: Path, *args: str, interrupted: bool = False) -> None:
    """Run `stet ARGS` in `root`, killed right before the first rename, link or unlink whose
    call and file names (`replace .meta.json.1f2e3d4c5b6a7980.tmp meta.json`) match
    `pattern` (or, `interrupted`, stopped there as by Ctrl-C)."""
    how = "interrupted" if interrupted else "killed"
    command = [sys.executable, "-c", KILLED, pattern, how, *args]
    done = subprocess.run(command, cwd=root, capture_output=True, text=True, check=False)
    assert done.returncode == (130 if interrupted else 137), done.stderr


def killed_in_a_failed_compose(pattern: str, root: Path, *args: str) -> None:
    """`killed_before`, in a `stet ARGS` whose first write of meta.json fails (a full disk),
    so that its compose puts back what it kept: killed only once that write failed (never,
    `pattern` empty: the command fails)."""
    failing = KILLED.replace("if not stopped and", "if failed and not stopped and").replace(
        "for name in (",
        "real_replace, failed = os.replace, []\n"
        "def failing(a, b, *rest, **kw):\n"
        "    if not failed and os.path.basename(os.fspath(b)) == 'meta.json':\n"
        "        failed.append(b)\n"
        "        raise OSError(28, 'No space left on device')\n"
        "    return real_replace(a, b, *rest, **kw)\n"
        "os.replace = failing\n"
        "for name in (",
        1,
    )
    command = [sys.executable, "-c", failing, pattern, "killed", *args]
    done = subprocess.run(command, cwd=root, capture_output=True, text=True, check=False)
    assert done.returncode == (1 if pattern == "" else 137), done.stderr


def publish(root: Path, tmp_path: Path) -> Path:
    """A session whose command shows NPM_TOKEN as a secret."""
    return (
        Claude(SESSION_C, root, START + timedelta(hours=2))
        .user("Publish the package.")
        .tool("toolu_1", "mcp__shell__exec", {"command": list(NPM_COMMAND)}, "done")
        .save(tmp_path / "b.jsonl")
    )


def two_sessions(root: Path, tmp_path: Path) -> Path:
    """Sessions A and B imported; the folder of the working trajectory."""
    target = target_of(root)
    import_transcript(target, simple_session(root, SESSION_A, "First").save(tmp_path / "a.jsonl"))
    second = simple_session(root, SESSION_B, "Second", START + timedelta(hours=1))
    import_transcript(target, second.save(tmp_path / "b.jsonl"))
    return working_folder(target).path


def graduated(stet: Stet, root: Path, text: str) -> None:
    code, out, err = stet("note", "add", "-C", str(root), "--author", "human", "--json", text)
    assert code == 0, err
    code, _, err = stet("graduate", json.loads(out)["entry"]["id"], "--to", "trajectory")
    assert code == 0, err


def test_a_graduation_after_a_killed_compose_keeps_the_decision_it_recorded(
    root: Path, tmp_path: Path, stet: Stet, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A compose killed before meta.json had rewritten graduation's stored session (redacting
    a value a new session showed is a secret) and kept the old one aside. A graduation then
    adds its decision to that session: it settles first (the old session put back, the new
    session taken back with its compose), so the compose it ends with does not put back the
    old session over the decision. Imported again, the new session has the value redacted
    everywhere, the decision kept."""
    monkeypatch.chdir(root)
    target = target_of(root)
    folder = working_folder(target).path
    told = Claude(SESSION_A, root).user("Log in.").say(f"The registry answered {NPM_TOKEN}.")
    import_transcript(target, told.save(tmp_path / "a.jsonl"))
    graduated(stet, root, f"The registry answered {NPM_TOKEN} for the login, keep it in mind")
    killed_before(
        r"replace \S+ meta\.json", root, "trajectory", "import", str(publish(root, tmp_path))
    )
    assert any("stet-before-compose" in name for name in trajectory_files(folder))

    graduated(stet, root, "Second decision: always pin versions")

    files = trajectory_files(folder)
    assert [name for name in files if "stet-before" in name] == []
    assert b"always pin versions" in files["sessions/graduation.jsonl"]
    assert b"always pin versions" in files["events.jsonl"]
    assert SESSION_C not in records_of(root)
    assert import_transcript(target, publish(root, tmp_path)).changed
    files = trajectory_files(folder)
    assert b"always pin versions" in files["events.jsonl"]
    assert [name for name, data in files.items() if NPM_TOKEN.encode() in data] == []


def test_a_rename_after_a_killed_import_composes_every_session(
    repo: pygit2.Repository, root: Path, tmp_path: Path, stet: Stet
) -> None:
    """An import of a grown session killed before its new record (its old session and record
    kept aside), then the branch renamed: the trajectory that follows the branch is settled
    before it moves, so it is composed with the session as it was, none left out."""
    folder = two_sessions(root, tmp_path)
    stem = records_of(root)[SESSION_A]["stem"]
    grown = simple_session(root, SESSION_A, "First").user("And one more.").say("Done.")
    source = grown.save(tmp_path / "a2.jsonl")
    killed_before(rf"replace \S+ {stem}\.json", root, "trajectory", "import", str(source))
    assert (folder / "sessions" / f"{stem}.jsonl").exists()
    assert not (folder / "sessions" / f"{stem}.json").exists()
    repo.branches.local[repo.head.shorthand].rename("renamed")

    code, out, err = stet("trajectory", "show", "-C", str(root))

    assert code == 0, err
    assert "First" in out and "Second" in out
    moved = working_folder(target_of(root))
    assert moved.path != folder
    assert {source.session for source in moved.read_meta().sources} == {SESSION_A, SESSION_B}
    assert [name for name in trajectory_files(moved.path) if "stet-before" in name] == []
    assert import_transcript(target_of(root), source).changed


def test_a_new_session_killed_before_its_record_is_taken_back(
    root: Path, tmp_path: Path, stet: Stet
) -> None:
    """An import of a new session killed between its events and its record left the events
    with no record, which nothing composes: the next command that reads the trajectory takes
    them back."""
    target = target_of(root)
    folder = working_folder(target).path
    import_transcript(target, simple_session(root, SESSION_A, "First").save(tmp_path / "a.jsonl"))
    before = trajectory_files(folder)
    second = simple_session(root, SESSION_B, "Second", START + timedelta(hours=1))
    source = second.save(tmp_path / "b.jsonl")
    killed_before(r"replace \S+ [0-9a-f]+\.json", root, "trajectory", "import", str(source))
    assert len(list((folder / "sessions").glob("*.jsonl"))) == 2

    code, _, err = stet("trajectory", "list", "-C", str(root))

    assert code == 0, err
    assert trajectory_files(folder) == before  # its `composing` marker gone with it
    assert import_transcript(target, source).changed


def grown_with_a_token(root: Path, tmp_path: Path) -> Path:
    """Session A grown by a command that shows NPM_TOKEN as a secret."""
    return (
        simple_session(root, SESSION_A, "First")
        .user("Publish the package.")
        .tool("toolu_9", "mcp__shell__exec", {"command": list(NPM_COMMAND)}, "done")
        .save(tmp_path / "a2.jsonl")
    )


@pytest.mark.parametrize(
    "stopped",
    [
        r"link narration\.md \S+",  # stored, its compose not begun
        r"link events\.jsonl \S+",  # narration.md kept aside, meta.json not yet
        r"replace \S+ narration\.md",
        r"replace \S+ meta\.json",  # the value carried into the stored sessions
    ],
    ids=["before-compose", "keeping", "narration", "meta"],
)
@pytest.mark.parametrize("session", ["new", "grown"])
@pytest.mark.parametrize("interrupted", [False, True], ids=["killed", "interrupted"])
def test_a_session_whose_compose_did_not_finish_is_taken_back_with_it(
    root: Path, tmp_path: Path, stet: Stet, stopped: str, session: str, interrupted: bool
) -> None:
    """An import killed (or interrupted) once it stored a session, before its compose wrote
    meta.json: its compose undone, the session goes with it (a new one) or is as it was (a
    grown one), with the `composing` marker, so no stored session holds a value in clear
    that its compose had redacted and nothing lists it as imported. Imported again, the value
    is nowhere."""
    folder = two_sessions(root, tmp_path)
    before = trajectory_files(folder)
    source = publish(root, tmp_path) if session == "new" else grown_with_a_token(root, tmp_path)
    killed_before(stopped, root, "trajectory", "import", str(source), interrupted=interrupted)

    code, _, err = stet("trajectory", "list", "-C", str(root))

    assert code == 0, err
    assert trajectory_files(folder) == before
    code, out, err = stet("trajectory", "show", "-C", str(root))
    assert code == 0, err
    assert "Publish the package." not in out
    assert import_transcript(target_of(root), source).changed
    files = trajectory_files(folder)
    assert "sessions/composing" not in files
    assert [name for name, data in files.items() if NPM_TOKEN.encode() in data] == []


def test_a_compose_killed_after_meta_json_keeps_its_session_and_ends_the_marker(
    root: Path, tmp_path: Path, stet: Stet
) -> None:
    """An import killed once its compose wrote meta.json was done: the session stays composed,
    and what the compose kept and the `composing` marker go."""
    folder = two_sessions(root, tmp_path)
    source = publish(root, tmp_path)
    killed_before(r"unlink composing", root, "trajectory", "import", str(source))
    assert any("stet-before-compose" in name for name in trajectory_files(folder))

    code, out, err = stet("trajectory", "show", "-C", str(root))

    assert code == 0, err
    assert "Publish the package." in out
    files = trajectory_files(folder)
    assert [name for name in files if "stet-before" in name or name.endswith("composing")] == []
    assert not import_transcript(target_of(root), source).changed


@pytest.mark.parametrize(
    "write",
    [r"[0-9a-f]+\.jsonl", "narration\\.md", "meta\\.json"],
    ids=["session", "narration", "meta"],
)
def test_a_killed_writers_temporary_files_go(
    root: Path, tmp_path: Path, stet: Stet, write: str
) -> None:
    """A writer killed before it renamed its temporary file over the file it replaces left
    it (a stored session's, the trajectory's): the next command that reads the trajectory
    removes it."""
    folder = two_sessions(root, tmp_path)
    source = publish(root, tmp_path)
    killed_before(rf"replace \S+ {write}", root, "trajectory", "import", str(source))
    assert [name for name in trajectory_files(folder) if name.endswith(".tmp")] != []

    code, _, err = stet("trajectory", "list", "-C", str(root))

    assert code == 0, err
    assert [name for name in trajectory_files(folder) if name.endswith(".tmp")] == []


def test_a_trajectory_file_a_killed_compose_wrote_where_none_was_goes(
    root: Path, tmp_path: Path, stet: Stet
) -> None:
    """The trajectory had no narration.md (removed by hand); a compose killed before meta.json
    wrote one. Put back as it was, the trajectory has none again, not the new compose's beside
    the old meta.json."""
    folder = two_sessions(root, tmp_path)
    (folder / "narration.md").unlink()
    before = trajectory_files(folder)
    killed_before(
        r"replace \S+ meta\.json", root, "trajectory", "import", str(publish(root, tmp_path))
    )

    code, _, err = stet("trajectory", "list", "-C", str(root))

    assert code == 0, err
    after = trajectory_files(folder)
    assert "narration.md" not in after
    assert {name: after[name] for name in before} == before


def test_a_folder_named_as_a_kept_file_is_left_alone(root: Path, tmp_path: Path) -> None:
    """A folder under the name of a file a compose keeps aside is no writer's: it is left as
    it is, and neither stops an import."""
    folder = two_sessions(root, tmp_path)
    odd = folder / ".meta.json.stet-before-compose-0123456789abcdef"
    odd.mkdir()

    assert import_transcript(target_of(root), publish(root, tmp_path)).changed
    assert odd.is_dir()


def test_a_reader_changes_no_file_git_tracks(root: Path, repo: pygit2.Repository) -> None:
    """A repository can commit a working trajectory, with files under the names a writer keeps
    files aside as: reading the trajectories changes none of them (git's status is clean)."""
    base = ".stet/cache/trajectories/branch--main--anything"
    committed = {
        f"{base}/meta.json": '{"not": "meta"}\n',
        f"{base}/narration.md": "committed narration\n",
        f"{base}/.meta.json.stet-before-compose-0123456789abcdef": '{"old": 1}\n',
        f"{base}/.narration.md.stet-before-compose-0123456789abcdef": "other narration\n",
        f"{base}/.events.jsonl.0123456789abcdef.tmp": "{}\n",
        f"{base}/sessions/s.jsonl": "x\n",
        f"{base}/sessions/.s.jsonl.stet-before-import-0123456789abcdef": "y\n",
    }
    commit_files(repo, committed, "a working trajectory")

    folders(root)

    assert {name: (root / name).read_text() for name in committed} == committed
    assert repo.status() == {}


@pytest.mark.parametrize("renamed", [False, True], ids=["branch", "renamed-branch"])
def test_no_command_makes_a_file_in_a_committed_cache(
    root: Path, repo: pygit2.Repository, tmp_path: Path, stet: Stet, renamed: bool
) -> None:
    """A repository that commits `.stet/cache` (no `.stet/.gitignore` ignores it) with the
    branch's working trajectory, holding the names a killed writer leaves, and its style
    sheet: the commands that read them make no file there (no lock file, no remembered
    branch), and neither do the writers that refuse such a folder, on the branch or once it
    is renamed (the folder and the sheet stay where they are, not moved to the new name): git's
    status stays clean."""
    target = target_of(root)
    entry = StyleSheet(target).add("Committed with the repository.")
    sheet = target.sheet_path.relative_to(root).as_posix()
    for made in (".stet/.gitignore", f"{sheet}.lock"):  # what the sheet's write made
        (root / made).unlink()
    base = f".stet/cache/trajectories/{target.key}"
    commit_files(
        repo,
        {
            sheet: (root / sheet).read_text(),
            f"{base}/meta.json": '{"not": "meta"}\n',
            f"{base}/.meta.json.stet-before-compose-0123456789abcdef": '{"old": 1}\n',
            f"{base}/.events.jsonl.0123456789abcdef.tmp": "{}\n",
            f"{base}/sessions/s.jsonl": "x\n",
            f"{base}/sessions/composing": "0123456789abcdef0123\n",
        },
        "a working trajectory and a style sheet",
    )
    if renamed:
        repo.branches.local["main"].rename("renamed")
    age_head(repo)  # a command would remember the branch
    source = str(simple_session(root, SESSION_A, "First").save(tmp_path / "a.jsonl"))
    assert repo.status() == {}

    for command in (
        ["trajectory", "list"],
        ["trajectory", "show"],
        ["trajectory", "render"],
        ["trajectory", "sessions"],
        ["trajectory", "export", "--format", "atif"],
        ["trajectory", "blame", "src/app.py"],
        ["note", "list"],
        ["capstone", "--dry-run"],
        # refused on the branch; once renamed, the branch gets a working trajectory of its own
        *([] if renamed else [["trajectory", "import", source]]),
        *([] if renamed else [["graduate", entry.id, "--to", "trajectory"]]),
    ):
        stet("-C", str(root), *command)
        assert repo.status() == {}, command


def test_what_is_kept_aside_is_compared_without_reading_it_whole(
    root: Path, tmp_path: Path
) -> None:
    """Whether meta.json is the one a compose kept is judged by its content where the two are
    not one file (a copy), a block at a time: a large pair is never held in memory."""
    folder = two_sessions(root, tmp_path)
    size = 32 * 1024 * 1024
    (folder / "meta.json").write_bytes(b"\0" * size)
    kept = folder / ".meta.json.stet-before-compose-0123456789abcdef"
    kept.write_bytes(b"\0" * (size - 1) + b"1")

    tracemalloc.start()
    try:
        folders(root)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert not kept.exists()  # not the file kept: the compose was done
    assert peak < size // 4


@pytest.mark.parametrize(
    "stopped",
    [
        r"link \.narration\.md\.stet-before-compose-\S+ \S+",  # before the first put back
        r"replace \S+ events\.jsonl",  # narration.md put back, events.jsonl not yet
        r"replace \S+ meta\.json",  # narration.md and events.jsonl put back, meta.json not yet
        r"unlink \.meta\.json\.stet-before-compose-\S+",  # all put back, the copies kept
        r"unlink \.narration\.md\.stet-before-compose-\S+",  # the last copy kept
    ],
    ids=["first", "events", "meta", "copies", "last-copy"],
)
def test_a_settling_stopped_midway_is_finished_by_the_next(
    root: Path, tmp_path: Path, stet: Stet, stopped: str
) -> None:
    """An import killed before its compose wrote meta.json, then a reader stopped (Ctrl-C)
    while its settling put back what the compose kept: the next one finishes it, and the
    trajectory is the one composed before, events.jsonl and narration.md with it."""
    folder = two_sessions(root, tmp_path)
    before = trajectory_files(folder)
    source = publish(root, tmp_path)
    killed_before(r"replace \S+ meta\.json", root, "trajectory", "import", str(source))
    killed_before(stopped, root, "trajectory", "list", interrupted=True)

    code, _, err = stet("trajectory", "list", "-C", str(root))

    assert code == 0, err
    assert trajectory_files(folder) == before
    code, out, err = stet("trajectory", "show", "-C", str(root))
    assert code == 0, err
    assert "First" in out and "Publish the package." not in out


@pytest.mark.parametrize("by_hand", [False, True], ids=["composed", "narration-removed"])
def test_a_failed_composes_put_back_stopped_midway_is_finished_by_the_next(
    root: Path, tmp_path: Path, stet: Stet, by_hand: bool
) -> None:
    """A compose whose last write fails puts back what it kept; killed as it does (its
    narration.md put back, meta.json not yet), the next settling finishes it: the trajectory
    is the one composed before (with no narration.md, where it had none)."""
    folder = two_sessions(root, tmp_path)
    if by_hand:
        (folder / "narration.md").unlink()
    before = trajectory_files(folder)
    source = publish(root, tmp_path)
    killed_in_a_failed_compose(r"replace \S+ meta\.json", root, "trajectory", "import", str(source))

    code, _, err = stet("trajectory", "list", "-C", str(root))

    assert code == 0, err
    assert trajectory_files(folder) == before


@pytest.mark.parametrize("failed", [False, True], ids=["killed", "failed"])
def test_a_first_compose_that_did_not_finish_leaves_no_trajectory_file(
    root: Path, tmp_path: Path, stet: Stet, failed: bool
) -> None:
    """The first import of a trajectory killed before its compose wrote meta.json (or while its
    failed compose removed what it wrote, meta.json not written): narration.md and
    events.jsonl, written where there was none, go with the session."""
    folder = working_folder(target_of(root)).path
    source = simple_session(root, SESSION_A, "First").save(tmp_path / "a.jsonl")
    if failed:
        killed_in_a_failed_compose(
            r"unlink events\.jsonl", root, "trajectory", "import", str(source)
        )
    else:
        killed_before(r"replace \S+ meta\.json", root, "trajectory", "import", str(source))

    code, out, err = stet("trajectory", "list", "-C", str(root))

    assert code == 0, err
    assert "no trajectories yet" in out
    assert trajectory_files(folder) == {}
    assert import_transcript(target_of(root), source).changed


def test_a_compose_writing_the_same_narration_leaves_no_file_it_wrote_where_none_was(
    root: Path, tmp_path: Path, stet: Stet
) -> None:
    """A trajectory left with its narration.md alone (meta.json and events.jsonl removed by
    hand): an import composes it again, the same narration.md, and is killed before meta.json.
    The events.jsonl it wrote where there was none goes, though narration.md reads as not
    written."""
    target = target_of(root)
    folder = working_folder(target).path
    source = simple_session(root, SESSION_A, "First").save(tmp_path / "a.jsonl")
    import_transcript(target, source)
    (folder / "meta.json").unlink()
    (folder / "events.jsonl").unlink()
    before = trajectory_files(folder)
    killed_before(r"replace \S+ meta\.json", root, "trajectory", "import", str(source))
    assert trajectory_files(folder)["narration.md"] == before["narration.md"]

    code, _, err = stet("trajectory", "list", "-C", str(root))

    assert code == 0, err
    assert trajectory_files(folder) == before


def graduated_not_composed(root: Path, text: str) -> bytes:
    """An entry graduated into the trajectory by `stet graduate`, killed before its compose
    wrote meta.json: its events stored, marked as not composed yet. The marker's bytes."""
    entry = StyleSheet(target_of(root)).add(text)
    killed_before(r"replace \S+ meta\.json", root, "graduate", entry.id, "--to", "trajectory")
    marker = working_folder(target_of(root)).path / "sessions" / "composing"
    return marker.read_bytes()


@pytest.mark.parametrize("how", ["failed", "killed"])
def test_graduations_events_stay_marked_when_an_import_is_undone(
    root: Path, tmp_path: Path, stet: Stet, how: str
) -> None:
    """Graduation's events stored and not composed yet, then an import of a new session that
    fails (its meta.json cannot be written) or is killed before meta.json: undone, the
    session goes but the marker still marks graduation's events, so the next import of an
    unchanged session composes them."""
    folder = two_sessions(root, tmp_path)
    marker = graduated_not_composed(root, "Always pin versions")
    code, _, err = stet("trajectory", "list", "-C", str(root))  # its compose undone
    assert code == 0, err
    assert (folder / "sessions" / "composing").read_bytes() == marker
    source = publish(root, tmp_path)
    if how == "failed":
        killed_in_a_failed_compose("", root, "trajectory", "import", str(source))
    else:
        killed_before(r"replace \S+ meta\.json", root, "trajectory", "import", str(source))

    code, _, err = stet("trajectory", "list", "-C", str(root))

    assert code == 0, err
    assert SESSION_C not in records_of(root)
    assert (folder / "sessions" / "composing").read_bytes() in (marker, b"")
    assert b"always pin versions" not in trajectory_files(folder)["events.jsonl"].lower()
    again = simple_session(root, SESSION_A, "First").save(tmp_path / "a.jsonl")
    import_transcript(target_of(root), again)
    files = trajectory_files(folder)
    assert b"Always pin versions" in files["events.jsonl"]
    assert "sessions/composing" not in files


def test_a_first_import_killed_after_meta_json_keeps_its_session(
    root: Path, tmp_path: Path, stet: Stet
) -> None:
    """The first import of a trajectory killed once its compose wrote meta.json (nothing was
    kept aside: there was nothing to keep): the compose was done, meta.json lists the
    session, and it stays; the marker goes."""
    folder = working_folder(target_of(root)).path
    source = simple_session(root, SESSION_A, "First").save(tmp_path / "a.jsonl")
    killed_before(r"unlink composing", root, "trajectory", "import", str(source))
    assert [name for name in trajectory_files(folder) if "stet-before" in name] == []

    code, out, err = stet("trajectory", "show", "-C", str(root))

    assert code == 0, err
    assert "First" in out
    files = trajectory_files(folder)
    assert "sessions/composing" not in files
    assert SESSION_A in records_of(root)
    assert SESSION_A.encode() in files["meta.json"]
    assert not import_transcript(target_of(root), source).changed


def test_a_settling_stopped_as_it_removes_a_killed_composes_files_is_finished_by_the_next(
    root: Path, tmp_path: Path, stet: Stet
) -> None:
    """The trajectory's meta.json is there, its narration.md and events.jsonl are not (removed
    by hand); an import killed before meta.json wrote both, and the settling that removes
    them is stopped between the two: the next settling still sees the compose began, and
    leaves no file of it beside the old meta.json."""
    folder = two_sessions(root, tmp_path)
    (folder / "narration.md").unlink()
    (folder / "events.jsonl").unlink()
    before = trajectory_files(folder)
    killed_before(
        r"replace \S+ meta\.json", root, "trajectory", "import", str(publish(root, tmp_path))
    )
    killed_before(r"unlink events\.jsonl", root, "trajectory", "list", interrupted=True)
    code, _, _ = stet("trajectory", "list", "-C", str(root))
    assert code == 0
    assert trajectory_files(folder) == before


_NO_HARD_LINKS_TORN_COPY = r"""
import os, sys
def no_link(*args, **kwargs):
    raise PermissionError(1, "Operation not permitted")
os.link = no_link
import stet_lsp.core.safefs as safefs
safefs._CHUNK = 1024
opened = os.fdopen
class Torn:
    def __init__(self, file):
        self.file, self.writes = file, 0
    def write(self, data):
        self.writes += 1
        if self.writes == 2:
            os._exit(137)
        written = self.file.write(data)
        self.file.flush()
        return written
    def __getattr__(self, name):
        return getattr(self.file, name)
    def __enter__(self):
        self.file.__enter__()
        return self
    def __exit__(self, *exc):
        return self.file.__exit__(*exc)
def fdopen(fd, mode="r", *args, **kwargs):
    file = opened(fd, mode, *args, **kwargs)
    name = os.path.basename(os.readlink(f"/proc/self/fd/{fd}"))
    return Torn(file) if "w" in mode and name.startswith(".events.jsonl.") else file
os.fdopen = fdopen
from stet_lsp.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="names an open file by /proc")
def test_a_copy_kept_aside_where_there_are_no_hard_links_is_never_put_back_torn(
    root: Path, tmp_path: Path, stet: Stet
) -> None:
    """Where the file system has no hard links, a compose keeps events.jsonl aside by copying
    it; killed midway through that copy, the part copied is never put back as events.jsonl:
    the next settling finds only a temporary file, and the trajectory is as composed before."""
    folder = two_sessions(root, tmp_path)
    before = trajectory_files(folder)
    source = publish(root, tmp_path)
    command = [sys.executable, "-c", _NO_HARD_LINKS_TORN_COPY, "trajectory", "import", str(source)]
    done = subprocess.run(command, cwd=root, capture_output=True, text=True)
    assert done.returncode == 137, done.stderr
    code, _, err = stet("trajectory", "show", "-C", str(root))
    assert code == 0, err
    assert trajectory_files(folder) == before


@pytest.mark.parametrize("how", ["killed", "interrupted", "temporary-file-gone"])
def test_a_first_graduation_whose_compose_did_not_finish_leaves_no_trajectory_file(
    root: Path, tmp_path: Path, stet: Stet, how: str
) -> None:
    """The first graduation of a target (no trajectory yet) stopped before its compose wrote
    meta.json: it kept nothing aside and its marker names no imported session, yet the
    narration.md and events.jsonl it wrote where there was none go (killed: at the next
    command; interrupted: at once; killed and its temporary file gone, as a kill between two
    writes leaves it: at the next command too). Graduation's stored events stay marked, and
    the next compose puts them into the trajectory."""
    target = target_of(root)
    folder = working_folder(target).path
    entry = StyleSheet(target).add("Always pin versions")
    killed_before(
        r"replace \S+ meta\.json",
        root,
        "graduate",
        entry.id,
        "--to",
        "trajectory",
        interrupted=how == "interrupted",
    )
    if how == "temporary-file-gone":
        for temporary in folder.glob(".meta.json.*.tmp"):
            temporary.unlink()
    marker = (folder / "sessions" / "composing").read_bytes()

    code, out, err = stet("trajectory", "list", "-C", str(root))

    assert code == 0, err
    assert "no trajectories yet" in out
    files = trajectory_files(folder)
    assert sorted(files) == [
        "sessions/composing",
        "sessions/graduation.json",
        "sessions/graduation.jsonl",
    ]
    assert files["sessions/composing"] == marker
    code, _, err = stet(
        "trajectory",
        "import",
        str(simple_session(root, SESSION_A, "First").save(tmp_path / "a.jsonl")),
        "-C",
        str(root),
    )
    assert code == 0, err
    files = trajectory_files(folder)
    assert b"Always pin versions" in files["events.jsonl"]
    assert "sessions/composing" not in files
