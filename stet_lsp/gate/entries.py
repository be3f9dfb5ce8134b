"""JSON documents in the gate's cache directory, read and written without following links.

The directory (`.stet/cache/gate` in a repository) is the root of the safefs rules: entries
are read and folders made below it without following links. A missing, torn or unreadable
entry reads as None; a failed write leaves nothing (the cache is an optimisation).
"""

from __future__ import annotations

import contextlib
import json
import os

from stet_lsp.core.errors import StetError
from stet_lsp.core.safefs import make_dirs, read_regular

TYPE_CHECKING = False  # as typing's, without importing typing (start-up of the command line)
if TYPE_CHECKING:
    from pathlib import Path


def read_entry(directory: Path | str, relative: Path | str) -> object | None:
    """The JSON document at `directory/relative`, or None (missing, torn, unreadable)."""
    try:
        content = read_regular(os.path.join(directory, relative), directory)
        return json.loads(content.decode("utf-8")) if content is not None else None
    except (StetError, ValueError, RecursionError):
        return None


def write_entry(directory: Path | str, relative: Path | str, payload: object) -> None:
    """Write a JSON document at `directory/relative` (a temporary file renamed over it)."""
    path = os.path.join(directory, relative)
    try:
        os.makedirs(directory, exist_ok=True)  # as configured; below it, no link
        import tempfile  # only writers pay for it (a cached re-scan writes nothing)

        folder = make_dirs(directory, os.path.dirname(path))
        handle, temporary = tempfile.mkstemp(dir=folder, suffix=".tmp")
    except (OSError, StetError):
        return
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            json.dump(payload, stream, separators=(",", ":"))
        os.replace(temporary, path)
    except OSError:
        # The cache is an optimisation: a failed write leaves no file and no error.
        with contextlib.suppress(OSError):
            os.unlink(temporary)
