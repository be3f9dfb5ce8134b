"""Hostile input finishes (no catastrophic backtracking) and is still redacted."""

import json
import random
import re
import time

import gate_corpus
import pytest
from deadline import time_limit, within

from stet_lsp.gate import GateConfig, ResultCache, redact_text, scan_text

RNG = random.Random(3)


def test_one_megabyte_line_of_near_matches() -> None:
    near = [
        "ghp_short ",
        "password=",
        "-----BEGIN RSA PRIVATE KEY-----",
        "://user:",
        "Bearer ",
        "eyJhbGciOi.",
        "api_key" * 7,
        "x" * 50,
        '"\\',
        "AKIA",
        "sk-",
    ]
    line = "".join(RNG.choice(near) for _ in range(60_000))[:1_000_000]
    secret = "ghp_" + gate_corpus.pick(RNG, gate_corpus.ALNUM, 36)
    for strict in (False, True):
        with time_limit(60):
            result = redact_text(
                line + " " + secret, config=GateConfig(strict=strict), cache=ResultCache()
            )
        assert secret not in result.text


def test_ten_megabyte_minified_single_line_json() -> None:
    rng = random.Random(4)
    records = []
    for index in range(32_000):
        records.append({"i": index, "text": gate_corpus.pick(rng, gate_corpus.ALNUM + " \n", 300)})
    secret = "glpat-" + gate_corpus.pick(rng, gate_corpus.ALNUM, 20)
    records[12_345]["text"] += f"\ntoken {secret}"
    raw = json.dumps(records, separators=(",", ":"))
    assert len(raw) > 10_000_000 and "\n" not in raw
    with time_limit(60):
        result = redact_text(raw, path="big.json", cache=ResultCache())
    assert secret not in result.text
    assert json.loads(result.text)[12_345]["text"].endswith("token [REDACTED:gitlab-token#1]")


def test_unterminated_key_blocks_and_quotes() -> None:
    text = ("-----BEGIN PRIVATE KEY-----" + "A" * 5000 + "\n") * 40 + '"' * 100_000
    assert within(10, lambda: scan_text(text, cache=ResultCache()))


def test_binary_looking_text() -> None:
    text = "".join(chr(RNG.randrange(0, 0x2FFF)) for _ in range(200_000))
    within(10, lambda: scan_text(text, cache=ResultCache()))


def test_lines_of_control_sequences_stay_linear() -> None:
    secret = "ghp_" + gate_corpus.pick(RNG, gate_corpus.ALNUM, 36)
    hostile = "\x1b[" + "1;" * 40_000 + "\x1b[" * 20_000 + "m\n"
    coloured = ("\x1b[1;31mE\x1b[0m " * 2_000 + "\n") * 50
    text = hostile + coloured + f"\x1b[32m{secret}\x1b[0m\n"
    for path in ("t.log", "t.jsonl"):
        raw = text if path == "t.log" else json.dumps({"o": text}) + "\n"
        with time_limit(20):
            assert secret not in redact_text(raw, path=path, cache=ResultCache()).text


def test_the_time_limit_interrupts_a_regular_expression() -> None:
    """The limit every hostile test runs under fires inside the regex engine, which holds the
    GIL (a thread joined with a timeout would only return once the regex has finished)."""
    catastrophic = re.compile(r"(a+)+b")
    started = time.monotonic()
    with pytest.raises(pytest.fail.Exception, match="still running"), time_limit(0.5):
        catastrophic.match("a" * 64)
    assert time.monotonic() - started < 5
