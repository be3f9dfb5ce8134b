"""The boundary: the files Stet reads, writes and deletes.

Under a repository's work tree (`root`), every component of a path is checked with lstat: no
symbolic link, and every folder on the way is a folder. A file is opened only when it is a
regular file, checked before opening (a FIFO or device is never opened) and again on the open
descriptor, and opened with O_NOFOLLOW | O_NONBLOCK so nothing can block or lead elsewhere in
between. New content goes to an exclusively created temporary file with a random name in the
destination's folder and is renamed over the destination.

Without `root`, a path is one a person named on the command line (a gate input or output, a
transcript): a link to a regular file may be read, but only regular files are opened.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress

from stet_lsp.core import renameat
from stet_lsp.core.errors import StetError

TYPE_CHECKING = False  # as typing's, without importing typing (start-up of the command line)
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, BinaryIO

# Paths are checked as strings: a read (a cached re-scan of the gate) never imports pathlib,
# with urllib.parse and ipaddress, a tenth of that command's time. Functions that return a
# Path import it when called.

TEMPORARY_SUFFIX = ".tmp"
"""Temporary files are `.<name>.<random>.tmp` beside their destination."""
_RANDOM_BYTES = 8
"""`<random>`: this many random bytes, in hexadecimal."""


def is_temporary(name: str) -> bool:
    """Whether `name` is shaped as a temporary file's: one a writer killed between creating
    it and renaming it over its destination leaves."""
    return name.startswith(".") and name.endswith(TEMPORARY_SUFFIX)


def is_temporary_of(name: str, destination: str) -> bool:
    """Whether `name` is exactly the name of a temporary file a write of the file named
    `destination` creates beside it (`.<destination>.<16 hexadecimal digits>.tmp`)."""
    prefix = f".{destination}."
    random = name[len(prefix) : len(name) - len(TEMPORARY_SUFFIX)]
    return (
        name.startswith(prefix)
        and name.endswith(TEMPORARY_SUFFIX)
        and len(random) == 2 * _RANDOM_BYTES
        and all(digit in "0123456789abcdef" for digit in random)
    )


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_COMMON = getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
_UNCHANGED = "nothing was changed"


def inside(root: Path | str, path: Path | str) -> Path:
    """`path` (relative to `root`, or absolute below it) as an absolute path, after checking
    that no existing component below `root` is a symbolic link and that all but the last are
    folders. Missing components are fine; `make_dirs` creates them."""
    from pathlib import Path

    return Path(checked_path(root, path))


def checked_path(root: Path | str, path: Path | str) -> str:
    """`inside`, as a string (no pathlib)."""
    root, path = os.fspath(root), os.fspath(path)
    full, parts = _below(root, path)
    current = root
    for number, part in enumerate(parts, start=1):
        current = os.path.join(current, part)
        try:
            status = os.lstat(current)
        except FileNotFoundError:
            break
        except OSError as error:
            raise _os_error(current, error) from None
        if stat.S_ISLNK(status.st_mode):
            raise StetError(
                f"{current} is a symbolic link; Stet does not follow links in the repository "
                f"({_UNCHANGED})"
            )
        if number < len(parts) and not stat.S_ISDIR(status.st_mode):
            raise StetError(f"{current} is {_kind(status.st_mode)}, not a folder ({_UNCHANGED})")
    _check_resolves_inside(root, full)
    return full


def make_dirs(root: Path | str, path: Path | str) -> Path:
    """The folder `path` inside `root`, creating missing folders, never through a link."""
    from pathlib import Path

    full = inside(root, path)
    current = Path(root)
    for part in full.relative_to(current).parts:
        current = current / part
        try:
            os.mkdir(current)
        except FileExistsError:
            pass
        except OSError as error:
            raise _os_error(current, error) from None
        status = os.lstat(current)
        if not stat.S_ISDIR(status.st_mode):
            raise StetError(f"{current} is {_kind(status.st_mode)}, not a folder ({_UNCHANGED})")
    return full


def read_regular(path: Path | str, root: Path | str | None = None, limit: int = -1) -> bytes | None:
    """The content of the regular file at `path` (at most `limit` bytes when it is not -1),
    None when there is no file. With `root`, `path` must be inside it."""
    stream = open_regular(path, root)
    if stream is None:
        return None
    try:
        with stream:
            return stream.read() if limit < 0 else _read_at_most(stream, limit)
    except OSError as error:
        raise _os_error(path, error) from None


_CHUNK = 1 << 16


def _read_at_most(stream: BinaryIO, limit: int) -> bytes:
    """At most `limit` bytes of `stream`, with no buffer of `limit` bytes made for a small file
    (`read(limit)` makes one): the file's size is read first, then what it did not say."""
    want = min(os.fstat(stream.fileno()).st_size, limit) + 1
    chunks: list[bytes] = []
    held = 0
    while held < limit:
        chunk = stream.read(min(want, limit - held))
        if not chunk:
            break
        chunks.append(chunk)
        held += len(chunk)
        want = _CHUNK
    return b"".join(chunks)


RECORD_LIMIT = 1024 * 1024
"""The most bytes a record of Stet's own (an install's, a consent) may hold."""


def read_record_object(path: Path | str, root: Path | str) -> dict[str, Any] | None:
    """The JSON object in the regular file at `path` inside `root`: None when there is no
    file, it cannot be read, it holds more than `RECORD_LIMIT` bytes (no more is read), it is
    no JSON (or nested too deeply to parse), or no object. A record edited by hand, torn, or
    committed with a repository is then no record."""
    from stet_lsp.core.jsonread import object_or_none

    try:
        data = read_regular(path, root, limit=RECORD_LIMIT + 1)
    except StetError:
        return None
    if data is None or len(data) > RECORD_LIMIT:
        return None
    return object_or_none(data)


def open_regular(path: Path | str, root: Path | str | None = None) -> BinaryIO | None:
    """The regular file at `path` open for reading, None when there is no file. With `root`,
    `path` must be inside it."""
    name = os.fspath(path) if root is None else checked_path(root, path)
    try:
        descriptor = _open_regular(name, os.O_RDONLY, follow=root is None)
    except FileNotFoundError:
        return None
    return os.fdopen(descriptor, "rb")


def open_lock_file(path: Path, root: Path) -> int:
    """A descriptor on the regular file at `path` inside `root`, created empty when missing
    (a lock file): no link is followed, no FIFO or device is opened."""
    path = inside(root, path)
    try:
        return _open_regular(path, os.O_RDWR | os.O_CREAT, follow=False)
    except FileNotFoundError:
        raise StetError(f"{path.parent} does not exist ({_UNCHANGED})") from None


class ChangedMeanwhile(Exception):
    """The file to replace changed while its new content was written (`atomic_writer`'s
    `unchanged` said so): nothing was replaced."""


Unchanged = Callable[["Path"], bool]
"""Whether the file at a name still holds what new content was made from (asked of the
destination, then of the name the replaced file went to)."""


def atomic_write(
    path: Path,
    data: bytes,
    root: Path | None = None,
    mode: int = 0o666,
    unchanged: Unchanged | None = None,
) -> None:
    """Replace the file at `path` with `data` (see `atomic_writer`)."""
    with atomic_writer(path, root, mode, unchanged) as stream:
        stream.write(data)


@contextmanager
def atomic_writer(
    path: Path,
    root: Path | None = None,
    mode: int = 0o666,
    unchanged: Unchanged | None = None,
) -> Iterator[BinaryIO]:
    """A stream whose bytes replace the file at `path` when the block ends without an error:
    written to an exclusively created temporary file in the same folder, synced, then renamed
    over `path`, so a crash leaves the old content or the new. An existing file keeps its
    permissions; a new one gets `mode` (less the umask). The destination may be missing or a
    regular file, never a link: it is replaced, not written through. `unchanged`, asked once
    the new content is synced, right before the rename: whether the destination still holds
    what the new content was made from; when not, nothing is replaced and `ChangedMeanwhile`
    is raised (see `_replace_unless_changed` for a writer between the two)."""
    if root is not None:
        path = inside(root, path)
    existing = _regular_or_missing(path)
    temporary, descriptor = _create_temporary(path, mode)
    try:
        with os.fdopen(descriptor, "wb") as stream:
            yield stream
            stream.flush()
            if existing is not None and os.chmod in os.supports_fd:
                os.chmod(stream.fileno(), stat.S_IMODE(existing.st_mode))
            os.fsync(stream.fileno())
        if unchanged is None:
            os.replace(temporary, path)
        else:
            _replace_unless_changed(temporary, path, unchanged)
        _fsync_folder(path.parent)
    except OSError as error:
        _discard(temporary)
        raise _os_error(path, error) from None
    except BaseException:
        _discard(temporary)
        raise


def holding(data: bytes | None, root: Path | None = None) -> Unchanged:
    """An `unchanged` for `atomic_writer`: whether the file at a name holds `data` (None: there
    is no file)."""
    return lambda path: read_regular(path, root) == data


def _replace_unless_changed(temporary: Path, path: Path, unchanged: Unchanged) -> None:
    """Rename `temporary` over `path` while `path` holds what `unchanged` expects. Another
    program writing the file without a lock (a harness its settings) may replace it between
    the check and the rename: the two files are exchanged instead, the one replaced is checked
    again at its new name, and exchanged back when it is not what was read. Where exchanging
    cannot be done, the rename follows the check."""
    if not unchanged(path):
        raise ChangedMeanwhile(path)
    ours = os.lstat(temporary).st_ino
    try:
        if not os.path.lexists(path):
            if not renameat.rename_unless_taken(str(temporary), str(path)):
                os.replace(temporary, path)
            return
        if not renameat.exchange(str(temporary), str(path)):
            os.replace(temporary, path)
            return
    except (FileExistsError, FileNotFoundError):
        raise ChangedMeanwhile(path) from None
    try:
        replaced_unchanged = unchanged(temporary)
    except (OSError, StetError):
        replaced_unchanged = False  # a link or a folder put there meanwhile
    if replaced_unchanged:
        _discard(temporary)
        return
    try:
        renameat.exchange(str(temporary), str(path))
        if os.lstat(temporary).st_ino != ours:
            # The other program wrote again over this file meanwhile: its newer write stays.
            os.replace(temporary, path)
    except OSError:
        with suppress(OSError):
            os.replace(temporary, path)  # the other writer's file back over this one
    raise ChangedMeanwhile(path)


def remove_regular(path: Path, root: Path) -> bool:
    """Delete the regular file at `path` inside `root`; False when there was none."""
    path = inside(root, path)
    if _regular_or_missing(path) is None:
        return False
    try:
        os.unlink(path)  # removes the name only: never a file a link points to
    except FileNotFoundError:
        return False
    except OSError as error:
        raise _os_error(path, error) from None
    return True


def unchanged_since(path: Path, judged: os.stat_result) -> bool:
    """Whether `path` (not followed) is still the file `judged` was taken of: same inode,
    size and modification time."""
    now = os.lstat(path)
    return (now.st_ino, now.st_size, now.st_mtime_ns) == (
        judged.st_ino,
        judged.st_size,
        judged.st_mtime_ns,
    )


def move_aside(path: Path, root: Path, suffix: str, name: str | None = None) -> Path | None:
    """Rename the regular file at `path` inside `root` to a new sibling
    `.<name><suffix>-<random>` (or `name`, chosen beforehand: `aside_name`), never reading
    it; None when there is no file."""
    path = inside(root, path)
    if _regular_or_missing(path) is None:
        return None
    aside = path.with_name(name or f".{path.name}{suffix}-{_random_suffix()}")
    while os.path.lexists(aside):
        aside = path.with_name(f".{path.name}{suffix}-{_random_suffix()}")
    try:
        os.replace(path, aside)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise _os_error(path, error) from None
    return aside


def aside_name(path: Path, root: Path, suffix: str) -> str:
    """A name `move_aside` can give the file at `path` inside `root`, one no sibling has."""
    path = inside(root, path)
    while True:
        name = f".{path.name}{suffix}-{_random_suffix()}"
        if not os.path.lexists(path.with_name(name)):
            return name


def keep_aside(path: Path, root: Path, suffix: str) -> Path | None:
    """A second name for the regular file at `path` inside `root`, a new sibling
    `.<name><suffix>-<random>`, that keeps the file as it is while `path` is replaced (every
    write renames a new file over the name) until it is put back (`put_back`,
    `put_back_keeping`): a hard link, so nothing is read or copied (where the file system has
    no hard links, a copy made a block at a time, named so once whole: `_named_once_whole`).
    None when there is no file; StetError when the path is no regular file."""
    path = inside(root, path)
    status = _regular_or_missing(path)
    if status is None:
        return None
    for _ in range(100):
        aside = path.with_name(f".{path.name}{suffix}-{_random_suffix()}")
        try:
            os.link(path, aside, follow_symlinks=False)
        except FileExistsError:
            continue
        except FileNotFoundError:
            return None
        except OSError:
            if os.path.lexists(aside):
                continue
            _named_once_whole(path, aside, status, path.name)
        return aside
    raise StetError(f"could not name a file beside {path}")


def put_back(aside: Path, path: Path, root: Path) -> None:
    """The file `keep_aside` kept as `aside`, at `path` inside `root` again, in one rename
    (whatever replaced it meanwhile goes)."""
    path = inside(root, path)
    try:
        os.replace(aside, path)
        if os.path.lexists(aside):  # the two names were one file's: the rename did nothing
            os.unlink(aside)
    except OSError as error:
        raise _os_error(path, error) from None
    _fsync_folder(path.parent)


def put_back_keeping(aside: Path, path: Path, root: Path) -> None:
    """The file `keep_aside` kept as `aside`, at `path` inside `root` again, while `aside`
    stays: a second name for it (a hard link, else a copy) renamed over `path`. Until the
    copy is let go, `path` and `aside` are one file, as they were when it was kept."""
    path = inside(root, path)
    status = _regular_or_missing(inside(root, aside))
    if status is None:
        raise StetError(f"{aside}: no such file")
    _named_once_whole(aside, path, status, path.name)
    _fsync_folder(path.parent)


def _named_once_whole(source: Path, target: Path, status: os.stat_result, name: str) -> None:
    """`source` at `target` too: a hard link (else a copy, a block at a time), made under a
    temporary name after `name` and renamed over `target` once whole, so a writer killed
    meanwhile leaves a temporary file (which the next settling removes), never a part of the
    file under a name a settling reads."""
    temporary = target.with_name(f".{name}.{_random_suffix()}{TEMPORARY_SUFFIX}")
    try:
        os.link(source, temporary, follow_symlinks=False)
    except OSError:
        _copy_beside(source, temporary, status)
    try:
        os.replace(temporary, target)
    except OSError as error:
        _discard(temporary)
        raise _os_error(target, error) from None
    _discard(temporary)  # a link of one file with `target` already: the rename did nothing


def _copy_beside(path: Path, aside: Path, status: os.stat_result) -> None:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _COMMON
    try:
        descriptor = os.open(aside, flags, 0o600)
    except OSError as error:
        raise _os_error(path, error) from None
    try:
        with os.fdopen(descriptor, "wb") as copy:
            with os.fdopen(_open_regular(path, os.O_RDONLY, follow=False), "rb") as reading:
                while chunk := reading.read(_CHUNK):
                    copy.write(chunk)
            copy.flush()
            os.fsync(copy.fileno())
            os.chmod(aside, stat.S_IMODE(status.st_mode))
    except OSError as error:
        _discard(aside)
        raise _os_error(path, error) from None
    except BaseException:
        _discard(aside)
        raise


# -- helpers ----------------------------------------------------------------------------


def require_writable(path: Path) -> None:
    """Refuse a configuration file its owner made read-only (no write bit for the owner):
    replacing it whole, as `atomic_write` does, would go past that, where an editor or the
    harness itself would stop. A missing file passes."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return
    except OSError as error:
        raise _os_error(path, error) from None
    if stat.S_ISREG(mode) and not mode & stat.S_IWUSR:
        raise StetError(
            f"{path} is read-only (mode {stat.S_IMODE(mode):04o}): Stet leaves it as it is. "
            f"Make it writable (chmod u+w) and run the command again; {_UNCHANGED}"
        )


def followed_link(path: Path) -> Path:
    """A user's own configuration file outside every repository (`~/.codex/config.toml`)
    that is a symbolic link, a dotfiles manager's, is read and written where the link points,
    as an editor would; the path itself when it is no link. A link to nothing is refused:
    what it points to may be anywhere, and is not created. (Inside a repository every link is
    refused: `inside`.)"""
    if not os.path.islink(path):
        return path
    try:
        return path.resolve(strict=True)
    except (OSError, RuntimeError):
        try:
            pointed = os.readlink(path)
        except OSError:
            pointed = "what it points to"
        raise StetError(
            f"{path} is a symbolic link to {pointed}, which does not exist: Stet does not "
            f"create a file through a link. Create what it points to, or remove the link; "
            f"{_UNCHANGED}"
        ) from None


def followed_links(path: Path) -> Path:
    """`followed_link` of the file's folder, then of the file in it (`~/.codex` and its
    `config.toml` may each be a dotfiles manager's link)."""
    return followed_link(followed_link(path.parent) / path.name)


def _below(root: str, path: str) -> tuple[str, list[str]]:
    """The path below `root` that `path` names, and its parts below `root` (as pathlib reads
    a path: empty and `.` parts dropped), refusing one outside `root` or with a `..`."""
    parts = _parts(path)
    if os.path.isabs(path):
        base = _parts(root)
        if not os.path.isabs(root) or parts[: len(base)] != base:
            raise StetError(f"{normal_path(path)} is outside the repository at {root}")
        parts = parts[len(base) :]
    if ".." in parts:
        raise StetError(f"{normal_path(path)} leaves the repository at {root} ({_UNCHANGED})")
    return os.path.join(root, *parts), parts


def _parts(path: str) -> list[str]:
    drive, rest = os.path.splitdrive(path)
    names = rest.replace(os.altsep or os.sep, os.sep).split(os.sep)
    parts = [part for part in names if part not in ("", ".")]
    if os.path.isabs(path):
        parts.insert(0, drive + os.sep)
    return parts


def normal_path(path: str) -> str:
    """`path` as pathlib prints it: `./a//b/` is `a/b`, a `..` stays, `` is `.`."""
    parts = _parts(path)
    if parts and parts[0].endswith(os.sep):
        return parts[0] + os.sep.join(parts[1:])
    return os.sep.join(parts) or "."


def _check_resolves_inside(root: str, path: str) -> None:
    real_root = _resolve(root)
    real = _resolve(path)
    if real != real_root and not real.startswith(real_root.rstrip(os.sep) + os.sep):
        raise StetError(f"{path} resolves outside the repository ({_UNCHANGED})")


def _resolve(path: str) -> str:
    """os.path.realpath, refusing a loop of links (as Path.resolve does)."""
    real = os.path.realpath(path)
    try:
        os.stat(real)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise StetError(f"cannot resolve {path}: {error} ({_UNCHANGED})") from None
    return real


def _open_regular(path: Path | str, flags: int, *, follow: bool) -> int:
    """A descriptor on the regular file at `path`. The status is checked before opening, so a
    FIFO or device is never opened, and again on the descriptor, in case it changed between."""
    writing = bool(flags & (os.O_WRONLY | os.O_RDWR))
    try:
        status = os.stat(path) if follow else os.lstat(path)
    except FileNotFoundError:
        if not flags & os.O_CREAT:
            raise
    except OSError as error:
        raise _os_error(path, error) from None
    else:
        _require_regular(path, status, writing=writing)
    nofollow = 0 if follow else _NOFOLLOW
    try:
        descriptor = os.open(path, flags | nofollow | _NONBLOCK | _COMMON, 0o666)
    except FileNotFoundError:
        raise
    except OSError as error:
        raise _os_error(path, error) from None
    try:
        _require_regular(path, os.fstat(descriptor), writing=writing)
        os.set_blocking(descriptor, True)
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor


def _regular_or_missing(path: Path) -> os.stat_result | None:
    try:
        status = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise _os_error(path, error) from None
    _require_regular(path, status)
    return status


def _require_regular(path: Path | str, status: os.stat_result, *, writing: bool = True) -> None:
    if stat.S_ISREG(status.st_mode):
        return
    unchanged = f" ({_UNCHANGED})" if writing else ""  # a read changes nothing anyway
    if stat.S_ISLNK(status.st_mode):
        raise StetError(f"{path} is a symbolic link; Stet does not follow it{unchanged}")
    raise StetError(f"{path} is {_kind(status.st_mode)}, not a regular file{unchanged}")


def _create_temporary(path: Path, mode: int) -> tuple[Path, int]:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _COMMON
    for _ in range(100):
        temporary = path.with_name(f".{path.name}.{_random_suffix()}{TEMPORARY_SUFFIX}")
        try:
            return temporary, os.open(temporary, flags, mode)
        except FileExistsError:
            continue
        except OSError as error:
            # The folder is what is missing or closed: the temporary name was never the user's.
            message = error.strerror or error
            raise StetError(f"cannot write in {path.parent}: {message} ({_UNCHANGED})") from None
    raise StetError(f"could not create a temporary file beside {path}")


def _random_suffix() -> str:
    return os.urandom(_RANDOM_BYTES).hex()  # what secrets.token_hex does, without importing hmac


def _discard(temporary: Path) -> None:
    with suppress(OSError):
        os.unlink(temporary)


def _fsync_folder(folder: Path) -> None:
    if os.name != "posix":
        return
    descriptor = os.open(folder, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _COMMON)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISREG(mode):
        return "a regular file"
    return "not a regular file"


def _os_error(path: Path | str, error: OSError) -> StetError:
    return StetError(f"cannot use {path}: {error.strerror or error} ({_UNCHANGED})")


GITIGNORE_LIMIT = 1024 * 1024
"""The most bytes of `.stet/.gitignore` that are read (every write reads it): a few rules,
while a repository can commit one of gigabytes that git compresses to almost nothing."""


STET_GITIGNORE = ".stet/.gitignore"


def ensure_stet_gitignore(root: Path) -> None:
    """`.stet/.gitignore` ignores `cache/`, so a style sheet is never committed by accident,
    and what a writer stopped midway leaves beside a file: its temporary file
    (`.<name>.<random>.tmp`) and the file a capstone was replacing, moved aside
    (`.<name>.stet-before-capstone-<random>`)."""
    path = make_dirs(root, ".stet") / ".gitignore"
    current = read_stet_gitignore(root)
    updated = with_stet_rules(current)
    if updated != current:
        atomic_write(path, updated.encode("utf-8", "surrogateescape"), root)


def read_stet_gitignore(root: Path) -> str:
    """`.stet/.gitignore`'s text ("" when there is none); refused past GITIGNORE_LIMIT."""
    path = inside(root, STET_GITIGNORE)
    data = read_regular(path, root, limit=GITIGNORE_LIMIT + 1)
    if data is not None and len(data) > GITIGNORE_LIMIT:
        raise StetError(
            f"{path}: larger than {GITIGNORE_LIMIT:,} bytes, not read: shorten it (Stet needs "
            f"three lines of it) ({_UNCHANGED})"
        )
    return "" if data is None else data.decode("utf-8", "surrogateescape")


_CACHE_RULES = {"cache/", "/cache/", "cache", "/cache"}


def ignores_cache(root: Path) -> bool:
    """Whether `.stet/.gitignore` ignores `cache/`, so git sees no file made there."""
    try:
        current = read_stet_gitignore(root)
    except (OSError, StetError):
        return False
    return bool({line.strip() for line in current.splitlines()} & _CACHE_RULES)


def with_stet_rules(current: str) -> str:
    """`.stet/.gitignore`'s text `current` with the rules Stet needs that it lacks added."""
    lines = {line.strip() for line in current.splitlines()}
    missing = [
        rule
        for rule, written in (
            ("cache/", _CACHE_RULES),
            (".*.tmp", {".*.tmp"}),
            (".*.stet-before-capstone-*", {".*.stet-before-capstone-*"}),
        )
        if not lines & written
    ]
    if not missing:
        return current
    separator = "\n" if current and not current.endswith("\n") else ""
    return current + separator + "".join(f"{rule}\n" for rule in missing)
