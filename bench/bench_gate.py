"""Benchmark of the redaction gate: speed against detect-secrets alone, cache, recall, FPs.

Run: python bench/bench_gate.py [--size-mb 10]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # gate_corpus
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import gate_corpus
from detect_secrets.core.secrets_collection import SecretsCollection
from detect_secrets.settings import default_settings

from stet_lsp.gate import GateConfig, ResultCache, redact_text, scan_text

MB = 1_000_000


def timed(function, *args, repeat=1, **kwargs):  # type: ignore[no-untyped-def]
    """The result and the best wall time of `repeat` runs (the machine may be shared)."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        result = function(*args, **kwargs)
        best = min(best, time.perf_counter() - start)
    return result, best


def fresh_cache_redact(text: str, **kwargs):  # type: ignore[no-untyped-def]
    return redact_text(text, cache=ResultCache(), **kwargs)


def detect_secrets_scan(text: str, suffix: str) -> list[str]:
    """detect-secrets as its own command line uses it: every plugin, default filters."""
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "artifact" + suffix)
        Path(path).write_text(text, encoding="utf-8")
        with default_settings():
            collection = SecretsCollection()
            collection.scan_file(path)
        return [secret.secret_value or "" for _, secret in collection]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size-mb", type=float, default=10.0)
    parser.add_argument("--ds-slice-mb", type=float, default=1.0)
    options = parser.parse_args()

    text, planted = gate_corpus.transcript(int(options.size_mb * MB))
    size = len(text.encode("utf-8")) / MB
    print(f"transcript: {size:.2f} MB of JSONL, {len(planted)} planted secrets")

    # One-time set-up (compiling patterns, loading detect-secrets' plugins) is reported apart.
    warm_up = '{"t": "password = \\"Warm9Up7Value\\" ghp_x"}\n'
    _, setup_seconds = timed(redact_text, warm_up, path="w.jsonl", cache=ResultCache())
    print(f"one-time set-up: {setup_seconds:.3f} s")
    result, gate_seconds = timed(fresh_cache_redact, text, path="events.jsonl", repeat=3)
    gate_rate = size / gate_seconds
    print(f"gate (scan + redact, cold cache): {gate_seconds:.3f} s = {gate_rate:.1f} MB/s")
    _, own_seconds = timed(
        fresh_cache_redact,
        text,
        path="events.jsonl",
        config=GateConfig(use_detect_secrets=False),
        repeat=3,
    )
    print(f"gate without the detect-secrets layer: {size / own_seconds:.1f} MB/s")
    cache = ResultCache()
    scan_text(text, path="events.jsonl", cache=cache)
    _, rescan_seconds = timed(scan_text, text, path="events.jsonl", cache=cache, repeat=3)
    print(f"re-scan of the unchanged file (cache): {rescan_seconds * 1000:.1f} ms")

    missed = sum(bool(gate_corpus.surviving_fragments(result.text, parts)) for parts in planted)
    print(f"planted in transcript: {len(planted) - missed}/{len(planted)} fully redacted")

    slice_text = text[: int(options.ds_slice_mb * MB)]
    slice_text = slice_text[: slice_text.rfind("\n") + 1]
    slice_size = len(slice_text.encode("utf-8")) / MB
    _, ds_seconds = timed(detect_secrets_scan, slice_text, ".jsonl")
    ds_rate = slice_size / ds_seconds
    _, gate_slice_seconds = timed(scan_text, slice_text, path="events.jsonl", cache=ResultCache())
    print(
        f"detect-secrets alone (all plugins, default filters) on a {slice_size:.2f} MB slice: "
        f"{ds_seconds:.3f} s = {ds_rate:.2f} MB/s "
        f"(the full {size:.0f} MB would take ~{size / ds_rate:.0f} s; the gate on the same "
        f"slice: {gate_slice_seconds:.3f} s)"
    )
    print(f"speed ratio gate / detect-secrets: {gate_rate / ds_rate:.0f}x")

    positives = gate_corpus.positive_cases()
    negatives = gate_corpus.negative_cases()
    redacted = 0
    ds_detected = 0
    for case in positives:
        config = GateConfig(env_names=case.env_names)
        output = redact_text(case.text, config=config, path=case.path).text
        redacted += not gate_corpus.surviving_fragments(output, case.secrets)
        ds_detected += bool(detect_secrets_scan(case.text, Path(case.path).suffix))
    touched = sum(redact_text(n.text, path=n.path).text != n.text for n in negatives)
    ds_touched = sum(bool(detect_secrets_scan(n.text, Path(n.path).suffix)) for n in negatives)
    print(
        f"corpus recall (fully redacted): {redacted}/{len(positives)} = "
        f"{100 * redacted / len(positives):.1f}%  "
        f"[detect-secrets alone flags anything in {100 * ds_detected / len(positives):.1f}%]"
    )
    print(
        f"corpus false positives (negatives touched): {touched}/{len(negatives)} = "
        f"{100 * touched / len(negatives):.1f}%  "
        f"[detect-secrets alone: {100 * ds_touched / len(negatives):.1f}%]"
    )
    for name, value, target in (
        ("gate MB/s", gate_rate, 30.0),
        ("ratio", gate_rate / ds_rate, 50.0),
        ("recall %", 100 * redacted / len(positives), 98.0),
    ):
        print(
            f"target {name}: {value:.1f} vs {target:.0f}: {'met' if value >= target else 'MISSED'}"
        )
    fp = 100 * touched / len(negatives)
    print(f"target FP %: {fp:.1f} vs 3: {'met' if fp <= 3 else 'MISSED'}")


if __name__ == "__main__":
    main()
