"""Targets: resolved from any folder of a real repository; keys safe and distinct."""

from __future__ import annotations

import os
from pathlib import Path

import pygit2
import pytest
from repos import commit_files, make_repo

from stet_lsp.core.errors import StetError
from stet_lsp.core.sheet import StyleSheet
from stet_lsp.core.targets import (
    SHEETS_DIR,
    Target,
    find_repository,
    resolve_target,
    target_key,
)


def test_branch_from_a_subfolder(repo: pygit2.Repository, root: Path) -> None:
    target = resolve_target(root / "src")
    assert (target.root, target.kind, target.name) == (root, "branch", "main")


def test_branch_names_git_allows(repo: pygit2.Repository, root: Path) -> None:
    head = repo[repo.head.target]
    for name in ["feature/login", "ünïcødé/日本語", "x" * 250, "a.b-c_d/e"]:
        repo.branches.local.create(name, head)
        repo.checkout(repo.branches.local[name])
        target = resolve_target(root)
        assert (target.kind, target.name) == ("branch", name)
        assert target.sheet_path.parent == root / SHEETS_DIR
        assert len(target.sheet_path.name.encode()) < 255


def test_detached_head_is_named_by_its_short_commit(repo: pygit2.Repository, root: Path) -> None:
    commit = repo[repo.head.target]
    repo.set_head(commit.id)
    target = resolve_target(root)
    assert target.kind == "detached"
    assert str(commit.id).startswith(target.name)
    assert "detached" in target.label


@pytest.mark.parametrize("state", ["rebase-merge", "rebase-apply"])
def test_a_rebase_in_progress_keeps_the_branch_it_rebases(
    repo: pygit2.Repository, root: Path, state: str
) -> None:
    """A rebase detaches HEAD until it ends (stopped at a conflict, say): the target stays
    the branch git names in its state (as `git status` does), with that branch's sheet."""
    repo.branches.local.create("feature", repo[repo.head.target])
    repo.checkout(repo.branches.local["feature"])
    StyleSheet(resolve_target(root)).add("on feature")
    repo.set_head(repo[repo.head.target].id)  # what the rebase does, with its state below
    (root / ".git" / state).mkdir()
    (root / ".git" / state / "head-name").write_text("refs/heads/feature\n")
    target = resolve_target(root)
    assert (target.kind, target.name) == ("branch", "feature")
    assert [entry.text for entry in StyleSheet(target).entries()] == ["on feature"]
    (root / ".git" / state / "head-name").write_text("detached HEAD\n")  # rebasing a commit
    assert resolve_target(root).kind == "detached"


def test_repository_without_commits_keeps_its_sheet_after_the_first(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "empty", branch="trunk")
    unborn = resolve_target(tmp_path / "empty")
    assert (unborn.kind, unborn.name) == ("branch", "trunk")
    StyleSheet(unborn).add("first thought")
    commit_files(repo, {"a.txt": "a\n"})
    born = resolve_target(tmp_path / "empty")
    assert born == unborn
    assert [entry.text for entry in StyleSheet(born).entries()] == ["first thought"]


def test_worktree_is_its_own_target(repo: pygit2.Repository, root: Path, tmp_path: Path) -> None:
    repo.branches.local.create("side", repo[repo.head.target])
    worktree = repo.add_worktree("side-tree", str(tmp_path / "side-tree"), repo.branches["side"])
    target = resolve_target(Path(worktree.path))
    assert (target.root, target.name) == (Path(worktree.path).resolve(), "side")
    assert resolve_target(root).name == "main"


def test_explicit_target(repo: pygit2.Repository, root: Path) -> None:
    target = resolve_target(root, "pr-1234")
    assert (target.kind, target.name) == ("named", "pr-1234")
    assert target.key != resolve_target(root).key


def test_outside_a_repository_is_a_clear_error(tmp_path: Path) -> None:
    """The core names the folder; how to name another (`-C DIR`) is the command line's to add,
    not the editor's or an agent's (tests/test_cli.py)."""
    with pytest.raises(StetError) as caught:
        resolve_target(tmp_path)
    assert str(caught.value) == f"not inside a git repository: {tmp_path.resolve()}"


@pytest.mark.parametrize("name", ["", "   "])
def test_empty_explicit_names_are_refused(root: Path, name: str) -> None:
    with pytest.raises(StetError, match="empty"):
        resolve_target(root, name)


HOSTILE_NAMES = [
    "../../etc/passwd",
    "a/b/../../c",
    "/abs",
    "C:\\Windows\\system32",
    "..",
    ".",
    "ünïcødé/日本語/🙂",
    "x" * 300,
    "Feature",
    "feature",
    "feature/a",
    "feature-a",
    "feature_a",
    "feature a",
    "feature\na",
    "feature\x00a",
    "feature\x1ba",
    "con",
    "nul.md",
]


def test_hostile_names_stay_inside_the_sheets_folder_and_never_collide(root: Path) -> None:
    sheets = (root / SHEETS_DIR).resolve()
    keys = {}
    for name in HOSTILE_NAMES:
        target = resolve_target(root, name)
        path = target.sheet_path
        assert path.resolve().parent == sheets, name
        assert len(path.name.encode()) <= 120
        assert all(char.isalnum() or char in "-._" for char in path.name), path.name
        keys.setdefault(path.name.lower(), name)
        assert keys[path.name.lower()] == name, (
            f"{name!r} collides with {keys[path.name.lower()]!r}"
        )
    # The same name as a branch and as an explicit target are different targets too.
    assert target_key("branch", "main") != target_key("named", "main")


def test_hostile_names_get_separate_sheets_on_disk(root: Path) -> None:
    for number, name in enumerate(HOSTILE_NAMES):
        StyleSheet(resolve_target(root, name)).add(f"entry {number}")
    for number, name in enumerate(HOSTILE_NAMES):
        entries = StyleSheet(resolve_target(root, name)).entries()
        assert [entry.text for entry in entries] == [f"entry {number}"], name
    assert len(list((root / SHEETS_DIR).glob("*.md"))) == len(HOSTILE_NAMES)


def test_a_sheet_is_never_read_for_another_target(root: Path) -> None:
    one = StyleSheet(resolve_target(root, "one"))
    one.add("private to one")
    other = Target(root, "named", "two")
    other.sheet_path.parent.mkdir(parents=True, exist_ok=True)
    other.sheet_path.write_bytes(one.path.read_bytes())
    with pytest.raises(StetError, match="belongs to target 'one'"):
        StyleSheet(other).entries()


def _age_head(root: Path) -> None:
    """HEAD written long ago (a HEAD changed within two seconds is never taken from the
    cache: a later change could keep the same times)."""
    import os
    import time

    old = time.time_ns() - 60_000_000_000
    os.utime(root / ".git" / "HEAD", ns=(old, old))


def test_the_branch_is_remembered_while_head_is_unchanged(
    repo: pygit2.Repository, root: Path
) -> None:
    import json
    import subprocess
    import sys

    StyleSheet(resolve_target(root)).add("the sheet and .stet/cache exist")
    _age_head(root)
    first = resolve_target(root / "src")
    cache = root / ".stet" / "cache" / "head.json"
    assert json.loads(cache.read_text())["branch"] == "main"
    # Another process finds the target without loading libgit2.
    probe = (
        "import sys; from stet_lsp.core.targets import resolve_target; "
        f"t = resolve_target({str(root / 'src')!r}); "
        "print(t.kind, t.name, 'pygit2' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["branch", "main", "False"]
    assert resolve_target(root) == first

    # A switch of branch rewrites HEAD: the remembered branch no longer counts.
    repo.branches.local.create("feature", repo[repo.head.target])
    repo.checkout(repo.branches.local["feature"])
    assert resolve_target(root).name == "feature"
    _age_head(root)
    assert resolve_target(root).name == "feature"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["branch", "feature", "False"]


def test_a_note_added_with_the_branch_remembered_loads_neither_libgit2_nor_the_merge(
    repo: pygit2.Repository, root: Path
) -> None:
    """`stet note add`, which agents call often, starts fast: the sheet's merge (and the
    dataclasses it loads) is loaded only when a save landed meanwhile, libgit2 only when HEAD
    changed."""
    import subprocess
    import sys

    StyleSheet(resolve_target(root)).add("the sheet and .stet/cache exist")
    _age_head(root)
    resolve_target(root)  # remembered
    probe = (
        "import sys; from stet_lsp.cli import main; main(['note', 'add', 'fast']); "
        "print(*(name in sys.modules for name in ('pygit2', 'stet_lsp.core.merge')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=root, capture_output=True, text=True, check=True
    )
    assert out.stdout.split()[-2:] == ["False", "False"]
    assert [entry.text for entry in StyleSheet(resolve_target(root)).entries()][-1] == "fast"


def test_a_forged_or_steered_cache_is_not_believed(
    repo: pygit2.Repository, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    StyleSheet(resolve_target(root)).add("x")
    _age_head(root)
    resolve_target(root)
    cache = root / ".stet" / "cache" / "head.json"
    entry = json.loads(cache.read_text())
    cache.write_text(json.dumps({**entry, "branch": "forged", "status": [1, 2, 3, 4, 5]}))
    assert resolve_target(root).name == "main"  # HEAD's status differs: read by git
    entry = json.loads(cache.read_text())
    cache.write_text(json.dumps({**entry, "branch": "forged"}))
    assert resolve_target(root).name == "forged"  # (what the cache is for)
    monkeypatch.setenv("GIT_DIR", str(root / ".git"))
    assert resolve_target(root).name == "main"  # GIT_DIR decides: git reads HEAD

    monkeypatch.delenv("GIT_DIR")
    cache.write_text("[" * 100_000 + "]" * 100_000)  # committed by a hostile clone
    assert resolve_target(root).name == "main"  # deeper than json goes: no cache


def test_a_cloned_head_cache_is_read_no_further_than_a_record(tmp_path: Path) -> None:
    """Every command looks at `.stet/cache/head.json` first, and a clone can commit it: one of
    gigabytes (zeros, which git compresses to almost nothing) was read whole, twice its size
    in memory, by every command until one got as far as replacing it. No more than a
    record's limit is read, and the branch comes from git."""
    import tracemalloc

    from repos import hostile_clone

    root = hostile_clone(tmp_path, {".stet/cache/head.json": "{}", "README.md": "hi\n"})
    os.truncate(root / ".stet/cache/head.json", 256 * 1024 * 1024)
    tracemalloc.start()
    try:
        assert resolve_target(root) == Target(root, "branch", "main")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 * 1024 * 1024


def test_the_repository_is_the_one_of_the_nearest_work_tree_in_every_layout(
    tmp_path: Path,
) -> None:
    """A `.git` file (`--separate-git-dir`, a worktree), a `.git` link, and an empty `.git`
    folder inside a work tree (git looks further up, and so does Stet)."""

    def work_tree(path: Path) -> Path:
        found = find_repository(path)
        assert found is not None and found.workdir is not None
        return Path(found.workdir).resolve()

    separate = tmp_path / "separate"
    pygit2.init_repository(str(tmp_path / "kept.git"), workdir_path=str(separate))
    assert (separate / ".git").is_file()
    (separate / "src").mkdir()
    assert work_tree(separate / "src") == separate

    main = make_repo(tmp_path / "main", files={"a.txt": "a\n"})
    linked = tmp_path / "linked"
    linked.mkdir()
    os.symlink(Path(main.path), linked / ".git")
    assert work_tree(linked) == linked

    (tmp_path / "main" / "vendor" / "pkg" / ".git").mkdir(parents=True)
    assert work_tree(tmp_path / "main" / "vendor" / "pkg") == tmp_path / "main"

    main.add_worktree("side", str(tmp_path / "side"))
    assert work_tree(tmp_path / "side") == tmp_path / "side"
    assert work_tree(tmp_path / "main" / "not-yet" / "file.py") == tmp_path / "main"
    assert find_repository(tmp_path / "nowhere") is None


@pytest.mark.parametrize(
    "head",
    ["ref: refs/heads/a\n", "ref: refs/heads/../../x\n"],
    ids=["a loop of references", "a name git refuses"],
)
def test_a_head_git_cannot_read_is_a_plain_error(
    repo: pygit2.Repository, root: Path, head: str
) -> None:
    """A clone's HEAD (or a hand-edited one) that git cannot resolve: an error naming it, not
    a pygit2 traceback."""
    (root / ".git" / "refs" / "heads" / "a").write_text("ref: refs/heads/b\n")
    (root / ".git" / "refs" / "heads" / "b").write_text("ref: refs/heads/a\n")
    (root / ".git" / "HEAD").write_text(head)
    with pytest.raises(StetError, match="git cannot read HEAD"):
        resolve_target(root)
