"""One line-splitting rule everywhere: only \\n, \\r\\n and \\r end a line, as in editors."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path

import gate_corpus
import pytest

from stet_lsp.check import document_items
from stet_lsp.core.anchors import locate, make_anchor, place
from stet_lsp.core.lines import LineIndex, split_lines
from stet_lsp.core.model import Entry, utc_now
from stet_lsp.core.sheet import StyleSheet
from stet_lsp.core.sheet_format import SheetDocument
from stet_lsp.core.targets import resolve_target
from stet_lsp.gate import scan_text

Run = Callable[..., tuple[int, str, str]]

# Every character str.splitlines() breaks at that editors do not.
NOT_BREAKS = ["\f", "\v", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]
SECRET = "ghp_" + gate_corpus.pick(random.Random(8), gate_corpus.ALNUM, 36)


def test_not_breaks_are_what_splitlines_breaks_at() -> None:
    for char in NOT_BREAKS:
        assert len(f"a{char}b".splitlines()) == 2


@pytest.mark.parametrize("char", NOT_BREAKS)
def test_split_lines_keeps_other_separators_inside_a_line(char: str) -> None:
    assert split_lines(f"a{char}b\nc") == [f"a{char}b", "c"]
    assert split_lines(f"a{char}b\r\nc\rd") == [f"a{char}b", "c", "d"]


def test_split_lines_breaks_at_lf_crlf_and_cr_only() -> None:
    assert split_lines("a\nb\r\nc\rd") == ["a", "b", "c", "d"]
    assert split_lines("a\r\r\nb") == ["a", "", "b"]
    assert split_lines("a\n") == ["a", ""]
    assert split_lines("") == [""]


@pytest.mark.parametrize("text", ["a\nbc\n\nd", "a\r\nbc\r\n\r\nd", "a\rbc\r\rd", "a\f\nb\u2028c"])
def test_line_index_agrees_with_split_lines(text: str) -> None:
    index = LineIndex(text)
    lines = split_lines(text)
    assert len(index.starts) == len(lines)
    for number, line in enumerate(lines):
        start, end = index.line_bounds(number)
        assert text[start:end] == line
        for column in range(len(line) + 1):
            assert index.position(start + column) == (number, column)


def _file_with(char: str) -> str:
    return f"header{char}still the header\nsecond\nthe anchored line\nlast\n"


@pytest.mark.parametrize("char", NOT_BREAKS)
def test_anchor_below_such_a_character(root: Path, char: str) -> None:
    (root / "src" / "odd.py").write_text(_file_with(char), encoding="utf-8")
    anchor = make_anchor(root, root / "src" / "odd.py", 3)
    assert anchor.text == "the anchored line"
    assert locate(anchor, split_lines(_file_with(char))) == 3
    entry = Entry("abcdef", "note", "human", "x", utc_now(), anchor=anchor)
    [placement] = place(root, [entry])
    assert placement.line == 3
    moved = "new first line\n" + _file_with(char)
    [placement] = place(root, [entry], {"src/odd.py": moved})
    assert placement.line == 4


@pytest.mark.parametrize("char", NOT_BREAKS)
def test_stet_check_reports_the_editor_line(stet: Run, root: Path, char: str) -> None:
    text = f"# header{char}still the header\n\n# stet: keep this short\nvalue = 1\n"
    (root / "src" / "odd.py").write_text(text, encoding="utf-8")
    r = str(root)
    assert stet("note", "add", "anchored", "--file", "src/odd.py", "--line", "4", "-C", r)[0] == 0
    code, out, _ = stet("check", "-C", r)
    assert code == 0
    lines = [line for line in out.splitlines() if line.startswith("src/odd.py:")]
    assert [line.split(": ", 1)[0] for line in lines] == ["src/odd.py:3", "src/odd.py:4"]
    shown = json.loads(stet("check", "--json", "-C", r)[1])["shown"]
    assert [(s["line"], s["kind"]) for s in shown if s["path"] == "src/odd.py"] == [
        (3, "margin-note"),
        (4, "entry"),
    ]


@pytest.mark.parametrize("char", [*NOT_BREAKS, "\r", "\r\n"])
def test_gate_lines_below_such_a_character(stet: Run, root: Path, char: str) -> None:
    text = f"intro{char}more intro\nsecond\ntoken {SECRET}\n"
    [finding] = scan_text(text)
    expected = 3 if char in ("\r", "\r\n") else 2
    assert (finding.line, finding.column) == (expected, 6)
    assert text[finding.offset : finding.end_offset] == SECRET

    artifact = root / ".stet" / "notes.md"
    artifact.parent.mkdir(exist_ok=True)
    artifact.write_bytes(text.encode("utf-8"))
    code, out, _ = stet("gate", "scan", str(artifact))
    assert code == 1 and out.startswith(f"{artifact}:{expected + 1}:7: github-token")

    sheet = SheetDocument.parse("")
    [item] = document_items(root, ".stet/notes.md", text, sheet)
    assert (item.source, item.line, item.column, item.severity) == ("gate", expected, 6, "error")


def test_sheet_problems_and_lost_anchors_count_lines_alike(root: Path) -> None:
    sheet = StyleSheet(resolve_target(root))
    sheet.add("kept", anchor=make_anchor(root, root / "src" / "app.py", 5))
    (root / "src" / "app.py").write_text("all\fnew\n", encoding="utf-8")
    text = sheet.path.read_text(encoding="utf-8")
    [item] = document_items(root, sheet.path.relative_to(root).as_posix(), text, sheet.read())
    assert item.kind == "anchor-lost"
    assert split_lines(text)[item.line].startswith("- kept")
