"""`stet check`'s view of a repository: the items each file would show in the editor
(`core/items.py`), with the gate's findings. Above core and the gate, it imports both."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pygit2

from stet_lsp.core.comments import SYNTAXES, CommentIndex, language_of
from stet_lsp.core.errors import StetError
from stet_lsp.core.items import (
    SCRATCH_PREFIX,
    Item,
    Severity,
    entry_items,
    gate_items,
    gate_kind,
    margin_items,
    sheet_items,
)
from stet_lsp.core.lines import split_lines
from stet_lsp.core.margin import DEFAULT_MARKER, find_notes
from stet_lsp.core.safefs import read_regular
from stet_lsp.core.sheet import StyleSheet
from stet_lsp.core.sheet_format import SheetDocument
from stet_lsp.core.targets import Target, is_stet_file
from stet_lsp.gate import Finding, GateConfig, load_config, scan_text

MAX_FILE_BYTES = 2 * 1024 * 1024


@dataclass(frozen=True)
class CheckOptions:
    """The settings that change what is shown (the server's settings of the same names)."""

    marker: str = DEFAULT_MARKER
    margin_severity: Severity = "hint"
    entry_severity: Severity = "information"
    gate_strict: bool = False
    gate_env_names: tuple[str, ...] = ()


def document_items(
    root: Path,
    relative: str,
    text: str,
    sheet: SheetDocument,
    options: CheckOptions | None = None,
    texts: Mapping[str, str] | None = None,
) -> list[Item]:
    """Everything shown on the document at repository-relative `relative` holding `text`;
    `sheet` is the current target's style sheet, `texts` the open editor buffers by
    repository-relative path (for the sheet's lost anchors)."""
    options = options or CheckOptions()
    kind = gate_kind(relative)
    if kind == "sheet":
        return sheet_items(root, text, texts) + gate_items(
            kind, _scan(root, relative, text, options)
        )
    lines = split_lines(text)
    items: list[Item] = []
    if not is_stet_file(relative):
        comments = CommentIndex(lines, SYNTAXES[language_of(relative)])
        notes = find_notes(lines, comments, options.marker)
        items += margin_items(notes, options.margin_severity)
    items += entry_items(relative, lines, sheet.entries(), options.entry_severity)
    if kind == "artifact":
        items += gate_items(kind, _scan(root, relative, text, options))
    return items


def gate_config(root: Path, strict: bool = False, env_names: Iterable[str] = ()) -> GateConfig:
    """The repository's configuration for what is shown: a broken file flags more, never
    less (`load_config`'s lenient reading)."""
    return load_config(root, strict=strict, env_names=env_names, lenient=True)


def _scan(root: Path, relative: str, text: str, options: CheckOptions) -> list[Finding]:
    config = gate_config(root, options.gate_strict, options.gate_env_names)
    return scan_text(text, config=config, path=relative)


# -- the whole repository (`stet check`) ---------------------------------------------------


@dataclass(frozen=True)
class Shown:
    """An item of one repository file."""

    path: str
    item: Item

    def __str__(self) -> str:
        message = " ".join(self.item.message.split("\n"))
        return f"{self.path}:{self.item.line + 1}: {message}"

    def to_dict(self) -> dict[str, Any]:
        """`line` is 1-based as printed; `item` keeps the 0-based positions."""
        return {
            "path": self.path,
            "line": self.item.line + 1,
            "kind": self.item.kind,
            "message": self.item.message,
            "item": self.item.to_dict(),
        }


def check(
    repo: pygit2.Repository, target: Target, options: CheckOptions | None = None
) -> list[Shown]:
    """The items of every working file, of committed `.stet/` artifacts and of the sheet."""
    root = target.root
    sheet = StyleSheet(target).read()
    sheet_relative = target.sheet_path.relative_to(root).as_posix()
    paths = [path for path in working_files(repo) if not path.startswith(SCRATCH_PREFIX)]
    if target.sheet_path.exists():
        paths.append(sheet_relative)
    shown: list[Shown] = []
    for path in paths:
        text = _text(root, root / path)
        if text is not None:
            items = document_items(root, path, text, sheet, options)
            shown.extend(Shown(path, item) for item in items)
    return sorted(shown, key=lambda s: (s.path, s.item.line, s.item.column, s.item.kind))


def working_files(repo: pygit2.Repository) -> Iterator[str]:
    """Tracked files and untracked ones git does not ignore."""
    seen = set()
    for entry in repo.index:
        seen.add(entry.path)
    for path, flags in repo.status().items():
        if flags & pygit2.GIT_STATUS_WT_NEW:
            seen.add(path)
        if flags & pygit2.GIT_STATUS_WT_DELETED:
            seen.discard(path)
    yield from sorted(seen)


def _text(root: Path, path: Path) -> str | None:
    """A working file's text; None for what is not a readable regular file inside the
    repository, too large, or binary."""
    try:
        data = read_regular(path, root, limit=MAX_FILE_BYTES + 1)
    except StetError:
        return None
    if data is None or len(data) > MAX_FILE_BYTES:
        return None
    if b"\0" in data[:8192]:
        return None
    return data.decode("utf-8", errors="replace")
