"""The `stet` command line: one front end over stet_lsp.core (the language server is the other)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from stet_lsp import __version__
from stet_lsp.core.errors import StetError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="stet",
        description="Stet: an AI coding agent's working memory and provenance, per branch.",
    )
    parser.add_argument("--version", action="version", version=f"stet {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    from stet_lsp.cli import check, demo, notes, sheet
    from stet_lsp.gate import cli as gate_cli

    notes.register(commands)
    sheet.register(commands)
    gate_cli.register(commands)
    check.register(commands)
    demo.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code: int = args.func(args)
    except StetError as error:
        print(f"stet: error: {error}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        return 141
    except KeyboardInterrupt:
        return 130
    return code


if __name__ == "__main__":
    sys.exit(main())
