"""What the editor would show for a whole repository: margin notes and anchored entries."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pygit2

from stet_lsp.core.anchors import place
from stet_lsp.core.comments import SYNTAXES, CommentIndex, language_of
from stet_lsp.core.margin import DEFAULT_MARKER, find_notes
from stet_lsp.core.sheet import StyleSheet
from stet_lsp.core.targets import STET_DIR, Target

MAX_FILE_BYTES = 2 * 1024 * 1024


@dataclass(frozen=True)
class Shown:
    path: str
    line: int
    """1-based."""
    kind: str
    """"margin-note", "entry" or "anchor-lost"."""
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


def working_files(repo: pygit2.Repository) -> Iterator[str]:
    """Tracked files and untracked ones git does not ignore, outside `.stet/`."""
    seen = set()
    for entry in repo.index:
        seen.add(entry.path)
    for path, flags in repo.status().items():
        if flags & pygit2.GIT_STATUS_WT_NEW:
            seen.add(path)
        if flags & pygit2.GIT_STATUS_WT_DELETED:
            seen.discard(path)
    for path in sorted(seen):
        if not path.startswith(STET_DIR + "/"):
            yield path


def check(repo: pygit2.Repository, target: Target, marker: str = DEFAULT_MARKER) -> list[Shown]:
    root = target.root
    shown = []
    for path in working_files(repo):
        text = _text(root / path)
        if text is None:
            continue
        lines = text.split("\n")
        index = CommentIndex(lines, SYNTAXES[language_of(path)])
        for note in find_notes(lines, index, marker):
            shown.append(
                Shown(path, note.line + 1, "margin-note", f"margin note ({note.kind}): {note.text}")
            )
    entries = [entry for entry in StyleSheet(target).entries() if entry.status == "open"]
    for placement in place(root, entries):
        entry, anchor = placement.entry, placement.entry.anchor
        assert anchor is not None
        if placement.line is None:
            message = f"anchor lost ({entry.id}): {entry.text.splitlines()[0]}"
            shown.append(Shown(anchor.path, anchor.line, "anchor-lost", message))
        else:
            message = f"style sheet ({entry.kind}, {entry.author}, {entry.id}): {entry.text}"
            shown.append(Shown(anchor.path, placement.line, "entry", message.replace("\n", " ")))
    return sorted(shown, key=lambda item: (item.path, item.line, item.kind))


def _text(path: Path) -> str | None:
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            return None
        data = path.read_bytes()
    except OSError:
        return None
    if b"\0" in data[:8192]:
        return None
    return data.decode("utf-8", errors="replace")
