"""Files that are small by design (a trajectory's meta.json, a session's record, a feedback
file) are read only up to a limit: a repository can commit one of hundreds of megabytes that
git compresses to almost nothing. Each front end names the oversized file and goes on with
the others. The limits are lowered here (module constants) so no test writes a large file;
a sparse file stands for a large one where the real limit is kept."""

from __future__ import annotations

import json
import os
import shutil
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest
from test_importing import SESSION_A, simple_session

from stet_lsp.core.errors import StetError
from stet_lsp.core.targets import resolve_target
from stet_lsp.trajectory import feedback, operations, store
from stet_lsp.trajectory.feedback import feedback_path, mark_step, read_feedback
from stet_lsp.trajectory.importing import import_transcript, read_record
from stet_lsp.trajectory.operations import mark_at
from stet_lsp.trajectory.provenance import Provenance, TrajectoryLines
from stet_lsp.trajectory.store import COMMITTED, Folder, folders, read_small, working_folder

Run = Callable[..., tuple[int, str, str]]
LIMIT = 64 * 1024


@pytest.fixture
def working(root: Path, tmp_path: Path) -> Folder:
    source = simple_session(root, SESSION_A, "Add the greeting module")
    target = resolve_target(root)
    import_transcript(target, source.save(tmp_path / "session.jsonl"))
    return working_folder(target)


def huge_copy(root: Path, working: Folder, name: str = "huge") -> Path:
    """A committed copy of the working trajectory whose meta.json is padded past LIMIT with
    whitespace: still valid JSON, and the same header."""
    folder = root / COMMITTED / name
    shutil.copytree(working.path, folder, ignore=shutil.ignore_patterns("sessions"))
    meta = folder / "meta.json"
    meta.write_bytes(meta.read_bytes() + b" " * (LIMIT + 1))
    return folder


def test_list_show_and_validate_name_an_oversized_meta_json(
    stet: Run, root: Path, working: Folder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store, "HEADER_LIMIT", LIMIT)
    huge = huge_copy(root, working)
    size = (huge / "meta.json").stat().st_size
    code, out, err = stet("trajectory", "list", "--json", "-C", str(root))
    listed = json.loads(out)
    assert code == 0 and [row["id"] for row in listed["trajectories"]] == [working.id]
    assert listed["problems"] == [
        {
            "path": ".stet/trajectories/huge",
            "message": f".stet/trajectories/huge/meta.json: {size:,} bytes, over the "
            f"{LIMIT:,} such a file may hold (not read)",
        }
    ]
    code, out, err = stet("trajectory", "list", "-C", str(root))
    assert code == 0 and working.id in out
    assert "stet: warning: .stet/trajectories/huge: not listed: " in err and "not read" in err
    code, out, err = stet("trajectory", "validate", str(huge))
    assert code == 1 and f"over the {LIMIT:,} such a file may hold" in out + err


def test_provenance_names_an_oversized_meta_json_and_uses_the_others(
    root: Path, working: Folder
) -> None:
    """The real limit, and a sparse meta.json one byte over it: nothing of it is read."""
    folder = huge_copy(root, working, "sparse")
    with (folder / "meta.json").open("r+b") as stream:
        stream.truncate(store.HEADER_LIMIT + 1)
    [sparse] = [found for found in folders(root) if found.id == "sparse"]
    tracemalloc.start()
    try:
        with pytest.raises(StetError, match="such a file may hold"):
            TrajectoryLines.read(sparse)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1024 * 1024
    provenance = Provenance.load(root)
    assert [trajectory.id for trajectory in provenance.trajectories] == [working.id]
    [problem] = provenance.problems
    assert problem.startswith(".stet/trajectories/sparse/meta.json: ")
    assert f"over the {store.HEADER_LIMIT:,} such a file may hold" in problem


def test_an_oversized_session_record_is_taken_for_a_torn_one(
    root: Path, working: Folder, monkeypatch: pytest.MonkeyPatch
) -> None:
    [record] = sorted((working.path / "sessions").glob("*.json"))
    assert read_record(working, record.stem) is not None
    monkeypatch.setattr(store, "HEADER_LIMIT", record.stat().st_size - 1)
    assert read_record(working, record.stem) is None


def test_an_oversized_feedback_file_is_refused_not_read(
    root: Path, working: Folder, monkeypatch: pytest.MonkeyPatch
) -> None:
    mark_step(root, working, 2, "note", "first")
    path = root / feedback_path(working.id)
    monkeypatch.setattr(feedback, "FEEDBACK_LIMIT", path.stat().st_size + 10)
    path.write_bytes(path.read_bytes() + b"\n" * 11)
    with pytest.raises(StetError, match="such a file may hold"):
        read_feedback(root, working.id)
    with pytest.raises(StetError, match="such a file may hold"):
        mark_step(root, working, 3, "note", "second")
    assert path.read_bytes().count(b"\n") == 12  # nothing was added


def test_marking_a_step_by_a_line_of_meta_json_reads_nothing(
    root: Path, working: Folder, monkeypatch: pytest.MonkeyPatch
) -> None:
    huge = huge_copy(root, working)
    monkeypatch.setattr(store, "HEADER_LIMIT", LIMIT)

    def no_read(*args: object, **kwargs: object) -> None:
        raise AssertionError("read")

    monkeypatch.setattr(operations, "read_regular", no_read)
    with pytest.raises(StetError, match=r"meta\.json shows no steps: mark one in events\.jsonl"):
        mark_at(resolve_target(root), huge / "meta.json", None, 0, "wrong", None)


def test_read_small_reads_up_to_its_limit(tmp_path: Path) -> None:
    path = tmp_path / "meta.json"
    path.write_bytes(b"x" * 100)
    assert read_small(path, tmp_path, "meta.json", 100) == b"x" * 100
    with pytest.raises(store.TooLarge, match=r"meta\.json: 100 bytes, over the 99 "):
        read_small(path, tmp_path, "meta.json", 99)
    assert read_small(tmp_path / "none.json", tmp_path, "none.json", 99) is None


def sparse(path: Path, size: int) -> Path:
    """A file of `size` bytes that takes no room on disk (zeros)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.touch()
    os.truncate(path, size)
    return path


def test_graduation_names_an_oversized_skill_and_reads_none_of_it(root: Path) -> None:
    """A repository can commit a SKILL.md of gigabytes: graduating into that skill read it
    whole. One over SKILL_LIMIT (the real limit, a sparse file) is refused, naming it, with
    nothing read or changed."""
    from stet_lsp.core.sheet import StyleSheet
    from stet_lsp.trajectory.graduation import graduate
    from stet_lsp.trajectory.skills import SKILL_LIMIT

    huge = sparse(root / ".stet/skills/huge/SKILL.md", SKILL_LIMIT + 1)
    sheet = StyleSheet(resolve_target(root))
    entry = sheet.add("Use the retry helper", kind="convention")
    tracemalloc.start()
    try:
        with pytest.raises(StetError) as caught:
            graduate(sheet, entry.id, "skill", skill_name="huge")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert str(caught.value).startswith(
        f".stet/skills/huge/SKILL.md: {SKILL_LIMIT + 1:,} bytes, over the {SKILL_LIMIT:,} "
        "such a file may hold (not read)"
    )
    assert "nothing was changed" in str(caught.value)
    assert peak < SKILL_LIMIT
    assert sheet.get(entry.id).status == "open" and huge.stat().st_size == SKILL_LIMIT + 1


def test_the_capstone_refuses_a_staged_skill_over_the_limit_unread(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A skill graduation staged, replaced in the index by one over SKILL_LIMIT (lowered
    here): the capstone would read and gate it whole; it refuses, naming it."""
    import pygit2

    from stet_lsp.core.sheet import StyleSheet
    from stet_lsp.trajectory import capstone as capstone_module
    from stet_lsp.trajectory.capstone import CapstoneRefused, capstone
    from stet_lsp.trajectory.graduation import graduate

    source = simple_session(root, SESSION_A, "Add the greeting module")
    target = resolve_target(root)
    import_transcript(target, source.save(tmp_path / "session.jsonl"))
    sheet = StyleSheet(target)
    entry = sheet.add("Use the retry helper", kind="convention")
    graduate(sheet, entry.id, "skill", skill_name="retry")
    relative = ".stet/skills/retry/SKILL.md"
    repository = pygit2.Repository(str(root))
    index = repository.index
    staged = index[relative]
    limit = 4096
    blob = repository.create_blob(b"x" * (limit + 1))
    index.add(pygit2.IndexEntry(relative, blob, staged.mode))
    index.write()
    monkeypatch.setattr(capstone_module, "SKILL_LIMIT", limit)
    head = repository.head.target
    with pytest.raises(CapstoneRefused) as caught:
        capstone(target)
    assert caught.value.reason == "gate"
    assert str(caught.value).startswith(f"{relative} (staged): {limit + 1:,} bytes, over the")
    assert "nothing was changed" in str(caught.value)
    assert pygit2.Repository(str(root)).head.target == head
