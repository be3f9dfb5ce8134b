"""Markers, numbering, idempotence, reports."""

import json
import random

import gate_corpus
import pytest

from stet_lsp.gate import RedactionReport, apply_redaction, redact_text, scan_text

RNG = random.Random(5)


def ghp() -> str:
    return "ghp_" + gate_corpus.pick(RNG, gate_corpus.ALNUM, 36)


def test_markers_are_numbered_by_first_appearance_per_rule() -> None:
    first, second = ghp(), ghp()
    text = f"{first} {second} {first} AKIA{gate_corpus.pick(RNG, gate_corpus.UPPER_ALNUM, 16)}"
    assert redact_text(text).text == (
        "[REDACTED:github-token#1] [REDACTED:github-token#2] [REDACTED:github-token#1] "
        "[REDACTED:aws-access-key-id#1]"
    )


def test_new_secrets_never_reuse_an_existing_marker_number() -> None:
    once = redact_text(f"a {ghp()}").text
    twice = redact_text(f"{once} b {ghp()}").text
    assert twice == "a [REDACTED:github-token#1] b [REDACTED:github-token#2]"


def test_redaction_is_idempotent_on_the_corpus() -> None:
    for case in gate_corpus.positive_cases():
        once = redact_text(case.text, path=case.path).text
        assert redact_text(once, path=case.path).text == once


@pytest.mark.parametrize(
    "url",
    [
        "git clone https://{token}@github.com/acme/app.git",
        '{{"remote": "https:\\/\\/{token}@github.com\\/acme\\/app.git"}}',
        "https://AKIA{key}@bucket.example.com/",
    ],
    ids=["token-as-user", "escaped-slashes", "key-id-as-user"],
)
def test_a_token_redacted_in_a_urls_user_is_left_alone_the_second_time(url: str) -> None:
    """The marker of a token written as a URL's user holds a `:`; it is no `user:password`."""
    text = url.format(token=ghp(), key=gate_corpus.pick(RNG, gate_corpus.UPPER_ALNUM, 16))
    once = redact_text(text).text
    assert once.count("[REDACTED:") == 1
    assert redact_text(once).text == once
    assert scan_text(once) == []


def test_markers_carry_nothing_of_the_secret() -> None:
    short = "ghp_" + gate_corpus.pick(RNG, gate_corpus.ALNUM, 36)
    long = "ghp_" + gate_corpus.pick(RNG, gate_corpus.ALNUM, 90)
    assert redact_text(short).text == redact_text(long).text == "[REDACTED:github-token#1]"


def test_report_has_counts_and_places_but_no_values() -> None:
    secret = ghp()
    result = redact_text(f"x\n  {secret}\n{secret}\n", path="a.md")
    data = result.report.to_dict()
    assert data["total"] == 2
    assert data["rules"] == {
        "github-token": {
            "count": 2,
            "locations": [
                {"path": "a.md", "line": 1, "column": 2, "end_line": 1, "end_column": 42},
                {"path": "a.md", "line": 2, "column": 0, "end_line": 2, "end_column": 40},
            ],
        }
    }
    assert secret[4:] not in json.dumps(data)


def test_reports_merge_across_files() -> None:
    one = redact_text(ghp(), path="one.md").report
    two = redact_text(f"{ghp()} /home/erin/x", path="two.md").report
    merged = one.merge(two)
    assert merged.counts() == {"github-token": 2, "home-path": 1}
    assert [p.path for p in merged.locations["github-token"]] == ["one.md", "two.md"]
    assert RedactionReport().merge(merged) == merged


def test_apply_redaction_reuses_findings_without_rescanning() -> None:
    text = f"key {ghp()} and /home/frank/x"
    findings = scan_text(text)
    result = apply_redaction(text, findings)
    assert result.text == redact_text(text).text
    # Home paths are a normalisation of the text, not findings with edits of their own.
    assert [r.text for r in result.replacements] == ["[REDACTED:github-token#1]"]
    assert result.report.counts() == {"github-token": 1, "home-path": 1}
