"""Trajectory commands in the server: import (with work-done progress past a second), the
sessions and the trajectories, answering as `stet trajectory … --json` does."""

from __future__ import annotations

import json
import shutil
from functools import partial
from pathlib import Path
from typing import Any

import pygit2
import pytest
import pytest_lsp
from claude_transcript import SESSION, working_session
from lsp_harness import CLIENTS, SERVER, execute, open_file, start, type_text, uri
from lsp_pipe import PipeServer
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient
from samples import sample
from trajectory_meta import summary

from stet_lsp.core.sheet import StyleSheet
from stet_lsp.core.targets import resolve_target
from stet_lsp.trajectory.events import (
    AgentMessage,
    EventBase,
    FileChange,
    SessionStart,
    SourceRef,
    Subagent,
    ToolCall,
    ToolResult,
    UserMessage,
    event_json,
)
from stet_lsp.trajectory.meta import TargetRef
from stet_lsp.trajectory.narration import render
from stet_lsp.trajectory.store import working_folder

CLAUDE = "claude-code/entireio-cli__37_995ebed6e4_0_full.jsonl"
CLAUDE_SESSION = "48f428f9-72d8-40b2-9594-953019809473"


@pytest.fixture(params=["written", "public sample"])
def transcript(request: pytest.FixtureRequest, root: Path, tmp_path: Path) -> tuple[Path, str]:
    """(a Claude Code session file, its session id): a short one written here, which runs
    everywhere, and the public sample (skipped where it is absent)."""
    if request.param == "written":
        return working_session(root, tmp_path / f"{SESSION}.jsonl"), SESSION
    return sample(CLAUDE), CLAUDE_SESSION


@pytest_lsp.fixture(config=SERVER, params=CLIENTS)
async def client(request: pytest.FixtureRequest, lsp_client: LanguageClient):  # type: ignore[no-untyped-def]
    await start(lsp_client, request.param)
    yield
    await lsp_client.shutdown_session()


async def test_import_answers_as_the_command_line_and_twice_changes_nothing(
    client: LanguageClient, root: Path, transcript: tuple[Path, str]
) -> None:
    source, session = transcript
    first = await execute(client, "stet.trajectory.import", uri=uri(root), path=str(source))
    assert first["format"] == "claude-code"
    assert first["session"] == session
    assert first["changed"] is True and first["events"] > 5
    folder = working_folder(resolve_target(root))
    assert first["folder"] == str(folder.relative)
    events = (folder.path / "events.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["step"] for line in events] == list(range(1, first["events"] + 1))
    again = await execute(client, "stet.trajectory.import", uri=uri(root), path=str(source))
    assert again["changed"] is False

    listed = await execute(client, "stet.trajectory.list", uri=uri(root))
    [row] = listed["trajectories"]
    assert (row["id"], row["working"], row["steps"]) == (folder.id, True, first["events"])

    opened = await execute(client, "stet.trajectory.open", uri=uri(root))
    assert opened["uri"] == uri(folder.path / "narration.md")
    opened = await execute(
        client, "stet.trajectory.open", uri=uri(root), id=folder.id[:12], file="events"
    )
    assert opened["uri"] == uri(folder.path / "events.jsonl")
    opened = await execute(client, "stet.trajectory.open", uri=uri(root), file="meta")
    assert (opened["uri"], opened["line"]) == (uri(folder.path / "meta.json"), 0)
    # meta.json shows no step: one asked for there is refused, not taken for its top.
    with pytest.raises(
        JsonRpcException, match=r"meta\.json holds no steps: open it without step 2"
    ):
        await execute(client, "stet.trajectory.open", uri=uri(root), file="meta", step=2)
    with pytest.raises(JsonRpcException, match="'file' is one of narration, events, meta"):
        await execute(client, "stet.trajectory.open", uri=uri(root), file="other")
    with pytest.raises(JsonRpcException, match="no trajectory 'nope'"):
        await execute(client, "stet.trajectory.open", uri=uri(root), id="nope")


async def test_a_relative_path_is_the_repository_s(
    client: LanguageClient, root: Path, tmp_path: Path
) -> None:
    # The server's own working folder is wherever the editor started it.
    working_session(root, root / "sessions" / f"{SESSION}.jsonl")
    imported = await execute(
        client, "stet.trajectory.import", uri=uri(root), path=f"sessions/{SESSION}.jsonl"
    )
    assert imported["session"] == SESSION and imported["changed"] is True


async def test_bad_import_arguments_fail_the_request_and_the_server_goes_on(
    client: LanguageClient, root: Path, tmp_path: Path
) -> None:
    unknown = tmp_path / "notes.txt"
    unknown.write_text("just some text\n", encoding="utf-8")
    with pytest.raises(JsonRpcException, match="not a transcript of a known format"):
        await execute(client, "stet.trajectory.import", uri=uri(root), path=str(unknown))
    with pytest.raises(JsonRpcException, match="give one of"):
        await execute(client, "stet.trajectory.import", uri=uri(root))
    with pytest.raises(JsonRpcException, match="argument 'uri' is empty"):
        await execute(client, "stet.trajectory.import", uri="", latest=True)
    # An empty path is none, as on the command line (not the repository's own folder).
    with pytest.raises(JsonRpcException, match="give one of"):
        await execute(client, "stet.trajectory.import", uri=uri(root), path="")
    with pytest.raises(JsonRpcException, match="must be"):
        await execute(client, "stet.trajectory.import", uri=uri(root), path=7)
    listed = await execute(client, "stet.trajectory.list", uri=uri(root))
    assert listed == {"version": 1, "trajectories": [], "problems": []}


async def test_a_long_import_reports_work_done_progress(
    client: LanguageClient, root: Path, tmp_path: Path, transcript: tuple[Path, str]
) -> None:
    """A session of some 20 MB (a session's records over and over, each with its own ids)
    takes well over the one second after which progress shows."""
    records = [
        json.loads(line)
        for line in transcript[0].read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    lines = []
    for copy in range(len(records) and 20_000_000 // sum(len(json.dumps(r)) for r in records)):
        for number, record in enumerate(records):
            if "uuid" in record:
                record = {**record, "uuid": f"{copy:08d}-0000-4000-8000-{number:012d}"}
            if isinstance(record.get("message"), dict) and "id" in record["message"]:
                record = {**record, "message": {**record["message"], "id": f"msg_{copy}_{number}"}}
            lines.append(json.dumps(record))
    big = tmp_path / "big.jsonl"
    big.write_text("\n".join(lines) + "\n", encoding="utf-8")

    result = await execute(client, "stet.trajectory.import", uri=uri(root), path=str(big))
    assert result["changed"] is True and result["events"] > 10_000
    reports = [
        report
        for token, reports in client.progress_reports.items()
        if str(token).startswith("stet-")
        for report in reports
    ]
    kinds = [report.kind for report in reports]
    assert kinds[0] == "begin" and kinds[-1] == "end"
    assert reports[0].title == "Stet: importing an agent session"
    # The phase is in a report, or in the begin when it came before the client took the token.
    assert "composing" in {report.message for report in reports if report.kind != "end"}


async def test_a_step_is_not_marked_into_a_sheet_git_tracks(
    client: LanguageClient, root: Path, tmp_path: Path
) -> None:
    """With `toSheet`, a sheet git's index holds is refused before the verdict is written,
    by step and by line alike: nothing is recorded."""
    source = working_session(root, tmp_path / f"{SESSION}.jsonl")
    await execute(client, "stet.trajectory.import", uri=uri(root), path=str(source))
    folder = working_folder(resolve_target(root))
    sheet = StyleSheet(resolve_target(root))
    with sheet.edit():  # the file, for git to hold
        pass
    relative = sheet.path.relative_to(root).as_posix()
    repo = pygit2.Repository(str(root))
    repo.index.add(relative)  # git add -f
    repo.index.write()
    before = sheet.path.read_bytes()
    events = uri(folder.path / "events.jsonl")
    for arguments in ({"uri": uri(root), "step": 1}, {"uri": events, "line": 0}):
        with pytest.raises(JsonRpcException, match=f"git's index holds {relative}"):
            await execute(client, "stet.step.mark", verdict="clever", toSheet=True, **arguments)
    assert sheet.path.read_bytes() == before
    assert not (root / ".stet" / "feedback" / f"{folder.id}.jsonl").exists()
    marked = await execute(client, "stet.step.mark", uri=uri(root), step=1, verdict="clever")
    assert marked["entry"] is None


async def test_a_step_is_marked_from_its_line_in_events_or_narration(
    client: LanguageClient, root: Path, transcript: tuple[Path, str]
) -> None:
    await execute(client, "stet.trajectory.import", uri=uri(root), path=str(transcript[0]))
    folder = working_folder(resolve_target(root))
    events = folder.path / "events.jsonl"
    line = next(
        number
        for number, text in enumerate(events.read_text(encoding="utf-8").split("\n"))
        if '"kind":"tool_call"' in text
    )
    step = json.loads(events.read_text(encoding="utf-8").split("\n")[line])["step"]
    token = "ghp_" + "A1b2C3d4E5" * 3 + "F6g7H8"
    marked = await execute(
        client,
        "stet.step.mark",
        uri=uri(events),
        line=line,
        verdict="wrong",
        text=f"it pasted {token}",
        toSheet=True,
    )
    assert marked["verdict"]["step"] == step and marked["verdict"]["verdict"] == "wrong"
    assert marked["entry"]["kind"] == "markup"
    feedback = (root / ".stet" / "feedback" / f"{folder.id}.jsonl").read_text(encoding="utf-8")
    assert token not in feedback and "[REDACTED:github-token#1]" in feedback
    assert token not in resolve_target(root).sheet_path.read_text(encoding="utf-8")

    narration = folder.path / "narration.md"
    anchor = f'<a id="step-{step}"></a>'
    below = next(
        number
        for number, text in enumerate(narration.read_text(encoding="utf-8").split("\n"))
        if anchor in text
    )
    marked = await execute(
        client, "stet.step.mark", uri=uri(narration), line=below, verdict="clever"
    )
    assert marked["verdict"]["step"] == step and marked["entry"] is None
    # The verdict as the feedback file holds it (no text: none given), as `stet trajectory
    # mark --json` and the MCP tool give it.
    written = (root / ".stet" / "feedback" / f"{folder.id}.jsonl").read_text(encoding="utf-8")
    assert marked["verdict"] == json.loads(written.splitlines()[-1])
    assert "text" not in marked["verdict"]
    with pytest.raises(JsonRpcException, match="not a file of a trajectory"):
        await execute(
            client, "stet.step.mark", uri=uri(root / "src" / "app.py"), line=0, verdict="note"
        )
    with pytest.raises(JsonRpcException, match="no step at line 1"):
        await execute(client, "stet.step.mark", uri=uri(narration), line=0, verdict="clever")


async def test_capstone_commits_the_working_trajectory_and_refuses_clearly(
    client: LanguageClient, root: Path, transcript: tuple[Path, str], tmp_path: Path
) -> None:
    import pygit2

    repository = pygit2.Repository(str(root))
    repository.config["user.name"] = "Reviewer"
    repository.config["user.email"] = "reviewer@example.invalid"
    head = repository.head.target
    await execute(client, "stet.trajectory.import", uri=uri(root), path=str(transcript[0]))
    working = working_folder(resolve_target(root)).path
    kept = tmp_path / "kept"
    shutil.copytree(working, kept)

    dry = await execute(client, "stet.capstone", uri=uri(root), dryRun=True)
    assert dry["dry_run"] is True and repository.head.target == head
    done = await execute(client, "stet.capstone", uri=uri(root))
    assert done["trajectory"] == dry["trajectory"] and done["version"] == 1
    commit = repository[repository.head.target]
    assert str(commit.id) == done["commit"] and commit.parents[0].id == head
    assert f"Stet-Trajectory: {done['trajectory']}" in commit.message
    committed = {p["path"] for p in done["paths"]}
    assert committed == {
        f".stet/trajectories/{done['trajectory']}/{name}"
        for name in ("events.jsonl", "meta.json", "narration.md")
    } | {".stet/.gitignore"}  # the first capstone's
    with pytest.raises(JsonRpcException, match="no working trajectory") as refused:
        await execute(client, "stet.capstone", uri=uri(root))
    assert refused.value.data == {"reason": "no-working-trajectory"}  # docs/cli.md's names
    assert repository.head.target == commit.id

    # The working trajectory is back (as when archiving it failed): HEAD holds it, so the
    # capstone only archives it, and says so as it says a commit.
    kept.rename(working)
    again = await execute(client, "stet.capstone", uri=uri(root))
    assert again["changed"] is False and again["commit"] is None and again["archived"]
    assert repository.head.target == commit.id
    said = [m.message for m in client.messages if done["trajectory"] in m.message]
    assert any("is already committed; its working copy is archived" in m for m in said), said


async def test_capstone_commits_a_deleted_branch_s_or_a_left_detached_head_s_by_name(
    client: LanguageClient, root: Path, tmp_path: Path
) -> None:
    """The working trajectory of a deleted branch, or of a detached HEAD that HEAD left, was
    committed only by `stet capstone --target NAME`: the server's command took no target.
    `target` names it as `--target` does, with the same result and refusals."""
    import subprocess

    import pygit2

    repository = pygit2.Repository(str(root))
    repository.config["user.name"] = "Reviewer"
    repository.config["user.email"] = "reviewer@example.invalid"
    git = partial(subprocess.run, cwd=root, check=True, capture_output=True)
    git(["git", "switch", "-q", "-c", "topic"])
    source = working_session(root, tmp_path / f"{SESSION}.jsonl")
    await execute(client, "stet.trajectory.import", uri=uri(root), path=str(source))
    branch_left = working_folder(resolve_target(root))
    git(["git", "switch", "-q", "main"])
    git(["git", "branch", "-q", "-D", "topic"])
    git(["git", "checkout", "-q", "--detach"])
    other = working_session(root, tmp_path / "other.jsonl", session=SESSION.replace("1", "2"))
    await execute(client, "stet.trajectory.import", uri=uri(root), path=str(other))
    detached = resolve_target(root)
    assert detached.kind == "detached"
    git(["git", "switch", "-q", "-c", "next", "main"])
    next_head = repository.head.target

    with pytest.raises(JsonRpcException, match="stet capstone --target topic commits it here"):
        await execute(client, "stet.capstone", uri=uri(root))
    with pytest.raises(JsonRpcException, match="nosuch has no working trajectory") as refused:
        await execute(client, "stet.capstone", uri=uri(root), target="nosuch")
    assert refused.value.data == {"reason": "no-working-trajectory"}
    assert "stet trajectory list lists the working trajectories" in str(refused.value)
    # A branch's name is a target of its own, as `--target` takes it: the refusal says so.
    with pytest.raises(JsonRpcException, match="the branch next's own is committed with no"):
        await execute(client, "stet.capstone", uri=uri(root), target="next")
    with pytest.raises(JsonRpcException, match="a target name cannot be empty"):
        await execute(client, "stet.capstone", uri=uri(root), target="")
    assert repository.head.target == next_head

    done = await execute(client, "stet.capstone", uri=uri(root), target="topic")
    assert (done["target"]["kind"], done["target"]["name"]) == ("branch", "topic")
    assert done["branch"] == "next"
    commit = repository[repository.head.target]
    assert str(commit.id) == done["commit"] and commit.parents[0].id == next_head
    assert not branch_left.path.exists()
    # The same result as the command line's for the same operation.
    dry = await execute(client, "stet.capstone", uri=uri(root), target=detached.name, dryRun=True)
    assert dry["target"]["key"] == detached.key and dry["dry_run"] is True
    done = await execute(client, "stet.capstone", uri=uri(root), target=detached.name)
    assert done["target"]["key"] == detached.key and done["commit"]
    assert not working_folder(detached).path.exists()
    listed = await execute(client, "stet.trajectory.list", uri=uri(root))
    assert [row["working"] for row in listed["trajectories"]] == [False, False]


async def test_graduation_from_code_actions_and_the_review(
    client: LanguageClient, root: Path
) -> None:
    import pygit2
    from lsp_harness import open_file
    from lsprotocol import types

    from stet_lsp.core.sheet import StyleSheet

    sheet = StyleSheet(resolve_target(root))
    convention = sheet.add(
        "Errors are wrapped with context at package boundaries.", kind="convention"
    )
    ruled_out = sheet.add("Tried a global retry decorator: it retried writes.", kind="ruled-out")
    later = sheet.add("Check the cache headers before the release.", kind="note")
    document = open_file(client, sheet.path, "markdown")

    async def actions_at(entry_id: str) -> list[types.CodeAction]:
        line = next(
            n
            for n, text in enumerate(sheet.path.read_text().split("\n"))
            if f"id={entry_id}" in text
        )
        here = types.Position(line=line, character=0)
        found = await client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=document),
                range=types.Range(start=here, end=here),
                context=types.CodeActionContext(diagnostics=[]),
            )
        )
        return [a for a in found or [] if isinstance(a, types.CodeAction)]

    skill_action = next(a for a in await actions_at(convention.id) if "as a skill" in a.title)
    assert skill_action.command is not None
    # A client without the action (a tree's menu) asks for the same proposal.
    asked = await execute(client, "stet.graduate.proposal", uri=uri(root), id=convention.id)
    proposed = skill_action.command.arguments[0]["proposedName"]  # type: ignore[index]
    assert (asked["proposed_name"], asked["entry"]["id"]) == (proposed, convention.id)
    with pytest.raises(JsonRpcException, match="no entry"):
        await execute(client, "stet.graduate.proposal", uri=uri(root), id="zzzz")
    result = await execute(
        client, skill_action.command.command, **skill_action.command.arguments[0]
    )  # type: ignore[index]
    assert result["skill"]["name"] == skill_action.command.arguments[0]["proposedName"]  # type: ignore[index]
    skill_path = result["skill"]["path"]
    assert (root / skill_path).read_text().startswith("---\nname: " + result["skill"]["name"])
    repository = pygit2.Repository(str(root))
    assert skill_path in [entry.path for entry in repository.index]
    assert sheet.get(convention.id).status == "graduated-skill"

    into = next(a for a in await actions_at(ruled_out.id) if "into the trajectory" in a.title)
    assert into.command is not None
    await execute(client, into.command.command, **into.command.arguments[0])  # type: ignore[index]
    events = lines_of_events(root)
    assert any(e["kind"] == "note" and e["entry_id"] == ruled_out.id for e in events)
    assert sheet.get(ruled_out.id).status == "graduated-trajectory"

    # A review written under the name reviews had before (the style sheet's) is replaced.
    old_review = root / ".stet" / "cache" / "graduation" / f"{resolve_target(root).key}.md"
    old_review.parent.mkdir(parents=True, exist_ok=True)
    old_review.write_text("an old review\n")
    reviewed = await execute(client, "stet.graduation.review", uri=uri(root))
    assert reviewed["entries"] == 1
    review_path = Path(reviewed["uri"].removeprefix("file://"))
    # Not named as the style sheet is (<target-key>.md): their tabs are told apart.
    assert review_path.name.endswith(".review.md"), review_path
    assert not old_review.exists()
    review_document = open_file(client, review_path, "markdown")
    line = next(n for n, t in enumerate(review_path.read_text().split("\n")) if later.id in t)
    here = types.Position(line=line, character=0)
    offered = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=review_document),
            range=types.Range(start=here, end=here),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    accept = next(
        a for a in offered or [] if isinstance(a, types.CodeAction) and later.id in a.title
    )
    assert accept.command is not None
    applied = await execute(client, accept.command.command, **accept.command.arguments[0])  # type: ignore[index]
    assert [r["entry"]["id"] for r in applied["results"]] == [later.id]
    assert sheet.get(later.id).status != "open"


def lines_of_events(root: Path) -> list[dict[str, object]]:
    events = working_folder(resolve_target(root)).path / "events.jsonl"
    return [json.loads(line) for line in events.read_text().split("\n") if line]


def write_working_events(root: Path, events: list[EventBase]) -> Path:
    """A working trajectory of `events` (steps numbered from 1), written as compose writes
    one; its events.jsonl."""
    target = resolve_target(root)
    folder = working_folder(target)
    for step, event in enumerate(events, 1):
        event.step = step
    meta = summary(events, folder.id, TargetRef(kind=target.kind, name=target.name, key=target.key))
    text = "".join(event_json(event) + "\n" for event in events)
    folder.write(text.encode("utf-8"), meta, render(meta.model_dump(mode="json"), events))
    return folder.path / "events.jsonl"


async def test_the_outline_command_gives_every_step_under_its_turn_and_subagent(
    client: LanguageClient, root: Path
) -> None:
    source = SourceRef(file="session.jsonl", line=1)
    common: dict[str, Any] = {"session": "s-1", "source": source}
    events_path = write_working_events(
        root,
        [
            SessionStart(**common, harness="claude-code"),
            UserMessage(**common, text="Add a retry helper"),
            ToolCall(**common, call_id="t1", name="Task", input={"prompt": "look"}),
            Subagent(**common, agent_id="a-1", call_id="t1", description="Look around"),
            AgentMessage(**common, agent="a-1", text="Found it."),
            ToolResult(**common, call_id="t1", output="Found it."),
            FileChange(
                **common, path="src/retry.py", operation="create", diff="@@ -0,0 +1 @@\n+x\n"
            ),
        ],
    )
    answer = await execute(client, "stet.trajectory.outline", uri=uri(root))
    folder = working_folder(resolve_target(root))
    assert (answer["version"], answer["trajectory"]) == (1, folder.id)
    assert answer["uri"] == uri(events_path)
    (session,) = answer["nodes"]
    assert (session["type"], session["detail"], session["step"]) == ("session", "s-1", 1)
    start, turn = session["children"]
    assert (start["type"], start["step"], start["kind"], start["line"]) == (
        "step",
        1,
        "session_start",
        0,
    )
    assert (turn["type"], turn["name"], turn["detail"]) == ("turn", "Add a retry helper", "turn 1")
    shown = [
        child.get("step") if child["type"] == "step" else child["name"]
        for child in turn["children"]
    ]
    assert shown == [2, 3, "a-1: Look around", 6, 7]
    subagent = turn["children"][2]
    assert [child["step"] for child in subagent["children"]] == [4, 5]
    change = turn["children"][4]
    assert (change["kind"], change["path"], change["operation"]) == (
        "file_change",
        "src/retry.py",
        "create",
    )
    # By id (a prefix does), and a trajectory that is not there.
    again = await execute(client, "stet.trajectory.outline", uri=uri(root), id=folder.id[:12])
    assert again == answer
    with pytest.raises(JsonRpcException, match="no trajectory 'nope'"):
        await execute(client, "stet.trajectory.outline", uri=uri(root), id="nope")


async def test_the_outline_command_without_a_trajectory_fails_and_the_server_goes_on(
    client: LanguageClient, root: Path
) -> None:
    # What to do, not where a file is missing.
    with pytest.raises(JsonRpcException, match="no working trajectory yet: import") as refused:
        await execute(client, "stet.trajectory.outline", uri=uri(root))
    assert ".stet/" not in str(refused.value)
    with pytest.raises(JsonRpcException, match="must be"):
        await execute(client, "stet.trajectory.outline", uri=uri(root), id=7)
    listed = await execute(client, "stet.trajectory.list", uri=uri(root))
    assert listed == {"version": 1, "trajectories": [], "problems": []}


def test_the_outline_command_answers_malformed_arguments_on_the_wire(
    raw: PipeServer, root: Path
) -> None:
    for number, arguments in enumerate(([1, 2], "nonsense", [{"uri": uri(root), "id": []}]), 2):
        raw.send(
            {
                "id": number,
                "method": "workspace/executeCommand",
                "params": {"command": "stet.trajectory.outline", "arguments": arguments},
            }
        )
        assert raw.answer(number)["error"]["code"] == -32602, arguments
    raw.send({"id": 9, "method": "shutdown"})
    assert raw.answer(9)["result"] is None


def test_arguments_outside_what_a_command_takes_are_refused(
    raw: PipeServer, root: Path, tmp_path: Path
) -> None:
    """An unknown harness, a negative line and an empty trajectory id are refused: no empty
    list of sessions, no line counted from the end, no working trajectory taken for ''."""
    from stet_lsp.trajectory.importing import import_transcript

    import_transcript(resolve_target(root), working_session(root, tmp_path / f"{SESSION}.jsonl"))
    events = working_folder(resolve_target(root)).path / "events.jsonl"
    refused = [
        ("stet.trajectory.sessions", {"uri": uri(root), "harness": "nope"}, -32602, "claude-code"),
        (
            "stet.trajectory.import",
            {"uri": uri(root), "latest": True, "harness": "nope"},
            -32602,
            "codex",
        ),
        (
            "stet.step.mark",
            {"uri": uri(events), "line": -5, "verdict": "wrong"},
            -32602,
            "0 or more",
        ),
        ("stet.trajectory.open", {"uri": uri(root), "id": ""}, -32803, "cannot be empty"),
        ("stet.trajectory.outline", {"uri": uri(root), "id": ""}, -32803, "cannot be empty"),
        (
            "stet.step.mark",
            {"uri": uri(root), "step": 1, "trajectory": "", "verdict": "note", "text": "x"},
            -32803,
            "cannot be empty",
        ),
        # A step given twice (its file's line and its number): which one is meant is unsaid.
        (
            "stet.step.mark",
            {"uri": uri(events), "line": 1, "step": 5, "verdict": "wrong"},
            -32602,
            "either",
        ),
    ]
    for number, (command, arguments, code, says) in enumerate(refused, 2):
        params = {"command": command, "arguments": [arguments]}
        raw.send({"id": number, "method": "workspace/executeCommand", "params": params})
        error = raw.answer(number)["error"]
        assert error["code"] == code and says in error["message"], (command, arguments, error)
    feedback = root / ".stet" / "feedback"
    assert not feedback.exists() or not any(feedback.iterdir())


async def test_the_list_moves_a_renamed_branch_s_trajectory_even_with_a_malformed_gate_file(
    client: LanguageClient, root: Path, tmp_path: Path
) -> None:
    """The list answers after a rename when the repository's gate configuration cannot be
    read: the trajectory moves to the new name, its composition left to the next import."""
    import pygit2

    source = working_session(root, tmp_path / f"{SESSION}.jsonl")
    await execute(client, "stet.trajectory.import", uri=uri(root), path=str(source))
    repo = pygit2.Repository(str(root))
    repo.branches.local[repo.head.shorthand].rename("renamed")
    (root / ".stet" / "gate.toml").write_text("strict = [\n", encoding="utf-8")

    listed = await execute(client, "stet.trajectory.list", uri=uri(root))

    [row] = listed["trajectories"]
    assert row["id"] == resolve_target(root).key


async def test_open_and_the_outline_place_steps_in_the_editor_s_unsaved_text(
    client: LanguageClient, root: Path, tmp_path: Path
) -> None:
    """The narration and events.jsonl open with unsaved lines above the steps: the line
    `stet.trajectory.open` selects and the outline's lines are the editor's, not the disk's."""
    from stet_lsp.trajectory.importing import import_transcript

    import_transcript(resolve_target(root), working_session(root, tmp_path / f"{SESSION}.jsonl"))
    folder = working_folder(resolve_target(root))
    narration = folder.path / "narration.md"
    events = folder.path / "events.jsonl"
    added = "Reviewed up to here.\n\nMore to read below.\n"
    narrated = open_file(client, narration, "markdown")
    type_text(client, narrated, added + narration.read_text(encoding="utf-8"))
    listed = open_file(client, events, "json")
    type_text(client, listed, "\n\n" + events.read_text(encoding="utf-8"))

    opened = await execute(client, "stet.trajectory.open", uri=uri(root), step=3)
    shown = client.buffers[narrated].text.split("\n")  # type: ignore[attr-defined]
    assert '<a id="step-3"></a>' in shown[opened["line"]]
    opened = await execute(client, "stet.trajectory.open", uri=uri(root), step=3, file="events")
    shown = client.buffers[listed].text.split("\n")  # type: ignore[attr-defined]
    assert json.loads(shown[opened["line"]])["step"] == 3

    tree = await execute(client, "stet.trajectory.outline", uri=uri(root))
    (session,) = tree["nodes"]
    assert session["line"] == 2
    steps = [child for child in session["children"] if child["type"] == "step"]
    assert steps and all(json.loads(shown[s["line"]])["step"] == s["step"] for s in steps)


def test_a_document_the_client_cannot_show_is_answered_as_not_shown(
    root: Path, tmp_path: Path
) -> None:
    """A client that answers window/showDocument with an error (a file it cannot open) gets
    the commands' answers with `shown` false, for it to open the file itself, not that
    error in place of them (the review was written all the same)."""
    from stet_lsp.trajectory.importing import import_transcript

    import_transcript(resolve_target(root), working_session(root, tmp_path / f"{SESSION}.jsonl"))
    server = PipeServer().initialize({"window": {"showDocument": {"support": True}}})
    try:
        commands = [
            ("stet.trajectory.open", {"uri": uri(root), "step": 3}),
            ("stet.sheet.open", {"uri": uri(root)}),
            ("stet.graduation.review", {"uri": uri(root)}),
        ]
        for number, (command, arguments) in enumerate(commands, 2):
            params = {"command": command, "arguments": [arguments]}
            server.send({"id": number, "method": "workspace/executeCommand", "params": params})
            asked = server.inbox.get(timeout=15)
            while asked.get("method") != "window/showDocument":
                if "method" in asked and "id" in asked:
                    server.send({"id": asked["id"], "result": None})
                asked = server.inbox.get(timeout=15)
            error = {"code": -32603, "message": "the editor could not open it"}
            server.send({"id": asked["id"], "error": error})
            answer = server.answer(number)
            assert "result" in answer, (command, answer)
            assert answer["result"]["shown"] is False
            assert answer["result"]["uri"] == asked["params"]["uri"]
    finally:
        server.close()


def test_a_document_the_client_never_shows_is_answered_as_not_shown(
    root: Path, tmp_path: Path
) -> None:
    """A client that never answers window/showDocument (an editor stuck on a dialog) still
    gets the command's answer, `shown` false, once the server stops waiting for it."""
    from stet_lsp.server.server import CLIENT_ANSWER_SECONDS
    from stet_lsp.trajectory.importing import import_transcript

    import_transcript(resolve_target(root), working_session(root, tmp_path / f"{SESSION}.jsonl"))
    server = PipeServer().initialize({"window": {"showDocument": {"support": True}}})
    try:
        params = {"command": "stet.trajectory.open", "arguments": [{"uri": uri(root), "step": 3}]}
        server.send({"id": 2, "method": "workspace/executeCommand", "params": params})
        asked = server.inbox.get(timeout=15)
        while asked.get("method") != "window/showDocument":
            if "method" in asked and "id" in asked:
                server.send({"id": asked["id"], "result": None})
            asked = server.inbox.get(timeout=15)
        answer = server.answer(2, timeout=CLIENT_ANSWER_SECONDS + 15)
        assert answer["result"]["shown"] is False
        assert answer["result"]["uri"] == asked["params"]["uri"]
        # The answer comes after all: taken and dropped, with no error in the log.
        server.send({"id": asked["id"], "result": {"success": True}})
        server.send({"id": 3, "method": "shutdown"})
        logged: list[dict[str, Any]] = []
        server.wait_for(lambda m: logged.append(m) or (m.get("id") == 3 and "result" in m))
        errors = [
            m["params"]["message"]
            for m in logged
            if m.get("method") == "window/logMessage" and m["params"]["type"] == 1
        ]
        assert errors == []
    finally:
        server.close()


async def test_a_step_marked_in_an_unsaved_events_file_is_the_one_its_line_shows(
    client: LanguageClient, root: Path, tmp_path: Path
) -> None:
    """events.jsonl open with unsaved edits while an earlier session is imported from outside:
    the steps on disk are numbered again (sessions go in the order they started), the
    editor's are not. A verdict on a line of the editor's text lands on the event that line
    shows, or is refused (reloaded, it is marked); never on the event now holding its
    number."""
    from datetime import timedelta

    from claude_transcript import START, Transcript

    from stet_lsp.trajectory.importing import import_transcript

    target = resolve_target(root)
    import_transcript(target, working_session(root, tmp_path / f"{SESSION}.jsonl"))
    events = working_folder(target).path / "events.jsonl"
    document = open_file(client, events, "json")
    shown = events.read_text(encoding="utf-8").split("\n")
    type_text(client, document, "\n".join(shown) + "\n")  # a blank line typed at the end
    line = next(n for n, text in enumerate(shown) if '"kind":"tool_call"' in text)
    meant = json.loads(shown[line])

    earlier = Transcript(root, "dddddddd-1111-4222-8333-444455556666", START - timedelta(days=1))
    earlier.user("First look at the layout.").say("It is a small package.")
    import_transcript(target, earlier.save(tmp_path / "earlier.jsonl"))

    with pytest.raises(JsonRpcException, match="changed on disk since the editor read it"):
        await execute(client, "stet.step.mark", uri=document, line=line, verdict="wrong")
    feedback = root / ".stet" / "feedback" / f"{working_folder(target).id}.jsonl"
    assert not feedback.exists()

    type_text(client, document, events.read_text(encoding="utf-8"))  # the editor reloads
    line = next(
        n
        for n, text in enumerate(events.read_text(encoding="utf-8").split("\n"))
        if text and json.loads(text)["source"] == meant["source"]
    )
    marked = await execute(client, "stet.step.mark", uri=document, line=line, verdict="wrong")
    verdict = marked["verdict"]
    assert (verdict["session"], verdict["source"]["line"]) == (
        meant["session"],
        meant["source"]["line"],
    )


async def test_a_step_named_as_a_provenance_lens_names_it_is_marked_in_that_trajectory(
    client: LanguageClient, root: Path, tmp_path: Path
) -> None:
    """A provenance lens names a step as `{uri, id, step}` (and `stet.trajectory.open` takes
    the trajectory as `id`): marked with those arguments, the step of that trajectory gets
    the verdict, not the working trajectory's step of the same number."""
    import pygit2

    repository = pygit2.Repository(str(root))
    repository.config["user.name"] = "Reviewer"
    repository.config["user.email"] = "reviewer@example.invalid"
    first = working_session(root, tmp_path / "first.jsonl")
    await execute(client, "stet.trajectory.import", uri=uri(root), path=str(first))
    committed = (await execute(client, "stet.capstone", uri=uri(root)))["trajectory"]
    second = working_session(
        root, tmp_path / "second.jsonl", "dddddddd-1111-4222-8333-444455556666"
    )
    await execute(client, "stet.trajectory.import", uri=uri(root), path=str(second))
    working = working_folder(resolve_target(root)).id

    lens = {"uri": uri(root / "src" / "app.py"), "id": committed, "step": 2}
    marked = await execute(client, "stet.step.mark", **lens, verdict="wrong")
    assert marked["verdict"]["trajectory"] == committed
    marked = await execute(client, "stet.step.mark", **lens, trajectory=committed, verdict="clever")
    assert marked["verdict"]["trajectory"] == committed
    with pytest.raises(JsonRpcException, match="once"):
        await execute(client, "stet.step.mark", **lens, trajectory=working, verdict="wrong")
