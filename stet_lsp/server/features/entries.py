"""Style-sheet entries beside the code: a diagnostic, a code lens and a hover at each anchor.

Each anchor's place in an open document is kept in step with the edits
(`anchors.AnchorTrack`), so an edit costs what it changed, not a search of the document per
anchor. A lost anchor's text is searched for among similar lines of the whole document once
(on the loop for a small document, else in a worker on a copy of its lines, the edits made
meanwhile applied to the result when it comes back, which then refreshes the diagnostics);
after that only the lines an edit brings are searched."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence

from lsprotocol import types

from stet_lsp.core.anchors import AnchorTrack, exact_lines_of, similar_lines
from stet_lsp.core.items import anchored, placed_entry_items
from stet_lsp.core.model import Anchor, Entry
from stet_lsp.server.documents import DocumentState
from stet_lsp.server.feature import Feature
from stet_lsp.server.features.graduation import actions_for
from stet_lsp.server.positions import diagnostic, line_range
from stet_lsp.server.server import StetServer

DISCARD = "stet.note.discard"
SEARCH_ON_LOOP = 500
"""Lines searched for an anchor's similar lines on the loop, at most (about 15 µs each)."""
_CHUNK = 512  # lines compared at once when finding what an edit changed
_SEARCH_STEP = 32  # lines searched in a worker between letting the loop run (under 1 ms)

Edit = tuple[int, int, list[str]]
"""Lines `start` to `start + removed` (0-based, the end excluded) replaced by `added`."""


class Entries(Feature):
    name = "entries"

    def __init__(self, server: StetServer) -> None:
        super().__init__(server)
        self.placed: dict[str, dict[int, list[Entry]]] = {}
        """By document URI: the open entries anchored in it, by 0-based line."""
        self.tracked: dict[str, Tracked] = {}
        """By document URI: its anchors, kept in step with its lines."""

    def analyse(self, state: DocumentState) -> None:
        snapshot = self.server.snapshot(state.session) if state.session else None
        if snapshot is None or state.is_sheet or state.relative is None:
            return
        document = snapshot.document
        wanted = anchored(state.relative, document.entries())
        tracked = self.tracked.get(state.uri)
        if not wanted:
            self._drop(state.uri)
        elif tracked is None or tracked.state is not state:
            self._drop(state.uri)
            tracked = self.tracked[state.uri] = Tracked(state)
        else:
            tracked.catch_up()
        placed_lines: list[tuple[int | None, Entry]] = []
        if wanted and tracked is not None:
            tracked.follow({anchor for anchor, _ in wanted})
            self._search(tracked)
            count = len(state.lines)
            placed_lines = [(tracked.tracks[anchor].line(count), entry) for anchor, entry in wanted]
        items = placed_entry_items(state.lines, placed_lines, self.server.settings.entry_severity)
        placed: dict[int, list[Entry]] = {}
        for item in items:
            entry = document.find(item.data["entryId"])
            if entry is not None:
                placed.setdefault(item.line, []).append(entry)
        self.placed[state.uri] = placed
        codec = self.server.workspace.position_codec
        self.server.diagnostics.set(
            state.uri, "entries", [diagnostic(codec, state.lines, item) for item in items]
        )

    def _search(self, tracked: Tracked) -> None:
        """Search for the similar lines of the anchors that need them: now when that is
        quick, else in a worker (one search of a document at a time)."""
        unknown = tracked.unknown()
        if not unknown:
            return
        lines = tracked.state.lines
        if len(lines) * len(unknown) <= SEARCH_ON_LOOP:
            for track in unknown:
                track.adopt(similar_lines(track.anchor.text, lines), [])
        elif tracked.search is None:
            tracked.search = self.server.spawn(
                self._search_off_loop(tracked), "searching for lost anchors"
            )

    async def _search_off_loop(self, tracked: Tracked) -> None:
        state = tracked.state
        try:
            while self.tracked.get(state.uri) is tracked:
                tracked.catch_up()
                unknown = tracked.unknown()
                if not unknown:
                    break
                # A copy of the list of lines (the strings are shared): the document's own
                # list changes under edits, which are logged meanwhile.
                tracked.edits = []
                found = await self.server.off_loop(
                    _similar_lines, [track.anchor.text for track in unknown], list(tracked.lines)
                )
                edits, tracked.edits = tracked.edits, None
                if self.tracked.get(state.uri) is not tracked:
                    return
                if sum(len(added) for _, _, added in edits) * len(unknown) > SEARCH_ON_LOOP:
                    continue  # too much changed meanwhile to catch up on the loop: again
                for track in unknown:
                    track.adopt(found[track.anchor.text], edits)
        finally:
            tracked.search, tracked.edits = None, None
        if self.server.documents.get(state.uri) is state and self.tracked.get(state.uri) is tracked:
            self.analyse(state)
            self.server.announce([state], outside=True)  # a finished background search

    async def settled(self, state: DocumentState) -> None:
        tracked = self.tracked.get(state.uri)
        if tracked is not None and tracked.search is not None:
            await asyncio.wait({tracked.search})

    def code_lenses(self, state: DocumentState) -> list[types.CodeLens]:
        codec = self.server.workspace.position_codec
        lenses = []
        for line, entries in sorted(self.placed.get(state.uri, {}).items()):
            count = len(entries)
            title = f"style sheet: {count} note{'s' if count != 1 else ''}"
            lenses.append(
                types.CodeLens(
                    range=line_range(codec, state.lines, line),
                    command=types.Command(
                        title=title,
                        command="stet.sheet.open",
                        arguments=[{"uri": state.uri}],
                    ),
                )
            )
        return lenses

    def hover(self, state: DocumentState, line: int) -> str | None:
        entries = self.placed.get(state.uri, {}).get(line)
        if not entries:
            return None
        blocks = [
            f"**Style sheet** · {entry.kind} · {entry.author} · `{entry.id}`\n\n{entry.text}"
            for entry in entries
        ]
        return "\n\n---\n\n".join(blocks)

    def code_actions(
        self, state: DocumentState, params: types.CodeActionParams
    ) -> list[types.CodeAction]:
        placed = self.placed.get(state.uri, {})
        first, last = params.range.start.line, params.range.end.line
        # The lines holding entries, not every line of the range (which may end anywhere).
        lines = sorted(line for line in placed if first <= line <= last)
        actions = []
        for entry in (entry for line in lines for entry in placed[line]):
            related = [
                item
                for item in params.context.diagnostics
                if isinstance(item.data, dict) and item.data.get("entryId") == entry.id
            ]
            actions += actions_for(state.uri, entry, related)
        return actions

    def forget(self, uri: str) -> None:
        self.placed.pop(uri, None)
        self._drop(uri)

    def _drop(self, uri: str) -> None:
        tracked = self.tracked.pop(uri, None)
        if tracked is not None and tracked.search is not None:
            tracked.search.cancel()


class Tracked:
    """One open document's anchors, in step with `lines`: a copy of the document's list of
    lines (sharing its strings) as last analysed, from which its edits are found."""

    def __init__(self, state: DocumentState) -> None:
        self.state = state
        self.lines = list(state.lines)
        self.tracks: dict[Anchor, AnchorTrack] = {}
        self.search: asyncio.Task[None] | None = None
        """The running search for similar lines in a worker."""
        self.edits: list[Edit] | None = None
        """The edits since the running search's copy of the lines."""

    def catch_up(self) -> None:
        """Bring the anchors along with the document's edits since it was last analysed."""
        edit = changed(self.lines, self.state.lines)
        if edit is None:
            return
        start, removed, added = edit
        self.lines[start : start + removed] = added
        searching = [t for t in self.tracks.values() if t.similar is not None and t.searches]
        search = len(added) * len(searching) <= SEARCH_ON_LOOP
        for track in self.tracks.values():
            track.edit(start, removed, added, search=search)
        if self.edits is not None:
            self.edits.append(edit)

    def follow(self, anchors: set[Anchor]) -> None:
        """Track exactly these anchors (the sheet's entries changed)."""
        for anchor in [anchor for anchor in self.tracks if anchor not in anchors]:
            del self.tracks[anchor]
        new = [anchor for anchor in anchors if anchor not in self.tracks]
        # Many new anchors (a file's margin notes recorded together) are found in one pass.
        found = exact_lines_of({a.text for a in new if a.text}, self.lines) if len(new) > 1 else {}
        for anchor in new:
            self.tracks[anchor] = AnchorTrack(anchor, self.lines, found.get(anchor.text))

    def unknown(self) -> list[AnchorTrack]:
        return [track for track in self.tracks.values() if not track.known]


def changed(old: Sequence[str], new: Sequence[str]) -> Edit | None:
    """The one edit that turns `old` into `new`: from the first line that differs to the
    last, compared a chunk at a time in C (a third of a millisecond for 20,000 lines)."""
    shorter = min(len(old), len(new))
    start = 0
    while start < shorter:
        end = min(start + _CHUNK, shorter)
        if old[start:end] != new[start:end]:
            while old[start] == new[start]:
                start += 1
            break
        start = end
    if start == shorter and len(old) == len(new):
        return None
    same = 0  # lines equal at the end, after `start` in both
    limit = shorter - start
    while same < limit:
        end = min(same + _CHUNK, limit)
        if old[len(old) - end : len(old) - same] != new[len(new) - end : len(new) - same]:
            while old[len(old) - same - 1] == new[len(new) - same - 1]:
                same += 1
            break
        same = end
    return start, len(old) - same - start, list(new[start : len(new) - same])


def _similar_lines(texts: list[str], lines: list[str]) -> dict[str, list[tuple[int, float]]]:
    """In a worker: `similar_lines` of each text, a few lines at a time, letting the loop's
    thread have the interpreter between them (else it waits for it up to the switch interval,
    5 ms, at every turn while the search runs)."""
    found: dict[str, list[tuple[int, float]]] = {}
    for text in set(texts):
        similar = found[text] = []
        for start in range(0, len(lines), _SEARCH_STEP):
            similar += similar_lines(text, lines[start : start + _SEARCH_STEP], start + 1)
            time.sleep(0)
    return found
