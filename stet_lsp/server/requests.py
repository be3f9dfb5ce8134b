"""Command arguments and request errors: Stet's own errors become RequestFailed answers."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from functools import wraps
from typing import Any, TypeVar

from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from stet_lsp.core.errors import StetError

T = TypeVar("T")


class RequestFailed(JsonRpcException):
    """LSP's RequestFailed: the request was valid but could not be carried out."""

    CODE = -32803


def argument(arguments: tuple[Any, ...]) -> Mapping[str, Any]:
    """Stet's commands take one object argument, or none (as a command palette calls them)."""
    if not arguments or arguments == (None,):
        return {}
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
