"""`stet-lsp`: the language server over stdio."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="stet-lsp", description="The Stet language server.")
    parser.add_argument("--stdio", action="store_true", help="talk over stdio (the default)")
    parser.parse_args(argv)
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="stet-lsp: %(message)s")
    logging.getLogger("pygls").setLevel(logging.WARNING)
    from stet_lsp.server.server import create_server

    create_server().start_io()
    return 0


if __name__ == "__main__":
    sys.exit(main())
