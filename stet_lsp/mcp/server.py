"""`stet mcp`: the tools and the brief resource of stet_lsp.mcp.tools, served over stdio with
the MCP SDK's low-level server (the only module of Stet that imports `mcp`).

A tool call runs in a worker thread, one at a time, so the event loop keeps answering while
the style sheet's lock is waited for. Every failure of a call, expected (a StetError: bad
input, a paused sheet, an unknown id) or not, becomes a tool result with `isError` and a
message; the server keeps serving. Nothing is printed to standard output but the protocol.
"""

from __future__ import annotations

import json
import logging
import sys
from typing import Any

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

from stet_lsp import __version__
from stet_lsp.core.errors import StetError
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
        text = json.dumps(result, ensure_ascii=False, indent=2)
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

    return Server(
        SERVER_NAME,
        version=__version__,
        title="Stet style sheet",
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
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

    async def run() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(run)
    return 0


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
