"""Redaction: each span replaced whole by `[REDACTED:<rule>#<n>]` (home paths by `~`).

Numbers count distinct values per rule in order of first appearance, after any number already
used in the text, so redacting twice changes nothing and a second secret never reuses a marker.
Nothing in a marker derives from the secret.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from stet_lsp.gate.cache import DEFAULT_CACHE, ResultCache
from stet_lsp.gate.config import GateConfig
from stet_lsp.gate.findings import Finding
from stet_lsp.gate.report import RedactionReport
from stet_lsp.gate.scan import scan_text

_MARKER = re.compile(r"\[REDACTED:([a-z0-9-]+)#(\d+)\]")


@dataclass(frozen=True)
class Replacement:
    finding: Finding
    text: str


@dataclass(frozen=True)
class RedactionResult:
    text: str
    findings: list[Finding]
    """Positions in the original text."""
    replacements: list[Replacement]
    """One per finding: ready-made edits for an editor."""
    report: RedactionReport

    @property
    def changed(self) -> bool:
        return bool(self.findings)


def redact_text(
    text: str,
    *,
    config: GateConfig | None = None,
    path: str | None = None,
    json_mode: bool | None = None,
    cache: ResultCache | None = DEFAULT_CACHE,
) -> RedactionResult:
    findings = scan_text(text, config=config, path=path, json_mode=json_mode, cache=cache)
    return apply_redaction(text, findings, path=path)


def apply_redaction(
    text: str, findings: Sequence[Finding], *, path: str | None = None
) -> RedactionResult:
    """Replace the given findings of `text` (as returned by scan_text on that same text)."""
    ordered = sorted(findings, key=lambda f: f.offset)
    numbers: dict[str, dict[str, int]] = {}
    used = _used_numbers(text)
    replacements: list[Replacement] = []
    pieces: list[str] = []
    position = 0
    for finding in ordered:
        value = text[finding.offset : finding.end_offset]
        if finding.replacement is not None:
            marker = finding.replacement
        else:
            per_value = numbers.setdefault(finding.rule, {})
            number = per_value.get(value)
            if number is None:
                number = used.get(finding.rule, 0) + len(per_value) + 1
                per_value[value] = number
            marker = f"[REDACTED:{finding.rule}#{number}]"
        replacements.append(Replacement(finding, marker))
        pieces.append(text[position : finding.offset])
        pieces.append(marker)
        position = finding.end_offset
    pieces.append(text[position:])
    return RedactionResult(
        text="".join(pieces),
        findings=list(ordered),
        replacements=replacements,
        report=RedactionReport.from_findings(ordered, path),
    )


def _used_numbers(text: str) -> dict[str, int]:
    if "[REDACTED:" not in text:
        return {}
    highest: dict[str, int] = {}
    for match in _MARKER.finditer(text):
        rule, number = match.group(1), int(match.group(2))
        highest[rule] = max(highest.get(rule, 0), number)
    return highest
