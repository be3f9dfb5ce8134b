"""`.stetignore`: gitignore-syntax paths whose content importers never capture."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathspec import GitIgnoreSpec

from stet_lsp.core.errors import StetError
from stet_lsp.core.safefs import read_regular

STETIGNORE = ".stetignore"
OMITTED = "[OMITTED: .stetignore]"
"""What stands in for the content of an ignored path; the path itself is kept."""
MAX_BYTES = 1024 * 1024
"""Read on every import: a list of paths is far smaller, while a repository could commit a
file of gigabytes that git compresses to almost nothing. Larger is an error naming the file
(nothing is imported without knowing what it hides); no more than one byte over it is read."""


@dataclass(frozen=True)
class StetIgnore:
    spec: GitIgnoreSpec | None
    """None when there are no lines (no `.stetignore`): pathspec is not even loaded."""

    @classmethod
    def from_lines(cls, lines: list[str]) -> StetIgnore:
        if not lines:
            return cls(None)
        from pathspec import GitIgnoreSpec  # imported when a .stetignore is read

        # On RE2: a cloned repository's `.stetignore` is read before review, and a pattern of
        # many `*` (`*a*a…*a b`) backtracked for minutes under `re` on one long path.
        try:
            return cls(GitIgnoreSpec.from_lines(lines, backend="re2"))
        except Exception as error:  # re2.error: a pattern RE2 cannot take ([[:digit:]])
            # Refused, not matched another way: what .stetignore hides must not leak.
            raise StetError(
                f"{STETIGNORE}: a pattern cannot be read ({error}); POSIX classes such as "
                "[[:digit:]] are not supported: write [0-9]"
            ) from None

    @classmethod
    def load(cls, repo_root: Path) -> StetIgnore:
        content = read_regular(repo_root / STETIGNORE, repo_root, limit=MAX_BYTES + 1)
        if content is not None and len(content) > MAX_BYTES:
            raise StetError(
                f"{STETIGNORE}: larger than {MAX_BYTES:,} bytes; not read: shorten it (a list "
                "of paths needs far less)"
            )
        try:
            lines = content.decode("utf-8").splitlines() if content is not None else []
        except UnicodeDecodeError as error:
            raise StetError(f"{STETIGNORE}: cannot read: {error}") from error
        return cls.from_lines(lines)

    @property
    def empty(self) -> bool:
        """Whether it ignores nothing (no file, or only comments and blank lines)."""
        return self.spec is None or all(pattern.include is None for pattern in self.spec.patterns)

    def matches(self, relpath: str) -> bool:
        """Whether the content at `relpath` (relative to the repository root) is excluded."""
        if self.spec is None or self.empty:
            return False
        normalized = relpath.replace("\\", "/")
        while normalized.startswith("./"):
            normalized = normalized[2:]
        if not normalized or normalized.startswith("/") or ".." in PurePosixPath(normalized).parts:
            return False
        return self.spec.match_file(normalized)

    def omit(self, relpath: str, content: str) -> str:
        """The content to capture for `relpath`: itself, or a marker when ignored."""
        return OMITTED if self.matches(relpath) else content
