"""Driving the real server over stdio with pytest-lsp, as VS Code or Neovim 0.11 would."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Union

from lsprotocol import types
from pygls.uris import from_fs_path
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

CLIENTS = ["visual-studio-code", "neovim@v0.11.0"]
SERVER = ClientServerConfig(server_command=[sys.executable, "-m", "stet_lsp.server"])


def uri(path: Path) -> str:
    return from_fs_path(str(path)) or ""


def _command_or_code_action(value: Any, _: type) -> types.Command | types.CodeAction:
    # lsprotocol's own hook takes any object with a "command" key for a Command, which a
    # CodeAction carrying a command also has; a Command's "command" is a string.
    converter = _command_or_code_action.converter  # type: ignore[attr-defined]
    if isinstance(value.get("command"), str):
        return converter.structure(value, types.Command)  # type: ignore[no-any-return]
    return converter.structure(value, types.CodeAction)  # type: ignore[no-any-return]


async def start(
    lsp_client: LanguageClient, spec: str, options: Any = None, folders: list[Path] | None = None
) -> None:
    """Initialize as the editor `spec` would, with `folders` as the workspace's folders."""
    converter = lsp_client.protocol._converter
    _command_or_code_action.converter = converter  # type: ignore[attr-defined]
    converter.register_structure_hook(
        Union[types.Command, types.CodeAction],  # noqa: UP007  # a runtime type object
        _command_or_code_action,
    )
    lsp_client.applied_edits = []  # type: ignore[attr-defined]
    lsp_client.edit_labels = []  # type: ignore[attr-defined]
    lsp_client.buffers = {}  # type: ignore[attr-defined]

    @lsp_client.feature(types.WORKSPACE_APPLY_EDIT)
    def apply_edit(
        client: LanguageClient, params: types.ApplyWorkspaceEditParams
    ) -> types.ApplyWorkspaceEditResult:
        client.applied_edits.append(params.edit)  # type: ignore[attr-defined]
        client.edit_labels.append(params.label)  # type: ignore[attr-defined]
        return types.ApplyWorkspaceEditResult(applied=apply_to_buffers(client, params.edit))

    lsp_client.registered = []  # type: ignore[attr-defined]

    @lsp_client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(client: LanguageClient, params: types.RegistrationParams) -> None:
        client.registered.extend(params.registrations)  # type: ignore[attr-defined]

    @lsp_client.feature(types.WORKSPACE_CODE_LENS_REFRESH)
    def refresh_lenses(client: LanguageClient, params: None) -> None:
        client.lens_refreshes = getattr(client, "lens_refreshes", 0) + 1  # type: ignore[attr-defined]

    capabilities = client_capabilities(spec)
    result = await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities,
            initialization_options=options,
            workspace_folders=[
                types.WorkspaceFolder(uri=uri(folder), name=folder.name) for folder in folders
            ]
            if folders
            else None,
        )
    )
    lsp_client.position_encoding = result.capabilities.position_encoding  # type: ignore[attr-defined]
    watched = capabilities.workspace and capabilities.workspace.did_change_watched_files
    if watched and watched.dynamic_registration:
        # The server is started once it has asked to be told of changed files.
        await eventually(lambda: watches_files(lsp_client))


def watches_files(client: LanguageClient) -> bool:
    return any(
        registration.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES
        for registration in getattr(client, "registered", [])
    )


def units(client: LanguageClient, text: str) -> int:
    """The length of `text` in the position units negotiated with the server."""
    if client.position_encoding == "utf-8":  # type: ignore[attr-defined]
        return len(text.encode())
    if client.position_encoding == "utf-32":  # type: ignore[attr-defined]
        return len(text)
    return len(text.encode("utf-16-le")) // 2


def open_file(
    client: LanguageClient, path: Path, language: str = "python", text: str | None = None
) -> str:
    """Open `path` in the client, holding what is on disk or `text` (a buffer the editor
    restored with unsaved edits after a restart: it reports no change for them)."""
    document = uri(path)
    text = path.read_text("utf-8") if text is None else text
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=document, language_id=language, version=1, text=text
            )
        )
    )
    buffers(client)[document] = Buffer(1, text)
    return document


@dataclass
class Buffer:
    """What the test client, like an editor, holds of an open document."""

    version: int
    text: str


def buffers(client: LanguageClient) -> dict[str, Buffer]:
    if not hasattr(client, "buffers"):
        client.buffers = {}  # type: ignore[attr-defined]
    return client.buffers  # type: ignore[attr-defined, no-any-return]


def type_text(client: LanguageClient, document: str, text: str) -> None:
    """The user replaces the buffer's text (unsaved)."""
    buffer = buffers(client)[document]
    buffer.version += 1
    buffer.text = text
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(
                uri=document, version=buffer.version
            ),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


def edit_range(client: LanguageClient, document: str, where: types.Range, text: str) -> None:
    """The user types `text` over a range (an incremental change)."""
    buffer = buffers(client)[document]
    start, end = _offset(client, buffer.text, where.start), _offset(client, buffer.text, where.end)
    buffer.text = buffer.text[:start] + text + buffer.text[end:]
    buffer.version += 1
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(
                uri=document, version=buffer.version
            ),
            content_changes=[types.TextDocumentContentChangePartial(range=where, text=text)],
        )
    )


def save(client: LanguageClient, document: str, path: Path) -> None:
    path.write_text(buffers(client)[document].text, encoding="utf-8")
    client.text_document_did_save(
        types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=document))
    )


def text_edits(edit: types.WorkspaceEdit, document: str) -> list[types.TextEdit]:
    if edit.document_changes:
        return [
            item
            for change in edit.document_changes
            if isinstance(change, types.TextDocumentEdit) and change.text_document.uri == document
            for item in change.edits
            if isinstance(item, types.TextEdit)
        ]
    return list((edit.changes or {}).get(document, []))


def apply_to_buffers(client: LanguageClient, edit: types.WorkspaceEdit) -> bool:
    """Apply a workspace edit to the tracked buffers and report each change, as an editor
    does; an edit for a stale version is refused. Documents the test changed on its own
    (untracked versions) only have the edit recorded."""
    versions = {
        change.text_document.uri: change.text_document.version
        for change in edit.document_changes or []
        if isinstance(change, types.TextDocumentEdit)
    }
    for document in set(versions) | set(edit.changes or {}):
        buffer = buffers(client).get(document)
        if buffer is None:
            continue
        if versions.get(document) not in (None, buffer.version):
            return False
        type_text(client, document, edited(client, buffer.text, text_edits(edit, document)))
    return True


def edited(client: LanguageClient, text: str, edits: list[types.TextEdit]) -> str:
    """`text` with the edits (ranges of `text`, in the negotiated units) applied."""
    for item in sorted(
        edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True
    ):
        start = _offset(client, text, item.range.start)
        end = _offset(client, text, item.range.end)
        text = text[:start] + item.new_text + text[end:]
    return text


def _offset(client: LanguageClient, text: str, position: types.Position) -> int:
    lines = text.split("\n")
    offset = sum(len(line) + 1 for line in lines[: position.line])
    line = lines[position.line] if position.line < len(lines) else ""
    column = 0
    while column < len(line) and units(client, line[:column]) < position.character:
        column += 1
    return offset + column


async def diagnostics(client: LanguageClient, document: str) -> list[types.Diagnostic]:
    """The document's diagnostics as this client gets them: pulled, or pushed."""
    if (
        client.capabilities
        and client.capabilities.text_document
        and client.capabilities.text_document.diagnostic
    ):
        report = await client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=document))
        )
        return list(report.items)  # type: ignore[union-attr]
    await asyncio.sleep(0)
    return list(client.diagnostics.get(document, []))


def files_changed(client: LanguageClient, *paths: Path) -> None:
    """What an editor that watches files for the server sends after a write from outside."""
    if watches_files(client):
        client.workspace_did_change_watched_files(
            types.DidChangeWatchedFilesParams(
                changes=[
                    types.FileEvent(uri=uri(path), type=types.FileChangeType.Changed)
                    for path in paths
                ]
            )
        )


async def eventually(check: Callable[[], Any], timeout: float = 5.0, interval: float = 0.05) -> Any:
    """Poll an async or sync check until it returns a truthy value."""
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if asyncio.iscoroutine(result):
            result = await result
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout}s: last result {result!r}")
        await asyncio.sleep(interval)


async def placed(client: LanguageClient, document: str) -> None:
    """Wait until the server has placed the open document in its repository (and compared an
    opened sheet with the disk): a pulling client's `diagnostics` wait for that, a pushing
    client's return at once."""
    await execute(client, "stet.note.list", uri=document)


async def execute(client: LanguageClient, command: str, **arguments: Any) -> Any:
    return await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=command, arguments=[arguments])
    )
