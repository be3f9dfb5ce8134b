"""Content-addressed results: (chunk digest, rule-set version, configuration) -> spans.

An unchanged chunk is never scanned twice in a process; with a directory, never twice at all.
The directory (`.stet/cache/gate` in a repository) is the root of the safefs rules: entries
are read and folders made below it without following links.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from pathlib import Path

from stet_lsp.gate.entries import read_entry, write_entry

TYPE_CHECKING = False  # as typing's, without importing typing (start-up of the command line)
if TYPE_CHECKING:
    from stet_lsp.gate.spans import Span

_MEMORY_ENTRIES = 4096
_FORMAT = 3
"""2: home paths are no longer spans (stet_lsp/gate/homepaths.py); 3: how a span was found."""


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


def _read(directory: Path, key: str) -> tuple[Span, ...] | None:
    from stet_lsp.gate.spans import Span

    data = read_entry(directory, _path(directory, key).relative_to(directory))
    try:
        if not isinstance(data, dict) or data.get("format") != _FORMAT:
            return None
        return tuple(
            Span(
                int(s),
                int(e),
                str(rule),
                int(p),
                None if fixed is None else str(fixed),
                str(pre),
                str(found_as),
            )
            for s, e, rule, p, fixed, pre, found_as in data["spans"]
        )
    except (ValueError, KeyError, TypeError):
        # A missing, torn or foreign entry is a miss: the chunk is simply scanned again.
        return None


def _write(directory: Path, key: str, spans: tuple[Span, ...]) -> None:
    payload = {
        "format": _FORMAT,
        "spans": [
            [s.start, s.end, s.rule, s.priority, s.replacement, s.prefix, s.found_as] for s in spans
        ],
    }
    write_entry(directory, _path(directory, key).relative_to(directory), payload)


DEFAULT_CACHE = ResultCache()
