"""workspace/executeCommand: the style sheet's operations, run in the server for every editor.

Each command takes one object argument (or none, in a workspace with one repository) and
returns what `stet … --json` prints for the same operation: both call `core/operations.py`.
docs/commands.md documents them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pygls.exceptions import JsonRpcInvalidParams
from pygls.uris import from_fs_path

from stet_lsp.core import operations
from stet_lsp.core.lines import lines_of
from stet_lsp.core.session import RepositorySession
from stet_lsp.core.sheet import StyleSheet
from stet_lsp.server.documents import local_path
from stet_lsp.server.requests import answering, argument, field
from stet_lsp.server.server import StetServer

Result = dict[str, Any]


def register(server: StetServer) -> None:
    def command(name: str, writes: bool = False) -> Callable[[Callable[..., Any]], Any]:
        def register_command(handler: Callable[..., Any]) -> Any:
            register = server.write_command if writes else server.command
            return register(name)(answering(handler))

        return register_command

    async def session_of(args: Mapping[str, Any]) -> RepositorySession:
        return await server.session_of(field(args, "uri", str, None))

    async def read(
        args: Mapping[str, Any], operation: Callable[[StyleSheet, dict[str, str]], Result]
    ) -> Result:
        """`operation` on the sheet, with the repository's unsaved buffers (anchors are placed
        where the editor shows their lines)."""
        session = await session_of(args)
        texts = await server.unsaved_texts(session)
        return await server.off_loop(lambda: operation(session.sheet(), texts))

    @command("stet.note.add", writes=True)
    async def add(*arguments: Any) -> Result:
        args = argument(arguments)
        session = await session_of(args)
        text = field(args, "text", str)
        kind = field(args, "kind", str, "note")
        author = field(args, "author", str, "human")
        line = field(args, "line", int, None, minimum=0)
        file, file_text = None, None
        if line is not None:
            uri = field(args, "uri", str)
            state = server.documents.get(uri)
            file = state.path if state is not None else local_path(uri)
            file_text = state.text if state is not None else None
            if file_text is not None:
                count = len(lines_of(file_text))
                if file_text.endswith(("\n", "\r")) and line == count:
                    # An editor shows a line after a text's last line break, where the cursor
                    # may be: a note there is about the last line.
                    line -= 1
                elif line >= count:
                    held = f"lines 0 to {count - 1}" if count else "no line"
                    raise JsonRpcInvalidParams(
                        f"argument 'line' is 0-based, and the document holds {held}, not {line}"
                    )
        return await server.write_sheet(
            session,
            lambda sheet: operations.add_entry(
                sheet,
                text,
                kind=kind,
                author=author,
                file=file,
                line=None if line is None else line + 1,
                file_text=file_text,
            ),
        )

    @command("stet.note.list")
    async def list_(*arguments: Any) -> Result:
        args = argument(arguments)
        kind = field(args, "kind", str, None)
        author = field(args, "author", str, None)
        status = field(args, "status", str, None)
        return await read(
            args,
            lambda sheet, texts: operations.list_entries(
                sheet, kind=kind, author=author, status=status, texts=texts
            ),
        )

    @command("stet.note.show")
    async def show(*arguments: Any) -> Result:
        args = argument(arguments)
        entry_id = field(args, "id", str)
        return await read(
            args, lambda sheet, texts: operations.show_entry(sheet, entry_id, texts=texts)
        )

    @command("stet.note.edit", writes=True)
    async def edit(*arguments: Any) -> Result:
        args = argument(arguments)
        entry_id, text = field(args, "id", str), field(args, "text", str)
        return await server.write_sheet(
            await session_of(args), lambda sheet: operations.edit_entry(sheet, entry_id, text)
        )

    @command("stet.note.discard", writes=True)
    async def discard(*arguments: Any) -> Result:
        args = argument(arguments)
        entry_id = field(args, "id", str)
        return await server.write_sheet(
            await session_of(args), lambda sheet: operations.discard_entry(sheet, entry_id)
        )

    @command("stet.brief")
    async def brief(*arguments: Any) -> Result:
        args = argument(arguments)
        budget = field(args, "budget", int, server.settings.brief_budget)
        return await read(args, lambda sheet, texts: operations.brief(sheet, budget, texts))

    @command("stet.pause", writes=True)
    async def pause(*arguments: Any) -> Result:
        args = argument(arguments)
        until = field(args, "until", str, None)
        return await server.write_sheet(
            await session_of(args), lambda sheet: operations.pause(sheet, until)
        )

    @command("stet.resume", writes=True)
    async def resume(*arguments: Any) -> Result:
        args = argument(arguments)
        return await server.write_sheet(await session_of(args), operations.resume)

    @command("stet.sheet.open")
    async def open_sheet(*arguments: Any) -> Result:
        args = argument(arguments)
        session = await session_of(args)
        sheet = await server.off_loop(session.sheet)
        if not await server.off_loop(sheet.path.exists):
            await server.write_sheet(session, _create)
        uri = from_fs_path(str(sheet.path))
        shown = await server.show_document(uri)
        return {"uri": uri, "shown": shown}


def _create(sheet: StyleSheet) -> None:
    """Write the empty sheet, so there is a file to show."""
    with sheet.edit():
        pass
