"""One repository as a long-lived front end sees it: the target follows HEAD, and the style
sheet is re-read only when the file changes on disk.

Every method reads the disk or git: a front end with an event loop calls them in a worker
thread. The repository handle is used by one thread at a time."""

from __future__ import annotations

import os
import stat
import threading
from dataclasses import dataclass
from pathlib import Path

from stet_lsp.core.errors import StetError
from stet_lsp.core.gitindex import index_holds
from stet_lsp.core.renames import follow_rename
from stet_lsp.core.sheet import READ_SETTLE_SECONDS, StyleSheet
from stet_lsp.core.sheet_format import SheetDocument
from stet_lsp.core.targets import Target, current_target, open_repository


@dataclass(frozen=True)
class Snapshot:
    target: Target
    document: SheetDocument
    stamp: tuple[int, int, int, int] | None
    """(mtime_ns, ctime_ns, inode, size) of the sheet it was read from; None: no sheet yet.
    The inode changes with every atomic replace, so even a same-size write within one
    tick of the clock is seen."""
    text: str | None
    """The sheet's text as read ("" when there is none; None when it cannot be read)."""
    error: str | None = None
    """Why the sheet could not be read (it is then shown as empty)."""
    tracked: bool = False
    """Whether git's index holds the sheet (a cloned repository that tracks `.stet/cache/`):
    what is written to it would be committed with the next `git commit -a`."""


class RepositorySession:
    def __init__(self, root: Path) -> None:
        self.repo = open_repository(root)
        self.root = Path(self.repo.workdir).resolve()
        self.git_dir = Path(self.repo.path).resolve()
        """Outside `root/.git` for a worktree or a submodule."""
        self._git = threading.Lock()
        self._snapshot: Snapshot | None = None
        self.seen = self.fingerprint()
        """The fingerprint a watcher last acted on."""

    def target(self) -> Target:
        with self._git:
            return current_target(self.repo)

    def sheet(self) -> StyleSheet:
        target = self.target()
        self._follow(target)
        return StyleSheet(target)

    def _follow(self, target: Target) -> None:
        """Looked for at every read of a missing sheet (a name left may be renamed into again,
        from any branch, and HEAD may have been committed on since), at each new target and
        before each write (the sheet a branch finds under a name it took may be the sheet of
        the branch that had the name)."""
        with self._git:
            follow_rename(self.repo, target)

    def fingerprint(self) -> tuple[object, ...]:
        """Changes whenever what the editor shows could: HEAD moved, or the sheet changed."""
        target = self.target()
        return (target.kind, target.name, _stamp(target.sheet_path))

    def load(self) -> Snapshot:
        """The target and its sheet now (the last snapshot when neither changed)."""
        target = self.target()
        stamp = _stamp(target.sheet_path)
        cached = self._snapshot
        if stamp is None or cached is None or cached.target != target:
            self._follow(target)
            stamp = _stamp(target.sheet_path)
        if cached is not None and cached.target == target and cached.stamp == stamp:
            return cached
        sheet = StyleSheet(target)
        try:
            text: str | None = sheet.settled_text(READ_SETTLE_SECONDS)
            document = sheet.parse(text or "")
            error = None
        except StetError as problem:
            text, document, error = None, SheetDocument.parse(""), str(problem)
        tracked = self.tracked(target.sheet_path)
        self._snapshot = Snapshot(target, document, stamp, text, error, tracked)
        return self._snapshot

    def tracked(self, path: Path) -> bool:
        """Whether git's index holds `path`, as the brief's refusal reads it
        (`core/gitindex.py`), so the warning and the refusal agree."""
        try:
            relative = path.relative_to(self.root).as_posix()
        except ValueError:
            return False
        return index_holds(self.root, relative)


def _stamp(path: Path) -> tuple[int, int, int, int] | None:
    """Of the path itself, never what a link points to. Anything but a regular file gets a
    stamp too (its type in place of a size): reading it then fails with a StetError, which
    `load` keeps as the error."""
    try:
        status = os.lstat(path)
    except OSError:
        return None
    size = status.st_size if stat.S_ISREG(status.st_mode) else -stat.S_IFMT(status.st_mode)
    return status.st_mtime_ns, status.st_ctime_ns, status.st_ino, size
