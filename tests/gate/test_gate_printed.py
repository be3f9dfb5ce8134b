"""What a command that prints a secret printed, asked of the gate by an importer that paired
the command with its output (stet_lsp/gate/printed.py)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from stet_lsp.gate import GateConfig
from stet_lsp.gate.printed import printed_secrets


def test_the_module_loads_first_of_the_gate() -> None:
    """The rules' modules load each other: this one must not start that cycle halfway."""
    run = subprocess.run(
        [sys.executable, "-c", "import stet_lsp.gate.printed"], capture_output=True, text=True
    )
    assert (run.returncode, run.stderr) == (0, "")


@pytest.mark.parametrize(
    ("command", "output", "value"),
    [
        ("op read op://Private/db/password", "Xk9mQ2vLp8rT4wZ\n", "Xk9mQ2vLp8rT4wZ"),
        ("cd app\nvault kv get -field=password secret/db", "Hq7L!mP2xW\n", "Hq7L!mP2xW"),
        ("op read op://Private/db/password > .env", "", None),
        ("op read op://Private/db/password | wc -c", "      16\n", None),
        ("git status", "Xk9mQ2vLp8rT4wZ\n", None),
    ],
)
def test_the_first_line_a_printing_command_printed(
    command: str, output: str, value: str | None
) -> None:
    found = printed_secrets(command, output, GateConfig())
    if value is None:
        assert found is None
    else:
        assert found is not None
        text, findings = found
        assert [text[f.offset : f.end_offset] for f in findings] == [value]
        assert {f.rule for f in findings} == {"printed-secret"}
