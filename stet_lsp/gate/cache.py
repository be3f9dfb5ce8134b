"""Content-addressed results: (chunk digest, rule-set version, configuration) -> spans.

An unchanged chunk is never scanned twice in a process; with a directory, never twice at all.
The directory (`.stet/cache/gate` in a repository) is the root of the safefs rules: entries
are read and folders made below it without following links.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import threading
from collections import OrderedDict
from pathlib import Path

from stet_lsp.core.errors import StetError
from stet_lsp.core.safefs import make_dirs, read_regular
from stet_lsp.gate.spans import Span

_MEMORY_ENTRIES = 4096
_FORMAT = 2
"""2: home paths are no longer spans (stet_lsp/gate/homepaths.py)."""


def chunk_key(chunk: str, fingerprint: str, json_mode: bool) -> str:
    digest = hashlib.sha256(chunk.encode("utf-8", "surrogatepass"))
    digest.update(f"\0{fingerprint}\0{'json' if json_mode else 'text'}".encode())
    return digest.hexdigest()


class ResultCache:
    def __init__(self, max_entries: int = _MEMORY_ENTRIES) -> None:
        self._entries: OrderedDict[str, tuple[Span, ...]] = OrderedDict()
        self._max_entries = max_entries
        self._lock = threading.Lock()

    def get(self, key: str, directory: Path | None) -> tuple[Span, ...] | None:
        with self._lock:
            spans = self._entries.get(key)
            if spans is not None:
                self._entries.move_to_end(key)
                return spans
        if directory is None:
            return None
        spans = _read(directory, key)
        if spans is not None:
            self._remember(key, spans)
        return spans

    def put(self, key: str, spans: tuple[Span, ...], directory: Path | None) -> None:
        self._remember(key, spans)
        if directory is not None:
            _write(directory, key, spans)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def _remember(self, key: str, spans: tuple[Span, ...]) -> None:
        with self._lock:
            self._entries[key] = spans
            self._entries.move_to_end(key)
            while len(self._entries) > self._max_entries:
                self._entries.popitem(last=False)


def _path(directory: Path, key: str) -> Path:
    return directory / key[:2] / f"{key}.json"


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


def _read(directory: Path, key: str) -> tuple[Span, ...] | None:
    data = read_entry(directory, _path(directory, key).relative_to(directory))
    try:
        if not isinstance(data, dict) or data.get("format") != _FORMAT:
            return None
        return tuple(
            Span(int(s), int(e), str(rule), int(p), None if fixed is None else str(fixed), str(pre))
            for s, e, rule, p, fixed, pre in data["spans"]
        )
    except (ValueError, KeyError, TypeError):
        # A missing, torn or foreign entry is a miss: the chunk is simply scanned again.
        return None


def _write(directory: Path, key: str, spans: tuple[Span, ...]) -> None:
    payload = {
        "format": _FORMAT,
        "spans": [[s.start, s.end, s.rule, s.priority, s.replacement, s.prefix] for s in spans],
    }
    write_entry(directory, _path(directory, key).relative_to(directory), payload)


DEFAULT_CACHE = ResultCache()
