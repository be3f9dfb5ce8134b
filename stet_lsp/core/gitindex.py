"""Whether git's index holds a path, read from the index file itself when that is plain, so
a short command (the SessionStart hook, `stet brief`) does not load libgit2 to ask: importing
pygit2 takes about 70 ms, and the SessionStart hook's whole budget over starting Python is
about 40 ms.

The plain case: the work tree has a `.git` folder, or a `.git` file naming one (a linked
worktree), and its `index` is version 2 or 3 (git's default). The index keeps each entry's
full path, preceded by its flags (whose low 12 bits are the path's length) and followed by a
NUL, so the path is looked for in the file's bytes (memory-mapped, never read whole) and each
place it occurs is checked to be an entry's path. A path found only inside a longer one (say
`vendor/.stet/…`) fails that check. Everything else (a version 4 index, whose paths are
prefix-compressed; no `.git` to read) asks libgit2.

The check errs toward "held": an index split in two (`core.splitIndex`, which libgit2 does
not read) has its shared part in the `sharedindex.<hash>` its `link` extension names, and a
path in either counts, even one the split part marks as removed; a sparse index holding the
path's folder as one entry (`.stet/` outside the sparse checkout) counts too."""

from __future__ import annotations

import mmap
import os
import re
from collections.abc import Callable
from functools import partial
from pathlib import Path

_GITDIR = re.compile(rb"gitdir:[ \t]*(.+?)[ \t]*\r?\n?\Z")
_HEADER = 12
_FIXED = 62
"""An entry's bytes before its path (times, ids, mode, size, object id, flags)."""
_SHARED = "sharedindex."
_EXTENDED = 0x4000
_LENGTH = 0x0FFF


def index_holds(root: Path, relative: str) -> bool:
    """Whether the index of the repository whose work tree is `root` holds `relative` (a
    POSIX path from the root). No index, or one that cannot be read: False."""
    gitdir = _git_dir(root)
    if gitdir is not None:
        held = _index_file_holds(gitdir, relative)
        if held is not None:
            return held
    return _libgit2_holds(root, relative)


def _git_dir(root: Path) -> Path | None:
    dot_git = root / ".git"
    try:
        if dot_git.is_dir():
            return dot_git
        if dot_git.is_file():
            with open(dot_git, "rb") as stream:
                found = _GITDIR.match(stream.read(4096))
            if found is not None:
                return (root / os.fsdecode(found.group(1))).resolve()
    except OSError:
        pass
    return None


def _index_file_holds(gitdir: Path, relative: str) -> bool | None:
    """None when the index is not one this reader reads (libgit2 is asked then)."""
    names = _names(relative)
    held = _file_holds(gitdir / "index", lambda data: _holds(data, names))
    if held is None or held:
        return held
    try:
        shared = [name for name in os.listdir(gitdir) if name.startswith(_SHARED)]
    except OSError:
        shared = []
    # Only the shared part the index links to: earlier ones stay behind for a while.
    for name in shared:
        try:
            linked = bytes.fromhex(name[len(_SHARED) :])
        except ValueError:
            continue
        links = _file_holds(gitdir / "index", partial(_links, shared=linked))
        if links and _file_holds(gitdir / name, lambda data: _holds(data, names)):
            return True
    return False


def _file_holds(path: Path, test: Callable[[mmap.mmap], bool]) -> bool | None:
    try:
        with open(path, "rb") as stream:
            size = os.fstat(stream.fileno()).st_size
            if size < _HEADER:
                return False if size == 0 else None
            with mmap.mmap(stream.fileno(), 0, access=mmap.ACCESS_READ) as data:
                if data[:4] != b"DIRC":
                    return None
                version = int.from_bytes(data[4:8], "big")
                if version not in (2, 3):
                    return None
                return test(data)
    except FileNotFoundError:
        return False
    except (OSError, ValueError):
        return None


def _links(data: mmap.mmap, shared: bytes) -> bool:
    """Whether the index's `link` extension names the shared index `shared`."""
    start = data.find(shared, _HEADER)
    while start != -1:
        if data[start - 8 : start - 4] == b"link":
            return True
        start = data.find(shared, start + 1)
    return False


def _holds(data: mmap.mmap, names: list[bytes]) -> bool:
    """The path itself, or (only in a sparse index: its `sdir` extension, whose size is 0, is
    there) a folder above it. A path ending in `sdir` can make the folders be looked for in a
    full index too: that costs a search, never a wrong answer."""
    path, *folders = names
    if _entry_path(data, path):
        return True
    return data.find(b"sdir\0\0\0\0", _HEADER) != -1 and any(
        _entry_path(data, name) for name in folders
    )


def _names(relative: str) -> list[bytes]:
    """The path and each folder above it as a sparse index writes one (`a/b/`)."""
    parts = relative.split("/")
    folders = ["/".join(parts[:end]) + "/" for end in range(1, len(parts))]
    return [os.fsencode(name) for name in (relative, *folders)]


def _entry_path(data: mmap.mmap, name: bytes) -> bool:
    """Whether `name` is some entry's whole path: NUL after it, its length in the flags
    before it (two bytes before; four when the entry has extended flags)."""
    length = min(len(name), _LENGTH)
    needle = name + b"\0"
    start = data.find(needle, _HEADER + _FIXED)
    while start != -1:
        flags = int.from_bytes(data[start - 2 : start], "big")
        if flags & _LENGTH == length and not flags & _EXTENDED:
            return True
        wider = int.from_bytes(data[start - 4 : start - 2], "big")
        if wider & _LENGTH == length and wider & _EXTENDED:
            return True
        start = data.find(needle, start + 1)
    return False


def _libgit2_holds(root: Path, relative: str) -> bool:
    import pygit2

    from stet_lsp.core.errors import StetError
    from stet_lsp.core.targets import open_repository

    try:
        index = open_repository(root).index
        index.read(False)
        return relative in index
    except (StetError, pygit2.GitError, OSError, ValueError):  # no repository or index
        return False
