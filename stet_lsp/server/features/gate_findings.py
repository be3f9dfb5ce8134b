"""The redaction gate in the editor: secrets in `.stet/` artifacts and in the style sheet.

A committed artifact holding a secret gets an error, the style sheet a warning (graduation
redacts it). A code action redacts the open document through a workspace edit, so the server
never writes under the user. Messages and data name the rule, never any part of the secret.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from lsprotocol import types

from stet_lsp.core.errors import StetError
from stet_lsp.core.items import gate_items, gate_kind
from stet_lsp.server.documents import DocumentState
from stet_lsp.server.feature import Feature
from stet_lsp.server.positions import client_range, diagnostic
from stet_lsp.server.progress import Progress
from stet_lsp.server.requests import answering, argument, field
from stet_lsp.server.server import StetServer
from stet_lsp.server.settings import Settings
from stet_lsp.server.sheet_sync import APPLY_TIMEOUT_SECONDS, versioned_edit

if TYPE_CHECKING:  # the gate is imported on first use, so the server answers initialize sooner
    from stet_lsp.gate import Finding, GateConfig
    from stet_lsp.gate.redact import Replacement

log = logging.getLogger("stet_lsp")
GateKind = Literal["sheet", "artifact"]

REDACT = "stet.gate.redact"
REDACT_TITLE = "Redact now"
INLINE_LIMIT = 32 * 1024
"""Texts up to this many characters are scanned on the event loop (about a millisecond, 6 ms
for a sheet-like Markdown text, 0.5 s at worst for hostile text: the JSON of 32 KB of
`secret: "`); longer ones in a worker thread."""
CONFIG_SECONDS = 5.0
"""How old a repository's gate configuration may get before it is read again."""


@dataclass(frozen=True)
class Scanned:
    key: tuple[int, int]
    """The document's revision and line count when it was scanned (a large document's text
    is not kept a second time to tell whether it changed)."""
    findings: tuple[Finding, ...]


class GateFindings(Feature):
    name = "gate"

    def __init__(self, server: StetServer) -> None:
        super().__init__(server)
        self.scanned: dict[str, Scanned] = {}
        """By document URI: the findings of the last text scanned."""
        self.pending: set[str] = set()
        """The documents a worker thread is scanning."""
        self.configs: dict[Path | None, tuple[float, GateConfig]] = {}
        """By repository root: when its configuration was read, and the configuration."""
        self.reading: set[Path | None] = set()
        """By document URI: the text a worker thread is scanning."""
        self._options: tuple[object, ...] = ()
        server.write_command(REDACT)(answering(self.redact))

    def forget(self, uri: str) -> None:
        self.scanned.pop(uri, None)

    def forgotten(self, root: Path) -> None:
        self.configs.pop(root, None)

    # -- diagnostics -------------------------------------------------------------------

    def analyse(self, state: DocumentState) -> None:
        settings = self.server.settings
        options = (settings.gate_strict, settings.gate_env_names)
        if options != self._options:  # other settings find other secrets: scan again
            self._options = options
            self.scanned.clear()
            self.configs.clear()
        kind = _kind(state)
        if kind is None:
            return
        key = _key(state)
        known = self.scanned.get(state.uri)
        if known is not None and known.key == key:
            findings = known.findings
        elif _size(state) > INLINE_LIMIT and self._scan_in_background(state):
            return  # the last diagnostics stay until the worker is done
        else:
            findings = self._scan(state, state.text)
            self.scanned[state.uri] = Scanned(key, findings)
        self.server.diagnostics.set(state.uri, "gate", self._diagnostics(state, kind, findings))

    def _diagnostics(
        self, state: DocumentState, kind: GateKind, findings: tuple[Finding, ...]
    ) -> list[types.Diagnostic]:
        codec = self.server.workspace.position_codec
        return [diagnostic(codec, state.lines, item) for item in gate_items(kind, findings)]

    # -- scanning ----------------------------------------------------------------------

    def _scan(self, state: DocumentState, text: str) -> tuple[Finding, ...]:
        return _scan(text, self._config(state), _path_of(state))

    def _config(self, state: DocumentState) -> GateConfig:
        """The repository's gate configuration, read once and then again in a worker thread
        every few seconds (an allowlist edited outside the editor is taken up)."""
        settings = self.server.settings
        root = state.session.root if state.session is not None else None
        known = self.configs.get(root)
        if known is None:
            known = self.configs[root] = (time.monotonic(), _config(root, settings))
        elif time.monotonic() - known[0] > CONFIG_SECONDS and root not in self.reading:
            self.reading.add(root)
            self.server.spawn(self._read_config(root, settings), "reading the gate allowlist")
        return known[1]

    async def _read_config(self, root: Path | None, settings: Settings) -> None:
        try:
            config = await self.server.off_loop(_config, root, settings)
        finally:
            self.reading.discard(root)
        previous = self.configs.get(root)
        self.configs[root] = (time.monotonic(), config)
        if previous is not None and previous[1] != config:
            self.scanned.clear()
            self.server.refresh(outside=True)

    def _scan_in_background(self, state: DocumentState) -> bool:
        """Scan in a worker thread, one scan per document at a time: a newer text waits for
        the running scan and is scanned next. False without a loop."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return False
        if state.uri not in self.pending:
            self.pending.add(state.uri)
            self.server.spawn(self._scan_later(state), f"scanning {state.uri}")
        return True

    async def _scan_later(self, state: DocumentState) -> None:
        key = _key(state)
        try:
            findings = await self._scan_off_loop(state, list(state.lines))
        except Exception:  # a failed scan must not stop the server
            log.exception("the redaction gate could not scan %s", state.uri)
            return
        finally:
            self.pending.discard(state.uri)
        current = self.server.documents.get(state.uri)
        if current is None:
            return
        self.scanned[state.uri] = Scanned(key, findings)
        # Shows these findings, or scans the text typed meanwhile.
        self.server.refresh([current], outside=True)

    async def _scan_off_loop(self, state: DocumentState, lines: list[str]) -> tuple[Finding, ...]:
        """Scan a snapshot of the document's lines (joined in the worker, not on the loop)."""
        work = self.server.off_loop(_scan_lines, lines, self._config(state), _path_of(state))
        progress = Progress(self.server, "Stet: scanning for secrets", state.relative)
        return await progress.run(work)

    # -- redacting ---------------------------------------------------------------------

    def code_actions(
        self, state: DocumentState, params: types.CodeActionParams
    ) -> list[types.CodeAction]:
        known = self.scanned.get(state.uri)
        if _kind(state) is None or known is None or not known.findings:
            return []
        first, last = params.range.start.line, params.range.end.line
        if not any(f.line <= last and f.end_line >= first for f in known.findings):
            return []
        related = [
            item
            for item in params.context.diagnostics
            if isinstance(item.data, dict) and item.data.get("type") == "secret"
        ]
        count = len(known.findings)
        title = f"{REDACT_TITLE}: {count} secret{'s' if count != 1 else ''} in this file"
        return [
            types.CodeAction(
                title=title,
                kind=types.CodeActionKind.QuickFix,
                diagnostics=related or None,
                is_preferred=True,
                command=types.Command(title=title, command=REDACT, arguments=[{"uri": state.uri}]),
            )
        ]

    async def redact(self, *arguments: Any) -> dict[str, Any]:
        """Replace every finding of the open document by its marker, as one workspace edit."""
        uri = field(argument(arguments), "uri", str)
        state = await self.server.document(uri)
        version, key, lines = state.version, _key(state), list(state.lines)
        known = self.scanned.get(uri)
        if known is not None and known.key == key:
            findings = known.findings
        else:
            findings = await self._scan_off_loop(state, lines)
        if not findings:
            return {"redacted": 0, "applied": False}
        if self.server.documents.get(uri) is not state:
            raise StetError("the document was closed while it was being scanned; nothing changed")
        if _key(state) != key:
            raise StetError("the document changed while it was being scanned: try again")
        text = state.text
        codec = self.server.workspace.position_codec
        from stet_lsp.gate import apply_redaction

        result = apply_redaction(text, findings)
        edits: list[types.TextEdit | types.AnnotatedTextEdit | types.SnippetTextEdit] = [
            types.TextEdit(
                range=client_range(codec, state.lines, line, column, end_line, end_column),
                new_text=new_text,
            )
            for line, column, end_line, end_column, new_text in _line_edits(
                text, result.replacements
            )
        ]
        answer = await self.server.from_client(
            self.server.workspace_apply_edit_async(
                types.ApplyWorkspaceEditParams(
                    edit=versioned_edit(self.server, state, edits, version), label="Redact secrets"
                )
            ),
            "workspace/applyEdit",
            APPLY_TIMEOUT_SECONDS,
        )
        return {"redacted": len(findings), "applied": bool(answer and answer.applied)}


def _line_edits(text: str, replacements: list[Replacement]) -> list[tuple[int, int, int, int, str]]:
    """The replacements (in the text's order) as edits (line, column, end line, end column,
    new text), those that share a line as one: an editor takes each edit as a change of its
    own (Neovim diffs the whole line for each), so a line holding hundreds of secrets was
    hundreds of changes of that line, seconds in Neovim."""
    edits: list[tuple[int, int, int, int, str]] = []
    last_end = 0
    for item in replacements:
        found = item.finding
        if edits and edits[-1][2] == found.line:
            line, column, _, _, new_text = edits[-1]
            between = text[last_end : found.offset]
            edits[-1] = (
                line,
                column,
                found.end_line,
                found.end_column,
                new_text + between + item.text,
            )
        else:
            edits.append((found.line, found.column, found.end_line, found.end_column, item.text))
        last_end = found.end_offset
    return edits


def _key(state: DocumentState) -> tuple[int, int]:
    return state.revision, len(state.lines)


def _size(state: DocumentState) -> int:
    return sum(map(len, state.lines))


def _scan_lines(lines: list[str], config: GateConfig, path: str | None) -> tuple[Finding, ...]:
    return _scan("\n".join(lines), config, path)


def _scan(text: str, config: GateConfig, path: str | None) -> tuple[Finding, ...]:
    """Runs in any thread; the gate's cache skips chunks it has already seen."""
    from stet_lsp.gate import scan_text

    return tuple(scan_text(text, config=config, path=path))


def _path_of(state: DocumentState) -> str | None:
    return state.relative or (state.path.name if state.path is not None else None)


def _config(root: Path | None, settings: Settings) -> GateConfig:
    from stet_lsp.check import gate_config
    from stet_lsp.gate import GateConfig

    if root is None:
        return GateConfig(strict=settings.gate_strict, env_names=settings.gate_env_names)
    return gate_config(root, settings.gate_strict, settings.gate_env_names)


def _kind(state: DocumentState) -> GateKind | None:
    """The kind of document the gate watches: "sheet", "artifact" (committed), or None."""
    return gate_kind(state.relative) if state.relative is not None else None
