"""Diagnostics per document and per source (margin notes, entries, the sheet, the gate),
served alike to clients that pull and pushed to those that cannot."""

from __future__ import annotations

import itertools

from lsprotocol import types

_result_ids = itertools.count(1)


class DiagnosticsStore:
    def __init__(self) -> None:
        self._by_uri: dict[str, dict[str, list[types.Diagnostic]]] = {}
        self._result_ids: dict[str, str] = {}

    def set(self, uri: str, source: str, diagnostics: list[types.Diagnostic]) -> bool:
        """Store one source's diagnostics; True when the document's diagnostics changed (its
        result id is then new)."""
        sources = self._by_uri.setdefault(uri, {})
        if uri in self._result_ids and sources.get(source, []) == diagnostics:
            return False
        sources[source] = diagnostics
        self._result_ids[uri] = str(next(_result_ids))
        return True

    def get(self, uri: str) -> list[types.Diagnostic]:
        return [item for items in self._by_uri.get(uri, {}).values() for item in items]

    def result_id(self, uri: str) -> str:
        """Changes exactly when the document's diagnostics do ("0": none ever stored)."""
        return self._result_ids.get(uri, "0")

    def forget(self, uri: str) -> None:
        self._by_uri.pop(uri, None)
        self._result_ids.pop(uri, None)
