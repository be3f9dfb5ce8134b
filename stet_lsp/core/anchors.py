"""Anchors: a path, a line and that line's text, found again after the code around it moves."""

from __future__ import annotations

import os
import stat
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Sequence
from itertools import compress, count, repeat
from operator import contains
from pathlib import Path, PureWindowsPath

from stet_lsp.core.errors import StetError
from stet_lsp.core.lines import lines_of, split_lines
from stet_lsp.core.model import Anchor, Entry
from stet_lsp.core.records import FrozenRecord
from stet_lsp.core.safefs import read_regular
from stet_lsp.core.targets import STET_DIR

TYPE_CHECKING = False  # as typing's, without importing typing (start-up of the command line)
if TYPE_CHECKING:
    from typing import Final

ANCHOR_TEXT_LIMIT = 200
BINARY_PROBE_BYTES = 8000
"""A file with a NUL byte among its first this many bytes is binary (git's own test)."""
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


BOM = "\ufeff"


def line_key(line: str) -> str:
    """What an anchor keeps of a line: its text without the blanks around it, nor the byte
    order mark a file may open with (an editor holds the file without it)."""
    return line.removeprefix(BOM).strip()[:ANCHOR_TEXT_LIMIT]


def make_anchor(root: Path, path: Path | str, line: int, text: str | None = None) -> Anchor:
    """Anchor to `line` (1-based) of `path`; `text` is the file's content when the caller has
    it (an editor buffer), else the file is read from disk."""
    relative = relative_path(root, path)
    check_anchor_path(relative)
    if text is None:
        data = read_regular(root / relative, root)
        if data is None:
            raise StetError(f"no such file: {root / relative}")
        binary = b"\0" in data[:BINARY_PROBE_BYTES]
        text = data.decode("utf-8", errors="replace")
    else:
        binary = "\0" in text[:BINARY_PROBE_BYTES]
    if binary:
        raise StetError(
            f"{relative} is a binary file (a NUL byte in its first {BINARY_PROBE_BYTES} "
            "bytes); a note cannot be anchored in it"
        )
    lines = lines_of(text)
    check_line(relative, len(lines), line, empty_has_one=True)
    return Anchor(relative, line, line_key(lines[line - 1]) if lines else "")


def check_anchor_path(relative: str) -> None:
    """An error when the repository-relative `relative` is inside a git directory (`.git/`,
    a submodule's too; any case, as git refuses such paths): its files are git's, not code
    a note can be about; or inside `.stet/cache/`, Stet's local scratch (the style sheet
    itself, working trajectories), which every write or import rewrites, so an anchor there
    points at nothing it was written about."""
    parts = relative.split("/")
    if any(part.casefold() == ".git" for part in parts):
        raise StetError(
            f"{relative} is inside the git directory; a note can only be anchored in the "
            "work tree's files"
        )
    if [part.casefold() for part in parts[:2]] == [STET_DIR, "cache"] and len(parts) > 2:
        raise StetError(
            f"{relative} is Stet's local scratch (the style sheet, working trajectories); a "
            "note can only be anchored in the repository's own files: add it without a line, "
            "or mark a trajectory's step"
        )


def check_line(path: str, count: int, line: int, *, empty_has_one: bool = False) -> None:
    """An error unless 1-based `line` is one of the `count` lines of the file at `path` (an
    empty file's line 1 too, with `empty_has_one`: a note may be anchored there)."""
    if not 1 <= line <= (max(count, 1) if empty_has_one else count):
        counted = f"{count} line{'' if count == 1 else 's'}"
        raise StetError(f"{path} has {counted}; line {line} does not exist")


def read_text(path: Path, root: Path) -> str:
    """A regular file inside `root` (never a FIFO, a device or a link out of it)."""
    data = read_regular(path, root)
    if data is None:
        raise StetError(f"no such file: {path}")
    return data.decode("utf-8", errors="replace")


def locate(anchor: Anchor, lines: Sequence[str]) -> int | None:
    """The 1-based line where the anchored text is now, or None when it is gone.

    The anchored line itself if unchanged; else the nearest line with the same text; else
    the most similar line (a small edit to the line itself), nearest first on ties.
    """
    wanted = anchor.text
    if 1 <= anchor.line <= len(lines) and line_key(lines[anchor.line - 1]) == wanted:
        return anchor.line
    if not wanted:
        return anchor.line if anchor.line <= len(lines) else None
    exact = exact_lines(wanted, lines)
    if exact:
        return _nearest(exact, anchor.line)
    if len(wanted) < _FUZZY_MIN_LENGTH:
        return None
    return _most_similar(similar_lines(wanted, lines), anchor.line)


def exact_lines(wanted: str, lines: Sequence[str], first: int = 1) -> list[int]:
    """The numbers (counted from `first`) of the lines whose text is `wanted`, in order."""
    # A line whose key is `wanted` contains it: the substring test (in C) passes few lines.
    return [
        number
        for number in compress(count(first), map(contains, lines, repeat(wanted)))
        if line_key(lines[number - first]) == wanted
    ]


def exact_lines_of(texts: Iterable[str], lines: Sequence[str]) -> dict[str, list[int]]:
    """`exact_lines` of each of `texts` (1-based numbers), from one pass over the lines: for
    many texts at once, where a pass a text costs texts x lines (a file's hundreds of margin
    notes recorded together, their anchored lines repeated all over it)."""
    found: dict[str, list[int]] = {text: [] for text in texts}
    for number, line in enumerate(lines, 1):
        listed = found.get(line_key(line))
        if listed is not None:
            listed.append(number)
    return found


def similar_lines(wanted: str, lines: Sequence[str], first: int = 1) -> list[tuple[int, float]]:
    """(number counted from `first`, ratio) of each line similar enough to `wanted` to be
    found as it (identical lines included), in order: the slow part of `locate`, about 15 µs
    a line."""
    from difflib import SequenceMatcher  # only this search needs it

    matcher = SequenceMatcher(autojunk=False)
    matcher.set_seq2(wanted)
    found = []
    for number, line in enumerate(lines, first):
        key = line_key(line)
        if not key:
            continue
        matcher.set_seq1(key)
        if matcher.real_quick_ratio() < _FUZZY_CUTOFF or matcher.quick_ratio() < _FUZZY_CUTOFF:
            continue
        ratio = matcher.ratio()
        if ratio >= _FUZZY_CUTOFF:
            found.append((number, ratio))
    return found


def _nearest(numbers: list[int], line: int) -> int:
    """Of ascending `numbers`, the nearest to `line`; the first on ties."""
    index = bisect_left(numbers, line)
    if index == 0:
        return numbers[0]
    if index == len(numbers) or line - numbers[index - 1] <= numbers[index] - line:
        return numbers[index - 1]
    return numbers[index]


def _most_similar(similar: list[tuple[int, float]], line: int) -> int | None:
    """The most similar line, the nearest to `line` on ties, the first of equals."""
    if not similar:
        return None
    return max(similar, key=lambda pair: (pair[1], -abs(pair[0] - line)))[0]


class AnchorTrack:
    """Where an anchor's text is in a document being edited, kept in step with each edit
    instead of searched for again: the lines holding the text and, once none does, the lines
    similar to it. `line` answers as `locate` would on the same lines.

    The similar lines are searched for only when needed, over every line: until `adopt`
    brings such a search in (run anywhere, on a copy of the lines) `known` is False, and
    `line` is the last answer moved with the edits (None once its line was edited)."""

    __slots__ = ("_fresh", "_last", "anchor", "exact", "similar")

    def __init__(
        self, anchor: Anchor, lines: Sequence[str], exact: list[int] | None = None
    ) -> None:
        """`exact`: the lines' `exact_lines` of the anchor's text, when already known."""
        self.anchor = anchor
        if not anchor.text:
            exact = []
        elif exact is None:
            exact = exact_lines(anchor.text, lines)
        # Never changed in place (an edit makes a new list): tracks may share one.
        self.exact = exact
        """The numbers of the lines holding the anchored text, in order."""
        self.similar: list[tuple[int, float]] | None = None if self.searches else []
        """(number, ratio) of the lines similar to the text, in order; None: not searched."""
        self._last: int | None = None
        self._fresh = False  # whether `_last` is the answer to the lists as they are
        if self.known:
            self.line(len(lines))

    @property
    def searches(self) -> bool:
        """Whether a line similar to the text is found as it (else only identical ones)."""
        return len(self.anchor.text) >= _FUZZY_MIN_LENGTH

    @property
    def known(self) -> bool:
        """Whether `line` is `locate`'s answer: else the similar lines must be searched for."""
        return self.similar is not None or not self.anchor.text or bool(self.exact)

    def line(self, count: int) -> int | None:
        """Where the text is in the document of `count` lines (1-based); None: it is lost."""
        if self._fresh or not self.known:
            return self._last
        self._fresh = True
        anchor = self.anchor
        if not anchor.text:
            self._last = anchor.line if anchor.line <= count else None
        elif self.exact:
            self._last = _nearest(self.exact, anchor.line)
        else:
            self._last = _most_similar(self.similar or [], anchor.line)
        return self._last

    def edit(self, start: int, removed: int, added: Sequence[str], *, search: bool = True) -> None:
        """Lines `start` to `start + removed` (0-based, the end excluded) were replaced by
        `added`. `search`: look for similar lines among `added` (about 15 µs a line) when
        the similar lines are known; else they are not known any more."""
        shift = len(added) - removed
        exact, similar = self.exact, self.similar
        if self.anchor.text:
            found = exact_lines(self.anchor.text, added, start + 1)
            self.exact = _spliced(exact, start, removed, shift, found)
        if similar is not None and self.searches:
            if search:
                found_pairs = similar_lines(self.anchor.text, added, start + 1) if added else []
                self.similar = _spliced_pairs(similar, start, removed, shift, found_pairs)
            else:
                self.similar = None
        if self.exact is not exact or self.similar is not similar or not self.anchor.text:
            self._fresh = False
        if self._last is not None and self._last > start:
            self._last = None if self._last <= start + removed else self._last + shift

    def adopt(
        self, similar: list[tuple[int, float]], edits: Iterable[tuple[int, int, Sequence[str]]]
    ) -> None:
        """Take `similar_lines` of an earlier version of the document and the `edits` made
        since then (as given to `edit`, in order), whose added lines are searched here."""
        if self.similar is not None or not self.searches:
            return
        for start, removed, added in edits:
            found = similar_lines(self.anchor.text, added, start + 1) if added else []
            similar = _spliced_pairs(similar, start, removed, len(added) - removed, found)
        self.similar = similar
        self._fresh = False


def _spliced(numbers: list[int], start: int, removed: int, shift: int, new: list[int]) -> list[int]:
    """Ascending line numbers after lines `start + 1` to `start + removed` (1-based) were
    replaced by lines of which `new` are listed, the later ones moving by `shift`: the same
    list when none changed."""
    low, high = bisect_right(numbers, start), bisect_right(numbers, start + removed)
    if low == high and not new and (not shift or high == len(numbers)):
        return numbers
    if not shift:
        return numbers[:low] + new + numbers[high:]
    return numbers[:low] + new + [number + shift for number in numbers[high:]]


def _spliced_pairs(
    pairs: list[tuple[int, float]],
    start: int,
    removed: int,
    shift: int,
    new: list[tuple[int, float]],
) -> list[tuple[int, float]]:
    """`_spliced` of (line number, ratio) pairs."""
    low = bisect_right(pairs, start, key=_number)
    high = bisect_right(pairs, start + removed, key=_number)
    if low == high and not new and (not shift or high == len(pairs)):
        return pairs
    if not shift:
        return pairs[:low] + new + pairs[high:]
    return pairs[:low] + new + [(number + shift, ratio) for number, ratio in pairs[high:]]


def _number(pair: tuple[int, float]) -> int:
    return pair[0]


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
