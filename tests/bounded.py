"""Calls that must end: a test fails, rather than hangs, when one does not."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar, cast

import pytest

T = TypeVar("T")


def within(seconds: float, function: Callable[[], T]) -> T:
    """Run `function`, failing (not hanging) when it takes longer than `seconds`: a daemon
    thread, so a call stuck on a FIFO cannot keep the test run from ending either."""
    outcome: list[tuple[bool, object]] = []

    def call() -> None:
        try:
            outcome.append((True, function()))
        except BaseException as error:
            outcome.append((False, error))

    worker = threading.Thread(target=call, daemon=True)
    worker.start()
    worker.join(seconds)
    if not outcome:
        pytest.fail(f"still running after {seconds}s")
    finished, value = outcome[0]
    if not finished:
        raise cast(BaseException, value)
    return cast(T, value)
