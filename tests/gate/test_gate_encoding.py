"""Encodings: JSON escapes anywhere in a token or key, secrets over several strings (key
blocks as arrays of lines, header names and values as neighbours), percent-encoded URLs."""

import json
import random
from collections.abc import Callable
from pathlib import Path

import gate_corpus
import pygit2
import pytest
from deadline import within
from hypothesis import example, given, settings
from hypothesis import strategies as st

from stet_lsp.cli import main
from stet_lsp.gate import ResultCache, redact_text, scan_text
from stet_lsp.gate.jsonaware import View

RNG = random.Random(29)
ALNUM = gate_corpus.ALNUM


def token() -> str:
    return "ghp_" + gate_corpus.pick(RNG, ALNUM, 36)


def value() -> str:
    return gate_corpus.pick(RNG, ALNUM, 28)


def escape(char: str) -> str:
    return f"\\u{ord(char):04x}"


def line(raw_object_body: str) -> str:
    """A JSONL record from a raw (already escaped) JSON object body."""
    text = "{" + raw_object_body + "}"
    json.loads(text)
    return text + "\n"


Case = tuple[str, str, tuple[str, ...]]
"""(raw JSONL, the rule expected, the sensitive parts)."""


def escaped_first() -> Case:
    secret = token()
    return line('"t": "x ' + escape("g") + secret[1:] + '"'), "github-token", (secret[4:],)


def escaped_last() -> Case:
    secret = token()
    raw = line('"t": "' + secret[:-1] + escape(secret[-1]) + ' y"')
    return raw, "github-token", (secret[4:],)


def escaped_middle() -> Case:
    secret = token()
    raw = line('"t": "' + secret[:15] + escape(secret[15]) + secret[16:] + '"')
    return raw, "github-token", (secret[4:],)


def every_character_escaped() -> Case:
    secret = token()
    return line('"t": "' + "".join(map(escape, secret)) + '"'), "github-token", (secret[4:],)


def escaped_key() -> Case:
    secret = value()
    raw = line('"' + escape("a") + 'pi_key": "' + secret + '", "n": 1')
    return raw, "secret-assignment", (secret,)


def escaped_key_and_value() -> Case:
    secret = value()
    raw = line(
        '"p' + escape("a") + 'ssword": "' + secret[:5] + escape(secret[5]) + secret[6:] + '"'
    )
    return raw, "secret-assignment", (secret,)


def escaped_slashes_in_url() -> Case:
    password = value()
    raw = line('"cmd": "psql https:\\/\\/deploy:' + password + '@db.internal\\/app"')
    return raw, "url-password", (password,)


def surrogate_pairs_next_to_a_token() -> Case:
    secret = token()
    record = {"text": "😀" + secret + "é😀 done"}
    return json.dumps(record, ensure_ascii=True) + "\n", "github-token", (secret[4:],)


def escaped_key_block(kind: str, pretty: bool) -> Callable[[], Case]:
    def make() -> Case:
        block, parts = gate_corpus._pem(kind)(RNG)
        record = {"tool": "write", "key": block.split("\n"), "n": 1}
        text = json.dumps(record, indent=2 if pretty else None) + "\n"
        if pretty:  # a pretty-printed record between two compact ones
            text = json.dumps({"n": 0}) + "\n" + text + json.dumps({"n": 2}) + "\n"
        return text, "private-key", parts

    return make


def authorization_neighbours() -> Case:
    secret = value()
    record = {"args": ["curl", "-H", "Authorization", "Bearer " + secret]}
    return json.dumps(record) + "\n", "bearer-token", (secret,)


def api_key_header_neighbours() -> Case:
    secret = value()
    record = {"headers": ["X-Api-Key", secret, "Accept", "text/plain"]}
    return json.dumps(record) + "\n", "secret-assignment", (secret,)


def name_value_headers() -> Case:
    secret = value()
    record = {
        "request": {
            "headers": [
                {"name": "Accept", "value": "application/json"},
                {"name": "X-Auth-Token", "value": secret},
            ]
        }
    }
    # The pair rule names it (the neighbour view, `secret-assignment`, finds it too).
    return json.dumps(record) + "\n", "name-value-secret", (secret,)


def escaped_header_name() -> Case:
    secret = value()
    raw = line('"h": ["X-' + escape("A") + 'pi-Key", "' + secret + '"]')
    return raw, "secret-assignment", (secret,)


def percent_encoded_password() -> Case:
    password = gate_corpus.pick(RNG, ALNUM, 16)
    encoded = "p%40" + password + "%21"
    record = {"cmd": f"git clone https://deploy:{encoded}@git.example.com/x.git"}
    return json.dumps(record) + "\n", "url-password", (password, encoded)


def percent_encoded_token_in_query() -> Case:
    secret = token()
    encoded = "ghp_%" + format(ord(secret[4]), "02X") + secret[5:]
    record = {"url": f"https://api.example.com/repos?page=2&q={encoded}&x=1"}
    return json.dumps(record) + "\n", "github-token", (secret[5:], secret[4:12])


def percent_encoded_access_token() -> Case:
    secret = value()
    encoded = secret[:10] + "%2B" + secret[10:] + "%3D"
    record = {"url": f"https://cb.example.com/done?access_token={encoded}&state=ok"}
    return json.dumps(record) + "\n", "secret-assignment", (secret[:10], secret[10:], encoded)


CASES: dict[str, Callable[[], Case]] = {
    "escaped-first": escaped_first,
    "escaped-last": escaped_last,
    "escaped-middle": escaped_middle,
    "every-character-escaped": every_character_escaped,
    "escaped-key": escaped_key,
    "escaped-key-and-value": escaped_key_and_value,
    "escaped-slashes": escaped_slashes_in_url,
    "surrogate-pairs": surrogate_pairs_next_to_a_token,
    **{
        f"key-array-{kind.split()[0].lower()}-{'pretty' if pretty else 'compact'}": (
            escaped_key_block(kind, pretty)
        )
        for kind in ("RSA PRIVATE KEY", "OPENSSH PRIVATE KEY", "EC PRIVATE KEY", "PRIVATE KEY")
        for pretty in (False, True)
    },
    "authorization-neighbours": authorization_neighbours,
    "api-key-neighbours": api_key_header_neighbours,
    "name-value-headers": name_value_headers,
    "escaped-header-name": escaped_header_name,
    "percent-password": percent_encoded_password,
    "percent-token-query": percent_encoded_token_in_query,
    "percent-access-token": percent_encoded_access_token,
}


def strings(node: object) -> list[str]:
    if isinstance(node, str):
        return [node]
    if isinstance(node, list):
        return [s for item in node for s in strings(item)]
    if isinstance(node, dict):
        return [s for key, item in node.items() for s in [key, *strings(item)]]
    return []


def shape(node: object) -> object:
    if isinstance(node, list):
        return [shape(item) for item in node]
    if isinstance(node, dict):
        return {key: shape(item) for key, item in node.items()}
    return type(node).__name__


def records(text: str) -> list[object]:
    """Each JSONL record; a pretty-printed record spans lines."""
    decoder = json.JSONDecoder()
    found = []
    position = 0
    text = text.strip()
    while position < len(text):
        record, position = decoder.raw_decode(text, position)
        found.append(record)
        while position < len(text) and text[position].isspace():
            position += 1
    return found


@pytest.mark.parametrize("name", sorted(CASES))
def test_encoded_secret_is_found_and_redacted(name: str) -> None:
    raw, rule, secrets = CASES[name]()
    findings = scan_text(raw, path="events.jsonl", cache=ResultCache())
    assert rule in {finding.rule for finding in findings}, [f.rule for f in findings]
    redacted = redact_text(raw, path="events.jsonl", cache=ResultCache()).text
    assert not gate_corpus.surviving_fragments(redacted, secrets)
    before, after = records(raw), records(redacted)
    assert [shape(r) for r in after] == [shape(r) for r in before]
    decoded = "\n".join(s for record in after for s in strings(record))
    assert not gate_corpus.surviving_fragments(decoded, secrets)
    assert redact_text(redacted, path="events.jsonl", cache=ResultCache()).text == redacted
    assert redact_text(raw, path="events.jsonl", cache=ResultCache()).text == redacted


@pytest.mark.parametrize(
    "name", ["escaped-first", "escaped-key", "key-array-rsa-compact", "percent-token-query"]
)
@pytest.mark.parametrize("what", ["value", "neighbours"])
def test_gate_check_fails_on_a_committed_artifact(
    name: str, what: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if what == "neighbours":
        name = "api-key-neighbours" if name != "key-array-rsa-compact" else "name-value-headers"
    raw, _, _ = CASES[name]()
    monkeypatch.chdir(tmp_path)
    repository = pygit2.init_repository(str(tmp_path))
    path = tmp_path / ".stet/trajectories/x/events.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"type": "start"}) + "\n" + raw)
    repository.index.add(".stet/trajectories/x/events.jsonl")
    repository.index.write()
    tree = repository.index.write_tree()
    signature = pygit2.Signature("Gate Test", "gate@example.invalid", 1_700_000_000, 0)
    repository.create_commit("HEAD", signature, signature, "c", tree, [])
    assert main(["gate", "check"]) == 1


def test_spans_cover_whole_escape_sequences() -> None:
    secret = token()
    raw = '{"t": "' + escape(secret[0]) + secret[1:-1] + escape(secret[-1]) + '"}'
    [finding] = scan_text(raw, path="e.json", cache=ResultCache())
    assert raw[finding.offset : finding.end_offset] == raw[7:-2]
    assert finding.rule == "github-token"


def test_plain_neighbours_are_left_alone() -> None:
    raw = json.dumps({"args": ["--token", "README.md", "X-Api-Key", "none"], "key": "value"})
    assert redact_text(raw, path="e.json", cache=ResultCache()).text == raw


def test_an_objects_next_key_is_no_neighbours_value() -> None:
    """A credential's name as one field's value and the object's next key (`"AUTH_SECRET",
    "k":`): the key is a name, not the value of the name before it."""
    for record in (
        {"": "AUTH_SECRET", "00001Aa{": ""},
        {"name": "API_KEY", "Xk9mQ2vLp8rT4abcd": 1},
    ):
        raw = json.dumps(record, indent=1)
        assert redact_text(raw, path="e.json", cache=ResultCache()).text == raw
    # A value after its name stays the name's, in a list or after `"value":`.
    secret = value()
    raw = json.dumps([{"a": ["API_KEY", secret]}, {"name": "API_KEY", "value": secret}])
    assert secret not in redact_text(raw, path="e.json", cache=ResultCache()).text


@pytest.mark.parametrize("printed", [0, 1, 2])
def test_a_list_of_names_is_no_name_and_its_value(printed: int) -> None:
    """A name of three words or more in lower camel case after a credential's word in a list
    is the list's next name (an OpenAPI `enum` of security schemes' flows, a source map's
    `names`), as a JSON file holds it and as a tool prints it (`printed` times quoted); a
    value there is still one, and so is a name-value object's value."""
    secret = value()
    document = {
        "enum": ["apiKey", "oauth2AuthorizationCode", "http"],
        "flows": ["token", "oauth2ClientCredentialsFlowV2Beta"],
        "names": ["strWithCredentials", "_fieldTypeEventPropMap", "x"],
        "headers": ["X-Api-Key", secret],
        "env": [{"name": "API_TOKEN", "value": "rotateEveryMonthPlease"}],
    }
    raw = json.dumps(document, indent=2)
    for _ in range(printed):
        raw = json.dumps({"type": "tool_result", "content": raw})
    redacted = redact_text(raw + "\n", path="s.jsonl", cache=ResultCache()).text
    for _ in range(printed):
        redacted = json.loads(redacted)["content"]
    shown = json.loads(redacted)
    assert [shown[key] for key in ("enum", "flows", "names")] == [
        document[key] for key in ("enum", "flows", "names")
    ]
    assert secret not in redacted
    assert "rotateEveryMonthPlease" not in redacted


@pytest.mark.parametrize("twice", [False, True])
@pytest.mark.parametrize("indent", [None, 2])
def test_json_a_tool_printed_reads_its_pairs_and_argument_lists(
    indent: int | None, twice: bool
) -> None:
    """A JSON document in a tool's result (`cat config.json`, `kubectl get -o json`): a
    credential's name and the string after it, and a container's arguments, as in the
    document itself; the record stays valid JSON with the same structure. `twice`: the
    result is itself quoted in a record's string (a log of tool calls that a tool printed)."""
    secret, other = value(), value()
    document = {
        "spec": {"args": ["--api-key", secret, "--port", "8080"]},
        "headers": ["X-Api-Key", other, "Accept", "text/plain"],
        "plain": ["X-Api-Key", "none"],
        "next": {"name": "API_KEY", "Xk9mQ2vLp8rT4abcdZ": 1},
    }
    record = {"type": "tool_result", "content": json.dumps(document, indent=indent)}
    raw = json.dumps({"stdout": json.dumps(record)} if twice else record) + "\n"
    redacted = redact_text(raw, path="s.jsonl", cache=ResultCache()).text
    assert secret not in redacted and other not in redacted
    shown_record = json.loads(json.loads(redacted)["stdout"]) if twice else json.loads(redacted)
    shown = json.loads(shown_record["content"])
    assert shown["spec"]["args"][2:] == ["--port", "8080"]
    assert shown["plain"] == ["X-Api-Key", "none"]
    assert shown["next"] == document["next"]


@pytest.mark.parametrize("padding", [0, 300, 3_000, 30_000])
@pytest.mark.parametrize("cut_inside", [False, True])
def test_a_long_minified_document_a_tool_printed_is_read_around_its_joints(
    padding: int, cut_inside: bool
) -> None:
    """A minified document (`curl` of an API, a one-line config) is one line longer than the
    part read around a joint: that part starts inside the line, maybe inside a string
    (`cut_inside`: a long string just before the list), and is read from the list's `[` or
    the name's quote on."""
    secret, other = value(), value()
    before = (
        {"note": 'x \\"q\\" ' * (padding // 8)} if cut_inside else {"pad": ["y"] * (padding // 6)}
    )
    document = {
        **before,
        "mcpServers": {"api": {"command": "npx", "args": ["-y", "srv", "--api-key", secret]}},
        "headers": ["X-Api-Key", other, "Accept", "text/plain"],
        "plain": ["X-Api-Key", "none"],
        "tail": "z" * padding,
    }
    record = {"type": "tool_result", "content": json.dumps(document, separators=(",", ":"))}
    raw = json.dumps(record) + "\n"
    redacted = redact_text(raw, path="s.jsonl", cache=ResultCache()).text
    assert secret not in redacted and other not in redacted
    shown = json.loads(json.loads(redacted)["content"])
    assert shown["mcpServers"]["api"]["args"][:3] == ["-y", "srv", "--api-key"]
    assert shown["plain"] == ["X-Api-Key", "none"]
    assert {key: shown[key] for key in (*before, "tail")} == {
        key: document[key] for key in (*before, "tail")
    }


@pytest.mark.parametrize("twice", [False, True])
def test_a_document_a_tool_printed_is_read_wherever_the_part_read_starts(twice: bool) -> None:
    """The part read around a joint starts 512 characters before it, wherever that is: on a
    `{` or `[` inside a string (code), inside an escaped backslash (a Windows path quoted
    twice). Read from a place outside any string, the list's secrets go, and redacting
    the output again changes nothing (a token before the list moves that start)."""
    secret, other = value(), value()
    for before in ("a[b{c " * 100, "C:\\Users\\dev\\node_modules\\.bin\\x.cmd " * 20):
        for length in range(280, 480, 7):
            document = {
                "a": before[:length],
                "t": token(),
                "mcp": {"args": ["-y", "srv", "--api-key", secret]},
                "h": ["X-Api-Key", other, "Accept", "text/plain"],
                "z": "z" * 3000,
            }
            record = {"type": "tool_result", "content": json.dumps(document, separators=(",", ":"))}
            raw = json.dumps({"stdout": json.dumps(record)} if twice else record) + "\n"
            redacted = redact_text(raw, path="s.jsonl", cache=ResultCache()).text
            assert secret not in redacted and other not in redacted, (before[:8], length)
            assert redact_text(redacted, path="s.jsonl", cache=ResultCache()).text == redacted


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32), st.sets(st.integers(0, 39), max_size=6), st.booleans())
def test_escaped_variants_are_deterministic_and_idempotent(
    seed: int, escaped: set[int], ascii_only: bool
) -> None:
    rng = random.Random(seed)
    secret = "ghp_" + gate_corpus.pick(rng, ALNUM, 36)
    body = "".join(escape(c) if i in escaped else c for i, c in enumerate(secret))
    text = "é\\n" if not ascii_only else "\\u00e9\\t"
    raw = '{"a": "' + text + body + '\\"", "b": ["x", "' + text + '"]}\n'
    first = redact_text(raw, path="e.jsonl", cache=ResultCache()).text
    assert first == redact_text(raw, path="e.jsonl", cache=ResultCache()).text
    assert redact_text(first, path="e.jsonl", cache=ResultCache()).text == first
    decoded = json.loads(first)
    assert not gate_corpus.surviving_fragments(first + decoded["a"], (secret[4:],))


def test_hostile_escapes_stay_linear() -> None:
    secret = token()
    huge = "\\u0041" * 170_000
    backslashes = "\\\\" * 200_000 + "\\n" * 100_000
    percents = "%41" * 100_000
    raw = (
        '{"a": "' + huge + '", "b": "' + backslashes + '", "c": "https://x/?q=' + percents + '"}\n'
        '{"t": "'
        + escape("g")
        + secret[1:]
        + '", "keys": '
        + json.dumps(["token"] * 20_000 + ["X-Auth-Token"] * 20_000)
        + "}\n"
    )
    assert len(raw) > 1_000_000

    def run() -> None:
        result = redact_text(raw, path="big.jsonl", cache=ResultCache())
        assert secret[4:] not in result.text
        for record in result.text.splitlines():
            json.loads(record)

    within(60, run)


_JSON_TEXT = st.text(
    alphabet=st.sampled_from(list('ab"\\/\n\t\x1bé😀\ud83d\ude00 u0')), max_size=12
)
_JSON_LINE = st.recursive(
    st.none() | st.booleans() | st.integers() | _JSON_TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_JSON_TEXT, inner, max_size=3),
    max_leaves=8,
)
_BROKEN = st.text(alphabet=st.sampled_from(list('ab"\\u0{}:,\n')), max_size=30)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_JSON_LINE, st.booleans()) | _BROKEN, min_size=1, max_size=4))
def test_a_decoded_line_reads_the_same_by_either_decoder(lines: list[object]) -> None:
    """escape_view decodes literal by literal in C when it can: the text and the way back
    are those of the escape-by-escape decoder, on JSON lines and on broken ones."""
    from stet_lsp.gate.jsonaware import _decode_escapes, _decoded_literals, escape_view

    text = "\n".join(
        json.dumps(line[0], ensure_ascii=line[1]) if isinstance(line, tuple) else line
        for line in lines
    )
    if all(isinstance(line, tuple) for line in lines):  # JSON: the C decoder's path
        assert _decoded_literals(text, 0, len(text)) is not None
    view = escape_view(text, 0, len(text))
    expected_text, expected_marks = _decode_escapes(text, 0, len(text))
    assert view.text == expected_text
    assert view._marks == expected_marks
    for start in range(len(view.text)):
        assert view.to_raw(start, start + 1) == View(expected_text, 0, expected_marks).to_raw(
            start, start + 1
        )


_COLOURED = [
    ("github-token", "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"),
    ("gitlab-token", "glpat-" + "Zx8Yw7Vu6Ts5Rq4Po3Nm"),
    ("slack-token", "xoxb-" + "2837465019-2837465019283-" + "aB3dE5fG7hJ9kL1mN3pQ5rS7"),
]


@pytest.mark.parametrize(("rule", "secret"), _COLOURED)
@pytest.mark.parametrize("escaped", [False, True])
def test_a_token_in_terminal_colours_is_found_without_the_colours(
    rule: str, secret: str, escaped: bool
) -> None:
    """`ESC[1;32m<token>ESC[0m`, as a command prints it: the sequence's final letter stands
    right before the token; raw in a log, `\\u001b` in a JSON transcript."""
    line = f"printed \x1b[1;32m{secret}\x1b[0m done"
    text = json.dumps({"output": line}) + "\n" if escaped else line + "\n"
    path = "t.jsonl" if escaped else "t.log"
    found = scan_text(text, path=path, cache=None)
    assert [finding.rule for finding in found] == [rule]
    redacted = redact_text(text, path=path, cache=None).text
    assert secret not in redacted
    shown = json.loads(redacted)["output"] if escaped else redacted
    # The token alone is replaced: the colour codes around it stay as they were.
    newline = "" if escaped else "\n"
    assert shown == f"printed \x1b[1;32m[REDACTED:{rule}#1]\x1b[0m done{newline}"


def test_control_sequences_without_a_secret_find_nothing() -> None:
    line = "\x1b[31mFAILED\x1b[0m tests/test_a.py::test_b - \x1b[1mAssertionError\x1b[0m"
    assert scan_text(line, path="t.log", cache=None) == []
    assert scan_text(json.dumps({"o": line}), path="t.jsonl", cache=None) == []


@pytest.mark.parametrize(
    ("text", "path"),
    [
        ("password = 'Xk9q2Lm4\udcffWp7zRt5Y'\n", "x.py"),
        ("apikey:'C\ud800'\n", "x.sh"),
        ('{"o": "password = \'Xk9q2Lm4\udcffWp7zRt5Y\'"}\n', "x.jsonl"),
    ],
)
def test_an_undecodable_byte_near_a_keyword_is_scanned(text: str, path: str) -> None:
    """A file read with surrogateescape holds an undecodable byte as a lone surrogate, which
    detect-secrets could not hash: the scan failed where it met one near a keyword."""
    redacted = redact_text(text, path=path, cache=None).text
    assert "Wp7zRt5Y" not in redacted
    source = text.replace("\udcff", "\ufffd").replace("\ud800", "\ufffd")
    assert len(redacted.split("\n")) == len(source.split("\n"))


def test_the_command_line_scans_a_file_with_undecodable_bytes(tmp_path: Path) -> None:
    path = tmp_path / "settings.py"
    path.write_bytes(b"password = 'Xk9q2Lm4\xffWp7zRt5Y'\nDEBUG = True\n")
    assert main(["gate", "redact", str(path), "--in-place"]) == 0
    data = path.read_bytes()
    assert b"Wp7zRt5Y" not in data and data.endswith(b"\nDEBUG = True\n")


@pytest.mark.parametrize(
    ("before", "after", "path"),
    [
        ('printf "logged in\\n', '"\n', "narration.md"),  # a shell's escape in prose
        ("{'stdout': 'ok\\n", "', 'rc': 0}\n", "run.log"),  # a Python repr
        ("columns\\t", "\\r\\n", "out.txt"),
        ('{"command": "printf \\"a\\\\n', '\\""}\n', "events.jsonl"),  # quoted twice
        ("https://x.example/search?q=%22", "%22\n", "notes.md"),  # a quote, percent-encoded
        ("https://x.example/?q=token%3A%20", "\n", "notes.md"),
        ('{"url": "https://x.example/?q=a%20', '"}\n', "events.jsonl"),
    ],
)
def test_a_token_after_an_escapes_letter_or_a_percent_escape(
    before: str, after: str, path: str
) -> None:
    """`\\n` and `%20` stand for separators, but their last character is a letter or a digit:
    read as the start of a longer run, it hid every token that starts with a prefix."""
    secret = token()
    text = before + secret + after
    redacted = redact_text(text, path=path, cache=None).text
    assert redacted == before + "[REDACTED:github-token#1]" + after
    assert redact_text(redacted, path=path, cache=None).text == redacted
    if path.endswith(".jsonl"):
        json.loads(redacted)


def test_a_value_found_once_is_found_after_an_escapes_letter() -> None:
    secret = value()
    text = f"export API_TOKEN={secret}\nprintf 'a\\n{secret}' | login\ncurl ?q=%20{secret}\n"
    redacted = redact_text(text, path="run.md", cache=None).text
    assert secret[4:-4] not in redacted
    assert redacted.count("[REDACTED:secret-assignment#1]") == 3


def test_tokens_written_in_percent_escapes_are_read_as_one_text(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A text of thousands of tokens in escapes (`%41%42…`, `a%3Db%26c`) is decoded token by
    token but scanned once, not once a token; each secret among them maps back to its own
    escapes, and a secret's decoded neighbours stay."""
    from stet_lsp.gate import engine

    scans = 0
    real_init = engine.RuleScanner.__init__

    def counting_init(self: engine.RuleScanner, *args: object, **kwargs: object) -> None:
        nonlocal scans
        scans += 1
        real_init(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(engine.RuleScanner, "__init__", counting_init)

    def escaped(word: str) -> str:
        return "".join(f"%{ord(char):02X}" for char in word)

    secrets = [token() for _ in range(3)]
    filler = [escaped(gate_corpus.pick(RNG, ALNUM, 10)) for _ in range(2000)]
    words = [*filler[:700], escaped(secrets[0]), *filler[700:1400]]
    words += [f"a%3Db%26c%3D{index}" for index in range(500)]
    words += ["https://x.example/?q=ghp_%41" + secrets[1][5:], *filler[1400:], escaped(secrets[2])]
    text = " ".join(words) + "\n"
    result = redact_text(text, cache=ResultCache())
    assert scans < 10
    assert [finding.rule for finding in result.findings] == ["github-token"] * 3
    kept = result.text.split(" ")
    assert kept[700].startswith("[REDACTED:github-token#") and kept[701] == filler[700]
    assert kept[699] == filler[699]
    assert kept[-1].startswith("[REDACTED:github-token#")
    assert all(secret not in result.text for secret in secrets)


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="%%%2533AaFf41_=xG", max_size=40))
@example("%2541%41%253D")
@example("%%41%4%41%3d")
@example("%A%%41%aF")
def test_a_tokens_escapes_decode_as_they_do_one_at_a_time(token: str) -> None:
    """The decoded views of a token (its split on `%` looked up pair by pair) read and map
    back as the same token's escapes replaced one at a time do: `%%41`, `%4%41`, `%2541`
    (encoded twice), a `%A%` reference."""
    from stet_lsp.gate import urls
    from stet_lsp.gate.jsonaware import view_replacing

    text = f"a {token} b"
    start, end = 2, 2 + len(token)
    for decoded, replaced in (
        (urls._decode, urls._decoded_escapes),
        (urls._decode_every_escape, urls._every_escape),
    ):
        view = decoded(text, start, end)
        expected = view_replacing(text, start, end, replaced(text, start, end))
        assert (view is None) == (expected is None)
        if view is None or expected is None:
            continue
        assert view.text == expected.text
        spans = [(at, until) for at in range(len(view.text)) for until in (at + 1, len(view.text))]
        assert [view.to_raw(*span) for span in spans] == [expected.to_raw(*span) for span in spans]
