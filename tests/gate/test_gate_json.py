"""JSON and JSONL: decoded scanning, spans mapped back, structure kept."""

import base64
import json
import random
import re
import string

import gate_corpus
import pytest

from stet_lsp.gate import GateConfig, redact_text, scan_text
from stet_lsp.gate.jsonaware import decode_with_offsets

RNG = random.Random(11)


def ghp() -> str:
    return "ghp_" + gate_corpus.pick(RNG, gate_corpus.ALNUM, 36)


@pytest.mark.parametrize(
    "template",
    [
        "line one\n{secret}\nline three",
        'curl -H "Authorization: token {secret}"',
        "tab\t{secret}\ttab",
        "https://user:{password}@example.com/",
        "emoji 😀 then {secret}",
        "unicode é{secret}",
    ],
)
def test_secrets_inside_escaped_strings(template: str) -> None:
    secret, password = ghp(), gate_corpus.pick(RNG, gate_corpus.ALNUM, 20)
    value = template.format(secret=secret, password=password)
    for ensure_ascii in (True, False):
        raw = json.dumps({"content": value, "n": 1}, ensure_ascii=ensure_ascii) + "\n"
        redacted = redact_text(raw, path="events.jsonl").text
        decoded = json.loads(redacted)
        assert secret not in decoded["content"] and password not in decoded["content"]
        assert decoded["n"] == 1 and set(decoded) == {"content", "n"}


def test_escaped_slashes_in_urls() -> None:
    password = gate_corpus.pick(RNG, gate_corpus.ALNUM, 20)
    raw = '{"url": "postgres:\\/\\/app:' + password + '@db\\/app"}'
    redacted = redact_text(raw, path="x.json").text
    assert password not in redacted
    assert json.loads(redacted)["url"] == "postgres://app:[REDACTED:url-password#1]@db/app"


def test_private_key_in_service_account_json() -> None:
    document, secrets = gate_corpus._gcp_service_account(RNG)
    pretty = json.dumps(json.loads(document), indent=2)
    redacted = redact_text(pretty, path="sa.json").text
    assert not gate_corpus.surviving_fragments(redacted, secrets)
    data = json.loads(redacted)
    assert data["private_key"] == "[REDACTED:private-key#1]\n"
    assert data["client_email"] == "ci@demo-project.iam.gserviceaccount.com"


def test_findings_point_into_the_raw_text() -> None:
    secret = ghp()
    raw = json.dumps({"text": f"a\nb {secret}"})
    [finding] = scan_text(raw, path="e.json")
    assert raw[finding.offset : finding.end_offset] == secret
    assert finding.column == raw.index(secret)


def test_broken_jsonl_lines_are_still_scanned() -> None:
    secret = ghp()
    raw = '{"ok": 1}\n{"broken": "' + secret + "\n" + json.dumps({"t": secret}) + "\n"
    redacted = redact_text(raw, path="e.jsonl").text
    assert secret not in redacted
    assert json.loads(redacted.splitlines()[2]) == {"t": "[REDACTED:github-token#1]"}


@pytest.mark.parametrize(
    "raw",
    ["plain", "a\\nb", "\\u00e9\\ud83d\\ude00x", '\\\\\\/\\"', "\\ud800 lone", ""],
)
def test_decode_with_offsets_matches_json(raw: str) -> None:
    decoded = decode_with_offsets(raw)
    assert decoded is not None
    text, offsets = decoded
    assert text == json.loads(f'"{raw}"')
    assert len(offsets) == len(text) + 1 and offsets[-1] == len(raw)
    assert offsets == sorted(offsets)


def test_invalid_escape_is_not_decoded() -> None:
    assert decode_with_offsets("bad \\x escape") is None


@pytest.mark.parametrize("indent", [None, 2])
def test_a_span_over_key_value_pairs_lands_in_the_values(indent: int | None) -> None:
    password = base64.b64encode(gate_corpus.pick(RNG, gate_corpus.ALNUM, 24).encode()).decode()
    token = base64.b64encode(gate_corpus.pick(RNG, gate_corpus.ALNUM, 40).encode()).decode()
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "data": {"password": password, "api-token": token},
        "metadata": {"name": "app"},
    }
    raw = json.dumps(secret, indent=indent) + "\n"
    redacted = redact_text(raw, path="secret.json").text
    assert json.loads(redacted) == {
        **secret,
        "data": {
            "password": "[REDACTED:kubernetes-secret#1]",
            "api-token": "[REDACTED:kubernetes-secret#2]",
        },
    }


def _quoted(value: object, times: int) -> str:
    """`value` as JSON, then that text as a JSON string, `times` more times."""
    text = json.dumps(value)
    for _ in range(times):
        text = json.dumps(text)
    return text


@pytest.mark.parametrize("times", [1, 2, 3])
@pytest.mark.parametrize("path", ["app.log", "notes.md", "events.jsonl"])
def test_json_quoted_in_a_string_is_decoded_before_it_is_scanned(path: str, times: int) -> None:
    """A log line's payload quoting JSON, a transcript's tool output quoting that log line:
    the assignment `"password": "…"` is only there once the strings are decoded."""
    names = ("password", "api_key", "token", "refresh_token", "passphrase", "Authorization")
    values = {name: gate_corpus.pick(RNG, gate_corpus.ALNUM, 20) for name in names}
    # A line for each name: one that detect-secrets knows would have the line decoded anyway.
    raw = "".join(
        f"2026-01-01T10:00:00Z INFO request body={_quoted({'user': 'bob', name: value}, times)}"
        " status=200\n"
        for name, value in values.items()
    )
    redacted = redact_text(raw, path=path).text
    assert [name for name, value in values.items() if value in redacted] == []
    for line, name in zip(redacted.splitlines(), names, strict=True):
        assert line.startswith("2026-01-01T10:00:00Z INFO request body=")
        payload = line.split("body=", 1)[1].rsplit(" status=", 1)[0]
        for _ in range(times):
            payload = json.loads(payload)
        decoded = json.loads(payload)  # still JSON at every level, its other value whole
        assert decoded["user"] == "bob" and set(decoded) == {"user", name}


@pytest.mark.parametrize(
    ("file", "env_names"),
    [
        ("# hosts\nmachine github.com\n  login octocat\n  password {secret}\n", ()),
        ("# hosts\nmachine api.acme.io login bot password {secret}\n", ()),
        ("DEBUG=false\nACME_PASS={secret}\nPORT=8080\n", ("ACME_PASS",)),
    ],
    ids=["netrc", "netrc-one-line", "configured-name"],
)
def test_a_line_read_from_its_start_is_found_in_a_tool_output_quoted_twice(
    file: str, env_names: tuple[str, ...]
) -> None:
    """A tool's output that is JSON itself (`{"output": "…\\n…"}`) inside a transcript's
    string: a line starts after an escaped newline, whose `n` is no boundary."""
    secret = gate_corpus.pick(RNG, string.ascii_lowercase, 12)
    output = json.dumps({"output": file.format(secret=secret), "metadata": {"exit_code": 0}})
    raw = json.dumps({"type": "function_call_output", "output": output}) + "\n"
    config = GateConfig(env_names=env_names)
    redacted = redact_text(raw, path="events.jsonl", config=config).text
    assert secret[:8] not in redacted and secret[-8:] not in redacted
    assert json.loads(json.loads(redacted)["output"])["metadata"] == {"exit_code": 0}


def test_code_that_quotes_json_keeps_its_placeholders() -> None:
    code = 'print("{\\"token\\": \\"%s\\"}" % token)\nPATTERN = r"\\"password\\": \\"(.*)\\""\n'
    for path in ("app.py", "notes.md"):
        assert redact_text(code, path=path).text == code


@pytest.mark.parametrize(
    "record",
    [
        '{"input_tokens":1234,"cache_read_tokens":56,"token":"__VALUE__"}',
        '{"token":12,"password":"__VALUE__"}',
        "token=1234\napi_token=__VALUE__\n",
        "TOKEN=4921__VALUE__\n",
    ],
)
def test_a_count_assigned_to_a_credential_word_is_passed_over_and_nothing_after_it(
    record: str,
) -> None:
    """A key whose value is a number (a usage record's token counts) is passed over without
    trying the identifier rules; the secrets beside it, and a value that only starts with
    digits, are still found, and the counts stay."""
    secret = "q8Zr2LmX7vN4pK9sT3wY6bH1cJ5dF0gA"
    redacted = redact_text(record.replace("__VALUE__", secret), cache=None).text
    assert secret not in redacted
    assert ("1234" in redacted) == ("1234" in record)


@pytest.mark.parametrize("value", ['Xk9"mQ2vLp8rT4', 'Xk9\\"mQ2vLp8rT4', 'Xk9""mQ2vLp8rT4'])
@pytest.mark.parametrize("times", [0, 1, 2])
def test_a_value_holding_an_escaped_quote_is_redacted_to_its_closing_quote(
    value: str, times: int
) -> None:
    """A JSON document's value holding a quote, written `\\"` (and `\\\\\\"` inside a JSON
    string, and so on), goes whole, up to the quote that closes it: no part of it stays, and
    the JSON around it keeps its structure."""
    text = json.dumps({"password": value, "db": {"port": 5432}})
    for _ in range(times):
        text = json.dumps({"content": text})
    path = "events.jsonl" if times else "config.md"
    redacted = redact_text(text, path=path, cache=None).text
    assert "mQ2vLp8rT4" not in redacted
    for _ in range(times):
        redacted = json.loads(redacted)["content"]
    assert json.loads(redacted) == {
        "password": "[REDACTED:secret-assignment#1]",
        "db": {"port": 5432},
    }


@pytest.mark.parametrize("times", [1, 2])
@pytest.mark.parametrize("path", ["narration.md", "events.jsonl"])
def test_a_value_ending_in_a_backslash_inside_a_json_string_keeps_the_document_whole(
    times: int, path: str
) -> None:
    """A value's own last backslash before its closing quote reads, decoded in place, as an
    escaped quote: the document's `}` after it is not the value's, and stays."""
    text = json.dumps({"secret": "vSf qwJvCJQDs8p\\"})
    for _ in range(times):
        text = json.dumps({"content": text})
    redacted = redact_text(text + "\n", path=path, cache=None).text
    for _ in range(times):
        redacted = json.loads(redacted)["content"]
    assert json.loads(redacted) == {"secret": "[REDACTED:ds-secret-keyword#1]"}


MARKER_ONE = re.compile(r"\[REDACTED:[a-z0-9-]+#1\]")
# A quote then a blank later in the string, a value ending in an escaped backslash, and an
# escaped backslash then an escaped quote (`\\\"`).
ESCAPED_VALUES = [
    'Xk9"mQ2vLp8rT4wZ',
    'Xk9"mQ2vLp8 rT4wZq',
    "Xk9mQ2vLp8rT4\\",
    'Xk9mQ2vLp8rT4\\"Zq',
]


@pytest.mark.parametrize("value", ESCAPED_VALUES)
@pytest.mark.parametrize("times", [0, 1, 2])
@pytest.mark.parametrize("path", ["notes.md", "config.json", "events.jsonl"])
@pytest.mark.parametrize("nested", [False, True])
def test_a_member_value_with_escaped_quotes_or_backslashes_goes_whole_and_alone(
    value: str, times: int, path: str, nested: bool
) -> None:
    """A JSON member's value is its string's whole content, to its real closing quote, under
    one marker: found in a .json file and a JSONL line as in text, nothing left of it, and
    nothing taken after it (`\\\\"` closes the string after an escaped backslash), whatever the
    strings it is written inside (compact, as a tool writes it)."""
    document: dict[str, object] = {"password": value, "x": "y"}
    if nested:
        document = {"type": "x", "input": document}
    text = json.dumps(document, separators=(",", ":"))
    for _ in range(times):
        text = json.dumps({"content": text}, separators=(",", ":"))
    redacted = redact_text(text + "\n", path=path, cache=None).text
    assert "mQ2vLp8" not in redacted and "rT4" not in redacted
    for _ in range(times):
        redacted = json.loads(redacted)["content"]
    shown = json.loads(redacted)
    if nested:
        assert shown["type"] == "x"
        shown = shown["input"]
    assert set(shown) == {"password", "x"} and shown["x"] == "y"
    assert MARKER_ONE.fullmatch(shown["password"])


@pytest.mark.parametrize(
    "line",
    [
        '{"msg": "say \\"hi\\"", "password": "", "note": "a \\"quoted\\" word"}',
        '{"password": "\\"${DB_PASS}\\""}',
        '{"password": "\\"\\""}',
        '{"title": "the \\"password\\" field", "path": "D:\\\\build\\\\out\\\\app.log"}',
    ],
)
@pytest.mark.parametrize("path", ["notes.md", "config.json", "events.jsonl"])
def test_json_with_escaped_quotes_and_no_credential_keeps_its_text(line: str, path: str) -> None:
    for text in (line, json.dumps({"content": line})):
        assert redact_text(text + "\n", path=path, cache=None).text == text + "\n"


@pytest.mark.parametrize("path", ["c.json", "events.jsonl"])
def test_a_member_value_a_rule_covers_only_in_part_is_left_to_detect_secrets(path: str) -> None:
    """detect-secrets skips a key's value only where the gate's own span reaches its closing
    quote: a token's rule ends at the token, and the rest of the value went on in clear."""
    token = ghp()
    line = json.dumps({"type": "x", "input": {"password": f"{token}.Xk9mQ2vLp8rT4wZ"}}) + "\n"
    redacted = redact_text(line, path=path, cache=None).text
    assert token not in redacted and "Xk9mQ2vLp8rT4wZ" not in redacted, redacted
    assert json.loads(redacted)["input"]["password"].startswith("[REDACTED:")
