"""Private-key blocks: a header joins only the END line of its own label, over key material."""

import json
import random
import re
from pathlib import Path

import gate_corpus
import pytest
from corpus_parts import B64, pick

from stet_lsp.cli import main
from stet_lsp.core.lines import LineIndex
from stet_lsp.gate import redact_text, scan_text
from stet_lsp.gate.jsonaware import LiteralIndex
from stet_lsp.gate.scan import _fitted_to_literals
from stet_lsp.gate.spans import Span

RNG = random.Random(31)
MARK = "[REDACTED:private-key#1]"

PEM_CODE = (
    'HEADER = "-----BEGIN PRIVATE KEY-----"\n'
    "\n\n"
    "def wrap(body: str) -> str:\n"
    '    return HEADER + "\\n" + body + "\\n" + FOOTER\n'
    "\n\n"
    'FOOTER = "-----END PRIVATE KEY-----"\n'
)


def key(label: str = "RSA PRIVATE KEY", lines: int = 12) -> tuple[str, tuple[str, ...]]:
    return gate_corpus._pem(label, lines)(RNG)


def body_of(block: str) -> str:
    return block.split("\n", 1)[1].rsplit("\n", 1)[0]


def record(text: str, kind: str = "tool_result") -> dict[str, object]:
    if kind == "text":
        return {"type": "assistant", "message": {"content": [{"type": "text", "text": text}]}}
    content = [{"type": "tool_result", "tool_use_id": "toolu_01abc", "content": text}]
    return {"type": "user", "message": {"role": "user", "content": content}}


def jsonl(*records: dict[str, object]) -> str:
    return "".join(json.dumps(item) + "\n" for item in records)


def test_code_between_a_header_and_a_footer_constant_stays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert scan_text(PEM_CODE, path="pem.py") == []
    assert redact_text(PEM_CODE, path="pem.py").text == PEM_CODE
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pem.py").write_text(PEM_CODE)
    assert main(["gate", "redact", "pem.py", "-o", "out"]) == 0
    assert (tmp_path / "out").read_text() == PEM_CODE


def test_code_between_a_header_and_a_footer_stays_in_a_transcript() -> None:
    events = jsonl(
        record("Reading pem.py.", "text"),
        record(PEM_CODE),
        record(f"The module:\n\n```python\n{PEM_CODE}```\n", "text"),
    )
    assert redact_text(events, path="events.jsonl").text == events
    narration = f"## Step 2\n\nRead `pem.py`:\n\n```python\n{PEM_CODE}```\n"
    assert redact_text(narration, path="narration.md").text == narration


def test_a_mention_never_joins_a_key_records_later() -> None:
    block, secrets = key("PRIVATE KEY")
    mention = record(
        "A PKCS#8 file starts with -----BEGIN PRIVATE KEY----- on its own line.", "text"
    )
    between = {"type": "user", "uuid": "4f1c2a7e", "n": 1, "cwd": "/work/project"}
    events = jsonl(mention, between, record(f"$ cat key.pem\n{block}\n"))
    redacted = redact_text(events, path="events.jsonl").text
    assert redacted == jsonl(mention, between, record(f"$ cat key.pem\n{MARK}\n"))
    assert not gate_corpus.surviving_fragments(redacted, secrets)


def test_the_end_line_must_carry_the_header_label() -> None:
    block, secrets = key("RSA PRIVATE KEY")
    text = f"{block.rsplit(chr(10), 1)[0]}\n-----END EC PRIVATE KEY-----\ndone\n"
    redacted = redact_text(text).text
    # the header and the key material go; the END line of another label stays
    assert redacted == f"{MARK}\n-----END EC PRIVATE KEY-----\ndone\n"
    assert not gate_corpus.surviving_fragments(redacted, secrets)


def test_key_material_then_code_then_a_footer() -> None:
    block, secrets = key("OPENSSH PRIVATE KEY")
    text = (
        f'KEY = """{block.rsplit(chr(10), 1)[0]}\n"""\n\n\n'
        "def load() -> str:\n    return KEY\n\n\n"
        'FOOTER = "-----END OPENSSH PRIVATE KEY-----"\n'
    )
    redacted = redact_text(text, path="keys.py").text
    assert redacted == text.replace(block.rsplit("\n", 1)[0], MARK)
    assert not gate_corpus.surviving_fragments(redacted, secrets)


@pytest.mark.parametrize(
    "text",
    [
        "-----BEGIN RSA PRIVATE KEY-----\n",
        "The header -----BEGIN PRIVATE KEY----- marks the start.",
        "-----BEGIN EC PRIVATE KEY-----\n-----END EC PRIVATE KEY-----\n",
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXkt\n-----END OPENSSH PRIVATE KEY-----",
        "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBg...\n-----END PRIVATE KEY-----\n",
        "-----BEGIN PRIVATE KEY-----\n<base64>\n-----END PRIVATE KEY-----\n",
        "Keys start with `-----BEGIN PRIVATE KEY-----` and end with `-----END PRIVATE KEY-----`.",
        'private_key = "-----BEGIN PRIVATE KEY-----"',
        'secret: "-----BEGIN EC PRIVATE KEY-----\\n"',
        'PEM = re.compile(r"-----BEGIN RSA PRIVATE KEY-----\\n([A-Za-z0-9+/=\\n]+)'
        '-----END RSA PRIVATE KEY-----")',
        "---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\n",
        'private_key = "---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----"',
        '---- BEGIN SSH2 PRIVATE KEY ----\nComment: "rsa-key"\n---- END SSH2 PRIVATE KEY ----\n',
        "SSH.com keys start with `---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----`. Note: not OpenSSH.",
    ],
)
def test_no_key_material_no_finding(text: str) -> None:
    assert scan_text(text) == []
    as_json = json.dumps({"text": text}) + "\n"
    assert scan_text(as_json, path="events.jsonl") == []


@pytest.mark.parametrize(
    "case", gate_corpus.key_block_cases(), ids=lambda c: f"{c.format}-{c.context}"
)
def test_every_key_kind_redacts_whole(case: gate_corpus.Case) -> None:
    redacted = redact_text(case.text, path=case.path).text
    assert not gate_corpus.surviving_fragments(redacted, case.secrets)
    if case.context == "plain":
        assert redacted == f"{MARK}\n"
    elif case.context == "json-string":
        assert json.loads(redacted) == {"name": "deploy", "key": f"{MARK}\n"}
    elif case.context == "jsonl-record":
        [content] = json.loads(redacted)["message"]["content"]
        assert content["content"] == MARK
    elif case.context == "json-lines-array":
        data = json.loads(redacted)
        assert data["type"] == "tool" and data["n"] == 1
        original = json.loads(case.text)["lines"]
        assert len(data["lines"]) == len(original)
        assert all(
            line.startswith("[REDACTED:private-key#") or line == before == ""
            for line, before in zip(data["lines"], original, strict=True)
        )
    elif case.context == "python-concatenated":
        assert redacted == f'KEY = (\n    "{MARK}\\n"\n)\n'
    elif case.context == "jsonl-read-concatenated":
        # The block's lines, numbers and all, are one span: the first number and the last stay.
        shown = json.loads(redacted)["output"]
        assert re.fullmatch(
            rf'     1\tKEY = \(\n     2\t    "{re.escape(MARK)}\\n"\n +\d+\t\)\n', shown
        )
    else:
        assert json.loads(redacted)["content"] == f'KEY = (\n    "{MARK}\\n"\n)\n'


@pytest.mark.parametrize(
    "kind",
    ["RSA PRIVATE KEY", "OPENSSH PRIVATE KEY", "SSH2 PRIVATE KEY", "SSH2 ENCRYPTED PRIVATE KEY"],
)
def test_a_long_key_block_read_from_code_after_a_keyword_redacts_whole(kind: str) -> None:
    """`KEY = (` opens a short decode window just before the block's own anchor: the block,
    longer than that window, is decoded again as far as a block may reach."""
    rng = random.Random(1204)
    block, secrets = gate_corpus.KEY_MAKERS[kind](rng)
    lines = block.split("\n")
    width = 70 if kind.startswith("SSH2") else 64
    extra = [pick(rng, B64, width) for _ in range(40)]
    at = 5 if kind.startswith("SSH2") else len(lines) - 1  # after SSH2's headers; before END
    long_block = "\n".join(lines[:at] + extra + lines[at:])
    shown = gate_corpus._numbered(gate_corpus._concatenated(long_block))
    raw = json.dumps({"kind": "tool_result", "output": shown}) + "\n"

    redacted = redact_text(raw, path="events.jsonl").text

    assert not gate_corpus.surviving_fragments(redacted, (*secrets, *extra))
    assert "[REDACTED:private-key#1]" in json.loads(redacted)["output"]


def _putty_key(rng: random.Random, private_lines: int) -> tuple[str, list[str]]:
    public = [pick(rng, B64, 64) for _ in range(6)]
    private = [pick(rng, B64, 64) for _ in range(private_lines)]
    mac = pick(rng, "0123456789abcdef", 64)
    lines = [
        "PuTTY-User-Key-File-3: ssh-rsa",
        "Encryption: none",
        "Comment: rsa-key-20250101",
        "Public-Lines: 6",
        *public,
        f"Private-Lines: {private_lines}",
        *private,
        f"Private-MAC: {mac}",
    ]
    return "\n".join(lines) + "\n", [*private, mac]


@pytest.mark.parametrize("arrow", [False, True], ids=["tab", "arrow"])
@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_a_putty_key_read_with_line_numbers_loses_its_private_lines(
    arrow: bool, as_json: bool
) -> None:
    """A Read tool shows each line after its number and a tab (or `→`): the private lines
    and the MAC still go, the public lines stay."""
    key, private = _putty_key(random.Random(1205), 28)
    separator = "→" if arrow else "\t"
    shown = "".join(f"{n:6}{separator}{line}\n" for n, line in enumerate(key.splitlines(), 1))
    text = json.dumps({"output": shown}, ensure_ascii=False) + "\n" if as_json else shown
    path = "events.jsonl" if as_json else "read.txt"

    redacted = redact_text(text, path=path).text

    assert gate_corpus.surviving_fragments(redacted, tuple(private)) == []
    output = json.loads(redacted)["output"] if as_json else redacted
    assert output.startswith(shown[: shown.index("Private-Lines")])
    assert output.endswith(f"{separator}[REDACTED:putty-private-key#1]\n")


@pytest.mark.parametrize(
    ("prefix", "suffix"),
    [("", ""), ("+", ""), ("# ", ""), ("> ", ""), ("    ", ""), ("\t", "\r")],
    ids=["bare", "diff", "comment", "quote", "indent", "tab-crlf"],
)
def test_lines_written_with_marks_around_them(prefix: str, suffix: str) -> None:
    block, secrets = key("EC PRIVATE KEY", 4)
    lines = [f"{prefix}{line}{suffix}" for line in block.split("\n")]
    text = "before\n" + "\n".join(lines) + "\nafter\n"
    redacted = redact_text(text).text
    assert redacted == f"before\n{prefix}{MARK}{suffix}\nafter\n"
    assert not gate_corpus.surviving_fragments(redacted, secrets)


def test_a_key_on_one_line() -> None:
    block, _ = key("PRIVATE KEY")
    for joined in (block.replace("\n", " "), block.replace("\n", "\\n")):
        assert redact_text(f'TLS_KEY="{joined}"\nPORT=8080\n').text == (
            f'TLS_KEY="{MARK}"\nPORT=8080\n'
        )


def test_header_lines_and_checksum_are_part_of_the_block() -> None:
    for label in ("RSA PRIVATE KEY (Proc-Type)", "PGP PRIVATE KEY BLOCK (armored)"):
        block, _ = gate_corpus.KEY_MAKERS[label](RNG)
        text = f"x = 1\n{block}\ny = 2\n"
        assert redact_text(text).text == f"x = 1\n{MARK}\ny = 2\n"


def test_a_key_cut_short_in_json_never_reaches_the_keys_after_it() -> None:
    block, secrets = key("RSA PRIVATE KEY")
    cut = block.rsplit("\n", 4)[0]
    long_key = "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
    text = json.dumps({"key": cut, "n": 1, long_key: "abc"}) + "\n"
    redacted = redact_text(text, path="e.jsonl").text
    assert json.loads(redacted) == {"key": MARK, "n": 1, long_key: "abc"}
    lines = json.dumps({"key": cut.split("\n"), long_key: 2}) + "\n"
    data = json.loads(redact_text(lines, path="e.jsonl").text)
    assert list(data) == ["key", long_key] and data[long_key] == 2
    assert all(line.startswith("[REDACTED:private-key#") for line in data["key"])
    assert not gate_corpus.surviving_fragments(json.dumps(data), secrets)


def test_a_key_cut_short_loses_its_body_not_the_text_after_it() -> None:
    block, secrets = key("RSA PRIVATE KEY")
    cut = block.rsplit("\n", 3)[0]
    text = f"log: {cut}\nERROR: key file truncated (read 640 of 1679 bytes)\n"
    redacted = redact_text(text).text
    assert redacted == f"log: {MARK}\nERROR: key file truncated (read 640 of 1679 bytes)\n"
    assert not gate_corpus.surviving_fragments(redacted, secrets[:-2])


@pytest.mark.parametrize("separator", ["\t", "→", ": ", " | "])
def test_numbered_lines_of_a_file_view(separator: str) -> None:
    block, secrets = key("OPENSSH PRIVATE KEY")
    view = "".join(
        f"{number:>6}{separator}{line}\n" for number, line in enumerate(block.split("\n"), 1)
    )
    redacted = redact_text(f"{view}{14:>6}{separator}\n").text
    assert redacted == f"{1:>6}{separator}{MARK}\n{14:>6}{separator}\n"
    events = jsonl(record(view))
    redacted = redact_text(events, path="events.jsonl").text
    [content] = json.loads(redacted)["message"]["content"]
    assert content["content"] == f"{1:>6}{separator}{MARK}\n"
    assert not gate_corpus.surviving_fragments(redacted, secrets)


def test_a_span_over_several_strings_stays_in_one_array() -> None:
    text = '{"lines": ["ab", "cd",\n  "ef"], "name": "gh", "other": ["ij"]}\n'
    literals = LiteralIndex(text, LineIndex(text))
    span = Span(text.index("ab"), text.index("ij") + 2, "private-key", 0)
    fitted = _fitted_to_literals(literals, [span])
    assert [text[piece.start : piece.end] for piece in fitted] == ["ab", "cd", "ef"]


def ssh2_key(label: str = "SSH2 ENCRYPTED PRIVATE KEY") -> tuple[str, tuple[str, ...]]:
    return gate_corpus.KEY_MAKERS[label](RNG)


def test_an_ssh2_key_next_to_a_credential_word_is_redacted_whole() -> None:
    # detect-secrets reports only the header's words: the key material is what matters.
    block, secrets = ssh2_key()
    for text, path in (
        (f"private_key = '''{block}'''\n", "keys.py"),
        (json.dumps({"private_key": block, "password": "-"}) + "\n", "e.jsonl"),
    ):
        redacted = redact_text(text, path=path).text
        assert [finding.rule for finding in scan_text(text, path=path)] == ["private-key"]
        assert block not in redacted and MARK in redacted
        assert not gate_corpus.surviving_fragments(redacted, secrets)


def test_ssh2_header_lines_belong_to_the_block() -> None:
    block, secrets = ssh2_key("SSH2 PRIVATE KEY")
    with_headers = block.replace(
        "Subject: ", "x-command: /usr/local/bin/agent --check \\\n  --quiet\nSubject: "
    )
    for newline in ("\n", "\r\n"):
        written = with_headers.replace("\n", newline)
        text = f"x = 1{newline}{written}{newline}y = 2{newline}"
        [finding] = scan_text(text)
        assert text[finding.offset : finding.end_offset] == written
    events = jsonl(record(f"$ cat id_ssh2\n{with_headers}\n"))
    redacted = redact_text(events, path="events.jsonl").text
    [content] = json.loads(redacted)["message"]["content"]
    assert content["content"] == f"$ cat id_ssh2\n{MARK}\n"
    assert not gate_corpus.surviving_fragments(redacted, secrets)


@pytest.mark.parametrize("comment", ['"rsa-key", 2048 bit', '"alice", work laptop'])
def test_an_ssh2_comment_with_text_after_its_quote_is_a_header(comment: str) -> None:
    """The header's value reads as ending at `",` (a JSON string's end), which left the rest
    of its line (`, 2048 bit`) before the key's lines: its words kept the whole key from
    being taken."""
    block, secrets = ssh2_key()
    written = re.sub(r"(?m)^Comment: .*$", lambda _: f"Comment: {comment}", block)
    assert f"Comment: {comment}\n" in written
    for text, path in ((f"{written}\n", "k.md"), (jsonl(record(f"{written}\n")), "e.jsonl")):
        redacted = redact_text(text, path=path, cache=None).text
        assert not gate_corpus.surviving_fragments(redacted, secrets), path


def test_an_ssh2_key_cut_short_loses_its_body() -> None:
    block, secrets = ssh2_key()
    cut = block.rsplit("\n", 3)[0]
    text = f"log: {cut}\nERROR: key file truncated\n"
    redacted = redact_text(text).text
    assert redacted == f"log: {MARK}\nERROR: key file truncated\n"
    assert not gate_corpus.surviving_fragments(redacted, secrets[:-2])


def test_an_ssh2_public_key_stays() -> None:
    block, _ = ssh2_key("SSH2 PRIVATE KEY")
    public = block.replace("PRIVATE KEY", "PUBLIC KEY")
    for text, path in ((f"{public}\n", "id.pub"), (jsonl(record(public)), "e.jsonl")):
        assert scan_text(text, path=path) == []
        assert redact_text(text, path=path).text == text


@pytest.mark.parametrize("label", ["OpenVPN Static key V1", "OpenVPN tls-crypt-v2 Static key V1"])
@pytest.mark.parametrize("path", ["client.ovpn", "events.jsonl"])
def test_an_openvpn_static_key_inline_in_a_profile_is_redacted_whole(label: str, path: str) -> None:
    rng = random.Random(17)
    lines = ["".join(rng.choice("0123456789abcdef") for _ in range(32)) for _ in range(16)]
    key = f"-----BEGIN {label}-----\n" + "\n".join(lines) + f"\n-----END {label}-----\n"
    profile = f"client\nremote vpn.example 1194\n<tls-crypt>\n{key}</tls-crypt>\nverb 3\n"
    text = json.dumps({"type": "tool_result", "content": profile}) + "\n"
    redacted = redact_text(text if path.endswith(".jsonl") else profile, path=path).text
    shown = json.loads(redacted)["content"] if path.endswith(".jsonl") else redacted
    kept = "client\nremote vpn.example 1194\n<tls-crypt>\n[REDACTED:private-key#1]\n"
    assert shown == kept + "</tls-crypt>\nverb 3\n"
    assert not any(line in redacted for line in lines)


def test_an_openvpn_static_keys_header_alone_stays() -> None:
    text = "openvpn writes -----BEGIN OpenVPN Static key V1----- before the key\n"
    assert scan_text(text) == []
