"""Credentials written in base64 (`echo Z2hwX… | base64 -d`, a key passed as one value): the
decoded text is scanned, and a finding redacts the whole run."""

from __future__ import annotations

import base64
import json
import os
import subprocess

import pytest

from stet_lsp.gate import ResultCache, redact_text, scan_text
from stet_lsp.gate.encoded import ANCHORS

TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _redacted(text: str, path: str = "notes.txt") -> str:
    return redact_text(text, path=path, cache=ResultCache()).text


@pytest.mark.parametrize("lead", ["", "=", "x:", "token: "])
def test_a_token_in_base64_is_redacted_whole_at_each_alignment(lead: str) -> None:
    """Before the token, 0, 1, 2 or more bytes: it starts at each offset a base64 group can
    hold it at."""
    encoded = _b64(lead + TOKEN)
    text = f"$ echo {encoded} | base64 -d\n"
    assert [finding.rule for finding in scan_text(text)] == ["github-token"]
    redacted = _redacted(text)
    assert redacted == "$ echo [REDACTED:github-token#1] | base64 -d\n"


def test_a_private_key_in_base64_and_in_a_transcript_line() -> None:
    key = subprocess.run(
        ["openssl", "genrsa", "2048"], capture_output=True, text=True, check=True
    ).stdout
    encoded = _b64(key)
    text = f"$ echo '{encoded}' | base64 -d > key.pem\n"
    assert [finding.rule for finding in scan_text(text)] == ["private-key"]
    assert encoded[40:80] not in _redacted(text)
    line = json.dumps({"type": "tool_result", "content": f"tls.key={encoded}\nok"}) + "\n"
    redacted = _redacted(line, "session.jsonl")
    assert encoded[:20] not in redacted and encoded[-40:] not in redacted
    assert json.loads(redacted)["content"].endswith("\nok")


@pytest.mark.parametrize(
    ("document", "rule"),
    [
        ({"password": "Zx8#Cv2$Bn7%Nm", "host": "db.internal"}, "secret-assignment"),
        ({"service": "billing", "api_key": "Qw1Er6Ty0Ui5Op9As4Df"}, "secret-assignment"),
        # a Docker config's auths, as `kubectl create secret docker-registry` stores them
        ({"auths": {"registry.example": {"auth": _b64("deploy:Pw9xLm2Qr7Tz")}}}, None),
    ],
)
@pytest.mark.parametrize("lead", ["CONFIG_JSON=", "echo ", "  .dockerconfigjson: "])
def test_json_naming_a_credential_in_base64_is_redacted_whole(
    document: dict[str, object], rule: str | None, lead: str
) -> None:
    encoded = _b64(json.dumps(document))
    text = f"{lead}{encoded}\n"
    findings = scan_text(text, cache=ResultCache())
    assert len(findings) == 1 and rule in (None, findings[0].rule)
    assert _redacted(text) == f"{lead}[REDACTED:{findings[0].rule}#1]\n"
    line = json.dumps({"type": "tool_result", "content": text}) + "\n"
    assert encoded[8:40] not in _redacted(line, "session.jsonl")


@pytest.mark.parametrize(
    "plain",
    [
        '{"auth_time": 1712345678, "token_type": "Bearer", "password_set": true}',
        '{"password": "changeme", "token": null}',
        "ghp_" + "x" * 36,  # a placeholder
        "ghp_ is how a classic token starts",  # a prefix alone
        "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ\n-----END CERTIFICATE-----\n",
    ],
)
def test_base64_of_no_credential_stays(plain: str) -> None:
    text = f"data: {_b64(plain)}\n"
    assert scan_text(text) == []
    assert _redacted(text) == text


def test_random_base64_with_an_anchor_inside_stays() -> None:
    """An image's base64 holds an anchor by chance now and then: it is decoded, is no text,
    and stays."""
    anchor = next(a for a in ANCHORS if a.startswith("Z2hwX"))
    noise = base64.b64encode(os.urandom(3000)).decode()
    text = f'{{"type": "image", "data": "{noise[:1200]}{anchor}{noise[1200 + len(anchor) :]}"}}\n'
    assert _redacted(text, "session.jsonl") == text
