"""A long scan on two cores (stet_lsp/gate/parallel.py): a forked helper scans every other
chunk; the results are those of one process, in order, whatever the helper does."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from stet_lsp.gate.parallel import can_fork, chunk_results

pytestmark = pytest.mark.skipif(not can_fork(), reason="a forked helper needs Linux, one thread")

CHUNKS = [f"chunk {index}\n" for index in range(9)]


def _who(chunk: str) -> tuple[str, int]:
    return chunk.upper(), os.getpid()


def test_the_helper_takes_every_other_chunk_and_answers_in_order() -> None:
    results = list(chunk_results(lambda: CHUNKS, _who, parallel=True))
    assert [chunk for chunk, _ in results] == CHUNKS
    assert [upper for _, (upper, _) in results] == [chunk.upper() for chunk in CHUNKS]
    pids = [pid for _, (_, pid) in results]
    assert set(pids[0::2]) == {os.getpid()}
    helper = set(pids[1::2])
    assert len(helper) == 1 and os.getpid() not in helper


def test_without_parallel_every_chunk_is_scanned_here() -> None:
    results = list(chunk_results(lambda: CHUNKS, _who, parallel=False))
    assert {pid for _, (_, pid) in results} == {os.getpid()}


def test_a_helper_that_fails_leaves_its_chunks_to_this_process() -> None:
    parent = os.getpid()

    def failing_in_the_helper(chunk: str) -> tuple[str, int]:
        if os.getpid() != parent and chunk == CHUNKS[5]:
            raise RuntimeError("the helper fails here")
        return _who(chunk)

    results = list(chunk_results(lambda: CHUNKS, failing_in_the_helper, parallel=True))
    assert [upper for _, (upper, _) in results] == [chunk.upper() for chunk in CHUNKS]
    pids = [pid for _, (_, pid) in results]
    assert pids[1] != parent and pids[3] != parent  # answered before it failed
    assert pids[5] == parent and pids[7] == parent  # done here after


def test_an_error_in_a_chunk_is_raised_as_scanning_alone_raises_it() -> None:
    def broken(chunk: str) -> str:
        if chunk == CHUNKS[3]:
            raise ValueError("chunk 3 cannot be scanned")
        return chunk

    with pytest.raises(ValueError, match="chunk 3"):
        list(chunk_results(lambda: CHUNKS, broken, parallel=True))
    _assert_no_child_left()


def test_stopping_early_stops_the_helper() -> None:
    def slow(chunk: str) -> str:
        if os.getpid() != parent:
            import time

            time.sleep(0.2)
        return chunk

    parent = os.getpid()
    results = chunk_results(lambda: CHUNKS, slow, parallel=True)
    assert next(results)[0] == CHUNKS[0]
    results.close()
    _assert_no_child_left()


def _assert_no_child_left() -> None:
    with pytest.raises(ChildProcessError):
        os.waitpid(-1, os.WNOHANG)


def test_the_command_line_scans_a_large_file_in_two_processes_as_in_one(tmp_path: Path) -> None:
    """`stet gate scan` and `redact` on a file over the parallel threshold, as processes:
    the same findings and bytes as the library scanning the text in one process."""
    import gate_corpus

    from stet_lsp.gate import ResultCache, redact_text, scan_text
    from stet_lsp.gate.parallel import MIN_PARALLEL_SIZE

    text, planted = gate_corpus.transcript(MIN_PARALLEL_SIZE + (1 << 19), seed=11, plant_every=60)
    source = tmp_path / "t.jsonl"
    source.write_text(text, encoding="utf-8")
    stet = [sys.executable, "-m", "stet_lsp"]
    scanned = subprocess.run(
        [*stet, "gate", "scan", str(source), "--json"], capture_output=True, text=True, cwd=tmp_path
    )
    import json

    reports = json.loads(scanned.stdout)["findings"]
    expected = scan_text(text, path=str(source), cache=ResultCache())
    assert [(r["rule"], r["line"], r["column"]) for r in reports if r["rule"] != "home-path"] == [
        (f.rule, f.line, f.column) for f in expected if f.rule != "home-path"
    ]
    assert len(planted) > 10
    out = tmp_path / "out.jsonl"
    subprocess.run([*stet, "gate", "redact", str(source), "-o", str(out)], check=True, cwd=tmp_path)
    assert out.read_text(encoding="utf-8") == redact_text(text, path=str(source), cache=None).text


def test_a_helper_that_read_other_text_is_not_believed() -> None:
    """A file changed while it was read: the helper's chunks are not the ones scanned here,
    so its answers are dropped and this process scans the rest."""
    parent = os.getpid()

    def chunks() -> list[str]:
        if os.getpid() == parent:
            return CHUNKS
        return [chunk.replace("chunk", "CHANGED") for chunk in CHUNKS]

    results = list(chunk_results(chunks, _who, parallel=True))
    assert [upper for _, (upper, _) in results] == [chunk.upper() for chunk in CHUNKS]
    assert {pid for _, (_, pid) in results} == {parent}


def test_when_no_process_can_be_forked_the_scan_runs_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused() -> int:
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(os, "fork", refused)
    results = list(chunk_results(lambda: CHUNKS, _who, parallel=True))
    assert [upper for _, (upper, _) in results] == [chunk.upper() for chunk in CHUNKS]
    assert {pid for _, (_, pid) in results} == {os.getpid()}
