"""One bad entry breaks nothing else: whatever the sheet holds, reading it never raises, and an
impossible value makes only its own entry a reported problem, kept as written."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stet_lsp.core.anchors import place
from stet_lsp.core.brief import render_brief
from stet_lsp.core.model import Anchor, Entry
from stet_lsp.core.sheet_format import SheetDocument, header_of

Run = Callable[..., tuple[int, str, str]]
MOMENT = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
GOOD = "created=2026-11-30T10:00:00Z"


def sheet(bad: str, header: str = "") -> str:
    return (
        "# Style sheet: main\n"
        f"<!-- stet-sheet version=1 kind=branch target=main{header} -->\n"
        "\n"
        "## Notes\n"
        "\n"
        f"- first <!-- stet id=first1 author=agent status=open {GOOD} -->\n"
        f"{bad}\n"
        f"- last <!-- stet id=last01 author=human status=open {GOOD} -->\n"
    )


IMPOSSIBLE = {
    "date": (
        "- bad <!-- stet id=bad001 author=agent status=open created=2026-13-45T99:99:99Z -->",
        "created '2026-13-45T99:99:99Z' is not a valid time",
    ),
    "date-out-of-utc": (
        "- bad <!-- stet id=bad001 author=agent created=9999-12-31T23:59:59-01:00 -->",
        "created '9999-12-31T23:59:59-01:00' is not a valid time",
    ),
    "bad-escape": (
        f'- bad <!-- stet id=bad001 author=agent status=open {GOOD} anchor="a\\q:3" anchor-text=x -->',
        'anchor "a\\q:3" is not a valid quoted value (Invalid \\escape)',
    ),
    "lone-surrogate": (
        f'- bad <!-- stet id=bad001 author=agent status=open {GOOD} anchor=a.py:3 anchor-text="\\ud800" -->',
        'anchor-text "\\ud800" holds a lone surrogate',
    ),
    "surrogate-in-extra": (
        '- bad <!-- stet id=bad001 author=agent note="\\udfff" -->',
        'note "\\udfff" holds a lone surrogate',
    ),
    "anchor-overflow": (
        f"- bad <!-- stet id=bad001 author=agent status=open {GOOD} anchor=a.py:{'9' * 5000} anchor-text=x -->",
        "anchor 'a.py:99999",
    ),
    "anchor-beyond-32-bits": (
        f"- bad <!-- stet id=bad001 author=agent status=open {GOOD} anchor=a.py:2147483648 anchor-text=x -->",
        "anchor 'a.py:2147483648' is not PATH:LINE",
    ),
    "anchor-odd-digit": (
        f"- bad <!-- stet id=bad001 author=agent status=open {GOOD} anchor=a.py:\u00b2 anchor-text=x -->",
        "anchor 'a.py:\u00b2' is not PATH:LINE",
    ),
}


@pytest.mark.parametrize("layout", ["one line", "continued", "hand ordered"])
@pytest.mark.parametrize("case", sorted(IMPOSSIBLE))
def test_an_impossible_value_is_a_problem_of_its_entry_only(case: str, layout: str) -> None:
    bad, reason = IMPOSSIBLE[case]
    if layout == "continued":  # not the one-line fast path
        bad += "\n  a second line"
    elif layout == "hand ordered":
        bad = bad.replace("author=agent", "").replace("id=bad001", "id=bad001 author=agent ")
    text = sheet(bad)
    document = SheetDocument.parse(text)
    assert [entry.id for entry in document.entries()] == ["first1", "last01"]
    [problem] = document.problems
    assert (problem.line, problem.code) == (7, "malformed-entry")
    assert problem.message.startswith("entry: ") and reason in problem.message
    assert problem.message.endswith("kept as written, not read as an entry")
    assert document.render() == text
    # Another entry's edit rewrites that entry only: the bad one stays byte for byte.
    last = document.find("last01")
    assert last is not None
    last.text = "edited"
    document.touch("last01")
    rendered = document.render()
    assert bad in rendered and "- edited <!-- stet id=last01" in rendered
    rendered.encode("utf-8")
    render_brief("main", document.entries())


def test_a_raw_lone_surrogate_from_an_editor_buffer_is_a_problem() -> None:
    text = sheet(f"- bad \ud800 text <!-- stet id=bad001 author=agent {GOOD} -->\n- hand \udc00")
    document = SheetDocument.parse(text)
    assert [entry.id for entry in document.entries()] == ["first1", "last01"]
    assert [(problem.line, problem.code) for problem in document.problems] == [
        (7, "malformed-entry"),
        (8, "malformed-entry"),
    ]
    assert "lone surrogate" in document.problems[0].message
    assert document.render() == text


def test_an_impossible_paused_until_keeps_the_sheet_paused_with_no_end() -> None:
    text = sheet("", header=" paused=true paused-until=2026-13-45T99:99:99Z")
    for document in (SheetDocument.parse(text), header_of(text)):
        meta = document.meta
        assert (meta.target_kind, meta.target_name, meta.paused, meta.paused_until) == (
            "branch",
            "main",
            True,
            None,
        )
        [problem] = document.problems
        assert (problem.line, problem.code) == (2, "malformed-header")
        assert "paused-until '2026-13-45T99:99:99Z' is not a valid time" in problem.message
        assert "stays paused" in problem.message
        assert not document.dirty
    assert [entry.id for entry in SheetDocument.parse(text).entries()] == ["first1", "last01"]
    not_paused = header_of(sheet("", header=" paused-until=2026-02-30"))
    assert not not_paused.meta.paused and "ignored" in not_paused.problems[0].message


def test_a_bad_header_value_leaves_the_others_in_use() -> None:
    text = sheet("", header=' note="\\q" other="\\ud800" extra=kept')
    document = SheetDocument.parse(text)
    assert (document.meta.target_kind, document.meta.target_name) == ("branch", "main")
    assert document.meta.extra == {"extra": "kept"}
    assert [problem.line for problem in document.problems] == [2, 2]
    assert "note" in document.problems[0].message and "other" in document.problems[1].message
    assert document.render() == text


def test_anchors_never_read_outside_the_repository(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("secret\n")
    outside = tmp_path / "outside.txt"
    outside.write_text("secret\n")
    (root / "out").symlink_to(tmp_path)
    (root / "src" / "link.py").symlink_to(root / "src" / "app.py")
    os.mkfifo(root / "pipe")
    paths = {
        "src/app.py": 1,
        "src/link.py": 1,  # a symlink that stays inside is followed
        "../outside.txt": None,
        "src/../src/app.py": None,
        str(outside): None,
        "out/outside.txt": None,
        "pipe": None,  # a FIFO is never opened for a blocking read
        "src": None,
        "nul\0.py": None,
        "C:/outside.txt": None,
    }
    entries = [
        Entry(f"e{number}", "markup", "agent", "x", MOMENT, anchor=Anchor(path, 1, "secret"))
        for number, path in enumerate(paths)
    ]
    found = {p.entry.anchor.path: p.line for p in place(root, entries) if p.entry.anchor}
    assert found == paths


def test_the_brief_keeps_an_odd_anchor_path_on_its_line() -> None:
    entry = Entry("e1", "markup", "agent", "x", MOMENT, anchor=Anchor("a\n## Do this\nb", 1, ""))
    brief = render_brief("main", [entry])
    assert '- x ("a\\n## Do this\\nb":1)\n' in brief.text


# -- hypothesis: any text, and text built from sheet-like fragments ---------------------------

VALUES = st.sampled_from(
    [
        "x",
        "open",
        "agent",
        "human",
        "2026-11-30T10:00:00Z",
        "2026-13-45T99:99:99Z",
        "9999-12-31T23:59:59-01:00",
        "0001-01-01T00:00:00+01:00",
        "2026-02-30",
        "a.py:3",
        "a.py:0",
        "a.py:99999999999999999999",
        "../../etc/passwd:1",
        "/etc/passwd:1",
        "a.py:\u00b2",
        ":5",
        '"\\q"',
        '"\\ud800"',
        '"\\udc00x"',
        '"\\ud83d\\ude00"',
        '"a\\u00"',
        '"\\u003c!-- x --\\u003e"',
        '"a\\nb:4"',
        '"tab\there"',
        '""',
        '"',
        "true",
    ]
)
KEYS = st.sampled_from(
    [
        *("id", "author", "status", "created", "anchor", "anchor-text", "paused"),
        *("paused-until", "kind", "target", "version", "x", "note"),
    ]
)
FIELDS = st.lists(st.tuples(KEYS, st.one_of(VALUES, st.text(max_size=8))), max_size=7).map(
    lambda pairs: " ".join(f"{key}={value}" for key, value in pairs)
)
WORDS = st.text(alphabet=st.characters(blacklist_characters="\n"), max_size=20)

ANCHORS = st.sampled_from(
    ["a.py:3", "src/app.py:2", '"a b.py:4"', "../x:1", "/etc/passwd:1", '"a\\nb:2"', "x:1"]
)


def canonical(text: str, entry_id: str, created: str, anchor: tuple[str, str] | None) -> str:
    tail = f" anchor={anchor[0]} anchor-text={anchor[1]}" if anchor else ""
    fields = f"id={entry_id} author=agent status=open created={created}{tail}"
    return f"- {text or 't'} <!-- stet {fields} -->"


CANONICAL = st.builds(
    canonical,
    WORDS,
    st.sampled_from(["aaaaaa", "bbbbbb", "cccccc", "dddddd", "x" * 65]),
    st.sampled_from(
        ["2026-11-30T10:00:00Z"] * 4
        + ["2026-13-45T99:99:99Z", "0000-00-00T00:00:00Z"]
        + ["\u0662\u0660\u0662\u0666-11-30T10:00:00Z"]
    ),
    st.none() | st.tuples(ANCHORS | VALUES, st.sampled_from(["x", '"a b"', '""']) | VALUES),
)
FRAGMENT = st.one_of(
    st.sampled_from(
        [
            *("## Notes", "## Conventions", "## ruled-out", "## Ideas", "##", "# Title", ""),
            *("  ", "- ", "-", "* star", "\tindented", "  continued", "<!-- c -->", "### sub"),
            "\r",
        ]
    ),
    st.builds(lambda fields: f"<!-- stet-sheet {fields} -->", FIELDS),
    st.builds(lambda text, fields: f"- {text} <!-- stet {fields} -->", WORDS, FIELDS),
    st.builds(lambda text, fields: f"{text}<!-- stet {fields} -->", WORDS, FIELDS),
    CANONICAL,
    st.builds(
        lambda path: canonical("anchored", "eeeeee", "2026-11-30T10:00:00Z", (path, "x")), ANCHORS
    ),
    st.builds(lambda text: f"- {text}", WORDS),
    WORDS,
)
ENDING = st.sampled_from(["\n", "\n", "\n", "\r\n", "\r", ""])
OPENING = st.sampled_from(
    ["", "## Notes\n", "# Style sheet\n<!-- stet-sheet kind=branch -->\n\n## Notes\n"]
)
SHEETS = st.builds(
    lambda opening, parts: opening + "".join(line + end for line, end in parts),
    OPENING,
    st.lists(st.tuples(FRAGMENT, ENDING), max_size=14),
)
ANY_TEXT = st.text(max_size=300)
WITH_SURROGATES = st.text(st.characters(blacklist_categories=()), max_size=60)


def check_never_raises(text: str, root: Path) -> None:
    document = SheetDocument.parse(text)
    assert document.render() == text
    lines = len(text.split("\n"))
    assert all(1 <= problem.line <= lines for problem in document.problems)
    header_of(text)
    entries = list(document.entries())
    for entry in entries:
        json.dumps(entry.to_dict())
    placements = {p.entry.id: p.line for p in place(root, entries)}
    render_brief("main", entries, 200, placements)
    encodable = not any("\ud800" <= char <= "\udfff" for char in text)
    document.adopt_hand_written(MOMENT)
    for entry in entries:
        document.touch(entry.id)
    written = document.render()
    again = SheetDocument.parse(written)
    assert [entry.id for entry in again.entries()] == [entry.id for entry in entries]
    assert again.render() == written
    render_brief("main", again.entries())
    if encodable:  # nothing the parser accepted brings a surrogate into what is written
        written.encode("utf-8")


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("root")
    (root / "src").mkdir()
    (root / "a.py").write_text("x\ny = 2\nx\n")
    (root / "src" / "app.py").write_text("one\ntwo\n")
    return root


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(SHEETS, ANY_TEXT, WITH_SURROGATES, st.builds(str.__add__, SHEETS, SHEETS)))
def test_reading_any_text_never_raises(files: Path, text: str) -> None:
    check_never_raises(text, files)


# -- the command line on a real repository with one broken entry ------------------------------


def test_the_cli_carries_on_past_a_broken_entry(stet: Run, root: Path) -> None:
    r = str(root)
    first = stet("note", "add", "first note", "--kind", "convention", "-C", r)[1].strip()
    other = stet("note", "add", "other note", "--kind", "convention", "-C", r)[1].strip()
    path = Path(stet("sheet", "path", "-C", r)[1].strip())
    bad = IMPOSSIBLE["date"][0]
    lines = path.read_text().splitlines(keepends=True)
    at = next(n for n, line in enumerate(lines) if f"id={first}" in line) + 1
    lines.insert(at, bad + "\n")
    path.write_text("".join(lines))

    code, out, err = stet("note", "list", "-C", r)
    assert (code, err) == (0, "")
    assert first in out and other in out
    assert f"{path}:{at + 1}: entry: created '2026-13-45T99:99:99Z' is not a valid time" in out
    listing = json.loads(stet("note", "list", "--json", "-C", r)[1])
    assert [entry["id"] for entry in listing["entries"]] == [first, other]
    assert listing["problems"][0]["line"] == at + 1
    assert listing["problems"][0]["code"] == "malformed-entry"

    code, out, _ = stet("brief", "-C", r)
    assert code == 0 and "first note" in out and "other note" in out and "- bad" not in out

    assert stet("note", "edit", other, "other note, edited", "-C", r)[0] == 0
    assert stet("note", "add", "a third", "-C", r)[0] == 0
    written = path.read_text()
    assert f"\n{bad}\n" in written and "other note, edited" in written and "a third" in written


def test_the_cli_reads_an_impossible_pause_end_as_paused(stet: Run, root: Path) -> None:
    r = str(root)
    assert stet("pause", "--until", "2999-01-01", "-C", r)[0] == 0
    path = Path(stet("sheet", "path", "-C", r)[1].strip())
    path.write_text(path.read_text().replace("2999-01-01T00:00:00Z", "2026-13-45T99:99:99Z"))
    listing = json.loads(stet("note", "list", "--json", "-C", r)[1])
    assert (listing["paused"], listing["paused_until"]) == (True, None)
    assert listing["problems"][0]["code"] == "malformed-header"
    code, _, err = stet("note", "add", "agent note", "--author", "agent", "-C", r)
    assert code == 1 and "paused" in err
    assert stet("note", "add", "a person's note", "-C", r)[0] == 0
    assert stet("resume", "-C", r)[0] == 0
    assert stet("note", "add", "agent note", "--author", "agent", "-C", r)[0] == 0
    assert json.loads(stet("note", "list", "--json", "-C", r)[1])["problems"] == []


def test_the_cli_keeps_an_entry_whose_text_a_person_broke_over_lines(stet: Run, root: Path) -> None:
    r = str(root)
    (root / "f.py").write_text("a = 1\nb = 2\nc = 3\n")
    args = ("--author", "agent", "--kind", "convention", "--file", "f.py", "--line", "2", "-C", r)
    gone = stet("note", "add", "Keep b at two because the tests pin it", *args)[1].strip()
    assert stet("note", "discard", gone, "-C", r)[0] == 0
    kept = stet("note", "add", "Call the session helper for every request", *args)[1].strip()
    path = Path(stet("sheet", "path", "-C", r)[1].strip())
    written = path.read_text()
    edited = written.replace(" because the tests", "\n  because the tests").replace(
        " for every request", "\n  for every\n  request"
    )
    assert edited.count("\n  ") == 3
    path.write_text(edited)

    listing = json.loads(stet("note", "list", "--json", "-C", r)[1])
    assert listing["problems"] == []
    found = {entry["id"]: entry for entry in listing["entries"]}
    assert set(found) == {gone, kept}
    assert found[gone]["text"] == "Keep b at two\nbecause the tests pin it"
    assert found[kept]["text"] == "Call the session helper\nfor every\nrequest"
    assert [found[gone]["status"], found[kept]["status"]] == ["discarded", "open"]
    for entry in found.values():
        assert entry["author"] == "agent"
        assert entry["anchor"] == {"path": "f.py", "line": 2, "text": "b = 2"}

    code, out, _ = stet("brief", "-C", r)
    assert code == 0
    assert "- Call the session helper (f.py:2)\n  for every\n  request\n" in out
    assert "<!--" not in out and "Keep b" not in out

    # Another write keeps the person's lines, and the sheet reads the same afterwards.
    assert stet("note", "add", "a third", "-C", r)[0] == 0
    assert edited.split("## Conventions")[1].split("##")[0] in path.read_text()
    again = json.loads(stet("note", "list", "--json", "-C", r)[1])
    assert again["problems"] == []
    assert {entry["id"]: entry for entry in again["entries"] if entry["id"] in found} == found
    assert stet("note", "edit", kept, "Call the session helper\nfor every request", "-C", r)[0] == 0
    assert "helper <!-- stet id=" in path.read_text()
    edited_entry = stet("note", "list", "--json", "-C", r)[1]
    texts = {entry["id"]: entry["text"] for entry in json.loads(edited_entry)["entries"]}
    assert texts[kept] == "Call the session helper\nfor every request"
    assert texts[gone] == "Keep b at two\nbecause the tests pin it"


HOSTILE_LINES = {
    "comments without an end": "- a " + "<!-- stet " * 20_000,
    "a field without a value": "- a <!-- stet " + "a" * 200_000 + " -->",
    "a heading of hashes": "## " + " #" * 100_000 + "x",
}


@pytest.mark.parametrize("case", sorted(HOSTILE_LINES))
def test_a_cloned_sheet_of_long_lines_is_read_in_time_to_its_length(
    tmp_path: Path, stet: Run, case: str
) -> None:
    """A clone can commit the style sheet of the branch it checks out (docs/security.md). Each
    line is read in time linear in its length: three regular expressions scanned the rest of
    the line from every position, so that a line of 200 KB took minutes (`note list`, every
    write, the server's merge into an open sheet's buffer), and one of a megabyte hours."""
    from bounded import within
    from repos import hostile_clone

    from stet_lsp.core.merge import merge_sheets
    from stet_lsp.core.targets import target_key

    text = sheet(HOSTILE_LINES[case])
    path = f".stet/cache/sheets/{target_key('branch', 'main')}.md"
    r = str(hostile_clone(tmp_path, {path: text, "README.md": "hi\n"}))
    code, out, err = within(10, lambda: stet("note", "list", "--json", "-C", r))
    assert code == 0, err
    assert "first1" in {entry["id"] for entry in json.loads(out)["entries"]}
    assert within(10, lambda: merge_sheets(text, text + "\n", text)).text.startswith(text)
