"""The style sheet's vocabulary: entries, kinds, authors, statuses, anchors."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal, TypeVar, get_args

Kind = Literal["convention", "ruled-out", "clarification", "markup", "note"]
Author = Literal["agent", "human"]
Status = Literal["open", "graduated-trajectory", "graduated-skill", "discarded"]

KINDS: tuple[Kind, ...] = get_args(Kind)
AUTHORS: tuple[Author, ...] = get_args(Author)
STATUSES: tuple[Status, ...] = get_args(Status)

SECTION_TITLES: dict[Kind, str] = {
    "convention": "Conventions",
    "ruled-out": "Ruled out",
    "clarification": "Clarifications",
    "markup": "Margin markup",
    "note": "Notes",
}


def utc_now() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)


def format_time(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(text: str) -> datetime:
    """ISO 8601, as UTC; a bare date means its midnight UTC, a naive time is taken as UTC.
    ValueError also for a time that UTC cannot hold (9999-12-31T23:59:59-01:00)."""
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if not moment.tzinfo:
        return moment.replace(tzinfo=UTC)
    try:
        return moment.astimezone(UTC)
    except OverflowError:
        raise ValueError(f"{text} is out of range") from None


_Choice = TypeVar("_Choice", bound=str)


def choice(value: str, allowed: tuple[_Choice, ...], what: str) -> _Choice:
    for option in allowed:
        if option == value:
            return option
    raise ValueError(f"unknown {what} {value!r} (expected one of: {', '.join(allowed)})")


@dataclass(frozen=True)
class Anchor:
    """Where an entry points: a repository-relative path, a 1-based line, and that line's text."""

    path: str
    line: int
    text: str

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "line": self.line, "text": self.text}


@dataclass
class Entry:
    id: str
    kind: Kind
    author: Author
    text: str
    created: datetime
    status: Status = "open"
    anchor: Anchor | None = None
    extra: dict[str, str] = field(default_factory=dict)
    """Metadata keys this version does not know, kept as written."""
    source_line: int = 0
    """1-based line of the entry in the sheet file it was read from (0: not from a file)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "author": self.author,
            "status": self.status,
            "text": self.text,
            "created": format_time(self.created),
            "anchor": self.anchor.to_dict() if self.anchor else None,
        }
