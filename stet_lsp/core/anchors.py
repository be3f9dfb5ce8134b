"""Anchors: a path, a line and that line's text, found again after the code around it moves."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path, PureWindowsPath

from stet_lsp.core.errors import StetError
from stet_lsp.core.lines import split_lines
from stet_lsp.core.model import Anchor, Entry
from stet_lsp.core.records import FrozenRecord
from stet_lsp.core.safefs import read_regular

TYPE_CHECKING = False  # as typing's, without importing typing (start-up of the command line)
if TYPE_CHECKING:
    from typing import Final

ANCHOR_TEXT_LIMIT = 200
# Opening a FIFO must not block; the resolved path must not become a symlink meanwhile.
_NO_WAIT = getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
_FUZZY_CUTOFF = 0.8
_FUZZY_MIN_LENGTH = 16  # shorter lines look alike too easily: only exact matches count


def relative_path(root: Path, path: Path | str) -> str:
    """`path` (absolute, or relative to the current folder) as a repository-relative POSIX path."""
    absolute = Path(path).resolve()
    try:
        return absolute.relative_to(root).as_posix()
    except ValueError:
        raise StetError(f"{path} is outside the repository {root}") from None


def line_key(line: str) -> str:
    return line.strip()[:ANCHOR_TEXT_LIMIT]


def make_anchor(root: Path, path: Path | str, line: int, text: str | None = None) -> Anchor:
    """Anchor to `line` (1-based) of `path`; `text` is the file's content when the caller has
    it (an editor buffer), else the file is read from disk."""
    relative = relative_path(root, path)
    if text is None:
        text = read_text(root / relative, root)
    lines = split_lines(text)
    if not 1 <= line <= max(len(lines), 1):
        raise StetError(f"{relative} has {len(lines)} lines; line {line} does not exist")
    return Anchor(relative, line, line_key(lines[line - 1]) if lines else "")


def read_text(path: Path, root: Path) -> str:
    """A regular file inside `root` (never a FIFO, a device or a link out of it)."""
    data = read_regular(path, root)
    if data is None:
        raise StetError(f"no such file: {path}")
    return data.decode("utf-8", errors="replace")


def locate(anchor: Anchor, lines: list[str]) -> int | None:
    """The 1-based line where the anchored text is now, or None when it is gone.

    The anchored line itself if unchanged; else the nearest line with the same text; else
    the most similar line (a small edit to the line itself), nearest first on ties.
    """
    wanted = anchor.text
    if 1 <= anchor.line <= len(lines) and line_key(lines[anchor.line - 1]) == wanted:
        return anchor.line
    if not wanted:
        return anchor.line if anchor.line <= len(lines) else None
    exact = [number for number, line in enumerate(lines, 1) if line_key(line) == wanted]
    if exact:
        return min(exact, key=lambda number: abs(number - anchor.line))
    if len(wanted) < _FUZZY_MIN_LENGTH:
        return None
    from difflib import SequenceMatcher  # only this fallback needs it

    matcher = SequenceMatcher(autojunk=False)
    matcher.set_seq2(wanted)
    best: tuple[float, int] | None = None
    for number, line in enumerate(lines, 1):
        key = line_key(line)
        if not key:
            continue
        matcher.set_seq1(key)
        if matcher.real_quick_ratio() < _FUZZY_CUTOFF or matcher.quick_ratio() < _FUZZY_CUTOFF:
            continue
        ratio = matcher.ratio()
        if ratio >= _FUZZY_CUTOFF:
            rank = (ratio, -abs(number - anchor.line))
            if best is None or rank > (best[0], -abs(best[1] - anchor.line)):
                best = (ratio, number)
    return best[1] if best else None


class Placement(FrozenRecord):
    """Where an anchored entry is now: `line` is None when its anchor is lost."""

    __slots__ = ("entry", "line")
    entry: Final[Entry]
    line: Final[int | None]

    def __init__(self, entry: Entry, line: int | None) -> None:
        self.entry = entry
        self.line = line

    @property
    def lost(self) -> bool:
        return self.line is None


def place(
    root: Path, entries: Iterable[Entry], texts: dict[str, str] | None = None
) -> list[Placement]:
    """Locate each anchored entry, reading each file once; `texts` overrides disk content by
    repository-relative path (open editor buffers)."""
    cache: dict[str, list[str] | None] = {}
    placements = []
    for entry in entries:
        if entry.anchor is None:
            continue
        path = entry.anchor.path
        if path not in cache:
            cache[path] = _lines(root, path, texts)
        lines = cache[path]
        placements.append(Placement(entry, None if lines is None else locate(entry.anchor, lines)))
    return placements


def _lines(root: Path, path: str, texts: dict[str, str] | None) -> list[str] | None:
    if texts is not None and path in texts:
        return split_lines(texts[path])
    data = _read_inside(root, path)
    return None if data is None else split_lines(data.decode("utf-8", errors="replace"))


def _read_inside(root: Path, path: str) -> bytes | None:
    """The content of the regular file at `path` when it is a plain relative path that stays
    inside the repository, symlinks resolved; else None (the anchor counts as lost), so no
    anchor can make Stet read outside the repository or block on a FIFO."""
    parts = path.replace("\\", "/").split("/")
    if path.startswith(("/", "\\")) or ".." in parts or "\0" in path or PureWindowsPath(path).drive:
        return None
    try:
        file = (root / path).resolve()
        if not file.is_relative_to(root.resolve()):
            return None
        descriptor = os.open(file, os.O_RDONLY | _NO_WAIT)
        with os.fdopen(descriptor, "rb") as stream:
            if not stat.S_ISREG(os.fstat(descriptor).st_mode):
                return None
            return stream.read()
    except (OSError, RuntimeError):  # RuntimeError: a symlink loop, before Python 3.13
        return None
