"""What an import changes before the gate sees it: paths inside the repository (or in the
sandbox folder that stands for it) become relative to it, and what `.stetignore` names keeps
its path but loses its content. (Home directories become `~` in the gate's own pass,
everywhere.)"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from stet_lsp.gate.stetignore import OMITTED, StetIgnore
from stet_lsp.trajectory.events import EventBase, FileChange, SessionStart, ToolCall, ToolResult

# Tool input keys that name the file a call reads or writes, and keys that carry its content.
_PATH_KEYS = ("file_path", "path", "notebook_path", "filename", "file", "absolute_path")
_CONTENT_KEYS = ("content", "new_string", "old_string", "edits", "new_source", "file_text")
# Arguments that say where a call runs, not what it writes.
_WHERE_KEYS = ("workdir", "cwd", "description")
# Arguments that hold a shell command (a string, or a list of arguments).
_COMMAND_KEYS = ("command", "cmd", "commands", "script")
# A line a search tool printed from a file: its path, then `:` or `-` (a line number and
# another separator may follow), then the line's text.
_MATCH_LINE = re.compile(r"(?P<path>[^\s:]*[/.][^\s:]*?)(?P<sep>:|-(?=\d+-))")
# What separates the words of a shell command that may name a file.
_SHELL_WORD_BREAK = re.compile(r"""[\s;|&<>()'"`=,]+""")


class Normalizer:
    def __init__(
        self,
        root: Path,
        ignore: StetIgnore | None,
        cwds: Iterable[str] = (),
        sandbox: str | None = None,
    ) -> None:
        roots = {str(root), str(root.resolve()), *linked_roots(root, cwds)}
        alternatives = "|".join(re.escape(r) for r in sorted(roots, key=len, reverse=True))
        # The root itself becomes ".", a path under it loses the root and its slash (and a
        # file URI its scheme: `file:///repo/a.py` is `a.py`, not the broken `file://a.py`);
        # a longer name that merely starts with the root's (`/src/app-old`) is left alone.
        # Two patterns that each start with a literal, which the regex engine finds fast (an
        # optional `file://` in front of one pattern made the pass six times slower).
        rest = "(?:(/)|(?![\\w.\\-]))"
        self._root = re.compile(f"(?:{alternatives}){rest}")
        uris = f"{alternatives}|{re.escape(sandbox)}" if sandbox else alternatives
        self._uri = re.compile(f"file://(?:{uris}){rest}")
        # The repository as the session's sandbox named it (`/workspace`, `/testbed`): a short
        # name that also ends other paths and URLs (`https://app.slack.com/workspace/…`,
        # `~/workspace/…`), so only where no name runs on into it (a JSON string's escaped
        # line break or tab before it is no name).
        start = "(?:(?<![\\w.~\\-])|(?<=\\\\[nrt]))"
        self._sandbox = re.compile(f"{start}{re.escape(sandbox)}{rest}") if sandbox else None
        self._roots = (*roots, sandbox) if sandbox else tuple(roots)
        self._ignore = None if ignore is None or ignore.empty else ignore

    def relative(self, value: str) -> str:
        """`value` with every repository path in it made relative. Serialised events (JSON
        Lines) go through it whole: JSON strings hold paths unescaped on POSIX."""
        if not any(root in value for root in self._roots):
            return value
        if "file://" in value:
            value = self._uri.sub(_relative_match, value)
        if self._sandbox is not None:
            value = self._sandbox.sub(_relative_match, value)
        return self._root.sub(_relative_match, value)

    def events(self, events: Iterable[EventBase]) -> list[EventBase]:
        """The events with ignored content replaced by the `.stetignore` marker: a call that
        names an ignored file loses its content arguments, a call that changed one (a patch,
        whose input holds the content without a path argument) all but its path arguments,
        and the result of either its output."""
        if self._ignore is None:
            return list(events)
        events = list(events)
        changed_ignored = {
            event.call_id
            for event in events
            if isinstance(event, FileChange) and event.call_id and self._change_is_ignored(event)
        }
        ignored_calls: set[str] = set()
        out: list[EventBase] = []
        for event in events:
            if isinstance(event, FileChange) and self._change_is_ignored(event):
                event = event.model_copy(
                    update={"diff": OMITTED, "content": None, "anchored": False}
                )
            elif isinstance(event, ToolCall) and self._call_is_ignored(event.input):
                ignored_calls.add(event.call_id)
                event = event.model_copy(update={"input": _without_content(event.input)})
            elif isinstance(event, ToolCall) and (
                event.call_id in changed_ignored or self._command_is_ignored(event.input)
            ):
                ignored_calls.add(event.call_id)
                event = event.model_copy(update={"input": _only_paths(event.input)})
            elif isinstance(event, ToolResult) and (
                event.call_id in ignored_calls or event.call_id in changed_ignored
            ):
                event = event.model_copy(update={"output": OMITTED})
            elif isinstance(event, ToolResult) and ":" in event.output:
                output = self._without_ignored_matches(event.output)
                if output is not event.output:
                    event = event.model_copy(update={"output": output})
            out.append(event)
        return out

    def _without_ignored_matches(self, output: str) -> str:
        """`output` with the lines a search printed from an ignored file (`path:12:text`,
        `path:text`, `path-12-text` as grep and ripgrep print them) cut after their path;
        the same string when there are none."""
        lines = output.split("\n")
        changed = False
        for number, line in enumerate(lines):
            found = _MATCH_LINE.match(line)
            if found and self._ignored(found.group("path")):
                lines[number] = f"{found.group('path')}{found.group('sep')}{OMITTED}"
                changed = True
        return "\n".join(lines) if changed else output

    def _change_is_ignored(self, change: FileChange) -> bool:
        return self._ignored(change.path) or (
            change.old_path is not None and self._ignored(change.old_path)
        )

    def _ignored(self, path: str) -> bool:
        assert self._ignore is not None
        return self._ignore.matches(self.relative(path))

    def _call_is_ignored(self, arguments: dict[str, Any]) -> bool:
        return any(
            isinstance(arguments.get(key), str) and self._ignored(arguments[key])
            for key in _PATH_KEYS
        )

    def _command_is_ignored(self, arguments: dict[str, Any]) -> bool:
        """Whether a shell command names an ignored path, or a folder whose every file is
        ignored (`cat private/notes.txt`, `grep -r key private`): what it printed may be
        that content, and the command itself may hold it (`echo … > private/x`)."""
        for key in _COMMAND_KEYS:
            value = arguments.get(key)
            words = [value] if isinstance(value, str) else value
            if not isinstance(words, list):
                continue
            for text in words:
                if not isinstance(text, str):
                    continue
                for word in _SHELL_WORD_BREAK.split(self.relative(text)):
                    if word and (self._ignored(word) or self._ignored(word.rstrip("/") + "/-")):
                        return True
        return False


def _relative_match(found: re.Match[str]) -> str:
    """A repository path made relative: the root itself is `.`, a path under it loses it."""
    return "" if found.group(1) else "."


def _without_content(arguments: dict[str, Any]) -> dict[str, Any]:
    return {key: OMITTED if key in _CONTENT_KEYS else value for key, value in arguments.items()}


def _only_paths(arguments: dict[str, Any]) -> dict[str, Any]:
    """The arguments of a call that changed an ignored file without naming it in a path
    argument (a patch, a shell command): any of them may hold the content."""
    return {
        key: value
        if key in _PATH_KEYS or key in _WHERE_KEYS or isinstance(value, bool | int | float)
        else OMITTED
        for key, value in arguments.items()
    }


def inside_repository(root: Path, cwd: str) -> bool:
    """Whether the folder `cwd` a harness recorded is the repository's root or inside it
    (spelled as it is, or through a link to it); a relative or unusable path is not."""
    if not os.path.isabs(cwd) or "\0" in cwd:
        return False
    cwd = os.path.normpath(cwd)
    for spelled in (cwd, os.path.realpath(cwd)):
        for base in (str(root), str(root.resolve())):
            if spelled == base or spelled.startswith(base.rstrip(os.sep) + os.sep):
                return True
    return False


def linked_roots(root: Path, cwds: Iterable[str]) -> set[str]:
    """Other spellings of the repository's root that the harness recorded: a session's working
    folder reached through a link (macOS' /tmp, a linked projects folder) names the root by
    the link, or a folder inside it by a path that ends in the same relative part."""
    real_root = root.resolve()
    found: set[str] = set()
    for cwd in cwds:
        if not os.path.isabs(cwd) or "\0" in cwd:
            continue
        cwd = os.path.normpath(cwd)
        try:
            inner = Path(os.path.realpath(cwd)).relative_to(real_root)
        except (ValueError, OSError):
            continue
        spelled = cwd
        for _ in inner.parts:
            spelled = os.path.dirname(spelled)
        if Path(spelled, inner) == Path(cwd) and spelled != os.sep:
            found.add(spelled)
    return found


def sandbox_paths(folder: str, events: Iterable[EventBase]) -> set[str]:
    """The paths in `folder` (relative to it; `""` for the folder itself) that the session's
    events name as files: changed files, the working folders of its starts, the path
    arguments of its calls and the words of its commands."""
    named: list[Any] = []
    for event in events:
        if isinstance(event, FileChange):
            named += [event.path, event.old_path]
        elif isinstance(event, SessionStart):
            named.append(event.cwd)
        elif isinstance(event, ToolCall):
            named += [event.input.get(key) for key in _PATH_KEYS]
            for key in _COMMAND_KEYS:
                value = event.input.get(key)
                for text in value if isinstance(value, list) else [value]:
                    if isinstance(text, str) and folder in text:
                        named += _SHELL_WORD_BREAK.split(text)
    return {rest for path in named if (rest := sandbox_path(folder, path)) is not None}


def sandbox_path(folder: str, path: Any) -> str | None:
    """`path` relative to `folder` (`""` for the folder itself), None when it is not in it."""
    if not isinstance(path, str) or "\0" in path:
        return None
    path = path.rstrip("/")
    if path == folder.rstrip("/"):
        return ""
    if not path.startswith(folder.rstrip("/") + "/"):
        return None
    rest = posixpath.normpath(path[len(folder.rstrip("/")) + 1 :])
    return None if rest in (".", "..") or rest.startswith(("../", "/")) else rest
