"""Scanning and redacting text as it is read, a chunk at a time: a file of any size costs the
memory of one chunk. JSON text is cut as `scan.split_chunks` cuts it, so the results are the
ones scanning the whole text at once gives; other text is read whole (a key block or a
multi-line value may cross any line)."""

from __future__ import annotations

import codecs
import contextlib
import os
from collections.abc import Callable, Generator, Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import BinaryIO, TypeVar

from stet_lsp.core.errors import StetError
from stet_lsp.core.lines import LineIndex
from stet_lsp.gate.config import GateConfig
from stet_lsp.gate.findings import Finding, finding_for
from stet_lsp.gate.homepaths import RULE as HOME_PATH_RULE
from stet_lsp.gate.homepaths import home_path_summary
from stet_lsp.gate.parallel import MIN_PARALLEL_SIZE, chunk_results
from stet_lsp.gate.redact import Numbering, apply_redaction, used_numbers
from stet_lsp.gate.repeats import Repeats
from stet_lsp.gate.report import RedactionReport
from stet_lsp.gate.scan import chunk_spans, is_json_path, preload, stream_chunks

BLOCK_SIZE = 1 << 20


def text_blocks(stream: BinaryIO, block_size: int = BLOCK_SIZE) -> Iterator[str]:
    """The stream's bytes as text blocks (UTF-8; undecodable bytes kept as surrogates, so
    writing the text back gives the same bytes)."""
    return _decoded(iter(lambda: stream.read(block_size), b""))


def stream_blocks(stream: BinaryIO) -> tuple[Callable[[], Iterator[str]], bool]:
    """The stream's text from its start at each call, and whether two processes may scan it
    (gate/parallel.py). A large regular file qualifies: it is read by offset, so there is no
    shared file position; any other stream is read by seeking, in this process only."""
    try:
        fd = stream.fileno()
        size = os.fstat(fd).st_size
    except (OSError, ValueError):  # io.BytesIO and the like have no descriptor
        fd, size = -1, 0
    if fd < 0 or not hasattr(os, "pread"):

        def again() -> Iterator[str]:
            stream.seek(0)
            return text_blocks(stream)

        return again, False

    def by_offset() -> Iterator[bytes]:
        offset = 0
        while block := os.pread(fd, BLOCK_SIZE, offset):
            offset += len(block)
            yield block

    return lambda: _decoded(by_offset()), size >= MIN_PARALLEL_SIZE


def utf16_blocks(stream: BinaryIO) -> Callable[[], Iterator[str]]:
    """A UTF-16 text's blocks (see `cli._utf16`), decoded from its start at each call; a code
    unit left alone decodes as U+FFFD."""

    def again() -> Iterator[str]:
        stream.seek(0)
        decoder = codecs.getincrementaldecoder("utf-16")("replace")  # the mark read, not kept
        while block := stream.read(BLOCK_SIZE):
            yield decoder.decode(block)
        if tail := decoder.decode(b"", final=True):
            yield tail

    return again


def _decoded(reads: Iterable[bytes]) -> Iterator[str]:
    decoder = codecs.getincrementaldecoder("utf-8")("surrogateescape")
    for block in reads:
        yield decoder.decode(block)
    if tail := decoder.decode(b"", final=True):
        yield tail


def _chunks(blocks: Iterable[str], path: str) -> Iterable[str]:
    return stream_chunks(blocks) if is_json_path(path) else ("".join(blocks),)


@dataclass(frozen=True)
class ChunkFindings:
    """One chunk's findings, positioned in the whole text."""

    text: str
    offset: int
    """Where the chunk starts in the whole text."""
    line: int
    """The line it starts on in the whole text."""
    findings: list[Finding]
    home_paths: int
    first_home_path: tuple[int, int] | None
    """(line, column) in the whole text."""


def scan_chunks(
    blocks: Callable[[], Iterable[str]],
    config: GateConfig,
    path: str,
    *,
    home_paths: bool = True,
    parallel: bool = False,
) -> Generator[ChunkFindings, None, None]:
    """Each chunk of the text with its findings, positions counted from the text's start;
    with `home_paths`, also how many home paths it holds and where the first is. `blocks`
    gives the text; with `parallel` it is called a second time, by a helper process that
    scans every other chunk (gate/parallel.py)."""
    as_json = is_json_path(path)

    def work(chunk: str) -> _Scanned:
        return _scan(chunk, config, path, as_json, home_paths)

    if parallel:
        preload(config)
    line_base = 0
    offset_base = 0
    results = chunk_results(lambda: _chunks(blocks(), path), work, parallel=parallel)
    for chunk, (found, count, first_position, line_count) in results:
        findings = [_shifted(finding, line_base, offset_base) for finding in found]
        position = None
        if first_position is not None:
            position = (first_position[0] + line_base, first_position[1])
        yield ChunkFindings(chunk, offset_base, line_base, findings, count, position)
        line_base += line_count
        offset_base += len(chunk)


_Scanned = tuple[list[Finding], int, "tuple[int, int] | None", int]
"""A chunk's findings and first home path (positions in the chunk), its home paths and lines."""


def _scan(chunk: str, config: GateConfig, path: str, as_json: bool, home_paths: bool) -> _Scanned:
    spans = chunk_spans(chunk, config, path, as_json, cache=None)
    count, first = home_path_summary(chunk, json_text=as_json) if home_paths else (0, None)
    lines = LineIndex(chunk) if spans or first is not None or "\r" in chunk else None
    if lines is None:
        return [], count, None, chunk.count("\n")
    findings = [finding_for(span, chunk, lines) for span in spans]
    position = lines.position(first) if first is not None else None
    return findings, count, position, len(lines.starts) - 1


@dataclass(frozen=True)
class FileFindings:
    findings: list[Finding]
    home_paths: int
    first_home_path: tuple[int, int] | None


def scan_blocks(
    blocks: Callable[[], Iterable[str]], config: GateConfig, path: str, *, parallel: bool = False
) -> FileFindings:
    """Every secret of the text, a value found once wherever it stands (`repeats`: `blocks`
    is read once more when a value was found)."""
    findings: list[Finding] = []
    homes = 0
    first: tuple[int, int] | None = None
    repeats = Repeats(is_json_path(path))
    chunks: list[_Read] = []
    for part in scan_chunks(blocks, config, path, parallel=parallel):
        repeats.add_findings(part.text, part.findings, part.offset)
        chunks.append(_Read.of(part))
        homes += part.home_paths
        first = first or part.first_home_path
    for read in chunks:
        findings += read.findings
    if repeats:
        for read, chunk in _again(chunks, blocks, path):
            findings += read.shifted(repeats.findings(chunk, read.local()))
        findings.sort(key=lambda finding: finding.offset)
    return FileFindings(findings, homes, first)


def redact_blocks(
    blocks: Callable[[], Iterable[str]],
    config: GateConfig,
    path: str,
    write: Callable[[str], object],
    *,
    parallel: bool = False,
    known: Sequence[tuple[str, list[Finding]]] = (),
    earlier: Earlier | None = None,
    redacted: list[tuple[str, str]] | None = None,
) -> RedactionReport:
    """Write the redacted text, chunk by chunk, once every chunk is scanned: a value found
    in a later chunk is a secret in an earlier one too (`repeats`). `blocks` is read twice (a
    third time by a parallel scan's helper): to scan, collecting the marker numbers the text
    uses already (so redacting twice changes nothing and no marker is reused), then to write.
    Only the findings are kept between the two. `known`: other texts and what was found in
    them (`printed.printed_secrets`), each value redacted wherever it stands in this one.
    `earlier`: given the text as the gate reads it, before any marker (each chunk, in order;
    `blocks` read once more), the values an earlier redaction of the same content held
    redacted, each redacted wherever it stands, under its earlier marker where it is free,
    but for a value found now, whole or within a value found now. `redacted` gains (rule,
    value as the text writes it) of each value redacted wherever it stands in the text."""
    findings: list[Finding] = []
    homes = 0
    repeats = Repeats(is_json_path(path))
    chunks: list[_Read] = []
    used: dict[str, int] = {}
    numbering = Numbering(used)  # the numbers used, as the chunks' scans find them
    for text, found in known:
        repeats.add_known(text, found)
        numbering.know(text, found)
    parts = scan_chunks(blocks, config, path, home_paths=False, parallel=parallel)
    with contextlib.closing(parts):  # a helper still at work stops if this one fails
        for part in parts:
            used_numbers(part.text, used)
            repeats.add_findings(part.text, part.findings, part.offset)
            numbering.know(part.text, part.findings, part.offset)
            chunks.append(_Read.of(part))
    if earlier is not None:
        # The text before any marker of its own: a value found now beside one held redacted
        # before leaves the line as it was then. Fixed replacements (a home path's `~`) are
        # made, as they were then.
        found_now: set[str] = set()

        def drafts() -> Iterator[str]:
            for read, chunk in _again(chunks, blocks, path):
                local = read.local()
                found_now.update(chunk[f.offset : f.end_offset] for f in local)
                yield apply_redaction(chunk, [f for f in local if f.replacement is not None]).text

        held = list(earlier(drafts()))
        for rule, number, value in held:
            if value in found_now or any(value in found for found in found_now):
                # Found now, whole or within a value found now (the first line of a key read
                # between two markers): redacted as it is found, and no value of its own.
                continue
            found = known_value(rule, value)
            repeats.add_known(value, found)
            numbering.know(value, found)
            numbering.keep(rule, value, number)
    for read, chunk in _again(chunks, blocks, path):
        local = read.local()
        extra = repeats.findings(chunk, local)
        result = apply_redaction(chunk, local + extra, path=path, numbering=numbering)
        write(result.text)
        findings += read.findings + read.shifted(extra)
        homes += result.report.tallies.get(HOME_PATH_RULE, 0)
    if redacted is not None:
        redacted += repeats.values()
    return RedactionReport.from_findings(findings, path, {HOME_PATH_RULE: homes})


def known_value(rule: str, value: str) -> list[Finding]:
    """A value known from elsewhere, as a rule's finding of it: its whole text."""
    return [Finding(rule, 0, 0, 0, len(value), "…", 0, len(value))]


Earlier = Callable[[Iterator[str]], Iterable[tuple[str, int, str]]]
"""Given a text before its markers, a chunk at a time, the values an earlier redaction of the
same content held redacted: (rule, number of its marker, value as the text writes it)."""


@dataclass(frozen=True)
class _Read:
    """A scanned chunk, without its text: where it starts, what it held, and how to know it
    again when the text is read once more."""

    offset: int
    lines: int
    length: int
    digest: int
    findings: list[Finding]

    @classmethod
    def of(cls, part: ChunkFindings) -> _Read:
        return cls(part.offset, part.line, len(part.text), hash(part.text), part.findings)

    def local(self) -> list[Finding]:
        """The findings, positioned in the chunk."""
        return [
            f._replace(offset=f.offset - self.offset, end_offset=f.end_offset - self.offset)
            for f in self.findings
        ]

    def shifted(self, found: list[Finding]) -> list[Finding]:
        """Findings positioned in the chunk, positioned in the whole text."""
        return [_shifted(finding, self.lines, self.offset) for finding in found]


def _again(
    chunks: list[_Read], blocks: Callable[[], Iterable[str]], path: str
) -> Iterator[tuple[_Read, str]]:
    """Each scanned chunk with its text, read again; a text that is not the one scanned (a
    file changed meanwhile) is an error, never a wrong redaction."""
    texts = iter(_chunks(blocks(), path))
    for chunk in chunks:
        text = next(texts, None)
        if text is None or len(text) != chunk.length or hash(text) != chunk.digest:
            raise StetError(CHANGED.format(path=path))
        yield chunk, text
    if next(texts, None) is not None:
        raise StetError(CHANGED.format(path=path))


CHANGED = "{path} changed while it was read: its redaction stopped; run it again"


Run = TypeVar("Run", bound=Hashable)


class Carried:
    """What one document's gate found, for another document that shows the same content: the
    narration shows a tool call's command as one line, where a rule may find what the events'
    JSON hides from it. Once the first document is gated (`redact_runs`), `redact_json_lines`
    redacts each value it found in the second, under the first's markers."""

    def __init__(self) -> None:
        self.values = Repeats()
        self.numbering = Numbering({})

    def redact_json_lines(
        self, lines: Iterable[str], path: str, counts: dict[str, int]
    ) -> Iterator[str]:
        """Each line (JSON text) with its copies of the values redacted; `counts` (spans by
        rule) gains them."""
        if not self.values:
            yield from lines
            return
        copies, numbering = self.values.in_json(), self.numbering
        for line in lines:
            found = copies.findings(line, [])
            if found:
                result = apply_redaction(line, found, path=path, numbering=numbering)
                for rule, count in result.report.counts().items():
                    counts[rule] = counts.get(rule, 0) + count
                line = result.text
            yield line


def redact_runs(
    runs: Sequence[Run],
    render: Callable[[Run], str],
    config: GateConfig,
    path: str,
    used: dict[str, int],
    *,
    parallel: bool = False,
    carried: Carried | None = None,
    known: Sequence[tuple[str, list[Finding]]] = (),
) -> Generator[str, None, None]:
    """The redacted text of each run of a document's parts, in order. `render` makes a run's
    text, and must make the same of it in every process: with `parallel`, a helper process
    renders and scans every other run. Each run is scanned on its own, so no secret may
    cross from one run's text into the next (no event's text crosses a narration's parts).
    `used`: the highest marker number of each rule the document may hold already
    (`used_numbers`), so that no marker is reused. A value found in a run is redacted
    wherever it stands again in that run and the runs after it (`repeats`); runs already
    given out are not changed. `carried` keeps what was found, and its markers. `known`: as
    `redact_blocks`'s, values redacted wherever they stand in every run."""
    as_json = is_json_path(path)

    def work(run: Run) -> tuple[str, list[Finding]]:
        text = render(run)
        return text, _scan(text, config, path, as_json, home_paths=False)[0]

    if parallel:
        preload(config)
    numbering = Numbering(used)
    repeats = Repeats(as_json)
    for text, found in known:
        repeats.add_known(text, found)
        numbering.know(text, found)
    if carried is not None:
        carried.values, carried.numbering = repeats, numbering
    for _, (text, findings) in chunk_results(lambda: runs, work, parallel=parallel):
        repeats.add_findings(text, findings)
        found = findings + repeats.findings(text, findings)
        yield apply_redaction(text, found, path=path, numbering=numbering).text


def _shifted(finding: Finding, lines: int, offset: int) -> Finding:
    if not lines and not offset:
        return finding
    return finding._replace(
        line=finding.line + lines,
        end_line=finding.end_line + lines,
        offset=finding.offset + offset,
        end_offset=finding.end_offset + offset,
    )
