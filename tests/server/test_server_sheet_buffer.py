"""The open style sheet's buffer in the server: a buffer the editor restored with unsaved
edits keeps them and everything written meanwhile, and graduating into a buffer writes the
trajectory only once the editor holds the sheet's change."""

from __future__ import annotations

import asyncio
import json
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
    edited,
    eventually,
    execute,
    files_changed,
    open_file,
    save,
    start,
    text_edits,
    type_text,
    uri,
)
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from stet_lsp.core.sheet import StyleSheet
from stet_lsp.core.sheet_format import SheetDocument
from stet_lsp.core.targets import resolve_target
from stet_lsp.trajectory.store import working_folder

CLI = "import sys; from stet_lsp.cli import main; sys.exit(main(sys.argv[1:]))"


@pytest_lsp.fixture(config=SERVER, params=CLIENTS)
async def client(request: pytest.FixtureRequest, lsp_client: LanguageClient):  # type: ignore[no-untyped-def]
    await start(lsp_client, request.param)
    yield
    await lsp_client.shutdown_session()


def texts(text: str) -> list[str]:
    return [entry.text for entry in SheetDocument.parse(text).entries()]


def statuses(text: str) -> dict[str, str]:
    return {entry.id: entry.status for entry in SheetDocument.parse(text).entries()}


def refusing_edits(client: LanguageClient, refuse: bool) -> None:
    """Make the client refuse every workspace edit (as an editor does when the person typed
    while the server computed it), or apply them again."""
    features = client.protocol.fm.features
    applying = getattr(client, "applying_edits", None)
    if applying is None:
        applying = client.applying_edits = features[types.WORKSPACE_APPLY_EDIT]  # type: ignore[attr-defined]

    def refused(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        client.refused_edits = getattr(client, "refused_edits", 0) + 1  # type: ignore[attr-defined]
        return types.ApplyWorkspaceEditResult(applied=False)

    features[types.WORKSPACE_APPLY_EDIT] = refused if refuse else applying


@pytest.mark.parametrize("wait", [True, False], ids=["one at a time", "at once"])
async def test_a_buffer_restored_with_unsaved_edits_keeps_every_note_when_saved(
    client: LanguageClient, root: Path, wait: bool
) -> None:
    """Restored with a typed line; the command line and the server each add a note; saving
    the buffer keeps all three (`wait`: each step after the server has taken the one before)."""
    sheet = StyleSheet(resolve_target(root))
    sheet.add("on disk before")
    typed = sheet.path.read_text() + "- typed before the restart\n"
    document = open_file(client, sheet.path, "markdown", typed)
    if wait:
        await asyncio.sleep(0.5)
    written = subprocess.run(
        [sys.executable, "-c", CLI, "note", "add", "from the command line", "-C", str(root)],
        capture_output=True,
        text=True,
    )
    assert written.returncode == 0, written.stderr
    files_changed(client, sheet.path)
    if wait:
        await eventually(
            lambda: "from the command line" in texts(buffers(client)[document].text), timeout=10
        )
    await execute(client, "stet.note.add", uri=document, text="from the editor")
    expected = [
        "from the command line",
        "from the editor",
        "on disk before",
        "typed before the restart",
    ]
    await eventually(lambda: sorted(texts(buffers(client)[document].text)) == expected, timeout=10)
    save(client, document, sheet.path)
    await asyncio.sleep(0.5)  # the server reads the saved sheet
    assert sorted(texts(sheet.path.read_text())) == expected
    assert client.applied_edits  # type: ignore[attr-defined]


async def test_a_restored_buffer_that_is_what_is_on_disk_stays_clean(
    client: LanguageClient, root: Path
) -> None:
    """Open with the text on disk: the server's note goes to disk, no edit to the buffer."""
    sheet = StyleSheet(resolve_target(root))
    sheet.add("on disk before")
    document = open_file(client, sheet.path, "markdown", sheet.path.read_text())
    await asyncio.sleep(0.5)
    await execute(client, "stet.note.add", uri=document, text="from the editor")
    assert sorted(e.text for e in sheet.entries()) == ["from the editor", "on disk before"]
    assert client.applied_edits == []  # type: ignore[attr-defined]


async def test_notes_written_into_a_buffer_whose_edits_come_back_under_the_same_version(
    client: LanguageClient, root: Path
) -> None:
    """A client that reports the server's edit under the version it had (a client may send
    one twice): the server tells that the edit arrived by the text, not by the version, so
    each note is answered at once (it waited two seconds a note for a version that never
    came) and the buffer holds every note."""
    sheet = StyleSheet(resolve_target(root))
    sheet.add("on disk before")
    typed = sheet.path.read_text() + "- typed before the restart\n"
    document = open_file(client, sheet.path, "markdown", typed)
    await asyncio.sleep(0.5)  # the server has read the disk: the buffer has unsaved edits
    features = client.protocol.fm.features

    def same_version(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        buffer = buffers(client)[document]
        text = edited(client, buffer.text, text_edits(params.edit, document))
        buffer.text = text
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(
                    uri=document, version=buffer.version
                ),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )
        return types.ApplyWorkspaceEditResult(applied=True)

    features[types.WORKSPACE_APPLY_EDIT] = same_version
    began = time.monotonic()
    for number in range(3):
        await execute(client, "stet.note.add", uri=document, text=f"from the editor {number}")
    took = time.monotonic() - began
    assert sorted(texts(buffers(client)[document].text)) == [
        "from the editor 0",
        "from the editor 1",
        "from the editor 2",
        "on disk before",
        "typed before the restart",
    ]
    assert took < 3.0  # six seconds at least when each waited for a new version


def graduation_events(root: Path) -> list[dict[str, Any]]:
    session = working_folder(resolve_target(root)).path / "sessions" / "graduation.jsonl"
    if not session.exists():
        return []
    return [json.loads(line) for line in session.read_text().split("\n") if line]


async def test_graduating_into_a_buffer_that_refuses_the_edit_writes_nothing(
    client: LanguageClient, root: Path
) -> None:
    sheet = StyleSheet(resolve_target(root))
    entry = sheet.add("Tried a global retry decorator: it retried writes.", kind="ruled-out")
    document = open_file(client, sheet.path, "markdown")
    type_text(client, document, buffers(client)[document].text + "- typed, not saved\n")
    await asyncio.sleep(0.3)

    refusing_edits(client, True)
    with pytest.raises(JsonRpcException, match="nothing was written"):
        await execute(client, "stet.graduate", uri=document, id=entry.id, route="trajectory")
    assert client.refused_edits  # type: ignore[attr-defined]
    assert graduation_events(root) == []
    assert statuses(buffers(client)[document].text)[entry.id] == "open"
    assert sheet.get(entry.id).status == "open"

    refusing_edits(client, False)
    answer = await execute(client, "stet.graduate", uri=document, id=entry.id, route="trajectory")
    assert answer["entry"]["status"] == "graduated-trajectory"
    recorded = [e for e in graduation_events(root) if e.get("entry_id") == entry.id]
    assert sorted(e["kind"] for e in recorded) == ["graduation", "note"]
    assert statuses(buffers(client)[document].text)[entry.id] == "graduated-trajectory"
    assert "typed, not saved" in texts(buffers(client)[document].text)
    save(client, document, sheet.path)
    assert sheet.get(entry.id).status == "graduated-trajectory"


async def test_a_graduation_that_fails_after_the_edit_sets_the_buffer_back(
    client: LanguageClient, root: Path
) -> None:
    """The skill to graduate into is broken: nothing is recorded, and the status the buffer
    took for the graduation is set back to open (the person's typing stays)."""
    broken = root / ".stet" / "skills" / "retries" / "SKILL.md"
    broken.parent.mkdir(parents=True)
    broken.write_text("not a skill\n")
    sheet = StyleSheet(resolve_target(root))
    entry = sheet.add("Retries wrap only idempotent calls.", kind="convention")
    document = open_file(client, sheet.path, "markdown")
    type_text(client, document, buffers(client)[document].text + "- typed, not saved\n")
    await asyncio.sleep(0.3)

    with pytest.raises(JsonRpcException, match="Agent Skills spec"):
        await execute(
            client, "stet.graduate", uri=document, id=entry.id, route="skill", skill="retries"
        )
    assert graduation_events(root) == []
    assert len(client.applied_edits) == 2  # type: ignore[attr-defined]  # the status, set back
    assert statuses(buffers(client)[document].text)[entry.id] == "open"
    assert "typed, not saved" in texts(buffers(client)[document].text)
    assert broken.read_text() == "not a skill\n"


async def test_accepting_review_lines_into_a_buffer_that_refuses_writes_nothing(
    client: LanguageClient, root: Path
) -> None:
    sheet = StyleSheet(resolve_target(root))
    first = sheet.add("Check the cache headers before the release.", kind="note")
    second = sheet.add("Tried a global retry decorator: it retried writes.", kind="ruled-out")
    document = open_file(client, sheet.path, "markdown")
    type_text(client, document, buffers(client)[document].text + "- typed, not saved\n")
    reviewed = await execute(client, "stet.graduation.review", uri=uri(root))
    review = open_file(client, Path(reviewed["uri"].removeprefix("file://")), "markdown")
    await asyncio.sleep(0.3)

    refusing_edits(client, True)
    with pytest.raises(JsonRpcException, match="nothing was written"):
        await execute(client, "stet.graduation.apply", uri=review, all=True)
    assert graduation_events(root) == []
    shown = statuses(buffers(client)[document].text)
    assert (shown[first.id], shown[second.id]) == ("open", "open")

    refusing_edits(client, False)
    applied = await execute(client, "stet.graduation.apply", uri=review, all=True)
    assert sorted(r["entry"]["id"] for r in applied["results"]) == sorted([first.id, second.id])
    graduated = [e["entry_id"] for e in graduation_events(root) if e["kind"] == "graduation"]
    assert sorted(graduated) == sorted([first.id, second.id])
    shown = statuses(buffers(client)[document].text)
    assert "open" not in (shown[first.id], shown[second.id])
