"""The operations both front ends call: one result shape, every argument checked in core."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from stet_lsp.check import document_items
from stet_lsp.core import operations
from stet_lsp.core.errors import StetError
from stet_lsp.core.sheet import StyleSheet
from stet_lsp.core.targets import resolve_target

Run = Callable[..., tuple[int, str, str]]
ENTRY_KEYS = {"id", "kind", "author", "status", "text", "created", "anchor", "placement"}


@pytest.fixture
def sheet(root: Path) -> StyleSheet:
    return StyleSheet(resolve_target(root))


def test_list_shape(sheet: StyleSheet, root: Path) -> None:
    anchored = operations.add_entry(sheet, "anchored", file="src/app.py", line=2)
    operations.add_entry(sheet, "loose", kind="convention", author="agent")
    listing = operations.list_entries(sheet)
    assert set(listing) == {
        "version",
        "target",
        "sheet",
        "paused",
        "paused_until",
        "total",
        "more",
        "entries",
        "problems",
    }
    assert listing["version"] == 1
    assert (listing["total"], listing["more"]) == (2, 0)
    window = operations.list_entries(sheet, offset=1, limit=1)
    assert (window["total"], window["more"], len(window["entries"])) == (2, 0, 1)
    assert operations.list_entries(sheet, limit=1)["more"] == 1
    with pytest.raises(StetError, match="counts of entries"):
        operations.list_entries(sheet, offset=-1)
    assert listing["target"] == {
        "kind": "branch",
        "name": "main",
        "label": "main",
        "key": sheet.target.key,
    }
    assert listing["sheet"] == str(sheet.path) and Path(listing["sheet"]).is_file()
    assert (listing["paused"], listing["paused_until"], listing["problems"]) == (False, None, [])
    loose, first = listing["entries"]  # sections in their fixed order: conventions first
    assert set(first) == ENTRY_KEYS and first == anchored["entry"]
    assert first["placement"] == {"line": 2, "lost": False}
    assert loose["placement"] is None and loose["anchor"] is None
    (root / "src" / "app.py").write_text("line 0\n" + (root / "src" / "app.py").read_text())
    moved = operations.list_entries(sheet, file="src/app.py")["entries"]
    assert [entry["placement"] for entry in moved] == [{"line": 3, "lost": False}]
    buffers = {"src/app.py": "gone\n"}
    placement = operations.list_entries(sheet, texts=buffers)["entries"][1]["placement"]
    assert placement == {"line": None, "lost": True}
    json.dumps(listing)


def test_list_filters_are_checked_in_core(sheet: StyleSheet, root: Path) -> None:
    operations.add_entry(sheet, "a", kind="convention", author="agent")
    operations.add_entry(sheet, "b", file="README.md", line=1)

    def texts(**filters: Any) -> list[str]:
        return [e["text"] for e in operations.list_entries(sheet, **filters)["entries"]]

    assert texts(kind="convention") == ["a"]
    assert texts(author="human", status="open") == ["b"]
    assert texts(file="README.md") == texts(file=root / "README.md") == ["b"]
    cases: list[tuple[dict[str, Any], str]] = [
        ({"kind": "bogus"}, "unknown kind 'bogus'"),
        ({"author": "robot"}, "unknown author 'robot'"),
        ({"status": "closed"}, "unknown status 'closed'"),
        ({"kind": ""}, "unknown kind ''"),
        ({"kind": 3}, "kind must be a string"),
        ({"file": "../elsewhere.py"}, "outside the repository"),
    ]
    for filters, message in cases:
        with pytest.raises(StetError, match=message):
            operations.list_entries(sheet, **filters)


def test_show_edit_discard_shapes(sheet: StyleSheet) -> None:
    added = operations.add_entry(sheet, "first", file="src/app.py", line=4)
    entry_id = added["entry"]["id"]
    assert set(added) == {"version", "target", "entry"}
    assert added["entry"]["anchor"] == {"path": "src/app.py", "line": 4, "text": "line 4"}
    assert operations.show_entry(sheet, entry_id) == added
    edited = operations.edit_entry(sheet, entry_id, "second")
    assert edited["entry"]["text"] == "second" and set(edited["entry"]) == ENTRY_KEYS
    discarded = operations.discard_entry(sheet, entry_id)
    assert discarded["entry"]["status"] == "discarded"
    assert operations.show_entry(sheet, entry_id) == discarded
    with pytest.raises(StetError, match="no entry with id"):
        operations.show_entry(sheet, "nosuch")


def test_add_checks_its_arguments(sheet: StyleSheet, root: Path) -> None:
    buffer = "edited in the editor\nnot on disk\n"
    added = operations.add_entry(sheet, "x", file=root / "src/app.py", line=2, file_text=buffer)
    assert added["entry"]["anchor"]["text"] == "not on disk"
    cases: list[tuple[dict[str, Any], str]] = [
        ({"kind": "bogus"}, "unknown kind"),
        ({"author": "robot"}, "unknown author"),
        ({"file": "src/app.py"}, "a file and a line go together"),
        ({"line": 3}, "a file and a line go together"),
        ({"file": "src/app.py", "line": 500}, "line 500 does not exist"),
        ({"file": "src/app.py", "line": "3"}, "line must be a whole number"),
        ({"file": "nosuch.py", "line": 1}, "no such file"),
    ]
    for arguments, message in cases:
        with pytest.raises(StetError, match=message):
            operations.add_entry(sheet, "text", **arguments)
    with pytest.raises(StetError, match="needs some text"):
        operations.add_entry(sheet, "  ")
    with pytest.raises(StetError, match="text must be a string"):
        operations.add_entry(sheet, None)  # type: ignore[arg-type]


def test_a_note_is_never_anchored_in_the_git_directory_or_a_binary_file(
    sheet: StyleSheet, root: Path
) -> None:
    """Every front end adds notes through this one operation: the git directory's files,
    Stet's local scratch (`.stet/cache/`: the style sheet itself, which each write rewrites)
    and binary files (a NUL byte in the first 8000 bytes, git's own test) are refused, the file
    named, and nothing is written."""
    (root / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"x" * 100 + b"\0" + b"\n" * 10)
    (root / "late-nul.txt").write_bytes(b"text\n" * 2000 + b"\0\n")  # past 8000 bytes
    (root / "sub" / ".GIT").mkdir(parents=True)
    (root / "sub" / ".GIT" / "config").write_text("[core]\n")
    (root / "link").symlink_to(root / ".git" / "config")
    cases = [
        (".git/config", "inside the git directory"),
        (root / ".git" / "HEAD", "inside the git directory"),
        ("sub/.GIT/config", "inside the git directory"),
        ("link", "inside the git directory"),  # where the link leads counts
        # Stet's local scratch: the style sheet itself, a working trajectory
        (sheet.path, "is Stet's local scratch"),
        (".stet/cache/trajectories/t/events.jsonl", "is Stet's local scratch"),
        (".STET/Cache/x.md", "is Stet's local scratch"),
        ("image.png", "image.png is a binary file"),
    ]
    for file, message in cases:
        with pytest.raises(StetError, match=message):
            operations.add_entry(sheet, "text", file=file, line=1)
    with pytest.raises(StetError, match="binary file"):  # an editor's text of such a file
        operations.add_entry(sheet, "text", file="README.md", line=1, file_text="a\0b\n")
    assert not sheet.path.exists()  # nothing was written
    assert operations.add_entry(sheet, "text", file="late-nul.txt", line=1)["entry"]["anchor"]
    # The style sheet itself refuses such an anchor, however it was made (a margin note).
    from stet_lsp.core.model import Anchor

    with pytest.raises(StetError, match="inside the git directory"):
        sheet.add("margin", anchor=Anchor(".git/COMMIT_EDITMSG", 1, "# stet: x"), via="margin")
    assert len(operations.list_entries(sheet)["entries"]) == 1


def test_brief_budget_is_checked_in_core(sheet: StyleSheet) -> None:
    operations.add_entry(sheet, "remember this", kind="clarification")
    brief = operations.brief(sheet, 100)
    assert set(brief) == {"version", "target", "text", "included", "left_out", "tokens"}
    assert "remember this" in brief["text"] and brief["included"] == 1
    for budget in [0, -5, True, "800", 2.5]:
        with pytest.raises(StetError, match="budget must be a positive number"):
            operations.brief(sheet, budget)  # type: ignore[arg-type]


def test_pause_and_resume(sheet: StyleSheet) -> None:
    paused = operations.pause(sheet, "2999-01-01")
    assert paused == operations.result(
        sheet.target, paused=True, paused_until="2999-01-01T00:00:00Z"
    )
    listing = operations.list_entries(sheet)
    assert (listing["paused"], listing["paused_until"]) == (True, "2999-01-01T00:00:00Z")
    with pytest.raises(StetError, match="is paused"):
        operations.add_entry(sheet, "agent note", author="agent")
    resumed = operations.resume(sheet)
    assert resumed == operations.result(
        sheet.target, paused=False, paused_until=None, was_paused=True
    )
    # Nothing paused: said so, and the sheet is not written.
    before = sheet.path.read_bytes()
    assert operations.resume(sheet) == operations.result(
        sheet.target, paused=False, paused_until=None, was_paused=False
    )
    assert sheet.path.read_bytes() == before
    assert operations.pause(sheet)["paused_until"] is None
    for until, message in [
        ("tomorrow", "until 'tomorrow' is not an ISO date or time (such as 2026-12-24, or "),
        ("2000-01-01", "until 2000-01-01T00:00:00Z is in the past: give a later one"),
        (20991231, "until must be a string"),
    ]:
        with pytest.raises(StetError, match=re.escape(message)):
            operations.pause(sheet, until)  # type: ignore[arg-type]


def test_cli_json_is_the_operations_result(stet: Run, root: Path, sheet: StyleSheet) -> None:
    r = str(root)

    def cli(*args: str) -> dict[str, Any]:
        code, out, err = stet(*args, "--json", "-C", r)
        assert code == 0, err
        result: dict[str, Any] = json.loads(out)
        return result

    added = cli("note", "add", "anchored", "--file", "src/app.py", "--line", "3")
    entry_id = added["entry"]["id"]
    assert added == operations.show_entry(sheet, entry_id)
    cli("note", "add", "loose", "--kind", "ruled-out", "--author", "agent")
    assert cli("note", "list") == operations.list_entries(sheet)
    assert cli("note", "list", "--kind", "ruled-out") == operations.list_entries(
        sheet, kind="ruled-out"
    )
    assert cli("note", "show", entry_id) == operations.show_entry(sheet, entry_id)
    assert cli("note", "edit", entry_id, "changed") == operations.show_entry(sheet, entry_id)
    assert cli("note", "discard", entry_id) == operations.show_entry(sheet, entry_id)
    assert cli("brief", "--budget", "60") == operations.brief(sheet, 60)
    assert cli("pause", "--until", "2999-01-01") == operations.pause(sheet, "2999-01-01")
    assert cli("resume") == operations.result(
        sheet.target, paused=False, paused_until=None, was_paused=True
    )
    assert cli("resume") == operations.resume(sheet)  # nothing paused, either way


def test_cli_text_output_reads_the_same_result(stet: Run, root: Path) -> None:
    r = str(root)
    assert stet("pause", "--until", "2999-01-01", "-C", r)[1] == (
        "paused the style sheet of main until 2999-01-01T00:00:00Z\n"
    )
    assert stet("resume", "-C", r)[1] == "resumed the style sheet of main\n"
    assert stet("resume", "-C", r) == (0, "the style sheet of main was not paused\n", "")
    entry_id = stet("note", "add", "x", "--file", "src/app.py", "--line", "2", "-C", r)[1].strip()
    out = stet("note", "show", entry_id, "-C", r)[1]
    assert out.splitlines()[:4] == [
        f"id:      {entry_id}",
        "kind:    note",
        "author:  human",
        "status:  open",
    ]
    assert "anchor:  src/app.py:2" in out


def test_check_json_carries_the_items(stet: Run, root: Path, sheet: StyleSheet) -> None:
    (root / "src" / "notes.go").write_text("package x\n\n  // stet(ruled-out): no globals\n")
    entry = operations.add_entry(sheet, "gone soon", file="src/app.py", line=7)["entry"]
    (root / "src" / "app.py").write_text("short\n")
    shown = json.loads(stet("check", "--json", "-C", str(root))[1])["shown"]
    by_kind = {item["kind"]: item for item in shown}
    assert set(by_kind) == {"margin-note", "anchor-lost"}
    note = by_kind["margin-note"]
    assert (note["path"], note["line"]) == ("src/notes.go", 3)
    assert note["item"] == {
        "source": "margin",
        "kind": "margin-note",
        "line": 2,
        "column": 5,
        "end_line": 2,
        "end_column": len("  // stet(ruled-out): no globals"),
        "severity": "hint",
        "code": "margin-note",
        "message": "margin note (ruled-out): no globals",
        "data": {"type": "margin", "line": 2},
    }
    lost = by_kind["anchor-lost"]
    assert lost["path"] == sheet.path.relative_to(root).as_posix()
    assert lost["item"]["data"] == {"type": "entry", "entryId": entry["id"]}
    assert "src/app.py:7 no longer holds 'line 7'" in lost["message"]
    text = (root / "src" / "notes.go").read_text()
    items = document_items(root, "src/notes.go", text, sheet.read())
    assert [item.to_dict() for item in items] == [note["item"]]
