"""The redaction gate in the editor: secrets in `.stet/` artifacts and in the style sheet.

A committed artifact holding a secret gets an error, the style sheet a warning (graduation
redacts it). A code action redacts the open document through a workspace edit, so the server
never writes under the user. Messages and data name the rule, never any part of the secret.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any

from lsprotocol import types

from stet_lsp.core.errors import StetError
from stet_lsp.gate import Finding, GateConfig, apply_redaction, load_config, scan_text
from stet_lsp.server.protocol import SOURCE, answering, argument, client_range, field
from stet_lsp.server.server import DocumentState, StetServer
from stet_lsp.server.settings import Settings

log = logging.getLogger("stet_lsp")

REDACT = "stet.gate.redact"
REDACT_TITLE = "Redact now"
_ARTIFACTS = ".stet/"
_SCRATCH = ".stet/cache/"
INLINE_LIMIT = 128 * 1024
"""Texts up to this many characters are scanned on the event loop (a few milliseconds);
longer ones in a worker thread."""
PROGRESS_AFTER = 1.0
"""A scan still running after this many seconds reports work-done progress."""


@dataclass(frozen=True)
class Scanned:
    text: str
    findings: tuple[Finding, ...]


class GateFindings:
    def __init__(self, server: StetServer) -> None:
        self.server = server
        self.scanned: dict[str, Scanned] = {}
        """By document URI: the findings of the last text scanned."""
        self.pending: dict[str, str] = {}
        """By document URI: the text a worker thread is scanning."""
        self._tasks: set[asyncio.Task[None]] = set()
        """Running background scans (the loop keeps only weak references to tasks)."""
        self._tokens = itertools.count(1)
        self._options: tuple[object, ...] = ()
        server.command(REDACT)(answering(self.redact))

    def forget(self, uri: str) -> None:
        self.scanned.pop(uri, None)

    # -- diagnostics -------------------------------------------------------------------

    def analyse(self, state: DocumentState) -> None:
        settings = self.server.settings
        options = (settings.gate_strict, settings.gate_env_names)
        if options != self._options:  # other settings find other secrets: scan again
            self._options = options
            self.scanned.clear()
        kind = _kind(state)
        if kind is None:
            return
        text = state.text
        known = self.scanned.get(state.uri)
        if known is not None and known.text == text:
            findings = known.findings
        elif len(text) > INLINE_LIMIT and self._scan_in_background(state, text):
            return  # the last diagnostics stay until the worker is done
        else:
            findings = self._scan(state, text)
            self.scanned[state.uri] = Scanned(text, findings)
        self.server.diagnostics.set(state.uri, "gate", self._diagnostics(state, kind, findings))

    def _diagnostics(
        self, state: DocumentState, kind: str, findings: tuple[Finding, ...]
    ) -> list[types.Diagnostic]:
        codec = self.server.workspace.position_codec
        return [
            types.Diagnostic(
                range=client_range(
                    codec, state.lines, item.line, item.column, item.end_line, item.end_column
                ),
                message=_message(kind, item),
                severity=_severity(kind, item),
                source=SOURCE,
                code=item.rule,
                data={"type": "secret", "rule": item.rule},
            )
            for item in findings
        ]

    # -- scanning ----------------------------------------------------------------------

    def _scan(self, state: DocumentState, text: str) -> tuple[Finding, ...]:
        """Runs in any thread; the gate's cache skips chunks it has already seen."""
        path = state.relative or (state.path.name if state.path is not None else None)
        return tuple(scan_text(text, config=_config(state, self.server.settings), path=path))

    def _scan_in_background(self, state: DocumentState, text: str) -> bool:
        """Start a worker-thread scan (unless one runs for this text); False without a loop."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return False
        if self.pending.get(state.uri) != text:
            self.pending[state.uri] = text
            task = loop.create_task(self._scan_later(state, text))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        return True

    async def _scan_later(self, state: DocumentState, text: str) -> None:
        try:
            findings = await self._scan_off_loop(state, text)
        except Exception:  # a failed scan must not stop the server
            log.exception("the redaction gate could not scan %s", state.uri)
            return
        finally:
            if self.pending.get(state.uri) == text:
                del self.pending[state.uri]
        current = self.server.documents.get(state.uri)
        if current is not None and current.text == text:
            self.scanned[state.uri] = Scanned(text, findings)
            self.server.refresh([current])

    async def _scan_off_loop(self, state: DocumentState, text: str) -> tuple[Finding, ...]:
        work = asyncio.get_running_loop().run_in_executor(None, self._scan, state, text)
        return await self._with_progress(work, state)

    async def _with_progress(
        self, work: Awaitable[tuple[Finding, ...]], state: DocumentState
    ) -> tuple[Finding, ...]:
        future = asyncio.ensure_future(work)
        try:
            return await asyncio.wait_for(asyncio.shield(future), PROGRESS_AFTER)
        except TimeoutError:
            pass
        token = await self._begin_progress(state)
        try:
            return await future
        finally:
            if token is not None:
                self.server.work_done_progress.end(token, types.WorkDoneProgressEnd())

    async def _begin_progress(self, state: DocumentState) -> str | None:
        if not self.server.supports("window", "work_done_progress"):
            return None
        token = f"stet-gate-{next(self._tokens)}"
        try:
            await self.server.work_done_progress.create_async(token)
        except Exception:  # a client that refuses progress still gets the diagnostics
            log.warning("the client refused a progress token", exc_info=True)
            return None
        self.server.work_done_progress.begin(
            token,
            types.WorkDoneProgressBegin(
                title="Stet: scanning for secrets", message=state.relative, cancellable=False
            ),
        )
        return token

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
        state = self.server.document(uri)
        version = state.version
        text = state.text
        known = self.scanned.get(uri)
        if known is not None and known.text == text:
            findings = known.findings
        else:
            findings = await self._scan_off_loop(state, text)
        if not findings:
            return {"redacted": 0, "applied": False}
        if self.server.documents.get(uri) is not state or state.text != text:
            raise StetError("the document changed while it was being scanned: try again")
        codec = self.server.workspace.position_codec
        result = apply_redaction(text, findings)
        edits: list[types.TextEdit | types.AnnotatedTextEdit | types.SnippetTextEdit] = [
            types.TextEdit(
                range=client_range(
                    codec,
                    state.lines,
                    item.finding.line,
                    item.finding.column,
                    item.finding.end_line,
                    item.finding.end_column,
                ),
                new_text=item.text,
            )
            for item in result.replacements
        ]
        answer = await self.server.workspace_apply_edit_async(
            types.ApplyWorkspaceEditParams(
                edit=self._edit(uri, version, edits), label="Redact secrets"
            )
        )
        return {"redacted": len(findings), "applied": bool(answer and answer.applied)}

    def _edit(
        self,
        uri: str,
        version: int | None,
        edits: list[types.TextEdit | types.AnnotatedTextEdit | types.SnippetTextEdit],
    ) -> types.WorkspaceEdit:
        """Versioned when the client can check it: an edit for a stale text is refused."""
        if version is None or not self.server.supports(
            "workspace", "workspace_edit", "document_changes"
        ):
            return types.WorkspaceEdit(changes={uri: list(edits)})  # type: ignore[arg-type]
        document = types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version)
        return types.WorkspaceEdit(
            document_changes=[types.TextDocumentEdit(text_document=document, edits=edits)]
        )


def _config(state: DocumentState, settings: Settings) -> GateConfig:
    """The repository's configuration; a broken allowlist flags more, never less."""
    fallback = GateConfig(strict=settings.gate_strict, env_names=settings.gate_env_names)
    if state.session is None:
        return fallback
    try:
        return load_config(
            state.session.root, strict=settings.gate_strict, env_names=settings.gate_env_names
        )
    except StetError as error:
        log.warning("%s: the gate runs without the allowlist", error)
        return fallback


def _kind(state: DocumentState) -> str | None:
    """The kind of document the gate watches: "sheet", "artifact" (committed), or None."""
    if state.is_sheet:
        return "sheet"
    relative = state.relative
    if relative is not None and relative.startswith(_ARTIFACTS):
        return None if relative.startswith(_SCRATCH) else "artifact"
    return None


def _message(kind: str, finding: Finding) -> str:
    personal = finding.replacement is not None
    what = "home directory" if personal else "secret"
    if kind == "sheet":
        outcome = f"will become {finding.replacement}" if personal else "will be redacted"
        return f"{what} ({finding.rule}) {outcome} at graduation"
    unredacted = "" if personal else "unredacted "
    return f"{unredacted}{what} ({finding.rule}) in a committed artifact: redact before committing"


def _severity(kind: str, finding: Finding) -> types.DiagnosticSeverity:
    if kind == "artifact":
        return types.DiagnosticSeverity.Error
    if finding.replacement is not None:
        return types.DiagnosticSeverity.Information
    return types.DiagnosticSeverity.Warning
