"""A file as a Read tool shows it (each line after its number and a tab, or `→`), as text and
inside a transcript's JSON: every secret the gate finds in the file itself, it finds there,
also the ones a rule reads over several lines (a netrc entry, a YAML block, a key block)."""

import json
import random

import gate_corpus
import pytest

from stet_lsp.gate import GateConfig, redact_text


def _numbered(text: str, separator: str) -> str:
    return "".join(f"{n:6}{separator}{line}\n" for n, line in enumerate(text.splitlines(), 1))


@pytest.mark.parametrize("seed", sorted({gate_corpus.FIXED_SEED, gate_corpus.RUN_SEED}))
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
    assert missed == [], f"seed {seed}"


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
