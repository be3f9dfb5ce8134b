"""`stet gate scan | redact | check` on odd files: what changes while it is read, names that
collide, and what git's index holds besides files."""

import json
import os
from pathlib import Path
from typing import Any

import pygit2
import pytest
from test_gate_cli import ghp, run

from stet_lsp.gate import stream


def test_a_file_replaced_while_it_is_redacted_in_place_is_kept(
    in_tmp: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The file is read by its descriptor: another writer that replaces it (a rename, as
    every Stet writer does) between the two readings is not seen by them, and its content
    must not be overwritten by the redaction of the old one."""
    source = in_tmp / "n.md"
    source.write_text(f"token {ghp()}\n")
    fresh = "written meanwhile by another writer\n"
    again = stream._again

    def replaced_between_the_readings(*args: Any, **kwargs: Any) -> Any:
        (in_tmp / "new.md").write_text(fresh)
        os.replace(in_tmp / "new.md", source)
        return again(*args, **kwargs)

    monkeypatch.setattr(stream, "_again", replaced_between_the_readings)
    assert run(["redact", "n.md", "--in-place"]) == 1
    assert "n.md changed while it was read" in capsys.readouterr().err
    assert source.read_text() == fresh
    assert sorted(path.name for path in in_tmp.iterdir()) == ["n.md"]


def test_a_file_appended_to_after_it_was_read_is_not_redacted_in_place(
    in_tmp: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    source = in_tmp / "n.md"
    original = f"token {ghp()}\n"
    source.write_text(original)
    redact_blocks = stream.redact_blocks

    def appended_once_read(*args: Any, **kwargs: Any) -> Any:
        report = redact_blocks(*args, **kwargs)
        with source.open("a") as appending:
            appending.write("a line appended meanwhile\n")
        return report

    monkeypatch.setattr(stream, "redact_blocks", appended_once_read)
    assert run(["redact", "n.md", "--in-place"]) == 1
    assert "n.md changed while it was read" in capsys.readouterr().err
    assert source.read_text() == original + "a line appended meanwhile\n"


def commit(repository: pygit2.Repository, files: dict[str, str]) -> None:
    root = Path(repository.workdir)
    for relpath, content in files.items():
        (root / relpath).parent.mkdir(parents=True, exist_ok=True)
        (root / relpath).write_text(content)
        repository.index.add(relpath)
    repository.index.write()
    tree = repository.index.write_tree()
    signature = pygit2.Signature("Gate Test", "gate@example.invalid", 1_700_000_000, 0)
    parents = [] if repository.head_is_unborn else [repository.head.target]
    repository.create_commit("HEAD", signature, signature, "c", tree, parents)


def test_a_submodule_under_stet_holds_no_file_to_check(
    in_tmp: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A submodule (a gitlink: a commit of another repository) under `.stet/`, staged or
    committed, has no content here, as HEAD's tree walk already knew."""
    repository = pygit2.init_repository(str(in_tmp))
    commit(repository, {".stet/feedback/t1.jsonl": '{"note": "clean"}\n'})
    gitlink = pygit2.Oid(hex="1" * 40)
    repository.index.add(pygit2.IndexEntry(".stet/skills/vendored", gitlink, 0o160000))
    repository.index.write()
    assert run(["check"]) == 0
    assert "1 artifact(s) clean" in capsys.readouterr().err
    commit(repository, {})
    assert run(["check", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["findings"] == []


def test_a_staged_file_whose_content_git_lacks_is_a_plain_error(
    in_tmp: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An index entry whose blob is not in the object store (a damaged repository, a partial
    clone) cannot be checked: an error naming it, never a traceback nor a pass."""
    repository = pygit2.init_repository(str(in_tmp))
    commit(repository, {".stet/feedback/t1.jsonl": '{"note": "clean"}\n'})
    skill = in_tmp / ".stet" / "skills" / "s" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text(f"use {ghp()}\n")
    repository.index.add(".stet/skills/s/SKILL.md")
    repository.index.write()
    blob = str(repository.index[".stet/skills/s/SKILL.md"].id)
    (in_tmp / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    assert run(["check"]) == 1
    err = capsys.readouterr().err
    assert "stet: error: git cannot read :.stet/skills/s/SKILL.md" in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    "options",
    [
        ["--report", "n.md"],
        ["--report", "./n.md"],
        ["--in-place", "--report", "n.md"],
        ["-o", "out.md", "--report", "out.md"],
        ["-o", "sub/../out.md", "--report", "out.md"],
        ["-o", "copy.md", "--report", "n.md"],
    ],
)
def test_a_report_that_would_replace_the_file_or_the_redacted_copy_is_refused(
    in_tmp: Path, capsys: pytest.CaptureFixture[str], options: list[str]
) -> None:
    """The report is written after the redacted text: named as the file redacted or the copy,
    it would replace it. Refused before anything is written."""
    original = f"token {ghp()}\n"
    (in_tmp / "n.md").write_text(original)
    (in_tmp / "sub").mkdir()
    (in_tmp / "out.md").write_text("an earlier copy\n")
    assert run(["redact", "n.md", *options]) == 1
    out, err = capsys.readouterr()
    assert f"stet: error: --report {options[-1]} is the file" in err
    assert out == ""
    assert (in_tmp / "n.md").read_text() == original
    assert (in_tmp / "out.md").read_text() == "an earlier copy\n"
    assert not (in_tmp / "copy.md").exists()


@pytest.mark.parametrize(
    ("options", "said"),
    [
        (["--report", "sub"], "--report sub is a folder"),
        (["-o", "copy.md", "--report", "sub"], "--report sub is a folder"),
        (["--report", "nowhere/r.json"], "--report nowhere/r.json is in no folder (nowhere)"),
    ],
)
def test_a_report_that_cannot_be_written_is_refused_before_the_redacted_text(
    in_tmp: Path, capsys: pytest.CaptureFixture[str], options: list[str], said: str
) -> None:
    """A report naming a folder, or a file in a folder that is not there, failed after the
    redacted text had gone to standard output (or the copy was written). Refused first."""
    (in_tmp / "n.md").write_text(f"token {ghp()}\n")
    (in_tmp / "sub").mkdir()
    assert run(["redact", "n.md", *options]) == 1
    out, err = capsys.readouterr()
    assert err == f"stet: error: {said}: name a file in an existing folder\n"
    assert out == ""
    assert not (in_tmp / "copy.md").exists()


def test_a_file_rewritten_while_it_is_scanned_leaves_no_cached_answer_for_its_old_bytes(
    in_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cache keeps a file's findings under the digest of its bytes. A file another writer
    rewrites between the hashing and the scan was scanned as its new bytes: kept under the
    old bytes' key, that answer passed those bytes (the secret back, as by a checkout) unread."""
    from stet_lsp.gate import cli as gate_cli

    pygit2.init_repository(str(in_tmp))
    source = in_tmp / "a.md"
    secret = f"token: {ghp()}\n"
    source.write_text(secret)
    file_key = gate_cli.Setup.file_key

    def rewritten_once_hashed(self: gate_cli.Setup, label: str, stream: Any) -> str:
        key = file_key(self, label, stream)
        with source.open("r+") as rewriting:  # the same file, as an editor saves in place
            rewriting.truncate(0)
            rewriting.write("nothing to see\n".rjust(len(secret)))
        return key

    monkeypatch.setattr(gate_cli.Setup, "file_key", rewritten_once_hashed)
    assert run(["scan", "a.md"]) == 0  # what it read: the new bytes
    monkeypatch.setattr(gate_cli.Setup, "file_key", file_key)
    source.write_text(secret)
    assert run(["scan", "a.md"]) == 1
    assert run(["check", "a.md"]) == 1


def test_a_copy_into_a_missing_folder_is_an_error_naming_that_folder(
    in_tmp: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Not the temporary file the copy is first written to, a name the user never gave."""
    (in_tmp / "n.md").write_text(f"token {ghp()}\n")
    assert run(["redact", "n.md", "-o", "nowhere/out.md"]) == 1
    err = capsys.readouterr().err
    assert "stet: error: cannot write in nowhere: No such file or directory" in err
    assert ".tmp" not in err and not (in_tmp / "nowhere").exists()


@pytest.mark.parametrize("option", ["-o", "--report"])
def test_an_empty_output_or_report_path_is_an_error(
    in_tmp: Path, capsys: pytest.CaptureFixture[str], option: str
) -> None:
    """`-o "$OUT"` with OUT unset: not the redacted text on standard output instead, nor no
    report at all, each with exit status 0."""
    (in_tmp / "n.md").write_text(f"token {ghp()}\n")
    assert run(["redact", "n.md", option, ""]) == 1
    out, err = capsys.readouterr()
    assert out == "" and f"stet: error: {option}: an empty path" in err


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be"])
def test_utf16_text_with_a_byte_order_mark_is_scanned_and_checked(
    in_tmp: Path, capsys: pytest.CaptureFixture[str], encoding: str
) -> None:
    """PowerShell's `>` and Windows tools write UTF-16 with a byte-order mark: its NUL bytes
    made it binary, passed unscanned. It is scanned decoded (lines and columns of its text);
    redacting it is refused with what to do, since its bytes would not be written back."""
    token = ghp()
    mark = {"utf-16-le": "\ufeff", "utf-16-be": "\ufeff"}.get(encoding, "")
    (in_tmp / "log.txt").write_bytes(f"{mark}ok\r\ntoken: {token}\r\n".encode(encoding))
    assert run(["scan", "log.txt", "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert [(f["rule"], f["line"], f["column"]) for f in report["findings"]] == [
        ("github-token", 1, 7)
    ]
    assert report["skipped"] == []

    repository = pygit2.init_repository(str(in_tmp))
    (in_tmp / ".stet/skills/ps").mkdir(parents=True)
    os.replace(in_tmp / "log.txt", in_tmp / ".stet/skills/ps/out.txt")
    repository.index.add(".stet/skills/ps/out.txt")
    repository.index.write()
    assert run(["check", "--json"]) == 1
    assert [f["rule"] for f in json.loads(capsys.readouterr().out)["findings"]] == ["github-token"]

    before = (in_tmp / ".stet/skills/ps/out.txt").read_bytes()
    assert run(["redact", ".stet/skills/ps/out.txt", "--in-place"]) == 1
    assert "UTF-16 text is not redacted" in capsys.readouterr().err
    assert (in_tmp / ".stet/skills/ps/out.txt").read_bytes() == before


def test_utf16_without_a_byte_order_mark_stays_binary(
    in_tmp: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (in_tmp / "raw.bin").write_bytes(f"token: {ghp()}\n".encode("utf-16-le"))
    assert run(["scan", "raw.bin", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["skipped"] == [
        {"path": "raw.bin", "reason": "binary content, not scanned"}
    ]


def test_utf32_with_a_byte_order_mark_stays_binary(
    in_tmp: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """UTF-32's little-endian mark starts with UTF-16's (FF FE, then 00 00): decoded as
    UTF-16, its text had a NUL after every character, so it was reported scanned and clean."""
    (in_tmp / "log.txt").write_bytes(f"token: {ghp()}\n".encode("utf-32"))
    assert run(["scan", "log.txt", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["skipped"] == [
        {"path": "log.txt", "reason": "binary content, not scanned"}
    ]
    assert run(["redact", "log.txt", "--in-place"]) == 1
    assert "binary content is not redacted" in capsys.readouterr().err


def test_a_named_pipe_found_in_a_folder_is_passed_over_and_named(
    in_tmp: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A named pipe in a folder being walked stopped the whole scan (nothing else reported);
    it holds nothing git would commit, and is now named as not scanned. Named on the command
    line, it is still an error."""
    (in_tmp / "d").mkdir()
    (in_tmp / "d/a.md").write_text(f"token {ghp()}\n")
    os.mkfifo(in_tmp / "d/pipe")
    assert run(["scan", "d", "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert [f["path"] for f in report["findings"]] == ["d/a.md"]
    assert report["skipped"] == [
        {
            "path": "d/pipe",
            "reason": "not a regular file (a named pipe, a socket or a device), not scanned",
        }
    ]
    assert run(["scan", "d/pipe"]) == 1
    assert "d/pipe is a named pipe (FIFO), not a regular file" in capsys.readouterr().err


def test_columns_on_the_first_line_of_a_file_with_a_utf8_mark_count_from_its_text(
    in_tmp: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Editors show a UTF-8 file's text after its byte-order mark: the columns of line 1 were
    one further than the editor's."""
    token = ghp()
    (in_tmp / "marked.md").write_bytes(f"\ufefftoken: {token}\nagain {token}\n".encode())
    (in_tmp / "plain.md").write_bytes(f"token: {token}\nagain {token}\n".encode())
    for name in ("marked.md", "plain.md"):
        assert run(["scan", name, "--json"]) == 1
        found = json.loads(capsys.readouterr().out)["findings"]
        assert [(f["line"], f["column"], f["end_column"]) for f in found] == [
            (0, 7, 47),
            (1, 6, 46),
        ]


def test_odd_file_names_keep_one_finding_a_line(
    in_tmp: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A name holding a line break split its finding over two lines of the text output, and
    a name that is not UTF-8 came out with a replacement character (text) or a lone
    surrogate (JSON, which other languages' parsers refuse). Text output quotes such names
    as git does; JSON gives the name as text and its bytes in base64."""
    token = ghp()
    (in_tmp / "d").mkdir()
    for name in (b"d/a\nb.md", b"d/c\xff.md", b'd/q"uote.md', b"d/plain.md"):
        Path(os.fsdecode(bytes(in_tmp) + b"/" + name)).write_text(f"token {token}\n")
    assert run(["scan", "d"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert [line.rsplit(":", 3)[0] for line in lines] == [
        '"d/a\\nb.md"',
        '"d/c\\377.md"',
        "d/plain.md",
        '"d/q\\"uote.md"',
    ]
    assert run(["scan", "d", "--json"]) == 1
    out = capsys.readouterr().out
    out.encode("utf-8")  # no lone surrogate
    found = json.loads(out)["findings"]
    assert [{k: f[k] for k in f if k.startswith("path")} for f in found] == [
        {"path": "d/a\nb.md"},
        {"path": "d/c\ufffd.md", "path_bytes": "ZC9j/y5tZA=="},
        {"path": "d/plain.md"},
        {"path": 'd/q"uote.md'},
    ]
