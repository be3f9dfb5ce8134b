"""Settings: taken from initializationOptions, then pulled with `workspace/configuration`
(section `stet`) once the client is initialized and on every `workspace/didChangeConfiguration`.
The server registers for that notification itself when the client allows dynamic
registration. A client that cannot answer `workspace/configuration` is read from what it
pushes with the notification."""

from __future__ import annotations

from typing import Any
from weakref import WeakKeyDictionary

from lsprotocol import types

from stet_lsp.server.server import StetServer, log
from stet_lsp.server.settings import SECTION, parse_settings

_reported: WeakKeyDictionary[StetServer, list[str]] = WeakKeyDictionary()
"""The problems last shown per server: the same bad value is not reported on every pull."""


def register(server: StetServer) -> None:
    @server.feature(types.INITIALIZE)
    def initialize(ls: StetServer, params: types.InitializeParams) -> None:
        apply(ls, params.initialization_options)

    async def configure() -> None:
        if await pull(server):
            reload(server)
        await watch(server)

    server.startup.insert(0, configure)

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def changed(ls: StetServer, params: types.DidChangeConfigurationParams) -> None:
        if await pull(ls, params.settings):
            reload(ls)


async def watch(ls: StetServer) -> None:
    """Ask the client to send `workspace/didChangeConfiguration` for the `stet` section."""
    if not ls.supports("workspace", "did_change_configuration", "dynamic_registration"):
        return
    registration = types.Registration(
        id="stet.configuration",
        method=types.WORKSPACE_DID_CHANGE_CONFIGURATION,
        register_options=types.DidChangeConfigurationRegistrationOptions(section=SECTION),
    )
    if not await ls.register_with_client(registration):  # settings change only on a restart
        log.warning("cannot register for didChangeConfiguration")


async def pull(ls: StetServer, pushed: Any = None) -> bool:
    """Apply the client's `stet` settings, asked for with `workspace/configuration` when the
    client can answer, else `pushed`; True when the settings changed."""
    raw = pushed
    if ls.supports("workspace", "configuration"):
        # A client that cannot answer keeps the current settings.
        values = await ls.from_client(
            ls.workspace_configuration_async(
                types.ConfigurationParams(items=[types.ConfigurationItem(section=SECTION)])
            ),
            "workspace/configuration",
        )
        if values and values[0] is not None:
            raw = values[0]
    return apply(ls, raw)


def apply(ls: StetServer, raw: Any) -> bool:
    """Parse `raw` over the current settings and report bad values; True when they changed."""
    settings, problems = parse_settings(raw, ls.settings)
    changed = settings != ls.settings
    ls.settings = settings
    if raw is not None and problems != _reported.get(ls):
        _reported[ls] = problems
        for problem in problems:
            ls.message(problem)
    return changed


def reload(ls: StetServer) -> None:
    """Look at every open document again with the new settings, and tell the client."""
    for state in ls.documents.values():
        state.rescan_notes(ls.settings.marker)
    ls.refresh(outside=True)
