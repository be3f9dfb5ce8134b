"""Files an agent moved with a shell command (`mv`, `git mv`), read from the command line
the way a shell would run it, for the commands whose meaning is certain: simple words
joined by `&&`, `;` or line breaks. A command that a shell would expand or redirect (`$`,
globs, backquotes, pipes, subshells, `~`), that changes folder first (`cd`, `pushd`), or
that moves with options other than `-f`, `-n`, `-v`, `-i`, `-k` is read as moving nothing:
a wrong path loses a file's attribution, a guessed one could give it to another file.

A move into a folder is told from a rename as far as the words tell: a destination that
ends with `/`, or several sources. `mv a.py lib` is read as a rename to `lib` unless `lib`
has no suffix while `a.py` has one (then `lib/a.py`), the usual way of writing both."""

from __future__ import annotations

import posixpath
import re
import shlex

_EXPANDED = re.compile(r"[$`*?\[\]{}|<>()~\\]|(?<!&)&(?!&)")
_SEPARATOR = re.compile(r"\s*(?:&&|;|\n)\s*")
_QUIET_OPTIONS = frozenset({"-f", "-n", "-v", "-i", "-k", "--force", "--verbose"})
_FOLDER_CHANGES = frozenset({"cd", "pushd", "popd"})


def moved_paths(command: str, cwd: str | None) -> list[tuple[str, str]]:
    """(old path, new path) of each move `command` makes, absolute (joined to `cwd`), in
    order; [] when any part of it is uncertain."""
    if not cwd or not posixpath.isabs(cwd) or _EXPANDED.search(command):
        return []
    found: list[tuple[str, str]] = []
    for part in _SEPARATOR.split(command.strip()):
        try:
            words = shlex.split(part)
        except ValueError:
            return []
        if not words:
            continue
        if words[0] in _FOLDER_CHANGES:
            return []
        if words[0] == "mv":
            arguments = words[1:]
        elif words[:2] == ["git", "mv"]:
            arguments = words[2:]
        else:
            continue
        paths = _paths(arguments)
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
                return None  # -t, -T, -b, --suffix…: the destination means something else
        else:
            words.append(word)
    if len(words) < 2:
        return None
    *sources, destination = words
    into = (
        len(sources) > 1 or destination.endswith("/") or _looks_like_folder(sources[0], destination)
    )
    return [
        (source, posixpath.join(destination, posixpath.basename(source.rstrip("/"))))
        if into
        else (source, destination)
        for source in sources
    ]


def _looks_like_folder(source: str, destination: str) -> bool:
    name = posixpath.basename(destination)
    return "." not in name and "." in posixpath.basename(source).lstrip(".")


def _absolute(cwd: str, path: str) -> str:
    return posixpath.normpath(posixpath.join(cwd, path))
