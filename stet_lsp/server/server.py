"""The Stet language server."""

from __future__ import annotations

from pygls.lsp.server import LanguageServer

from stet_lsp import __version__


def create_server() -> LanguageServer:
    return LanguageServer("stet-lsp", __version__)
