"""Entries in the editor, commands, the sheet file, outside writes and branch switches."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pygit2
import pytest
import pytest_lsp
from lsp_harness import (
    CLIENTS,
    SERVER,
    buffers,
    diagnostics,
    eventually,
    execute,
    files_changed,
    open_file,
    start,
    type_text,
    uri,
)
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient
from repos import INJECTED, clone_committing_sheet, make_repo

from stet_lsp.core.anchors import make_anchor
from stet_lsp.core.sheet import StyleSheet
from stet_lsp.core.targets import Target, resolve_target


@pytest_lsp.fixture(config=SERVER, params=CLIENTS)
async def client(request: pytest.FixtureRequest, lsp_client: LanguageClient):  # type: ignore[no-untyped-def]
    await start(lsp_client, request.param)
    yield
    await lsp_client.shutdown_session()


def entries_of(found: list[types.Diagnostic]) -> list[types.Diagnostic]:
    return [d for d in found if isinstance(d.data, dict) and d.data.get("type") == "entry"]


async def test_anchored_entries_show_as_diagnostic_lens_and_hover(
    client: LanguageClient, root: Path
) -> None:
    sheet = StyleSheet(resolve_target(root))
    app = root / "src" / "app.py"
    entry = sheet.add(
        "Use the existing helper here.",
        kind="convention",
        author="agent",
        anchor=make_anchor(root, app, 5),
    )
    document = open_file(client, app)
    found = entries_of(await eventually(lambda: diagnostics(client, document)))
    [diagnostic] = found
    assert diagnostic.range.start.line == 4
    assert diagnostic.severity == types.DiagnosticSeverity.Information
    assert (diagnostic.source, diagnostic.code) == ("stet", "convention")
    assert diagnostic.data == {"type": "entry", "entryId": entry.id}

    lenses = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=document))
    )
    assert [(lens.range.start.line, lens.command.title) for lens in lenses or []] == [
        (4, "style sheet: 1 note")
    ]  # type: ignore[union-attr]

    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=document),
            position=types.Position(line=4, character=0),
        )
    )
    assert hover is not None and "Use the existing helper here." in hover.contents.value  # type: ignore[union-attr]

    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=document),
            range=diagnostic.range,
            context=types.CodeActionContext(diagnostics=[diagnostic]),
        )
    )
    [discard] = [a for a in actions or [] if a.title.startswith("Discard")]
    await execute(client, discard.command.command, **discard.command.arguments[0])  # type: ignore[union-attr]
    assert sheet.get(entry.id).status == "discarded"
    await eventually(lambda: _no_entries(client, document))


async def _no_entries(client: LanguageClient, document: str) -> bool:
    return not entries_of(await diagnostics(client, document))


async def test_outside_writes_and_branch_switches_reach_open_documents(
    client: LanguageClient, repo: pygit2.Repository, root: Path
) -> None:
    app = root / "src" / "app.py"
    document = open_file(client, app)
    await eventually(lambda: _no_entries(client, document))
    sheet = StyleSheet(resolve_target(root))
    sheet.add("written by an agent", author="agent", anchor=make_anchor(root, app, 3))
    files_changed(client, sheet.path)

    async def shown() -> list[types.Diagnostic]:
        return entries_of(await diagnostics(client, document))

    [found] = await eventually(shown, timeout=15)
    assert found.range.start.line == 2 and "written by an agent" in found.message
    repo.branches.local.create("other", repo[repo.head.target])
    repo.checkout(repo.branches.local["other"])
    files_changed(client, root / ".git" / "HEAD")
    await eventually(lambda: _no_entries(client, document), timeout=15)
    repo.checkout(repo.branches.local["main"])
    files_changed(client, root / ".git" / "HEAD")
    assert await eventually(shown, timeout=15)


async def test_a_commit_on_a_detached_head_keeps_its_entries(
    client: LanguageClient, repo: pygit2.Repository, root: Path
) -> None:
    """The sheet is keyed by the detached commit: after `git commit` the editor listed nothing
    and its notes no longer showed, the file stranded under the commit before."""
    repo.set_head(repo.head.target)
    app = root / "src" / "app.py"
    document = open_file(client, app)
    await execute(client, "stet.note.add", uri=document, text="kept on", line=2)
    app.write_text(app.read_text() + "line 21\n")
    git_cli = ["git", "-c", "user.name=A", "-c", "user.email=a@stet.invalid"]
    subprocess.run([*git_cli, "commit", "-qam", "more"], cwd=root, check=True)
    head = repo[repo.head.target].short_id

    listed = await execute(client, "stet.note.list", uri=document)  # before any watcher event

    assert listed["target"] == {"kind": "detached", "name": head, **_key_of(root, head)}
    assert [e["text"] for e in listed["entries"]] == ["kept on"]
    files_changed(client, root / ".git" / "HEAD")
    [shown] = await eventually(lambda: _entries_shown(client, document), timeout=15)
    assert "kept on" in shown.message


def _key_of(root: Path, head: str) -> dict[str, str]:
    target = Target(root, "detached", head)
    return {"key": target.key, "label": target.label}


async def _entries_shown(client: LanguageClient, document: str) -> list[types.Diagnostic]:
    return entries_of(await diagnostics(client, document))


async def test_commands(client: LanguageClient, root: Path) -> None:
    app = root / "src" / "app.py"
    document = open_file(client, app)
    added = (
        await execute(
            client, "stet.note.add", uri=document, text="anchored note", kind="markup", line=6
        )
    )["entry"]
    assert added["anchor"] == {"path": "src/app.py", "line": 7, "text": "line 7"}
    plain = (await execute(client, "stet.note.add", uri=uri(root), text="a folder works too"))[
        "entry"
    ]
    listed = await execute(client, "stet.note.list", uri=document)
    assert listed["target"]["name"] == "main"
    assert sorted(e["id"] for e in listed["entries"]) == sorted([plain["id"], added["id"]])
    placements = {e["id"]: e["placement"] for e in listed["entries"]}
    assert placements[added["id"]] == {"line": 7, "lost": False}
    assert placements[plain["id"]] is None
    # The cursor on the line an editor shows after the last line break: the last line.
    last = len(app.read_text().splitlines())
    after_last = await execute(client, "stet.note.add", uri=document, text="at the end", line=last)
    assert after_last["entry"]["anchor"]["line"] == last
    # A text with no line break after its last line shows no line after it.
    unbroken = root / "src" / "unbroken.py"
    unbroken.write_text("a = 1\nb = 2")
    with pytest.raises(JsonRpcException, match="holds lines 0 to 1, not 2"):
        await execute(client, "stet.note.add", uri=open_file(client, unbroken), text="x", line=2)
    edited = await execute(
        client, "stet.note.edit", uri=document, id=added["id"], text="better text"
    )
    assert edited["entry"]["text"] == "better text"
    brief = await execute(client, "stet.brief", uri=document, budget=500)
    assert brief["text"].startswith("## Style sheet") and "better text" in brief["text"]
    paused = await execute(client, "stet.pause", uri=document)
    assert paused["paused"] is True
    app.write_text(app.read_text() + "# stet: refused while paused\n")
    notes = open_file(client, app)
    with pytest.raises(JsonRpcException, match="paused"):
        await execute(client, "stet.margin.record", uri=notes, all=True)
    await execute(client, "stet.resume", uri=document)
    discarded = await execute(client, "stet.note.discard", uri=document, id=plain["id"])
    assert discarded["entry"]["status"] == "discarded"
    opened = await execute(client, "stet.sheet.open", uri=document)
    assert opened["uri"] == uri(resolve_target(root).sheet_path)


async def test_a_sheet_git_tracks_is_not_briefed(client: LanguageClient, tmp_path: Path) -> None:
    """A clone committing the sheet of the branch it checks out: the server lists its entries
    but does not brief them to an agent."""
    clone = clone_committing_sheet(tmp_path / "hostile")
    document = open_file(client, clone / "README.md", "markdown")
    with pytest.raises(JsonRpcException, match="is not briefed: git's index holds") as raised:
        await execute(client, "stet.brief", uri=document)
    assert "git rm --cached .stet/cache/sheets/" in str(raised.value)
    assert INJECTED not in str(raised.value)
    listed = await execute(client, "stet.note.list", uri=document)
    assert [e["text"] for e in listed["entries"]] == [INJECTED]


async def test_a_sheet_git_tracks_is_not_written(client: LanguageClient, tmp_path: Path) -> None:
    """Every command that writes the sheet refuses one git's index holds with the message
    naming it, on disk or in the editor's buffer with unsaved edits, and the server goes on
    answering."""
    clone = clone_committing_sheet(tmp_path / "hostile")
    sheet = StyleSheet(resolve_target(clone))
    disk = sheet.path.read_bytes()
    (clone / "notes.py").write_text("x = 1  # stet: keep x at one\n")
    document = open_file(client, clone / "notes.py")
    writes = [
        ("stet.note.add", {"text": "mine"}),
        ("stet.note.edit", {"id": "inject", "text": "softened"}),
        ("stet.note.discard", {"id": "inject"}),
        ("stet.pause", {}),
        ("stet.resume", {}),
        ("stet.graduate", {"id": "inject", "route": "discard"}),
        ("stet.margin.record", {"all": True}),
    ]
    for command, arguments in writes:
        with pytest.raises(JsonRpcException, match="is not written: git's index holds") as raised:
            await execute(client, command, uri=document, **arguments)
        assert "git rm --cached .stet/cache/sheets/" in str(raised.value), command
    # The sheet open with unsaved edits: refused the same, the buffer left as it is.
    typed = disk.decode() + "- typed, not saved\n"
    opened = open_file(client, sheet.path, "markdown", typed)
    for command, arguments in writes[:-1]:
        with pytest.raises(JsonRpcException, match="is not written: git's index holds"):
            await execute(client, command, uri=opened, **arguments)
    assert buffers(client)[opened].text == typed
    assert sheet.path.read_bytes() == disk
    assert not (clone / ".stet" / ".gitignore").exists()
    listed = await execute(client, "stet.note.list", uri=document)
    assert [e["text"] for e in listed["entries"]] == [INJECTED]


@pytest.mark.parametrize(
    "command, arguments, message",
    [
        ("stet.note.add", [], "missing argument 'uri'"),
        ("stet.note.add", ["text"], "one object argument"),
        ("stet.note.add", [{"uri": 5, "text": "x"}], "'uri' must be a str"),
        ("stet.note.add", [{"text": "x"}], "missing argument 'uri'"),
        (
            "stet.note.add",
            [{"uri": "file:///nowhere/x.py", "text": "x"}],
            "not inside a git repository",
        ),
        ("stet.note.add", [{"uri": "untitled:1", "text": "x"}], "not inside a git repository"),
        ("stet.note.add", [{"uri": "URI", "text": "x", "kind": "bogus"}], "unknown kind"),
        ("stet.note.add", [{"uri": "URI", "text": "x", "line": "3"}], "whole number"),
        ("stet.note.add", [{"uri": "URI", "text": "x", "line": 999}], "0 to 19, not 999"),
        ("stet.note.add", [{"uri": "URI", "text": "x", "line": -1}], "must be 0 or more"),
        ("stet.note.edit", [{"uri": "URI", "id": "nope", "text": "x"}], "no entry with id"),
        ("stet.margin.record", [{"uri": "URI", "line": 0}], "no margin note on line 1 to record"),
        (
            "stet.margin.record",
            [{"uri": "URI", "all": True}],
            r"holds no margin note to record \(a comment holding 'stet:'\)",
        ),
        ("stet.brief", [{"uri": "URI", "budget": 0}], "1 or more"),
        ("stet.pause", [{"uri": "URI", "until": "soon"}], "ISO date"),
        ("stet.nonsense", [{}], "not defined"),
    ],
)
async def test_bad_command_arguments_get_clear_errors(
    client: LanguageClient, root: Path, command: str, arguments: list[object], message: str
) -> None:
    document = open_file(client, root / "src" / "app.py")
    arguments = [
        {k: document if v == "URI" else v for k, v in a.items()} if isinstance(a, dict) else a
        for a in arguments
    ]
    with pytest.raises(JsonRpcException, match=message):
        await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command=command, arguments=arguments)
        )
    # The server keeps answering.
    listed = await execute(client, "stet.note.list", uri=document)
    assert listed["entries"] == []


async def test_the_sheet_file_has_lenses_actions_outline_and_problems(
    client: LanguageClient, root: Path
) -> None:
    sheet = StyleSheet(resolve_target(root))
    keep = sheet.add("keep me", kind="convention")
    lost = sheet.add(
        "about a vanished line", kind="markup", anchor=make_anchor(root, root / "src" / "app.py", 9)
    )
    (root / "src" / "app.py").write_text("rewritten\n")
    text = sheet.path.read_text().replace(
        "## Notes\n\n", "## Notes\n\n- a hand note\n## Ideas\n\n- x\n"
    )
    sheet.path.write_text(text)
    document = open_file(client, sheet.path, language="markdown")

    async def both() -> list[types.Diagnostic]:
        found = await diagnostics(client, document)
        codes = sorted(str(d.code) for d in found)
        return found if codes == ["anchor-lost", "unknown-section"] else []

    # The anchors are checked in the background (reading the anchored files).
    found = await eventually(both)
    assert any(d.data == {"type": "entry", "entryId": lost.id} for d in found)

    lenses = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=document))
    )
    per_entry = {
        (lens.command.arguments[0]["id"], lens.command.title)  # type: ignore[union-attr,index]
        for lens in lenses or []
    }
    assert per_entry == {
        (entry_id, title)
        for entry_id in (keep.id, lost.id, _hand_id(sheet))
        for title in ("graduate", "propose skill", "discard")
    }
    symbols = await client.text_document_document_symbol_async(
        types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier(uri=document))
    )
    names = {s.name: [c.name for c in s.children or []] for s in symbols or []}  # type: ignore[union-attr]
    assert names["Conventions"] == ["keep me"] and names["Notes"] == ["a hand note"]
    keep_line = next(s for s in symbols if s.name == "Conventions").children[0].range.start.line  # type: ignore[union-attr]
    assert sheet.path.read_text().splitlines()[keep_line].startswith("- keep me")

    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=document),
            range=types.Range(
                start=types.Position(line=keep_line, character=0),
                end=types.Position(line=keep_line, character=0),
            ),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    assert [a.title for a in actions or []] == [  # type: ignore[union-attr]
        f"Graduate entry {keep.id} into the trajectory",
        f"Propose entry {keep.id} as a skill",
        f"Discard entry {keep.id}",
    ]
    discard = (actions or [])[-1]
    await execute(client, discard.command.command, **discard.command.arguments[0])  # type: ignore[union-attr]
    assert sheet.get(keep.id).status == "discarded"


async def test_another_targets_sheet_offers_no_graduation_and_says_why(
    client: LanguageClient, root: Path
) -> None:
    """Graduation works on the current target's sheet: a named target's sheet (or a branch's
    after a switch) offered routes that all failed with 'no entry with id'."""
    other = StyleSheet(Target(root, "named", "pr-42"))
    entry = other.add("PR-only convention", kind="convention")
    document = open_file(client, other.path, language="markdown")

    async def told() -> list[types.Diagnostic]:
        found = await diagnostics(client, document)
        return [d for d in found if d.code == "other-target"]

    (note,) = await eventually(told)
    assert note.range.start.line == 0
    assert note.message == (
        "the style sheet of named target pr-42, while HEAD is on main: its entries graduate "
        "from their own target (`stet graduate ID --target pr-42`), so none is offered here"
    )
    here = types.TextDocumentIdentifier(uri=document)
    assert not await client.text_document_code_lens_async(types.CodeLensParams(text_document=here))
    line = (
        other.path.read_text()
        .splitlines()
        .index(
            next(
                text for text in other.path.read_text().splitlines() if text.startswith("- PR-only")
            )
        )
    )
    where = types.Range(start=types.Position(line, 0), end=types.Position(line, 0))
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(here, where, types.CodeActionContext(diagnostics=[]))
    )
    assert not any(entry.id in a.title for a in actions or [])  # type: ignore[union-attr]


def _hand_id(sheet: StyleSheet) -> str:
    return next(e.id for e in sheet.entries() if e.text == "a hand note")


async def test_unsaved_sheet_changes_are_never_written_under_the_user(
    client: LanguageClient, root: Path
) -> None:
    sheet = StyleSheet(resolve_target(root))
    sheet.add("on disk", kind="note")
    document = open_file(client, sheet.path, language="markdown")
    on_disk = sheet.path.read_bytes()
    unsaved = sheet.path.read_text().replace("## Notes\n\n", "## Notes\n\n- typed, not saved\n")
    type_text(client, document, unsaved)
    added = await execute(
        client, "stet.note.add", uri=document, text="from a command", kind="convention"
    )
    assert sheet.path.read_bytes() == on_disk
    text = buffers(client)[document].text
    assert "- typed, not saved" in text and f"id={added['entry']['id']}" in text
    assert "on disk" in text


async def test_the_brief_places_anchors_in_unsaved_buffers_as_the_list_does(
    client: LanguageClient, root: Path
) -> None:
    """Lines typed above an anchored line, unsaved, right after the file opened: the brief
    placed the anchor on the file's line on disk (the list on the buffer's, once the file was
    placed in its repository), and an unsaved file of the same path in another repository
    stood in for this one's."""
    app = root / "src" / "app.py"
    StyleSheet(resolve_target(root)).add(
        "Use the existing helper here.", anchor=make_anchor(root, app, 5)
    )
    document = open_file(client, app)
    type_text(client, document, "# one\n# two\n# three\n" + app.read_text())
    other = make_repo(root.parent / "other", files={"src/app.py": "line 5\n"})
    other_document = open_file(client, Path(other.workdir) / "src" / "app.py")
    type_text(client, other_document, "line 5\n")
    brief = await execute(client, "stet.brief", uri=document, budget=500)
    assert "Use the existing helper here. (src/app.py:8)" in brief["text"], brief["text"]
    listed = await execute(client, "stet.note.list", uri=document)
    assert listed["entries"][0]["placement"] == {"line": 8, "lost": False}
