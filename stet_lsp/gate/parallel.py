"""A long scan on two cores: a forked helper process takes every other chunk.

Scanning a chunk is a pure function of its text and the gate's configuration, so which
process scans it changes nothing: results come back in chunk order, the same as scanning
alone. The helper reads the chunks itself (`chunks` is called once in each process: a file
is read again by offset through the same descriptor, text already in memory is shared by the
fork) and sends each result back through a pipe as it finishes. If the helper fails or dies,
the chunks it did not answer are scanned here, so an error surfaces exactly as it would
without it.

Forking is for a process with one thread on Linux (the command line): a language server's
worker threads, and platforms where fork is unsafe or missing, scan alone.
"""

from __future__ import annotations

import os
import pickle
import signal
import sys
import threading
from collections.abc import Callable, Hashable, Iterable, Iterator
from typing import BinaryIO, NoReturn, TypeVar

Chunk = TypeVar("Chunk", bound=Hashable)
Result = TypeVar("Result")

MIN_PARALLEL_SIZE = 1 << 20
"""Below this many characters (or bytes) a second process costs more than it saves."""


def can_fork() -> bool:
    return sys.platform.startswith("linux") and threading.active_count() == 1


def chunk_results(
    chunks: Callable[[], Iterable[Chunk]],
    work: Callable[[Chunk], Result],
    *,
    parallel: bool,
) -> Iterator[tuple[Chunk, Result]]:
    """(chunk, work(chunk)) for each chunk, in order; with `parallel` (and fork allowed) a
    helper process does the work of every odd-numbered chunk. A chunk is text, or what
    `work` makes its text from (both processes must make the same of it)."""
    if not parallel or not can_fork():
        for chunk in chunks():
            yield chunk, work(chunk)
        return
    mine = iter(chunks())
    first = next(mine, None)
    if first is None:
        return
    # The first chunk is scanned before forking: what it loads (rules, plugins, compiled
    # patterns) is then loaded once, for both processes.
    first_result = work(first)
    started = _start_helper(chunks, work)
    if started is None:  # no process to be had (a process limit, memory): scan alone
        yield first, first_result
        for chunk in mine:
            yield chunk, work(chunk)
        return
    pid, helper_pipe = started
    helper: BinaryIO | None = helper_pipe
    try:
        yield first, first_result
        for index, chunk in enumerate(mine, start=1):
            if index % 2 == 0 or helper is None:
                yield chunk, work(chunk)
                continue
            answer: tuple[Result] | None = _receive(helper, index, hash(chunk))
            if answer is None:  # the helper stopped or read other text: the rest is done here
                helper.close()
                helper = None
                yield chunk, work(chunk)
            else:
                yield chunk, answer[0]
    finally:
        if helper is not None:
            helper.close()
        _stop(pid)


def _start_helper(
    chunks: Callable[[], Iterable[Chunk]], work: Callable[[Chunk], object]
) -> tuple[int, BinaryIO] | None:
    """The helper's process id and the pipe its answers come through; None if it cannot run."""
    try:
        read_end, write_end = os.pipe()
    except OSError:
        return None
    try:
        pid = os.fork()
    except OSError:
        os.close(read_end)
        os.close(write_end)
        return None
    if pid == 0:  # the helper: never returns
        os.close(read_end)
        _serve(chunks, work, write_end)
    os.close(write_end)
    return pid, os.fdopen(read_end, "rb")


def _serve(
    chunks: Callable[[], Iterable[Chunk]], work: Callable[[Chunk], object], fd: int
) -> NoReturn:
    code = 0
    try:
        with os.fdopen(fd, "wb") as out:
            for index, chunk in enumerate(chunks()):
                if index % 2:
                    answer = (index, hash(chunk), work(chunk))
                    pickle.dump(answer, out, protocol=pickle.HIGHEST_PROTOCOL)
                    out.flush()
    except BaseException:  # the parent scans what is left; it reports the error if any
        code = 1
    finally:
        os._exit(code)  # no atexit handlers, no flushing the parent's buffered output twice


def _receive(helper: BinaryIO, index: int, text_hash: int) -> tuple[Result] | None:
    """The helper's answer for chunk `index`, if it read the same text (a file changed while
    it was read gives other chunks: a forked process shares the parent's string hashes)."""
    try:
        answered, answered_hash, result = pickle.load(helper)
    except Exception:  # EOF or a torn message: the helper is gone
        return None
    return (result,) if (answered, answered_hash) == (index, text_hash) else None


def _stop(pid: int) -> None:
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done == 0:  # still scanning (this scan stopped early): not needed any more
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
    except OSError:
        pass
