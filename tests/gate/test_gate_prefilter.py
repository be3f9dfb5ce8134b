"""The anchor prefilter and the shortcuts taken for credential names without a value."""

from __future__ import annotations

import json
import random
import string

from deadline import time_limit
from hypothesis import given, settings
from hypothesis import strategies as st

from stet_lsp.gate import GateConfig, ResultCache, redact_text, scan_text
from stet_lsp.gate.dslayer import _is_indirect_reference
from stet_lsp.gate.prefilter import Prefilter, ascii_lower


def _random(length: int, seed: int) -> str:
    rng = random.Random(seed)
    return "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(length))


def test_overlapping_anchors_are_all_found_in_order() -> None:
    prefilter = Prefilter(["secret", "aws_secret", "secret_access_key", "key"])
    assert prefilter.find("x aws_secret_access_key") == [
        (2, "aws_secret"),
        (6, "secret"),
        (6, "secret_access_key"),
        (20, "key"),
    ]


def test_offsets_are_string_offsets_in_non_ascii_text() -> None:
    text = "héllo wörld 🙂 ghp_ and \ud800 secret"
    hits = Prefilter(["ghp_", "secret"]).find(ascii_lower(text))
    assert [(text[offset : offset + len(anchor)], anchor) for offset, anchor in hits] == [
        ("ghp_", "ghp_"),
        ("secret", "secret"),
    ]


def test_anchors_that_are_not_plain_ascii_are_found_too() -> None:
    prefilter = Prefilter(["pässwort", "what?", "token"])
    assert prefilter.find("a pässwort, what? token") == [
        (2, "pässwort"),
        (12, "what?"),
        (18, "token"),
    ]
    value = _random(20, 1)
    result = redact_text(f"PÄSSWORT={value}\n", config=GateConfig(env_names=("PÄSSWORT",)))
    assert value not in result.text
    assert result.findings[0].rule == "env-value"


def test_escaped_quotes_around_a_value_still_reach_the_assignment_rule() -> None:
    value = _random(24, 2)
    line = json.dumps({"type": "tool", "output": f'config:\n  api_key = "{value}"\n'}) + "\n"
    result = redact_text(line * 3, path="events.jsonl", cache=ResultCache())
    assert value not in result.text
    assert all(json.loads(record) for record in result.text.splitlines())


def test_credential_names_without_values_cost_little() -> None:
    usage = '{"usage": {"input_tokens": 1234, "output_tokens": 56, "token_type": "x"}}\n'
    text = usage * 40_000  # 3 MB, 120 000 anchor hits
    with time_limit(5, "credential names"):
        assert scan_text(text, path="events.jsonl", cache=None) == []


_REFERENCE_ALPHABET = "ab_.-=!:()[] \t\x0b\n'\"x1"


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=_REFERENCE_ALPHABET, max_size=60))
def test_the_indirect_reference_filter_answers_as_detect_secrets_does(window: str) -> None:
    from detect_secrets.filters.heuristic import is_indirect_reference

    assert _is_indirect_reference(window) == is_indirect_reference(window)


def test_the_indirect_reference_filter_on_the_lines_it_is_for() -> None:
    from detect_secrets.filters.heuristic import is_indirect_reference

    lines = [
        "secret = get_secret_key()",
        "secret = request.headers['apikey']",
        "token := os.Getenv(name)",
        "password == config[key]",
        'api_key = "9f8e7d6c5b4a39281706f5e4d3c2b1a0"',
        "x" * 990 + " = f(a)",
        "x" * 1001 + " = f(a)",
    ]
    for line in lines:
        assert _is_indirect_reference(line) == is_indirect_reference(line), line


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40))
def test_ascii_lower_keeps_every_offset(text: str) -> None:
    lowered = ascii_lower(text)
    assert len(lowered) == len(text) and lowered.isascii()
    for char, low in zip(text, lowered, strict=True):
        assert low == (char.lower() if char.isascii() else "?")


def test_an_anchor_that_is_not_ascii_is_found_in_the_text_in_either_case() -> None:
    text = "🙂 İx PÄSSWORT=1 and pässwort=2"
    prefilter = Prefilter(["pässwort", "x"])
    hits = prefilter.find(ascii_lower(text), text)
    assert [(offset, anchor) for offset, anchor in hits if anchor == "pässwort"] == [
        (text.index("PÄSSWORT"), "pässwort"),
        (text.index("pässwort"), "pässwort"),
    ]
    assert (text.index("x"), "x") in hits
