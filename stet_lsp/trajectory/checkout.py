"""A transcript that git tracks in the repository (an aider history committed with it): the
lines the commit the working trajectory started from holds came with the checkout. They are
somebody's runs before this work began, a cloned repository's author's say, not this branch's:
an import leaves their events out. The start commit, not HEAD: a person who commits their own
history while they work keeps what they imported before."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from stet_lsp.core.errors import StetError
from stet_lsp.core.gitindex import index_tracks
from stet_lsp.trajectory.importers.base import ParsedSession

if TYPE_CHECKING:
    import pygit2

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
    inside = [
        (name, relative)
        for name, path in parsed.sources.items()
        if (relative := _inside(root, path)) is not None
        and index_tracks(root, relative) is not False
    ]
    if not inside:
        return CheckedOutPart(commit or "", {})
    import pygit2

    from stet_lsp.core.targets import open_repository

    try:
        start = open_repository(root).revparse_single(commit or "HEAD").peel(pygit2.Commit)
    except (StetError, pygit2.GitError, KeyError, ValueError):
        return CheckedOutPart(commit or "", {})  # no commit yet, or one this clone lacks
    for name, relative in inside:
        held = _committed_bytes(start.tree, relative)
        if held and _starts_with(parsed.sources[name], held):
            lines[name] = held.count(b"\n")
    return CheckedOutPart(str(start.id), {name: count for name, count in lines.items() if count})


def leave_out(parsed: ParsedSession, part: CheckedOutPart) -> int:
    """Takes out of `parsed` the events and problems of the lines `part` holds; a run's
    `session_start` stays when events of that run come after them. How many went."""
    if not part.lines:
        return 0

    def held(file: str, line: int, pointer: str | None) -> bool:
        return pointer is None and line <= part.lines.get(file, 0)

    going_on = {
        event.session
        for event in parsed.events
        if not held(event.source.file, event.source.line, event.source.pointer)
    }
    kept = [
        event
        for event in parsed.events
        if not held(event.source.file, event.source.line, event.source.pointer)
        or (event.kind in _LEFT_AS_CONTEXT and event.session in going_on)
    ]
    left = len(parsed.events) - len(kept)
    parsed.events[:] = kept
    parsed.problems[:] = [p for p in parsed.problems if not held(p.source, p.line, None)]
    if left:
        parsed.dropped[CAME_WITH_CHECKOUT] += left
    return left


def refuse_nothing_since(source: Path, parsed: ParsedSession, part: CheckedOutPart) -> None:
    """StetError when nothing but the checkout's part was in the transcript."""
    if part.lines and all(event.kind in _NO_WORK for event in parsed.events):
        raise StetError(
            f"{source}: git tracks it, and commit {part.commit[:12]} holds all of it: it came "
            "with the checkout, and has nothing written here since (a copy outside the "
            "repository imports whole)"
        )


_NO_WORK = frozenset({"session_start", "session_end", "raw"})


def _inside(root: Path, path: Path) -> str | None:
    """`path`'s POSIX path from `root`, when it is inside it (and not in `.git`)."""
    try:
        relative = Path(os.path.realpath(path)).relative_to(root)
    except ValueError:
        return None
    parts = relative.parts
    return relative.as_posix() if parts and parts[0] != ".git" else None


def _committed_bytes(tree: pygit2.Tree, relative: str) -> bytes | None:
    import pygit2

    try:
        entry = tree[relative]
    except KeyError:
        return None
    return entry.data if isinstance(entry, pygit2.Blob) else None


def _starts_with(path: Path, held: bytes) -> bool:
    try:
        with open(path, "rb") as stream:
            return stream.read(len(held)) == held
    except OSError:
        return False
