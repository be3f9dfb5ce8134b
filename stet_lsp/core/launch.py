"""How another program (an MCP client, a harness's hook) starts `stet`, and how Stet knows
such a command again."""

from __future__ import annotations

import os
import re
import shutil
import sys
from collections.abc import Sequence

_PROGRAM_NAMES = ("stet", "stet.exe")


def stet_command() -> list[str]:
    """The `stet` on PATH as an absolute path (a program started from the desktop, or by a
    harness, may have another PATH), else this Python with `-m stet_lsp`."""
    found = shutil.which("stet")
    if found:
        return [os.path.abspath(found)]
    return [sys.executable, "-m", "stet_lsp"]


def by_bare_name(words: Sequence[str]) -> bool:
    """Whether `words` start `stet` by its bare name (as earlier versions wrote it), which
    only the PATH of whoever runs the command can find."""
    return bool(words) and words[0] in _PROGRAM_NAMES


def stet_prefix(words: Sequence[str]) -> int:
    """How many of the first `words` start `stet` as `stet_command` writes it, or as earlier
    versions did (`stet` by its bare name): a program named `stet` (any folder), or a Python
    (CPython or PyPy by name, or this interpreter whatever it is called) with `-m stet_lsp`;
    0 when they do not."""
    if not words:
        return 0
    name = re.split(r"[\\/]", words[0])[-1].lower()
    if name in _PROGRAM_NAMES:
        return 1
    python = name.startswith(("python", "pypy")) or words[0] == sys.executable
    if list(words[1:3]) == ["-m", "stet_lsp"] and python:
        return 3
    return 0
