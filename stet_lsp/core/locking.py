"""An advisory lock file beside what several processes write (the style sheet, a working
trajectory): created through the boundary first, since filelock itself may follow a link or
open a FIFO."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from stet_lsp.core.errors import StetError
from stet_lsp.core.safefs import ensure_regular, make_dirs

LOCK_TIMEOUT_SECONDS = 15.0


@contextmanager
def file_lock(path: Path, root: Path, what: str) -> Iterator[None]:
    """Hold `<path>.lock` (inside `root`); `what` names the locked thing in the error."""
    from filelock import FileLock, Timeout  # slow to import; only writers need it

    make_dirs(root, path.parent)
    lock_path = ensure_regular(path.with_name(path.name + ".lock"), root)
    lock = FileLock(str(lock_path), timeout=LOCK_TIMEOUT_SECONDS)
    try:
        lock.acquire()
    except Timeout:
        message = f"{what} is locked by another process ({lock.lock_file}); try again"
        raise StetError(message) from None
    except OSError as error:
        raise StetError(f"cannot lock {lock_path}: {error.strerror or error}") from None
    try:
        yield
    finally:
        lock.release()
