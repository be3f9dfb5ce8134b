"""Properties: determinism across processes, idempotence, JSONL validity, no fragment left."""

import json
import random
import subprocess
import sys
from pathlib import Path

import gate_corpus
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stet_lsp.gate import redact_text

REPO = Path(__file__).resolve().parents[2]
FORMATS = [f for f in gate_corpus.FORMATS if not f.env_names]
PROPERTY_SETTINGS = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

filler = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r"),
    max_size=60,
)


@st.composite
def planted(draw: st.DrawFn) -> tuple[str, list[tuple[str, ...]]]:
    """Text with generated secrets between arbitrary filler."""
    rng = random.Random(draw(st.integers(0, 2**32)))
    pieces: list[str] = []
    secrets: list[tuple[str, ...]] = []
    for _ in range(draw(st.integers(1, 4))):
        fmt = draw(st.sampled_from(FORMATS))
        value, parts = fmt.make(rng)
        context = draw(st.sampled_from(["env", "shell", "python", "yaml"]))
        _, text = gate_corpus.render(context, fmt, value, rng)
        pieces += [draw(filler), "\n", text, "\n"]
        secrets.append(parts)
    return "".join(pieces), secrets


@PROPERTY_SETTINGS
@given(planted())
def test_no_fragment_of_a_planted_secret_survives(case: tuple[str, list[tuple[str, ...]]]) -> None:
    text, secrets = case
    redacted = redact_text(text).text
    for parts in secrets:
        assert not gate_corpus.surviving_fragments(redacted, parts)


@PROPERTY_SETTINGS
@given(st.one_of(planted().map(lambda c: c[0]), st.text(max_size=300)))
def test_redaction_is_idempotent(text: str) -> None:
    once = redact_text(text).text
    assert redact_text(once).text == once


@PROPERTY_SETTINGS
@given(planted(), st.lists(st.dictionaries(st.text(max_size=8), filler, max_size=3), max_size=3))
def test_redacted_jsonl_stays_valid_with_the_same_structure(
    case: tuple[str, list[tuple[str, ...]]], extra: list[dict[str, str]]
) -> None:
    text, secrets = case
    records = [{"type": "tool_result", "content": text, "n": 1}, *extra]
    for ensure_ascii in (True, False):
        raw = "".join(json.dumps(r, ensure_ascii=ensure_ascii) + "\n" for r in records)
        redacted = redact_text(raw, path="events.jsonl").text
        # JSON Lines are split on "\n" only (str.splitlines would also split on U+0085).
        decoded = [json.loads(line) for line in redacted.split("\n")[:-1]]
        assert [sorted(r) for r in decoded] == [sorted(r) for r in records]
        for parts in secrets:
            assert not gate_corpus.surviving_fragments(redacted, parts)


_CHILD = """
import sys
from stet_lsp.gate import redact_text
data = sys.stdin.buffer.read().decode("utf-8", "surrogateescape")
path = sys.argv[1] or None
sys.stdout.buffer.write(redact_text(data, path=path).text.encode("utf-8", "surrogateescape"))
"""


def _in_subprocess(text: str, path: str) -> bytes:
    completed = subprocess.run(
        [sys.executable, "-c", _CHILD, path],
        input=text.encode("utf-8", "surrogateescape"),
        capture_output=True,
        check=True,
        cwd=REPO,
        env={"PYTHONHASHSEED": "random", "PATH": ""},
    )
    return completed.stdout


@settings(max_examples=3, deadline=None)
@given(st.lists(planted(), min_size=5, max_size=5))
def test_same_bytes_in_another_process(cases: list[tuple[str, list[tuple[str, ...]]]]) -> None:
    text = "\n".join(c[0] for c in cases)
    jsonl = "".join(json.dumps({"content": c[0]}) + "\n" for c in cases)
    for data, path in ((text, ""), (jsonl, "events.jsonl")):
        here = redact_text(data, path=path or None).text.encode("utf-8", "surrogateescape")
        assert _in_subprocess(data, path) == here
