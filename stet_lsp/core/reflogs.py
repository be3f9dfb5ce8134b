"""A reference's reflog with each entry's message, for the sheets that follow a branch's
renames (`renames.py`) and a detached HEAD's line of work (`lineage.py`).

pygit2 cannot decode a message that is not UTF-8: one naming a branch whose name is in other
bytes (`branch: renamed refs/heads/caf\xe9 to ...`, `checkout: moving from ... to caf\xe9`).
Such a message is read from the reflog's file instead, decoded as pygit2 decodes such a
branch's name (each byte that is not UTF-8 a lone surrogate), when the file's lines are the
entries libgit2 read; else it says nothing Stet reads ("")."""

from __future__ import annotations

from stet_lsp.core.errors import StetError
from stet_lsp.core.safefs import read_regular

TYPE_CHECKING = False  # as typing's, without importing typing (start-up of the command line)
if TYPE_CHECKING:
    from collections.abc import Iterator

    import pygit2

_REFLOG_LIMIT = 16 << 20


def log_message(entry: pygit2.RefLogEntry) -> str:
    """A reflog entry's message as pygit2 reads it; "" when it is not UTF-8."""
    try:
        return entry.message or ""
    except UnicodeDecodeError:
        return ""


def reflog(repo: pygit2.Repository, reference: str) -> Iterator[tuple[pygit2.RefLogEntry, str]]:
    """The entries of the reflog of `reference` (`HEAD` or `refs/heads/NAME`), newest first,
    each with its message. Raises as pygit2 does when the reference or its reflog cannot be
    read (KeyError, pygit2.GitError, ValueError)."""
    entries = repo.references[reference].log()
    return _with_messages(repo, reference, entries)


def _with_messages(
    repo: pygit2.Repository, reference: str, entries: Iterator[pygit2.RefLogEntry]
) -> Iterator[tuple[pygit2.RefLogEntry, str]]:
    from_file: list[tuple[str, str, str]] | None = None
    for position, entry in enumerate(entries):
        message = log_message(entry)
        if not message and not _decodes(entry):
            if from_file is None:
                from_file = _file_messages(repo, reference)
            if position < len(from_file):
                old, new, read = from_file[position]
                if (old, new) == (str(entry.oid_old), str(entry.oid_new)):
                    message = read
        yield entry, message


def _decodes(entry: pygit2.RefLogEntry) -> bool:
    try:
        entry.message  # noqa: B018 (pygit2 decodes it when read)
    except UnicodeDecodeError:
        return False
    return True


def _file_messages(repo: pygit2.Repository, reference: str) -> list[tuple[str, str, str]]:
    """The entries of the reflog's file, newest first (the commits before and after, the
    message), when its lines are the entries libgit2 reads now, one for one; else none."""
    from pathlib import Path

    import pygit2

    from stet_lsp.core.targets import common_git_dir

    # HEAD's reflog is the work tree's own; a branch's is in the common git folder.
    base = Path(repo.path) if reference == "HEAD" else common_git_dir(Path(repo.path))
    try:
        entries = list(repo.references[reference].log())
        data = read_regular(base / "logs" / reference, base, _REFLOG_LIMIT)
    except (OSError, StetError, pygit2.GitError, KeyError, ValueError):
        return []
    lines = [line for line in (data or b"").split(b"\n") if line]
    if data is None or len(data) >= _REFLOG_LIMIT or len(lines) != len(entries):
        return []
    read: list[tuple[str, str, str]] = []
    for entry, line in zip(entries, reversed(lines), strict=True):
        header, _, message = line.partition(b"\t")
        old, new = str(entry.oid_old), str(entry.oid_new)
        if header.split()[:2] != [old.encode(), new.encode()]:
            return []  # not the entries libgit2 read: the reflog changed since
        read.append((old, new, message.decode("utf-8", "surrogateescape")))
    return read
