"""The wire: Stet's JSON-RPC protocol and the loop that reads messages.

pygls parses each message with `json.loads(..., object_hook=...)` and drops what it cannot
read: a parse error, params nested too deep for the decoder, an envelope without `jsonrpc`
or with a method that is not a string, a request after `shutdown`. Stet reads each frame
itself so that every request gets an answer, and no error carries a traceback. A request
refused on purpose is logged in one line; only a failure that is no refusal is logged with
its traceback.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import threading
from collections.abc import Generator
from concurrent.futures import Future
from contextlib import suppress
from dataclasses import dataclass
from typing import Any, Optional, Union, get_args, get_origin

import cattrs
import msgspec
from lsprotocol import types
from lsprotocol.types import ResponseError, ResponseErrorMessage
from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInternalError,
    JsonRpcInvalidParams,
    JsonRpcInvalidRequest,
    JsonRpcParseError,
    JsonRpcServerNotInitialized,
)
from pygls.protocol import JsonRPCNotification, LanguageServerProtocol, default_converter
from pygls.protocol.json_rpc import JsonRPCRequestMessage, JsonRPCResponseMessage
from pygls.protocol.language_server import lsp_method

from stet_lsp.core.jsonids import top_level_id
from stet_lsp.server.positions import RawJSON

log = logging.getLogger("stet_lsp")

MAX_DEPTH = 64
"""Deepest nesting of objects and arrays accepted in a message (LSP's own types nest far
less); deeper ones are refused before anything recurses over them."""
MAX_BODY = 1 << 30
"""The longest message body read (1 GiB): a longer Content-Length is refused unread, as a
framing error, rather than allocated."""
_CONTENT_LENGTH = re.compile(rb"Content-Length: *(\d+)\r\n$", re.IGNORECASE)
"""Searched, not matched from the line's start: after a message whose Content-Length was
short, its rest is glued to the next header, and the reading falls back in step there."""


def strict_converter() -> Any:
    """pygls' converter, but a string, an integer or a boolean of the protocol is only that
    JSON type: cattrs would read `"line": "1"` as 1, `1.5` as 1 and `"uri": 5` as "5"; such
    params are invalid (InvalidParams), as they are to any other server. An id or a progress
    token (an integer or a string), which lsprotocol takes as any value, is held to that too."""
    converter = default_converter()  # type: ignore[no-untyped-call]
    for kind in (str, int, bool):
        converter.register_structure_hook(kind, _exactly(kind))
    for annotation in _IDS:
        converter.register_structure_hook(annotation, _integer_or_string)
    return converter


_IDS = (Union[int, str], Optional[Union[int, str]])  # noqa: UP007, UP045
"""lsprotocol's annotations of ids and tokens (which `int | str` is not equal to)."""


def _integer_or_string(value: Any, wanted: Any) -> int | str | None:
    """An id or token (`Optional` ones take null, which an optional field reads as absent)."""
    if type(value) in (int, str) or (value is None and type(None) in get_args(wanted)):
        return value  # type: ignore[no-any-return]
    raise TypeError(f"expected int or str, got {type(value).__name__}")


def _exactly(kind: type) -> Any:
    """The hook of `kind` and of the enums built on it (as cattrs' own: `DiagnosticSeverity(1)`),
    taking only that JSON type: a boolean is an int to isinstance, not to JSON."""

    def structure(value: Any, wanted: type) -> Any:
        if type(value) is not kind:
            raise TypeError(f"expected {kind.__name__}, got {type(value).__name__}")
        return value if wanted is kind else wanted(value)

    return structure


class _Misfit(JsonRpcInvalidParams):
    """Params that do not fit their request's type; the message says where."""


def _misfit(error: cattrs.BaseValidationError) -> str:
    """Where a message does not fit its type, in its own (camelCase) names: `$.params.position.
    line: expected int; …`, three places at most."""
    places = []
    for line in cattrs.transform_error(error, format_exception=_expected):
        what, _, where = line.rpartition(" @ ")
        where = re.sub(r"_([a-z])", lambda match: match.group(1).upper(), where)
        places.append(f"{where}: {what.removeprefix('invalid value for type, ')}")
    more = f"; and {len(places) - 3} more" if len(places) > 3 else ""
    return "; ".join(places[:3]) + more


def _expected(error: BaseException, kind: Any) -> str:
    """cattrs' words, but a union named by its members (`expected str or null`, not `expected
    Optional`)."""
    if get_origin(kind) is Union:
        names = ("null" if member is type(None) else _name(member) for member in get_args(kind))
        return "invalid value for type, expected " + " or ".join(names)
    return cattrs.v.format_exception(error, kind)


def _name(kind: Any) -> str:
    return str(getattr(kind, "__name__", None) or getattr(get_origin(kind), "__name__", kind))


def pulls_diagnostics(capabilities: types.ClientCapabilities | None) -> bool:
    """Pull only with clients that can also be told to pull again: writes from outside the
    editor must show without waiting for the next keystroke."""
    document = capabilities.text_document if capabilities else None
    workspace = capabilities.workspace if capabilities else None
    return bool(
        document
        and document.diagnostic
        and workspace
        and workspace.diagnostics
        and workspace.diagnostics.refresh_support
    )


@dataclass(frozen=True)
class Refused:
    """Why a message cannot be handled; `answer`: whether it gets an error response (a
    request, or a message whose id cannot be told, which is answered with a null id)."""

    id: int | str | None
    error: JsonRpcException
    answer: bool = True


def _is_notification(kind: Any) -> bool:
    return isinstance(kind, type) and kind.__name__.endswith("Notification")


class StetProtocol(LanguageServerProtocol):
    exit_code = 0
    """What the process exits with: 1 when `exit` came without `shutdown` first."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._commands_running: dict[Any, str] = {}
        """The executeCommand requests not answered yet: their command, by request id."""

    _closing = False
    """Whether `shutdown` came: it may wait for writes to answer before it is done."""

    initialize_seen = False
    """Whether `initialize` came: before it, a request is refused (ServerNotInitialized)
    and a notification but `exit` dropped, as LSP says."""

    initialized_seen = False
    """Whether `initialized` came: it starts the server's background work, once."""

    # -- reading -------------------------------------------------------------------------

    def receive(self, body: bytes) -> None:
        """Read and handle one message body; a request that cannot be handled is answered
        with an error, a notification that cannot is logged and dropped."""
        message = self._read(body)
        if isinstance(message, Refused):
            log.warning("refused a message: %s", message.error.message)
            if message.answer and message.id is None:
                # JSON-RPC answers with "id": null here, which pygls's messages leave out.
                error = {"code": message.error.code, "message": message.error.message}
                self._send_data({"jsonrpc": "2.0", "id": None, "error": error})
            elif message.answer:
                self._send_response(message.id, error=_plain(message.error))
            return
        self.handle_message(message)

    def _handle_cancel_notification(self, msg_id: Any) -> None:
        """A command that writes is not cancelled: its answer is its result. A request answered
        already is not cancelled either, and says nothing (editors cancel requests whose answer
        crossed the cancellation: pygls logged each as a warning)."""
        if msg_id not in self._request_futures:
            return
        command = self._commands_running.get(msg_id)
        if command is not None and command in getattr(self._server, "uncancelled_commands", ()):
            log.info(
                "not cancelling %s (request %s): it writes; its result is the answer",
                command,
                msg_id,
            )
            return
        super()._handle_cancel_notification(msg_id)

    def _read(self, body: bytes) -> Any:
        try:
            data = _decode(body)
        except RecursionError:
            return Refused(
                top_level_id(body), JsonRpcInvalidRequest("the message nests too deeply")
            )
        except UnicodeDecodeError as error:  # its id may still be read, to answer it
            return Refused(top_level_id(body), JsonRpcParseError(f"not UTF-8: {error}"))
        except ValueError as error:
            return Refused(None, JsonRpcParseError(f"not JSON: {error}"))
        if not isinstance(data, dict):
            return Refused(None, JsonRpcInvalidRequest("a message must be a JSON object"))
        raw_id = data.get("id")
        request_id = raw_id if _valid_id(raw_id) else None
        method = data.get("method")
        if data.get("params", 0) is None:
            del data["params"]  # "params": null is read as no params
        problem = _envelope_problem(data)
        if problem is not None:
            return Refused(request_id, JsonRpcInvalidRequest(problem))
        is_request = method is not None and "id" in data
        if is_request and _is_notification(self.get_message_type(method)):
            # Carried out, it would never be answered: a notification has no answer.
            problem = f"{method} is a notification: it is sent without an id"
            return Refused(request_id, JsonRpcInvalidRequest(problem), True)
        if _depth_exceeds(data.get("params"), MAX_DEPTH):
            problem = f"params nest deeper than {MAX_DEPTH} levels"
            return self._refuse(data, request_id, JsonRpcInvalidParams(problem), is_request)
        if method == types.TEXT_DOCUMENT_DID_CHANGE:
            _null_ranges_as_whole_text(data.get("params"))
        if (self._shutdown or self._closing) and method is not None and method != types.EXIT:
            return Refused(request_id, JsonRpcInvalidRequest("the server is shut down"), is_request)
        if not self.initialize_seen and method not in (None, types.INITIALIZE, types.EXIT):
            why = f"{method} before initialize"
            return Refused(request_id, JsonRpcServerNotInitialized(why), is_request)
        if self.initialize_seen and method == types.INITIALIZE:
            # A second one would replace the workspace folders and settings the server has.
            why = "the server is initialized already: initialize is sent once"
            return Refused(request_id, JsonRpcInvalidRequest(why), is_request)
        if self.initialized_seen and method == types.INITIALIZED:
            # A second one would start the watchers, registrations and polls once more.
            why = "the client said it is initialized already: initialized is sent once"
            return Refused(request_id, JsonRpcInvalidRequest(why), is_request)
        try:
            message = self.structure_message(data)
            self.initialize_seen = self.initialize_seen or method == types.INITIALIZE
            self.initialized_seen = self.initialized_seen or method == types.INITIALIZED
            if method == types.WORKSPACE_EXECUTE_COMMAND and request_id is not None:
                self._commands_running[request_id] = message.params.command
            return message
        except JsonRpcException as error:
            if method is not None and "params" not in data:
                with suppress(JsonRpcException):  # a notification such as `initialized`
                    return self.structure_message({**data, "params": {}})
            what = f"invalid params for {method}" if method else "an unreadable answer"
            if isinstance(error, _Misfit):
                what += f": {error.message}"
            return self._refuse(data, request_id, JsonRpcInvalidParams(what), is_request)

    def structure_message(self, data: dict[str, Any]) -> Any:
        """The message as its protocol type, as pygls reads it, without pygls's traceback in
        the log for each message a client sent with params that do not fit (a refusal,
        logged in one line); the refusal (`_Misfit`) says where they do not."""
        if "jsonrpc" not in data:
            return data
        method = data.get("method")
        if "id" not in data:
            kind = self.get_message_type(method or "") or JsonRPCNotification
        elif "error" in data:
            kind = ResponseErrorMessage
        elif method is not None:
            kind = self.get_message_type(method) or JsonRPCRequestMessage
        else:
            kind = self._result_types.pop(data["id"], None) or JsonRPCResponseMessage
        if kind in (JsonRPCNotification, JsonRPCRequestMessage) and "params" not in data:
            data = {**data, "params": None}  # a method of no known type: its params may be left out
        try:
            return self._converter.structure(data, kind)
        except cattrs.BaseValidationError as error:
            raise _Misfit(_misfit(error)) from None
        except Exception:  # a bug (pygls's answer to it too): the message is still answered
            log.exception("could not read a message as %s", getattr(kind, "__name__", kind))
            raise JsonRpcInternalError() from None

    def _refuse(
        self, data: dict[str, Any], request_id: Any, error: JsonRpcException, is_request: bool
    ) -> Refused:
        """Refuse a message; an answer to one of the server's requests that cannot be read
        fails that request, so nothing waits for it forever."""
        if "method" not in data and request_id is not None:
            self._result_types.pop(request_id, None)
            waiting = self._request_futures.pop(request_id, None)
            if waiting is not None and not waiting.done():
                waiting.set_exception(JsonRpcException(message=error.message))
        return Refused(request_id, error, is_request)

    def _send_handler_result(self, future: Future[Any], *, msg_id: Any) -> None:
        """A request a handler refused on purpose (a JSON-RPC error it raised: a mistyped
        argument, Stet's own error as RequestFailed) is answered and logged in one line;
        pygls logged each with a traceback. Anything else (a bug) keeps pygls's handling:
        an internal error, logged with its traceback."""
        if future.done() and not future.cancelled():
            error = future.exception()
            if isinstance(error, JsonRpcException) and not isinstance(error, JsonRpcInternalError):
                self._request_futures.pop(msg_id, None)
                what = self._commands_running.get(msg_id) or "request"
                log.info("refused %s (request %s): %s", what, msg_id, error.message)
                self._send_response(msg_id, error=error.to_response_error())
                return
        super()._send_handler_result(future, msg_id=msg_id)

    def _send_response(
        self, msg_id: Any, result: Any | None = None, error: ResponseError | None = None
    ) -> None:
        self._commands_running.pop(msg_id, None)
        if error is not None and isinstance(error.data, dict) and "traceback" in error.data:
            # The traceback is in the server's log; the client gets the one-line message.
            error = ResponseError(code=error.code, message=error.message)
        if error is None and isinstance(result, RawJSON):
            self._result_types.pop(msg_id, None)
            self._send_body(f'{{"jsonrpc":"2.0","id":{json.dumps(msg_id)},"result":{result}}}')
            return
        super()._send_response(msg_id, result, error)

    def _send_body(self, body: str) -> None:
        """Write one message whose JSON is already made (as pygls' `_send_data` writes)."""
        if self.writer is None:
            log.error("unable to send a response: no transport")
            return
        data = body.encode(self.CHARSET)
        header = (
            f"Content-Length: {len(data)}\r\n"
            f"Content-Type: {self.CONTENT_TYPE}; charset={self.CHARSET}\r\n\r\n"
        )
        self.writer.write(header.encode(self.CHARSET) + data)  # Stet's writers are not async

    # -- lifecycle and documents -----------------------------------------------------------

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(
        self, params: types.InitializeParams
    ) -> Generator[Any, Any, types.InitializeResult]:
        result = yield from super().lsp_initialize(params)
        if not pulls_diagnostics(params.capabilities):
            # Such a client gets pushed diagnostics; offering pull too would show them twice.
            result.capabilities.diagnostic_provider = None
        return result

    @lsp_method(types.SHUTDOWN)
    def lsp_shutdown(self, *args: Any) -> Generator[Any, Any, None]:
        """pygls's shutdown, over a copy of the pending requests: cancelling one (a command
        still running) calls back at once to take it out of that table, and walking the table
        itself then failed the shutdown, so a client could not restart the server. A command
        that writes is not cancelled (its write goes on in a worker): the shutdown is
        answered once it answered with its result. Requests sent meanwhile are refused."""
        self._closing = True
        if (user_handler := self.fm.features.get(types.SHUTDOWN)) is not None:
            yield user_handler, args, None
        current = self.msg_id  # this request's own future is not cancelled
        uncancelled = getattr(self._server, "uncancelled_commands", ())
        writes = []
        for msg_id, future in list(self._request_futures.items()):
            if msg_id == current or future.done():
                continue
            if self._commands_running.get(msg_id) in uncancelled:
                writes.append(future)
            else:  # a write's own handler, run under its request, goes on (write_command)
                future.cancel()
        if writes:
            yield _answered, (writes,), None
        self._shutdown = True
        return None

    @lsp_method(types.EXIT)
    def lsp_exit(self, *args: Any) -> Generator[Any, Any, None]:
        # A shutdown still waiting for writes to answer was received all the same.
        self.exit_code = 0 if self._shutdown or self._closing else 1
        yield from super().lsp_exit(*args)

    # Stet keeps each document's text itself (server/documents.py) and applies a change in
    # proportion to its size; pygls's copy would be a second, stale one.
    @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(
        self, params: types.DidOpenTextDocumentParams
    ) -> Generator[Any, Any, None]:
        yield from self._user_handler(types.TEXT_DOCUMENT_DID_OPEN, params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(
        self, params: types.DidChangeTextDocumentParams
    ) -> Generator[Any, Any, None]:
        yield from self._user_handler(types.TEXT_DOCUMENT_DID_CHANGE, params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(
        self, params: types.DidCloseTextDocumentParams
    ) -> Generator[Any, Any, None]:
        yield from self._user_handler(types.TEXT_DOCUMENT_DID_CLOSE, params)

    def _user_handler(self, method: str, params: Any) -> Generator[Any, Any, None]:
        handler = self.fm.features.get(method)
        if handler is not None:
            yield handler, (params,), None


def _null_ranges_as_whole_text(params: Any) -> None:
    """A change whose `range` is null is taken for a change of the whole text, as clients
    that send one mean it (the protocol has no null range; refused, the server's text
    stayed another than the client's until its next whole change)."""
    changes = params.get("contentChanges") if isinstance(params, dict) else None
    for change in changes if isinstance(changes, list) else ():
        if isinstance(change, dict) and "range" in change and change["range"] is None:
            del change["range"]
            change.pop("rangeLength", None)


def _decode(body: bytes) -> Any:
    """The message's JSON. msgspec reads a large didOpen in four fifths of json's time; what
    it refuses (a lone surrogate, a number out of range, too deep a nesting, not JSON) json
    reads, so every message decodes, or fails, exactly as json.loads has it."""
    try:
        return msgspec.json.decode(body)
    except msgspec.MsgspecError:
        return json.loads(body)


async def _answered(requests: list[Any]) -> None:
    """Returns once these requests (futures of either kind) are answered."""
    await asyncio.gather(*map(asyncio.wrap_future, requests), return_exceptions=True)


def _plain(error: JsonRpcException) -> ResponseError:
    return ResponseError(code=error.code, message=error.message)


def _valid_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _envelope_problem(data: dict[str, Any]) -> str | None:
    if data.get("jsonrpc") != "2.0":
        return 'a message needs "jsonrpc": "2.0"'
    if "id" in data and not _valid_id(data["id"]):
        if data["id"] is not None:
            return "a message id must be an integer or a string"
        if "method" in data:  # null is an answer's id, when the request's could not be read
            return "a request's id must be an integer or a string, not null"
    if "method" in data:
        if not isinstance(data["method"], str):
            return "a method must be a string"
        if "params" in data and not isinstance(data["params"], dict | list):
            return "params must be an object or an array"
    elif "id" not in data or ("result" not in data and "error" not in data):
        return "a message needs a method, or an id with a result or an error"
    return None


def _depth_exceeds(value: Any, limit: int) -> bool:
    """Whether objects and arrays nest deeper than `limit` (without recursing)."""
    level: list[tuple[Any, int]] = [(value, 1)]
    while level:
        item, depth = level.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return True
        level.extend((child, depth + 1) for child in children)
    return False


async def serve(stop: threading.Event, reader: Any, protocol: StetProtocol) -> None:
    """Read framed messages until the stream ends; one bad message never ends the loop."""
    length = 0
    while not stop.is_set():
        header = await reader.readline()
        if not header:
            break
        match = _CONTENT_LENGTH.search(header)
        if match:
            digits = match.group(1).lstrip(b"0")
            # Past MAX_BODY by its number of digits alone: int() reads none of over 4,300.
            length = int(digits or b"0") if len(digits) <= 12 else MAX_BODY + 1
            if length > MAX_BODY:
                shown = digits.decode() if len(digits) <= 20 else f"{len(digits)} digits of"
                log.warning("refused a message of %s bytes, unread", shown)
                error = {"code": JsonRpcInvalidRequest.CODE, "message": "the message is too long"}
                protocol._send_data({"jsonrpc": "2.0", "id": None, "error": error})
                length = 0
            continue
        if header.strip():
            continue  # Content-Type or an unknown header
        if not length:
            continue
        try:
            body = await reader.readexactly(length)
        except asyncio.IncompleteReadError:
            break  # the client went away mid-message
        length = 0
        if not body:
            break
        try:
            protocol.receive(body)
        except (SystemExit, KeyboardInterrupt):
            raise
        except Exception:  # a message that breaks a handler must not end the server
            log.exception("could not handle a message")
