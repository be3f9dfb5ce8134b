"""Whether git's index holds a path, as libgit2 says; a short command (the SessionStart hook,
`stet brief`) asks it only when the index file mentions the path at all.

Importing pygit2 takes about 70 ms, and the SessionStart hook's whole budget over starting
Python is about 40 ms, while the answer is almost always "no". A version 2 or 3 index (git's
default) writes every entry's whole path followed by a NUL: when those bytes are nowhere in
the file (memory-mapped, never read whole), no entry is the path, and libgit2 is not loaded.
Anything else asks libgit2: the bytes found (a path that merely ends with them too, or holds
them, for a folder's entries), a version 4 index (whose paths are prefix-compressed), a split
or sparse index (whose entries live elsewhere or as folders), a `.git` that cannot be read.
libgit2 reads neither the shared part of a split index nor a sparse index's folders: a path
held only there is not seen.

Whether a sparse checkout leaves a path out (`outside_sparse_checkout`) is read from the
index file's entries themselves: pygit2 shows no entry's flags.

Stet's writes of the index (staging a skill, the capstone's files) go through `update_index`,
which waits a moment for git's own lock."""

from __future__ import annotations

import contextlib
import mmap
import os
import re
import shutil
import stat
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

if TYPE_CHECKING:
    import pygit2

_GITDIR = re.compile(rb"gitdir:[ \t]*(.+?)[ \t]*\r?\n?\Z")
_HEADER = 12
# A sparse index's extension saying some entries are folders (its size is always 0).
_SPARSE = b"sdir\0\0\0\0"
_SHARED = "sharedindex."


def index_holds(root: Path, relative: str) -> bool:
    """Whether the index of the repository whose work tree is `root` holds `relative` (a
    POSIX path from the root). No index, or one that cannot be read: False."""
    return index_tracks(root, relative) is True


def index_tracks(root: Path, relative: str) -> bool | None:
    """As `index_holds`, but None when libgit2, asked, cannot read the index (or finds no
    repository): for callers that must not take that for "not tracked". An index file that
    does not mention the path at all is "not tracked" without asking, torn or not."""
    gitdir = _git_dir(root)
    if gitdir is None or _split(gitdir) or _may_hold(gitdir / "index", os.fsencode(relative)):
        return _libgit2_holds(root, relative)
    return False


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


def _split(gitdir: Path) -> bool:
    """Whether the index may be split: a shared part of it (`sharedindex.<hash>`) is there."""
    try:
        return any(name.startswith(_SHARED) for name in os.listdir(gitdir))
    except OSError:
        return True


def index_holds_under(root: Path, relative: str) -> bool | None:
    """Whether git's index holds `relative` or a path under it (a folder's entries, or a link
    in its place); None when libgit2, asked, cannot read the index. An index file whose bytes
    nowhere hold `relative` holds none without asking."""
    gitdir = _git_dir(root)
    if (
        gitdir is not None
        and not _split(gitdir)
        and not _may_hold(gitdir / "index", os.fsencode(relative), end=b"")
    ):
        return False
    return _libgit2_holds_under(root, relative)


def _may_hold(index: Path, path: bytes, end: bytes = b"\0") -> bool:
    """False only when `index` is a version 2 or 3 index, not sparse, and no entry's path is
    `path` (its bytes and `end`, a NUL, are nowhere in it); also False when there is no
    index."""
    try:
        with open(index, "rb") as stream:
            if os.fstat(stream.fileno()).st_size < _HEADER:
                return True
            with mmap.mmap(stream.fileno(), 0, access=mmap.ACCESS_READ) as data:
                if data[:4] != b"DIRC" or int.from_bytes(data[4:8], "big") not in (2, 3):
                    return True
                if data.find(_SPARSE, _HEADER) != -1:
                    return True
                return data.find(path + end, _HEADER) != -1
    except FileNotFoundError:
        return False
    except (OSError, ValueError):
        return True


def _libgit2_holds_under(root: Path, relative: str) -> bool | None:
    import pygit2

    from stet_lsp.core.errors import StetError
    from stet_lsp.core.targets import open_repository

    folder = relative + "/"
    try:
        index = open_repository(root).index
        index.read(False)
        return any(entry.path == relative or entry.path.startswith(folder) for entry in index)
    except (StetError, pygit2.GitError, OSError, ValueError):  # no repository, a torn index
        return None


def _libgit2_holds(root: Path, relative: str) -> bool | None:
    import pygit2

    from stet_lsp.core.errors import StetError
    from stet_lsp.core.targets import open_repository

    try:
        index = open_repository(root).index
        index.read(False)
        return relative in index
    except (StetError, pygit2.GitError, OSError, ValueError):  # no repository, a torn index
        return None


_SKIP_WORKTREE = 0x4000
"""An entry's extended flag (index version 3 and up): the path is left out of the work tree,
as a sparse checkout leaves out what it does not include."""
_EXTENDED = 0x4000
"""An entry's flag saying that the extended flags follow."""
_ENTRY_FIXED = 62
"""An entry's bytes before its path: stat data (40), a SHA-1 object id (20), flags (2)."""


def outside_sparse_checkout(root: Path, relative: str) -> bool:
    """Whether git's index marks `relative` (a POSIX path from the root) skip-worktree, as a
    sparse checkout marks the files it leaves out, or, in a sparse index, a folder holding it:
    such a file is missing from the work tree without being deleted. Read from the index
    file itself, since pygit2 shows no entry's flags and libgit2 reads no sparse index. No
    index, one that cannot be read or a split one (whose entries live in another file):
    False."""
    gitdir = _git_dir(root)
    if gitdir is None or _split(gitdir):
        return False
    index = gitdir / "index"
    wanted = os.fsencode(relative)
    if not _may_hold(index, wanted):
        return False
    try:
        with (
            open(index, "rb") as stream,
            mmap.mmap(stream.fileno(), 0, access=mmap.ACCESS_READ) as data,
        ):
            for path, extended in _entries(data):
                if path == wanted or (path.endswith(b"/") and wanted.startswith(path)):
                    return bool(extended & _SKIP_WORKTREE)
    except (OSError, ValueError, IndexError):
        pass
    return False


def _entries(data: mmap.mmap) -> Iterator[tuple[bytes, int]]:
    """Each entry's path and extended flags, in a version 2, 3 or 4 index (a sparse index's
    folders end with `/`). ValueError when the data is no such index."""
    if data[:4] != b"DIRC":
        raise ValueError("not an index")
    version = int.from_bytes(data[4:8], "big")
    if version not in (2, 3, 4):
        raise ValueError(f"index version {version}")
    at, path = _HEADER, b""
    for _ in range(int.from_bytes(data[8:12], "big")):
        start = at
        flags = int.from_bytes(data[at + _ENTRY_FIXED - 2 : at + _ENTRY_FIXED], "big")
        at += _ENTRY_FIXED
        extended = 0
        if version >= 3 and flags & _EXTENDED:
            extended = int.from_bytes(data[at : at + 2], "big")
            at += 2
        if version == 4:  # the path: how much of the previous one to drop, then the rest
            dropped, at = _offset(data, at)
            end = data.find(b"\0", at)
            if end < 0 or dropped > len(path):
                raise ValueError("a torn index")
            path = path[: len(path) - dropped] + data[at:end]
            at = end + 1
        else:  # the path, then NULs to the next multiple of 8 bytes from the entry's start
            end = data.find(b"\0", at)
            if end < 0:
                raise ValueError("a torn index")
            path = data[at:end]
            at = start + ((end - start + 8) & ~7)
        yield path, extended


def _offset(data: mmap.mmap, at: int) -> tuple[int, int]:
    """git's variable-length integer at `at` (a version 4 index's path prefix), and where
    the bytes after it start."""
    byte = data[at]
    value = byte & 0x7F
    while byte & 0x80:
        at += 1
        byte = data[at]
        value = ((value + 1) << 7) | (byte & 0x7F)
    return value, at + 1


INDEX_BUSY_SECONDS = 2.0
"""How long a write of the index waits for git's own `index.lock` to go (an editor's git
extension runs `git status`, which holds it for a moment, every few seconds)."""


INDEX_ATTEMPTS = 20
"""How many times a write of the index starts again when another process changed the index
between Stet's read of it and its write."""
_COPY = "index.stet-"


def update_index(repository: pygit2.Repository, change: Callable[[pygit2.Index], None]) -> None:
    """Read the index, `change` it and write it back, losing nothing another process staged
    meanwhile: libgit2 takes git's `index.lock` only to write, after a read made without it,
    so Stet changes a copy of the index and, holding the lock, puts it in the index's place
    only if the index is still the file it copied (git replaces the index whole on every
    write), else starts again. The lock is held for that check and a rename alone, so a
    process stopped meanwhile seldom leaves it behind. While another process holds it, waits
    up to INDEX_BUSY_SECONDS. `change` may run more than once; it adds and removes entries
    (blobs already written) and does not read the work tree. pygit2.GitError when the index
    cannot be written."""
    import pygit2

    folder = Path(repository.path)
    index_file = folder / "index"
    copy = folder / f"{_COPY}{os.getpid()}-{threading.get_ident()}"
    try:
        _remove_abandoned_copies(folder)
        for _ in range(INDEX_ATTEMPTS):
            # An index libgit2 cannot read (a split one) is refused here: pygit2.Index failing
            # on the copy would leave a half-made object that complains when collected.
            repository.index.read(True)
            copied = _copy_index(index_file, copy)
            index = pygit2.Index(str(copy))
            change(index)
            index.write()
            with _index_lock(folder):
                if _identity(index_file) == copied:
                    if copied is not None:
                        os.chmod(copy, copied[3])
                    os.replace(copy, index_file)
                    return
        raise pygit2.GitError(f"{index_file} kept changing while Stet wrote it; try again")
    except OSError as error:
        raise pygit2.GitError(f"{error.filename or index_file}: {error.strerror}") from None
    finally:
        with contextlib.suppress(OSError):
            copy.unlink()


_Identity = tuple[int, int, int, int, bytes]
"""An index file's inode, size, modification time, permissions and checksum (its last 32
bytes: a SHA-1's or SHA-256's; an inode is reused and a time may be coarse, the checksum of
different entries never agrees)."""
_CHECKSUM = 32


def _identity(path: Path) -> _Identity | None:
    try:
        with open(path, "rb") as stream:
            return _identity_of(stream)
    except FileNotFoundError:
        return None


def _identity_of(stream: BinaryIO) -> _Identity:
    status = os.fstat(stream.fileno())
    stream.seek(max(0, status.st_size - _CHECKSUM))
    checksum = stream.read(_CHECKSUM)
    mode = stat.S_IMODE(status.st_mode)
    return status.st_ino, status.st_size, status.st_mtime_ns, mode, checksum


def _copy_index(index_file: Path, copy: Path) -> _Identity | None:
    """`index_file` copied to `copy`, and the identity of what was copied (None, and no copy,
    when there is no index yet: libgit2 starts an empty one)."""
    with contextlib.suppress(FileNotFoundError):
        copy.unlink()
    try:
        with open(index_file, "rb") as source, open(copy, "xb") as target:
            shutil.copyfileobj(source, target)
            return _identity_of(source)
    except FileNotFoundError:  # the index, opened first
        return None


@contextlib.contextmanager
def _index_lock(folder: Path) -> Iterator[None]:
    """git's `index.lock`, taken as git takes it, waiting up to INDEX_BUSY_SECONDS."""
    import pygit2

    lock = folder / "index.lock"
    until = time.monotonic() + INDEX_BUSY_SECONDS
    while True:
        try:
            os.close(os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
            break
        except FileExistsError:
            if time.monotonic() >= until:
                raise pygit2.GitError(
                    f"the index is locked: {lock} exists (another git process is using it)"
                ) from None
        time.sleep(0.05)
    try:
        yield
    finally:
        with contextlib.suppress(FileNotFoundError):
            lock.unlink()


ABANDONED_COPY_SECONDS = 3600.0
"""How old a copy of the index is before a write removes it when the process that made it
seems gone: a process in another PID namespace (a container sharing the repository) or on
another host seems gone while it writes, and its copy must stay until it is done."""


def _remove_abandoned_copies(folder: Path) -> None:
    """Copies of the index that a process stopped while writing left behind."""
    for name in os.listdir(folder):
        if not name.startswith(_COPY):
            continue
        path = folder / name
        pid = name[len(_COPY) :].split("-", 1)[0]
        with contextlib.suppress(FileNotFoundError):
            if time.time() - path.stat().st_mtime < ABANDONED_COPY_SECONDS:
                continue
            if not (pid.isdigit() and _running(int(pid))):
                path.unlink()


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (OverflowError, ValueError):  # no process's number
        return False
    except OSError:  # another user's process
        return True
    return True


def index_lock_left(repository: pygit2.Repository) -> Path | None:
    """git's `index.lock` when another process still holds it after INDEX_BUSY_SECONDS (None
    once it is gone): for a writer that must not go ahead without the index."""
    lock = Path(repository.path) / "index.lock"
    until = time.monotonic() + INDEX_BUSY_SECONDS
    while lock.exists():
        if time.monotonic() >= until:
            return lock
        time.sleep(0.05)
    return None


_EXTENSIONS = {
    "link": "a split index: `git update-index --no-split-index` writes it whole",
    "sdir": "a sparse index: `git sparse-checkout disable`, or "
    "`git config index.sparse false` and `git sparse-checkout reapply`, writes it whole",
}


def index_error(error: Exception, repository: pygit2.Repository | None = None) -> str:
    """What libgit2 said of an index it cannot read or write, with what to do when git wrote
    it in a form libgit2 does not read (`unsupported mandatory extension: 'link'`), or (given
    the repository) when git's `index.lock` is in the way."""
    said = str(error)
    if repository is not None and ("index.lock" in said or "index is locked" in said):
        lock = os.path.join(repository.path, "index.lock")
        return (
            f"{said} ({lock}): try again once the git process using the index is done, or "
            "remove that file if none is running"
        )
    for extension, remedy in _EXTENSIONS.items():
        if f"extension: '{extension}'" in said:
            return f"{said}; git wrote {remedy}"
    return said


# What git leaves in the git folder while an operation is under way, beside what
# repository.state() reports (it misses a sequencer left by `git cherry-pick A..B`).
_IN_PROGRESS_FILES = {
    "MERGE_HEAD": "a merge",
    "CHERRY_PICK_HEAD": "a cherry-pick",
    "REVERT_HEAD": "a revert",
    "BISECT_LOG": "a bisect",
    "rebase-merge": "a rebase",
    "rebase-apply": "a rebase or `git am`",
    "sequencer": "a cherry-pick or revert sequence",
}
_STATE_NAMES = {
    "MERGE": "a merge",
    "REVERT": "a revert",
    "REVERT_SEQUENCE": "a revert",
    "CHERRYPICK": "a cherry-pick",
    "CHERRYPICK_SEQUENCE": "a cherry-pick",
    "BISECT": "a bisect",
    "REBASE": "a rebase",
    "REBASE_INTERACTIVE": "a rebase",
    "REBASE_MERGE": "a rebase",
    "APPLY_MAILBOX": "`git am`",
    "APPLY_MAILBOX_OR_REBASE": "a rebase or `git am`",
}


def operation_in_progress(repository: pygit2.Repository) -> str | None:
    """The operation git is in the middle of (a merge, rebase, cherry-pick, revert, `git am`
    or bisect), named for a message, or None: git's own state first, then its files."""
    import pygit2

    state = pygit2.enums.RepositoryState(repository.state())
    what = _STATE_NAMES.get(state.name) if state != pygit2.enums.RepositoryState.NONE else None
    if what is None:
        git_dir = Path(repository.path)
        what = next(
            (w for name, w in _IN_PROGRESS_FILES.items() if (git_dir / name).exists()), None
        )
    return what
