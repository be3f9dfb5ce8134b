"""Scanning and redacting as the file is read (stet_lsp/gate/stream.py): the same results as
the whole text at once, whatever the blocks, with marker numbers shared by every chunk."""

import io
import json
import os
import random
from pathlib import Path

import gate_corpus
import pytest

from stet_lsp.cli import main
from stet_lsp.gate import GateConfig, ResultCache, redact_text, scan_text
from stet_lsp.gate.redact import used_numbers
from stet_lsp.gate.scan import CHUNK_SIZE, split_chunks, stream_chunks
from stet_lsp.gate.stream import redact_blocks, redact_runs, scan_blocks, text_blocks


def _text(seed: int) -> str:
    """A multi-chunk transcript with non-ASCII text, CRLF lines and a marker already used
    late in the text (later chunks' numbers must still come after it)."""
    text, _ = gate_corpus.transcript(3 * CHUNK_SIZE, seed=seed, plant_every=40)
    rng = random.Random(seed)
    lines = text.splitlines(keepends=True)
    for index in rng.sample(range(len(lines)), 20):
        lines[index] = lines[index].replace('"', '"é✓', 1)
    lines.insert(len(lines) - 3, '{"note": "[REDACTED:github-token#7] was here"}\r\n')
    return "".join(lines)


@pytest.mark.parametrize("block_size", [1, 7, 4096, 1 << 20])
def test_chunks_do_not_depend_on_the_blocks(block_size: int) -> None:
    text = _text(3)[: CHUNK_SIZE * 2 + 5000]
    blocks = [text[i : i + block_size] for i in range(0, len(text), block_size)]
    if block_size == 1:
        blocks = [*blocks[:2000], text[2000:]]  # one character a block: slow, not different
    assert list(stream_chunks(blocks)) == split_chunks(text)
    assert "".join(split_chunks(text)) == text


def test_blocks_that_are_the_chunks_are_given_back_uncopied() -> None:
    text = _text(4)
    chunks = split_chunks(text)
    assert len(chunks) >= 3
    again = list(stream_chunks(chunks))
    assert again == chunks
    assert all(a is b for a, b in zip(again, chunks, strict=True))
    # Cut elsewhere, or a chunk followed by a block that is not a record's start: the same
    # chunks as the whole text gives.
    pieces = [chunks[0], chunks[1][:10], chunks[1][10:], *chunks[2:]]
    assert list(stream_chunks(pieces)) == chunks
    joined = [chunks[0] + chunks[1][:-1], chunks[1][-1:] + "x", *chunks[2:]]
    assert list(stream_chunks(joined)) == split_chunks("".join(joined))


@pytest.mark.parametrize("parallel", [False, True])
@pytest.mark.parametrize(("seed", "block_size"), [(1, 333), (2, 1 << 16)])
def test_streamed_scan_and_redaction_equal_the_whole_text(
    seed: int, block_size: int, parallel: bool
) -> None:
    """Also with a helper process scanning every other chunk (gate/parallel.py)."""
    text = _text(seed)
    data = text.encode("utf-8")
    assert len(split_chunks(text)) >= 3

    def blocks() -> list[str]:
        return list(text_blocks(io.BytesIO(data), block_size))

    assert "".join(blocks()) == text  # multi-byte characters split between blocks decode whole
    whole = scan_text(text, path="t.jsonl", cache=None)
    streamed = scan_blocks(blocks, GateConfig(), "t.jsonl", parallel=parallel)
    assert streamed.findings == whole
    assert len(whole) > 10

    written: list[str] = []
    report = redact_blocks(blocks, GateConfig(), "t.jsonl", written.append, parallel=parallel)
    expected = redact_text(text, path="t.jsonl", cache=ResultCache())
    assert "".join(written) == expected.text
    assert report.to_dict() == expected.report.to_dict()
    assert "[REDACTED:github-token#8]" in expected.text  # after the #7 the text already had


def test_cli_redacts_a_large_file_as_the_library_does(tmp_path: Path) -> None:
    text = _text(5)
    source = tmp_path / "t.jsonl"
    source.write_bytes(text.encode("utf-8") + b"\xff\xfe broken utf-8\n")
    assert main(["gate", "redact", str(source), "-o", str(tmp_path / "out.jsonl")]) == 0
    original = source.read_bytes().decode("utf-8", "surrogateescape")
    expected = redact_text(original, path=str(source), cache=ResultCache()).text
    assert (tmp_path / "out.jsonl").read_bytes() == expected.encode("utf-8", "surrogateescape")
    assert main(["gate", "redact", str(source), "--in-place"]) == 0
    assert source.read_bytes() == (tmp_path / "out.jsonl").read_bytes()


def test_cli_scan_reports_positions_in_the_whole_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = _text(6)
    source = tmp_path / "t.jsonl"
    source.write_text(text, encoding="utf-8", newline="")
    assert main(["gate", "scan", str(source), "--json"]) == 1
    reported = json.loads(capsys.readouterr().out)["findings"]
    whole = scan_text(text, path=str(source), cache=None)
    secrets = [f for f in reported if f["rule"] != "home-path"]
    assert secrets == [{"path": str(source), **f.to_dict()} for f in whole]
    assert secrets[-1]["line"] > text[: CHUNK_SIZE * 2].count("\n")


@pytest.mark.parametrize("parallel", [False, True])
def test_runs_rendered_and_redacted_apart_give_the_whole_text_redacted(
    parallel: bool, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A narration is rendered, scanned and redacted a run of parts at a time, on two cores
    when long (each process renders only its own runs): the text is the one redacting the
    whole document at once gives, new markers numbered after those it already holds."""
    from stet_lsp.gate import parallel as helper

    if not parallel:
        monkeypatch.setattr(helper, "can_fork", lambda: False)
    records, _ = gate_corpus.transcript(5 * CHUNK_SIZE, seed=11, plant_every=40)
    # As a narration's: the top, then each event's lead lines and block, then the tail.
    parts = ["# Trajectory\n\nThe token was [REDACTED:github-token#7].\n\n## Turns"]
    for step, record in enumerate(records.splitlines(), 1):
        parts.append(f'\n\n<a id="step-{step}"></a>**Step {step} · Tool output**\n\n{record}')
    parts.append("\n\n## Cost\n")
    runs = [range(start, min(start + 40, len(parts))) for start in range(0, len(parts), 40)]
    renders = tmp_path / "renders"

    def render(run: range) -> str:
        with renders.open("a") as log:
            log.write(f"{os.getpid()} {run.start}\n")
        return "".join(parts[number] for number in run)

    whole = "".join(parts)
    used = used_numbers(whole)
    gated = list(redact_runs(runs, render, GateConfig(), "narration.md", used, parallel=parallel))
    expected = redact_text(whole, path="narration.md", cache=None)
    assert len(gated) == len(runs) >= 4
    assert "".join(gated) == expected.text
    assert len(expected.findings) > 20 and "[REDACTED:github-token#8]" in expected.text
    logged = [line.split() for line in renders.read_text().splitlines()]
    assert sorted(int(start) for _, start in logged) == [run.start for run in runs]
    assert len({pid for pid, _ in logged}) == (2 if parallel else 1)
