"""The target of a hook's working folder, as `resolve_target` gives it, without loading
libgit2 when it can: a SessionStart hook runs at the start of every agent session, and
opening the repository with pygit2 would be most of its time.

The files are read only in the plain case: a `.git` folder (or a `.git` file naming one, as
a linked worktree has) owned by this user, on the same file system as the folder asked
about, whose configuration sets no `core.worktree`, no `bare = true` and no per-worktree
configuration, and whose HEAD names a branch (`ref: refs/heads/NAME`, which is the same
target whether or not the branch has a commit yet). Everything else (a detached HEAD, a
branch ref that is itself symbolic, anything unusual) goes to `resolve_target`."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from stet_lsp.core.targets import Target

_READ_LIMIT = 64 * 1024
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_BRANCH = "ref: refs/heads/"
_UNUSUAL_CONFIG = re.compile(
    r"^\s*(worktree\s*=|bare\s*=\s*true\b|worktreeconfig\s*=\s*true\b)", re.IGNORECASE | re.M
)
_GITDIR = re.compile(r"gitdir:[ \t]*(.+?)[ \t]*\r?\n?\Z")


def find_target(path: Path | str) -> Target:
    """The target for a folder inside a repository (StetError when it is in none)."""
    fast = branch_target(Path(path))
    if fast is not None:
        return fast
    from stet_lsp.core.targets import resolve_target

    return resolve_target(path)


def branch_target(path: Path) -> Target | None:
    """The branch target read from the git folder's files, None when this is not the plain
    case (see the module's docstring)."""
    try:
        start = path.resolve(strict=True)
        device = os.stat(start).st_dev
    except (OSError, RuntimeError):
        return None
    if ".git" in start.parts:
        return None
    for folder in (start, *start.parents):
        try:
            if os.lstat(folder).st_dev != device:
                return None  # libgit2 does not look across file systems either
            status = os.lstat(folder / ".git")
        except FileNotFoundError:
            continue
        except OSError:
            return None
        return _target(folder, status)
    return None


def _target(folder: Path, status: os.stat_result) -> Target | None:
    if stat.S_ISDIR(status.st_mode):
        gitdir = folder / ".git"
    elif stat.S_ISREG(status.st_mode):
        found = _GITDIR.match(_read(folder / ".git") or "")
        if found is None:
            return None
        gitdir = (folder / found.group(1)).resolve()
    else:
        return None
    common = _read(gitdir / "commondir")
    commondir = (gitdir / common.strip()).resolve() if common else gitdir
    try:
        if hasattr(os, "geteuid") and os.stat(gitdir).st_uid != os.geteuid():
            return None  # libgit2's ownership check (safe.directory) decides
    except OSError:
        return None
    config = _read(commondir / "config")
    if config is None or _UNUSUAL_CONFIG.search(config) or (gitdir / "config.worktree").exists():
        return None
    head = _read(gitdir / "HEAD")
    if head is None or not head.startswith(_BRANCH):
        return None
    name = head[len(_BRANCH) :].strip()
    if not name or "\n" in name:
        return None
    loose = _read(commondir / "refs" / "heads" / name)
    if loose is not None and loose.startswith("ref:"):
        return None  # the branch is itself a symbolic ref: libgit2 follows it
    return Target(folder, "branch", name)


def _read(path: Path) -> str | None:
    """The start of a regular file; None for anything else (a FIFO is never opened)."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        descriptor = os.open(path, os.O_RDONLY | _NONBLOCK | _CLOEXEC)
        with os.fdopen(descriptor, "rb") as stream:
            if not stat.S_ISREG(os.fstat(stream.fileno()).st_mode):
                return None
            return stream.read(_READ_LIMIT).decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
