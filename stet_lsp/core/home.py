"""The user's home folder, where the harnesses' own files are (`~/.codex`, `~/.claude.json`)
and Stet's records of what it installed there."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from stet_lsp.core.errors import StetError


def home_folder(variables: Mapping[str, str]) -> Path | None:
    """`$HOME`; without it, the account's home (the password database's). None when there is
    none to tell, or HOME is empty or relative: Python reads an empty HOME as `/`, and a
    relative one as a folder below wherever Stet runs, where no harness looks for its files
    (Codex reads an empty HOME as unset, Claude Code as the folder it runs in)."""
    if "HOME" in variables:
        home = variables["HOME"]
        return Path(home) if os.path.isabs(home) else None
    try:
        return Path.home()
    except (RuntimeError, KeyError, OSError):
        return None


def required_home(variables: Mapping[str, str]) -> Path:
    """`home_folder`, or a StetError that says what is wrong with HOME."""
    home = home_folder(variables)
    if home is None:
        raise StetError(
            f"{home_problem(variables)}: set HOME to your home folder, where the harnesses keep "
            "their configuration; nothing was changed"
        )
    return home


def home_problem(variables: Mapping[str, str]) -> str:
    """Why `home_folder` is None, in words."""
    if "HOME" not in variables:
        return "HOME is not set, and the account has no home folder"
    if not variables["HOME"]:
        return "HOME is empty"
    return f"HOME is not an absolute path ({variables['HOME']})"
