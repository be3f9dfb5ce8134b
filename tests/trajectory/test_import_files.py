"""Reading JSON Lines transcripts (stet_lsp/trajectory/importers/files.py): every value and
every error is json's, whichever decoder read the line."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from repos import make_repo

from stet_lsp.core.errors import StetError
from stet_lsp.core.targets import resolve_target
from stet_lsp.trajectory.importers import detect
from stet_lsp.trajectory.importers.base import Problem
from stet_lsp.trajectory.importers.files import jsonl_records, not_json
from stet_lsp.trajectory.importing import import_transcript

LINES = [
    '{"type": "user", "text": "héllo ✓ \\u00e9", "n": 3}',
    '{"big": 123456789012345678901234567890, "neg": -9223372036854775809}',
    '{"lone": "\\ud800", "pair": "\\ud83d\\ude00"}',  # a lone surrogate: json keeps it
    '{"nan": NaN, "inf": Infinity, "huge": 1e400}',  # not JSON, but json.loads reads them
    '{"dup": 1, "dup": 2}',
    "",
    "[1, 2",  # broken
    '"a string"',
    '{"type": "assistant", "cut": "trunc',  # a truncated last line
]


def test_values_and_problems_are_json_s(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(LINES), encoding="utf-8")
    problems: list[Problem] = []
    records = list(jsonl_records(path, "t.jsonl", problems))

    expected: list[tuple[int, object]] = []
    expected_problems = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(True), 1):
        if not line.strip():
            continue
        try:
            expected.append((number, json.loads(line)))
        except json.JSONDecodeError as error:
            expected_problems.append(Problem("t.jsonl", number, not_json(line, error)))
    assert [number for number, _ in records] == [number for number, _ in expected]
    for (_, value), (_, wanted) in zip(records, expected, strict=True):
        assert json.dumps(value, sort_keys=True) == json.dumps(wanted, sort_keys=True)
    assert problems == expected_problems and len(problems) == 2
    assert [problem.message for problem in problems] == [
        "not JSON: Expecting ',' delimiter at column 6",
        "not JSON: Unterminated string starting at column 30",
    ]
    nan = records[3][1]
    assert math.isnan(nan["nan"]) and nan["huge"] == math.inf
    assert records[2][1]["lone"] == "\ud800" and records[2][1]["pair"] == "😀"


def test_a_line_nested_too_deeply_is_a_problem_and_the_rest_is_read(tmp_path: Path) -> None:
    path = tmp_path / "deep.jsonl"
    path.write_text('{"a": 1}\n' + "[" * 100_000 + "\n" + '{"b": 2}\n')
    problems: list[Problem] = []
    assert list(jsonl_records(path, "deep.jsonl", problems)) == [(1, {"a": 1}), (3, {"b": 2})]
    assert problems == [Problem("deep.jsonl", 2, "JSON nested too deeply to read")]


@pytest.mark.parametrize(
    "record",
    [
        {"type": {"a": 1}, "sessionId": "s", "uuid": "u"},  # Claude Code's keys
        {"type": ["session_meta"], "payload": {"id": "x"}},  # Codex's
        [{"id": 1, "source": ["agent"], "action": ["run"]}],  # OpenHands'
        {"id": "x", "source": ["agent"], "kind": "MessageEvent"},  # OpenHands V1's
    ],
)
def test_a_type_that_is_no_string_is_of_no_known_format(tmp_path: Path, record: Any) -> None:
    """Each format's sniff looked the value up in a set of names: an object or array there
    raised TypeError ("unhashable type"), an internal error instead of the format's refusal."""
    path = tmp_path / "odd.jsonl"
    path.write_text(json.dumps(record) + "\n" + json.dumps(record) + "\n")
    with pytest.raises(StetError, match="not a transcript of a known format"):
        detect(path)


def test_a_file_nested_too_deeply_is_of_no_known_format(tmp_path: Path) -> None:
    path = tmp_path / "deep.jsonl"
    path.write_text("[" * 100_000 + "\n")
    with pytest.raises(StetError, match="not a transcript of a known format"):
        detect(path)
    with pytest.raises(
        StetError, match=r"not in the format it was named as \(Claude Code session JSONL\)"
    ):
        import_transcript(
            resolve_target(Path(make_repo(tmp_path / "r").workdir)), path, format_name="claude-code"
        )
