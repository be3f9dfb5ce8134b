"""The `stet` command line: one front end over stet_lsp.core (the language server is the other)."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress

from stet_lsp import __version__
from stet_lsp.core.errors import NotInRepository, StetError

TYPE_CHECKING = False  # as typing's, without importing typing (start-up of the command line)
if TYPE_CHECKING:
    from typing import Any

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


class HelpFormatter(argparse.HelpFormatter):
    """argparse's, sized as shutil.get_terminal_size would size it, without importing shutil
    (with bz2 and lzma): argparse makes a formatter for every argument added, so the default
    one loads shutil at every start, whether or not help is printed."""

    def __init__(
        self,
        prog: str,
        indent_increment: int = 2,
        max_help_position: int = 24,
        width: int | None = None,
        **options: Any,
    ) -> None:
        if width is None:
            width = _terminal_columns() - 2
        super().__init__(prog, indent_increment, max_help_position, width, **options)


def _terminal_columns() -> int:
    """$COLUMNS, else the width of the terminal on standard output, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0 and sys.__stdout__ is not None:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
        except (ValueError, OSError):
            columns = 0
    return columns or 80


class CommandParser(argparse.ArgumentParser):
    """An ArgumentParser with `HelpFormatter` by default; argparse makes the parsers of
    subcommands of their parent's class, so they have it too."""

    def __init__(self, **options: Any) -> None:
        options.setdefault("formatter_class", HelpFormatter)
        super().__init__(**options)

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: Any = None
    ) -> tuple[Any, list[str]]:
        """A command's unknown option is its own usage error (`stet note list: error: …`,
        under that command's usage), not the top-level one's, which lists no option of it."""
        namespace, extras = super().parse_known_args(args, namespace)
        if extras and self._subparsers is None:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return namespace, extras


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser; given the arguments, with only the module of the command they name (a
    command that starts fast imports and sets up nothing of the others)."""
    parser = CommandParser(
        prog="stet",
        description="Stet: an AI coding agent's working memory and provenance, per branch.",
    )
    parser.add_argument("--version", action="version", version=f"stet {__version__}")
    parser.add_argument(
        "-C",
        dest="chdir",
        action="append",
        metavar="DIR",
        help="run as if started in DIR, as git -C does (before the command; each one after the "
        "first relative to the one before); commands that take -C take it after their name too",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    named = _command_named(argv or ())
    modules = [m for m, names in _MODULES.items() if named in names] or list(_MODULES)
    for module in modules:
        importlib.import_module(module).register(commands)
    return parser


def _command_named(argv: Sequence[str]) -> str | None:
    """The command the arguments name: the first that is no option, nor the DIR of a `-C`
    before it."""
    words = iter(argv)
    for word in words:
        if word == "-C":
            next(words, None)
        elif not word.startswith("-"):
            return word
    return None


_RUN_AGAIN = (
    "change to an existing folder (cd), or name the repository with -C and an absolute path, "
    "and run the command again"
)
FOLDER_GONE = (
    "the current folder no longer exists (it was removed or moved after the shell entered "
    f"it): {_RUN_AGAIN}"
)


def _working_folder_gone() -> bool:
    """Whether the folder the process runs in was removed (its path cannot be read)."""
    try:
        os.getcwd()
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return False


class _CannotChange(StetError):
    """A folder of `-C DIR` that cannot be changed to; `folder` is it, absolute."""

    def __init__(self, folder: str, error: OSError) -> None:
        message = f"cannot change to {folder}: {error.strerror or error}"
        try:
            self.folder = os.path.abspath(folder)
        except OSError:  # relative to a working folder that was removed: left relative
            self.folder = folder
            message = (
                f"cannot change to {folder}: it is relative to the current folder, which no "
                f"longer exists (it was removed or moved after the shell entered it): {_RUN_AGAIN}"
            )
        super().__init__(message)


@contextmanager
def _started_in(folders: Sequence[str] | None) -> Iterator[None]:
    """Run in the folders of `stet -C DIR …`, one after the other (an empty one changes
    nothing, as for git); then back where the process was, when that folder still exists."""
    if not folders:
        yield
        return
    try:
        previous: str | None = os.getcwd()
    except OSError:  # the folder it was started in is gone: a relative DIR fails to change
        previous = None
    try:
        for folder in folders:
            if folder:
                try:
                    os.chdir(folder)
                except OSError as error:
                    raise _CannotChange(folder, error) from None
        yield
    finally:
        if previous is not None:
            with suppress(OSError):
                os.chdir(previous)


# C0 controls but tab and newline, DEL, and C1 controls: what a terminal takes for commands.
_PICTURES = {
    **{code: 0x2400 + code for code in range(0x20) if code not in (0x09, 0x0A)},
    0x7F: 0x2421,
    **{code: 0xFFFD for code in range(0x80, 0xA0)},
}


class _Shown:
    """A command's standard output or error. On a terminal, a control character is written
    as its picture (ESC as ␛), so that text from a transcript (a prompt, a tool's output, a
    file name) cannot move the cursor, retitle the window or write the clipboard; output to a
    pipe or a file is left as it is. Text the stream cannot encode (a path whose bytes are
    not UTF-8 holds lone surrogates, which a strict UTF-8 stream refuses) is written with
    U+FFFD in their place, or the encoding's replacement, rather than ending the command
    with a traceback after its work is done."""

    def __init__(self, stream: Any, terminal: bool) -> None:
        self._stream = stream
        self._terminal = terminal

    def write(self, text: str) -> int:
        if self._terminal:
            text = text.translate(_PICTURES)
        try:
            return int(self._stream.write(text))
        except UnicodeEncodeError:
            return int(self._stream.write(self._encodable(text)))

    def _encodable(self, text: str) -> str:
        from stet_lsp.cli.common import encodable

        text = encodable(text)
        encoding = getattr(self._stream, "encoding", None) or "utf-8"
        try:
            text.encode(encoding)
        except UnicodeEncodeError:
            return text.encode(encoding, "replace").decode(encoding)
        except LookupError:
            pass
        return text

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextmanager
def _terminal() -> Iterator[None]:
    """Standard output and error as `_Shown` while the command runs."""
    streams = sys.stdout, sys.stderr
    shown = [_Shown(s, _is_terminal(s)) if s is not None else s for s in streams]
    sys.stdout, sys.stderr = shown
    try:
        yield
    finally:
        if (sys.stdout, sys.stderr) == tuple(shown):
            sys.stdout, sys.stderr = streams


def _is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, OSError, ValueError):
        return False


def _own_folder(args: argparse.Namespace) -> list[str]:
    """A command's own -C DIR, to run in as `stet -C DIR` does: the paths it is given (an
    import's transcript, an export's -o) are then relative to it. DIR stays as it was
    reached (absolute, a link not resolved): a repository reached through a link finds the
    sessions recorded under the link's path."""
    directory = getattr(args, "directory", ".")
    if not isinstance(directory, str) or directory in ("", "."):
        return []
    with suppress(OSError):  # the working folder was removed: changing to DIR says so
        args.directory = os.path.abspath(directory)
    return [args.directory]


def main(argv: Sequence[str] | None = None) -> int:
    if argv is None:
        argv = sys.argv[1:]
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    with _terminal():  # an error may quote a transcript too
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    try:
        try:
            with _started_in(args.chdir), _started_in(_own_folder(args)):
                code: int = args.func(args)
        except _CannotChange as error:
            # A server a client starts in a folder that is not there serves all the same,
            # each call saying what is wrong: a client shows a server that exits at once
            # only as one that failed to start.
            serve_anyway = getattr(args, "serve_in_missing_folder", None)
            if serve_anyway is None:
                raise
            return int(serve_anyway(args, error.folder))
    except StetError as error:
        hint = ""
        if isinstance(error, NotInRepository):
            hint = " (run Stet in a repository's work tree, or name one with -C DIR)"
        print(f"stet: error: {error}{hint}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        return 141
    except OSError as error:  # writing the output (a full disk): every other is a StetError
        if error.filename is None and _working_folder_gone():
            # Reading the working folder's path (os.getcwd), which names no file.
            print(f"stet: error: {FOLDER_GONE}", file=sys.stderr)
            return 1
        print(f"stet: error: {error.strerror or error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(
            "stet: interrupted: every file Stet writes is replaced whole, so none is left "
            "half-written; run the command again to finish",
            file=sys.stderr,
        )
        return 130
    return code


def run() -> None:
    """The `stet` program: `main`, then, its output flushed, out without the interpreter's
    teardown, which frees every object and module one by one (0.2 s after a large import)
    and which nothing here needs: every file is closed by then, logging writes unbuffered to
    stderr, and a thread still running (an MCP server's) gets the ordinary exit."""
    code = main()
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:  # None: the program was started with it closed
                stream.flush()
    except BrokenPipeError:
        code = code or 141
    if threading.active_count() == 1:
        os._exit(code)
    sys.exit(code)


if __name__ == "__main__":
    run()
