"""The redaction report kept in a trajectory's metadata: rules, counts, places; no values."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from stet_lsp.gate.findings import Finding
from stet_lsp.gate.rules import RULESET_VERSION


@dataclass(frozen=True)
class Location:
    path: str | None
    line: int
    column: int
    end_line: int
    end_column: int

    def to_dict(self) -> dict[str, object]:
        data: dict[str, object] = {} if self.path is None else {"path": self.path}
        data.update(
            line=self.line, column=self.column, end_line=self.end_line, end_column=self.end_column
        )
        return data


@dataclass(frozen=True)
class RedactionReport:
    locations: dict[str, tuple[Location, ...]] = field(default_factory=dict)
    """Rule name -> where it redacted, in text order."""

    @classmethod
    def from_findings(cls, findings: Iterable[Finding], path: str | None = None) -> RedactionReport:
        by_rule: dict[str, list[Location]] = {}
        for finding in findings:
            by_rule.setdefault(finding.rule, []).append(
                Location(path, finding.line, finding.column, finding.end_line, finding.end_column)
            )
        return cls({rule: tuple(places) for rule, places in sorted(by_rule.items())})

    @property
    def total(self) -> int:
        return sum(len(places) for places in self.locations.values())

    def counts(self) -> dict[str, int]:
        return {rule: len(places) for rule, places in self.locations.items()}

    def merge(self, other: RedactionReport) -> RedactionReport:
        rules = sorted(set(self.locations) | set(other.locations))
        return RedactionReport(
            {
                rule: tuple(
                    sorted(
                        self.locations.get(rule, ()) + other.locations.get(rule, ()),
                        key=lambda p: (p.path or "", p.line, p.column),
                    )
                )
                for rule in rules
            }
        )

    def to_dict(self) -> dict[str, object]:
        return {
            "ruleset": RULESET_VERSION,
            "total": self.total,
            "rules": {
                rule: {"count": len(places), "locations": [p.to_dict() for p in places]}
                for rule, places in self.locations.items()
            },
        }
