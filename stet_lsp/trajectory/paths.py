"""Paths a trajectory recorded, as paths of the repository it is read in."""

from __future__ import annotations

import posixpath


def repository_path(path: str, cwd: str | None) -> str | None:
    """A change's path as a path in the repository, or None when it names a file outside.
    A relative path is one already (as the import wrote it); an absolute or `~/` path is one
    when it lies under the session's recorded working folder."""
    if not path or "\0" in path:
        return None
    if is_absolute(path):
        if not cwd or not is_absolute(cwd):
            return None
        folder = posixpath.normpath(cwd)
        if not path.startswith(folder.rstrip("/") + "/"):
            return None
        path = path[len(folder.rstrip("/")) + 1 :]
    normal = posixpath.normpath(path)
    if normal in (".", "..") or normal.startswith("../") or is_absolute(normal):
        return None
    return normal


def is_absolute(path: str) -> bool:
    """Absolute on POSIX, or under the home directory as the import writes it (`~/…`)."""
    return path.startswith("/") or path == "~" or path.startswith("~/")
