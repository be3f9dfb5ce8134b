"""A trajectory's own files in the editor: in `events.jsonl` and `narration.md`, a code lens
and a hover per step, the outline by session, turn and subagent (events.jsonl), go to
definition from a file-change step to the file at its hunk, schema problems as diagnostics;
and workspace symbols over the steps of every trajectory of the open repositories.

Indexing a large events.jsonl (or the events a narration shows) runs in a worker thread; its
results replace the last ones when ready, and the views refresh."""

from __future__ import annotations

import asyncio
import logging
import os
import re
import stat
import threading
from collections.abc import Awaitable, Coroutine, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.uris import from_fs_path

from stet_lsp.core.collector import collector_paused
from stet_lsp.core.errors import StetError
from stet_lsp.core.safefs import checked_path
from stet_lsp.server.documents import DocumentState
from stet_lsp.server.feature import Feature
from stet_lsp.server.positions import SOURCE, LensesJSON, line_range
from stet_lsp.server.server import StetServer

if TYPE_CHECKING:  # loaded with the first trajectory file: the server starts without pydantic
    from stet_lsp.trajectory.index import LineIssue, OutlineNode, TrajectoryIndex

log = logging.getLogger(__name__)

INLINE_LIMIT = 256 * 1024
"""Texts up to this many characters are indexed on the event loop; longer ones in a thread."""
CHECK_DELAY_SECONDS = 1.0
"""How long after indexing a large file its schema check starts."""
TRAJECTORY_FILE = re.compile(
    r"^\.stet/(?:cache/)?trajectories/[^/]+/(events\.jsonl|narration\.md)$"
)
_SYMBOL_LIMIT = 500
_SYMBOL_KINDS = {
    "session": types.SymbolKind.Namespace,
    "turn": types.SymbolKind.Event,
    "subagent": types.SymbolKind.Class,
}


@dataclass(frozen=True)
class Indexed:
    key: tuple[int, int]
    """The document's revision and line count when it was indexed."""
    index: TrajectoryIndex
    anchors: dict[int, int]
    """For a narration: each step's anchor line; empty for events.jsonl."""
    lenses: LensesJSON
    """A lens per step, made with the index (in the worker for a large file)."""


class TrajectoryFiles(Feature):
    name = "trajectory"

    def __init__(self, server: StetServer) -> None:
        super().__init__(server)
        self.indexed: dict[str, Indexed] = {}
        """By document URI: the index of the text last indexed."""
        self.issues: dict[str, tuple[tuple[int, int], list[LineIssue]]] = {}
        """By document URI: the schema problems of an events.jsonl, checked after indexing
        (it parses every line) so the lenses do not wait for it."""
        self.indexing: dict[str, asyncio.Task[None]] = {}
        """By document URI: the worker's indexing of a large file, while it runs (one at a
        time; the next analyse after it finishes starts the next)."""
        self.checking: set[str] = set()
        """The documents whose schema check runs in a worker (one at a time each)."""
        self._folders: dict[Path, tuple[tuple[int, int], TrajectoryIndex]] = {}
        self._folders_lock = threading.Lock()
        self.open_events: dict[str, tuple[Path, TrajectoryIndex]] = {}
        """By document URI: each open events.jsonl's path and the index of its text as the
        editor holds it, which workspace symbols search instead of the file. A worker reads
        it, so it is replaced whole on the loop, never changed in place."""

    def forget(self, uri: str) -> None:
        self.indexed.pop(uri, None)
        self.issues.pop(uri, None)
        if uri in self.open_events:
            self.open_events = {k: v for k, v in self.open_events.items() if k != uri}

    def _keep(self, state: DocumentState, kind: str, indexed: Indexed) -> Indexed:
        """`indexed` as the document's index (on the loop)."""
        self.indexed[state.uri] = indexed
        if kind == "events.jsonl" and state.path is not None:
            self.open_events = {**self.open_events, state.uri: (state.path, indexed.index)}
        return indexed

    def forgotten(self, root: Path) -> None:
        with self._folders_lock:
            for folder in [folder for folder in self._folders if root in folder.parents]:
                del self._folders[folder]

    # -- indexing ------------------------------------------------------------------------

    def analyse(self, state: DocumentState) -> None:
        kind = _kind(state)
        if kind is None or state.path is None:
            return
        key = (state.revision, len(state.lines))
        known = self.indexed.get(state.uri)
        large = kind == "narration.md" or sum(map(len, state.lines)) > INLINE_LIMIT
        if known is None or known.key != key:
            if large:
                if state.uri not in self.indexing:
                    task = self._spawn(self._index_later(state, kind, key), state)
                    if task is not None:
                        self.indexing[state.uri] = task
            else:
                lines = list(state.lines)
                known = self._keep(state, kind, _index(kind, lines, _where(state), self, key))
        if kind != "events.jsonl" or known is None:
            return
        checked = self.issues.get(state.uri)
        if checked is None or checked[0] != known.key:
            if large:
                if state.uri not in self.checking and self._spawn(
                    self._check_later(state, known), state
                ):
                    self.checking.add(state.uri)
                return
            checked = self.issues[state.uri] = (known.key, known.index.issues())
        self._publish_issues(state, checked[1])

    def _spawn(
        self, work: Coroutine[Any, Any, None], state: DocumentState
    ) -> asyncio.Task[None] | None:
        try:
            return self.server.spawn(work, f"indexing {state.uri}")
        except RuntimeError:  # no loop
            work.close()
            return None

    async def settled(self, state: DocumentState) -> None:
        # A task whose document was opened again meanwhile starts the next before it ends.
        while (task := self.indexing.get(state.uri)) is not None:
            await asyncio.wait({task})

    async def _index_later(self, state: DocumentState, kind: str, key: tuple[int, int]) -> None:
        where = _where(state)
        # A snapshot of the list of lines (the strings are shared, not copied): the worker
        # indexes it while edits change the document's own list.
        lines = list(state.lines)
        try:
            indexed = await self.server.off_loop(_index, kind, lines, where, self, key)
        finally:
            self.indexing.pop(state.uri, None)
        current = self.server.documents.get(state.uri)
        if current is None:
            return
        if current is state:  # else closed and opened again meanwhile: its text may differ
            self._keep(state, kind, indexed)
        self.server.refresh([current], outside=True)

    async def _check_later(self, state: DocumentState, known: Indexed) -> None:
        try:
            # Checking every line against the schema takes seconds on a long run, and its
            # thread would slow the answers an editor asks for as the index comes in.
            await asyncio.sleep(CHECK_DELAY_SECONDS)
            issues = await self.server.off_loop(known.index.issues)
        finally:
            self.checking.discard(state.uri)
        current = self.server.documents.get(state.uri)
        if current is None:
            return
        if current is state:
            self.issues[state.uri] = (known.key, issues)
        self.server.refresh([current], outside=True)

    def folder_index(self, folder: Path, root: Path) -> TrajectoryIndex | None:
        """The index of the events.jsonl in `folder` on disk (a narration's steps), read
        again when the file changed; None when it is missing or not a regular file inside
        `root` (a link or FIFO in a cloned repository is never followed or opened).
        Blocking: call from a worker thread."""
        path = folder / "events.jsonl"
        try:
            status = os.lstat(path)
        except OSError:
            return None
        if not stat.S_ISREG(status.st_mode):
            return None
        stamp = (status.st_mtime_ns, status.st_size)
        with self._folders_lock:
            known = self._folders.get(folder)
        if known is not None and known[0] == stamp:
            return known[1]
        from stet_lsp.trajectory.eventsfile import read_events_text
        from stet_lsp.trajectory.index import TrajectoryIndex

        try:
            text = read_events_text(path, root)
        except StetError as error:
            log.warning("%s", error)
            return None
        if text is None:
            return None
        index = TrajectoryIndex.from_events_text(text)
        with self._folders_lock:
            self._folders[folder] = (stamp, index)
        return index

    def _publish_issues(self, state: DocumentState, issues: list[LineIssue]) -> None:
        codec = self.server.workspace.position_codec
        diagnostics = [
            types.Diagnostic(
                range=line_range(codec, state.lines, issue.line),
                message=issue.message,
                severity=types.DiagnosticSeverity.Error
                if issue.severity == "error"
                else types.DiagnosticSeverity.Warning,
                source=SOURCE,
                code="trajectory-schema",
                data={"type": "trajectory", "line": issue.line},
            )
            for issue in issues
            if issue.line < len(state.lines)
        ]
        self.server.diagnostics.set(state.uri, "trajectory", diagnostics)

    # -- what the editor asks ------------------------------------------------------------

    def code_lenses(self, state: DocumentState) -> Sequence[types.CodeLens] | LensesJSON:
        known = self.indexed.get(state.uri)
        if known is None:
            return []
        # A large file edited since it was indexed keeps its lenses while it is indexed again
        # if its lines are as many (the lenses stay inside it); else it has none until then.
        return known.lenses if known.key[1] == len(state.lines) else ()

    def hover(self, state: DocumentState, line: int) -> str | Awaitable[str | None] | None:
        known = self.indexed.get(state.uri)
        step = _step_at(known, line) if known is not None else None
        if known is None or step is None:
            return None
        # The index and its lines are never changed once made, so a worker may read them.
        if _read_size(known.index, step) > INLINE_LIMIT:
            return self.server.off_loop(_hover, known.index, step)
        return _hover(known.index, step)

    def code_actions(
        self, state: DocumentState, params: types.CodeActionParams
    ) -> list[types.CodeAction]:
        """A verdict on the step under the cursor (`stet.step.mark`; a note, which needs a
        text, is the editors' "Mark Step…" command)."""
        known = self.indexed.get(state.uri)
        step = _step_at(known, params.range.start.line) if known is not None else None
        if step is None:
            return []
        arguments = {"uri": state.uri, "line": params.range.start.line}
        return [
            types.CodeAction(
                title=f"Mark step {step} as {verdict}",
                kind=types.CodeActionKind.QuickFix,
                command=types.Command(
                    title=f"Mark step {step} as {verdict}",
                    command="stet.step.mark",
                    arguments=[{**arguments, "verdict": verdict}],
                ),
            )
            for verdict in ("wrong", "clever")
        ]

    def symbols(self, state: DocumentState) -> list[types.DocumentSymbol]:
        known = self.indexed.get(state.uri)
        if known is None or not state.lines:
            return []
        codec = self.server.workspace.position_codec
        if known.anchors:  # a narration: the same nodes, at the anchors of their steps
            placed = (_at_anchors(node, known.anchors) for node in known.index.outline())
            return [_symbol(codec, state.lines, node) for node in placed if node is not None]
        return [_symbol(codec, state.lines, node) for node in known.index.outline()]

    def definition(
        self, state: DocumentState, line: int
    ) -> list[types.Location] | Awaitable[list[types.Location]]:
        known = self.indexed.get(state.uri)
        step = _step_at(known, line) if known is not None else None
        if known is None or step is None or state.session is None:
            return []
        if _read_size(known.index, step) > INLINE_LIMIT:
            return self._definition_later(state, known.index, step)
        return self._locations(state, _file_targets(known.index, step))

    async def _definition_later(
        self, state: DocumentState, index: TrajectoryIndex, step: int
    ) -> list[types.Location]:
        targets = await self.server.off_loop(_file_targets, index, step)
        return self._locations(state, targets)

    def _locations(
        self, state: DocumentState, targets: list[tuple[str, int]]
    ) -> list[types.Location]:
        """Where in the work tree the file targets of a step are (paths followed since)."""
        assert state.session is not None
        root = state.session.root
        folder = (state.relative or "").rsplit("/", 1)[0]
        locations = []
        for written, target_line in targets:
            path = self._current_path(root, folder, written)
            file = _openable(root, path)
            uri = from_fs_path(str(file)) if file is not None else None
            if uri is None:
                continue
            position = types.Position(line=max(target_line - 1, 0), character=0)
            locations.append(
                types.Location(uri=uri, range=types.Range(start=position, end=position))
            )
        return locations

    def _current_path(self, root: Path, folder: str, path: str) -> str:
        """The path now of a file a step of the trajectory in `folder` wrote at `path`
        (renamed since, as provenance follows it)."""
        from stet_lsp.server.features.provenance import ProvenanceFeature

        for feature in self.server.features:
            if isinstance(feature, ProvenanceFeature):
                return feature.current_path(root, folder, path)
        return path

    def workspace_symbols(self, query: str, roots: Sequence[Path]) -> list[types.WorkspaceSymbol]:
        """Steps of every trajectory of the repositories at `roots` (the workspace folders'
        and the open documents') whose title holds the query's words: in an open events.jsonl,
        as the editor holds it (unsaved edits and all), else as the file holds it. Runs in a
        worker thread (it may read events.jsonl files)."""
        from stet_lsp.trajectory.store import folders

        shown = {path: (uri, index) for uri, (path, index) in self.open_events.items()}
        ordered = sorted(roots)
        found: list[types.WorkspaceSymbol] = []
        for root in ordered:
            where = _repository_label(root, ordered)
            for folder in folders(root):
                path = folder.path / "events.jsonl"
                uri, index = shown.get(path) or (from_fs_path(str(path)) or "", None)
                if index is None:
                    index = self.folder_index(folder.path, root)
                if index is None:
                    continue
                for match in index.symbols(query, limit=_SYMBOL_LIMIT - len(found)):
                    position = types.Position(line=match.line, character=0)
                    found.append(
                        types.WorkspaceSymbol(
                            name=match.name,
                            kind=types.SymbolKind.Event,
                            location=types.Location(
                                uri=uri, range=types.Range(start=position, end=position)
                            ),
                            container_name=folder.id + where,
                        )
                    )
                if len(found) >= _SYMBOL_LIMIT:
                    return found
        return found


def _repository_label(root: Path, roots: list[Path]) -> str:
    """What tells the steps of `root` from those of the other repositories searched
    (two worktrees on one branch have working trajectories of one id): nothing when it is
    the only one, else its folder's name, or its path when another has that name."""
    if len(roots) < 2:
        return ""
    alike = sum(other.name == root.name for other in roots) > 1
    return f" ({root if alike else root.name})"


def _openable(root: Path, path: str) -> Path | None:
    """`path` in the work tree `root`, for the editor to open; None when it leaves the work
    tree, goes through a link (a cloned repository may commit one pointing anywhere) or is
    not a regular file (a FIFO would hang the editor). A file gone since is still a place."""
    try:
        file = Path(checked_path(root, path))
        mode = os.lstat(file).st_mode
    except FileNotFoundError:
        return file
    except (OSError, StetError):
        return None
    return file if stat.S_ISREG(mode) else None


def _kind(state: DocumentState) -> str | None:
    if state.relative is None:
        return None
    found = TRAJECTORY_FILE.match(state.relative)
    return found.group(1) if found else None


def _where(state: DocumentState) -> tuple[Path, Path]:
    """The document's path and its repository's root (a trajectory file has both)."""
    assert state.path is not None and state.session is not None
    return state.path, state.session.root


def _index(
    kind: str,
    lines: list[str],
    where: tuple[Path, Path],
    feature: TrajectoryFiles,
    key: tuple[int, int],
) -> Indexed:
    """The document's index (blocking: a narration reads the events.jsonl beside it)."""
    with collector_paused():
        return _indexed(kind, lines, where, feature, key)


def _indexed(
    kind: str,
    lines: list[str],
    where: tuple[Path, Path],
    feature: TrajectoryFiles,
    key: tuple[int, int],
) -> Indexed:
    from stet_lsp.trajectory.index import TrajectoryIndex, narration_steps

    if kind == "events.jsonl":
        index = TrajectoryIndex(lines)
        anchors: dict[int, int] = {}
    else:
        path, root = where
        index = feature.folder_index(path.parent, root) or TrajectoryIndex.from_events_text("")
        anchors = narration_steps("\n".join(lines))
    if kind == "events.jsonl":
        index.outline()  # built here, not on the loop at the first outline request
    lenses = []
    for step, line in _step_lines(index, anchors):
        try:
            title = index.lens_title(step)
        except KeyError:  # a narration naming a step its events.jsonl does not hold
            continue
        lenses.append((line, title))
    return Indexed(key, index, anchors, LensesJSON.at_line_starts(lenses))


def _step_lines(index: TrajectoryIndex, anchors: dict[int, int]) -> list[tuple[int, int]]:
    """(step, line) of every step shown in the document."""
    if anchors:
        return sorted(anchors.items(), key=lambda item: item[1])
    return [(entry.step, entry.line) for entry in index.steps if entry.step]


def _step_at(known: Indexed, line: int) -> int | None:
    """The step shown at `line`: in a narration, one its events.jsonl holds (a narration
    whose events.jsonl is missing or lacks that step offers nothing to do with it)."""
    if not known.anchors:
        entry = known.index.at_line(line)
        return entry.step if entry is not None and entry.step else None
    above = [
        (anchor_line, step) for step, anchor_line in known.anchors.items() if anchor_line <= line
    ]
    if not above:
        return None
    step = max(above)[1]
    try:
        known.index.get(step)
    except KeyError:
        return None
    return step


def _read_size(index: TrajectoryIndex, step: int) -> int:
    """How many characters a hover on `step` parses: its line and its partner's (a call shows
    its result, a result its call); a definition reads its line alone."""
    try:
        entry = index.get(step)
    except KeyError:
        return 0
    partner = index.partner(entry)
    return sum(len(index.lines[found.line]) for found in (entry, partner) if found is not None)


def _hover(index: TrajectoryIndex, step: int) -> str | None:
    try:
        return index.hover(step)
    except KeyError:
        return None


def _file_targets(index: TrajectoryIndex, step: int) -> list[tuple[str, int]]:
    try:
        return index.file_targets(step)
    except KeyError:  # a narration naming a step its events.jsonl does not hold
        return []


def _at_anchors(node: OutlineNode, anchors: dict[int, int]) -> OutlineNode | None:
    """An outline node of events.jsonl placed in a narration: from the first to the last
    anchor of its steps and its children's, named at its own step's anchor; None when the
    narration shows none of its steps."""
    from stet_lsp.trajectory.index import OutlineNode

    children = [child for c in node.children if (child := _at_anchors(c, anchors)) is not None]
    lines = [anchors[entry.step] for entry in node.steps if entry.step in anchors]
    lines += [line for child in children for line in (child.first_line, child.last_line)]
    if not lines:
        return None
    first, last = min(lines), max(lines)
    line = anchors.get(node.step, first) if node.step is not None else first
    return OutlineNode(
        node.name, node.detail, node.kind, line, first, last, node.step, children, node.steps
    )


def _symbol(codec: object, lines: list[str], node: OutlineNode) -> types.DocumentSymbol:
    last = min(node.last_line, len(lines) - 1)
    first = min(node.first_line, last)
    line = min(max(node.line, first), last)
    whole = types.Range(
        start=types.Position(line=first, character=0),
        end=types.Position(line=last, character=0),
    )
    selection = types.Range(
        start=types.Position(line=line, character=0), end=types.Position(line=line, character=0)
    )
    return types.DocumentSymbol(
        name=node.name or node.kind,
        detail=node.detail,
        kind=_SYMBOL_KINDS.get(node.kind, types.SymbolKind.Field),
        range=whole,
        selection_range=selection,
        children=[_symbol(codec, lines, child) for child in node.children] or None,
    )
