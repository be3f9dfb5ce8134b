"""The Markdown format: byte-identical round trips, hand edits read, malformed parts kept."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from stet_lsp.core.model import KINDS, Anchor, Entry
from stet_lsp.core.sheet_format import SheetDocument, insert_entry, new_document

MOMENT = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)

line_text = st.text(
    alphabet=st.characters(
        blacklist_categories=("Cs", "Cc", "Zl", "Zp"), blacklist_characters="\x85"
    ),
    min_size=1,
    max_size=40,
).filter(lambda text: text.strip())

entry_text = (
    st.lists(st.one_of(line_text, st.just("")), min_size=1, max_size=4)
    .map(lambda lines: "\n".join(line.rstrip() for line in lines).strip("\n"))
    .filter(lambda text: text.strip() and text.strip("\n") == text and not text[0].isspace())
)

entries = st.builds(
    lambda number, kind, author, text, anchored: Entry(
        id=f"e{number}",
        kind=kind,
        author=author,
        text=text,
        created=MOMENT,
        anchor=Anchor("src/a b.py", 3, "x = '-->' # \"q\"") if anchored else None,
    ),
    st.integers(0, 10**6),
    st.sampled_from(KINDS),
    st.sampled_from(["agent", "human"]),
    entry_text,
    st.booleans(),
)


def build(items: list[Entry]) -> str:
    document = new_document("branch", "feature/x", "feature/x")
    seen = set()
    for item in items:
        if item.id not in seen:
            seen.add(item.id)
            document.add(item)
    return document.render()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(entries, max_size=12))
def test_written_entries_read_back_exactly(items: list[Entry]) -> None:
    text = build(items)
    document = SheetDocument.parse(text)
    assert document.problems == []
    unique = {item.id: item for item in reversed(items)}
    read = {entry.id: entry for entry in document.entries()}
    assert set(read) == set(unique)
    for entry_id, entry in read.items():
        original = unique[entry_id]
        assert (entry.text, entry.kind, entry.author, entry.anchor, entry.created) == (
            original.text.strip(),
            original.kind,
            original.author,
            original.anchor,
            original.created,
        )
    assert document.render() == text


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=400))
def test_any_text_renders_back_byte_identical(text: str) -> None:
    assert SheetDocument.parse(text).render() == text


@settings(max_examples=200, deadline=None)
@given(st.lists(entries, min_size=1, max_size=6), st.lists(line_text, min_size=1, max_size=4))
def test_hand_added_lines_become_entries_and_nothing_is_lost(
    items: list[Entry], added: list[str]
) -> None:
    text = build(items)
    added = [line.strip() for line in added]
    hand = "".join(f"- {line}\n" for line in added)
    edited = text.replace("## Notes\n\n", "## Notes\n\n" + hand)
    document = SheetDocument.parse(edited)
    assert document.render() == edited
    notes = [entry for entry in document.entries() if entry.kind == "note"]
    assert [entry.text for entry in notes][: len(added)] == added
    assert all(entry.author == "human" for entry in notes[: len(added)])
    # The next write stores their ids and keeps every other byte.
    document.adopt_hand_written(MOMENT)
    written = document.render()
    again = SheetDocument.parse(written)
    assert [entry.id for entry in again.entries()] == [entry.id for entry in document.entries()]
    assert again.render() == written
    assert all(entry.created == MOMENT for entry in again.entries() if entry.kind == "note")


SHEET = """# Style sheet: main
<!-- stet-sheet version=1 kind=branch target=main -->

Intro prose stays as written.

## Conventions

- Use the retry helper. <!-- stet id=aaaaaa author=agent status=open created=2026-11-30T10:00:00Z -->
  It wraps errors too.
* A person's own bullet, edited by hand.   <!-- stet id=bbbbbb author=human status=open created=2026-11-30T10:00:00Z -->
A plain line a person typed

## ruled-out

- Broken metadata <!-- stet id=cccccc author=robot status=open -->
- Copied twice <!-- stet id=aaaaaa author=agent status=open created=2026-11-30T10:00:00Z -->
    stray indentation after a blank line belongs to the entry above

## Ideas

- not a known section
"""


def test_hand_edits_are_read_and_malformed_parts_reported_with_lines() -> None:
    document = SheetDocument.parse(SHEET)
    assert document.render() == SHEET
    found = {entry.id: entry for entry in document.entries()}
    assert found["aaaaaa"].text == "Use the retry helper.\nIt wraps errors too."
    assert found["bbbbbb"].text == "A person's own bullet, edited by hand."
    plain = [entry for entry in found.values() if entry.text == "A plain line a person typed"]
    assert plain and plain[0].author == "human" and plain[0].kind == "convention"
    problems = [(problem.line, problem.code) for problem in document.problems]
    assert problems == [(15, "malformed-entry"), (16, "duplicate-id"), (19, "unknown-section")]
    assert "robot" in document.problems[0].message


def test_an_edit_rewrites_only_the_changed_entry() -> None:
    document = SheetDocument.parse(SHEET)
    entry = document.find("bbbbbb")
    assert entry is not None
    entry.text = "Edited through Stet."
    document.touch("bbbbbb")
    rendered = document.render()
    assert "- Edited through Stet. <!-- stet id=bbbbbb" in rendered
    untouched = SHEET.splitlines()
    changed = rendered.splitlines()
    # Every other line, malformed ones included, is still there as written.
    assert [line for line in untouched if "bbbbbb" not in line and "plain line" not in line] == [
        line for line in changed if "bbbbbb" not in line and "plain line" not in line
    ]


def test_crlf_sheets_round_trip() -> None:
    text = SHEET.replace("\n", "\r\n")
    document = SheetDocument.parse(text)
    assert document.render() == text
    assert document.find("aaaaaa") is not None
    assert document.find("aaaaaa").text == "Use the retry helper.\nIt wraps errors too."  # type: ignore[union-attr]


def full_add(text: str, entry: Entry) -> str:
    document = SheetDocument.parse(text)
    document.add(entry)
    return document.render()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(entries, max_size=8),
    entries,
    st.lists(st.sampled_from(["\n", "  \n", "<!-- c -->\n", "### sub\n", "- hand\n"]), max_size=3),
    st.sampled_from(KINDS),
)
@example(  # an entry whose text is "hand": its line is no hand-written one
    [Entry(id="e0", kind="convention", author="agent", text="hand", created=MOMENT)],
    Entry(id="e1", kind="convention", author="agent", text="0", created=MOMENT),
    [],
    "ruled-out",
)
def test_fast_insert_matches_a_full_parse_and_render(
    items: list[Entry], new: Entry, noise: list[str], drop_kind: str
) -> None:
    text = build(items)
    # Vary the layout the way people do: remove a section, add blank lines and comments.
    from stet_lsp.core.model import SECTION_TITLES

    heading = f"## {SECTION_TITLES[drop_kind]}\n\n"  # type: ignore[index]
    text = text.replace(heading, "", 1)
    text = text.replace("## Notes\n", "## Notes\n" + "".join(noise))
    new.id = "zzzzzz"
    fast = insert_entry(text, new)
    if fast is not None:
        assert fast == full_add(text, new)
        # Hand-written lines always take the full path (an entry whose text is "hand" renders
        # as "- hand <!-- stet … -->", which is no hand-written line).
        assert "- hand" not in text.splitlines()
    else:
        assert new.kind == drop_kind or "- hand" in text or not text.endswith("\n")


@pytest.mark.parametrize(
    ("ending", "kind"),
    [
        ("## Notes", "note"),  # its last entry deleted, saved without a final line break
        ("## Notes\n\n  ", "note"),  # a blank line of spaces
        ("## Margin markup", "note"),  # the Notes section deleted: created after it
        ("## Margin markup\n\n ", "note"),
        ("## Ruled out", "clarification"),
    ],
)
def test_an_entry_added_to_a_sheet_ending_without_a_line_break_is_an_entry(
    ending: str, kind: str
) -> None:
    """Editors may save the sheet without a final line break, so the last line of the text
    can be a heading or a blank line of spaces: an entry added after it starts a line of its
    own, and the heading stays a heading."""
    text = build([Entry(id="kept", kind="convention", author="agent", text="A", created=MOMENT)])
    text = text[: text.index(ending.split("\n")[0])] + ending
    new = Entry(id="zzzzzz", kind=kind, author="agent", text="added", created=MOMENT)  # type: ignore[arg-type]
    for added in (full_add(text, new), insert_entry(text, new)):
        if added is None:
            continue  # the fast insert leaves it to the full parse
        written = SheetDocument.parse(added)
        assert [(entry.id, entry.kind) for entry in written.entries()] == [
            ("kept", "convention"),
            ("zzzzzz", kind),
        ]
        assert [problem.code for problem in written.problems] == []


def test_text_and_anchors_that_look_like_metadata_read_back_exactly() -> None:
    tricky = "Write `<!-- stet id=aaaaaa author=agent status=open created=2026-01-01T00:00:00Z -->` by hand"
    anchor = Anchor("a <!-- b -->.py", 2, "x = '<!-- stet id=q -->'  # -->")
    document = new_document("branch", "main", "main")
    document.add(Entry("zzzzzz", "note", "agent", tricky, MOMENT, anchor=anchor))
    document.add(Entry("yyyyyy", "note", "human", "second <!-- stet x", MOMENT))
    text = document.render()
    again = SheetDocument.parse(text)
    assert again.problems == []
    assert [(e.id, e.text, e.anchor) for e in again.entries()] == [
        ("zzzzzz", tricky, anchor),
        ("yyyyyy", "second <!-- stet x", None),
    ]
    assert again.render() == text


# -- an entry's text broken over lines by hand: the metadata comment moves with it ------------

META = (
    "<!-- stet id=wlszwp author=agent status=discarded created=2026-11-30T10:00:00Z "
    'anchor=src/app.py:7 anchor-text="b = 2" -->'
)
BROKEN = {
    "two lines": (
        f"- Keep b at two\n  because the tests pin it {META}\n",
        "Keep b at two\nbecause the tests pin it",
    ),
    "three lines": (
        f"- Keep b\n  at two because\n  the tests pin it {META}\n",
        "Keep b\nat two because\nthe tests pin it",
    ),
    "comment on a middle line": (
        f"- Keep b\n  at two because {META}\n  the tests pin it\n",
        "Keep b\nat two because\nthe tests pin it",
    ),
    "comment on a line of its own": (
        f"- Keep b at two\n  because the tests pin it\n  {META}\n",
        "Keep b at two\nbecause the tests pin it",
    ),
    "tab-indented, CRLF": (
        f"* Keep b at two\r\n\tbecause the tests pin it   {META}  \r\n",
        "Keep b at two\nbecause the tests pin it",
    ),
}


def in_sheet(entry: str) -> str:
    return (
        "# Style sheet: main\n<!-- stet-sheet version=1 kind=branch target=main -->\n\n"
        "## Conventions\n\n"
        f"{entry}"
        "- after <!-- stet id=after1 author=human status=open created=2026-11-30T10:00:00Z -->\n"
    )


@pytest.mark.parametrize("case", list(BROKEN))
def test_an_entry_broken_over_lines_keeps_its_metadata(case: str) -> None:
    written, words = BROKEN[case]
    text = in_sheet(written)
    document = SheetDocument.parse(text)
    assert document.problems == []
    assert [entry.id for entry in document.entries()] == ["wlszwp", "after1"]
    entry = document.find("wlszwp")
    assert entry is not None
    assert (entry.text, entry.author, entry.status, entry.kind, entry.source_line) == (
        words,
        "agent",
        "discarded",
        "convention",
        6,
    )
    assert entry.anchor == Anchor("src/app.py", 7, "b = 2")
    assert entry.created == datetime(2026, 11, 30, 10, 0, tzinfo=UTC)
    assert document.render() == text  # unchanged, it is written back as the person wrote it
    # Changed through Stet, it is written in the canonical form, and reads back the same.
    document.touch("wlszwp")
    rendered = document.render()
    assert rendered.count("<!-- stet id=wlszwp") == 1
    again = SheetDocument.parse(rendered)
    assert again.problems == []
    read = again.find("wlszwp")
    assert read is not None
    assert (read.text, read.status, read.anchor, read.created) == (
        words,
        "discarded",
        entry.anchor,
        entry.created,
    )
    again.touch("wlszwp")
    assert again.render() == rendered


def test_two_metadata_comments_in_an_entry_are_reported() -> None:
    other = "<!-- stet id=other1 author=human status=open created=2026-11-30T10:00:00Z -->"
    written = f"- Keep b\n  at two {META}\n  because the tests pin it {other}\n"
    text = in_sheet(written)
    document = SheetDocument.parse(text)
    assert [entry.id for entry in document.entries()] == ["after1"]  # no new entry either
    assert [(problem.line, problem.code) for problem in document.problems] == [
        (6, "malformed-entry")
    ]
    assert "lines 7, 8" in document.problems[0].message
    assert document.render() == text
    document.touch("after1")
    assert written in document.render()  # kept as written


def test_a_comment_ending_a_later_line_is_text_when_the_first_line_has_the_metadata() -> None:
    """The writer's layout: the first line's comment is the metadata, so a text whose own line
    ends in something like one reads back exactly."""
    words = "Entries end with\n<!-- stet id=abc -->\nat the end of the line <!-- stet x -->"
    document = new_document("branch", "main", "main")
    document.add(Entry("zzzzzz", "note", "agent", words, MOMENT))
    text = document.render()
    again = SheetDocument.parse(text)
    assert again.problems == []
    assert [(entry.id, entry.text) for entry in again.entries()] == [("zzzzzz", words)]
    assert again.render() == text


def test_an_entry_without_a_stored_time_has_none_and_is_never_given_1970() -> None:
    typed = "- typed by hand\n"
    no_time = "- kept by hand <!-- stet id=handy1 author=human status=open -->\n"
    document = SheetDocument.parse(in_sheet(typed + no_time))
    shown = {entry.text: entry.to_dict()["created"] for entry in document.entries()}
    assert shown == {"typed by hand": None, "kept by hand": None, "after": "2026-11-30T10:00:00Z"}
    entry = document.find("handy1")
    assert entry is not None
    entry.text = "kept by hand, edited"
    document.touch("handy1")
    rendered = document.render()
    assert "1970" not in rendered
    assert "- kept by hand, edited <!-- stet id=handy1 author=human status=open -->\n" in rendered
    again = SheetDocument.parse(rendered).find("handy1")
    assert again is not None and again.text == "kept by hand, edited" and not again.has_time
    document.adopt_hand_written(MOMENT)
    (typed_entry,) = [e for e in document.entries() if e.text == "typed by hand"]
    assert typed_entry.has_time and typed_entry.to_dict()["created"] == "2026-11-30T12:00:00Z"
