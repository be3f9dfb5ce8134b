"""A private key framed in ways the key-material reader does not know line by line (comment
marks, ANSI colours, HTML breaks, quoting, line numbers, SQL joins) is still redacted to its
END line; code or prose between a header and a footer is not."""

from __future__ import annotations

import json
import random

import gate_corpus
import pytest

from stet_lsp.gate import redact_text

RNG = random.Random(47)


def framed_key(label: str, prefix: str = "", separator: str = "\n") -> tuple[str, list[str]]:
    block, _ = gate_corpus._pem(label, 8)(RNG)
    lines = block.split("\n")
    return separator.join(prefix + line for line in lines), lines[1:-1]


FRAMINGS = {
    "C++ comments": ("// ", "\n"),
    "SQL comments": ("-- ", "\n"),
    "TeX comments": ("% ", "\n"),
    "HTML breaks": ("", "<br>"),
    "HTML breaks and newlines": ("", "<br/>\n"),
    "ANSI colours": ("\x1b[32m", "\x1b[0m\n"),
    "a Markdown quoted list": ("> - ", "\n"),
    "SQL string joins": ("", "' || CHR(10) || '"),
}


@pytest.mark.parametrize("label", ["RSA PRIVATE KEY", "OPENSSH PRIVATE KEY", "PRIVATE KEY"])
@pytest.mark.parametrize("framing", sorted(FRAMINGS))
def test_a_framed_key_loses_every_line(framing: str, label: str) -> None:
    prefix, separator = FRAMINGS[framing]
    block, body = framed_key(label, prefix, separator)
    text = f"Here is the deploy key:\n{block}\nKeep it safe.\n"
    redacted = redact_text(text, path="notes.txt").text
    assert not [line for line in body if line[:24] in redacted], redacted
    assert redacted.startswith("Here is the deploy key:\n") and "Keep it safe." in redacted


def test_numbered_lines_as_an_editor_shows_them() -> None:
    block, body = framed_key("EC PRIVATE KEY")
    text = "\n".join(f"{n:3} {line}" for n, line in enumerate(block.split("\n"), 1))
    redacted = redact_text(text, path="view.txt").text
    assert not [line for line in body if line[:24] in redacted]


@pytest.mark.parametrize(
    "between",
    [
        "\n\ndef wrap(body: str) -> str:\n    return HEADER + body + FOOTER\n\n\n",
        "\nKeys start with the header above and end with the footer below.\n",
        "\n// the key goes here, one base64 line of 64 characters each\n",
    ],
)
def test_words_between_a_header_and_a_footer_keep_them_apart(between: str) -> None:
    text = f'HEADER = "-----BEGIN RSA PRIVATE KEY-----"{between}FOOTER = "-----END RSA PRIVATE KEY-----"\n'
    assert redact_text(text, path="pem.py").text == text


def test_a_key_under_a_header_mention_is_redacted_on_its_own() -> None:
    block, body = framed_key("RSA PRIVATE KEY", "// ")
    mention = "// Paste a -----BEGIN RSA PRIVATE KEY----- block below, as is.\n"
    redacted = redact_text(mention + block + "\n", path="notes.txt").text
    assert redacted.startswith(mention)
    assert not [line for line in body if line[:24] in redacted]


def _key_lines() -> list[str]:
    return [gate_corpus.pick(RNG, gate_corpus.ALNUM, 64) for _ in range(8)]


@pytest.mark.parametrize("prefix", ["// ", "-- ", "//"])
@pytest.mark.parametrize("quoted", [0, 1, 2])
def test_a_framed_ssh2_key_whose_comment_goes_on_over_two_lines(prefix: str, quoted: int) -> None:
    """RFC 4716 continues a header line that ends in a backslash: the continuation's words
    are the header's, not prose between a header and a footer. Raw, and quoted in JSON once
    and twice (a transcript's tool output)."""
    body = _key_lines()
    lines = [
        "---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----",
        'Comment: "rsa-key-20240101 exported for the deploy user and kept \\',
        'on the build host"',
        *body,
        "---- END SSH2 ENCRYPTED PRIVATE KEY ----",
    ]
    text = "".join(prefix + line + "\n" for line in lines)
    for _ in range(quoted):
        text = json.dumps({"output": text}) + "\n"
    redacted = redact_text(text, path="events.jsonl" if quoted else "notes.txt").text
    assert not [line for line in body if line[:24] in redacted], redacted


@pytest.mark.parametrize("times", [0, 1, 2, 3, 4])
def test_an_encrypted_pem_key_quoted_again_and_again_is_redacted(times: int) -> None:
    """Its header lines are framed-lines headers; a line break escaped 2**k times is no
    header's continuation (only a backslash before it, 3 * 2**k, is)."""
    body = _key_lines()
    lines = [
        "-----BEGIN RSA PRIVATE KEY-----",
        "Proc-Type: 4,ENCRYPTED",
        "DEK-Info: AES-128-CBC,0123456789ABCDEF0123456789ABCDEF",
        "",
        *body,
        "-----END RSA PRIVATE KEY-----",
    ]
    text = "\n".join(lines) + "\n"
    for _ in range(times):
        text = json.dumps(text)
    for path in ("notes.md", "events.jsonl"):
        redacted = redact_text(text + "\n", path=path).text
        assert not [line for line in body if line[:24] in redacted], (path, redacted)


GREP_FRAMINGS = {
    "grep -n": lambda n, first: f"deploy/keys/id_rsa:{n}:",
    "grep -n -A (context lines)": lambda n, first: (
        f"deploy/my-app/id_rsa:{n}:" if first else f"deploy/my-app/id_rsa-{n}-"
    ),
    "grep -r without -n": lambda n, first: "deploy/keys/id_rsa:",
    "grep -A without -n": lambda n, first: (
        "deploy/keys/id_rsa:" if first else "deploy/keys/id_rsa-"
    ),
    "grep -n -A on one file": lambda n, first: f"{n}:" if first else f"{n}-",
}


@pytest.mark.parametrize("label", ["RSA PRIVATE KEY", "OPENSSH PRIVATE KEY"])
@pytest.mark.parametrize("framing", sorted(GREP_FRAMINGS))
def test_a_key_in_grep_output_loses_every_line(framing: str, label: str) -> None:
    """`grep -rn -A30 BEGIN .`: each line behind `path:12:` or `path-13-`, raw, in a
    transcript, and cut short by the context's length."""
    prefix = GREP_FRAMINGS[framing]
    block, body = framed_key(label)
    lines = block.split("\n")
    output = "\n".join(prefix(n, n == 1) + line for n, line in enumerate(lines, 1))
    cut = "\n".join(prefix(n, n == 1) + line for n, line in enumerate(lines[:5], 1))
    for text, path in (
        (f"$ grep -rn -A30 BEGIN .\n{output}\n$ ls\n", "notes.txt"),
        (json.dumps({"type": "tool_result", "content": output}) + "\n", "e.jsonl"),
        (f"{cut}\n--\nother/file.txt:3:unrelated line\n", "notes.txt"),
    ):
        redacted = redact_text(text, path=path).text
        assert not [line for line in body if line[:24] in redacted], redacted
    assert (
        "other/file.txt:3:unrelated line"
        in redact_text(f"{cut}\n--\nother/file.txt:3:unrelated line\n", path="n.txt").text
    )


def test_grep_output_of_code_naming_the_header_and_footer_stays() -> None:
    text = (
        'src/pem.py:10:HEADER = "-----BEGIN RSA PRIVATE KEY-----"\n'
        "src/pem.py-11-# each body line is base64, 64 characters long\n"
        'src/pem.py:12:FOOTER = "-----END RSA PRIVATE KEY-----"\n'
    )
    assert redact_text(text, path="notes.txt").text == text
    lines = json.dumps({"content": text}) + "\n"
    assert redact_text(lines, path="e.jsonl").text == lines
