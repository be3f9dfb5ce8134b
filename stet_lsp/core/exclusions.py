"""Taking out a line an install added to the repository's `info/exclude` (for `stet mcp
uninstall` and `stet hooks uninstall`).

`info/exclude` lives in the common git folder, so one line keeps the same file out of commits
in every work tree of the repository. The line stays while another work tree (the main one or
a linked one) has that file at all, whatever it holds: without the line git would show it, and
it may hold a secret. Imports little: the hooks start fast; libgit2 is loaded only when asked.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stet_lsp.core.errors import StetError
from stet_lsp.core.locking import LOCK_TIMEOUT_SECONDS, held, remove_held
from stet_lsp.core.rewrites import retried
from stet_lsp.core.safefs import (
    ChangedMeanwhile,
    atomic_write,
    holding,
    read_regular,
    remove_regular,
)


@dataclass(frozen=True)
class Unexclusion:
    """The `info/exclude` line to take out: the file's text before and after (None: the file
    goes, install created it), and what it was worked out from (`unexclusion`'s arguments),
    to work it out again when the file changes meanwhile."""

    path: Path
    base: Path
    pattern: str
    before: str
    after: str | None
    root: Path
    relative: Path
    excluded: dict[str, Any]


def unexclusion(root: Path, relative: Path, excluded: Any) -> Unexclusion | None:
    """The line `/relative` taken out of the `info/exclude` of the repository at `root` (worked
    out again, not where a record says), as install recorded adding it (`excluded`: `added`,
    the bytes appended, and `created`, whether install created the file). None when there is
    nothing to take out, or another work tree has the file."""
    from stet_lsp.core.targets import common_git_dir, open_repository

    if not isinstance(excluded, dict):
        return None
    pattern = "/" + relative.as_posix()
    try:
        repo = open_repository(root)
        base = common_git_dir(Path(repo.path))
        path = base / "info" / "exclude"
        data = read_regular(path, base)
    except StetError:
        return None
    if data is None or held_elsewhere(root, repo, base, relative):
        return None
    text = data.decode("utf-8", "surrogateescape")
    added = excluded.get("added")
    if isinstance(added, str) and added.strip("\r\n") == pattern and text.endswith(added):
        rest = text[: -len(added)]
    else:
        lines = text.splitlines(keepends=True)
        mine = [n for n, line in enumerate(lines) if line.rstrip("\r\n") == pattern]
        if not mine:
            return None
        del lines[mine[-1]]
        rest = "".join(lines)
    after = None if excluded.get("created") is True and not rest else rest
    return Unexclusion(path, base, pattern, text, after, root, relative, excluded)


# Not `exclude.lock`: a tool that writes `info/exclude` the way git writes its own files
# creates that name exclusively, and would fail while Stet held it.
LOCK_NAME = "exclude.stet-lock"


@contextmanager
def locked(base: Path) -> Iterator[None]:
    """Hold Stet's lock on the `info/exclude` of the common git folder `base` while reading,
    comparing and replacing it: without it two of Stet's writers could both find the file as
    they read it and the last replace win, losing the other's line. Writers that are not
    Stet's (git, an editor) take no lock; the compare before the replace still covers them.
    The lock file is removed when released, so none stays beside the exclude file."""
    lock_path = base / "info" / LOCK_NAME
    with held(lock_path, base, LOCK_TIMEOUT_SECONDS) as acquired:
        if not acquired:
            raise StetError(
                f"the repository's info/exclude is locked by another process ({lock_path}); "
                "try again"
            )
        try:
            yield
        finally:
            remove_held(lock_path, base)


def apply(gone: Unexclusion) -> None:
    """Take the line out, only from the text it was worked out from: another install or
    uninstall may add or take out a line of its own meanwhile, which is then read, and the
    line worked out again (core/rewrites.py)."""
    first = True

    def attempt() -> None:
        nonlocal first
        current = gone if first else unexclusion(gone.root, gone.relative, gone.excluded)
        first = False
        if current is not None:
            _take_out(current)

    try:
        retried(attempt, ChangedMeanwhile)
    except ChangedMeanwhile:
        raise StetError(
            f"{gone.path} kept changing while Stet wrote it; {gone.pattern} is left in it, "
            "run the command again"
        ) from None


def _take_out(gone: Unexclusion) -> None:
    before = gone.before.encode("utf-8", "surrogateescape")
    holds = holding(before, gone.base)
    with locked(gone.base):
        if gone.after is None:
            if not holds(gone.path):
                raise ChangedMeanwhile(gone.path)
            remove_regular(gone.path, gone.base)
        else:
            data = gone.after.encode("utf-8", "surrogateescape")
            atomic_write(gone.path, data, gone.base, unchanged=holds)


def held_elsewhere(root: Path, repo: Any, common: Path, relative: Path) -> bool:
    """Whether a work tree of the repository other than `root` has something at `relative`
    (a file, a link, anything git could show)."""
    return any(os.path.lexists(tree / relative) for tree in other_work_trees(root, repo, common))


def other_work_trees(root: Path, repo: Any, common: Path) -> list[Path]:
    """The work trees of the repository (the main one and the linked ones, resolved) other
    than the one at `root`."""
    trees = {common.parent} if common.name == ".git" else set()
    for name in repo.list_worktrees():
        with suppress(Exception):  # a worktree pruned or locked away: not in use here
            trees.add(Path(repo.lookup_worktree(name).path))
    own = root.resolve()
    found = []
    for tree in trees:
        with suppress(OSError):
            tree = tree.resolve()
            if tree != own:
                found.append(tree)
    return sorted(found)


def claimed_elsewhere(
    root: Path, relative: Path, excluded_of: Callable[[Path], Any]
) -> dict[str, Any] | None:
    """The `info/exclude` line for `/relative` another work tree's install of the same file
    added (`excluded_of(tree)` reads what that tree's install record says it added), as a
    copy: an install that finds the line there records it too, so whichever work tree
    uninstalls last takes it out (`unexclusion` keeps it while another work tree has the
    file)."""
    from stet_lsp.core.targets import common_git_dir, open_repository

    pattern = "/" + relative.as_posix()
    try:
        repo = open_repository(root)
        common = common_git_dir(Path(repo.path))
    except StetError:
        return None
    for tree in other_work_trees(root, repo, common):
        excluded = excluded_of(tree)
        added = excluded.get("added") if isinstance(excluded, dict) else None
        if isinstance(added, str) and added.strip("\r\n") == pattern:
            return dict(excluded)
    return None
