"""Commands given as lists of arguments: in JSON text the gate reads such a list as the line a
shell shows, so a value finds its flag or name in the element before it."""

import json
import random

import gate_corpus
import pytest

from stet_lsp.gate import ResultCache, redact_text, scan_text

RNG = random.Random(41)


def value() -> str:
    return gate_corpus.pick(RNG, gate_corpus.ALNUM, 22)


V = "{v}"
# Each is redacted as one line of text; given as a list, each must be too.
COMMANDS = [
    ["docker", "login", "-u", "me", "-p", V, "registry.example.com"],
    ["redis-cli", "-a", V, "ping"],
    ["sshpass", "-p", V, "ssh", "build@host"],
    ["gh", "secret", "set", "API_KEY", "--body", V],
    ["curl", "-H", "Authorization:", "Bearer", V, "https://api.example.com"],
    ["curl", "-H", "Authorization: Bearer", V],
    ["az", "login", "-u", "me", "-p", V],
    ["htpasswd", "-b", ".htpasswd", "admin", V],
    ["env", "DB_PASSWORD=", V, "./migrate"],
    ["echo", "token=", V],
    ["echo", "password:", V],
    ["mysql", "-uroot", "-p" + V],
]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda command: " ".join(command[:2]))
@pytest.mark.parametrize("compact", [True, False], ids=["compact", "spaced"])
def test_a_value_in_a_list_of_arguments_is_redacted_as_on_a_command_line(
    command: list[str], compact: bool
) -> None:
    secret = value()
    argv = [part.replace(V, secret) for part in command]
    assert scan_text(" ".join(argv), path="run.sh", cache=ResultCache())
    separators = (",", ":") if compact else (", ", ": ")
    raw = json.dumps({"input": {"command": argv}, "n": 1}, separators=separators) + "\n"

    redacted = redact_text(raw, path="events.jsonl", cache=ResultCache()).text

    assert secret not in redacted
    decoded = json.loads(redacted)  # still JSON, the same list
    kept = decoded["input"]["command"]
    assert len(kept) == len(argv)
    for before, after in zip(argv, kept, strict=True):
        if secret not in before:
            assert after == before  # flags, names and other arguments stay as they are
        else:
            assert "[REDACTED:" in after


def test_an_escaped_value_in_a_list_lands_on_whole_escapes() -> None:
    secret = value()
    escaped = "\\u00" + format(ord(secret[0]), "x") + secret[1:]
    raw = '{"command": ["redis-cli", "-a", "' + escaped + '", "ping"]}\n'

    redacted = redact_text(raw, path="e.jsonl", cache=ResultCache()).text

    assert json.loads(redacted)["command"][:2] == ["redis-cli", "-a"]
    assert secret[1:] not in redacted and "[REDACTED:" in json.loads(redacted)["command"][2]


@pytest.mark.parametrize(
    "argv",
    [
        ["pytest", "-q", "-k", "password_reset", "tests/"],
        ["git", "commit", "-m", "Fix the token refresh"],
        ["grep", "-rn", "Authorization: Bearer", "src/"],
        ["ls", "-la", "/tmp"],
        ["python", "-m", "http.server", "--bind", "127.0.0.1"],
        ["echo", "token=", "$API_TOKEN"],
    ],
    ids=lambda argv: " ".join(argv[:2]),
)
def test_a_list_of_plain_arguments_is_left_alone(argv: list[str]) -> None:
    raw = json.dumps({"command": argv}) + "\n"
    assert redact_text(raw, path="e.jsonl", cache=ResultCache()).text == raw
