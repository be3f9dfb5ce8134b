"""JSON documents in the gate's cache directory, read and written without following links.

The directory (`.stet/cache/gate` in a repository) is the root of the safefs rules: entries
are read and folders made below it without following links. A missing, torn or unreadable
entry reads as None; a failed write leaves nothing (the cache is an optimisation).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from stet_lsp.core.errors import StetError
from stet_lsp.core.safefs import make_dirs, read_regular


def read_entry(directory: Path, relative: Path) -> object | None:
    """The JSON document at `directory/relative`, or None (missing, torn, unreadable)."""
    try:
        content = read_regular(directory / relative, directory)
        return json.loads(content.decode("utf-8")) if content is not None else None
    except (StetError, ValueError):
        return None


def write_entry(directory: Path, relative: Path, payload: object) -> None:
    """Write a JSON document at `directory/relative` (a temporary file renamed over it)."""
    path = directory / relative
    try:
        directory.mkdir(parents=True, exist_ok=True)  # as configured; below it, no link
        import tempfile  # only writers pay for it (a cached re-scan writes nothing)

        make_dirs(directory, path.parent)
        handle, temporary = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    except (OSError, StetError):
        return
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            json.dump(payload, stream, separators=(",", ":"))
        os.replace(temporary, path)
    except OSError:
        # The cache is an optimisation: a failed write leaves no file and no error.
        Path(temporary).unlink(missing_ok=True)
