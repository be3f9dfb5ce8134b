"""Harness hooks: `stet hooks install|uninstall|status|run`.

The hook commands run as the harnesses run them: a separate process, Claude Code's JSON on
standard input (Codex's as the last argument), started in a folder other than the
repository. Imports run in a detached worker; the tests wait for its line in the log."""

from __future__ import annotations

import io
import json
import os
import shlex
import shutil
import subprocess
import sys
import threading
import time
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pygit2
import pytest
from repos import INJECTED, clone_committing_sheet, commit_files, hostile_clone, make_repo
from samples import sample

from stet_lsp.core.exclusions import LOCK_NAME
from stet_lsp.core.launch import stet_command
from stet_lsp.core.targets import resolve_target
from stet_lsp.hooks import files
from stet_lsp.hooks.claude_code import EVENTS as HOOK_EVENTS
from stet_lsp.hooks.claude_code import LOCAL_SETTINGS, MANAGED_VARIABLE, commands
from stet_lsp.hooks.codex import notify_line, notify_program
from stet_lsp.hooks.repository import branch_target, find_target
from stet_lsp.hooks.run import run_hook, work
from stet_lsp.trajectory.capstone import capstone
from stet_lsp.trajectory.importing import import_transcript
from stet_lsp.trajectory.store import EVENTS, working_folder

Stet = Callable[..., tuple[int, str, str]]
SID = "5c0ffee0-1111-4222-8333-444455556666"
THREAD = "0199a000-1111-7222-8333-444455556666"
SAMPLE = "claude-code/entireio-cli__37_995ebed6e4_0_full.jsonl"
HARNESS_VARIABLES = ("CODEX_HOME", "CLAUDE_PROJECT_DIR", "CLAUDE_CONFIG_DIR")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home folder of the test's own, for this process and the hooks it starts (and a
    folder of Claude Code's managed settings of its own, empty)."""
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    monkeypatch.setenv(MANAGED_VARIABLE, str(tmp_path / "managed"))
    for name in HARNESS_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    return folder


@pytest.fixture
def elsewhere(tmp_path: Path) -> Path:
    """A folder outside every repository: where the harness starts the hook process."""
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    return folder


def hook(
    event: str,
    stdin: str | dict[str, Any],
    cwd: Path,
    *args: str,
    env: dict[str, str] | None = None,
    importtime: bool = False,
) -> subprocess.CompletedProcess[str]:
    """`stet hooks run EVENT` as a harness runs it: a process of its own, the JSON on
    standard input."""
    text = stdin if isinstance(stdin, str) else json.dumps(stdin)
    inherited = {k: v for k, v in os.environ.items() if k not in HARNESS_VARIABLES}
    command = [sys.executable, *(["-X", "importtime"] if importtime else [])]
    return subprocess.run(
        [*command, "-m", "stet_lsp", "hooks", "run", event, *args],
        input=text,
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**inherited, **(env or {})},
        timeout=60,
    )


def log_lines(root: Path) -> list[str]:
    path = root / files.LOG
    return path.read_text("utf-8").splitlines() if path.exists() else []


def wait_for_log(root: Path, *needles: str, count: int = 1) -> list[str]:
    """The log's lines holding every needle, once there are `count` of them (a worker runs
    detached: this is how a test knows it finished)."""
    deadline = time.monotonic() + 60
    while True:
        found = [line for line in log_lines(root) if all(n in line for n in needles)]
        if len(found) >= count:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"no log line with {needles}: {log_lines(root)}")
        time.sleep(0.05)


def events_text(root: Path) -> str:
    folder = working_folder(resolve_target(root))
    return (folder.path / EVENTS).read_text("utf-8")


def claude_transcript(path: Path, cwd: Path, prompt: str = "Rename the helper") -> Path:
    """A small Claude Code session in the shape Claude Code 2.1 writes."""
    common = {
        "isSidechain": False,
        "userType": "external",
        "cwd": str(cwd),
        "sessionId": SID,
        "version": "2.1.12",
        "gitBranch": "main",
    }
    records = [
        {"parentUuid": None, **common, "type": "user", "uuid": "u1"}
        | {"message": {"role": "user", "content": prompt}, "timestamp": "2026-01-22T03:41:30Z"},
        {"parentUuid": "u1", **common, "type": "assistant", "uuid": "a1"}
        | {
            "timestamp": "2026-01-22T03:41:36Z",
            "requestId": "req_1",
            "message": {
                "model": "claude-opus-4-5-20251101",
                "id": "msg_A",
                "type": "message",
                "role": "assistant",
                "content": [{"type": "text", "text": "Renamed it."}],
                "stop_reason": "end_turn",
                "usage": {"input_tokens": 10, "output_tokens": 3},
            },
        },
    ]
    path.write_text("".join(json.dumps(record) + "\n" for record in records), "utf-8")
    return path


def codex_rollout(home: Path, cwd: Path, thread: str = THREAD) -> Path:
    """A Codex rollout of one finished turn, where Codex keeps it under `home`."""
    time_ = "2026-01-03T08:00:00.000Z"
    meta = {"id": thread, "timestamp": time_, "cwd": str(cwd), "originator": "codex_cli_rs"}
    meta |= {"cli_version": "0.77.0", "instructions": None, "source": "cli"}
    user = {"type": "message", "role": "user"}
    records: list[dict[str, Any]] = [
        {"timestamp": time_, "type": "session_meta", "payload": meta},
        {
            "timestamp": time_,
            "type": "response_item",
            "payload": user | {"content": [{"type": "input_text", "text": "List the files"}]},
        },
        {
            "timestamp": time_,
            "type": "event_msg",
            "payload": {"type": "user_message", "message": "List the files", "images": []},
        },
        {
            "timestamp": time_,
            "type": "turn_context",
            "payload": {"cwd": str(cwd), "model": "gpt-5-codex", "approval_policy": "never"},
        },
        {
            "timestamp": time_,
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "README.md and src/."}],
            },
        },
    ]
    folder = home / ".codex" / "sessions" / "2026" / "01" / "03"
    folder.mkdir(parents=True)
    path = folder / f"rollout-2026-01-03T08-00-00-{thread}.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in records), "utf-8")
    return path


def agent_note(stet: Stet, root: Path, text: str) -> None:
    code, _, err = stet(
        "note", "add", text, "--kind", "convention", "--author", "agent", "-C", str(root)
    )
    assert code == 0, err


# -- session-start -------------------------------------------------------------------------------


def test_session_start_prints_the_brief_of_the_repository_at_cwd(
    tmp_path: Path, root: Path, stet: Stet, home: Path
) -> None:
    agent_note(stet, root, "Errors are wrapped with %w at package boundaries")
    other = Path(make_repo(tmp_path / "other", files={"a.txt": "a\n"}).workdir)
    agent_note(stet, other, "A note of another repository")
    # Started in another repository, with Claude Code's cwd in a folder of this one.
    payload = {"session_id": SID, "transcript_path": "", "cwd": str(root / "src")}
    done = hook("session-start", payload | {"hook_event_name": "SessionStart"}, other)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    output = json.loads(done.stdout)
    context = output["hookSpecificOutput"]["additionalContext"]
    assert output["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    _, brief, _ = stet("brief", "-C", str(root))
    assert context == brief  # exactly what `stet brief` prints
    assert "Errors are wrapped with %w" in context
    assert "another repository" not in context
    assert "those win" in context  # the precedence wording


def test_session_start_output_does_not_depend_on_the_output_encoding(
    root: Path, stet: Stet, elsewhere: Path
) -> None:
    """The harness reads the hook's JSON as UTF-8, while Python writes standard output in the
    locale's encoding (on Windows a pipe gets the ANSI code page, cp1252): the brief of a
    sheet holding characters outside it still arrives whole, as JSON in ASCII."""
    agent_note(stet, root, "Retries go through retry() \u2192 see caf\u00e9.py \U0001f389")
    done = hook("session-start", {"cwd": str(root)}, elsewhere, env={"PYTHONIOENCODING": "cp1252"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.isascii()
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert context == stet("brief", "-C", str(root))[1]
    assert "caf\u00e9.py \U0001f389" in context
    assert not any("error" in line for line in log_lines(root))


def test_session_start_reads_its_input_as_utf_8_from_a_text_stream_of_another_encoding(
    tmp_path: Path, stet: Stet, home: Path
) -> None:
    """Where standard input is read as a text stream (Windows: `sys.stdin` decodes the ANSI
    code page, cp1252), the harness's JSON is still UTF-8: a cwd in a folder named with a
    character outside ASCII is found."""
    root = Path(make_repo(tmp_path / "Zo\u00eb" / "repo", files={"a.txt": "a\n"}).workdir)
    agent_note(stet, root, "Use the retry helper")
    payload = json.dumps({"cwd": str(root)}, ensure_ascii=False).encode("utf-8")
    stdin = io.TextIOWrapper(io.BytesIO(payload), encoding="cp1252")  # no file descriptor
    stdout = io.StringIO()
    assert run_hook("session-start", [], stdin=stdin, stdout=stdout) == 0
    context = json.loads(stdout.getvalue())["hookSpecificOutput"]["additionalContext"]
    assert "Use the retry helper" in context


def test_session_start_loads_neither_libgit2_nor_the_gate(
    root: Path, stet: Stet, elsewhere: Path
) -> None:
    agent_note(stet, root, "Use the retry helper")
    done = hook("session-start", {"cwd": str(root)}, elsewhere, importtime=True)
    assert done.returncode == 0
    assert "Use the retry helper" in done.stdout
    imported = [line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()]
    assert "stet_lsp.hooks.repository" in imported
    assert not [name for name in imported if name.startswith(("pygit2", "stet_lsp.gate"))]
    assert not [name for name in imported if name.startswith(("pydantic", "stet_lsp.trajectory"))]


def test_session_start_exits_0_when_the_harness_stopped_reading(
    root: Path, stet: Stet, home: Path, elsewhere: Path
) -> None:
    agent_note(stet, root, "Use the retry helper")
    read, write = os.pipe()
    os.close(read)  # the harness closed its end of the hook's standard output
    # Buffered output, as a harness starts the hook (unbuffered, the write fails at once).
    leftout = (*HARNESS_VARIABLES, "PYTHONUNBUFFERED")
    inherited = {k: v for k, v in os.environ.items() if k not in leftout}
    try:
        done = subprocess.run(
            [sys.executable, "-m", "stet_lsp", "hooks", "run", "session-start"],
            input=json.dumps({"cwd": str(root)}).encode(),
            stdout=write,
            stderr=subprocess.PIPE,
            cwd=elsewhere,
            env=inherited,
            timeout=60,
        )
    finally:
        os.close(write)
    assert done.returncode == 0, done.stderr  # never 141: a hook always exits 0
    assert "session-start: error: BrokenPipeError" in log_lines(root)[-1]


def test_session_start_with_standard_input_closed_briefs_the_folder_it_runs_in(
    root: Path, stet: Stet
) -> None:
    """Started with no standard input at all (descriptor 0 closed, so Python has no
    `sys.stdin`): no input, so no cwd given, and the brief is the repository the hook runs
    in; not an error."""
    agent_note(stet, root, "Use the retry helper")
    inherited = {k: v for k, v in os.environ.items() if k not in HARNESS_VARIABLES}
    done = subprocess.run(
        [sys.executable, "-m", "stet_lsp", "hooks", "run", "session-start"],
        capture_output=True,
        text=True,
        cwd=root,
        env=inherited,
        timeout=60,
        preexec_fn=lambda: os.close(0),
    )
    assert done.returncode == 0, done.stderr
    assert "Use the retry helper" in done.stdout
    assert not any("error" in line for line in log_lines(root))


def test_a_paused_sheet_still_gives_its_brief(root: Path, stet: Stet, elsewhere: Path) -> None:
    agent_note(stet, root, "Keep the public API stable")
    assert stet("pause", "-C", str(root))[0] == 0
    done = hook("session-start", {"cwd": str(root)}, elsewhere)
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert context == stet("brief", "-C", str(root))[1]
    assert "Keep the public API stable" in context


def test_session_start_does_not_brief_a_sheet_git_tracks(tmp_path: Path, elsewhere: Path) -> None:
    """A clone committing the sheet of the branch it checks out gets no brief from it: the
    person is told why (systemMessage), the agent's context gets nothing. libgit2 is loaded
    only to confirm what the index file mentions: not once the sheet is untracked."""
    root = clone_committing_sheet(tmp_path)
    done = hook("session-start", {"cwd": str(root)}, elsewhere, importtime=True)
    assert done.returncode == 0
    output = json.loads(done.stdout)
    assert list(output) == ["systemMessage"] and INJECTED not in done.stdout
    assert "is not briefed: git's index holds .stet/cache/sheets/" in output["systemMessage"]
    assert "git rm --cached" in output["systemMessage"]
    imported = [line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()]
    assert not [name for name in imported if name.startswith("stet_lsp.gate")]
    assert [line for line in log_lines(root) if "is not briefed" in line]
    # Untracked, the sheet is briefed again (its entries stayed on disk).
    subprocess.run(["git", "rm", "-q", "--cached", "-r", ".stet"], cwd=root, check=True)
    done = hook("session-start", {"cwd": str(root)}, elsewhere, importtime=True)
    assert INJECTED in json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    imported = [line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()]
    assert not [name for name in imported if name.startswith(("pygit2", "stet_lsp.gate"))]


def test_session_start_tells_the_person_when_the_sheet_cannot_be_read(
    root: Path, stet: Stet, elsewhere: Path
) -> None:
    agent_note(stet, root, "Set up")
    (sheet,) = (root / ".stet" / "cache" / "sheets").glob("*.md")
    sheet.write_bytes(sheet.read_bytes() + b"\xff\xfe")
    done = hook("session-start", {"cwd": str(root)}, elsewhere)
    assert done.returncode == 0
    output = json.loads(done.stdout)
    assert list(output) == ["systemMessage"]
    assert output["systemMessage"].startswith("stet: no brief: ")
    assert "is not UTF-8" in output["systemMessage"]
    assert "is not UTF-8" in log_lines(root)[-1]


def test_session_start_says_nothing_where_stet_is_not_set_up(root: Path, elsewhere: Path) -> None:
    done = hook("session-start", {"cwd": str(root)}, elsewhere)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert not (root / ".stet").exists()


def test_claude_project_dir_is_used_when_cwd_is_in_no_repository(
    root: Path, stet: Stet, elsewhere: Path
) -> None:
    agent_note(stet, root, "Prefer small commits")
    env = {"CLAUDE_PROJECT_DIR": str(root)}
    done = hook("session-start", {"cwd": str(elsewhere)}, elsewhere, env=env)
    assert (
        "Prefer small commits" in json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    )


def test_a_hook_started_in_a_removed_folder_with_no_cwd_says_so_in_one_line(
    root: Path, stet: Stet, tmp_path: Path
) -> None:
    """The folder the harness started the hook in was removed and the input names no `cwd`:
    Claude Code's project folder is still used when there is one; without it the hook says
    what is wrong in one line (it was `FileNotFoundError`, the project folder never tried),
    and exits 0."""
    agent_note(stet, root, "Prefer small commits")
    gone = tmp_path / "gone"

    def from_removed_folder(event: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
        gone.mkdir()
        inherited = {k: v for k, v in os.environ.items() if k not in HARNESS_VARIABLES}
        started = f'cd "$1" && rmdir "$1" && exec "$2" -m stet_lsp hooks run {event}'
        return subprocess.run(
            ["/bin/sh", "-c", started, "sh", str(gone), sys.executable],
            input=json.dumps({"session_id": SID}),
            capture_output=True,
            text=True,
            env={**inherited, **env},
            timeout=60,
        )

    done = from_removed_folder("session-start", {"CLAUDE_PROJECT_DIR": str(root)})
    assert done.returncode == 0 and done.stderr == ""
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "Prefer small commits" in context
    for event in ("session-start", "session-end"):
        done = from_removed_folder(event, {})
        assert (done.returncode, done.stdout) == (0, "")
        [line] = done.stderr.splitlines()
        assert line.startswith("stet hooks: 20") and line.endswith(
            f"{event}: error: the hook's input names no cwd, and the folder the hook was "
            "started in no longer exists (it was removed): no repository to work in"
        )


def test_a_cwd_in_a_nested_repository_without_stet_gives_way_to_the_project(
    tmp_path: Path, root: Path, stet: Stet, elsewhere: Path
) -> None:
    """The agent went into a repository nested in the project (a vendored clone, a
    submodule) where Stet is not set up, and Claude Code reports that `cwd`: the brief was
    not given and the session not imported, silently. The project folder Claude Code names
    (`$CLAUDE_PROJECT_DIR`), where Stet is set up, is used instead."""
    agent_note(stet, root, "Prefer small commits")
    nested = Path(make_repo(root / "vendor" / "lib", files={"lib.py": "x = 1\n"}).workdir)
    env = {"CLAUDE_PROJECT_DIR": str(root)}
    done = hook("session-start", {"cwd": str(nested)}, elsewhere, env=env)
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "Prefer small commits" in context
    transcript = claude_transcript(tmp_path / f"{SID}.jsonl", root)
    payload = {"session_id": SID, "transcript_path": str(transcript), "cwd": str(nested)}
    assert hook("session-end", payload, elsewhere, env=env).returncode == 0
    wait_for_log(root, "session-end", SID, "imported")
    assert "Rename the helper" in events_text(root)
    assert not (nested / ".stet").exists()


# -- session-end and stop: imports ----------------------------------------------------------------


def test_session_end_imports_the_public_sample_once(
    tmp_path: Path, root: Path, stet: Stet, elsewhere: Path
) -> None:
    transcript = tmp_path / "transcripts" / "session.jsonl"
    transcript.parent.mkdir()
    shutil.copyfile(sample(SAMPLE), transcript)
    agent_note(stet, root, "Set up")
    payload = {
        "session_id": "48f428f9-72d8-40b2-9594-953019809473",
        "transcript_path": str(transcript),
        "cwd": str(root),
        "hook_event_name": "SessionEnd",
        "reason": "prompt_input_exit",
    }
    started = time.monotonic()
    done = hook("session-end", payload, elsewhere)
    assert done.returncode == 0 and done.stdout == "" and done.stderr == ""
    assert time.monotonic() - started < 5  # the import runs detached
    (line,) = wait_for_log(root, "session-end", "imported")
    assert "claude-code session 48f428f9" in line
    first = events_text(root)
    assert '"kind":"user_message"' in first.replace(" ", "")
    # The same transcript again changes nothing.
    hook("session-end", payload, elsewhere)
    wait_for_log(root, "session-end", "unchanged")
    assert events_text(root) == first


def test_session_end_imports_a_hand_written_transcript(
    tmp_path: Path, root: Path, stet: Stet, elsewhere: Path
) -> None:
    agent_note(stet, root, "Set up")
    transcript = claude_transcript(tmp_path / f"{SID}.jsonl", root)
    payload = {"session_id": SID, "transcript_path": str(transcript), "cwd": str(root / "src")}
    assert hook("session-end", payload, elsewhere).returncode == 0
    wait_for_log(root, "session-end", SID, "imported")
    text = events_text(root)
    assert "Rename the helper" in text and "Renamed it." in text


def test_a_session_id_holding_a_lone_surrogate_is_imported_and_logged(
    tmp_path: Path, root: Path, stet: Stet, elsewhere: Path
) -> None:
    """JSON lets the harness write a lone surrogate ("\\ud800"), which no UTF-8 text holds:
    the worker could not be started with it in its argument, and the log's lines naming it
    went to standard error instead. The log shows it as U+FFFD."""
    agent_note(stet, root, "Set up")
    transcript = claude_transcript(tmp_path / f"{SID}.jsonl", root)
    session = "ab\ud800cd"
    payload = {"session_id": session, "transcript_path": str(transcript), "cwd": str(root)}
    done = hook("session-end", json.dumps(payload), elsewhere)
    assert (done.returncode, done.stderr) == (0, "")
    (line,) = wait_for_log(root, "session-end", "imported")
    assert "claude-code session ab\ufffdcd: imported" in line
    assert "Rename the helper" in events_text(root)


def test_an_import_s_warnings_are_logged(
    tmp_path: Path, root: Path, stet: Stet, elsewhere: Path
) -> None:
    """What an import could not make sure of reaches the log: the hooks' imports have no
    terminal to say it on. Here the other session's transcript, whose redacted value the new
    session must redact too, is gone."""
    agent_note(stet, root, "Set up")
    first = claude_transcript(tmp_path / f"{SID}.jsonl", root, "export API_TOKEN=hunter2Summer")
    payload = {"session_id": SID, "transcript_path": str(first), "cwd": str(root)}
    assert hook("session-end", payload, elsewhere).returncode == 0
    wait_for_log(root, "session-end", SID, "imported")
    assert "hunter2Summer" not in events_text(root)
    first.unlink()
    other = "5d0c1f7e-0a4b-4c55-9d2e-3f6a7b8c9d0e"
    second = tmp_path / f"{other}.jsonl"
    claude_transcript(second, root, "Add the parser test")
    second.write_text(second.read_text("utf-8").replace(SID, other), "utf-8")
    payload = {"session_id": other, "transcript_path": str(second), "cwd": str(root)}
    assert hook("session-end", payload, elsewhere).returncode == 0
    (line,) = wait_for_log(root, "session-end", other, "warning:")
    assert f"session {SID}'s values" in line and "cannot be read again" in line


def test_stop_imports_too(tmp_path: Path, root: Path, stet: Stet, elsewhere: Path) -> None:
    agent_note(stet, root, "Set up")
    transcript = claude_transcript(tmp_path / f"{SID}.jsonl", root, "Add the parser test")
    payload = {"session_id": SID, "transcript_path": str(transcript), "cwd": str(root)}
    done = hook("stop", payload | {"stop_hook_active": False}, elsewhere)
    assert (done.returncode, done.stdout) == (0, "")
    wait_for_log(root, "stop:", SID, "imported")
    assert "Add the parser test" in events_text(root)


def test_session_end_after_a_capstone_with_nothing_since_imports_nothing(
    tmp_path: Path, root: Path, stet: Stet, elsewhere: Path
) -> None:
    agent_note(stet, root, "Set up")
    config = pygit2.Repository(str(root)).config
    config["user.name"], config["user.email"] = "Ada Reviewer", "ada@example.invalid"
    transcript = claude_transcript(tmp_path / f"{SID}.jsonl", root)
    target = resolve_target(root)
    import_transcript(target, transcript)
    done = capstone(target)
    with transcript.open("a") as stream:  # what a session writes as it closes: no step
        stream.write(json.dumps({"type": "summary", "summary": "Renamed", "leafUuid": "a1"}))
        stream.write("\n")
    payload = {"session_id": SID, "transcript_path": str(transcript), "cwd": str(root)}

    assert hook("session-end", payload, elsewhere).returncode == 0

    (line,) = wait_for_log(root, "session-end", SID, "nothing since")
    assert f"committed already, in trajectory {done.trajectory}" in line
    assert "error" not in line
    assert not working_folder(target).path.exists()


def test_stop_is_throttled_per_session(tmp_path: Path, root: Path, stet: Stet) -> None:
    agent_note(stet, root, "Set up")
    transcript = claude_transcript(tmp_path / "t.jsonl", root)
    started: list[tuple[str, dict[str, Any]]] = []

    def spawn(at: Path, event: str, job: dict[str, Any]) -> None:
        assert at == root
        started.append((event, job))

    def stop(session: str, *args: str) -> None:
        payload = {"session_id": session, "transcript_path": str(transcript), "cwd": str(root)}
        code = run_hook("stop", args, stdin=io.StringIO(json.dumps(payload)), spawn=spawn)
        assert code == 0

    stop("one")
    stop("one")
    stop("two")
    assert [job["session"] for _, job in started] == ["one", "two"]
    stop("one", "--every", "0")
    assert [job["session"] for _, job in started] == ["one", "two", "one"]
    assert started[0] == (
        "stop",
        {
            "root": str(root),
            "session": "one",
            "transcript": str(transcript),
            "harness": "claude-code",
        },
    )
    assert log_lines(root) == []


def test_a_stop_import_skips_while_one_of_the_same_session_runs(
    tmp_path: Path, root: Path, stet: Stet
) -> None:
    agent_note(stet, root, "Set up")
    transcript = claude_transcript(tmp_path / "t.jsonl", root)
    job = {"root": str(root), "session": SID, "transcript": str(transcript)}
    job["harness"] = "claude-code"
    with files.session_lock(root, files.session_key(SID), 0) as held:
        assert held
        work("stop", job, os.environ)
    assert "an import is running; skipped" in log_lines(root)[-1]
    work("stop", job, os.environ)
    assert "imported" in log_lines(root)[-1]


def test_an_old_lock_an_import_holds_is_not_removed_as_stale(
    tmp_path: Path, root: Path, stet: Stet
) -> None:
    """Locking leaves a lock file's time as it is, so an import of a session resumed after
    more than a week holds a lock that old: another session's Stop hook removed it as stale,
    and the next import of the session took a new one and ran beside the first. It is removed
    once nobody holds it."""
    agent_note(stet, root, "Set up")
    transcript = claude_transcript(tmp_path / f"{SID}.jsonl", root)
    job = {"root": str(root), "session": SID, "transcript": str(transcript)}
    job["harness"] = "claude-code"
    key = files.session_key(SID)
    lock = root / files.SESSIONS / f"{key}.lock"
    week_ago = time.time() - files.STALE_SECONDS - 60
    with files.session_lock(root, key, 0) as held:
        assert held
        os.utime(lock, (week_ago, week_ago))
        files.set_stamp(root, files.session_key("another session"), "stop")
        assert lock.exists()
        work("stop", job, os.environ)
        assert "an import is running; skipped" in log_lines(root)[-1]
    files.set_stamp(root, files.session_key("another session"), "stop")
    assert not lock.exists()


def test_bad_input_exits_0_and_is_logged(root: Path, stet: Stet, elsewhere: Path) -> None:
    agent_note(stet, root, "Set up")
    project = {"CLAUDE_PROJECT_DIR": str(root)}
    cases = [
        ("session-end", "{not json", project, "is not JSON"),
        ("stop", "[1, 2]", project, "is not a JSON object"),
        # JSON nested past the decoder's depth, whole or cut short: no RecursionError.
        ("session-start", '{"a": ' + "[" * 100_000 + "]" * 100_000 + "}", project, "too deeply"),
        ("session-end", "[" * 100_000, project, "nests too deeply to decode"),
        ("session-end", {"cwd": str(root), "session_id": SID}, {}, "no transcript_path"),
        (
            "session-end",
            {"cwd": str(root), "session_id": SID, "transcript_path": str(root / "gone.jsonl")},
            {},
            "no transcript at",
        ),
        ("stopp", "{}", project, "unknown hook 'stopp'"),
        ("session-start", {"cwd": "relative/dir"}, project, "is not an absolute path"),
    ]
    for event, stdin, env, message in cases:
        done = hook(event, stdin, elsewhere, env=env)
        assert (done.returncode, done.stdout) == (0, ""), (event, stdin, done.stderr)
        assert message in log_lines(root)[-1], (message, log_lines(root))
    done = hook("stop", "{}", elsewhere, "--bogus", env=project)
    assert done.returncode == 0 and "unknown option --bogus" in log_lines(root)[-1]
    assert run_hook(None, [], stdin=io.StringIO("{}"), stdout=io.StringIO(), env=project) == 0
    assert "run: error: no hook event given; known: session-start," in log_lines(root)[-1]
    # Nowhere to log: standard error, still exit 0.
    done = hook("session-end", "{not json", elsewhere)
    assert done.returncode == 0 and "is not JSON" in done.stderr


def test_a_transcript_that_cannot_be_imported_is_logged(
    tmp_path: Path, root: Path, stet: Stet, elsewhere: Path
) -> None:
    agent_note(stet, root, "Set up")
    transcript = tmp_path / "notes.jsonl"
    transcript.write_text('{"hello": "world"}\n', "utf-8")
    payload = {"session_id": SID, "transcript_path": str(transcript), "cwd": str(root)}
    assert hook("session-end", payload, elsewhere).returncode == 0
    (line,) = wait_for_log(root, "session-end", SID, "error")
    assert "not in the format it was named as (Claude Code session JSONL)" in line
    assert "--format" not in line  # the hook passes no such option
    assert not working_folder(resolve_target(root)).path.exists()


def test_the_hooks_log_passes_the_gate(root: Path, stet: Stet) -> None:
    """A session id or a transcript's path the log names may hold a secret or a home folder:
    the log is a file Stet writes, and passes the gate as every other."""
    agent_note(stet, root, "Set up")
    token = "ghp_" + "Zq8Xw2Lm4Np6Rt8Vb0Cd2Fg4Hj6Kl8Mn0Pq2S"
    files.log(root, "session-end", f"session s-{token}: error: /home/ana/work/s.jsonl: missing")
    [line] = log_lines(root)
    assert token not in line and "[REDACTED:github-token#1]" in line
    assert "/home/ana" not in line and "~/work/s.jsonl" in line


def test_a_value_where_the_log_cuts_a_long_message_is_redacted_whole(
    root: Path, stet: Stet
) -> None:
    """A long message is cut after the gate reads it: cut first, the token's first
    characters no longer read as one, and stayed in the log."""
    agent_note(stet, root, "Set up")
    token = "ghp_" + "Zq8Xw2Lm4Np6Rt8Vb0Cd2Fg4Hj6Kl8Mn0Pq2S"
    message = "session s: error: " + "x" * (files.MESSAGE_CHARS - 30) + f" {token} and more"
    files.log(root, "stop", message)
    [line] = log_lines(root)
    assert token[:8] not in line and line.endswith("…")


def test_the_hooks_log_is_gated_as_the_plain_text_it_is(root: Path, stet: Stet) -> None:
    """The log's lines are plain text, no JSON: a `\\` after `C:/Users` is a separator, as
    `os.path.join` mixes them on Windows, not a JSON escape (`\\n`) that kept the user's
    name (`nancy`) in the log."""
    agent_note(stet, root, "Set up")
    files.log(root, "session-end", "session s: error: no transcript at C:/Users\\nancy\\s.jsonl")
    [line] = log_lines(root)
    assert line.endswith(" session-end: session s: error: no transcript at ~\\s.jsonl")


def test_a_huge_committed_hooks_log_is_read_no_further_than_its_kept_lines(root: Path) -> None:
    """A repository can commit `.stet/cache/hooks/hooks.log` of gigabytes (sparse here, as
    git would compress it): every hook's line read it whole. Its tail is read, whose last
    lines are kept."""
    path = root / files.LOG
    path.parent.mkdir(parents=True)
    with path.open("wb") as log:
        log.truncate(8 * 1024**3)  # 8 GiB of NUL bytes, none on disk
        log.seek(0, 2)
        log.write(b"2026-01-01T00:00:00Z stop: an older line\n" * 100_000)
        log.write(b"2026-01-01T00:00:00Z stop: the last line before\n")
    files.log(root, "stop", "a line of this hook", own_words=True)
    lines = log_lines(root)
    assert len(lines) == files.LOG_LINES
    assert lines[-2:] == ["2026-01-01T00:00:00Z stop: the last line before", lines[-1]]
    assert lines[-1].endswith("stop: a line of this hook")
    assert path.stat().st_size < 2 * 1024**2
    assert files.last_log_line(root) == lines[-1]


def test_hooks_write_nothing_where_stet_is_not_set_up(
    tmp_path: Path, root: Path, elsewhere: Path
) -> None:
    transcript = claude_transcript(tmp_path / "t.jsonl", root)
    payload = {"session_id": SID, "transcript_path": str(transcript), "cwd": str(root)}
    for event in ("session-end", "stop"):
        assert hook(event, payload, elsewhere).returncode == 0
    assert not (root / ".stet").exists()  # the hook starts no worker there


# -- install and uninstall: Claude Code -----------------------------------------------------------

USER_SETTINGS = {
    "permissions": {"allow": ["Bash(npm run test:*)"], "deny": ["Read(./.env)"]},
    "env": {"FOO": "bar"},
    "hooks": {
        "SessionStart": [
            {"matcher": "startup", "hooks": [{"type": "command", "command": "echo hi"}]}
        ],
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "./check.sh"}]}
        ],
    },
}


def write_settings(root: Path, value: Any, indent: int | None = 4, end: str = "") -> bytes:
    path = root / LOCAL_SETTINGS
    path.parent.mkdir(exist_ok=True)
    data = (json.dumps(value, indent=indent) + end).encode("utf-8")
    path.write_bytes(data)
    return data


def stet_hooks(stet: Stet, root: Path, *args: str) -> tuple[int, str, str]:
    return stet("hooks", *args, "-C", str(root))


def test_install_merges_into_local_settings_and_uninstall_restores_the_bytes(
    root: Path, stet: Stet, home: Path
) -> None:
    original = write_settings(root, USER_SETTINGS)  # four spaces, no final line break
    exclude = root / ".git" / "info" / "exclude"
    exclude.write_bytes(b"# mine\n*.log")
    committed = root / ".claude" / "settings.json"
    committed.write_text('{"model": "opus"}\n', "utf-8")
    code, out, err = stet_hooks(stet, root, "install", "claude-code")
    assert code == 0, err
    assert f"SessionStart  {commands()['SessionStart']}" in out
    assert "stet mcp install claude-code" in out
    installed = (root / LOCAL_SETTINGS).read_bytes()
    settings = json.loads(installed)
    # The user's settings and hooks are kept as they were; Stet's group comes after theirs.
    assert settings["permissions"] == USER_SETTINGS["permissions"]
    assert settings["env"] == USER_SETTINGS["env"]
    assert settings["hooks"]["PreToolUse"] == USER_SETTINGS["hooks"]["PreToolUse"]
    start = settings["hooks"]["SessionStart"]
    assert start[0] == USER_SETTINGS["hooks"]["SessionStart"][0]
    assert start[1] == {
        "hooks": [{"type": "command", "command": commands()["SessionStart"], "timeout": 10}]
    }
    for event, command in commands().items():
        assert settings["hooks"][event][-1]["hooks"][0]["command"] == command
    assert installed.startswith(b'{\n    "permissions"') and not installed.endswith(b"\n")
    assert exclude.read_bytes() == b"# mine\n*.log\n/.claude/settings.local.json\n"
    assert pygit2.Repository(str(root)).path_is_ignored(".claude/settings.local.json")
    # Installing again adds nothing.
    code, out, _ = stet_hooks(stet, root, "install", "claude-code")
    assert code == 0 and "already" in out
    assert (root / LOCAL_SETTINGS).read_bytes() == installed
    code, out, err = stet_hooks(stet, root, "uninstall", "claude-code")
    assert code == 0, err
    assert (root / LOCAL_SETTINGS).read_bytes() == original
    assert exclude.read_bytes() == b"# mine\n*.log"
    assert committed.read_text("utf-8") == '{"model": "opus"}\n'
    assert not (root / files.HOOKS_DIR / "claude-code.json").exists()
    code, out, _ = stet_hooks(stet, root, "uninstall", "claude-code")
    assert code == 0 and "nothing changed" in out


def test_install_and_uninstall_keep_what_claude_code_writes_meanwhile(
    root: Path, stet: Stet, home: Path
) -> None:
    """Claude Code writes the local settings while it runs (a permission granted for good):
    install and uninstall read the file, then wrote their result over whatever it held by
    then, and the permissions granted in between were lost. A writer that adds one a few
    milliseconds apart, as Claude Code would, keeps every one."""
    from stet_lsp.core.safefs import atomic_write

    settings = root / LOCAL_SETTINGS
    settings.parent.mkdir()
    settings.write_text('{"permissions": {"allow": []}}\n')
    granted: list[str] = []
    done = threading.Event()

    def claude_code_granting() -> None:
        while not done.is_set():
            data = json.loads(settings.read_text("utf-8"))
            granted.append(f"Bash(make test-{len(granted)})")
            data.setdefault("permissions", {}).setdefault("allow", []).append(granted[-1])
            atomic_write(settings, (json.dumps(data, indent=2) + "\n").encode(), root)
            time.sleep(0.003)

    # The commands run in this process: a short switch interval lets the writer's thread in
    # while they hold the interpreter, as Claude Code's own process would write meanwhile.
    interval = sys.getswitchinterval()
    sys.setswitchinterval(0.0001)
    writer = threading.Thread(target=claude_code_granting)
    writer.start()
    granted_meanwhile = 0
    try:
        for action in ("install", "uninstall"):
            before = len(granted)
            code, _, err = stet_hooks(stet, root, action, "claude-code")
            assert code == 0 or "kept changing while Stet wrote it" in err, err
            granted_meanwhile += len(granted) > before
    finally:
        done.set()
        writer.join()
        sys.setswitchinterval(interval)
    assert granted_meanwhile, "no permission was granted while either command ran"
    kept = json.loads(settings.read_text("utf-8"))["permissions"]["allow"]
    assert kept == granted


def test_install_and_uninstall_in_a_repository_whose_path_is_not_utf8(
    stet: Stet, home: Path, tmp_path: Path
) -> None:
    """A repository whose folder name holds a byte that is not UTF-8: the install record
    names its `info/exclude`, and was written as UTF-8, which cannot hold that byte (a
    traceback, after `.stet/` was made). It is written escaped, and uninstall reads it back:
    the exclude line goes again. What the commands print names the folder with U+FFFD for
    that byte, on a stream that refuses what is not UTF-8 (as pytest's, or a UTF-8 locale's)
    as in JSON, where the print ended in a traceback after the work was done."""
    repo = make_repo(tmp_path / os.fsdecode(b"caf\xe9 repo"))
    root = Path(repo.workdir).resolve()
    exclude = Path(repo.path) / "info" / "exclude"
    before = exclude.read_bytes() if exclude.exists() else None
    code, out, err = stet_hooks(stet, root, "install", "claude-code")
    assert code == 0, err
    assert f"with a line in {tmp_path}/caf\ufffd repo/.git/info/exclude" in out
    assert b"/.claude/settings.local.json\n" in exclude.read_bytes()
    code, out, err = stet_hooks(stet, root, "uninstall", "claude-code", "--json")
    assert code == 0, err
    assert json.loads(out)["path"] == f"{tmp_path}/caf\ufffd repo/{LOCAL_SETTINGS}"
    assert not (root / LOCAL_SETTINGS).exists()
    assert (exclude.read_bytes() if exclude.exists() else None) == before


@pytest.mark.parametrize(
    "hooks",
    [{}, {"SessionStart": [], "Stop": []}, None, {"Stop": None}],
    ids=["empty", "lists", "null", "null-list"],
)
def test_uninstall_restores_the_bytes_of_settings_with_empty_hooks(
    root: Path, stet: Stet, hooks: dict[str, Any] | None
) -> None:
    # Taking Stet's handlers out removes an empty `hooks` or event list: the file was what
    # it was before all the same.
    original = write_settings(root, {"hooks": hooks, "model": "opus"}, indent=2, end="\n")
    assert stet_hooks(stet, root, "install", "claude-code")[0] == 0
    assert stet_hooks(stet, root, "uninstall", "claude-code")[0] == 0
    assert (root / LOCAL_SETTINGS).read_bytes() == original


def test_uninstall_keeps_what_changed_meanwhile(root: Path, stet: Stet) -> None:
    write_settings(root, USER_SETTINGS, indent=2, end="\n")
    assert stet_hooks(stet, root, "install", "claude-code")[0] == 0
    # Claude Code records a permission the user granted during a session.
    settings = json.loads((root / LOCAL_SETTINGS).read_text("utf-8"))
    settings["permissions"]["allow"].append("Bash(ls:*)")
    write_settings(root, settings, indent=2, end="\n")
    assert stet_hooks(stet, root, "uninstall", "claude-code")[0] == 0
    expected = json.loads(json.dumps(USER_SETTINGS))
    expected["permissions"]["allow"].append("Bash(ls:*)")
    text = (root / LOCAL_SETTINGS).read_text("utf-8")
    assert json.loads(text) == expected
    assert text == json.dumps(expected, indent=2) + "\n"


def test_a_hook_a_person_gave_options_is_still_stets(root: Path, stet: Stet) -> None:
    """`stet hooks run stop --every 600` (an option docs/agents.md describes) is Stet's Stop
    hook: not added a second time, and taken out by uninstall."""
    original = write_settings(root, {"model": "sonnet"}, indent=2, end="\n")
    stet_hooks(stet, root, "install", "claude-code")
    settings = json.loads((root / LOCAL_SETTINGS).read_text("utf-8"))
    settings["hooks"]["Stop"][0]["hooks"][0]["command"] = commands()["Stop"] + " --every 600"
    write_settings(root, settings, indent=2, end="\n")
    status = json.loads(stet_hooks(stet, root, "status", "--json")[1])["claude_code"]
    assert "Stop" in status["settings"][0]["events"]
    code, out, _ = stet_hooks(stet, root, "install", "claude-code")
    assert code == 0 and "nothing changed" in out
    stet_hooks(stet, root, "uninstall", "claude-code")
    assert "hooks" not in json.loads((root / LOCAL_SETTINGS).read_text("utf-8"))
    assert json.loads((root / LOCAL_SETTINGS).read_text("utf-8")) == json.loads(original)
    # A command chained after Stet's is the person's: not Stet's, and not taken out.
    stet_hooks(stet, root, "install", "claude-code")
    settings = json.loads((root / LOCAL_SETTINGS).read_text("utf-8"))
    chained = commands()["Stop"] + " --every 600 && notify-send done"
    settings["hooks"]["Stop"][0]["hooks"][0]["command"] = chained
    write_settings(root, settings, indent=2, end="\n")
    stet_hooks(stet, root, "uninstall", "claude-code")
    kept = json.loads((root / LOCAL_SETTINGS).read_text("utf-8"))
    assert kept["hooks"]["Stop"][0]["hooks"][0]["command"] == chained


def test_a_hook_taken_out_by_hand_comes_back_and_uninstall_still_restores(
    root: Path, stet: Stet
) -> None:
    original = write_settings(root, {"model": "sonnet"}, indent=2, end="\n")
    stet_hooks(stet, root, "install", "claude-code")
    settings = json.loads((root / LOCAL_SETTINGS).read_text("utf-8"))
    del settings["hooks"]["Stop"]
    write_settings(root, settings, indent=2, end="\n")
    code, out, _ = stet_hooks(stet, root, "install", "claude-code")
    assert code == 0 and "Stop" in out and "SessionStart" not in out
    assert json.loads((root / LOCAL_SETTINGS).read_text("utf-8"))["hooks"]["Stop"]
    stet_hooks(stet, root, "uninstall", "claude-code")
    assert (root / LOCAL_SETTINGS).read_bytes() == original


def test_a_settings_file_stet_created_is_removed_again(root: Path, stet: Stet) -> None:
    code, out, _ = stet_hooks(stet, root, "install", "claude-code")
    assert code == 0 and "create .claude/settings.local.json" in out
    assert "keep it out of commits with a line in" in out
    exclude = root / ".git" / "info" / "exclude"
    exclude.unlink()  # git init writes one; here there is none, so Stet creates it
    assert stet_hooks(stet, root, "uninstall", "claude-code")[0] == 0
    assert stet_hooks(stet, root, "install", "claude-code")[0] == 0
    assert exclude.read_text("utf-8") == "/.claude/settings.local.json\n"
    assert (root / ".stet" / ".gitignore").read_text(
        "utf-8"
    ) == "cache/\n.*.tmp\n.*.stet-before-capstone-*\n"
    assert stet_hooks(stet, root, "status")[1].startswith(
        "Claude Code  .claude/settings.local.json: SessionStart, SessionEnd, Stop"
    )
    code, out, _ = stet_hooks(stet, root, "uninstall", "claude-code")
    assert code == 0 and "remove .claude/settings.local.json" in out
    assert not (root / ".claude").exists() and not exclude.exists()


def test_settings_git_tracks_are_refused(repo: pygit2.Repository, root: Path, stet: Stet) -> None:
    commit_files(repo, {".claude/settings.local.json": "{}\n"})
    code, out, err = stet_hooks(stet, root, "install", "claude-code")
    assert code == 1 and out == "" and "is tracked by git" in err
    assert (root / LOCAL_SETTINGS).read_text("utf-8") == "{}\n"
    assert not (root / ".stet").exists()


def test_a_settings_file_that_does_not_parse_is_refused_unchanged(root: Path, stet: Stet) -> None:
    cases = [
        b'{"permissions": {"allow": []},',
        b'{"env": {}, "env": {"A": "1"}}',
        b'{"hooks": {"Stop": {"command": "x"}}}',
        b"[1, 2]",
        b'{"a": "\xff"}',
        b'{"a": NaN}',
    ]
    for data in cases:
        (root / ".claude").mkdir(exist_ok=True)
        (root / LOCAL_SETTINGS).write_bytes(data)
        for action in ("install", "uninstall"):
            code, out, err = stet_hooks(stet, root, action, "claude-code")
            assert code == 1 and out == "", (data, out)
            assert "nothing was changed" in err
            assert (root / LOCAL_SETTINGS).read_bytes() == data
    assert not (root / files.HOOKS_DIR / "claude-code.json").exists()


def test_hooks_claude_code_cannot_read_are_refused_by_install_and_kept_by_uninstall(
    root: Path, stet: Stet, home: Path
) -> None:
    """Claude Code skips a settings file whose hooks it cannot read whole (its "Settings
    Error": "Files with errors are skipped entirely"), so Stet's hooks added beside such a
    group would never run: install refuses and changes nothing. Uninstall takes Stet's own
    handlers out and keeps everything else as it is; status names the problem."""
    shapes = [
        {"PreToolUse": [{"matcher": "Bash"}]},
        {"PostToolUse": "./format.sh"},
        {"Stop": [{"hooks": [{"command": "say done"}]}]},
        {"Stop": [{"hooks": [{"type": "command"}]}]},
        {"Notification": [{"matcher": {"tools": ["Bash"]}, "hooks": []}]},
        {"SessionStart": ["echo hi"]},
        {"PreToolUse": None},
    ]
    for shape in shapes:
        data = write_settings(root, {"env": {"A": "1"}, "hooks": shape})
        code, out, err = stet_hooks(stet, root, "install", "claude-code")
        assert code == 1 and out == "", shape
        assert "Claude Code does not read" in err and "nothing was changed" in err, err
        assert (root / LOCAL_SETTINGS).read_bytes() == data
        assert not (root / files.HOOKS_DIR / "claude-code.json").exists()
        local = json.loads(stet_hooks(stet, root, "status", "--json")[1])["claude_code"]
        assert "Claude Code skips this file" in local["settings"][0]["problem"]
    # Installed first, the odd group added by hand afterwards: uninstall keeps it.
    write_settings(root, {"env": {"A": "1"}})
    assert stet_hooks(stet, root, "install", "claude-code")[0] == 0
    settings = json.loads((root / LOCAL_SETTINGS).read_text("utf-8"))
    settings["hooks"]["Stop"].insert(0, {"matcher": "Bash"})
    settings["hooks"]["PostToolUse"] = "./format.sh"
    write_settings(root, settings)
    code, _, err = stet_hooks(stet, root, "uninstall", "claude-code")
    assert code == 0, err
    left = json.loads((root / LOCAL_SETTINGS).read_text("utf-8"))
    assert left == {
        "env": {"A": "1"},
        "hooks": {"Stop": [{"matcher": "Bash"}], "PostToolUse": "./format.sh"},
    }


def test_a_read_only_settings_file_or_config_is_left_as_it_is(
    root: Path, stet: Stet, home: Path
) -> None:
    """A settings file or Codex config its owner made read-only was replaced all the same
    (a new file renamed over it, its mode kept): install and uninstall now refuse it and
    change nothing, the repository's opt-in and records included."""
    data = write_settings(root, {"env": {"A": "1"}})
    settings = root / LOCAL_SETTINGS
    config = home / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_bytes(b'model = "o3"\n')
    for path in (settings, config):
        path.chmod(0o444)
    for harness, path in (("claude-code", settings), ("codex", config)):
        before = path.read_bytes()
        code, out, err = stet_hooks(stet, root, "install", harness)
        assert code == 1 and out == "", out
        assert f"{path} is read-only (mode 0444)" in err and "nothing was changed" in err
        assert path.read_bytes() == before
    assert not (root / files.HOOKS_DIR / "claude-code.json").exists()
    assert not (root / files.HOOKS_DIR / "codex.json").exists()
    for path in (settings, config):
        path.chmod(0o644)
    assert stet_hooks(stet, root, "install", "claude-code")[0] == 0
    assert stet_hooks(stet, root, "install", "codex")[0] == 0
    for harness, path in (("claude-code", settings), ("codex", config)):
        path.chmod(0o444)
        installed = path.read_bytes()
        code, _, err = stet_hooks(stet, root, "uninstall", harness)
        assert code == 1 and f"{path} is read-only" in err
        assert path.read_bytes() == installed
        path.chmod(0o644)
        assert stet_hooks(stet, root, "uninstall", harness)[0] == 0
    assert settings.read_bytes() == data and config.read_bytes() == b'model = "o3"\n'


def test_dry_run_writes_nothing(root: Path, stet: Stet) -> None:
    code, out, _ = stet_hooks(stet, root, "install", "claude-code", "--dry-run")
    assert code == 0 and "would create .claude/settings.local.json" in out
    assert f'"command": {json.dumps(commands()["SessionEnd"])}' in out
    assert not (root / ".claude").exists() and not (root / ".stet").exists()
    stet_hooks(stet, root, "install", "claude-code")
    before = (root / LOCAL_SETTINGS).read_bytes()
    code, out, _ = stet_hooks(stet, root, "uninstall", "claude-code", "--dry-run", "--json")
    result = json.loads(out)
    assert result["removed_file"] and result["dry_run"] and result["removed"] == list(HOOK_EVENTS)
    assert (root / LOCAL_SETTINGS).read_bytes() == before


NO_STET = "/usr/bin:/bin"
"""A PATH without `stet` (as an editor or harness started from the desktop may have)."""


def test_the_hooks_start_stet_as_mcp_install_does(
    root: Path, stet: Stet, home: Path, tmp_path: Path, elsewhere: Path
) -> None:
    """The harness runs the hooks with its own PATH: install writes `stet` as `stet mcp
    install` writes it, the `stet` on PATH by its full path, or this Python with `-m
    stet_lsp` when none is there. The hook then runs without `stet` on the harness's PATH."""
    assert shutil.which("stet", path=NO_STET) is None
    agent_note(stet, root, "Use the retry helper")
    inherited = {k: v for k, v in os.environ.items() if k not in HARNESS_VARIABLES}
    project = Path(__file__).resolve().parents[1]
    environment = inherited | {"HOME": str(home), "PYTHONPATH": str(project)}
    folder = tmp_path / "bin"
    folder.mkdir()
    program = folder / "stet"
    program.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m stet_lsp "$@"\n')
    program.chmod(0o755)

    def run(*args: str, path: str) -> dict[str, Any]:
        done = subprocess.run(
            [sys.executable, "-m", "stet_lsp", *args, "--json", "-C", str(root)],
            capture_output=True,
            text=True,
            env=environment | {"PATH": path},
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        result: dict[str, Any] = json.loads(done.stdout)
        return result

    for path, start in [
        (NO_STET, [sys.executable, "-m", "stet_lsp"]),
        (f"{folder}{os.pathsep}{NO_STET}", [str(program)]),
    ]:
        server = run("mcp", "install", "claude-code", "--dry-run", path=path)["server"]
        assert [server["command"], *server["args"]] == [*start, "mcp"]
        installed = run("hooks", "install", "claude-code", path=path)
        expected = {
            "SessionStart": shlex.join([*start, "hooks", "run", "session-start"]),
            "SessionEnd": shlex.join([*start, "hooks", "run", "session-end"]),
            "Stop": shlex.join([*start, "hooks", "run", "stop"]),
        }
        assert installed["commands"] == expected
        settings = json.loads((root / LOCAL_SETTINGS).read_text("utf-8"))
        written = {
            event: groups[-1]["hooks"][0]["command"] for event, groups in settings["hooks"].items()
        }
        assert written == expected
        # Claude Code runs the command through the shell, from its own folder and PATH.
        done = subprocess.run(
            ["/bin/sh", "-c", written["SessionStart"]],
            input=json.dumps(
                {"session_id": SID, "cwd": str(root), "hook_event_name": "SessionStart"}
            ),
            capture_output=True,
            text=True,
            cwd=elsewhere,
            env=environment | {"PATH": NO_STET},
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
        assert "Use the retry helper" in context
        codex = run("hooks", "install", "codex", path=path)
        assert codex["notify"] == [*start, "hooks", "run", "codex-notify"]
        config = tomllib.loads((home / ".codex" / "config.toml").read_text("utf-8"))
        assert config["notify"] == codex["notify"]
        assert run("hooks", "uninstall", "claude-code", path=path)["removed_file"]
        assert run("hooks", "uninstall", "codex", path=path)["removed_file"]
        assert not (root / LOCAL_SETTINGS).exists()
        assert not (home / ".codex" / "config.toml").exists()


def test_hooks_an_earlier_version_wrote_with_the_bare_name_are_still_stets(
    root: Path, stet: Stet, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Earlier versions wrote `stet hooks run …` (found on the harness's PATH): status knows
    them and warns when no `stet` is on PATH to run them; installing again has them run Stet
    as install writes it now (options kept, the rest of the file as it was), and uninstall
    then gives back the files as they were before the first install."""
    original = write_settings(root, {"model": "opus"}, indent=2, end="\n")
    assert stet_hooks(stet, root, "install", "claude-code")[0] == 0
    settings = json.loads((root / LOCAL_SETTINGS).read_text("utf-8"))
    for event, name in HOOK_EVENTS.items():
        settings["hooks"][event][-1]["hooks"][0]["command"] = f"stet hooks run {name}"
    settings["hooks"]["Stop"][-1]["hooks"][0]["command"] += " --every 600"
    write_settings(root, settings, indent=2, end="\n")
    config = home / ".codex" / "config.toml"
    config.parent.mkdir()
    codex_original = b'model = "o3"\n'
    marker = b"# Added by `stet hooks install codex` (undo: stet hooks uninstall codex)\n"
    config.write_bytes(
        marker + b'notify = ["stet", "hooks", "run", "codex-notify"]\n\n' + codex_original
    )
    monkeypatch.setenv("PATH", NO_STET)
    document = json.loads(stet_hooks(stet, root, "status", "--json")[1])
    assert document["claude_code"]["installed"] and document["codex"]["installed"]
    assert document["claude_code"]["settings"][0]["bare_name"] and document["codex"]["bare_name"]
    assert not document["stet_on_path"]
    out = stet_hooks(stet, root, "status")[1]
    assert "warning: `stet` is not on PATH, and .claude/settings.local.json runs" in out
    assert "warning: `stet` is not on PATH, and ~/.codex/config.toml runs" in out

    code, out, err = stet_hooks(stet, root, "install", "claude-code")
    assert code == 0, err
    assert "start Stet as this install does in" in out and "nothing changed" not in out
    commands = {
        event: groups[-1]["hooks"][0]["command"]
        for event, groups in json.loads((root / LOCAL_SETTINGS).read_text())["hooks"].items()
    }
    start = shlex.join(stet_command())
    assert commands == {
        event: f"{start} hooks run {name}" + (" --every 600" if event == "Stop" else "")
        for event, name in HOOK_EVENTS.items()
    }
    assert stet_hooks(stet, root, "install", "codex")[0] == 0
    notify = notify_line(notify_program()).encode()
    assert config.read_bytes() == marker + notify + b"\n\n" + codex_original
    document = json.loads(stet_hooks(stet, root, "status", "--json")[1])
    assert not document["claude_code"]["settings"][0]["bare_name"]
    assert not document["codex"]["bare_name"]
    assert "not on PATH" not in stet_hooks(stet, root, "status")[1]
    assert "nothing changed" in stet_hooks(stet, root, "install", "claude-code")[1]

    assert stet_hooks(stet, root, "uninstall", "claude-code")[0] == 0
    assert (root / LOCAL_SETTINGS).read_bytes() == original
    assert stet_hooks(stet, root, "uninstall", "codex")[0] == 0
    assert config.read_bytes() == codex_original


def test_install_again_after_stet_moved_starts_it_where_it_is_now(
    root: Path, stet: Stet, home: Path
) -> None:
    """Hooks that start Stet from where it was installed before (a removed virtual
    environment) start it as install does now once installed again; a Codex notify too."""
    stet_hooks(stet, root, "install", "claude-code")
    settings = json.loads((root / LOCAL_SETTINGS).read_text("utf-8"))
    for event, name in HOOK_EVENTS.items():
        settings["hooks"][event][0]["hooks"][0]["command"] = f"/old/venv/bin/stet hooks run {name}"
    write_settings(root, settings, indent=2, end="\n")
    code, out, err = stet_hooks(stet, root, "install", "claude-code", "--json")
    assert code == 0, err
    assert json.loads(out)["renewed"] == list(HOOK_EVENTS)
    hooks = json.loads((root / LOCAL_SETTINGS).read_text("utf-8"))["hooks"]
    assert {event: groups[0]["hooks"][0]["command"] for event, groups in hooks.items()} == (
        commands()
    )
    config = home / ".codex" / "config.toml"
    stet_hooks(stet, root, "install", "codex")
    old = notify_line(["/old/venv/bin/stet", "hooks", "run", "codex-notify"])
    config.write_text(config.read_text().replace(notify_line(notify_program()), old))
    assert old in config.read_text()
    stet_hooks(stet, root, "install", "codex")
    assert tomllib.loads(config.read_text())["notify"] == notify_program()


# -- Codex ------------------------------------------------------------------------------------------


def test_codex_install_sets_notify_and_uninstall_restores_the_config(
    root: Path, stet: Stet, home: Path
) -> None:
    config = home / ".codex" / "config.toml"
    config.parent.mkdir()
    original = b'# my settings\nmodel = "o3"\n\n[tui]\nnotifications = true\n'
    config.write_bytes(original)
    code, out, err = stet_hooks(stet, root, "install", "codex")
    assert code == 0, err
    assert "stet mcp install codex" in out
    parsed = tomllib.loads(config.read_text("utf-8"))
    assert parsed["notify"] == notify_program() == [*stet_command(), "hooks", "run", "codex-notify"]
    assert parsed["model"] == "o3" and parsed["tui"] == {"notifications": True}
    assert config.read_bytes().endswith(original)
    installed = config.read_bytes()
    assert stet_hooks(stet, root, "install", "codex")[0] == 0
    assert config.read_bytes() == installed
    status = json.loads(stet_hooks(stet, root, "status", "--json")[1])["codex"]
    assert status["installed"] and status["repository"] and status["path"] == str(config)
    assert stet_hooks(stet, root, "uninstall", "codex")[0] == 0
    assert config.read_bytes() == original
    assert not json.loads(stet_hooks(stet, root, "status", "--json")[1])["codex"]["repository"]


def test_codex_install_keeps_a_crlf_config_crlf(root: Path, stet: Stet, home: Path) -> None:
    config = home / ".codex" / "config.toml"
    config.parent.mkdir()
    original = b'model = "o3"\r\n\r\n[tui]\r\nnotifications = true\r\n'
    config.write_bytes(original)
    assert stet_hooks(stet, root, "install", "codex")[0] == 0
    installed = config.read_bytes()
    assert installed.count(b"\n") == installed.count(b"\r\n") and installed.endswith(original)
    assert stet_hooks(stet, root, "uninstall", "codex")[0] == 0
    assert config.read_bytes() == original


def test_codex_install_reads_past_a_byte_order_mark_and_keeps_it(
    root: Path, stet: Stet, home: Path
) -> None:
    config = home / ".codex" / "config.toml"
    config.parent.mkdir()
    original = b'\xef\xbb\xbfmodel = "o3"\n'
    config.write_bytes(original)
    code, _, err = stet_hooks(stet, root, "install", "codex")
    assert code == 0, err
    installed = config.read_bytes()
    assert installed.startswith(b"\xef\xbb\xbf# Added by") and installed.count(b"\xef\xbb\xbf") == 1
    assert tomllib.loads(installed.decode("utf-8-sig"))["notify"] == notify_program()
    status = json.loads(stet_hooks(stet, root, "status", "--json")[1])["codex"]
    assert status["installed"] and status["problem"] is None
    assert stet_hooks(stet, root, "uninstall", "codex")[0] == 0
    assert config.read_bytes() == original


def test_codex_config_stet_created_is_removed_again(root: Path, stet: Stet, home: Path) -> None:
    """With the folder install created for it; a folder that was there before stays, and so
    does one that holds other files now."""
    config = home / ".codex" / "config.toml"
    code, out, _ = stet_hooks(stet, root, "install", "codex", "--dry-run")
    assert code == 0 and "would set notify" in out and not config.exists()
    assert not config.parent.exists()
    assert stet_hooks(stet, root, "install", "codex")[0] == 0
    assert tomllib.loads(config.read_text("utf-8")) == {"notify": notify_program()}
    assert stet_hooks(stet, root, "uninstall", "codex")[0] == 0
    assert not config.parent.exists()
    assert stet_hooks(stet, root, "install", "codex")[0] == 0
    (config.parent / "auth.json").write_text("{}")
    assert stet_hooks(stet, root, "uninstall", "codex")[0] == 0
    assert not config.exists() and (config.parent / "auth.json").exists()
    (config.parent / "auth.json").unlink()
    assert stet_hooks(stet, root, "install", "codex")[0] == 0
    assert stet_hooks(stet, root, "uninstall", "codex")[0] == 0
    assert not config.exists() and config.parent.is_dir()


def test_status_says_what_it_found_in_files_it_cannot_read(
    root: Path, stet: Stet, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Status changes nothing: a file it cannot read is reported as what is wrong with it,
    without install's "nothing was changed"."""
    (root / ".claude").mkdir()
    (root / LOCAL_SETTINGS).write_text('{"hooks": 3}')
    (root / ".claude" / "settings.json").write_bytes(b"\xff\xfe")
    (home / ".codex").mkdir()
    (home / ".codex" / "config.toml").write_text("x = [")
    code, out, err = stet_hooks(stet, root, "status")
    assert code == 0, err
    assert out.count("unreadable: ") == 3 and "not valid TOML" in out and "not UTF-8" in out
    monkeypatch.setenv("HOME", "")
    status = json.loads(stet_hooks(stet, root, "status", "--json")[1])
    assert status["codex"]["problem"].startswith("HOME is empty")
    assert "nothing was changed" not in out + status["codex"]["problem"]


def test_codex_home_in_missing_folders_is_refused_by_both_installs(
    root: Path, stet: Stet, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """CODEX_HOME whose folder is missing too (mistyped, most likely: Codex refuses a
    CODEX_HOME that does not exist): install created every folder up to it, and uninstall
    took out only the innermost, leaving the others behind. Stet creates Codex's folder, not
    the folders above it: both installs refuse, creating nothing; with the folder above
    there, Codex's folder is created and removed again."""
    monkeypatch.delenv("XDG_STATE_HOME", raising=False)  # the MCP install's record: in home
    monkeypatch.setenv("CODEX_HOME", str(home / "a" / "b" / "codex"))
    for command in (("hooks", "install", "codex"), ("mcp", "install", "codex")):
        for dry_run in ((), ("--dry-run",)):
            code, out, err = stet(*command, *dry_run, "-C", str(root))
            assert (code, out) == (1, ""), command
            assert f"{home / 'a' / 'b'} does not exist" in err and "CODEX_HOME" in err
    assert not (home / "a").exists()
    assert stet("hooks", "uninstall", "codex", "-C", str(root))[0] == 0
    assert stet("mcp", "uninstall", "codex", "-C", str(root))[0] == 0
    (home / "a" / "b").mkdir(parents=True)
    for front in ("hooks", "mcp"):
        assert stet(front, "install", "codex", "-C", str(root))[0] == 0
    for front in ("hooks", "mcp"):
        assert stet(front, "uninstall", "codex", "-C", str(root))[0] == 0
    assert list((home / "a").iterdir()) == [home / "a" / "b"]
    assert list((home / "a" / "b").iterdir()) == []


def test_codex_with_an_empty_home_says_so_and_writes_nothing(
    root: Path, stet: Stet, home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """An empty HOME is no home folder (Python would read it as `/`, Codex reads it as
    unset): without CODEX_HOME, install and status say HOME is empty; with it, Codex's
    folder is CODEX_HOME's."""
    monkeypatch.setenv("HOME", "")
    code, out, err = stet_hooks(stet, root, "install", "codex", "--dry-run")
    assert (code, out) == (1, "")
    assert err.startswith(
        "stet: error: HOME is empty, and CODEX_HOME is not set: cannot find Codex's config.toml"
    )
    status = json.loads(stet_hooks(stet, root, "status", "--json")[1])
    assert status["codex"]["problem"].startswith("HOME is empty")
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    code, out, err = stet_hooks(stet, root, "install", "codex", "--dry-run")
    assert code == 0, err
    assert str(tmp_path / "codex" / "config.toml") in out


def test_codex_config_stet_created_then_moved_into_dotfiles_stays(
    root: Path, stet: Stet, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A config Stet created, moved into a dotfiles repository and linked back (the file, or
    Codex's folder), is the user's now: uninstall takes Stet's lines out and leaves it, empty,
    where the link points; the link stays a link."""
    dotfiles = home / "dotfiles"
    dotfiles.mkdir()
    config = home / ".codex" / "config.toml"
    assert stet_hooks(stet, root, "install", "codex")[0] == 0
    config.rename(dotfiles / "config.toml")
    config.symlink_to(dotfiles / "config.toml")
    code, out, err = stet_hooks(stet, root, "uninstall", "codex")
    assert code == 0, err
    assert "leave it empty" in out and "symbolic link" in out
    assert config.is_symlink() and (dotfiles / "config.toml").read_bytes() == b""
    # Codex's folder moved into the dotfiles repository and linked back.
    config.unlink()
    (dotfiles / "config.toml").unlink()
    assert stet_hooks(stet, root, "install", "codex")[0] == 0
    (home / ".codex").rename(dotfiles / "codex")
    (home / ".codex").symlink_to(dotfiles / "codex")
    code, out, err = stet_hooks(stet, root, "uninstall", "codex", "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["kept_created_file"] and not result["removed_file"]
    assert (dotfiles / "codex" / "config.toml").read_bytes() == b""


def test_codex_config_a_dotfiles_manager_links_is_written_where_it_points(
    root: Path, stet: Stet, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`~/.codex/config.toml` as a link into a dotfiles repository: install and uninstall
    write the file it points to, as `stet mcp install codex` does, and the link stays a link.
    A link to nothing is refused, naming the link, and nothing is created through it."""
    dotfiles = home / "dotfiles" / "codex"
    dotfiles.mkdir(parents=True)
    original = b'model = "o3"\n\n[tui]\nnotifications = true\n'
    (dotfiles / "config.toml").write_bytes(original)
    link = home / ".codex" / "config.toml"
    link.parent.mkdir()
    link.symlink_to(dotfiles / "config.toml")
    code, _, err = stet_hooks(stet, root, "install", "codex")
    assert code == 0, err
    assert (
        link.is_symlink() and tomllib.loads(link.read_text("utf-8"))["notify"] == notify_program()
    )
    status = json.loads(stet_hooks(stet, root, "status", "--json")[1])["codex"]
    assert status["installed"] and status["problem"] is None
    assert stet("mcp", "install", "codex", "-C", str(root))[0] == 0
    assert "mcp_servers" in tomllib.loads(link.read_text("utf-8"))
    assert stet("mcp", "uninstall", "codex", "-C", str(root))[0] == 0
    assert stet_hooks(stet, root, "uninstall", "codex")[0] == 0
    assert link.is_symlink() and (dotfiles / "config.toml").read_bytes() == original
    # CODEX_HOME itself a link to a folder of the dotfiles repository.
    (home / "codex-home").symlink_to(dotfiles)
    monkeypatch.setenv("CODEX_HOME", str(home / "codex-home"))
    assert stet_hooks(stet, root, "install", "codex")[0] == 0
    assert tomllib.loads((dotfiles / "config.toml").read_text("utf-8"))["notify"]
    assert stet_hooks(stet, root, "uninstall", "codex")[0] == 0
    assert (dotfiles / "config.toml").read_bytes() == original
    monkeypatch.delenv("CODEX_HOME")
    (dotfiles / "config.toml").unlink()
    for action in ("install", "uninstall"):
        code, _, err = stet_hooks(stet, root, action, "codex")
        assert code == 1 and f"{link} is a symbolic link to" in err and "does not exist" in err
        assert not (dotfiles / "config.toml").exists()


def test_codex_uninstall_leaves_a_notify_line_stet_did_not_write(
    root: Path, stet: Stet, home: Path
) -> None:
    """The same line without Stet's marker above it is a person's: in a profile, or quoted
    in a multi-line string. Uninstall (never installed, or twice) leaves it."""
    config = home / ".codex" / "config.toml"
    config.parent.mkdir()
    for original in (
        b'model = "o3"\n\n[profiles.ci]\nnotify = ["stet", "hooks", "run", "codex-notify"]\n',
        b'developer_instructions = """\nnotify = ["stet", "hooks", "run", "codex-notify"]\n"""\n',
    ):
        config.write_bytes(original)
        assert stet_hooks(stet, root, "uninstall", "codex")[0] == 0
        assert config.read_bytes() == original
        assert stet_hooks(stet, root, "install", "codex")[0] == 0
        for _ in range(2):
            assert stet_hooks(stet, root, "uninstall", "codex")[0] == 0
            assert config.read_bytes() == original


def test_codex_install_refuses_to_replace_another_notify(
    root: Path, stet: Stet, home: Path
) -> None:
    config = home / ".codex" / "config.toml"
    config.parent.mkdir()
    original = b'notify = ["python3", "/home/me/notify.py"]\n'
    config.write_bytes(original)
    code, out, err = stet_hooks(stet, root, "install", "codex")
    assert code == 1 and out == ""
    assert "Codex runs one notify program" in err and "--keep-notify" in err
    assert 'sets notify = ["python3", "/home/me/notify.py"], and' in err  # as TOML
    assert config.read_bytes() == original
    assert not (root / ".stet").exists()
    # Their program calls Stet itself: only this repository's consent is recorded.
    code, out, _ = stet_hooks(stet, root, "install", "codex", "--keep-notify")
    assert code == 0 and "left as it is" in out
    assert config.read_bytes() == original
    assert json.loads(stet_hooks(stet, root, "status", "--json")[1])["codex"]["repository"]
    config.write_bytes(b"notify = [\n")
    code, _, err = stet_hooks(stet, root, "install", "codex")
    assert code == 1 and "is not valid TOML" in err and config.read_bytes() == b"notify = [\n"


def test_codex_install_keep_notify_without_a_notify_sets_stets(
    root: Path, stet: Stet, home: Path
) -> None:
    """--keep-notify in a config without notify (or without a config) kept nothing, said
    "notify ... left as it is" and opted the repository in to imports no notify would ever
    call. With nothing to keep, Stet's notify is set as without the option."""
    config = home / ".codex" / "config.toml"
    code, out, err = stet_hooks(stet, root, "install", "codex", "--keep-notify")
    assert code == 0, err
    assert "left as it is" not in out and "set notify" in out
    assert tomllib.loads(config.read_text("utf-8"))["notify"] == notify_program()
    document = json.loads(stet_hooks(stet, root, "status", "--json")[1])["codex"]
    assert document["installed"] and document["repository"]
    assert stet_hooks(stet, root, "uninstall", "codex")[0] == 0
    assert not config.exists()
    config.parent.mkdir(exist_ok=True)
    config.write_text('model = "o3"\n', "utf-8")
    result = json.loads(stet_hooks(stet, root, "install", "codex", "--keep-notify", "--json")[1])
    assert result["changed"] and not result["kept_notify"]
    assert tomllib.loads(config.read_text("utf-8"))["notify"] == notify_program()


def test_codex_notify_imports_the_finished_turn(
    root: Path, stet: Stet, home: Path, elsewhere: Path
) -> None:
    codex_rollout(home, root)
    notification = {
        "type": "agent-turn-complete",
        "thread-id": THREAD,
        "turn-id": "1",
        "cwd": str(root / "src"),
        "input-messages": ["List the files"],
        "last-assistant-message": "README.md and src/.",
    }
    argument = json.dumps(notification)
    # A repository that did not consent gets nothing.
    agent_note(stet, root, "Set up")
    assert hook("codex-notify", "", elsewhere, argument).returncode == 0
    assert log_lines(root) == []  # the hook starts no worker there
    assert stet_hooks(stet, root, "install", "codex")[0] == 0
    done = hook("codex-notify", "", elsewhere, argument)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    (line,) = wait_for_log(root, "codex-notify", THREAD, "imported")
    assert "codex session" in line
    assert "List the files" in events_text(root)
    # Another thread, whose rollout is nowhere: logged.
    other = json.dumps(notification | {"thread-id": "0199a000-0000-7000-8000-000000000000"})
    assert hook("codex-notify", "", elsewhere, other).returncode == 0
    wait_for_log(root, "codex-notify", "no Codex rollout of thread")
    assert len([line for line in log_lines(root) if "imported" in line]) == 1
    # No notification at all: nothing to import, and the log says why.
    assert hook("codex-notify", "", root).returncode == 0
    assert "codex-notify: error: codex-notify got no notification" in log_lines(root)[-1]


def test_a_consent_committed_with_a_cloned_repository_is_none(
    tmp_path: Path, stet: Stet, home: Path, elsewhere: Path
) -> None:
    """A repository can commit `.stet/cache/hooks/codex.json`: once Stet's notify is set up
    for another repository, Codex turns in the clone were imported into it, which never
    consented. A record git tracks is no consent, and installing says how to make one."""
    consent = json.dumps({"version": 1, "imports": True})
    root = hostile_clone(
        tmp_path, {".stet/.gitignore": "", ".stet/cache/hooks/codex.json": consent}
    )
    codex_rollout(home, root)
    notification = {"type": "agent-turn-complete", "thread-id": THREAD, "cwd": str(root)}
    assert hook("codex-notify", "", elsewhere, json.dumps(notification)).returncode == 0
    assert log_lines(root) == []  # the hook starts no worker there
    assert not json.loads(stet_hooks(stet, root, "status", "--json")[1])["codex"]["repository"]
    code, _, err = stet_hooks(stet, root, "install", "codex")
    assert code == 1 and "is tracked by git" in err
    assert not (home / ".codex" / "config.toml").exists()


def test_a_consent_that_cannot_be_written_leaves_codex_config_as_it_was(
    tmp_path: Path, stet: Stet, home: Path
) -> None:
    """A repository can commit `.stet/cache/hooks` as a link: the consent cannot be written
    there, and the install that says "nothing was changed" changes nothing, Codex's config
    (every project's) included."""
    outside = tmp_path / "outside"
    outside.mkdir()
    root = hostile_clone(
        tmp_path, {".stet/.gitignore": ""}, links={".stet/cache/hooks": str(outside)}
    )
    code, _, err = stet_hooks(stet, root, "install", "codex")
    assert code == 1 and "is a symbolic link" in err and "nothing was changed" in err
    assert not (home / ".codex" / "config.toml").exists()
    assert list(outside.iterdir()) == []


def test_a_codex_config_that_cannot_be_written_records_no_consent(
    root: Path, stet: Stet, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """CODEX_HOME in a folder that is a link to nothing: the config cannot be written, and
    the repository is not left opted in to imports either."""
    (home / "file").symlink_to(home / "gone")
    monkeypatch.setenv("CODEX_HOME", str(home / "file" / "codex"))
    code, _, err = stet_hooks(stet, root, "install", "codex")
    assert code == 1
    assert err.startswith(f"stet: error: cannot write {home / 'file' / 'codex' / 'config.toml'}: ")
    assert "nothing was changed" in err
    assert not (root / files.HOOKS_DIR / "codex.json").exists()
    assert not json.loads(stet_hooks(stet, root, "status", "--json")[1])["codex"]["repository"]


def test_an_install_record_committed_with_a_cloned_repository_is_none(
    tmp_path: Path, stet: Stet
) -> None:
    """A repository can commit `.stet/cache/hooks/claude-code.json`, the record uninstall
    undoes an install by: it named as "added" the bytes of git's own `info/exclude`, which
    uninstall then deleted (a file outside the work tree), and install kept the clone's record
    and wrote into the tracked file. A record git tracks is none: install refuses until it is
    untracked, uninstall neither reads nor removes it."""
    template = pygit2.init_repository(str(tmp_path / "template"))
    default_exclude = (Path(template.path) / "info" / "exclude").read_text("utf-8")
    assert default_exclude  # what every clone's info/exclude holds at first
    record = {
        "version": 1,
        "path": ".claude/settings.local.json",
        "before": None,
        "created_folder": True,
        "excluded": {"path": "/elsewhere/exclude", "created": True, "added": default_exclude},
    }
    relative = ".stet/cache/hooks/claude-code.json"
    root = hostile_clone(
        tmp_path / "hostile", {".stet/.gitignore": "cache/\n", relative: json.dumps(record)}
    )
    exclude = Path(pygit2.Repository(str(root)).path) / "info" / "exclude"
    assert exclude.read_text("utf-8") == default_exclude
    planted = (root / relative).read_bytes()

    code, _, err = stet_hooks(stet, root, "uninstall", "claude-code")
    assert code == 0, err
    assert exclude.read_text("utf-8") == default_exclude
    assert (root / relative).read_bytes() == planted

    code, out, err = stet_hooks(stet, root, "install", "claude-code")
    assert code == 1 and out == "" and f"{relative} is tracked by git" in err
    assert f"git rm --cached {relative}" in err and "nothing was changed" in err
    assert not (root / LOCAL_SETTINGS).exists() and not (root / ".claude").exists()
    assert exclude.read_text("utf-8") == default_exclude
    assert (root / relative).read_bytes() == planted

    # Settings with Stet's hooks (added by hand): uninstall takes them out as without a record.
    write_settings(root, {"model": "opus", "hooks": {"Stop": [{"hooks": [
        {"type": "command", "command": commands()["Stop"]}]}]}}, indent=2, end="\n")  # fmt: skip
    code, _, err = stet_hooks(stet, root, "uninstall", "claude-code")
    assert code == 0, err
    assert json.loads((root / LOCAL_SETTINGS).read_text("utf-8")) == {"model": "opus"}
    assert exclude.read_text("utf-8") == default_exclude
    assert (root / relative).read_bytes() == planted


# -- status ------------------------------------------------------------------------------------------


def test_status_says_what_is_installed_where(root: Path, stet: Stet, home: Path) -> None:
    code, out, _ = stet_hooks(stet, root, "status")
    assert code == 0
    assert "Claude Code  .claude/settings.local.json: no file" in out
    assert "Codex        ~/.codex/config.toml: no file; this repository has not opted in" in out
    stet_hooks(stet, root, "install", "claude-code")
    stet_hooks(stet, root, "install", "codex")
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").write_text(
        json.dumps(
            {
                "hooks": {
                    "Stop": [{"hooks": [{"type": "command", "command": "stet hooks run stop"}]}]
                }
            }
        ),
        "utf-8",
    )
    code, out, _ = stet_hooks(stet, root, "status")
    assert "Claude Code  .claude/settings.local.json: SessionStart, SessionEnd, Stop" in out
    assert "Claude Code  ~/.claude/settings.json: Stop" in out
    assert (
        "Codex        ~/.codex/config.toml: notify runs Stet; this repository has opted in" in out
    )
    document = json.loads(stet_hooks(stet, root, "status", "--json")[1])
    assert document["version"] == 1 and document["repository"] == str(root)
    claude = document["claude_code"]
    assert claude["installed"] and claude["settings"][0]["events"] == list(HOOK_EVENTS)
    assert [entry["scope"] for entry in claude["settings"]] == ["local", "project", "user"]
    assert document["codex"]["installed"] and document["codex"]["notify"] == notify_program()
    assert document["log"] == str(root / files.LOG)


def test_install_warns_when_other_settings_run_stets_hooks_too(
    root: Path, stet: Stet, home: Path
) -> None:
    """Claude Code runs the hooks of every settings file: Stet's in the user's settings as
    well as in the local ones put the brief into a session twice. Install said nothing of
    it; it now names the other file and its events."""
    code, out, _ = stet_hooks(stet, root, "install", "claude-code", "--dry-run")
    assert code == 0 and "warning" not in out
    (home / ".claude").mkdir()
    hook = {"type": "command", "command": "stet hooks run session-start"}
    (home / ".claude" / "settings.json").write_text(
        json.dumps({"hooks": {"SessionStart": [{"hooks": [hook]}]}})
    )
    code, out, _ = stet_hooks(stet, root, "install", "claude-code")
    assert code == 0
    assert (
        "warning: ~/.claude/settings.json runs Stet's SessionStart too, and Claude Code runs "
        "the hooks of each settings file: take Stet's out of one of them, or the brief may go "
        "into a session twice"
    ) in out
    document = json.loads(stet_hooks(stet, root, "install", "claude-code", "--json")[1])
    assert document["elsewhere"] == [
        {"path": str(home / ".claude" / "settings.json"), "events": ["SessionStart"]}
    ]


def test_install_warns_when_settings_disable_all_hooks(root: Path, stet: Stet, home: Path) -> None:
    """`disableAllHooks: true` in any settings file Claude Code reads for the project makes
    it run no hook, Stet's included: install (text and --json) and status say which file. The
    local settings override the project's, and those the user's."""
    user = home / ".claude" / "settings.json"
    user.parent.mkdir()
    user.write_text('{"disableAllHooks": true}\n', "utf-8")
    code, out, _ = stet_hooks(stet, root, "install", "claude-code")
    assert code == 0
    assert (
        "warning: ~/.claude/settings.json sets disableAllHooks to true: Claude Code runs no "
        "hooks, Stet's included, until it is false (or taken out)"
    ) in out
    document = json.loads(stet_hooks(stet, root, "install", "claude-code", "--json")[1])
    assert document["hooks_disabled_by"] == str(user)
    status = json.loads(stet_hooks(stet, root, "status", "--json")[1])["claude_code"]
    assert status["hooks_disabled_by"] == str(user)
    assert "sets disableAllHooks to true" in stet_hooks(stet, root, "status")[1]
    project = root / ".claude" / "settings.json"
    project.write_text('{"disableAllHooks": false}\n', "utf-8")
    document = json.loads(stet_hooks(stet, root, "install", "claude-code", "--json")[1])
    assert document["hooks_disabled_by"] is None
    assert "disableAllHooks" not in stet_hooks(stet, root, "install", "claude-code")[1]
    local = json.loads((root / LOCAL_SETTINGS).read_text("utf-8"))
    write_settings(root, {**local, "disableAllHooks": True})
    document = json.loads(stet_hooks(stet, root, "install", "claude-code", "--json")[1])
    assert document["hooks_disabled_by"] == str(root / LOCAL_SETTINGS)
    assert (
        "warning: .claude/settings.local.json sets disableAllHooks"
        in (stet_hooks(stet, root, "install", "claude-code", "--dry-run")[1])
    )


def test_install_and_status_warn_when_managed_settings_stop_stets_hooks(
    root: Path, stet: Stet, home: Path, tmp_path: Path
) -> None:
    """Claude Code's managed settings (`/etc/claude-code/managed-settings.json` on Linux, here
    a folder of the test's own) override every other settings file: `disableAllHooks: true`
    there runs no hook, `allowManagedHooksOnly: true` only the managed settings' own; either
    keeps Stet's from running, and install and status (text and --json) say so, naming the
    file. A drop-in of `managed-settings.d/` merged after the base file wins over it."""
    managed = tmp_path / "managed"
    managed.mkdir()
    base = managed / "managed-settings.json"
    base.write_text('{"allowManagedHooksOnly": true, "hooks": {}}\n', "utf-8")
    code, out, _ = stet_hooks(stet, root, "install", "claude-code")
    assert code == 0
    assert (
        f"warning: {base}, Claude Code's managed settings, sets allowManagedHooksOnly to true: "
        "Claude Code runs only the hooks of the managed settings, not Stet's"
    ) in out
    document = json.loads(stet_hooks(stet, root, "install", "claude-code", "--json")[1])
    assert document["hooks_disabled_by"] == str(base)
    assert document["hooks_disabled_setting"] == "allowManagedHooksOnly"
    code, out, _ = stet_hooks(stet, root, "status")
    assert code == 0 and "sets allowManagedHooksOnly to true" in out
    drop_ins = managed / "managed-settings.d"
    drop_ins.mkdir()
    (drop_ins / "20-hooks.json").write_text('{"disableAllHooks": true}\n', "utf-8")
    (drop_ins / "10-hooks.json").write_text('{"allowManagedHooksOnly": false}\n', "utf-8")
    (drop_ins / ".hidden.json").write_text('{"allowManagedHooksOnly": true}\n', "utf-8")
    status = json.loads(stet_hooks(stet, root, "status", "--json")[1])["claude_code"]
    assert status["hooks_disabled_by"] == str(drop_ins / "20-hooks.json")
    assert status["hooks_disabled_setting"] == "disableAllHooks"
    assert (
        "Claude Code's managed settings, sets disableAllHooks to true: Claude Code runs no "
        "hooks, Stet's included"
    ) in stet_hooks(stet, root, "status")[1]
    (drop_ins / "20-hooks.json").write_text('{"disableAllHooks": false}\n', "utf-8")
    status = json.loads(stet_hooks(stet, root, "status", "--json")[1])["claude_code"]
    assert status["hooks_disabled_by"] is None and status["hooks_disabled_setting"] is None
    assert "warning" not in stet_hooks(stet, root, "install", "claude-code")[1]


def test_status_reads_the_user_settings_where_claude_code_does(
    root: Path, stet: Stet, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "claude-config"
    folder.mkdir()
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(folder))
    hook = {"type": "command", "command": "stet hooks run session-start"}
    (folder / "settings.json").write_text(
        json.dumps({"hooks": {"SessionStart": [{"hooks": [hook]}]}})
    )
    document = json.loads(stet_hooks(stet, root, "status", "--json")[1])
    user = document["claude_code"]["settings"][2]
    assert (user["path"], user["events"]) == (str(folder / "settings.json"), ["SessionStart"])


# -- the repository of a hook, without libgit2 ----------------------------------------------------


def test_the_files_give_the_target_libgit2_gives(tmp_path: Path, root: Path) -> None:
    repo = pygit2.Repository(str(root))
    repo.branches.local.create("feature/ü-x", repo.head.peel(pygit2.Commit))
    repo.checkout("refs/heads/feature/ü-x")
    unborn = Path(make_repo(tmp_path / "unborn", branch="trunk").workdir)
    worktree_path = tmp_path / "linked"
    branch = repo.branches.local.create("side", repo.head.peel(pygit2.Commit))
    repo.add_worktree("linked", str(worktree_path), branch)
    for folder in (root, root / "src", unborn, worktree_path):
        fast = branch_target(folder)
        assert fast is not None, folder
        assert fast == resolve_target(folder), folder
    detached = Path(make_repo(tmp_path / "detached", files={"a": "a\n"}).workdir)
    other = pygit2.Repository(str(detached))
    other.set_head(other.head.target)
    assert branch_target(detached) is None
    assert find_target(detached) == resolve_target(detached)
    assert find_target(detached).kind == "detached"


def test_a_hook_returns_when_its_input_is_whole_even_if_the_stream_stays_open(
    root: Path, stet: Stet, elsewhere: Path
) -> None:
    agent_note(stet, root, "Use the session helper")
    env = {k: v for k, v in os.environ.items() if k not in HARNESS_VARIABLES}
    # The hook's limit on waiting for its input (INPUT_SECONDS, 5 s) is raised past the
    # test's wait, so the hook returns only for having read a whole object, however long a
    # loaded machine takes to start it.
    hook_waiting_long = (
        "from stet_lsp.hooks import run\n"
        "run.INPUT_SECONDS = 600.0\n"
        "from stet_lsp.cli import main\n"
        "raise SystemExit(main(['hooks', 'run', 'session-start']))\n"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", hook_waiting_long],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        cwd=elsewhere,
        env=env,
        text=True,
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(json.dumps({"cwd": str(root)}))
    process.stdin.flush()  # and not closed, as a harness tearing down might leave it
    try:
        assert process.wait(timeout=30) == 0
        assert "Use the session helper" in process.stdout.read()
    finally:
        process.stdin.close()
        process.kill()
        process.stdout.close()


def test_null_hooks_are_empty_and_values_json_cannot_write_back_are_refused(
    root: Path, stet: Stet
) -> None:
    (root / ".claude").mkdir()
    for data in (b'{"hooks": null}\n', b'{"hooks": {"Stop": null}}\n'):
        (root / LOCAL_SETTINGS).write_bytes(data)
        code, _, err = stet_hooks(stet, root, "install", "claude-code")
        assert code == 0, err
        installed = json.loads((root / LOCAL_SETTINGS).read_text("utf-8"))
        assert sorted(installed["hooks"]) == sorted(HOOK_EVENTS)
        assert stet_hooks(stet, root, "uninstall", "claude-code")[0] == 0
    # Read as infinity, or holding a lone surrogate: written back, the file would not be JSON
    # Claude Code reads.
    for data in (b'{"x": 1e400}\n', b'{"x": "\\ud83d"}\n'):
        (root / LOCAL_SETTINGS).write_bytes(data)
        code, out, err = stet_hooks(stet, root, "install", "claude-code")
        assert code == 1 and out == "" and "nothing was changed" in err, (data, err)
        assert "Traceback" not in err
        assert (root / LOCAL_SETTINGS).read_bytes() == data


def test_uninstall_keeps_the_exclude_line_other_work_trees_need(
    repo: pygit2.Repository, root: Path, stet: Stet, tmp_path: Path
) -> None:
    """The `info/exclude` line is shared by the repository's work trees, and a copy of the
    repository has a file of its own: uninstalling takes the line out only of this
    repository's file, and only when no other work tree has the settings file. The linked
    work tree's install found the line there and recorded it too: the last work tree to
    uninstall, whichever it is, takes it out."""
    commit_files(repo, {"README.md": "hi\n"})
    assert stet_hooks(stet, root, "install", "claude-code")[0] == 0
    linked = tmp_path / "linked"
    repo.add_worktree("linked", str(linked))
    assert stet_hooks(stet, linked, "install", "claude-code")[0] == 0
    assert stet_hooks(stet, root, "uninstall", "claude-code")[0] == 0
    assert pygit2.Repository(str(linked)).path_is_ignored(LOCAL_SETTINGS.as_posix())
    assert stet_hooks(stet, linked, "uninstall", "claude-code")[0] == 0
    assert not (linked / LOCAL_SETTINGS).exists()
    exclude = root / ".git" / "info" / "exclude"
    assert "/.claude/settings.local.json" not in exclude.read_text()

    assert stet_hooks(stet, root, "install", "claude-code")[0] == 0
    copy = tmp_path / "copy"
    shutil.copytree(root, copy, symlinks=True)
    assert stet_hooks(stet, copy, "uninstall", "claude-code")[0] == 0
    assert pygit2.Repository(str(root)).path_is_ignored(LOCAL_SETTINGS.as_posix())
    assert not pygit2.Repository(str(copy)).path_is_ignored(LOCAL_SETTINGS.as_posix())


def test_uninstall_keeps_the_exclude_line_while_another_work_tree_has_the_file(
    repo: pygit2.Repository, root: Path, stet: Stet, tmp_path: Path
) -> None:
    """Another work tree's local settings without Stet's hooks still need the line (git
    would show the file, and whatever it holds)."""
    commit_files(repo, {"README.md": "hi\n"})
    linked = tmp_path / "linked"
    repo.add_worktree("linked", str(linked))
    (linked / LOCAL_SETTINGS).parent.mkdir()
    (linked / LOCAL_SETTINGS).write_text('{"env": {"API_TOKEN": "secret"}}\n')
    assert stet_hooks(stet, root, "install", "claude-code")[0] == 0
    assert stet_hooks(stet, root, "uninstall", "claude-code")[0] == 0
    assert not (root / LOCAL_SETTINGS).exists()
    assert pygit2.Repository(str(linked)).path_is_ignored(LOCAL_SETTINGS.as_posix())


@pytest.mark.parametrize("damage", ["nested", "large", "before", "excluded"])
def test_a_malformed_install_record_is_no_record(
    repo: pygit2.Repository, root: Path, stet: Stet, damage: str
) -> None:
    """A record edited by hand (nested too deeply to parse, over 1 MiB, a field of another
    type) is none: uninstall takes out only Stet's handlers."""
    settings = root / LOCAL_SETTINGS
    settings.parent.mkdir()
    settings.write_text('{"env": {"A": "1"}}\n')
    assert stet_hooks(stet, root, "install", "claude-code")[0] == 0
    path = root / files.HOOKS_DIR / "claude-code.json"
    record = json.loads(path.read_text())
    if damage == "nested":
        path.write_text("[" * 100_000 + "]" * 100_000)
    elif damage == "large":
        path.write_text(json.dumps(record | {"padding": "x" * (1024 * 1024)}))
    else:
        path.write_text(json.dumps(record | {damage: 5}))
    assert files.read_record(root, "claude-code.json") is None or damage in ("before", "excluded")
    code, _, err = stet_hooks(stet, root, "uninstall", "claude-code")
    assert code == 0, err
    assert json.loads(settings.read_text()) == {"env": {"A": "1"}}
    assert pygit2.Repository(str(root)).path_is_ignored(LOCAL_SETTINGS.as_posix())


def test_uninstall_after_the_settings_file_went_takes_the_exclude_line_out(
    repo: pygit2.Repository, root: Path, stet: Stet
) -> None:
    exclude = root / ".git" / "info" / "exclude"
    exclude.parent.mkdir(exist_ok=True)
    exclude.write_text("# mine\n")
    assert stet_hooks(stet, root, "install", "claude-code")[0] == 0
    assert "/.claude/settings.local.json" in exclude.read_text()
    (root / LOCAL_SETTINGS).unlink()  # by hand
    for _ in range(2):
        assert stet_hooks(stet, root, "uninstall", "claude-code")[0] == 0
    assert exclude.read_text() == "# mine\n"


def test_an_uninstall_whose_exclude_line_stayed_takes_it_out_when_run_again(
    repo: pygit2.Repository, root: Path, stet: Stet
) -> None:
    """An uninstall that took the hooks out but could not write `info/exclude` reported
    success and dropped the record, the only thing that knew the line was Stet's: the line
    stayed for good. It now fails, keeps the record, and the next uninstall takes the line
    out, also when the settings file is kept."""
    exclude = root / ".git" / "info" / "exclude"
    exclude.parent.mkdir(exist_ok=True)
    exclude.write_text("# mine\n")
    settings = root / LOCAL_SETTINGS
    settings.parent.mkdir()
    settings.write_text('{"env": {"A": "1"}}\n')
    assert stet_hooks(stet, root, "install", "claude-code")[0] == 0
    in_the_way = exclude.parent / LOCK_NAME
    in_the_way.mkdir()  # no lock file can be opened there: the exclude write fails
    code, _, err = stet_hooks(stet, root, "uninstall", "claude-code")
    assert code != 0 and LOCK_NAME in err
    assert json.loads(settings.read_text()) == {"env": {"A": "1"}}
    in_the_way.rmdir()
    code, _, err = stet_hooks(stet, root, "uninstall", "claude-code")
    assert code == 0, err
    assert exclude.read_text() == "# mine\n"
    assert set(repo.status()) >= {LOCAL_SETTINGS.as_posix()}
