"""What the gate reports: where a secret is and what kind, never any of its characters."""

from __future__ import annotations

from typing import NamedTuple

from stet_lsp.core.lines import LineIndex
from stet_lsp.gate.spans import Span


class Finding(NamedTuple):
    rule: str
    line: int
    """0-based."""
    column: int
    """0-based, in Python characters (code points) within the line."""
    end_line: int
    end_column: int
    preview: str
    """Masked: at most the first characters of the format's public prefix, then `…`."""
    offset: int
    """Start of the span in the scanned text (characters)."""
    end_offset: int
    replacement: str | None = None
    """A fixed replacement (`~` for home paths); None: a numbered marker."""
    found_as: str = ""
    """As `Span.found_as`: by a rule, or as a copy or a part of a value found elsewhere."""

    def to_dict(self) -> dict[str, object]:
        return {
            "rule": self.rule,
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
            "preview": self.preview,
        }


def places(findings: list[Finding], limit: int = 5) -> str:
    """Where the first findings are, for a message: `github-token at line 19, …` (1-based)."""
    return ", ".join(f"{f.rule} at line {f.line + 1}" for f in findings[:limit])


def masked_preview(span: Span, value: str) -> str:
    if span.replacement is not None:
        return value[:6] + "…"
    if span.prefix and value.startswith(span.prefix):
        return span.prefix[:2] + "…"
    return "…"


def finding_for(span: Span, text: str, lines: LineIndex) -> Finding:
    line, column = lines.position(span.start)
    end_line, end_column = lines.position(span.end)
    return Finding(
        rule=span.rule,
        line=line,
        column=column,
        end_line=end_line,
        end_column=end_column,
        preview=masked_preview(span, text[span.start : span.end]),
        offset=span.start,
        end_offset=span.end,
        replacement=span.replacement,
        found_as=span.found_as,
    )
