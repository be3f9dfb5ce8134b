"""Scanning: the gate's rules, detect-secrets on what they leave, JSON decoding, the cache."""

from __future__ import annotations

from dataclasses import replace

from stet_lsp.core.lines import LineIndex
from stet_lsp.gate import dslayer
from stet_lsp.gate.cache import DEFAULT_CACHE, ResultCache, chunk_key
from stet_lsp.gate.config import GateConfig
from stet_lsp.gate.engine import RuleScanner, rule_set
from stet_lsp.gate.findings import Finding, finding_for
from stet_lsp.gate.jsonaware import LiteralIndex, decode_with_offsets, snap_to_literal
from stet_lsp.gate.prefilter import AnchorHit
from stet_lsp.gate.spans import Span, merge_spans

JSON_SUFFIXES = (".json", ".jsonl", ".ndjson")
CHUNK_SIZE = 256 * 1024
# Escapes this close to an anchor may hide or split a secret: decode that literal.
_ESCAPE_LOOKBEHIND = 64
_ESCAPE_LOOKAHEAD = 256
# How much of an escaped literal around an anchor is decoded and scanned (a key block fits).
_DECODE_BEFORE = 512
_DECODE_AFTER = 2048
_BLOCK_ANCHORS = {"-----begin": 72 * 1024, "private-lines:": 20 * 1024}


def is_json_path(path: str | None) -> bool:
    return path is not None and path.lower().endswith(JSON_SUFFIXES)


def scan_text(
    text: str,
    *,
    config: GateConfig | None = None,
    path: str | None = None,
    json_mode: bool | None = None,
    cache: ResultCache | None = DEFAULT_CACHE,
) -> list[Finding]:
    """Every secret in `text`, in order. JSON-aware for .json/.jsonl paths or when told."""
    spans = detect_spans(text, config=config, path=path, json_mode=json_mode, cache=cache)
    lines = LineIndex(text)
    return [finding_for(span, text, lines) for span in spans]


def detect_spans(
    text: str,
    *,
    config: GateConfig | None = None,
    path: str | None = None,
    json_mode: bool | None = None,
    cache: ResultCache | None = DEFAULT_CACHE,
) -> list[Span]:
    config = config or GateConfig()
    as_json = is_json_path(path) if json_mode is None else json_mode
    filename = path or ("artifact.json" if as_json else "artifact.txt")
    spans: list[Span] = []
    for offset, chunk in _chunks(text, as_json):
        key = chunk_key(chunk, config.fingerprint, as_json) if cache is not None else ""
        found = cache.get(key, config.cache_dir) if cache is not None else None
        if found is None:
            found = tuple(_scan_chunk(chunk, config, as_json, filename))
            if cache is not None:
                cache.put(key, found, config.cache_dir)
        spans.extend(span.shifted(offset) for span in found)
    return spans


def _chunks(text: str, as_json: bool) -> list[tuple[int, str]]:
    """JSON lines split between records (a record never spans lines); other text stays whole,
    since a key block or a multi-line value may cross any line boundary."""
    if not as_json or len(text) <= CHUNK_SIZE:
        return [(0, text)]
    chunks = []
    start = 0
    while start < len(text):
        cut = text.find("\n{", start + CHUNK_SIZE)
        end = len(text) if cut < 0 else cut + 1
        chunks.append((start, text[start:end]))
        start = end
    return chunks


def _scan_chunk(text: str, config: GateConfig, as_json: bool, filename: str) -> list[Span]:
    keywords = dslayer.DS_ANCHORS if config.use_detect_secrets else ()
    scanner = RuleScanner(
        text,
        rule_set(config.strict, config.env_names, keywords),
        strict=config.strict,
        allowlist=config.allowlist,
    )
    spans = scanner.run()
    if config.use_detect_secrets:
        spans += dslayer.scan_windows(
            text,
            [*scanner.keyword_hits, *scanner.unmatched_prefixes],
            strict=config.strict,
            covered=spans,
            allowlist=config.allowlist,
            filename=filename,
            priority=len(scanner.rules.rules),
        )
    if as_json:
        spans = _json_spans(text, spans, scanner.hits, config, filename)
    return merge_spans(spans)


def _json_spans(
    text: str, raw_spans: list[Span], hits: list[AnchorHit], config: GateConfig, filename: str
) -> list[Span]:
    spans = _snapped_to_literals(text, raw_spans)
    decoded_until = -1
    for hit, anchor in hits:
        if hit < decoded_until:
            continue
        if text.find("\\", max(0, hit - _ESCAPE_LOOKBEHIND), hit + _ESCAPE_LOOKAHEAD) < 0:
            continue
        after = _BLOCK_ANCHORS.get(anchor, _DECODE_AFTER)
        start, end = _literal_around(text, hit, after)
        start = max(start, hit - _DECODE_BEFORE)
        decoded_until = end - _ESCAPE_LOOKAHEAD
        decoded = decode_with_offsets(text[start:end])
        if decoded is None:
            continue
        value, offsets = decoded
        for span in _scan_chunk(value, config, False, filename):
            spans.append(
                replace(span, start=start + offsets[span.start], end=start + offsets[span.end])
            )
    return spans


def _snapped_to_literals(text: str, raw_spans: list[Span]) -> list[Span]:
    """Raw spans trimmed to whole escape sequences inside their string literals."""
    if not raw_spans:
        return []
    literals = LiteralIndex(text, LineIndex(text))
    spans = []
    for span in raw_spans:
        literal = literals.literal_at(span.start)
        if literal is None:
            spans.append(span)
            continue
        snapped = snap_to_literal(literal, span.start, span.end)
        if snapped is not None:
            spans.append(replace(span, start=snapped[0], end=snapped[1]))
    return spans


def _literal_around(text: str, offset: int, after: int) -> tuple[int, int]:
    """Content bounds of the JSON string holding `offset`, found locally (bounded search)."""
    floor = max(
        0, offset - _DECODE_BEFORE, text.rfind("\n", max(0, offset - _DECODE_BEFORE), offset) + 1
    )
    start = offset
    while True:
        quote = text.rfind('"', floor, start)
        if quote < 0:
            start = floor
            break
        if _escaped(text, quote):
            start = quote
            continue
        start = quote + 1
        break
    ceiling = min(len(text), offset + after)
    newline = text.find("\n", offset, ceiling)
    ceiling = newline if newline >= 0 else ceiling
    end = offset
    while True:
        quote = text.find('"', end, ceiling)
        if quote < 0:
            return start, ceiling
        if not _escaped(text, quote):
            return start, quote
        end = quote + 1


def _escaped(text: str, index: int) -> bool:
    backslashes = 0
    while index - backslashes > 0 and text[index - backslashes - 1] == "\\":
        backslashes += 1
    return backslashes % 2 == 1
