"""The reviewed allowlist: `.stet/gate-allowlist.toml`, exact values and whole-value patterns.

It lives in the repository and changes only through review. Nothing inside scanned content can
switch the gate off: there is no in-line pragma.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from stet_lsp.core.digests import sha256
from stet_lsp.core.errors import StetError
from stet_lsp.core.safefs import read_regular

ALLOWLIST_PATH = Path(".stet") / "gate-allowlist.toml"


@dataclass(frozen=True)
class Allowlist:
    values: frozenset[str] = frozenset()
    patterns: tuple[re.Pattern[str], ...] = ()
    digest: str = field(default="", compare=False)
    """Identifies the allowlist's content in cache keys."""

    def allows(self, value: str) -> bool:
        return value in self.values or any(p.fullmatch(value) for p in self.patterns)

    @classmethod
    def from_entries(cls, values: list[str], patterns: list[str], *, source: str = "") -> Allowlist:
        compiled = []
        for pattern in patterns:
            try:
                regex = re.compile(pattern)
            except re.error as error:
                raise StetError(
                    f"{source or 'allowlist'}: invalid pattern {pattern!r}: {error}"
                ) from error
            if regex.fullmatch("") is not None:
                raise StetError(
                    f"{source or 'allowlist'}: pattern {pattern!r} matches the empty string;"
                    " allowlist patterns must name specific values"
                )
            compiled.append(regex)
        material = "\0".join(["values", *sorted(values), "patterns", *patterns])
        digest = sha256(material.encode("utf-8")).hexdigest()[:16]
        return cls(frozenset(values), tuple(compiled), digest)

    @classmethod
    def load(cls, repo_root: Path) -> Allowlist | None:
        content = read_regular(repo_root / ALLOWLIST_PATH, repo_root)
        if content is None:
            return None
        import tomllib  # only a repository with an allowlist pays for the TOML parser

        try:
            data = tomllib.loads(content.decode("utf-8"))
        except (UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
            raise StetError(f"{ALLOWLIST_PATH}: cannot read: {error}") from error
        values = data.get("values", [])
        patterns = data.get("patterns", [])
        if not _is_string_list(values) or not _is_string_list(patterns):
            raise StetError(f"{ALLOWLIST_PATH}: `values` and `patterns` must be lists of strings")
        unknown = set(data) - {"values", "patterns"}
        if unknown:
            raise StetError(f"{ALLOWLIST_PATH}: unknown keys: {', '.join(sorted(unknown))}")
        return cls.from_entries(values, patterns, source=str(ALLOWLIST_PATH))


def _is_string_list(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)
