"""A renamed branch keeps its working trajectory, as it keeps its style sheet
(`core/renames.py`): after `git branch -m old new` the target's key is new, and the working
trajectory under the old key (with the verdicts on its steps) would stand apart, unseen by
the capstone until every session was imported again.

The evidence is the sheet's: the branch's reflog. When the branch has no working trajectory,
the one of its newest former name that has one (and is no branch now) moves to the new key
(and a detached HEAD moved on by a commit takes the one of the commit it came from, found in
HEAD's reflog: `core/lineage.py`),
under both folders' locks and both feedback files' (a writer at work keeps it where it is
until the next call; an import, a graduation or the capstone, which would otherwise make a
new folder beside it, waits). Its verdicts move to the new id's file, and the trajectory is
composed again, its meta.json naming the branch. Skills graduated before the rename name the
former key in their metadata; the capstone retargets every former key (`former_keys`).

After two branches swapped names, the working trajectory a branch finds under the name it
took, composed before it took it, goes to the branch that had the name, as its sheet does
(`core/renames.py`).
"""

from __future__ import annotations

import contextlib
import os
import stat
from contextlib import ExitStack
from typing import TYPE_CHECKING

from stet_lsp.core.errors import StetError
from stet_lsp.core.locking import LOCK_TIMEOUT_SECONDS, remove_held
from stet_lsp.core.safefs import inside
from stet_lsp.core.targets import Target
from stet_lsp.trajectory.store import (
    META,
    WORKING,
    Folder,
    lock_of,
    tracked_file,
    working_folder,
    working_held,
)

if TYPE_CHECKING:
    from pathlib import Path

    import pygit2

    from stet_lsp.core.targets import TargetKind
    from stet_lsp.gate.config import GateConfig


def follow_rename(
    target: Target, gate_config: GateConfig | None = None, *, wait: bool = False
) -> Folder | None:
    """Give the branch or detached HEAD `target`, when it has no working trajectory, the one
    it had under a former name or commit (see the module), composed again with `gate_config`
    (else the repository's). The folder it moved to, or None when nothing moved. A lock held
    on either folder or their verdicts leaves the move to a later call; with `wait` (a writer
    about to make the target's working folder: an import, a graduation, the capstone), it is
    waited for as any writer waits, and StetError says to try again when it is not let go."""
    if target.kind == "named":
        return None
    timeout = LOCK_TIMEOUT_SECONDS if wait else 0
    given = _give_back(target, gate_config, timeout)
    if not _others_there(target):
        return given
    from stet_lsp.core.renames import former_targets
    from stet_lsp.core.targets import open_repository

    for source in former_targets(open_repository(target.root), target):
        moved = _move(source, target, gate_config, timeout)
        if moved is not None:
            return moved
    return given


def _give_back(target: Target, gate_config: GateConfig | None, timeout: float) -> Folder | None:
    """Move the working trajectory of the branch `target`'s name, last composed before the
    branch took that name by a rename, to the branch that had the name then (two branches'
    names swapped: `core/renames.previous_holder`), when that branch has none."""
    from stet_lsp.core.renames import previous_holder
    from stet_lsp.core.targets import open_repository

    if target.kind != "branch":
        return None
    folder = working_folder(target)
    try:
        written = os.lstat(inside(target.root, folder.relative / META)).st_mtime
    except (OSError, StetError):
        return None
    try:
        holder = previous_holder(open_repository(target.root), target, written)
    except StetError:
        return None
    if holder is None or _is_dir(target.root, working_folder(holder).relative):
        return None
    return _move(target, holder, gate_config, timeout)


def former_keys(repo: pygit2.Repository, target: Target) -> list[str]:
    """The keys the working trajectory of `target` may have had (its former targets')."""
    from stet_lsp.core.renames import former_targets

    return [former.key for former in former_targets(repo, target)]


def branch_gone(repo: pygit2.Repository, name: str) -> bool:
    """Whether the branch `name` was deleted: no local branch, nor a renamed one's former name
    (whose working trajectory follows it)."""
    from stet_lsp.core.renames import renamed_branches
    from stet_lsp.core.sheet_format import written_name

    # As meta.json names it: a byte of a branch's name that is not UTF-8 written U+FFFD.
    known = {written_name(branch) for branch in [*repo.branches.local, *renamed_branches(repo)]}
    return written_name(name) not in known


def detached_left(repo: pygit2.Repository, root: Path, name: str) -> bool:
    """Whether HEAD left the detached HEAD at commit `name` (its short id): HEAD is on a branch
    now, or detached at another commit that does not carry that one's work on
    (`core/lineage.py`). Its working trajectory is then no current target's, as a deleted
    branch's is not; checking the commit out again makes it current again."""
    from stet_lsp.core.renames import former_targets

    if not repo.head_is_detached:
        return True
    head = Target(root, "detached", repo[repo.head.target].short_id)
    return name != head.name and name not in {t.name for t in former_targets(repo, head)}


def orphaned(repo: pygit2.Repository, root: Path, kind: str, name: str) -> bool:
    """Whether the working trajectory of the target (`kind`, `name`) is one no current target
    takes: its branch deleted, or its detached HEAD left. `stet capstone --target NAME`
    commits it on HEAD."""
    if kind == "branch":
        return branch_gone(repo, name)
    return kind == "detached" and detached_left(repo, root, name)


def orphaned_targets(root: Path) -> list[Target]:
    """The deleted branches and left detached HEADs whose working trajectory is left, as
    their meta.json names them."""
    from stet_lsp.core.targets import open_repository
    from stet_lsp.trajectory.store import folders

    found: list[Target] = []
    repo = None
    for folder in folders(root):
        try:
            meta = folder.read_meta() if folder.working else None
        except (StetError, RecursionError):  # listed as a problem by trajectory list
            continue
        if meta is not None and meta.target.kind in ("branch", "detached"):
            kind: TargetKind = "branch" if meta.target.kind == "branch" else "detached"
            repo = repo if repo is not None else open_repository(root)
            if orphaned(repo, root, kind, meta.target.name):
                found.append(Target(root, kind, meta.target.name))
    return found


def left_behind(orphan: Target) -> str:
    """What an orphaned target's working trajectory is, for a message."""
    if orphan.kind == "detached":
        return f"the working trajectory of the detached HEAD {orphan.name} is left (HEAD left it)"
    return f"the working trajectory of the deleted branch {orphan.name} is left"


def orphan_named(target: Target) -> Target | None:
    """For an explicit target (`--target NAME`) that has no working trajectory, the branch
    `NAME` when it was deleted with its working trajectory left, or the detached HEAD at
    commit `NAME` when HEAD left it with its working trajectory: the capstone commits that on
    HEAD. None otherwise."""
    from stet_lsp.core.targets import open_repository

    if target.kind != "named" or _is_dir(target.root, working_folder(target).relative):
        return None
    for left in (
        Target(target.root, "branch", target.name),
        Target(target.root, "detached", target.name),
    ):
        if _is_dir(left.root, working_folder(left).relative) and orphaned(
            open_repository(left.root), left.root, left.kind, left.name
        ):
            return left
    return None


def _others_there(target: Target) -> bool:
    """Whether the target has no working folder while some other target has one (without
    that, there is nothing to move and the repository is not opened)."""
    try:
        base = inside(target.root, WORKING)
        if os.path.lexists(base / target.key):
            return False
        return any(
            entry.is_dir(follow_symlinks=False) and not entry.name.startswith(".")
            for entry in os.scandir(base)  # .archive: the capstone's
        )
    except (OSError, StetError):
        return False


def _move(
    source: Target, destination: Target, gate_config: GateConfig | None, timeout: float
) -> Folder | None:
    from stet_lsp.trajectory.feedback import feedback_held, move_feedback
    from stet_lsp.trajectory.importing import compose
    from stet_lsp.trajectory.store import SESSIONS, mark_composing

    root = destination.root
    old, new = working_folder(source), working_folder(destination)
    # The verdicts' locks are held until the folder has moved (a step marked in the old
    # folder meanwhile would be written where nothing reads it again), not while composing.
    # The old folder is settled as its lock is taken (`working_held`): a session an import
    # killed midway kept aside is back before it is composed under the new name.
    with ExitStack() as folders, ExitStack() as verdicts:
        try:
            # A folder the repository commits stays, and gets no lock file beside it.
            if not _is_dir(root, old.relative) or tracked_file(old) is not None:
                return None
            waits = [(folders, working_held(folder, timeout)) for folder in (old, new)] + [
                (verdicts, feedback_held(root, folder.id, timeout)) for folder in (old, new)
            ]
            taken = all(stack.enter_context(wait) for stack, wait in waits)  # to the first miss
        except (OSError, StetError):
            return None
        if not taken:
            if timeout:
                taker = _taker(source, destination)
                raise StetError(
                    f"the working trajectory of {source.label}, which {taker} takes over, is "
                    "locked by another process; try again"
                )
            return None
        try:
            if not _is_dir(root, old.relative) or os.path.lexists(new.path) or tracked_file(old):
                return None
            move_feedback(root, old.id, new.id)
            # Marked as not composed: if composing below fails, the next import, graduation
            # or capstone composes it (its meta.json names the former branch until then).
            if _is_dir(root, old.relative / SESSIONS):
                mark_composing(old)
            os.rename(inside(root, old.relative), inside(root, new.relative))
        except (OSError, StetError) as error:
            if timeout:  # a writer would make a new folder beside it: the old one stranded
                raise StetError(
                    f"the working trajectory of {source.label} could not move to "
                    f"{_taker(source, destination)}: {error}"
                ) from None
            return None
        verdicts.close()
        remove_held(lock_of(old), root)
        with contextlib.suppress(StetError):
            compose(destination, new, gate_config)
    return new


def _taker(source: Target, destination: Target) -> str:
    if destination.kind == "branch" and source.kind == "detached":
        return f"the branch {destination.label}, made from it,"
    if destination.kind == "branch":
        return f"the renamed branch {destination.label}"
    return destination.label


def _is_dir(root: Path, relative: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(inside(root, relative)).st_mode)
    except (OSError, StetError):
        return False
