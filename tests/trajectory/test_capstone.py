"""The capstone in real repositories made with pygit2: the working trajectory (imported from a
hand-written Claude Code transcript holding a planted GitHub token) committed on top of HEAD,
with only `.stet/` files, through the gate; every refusal leaves the repository as it was."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

import pygit2
import pytest
from claude_transcript import Transcript
from repos import HEAD_CACHE, SIGNATURE, age_head, commit_files, git_at, hostile_clone, make_repo

from stet_lsp.core.errors import StetError
from stet_lsp.core.items import other_target_item
from stet_lsp.core.locking import file_lock
from stet_lsp.core.sheet import StyleSheet
from stet_lsp.core.targets import Target, resolve_target
from stet_lsp.gate.report import RedactionReport
from stet_lsp.trajectory.capstone import CapstoneRefused, CapstoneResult, capstone
from stet_lsp.trajectory.feedback import read_feedback
from stet_lsp.trajectory.graduation import graduate
from stet_lsp.trajectory.importing import import_transcript
from stet_lsp.trajectory.operations import mark_at
from stet_lsp.trajectory.store import working_folder

Stet = Callable[..., tuple[int, str, str]]

TOKEN = "ghp_" + "Q7x2Lm9Kp4Rt8Vw1Yz3Bc6Df0Gh5Jk2Mn7Ps9T"
OTHER_TOKEN = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2H1g0"
START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
ID = r"2026-03-01-main-[0-9a-f]{12}"
SKILL = ".stet/skills/x/SKILL.md"
STRAY = ".stet/other/file.txt"
GIT = shutil.which("git")
POSIX = pytest.mark.skipif(sys.platform == "win32", reason="hooks here are shell scripts")


# -- a Claude Code transcript, written record by record ---------------------------------------


def Claude(session: str, cwd: Path, start: datetime = START) -> Transcript:
    """A Claude Code session file (tests/claude_transcript.py)."""
    return Transcript(cwd, session, start)


def session_with_a_secret(root: Path, session: str, prompt: str) -> Transcript:
    """The token in a tool's output and in the agent's reply."""
    return (
        Claude(session, root)
        .user(prompt)
        .tool("toolu_1", "Bash", {"command": "cat .env"}, f"GITHUB_TOKEN={TOKEN}\nDEBUG=1\n")
        .tool("toolu_2", "Write", {"file_path": f"{root}/src/health.py", "content": "ok = 1\n"}, "")
        .say(f"Done. I pushed with {TOKEN} as you asked.")
    )


def import_work(root: Path, tmp_path: Path, number: int = 1, prompt: str | None = None) -> Target:
    session = f"{number:08d}-1111-4222-8333-444455556666"
    text = prompt or f"Add a health check endpoint (round {number})"
    source = session_with_a_secret(root, session, text).save(tmp_path / f"{session}.jsonl")
    target = resolve_target(root)
    import_transcript(target, source)
    return target


# -- fixtures and helpers ------------------------------------------------------------------------


@pytest.fixture
def repo(tmp_path: Path) -> pygit2.Repository:
    """`main` with one commit (src/app.py, README.md) and an identity in its own config."""
    made = make_repo(tmp_path / "repo", files={"src/app.py": "x = 1\n", "README.md": "hi\n"})
    made.config["user.name"] = "Ada Reviewer"
    made.config["user.email"] = "ada@example.invalid"
    return made


@pytest.fixture
def no_identity(tmp_path: Path) -> Iterator[None]:
    """No git configuration but the repository's own: libgit2 reads global files by path."""
    empty = tmp_path / "no-config"
    empty.mkdir()
    levels = (
        pygit2.enums.ConfigLevel.GLOBAL,
        pygit2.enums.ConfigLevel.XDG,
        pygit2.enums.ConfigLevel.SYSTEM,
    )
    saved = {level: pygit2.settings.search_path[level] for level in levels}
    for level in levels:
        pygit2.settings.search_path[level] = str(empty)
    try:
        yield
    finally:
        for level, value in saved.items():
            pygit2.settings.search_path[level] = value


def reopen(repo: pygit2.Repository) -> pygit2.Repository:
    return pygit2.Repository(repo.path)


def snapshot(repo: pygit2.Repository) -> dict[str, Any]:
    """HEAD, every ref and reflog, the index (bytes and entries) and every file and folder
    of the work tree but empty lock files in `.stet/cache/` (the capstone takes the lock of
    the trajectory it would commit, whose lock file stays, never committed) and the cached
    branch of HEAD (`HEAD_CACHE`, which any command may write)."""
    fresh = reopen(repo)
    root = Path(fresh.workdir)
    head = fresh.references["HEAD"]
    refs = {name: str(fresh.references[name].resolve().target) for name in fresh.references}
    logs = {}
    if not fresh.head_is_unborn:
        logs = {
            name: [(str(e.oid_new), e.message) for e in fresh.references[name].log()]
            for name in ("HEAD", *fresh.references)
            if name.startswith(("HEAD", "refs/heads/"))
        }
    index_file = Path(fresh.path) / "index"
    tree = {}
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root).as_posix()
        if relative in (".git", HEAD_CACHE) or relative.startswith(".git/"):
            continue
        if relative.startswith(".stet/cache/") and relative.endswith(".lock"):
            assert path.stat().st_size == 0
            continue
        tree[relative] = path.read_bytes() if path.is_file() else "folder"
    return {
        "head": str(head.target),
        "refs": refs,
        "logs": logs,
        "index": index_file.read_bytes() if index_file.exists() else None,
        "entries": index_entries(fresh),
        "work tree": tree,
    }


def index_entries(repo: pygit2.Repository) -> dict[str, tuple[str, int]]:
    return {entry.path: (str(entry.id), entry.mode) for entry in reopen(repo).index}


def flat(repo: pygit2.Repository, tree: pygit2.Tree, prefix: str = "") -> dict[str, Any]:
    """Every blob of a tree by path, with its id and mode; every object is read."""
    found: dict[str, Any] = {}
    for entry in tree:
        obj = repo[entry.id]
        if isinstance(obj, pygit2.Tree):
            found |= flat(repo, obj, f"{prefix}{entry.name}/")
        else:
            assert isinstance(obj, pygit2.Blob)
            found[f"{prefix}{entry.name}"] = (str(entry.id), entry.filemode)
    return found


def blob_text(repo: pygit2.Repository, commit: pygit2.Commit, path: str) -> str:
    blob = repo[commit.tree[path].id]
    assert isinstance(blob, pygit2.Blob)
    return bytes(blob.data).decode("utf-8")


def head_commit(repo: pygit2.Repository) -> pygit2.Commit:
    return reopen(repo).head.peel(pygit2.Commit)


GITIGNORE = ".stet/.gitignore"
"""Committed with the first capstone of a line of commits that holds none."""


def trajectory_files(trajectory: str) -> list[str]:
    return [
        f".stet/trajectories/{trajectory}/{name}"
        for name in ("events.jsonl", "meta.json", "narration.md")
    ]


def stage(repo: pygit2.Repository, path: str, content: str) -> None:
    full = Path(repo.workdir) / path
    full.parent.mkdir(parents=True, exist_ok=True)
    full.write_text(content)
    index = repo.index
    index.read()
    index.add(path)
    index.write()


def test_a_capstone_stopped_before_it_updated_the_index_is_finished_there(
    repo: pygit2.Repository, root: Path, tmp_path: Path
) -> None:
    """Stopped between its commit and the index (Ctrl-C while git held index.lock): the
    index still deletes the trajectory and holds the skill's old version, and a `git commit`
    would undo both. The next capstone puts HEAD's blobs there; an entry staged since in
    another version stays."""
    target = import_work(root, tmp_path, 1)
    graduate_into_skill(root)
    skill = ".stet/skills/x/SKILL.md"
    index_file = Path(repo.path) / "index"
    before = index_file.read_bytes()
    first = capstone(target)
    assert first.archived is not None
    (root / first.archived).rename(working_folder(target).path)
    index_file.write_bytes(before)  # as the capstone found it
    stage(repo, "other.txt", "staged meanwhile\n")
    assert not set(trajectory_files(first.trajectory)) & set(index_entries(repo))

    again = capstone(target)

    assert not again.changed and again.archived is not None and again.warnings == []
    head = head_commit(repo)
    entries = index_entries(repo)
    for path in [*trajectory_files(first.trajectory), skill]:
        assert entries[path][0] == str(head.tree[path].id), path
    assert [line for line in git_status(root) if not line.startswith("??")] == ["A  other.txt"]


def test_finishing_a_stopped_capstone_waits_for_git_to_let_go_of_its_index(
    repo: pygit2.Repository, root: Path, tmp_path: Path
) -> None:
    """A capstone stopped before it updated the index, run again while git holds
    `index.lock`: refused, and the working trajectory kept (archived, nothing would be left
    to finish the index from); once the lock is gone, the index is finished."""
    target = import_work(root, tmp_path, 1)
    index_file = Path(repo.path) / "index"
    before = index_file.read_bytes()
    first = capstone(target)
    assert first.archived is not None
    (root / first.archived).rename(working_folder(target).path)
    index_file.write_bytes(before)  # as the capstone found it
    lock = Path(repo.path) / "index.lock"
    lock.write_bytes(b"")

    refused("index", lambda: capstone(target))

    assert (working_folder(target).path / "meta.json").exists()
    lock.unlink()
    again = capstone(target)
    assert not again.changed and again.warnings == []
    entries, head = index_entries(repo), head_commit(repo)
    for path in trajectory_files(first.trajectory):
        assert entries[path][0] == str(head.tree[path].id), path


def graduate_into_skill(root: Path, text: str = "Use the retry helper for HTTP calls.") -> str:
    """An entry of the target's style sheet graduated into the skill `x`, which graduation
    writes and stages; the entry's id."""
    sheet = StyleSheet(resolve_target(root))
    entry = sheet.add(text, kind="convention")
    graduate(sheet, entry.id, "skill", skill_name="x")
    return entry.id


def skill_metadata(text: str) -> dict[str, str]:
    import yaml

    fields: dict[str, Any] = yaml.safe_load(text.split("---\n")[1])
    metadata: dict[str, str] = fields["metadata"]
    return metadata


def refused(reason: str, run: Callable[[], CapstoneResult]) -> CapstoneRefused:
    with pytest.raises(CapstoneRefused) as caught:
        run()
    assert caught.value.reason == reason, str(caught.value)
    assert "nothing was changed" in str(caught.value)
    return caught.value


def history_is_whole(repo: pygit2.Repository) -> list[str]:
    """What `git fsck` checks that matters here, with pygit2: every commit from HEAD, its
    tree and every blob in it readable; the real git agrees when it is installed."""
    fresh = reopen(repo)
    walked = []
    for commit in fresh.walk(fresh.head.target, pygit2.enums.SortMode.TOPOLOGICAL):
        walked.append(str(commit.id))
        flat(fresh, commit.tree)
        for parent_id in commit.parent_ids:
            assert isinstance(fresh[parent_id], pygit2.Commit)
    if GIT:
        root = fresh.workdir
        fsck = subprocess.run([GIT, "fsck", "--strict"], cwd=root, capture_output=True, text=True)
        assert fsck.returncode == 0, fsck.stdout + fsck.stderr
        log = subprocess.run(
            [GIT, "log", "--format=%H"], cwd=root, capture_output=True, text=True, check=True
        )
        assert log.stdout.split() == walked
    return walked


def git_status(root: Path) -> list[str]:
    assert GIT
    done = subprocess.run(
        [GIT, "status", "--porcelain", "--untracked-files=all"],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    )
    return sorted(done.stdout.splitlines())


def write_hook(folder: Path, name: str, body: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    hook = folder / name
    hook.write_text("#!/bin/sh\n" + body)
    hook.chmod(0o755)
    return hook


# -- the capstone ---------------------------------------------------------------------------------


def test_the_capstone_commits_the_trajectory_and_graduations_files_only(
    repo: pygit2.Repository, root: Path, tmp_path: Path
) -> None:
    target = import_work(root, tmp_path)
    stage(repo, "src/app.py", "x = 2\n")  # an unrelated staged change
    graduate_into_skill(root)  # the skill x, written and staged by graduation
    stage(repo, STRAY, "staged by hand\n")  # a .stet/ file graduation did not stage
    (root / "README.md").write_text("hi, unstaged\n")  # an unstaged change
    (root / "notes.txt").write_text("untracked\n")
    parent = head_commit(repo)
    entries_before = index_entries(repo)
    status_before = git_status(root) if GIT else []
    phases: list[str] = []

    result = capstone(target, progress=phases.append)

    assert phases == ["redacting", "writing", "committing"]
    commit = head_commit(repo)
    assert result.commit == str(commit.id) and result.parent == str(parent.id)
    assert result.changed and not result.dry_run and result.branch == "main"
    assert commit.parent_ids == [parent.id]
    assert str(reopen(repo).references["refs/heads/main"].target) == result.commit
    assert not reopen(repo).head_is_detached
    trajectory = result.trajectory
    assert re.fullmatch(ID, trajectory)

    # the tree: HEAD's tree, the trajectory's three files and graduation's skill; nothing
    # else: the stray staged file is left staged, as it was
    before, after = flat(repo, parent.tree), flat(repo, commit.tree)
    added = sorted(set(after) - set(before))
    assert added == sorted([*trajectory_files(trajectory), SKILL, GITIGNORE])
    assert {path: after[path] for path in before} == before
    assert [(c.path, c.status) for c in result.paths] == sorted((path, "added") for path in added)
    assert result.left_staged == [STRAY]

    # the skill as staged, but its metadata names the committed trajectory, not the working one
    staged_skill = reopen(repo)[entries_before[SKILL][0]]
    assert isinstance(staged_skill, pygit2.Blob)
    staged_text = bytes(staged_skill.data).decode("utf-8")
    assert skill_metadata(staged_text)["stet-trajectory"] == target.key
    committed_skill = blob_text(repo, commit, SKILL)
    assert skill_metadata(committed_skill)["stet-trajectory"] == trajectory
    assert f".stet/trajectories/{trajectory}/meta.json" in after
    assert committed_skill == staged_text.replace(target.key, trajectory)

    # meta.json: the id, the parent as base commit; events and narration as re-rendered
    meta = json.loads(blob_text(repo, commit, f".stet/trajectories/{trajectory}/meta.json"))
    assert meta["id"] == trajectory and meta["base_commit"] == str(parent.id)
    assert meta["target"]["name"] == "main"
    events = blob_text(repo, commit, f".stet/trajectories/{trajectory}/events.jsonl")
    assert meta["steps"] == len(events.splitlines()) > 0
    assert meta["redaction"]["github-token"] >= 2
    narration = blob_text(repo, commit, f".stet/trajectories/{trajectory}/narration.md")
    assert "[REDACTED:github-token#1]" in narration and "[REDACTED:github-token#1]" in events

    # no part of the secret in any blob of the commit, nor in its message
    for path in after:
        assert TOKEN[4:] not in blob_text(repo, commit, path), path
    assert TOKEN[4:] not in commit.message

    # the message and its trailer, the reflog
    brief = "Add a health check endpoint (round 1)"
    assert commit.message == f"Trajectory: {brief}\n\nStet-Trajectory: {trajectory}\n"
    assert commit.message_trailers == {"Stet-Trajectory": trajectory}
    assert result.message == commit.message
    assert (commit.author.name, commit.author.email) == ("Ada Reviewer", "ada@example.invalid")
    assert commit.committer.email == "ada@example.invalid"
    for ref in ("refs/heads/main", "HEAD"):
        newest = next(iter(reopen(repo).references[ref].log()))
        assert (newest.oid_old, newest.oid_new) == (parent.id, commit.id)
        assert newest.message == f"commit: Trajectory: {brief}"

    # the index: the new files at the commit's blobs, every other entry as it was
    entries_after = index_entries(repo)
    expected = dict(entries_before)
    for path in [*trajectory_files(trajectory), SKILL, GITIGNORE]:
        expected[path] = (after[path][0], pygit2.enums.FileMode.BLOB)
    assert entries_after == expected
    assert entries_after[STRAY] == entries_before[STRAY] and STRAY not in after
    assert entries_after["src/app.py"] != (before["src/app.py"][0], before["src/app.py"][1])

    # the work tree: the trajectory's files as committed, the rest untouched
    assert (root / "README.md").read_text() == "hi, unstaged\n"
    assert (root / "src/app.py").read_text() == "x = 2\n"
    assert (root / "notes.txt").read_text() == "untracked\n"
    for path in [*trajectory_files(trajectory), SKILL, GITIGNORE]:
        assert (root / path).read_text(encoding="utf-8") == blob_text(repo, commit, path)
    assert (root / STRAY).read_text() == "staged by hand\n"

    # the working trajectory archived: the next import starts a new one
    assert not working_folder(target).path.exists()
    archived = root / ".stet/cache/trajectories/.archive" / f"{target.key}-{trajectory}"
    assert result.archived == archived.relative_to(root).as_posix()
    assert (archived / "meta.json").is_file() and (archived / "sessions").is_dir()
    assert result.warnings == []

    history_is_whole(repo)
    if GIT:
        # what git shows: the staged skill and .stet/.gitignore are committed, nothing else
        # moved
        kept = [line for line in status_before if SKILL not in line and GITIGNORE not in line]
        assert git_status(root) == kept


def test_the_id_is_the_first_events_date_the_target_and_a_hash_of_the_events(
    repo: pygit2.Repository, root: Path, tmp_path: Path
) -> None:
    repo.references.create("refs/heads/Feature/Login_ÜX", repo.head.target)
    repo.set_head("refs/heads/Feature/Login_ÜX")
    import_work(root, tmp_path)
    result = capstone(resolve_target(root))
    events = (root / f".stet/trajectories/{result.trajectory}/events.jsonl").read_bytes()
    digest = hashlib.sha256(events).hexdigest()[:12]
    assert result.trajectory == f"2026-03-01-feature-login-ux-{digest}"


def test_a_branch_named_with_a_secret_names_no_committed_file(
    repo: pygit2.Repository, root: Path, tmp_path: Path
) -> None:
    """The id names the committed folder: a target name the gate finds a secret in gives
    its kind instead, and the trailer and meta.json name the same id as the folder."""
    branch = "xoxb-123456789012-1234567890123-abcdefgh"  # a Slack bot token's shape
    repo.references.create(f"refs/heads/{branch}", repo.head.target)
    repo.set_head(f"refs/heads/{branch}")
    import_work(root, tmp_path)

    result = capstone(resolve_target(root))

    assert re.fullmatch(r"2026-03-01-branch-[0-9a-f]{12}", result.trajectory)
    commit = head_commit(reopen(repo))
    files = flat(reopen(repo), commit.tree)
    assert not [path for path in files if "xoxb" in path]
    assert commit.message_trailers["Stet-Trajectory"] == result.trajectory
    meta = json.loads(blob_text(repo, commit, f".stet/trajectories/{result.trajectory}/meta.json"))
    assert meta["id"] == result.trajectory and branch not in json.dumps(meta)


def test_a_secret_written_into_the_working_trajectory_by_hand_is_redacted_at_the_capstone(
    repo: pygit2.Repository, root: Path, tmp_path: Path
) -> None:
    target = import_work(root, tmp_path)
    events = working_folder(target).path / "events.jsonl"
    text = events.read_text(encoding="utf-8")
    events.write_text(text.replace("Done. I pushed", f"Done ({OTHER_TOKEN}). I pushed"))

    result = capstone(target)

    assert result.redaction.get("github-token") == 1
    commit = head_commit(repo)
    for path in flat(repo, commit.tree):
        assert OTHER_TOKEN[4:] not in blob_text(repo, commit, path)
    committed = blob_text(repo, commit, f".stet/trajectories/{result.trajectory}/events.jsonl")
    assert "Done ([REDACTED:github-token#2]). I pushed" in committed


def test_a_second_capstone_after_more_work_follows_the_first(
    repo: pygit2.Repository, root: Path, tmp_path: Path
) -> None:
    first = capstone(import_work(root, tmp_path, 1))
    assert first.supersedes is None

    second = capstone(import_work(root, tmp_path, 2))

    assert second.trajectory != first.trajectory
    assert second.supersedes is not None
    assert (second.supersedes.trajectory, second.supersedes.commit) == (
        first.trajectory,
        first.commit,
    )
    commit = head_commit(repo)
    assert [str(p) for p in commit.parent_ids] == [first.commit]
    assert commit.message_trailers == {
        "Stet-Trajectory": second.trajectory,
        "Stet-Supersedes": first.trajectory,
    }
    assert commit.message.startswith("Trajectory: Add a health check endpoint (round 2)\n\n")
    paths = flat(repo, commit.tree)
    for trajectory in (first.trajectory, second.trajectory):
        assert set(trajectory_files(trajectory)) <= set(paths)
    meta = json.loads(blob_text(repo, commit, f".stet/trajectories/{second.trajectory}/meta.json"))
    assert meta["base_commit"] == first.commit
    assert [c.path for c in second.paths] == trajectory_files(second.trajectory)
    assert second.to_json()["supersedes"] == {
        "trajectory": first.trajectory,
        "commit": first.commit,
    }

    # work committed after a capstone: the next capstone follows no capstone
    commit_files(reopen(repo), {"src/app.py": "x = 3\n"}, "more code")
    third = capstone(import_work(root, tmp_path, 3))
    assert third.supersedes is None
    assert head_commit(repo).message_trailers == {"Stet-Trajectory": third.trajectory}
    assert len(history_is_whole(repo)) == 5


def test_a_capstone_again_without_new_work_changes_nothing(
    repo: pygit2.Repository, root: Path, tmp_path: Path, stet: Stet
) -> None:
    target = import_work(root, tmp_path)
    done = capstone(target)
    before = snapshot(repo)

    refused("no-working-trajectory", lambda: capstone(target))
    code, out, err = stet("capstone", "-C", str(root))
    assert (code, out) == (1, "") and "no working trajectory" in err
    assert snapshot(repo) == before

    # the same session imported again: committed already, it has nothing to import
    with pytest.raises(StetError, match="committed already"):
        import_work(root, tmp_path)
    assert not working_folder(target).path.exists()

    # the working trajectory back from its archive (as a capstone whose archiving failed
    # leaves it): it is the committed one; nothing is committed, and it is archived again
    assert done.archived is not None
    (root / done.archived).rename(working_folder(target).path)
    before = snapshot(repo)
    code, out, _ = stet("capstone", "-C", str(root), "--dry-run")
    assert code == 0 and "would commit" not in out, out
    assert f"trajectory {done.trajectory} is already committed" in out
    assert "would be archived" in out
    code, out, _ = stet("capstone", "-C", str(root), "--dry-run", "--json")
    document = json.loads(out)
    assert (document["paths"], document["supersedes"]) == ([], None)
    assert "Stet-Supersedes" not in document["message"]
    assert snapshot(repo) == before
    code, out, _ = stet("capstone", "-C", str(root))
    assert code == 0 and "already committed" in out and "archived to" in out
    assert not working_folder(target).path.exists()
    assert git_state(snapshot(repo)) == git_state(before)


def git_state(snapshot: dict[str, Any]) -> dict[str, Any]:
    """A snapshot but the work tree's `.stet/cache/`."""
    tree = {k: v for k, v in snapshot["work tree"].items() if not k.startswith(".stet/cache")}
    return snapshot | {"work tree": tree}


def test_a_capstone_whose_archiving_failed_is_finished_by_the_next(
    repo: pygit2.Repository, root: Path, tmp_path: Path
) -> None:
    """The commit is made when archiving fails (a warning says so); the next capstone finds
    it committed and archives, so the next session's capstone holds that session only."""
    target = import_work(root, tmp_path, 1)
    obstacle = root / ".stet" / "cache" / "trajectories" / ".archive"
    obstacle.write_text("in the way\n")
    first = capstone(target)
    assert first.changed and first.archived is None
    assert any("not archived" in warning for warning in first.warnings)
    obstacle.unlink()

    again = capstone(target)
    assert not again.changed and again.archived is not None

    assert_the_second_session_is_committed(repo, root, tmp_path, target)


def test_a_capstone_stopped_after_its_commit_is_finished_with_its_verdicts(
    repo: pygit2.Repository, root: Path, tmp_path: Path, stet: Stet
) -> None:
    """A capstone stopped right after its commit leaves the working trajectory and its
    verdicts; the next capstone removes the working feedback file, so the branch's next
    trajectory does not commit them again as its own, and keeps a verdict the commit lacks
    in the committed trajectory's file."""
    target = import_work(root, tmp_path, 1)
    working_feedback = root / ".stet/feedback" / f"{target.key}.jsonl"
    code, _, err = stet(
        "trajectory", "mark", target.key, "2", "--verdict", "wrong", "--text", "never cat .env",
        "-C", str(root),
    )  # fmt: skip
    assert (code, err) == (0, ""), err
    verdicts = working_feedback.read_text(encoding="utf-8")
    first = capstone(target)
    assert first.archived is not None and not working_feedback.exists()
    (root / first.archived).rename(working_folder(target).path)
    working_feedback.write_text(verdicts, encoding="utf-8")
    code, _, err = stet(
        "trajectory", "mark", target.key, "3", "--verdict", "clever", "-C", str(root)
    )  # a verdict recorded after the commit
    assert (code, err) == (0, ""), err

    again = capstone(target)

    assert not again.changed and again.archived is not None
    assert not working_feedback.exists()
    committed = root / ".stet/feedback" / f"{first.trajectory}.jsonl"
    assert [(v.step, v.verdict) for v in read_feedback(root, first.trajectory).verdicts] == [
        (2, "wrong"),
        (3, "clever"),
    ]
    assert committed.read_text(encoding="utf-8").startswith(
        blob_text(repo, head_commit(repo), f".stet/feedback/{first.trajectory}.jsonl")
    )
    third = capstone(import_work(root, tmp_path, 2))
    assert [c.path for c in third.paths] == trajectory_files(third.trajectory)


def stopped_capstone(root: Path, pattern: str) -> None:
    """`stet capstone` in a process of its own, killed right before the first rename, link or
    unlink matching `pattern` (`test_settle.killed_before`)."""
    from test_settle import killed_before

    killed_before(pattern, root, "capstone")


def work_with_skill_and_verdict(root: Path, tmp_path: Path, stet: Stet) -> Target:
    """Imported work, an entry graduated into the skill (staged) and a verdict on a step."""
    target = import_work(root, tmp_path)
    graduate_into_skill(root)
    code, _, err = stet(
        "trajectory", "mark", target.key, "2", "--verdict", "wrong", "-C", str(root)
    )
    assert (code, err) == (0, ""), err
    return target


@pytest.mark.parametrize(
    "stopped",
    [
        r"replace \S+ narration\.md",  # the trajectory's events.jsonl written, no more
        r"replace \S+ SKILL\.md",  # every trajectory file written, the skill not yet
        "pre-commit",  # every file written, the commit not made
    ],
)
def test_a_capstone_killed_before_its_commit_is_taken_back_by_the_next_command(
    repo: pygit2.Repository, root: Path, tmp_path: Path, stet: Stet, stopped: str
) -> None:
    """Killed (SIGKILL) once it wrote files to the work tree and before its commit: they were
    left untracked, the skill rewritten unstaged. The next command that reads the working
    trajectory (a list) takes them back, the file they replaced put back; a capstone then
    commits as if none had been stopped."""
    target = work_with_skill_and_verdict(root, tmp_path, stet)
    stage(repo, "other.txt", "staged by hand\n")
    (root / "README.md").write_text("edited, not staged\n")
    before = git_state(snapshot(repo)) | {"index": None}  # `git status` rewrites its stat data
    if stopped == "pre-commit":
        killed_in_pre_commit(repo, root, tmp_path)
    else:
        stopped_capstone(root, stopped)
    assert head_commit(repo).id == repo.head.target
    assert any(line.startswith("?? .stet/trajectories/") for line in git_status(root))

    code, _, err = stet("trajectory", "list", "-C", str(root))

    assert code == 0, err
    assert git_state(snapshot(repo)) | {"index": None} == before
    assert not list((root / ".stet/cache/trajectories").glob("*.capstone"))
    result = capstone(target)
    assert result.changed and result.warnings == []
    assert sorted(git_status(root)) == [" M README.md", "A  other.txt"]


def killed_in_pre_commit(repo: pygit2.Repository, root: Path, scratch: Path) -> None:
    """`stet capstone` killed (SIGKILL) by its pre-commit hook: every file written, no commit.
    Its temporary index, which nothing can remove after a kill, is left in `scratch`."""
    hook = write_hook(Path(repo.path) / "hooks", "pre-commit", "kill -9 $PPID\nsleep 5\n")
    done = subprocess.run(
        [sys.executable, "-m", "stet_lsp", "capstone"],
        cwd=root,
        capture_output=True,
        env={**os.environ, "TMPDIR": str(scratch)},
    )
    assert done.returncode == -9, done.stderr
    hook.unlink()


@POSIX
def test_a_file_edited_after_a_capstone_was_killed_keeps_the_edit(
    repo: pygit2.Repository, root: Path, tmp_path: Path, stet: Stet
) -> None:
    """Taking back a capstone killed before its commit put the skill it replaced back over
    the path without looking: an edit made there since the kill was lost. A file that holds
    something else than the capstone wrote is the user's and stays; the copy of what it
    held before goes, since the index holds those bytes."""
    work_with_skill_and_verdict(root, tmp_path, stet)
    skill = root / SKILL
    killed_in_pre_commit(repo, root, tmp_path)
    assert list(skill.parent.glob(".SKILL.md.stet-before-capstone-*"))
    edited = skill.read_text(encoding="utf-8") + "\nAn edit made after the kill.\n"
    skill.write_text(edited, encoding="utf-8")

    code, _, err = stet("trajectory", "list", "-C", str(root))

    assert code == 0, err
    assert skill.read_text(encoding="utf-8") == edited
    assert not list(skill.parent.glob(".SKILL.md.stet-before-capstone-*"))
    assert not any(line.startswith("?? .stet/trajectories/") for line in git_status(root))


@POSIX
@pytest.mark.skipif(GIT is None, reason="the file is restored with git")
def test_finishing_a_capstone_keeps_the_copy_an_earlier_take_back_left(
    repo: pygit2.Repository, root: Path, tmp_path: Path, stet: Stet
) -> None:
    """A capstone killed before its commit, taken back after the user restored the skill
    from the index: the copy of what the skill held before (with an unstaged line, nowhere
    else now) stays beside it. A later capstone killed past its commit was finished by
    removing every copy beside the files it wrote, that one too: the line was lost. A
    capstone's finish removes the copies it made alone."""
    work_with_skill_and_verdict(root, tmp_path, stet)
    skill = root / SKILL
    skill.write_text(skill.read_text(encoding="utf-8") + "\nAn unstaged line.\n", encoding="utf-8")
    before = skill.read_text(encoding="utf-8")
    killed_in_pre_commit(repo, root, tmp_path)
    subprocess.run([GIT, "restore", SKILL], cwd=root, check=True)
    code, _, err = stet("trajectory", "list", "-C", str(root))
    assert code == 0, err
    left = list(skill.parent.glob(".SKILL.md.stet-before-capstone-*"))
    assert [copy.read_text(encoding="utf-8") for copy in left] == [before]

    stopped_capstone(root, r"unlink index\.stet-\S+")
    code, _, err = stet("trajectory", "list", "-C", str(root))

    assert code == 0, err
    assert not list((root / ".stet/cache/trajectories").glob("*.capstone"))  # finished
    assert list(skill.parent.glob(".SKILL.md.stet-before-capstone-*")) == left
    assert left[0].read_text(encoding="utf-8") == before


@POSIX
@pytest.mark.skipif(GIT is None, reason="the commit is undone with git")
@pytest.mark.parametrize("undo", [["reset", "--soft", "HEAD~1"], ["reset", "HEAD~1"]])
def test_a_file_there_before_a_capstone_whose_commit_was_undone_is_never_removed(
    repo: pygit2.Repository, root: Path, tmp_path: Path, stet: Stet, undo: list[str]
) -> None:
    """A capstone killed past its commit, whose commit the user undid before the next
    command: that command takes it back, and the record did not say which files were there
    before, so the skill (holding the user's unstaged line, as the capstone wrote it) was
    taken for one the capstone created, and removed. A file that was there stays."""
    work_with_skill_and_verdict(root, tmp_path, stet)
    skill = root / SKILL
    skill.write_text(skill.read_text(encoding="utf-8") + "\nAn unstaged line.\n", encoding="utf-8")
    parent = repo.head.target
    stopped_capstone(root, r"unlink index\.stet-\S+")
    assert head_commit(repo).parent_ids == [parent]
    subprocess.run([GIT, *undo], cwd=root, check=True)

    code, _, err = stet("trajectory", "list", "-C", str(root))

    assert code == 0, err
    assert "An unstaged line." in skill.read_text(encoding="utf-8")
    assert not list((root / ".stet/cache/trajectories").glob("*.capstone"))


@POSIX
@pytest.mark.skipif(GIT is None, reason="the user commits with git")
def test_files_the_user_committed_after_a_capstone_was_killed_stay(
    repo: pygit2.Repository, root: Path, tmp_path: Path, stet: Stet
) -> None:
    """Killed before its commit, the capstone left its files in the work tree; the user
    committed them by hand, and the next command took them back, leaving the commit's files
    deleted in the work tree. When the index or HEAD holds a file as the capstone wrote it,
    the user took its work: nothing of it is taken back."""
    work_with_skill_and_verdict(root, tmp_path, stet)
    killed_in_pre_commit(repo, root, tmp_path)
    subprocess.run([GIT, "add", "-A", ".stet/trajectories", SKILL], cwd=root, check=True)
    subprocess.run([GIT, "commit", "-qm", "the trajectory, by hand"], cwd=root, check=True)
    before = git_status(root)
    assert not any(line.startswith(" D") for line in before)

    code, _, err = stet("trajectory", "list", "-C", str(root))

    assert code == 0, err
    assert git_status(root) == before
    assert not list((root / ".stet/cache/trajectories").glob("*.capstone"))


def test_a_capstone_killed_as_it_wrote_its_record_leaves_no_temporary_file(
    repo: pygit2.Repository, root: Path, tmp_path: Path, stet: Stet
) -> None:
    """Killed before its record's temporary file was renamed into place: that file stayed in
    `.stet/cache/trajectories/` for good. The next command that reads the working trajectory
    removes it; a link under such a name, one git tracks and one of another name stay."""
    target = import_work(root, tmp_path)
    cache = root / ".stet/cache/trajectories"
    record = f"{target.key}.capstone"
    stopped_capstone(root, rf"replace \.{re.escape(record)}\.[0-9a-f]{{16}}\.tmp \S+")
    [left] = cache.glob(f".{record}.*.tmp")
    outside = tmp_path / "outside.txt"
    outside.write_text("not Stet's\n")
    (cache / f".{record}.{'1' * 16}.tmp").symlink_to(outside)
    tracked = cache / f".{record}.{'2' * 16}.tmp"
    tracked.write_text("{}")
    index = repo.index
    index.add(tracked.relative_to(root).as_posix())
    index.write()
    other = cache / f".{record}.left.tmp"
    other.write_text("{}")

    code, _, err = stet("trajectory", "list", "-C", str(root))

    assert code == 0, err
    assert not left.exists() and not (cache / record).exists()
    assert sorted(path.name for path in cache.glob(f".{record}.*")) == sorted(
        [f".{record}.{'1' * 16}.tmp", tracked.name, other.name]
    )
    assert outside.read_text() == "not Stet's\n"
    assert capstone(target).changed


def test_a_capstone_killed_between_its_commit_and_the_index_is_finished_by_the_next_command(
    repo: pygit2.Repository, root: Path, tmp_path: Path, stet: Stet
) -> None:
    """Killed once its commit was made, before the index had its files: `git status` showed
    them staged as deleted, so that a plain `git commit` would delete them. The next command
    that reads the working trajectory finishes the capstone: the index gets the commit's
    files (the skill too), the working feedback file goes, the working trajectory is
    archived; what was staged and unstaged before stays so."""
    target = work_with_skill_and_verdict(root, tmp_path, stet)
    stage(repo, "other.txt", "staged by hand\n")
    (root / "README.md").write_text("edited, not staged\n")
    parent = repo.head.target
    stopped_capstone(root, r"unlink index\.stet-\S+")
    head = head_commit(repo)
    assert head.parent_ids == [parent]
    trajectory = head.message_trailers["Stet-Trajectory"]
    assert f"D  .stet/trajectories/{trajectory}/events.jsonl" in git_status(root)

    code, _, err = stet("trajectory", "list", "-C", str(root))

    assert code == 0, err
    assert sorted(git_status(root)) == [" M README.md", "A  other.txt"]
    entries = index_entries(repo)
    for path in [*trajectory_files(trajectory), SKILL, f".stet/feedback/{trajectory}.jsonl"]:
        assert entries[path][0] == str(head.tree[path].id), path
    assert not (root / ".stet/feedback" / f"{target.key}.jsonl").exists()
    assert not working_folder(target).path.exists()
    assert not list((root / ".stet/cache/trajectories").glob("*.capstone"))
    assert head_commit(repo).id == head.id


def detached_at_a_missing_commit(repo: pygit2.Repository) -> None:
    (Path(repo.path) / "HEAD").write_text("1" * 40 + "\n")


def parent_commit_missing(repo: pygit2.Repository) -> None:
    """The object of the capstone's parent commit removed from the object database."""
    parent = str(head_commit(repo).parent_ids[0])
    (Path(repo.path) / "objects" / parent[:2] / parent[2:]).unlink()


def killed_past_its_commit_in_a_damaged_repository(
    repo: pygit2.Repository, root: Path, tmp_path: Path, damage: Callable[..., None]
) -> str:
    """A capstone killed past its commit, then the repository damaged by hand; its record."""
    target = import_work(root, tmp_path)
    stopped_capstone(root, r"unlink index\.stet-\S+")
    damage(repo)
    return f".stet/cache/trajectories/{target.key}.capstone"


def stet_process(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "stet_lsp", *args]
    return subprocess.run(command, cwd=root, capture_output=True, text=True, check=False)


@pytest.mark.parametrize("damage", [detached_at_a_missing_commit, parent_commit_missing])
def test_a_killed_capstone_in_a_damaged_repository_leaves_the_list_alone(
    repo: pygit2.Repository, root: Path, tmp_path: Path, damage: Callable[..., None]
) -> None:
    """Settling the killed capstone met libgit2's error, and `stet trajectory list` ended in
    a traceback. A command that only reads reads the trajectory as it is; the record stays
    for when git can read the repository again."""
    record = killed_past_its_commit_in_a_damaged_repository(repo, root, tmp_path, damage)

    listed = stet_process(root, "trajectory", "list")

    assert listed.returncode == 0 and listed.stderr == "", listed.stderr
    assert "branch--main--" in listed.stdout
    assert (root / record).is_file()


def test_a_killed_capstone_in_a_damaged_repository_refuses_a_writer_naming_the_problem(
    repo: pygit2.Repository, root: Path, tmp_path: Path
) -> None:
    """The capstone run again met libgit2's error settling the one killed (its parent's
    object gone) and ended in a traceback: it is refused, naming the record and what git
    could not read, and changes nothing."""
    record = killed_past_its_commit_in_a_damaged_repository(
        repo, root, tmp_path, parent_commit_missing
    )
    before = snapshot(repo)

    refused = stet_process(root, "capstone")

    assert refused.returncode == 1, refused.stderr
    assert refused.stderr.startswith(
        f"stet: error: the capstone stopped midway ({record}) could not be finished: git "
        "cannot read the repository ("
    ), refused.stderr
    assert "Traceback" not in refused.stderr and "git fsck" in refused.stderr
    assert snapshot(repo) == before


APP_BLOB = str(pygit2.hash(b"x = 1\n"))


@pytest.mark.parametrize(
    "record",
    [
        {"branch": 5},
        {"written": ["src/app.py"]},
        {"written": {"src/app.py": 7}},
        {"created": "src"},
        {"existed": [["src/app.py"]]},
        {"staging": {"src/app.py": ["zz", 33188, None]}},
        {"written": {"../outside.txt": APP_BLOB}},
        {"written": {"/etc/passwd": APP_BLOB}},
        {"trajectory": "../../elsewhere"},
        "not JSON",
        "x" * (17 << 20),
    ],
    ids=lambda record: repr(record)[:40],
)
def test_a_capstone_record_that_is_not_one_is_dropped(
    repo: pygit2.Repository, root: Path, tmp_path: Path, stet: Stet, record: object
) -> None:
    """A record no capstone wrote (damaged, written by hand, a field of the wrong type, an
    object id that is not one, a path out of the work tree) gave a traceback in every command
    that reads the working trajectory, and so blocked them all. It names nothing to finish
    or take back: it goes, and the commands go on."""
    (root / "src/app.py").write_text("x = 1\n")
    target = import_work(root, tmp_path)
    path = root / ".stet/cache/trajectories" / f"{target.key}.capstone"
    valid = {
        "trajectory": "t",
        "parent": "0" * 40,
        "branch": "refs/heads/main",
        "tree": "0" * 40,
        "written": {},
        "created": [],
        "staging": {},
        "feedback": None,
        "feedback_sha256": None,
    }
    path.write_text(json.dumps(valid | record) if isinstance(record, dict) else str(record))

    for command in (["trajectory", "list"], ["capstone", "--dry-run"]):
        code, _, err = stet(*command, "-C", str(root))
        assert (code, err) == (0, ""), err
    assert not path.exists()
    import_work(root, tmp_path, 2)
    assert (root / "src/app.py").read_text() == "x = 1\n"
    assert working_folder(target).path.is_dir()


@pytest.mark.parametrize(
    "record",
    [
        {"created": "abc"},
        {"written": 7},
        {"before": "not an object id"},
        {"created": ["/OUTSIDE"]},
        {"created": [".stet/skills/x/../../../OUTSIDE"]},
        {"path": ".stet/skills/../../src/app.py"},
    ],
    ids=repr,
)
def test_a_skill_write_record_that_is_not_one_is_dropped(
    repo: pygit2.Repository, root: Path, tmp_path: Path, stet: Stet, record: dict[str, Any]
) -> None:
    """Likewise a skill write's record: one naming folders outside the repository (an
    absolute path) had them removed when empty."""
    outside = tmp_path / "OUTSIDE"
    outside.mkdir()
    (root / "src/app.py").write_text("x = 1\n")
    import_work(root, tmp_path)
    path = root / ".stet/cache/skills/x.staging"
    valid = {
        "path": SKILL,
        "before": None,
        "written": APP_BLOB,
        "staged": "1" * 40,
        "created": [".stet/skills/x"],
    }
    fields = valid | record
    fields["created"] = (
        [str(outside) if folder == "/OUTSIDE" else folder for folder in fields["created"]]
        if isinstance(fields["created"], list)
        else fields["created"]
    )
    (root / ".stet/skills/x").mkdir(parents=True)
    (root / SKILL).write_text("x = 1\n")  # what the record says was written
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(fields))

    code, _, err = stet("trajectory", "list", "-C", str(root))

    assert (code, err) == (0, ""), err
    assert not path.exists()
    assert outside.is_dir()
    assert (root / "src/app.py").read_text() == "x = 1\n"
    assert (root / SKILL).read_text() == "x = 1\n"


def test_an_import_while_a_killed_capstone_cannot_be_finished_is_refused(
    repo: pygit2.Repository, root: Path, tmp_path: Path, stet: Stet
) -> None:
    """A capstone killed past its commit is finished by the next writer, which archives the
    working trajectory; while git held `index.lock` the finish stopped short and an import
    went on into the working trajectory, whose new session the finish archived once the
    lock was gone, never committed. A writer is refused while the finish cannot be done,
    saying why; once git lets go, the session is imported into a new working trajectory."""
    target = import_work(root, tmp_path)
    stopped_capstone(root, r"unlink index\.stet-\S+")
    folder = working_folder(target).path
    sessions = sorted((folder / "sessions").iterdir())
    lock = Path(repo.path) / "index.lock"
    lock.write_bytes(b"")

    with pytest.raises(StetError, match=r"cannot be finished yet: .*index"):
        import_work(root, tmp_path, 2)

    assert sorted((folder / "sessions").iterdir()) == sessions
    lock.unlink()
    assert_the_second_session_is_committed(repo, root, tmp_path, target)


def assert_the_second_session_is_committed(
    repo: pygit2.Repository, root: Path, tmp_path: Path, target: Target
) -> None:
    """Imported once a writer is let in again, the second session goes into a working
    trajectory of its own, and the next capstone commits it alone."""
    import_work(root, tmp_path, 2)
    result = capstone(target)
    assert result.changed
    events = blob_text(
        repo, head_commit(repo), f".stet/trajectories/{result.trajectory}/events.jsonl"
    )
    sessions_committed = {json.loads(line)["session"] for line in events.splitlines()}
    assert sessions_committed == {"00000002-1111-4222-8333-444455556666"}


def test_a_writer_is_refused_while_whether_git_tracks_a_capstone_record_cannot_be_told(
    repo: pygit2.Repository, root: Path, tmp_path: Path, stet: Stet
) -> None:
    """A capstone killed past its commit left its record; with a split index, which libgit2
    cannot read, whether git tracks that record cannot be told, so it was not settled, and an
    import went on into the working trajectory that commit holds: once the index could be
    read, the finish archived the new session, never committed. A writer is refused while
    so, saying why, and a reader reads; once the index can be read, the session is imported
    into a new working trajectory and committed."""
    target = import_work(root, tmp_path)
    stopped_capstone(root, r"unlink index\.stet-\S+")
    folder = working_folder(target).path
    sessions = sorted((folder / "sessions").iterdir())
    subprocess.run([GIT, "update-index", "--split-index"], cwd=root, check=True)

    with pytest.raises(StetError, match=r"cannot be finished yet: the git index cannot be read"):
        import_work(root, tmp_path, 2)
    code, _, err = stet("trajectory", "list", "-C", str(root))
    assert code == 0, err

    assert sorted((folder / "sessions").iterdir()) == sessions
    subprocess.run([GIT, "update-index", "--no-split-index"], cwd=root, check=True)
    assert_the_second_session_is_committed(repo, root, tmp_path, target)


def test_a_capstone_killed_past_its_commit_in_a_torn_index_says_to_repair_it(
    root: Path, tmp_path: Path
) -> None:
    """An index git itself cannot read is no index git holds for a moment: the refusal says
    to repair it, not to wait for git to let go of it."""
    import_work(root, tmp_path)
    stopped_capstone(root, r"unlink index\.stet-\S+")
    (root / ".git" / "index").write_bytes(b"DIRC\0\0\0\2 torn")

    with pytest.raises(StetError, match=r"cannot be finished yet: .*git fsck") as refused:
        import_work(root, tmp_path, 2)
    assert "lets go" not in str(refused.value)


def test_a_capstone_killed_past_its_commit_is_finished_on_the_branch_renamed_since(
    repo: pygit2.Repository, root: Path, tmp_path: Path, stet: Stet
) -> None:
    """The branch the stopped capstone committed on was renamed before the next command: the
    commit is found on HEAD, and the capstone finished rather than taken back (which would
    remove the committed files from the work tree as well as the index)."""
    import_work(root, tmp_path)
    stopped_capstone(root, r"unlink index\.stet-\S+")
    trajectory = head_commit(repo).message_trailers["Stet-Trajectory"]
    subprocess.run(["git", "branch", "-m", "main", "renamed"], cwd=root, check=True)

    code, _, err = stet("trajectory", "list", "-C", str(root))

    assert code == 0, err
    assert [line for line in git_status(root) if not line.startswith("??")] == []
    entries = index_entries(repo)
    for path in trajectory_files(trajectory):
        assert path in entries and (root / path).is_file(), path


def test_a_capstone_run_again_after_one_killed_past_its_commit_finishes_it(
    repo: pygit2.Repository, root: Path, tmp_path: Path, stet: Stet
) -> None:
    """The capstone run again finishes the one killed after its commit and says so, as a
    capstone of a trajectory HEAD holds does: nothing committed, the working trajectory
    archived."""
    target = import_work(root, tmp_path)
    stopped_capstone(root, r"unlink index\.stet-\S+")
    head = head_commit(repo)

    code, out, err = stet("capstone", "-C", str(root), "--json")

    assert code == 0, err
    document = json.loads(out)
    assert (document["changed"], document["commit"]) == (False, None)
    assert document["trajectory"] == head.message_trailers["Stet-Trajectory"]
    assert document["parent"] == str(head.id)
    assert document["archived"] is not None and (root / document["archived"]).is_dir()
    assert not working_folder(target).path.exists()
    assert [line for line in git_status(root) if not line.startswith("??")] == []


def test_dry_run_says_what_would_be_committed_and_changes_nothing(
    repo: pygit2.Repository, root: Path, tmp_path: Path, stet: Stet
) -> None:
    import_work(root, tmp_path)
    graduate_into_skill(root)
    stage(repo, STRAY, "staged by hand\n")
    age_head(repo)
    before = snapshot(repo)

    code, out, err = stet("capstone", "-C", str(root), "--dry-run")
    assert (code, err) == (0, "")
    first_line = out.splitlines()[0]
    assert first_line.startswith("would commit trajectory 2026-03-01-main-")
    trajectory = first_line.split()[3]
    for path in [*trajectory_files(trajectory), SKILL]:
        assert f"added    {path}" in out
    assert f"added    {STRAY}" not in out
    assert f"left staged (graduation did not stage it): {STRAY}" in out
    assert (
        f"  Trajectory: Add a health check endpoint (round 1)\n\n  Stet-Trajectory: {trajectory}\n"
        in out
    )

    code, out, _ = stet("capstone", "-C", str(root), "--dry-run", "--json")
    document = json.loads(out)
    assert code == 0 and document["dry_run"] is True and document["changed"] is False
    assert document["trajectory"] == trajectory and document["commit"] is None
    assert document["archived"] is None and document["left_staged"] == [STRAY]
    assert STRAY not in [p["path"] for p in document["paths"]]
    assert snapshot(repo) == before

    result = capstone(resolve_target(root))
    assert result.trajectory == trajectory  # the id does not depend on the run
    assert [c.path for c in result.paths] == [p["path"] for p in document["paths"]]


def test_json_output(repo: pygit2.Repository, root: Path, tmp_path: Path, stet: Stet) -> None:
    target = import_work(root, tmp_path)

    code, out, err = stet("capstone", "-C", str(root), "--json", "-m", "Add the health check")

    assert (code, err) == (0, "")
    document = json.loads(out)
    commit = head_commit(repo)
    trajectory = document["trajectory"]
    assert document == {
        "version": 1,
        "target": {"kind": "branch", "name": "main", "label": "main", "key": target.key},
        "trajectory": trajectory,
        "dry_run": False,
        "changed": True,
        "commit": str(commit.id),
        "parent": str(commit.parent_ids[0]),
        "branch": "main",
        "message": f"Add the health check\n\nStet-Trajectory: {trajectory}\n",
        "paths": [
            {"path": path, "status": "added"} for path in [GITIGNORE, *trajectory_files(trajectory)]
        ],
        "supersedes": None,
        "archived": f".stet/cache/trajectories/.archive/{target.key}-{trajectory}",
        "redaction": {},
        "warnings": [],
        "left_staged": [],
    }
    assert commit.message == document["message"]


def test_the_plain_output(repo: pygit2.Repository, root: Path, tmp_path: Path, stet: Stet) -> None:
    import_work(root, tmp_path)
    code, out, _ = stet("capstone", "-C", str(root))
    commit = head_commit(repo)
    assert code == 0
    assert out.startswith("committed trajectory 2026-03-01-main-")
    assert f"as {str(commit.id)[:12]} on main:" in out.splitlines()[0]
    assert "working trajectory archived to .stet/cache/trajectories/.archive/" in out


def test_on_a_detached_head_only_when_asked(
    repo: pygit2.Repository, root: Path, tmp_path: Path, stet: Stet
) -> None:
    main = repo.head.target
    repo.set_head(main)
    target = import_work(root, tmp_path)
    assert target.kind == "detached"
    before = snapshot(repo)
    refused("detached", lambda: capstone(target))
    code, _, err = stet("capstone", "-C", str(root))
    assert code == 1 and "--detached" in err
    assert snapshot(repo) == before

    result = capstone(target, allow_detached=True)

    fresh = reopen(repo)
    assert fresh.head_is_detached and str(fresh.head.target) == result.commit
    assert result.branch is None
    assert fresh.references["refs/heads/main"].target == main
    assert next(iter(fresh.references["HEAD"].log())).oid_new == fresh.head.target


def test_a_detached_head_s_style_sheet_goes_with_it(
    repo: pygit2.Repository, root: Path, tmp_path: Path
) -> None:
    """A detached HEAD's sheet is keyed by its commit: the capstone moved HEAD on and its open
    entries were no longer listed or briefed (the file stranded under the old commit). The
    sheet goes with HEAD, as a branch's stays with its branch."""
    repo.set_head(repo.head.target)
    target = import_work(root, tmp_path)
    StyleSheet(target).add("Keep the retries idempotent.", kind="convention")
    result = capstone(target, allow_detached=True)
    after = resolve_target(root)
    assert after.kind == "detached" and after.name != target.name
    assert str(reopen(repo).head.target) == result.commit
    assert [e.text for e in StyleSheet(after).entries()] == ["Keep the retries idempotent."]
    assert not target.sheet_path.exists()
    assert f"# Style sheet: {after.label}" in after.sheet_path.read_text(encoding="utf-8")
    assert result.warnings == []


def test_a_detached_head_s_working_trajectory_follows_a_git_commit(
    repo: pygit2.Repository, root: Path, tmp_path: Path, stet: Stet
) -> None:
    """Keyed by the commit too: a `git commit` on the detached HEAD left it under the old key,
    and the capstone refused for want of a working trajectory."""
    repo.set_head(repo.head.target)
    old = import_work(root, tmp_path)
    (root / "src/app.py").write_text("x = 2\n", encoding="utf-8")
    subprocess.run(["git", "commit", "-qam", "more"], cwd=root, check=True, capture_output=True)
    new = resolve_target(root)
    assert new.kind == "detached" and new.key != old.key

    code, out, _ = stet("trajectory", "list", "--json", "-C", str(root))
    assert code == 0
    listed = json.loads(out)["trajectories"]
    assert [(t["id"], t["target"]) for t in listed] == [(new.key, new.name)]
    assert not (root / ".stet/cache/trajectories" / old.key).exists()

    result = capstone(new, allow_detached=True)
    assert str(reopen(repo).head.target) == result.commit
    meta = json.loads(blob_text(repo, head_commit(repo), trajectory_files(result.trajectory)[1]))
    assert meta["target"]["name"] == new.name


def test_a_branch_made_from_a_detached_head_takes_its_working_trajectory(
    repo: pygit2.Repository, root: Path, tmp_path: Path, stet: Stet
) -> None:
    """`git switch -c`, as git advises to keep a detached HEAD's commits: the branch goes on
    with its work, and its capstone commits the sessions imported while HEAD was detached."""
    repo.set_head(repo.head.target)
    old = import_work(root, tmp_path)
    subprocess.run(["git", "switch", "-q", "-c", "rescued"], cwd=root, check=True)
    new = resolve_target(root)
    assert new == Target(root, "branch", "rescued")

    code, out, _ = stet("trajectory", "list", "--json", "-C", str(root))
    assert code == 0
    listed = json.loads(out)["trajectories"]
    assert [(t["id"], t["target"]) for t in listed] == [(new.key, "rescued")]
    assert not (root / ".stet/cache/trajectories" / old.key).exists()
    result = capstone(new)
    meta = json.loads(blob_text(repo, head_commit(repo), trajectory_files(result.trajectory)[1]))
    assert meta["target"] == {"kind": "branch", "name": "rescued", "key": new.key}


# -- what graduation made for the trajectory: feedback, skills; nothing else ------------------------


def test_verdicts_on_the_working_trajectory_move_to_the_committed_id(
    repo: pygit2.Repository, root: Path, tmp_path: Path, stet: Stet
) -> None:
    target = import_work(root, tmp_path)
    working_feedback = root / ".stet/feedback" / f"{target.key}.jsonl"
    for step, verdict, text in ((2, "wrong", "never cat .env"), (5, "note", "good reply")):
        code, _, err = stet(
            "trajectory", "mark", target.key, str(step), "--verdict", verdict, "--text", text,
            "-C", str(root),
        )  # fmt: skip
        assert (code, err) == (0, ""), err
    marked = read_feedback(root, target.key).verdicts
    assert [v.trajectory for v in marked] == [target.key, target.key]
    entries_before = index_entries(repo)

    result = capstone(target)

    trajectory = result.trajectory
    moved = f".stet/feedback/{trajectory}.jsonl"
    commit = head_commit(repo)
    after = flat(repo, commit.tree)
    assert sorted(set(after) - set(flat(repo, commit.parents[0].tree))) == sorted(
        [*trajectory_files(trajectory), moved, GITIGNORE]
    )
    assert (moved, "added") in [(c.path, c.status) for c in result.paths]
    # the same verdicts, naming the committed trajectory, which the commit holds
    committed = [json.loads(line) for line in blob_text(repo, commit, moved).splitlines()]
    assert committed == [v.model_dump(mode="json", exclude_none=True) | {"trajectory": trajectory}
                         for v in marked]  # fmt: skip
    assert f".stet/trajectories/{trajectory}/events.jsonl" in after
    assert [v.step for v in read_feedback(root, trajectory).verdicts] == [2, 5]
    # the work tree and the index: the committed file, the working one gone
    assert (root / moved).read_text(encoding="utf-8") == blob_text(repo, commit, moved)
    assert not working_feedback.exists()
    entries_after = index_entries(repo)
    assert entries_after[moved] == (after[moved][0], pygit2.enums.FileMode.BLOB)
    assert {p: e for p, e in entries_after.items() if p in entries_before} == entries_before
    assert result.warnings == [] and result.left_staged == []
    history_is_whole(repo)

    # the branch's next working trajectory starts without the old verdicts
    next_target = import_work(root, tmp_path, 2)
    assert next_target.key == target.key
    assert read_feedback(root, next_target.key).verdicts == []
    second = capstone(next_target)
    assert f".stet/feedback/{second.trajectory}.jsonl" not in flat(repo, head_commit(repo).tree)
    assert flat(repo, head_commit(repo).tree)[moved] == after[moved]


def test_verdicts_already_under_the_committed_id_are_kept_and_not_doubled(
    repo: pygit2.Repository, root: Path, tmp_path: Path
) -> None:
    from stet_lsp.trajectory.feedback import mark_step

    target = import_work(root, tmp_path)
    mark_step(root, working_folder(target), 3, "clever")
    planned = capstone(target, dry_run=True).trajectory
    moved = root / ".stet/feedback" / f"{planned}.jsonl"
    working_line = (root / ".stet/feedback" / f"{target.key}.jsonl").read_text().strip()
    earlier = working_line.replace(target.key, planned).replace('"clever"', '"wrong"')
    # a verdict written under the id before (a capstone undone), and the working one already
    moved.write_text(f"{earlier}\nnot json\n{working_line.replace(target.key, planned)}\n")

    result = capstone(target)

    assert result.trajectory == planned
    text = blob_text(repo, head_commit(repo), f".stet/feedback/{planned}.jsonl")
    assert text == f"{earlier}\nnot json\n{working_line.replace(target.key, planned)}\n"


def test_a_stray_staged_stet_change_is_not_committed_and_stays_staged(
    repo: pygit2.Repository, root: Path, tmp_path: Path, stet: Stet
) -> None:
    commit_files(repo, {".stet/old/notes.md": "kept in HEAD\n"}, "old notes")
    target = import_work(root, tmp_path)
    stage(repo, STRAY, "staged by hand\n")
    stage(repo, ".stet/feedback/2025-01-01-main-000000000000.jsonl", "{}\n")
    index = repo.index
    index.read()
    index.remove(".stet/old/notes.md")  # a staged deletion
    index.write()
    strays = sorted([STRAY, ".stet/feedback/2025-01-01-main-000000000000.jsonl",
                     ".stet/old/notes.md"])  # fmt: skip
    entries_before = index_entries(repo)
    parent = head_commit(repo)

    code, out, _ = stet("capstone", "-C", str(root), "--dry-run")
    assert code == 0
    for path in strays:
        assert f"left staged (graduation did not stage it): {path}" in out
        assert f"added    {path}" not in out and f"deleted  {path}" not in out

    result = capstone(target)

    assert result.left_staged == strays
    added = [GITIGNORE, *trajectory_files(result.trajectory)]
    assert sorted(c.path for c in result.paths) == added
    before, after = flat(repo, parent.tree), flat(repo, head_commit(repo).tree)
    assert sorted(set(after) - set(before)) == added
    assert after[".stet/old/notes.md"] == before[".stet/old/notes.md"]
    entries_after = index_entries(repo)
    assert {p: e for p, e in entries_after.items() if p in entries_before} == entries_before
    assert ".stet/old/notes.md" not in entries_after
    if GIT:
        status = git_status(root)
        assert "D  .stet/old/notes.md" in status and f"A  {STRAY}" in status


def test_a_skill_with_unstaged_changes_keeps_them_and_names_the_committed_trajectory(
    repo: pygit2.Repository, root: Path, tmp_path: Path
) -> None:
    target = import_work(root, tmp_path)
    graduate_into_skill(root)
    staged = (root / SKILL).read_text(encoding="utf-8")
    edited = staged + "\n## Also\n\nTime out after 10 s.\n"
    (root / SKILL).write_text(edited, encoding="utf-8")  # not staged

    result = capstone(target)

    committed = blob_text(repo, head_commit(repo), SKILL)
    assert committed == staged.replace(target.key, result.trajectory)
    assert (root / SKILL).read_text(encoding="utf-8") == edited.replace(
        target.key, result.trajectory
    )
    assert index_entries(repo)[SKILL][0] == flat(repo, head_commit(repo).tree)[SKILL][0]
    assert result.warnings == []


def test_a_skill_unstaged_after_graduation_is_not_committed_and_said_so(
    repo: pygit2.Repository, root: Path, tmp_path: Path
) -> None:
    """`git reset` after graduating into a skill: the skill is not committed (the capstone
    commits what the index holds), and the capstone says so, where it was silent while the
    committed trajectory recorded entries graduated into that skill."""
    target = import_work(root, tmp_path)
    graduate_into_skill(root)
    index = repo.index
    index.read(False)
    index.remove(SKILL)
    index.write()

    result = capstone(target, dry_run=True)

    assert result.warnings == [
        f"{SKILL} is not staged (unstaged since graduation wrote it): it is not committed, "
        "though the trajectory records entries graduated into it; stage it "
        f"(git add {SKILL}) to commit it"
    ]
    (root / SKILL).unlink()  # removed too: nothing to stage
    result = capstone(target)
    assert SKILL not in flat(repo, head_commit(repo).tree)
    assert result.warnings == [
        f"{SKILL} is not staged (removed since graduation wrote it): it is not committed, "
        "though the trajectory records entries graduated into it"
    ]


def test_a_skill_whose_unstaged_changes_hold_a_secret_is_left_as_it_is_and_said_so(
    repo: pygit2.Repository, root: Path, tmp_path: Path
) -> None:
    """Rewriting its metadata would have redacted the person's unstaged text unseen, the
    original gone once the commit was made."""
    target = import_work(root, tmp_path)
    graduate_into_skill(root)
    staged = (root / SKILL).read_text(encoding="utf-8")
    edited = staged + "\nReach it at postgres://admin:Xy7y3c2Eom06Dwt0@db.internal/app\n"
    (root / SKILL).write_text(edited, encoding="utf-8")  # not staged

    result = capstone(target)

    assert blob_text(repo, head_commit(repo), SKILL) == staged.replace(
        target.key, result.trajectory
    )
    assert (root / SKILL).read_text(encoding="utf-8") == edited
    assert result.warnings == [
        f"{SKILL} has unstaged changes holding what the gate redacts (url-password at line "
        f"{edited.count(chr(10))}; stet gate redact --in-place): they are left as they are, "
        f"its metadata.stet-trajectory naming {target.key}"
    ]


def test_a_skill_of_a_branch_whose_key_the_gate_redacted_names_the_committed_trajectory(
    repo: pygit2.Repository, root: Path, tmp_path: Path
) -> None:
    """Graduation writes the working key through the gate: on a branch named with a token,
    the skill names it redacted. The capstone still names the committed trajectory."""
    branch = "fix-ghp_" + "u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d"
    repo.branches.local.create(branch, repo.head.peel(pygit2.Commit))
    repo.checkout(f"refs/heads/{branch}")
    target = import_work(root, tmp_path)
    graduate_into_skill(root)
    staged = (root / SKILL).read_text(encoding="utf-8")
    assert branch not in staged and "[REDACTED:" in skill_metadata(staged)["stet-trajectory"]
    result = capstone(target)
    committed = blob_text(repo, head_commit(repo), SKILL)
    assert skill_metadata(committed)["stet-trajectory"] == result.trajectory


def test_a_skill_extended_after_a_capstone_names_both_trajectories(
    repo: pygit2.Repository, root: Path, tmp_path: Path
) -> None:
    graduate_into_skill(root, "Use the retry helper for HTTP calls.")
    first = capstone(import_work(root, tmp_path, 1))
    graduate_into_skill(root, "Log every retry at debug level.")
    target = import_work(root, tmp_path, 2)
    assert skill_metadata((root / SKILL).read_text())["stet-trajectory"] == (
        f"{first.trajectory} {target.key}"
    )

    second = capstone(target)

    assert [(c.path, c.status) for c in second.paths if c.path == SKILL] == [(SKILL, "modified")]
    commit = head_commit(repo)
    metadata = skill_metadata(blob_text(repo, commit, SKILL))
    assert metadata["stet-trajectory"] == f"{first.trajectory} {second.trajectory}"
    tree = flat(repo, commit.tree)
    for trajectory in metadata["stet-trajectory"].split():
        assert f".stet/trajectories/{trajectory}/meta.json" in tree


@POSIX
def test_a_failing_hook_leaves_the_feedback_and_the_skill_as_they_were(
    repo: pygit2.Repository, root: Path, tmp_path: Path
) -> None:
    from stet_lsp.trajectory.feedback import mark_step

    target = import_work(root, tmp_path)
    graduate_into_skill(root)
    mark_step(root, working_folder(target), 2, "wrong")
    write_hook(Path(repo.path) / "hooks", "pre-commit", "exit 1\n")
    before = snapshot(repo)

    refused("hook", lambda: capstone(target))

    assert snapshot(repo) == before
    assert not (root / ".stet/trajectories").exists()
    assert sorted(p.name for p in (root / ".stet/feedback").iterdir()) == [f"{target.key}.jsonl"]


@POSIX
def test_a_file_the_capstone_replaces_is_moved_aside_unread_and_back_on_a_refusal(
    repo: pygit2.Repository, root: Path, tmp_path: Path
) -> None:
    """A file already at a path the capstone writes (a cloned repository's, say) is neither
    read nor lost: a sparse 8 GiB file is put back, the same file, when a hook refuses, and
    goes once the commit is made; nothing is left beside it."""
    target = import_work(root, tmp_path)
    planned = capstone(target, dry_run=True)
    path = root / ".stet/trajectories" / planned.trajectory / "narration.md"
    path.parent.mkdir(parents=True)
    with path.open("wb") as stream:
        stream.truncate(8 << 30)
    same = tmp_path / "same-file"
    same.hardlink_to(path)
    hook = write_hook(Path(repo.path) / "hooks", "pre-commit", "exit 1\n")

    refused("hook", lambda: capstone(target))

    assert path.samefile(same) and path.stat().st_size == 8 << 30
    assert sorted(p.name for p in path.parent.iterdir()) == ["narration.md"]
    hook.unlink()
    path.chmod(0o600)  # a file the capstone replaces keeps its permissions
    capstone(target)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    committed = blob_text(repo, head_commit(repo), path.relative_to(root).as_posix())
    assert path.read_text(encoding="utf-8") == committed
    assert sorted(p.name for p in path.parent.iterdir()) == [
        "events.jsonl",
        "meta.json",
        "narration.md",
    ]


@POSIX
def test_a_verdict_given_while_a_hook_runs_waits_for_the_capstone_and_is_never_lost(
    repo: pygit2.Repository, root: Path, tmp_path: Path
) -> None:
    """A person marks a step of the trajectory being committed while the pre-commit hook runs
    (here, the hook itself): the capstone holds that trajectory's feedback lock, new file or
    not, so the mark is told to try again, and the refused commit takes back only its own."""
    from stet_lsp.trajectory.feedback import mark_step

    target = import_work(root, tmp_path)
    mark_step(root, working_folder(target), 2, "clever")
    told = tmp_path / "mark-exit-code"
    hook = f"""#!{sys.executable}
import os, sys
sys.path.insert(0, {str(Path(__file__).resolve().parents[2])!r})
from stet_lsp.core import locking
locking.LOCK_TIMEOUT_SECONDS = 0.2
from stet_lsp.cli import main
[trajectory] = os.listdir({str(root / ".stet" / "trajectories")!r})
code = main(["trajectory", "mark", trajectory, "1", "--verdict", "wrong", "-C", {str(root)!r}])
open({str(told)!r}, "w").write(str(code))
sys.exit(1)
"""
    (Path(repo.path) / "hooks").mkdir(exist_ok=True)
    script = Path(repo.path) / "hooks" / "pre-commit"
    script.write_text(hook)
    script.chmod(0o755)

    refused("hook", lambda: capstone(target))

    assert told.read_text() == "1"  # locked: told to try again, nothing written
    assert sorted(p.name for p in (root / ".stet/feedback").iterdir()) == [f"{target.key}.jsonl"]


@POSIX
def test_a_verdict_waiting_out_a_capstone_on_the_trajectory_it_committed_is_refused(
    repo: pygit2.Repository, root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A step of the working trajectory is marked while the capstone commits it (the mark
    waits for the feedback lock the capstone holds): the mark is refused once the working
    trajectory is gone, instead of leaving its verdict to the next working trajectory."""
    from stet_lsp.trajectory import feedback
    from stet_lsp.trajectory.feedback import mark_step, read_verdicts

    target = import_work(root, tmp_path)
    mark_step(root, working_folder(target), 1, "clever")
    started, released = tmp_path / "hook-started", tmp_path / "hook-released"
    # The commit waits until the mark has read its step and asks for the lock: a fixed wait
    # let a loaded machine find the trajectory committed before the mark had read it.
    waiting = f"touch {started}\nwhile [ ! -e {released} ]; do sleep 0.02; done\n"
    write_hook(Path(repo.path) / "hooks", "pre-commit", waiting)
    asking = threading.Event()
    lock = feedback.feedback_lock

    def asked_for(*args: Any) -> Any:
        asking.set()
        return lock(*args)

    monkeypatch.setattr(feedback, "feedback_lock", asked_for)  # the capstone holds its own
    folder = working_folder(target)
    committed: list[CapstoneResult] = []
    marked: list[BaseException | None] = []

    def mark() -> None:
        try:
            mark_step(root, folder, 2, "wrong")
            marked.append(None)
        except BaseException as error:
            marked.append(error)

    worker = threading.Thread(target=lambda: committed.append(capstone(target)))
    worker.start()
    try:
        deadline = time.monotonic() + 20
        while not started.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        marker = threading.Thread(target=mark)
        marker.start()
        assert asking.wait(20)
        released.touch()
        marker.join(30)
    finally:
        released.touch()  # a failed check leaves no hook waiting
        worker.join(30)
    [error] = marked
    assert isinstance(error, StetError)
    assert "was committed or removed while the verdict waited" in str(error)
    [result] = committed
    assert [v.verdict for v in read_verdicts(root, result.trajectory)] == ["clever"]
    assert not (root / ".stet" / "feedback" / f"{target.key}.jsonl").exists()


# -- hooks -----------------------------------------------------------------------------------------


@POSIX
@pytest.mark.skipif(GIT is None, reason="the hook asks git what is staged")
def test_the_hooks_see_what_is_committed_and_commit_msg_may_edit_the_message(
    repo: pygit2.Repository, root: Path, tmp_path: Path
) -> None:
    import_work(root, tmp_path)
    stage(repo, "src/app.py", "x = 2\n")  # staged, but not committed: the hook must not see it
    seen = tmp_path / "seen.txt"
    hooks = Path(repo.path) / "hooks"
    write_hook(
        hooks,
        "pre-commit",
        f'git diff --cached --name-only > "{seen}"\nls .stet/trajectories/*/meta.json >> "{seen}"\n',
    )
    write_hook(hooks, "commit-msg", 'printf "\\nReviewed-by: a hook\\n" >> "$1"\n')

    result = capstone(resolve_target(root))

    files = trajectory_files(result.trajectory)
    assert seen.read_text().splitlines() == [GITIGNORE, *files, files[1]]
    commit = head_commit(repo)
    assert commit.message == (
        "Trajectory: Add a health check endpoint (round 1)\n\n"
        f"Reviewed-by: a hook\nStet-Trajectory: {result.trajectory}\n"
    )
    assert commit.message_trailers == {
        "Reviewed-by": "a hook",
        "Stet-Trajectory": result.trajectory,
    }
    assert index_entries(repo)["src/app.py"] != flat(repo, commit.tree)["src/app.py"]


@POSIX
def test_the_trailers_survive_a_commit_msg_hook_that_rewrites_the_message(
    repo: pygit2.Repository, root: Path, tmp_path: Path
) -> None:
    import_work(root, tmp_path)
    write_hook(Path(repo.path) / "hooks", "commit-msg", 'echo "Health check, reviewed" > "$1"\n')
    result = capstone(resolve_target(root))
    expected = f"Health check, reviewed\n\nStet-Trajectory: {result.trajectory}\n"
    assert head_commit(repo).message == result.message == expected


@POSIX
def test_prepare_commit_msg_runs_before_commit_msg_as_git_commit_m_runs_it(
    repo: pygit2.Repository, root: Path, tmp_path: Path
) -> None:
    import_work(root, tmp_path)
    hooks = Path(repo.path) / "hooks"
    write_hook(
        hooks,
        "prepare-commit-msg",
        'printf "[%s] " "$2" | cat - "$1" > "$1.new"\nmv "$1.new" "$1"\n',
    )
    write_hook(hooks, "commit-msg", 'grep -q "^\\[message\\] " "$1"\n')
    result = capstone(resolve_target(root))
    assert head_commit(repo).message == result.message
    assert result.message.startswith("[message] Trajectory: Add a health check endpoint")
    assert result.message.endswith(f"\n\nStet-Trajectory: {result.trajectory}\n")


@POSIX
def test_a_commit_msg_hook_that_empties_the_message_refuses(
    repo: pygit2.Repository, root: Path, tmp_path: Path
) -> None:
    target = import_work(root, tmp_path)
    write_hook(Path(repo.path) / "hooks", "commit-msg", ': > "$1"\n')
    before = snapshot(repo)
    refused("hook", lambda: capstone(target))
    assert snapshot(repo) == before


@POSIX
@pytest.mark.parametrize("hook", ["pre-commit", "prepare-commit-msg", "commit-msg"])
def test_a_failing_hook_refuses_and_the_files_written_are_taken_back(
    repo: pygit2.Repository, root: Path, tmp_path: Path, hook: str
) -> None:
    target = import_work(root, tmp_path)
    write_hook(Path(repo.path) / "hooks", hook, "echo 'lint: trailing spaces' >&2\nexit 3\n")
    before = snapshot(repo)

    error = refused("hook", lambda: capstone(target))

    assert f"the {hook} hook failed (exit status 3)" in str(error)
    assert "lint: trailing spaces" in str(error)
    assert snapshot(repo) == before
    assert not (root / ".stet/trajectories").exists()


@POSIX
def test_a_hook_that_never_finishes_refuses_and_changes_nothing(
    repo: pygit2.Repository, root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from stet_lsp.trajectory import capstone as module

    monkeypatch.setattr(module, "HOOK_TIMEOUT_SECONDS", 0.5)
    target = import_work(root, tmp_path)
    write_hook(Path(repo.path) / "hooks", "pre-commit", "sleep 30 &\nsleep 30\n")
    before = snapshot(repo)

    error = refused("hook", lambda: capstone(target))

    assert "the pre-commit hook did not finish within 0.5 s" in str(error)
    assert snapshot(repo) == before


@POSIX
def test_hooks_are_found_through_core_hooks_path(
    repo: pygit2.Repository, root: Path, tmp_path: Path
) -> None:
    target = import_work(root, tmp_path)
    repo.config["core.hooksPath"] = "githooks"
    write_hook(root / "githooks", "pre-commit", "exit 1\n")
    write_hook(Path(repo.path) / "hooks", "pre-commit", "exit 0\n")  # not the one git runs
    before = snapshot(repo)
    refused("hook", lambda: capstone(target))
    assert snapshot(repo) == before


# -- refusals: each changes nothing ------------------------------------------------------------------


def test_no_working_trajectory(repo: pygit2.Repository, root: Path, stet: Stet) -> None:
    before = snapshot(repo)
    refused("no-working-trajectory", lambda: capstone(resolve_target(root)))
    assert stet("capstone", "-C", str(root), "--json")[0] == 1
    assert snapshot(repo) == before


def test_what_the_gate_cannot_redact_is_refused(
    repo: pygit2.Repository, root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = import_work(root, tmp_path)
    events = working_folder(target).path / "events.jsonl"
    events.write_text(events.read_text().replace("Done.", f"Done ({OTHER_TOKEN})."))
    before = snapshot(repo)

    def unable(
        blocks: Callable[[], list[str]],
        config: Any,
        path: str,
        write: Callable[[str], Any],
        **_: Any,
    ) -> RedactionReport:  # a redaction that leaves the secret
        for block in blocks():
            write(block)
        return RedactionReport()

    monkeypatch.setattr("stet_lsp.gate.stream.redact_blocks", unable)
    error = refused("gate", lambda: capstone(target))

    assert "events.jsonl" in str(error) and "github-token at line" in str(error)
    assert OTHER_TOKEN[4:] not in str(error)
    assert snapshot(repo) == before


def test_a_graduated_skill_staged_again_with_a_secret_is_refused(
    repo: pygit2.Repository, root: Path, tmp_path: Path
) -> None:
    target = import_work(root, tmp_path)
    graduate_into_skill(root)
    text = (root / SKILL).read_text(encoding="utf-8")
    stage(repo, SKILL, text + f"\nexport GITHUB_TOKEN={TOKEN}\n")  # an edit, staged by hand
    before = snapshot(repo)
    error = refused("gate", lambda: capstone(target))
    assert f"{SKILL} (staged)" in str(error)
    assert TOKEN[4:] not in str(error)
    assert snapshot(repo) == before


IN_PROGRESS = {
    "MERGE_HEAD": "a merge",
    "CHERRY_PICK_HEAD": "a cherry-pick",
    "REVERT_HEAD": "a revert",
    "BISECT_LOG": "a bisect",
    "rebase-merge/": "a rebase",
    "rebase-apply/": "a rebase",
    "sequencer/": "a cherry-pick or revert",
}


@pytest.mark.parametrize("left", list(IN_PROGRESS))
def test_an_operation_in_progress(
    repo: pygit2.Repository, root: Path, tmp_path: Path, left: str
) -> None:
    target = import_work(root, tmp_path)
    place = Path(repo.path) / left
    if left.endswith("/"):
        place.mkdir()
        (place / "head-name").write_text("refs/heads/main\n")
    else:
        place.write_text(f"{repo.head.target}\n")
    before = snapshot(repo)
    error = refused("in-progress", lambda: capstone(target))
    assert IN_PROGRESS[left] in str(error)
    assert snapshot(repo) == before


def test_a_bare_repository(tmp_path: Path, stet: Stet) -> None:
    bare = pygit2.init_repository(str(tmp_path / "bare.git"), bare=True, initial_head="main")
    blob = bare.create_blob(b"hi\n")
    builder = bare.TreeBuilder()
    builder.insert("README.md", blob, pygit2.enums.FileMode.BLOB)
    bare.create_commit("HEAD", SIGNATURE, SIGNATURE, "initial", builder.write(), [])
    folder = Path(bare.path)
    before = sorted(str(p) for p in folder.rglob("*"))

    refused("bare", lambda: capstone(Target(folder, "branch", "main")))
    code, _, err = stet("capstone", "-C", str(folder))
    assert code == 1 and "no work tree" in err
    assert sorted(str(p) for p in folder.rglob("*")) == before


def test_an_unborn_head(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "empty")
    root = Path(repo.workdir).resolve()
    target = import_work(root, tmp_path)
    before = snapshot(repo)
    refused("unborn", lambda: capstone(target))
    assert snapshot(repo) == before


def test_no_author_configured(
    repo: pygit2.Repository, root: Path, tmp_path: Path, no_identity: None
) -> None:
    target = import_work(root, tmp_path)
    del repo.config["user.name"]
    del repo.config["user.email"]
    before = snapshot(repo)
    error = refused("signature", lambda: capstone(target))
    assert "user.name" in str(error)
    assert snapshot(repo) == before


def test_unresolved_conflicts_in_the_index(
    repo: pygit2.Repository, root: Path, tmp_path: Path
) -> None:
    main = repo.head.target
    other = commit_files(repo, {"README.md": "theirs\n"}, "theirs")
    repo.references["refs/heads/main"].set_target(main)
    repo.checkout_head(strategy=pygit2.enums.CheckoutStrategy.FORCE)
    commit_files(repo, {"README.md": "ours\n"}, "ours")
    repo.merge(other)
    repo.state_cleanup()  # as after `git stash pop` with conflicts: no merge, but conflicts
    assert repo.index.conflicts is not None
    target = import_work(root, tmp_path)
    before = snapshot(repo)
    refused("conflicts", lambda: capstone(target))
    assert snapshot(repo) == before


def test_a_damaged_index_is_refused_and_a_skill_leaves_no_folder(
    repo: pygit2.Repository, root: Path, tmp_path: Path
) -> None:
    """A git index that cannot be read refuses the capstone with its reason (it was a
    traceback), and a graduation into a new skill takes its folder back with the file."""
    target = import_work(root, tmp_path)
    entry = StyleSheet(target).add("Log with structlog", kind="convention")
    before = snapshot(repo)
    index = Path(repo.path) / "index"
    intact = index.read_bytes()
    index.write_bytes(b"DIRCgarbage")

    error = refused("index", lambda: capstone(target))
    assert "the git index cannot be read" in str(error)
    with pytest.raises(StetError, match="could not be staged"):
        graduate(target, entry.id, "skill", "structlog")
    index.write_bytes(intact)
    assert git_state(snapshot(repo)) == git_state(before)  # the cache holds the skill's lock


def test_a_capstone_that_waited_for_another_is_refused_with_its_reason(
    repo: pygit2.Repository, root: Path, tmp_path: Path
) -> None:
    """Two capstones at once: the one that waited for the lock finds the working trajectory
    archived by the other, and is refused as `no-working-trajectory` (not a bare error)."""
    target = import_work(root, tmp_path)
    folder = working_folder(target)
    outcome: list[BaseException] = []

    def second() -> None:
        try:
            capstone(target)
        except BaseException as error:
            outcome.append(error)

    with file_lock(folder.path, root, "the working trajectory"):  # the first capstone
        waiting = threading.Thread(target=second)
        waiting.start()
        time.sleep(0.5)  # past its first check, waiting for the lock
        shutil.move(folder.path, tmp_path / "archived")
    waiting.join(20)
    assert isinstance(outcome[0], CapstoneRefused)
    assert outcome[0].reason == "no-working-trajectory"


def test_a_capstone_that_waited_for_one_at_work_is_not_taken_for_finishing_it(
    repo: pygit2.Repository, root: Path, tmp_path: Path
) -> None:
    """The record of a capstone at work is there while the second one waits for the lock:
    that capstone is not one stopped midway, and the second is refused as
    `no-working-trajectory`, not told it finished the first."""
    target = import_work(root, tmp_path)
    folder = working_folder(target)
    record = folder.path.with_name(folder.path.name + ".capstone")
    outcome: list[BaseException | CapstoneResult] = []

    def second() -> None:
        try:
            outcome.append(capstone(target))
        except BaseException as error:
            outcome.append(error)

    with file_lock(folder.path, root, "the working trajectory"):  # the first capstone
        record.write_text("{}")
        waiting = threading.Thread(target=second)
        waiting.start()
        time.sleep(0.5)  # past its first check, waiting for the lock
        commit_files(repo, {"done.txt": "x\n"}, "Trajectory: work\n\nStet-Trajectory: t-1\n")
        archive = folder.path.parent / ".archive"
        archive.mkdir()
        shutil.move(folder.path, archive / f"{target.key}-t-1")
        record.unlink()
    waiting.join(20)
    assert isinstance(outcome[0], CapstoneRefused)
    assert outcome[0].reason == "no-working-trajectory"


def test_a_message_ending_in_trailers_keeps_them_with_stets(
    repo: pygit2.Repository, root: Path, tmp_path: Path
) -> None:
    target = import_work(root, tmp_path)
    given = "Record the run\n\nSigned-off-by: Ada Reviewer <ada@example.invalid>"
    done = capstone(target, message=given)
    commit = head_commit(reopen(repo))
    assert commit.message == f"{given}\nStet-Trajectory: {done.trajectory}\n"
    assert commit.message_trailers == {
        "Signed-off-by": "Ada Reviewer <ada@example.invalid>",
        "Stet-Trajectory": done.trajectory,
    }


@POSIX
def test_stets_trailers_in_a_given_message_or_a_hooks_are_stets_alone(
    repo: pygit2.Repository, root: Path, tmp_path: Path
) -> None:
    """A message reused from an earlier capstone (its trailers copied along), or a hook that
    adds one: the commit names one trajectory, this one, and supersedes only what HEAD was."""
    target = import_work(root, tmp_path)
    given = (
        "Record the run\n\nSigned-off-by: Ada Reviewer <ada@example.invalid>\n"
        "Stet-Trajectory: 2026-01-01-main-000000000000\nstet-supersedes : older"
    )
    done = capstone(target, message=given)
    commit = head_commit(reopen(repo))
    assert commit.message == (
        "Record the run\n\nSigned-off-by: Ada Reviewer <ada@example.invalid>\n"
        f"Stet-Trajectory: {done.trajectory}\n"
    )
    error = refused("message", lambda: capstone(target, message="Stet-Trajectory: x\n"))
    assert "the commit message is empty" in str(error)

    import_work(root, tmp_path, 2)
    write_hook(
        Path(repo.path) / "hooks",
        "commit-msg",
        'printf "\\nStet-Trajectory: forged\\n" >> "$1"\n',
    )
    again = capstone(resolve_target(root))
    assert head_commit(reopen(repo)).message == (
        f"{again.message.split(chr(10))[0]}\n\nStet-Trajectory: {again.trajectory}\n"
        f"Stet-Supersedes: {done.trajectory}\n"
    )


def test_a_working_trajectory_broken_by_hand_says_where_and_how_to_mend_it(
    repo: pygit2.Repository, root: Path, tmp_path: Path
) -> None:
    """events.jsonl of the working trajectory edited by hand into a line that is no event
    (the gate did not make it so): refused naming the file, the line and what to do, not
    as the gate's doing; removed, a graduation composes it again and the capstone commits."""
    target = import_work(root, tmp_path)
    events = working_folder(target).path / "events.jsonl"
    kept = events.read_text(encoding="utf-8")
    events.write_text(kept + '{"kind": "note", broken\n', encoding="utf-8")
    number = len(kept.splitlines()) + 1
    before = snapshot(repo)

    error = refused("no-working-trajectory", lambda: capstone(target))

    relative = working_folder(target).relative / "events.jsonl"
    assert str(error).startswith(f"{relative}:{number} is not a trajectory event (")
    assert "edited by hand; correct or remove that line" in str(error)
    assert snapshot(repo) == before
    events.unlink()
    error = refused("no-working-trajectory", lambda: capstone(target))
    assert "import the session again, or graduate an entry" in str(error)
    graduate_into_skill(root)
    assert capstone(target).changed


def test_a_working_header_broken_by_hand_is_a_refusal_saying_how_to_mend_it(
    repo: pygit2.Repository, root: Path, tmp_path: Path
) -> None:
    target = import_work(root, tmp_path)
    meta = working_folder(target).path / "meta.json"
    meta.write_text("{broken", encoding="utf-8")
    before = snapshot(repo)

    error = refused("no-working-trajectory", lambda: capstone(target))

    relative = working_folder(target).relative / "meta.json"
    assert str(error).startswith(f"{relative}: ")
    assert "edited by hand; remove it, then import the session again" in str(error)
    assert snapshot(repo) == before
    meta.unlink()
    graduate_into_skill(root)
    assert capstone(target).changed


def test_a_file_where_the_trajectories_folder_goes_is_refused(
    repo: pygit2.Repository, root: Path, tmp_path: Path
) -> None:
    """HEAD holding a file at `.stet/trajectories`: the commit would delete it, staged or
    not, so both the capstone and its dry run refuse."""
    commit_files(repo, {".stet/trajectories": "not a folder\n"}, "a file in the way")
    target = import_work(root, tmp_path)
    (root / ".stet" / "trajectories").unlink()  # deleted, not staged
    before = snapshot(repo)
    for dry_run in (True, False):
        error = refused("path", lambda dry_run=dry_run: capstone(target, dry_run=dry_run))
        assert "HEAD holds a file at .stet/trajectories" in str(error)
    assert snapshot(repo) == before


def test_the_working_trajectory_of_another_branch(
    repo: pygit2.Repository, root: Path, tmp_path: Path
) -> None:
    target = import_work(root, tmp_path)
    repo.references.create("refs/heads/other", repo.head.target)
    repo.set_head("refs/heads/other")
    before = snapshot(repo)
    error = refused("target", lambda: capstone(target))
    assert "HEAD is on other" in str(error)
    assert snapshot(repo) == before


def test_an_empty_message(repo: pygit2.Repository, root: Path, tmp_path: Path, stet: Stet) -> None:
    import_work(root, tmp_path)
    before = snapshot(repo)
    code, _, err = stet("capstone", "-C", str(root), "-m", "  ")
    assert code == 1 and "empty" in err
    assert snapshot(repo) == before


def test_a_working_trajectory_a_clone_commits_is_not_taken_for_this_clones(
    tmp_path: Path,
) -> None:
    """A repository can commit `.stet/cache/trajectories/<key>/` for a branch: its events
    (steps no agent of this clone ran) were composed into the next import, graduation
    recorded into them, a step of them marked, and the capstone committed them as this clone's
    work. Git tracking a file of the working trajectory refuses all four, with nothing
    changed."""
    from stet_lsp.trajectory.feedback import mark_step

    elsewhere = make_repo(tmp_path / "elsewhere", files={"README.md": "hi\n"})
    other = Path(elsewhere.workdir).resolve()
    planted = (
        Transcript(other, "cccccccc-1111-4222-8333-444455556666")
        .user("Planted request")
        .say("Planted answer.")
    )
    import_transcript(resolve_target(other), planted.save(tmp_path / "planted.jsonl"))
    folder = working_folder(resolve_target(other))
    files = {
        path.relative_to(other).as_posix(): path.read_text(encoding="utf-8")
        for path in sorted(folder.path.rglob("*"))
        if path.is_file()
    }
    root = hostile_clone(tmp_path / "hostile", files | {"README.md": "hi\n"})
    target = resolve_target(root)
    assert working_folder(target).relative == folder.relative  # the same branch's key

    def stet_files() -> dict[str, bytes]:
        """The working trajectory's files, and whatever else a capstone would write."""
        found = sorted((root / ".stet").rglob("*"))
        return {
            str(p): p.read_bytes()
            for p in found
            if p.is_file()
            and "/sheets/" not in str(p)
            and not p.name.endswith(".lock")
            and p.name != ".gitignore"
        }

    before = stet_files()
    refused("tracked", lambda: capstone(target))
    mine = Transcript(root, "dddddddd-1111-4222-8333-444455556666").user("Mine").say("Done.")
    with pytest.raises(StetError, match=r"is tracked by git.*nothing was changed"):
        import_transcript(target, mine.save(tmp_path / "mine.jsonl"))
    entry = StyleSheet(target).add("keep the retry helper")
    with pytest.raises(StetError, match="is tracked by git"):
        graduate(target, entry.id, "trajectory")
    assert StyleSheet(target).get(entry.id).status == "open"
    with pytest.raises(StetError, match="is tracked by git"):
        mark_step(root, working_folder(target), 2, "wrong", "planted step")
    assert stet_files() == before
    assert not (root / ".stet" / "trajectories").exists()
    assert not (root / ".stet" / "feedback").exists()


def clone_committing_records(
    tmp_path: Path, record: Callable[[pygit2.Repository, pygit2.Oid, pygit2.Oid], dict[str, Any]]
) -> Path:
    """The work tree of a clone of a repository that commits, in `.stet/cache`, a record of
    a capstone stopped midway (`record(origin, first, second)`, given the repository's first
    two commits: a take-back, or a finish of the second) and one of a graduation stopped as it
    wrote the skill `x`, which the repository commits too."""
    from stet_lsp.core.targets import target_key

    origin = make_repo(
        tmp_path / "origin",
        files={"README.md": "hi\n", "src/app.py": "x = 1\n", SKILL: "committed skill\n"},
    )
    first = origin.head.target
    second = commit_files(origin, {"payload.txt": "import os  # planted\n"}, "second")
    key = target_key("branch", "main")
    skill_write = {
        "path": SKILL,
        "before": None,
        "written": str(pygit2.hash(b"committed skill\n")),
        "staged": "1" * 40,
        "created": [".stet/skills/x", ".stet/skills"],
    }
    planted = {
        f".stet/cache/trajectories/{key}.capstone": json.dumps(record(origin, first, second)),
        ".stet/cache/skills/x.staging": json.dumps(skill_write),
    }
    commit_files(origin, planted, "records")
    clone = pygit2.clone_repository(origin.workdir, str(tmp_path / "clone"))
    return Path(clone.workdir).resolve()


def taking_back_app(
    origin: pygit2.Repository, first: pygit2.Oid, second: pygit2.Oid
) -> dict[str, Any]:
    """A capstone whose commit is nowhere, that wrote `src/app.py` where there was none."""
    return {
        "trajectory": "t",
        "parent": "0" * 40,
        "branch": "refs/heads/main",
        "tree": "0" * 40,
        "written": {"src/app.py": str(pygit2.hash(b"x = 1\n"))},
        "created": ["src"],
        "staging": {},
        "feedback": None,
        "feedback_sha256": None,
    }


def finishing_with_payload(
    origin: pygit2.Repository, first: pygit2.Oid, second: pygit2.Oid
) -> dict[str, Any]:
    """A capstone whose commit is the branch's second, to stage the payload as `src/app.py`
    and remove README.md as its working feedback file."""
    payload = str(pygit2.hash(b"import os  # planted\n"))
    return {
        "trajectory": "t",
        "parent": str(first),
        "branch": "refs/heads/main",
        "tree": str(origin[second].peel(pygit2.Commit).tree_id),
        "written": {},
        "created": [],
        "staging": {"src/app.py": [payload, 0o100644, str(pygit2.hash(b"x = 1\n"))]},
        "feedback": "README.md",
        "feedback_sha256": hashlib.sha256(b"hi\n").hexdigest(),
    }


@pytest.mark.parametrize("record", [taking_back_app, finishing_with_payload])
def test_records_of_stopped_work_a_clone_commits_are_never_obeyed(
    tmp_path: Path, stet: Stet, record: Callable[..., dict[str, Any]]
) -> None:
    """A repository can commit `.stet/cache`, the records of a capstone or a skill write
    stopped midway with it: obeyed, a list in a fresh clone deleted `src/app.py`, an import
    deleted README.md and staged the planted file. Records git tracks came with the
    repository and name nothing done here: the clone's files and index stay as cloned."""
    root = clone_committing_records(tmp_path, record)
    cloned = work_tree_files(root)

    code, _, err = stet("trajectory", "list", "-C", str(root))
    assert code == 0, err
    import_work(root, tmp_path)

    after = work_tree_files(root)
    assert {path: data for path, data in after.items() if path in cloned} == cloned
    assert [line for line in git_status(root) if not line.startswith("??")] == []
    assert (tmp_path / "clone" / ".stet/skills").is_dir()


def work_tree_files(root: Path) -> dict[str, bytes]:
    return {
        path.relative_to(root).as_posix(): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file() and ".git" not in path.relative_to(root).parts
    }


def test_verdicts_a_clone_commits_for_the_working_trajectory_are_not_taken_for_this_clones(
    tmp_path: Path,
) -> None:
    """A repository can commit `.stet/feedback/<key>.jsonl`, the file of the verdicts on a
    branch's working trajectory: the capstone moved them into its commit as this clone's
    verdicts. Git tracking that file refuses the capstone and marking a step, with nothing
    changed; untracked and deleted, the capstone commits the clone's own work."""
    from stet_lsp.core.targets import target_key
    from stet_lsp.trajectory.feedback import mark_step

    key = target_key("branch", "main")
    planted = json.dumps({"trajectory": key, "step": 1, "verdict": "clever", "text": "planted"})
    relative = f".stet/feedback/{key}.jsonl"
    root = hostile_clone(tmp_path / "hostile", {relative: planted + "\n", "README.md": "hi\n"})
    clone = pygit2.Repository(str(root))
    clone.config["user.name"] = "Ada Reviewer"
    clone.config["user.email"] = "ada@example.invalid"
    target = import_work(root, tmp_path)
    assert target.key == key
    before = snapshot(clone)
    feedback_before = (root / relative).read_bytes()

    caught = refused("tracked", lambda: capstone(target))
    assert relative in str(caught) and f"git rm --cached {relative}" in str(caught)
    with pytest.raises(StetError, match=rf"{re.escape(relative)} is tracked by git.*nothing"):
        mark_step(root, working_folder(target), 2, "wrong")
    assert (root / relative).read_bytes() == feedback_before
    assert snapshot(reopen(clone)) == before
    assert not (root / ".stet" / "trajectories").exists()

    index = clone.index
    index.remove(relative)  # git rm --cached
    index.write()
    (root / relative).unlink()
    result = capstone(target)
    committed = flat(clone, head_commit(reopen(clone)).tree)
    assert f".stet/feedback/{result.trajectory}.jsonl" not in committed
    assert f".stet/trajectories/{result.trajectory}/events.jsonl" in committed


# -- a branch renamed while its trajectory is at work ---------------------------------------------


def on_branch(repo: pygit2.Repository, name: str) -> None:
    repo.branches.local.create(name, repo[repo.head.target])
    repo.checkout(repo.branches.local[name])


def test_a_renamed_branch_keeps_its_working_trajectory_verdicts_and_skill(
    repo: pygit2.Repository, root: Path, tmp_path: Path
) -> None:
    from stet_lsp.trajectory.feedback import mark_step
    from stet_lsp.trajectory.operations import trajectory_folder

    on_branch(repo, "topic")
    old = import_work(root, tmp_path)
    graduate_into_skill(root)
    mark_step(root, working_folder(old), 3, "clever")
    repo.branches.local["topic"].rename("topic-2")  # git branch -m, HEAD following it
    new = resolve_target(root)
    assert (new.name, new.key != old.key) == ("topic-2", True)

    folder = trajectory_folder(new, None)  # stet trajectory show, the editor's views

    assert folder.id == new.key
    meta = folder.read_meta()
    assert (meta.id, meta.target.name, meta.target.key) == (new.key, "topic-2", new.key)
    assert len(meta.sources) == 1 and len(folder.read_events()) > 3
    assert not (root / ".stet/cache/trajectories" / old.key).exists()
    assert not (root / ".stet/feedback" / f"{old.key}.jsonl").exists()
    verdicts = read_feedback(root, new.key).verdicts
    assert [(v.trajectory, v.step, v.verdict) for v in verdicts] == [(new.key, 3, "clever")]

    result = capstone(new)

    commit = head_commit(repo)
    assert skill_metadata(blob_text(repo, commit, SKILL))["stet-trajectory"] == result.trajectory
    committed = blob_text(repo, commit, f".stet/feedback/{result.trajectory}.jsonl")
    assert [json.loads(line)["trajectory"] for line in committed.splitlines()] == [
        result.trajectory
    ]
    assert result.warnings == []


def test_an_import_after_a_rename_adds_to_the_trajectory_the_branch_had(
    repo: pygit2.Repository, root: Path, tmp_path: Path, stet: Stet
) -> None:
    on_branch(repo, "topic")
    old = import_work(root, tmp_path, 1)
    repo.branches.local["topic"].rename("topic-2")

    new = import_work(root, tmp_path, 2)

    meta = working_folder(new).read_meta()
    assert (meta.target.name, len(meta.sources)) == ("topic-2", 2)
    assert not (root / ".stet/cache/trajectories" / old.key).exists()
    code, out, _ = stet("trajectory", "list", "--json", "-C", str(root))
    assert code == 0
    listed = json.loads(out)["trajectories"]
    assert [(t["id"], t["target"]) for t in listed] == [(new.key, "topic-2")]


def test_a_renamed_branch_with_a_trajectory_of_its_own_moves_nothing(
    repo: pygit2.Repository, root: Path, tmp_path: Path
) -> None:
    on_branch(repo, "topic")
    old = import_work(root, tmp_path, 1)
    repo.branches.local["topic"].rename("topic-2")
    repo.checkout(repo.branches.local["main"])
    repo.branches.local.create("topic", repo[repo.head.target])  # the old name is a branch again
    repo.checkout(repo.branches.local["topic-2"])

    new = import_work(root, tmp_path, 2)

    assert working_folder(new).read_meta().target.name == "topic-2"
    assert len(working_folder(new).read_meta().sources) == 1
    assert working_folder(old).read_meta().target.name == "topic"  # topic's, left to it


def test_working_trajectories_follow_two_branches_swapping_names(
    repo: pygit2.Repository, root: Path, tmp_path: Path
) -> None:
    """`git branch -m a tmp; git branch -m b a; git branch -m tmp b` with Stet run between:
    the branch now called `b` (that was `a`) has a's sessions, and `a` b's."""
    from stet_lsp.trajectory.renames import follow_rename

    on_branch(repo, "b")
    repo.checkout(repo.branches.local["main"])
    on_branch(repo, "a")
    time.sleep(1.01 - time.time() % 1)  # composed after the branches took their names,
    repo.checkout(repo.branches.local["b"])
    import_work(root, tmp_path, 1)
    repo.checkout(repo.branches.local["a"])
    import_work(root, tmp_path, 2)
    time.sleep(1.01 - time.time() % 1)  # and before the renames (reflogs count seconds)
    for former, new in [("a", "tmp"), ("b", "a"), ("tmp", "b")]:
        repo.branches.local[former].rename(new)
        follow_rename(resolve_target(root))

    def sessions(branch: str) -> list[str]:
        meta = working_folder(Target(root, "branch", branch)).read_meta()
        assert meta.target.name == branch
        return [source.session for source in meta.sources]

    assert sessions("b") == ["00000002-1111-4222-8333-444455556666"]
    assert sessions("a") == ["00000001-1111-4222-8333-444455556666"]
    folders = (root / ".stet/cache/trajectories").iterdir()
    assert sorted(p.name for p in folders if p.is_dir()) == sorted(
        Target(root, "branch", name).key for name in ("a", "b")
    )


@pytest.mark.skipif(shutil.which("git") is None, reason="git dates the renames")
def test_a_working_trajectory_composed_in_an_earlier_stay_under_the_name_goes_back_to_it(
    repo: pygit2.Repository, root: Path, tmp_path: Path
) -> None:
    """`topic` imports a session, goes to `topic-typo` and back with no Stet command between,
    then to `tmp`, and `other` takes the name `topic`: the working trajectory under `topic`
    was composed in tmp's first stay under the name, and goes to tmp."""
    from stet_lsp.trajectory.renames import follow_rename

    now = int(time.time())

    git_at(root, "branch", "other", at=now - 600)
    git_at(root, "checkout", "-q", "-b", "topic", at=now - 500)
    import_work(root, tmp_path, 1)
    meta = working_folder(Target(root, "branch", "topic")).path / "meta.json"
    os.utime(meta, (now - 450, now - 450))
    git_at(root, "checkout", "-q", "main", at=now - 400)
    git_at(root, "branch", "-m", "topic", "topic-typo", at=now - 400)
    git_at(root, "branch", "-m", "topic-typo", "topic", at=now - 350)
    git_at(root, "branch", "-m", "topic", "tmp", at=now - 300)
    git_at(root, "branch", "-m", "other", "topic", at=now - 200)
    git_at(root, "checkout", "-q", "topic", at=now - 200)
    follow_rename(resolve_target(root))

    meta_of_tmp = working_folder(Target(root, "branch", "tmp")).read_meta()
    assert meta_of_tmp.target.name == "tmp"
    assert [s.session for s in meta_of_tmp.sources] == ["00000001-1111-4222-8333-444455556666"]
    assert not working_folder(Target(root, "branch", "topic")).path.exists()


def test_a_rename_waits_for_the_writer_of_the_old_trajectory(
    repo: pygit2.Repository, root: Path, tmp_path: Path
) -> None:
    from stet_lsp.trajectory.renames import follow_rename

    on_branch(repo, "topic")
    old = import_work(root, tmp_path)
    repo.branches.local["topic"].rename("topic-2")
    new = resolve_target(root)
    with file_lock(working_folder(old).path, root, "the working trajectory"):
        assert follow_rename(new) is None  # an import of the old branch's at work

    moved = follow_rename(new)

    assert moved is not None and moved.id == new.key
    assert follow_rename(new) is None  # done once


def test_the_list_after_a_rename_shows_the_trajectory_under_the_new_name(
    repo: pygit2.Repository, root: Path, tmp_path: Path, stet: Stet
) -> None:
    on_branch(repo, "topic")
    import_work(root, tmp_path)
    repo.branches.local["topic"].rename("topic-2")

    code, out, _ = stet("trajectory", "list", "--json", "-C", str(root))

    assert code == 0
    listed = json.loads(out)["trajectories"]
    assert [(t["id"], t["target"]) for t in listed] == [(resolve_target(root).key, "topic-2")]


def test_a_deleted_branch_s_working_trajectory_is_shown_and_committed_by_name(
    repo: pygit2.Repository, root: Path, tmp_path: Path, stet: Stet
) -> None:
    """A branch deleted with its working trajectory left: the list showed it as any other,
    the capstone on the current branch said only that this one had none, and
    `--target NAME` named a target of its own that had none either."""
    on_branch(repo, "topic")
    left = import_work(root, tmp_path)
    repo.checkout(repo.branches.local["main"])
    repo.branches.local.delete("topic")
    main = head_commit(repo).id

    code, out, _ = stet("trajectory", "list", "--json", "-C", str(root))
    [row] = json.loads(out)["trajectories"]
    assert (code, row["id"], row["orphaned"]) == (0, left.key, True)
    code, out, _ = stet("trajectory", "list", "-C", str(root))
    assert "its branch topic was deleted: stet capstone --target topic commits it" in out
    code, _, err = stet("capstone", "-C", str(root))
    assert code == 1
    assert "the deleted branch topic is left: stet capstone --target topic commits it here" in err

    code, out, err = stet("capstone", "--target", "topic", "--json", "-C", str(root))

    assert (code, err) == (0, "")
    result = json.loads(out)
    after = reopen(repo)
    assert after.head.shorthand == "main" and after[after.head.target].parents[0].id == main
    assert result["target"]["name"] == "topic" and result["branch"] == "main"
    assert not working_folder(left).path.exists()
    code, out, _ = stet("trajectory", "list", "--json", "-C", str(root))
    [row] = json.loads(out)["trajectories"]
    assert (row["id"], row["working"], row["orphaned"]) == (result["trajectory"], False, False)


def test_the_command_that_commits_a_left_trajectory_is_quoted_for_a_shell(
    repo: pygit2.Repository, root: Path, tmp_path: Path, stet: Stet
) -> None:
    """A branch name git takes may hold what a shell reads apart (`fix(it's)`): the command
    printed to commit its left working trajectory failed as printed."""
    on_branch(repo, "fix(it's)")
    import_work(root, tmp_path)
    repo.checkout(repo.branches.local["main"])
    repo.branches.local.delete("fix(it's)")
    command = "stet capstone --target 'fix(it'\"'\"'s)'"
    assert shlex.split(command)[-1] == "fix(it's)"

    code, out, _ = stet("trajectory", "list", "-C", str(root))
    assert f"its branch fix(it's) was deleted: {command} commits it" in out
    code, _, err = stet("capstone", "-C", str(root))
    assert code == 1 and f"{command} commits it here" in err
    # So is the command a named target's sheet shows to graduate its entries.
    item = other_target_item(["# Style sheet"], "named", "pr 42", "main")
    assert "(`stet graduate ID --target 'pr 42'`)" in item.message, item.message


def test_a_left_detached_head_s_working_trajectory_is_shown_and_committed_by_name(
    repo: pygit2.Repository, root: Path, tmp_path: Path, stet: Stet
) -> None:
    """Work imported on a detached HEAD, then a branch made from another one checked out
    (`git switch -c topic main`: not made from the detached HEAD, so it does not take it
    over): the list showed the detached HEAD's working trajectory unmarked, and nothing
    committed it from the branch (`--target` named a target of its own that had none). It is
    marked as a deleted branch's is, and `--target NAME` commits it on HEAD; checking its
    commit out again makes it current, unmarked."""
    git = partial(subprocess.run, cwd=root, check=True, capture_output=True)
    git(["git", "checkout", "-q", "--detach"])
    left = import_work(root, tmp_path)
    assert left.kind == "detached"
    git(["git", "switch", "-q", "-c", "topic", "main"])
    topic = head_commit(repo).id

    code, out, _ = stet("trajectory", "list", "--json", "-C", str(root))
    [row] = json.loads(out)["trajectories"]
    assert (code, row["id"], row["target"], row["orphaned"]) == (0, left.key, left.name, True)
    code, out, _ = stet("trajectory", "list", "-C", str(root))
    hint = f"stet capstone --target {left.name} commits it"
    assert f"its detached HEAD {left.name} was left: {hint}" in out
    code, _, err = stet("capstone", "-C", str(root))
    assert code == 1
    assert f"the detached HEAD {left.name} is left (HEAD left it): {hint} here" in err

    git(["git", "checkout", "-q", "--detach", left.name])
    code, out, _ = stet("trajectory", "list", "--json", "-C", str(root))
    [row] = json.loads(out)["trajectories"]
    assert (row["id"], row["orphaned"]) == (left.key, False)
    git(["git", "switch", "-q", "topic"])

    code, out, err = stet("capstone", "--target", left.name, "--json", "-C", str(root))

    assert (code, err) == (0, "")
    result = json.loads(out)
    after = reopen(repo)
    assert after.head.shorthand == "topic" and after[after.head.target].parents[0].id == topic
    assert result["target"]["key"] == left.key and result["branch"] == "topic"
    assert not working_folder(left).path.exists()
    code, out, _ = stet("trajectory", "list", "--json", "-C", str(root))
    [row] = json.loads(out)["trajectories"]
    assert (row["id"], row["working"], row["orphaned"]) == (result["trajectory"], False, False)


def test_a_renamed_branch_s_working_trajectory_is_no_orphan(
    repo: pygit2.Repository, root: Path, tmp_path: Path, stet: Stet
) -> None:
    on_branch(repo, "topic")
    import_work(root, tmp_path)
    repo.branches.local["topic"].rename("topic-2")
    repo.checkout(repo.branches.local["main"])

    code, out, _ = stet("trajectory", "list", "--json", "-C", str(root))
    [row] = json.loads(out)["trajectories"]
    assert (code, row["target"], row["orphaned"]) == (0, "topic", False)
    code, _, err = stet("capstone", "--target", "topic", "-C", str(root))
    assert code == 1 and "topic has no working trajectory" in err
    assert "deleted branch" not in err


def test_an_import_after_a_rename_waits_for_the_old_trajectory_s_writer(
    repo: pygit2.Repository, root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An import would make a new working folder beside the old one (which no later call
    would move): it waits for the old folder's lock, and says to try again when the lock is
    not let go."""
    from stet_lsp.trajectory import renames

    on_branch(repo, "topic")
    old = import_work(root, tmp_path, 1)
    repo.branches.local["topic"].rename("topic-2")
    lock = working_folder(old).path

    monkeypatch.setattr(renames, "LOCK_TIMEOUT_SECONDS", 0.3)
    with (
        file_lock(lock, root, "the working trajectory"),
        pytest.raises(StetError, match="is locked by another process; try again"),
    ):
        import_work(root, tmp_path, 2)
    assert working_folder(old).path.is_dir()
    assert not working_folder(resolve_target(root)).path.exists()

    monkeypatch.setattr(renames, "LOCK_TIMEOUT_SECONDS", 15.0)
    holding = threading.Event()

    def hold_briefly() -> None:
        with file_lock(lock, root, "the working trajectory"):
            holding.set()
            time.sleep(0.5)

    holder = threading.Thread(target=hold_briefly)
    holder.start()
    holding.wait()
    new = import_work(root, tmp_path, 2)
    holder.join()

    assert len(working_folder(new).read_meta().sources) == 2
    assert not working_folder(old).path.exists()


def test_a_step_marked_in_the_old_folder_while_it_moves_is_refused_not_lost(
    repo: pygit2.Repository, root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A verdict on the old folder's step, written while the folder moves (an editor holding
    the old events.jsonl open): it waits for the verdicts' lock, which the move holds until
    the folder is gone, and is then refused with a message, never written where nothing
    reads it again."""
    from stet_lsp.trajectory import feedback
    from stet_lsp.trajectory.feedback import mark_step
    from stet_lsp.trajectory.renames import follow_rename

    on_branch(repo, "topic")
    old = import_work(root, tmp_path)
    old_folder = working_folder(old)
    repo.branches.local["topic"].rename("topic-2")
    new = resolve_target(root)
    outcome: list[BaseException | None] = []

    def mark() -> None:
        try:
            mark_step(root, old_folder, 3, "wrong")
            outcome.append(None)
        except BaseException as error:
            outcome.append(error)

    marker = threading.Thread(target=mark)
    original = feedback.move_feedback
    asking = threading.Event()
    lock = feedback.feedback_lock

    def asked_for(*args: Any) -> Any:
        if threading.current_thread() is marker:
            asking.set()
        return lock(*args)

    def moving(*args: Any) -> bool:
        marker.start()
        # Waited for: a loaded machine may start the mark after any fixed time, when the
        # folder has moved and its step cannot be read.
        assert asking.wait(20)
        time.sleep(0.3)
        assert outcome == []  # waiting for the verdicts' lock
        return original(*args)

    monkeypatch.setattr(feedback, "feedback_lock", asked_for)
    monkeypatch.setattr(feedback, "move_feedback", moving)
    assert follow_rename(new) is not None
    marker.join()

    (error,) = outcome
    assert isinstance(error, StetError) and "was committed or removed" in str(error)
    assert not (root / ".stet/feedback" / f"{old.key}.jsonl").exists()
    assert read_feedback(root, new.key).verdicts == []


def test_an_import_that_cannot_move_the_old_trajectory_refuses_rather_than_strand_it(
    repo: pygit2.Repository, root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from stet_lsp.trajectory import feedback
    from stet_lsp.trajectory.feedback import mark_step

    on_branch(repo, "topic")
    old = import_work(root, tmp_path, 1)
    mark_step(root, working_folder(old), 3, "clever")
    repo.branches.local["topic"].rename("topic-2")
    monkeypatch.setattr(feedback, "FEEDBACK_LIMIT", 10)  # the verdicts cannot be read

    with pytest.raises(StetError, match="could not move to the renamed branch topic-2: "):
        import_work(root, tmp_path, 2)

    assert working_folder(old).path.is_dir()
    assert not working_folder(resolve_target(root)).path.exists()


def test_git_holding_its_index_for_a_moment_is_waited_for(
    repo: pygit2.Repository, root: Path, tmp_path: Path
) -> None:
    """An editor's git extension runs `git status` every few seconds, which holds
    `index.lock` for a moment: the capstone's files still enter the index (they were left
    out, with a warning, and a plain `git commit` then deleted them)."""
    target = import_work(root, tmp_path)
    lock = Path(repo.path) / "index.lock"
    lock.write_bytes(b"")
    threading.Timer(0.5, lock.unlink).start()
    result = capstone(target)
    assert result.warnings == []
    index, tree = repo.index, repo.head.peel(pygit2.Commit).tree
    index.read(True)
    paths = [change.path for change in result.paths]
    assert paths and all(index[path].id == tree[path].id for path in paths)


def test_git_holding_its_index_refuses_the_capstone(
    repo: pygit2.Repository, root: Path, tmp_path: Path
) -> None:
    """Another process holds `index.lock` past a moment (or a git stopped and left it): the
    capstone is refused, naming the file, as `git commit` refuses. Committing anyway left the
    index without the commit's files, staged as deleted for the next `git commit`."""
    target = import_work(root, tmp_path)
    graduate_into_skill(root)
    lock = Path(repo.path) / "index.lock"
    lock.write_bytes(b"")
    head = repo.head.target
    status = git_status(root)

    error = refused("index", lambda: capstone(target))

    assert str(lock) in str(error) and "remove that file if no git process" in str(error)
    refused("index", lambda: capstone(target, dry_run=True))
    assert repo.head.target == head and git_status(root) == status
    lock.unlink()
    result = capstone(target)
    assert result.warnings == []
    assert [line for line in git_status(root) if not line.startswith("??")] == []


def test_git_taking_its_index_while_the_capstone_commits_is_a_warning(
    repo: pygit2.Repository, root: Path, tmp_path: Path
) -> None:
    """The lock taken after the capstone looked (here by its pre-commit hook): the commit is
    made, and the warning says which files to add."""
    target = import_work(root, tmp_path)
    write_hook(Path(repo.path) / "hooks", "pre-commit", f"touch '{repo.path}index.lock'\n")
    result = capstone(target)
    assert any("the index was not updated" in warning for warning in result.warnings)
    assert repo.head.peel(pygit2.Commit).message.startswith("Trajectory: ")


def test_marking_in_a_file_a_capstone_took_away_says_where_it_went(
    repo: pygit2.Repository, root: Path, tmp_path: Path
) -> None:
    """An editor keeps the working trajectory's narration open after the capstone moved it:
    marking a step there names the committed trajectory, not 'no file of a trajectory'."""
    target = import_work(root, tmp_path)
    narration = working_folder(target).path / "narration.md"
    result = capstone(target)
    with pytest.raises(StetError) as refused_mark:
        mark_at(target, narration, None, 0, "wrong", None)
    assert str(refused_mark.value) == (
        f"narration.md is no longer there: a capstone committed its trajectory as "
        f"{result.trajectory}; mark the step in .stet/trajectories/{result.trajectory}/narration.md"
    )


# -- .stet/.gitignore ----------------------------------------------------------------------------


def git(root: Path, *args: str) -> str:
    assert GIT is not None
    done = subprocess.run([GIT, *args], cwd=root, check=True, capture_output=True, text=True)
    return done.stdout


@pytest.mark.skipif(GIT is None, reason="git clean is git's")
def test_the_first_capstone_commits_the_stet_gitignore_so_git_clean_keeps_the_cache_out(
    repo: pygit2.Repository, root: Path, tmp_path: Path, stet: Stet
) -> None:
    """Left untracked, `.stet/.gitignore` went with the next `git clean -fd`, and the style
    sheets and working trajectories were then files for `git add -A` to commit."""
    target = import_work(root, tmp_path, 1)
    StyleSheet(target).add("a note of the working memory")
    (root / GITIGNORE).unlink()  # gone by a `git clean` before the capstone: written back
    result = capstone(target)
    assert GITIGNORE in [c.path for c in result.paths]
    written = (root / GITIGNORE).read_text(encoding="utf-8")
    assert "cache/" in written.splitlines()
    assert blob_text(repo, head_commit(repo), GITIGNORE) == written
    assert GITIGNORE in reopen(repo).index
    assert git(root, "clean", "-fd") == ""  # nothing left to clean: the cache stays ignored
    assert (root / GITIGNORE).exists()
    assert git(root, "status", "--porcelain", "--untracked-files=all") == ""

    # HEAD holds one now: a person's later rules are theirs to commit
    (root / GITIGNORE).write_text(written + "scratch/\n", encoding="utf-8")
    second = capstone(import_work(root, tmp_path, 2))
    assert GITIGNORE not in [c.path for c in second.paths]
    assert blob_text(repo, head_commit(repo), GITIGNORE) == written


def test_a_stet_gitignore_staged_by_hand_is_left_staged(
    repo: pygit2.Repository, root: Path, tmp_path: Path
) -> None:
    target = import_work(root, tmp_path)
    stage(repo, GITIGNORE, "cache/\nmine/\n")
    result = capstone(target)
    assert GITIGNORE not in [c.path for c in result.paths]
    assert result.left_staged == [GITIGNORE]
    assert GITIGNORE not in flat(repo, head_commit(repo).tree)


# -- a secret a note held, repeated bare ---------------------------------------------------------

BARE = "Xq9LmTz4RwPa8v"  # no rule tells it from a word alone; `DB_PASSWORD=` makes it a secret


def import_prompt(root: Path, tmp_path: Path, prompt: str) -> Target:
    session = Transcript(root, "eeeeeeee-1111-4222-8333-444455556666").user(prompt).say("Done.")
    target = resolve_target(root)
    import_transcript(target, session.save(tmp_path / "bare.jsonl"))
    return target


@pytest.mark.parametrize("note_first", [True, False], ids=["note, then import", "import, note"])
def test_a_value_a_note_holds_is_redacted_where_the_brief_repeats_it(
    repo: pygit2.Repository, root: Path, tmp_path: Path, note_first: bool
) -> None:
    """The first request repeats bare a value the style sheet holds as a secret: neither the
    working trajectory (imported after the note) nor the capstone (the note written after the
    import) lets it through, in the brief, the events, the narration or the message."""
    note = f"DB_PASSWORD={BARE} for the staging database"
    if note_first:
        StyleSheet(resolve_target(root)).add(note)
    target = import_prompt(root, tmp_path, f"Connect to the staging database with {BARE} please")
    if note_first:
        folder = working_folder(target)
        assert folder.read_meta().brief == (
            "Connect to the staging database with [REDACTED:secret-assignment#1] please"
        )
        for name in ("events.jsonl", "meta.json", "narration.md"):
            assert BARE not in (folder.path / name).read_text(encoding="utf-8"), name
    else:
        StyleSheet(target).add(note)

    result = capstone(target)

    commit = head_commit(repo)
    assert BARE not in commit.message and "[REDACTED:secret-assig" in result.message
    for path in flat(repo, commit.tree):
        assert BARE not in blob_text(repo, commit, path), path
    meta = json.loads(blob_text(repo, commit, f".stet/trajectories/{result.trajectory}/meta.json"))
    assert meta["brief"].endswith("[REDACTED:secret-assignment#1] please")


def damage_sheet(target: Target, damage: str) -> None:
    """Leave the sheet as Stet will not read it: a byte that is not UTF-8, its lines ended by
    a carriage return alone, written in UTF-16 (with its byte order mark) or UTF-32 (big-endian,
    without one), or the line that holds the value alone in UTF-16 amid UTF-8 lines."""
    path = target.sheet_path
    data = path.read_bytes()
    text = data.decode("utf-8")
    damaged = {
        "latin-1": lambda: data + b"note: caf\xe9\n",
        "cr": lambda: data.replace(b"\n", b"\r"),
        "utf-16": lambda: text.replace("\n", "\r\n").encode("utf-16"),
        "utf-32-be": lambda: text.encode("utf-32-be"),
        "a utf-16 line": lambda: b"".join(
            line.encode("utf-16-le") if BARE in line else line.encode("utf-8")
            for line in text.splitlines(keepends=True)
        ),
    }
    path.write_bytes(damaged[damage]())


@pytest.mark.parametrize("damage", ["latin-1", "cr", "utf-16", "utf-32-be", "a utf-16 line"])
@pytest.mark.parametrize("note_first", [True, False], ids=["note, then import", "import, note"])
def test_a_value_a_sheet_stet_will_not_read_holds_is_redacted_all_the_same(
    repo: pygit2.Repository, root: Path, tmp_path: Path, damage: str, note_first: bool
) -> None:
    """A sheet that is not UTF-8 (UTF-16), ends its lines with a carriage return alone, or is
    mostly NUL bytes (UTF-32) is refused by the sheet's operations, and one with a line in
    UTF-16 has no entry holding the value, but the secrets they hold are still found in
    their bytes: the import (sheet damaged before it) and the capstone (after) keep the bare
    value out."""
    target = resolve_target(root)
    if note_first:
        StyleSheet(target).add(f"DB_PASSWORD={BARE} for the staging database")
        damage_sheet(target, damage)
    target = import_prompt(root, tmp_path, f"Connect to the staging database with {BARE} please")
    folder = working_folder(target)
    if note_first:
        for path in folder.path.rglob("*"):
            assert not path.is_file() or BARE.encode() not in path.read_bytes(), path
    else:
        StyleSheet(target).add(f"DB_PASSWORD={BARE} for the staging database")
        damage_sheet(target, damage)
    if damage == "a utf-16 line":  # a NUL here and there: read, no entry holding the value
        assert not any(BARE in entry.text for entry in StyleSheet(target).entries())
    else:
        with pytest.raises(StetError):
            StyleSheet(target).read()

    result = capstone(target)

    commit = head_commit(repo)
    assert BARE not in commit.message and "[REDACTED:secret-assig" in result.message
    for path in flat(repo, commit.tree):
        assert BARE not in blob_text(repo, commit, path), path


def test_a_sheet_too_large_to_read_refuses_the_import_and_the_capstone(
    repo: pygit2.Repository, root: Path, tmp_path: Path
) -> None:
    """Over the size limit the sheet's bytes are not read, so the values it holds cannot be
    known: rather than let them through, the import and the capstone refuse, naming it."""
    target = import_prompt(root, tmp_path, f"Connect to the staging database with {BARE} please")
    before = {p: p.read_bytes() for p in working_folder(target).path.rglob("*") if p.is_file()}
    StyleSheet(target).add(f"DB_PASSWORD={BARE} for the staging database")
    with target.sheet_path.open("ab") as sheet:
        sheet.write(b"padding\n" * (2**20 + 1))
    session = Transcript(root, "ffffffff-1111-4222-8333-444455556666").user(BARE).say("Done.")

    with pytest.raises(StetError, match="is larger than 8 MiB") as refused:
        import_transcript(target, session.save(tmp_path / "second.jsonl"))
    assert str(target.sheet_path) in str(refused.value)
    after = {p: p.read_bytes() for p in working_folder(target).path.rglob("*") if p.is_file()}
    assert after == before
    head = head_commit(repo).id
    with pytest.raises(StetError, match="is larger than 8 MiB"):
        capstone(target)
    assert head_commit(repo).id == head


@pytest.mark.skipif(
    GIT is None or sys.platform == "darwin",
    reason="git makes the branch; macOS refuses a file name that is not UTF-8",
)
def test_a_branch_whose_name_is_not_utf8_imports_graduates_and_commits(
    repo: pygit2.Repository, root: Path, tmp_path: Path, stet: Stet
) -> None:
    """meta.json names the branch with U+FFFD for the byte (UTF-8 cannot hold it as it is),
    as the sheet's header does; the trajectory is still the branch's, not a deleted one's."""
    subprocess.run([b"git", b"checkout", b"-q", b"-b", b"caf\xe9"], cwd=root, check=True)
    target = import_work(root, tmp_path)
    assert working_folder(target).read_meta().target.name == "caf\ufffd"
    graduate_into_skill(root)
    code, out, _ = stet("trajectory", "list", "-C", str(root))
    assert code == 0 and "capstone --target" not in out
    result = capstone(resolve_target(root))
    assert result.changed and SKILL in [c.path for c in result.paths]


def test_a_capstone_killed_past_its_commit_on_a_branch_not_utf8_is_finished(
    repo: pygit2.Repository, root: Path, tmp_path: Path, stet: Stet
) -> None:
    """The record of a stopped capstone names the branch by its bytes (a name that is not
    UTF-8 kept as escaped surrogates): the next command finds the commit on it."""
    subprocess.run([b"git", b"checkout", b"-q", b"-b", b"caf\xe9"], cwd=root, check=True)
    target = import_work(root, tmp_path)
    stopped_capstone(root, r"unlink index\.stet-\S+")
    trajectory = head_commit(repo).message_trailers["Stet-Trajectory"]

    code, _, err = stet("trajectory", "list", "-C", str(root))

    assert code == 0, err
    assert not working_folder(target).path.exists()
    entries = index_entries(repo)
    assert all(path in entries for path in trajectory_files(trajectory))


def test_a_capstone_record_a_clone_commits_refuses_the_capstone(tmp_path: Path) -> None:
    """A repository can commit `.stet/cache/trajectories/<key>.capstone`, the record a capstone
    writes before it touches the work tree: the capstone overwrote that file, then removed it,
    and one stopped past its commit left a record no command obeys. Git tracking it refuses
    the capstone before anything is written, naming the file and how to untrack it."""
    from stet_lsp.core.targets import target_key

    relative = f".stet/cache/trajectories/{target_key('branch', 'main')}.capstone"
    planted = '{"garbage": 1}'
    root = hostile_clone(tmp_path / "hostile", {relative: planted, "README.md": "hi\n"})
    clone = pygit2.Repository(str(root))
    clone.config["user.name"] = "Ada Reviewer"
    clone.config["user.email"] = "ada@example.invalid"
    target = import_work(root, tmp_path)
    before = snapshot(clone)

    caught = refused("tracked", lambda: capstone(target))
    assert relative in str(caught) and f"git rm --cached {relative}" in str(caught)
    assert (root / relative).read_text() == planted
    assert snapshot(reopen(clone)) == before
    assert not (root / ".stet" / "trajectories").exists()

    index = clone.index
    index.remove(relative)  # git rm --cached
    index.write()
    (root / relative).unlink()
    result = capstone(target)
    assert result.changed and not (root / relative).exists()
