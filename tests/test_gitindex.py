"""Whether git's index holds a path, read from the index file (core/gitindex.py), against
what git itself writes: every index version, extended flags, a split index, a worktree."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pygit2
import pytest
from repos import commit_files, make_repo

from stet_lsp.core import gitindex
from stet_lsp.core.gitindex import index_holds
from stet_lsp.core.session import RepositorySession

SHEET = ".stet/cache/sheets/branch--main--0123.md"


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


@pytest.fixture
def tracked(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path / "repo", files={"README.md": "hi\n", SHEET: "x\n"})
    commit_files(repo, {f"vendor/x/{SHEET}": "y\n", "zz.txt": "z\n"})
    return Path(repo.workdir).resolve()


def test_the_index_file_is_read_as_git_writes_it(
    tracked: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_libgit2(root: Path, relative: str) -> bool:
        raise AssertionError("libgit2 asked")

    monkeypatch.setattr(gitindex, "_libgit2_holds", no_libgit2)
    assert index_holds(tracked, SHEET)
    assert not index_holds(tracked, ".stet/cache/sheets/branch--other--4567.md")
    # Only inside a longer path, or a prefix of one: not held.
    assert not index_holds(tracked, "x/" + SHEET) and not index_holds(tracked, SHEET[:-3])
    assert index_holds(tracked, f"vendor/x/{SHEET}")
    git(tracked, "update-index", "--skip-worktree", SHEET)  # extended flags: version 3
    assert (tracked / ".git" / "index").read_bytes()[4:8] == (3).to_bytes(4, "big")
    assert index_holds(tracked, SHEET) and index_holds(tracked, "zz.txt")
    git(tracked, "update-index", "--no-skip-worktree", SHEET)
    git(tracked, "-c", "core.splitIndex=true", "update-index", "--split-index")
    git(tracked, "add", "README.md")
    assert index_holds(tracked, SHEET)
    git(tracked, "rm", "-q", "--cached", f"vendor/x/{SHEET}")
    git(tracked, "update-index", "--no-split-index")  # the old shared part stays behind
    assert index_holds(tracked, SHEET) and not index_holds(tracked, f"vendor/x/{SHEET}")
    git(tracked, "rm", "-q", "--cached", SHEET)
    assert not index_holds(tracked, SHEET) and (tracked / SHEET).exists()


def test_a_version_4_index_and_a_worktree(tracked: Path, tmp_path: Path) -> None:
    git(tracked, "update-index", "--index-version", "4")
    assert gitindex._index_file_holds(tracked / ".git", SHEET) is None  # libgit2 answers
    assert index_holds(tracked, SHEET) and not index_holds(tracked, "x/" + SHEET)
    git(tracked, "worktree", "add", "-q", str(tmp_path / "linked"))
    linked = (tmp_path / "linked").resolve()
    assert (linked / ".git").is_file() and index_holds(linked, SHEET)


def test_no_index_holds_nothing(tmp_path: Path) -> None:
    root = Path(pygit2.init_repository(str(tmp_path / "empty")).workdir)
    assert not index_holds(root, SHEET)
    assert not index_holds(tmp_path / "nowhere", SHEET)


def test_the_servers_warning_reads_a_split_index_too(tracked: Path) -> None:
    """libgit2 does not read the shared part of a split index: the server's warning about a
    tracked sheet asks the same reader as the brief's refusal."""
    git(tracked, "-c", "core.splitIndex=true", "update-index", "--split-index")
    git(tracked, "add", "README.md")
    assert RepositorySession(tracked).tracked(tracked / SHEET)
    assert not RepositorySession(tracked).tracked(tracked / "x" / SHEET)
