"""The `stet` command line: one front end over stet_lsp.core (the language server is the other)."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from stet_lsp import __version__
from stet_lsp.core.errors import StetError

# Which module registers each command, in the order `stet --help` lists them.
_MODULES = {
    "stet_lsp.cli.notes": ("note", "brief", "pause", "resume"),
    "stet_lsp.cli.sheet": ("sheet",),
    "stet_lsp.gate.cli": ("gate",),
    "stet_lsp.cli.check": ("check",),
    "stet_lsp.cli.trajectory": ("trajectory",),
    "stet_lsp.cli.graduate": ("graduate",),
    "stet_lsp.cli.capstone": ("capstone",),
    "stet_lsp.cli.demo": ("demo",),
    "stet_lsp.cli.mcp": ("mcp",),
    "stet_lsp.cli.hooks": ("hooks",),
}


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser; given the arguments, with only the module of the command they name (a
    command that starts fast imports and sets up nothing of the others)."""
    parser = argparse.ArgumentParser(
        prog="stet",
        description="Stet: an AI coding agent's working memory and provenance, per branch.",
    )
    parser.add_argument("--version", action="version", version=f"stet {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    named = next((a for a in argv or () if not a.startswith("-")), None)
    modules = [m for m, names in _MODULES.items() if named in names] or list(_MODULES)
    for module in modules:
        importlib.import_module(module).register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    if argv is None:
        argv = sys.argv[1:]
    parser = build_parser(argv)
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
