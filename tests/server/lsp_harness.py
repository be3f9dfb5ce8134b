"""Driving the real server over stdio with pytest-lsp, as VS Code or Neovim 0.11 would."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable
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


async def start(lsp_client: LanguageClient, spec: str, options: Any = None) -> None:
    converter = lsp_client.protocol._converter
    _command_or_code_action.converter = converter  # type: ignore[attr-defined]
    converter.register_structure_hook(
        Union[types.Command, types.CodeAction],  # noqa: UP007  # a runtime type object
        _command_or_code_action,
    )
    lsp_client.applied_edits = []  # type: ignore[attr-defined]

    @lsp_client.feature(types.WORKSPACE_APPLY_EDIT)
    def apply_edit(
        client: LanguageClient, params: types.ApplyWorkspaceEditParams
    ) -> types.ApplyWorkspaceEditResult:
        client.applied_edits.append(params.edit)  # type: ignore[attr-defined]
        return types.ApplyWorkspaceEditResult(applied=True)

    @lsp_client.feature(types.WORKSPACE_CODE_LENS_REFRESH)
    def refresh_lenses(client: LanguageClient, params: None) -> None:
        client.lens_refreshes = getattr(client, "lens_refreshes", 0) + 1  # type: ignore[attr-defined]

    result = await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities(spec), initialization_options=options
        )
    )
    lsp_client.position_encoding = result.capabilities.position_encoding  # type: ignore[attr-defined]


def units(client: LanguageClient, text: str) -> int:
    """The length of `text` in the position units negotiated with the server."""
    if client.position_encoding == "utf-8":  # type: ignore[attr-defined]
        return len(text.encode())
    if client.position_encoding == "utf-32":  # type: ignore[attr-defined]
        return len(text)
    return len(text.encode("utf-16-le")) // 2


def open_file(client: LanguageClient, path: Path, language: str = "python") -> str:
    document = uri(path)
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=document, language_id=language, version=1, text=path.read_text("utf-8")
            )
        )
    )
    return document


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


async def execute(client: LanguageClient, command: str, **arguments: Any) -> Any:
    return await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=command, arguments=[arguments])
    )
