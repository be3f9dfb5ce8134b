"""Retention: remove style sheets whose branch is gone or that nobody touched for a while."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import pygit2

from stet_lsp.core.sheet import TEMPORARY_SUFFIX
from stet_lsp.core.sheet_format import SheetDocument
from stet_lsp.core.targets import SHEETS_DIR, Target

DEFAULT_TTL_DAYS = 30
_HEADER_BYTES = 4096


@dataclass(frozen=True)
class Removal:
    path: Path
    target: str
    reason: str

    def to_dict(self) -> dict[str, str]:
        return {"path": str(self.path), "target": self.target, "reason": self.reason}


def collect_garbage(
    repo: pygit2.Repository,
    current: Target,
    *,
    ttl_days: float = DEFAULT_TTL_DAYS,
    dry_run: bool = False,
    now: float | None = None,
) -> list[Removal]:
    """Remove (or with `dry_run` only list) stale sheets; never the current target's."""
    folder = current.root / SHEETS_DIR
    if not folder.is_dir():
        return []
    branches = set(repo.branches.local)
    cutoff = (time.time() if now is None else now) - ttl_days * 86400
    removals = []
    for leftover in folder.glob(f".*{TEMPORARY_SUFFIX}"):
        # A writer killed between creating its temporary file and renaming it.
        if leftover.stat().st_mtime < time.time() - 3600 and not dry_run:
            leftover.unlink(missing_ok=True)
    for path in sorted(folder.glob("*.md")):
        if path == current.sheet_path:
            continue
        kind, name = _owner(path)
        if kind == "branch" and name and name not in branches and name != current.name:
            reason = f"branch {name!r} no longer exists"
        elif path.stat().st_mtime < cutoff:
            reason = f"untouched for more than {ttl_days:g} days"
        else:
            continue
        removals.append(Removal(path, name or path.stem, reason))
        if not dry_run:
            path.unlink(missing_ok=True)
            Path(str(path) + ".lock").unlink(missing_ok=True)
    return removals


def _owner(path: Path) -> tuple[str, str]:
    with path.open("rb") as stream:
        head = stream.read(_HEADER_BYTES).decode("utf-8", errors="replace")
    meta = SheetDocument.parse(head.rsplit("\n", 1)[0]).meta
    return meta.target_kind, meta.target_name
