"""Translation between Stet's view (0-based lines, str columns) and LSP's, and request errors."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from functools import wraps
from typing import Any, TypeVar

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from stet_lsp.core.errors import StetError

SOURCE = "stet"
T = TypeVar("T")


class RequestFailed(JsonRpcException):
    """LSP's RequestFailed: the request was valid but could not be carried out."""

    CODE = -32803


def client_position(codec: Any, lines: list[str], line: int, column: int) -> types.Position:
    text = lines[line] if 0 <= line < len(lines) else ""
    return types.Position(line=line, character=codec.client_num_units(text[:column]))


def client_range(
    codec: Any, lines: list[str], line: int, column: int, end_line: int, end_column: int
) -> types.Range:
    return types.Range(
        start=client_position(codec, lines, line, column),
        end=client_position(codec, lines, end_line, end_column),
    )


def line_range(codec: Any, lines: list[str], line: int) -> types.Range:
    """The text of one line, from its first non-blank character."""
    text = lines[line] if 0 <= line < len(lines) else ""
    start = len(text) - len(text.lstrip())
    return client_range(codec, lines, line, start, line, len(text))


def server_line(lines: list[str], position: types.Position) -> int:
    if position.line < 0 or position.line >= max(len(lines), 1):
        raise JsonRpcInvalidParams(
            f"line {position.line} is outside the document ({len(lines)} lines)"
        )
    return position.line


def argument(arguments: tuple[Any, ...]) -> Mapping[str, Any]:
    """Stet's commands take one object argument."""
    if len(arguments) != 1 or not isinstance(arguments[0], Mapping):
        raise JsonRpcInvalidParams('expected one object argument, e.g. {"uri": "file:///…"}')
    return arguments[0]


def field(args: Mapping[str, Any], name: str, kind: type[T], default: Any = ...) -> T:
    if name not in args or args[name] is None:
        if default is ...:
            raise JsonRpcInvalidParams(f"missing argument {name!r}")
        return default  # type: ignore[no-any-return]
    value = args[name]
    if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise JsonRpcInvalidParams(f"argument {name!r} must be a whole number")
    if not isinstance(value, kind):
        raise JsonRpcInvalidParams(f"argument {name!r} must be a {kind.__name__}")
    return value


def answering(handler: Callable[..., Any]) -> Callable[..., Any]:
    """Turn Stet's own errors into a RequestFailed answer with their message."""
    if inspect.iscoroutinefunction(handler):

        @wraps(handler)
        async def asynchronous(*args: Any, **kwargs: Any) -> Any:
            try:
                return await handler(*args, **kwargs)
            except StetError as error:
                raise RequestFailed(str(error)) from None

        return asynchronous

    @wraps(handler)
    def synchronous(*args: Any, **kwargs: Any) -> Any:
        try:
            return handler(*args, **kwargs)
        except StetError as error:
            raise RequestFailed(str(error)) from None

    return synchronous
