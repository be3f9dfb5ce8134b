"""workspace/executeCommand: the style sheet's operations, run in the server for every editor.
Each command takes one object argument; docs/commands.md documents them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.uris import from_fs_path

from stet_lsp.core.anchors import make_anchor
from stet_lsp.core.errors import StetError
from stet_lsp.core.model import Entry, format_time, parse_time
from stet_lsp.core.session import RepositorySession
from stet_lsp.core.sheet import EntryFilter, StyleSheet, check_author, check_kind, check_status
from stet_lsp.server.protocol import answering, argument, field
from stet_lsp.server.server import StetServer, local_path


def register(server: StetServer) -> None:
    def command(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        def register_command(handler: Callable[..., Any]) -> Callable[..., Any]:
            return server.command(name)(answering(handler))

        return register_command

    def session_of(args: Mapping[str, Any]) -> RepositorySession:
        return server.session_of_uri(field(args, "uri", str))

    @command("stet.note.add")
    async def add(*arguments: Any) -> dict[str, Any]:
        args = argument(arguments)
        session = session_of(args)
        text = field(args, "text", str)
        kind = check_kind(field(args, "kind", str, "note"))
        author = check_author(field(args, "author", str, "human"))
        anchor = None
        if "line" in args and args["line"] is not None:
            anchor = _anchor(server, session, field(args, "uri", str), field(args, "line", int))
        entry: Entry = await server.write_sheet(
            session, lambda sheet: sheet.add(text, kind=kind, author=author, anchor=anchor)
        )
        return entry.to_dict()

    @command("stet.note.list")
    def list_(*arguments: Any) -> dict[str, Any]:
        args = argument(arguments)
        session = session_of(args)
        where = EntryFilter(
            kind=check_kind(args["kind"]) if args.get("kind") else None,
            author=check_author(args["author"]) if args.get("author") else None,
            status=check_status(args["status"]) if args.get("status") else None,
        )
        sheet = session.sheet()
        entries = sheet.entries(where)
        lines = sheet.current_lines(entries)
        paused, until = sheet.pause_state()
        return {
            "target": {"kind": sheet.target.kind, "name": sheet.target.name},
            "sheet": from_fs_path(str(sheet.path)),
            "paused": paused,
            "paused_until": format_time(until) if until else None,
            "entries": [{**entry.to_dict(), "line": lines.get(entry.id)} for entry in entries],
        }

    @command("stet.note.edit")
    async def edit(*arguments: Any) -> dict[str, Any]:
        args = argument(arguments)
        entry_id, text = field(args, "id", str), field(args, "text", str)
        entry: Entry = await server.write_sheet(
            session_of(args), lambda sheet: sheet.edit_text(entry_id, text)
        )
        return entry.to_dict()

    @command("stet.note.discard")
    async def discard(*arguments: Any) -> dict[str, Any]:
        args = argument(arguments)
        entry_id = field(args, "id", str)
        entry: Entry = await server.write_sheet(
            session_of(args), lambda sheet: sheet.set_status(entry_id, "discarded")
        )
        return entry.to_dict()

    @command("stet.brief")
    def brief(*arguments: Any) -> dict[str, Any]:
        args = argument(arguments)
        budget = field(args, "budget", int, server.settings.brief_budget)
        if budget < 1:
            raise JsonRpcInvalidParams("argument 'budget' must be 1 or more")
        return session_of(args).sheet().brief(budget).to_dict()

    @command("stet.pause")
    async def pause(*arguments: Any) -> dict[str, Any]:
        args = argument(arguments)
        until = None
        if args.get("until") is not None:
            try:
                until = parse_time(field(args, "until", str))
            except ValueError:
                raise JsonRpcInvalidParams("argument 'until' must be an ISO date or time") from None
        await server.write_sheet(session_of(args), lambda sheet: sheet.pause(until))
        return {"paused": True, "until": format_time(until) if until else None}

    @command("stet.resume")
    async def resume(*arguments: Any) -> dict[str, Any]:
        args = argument(arguments)
        await server.write_sheet(session_of(args), StyleSheet.resume)
        return {"paused": False}

    @command("stet.sheet.open")
    async def open_sheet(*arguments: Any) -> dict[str, Any]:
        args = argument(arguments)
        sheet = session_of(args).sheet()
        if not sheet.path.exists():
            with sheet.edit():
                pass  # write the empty sheet, so there is a file to show
        uri = from_fs_path(str(sheet.path))
        shown = False
        if server.supports("window", "show_document", "support"):
            result = await server.window_show_document_async(
                types.ShowDocumentParams(uri=uri, take_focus=True)
            )
            shown = bool(result and result.success)
        return {"uri": uri, "shown": shown}


def _anchor(server: StetServer, session: RepositorySession, uri: str, line: int) -> Any:
    """An anchor at 0-based `line` of the document (its editor text when open)."""
    state = server.documents.get(uri)
    if state is not None and state.path is not None:
        return make_anchor(session.root, state.path, line + 1, state.text)
    path = local_path(uri)
    if path is None:
        raise StetError(f"{uri} is not a file")
    return make_anchor(session.root, path, line + 1)
