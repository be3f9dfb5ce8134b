"""`stet mcp`: the real server driven by the MCP SDK's own client over stdio, in real
repositories; and `stet mcp install`: each client's configuration file, merged in a temporary
home and repository.

One server serves a whole module's worth of calls (started once, through an anyio blocking
portal), so the tests stay fast; each test adds its own entries and looks only at those."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tomllib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pygit2
import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError
from repos import INJECTED, clone_committing_sheet, commit_files, make_repo

from stet_lsp.core import exclusions, operations
from stet_lsp.core.launch import stet_command
from stet_lsp.core.sheet import StyleSheet
from stet_lsp.core.targets import resolve_target
from stet_lsp.mcp.install import WORKSPACE, Environment, plan
from stet_lsp.mcp.tools import MAX_TEXT, TOOLS, check_arguments
from stet_lsp.trajectory.feedback import read_verdicts
from stet_lsp.trajectory.importing import import_transcript
from stet_lsp.trajectory.store import working_folder

PROJECT = Path(__file__).resolve().parents[1]
APP = "".join(f"line {number}\n" for number in range(1, 21))
SESSION = "cccccccc-1111-4222-8333-444455556666"

Stet = Callable[..., tuple[int, str, str]]


# -- a server, and a client that calls it from synchronous tests ---------------------------


class Client:
    def __init__(self, portal: BlockingPortal, session: ClientSession, started: Any) -> None:
        self.portal = portal
        self.session = session
        self.started = started
        """The server's answer to `initialize`."""

    def call(self, name: str, arguments: dict[str, Any] | None = None) -> Any:
        return self.portal.call(self.session.call_tool, name, arguments)

    def ok(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        result = self.call(name, arguments)
        assert not result.is_error, result.content[0].text
        document = json.loads(result.content[0].text)
        assert result.structured_content == document  # the same document twice
        return dict(document)

    def error(self, name: str, arguments: Any = None) -> str:
        result = self.call(name, arguments)
        assert result.is_error, f"{name}({arguments!r}) did not fail: {result.content}"
        text: str = result.content[0].text
        assert text.startswith("stet: error: ")
        # The server keeps serving: the next request is answered.
        assert self.portal.call(self.session.list_tools).tools
        return text

    def read(self, uri: str) -> Any:
        return self.portal.call(self.session.read_resource, uri)


@contextmanager
def serving(root: Path, *args: str) -> Iterator[Client]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "stet_lsp", "mcp", *args],
        cwd=str(root),
        env={"PYTHONPATH": str(PROJECT)},
    )
    with (
        start_blocking_portal() as portal,
        portal.wrap_async_context_manager(stdio_client(params)) as (read, write),
        portal.wrap_async_context_manager(ClientSession(read, write)) as session,
    ):
        yield Client(portal, session, portal.call(session.initialize))


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("mcp")
    repo = make_repo(folder / "repo", files={"src/app.py": APP, "README.md": "hi\n"})
    (folder / "outside.py").write_text("secret = 1\n")
    return Path(repo.workdir).resolve()


@pytest.fixture(scope="module")
def server(workspace: Path) -> Iterator[Client]:
    with serving(workspace) as client:
        yield client


@pytest.fixture(scope="module")
def trajectory(workspace: Path) -> str:
    """The id of the workspace's working trajectory, imported once (again: nothing changes)."""
    target = resolve_target(workspace)
    import_transcript(target, transcript(workspace, workspace.parent / "session.jsonl"))
    return working_folder(target).id


def sheet_of(root: Path, target: str | None = None) -> StyleSheet:
    return StyleSheet(resolve_target(root, target))


# -- what the server offers ---------------------------------------------------------------------


def test_tools_are_listed_with_their_input_schemas(server: Client) -> None:
    listed = {tool.name: tool for tool in server.portal.call(server.session.list_tools).tools}
    assert set(listed) == {
        "add_note",
        "list_notes",
        "show_note",
        "edit_note",
        "get_brief",
        "list_steps",
        "mark_step",
    }
    add = listed["add_note"].input_schema
    assert add["required"] == ["text"]
    assert add["additionalProperties"] is False
    assert add["properties"]["kind"]["enum"] == ["convention", "ruled-out", "clarification", "note"]
    assert add["properties"]["line"] == {
        "type": "integer",
        "minimum": 1,
        "maximum": 2**31 - 1,
        "description": "The 1-based line of file the note is about.",
    }
    assert listed["edit_note"].input_schema["required"] == ["id", "text"]
    assert listed["get_brief"].input_schema["properties"]["budget"]["default"] == 800
    mark = listed["mark_step"].input_schema
    assert mark["required"] == ["step", "verdict"]
    assert mark["properties"]["verdict"]["enum"] == ["wrong", "clever", "note"]
    assert "worth repeating" in mark["properties"]["verdict"]["description"]
    assert "list_steps" in listed["mark_step"].description
    assert "stet trajectory" not in listed["mark_step"].description  # no shell needed
    # A verdict on the working trajectory is committed by the capstone; the agent is told so.
    assert "committed with it by the capstone" in listed["mark_step"].description
    assert listed["list_steps"].annotations.read_only_hint is True
    # Descriptions say when to use each tool.
    assert "convention" in listed["add_note"].description
    assert "ruled out" in listed["add_note"].description.replace("rule out", "ruled out")
    assert "clarifi" in listed["add_note"].description
    assert "start of work" in listed["get_brief"].description
    assert listed["list_notes"].annotations.read_only_hint is True
    assert listed["add_note"].annotations.read_only_hint is False


def test_the_server_says_how_to_use_it(server: Client) -> None:
    assert server.started.server_info.name == "stet"
    instructions = server.started.instructions or ""
    assert "get_brief" in instructions and "add_note" in instructions
    assert "stet://brief" in instructions


# -- happy paths ----------------------------------------------------------------------------------


def test_an_agent_adds_lists_shows_and_edits_its_notes(server: Client, workspace: Path) -> None:
    added = server.ok(
        "add_note", {"text": "Errors are wrapped with wrap_error().", "kind": "convention"}
    )
    assert added["version"] == 1 and added["target"]["name"] == "main"
    entry = added["entry"]
    assert (entry["kind"], entry["author"], entry["status"]) == ("convention", "agent", "open")

    # It landed in the style sheet, by the agent.
    stored = sheet_of(workspace).get(entry["id"])
    assert (stored.author, stored.text) == ("agent", "Errors are wrapped with wrap_error().")

    anchored = server.ok(
        "add_note",
        {"text": "line 7 is the retry loop", "kind": "ruled-out", "file": "src/app.py", "line": 7},
    )["entry"]
    assert anchored["anchor"] == {"path": "src/app.py", "line": 7, "text": "line 7"}
    assert anchored["placement"] == {"line": 7, "lost": False}
    absolute = server.ok(
        "add_note", {"text": "absolute paths work", "file": str(workspace / "README.md"), "line": 1}
    )["entry"]
    assert absolute["anchor"]["path"] == "README.md"

    listed = server.ok("list_notes", {"author": "agent", "kind": "ruled-out"})
    assert anchored["id"] in [e["id"] for e in listed["entries"]]
    assert all(e["kind"] == "ruled-out" for e in listed["entries"])
    assert listed["sheet"] == str(sheet_of(workspace).path)
    in_file = server.ok("list_notes", {"file": "src/app.py"})["entries"]
    assert [e["id"] for e in in_file] == [anchored["id"]]
    # The same document `stet note list --json` prints.
    assert listed == operations.list_entries(sheet_of(workspace), kind="ruled-out", author="agent")

    shown = server.ok("show_note", {"id": entry["id"]})
    assert shown == operations.show_entry(sheet_of(workspace), entry["id"])

    edited = server.ok("edit_note", {"id": entry["id"], "text": "Errors go through wrap_error()."})
    assert edited["entry"]["text"] == "Errors go through wrap_error()."
    assert sheet_of(workspace).get(entry["id"]).text == "Errors go through wrap_error()."


def test_list_notes_gives_open_entries_a_page_at_a_time(tmp_path: Path) -> None:
    """Called before every add_note, it stays small: open entries only unless asked, at most
    20 unless asked, and compact JSON text."""
    root = Path(make_repo(tmp_path / "repo", files={"README.md": "hi\n"}).workdir).resolve()
    sheet = sheet_of(root)
    ids = [
        operations.add_entry(sheet, f"Fact number {n}.", author="agent")["entry"]["id"]
        for n in range(45)
    ]
    operations.discard_entry(sheet, ids[0])
    with serving(root) as client:
        result = client.call("list_notes")
        assert "\n" not in result.content[0].text  # compact, not indented
        first = client.ok("list_notes")
        assert [e["id"] for e in first["entries"]] == ids[1:21]
        assert (first["total"], first["more"]) == (44, 24)
        assert first["next"] == "24 more: call list_notes with the same arguments and offset 20"
        rest = client.ok("list_notes", {"offset": 20, "limit": 200})
        assert [e["id"] for e in rest["entries"]] == ids[21:]
        assert rest["more"] == 0 and "next" not in rest
        discarded = client.ok("list_notes", {"status": "discarded"})
        assert [e["id"] for e in discarded["entries"]] == [ids[0]]
        every = client.ok("list_notes", {"status": "any", "limit": 200})
        assert [e["id"] for e in every["entries"]] == ids and every["total"] == 45


def test_the_brief_as_a_tool_and_as_a_resource(server: Client, workspace: Path) -> None:
    server.ok("add_note", {"text": "Use the session helper for HTTP.", "kind": "clarification"})
    brief = server.ok("get_brief", {})
    assert brief == operations.brief(sheet_of(workspace))
    assert brief["text"].startswith("## Style sheet")
    assert "Use the session helper for HTTP." in brief["text"]
    short = server.ok("get_brief", {"budget": 40})
    assert short == operations.brief(sheet_of(workspace), 40) and short["left_out"] >= 1

    resources = server.portal.call(server.session.list_resources).resources
    assert [(r.uri, r.mime_type) for r in resources] == [("stet://brief", "text/markdown")]
    contents = server.read("stet://brief").contents
    assert contents[0].text == operations.brief(sheet_of(workspace))["text"]
    with pytest.raises(MCPError, match="no resource stet://sheet"):
        server.read("stet://sheet")
    assert server.read("stet://brief").contents  # still serving


def test_a_sheet_git_tracks_is_not_briefed(tmp_path: Path) -> None:
    root = clone_committing_sheet(tmp_path)
    with serving(root) as client:
        message = client.error("get_brief", {})
        assert "is not briefed: git's index holds .stet/cache/sheets/" in message
        assert "git rm --cached" in message and INJECTED not in message
        with pytest.raises(MCPError, match="is not briefed") as raised:
            client.read("stet://brief")
        assert INJECTED not in str(raised.value)
        # Listing still works.
        assert [e["text"] for e in client.ok("list_notes", {})["entries"]] == [INJECTED]
        subprocess.run(["git", "rm", "-q", "--cached", "-r", ".stet"], cwd=root, check=True)
        client.ok("add_note", {"text": "An agent's own note."})
        assert "An agent's own note." in client.ok("get_brief", {})["text"]


def test_a_sheet_git_tracks_is_not_written(tmp_path: Path) -> None:
    """An agent's note, or its edit of the agent entry the repository committed, would be
    committed with the sheet: both are tool errors naming the file, and nothing changes."""
    root = clone_committing_sheet(tmp_path)
    sheet = sheet_of(root)
    relative = sheet.path.relative_to(root).as_posix()
    before = sheet.path.read_bytes()
    with serving(root) as client:
        for name, arguments in (
            ("add_note", {"text": "An agent's own note."}),
            ("add_note", {"text": "Anchored.", "file": "README.md", "line": 1}),
            ("edit_note", {"id": "inject", "text": "Softened."}),
        ):
            message = client.error(name, arguments)
            assert f"is not written: git's index holds {relative}" in message
            assert f"git rm --cached {relative}" in message
        assert client.ok("show_note", {"id": "inject"})["entry"]["text"] == INJECTED
    assert sheet.path.read_bytes() == before
    assert not (root / ".stet" / ".gitignore").exists()
    assert sorted(path.name for path in sheet.path.parent.iterdir()) == [sheet.path.name]


def test_the_steps_of_a_trajectory_are_listed_a_page_at_a_time(
    server: Client, trajectory: str
) -> None:
    whole = server.ok("list_steps")
    assert whole["trajectory"] == trajectory and whole["more"] == 0 and "next" not in whole
    total = whole["total"]
    assert total >= 3 and [step["step"] for step in whole["steps"]] == list(range(1, total + 1))
    assert {"step", "kind", "summary"} <= set(whole["steps"][0])
    page = server.ok("list_steps", {"trajectory": trajectory[:20], "limit": 2})
    assert [step["step"] for step in page["steps"]] == [1, 2]
    assert page["more"] == total - 2
    assert (
        page["next"] == f"{total - 2} more: call list_steps with the same arguments and from_step 3"
    )
    rest = server.ok("list_steps", {"from_step": 3})
    assert [step["step"] for step in rest["steps"]] == list(range(3, total + 1))
    assert "limit must be from 1 to 500" in server.error("list_steps", {"limit": 0})


def test_a_step_of_the_working_trajectory_is_marked(
    server: Client, workspace: Path, trajectory: str
) -> None:
    marked = server.ok("mark_step", {"step": 2, "verdict": "wrong", "text": "not this file"})
    assert marked["version"] == 1 and marked["entry"] is None
    verdict = marked["verdict"]
    assert (verdict["trajectory"], verdict["step"], verdict["verdict"]) == (trajectory, 2, "wrong")
    assert verdict["author"] == "agent" and verdict["text"] == "not this file"
    assert [v.text for v in read_verdicts(workspace, trajectory)][-1] == "not this file"

    noted = server.ok(
        "mark_step",
        {"trajectory": trajectory[:20], "step": 1, "verdict": "clever", "note_to_sheet": True},
    )
    assert noted["entry"]["author"] == "agent" and noted["entry"]["kind"] == "convention"
    assert sheet_of(workspace).get(noted["entry"]["id"]).author == "agent"

    assert "has no step 999" in server.error("mark_step", {"step": 999, "verdict": "wrong"})
    assert "a note needs a text" in server.error("mark_step", {"step": 1, "verdict": "note"})
    assert "unknown verdict" in server.error("mark_step", {"step": 1, "verdict": "meh"})
    assert "no trajectory 'nope'" in server.error(
        "mark_step", {"trajectory": "nope", "step": 1, "verdict": "wrong"}
    )
    assert "step must be a whole number" in server.error(
        "mark_step", {"step": "1", "verdict": "wrong"}
    )


def test_a_wrong_step_goes_to_the_sheet_as_the_agents_ruled_out_not_as_markup(
    server: Client, workspace: Path, trajectory: str
) -> None:
    noted = server.ok(
        "mark_step",
        {"step": 2, "verdict": "wrong", "text": "edited the wrong file", "note_to_sheet": True},
    )
    entry = sheet_of(workspace).get(noted["entry"]["id"])
    # markup is a person's margin note; an agent's verdict never passes for one.
    assert (entry.author, entry.kind) == ("agent", "ruled-out")
    assert "was wrong: edited the wrong file" in entry.text


# -- bad input: a tool error, and the server keeps serving -----------------------------------------


@pytest.mark.parametrize(
    ("name", "arguments", "message"),
    [
        ("add_note", {}, "text is required"),
        ("add_note", None, "text is required"),
        ("add_note", {"text": 5}, "text must be a string, not 5"),
        ("add_note", {"text": "   "}, "text cannot be empty"),
        ("add_note", {"text": "x" * (MAX_TEXT + 1)}, f"takes {MAX_TEXT} at most"),
        ("add_note", {"text": "x", "kind": "opinion"}, 'unknown kind "opinion"'),
        ("add_note", {"text": "x", "kind": "markup"}, "markup is a person's margin note"),
        ("add_note", {"text": "x", "author": "human"}, 'unknown argument "author"'),
        ("add_note", {"text": "x", "file": "src/app.py"}, "file and line go together"),
        ("add_note", {"text": "x", "file": "src/app.py", "line": 0}, "line must be from 1"),
        ("add_note", {"text": "x", "file": "src/app.py", "line": 99}, "line 99 does not exist"),
        ("add_note", {"text": "x", "file": "src/app.py", "line": True}, "whole number"),
        ("add_note", {"text": "x", "file": "src/app.py", "line": 1.5}, "whole number"),
        ("add_note", {"text": "x", "file": "src/app.py", "line": 2**31}, "line must be from"),
        ("add_note", {"text": "x", "file": "../outside.py", "line": 1}, "goes up with '..'"),
        ("add_note", {"text": "x", "file": "src/../README.md", "line": 1}, "goes up with '..'"),
        ("add_note", {"text": "x", "file": "/etc/passwd", "line": 1}, "outside the repository"),
        ("add_note", {"text": "x", "file": ".git/config", "line": 1}, "inside .git"),
        ("add_note", {"text": "x", "file": ".GIT/HEAD", "line": 1}, "inside .git"),
        ("add_note", {"text": "x", "file": "src", "line": 1}, "not a regular file"),
        ("add_note", {"text": "x", "file": "src/nope.py", "line": 1}, "no such file"),
        ("add_note", {"text": "x", "file": "a\u0000b", "line": 1}, "NUL character"),
        ("list_notes", {"kind": 3}, "kind must be a string"),
        ("list_notes", {"status": "closed"}, "unknown status"),
        ("list_notes", {"file": "../x"}, "goes up with '..'"),
        ("show_note", {"id": "zzzzzz"}, "no entry with id 'zzzzzz'"),
        ("show_note", {"id": "../../etc"}, "does not match"),
        ("show_note", {"id": ["a"]}, "id must be a string"),
        ("edit_note", {"id": "zzzzzz", "text": "x"}, "no entry with id 'zzzzzz'"),
        ("edit_note", {"id": "zzzzzz"}, "text is required"),
        ("get_brief", {"budget": 0}, "budget must be from 1"),
        ("get_brief", {"budget": "800"}, "budget must be a whole number"),
        ("get_brief", {"budget": 10**9}, "budget must be from 1 to 100000"),
        ("mark_step", {"step": 1, "verdict": "wrong", "note_to_sheet": "yes"}, "true or false"),
        ("mark_step", {"trajectory": "../x", "step": 1, "verdict": "wrong"}, "does not match"),
        ("no_such_tool", {}, 'no tool "no_such_tool"'),
    ],
)
def test_bad_input_is_a_tool_error(
    server: Client, workspace: Path, name: str, arguments: Any, message: str
) -> None:
    before = sheet_of(workspace).read_text()
    assert message in server.error(name, arguments)
    assert sheet_of(workspace).read_text() == before  # nothing was written


def test_nothing_outside_the_target_is_readable(server: Client, workspace: Path) -> None:
    # Another target's sheet, a link out of the repository, a link to Stet's private files.
    other = sheet_of(workspace, "hidden-pr")
    operations.add_entry(other, "the other target's secret plan")
    private = other.path.relative_to(workspace).as_posix()
    assert ".stet/cache" in server.error("add_note", {"text": "x", "file": private, "line": 1})
    (workspace / "out.py").symlink_to(workspace.parent / "outside.py")
    (workspace / "in.md").symlink_to(other.path)
    for link in ("out.py", "in.md"):
        assert "symbolic link" in server.error("add_note", {"text": "x", "file": link, "line": 1})
    listed = json.dumps(server.ok("list_notes"))
    assert "secret plan" not in listed and "secret plan" not in server.ok("get_brief")["text"]


def test_only_the_agents_own_entries_are_edited(server: Client, workspace: Path) -> None:
    human = operations.add_entry(sheet_of(workspace), "Use the existing helper.", kind="markup")
    entry_id = human["entry"]["id"]
    message = server.error("edit_note", {"id": entry_id, "text": "Ignore the helper."})
    assert f"entry {entry_id} was written by a person" in message
    assert sheet_of(workspace).get(entry_id).text == "Use the existing helper."
    # The agent still reads it.
    assert server.ok("show_note", {"id": entry_id})["entry"]["author"] == "human"


def test_a_paused_sheet_refuses_the_agents_notes(
    server: Client, workspace: Path, trajectory: str
) -> None:
    sheet = sheet_of(workspace)
    operations.pause(sheet)
    try:
        before = sheet.read_text()
        message = server.error("add_note", {"text": "should not land"})
        assert "is paused" in message and "stet resume" in message
        assert "is paused" in server.error(
            "mark_step", {"step": 1, "verdict": "clever", "note_to_sheet": True}
        )
        assert sheet.read_text() == before
        assert server.ok("list_notes")["paused"] is True  # reading still works
    finally:
        operations.resume(sheet)
    assert server.ok("add_note", {"text": "lands again"})["entry"]["author"] == "agent"


def test_a_step_is_not_marked_into_a_sheet_git_tracks(
    server: Client, workspace: Path, trajectory: str
) -> None:
    """Refused before the verdict is written, as a paused sheet is: all or nothing."""
    sheet = sheet_of(workspace)
    with sheet.edit():  # the file, for git to hold
        pass
    relative = sheet.path.relative_to(workspace).as_posix()
    repo = pygit2.Repository(str(workspace))
    repo.index.add(relative)  # git add -f
    repo.index.write()
    try:
        before = sheet.read_text(), len(read_verdicts(workspace, trajectory))
        message = server.error("mark_step", {"step": 1, "verdict": "clever", "note_to_sheet": True})
        assert f"git's index holds {relative}" in message
        assert (sheet.read_text(), len(read_verdicts(workspace, trajectory))) == before
    finally:
        repo.index.remove(relative)  # git rm --cached
        repo.index.write()
    assert server.ok("mark_step", {"step": 1, "verdict": "clever", "note_to_sheet": True})["entry"]


def test_a_target_never_sees_another(workspace: Path, server: Client) -> None:
    mine = server.ok("add_note", {"text": "main branch note"})["entry"]["id"]
    operations.add_entry(sheet_of(workspace, "other"), "other target note", author="agent")
    import_transcript(
        resolve_target(workspace, "other"), transcript(workspace, workspace.parent / "o.jsonl")
    )
    other_trajectory = working_folder(resolve_target(workspace, "other")).id

    with serving(workspace, "--target", "other") as elsewhere:
        texts = [e["text"] for e in elsewhere.ok("list_notes")["entries"]]
        assert texts == ["other target note"]
        assert elsewhere.ok("get_brief")["target"] == {
            "kind": "named",
            "name": "other",
            "label": "other",
            "key": resolve_target(workspace, "other").key,
        }
        assert "no entry with id" in elsewhere.error("show_note", {"id": mine})
        added = elsewhere.ok("add_note", {"text": "written for other"})["entry"]["id"]

    main_texts = [e["text"] for e in server.ok("list_notes")["entries"]]
    assert "other target note" not in main_texts and "written for other" not in main_texts
    assert "no entry with id" in server.error("show_note", {"id": added})
    assert "no entry with id" in server.error("edit_note", {"id": added, "text": "x"})
    # Another target's working trajectory is neither markable nor named.
    message = server.error(
        "mark_step", {"trajectory": other_trajectory, "step": 1, "verdict": "wrong"}
    )
    assert f"no trajectory {other_trajectory!r}" in message
    assert message.count(other_trajectory) == 1


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}


def test_a_malformed_notification_is_one_line_of_the_log(workspace: Path) -> None:
    """A notification the SDK cannot read gets no answer and is logged: in one line naming
    its method, where the log held pydantic's report of every member of the message union
    (23 lines for a `params` that is a number)."""
    lines = [
        INITIALIZE,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "method": "notifications/progress", "params": 5},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    payload = "".join(json.dumps(line) + "\n" for line in lines)
    done = subprocess.run(
        [sys.executable, "-m", "stet_lsp", "mcp"],
        input=payload.encode(),
        capture_output=True,
        cwd=workspace,
        env={**os.environ, "PYTHONPATH": str(PROJECT)},
        timeout=60,
    )
    answers = [json.loads(line) for line in done.stdout.decode().splitlines()]
    assert [answer["id"] for answer in answers] == [1, 2]
    assert done.stderr.decode().splitlines() == [
        "stet mcp: a notification that is not valid JSON-RPC was left out "
        "(notifications/progress): params: Input should be an object"
    ]


def test_garbage_on_the_wire_does_not_stop_the_server(workspace: Path) -> None:
    """Raw JSON-RPC: a line that is not JSON and a call with arguments that are not an
    object get errors; the requests after them are answered."""
    lines = [
        "this is not JSON",
        INITIALIZE,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "add_note", "arguments": "x"},
        },
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "get_brief", "arguments": {"budget": -1}},
        },
        # A lone surrogate cannot be encoded by the SDK's client; raw, it arrives escaped.
        '{"jsonrpc": "2.0", "id": 5, "method": "tools/call", '
        '"params": {"name": "add_note", "arguments": {"text": "\\ud800 half"}}}',
        {"jsonrpc": "1.0", "id": 6, "method": "tools/list"},
        # Deeper than the SDK's parser goes (json reads it, so its id is known).
        '{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "list_notes", '
        '"arguments": {"kind": ' + '{"a": ' * 300 + "1" + "}" * 300 + "}}}",
        {"jsonrpc": "2.0", "id": {"an": "object"}, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/list"},
        # An id written with a fraction of zero is served, its answer's id the number.
        '{"jsonrpc": "2.0", "id": 8.0, "method": "tools/list"}',
        # Deeper than json itself goes: the id is still read.
        '{"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "list_notes", '
        '"arguments": {"kind": ' + "[" * 5000 + "]" * 5000 + "}}}",
        # A byte that is not UTF-8 (0xe9): refused, not stored as U+FFFD.
        '{"jsonrpc": "2.0", "id": 10, "method": "tools/call", '
        '"params": {"name": "add_note", "arguments": {"text": "caf\udce9 latin-1"}}}',
    ]
    payload = "".join(
        (line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines
    )
    answers = raw_exchange(workspace, payload, wanted={None, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
    assert answers[1]["result"]["serverInfo"]["name"] == "stet"
    assert len(answers[8]["result"]["tools"]) == len(TOOLS)
    assert answers[2]["error"] == {
        "code": -32602,
        "message": "invalid params of tools/call: params.arguments: Input should be a JSON object",
    }
    assert answers[3]["result"]["isError"] is True
    assert len(answers[4]["result"]["tools"]) == len(TOOLS)
    # Lines the SDK cannot read, which it drops with no answer, are answered by Stet.
    assert answers[5]["error"]["code"] == -32600
    assert "lone surrogate" in answers[5]["error"]["message"]
    assert answers[6]["error"]["code"] == -32600
    assert "JSON-RPC 2.0" in answers[6]["error"]["message"]
    assert answers[7]["error"]["code"] == -32600
    assert "recursion limit" in answers[7]["error"]["message"]
    assert answers[9]["error"] == {"code": -32600, "message": "nested too deep"}
    assert answers[10]["error"] == {"code": -32700, "message": "not UTF-8"}
    assert "latin-1" not in sheet_of(workspace).read_text()
    assert answers[None]["error"]["code"] in (-32700, -32600)  # not JSON; the object id
    assert "half" not in sheet_of(workspace).read_text()


def test_ids_no_answer_can_carry_and_values_json_does_not_have(workspace: Path) -> None:
    """An id holding a lone surrogate cannot be written back in UTF-8: it is answered with a
    null id, and the server goes on (writing it took the server down); NaN and Infinity are
    not JSON, though Python reads them."""
    lines = [
        INITIALIZE,
        '{"jsonrpc": "2.0", "id": "\\ud800", "method": "ping"}',
        '{"jsonrpc": "2.0", "id": 11, "method": "tools/call", '
        '"params": {"name": "get_brief", "arguments": {"budget": NaN}}}',
        '{"jsonrpc": "2.0", "id": 12, "method": "tools/call", '
        '"params": {"name": "get_brief", "arguments": {"budget": -Infinity}}}',
        '{"jsonrpc": "2.0", "id": 13, "method": "tools/call", '
        '"params": {"name": "add_note", "arguments": {"text": "NaN and Infinity in words"}}}',
        {"jsonrpc": "2.0", "id": 14, "method": "tools/list"},
    ]
    payload = "".join(
        (line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines
    )
    answers = raw_exchange(workspace, payload, wanted={None, 1, 11, 12, 13, 14})
    assert answers[None]["error"]["code"] == -32600
    for number in (11, 12):
        assert answers[number]["error"] == {
            "code": -32700,
            "message": "not JSON: NaN and Infinity are no JSON values",
        }
    assert answers[13]["result"]["isError"] is False
    assert len(answers[14]["result"]["tools"]) == len(TOOLS)


def test_an_id_with_a_zero_fraction_is_answered_as_the_number_written(workspace: Path) -> None:
    """`12345678901234567890.0` is answered `12345678901234567890`, served or refused, where
    it was read as a float and answered `12345678901234567168`, an id the client never sent."""
    big = "12345678901234567890"
    lines = [
        INITIALIZE,
        '{"jsonrpc": "2.0", "id": ' + big + '.0, "method": "ping"}',
        '{"jsonrpc": "1.0", "id": -' + big + '.000, "method": "ping"}',
        '{"jsonrpc": "2.0", "id": 1e400, "method": "ping"}',  # no number a float can hold
    ]
    payload = "".join(
        (line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines
    )
    answers = raw_exchange(workspace, payload, wanted={None, 1, int(big), -int(big)})
    assert answers[int(big)]["result"] == {}
    assert answers[-int(big)]["error"]["code"] == -32600
    assert answers[None]["error"]["message"] == "the id is neither a string nor a whole number"


def test_a_byte_order_mark_before_a_message_is_read_past(workspace: Path) -> None:
    """A client writing "UTF-8 with signature" puts a byte order mark before its first
    message: the initialize after it is served, where it was refused as not JSON (under a
    null id) and the session never started."""
    lines = [
        "\ufeff" + json.dumps(INITIALIZE),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        "\ufeff" + json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    ]
    payload = "".join(
        (line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines
    )
    answers = raw_exchange(workspace, payload, wanted={1, 2})
    assert answers[1]["result"]["serverInfo"]["name"] == "stet"
    assert len(answers[2]["result"]["tools"]) == len(TOOLS)
    assert None not in answers


def test_a_batch_is_refused_under_each_of_its_ids(workspace: Path) -> None:
    """MCP has had no JSON-RPC batches since 2025-06-18 (the SDK reads none): each request of
    a batch is refused under its own id, saying so, where one refusal under null left the
    client waiting for every answer; a batch of no requests gets one, under null."""
    lines = [
        INITIALIZE,
        [
            {"jsonrpc": "2.0", "id": 30, "method": "ping"},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": "b", "method": "tools/list"},
        ],
        [],
        {"jsonrpc": "2.0", "id": 31, "method": "ping"},
    ]
    payload = "".join(json.dumps(line) + "\n" for line in lines)
    answers = raw_exchange(workspace, payload, wanted={None, 1, 30, "b", 31})
    for request_id in (30, "b", None):
        assert answers[request_id]["error"] == {
            "code": -32600,
            "message": "a batch (a JSON array of messages): MCP has none since its 2025-06-18 "
            "revision; send each message on a line of its own",
        }
    assert answers[31]["result"] == {}


def test_a_line_cut_short_is_refused_under_its_id(workspace: Path) -> None:
    """A request that is not JSON because it was cut short still names its id: its refusal
    carries it, where it was null and the client waited for that answer forever."""
    lines = [
        INITIALIZE,
        '{"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "add_note"',
        '{"jsonrpc": "2.0", "id": "five", "method": "tools/call", "params": {"name": ',
        '{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"id": 6',
        {"jsonrpc": "2.0", "id": 7, "method": "ping"},
    ]
    payload = "".join(
        (line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines
    )
    answers = raw_exchange(workspace, payload, wanted={None, 1, 5, "five", 7})
    assert (
        answers[5]["error"] == answers["five"]["error"] == {"code": -32700, "message": "not JSON"}
    )
    assert 6 not in answers  # that id is in the params: the line has none of its own
    assert answers[7]["result"] == {}


def test_a_line_not_utf8_with_a_fractional_id_is_not_answered_as_another_request(
    workspace: Path,
) -> None:
    """The id of a line that is not UTF-8 is read from its bytes: `2.5` or `7e2` is no whole
    number, so its refusal's id is null, where it was 2 or 7 (the digits before the point),
    a second answer to the request that has that id."""
    not_utf8 = "\udce9"  # the byte 0xe9
    lines = [
        INITIALIZE,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "ping"},
        {"jsonrpc": "2.0", "id": 7, "method": "ping"},
        '{"jsonrpc": "2.0", "id": 2.5, "method": "tools/call", "params": {"name": "add_note", '
        '"arguments": {"text": "caf' + not_utf8 + '"}}}',
        '{"jsonrpc": "2.0", "id": 7e2, "method": "tools/call", "params": {"name": "add_note", '
        '"arguments": {"text": "caf' + not_utf8 + '"}}}',
    ]
    payload = "".join(
        (line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines
    )
    answers = raw_exchange(workspace, payload, wanted={None, 1, 2, 7})  # each answered once
    assert answers[2]["result"] == answers[7]["result"] == {}
    assert answers[None]["error"] == {"code": -32700, "message": "not UTF-8"}


def test_a_request_before_initialize_is_refused_saying_so(workspace: Path) -> None:
    """The SDK answered it "Invalid request parameters"; a ping may come first, and the
    session goes on once initialize comes."""
    lines = [
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "list_notes"}},
        {"jsonrpc": "2.0", "id": 3, "method": "ping"},
        INITIALIZE,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/list"},
    ]
    payload = "".join(json.dumps(line) + "\n" for line in lines)
    answers = raw_exchange(workspace, payload, wanted={1, 2, 3, 4})
    assert answers[2]["error"] == {
        "code": -32600,
        "message": "tools/call before initialize: send initialize first",
    }
    assert answers[3]["result"] == {}
    assert answers[1]["result"]["serverInfo"]["name"] == "stet"
    assert len(answers[4]["result"]["tools"]) == len(TOOLS)


def test_an_initialize_with_bad_params_says_what_is_wrong(workspace: Path) -> None:
    """The SDK answered it a bare "Invalid request parameters"; it names the field as the
    other methods' bad params do, and leaves the server uninitialized: a request after it is
    refused as one before initialize, and a good initialize then starts the session."""
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}},
        {"jsonrpc": "2.0", "id": 2, "method": "initialize"},
        {**INITIALIZE, "id": 3, "params": {**INITIALIZE["params"], "capabilities": []}},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/list"},
        {**INITIALIZE, "id": 5},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 6, "method": "tools/list"},
    ]
    payload = "".join(json.dumps(line) + "\n" for line in lines)
    answers = raw_exchange(workspace, payload, wanted={1, 2, 3, 4, 5, 6})
    missing = "invalid params of initialize: params.protocolVersion: Field required"
    assert answers[1]["error"] == {"code": -32602, "message": missing}
    assert answers[2]["error"] == {"code": -32602, "message": missing}
    assert answers[3]["error"] == {
        "code": -32602,
        "message": "invalid params of initialize: params.capabilities: Input should be a "
        "JSON object",
    }
    assert answers[4]["error"] == {
        "code": -32600,
        "message": "tools/list before initialize: send initialize first",
    }
    assert answers[5]["result"]["serverInfo"]["name"] == "stet"
    assert len(answers[6]["result"]["tools"]) == len(TOOLS)


def test_resource_templates_are_listed_as_none(server: Client) -> None:
    """A client that sees the resources capability asks for templates too (VS Code does)."""
    assert server.portal.call(server.session.list_resource_templates).resource_templates == []


def test_a_method_the_server_does_not_offer_is_not_found_whatever_its_params(
    workspace: Path,
) -> None:
    """The SDK read a known method's params before finding no handler: bad ones got a bare
    "Invalid request parameters", good ones "Method not found"."""
    lines = [
        INITIALIZE,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "prompts/get", "params": {}},
        {"jsonrpc": "2.0", "id": 3, "method": "prompts/get", "params": {"name": "x"}},
        {"jsonrpc": "2.0", "id": 4, "method": "completion/complete", "params": {}},
        {"jsonrpc": "2.0", "id": 5, "method": "no/such/method", "params": []},
        {"jsonrpc": "2.0", "id": 6, "method": "tools/list"},
    ]
    payload = "".join(json.dumps(line) + "\n" for line in lines)
    answers = raw_exchange(workspace, payload, wanted={1, 2, 3, 4, 5, 6})
    for number, method in ((2, "prompts/get"), (3, "prompts/get"), (4, "completion/complete")):
        assert answers[number]["error"] == {
            "code": -32601,
            "message": f"{method}: this server does not offer it",
        }
    assert answers[5]["error"]["code"] in (-32601, -32600)
    assert len(answers[6]["result"]["tools"]) == len(TOOLS)


def raw_exchange(root: Path, payload: str, wanted: set[int | None]) -> dict[Any, dict[str, Any]]:
    """Write `payload` to a server, close its standard input at once and read every answer:
    each id in `wanted` must have exactly one, and the server must end by itself."""
    done = subprocess.run(
        [sys.executable, "-m", "stet_lsp", "mcp"],
        input=payload.encode("utf-8", "surrogateescape"),  # "\udce9" is the byte 0xe9
        capture_output=True,
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(PROJECT)},
        timeout=60,  # a server that stops answering, or never ends, fails the test
    )
    assert done.returncode == 0, done.stderr
    answers: dict[Any, dict[str, Any]] = {}
    for line in done.stdout.decode("utf-8").splitlines():
        message = json.loads(line)
        if "id" in message:
            if message["id"] is not None:  # the lines with no id that can be read get null
                assert message["id"] not in answers, f"answered twice: {message}"
            answers[message["id"]] = message
    assert wanted <= set(answers), answers
    return answers


def test_a_client_that_stopped_reading_ends_the_server_quietly(
    workspace: Path, tmp_path: Path
) -> None:
    """A client gone before its answers are written (its end of the server's output closed)
    ends the server as any stet command ends on a closed pipe: 141, no traceback."""
    lines = [INITIALIZE, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "stet_lsp", "mcp"],
            input="".join(json.dumps(line) + "\n" for line in lines).encode(),
            stdout=write,
            stderr=subprocess.PIPE,
            cwd=workspace,
            env={"PATH": os.environ["PATH"], "PYTHONPATH": str(PROJECT), "HOME": str(tmp_path)},
            timeout=60,
        )
    finally:
        os.close(write)
    assert (done.returncode, done.stderr.decode()) == (141, "")


def test_requests_in_flight_when_input_ends_are_answered(workspace: Path) -> None:
    """A client that writes its requests and closes its end gets every answer: the SDK
    cancels what it has not answered when input ends, so the server waits for those first.
    A request its client cancelled is not waited for."""
    lines = [
        INITIALIZE,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        *(
            {
                "jsonrpc": "2.0",
                "id": 10 + n,
                "method": "tools/call",
                "params": {"name": "add_note", "arguments": {"text": f"Closing note {n}."}},
            }
            for n in range(3)
        ),
        {
            "jsonrpc": "2.0",
            "id": "brief",
            "method": "resources/read",
            "params": {"uri": "stet://brief"},
        },
        {
            "jsonrpc": "2.0",
            "id": 20,
            "method": "tools/call",
            "params": {"name": "list_notes", "arguments": {}},
        },
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 20}},
        # The SDK takes "21" for request 21: the cancel is matched the same way here.
        {
            "jsonrpc": "2.0",
            "id": 21,
            "method": "tools/call",
            "params": {"name": "list_notes", "arguments": {}},
        },
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "21"}},
    ]
    payload = "".join(json.dumps(line) + "\n" for line in lines)
    answers = raw_exchange(workspace, payload, wanted={1, 10, 11, 12, "brief"})
    texts = {entry.text for entry in sheet_of(workspace).entries()}
    for n in range(3):
        assert answers[10 + n]["result"]["isError"] is False
        added = answers[10 + n]["result"]["structuredContent"]["entry"]
        assert added["text"] == f"Closing note {n}." and added["text"] in texts
    assert answers["brief"]["result"]["contents"][0]["uri"] == "stet://brief"


def test_ids_5_and_string_5_are_each_answered_under_their_own_id(workspace: Path) -> None:
    """JSON-RPC's 5 and "5" are two ids. The SDK correlates them as one (its table of
    requests in flight, and a cancel's `requestId`), and so does the wait for what is
    unanswered when input ends; each request is still answered, under the id it was sent
    with, with its own result."""
    lines = [
        INITIALIZE,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 5,
            "method": "tools/call",
            "params": {"name": "add_note", "arguments": {"text": "Answered under 5."}},
        },
        {"jsonrpc": "2.0", "id": "5", "method": "tools/list"},
    ]
    payload = "".join(json.dumps(line) + "\n" for line in lines)
    answers = raw_exchange(workspace, payload, wanted={1, 5, "5"})
    added = answers[5]["result"]["structuredContent"]["entry"]
    assert added["text"] == "Answered under 5."
    assert {tool["name"] for tool in answers["5"]["result"]["tools"]} == {t.name for t in TOOLS}


def test_arguments_are_checked_against_the_schema_itself() -> None:
    schema = {tool.name: tool.schema for tool in TOOLS}
    assert check_arguments(schema["get_brief"], None) == {"budget": 800}
    assert check_arguments(schema["get_brief"], {"budget": 12.0}) == {"budget": 12}
    assert check_arguments(schema["add_note"], {"text": "t", "file": None, "line": None}) == {
        "text": "t",
        "kind": "note",
    }
    with pytest.raises(Exception, match="must be a JSON object"):
        check_arguments(schema["get_brief"], [1])


def test_registering_the_command_loads_no_sdk() -> None:
    code = (
        "import sys; from stet_lsp.cli import build_parser; build_parser([]); "
        "build_parser(['mcp', 'install', 'codex']); "
        "loaded = [m for m in sys.modules if m == 'mcp' or m.startswith(('mcp.', 'stet_lsp.mcp'))]; "
        "print(loaded)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=PROJECT, check=True
    )
    assert done.stdout.strip() == "[]"


# -- install -----------------------------------------------------------------------------------------


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    for name in ("CODEX_HOME", "CLAUDE_CONFIG_DIR", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "APPDATA"):
        monkeypatch.delenv(name, raising=False)
    return folder


def install(stet: Stet, root: Path, *args: str) -> tuple[int, str, str]:
    return stet("mcp", "install", *args, "-C", str(root))


def test_claude_code_local_scope_is_the_project_in_claude_json(
    stet: Stet, home: Path, root: Path
) -> None:
    config = home / ".claude.json"
    original = {
        "numStartups": 12,
        "mcpServers": {"docs": {"type": "stdio", "command": "docs-mcp", "args": []}},
        "projects": {
            "/elsewhere": {"allowedTools": [], "mcpServers": {"db": {"command": "db"}}},
            str(root): {"allowedTools": ["Bash"], "history": [{"display": "hi"}]},
        },
    }
    config.write_text(json.dumps(original, indent=2) + "\n")
    code, out, err = install(stet, root, "claude-code")
    assert code == 0, err
    assert "claude mcp add --scope local stet --" in out
    data = json.loads(config.read_text())
    server = data["projects"][str(root)]["mcpServers"]["stet"]
    assert server["type"] == "stdio" and server["args"][-1] == "mcp" and server["env"] == {}
    del data["projects"][str(root)]["mcpServers"]
    assert data == original  # everything else kept
    written = config.read_bytes()
    assert install(stet, root, "claude-code")[0] == 0
    assert config.read_bytes() == written  # again: unchanged
    assert not (root / ".mcp.json").exists()  # the committed project file is never written


def test_a_reinstall_keeps_what_a_person_added_to_the_entry(
    stet: Stet, home: Path, root: Path
) -> None:
    """Installed again (another `stet` on PATH, say), the entry's start is Stet's and the
    rest stays: the `env` and `disabled` a person set."""
    config = home / ".claude.json"
    mine = {"type": "stdio", "command": "/old/bin/stet", "args": ["mcp"]}
    mine |= {"env": {"STET_LOG": "1"}, "disabled": True}
    config.write_text(json.dumps({"mcpServers": {"stet": mine}}, indent=2) + "\n")
    assert install(stet, root, "claude-code", "--scope", "user")[0] == 0
    entry = json.loads(config.read_text())["mcpServers"]["stet"]
    assert entry["command"] != "/old/bin/stet" and entry["args"][-1] == "mcp"
    assert (entry["env"], entry["disabled"]) == ({"STET_LOG": "1"}, True)


def test_a_codex_reinstall_keeps_what_a_person_added_to_the_table(
    stet: Stet, home: Path, root: Path
) -> None:
    """As in JSON: the table's `command` and `args` are Stet's, and what a person set stays,
    where the table was replaced whole: `enabled = false` gone switched the server on again,
    and the `env` subtable was lost."""
    config = home / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text(
        '[mcp_servers.stet]\ncommand = "/old/bin/stet"\nargs = ["mcp"]\nenabled = false\n'
        'startup_timeout_sec = 30\ntool_timeout_sec = 1.5\nenabled_tools = ["add_note"]\n\n'
        '[mcp_servers.stet.env]\nSTET_LOG = "1"\n\n[profiles.x]\nmodel = "y"\n'
    )
    assert install(stet, root, "codex")[0] == 0
    data = tomllib.loads(config.read_text())
    entry = data["mcp_servers"]["stet"]
    assert entry["command"] != "/old/bin/stet" and entry["args"][-1] == "mcp"
    assert {key: value for key, value in entry.items() if key not in ("command", "args")} == {
        "enabled": False,
        "startup_timeout_sec": 30,
        "tool_timeout_sec": 1.5,
        "enabled_tools": ["add_note"],
        "env": {"STET_LOG": "1"},
    }
    assert data["profiles"] == {"x": {"model": "y"}}


def test_the_install_message_shows_the_repository_as_it_is_spelled(
    stet: Stet, home: Path, tmp_path: Path
) -> None:
    root = Path(make_repo(tmp_path / "ré po").workdir).resolve()
    code, out, err = install(stet, root, "claude-code")
    assert code == 0, err
    assert f'projects["{root}"].mcpServers.stet' in out


def test_a_link_to_nothing_is_refused_and_nothing_is_created_through_it(
    stet: Stet, home: Path, root: Path, tmp_path: Path
) -> None:
    missing = tmp_path / "dotfiles" / "claude.json"
    (home / ".claude.json").symlink_to(missing)
    code, out, err = install(stet, root, "claude-code")
    assert code == 1 and out == ""
    assert f"{home / '.claude.json'} is a symbolic link to {missing}, which does not exist" in err
    assert not missing.parent.exists()
    # A link to a file is written where it points.
    missing.parent.mkdir()
    missing.write_text("{}\n")
    assert install(stet, root, "claude-code")[0] == 0
    assert (home / ".claude.json").is_symlink() and "stet" in missing.read_text()


@pytest.mark.parametrize("value", ["", "relative/home"])
def test_an_empty_or_relative_home_is_refused(
    stet: Stet, home: Path, root: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    """An empty HOME (Python reads it as `/`) or a relative one (below wherever Stet runs)
    names no folder a harness reads: install and uninstall say what is wrong with HOME and
    write nothing, the record of a local install included."""
    monkeypatch.setenv("HOME", value)
    for action in ("install", "uninstall"):
        for client in ("codex", "cursor"):
            code, out, err = stet("mcp", action, client, "--dry-run", "-C", str(root))
            assert (code, out) == (1, ""), (action, client)
            problem = "HOME is empty" if not value else f"HOME is not an absolute path ({value})"
            assert err == (
                f"stet: error: {problem}: set HOME to your home folder, where the harnesses "
                "keep their configuration; nothing was changed\n"
            )


def test_claude_code_user_scope_and_a_new_file(stet: Stet, home: Path, root: Path) -> None:
    code, _, err = install(stet, root, "claude-code", "--scope", "user")
    assert code == 0, err
    config = home / ".claude.json"
    assert set(json.loads(config.read_text())) == {"mcpServers"}
    assert config.stat().st_mode & 0o077 == 0  # a new ~/.claude.json is private


def test_a_lone_surrogate_and_crlf_are_written_back_as_they_were(
    stet: Stet, home: Path, root: Path
) -> None:
    """Claude Code writes `\\ud83d` for a history line cut inside an emoji: it stays that
    escape (raw, it is no UTF-8) and the install goes on; a CRLF file stays CRLF."""
    config = home / ".claude.json"
    config.write_text('{\n  "projects": {"/x": {"history": [{"display": "fix the \\ud83d"}]}}\n}\n')
    code, _, err = install(stet, root, "claude-code")
    assert code == 0, err
    text = config.read_text()
    assert '"display": "fix the \\ud83d"' in text
    assert json.loads(text)["projects"]["/x"]["history"] == [{"display": "fix the \ud83d"}]
    cursor = root / ".cursor" / "mcp.json"
    cursor.parent.mkdir()
    cursor.write_bytes(b'{\r\n  "mcpServers": {\r\n    "other": {"command": "x"}\r\n  }\r\n}\r\n')
    code, _, err = install(stet, root, "cursor")
    assert code == 0, err
    data = cursor.read_bytes()
    assert data.count(b"\n") == data.count(b"\r\n") and b'"stet"' in data


def test_a_byte_order_mark_is_read_past_and_kept(stet: Stet, home: Path, root: Path) -> None:
    """Notepad starts a file with a byte order mark: the install reads past it (JSON and TOML
    parsers refuse it) and writes it back; installing again changes nothing."""
    codex = home / ".codex" / "config.toml"
    codex.parent.mkdir()
    codex.write_bytes(b'\xef\xbb\xbfmodel = "gpt-5"\n')
    vscode = root / ".vscode" / "mcp.json"
    vscode.parent.mkdir()
    vscode.write_bytes(b'\xef\xbb\xbf{\n  "servers": {}\n}\n')
    for client, config in (("codex", codex), ("vscode", vscode)):
        code, _, err = install(stet, root, client)
        assert code == 0, err
        data = config.read_bytes()
        assert data.startswith(b"\xef\xbb\xbf") and data.count(b"\xef\xbb\xbf") == 1
        text = data.decode("utf-8-sig")
        if client == "codex":
            assert tomllib.loads(text)["mcp_servers"]["stet"]["args"][-1] == "mcp"
        else:
            assert "mcp" in json.loads(text)["servers"]["stet"]["args"]
        assert install(stet, root, client)[0] == 0
        assert config.read_bytes() == data


def test_codex_user_scope_keeps_the_file_line_for_line(stet: Stet, home: Path, root: Path) -> None:
    config = home / ".codex" / "config.toml"
    config.parent.mkdir()
    original = (
        '# my settings\nmodel = "gpt-5"\n\n[mcp_servers.docs]\ncommand = "docs"  # keep\n'
        'args = ["--x"]\n\n[mcp_servers.docs.env]\nTOKEN = "t"\n\n[profiles.fast]\nmodel = "m"'
    )
    config.write_text(original)
    code, _, err = install(stet, root, "codex")
    assert code == 0, err
    text = config.read_text()
    assert text.startswith(original + "\n")  # appended; not a byte of the rest changed
    data = tomllib.loads(text)
    assert data["mcp_servers"]["stet"]["args"][-1] == "mcp"
    assert data["mcp_servers"]["docs"] == {
        "command": "docs",
        "args": ["--x"],
        "env": {"TOKEN": "t"},
    }
    assert data["profiles"] == {"fast": {"model": "m"}}


def test_codex_replaces_only_its_own_table(stet: Stet, home: Path, root: Path) -> None:
    config = home / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text(
        '[mcp_servers.stet]\ncommand = "old-stet"\nargs = ["serve"]\n\n'
        '[mcp_servers.stet.env]\nX = "1"\n\n# the docs server\n[mcp_servers.docs]\n'
        'command = "docs"\n'
    )
    assert install(stet, root, "codex")[0] == 0
    text = config.read_text()
    assert "old-stet" not in text and '"serve"' not in text
    assert text.endswith('X = "1"\n\n# the docs server\n[mcp_servers.docs]\ncommand = "docs"\n')
    data = tomllib.loads(text)
    assert set(data["mcp_servers"]) == {"stet", "docs"}
    assert data["mcp_servers"]["stet"]["env"] == {"X": "1"}  # a person's, kept


@pytest.mark.parametrize(
    "content",
    [
        'mcp_servers = { docs = { command = "docs" } }\n',  # an inline table: not edited
        "[mcp_servers\nbroken",  # not TOML
    ],
)
def test_codex_refuses_what_it_cannot_edit_safely(
    stet: Stet, home: Path, root: Path, content: str
) -> None:
    config = home / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text(content)
    code, _, err = install(stet, root, "codex")
    assert code == 1 and "nothing was changed" in err
    assert config.read_text() == content


def test_codex_uninstall_of_a_server_it_cannot_edit_says_to_take_it_out_by_hand(
    stet: Stet, home: Path, root: Path
) -> None:
    """A stet server written as an inline table or with dotted keys is refused by uninstall
    as by install, and the message says to take it out by hand: it said to add the table."""
    config = home / ".codex" / "config.toml"
    config.parent.mkdir()
    for content in (
        '[mcp_servers]\nstet = { command = "/opt/stet/bin/stet", args = ["mcp"] }\n',
        'mcp_servers.stet.command = "/opt/stet/bin/stet"\n',
    ):
        config.write_text(content)
        code, out, err = uninstall(stet, root, "codex")
        assert code == 1 and out == "" and config.read_text() == content
        assert "nothing was changed. Remove mcp_servers.stet by hand" in err, err
        assert "Add this table by hand" not in err
        assert "Add this table by hand" in install(stet, root, "codex")[2]


def test_a_read_only_configuration_is_left_as_it_is(stet: Stet, home: Path, root: Path) -> None:
    """A client's configuration its owner made read-only was replaced all the same (a new
    file renamed over it): install and uninstall now refuse it, write no record, and
    change nothing."""
    config = home / ".cursor" / "mcp.json"
    config.parent.mkdir()
    config.write_text('{"mcpServers": {}}\n')
    config.chmod(0o444)
    code, _, err = install(stet, root, "cursor", "--scope", "user")
    assert code == 1 and f"{config} is read-only (mode 0444)" in err
    assert config.read_text() == '{"mcpServers": {}}\n'
    assert not (home / ".local" / "state" / "stet").exists()
    config.chmod(0o644)
    assert install(stet, root, "cursor", "--scope", "user")[0] == 0
    config.chmod(0o444)
    installed = config.read_text()
    code, _, err = uninstall(stet, root, "cursor", "--scope", "user")
    assert code == 1 and f"{config} is read-only" in err and config.read_text() == installed
    config.chmod(0o644)
    assert uninstall(stet, root, "cursor", "--scope", "user")[0] == 0
    assert config.read_text() == '{"mcpServers": {}}\n'


def test_codex_local_scope_is_kept_out_of_commits(
    stet: Stet, home: Path, root: Path, repo: pygit2.Repository
) -> None:
    assert install(stet, root, "codex", "--scope", "local")[0] == 0
    assert tomllib.loads((root / ".codex" / "config.toml").read_text())["mcp_servers"]["stet"]
    assert repo.path_is_ignored(".codex/config.toml")
    assert repo.status() == {}


def test_cursor_project_file_is_merged_and_excluded(
    stet: Stet, home: Path, root: Path, repo: pygit2.Repository
) -> None:
    config = root / ".cursor" / "mcp.json"
    config.parent.mkdir()
    original = {"mcpServers": {"db": {"command": "db", "args": ["--ro"]}}, "other": [1, 2]}
    config.write_text(json.dumps(original, indent=4))
    exclude = Path(repo.path) / "info" / "exclude"
    exclude_before = exclude.read_text() if exclude.exists() else ""
    code, out, err = install(stet, root, "cursor")
    assert code == 0, err
    assert "out of commits" in out
    data = json.loads(config.read_text())
    assert data["mcpServers"]["db"] == original["mcpServers"]["db"] and data["other"] == [1, 2]
    assert data["mcpServers"]["stet"]["args"][-3:] == ["mcp", "-C", "${workspaceFolder}"]
    assert config.read_text().startswith('{\n    "mcpServers"')  # the file's own indentation
    assert exclude.read_text() == exclude_before + "/.cursor/mcp.json\n"
    assert repo.status() == {}  # nothing to commit
    assert install(stet, root, "cursor")[0] == 0
    assert exclude.read_text() == exclude_before + "/.cursor/mcp.json\n"  # once


def test_a_file_holding_the_server_already_is_kept_as_it_is(
    stet: Stet, home: Path, root: Path, repo: pygit2.Repository
) -> None:
    start = stet_command()
    entry = {"type": "stdio", "command": start[0], "args": [*start[1:], "mcp", "-C", WORKSPACE]}
    config = root / ".cursor" / "mcp.json"
    config.parent.mkdir()
    config.write_text(json.dumps({"mcpServers": {"stet": entry}}))  # one line, by hand
    code, out, err = install(stet, root, "cursor")
    assert code == 0, err
    assert "there already" in out and "out of commits" in out
    assert config.read_text() == json.dumps({"mcpServers": {"stet": entry}})
    assert repo.path_is_ignored(".cursor/mcp.json")  # but no longer on its way into a commit


def test_a_tracked_project_file_is_refused(stet: Stet, home: Path, repo: pygit2.Repository) -> None:
    commit_files(repo, {".vscode/mcp.json": '{"servers": {}}\n'})
    root = Path(repo.workdir).resolve()
    code, _, err = install(stet, root, "vscode")
    assert code == 1 and "tracked by git" in err and "--scope user" in err
    assert (root / ".vscode" / "mcp.json").read_text() == '{"servers": {}}\n'


def test_vscode_project_file_keeps_inputs_and_servers(stet: Stet, home: Path, root: Path) -> None:
    config = root / ".vscode" / "mcp.json"
    config.parent.mkdir()
    original = {
        "inputs": [{"type": "promptString", "id": "key", "password": True}],
        "servers": {"gh": {"type": "http", "url": "https://example.invalid/mcp"}},
    }
    config.write_text(json.dumps(original, indent=2) + "\n")
    assert install(stet, root, "vscode")[0] == 0
    data = json.loads(config.read_text())
    assert (
        data["inputs"] == original["inputs"] and data["servers"]["gh"] == original["servers"]["gh"]
    )
    assert data["servers"]["stet"]["type"] == "stdio"


@pytest.mark.parametrize(
    "content",
    [
        '{\n  // a comment\n  "servers": {}\n}\n',  # JSON with comments is refused, not rewritten
        '{"servers": []}',
        '{"servers": {}, "servers": {}}',
        "[1, 2]",
        "{",
    ],
)
def test_a_file_that_does_not_parse_is_refused_unchanged(
    stet: Stet, home: Path, root: Path, content: str
) -> None:
    config = root / ".vscode" / "mcp.json"
    config.parent.mkdir()
    config.write_text(content)
    code, _, err = install(stet, root, "vscode")
    assert code == 1 and "nothing was changed" in err, err
    assert config.read_text() == content
    assert "/.vscode/mcp.json" not in (Path(root) / ".git" / "info" / "exclude").read_text()


def test_user_scopes_of_the_editors(stet: Stet, home: Path, root: Path) -> None:
    assert install(stet, root, "cursor", "--scope", "user")[0] == 0
    assert "stet" in json.loads((home / ".cursor" / "mcp.json").read_text())["mcpServers"]
    macos = plan("vscode", "user", environment=Environment(home, {}, "darwin"), command=["s"])
    assert macos.path == home / "Library" / "Application Support" / "Code" / "User" / "mcp.json"
    linux = plan(
        "vscode", "user", environment=Environment(home, {"XDG_CONFIG_HOME": "/x"}, "linux")
    )
    assert linux.path == Path("/x/Code/User/mcp.json")
    codex = plan("codex", environment=Environment(home, {"CODEX_HOME": str(home / "c")}))
    assert codex.path == home / "c" / "config.toml" and codex.scope == "user"


def test_dry_run_shows_the_result_and_writes_nothing(
    stet: Stet, home: Path, root: Path, repo: pygit2.Repository
) -> None:
    exclude = Path(repo.path) / "info" / "exclude"
    exclude_before = exclude.read_bytes() if exclude.exists() else None
    for client in ("claude-code", "codex", "cursor", "vscode"):
        code, out, err = install(stet, root, client, "--dry-run")
        assert code == 0, err
        assert "would add" in out and "+++ " in out
    assert list(home.iterdir()) == []
    assert not (root / ".cursor").exists() and not (root / ".vscode").exists()
    assert (exclude.read_bytes() if exclude.exists() else None) == exclude_before
    code, out, _ = install(stet, root, "cursor", "--dry-run", "--json")
    document = json.loads(out)
    assert document["action"] == "create" and document["dry_run"] is True
    added = "".join(line[1:] for line in document["diff"].splitlines(keepends=True)[3:])
    assert json.loads(added)["mcpServers"]["stet"] == document["server"]
    assert not (root / ".cursor").exists()


def test_install_outside_a_repository(stet: Stet, home: Path, tmp_path: Path) -> None:
    code, _, err = install(stet, tmp_path / "home", "cursor")
    assert code == 1 and "not inside a git repository" in err
    assert install(stet, tmp_path / "home", "codex")[0] == 0  # user scope needs none


def test_install_usage_names_the_install_command(stet: Stet, home: Path, root: Path) -> None:
    for args in (("bogus",), ("codex", "--scope", "bogus")):
        code, out, err = install(stet, root, *args)
        assert code == 2 and out == ""
        assert err.startswith("usage: stet mcp install [-h]"), err
        assert "\nstet mcp install: error: argument " in err
    code, out, _ = stet("mcp", "install", "--help")
    assert code == 0 and out.startswith("usage: stet mcp install [-h]")


# -- a small Claude Code transcript ------------------------------------------------------------------


def transcript(root: Path, path: Path) -> Path:
    """A prompt, a Write of a file with its result, and a reply: Claude Code's records."""
    clock = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
    records: list[dict[str, Any]] = []

    def record(kind: str, message: dict[str, Any], **extra: Any) -> None:
        nonlocal clock
        clock += timedelta(seconds=2)
        records.append(
            {
                "parentUuid": records[-1]["uuid"] if records else None,
                "isSidechain": False,
                "userType": "external",
                "cwd": str(root),
                "sessionId": SESSION,
                "version": "2.1.12",
                "gitBranch": "main",
                "type": kind,
                "message": message,
                "uuid": f"cccccccc-{len(records):04d}",
                "timestamp": clock.isoformat().replace("+00:00", ".000Z"),
                **extra,
            }
        )

    def assistant(*blocks: dict[str, Any]) -> None:
        message = {
            "model": "claude-sonnet-4-5-20250929",
            "id": f"msg_{len(records):04d}",
            "type": "message",
            "role": "assistant",
            "content": list(blocks),
            "stop_reason": None,
            "usage": {"input_tokens": 100, "output_tokens": 20},
        }
        record("assistant", message, requestId=f"req_{len(records):04d}")

    written = f"{root}/src/new.py"
    record("user", {"role": "user", "content": "Add a module"})
    tool_input = {"file_path": written, "content": "print('hi')\n"}
    assistant({"type": "tool_use", "id": "toolu_1", "name": "Write", "input": tool_input})
    result = {"tool_use_id": "toolu_1", "type": "tool_result", "content": "File created"}
    structured = {"type": "create", "filePath": written, "content": "print('hi')\n"}
    record("user", {"role": "user", "content": [result]}, toolUseResult=structured)
    assistant({"type": "text", "text": "Created src/new.py."})
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_lines_refused_just_before_the_input_ends_are_answered(workspace: Path) -> None:
    """Standard input closed right after lines the SDK cannot read: each still gets its
    answer before the server exits."""
    lines = [
        "garbage",
        '{"jsonrpc": "1.0", "id": 9, "method": "tools/list"}',
        '{"jsonrpc": "2.0", "id": {"an": "object"}, "method": "tools/list"}',
        '{"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {"_meta": {"x": "\\ud800"}}}',
        '{"jsonrpc": "1.0", "id": 3.0, "method": "tools/list"}',
        '{"jsonrpc": "1.0", "id": 3.5, "method": "tools/list"}',
    ]
    done = subprocess.run(
        [sys.executable, "-m", "stet_lsp", "mcp"],
        input="".join(line + "\n" for line in lines),
        capture_output=True,
        text=True,
        cwd=workspace,
        env={**os.environ, "PYTHONPATH": str(PROJECT)},
        timeout=60,
    )
    assert done.returncode == 0
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert [answer.get("id") for answer in answers] == [None, 9, None, 7, 3, None]
    assert all(answer["error"]["code"] in (-32700, -32600) for answer in answers)


# -- uninstall ---------------------------------------------------------------------------------------


def uninstall(stet: Stet, root: Path, *args: str) -> tuple[int, str, str]:
    return stet("mcp", "uninstall", *args, "-C", str(root))


def config_path(client: str, scope: str, home: Path, root: Path) -> Path:
    if scope == "local" and client != "claude-code":
        folder = {"codex": ".codex", "cursor": ".cursor", "vscode": ".vscode"}[client]
        return root / folder / ("config.toml" if client == "codex" else "mcp.json")
    return {
        "claude-code": home / ".claude.json",
        "codex": home / ".codex" / "config.toml",
        "cursor": home / ".cursor" / "mcp.json",
        "vscode": home / ".config" / "Code" / "User" / "mcp.json",
    }[client]


OTHER_SERVERS = {
    # Each as a person's editor may leave it: a byte order mark, CRLF, one line, no final break.
    "claude-code": b'\xef\xbb\xbf{\r\n    "numStartups": 3,\r\n    "mcpServers": {"docs": '
    b'{"command": "d"}}\r\n}\r\n',
    "codex": b'\xef\xbb\xbf# mine\r\nmodel = "m"\r\n\r\n[mcp_servers.docs]\r\ncommand = "d"',
    "cursor": b'{"mcpServers": {"db": {"command": "db"}}, "other": [1, 2, "\xc3\xa9"]}',
    "vscode": b'{\n\t"servers": {\n\t\t"gh": {"type": "http", "url": "https://x.invalid"}\n\t}\n}\n',
}

CASES = [
    (client, scope, existing)
    for client in ("claude-code", "codex", "cursor", "vscode")
    for scope in ("local", "user")
    for existing in (False, True)
]


def state_files(home: Path) -> list[Path]:
    """The install records (the note of the folders made for them left out)."""
    found = (home / ".local" / "state").rglob("*")
    return [path for path in found if path.is_file() and path.name != "created-folders.json"]


def exclude_bytes(repo: pygit2.Repository) -> bytes | None:
    exclude = Path(repo.path) / "info" / "exclude"
    return exclude.read_bytes() if exclude.exists() else None


@pytest.mark.parametrize(("client", "scope", "existing"), CASES)
def test_uninstall_gives_back_the_exact_bytes(
    stet: Stet,
    home: Path,
    root: Path,
    repo: pygit2.Repository,
    client: str,
    scope: str,
    existing: bool,
) -> None:
    config = config_path(client, scope, home, root)
    if existing:
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_bytes(OTHER_SERVERS[client])
    exclude_before = exclude_bytes(repo)
    status_before = repo.status()  # a file of a person's, not yet ignored, shows: it does again
    code, _, err = install(stet, root, client, "--scope", scope)
    assert code == 0, err
    assert repo.status() == {}
    assert config.read_bytes() != (OTHER_SERVERS[client] if existing else b"")
    assert len(state_files(home)) == 1
    code, out, err = uninstall(stet, root, client, "--scope", scope)
    assert code == 0, err
    if existing:
        assert config.read_bytes() == OTHER_SERVERS[client]
        assert "as it was before stet mcp install" in out
    else:
        assert not config.exists() and "which stet mcp install created" in out
        if config.parent != home:
            assert not config.parent.exists()  # the folder install created, empty again
        assert not (home / ".config").exists()
    assert exclude_bytes(repo) == exclude_before
    assert repo.status() == status_before
    assert state_files(home) == []
    code, out, _ = uninstall(stet, root, client, "--scope", scope)
    assert code == 0 and "no stet server to remove" in out


@pytest.mark.parametrize(
    ("client", "linked"),
    [
        (client, linked)
        for client in ("claude-code", "codex", "cursor", "vscode")
        for linked in ("file", "folder")
        if (client, linked) != ("claude-code", "folder")  # ~/.claude.json's folder is home
    ],
)
def test_a_created_file_moved_into_dotfiles_and_linked_back_stays(
    stet: Stet, home: Path, root: Path, client: str, linked: str
) -> None:
    """A user's file install created, moved since into a dotfiles repository and linked back
    (the file, or the folder it is in), is the user's: uninstall takes the stet entry out of
    the file the link points to and leaves it there, whatever else it holds; the link stays,
    and the record goes."""
    config = config_path(client, "user", home, root)
    assert install(stet, root, client, "--scope", "user")[0] == 0
    dotfiles = home / "dotfiles"
    dotfiles.mkdir()
    if linked == "file":
        moved = dotfiles / config.name
        config.rename(moved)
        config.symlink_to(moved)
    else:
        moved = dotfiles / "folder" / config.name
        config.parent.rename(moved.parent)
        config.parent.symlink_to(moved.parent)
    code, out, err = uninstall(stet, root, client, "--scope", "user")
    assert code == 0, err
    assert "no longer where it was created" in out and "created" not in out.splitlines()[0]
    assert config.is_symlink() or config.parent.is_symlink()
    assert moved.exists() and "stet" not in moved.read_text()
    assert state_files(home) == []


@pytest.mark.parametrize("client", ["cursor", "vscode"])
def test_an_editors_user_folder_that_is_a_link_is_written_where_it_points(
    stet: Stet, home: Path, root: Path, client: str
) -> None:
    """`~/.cursor` (or VS Code's `User` folder) as a link into a dotfiles repository: the file
    is written there, as the folders of Claude Code's and Codex's files are, and uninstall
    removes the file install created there."""
    config = config_path(client, "user", home, root)
    folder = home / "dotfiles" / client
    folder.mkdir(parents=True)
    config.parent.parent.mkdir(parents=True, exist_ok=True)
    config.parent.symlink_to(folder)
    code, out, err = install(stet, root, client, "--scope", "user")
    assert code == 0, err
    servers = json.loads((folder / "mcp.json").read_text())
    assert "stet" in servers["mcpServers" if client == "cursor" else "servers"]
    code, out, err = uninstall(stet, root, client, "--scope", "user")
    assert code == 0, err
    assert "which stet mcp install created" in out and not (folder / "mcp.json").exists()
    assert config.parent.is_symlink()


def test_uninstall_after_an_edit_keeps_the_edit(
    stet: Stet, home: Path, root: Path, repo: pygit2.Repository
) -> None:
    exclude_before = exclude_bytes(repo)
    config = root / ".vscode" / "mcp.json"
    config.parent.mkdir()
    config.write_bytes(OTHER_SERVERS["vscode"])
    assert install(stet, root, "vscode")[0] == 0
    data = json.loads(config.read_text())
    data["servers"]["mine"] = {"command": "mine"}
    config.write_text(json.dumps(data, indent="\t") + "\n")
    code, out, err = uninstall(stet, root, "vscode")
    assert code == 0, err
    assert "the rest of the file is kept" in out and "changed since" in out
    assert json.loads(config.read_text())["servers"] == {
        "gh": {"type": "http", "url": "https://x.invalid"},
        "mine": {"command": "mine"},
    }
    assert config.read_text().startswith('{\n\t"servers"')  # the file's indentation
    # The exclude line install added goes; the file, kept, is no longer out of commits.
    assert exclude_bytes(repo) == exclude_before
    assert "no longer out of commits" in out
    assert state_files(home) == []


def test_uninstall_after_an_edit_of_a_toml_file_takes_out_only_the_table(
    stet: Stet, home: Path, root: Path
) -> None:
    config = home / ".codex" / "config.toml"
    config.parent.mkdir()
    original = '# mine\nmodel = "m"\n\n[mcp_servers.docs]\ncommand = "d"\n'
    config.write_text(original)
    assert install(stet, root, "codex")[0] == 0
    with config.open("a") as stream:
        stream.write('\n[mcp_servers.stet.env]\nX = "1"\n\n[profiles.fast]\nmodel = "f"\n')
    code, out, err = uninstall(stet, root, "codex")
    assert code == 0, err
    assert "the rest of the file is kept" in out
    assert config.read_text() == original + '\n[profiles.fast]\nmodel = "f"\n'


def test_a_file_install_created_and_a_person_added_to_is_kept(
    stet: Stet, home: Path, root: Path
) -> None:
    assert install(stet, root, "cursor", "--scope", "user")[0] == 0
    config = home / ".cursor" / "mcp.json"
    data = json.loads(config.read_text())
    data["mcpServers"]["db"] = {"command": "db"}
    config.write_text(json.dumps(data, indent=2) + "\n")
    assert uninstall(stet, root, "cursor", "--scope", "user")[0] == 0
    assert json.loads(config.read_text()) == {"mcpServers": {"db": {"command": "db"}}}


def test_uninstall_without_a_record_takes_out_only_the_entry(
    stet: Stet, home: Path, root: Path, repo: pygit2.Repository
) -> None:
    """An entry added by hand (or by an earlier Stet, which kept no record)."""
    exclude = Path(repo.path) / "info" / "exclude"
    exclude.write_text("/.cursor/mcp.json\n")
    config = root / ".cursor" / "mcp.json"
    config.parent.mkdir()
    entry = {"command": "stet", "args": ["mcp"]}
    config.write_text(json.dumps({"mcpServers": {"stet": entry, "db": {"command": "db"}}}))
    code, out, err = uninstall(stet, root, "cursor", "--json")
    assert code == 0, err
    document = json.loads(out)
    assert document["action"] == "update" and document["server"] == entry
    assert document["excluded"] is None and any("no record" in n for n in document["notes"])
    assert config.read_text() == '{"mcpServers": {"db": {"command": "db"}}}\n'
    assert exclude.read_text() == "/.cursor/mcp.json\n"  # no record says Stet added it


def test_an_entry_there_before_install_is_taken_out_not_restored(
    stet: Stet, home: Path, root: Path, repo: pygit2.Repository
) -> None:
    """Install found the server there already and only kept the file out of commits:
    uninstall takes the entry out (the original bytes hold it) and the exclude line."""
    exclude_before = exclude_bytes(repo)
    start = stet_command()
    entry = {"type": "stdio", "command": start[0], "args": [*start[1:], "mcp", "-C", WORKSPACE]}
    config = root / ".cursor" / "mcp.json"
    config.parent.mkdir()
    config.write_text(json.dumps({"mcpServers": {"stet": entry, "db": {"command": "db"}}}))
    assert install(stet, root, "cursor")[0] == 0
    code, _, err = uninstall(stet, root, "cursor")
    assert code == 0, err
    assert json.loads(config.read_text()) == {"mcpServers": {"db": {"command": "db"}}}
    assert exclude_bytes(repo) == exclude_before


def test_uninstall_of_a_server_install_replaced_says_why_the_file_is_not_restored(
    stet: Stet, home: Path, root: Path
) -> None:
    """A stet server of the user's own, replaced by install: uninstall takes the entry out,
    saying the file held one before, where it said the file had changed since install wrote
    it, which it had not."""
    config = home / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text('model = "m"\n\n[mcp_servers.stet]\ncommand = "old"\n')
    assert install(stet, root, "codex")[0] == 0
    code, out, err = uninstall(stet, root, "codex", "--json")
    assert code == 0, err
    assert json.loads(out)["notes"] == [
        "the file held a stet server before stet mcp install replaced it: the stet entry is "
        "taken out, the rest of the file is kept"
    ]
    assert config.read_text() == 'model = "m"\n'


def test_uninstall_when_nothing_is_installed(stet: Stet, home: Path, root: Path) -> None:
    for client in ("claude-code", "codex", "cursor", "vscode"):
        code, out, err = uninstall(stet, root, client)
        assert code == 0, err
        assert "no stet server to remove" in out
        code, out, _ = uninstall(stet, root, client, "--json")
        document = json.loads(out)
        assert document["action"] == "unchanged" and document["server"] is None
    assert list(home.iterdir()) == []
    assert not any((root / name).exists() for name in (".codex", ".cursor", ".vscode", ".stet"))


def test_uninstall_dry_run_changes_nothing(
    stet: Stet, home: Path, root: Path, repo: pygit2.Repository
) -> None:
    for client in ("codex", "cursor"):
        assert install(stet, root, client, "--scope", "local")[0] == 0
    files = [*root.rglob("*"), *home.rglob("*")]
    snapshot = {
        path: path.read_bytes() for path in files if path.is_file() and ".git" not in path.parts
    }
    exclude = exclude_bytes(repo)
    code, out, err = uninstall(stet, root, "cursor", "--dry-run")
    assert code == 0, err
    assert "would remove .cursor/mcp.json" in out and "would take /.cursor/mcp.json" in out
    assert "+++ /dev/null" in out
    code, out, _ = uninstall(stet, root, "codex", "--scope", "local", "--dry-run", "--json")
    document = json.loads(out)
    assert document["action"] == "delete" and document["dry_run"] is True
    assert document["excluded"] == "/.codex/config.toml"
    assert document["server"]["args"][-1] == "mcp" and "-[mcp_servers.stet]" in document["diff"]
    after = {path: path.read_bytes() for path in snapshot}
    assert after == snapshot and exclude_bytes(repo) == exclude
    assert len(state_files(home)) == 2


def test_the_exclude_line_stays_while_another_work_tree_needs_it(
    stet: Stet, home: Path, root: Path, repo: pygit2.Repository, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    repo.add_worktree("other", str(other))
    assert install(stet, root, "cursor")[0] == 0
    assert install(stet, other, "cursor")[0] == 0
    exclude = Path(repo.path) / "info" / "exclude"
    assert exclude.read_text().count("/.cursor/mcp.json\n") == 1
    assert uninstall(stet, other, "cursor")[0] == 0
    assert "/.cursor/mcp.json\n" in exclude.read_text()  # the main work tree still has it
    assert uninstall(stet, root, "cursor")[0] == 0
    assert "/.cursor/mcp.json" not in exclude.read_text()


@pytest.mark.parametrize(("client", "scope"), [("cursor", "local"), ("codex", "local")])
def test_the_last_work_tree_to_uninstall_takes_out_the_exclude_line(
    stet: Stet,
    home: Path,
    root: Path,
    repo: pygit2.Repository,
    tmp_path: Path,
    client: str,
    scope: str,
) -> None:
    """The second work tree's install finds the line the first one's added: the line goes
    when the last of them uninstalls, whichever it is, and not before."""
    other = tmp_path / "other"
    repo.add_worktree("other", str(other))
    before = exclude_bytes(repo)
    assert install(stet, root, client, "--scope", scope)[0] == 0
    assert install(stet, other, client, "--scope", scope)[0] == 0
    relative = config_path(client, scope, home, root).relative_to(root).as_posix()
    line = f"/{relative}\n"
    exclude = Path(repo.path) / "info" / "exclude"
    assert exclude.read_text().count(line) == 1
    code, out, err = uninstall(stet, root, client, "--scope", scope, "--json")
    assert code == 0, err
    assert json.loads(out)["excluded"] is None
    assert line in exclude.read_text()  # the other work tree still has the file
    assert pygit2.Repository(str(other)).path_is_ignored(relative)
    code, out, err = uninstall(stet, other, client, "--scope", scope, "--json")
    assert code == 0, err
    assert json.loads(out)["excluded"] == line.strip()
    assert not (other / relative).exists()
    assert exclude_bytes(repo) == before
    assert state_files(home) == []


def test_the_exclude_line_stays_while_another_work_tree_has_the_file_at_all(
    stet: Stet, home: Path, root: Path, repo: pygit2.Repository, tmp_path: Path
) -> None:
    """A work tree whose file lost Stet's entry but kept another server (with a password in
    its env) still needs the line: without it git would show that file."""
    other = tmp_path / "other"
    repo.add_worktree("other", str(other))
    assert install(stet, root, "cursor")[0] == 0
    assert install(stet, other, "cursor")[0] == 0
    config = other / ".cursor" / "mcp.json"
    data = json.loads(config.read_text())
    data["mcpServers"]["db"] = {"command": "db", "env": {"DB_PASSWORD": "hunter2"}}
    config.write_text(json.dumps(data, indent=2) + "\n")
    assert uninstall(stet, other, "cursor")[0] == 0
    assert (
        "hunter2" in config.read_text()
        and "stet" not in json.loads(config.read_text())["mcpServers"]
    )
    assert uninstall(stet, root, "cursor")[0] == 0
    assert not (root / ".cursor" / "mcp.json").exists()
    exclude = Path(repo.path) / "info" / "exclude"
    assert "/.cursor/mcp.json\n" in exclude.read_text()
    assert pygit2.Repository(str(other)).path_is_ignored(".cursor/mcp.json")


def test_uninstall_refuses_what_install_refuses(
    stet: Stet, home: Path, root: Path, repo: pygit2.Repository, tmp_path: Path
) -> None:
    config = root / ".vscode" / "mcp.json"
    config.parent.mkdir()
    jsonc = '{\n  // mine\n  "servers": {"stet": {"command": "stet"}}\n}\n'
    config.write_text(jsonc)
    code, _, err = uninstall(stet, root, "vscode")
    assert code == 1 and "not valid JSON" in err and "nothing was changed" in err
    assert config.read_text() == jsonc
    (home / ".claude.json").symlink_to(tmp_path / "nowhere.json")
    code, _, err = uninstall(stet, root, "claude-code")
    assert code == 1 and "which does not exist" in err
    commit_files(repo, {".cursor/mcp.json": '{"mcpServers": {"stet": {}}}\n'})
    code, _, err = uninstall(stet, root, "cursor")
    assert code == 1 and "tracked by git" in err


def test_an_install_over_an_install_keeps_the_original(home: Path, root: Path) -> None:
    """Installed again with another command (a new `stet` on PATH), the record keeps the
    bytes from before the first install; an install over a file changed since records the
    file as it is then."""
    from stet_lsp.mcp.install import apply
    from stet_lsp.mcp.uninstall import apply_removal, plan_removal

    environment = Environment(home, {}, "linux")
    config = home / ".claude.json"
    original = b'{"numStartups": 1, "projects": {}}'
    config.write_bytes(original)
    for command in (["/a/stet"], ["/b/stet"]):
        apply(plan("claude-code", directory=root, environment=environment, command=command))
    removal = plan_removal("claude-code", directory=root, environment=environment)
    assert removal.action == "restore" and removal.server["command"] == "/b/stet"
    apply_removal(removal)
    assert config.read_bytes() == original
    apply(plan("claude-code", directory=root, environment=environment, command=["/a/stet"]))
    changed = json.loads(config.read_text()) | {"numStartups": 2}
    config.write_text(json.dumps(changed, indent=2) + "\n")
    apply(plan("claude-code", directory=root, environment=environment, command=["/b/stet"]))
    removal = plan_removal("claude-code", directory=root, environment=environment)
    assert removal.action == "update"  # the bytes recorded hold the first install's entry
    apply_removal(removal)
    expected = {"numStartups": 2, "projects": {str(root): {"mcpServers": {}}}}
    assert json.loads(config.read_text()) == expected


@pytest.mark.parametrize("existing", [True, False])
@pytest.mark.parametrize("linked", ["file", "folder"])
def test_an_install_after_the_file_moved_into_dotfiles_moves_its_record(
    home: Path, root: Path, existing: bool, linked: str
) -> None:
    """Installed, moved into a dotfiles repository and linked back, then installed again
    with another command: one record is left, under the file's new path, still holding the
    original; uninstall gives that back (a file install created stays, emptied) and leaves
    no record behind."""
    from stet_lsp.mcp.install import apply
    from stet_lsp.mcp.uninstall import apply_removal, plan_removal

    environment = Environment(home, {}, "linux")
    config = config_path("codex", "user", home, root)
    original = b'model = "m"\n'
    if existing:
        config.parent.mkdir()
        config.write_bytes(original)
    apply(plan("codex", directory=root, environment=environment, command=["/a/stet"]))
    dotfiles = home / "dotfiles"
    dotfiles.mkdir()
    if linked == "file":
        moved = dotfiles / config.name
        config.rename(moved)
        config.symlink_to(moved)
    else:
        moved = dotfiles / "codex" / config.name
        config.parent.rename(moved.parent)
        config.parent.symlink_to(moved.parent)
    apply(plan("codex", directory=root, environment=environment, command=["/b/stet"]))
    assert len(state_files(home)) == 1
    removal = plan_removal("codex", directory=root, environment=environment)
    assert removal.server["command"] == "/b/stet"
    apply_removal(removal)
    assert moved.read_bytes() == (original if existing else b"")
    assert state_files(home) == []


def test_uninstall_takes_out_a_record_left_under_the_path_the_client_names(
    home: Path, root: Path
) -> None:
    """Two records of one file, as an earlier version left them when a file moved and linked
    back since was installed again: uninstall takes both out."""
    from stet_lsp.mcp import records
    from stet_lsp.mcp.install import apply
    from stet_lsp.mcp.uninstall import apply_removal, plan_removal

    environment = Environment(home, {}, "linux")
    config = config_path("codex", "user", home, root)
    apply(plan("codex", directory=root, environment=environment, command=["/a/stet"]))
    [left] = state_files(home)
    moved = home / "dotfiles" / config.name
    moved.parent.mkdir()
    config.rename(moved)
    config.symlink_to(moved)
    installed = plan("codex", directory=root, environment=environment, command=["/a/stet"])
    record = json.loads(left.read_text()) | {"path": str(moved)}
    records.write(installed.state, record)
    assert len(state_files(home)) == 2
    apply_removal(plan_removal("codex", directory=root, environment=environment))
    assert state_files(home) == []


def test_a_record_keeps_no_secret_and_no_large_part_of_the_file(
    stet: Stet, home: Path, root: Path
) -> None:
    """A one-line `~/.claude.json` differs whole after the install: the record keeps only the
    digests when the lines that differ hold a secret or 4 KiB or more, and uninstall then
    takes out only the entry."""
    from stet_lsp.mcp import records

    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    config = home / ".claude.json"
    original = {"numStartups": 3, "env": {"GITHUB_TOKEN": token}, "projects": {}}
    config.write_text(json.dumps(original))
    code, _, err = install(stet, root, "claude-code")
    assert code == 0, err
    (state,) = state_files(home)
    record = json.loads(state.read_text())
    assert record["undo"] is None and record["before"] is not None
    assert token not in state.read_text()
    code, out, err = uninstall(stet, root, "claude-code")
    assert code == 0, err
    assert "the record keeps none of the original's lines" in out
    assert json.loads(config.read_text()) == original | {
        "projects": {str(root): {"mcpServers": {}}}
    }
    assert state_files(home) == []

    history = [{"display": f"prompt number {n}"} for n in range(200)]
    assert records.undo("{}\n", json.dumps({"history": history})) is None
    assert records.undo("{}\n", json.dumps({"history": history[:3]})) == [
        [0, 1, json.dumps({"history": history[:3]})]
    ]
    assert records.undo("{}\n", None) == []


@pytest.mark.parametrize(
    "damage",
    ["created_folders", "excluded", "undo", "nested", "large"],
)
def test_a_malformed_record_is_no_record(
    stet: Stet, home: Path, root: Path, repo: pygit2.Repository, damage: str
) -> None:
    """A record edited by hand (a field of another type, nested too deeply to parse, over
    1 MiB) is taken for none: install and uninstall run, uninstall takes out only the entry
    and leaves the exclude line."""
    config = root / ".cursor" / "mcp.json"
    assert install(stet, root, "cursor")[0] == 0  # creates the file and its folder
    (state,) = state_files(home)
    record = json.loads(state.read_text())
    if damage == "nested":
        state.write_text("[" * 100_000 + "]" * 100_000)
    elif damage == "large":
        state.write_text(json.dumps(record | {"padding": "x" * (1024 * 1024)}))
    else:
        bad: dict[str, Any] = {"created_folders": 5, "excluded": [1], "undo": "x"}
        state.write_text(json.dumps(record | {damage: bad[damage]}))
    for command in (install, uninstall):
        code, _, err = command(stet, root, "cursor")
        assert code == 0, err
        assert "Traceback" not in err
    assert json.loads(config.read_text()) == {"mcpServers": {}}
    assert exclude_bytes(repo) is not None and b"/.cursor/mcp.json" in exclude_bytes(repo)


@pytest.mark.parametrize("client", ["codex", "cursor"])
def test_a_file_changed_between_reading_and_writing_is_not_overwritten(
    stet: Stet, home: Path, root: Path, repo: pygit2.Repository, client: str
) -> None:
    """The client (or another `stet` command) writes the file after install read it: the
    install writes nothing over it, takes its record and exclude line back, and says so; the
    command line plans again and keeps the change. Uninstall the same."""
    from stet_lsp.core.errors import StetError
    from stet_lsp.mcp.install import apply
    from stet_lsp.mcp.uninstall import apply_removal, plan_removal

    environment = Environment(home, {}, "linux")
    config = config_path(client, "local", home, root)
    exclude_before = exclude_bytes(repo)
    planned = plan(client, "local", directory=root, environment=environment, command=["/a/stet"])
    config.parent.mkdir()
    changed = b'model = "m"\n' if client == "codex" else b'{"mcpServers": {}, "theirs": 1}\n'
    config.write_bytes(changed)
    with pytest.raises(StetError, match="changed while Stet wrote it"):
        apply(planned)
    assert config.read_bytes() == changed
    assert state_files(home) == [] and exclude_bytes(repo) == exclude_before
    assert install(stet, root, client, "--scope", "local")[0] == 0
    installed = config.read_text()
    assert "stet" in installed and ("model" in installed or "theirs" in installed)
    removal = plan_removal(client, "local", directory=root, environment=environment)
    config.write_text(installed + ("\n# mine\n" if client == "codex" else "\n"))
    with pytest.raises(StetError, match="changed while Stet wrote it"):
        apply_removal(removal)
    assert config.read_text().startswith(installed) and len(state_files(home)) == 1
    assert uninstall(stet, root, client, "--scope", "local")[0] == 0
    assert "stet" not in config.read_text() and state_files(home) == []


def test_mcp_and_hooks_installs_at_once_keep_each_others_change(home: Path, root: Path) -> None:
    """`stet mcp install codex` and `stet hooks install codex` run side by side write the
    same file: each wrote its change over what it read, and one was lost most times."""
    config = home / ".codex" / "config.toml"
    environment = {**os.environ, "PYTHONPATH": str(PROJECT), "HOME": str(home)}
    for _ in range(4):
        shutil.rmtree(config.parent, ignore_errors=True)
        config.parent.mkdir()
        config.write_text('model = "m"\n')
        commands = [["mcp", "install", "codex"], ["hooks", "install", "codex"]]
        started = [
            subprocess.Popen(
                [sys.executable, "-m", "stet_lsp", *command, "-C", str(root)],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                env=environment,
            )
            for command in commands
        ]
        for process in started:
            assert process.wait(timeout=60) == 0, process.stderr
        data = tomllib.loads(config.read_text())
        assert "stet" in data["mcp_servers"] and data["notify"][-1] == "codex-notify"
        assert data["model"] == "m"


def test_the_last_codex_uninstall_removes_what_either_install_created(
    stet: Stet, home: Path, root: Path
) -> None:
    """`stet mcp install codex` and `stet hooks install codex` write the same config: the
    second install inherits that the first created the file and `~/.codex`, so whichever
    uninstall comes last removes both, in every order. A file someone else wrote to since, or
    a folder that was there before, stays."""
    config = home / ".codex" / "config.toml"
    mcp, hooks = ("mcp",), ("hooks",)
    for first, second in ((mcp, hooks), (hooks, mcp)):
        for last in (first, second):
            assert stet(*first, "install", "codex", "-C", str(root))[0] == 0
            assert stet(*second, "install", "codex", "-C", str(root))[0] == 0
            for front in (second, first) if last is first else (first, second):
                assert stet(*front, "uninstall", "codex", "-C", str(root))[0] == 0
            assert not config.parent.exists(), (first, second, last)
    assert stet(*hooks, "install", "codex", "-C", str(root))[0] == 0
    assert stet(*mcp, "install", "codex", "-C", str(root))[0] == 0
    config.write_text(config.read_text() + "\n[tui]\nnotifications = true\n")
    assert stet(*mcp, "uninstall", "codex", "-C", str(root))[0] == 0
    assert stet(*hooks, "uninstall", "codex", "-C", str(root))[0] == 0
    assert tomllib.loads(config.read_text()) == {"tui": {"notifications": True}}
    config.unlink()
    assert stet(*mcp, "install", "codex", "-C", str(root))[0] == 0
    assert stet(*hooks, "install", "codex", "-C", str(root))[0] == 0
    assert stet(*hooks, "uninstall", "codex", "-C", str(root))[0] == 0
    assert stet(*mcp, "uninstall", "codex", "-C", str(root))[0] == 0
    assert not config.exists() and config.parent.is_dir()


def test_installs_at_once_each_keep_their_file_out_of_commits(
    home: Path, root: Path, repo: pygit2.Repository
) -> None:
    """`stet hooks install claude-code`, `stet mcp install cursor` and `stet mcp install
    vscode` run side by side each add a line to the repository's `info/exclude`: each wrote
    the file as it read it plus its line, so a line was lost and git showed (and would
    commit) that file. Uninstalls side by side take every line out again."""
    environment = {**os.environ, "PYTHONPATH": str(PROJECT), "HOME": str(home)}
    exclude_before = exclude_bytes(repo)

    def side_by_side(action: str) -> None:
        commands = [["hooks", action, "claude-code"], ["mcp", action, "cursor"]]
        commands.append(["mcp", action, "vscode"])
        started = [
            subprocess.Popen(
                [sys.executable, "-m", "stet_lsp", *command, "-C", str(root)],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                env=environment,
            )
            for command in commands
        ]
        for process in started:
            assert process.wait(timeout=60) == 0, process.stderr

    for _ in range(3):
        side_by_side("install")
        assert set(repo.status()) == {".stet/.gitignore"}
        side_by_side("uninstall")
        assert exclude_bytes(repo) == exclude_before


@pytest.mark.parametrize(
    ("commands", "line"),
    [
        ([["mcp", "install", "cursor"]], "/.cursor/mcp.json"),
        ([["hooks", "install", "claude-code"]], "/.claude/settings.local.json"),
        ([["mcp", "install", "cursor"], ["mcp", "uninstall", "cursor"]], None),
        ([["hooks", "install", "claude-code"], ["hooks", "uninstall", "claude-code"]], None),
    ],
)
def test_a_write_of_info_exclude_waits_for_another_of_stets_writers(
    home: Path, root: Path, repo: pygit2.Repository, commands: list[list[str]], line: str | None
) -> None:
    """Each of Stet's writers of `info/exclude` compared the file with what it read right
    before replacing it, but two could both pass the compare and the last replace won, losing
    the other's line. Each now holds Stet's lock on the file around the compare and the
    replace: while another holds it, the write waits, then finds the file changed, reads it
    again and keeps the other's line."""
    environment = {**os.environ, "PYTHONPATH": str(PROJECT), "HOME": str(home)}
    *earlier, command = commands
    for step in earlier:
        run = [sys.executable, "-m", "stet_lsp", *step, "-C", str(root)]
        subprocess.run(run, check=True, capture_output=True, env=environment)
    exclude = Path(repo.path) / "info" / "exclude"
    with exclusions.locked(Path(repo.path)):
        started = subprocess.Popen(
            [sys.executable, "-m", "stet_lsp", *command, "-C", str(root)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=environment,
        )
        with pytest.raises(subprocess.TimeoutExpired):
            started.wait(timeout=4)
        exclude.write_bytes(exclude.read_bytes() + b"/another-install\n")
    assert started.wait(timeout=60) == 0, started.stderr
    lines = exclude.read_text().splitlines()
    assert "/another-install" in lines
    assert (line in lines) if line is not None else not any(".cursor" in n for n in lines)
    assert sorted(path.name for path in exclude.parent.iterdir()) == ["exclude"]
    assert set(repo.status()) <= {".stet/.gitignore"}


def test_an_uninstall_whose_exclude_line_stayed_takes_it_out_when_run_again(
    stet: Stet, home: Path, root: Path, repo: pygit2.Repository
) -> None:
    """An uninstall that took the entry out but could not write `info/exclude` said to run
    it again, but the next one, finding no entry in the kept file, dropped the record (the
    only thing that knew the line was Stet's) and left the line. It takes the line out."""
    exclude_before = exclude_bytes(repo)
    config = root / ".cursor" / "mcp.json"
    config.parent.mkdir()
    config.write_text('{"mcpServers": {"docs": {"command": "docs-mcp"}}}\n')
    assert install(stet, root, "cursor")[0] == 0
    in_the_way = Path(repo.path) / "info" / exclusions.LOCK_NAME
    in_the_way.mkdir()  # no lock file can be opened there: the exclude write fails
    code, _, err = stet("mcp", "uninstall", "cursor", "-C", str(root))
    assert code != 0 and exclusions.LOCK_NAME in err
    assert "stet" not in json.loads(config.read_text())["mcpServers"]
    in_the_way.rmdir()
    code, out, err = stet("mcp", "uninstall", "cursor", "-C", str(root))
    assert code == 0, err
    assert "took /.cursor/mcp.json out of" in out
    assert "is kept, and no longer out of commits" in out
    assert exclude_bytes(repo) == exclude_before
    assert ".cursor/mcp.json" in repo.status()


def test_the_last_uninstall_removes_the_folders_install_made_for_its_records(
    stet: Stet, home: Path, root: Path
) -> None:
    """The records' folder goes with the last record, and so do the empty folders above it
    that install made; a folder Stet did not make stays, empty or not."""
    assert install(stet, root, "cursor", "--scope", "user")[0] == 0
    assert install(stet, root, "codex")[0] == 0
    assert uninstall(stet, root, "cursor", "--scope", "user")[0] == 0
    assert len(state_files(home)) == 1
    assert uninstall(stet, root, "codex")[0] == 0
    assert not (home / ".local").exists()

    (home / ".local" / "state").mkdir(parents=True)
    assert install(stet, root, "cursor", "--scope", "user")[0] == 0
    folder = home / ".local" / "state" / "stet" / "mcp"
    assert (folder / "created-folders.json").stat().st_mode & 0o777 == 0o600
    assert uninstall(stet, root, "cursor", "--scope", "user")[0] == 0
    assert list((home / ".local").rglob("*")) == [home / ".local" / "state"]

    folder.mkdir(parents=True)  # by hand: no note of Stet's making it
    assert install(stet, root, "cursor", "--scope", "user")[0] == 0
    assert uninstall(stet, root, "cursor", "--scope", "user")[0] == 0
    assert folder.is_dir() and list(folder.iterdir()) == []


def test_a_state_folder_through_a_link_stops_the_install_before_any_write(
    stet: Stet, home: Path, root: Path, repo: pygit2.Repository, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (home / ".local" / "state").mkdir(parents=True)
    (home / ".local" / "state" / "stet").symlink_to(elsewhere)
    exclude_before = exclude_bytes(repo)
    code, out, err = install(stet, root, "cursor")
    assert code == 1 and out == ""
    assert "cannot be written to" in err and "is a symbolic link" in err
    assert list(elsewhere.iterdir()) == [] and not (root / ".cursor").exists()
    assert exclude_bytes(repo) == exclude_before


@pytest.mark.parametrize(
    ("content", "left"),
    [
        (
            '[a]\nx = 1\n\n[mcp_servers.stet]\ncommand = "s"\n\n[b]\ny = 2\n',
            "[a]\nx = 1\n\n[b]\ny = 2\n",
        ),
        (
            '[mcp_servers.stet]\ncommand = "s"\n\n# docs\n[mcp_servers.docs]\ncommand = "d"\n',
            '# docs\n[mcp_servers.docs]\ncommand = "d"\n',
        ),
        ('a = 1\n\n[mcp_servers.stet]\ncommand = "s"\n', "a = 1\n"),
    ],
)
def test_a_toml_entry_without_a_record_goes_with_its_lines(
    stet: Stet, home: Path, root: Path, content: str, left: str
) -> None:
    config = home / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text(content)
    assert uninstall(stet, root, "codex")[0] == 0
    assert config.read_text() == left


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT is a POSIX signal")
def test_an_interrupt_ends_the_server_at_once(workspace: Path) -> None:
    """SIGINT (Ctrl-C) cancelled the server, which then answered nothing and did not end
    until another line came on its input (the thread reading it cannot be stopped): it now
    ends at once, as on SIGTERM, saying so."""
    server = subprocess.Popen(
        [sys.executable, "-m", "stet_lsp", "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=workspace,
        env={**os.environ, "PYTHONPATH": str(PROJECT)},
    )
    try:
        assert server.stdin is not None and server.stdout is not None
        server.stdin.write(json.dumps(INITIALIZE).encode() + b"\n")
        server.stdin.flush()
        assert json.loads(server.stdout.readline())["id"] == 1  # serving, its input open
        server.send_signal(signal.SIGINT)
        assert server.wait(timeout=20) == 130
        assert server.stderr is not None
        assert server.stderr.read().decode() == (
            "stet mcp: interrupted; no file is left half-written\n"
        )
    finally:
        server.kill()
        server.wait()


def test_a_folder_removed_while_serving_is_named_in_each_error(tmp_path: Path) -> None:
    """The server's folder removed under it (a worktree taken away while the agent runs):
    each call says it is in no repository, naming the folder, where each was an internal
    error (FileNotFoundError: the working folder could not be read) with a traceback."""
    root = Path(make_repo(tmp_path / "gone", files={"a.txt": "a\n"}).workdir).resolve()
    with serving(root) as client:
        assert client.ok("add_note", {"text": "Written before the folder went."})["entry"]
        shutil.rmtree(root)
        message = client.error("add_note", {"text": "Written after."})
        assert message == f"stet: error: not inside a git repository: {root}"


def test_a_server_started_in_a_folder_that_is_not_there_answers_and_names_it_per_call(
    tmp_path: Path, stet: Stet
) -> None:
    """`stet mcp -C DIR` with a DIR that is not there (a worktree removed, a client that
    passed `${workspaceFolder}` unexpanded) exited 1 before answering `initialize`, which a
    client shows only as "failed to start"; a server outside a repository serves, each call
    saying why it fails. It now serves the same way, naming the folder, with `stet -C DIR`
    before the command too. Install and uninstall still refuse such a folder."""
    missing = tmp_path / "removed-worktree"
    with serving(tmp_path, "-C", str(missing)) as client:
        assert client.started.server_info.name
        assert client.error("list_notes") == f"stet: error: not inside a git repository: {missing}"
    with serving(tmp_path, "-C", WORKSPACE) as client:
        assert client.error("get_brief") == (
            f"stet: error: not inside a git repository: {tmp_path / WORKSPACE}"
        )
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "stet_lsp", "-C", str(missing), "mcp", "-C", "sub"],
        cwd=str(tmp_path),
        env={"PYTHONPATH": str(PROJECT)},
    )
    with (
        start_blocking_portal() as portal,
        portal.wrap_async_context_manager(stdio_client(params)) as (read, write),
        portal.wrap_async_context_manager(ClientSession(read, write)) as session,
    ):
        client = Client(portal, session, portal.call(session.initialize))
        message = client.error("list_notes")
        assert message == f"stet: error: not inside a git repository: {missing / 'sub'}"
    for action in ("install", "uninstall"):
        code, _, err = stet("mcp", action, "cursor", "-C", str(missing))
        assert code == 1 and f"cannot change to {missing}" in err


def test_a_server_started_in_a_folder_removed_before_it_started_still_answers(
    tmp_path: Path,
) -> None:
    """A client that starts the server in a folder removed meanwhile (the working folder
    cannot be read, so nothing names it): the server exited with `stet: error: No such file
    or directory` before answering `initialize`. It now answers, and each call says why it
    cannot work; a relative `-C` below that folder too."""
    folder = tmp_path / "removed"
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call"}
    call["params"] = {"name": "list_notes", "arguments": {}}
    payload = "".join(json.dumps(m) + "\n" for m in (INITIALIZE, initialized, call))
    for args in ([], ["-C", "sub"]):
        folder.mkdir()
        done = subprocess.run(
            [sys.executable, "-m", "stet_lsp", "mcp", *args],
            input=payload.encode(),
            capture_output=True,
            cwd=folder,
            preexec_fn=folder.rmdir,  # in the child, once it is in the folder
            env={**os.environ, "PYTHONPATH": str(PROJECT)},
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        answers = {m["id"]: m for m in map(json.loads, done.stdout.decode().splitlines())}
        assert answers[1]["result"]["serverInfo"]["name"]
        assert answers[2]["result"]["isError"]
        assert answers[2]["result"]["content"][0]["text"] == (
            "stet: error: the folder this server was started in no longer exists; start it "
            "again in a repository's work tree (or give it -C DIR)"
        )
