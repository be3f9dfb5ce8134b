"""A transcript that git tracks in the repository (an aider history committed with it): the
lines the commit the working trajectory started from holds came with the checkout. They are
somebody's runs before this work began, a cloned repository's author's say, not this branch's:
an import leaves their events out. The start commit, not HEAD: a person who commits their own
history while they work keeps what they imported before."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from stet_lsp.core.errors import StetError
from stet_lsp.core.gitindex import index_tracks
from stet_lsp.trajectory.importers.base import ParsedSession

CAME_WITH_CHECKOUT = "came_with_checkout"
"""The reason `dropped` counts the events of lines the start commit holds."""

_LEFT_AS_CONTEXT = frozenset({"session_start"})


@dataclass(frozen=True)
class CheckedOutPart:
    """For each source file (by the name the events use), the lines the commit holds."""

    commit: str
    lines: dict[str, int]


def checked_out_part(root: Path, parsed: ParsedSession, commit: str | None) -> CheckedOutPart:
    """The lines of `parsed`'s source files that git tracks inside `root` and that `commit`
    (else HEAD) holds, where the file on disk starts with that commit's bytes. A file the
    commit does not hold, or that no longer starts with them (rewritten), has none."""
    lines: dict[str, int] = {}
    start = None
    for name, path in parsed.sources.items():
        relative = _inside(root, path)
        found = committed_bytes(root, relative, commit) if relative is not None else None
        if found is None:
            continue
        start, held = found
        if held and _starts_with(path, held):
            lines[name] = held.count(b"\n")
    return CheckedOutPart(start or commit or "", {n: count for n, count in lines.items() if count})


def committed_bytes(
    root: Path, relative: str, commit: str | None = None
) -> tuple[str, bytes] | None:
    """The commit's id (`commit`, else HEAD) and the bytes it holds at `relative`, when git
    tracks that path (the index is asked first, without loading libgit2 when it does not
    mention the path); None when it is untracked, or there is no such commit or file."""
    if index_tracks(root, relative) is False:
        return None
    import pygit2

    from stet_lsp.core.targets import open_repository

    try:
        start = open_repository(root).revparse_single(commit or "HEAD").peel(pygit2.Commit)
        entry = start.tree[relative]
    except (StetError, pygit2.GitError, KeyError, ValueError):
        return None  # no commit yet, one this clone lacks, or not in it
    return (str(start.id), entry.data) if isinstance(entry, pygit2.Blob) else None


def leave_out(parsed: ParsedSession, part: CheckedOutPart) -> int:
    """Takes out of `parsed` the events and problems of the lines `part` holds; a run's
    `session_start` stays when events of that run come after them. How many went."""
    if not part.lines:
        return 0

    def held(file: str, line: int, pointer: str | None) -> bool:
        return pointer is None and line <= part.lines.get(file, 0)

    since = [not held(e.source.file, e.source.line, e.source.pointer) for e in parsed.events]
    going_on = {event.session for event, after in zip(parsed.events, since, strict=True) if after}
    kept = [
        event
        for event, after in zip(parsed.events, since, strict=True)
        if after or (event.kind in _LEFT_AS_CONTEXT and event.session in going_on)
    ]
    left = len(parsed.events) - len(kept)
    parsed.events[:] = kept
    parsed.problems[:] = [p for p in parsed.problems if not held(p.source, p.line, None)]
    if left:
        parsed.dropped[CAME_WITH_CHECKOUT] += left
    return left


def refuse_nothing_since(source: Path, parsed: ParsedSession, part: CheckedOutPart) -> None:
    """StetError when nothing but the checkout's part was in the transcript."""
    if part.lines and not parsed.has_work():
        raise StetError(
            f"{source}: git tracks it, and commit {part.commit[:12]} holds all of it: it came "
            "with the checkout, and has nothing written here since (a copy outside the "
            "repository imports whole)"
        )


def _inside(root: Path, path: Path) -> str | None:
    """`path`'s POSIX path from `root`, when it is inside it (and not in `.git`)."""
    try:
        relative = Path(os.path.realpath(path)).relative_to(root)
    except ValueError:
        return None
    parts = relative.parts
    return relative.as_posix() if parts and parts[0] != ".git" else None


def _starts_with(path: Path, held: bytes) -> bool:
    try:
        with open(path, "rb") as stream:
            return stream.read(len(held)) == held
    except OSError:
        return False
