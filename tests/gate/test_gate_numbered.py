"""A file as a Read tool shows it (each line after its number and a tab, or `→`), as text and
inside a transcript's JSON: every secret the gate finds in the file itself, it finds there,
also the ones a rule reads over several lines (a netrc entry, a YAML block, a key block)."""

import base64
import json
import random

import gate_corpus
import pytest
from test_gate_providers import framed

from stet_lsp.gate import GateConfig, redact_text


def _numbered(text: str, separator: str) -> str:
    return "".join(f"{n:6}{separator}{line}\n" for n, line in enumerate(text.splitlines(), 1))


@pytest.mark.parametrize("seed", gate_corpus.RUN_SEEDS)
@pytest.mark.parametrize("separator", ["\t", "→"], ids=["tab", "arrow"])
@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_a_file_shown_with_line_numbers_loses_what_the_file_would(
    seed: int, separator: str, as_json: bool
) -> None:
    missed = []
    checked = 0
    for case in gate_corpus.positive_cases(seed):
        if case.context == "json":
            continue  # a transcript's record: not a file anyone reads with numbers
        config = GateConfig(env_names=case.env_names)
        bare = redact_text(case.text, path=case.path, config=config).text
        if gate_corpus.surviving_fragments(bare, case.secrets):
            continue  # the corpus test reports that miss
        checked += 1
        shown = _numbered(case.text, separator)
        text = json.dumps({"output": shown}, ensure_ascii=False) + "\n" if as_json else shown
        redacted = redact_text(text, path="events.jsonl" if as_json else "read.txt", config=config)
        if gate_corpus.surviving_fragments(redacted.text, case.secrets):
            missed.append(f"{case.format} in {case.context}")
        if as_json:
            json.loads(redacted.text)  # still JSON
    assert checked > 1000
    assert missed == [], gate_corpus.seed_note(seed)


@pytest.mark.parametrize("separator", ["\t", "→"], ids=["tab", "arrow"])
@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_an_environment_line_shown_with_its_number_is_still_no_code(
    separator: str, as_json: bool
) -> None:
    # A generated key whose signs read as an expression (`a&v+oes=((i8a`) is an environment
    # file's value at the line's start, as a diff shows it; a line number before the line
    # kept it for code (seed 965852704 of the corpus).
    secret = "cahos2393o&v&v5qh+oes=((i8a$f2=r2ygqal_i820!=yqj1*"
    diff = f"--- a/.env\n+++ b/.env\n@@ -1,2 +1,3 @@\n DEBUG=false\n+SECRET_KEY={secret}\n"
    assert secret not in redact_text(diff, path="read.txt").text
    shown = _numbered(diff, separator)
    text = json.dumps({"output": shown}, ensure_ascii=False) + "\n" if as_json else shown
    redacted = redact_text(text, path="events.jsonl" if as_json else "read.txt").text
    assert not gate_corpus.surviving_fragments(redacted, (secret,)), redacted


@pytest.mark.parametrize(
    "file",
    [
        "machine github.com\n  login octocat\n  password {secret}\n",
        "password: |\n  {secret}\n",
        "- name: DB_PASSWORD\n  value: {secret}\n",
    ],
    ids=["netrc", "yaml-block", "name-value"],
)
def test_a_file_shown_in_ascii_json_loses_a_value_read_from_its_first_line(file: str) -> None:
    # A transcript written with non-ASCII escaped (`\u2192` for the arrow) is decoded line by
    # line: the file's first line starts inside the tool output's string, not at a line start.
    secret = gate_corpus.pick(random.Random(5), gate_corpus.ALNUM, 20)
    shown = _numbered(file.format(secret=secret), "→")
    text = json.dumps({"type": "tool_result", "content": shown}) + "\n"
    assert "\\u2192" in text
    redacted = redact_text(text, path="events.jsonl").text
    assert secret[:8] not in redacted and secret[-8:] not in redacted
    json.loads(redacted)


def _p12_lines() -> list[str]:
    rng = random.Random(47)
    der = bytes([0x30, 0x82, 0x06, 0x1F, 0x02, 0x01, 0x03, 0x30, 0x82, 0x05, 0xE5])
    encoded = base64.b64encode(der + bytes(rng.randrange(256) for _ in range(1000))).decode()
    return [encoded[i : i + 64] for i in range(0, len(encoded), 64)]


_GREP_FILES = {
    "netrc": ("machine h\n  login u\n  password {0}\nmachine g\n", 2),
    "yaml-block": ("  password: |\n    {0}\n\n    {1}\n  app.version: 2\n", 0),
    "name-value": ("        - name: DB_PASSWORD\n          value: {0}\n        - name: X\n", 0),
    "pkcs12": ("p12: |\n" + "".join(f"    {line}\n" for line in _p12_lines()), 1),
}
_GREP_FRAMINGS = {
    # grep -rn -A3 (the match first), -B3 (the match last), one file's -n -A3, and -r -A3
    # without -n (a path alone: a PKCS#12 body's lines need numbers, see the rule).
    "grep -n -A": lambda n, match: (
        f"k8s/deploy-prod.yaml{':' if match else '-'}{n}{':' if match else '-'}"
    ),
    "grep -n -B": lambda n, match: (
        f"./secrets/.netrc{':' if match else '-'}{n}{':' if match else '-'}"
    ),
    "grep -n on one file": lambda n, match: f"{n}{':' if match else '-'}",
    "grep -r without -n": lambda n, match: f"conf/app.yaml{':' if match else '-'}",
}


# Not read (docs/gate.md): a path alone before a PKCS#12 body's lines reads as a YAML key, and
# a context line's `path-machine` without a number as one word, `virtual-machine`.
_GREP_UNREAD = {("pkcs12", "grep -r without -n"), ("netrc", "grep -r without -n")}


@pytest.mark.parametrize(
    ("kind", "framing"),
    [
        (kind, framing)
        for kind in sorted(_GREP_FILES)
        for framing in sorted(_GREP_FRAMINGS)
        if (kind, framing) not in _GREP_UNREAD
    ],
)
def test_a_file_shown_by_grep_loses_a_value_read_over_lines(kind: str, framing: str) -> None:
    """`grep -n -A`/`-B` writes `path:12:` before a match line and `path-13-` before a
    context line: the rules that read a value over several lines read past them, as the key
    block rule does, raw, in a transcript's string and in JSON quoted twice; the lines around
    the value keep their prefixes."""
    file, match_line = _GREP_FILES[kind]
    rng = random.Random(f"grep:{kind}")
    secrets = (
        tuple(_p12_lines())
        if kind == "pkcs12"
        else tuple("Xk9" + gate_corpus.pick(rng, gate_corpus.ALNUM, 17) for _ in range(2))
    )
    lines = file.format(*secrets).splitlines()
    if framing == "grep -n -B":
        match_line = max(i for i, line in enumerate(lines) if secrets[0] in line)
    prefix = _GREP_FRAMINGS[framing]
    shown = "".join(
        f"{prefix(n, i == match_line)}{line}\n" for i, line in enumerate(lines) for n in (i + 12,)
    )
    holding = [i for i, line in enumerate(lines) if any(secret in line for secret in secrets)]
    kept = [
        f"{prefix(i + 12, i == match_line)}{line}"
        for i, line in enumerate(lines)
        if not holding[0] <= i <= holding[-1]
    ]
    for content, path, unquote in framed(shown, "grep.txt"):
        redacted = redact_text(content, path=path).text
        output = unquote(redacted)
        assert gate_corpus.surviving_fragments(output, secrets) == [], output
        assert "[REDACTED:" in output
        assert [line for line in kept if line in output.splitlines()] == kept, output
        assert redact_text(redacted, path=path).text == redacted


def test_a_yaml_key_holding_a_dot_is_no_grep_prefix() -> None:
    """`tls.p12: MII…` and `app.version: 2` read like `path:`: a PKCS#12 body on such a key,
    wrapped, goes whole and the key after it stays."""
    lines = _p12_lines()
    text = f"tls.p12: {lines[0]}\n" + "".join(f"  {line}\n" for line in lines[1:])
    text += "app.version: 2\n"
    assert redact_text(text, path="values.yaml").text == (
        "tls.p12: [REDACTED:pkcs12-content#1]\napp.version: 2\n"
    )
