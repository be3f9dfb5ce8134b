"""One repository as a long-lived front end sees it: the target follows HEAD, and the style
sheet is re-read only when the file changes on disk."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from stet_lsp.core.errors import StetError
from stet_lsp.core.sheet import StyleSheet
from stet_lsp.core.sheet_format import SheetDocument
from stet_lsp.core.targets import Target, current_target, open_repository


@dataclass(frozen=True)
class Snapshot:
    target: Target
    document: SheetDocument
    stamp: tuple[int, int] | None
    """(mtime_ns, size) of the sheet it was read from; None: no sheet yet."""
    error: str | None = None
    """Why the sheet could not be read (it is then shown as empty)."""


class RepositorySession:
    def __init__(self, root: Path) -> None:
        self.repo = open_repository(root)
        self.root = Path(self.repo.workdir).resolve()
        self._snapshot: Snapshot | None = None
        self.seen = self.fingerprint()
        """The fingerprint a watcher last acted on."""

    def target(self) -> Target:
        return current_target(self.repo)

    def sheet(self) -> StyleSheet:
        return StyleSheet(self.target())

    def fingerprint(self) -> tuple[object, ...]:
        """Changes whenever what the editor shows could: HEAD moved, or the sheet changed."""
        target = self.target()
        return (target.kind, target.name, _stamp(target.sheet_path))

    def snapshot(self) -> Snapshot:
        target = self.target()
        stamp = _stamp(target.sheet_path)
        cached = self._snapshot
        if cached is not None and cached.target == target and cached.stamp == stamp:
            return cached
        error = None
        try:
            document = StyleSheet(target).read()
        except StetError as problem:
            document, error = SheetDocument.parse(""), str(problem)
        self._snapshot = Snapshot(target, document, stamp, error)
        return self._snapshot


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        status = os.stat(path)
    except OSError:
        return None
    return status.st_mtime_ns, status.st_size
