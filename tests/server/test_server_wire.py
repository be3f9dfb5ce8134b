"""The protocol's edges in raw JSON-RPC: every request gets an answer, errors carry no
traceback, and the exit code follows the lifecycle."""

from __future__ import annotations

import json
import queue
import time
from pathlib import Path
from typing import Any

from lsp_harness import uri
from lsp_pipe import PipeServer


def nested(depth: int) -> str:
    """JSON text of arrays and objects nested `depth` deep (more than `json.dumps` can)."""
    return '{"a": [' * (depth // 2) + "0" + "]}" * (depth // 2)


def message(**fields: Any) -> bytes:
    """A JSON-RPC message whose "params" is raw JSON text."""
    params = fields.pop("params")
    head = json.dumps({"jsonrpc": "2.0", **fields})[:-1]
    return f'{head}, "params": {params}}}'.encode()


def assert_plain_error(answer: dict[str, Any], code: int) -> None:
    error = answer["error"]
    assert error["code"] == code, error
    assert "traceback" not in json.dumps(error).lower()
    assert "data" not in error or not error["data"]


def test_params_nested_ten_thousand_deep_get_an_answer(raw: PipeServer) -> None:
    raw.send_bytes(message(id=2, method="textDocument/hover", params=nested(10_000)))
    assert_plain_error(raw.answer(2), -32600)
    # Deep, but not too deep for the decoder: refused before anything recurses over it.
    raw.send_bytes(message(id=3, method="textDocument/hover", params=nested(500)))
    assert_plain_error(raw.answer(3), -32602)
    raw.send({"id": 4, "method": "shutdown"})
    assert raw.answer(4)["result"] is None


def test_malformed_envelopes_get_invalid_request(raw: PipeServer) -> None:
    raw.send_bytes(json.dumps({"id": 2, "method": "shutdown"}).encode())  # no "jsonrpc"
    assert_plain_error(raw.answer(2), -32600)
    raw.send({"id": 3, "method": 42, "params": {}})
    assert_plain_error(raw.answer(3), -32600)
    raw.send({"id": 4, "method": ["textDocument/hover"]})
    assert_plain_error(raw.answer(4), -32600)
    raw.send({"id": 5, "method": "textDocument/hover", "params": 7})
    assert_plain_error(raw.answer(5), -32600)
    raw.send({"id": 6, "jsonrpc": "1.0", "method": "shutdown"})
    assert_plain_error(raw.answer(6), -32600)
    raw.send_bytes(b"[1, 2, 3]")
    assert_plain_error(raw.wait_for(lambda m: m.get("id", 0) is None), -32600)
    raw.send_bytes(b"{not json")
    assert_plain_error(raw.wait_for(lambda m: m.get("id", 0) is None), -32700)
    raw.send({"id": 7, "method": "shutdown"})
    assert raw.answer(7)["result"] is None


def test_a_null_request_id_and_a_second_initialize_are_refused(root: Path) -> None:
    """A request whose id is null (an answer's id when a request could not be read) is
    refused, not carried out (it was: a null-id `shutdown` shut the server down); a second
    `initialize` is refused and leaves the workspace folders the first one gave."""
    server = PipeServer().initialize({}, [uri(root)])
    try:
        server.send({"id": None, "method": "shutdown"})
        refused = server.wait_for(lambda m: "id" in m and m["id"] is None and "error" in m)
        assert_plain_error(refused, -32600)
        assert "not null" in refused["error"]["message"]
        again = {"processId": None, "capabilities": {}}
        server.send({"id": 2, "method": "initialize", "params": again})
        assert_plain_error(server.answer(2), -32600)
        listing = {"command": "stet.note.list", "arguments": [{}]}
        server.send({"id": 3, "method": "workspace/executeCommand", "params": listing})
        assert server.answer(3)["result"]["entries"] == []
    finally:
        server.close()


def test_initialized_sent_again_starts_nothing_again(root: Path) -> None:
    """LSP sends `initialized` once; a client that sends it again got everything the server
    starts on it started again: its file watchers and settings registered twice more (one
    id each, which a client refuses the second time) and a poll of every repository per
    notification, for as long as the server ran. Again, it is refused in one log line."""
    capabilities = {
        "workspace": {
            "didChangeWatchedFiles": {"dynamicRegistration": True},
            "didChangeConfiguration": {"dynamicRegistration": True},
        }
    }
    server = PipeServer()
    try:
        params = {
            "capabilities": capabilities,
            "workspaceFolders": [{"uri": uri(root), "name": "r"}],
        }
        server.send({"id": 1, "method": "initialize", "params": params})
        assert "result" in server.answer(1)
        for _ in range(3):
            server.send({"method": "initialized", "params": {}})
        registered: list[str] = []
        deadline = time.monotonic() + 2
        while time.monotonic() < deadline:
            try:
                message = server.wait_for(lambda m: True, timeout=0.2)
            except queue.Empty:
                continue
            if message.get("method") == "client/registerCapability":
                registered += [r["id"] for r in message["params"]["registrations"]]
        assert sorted(registered) == ["stet-watched-files", "stet.configuration"]
        refusals = [line for line in server.logged if "initialized" in line]
        assert len(refusals) == 2 and "once" in refusals[0], server.logged
    finally:
        server.close()


def test_a_handler_failure_answers_without_a_traceback(raw: PipeServer) -> None:
    # Positions past the end of a document are the client's error; an unexpected failure is
    # the server's, and neither leaks the server's internals.
    raw.send(
        {
            "id": 2,
            "method": "workspace/executeCommand",
            "params": {"command": "stet.note.list", "arguments": [{"uri": "file:///nowhere"}]},
        }
    )
    answer = raw.answer(2)
    assert "traceback" not in json.dumps(answer).lower()
    assert answer["error"]["code"] == -32803


def test_requests_after_shutdown_get_invalid_request_and_exit_exits_zero(
    raw: PipeServer,
) -> None:
    raw.send({"id": 2, "method": "shutdown"})
    assert raw.answer(2)["result"] is None
    raw.send(
        {
            "id": 3,
            "method": "textDocument/hover",
            "params": {
                "textDocument": {"uri": "file:///x.py"},
                "position": {"line": 0, "character": 0},
            },
        }
    )
    assert_plain_error(raw.answer(3), -32600)
    raw.send({"id": 4, "method": "shutdown"})
    assert_plain_error(raw.answer(4), -32600)
    raw.send({"method": "exit"})
    assert raw.process.wait(timeout=10) == 0


def test_exit_without_shutdown_exits_one(raw: PipeServer) -> None:
    raw.send({"method": "exit"})
    assert raw.process.wait(timeout=10) == 1


def test_params_of_the_wrong_json_type_are_invalid_not_coerced(raw: PipeServer) -> None:
    """A number where LSP says a string, a string or a fraction where it says an integer, a
    boolean for a version: InvalidParams, not the value made into what was expected
    ("1" read as line 1, 1.5 as 1, 5 as the URI "5")."""
    document = {"uri": "file:///nowhere/a.py"}
    wrong = [
        {"textDocument": document, "position": {"line": "1", "character": 0}},
        {"textDocument": document, "position": {"line": 1, "character": 1.5}},
        {"textDocument": {"uri": 5}, "position": {"line": 1, "character": 0}},
        {"textDocument": document, "position": {"line": True, "character": 0}},
    ]
    for number, params in enumerate(wrong, start=2):
        raw.send({"id": number, "method": "textDocument/hover", "params": params})
        assert_plain_error(raw.answer(number), -32602)
    right = {"textDocument": document, "position": {"line": 1, "character": 0}}
    raw.send({"id": 9, "method": "textDocument/hover", "params": right})
    assert "error" not in raw.answer(9)
    raw.send({"id": 10, "method": "shutdown"})
    assert raw.answer(10)["result"] is None


def test_params_that_do_not_fit_are_refused_saying_where_in_one_log_line(tmp_path: Path) -> None:
    """pygls logged a traceback of some fifty lines for each such message, and the answer
    said only "invalid params": the answer, and one line of the log, say where they do not
    fit, in the protocol's names."""
    log = tmp_path / "stderr"
    with log.open("wb") as stream:
        server = PipeServer(stderr=stream).initialize()
        try:
            params = {"textDocument": {}, "position": {"line": "1", "character": 0}}
            server.send({"id": 2, "method": "textDocument/hover", "params": params})
            answer = server.answer(2)
            assert_plain_error(answer, -32602)
            assert answer["error"]["message"] == (
                "invalid params for textDocument/hover: $.params.textDocument.uri: required "
                "field missing; $.params.position.line: expected int"
            )
            server.send({"id": 3, "method": "shutdown"})
            assert server.answer(3)["result"] is None
            server.send({"method": "exit"})
            assert server.process.wait(timeout=10) == 0
        finally:
            server.close()
    text = log.read_text(encoding="utf-8")
    assert "Traceback" not in text and "deserialize" not in text and "hover" not in text, text
    assert [line for line in server.logged if "textDocument/hover" in line] == [
        "refused a message: " + answer["error"]["message"]
    ]


def test_the_server_keeps_serving_after_each_bad_message(raw: PipeServer) -> None:
    bad = [
        b"{",
        b"null",
        b'"a string"',
        b'{"jsonrpc": "2.0"}',
        b'{"jsonrpc": "2.0", "id": {"nested": 1}, "method": "shutdown"}',
        b'{"jsonrpc": "2.0", "id": 1.5, "method": "shutdown"}',
        message(method="textDocument/didOpen", params=nested(9000)),
    ]
    started = time.monotonic()
    for number, body in enumerate(bad, start=10):
        raw.send_bytes(body)
        raw.send({"id": number, "method": "stet/unknown", "params": {}})
        assert raw.answer(number)["error"]["code"] == -32601
    assert time.monotonic() - started < 10


def test_a_request_cancelled_while_its_document_is_read_leaves_the_document_served(
    root: Path,
) -> None:
    capabilities = {
        "textDocument": {"diagnostic": {}},
        "workspace": {"diagnostics": {"refreshSupport": True}},
    }
    server = PipeServer().initialize(capabilities)
    try:
        document = server.open(uri(root / "src" / "app.py"), "# stet: a note\n")
        pull = {"textDocument": {"uri": document}}
        server.send({"id": 2, "method": "textDocument/diagnostic", "params": pull})
        server.send({"method": "$/cancelRequest", "params": {"id": 2}})
        assert server.answer(2)  # an answer, whether the result or "cancelled"
        server.send({"id": 3, "method": "textDocument/diagnostic", "params": pull})
        [note] = server.answer(3)["result"]["items"]
        assert note["code"] == "margin-note"
    finally:
        server.close()


def test_an_answer_the_server_cannot_read_fails_its_request_not_the_server(root: Path) -> None:
    server = PipeServer()
    server.send(
        {
            "id": 1,
            "method": "initialize",
            "params": {"capabilities": {"workspace": {"configuration": True}}},
        }
    )
    server.answer(1)
    server.send({"method": "initialized"})  # no params: read as {}
    asked = server.wait_for(lambda m: m.get("method") == "workspace/configuration")
    server.send({"id": asked["id"], "result": "not a list of settings"})
    logged = server.wait_for(
        lambda m: (
            m.get("method") == "window/logMessage"
            and "workspace/configuration with an error" in m["params"]["message"]
        )
    )
    assert logged
    server.send(
        {
            "id": 2,
            "method": "workspace/executeCommand",
            "params": {"command": "stet.note.list", "arguments": [{"uri": uri(root)}]},
        }
    )
    assert server.answer(2)["result"]["entries"] == []
    server.close()


def test_a_nul_in_a_uri_or_an_undecodable_character_in_a_text_gets_a_plain_answer(
    raw: PipeServer, root: Path
) -> None:
    """A NUL in any string argument (a URI, a transcript's path) names no file and is no text:
    InvalidParams, saying so (an import's path reached os.stat: an internal error). A
    lone surrogate (what a byte that is not UTF-8 becomes) in a note's text is written as
    U+FFFD, not refused with the encoder's message."""

    def command(request_id: int, name: str, **arguments: Any) -> dict[str, Any]:
        params = {"command": name, "arguments": [arguments]}
        raw.send({"id": request_id, "method": "workspace/executeCommand", "params": params})
        return raw.answer(request_id)

    answer = command(2, "stet.note.list", uri=uri(root) + "/\u0000x")
    assert_plain_error(answer, -32602)
    assert answer["error"]["message"] == "argument 'uri' holds a NUL character"
    answer = command(5, "stet.trajectory.import", uri=uri(root), path=f"{root}/a\u0000.jsonl")
    assert_plain_error(answer, -32602)
    assert answer["error"]["message"] == "argument 'path' holds a NUL character"

    added = command(3, "stet.note.add", uri=uri(root), text="caf\udce9 is spelled with an e")
    assert "error" not in added, added
    listed = command(4, "stet.note.list", uri=uri(root))
    assert [entry["text"] for entry in listed["result"]["entries"]] == [
        "caf\ufffd is spelled with an e"
    ]


def test_a_verdict_or_route_not_among_those_taken_is_invalid_params(
    raw: PipeServer, root: Path
) -> None:
    """As an unlisted `harness` or `file` is: InvalidParams naming what the argument takes,
    before anything else is looked at (no working trajectory yet, no such entry)."""
    commands = [
        (2, "stet.step.mark", {"uri": uri(root), "step": 1, "verdict": "meh"}, "wrong, clever"),
        (3, "stet.graduate", {"uri": uri(root), "id": "x", "route": "nowhere"}, "trajectory"),
    ]
    for number, command, arguments, taken in commands:
        params = {"command": command, "arguments": [arguments]}
        raw.send({"id": number, "method": "workspace/executeCommand", "params": params})
        answer = raw.answer(number)
        assert_plain_error(answer, -32602)
        assert taken in answer["error"]["message"], answer


def test_a_capstone_s_target_that_is_no_string_or_names_nothing_is_refused_plainly(
    raw: PipeServer, root: Path
) -> None:
    """`target` of `stet.capstone` is a name: any other JSON type is InvalidParams; a name
    that no working trajectory goes by is the capstone's own refusal, as on the command
    line."""
    for number, target in ((2, 42), (3, ["topic"]), (4, {"name": "topic"}), (5, True)):
        params = {"command": "stet.capstone", "arguments": [{"uri": uri(root), "target": target}]}
        raw.send({"id": number, "method": "workspace/executeCommand", "params": params})
        answer = raw.answer(number)
        assert_plain_error(answer, -32602)
        assert answer["error"]["message"] == "argument 'target' must be a str", answer
    params = {"command": "stet.capstone", "arguments": [{"uri": uri(root), "target": "topic"}]}
    raw.send({"id": 6, "method": "workspace/executeCommand", "params": params})
    error = raw.answer(6)["error"]
    assert error["code"] == -32803 and error["data"] == {"reason": "no-working-trajectory"}
    assert error["message"].startswith("topic has no working trajectory to commit"), error


def test_a_note_on_a_line_the_document_does_not_hold_is_refused_in_its_own_numbering(
    raw: PipeServer, root: Path
) -> None:
    """Lines are 0-based here: a negative line, or one past the open document's last, is
    InvalidParams saying so in those numbers (the store's refusal spoke of line N+1)."""
    document = raw.open(uri(root / "src" / "app.py"), "a = 1\nb = 2\n")
    for number, line in ((2, -1), (3, 5)):
        arguments = {"uri": document, "text": "x", "line": line}
        params = {"command": "stet.note.add", "arguments": [arguments]}
        raw.send({"id": number, "method": "workspace/executeCommand", "params": params})
        answer = raw.answer(number)
        assert_plain_error(answer, -32602)
    assert "0-based, and the document holds lines 0 to 1, not 5" in answer["error"]["message"]


def test_a_message_without_params_for_a_method_the_server_does_not_know_is_no_bug(
    raw: PipeServer,
) -> None:
    """JSON-RPC lets a message leave `params` out: a notification the server does not know is
    dropped and a request it does not know gets MethodNotFound, neither logged as a failure
    of the server's with a traceback (each was)."""
    raw.send({"method": "$/unknown"})
    raw.send({"method": "stet/unknown", "params": None})
    raw.send({"id": 2, "method": "stet/unknown"})
    assert_plain_error(raw.answer(2), -32601)
    raw.send({"id": 3, "method": "shutdown"})
    assert raw.answer(3)["result"] is None
    assert not [line for line in raw.logged if "Traceback" in line or "could not" in line]


def test_a_cancellation_or_token_that_is_neither_a_number_nor_a_string_is_refused(
    raw: PipeServer,
) -> None:
    """An id or progress token is an integer or a string: an object or array as a
    `$/cancelRequest`'s id failed the server's reading of it (a traceback in the log), and one
    as a request's token was taken as it was; both are refused as params that do not fit."""
    for number, wrong in enumerate(({"a": 1}, [1], 1.5, True), start=2):
        raw.send({"method": "$/cancelRequest", "params": {"id": wrong}})
        params = {
            "textDocument": {"uri": "file:///nowhere/a.py"},
            "position": {"line": 0, "character": 0},
            "workDoneToken": wrong,
        }
        raw.send({"id": number, "method": "textDocument/hover", "params": params})
        answer = raw.answer(number)
        assert_plain_error(answer, -32602)
        assert "workDoneToken" in answer["error"]["message"]
    raw.send({"id": 9, "method": "shutdown"})
    assert raw.answer(9)["result"] is None
    assert not [line for line in raw.logged if "Traceback" in line]
    refused = [line for line in raw.logged if "$/cancelRequest" in line]
    assert len(refused) == 4, raw.logged


def test_a_margin_note_recorded_as_soon_as_its_document_is_opened_is_recorded(
    root: Path,
) -> None:
    """The command waits for what the document's other requests wait for (its repository
    found): sent right after `didOpen`, it was refused with "… is not inside a git
    repository"."""
    server = PipeServer().initialize({}, [uri(root)])
    try:
        opened = server.open(uri(root / "src" / "notes.py"), "# stet: at once\nx = 1\n")
        record = {"command": "stet.margin.record", "arguments": [{"uri": opened, "line": 0}]}
        server.send({"id": 2, "method": "workspace/executeCommand", "params": record})
        assert [entry["text"] for entry in server.answer(2)["result"]["recorded"]] == ["at once"]
    finally:
        server.close()


def test_an_id_with_a_fraction_is_refused_saying_it_must_be_an_integer(raw: PipeServer) -> None:
    """LSP's ids are integers or strings: `2.5` and `1e3` are numbers, and were refused as
    though they were not ("a message id must be a number or a string")."""
    for body in (
        b'{"jsonrpc": "2.0", "id": 2.5, "method": "shutdown"}',
        b'{"jsonrpc": "2.0", "id": 1e3, "method": "shutdown"}',
    ):
        raw.send_bytes(body)
        refused = raw.wait_for(lambda m: "id" in m and m["id"] is None and "error" in m)
        assert_plain_error(refused, -32600)
        assert refused["error"]["message"] == "a message id must be an integer or a string"
    raw.send({"id": 2, "method": "shutdown"})
    assert raw.answer(2)["result"] is None


def test_a_value_that_fits_none_of_a_unions_types_is_refused_naming_them(
    raw: PipeServer,
) -> None:
    """The refusal said `expected Optional` (or `expected Union`), naming no type the value
    could have had."""
    params = {"textDocument": {"uri": "file:///nowhere/a.py"}, "previousResultId": 5}
    raw.send({"id": 2, "method": "textDocument/diagnostic", "params": params})
    assert raw.answer(2)["error"]["message"] == (
        "invalid params for textDocument/diagnostic: $.params.previousResultId: "
        "expected str or null"
    )
    listing = {"command": "stet.note.list", "arguments": 5}
    raw.send({"id": 3, "method": "workspace/executeCommand", "params": listing})
    assert raw.answer(3)["error"]["message"] == (
        "invalid params for workspace/executeCommand: $.params.arguments: expected Sequence or null"
    )


def test_accepting_a_review_line_that_holds_no_proposal_is_refused(root: Path) -> None:
    """`stet.graduation.apply` without `line` (and without `all`), with a negative line, a line
    past the review's end or a line that is no entry's answered `{"results": []}` as though
    it had done what was asked; each is refused now, and the entry stays open."""
    from stet_lsp.core.sheet import StyleSheet
    from stet_lsp.core.targets import resolve_target

    sheet = StyleSheet(resolve_target(root))
    entry = sheet.add("Tried a global retry decorator: it retried writes.", kind="ruled-out")
    server = PipeServer().initialize({}, [uri(root)])
    try:
        review = {"command": "stet.graduation.review", "arguments": [{"uri": uri(root)}]}
        server.send({"id": 2, "method": "workspace/executeCommand", "params": review})
        document = server.answer(2)["result"]["uri"]
        text = Path(document.removeprefix("file://")).read_text()
        server.open(document, text, "markdown")
        count = len(text.split("\n"))
        refusals = [
            ({}, -32602, "missing argument 'line'"),
            ({"line": -1}, -32602, "argument 'line' must be 0 or more"),
            (
                {"line": count},
                -32602,
                f"argument 'line' is 0-based, and the review holds lines 0 to {count - 1}, "
                f"not {count}",
            ),
            ({"line": 0}, -32803, "line 1: no entry's proposal on it; nothing was changed"),
        ]
        for number, (line, code, message) in enumerate(refusals, start=3):
            apply = {"command": "stet.graduation.apply", "arguments": [{"uri": document, **line}]}
            server.send({"id": number, "method": "workspace/executeCommand", "params": apply})
            answer = server.answer(number)
            assert_plain_error(answer, code)
            assert answer["error"]["message"] == message
        assert sheet.get(entry.id).status == "open"
        line = next(n for n, row in enumerate(text.split("\n")) if entry.id in row)
        apply = {"command": "stet.graduation.apply", "arguments": [{"uri": document, "line": line}]}
        server.send({"id": 9, "method": "workspace/executeCommand", "params": apply})
        assert [r["entry"]["id"] for r in server.answer(9)["result"]["results"]] == [entry.id]
    finally:
        server.close()


def test_a_document_closed_while_redact_now_scans_it_is_said_to_be_closed(root: Path) -> None:
    """`stet.gate.redact` scans the document off the loop; closed meanwhile, the answer said it
    had changed ("try again"), which nothing could do. It says the document was closed, and
    nothing is applied."""
    import gate_corpus

    rng = __import__("random").Random(5)
    lines = [
        f"line {n}: token ghp_{gate_corpus.pick(rng, gate_corpus.ALNUM, 36)}\n"
        for n in range(10_000)
    ]
    server = PipeServer().initialize({}, [uri(root)])
    try:
        opened = server.open(uri(root / "src" / "secrets.md"), "".join(lines), "markdown")
        server.wait_for(lambda m: m.get("method") == "textDocument/publishDiagnostics", 60)
        # Changed, so that the command scans it again (off the loop), and closed meanwhile.
        end = {"line": len(lines), "character": 0}
        change = {"range": {"start": end, "end": end}, "text": "one more line\n"}
        server.send(
            {
                "method": "textDocument/didChange",
                "params": {
                    "textDocument": {"uri": opened, "version": 2},
                    "contentChanges": [change],
                },
            }
        )
        redact = {"command": "stet.gate.redact", "arguments": [{"uri": opened}]}
        server.send({"id": 2, "method": "workspace/executeCommand", "params": redact})
        server.send(
            {"method": "textDocument/didClose", "params": {"textDocument": {"uri": opened}}}
        )
        answer = server.answer(2, timeout=60)
        assert_plain_error(answer, -32803)
        message = answer["error"]["message"]
        assert message.endswith("closed while it was being scanned; nothing changed"), message
    finally:
        server.close()


def test_a_change_with_a_null_range_replaces_the_whole_text(root: Path) -> None:
    """`"range": null` is no range in the protocol, but clients send it for a change of the
    whole text: taken as that, the server holds the client's text (a margin note in it is
    found, and an edit made after it lands where the client has it)."""
    server = PipeServer().initialize(
        {"textDocument": {"publishDiagnostics": {"versionSupport": True}}}, [uri(root)]
    )
    try:
        document = server.open(uri(root / "src" / "app.py"), "x = 1\n")
        whole = {"range": None, "rangeLength": None, "text": "y = 2\n# stet: from the whole text\n"}
        server.send(
            {
                "method": "textDocument/didChange",
                "params": {
                    "textDocument": {"uri": document, "version": 2},
                    "contentChanges": [whole],
                },
            }
        )
        at = {"line": 1, "character": 8}
        typed = {"range": {"start": at, "end": at}, "text": "typed after, "}
        server.send(
            {
                "method": "textDocument/didChange",
                "params": {
                    "textDocument": {"uri": document, "version": 3},
                    "contentChanges": [typed],
                },
            }
        )

        def published(message: dict[str, Any]) -> bool:
            params = message.get("params") or {}
            return (
                message.get("method") == "textDocument/publishDiagnostics"
                and params.get("version") == 3
                and any(d.get("code") == "margin-note" for d in params["diagnostics"])
            )

        [note] = [
            d
            for d in server.wait_for(published)["params"]["diagnostics"]
            if d.get("code") == "margin-note"
        ]
        assert note["range"]["start"]["line"] == 1
        assert note["message"].endswith(": typed after, from the whole text")
        assert not [line for line in server.logged if "invalid params" in line]
    finally:
        server.close()
