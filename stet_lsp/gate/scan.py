"""Scanning: the gate's rules, detect-secrets on what they leave, JSON decoding, the cache."""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace

from stet_lsp.core.lines import LineIndex
from stet_lsp.gate import argv, dslayer, encoded, heuristics
from stet_lsp.gate.ansi import ansi_views
from stet_lsp.gate.cache import DEFAULT_CACHE, ResultCache, chunk_key
from stet_lsp.gate.config import GateConfig
from stet_lsp.gate.engine import RuleScanner, rule_set
from stet_lsp.gate.findings import Finding, finding_for
from stet_lsp.gate.jsonaware import (
    Literal,
    LiteralIndex,
    View,
    decode_with_offsets,
    escape_view,
    literals_between,
    snap_to_literal,
)
from stet_lsp.gate.numbered import numbered_views
from stet_lsp.gate.parallel import MIN_PARALLEL_SIZE, can_fork, chunk_results
from stet_lsp.gate.prefilter import AnchorHit, ascii_lower, prefilter_for
from stet_lsp.gate.repeats import Repeats
from stet_lsp.gate.spans import Span, merge_spans
from stet_lsp.gate.urls import url_views
from stet_lsp.gate.wrapped import extend_wrapped

JSON_SUFFIXES = (".json", ".jsonl", ".ndjson")
CHUNK_SIZE = 256 * 1024
# Escapes this close to an anchor may hide or split a secret: decode that literal.
_ESCAPE_LOOKBEHIND = 64
_ESCAPE_LOOKAHEAD = 256
# How much of an escaped literal around an anchor is decoded and scanned (a key block fits).
_DECODE_BEFORE = 512
_DECODE_AFTER = 2048
_BLOCK_ANCHORS = {
    "-----begin": 72 * 1024,
    "---- begin ssh2": 72 * 1024,
    "private-lines:": 20 * 1024,
}

# Extra literals for the prefilter's one pass (reported as keyword hits, never given to
# detect-secrets): escapes that can hide a token's characters (`\u0067hp_`, `https:\/\/`),
# and a credential-like name ending a string that another string follows
# (`["X-Api-Key", "..."]`, `{"name": "Authorization", "value": "..."}`).
_HIDING_ESCAPES = ("\\u", "\\/")
_NAME_WORDS = (
    "key",
    "token",
    "secret",
    "password",
    "passwd",
    "pwd",
    "auth",
    "authorization",
    "credential",
    "credentials",
    "cookie",
    "signature",
)
_NAME_JOINTS = tuple(
    word + joint for word in _NAME_WORDS for joint in ('", "', '","', '",\n', '",\r', '" ,')
)
_QUOTED_JOINTS = (*_NAME_JOINTS, *argv.JOINTS)
# The same joints in JSON quoted as a string (a tool's output of a JSON file): `key\", \"`.
_ESCAPED_JOINTS = tuple(
    joint.replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r") for joint in _QUOTED_JOINTS
)
# And in JSON quoted twice (a tool's result quoting a JSON record that quotes a document:
# `{"stdout": "{\\"args\\": …}"}`): `key\\\", \\\"`.
_TWICE_ESCAPED_JOINTS = tuple(
    joint.replace("\\", "\\\\").replace('"', '\\"') for joint in _ESCAPED_JOINTS
)
_DOCUMENT_JOINTS = (*_ESCAPED_JOINTS, *_TWICE_ESCAPED_JOINTS)
_JSON_KEYWORDS = (*_HIDING_ESCAPES, *_QUOTED_JOINTS, *_DOCUMENT_JOINTS)
# How many times text quoted as a JSON string inside text is decoded (a transcript's events
# quote a tool's output, which may quote a log line's JSON, which may quote JSON again).
_QUOTED_DEPTH = 3
# Between views scanned as one text (a span found there never runs past its view's end).
_VIEW_SEPARATOR = "\n\n\n"
_MAX_NAME = 96
_MAX_NEIGHBOUR_VALUE = 8192
_NEIGHBOUR_GAP = re.compile(
    r'"[ \t\r\n]{0,32},[ \t\r\n]{0,32}(?:"value"[ \t\r\n]{0,32}:[ \t\r\n]{0,32})?"'
)
# Between two elements of an array, and after a string that is an object's key.
_ELEMENT_GAP = re.compile(r"[ \t\r\n]{0,4096},[ \t\r\n]{0,4096}")
_KEY_COLON = re.compile(r"[ \t\r\n]{0,4096}:")
_PUNCTUATION = re.compile(r'[\s,:{}\[\]"]*+')
_CLOSING_TAG = re.compile(r"</[A-Za-z][A-Za-z0-9-]{0,31}>")
# A keyword, the rest of the JSON key it is in, and the value string's opening quote.
_KEY_VALUE = re.compile(r'[A-Za-z0-9_.\-]{0,64}"[ \t]{0,16}:[ \t]{0,16}"')
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")


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
    """The spans of every secret in `text`. JSON text is scanned in chunks cut between
    records; other text whole (its writer may know where to cut it: `stream.redact_runs`)."""
    config = config or GateConfig()
    as_json = is_json_path(path) if json_mode is None else json_mode
    chunks = split_chunks(text) if as_json else [text]
    spans: list[Span] = []
    offset = 0
    # Without a cache to fill, a long text is scanned on two cores (gate/parallel.py).
    parallel = cache is None and len(text) >= MIN_PARALLEL_SIZE
    if parallel:
        preload(config)
    found_by_chunk = chunk_results(
        lambda: chunks,
        lambda chunk: chunk_spans(chunk, config, path, as_json, cache),
        parallel=parallel,
    )
    for chunk, found in found_by_chunk:
        spans.extend(span.shifted(offset) for span in found)
        offset += len(chunk)
    repeats = Repeats(as_json)
    repeats.add(text, spans)
    if repeats:
        spans = sorted([*spans, *repeats.spans(text, spans)])
    return spans


def chunk_spans(
    chunk: str,
    config: GateConfig,
    path: str | None,
    as_json: bool,
    cache: ResultCache | None = DEFAULT_CACHE,
) -> tuple[Span, ...]:
    """The spans of one chunk (as `split_chunks` cuts JSON; other text is one chunk)."""
    filename = path or ("artifact.json" if as_json else "artifact.txt")
    key = chunk_key(chunk, config.fingerprint, as_json) if cache is not None else ""
    found = cache.get(key, config.cache_dir) if cache is not None else None
    if found is None:
        found = tuple(extend_wrapped(chunk, _scan_chunk(chunk, config, as_json, filename), as_json))
        if cache is not None:
            cache.put(key, found, config.cache_dir)
    return found


def preload(config: GateConfig) -> None:
    """Load what a scan may load on its way (detect-secrets takes a while): called before a
    helper process is forked, it is loaded once, not in each process."""
    if config.use_detect_secrets and can_fork():
        dslayer.load(config.strict)


def split_chunks(text: str) -> list[str]:
    """JSON text cut between records (a record never spans lines) into chunks of about
    CHUNK_SIZE characters; other text stays whole, since a key block or a multi-line value
    may cross any line boundary."""
    return list(stream_chunks((text,)))


def stream_chunks(blocks: Iterable[str]) -> Iterator[str]:
    """`split_chunks` over text that arrives in blocks: the same chunks, whatever the blocks.
    Blocks that are already these chunks (the import serialises its events so) are given back
    as they are, nothing copied."""
    pending = ""
    for block in blocks:
        if len(pending) > CHUNK_SIZE and pending[-1] == "\n" and block[:1] == "{":
            # What is pending holds no cut past CHUNK_SIZE (it would have been cut), so the
            # first one is where it meets the block: it is a chunk, whole.
            yield pending
            pending = block
        else:
            pending = pending + block if pending else block
        start = 0
        while len(pending) - start > CHUNK_SIZE:
            cut = pending.find("\n{", start + CHUNK_SIZE)
            if cut < 0:
                break
            yield pending[start : cut + 1]
            start = cut + 1
        pending = pending[start:]
    if pending:
        yield pending


def _scan_chunk(
    text: str,
    config: GateConfig,
    as_json: bool,
    filename: str,
    percent: bool = True,
    ansi: bool = True,
    depth: int = 0,
) -> list[Span]:
    ds_keywords = dslayer.DS_ANCHORS if config.use_detect_secrets else ()
    own = (*(_JSON_KEYWORDS if as_json else ()), *encoded.KEYWORDS)
    lowered = ascii_lower(text)
    scanner = RuleScanner(
        text,
        rule_set(config.strict, config.env_names, (*ds_keywords, *own)),
        strict=config.strict,
        allowlist=config.allowlist,
        lowered=lowered,
        # JSON quoted in other text is decoded around these hits too (`_quoted_lines`).
        escapes=as_json or (depth < _QUOTED_DEPTH and '\\"' in text),
    )
    spans = scanner.run()
    ds_hits: list[int] = []
    escape_hits: list[int] = []
    name_hits: list[int] = []
    argv_hits: list[int] = []
    quoted_hits: list[int] = []
    encoded_hits: list[tuple[int, int]] = []
    found_at = {span.start: span.end for span in spans} if as_json else {}
    for offset in scanner.keyword_hits:
        first = lowered[offset]
        if as_json and lowered.startswith(_DOCUMENT_JOINTS, offset):
            quoted_hits.append(offset)
        elif first == "\\":
            escape_hits.append(offset)
        elif as_json and _is_name_joint(lowered, offset):
            name_hits.append(offset)
        elif as_json and argv.is_joint(text, lowered, offset):
            argv_hits.append(offset)
        elif (group := encoded.anchor_at(text, offset)) is not None:
            encoded_hits.append((offset, group))
        elif not (as_json and _key_value_found(text, offset, found_at)):
            ds_hits.append(offset)
    if config.use_detect_secrets:
        spans += dslayer.scan_windows(
            text,
            [*ds_hits, *scanner.unmatched_prefixes],
            strict=config.strict,
            covered=spans,
            allowlist=config.allowlist,
            filename=filename,
            priority=len(scanner.rules.rules),
        )
    # The views quote what the text quotes, which the text's own scan decodes (once).
    if percent and "%" in text:
        spans += _views_spans(
            url_views(text),
            lambda joined: _scan_chunk(
                joined, config, False, filename, percent=False, depth=_QUOTED_DEPTH
            ),
        )
    for view in ansi_views(text) if ansi else ():
        spans += _mapped(
            view, _scan_chunk(view.text, config, False, filename, ansi=False, depth=_QUOTED_DEPTH)
        )
    if encoded_hits:
        spans += encoded.encoded_spans(
            text,
            encoded_hits,
            lambda decoded: _scan_chunk(decoded, config, False, filename, depth=_QUOTED_DEPTH),
        )
    if scanner.block_hits and not as_json:  # JSON's strings are decoded, then scanned as text
        spans += _numbered_spans(text, scanner.block_hits, config)
    if as_json:
        spans = _json_spans(
            text,
            spans,
            scanner.hits,
            config,
            filename,
            escape_hits,
            name_hits,
            argv_hits,
            quoted_hits,
        )
    elif depth < _QUOTED_DEPTH and '\\"' in text:
        hits = sorted({*(hit for hit, _ in scanner.hits), *ds_hits})
        spans += _quoted_lines(text, hits, config, filename, depth + 1)
    return merge_spans([_before_closing_tag(text, span) for span in spans])


def _numbered_spans(text: str, hits: list[int], config: GateConfig) -> list[Span]:
    """What the rules that read a value over several lines find in the runs of numbered lines
    (a file as a Read tool shows it) around their anchors `hits`, read without the numbers.
    The other rules found theirs in the text already: a line's number is no part of it."""
    views = numbered_views(text, hits)
    if not views:
        return []
    rules = rule_set(config.strict, config.env_names, multiline_only=True)
    spans = []
    for view in views:
        scanner = RuleScanner(
            view.text,
            rules,
            strict=config.strict,
            allowlist=config.allowlist,
            lowered=ascii_lower(view.text),
            escapes=False,
        )
        spans += _mapped(view, scanner.run())
    return spans


def _before_closing_tag(text: str, span: Span) -> Span:
    """A value never ends in a closing tag: that is markup after it (a narration's `<summary>`
    that ends with a command's password, `<td>…</td>`)."""
    if text[span.end - 1 : span.end] != ">":
        return span
    cut = text.rfind("</", span.start, span.end)
    if cut > span.start and _CLOSING_TAG.fullmatch(text, cut, span.end):
        return span._replace(end=cut)
    return span


def _quoted_lines(
    text: str, hits: list[int], config: GateConfig, filename: str, depth: int
) -> list[Span]:
    """Text that is not JSON may still quote JSON (a log line's `payload="{\\"password\\":
    \\"…\\"}"`), and a JSON string's decoded value may quote it again: each line with an
    escaped quote beside an anchor is decoded once and scanned, to `_QUOTED_DEPTH` levels."""
    quoted = [
        hit
        for hit in hits
        if text.find('\\"', max(0, hit - _ESCAPE_LOOKBEHIND), hit + _ESCAPE_LOOKAHEAD) >= 0
    ]
    if not quoted:
        return []
    spans = _escaped_lines(text, quoted, config, filename, depth)[0]
    return [span._replace(end=_closed_within(text, span.start, span.end)) for span in spans]


def _closed_within(text: str, start: int, end: int) -> int:
    r"""Where a span found in a line decoded once more than it is written ends: at the quote
    that closes the string it starts in, when that quote is in it and no other string at that
    level is. A document's value ending in a backslash (`"Xk9…\\","x"`) decoded reads as an
    escaped quote (`"Xk9…\","x"`), and a value read there runs on over the document's `",`.
    Which quote closes the string at its depth: `dslayer.string_level`, `quote_escapes`. A
    span over several strings (a key block's lines) is left whole."""
    if start == 0 or text[start - 1] != '"':
        return end
    opening = dslayer.string_level(text, start - 1)
    if opening is None:
        return end
    closing = -1
    quote = text.find('"', start, end)
    while quote >= 0:
        escaped = dslayer.quote_escapes(dslayer.backslashes_before(text, quote), opening)
        if escaped is not None and escaped % 2 == 0:
            if closing >= 0:
                return end  # another string of that level: the span runs over several
            closing = quote
        quote = text.find('"', quote + 1, end)
    return end if closing < 0 else closing - opening


def _key_value_found(text: str, offset: int, found: dict[int, int]) -> bool:
    """Whether the keyword at `offset` ends a JSON key (`password": "`) whose whole value a
    span of the gate's rules covers (`found`: where they start -> where they end), up to its
    closing quote: detect-secrets, slow, need not read it again. A span ending before the
    quote (`ghp_…` of `ghp_….Xk9m…`) leaves the rest to it."""
    match = _KEY_VALUE.match(text, offset)
    if match is None:
        return False
    end = found.get(match.end())
    return end is not None and text.startswith('"', end)


def _is_name_joint(lowered: str, offset: int) -> bool:
    """Whether a keyword hit is one of `_NAME_JOINTS` (not a detect-secrets keyword). A
    keyword that is also a name word (`"password": "…"`) is the joint only where a string
    follows its name (`"password", "…"`): a key's value is detect-secrets' to read."""
    return lowered.startswith(_NAME_JOINTS, offset)


def _views_spans(views: list[View], scan: Callable[[str], list[Span]]) -> list[Span]:
    """What `scan` finds in the views, scanned as one text (a text of tokens written in
    escapes holds tens of thousands), mapped back to the raw text. Blank lines part them; a
    span is the view's it starts in, and ends with it."""
    if not views:
        return []
    starts = []
    position = 0
    for view in views:
        starts.append(position)
        position += len(view.text) + len(_VIEW_SEPARATOR)
    mapped = []
    for span in scan(_VIEW_SEPARATOR.join(view.text for view in views)):
        index = bisect.bisect_right(starts, span.start) - 1
        view, base = views[index], starts[index]
        end = min(span.end, base + len(view.text))
        if end > span.start:
            start, end = view.to_raw(span.start - base, end - base)
            mapped.append(span._replace(start=start, end=end))
    return mapped


def _mapped(view: View, spans: list[Span]) -> list[Span]:
    mapped = []
    for span in spans:
        start, end = view.to_raw(span.start, span.end)
        mapped.append(span._replace(start=start, end=end))
    return mapped


def _escaped_lines(
    text: str, escape_hits: list[int], config: GateConfig, filename: str, depth: int = 0
) -> tuple[list[Span], list[tuple[int, int]]]:
    """Every line holding an escape that can hide a token's characters is decoded whole
    (values and keys) and scanned as decoded text; the spans map back to the raw text."""
    spans: list[Span] = []
    ranges: list[tuple[int, int]] = []
    for hit in escape_hits:
        if ranges and hit < ranges[-1][1]:
            continue
        start = text.rfind("\n", 0, hit) + 1
        end = text.find("\n", hit)
        end = len(text) if end < 0 else end
        if ranges and ranges[-1][1] + 1 == start:
            start = ranges.pop()[0]  # runs of escaped lines are decoded together
        ranges.append((start, end))
    for start, end in ranges:
        view = escape_view(text, start, end)
        if view.text != text[start:end]:
            spans += _mapped(view, _scan_chunk(view.text, config, False, filename, depth=depth))
    return spans, ranges


# A name code writes in lower camel case, of three words or more (`oauth2AuthorizationCode`,
# `_fieldTypeEventPropMap`), not ending in digits as a password a person wrote may.
_FIELD_NAME = re.compile(r"[_$]?[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*){2,12}(?<![0-9])")


def _names_a_field(value: str) -> bool:
    """Whether the string after a credential's word in a list is another name of the list
    (an OpenAPI `enum` or `required`, a source map's `names`), not its value."""
    return _FIELD_NAME.fullmatch(value) is not None and heuristics.reads_as_written(value)


def _neighbour_spans(
    text: str, literals: LiteralIndex, hits: list[int], config: GateConfig, filename: str
) -> list[Span]:
    """A credential-like name and the string after it (`["X-Api-Key", "v"]`, `{"name":
    "Authorization", "value": "v"}`) scanned as `name: value`; spans land in the value."""
    pairs: list[tuple[int, list[tuple[Literal, list[int]]]]] = []
    by_line: dict[str, list[tuple[Literal, list[int]]]] = {}
    parts: list[str] = []
    length = 0
    seen: set[int] = set()
    for hit in hits:
        quote = text.find('"', hit, hit + 24)
        if quote < 0:
            continue
        name = literals.literal_at(hit)
        if name is None or name.end != quote or name.start in seen:
            continue
        seen.add(name.start)
        if quote - name.start > _MAX_NAME:
            continue
        gap = _NEIGHBOUR_GAP.match(text, quote)
        if gap is None:
            continue
        value = literals.literal_at(gap.end())
        if value is None or value.start != gap.end():
            continue
        if _is_key(text, value):
            continue  # the object's next key (`{"k": "AUTH_SECRET", "next": 1}`), no value
        if value.end - value.start > _MAX_NEIGHBOUR_VALUE:
            continue
        decoded_name = name.decoded
        decoded_value = value.decoded
        if decoded_name is None or decoded_value is None:
            continue
        if '"value"' not in gap.group() and _names_a_field(decoded_value[0]):
            continue  # a list of names (`"enum": ["apiKey", "oauth2AuthorizationCode"]`)
        key = decoded_name[0]
        if not key or any(char not in _NAME_CHARS for char in key):
            continue
        line = f"{key}: {decoded_value[0]}\n"
        same = by_line.get(line)  # the same pair again is scanned once
        if same is None:
            same = by_line[line] = []
            pairs.append((length + len(key) + 2, same))
            parts.append(line)
            length += len(line)
        same.append((value, decoded_value[1]))
    if not pairs:
        return []
    synthetic = "".join(parts)
    starts = [pair[0] for pair in pairs]
    # The rules see the name; detect-secrets already had its windows on the raw text.
    own_rules = replace(config, use_detect_secrets=False)
    spans = []
    for span in _scan_chunk(synthetic, own_rules, False, filename):
        index = bisect.bisect_right(starts, span.start) - 1
        if index < 0:
            continue
        base, values = pairs[index]
        for value, offsets in values:
            first = span.start - base
            last = min(span.end - base, len(offsets) - 1)
            if first < 0 or last <= first:
                continue
            spans.append(
                span._replace(start=value.start + offsets[first], end=value.start + offsets[last])
            )
    return spans


def _json_spans(
    text: str,
    raw_spans: list[Span],
    hits: list[AnchorHit],
    config: GateConfig,
    filename: str,
    escape_hits: list[int],
    name_hits: list[int],
    argv_hits: list[int],
    quoted_hits: list[int],
) -> list[Span]:
    spans = list(raw_spans)
    spans += _quoted_document_spans(text, quoted_hits, config, filename)
    decoded_lines, ranges = _escaped_lines(text, escape_hits, config, filename)
    spans += decoded_lines
    range_index = 0
    decoded_until = -1
    decoded_reach = 0
    for hit, anchor in hits:
        after = _BLOCK_ANCHORS.get(anchor, _DECODE_AFTER)
        # A key block's anchor in a shorter window decoded for another anchor (`KEY = (` just
        # before it) is decoded again, as far as its block may reach.
        if hit < decoded_until and after <= decoded_reach:
            continue
        while range_index < len(ranges) and ranges[range_index][1] < hit:
            range_index += 1
        if range_index < len(ranges) and ranges[range_index][0] <= hit:
            continue  # its whole line was decoded and scanned already
        if text.find("\\", max(0, hit - _ESCAPE_LOOKBEHIND), hit + _ESCAPE_LOOKAHEAD) < 0:
            continue
        start, end = _window_around(text, hit, after)
        # A window that reaches the string's end holds all a later hit in it would: only a
        # hit near a window's cut end is read again, with what follows the cut.
        whole = end == len(text) or (text[end] == '"' and not _escaped(text, end))
        decoded_until, decoded_reach = (end if whole else end - _ESCAPE_LOOKAHEAD), after
        spans += _decoded_spans(
            text, start, end, lambda value: _scan_chunk(value, config, False, filename)
        )
    if not spans and not name_hits and not argv_hits:
        return []
    literals = LiteralIndex(text, LineIndex(text))
    if name_hits:
        spans += _neighbour_spans(text, literals, name_hits, config, filename)
    if argv_hits:
        view = argv.ArgvView(literals, argv_hits)
        for span in _scan_chunk(view.text, config, False, filename) if view.text else ():
            spans += view.to_raw(span)
    return _fitted_to_literals(literals, spans)


def _quoted_document_spans(
    text: str, hits: list[int], config: GateConfig, filename: str, depth: int = 0
) -> list[Span]:
    """What `_quoted_json_spans` finds in the JSON strings around `hits` (a joint of names or
    arguments quoted: `key\", \"`, or quoted twice), decoded, mapped back to the raw text."""
    spans: list[Span] = []
    decoded_until = -1
    for hit in hits:
        if hit < decoded_until:
            continue
        start, end = _window_around(text, hit, _DECODE_AFTER)
        # A joint near a cut end is read again in a window of its own; none is past the text.
        decoded_until = end if end == len(text) else end - _ESCAPE_LOOKAHEAD
        spans += _decoded_spans(
            text, start, end, lambda value: _quoted_documents_in(value, config, filename, depth)
        )
    return spans


def _quoted_documents_in(value: str, config: GateConfig, filename: str, depth: int) -> list[Span]:
    """A decoded window's document, and the one it quotes in turn (a joint quoted twice in
    the raw text is quoted once here)."""
    spans = _quoted_json_spans(value, config, filename)
    if depth == 0 and '\\"' in value:
        hits = [hit for hit, _ in prefilter_for(_ESCAPED_JOINTS).find(ascii_lower(value))]
        if hits:
            # A window cut inside an escaped backslash (`\\\\` in the raw text) starts with
            # half of it, which would escape the character after it one level down.
            lead = len(value) - len(value.lstrip("\\"))
            if lead:
                value = " " * (lead + 1) + value[lead + 1 :]
            spans += _quoted_document_spans(value, hits, config, filename, depth + 1)
    return spans


def _window_around(text: str, hit: int, after: int) -> tuple[int, int]:
    """Raw bounds of the part of the JSON string holding `hit` that is decoded to look inside
    it: up to `_DECODE_BEFORE` before the hit and `after` past it."""
    start, end = _literal_around(text, hit, after)
    start = max(start, hit - _DECODE_BEFORE)
    if start > 0 and _escaped(text, start):
        # Cut after an escape's backslash, `\nPASS: …` would decode as `nPASS: …`, a name
        # no verdict line has; the window takes the escape whole.
        start -= 1
    return start, end


def _decoded_spans(
    text: str, start: int, end: int, scan: Callable[[str], list[Span]]
) -> list[Span]:
    """What `scan` finds in `text[start:end]` decoded as a JSON string's content, mapped back
    to raw offsets."""
    decoded = decode_with_offsets(text[start:end])
    if decoded is None:
        return []
    value, offsets = decoded
    return [
        span._replace(start=start + offsets[span.start], end=start + offsets[span.end])
        for span in scan(value)
    ]


def _quoted_json_spans(value: str, config: GateConfig, filename: str) -> list[Span]:
    """JSON quoted in a string (a tool's output of a JSON file, `kubectl -o json`): a
    credential's name and the string after it, and argument lists, read as in the document
    itself. A window may start inside a string, where its quotes would pair wrongly: its
    first line (a minified document's only one) is read from a place outside any string, the
    start of a joint's array or name."""
    if '",' not in value and '" ,' not in value:
        return []
    lowered = ascii_lower(value)
    name_hits: list[int] = []
    argv_hits: list[int] = []
    for hit, _ in prefilter_for(_QUOTED_JOINTS).find(lowered):
        if _is_name_joint(lowered, hit):
            name_hits.append(hit)
        elif argv.is_joint(value, lowered, hit):
            argv_hits.append(hit)
    if not name_hits and not argv_hits:
        return []
    # Even a `{` or `[` there may be inside a string: the window is cut where it is.
    line_end = value.find("\n")
    first = len(value) if line_end < 0 else line_end + 1
    for hit in sorted(hit for hit in (*name_hits, *argv_hits) if hit < first):
        synced = _outside_strings_before(value, hit)
        if synced is not None:
            first = synced
            break
    name_hits = [hit for hit in name_hits if hit >= first]
    argv_hits = [hit for hit in argv_hits if hit >= first]
    if not name_hits and not argv_hits:
        return []
    document = " " * first + value[first:]  # same offsets, no quote before `first`
    literals = LiteralIndex(document, LineIndex(document))
    spans = _neighbour_spans(document, literals, name_hits, config, filename) if name_hits else []
    if argv_hits:
        view = argv.ArgvView(literals, argv_hits)
        for span in _scan_chunk(view.text, config, False, filename) if view.text else ():
            spans += view.to_raw(span)
    return _fitted_to_literals(literals, spans)


def _outside_strings_before(value: str, hit: int) -> int | None:
    """Where the string that a joint at `hit` closes opens, or, when it is an element of an
    array of strings, that array's `[`: a place outside any string, whatever came before it.
    None: its opening quote is not in `value`."""
    closing = value.find('"', hit)
    start = _opening_quote(value, closing) if closing >= 0 else None
    if start is None:
        return None
    while True:
        position = _skip_blanks_back(value, start - 1)
        if position >= 0 and value[position] == "[":
            return position
        if position < 0 or value[position] != ",":
            return start
        position = _skip_blanks_back(value, position - 1)
        if position < 0 or value[position] != '"' or _escaped(value, position):
            return start
        previous = _opening_quote(value, position)
        if previous is None:
            return start
        start = previous


def _opening_quote(value: str, closing: int) -> int | None:
    """The quote opening the string that the quote at `closing` ends (its content holds no
    quote but escaped ones)."""
    position = _unescaped_quote_before(value, closing)
    return position if position >= 0 else None


def _unescaped_quote_before(text: str, position: int, floor: int = 0) -> int:
    """The last quote before `position`, from `floor` on, that no backslash escapes (-1)."""
    quote = text.rfind('"', floor, position)
    while quote >= 0 and _escaped(text, quote):
        quote = text.rfind('"', floor, quote)
    return quote


def _skip_blanks_back(value: str, position: int) -> int:
    while position >= 0 and value[position] in " \t":
        position -= 1
    return position


def _fitted_to_literals(literals: LiteralIndex, spans: list[Span]) -> list[Span]:
    """Spans trimmed to whole escape sequences inside string literals; a span that runs over
    several strings (a key block as an array of lines) becomes one span per string, over
    consecutive elements of one array only: never into a key or past the array."""
    fitted = []
    for span in spans:
        literal = literals.literal_at(span.start)
        if literal is None:
            fitted += _fitted_to_values(literals, span)
            continue
        if span.end <= literal.end:
            pieces = [literal]
        else:
            pieces = _array_run(
                literals.text, literals_between(literals.text, literals, span.start, span.end)
            )
        for piece in pieces:
            snapped = snap_to_literal(piece, span.start, span.end)
            if snapped is not None:
                fitted.append(span._replace(start=snapped[0], end=snapped[1]))
    return fitted


def _array_run(text: str, pieces: list[Literal]) -> list[Literal]:
    """The first literal and those after it that continue the same array: only a comma and
    whitespace before each, and no `:` after it (an object's key)."""
    run = pieces[:1]
    for piece in pieces[1:]:
        if _ELEMENT_GAP.fullmatch(text, run[-1].end + 1, piece.start - 1) is None:
            break
        if _is_key(text, piece):
            break
        run.append(piece)
    return run


def _fitted_to_values(literals: LiteralIndex, span: Span) -> list[Span]:
    """A span from outside a string (a rule that takes `"key": "value"` pairs) over values
    and JSON punctuation only: one span per value string, never the keys. Anything else (a
    broken line, a bare number) stays as it is."""
    text = literals.text
    covered = literals_between(text, literals, span.start, span.end)
    values = [piece for piece in covered if not _is_key(text, piece)]
    if not values:
        return [span]
    position = span.start
    for piece in covered:
        if _PUNCTUATION.fullmatch(text, position, max(position, piece.start - 1)) is None:
            return [span]
        position = piece.end + 1
    if position < span.end and _PUNCTUATION.fullmatch(text, position, span.end) is None:
        return [span]
    fitted = []
    for piece in values:
        snapped = snap_to_literal(piece, span.start, span.end)
        if snapped is not None:
            fitted.append(span._replace(start=snapped[0], end=snapped[1]))
    return fitted


def _is_key(text: str, literal: Literal) -> bool:
    return _KEY_COLON.match(text, literal.end + 1) is not None


def _literal_around(text: str, offset: int, after: int) -> tuple[int, int]:
    """Content bounds of the JSON string holding `offset`, found locally (bounded search)."""
    floor = max(
        0, offset - _DECODE_BEFORE, text.rfind("\n", max(0, offset - _DECODE_BEFORE), offset) + 1
    )
    quote = _unescaped_quote_before(text, offset, floor)
    start = floor if quote < 0 else quote + 1
    ceiling = min(len(text), offset + after)
    newline = text.find("\n", offset, ceiling)
    cut = newline < 0 and ceiling < len(text)
    ceiling = newline if newline >= 0 else ceiling
    end = offset
    while True:
        quote = text.find('"', end, ceiling)
        if quote < 0:
            return start, _line_end(text, ceiling) if cut else ceiling
        if not _escaped(text, quote):
            return start, quote
        end = quote + 1


def _line_end(text: str, at: int) -> int:
    """Where the line of a JSON string that a window cut at `at` ends: before its next
    escaped line break (`\\n`), newline or quote, at most _DECODE_BEFORE characters on, so a
    value across the cut is read whole (`Passed: compiler/c2/TestTopCastIIOn|Undetected….java`
    read without its extension was no test's path); `at` when none is that near."""
    reach = min(len(text), at + _DECODE_BEFORE)
    ends = [text.find(mark, at, reach) for mark in ("\\n", "\n", '"')]
    end = min((found for found in ends if found >= 0), default=at)
    while end > at and _escaped(text, end):
        end -= 1  # `\\\\n` is an escaped backslash and an `n`; `\\"` a quote in the string
    return end


def _escaped(text: str, index: int) -> bool:
    backslashes = 0
    while index - backslashes > 0 and text[index - backslashes - 1] == "\\":
        backslashes += 1
    return backslashes % 2 == 1
