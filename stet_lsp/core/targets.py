"""Resolve the target (repository + branch, or an explicit name) and its safe sheet key."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    import pygit2

from stet_lsp.core.errors import StetError

TargetKind = Literal["branch", "detached", "named"]

STET_DIR = ".stet"
SHEETS_DIR = Path(STET_DIR) / "cache" / "sheets"
_SLUG_LENGTH = 48
_UNSAFE = re.compile(r"[^a-z0-9._-]+")


@dataclass(frozen=True)
class Target:
    """One unit of work. `kind` + `name` identify it; `root` is the repository's work tree."""

    root: Path
    kind: TargetKind
    name: str

    @property
    def key(self) -> str:
        """A file name that is safe for any name and distinct for distinct targets.

        The readable slug is lossy (lowercased, unsafe characters folded) so the key also
        carries a hash of the exact kind and name: two names that differ only in case or in
        folded characters still get different keys, also on case-insensitive file systems.
        """
        return target_key(self.kind, self.name)

    @property
    def sheet_path(self) -> Path:
        return self.root / SHEETS_DIR / f"{self.key}.md"

    @property
    def label(self) -> str:
        return self.name if self.kind != "detached" else f"detached HEAD {self.name}"


def target_key(kind: str, name: str) -> str:
    digest = hashlib.sha256(f"{kind}\0{name}".encode("utf-8", "surrogatepass")).hexdigest()[:24]
    folded = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode().lower()
    slug = _UNSAFE.sub("-", folded).strip(".-_")[:_SLUG_LENGTH].rstrip(".-_")
    return f"{kind}--{slug}--{digest}" if slug else f"{kind}--{digest}"


def open_repository(path: Path | str) -> pygit2.Repository:
    import pygit2  # a front end that never opens a repository never loads libgit2

    start = Path(path).resolve()
    found = pygit2.discover_repository(str(start))
    if found is None:
        raise StetError(f"not inside a git repository: {start}")
    repo = pygit2.Repository(found)
    if repo.is_bare or repo.workdir is None:
        raise StetError(f"the repository at {found} has no work tree")
    return repo


def repository_root(repo: pygit2.Repository) -> Path:
    return Path(repo.workdir).resolve()


def current_target(repo: pygit2.Repository) -> Target:
    root = repository_root(repo)
    if repo.head_is_unborn:
        # Same kind and name as after the first commit, so the sheet carries over.
        head = repo.references.get("HEAD")
        ref = str(head.target) if head is not None else "refs/heads/main"
        return Target(root, "branch", ref.removeprefix("refs/heads/"))
    if repo.head_is_detached:
        return Target(root, "detached", repo[repo.head.target].short_id)
    return Target(root, "branch", repo.head.shorthand)


def resolve_target(path: Path | str = ".", explicit: str | None = None) -> Target:
    """The target for a path inside a repository; `explicit` names one (a PR, say) instead."""
    repo = open_repository(path)
    if explicit is None:
        return current_target(repo)
    if not explicit or not explicit.strip():
        raise StetError("a target name cannot be empty")
    if len(explicit) > 1024:
        raise StetError("a target name is limited to 1024 characters")
    return Target(repository_root(repo), "named", explicit)
