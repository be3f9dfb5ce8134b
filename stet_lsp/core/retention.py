"""Retention: remove style sheets whose branch is gone or that nobody touched for a while; the
sheet of a renamed branch moves to its new name instead (`core/renames.py`)."""

from __future__ import annotations

import math
import os
import stat
import time
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pygit2

from stet_lsp.core.errors import StetError
from stet_lsp.core.gitindex import index_tracks
from stet_lsp.core.locking import held, remove_held
from stet_lsp.core.renames import Move, move_sheet, renamed_branches
from stet_lsp.core.safefs import (
    inside,
    is_temporary,
    read_regular,
    remove_regular,
    unchanged_since,
)
from stet_lsp.core.sheet_format import header_of
from stet_lsp.core.targets import SHEETS_DIR, Target, target_key

DEFAULT_TTL_DAYS = 30
_HEADER_BYTES = 4096


@dataclass(frozen=True)
class Removal:
    path: Path
    target: str
    reason: str

    def to_dict(self) -> dict[str, str]:
        return {"path": str(self.path), "target": self.target, "reason": self.reason}


@dataclass(frozen=True)
class Collected:
    removed: list[Removal]
    moved: list[Move]


def collect_garbage(
    repo: pygit2.Repository,
    current: Target,
    *,
    ttl_days: float = DEFAULT_TTL_DAYS,
    dry_run: bool = False,
    now: float | None = None,
) -> Collected:
    """Remove (or with `dry_run` only list) stale sheets; never the current target's. The
    sheet of a branch renamed since moves to the new name when that has none (else it stays
    until it is untouched for `ttl_days`).

    Only regular files in the real sheets folder are candidates, and a sheet only when its
    header names a target whose key is its file name: anything else there is left alone."""
    if not (math.isfinite(ttl_days) and ttl_days >= 0):
        # NaN compared as never expiring; infinity is no number of days either.
        raise StetError(f"ttl must be a finite number of days (0 or more), not {ttl_days:g}")
    root = current.root
    folder = inside(root, SHEETS_DIR)
    try:
        with os.scandir(folder) as found:
            listing = sorted(found, key=lambda item: item.name)
    except (FileNotFoundError, NotADirectoryError):
        return Collected([], [])
    except OSError as error:
        raise StetError(f"cannot list {folder}: {error.strerror or error}") from None
    branches = set(repo.branches.local)
    cutoff = (time.time() if now is None else now) - ttl_days * 86400
    renamed: dict[str, str] | None = None
    removals: list[Removal] = []
    moves: list[Move] = []
    for item in listing:
        try:
            status = item.stat(follow_symlinks=False)
        except OSError:  # gone since the listing (a writer's temporary file, say)
            continue
        if not stat.S_ISREG(status.st_mode):
            continue
        path = folder / item.name
        if is_temporary(item.name):
            # A writer killed between creating its temporary file and renaming it.
            if status.st_mtime < time.time() - 3600 and not dry_run:
                _remove(path, root)
            continue
        if not item.name.startswith(".") and item.name.endswith(".md.lock"):
            # The lock of a sheet that is gone (removed by hand, or by a version of Stet that
            # left its lock behind); never the current target's, which may be about to write.
            sheet = path.with_name(item.name.removesuffix(".lock"))
            if sheet != current.sheet_path and not os.path.lexists(sheet) and not dry_run:
                _remove_orphan_lock(path, root)
            continue
        if item.name.startswith(".") or not item.name.endswith(".md"):
            continue
        if path == current.sheet_path:
            continue
        owner = _proven_owner(path, root)
        if owner is None:
            continue
        kind, name = owner
        gone = kind == "branch" and name not in branches and name != current.name
        if gone:
            renamed = renamed_branches(repo) if renamed is None else renamed
            if name in renamed:
                source = Target(root, "branch", name)
                destination = Target(root, "branch", renamed[name])
                if not os.path.lexists(destination.sheet_path):
                    move = Move.of(source, destination)
                    if dry_run or move_sheet(source, destination, status) is not None:
                        moves.append(move)
                    continue
                gone = False  # its new name has a sheet of its own: kept for the TTL
        if gone:
            reason = f"branch {name!r} no longer exists"
        elif status.st_mtime < cutoff:
            reason = f"untouched for more than {ttl_days:g} days"
        else:
            continue
        if index_tracks(root, path.relative_to(root).as_posix()) is not False:
            continue  # came with the repository (or cannot be told): removing it is a change
        if dry_run or _remove_unchanged(path, root, status):
            removals.append(Removal(path, name, reason))
    return Collected(removals, moves)


def _remove_unchanged(path: Path, root: Path, judged: os.stat_result) -> bool:
    """Remove the sheet at `path` under its lock, when it is still the file judged stale
    (same inode, size and time): a writer that took the lock in between keeps it, and one
    holding it now is not waited for. Then its lock file goes too, while still held: a
    writer waiting on it takes the lock of the path's new file instead (`locking.held`)."""
    lock = path.with_name(path.name + ".lock")
    try:
        with held(lock, root, 0) as acquired:
            if not acquired:
                return False
            if not unchanged_since(path, judged):
                return False
            _remove(path, root)
            if os.path.lexists(path):
                return False
            remove_held(lock, root)
            return True
    except (OSError, StetError):  # gone, or its lock is not a regular file: not ours
        return False


def _remove_orphan_lock(lock: Path, root: Path) -> None:
    """Remove the lock file of a sheet that does not exist, unless someone holds it (a writer
    about to create the sheet) or the sheet appeared meanwhile."""
    with suppress(OSError, StetError), held(lock, root, 0) as acquired:
        if acquired and not os.path.lexists(lock.with_name(lock.name.removesuffix(".lock"))):
            remove_held(lock, root)


def _proven_owner(path: Path, root: Path) -> tuple[str, str] | None:
    """(kind, name) of the target whose sheet `path` is, or None when that is not certain."""
    try:
        data = read_regular(path, root, limit=_HEADER_BYTES)
        if data is None:
            return None
        head = data.decode("utf-8", errors="replace").rsplit("\n", 1)[0]
        meta = header_of(head).meta
    except Exception:  # a file the parser cannot read is not proven to be a sheet
        return None
    if not meta.target_name or path.name != f"{target_key(meta.target_kind, meta.target_name)}.md":
        return None
    return meta.target_kind, meta.target_name


def _remove(path: Path, root: Path) -> None:
    with suppress(StetError):  # no longer a regular file, or the folder changed: not ours
        remove_regular(path, root)
