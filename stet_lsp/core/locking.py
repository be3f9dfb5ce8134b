"""Advisory locks on a lock file beside what several processes write (the style sheet, a
working trajectory, a session's import). The lock file is created and opened through the
boundary (no link followed, no FIFO opened), then the descriptor itself is locked: flock on
POSIX, msvcrt on Windows. A lock is waited for at most its timeout.

Locks are per open file: two threads of one process that each take the lock exclude each
other as two processes do.

A lock file may be removed, but only by its holder (`remove_held`, as retention does with a
removed sheet's lock). Whoever takes a lock therefore checks, once it has it, that the path
still names the file it locked; when not (removed, or removed and created again), it opens
the path again and waits anew, within the same timeout. So a writer that opened the old file
before it was removed never holds a lock beside the one the next writer takes."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from stet_lsp.core.errors import StetError
from stet_lsp.core.safefs import make_dirs, open_lock_file, remove_regular

LOCK_TIMEOUT_SECONDS = 15.0
_POLL_SECONDS = 0.02


@contextmanager
def file_lock(path: Path, root: Path, what: str) -> Iterator[None]:
    """Hold `<path>.lock` (inside `root`); `what` names the locked thing in the error."""
    lock_path = path.with_name(path.name + ".lock")
    with held(lock_path, root, LOCK_TIMEOUT_SECONDS) as acquired:
        if not acquired:
            raise StetError(f"{what} is locked by another process ({lock_path}); try again")
        yield


@contextmanager
def held(lock_path: Path, root: Path, timeout: float) -> Iterator[bool]:
    """Hold the lock file `lock_path` (inside `root`), waiting at most `timeout` seconds (0:
    try once); yields whether it was acquired."""
    deadline = time.monotonic() + timeout
    while True:
        make_dirs(root, lock_path.parent)
        descriptor = open_lock_file(lock_path, root)
        try:
            while not _try_lock(descriptor, lock_path):
                if time.monotonic() >= deadline:
                    yield False
                    return
                time.sleep(_POLL_SECONDS)
            if not _still_named(descriptor, lock_path):
                _unlock(descriptor)  # its holder removed it: the lock is the path's file now
                continue
            try:
                yield True
            finally:
                _unlock(descriptor)
            return
        finally:
            os.close(descriptor)


def remove_held(lock_path: Path, root: Path) -> None:
    """Remove the lock file `lock_path` (inside `root`), which the caller holds (`held`): a
    process waiting on it takes the lock the path names once this one is released."""
    with suppress(StetError):  # no longer a regular file, or the folder changed: not ours
        remove_regular(lock_path, root)


def _still_named(descriptor: int, lock_path: Path) -> bool:
    """Whether `lock_path` still names the file open as `descriptor`."""
    try:
        named = os.lstat(lock_path)
    except FileNotFoundError:
        return False
    opened = os.fstat(descriptor)
    return (named.st_dev, named.st_ino) == (opened.st_dev, opened.st_ino)


if sys.platform == "win32":
    import msvcrt

    def _try_lock(descriptor: int, path: Path) -> bool:
        try:
            msvcrt.locking(descriptor, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True

    def _unlock(descriptor: int) -> None:
        msvcrt.locking(descriptor, msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _try_lock(descriptor: int, path: Path) -> bool:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        except OSError as error:
            raise StetError(f"cannot lock {path}: {error.strerror or error}") from None
        return True

    def _unlock(descriptor: int) -> None:
        fcntl.flock(descriptor, fcntl.LOCK_UN)
