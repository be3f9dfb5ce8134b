"""What an editor shows on one document, as plain items: margin notes, anchored entries, the
sheet's problems and lost anchors, and the gate's findings. The language server turns them
into diagnostics; `stet check` prints them for the whole repository."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pygit2

from stet_lsp.core.anchors import Placement, locate, place
from stet_lsp.core.comments import SYNTAXES, CommentIndex, language_of
from stet_lsp.core.errors import StetError
from stet_lsp.core.lines import split_lines
from stet_lsp.core.margin import DEFAULT_MARKER, MarginNote, find_notes
from stet_lsp.core.merge import conflict_markers
from stet_lsp.core.safefs import read_regular
from stet_lsp.core.model import Entry
from stet_lsp.core.sheet import StyleSheet
from stet_lsp.core.sheet_format import SheetDocument
from stet_lsp.core.targets import SHEETS_DIR, STET_DIR, Target
from stet_lsp.gate import Finding, GateConfig, load_config, scan_text

MAX_FILE_BYTES = 2 * 1024 * 1024
SHEETS_PREFIX = SHEETS_DIR.as_posix() + "/"
SCRATCH_PREFIX = STET_DIR + "/cache/"

Source = Literal["margin", "entries", "sheet", "gate"]
Severity = Literal["error", "warning", "information", "hint"]


@dataclass(frozen=True)
class Item:
    """One thing shown on a document. Positions are 0-based, columns in Python characters."""

    source: Source
    line: int
    column: int
    end_line: int
    end_column: int
    severity: Severity
    code: str
    message: str
    data: Mapping[str, Any] = field(default_factory=dict)

    @property
    def kind(self) -> str:
        """ "margin-note", "entry", "anchor-lost", "sheet-problem" or "secret"."""
        if self.source == "sheet":
            return "anchor-lost" if self.code == "anchor-lost" else "sheet-problem"
        return {"margin": "margin-note", "entries": "entry", "gate": "secret"}[self.source]

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "kind": self.kind,
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
            "severity": self.severity,
            "code": self.code,
            "message": self.message,
            "data": dict(self.data),
        }


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
    comments = CommentIndex(lines, SYNTAXES[language_of(relative)])
    items = margin_items(find_notes(lines, comments, options.marker), options.margin_severity)
    items += entry_items(relative, lines, sheet.entries(), options.entry_severity)
    if kind == "artifact":
        items += gate_items(kind, _scan(root, relative, text, options))
    return items


def margin_items(notes: Iterable[MarginNote], severity: Severity = "hint") -> list[Item]:
    items = []
    for note in notes:
        message = f"margin note ({note.kind}): {note.text or '(empty)'}"
        if note.unknown_kind:
            message += f" (unknown kind {note.unknown_kind!r}: recorded as markup)"
        items.append(
            Item(
                "margin",
                note.line,
                note.column,
                note.end_line,
                note.end_column,
                severity,
                "margin-note",
                message,
                {"type": "margin", "line": note.line},
            )
        )
    return items


def entry_items(
    relative: str, lines: list[str], entries: Iterable[Entry], severity: Severity = "information"
) -> list[Item]:
    """The open entries anchored in this document, at the line their anchor is found."""
    placed = []
    for entry in entries:
        if entry.status != "open" or entry.anchor is None or entry.anchor.path != relative:
            continue
        line = locate(entry.anchor, lines)
        if line is not None:
            placed.append((line - 1, entry))
    return [
        _line_item(
            "entries",
            lines,
            line,
            severity,
            entry.kind,
            f"style sheet ({entry.kind}, {entry.author}, {entry.id}): {entry.text}",
            {"type": "entry", "entryId": entry.id},
        )
        for line, entry in sorted(placed, key=lambda pair: pair[0])
    ]


def sheet_items(root: Path, text: str, texts: Mapping[str, str] | None = None) -> list[Item]:
    """The problems of a style sheet's text and the open entries whose anchor is lost."""
    lines = split_lines(text)
    document = SheetDocument.parse(text)
    return problem_items(document, lines) + lost_anchor_items(
        lines, place(root, open_entries(document), dict(texts) if texts is not None else None)
    )


def problem_items(document: SheetDocument, lines: list[str]) -> list[Item]:
    """What could not be read as an entry, and the versions a merge kept side by side."""
    items = [
        _line_item("sheet", lines, problem.line - 1, "warning", problem.code, problem.message)
        for problem in document.problems
    ]
    for entry in conflict_markers(document):
        message = (
            f"conflicting version of entry {entry.extra['conflict-of']}, kept from the other "
            "writer: keep one and discard the other"
        )
        data = {"type": "entry", "entryId": entry.id}
        items.append(
            _line_item(
                "sheet", lines, entry.source_line - 1, "warning", "merge-conflict", message, data
            )
        )
    return items


def open_entries(document: SheetDocument) -> list[Entry]:
    return [entry for entry in document.entries() if entry.status == "open"]


def lost_anchor_items(lines: list[str], placements: Iterable[Placement]) -> list[Item]:
    """`placements`: of the sheet's open entries (`anchors.place`, which reads files)."""
    items = []
    for placement in placements:
        anchor = placement.entry.anchor
        if placement.lost and anchor is not None:
            message = (
                f"anchor lost ({placement.entry.id}): {anchor.path}:{anchor.line} no longer "
                f"holds {anchor.text!r}; the entry is kept"
            )
            items.append(
                _line_item(
                    "sheet",
                    lines,
                    placement.entry.source_line - 1,
                    "warning",
                    "anchor-lost",
                    message,
                    {"type": "entry", "entryId": placement.entry.id},
                )
            )
    return items


def gate_kind(relative: str) -> Literal["sheet", "artifact"] | None:
    """What the gate watches: a style sheet, a committed `.stet/` artifact, or nothing."""
    if relative.startswith(SHEETS_PREFIX):
        return "sheet"
    if relative.startswith(STET_DIR + "/") and not relative.startswith(SCRATCH_PREFIX):
        return "artifact"
    return None


def gate_items(kind: Literal["sheet", "artifact"], findings: Iterable[Finding]) -> list[Item]:
    """A committed artifact holding a secret is an error, the sheet's a warning (graduation
    redacts it); messages name the rule, never any part of the secret."""
    return [
        Item(
            "gate",
            finding.line,
            finding.column,
            finding.end_line,
            finding.end_column,
            _gate_severity(kind, finding),
            finding.rule,
            _gate_message(kind, finding),
            {"type": "secret", "rule": finding.rule},
        )
        for finding in findings
    ]


def gate_config(root: Path, strict: bool = False, env_names: Iterable[str] = ()) -> GateConfig:
    """The repository's configuration; a broken allowlist flags more, never less."""
    try:
        return load_config(root, strict=strict, env_names=env_names)
    except StetError:
        return GateConfig(strict=strict, env_names=tuple(env_names))


def _scan(root: Path, relative: str, text: str, options: CheckOptions) -> list[Finding]:
    config = gate_config(root, options.gate_strict, options.gate_env_names)
    return scan_text(text, config=config, path=relative)


def _gate_message(kind: str, finding: Finding) -> str:
    personal = finding.replacement is not None
    what = "home directory" if personal else "secret"
    if kind == "sheet":
        outcome = f"will become {finding.replacement}" if personal else "will be redacted"
        return f"{what} ({finding.rule}) {outcome} at graduation"
    unredacted = "" if personal else "unredacted "
    return f"{unredacted}{what} ({finding.rule}) in a committed artifact: redact before committing"


def _gate_severity(kind: str, finding: Finding) -> Severity:
    if kind == "artifact":
        return "error"
    return "information" if finding.replacement is not None else "warning"


def _line_item(
    source: Source,
    lines: list[str],
    line: int,
    severity: Severity,
    code: str,
    message: str,
    data: Mapping[str, Any] | None = None,
) -> Item:
    """An item over one line's text, from its first non-blank character."""
    text = lines[line] if 0 <= line < len(lines) else ""
    start = len(text) - len(text.lstrip())
    return Item(source, line, start, line, len(text), severity, code, message, data or {})


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
