"""Whether git's index holds a path (core/gitindex.py): libgit2's answer, asked only when the
index file as git writes it (every version, extended flags, a split index, a worktree) may
hold the path."""

from __future__ import annotations

import os
import stat
import subprocess
import threading
import time
from pathlib import Path

import pygit2
import pytest
from repos import commit_files, make_repo

from stet_lsp.core import gitindex
from stet_lsp.core.gitindex import index_holds

SHEET = ".stet/cache/sheets/branch--main--0123.md"


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


@pytest.fixture
def tracked(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path / "repo", files={"README.md": "hi\n", SHEET: "x\n"})
    # A path holding an extension's signature ("link": a split index's) is only a path.
    commit_files(repo, {f"vendor/x/{SHEET}": "y\n", "zz.txt": "z\n", "links/x.txt": "l\n"})
    return Path(repo.workdir).resolve()


def test_libgit2_is_asked_only_when_the_index_mentions_the_path(
    tracked: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[str] = []
    libgit2 = gitindex._libgit2_holds

    def counted(root: Path, relative: str) -> bool:
        asked.append(relative)
        return libgit2(root, relative)

    monkeypatch.setattr(gitindex, "_libgit2_holds", counted)
    assert not index_holds(tracked, ".stet/cache/sheets/branch--other--4567.md")
    assert not index_holds(tracked, SHEET[:-3])  # a prefix of an entry's path
    assert asked == []  # neither is in the index file: libgit2 is not loaded
    assert index_holds(tracked, SHEET) and index_holds(tracked, f"vendor/x/{SHEET}")
    # Only the end of a longer path: the bytes are there, libgit2 says no.
    assert not index_holds(tracked, "x/" + SHEET)
    assert asked == [SHEET, f"vendor/x/{SHEET}", "x/" + SHEET]
    git(tracked, "update-index", "--skip-worktree", SHEET)  # extended flags: version 3
    assert (tracked / ".git" / "index").read_bytes()[4:8] == (3).to_bytes(4, "big")
    assert index_holds(tracked, SHEET) and not index_holds(tracked, "nope.md")
    assert asked[-1] == SHEET
    git(tracked, "update-index", "--no-skip-worktree", SHEET)
    git(tracked, "rm", "-q", "--cached", SHEET)
    assert not index_holds(tracked, SHEET) and (tracked / SHEET).exists()


def test_a_version_4_or_split_index_and_a_worktree(
    tracked: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    git(tracked, "update-index", "--index-version", "4")
    assert index_holds(tracked, SHEET) and not index_holds(tracked, "x/" + SHEET)
    git(tracked, "worktree", "add", "-q", str(tmp_path / "linked"))
    linked = (tmp_path / "linked").resolve()
    assert (linked / ".git").is_file() and index_holds(linked, SHEET)
    # Prefix-compressed paths (version 4), entries in a shared part (a split index): the
    # index file cannot rule the path out, so libgit2 is asked.
    asked: list[str] = []
    monkeypatch.setattr(gitindex, "_libgit2_holds", lambda root, path: asked.append(path) or 0)
    assert not index_holds(tracked, "nope.md") and asked == ["nope.md"]
    git(tracked, "update-index", "--index-version", "2")
    git(tracked, "-c", "core.splitIndex=true", "update-index", "--split-index")
    assert not index_holds(tracked, "nope.md") and asked == ["nope.md", "nope.md"]


def test_a_file_a_sparse_checkout_leaves_out_is_told_in_every_index_version(
    tmp_path: Path,
) -> None:
    """`outside_sparse_checkout` reads the skip-worktree flag git's sparse checkout sets, from
    the index file: in versions 3 and 4 (prefix-compressed paths) and in a sparse index,
    where a folder left out is one entry. git's own command line writes these, as libgit2
    writes neither a version 4 nor a sparse index."""
    skill = ".stet/skills/retry/SKILL.md"
    files = {f"dir{n}/file{m}.txt": f"{n} {m}\n" for n in range(3) for m in range(12)}
    repo = make_repo(tmp_path / "repo", files={**files, skill: "x\n", "src/app.py": "a\n"})
    root = Path(repo.workdir).resolve()
    left_out = gitindex.outside_sparse_checkout
    assert not left_out(root, skill)
    git(root, "sparse-checkout", "set", "--no-cone", "/src/", "/dir1/")
    assert not (root / skill).exists()
    for version in ["3", "4"]:
        git(root, "update-index", "--index-version", version)
        assert left_out(root, skill) and left_out(root, "dir2/file7.txt")
        assert not left_out(root, "src/app.py") and not left_out(root, "dir1/file7.txt")
        assert not left_out(root, "nope.md")
    git(root, "sparse-checkout", "set", "--cone", "--sparse-index", "src")
    assert left_out(root, skill) and not left_out(root, "src/app.py")
    git(root, "sparse-checkout", "disable")
    assert not left_out(root, skill) and (root / skill).exists()


def test_no_index_holds_nothing(tmp_path: Path) -> None:
    root = Path(pygit2.init_repository(str(tmp_path / "empty")).workdir)
    assert not index_holds(root, SHEET)
    assert not index_holds(tmp_path / "nowhere", SHEET)


def test_an_index_libgit2_cannot_read_is_told_apart(tracked: Path) -> None:
    """`index_tracks` says None for an index libgit2 refuses (a torn file that mentions the
    path), where `index_holds` says no; no index at all is "not tracked" for both."""
    index = tracked / ".git" / "index"
    assert gitindex.index_tracks(tracked, SHEET) is True
    index.write_bytes(b"DIRC" + (2).to_bytes(4, "big") + (9).to_bytes(4, "big") + b"x" * 40)
    index.write_bytes(index.read_bytes() + SHEET.encode() + b"\0")
    assert gitindex.index_tracks(tracked, SHEET) is None
    assert not index_holds(tracked, SHEET)
    index.unlink()
    assert gitindex.index_tracks(tracked, SHEET) is False


def test_an_index_libgit2_cannot_read_is_named_with_what_to_do(tracked: Path) -> None:
    """git writes a split or sparse index that libgit2 refuses to write back; the refusal
    names the git command that writes it whole."""
    git(tracked, "-c", "core.splitIndex=true", "update-index", "--split-index")
    repository = pygit2.Repository(str(tracked))
    with pytest.raises(pygit2.GitError) as refused:
        gitindex.update_index(repository, lambda index: None)
    said = gitindex.index_error(refused.value)
    assert said.startswith("unsupported mandatory extension: 'link'")
    assert "git update-index --no-split-index" in said
    assert gitindex.index_error(OSError("disk full")) == "disk full"


def test_only_a_lock_error_is_called_the_lock(tmp_path: Path) -> None:
    """With an `index.lock` left beside the index, an error of another kind (an extension
    libgit2 does not read) was described as the lock; only libgit2's lock errors are."""
    repository = make_repo(tmp_path / "repo")
    (Path(repository.path) / "index.lock").touch()
    locked = gitindex.index_error(
        pygit2.GitError("the index is locked; this might be due to a concurrent process"),
        repository,
    )
    assert "index.lock): try again once the git process using the index is done" in locked
    other = gitindex.index_error(
        pygit2.GitError("unsupported mandatory extension: 'link'"), repository
    )
    assert "index.lock" not in other and "--no-split-index" in other


def test_what_git_stages_while_stet_changes_the_index_is_never_lost(tracked: Path) -> None:
    """libgit2 takes `index.lock` only to write, after a read made without it: a `git add`
    between the two was written over. Stet writes only if the index is still the file it
    read, else starts again from the new one; git's lock is not held meanwhile (a process
    stopped there would leave it, and git would refuse to work until it was removed)."""
    repository = pygit2.Repository(str(tracked))
    (tracked / "b.txt").write_text("b\n")
    blob = repository.create_blob(b"c\n")
    meanwhile: list[subprocess.CompletedProcess[str]] = []

    def change(index: pygit2.Index) -> None:
        if not meanwhile:
            add = ["git", "-C", str(tracked), "add", "b.txt"]
            meanwhile.append(subprocess.run(add, capture_output=True, text=True))
        index.add(pygit2.IndexEntry("c.txt", blob, pygit2.GIT_FILEMODE_BLOB))

    gitindex.update_index(repository, change)
    (added,) = meanwhile
    assert added.returncode == 0, added.stderr
    index = pygit2.Repository(str(tracked)).index
    assert "b.txt" in index and "c.txt" in index and "README.md" in index
    assert sorted(path.name for path in Path(repository.path).glob("index*")) == ["index"]


def test_an_index_rewritten_in_place_with_its_size_and_time_is_told_by_its_checksum(
    tracked: Path, tmp_path: Path
) -> None:
    """Another writer changes the index while Stet changes its copy: it writes the file in
    place, the same size (a mode changed: `git update-index --chmod=+x`), and sets its
    modification time back. Inode, size, time and permissions are those Stet copied; the
    checksum is not, so Stet starts again from the new index, and the mode stays staged."""
    repository = pygit2.Repository(str(tracked))
    index_file = Path(repository.path) / "index"
    blob = repository.create_blob(b"c\n")
    other = tmp_path / "other-index"
    rewritten: list[os.stat_result] = []

    def change(index: pygit2.Index) -> None:
        if not rewritten:
            before = os.stat(index_file)
            other.write_bytes(index_file.read_bytes())
            chmod = ["git", "-C", str(tracked), "update-index", "--chmod=+x", "README.md"]
            env = {**os.environ, "GIT_INDEX_FILE": str(other)}
            subprocess.run(chmod, env=env, check=True, capture_output=True)
            with open(index_file, "r+b") as stream:
                stream.write(other.read_bytes())
            os.utime(index_file, ns=(before.st_atime_ns, before.st_mtime_ns))
            rewritten.append(before)
        index.add(pygit2.IndexEntry("c.txt", blob, pygit2.GIT_FILEMODE_BLOB))

    gitindex.update_index(repository, change)
    (before,) = rewritten
    after = os.stat(other)
    assert after.st_size == before.st_size  # what only the checksum tells apart
    index = pygit2.Repository(str(tracked)).index
    assert index["README.md"].mode == pygit2.GIT_FILEMODE_BLOB_EXECUTABLE
    assert "c.txt" in index


def test_a_write_of_the_index_keeps_its_mode_and_clears_what_a_stopped_one_left(
    tracked: Path,
) -> None:
    """The index keeps its permissions (a repository shared with a group); a copy of the
    index that a stopped process left an hour ago goes; a recent one stays, even when its
    process seems gone (another PID namespace or host may be writing it), and so does one a
    running process is writing."""
    repository = pygit2.Repository(str(tracked))
    folder = Path(repository.path)
    (folder / "index").chmod(0o660)
    copies = {
        "left": folder / "index.stet-999999999-1",
        "no process's number": folder / "index.stet-99999999999999999999-1",
        "recent": folder / "index.stet-999999998-1",
        "running": folder / f"index.stet-{os.getppid()}-1",
    }
    hour_ago = time.time() - gitindex.ABANDONED_COPY_SECONDS - 60
    for name, copy in copies.items():
        copy.write_bytes(b"DIRC")
        if name != "recent":
            os.utime(copy, (hour_ago, hour_ago))
    blob = repository.create_blob(b"c\n")
    gitindex.update_index(
        repository, lambda index: index.add(pygit2.IndexEntry("c.txt", blob, 0o100644))
    )
    assert "c.txt" in pygit2.Repository(str(tracked)).index
    assert stat.S_IMODE((folder / "index").stat().st_mode) == 0o660
    assert {name for name, copy in copies.items() if copy.exists()} == {"recent", "running"}


def test_an_index_that_cannot_be_written_is_a_git_error_naming_it(tracked: Path) -> None:
    """What the file system refuses is said as libgit2's refusals are (the callers put back
    what they wrote on a GitError), with the file it was about."""
    repository = pygit2.Repository(str(tracked))
    in_the_way = Path(repository.path) / f"index.stet-{os.getpid()}-{threading.get_ident()}"
    (in_the_way / "x").mkdir(parents=True)
    with pytest.raises(pygit2.GitError, match=f"{in_the_way}: Is a directory"):
        gitindex.update_index(repository, lambda index: None)
