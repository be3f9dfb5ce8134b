"""What an editor shows on one document, as plain items: margin notes, anchored entries, the
sheet's problems and lost anchors, and the gate's findings. The language server turns them
into diagnostics; `stet check` (stet_lsp/check.py) prints them for the whole repository."""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from stet_lsp.core.anchors import Placement, locate, place
from stet_lsp.core.lines import split_lines
from stet_lsp.core.margin import MarginNote
from stet_lsp.core.merge import conflict_markers
from stet_lsp.core.model import Anchor, Entry
from stet_lsp.core.sheet_format import SheetDocument
from stet_lsp.core.targets import SHEETS_DIR, STET_DIR

SHEETS_PREFIX = SHEETS_DIR.as_posix() + "/"
SCRATCH_PREFIX = STET_DIR + "/cache/"

Source = Literal["margin", "entries", "sheet", "gate"]
GateKind = Literal["sheet", "artifact"]


class Finding(Protocol):
    """What the items need of a gate finding (`stet_lsp.gate.Finding`)."""

    @property
    def line(self) -> int: ...
    @property
    def column(self) -> int: ...
    @property
    def end_line(self) -> int: ...
    @property
    def end_column(self) -> int: ...
    @property
    def rule(self) -> str: ...
    @property
    def replacement(self) -> str | None: ...


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
    placed = [(locate(anchor, lines), entry) for anchor, entry in anchored(relative, entries)]
    return placed_entry_items(lines, placed, severity)


def anchored(relative: str, entries: Iterable[Entry]) -> list[tuple[Anchor, Entry]]:
    """The open entries anchored in the document at `relative`, with their anchors."""
    return [
        (entry.anchor, entry)
        for entry in entries
        if entry.status == "open" and entry.anchor is not None and entry.anchor.path == relative
    ]


def placed_entry_items(
    lines: list[str], placed: Iterable[tuple[int | None, Entry]], severity: Severity = "information"
) -> list[Item]:
    """`entry_items` from each entry's 1-based line (None: its anchor is lost, not shown),
    for a caller that places the entries itself (the server, keeping each anchor's place
    in step with the edits: `anchors.AnchorTrack`)."""
    found = [(line - 1, entry) for line, entry in placed if line is not None]
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
        for line, entry in sorted(found, key=lambda pair: pair[0])
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


def other_target_item(lines: list[str], kind: str, name: str, current: str) -> Item:
    """On the first line of a style sheet that is not the current target's (another branch's,
    a named target's): why it offers no graduation, and how its entries graduate."""
    hows = {
        "named": f"`stet graduate ID --target {shlex.quote(name)}`",
        "branch": f"check out {name} first",
        "detached": "check that commit out first",
    }
    whats = {"branch": "branch ", "named": "named target ", "detached": "detached HEAD "}
    if kind in hows:
        whose, how = f"of {whats[kind]}{name}", hows[kind]
    else:  # its header lost: only its file tells whose it is
        whose, how = f"in {name}", "from the target the file is named for"
    message = (
        f"the style sheet {whose}, while HEAD is on {current}: its entries graduate from their "
        f"own target ({how}), so none is offered here"
    )
    return _line_item("sheet", lines, 0, "information", "other-target", message)


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


def gate_kind(relative: str) -> GateKind | None:
    """What the gate watches: a style sheet, a committed `.stet/` artifact, or nothing."""
    if relative.startswith(SHEETS_PREFIX):
        return "sheet"
    if relative.startswith(STET_DIR + "/") and not relative.startswith(SCRATCH_PREFIX):
        return "artifact"
    return None


def gate_items(kind: GateKind, findings: Iterable[Finding]) -> list[Item]:
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
