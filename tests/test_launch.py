"""How Stet knows the commands that start it (hooks, MCP configurations) again."""

import sys

import pytest

from stet_lsp.core.launch import stet_command, stet_prefix


@pytest.mark.parametrize(
    ("words", "prefix"),
    [
        (["stet", "hooks"], 1),
        (["/opt/venv/bin/stet", "hooks"], 1),
        (["C:\\Tools\\STET.EXE", "hooks"], 1),
        (["/usr/bin/python3.12", "-m", "stet_lsp", "hooks"], 3),
        (["C:\\Python312\\python.exe", "-m", "stet_lsp"], 3),
        (["/opt/pypy/bin/pypy3", "-m", "stet_lsp", "mcp"], 3),
        ([sys.executable, "-m", "stet_lsp"], 3),
        (["/usr/bin/node", "-m", "stet_lsp"], 0),
        (["/usr/bin/python3", "-m", "other"], 0),
        (["stetson", "hooks"], 0),
        ([], 0),
    ],
)
def test_the_commands_that_start_stet_are_known(words: list[str], prefix: int) -> None:
    assert stet_prefix(words) == prefix


def test_what_install_writes_is_known_again() -> None:
    command = stet_command()
    assert stet_prefix([*command, "hooks", "run", "stop"]) == len(command)
