"""The Stet language server: shared state, and the features that register on it."""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from lsprotocol import types
from lsprotocol.types import ResponseError
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method
from pygls.uris import to_fs_path

from stet_lsp import __version__
from stet_lsp.core.comments import SYNTAXES, CommentIndex, language_of
from stet_lsp.core.errors import StetError
from stet_lsp.core.margin import MarginNote, find_notes
from stet_lsp.core.session import RepositorySession
from stet_lsp.core.sheet import StyleSheet
from stet_lsp.core.targets import SHEETS_DIR
from stet_lsp.server.protocol import client_position
from stet_lsp.server.settings import Settings

log = logging.getLogger("stet_lsp")
T = TypeVar("T")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def split_lines(text: str) -> list[str]:
    """Lines as LSP counts them: only \\n, \\r\\n and \\r break a line."""
    return _LINE_BREAK.split(text) if "\r" in text else text.split("\n")


@dataclass
class DocumentState:
    """What Stet keeps about one open document."""

    uri: str
    path: Path | None
    session: RepositorySession | None
    relative: str | None
    lines: list[str]
    comments: CommentIndex | None = None
    notes: list[MarginNote] = field(default_factory=list)
    is_sheet: bool = False
    version: int | None = None
    """The client's version of the text, for versioned workspace edits."""

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


class DiagnosticsStore:
    """Diagnostics per document and per source (margin notes, entries, the sheet, the gate),
    served alike to clients that pull and pushed to those that cannot."""

    def __init__(self) -> None:
        self._by_uri: dict[str, dict[str, list[types.Diagnostic]]] = {}
        self._versions: dict[str, int] = {}

    def set(self, uri: str, source: str, diagnostics: list[types.Diagnostic]) -> None:
        self._by_uri.setdefault(uri, {})[source] = diagnostics
        self._versions[uri] = self._versions.get(uri, 0) + 1

    def get(self, uri: str) -> list[types.Diagnostic]:
        return [item for items in self._by_uri.get(uri, {}).values() for item in items]

    def result_id(self, uri: str) -> str:
        return str(self._versions.get(uri, 0))

    def forget(self, uri: str) -> None:
        self._by_uri.pop(uri, None)


def pulls_diagnostics(capabilities: types.ClientCapabilities | None) -> bool:
    """Pull only with clients that can also be told to pull again: writes from outside the
    editor must show without waiting for the next keystroke."""
    document = capabilities.text_document if capabilities else None
    workspace = capabilities.workspace if capabilities else None
    return bool(
        document
        and document.diagnostic
        and workspace
        and workspace.diagnostics
        and workspace.diagnostics.refresh_support
    )


@dataclass(frozen=True)
class UnreadableRequest:
    """A request whose params do not fit the method's type: it still gets an answer."""

    id: Any
    method: str
    jsonrpc: str = "2.0"


class StetProtocol(LanguageServerProtocol):
    @lsp_method(types.INITIALIZE)
    def lsp_initialize(
        self, params: types.InitializeParams
    ) -> Generator[Any, Any, types.InitializeResult]:
        result = yield from super().lsp_initialize(params)
        if not pulls_diagnostics(params.capabilities):
            # Such a client gets pushed diagnostics; offering pull too would show them twice.
            result.capabilities.diagnostic_provider = None
        return result

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(
        self, params: types.DidChangeTextDocumentParams
    ) -> Generator[Any, Any, None]:
        # Stet keeps the lines of each document itself and applies a change in proportion to
        # its size; pygls's copy would rebuild the whole text on every keystroke.
        handler = self.fm.features.get(types.TEXT_DOCUMENT_DID_CHANGE)
        if handler is not None:
            yield handler, (params,), None

    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcException:
            if isinstance(data, dict) and "id" in data and isinstance(data.get("method"), str):
                return UnreadableRequest(data["id"], data["method"])
            raise

    def handle_message(self, message: Any) -> None:
        if isinstance(message, UnreadableRequest):
            self._send_response(
                message.id,
                error=ResponseError(
                    code=JsonRpcInvalidParams.CODE,
                    message=f"invalid params for {message.method}",
                ),
            )
            return
        super().handle_message(message)


class StetServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("stet-lsp", __version__, protocol_cls=StetProtocol)
        self.settings = Settings()
        self.sessions: dict[Path, RepositorySession] = {}
        self._folder_sessions: dict[Path, RepositorySession] = {}
        self.documents: dict[str, DocumentState] = {}
        self.diagnostics = DiagnosticsStore()
        self.features: list[Any] = []
        self.startup: list[Callable[[], object]] = []
        """Run once the client is initialized (background tasks)."""
        self.lock = threading.RLock()

    # -- client capabilities -------------------------------------------------------------

    @property
    def pulls_diagnostics(self) -> bool:
        return pulls_diagnostics(self.client_capabilities)

    def supports(self, *path: str) -> bool:
        node: Any = self.client_capabilities
        for part in path:
            node = getattr(node, part, None)
            if node is None:
                return False
        return bool(node)

    # -- documents -------------------------------------------------------------------

    def session_for(self, path: Path) -> RepositorySession | None:
        """The repository holding `path` (the innermost one: a submodule, not its parent),
        one session per repository, remembered per folder."""
        folder = path.parent
        if folder in self._folder_sessions:  # only found ones: a folder may become a repository
            return self._folder_sessions[folder]
        try:
            found: RepositorySession | None = RepositorySession(folder)
        except StetError:
            found = None
        except Exception:  # a broken repository must not stop the server
            log.exception("cannot open the repository of %s", path)
            found = None
        if found is not None:
            found = self.sessions.setdefault(found.root, found)
            self._folder_sessions[folder] = found
        return found

    def open_document(
        self, uri: str, text: str, language_id: str | None, version: int | None = None
    ) -> DocumentState:
        path = local_path(uri)
        session = self.session_for(path) if path else None
        relative = None
        if session is not None and path is not None:
            try:
                relative = path.relative_to(session.root).as_posix()
            except ValueError:
                session = None
        state = DocumentState(uri, path, session, relative, split_lines(text), version=version)
        if session is not None and relative is not None:
            state.is_sheet = relative.startswith(SHEETS_DIR.as_posix() + "/")
            language = language_of(relative, language_id)
            if not state.is_sheet:
                state.comments = CommentIndex(state.lines, SYNTAXES[language])
        self.documents[uri] = state
        self.rescan_notes(state)
        return state

    def change_document(
        self,
        uri: str,
        changes: list[types.TextDocumentContentChangeEvent],
        version: int | None = None,
    ) -> DocumentState | None:
        state = self.documents.get(uri)
        if state is None:
            return None
        state.version = version
        for change in changes:
            if isinstance(change, types.TextDocumentContentChangePartial):
                first, removed, added = self._apply(state, change)
                if state.comments is not None:
                    state.comments.update(state.lines, first, removed, added)
            else:
                state.lines = split_lines(change.text)
                if state.comments is not None:
                    state.comments = CommentIndex(state.lines, state.comments.syntax)
        self.rescan_notes(state)
        return state

    def _apply(
        self, state: DocumentState, change: types.TextDocumentContentChangePartial
    ) -> tuple[int, int, int]:
        """Apply an incremental change to the lines: (first line, lines removed, lines added)."""
        lines = state.lines
        start_line, start = self._server_position(lines, change.range.start)
        end_line, end = self._server_position(lines, change.range.end)
        if (end_line, end) < (start_line, start):
            start_line, start, end_line, end = end_line, end, start_line, start
        replacement = split_lines(lines[start_line][:start] + change.text + lines[end_line][end:])
        lines[start_line : end_line + 1] = replacement
        return start_line, end_line - start_line + 1, len(replacement)

    def _server_position(self, lines: list[str], position: types.Position) -> tuple[int, int]:
        """A client position as (line, str index), clamped to the document."""
        if position.line >= len(lines):
            return len(lines) - 1, len(lines[-1])
        line = lines[max(position.line, 0)]
        if line.isascii():
            return position.line, min(max(position.character, 0), len(line))
        codec = self.workspace.position_codec
        units = 0
        for index, char in enumerate(line):
            if units >= position.character:
                return position.line, index
            units += codec.client_num_units(char)
        return position.line, len(line)

    def rescan_notes(self, state: DocumentState) -> None:
        if state.comments is not None:
            state.notes = find_notes(state.lines, state.comments, self.settings.marker)

    def close_document(self, uri: str) -> None:
        """Drop everything kept about a closed document, the features' state included."""
        self.documents.pop(uri, None)
        self.diagnostics.forget(uri)
        for feature in self.features:
            if hasattr(feature, "forget"):
                feature.forget(uri)

    def document(self, uri: str) -> DocumentState:
        state = self.documents.get(uri)
        if state is None:
            raise StetError(f"{uri} is not open in the editor")
        return state

    def session_of_uri(self, uri: str) -> RepositorySession:
        """The repository of a document (open or not) or of a folder."""
        state = self.documents.get(uri)
        if state is not None and state.session is not None:
            return state.session
        path = local_path(uri)
        session = self.session_for(path / "_") if path and path.is_dir() else None
        session = session or (self.session_for(path) if path else None)
        if session is None:
            raise StetError(f"{uri} is not inside a git repository")
        return session

    # -- writing the sheet -----------------------------------------------------------

    async def write_sheet(
        self, session: RepositorySession, operation: Callable[[StyleSheet], T]
    ) -> T:
        """Run a style-sheet operation. When the sheet is open in the editor with unsaved
        changes, the operation works on that text and the result reaches the editor as a
        workspace edit, so the server never writes under the user."""
        target = session.target()
        state = next(
            (s for s in self.documents.values() if s.path == target.sheet_path.resolve()), None
        )
        buffer = state.text if state is not None else None
        if state is not None:
            try:
                on_disk = target.sheet_path.read_bytes().decode("utf-8")
            except (OSError, UnicodeDecodeError):
                on_disk = None
            if on_disk is not None and split_lines(on_disk) == state.lines:
                buffer = None
        sheet = StyleSheet(target, buffer=buffer)
        result = operation(sheet)
        if state is not None and buffer is not None and sheet.buffer != buffer:
            last = len(state.lines) - 1
            end = client_position(
                self.workspace.position_codec, state.lines, last, len(state.lines[last])
            )
            await self.workspace_apply_edit_async(
                types.ApplyWorkspaceEditParams(
                    label="Update the style sheet",
                    edit=types.WorkspaceEdit(
                        changes={
                            state.uri: [
                                types.TextEdit(
                                    range=types.Range(
                                        start=types.Position(line=0, character=0), end=end
                                    ),
                                    new_text=sheet.buffer or "",
                                )
                            ]
                        }
                    ),
                )
            )
        self.refresh()
        return result

    # -- publishing ------------------------------------------------------------------

    def refresh(self, states: list[DocumentState] | None = None) -> None:
        """Recompute every feature's view of these documents (all open ones by default) and
        tell the client."""
        with self.lock:
            targets = list(self.documents.values()) if states is None else states
            for state in targets:
                for feature in self.features:
                    feature.analyse(state)
        if self.pulls_diagnostics:
            if self.supports("workspace", "diagnostics", "refresh_support"):
                self.workspace_diagnostic_refresh(None)
        else:
            for state in targets:
                self.text_document_publish_diagnostics(
                    types.PublishDiagnosticsParams(
                        uri=state.uri, diagnostics=self.diagnostics.get(state.uri)
                    )
                )
        if self.supports("workspace", "code_lens", "refresh_support"):
            self.workspace_code_lens_refresh(None)

    def message(self, text: str, kind: types.MessageType = types.MessageType.Warning) -> None:
        log.warning(text)
        self.window_show_message(types.ShowMessageParams(type=kind, message=text))


def local_path(uri: str) -> Path | None:
    if not uri.startswith("file:"):
        return None
    path = to_fs_path(uri)
    return Path(path).resolve() if path else None


class ClientLog(logging.Handler):
    """Stet's log records also go to the client's log (window/logMessage)."""

    LEVELS: ClassVar[dict[int, types.MessageType]] = {
        logging.ERROR: types.MessageType.Error,
        logging.WARNING: types.MessageType.Warning,
        logging.INFO: types.MessageType.Info,
    }

    def __init__(self, server: StetServer) -> None:
        super().__init__(logging.INFO)
        self.server = server

    def emit(self, record: logging.LogRecord) -> None:
        try:
            kind = self.LEVELS.get(record.levelno, types.MessageType.Log)
            self.server.window_log_message(
                types.LogMessageParams(type=kind, message=self.format(record))
            )
        except Exception:  # logging must never break the server
            pass


def create_server() -> StetServer:
    from stet_lsp.server.features import register_all

    server = StetServer()
    register_all(server)
    log.addHandler(ClientLog(server))
    return server
