"""No writer loses an entry, and nothing outside the repository is touched, in the server:
outside writes merged into an unsaved sheet, a sheet open without edits, a FIFO sheet, and a
cloned repository that commits its sheets folder as a link."""

from __future__ import annotations

import asyncio
import hashlib
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

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
    placed,
    save,
    start,
    type_text,
    uri,
)
from lsp_pipe import PipeServer
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient
from repos import clone_linking_sheets_to

from stet_lsp.core.sheet import StyleSheet
from stet_lsp.core.sheet_format import SheetDocument
from stet_lsp.core.targets import resolve_target

WRITERS = 4
NOTES_EACH = 50
WRITER = """
import sys
from stet_lsp.core.sheet import StyleSheet
from stet_lsp.core.targets import resolve_target

sheet = StyleSheet(resolve_target(sys.argv[1]))
for number in range(int(sys.argv[3])):
    sheet.add(f"writer {sys.argv[2]} note {number}", author="agent")
"""


@pytest_lsp.fixture(config=SERVER, params=CLIENTS)
async def client(request: pytest.FixtureRequest, lsp_client: LanguageClient):  # type: ignore[no-untyped-def]
    await start(lsp_client, request.param)
    yield
    await lsp_client.shutdown_session()


def texts(text: str) -> list[str]:
    return [entry.text for entry in SheetDocument.parse(text).entries()]


async def test_outside_writes_are_merged_into_an_unsaved_sheet_and_saving_keeps_all(
    client: LanguageClient, root: Path
) -> None:
    sheet = StyleSheet(resolve_target(root))
    first = sheet.add("first, from before", kind="convention")
    document = open_file(client, sheet.path, language="markdown")
    typed = (
        sheet.path.read_text().replace("first, from before", "first, reworded in the editor")
        + "\n## Notes\n\n- typed in the editor, not saved\n"
    )
    type_text(client, document, typed)
    # The server has read the disk under the opened sheet. An outside write before that
    # (possible under load: a pushing client's diagnostics do not wait) leaves it unable to
    # tell the opened text from unsaved edits an editor restored, and the reworded entry is
    # then kept in both versions, as a conflict.
    await placed(client, document)

    writers = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(root), str(n), str(NOTES_EACH)])
        for n in range(WRITERS)
    ]
    while any(writer.poll() is None for writer in writers):
        files_changed(client, sheet.path)  # what an editor watching the files reports
        await asyncio.sleep(0.2)
    assert all(writer.returncode == 0 for writer in writers)
    files_changed(client, sheet.path)
    expected = {f"writer {n} note {k}" for n in range(WRITERS) for k in range(NOTES_EACH)}

    def merged() -> bool:
        return expected <= set(texts(buffers(client)[document].text))

    await eventually(merged, timeout=20)
    save(client, document, sheet.path)
    on_disk = texts(sheet.path.read_text())
    assert sorted(on_disk) == sorted(
        [*expected, "first, reworded in the editor", "typed in the editor, not saved"]
    )
    assert [e.id for e in StyleSheet(resolve_target(root)).entries()].count(first.id) == 1


async def test_a_save_in_place_read_half_way_is_no_base_for_the_next_merge(
    client: LanguageClient, root: Path
) -> None:
    """Another program saves the open sheet in place (truncate, then write) while the
    server reads it; the person then types and an agent adds a note. The empty file caught
    in the middle is not taken for the disk's text: the reword and the note are merged, not
    shown as two versions of one entry."""
    sheet = StyleSheet(resolve_target(root))
    sheet.add("first, from before")
    document = open_file(client, sheet.path, language="markdown")
    await placed(client, document)
    saved = sheet.path.read_text(encoding="utf-8")
    with open(sheet.path, "w", encoding="utf-8") as saving:
        saving.flush()  # truncated: the save has begun
        files_changed(client, sheet.path)
        await asyncio.sleep(1.0)  # the server's poll and its reload of the report read it
        saving.write(saved)
    type_text(
        client,
        document,
        buffers(client)[document].text.replace("first, from before", "first, reworded"),
    )
    sheet.add("agent note", author="agent")
    files_changed(client, sheet.path)

    def merged() -> bool:
        return "agent note" in texts(buffers(client)[document].text)

    await eventually(merged, timeout=10)
    assert sorted(texts(buffers(client)[document].text)) == ["agent note", "first, reworded"]
    found = await diagnostics(client, document)
    assert [d for d in found if d.code == "merge-conflict"] == []


@pytest.mark.parametrize("how", ["in place", "renamed away"])
async def test_a_save_caught_half_way_after_an_unsaved_reword_merges_once(
    client: LanguageClient, root: Path, how: str
) -> None:
    """The person rewords an entry (unsaved); another program then saves the sheet with one
    more entry, in place (truncate, then write) or as Vim does (the old file renamed away, a
    new one written), while the server reads it: the empty or missing file is no base, and
    the buffer ends with the reword and the new entry, once each."""
    target = resolve_target(root)
    sheet = StyleSheet(target)
    sheet.add("first, from before")
    document = open_file(client, sheet.path, language="markdown")
    await placed(client, document)
    reworded = buffers(client)[document].text.replace("first, from before", "first, reworded")
    type_text(client, document, reworded)
    other = StyleSheet(target, buffer=sheet.path.read_text(encoding="utf-8"))
    other.add("saved by hand")
    saved = other.buffer or ""
    if how == "renamed away":
        sheet.path.rename(root.parent / "sheet-backup.md")
        files_changed(client, sheet.path)
        await asyncio.sleep(1.0)
        sheet.path.write_text(saved, encoding="utf-8")
    else:
        with open(sheet.path, "w", encoding="utf-8") as saving:
            saving.flush()
            files_changed(client, sheet.path)
            await asyncio.sleep(1.0)
            saving.write(saved)
    files_changed(client, sheet.path)

    def merged() -> bool:
        return "saved by hand" in texts(buffers(client)[document].text)

    await eventually(merged, timeout=10)
    assert sorted(texts(buffers(client)[document].text)) == ["first, reworded", "saved by hand"]


def type_prose(client: LanguageClient, document: str) -> None:
    """An unsaved edit of the sheet's prose alone: its entries are unchanged in the buffer."""
    text = buffers(client)[document].text
    type_text(client, document, text.replace("Edit freely", "Edit (typed) freely"))


@pytest.mark.parametrize("how", ["removed", "emptied", "removed, typed after"])
async def test_a_sheet_removed_then_written_anew_by_an_agent_takes_no_entry_away(
    client: LanguageClient, root: Path, how: str
) -> None:
    """The sheet is removed (or emptied) on disk, then an agent's note makes a new one holding
    that note alone, while the buffer has unsaved edits (or has none until the person types
    after both, the editor reloading neither: Neovim without autoread): the buffer keeps its
    entries and gains the note (what it lacks on disk is no deletion a person made)."""
    target = resolve_target(root)
    sheet = StyleSheet(target)
    sheet.add("first, from before")
    sheet.add("second, from before")
    document = open_file(client, sheet.path, language="markdown")
    await placed(client, document)
    if how != "removed, typed after":
        type_prose(client, document)
    if how == "emptied":
        sheet.path.write_text("", encoding="utf-8")
    else:
        sheet.path.unlink()
    files_changed(client, sheet.path)
    await asyncio.sleep(1.0)  # read missing or empty (the empty one after 0.3 s still)
    StyleSheet(target).add("agent note", author="agent")
    files_changed(client, sheet.path)
    if how == "removed, typed after":
        await asyncio.sleep(1.0)
        type_prose(client, document)

    def merged() -> bool:
        return "agent note" in texts(buffers(client)[document].text)

    await eventually(merged, timeout=10)
    assert sorted(texts(buffers(client)[document].text)) == [
        "agent note",
        "first, from before",
        "second, from before",
    ]


async def test_a_buffer_emptied_as_its_sheet_was_is_in_step_with_the_disk(
    client: LanguageClient, root: Path
) -> None:
    """The sheet is emptied on disk and the person empties the buffer too (the editor's
    revert): the buffer is the disk's again, so an agent's later note is the editor's to
    reload, not an edit of the buffer."""
    target = resolve_target(root)
    sheet = StyleSheet(target)
    sheet.add("first, from before")
    document = open_file(client, sheet.path, language="markdown")
    await placed(client, document)
    type_prose(client, document)
    sheet.path.write_text("", encoding="utf-8")
    files_changed(client, sheet.path)
    await asyncio.sleep(1.0)
    type_text(client, document, "")
    await placed(client, document)
    before = len(client.applied_edits)  # type: ignore[attr-defined]
    StyleSheet(target).add("agent note", author="agent")
    files_changed(client, sheet.path)
    await asyncio.sleep(1.5)
    assert len(client.applied_edits) == before  # type: ignore[attr-defined]


async def test_a_restored_buffer_over_a_missing_sheet_takes_a_commands_note(
    client: LanguageClient, root: Path
) -> None:
    """The editor restores a sheet never saved (no file on disk): it has unsaved edits, so a
    note added by a command goes into it, and nothing is written on disk."""
    sheet = StyleSheet(resolve_target(root))
    sheet.add("first, restored")
    restored = sheet.path.read_text(encoding="utf-8")
    sheet.path.unlink()
    document = open_file(client, sheet.path, language="markdown", text=restored)
    await placed(client, document)
    app = open_file(client, root / "src" / "app.py")
    await execute(client, "stet.note.add", uri=app, text="added by command", line=2)
    assert not sheet.path.exists()
    assert sorted(texts(buffers(client)[document].text)) == ["added by command", "first, restored"]


async def test_a_conflict_keeps_both_versions_and_is_shown(
    client: LanguageClient, root: Path
) -> None:
    sheet = StyleSheet(resolve_target(root))
    entry = sheet.add("the original text")
    document = open_file(client, sheet.path, language="markdown")
    type_text(
        client,
        document,
        buffers(client)[document].text.replace("the original text", "the editor's text"),
    )
    sheet.edit_text(entry.id, "the agent's text")
    files_changed(client, sheet.path)

    async def conflict() -> list[types.Diagnostic]:
        found = await diagnostics(client, document)
        return [d for d in found if d.code == "merge-conflict"]

    [shown] = await eventually(conflict, timeout=10)
    assert shown.severity == types.DiagnosticSeverity.Warning and entry.id in shown.message
    kept = texts(buffers(client)[document].text)
    assert "the editor's text" in kept and "the agent's text" in kept


async def test_a_fifo_sheet_never_stops_the_server(client: LanguageClient, root: Path) -> None:
    sheet = resolve_target(root).sheet_path
    sheet.parent.mkdir(parents=True)
    os.mkfifo(sheet)
    document = open_file(client, root / "src" / "app.py")
    started = time.monotonic()
    with pytest.raises(JsonRpcException, match="named pipe"):
        await execute(client, "stet.note.list", uri=document)
    with pytest.raises(JsonRpcException, match="named pipe"):
        await execute(client, "stet.note.add", uri=document, text="refused")
    await diagnostics(client, document)
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=document),
            position=types.Position(line=0, character=0),
        )
    )
    assert hover is None
    # Answered, not hung on the pipe (how fast is bench/'s business: under load in CI this
    # took 1.6 s).
    assert time.monotonic() - started < 20


async def test_a_cloned_repository_linking_its_sheets_folder_out_is_left_alone(
    client: LanguageClient, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    old = time.time() - 90 * 86400
    for name in ("diary.md", "notes.md"):
        (outside / name).write_text(f"{name}: private\n")
        os.utime(outside / name, (old, old))
    clone = clone_linking_sheets_to(tmp_path, outside)
    root = Path(clone.workdir).resolve()
    before = sorted(p.name for p in outside.iterdir())

    document = open_file(client, root / "README.md", language="markdown")
    await diagnostics(client, document)
    with pytest.raises(JsonRpcException, match="symbolic link"):
        await execute(client, "stet.note.add", uri=document, text="refused")
    await asyncio.sleep(1.0)  # retention has run for the repository by now
    assert sorted(p.name for p in outside.iterdir()) == before
    assert (outside / "diary.md").read_text() == "diary.md: private\n"


async def test_a_buffer_restored_with_unsaved_entries_keeps_them_and_gets_the_disks(
    client: LanguageClient, root: Path
) -> None:
    sheet = StyleSheet(resolve_target(root))
    sheet.add("on disk before")
    restored = sheet.path.read_text() + "- typed before the restart\n"
    document = open_file(client, sheet.path, "markdown", restored)
    sheet.add("written while the editor was away", author="agent")
    files_changed(client, sheet.path)
    await asyncio.sleep(0.5)
    type_text(client, document, buffers(client)[document].text + "- typed now\n")

    def merged() -> bool:
        return "written while the editor was away" in texts(buffers(client)[document].text)

    await eventually(merged, timeout=10)
    assert sorted(texts(buffers(client)[document].text)) == sorted(
        [
            "on disk before",
            "typed before the restart",
            "typed now",
            "written while the editor was away",
        ]
    )


@pytest.mark.parametrize("paused", [True, False], ids=["then a pause", "at once"])
@pytest.mark.parametrize("reloaded", [False, True], ids=["not reloaded", "reloaded"])
async def test_a_sheet_open_without_edits_gets_the_servers_note_on_disk(
    client: LanguageClient, root: Path, reloaded: bool, paused: bool
) -> None:
    """The CLI writes while the sheet is open without edits; the editor reloads it (before
    the server hears of the write) or not yet: either way the buffer is not taken for one
    with unsaved edits, and the server's note goes to disk beside the CLI's. `paused`: the
    command comes half a second later (the server has read the write by then, on a machine
    that is not busy); else at once, before the server has read it."""
    sheet = StyleSheet(resolve_target(root))
    sheet.add("first")
    document = open_file(client, sheet.path, language="markdown")
    await diagnostics(client, document)
    # The server has taken the open (a client that is pushed diagnostics did not wait for
    # it): a write before it would leave the opened text other than the disk's, which is a
    # buffer with unsaved edits.
    await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=document),
            position=types.Position(line=0, character=0),
        )
    )
    sheet.add("from the command line", author="agent")
    if reloaded:
        type_text(client, document, sheet.path.read_text())
    files_changed(client, sheet.path)
    if paused:
        await asyncio.sleep(0.5)
    await execute(client, "stet.note.add", uri=document, text="from the editor")
    assert sorted(e.text for e in sheet.entries()) == [
        "first",
        "from the command line",
        "from the editor",
    ]
    assert client.applied_edits == []  # type: ignore[attr-defined]


async def test_a_sheet_git_tracks_is_warned_of_once(client: LanguageClient, root: Path) -> None:
    """A cloned repository that tracks its own `.stet/cache/`: the server neither briefs nor
    writes its sheet, and says so, once."""
    sheet = StyleSheet(resolve_target(root))
    sheet.add("a private note", author="human")
    relative = sheet.path.relative_to(root).as_posix()
    subprocess.run(["git", "-C", str(root), "add", "-f", relative], check=True)
    document = open_file(client, root / "src" / "app.py")
    await diagnostics(client, document)

    def warnings() -> list[str]:
        return [m.message for m in client.messages if "git's index holds" in m.message]

    [warning] = await eventually(warnings)
    assert relative in warning and "git rm --cached -r .stet/cache" in warning
    with pytest.raises(JsonRpcException, match="is not written"):
        await execute(client, "stet.note.add", uri=document, text="another note")
    # Read again after a hand edit: not warned of again.
    with sheet.path.open("a", encoding="utf-8") as stream:
        stream.write("- typed by hand\n")
    files_changed(client, sheet.path)
    await asyncio.sleep(0.5)  # the server reads the sheet again
    await diagnostics(client, document)
    assert len(warnings()) == 1


@pytest.mark.parametrize("saved_read_first", [False, True], ids=["", "saved text read first"])
@pytest.mark.parametrize(
    "read_empty", ["never", "before the note (a new sheet)", "after the note (a save caught)"]
)
def test_a_save_over_disk_changes_the_editor_could_not_take_keeps_them(
    root: Path, read_empty: str, saved_read_first: bool
) -> None:
    """A client that cannot apply edits saves its buffer over a note another writer added:
    the server merges that note back into the sheet on disk. The sheet read empty before the
    note (the note then makes a new sheet of itself alone) or after it changes nothing: no
    entry is taken as deleted on disk, and the note is not forgotten; nor is it when the
    server reads the saved text (the buffer's own) before the editor says it saved."""
    sheet = StyleSheet(resolve_target(root))
    sheet.add("first")
    disk = sheet.path.read_text(encoding="utf-8")
    server = PipeServer().initialize({"workspace": {"applyEdit": False}}, [uri(root)])

    def emptied() -> None:
        sheet.path.write_text("", encoding="utf-8")
        time.sleep(1.5)  # read empty (0.3 s still), by the watcher's poll

    try:
        server.open(uri(sheet.path), disk, "markdown")
        typed = disk + "- typed by hand\n"
        change = {"textDocument": {"uri": uri(sheet.path), "version": 2}}
        change["contentChanges"] = [{"text": typed}]
        server.send({"method": "textDocument/didChange", "params": change})
        # An answer to a request after the change: the server has taken it (it reads the
        # messages in order) before another writer adds its note.
        symbols = {"textDocument": {"uri": uri(sheet.path)}}
        server.send({"id": 90, "method": "textDocument/documentSymbol", "params": symbols})
        server.answer(90)
        if read_empty.startswith("before"):
            emptied()
        StyleSheet(resolve_target(root)).add("from another writer", author="agent")
        server.wait_for(
            lambda message: (
                message.get("method") == "window/showMessage"
                and "not merged" in message["params"]["message"]
            )
        )
        if read_empty.startswith("after"):
            emptied()
        sheet.path.write_text(typed, encoding="utf-8")  # the editor saves its buffer
        if saved_read_first:
            time.sleep(1.5)  # read by the watcher's poll before the editor says so
        saved = {"textDocument": {"uri": uri(sheet.path)}}
        server.send({"method": "textDocument/didSave", "params": saved})
        deadline = time.monotonic() + 15
        while len(sheet.entries()) < 3 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert sorted(entry.text for entry in sheet.entries()) == [
            "first",
            "from another writer",
            "typed by hand",
        ]
    finally:
        server.close()


@pytest.mark.parametrize(("asks", "entries"), [(True, 1), (False, 1), (True, 16_000)])
def test_an_edit_merging_the_disk_says_first_what_disk_text_the_buffer_holds(
    root: Path, asks: bool, entries: int
) -> None:
    """Before the edit merging an outside write into an unsaved sheet, a client that asked
    (`experimental.stetSheetHolds`) is told the digest of the disk text merged, so that it
    can save over that file, and only that one, without asking; others are not. A sheet over
    a MiB has its digest made in a worker, told all the same before the edit."""
    sheet = StyleSheet(resolve_target(root))
    sheet.add("first")
    if entries > 1:  # entries typed into the file by hand, a line each
        line = "- a convention written out at some length, to make the sheet long: {}\n"
        with sheet.path.open("a", encoding="utf-8") as sheet_file:
            sheet_file.write("".join(line.format(n) for n in range(entries)))
    disk = sheet.path.read_text(encoding="utf-8")
    assert (len(disk) > 2**20) == (entries > 1)
    capabilities: dict[str, Any] = {"workspace": {"applyEdit": True}}
    if asks:
        capabilities["experimental"] = {"stetSheetHolds": True}
    server = PipeServer().initialize(capabilities, [uri(root)])
    try:
        server.open(uri(sheet.path), disk, "markdown")
        change = {"textDocument": {"uri": uri(sheet.path), "version": 2}}
        change["contentChanges"] = [{"text": disk + "- typed by hand\n"}]
        server.send({"method": "textDocument/didChange", "params": change})
        symbols = {"textDocument": {"uri": uri(sheet.path)}}
        server.send({"id": 90, "method": "textDocument/documentSymbol", "params": symbols})
        server.answer(90)
        sheet.add("from another writer", author="agent")
        merged = sheet.path.read_text(encoding="utf-8")
        seen: list[dict[str, Any]] = []
        server.wait_for(
            lambda message: (
                seen.append(message) is None and message.get("method") == "workspace/applyEdit"
            )
        )
        holds = [m["params"] for m in seen if m.get("method") == "stet/sheetHolds"]
        if asks:
            digest = hashlib.sha256(merged.encode("utf-8")).hexdigest()
            assert holds == [{"uri": uri(sheet.path), "sha256": digest}]
        else:
            assert holds == []
    finally:
        server.close()


def test_a_sheet_saved_with_a_lone_surrogate_still_takes_a_command_s_write(root: Path) -> None:
    """A client may send a lone surrogate in a text (JSON's "\\udce9", what a byte that is not
    UTF-8 can become). Saved, that text is what the buffer holds of the disk, and its
    `stet/sheetHolds` digest failed to encode it: the next command writing into the unsaved
    buffer was an internal error. It is hashed as the editor may have written it (WTF-8)."""
    sheet = StyleSheet(resolve_target(root))
    sheet.add("first")
    disk = sheet.path.read_text(encoding="utf-8")
    capabilities = {"workspace": {"applyEdit": True}, "experimental": {"stetSheetHolds": True}}
    server = PipeServer().initialize(capabilities, [uri(root)])
    try:
        document = server.open(uri(sheet.path), disk, "markdown")
        saved = disk + "- caf\udce9 typed by hand\n"
        for version, text in ((2, saved), (3, saved + "- typed after the save\n")):
            change = {"textDocument": {"uri": document, "version": version}}
            server.send(
                {
                    "method": "textDocument/didChange",
                    "params": {**change, "contentChanges": [{"text": text}]},
                }
            )
            if version == 2:
                sheet.path.write_bytes(saved.encode("utf-8", "surrogatepass"))
                identifier = {"textDocument": {"uri": document}}
                server.send({"method": "textDocument/didSave", "params": identifier})
        arguments = [{"uri": uri(root), "text": "from a command"}]
        params = {"command": "stet.note.add", "arguments": arguments}
        server.send({"id": 2, "method": "workspace/executeCommand", "params": params})
        seen: list[dict[str, Any]] = []
        answer = server.wait_for(
            lambda message: (
                seen.append(message) is None and message.get("id") == 2 and "method" not in message
            )
        )
        assert answer.get("error", {}).get("code") != -32603, answer
        holds = [m["params"] for m in seen if m.get("method") == "stet/sheetHolds"]
        digest = hashlib.sha256(saved.encode("utf-8", "surrogatepass")).hexdigest()
        assert holds and holds[0] == {"uri": document, "sha256": digest}
    finally:
        server.close()
