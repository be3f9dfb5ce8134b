"""Base64 that decodes to a credential (`echo Z2hwX… | base64 -d`, a key in a `tls.key:` or
`--data` value, JSON naming one): the decoded text is scanned, and what it finds redacts the
whole run.

The prefilter's one pass finds the runs: each prefix below, placed at each of the three
byte offsets a group of base64 can start it at, encodes to characters that depend on the
prefix alone; those are its anchors (case kept: the pass lowercases, a hit is checked
against the text itself). Only a run holding one is decoded, so text without base64
credentials costs nothing more.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable

from stet_lsp.gate.spans import Span

# Prefixes of credentials that rules know by their format (the gate's rules decide on the
# decoded text: a prefix alone redacts nothing).
_PREFIXES = (
    "-----BEGIN ",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "glpat-",
    "xoxb-",
    "xoxp-",
    "xapp-",
    "sk-ant-",
    "sk-proj-",
    "sk_live_",
    "rk_live_",
    "AKIA",
    "npm_",
    "pypi-",
    "hf_",
    # JSON that names a credential (a Docker config's `auths`, a service's settings passed as
    # one value): the key with its quotes, so a longer name (`"auth_time"`) is none.
    '"password"',
    '"passwd"',
    '"secret"',
    '"client_secret"',
    '"token"',
    '"access_token"',
    '"refresh_token"',
    '"auth"',
    '"api_key"',
    '"apiKey"',
    '"private_key"',
)
_ALPHABET = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
# How far a run is followed each side of its anchor (a 4096-bit PEM key is 4.4 KB of it).
_REACH = 16 * 1024


def _anchors() -> dict[str, int]:
    """Each anchor and the index of its first character within a group of four."""
    anchors: dict[str, int] = {}
    for prefix in _PREFIXES:
        data = prefix.encode("ascii")
        for shift in range(3):
            encoded = base64.b64encode(b"\0" * shift + data).decode("ascii")
            first = -(-8 * shift // 6)  # the first character holding only the prefix's bits
            last = (8 * (shift + len(data))) // 6  # one past the last such character
            anchors[encoded[first:last]] = first % 4
    return anchors


ANCHORS = _anchors()
KEYWORDS = tuple(sorted({anchor.lower() for anchor in ANCHORS}))
"""The anchors as the prefilter takes them (lowercased)."""
_LENGTHS = tuple(sorted({len(anchor) for anchor in ANCHORS}))
# What every anchor starts with, as long as the shortest: a hit that starts otherwise (a
# keyword of detect-secrets', `pwd` of `pwd=pwd=…` at every hit) is none of them.
_STARTS = frozenset(anchor[: _LENGTHS[0]] for anchor in ANCHORS)


def anchor_at(text: str, offset: int) -> int | None:
    """The index within its group of four of the anchor at `offset` of `text`, or None when
    none is there (the prefilter's hit was another keyword, or another case of one)."""
    if text[offset : offset + _LENGTHS[0]] not in _STARTS:
        return None
    for length in _LENGTHS:
        first = ANCHORS.get(text[offset : offset + length])
        if first is not None:
            return first
    return None


def encoded_spans(
    text: str,
    hits: list[tuple[int, int]],
    scan: Callable[[str], list[Span]],
) -> list[Span]:
    """For each base64 run holding an anchor (`hits`: its offset and its index within its
    group), a span over the whole run when `scan` finds anything in its decoded text."""
    spans: list[Span] = []
    done_until = -1
    for hit, first in hits:
        if hit < done_until:
            continue
        start, end = _run(text, hit - first)
        done_until = end
        decoded = _decoded(text[start:end])
        if decoded is None:
            continue
        found = scan(decoded)
        if found:
            best = min(found, key=lambda span: span.priority)
            end = _padded_end(text, end)
            spans.append(Span(start, end, best.rule, best.priority))
    return spans


def _run(text: str, group: int) -> tuple[int, int]:
    """The base64 run around the group of four starting at `group`, cut to whole groups."""
    start = group
    floor = max(0, group - _REACH)
    while start - 4 >= floor and all(c in _ALPHABET for c in text[start - 4 : start]):
        start -= 4
    end = group
    ceiling = min(len(text), group + _REACH)
    while end + 4 <= ceiling and all(c in _ALPHABET for c in text[end : end + 4]):
        end += 4
    # A last group padded with `=` (or cut short: its whole characters decode alone).
    rest = 0
    while end + rest < ceiling and rest < 3 and text[end + rest] in _ALPHABET:
        rest += 1
    if rest >= 2:
        end += rest
    return start, end


def _padded_end(text: str, end: int) -> int:
    """`end` past the run's padding (`=` or `==`)."""
    for _ in range(2):
        if text[end : end + 1] != "=":
            break
        end += 1
    return end


def _decoded(run: str) -> str | None:
    """The run's bytes as UTF-8 text, or None (not base64 text: an image, a hash)."""
    whole = run + "=" * (-len(run) % 4)
    try:
        data = base64.b64decode(whole, validate=True)
        return data.decode("utf-8")
    except (binascii.Error, ValueError):
        return None
