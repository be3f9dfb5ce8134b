"""Style-sheet operations on real repositories: entries, anchors, pause, brief, retention."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pygit2
import pytest
from repos import commit_files, git_at

from stet_lsp.core import sheet as sheet_module
from stet_lsp.core.anchors import make_anchor
from stet_lsp.core.brief import estimate_tokens, render_brief
from stet_lsp.core.errors import StetError
from stet_lsp.core.model import format_time, utc_now
from stet_lsp.core.retention import collect_garbage
from stet_lsp.core.session import RepositorySession
from stet_lsp.core.sheet import EntryFilter, NewEntry, StyleSheet
from stet_lsp.core.targets import Target, resolve_target


@pytest.fixture
def sheet(root: Path) -> StyleSheet:
    return StyleSheet(resolve_target(root))


def test_first_write_creates_the_sheet_and_ignores_the_cache(sheet: StyleSheet, root: Path) -> None:
    assert not sheet.path.exists()
    assert sheet.entries() == []
    sheet.add("first")
    assert sheet.path.is_file()
    assert (
        root / ".stet" / ".gitignore"
    ).read_text() == "cache/\n.*.tmp\n.*.stet-before-capstone-*\n"
    repo = pygit2.Repository(str(root))
    assert repo.path_is_ignored(str(sheet.path.relative_to(root)))
    # What a writer stopped midway leaves beside a file it replaces, anywhere under .stet/
    assert repo.path_is_ignored(".stet/trajectories/t/.narration.md.x1y2.tmp")
    assert repo.path_is_ignored(".stet/skills/x/.SKILL.md.stet-before-capstone-x1y2")
    assert not repo.path_is_ignored(".stet/trajectories/t/narration.md")


def test_existing_stet_gitignore_is_extended_not_replaced(sheet: StyleSheet, root: Path) -> None:
    (root / ".stet").mkdir()
    (root / ".stet" / ".gitignore").write_text("scratch/")
    sheet.add("first")
    assert (
        root / ".stet" / ".gitignore"
    ).read_text() == "scratch/\ncache/\n.*.tmp\n.*.stet-before-capstone-*\n"
    sheet.add("second")
    assert (
        root / ".stet" / ".gitignore"
    ).read_text() == "scratch/\ncache/\n.*.tmp\n.*.stet-before-capstone-*\n"


def test_add_edit_discard_list_and_show(sheet: StyleSheet, root: Path) -> None:
    convention = sheet.add("Wrap errors with %w.", kind="convention", author="agent")
    ruled_out = sheet.add("sqlx breaks on\nnested transactions", kind="ruled-out", author="agent")
    markup = sheet.add(
        "Use the existing helper.",
        kind="markup",
        anchor=make_anchor(root, root / "src" / "app.py", 5),
    )
    assert sheet.get(ruled_out.id).text == "sqlx breaks on\nnested transactions"
    sheet.edit_text(convention.id, "Wrap errors with %w at package boundaries.")
    sheet.set_status(ruled_out.id, "discarded")
    assert sheet.get(convention.id).text == "Wrap errors with %w at package boundaries."
    assert sheet.get(ruled_out.id).status == "discarded"

    assert [e.id for e in sheet.entries(EntryFilter(author="agent"))] == [
        convention.id,
        ruled_out.id,
    ]
    assert [e.id for e in sheet.entries(EntryFilter(status="open"))] == [convention.id, markup.id]
    assert [e.id for e in sheet.entries(EntryFilter(kind="markup"))] == [markup.id]
    assert [e.id for e in sheet.entries(EntryFilter(file="src/app.py"))] == [markup.id]
    assert sheet.get(markup.id).anchor == make_anchor(root, root / "src/app.py", 5)
    with pytest.raises(StetError, match="no entry with id"):
        sheet.edit_text("nope", "x")
    with pytest.raises(StetError, match="needs some text"):
        sheet.add("  \n ")


def test_writing_back_an_unchanged_sheet_is_byte_identical(sheet: StyleSheet) -> None:
    sheet.add("one", kind="convention")
    sheet.add("two\n\nwith a blank line", kind="note", author="agent")
    before = sheet.path.read_bytes()
    with sheet.edit():
        pass
    assert sheet.path.read_bytes() == before


def test_entries_added_together_are_one_write_all_or_none(
    sheet: StyleSheet, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Recording a file's margin notes added each in a write of its own (a lock, a read and
    an fsync each: 530 notes took 15 s); `add_all` writes them together, or none of them."""
    sheet.add("already there")
    writes: list[Path] = []
    atomic_write = sheet_module.atomic_write

    def counted(path: Path, *args: object, **kwargs: object) -> None:
        writes.append(path)
        atomic_write(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(sheet_module, "atomic_write", counted)
    new = [NewEntry(f"note {n}", via="margin") for n in range(300)]
    added = sheet.add_all(new)
    assert len(writes) == 1
    assert [entry.text for entry in sheet.entries()] == ["already there"] + [
        f"note {n}" for n in range(300)
    ]
    assert len({entry.id for entry in sheet.entries()}) == 301
    assert [entry.id for entry in added] == [entry.id for entry in sheet.entries()[1:]]
    before = sheet.path.read_bytes()
    with pytest.raises(StetError, match="needs some text"):
        sheet.add_all([NewEntry("fine"), NewEntry("   ")])
    sheet.pause()
    with pytest.raises(StetError, match="paused"):
        sheet.add_all(
            [NewEntry("a person's", via="direct"), NewEntry("a margin note", via="margin")]
        )
    assert len(writes) == 2  # the pause
    sheet.resume()
    assert [entry.text for entry in sheet.entries()][-1] == "note 299"
    assert b"fine" not in sheet.path.read_bytes() and before.count(b"note 299") == 1


def test_hand_edits_are_kept_and_hand_added_lines_get_ids(sheet: StyleSheet) -> None:
    entry = sheet.add("Original text", kind="convention")
    text = sheet.path.read_text()
    text = text.replace("Original text", "Text a person improved")
    text = text.replace("## Ruled out\n\n", "## Ruled out\n\n- the ORM, it hides N+1 queries\n")
    sheet.path.write_text(text)
    hand = [e for e in sheet.entries() if e.kind == "ruled-out"]
    assert [e.text for e in hand] == ["the ORM, it hides N+1 queries"]
    sheet.add("an agent writes meanwhile", author="agent")
    after = {e.id: e for e in sheet.entries()}
    assert after[entry.id].text == "Text a person improved"
    assert after[hand[0].id].text == "the ORM, it hides N+1 queries"
    assert f"id={hand[0].id}" in sheet.path.read_text()
    sheet.set_status(hand[0].id, "discarded")
    assert sheet.get(hand[0].id).status == "discarded"


def test_a_line_typed_beside_an_entry_mentioning_a_comment_gets_its_id_at_the_next_add(
    sheet: StyleSheet,
) -> None:
    """An entry's text may mention a metadata comment: a typed line is still seen."""
    sheet.add("Keep <!-- stet id=x --> comments out of the brief")
    with sheet.path.open("a", encoding="utf-8") as stream:
        stream.write("- typed by hand\n")
    typed = next(e for e in sheet.entries() if e.text == "typed by hand")
    assert not typed.has_time
    sheet.add("an agent writes meanwhile", author="agent")
    assert sheet.get(typed.id).has_time
    assert f"- typed by hand <!-- stet id={typed.id} " in sheet.path.read_text()


def test_malformed_parts_survive_writes(sheet: StyleSheet) -> None:
    sheet.add("valid")
    broken = "- broken <!-- stet id=zzzzzz author=robot -->\n"
    sheet.path.write_text(sheet.path.read_text().replace("## Notes\n\n", "## Notes\n\n" + broken))
    sheet.add("another")
    assert broken in sheet.path.read_text()
    assert [p.code for p in sheet.read().problems] == ["malformed-entry"]


def test_non_utf8_sheet_is_refused_and_left_alone(sheet: StyleSheet) -> None:
    """The refusal places the byte as an editor shows it: 1-based line and column, the column
    in characters (the `é` and `→` before it are one each)."""
    sheet.add("valid")
    text = sheet.path.read_bytes()
    data = text + "caf\u00e9 \u2192 ".encode() + b"\xff\xfe broken\n"
    sheet.path.write_bytes(data)
    line = text.count(b"\n") + 1
    with pytest.raises(StetError, match=rf"is not UTF-8 \(line {line}, column 8\); fix or move"):
        sheet.add("more")
    assert sheet.path.read_bytes() == data


def test_an_entry_text_longer_than_the_limit_is_refused_by_every_writer(
    sheet: StyleSheet,
) -> None:
    """A command writes working memory, not a file's content: a 20 MB note (a file piped in)
    made every hover and list answer 20 MB. Refused, nothing changed; at the limit it is kept."""
    from stet_lsp.core.sheet import ENTRY_TEXT_LIMIT

    entry = sheet.add("valid")
    before = sheet.path.read_bytes()
    for write in (
        lambda: sheet.add("x" * (ENTRY_TEXT_LIMIT + 1)),
        lambda: sheet.edit_text(entry.id, "y" * (ENTRY_TEXT_LIMIT + 1)),
    ):
        with pytest.raises(StetError, match="20,001 characters; an entry takes 20,000 at most"):
            write()
    assert sheet.path.read_bytes() == before
    assert len(sheet.add("z" * ENTRY_TEXT_LIMIT).text) == ENTRY_TEXT_LIMIT


def test_a_sheet_whose_lines_end_in_a_lone_carriage_return_is_refused_and_left_alone(
    sheet: StyleSheet,
) -> None:
    """Read as one line, it held no entries and a write added a second sheet after them."""
    sheet.add("valid")
    data = sheet.path.read_bytes().replace(b"\n", b"\r")
    sheet.path.write_bytes(data)
    for write in (lambda: sheet.add("more"), lambda: sheet.entries()):
        with pytest.raises(StetError, match="carriage return alone"):
            write()
    assert sheet.path.read_bytes() == data


@pytest.mark.parametrize("codec", ["utf-32-be", "utf-32-le", "utf-16-le", "utf-16-be"])
def test_a_sheet_written_in_a_wide_encoding_without_a_mark_is_refused_and_left_alone(
    sheet: StyleSheet, codec: str
) -> None:
    """UTF-32, and UTF-16 of ASCII text, without a byte order mark is valid UTF-8 whose every
    other byte is NUL: read so, the sheet held no entries, and a write put a new sheet's
    header in front of the old text."""
    sheet.add("valid")
    data = sheet.path.read_bytes().decode("utf-8").encode(codec)
    sheet.path.write_bytes(data)
    for write in (lambda: sheet.add("more"), lambda: sheet.entries()):
        with pytest.raises(StetError, match="is mostly NUL bytes"):
            write()
    assert sheet.path.read_bytes() == data


def test_a_nul_character_is_no_entrys_text_and_a_sheet_holding_one_is_read(
    sheet: StyleSheet,
) -> None:
    """The servers refuse a NUL in an entry's text; `stet note add -` took one from its input.
    A sheet holding one here and there (written so before) is read as it is."""
    with pytest.raises(StetError, match="holds a NUL character"):
        sheet.add("before\0after")
    entry = sheet.add("valid")
    with pytest.raises(StetError, match="holds a NUL character"):
        sheet.edit_text(entry.id, "x\0y")
    data = sheet.path.read_bytes()
    sheet.path.write_bytes(data.replace(b"valid", b"va\0lid"))
    assert [e.text for e in sheet.entries()] == ["va\0lid"]


def test_anchor_follows_its_line_and_is_reported_lost(sheet: StyleSheet, root: Path) -> None:
    app = root / "service.py"
    body = [f"step_{n} = run_step({n})\n" for n in range(1, 21)]
    body[9] = "response = requests.post(url, json=payload)\n"
    app.write_text("".join(body))
    entry = sheet.add("use the session helper", anchor=make_anchor(root, app, 10))
    app.write_text("".join(["import os\n"] * 3 + body[:4] + body[6:]))  # 3 above, 2 removed
    assert sheet.current_lines([sheet.get(entry.id)]) == {entry.id: 11}
    moved = sheet.reanchor()
    assert [e.id for e in moved] == [entry.id]
    assert sheet.get(entry.id).anchor.line == 11  # type: ignore[union-attr]
    assert sheet.reanchor() == []
    # A small edit to the line itself still finds it.
    app.write_text(app.read_text().replace("payload)", "payload, timeout=5)"))
    assert sheet.current_lines([sheet.get(entry.id)]) == {entry.id: 11}
    app.write_text(app.read_text().replace("response = requests.post", "# gone"))
    assert sheet.current_lines([sheet.get(entry.id)]) == {entry.id: None}
    assert sheet.get(entry.id).status == "open"  # kept, only reported
    app.unlink()
    assert sheet.current_lines([sheet.get(entry.id)]) == {entry.id: None}


def test_anchor_prefers_the_nearest_identical_line(sheet: StyleSheet, root: Path) -> None:
    path = root / "dup.py"
    path.write_text("x = 1\n" * 3 + "pass\n" * 10 + "x = 1\n")
    entry = sheet.add("the last one", anchor=make_anchor(root, path, 14))
    path.write_text("import os\n" + path.read_text())
    assert sheet.current_lines([sheet.get(entry.id)]) == {entry.id: 15}


def test_anchor_outside_the_repository_or_file_is_refused(
    sheet: StyleSheet, root: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("x\n")
    with pytest.raises(StetError, match="outside the repository"):
        make_anchor(root, outside, 1)
    with pytest.raises(StetError, match="line 99 does not exist"):
        make_anchor(root, root / "src" / "app.py", 99)
    with pytest.raises(StetError, match="no such file"):
        make_anchor(root, root / "missing.py", 1)


def test_pause_refuses_agent_and_margin_writes_and_forgets_nothing(sheet: StyleSheet) -> None:
    kept = sheet.add("kept", author="agent")
    sheet.pause()
    with pytest.raises(StetError, match="paused"):
        sheet.add("refused", author="agent")
    with pytest.raises(StetError, match="paused"):
        sheet.add("refused margin", kind="markup", via="margin")
    sheet.add("a person may still write directly", author="human")
    assert sheet.pause_state() == (True, None)
    assert kept.id in {e.id for e in sheet.entries()}
    sheet.resume()
    sheet.add("accepted", author="agent")
    assert [e.text for e in sheet.entries()] == [
        "kept",
        "a person may still write directly",
        "accepted",
    ]


def test_pause_until_a_date_lapses_by_itself(sheet: StyleSheet) -> None:
    with pytest.raises(StetError, match="in the past"):
        sheet.pause(utc_now() - timedelta(days=1))
    until = utc_now() + timedelta(hours=1)
    sheet.pause(until)
    with pytest.raises(StetError, match="paused until"):
        sheet.add("refused", author="agent")
    # The hour passes (a pause of seconds, waited out, could lapse before the refusal on a
    # loaded machine): the header's time is now one the clock has passed.
    passed = format_time(utc_now() - timedelta(minutes=1))
    sheet.path.write_text(sheet.path.read_text().replace(format_time(until), passed))
    sheet.add("accepted", author="agent")
    assert sheet.pause_state() == (False, None)


def test_brief_is_ordered_deterministic_and_budgeted(sheet: StyleSheet, root: Path) -> None:
    sheet.add("old note", kind="note")
    sheet.add("a convention", kind="convention", author="agent")
    discarded = sheet.add("discarded one", kind="convention")
    sheet.set_status(discarded.id, "discarded")
    sheet.add("anchored markup", kind="markup", anchor=make_anchor(root, root / "src/app.py", 2))
    brief = sheet.brief()
    assert brief.text.startswith("## Style sheet\n")
    assert "house style" in brief.text and "those win" in brief.text
    assert brief.text.index("a convention") < brief.text.index("anchored markup (src/app.py:2)")
    assert brief.text.index("anchored markup") < brief.text.index("old note")
    assert "discarded one" not in brief.text
    assert (brief.included, brief.left_out) == (3, 0)
    assert sheet.brief().text == brief.text

    for number in range(60):
        sheet.add(f"convention number {number} " + "padding " * 10, kind="convention")
    small = sheet.brief(budget=300)
    assert small.tokens <= 300
    assert small.left_out > 0 and small.included + small.left_out == 63
    assert f"{small.left_out} more entries left out" in small.text
    assert "convention number 59" in small.text  # newest first within a kind
    assert estimate_tokens(small.text) == small.tokens


def test_brief_of_an_empty_sheet(root: Path) -> None:
    assert "No entries yet." in render_brief("main", []).text


def test_gc_removes_gone_branches_and_stale_sheets_never_the_current(
    repo: pygit2.Repository, root: Path
) -> None:
    head = repo[repo.head.target]
    repo.branches.local.create("gone", head)
    repo.branches.local.create("stale", head)
    for name in ["gone", "stale"]:
        repo.checkout(repo.branches.local[name])
        StyleSheet(resolve_target(root)).add(f"on {name}")
    repo.checkout(repo.branches.local["main"])
    current = resolve_target(root)
    StyleSheet(current).add("on main")
    StyleSheet(resolve_target(root, "pr-7")).add("named")
    repo.branches.local.delete("gone")
    stale = resolve_target(root, "stale")
    old = time.time() - 40 * 86400
    for path in (root / ".stet/cache/sheets").glob("*.md"):
        if "stale" in path.name or path == current.sheet_path:
            os.utime(path, (old, old))

    listed = collect_garbage(repo, current, dry_run=True).removed
    assert sorted(r.target for r in listed) == ["gone", "stale"]
    assert all(r.path.exists() for r in listed)
    removed = collect_garbage(repo, current).removed
    assert sorted(r.reason.split()[0] for r in removed) == ["branch", "untouched"]
    assert not any(r.path.exists() for r in removed)
    assert current.sheet_path.exists()  # old, but current
    assert StyleSheet(resolve_target(root, "pr-7")).entries()
    assert stale.kind == "named"  # an explicit name is not the branch: untouched
    assert collect_garbage(repo, current, ttl_days=0, dry_run=True).removed[0].target == "pr-7"


def test_a_renamed_branch_keeps_its_sheet(repo: pygit2.Repository, root: Path) -> None:
    """`git branch -m` names the target anew: its sheet follows, header and title."""
    repo.branches.local.create("feature", repo[repo.head.target])
    repo.checkout(repo.branches.local["feature"])
    StyleSheet(resolve_target(root)).add("wrap errors with %w", kind="convention")
    old_path = resolve_target(root).sheet_path
    repo.branches.local["feature"].rename("feature-2")
    target = resolve_target(root)
    assert target.name == "feature-2"
    assert [e.text for e in StyleSheet(target).entries()] == ["wrap errors with %w"]
    text = target.sheet_path.read_text(encoding="utf-8")
    assert text.startswith("# Style sheet: feature-2\n") and "target=feature-2" in text
    assert not old_path.exists() and not Path(f"{old_path}.lock").exists()
    StyleSheet(target).add("a second note")  # its own now: written without complaint
    assert len(StyleSheet(target).entries()) == 2


def test_gc_moves_a_renamed_branch_sheet_and_never_removes_it(
    repo: pygit2.Repository, root: Path
) -> None:
    head = repo[repo.head.target]
    for name in ("left", "right"):
        repo.branches.local.create(name, head)
        repo.checkout(repo.branches.local[name])
        StyleSheet(resolve_target(root)).add(f"on {name}")
    repo.checkout(repo.branches.local["main"])
    current = resolve_target(root)
    repo.branches.local["left"].rename("left-renamed")  # not checked out: gc moves it
    StyleSheet(Target(root, "branch", "right-renamed")).add("already here")
    repo.branches.local["right"].rename("right-renamed")  # the new name has a sheet

    planned = collect_garbage(repo, current, dry_run=True)
    assert planned.removed == []
    assert [(m.target, m.to.name) for m in planned.moved] == [
        ("left", Target(root, "branch", "left-renamed").sheet_path.name)
    ]
    assert planned.moved[0].path.exists() and not planned.moved[0].to.exists()
    done = collect_garbage(repo, current)
    assert done.removed == [] and [m.target for m in done.moved] == ["left"]
    assert [e.text for e in StyleSheet(Target(root, "branch", "left-renamed")).entries()] == [
        "on left"
    ]
    right = Target(root, "branch", "right")
    assert right.sheet_path.exists()  # kept: only the TTL removes it
    old = time.time() - 40 * 86400
    os.utime(right.sheet_path, (old, old))
    assert [r.target for r in collect_garbage(repo, current).removed] == ["right"]


def test_a_session_follows_a_rename_of_the_branch_it_shows(
    repo: pygit2.Repository, root: Path
) -> None:
    repo.branches.local.create("topic", repo[repo.head.target])
    repo.checkout(repo.branches.local["topic"])
    StyleSheet(resolve_target(root)).add("keep me")
    session = RepositorySession(root)
    assert [e.text for e in session.load().document.entries()] == ["keep me"]
    repo.branches.local["topic"].rename("topic-2")
    snapshot = session.load()
    assert snapshot.target.name == "topic-2"
    assert [e.text for e in snapshot.document.entries()] == ["keep me"]


def test_a_session_follows_a_rename_into_a_name_it_showed_before(
    repo: pygit2.Repository, root: Path
) -> None:
    """A name the session left can be renamed into again: the sheet follows every time."""
    StyleSheet(resolve_target(root)).add("keep me")
    session = RepositorySession(root)
    for old, new in [("main", "topic"), ("topic", "main"), ("main", "topic")]:
        repo.branches.local[old].rename(new)
        snapshot = session.load()
        assert snapshot.target.name == new
        assert [e.text for e in snapshot.document.entries()] == ["keep me"]


def _age_sheets(root: Path) -> None:
    """The sheets written a minute ago: before the renames that follow, by their reflogs'
    seconds."""
    old = time.time() - 60
    for path in (root / ".stet/cache/sheets").glob("*.md"):
        os.utime(path, (old, old))


def _next_second() -> None:
    """Wait for the next second of the clock: reflogs date their entries in whole seconds."""
    time.sleep(1.01 - time.time() % 1)


def _swap_names(repo: pygit2.Repository, between: Callable[[], object]) -> None:
    """`git branch -m a tmp; git branch -m b a; git branch -m tmp b`, `between` run after
    each rename."""
    for old, new in [("a", "tmp"), ("b", "a"), ("tmp", "b")]:
        repo.branches.local[old].rename(new)
        between()


def _entries_of(root: Path, branch: str) -> list[str]:
    return [e.text for e in StyleSheet(Target(root, "branch", branch)).entries()]


@pytest.mark.parametrize("front", ["command line", "session"])
def test_sheets_follow_two_branches_swapping_names(
    repo: pygit2.Repository, root: Path, front: str
) -> None:
    """After the swap the branch called `b` is the one that was `a`: its sheet is a's, and
    the sheet it found under `b` goes to the branch that wrote it, now `a`."""
    head = repo[repo.head.target]
    for name in ("b", "a"):
        repo.branches.local.create(name, head)
    _next_second()  # the sheets written after the branches took their names
    for name in ("b", "a"):
        repo.checkout(repo.branches.local[name])
        StyleSheet(resolve_target(root)).add(f"entry of {name}")
    _next_second()  # and before the renames
    if front == "session":
        session = RepositorySession(root)
        _swap_names(repo, session.load)
        assert [e.text for e in session.load().document.entries()] == ["entry of a"]
    else:
        _swap_names(repo, lambda: resolve_target(root))
    assert resolve_target(root).name == "b"
    assert _entries_of(root, "b") == ["entry of a"]
    assert _entries_of(root, "a") == ["entry of b"]
    assert sorted(p.name for p in (root / ".stet/cache/sheets").glob("*.md")) == sorted(
        Target(root, "branch", name).sheet_path.name for name in ("a", "b")
    )
    text = Target(root, "branch", "a").sheet_path.read_text(encoding="utf-8")
    assert text.startswith("# Style sheet: a\n") and "target=a " in text


def test_a_sheet_written_under_a_name_taken_over_is_kept(
    repo: pygit2.Repository, root: Path
) -> None:
    """A branch renamed back to a name it had keeps that name's sheet, and a sheet written
    since a branch took its name (or in the same second) is that branch's."""
    head = repo[repo.head.target]
    repo.branches.local.create("topic", head)
    repo.checkout(repo.branches.local["topic"])
    StyleSheet(resolve_target(root)).add("mine")
    _age_sheets(root)
    repo.branches.local["topic"].rename("topic-2")
    repo.branches.local["topic-2"].rename("topic")
    assert resolve_target(root).name == "topic"
    assert _entries_of(root, "topic") == ["mine"]

    repo.branches.local.create("first", head)
    StyleSheet(Target(root, "branch", "first")).add("of the first first")
    _age_sheets(root)
    repo.branches.local["first"].rename("second")
    repo.branches.local["topic"].rename("first")  # HEAD's branch
    StyleSheet(Target(root, "branch", "first")).add("written since")
    assert resolve_target(root).name == "first"
    assert _entries_of(root, "first") == ["of the first first", "written since"]
    assert _entries_of(root, "second") == []


@pytest.mark.skipif(shutil.which("git") is None, reason="git dates the renames")
def test_a_name_left_long_ago_by_another_branch_takes_no_sheet_from_it(
    repo: pygit2.Repository, root: Path
) -> None:
    """`z` left the name `topic` before the branch now called `topic` wrote its sheet; the
    branch then went to `topic-2` and back: the sheet is its own, not z's."""
    now = int(time.time())

    git_at(root, "branch", "topic", at=now - 400)
    git_at(root, "branch", "-m", "topic", "z", at=now - 300)
    git_at(root, "checkout", "-q", "-b", "topic", at=now - 250)
    StyleSheet(resolve_target(root)).add("mine")
    written = now - 200
    os.utime(Target(root, "branch", "topic").sheet_path, (written, written))
    git_at(root, "branch", "-m", "topic", "topic-2", at=now - 100)
    git_at(root, "branch", "-m", "topic-2", "topic", at=now - 100)
    assert resolve_target(root).name == "topic"
    assert _entries_of(root, "topic") == ["mine"]
    assert not Target(root, "branch", "z").sheet_path.exists()


@pytest.mark.skipif(shutil.which("git") is None, reason="git dates the renames")
def test_a_sheet_written_before_another_branch_held_its_name_stays_with_its_writer(
    repo: pygit2.Repository, root: Path
) -> None:
    """`topic` writes its sheet and goes to `tmp`; `y` holds the name `topic` a while and
    leaves it for `y2`; `tmp` comes back to `topic`. The sheet is older than y's stay under
    the name: it is topic's, not y's."""
    now = int(time.time())

    git_at(root, "checkout", "-q", "-b", "topic", at=now - 500)
    StyleSheet(resolve_target(root)).add("topic's")
    written = now - 400
    os.utime(Target(root, "branch", "topic").sheet_path, (written, written))
    git_at(root, "branch", "-m", "topic", "tmp", at=now - 300)
    git_at(root, "branch", "y", at=now - 300)
    git_at(root, "branch", "-m", "y", "topic", at=now - 200)
    git_at(root, "branch", "-m", "topic", "y2", at=now - 100)
    git_at(root, "branch", "-m", "tmp", "topic", at=now - 50)
    assert resolve_target(root).name == "topic"
    assert _entries_of(root, "topic") == ["topic's"]
    assert not Target(root, "branch", "y2").sheet_path.exists()


@pytest.mark.skipif(shutil.which("git") is None, reason="git dates the renames")
@pytest.mark.parametrize("history", ["written as it was made", "renamed away and back"])
def test_a_sheet_written_in_any_stay_of_its_writer_under_the_name_goes_back_to_it(
    repo: pygit2.Repository, root: Path, history: str
) -> None:
    """`topic` writes its sheet in the second it is made (`git checkout -b topic && stet
    note add ...`), or is renamed away and back with no Stet command between; it goes to
    `tmp`, and `other` takes the name `topic`. The sheet under `topic` is tmp's: it was
    written while tmp held the name, in the second its stay began, or in an earlier stay."""
    now = int(time.time())

    git_at(root, "branch", "other", at=now - 600)
    git_at(root, "checkout", "-q", "-b", "topic", at=now - 500)
    StyleSheet(resolve_target(root)).add("topic's")
    written = now - 500 if history == "written as it was made" else now - 450
    os.utime(Target(root, "branch", "topic").sheet_path, (written, written))
    git_at(root, "checkout", "-q", "main", at=now - 400)
    if history == "renamed away and back":
        git_at(root, "branch", "-m", "topic", "topic-typo", at=now - 400)
        git_at(root, "branch", "-m", "topic-typo", "topic", at=now - 350)
    git_at(root, "branch", "-m", "topic", "tmp", at=now - 300)
    git_at(root, "branch", "-m", "other", "topic", at=now - 200)
    git_at(root, "checkout", "-q", "topic", at=now - 200)
    assert resolve_target(root).name == "topic"
    assert _entries_of(root, "topic") == []
    assert _entries_of(root, "tmp") == ["topic's"]


@pytest.mark.skipif(shutil.which("git") is None, reason="git dates the renames")
def test_a_sheet_written_between_two_stays_of_the_last_holder_stays_where_it_is(
    repo: pygit2.Repository, root: Path
) -> None:
    """`tmp` held the name `topic` twice, and `y` held it in between and wrote its sheet then;
    `tmp` leaves it last, and `other` takes it. The sheet is none of tmp's stays': tmp does
    not get it."""
    now = int(time.time())

    git_at(root, "branch", "other", at=now - 600)
    git_at(root, "branch", "topic", at=now - 500)
    git_at(root, "branch", "-m", "topic", "tmp", at=now - 450)
    git_at(root, "branch", "y", at=now - 450)
    git_at(root, "branch", "-m", "y", "topic", at=now - 400)
    StyleSheet(Target(root, "branch", "topic")).add("y's")
    written = now - 380
    os.utime(Target(root, "branch", "topic").sheet_path, (written, written))
    git_at(root, "branch", "-m", "topic", "y2", at=now - 350)
    git_at(root, "branch", "-m", "tmp", "topic", at=now - 300)
    git_at(root, "branch", "-m", "topic", "tmp", at=now - 250)
    git_at(root, "branch", "-m", "other", "topic", at=now - 200)
    git_at(root, "checkout", "-q", "topic", at=now - 200)
    assert resolve_target(root).name == "topic"
    assert _entries_of(root, "topic") == ["y's"]
    assert not Target(root, "branch", "tmp").sheet_path.exists()


@pytest.mark.skipif(
    shutil.which("git") is None or sys.platform == "darwin",
    reason="git makes the branch; macOS refuses a file name that is not UTF-8",
)
def test_a_branch_whose_name_is_not_utf8_keeps_its_sheet(
    repo: pygit2.Repository, root: Path
) -> None:
    """Its header names it with U+FFFD for the byte, as the writer writes it: the sheet is
    still its own at the next write, follows the branch renamed away from the name (a reflog
    entry pygit2 cannot decode, read from the reflog's file), and a checkout away from it
    (another such entry, in HEAD's reflog) crashes no command."""
    name = b"caf\xe9"

    def git(*args: bytes) -> None:
        subprocess.run([b"git", *args], cwd=root, check=True, capture_output=True)

    git(b"checkout", b"-q", b"-b", name)
    target = resolve_target(root)
    assert target.name == name.decode("utf-8", "surrogateescape")
    StyleSheet(target).add("one")
    StyleSheet(resolve_target(root)).add("two")
    assert _entries_of(root, target.name) == ["one", "two"]
    assert 'target="caf\ufffd"' in target.sheet_path.read_text(encoding="utf-8")
    git(b"branch", b"-m", name, name + b"-2")
    renamed = resolve_target(root)
    assert renamed.name == name.decode("utf-8", "surrogateescape") + "-2"
    assert _entries_of(root, renamed.name) == ["one", "two"]
    assert not target.sheet_path.exists()
    assert 'target="caf\ufffd-2"' in renamed.sheet_path.read_text(encoding="utf-8")
    git(b"branch", b"-m", name + b"-2", b"plain")
    assert resolve_target(root).name == "plain"
    assert _entries_of(root, "plain") == ["one", "two"]
    text = Target(root, "branch", "plain").sheet_path.read_text(encoding="utf-8")
    assert "target=plain " in text
    git(b"checkout", b"-q", b"--detach")
    assert resolve_target(root).kind == "detached"


def test_sheet_survives_branch_switch_round_trip(repo: pygit2.Repository, root: Path) -> None:
    StyleSheet(resolve_target(root)).add("main only")
    repo.branches.local.create("other", repo[repo.head.target])
    repo.checkout(repo.branches.local["other"])
    assert StyleSheet(resolve_target(root)).entries() == []
    commit_files(repo, {"b.txt": "b\n"})
    repo.checkout(repo.branches.local["main"])
    assert [e.text for e in StyleSheet(resolve_target(root)).entries()] == ["main only"]


def test_a_line_typed_by_hand_is_the_newest_in_the_brief(sheet: StyleSheet) -> None:
    """Until the next write stores its time, a typed entry has none; the brief takes it as
    the newest of its kind, not the oldest, which a small budget cuts."""
    for number in range(40):
        sheet.add(f"convention number {number} " + "padding " * 10, kind="convention")
    text = sheet.path.read_text(encoding="utf-8")
    typed = "- Typed by hand: wrap errors with %w"
    first = text.index("\n- ", text.index("## Conventions")) + 1
    sheet.path.write_text(text[:first] + typed + "\n" + text[first:], encoding="utf-8")
    (entry,) = [e for e in sheet.entries() if e.text.startswith("Typed by hand")]
    assert not entry.has_time  # not stored yet
    small = sheet.brief(budget=300)
    assert small.left_out > 0
    assert "Typed by hand: wrap errors with %w" in small.text
