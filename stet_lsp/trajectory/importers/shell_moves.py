"""Files an agent moved with a shell command (`mv`, `git mv`), read from the command line
only where the meaning is certain once the command has exited with 0: simple commands
joined by `&&` (each ran when the whole succeeded). Anything else is read as moving nothing:
a wrong path loses a file's attribution, a guessed one could give it to another file. So:

- a command that a shell would expand, redirect or read otherwise (`$`, globs, quotes'
  escapes, backquotes, pipes, subshells, `~`, `#`, `;`, line breaks, carriage returns, a lone
  `&`), that changes folder (`cd`, `pushd`, `popd`), or that may end the shell first or change
  what later words mean (`exit`, `return`, `set`, `alias`, …) moves nothing;
- options other than `-f` and `-v` (`-n`, `-i`, `-k` may skip the move and still succeed;
  `-t`, `-T` change what the destination means) move nothing;
- `mv a b` is a rename only when `b`'s name has a suffix (`b.py`): a destination without
  one may be an existing folder, into which the shell would move `a`; several sources go
  into the destination, which must then be a folder."""

from __future__ import annotations

import posixpath
import re
import shlex

# Where `mv` may stand as a word (with quotes in it, `m""v` is one): a command without moves
# nothing, and most commands are read no further.
_MV = re.compile(r"m[\"']*v")
_UNCERTAIN = re.compile(r"[$`*?\[\]{}|<>()~\\#;\n\r]|(?<!&)&(?!&)")
_QUIET_OPTIONS = frozenset({"-f", "-v", "--force", "--verbose"})
# Words that change the folder, end the shell with 0 before the rest runs, or change what
# later words mean.
_UNSETTLING = frozenset(
    {"cd", "pushd", "popd", "builtin", "exec", "eval", "source", ".", "exit", "return"}
    | {"logout", "trap", "set", "shopt", "alias", "unalias", "unset", "function", "kill"}
)


def moved_paths(command: str, cwd: str | None) -> list[tuple[str, str]]:
    """(old path, new path) of each move `command` makes when it succeeds, absolute (joined
    to `cwd`), in order; [] when any part of it is uncertain."""
    if not _MV.search(command) or not cwd or not posixpath.isabs(cwd):
        return []
    if _UNCERTAIN.search(command):
        return []
    found: list[tuple[str, str]] = []
    for part in command.split("&&"):
        try:
            words = shlex.split(part)
        except ValueError:
            return []
        if not words or words[0] in _UNSETTLING:
            return []
        if words[0] == "mv":
            paths = _paths(words[1:])
        elif words[:2] == ["git", "mv"]:
            paths = _paths(words[2:])
        else:
            continue
        if paths is None:
            return []
        found.extend((_absolute(cwd, old), _absolute(cwd, new)) for old, new in paths)
    return found


def _paths(arguments: list[str]) -> list[tuple[str, str]] | None:
    words: list[str] = []
    options = True
    for word in arguments:
        if options and word == "--":
            options = False
        elif options and word.startswith("-") and word != "-":
            if word not in _QUIET_OPTIONS:
                return None
        else:
            words.append(word)
    if len(words) < 2:
        return None
    *sources, destination = words
    if len(sources) > 1:
        folder = destination.rstrip("/")
        if not folder or posixpath.basename(folder) in (".", ".."):
            return None
        return [(source, posixpath.join(folder, _name(source))) for source in sources]
    if destination.endswith("/") or not _has_suffix(destination):
        return None  # a folder that exists, or a name it would take: the shell decides
    return [(sources[0], destination)]


def _name(path: str) -> str:
    return posixpath.basename(path.rstrip("/"))


def _has_suffix(path: str) -> bool:
    stem, suffix = posixpath.splitext(posixpath.basename(path))
    return bool(stem) and len(suffix) > 1


def _absolute(cwd: str, path: str) -> str:
    return posixpath.normpath(posixpath.join(cwd, path))
