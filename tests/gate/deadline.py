"""The time limit of every hostile-input test: the test fails, instead of hanging the suite,
when the gate runs past it.

The limit counts processor time, not the clock's: a machine loaded several times over (CI
runners share their cores, pytest-xdist runs tests side by side) runs a linear scan later,
not longer, so only work that grows out of bounds (a loop that never ends, a quadratic
blow-up, catastrophic backtracking) reaches it. A profiling timer (SIGPROF, which counts
the processor time of every thread of the process) interrupts the main thread even inside a
regular expression: the regex engine checks for signals as it runs. A thread joined with a
timeout cannot do that: the regex holds the GIL, so `join(timeout)` only returns once the
regex has finished. Tests run in the main thread under pytest.

A block that waits (on a pipe, a lock, a process) uses no processor time: an alarm on the
clock (SIGALRM), ten times the limit and at least a minute, ends it still. A process the
block forks (a long scan's helper, gate/parallel.py) inherits neither timer: the time of
each child waited for is added when the block ends, so a helper that ran too long fails the
test then (one that never ends keeps the block waiting until the clock's alarm).

Limits are generous: they guard against hangs and blow-ups, they are not speed targets
(those live in bench/).
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

import pytest

T = TypeVar("T")

CLOCK_FACTOR = 10
MIN_CLOCK_SECONDS = 60.0


def processor_time() -> float:
    """Seconds of processor time used by this process and by the children it waited for."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


@contextmanager
def time_limit(
    seconds: float, what: str = "hostile input", *, clock_seconds: float | None = None
) -> Iterator[None]:
    """Fails the test when the block uses more than `seconds` of processor time: interrupted
    by a profiling timer on POSIX in the main thread, else checked when the block ends; and
    when it runs `clock_seconds` on the clock (by default `CLOCK_FACTOR` times the limit, at
    least `MIN_CLOCK_SECONDS`), interrupted by an alarm on POSIX."""
    clock = clock_seconds or max(CLOCK_FACTOR * seconds, MIN_CLOCK_SECONDS)
    started = processor_time()
    timers = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()

    # pytest's Failed is a BaseException: no `except Exception` in the gate swallows it.
    def over_time(signum: int, frame: object) -> None:
        used = processor_time() - started
        pytest.fail(
            f"{what} still running after {used:.1f} s of processor time (limit {seconds} s)"
        )

    def over_clock(signum: int, frame: object) -> None:
        pytest.fail(f"{what} not done after {clock} s on the clock (waiting on something?)")

    if timers:
        previous_profiling = signal.signal(signal.SIGPROF, over_time)
        previous_alarm = signal.signal(signal.SIGALRM, over_clock)
        signal.setitimer(signal.ITIMER_PROF, seconds)
        signal.setitimer(signal.ITIMER_REAL, clock)
    try:
        yield
    finally:
        if timers:
            signal.setitimer(signal.ITIMER_PROF, 0)
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGPROF, previous_profiling)
            signal.signal(signal.SIGALRM, previous_alarm)
    used = processor_time() - started
    if used > seconds:
        pytest.fail(f"{what} took {used:.1f} s of processor time (limit {seconds} s)")


def within(seconds: float, function: Callable[[], T], what: str = "hostile input") -> T:
    """`function()` under `time_limit(seconds)`."""
    with time_limit(seconds, what):
        return function()
