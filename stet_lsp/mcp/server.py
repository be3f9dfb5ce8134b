"""`stet mcp`: the tools and the brief resource of stet_lsp.mcp.tools, served over stdio with
the MCP SDK's low-level server (the only module of Stet that imports `mcp`).

A tool call runs in a worker thread, one at a time, so the event loop keeps answering while
the style sheet's lock is waited for. Every failure of a call, expected (a StetError: bad
input, a paused sheet, an unknown id) or not, becomes a tool result with `isError` and a
message; the server keeps serving. Nothing is printed to standard output but the protocol.
When standard input ends, the requests read by then are answered before the server stops
(the SDK would cancel them): a client may write its requests and close its end.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import math
import os
import re
import signal
import sys
from collections import Counter
from decimal import Decimal
from typing import Any

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from stet_lsp import __version__
from stet_lsp.core.errors import StetError
from stet_lsp.core.jsonids import top_level_id
from stet_lsp.mcp.tools import (
    BRIEF_DESCRIPTION,
    BRIEF_URI,
    INSTRUCTIONS,
    SERVER_NAME,
    TOOLS,
    Place,
    Tool,
    call,
    read_brief,
)

_NOT_UTF8 = re.compile("[\udc80-\udcff]")
"""What a byte that is not UTF-8 reads as, with surrogateescape."""
_DICTIONARY = re.compile(r"a valid dictionary(?: or instance of \w+)?")
RESOURCE_NOT_FOUND = -32002
"""The MCP specification's error code for a resource that does not exist."""

logger = logging.getLogger(__name__)


def build_server(place: Place) -> Server[Any]:
    """The server, its handlers bound to `place`."""
    one_at_a_time = anyio.Lock()

    async def list_tools(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[_tool(tool) for tool in TOOLS])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        async with one_at_a_time:
            try:
                result = await anyio.to_thread.run_sync(call, place, params.name, params.arguments)
            except StetError as error:
                return _error(str(error))
            except Exception as error:  # a bug must not end the session
                logger.exception("tool %s failed", params.name)
                return _error(f"internal error in {params.name}: {type(error).__name__}: {error}")
        text = json.dumps(result, ensure_ascii=False, separators=(",", ":"))  # read by a model
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)], structured_content=result
        )

    async def list_resources(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        brief = types.Resource(
            name="brief",
            title="Style sheet brief",
            uri=BRIEF_URI,
            description=BRIEF_DESCRIPTION,
            mime_type="text/markdown",
        )
        return types.ListResourcesResult(resources=[brief])

    async def read_resource(
        ctx: Any, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        if params.uri != BRIEF_URI:
            raise MCPError(RESOURCE_NOT_FOUND, f"no resource {params.uri} (stet has {BRIEF_URI})")
        async with one_at_a_time:
            try:
                text = await anyio.to_thread.run_sync(read_brief, place)
            except StetError as error:
                raise MCPError(types.INTERNAL_ERROR, str(error)) from None
            except Exception as error:
                logger.exception("reading %s failed", params.uri)
                message = f"internal error reading {params.uri}: {type(error).__name__}: {error}"
                raise MCPError(types.INTERNAL_ERROR, message) from None
        contents = types.TextResourceContents(uri=BRIEF_URI, mime_type="text/markdown", text=text)
        return types.ReadResourceResult(contents=[contents])

    async def list_resource_templates(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        # Clients that see the resources capability ask for templates too; Stet has none.
        return types.ListResourceTemplatesResult(resource_templates=[])

    return Server(
        SERVER_NAME,
        version=__version__,
        title="Stet style sheet",
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_list_resource_templates=list_resource_templates,
        on_read_resource=read_resource,
    )


def serve(place: Place) -> int:
    """Serve over standard input and output until the client closes them."""
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="stet mcp: %(message)s")
    try:
        place.target()
    except StetError as error:  # served anyway: each call says what is wrong
        logger.warning("%s; every tool call will fail until this is fixed", error)
    server = build_server(place)
    _stop_at_interrupt()

    async def run() -> None:
        refused_send, refused = anyio.create_memory_object_stream[types.JSONRPCError](100)
        lines = anyio.wrap_file(
            # Bytes that are not UTF-8 are kept (as lone surrogates) to be refused, not
            # replaced: a note would be stored with U+FFFD where the client sent other text.
            io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="surrogateescape")
        )
        unanswered = _Unanswered()
        checked = _CheckedLines(lines, refused_send, unanswered, server)
        async with stdio_server(stdin=checked) as (read_stream, write_stream):  # type: ignore[arg-type]
            # A handle of its own: the server closes its handle when standard input ends, and
            # the output stays open until the refusals queued by then are written.
            refusals_out = write_stream.clone()

            async def answer_refused() -> None:
                async with refused, refusals_out:
                    async for error in refused:
                        await refusals_out.send(SessionMessage(error))

            async with anyio.create_task_group() as tasks:
                tasks.start_soon(answer_refused)  # ends once standard input has
                answers = _Answers(write_stream, unanswered)
                await server.run(read_stream, answers, server.create_initialization_options())

    try:
        anyio.run(run)
    except BaseExceptionGroup as group:
        # The client stopped reading: nothing more can be answered. Quiet, as every stet
        # command is on a closed pipe (141), not an exception group's traceback.
        _, rest = group.split(BrokenPipeError)
        if rest is not None:
            raise
        return 141
    return 0


def _stop_at_interrupt() -> None:
    """Have an interrupt (SIGINT, Ctrl-C) end the server at once, as SIGTERM does. Left to
    Python, it cancelled the server, which then neither answered nor ended: the thread
    reading standard input cannot be stopped, and was waited for until the next line came.
    An interrupt ignored when the server started (a background job's) stays ignored."""
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        return

    def stop(signum: int, frame: Any) -> None:
        # Every file Stet writes is replaced whole (a temporary file renamed over it).
        with contextlib.suppress(OSError):  # no standard error to write to
            os.write(2, b"stet mcp: interrupted; no file is left half-written\n")
        os._exit(130)

    signal.signal(signal.SIGINT, stop)


class _CheckedLines:
    """Standard input's lines for the SDK, each one it can read: it drops a line it cannot
    (not JSON, a lone surrogate, nested deeper than its parser goes, not JSON-RPC 2.0) with
    no answer, so such a line is answered here, with its id when it has one."""

    def __init__(self, lines: Any, refused: Any, unanswered: _Unanswered, server: Any) -> None:
        self.lines = lines
        self.refused = refused
        self.unanswered = unanswered
        self.server = server
        """Whose handlers' parameter types the requests' params are checked against."""
        self.started = False
        """Whether `initialize` was read: only a ping may come before it."""

    def __aiter__(self) -> Any:
        return self._checked()

    async def _checked(self) -> Any:
        async with self.refused:
            async for line in self.lines:
                # A byte order mark, which a writer of "UTF-8 with signature" puts before its
                # first message: no JSON, and RFC 8259 lets a parser read past it.
                line = line.removeprefix("\ufeff")
                if not line.strip():
                    continue
                if _NOT_UTF8.search(line):
                    request_id = top_level_id(line.encode("utf-8", "surrogateescape"))
                    await self.refused.send(_wire_error(request_id, types.PARSE_ERROR, "not UTF-8"))
                    continue
                if _with_constants(line):
                    request_id = top_level_id(line.encode("utf-8", "surrogatepass"))
                    why = "not JSON: NaN and Infinity are no JSON values"
                    await self.refused.send(_wire_error(request_id, types.PARSE_ERROR, why))
                    continue
                try:
                    message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                except ValueError as error:
                    try:
                        refusals = _refusals(line, error)
                    except RecursionError:  # json read it, but it is too deep to look into
                        request_id = top_level_id(line.encode("utf-8", "surrogatepass"))
                        refusals = [
                            _wire_error(request_id, types.INVALID_REQUEST, "nested too deep")
                        ]
                    for refusal in refusals:
                        await self.refused.send(refusal)
                    continue
                if isinstance(message, types.JSONRPCNotification) and _has_id(line):
                    # Read as a notification, its id left out: `1.0` is served as `1` (the
                    # client takes that answer as its own); another (an object) is refused.
                    whole = _integral_id(line)
                    if whole is None:
                        why = "the id is neither a string nor a whole number"
                        await self.refused.send(_wire_error(None, types.INVALID_REQUEST, why))
                        continue
                    line = whole
                    message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                if isinstance(message, types.JSONRPCRequest):
                    early = message.method not in ("initialize", "ping")
                    if early and not self.started:
                        # The SDK answers such a request "Invalid request parameters".
                        why = f"{message.method} before initialize: send initialize first"
                        await self.refused.send(_wire_error(message.id, types.INVALID_REQUEST, why))
                        continue
                    if not self._offered(message.method):
                        # The SDK reads the params of a method it knows before it finds no
                        # handler, and would answer bad ones a bare "Invalid request
                        # parameters" naming nothing.
                        why = f"{message.method}: this server does not offer it"
                        await self.refused.send(
                            _wire_error(message.id, types.METHOD_NOT_FOUND, why)
                        )
                        continue
                    wrong = self._invalid_params(message)
                    if wrong is not None:  # the SDK's answer: "Invalid request parameters"
                        refusal = _wire_error(message.id, types.INVALID_PARAMS, wrong)
                        await self.refused.send(refusal)
                        continue
                    if message.method == "initialize":
                        self.started = True
                self.unanswered.read(message)
                yield line
            # The end of the input ends the server, which cancels what it has not answered.
            await self.unanswered.answered()

    def _offered(self, method: str) -> bool:
        return (
            method in ("initialize", "ping") or self.server.get_request_handler(method) is not None
        )

    def _invalid_params(self, request: types.JSONRPCRequest) -> str | None:
        """What is wrong with the request's params (`arguments` that are not an object, say),
        as the method's parameter type reads them (`initialize`'s, which the SDK handles
        itself, as it reads them); None when nothing is."""
        if request.method == "initialize":
            params_type: Any = types.InitializeRequestParams
        else:
            handler = self.server.get_request_handler(request.method)
            if handler is None or handler.params_type is None:
                return None
            params_type = handler.params_type
        try:
            params_type.model_validate(request.params or {}, by_name=False)
        except ValidationError as error:
            first = error.errors(include_url=False)[0]
            where = ".".join(str(part) for part in ("params", *first["loc"]))
            # pydantic's words for a JSON object (a model's: `or instance of ClientCapabilities`)
            what = _DICTIONARY.sub("a JSON object", str(first["msg"]))
            return f"invalid params of {request.method}: {where}: {what}"
        return None


class _Unanswered:
    """The ids of the requests read and not answered yet (a request cancelled by its client
    gets no answer: it is not waited for)."""

    def __init__(self) -> None:
        self.ids: Counter[str] = Counter()
        """By the id written as a string: the SDK takes a cancel's `"3"` for request `3`."""
        self.none_left = anyio.Event()

    def read(self, message: types.JSONRPCMessage) -> None:
        if isinstance(message, types.JSONRPCRequest):
            self.ids[str(message.id)] += 1
        elif isinstance(message, types.JSONRPCNotification) and message.method == (
            "notifications/cancelled"
        ):
            request_id = (message.params or {}).get("requestId")
            if isinstance(request_id, str | int) and not isinstance(request_id, bool):
                self._done(str(request_id))

    def sent(self, message: types.JSONRPCMessage) -> None:
        if isinstance(message, types.JSONRPCResponse | types.JSONRPCError) and isinstance(
            message.id, str | int
        ):
            self._done(str(message.id))

    def _done(self, request_id: str) -> None:
        if self.ids[request_id] > 1:
            self.ids[request_id] -= 1
        else:
            self.ids.pop(request_id, None)
        if not self.ids:
            self.none_left.set()

    async def answered(self) -> None:
        while self.ids:
            self.none_left = anyio.Event()
            await self.none_left.wait()


class _Answers:
    """The server's side of standard output, telling `_Unanswered` what it answers."""

    def __init__(self, stream: Any, unanswered: _Unanswered) -> None:
        self.stream = stream
        self.unanswered = unanswered

    async def send(self, item: SessionMessage, /) -> None:
        await self.stream.send(item)
        self.unanswered.sent(item.message)

    async def aclose(self) -> None:
        await self.stream.aclose()

    async def __aenter__(self) -> _Answers:
        await self.stream.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> bool | None:
        result: bool | None = await self.stream.__aexit__(*exc)
        return result


def _refusals(line: str, error: ValueError) -> list[types.JSONRPCError]:
    """The answers to a line the SDK cannot read: one, or one for each request of a batch;
    none for a notification."""
    try:
        message = json.loads(line)
    except RecursionError:  # JSON, deeper than the parser goes: its id is still read
        request_id = top_level_id(line.encode("utf-8", "surrogatepass"))
        return [_wire_error(request_id, types.INVALID_REQUEST, "nested too deep")]
    except ValueError:
        # A line cut short (`{"jsonrpc": "2.0", "id": 5, "method": …`) still names its id:
        # answered under it, its client does not wait for request 5 forever.
        request_id = top_level_id(line.encode("utf-8", "surrogatepass"))
        return [_wire_error(request_id, types.PARSE_ERROR, "not JSON")]
    if isinstance(message, list):
        return _batch_refusals(message)
    refusal = _refusal(line, message, error)
    return [] if refusal is None else [refusal]


_NO_BATCHES = (
    "a batch (a JSON array of messages): MCP has none since its 2025-06-18 revision; "
    "send each message on a line of its own"
)


def _batch_refusals(batch: list[Any]) -> list[types.JSONRPCError]:
    """A refusal for each request of a batch, under its id, so that no client waits for the
    answers; one under null when none of its members has an id to answer."""
    ids = [member.get("id") for member in batch if isinstance(member, dict)]
    answerable: list[str | int | None] = [
        request_id
        for request_id in ids
        if isinstance(request_id, str | int) and not isinstance(request_id, bool)
    ]
    return [
        _wire_error(request_id, types.INVALID_REQUEST, _NO_BATCHES)
        for request_id in answerable or [None]
    ]


def _refusal(line: str, message: Any, error: ValueError) -> types.JSONRPCError | None:
    """The answer to a line of JSON the SDK cannot read; None for a notification (it gets
    none)."""
    request_id = message.get("id") if isinstance(message, dict) else None
    if isinstance(request_id, float):
        request_id = _whole_id(line)  # `1.0`: the client takes the answer to `1` as its own
    if not isinstance(request_id, str | int) or isinstance(request_id, bool):
        if isinstance(message, dict) and "id" not in message and "method" in message:
            logger.warning(
                "a notification that is not valid JSON-RPC was left out (%s): %s",
                message["method"] if isinstance(message["method"], str) else "?",
                _notification_problem(error),
            )
            return None
        request_id = None
    if "\\ud" in line.lower() and _has_lone_surrogate(message):
        why = "a string holds a lone surrogate (\\ud800-\\udfff), which is not Unicode text"
    elif isinstance(message, dict) and message.get("jsonrpc") != "2.0":
        why = 'not a JSON-RPC 2.0 message ("jsonrpc": "2.0")'
    else:
        why = f"not a JSON-RPC message this server reads ({_first_line(error)})"
    return _wire_error(request_id, types.INVALID_REQUEST, why)


def _integral_id(line: str) -> str | None:
    """The message with its id `N.0` written `N`; None when the id is not such a number."""
    request_id = _whole_id(line)
    if request_id is None:
        return None
    return json.dumps({**json.loads(line), "id": request_id}, ensure_ascii=False)


def _whole_id(line: str) -> int | None:
    """The message's id written with a fraction of zero (`8.0`) as the whole number it writes,
    read exactly: as a float, `12345678901234567890.0` would be answered as another number
    (`12345678901234567168`). None when the id is no such number."""
    message = json.loads(line, parse_float=Decimal)
    request_id = message.get("id") if isinstance(message, dict) else None
    if not isinstance(request_id, Decimal) or not math.isfinite(request_id):
        return None
    if request_id != request_id.to_integral_value():
        return None
    return int(request_id)


def _has_id(line: str) -> bool:
    if '"id"' not in line:
        return False
    with contextlib.suppress(ValueError, RecursionError):
        message = json.loads(line)
        return isinstance(message, dict) and "id" in message
    return False


def _wire_error(request_id: str | int | None, code: int, message: str) -> types.JSONRPCError:
    if isinstance(request_id, str) and _has_lone_surrogate(request_id):
        request_id = None  # no UTF-8 can write it back: an id that cannot be read
    return types.JSONRPCError(
        jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message)
    )


def _with_constants(line: str) -> bool:
    """Whether the line holds `NaN`, `Infinity` or `-Infinity` as values: no JSON has them
    (RFC 8259), though Python's json and pydantic read them."""
    if "NaN" not in line and "Infinity" not in line:
        return False

    def refuse(constant: str) -> Any:
        raise ValueError(constant)

    try:
        json.loads(line, parse_constant=refuse)
    except ValueError as error:
        return str(error) in ("NaN", "Infinity", "-Infinity")
    except RecursionError:
        return False
    return False


def _has_lone_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        return any("\ud800" <= character <= "\udfff" for character in value)
    if isinstance(value, dict):
        return any(_has_lone_surrogate(k) or _has_lone_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_lone_surrogate(item) for item in value)
    return False


def _notification_problem(error: ValueError) -> str:
    """What pydantic found wrong with a message read as a notification (`params: Input
    should be an object`), where its report covers every member of the message union."""
    errors = getattr(error, "errors", None)
    if callable(errors):
        with contextlib.suppress(Exception):
            for found in errors():
                where = [str(part) for part in found["loc"]]
                if where and where[0] == "JSONRPCNotification":
                    return f"{'.'.join(where[1:]) or 'message'}: {found['msg']}"[:200]
    return _first_line(error)


def _first_line(error: ValueError) -> str:
    """pydantic's first message (`Invalid JSON: recursion limit exceeded…`), or the error's."""
    errors = getattr(error, "errors", None)
    if callable(errors):
        with contextlib.suppress(Exception):
            return str(errors()[0]["msg"])[:200]
    return str(error).strip().split("\n", 1)[0][:200]


def _tool(tool: Tool) -> types.Tool:
    annotations = types.ToolAnnotations(
        title=tool.title,
        read_only_hint=tool.read_only,
        destructive_hint=tool.destructive,
        idempotent_hint=tool.idempotent,
        open_world_hint=False,
    )
    return types.Tool(
        name=tool.name,
        title=tool.title,
        description=tool.description,
        input_schema=tool.schema,
        annotations=annotations,
    )


def _error(message: str) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=f"stet: error: {message}")], is_error=True
    )
