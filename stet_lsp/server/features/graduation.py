"""Graduation in the editor: the code actions and lenses on an entry ("Graduate into the
trajectory", "Propose as a skill", "Discard"), the command `stet.graduate`, and the review
(`stet.graduation.review`): a document listing every open entry with a proposed route, with
a code action on each line to accept it and one to accept them all.

Every graduation writes the style sheet through `StetServer.write_sheet` (into the open
sheet's buffer when it has unsaved edits), and the rest (the gate, the skill file, the
working trajectory, the git index) in a worker thread. Into a buffer, the entries' new
statuses go first, computed without writing anything else; the rest is written once the
editor took them, and a status whose graduation then fails is set back to open. What is
written passes the gate with the repository's configuration and the editor's `stet.gate.*`
settings added to it (`Settings.gate_config`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.uris import from_fs_path

from stet_lsp.core.errors import StetError
from stet_lsp.core.model import Entry
from stet_lsp.server.documents import DocumentState
from stet_lsp.server.feature import Feature
from stet_lsp.server.requests import answering, argument, field
from stet_lsp.server.server import StetServer
from stet_lsp.server.sheet_sync import Staged

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from stet_lsp.core.sheet import StyleSheet
    from stet_lsp.core.targets import Target
    from stet_lsp.server.settings import Settings

GRADUATE = "stet.graduate"
PROPOSE = "stet.graduate.proposal"
REVIEW = "stet.graduation.review"
APPLY = "stet.graduation.apply"
_ROUTES = (
    ("trajectory", "Graduate entry {id} into the trajectory"),
    ("skill", "Propose entry {id} as a skill"),
    ("discard", "Discard entry {id}"),
)


def actions_for(
    uri: str, entry: Entry, diagnostics: list[types.Diagnostic] | None = None
) -> list[types.CodeAction]:
    """The three graduation routes of an open entry, as code actions. The skill route's
    arguments carry `proposedName` (from the entry's redacted text): a client that can ask
    for a name offers it, then sends `skill`; one that cannot sends the arguments as they are
    and the server uses the proposed name."""
    return [
        types.CodeAction(
            title=title.format(id=entry.id),
            kind=types.CodeActionKind.QuickFix,
            diagnostics=diagnostics or None,
            command=types.Command(
                title=title.format(id=entry.id),
                command=GRADUATE,
                arguments=[_arguments(uri, entry, route)],
            ),
        )
        for route, title in _ROUTES
    ]


def _arguments(uri: str, entry: Entry, route: str) -> dict[str, Any]:
    arguments: dict[str, Any] = {"uri": uri, "id": entry.id, "route": route}
    if route == "skill":
        from stet_lsp.trajectory.skills import propose_gated_name

        arguments["proposedName"] = propose_gated_name(entry.text)
    return arguments


def lenses_for(uri: str, entry: Entry, where: types.Range) -> list[types.CodeLens]:
    """The sheet's per-entry lenses: graduate, propose skill, discard."""
    titles = {"trajectory": "graduate", "skill": "propose skill", "discard": "discard"}
    return [
        types.CodeLens(
            range=where,
            command=types.Command(
                title=titles[route], command=GRADUATE, arguments=[_arguments(uri, entry, route)]
            ),
        )
        for route, _ in _ROUTES
    ]


class Graduation(Feature):
    """The review document's line actions; the routes' actions on entries are offered by the
    features that show entries (entries.py, sheet_file.py) through `actions_for`."""

    name = "graduation"

    def __init__(self, server: StetServer) -> None:
        super().__init__(server)
        server.write_command(GRADUATE)(answering(self.graduate))
        server.command(PROPOSE)(answering(self.proposal))
        server.command(REVIEW)(answering(self.review))
        server.write_command(APPLY)(answering(self.apply))

    async def graduate(self, *arguments: Any) -> dict[str, Any]:
        args = argument(arguments)
        session = await self.server.session_of(field(args, "uri", str, None))
        entry_id = field(args, "id", str)
        route = field(args, "route", str, choices=[name for name, _ in _ROUTES])
        skill = field(args, "skill", str, None)
        text = field(args, "text", str, None)
        offered = field(args, "proposedName", str, None)
        recreate = field(args, "recreate", bool, False)
        settings = self.server.settings

        def decide(sheet: StyleSheet) -> dict[str, Any]:
            # in the worker: heavy
            from stet_lsp.trajectory.graduation import graduate, proposed_name, sheet_secrets

            config = settings.gate_config(sheet.target.root)
            chosen = skill
            if skill is not None and skill == offered and text is None:
                # The action's proposal, accepted as offered: proposed again with the
                # repository's gate (the action's was made without it, and a value it
                # redacts must not reach the skill's folder name).
                known = sheet_secrets(sheet, config)
                chosen = proposed_name(sheet.get(entry_id).text, config, known)
            return graduate(
                sheet, entry_id, route, chosen, text, gate_config=config, recreate=recreate
            )

        def mark(sheet: StyleSheet) -> None:
            """The entry's new status alone, refused as `graduate` refuses the request."""
            from stet_lsp.trajectory.graduation import STATUS_OF, checked_decision

            entry, chosen, _ = checked_decision(sheet, entry_id, route, skill, text)
            sheet.set_status(entry.id, STATUS_OF[chosen])

        staged = _staged(await self.server.off_loop(session.target), mark)
        result: dict[str, Any] = await self.server.write_sheet(session, decide, staged)
        self.server.refresh(outside=True)
        self.server.trajectories_changed(session.root)  # the decision is in the working one
        return result

    async def proposal(self, *arguments: Any) -> dict[str, Any]:
        args = argument(arguments)
        session = await self.server.session_of(field(args, "uri", str, None))
        entry_id = field(args, "id", str)
        settings = self.server.settings

        def propose() -> dict[str, Any]:
            from stet_lsp.trajectory.graduation import skill_proposal  # in the worker: heavy

            config = settings.gate_config(session.root)
            return skill_proposal(session.sheet(), entry_id, gate_config=config)

        proposed: dict[str, Any] = await self.server.off_loop(propose)
        return proposed

    async def review(self, *arguments: Any) -> dict[str, Any]:
        args = argument(arguments)
        session = await self.server.session_of(field(args, "uri", str, None))
        target = await self.server.off_loop(session.target)
        settings = self.server.settings
        path, count = await self.server.off_loop(_write_review, target, settings)
        uri = from_fs_path(str(path)) or ""
        shown = await self.server.show_document(uri)
        return {"uri": uri, "shown": shown, "entries": count}

    async def apply(self, *arguments: Any) -> dict[str, Any]:
        """Accept the review's line `line` (0-based), or every line with `all`."""
        args = argument(arguments)
        document = field(args, "uri", str)
        every = field(args, "all", bool, False)
        recreate = field(args, "recreate", bool, False)
        line = None if every else field(args, "line", int, minimum=0)
        state = self.server.documents.get(document)
        session = await self.server.session_of(document)
        if state is None:
            raise StetError("open the review document to accept its proposals")
        if line is not None:
            _check_proposal_line(state, line)
        numbers = None if line is None else {line + 1}
        text = state.text
        settings = self.server.settings

        def accept(sheet: StyleSheet) -> list[dict[str, Any]]:
            from stet_lsp.trajectory.graduation import apply_review, checked_only

            config = settings.gate_config(sheet.target.root)
            checked = checked_only(text, numbers)
            return apply_review(sheet, checked, gate_config=config, recreate=recreate)

        def mark(sheet: StyleSheet) -> None:
            """The checked entries' new statuses alone, refused as `apply_review` refuses."""
            from stet_lsp.trajectory.graduation import STATUS_OF, checked_only, checked_review

            checked = checked_only(text, numbers)
            for row in checked_review(sheet, checked, recreate=recreate):
                sheet.set_status(row.entry_id, STATUS_OF[row.route])

        target = await self.server.off_loop(session.target)
        results: list[dict[str, Any]] = await self.server.write_sheet(
            session, accept, _staged(target, mark)
        )
        await self.server.off_loop(_write_review, target, settings)  # the accepted entries leave it
        self.server.refresh(outside=True)
        self.server.trajectories_changed(session.root)
        return {"results": results}

    def code_actions(
        self, state: DocumentState, params: types.CodeActionParams
    ) -> list[types.CodeAction]:
        if not _is_review(state):
            return []
        from stet_lsp.trajectory.graduation import parse_review

        try:
            _, lines = parse_review(state.text)
        except StetError:  # a line being typed: no actions until it reads again
            return []
        first, last = params.range.start.line + 1, params.range.end.line + 1
        actions = [
            _apply_action(
                f"Accept the proposal for entry {line.entry_id}",
                {"uri": state.uri, "line": line.line - 1},
            )
            for line in lines
            if first <= line.line <= last
        ]
        if lines:
            actions.append(_apply_action("Accept every proposal", {"uri": state.uri, "all": True}))
        return actions


def _check_proposal_line(state: DocumentState, line: int) -> None:
    """Refuse a 0-based `line` the review does not hold (one that holds no entry's proposal,
    `checked_only` refuses)."""
    count = len(state.lines)
    if line >= count:
        raise JsonRpcInvalidParams(
            f"argument 'line' is 0-based, and the review holds lines 0 to {count - 1}, not {line}"
        )


def _staged(target: Target, mark: Callable[[StyleSheet], None]) -> Staged:
    """Graduation into a buffer: `mark` sets the new statuses (nothing else is written); an
    entry whose graduation did not happen (still open where the graduation stopped) is set
    back to open."""

    def undo(changed: str, reached: str) -> str:
        from stet_lsp.core.sheet import StyleSheet
        from stet_lsp.core.sheet_format import SheetDocument

        done = {entry.id: entry.status for entry in SheetDocument.parse(reached).entries()}
        sheet = StyleSheet(target, buffer=changed)
        for entry in sheet.entries():
            if entry.status != "open" and done.get(entry.id) == "open":
                sheet.set_status(entry.id, "open")
        return sheet.buffer or changed

    return Staged(mark, undo)


def _write_review(target: Target, settings: Settings) -> tuple[Path, int]:
    from stet_lsp.trajectory.graduation import write_review  # in the worker: heavy

    return write_review(target, settings.gate_config(target.root))


def _apply_action(title: str, arguments: dict[str, Any]) -> types.CodeAction:
    return types.CodeAction(
        title=title,
        kind=types.CodeActionKind.QuickFix,
        command=types.Command(title=title, command=APPLY, arguments=[arguments]),
    )


def _is_review(state: DocumentState) -> bool:
    if state.relative is None or not state.relative.startswith(".stet/cache/"):
        return False
    from stet_lsp.trajectory.graduation import REVIEWS

    return state.relative.startswith(REVIEWS.as_posix() + "/")
