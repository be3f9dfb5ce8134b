"""Stet's own files for the hooks, under `.stet/cache/hooks/` (ignored by `.stet/.gitignore`):
the log, what an install needs to undo itself, and per session a throttle stamp and a lock.
Every write goes through the boundary (core/safefs.py) with the repository's root."""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from stet_lsp.core import rewrites
from stet_lsp.core.errors import StetError
from stet_lsp.core.gitindex import index_tracks
from stet_lsp.core.locking import held, remove_held
from stet_lsp.core.safefs import (
    atomic_write,
    ensure_stet_gitignore,
    inside,
    make_dirs,
    open_regular,
    read_record_object,
    read_regular,
    remove_regular,
)
from stet_lsp.core.targets import STET_DIR

HOOKS_DIR = Path(STET_DIR) / "cache" / "hooks"
LOG = HOOKS_DIR / "hooks.log"
SESSIONS = HOOKS_DIR / "sessions"
LOG_LINES = 400
"""The log keeps its newest lines only."""
MESSAGE_CHARS = 600
STALE_SECONDS = 7 * 24 * 3600
"""Stamps and locks of sessions nobody touched for this long are removed."""


def has_stet(root: Path) -> bool:
    """True when the repository has a `.stet` folder (a real one, not a link): the hooks
    write only into repositories where Stet is set up."""
    try:
        return stat.S_ISDIR(os.lstat(root / STET_DIR).st_mode)
    except OSError:
        return False


def hooks_dir(root: Path) -> Path:
    """`.stet/cache/hooks/`, created (with `.stet/.gitignore`) when missing."""
    ensure_stet_gitignore(root)
    return make_dirs(root, HOOKS_DIR)


def session_key(session: str) -> str:
    """A file name for a harness's session id, whatever characters the id holds."""
    return hashlib.sha256(session.encode("utf-8", "surrogatepass")).hexdigest()[:24]


def now_text() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def log(root: Path | None, event: str, message: str, *, own_words: bool = False) -> None:
    """Add a line to `.stet/cache/hooks/hooks.log` (standard error when there is no
    repository with a `.stet` folder), through the redaction gate unless it is `own_words`
    (Stet's text and the repository's paths alone: the SessionStart hook, which the agent
    waits for, does not load the gate for them). Never raises: a hook must not fail on its
    log."""
    text = " ".join(message.split())
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate the harness's JSON wrote ("\ud800")
        from stet_lsp.trajectory.jsontext import without_lone_surrogates

        text = without_lone_surrogates(text)
    start = f"{now_text()} {event}: "
    try:
        if root is None or not has_stet(root):
            raise StetError("no .stet folder")
        # Cut after the gate: a value cut short may no longer read as one.
        _append(root, f"{start}{_cut(text if own_words else _gated(root, text))}\n")
    except Exception:
        with suppress(OSError, ValueError):
            sys.stderr.write(f"stet hooks: {start}{_cut(text)}\n")


def _cut(text: str) -> str:
    return text if len(text) <= MESSAGE_CHARS else text[: MESSAGE_CHARS - 1] + "…"


def _gated(root: Path, line: str) -> str:
    """The message through the redaction gate, as every file Stet writes: a session id or a
    transcript's path may hold a secret, or a home folder. It is read as the log's text, not
    as JSON: the gate knows a text by its file's name."""
    from stet_lsp.gate import load_config
    from stet_lsp.gate.redact import redact_text

    try:
        config = load_config(root)
    except StetError:  # a malformed gate.toml: the rules alone, and the line still written
        config = None
    return redact_text(line, config=config, path=LOG.as_posix(), cache=None).text


def _append(root: Path, line: str) -> None:
    from stet_lsp.core.locking import file_lock

    path = hooks_dir(root) / LOG.name
    with file_lock(path, root, "the hooks log"):
        lines = _tail(path, root).decode("utf-8", "replace").splitlines(keepends=True)
        kept = lines[-(LOG_LINES - 1) :] if len(lines) >= LOG_LINES else lines
        atomic_write(path, ("".join(kept) + line).encode("utf-8"), root)


_LOG_TAIL = LOG_LINES * (4 * MESSAGE_CHARS + 128)
"""Bytes enough for the lines the log keeps, each at most a message of four-byte characters
after its time and event."""


def _tail(path: Path, root: Path) -> bytes:
    """The log's last `_LOG_TAIL` bytes from a line's start: all it keeps. A repository can
    commit a log of gigabytes (git compresses it to almost nothing), which every hook would
    otherwise read whole."""
    stream = open_regular(path, root)
    if stream is None:
        return b""
    try:
        with stream:
            size = os.fstat(stream.fileno()).st_size
            if size > _LOG_TAIL:
                stream.seek(size - _LOG_TAIL)
                stream.readline()  # the line the seek cut
            return stream.read(_LOG_TAIL)
    except OSError as error:
        raise StetError(f"cannot read {path}: {error.strerror or error}") from None


def last_log_line(root: Path) -> str | None:
    try:
        data = _tail(inside(root, LOG), root)
    except StetError:
        return None
    if not data:
        return None
    lines = data.decode("utf-8", "replace").splitlines()
    return lines[-1] if lines else None


# -- per session: a throttle stamp and a lock ----------------------------------------------


def seconds_since_stamp(root: Path, key: str, name: str) -> float | None:
    """Seconds since the stamp `name` of session `key` was set; None when it never was."""
    try:
        data = read_regular(inside(root, SESSIONS / f"{key}.{name}"), root)
    except StetError:
        return None
    try:
        return time.time() - float((data or b"").decode("ascii"))
    except (UnicodeDecodeError, ValueError):
        return None


def set_stamp(root: Path, key: str, name: str) -> None:
    folder = _sessions_dir(root)
    atomic_write(folder / f"{key}.{name}", f"{time.time():.3f}\n".encode("ascii"), root)
    _remove_stale(root, folder)


@contextmanager
def session_lock(root: Path, key: str, wait: float) -> Iterator[bool]:
    """Hold the lock of session `key` (one import of a session at a time), waiting at most
    `wait` seconds (0: try once); yields False when another process holds it."""
    with held(_sessions_dir(root) / f"{key}.lock", root, wait) as acquired:
        yield acquired


def _sessions_dir(root: Path) -> Path:
    hooks_dir(root)
    return make_dirs(root, SESSIONS)


def _remove_stale(root: Path, folder: Path) -> None:
    limit = time.time() - STALE_SECONDS
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        path = folder / name
        try:
            if os.lstat(path).st_mtime >= limit:
                continue
            if name.endswith(".lock"):
                # Locking leaves a lock file's time as it is: an import of a session resumed
                # after a week holds one this old. Removed only while nobody holds it.
                with held(path, root, 0) as acquired:
                    if acquired:
                        remove_held(path, root)
            else:
                remove_regular(path, root)
        except (OSError, StetError):
            continue


# -- writing a harness's settings -----------------------------------------------------------


class ChangedWhileWritten(rewrites.ChangedWhileWritten):
    """A harness's settings file changed between its reading and its writing (the harness,
    an editor, another `stet` command): nothing was written over it."""

    def __init__(self, path: Path) -> None:
        super().__init__(
            f"{path} kept changing while Stet wrote it; nothing was changed, run the command again"
        )


# -- install records -------------------------------------------------------------------------


def record_tracked(root: Path, name: str) -> bool | None:
    """Whether git tracks the record `name` (None when the index cannot be read). A record
    is never committed (`.stet/.gitignore` ignores the cache): one git tracks came with the
    repository, and is no record of anything done here."""
    return index_tracks(root, (HOOKS_DIR / name).as_posix())


def tracked_record_message(name: str, what: str) -> str:
    relative = (HOOKS_DIR / name).as_posix()
    return (
        f"{relative} is tracked by git: {what}. Untrack it (git rm --cached {relative}) and "
        "install again; nothing was changed"
    )


def read_record(root: Path, name: str) -> dict[str, Any] | None:
    """A JSON record of `.stet/cache/hooks/` (None when missing or unreadable, over
    `RECORD_LIMIT` bytes, or no JSON object: safefs.read_record_object)."""
    try:
        path = inside(root, HOOKS_DIR / name)
    except StetError:
        return None
    return read_record_object(path, root)


def write_record(root: Path, name: str, record: dict[str, Any]) -> None:
    """Written readable by the owner only: a record may hold a copy of a settings file. In
    ASCII: a path that is not UTF-8 (a lone surrogate) is escaped, and read back as it was."""
    text = json.dumps(record, ensure_ascii=True, indent=2) + "\n"
    atomic_write(hooks_dir(root) / name, text.encode("ascii"), root, mode=0o600)


def remove_record(root: Path, name: str) -> None:
    with suppress(StetError):
        remove_regular(inside(root, HOOKS_DIR / name), root)


_NOTHING_CHANGED = re.compile(r"(?:; | \()nothing was changed\)?")


def as_found(error: StetError) -> str:
    """A refusal of install or uninstall as `stet hooks status` reports it: what it found
    wrong with the file, without what the command did about it (status changes nothing)."""
    return _NOTHING_CHANGED.sub("", str(error))
