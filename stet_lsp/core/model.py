"""The style sheet's vocabulary: entries, kinds, authors, statuses, anchors."""

from __future__ import annotations

from datetime import UTC, datetime

from stet_lsp.core.records import FrozenRecord, Record

# The command line starts without the typing module: the aliases exist for the type checker,
# and are built at run time only when something asks for them (a pydantic model's field).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Final, Literal, TypeVar

    Kind = Literal["convention", "ruled-out", "clarification", "markup", "note"]
    Author = Literal["agent", "human"]
    Status = Literal["open", "graduated-trajectory", "graduated-skill", "discarded"]
    _Choice = TypeVar("_Choice", bound=str)

KINDS: tuple[Kind, ...] = ("convention", "ruled-out", "clarification", "markup", "note")
AUTHORS: tuple[Author, ...] = ("agent", "human")
STATUSES: tuple[Status, ...] = ("open", "graduated-trajectory", "graduated-skill", "discarded")

if not TYPE_CHECKING:

    def __getattr__(name: str) -> object:
        """`Kind`, `Author` and `Status` as the Literal types of the values above."""
        values = {"Kind": KINDS, "Author": AUTHORS, "Status": STATUSES}.get(name)
        if values is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        from typing import Literal

        alias = Literal[values]
        globals()[name] = alias
        return alias


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


NO_TIME = datetime(1970, 1, 1, tzinfo=UTC)
"""The `created` of an entry that has no time stored: a line typed into the sheet by hand
(until the next write stores one) or metadata without a `created` key. It is shown as no
time (null in JSON), never as 1970, and never written to the sheet."""


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


def choice(value: str, allowed: tuple[_Choice, ...], what: str) -> _Choice:
    for option in allowed:
        if option == value:
            return option
    raise ValueError(f"unknown {what} {value!r} (expected one of: {', '.join(allowed)})")


class Anchor(FrozenRecord):
    """Where an entry points: a repository-relative path, a 1-based line, and that line's text."""

    __slots__ = ("line", "path", "text")
    path: Final[str]
    line: Final[int]
    text: Final[str]

    def __init__(self, path: str, line: int, text: str) -> None:
        self.path = path
        self.line = line
        self.text = text

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "line": self.line, "text": self.text}


class Entry(Record):
    """One entry of a style sheet. `extra`: metadata keys this version does not know, kept as
    written; `source_line`: the entry's 1-based line in the sheet file it was read from (0:
    not from a file)."""

    __slots__ = (
        "anchor",
        "author",
        "created",
        "extra",
        "id",
        "kind",
        "source_line",
        "status",
        "text",
    )

    def __init__(
        self,
        id: str,
        kind: Kind,
        author: Author,
        text: str,
        created: datetime,
        status: Status = "open",
        anchor: Anchor | None = None,
        extra: dict[str, str] | None = None,
        source_line: int = 0,
    ) -> None:
        self.id = id
        self.kind = kind
        self.author = author
        self.text = text
        self.created = created
        self.status = status
        self.anchor = anchor
        self.extra = {} if extra is None else extra
        self.source_line = source_line

    def copy(self) -> Entry:
        """A copy to change on its own (its `extra` too)."""
        return Entry(
            self.id,
            self.kind,
            self.author,
            self.text,
            self.created,
            self.status,
            self.anchor,
            dict(self.extra),
            self.source_line,
        )

    @property
    def has_time(self) -> bool:
        """False for an entry whose time is not stored yet (`NO_TIME`)."""
        return self.created != NO_TIME

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "author": self.author,
            "status": self.status,
            "text": self.text,
            "created": format_time(self.created) if self.has_time else None,
            "anchor": self.anchor.to_dict() if self.anchor else None,
        }
