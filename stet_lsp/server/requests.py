"""Command arguments and request errors: Stet's own errors become RequestFailed answers."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Collection, Mapping
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


def field(
    args: Mapping[str, Any],
    name: str,
    kind: type[T],
    default: Any = ...,
    *,
    choices: Collection[Any] | None = None,
    minimum: int | None = None,
) -> T:
    """The argument `name` of type `kind` (`default` when left out; required without one),
    one of `choices` or at least `minimum` when given; InvalidParams otherwise."""
    if name not in args or args[name] is None:
        if default is ...:
            raise JsonRpcInvalidParams(f"missing argument {name!r}")
        return default  # type: ignore[no-any-return]
    value = args[name]
    if isinstance(value, str) and "\0" in value:  # no path, id or text of Stet's holds one
        raise JsonRpcInvalidParams(f"argument {name!r} holds a NUL character")
    if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise JsonRpcInvalidParams(f"argument {name!r} must be a whole number")
    if not isinstance(value, kind):
        raise JsonRpcInvalidParams(f"argument {name!r} must be a {kind.__name__}")
    if choices is not None and value not in choices:
        raise JsonRpcInvalidParams(f"argument {name!r} is one of {', '.join(map(str, choices))}")
    if minimum is not None and isinstance(value, int) and value < minimum:
        raise JsonRpcInvalidParams(f"argument {name!r} must be {minimum} or more")
    return value


def answering(handler: Callable[..., Any]) -> Callable[..., Any]:
    """Turn Stet's own errors into a RequestFailed answer with their message (and their
    `reason` as the error's `data.reason`, when they have one)."""
    if inspect.iscoroutinefunction(handler):

        @wraps(handler)
        async def asynchronous(*args: Any, **kwargs: Any) -> Any:
            try:
                return await handler(*args, **kwargs)
            except StetError as error:
                raise failed(error) from None

        return asynchronous

    @wraps(handler)
    def synchronous(*args: Any, **kwargs: Any) -> Any:
        try:
            return handler(*args, **kwargs)
        except StetError as error:
            raise failed(error) from None

    return synchronous


def failed(error: StetError) -> RequestFailed:
    return RequestFailed(str(error), data={"reason": error.reason} if error.reason else None)
