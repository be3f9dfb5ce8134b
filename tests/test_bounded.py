"""The time limit of calls that must end (bounded.py) counts the processor time of the thread
that runs the call: waiting is not counted, unless it outlasts the clock's larger limit."""

from __future__ import annotations

import threading
import time

import pytest
from bounded import within


def spin(seconds: float, stop: threading.Event | None = None) -> None:
    started = time.thread_time()
    while time.thread_time() < started + seconds and not (stop and stop.is_set()):
        pass


def test_a_call_that_waits_is_not_over_its_limit() -> None:
    assert within(0.2, lambda: time.sleep(0.5) or "done") == "done"


def test_a_call_that_waits_too_long_still_ends_on_the_clock() -> None:
    started = time.monotonic()
    with pytest.raises(pytest.fail.Exception, match="on the clock"):
        within(0.2, lambda: time.sleep(30), clock_seconds=0.5)
    assert time.monotonic() - started < 10


@pytest.mark.skipif(
    not hasattr(time, "pthread_getcpuclockid"),
    reason="a thread's processor time is read only as it ends here (no pthread_getcpuclockid)",
)
def test_a_busy_call_past_its_limit_fails_while_it_runs() -> None:
    started = time.monotonic()
    stop = threading.Event()  # the worker spins on after the failure, unless stopped
    try:
        with pytest.raises(pytest.fail.Exception, match="still running"):
            within(0.3, lambda: spin(30, stop), clock_seconds=60)
    finally:
        stop.set()
    assert time.monotonic() - started < 20


def test_a_busy_call_that_ends_past_its_limit_fails() -> None:
    with pytest.raises(pytest.fail.Exception, match="processor time"):
        within(0.2, lambda: spin(0.4))  # may end between two readings of its time


def test_the_call_returns_its_value_or_raises_its_error() -> None:
    assert within(5, lambda: 42) == 42
    with pytest.raises(ZeroDivisionError):
        within(5, lambda: 1 / 0)
