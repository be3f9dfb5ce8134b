"""The `stet` command line, in-process and as a real subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pygit2
import pytest
from repos import INJECTED, clone_committing_sheet, commit_files, make_repo

from stet_lsp.core.anchors import make_anchor
from stet_lsp.core.model import Anchor
from stet_lsp.core.sheet import StyleSheet
from stet_lsp.core.targets import resolve_target

Run = Callable[..., tuple[int, str, str]]


def test_note_lifecycle_from_a_subfolder(stet: Run, root: Path) -> None:
    where = str(root / "src")
    code, out, err = stet(
        "note",
        "add",
        "Wrap errors with %w",
        "--kind",
        "convention",
        "--author",
        "agent",
        "-C",
        where,
    )
    assert (code, err) == (0, "")
    entry_id = out.strip()
    code, out, _ = stet(
        "note",
        "add",
        "use the helper",
        "--kind",
        "markup",
        "--file",
        "app.py",
        "--line",
        "3",
        "-C",
        where,
        "--json",
    )
    assert code == 0
    anchored = json.loads(out)["entry"]
    assert anchored["anchor"] == {"path": "src/app.py", "line": 3, "text": "line 3"}

    code, out, _ = stet("note", "list", "-C", where)
    assert entry_id in out and "[src/app.py:3]" in out

    assert stet("note", "edit", entry_id, "Wrap errors with %w, always", "-C", where)[0] == 0
    assert stet("note", "discard", anchored["id"], "-C", where)[0] == 0
    code, out, _ = stet("note", "show", entry_id, "-C", where)
    assert "Wrap errors with %w, always" in out and "status:  open" in out
    code, out, _ = stet("note", "list", "--status", "discarded", "--json", "-C", where)
    assert [e["id"] for e in json.loads(out)["entries"]] == [anchored["id"]]


def test_list_json_is_the_documented_shape(stet: Run, root: Path) -> None:
    stet("note", "add", "anchored", "--file", "src/app.py", "--line", "2", "-C", str(root))
    code, out, _ = stet("note", "list", "--json", "-C", str(root))
    assert code == 0
    document = json.loads(out)
    assert set(document) == {
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
    assert document["version"] == 1 and document["more"] == 0
    assert document["target"]["kind"] == "branch" and document["target"]["name"] == "main"
    entry = document["entries"][0]
    assert set(entry) == {
        "id",
        "kind",
        "author",
        "status",
        "text",
        "created",
        "anchor",
        "placement",
    }
    assert entry["placement"] == {"line": 2, "lost": False}


def test_filters(stet: Run, root: Path) -> None:
    r = str(root)
    stet("note", "add", "a", "--kind", "convention", "--author", "agent", "-C", r)
    stet("note", "add", "b", "--kind", "ruled-out", "-C", r)
    stet("note", "add", "c", "--file", "README.md", "--line", "1", "-C", r)

    def texts(*filters: str) -> list[str]:
        return [
            e["text"]
            for e in json.loads(stet("note", "list", "--json", "-C", r, *filters)[1])["entries"]
        ]

    assert texts("--kind", "convention") == ["a"]
    assert texts("--author", "human") == ["b", "c"]
    assert texts("--file", "README.md") == ["c"]
    assert texts("--status", "open") == ["a", "b", "c"]


def test_target_option_keeps_targets_apart(stet: Run, root: Path) -> None:
    r = str(root)
    stet("note", "add", "for the PR", "--target", "pr-42", "-C", r)
    stet("note", "add", "for the branch", "-C", r)
    pr = json.loads(stet("note", "list", "--json", "--target", "pr-42", "-C", r)[1])
    branch = json.loads(stet("note", "list", "--json", "-C", r)[1])
    assert [e["text"] for e in pr["entries"]] == ["for the PR"]
    assert [e["text"] for e in branch["entries"]] == ["for the branch"]
    assert pr["sheet"] != branch["sheet"]
    assert stet("sheet", "path", "--target", "pr-42", "-C", r)[1].strip() == pr["sheet"]


def test_a_target_named_as_a_branch_says_it_is_not_that_branch(stet: Run, root: Path) -> None:
    """`--target main` on branch main opens a named target, apart from the branch's sheet: the
    command says so on standard error, and its output stays as it is."""
    r = str(root)
    branch = pygit2.Repository(r).head.shorthand
    stet("note", "add", "for the branch", "-C", r)
    code, out, err = stet("note", "list", "--json", "--target", branch, "-C", r)
    assert code == 0 and json.loads(out)["entries"] == []
    assert f"--target {branch} names a target of its own, not the branch {branch}" in err
    assert stet("note", "list", "--json", "--target", "pr-42", "-C", r)[2] == ""


def test_brief_pause_resume(stet: Run, root: Path) -> None:
    r = str(root)
    stet("note", "add", "remember this", "--kind", "clarification", "-C", r)
    code, out, _ = stet("brief", "-C", r)
    assert out.startswith("## Style sheet\n") and "remember this" in out
    assert json.loads(stet("brief", "--budget", "50", "--json", "-C", r)[1])["left_out"] == 1
    assert stet("pause", "--until", "2999-01-01", "-C", r)[0] == 0
    code, _, err = stet("note", "add", "agent note", "--author", "agent", "-C", r)
    assert code == 1 and "paused until 2999-01-01T00:00:00Z" in err
    listing = json.loads(stet("note", "list", "--json", "-C", r)[1])
    assert listing["paused"] is True and listing["paused_until"] == "2999-01-01T00:00:00Z"
    assert stet("resume", "-C", r) == (0, "resumed the style sheet of main\n", "")
    assert stet("note", "add", "agent note", "--author", "agent", "-C", r)[0] == 0
    assert stet("resume", "-C", r) == (0, "the style sheet of main was not paused\n", "")
    assert json.loads(stet("resume", "--json", "-C", r)[1])["was_paused"] is False


def test_resume_with_nothing_paused_writes_nothing(stet: Run, root: Path) -> None:
    """Not the sheet, not Stet's .gitignore, not a lock file: nothing was paused."""
    before = sorted(path for path in root.rglob("*") if ".git" not in path.parts)
    assert stet("resume", "-C", str(root)) == (0, "the style sheet of main was not paused\n", "")
    assert sorted(path for path in root.rglob("*") if ".git" not in path.parts) == before


def test_a_sheet_git_tracks_is_not_briefed(stet: Run, tmp_path: Path) -> None:
    """A clone can commit the sheet of the branch its users check out: its text is not this
    clone's working memory, and must not reach an agent as such."""
    root = clone_committing_sheet(tmp_path)
    r = str(root)
    relative = Path(json.loads(stet("note", "list", "--json", "-C", r)[1])["sheet"])
    relative_text = relative.relative_to(root).as_posix()
    for args in (("brief", "-C", r), ("brief", "--json", "-C", r)):
        code, out, err = stet(*args)
        assert (code, out) == (1, "") and INJECTED not in err
        assert f"git's index holds {relative_text}" in err
        assert f"git rm --cached {relative_text}" in err
    # Listing still works.
    listed = json.loads(stet("note", "list", "--json", "-C", r)[1])
    assert [e["text"] for e in listed["entries"]] == [INJECTED]
    # Untracked (the file and its entries stay), the sheet is briefed again.
    subprocess.run(["git", "rm", "-q", "--cached", relative_text], cwd=root, check=True)
    assert stet("note", "add", "mine", "-C", r)[0] == 0
    code, out, _ = stet("brief", "-C", r)
    assert code == 0 and "mine" in out and INJECTED in out


def files_of(root: Path) -> dict[str, bytes]:
    return {
        path.relative_to(root).as_posix(): path.read_bytes()
        for path in root.rglob("*")
        if ".git" not in path.relative_to(root).parts and path.is_file()
    }


def test_a_sheet_git_tracks_is_not_written(stet: Run, tmp_path: Path) -> None:
    """The sheet is never committed: one git's index holds came with the repository (or was
    staged), and a note, a pause or a resume written to it would be committed with it. Each
    write refuses it, naming the file and how to untrack it, and changes nothing: not the
    sheet, not `.stet/.gitignore`, no lock file."""
    root = clone_committing_sheet(tmp_path)
    r = str(root)
    relative = StyleSheet(resolve_target(root)).path.relative_to(root).as_posix()
    before = files_of(root)
    writes = [
        ("note", "add", "mine", "-C", r),
        ("note", "add", "an agent's", "--author", "agent", "-C", r),
        ("note", "edit", "inject", "softened", "-C", r),
        ("note", "discard", "inject", "-C", r),
        ("pause", "-C", r),
        ("pause", "--until", "2999-01-01", "-C", r),
        ("resume", "-C", r),
        ("graduate", "inject", "--to", "discard", "-C", r),
        ("graduate", "inject", "--to", "trajectory", "-C", r),
    ]
    for args in writes:
        for json_flag in ((), ("--json",)):
            code, out, err = stet(*args, *json_flag)
            assert (code, out) == (1, ""), args
            assert err.startswith(
                f"stet: error: the style sheet of main is not written: git's index holds {relative}"
            ), args
            assert f"git rm --cached {relative}" in err and "Nothing was changed" in err
            assert files_of(root) == before, args
    # Reading still works.
    assert stet("note", "show", "inject", "-C", r)[0] == 0
    subprocess.run(["git", "rm", "-q", "--cached", relative], cwd=root, check=True)
    assert stet("note", "add", "mine", "-C", r)[0] == 0
    assert stet("pause", "-C", r)[0] == 0
    assert stet("resume", "-C", r) == (0, "resumed the style sheet of main\n", "")


def test_errors_go_to_stderr_with_a_nonzero_exit(stet: Run, root: Path, tmp_path: Path) -> None:
    r = str(root)
    cases = [
        (("note", "edit", "nosuch", "x", "-C", r), "no entry with id"),
        (("note", "add", "x", "--file", "src/app.py", "-C", r), "--file and --line go together"),
        (("note", "add", "x", "--file", "src/app.py", "--line", "500", "-C", r), "does not exist"),
        (("pause", "--until", "tomorrow", "-C", r), "not an ISO date"),
        (("brief", "--budget", "0", "-C", r), "positive"),
        *(
            (("sheet", "gc", f"--ttl={ttl}", "-C", r), "ttl must be a finite number of days")
            for ttl in ("nan", "inf", "-1", "1e400")
        ),
        (("note", "add", "x", "--target", "", "-C", r), "cannot be empty"),
    ]
    for args, message in cases:
        code, out, err = stet(*args)
        assert code == 1 and out == "" and message in err, args
        assert err.startswith("stet: error: ")
    outside = tmp_path / "not-a-repo"
    outside.mkdir()
    code, _, err = stet("note", "list", "-C", str(outside))
    assert (code, err) == (
        1,
        f"stet: error: not inside a git repository: {outside.resolve()} "
        "(run Stet in a repository's work tree, or name one with -C DIR)\n",
    )
    code, _, err = stet("note", "add", "x", "--kind", "bogus", "-C", r)
    assert code == 2 and "invalid choice" in err


def test_an_unknown_entry_id_says_where_the_ids_are(stet: Run, root: Path, tmp_path: Path) -> None:
    """An id the sheet does not hold (mistyped, or an entry of another branch's sheet) is
    refused naming the sheet's target and the command that lists its ids, by every command
    that takes one and by a reviewed document's line."""
    r = str(root)
    hint = (
        "no entry with id 'nosuch' in the style sheet of main (`stet note list` shows its "
        "entries and their ids; each branch has a sheet of its own)"
    )
    stet("note", "add", "kept", "-C", r)
    for args in (
        ("note", "show", "nosuch"),
        ("note", "edit", "nosuch", "x"),
        ("note", "discard", "nosuch"),
        ("graduate", "nosuch", "--to", "discard"),
    ):
        code, out, err = stet(*args, "-C", r)
        assert (code, out, err) == (1, "", f"stet: error: {hint}\n"), args
    review = tmp_path / "review.md"
    _, document, _ = stet("graduate", "--review", "-C", r)
    review.write_text(document + "- [x] nosuch → discard\n")
    code, _, err = stet("graduate", "--apply", str(review), "-C", r)
    assert code == 1 and f": {hint}; nothing was changed" in err, err


def test_an_unknown_argument_is_the_commands_own_usage_error(stet: Run, root: Path) -> None:
    """The error names the command and shows its usage, which lists the options it takes."""
    r = str(root)
    for command, args, extra in [
        ("note list", ("--bogus", "-C", r), "--bogus"),
        ("trajectory show", ("a", "b", "-C", r), "b"),
        ("gate scan", ("x", "--bogus"), "--bogus"),
    ]:
        code, out, err = stet(*command.split(), *args)
        assert (code, out) == (2, ""), command
        assert err.startswith(f"usage: stet {command} "), err
        assert err.endswith(f"stet {command}: error: unrecognized arguments: {extra}\n"), err
    assert stet("note", "list", "--json", "-C", r)[0] == 0


def test_note_add_refuses_the_git_directory_and_binary_files(stet: Run, root: Path) -> None:
    r = str(root)
    (root / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\n")
    sheet = Path(stet("sheet", "path", "-C", r)[1].strip())
    config = (root / ".git" / "config").read_bytes()
    for file, message in [
        (".git/config", ".git/config is inside the git directory; a note can only be anchored"),
        ("logo.png", "logo.png is a binary file (a NUL byte in its first 8000 bytes)"),
    ]:
        code, out, err = stet("note", "add", "x", "--file", file, "--line", "1", "-C", r)
        assert (code, out) == (1, ""), file
        assert err.startswith("stet: error: ") and message in err and err.count("\n") == 1
    assert not sheet.exists() and (root / ".git" / "config").read_bytes() == config
    assert stet("note", "add", "x", "--file", "README.md", "--line", "1", "-C", r)[0] == 0


def test_dash_c_goes_before_the_command_as_for_git_or_after_it(
    stet: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`stet -C DIR COMMAND` runs as if started in DIR (each further -C relative to the one
    before, as git's); `stet COMMAND -C DIR` works as it did."""
    # A repository whose folder has a command's name: the DIR is not taken for the command.
    root = Path(make_repo(tmp_path / "gate", files={"src/app.py": "a\nb\n"}).workdir).resolve()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    code, out, err = stet(
        "-C", str(root), "note", "add", "before", "--file", "src/app.py", "--line", "2"
    )
    assert code == 0, err
    before = out.strip()
    code, out, err = stet("note", "add", "after", "-C", str(root))
    assert code == 0, err
    after = out.strip()
    for args in (["-C", "../gate", "note", "list"], ["note", "list", "-C", "../gate"]):
        code, out, err = stet(*args)
        assert code == 0, (args, err)
        assert [line.split()[0] for line in out.splitlines()] == [before, after], args
    assert Path.cwd() == elsewhere  # the process is back where it was
    # One after the other, each relative to the one before; then the command's own.
    listed = json.loads(stet("-C", "..", "-C", "gate", "note", "list", "--json")[1])
    assert [entry["text"] for entry in listed["entries"]] == ["before", "after"]
    assert listed["entries"][0]["anchor"]["path"] == "src/app.py"
    assert stet("-C", str(tmp_path), "note", "list", "-C", "gate")[0] == 0
    # Commands without a -C of their own take it before their name: paths are DIR's.
    code, out, _ = stet("-C", str(root), "gate", "scan", "src/app.py")
    assert code == 0 and out == ""
    code, out, err = stet("-C", str(tmp_path / "missing"), "note", "list")
    assert (code, out) == (1, "")
    assert (
        err == f"stet: error: cannot change to {tmp_path / 'missing'}: No such file or directory\n"
    )
    code, _, err = stet("-C")
    assert code == 2 and "expected one argument" in err
    assert Path.cwd() == elsewhere
    # As a program, started elsewhere; and in a folder that is gone (an absolute DIR still
    # works, as for git).
    gone = tmp_path / "gone"
    gone.mkdir()
    for cwd, before_start in ((elsewhere, None), (gone, lambda: os.rmdir(gone))):
        done = subprocess.run(
            [sys.executable, "-m", "stet_lsp", "-C", str(root), "note", "show", before, "--json"],
            capture_output=True,
            text=True,
            cwd=cwd,
            timeout=60,
            preexec_fn=before_start,
        )
        assert done.returncode == 0, (cwd, done.stderr)
        assert json.loads(done.stdout)["entry"]["text"] == "before"


GONE_COMMANDS = [
    ("note", "list"),
    ("note", "add", "x", "--json"),
    ("brief",),
    ("check", "--json"),
    ("trajectory", "list", "--json"),
    ("trajectory", "import", "--latest"),
    ("capstone", "--dry-run"),
    ("gate", "scan", "x"),
    ("hooks", "status", "--json"),
    ("hooks", "install", "codex"),
    ("mcp", "install", "cursor", "--json"),
    ("mcp", "uninstall", "cursor"),
    ("-C", ".", "note", "list"),
]


def test_a_command_in_a_removed_folder_says_the_folder_is_gone(root: Path, tmp_path: Path) -> None:
    """Started in a folder removed after the shell entered it, every command says so and
    what to do, with or without --json, where it said only "No such file or directory"; a
    relative -C DIR (before the command or after it) names the folder it is relative to."""
    gone = tmp_path / "gone"
    env = {**os.environ, "HOME": str(tmp_path / "home")}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        gone.mkdir()
        return subprocess.run(
            [sys.executable, "-m", "stet_lsp", *args],
            capture_output=True,
            text=True,
            cwd=gone,
            env=env,
            timeout=60,
            preexec_fn=lambda: os.rmdir(gone),
        )

    for command in GONE_COMMANDS:
        done = run(*command)
        assert (done.returncode, done.stdout) == (1, ""), command
        assert done.stderr.startswith(
            "stet: error: the current folder no longer exists (it was removed or moved after "
            "the shell entered it): change to an existing folder (cd)"
        ), (command, done.stderr)
    for command in (("-C", "sub", "note", "list"), ("note", "list", "-C", "sub")):
        done = run(*command)
        assert done.returncode == 1
        assert done.stderr.startswith(
            "stet: error: cannot change to sub: it is relative to the current folder, which "
            "no longer exists"
        ), done.stderr
    assert not (tmp_path / "home").exists()  # nothing was installed


def test_a_work_tree_whose_repository_moved_is_refused_not_taken_for_the_one_around(
    stet: Run, root: Path, tmp_path: Path
) -> None:
    """A linked work tree kept inside the main one (`.wt/feat`), after its repository moved:
    its `.git` file names a git folder that is not there. git refuses it; Stet took it for a
    folder of the repository around it and wrote to that one's branch. It refuses it too,
    saying which file names what."""
    tree = root / ".wt" / "feat"
    tree.mkdir(parents=True)
    gone = tmp_path / "moved" / ".git" / "worktrees" / "feat"
    (tree / ".git").write_text(f"gitdir: {gone}\n", "utf-8")
    for command in (("note", "add", "x"), ("note", "list", "--json"), ("hooks", "status")):
        code, out, err = stet(*command, "-C", str(tree))
        assert (code, out) == (1, ""), command
        assert err.startswith(
            f"stet: error: {tree / '.git'} names the git folder {gone}, which does not open"
        ), err
    code, out, _ = stet("note", "list", "--json", "-C", str(root))
    assert code == 0 and json.loads(out)["entries"] == []


def test_an_anchor_counts_the_lines_an_editor_shows(stet: Run, root: Path) -> None:
    """src/app.py holds 20 lines, each ending in a line break: the empty string after the
    last break is no line 21."""
    r = str(root)
    code, out, err = stet("note", "add", "x", "--file", "src/app.py", "--line", "21", "-C", r)
    assert (code, out) == (1, "")
    assert err == "stet: error: src/app.py has 20 lines; line 21 does not exist\n"
    code, out, _ = stet(
        "note", "add", "x", "--file", "src/app.py", "--line", "20", "--json", "-C", r
    )
    assert code == 0 and json.loads(out)["entry"]["anchor"]["text"] == "line 20"


def test_note_list_lines_its_columns_up(stet: Run, root: Path) -> None:
    r = str(root)
    short = stet("note", "add", "short status", "--kind", "convention", "-C", r)[1].strip()
    long = stet("note", "add", "long status", "--author", "agent", "-C", r)[1].strip()
    assert stet("note", "discard", long, "-C", r)[0] == 0
    code, out, _ = stet("note", "list", "-C", r)
    assert code == 0 and out.splitlines() == [
        f"{short}  convention  human  open       short status",
        f"{long}  note        agent  discarded  long status",
    ]


def test_sheet_gc_moves_a_renamed_branch_sheet(
    stet: Run, repo: pygit2.Repository, root: Path
) -> None:
    r = str(root)
    repo.branches.local.create("wip", repo[repo.head.target])
    repo.checkout(repo.branches.local["wip"])
    stet("note", "add", "on wip", "-C", r)
    repo.checkout(repo.branches.local["main"])
    repo.branches.local["wip"].rename("wip-renamed")
    code, out, _ = stet("sheet", "gc", "--dry-run", "--json", "-C", r)
    assert code == 0
    listed = json.loads(out)
    assert listed["removed"] == []
    assert [(m["target"], m["reason"]) for m in listed["moved"]] == [
        ("wip", "branch 'wip' was renamed to 'wip-renamed'")
    ]
    code, out, _ = stet("sheet", "gc", "-C", r)
    assert code == 0 and out.startswith("moved ") and "wip-renamed" in out
    assert stet("sheet", "gc", "-C", r)[1].strip() == "nothing to remove"
    repo.checkout(repo.branches.local["wip-renamed"])
    code, out, _ = stet("note", "list", "-C", r)
    assert code == 0 and "on wip" in out


def test_sheet_gc(stet: Run, repo: pygit2.Repository, root: Path) -> None:
    r = str(root)
    repo.branches.local.create("old", repo[repo.head.target])
    repo.checkout(repo.branches.local["old"])
    stet("note", "add", "on old", "-C", r)
    repo.checkout(repo.branches.local["main"])
    repo.branches.local.delete("old")
    code, out, _ = stet("sheet", "gc", "--dry-run", "--json", "-C", r)
    assert code == 0
    removed = json.loads(out)["removed"]
    assert [item["target"] for item in removed] == ["old"]
    assert Path(removed[0]["path"]).exists()
    lock = Path(removed[0]["path"] + ".lock")
    assert lock.exists()
    code, out, _ = stet("sheet", "gc", "-C", r)
    assert code == 0
    assert "removed" in out and not Path(removed[0]["path"]).exists()
    assert not lock.exists()  # the removed sheet's lock goes with it
    assert stet("sheet", "gc", "-C", r)[1].strip() == "nothing to remove"
    # A lock left beside no sheet (by hand, or by an earlier version) goes too; the current
    # target's stays, and one that someone holds is left alone.
    from stet_lsp.core.locking import held

    orphan, held_orphan = lock, lock.with_name("branch--held--0.md.lock")
    orphan.touch()
    current = Path(json.loads(stet("sheet", "path", "--json", "-C", r)[1])["sheet"] + ".lock")
    current.touch()
    with held(held_orphan, root, 0) as acquired:
        assert acquired
        assert stet("sheet", "gc", "-C", r)[1].strip() == "nothing to remove"
        assert not orphan.exists() and current.exists() and held_orphan.exists()


def test_real_subprocess_with_text_from_stdin(root: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "stet_lsp", "note", "add", "-", "--author", "agent"],
        input="first line\nsecond line\n",
        capture_output=True,
        text=True,
        cwd=root / "src",
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    shown = subprocess.run(
        [sys.executable, "-m", "stet_lsp", "note", "show", result.stdout.strip(), "--json"],
        capture_output=True,
        text=True,
        cwd=root,
        timeout=60,
    )
    assert json.loads(shown.stdout)["entry"]["text"] == "first line\nsecond line"


@pytest.mark.parametrize("locale", ["C", "C.UTF-8"])
def test_text_from_stdin_that_is_not_utf8_is_refused(root: Path, locale: str) -> None:
    """Bytes that are not UTF-8 on standard input (a Latin-1 file piped in) were stored as
    replacement characters; they are refused, the sheet unchanged. UTF-8 is read as UTF-8
    whatever the locale says."""
    env = {**os.environ, "LC_ALL": locale, "PYTHONIOENCODING": ""}
    for command in (["note", "add", "-"], ["graduate", "--apply", "-"]):
        refused = subprocess.run(
            [sys.executable, "-m", "stet_lsp", *command],
            input=b"caf\xe9 latin-1\n",
            capture_output=True,
            cwd=root,
            env=env,
            timeout=60,
        )
        assert refused.returncode == 1, refused
        assert refused.stderr.decode() == (
            "stet: error: standard input is not UTF-8 (line 1, column 4): give the text as "
            "UTF-8; nothing was changed\n"
        )
    assert not StyleSheet(resolve_target(root)).entries()
    added = subprocess.run(
        [sys.executable, "-m", "stet_lsp", "note", "add", "-", "--json"],
        input="caf\u00e9 \u2192 UTF-8\n".encode(),
        capture_output=True,
        cwd=root,
        env=env,
        timeout=60,
    )
    assert json.loads(added.stdout)["entry"]["text"] == "caf\u00e9 \u2192 UTF-8"


def test_demo_walks_through_the_flows(stet: Run) -> None:
    code, out, err = stet("demo")
    assert code == 0, err
    for step in [
        "agent entries",
        "anchored to payments.py:7",
        "found again at payments.py:13",
        "## Style sheet",
        "refused: ",
        "resumed; still 4 entries",
        "github-token (gh…); redacted at graduation",
        "- The CI token is [REDACTED:github-token#1]; do not log it.",
        "payments.py:12: margin note (convention): amounts are integer cents",
        "13 events; redacted aws-access-key-id 1",
        "file_change   modify payments.py +1 -1",
        "-> skill http-calls-go-through (.stet/skills/http-calls-go-through/SKILL.md, staged)",
        "-> a note in the working trajectory (through the gate)",
        "  added .stet/skills/http-calls-go-through/SKILL.md",
        "5 artifact(s) checked, 0 finding(s)",  # the skill, .stet/.gitignore, the trajectory
    ]:
        assert step in out, step
    assert "AKIA" not in out.split("stet trajectory import")[1]


def test_demo_imports_a_given_transcript(stet: Run) -> None:
    from samples import sample

    transcript = sample("codex/claude-code-transcripts__sample_codex_session.jsonl")
    code, out, err = stet("demo", "--transcript", str(transcript))
    assert code == 0, err
    assert "codex session 019b64e5-57fa-7463-b644-fba7e456f905: 5 events" in out
    assert "session_start codex 0.77.0" in out


def test_demo_checks_the_transcript_before_the_walk(stet: Run, tmp_path: Path) -> None:
    not_a_transcript = tmp_path / "notes.txt"
    not_a_transcript.write_text("just some notes\n")
    for path, message in [
        (tmp_path / "nope.jsonl", "No such file or directory"),
        (tmp_path, "a folder, and no OpenHands V1 conversation"),
        (not_a_transcript, "not a transcript of a known format"),
    ]:
        code, out, err = stet("demo", "--transcript", str(path))
        assert (code, out) == (1, ""), out
        assert err.startswith("stet: error: ") and message in err


def test_check_lists_margin_notes_and_entries_and_strict_fails_on_notes(
    stet: Run, root: Path
) -> None:
    r = str(root)
    (root / "src" / "notes.go").write_text(
        "package x\n\n// stet(ruled-out): no global state\nvar x = 1\n"
    )
    stet("note", "add", "anchored", "--file", "src/app.py", "--line", "4", "-C", r)
    code, out, _ = stet("check", "-C", r)
    assert code == 0
    assert out.splitlines() == [
        "src/app.py:4: style sheet (note, human, "
        + out.split("(note, human, ")[1].split(")")[0]
        + "): anchored",
        "src/notes.go:3: margin note (ruled-out): no global state",
    ]
    assert stet("check", "--strict", "-C", r)[0] == 1
    (root / "src" / "notes.go").write_text("package x\n\nvar x = 1\n")
    assert stet("check", "--strict", "-C", r)[0] == 0
    shown = json.loads(stet("check", "--json", "-C", r)[1])["shown"]
    assert [item["kind"] for item in shown] == ["entry"]
    # A committed trajectory quoting a note is Stet's own file: no margin note there, as in
    # the server.
    quoted = "# Run\n\n<!-- stet(ruled-out): no global state -->\n"
    commit_files(pygit2.Repository(r), {".stet/trajectories/t1/narration.md": quoted})
    shown = json.loads(stet("check", "--json", "-C", r)[1])["shown"]
    assert [item["kind"] for item in shown] == ["entry"]


def test_a_byte_order_mark_is_no_part_of_a_first_lines_anchor(stet: Run, root: Path) -> None:
    """An editor holds a file without the mark it opens with: a note anchored on its first
    line keeps the line's text alone, so the editor and `stet check` place it alike (one
    stored with the mark, as before, is read without it)."""
    r = str(root)
    (root / "src" / "bom.py").write_text("\ufeffx = 1\ny = 2\n", encoding="utf-8")
    stet("note", "add", "on the first line", "--file", "src/bom.py", "--line", "1", "-C", r)
    target = resolve_target(root)
    [entry] = StyleSheet(target).entries()
    assert entry.anchor is not None and entry.anchor.text == "x = 1"
    from_editor = make_anchor(root, root / "src/bom.py", 1, text="x = 1\ny = 2\n")
    assert from_editor.text == entry.anchor.text

    StyleSheet(target).add("stored with it", anchor=Anchor("src/bom.py", 1, "\ufeffx = 1"))
    (root / "src" / "bom.py").write_text("\ufeffz = 0\nx = 1\ny = 2\n", encoding="utf-8")
    shown = json.loads(stet("check", "--json", "-C", r)[1])["shown"]
    assert [(item["line"], item["message"].split(": ")[-1]) for item in shown] == [
        (2, "on the first line"),
        (2, "stored with it"),
    ]


def test_check_takes_only_a_word_for_the_marker(stet: Run, root: Path) -> None:
    r = str(root)
    (root / "src" / "notes.go").write_text("package x\n\n// todo: no global state\nvar x = 1\n")
    for marker in ("", "  ", "two words", "stet(x)"):
        code, out, err = stet("check", "--marker", marker, "-C", r)
        assert (code, out) == (2, ""), marker
        assert "stet check: error: argument --marker: the marker must be a word such as" in err
        assert f"not {marker!r}" in err
    code, out, _ = stet("check", "--marker", "todo:", "-C", r)
    assert (code, out) == (0, "src/notes.go:3: margin note (markup): no global state\n")


def test_the_progress_line_shows_the_phase_and_time_while_work_runs() -> None:
    import io
    import re
    import time

    from stet_lsp.cli.common import ProgressLine

    stream = io.StringIO()
    progress = ProgressLine("importing", True, stream=stream, after=0.05, every=0.02)
    progress.phase("reading")
    # A long phase: the line is drawn, then redrawn, with no call from it (waited for: a
    # loaded machine may hold the drawing thread past any fixed time, and past 0.5 s).
    deadline = time.monotonic() + 20
    while stream.getvalue().count("\r") < 2:
        assert time.monotonic() < deadline, stream.getvalue()
        time.sleep(0.01)
    progress.phase("composing")
    progress.done()
    drawn = stream.getvalue()
    frames = [frame for frame in drawn.split("\r") if frame.strip()]
    assert len(frames) >= 3
    assert re.fullmatch(r"importing: reading… \d+ s *", frames[0]), frames[0]
    assert frames[-1].rstrip().startswith("importing: composing…")
    assert drawn.endswith("\r" + " " * max(map(len, frames)) + "\r")  # cleared at the end
    before = len(drawn)
    time.sleep(0.05)
    assert len(stream.getvalue()) == before  # nothing drawn once done

    quiet = io.StringIO()
    fast = ProgressLine("importing", True, stream=quiet, after=5)
    fast.phase("reading")
    fast.done()
    disabled = ProgressLine("importing", False, stream=quiet, after=0)
    disabled.phase("reading")
    disabled.done()
    assert quiet.getvalue() == ""  # under the threshold, or not a terminal: nothing


def test_an_entry_typed_by_hand_shows_no_time_until_one_is_stored(stet: Run, root: Path) -> None:
    r = str(root)
    stet("note", "add", "written by stet", "-C", r)
    sheet = Path(stet("sheet", "path", "-C", r)[1].strip())
    sheet.write_text(sheet.read_text(encoding="utf-8") + "- typed by hand\n", encoding="utf-8")
    listing = json.loads(stet("note", "list", "--json", "-C", r)[1])
    created = {entry["text"]: entry["created"] for entry in listing["entries"]}
    assert created["typed by hand"] is None
    assert created["written by stet"] is not None
    typed = next(e["id"] for e in listing["entries"] if e["text"] == "typed by hand")
    code, out, _ = stet("note", "show", typed, "-C", r)
    assert code == 0 and "1970" not in out and "created: —" in out
    assert json.loads(stet("note", "show", typed, "--json", "-C", r)[1])["entry"]["created"] is None
    stet("note", "add", "the next write", "-C", r)  # stores the typed entry's time
    shown = json.loads(stet("note", "show", typed, "--json", "-C", r)[1])["entry"]
    assert shown["created"] is not None and not shown["created"].startswith("1970")


def test_an_entry_whose_metadata_has_no_time_shows_none_and_keeps_none(
    stet: Run, root: Path
) -> None:
    """Metadata without `created` gets no time at the next write (only a line typed without
    metadata does), so `note show` says no more than that none is stored."""
    r = str(root)
    stet("note", "add", "written by stet", "-C", r)
    sheet = Path(stet("sheet", "path", "-C", r)[1].strip())
    kept = "- kept by hand <!-- stet id=handy1 author=human status=open -->\n"
    sheet.write_text(sheet.read_text(encoding="utf-8") + kept + "- typed by hand\n", "utf-8")
    shown = {}
    for entry in json.loads(stet("note", "list", "--json", "-C", r)[1])["entries"]:
        code, out, _ = stet("note", "show", entry["id"], "-C", r)
        assert code == 0
        shown[entry["text"]] = next(line for line in out.split("\n") if line.startswith("created:"))
    assert shown["kept by hand"] == shown["typed by hand"] == "created: — (no time stored)"
    stet("note", "add", "the next write", "-C", r)
    after = json.loads(stet("note", "show", "handy1", "--json", "-C", r)[1])["entry"]
    assert after["created"] is None  # still none: a promise that it is stored would be false
    assert "created=" not in next(
        line for line in sheet.read_text(encoding="utf-8").split("\n") if "handy1" in line
    )


def test_brief_stays_within_a_budget_smaller_than_its_heading(stet: Run, root: Path) -> None:
    r = str(root)
    stet("note", "add", "remember this", "-C", r)
    for budget in (1, 9, 20, 60):
        code, out, _ = stet("brief", "--budget", str(budget), "--json", "-C", r)
        brief = json.loads(out)
        assert code == 0 and brief["tokens"] <= budget and (len(brief["text"]) + 3) // 4 <= budget
        assert (brief["included"], brief["left_out"]) == (0, 1)
    assert stet("brief", "--budget", "20", "-C", r)[1] == (
        "_1 style-sheet entry left out to fit 20 tokens (`stet note list` shows all)._\n"
    )
    assert stet("brief", "--budget", "1", "-C", r)[1] == ""


def test_the_program_leaves_its_output_whole_and_its_exit_code(tmp_path: Path) -> None:
    """`stet` ends without the interpreter's teardown once its output is flushed: a long
    output arrives whole, and the exit code is the command's."""
    token = "ghp_" + "Zq8wLr2mVx7pKd4nTb9sYc3fHj6gNa1eUo5i"
    big = tmp_path / "big.txt"
    big.write_text("".join(f"line {n}: nothing here\n" for n in range(120_000)) + token + "\n")
    program = [sys.executable, "-m", "stet_lsp", "gate"]
    redacted = subprocess.run(
        [*program, "redact", str(big)], capture_output=True, text=True, cwd=tmp_path, timeout=120
    )
    assert redacted.returncode == 0, redacted.stderr
    assert len(redacted.stdout) > 2_500_000 and redacted.stdout.endswith("]\n")
    assert token not in redacted.stdout and redacted.stdout.count("\n") == 120_001
    scanned = subprocess.run(
        [*program, "scan", "--json", str(big)], capture_output=True, text=True, timeout=120
    )
    assert scanned.returncode == 1 and json.loads(scanned.stdout)


def test_the_program_started_with_its_output_closed_exits_cleanly(root: Path) -> None:
    """A hook runs with whatever standard streams its harness gives it, closed ones too."""
    closed = subprocess.run(
        [sys.executable, "-m", "stet_lsp", "hooks", "run", "stop"],
        input="",
        stderr=subprocess.PIPE,
        text=True,
        cwd=root,
        timeout=60,
        preexec_fn=lambda: os.close(1),
    )
    assert closed.returncode == 0 and "Traceback" not in closed.stderr, closed.stderr
