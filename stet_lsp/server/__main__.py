"""`stet-lsp`: the Stet language server, over stdio (default) or TCP."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from stet_lsp import __version__


def _address(value: str) -> tuple[str, int]:
    host, _, port = value.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, got {value!r}")
    return host, int(port)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="stet-lsp", description="The Stet language server.")
    parser.add_argument("--version", action="version", version=f"stet-lsp {__version__}")
    channel = parser.add_mutually_exclusive_group()
    channel.add_argument("--stdio", action="store_true", help="talk over stdio (the default)")
    channel.add_argument("--tcp", type=_address, metavar="HOST:PORT", help="listen on TCP")
    channel.add_argument(
        "--settings-schema",
        action="store_true",
        help="print the settings' JSON Schema (what the editors' settings follow) and exit",
    )
    parser.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING"])
    args = parser.parse_args(argv)
    if args.settings_schema:  # no protocol runs: stdout is free
        import json

        from stet_lsp.server.settings import json_schema

        sys.stdout.write(json.dumps(json_schema(), indent=2) + "\n")
        return 0
    from stet_lsp.server.server import create_server, not_sent

    # Stet's logs go to the client's log (window/logMessage); stderr has what could not go
    # there and pygls's warnings. stdout carries the protocol.
    logging.basicConfig(stream=sys.stderr, level=args.log_level, format="stet-lsp: %(message)s")
    for handler in logging.getLogger().handlers:
        handler.addFilter(not_sent)
    logging.getLogger("pygls").setLevel(logging.WARNING)

    server = create_server()
    if args.tcp:
        server.start_tcp(*args.tcp)
    else:
        server.start_io()
    return server.protocol.exit_code


if __name__ == "__main__":
    sys.exit(main())
