"""A detached HEAD's style sheet follows its line of work (core/lineage.py): git moves HEAD
to a new commit, a new target, and the sheet of the commit before goes with it, as git's
own commands move it (the `git` command line, as a user runs it)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pygit2
import pytest

from stet_lsp.core.sheet import StyleSheet
from stet_lsp.core.targets import Target, resolve_target

Stet = Callable[..., tuple[int, str, str]]


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=A User", "-c", "user.email=user@stet.invalid", *args],
        cwd=root,
        check=True,
        capture_output=True,
    )


def change(root: Path, name: str, text: str = "x\n") -> None:
    (root / name).write_text(text, encoding="utf-8")
    git(root, "add", name)


def texts(target: Target) -> list[str]:
    return [entry.text for entry in StyleSheet(target).entries()]


@pytest.fixture
def detached(root: Path) -> Target:
    """HEAD detached at main's commit, with a sheet of one entry."""
    git(root, "checkout", "-q", "--detach")
    target = resolve_target(root)
    assert target.kind == "detached"
    StyleSheet(target).add("Keep the retries idempotent.", kind="convention")
    return target


@pytest.mark.parametrize(
    "moves",
    [
        [["commit", "-q", "-m", "two"]],
        [["commit", "-q", "-m", "two"], ["commit", "-q", "--amend", "-m", "two, amended"]],
        [["commit", "-q", "-m", "two"], ["reset", "-q", "--soft", "HEAD~1"]],
        [["commit", "-q", "-m", "two"], ["revert", "--no-edit", "HEAD"]],
    ],
    ids=["commit", "amend", "reset", "revert"],
)
def test_the_sheet_follows_commits_on_a_detached_head(
    root: Path, detached: Target, moves: list[list[str]]
) -> None:
    """The entries stayed under the commit HEAD was detached at, unlisted once git committed."""
    change(root, "new.txt")
    before = detached
    for move in moves:
        git(root, *move)
        after = resolve_target(root)
        assert after.kind == "detached" and after.name != before.name
        assert texts(after) == ["Keep the retries idempotent."]
        assert not before.sheet_path.exists()
        header = after.sheet_path.read_text(encoding="utf-8")
        assert f"# Style sheet: {after.label}\n" in header
        assert f"target={after.name} " in header
        before = after


def test_several_commits_made_without_stet_in_between_are_followed(
    root: Path, detached: Target
) -> None:
    for name in ("a.txt", "b.txt", "c.txt"):
        change(root, name)
        git(root, "commit", "-q", "-m", name)
    assert texts(resolve_target(root)) == ["Keep the retries idempotent."]


def test_a_cherry_pick_and_a_rebase_of_the_detached_head_carry_it(
    repo: pygit2.Repository, root: Path
) -> None:
    git(root, "checkout", "-q", "-b", "other")
    change(root, "other.txt")
    git(root, "commit", "-q", "-m", "other")
    git(root, "checkout", "-q", "--detach", "main")
    StyleSheet(resolve_target(root)).add("One entry.")
    change(root, "mine.txt")
    git(root, "commit", "-q", "-m", "mine")
    git(root, "cherry-pick", "other")
    assert texts(resolve_target(root)) == ["One entry."]
    git(root, "checkout", "-q", "main")
    change(root, "main.txt")
    git(root, "commit", "-q", "-m", "on main")
    git(root, "checkout", "-q", "--detach", "HEAD@{2}")  # back to the cherry-pick
    assert texts(resolve_target(root)) == ["One entry."]
    git(root, "rebase", "-q", "main")
    assert texts(resolve_target(root)) == ["One entry."]


def test_a_commit_whose_subject_is_not_utf8_is_followed(root: Path, detached: Target) -> None:
    """Its reflog entry (`commit: caf\xe9`), which pygit2 cannot decode, is read from the
    reflog's file."""
    change(root, "new.txt")
    subprocess.run(
        [b"git", b"-c", b"i18n.commitEncoding=latin-1", b"commit", b"-q", b"-m", b"caf\xe9"],
        cwd=root,
        check=True,
    )
    assert texts(resolve_target(root)) == ["Keep the retries idempotent."]


def test_a_checkout_of_another_commit_leaves_the_sheet_where_it_is(
    repo: pygit2.Repository, root: Path, detached: Target
) -> None:
    """A checkout is a switch to other work: the sheet waits for its commit's return."""
    change(root, "new.txt")
    git(root, "commit", "-q", "-m", "two")
    git(root, "checkout", "-q", "--detach", "main")
    git(root, "checkout", "-q", "--detach", "HEAD@{1}")  # the commit made, checked out
    assert texts(resolve_target(root)) == []
    git(root, "checkout", "-q", "--detach", "main")
    assert resolve_target(root) == detached
    assert texts(detached) == ["Keep the retries idempotent."]


@pytest.mark.parametrize(
    "make",
    [
        [["switch", "-q", "-c", "feature"]],
        [["checkout", "-q", "-b", "feature"]],
        [["branch", "feature"], ["checkout", "-q", "feature"]],
    ],
    ids=["switch -c", "checkout -b", "branch, then checkout"],
)
def test_a_branch_made_from_the_detached_head_takes_its_sheet(
    root: Path, detached: Target, make: list[list[str]]
) -> None:
    """git's advice for keeping a detached HEAD's commits: the branch goes on with its work,
    commits made detached before it included."""
    change(root, "new.txt")
    git(root, "commit", "-q", "-m", "two")  # no Stet in between: the sheet is the first commit's
    for move in make:
        git(root, *move)
    feature = resolve_target(root)
    assert feature == Target(root, "branch", "feature")
    assert texts(feature) == ["Keep the retries idempotent."]
    assert not detached.sheet_path.exists()
    assert "target=feature " in feature.sheet_path.read_text(encoding="utf-8")


@pytest.mark.skipif(
    shutil.which("git") is None or sys.platform == "darwin",
    reason="git makes the branch; macOS refuses a file name that is not UTF-8",
)
def test_a_branch_whose_name_is_not_utf8_made_from_the_detached_head_takes_its_sheet(
    root: Path, detached: Target
) -> None:
    """HEAD's reflog names the branch in bytes pygit2 cannot decode (`checkout: moving from
    <commit> to caf\xe9`): the message is read from the reflog's file."""
    change(root, "new.txt")
    git(root, "commit", "-q", "-m", "two")
    name = b"caf\xe9"
    subprocess.run([b"git", b"switch", b"-q", b"-c", name], cwd=root, check=True)
    branch = resolve_target(root)
    assert branch == Target(root, "branch", name.decode("utf-8", "surrogateescape"))
    assert texts(branch) == ["Keep the retries idempotent."]
    assert not detached.sheet_path.exists()


def test_a_branch_made_from_a_detached_head_checked_out_from_elsewhere_keeps_its_own_sheet(
    root: Path, detached: Target
) -> None:
    """Made where HEAD was detached, but checked out from another commit: other work."""
    git(root, "branch", "feature")
    change(root, "new.txt")
    git(root, "commit", "-q", "-m", "two")
    git(root, "checkout", "-q", "feature")
    assert texts(resolve_target(root)) == []
    git(root, "checkout", "-q", "--detach", detached.name)
    assert texts(detached) == ["Keep the retries idempotent."]


def test_a_branch_made_from_another_branch_starts_with_no_sheet(root: Path) -> None:
    StyleSheet(resolve_target(root)).add("On main.")
    git(root, "checkout", "-q", "-b", "feature")
    assert texts(resolve_target(root)) == []
    git(root, "checkout", "-q", "main")
    assert texts(resolve_target(root)) == ["On main."]


def test_a_sheet_of_its_own_is_never_merged_with_the_one_before(
    repo: pygit2.Repository, root: Path, detached: Target, stet: Stet
) -> None:
    """Both kept, and the command line says where the older one is."""
    change(root, "new.txt")
    git(root, "commit", "-q", "-m", "two")
    own = Target(root, "detached", repo[repo.head.target].short_id)
    StyleSheet(own).add("Its own entry.")
    assert resolve_target(root) == own
    assert texts(own) == ["Its own entry."]
    assert texts(detached) == ["Keep the retries idempotent."]
    code, out, err = stet("note", "list", "-C", str(root))
    assert code == 0 and "Its own entry." in out and "retries" not in out
    assert f"the style sheet of detached HEAD {detached.name}, the commit HEAD" in err
    assert f"check out {detached.name} to see its entries ({detached.sheet_path})" in err
    git(root, "checkout", "-q", "--detach", detached.name)
    code, out, err = stet("note", "list", "-C", str(root))
    assert "retries" in out and err == ""
