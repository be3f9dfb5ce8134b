"""Concurrent writers lose nothing; a writer killed mid-write leaves the previous sheet whole."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pygit2
import pytest
from repos import age_head

from stet_lsp.core import session as session_module
from stet_lsp.core import sheet as sheet_module
from stet_lsp.core.locking import file_lock
from stet_lsp.core.retention import collect_garbage
from stet_lsp.core.session import RepositorySession
from stet_lsp.core.sheet import StyleSheet
from stet_lsp.core.targets import Target, current_target, resolve_target

WRITER = textwrap.dedent(
    """
    import sys
    from stet_lsp.core.sheet import StyleSheet
    from stet_lsp.core.targets import resolve_target

    root, worker, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    sheet = StyleSheet(resolve_target(root))
    for number in range(count):
        sheet.add(f"worker {worker} entry {number}", kind="note", author="agent")
    """
)


def test_four_processes_adding_a_hundred_entries_each_lose_nothing(root: Path) -> None:
    workers = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(root), str(worker), "100"])
        for worker in range(4)
    ]
    assert [worker.wait(timeout=300) for worker in workers] == [0, 0, 0, 0]
    document = StyleSheet(resolve_target(root)).read()
    texts = sorted(entry.text for entry in document.entries())
    expected = sorted(f"worker {w} entry {n}" for w in range(4) for n in range(100))
    assert texts == expected
    assert len({entry.id for entry in document.entries()}) == 400
    assert document.problems == []


HANGING_WRITER = textwrap.dedent(
    """
    import os, sys, time
    from pathlib import Path
    from stet_lsp.core.sheet import StyleSheet
    from stet_lsp.core.targets import resolve_target

    root, signal_file = sys.argv[1], Path(sys.argv[2])
    # Resolved before the hang is set up: it may write (and sync) the cached branch of HEAD.
    sheet = StyleSheet(resolve_target(root))
    real_fsync = os.fsync

    def fsync_then_hang(descriptor):
        real_fsync(descriptor)
        signal_file.write_text("writing")
        time.sleep(600)

    os.fsync = fsync_then_hang
    sheet.add("never lands", author="agent")
    """
)


def test_a_writer_killed_mid_write_leaves_the_previous_file_intact(
    repo: pygit2.Repository, root: Path, tmp_path: Path
) -> None:
    sheet = StyleSheet(resolve_target(root))
    for number in range(50):
        sheet.add(f"entry {number}")
    age_head(repo)  # as on a slow machine: the writer caches the branch of HEAD
    before = sheet.path.read_bytes()
    signal_file = tmp_path / "writing"
    writer = subprocess.Popen([sys.executable, "-c", HANGING_WRITER, str(root), str(signal_file)])
    try:
        deadline = time.monotonic() + 60
        while not signal_file.exists():
            assert time.monotonic() < deadline, "the writer never reached its write"
            assert writer.poll() is None
            time.sleep(0.02)
        # The new content is written and synced to a temporary file, not yet renamed.
        leftovers = list(sheet.path.parent.glob(f".{sheet.path.name}.*.tmp"))
        assert leftovers and b"never lands" in leftovers[0].read_bytes()
    finally:
        os.kill(writer.pid, signal.SIGKILL)  # a failed check leaves no writer hanging
        writer.wait(timeout=30)
    assert sheet.path.read_bytes() == before
    assert len(sheet.entries()) == 50
    # The lock died with the writer: the next write goes through.
    sheet.add("after the crash")
    assert len(sheet.entries()) == 51


RANDOM_KILL_WRITER = textwrap.dedent(
    """
    import sys
    from stet_lsp.core.sheet import StyleSheet
    from stet_lsp.core.targets import resolve_target

    sheet = StyleSheet(resolve_target(sys.argv[1]))
    number = 0
    while True:
        sheet.add(f"bulk {number} " + "x" * 2000, author="agent")
        number += 1
    """
)


def test_writers_killed_at_random_moments_never_tear_the_sheet(root: Path) -> None:
    sheet = StyleSheet(resolve_target(root))
    sheet.add("seed")
    counts = [1]
    for delay in (0.35, 0.5, 0.65, 0.8, 0.95):
        writer = subprocess.Popen([sys.executable, "-c", RANDOM_KILL_WRITER, str(root)])
        time.sleep(delay)
        os.kill(writer.pid, signal.SIGKILL)
        writer.wait(timeout=30)
        document = sheet.read()
        assert document.problems == []
        counts.append(len(list(document.entries())))
    assert counts == sorted(counts)


def test_a_held_lock_excludes_another_process_and_a_thread_until_released(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    from stet_lsp.core import locking
    from stet_lsp.core.errors import StetError
    from stet_lsp.core.locking import file_lock, held

    lock = tmp_path / "sheet.md.lock"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(
                f"""
                import sys, time
                from pathlib import Path
                from stet_lsp.core.locking import held
                with held(Path({str(lock)!r}), Path({str(tmp_path)!r}), 0) as acquired:
                    print(acquired, flush=True)
                    sys.stdin.readline()
                """
            ),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "True"
        with held(lock, tmp_path, 0) as acquired:
            assert not acquired  # another process holds it
        started = time.monotonic()
        with held(lock, tmp_path, 0.3) as acquired:
            assert not acquired and time.monotonic() - started >= 0.3  # waited, then gave up
    finally:
        assert holder.stdin is not None
        holder.stdin.write("\n")
        holder.stdin.close()
        holder.wait(timeout=10)
    with held(lock, tmp_path, 0) as acquired:
        assert acquired
        seen: list[bool] = []

        def other_thread() -> None:
            with held(lock, tmp_path, 0) as got:
                seen.append(got)

        thread = threading.Thread(target=other_thread)
        thread.start()
        thread.join()
        assert seen == [False]  # a second open file of this process is excluded too
    monkeypatch.setattr(locking, "LOCK_TIMEOUT_SECONDS", 0.1)
    try:
        with held(lock, tmp_path, 0) as outer, file_lock(tmp_path / "sheet.md", tmp_path, "it"):
            raise AssertionError("the second lock must not be taken")
    except StetError as error:
        assert "locked by another process" in str(error) and outer


def test_a_lock_file_its_holder_removes_is_never_held_twice(tmp_path: Path) -> None:
    """A writer waiting on a lock file that its holder removes (retention removing a stale
    sheet's lock) takes the lock of the path's new file, so it excludes the next writer."""
    from stet_lsp.core.locking import held, remove_held

    lock = tmp_path / "sheet.md.lock"
    acquired_by_waiter: list[bool] = []
    release_waiter = threading.Event()

    def waiter() -> None:
        with held(lock, tmp_path, 10) as got:
            acquired_by_waiter.append(got)
            release_waiter.wait(10)

    with held(lock, tmp_path, 0) as acquired:
        assert acquired
        thread = threading.Thread(target=waiter)
        thread.start()
        time.sleep(0.3)  # the waiter has opened the file and waits on it
        remove_held(lock, tmp_path)
        assert not lock.exists()
    try:
        deadline = time.monotonic() + 10
        while not acquired_by_waiter and time.monotonic() < deadline:
            time.sleep(0.01)
        assert acquired_by_waiter == [True]
        assert lock.exists()  # the waiter locked the path's new file ...
        with held(lock, tmp_path, 0) as got:
            assert not got  # ... so the next writer waits for it
    finally:
        release_waiter.set()
        thread.join(10)
    with held(lock, tmp_path, 0) as got:
        assert got


def test_retention_never_removes_a_sheet_a_writer_holds_or_wrote_since(
    repo: pygit2.Repository, root: Path
) -> None:
    """A stale sheet is removed under its lock, and only when it is still the file judged
    stale: a writer holding the lock keeps it, and the lock file stays, so a second writer
    waits for the first instead of taking a lock of its own beside it."""
    stale = Target(root, "named", "old-topic")
    first = StyleSheet(stale).add("written a month ago")
    month_ago = time.time() - 40 * 86400
    os.utime(stale.sheet_path, (month_ago, month_ago))
    inside_lock, release = threading.Event(), threading.Event()

    def edit() -> None:
        with StyleSheet(stale).edit() as document:
            inside_lock.set()
            release.wait(10)
            entry = document.find(first.id)
            assert entry is not None
            entry.text = "edited while retention ran"
            document.touch(first.id)

    editor = threading.Thread(target=edit)
    editor.start()
    assert inside_lock.wait(10)
    try:
        assert collect_garbage(repo, current_target(repo)).removed == []  # held: left alone
        assert stale.sheet_path.exists()
        assert os.path.exists(f"{stale.sheet_path}.lock")
        added: list[str] = []
        second = threading.Thread(target=lambda: added.append(StyleSheet(stale).add("B").id))
        second.start()
        time.sleep(0.3)
        assert not added  # waits for the first writer: one lock
    finally:
        release.set()
        editor.join(10)
    second.join(20)
    assert [entry.text for entry in StyleSheet(stale).entries()] == [
        "edited while retention ran",
        "B",
    ]
    # Written since: no longer stale. Judged old again, it goes.
    assert collect_garbage(repo, current_target(repo)).removed == []
    os.utime(stale.sheet_path, (month_ago, month_ago))
    assert [r.target for r in collect_garbage(repo, current_target(repo)).removed] == ["old-topic"]
    assert not stale.sheet_path.exists()


def test_a_renamed_branch_sheet_moves_only_when_no_writer_holds_it(
    repo: pygit2.Repository, root: Path
) -> None:
    """A writer holding the old sheet's (or the new name's) lock keeps the move from
    happening; a later run moves it, with what was added meanwhile."""
    repo.branches.local.create("draft", repo[repo.head.target])
    old = Target(root, "branch", "draft")
    StyleSheet(old).add("first")
    repo.branches.local["draft"].rename("draft-2")
    new = Target(root, "branch", "draft-2")
    for held_path in (old.sheet_path, new.sheet_path):
        with file_lock(held_path, root, "a writer"):
            assert collect_garbage(repo, current_target(repo)).moved == []
        assert old.sheet_path.exists() and not new.sheet_path.exists()
    StyleSheet(old).add("added while the move waited")
    moved = collect_garbage(repo, current_target(repo)).moved
    assert [(m.path, m.to) for m in moved] == [(old.sheet_path, new.sheet_path)]
    assert [e.text for e in StyleSheet(new).entries()] == ["first", "added while the move waited"]


@pytest.mark.parametrize("written_first", [0.0, 0.5])
def test_a_sheet_saved_in_place_is_not_written_over_half_saved(
    root: Path, written_first: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An editor that saves in place truncates the sheet and then writes it: a write that
    reads it in between (empty, or cut mid-line) waits for the save to end, and keeps every
    entry of it."""
    # A save still for SAVE_SETTLE_SECONDS (2 s) is taken as done: a loaded machine can hold
    # this test's thread that long between the two halves of its save.
    monkeypatch.setattr(sheet_module, "SAVE_SETTLE_SECONDS", 60.0)
    sheet = StyleSheet(resolve_target(root))
    for number in range(6):
        sheet.add(f"base {number}")
    text = sheet.path.read_text(encoding="utf-8")
    text = text.replace("## Notes\n", "## Notes\n\n- typed by hand\n", 1)
    cut = int(len(text) * written_first)
    while cut and text[cut - 1] == "\n":
        cut -= 1  # a cut mid-line, as a save caught in the middle is
    added: list[str] = []
    with open(sheet.path, "w", encoding="utf-8") as saving:
        saving.write(text[:cut])
        saving.flush()
        writer = threading.Thread(target=lambda: added.append(sheet.add("agent note").id))
        writer.start()
        time.sleep(0.4)
        assert not added  # waiting for the save to end
        saving.write(text[cut:])
    writer.join(10)
    assert added
    texts = [entry.text for entry in StyleSheet(resolve_target(root)).entries()]
    assert texts == ["typed by hand", *(f"base {n}" for n in range(6)), "agent note"]


@pytest.mark.parametrize("cut", ["empty", "inside a line", "inside a character"])
def test_a_sheet_read_in_the_middle_of_a_save_in_place_is_read_whole(
    root: Path, cut: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the language server takes for the sheet on disk (`RepositorySession.load`, the
    text merged into an open buffer and the base of the next merge) is never the empty or
    cut file of a save in place caught in the middle: the read waits for the save to end."""
    monkeypatch.setattr(session_module, "READ_SETTLE_SECONDS", 60.0)  # as above
    sheet = StyleSheet(resolve_target(root))
    sheet.add("first")
    session = RepositorySession(root)
    assert [entry.text for entry in session.load().document.entries()] == ["first"]
    text = sheet.path.read_text(encoding="utf-8") + "\n- saved by hand, café\n"
    data = text.encode("utf-8")
    written = {"empty": 0, "inside a line": len(data) - 4, "inside a character": len(data) - 2}
    loaded: list[str | None] = []
    with open(sheet.path, "wb") as saving:
        saving.write(data[: written[cut]])
        saving.flush()
        reader = threading.Thread(target=lambda: loaded.append(session.load().text))
        reader.start()
        time.sleep(0.4)
        assert not loaded  # waiting for the save to end
        saving.write(data[written[cut] :])
    reader.join(10)
    assert loaded == [text]


def test_a_sheet_without_a_final_line_break_dated_in_the_future_is_written_all_the_same(
    root: Path,
) -> None:
    """A sheet that does not end with a line break is waited for while it may be in the
    middle of a save, but for no longer than it stays still: a modification time in the
    future (a clock set back, a file from another machine) does not hold the writer, and the
    sheet's lock, forever."""
    sheet = StyleSheet(resolve_target(root))
    sheet.add("before")
    sheet.path.write_text(sheet.path.read_text() + "- typed by hand, no line break")
    future = time.time() + 3600
    os.utime(sheet.path, (future, future))
    code = (
        "import sys\n"
        "from stet_lsp.core.sheet import StyleSheet\n"
        "from stet_lsp.core.targets import resolve_target\n"
        "StyleSheet(resolve_target(sys.argv[1])).add('agent note', author='agent')\n"
    )
    try:
        subprocess.run([sys.executable, "-c", code, str(root)], check=True, timeout=20)
    except subprocess.TimeoutExpired:
        pytest.fail("the writer waited for the sheet to stop changing and never wrote")
    texts = [entry.text for entry in sheet.entries()]
    assert texts == ["before", "typed by hand, no line break", "agent note"]


@pytest.mark.parametrize("operation", ["add", "discard", "edit"])
def test_a_save_landing_while_a_writer_writes_is_merged_in_not_written_over(
    root: Path, monkeypatch: pytest.MonkeyPatch, operation: str
) -> None:
    """An editor takes no lock: a person's save that lands after a writer read the sheet and
    before it renamed its new text over it keeps what the person typed and changed, and the
    writer's change too. An entry the save lacks is kept: the editor may never have held it."""
    sheet = StyleSheet(resolve_target(root))
    kept = sheet.add("kept")
    reworded = sheet.add("to be reworded by hand")
    editor_read = sheet.path.read_text(encoding="utf-8")  # what the editor holds
    unseen = sheet.add("added by another writer after the editor read the sheet")
    saved = editor_read.replace("to be reworded by hand", "reworded by hand")
    saved += "- typed and saved in the editor\n"
    real_fsync = os.fsync
    saves: list[str] = []

    def fsync_then_save(descriptor: int) -> None:
        real_fsync(descriptor)
        if not saves:  # the writer's new text is synced, not renamed yet: the editor saves
            saves.append(saved)
            editor_copy = sheet.path.with_name("editor-save")
            editor_copy.write_text(saved, encoding="utf-8")
            os.replace(editor_copy, sheet.path)

    monkeypatch.setattr(os, "fsync", fsync_then_save)
    if operation == "add":
        sheet.add("agent note", author="agent")
    elif operation == "discard":
        sheet.set_status(kept.id, "discarded")
    else:
        sheet.edit_text(kept.id, "kept, edited by the agent")
    monkeypatch.undo()
    assert saves
    document = sheet.read()
    assert document.problems == []
    entries = {entry.text: entry for entry in document.entries()}
    expected = [
        "kept, edited by the agent" if operation == "edit" else "kept",
        "reworded by hand",
        unseen.text,
        "typed and saved in the editor",
        *(["agent note"] if operation == "add" else []),
    ]
    assert sorted(entries) == sorted(expected)
    assert entries["reworded by hand"].id == reworded.id
    assert entries[unseen.text].id == unseen.id
    status = document.find(kept.id).status  # type: ignore[union-attr]
    assert status == ("discarded" if operation == "discard" else "open")


def _writer_lands_after_the_check(
    path: Path, theirs: bytes, expected: bytes | None
) -> Callable[[Path], bool]:
    """An `unchanged` that says the file holds `expected`, and then lets another program
    (one that takes no lock: a harness writing its settings) replace it, once: the moment
    between a check and a rename."""
    from stet_lsp.core.safefs import holding

    holds = holding(expected)
    landed: list[bool] = []

    def unchanged(name: Path) -> bool:
        answer = holds(name)
        if not landed:
            landed.append(True)
            spare = path.with_name("their-write")
            spare.write_bytes(theirs)
            os.replace(spare, path)
        return answer

    return unchanged


def _skip_without_exchange(folder: Path) -> None:
    from stet_lsp.core import renameat

    first, second = folder / "probe-1", folder / "probe-2"
    first.write_bytes(b"1")
    second.write_bytes(b"2")
    if not renameat.exchange(str(first), str(second)):
        pytest.skip("renameat2 cannot exchange files here")
    first.unlink()
    second.unlink()


@pytest.mark.parametrize("before", [b'{"allow": []}\n', None], ids=["file", "no-file"])
def test_a_write_landing_between_the_check_and_the_rename_is_not_written_over(
    tmp_path: Path, before: bytes | None
) -> None:
    """A harness's settings are replaced only while they hold what was read. Checked and then
    renamed, a harness writing between the two lost its write (a permission granted); the
    files are exchanged instead and the replaced one checked again: it is put back, and the
    write is made again from a new reading."""
    from stet_lsp.core.safefs import ChangedMeanwhile, atomic_write

    _skip_without_exchange(tmp_path)
    path = tmp_path / "settings.local.json"
    if before is not None:
        path.write_bytes(before)
    theirs = b'{"allow": ["Bash(make test)"]}\n'
    unchanged = _writer_lands_after_the_check(path, theirs, before)
    with pytest.raises(ChangedMeanwhile):
        atomic_write(path, b'{"hooks": {}}\n', tmp_path, unchanged=unchanged)
    assert path.read_bytes() == theirs
    assert sorted(p.name for p in tmp_path.iterdir()) == ["settings.local.json"]
    atomic_write(path, b'{"hooks": {}}\n', tmp_path, unchanged=lambda name: True)
    assert path.read_bytes() == b'{"hooks": {}}\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["settings.local.json"]


def test_a_second_write_landing_while_the_replaced_file_is_checked_is_the_one_kept(
    tmp_path: Path,
) -> None:
    """The other program writes after the check, and again (over this write) while the file
    it replaced is checked: exchanged back, its second write would have been at the temporary
    name and removed with it. Its newest write is the file's."""
    from stet_lsp.core.safefs import ChangedMeanwhile, atomic_write, holding

    _skip_without_exchange(tmp_path)
    path = tmp_path / "settings.local.json"
    path.write_bytes(b"read\n")
    holds = holding(b"read\n")
    writes = iter([b"first\n", b"second\n"])

    def unchanged(name: Path) -> bool:
        answer = holds(name)
        theirs = next(writes, None)
        if theirs is not None:
            spare = tmp_path / "their-write"
            spare.write_bytes(theirs)
            os.replace(spare, path)
        return answer

    with pytest.raises(ChangedMeanwhile):
        atomic_write(path, b"ours\n", tmp_path, unchanged=unchanged)
    assert path.read_bytes() == b"second\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["settings.local.json"]
