"""Provenance in source files: a line an agent's step wrote carries a hover ("written by step
N of trajectory T", the agent's message that led to it, the step's diff, a link to the step),
a code lens on the first line of each hunk and, on each of its lines, a code action opening
the step as the lens does (for clients that show no lenses or never refresh them). A change
whose lines could not be placed has its lens and action on the file's first line, worded as
`stet trajectory blame` lists it; past UNPLACED_LENSES such changes, one lens and one action
there list them all for the user to pick the one whose step opens.
Attribution follows the current buffer: a line edited since is no longer attributed,
untouched lines stay attributed after edits above.

A repository's trajectories are loaded in a worker thread, and loaded again when a
trajectory, HEAD or the index changed or a file they wrote left its path (checked at most
every CHECK_SECONDS, also in a thread, when a document of the repository changes and on the
watcher's poll while one is open, so an import from outside shows without typing; at once
after the server's own import, capstone or graduation); the lines of an open document are
attributed on the loop (a few milliseconds for a 5,000-line file) from what is loaded, and
the lenses refreshed when they changed (a text over INLINE_LIMIT characters is attributed in
a thread instead: a 30 MB file took seconds a keystroke)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from lsprotocol import types
from pygls.uris import from_fs_path

from stet_lsp.core.errors import StetError
from stet_lsp.server.documents import DocumentState
from stet_lsp.server.feature import Feature
from stet_lsp.server.features.trajectory_files import TRAJECTORY_FILE
from stet_lsp.server.positions import line_range
from stet_lsp.server.requests import answering, argument, field
from stet_lsp.server.server import StetServer

if TYPE_CHECKING:  # loaded with the first repository: the server starts without pydantic
    from stet_lsp.trajectory.provenance import (
        Provenance,
        ProvenanceHunk,
        StepDetail,
        Unattributed,
    )

log = logging.getLogger(__name__)

CHECK_SECONDS = 2.0
INLINE_LIMIT = 256 * 1024
"""Texts up to this many characters are attributed on the loop; longer ones in a thread."""
OPEN_STEP = "stet.trajectory.open"
PICK_UNPLACED = "stet.provenance.unplaced"
UNPLACED_LENSES = 3
"""The most changes not placed that get a lens each on a file's first line: more get one lens
(a row of them pushes the file's first line out of sight)."""
PICK_SECONDS = 300.0
"""How long a pick among the changes not placed waits for the user's choice."""
STETS_OWN = (".stet/cache/", ".stet/trajectories/", ".stet/feedback/")
"""Where Stet's own files are (sheets, trajectories, reviews, verdicts), which no step wrote;
other `.stet/` files (a skill, the gate's settings) may be an agent's, as any file."""
_DIFF_LINES = 40
_MESSAGE_CHARS = 1500
Step = TypeVar("Step", bound="ProvenanceHunk | Unattributed")


class ProvenanceFeature(Feature):
    name = "provenance"

    def __init__(self, server: StetServer) -> None:
        super().__init__(server)
        self.loaded: dict[Path, Provenance] = {}
        self._checked: dict[Path, float] = {}
        self._loading: dict[Path, asyncio.Task[None]] = {}
        """By repository root: the load of its trajectories, while it runs."""
        self._again: set[Path] = set()
        """Repositories whose trajectories a command wrote while they were being loaded."""
        self.hunks: dict[str, list[ProvenanceHunk]] = {}
        """By document URI: the hunks of the text last analysed."""
        self.attributing: dict[str, asyncio.Task[None]] = {}
        """By document URI: a large text's attribution in a worker, while it runs."""
        self.attributed: dict[str, tuple[DocumentState, int, Provenance]] = {}
        """By document URI: what a large text's hunks were found for."""
        self.caught_up: dict[str, int] = {}
        """By document URI: how many of its `line_edits` a large text's hunks have moved with."""
        server.command(PICK_UNPLACED)(answering(self.pick_unplaced))

    def forget(self, uri: str) -> None:
        self.hunks.pop(uri, None)
        self.attributed.pop(uri, None)
        self.caught_up.pop(uri, None)

    def forgotten(self, root: Path) -> None:
        self.loaded.pop(root, None)
        self._checked.pop(root, None)
        self._again.discard(root)

    def analyse(self, state: DocumentState) -> None:
        self._move_with_edits(state)
        if state.session is None or state.relative is None:
            return
        root = state.session.root
        if state.relative.startswith(STETS_OWN):
            if TRAJECTORY_FILE.match(state.relative):  # its steps lead to files renamed since
                self._refresh_later(root)
            return
        provenance = self.loaded.get(root)
        self._refresh_later(root)
        if provenance is None:
            return
        if sum(map(len, state.lines)) <= INLINE_LIMIT:
            self.hunks[state.uri] = provenance.hunks(state.relative, state.text)
        elif state.uri not in self.attributing:  # one at a time; the next starts after it
            done = self.attributed.get(state.uri)
            if done is not None and done[0] is state and done[1:] == (state.revision, provenance):
                return
            task = self.server.spawn(
                self._attribute_later(state, provenance), f"attributing {state.uri}"
            )
            self.attributing[state.uri] = task

    async def _attribute_later(self, state: DocumentState, provenance: Provenance) -> None:
        """A large text's lines attributed in a worker; its last hunks stay shown meanwhile
        (those past its end are not), and the views refresh once they are known."""
        revision, relative = state.revision, state.relative
        lines = list(state.lines)  # the strings are shared: edits change the document's list
        made = len(state.line_edits)
        assert relative is not None
        try:
            found = await self.server.off_loop(_hunks_of, provenance, relative, lines)
        finally:
            self.attributing.pop(state.uri, None)
        current = self.server.documents.get(state.uri)
        if current is None:
            return
        if current is state:
            # Edited meanwhile: moved with the edits, and attributed again after the refresh.
            self.hunks[state.uri] = moved(found, state.line_edits[made:])
            self.caught_up[state.uri] = len(state.line_edits)
            self.attributed[state.uri] = (state, revision, provenance)
        self.server.refresh([current], outside=True)

    def _move_with_edits(self, state: DocumentState) -> None:
        """Moves a large text's hunks with the edits made since they were found (the lines
        an edit replaced lose theirs until the worker finds them again); the edits are kept
        only while a worker attributes a copy of the text made before them."""
        edits = state.line_edits
        done = self.caught_up.get(state.uri, 0)
        if len(edits) > done and state.uri in self.hunks:
            self.hunks[state.uri] = moved(self.hunks[state.uri], edits[done:])
        if state.uri in self.attributing:
            self.caught_up[state.uri] = len(edits)
        else:
            edits.clear()
            self.caught_up[state.uri] = 0

    async def settled(self, state: DocumentState) -> None:
        """The first load of the document's repository's trajectories, then the attribution
        of a large text in a worker."""
        if state.session is not None and state.session.root not in self.loaded:
            load = self._loading.get(state.session.root)
            if load is not None:
                await asyncio.wait({load})
        task = self.attributing.get(state.uri)
        if task is not None:
            await asyncio.wait({task})

    def polled(self, root: Path) -> None:
        """A trajectory imported from outside shows in the open documents without typing."""
        if root in self.loaded and any(
            state.session is not None and state.session.root == root
            for state in self.server.documents.values()
        ):
            self._refresh_later(root)

    def trajectories_changed(self, root: Path) -> None:
        if root in self._loading:
            self._again.add(root)  # what is being loaded may have been read before the write
        else:
            self._refresh_later(root, at_once=True)

    def _refresh_later(self, root: Path, *, at_once: bool = False) -> None:
        """Load the repository's trajectories, or check whether they changed, in a worker
        thread (at most every CHECK_SECONDS unless `at_once`); the documents refresh when
        they did."""
        now = time.monotonic()
        if root in self._loading:
            return
        if not at_once and now - self._checked.get(root, -CHECK_SECONDS) < CHECK_SECONDS:
            return
        self._checked[root] = now
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # no loop (a test calling analyse directly)
            return
        self._loading[root] = self.server.spawn(
            self._reload(root), f"loading the trajectories of {root}"
        )

    async def _reload(self, root: Path) -> None:
        try:
            previous = self.loaded.get(root)
            if previous is not None and not await self.server.off_loop(previous.stale):
                return
            from stet_lsp.trajectory.provenance import Provenance

            loaded = await self.server.off_loop(Provenance.load, root, previous)
            if root not in self.server.sessions:  # forgotten meanwhile
                return
            self.loaded[root] = loaded
        finally:
            self._loading.pop(root, None)
            if root in self._again:
                self._again.discard(root)
                self._refresh_later(root, at_once=True)
        known = set(previous.problems) if previous is not None else set()
        for problem in loaded.problems:  # an unreadable or oversized meta.json, say
            if problem not in known:
                log.warning("provenance leaves a trajectory out: %s", problem)
        if not loaded.trajectories and (previous is None or not previous.trajectories):
            return  # nothing was attributed and nothing is: the views stay as they are
        states = [
            state
            for state in self.server.documents.values()
            if state.session is not None and state.session.root == root
        ]
        self.server.refresh(states, outside=True)

    def current_path(self, root: Path, folder: str, path: str) -> str:
        """Where the file that the trajectory in `folder` wrote at `path` is now (`path`
        until the repository's trajectories are loaded)."""
        provenance = self.loaded.get(root)
        return provenance.current_path(folder, path) if provenance is not None else path

    def code_lenses(self, state: DocumentState) -> list[types.CodeLens]:
        codec = self.server.workspace.position_codec
        changes = self._unplaced(state)
        hunks = self._shown(state)
        if len(changes) > UNPLACED_LENSES:
            commands = [_pick_command(state, changes, _pick_title(changes))]
        else:
            commands = [
                types.Command(title=title, command=OPEN_STEP, arguments=_arguments(state, item))
                for item, title in zip(changes, _unplaced_titles(changes, hunks), strict=True)
            ]
        first_line = line_range(codec, state.lines, 0)
        unplaced = [types.CodeLens(range=first_line, command=command) for command in commands]
        return unplaced + [
            types.CodeLens(
                range=line_range(codec, state.lines, hunk.first_line),
                command=types.Command(
                    title=title, command=OPEN_STEP, arguments=_arguments(state, hunk)
                ),
            )
            for hunk, title in zip(
                hunks, _distinct_titles(hunks, _lens_title, changes), strict=True
            )
        ]

    def _shown(self, state: DocumentState) -> list[ProvenanceHunk]:
        """The document's hunks within its text (a large text's may be past its end until
        they are found again)."""
        return [h for h in self.hunks.get(state.uri, []) if h.first_line < len(state.lines)]

    def _unplaced(self, state: DocumentState) -> list[Unattributed]:
        """The changes to the document's file whose lines could not be placed (as `stet
        trajectory blame` lists them), shown on its first line: the lines they wrote carry
        no lens, and these say which steps changed the file all the same."""
        provenance = self.loaded.get(state.session.root) if state.session is not None else None
        if provenance is None or state.relative is None or state.relative.startswith(STETS_OWN):
            return []
        return provenance.unattributed(state.relative)

    def code_actions(
        self, state: DocumentState, params: types.CodeActionParams
    ) -> list[types.CodeAction]:
        """The lens's command, on every line of the hunk: a client that shows no lenses (or
        never refreshes them, as Neovim 0.11) still opens the step that wrote the line."""
        first, last = params.range.start.line, params.range.end.line
        hunks = self._shown(state)
        changes = self._unplaced(state)
        steps: list[ProvenanceHunk | Unattributed] = [
            hunk for hunk in hunks if hunk.first_line <= last and hunk.last_line >= first
        ]
        picks: list[types.CodeAction] = []
        if first == 0:  # the line the unplaced changes' lenses are on
            if len(changes) > UNPLACED_LENSES:
                title = f"Open the step of one of {len(changes)} changes that could not be placed"
                command = _pick_command(state, changes, title)
                picks.append(
                    types.CodeAction(
                        title=title, kind=types.CodeActionKind.QuickFix, command=command
                    )
                )
            else:
                steps += changes
        # Worded alike on every line: told apart among all the file's steps, not these only.
        everywhere: list[ProvenanceHunk | Unattributed] = [*hunks, *changes]
        titles = {
            (step.trajectory, step.step): title
            for step, title in zip(
                everywhere, _distinct_titles(everywhere, _action_title), strict=True
            )
        }
        actions: dict[tuple[str, int], types.CodeAction] = {}
        for step in steps:
            title = titles[step.trajectory, step.step]
            actions.setdefault(
                (step.trajectory, step.step),
                types.CodeAction(
                    title=title,
                    kind=types.CodeActionKind.QuickFix,
                    command=types.Command(
                        title=title, command=OPEN_STEP, arguments=_arguments(state, step)
                    ),
                ),
            )
        return [*actions.values(), *picks]

    async def pick_unplaced(self, *arguments: Any) -> dict[str, Any]:
        """`stet.provenance.unplaced`: the changes to an open document's file that could not
        be placed, offered to the user to pick one (`window/showMessageRequest`, its actions
        worded as the lenses); the picked change's step opens as `stet.trajectory.open`
        opens it. `{changes: [{id, step, lines, reason, title}], picked}`, `picked` null when
        the user picked none, else `{id, step, uri, shown, line}`. With `pick: false` the
        changes are only listed, for a client that offers them in a pick of its own (a
        message's buttons, one a change, are no pick for thirty). None left (the lens was
        drawn before the document or its trajectories changed): the user is told so
        (`window/showMessage`), either way, and the lenses are asked for again."""
        from stet_lsp.server.features.trajectories import open_trajectory_file

        args = argument(arguments)
        document = field(args, "uri", str)
        pick = field(args, "pick", bool, True)
        state = await self.server.ready(document)
        if state is None or state.session is None:
            raise StetError(f"{document} is not an open document of a repository")
        session = state.session
        await self.settled(state)  # the first load of the trajectories: none are known before
        changes = self._unplaced(state)
        titles = _unplaced_titles(changes, self._shown(state))
        listed = [
            {
                "id": item.trajectory,
                "step": item.step,
                "lines": item.lines,
                "reason": item.reason,
                "title": title,
            }
            for item, title in zip(changes, titles, strict=True)
        ]
        if not changes:
            # The lens was drawn before its document or trajectories changed; a pick of
            # nothing would show nothing, so the user is told why and the lenses drawn again.
            self.server.message(
                f"No change to {state.relative} is left that could not be placed: "
                "the lens was out of date",
                types.MessageType.Info,
            )
            if self.server.supports("workspace", "code_lens", "refresh_support"):
                self.server.workspace_code_lens_refresh(None)
            return {"changes": listed, "picked": None}
        if not pick:
            return {"changes": listed, "picked": None}
        by_title: dict[str, Unattributed] = {}  # one choice for a change listed twice
        for item, title in zip(changes, titles, strict=True):
            by_title.setdefault(title, item)
        answer = await self.server.from_client(
            self.server.window_show_message_request_async(
                types.ShowMessageRequestParams(
                    type=types.MessageType.Info,
                    message=f"{_pick_title(changes)} in {state.relative}: open the step of one",
                    actions=[types.MessageActionItem(title=title) for title in by_title],
                )
            ),
            "window/showMessageRequest",
            PICK_SECONDS,
        )
        picked = by_title.get(answer.title) if answer is not None else None
        if picked is None:
            return {"changes": listed, "picked": None}
        opened = await open_trajectory_file(
            self.server, session, picked.trajectory, "narration", picked.step
        )
        return {
            "changes": listed,
            "picked": {"id": picked.trajectory, "step": picked.step, **opened},
        }

    def hover(self, state: DocumentState, line: int) -> str | None:
        if state.session is None:
            return None
        hunk = next(
            (h for h in self.hunks.get(state.uri, []) if h.first_line <= line <= h.last_line),
            None,
        )
        provenance = self.loaded.get(state.session.root)
        if hunk is None or provenance is None:
            return None
        detail = provenance.step(hunk.trajectory, hunk.step)
        trajectory = next(
            (t for t in provenance.trajectories if t.id == hunk.trajectory and t.folder), None
        )
        folder = state.session.root / trajectory.folder if trajectory is not None else None
        return _hover(hunk, detail, folder, state.relative)


def _hunks_of(provenance: Provenance, relative: str, lines: list[str]) -> list[ProvenanceHunk]:
    return provenance.hunks(relative, "\n".join(lines))


def _arguments(state: DocumentState, hunk: ProvenanceHunk | Unattributed) -> list[Any]:
    """`stet.trajectory.open`'s argument: the step's line in the trajectory's narration."""
    return [{"uri": state.uri, "id": hunk.trajectory, "step": hunk.step}]


def _pick_command(state: DocumentState, changes: list[Unattributed], title: str) -> types.Command:
    return types.Command(title=title, command=PICK_UNPLACED, arguments=[{"uri": state.uri}])


def _pick_title(changes: list[Unattributed]) -> str:
    return f"agent: {len(changes)} changes that could not be placed"


def _action_title(hunk: ProvenanceHunk | Unattributed, full: bool = False) -> str:
    return f"Open step {hunk.step} of {_named(hunk.trajectory, full)} (narration)"


def moved(
    hunks: list[ProvenanceHunk], edits: Sequence[tuple[int, int, int]]
) -> list[ProvenanceHunk]:
    """`hunks` moved with `edits` (first line, lines replaced, lines written), in order: a
    hunk below an edit moves by the lines it added or removed; the lines it replaced leave
    the hunks they were in (a hunk may be cut in two)."""
    for first, replaced, written in edits:
        end, shift = first + replaced, written - replaced
        kept: list[ProvenanceHunk] = []
        for hunk in hunks:
            if hunk.first_line < first:
                kept.append(replace(hunk, last_line=min(hunk.last_line, first - 1)))
            if hunk.last_line >= end:
                start = max(hunk.first_line, end)
                kept.append(
                    replace(hunk, first_line=start + shift, last_line=hunk.last_line + shift)
                )
        hunks = kept
    return hunks


def _lens_title(hunk: ProvenanceHunk, full: bool = False) -> str:
    lines = hunk.last_line - hunk.first_line + 1
    plural = "s" if lines != 1 else ""
    return f"agent: step {hunk.step} of {_named(hunk.trajectory, full)} wrote {lines} line{plural}"


def _distinct_titles(
    steps: Sequence[Step],
    title: Callable[[Step, bool], str],
    others: Sequence[ProvenanceHunk | Unattributed] = (),
) -> list[str]:
    """The steps' titles, one a step, as `title` words them with the trajectory's id
    shortened, unless the file shows (in `steps` or `others`, its other lenses or actions)
    steps of two trajectories whose ids shorten alike (as ids sharing their first 29
    characters do): those name their trajectories in full (`title` with `full`), whatever
    else their titles say, or the user could not tell which trajectory a step is of, and a
    pick of the one would open the other."""
    trajectories: dict[str, set[str]] = {}
    for step in [*steps, *others]:
        trajectories.setdefault(_named(step.trajectory, False), set()).add(step.trajectory)
    return [title(step, len(trajectories[_named(step.trajectory, False)]) > 1) for step in steps]


def _unplaced_titles(
    changes: list[Unattributed], hunks: Sequence[ProvenanceHunk] = ()
) -> list[str]:
    return _distinct_titles(changes, _unplaced_title, hunks)


def _unplaced_title(item: Unattributed, full: bool = False) -> str:
    """As `stet trajectory blame` says it (the trajectory's id shortened unless `full`)."""
    where = f"agent: step {item.step} of {_named(item.trajectory, full)}"
    if not item.lines:  # it only removed lines
        return f"{where} changed this file at a place that could not be found: {item.reason}"
    plural = "s" if item.lines != 1 else ""
    return f"{where} changed {item.lines} line{plural} that could not be placed: {item.reason}"


def _named(trajectory: str, full: bool) -> str:
    """The trajectory's id as a title names it: shortened past 32 characters unless `full`."""
    return trajectory if full or len(trajectory) <= 32 else trajectory[:29] + "…"


def _hover(
    hunk: ProvenanceHunk, detail: StepDetail | None, folder: Path | None, relative: str | None
) -> str:
    """The step's detail, and links to it: in the narration (its anchor, which Markdown
    previews follow) and in events.jsonl, whose line N is step N (`#L<N>`: editors open a
    file at that line, and ignore an anchor). A file renamed since the step wrote it names
    the path it was written to, as `stet trajectory blame` does."""
    parts = [f"**Written by step {hunk.step}** of trajectory `{hunk.trajectory}`"]
    if hunk.path != relative:
        parts[0] += f" (as `{hunk.path}`)"
    if detail is not None:
        if detail.message:
            said = "reasoned" if detail.message_kind == "reasoning" else "said"
            message = detail.message.strip()
            if len(message) > _MESSAGE_CHARS:
                message = message[:_MESSAGE_CHARS] + " …"
            quoted = "\n".join("> " + line for line in message.splitlines())
            parts.append(f"The agent {said} (step {detail.message_step}):\n\n{quoted}")
        if detail.diff:
            diff = detail.diff.splitlines()
            shown = "\n".join(diff[:_DIFF_LINES])
            more = f"\n\n… {len(diff) - _DIFF_LINES} more lines" if len(diff) > _DIFF_LINES else ""
            fence = "`" * max(3, _longest_backticks(shown) + 1)
            parts.append(f"{fence}diff\n{shown}\n{fence}{more}")
    narration = from_fs_path(str(folder / "narration.md")) if folder is not None else None
    events = from_fs_path(str(folder / "events.jsonl")) if folder is not None else None
    if narration and events:
        step = hunk.step
        parts.append(f"[Open step {step}]({narration}#step-{step}) · [events]({events}#L{step})")
    return "\n\n".join(parts)


def _longest_backticks(text: str) -> int:
    longest = current = 0
    for char in text:
        current = current + 1 if char == "`" else 0
        longest = max(longest, current)
    return longest
