"""Redaction: each span replaced whole by `[REDACTED:<rule>#<n>]`, then home paths by `~`.

Numbers count distinct values per rule in order of first appearance, after any number already
used in the text, so redacting twice changes nothing and a second secret never reuses a marker.
Nothing in a marker derives from the secret. Home directories are normalised in one pass over
the redacted text (stet_lsp/gate/homepaths.py), so the secrets' spans, found in the original
text, stay valid and no home path goes through per-finding span handling.
"""

from __future__ import annotations

import itertools
import re
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from stet_lsp.gate.cache import DEFAULT_CACHE, ResultCache
from stet_lsp.gate.findings import Finding
from stet_lsp.gate.homepaths import RULE as HOME_PATH_RULE
from stet_lsp.gate.homepaths import normalize_counted
from stet_lsp.gate.jsonaware import json_decodings
from stet_lsp.gate.parts import pieces, pieces_held
from stet_lsp.gate.report import RedactionReport

if TYPE_CHECKING:
    from stet_lsp.gate.config import GateConfig

MARKER = re.compile(r"\[REDACTED:([a-z0-9-]+)#(\d{1,18})\]")
"""The marker a redacted span is replaced by. Its number has at most 18 digits: a text
can hold anything that looks like a marker, and Python reads no number of over 4,300 digits
(ValueError); a longer one is text, not a marker."""


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
        return bool(self.findings) or self.report.total > 0


def redact_text(
    text: str,
    *,
    config: GateConfig | None = None,
    path: str | None = None,
    json_mode: bool | None = None,
    cache: ResultCache | None = DEFAULT_CACHE,
) -> RedactionResult:
    """Every secret replaced by its marker, then every home path by `~`."""
    from stet_lsp.gate.scan import scan_text  # the rules; apply_redaction alone needs none

    findings = scan_text(text, config=config, path=path, json_mode=json_mode, cache=cache)
    return apply_redaction(text, findings, path=path)


def apply_redaction(
    text: str,
    findings: Sequence[Finding],
    *,
    path: str | None = None,
    numbering: Numbering | None = None,
) -> RedactionResult:
    """Replace the given findings of `text` (as returned by scan_text on that same text), then
    every home path of the result by `~` (one pass; counted in the report, not located).

    `replacements` are the findings' edits only: positions in the original text. A text
    redacted in parts shares one `numbering` made from the whole text's markers."""
    numbering = numbering or Numbering(used_numbers(text))
    numbering.know(text, findings)
    ordered = sorted(findings, key=lambda f: f.offset)
    replacements: list[Replacement] = []
    pieces: list[str] = []
    position = 0
    for finding in ordered:
        marker = numbering.marker(finding, text[finding.offset : finding.end_offset])
        replacements.append(Replacement(finding, marker))
        pieces.append(text[position : finding.offset])
        pieces.append(marker)
        position = finding.end_offset
    pieces.append(text[position:])
    # Secrets first, on the original text (their spans are valid there), then home paths.
    redacted, homes = normalize_counted("".join(pieces), json_text=_json_text(path))
    return RedactionResult(
        text=redacted,
        findings=list(ordered),
        replacements=replacements,
        report=RedactionReport.from_findings(ordered, path, {HOME_PATH_RULE: homes}),
    )


def _json_text(path: str | None) -> bool:
    """Whether a text's home paths are read as JSON text's: a JSON file's, or a text of no
    known path (which may be JSON)."""
    if path is None:
        return True
    from stet_lsp.gate.scan import is_json_path  # loaded already by whoever scanned the text

    return is_json_path(path)


class Numbering:
    """Marker numbers: per rule, one per distinct value in order of first appearance, after
    the highest number the text already uses for that rule. A part of a value printed
    truncated (stet_lsp/gate/parts.py) has the number of the value a rule found, when that
    value is known (`know`), whichever of them comes first."""

    def __init__(self, used: dict[str, int]) -> None:
        self._used = used
        self._numbers: dict[str, dict[str, int]] = {}
        self._counts: dict[str, int] = {}
        self._wholes: dict[tuple[str, bool, str], list[str]] = {}
        """(rule, at the head, piece): the values known that hold that piece, sorted as read
        from it (backwards for a last piece)."""
        self._known: set[tuple[str, str]] = set()
        self._kept: dict[str, set[int]] = {}
        """Per rule, the numbers `keep` gave: no other value is given them."""

    def know(self, text: str, findings: Sequence[Finding], offset: int = 0) -> None:
        """Learn the values rules found (`findings`, positions in `text` less `offset`),
        whose parts may come before them."""
        for finding in findings:
            if finding.replacement is None and not finding.found_as:
                value = self._value(text[finding.offset - offset : finding.end_offset - offset])
                if (finding.rule, value) in self._known:
                    continue
                self._known.add((finding.rule, value))
                for at_head, piece in pieces(value, finding.rule):
                    known = self._wholes.setdefault((finding.rule, at_head, piece), [])
                    read = value if at_head else value[::-1]
                    at = bisect_left(known, read)
                    if at == len(known) or known[at] != read:
                        known.insert(at, read)

    def keep(self, rule: str, value: str, number: int) -> None:
        """Give `value` the number an earlier redaction of the same content marked it with,
        so that its marker stays the one other texts show for it; a number the text uses
        already, or `keep` gave another value, is not given again (the value is numbered as
        any other)."""
        per_value = self._numbers.setdefault(rule, {})
        kept = self._kept.setdefault(rule, set())
        value = self._value(value)
        if value in per_value or number <= self._used.get(rule, 0) or number in kept:
            return
        kept.add(number)
        per_value[value] = number

    def marker(self, finding: Finding, value: str) -> str:
        if finding.replacement is not None:
            return finding.replacement
        number = self._number(finding.rule, self._value(value), finding.found_as == "part")
        return f"[REDACTED:{finding.rule}#{number}]"

    @staticmethod
    def _value(value: str) -> str:
        """The value a text writes JSON-escaped (`\\"` for `"`, once or more: in JSON text, in
        a JSON document a tool printed, in one inside a JSON string), as it is bare: one
        value, one number, however it is written."""
        return json_decodings(value)[-1]

    def _number(self, rule: str, value: str, part: bool = False) -> int:
        per_value = self._numbers.setdefault(rule, {})
        number = per_value.get(value)
        if number is None:
            whole = self._whole_of(rule, value) if part else None
            if whole is not None:
                number = self._number(rule, whole)
            else:
                kept = self._kept.get(rule, ())
                number = 0
                while not number or number in kept:
                    self._counts[rule] = self._counts.get(rule, 0) + 1
                    number = self._used.get(rule, 0) + self._counts[rule]
            per_value[value] = number
        return number

    def _whole_of(self, rule: str, value: str) -> str | None:
        """The longest value known that `value` is a part of (of equals, the first in order)."""
        best = ""
        for at_head, piece in pieces_held(value, rule):
            known = self._wholes.get((rule, at_head, piece), [])
            read = value if at_head else value[::-1]
            # The values read so that `value` starts them stand together, from where it would.
            for whole in itertools.islice(known, bisect_left(known, read), None):
                if not whole.startswith(read):
                    break
                if len(whole) > max(len(best), len(value)):
                    best = whole if at_head else whole[::-1]
        return best or None


def used_numbers(text: str, highest: dict[str, int] | None = None) -> dict[str, int]:
    """The highest marker number of each rule in `text` (added to `highest` when given)."""
    highest = {} if highest is None else highest
    if "[REDACTED:" not in text:
        return highest
    for match in MARKER.finditer(text):
        rule, number = match.group(1), int(match.group(2))
        highest[rule] = max(highest.get(rule, 0), number)
    return highest
