"""Malformed input at the protocol level, encodings, settings and workspaces."""

from __future__ import annotations

import json
import logging
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import pytest_lsp
from lsp_harness import SERVER, diagnostics, eventually, execute, open_file, start, uri
from lsp_pipe import PipeServer
from lsprotocol import types
from pytest_lsp import LanguageClient
from repos import clone_linking_sheets_to, make_repo

if TYPE_CHECKING:
    from stet_lsp.core.sheet import StyleSheet


def test_malformed_messages_get_errors_and_the_server_keeps_serving(
    raw: PipeServer, root: Path
) -> None:
    document = uri(root / "src" / "app.py")
    raw.send_bytes(b"{this is not json")
    raw.send({"id": 2, "method": "textDocument/hover", "params": {"textDocument": {}}})
    assert raw.answer(2)["error"]["code"] == -32602
    raw.send({"id": 3, "method": "textDocument/codeAction", "params": "nonsense"})
    assert "error" in raw.answer(3)
    raw.send(
        {
            "id": 4,
            "method": "workspace/executeCommand",
            "params": {"command": "stet.note.add", "arguments": [1, 2, 3]},
        }
    )
    assert raw.answer(4)["error"]["code"] == -32602
    raw.send(
        {
            "id": 5,
            "method": "workspace/executeCommand",
            "params": {"command": "stet.note.add", "arguments": [{"uri": document, "text": None}]},
        }
    )
    assert raw.answer(5)["error"]["code"] == -32602
    raw.send({"id": 6, "method": "stet/unknownMethod", "params": {}})
    assert raw.answer(6)["error"]["code"] == -32601
    # Unknown documents and positions past the end.
    raw.send(
        {
            "id": 7,
            "method": "textDocument/hover",
            "params": {
                "textDocument": {"uri": "file:///not/open.py"},
                "position": {"line": 0, "character": 0},
            },
        }
    )
    assert raw.answer(7)["result"] is None
    raw.open(document, "x = 1\n")
    raw.send(
        {
            "id": 8,
            "method": "textDocument/hover",
            "params": {"textDocument": {"uri": document}, "position": {"line": 99, "character": 0}},
        }
    )
    assert raw.answer(8)["error"]["code"] == -32602
    raw.send(
        {
            "id": 9,
            "method": "textDocument/codeAction",
            "params": {
                "textDocument": {"uri": document},
                "range": {
                    "start": {"line": 50, "character": 0},
                    "end": {"line": 60, "character": 0},
                },
                "context": {"diagnostics": []},
            },
        }
    )
    assert raw.answer(9)["error"]["code"] == -32602
    # Text that was not valid UTF-8 on disk arrives with replacement characters: still served.
    raw.send(
        {
            "method": "textDocument/didChange",
            "params": {
                "textDocument": {"uri": document, "version": 2},
                "contentChanges": [{"text": "caf\udce9 = 1  # stet: note\n"}],
            },
        }
    )
    raw.send(
        {
            "id": 10,
            "method": "workspace/executeCommand",
            "params": {"command": "stet.note.list", "arguments": [{"uri": document}]},
        }
    )
    assert raw.answer(10)["result"]["entries"] == []
    raw.send({"id": 11, "method": "shutdown"})
    assert raw.answer(11)["result"] is None


def test_non_utf8_bytes_in_a_frame_do_not_kill_the_server(raw: PipeServer) -> None:
    raw.send_bytes(
        b'{"jsonrpc": "2.0", "id": 2, "method": "textDocument/hover", "params": "\xff\xfe"}'
    )
    raw.send({"id": 3, "method": "shutdown"})
    assert raw.answer(3)["result"] is None


def test_invalid_utf8_is_answered_with_its_id(raw: PipeServer) -> None:
    raw.send_bytes(b'{"jsonrpc": "2.0", "id": 2, "method": "shutdown", "params": {"x": "\xff"}}')
    answer = raw.answer(2)
    assert answer["error"]["code"] == -32700 and "UTF-8" in answer["error"]["message"]


def test_a_content_length_that_lies_does_not_stop_the_server(raw: PipeServer) -> None:
    """A length too large to read is refused unread; one a few bytes short or long costs the
    message it frames (and, when long, the next), and the reading falls back in step at the
    next header."""
    stdin = raw.process.stdin
    assert stdin is not None
    hover = {
        "method": "textDocument/hover",
        "params": {
            "textDocument": {"uri": "file:///x.py"},
            "position": {"line": 0, "character": 0},
        },
    }
    stdin.write(b"Content-Length: 99999999999999999999\r\n\r\n")
    stdin.write(b"Content-Length: 1000000000000\r\n\r\n")
    stdin.write(b"Content-Length: %s\r\n\r\n" % (b"9" * 5_000))  # past what int() reads
    raw.send({"id": 2, **hover})
    assert raw.answer(2)["result"] is None
    for request_id, wrong in ((3, -5), (5, 30)):
        body = json.dumps({"jsonrpc": "2.0", "id": request_id, **hover}).encode()
        stdin.write(b"Content-Length: %d\r\n\r\n" % (len(body) + wrong) + body)
        stdin.flush()
        raw.send({"id": request_id + 1, **hover})
        for later in range(10, 13):
            raw.send({"id": request_id * 10 + later, **hover})
        for later in range(10, 13):
            assert raw.answer(request_id * 10 + later)["result"] is None


def shut_down(server: PipeServer, request_id: int) -> None:
    """Ask the server to shut down, then to exit, and wait for it to end."""
    server.send({"id": request_id, "method": "shutdown"})
    assert server.answer(request_id)["result"] is None
    server.send({"method": "exit"})
    server.process.wait(timeout=30)


def test_a_refused_command_is_one_line_of_the_log_without_a_traceback(
    root: Path, tmp_path: Path
) -> None:
    """A refusal (a mistyped argument, no such trajectory) is an answer the user reads, not
    a failure of the server: its line of the client's log says what was refused, with no
    traceback, and none goes to standard error (which editors show as an error)."""
    log = tmp_path / "stderr.log"
    with log.open("wb") as stderr:
        server = PipeServer(stderr=stderr).initialize()
    try:
        document = server.open(uri(root / "src" / "app.py"), "x = 1\n")

        def open_trajectory(request_id: int, **arguments: Any) -> int:
            params = {"command": "stet.trajectory.open", "arguments": [arguments]}
            server.send({"id": request_id, "method": "workspace/executeCommand", "params": params})
            code: int = server.answer(request_id)["error"]["code"]
            return code

        assert open_trajectory(2, uri=document, step="7") == -32602
        assert open_trajectory(3, uri=document, id="zzz") == -32803
        shut_down(server, 4)
    finally:
        server.close()
    written = log.read_text(encoding="utf-8")
    assert "Traceback" not in written and "stet.trajectory.open" not in written, written
    refusals = [line for line in server.logged if "stet.trajectory.open" in line]
    assert len(refusals) == 2, server.logged
    assert "must be a whole number" in refusals[0] and "zzz" in refusals[1]
    assert not any("Traceback" in line for line in server.logged)


def test_retention_refused_by_a_cloned_sheets_folder_is_one_line_of_the_log(
    tmp_path: Path,
) -> None:
    """A cloned repository whose sheets folder is a link (or whose .stet is a file) keeps
    retention out, as it keeps every write out: one warning saying why, where the log had
    an error with a traceback, as for a bug of the server."""
    outside = tmp_path / "outside"
    outside.mkdir()
    root = Path(clone_linking_sheets_to(tmp_path, outside).workdir).resolve()
    server = PipeServer().initialize({}, [uri(root)])
    try:
        server.open(uri(root / "README.md"), "hi\n", "markdown")
        deadline = time.monotonic() + 15
        while not any("retention" in line for line in server.logged):
            assert time.monotonic() < deadline, server.logged
            time.sleep(0.05)
    finally:
        server.close()
    [said] = [line for line in server.logged if "retention" in line]
    assert "symbolic link" in said and "Traceback" not in said, said


def test_a_repository_deleted_while_watched_is_one_line_of_the_log(root: Path) -> None:
    """A repository deleted (a worktree removed, a scratch clone) while the server polls it:
    the client's log says once that it cannot be checked, where every poll (three times a
    second) logged an error with a traceback for as long as the server ran."""
    import shutil

    server = PipeServer().initialize({}, [uri(root)])
    try:
        document = server.open(uri(root / "src" / "app.py"), "x = 1\n")
        params = {"textDocument": {"uri": document}, "position": {"line": 0, "character": 0}}
        server.send({"id": 2, "method": "textDocument/hover", "params": params})
        server.answer(2)  # the document is placed in its repository
        shutil.rmtree(root)
        # The first poll to meet the deleted repository logs it (a busy machine may take a
        # while to run it); then some ten polls more, which must not log it again.
        deadline = time.monotonic() + 15
        while not any("outside changes" in line for line in server.logged):
            assert time.monotonic() < deadline, server.logged
            time.sleep(0.05)
        time.sleep(3)
        server.send({"id": 3, "method": "textDocument/hover", "params": params})
        assert "error" not in server.answer(3)
    finally:
        server.close()
    said = [line for line in server.logged if "outside changes" in line]
    assert len(said) == 1, said
    assert "Traceback" not in said[0] and "HEAD" in said[0], said


def test_a_progress_token_the_client_refuses_is_one_line_of_the_log(
    root: Path, tmp_path: Path
) -> None:
    """A client that answers window/workDoneProgress/create with an error still gets the
    command's answer, and its log one line saying the token was refused, where it had a
    traceback, as for a bug of the server. The capstone runs past a second here because
    the working trajectory's lock is held meanwhile."""
    from test_server_trajectory_files import edit_session

    from stet_lsp.core.locking import file_lock
    from stet_lsp.core.targets import resolve_target
    from stet_lsp.trajectory.importing import import_transcript
    from stet_lsp.trajectory.store import working_folder

    import_transcript(resolve_target(root), edit_session(root, tmp_path))
    folder = working_folder(resolve_target(root))
    server = PipeServer()
    try:
        capabilities = {"window": {"workDoneProgress": True}}
        server.send(
            {
                "id": 1,
                "method": "initialize",
                "params": {
                    "capabilities": capabilities,
                    "workspaceFolders": [{"uri": uri(root), "name": root.name}],
                },
            }
        )
        assert "result" in server.answer(1)
        server.send({"method": "initialized", "params": {}})
        with file_lock(folder.path, root, "the working trajectory"):
            capstone = {"command": "stet.capstone", "arguments": [{"dryRun": True}]}
            server.send({"id": 2, "method": "workspace/executeCommand", "params": capstone})
            create = server.inbox.get(timeout=15)
            while create.get("method") != "window/workDoneProgress/create":
                create = server.inbox.get(timeout=15)
            refusal = {"code": -32601, "message": "no progress here"}
            server.send({"id": create["id"], "error": refusal})
            time.sleep(0.3)
        assert "result" in server.answer(2, timeout=30)
    finally:
        server.close()
    said = [line for line in server.logged if "progress token" in line]
    assert len(said) == 1 and "no progress here" in said[0], server.logged
    assert "Traceback" not in said[0], said[0]


def test_cancelling_a_request_answered_already_logs_nothing(root: Path, tmp_path: Path) -> None:
    """Editors cancel requests whose answer crossed the cancellation (VS Code did so 13 times
    in one session): pygls logged a warning for each, which editors showed as an error."""
    log = tmp_path / "stderr.log"
    with log.open("wb") as stderr:
        server = PipeServer(stderr=stderr).initialize()
    try:
        document = server.open(uri(root / "src" / "app.py"), "x = 1\n")
        params = {"textDocument": {"uri": document}, "position": {"line": 0, "character": 0}}
        server.send({"id": 2, "method": "textDocument/hover", "params": params})
        assert "error" not in server.answer(2)
        server.send({"method": "$/cancelRequest", "params": {"id": 2}})
        shut_down(server, 3)
    finally:
        server.close()
    written = log.read_text(encoding="utf-8")
    assert "Cancel" not in written and not any("Cancel" in line for line in server.logged)


def test_a_failure_that_is_no_refusal_keeps_its_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from concurrent.futures import Future

    from stet_lsp.server.requests import RequestFailed
    from stet_lsp.server.server import StetServer

    protocol = StetServer().protocol
    sent: list[Any] = []
    protocol._send_data = sent.append  # type: ignore[method-assign]
    failed: Future[Any] = Future()
    failed.set_exception(RuntimeError("a bug"))
    refused: Future[Any] = Future()
    refused.set_exception(RequestFailed("no trajectory 'zzz'"))
    with caplog.at_level(logging.INFO):
        protocol._send_handler_result(failed, msg_id=1)
        protocol._send_handler_result(refused, msg_id=2)
    assert [m.error.code for m in sent] == [-32603, -32803]
    (bug,) = [r for r in caplog.records if r.exc_info]
    assert isinstance(bug.exc_info[1], RuntimeError)
    assert any("no trajectory 'zzz'" in r.getMessage() for r in caplog.records)


def test_requests_before_initialize_are_refused_and_notifications_dropped(
    root: Path,
) -> None:
    """LSP: before `initialize`, a request gets ServerNotInitialized and a notification (but
    `exit`) is dropped; a document opened then is not taken for open afterwards (its
    requests waited for ever when a refresh before initialize failed)."""
    server = PipeServer()
    try:
        document = uri(root / "src" / "app.py")
        server.open(document, "x = 1  # stet: early\n")
        note = {"command": "stet.note.list", "arguments": [{"uri": document}]}
        server.send({"id": 2, "method": "workspace/executeCommand", "params": note})
        server.send({"id": 3, "method": "shutdown"})
        for request_id in (2, 3):
            error = server.answer(request_id)["error"]
            assert error["code"] == -32002 and "before initialize" in error["message"]
        server.initialize(folders=[uri(root)])
        position = {"textDocument": {"uri": document}, "position": {"line": 0, "character": 0}}
        server.send({"id": 4, "method": "textDocument/hover", "params": position})
        assert server.answer(4)["result"] is None
        server.send({"id": 5, "method": "shutdown"})
        assert server.answer(5)["result"] is None
    finally:
        server.close()


def test_a_write_is_not_cancelled_and_answers_with_its_result(root: Path) -> None:
    """A client's cancel right after a command that writes: the answer is the result (the
    entry is written once), not 'cancelled' over a write that went on. Reads still cancel."""
    server = PipeServer().initialize(folders=[uri(root)])
    try:
        for request_id in range(2, 7):
            add = {"command": "stet.note.add", "arguments": [{"text": f"Cancelled {request_id}"}]}
            server.send({"id": request_id, "method": "workspace/executeCommand", "params": add})
            server.send({"method": "$/cancelRequest", "params": {"id": request_id}})
        answers: dict[int, dict[str, Any]] = {}

        def every_answer(message: dict[str, Any]) -> bool:
            if "id" in message and "method" not in message:
                answers[message["id"]] = message
            return set(range(2, 7)) <= set(answers)

        server.wait_for(every_answer)  # in any order
        for request_id, answer in answers.items():
            assert answer["result"]["entry"]["text"] == f"Cancelled {request_id}", answer
        listing = {"command": "stet.note.list", "arguments": [{}]}
        server.send({"id": 7, "method": "workspace/executeCommand", "params": listing})
        texts = [entry["text"] for entry in server.answer(7)["result"]["entries"]]
        assert sorted(texts) == [f"Cancelled {n}" for n in range(2, 7)]
    finally:
        server.close()


def test_a_write_running_at_shutdown_answers_with_its_result_before_the_shutdown(
    root: Path,
) -> None:
    """`shutdown` while a command that writes waits for the sheet's lock (another process
    holds it): the write goes on, so its answer is its result, sent before the shutdown's,
    where shutdown answered it 'cancelled' and the entry was written all the same. Reads
    still cancel, and what comes after the shutdown request is refused."""
    from stet_lsp.core.sheet import StyleSheet
    from stet_lsp.core.targets import resolve_target

    sheet = StyleSheet(resolve_target(root))
    sheet.add("before")
    server = PipeServer().initialize(folders=[uri(root)])
    answers: list[dict[str, Any]] = []

    def every_answer(message: dict[str, Any]) -> bool:
        if "id" in message and "method" not in message:
            answers.append(message)
        return {2, 3, 4} <= {answer["id"] for answer in answers}

    try:
        hover = {"id": 4, "method": "textDocument/hover", "params": {}}
        _shutdown_while_a_note_waits(server, sheet, then=hover)
        server.wait_for(every_answer)
    finally:
        server.close()
    by_id = {answer["id"]: answer for answer in answers}
    assert by_id[2]["result"]["entry"]["text"] == "during shutdown", by_id[2]
    order = [answer["id"] for answer in answers]
    assert order.index(2) < order.index(3), order
    assert by_id[3]["result"] is None
    assert by_id[4]["error"]["message"] == "the server is shut down"
    assert "during shutdown" in sheet.path.read_text()


def test_exit_while_shutdown_waits_for_a_write_exits_zero(root: Path) -> None:
    """`exit` sent after `shutdown` but before its answer, which waits for a write to answer
    (the sheet's lock held by another process): the shutdown was received, so the server
    exits 0, as LSP says, and the write is done; it exited 1, as for no shutdown at all."""
    from stet_lsp.core.sheet import StyleSheet
    from stet_lsp.core.targets import resolve_target

    sheet = StyleSheet(resolve_target(root))
    sheet.add("before")
    server = PipeServer().initialize(folders=[uri(root)])
    try:
        _shutdown_while_a_note_waits(server, sheet, then={"method": "exit"})
        assert server.process.wait(timeout=15) == 0
    finally:
        server.close()
    assert "during shutdown" in sheet.path.read_text()


def _shutdown_while_a_note_waits(
    server: PipeServer, sheet: StyleSheet, then: dict[str, Any]
) -> None:
    """Sends stet.note.add (id 2) while another process holds the sheet's lock, then
    shutdown (id 3) and `then`; the lock is let go half a second after."""
    from stet_lsp.core.locking import file_lock

    with file_lock(sheet.path, sheet.target.root, "the style sheet"):
        add = {"command": "stet.note.add", "arguments": [{"text": "during shutdown"}]}
        server.send({"id": 2, "method": "workspace/executeCommand", "params": add})
        time.sleep(0.5)  # the write waits for the lock in a worker
        server.send({"id": 3, "method": "shutdown"})
        time.sleep(0.5)
        server.send(then)
        time.sleep(0.5)


@pytest_lsp.fixture(config=SERVER, params=["utf-16", "utf-8"])
async def encoded(request: pytest.FixtureRequest, lsp_client: LanguageClient):  # type: ignore[no-untyped-def]
    lsp_client.applied_edits = []  # type: ignore[attr-defined]
    capabilities = types.ClientCapabilities(
        general=types.GeneralClientCapabilities(position_encodings=[request.param]),
        workspace=types.WorkspaceClientCapabilities(apply_edit=True),
    )
    result = await lsp_client.initialize_session(types.InitializeParams(capabilities=capabilities))
    assert result.capabilities.position_encoding == request.param
    lsp_client.encoding = request.param  # type: ignore[attr-defined]
    yield
    await lsp_client.shutdown_session()


async def test_ranges_on_non_ascii_lines(encoded: LanguageClient, root: Path) -> None:
    path = root / "src" / "unicode.py"
    line = 'café = "日本🙂"  # stet: mind the 🙂 here'
    path.write_text(line + "\nnext = 1\n", encoding="utf-8")
    document = open_file(encoded, path)
    [note] = await eventually(lambda: diagnostics(encoded, document))
    marker = line.index("stet:")
    units = {
        "utf-16": len(line[:marker].encode("utf-16-le")) // 2,
        "utf-8": len(line[:marker].encode()),
    }
    end = {"utf-16": len(line.encode("utf-16-le")) // 2, "utf-8": len(line.encode())}
    encoding = encoded.encoding  # type: ignore[attr-defined]
    assert (note.range.start.character, note.range.end.character) == (
        units[encoding],
        end[encoding],
    )


@pytest_lsp.fixture(config=SERVER)
async def configured(lsp_client: LanguageClient):  # type: ignore[no-untyped-def]
    await start(
        lsp_client,
        "neovim@v0.11.0",
        {"marker": "review", "brief": {"budget": -3}, "margin": {"severity": "loud"}},
    )
    yield
    await lsp_client.shutdown_session()


async def test_settings_apply_and_bad_values_get_a_message_and_the_default(
    configured: LanguageClient, root: Path
) -> None:
    path = root / "src" / "notes.py"
    path.write_text("# stet: old marker\n# review: new marker\nx = 1\n")
    document = open_file(configured, path)
    [note] = await eventually(lambda: diagnostics(configured, document))
    assert "new marker" in note.message and note.severity == types.DiagnosticSeverity.Hint
    await eventually(lambda: len(configured.messages) >= 2)
    messages = [m.message for m in configured.messages]
    assert any("brief.budget" in m for m in (log.message for log in configured.log_messages))
    assert any("brief.budget" in m and "800" in m for m in messages)
    assert any("margin.severity" in m for m in messages)
    configured.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(
            settings={"stet": {"marker": "stet", "margin": {"severity": "warning"}}}
        )
    )

    async def switched() -> Any:
        found = await diagnostics(configured, document)
        return [
            d
            for d in found
            if "old marker" in d.message and d.severity == types.DiagnosticSeverity.Warning
        ]

    assert await eventually(switched)


async def test_workspaces_each_repository_its_own_target_and_outside_files_quiet(
    configured: LanguageClient, tmp_path: Path
) -> None:
    one = make_repo(tmp_path / "one", files={"a.py": "x = 1\n"})
    two = make_repo(tmp_path / "two", branch="feature/two", files={"b.py": "y = 2\n"})
    first = open_file(configured, Path(one.workdir) / "a.py")
    second = open_file(configured, Path(two.workdir) / "b.py")
    await execute(configured, "stet.note.add", uri=first, text="for one", line=0)
    await execute(configured, "stet.note.add", uri=second, text="for two", line=0)
    listed_one = await execute(configured, "stet.note.list", uri=first)
    listed_two = await execute(configured, "stet.note.list", uri=second)
    assert [e["text"] for e in listed_one["entries"]] == ["for one"]
    assert [e["text"] for e in listed_two["entries"]] == ["for two"]
    assert listed_two["target"]["name"] == "feature/two"

    outside = tmp_path / "loose" / "c.py"
    outside.parent.mkdir()
    outside.write_text("# stet: not in a repository\n")
    loose = open_file(configured, outside)
    assert not await diagnostics(configured, loose)
    lenses = await configured.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=loose))
    )
    assert not lenses


def test_the_server_also_listens_on_tcp() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, "-m", "stet_lsp.server", "--tcp", f"127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                connection = socket.create_connection(("127.0.0.1", port), timeout=30)
                break
            except OSError:
                assert time.monotonic() < deadline, "the server never listened"
                time.sleep(0.1)
        with connection:
            body = json.dumps(
                {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}
            ).encode()
            connection.sendall(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            stream = connection.makefile("rb")
            length = 0
            while (line := stream.readline()) not in (b"\r\n", b""):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            answer = json.loads(stream.read(length))
        assert answer["id"] == 1 and answer["result"]["serverInfo"]["name"] == "stet-lsp"
    finally:
        server.kill()
        server.wait(timeout=10)


async def test_a_repository_inside_another_is_its_own(
    configured: LanguageClient, tmp_path: Path
) -> None:
    outer = make_repo(tmp_path / "outer", files={"a.py": "x = 1\n"})
    make_repo(
        tmp_path / "outer" / "vendor" / "inner", branch="inner-main", files={"b.py": "y = 2\n"}
    )
    first = open_file(configured, Path(outer.workdir) / "a.py")
    await execute(configured, "stet.note.add", uri=first, text="outer note")
    second = open_file(configured, tmp_path / "outer" / "vendor" / "inner" / "b.py")
    listed = await execute(configured, "stet.note.list", uri=second)
    assert listed["target"]["name"] == "inner-main" and listed["entries"] == []


def test_step_lenses_written_as_json_arrive_as_a_valid_answer(raw: PipeServer, root: Path) -> None:
    """The lenses of a large trajectory are sent as JSON text made in the indexing worker:
    the answer is one well-formed JSON-RPC response with the request's id, a lens per step.
    And a message msgspec refuses (a number out of its range) is read as json reads it."""
    from stet_lsp.core.targets import resolve_target
    from stet_lsp.trajectory.store import working_folder

    events = working_folder(resolve_target(root)).path / "events.jsonl"
    events.parent.mkdir(parents=True, exist_ok=True)
    records = [
        {"kind": "agent_message", "step": n, "session": "s", "text": f'say "{n}" \u00e9 ' * 40}
        for n in range(1, 1201)
    ]
    text = "".join(json.dumps(record) + "\n" for record in records)
    assert len(text) > 256 * 1024  # indexed in the worker, lenses made there
    document = raw.open(uri(events), text, "json")
    symbols = {"textDocument": {"uri": document}}
    raw.send({"id": 2, "method": "textDocument/documentSymbol", "params": symbols})
    assert raw.answer(2, timeout=30)["result"]  # answered once indexed
    raw.send({"id": 3, "method": "textDocument/codeLens", "params": symbols})
    answer = raw.answer(3, timeout=30)
    assert answer["jsonrpc"] == "2.0" and answer["id"] == 3
    lenses = answer["result"]
    assert [lens["range"]["start"]["line"] for lens in lenses] == list(range(1200))
    assert lenses[0]["command"]["title"].startswith("1 · agent_message say")
    raw.send_bytes(
        b'{"jsonrpc": "2.0", "id": 4, "method": "textDocument/hover", "params": {"textDocument":'
        b' {"uri": "' + document.encode() + b'"}, "position": {"line": 1e400, "character": 0}}}'
    )
    assert raw.answer(4)["error"]["code"] == -32602
    raw.send({"id": 5, "method": "shutdown"})
    assert raw.answer(5)["result"] is None


def test_a_log_record_no_client_took_goes_to_standard_error() -> None:
    """Records go to the client's log, and standard error leaves out those it has; one logged
    while there is no client (before the server is started, or over TCP before one connects)
    must still reach standard error."""
    import logging

    from stet_lsp.server.server import ClientLog, create_server, log, not_sent

    # Only this server's handler: servers made earlier in this process keep theirs.
    earlier = [handler for handler in log.handlers if isinstance(handler, ClientLog)]
    for handler in earlier:
        log.removeHandler(handler)
    create_server()  # never started: no client to take its records
    taken: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            taken.append(record.getMessage())

    collect = Collect()
    collect.addFilter(not_sent)
    logging.getLogger().addHandler(collect)
    try:
        log.error("could not open the repository")
    finally:
        logging.getLogger().removeHandler(collect)
        for handler in [h for h in log.handlers if isinstance(h, ClientLog)]:
            log.removeHandler(handler)
        for handler in earlier:
            log.addHandler(handler)
    assert taken == ["could not open the repository"]


def test_a_code_action_range_ending_far_past_the_document_is_answered(
    raw: PipeServer, root: Path
) -> None:
    """A range may end at any line an unsigned integer holds: the actions come from the
    entries inside it, and no line past the document is looked at."""
    document = raw.open(uri(root / "src/app.py"), (root / "src/app.py").read_text())
    params = {
        "textDocument": {"uri": document},
        "range": {"start": {"line": 0, "character": 0}, "end": {"line": 2**31 - 1, "character": 0}},
        "context": {"diagnostics": []},
    }
    raw.send({"id": 2, "method": "textDocument/codeAction", "params": params})
    assert isinstance(raw.answer(2)["result"], list)


def test_a_uri_naming_no_usable_path_is_refused_with_a_message(raw: PipeServer) -> None:
    """A name too long for the file system, a lone surrogate, a relative `file:` URI: each
    command answers with a refusal that says what is wrong, not an internal error."""
    uris = ["file:///" + "b" * 300, "file:///tmp/\ud800.py", "file:app.py"]
    for number, bad in enumerate(uris, start=10):
        params = {"command": "stet.note.list", "arguments": [{"uri": bad}]}
        raw.send({"id": number, "method": "workspace/executeCommand", "params": params})
        error = raw.answer(number)["error"]
        assert error["code"] != -32603, error
        message = error["message"]
        assert "Errno" not in message and "codec" not in message, message
        assert message.endswith(("not inside a git repository", "File name too long")), message


def test_a_notification_sent_with_an_id_is_answered_with_an_error(
    raw: PipeServer, root: Path
) -> None:
    """A notification's method in a message with an id would be carried out and never
    answered (a notification has no answer): it is refused, with its id."""
    document = uri(root / "src/app.py")
    messages = [
        ("initialized", {}),
        ("$/cancelRequest", {"id": 1}),
        ("workspace/didChangeConfiguration", {"settings": {}}),
        (
            "textDocument/didOpen",
            {"textDocument": {"uri": document, "languageId": "python", "version": 1, "text": ""}},
        ),
    ]
    for number, (method, params) in enumerate(messages, start=54):
        raw.send({"id": number, "method": method, "params": params})
        error = raw.answer(number)["error"]
        assert error["code"] == -32600 and "is a notification" in error["message"], error
    raw.send({"id": 60, "method": "shutdown"})
    assert raw.answer(60)["result"] is None  # and it serves on
