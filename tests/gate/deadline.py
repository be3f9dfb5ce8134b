"""The time limit of every hostile-input test: the test fails, instead of hanging the suite,
when the gate runs past it.

An alarm signal (SIGALRM) interrupts the main thread even inside a regular expression: the
regex engine checks for signals as it runs. A thread joined with a timeout cannot do that:
the regex holds the GIL, so `join(timeout)` only returns once the regex has finished. Tests
run in the main thread under pytest. Limits are generous (a few seconds): they guard against
a hang or a quadratic blow-up on slow CI machines, they are not speed targets.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

import pytest

T = TypeVar("T")


@contextmanager
def time_limit(seconds: float, what: str = "hostile input") -> Iterator[None]:
    """Fails the test when the block runs longer than `seconds`: interrupted by an alarm on
    POSIX in the main thread; elsewhere, checked when the block ends."""
    started = time.monotonic()
    alarm = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    if not alarm:
        yield
        elapsed = time.monotonic() - started
        if elapsed > seconds:
            pytest.fail(f"{what} took {elapsed:.1f} s (limit {seconds} s)")
        return

    def expire(signum: int, frame: object) -> None:
        # pytest's Failed is a BaseException: no `except Exception` in the gate swallows it.
        pytest.fail(f"{what} still running after {time.monotonic() - started:.1f} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def within(seconds: float, function: Callable[[], T], what: str = "hostile input") -> T:
    """`function()` under `time_limit(seconds)`."""
    with time_limit(seconds, what):
        return function()
