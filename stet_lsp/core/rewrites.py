"""Writes of a file others write too (a harness's or an MCP client's configuration, the
repository's `info/exclude`): each is made from what the file held when read, is refused when
the file changed meanwhile, and is then made again from a new reading."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import suppress
from typing import TypeVar

from stet_lsp.core.errors import StetError

T = TypeVar("T")

WRITE_ATTEMPTS = 5
"""How often a write is made, in all, while the file changes under it."""


class ChangedWhileWritten(StetError):
    """The file changed between its reading and its writing (the program it configures, an
    editor, another `stet` command): nothing was written over it. Its message says what to do."""


def retried(attempt: Callable[[], T], changed: type[Exception] = ChangedWhileWritten) -> T:
    """`attempt()`, made again (WRITE_ATTEMPTS times in all) while it raises `changed`: each
    attempt reads the file anew. The last attempt's error stands."""
    for _ in range(WRITE_ATTEMPTS - 1):
        with suppress(changed):
            return attempt()
    return attempt()
