"""Calls that must end: a test fails, rather than hangs, when one does not.

The limit counts the processor time of the thread that runs the call, not the clock's: a
machine loaded several times over (CI runners share their cores, pytest-xdist runs tests
side by side) runs a linear scan later, not longer, so only work that grows out of bounds (a
loop that never ends, a quadratic blow-up) reaches it. A call that waits (on a FIFO, a lock)
uses no processor time: the clock, ten times the limit and at least a minute, ends it still.
Limits guard against hangs and blow-ups; they are not speed targets (those live in bench/).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TypeVar, cast

import pytest

T = TypeVar("T")

CLOCK_FACTOR = 10
MIN_CLOCK_SECONDS = 60.0
POLL_SECONDS = 0.05


def thread_clock(thread: threading.Thread) -> Callable[[], float | None]:
    """Reads the processor time `thread` has used so far, None where it cannot be read (no
    per-thread clock on this platform, or the thread has ended)."""
    try:
        clock = time.pthread_getcpuclockid(cast(int, thread.ident))
    except (AttributeError, OSError):
        return lambda: None

    def read() -> float | None:
        try:
            return time.clock_gettime(clock)
        except OSError:
            return None

    return read


def within(seconds: float, function: Callable[[], T], *, clock_seconds: float | None = None) -> T:
    """Run `function`, failing (not hanging) when it uses more than `seconds` of processor
    time, or runs `clock_seconds` on the clock (by default `CLOCK_FACTOR` times the limit, at
    least `MIN_CLOCK_SECONDS`): in a daemon thread, so a call stuck on a FIFO cannot keep the
    test run from ending either. The thread's time is read while it runs where the platform
    has a clock per thread, and always by the thread itself when the call returns."""
    clock = clock_seconds or max(CLOCK_FACTOR * seconds, MIN_CLOCK_SECONDS)
    outcome: list[tuple[bool, object]] = []
    used: list[float] = []

    def call() -> None:
        started = time.thread_time()
        try:
            outcome.append((True, function()))
        except BaseException as error:
            outcome.append((False, error))
        used.append(time.thread_time() - started)

    worker = threading.Thread(target=call, daemon=True)
    started = time.monotonic()
    worker.start()
    processor_time = thread_clock(worker)  # a thread's clock starts at zero
    while worker.is_alive():
        worker.join(POLL_SECONDS)
        so_far = processor_time()
        if so_far is not None and so_far > seconds:
            pytest.fail(f"still running after {so_far:.1f} s of processor time (limit {seconds} s)")
        if time.monotonic() - started > clock:
            pytest.fail(f"not done after {clock} s on the clock (waiting on something?)")
    if used and used[0] > seconds:
        pytest.fail(f"took {used[0]:.1f} s of processor time (limit {seconds} s)")
    finished, value = outcome[0]
    if not finished:
        raise cast(BaseException, value)
    return cast(T, value)
