"""Provenance without code lenses: on any line an agent's step wrote, a code action opens that
step, running the lens's command with the lens's arguments; with the VS Code and Neovim 0.11
client capabilities, on a real repository."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from claude_transcript import Transcript, unplaced_session
from lsp_harness import CLIENTS, SERVER, edit_range, eventually, execute, open_file, start, uri
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pytest_lsp import LanguageClient
from repos import git_at
from test_server_trajectory_files import edit_session, lenses

from stet_lsp.core.targets import resolve_target
from stet_lsp.server.features.provenance import INLINE_LIMIT
from stet_lsp.trajectory.importing import import_transcript
from stet_lsp.trajectory.operations import line_origins
from stet_lsp.trajectory.store import COMMITTED, HEADER_LIMIT, working_folder

AGENT_LINE = 2  # 0-based: the line edit_session's step rewrote in src/app.py


@pytest_lsp.fixture(config=SERVER, params=CLIENTS)
async def client(request: pytest.FixtureRequest, lsp_client: LanguageClient):  # type: ignore[no-untyped-def]
    await start(lsp_client, request.param)
    yield
    await lsp_client.shutdown_session()


async def actions_at(client: LanguageClient, document: str, line: int) -> list[types.CodeAction]:
    here = types.Position(line=line, character=0)
    found = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=document),
            range=types.Range(start=here, end=here),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    return [
        action
        for action in found or []
        if isinstance(action, types.CodeAction)
        and action.command is not None
        and action.command.command == "stet.trajectory.open"
    ]


@pytest.mark.parametrize("size", ["small", "large"])
async def test_a_code_action_opens_the_step_that_wrote_the_line(
    client: LanguageClient, root: Path, tmp_path: Path, size: str
) -> None:
    """A large file (over INLINE_LIMIT characters) is attributed in a worker thread, as each
    edit changes it: the same answers, the loop free meanwhile."""
    app = root / "src" / "app.py"
    if size == "large":
        filler = "".join(f"filler_{n} = {n}  # a long generated module\n" for n in range(9000))
        app.write_text(app.read_text() + filler)
        assert len(app.read_text()) > INLINE_LIMIT
    import_transcript(resolve_target(root), edit_session(root, tmp_path))
    document = open_file(client, app)

    async def provenance_lens() -> list[types.CodeLens]:
        found = await lenses(client, document)
        return [lens for lens in found if lens.command and "agent: step" in lens.command.title]

    [lens] = await eventually(provenance_lens, timeout=15)
    assert lens.command is not None
    step = lens.command.arguments[0]["step"]  # type: ignore[index]
    trajectory = working_folder(resolve_target(root))

    [action] = await actions_at(client, document, AGENT_LINE)
    short = trajectory.id if len(trajectory.id) <= 32 else trajectory.id[:29] + "…"
    assert action.title == f"Open step {step} of {short} (narration)"
    assert action.kind == types.CodeActionKind.QuickFix
    assert action.command is not None
    # The lens's command, with the lens's arguments.
    assert action.command.arguments == lens.command.arguments
    assert list(action.command.arguments or []) == [
        {"uri": document, "id": trajectory.id, "step": step}
    ]
    # Lines the step did not write have none.
    assert await actions_at(client, document, AGENT_LINE - 1) == []
    assert await actions_at(client, document, AGENT_LINE + 1) == []

    opened = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(
            command=action.command.command, arguments=action.command.arguments
        )
    )
    narration = trajectory.path / "narration.md"
    assert opened["uri"] == uri(narration)
    assert f'<a id="step-{step}"></a>' in narration.read_text().split("\n")[opened["line"]]
    # The hover links to the step in the narration (an anchor, for Markdown previews) and on
    # its line of events.jsonl (`#L<n>`, the fragment editors open a file at).
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=document),
            position=types.Position(line=AGENT_LINE, character=0),
        )
    )
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    events = trajectory.path / "events.jsonl"
    links = f"[Open step {step}]({uri(narration)}#step-{step}) · [events]({uri(events)}#L{step})"
    assert hover.contents.value.endswith(links)
    assert " (as " not in hover.contents.value.split("\n", 1)[0]  # written at this path
    assert json.loads(events.read_text().split("\n")[step - 1])["step"] == step

    # The line moves with edits above it, and so does its action; rewritten, it has none.
    top = types.Position(line=0, character=0)
    edit_range(client, document, types.Range(start=top, end=top), "# reviewed\n")
    # At once, before a large text's worker attributes it again: its lens moved with it.
    now = await provenance_lenses(client, document)
    assert [lens.range.start.line for lens in now] == [AGENT_LINE + 1]

    async def moved() -> list[types.CodeAction] | None:
        found = await actions_at(client, document, AGENT_LINE + 1)
        return found or None

    [after] = await eventually(moved, timeout=10)
    assert after.command is not None and after.command.arguments == action.command.arguments
    line = types.Range(
        start=types.Position(line=AGENT_LINE + 1, character=0),
        end=types.Position(line=AGENT_LINE + 1, character=5),
    )
    edit_range(client, document, line, "total")

    async def gone() -> bool:
        return not await actions_at(client, document, AGENT_LINE + 1)

    await eventually(gone, timeout=10)


async def provenance_lenses(client: LanguageClient, document: str) -> list[types.CodeLens]:
    found = await lenses(client, document)
    return [lens for lens in found if lens.command and "agent: step" in lens.command.title]


async def test_a_trajectory_imported_from_outside_shows_without_typing(
    client: LanguageClient, root: Path, tmp_path: Path
) -> None:
    """The CLI (or an agent's hook) imports while the file is open: its lenses come with no
    edit of the document, found by the watcher's poll, and a client that can is asked to
    refresh its lenses."""
    source = edit_session(root, tmp_path)
    document = open_file(client, root / "src" / "app.py")
    await asyncio.sleep(0.5)  # the document is analysed with no trajectory yet
    assert await provenance_lenses(client, document) == []
    refreshes = getattr(client, "lens_refreshes", 0)
    imported = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "stet_lsp", "trajectory", "import", str(source)],
        cwd=root,
        capture_output=True,
        text=True,
    )
    assert imported.returncode == 0, imported.stderr
    [lens] = await eventually(lambda: provenance_lenses(client, document), timeout=15)
    assert lens.range.start.line == AGENT_LINE
    workspace = client.capabilities.workspace if client.capabilities else None
    if workspace and workspace.code_lens and workspace.code_lens.refresh_support:
        assert getattr(client, "lens_refreshes", 0) > refreshes


async def test_a_trajectory_the_import_command_wrote_shows_at_once(
    client: LanguageClient, root: Path, tmp_path: Path
) -> None:
    source = edit_session(root, tmp_path)
    document = open_file(client, root / "src" / "app.py")
    await asyncio.sleep(0.5)
    assert await provenance_lenses(client, document) == []
    await execute(client, "stet.trajectory.import", uri=document, path=str(source))
    [lens] = await eventually(lambda: provenance_lenses(client, document), timeout=5)
    assert lens.range.start.line == AGENT_LINE


async def test_an_oversized_meta_json_is_left_out_and_named(
    client: LanguageClient, root: Path, tmp_path: Path
) -> None:
    """A committed trajectory whose meta.json is over the limit (a sparse file: nothing of it
    is read): provenance comes from the others and the log names it; the list names it too."""
    import_transcript(resolve_target(root), edit_session(root, tmp_path))
    oversized = root / COMMITTED / "oversized"
    shutil.copytree(working_folder(resolve_target(root)).path, oversized)
    with (oversized / "meta.json").open("r+b") as stream:
        stream.truncate(HEADER_LIMIT + 1)
    document = open_file(client, root / "src" / "app.py")
    [lens] = await eventually(lambda: provenance_lenses(client, document), timeout=15)
    assert lens.range.start.line == AGENT_LINE

    def named() -> list[str]:
        return [
            log.message
            for log in client.log_messages
            if "oversized/meta.json" in log.message and "such a file may hold" in log.message
        ]

    assert await eventually(named)
    listed = await execute(client, "stet.trajectory.list", uri=document)
    assert [row["working"] for row in listed["trajectories"]] == [True]
    [problem] = listed["problems"]
    assert problem["path"] == ".stet/trajectories/oversized"
    assert f"over the {HEADER_LIMIT:,} such a file may hold" in problem["message"]


async def test_a_file_moved_with_a_plain_mv_keeps_its_lines(
    client: LanguageClient, root: Path, tmp_path: Path
) -> None:
    import_transcript(resolve_target(root), edit_session(root, tmp_path))
    app = root / "src" / "app.py"
    document = open_file(client, app)
    await eventually(lambda: provenance_lenses(client, document), timeout=15)
    moved = root / "src" / "main.py"
    app.rename(moved)  # neither HEAD nor the index changes
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=document))
    )
    renamed = open_file(client, moved)
    [lens] = await eventually(lambda: provenance_lenses(client, renamed), timeout=15)
    assert lens.range.start.line == AGENT_LINE
    # The hover names the path the step wrote, as `stet trajectory blame` does.
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=renamed),
            position=types.Position(line=AGENT_LINE, character=0),
        )
    )
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    first = hover.contents.value.split("\n", 1)[0]
    assert first.endswith(" (as `src/app.py`)")
    blamed = line_origins(root, moved, AGENT_LINE + 1)
    assert [run["written_as"] for run in blamed["runs"]] == ["src/app.py"]


async def test_lenses_follow_a_trajectory_moved_to_a_renamed_branch(
    client: LanguageClient, root: Path, tmp_path: Path
) -> None:
    """After `git branch -m`, the list moves the working trajectory to the branch's new key:
    the lenses name the moved trajectory (found by the watcher's poll), and open its step."""
    import pygit2

    import_transcript(resolve_target(root), edit_session(root, tmp_path))
    document = open_file(client, root / "src" / "app.py")
    [lens] = await eventually(lambda: provenance_lenses(client, document), timeout=15)
    old_id = working_folder(resolve_target(root)).id
    assert lens.command is not None and lens.command.arguments[0]["id"] == old_id  # type: ignore[index]
    repo = pygit2.Repository(str(root))
    repo.branches.local[repo.head.shorthand].rename("renamed")
    moved = working_folder(resolve_target(root))

    listed = await execute(client, "stet.trajectory.list", uri=document)
    assert [row["id"] for row in listed["trajectories"]] == [moved.id]

    async def renamed() -> list[types.CodeLens] | None:
        found = await provenance_lenses(client, document)
        named = [lens.command.arguments[0]["id"] for lens in found if lens.command]  # type: ignore[index]
        return found if named == [moved.id] else None

    [after] = await eventually(renamed, timeout=15)
    assert after.command is not None
    opened = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=after.command.command, arguments=after.command.arguments)
    )
    assert opened["uri"] == uri(moved.path / "narration.md")


def test_hunks_move_with_the_edits_made_since_they_were_found() -> None:
    """A large text's hunks, shown while a worker finds them again: moved by the lines an
    edit above added or removed; the lines an edit replaced leave their hunk (cut in two
    when the edit falls inside it)."""
    from stet_lsp.server.features.provenance import moved
    from stet_lsp.trajectory.provenance import ProvenanceHunk

    def hunk(first: int, last: int) -> ProvenanceHunk:
        return ProvenanceHunk(first, last, "t", 3, "src/app.py")

    found = [hunk(2, 4), hunk(10, 19)]
    assert moved(found, []) == found
    assert moved(found, [(0, 0, 1)]) == [hunk(3, 5), hunk(11, 20)]  # a line inserted above
    assert moved(found, [(0, 2, 0)]) == [hunk(0, 2), hunk(8, 17)]  # two lines removed above
    assert moved(found, [(3, 1, 1)]) == [hunk(2, 2), hunk(4, 4), hunk(10, 19)]  # typed in one
    assert moved(found, [(12, 1, 3)]) == [hunk(2, 4), hunk(10, 11), hunk(15, 21)]
    assert moved(found, [(25, 1, 1)]) == found  # below them all
    assert moved(found, [(0, 30, 30)]) == []  # the whole text replaced
    assert moved(found, [(0, 0, 1), (0, 0, 1)]) == [hunk(4, 6), hunk(12, 21)]


@pytest.mark.parametrize("asked", ["hover", "lenses"])
async def test_a_hover_or_lenses_asked_for_at_once_after_opening_hold_provenance(
    client: LanguageClient, root: Path, tmp_path: Path, asked: str
) -> None:
    """Asked for as soon as the file is opened, while the repository's trajectories are
    still being loaded: the hover waits for them, and so do the lenses of a client that
    cannot be asked to refresh them (Neovim 0.11, which showed none until it asked again);
    one that can gets them after a refresh. Two hundred committed copies of the trajectory
    make the load take long enough to be asked during it."""
    import_transcript(resolve_target(root), edit_session(root, tmp_path))
    working = working_folder(resolve_target(root)).path
    for number in range(200):
        shutil.copytree(working, root / COMMITTED / f"copy-{number}")
    document = open_file(client, root / "src" / "app.py")
    if asked == "hover":
        hover = await client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=document),
                position=types.Position(line=AGENT_LINE, character=0),
            )
        )
        assert hover is not None and isinstance(hover.contents, types.MarkupContent)
        assert hover.contents.value.startswith("**Written by step")
        return
    found = await provenance_lenses(client, document)
    workspace = client.capabilities.workspace if client.capabilities else None
    if workspace and workspace.code_lens and workspace.code_lens.refresh_support:
        found = await eventually(lambda: provenance_lenses(client, document), timeout=15)
    [lens] = found
    assert lens.range.start.line == AGENT_LINE


async def test_a_file_opening_with_a_byte_order_mark_is_attributed_as_on_the_command_line(
    client: LanguageClient, root: Path, tmp_path: Path
) -> None:
    """Editors hold a file without its byte order mark; the trajectory recorded it, and the
    command line reads it from disk: its first line is the step's all the same, in both."""
    written = "\ufeffimport os\nprint(os.getcwd())\n"
    transcript = Transcript(root)
    transcript.user("Print the working folder.")
    transcript.say("A two-line script.")
    transcript.write_file("toolu_01", f"{root}/src/where.py", written)
    (root / "src" / "where.py").write_bytes(written.encode())
    import_transcript(resolve_target(root), transcript.save(tmp_path / "bom.jsonl"))

    blamed = line_origins(root, root / "src" / "where.py")
    assert [(run["first_line"], run["last_line"]) for run in blamed["runs"]] == [(1, 2)]
    document = open_file(client, root / "src" / "where.py", text=written.removeprefix("\ufeff"))
    [lens] = await eventually(lambda: provenance_lenses(client, document), timeout=15)
    assert lens.range.start.line == 0
    assert lens.command is not None and lens.command.title.endswith(" wrote 2 lines")


async def test_a_skill_the_agent_wrote_is_attributed_as_on_the_command_line(
    client: LanguageClient, root: Path, tmp_path: Path
) -> None:
    """A `.stet/` file an agent may write (a skill) is any file's equal: its lines are the
    step's in the editor as in `stet trajectory blame`; Stet's own (the trajectory's files)
    have none."""
    skill = root / ".stet" / "skills" / "wrap-errors" / "SKILL.md"
    written = "---\nname: wrap-errors\ndescription: Wrap errors\n---\n\nWrap every error.\n"
    transcript = Transcript(root)
    transcript.user("Write a skill for wrapping errors.")
    transcript.say("A skill, then.")
    transcript.write_file("toolu_01", str(skill), written)
    skill.parent.mkdir(parents=True)
    skill.write_text(written)
    import_transcript(resolve_target(root), transcript.save(tmp_path / "skill.jsonl"))

    blamed = line_origins(root, skill)
    assert [(run["first_line"], run["last_line"]) for run in blamed["runs"]] == [(1, 6)]
    document = open_file(client, skill, "markdown")
    [lens] = await eventually(lambda: provenance_lenses(client, document), timeout=15)
    assert lens.range.start.line == 0
    assert lens.command is not None and lens.command.title.endswith(" wrote 6 lines")
    narration = open_file(client, working_folder(resolve_target(root)).path / "narration.md")
    await eventually(lambda: lenses(client, narration), timeout=10)
    assert await provenance_lenses(client, narration) == []


async def test_changes_that_could_not_be_placed_are_named_on_the_file_s_first_line(
    client: LanguageClient, root: Path, tmp_path: Path
) -> None:
    """An edit known only by its search and replace text, whose search text the file holds
    twice, has no one place: neither its lines nor those written before it are attributed.
    `stet trajectory blame` says so for each step; the editor showed no trace of either. A
    lens on the first line names each, as blame does, and opens its step; so does a code
    action there, for a client without lenses."""
    written = "one\ntwo\nthree\ntwo\n"
    transcript = Transcript(root)
    transcript.user("Write and fix u.py.")
    transcript.write_file("toolu_w", f"{root}/src/u.py", written)
    path = f"{root}/src/u.py"
    edit_input = {"file_path": path, "old_string": "two\n", "new_string": "TWO\n"}
    transcript.tool("toolu_e", "Edit", edit_input, f"The file {path} has been updated.")
    fixed = written.replace("two\n", "TWO\n", 1)
    (root / "src" / "u.py").write_text(fixed)
    import_transcript(resolve_target(root), transcript.save(tmp_path / "unplaced.jsonl"))

    blamed = line_origins(root, root / "src" / "u.py")
    assert blamed["runs"] == []
    said = [(item["step"], item["lines"], item["reason"]) for item in blamed["unattributed"]]
    assert len(said) == 2
    document = open_file(client, root / "src" / "u.py")
    found = await eventually(lambda: provenance_lenses(client, document), timeout=15)
    trajectory = working_folder(resolve_target(root)).id
    short = trajectory if len(trajectory) <= 32 else trajectory[:29] + "…"
    assert [(lens.range.start.line, lens.command and lens.command.title) for lens in found] == [
        (
            0,
            f"agent: step {step} of {short} changed {lines} line{'s' if lines != 1 else ''} "
            f"that could not be placed: {reason}",
        )
        for step, lines, reason in said
    ]
    assert [list(lens.command.arguments or []) for lens in found if lens.command] == [
        [{"uri": document, "id": trajectory, "step": step}] for step, _, _ in said
    ]
    actions = await actions_at(client, document, 0)
    assert [list(action.command.arguments or []) for action in actions if action.command] == [
        [{"uri": document, "id": trajectory, "step": step}] for step, _, _ in said
    ]
    assert await actions_at(client, document, 1) == []


@pytest.mark.parametrize("choice", [2, None])
async def test_many_changes_that_could_not_be_placed_are_one_lens_that_lists_them(
    client: LanguageClient, root: Path, tmp_path: Path, choice: int | None
) -> None:
    """Six changes that could not be placed made a row of six lenses on the file's first
    line, pushing the file out of view. Past three they are one lens (and one action there)
    saying how many, whose command lists them, worded as blame words them, for the user to
    pick one (`window/showMessageRequest`): the picked change's step opens in the narration,
    and a pick the user leaves opens nothing. With `pick: false` the command only lists them
    (VS Code offers them in a pick of its own: a message's thirty buttons are no pick)."""
    import_transcript(resolve_target(root), unplaced_session(root, tmp_path))
    said = [
        (item["step"], item["lines"], item["reason"])
        for item in line_origins(root, root / "src" / "u.py")["unattributed"]
    ]
    assert len(said) == 6
    trajectory = working_folder(resolve_target(root))
    short = trajectory.id if len(trajectory.id) <= 32 else trajectory.id[:29] + "…"
    titles = [
        f"agent: step {step} of {short} changed {lines} line{'s' if lines != 1 else ''} "
        f"that could not be placed: {reason}"
        for step, lines, reason in said
    ]
    asked: list[types.ShowMessageRequestParams] = []

    @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
    def pick(
        _: LanguageClient, params: types.ShowMessageRequestParams
    ) -> types.MessageActionItem | None:
        asked.append(params)
        return types.MessageActionItem(title=titles[choice]) if choice is not None else None

    document = open_file(client, root / "src" / "u.py")

    async def unplaced_lenses() -> list[types.CodeLens]:
        found = await lenses(client, document)
        return [lens for lens in found if lens.command and lens.command.title.startswith("agent")]

    [lens] = await eventually(unplaced_lenses, timeout=15)
    assert lens.range.start.line == 0 and lens.command is not None
    assert lens.command.title == "agent: 6 changes that could not be placed"
    assert lens.command.command == "stet.provenance.unplaced"
    assert list(lens.command.arguments or []) == [{"uri": document}]
    here = types.Position(line=0, character=0)
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=document),
            range=types.Range(start=here, end=here),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    commands = [
        action.command
        for action in actions or []
        if isinstance(action, types.CodeAction) and action.command is not None
    ]
    assert [(c.title, c.command, list(c.arguments or [])) for c in commands] == [
        (
            "Open the step of one of 6 changes that could not be placed",
            "stet.provenance.unplaced",
            [{"uri": document}],
        )
    ]

    listed = await execute(client, "stet.provenance.unplaced", uri=document, pick=False)
    assert asked == []
    assert [change["title"] for change in listed["changes"]] == titles
    assert listed["picked"] is None
    with pytest.raises(JsonRpcInvalidParams, match="argument 'pick' must be a bool"):
        await execute(client, "stet.provenance.unplaced", uri=document, pick="no")
    assert asked == []

    result = await execute(client, "stet.provenance.unplaced", uri=document)

    [question] = asked
    assert [action.title for action in question.actions or []] == titles
    assert "src/u.py" in question.message
    assert [change["title"] for change in result["changes"]] == titles
    assert [(c["step"], c["lines"], c["reason"]) for c in result["changes"]] == said
    if choice is None:
        assert result["picked"] is None
        return
    picked = result["picked"]
    step = said[choice][0]
    assert (picked["id"], picked["step"]) == (trajectory.id, step)
    narration = trajectory.path / "narration.md"
    assert picked["uri"] == uri(narration)
    assert f'<a id="step-{step}"></a>' in narration.read_text().split("\n")[picked["line"]]


async def test_a_lens_of_changes_no_longer_there_says_so_and_is_drawn_again(
    client: LanguageClient, root: Path, tmp_path: Path
) -> None:
    """The lens "agent: 6 changes that could not be placed" was drawn, then the trajectory
    went (discarded, imported again without them): running it listed nothing and VS Code,
    which offers the list in a pick of its own, showed nothing at all. The server tells the
    user the lens was out of date, whether it was asked to pick or only to list, and asks
    a client that can to draw its lenses again."""
    import_transcript(resolve_target(root), unplaced_session(root, tmp_path))
    asked: list[types.ShowMessageRequestParams] = []

    @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
    def pick(_: LanguageClient, params: types.ShowMessageRequestParams) -> None:
        asked.append(params)

    document = open_file(client, root / "src" / "u.py")
    # Run as soon as the file opens, it answers once the trajectories are loaded: an empty
    # list then would not be an out-of-date lens.
    listed = await execute(client, "stet.provenance.unplaced", uri=document, pick=False)
    assert len(listed["changes"]) == 6

    async def unplaced_lenses() -> list[types.CodeLens]:
        found = await lenses(client, document)
        return [lens for lens in found if lens.command and lens.command.title.startswith("agent")]

    [lens] = await eventually(unplaced_lenses, timeout=15)
    assert lens.command is not None and lens.command.command == "stet.provenance.unplaced"
    shutil.rmtree(working_folder(resolve_target(root)).path)

    async def gone() -> bool:
        return await unplaced_lenses() == []

    await eventually(gone, timeout=15)
    workspace = client.capabilities.workspace if client.capabilities else None
    refreshing = bool(workspace and workspace.code_lens and workspace.code_lens.refresh_support)
    for pick_argument in [{"pick": False}, {}]:
        refreshes = getattr(client, "lens_refreshes", 0)
        told = len(client.messages)
        result = await execute(client, "stet.provenance.unplaced", uri=document, **pick_argument)
        assert result == {"changes": [], "picked": None}
        [message] = client.messages[told:]  # sent before the answer
        assert message.type == types.MessageType.Info
        assert message.message == (
            "No change to src/u.py is left that could not be placed: the lens was out of date"
        )
        if refreshing:
            assert getattr(client, "lens_refreshes", 0) > refreshes
    assert asked == []


async def test_changes_of_trajectories_whose_ids_shorten_alike_are_one_choice_each(
    client: LanguageClient, root: Path, tmp_path: Path
) -> None:
    """A title shortens a trajectory's id to its first 29 characters. The same session
    imported on feature/payment-retry-alpha and on feature/payment-retry-beta made twelve
    changes that could not be placed, in pairs read alike: the user was offered six, and
    picking one opened the alpha trajectory's step, whichever the user meant. Where two
    changes would read alike, each names its trajectory in full: twelve choices, in the
    message and in the list, and the picked one opens its own trajectory's step."""
    ids = []
    for branch, session in [
        ("feature/payment-retry-alpha", "11111111-1111-1111-1111-111111111111"),
        ("feature/payment-retry-beta", "22222222-2222-2222-2222-222222222222"),
    ]:
        git_at(root, "checkout", "-q", "-B", branch, at=1_700_000_000)
        import_transcript(resolve_target(root), unplaced_session(root, tmp_path, session))
        ids.append(working_folder(resolve_target(root)).id)
    alpha, beta = ids
    assert alpha[:29] == beta[:29] and len(alpha) > 32
    said = [
        (item["trajectory"], item["step"], item["lines"], item["reason"])
        for item in line_origins(root, root / "src" / "u.py")["unattributed"]
    ]
    assert len(said) == 12 and {trajectory for trajectory, *_ in said} == {alpha, beta}
    titles = [
        f"agent: step {step} of {trajectory} changed {lines} line{'s' if lines != 1 else ''} "
        f"that could not be placed: {reason}"
        for trajectory, step, lines, reason in said
    ]
    choice = max(i for i, (trajectory, *_) in enumerate(said) if trajectory == beta)
    asked: list[types.ShowMessageRequestParams] = []

    @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
    def pick(_: LanguageClient, params: types.ShowMessageRequestParams) -> types.MessageActionItem:
        asked.append(params)
        return types.MessageActionItem(title=titles[choice])

    document = open_file(client, root / "src" / "u.py")

    async def listing() -> dict[str, Any] | None:
        listed = await execute(client, "stet.provenance.unplaced", uri=document, pick=False)
        return listed if listed["changes"] else None

    listed = await eventually(listing, timeout=15)
    assert [change["title"] for change in listed["changes"]] == titles
    assert [change["id"] for change in listed["changes"]] == [t for t, *_ in said]

    result = await execute(client, "stet.provenance.unplaced", uri=document)

    [question] = asked
    assert [action.title for action in question.actions or []] == titles
    picked = result["picked"]
    assert (picked["id"], picked["step"]) == (beta, said[choice][1])
    narration = working_folder(resolve_target(root)).path / "narration.md"
    assert picked["uri"] == uri(narration)


def unplaced_edit(root: Path, tmp_path: Path, session: str, written: str) -> Path:
    """A session that writes src/u.py and replaces the first of its two "two" lines with
    `written`, an edit known only by its search and replace text: two changes that could not
    be placed, the edit's lines and the write's."""
    transcript = Transcript(root, session=session)
    transcript.user("Write and fix u.py.")
    path = f"{root}/src/u.py"
    text = "one\ntwo\nthree\ntwo\n"
    transcript.write_file("toolu_w", path, text)
    edit_input = {"file_path": path, "old_string": "two\n", "new_string": written}
    transcript.tool("toolu_e", "Edit", edit_input, f"The file {path} was updated.")
    (root / "src" / "u.py").write_text(text.replace("two\n", written, 1))
    return transcript.save(tmp_path / f"{session}.jsonl")


async def test_changes_of_trajectories_whose_ids_shorten_alike_name_them_in_full_whatever_else(
    client: LanguageClient, root: Path, tmp_path: Path
) -> None:
    """A trajectory imported on feature/payment-retry-alpha changed one line that could not
    be placed, another on feature/payment-retry-beta two at the same step: the two titles
    differed in their line counts only, so each kept the shortened id both ids shorten to,
    and the user could not tell which trajectory each change was of. Whether a title names
    its trajectory in full is decided by the shortened ids alone."""
    ids = []
    for branch, session, written in [
        ("feature/payment-retry-alpha", "11111111-1111-1111-1111-111111111111", "TWO\n"),
        ("feature/payment-retry-beta", "22222222-2222-2222-2222-222222222222", "TWO\nTOO\n"),
    ]:
        git_at(root, "checkout", "-q", "-B", branch, at=1_700_000_000)
        import_transcript(resolve_target(root), unplaced_edit(root, tmp_path, session, written))
        ids.append(working_folder(resolve_target(root)).id)
    alpha, beta = ids
    assert alpha[:29] == beta[:29] and len(alpha) > 32
    said = [
        (item["trajectory"], item["step"], item["lines"], item["reason"])
        for item in line_origins(root, root / "src" / "u.py")["unattributed"]
    ]
    edits = [(trajectory, lines) for trajectory, _, lines, reason in said if reason == "unanchored"]
    assert edits == [(alpha, 1), (beta, 2)]
    document = open_file(client, root / "src" / "u.py")

    listed = await execute(client, "stet.provenance.unplaced", uri=document, pick=False)

    assert [change["title"] for change in listed["changes"]] == [
        f"agent: step {step} of {trajectory} changed {lines} line{'s' if lines != 1 else ''} "
        f"that could not be placed: {reason}"
        for trajectory, step, lines, reason in said
    ]


async def test_lenses_of_trajectories_whose_ids_shorten_alike_name_them_in_full_everywhere(
    client: LanguageClient, root: Path, tmp_path: Path
) -> None:
    """The trajectory imported on feature/payment-retry-alpha made two changes to src/u.py
    that could not be placed, the one imported on feature/payment-retry-beta rewrote its
    third line: the lenses on the first line and the one on the third named both by the
    same shortened id, each told apart only among lenses of its own kind."""
    git_at(root, "checkout", "-q", "-B", "feature/payment-retry-alpha", at=1_700_000_000)
    alpha_session = "11111111-1111-1111-1111-111111111111"
    import_transcript(resolve_target(root), unplaced_edit(root, tmp_path, alpha_session, "TWO\n"))
    alpha = working_folder(resolve_target(root)).id
    git_at(root, "checkout", "-q", "-B", "feature/payment-retry-beta", at=1_700_000_000)
    module = root / "src" / "u.py"
    original = module.read_text()
    patch = {
        "filePath": str(module),
        "oldString": "three\n",
        "newString": "THREE\n",
        "originalFile": original,
        "structuredPatch": [
            {
                "oldStart": 3,
                "oldLines": 1,
                "newStart": 3,
                "newLines": 1,
                "lines": ["-three", "+THREE"],
            }
        ],
    }
    transcript = Transcript(root, session="22222222-2222-2222-2222-222222222222")
    transcript.user("Shout three.")
    edit_input = {"file_path": str(module), "old_string": "three\n", "new_string": "THREE\n"}
    transcript.tool("toolu_e", "Edit", edit_input, f"The file {module} was updated.", patch)
    module.write_text(original.replace("three\n", "THREE\n"))
    import_transcript(resolve_target(root), transcript.save(tmp_path / "beta.jsonl"))
    beta = working_folder(resolve_target(root)).id
    assert alpha[:29] == beta[:29] and len(alpha) > 32
    blamed = line_origins(root, module)
    [run] = blamed["runs"]
    assert (run["trajectory"], run["first_line"], run["last_line"]) == (beta, 3, 3)
    said = [(item["trajectory"], item["step"], item["lines"]) for item in blamed["unattributed"]]
    assert [trajectory for trajectory, *_ in said] == [alpha, alpha]
    document = open_file(client, module)

    async def all_three() -> list[types.CodeLens] | None:
        found = await lenses(client, document)
        shown = [lens for lens in found if lens.command and lens.command.title.startswith("agent")]
        return shown if len(shown) == 3 else None

    found = await eventually(all_three, timeout=15)
    titles = [lens.command.title.split(" that could not", 1)[0] for lens in found if lens.command]
    assert titles == [
        *(
            f"agent: step {step} of {alpha} changed {lines} line{'s' if lines != 1 else ''}"
            for _, step, lines in said
        ),
        f"agent: step {run['step']} of {beta} wrote 1 line",
    ]


def anchored_edit(root: Path, tmp_path: Path, session: str, line: int, count: int = 1) -> Path:
    """A session that rewrites `count` lines from line `line` (1-based) of src/app.py, an
    anchored patch."""
    app = root / "src" / "app.py"
    original = app.read_text()
    lines = original.splitlines(keepends=True)
    end = line - 1 + count
    old = "".join(lines[line - 1 : end])
    new = "".join(f"line_{n} = retried()  # the agent's\n" for n in range(line, line + count))
    path = str(app)
    patch = {
        "filePath": path,
        "oldString": old,
        "newString": new,
        "originalFile": original,
        "structuredPatch": [
            {
                "oldStart": line,
                "oldLines": count,
                "newStart": line,
                "newLines": count,
                "lines": [
                    *("-" + text for text in old.splitlines()),
                    *("+" + text for text in new.splitlines()),
                ],
            }
        ],
    }
    transcript = Transcript(root, session=session)
    transcript.user(f"Retry on line {line}.")
    edit_input = {"file_path": path, "old_string": old, "new_string": new}
    transcript.tool("toolu_e", "Edit", edit_input, f"The file {path} was updated.", patch)
    app.write_text("".join([*lines[: line - 1], new, *lines[end:]]))
    return transcript.save(tmp_path / f"{session}.jsonl")


@pytest.mark.parametrize("beta_lines", [1, 2])
async def test_lines_of_trajectories_whose_ids_shorten_alike_name_each_its_own(
    client: LanguageClient, root: Path, tmp_path: Path, beta_lines: int
) -> None:
    """Sessions alike imported on feature/payment-retry-alpha and on feature/payment-retry-beta
    each wrote a line of src/app.py at the same step: the two lenses read alike, and so did
    the two lines' actions, "step 2 of" the same shortened id. Where the file shows steps of
    two trajectories whose ids shorten alike, each names its trajectory in full, on every
    line, and so it does when the lenses differ in their line counts (the beta session
    writing two lines)."""
    ids, written = [], [4, 9]
    for branch, session, line, count in [
        ("feature/payment-retry-alpha", "11111111-1111-1111-1111-111111111111", written[0], 1),
        (
            "feature/payment-retry-beta",
            "22222222-2222-2222-2222-222222222222",
            written[1],
            beta_lines,
        ),
    ]:
        git_at(root, "checkout", "-q", "-B", branch, at=1_700_000_000)
        session_file = anchored_edit(root, tmp_path, session, line, count)
        import_transcript(resolve_target(root), session_file)
        ids.append(working_folder(resolve_target(root)).id)
    alpha, beta = ids
    assert alpha[:29] == beta[:29] and len(alpha) > 32
    document = open_file(client, root / "src" / "app.py")

    async def both() -> list[types.CodeLens] | None:
        found = await provenance_lenses(client, document)
        return found if len(found) == 2 else None

    found = await eventually(both, timeout=15)
    opened = [list(lens.command.arguments or []) for lens in found if lens.command]
    step = opened[0][0]["step"]
    assert [(lens.range.start.line, *where) for lens, where in zip(found, opened, strict=True)] == [
        (written[0] - 1, {"uri": document, "id": alpha, "step": step}),
        (written[1] - 1, {"uri": document, "id": beta, "step": step}),
    ]
    assert [lens.command and lens.command.title for lens in found] == [
        f"agent: step {step} of {alpha} wrote 1 line",
        f"agent: step {step} of {beta} wrote {beta_lines} line{'s' if beta_lines != 1 else ''}",
    ]
    [first] = await actions_at(client, document, written[0] - 1)
    [second] = await actions_at(client, document, written[1] - 1)
    assert [first.title, second.title] == [
        f"Open step {step} of {alpha} (narration)",
        f"Open step {step} of {beta} (narration)",
    ]
    assert [list(a.command.arguments or []) for a in (first, second) if a.command] == opened


async def test_a_path_too_long_for_this_file_system_leaves_the_other_files_attributed(
    client: LanguageClient, root: Path, tmp_path: Path
) -> None:
    """A trajectory may name a file this file system cannot hold (a name of 300 bytes, which
    another system took): asking whether it was there raised, and provenance was lost for
    every file of the repository, in the editor and in `stet trajectory blame` alike."""
    transcript = Transcript(root)
    transcript.user("Write two modules.")
    transcript.write_file("toolu_01", f"{root}/src/{'n' * 300}.py", "x = 1\n")
    transcript.write_file("toolu_02", f"{root}/src/b.py", "y = 2\n")
    (root / "src" / "b.py").write_text("y = 2\n")
    import_transcript(resolve_target(root), transcript.save(tmp_path / "long.jsonl"))

    blamed = line_origins(root, root / "src" / "b.py")
    assert [(run["first_line"], run["last_line"]) for run in blamed["runs"]] == [(1, 1)]
    document = open_file(client, root / "src" / "b.py")
    [lens] = await eventually(lambda: provenance_lenses(client, document), timeout=15)
    assert lens.command is not None and lens.command.title.endswith(" wrote 1 line")
