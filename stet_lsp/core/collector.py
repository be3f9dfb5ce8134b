"""Pausing Python's cyclic garbage collector while many small objects are made."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic collector paused for the block: making hundreds of thousands of small
    objects that form no cycles (events, index entries) otherwise triggers full collections
    that cost more than the work. Reference counting still frees everything; the collector
    is re-enabled afterwards if it was on (process-wide: another thread's pause may overlap,
    and the last one out turns it back on)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
