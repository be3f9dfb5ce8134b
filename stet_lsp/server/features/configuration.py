"""Settings from initializationOptions, workspace/configuration and didChangeConfiguration."""

from __future__ import annotations

from typing import Any

from lsprotocol import types

from stet_lsp.server.server import StetServer, log
from stet_lsp.server.settings import parse_settings


def register(server: StetServer) -> None:
    @server.feature(types.INITIALIZE)
    def initialize(ls: StetServer, params: types.InitializeParams) -> None:
        apply(ls, params.initialization_options)

    @server.feature(types.INITIALIZED)
    async def initialized(ls: StetServer, params: types.InitializedParams) -> None:
        for start in ls.startup:
            start()
        await pull(ls)

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def changed(ls: StetServer, params: types.DidChangeConfigurationParams) -> None:
        settings = params.settings
        if isinstance(settings, dict) and settings:
            apply(ls, settings)
        else:
            await pull(ls)
        with ls.lock:
            for state in ls.documents.values():
                ls.rescan_notes(state)
        ls.refresh()


async def pull(ls: StetServer) -> None:
    if not ls.supports("workspace", "configuration"):
        return
    try:
        values = await ls.workspace_configuration_async(
            types.ConfigurationParams(items=[types.ConfigurationItem(section="stet")])
        )
    except Exception as error:  # a client that cannot answer keeps the current settings
        log.warning("workspace/configuration failed: %s", error)
        return
    if values and values[0] is not None:
        apply(ls, values[0])


def apply(ls: StetServer, raw: Any) -> None:
    settings, problems = parse_settings(raw, ls.settings)
    ls.settings = settings
    for problem in problems:
        ls.message(problem)
