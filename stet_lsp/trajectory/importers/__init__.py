"""The importers, in the order formats are tried, and detection from the content."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

from stet_lsp.core.errors import StetError
from stet_lsp.trajectory.importers.base import SNIFF_BYTES, Importer

# name -> module exposing IMPORTER; more specific formats come first.
_MODULES = {
    "atif": "stet_lsp.trajectory.importers.atif",
    "claude-code": "stet_lsp.trajectory.importers.claude_code",
    "codex": "stet_lsp.trajectory.importers.codex",
    "codex-exec": "stet_lsp.trajectory.importers.codex_exec",
    "gemini-cli": "stet_lsp.trajectory.importers.gemini",
    "qwen-code": "stet_lsp.trajectory.importers.qwen_code",
    "openhands": "stet_lsp.trajectory.importers.openhands",
    "openhands-v1": "stet_lsp.trajectory.importers.openhands_v1",
    "mini-swe-agent": "stet_lsp.trajectory.importers.swe_agent",
    "swe-agent": "stet_lsp.trajectory.importers.swe_agent",
    "aider": "stet_lsp.trajectory.importers.aider",
}


def importer(name: str) -> Importer:
    if name not in _MODULES:
        raise StetError(f"unknown format {name!r}; formats: {', '.join(FORMATS)}")
    module = importlib.import_module(_MODULES[name])
    found: Importer = module.IMPORTERS[name]
    return found


FORMATS = tuple(_MODULES)


def read_head(path: Path) -> str:
    """The start of a file as `sniff` sees it (zstd-compressed files are decompressed)."""
    from stet_lsp.trajectory.importers.files import open_text

    with open_text(path) as stream:
        return stream.read(SNIFF_BYTES)


def head_records(head: str, limit: int = 20) -> tuple[list[Any], str | None]:
    """The JSON values of a sniff window's first `limit` lines that hold something, up to
    the first that does not parse; and that line when it is the window's last (a record the
    window cut off), else None."""
    lines = head.splitlines()
    records: list[Any] = []
    for index, text in enumerate(lines[:limit]):
        text = text.strip()
        if not text:
            continue
        try:
            records.append(json.loads(text))
        except (ValueError, RecursionError):
            return records, text if index == len(lines) - 1 else None
    return records, None


def detect(path: Path) -> Importer:
    head = read_head(path)
    for name in FORMATS:
        found = importer(name)
        if sniffs(found, head):
            return found
    if _is_stet_events(head):
        raise StetError(
            f"{path}: a Stet trajectory's events.jsonl, not an agent's transcript "
            "(`stet trajectory validate` checks it; `stet trajectory export --format atif` "
            "makes a document another target can import)"
        )
    labels = ", ".join(importer(name).label for name in FORMATS)
    raise StetError(f"{path}: not a transcript of a known format (tried {labels})")


def _is_stet_events(head: str) -> bool:
    records, _ = head_records(head, 1)
    first = records[0] if records else None
    return isinstance(first, dict) and {"kind", "session", "source", "step"} <= first.keys()


def sniffs(found: Importer, head: str) -> bool:
    """Whether the importer takes the file's start; JSON nested too deeply for the decoder
    (a line of 100,000 open brackets) is no format's."""
    try:
        return found.sniff(head)
    except RecursionError:
        return False
