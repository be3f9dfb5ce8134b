"""The redaction gate in the editor: diagnostics that never echo a secret, and 'Redact now'."""

from __future__ import annotations

import asyncio
import json
import random
import string
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import pytest_lsp
from lsp_harness import (
    CLIENTS,
    SERVER,
    buffers,
    diagnostics,
    edit_range,
    eventually,
    execute,
    open_file,
    start,
    text_edits,
    uri,
)
from lsprotocol import types
from pytest_lsp import LanguageClient

from stet_lsp.core.sheet import StyleSheet
from stet_lsp.core.targets import resolve_target
from stet_lsp.server import progress as progress_module
from stet_lsp.server.features.gate_findings import INLINE_LIMIT, REDACT
from stet_lsp.server.progress import Progress


@pytest_lsp.fixture(config=SERVER, params=CLIENTS)
async def client(request: pytest.FixtureRequest, lsp_client: LanguageClient):  # type: ignore[no-untyped-def]
    await start(lsp_client, request.param)
    yield
    await lsp_client.shutdown_session()


def github_token() -> str:
    """Built at run time: no credential-shaped literal lives in the source."""
    alphabet = string.ascii_letters + string.digits
    return "ghp_" + "".join(random.SystemRandom().choice(alphabet) for _ in range(36))


def secrets_of(found: list[types.Diagnostic]) -> list[types.Diagnostic]:
    return [d for d in found if isinstance(d.data, dict) and d.data.get("type") == "secret"]


def assert_no_part_of(secret: str, diagnostic: types.Diagnostic) -> None:
    shown = json.dumps(
        {"message": diagnostic.message, "code": diagnostic.code, "data": diagnostic.data}
    )
    body = secret[4:]
    assert all(body[i : i + 6] not in shown for i in range(len(body) - 5))


def artifact(root: Path, content: str) -> Path:
    path = root / ".stet" / "trajectories" / "x" / "events.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content, encoding="utf-8")
    return path


async def gate_diagnostics(client: LanguageClient, document: str) -> list[types.Diagnostic]:
    return secrets_of(await diagnostics(client, document))


async def test_a_secret_in_the_style_sheet_is_a_warning_that_never_shows_it(
    client: LanguageClient, root: Path
) -> None:
    token = github_token()
    target = resolve_target(root)
    StyleSheet(target).add(f"The CI uses {token} for the release job.", kind="note")
    document = open_file(client, target.sheet_path, "markdown")
    [diagnostic] = await eventually(lambda: gate_diagnostics(client, document))
    assert diagnostic.severity == types.DiagnosticSeverity.Warning
    assert (diagnostic.source, diagnostic.code) == ("stet", "github-token")
    assert diagnostic.message == "secret (github-token) will be redacted at graduation"
    assert diagnostic.data == {"type": "secret", "rule": "github-token"}
    assert_no_part_of(token, diagnostic)
    line = target.sheet_path.read_text("utf-8").splitlines()[diagnostic.range.start.line]
    assert line[diagnostic.range.start.character : diagnostic.range.end.character] == token


def test_a_secret_typed_under_a_version_sent_twice_is_found(root: Path) -> None:
    """A client that sends one version number for two changes of the same line count: the
    second change is scanned, where the findings of the first text were kept for it (a
    token typed then showed no warning)."""
    import time

    from lsp_pipe import PipeServer

    target = resolve_target(root)
    StyleSheet(target).add("The release job needs a token.", kind="note")
    text = target.sheet_path.read_text("utf-8")
    line = text.splitlines().index(
        next(line for line in text.splitlines() if "release job" in line)
    )
    server = PipeServer().initialize({}, [uri(root)])
    try:
        document = server.open(uri(target.sheet_path), text, "markdown")

        def change(new_text: str) -> None:
            params = {
                "textDocument": {"uri": document, "version": 2},
                "contentChanges": [
                    {
                        "range": {
                            "start": {"line": line, "character": 0},
                            "end": {"line": line + 1, "character": 0},
                        },
                        "text": new_text + "\n",
                    }
                ],
            }
            server.send({"method": "textDocument/didChange", "params": params})

        def codes(request_id: int) -> list[str]:
            params = {"textDocument": {"uri": document}}
            server.send({"id": request_id, "method": "textDocument/diagnostic", "params": params})
            return [item["code"] for item in server.answer(request_id)["result"]["items"]]

        change("- The release job needs no token.")
        assert "github-token" not in codes(2)
        change(f"- The release job uses {github_token()}.")
        deadline = time.monotonic() + 10
        request_id = 3
        while "github-token" not in codes(request_id):
            assert time.monotonic() < deadline, "the token typed was never found"
            request_id += 1
            time.sleep(0.1)
    finally:
        server.close()


async def test_a_broken_allowlist_flags_more_never_less(client: LanguageClient, root: Path) -> None:
    (root / ".stet").mkdir(exist_ok=True)
    (root / ".stet" / "gate-allowlist.toml").write_text("unknown = 1\n", encoding="utf-8")
    path = artifact(root, json.dumps({"output": github_token()}) + "\n")
    document = open_file(client, path, "json")
    [diagnostic] = await eventually(lambda: gate_diagnostics(client, document))
    assert diagnostic.code == "github-token"


async def test_redact_now_replaces_the_secret_through_an_edit(
    client: LanguageClient, root: Path
) -> None:
    token = github_token()
    path = artifact(root, json.dumps({"type": "tool", "output": f"export GH={token}"}) + "\n")
    document = open_file(client, path, "json")
    [diagnostic] = await eventually(lambda: gate_diagnostics(client, document))
    assert diagnostic.severity == types.DiagnosticSeverity.Error
    assert diagnostic.message == (
        "unredacted secret (github-token) in a committed artifact: redact before committing"
    )
    assert_no_part_of(token, diagnostic)
    end = types.Position(line=1, character=0)
    edit_range(client, document, types.Range(start=end, end=end), '{"type": "more"}\n')

    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=document),
            range=diagnostic.range,
            context=types.CodeActionContext(diagnostics=[diagnostic]),
        )
    )
    [redact] = [a for a in actions or [] if a.title.startswith("Redact now")]
    assert isinstance(redact, types.CodeAction) and redact.command is not None
    assert redact.command.command == REDACT
    answer = await execute(client, REDACT, **redact.command.arguments[0])  # type: ignore[index]
    assert answer == {"redacted": 1, "applied": True}
    [edit] = client.applied_edits  # type: ignore[attr-defined]
    for change in edit.document_changes or []:
        assert change.text_document.version == 2  # type: ignore[union-attr]
    [text_edit] = text_edits(edit, document)
    assert text_edit.new_text == "[REDACTED:github-token#1]"
    assert text_edit.range == diagnostic.range
    assert path.read_text("utf-8").count(token) == 1  # the server never wrote the file


async def test_redact_now_sends_one_edit_a_line_however_many_secrets_it_holds(
    client: LanguageClient, root: Path
) -> None:
    """Each edit is a change of its own to an editor (Neovim diffs the whole line for each):
    a line of hundreds of secrets took seconds as an edit a secret."""
    tokens = [github_token() for _ in range(5)]
    lines = [
        json.dumps({"type": "tool", "output": f"é {tokens[0]} and {tokens[1]}, {tokens[2]}"}),
        json.dumps({"type": "text", "text": "nothing here"}),
        json.dumps({"type": "tool", "output": f"{tokens[3]} {tokens[4]}"}),
    ]
    text = "\n".join(lines) + "\n"
    path = artifact(root, text)
    document = open_file(client, path, "json")
    found = await eventually(lambda: gate_diagnostics(client, document))
    assert len(found) == 5
    answer = await execute(client, REDACT, uri=document)
    assert answer == {"redacted": 5, "applied": True}
    [edit] = client.applied_edits  # type: ignore[attr-defined]
    first, last = text_edits(edit, document)
    assert (first.range.start.line, first.range.end.line) == (0, 0)
    assert (last.range.start.line, last.range.end.line) == (2, 2)
    redacted = buffers(client)[document].text
    assert redacted.splitlines() == [
        json.dumps({"type": "tool", "output": "é [REDACTED:github-token#1] and "
                    "[REDACTED:github-token#2], [REDACTED:github-token#3]"}),
        lines[1],
        json.dumps({"type": "tool", "output": "[REDACTED:github-token#4] "
                    "[REDACTED:github-token#5]"}),
    ]  # fmt: skip

    async def cleared() -> bool:
        return not await gate_diagnostics(client, document)

    await eventually(cleared)


async def test_a_clean_artifact_and_files_outside_stet_get_no_gate_diagnostics(
    client: LanguageClient, root: Path
) -> None:
    clean = artifact(root, json.dumps({"type": "message", "text": "tests pass"}) + "\n")
    source = root / "src" / "settings.py"
    source.parent.mkdir(parents=True, exist_ok=True)
    source.write_text(f'TOKEN = "{github_token()}"\n# stet: rotate this\n', encoding="utf-8")
    clean_document = open_file(client, clean, "json")
    source_document = open_file(client, source)
    # The margin note proves the source file was analysed: the gate simply stays silent there.
    await eventually(lambda: diagnostics(client, source_document))
    assert await gate_diagnostics(client, source_document) == []
    assert await gate_diagnostics(client, clean_document) == []


async def test_a_large_artifact_is_scanned_off_the_event_loop(
    client: LanguageClient, root: Path
) -> None:
    token = github_token()
    filler = json.dumps({"type": "message", "text": "nothing to see " * 40}) + "\n"
    lines = [filler] * (INLINE_LIMIT // len(filler) + 10)
    lines.append(json.dumps({"type": "tool", "output": token}) + "\n")
    document = open_file(client, artifact(root, "".join(lines)), "json")
    [diagnostic] = await eventually(lambda: gate_diagnostics(client, document), timeout=20)
    assert diagnostic.range.start.line == len(lines) - 1
    assert_no_part_of(token, diagnostic)


async def test_work_longer_than_the_threshold_reports_progress(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[tuple[str, Any]] = []

    class WorkDone:
        async def create_async(self, token: str) -> None:
            calls.append(("create", token))

        def begin(self, token: str, value: types.WorkDoneProgressBegin) -> None:
            calls.append(("begin", value.title))

        def report(self, token: str, value: types.WorkDoneProgressReport) -> None:
            calls.append(("report", value.message))

        def end(self, token: str, value: types.WorkDoneProgressEnd) -> None:
            calls.append(("end", token))

    server = SimpleNamespace(supports=lambda *path: True, work_done_progress=WorkDone())
    monkeypatch.setattr(progress_module, "PROGRESS_AFTER", 0.01)

    async def slow(progress: Progress) -> tuple[()]:
        await asyncio.sleep(0.1)
        progress.phase("halfway")
        await asyncio.sleep(0.05)
        return ()

    progress = Progress(server, "Stet: scanning for secrets")  # type: ignore[arg-type]
    assert await progress.run(slow(progress)) == ()
    assert [name for name, _ in calls] == ["create", "begin", "report", "end"]
    assert ("report", "halfway") in calls

    calls.clear()
    monkeypatch.setattr(progress_module, "PROGRESS_AFTER", 5.0)
    progress = Progress(server, "Stet: scanning for secrets")  # type: ignore[arg-type]
    assert await progress.run(slow(progress)) == ()
    assert calls == []


async def test_work_answers_though_the_client_never_answers_the_progress_token(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A client that never answers `window/workDoneProgress/create` still gets the work's
    answer as soon as the work ends, and no progress is begun on that token."""
    calls: list[str] = []

    class Silent:
        async def create_async(self, token: str) -> None:
            calls.append("create")
            await asyncio.Event().wait()

        def begin(self, token: str, value: types.WorkDoneProgressBegin) -> None:
            calls.append("begin")

        def report(self, token: str, value: types.WorkDoneProgressReport) -> None:
            calls.append("report")

        def end(self, token: str, value: types.WorkDoneProgressEnd) -> None:
            calls.append("end")

    server = SimpleNamespace(supports=lambda *path: True, work_done_progress=Silent())
    monkeypatch.setattr(progress_module, "PROGRESS_AFTER", 0.01)

    async def slow() -> str:
        await asyncio.sleep(0.1)
        return "done"

    progress = Progress(server, "Stet: scanning for secrets")  # type: ignore[arg-type]
    assert await asyncio.wait_for(progress.run(slow()), 5) == "done"
    assert calls == ["create"]
