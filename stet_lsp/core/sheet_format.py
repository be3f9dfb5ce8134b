"""The style sheet's Markdown format: parse, edit in place, render.

Every line of the file belongs to exactly one block, and a block nobody changed renders as
the bytes it was read from, so reading and writing back an unchanged sheet is byte-identical
and hand formatting survives. Only entries that changed are rendered in the canonical form.
See docs/style-sheet.md for the format.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import datetime

from stet_lsp.core.digests import sha256
from stet_lsp.core.model import (
    AUTHORS,
    KINDS,
    NO_TIME,
    SECTION_TITLES,
    STATUSES,
    Anchor,
    Entry,
    choice,
    format_time,
    parse_time,
)
from stet_lsp.core.records import FrozenRecord, Record

TYPE_CHECKING = False  # as typing's, without importing typing (start-up of the command line)
if TYPE_CHECKING:
    from typing import Final

    from stet_lsp.core.model import Kind

FORMAT_VERSION = 1

# The patterns of a line take time in proportion to it (a repository can commit a sheet): a
# lazy `(.*?)` before `[ \t#]*$`, or a scan of the rest of the line from every `<!--` or
# letter, took seconds on a line of a few kilobytes and hours on one of a megabyte. A title
# ends at its last character that is not a space or `#`; metadata is looked for only on a
# line ending in `-->`; a field's name starts at a word's start (_FIELD).
_HEADING = re.compile(r"##[ \t]+((?:.*[^ \t#])?)[ \t#]*$")
_BULLET = re.compile(r"[-*+][ \t]+")
# The last `<!-- stet … -->` on the line is the metadata (the greedy text before it may hold
# the same characters; values never do, as "<" and ">" in them are escaped).
_ENTRY_META = re.compile(r"(?=.*-->[ \t]*$)(.*)<!--[ \t]*stet[ \t]+(.*?)[ \t]*-->[ \t]*$")
_SHEET_META = re.compile(r"<!--[ \t]*stet-sheet\b(.*?)-->[ \t]*$")
_BARE_VALUE = re.compile(r"[A-Za-z0-9._:/@+,-]+")
_ID_ALPHABET = "abcdefghijklmnopqrstuvwxyz234567"
_VALUE = r'"(?:[^"\\]|\\.)*"|[^\s"]+'
_CANONICAL_ENTRY = re.compile(
    r"- (\S.*) <!-- stet id=([A-Za-z0-9_-]{1,64}) author=(agent|human) "
    r"status=(open|graduated-trajectory|graduated-skill|discarded) "
    r"created=(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)"
    rf"(?: anchor=({_VALUE}) anchor-text=({_VALUE}))? -->"
)
_FIELD = re.compile(rf"(?<![\w-])([A-Za-z][\w-]*+)=({_VALUE})")  # from a word's start only
_ANCHOR_LINE = re.compile(r"[0-9]{1,10}")
SHEET_LIMIT = 8 * 2**20
"""The most bytes of a sheet that are read (a sheet a cloned repository committed could hold
gigabytes that git stores in a few); a larger one is refused."""
_LINE_LIMIT = 2**31 - 1  # the editor protocol's line numbers are 32-bit
# A lone surrogate can come from a JSON escape ("\ud800") or an editor's buffer, never from a
# decoded file; UTF-8 cannot store it.
_SURROGATE = re.compile("[\ud800-\udfff]")
_HAS_SURROGATE = "it holds a lone surrogate, which UTF-8 cannot store"
_CONTINUING = frozenset(" \t\r\n")  # a next line starting so may continue the entry

# A heading names its kind by title or by kind id, case-insensitively.
_TITLE_TO_KIND: dict[str, Kind] = {
    **{title.lower(): kind for kind, title in SECTION_TITLES.items()},
    **{kind: kind for kind in KINDS},
    "ruled out": "ruled-out",
}


class Problem(FrozenRecord):
    """Something in the sheet that could not be read as an entry; it is kept as written."""

    __slots__ = ("code", "line", "message")
    line: Final[int]
    code: Final[str]
    message: Final[str]

    def __init__(self, line: int, code: str, message: str) -> None:
        self.line = line
        self.code = code
        self.message = message

    def to_dict(self) -> dict[str, object]:
        return {"line": self.line, "code": self.code, "message": self.message}


class SheetMeta(Record):
    """The sheet's header: whose sheet it is, whether it is paused, and the keys this version
    does not know (`extra`, kept as written)."""

    __slots__ = ("extra", "paused", "paused_until", "target_kind", "target_name")

    def __init__(
        self,
        target_kind: str,
        target_name: str,
        paused: bool = False,
        paused_until: datetime | None = None,
        extra: dict[str, str] | None = None,
    ) -> None:
        self.target_kind = target_kind
        self.target_name = target_name
        self.paused = paused
        self.paused_until = paused_until
        self.extra = {} if extra is None else extra

    def copy(self) -> SheetMeta:
        """A copy to change on its own (its `extra` too)."""
        return SheetMeta(
            self.target_kind, self.target_name, self.paused, self.paused_until, dict(self.extra)
        )


class RawBlock(Record):
    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


class EntryBlock(Record):
    __slots__ = ("entry", "hand_written", "raw")

    def __init__(self, entry: Entry, raw: str | None, hand_written: bool = False) -> None:
        self.entry = entry
        self.raw = raw
        """The source text; None once the entry changed and must be rendered anew."""
        self.hand_written = hand_written
        """Written by a person without metadata: it gets its id stored at the next write."""


Block = RawBlock | EntryBlock


class Section(Record):
    __slots__ = ("heading", "items", "kind")

    def __init__(self, heading: str, kind: Kind | None, items: list[Block] | None = None) -> None:
        self.heading = heading
        self.kind = kind
        self.items: list[Block] = [] if items is None else items


def encode_value(value: str) -> str:
    if _BARE_VALUE.fullmatch(value) and "--" not in value:
        return value
    # Escaping "<" and ">" keeps "<!--" and "-->" out of the comment whatever the value holds.
    quoted = json.dumps(value, ensure_ascii=False)
    return quoted.replace("<", "\\u003c").replace(">", "\\u003e").replace("--", "-\\u002d")


def decode_value(key: str, raw: str) -> str:
    """The value of field `key` as written (`raw`); ValueError naming the key when it cannot
    be read or holds a lone surrogate."""
    if not raw.startswith('"'):
        value = raw
    else:
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as error:
            reason = f"{key} {_shown(raw)} is not a valid quoted value ({error.msg})"
            raise ValueError(reason) from None
        if not isinstance(value, str):
            raise ValueError(f"{key} {_shown(raw)} is not a string")
    if not value.isascii() and _SURROGATE.search(value):
        raise ValueError(f"{key} {_shown(raw)} holds a lone surrogate, which UTF-8 cannot store")
    return value


def read_fields(text: str) -> tuple[dict[str, str], list[str]]:
    """The fields of a metadata comment, and why each part that could not be read was not."""
    fields: dict[str, str] = {}
    errors: list[str] = []
    position = 0
    for match in _FIELD.finditer(text):
        if text[position : match.start()].strip():
            errors.append(f"cannot read {_shown(text[position : match.start()].strip())}")
        try:
            fields[match.group(1)] = decode_value(match.group(1), match.group(2))
        except ValueError as error:
            errors.append(str(error))
        position = match.end()
    if text[position:].strip():
        errors.append(f"cannot read {_shown(text[position:].strip())}")
    return fields, errors


def _has_surrogate(text: str) -> bool:
    if text.isascii():
        return False
    try:
        text.encode("utf-8")  # ten times faster than a regex search of a large sheet
    except UnicodeEncodeError:
        return True
    return False


def _shown(value: str) -> str:
    """A value as a message quotes it: quoted values as written, at most 80 characters, on
    one line, with only printable characters (a lone surrogate is shown escaped)."""
    shown = value if value.startswith('"') else f"'{value}'"
    shown = shown if len(shown) <= 80 else shown[:77] + "..."
    return "".join(char if char.isprintable() else repr(char)[1:-1] for char in shown)


def _time(key: str, value: str) -> datetime:
    try:
        return parse_time(value)
    except ValueError:
        raise ValueError(f"{key} {_shown(value)} is not a valid time") from None


def _anchor(value: str, text: str) -> Anchor:
    path, _, number = value.rpartition(":")
    if not path or not _ANCHOR_LINE.fullmatch(number) or not 1 <= int(number) <= _LINE_LIMIT:
        raise ValueError(f"anchor {_shown(value)} is not PATH:LINE with a line from 1 to 2^31-1")
    return Anchor(path, int(number), text.removeprefix("\ufeff"))  # as `anchors.line_key`


def render_fields(fields: dict[str, str]) -> str:
    return " ".join(f"{key}={encode_value(value)}" for key, value in fields.items())


def normalize_text(text: str) -> str:
    """Entry text as stored: no outer blank lines, no trailing spaces, tabs kept."""
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    if lines:
        lines[0] = lines[0].lstrip()
    return "\n".join(lines)


def provisional_id(kind: str, text: str, occurrence: int) -> str:
    """The id a hand-written entry gets: derived from its content, so it is the same id at
    every read until the next write stores it."""
    digest = sha256(f"{kind}\0{text}\0{occurrence}".encode()).digest()
    return "".join(_ID_ALPHABET[byte % 32] for byte in digest[:6])


def render_entry(entry: Entry) -> str:
    fields = {"id": entry.id, "author": entry.author, "status": entry.status}
    if entry.has_time:  # an entry without one is never given 1970
        fields["created"] = format_time(entry.created)
    if entry.anchor is not None:
        fields["anchor"] = f"{entry.anchor.path}:{entry.anchor.line}"
        fields["anchor-text"] = entry.anchor.text
    fields.update(entry.extra)
    first, *rest = entry.text.split("\n")
    lines = [f"- {first} <!-- stet {render_fields(fields)} -->"]
    lines.extend(f"  {line}" if line else "" for line in rest)
    return "\n".join(lines) + "\n"


def _entry_from_fields(kind: Kind, text: str, fields: dict[str, str], line: int) -> Entry:
    known = {"id", "author", "status", "created", "anchor", "anchor-text"}
    if "id" not in fields:
        raise ValueError("id is missing")
    entry_id = fields["id"]
    if not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", entry_id):
        raise ValueError(f"id {_shown(entry_id)} is not 1 to 64 of A-Z a-z 0-9 _ -")
    anchor = None
    if "anchor" in fields:
        anchor = _anchor(fields["anchor"], fields.get("anchor-text", ""))
    return Entry(
        id=entry_id,
        kind=kind,
        author=choice(fields.get("author", "human"), AUTHORS, "author"),
        status=choice(fields.get("status", "open"), STATUSES, "status"),
        text=text,
        created=_time("created", fields["created"]) if "created" in fields else NO_TIME,
        anchor=anchor,
        extra={key: value for key, value in fields.items() if key not in known},
        source_line=line,
    )


class SheetDocument:
    """A parsed style sheet that can be edited in place and rendered back."""

    def __init__(self, preamble: list[str], sections: list[Section]) -> None:
        self.preamble = preamble
        self.sections = sections
        self.problems: list[Problem] = []
        self.meta = SheetMeta("", "")
        self._meta_line: int | None = None
        self._meta_dirty = False
        self._index: dict[str, EntryBlock] | None = None

    # -- reading -----------------------------------------------------------------------

    @classmethod
    def parse(cls, text: str) -> SheetDocument:
        """Never raises: what cannot be read is kept as written and reported in `problems`."""
        lines = text.split("\n")
        ends = [line + "\n" for line in lines[:-1]]
        if lines[-1]:
            ends.append(lines[-1])
        return _Parser(ends, _has_surrogate(text)).parse()

    def entries(self) -> Iterator[Entry]:
        for section in self.sections:
            for item in section.items:
                if isinstance(item, EntryBlock):
                    yield item.entry

    def find(self, entry_id: str) -> Entry | None:
        if self._index is None:
            self._index = {}
            for section in self.sections:
                for item in section.items:
                    if isinstance(item, EntryBlock):
                        self._index[item.entry.id] = item
        block = self._index.get(entry_id)
        return block.entry if block else None

    @property
    def dirty(self) -> bool:
        return self._meta_dirty or any(
            isinstance(item, EntryBlock) and item.raw is None
            for section in self.sections
            for item in section.items
        )

    # -- editing -----------------------------------------------------------------------

    def set_meta(self, meta: SheetMeta) -> None:
        self.meta = meta
        self._meta_dirty = True

    def touch(self, entry_id: str) -> None:
        """Mark an entry as changed so it is rendered anew."""
        self.find(entry_id)
        assert self._index is not None
        self._index[entry_id].raw = None

    def adopt_hand_written(self, moment: datetime) -> None:
        """Store ids (and this creation time) for the entries a person wrote by hand."""
        for section in self.sections:
            for item in section.items:
                if isinstance(item, EntryBlock) and item.hand_written:
                    item.hand_written = False
                    item.raw = None
                    item.entry.created = moment

    def add(self, entry: Entry) -> None:
        section = self._section_for(entry.kind)
        position = len(section.items)
        while position > 0 and _is_blank(section.items[position - 1]):
            position -= 1
        if position == 0 and section.items:
            position = 1  # after the blank line under the heading
        if position > 0:
            end_with_newline(section.items[position - 1])
        else:
            _end_line(section)  # a heading that ends the text
        section.items.insert(position, EntryBlock(entry, None))
        if position == len(section.items) - 1 and section is not self.sections[-1]:
            section.items.append(RawBlock("\n"))
        if self._index is not None:
            self._index[entry.id] = section.items[position]  # type: ignore[assignment]

    def _section_for(self, kind: Kind) -> Section:
        for section in self.sections:
            if section.kind == kind:
                return section
        order = KINDS.index(kind)
        position = len(self.sections)
        for number, section in enumerate(self.sections):
            if section.kind is not None and KINDS.index(section.kind) > order:
                position = number
                break
        before = self.sections[position - 1].items if position > 0 else None
        if before is not None:
            _end_line(self.sections[position - 1])
            if before and not _is_blank(before[-1]):
                before.append(RawBlock("\n"))
        elif self.preamble:
            if not self.preamble[-1].endswith("\n"):
                self.preamble[-1] += "\n"
            if self.preamble[-1].strip():
                self.preamble.append("\n")
        section = Section(f"## {SECTION_TITLES[kind]}\n", kind, [RawBlock("\n")])
        self.sections.insert(position, section)
        return section

    # -- writing -----------------------------------------------------------------------

    def render(self) -> str:
        parts = list(self.preamble)
        if self._meta_dirty:
            rendered = render_sheet_meta(self.meta)
            if self._meta_line is None:
                insert_at = 1 if parts and parts[0].startswith("# ") else 0
                parts.insert(insert_at, rendered)
            else:
                ending = "\r\n" if parts[self._meta_line].endswith("\r\n") else "\n"
                parts[self._meta_line] = rendered.rstrip("\n") + ending
        for section in self.sections:
            parts.append(section.heading)
            for item in section.items:
                if isinstance(item, RawBlock):
                    parts.append(item.text)
                else:
                    parts.append(item.raw if item.raw is not None else render_entry(item.entry))
        return "".join(parts)


# A line that is neither blank, indented, a heading, a comment nor a "- " bullet.
_UNUSUAL_LINE = re.compile(r"\n(?:[^ \t\r\n#<-]|-[^ ]|<(?!!--))")
# A "- " bullet without a metadata comment at its end (its text may mention one); each
# lookahead scans the line once, however many comments it holds.
_BARE_BULLET = re.compile(r"\n- (?!(?=[^\n]* <!-- stet )[^\n]*-->[ \t\r]*(?:\n|$))")


def _may_have_hand_written(text: str, start: int) -> bool:
    """False only when every line from `start` is one Stet could have written: then no line
    is a hand-written entry waiting for its id. (Cheaper than a per-line look.)"""
    begin = start - 1 if start else 0
    return (
        _UNUSUAL_LINE.search(text, begin) is not None
        or _BARE_BULLET.search(text, begin) is not None
    )


def _headings(text: str) -> Iterator[tuple[int, int, str]]:
    """(start, end, title) of each `## ` heading line, found without a regex scan of every
    line (a large sheet has thousands of lines and a handful of headings)."""
    start = 0 if text.startswith("##") else text.find("\n##") + 1
    while start >= 0 and (start > 0 or text.startswith("##")):
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        match = _HEADING.match(text[start:end].rstrip("\r"))
        if match:
            yield start, end, match.group(1)
        following = text.find("\n##", end)
        start = following + 1 if following >= 0 else -1


def header_of(text: str) -> SheetDocument:
    """Only the part before the first section: the title, metadata and prose."""
    first = next(_headings(text), None)
    return SheetDocument.parse(text if first is None else text[: first[0]])


def insert_entry(text: str, entry: Entry) -> str | None:
    """`text` with `entry` added where `SheetDocument.add` would put it, without parsing every
    entry (adding to a large sheet stays fast); None when that needs a full parse: a section
    to create, hand-written lines to adopt, or an unusual layout."""
    headings = list(_headings(text))
    if not headings or _may_have_hand_written(text, headings[0][0]):
        return None
    kinds = [_TITLE_TO_KIND.get(title.strip().lower()) for _, _, title in headings]
    if entry.kind not in kinds:
        return None
    number = kinds.index(entry.kind)
    if headings[number][1] == len(text):
        return None
    start = headings[number][1] + 1
    is_last = number == len(headings) - 1
    end = len(text) if is_last else headings[number + 1][0]
    body = text[start:end]
    newline = body.find("\n", len(body.rstrip()))
    if body and newline < 0:
        return None
    at = start + (newline + 1 if body else 0)
    rendered = render_entry(entry)
    if at == end and not is_last:
        rendered += "\n"
    return text[:at] + rendered + text[at:]


def written_name(name: str) -> str:
    """A target's name as a sheet's header holds it: a byte of a branch's name that is not
    UTF-8 (a lone surrogate here) is written U+FFFD, as the sheet's writer writes it."""
    return "".join("\ufffd" if "\ud800" <= char <= "\udfff" else char for char in name)


def render_sheet_meta(meta: SheetMeta) -> str:
    fields = {"version": str(FORMAT_VERSION), "kind": meta.target_kind, "target": meta.target_name}
    if meta.paused:
        fields["paused"] = "true"
        if meta.paused_until is not None:
            fields["paused-until"] = format_time(meta.paused_until)
    fields.update(meta.extra)
    return f"<!-- stet-sheet {render_fields(fields)} -->\n"


def new_document(target_kind: str, target_name: str, label: str) -> SheetDocument:
    title = "".join(char if char.isprintable() else "\ufffd" for char in label)
    preamble = [
        f"# Style sheet: {title}\n",
        "PLACEHOLDER",
        "\n",
        "Working memory for this target: local to this machine, never committed. Agents and\n",
        "people both write here. Edit freely: a line you add under a heading becomes an entry\n",
        "at the next write. An entry becomes durable only by graduation.\n",
        "\n",
    ]
    sections = [Section(f"## {SECTION_TITLES[kind]}\n", kind, [RawBlock("\n")]) for kind in KINDS]
    document = SheetDocument(preamble, sections)
    document._meta_line = 1
    document.set_meta(SheetMeta(target_kind, target_name))
    return document


def _is_blank(item: Block) -> bool:
    return isinstance(item, RawBlock) and not item.text.strip()


def end_with_newline(item: Block) -> None:
    """Make the block end its last line (a block inserted after it starts a line)."""
    if isinstance(item, RawBlock):
        if not item.text.endswith("\n"):
            item.text += "\n"
    elif item.raw is not None and not item.raw.endswith("\n"):
        item.raw += "\n"


def _end_line(section: Section) -> None:
    """Make the section's last line (its heading when it has no lines) end with a line
    break: a sheet saved without a final one may end in any of them."""
    if section.items:
        end_with_newline(section.items[-1])
    elif not section.heading.endswith("\n"):
        section.heading += "\n"


def _unindent(line: str) -> str:
    """Continuation lines are indented by two spaces (or a tab); deeper indentation is text."""
    for prefix in ("  ", "\t", " "):
        if line.startswith(prefix):
            return line[len(prefix) :]
    return line


class _Parser:
    def __init__(self, lines: list[str], surrogates: bool = False) -> None:
        self.lines = lines
        self.surrogates = surrogates
        self.problems: list[Problem] = []
        self.first_seen: dict[str, int] = {}
        self.occurrences: dict[tuple[str, str], int] = {}

    def parse(self) -> SheetDocument:
        lines = self.lines
        count = len(lines)
        number = 0
        preamble: list[str] = []
        meta_line: int | None = None
        meta: SheetMeta | None = None
        while number < count and not _HEADING.match(lines[number].rstrip("\r\n")):
            match = _SHEET_META.match(lines[number].rstrip("\r\n"))
            if match and meta_line is None:
                meta_line = len(preamble)
                meta = self._sheet_meta(match.group(1), number + 1)
            preamble.append(lines[number])
            number += 1
        sections: list[Section] = []
        while number < count:
            heading = lines[number]
            title = _HEADING.match(heading.rstrip("\r\n"))
            assert title is not None
            kind = _TITLE_TO_KIND.get(title.group(1).strip().lower())
            if kind is None:
                self.problems.append(
                    Problem(
                        number + 1,
                        "unknown-section",
                        f"unknown section {title.group(1)!r}: its lines are kept but are "
                        f"not entries (sections: {', '.join(SECTION_TITLES.values())})",
                    )
                )
            section = Section(heading, kind)
            sections.append(section)
            number = self._section_body(section, number + 1)
        document = SheetDocument(preamble, sections)
        document.problems = self.problems
        document._meta_line = meta_line
        if meta is not None:
            document.meta = meta
        return document

    def _sheet_meta(self, text: str, line: int) -> SheetMeta:
        """The header's values; one that cannot be read is reported and the others used. An
        unreadable `paused-until` leaves a paused sheet paused with no end."""
        fields, errors = read_fields(text)
        errors = [f"{error}; the header's other values are used" for error in errors]
        until = fields.pop("paused-until", None)
        meta = SheetMeta(
            target_kind=fields.pop("kind", ""),
            target_name=fields.pop("target", ""),
            paused=fields.pop("paused", "false") == "true",
        )
        if until:
            try:
                meta.paused_until = _time("paused-until", until)
            except ValueError as bad:
                end = "the sheet stays paused until `stet resume`" if meta.paused else "ignored"
                errors.append(f"{bad}; {end}")
        fields.pop("version", None)
        meta.extra = fields
        for error in errors:
            self.problems.append(Problem(line, "malformed-header", f"sheet header: {error}"))
        return meta

    def _section_body(self, section: Section, number: int) -> int:
        lines = self.lines
        count = len(lines)
        items = section.items
        kind = section.kind
        canonical = _CANONICAL_ENTRY.fullmatch
        while number < count:
            line = lines[number]
            if kind is not None and line[:2] == "- ":
                # Fast path: one line as Stet writes it, followed by the start of another block.
                following = lines[number + 1][:1] if number + 1 < count else "\n"
                if following not in _CONTINUING:
                    match = canonical(line.rstrip("\r\n"))
                    if match is not None:
                        items.append(self._canonical_entry(kind, number, match))
                        number += 1
                        continue
            bare = line.rstrip("\r\n")
            if bare.startswith("##") and _HEADING.match(bare):
                break
            if not bare.strip():
                items.append(RawBlock(line))
                number += 1
                continue
            if bare[0] in " \t":
                self.problems.append(
                    Problem(number + 1, "stray-line", "indented line outside an entry: kept as is")
                )
                items.append(RawBlock(line))
                number += 1
                continue
            if section.kind is None or bare[0] == "#" or bare.startswith("<!--"):
                items.append(RawBlock(line))
                number += 1
                continue
            end = number + 1
            last = number
            while end < count:
                following = lines[end].rstrip("\r\n")
                if following and following[0] in " \t" and following.strip():
                    last = end
                elif following.strip():
                    break
                end += 1
            items.append(self._entry_block(section.kind, number, last + 1))
            number = last + 1
        return number

    def _entry_block(self, kind: Kind, start: int, stop: int) -> Block:
        if stop == start + 1:
            match = _CANONICAL_ENTRY.fullmatch(self.lines[start].rstrip("\r\n"))
            if match is not None:
                return self._canonical_entry(kind, start, match)
        raw_lines = self.lines[start:stop]
        raw = "".join(raw_lines)
        if self.surrogates and _SURROGATE.search(raw):
            return self._malformed(start, raw, _HAS_SURROGATE)
        first = raw_lines[0].rstrip("\r\n")
        bullet = _BULLET.match(first)
        if bullet:
            first = first[bullet.end() :]
        meta = _ENTRY_META.match(first) if "<!--" in first else None
        if meta:
            first = meta.group(1)
        text = first.rstrip()
        if len(raw_lines) > 1:
            rest = [_unindent(line.rstrip("\r\n").rstrip()) for line in raw_lines[1:]]
            if meta is None:
                # A person broke the first line in their editor: the metadata comment now
                # ends a continuation line, and is still the entry's.
                ending = [n for n, line in enumerate(rest) if "<!--" in line]
                ending = [n for n in ending if _ENTRY_META.match(rest[n])]
                if len(ending) > 1:
                    where = ", ".join(str(start + 2 + n) for n in ending)
                    reason = (
                        f"{len(ending)} of its lines end in a metadata comment (lines {where}), "
                        "so which one is its metadata is unclear; an entry has one"
                    )
                    return self._malformed(start, raw, reason)
                if ending:
                    meta = _ENTRY_META.match(rest[ending[0]])
                    assert meta is not None
                    before = meta.group(1).rstrip()
                    if before.strip():
                        rest[ending[0]] = before
                    else:  # a line holding only the comment is no line of the text
                        del rest[ending[0]]
            text = normalize_text(text + "\n" + "\n".join(rest))
        if meta is None:
            if not text:
                return RawBlock(raw)  # a bare bullet holds no entry yet
            key = (kind, text)
            occurrence = self.occurrences.get(key, 0)
            self.occurrences[key] = occurrence + 1
            entry = Entry(
                id=provisional_id(kind, text, occurrence),
                kind=kind,
                author="human",
                text=text,
                created=NO_TIME,  # set when the entry is adopted at the next write
                source_line=start + 1,
            )
            return self._register(EntryBlock(entry, raw, hand_written=True), start, raw)
        fields, errors = read_fields(meta.group(2))
        if errors:
            return self._malformed(start, raw, "; ".join(errors))
        try:
            entry = _entry_from_fields(kind, text, fields, start + 1)
        except ValueError as error:
            return self._malformed(start, raw, str(error))
        if not text:
            return self._malformed(start, raw, "it has no text")
        return self._register(EntryBlock(entry, raw), start, raw)

    def _canonical_entry(self, kind: Kind, start: int, match: re.Match[str]) -> Block:
        """The common case, an entry as Stet writes it on one line, read with one regex."""
        text, entry_id, author, status, created, anchor, anchor_text = match.groups()
        raw = self.lines[start]
        if self.surrogates and _SURROGATE.search(raw):
            return self._malformed(start, raw, _HAS_SURROGATE)
        try:
            moment = datetime.fromisoformat(created)
        except ValueError:
            return self._malformed(start, raw, f"created {_shown(created)} is not a valid time")
        entry = Entry(
            id=entry_id,
            kind=kind,
            author=author,  # type: ignore[arg-type]  # the regex admits only valid values
            status=status,  # type: ignore[arg-type]
            text=text.rstrip(),
            created=moment,
            anchor=None,
            source_line=start + 1,
        )
        if anchor is not None:
            try:
                path = decode_value("anchor", anchor)
                entry.anchor = _anchor(path, decode_value("anchor-text", anchor_text))
            except ValueError as error:
                return self._malformed(start, raw, str(error))
        return self._register(EntryBlock(entry, raw), start, raw)

    def _malformed(self, start: int, raw: str, reason: str) -> RawBlock:
        message = f"entry: {reason}; kept as written, not read as an entry"
        self.problems.append(Problem(start + 1, "malformed-entry", message))
        return RawBlock(raw)

    def _register(self, block: EntryBlock, start: int, raw: str) -> Block:
        entry_id = block.entry.id
        if entry_id in self.first_seen:
            self.problems.append(
                Problem(
                    start + 1,
                    "duplicate-id",
                    f"duplicate id {entry_id} (first at line {self.first_seen[entry_id]}): "
                    "kept as written, not read as an entry",
                )
            )
            return RawBlock(raw)
        self.first_seen[entry_id] = start + 1
        return block


__all__ = [
    "FORMAT_VERSION",
    "Block",
    "EntryBlock",
    "Problem",
    "RawBlock",
    "Section",
    "SheetDocument",
    "SheetMeta",
    "new_document",
    "normalize_text",
    "render_entry",
]
