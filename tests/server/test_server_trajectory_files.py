"""A trajectory's files in the editor: lenses and hovers per step, the outline, go to
definition from a file change, schema problems as diagnostics, workspace symbols; with the
VS Code and Neovim 0.11 client capabilities, on real repositories."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import time
from pathlib import Path
from typing import Any

import pygit2
import pytest
import pytest_lsp
from claude_transcript import Transcript, working_session
from lsp_harness import (
    CLIENTS,
    SERVER,
    diagnostics,
    edit_range,
    eventually,
    execute,
    open_file,
    start,
    type_text,
    uri,
)
from lsp_pipe import PipeServer
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient
from repos import commit_files, make_repo
from samples import sample

from stet_lsp.core.targets import resolve_target
from stet_lsp.trajectory.importing import import_transcript
from stet_lsp.trajectory.store import working_folder

CLAUDE = "claude-code/entireio-cli__37_995ebed6e4_0_full.jsonl"


@pytest.fixture(params=["written", "public sample"])
def transcript(request: pytest.FixtureRequest, root: Path, tmp_path: Path) -> Path:
    """A Claude Code session file: a short one written here, which runs everywhere, and the
    public sample (skipped where it is absent)."""
    if request.param == "written":
        return working_session(root, tmp_path / "session.jsonl")
    return sample(CLAUDE)


@pytest_lsp.fixture(config=SERVER, params=CLIENTS)
async def client(request: pytest.FixtureRequest, lsp_client: LanguageClient):  # type: ignore[no-untyped-def]
    await start(lsp_client, request.param)
    yield
    await lsp_client.shutdown_session()


def session_writing(root: Path, tmp_path: Path, recorded_in: str | None = None) -> Path:
    """A short Claude Code session in `root` (or recorded in the folder `recorded_in`, as on
    another machine): a request, a Write creating src/retry.py."""
    where = recorded_in or str(root)
    path = f"{where}/src/retry.py"
    content = "def retry(call):\n    return call()\n"
    base = {
        "sessionId": "6a1e0c2d-3b4f-4a5e-8d9c-0b1a2c3d4e5f",
        "cwd": where,
        "version": "2.1.12",
    }
    records: list[dict[str, Any]] = [
        {"type": "user", "message": {"role": "user", "content": "Add a retry helper."}},
        {
            "type": "assistant",
            "message": {
                "id": "msg_1",
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "toolu_1",
                        "name": "Write",
                        "input": {"file_path": path, "content": content},
                    }
                ],
                "usage": {"input_tokens": 10, "output_tokens": 5},
            },
        },
        {
            "type": "user",
            "message": {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": "File created"}
                ],
            },
            "toolUseResult": {
                "type": "create",
                "filePath": path,
                "content": content,
                "structuredPatch": [],
            },
        },
        {
            "type": "assistant",
            "message": {
                "id": "msg_2",
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": [{"type": "text", "text": "Added retry()."}],
            },
        },
    ]
    source = tmp_path / "session.jsonl"
    source.write_text(
        "".join(
            json.dumps({**base, **r, "uuid": f"u{n}", "timestamp": f"2026-01-01T10:00:0{n}Z"})
            + "\n"
            for n, r in enumerate(records)
        )
    )
    return source


def lines_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


async def lenses(client: LanguageClient, document: str) -> list[types.CodeLens]:
    return await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=document))
    )


async def test_events_show_a_lens_and_a_hover_per_step_and_an_outline(
    client: LanguageClient, root: Path, transcript: Path
) -> None:
    import_transcript(resolve_target(root), transcript)
    events = working_folder(resolve_target(root)).path / "events.jsonl"
    records = lines_of(events)
    document = open_file(client, events, "json")

    found = await eventually(lambda: lenses(client, document), timeout=10)
    assert len(found) == len(records)
    assert found[0].command is not None and found[0].command.title.startswith("1 · session_start")
    call = next(n for n, r in enumerate(records) if r["kind"] == "tool_call")
    assert found[call].range.start.line == call
    assert (
        f"{records[call]['step']} · tool_call {records[call]['name']}" in found[call].command.title
    )

    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=document),
            position=types.Position(line=call, character=0),
        )
    )
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    result = next(
        r
        for r in records
        if r["kind"] == "tool_result" and r["call_id"] == records[call]["call_id"]
    )
    assert records[call]["name"] in hover.contents.value
    assert (
        result["output"].splitlines()[0][:30] in hover.contents.value
    )  # the call shows its result

    outline = await client.text_document_document_symbol_async(
        types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier(uri=document))
    )
    assert outline and isinstance(outline[0], types.DocumentSymbol)
    [session] = outline
    assert "claude-code" in session.name + (session.detail or "")
    assert session.children and session.range.end.line >= len(records) - 2


async def test_the_outline_of_a_large_trajectory_is_answered_once_it_is_indexed(
    client: LanguageClient, root: Path
) -> None:
    """A file over the inline limit is indexed in a worker; the outline, which a client is
    never told to ask for again, waits for it instead of answering empty."""
    events = working_folder(resolve_target(root)).path / "events.jsonl"
    events.parent.mkdir(parents=True, exist_ok=True)
    records: list[dict[str, Any]] = []
    for turn in range(60):
        records.append({"kind": "user_message", "session": "s1", "text": f"request {turn}"})
        records += [{"kind": "agent_message", "session": "s1", "text": "x" * 2_000}] * 3
    events.write_text(
        "".join(json.dumps({**r, "step": n}) + "\n" for n, r in enumerate(records, 1))
    )
    assert events.stat().st_size > 256 * 1024  # trajectory_files.INLINE_LIMIT
    document = open_file(client, events, "json")

    outline = await client.text_document_document_symbol_async(
        types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier(uri=document))
    )
    assert outline and isinstance(outline[0], types.DocumentSymbol)
    [session] = outline
    assert [turn.name for turn in session.children or []][:2] == ["request 0", "request 1"]
    assert len(session.children or []) == 60


def opened_at_the_change(
    client: LanguageClient, folder: Path
) -> tuple[str, list[dict[str, Any]], int]:
    """The trajectory's events.jsonl opened in the editor: its URI, its records and the line
    of its first file change."""
    records = lines_of(folder / "events.jsonl")
    change = next(n for n, r in enumerate(records) if r["kind"] == "file_change")
    return open_file(client, folder / "events.jsonl", "json"), records, change


async def definition_of_the_change(client: LanguageClient, document: str, line: int) -> Any:
    """Go to definition on the file change at `line`, once the document's steps show."""
    await eventually(lambda: lenses(client, document), timeout=10)
    return await client.text_document_definition_async(
        types.DefinitionParams(
            text_document=types.TextDocumentIdentifier(uri=document),
            position=types.Position(line=line, character=2),
        )
    )


async def test_definition_goes_from_a_file_change_to_the_file(
    client: LanguageClient, root: Path, tmp_path: Path
) -> None:
    (root / "src" / "retry.py").write_text("def retry(call):\n    return call()\n")
    import_transcript(resolve_target(root), session_writing(root, tmp_path))
    folder = working_folder(resolve_target(root))
    document, records, change = opened_at_the_change(client, folder.path)
    assert records[change]["path"] == "src/retry.py"
    found = await definition_of_the_change(client, document, change)
    assert isinstance(found, list) and [(f.uri, f.range.start.line) for f in found] == [
        (uri(root / "src" / "retry.py"), 0)
    ]

    narration = folder.path / "narration.md"
    narrated = open_file(client, narration, "markdown")
    text = narration.read_text().split("\n")
    anchor = next(
        n for n, line in enumerate(text) if f'id="step-{records[change]["step"]}"' in line
    )
    narration_lenses = await eventually(lambda: lenses(client, narrated), timeout=10)
    assert anchor in [lens.range.start.line for lens in narration_lenses]
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=narrated),
            position=types.Position(line=anchor + 1, character=0),
        )
    )
    assert hover is not None and "src/retry.py" in str(hover.contents)

    def outline_of(document: str) -> Any:
        return client.text_document_document_symbol_async(
            types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier(uri=document))
        )

    def names(symbols: Any) -> list[Any]:
        return [(s.name, s.kind, names(s.children or [])) for s in symbols]

    in_events, in_narration = await outline_of(document), await outline_of(narrated)
    assert in_narration and names(in_narration) == names(in_events)  # the same nodes
    (session,) = in_narration
    assert session.selection_range.start.line < anchor <= session.range.end.line
    assert '<a id="step-' in text[session.selection_range.start.line]

    symbols = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="retry.py"))
    assert symbols and any("file_change" in s.name for s in symbols)


async def test_workspace_symbols_of_an_open_events_file_are_where_its_buffer_has_them(
    client: LanguageClient, root: Path, tmp_path: Path
) -> None:
    """An open events.jsonl with unsaved edits: the steps workspace symbols found were read
    from the disk, so a step moved in the buffer was placed on the line the disk has it on
    (another step's in the editor), and one the buffer renamed was found by its old title."""
    import_transcript(resolve_target(root), session_writing(root, tmp_path))
    folder = working_folder(resolve_target(root))

    async def found(query: str) -> list[tuple[str, int]]:
        symbols = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query=query))
        return [
            (s.location.uri, s.location.range.start.line)
            for s in symbols or []
            if isinstance(s.location, types.Location)
        ]

    document, _, change = opened_at_the_change(client, folder.path)
    await eventually(lambda: lenses(client, document), timeout=10)
    on_disk = await found("retry.py")
    assert (document, change) in on_disk and all(line >= 2 for _, line in on_disk)
    disk = (folder.path / "events.jsonl").read_text(encoding="utf-8").splitlines()
    # The first two lines cut from the buffer, the file change's path edited, unsaved.
    edited = [line.replace("src/retry.py", "src/backoff.py") for line in disk[2:]]
    type_text(client, document, "\n".join(edited) + "\n")

    moved = [(where, line - 2) for where, line in on_disk]
    assert await eventually(lambda: found("backoff.py")) == moved
    assert await found("retry.py") == []
    # Closed, the file on disk is searched again (a source file keeps the repository shown).
    open_file(client, root / "src" / "app.py")
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=document))
    )
    assert await eventually(lambda: found("retry.py")) == on_disk
    assert await found("backoff.py") == []


@pytest.mark.parametrize("trap", ["a linked folder", "a FIFO"])
async def test_definition_never_leads_through_a_link_or_to_a_fifo(
    client: LanguageClient, root: Path, tmp_path: Path, trap: str
) -> None:
    """A clone may commit `src` as a link to a folder outside it, or hold a FIFO where a step
    wrote a file: the step's definition offers no place there (the editor would open a file
    outside the repository, or hang on the FIFO)."""
    import_transcript(resolve_target(root), session_writing(root, tmp_path))
    folder = working_folder(resolve_target(root))
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "retry.py").write_text("private\n")
    if trap == "a FIFO":
        os.mkfifo(root / "src" / "retry.py")
    else:
        (root / "src").rename(tmp_path / "src-moved")
        (root / "src").symlink_to(outside, target_is_directory=True)
    document, _, change = opened_at_the_change(client, folder.path)
    assert await definition_of_the_change(client, document, change) == []


async def test_schema_problems_are_diagnostics_and_the_server_goes_on(
    client: LanguageClient, root: Path
) -> None:
    folder = root / ".stet" / "trajectories" / "t1"
    folder.mkdir(parents=True)
    events = folder / "events.jsonl"
    events.write_text(
        '{"kind":"user_message","step":1,"session":"s","source":{"file":"a","line":1},"text":"hi"}\n'
        "not json at all\n"
        '{"kind":"user_message","step":7,"session":"s","source":{"file":"a","line":2},"text":"x"}\n'
    )
    document = open_file(client, events, "json")

    async def problems() -> Any:
        found = await diagnostics(client, document)
        return [d for d in found if d.code == "trajectory-schema"]

    found = await eventually(problems, timeout=10)
    assert sorted(d.range.start.line for d in found) == [1, 2]
    assert all(d.source == "stet" for d in found)
    assert len(await lenses(client, document)) == 2


def edit_session(root: Path, tmp_path: Path) -> Path:
    """A Claude Code session that edits line 3 of src/app.py (an anchored patch)."""
    app = root / "src" / "app.py"
    original = app.read_text()
    lines = original.splitlines(keepends=True)
    new_line = "value = compute_with_retry()  # the agent's\n"
    after = "".join([*lines[:2], new_line, *lines[3:]])
    path = str(app)
    base = {
        "sessionId": "7b2f1d3e-4c5a-4b6d-9e8f-1a2b3c4d5e6f",
        "cwd": str(root),
        "version": "2.1.12",
    }
    records: list[dict[str, Any]] = [
        {"type": "user", "message": {"role": "user", "content": "Retry the computation."}},
        {
            "type": "assistant",
            "message": {
                "id": "msg_1",
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": [
                    {
                        "type": "text",
                        "text": "Line 3 should retry: wrapping it in compute_with_retry.",
                    },
                    {
                        "type": "tool_use",
                        "id": "toolu_9",
                        "name": "Edit",
                        "input": {
                            "file_path": path,
                            "old_string": lines[2],
                            "new_string": new_line,
                        },
                    },
                ],
            },
        },
        {
            "type": "user",
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "toolu_9", "content": "ok"}],
            },
            "toolUseResult": {
                "filePath": path,
                "oldString": lines[2],
                "newString": new_line,
                "originalFile": original,
                "structuredPatch": [
                    {
                        "oldStart": 3,
                        "oldLines": 1,
                        "newStart": 3,
                        "newLines": 1,
                        "lines": ["-" + lines[2].rstrip("\n"), "+" + new_line.rstrip("\n")],
                    }
                ],
            },
        },
    ]
    app.write_text(after)
    source = tmp_path / "edit.jsonl"
    source.write_text(
        "".join(
            json.dumps({**base, **r, "uuid": f"e{n}", "timestamp": f"2026-01-02T10:00:0{n}Z"})
            + "\n"
            for n, r in enumerate(records)
        )
    )
    return source


async def test_a_line_the_agent_wrote_says_which_step_wrote_it_and_why(
    client: LanguageClient, root: Path, tmp_path: Path
) -> None:
    import_transcript(resolve_target(root), edit_session(root, tmp_path))
    app = root / "src" / "app.py"
    document = open_file(client, app)

    async def provenance_lenses() -> list[types.CodeLens]:
        found = await lenses(client, document)
        return [lens for lens in found if lens.command and "agent: step" in lens.command.title]

    [lens] = await eventually(provenance_lenses, timeout=15)
    assert lens.range.start.line == 2
    assert lens.command is not None and lens.command.command == "stet.trajectory.open"
    step = lens.command.arguments[0]["step"]  # type: ignore[index]

    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=document),
            position=types.Position(line=2, character=4),
        )
    )
    assert hover is not None
    text = str(hover.contents)
    assert f"Written by step {step}" in text
    assert "wrapping it in compute_with_retry" in text  # the message that led to it
    assert "+value = compute_with_retry()" in text  # the step's diff

    opened = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=lens.command.command, arguments=lens.command.arguments)
    )
    narration = working_folder(resolve_target(root)).path / "narration.md"
    assert opened["uri"] == uri(narration)
    assert f'<a id="step-{step}"></a>' in narration.read_text().split("\n")[opened["line"]]

    # The reviewer adds two lines above: the agent's line moves with them.
    top = types.Position(line=0, character=0)
    edit_range(client, document, types.Range(start=top, end=top), "# one\n# two\n")

    async def moved() -> Any:
        found = await provenance_lenses()
        return found if [lens.range.start.line for lens in found] == [4] else None

    await eventually(moved, timeout=10)
    # and then rewrites the agent's line: it is theirs now.
    line = types.Range(
        start=types.Position(line=4, character=0), end=types.Position(line=4, character=5)
    )
    edit_range(client, document, line, "total")

    async def gone() -> bool:
        return not await provenance_lenses()

    await eventually(gone, timeout=10)


async def test_a_step_is_marked_from_its_code_action(
    client: LanguageClient, root: Path, transcript: Path
) -> None:
    import_transcript(resolve_target(root), transcript)
    folder = working_folder(resolve_target(root))
    events = folder.path / "events.jsonl"
    records = lines_of(events)
    document = open_file(client, events, "json")
    await eventually(lambda: lenses(client, document), timeout=10)
    call = next(n for n, r in enumerate(records) if r["kind"] == "tool_call")
    here = types.Position(line=call, character=0)
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=document),
            range=types.Range(start=here, end=here),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    wrong = next(
        a for a in actions or [] if isinstance(a, types.CodeAction) and a.title.endswith("wrong")
    )
    assert wrong.title == f"Mark step {records[call]['step']} as wrong"
    assert wrong.command is not None
    await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=wrong.command.command, arguments=wrong.command.arguments)
    )
    feedback = root / ".stet" / "feedback" / f"{folder.id}.jsonl"
    [verdict] = lines_of(feedback)
    assert (verdict["step"], verdict["verdict"]) == (records[call]["step"], "wrong")


async def test_a_step_is_named_by_code_actions_and_hover_asked_at_once(
    client: LanguageClient, root: Path, transcript: Path
) -> None:
    """Asked as soon as the narration opens (the editors name the step at the cursor this
    way), a code action or a hover waits for the file's indexing rather than answer none."""
    import_transcript(resolve_target(root), transcript)
    narration = working_folder(resolve_target(root)).path / "narration.md"
    text = narration.read_text().split("\n")
    line, step = next(
        (n, int(t.split('"step-')[1].split('"')[0]))
        for n, t in enumerate(text)
        if t.startswith('<a id="step-') and n > 20
    )
    document = open_file(client, narration, "markdown")
    here = types.Position(line=line, character=0)
    actions, hover = await asyncio.gather(
        client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=document),
                range=types.Range(start=here, end=here),
                context=types.CodeActionContext(diagnostics=[]),
            )
        ),
        client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=document), position=here
            )
        ),
    )
    titles = [a.title for a in actions or [] if isinstance(a, types.CodeAction)]
    assert f"Mark step {step} as wrong" in titles, titles
    assert hover is not None


async def test_a_narration_without_its_events_offers_no_step_to_mark(
    client: LanguageClient, root: Path, tmp_path: Path
) -> None:
    """A narration whose events.jsonl is gone (removed by hand, a partial copy) offered "Mark
    step N as wrong/clever" on its steps, and running either failed ("no such file"): it
    offers none, as it shows no lens for them."""
    import_transcript(resolve_target(root), working_session(root, tmp_path / "session.jsonl"))
    folder = working_folder(resolve_target(root)).path
    text = (folder / "narration.md").read_text(encoding="utf-8").split("\n")
    line = next(n for n, t in enumerate(text) if t.startswith('<a id="step-'))
    (folder / "events.jsonl").unlink()
    document = open_file(client, folder / "narration.md", "markdown")
    here = types.Position(line=line, character=0)
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=document),
            range=types.Range(start=here, end=here),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    titles = [a.title for a in actions or [] if isinstance(a, types.CodeAction)]
    assert not [t for t in titles if t.startswith("Mark step")], titles


async def test_a_narration_opened_again_while_indexed_shows_its_own_steps(
    client: LanguageClient, root: Path, tmp_path: Path
) -> None:
    """Closed and opened again (the same version and line count, another text) while its
    first text is indexed: the first text's steps are not kept for the second."""
    import_transcript(resolve_target(root), working_session(root, tmp_path / "session.jsonl"))
    folder = working_folder(resolve_target(root)).path
    events = (folder / "events.jsonl").read_text().splitlines()
    long = [json.dumps(json.loads(line) | {"step": n}) for n, line in enumerate(events * 3000, 1)]
    (folder / "events.jsonl").write_text("\n".join(long) + "\n")  # indexing takes a while
    narration = folder / "narration.md"
    first = '<a id="step-1"></a>one\n\n<a id="step-2"></a>two\n\n'
    second = '\n<a id="step-5"></a>five\n\n<a id="step-6"></a>six\n'
    document = open_file(client, narration, "markdown", text=first)
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=document))
    )
    open_file(client, narration, "markdown", text=second)

    async def placed() -> list[tuple[int, str]]:
        found = await lenses(client, document)
        return [(lens.range.start.line, lens.command.title) for lens in found if lens.command]

    shown = await eventually(placed, timeout=20)
    assert [line for line, _ in shown] == [1, 3], shown


async def test_provenance_follows_a_rename_and_commits_made_since(
    client: LanguageClient, root: Path, tmp_path: Path
) -> None:
    import pygit2

    import_transcript(resolve_target(root), edit_session(root, tmp_path))
    repository = pygit2.Repository(str(root))
    signature = pygit2.Signature("Reviewer", "reviewer@example.invalid")
    moved = root / "src" / "compute.py"
    (root / "src" / "app.py").rename(moved)
    moved.write_text("# reviewed\n" + moved.read_text())
    repository.index.remove("src/app.py")
    repository.index.add("src/compute.py")
    repository.index.write()
    tree = repository.index.write_tree()
    repository.create_commit("HEAD", signature, signature, "rename", tree, [repository.head.target])

    document = open_file(client, moved)

    async def provenance_lines() -> list[int]:
        found = await lenses(client, document)
        return [
            lens.range.start.line
            for lens in found
            if lens.command and "agent: step" in lens.command.title
        ]

    assert await eventually(provenance_lines, timeout=15) == [3]  # line 3, one line lower now


async def test_trajectory_files_linked_out_or_fifos_are_never_read(
    client: LanguageClient, root: Path, tmp_path: Path
) -> None:
    """A cloned repository whose committed events.jsonl is a link out of it, or a FIFO: the
    narration beside it shows no step from outside, workspace symbols find none, opening a
    step is refused, and the server keeps answering."""
    import_transcript(resolve_target(root), session_writing(root, tmp_path))
    working = working_folder(resolve_target(root)).path
    outside = tmp_path / "outside.jsonl"
    outside.write_text((working / "events.jsonl").read_text().replace("retry", "OUTSIDE"))
    committed = root / ".stet" / "trajectories"
    for name in ("linked", "piped"):
        folder = committed / name
        folder.mkdir(parents=True)
        for file in ("meta.json", "narration.md"):
            (folder / file).write_bytes((working / file).read_bytes())
    (committed / "linked" / "events.jsonl").symlink_to(outside)
    os.mkfifo(committed / "piped" / "events.jsonl")

    for name, refusal in (("linked", "is a symbolic link"), ("piped", "not a regular file")):
        narrated = open_file(client, committed / name / "narration.md", "markdown")
        await asyncio.sleep(1)  # the index is built in a worker
        assert list(await lenses(client, narrated)) == []
        with pytest.raises(JsonRpcException, match=refusal):
            await execute(
                client, "stet.trajectory.open", uri=uri(root), id=name, file="events", step=2
            )
    symbols = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="OUTSIDE"))
    assert symbols == [] or symbols is None
    found = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="retry.py"))
    assert found and {s.container_name for s in found} == {working.name}
    listed = await asyncio.wait_for(execute(client, "stet.note.list", uri=uri(root)), 5)
    assert listed is not None


async def test_a_step_is_marked_by_trajectory_and_step(
    client: LanguageClient, root: Path, tmp_path: Path
) -> None:
    """As a provenance lens names a step: its trajectory (an id prefix, or the working one
    when left out) and its number, from any document of the repository."""
    import_transcript(resolve_target(root), session_writing(root, tmp_path))
    folder = working_folder(resolve_target(root))
    change = next(e for e in lines_of(folder.path / "events.jsonl") if e["kind"] == "file_change")
    marked = await execute(
        client,
        "stet.step.mark",
        uri=uri(root),
        trajectory=folder.id[:16],
        step=change["step"],
        verdict="note",
        text="use the existing helper",
        toSheet=True,
    )
    verdict = marked["verdict"]
    assert (verdict["trajectory"], verdict["step"], verdict["kind"]) == (
        folder.id,
        change["step"],
        "file_change",
    )
    assert marked["entry"]["text"].endswith("use the existing helper")
    again = await execute(
        client, "stet.step.mark", uri=uri(root / "README.md"), step=1, verdict="clever"
    )
    assert again["verdict"]["step"] == 1 and again["entry"] is None
    feedback = (root / ".stet" / "feedback" / f"{folder.id}.jsonl").read_text(encoding="utf-8")
    assert [json.loads(line)["verdict"] for line in feedback.splitlines()] == ["note", "clever"]
    with pytest.raises(JsonRpcException, match="no step 99"):
        await execute(client, "stet.step.mark", uri=uri(root), step=99, verdict="clever")
    with pytest.raises(JsonRpcException, match="no trajectory 'nope'"):
        await execute(
            client, "stet.step.mark", uri=uri(root), trajectory="nope", step=1, verdict="clever"
        )


@pytest.mark.parametrize("recorded_in", ["/srv/elsewhere/proj", "/home/dana/proj"])
async def test_definition_maps_a_session_recorded_in_another_folder(
    client: LanguageClient, root: Path, tmp_path: Path, recorded_in: str
) -> None:
    """Recorded on another machine: the change names /srv/elsewhere/proj/src/retry.py (or
    ~/proj/src/retry.py once the gate made the home directory ~); definition lands on the
    repository's src/retry.py. A file outside the recorded folder has no definition."""
    (root / "src" / "retry.py").write_text("def retry(call):\n    return call()\n")
    source = session_writing(root, tmp_path, recorded_in)
    import_transcript(resolve_target(root), source)
    folder = working_folder(resolve_target(root))
    records = lines_of(folder.path / "events.jsonl")
    change = next(n for n, r in enumerate(records) if r["kind"] == "file_change")
    assert not records[change]["path"].startswith("src/")  # kept as it was recorded
    document = open_file(client, folder.path / "events.jsonl", "json")
    await eventually(lambda: lenses(client, document), timeout=10)
    found = await client.text_document_definition_async(
        types.DefinitionParams(
            text_document=types.TextDocumentIdentifier(uri=document),
            position=types.Position(line=change, character=2),
        )
    )
    assert isinstance(found, list)
    assert [(f.uri, f.range.start.line) for f in found] == [(uri(root / "src" / "retry.py"), 0)]


def test_workspace_symbols_reach_the_workspace_folders_before_any_file_is_opened(
    root: Path, tmp_path: Path
) -> None:
    import_transcript(resolve_target(root), session_writing(root, tmp_path))
    server = PipeServer().initialize({}, [uri(root)])
    try:
        server.send({"id": 2, "method": "workspace/symbol", "params": {"query": "retry.py"}})
        found = server.answer(2)["result"]
        assert found and all(s["location"]["uri"].endswith("/events.jsonl") for s in found)
        assert any("file_change" in s["name"] for s in found)
    finally:
        server.close()


def test_workspace_symbols_of_two_folders_on_one_branch_say_which_folder(
    tmp_path: Path,
) -> None:
    """Two workspace folders on the same branch (a repository and its worktree, or two
    clones) have working trajectories of one id: each step's container names its folder."""
    roots = []
    for name in ("first", "second"):
        repository = make_repo(tmp_path / name, files={"README.md": "hi\n"})
        root = Path(repository.workdir).resolve()
        (tmp_path / f"{name}-t").mkdir()
        import_transcript(resolve_target(root), session_writing(root, tmp_path / f"{name}-t"))
        roots.append(root)
    server = PipeServer().initialize({}, [uri(root) for root in roots])
    try:
        server.send({"id": 2, "method": "workspace/symbol", "params": {"query": "retry.py"}})
        found = server.answer(2)["result"]
        by_folder = {
            name: {s["containerName"] for s in found if f"/{name}/" in s["location"]["uri"]}
            for name in ("first", "second")
        }
        trajectory = working_folder(resolve_target(roots[0])).id
        assert trajectory == working_folder(resolve_target(roots[1])).id
        assert by_folder == {
            "first": {f"{trajectory} (first)"},
            "second": {f"{trajectory} (second)"},
        }
    finally:
        server.close()


def test_workspace_symbols_leave_out_a_folder_taken_out_of_the_workspace(
    root: Path, tmp_path: Path
) -> None:
    """A folder taken out of the workspace (and a document of it closed) takes its
    repository's steps out of the search: they came back from every repository the server
    had ever looked at."""
    import_transcript(resolve_target(root), session_writing(root, tmp_path))
    folder = {"uri": uri(root), "name": root.name}
    server = PipeServer().initialize({}, [uri(root)])

    def found(request_id: int) -> list[dict[str, Any]]:
        server.send(
            {"id": request_id, "method": "workspace/symbol", "params": {"query": "retry.py"}}
        )
        result: list[dict[str, Any]] = server.answer(request_id)["result"]
        return result

    def folders(added: list[dict[str, str]], removed: list[dict[str, str]]) -> None:
        event = {"added": added, "removed": removed}
        server.send({"method": "workspace/didChangeWorkspaceFolders", "params": {"event": event}})

    try:
        assert found(2)
        folders([], [folder])
        assert found(3) == []
        document = server.open(uri(root / "README.md"), "hi\n", "markdown")
        assert found(4)  # a document of the repository is open
        server.send(
            {"method": "textDocument/didClose", "params": {"textDocument": {"uri": document}}}
        )
        assert found(5) == []
        folders([folder], [])
        assert found(6)
    finally:
        server.close()


def test_a_narration_changed_twice_under_one_version_shows_its_last_text(
    root: Path, tmp_path: Path
) -> None:
    """A client that sends a version number twice (LSP says it only grows; some clients
    repeat it, or number edits from 1 again): the views follow the text the server holds,
    where a narration (always indexed in a worker) kept the lenses of the first text as
    long as its line count stayed."""
    import_transcript(resolve_target(root), session_writing(root, tmp_path))
    narration = working_folder(resolve_target(root)).path / "narration.md"
    text = narration.read_text(encoding="utf-8")
    [anchored] = [n for n, line in enumerate(text.splitlines()) if 'id="step-6"' in line]
    without = text.replace('<a id="step-6"></a>', "")
    server = PipeServer().initialize({}, [uri(root)])

    def lens_lines(request_id: int) -> list[int]:
        params = {"textDocument": {"uri": document}}
        server.send({"id": request_id, "method": "textDocument/codeLens", "params": params})
        return [lens["range"]["start"]["line"] for lens in server.answer(request_id)["result"]]

    def change(version: int, new_text: str) -> None:
        params = {
            "textDocument": {"uri": document, "version": version},
            "contentChanges": [{"text": new_text}],
        }
        server.send({"method": "textDocument/didChange", "params": params})

    try:
        document = server.open(uri(narration), text, "markdown")
        deadline = time.monotonic() + 15
        while anchored not in lens_lines(1000):
            assert time.monotonic() < deadline
            time.sleep(0.1)
        change(2, without)
        deadline = time.monotonic() + 15
        while anchored in lens_lines(1001):
            assert time.monotonic() < deadline
            time.sleep(0.1)
        change(2, text)
        deadline = time.monotonic() + 15
        request_id = 1002
        while anchored not in lens_lines(request_id):
            assert time.monotonic() < deadline, "the lens of step 6 did not come back"
            request_id += 1
            time.sleep(0.1)
    finally:
        server.close()


def test_numbers_of_thousands_of_digits_in_a_cloned_trajectory_are_no_places(
    tmp_path: Path,
) -> None:
    """A committed trajectory can write a hunk's start or a narration's step anchor with
    thousands of digits: Python reads no number of over 4,300 (ValueError), and the server
    logged the feature failing on go to definition, and had no lenses or outline for the
    narration at all. Such a number is no line (the step leads to the file it changed, at its
    top) and no step's anchor; the rest of the file shows as ever."""
    from repos import hostile_clone

    scratch = Path(make_repo(tmp_path / "scratch", files={"README.md": "hi\n"}).workdir)
    import_transcript(resolve_target(scratch), session_writing(scratch, tmp_path))
    working = working_folder(resolve_target(scratch)).path
    huge = "9" * 5_000
    events = (working / "events.jsonl").read_text()
    assert "\n@@ -0,0 +1,2 @@" in events.replace("\\n", "\n")
    events = events.replace("@@ -0,0 +1,2 @@", f"@@ -0,0 +{huge},2 @@")
    narration = (working / "narration.md").read_text()
    assert '<a id="step-2"></a>' in narration
    narration = narration.replace('<a id="step-2"></a>', f'<a id="step-{huge}"></a>')
    files = {
        ".stet/trajectories/t/events.jsonl": events,
        ".stet/trajectories/t/narration.md": narration,
        ".stet/trajectories/t/meta.json": (working / "meta.json").read_text(),
    }
    root = hostile_clone(tmp_path / "hostile", files)
    folder = root / ".stet/trajectories/t"
    change = next(
        number for number, line in enumerate(events.splitlines()) if '"kind":"file_change"' in line
    )
    server = PipeServer().initialize({}, [uri(root)])
    try:
        server.open(uri(folder / "events.jsonl"), events, "jsonl")
        where = {"textDocument": {"uri": uri(folder / "events.jsonl")}}
        position = {"line": change, "character": 0}
        server.send(
            {"id": 2, "method": "textDocument/definition", "params": where | {"position": position}}
        )
        (place,) = server.answer(2)["result"]  # the file changed, at its top
        assert place["uri"] == uri(root / "src/retry.py") and place["range"]["start"]["line"] == 0
        server.open(uri(folder / "narration.md"), narration, "markdown")
        where = {"textDocument": {"uri": uri(folder / "narration.md")}}
        titles: list[str] = []
        deadline = time.monotonic() + 30
        for request in itertools.count(3):  # asked again while the index is still being read
            server.send({"id": request, "method": "textDocument/codeLens", "params": where})
            titles = [lens["command"]["title"] for lens in server.answer(request)["result"]]
            if titles or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert titles and not any(title.startswith("2 ·") for title in titles)
        assert not [message for message in server.logged if "Traceback" in message]
    finally:
        server.close()


def test_a_narration_anchor_naming_a_step_the_events_do_not_hold_leads_nowhere(
    root: Path, tmp_path: Path
) -> None:
    """Go to definition from an anchor of a step that events.jsonl does not hold (a narration
    edited by hand) failed the feature, its traceback in the log; it offers no place, as the
    hover there shows nothing."""
    import_transcript(resolve_target(root), session_writing(root, tmp_path))
    narration = working_folder(resolve_target(root)).path / "narration.md"
    text = narration.read_text() + '\n<a id="step-99"></a>**Step 99 · File change**\n'
    line = text.split("\n").index('<a id="step-99"></a>**Step 99 · File change**')
    server = PipeServer().initialize({}, [uri(root)])
    try:
        document = server.open(uri(narration), text, "markdown")
        where = {"textDocument": {"uri": document}, "position": {"line": line, "character": 0}}
        server.send({"id": 2, "method": "textDocument/hover", "params": where})
        assert server.answer(2)["result"] is None  # once the narration is indexed
        server.send({"id": 3, "method": "textDocument/definition", "params": where})
        assert server.answer(3)["result"] == []
        assert not [message for message in server.logged if "Traceback" in message]
    finally:
        server.close()


async def test_definition_asked_at_once_waits_for_the_steps(
    client: LanguageClient, root: Path, tmp_path: Path
) -> None:
    """A narration (always indexed in a worker) and a long events.jsonl answer go to
    definition asked right after opening as hovers do: LSP has no way to make the client ask
    again once the steps are known."""
    transcript = Transcript(root)
    transcript.user("Echo a while, then write the helper.")
    for number in range(1500):
        transcript.tool(f"toolu_{number}", "Bash", {"command": f"echo {number}"}, "x" * 200)
    transcript.write_file(
        "toolu_write", f"{root}/src/retry.py", "def retry(call):\n    return call()\n"
    )
    (root / "src" / "retry.py").write_text("def retry(call):\n    return call()\n")
    import_transcript(resolve_target(root), transcript.save(tmp_path / "long.jsonl"))
    folder = working_folder(resolve_target(root)).path
    records = lines_of(folder / "events.jsonl")
    [step] = [record["step"] for record in records if record["kind"] == "file_change"]
    text = (folder / "narration.md").read_text().split("\n")
    anchors = {
        "events.jsonl": step - 1,
        "narration.md": next(n for n, line in enumerate(text) if f'id="step-{step}"' in line),
    }
    for name, line in anchors.items():
        document = open_file(
            client, folder / name, "json" if name.endswith("jsonl") else "markdown"
        )
        found = await client.text_document_definition_async(
            types.DefinitionParams(
                text_document=types.TextDocumentIdentifier(uri=document),
                position=types.Position(line=line, character=0),
            )
        )
        assert isinstance(found, list) and [(f.uri, f.range.start.line) for f in found] == [
            (uri(root / "src" / "retry.py"), 0)
        ], name


async def test_definition_follows_a_file_renamed_since(
    client: LanguageClient, repo: pygit2.Repository, root: Path, tmp_path: Path
) -> None:
    """The file a step wrote, committed and then moved with a plain `mv`: go to definition
    from the step (in events.jsonl and in the narration) lands in the file where it is now,
    as provenance follows it, not at the path it had."""
    content = "def retry(call):\n    return call()\n"
    (root / "src" / "retry.py").write_text(content)
    import_transcript(resolve_target(root), session_writing(root, tmp_path))
    commit_files(repo, {"src/retry.py": content}, "the agent's helper")
    (root / "src" / "retry.py").rename(root / "src" / "retrying.py")
    folder = working_folder(resolve_target(root)).path
    records = lines_of(folder / "events.jsonl")
    [step] = [record["step"] for record in records if record["kind"] == "file_change"]
    text = (folder / "narration.md").read_text().split("\n")
    anchors = {
        "events.jsonl": step - 1,
        "narration.md": next(n for n, line in enumerate(text) if f'id="step-{step}"' in line),
    }
    for name, line in anchors.items():
        document = open_file(
            client, folder / name, "json" if name.endswith("jsonl") else "markdown"
        )
        found = await client.text_document_definition_async(
            types.DefinitionParams(
                text_document=types.TextDocumentIdentifier(uri=document),
                position=types.Position(line=line, character=0),
            )
        )
        assert isinstance(found, list) and [(f.uri, f.range.start.line) for f in found] == [
            (uri(root / "src" / "retrying.py"), 0)
        ], name


def test_events_saved_with_a_byte_order_mark_keep_their_first_step(
    root: Path, tmp_path: Path
) -> None:
    """An events.jsonl an editor saved with a byte order mark before its first line: the
    narration's lens and hover of step 1, which read the events on disk, and the workspace's
    symbols show step 1 as they do without it (the mark is no part of the line's JSON)."""
    import_transcript(resolve_target(root), session_writing(root, tmp_path))
    folder = working_folder(resolve_target(root)).path
    events = folder / "events.jsonl"
    events.write_bytes(b"\xef\xbb\xbf" + events.read_bytes())
    narration = (folder / "narration.md").read_text(encoding="utf-8")
    [anchor] = [n for n, line in enumerate(narration.split("\n")) if 'id="step-1"' in line]
    server = PipeServer().initialize({}, [uri(root)])
    try:
        server.send({"id": 2, "method": "workspace/symbol", "params": {"query": "session_start"}})
        found = server.answer(2)["result"]
        assert [(s["name"][:17], s["location"]["range"]["start"]["line"]) for s in found] == [
            ("1 · session_start", 0)
        ]
        document = server.open(uri(folder / "narration.md"), narration, "markdown")
        params = {"textDocument": {"uri": document}}
        request_id, deadline = 3, time.monotonic() + 15
        while True:
            server.send({"id": request_id, "method": "textDocument/codeLens", "params": params})
            shown = server.answer(request_id)["result"]
            if shown:
                break
            assert time.monotonic() < deadline
            request_id += 1
            time.sleep(0.1)
        first = min(shown, key=lambda lens: lens["range"]["start"]["line"])
        assert first["range"]["start"]["line"] == anchor
        assert first["command"]["title"].startswith("1 · session_start")
        position = {"line": anchor, "character": 0}
        server.send(
            {
                "id": 1000,
                "method": "textDocument/hover",
                "params": {**params, "position": position},
            }
        )
        hover = server.answer(1000)["result"]
        assert hover is not None and hover["contents"]["value"].startswith("**Step 1 ·")
    finally:
        server.close()


@pytest.mark.parametrize("request_method", ["textDocument/hover", "textDocument/definition"])
def test_a_step_of_megabytes_leaves_other_requests_answered(
    root: Path, request_method: str
) -> None:
    """A call whose arguments are 20 MiB (250,000 edits in one call), or a change whose diff
    is, takes a tenth of a second or more to show in its hover or to place for its
    definition: that runs in a worker, so a hover in another document asked just after it is
    answered first, as it was not while the loop read the step. (A step whose bulk is one
    string is mostly one C call that holds the interpreter's lock: the worker cannot let the
    other hover through during it, so that case cannot show the worker's effect.)"""
    events = working_folder(resolve_target(root)).path / "events.jsonl"
    events.parent.mkdir(parents=True)
    edits = [
        {"old_string": f"line {n} of the file", "new_string": f"line {n} of the file, changed"}
        for n in range(250_000)
    ]
    diff = "@@ -0,0 +1,900000 @@\n" + "".join(f"+line {n} added\n" for n in range(1_200_000))
    source = {"file": "s.jsonl", "line": 1}
    arguments = {"file_path": "src/app.py", "edits": edits}
    records: list[dict[str, Any]] = [
        {"kind": "session_start", "harness": "claude-code", "cwd": "."},
        {"kind": "tool_call", "call_id": "c1", "name": "MultiEdit", "input": arguments},
        {"kind": "tool_result", "call_id": "c1", "output": "Applied 250000 edits"},
    ]
    if request_method == "textDocument/definition":
        change = {"operation": "modify", "path": "src/app.py", "diff": diff, "anchored": True}
        records[1:] = [{"kind": "file_change", **change}]
    text = "".join(
        json.dumps({**record, "step": n, "session": "s1", "source": source}) + "\n"
        for n, record in enumerate(records, 1)
    )
    assert len(text) > 20 * 1024 * 1024
    server = PipeServer().initialize({}, [uri(root)])

    def ask(request_id: int, method: str, document: str, line: int) -> None:
        position = {"line": line, "character": 0}
        params = {"textDocument": {"uri": document}, "position": position}
        server.send({"id": request_id, "method": method, "params": params})

    def answered(request_id: int) -> Any:
        return server.answer(request_id, timeout=60)["result"]

    try:
        source_file = server.open(uri(root / "src" / "app.py"), "line 1\n")
        document = server.open(uri(events), text, "json")
        big = 1  # the call, or the change
        ask(2, request_method, document, big)  # answered once the file is indexed
        assert answered(2)
        ask(3, "textDocument/hover", source_file, 0)
        answered(3)
        # The loop reads the next message only when it is not busy: without the worker, the
        # large step's answer always came first. With it, the other hover does, unless a
        # loaded machine schedules the reader late: one round of six is enough to tell.
        others_first = False
        for request_id in range(10, 22, 2):
            ask(request_id, request_method, document, big)
            ask(request_id + 1, "textDocument/hover", source_file, 0)
            first = server.wait_for(
                lambda message, asked=(request_id, request_id + 1): message.get("id") in asked
            )
            others_first = first["id"] == request_id + 1
            other_id = request_id if others_first else request_id + 1
            second = server.answer(other_id, timeout=60)
            found = (second if others_first else first)["result"]
            if request_method == "textDocument/hover":
                shown = found["contents"]["value"]
                assert "**Step 2 · tool\\_call**" in shown and "`MultiEdit`" in shown
                assert "Applied 250000 edits" in shown
            else:
                assert [(f["uri"], f["range"]["start"]["line"]) for f in found] == [
                    (uri(root / "src" / "app.py"), 0)
                ]
            if others_first:
                break
        assert others_first, "the large step's answer came first every time"
    finally:
        server.close()
