"""Provider rules (`stet_lsp.gate.rules_providers`): every format in every context, whole
values redacted, and linear time on near-misses."""

from __future__ import annotations

import random
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager

import gate_corpus
import gate_corpus_providers
import pytest

from stet_lsp.gate import GateConfig, ResultCache, redact_text, scan_text
from stet_lsp.gate.rules import RULES
from stet_lsp.gate.rules_providers import PROVIDER_RULES

PROVIDER_NAMES = {spec[0] for spec in gate_corpus_providers.PROVIDER_FORMATS}
FORMATS = [fmt for fmt in gate_corpus.FORMATS if fmt.name in PROVIDER_NAMES]
SEEDS = (20250101, 7)


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Fail instead of hanging (a guard, not a speed test)."""

    def expire(signum: int, frame: object) -> None:
        raise TimeoutError(f"took over {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def test_provider_rules_are_registered() -> None:
    assert set(PROVIDER_RULES) <= set(RULES)
    assert len(gate_corpus.FORMATS) >= 150
    assert len(FORMATS) == len(gate_corpus_providers.PROVIDER_FORMATS)


def test_provider_rules_are_well_formed() -> None:
    for rule in PROVIDER_RULES:
        assert rule.anchors, rule.name
        assert all(anchor == anchor.lower() for anchor in rule.anchors), rule.name
        assert rule.name == rule.name.lower()
        # A preview shows at most the public prefix, never part of a body.
        if rule.start == "anchor" and rule.prefix:
            assert any(a.startswith(rule.prefix.lower()) for a in rule.anchors), rule.name


@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.name)
def test_provider_format_is_fully_redacted_in_every_context(fmt: gate_corpus.Format) -> None:
    for seed in SEEDS:
        rng = random.Random(f"{seed}:{fmt.name}")
        for context in gate_corpus.CONTEXTS:
            value, secrets = fmt.make(rng)
            path, text = gate_corpus.render(context, fmt, value, rng)
            redacted = redact_text(text, config=GateConfig(), path=path).text
            left = gate_corpus.surviving_fragments(redacted, secrets)
            assert not left, f"{fmt.name} in {context}: {left} survived\n{redacted}"


def test_every_provider_rule_finds_its_format() -> None:
    """Each new rule names at least one corpus format (it is not shadowed or dead)."""
    named: set[str] = set()
    rng = random.Random(11)
    for fmt in FORMATS:
        for context in gate_corpus.CONTEXTS:
            value, _ = fmt.make(rng)
            path, text = gate_corpus.render(context, fmt, value, rng)
            named.update(finding.rule for finding in scan_text(text, path=path))
    missing = {rule.name for rule in PROVIDER_RULES} - named
    assert not missing


def _near_misses(rule_anchor: str, prefix: str) -> Iterator[str]:
    """Long runs of a token charset after the literal, in the cases rules are written in."""
    literals = {rule_anchor, rule_anchor.upper(), prefix or rule_anchor}
    runs = ("A", "a1", "0f", "-_", "+/", "=", " `", ".", "_=", ":")
    for literal in literals:
        for run in runs:
            yield (literal + "_KEY = " + run * 2000)[:6000]
            yield ((literal + run * 40 + " ") * 200)[:6000]


@pytest.mark.parametrize("rule", PROVIDER_RULES, ids=lambda r: f"{r.name}-{r.anchors[0]}")
def test_provider_pattern_is_linear_on_near_misses(rule: object) -> None:
    from stet_lsp.gate.rules import Rule

    assert isinstance(rule, Rule)
    with time_limit(20):
        for anchor in rule.anchors:
            for text in _near_misses(anchor, rule.prefix):
                started = time.perf_counter()
                for _ in rule.pattern.finditer(text):
                    pass
                assert time.perf_counter() - started < 5


def test_one_megabyte_of_provider_near_misses_is_scanned_and_redacted() -> None:
    rng = random.Random(5)
    pieces = []
    for rule in PROVIDER_RULES:
        for anchor in rule.anchors:
            literal = rule.prefix or anchor
            pieces.append(literal + gate_corpus.pick(rng, gate_corpus.ALNUM, rng.randrange(3, 30)))
            pieces.append(anchor.upper() + "_TOKEN=" + "x" * rng.randrange(1, 60))
    line = " ".join(rng.choice(pieces) for _ in range(40_000))[:1_000_000]
    secret = "rnd_" + gate_corpus.pick(rng, gate_corpus.ALNUM, 32)
    with time_limit(120):
        for strict in (False, True):
            result = redact_text(
                line + " " + secret, config=GateConfig(strict=strict), cache=ResultCache()
            )
            assert secret not in result.text
