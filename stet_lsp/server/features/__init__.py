"""Each editor feature registers its own handlers on the server."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from stet_lsp.server.server import StetServer


def register_all(server: StetServer) -> None:
    from stet_lsp.server.features import (
        commands,
        configuration,
        documents,
        entries,
        gate_findings,
        language,
        margin_notes,
        sheet_file,
        watcher,
    )

    # Analysis order matters little; each feature owns one diagnostics source.
    server.features.extend(
        [
            margin_notes.MarginNotes(server),
            entries.Entries(server),
            sheet_file.SheetFile(server),
            gate_findings.GateFindings(server),
        ]
    )
    documents.register(server)
    language.register(server)
    commands.register(server)
    configuration.register(server)
    watcher.register(server)
