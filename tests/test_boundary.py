"""The boundary: Stet touches nothing outside the repository's work tree, follows no link on
the way, and opens only regular files, without ever blocking on a FIFO."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TypeVar

import pygit2
import pytest
from bounded import within
from repos import clone_committing_sheet, clone_linking_sheets_to, hostile_clone

from stet_lsp.core import safefs
from stet_lsp.core.errors import StetError
from stet_lsp.core.retention import collect_garbage
from stet_lsp.core.session import RepositorySession
from stet_lsp.core.sheet import StyleSheet
from stet_lsp.core.sheet_format import SHEET_LIMIT, new_document
from stet_lsp.core.targets import SHEETS_DIR, Target, resolve_target, target_key

Stet = Callable[..., tuple[int, str, str]]
T = TypeVar("T")
OLD = time.time() - 90 * 86400
SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def sheet_text(kind: str, name: str) -> str:
    return new_document(kind, name, name).render()


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder outside the repository holding what retention used to delete: old Markdown
    files, one of them a genuine-looking sheet named by its target's key."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "diary.md").write_text("my private notes\n")
    gone = folder / f"{target_key('branch', 'gone')}.md"
    gone.write_text(sheet_text("branch", "gone"))
    (folder / "victim.txt").write_text("do not touch\n")
    for path in folder.iterdir():
        os.utime(path, (OLD, OLD))
    return folder


def listing(folder: Path) -> dict[str, tuple[bytes | str, float]]:
    """Everything under `folder`: content (or link target) and modification time."""
    found: dict[str, tuple[bytes | str, float]] = {}
    for path in sorted(folder.rglob("*")):
        status = path.lstat()
        name = str(path.relative_to(folder))
        if path.is_symlink():
            found[name] = (os.readlink(path), status.st_mtime)
        elif path.is_file():
            found[name] = (path.read_bytes(), status.st_mtime)
        else:
            found[name] = ("<folder>", 0.0)
    return found


def sheet_of(root: Path) -> Path:
    return resolve_target(root).sheet_path


# -- a hostile repository, cloned ------------------------------------------------------


def test_a_cloned_repository_committing_the_sheets_folder_as_a_link(
    tmp_path: Path, outside: Path, stet: Stet
) -> None:
    clone = clone_linking_sheets_to(tmp_path, outside)
    root = Path(clone.workdir).resolve()
    cloned_link = root / SHEETS_DIR
    assert cloned_link.is_symlink() and cloned_link.resolve() == outside.resolve()
    before = listing(outside)

    for arguments in (["sheet", "gc", "--ttl", "0"], ["note", "add", "a note"], ["note", "list"]):
        code, _, err = stet(*arguments[:2], "-C", str(root), *arguments[2:])
        assert code == 1
        assert str(cloned_link) in err and "symbolic link" in err
        assert "Traceback" not in err
    with pytest.raises(StetError, match="symbolic link"):
        collect_garbage(clone, resolve_target(root), ttl_days=0)
    assert RepositorySession(root).load().error is not None
    assert listing(outside) == before


def test_a_committed_git_folder_is_a_file_of_the_clone_not_its_repository(
    tmp_path: Path, stet: Stet, monkeypatch: pytest.MonkeyPatch
) -> None:
    """git lets a folder laid out as a git folder (HEAD, config, objects/, refs/) be committed.
    Looking from inside it, libgit2 takes it for the repository, and its `core.worktree` can
    name any folder: Stet would keep that folder's sheets. The clone's own repository is the
    one Stet uses there, for the command line, the gate, the capstone and the editor."""
    victim = tmp_path / "victim"
    victim.mkdir()
    root = hostile_clone(
        tmp_path,
        {
            "tools/HEAD": "ref: refs/heads/evil\n",
            "tools/config": f"[core]\n\tbare = false\n\tworktree = {victim}\n",
            "tools/objects/.keep": "",
            "tools/refs/.keep": "",
            "tools/build.py": "print('hi')\n",
        },
    )
    tools = root / "tools"
    assert pygit2.discover_repository(str(tools)) == f"{tools}/"  # what libgit2 alone finds

    assert resolve_target(tools) == Target(root, "branch", "main")
    assert RepositorySession(tools).root == root  # the language server's session of a file
    code, _, err = stet("note", "add", "-C", str(tools), "use the existing helper")
    assert code == 0, err
    code, out, _ = stet("note", "list", "-C", str(tools), "--json")
    assert code == 0 and "use the existing helper" in out
    assert (
        "use the existing helper"
        in (root / SHEETS_DIR / f"{target_key('branch', 'main')}.md").read_text()
    )
    monkeypatch.chdir(tools)
    code, out, err = stet("gate", "check", "--json")
    assert code == 0 and json.loads(out)["findings"] == [], err
    code, _, err = stet("capstone", "-C", str(tools), "--dry-run", "-m", "a message")
    assert "main has no working trajectory" in err and str(victim) not in err
    assert list(victim.iterdir()) == []


def test_a_git_folder_naming_another_work_tree_outside_any_clone_is_refused(
    tmp_path: Path, stet: Stet
) -> None:
    """With no `.git` above it (an unpacked archive, say), a folder laid out as a git folder
    naming a work tree elsewhere is refused, with nothing written."""
    victim = tmp_path / "victim"
    victim.mkdir()
    tools = tmp_path / "archive" / "tools"
    for name, text in {
        "HEAD": "ref: refs/heads/main\n",
        "config": f"[core]\n\tbare = false\n\tworktree = {victim}\n",
    }.items():
        tools.mkdir(parents=True, exist_ok=True)
        (tools / name).write_text(text)
    (tools / "objects").mkdir()
    (tools / "refs").mkdir()
    with pytest.raises(StetError, match="names a work tree"):
        resolve_target(tools)
    code, _, err = stet("note", "add", "-C", str(tools), "a note")
    assert code == 1 and "refused" in err and "Traceback" not in err
    assert list(victim.iterdir()) == []


@pytest.mark.parametrize("linked", ["events.jsonl", "meta.json", "folder"])
def test_validate_follows_no_link_a_clone_commits_in_a_trajectory(
    tmp_path: Path, stet: Stet, monkeypatch: pytest.MonkeyPatch, linked: str
) -> None:
    """`stet trajectory validate` named a trajectory of a clone whose files (or the folder)
    are committed links to files outside it: refused, and nothing of them is shown."""
    outside = tmp_path / "outside"
    outside.mkdir()
    private = '{"kind": "tool_result", "call_id": "PRIVATE-VALUE-FROM-HOME"}\n'
    (outside / "events.jsonl").write_text(private)
    (outside / "meta.json").write_text('{"id": "PRIVATE-VALUE-FROM-HOME"}')
    folder = ".stet/trajectories/t"
    files = {f"{folder}/events.jsonl": "", f"{folder}/meta.json": "{}"}
    if linked == "folder":
        files, links = {}, {folder: str(outside)}
    else:
        del files[f"{folder}/{linked}"]
        links = {f"{folder}/{linked}": str(outside / linked)}
    root = hostile_clone(tmp_path, files | {"README.md": "hi\n"}, links)
    monkeypatch.chdir(root)
    for named in (folder, f"{folder}/events.jsonl"):
        code, out, err = stet("trajectory", "validate", named, "--json")
        assert code == 1 and "symbolic link" in err, (named, out, err)
        assert "PRIVATE" not in out + err


def test_validate_the_work_tree_itself_follows_no_link_it_commits(
    tmp_path: Path, stet: Stet, monkeypatch: pytest.MonkeyPatch
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "events.jsonl").write_text('{"kind": "PRIVATE-VALUE-FROM-HOME"}\n')
    links = {name: str(outside / name) for name in ("events.jsonl", "meta.json")}
    root = hostile_clone(tmp_path, {"README.md": "hi\n"}, links)
    monkeypatch.chdir(root / ".git")
    for named in (str(root), ".."):
        code, out, err = stet("trajectory", "validate", named)
        assert code == 1 and "symbolic link" in err, (named, out, err)
        assert "PRIVATE" not in out + err


@pytest.mark.parametrize("which", ["narration", "meta", "events"])
def test_a_trajectory_file_to_open_is_never_reached_through_a_linked_folder(
    tmp_path: Path, which: str
) -> None:
    """`stet.trajectory.open` (the editor opens what `trajectory_file` names): a clone that
    commits the working trajectory's folder as a link to a folder outside it is refused."""
    from stet_lsp.trajectory.operations import trajectory_file

    outside = tmp_path / "outside"
    outside.mkdir()
    for name in ("narration.md", "meta.json", "events.jsonl"):
        (outside / name).write_text("{}\n")
    working = f".stet/cache/trajectories/{target_key('branch', 'main')}"
    root = hostile_clone(tmp_path, {"README.md": "hi\n"}, {working: str(outside)})
    with pytest.raises(StetError, match="symbolic link"):
        trajectory_file(resolve_target(root), None, which)


# -- each position a link can take -------------------------------------------------------


LINKED = [".stet", ".stet/cache", ".stet/cache/sheets", ".stet/.gitignore", "SHEET", "LOCK"]


@pytest.mark.parametrize("position", LINKED)
def test_a_link_anywhere_on_the_way_is_refused_and_nothing_is_touched(
    root: Path, outside: Path, stet: Stet, position: str
) -> None:
    sheet = sheet_of(root)
    if position in {"SHEET", "LOCK"}:
        sheet.parent.mkdir(parents=True)
        (root / ".stet/.gitignore").write_text("cache/\n")
        (outside / "sheet.md").write_text(sheet_text("branch", "main") + "- copied entry\n")
        link = sheet if position == "SHEET" else sheet.with_name(sheet.name + ".lock")
        pointed = outside / ("sheet.md" if position == "SHEET" else "victim.txt")
    else:
        link = root / position
        link.parent.mkdir(parents=True, exist_ok=True)
        pointed = outside / ("victim.txt" if position.endswith(".gitignore") else "")
    link.symlink_to(pointed)
    before = listing(outside)

    code, _, err = stet("note", "add", "-C", str(root), "a note")
    assert code == 1 and str(link) in err and "symbolic link" in err, err
    assert "Traceback" not in err
    assert listing(outside) == before
    assert link.is_symlink() and os.readlink(link) == str(pointed)
    if position not in {"LOCK", ".stet/.gitignore"}:  # `note list` opens neither
        code, _, err = stet("note", "list", "-C", str(root))
        assert code == 1 and str(link) in err


def test_a_link_inside_the_repository_is_refused_as_well(root: Path, stet: Stet) -> None:
    (root / "elsewhere").mkdir()
    (root / ".stet").mkdir()
    (root / ".stet/cache").symlink_to(root / "elsewhere")
    code, _, err = stet("note", "add", "-C", str(root), "a note")
    assert code == 1 and "symbolic link" in err
    assert list((root / "elsewhere").iterdir()) == []


def test_the_gitignore_is_extended_by_replacing_it(root: Path) -> None:
    (root / ".stet").mkdir()
    (root / ".stet/.gitignore").write_bytes(b"*.bak\n\xff")
    StyleSheet(resolve_target(root)).add("a note")
    assert (
        root / ".stet/.gitignore"
    ).read_bytes() == b"*.bak\n\xff\ncache/\n.*.tmp\n.*.stet-before-capstone-*\n"


def test_a_cloned_gitignore_too_large_is_refused_unread(tmp_path: Path, stet: Stet) -> None:
    """Every write reads `.stet/.gitignore`: a clone committing one of gigabytes of blank lines
    (which git compresses to almost nothing) took `stet note add` to 2 GB of memory and 19 s
    at 200 MB, and a few gigabytes to more memory than a machine has. One over GITIGNORE_LIMIT
    is refused, naming it, and nothing is written."""
    rules = "cache/\n.*.tmp\n.*.stet-before-capstone-*\n"
    big = "\n" * safefs.GITIGNORE_LIMIT + rules
    root = hostile_clone(tmp_path, {".stet/.gitignore": big, "README.md": "hi\n"})
    code, _, err = stet("note", "add", "-C", str(root), "a note")
    assert code == 1 and "Traceback" not in err
    assert f"{root / '.stet/.gitignore'}: larger than {safefs.GITIGNORE_LIMIT:,} bytes" in err
    assert not sheet_of(root).exists()
    assert (root / ".stet/.gitignore").read_text() == big
    (root / ".stet/.gitignore").write_text(big[-safefs.GITIGNORE_LIMIT :])  # the limit itself
    code, _, err = stet("note", "add", "-C", str(root), "a note")
    assert code == 0, err


# -- temporary files ---------------------------------------------------------------------


def test_planted_temporary_links_do_not_redirect_gate_redact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, outside: Path, stet: Stet
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    (work / "n.md").write_text(f"token {SECRET}\n")
    # The names the gate used to write through, predictably.
    (work / ".n.md.stet-tmp").symlink_to(outside / "victim.txt")
    (work / ".r.json.stet-tmp").symlink_to(outside / "diary.md")
    before = listing(outside)

    code, _, err = stet("gate", "redact", "n.md", "--in-place", "--report", "r.json")
    assert code == 0, err
    assert SECRET not in (work / "n.md").read_text()
    assert json.loads((work / "r.json").read_text())
    assert listing(outside) == before
    leftovers = sorted(p.name for p in work.iterdir())
    assert leftovers == [".n.md.stet-tmp", ".r.json.stet-tmp", "n.md", "r.json"]


def test_gate_outputs_are_never_written_through_a_link(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, outside: Path, stet: Stet
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "n.md").write_text(f"token {SECRET}\n")
    (tmp_path / "report.json").symlink_to(outside / "victim.txt")
    (tmp_path / "out.md").symlink_to(outside / "diary.md")
    before = listing(outside)
    for arguments in (["--report", "report.json"], ["-o", "out.md"]):
        code, _, err = stet("gate", "redact", "n.md", *arguments)
        assert code == 1 and "symbolic link" in err
    assert listing(outside) == before


def test_temporary_files_are_created_exclusively(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, outside: Path
) -> None:
    """Were a name ever guessed, the planted file is not opened: O_CREAT | O_EXCL."""
    monkeypatch.setattr(safefs, "_random_suffix", lambda: "guessed")
    (tmp_path / ".out.guessed.tmp").symlink_to(outside / "victim.txt")
    before = listing(outside)
    with pytest.raises(StetError, match="temporary file"):
        safefs.atomic_write(tmp_path / "out", b"data")
    assert listing(outside) == before
    assert not (tmp_path / "out").exists()


def test_temporary_names_are_unpredictable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    names: list[str] = []
    real_replace = os.replace

    def spy(source: str | Path, destination: str | Path) -> None:
        names.append(Path(source).name)
        real_replace(source, destination)

    monkeypatch.setattr(os, "replace", spy)
    for _ in range(3):
        safefs.atomic_write(tmp_path / "out", b"data")
    assert len(set(names)) == 3 and all(name.startswith(".out.") for name in names)


@pytest.mark.parametrize("links", [True, False], ids=["hard links", "no hard links"])
def test_a_file_kept_aside_is_put_back_whole_with_its_permissions(
    root: Path, monkeypatch: pytest.MonkeyPatch, links: bool
) -> None:
    """`keep_aside` gives a file a second name while it is replaced: a hard link (the same
    file, nothing read), or a copy where the file system has none; `put_back` renames it
    back over whatever replaced it, and over the file itself when it was never replaced."""
    if not links:

        def no_hard_links(*args: object, **kwargs: object) -> None:
            raise PermissionError(1, "Operation not permitted")

        monkeypatch.setattr(os, "link", no_hard_links)
    folder = root / ".stet" / "cache"
    folder.mkdir(parents=True)
    path = folder / "events.jsonl"
    path.write_bytes(b"old\n" * 100_000)
    path.chmod(0o640)
    status = path.stat()

    aside = safefs.keep_aside(path, root, ".kept")
    assert aside is not None and aside.name.startswith(".events.jsonl.kept-")
    assert (aside.stat().st_ino == status.st_ino) is links
    assert aside.stat().st_mode == status.st_mode
    safefs.atomic_write(path, b"new\n", root)
    assert aside.read_bytes() == b"old\n" * 100_000
    safefs.put_back(aside, path, root)
    assert path.read_bytes() == b"old\n" * 100_000 and path.stat().st_mode == status.st_mode
    assert (path.stat().st_ino == status.st_ino) is links
    assert sorted(p.name for p in folder.iterdir()) == ["events.jsonl"]

    aside = safefs.keep_aside(path, root, ".kept")  # never replaced, then put back
    assert aside is not None
    safefs.put_back(aside, path, root)
    assert sorted(p.name for p in folder.iterdir()) == ["events.jsonl"]
    assert path.read_bytes() == b"old\n" * 100_000
    assert safefs.keep_aside(folder / "missing", root, ".kept") is None
    with pytest.raises(StetError, match="not a regular file"):
        safefs.keep_aside(folder.parent, root, ".kept")


# -- only regular files, never blocking --------------------------------------------------


# How much longer than `stet --help` a command refused at once may take: a named pipe read
# for ever takes longer than the run is given (30 s); a loaded machine starts Python a second
# or two slower from one run to the next.
AT_ONCE = 10.0


def run_cli(*arguments: str, cwd: Path) -> tuple[int, str, float]:
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "stet_lsp", *arguments],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=30,
    )
    return done.returncode, done.stderr, time.monotonic() - started


def test_a_fifo_is_refused_at_once_by_the_command_line(root: Path) -> None:
    sheet = sheet_of(root)
    sheet.parent.mkdir(parents=True)
    os.mkfifo(sheet)
    other = sheet.with_name(f"{target_key('branch', 'gone')}.md")
    os.mkfifo(other)
    *_, startup = run_cli("--help", cwd=root)
    for arguments in (["note", "list"], ["note", "add", "a note"], ["gate", "scan", str(sheet)]):
        code, err, elapsed = run_cli(*arguments, cwd=root)
        assert code == 1 and "named pipe" in err and "Traceback" not in err, err
        assert elapsed < startup + AT_ONCE
    code, err, elapsed = run_cli("sheet", "gc", "--ttl", "0", cwd=root)
    assert code == 0 and "Traceback" not in err and elapsed < startup + AT_ONCE
    assert other.exists()  # not a regular file: not proven to be a sheet


def test_a_fifo_as_the_anchored_file_or_a_working_file_is_refused_at_once(root: Path) -> None:
    os.mkfifo(root / "src" / "pipe.py")
    *_, startup = run_cli("--help", cwd=root)
    code, err, elapsed = run_cli(
        "note", "add", "x", "--file", "src/pipe.py", "--line", "1", cwd=root
    )
    assert code == 1 and "named pipe" in err and elapsed < startup + AT_ONCE
    code, err, elapsed = run_cli("check", cwd=root)
    assert "Traceback" not in err and elapsed < startup + AT_ONCE


def test_a_fifo_sheet_is_an_error_in_the_session_not_a_hang(root: Path) -> None:
    sheet = sheet_of(root)
    sheet.parent.mkdir(parents=True)
    os.mkfifo(sheet)
    session = RepositorySession(root)
    snapshot = within(10, session.load)
    assert snapshot.error is not None and "named pipe" in snapshot.error
    assert within(10, session.fingerprint) == session.fingerprint()


def test_a_fifo_as_gate_input_or_in_a_scanned_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stet: Stet
) -> None:
    """Never read (it would wait for a writer for ever): named, it is an error; found in a
    folder, it is passed over and named as not scanned."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "folder").mkdir()
    os.mkfifo(tmp_path / "folder/pipe")
    for arguments in (["scan", "folder/pipe"], ["redact", "folder/pipe"], ["check", "folder/pipe"]):
        code, _, err = within(10, partial(stet, "gate", *arguments))
        assert code == 1 and "named pipe" in err
    for arguments in (["scan", "folder"], ["check", "folder"]):
        code, _, err = within(10, partial(stet, "gate", *arguments))
        assert code == 0 and "folder/pipe: not a regular file (a named pipe" in err


def test_a_scanned_folder_never_follows_a_link_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, outside: Path, stet: Stet
) -> None:
    (outside / "credentials").write_text(f"token {SECRET}\n")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "folder").mkdir()
    (tmp_path / "folder/link").symlink_to(outside / "credentials")
    assert stet("gate", "scan", "folder")[0] == 0


def test_a_folder_as_the_sheet_is_a_one_line_error(root: Path, stet: Stet) -> None:
    sheet_of(root).mkdir(parents=True)
    for arguments in (["note", "list"], ["note", "add", "x"], ["brief"]):
        code, _, err = stet(*arguments[:2], "-C", str(root), *arguments[2:])
        assert code == 1 and "is a folder, not a regular file" in err
        assert err.count("\n") == 1 and "Traceback" not in err


def test_a_sheet_under_a_file_is_a_one_line_error(root: Path, stet: Stet) -> None:
    (root / ".stet/cache").mkdir(parents=True)
    (root / SHEETS_DIR).write_text("not a folder\n")
    for arguments in (["note", "list"], ["note", "add", "x"]):
        code, _, err = stet(*arguments[:2], "-C", str(root), *arguments[2:])
        assert code == 1 and "not a folder" in err and err.count("\n") == 1
    assert stet("sheet", "gc", "-C", str(root))[0] == 0


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_an_unreadable_sheet_is_a_one_line_error(root: Path, stet: Stet) -> None:
    StyleSheet(resolve_target(root)).add("a note")
    sheet_of(root).chmod(0)
    code, _, err = stet("note", "list", "-C", str(root))
    assert code == 1 and "Permission denied" in err and err.count("\n") == 1


def test_a_sheet_past_the_size_limit_is_refused_unread(root: Path, stet: Stet) -> None:
    """A sheet a cloned repository committed can hold gigabytes that git stores in a few
    (every command read it whole, and the language server with it): past SHEET_LIMIT it is
    refused, read no further, and left as it is."""
    StyleSheet(resolve_target(root)).add("a note")
    sheet = sheet_of(root)
    with sheet.open("a") as grown:
        grown.write(("- filler entry\n" * (SHEET_LIMIT // 15 + 1))[:SHEET_LIMIT])
    before = sheet.stat()
    for arguments in (["note", "list"], ["note", "add", "x"], ["brief"]):
        code, _, err = stet(*arguments[:2], "-C", str(root), *arguments[2:])
        assert code == 1 and "larger than 8 MiB, not read" in err and err.count("\n") == 1
    assert (sheet.stat().st_size, sheet.stat().st_mtime_ns) == (before.st_size, before.st_mtime_ns)


def test_a_read_only_sheet_is_left_as_it_is(root: Path, stet: Stet) -> None:
    """A sheet made read-only (chmod a-w: keep it as it is) was replaced by the next write,
    its mode kept; every writer now refuses it, naming the file, and it still reads."""
    StyleSheet(resolve_target(root)).add("a note")
    sheet = sheet_of(root)
    sheet.chmod(0o400)
    before = sheet.read_bytes()
    code, _, err = stet("note", "add", "-C", str(root), "another note")
    assert code == 1 and f"{sheet} is read-only" in err and err.count("\n") == 1
    with pytest.raises(StetError, match="is read-only"):
        StyleSheet(resolve_target(root)).add("from the core")
    assert sheet.read_bytes() == before
    code, out, _ = stet("note", "list", "-C", str(root))
    assert code == 0 and "a note" in out


def test_a_sheet_that_cannot_be_opened_is_a_one_line_error(
    root: Path, stet: Stet, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What chmod 000 does for anyone but root, simulated so it runs as root too."""
    StyleSheet(resolve_target(root)).add("a note")
    sheet = sheet_of(root)
    real_open = os.open

    def refusing(path: str | Path, flags: int, mode: int = 0o777, **kwargs: object) -> int:
        if Path(path) == sheet:
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, flags, mode)

    monkeypatch.setattr(os, "open", refusing)
    code, _, err = stet("note", "list", "-C", str(root))
    assert code == 1 and "Permission denied" in err and err.count("\n") == 1


def test_safefs_refuses_what_is_not_inside(root: Path, tmp_path: Path) -> None:
    with pytest.raises(StetError, match="outside the repository"):
        safefs.inside(root, tmp_path / "elsewhere")
    with pytest.raises(StetError, match="leaves the repository"):
        safefs.inside(root, ".stet/../../elsewhere")
    # Paths are read as pathlib reads them, strings or not: `.` and doubled separators are
    # nothing, a root's name is no prefix of another's, and a relative root holds no
    # absolute path.
    assert safefs.inside(str(root), f"{root}//.stet/./a") == root / ".stet" / "a"
    assert safefs.checked_path(root, "./.stet//a") == str(root / ".stet" / "a")
    with pytest.raises(StetError, match="outside the repository"):
        safefs.inside(root, f"{root}-old/a")
    with pytest.raises(StetError, match="outside the repository"):
        safefs.checked_path(".", root / "a")
    with pytest.raises(StetError, match=f"{root}/x/../y leaves the repository"):
        safefs.read_regular(f"{root}/x/../y", root)
    assert safefs.read_regular(root / ".stet/missing", root) is None
    safefs.atomic_write(root / ".stet-file", b"data", root)
    assert safefs.read_regular(root / ".stet-file", root) == b"data"
    assert safefs.remove_regular(root / ".stet-file", root)
    assert not safefs.remove_regular(root / ".stet-file", root)


# -- retention deletes only proven sheets ------------------------------------------------


def test_retention_leaves_a_sheet_the_repository_commits(tmp_path: Path) -> None:
    """A clone of a repository that commits the sheet of a branch the clone does not have:
    the sheet reads as the sheet of a branch that is gone, and retention (`stet sheet gc`,
    and the language server's own sweep) removed it, a deletion `git commit -a` would
    commit. A sheet git's index holds is none of this clone's working memory to remove."""
    root = clone_committing_sheet(tmp_path, branch="feature")
    sheet = root / SHEETS_DIR / f"{target_key('branch', 'feature')}.md"
    repo = pygit2.Repository(str(root))
    old = time.time() - 90 * 86400
    os.utime(sheet, (old, old))
    assert collect_garbage(repo, resolve_target(root), ttl_days=1).removed == []
    assert sheet.exists()
    assert sorted(path.name for path in sheet.parent.iterdir()) == [sheet.name]
    assert repo.status() == {}


def test_retention_removes_only_what_it_proves_is_a_sheet(
    repo: pygit2.Repository, root: Path, outside: Path
) -> None:
    current = resolve_target(root)
    StyleSheet(current).add("current")
    folder = root / SHEETS_DIR
    stale = Target(root, "named", "stale")
    StyleSheet(stale).add("stale")
    foreign = folder / "readme.md"
    foreign.write_text("# not a sheet\n")
    misnamed = folder / "copy.md"
    misnamed.write_text(sheet_text("named", "stale"))
    (folder / "linked.md").symlink_to(outside / f"{target_key('branch', 'gone')}.md")
    os.mkfifo(folder / "pipe.md")
    leftover = folder / f".{stale.key}.md.abc.tmp"
    leftover.write_text("torn")
    planted = folder / ".planted.md.abc.tmp"
    planted.symlink_to(outside / "victim.txt")
    for path in folder.iterdir():
        os.utime(path, (OLD, OLD), follow_symlinks=False)
    before = listing(outside)

    removed = collect_garbage(repo, current, ttl_days=1).removed
    assert [removal.path for removal in removed] == [stale.sheet_path]
    left = sorted(path.name for path in folder.iterdir())
    assert left == sorted(
        [
            ".planted.md.abc.tmp",
            current.sheet_path.name,
            current.sheet_path.name + ".lock",
            "copy.md",
            "linked.md",
            "pipe.md",
            "readme.md",
        ]
    )
    assert listing(outside) == before
