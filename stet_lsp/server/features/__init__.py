"""The editor features. Each analysing feature is a `Feature` (server/feature.py) that owns
its diagnostics source and its commands; the request modules (documents, language, commands,
configuration, watcher) register the LSP handlers that ask the features."""

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
        graduation,
        language,
        margin_notes,
        provenance,
        sheet_file,
        trajectories,
        trajectory_files,
        watcher,
    )

    server.features.extend(
        [
            margin_notes.MarginNotes(server),
            entries.Entries(server),
            sheet_file.SheetFile(server),
            gate_findings.GateFindings(server),
            trajectory_files.TrajectoryFiles(server),
            provenance.ProvenanceFeature(server),
            graduation.Graduation(server),
        ]
    )
    documents.register(server)
    language.register(server)
    commands.register(server)
    trajectories.register(server)
    configuration.register(server)
    watcher.register(server)
