"""`stet gate scan | redact | check` in-process and as real processes, on real repositories."""

import json
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import gate_corpus
import pygit2
import pytest

from stet_lsp.cli import main

REPO_ROOT = Path(__file__).resolve().parents[2]
RNG = random.Random(21)


def ghp() -> str:
    return "ghp_" + gate_corpus.pick(RNG, gate_corpus.ALNUM, 36)


def run(argv: list[str]) -> int:
    return main(["gate", *argv])


def commit(repository: pygit2.Repository, files: dict[str, str], message: str = "c") -> None:
    root = Path(repository.workdir)
    for relpath, content in files.items():
        (root / relpath).parent.mkdir(parents=True, exist_ok=True)
        (root / relpath).write_text(content)
        repository.index.add(relpath)
    repository.index.write()
    tree = repository.index.write_tree()
    signature = pygit2.Signature("Gate Test", "gate@example.invalid", 1_700_000_000, 0)
    parents = [] if repository.head_is_unborn else [repository.head.target]
    repository.create_commit("HEAD", signature, signature, message, tree, parents)


def test_scan_reports_masked_findings(in_tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    secret = ghp()
    (in_tmp / "a.txt").write_text(f"ok\nexport T={secret}\n")
    (in_tmp / "clean.txt").write_text("nothing here\n")
    assert run(["scan", "a.txt", "clean.txt"]) == 1
    out = capsys.readouterr().out
    assert out == "a.txt:2:10: github-token gh…\n"
    assert run(["scan", "clean.txt"]) == 0


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("config.json", '{"password": "admin\\"admin"}\n'),
        ("session.jsonl", '{"type":"x","input":{"password": "admin\\"admin"}}\n'),
    ],
)
def test_a_json_file_finds_a_value_holding_an_escaped_quote_and_redacts_it_whole(
    in_tmp: Path, capsys: pytest.CaptureFixture[str], name: str, text: str
) -> None:
    """A .json or .jsonl file gated directly finds a key's value that holds an escaped quote
    as a text file does, and redacts all of it under one marker (a value detect-secrets finds:
    the gate's own rules take it for words)."""
    (in_tmp / name).write_text(text)
    assert run(["scan", name]) == 1
    assert "ds-secret-keyword" in capsys.readouterr().out
    assert run(["redact", name]) == 0
    expected = text.replace('admin\\"admin', "[REDACTED:ds-secret-keyword#1]")
    assert capsys.readouterr().out == expected


def test_scan_json_output(in_tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    secret = ghp()
    (in_tmp / "d").mkdir()
    (in_tmp / "d" / "e.jsonl").write_text(json.dumps({"t": f"x\n{secret}"}) + "\n")
    assert run(["scan", "--json", "d"]) == 1
    out = capsys.readouterr().out
    data = json.loads(out)
    assert data["version"] == 1 and data["count"] == 1
    [finding] = data["findings"]
    assert finding["path"] == os.path.join("d", "e.jsonl")
    assert finding["rule"] == "github-token" and finding["line"] == 0
    assert secret[4:] not in out


def test_a_binary_file_is_said_not_scanned_not_passed_in_silence(
    in_tmp: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Binary content (a NUL byte early on) is not scanned: scan says so for each such file,
    on standard error and in --json's `skipped`, and its exit code speaks of what was
    scanned only."""
    (in_tmp / "b.bin").write_bytes(b"\0\1 token " + ghp().encode() + b" \0")
    (in_tmp / "clean.txt").write_text("nothing here\n")
    assert run(["scan", "b.bin", "clean.txt"]) == 0
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == "b.bin: binary content, not scanned\n"
    assert run(["scan", "--json", "b.bin"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["count"], data["findings"]) == (0, [])
    assert data["skipped"] == [{"path": "b.bin", "reason": "binary content, not scanned"}]


def test_home_paths_are_one_line_per_file_with_a_count(
    in_tmp: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    secret = ghp()
    lines = [json.dumps({"cwd": f"/home/ivy/p{n}", "t": "x"}) for n in range(50)]
    lines.append(json.dumps({"t": f"T={secret}"}))
    (in_tmp / "e.jsonl").write_text("\n".join(lines) + "\n")
    assert run(["scan", "e.jsonl"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out == [
        "e.jsonl:51:10: github-token gh…",
        "e.jsonl:1:10: home-path x50 (each becomes ~ when redacted)",
    ]
    assert run(["scan", "--json", "e.jsonl"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["count"] == 2
    assert data["findings"][1] == {
        "path": "e.jsonl",
        "rule": "home-path",
        "count": 50,
        "line": 0,
        "column": 9,
    }
    (in_tmp / "only.md").write_text("see /Users/ivy/x\n")
    assert run(["scan", "only.md"]) == 1


def test_check_fails_on_a_committed_home_path(
    in_tmp: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repository = pygit2.init_repository(str(in_tmp))
    commit(repository, {".stet/trajectories/t/events.jsonl": '{"cwd": "/home/jo/app"}\n'})
    assert run(["check"]) == 1
    assert capsys.readouterr().out.startswith(
        ".stet/trajectories/t/events.jsonl:1:10: home-path x1"
    )


def test_scan_in_a_repository_caches_on_disk(
    in_tmp: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pygit2.init_repository(str(in_tmp))
    (in_tmp / "a.md").write_text(f"{ghp()}\n")
    assert run(["scan", "a.md"]) == 1
    first = capsys.readouterr().out
    assert list((in_tmp / ".stet" / "cache" / "gate").rglob("*.json"))
    assert run(["scan", "a.md"]) == 1
    assert capsys.readouterr().out == first


def test_a_scanned_folder_leaves_stets_cache_out(
    in_tmp: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The gate's own results (hex keys) would be findings that grow with every scan."""
    pygit2.init_repository(str(in_tmp))
    (in_tmp / "a.md").write_text(f"{ghp()}\n")
    sheet = in_tmp / ".stet" / "cache" / "sheets" / "main.md"
    sheet.parent.mkdir(parents=True)
    sheet.write_text(f"- {ghp()}\n")
    outputs = []
    for folder in (".", ".stet/", ".stet"):  # tab completion types the slash
        assert run(["scan", "--json", folder]) == (1 if folder == "." else 0)
        outputs.append(json.loads(capsys.readouterr().out))
    assert run(["scan", "--json", "."]) == 1
    assert json.loads(capsys.readouterr().out) == outputs[0]
    assert outputs[1]["findings"] == outputs[2]["findings"] == []
    assert [finding["path"] for finding in outputs[0]["findings"]] == ["a.md"]
    assert run(["scan", "--json", ".stet/cache/sheets"]) == 1  # named: scanned
    found = json.loads(capsys.readouterr().out)["findings"]
    assert [finding["path"] for finding in found] == [".stet/cache/sheets/main.md"]


@pytest.mark.parametrize(
    "reports",
    [[{"rule": "x"}], [{}], [{"path": "elsewhere", "rule": "x", "count": 1, "line": 0}], ["x"]],
)
def test_a_forged_or_torn_cache_entry_is_a_miss(
    in_tmp: Path, capsys: pytest.CaptureFixture[str], reports: list[Any]
) -> None:
    pygit2.init_repository(str(in_tmp))
    (in_tmp / "a.md").write_text(f"{ghp()}\n")
    assert run(["scan", "a.md", "--json"]) == 1
    first = capsys.readouterr().out
    for entry in (in_tmp / ".stet" / "cache" / "gate" / "files").rglob("*.json"):
        entry.write_text(json.dumps({"format": 2, "reports": reports}))
    assert run(["scan", "a.md", "--json"]) == 1  # scanned again
    assert capsys.readouterr().out == first


def test_an_unchanged_file_is_not_hashed_again_and_a_changed_one_is(
    in_tmp: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from stet_lsp.gate import cli

    pygit2.init_repository(str(in_tmp))
    source = in_tmp / "a.md"
    secret = ghp()
    source.write_text(f"{secret}\n")
    old = time.time_ns() - 10_000_000_000
    os.utime(source, ns=(old, old))  # not racily clean: its times say it is older
    hashed: list[str] = []
    file_key = cli.Setup.file_key

    def counting(self: cli.Setup, label: str, stream: Any) -> str:
        if stream.read(1):
            hashed.append(label)
        stream.seek(0)
        return file_key(self, label, stream)

    monkeypatch.setattr(cli.Setup, "file_key", counting)
    assert run(["scan", "a.md"]) == 1
    first = capsys.readouterr().out
    assert hashed == ["a.md"]
    assert run(["scan", "a.md"]) == 1
    assert capsys.readouterr().out == first
    assert hashed == ["a.md"]  # the status matched: not read again

    # Same size and the same modification time, other bytes: the change time tells.
    source.write_text(f"{ghp()}\n")
    os.utime(source, ns=(old, old))
    assert run(["scan", "a.md"]) == 1
    assert hashed == ["a.md", "a.md"]
    capsys.readouterr()

    # Just modified: racily clean, hashed every time until its times are old enough, and
    # once more after a scan (its times cannot tell that it stayed as hashed meanwhile).
    source.write_text("nothing here\n")
    assert run(["scan", "a.md"]) == 0
    assert run(["scan", "a.md"]) == 0
    assert hashed == ["a.md"] * 5


def test_redact_to_stdout_file_and_in_place(
    in_tmp: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    secret = ghp()
    source = in_tmp / "n.md"
    source.write_text(f"token {secret} in /home/gina/x\n")
    expected = "token [REDACTED:github-token#1] in ~/x\n"
    assert run(["redact", "n.md"]) == 0
    captured = capsys.readouterr()
    assert captured.out == expected
    assert "redacted 2 span(s)" in captured.err and secret not in captured.err
    assert run(["redact", "n.md", "-o", "out.md", "--report", "r.json"]) == 0
    assert (in_tmp / "out.md").read_text() == expected
    report = json.loads((in_tmp / "r.json").read_text())
    assert report["rules"]["github-token"]["count"] == 1
    assert run(["redact", "n.md", "--in-place"]) == 0
    assert source.read_text() == expected


def test_user_errors(in_tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["scan", "missing.txt"]) == 1
    assert "stet: error: missing.txt: no such file or directory" in capsys.readouterr().err
    (in_tmp / "bin").write_bytes(b"\0\1\2")
    assert run(["redact", "bin"]) == 1
    assert "binary" in capsys.readouterr().err
    assert run(["check"]) == 1
    assert capsys.readouterr().err == (
        f"stet: error: not inside a git repository: {in_tmp} (run it in a repository's work "
        "tree, or name the files to check)\n"
    )


def test_env_name_and_strict_options(in_tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (in_tmp / "e.env").write_text("ACME_PASS=lowentropy\n")
    assert run(["scan", "e.env"]) == 0
    assert run(["scan", "e.env", "--env-name", "ACME_PASS"]) == 1
    (in_tmp / "m.md").write_text(f"use `{gate_corpus.pick(RNG, gate_corpus.ALNUM, 40)}`\n")
    assert run(["scan", "m.md"]) == 0
    assert run(["scan", "m.md", "--strict"]) == 1


def test_check_reads_head_and_index_not_the_work_tree(
    in_tmp: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repository = pygit2.init_repository(str(in_tmp))
    commit(
        repository,
        {
            ".stet/trajectories/t1/events.jsonl": '{"type": "note", "text": "clean"}\n',
            ".stet/cache/sheets/main.md": f"{ghp()}\n",
            "src/app.py": f"TOKEN = '{ghp()}'\n",
        },
    )
    # .stet/cache/ in the index (a cloned repository tracked its own): refused whatever it
    # holds, the style sheet being private working memory; out of the index, not scanned.
    assert run(["check"]) == 1
    assert "never committed" in capsys.readouterr().err
    # With --json, the refusal is a document too: no finding, the path as a problem.
    assert run(["check", "--json"]) == 1
    out, err = capsys.readouterr()
    assert json.loads(out) == {
        "version": 1,
        "count": 0,
        "findings": [],
        "skipped": [],
        "problems": [
            {
                "path": ".stet/cache/sheets/main.md",
                "message": "in git's index, though .stet/cache/ is never committed",
            }
        ],
    }
    assert "never committed" in err
    repository.index.remove(".stet/cache/sheets/main.md")
    repository.index.write()
    assert run(["check"]) == 0
    assert "1 artifact(s) clean" in capsys.readouterr().err

    # Staged with a secret, then the work tree cleaned: the index is what gets committed.
    staged = in_tmp / ".stet" / "skills" / "s" / "SKILL.md"
    staged.parent.mkdir(parents=True)
    staged.write_text(f"use {ghp()}\n")
    repository.index.add(".stet/skills/s/SKILL.md")
    repository.index.write()
    staged.write_text("clean\n")
    assert run(["check"]) == 1
    out = capsys.readouterr().out
    assert out.startswith(":.stet/skills/s/SKILL.md:1:5: github-token")


def test_check_reads_the_index_git_names(
    in_tmp: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`git commit -a` and `git commit PATH` run their hooks on a temporary index named by
    GIT_INDEX_FILE: that index is what gets committed, not `.git/index`."""
    repository = pygit2.init_repository(str(in_tmp))
    commit(repository, {".stet/skills/s/SKILL.md": "clean\n", ".stet/skills/t/SKILL.md": "ok\n"})
    skill = in_tmp / ".stet" / "skills" / "s" / "SKILL.md"
    skill.write_text(f"use {ghp()}\n")
    # As `git commit -a` makes it: HEAD's entries, then the edited file's.
    named = in_tmp / ".git" / "next-index.lock"
    temporary = pygit2.Index(str(named))
    temporary.read_tree(repository.head.peel(pygit2.Commit).tree)
    blob = repository.create_blob(skill.read_bytes())
    temporary.add(pygit2.IndexEntry(".stet/skills/s/SKILL.md", blob, pygit2.enums.FileMode.BLOB))
    temporary.write()
    monkeypatch.setenv("GIT_INDEX_FILE", str(named))
    assert run(["check"]) == 1
    assert capsys.readouterr().out.startswith(":.stet/skills/s/SKILL.md:1:5: github-token")

    # Relative to the work tree's top, where git runs hooks, from whatever folder the check
    # runs in; a named index that is not there is an error, not an empty index.
    monkeypatch.setenv("GIT_INDEX_FILE", ".git/next-index.lock")
    (in_tmp / "src").mkdir()
    monkeypatch.chdir(in_tmp / "src")
    assert run(["check"]) == 1
    assert capsys.readouterr().out.startswith(":.stet/skills/s/SKILL.md:1:5: github-token")
    monkeypatch.setenv("GIT_INDEX_FILE", ".git/index")
    assert run(["check"]) == 0
    monkeypatch.setenv("GIT_INDEX_FILE", ".git/no-such-index")
    assert run(["check"]) == 1  # the command line's exit for an error
    assert "no index file at" in capsys.readouterr().err


@pytest.mark.skipif(shutil.which("git") is None, reason="no git here to run a hook")
def test_a_pre_commit_hook_refuses_git_commit_a(tmp_path: Path) -> None:
    repository = pygit2.init_repository(str(tmp_path))
    commit(repository, {".stet/skills/s/SKILL.md": "clean\n"})
    hook = tmp_path / ".git" / "hooks" / "pre-commit"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text(f"#!/bin/sh\nexec {sys.executable} -m stet_lsp gate check\n")
    hook.chmod(0o755)
    (tmp_path / ".stet" / "skills" / "s" / "SKILL.md").write_text(f"use {ghp()}\n")
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    identity = ["-c", "user.name=Gate Test", "-c", "user.email=gate@example.invalid"]
    done = subprocess.run(
        ["git", *identity, "commit", "-q", "-a", "-m", "skill"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode != 0, done.stderr
    assert ":.stet/skills/s/SKILL.md:1:5: github-token" in done.stdout + done.stderr
    assert pygit2.Repository(str(tmp_path)).head.peel(pygit2.Commit).message == "c"


def test_check_with_a_head_git_cannot_read_is_a_plain_error(
    in_tmp: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repository = pygit2.init_repository(str(in_tmp))
    commit(repository, {"a.txt": "a\n"})
    (in_tmp / ".git" / "HEAD").write_text("ref: refs/heads/a\n")
    (in_tmp / ".git" / "refs" / "heads" / "a").write_text("ref: refs/heads/b\n")
    (in_tmp / ".git" / "refs" / "heads" / "b").write_text("ref: refs/heads/a\n")
    assert run(["check"]) == 1
    assert "git cannot read HEAD" in capsys.readouterr().err


def test_check_flags_committed_secrets_and_explicit_paths(
    in_tmp: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repository = pygit2.init_repository(str(in_tmp))
    commit(repository, {".stet/feedback/t1.jsonl": json.dumps({"note": ghp()}) + "\n"})
    assert run(["check", "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert [f["path"] for f in data["findings"]] == [".stet/feedback/t1.jsonl"]
    assert data["problems"] == []
    (in_tmp / "other.md").write_text("clean\n")
    assert run(["check", "other.md"]) == 0


def test_check_in_a_subdirectory_of_an_empty_repository(
    in_tmp: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pygit2.init_repository(str(in_tmp))
    (in_tmp / "sub").mkdir()
    monkeypatch.chdir(in_tmp / "sub")
    assert run(["check"]) == 0


def test_pre_commit_hook_definition() -> None:
    text = (REPO_ROOT / ".pre-commit-hooks.yaml").read_text()
    assert "id: stet-gate" in text and "entry: stet gate check" in text


def test_real_process(tmp_path: Path) -> None:
    secret = ghp()
    (tmp_path / "a.md").write_text(f"{secret}\n")
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    scan = subprocess.run(
        [sys.executable, "-m", "stet_lsp", "gate", "scan", "a.md"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
    )
    assert scan.returncode == 1 and scan.stdout == "a.md:1:1: github-token gh…\n"
    redact = subprocess.run(
        [sys.executable, "-m", "stet_lsp", "gate", "redact", "a.md"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
    )
    assert redact.returncode == 0 and redact.stdout == "[REDACTED:github-token#1]\n"


def test_through_the_stet_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.md").write_text(f"{ghp()}\n")
    assert main(["gate", "scan", "a.md"]) == 1
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    completed = subprocess.run(
        [sys.executable, "-m", "stet_lsp", "gate", "scan", "a.md"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
    )
    assert completed.returncode == 1 and "github-token" in completed.stdout


def test_a_cached_re_scan_reads_its_answer_and_loads_nothing_else(tmp_path: Path) -> None:
    """The second scan of an unchanged file is the cache's answer, from a process that loads
    neither the rules, hashlib nor pathlib (with urllib.parse: a tenth of its time). `-S`: no
    site start-up hook can load those first and hide them from -X importtime."""
    pygit2.init_repository(str(tmp_path))
    source = tmp_path / "session.jsonl"
    source.write_text(json.dumps({"cwd": "/home/jo/app", "out": f"token {ghp()}"}) + "\n")
    old = time.time_ns() - 10_000_000_000
    os.utime(source, ns=(old, old))  # not racily clean
    stet = ["-c", "import sys\nfrom stet_lsp.cli import main\nsys.exit(main())"]
    scan = ["gate", "scan", "session.jsonl", "--json"]
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    runs = [
        subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, env=env)
        for command in (
            [sys.executable, *stet, *scan],  # the first scan needs the site's packages
            [sys.executable, "-S", "-X", "importtime", *stet, *scan],
        )
    ]
    assert [done.returncode for done in runs] == [1, 1]
    assert runs[1].stdout == runs[0].stdout
    assert {f["rule"] for f in json.loads(runs[1].stdout)["findings"]} == {
        "github-token",
        "home-path",
    }
    imported = [line.rsplit("|", 1)[-1].strip() for line in runs[1].stderr.splitlines()]
    assert "stet_lsp.gate.entries" in imported
    unwanted = ("pathlib", "hashlib", "tempfile", "pygit2", "detect_secrets", "stet_lsp.gate.rules")
    assert not [name for name in imported if name.startswith(unwanted)], imported
