"""`stet mcp install CLIENT`: the `stet` server in the configuration file each MCP client
reads (docs/mcp.md says which file, and why).

| client | local (the default, but codex) | user |
|---|---|---|
| claude-code | ~/.claude.json, `projects[<root>].mcpServers` | ~/.claude.json, `mcpServers` |
| codex | .codex/config.toml, `[mcp_servers.stet]` | ~/.codex/config.toml (default) |
| cursor | .cursor/mcp.json, `mcpServers` | ~/.cursor/mcp.json |
| vscode | .vscode/mcp.json, `servers` | the user profile's mcp.json |

A file is parsed, the `stet` server added or replaced, everything else kept, and the result
written atomically; a file that does not parse is refused, unchanged. A file inside the
repository is kept out of commits: it is refused when git tracks it, and added to the
repository's own `info/exclude` (never committed) unless git ignores it already. Nothing is
written until `apply`; a plan shows the exact result as a diff. `apply` records what it did
(records.py), which `stet mcp uninstall` (uninstall.py) undoes.
"""

from __future__ import annotations

import copy
import dataclasses
import difflib
import json
import math
import os
import re
import shlex
import sys
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from stet_lsp.core import exclusions, rewrites
from stet_lsp.core.errors import StetError
from stet_lsp.core.home import required_home
from stet_lsp.core.launch import stet_command
from stet_lsp.core.lines import undecodable_at
from stet_lsp.core.safefs import (
    ChangedMeanwhile,
    atomic_write,
    followed_links,
    holding,
    inside,
    make_dirs,
    read_regular,
    remove_regular,
    require_writable,
)
from stet_lsp.core.targets import common_git_dir, open_repository, repository_root
from stet_lsp.mcp import records

CLIENTS = ("claude-code", "codex", "cursor", "vscode")
SCOPES = ("local", "user")
DEFAULT_SCOPES = {"claude-code": "local", "codex": "user", "cursor": "local", "vscode": "local"}
SERVER = "stet"
WORKSPACE = "${workspaceFolder}"
"""Cursor and VS Code put the open folder here; `stet mcp -C` starts from it."""
NOTHING = "nothing was changed"

Format = Literal["json", "toml"]


@dataclass(frozen=True)
class Environment:
    """Where the user's files are: the home folder, the environment (CODEX_HOME,
    CLAUDE_CONFIG_DIR, XDG_CONFIG_HOME, APPDATA) and the platform; injectable for tests."""

    home: Path
    variables: Mapping[str, str] = field(default_factory=dict)
    platform: str = sys.platform

    @classmethod
    def current(cls) -> Environment:
        return cls(required_home(os.environ), dict(os.environ), sys.platform)

    def shown(self, path: Path) -> str:
        """`path` with the home folder as `~`."""
        try:
            return "~/" + path.relative_to(self.home).as_posix()
        except ValueError:
            return str(path)


@dataclass(frozen=True)
class Exclusion:
    """A line for the repository's `info/exclude`, which keeps a file out of commits."""

    path: Path
    base: Path
    pattern: str
    before: str
    after: str


@dataclass(frozen=True)
class Plan:
    """What `apply` writes: the configuration file's text before (None: no file) and after."""

    client: str
    scope: str
    path: Path
    shown: str
    where: str
    """Where in the file the server is, for messages (`mcpServers.stet`)."""
    before: str | None
    after: str
    server: dict[str, Any]
    root: Path | None
    """The repository's root when the file is inside it (the boundary of the write)."""
    exclusion: Exclusion | None
    notes: tuple[str, ...]
    mode: int = 0o644
    keys: tuple[str, ...] = ()
    """The keys of the JSON object that holds the servers (none for TOML)."""
    state: Path | None = None
    """The user's state folder, where `apply` records what it did (records.py)."""
    configured: Path | None = None
    """A user's file as the client names it, before symbolic links were followed to `path`
    (None: inside the repository, where no link is followed)."""

    @property
    def action(self) -> str:
        if self.before is None:
            return "create"
        return "unchanged" if self.before == self.after else "update"

    def diff(self) -> str:
        before = (self.before or "").splitlines(keepends=True)
        after = self.after.splitlines(keepends=True)
        start = self.shown if self.before is not None else "/dev/null"
        lines = difflib.unified_diff(before, after, fromfile=start, tofile=self.shown)
        return "".join(line if line.endswith("\n") else line + "\n" for line in lines)

    def to_json(self, dry_run: bool) -> dict[str, Any]:
        return {
            "client": self.client,
            "scope": self.scope,
            "path": str(self.path),
            "action": self.action,
            "dry_run": dry_run,
            "server": self.server,
            "excluded": self.exclusion.pattern if self.exclusion else None,
            "exclude_file": str(self.exclusion.path) if self.exclusion else None,
            "diff": self.diff(),
            "notes": list(self.notes),
        }


def plan(
    client: str,
    scope: str | None = None,
    *,
    directory: Path | str = ".",
    environment: Environment | None = None,
    command: Sequence[str] | None = None,
    removing: bool = False,
) -> Plan:
    """The plan for `client` at `scope` (its default when None), run from `directory`
    (`removing`: for uninstall, which finds the file as install does and creates nothing)."""
    if client not in CLIENTS:
        raise StetError(f"unknown client {client!r} (expected one of: {', '.join(CLIENTS)})")
    scope = scope or DEFAULT_SCOPES[client]
    if scope not in SCOPES:
        raise StetError(f"unknown scope {scope!r} (expected one of: {', '.join(SCOPES)})")
    env = environment or Environment.current()
    start = list(command or stet_command())
    if not start or not all(isinstance(part, str) and part for part in start):
        raise StetError("the server's command cannot be empty")
    root: Path | None = None
    repo = None
    if scope == "local":
        repo = open_repository(directory)
        root = repository_root(repo)
    if client == "claude-code":
        result = _claude(scope, start, env, root)
    elif client == "codex":
        result = _codex(scope, start, env, root, repo)
        if result.action == "create" and root is None and not removing:
            from stet_lsp.hooks.codex import require_folder_above

            require_folder_above(result.path)
    else:
        result = _editor(client, scope, start, env, root, repo)
    return dataclasses.replace(result, state=records.state_base(env.home, env.variables))


class ChangedWhileWritten(rewrites.ChangedWhileWritten):
    """The file changed between its reading and its writing (the client, another editor,
    another `stet` command): nothing was written; planning again reads the change."""

    def __init__(self, shown: str) -> None:
        super().__init__(f"{shown} changed while Stet wrote it; {NOTHING}, run the command again")


def apply(plan: Plan) -> None:
    """Write the plan: the record of what is done (for `stet mcp uninstall`; a state folder
    it cannot be written to stops the install before anything is written), the exclusion, so
    the file is never there unignored (also when the file holds the server already), then the
    file, only while it still holds what the plan read (ChangedWhileWritten: the record and
    the exclusion are taken back)."""
    if plan.action != "unchanged":
        require_writable(plan.path)
    record = _record(plan)
    previous = None
    if record is not None and plan.state is not None:
        previous = records.read(plan.state, plan.path, plan.where)
        records.write(plan.state, record)
    excluded = False
    try:
        if plan.exclusion is not None:
            _exclude(plan.exclusion)
            excluded = True
        if plan.action != "unchanged":
            _write(plan)
    except ChangedMeanwhile:
        if record is not None and plan.state is not None:
            if previous is None:
                records.remove(plan.state, plan.path, plan.where)
            else:
                records.write(plan.state, previous)
        if plan.exclusion is not None and excluded:
            _take_back(plan.exclusion)
        raise ChangedWhileWritten(plan.shown) from None
    moved_from = _moved_from(plan) if record is not None else None
    if moved_from is not None and plan.state is not None:
        # The file was moved and linked back since: its record is now under its new path.
        records.remove(plan.state, moved_from, plan.where)


def _write(plan: Plan) -> None:
    data = plan.after.encode("utf-8")
    before = None if plan.before is None else plan.before.encode("utf-8")
    unchanged = holding(before, plan.root)
    if plan.root is not None:
        make_dirs(plan.root, plan.path.parent.relative_to(plan.root))
    else:
        plan.path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(plan.path, data, plan.root, mode=plan.mode, unchanged=unchanged)


def _exclude(exclusion: Exclusion) -> None:
    """Add the line, only to the text the plan read: another install may add a line of its
    own meanwhile (ChangedMeanwhile)."""
    before = exclusion.before.encode("utf-8", "surrogateescape")

    def unchanged(path: Path) -> bool:
        return (read_regular(path, exclusion.base) or b"") == before

    make_dirs(exclusion.base, exclusion.path.parent.relative_to(exclusion.base))
    data = exclusion.after.encode("utf-8", "surrogateescape")
    with exclusions.locked(exclusion.base):
        atomic_write(exclusion.path, data, exclusion.base, unchanged=unchanged)


def _take_back(exclusion: Exclusion) -> None:
    """The exclude file as it was before `apply` added the line, unless it changed since."""
    after = exclusion.after.encode("utf-8", "surrogateescape")
    before = exclusion.before.encode("utf-8", "surrogateescape")

    unchanged = holding(after, exclusion.base)
    with exclusions.locked(exclusion.base):
        if not unchanged(exclusion.path):
            return
        if before:
            atomic_write(exclusion.path, before, exclusion.base, unchanged=unchanged)
        else:
            remove_regular(exclusion.path, exclusion.base)


def _record(plan: Plan) -> dict[str, Any] | None:
    """The record `apply` leaves (None: the one there stays). An install over an earlier
    one whose bytes are still in the file keeps the original it recorded; over a file changed
    since, it records the file as it is now."""
    if plan.state is None:
        return None
    old = records.read(plan.state, plan.path, plan.where)
    moved_from = _moved_from(plan) if old is None else None
    if moved_from is not None:
        old = records.read(plan.state, moved_from, plan.where)
    excluded = _excluded(plan.exclusion)
    if excluded is None and not (old is not None and old.get("excluded")):
        excluded = _claimed_elsewhere(plan)
    if plan.action == "unchanged":
        if excluded is None and moved_from is None:
            return None
        if old is not None:
            return _moved(old, plan) | {"excluded": old.get("excluded") or excluded}
        return _new_record(plan, plan.before, excluded)  # the entry is a person's
    if old is not None and old.get("after") == records.digest(plan.before):
        assert plan.before is not None
        recorded = old.get("before")
        original = None if recorded is None else records.undone(plan.before, old.get("undo"))
        if records.digest(original) == recorded:
            record = _new_record(plan, original, excluded or old.get("excluded"))
            record["created_folders"] = old.get("created_folders") or []
            record["real_path"] = _moved(old, plan)["real_path"]
            return record
    return _new_record(plan, plan.before, excluded or (old or {}).get("excluded"))


def _moved_from(plan: Plan) -> Path | None:
    """The path the client names, when the file is elsewhere now (moved into a dotfiles
    repository and linked back) and an install's record is kept under that path."""
    configured = plan.configured
    if plan.state is None or configured is None or configured == plan.path:
        return None
    if records.read(plan.state, configured, plan.where) is None:
        return None
    return configured


def _moved(old: dict[str, Any], plan: Plan) -> dict[str, Any]:
    """An earlier record under the file's path now. Where install wrote the file stays as
    recorded (the path it was recorded under, for a record that does not say): uninstall
    then sees the file moved since."""
    return old | {"path": str(plan.path), "real_path": old.get("real_path") or old["path"]}


def _new_record(plan: Plan, original: str | None, excluded: Any) -> dict[str, Any]:
    missing = []
    folder = plan.path.parent
    while not os.path.lexists(folder) and folder != folder.parent:
        if plan.root is not None and not folder.is_relative_to(plan.root):
            break
        missing.append(str(folder))
        folder = folder.parent
    created, created_folder = _created_by_hooks(plan, original)
    if created_folder:
        missing.append(str(plan.path.parent))
    return {
        "version": records.VERSION,
        "client": plan.client,
        "scope": plan.scope,
        "path": str(plan.path),
        "where": plan.where,
        "before": records.digest(original),
        "after": records.digest(plan.after),
        "undo": records.undo(plan.after, original),
        "created_folders": missing,
        "created": created,
        "excluded": excluded,
        # Where the file is, every link followed: uninstall removes a file install created
        # only while it is still there (not moved into a dotfiles repository and linked back).
        "real_path": os.path.realpath(plan.path),
    }


def _created_by_hooks(plan: Plan, original: str | None) -> tuple[bool, bool]:
    """For Codex's config of the user: whether `stet hooks install codex` created the file
    (its comment says so), and its folder too. The record inherits that, so whichever of the
    two uninstalls last removes them."""
    if plan.client != "codex" or plan.root is not None or original is None:
        return False, False
    from stet_lsp.hooks.codex import created_by_install

    return created_by_install(original)


def _claimed_elsewhere(plan: Plan) -> dict[str, Any] | None:
    """The `info/exclude` line another work tree's install of the same file added, which this
    install finds there and so does not add (core/exclusions.py)."""
    state = plan.state
    if state is None or plan.root is None:
        return None
    relative = plan.path.relative_to(plan.root)

    def excluded_of(tree: Path) -> Any:
        record = records.read(state, tree / relative, plan.where)
        return record.get("excluded") if record is not None else None

    return exclusions.claimed_elsewhere(plan.root, relative, excluded_of)


def _excluded(exclusion: Exclusion | None) -> dict[str, Any] | None:
    if exclusion is None:
        return None
    return {
        "path": str(exclusion.path),
        "pattern": exclusion.pattern,
        "added": exclusion.after[len(exclusion.before) :],
        "created": not os.path.lexists(exclusion.path),
    }


# -- the clients ------------------------------------------------------------------------------


def _claude(scope: str, start: list[str], env: Environment, root: Path | None) -> Plan:
    folder = env.variables.get("CLAUDE_CONFIG_DIR")
    configured = (Path(folder) if folder else env.home) / ".claude.json"
    path = followed_links(configured)
    server = {"type": "stdio", "command": start[0], "args": [*start[1:], "mcp"], "env": {}}
    keys: tuple[str, ...] = ("mcpServers",)
    if root is not None:
        keys = ("projects", str(root), "mcpServers")
    shown = env.shown(path)
    before = _read(path, None)
    after = _keeping_bom(before, lambda text: merge_json(text, keys, SERVER, server, shown))
    command = " ".join(shlex.quote(part) for part in start)
    spelled = json.dumps(str(root), ensure_ascii=False)
    where = "mcpServers" if root is None else f"projects[{spelled}].mcpServers"
    notes = (
        f"the same as: claude mcp add --scope {scope} {SERVER} -- {command} mcp",
        "Claude Code rewrites this file while it runs: quit open sessions first (or run the "
        "command above instead)",
        "in a new session"
        + (f" started in {root}" if root is not None else "")
        + ", /mcp lists the stet server",
    )
    return Plan(
        "claude-code",
        scope,
        path,
        shown,
        f"{where}.{SERVER}",
        before,
        after,
        server,
        root=None,
        exclusion=None,
        notes=notes,
        mode=0o600,
        keys=keys,
        configured=configured,
    )


def _codex(scope: str, start: list[str], env: Environment, root: Path | None, repo: Any) -> Plan:
    server = {"command": start[0], "args": [*start[1:], "mcp"]}
    exclusion = None
    configured = None
    if root is not None:
        relative = ".codex/config.toml"
        path = inside(root, relative)
        exclusion = _exclusion(repo, root, relative)
        shown = relative
        before = _read(path, root)
        notes: tuple[str, ...] = (
            "Codex reads a project's .codex/config.toml only when the project is trusted",
        )
    else:
        folder = env.variables.get("CODEX_HOME")
        configured = (Path(folder) if folder else env.home / ".codex") / "config.toml"
        path = followed_links(configured)
        shown = env.shown(path)
        before = _read(path, None)
        notes = ("Codex starts the server in the folder it runs in: that repository's branch",)
    after = _keeping_bom(before, lambda text: merge_toml(text, SERVER, server, shown))
    notes = (*notes, "restart Codex; /mcp lists the stet server")
    where = records.CODEX_WHERE
    return Plan(
        "codex",
        scope,
        path,
        shown,
        where,
        before,
        after,
        server,
        root,
        exclusion,
        notes,
        configured=configured,
    )


def _editor(
    client: str, scope: str, start: list[str], env: Environment, root: Path | None, repo: Any
) -> Plan:
    server = {
        "type": "stdio",
        "command": start[0],
        "args": [*start[1:], "mcp", "-C", WORKSPACE],
    }
    key = "mcpServers" if client == "cursor" else "servers"
    exclusion = None
    configured = None
    if root is not None:
        relative = ".cursor/mcp.json" if client == "cursor" else ".vscode/mcp.json"
        path = inside(root, relative)
        exclusion = _exclusion(repo, root, relative)
        shown = relative
        before = _read(path, root)
    else:
        configured = _user_file(client, env)
        path = followed_links(configured)
        shown = env.shown(path)
        before = _read(path, None)
    after = _keeping_bom(before, lambda text: merge_json(text, (key,), SERVER, server, shown))
    if client == "cursor":
        notes: tuple[str, ...] = ("Cursor lists the server in its settings (MCP): switch it on",)
    else:
        notes = ("VS Code: run MCP: List Servers, start stet (Copilot's agent mode uses it)",)
    where = f"{key}.{SERVER}"
    return Plan(
        client,
        scope,
        path,
        shown,
        where,
        before,
        after,
        server,
        root,
        exclusion,
        notes,
        keys=(key,),
        configured=configured,
    )


def _user_file(client: str, env: Environment) -> Path:
    if client == "cursor":
        return env.home / ".cursor" / "mcp.json"
    if env.platform == "darwin":
        base = env.home / "Library" / "Application Support"
    elif env.platform == "win32":
        appdata = env.variables.get("APPDATA")
        base = Path(appdata) if appdata else env.home / "AppData" / "Roaming"
    else:
        config = env.variables.get("XDG_CONFIG_HOME")
        base = Path(config) if config else env.home / ".config"
    return base / "Code" / "User" / "mcp.json"


# -- reading and keeping out of commits --------------------------------------------------------


BOM = "\ufeff"


def _keeping_bom(before: str | None, merge: Callable[[str | None], str]) -> str:
    """`merge` of the file's text without the byte order mark it may start with (Windows
    editors write one; JSON and TOML parsers refuse it), the mark written back in front."""
    if before is None or not before.startswith(BOM):
        return merge(before)
    return BOM + merge(before.removeprefix(BOM))


def _read(path: Path, root: Path | None) -> str | None:
    data = read_regular(path, root)
    if data is None:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise StetError(f"{path} is not UTF-8 ({undecodable_at(data, error)}); {NOTHING}") from None


def _exclusion(repo: Any, root: Path, relative: str) -> Exclusion | None:
    """The `info/exclude` line that keeps `relative` out of commits; None when git ignores it
    already. A file git tracks is refused: the server would be committed with it."""
    if relative in repo.index:
        raise StetError(
            f"{relative} is tracked by git: the stet server would be committed with it. Use "
            f"--scope user, or add the server to that file by hand; {NOTHING}"
        )
    if repo.path_is_ignored(relative):
        return None
    base = common_git_dir(Path(repo.path))
    path = base / "info" / "exclude"
    data = read_regular(path, base)
    before = data.decode("utf-8", "surrogateescape") if data is not None else ""
    pattern = "/" + relative
    separator = "\n" if before and not before.endswith("\n") else ""
    after = f"{before}{separator}{pattern}\n"
    return Exclusion(path, base, pattern, before, after)


# -- JSON ---------------------------------------------------------------------------------------


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def merge_json(
    text: str | None, keys: Sequence[str], name: str, server: dict[str, Any], shown: str
) -> str:
    """`text` with `server` as `name` in the object at `keys` (created when missing), every
    other value kept (the entry's own fields too, but how to start the server), in the
    file's indentation."""
    data = parse_json(text, shown) if text is not None and text.strip() else {}
    table = data
    for depth, key in enumerate(keys):
        value = table.setdefault(key, {})
        if not isinstance(value, dict):
            path = keys[: depth + 1]
            where = ".".join(
                json.dumps(k, ensure_ascii=False) if "." in k or "/" in k else k for k in path
            )
            raise StetError(f"{shown}: {where} is not an object; {NOTHING}")
        table = value
    existing = table.get(name)
    if isinstance(existing, dict):
        # What a person added to the entry (`env`, `disabled`, …) stays; how to start the
        # server is Stet's.
        started = ("type", "command", "args")
        server = {
            **existing,
            **{k: v for k, v in server.items() if k in started or k not in existing},
        }
    if text is not None and existing == server:
        return text  # there already: not even the formatting changes
    table[name] = server
    return render_json(data, text)


def render_json(data: dict[str, Any], text: str | None) -> str:
    """`data` as JSON in the indentation and line endings of `text` (the file's current
    text; two spaces when there is none)."""
    indent = _json_indent(text) if text is not None and text.strip() else "  "
    rendered = json.dumps(data, ensure_ascii=False, indent=indent)
    # A lone surrogate (Claude Code writes `\ud83d` for a history cut inside an emoji) is
    # written back escaped, the same JSON value: raw, it is not UTF-8.
    rendered = _LONE_SURROGATE.sub(lambda found: f"\\u{ord(found.group()):04x}", rendered)
    if text is not None and "\r\n" in text:
        rendered = rendered.replace("\n", "\r\n")
        return rendered + "\r\n"
    return rendered + "\n"


def parse_json(text: str, shown: str) -> dict[str, Any]:
    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        result: dict[str, Any] = {}
        for key, value in items:
            if key in result:
                raise StetError(f"{shown} holds the key {json.dumps(key)} twice; {NOTHING}")
            result[key] = value
        return result

    def constant(name: str) -> Any:
        raise StetError(f"{shown} holds {name}, which JSON does not have; {NOTHING}")

    try:
        data = json.loads(text, object_pairs_hook=pairs, parse_constant=constant)
    except json.JSONDecodeError as error:
        raise StetError(
            f"{shown} is not valid JSON (line {error.lineno}, column {error.colno}: {error.msg}; "
            f"comments and trailing commas are not read); {NOTHING}"
        ) from None
    except RecursionError:
        raise StetError(f"{shown} nests too deeply to read; {NOTHING}") from None
    if not isinstance(data, dict):
        raise StetError(f"{shown} does not hold a JSON object; {NOTHING}")
    return data


def _json_indent(text: str) -> str | None:
    """The indentation of the file's first indented line; None for a one-line file."""
    lines = text.strip().splitlines()
    if len(lines) < 2:
        return None
    for line in lines[1:]:
        body = line.lstrip(" \t")
        if body and len(body) < len(line):
            return line[: len(line) - len(body)]
    return "  "


# -- TOML ---------------------------------------------------------------------------------------

_HEADER = re.compile(r"^[ \t]*\[\[?(?P<key>[^\[\]#]+?)\]\]?[ \t]*(?:#.*)?$")
_KEY_PART = re.compile(r"""[ \t]*("(?:[^"\\]|\\.)*"|'[^']*'|[A-Za-z0-9_-]+)[ \t]*(?:\.|$)""")
_QUIET = re.compile(r"^[ \t]*(?:#.*)?$")


def merge_toml(text: str | None, name: str, server: dict[str, Any], shown: str) -> str:
    """`text` with `[mcp_servers.<name>]` holding `server` (in place of any such table and its
    subtables), every other line kept as written. The result is parsed again and must equal
    the file's data with only that server changed; else nothing is written."""
    source = text or ""
    try:
        data = tomllib.loads(source)
    except tomllib.TOMLDecodeError as error:
        raise StetError(f"{shown} is not valid TOML ({error}); {NOTHING}") from None
    servers = data.get("mcp_servers", {})
    if not isinstance(servers, dict):
        raise StetError(f"{shown}: mcp_servers is not a table; {NOTHING}")
    existing = servers.get(name)
    if isinstance(existing, dict):
        # As in JSON: what a person added (`env`, `enabled`, timeouts) stays; how to start
        # the server is Stet's.
        started = ("command", "args")
        server = {
            **existing,
            **{k: v for k, v in server.items() if k in started or k not in existing},
        }
    if text is not None and existing == server:
        return text
    block = _toml_table(name, server)
    lines = source.splitlines(keepends=True)
    spans = table_spans(lines, ["mcp_servers", name])
    if spans:
        first = spans[0][0]
        kept = [line for number, line in enumerate(lines) if not _in(number, spans)]
        before, after = kept[:first], kept[first:]
        while len(after) > 1 and not after[0].strip() and not after[1].strip():
            after.pop(0)  # the blank lines between the tables taken out and what follows
        separator = "\n" if after and after[0].strip() else ""
        result = "".join(before) + block + separator + "".join(after)
    else:
        result = source
        if result and not result.endswith("\n"):
            result += "\n"
        if result.strip() and not result.endswith("\n\n"):
            result += "\n"
        result += block
    expected = copy.deepcopy(data)
    expected.setdefault("mcp_servers", {})[name] = server
    try:
        merged = tomllib.loads(result)
    except tomllib.TOMLDecodeError:
        merged = None
    if merged != expected:
        raise UneditableToml(shown, block)
    return result


class UneditableToml(StetError):
    """A TOML file whose `mcp_servers` Stet cannot edit line by line; the message says to
    add `block` by hand (uninstall says to take the server out instead)."""

    def __init__(self, shown: str, block: str) -> None:
        super().__init__(
            f"{shown} defines mcp_servers in a form Stet does not edit line by line (an "
            f"inline table, dotted keys, or a value in the stet server such as a date, which "
            f"Stet does not write); {NOTHING}. Add this table by hand:\n\n{block}"
        )
        self.shown = shown


def _toml_table(name: str, server: Mapping[str, Any]) -> str:
    return _toml_tables(["mcp_servers", name], server)


def _toml_tables(keys: list[str], table: Mapping[str, Any]) -> str:
    """The table at `keys`, its values first, then a table of its own for each table in it
    (a person's `env`). A value of a type not written here (a date) is left out: the check
    that the result reads as the data it should refuses it."""
    lines = ["[" + ".".join(_toml_key(key) for key in keys) + "]\n"]
    nested = []
    for key, value in table.items():
        if isinstance(value, dict):
            nested.append((key, value))
            continue
        rendered = _toml_value(value)
        if rendered is not None:
            lines.append(f"{_toml_key(key)} = {rendered}\n")
    for key, value in nested:
        lines.append("\n" + _toml_tables([*keys, key], value))
    return "".join(lines)


def _toml_value(value: Any) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float) and math.isfinite(value):
        return repr(value)
    if isinstance(value, str):
        return _toml_string(value)
    if isinstance(value, list):
        items = [_toml_value(item) for item in value]
        if any(item is None for item in items):
            return None
        return "[" + ", ".join(item for item in items if item is not None) + "]"
    if isinstance(value, dict):
        pairs = [(key, _toml_value(item)) for key, item in value.items()]
        if any(rendered is None for _, rendered in pairs):
            return None
        return "{" + ", ".join(f"{_toml_key(key)} = {rendered}" for key, rendered in pairs) + "}"
    return None


def _toml_key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else _toml_string(key)


def _toml_string(value: str) -> str:
    """A TOML basic string: quotes, backslashes and control characters escaped."""
    escaped = []
    for character in value:
        if character in '"\\':
            escaped.append("\\" + character)
        elif ord(character) < 0x20 or ord(character) == 0x7F:
            escaped.append(f"\\u{ord(character):04x}")
        else:
            escaped.append(character)
    return '"' + "".join(escaped) + '"'


def table_spans(lines: list[str], wanted: list[str]) -> list[tuple[int, int]]:
    """The line ranges of the tables whose key starts with `wanted` (the table and its
    subtables), each up to the next other table, less the blank and comment lines before it
    (they belong to what follows)."""
    headers = [(number, _header_key(line)) for number, line in enumerate(lines)]
    starts = [(number, key) for number, key in headers if key is not None]
    spans = []
    for index, (number, key) in enumerate(starts):
        if key[: len(wanted)] != wanted:
            continue
        end = starts[index + 1][0] if index + 1 < len(starts) else len(lines)
        while end > number + 1 and _QUIET.match(lines[end - 1]):
            end -= 1
        spans.append((number, end))
    return spans


def _header_key(line: str) -> list[str] | None:
    match = _HEADER.match(line.rstrip("\r\n"))
    if match is None:
        return None
    text, parts, position = match["key"], [], 0
    while position < len(text):
        part = _KEY_PART.match(text, position)
        if part is None or part.end() == position:
            return None
        token = part[1]
        if token.startswith('"'):
            try:
                token = json.loads(token)
            except json.JSONDecodeError:
                return None
        elif token.startswith("'"):
            token = token[1:-1]
        parts.append(token)
        position = part.end()
    return parts


def _in(number: int, spans: list[tuple[int, int]]) -> bool:
    return any(start <= number < end for start, end in spans)
