"""Work-done progress for slow work: shown only when the work runs past PROGRESS_AFTER
seconds, so quick work makes no flicker; a client that refuses progress still gets answers."""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Awaitable
from typing import TYPE_CHECKING, TypeVar

from lsprotocol import types
from pygls.exceptions import JsonRpcException

if TYPE_CHECKING:
    from stet_lsp.server.server import StetServer

T = TypeVar("T")
log = logging.getLogger(__name__)

PROGRESS_AFTER = 1.0
_tokens = itertools.count(1)


class Progress:
    """One piece of slow work. `phase` may be called from any thread (the work itself runs
    in a worker thread); the latest phase is shown as the progress message."""

    def __init__(self, server: StetServer, title: str, message: str | None = None) -> None:
        self._server = server
        self._title = title
        self._message = message
        self._token: str | None = None
        self._loop = asyncio.get_running_loop()

    def phase(self, message: str) -> None:
        self._loop.call_soon_threadsafe(self._show, message)

    async def run(self, work: Awaitable[T]) -> T:
        future = asyncio.ensure_future(work)
        try:
            return await asyncio.wait_for(asyncio.shield(future), PROGRESS_AFTER)
        except TimeoutError:
            pass
        # The answer never waits on the client's answer to the progress token.
        begin = asyncio.ensure_future(self._begin())
        try:
            return await future
        finally:
            begin.cancel()
            if self._token is not None:
                self._server.work_done_progress.end(self._token, types.WorkDoneProgressEnd())
                self._token = None

    def _show(self, message: str) -> None:
        self._message = message
        if self._token is not None:
            self._server.work_done_progress.report(
                self._token, types.WorkDoneProgressReport(message=message)
            )

    async def _begin(self) -> None:
        if not self._server.supports("window", "work_done_progress"):
            return
        token = f"stet-{next(_tokens)}"
        try:
            # Shielded: the work may end first and cancel this, never the request, whose
            # answer may still come.
            await asyncio.shield(self._server.work_done_progress.create_async(token))
        except JsonRpcException as error:  # a client that refuses progress still gets the answer
            log.warning("the client refused a progress token: %s", error.message)
            return
        except Exception:  # a bug: its traceback, and the answer all the same
            log.exception("asking the client for a progress token failed")
            return
        self._token = token
        self._server.work_done_progress.begin(
            token,
            types.WorkDoneProgressBegin(
                title=self._title, message=self._message, cancellable=False
            ),
        )
