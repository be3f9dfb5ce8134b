"""The Stet language server: shared state, and the features that register on it.

Threading rule: all state here (documents, sessions, snapshots, diagnostics, the features'
own state) lives on the event loop's thread and is changed only there. Work that can block
(waiting for the sheet's lock, fsync, git, reading files, big scans) runs in worker threads
on immutable inputs (`off_loop`), and its result is applied back on the loop. Background
tasks are started with `spawn`, which keeps them and logs their failures.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import logging
import sys
import threading
from collections.abc import Awaitable, Callable, Coroutine, Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.io_ import StdinAsyncReader, StdoutWriter
from pygls.lsp.server import LanguageServer

from stet_lsp import __version__
from stet_lsp.core.comments import CommentIndex
from stet_lsp.core.errors import StetError
from stet_lsp.core.session import RepositorySession, Snapshot
from stet_lsp.core.sheet import StyleSheet
from stet_lsp.core.targets import Target
from stet_lsp.server.diagnostics import DiagnosticsStore
from stet_lsp.server.documents import LEX_STEP, DocumentState, local_path, new_document
from stet_lsp.server.feature import Feature
from stet_lsp.server.protocol import StetProtocol, pulls_diagnostics, serve, strict_converter
from stet_lsp.server.settings import Settings
from stet_lsp.server.sheet_sync import (
    Staged,
    closed_sheet,
    merge_from_disk,
    normalized,
    shows_the_disk,
    write_into_buffer,
)

log = logging.getLogger("stet_lsp")
T = TypeVar("T")
SETTLE_SECONDS = 30.0
"""How long a request that cannot be repeated (the outline) waits for background indexing."""
CLIENT_ANSWER_SECONDS = 10.0
"""How long the server waits for the client's answer to a request it sent the client."""


class StetServer(LanguageServer):
    protocol: StetProtocol

    def __init__(self) -> None:
        super().__init__(
            "stet-lsp", __version__, protocol_cls=StetProtocol, converter_factory=strict_converter
        )
        self.settings = Settings()
        self.sessions: dict[Path, RepositorySession] = {}
        """By repository root."""
        self._folder_sessions: dict[Path, RepositorySession] = {}
        self.snapshots: dict[Path, Snapshot] = {}
        """By repository root: the target and its style sheet as last read (off the loop)."""
        self.documents: dict[str, DocumentState] = {}
        self.diagnostics = DiagnosticsStore()
        self.features: list[Feature] = []
        self.startup: list[Callable[[], Coroutine[Any, Any, Any]]] = []
        """Started once the client is initialized, each as its own task."""
        self._published: dict[str, str] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._reloading: dict[Path, asyncio.Lock] = {}
        self.sheet_edits = asyncio.Lock()
        """Held while an edit of an open style sheet is computed and applied."""
        self.loop: asyncio.AbstractEventLoop | None = None
        """The event loop, once the client is initialized (for worker threads' messages)."""
        self.uncancelled_commands: set[str] = set()
        """The commands that write (`write_command`): a cancel does not stop them."""
        self.folders_changed = False
        """Whether the client changed the workspace's folders: its root then no longer
        stands for a folder once they are all taken out."""

    # -- transport -------------------------------------------------------------------------

    def start_io(self, stdin: Any = None, stdout: Any = None) -> None:
        self._stop_event = threading.Event()
        reader = StdinAsyncReader(stdin or sys.stdin.buffer, self.thread_pool)
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
        try:
            asyncio.run(serve(self._stop_event, reader, self.protocol))
        except BrokenPipeError:
            log.error("the connection to the client is lost")
        except (KeyboardInterrupt, SystemExit):
            pass
        finally:
            self.shutdown()

    def shutdown(self) -> None:
        super().shutdown()  # type: ignore[no-untyped-call]

    def start_tcp(self, host: str, port: int) -> None:
        self._stop_event = stop = threading.Event()

        async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            self.protocol.set_writer(writer)
            await serve(stop, reader, self.protocol)
            self.shutdown()

        async def listen() -> None:
            self._server = await asyncio.start_server(connection, host, port)
            async with self._server:
                await self._server.serve_forever()

        with contextlib.suppress(asyncio.CancelledError, KeyboardInterrupt, SystemExit):
            asyncio.run(listen())

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

    async def from_client(
        self, request: Awaitable[T], what: str, seconds: float = CLIENT_ANSWER_SECONDS
    ) -> T | None:
        """The client's answer to a request the server sent it; None when the client
        answered with an error, or did not answer within `seconds` (logged), so that the
        request of the client's that is waiting on it still gets its own answer. The request
        itself is not cancelled: an answer that comes later is taken and dropped."""
        asked = asyncio.ensure_future(request)
        asked.add_done_callback(_retrieved)
        try:
            return await asyncio.wait_for(asyncio.shield(asked), seconds)
        except TimeoutError:
            log.warning("the client did not answer %s within %g s", what, seconds)
        except JsonRpcException as error:
            log.info("the client answered %s with an error: %s", what, error.message)
        except Exception as error:  # an answer that cannot be read
            log.warning("the client's answer to %s cannot be read: %s", what, error)
        return None

    async def register_with_client(self, registration: types.Registration) -> bool:
        """Register a capability dynamically; whether the client took it in time."""

        async def registered() -> bool:
            await self.client_register_capability_async(
                types.RegistrationParams(registrations=[registration])
            )
            return True

        what = f"client/registerCapability for {registration.method}"
        return bool(await self.from_client(registered(), what))

    async def show_document(self, uri: str, selection: types.Range | None = None) -> bool:
        """Ask the client to show a document; whether it did. A client that cannot (an error,
        an answer that is no result, or none in time) has not shown it, and the command
        still answers."""
        if not self.supports("window", "show_document", "support"):
            return False
        answer = await self.from_client(
            self.window_show_document_async(
                types.ShowDocumentParams(uri=uri, take_focus=True, selection=selection)
            ),
            f"window/showDocument for {uri}",
        )
        return bool(answer and answer.success)

    # -- features and tasks ----------------------------------------------------------------

    def ask(self, method: str, *args: Any) -> Iterator[tuple[Feature, Any]]:
        """Each feature's answer to `method`; a feature that fails is logged and skipped."""
        for feature in self.features:
            try:
                yield feature, getattr(feature, method)(*args)
            except Exception:
                log.exception("the %s feature failed in %s", feature.name, method)

    async def settled(self, state: DocumentState, timeout: float = SETTLE_SECONDS) -> None:
        """Wait, at most `timeout` seconds, for the features' background work on a document."""
        waits = [asyncio.ensure_future(feature.settled(state)) for feature in self.features]
        done, late = await asyncio.wait(waits, timeout=timeout)
        for wait in late:
            wait.cancel()
        for wait in done:
            if not wait.cancelled() and wait.exception() is not None:
                log.error(
                    "waiting for a feature on %s failed", state.uri, exc_info=wait.exception()
                )

    async def ask_awaiting(self, method: str, *args: Any) -> list[tuple[Feature, Any]]:
        """As `ask`, with the answers a feature gives as awaitables (work it runs in a worker
        thread) awaited; one that fails is logged and skipped."""
        answers = []
        for feature, answer in self.ask(method, *args):
            if inspect.isawaitable(answer):
                try:
                    answer = await answer
                except Exception:
                    log.exception("the %s feature failed in %s", feature.name, method)
                    continue
            answers.append((feature, answer))
        return answers

    def gather(self, method: str, *args: Any) -> list[Any]:
        return [item for _, answer in self.ask(method, *args) for item in answer or ()]

    def spawn(self, work: Coroutine[Any, Any, Any], what: str) -> asyncio.Task[Any]:
        """Run `work` in the background; its failure is logged, never lost."""
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)

        def done(finished: asyncio.Task[Any]) -> None:
            self._tasks.discard(finished)
            if not finished.cancelled() and finished.exception() is not None:
                log.error("%s failed", what, exc_info=finished.exception())

        task.add_done_callback(done)
        return task

    def write_command(self, name: str) -> Callable[[Callable[..., Any]], Any]:
        """Register a command that writes: neither a client's cancel nor `shutdown` stops it
        once it is read, and its answer is its result (LSP allows that), where 'cancelled'
        while the write went on made a client that took it for 'not done' do it twice."""
        self.uncancelled_commands.add(name)

        def register(handler: Callable[..., Any]) -> Any:
            @functools.wraps(handler)
            async def uncancelled(*args: Any) -> Any:
                work = asyncio.ensure_future(handler(*args))
                while True:
                    try:
                        return await asyncio.shield(work)
                    except asyncio.CancelledError:
                        if work.cancelled():
                            raise

            return self.command(name)(uncancelled)

        return register

    @staticmethod
    async def off_loop(function: Callable[..., T], *args: Any) -> T:
        """Run blocking work in a worker thread."""
        return await asyncio.to_thread(function, *args)

    # -- repositories ------------------------------------------------------------------------

    def known_session(self, path: Path) -> RepositorySession | None:
        """The repository of `path` when its folder is already known to be in one."""
        return self._folder_sessions.get(path.parent)

    async def session_for(self, path: Path) -> RepositorySession | None:
        """The repository holding `path` (the innermost one: a submodule, not its parent),
        one session per repository, its snapshot loaded. Only folders inside a repository
        are remembered: a folder may become one later."""
        known = self.known_session(path)
        if known is not None:
            return known
        found = await self.off_loop(_open_session, path.parent)
        if found is None:
            return None
        session = self.sessions.get(found.root)
        if session is None:
            snapshot = await self.off_loop(found.load)
            # Registered at once with its snapshot, after the last wait: a repository is
            # either known whole or not at all (`forget_repositories`).
            session = self.sessions.setdefault(found.root, found)
            if session is found:
                self.snapshots[session.root] = snapshot
                self._warn_tracked(session, None, snapshot)
        self._folder_sessions[path.parent] = session
        return session

    def forget_repositories(self) -> None:
        """Forget the repositories that no workspace folder and no open document is in (a
        folder taken out of the workspace, its files closed): they are polled no more, and
        what was read of them is dropped. One asked about again is found again."""
        places = self._folder_paths()
        places += [state.path for state in self.documents.values() if state.path is not None]
        for root, session in list(self.sessions.items()):
            if any(place == root or root in place.parents for place in places):
                continue
            del self.sessions[root]
            self.snapshots.pop(root, None)
            lock = self._reloading.get(root)
            if lock is not None and not lock.locked():
                del self._reloading[root]
            self._folder_sessions = {
                folder: known
                for folder, known in self._folder_sessions.items()
                if known is not session
            }
            log.info("the repository %s is out of the workspace: no longer watched", root)
            for _ in self.ask("forgotten", root):
                pass

    def snapshot(self, session: RepositorySession) -> Snapshot | None:
        return self.snapshots.get(session.root)

    async def reload(self, session: RepositorySession, *, force: bool = False) -> None:
        """Read the target and its sheet again (after a write, a branch switch, an outside
        write), bring an open sheet along, and show what changed (`force`: show it anyway).
        One reload of a repository runs at a time, so the disk is applied in the order it
        was read."""
        async with self._reloading.setdefault(session.root, asyncio.Lock()):
            previous = self.snapshots.get(session.root)
            snapshot = await self.off_loop(session.load)
            if self.sessions.get(session.root) is not session:  # forgotten meanwhile
                if force:
                    self.refresh(outside=True)
                return
            self.snapshots[session.root] = snapshot
            if snapshot.error and (previous is None or previous.error != snapshot.error):
                self.message(f"style sheet of {snapshot.target.label}: {snapshot.error}")
            self._warn_tracked(session, previous, snapshot)
            state = self.open_sheet(snapshot.target)
            if state is not None and snapshot.text is not None:
                async with self.sheet_edits:
                    await merge_from_disk(self, state, snapshot.text)
        if force or snapshot is not previous:
            self.refresh(outside=True)

    def _warn_tracked(
        self, session: RepositorySession, previous: Snapshot | None, snapshot: Snapshot
    ) -> None:
        """Once a sheet is found in git's index: Stet neither briefs nor writes it."""
        if not snapshot.tracked or (
            previous is not None and previous.tracked and previous.target == snapshot.target
        ):
            return
        relative = snapshot.target.sheet_path.relative_to(session.root).as_posix()
        self.message(
            f"style sheet of {snapshot.target.label}: git's index holds {relative}, so it came "
            "with the repository (or was staged) and Stet neither briefs it nor writes to it; "
            "take .stet/cache/ out of the index (git rm --cached -r .stet/cache) and commit that"
        )

    async def session_of(self, uri: str | None) -> RepositorySession:
        """The repository a command works on: of a document or folder URI; without one, of
        the workspace's only repository."""
        if uri is None:
            return await self._only_session()
        if not uri:
            raise JsonRpcInvalidParams(
                "argument 'uri' is empty: give a file or folder of the repository"
            )
        state = await self.ready(uri)
        if state is not None and state.session is not None:
            return state.session
        path = local_path(uri)
        session = None
        if path is not None:
            try:
                is_folder = await self.off_loop(path.is_dir)
                session = await self.session_for(path / "_" if is_folder else path)
            except OSError as error:  # a name too long, say
                raise StetError(f"{uri}: {error.strerror or error}") from None
        if session is None:
            raise StetError(f"{uri} is not inside a git repository")
        return session

    async def workspace_sessions(self) -> dict[Path, RepositorySession]:
        """The repositories of the workspace's folders (of its root without folders)."""
        return {
            session.root: session
            for folder in self._folder_paths()
            if (session := await self.session_for(folder / "_"))
        }

    def _folder_paths(self) -> list[Path]:
        """The workspace's folders; its root for a client that has none."""
        folders = [local_path(folder.uri) for folder in self.workspace.folders.values()]
        if not folders and not self.folders_changed and self.workspace.root_uri:
            folders = [local_path(self.workspace.root_uri)]
        return [folder for folder in folders if folder is not None]

    async def shown_roots(self) -> list[Path]:
        """The roots of the repositories the workspace shows: its folders' and those of the
        open documents (not every repository the server looked at since it started: a folder
        taken out of the workspace leaves with its repository)."""
        roots = set(await self.workspace_sessions())
        for state in await self.placed_documents():
            if state.session is not None:
                roots.add(state.session.root)
        return sorted(roots)

    async def _only_session(self) -> RepositorySession:
        sessions = await self.workspace_sessions()
        if len(sessions) == 1:
            return next(iter(sessions.values()))
        if not sessions:
            raise StetError("missing argument 'uri': no workspace folder is in a git repository")
        raise StetError(
            f"missing argument 'uri': the workspace holds {len(sessions)} repositories; "
            "name a file or folder in one of them"
        )

    # -- documents -------------------------------------------------------------------------

    def open_document(
        self, uri: str, text: str, language_id: str | None, version: int | None
    ) -> DocumentState:
        state = new_document(uri, text, language_id, version)
        self.documents[uri] = state
        state.rescan_notes(self.settings.marker)
        find = False
        if state.path is not None:
            known = self.known_session(state.path)
            if known is not None:
                state.attach(known)
            find = known is None
        if find or state.pending is not None or not self._in_step_with_disk(state):
            state.ready = asyncio.get_running_loop().create_future()
            self.spawn(self._place(state, find=find), f"opening {uri}")
        return state

    async def _place(self, state: DocumentState, *, find: bool) -> None:
        """Find the document's repository (`find`), lex a long text's comments and compare
        an opened sheet with the disk; requests about the document wait for this
        (`state.ready`)."""
        assert state.ready is not None
        try:
            if find and state.path is not None:
                session = None
                try:
                    session = await self.session_for(state.path)
                finally:
                    if self.documents.get(state.uri) is state:
                        state.attach(session)
                        state.rescan_notes(self.settings.marker)
            await self._lexed(state)
            if self.documents.get(state.uri) is state and not self._in_step_with_disk(state):
                await self._compare_with_disk(state)
        finally:
            self._prepared(state)

    def _prepared(self, state: DocumentState) -> None:
        """What requests about the document waited for is done: they go on, and its answers
        are refreshed (as requests waited, no refresh is asked of the client)."""
        assert state.ready is not None
        try:
            if self.documents.get(state.uri) is state:
                self.refresh([state], outside=False)
        finally:  # a refresh that fails must not leave the requests waiting for ever
            if not state.ready.done():
                state.ready.set_result(None)

    def _lexing(self, state: DocumentState) -> asyncio.Task[None]:
        """The task lexing a long text's comments (started unless one runs)."""
        if state.lexing is None or state.lexing.done():
            state.lexing = self.spawn(self._lex_comments(state), f"lexing {state.uri}")
        return state.lexing

    async def _lex_comments(self, state: DocumentState) -> None:
        """Lexes a long text's comments from a copy of its list of lines, `LEX_STEP` lines
        at a time with the loop's other work in between (lexing is Python: a worker thread
        would hold the interpreter's lock from the loop all the same, and edits of another
        file then waited for it); the edits made meanwhile are applied to the result. A text
        replaced whole meanwhile is lexed again; a closed one no further."""
        while self.documents.get(state.uri) is state and state.pending is not None:
            pending, lines, syntax = state.pending, list(state.lines), state.comments.syntax
            pending.edits.clear()  # the copy holds them
            index = CommentIndex([], syntax)
            for _ in index.lex_steps(lines, LEX_STEP):
                await asyncio.sleep(0)
                if self.documents.get(state.uri) is not state or state.pending is not pending:
                    break
            else:
                if state.lexed(pending, index):
                    state.rescan_notes(self.settings.marker)

    async def _lexed(self, state: DocumentState) -> None:
        """Waits until the open document's comments are lexed, a lex started meanwhile (its
        text replaced whole again) included."""
        while self.documents.get(state.uri) is state and state.pending is not None:
            await asyncio.shield(self._lexing(state))  # a cancelled wait must not cancel it

    async def _ready_after_lexing(self, state: DocumentState) -> None:
        """Requests about the document wait for its comments; its answers are refreshed
        after."""
        try:
            await self._lexed(state)
        finally:
            self._prepared(state)

    def _in_step_with_disk(self, state: DocumentState) -> bool:
        """Whether an opened document needs no comparison with the disk: it is no sheet, or
        its text is the one last read from disk (it is then known to be in step with it)."""
        if not state.is_sheet or state.session is None:
            return True
        snapshot = self.snapshot(state.session)
        if snapshot is not None and normalized(snapshot.text or "") == state.disk_text:
            state.base_known = True
            return True
        return False

    async def _compare_with_disk(self, state: DocumentState) -> None:
        """Read the disk under an opened sheet whose text is not the one last read. The same
        text: the buffer is in step with it. Another: the disk changed since the editor read
        it, or the editor restored unsaved edits (it reports no change for them); either way
        the buffer holds what the disk does not, as unsaved edits, and the reload merges the
        disk's text in from an empty base, so nothing either side holds is dropped."""
        session = state.session
        assert session is not None
        snapshot = await self.off_loop(session.load)
        if self.documents.get(state.uri) is not state:
            return
        if normalized(snapshot.text or "") == state.disk_text:
            state.base_known = True
        elif snapshot.error is None:
            state.modified = True
        self.spawn(self.reload(session), "reading the opened style sheet")

    def change_document(
        self,
        uri: str,
        changes: Sequence[types.TextDocumentContentChangeEvent],
        version: int | None,
    ) -> DocumentState | None:
        state = self.documents.get(uri)
        if state is None:
            return None
        state.version = version
        codec = self.workspace.position_codec
        for change in changes:
            state.apply(change, codec)
        if state.is_sheet:  # only the sheet needs to know: outside writes are merged into it
            self._track_unsaved(state)
        else:
            state.modified = True
        state.rescan_notes(self.settings.marker)
        if state.pending is not None:  # replaced whole by a long text
            self._lexing(state)
            if state.ready is None or state.ready.done():
                state.ready = asyncio.get_running_loop().create_future()
                self.spawn(self._ready_after_lexing(state), f"lexing {uri}")
        return state

    def _track_unsaved(self, state: DocumentState) -> None:
        text = state.text
        if text == state.expected_reload or (
            state.base_lost and state.expected_reload is None and not text.strip()
        ):
            # The editor reloaded what was written on disk (or found no sheet there).
            state.disk_text, state.base_known, state.expected_reload = text, True, None
            state.base_lost = False
        state.modified = text != state.disk_text
        if state.modified and state.expected_reload is not None:
            # Typed before the editor reloaded what was written on disk: merge that in.
            self.spawn(self._merge_expected(state), "merging the style sheet")

    async def _merge_expected(self, state: DocumentState) -> None:
        async with self.sheet_edits:
            await merge_from_disk(self, state, None)

    def close_document(self, uri: str) -> None:
        """Drop everything kept about a closed document, the features' state included. A
        sheet closed with unsaved edits and a write on disk never merged into them (an editor
        that cannot apply edits) gets that write merged back into the disk when the editor
        wrote the buffer over it without saying so (`sheet_sync.closed_sheet`)."""
        state = self.documents.pop(uri, None)
        unmerged = None if state is None else state.expected_reload
        if (
            state is not None
            and state.is_sheet
            and state.modified
            and unmerged not in (None, state.text)
        ):
            base = state.disk_text if state.base_known else ""
            merge_back = closed_sheet(self, state, base, unmerged, not state.base_lost)
            self.spawn(merge_back, "merging back the closed style sheet's unmerged write")
        self.diagnostics.forget(uri)
        self._published.pop(uri, None)
        for _ in self.ask("forget", uri):
            pass
        self.forget_repositories()

    async def document(self, uri: str) -> DocumentState:
        """The open document, once what requests about it wait for is done (`ready`)."""
        state = await self.ready(uri)
        if state is None:
            raise StetError(f"{uri} is not open in the editor")
        return state

    async def ready(self, uri: str) -> DocumentState | None:
        """The open document once what requests about it wait for is done; a document
        closed and opened again meanwhile is waited for in turn."""
        while True:
            state = self.documents.get(uri)
            if state is None or state.ready is None or state.ready.done():
                return state
            await asyncio.shield(state.ready)  # a cancelled request must not cancel it

    async def placed_documents(self, under: Path | None = None) -> list[DocumentState]:
        """The open documents (those of files under the folder `under`), each once placed in
        its repository (`ready`): a file opened just before a request counts, in the
        repository it is in."""
        placed = []
        for uri, state in list(self.documents.items()):
            if under is not None and (state.path is None or under not in state.path.parents):
                continue
            ready = await self.ready(uri)
            if ready is not None:
                placed.append(ready)
        return placed

    async def unsaved_texts(self, session: RepositorySession) -> dict[str, str]:
        """The texts of the repository's open files (not its sheets) by repository path."""
        return {
            state.relative: state.text
            for state in await self.placed_documents(session.root)
            if state.session is session and state.relative is not None and not state.is_sheet
        }

    def open_sheet(self, target: Target) -> DocumentState | None:
        path = target.sheet_path
        return next((s for s in self.documents.values() if s.path == path), None)

    def trajectories_changed(self, root: Path) -> None:
        """A command wrote the trajectories of the repository at `root`: the features that
        show what they hold read them again and refresh the open documents."""
        for _ in self.ask("trajectories_changed", root):
            pass

    # -- writing the sheet -------------------------------------------------------------------

    async def write_sheet(
        self,
        session: RepositorySession,
        operation: Callable[[StyleSheet], T],
        staged: Staged | None = None,
    ) -> T:
        """Run a style-sheet operation in a worker thread (it may wait for the sheet's lock).
        When the sheet is open with unsaved edits, it works on that text and the result
        reaches the editor as an edit, so the server never writes under the user. An
        operation that also writes elsewhere comes with `staged`: those writes then wait
        until the editor took the sheet's change (`sheet_sync.Staged`)."""
        target = await self.off_loop(session.target)
        async with self.sheet_edits:
            state = self.open_sheet(target)
            done = False
            if state is not None and state.modified:
                await self._caught_up_with_disk(session, state)
            if state is not None and state.modified:
                result = await write_into_buffer(self, state, target, operation, staged)
                done = result is not None
            if not done:
                result = await self.off_loop(operation, StyleSheet(target))
        await self.reload(session, force=True)
        return result  # type: ignore[return-value]

    async def _caught_up_with_disk(self, session: RepositorySession, state: DocumentState) -> None:
        """An open sheet taken for one with unsaved edits whose text is what the disk holds
        now has none: the editor reloaded an outside write that the server has not read yet
        (the client's report of it, or the next poll, comes after the command)."""
        snapshot = await self.off_loop(session.load)
        if snapshot.text is not None and shows_the_disk(state, normalized(snapshot.text)):
            state.disk_text, state.base_known, state.expected_reload = state.text, True, None
            state.modified = state.base_lost = False

    # -- publishing ------------------------------------------------------------------------

    def refresh(self, states: list[DocumentState] | None = None, *, outside: bool) -> None:
        """Recompute every feature's view of these documents (all open ones by default) and
        tell the client. `outside`: the change is not the client's own edit of the document,
        so a pulling client must be asked to pull again."""
        targets = list(self.documents.values()) if states is None else states
        for state in targets:
            for _ in self.ask("analyse", state):
                pass
        self.announce(targets, outside=outside)

    def announce(self, states: list[DocumentState], *, outside: bool) -> None:
        """Show these documents' stored diagnostics: pushed, or (for an outside change) by
        asking a pulling client to pull; lenses are asked for again after outside changes."""
        if self.pulls_diagnostics:
            if outside:
                self.workspace_diagnostic_refresh(None)
        else:
            self.publish(states)
        if outside and self.supports("workspace", "code_lens", "refresh_support"):
            self.workspace_code_lens_refresh(None)

    def publish(self, states: list[DocumentState]) -> None:
        with_version = self.supports("text_document", "publish_diagnostics", "version_support")
        for state in states:
            result_id = self.diagnostics.result_id(state.uri)
            if self._published.get(state.uri) == result_id:
                continue
            self._published[state.uri] = result_id
            self.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(
                    uri=state.uri,
                    diagnostics=self.diagnostics.get(state.uri),
                    version=state.version if with_version else None,
                )
            )

    def message(self, text: str, kind: types.MessageType = types.MessageType.Warning) -> None:
        log.log(_LOG_LEVELS.get(kind, logging.INFO), text)
        self.window_show_message(types.ShowMessageParams(type=kind, message=text))


def _retrieved(future: asyncio.Future[Any]) -> None:
    """Reads a finished request's outcome, so that an error no one awaits any longer is not
    reported as never retrieved."""
    if not future.cancelled():
        future.exception()


def _open_session(folder: Path) -> RepositorySession | None:
    try:
        return RepositorySession(folder)
    except StetError:
        return None
    except Exception:  # a broken repository must not stop the server
        log.exception("cannot open the repository of %s", folder)
        return None


class ClientLog(logging.Handler):
    """Stet's log records go to the client's log (window/logMessage), at their level; a
    record sent there is marked `SENT` and left out of standard error (`not_sent`), which
    editors show as errors whatever it says."""

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
            params = types.LogMessageParams(type=kind, message=self.format(record))
            loop = self.server.loop
            if self.server.protocol.writer is None:  # no client yet (or over TCP, none now)
                return
            if threading.current_thread() is threading.main_thread():
                self.server.window_log_message(params)
            elif loop is not None:  # a worker thread: the loop's thread writes the message
                loop.call_soon_threadsafe(self.server.window_log_message, params)
            else:
                return
            setattr(record, SENT, True)
        except Exception:  # logging must never break the server
            pass


_LOG_LEVELS = {kind: level for level, kind in ClientLog.LEVELS.items()}
"""A message's log level, by the message's type."""

SENT = "stet_sent_to_client"


def not_sent(record: logging.LogRecord) -> bool:
    """A filter for standard error's handler: records the client's log has are left out."""
    return not getattr(record, SENT, False)


def create_server() -> StetServer:
    from stet_lsp.server.features import register_all

    server = StetServer()
    register_all(server)
    log.addHandler(ClientLog(server))
    return server
