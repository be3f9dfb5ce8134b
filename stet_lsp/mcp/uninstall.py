"""`stet mcp uninstall CLIENT`: the `stet` server out of the file `stet mcp install` wrote.

When the file's bytes are still those install wrote (and the record kept the lines that
differ: records.py), the original bytes come back (the file goes when install created it, and
the folders it created when they are empty). Otherwise only the `stet` entry is taken out
and the rest of the file is kept: JSON is written again in the file's indentation, as install
writes it; in TOML the lines of `[mcp_servers.stet]` and its subtables go. The `info/exclude`
line install added goes too, unless another work tree of the repository has the same file
(whatever it holds: git would show it); a work tree whose install found another's line there
recorded it too, so the last work tree to uninstall takes it out. Without a record (an entry
written by hand, or by an earlier version) only the entry is taken out. The same files are
refused as by install: links to nothing, files git tracks, files that do not parse.
"""

from __future__ import annotations

import difflib
import os
import tomllib
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stet_lsp.core import exclusions
from stet_lsp.core.errors import StetError
from stet_lsp.core.exclusions import Unexclusion
from stet_lsp.core.safefs import (
    ChangedMeanwhile,
    atomic_write,
    holding,
    inside,
    remove_regular,
    require_writable,
)
from stet_lsp.mcp import records
from stet_lsp.mcp.install import (
    BOM,
    NOTHING,
    SERVER,
    ChangedWhileWritten,
    Environment,
    Plan,
    UneditableToml,
    parse_json,
    plan,
    render_json,
    table_spans,
)


@dataclass(frozen=True)
class Removal:
    """What `apply` does: the file's text before and after (None: the file goes)."""

    target: Plan
    server: Any
    """The entry taken out (None: there is none, nothing to do)."""
    before: str | None
    after: str | None
    restored: bool
    """Whether `after` is the file's original, from the record."""
    recorded: bool
    folders: tuple[Path, ...]
    unexclusion: Unexclusion | None
    notes: tuple[str, ...]
    recorded_at: Path | None = None
    """The path the record is kept under (install's; the configured path's when the file was
    moved and linked back since)."""

    @property
    def action(self) -> str:
        if self.server is None:
            return "unchanged"
        if self.after is None:
            return "delete"
        return "restore" if self.restored else "update"

    def diff(self) -> str:
        shown = self.target.shown
        before = (self.before or "").splitlines(keepends=True)
        after = (self.after or "").splitlines(keepends=True)
        end = shown if self.after is not None else "/dev/null"
        lines = difflib.unified_diff(before, after, fromfile=shown, tofile=end)
        return "".join(line if line.endswith("\n") else line + "\n" for line in lines)

    def to_json(self, dry_run: bool) -> dict[str, Any]:
        target = self.target
        return {
            "client": target.client,
            "scope": target.scope,
            "path": str(target.path),
            "action": self.action,
            "dry_run": dry_run,
            "server": self.server,
            "excluded": self.unexclusion.pattern if self.unexclusion else None,
            "exclude_file": str(self.unexclusion.path) if self.unexclusion else None,
            "diff": self.diff() if self.server is not None else "",
            "notes": list(self.notes),
        }


def plan_removal(
    client: str,
    scope: str | None = None,
    *,
    directory: Path | str = ".",
    environment: Environment | None = None,
) -> Removal:
    """What uninstalling the server of `client` at `scope` does, run from `directory`."""
    env = environment or Environment.current()
    # The install plan finds the file and refuses what install refuses; its merge is unused.
    try:
        target = plan(
            client, scope, directory=directory, environment=env, command=["stet"], removing=True
        )
    except UneditableToml as error:
        raise StetError(
            f"{error.shown} defines the stet server in a form Stet does not edit line by line "
            f"(an inline table, or dotted keys); {NOTHING}. Remove mcp_servers.stet by hand"
        ) from None
    current = target.before
    record, recorded_at = _record(target)
    body = current.removeprefix(BOM) if current is not None else None
    entry = _entry(target, body) if body is not None and body.strip() else None
    if entry is None:
        notes: tuple[str, ...] = ()
        unexclusion = None
        if record is not None:
            # The entry went by hand, or the file did, or an uninstall took the entry out but
            # not the exclude line: the line goes with the record, which alone knows it.
            unexclusion = _unexclusion(target, record)
            if unexclusion is not None and current is not None:
                notes = (f"{target.shown} is kept, and no longer out of commits: git shows it",)
        recorded = record is not None
        return Removal(
            target, None, current, current, False, recorded, (), unexclusion, notes, recorded_at
        )
    assert current is not None and body is not None
    after: str | None = None
    restored = held_before = False
    # A file install created goes only while it is still where install created it.
    created = record is not None and records.stet_created(record)
    moved = record is not None and created and not _where_created(target, record, recorded_at)
    if record is not None and record.get("after") == records.digest(current):
        original = None
        if record.get("before") is not None:
            original = records.undone(current, record.get("undo"))
        fits = records.digest(original) == record.get("before")
        held_before = (
            fits and original is not None and _entry(target, original.removeprefix(BOM)) is not None
        )
        if fits and not held_before and not moved:
            after, restored = original, True
    if not restored:
        rest, empty = _without(target, body)
        after = None if empty and created and not moved else BOM * current.startswith(BOM) + rest
    folders: tuple[Path, ...] = ()
    if after is None and record is not None:
        folders = _created_folders(target, record)
    unexclusion = _unexclusion(target, record) if record is not None else None
    notes = _notes(target, record, restored, held_before, after, unexclusion, moved)
    return Removal(
        target,
        entry,
        current,
        after,
        restored,
        record is not None,
        folders,
        unexclusion,
        notes,
        recorded_at,
    )


def apply_removal(removal: Removal) -> None:
    """The file first, then the exclude line (the file is never there unignored), then the
    record."""
    target = removal.target
    if removal.server is not None:
        require_writable(target.path)
        before = None if removal.before is None else removal.before.encode("utf-8")

        unchanged = holding(before, target.root)
        if not unchanged(target.path):  # the file changed since it was read: plan again
            raise ChangedWhileWritten(target.shown)
        if removal.after is None:
            if target.root is not None:
                remove_regular(target.path, target.root)
            else:
                with suppress(FileNotFoundError):
                    os.unlink(target.path)
            for folder in removal.folders:
                with suppress(OSError):
                    os.rmdir(folder)  # only an empty folder; a link is no folder to rmdir
        else:
            try:
                data = removal.after.encode("utf-8")
                atomic_write(target.path, data, target.root, unchanged=unchanged)
            except ChangedMeanwhile:
                raise ChangedWhileWritten(target.shown) from None
    if removal.unexclusion is not None:
        exclusions.apply(removal.unexclusion)
    if removal.recorded and target.state is not None:
        # Both paths: an earlier version left the record under the path the client names
        # when a file moved and linked back since was installed again.
        for path in (target.path, target.configured):
            if path is not None:
                records.remove(target.state, path, target.where)


def _record(target: Plan) -> tuple[dict[str, Any] | None, Path | None]:
    """The record of the install, and the path it is kept under: the file's, else (the file
    was moved and linked back since install wrote it) the path the client names."""
    state = target.state
    if state is None:
        return None, None
    for path in (target.path, target.configured):
        if path is not None:
            record = records.read(state, path, target.where)
            if record is not None:
                return record, path
    return None, None


def _where_created(target: Plan, record: dict[str, Any], recorded_at: Path | None) -> bool:
    """Whether the file is where install created it. Inside the repository it is (no link
    is followed there); a user's file is when its path, every link followed, is still the one
    install wrote: one moved into a dotfiles repository and linked back (the file or a
    folder on its way) is the user's now, and stays."""
    if target.root is not None:
        return True
    if recorded_at != target.path:
        return False
    return bool(os.path.realpath(target.path) == record.get("real_path", str(target.path)))


# -- the entry ---------------------------------------------------------------------------------


def _entry(target: Plan, text: str) -> Any:
    """The `stet` entry in the file's text (no byte order mark); None when there is none."""
    if not text.strip():
        return None
    if target.client == "codex":
        servers = _toml(text, target.shown).get("mcp_servers")
        return servers.get(SERVER) if isinstance(servers, dict) else None
    table: Any = parse_json(text, target.shown)
    for key in target.keys:
        table = table.get(key) if isinstance(table, dict) else None
    return table.get(SERVER) if isinstance(table, dict) else None


def _toml(text: str, shown: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise StetError(f"{shown} is not valid TOML ({error}); {NOTHING}") from None


def _without(target: Plan, text: str) -> tuple[str, bool]:
    """The text without the `stet` entry, and whether nothing else is in it (but empty
    objects)."""
    if target.client == "codex":
        result = _without_toml(text, target.shown)
        return result, not result.strip()
    data = parse_json(text, target.shown)
    table: Any = data
    for key in target.keys:
        table = table[key]
    del table[SERVER]
    return render_json(data, text), not _pruned(data)


def _pruned(value: Any) -> Any:
    """The value without objects that hold nothing (but empty objects)."""
    if not isinstance(value, dict):
        return value
    kept = {key: _pruned(item) for key, item in value.items()}
    return {key: item for key, item in kept.items() if item != {}}


def _without_toml(text: str, shown: str) -> str:
    data = _toml(text, shown)
    lines = text.splitlines(keepends=True)
    spans = table_spans(lines, ["mcp_servers", SERVER])
    kept: list[str] = []
    for number, line in enumerate(lines):
        if any(start <= number < end for start, end in spans):
            continue
        after_table = any(number == end for _, end in spans)
        if after_table and not line.strip() and kept and not kept[-1].strip():
            continue  # the blank line before the table and the one after: one is enough
        kept.append(line)
    if spans and spans[0][0] == 0:
        while kept and not kept[0].strip():
            kept.pop(0)  # the table was first: the blank line after it went with it
    if spans and spans[-1][1] == len(lines):
        while kept and not kept[-1].strip():
            kept.pop()  # the table was last: the blank line install put before it
    result = "".join(kept)
    expected = dict(data)
    servers = dict(expected["mcp_servers"])
    del servers[SERVER]
    expected["mcp_servers"] = servers
    try:
        removed = tomllib.loads(result)
    except tomllib.TOMLDecodeError:
        removed = None
    if removed is not None and servers == {} and "mcp_servers" not in removed:
        removed["mcp_servers"] = {}
    if removed != expected:
        raise StetError(
            f"{shown} defines the stet server in a form Stet does not edit line by line (an "
            f"inline table, or dotted keys); {NOTHING}. Remove mcp_servers.stet by hand"
        )
    return result


# -- what install created ----------------------------------------------------------------------


def _created_folders(target: Plan, record: dict[str, Any]) -> tuple[Path, ...]:
    """The folders install created for the file, innermost first, that are still folders (in
    the repository: below its root, no link on the way)."""
    found = []
    for name in record.get("created_folders") or []:
        if not isinstance(name, str):
            continue
        folder = Path(name)
        if folder not in target.path.parents:
            continue
        if target.root is not None:
            try:
                folder = inside(target.root, folder)
            except StetError:
                continue
        found.append(folder)
    return tuple(found)


def _unexclusion(target: Plan, record: dict[str, Any]) -> Unexclusion | None:
    """The exclude line install added, taken out of this repository's `info/exclude` (worked
    out again: the record names where it was), unless another work tree has the same file."""
    excluded = record.get("excluded")
    if not isinstance(excluded, dict) or target.root is None:
        return None
    relative = target.path.relative_to(target.root)
    if excluded.get("pattern") != "/" + relative.as_posix():
        return None
    return exclusions.unexclusion(target.root, relative, excluded)


def _notes(
    target: Plan,
    record: dict[str, Any] | None,
    restored: bool,
    held_before: bool,
    after: str | None,
    unexclusion: Unexclusion | None,
    moved: bool,
) -> tuple[str, ...]:
    notes: list[str] = []
    if after is not None and not restored:
        if moved:
            notes.append(
                "stet mcp install created this file, but it is no longer where it was created "
                "(a symbolic link leads to it now, a dotfiles manager's): the stet entry is "
                "taken out and the file is kept, even if empty"
            )
        elif held_before:
            notes.append(
                "the file held a stet server before stet mcp install replaced it: the stet "
                "entry is taken out, the rest of the file is kept"
            )
        elif record is None:
            notes.append(
                "no record of an install here (added by hand, or by an earlier Stet): only the "
                "stet entry is taken out, the rest of the file is kept"
            )
        elif record.get("after") == records.digest(target.before) and record.get("undo") is None:
            notes.append(
                "the record keeps none of the original's lines (too many, or a secret in "
                "them): only the stet entry is taken out, the rest of the file is kept"
            )
        else:
            notes.append(
                "the file changed since stet mcp install wrote it: only the stet entry is "
                "taken out, the rest of the file is kept"
            )
    if target.root is not None and unexclusion is None and after is not None:
        excluded = record.get("excluded") if record else None
        if record is None or not isinstance(excluded, dict):
            notes.append(
                "the repository's info/exclude is left as it is: no record says Stet added a "
                "line for this file"
            )
    if unexclusion is not None and after is not None:
        notes.append(f"{target.shown} is kept, and no longer out of commits: git shows it")
    if target.client == "claude-code":
        notes.append(
            "Claude Code rewrites this file while it runs: quit open sessions first (or run: "
            f"claude mcp remove {SERVER} --scope {target.scope})"
        )
    return tuple(notes)
