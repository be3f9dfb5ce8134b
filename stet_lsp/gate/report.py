"""The redaction report kept in a trajectory's metadata: rules, counts, places; no values."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from stet_lsp.gate.findings import Finding


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
    tallies: dict[str, int] = field(default_factory=dict)
    """Normalisations counted, not located (`home-path`: thousands in a transcript)."""

    @classmethod
    def from_findings(
        cls,
        findings: Iterable[Finding],
        path: str | None = None,
        tallies: dict[str, int] | None = None,
    ) -> RedactionReport:
        by_rule: dict[str, list[Location]] = {}
        for finding in findings:
            by_rule.setdefault(finding.rule, []).append(
                Location(path, finding.line, finding.column, finding.end_line, finding.end_column)
            )
        counted = {rule: n for rule, n in sorted((tallies or {}).items()) if n}
        return cls({rule: tuple(places) for rule, places in sorted(by_rule.items())}, counted)

    @property
    def total(self) -> int:
        return sum(self.counts().values())

    def counts(self) -> dict[str, int]:
        counts = {rule: len(places) for rule, places in self.locations.items()}
        for rule, count in self.tallies.items():
            counts[rule] = counts.get(rule, 0) + count
        return dict(sorted(counts.items()))

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
            },
            {
                rule: self.tallies.get(rule, 0) + other.tallies.get(rule, 0)
                for rule in sorted(set(self.tallies) | set(other.tallies))
            },
        )

    def to_dict(self) -> dict[str, object]:
        from stet_lsp.gate.rules import RULESET_VERSION  # compiles the rules: only when asked

        rules: dict[str, dict[str, object]] = {
            rule: {"count": len(places), "locations": [p.to_dict() for p in places]}
            for rule, places in self.locations.items()
        }
        for rule, count in self.tallies.items():
            rules[rule] = {"count": count}
        return {
            "ruleset": RULESET_VERSION,
            "total": self.total,
            "rules": dict(sorted(rules.items())),
        }
