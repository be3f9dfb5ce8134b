"""Claude Code's hooks in `.claude/settings.local.json` (the local, uncommitted settings; the
committed `.claude/settings.json` is never written).

Claude Code reads `hooks` → event → a list of matcher groups, each `{"matcher"?, "hooks":
[{"type": "command", "command", "timeout"?}]}`; it runs each command through the shell with
the event's JSON on standard input. Stet adds one group per event, recognised afterwards by
its command:

- `SessionStart`: `stet hooks run session-start` prints the brief, which Claude Code adds
  to the session's context;
- `SessionEnd`: `stet hooks run session-end` imports the session's transcript into the
  working trajectory;
- `Stop`: `stet hooks run stop` does the same, at most once every two minutes per session.

`stet` is written as `stet mcp install` writes it (`core/launch.py`: the `stet` on PATH as
an absolute path, else this Python with `-m stet_lsp`), so the hooks do not depend on the
PATH Claude Code has; a command that starts `stet` another way (by its bare name, as
earlier versions wrote it) is Stet's as well.

Everything else in the file is kept as it is. Installing twice adds nothing. Uninstalling
removes exactly Stet's handlers, and gives back the file's original bytes when its content is
then what it was before the first install (`.stet/cache/hooks/claude-code.json` keeps them,
readable by the owner only); a file Stet created is removed again. A record git tracks came
with the repository (a cloned repository can commit one), not from an install here: install
refuses until it is untracked, and uninstall neither reads nor removes it (so takes out only
Stet's handlers, and leaves the `info/exclude` line).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
from collections.abc import Mapping
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stet_lsp.core.errors import StetError
from stet_lsp.core.launch import by_bare_name, stet_command, stet_prefix
from stet_lsp.core.lines import undecodable_at
from stet_lsp.core.rewrites import retried
from stet_lsp.core.safefs import (
    ChangedMeanwhile,
    atomic_write,
    ensure_stet_gitignore,
    holding,
    inside,
    make_dirs,
    read_regular,
    remove_regular,
    require_writable,
)
from stet_lsp.hooks.files import (
    ChangedWhileWritten,
    as_found,
    read_record,
    record_tracked,
    remove_record,
    tracked_record_message,
    write_record,
)

HARNESS = "claude-code"
FOLDER = Path(".claude")
LOCAL_SETTINGS = FOLDER / "settings.local.json"
PROJECT_SETTINGS = FOLDER / "settings.json"
RECORD = "claude-code.json"
TIMEOUT_SECONDS = 10
"""Each hook returns within a second (an import runs detached); the timeout is a ceiling, and
for SessionEnd it raises Claude Code's default budget of 1.5 seconds."""

EVENTS: dict[str, str] = {
    "SessionStart": "session-start",
    "SessionEnd": "session-end",
    "Stop": "stop",
}
"""The hooks Stet adds, by event (`stet hooks run EVENT`), in the order they are added."""

Settings = dict[str, Any]


def commands() -> dict[str, str]:
    """The command of each of Stet's hooks, by event, as install writes it."""
    start = stet_command()
    return {event: shlex.join([*start, "hooks", "run", name]) for event, name in EVENTS.items()}


def handler(event: str) -> dict[str, Any]:
    return {"type": "command", "command": commands()[event], "timeout": TIMEOUT_SECONDS}


# -- reading and changing settings -------------------------------------------------------------


def parse_settings(data: bytes | None, where: Path | str) -> Settings:
    """A settings file's object ({} for a missing or empty file). Refused, naming what is
    wrong, when it is not UTF-8 JSON holding an object, when a key appears twice in one object
    (writing it back would drop one), or when the hooks Stet touches are not shaped as Claude
    Code reads them."""
    if data is None:
        return {}
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise StetError(
            f"{where} is not UTF-8 ({undecodable_at(data, error)}); nothing was changed"
        ) from None
    if not text.strip():
        return {}
    try:
        value = json.loads(
            text.removeprefix("\ufeff"),
            object_pairs_hook=_unique_keys,
            parse_constant=_no_constant,
        )
    except _DuplicateKey as duplicate:
        raise StetError(
            f"{where} has the key {duplicate.key!r} twice in one object; fix it, nothing was "
            "changed"
        ) from None
    except ValueError as error:
        raise StetError(f"{where} is not valid JSON ({error}); nothing was changed") from None
    if not isinstance(value, dict):
        raise StetError(f"{where} does not hold a JSON object; nothing was changed")
    _check_shape(value, where)
    return value


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _DuplicateKey(key)
        result[key] = value
    return result


def _check_shape(settings: Settings, where: Path | str) -> None:
    hooks = settings.get("hooks")
    if hooks is None:
        return
    if not isinstance(hooks, dict):
        raise StetError(f"{where}: `hooks` is not an object; nothing was changed")
    for event in EVENTS:
        groups = hooks.get(event)
        if groups is not None and not isinstance(groups, list):
            raise StetError(f"{where}: `hooks.{event}` is not a list; nothing was changed")


def hooks_problem(settings: Settings) -> str | None:
    """What in the settings' `hooks` Claude Code cannot read (None when nothing): every
    event a list of matcher groups, each an object whose `hooks` is a list of handlers, each
    an object with a string `type` (a `command` handler with a string `command`), a group's
    `matcher` a string. Claude Code skips a settings file with such an error whole, its
    hooks with it, so Stet's hooks added there would never run. The handler types and the
    events themselves are not checked: Claude Code adds new ones."""
    hooks = settings.get("hooks")
    if hooks is None:
        return None
    if not isinstance(hooks, dict):
        return "`hooks` is not an object"
    for event, groups in hooks.items():
        if groups is None and event in EVENTS:
            continue  # install puts a list of Stet's group there
        if not isinstance(groups, list):
            return f"`hooks.{event}` is not a list"
        for number, group in enumerate(groups):
            where = f"`hooks.{event}[{number}]`"
            if not isinstance(group, dict):
                return f"{where} is not an object"
            if "matcher" in group and not isinstance(group["matcher"], str):
                return f"{where}.matcher is not a string"
            if not isinstance(group.get("hooks"), list):
                return f"{where} has no `hooks` list"
            for index, item in enumerate(group["hooks"]):
                place = f"{where}.hooks[{index}]"
                if not isinstance(item, dict):
                    return f"{place} is not an object"
                if not isinstance(item.get("type"), str):
                    return f"{place} has no string `type`"
                if item["type"] == "command" and not isinstance(item.get("command"), str):
                    return f"{place} is a command without a string `command`"
    return None


def installed_events(settings: Settings) -> list[str]:
    """The events for which Stet's command is among the settings' hooks."""
    return [event for event in EVENTS if _has_command(settings, event)]


def _has_command(settings: Settings, event: str) -> bool:
    hooks = settings.get("hooks")
    groups = hooks.get(event) if isinstance(hooks, dict) else None
    if not isinstance(groups, list):
        return False
    return any(_is_ours(item, event) for group in groups for item in _handlers(group))


def _handlers(group: Any) -> list[Any]:
    if not isinstance(group, dict):
        return []
    items = group.get("hooks")
    return items if isinstance(items, list) else []


_OPTIONS = re.compile(r"(--[a-z][a-z-]*( [A-Za-z0-9._-]+)?)( --[a-z][a-z-]*( [A-Za-z0-9._-]+)?)*")


def _words(item: Any) -> list[str]:
    """The words of a handler's command as the shell splits them (`&&`, `;` and `|` each a
    word of its own); none when it has no command or an unclosed quote."""
    if not isinstance(item, dict) or not isinstance(item.get("command"), str):
        return []
    try:
        lexer = shlex.shlex(item["command"], posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        return list(lexer)
    except ValueError:
        return []


def _is_ours(item: Any, event: str) -> bool:
    """Stet's command for the event (`stet` started as `launch.stet_prefix` knows it), with
    the options a person may add (`--every 600`)."""
    words = _words(item)
    start = stet_prefix(words)
    if not start or words[start : start + 3] != ["hooks", "run", EVENTS[event]]:
        return False
    # Options only: a command chained after Stet's (`&& other`) is a person's as well.
    options = words[start + 3 :]
    return not options or bool(_OPTIONS.fullmatch(" ".join(options)))


def runs_bare_name(settings: Settings) -> bool:
    """Whether one of Stet's handlers runs `stet` by its bare name (as earlier versions wrote
    them), which only the PATH Claude Code has can find."""
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict):
        return False
    return any(
        _is_ours(item, event) and by_bare_name(_words(item))
        for event in EVENTS
        if isinstance(hooks.get(event), list)
        for group in hooks[event]
        for item in _handlers(group)
    )


def add_hooks(settings: Settings) -> list[str]:
    """Add Stet's group to each event that lacks its command; the events added to."""
    added: list[str] = []
    for event in EVENTS:
        if _has_command(settings, event):
            continue
        if settings.get("hooks") is None:  # absent, or null: empty
            settings["hooks"] = {}
        hooks = settings["hooks"]
        if hooks.get(event) is None:
            hooks[event] = []
        hooks[event].append({"hooks": [handler(event)]})
        added.append(event)
    return added


def renew_commands(settings: Settings) -> list[str]:
    """Have Stet's handlers that start `stet` otherwise than install now does (by its bare
    name, as earlier versions wrote them, or by a path it was installed at before) start it
    as install writes it (`launch.stet_command`), options kept; the events whose handlers
    changed."""
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict):
        return []
    start = stet_command()
    renewed: list[str] = []
    for event, name in EVENTS.items():
        groups = hooks.get(event)
        for group in groups if isinstance(groups, list) else []:
            for item in _handlers(group):
                words = _words(item)
                if _is_ours(item, event) and words[: stet_prefix(words)] != start:
                    options = words[stet_prefix(words) + 3 :]
                    item["command"] = shlex.join([*start, "hooks", "run", name, *options])
                    renewed += [] if event in renewed else [event]
    return renewed


def remove_hooks(settings: Settings) -> list[str]:
    """Take Stet's handlers out (a group left with no handler goes too, then an event left
    with no group, then `hooks` left empty); the events removed from."""
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict):
        return []
    removed: list[str] = []
    for event in EVENTS:
        groups = hooks.get(event)
        if not isinstance(groups, list) or not _has_command(settings, event):
            continue
        kept_groups: list[Any] = []
        for group in groups:
            items = _handlers(group)
            kept = [item for item in items if not _is_ours(item, event)]
            if len(kept) == len(items):
                kept_groups.append(group)
            elif kept:
                kept_groups.append({**group, "hooks": kept})
        if kept_groups:
            hooks[event] = kept_groups
        else:
            del hooks[event]
        removed.append(event)
    if not hooks:
        del settings["hooks"]
    return removed


def render(settings: Settings, like: str | None) -> str:
    """The settings as JSON, indented, with line endings and a final line break like `like`
    (the file's current text; Claude Code's own style when there is none)."""
    indent: int | str = 2
    if like:
        found = re.search(r"^([ \t]+)\S", like, re.M)
        if found:
            spaces = found.group(1)
            indent = spaces if "\t" in spaces else len(spaces)
    try:
        text = json.dumps(settings, indent=indent, ensure_ascii=False, allow_nan=False)
        text.encode("utf-8")
    except ValueError as error:  # 1e400 read as infinity; a lone surrogate (\\ud83d)
        raise StetError(
            f"{LOCAL_SETTINGS}: holds a value that cannot be written back as JSON ({error}); "
            "nothing was changed"
        ) from None
    if like is None or like.endswith("\n") or not like.strip():
        text += "\n"
    if like and "\r\n" in like:
        text = text.replace("\n", "\r\n")
    return text


# -- install, uninstall, status ----------------------------------------------------------------


def install(root: Path, *, dry_run: bool = False) -> dict[str, Any]:
    """Add Stet's hooks to the local settings. Before the file is written, git is made to
    ignore it (a line in the repository's own `info/exclude`) unless it does already; a file
    git tracks is refused, since the hooks would be committed with it. The file is written
    only while it holds what was read (Claude Code writes it too, as permissions are
    granted): else the record and the exclude line are taken back, and it is read again."""
    return retried(lambda: _install(root, dry_run=dry_run))


def _install(root: Path, *, dry_run: bool) -> dict[str, Any]:
    if record_tracked(root, RECORD):
        raise StetError(
            tracked_record_message(
                RECORD, "an install record committed with the repository is none"
            )
        )
    path = inside(root, LOCAL_SETTINGS)
    data = read_regular(path, root)
    settings = parse_settings(data, LOCAL_SETTINGS)
    problem = hooks_problem(settings)
    if problem is not None:
        raise StetError(
            f"{LOCAL_SETTINGS}: {problem}, which Claude Code does not read: it skips the whole "
            "file, and would skip Stet's hooks with it. Fix that entry (or take it out); "
            "nothing was changed"
        )
    added = add_hooks(settings)
    renewed = renew_commands(settings)
    before = data.decode("utf-8") if data is not None else None
    text = render(settings, before) if added or renewed else None
    exclusion = _exclusion(root) if added else None
    result = _result(
        root,
        dry_run,
        added=added,
        renewed=renewed,
        content=text,
        created=data is None and bool(added),
    )
    result["excluded"] = str(exclusion.path) if exclusion is not None else None
    if not (added or renewed) or dry_run:
        return result
    require_writable(path)
    ensure_stet_gitignore(root)
    record = _read_own_record(root)
    previous = None if record is None else dict(record)
    if record is None:
        # The first install keeps what the file was; a later one (after some of Stet's
        # hooks were taken out by hand) keeps that first record.
        record = {
            "version": 1,
            "path": LOCAL_SETTINGS.as_posix(),
            "before": before,
            "created_folder": not os.path.lexists(root / FOLDER),
            "excluded": None,
        }
    if exclusion is not None:
        record["excluded"] = {
            "path": str(exclusion.path),
            "created": exclusion.created,
            "added": exclusion.added.decode("utf-8"),
        }
    elif record.get("excluded") is None:
        record["excluded"] = _claimed_elsewhere(root)
    write_record(root, RECORD, record)
    excluded = False
    try:
        if exclusion is not None:
            exclusion.write()
            excluded = True
        make_dirs(root, FOLDER)
        assert text is not None
        unchanged = holding(data, root)
        atomic_write(path, text.encode("utf-8"), root, unchanged=unchanged)
    except ChangedMeanwhile:
        if previous is None:
            remove_record(root, RECORD)
        else:
            write_record(root, RECORD, previous)
        if exclusion is not None and excluded:
            exclusion.take_back()
        raise ChangedWhileWritten(path) from None
    return result


def uninstall(root: Path, *, dry_run: bool = False) -> dict[str, Any]:
    """Take Stet's hooks out of the local settings: the file's original bytes when nothing
    else in it changed, removed when Stet created it and nothing else is in it; and the
    `info/exclude` line install added. Written only while the file holds what was read, as
    by install."""
    return retried(lambda: _uninstall(root, dry_run=dry_run))


def _uninstall(root: Path, *, dry_run: bool) -> dict[str, Any]:
    path = inside(root, LOCAL_SETTINGS)
    data = read_regular(path, root)
    # A record git tracks (or one whose tracking cannot be told) is none, and stays.
    own = record_tracked(root, RECORD) is False
    record = (_read_own_record(root) if own else None) or {}
    settings = parse_settings(data, LOCAL_SETTINGS)
    removed = remove_hooks(settings)
    if not removed:
        if not dry_run and record:
            # The hooks went by hand (or the file did, or an uninstall took the hooks out but
            # not the exclude line): the line goes with the record, which alone knows it.
            _unexclude(root, record.get("excluded"))
            remove_record(root, RECORD)
        return _result(root, dry_run, removed=[])
    current = data.decode("utf-8") if data is not None else None
    before = record.get("before")
    text: str | None
    if "before" in record and before is None and not settings:
        text = None  # Stet created the file, and nothing else is in it
    elif isinstance(before, str) and _same(before, settings):
        text = before  # nothing else changed: the original bytes
    else:
        text = render(settings, current)
    if not dry_run:
        require_writable(path)
        if read_regular(path, root) != data:
            raise ChangedWhileWritten(path)
        if text is None:
            remove_regular(path, root)
            if record.get("created_folder"):
                _remove_empty_folder(root, FOLDER)
        else:
            unchanged = holding(data, root)
            try:
                atomic_write(path, text.encode("utf-8"), root, unchanged=unchanged)
            except ChangedMeanwhile:
                raise ChangedWhileWritten(path) from None
        _unexclude(root, record.get("excluded"))
        if own:
            remove_record(root, RECORD)
    return _result(root, dry_run, removed=removed, content=text, removed_file=text is None)


def _read_own_record(root: Path) -> dict[str, Any] | None:
    """The install record, when its fields have the types install writes (one edited by hand
    is none: uninstall takes out only Stet's handlers)."""
    record = read_record(root, RECORD)
    if record is None:
        return None
    before, excluded = record.get("before"), record.get("excluded")
    if not (before is None or isinstance(before, str)):
        return None
    if not isinstance(record.get("created_folder", False), bool):
        return None
    if excluded is not None and not (
        isinstance(excluded, dict)
        and isinstance(excluded.get("added"), str)
        and isinstance(excluded.get("created"), bool)
    ):
        return None
    return record


@dataclass(frozen=True)
class _Exclusion:
    """The line that makes git ignore the local settings, for the repository's own
    `info/exclude` (in the git folder, shared by its worktrees, never committed)."""

    path: Path
    base: Path
    before: bytes | None

    @property
    def created(self) -> bool:
        return self.before is None

    @property
    def added(self) -> bytes:
        """What is appended: the line, after a line break when the file lacks a final one."""
        separator = b"\n" if self.before and not self.before.endswith(b"\n") else b""
        return separator + EXCLUDE_LINE.encode("utf-8") + b"\n"

    def write(self) -> None:
        """Add the line, only to the text read: another install may add a line of its own
        meanwhile (ChangedMeanwhile)."""
        from stet_lsp.core.exclusions import locked

        make_dirs(self.base, self.path.parent.relative_to(self.base))
        unchanged = holding(self.before, self.base)
        with locked(self.base):
            data = (self.before or b"") + self.added
            atomic_write(self.path, data, self.base, unchanged=unchanged)

    def take_back(self) -> None:
        """The file as it was before `write`, unless it changed since."""
        from stet_lsp.core.exclusions import locked

        unchanged = holding((self.before or b"") + self.added, self.base)
        with locked(self.base):
            if not unchanged(self.path):
                return
            if self.before is None:
                remove_regular(self.path, self.base)
            else:
                atomic_write(self.path, self.before, self.base, unchanged=unchanged)


EXCLUDE_LINE = "/" + LOCAL_SETTINGS.as_posix()


def _exclusion(root: Path) -> _Exclusion | None:
    from stet_lsp.core.targets import common_git_dir, open_repository

    repo = open_repository(root)
    relative = LOCAL_SETTINGS.as_posix()
    if relative in repo.index:
        raise StetError(
            f"{relative} is tracked by git: Stet's hooks would be committed with it. Add them "
            "to that file by hand if that is meant; nothing was changed"
        )
    if repo.path_is_ignored(relative):
        return None
    base = common_git_dir(Path(repo.path))
    path = base / "info" / "exclude"
    return _Exclusion(path, base, read_regular(path, base))


def _claimed_elsewhere(root: Path) -> dict[str, Any] | None:
    """The `info/exclude` line another work tree's install added, which this install found
    there and so did not add: recorded here too, so that the last work tree to uninstall
    takes it out (core/exclusions.py)."""
    from stet_lsp.core import exclusions

    def excluded_of(tree: Path) -> Any:
        record = read_record(tree, RECORD)
        return record.get("excluded") if record is not None else None

    return exclusions.claimed_elsewhere(root, LOCAL_SETTINGS, excluded_of)


def _unexclude(root: Path, excluded: Any) -> None:
    """Take out the `info/exclude` line install added (core/exclusions.py: kept while another
    work tree has the local settings at all). A write that fails raises, before the record
    goes: uninstall run again takes the line out."""
    from stet_lsp.core import exclusions

    gone = exclusions.unexclusion(root, LOCAL_SETTINGS, excluded)
    if gone is not None:
        exclusions.apply(gone)


def _same(before: str, settings: Settings) -> bool:
    """Whether the settings are the original's, an empty `hooks` or event list (which
    taking Stet's handlers out removes) aside."""
    try:
        original = parse_settings(before.encode("utf-8"), LOCAL_SETTINGS)
    except StetError:
        return False
    return _pruned(original) == _pruned(settings)


def _pruned(settings: Settings) -> Settings:
    """The settings without an empty or null `hooks` or event list (install reads null as
    empty)."""
    hooks = settings.get("hooks")
    if hooks is None and "hooks" in settings:
        return {key: value for key, value in settings.items() if key != "hooks"}
    if not isinstance(hooks, dict):
        return settings
    kept = {event: groups for event, groups in hooks.items() if groups not in ([], None)}
    rest = {key: value for key, value in settings.items() if key != "hooks"}
    return {**rest, "hooks": kept} if kept else rest


def _remove_empty_folder(root: Path, relative: Path) -> None:
    folder = inside(root, relative)
    with suppress(OSError):
        os.rmdir(folder)  # only an empty folder; never a link (inside() refused one)


def _result(
    root: Path,
    dry_run: bool,
    *,
    added: list[str] | None = None,
    renewed: list[str] | None = None,
    removed: list[str] | None = None,
    content: str | None = None,
    created: bool = False,
    removed_file: bool = False,
) -> dict[str, Any]:
    changed = bool(added or renewed or removed)
    return {
        "harness": HARNESS,
        "path": str(root / LOCAL_SETTINGS),
        "dry_run": dry_run,
        "changed": changed,
        "added": added or [],
        "renewed": renewed or [],
        "removed": removed or [],
        "created": created,
        "removed_file": removed_file,
        "content": content if changed and not removed_file else None,
        "commands": commands(),
    }


def status(root: Path, home: Path | None, env: Mapping[str, str]) -> dict[str, Any]:
    """Where Stet's hooks are: the local settings (what install writes), and, when someone put
    them there, the committed project settings and the user's settings (in
    `CLAUDE_CONFIG_DIR` when it is set, as Claude Code reads them)."""
    files = []
    for scope, path, inside_root in _places(root, home, env):
        entry: dict[str, Any] = {"scope": scope, "path": str(path), "exists": False}
        entry.update({"events": [], "problem": None, "bare_name": False})
        try:
            data = read_regular(path, inside_root)
            entry["exists"] = data is not None
            settings = parse_settings(data, path)
            entry["events"] = installed_events(settings)
            entry["bare_name"] = runs_bare_name(settings)
            problem = hooks_problem(settings)
            if problem is not None:
                entry["problem"] = f"{problem}: Claude Code skips this file, hooks and all"
        except StetError as error:
            entry["problem"] = as_found(error)
        files.append(entry)
    local = files[0]
    return {
        "harness": HARNESS,
        "installed": local["events"] == list(EVENTS),
        "settings": files,
        "commands": commands(),
        "ignored_by_git": _ignored(root, LOCAL_SETTINGS),
        **disabled_fields(root, home, env),
    }


def disabled_fields(root: Path, home: Path | None, env: Mapping[str, str]) -> dict[str, Any]:
    """`hooks_disabled_by` and `hooks_disabled_setting` of `status` and install's result."""
    disabled = hooks_disabled(root, home, env)
    return {
        "hooks_disabled_by": disabled[0] if disabled else None,
        "hooks_disabled_setting": disabled[1] if disabled else None,
    }


def _places(
    root: Path, home: Path | None, env: Mapping[str, str]
) -> list[tuple[str, Path, Path | None]]:
    """The settings files Claude Code reads for the project, the one that wins first: the
    local, the project's and the user's (in `CLAUDE_CONFIG_DIR` when it is set), each with
    the root its path must stay inside (None: the user's own file)."""
    places: list[tuple[str, Path, Path | None]] = [
        ("local", root / LOCAL_SETTINGS, root),
        ("project", root / PROJECT_SETTINGS, root),
    ]
    folder = env.get("CLAUDE_CONFIG_DIR")
    if folder:
        places.append(("user", Path(folder) / "settings.json", None))
    elif home is not None:
        places.append(("user", home / ".claude" / "settings.json", None))
    return places


MANAGED_FOLDERS = {
    "darwin": Path("/Library/Application Support/ClaudeCode"),
    "win32": Path("C:/Program Files/ClaudeCode"),
}
"""Where Claude Code reads its managed settings (an organisation's policy, which no other
settings file overrides) on macOS and Windows; elsewhere (Linux, WSL) `/etc/claude-code`."""
MANAGED_VARIABLE = "STET_CLAUDE_MANAGED_SETTINGS_DIR"
"""Names another folder to read as the managed settings' (to check a policy before it is
deployed, or in tests): Claude Code itself reads only its own."""
MANAGED_KEYS = ("disableAllHooks", "allowManagedHooksOnly")
"""The managed settings that keep Stet's hooks from running: no hook at all, or only the
hooks of the managed settings themselves."""


def managed_settings_folder(env: Mapping[str, str], platform: str = sys.platform) -> Path:
    configured = env.get(MANAGED_VARIABLE)
    if configured:
        return Path(configured)
    return MANAGED_FOLDERS.get(platform, Path("/etc/claude-code"))


def managed_settings_files(folder: Path) -> list[Path]:
    """`managed-settings.json`, then each `managed-settings.d/*.json` but hidden ones, in
    alphabetical order: the order Claude Code merges them in, a later value winning."""
    files = [folder / "managed-settings.json"]
    with suppress(OSError):
        drop_ins = folder / "managed-settings.d"
        names = sorted(os.listdir(drop_ins))
        files += [drop_ins / name for name in names if name.endswith(".json") and name[0] != "."]
    return files


def hooks_disabled(root: Path, home: Path | None, env: Mapping[str, str]) -> tuple[str, str] | None:
    """The settings file that keeps Stet's hooks from running, and the setting that does
    (None when none does): the managed settings' `disableAllHooks` or `allowManagedHooksOnly`
    (the last file to set it, of the base file and its drop-ins), else `disableAllHooks` of
    the local, project or user settings (`hooks_disabled_by`). A file that cannot be read
    says nothing."""
    managed: dict[str, tuple[bool, Path]] = {}
    for path in managed_settings_files(managed_settings_folder(env)):
        try:
            settings = parse_settings(read_regular(path), path)
        except StetError:
            continue
        for key in MANAGED_KEYS:
            if isinstance(settings.get(key), bool):
                managed[key] = (settings[key], path)
    for key in MANAGED_KEYS:
        value, path = managed.get(key, (False, Path()))
        if value:
            return str(path), key
    disabled_by = hooks_disabled_by(root, home, env)
    return (disabled_by, "disableAllHooks") if disabled_by is not None else None


def hooks_disabled_by(root: Path, home: Path | None, env: Mapping[str, str]) -> str | None:
    """The settings file whose `disableAllHooks: true` stops Claude Code running any hook but
    the managed settings', Stet's included (None when none does): the first of the files that
    sets it, as the local settings override the project's, and those the user's. A file that
    cannot be read says nothing."""
    for _, path, inside_root in _places(root, home, env):
        try:
            settings = parse_settings(read_regular(path, inside_root), path)
        except StetError:
            continue
        disabled = settings.get("disableAllHooks")
        if isinstance(disabled, bool):
            return str(path) if disabled else None
    return None


def _ignored(root: Path, relative: Path) -> bool | None:
    """Whether git ignores the path (None when that cannot be told)."""
    try:
        from stet_lsp.core.targets import open_repository

        return bool(open_repository(root).path_is_ignored(relative.as_posix()))
    except Exception:
        return None
