"""The reviewed allowlist: `.stet/gate-allowlist.toml`, exact values and whole-value patterns.

It lives in the repository and changes only through review. Nothing inside scanned content can
switch the gate off: there is no in-line pragma.

Patterns run on RE2, whose matching takes time linear in the text: a cloned repository's
allowlist is read before anyone reviewed it, and a pattern Python's `re` backtracks on
(`([a-z]|[a-z])+!`) held the gate, and the editor with it, for ever. RE2 has no look-around
or back-references; a pattern using them is refused with RE2's message.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stet_lsp.core.digests import sha256
from stet_lsp.core.errors import StetError
from stet_lsp.core.safefs import read_regular

ALLOWLIST_PATH = Path(".stet") / "gate-allowlist.toml"
MAX_ALLOWLIST_BYTES = 1024 * 1024
"""A reviewed list of exceptions, read on every gate run: thousands of values fit in far less,
while a repository could commit a file of gigabytes that git compresses to almost nothing.
Larger is an error naming the file; no more than one byte over it is read."""


@dataclass(frozen=True)
class Allowlist:
    values: frozenset[str] = frozenset()
    patterns: tuple[Any, ...] = ()
    """RE2 patterns (`re2._Regexp`: `fullmatch` as `re`'s)."""
    digest: str = field(default="", compare=False)
    """Identifies the allowlist's content in cache keys."""

    def allows(self, value: str) -> bool:
        return value in self.values or any(p.fullmatch(value) for p in self.patterns)

    @classmethod
    def from_entries(cls, values: list[str], patterns: list[str], *, source: str = "") -> Allowlist:
        compiled = []
        for pattern in patterns:
            if "[:" in pattern or "{," in pattern:
                # `re` reads `[[:digit:]]` as a set of characters and `{,3}` as text, RE2 as
                # a class and a repeat: refused rather than read otherwise than written.
                raise StetError(
                    f"{source or 'allowlist'}: pattern {pattern!r}: `[:` and `{{,` read "
                    "differently in RE2 and Python; write [0-9] or {0,3}"
                )
            try:
                regex = _compile(pattern)
            except Exception as error:  # re2.error
                why = error.args[0].decode() if isinstance(error.args[0], bytes) else error
                raise StetError(
                    f"{source or 'allowlist'}: invalid pattern {pattern!r}: {why} (patterns "
                    "run on RE2: no look-around, back-references, atomic groups, possessive "
                    "repeats or \\Z)"
                ) from None
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
        content = read_regular(repo_root / ALLOWLIST_PATH, repo_root, limit=MAX_ALLOWLIST_BYTES + 1)
        if content is None:
            return None
        if len(content) > MAX_ALLOWLIST_BYTES:
            raise StetError(
                f"{ALLOWLIST_PATH}: larger than {MAX_ALLOWLIST_BYTES:,} bytes; not an allowlist "
                "(not read)"
            )
        import tomllib  # only a repository with an allowlist pays for the TOML parser

        try:
            data = tomllib.loads(content.decode("utf-8"))
        except (UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
            raise StetError(f"{ALLOWLIST_PATH}: cannot read: {error}") from error
        except RecursionError:  # arrays or tables nested deeper than the parser goes
            raise StetError(f"{ALLOWLIST_PATH}: cannot read: nested too deeply") from None
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


def _compile(pattern: str) -> Any:
    import re2

    options = re2.Options()
    options.log_errors = False  # the error is raised; RE2 would also write it to stderr
    return re2.compile(pattern, options)
