"""What `stet mcp install` did to a configuration file, so `stet mcp uninstall` can undo it.

One record per file and server entry, in the user's state folder
(`$XDG_STATE_HOME/stet/mcp/`, `~/.local/state/stet/mcp/` by default), named by a hash of the
file's absolute path and the entry's place in it. The state folder, not the repository: a
record in the work tree would need `.stet/.gitignore` (an untracked file in a repository that
has none) and could be committed and cloned, and a user-scope file may be installed outside
any repository.

A record is small and holds as little of the file as it can: the SHA-256 of the bytes before
(null: there was no file) and of the bytes install wrote, and the lines that differ (`undo`:
what turns the written text back into the original, as line ranges of the written text and
their replacements), never a copy of the file (`~/.claude.json` holds the whole prompt history,
and a server's `env` may hold a token). `undo` is kept only when its text is under 4 KiB and
Stet's redaction gate finds no secret in it; otherwise it is null (a one-line JSON file
changes whole), and uninstall then takes out only the `stet` entry. It also names the
folders install created, `created` when `stet hooks install codex` created the file before
it (its folder is then among the folders when that install created it too: the last
uninstall of the two removes them), and the `info/exclude` line it added (or the one
another work tree's install of the same file added, which it found there). Written
atomically, readable by the owner only; nothing below the state folder is followed through a
symbolic link. The last record's removal takes out the folders made for the records (`CREATED`).
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
from collections.abc import Mapping
from contextlib import suppress
from pathlib import Path
from typing import Any

from stet_lsp.core.errors import StetError
from stet_lsp.core.safefs import (
    atomic_write,
    inside,
    make_dirs,
    read_record_object,
    remove_regular,
)

VERSION = 1
FOLDER = Path("stet") / "mcp"
CREATED = "created-folders.json"
"""In the records' folder, made with it: the folders made for it (the folder itself, and those
above it that did not exist), which the last record's removal takes out again."""
CODEX_WHERE = "[mcp_servers.stet]"
"""Where `stet mcp install codex` puts its entry, as its record names it: `stet hooks install
codex`, which writes the same file, reads the record to learn whether Stet created it."""


def state_base(home: Path, variables: Mapping[str, str]) -> Path:
    """`$XDG_STATE_HOME` when it is an absolute path (the XDG specification ignores a relative
    one), else `~/.local/state`."""
    configured = variables.get("XDG_STATE_HOME", "")
    if configured and os.path.isabs(configured):
        return Path(configured)
    return home / ".local" / "state"


def record_name(path: Path, where: str) -> str:
    key = f"{path}\0{where}".encode("utf-8", "surrogatepass")
    return hashlib.sha256(key).hexdigest()[:32] + ".json"


def digest(text: str | None) -> str | None:
    if text is None:
        return None
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def read(base: Path, path: Path, where: str) -> dict[str, Any] | None:
    """The record of the entry `where` in the file `path`; None when there is none, it cannot
    be read (over `RECORD_LIMIT` bytes, no JSON object), it is about another file, or a field
    is not of the type install writes (edited by hand: no record, only the entry goes)."""
    try:
        name = inside(base, FOLDER / record_name(path, where))
    except StetError:
        return None
    value = read_record_object(name, base)
    if value is None or value.get("version") != VERSION:
        return None
    if value.get("path") != str(path) or value.get("where") != where:
        return None
    return value if _well_formed(value) else None


def _well_formed(record: dict[str, Any]) -> bool:
    def optional(key: str, kind: type) -> bool:
        return record.get(key) is None or isinstance(record.get(key), kind)

    folders = record.get("created_folders")
    if folders is not None and not (
        isinstance(folders, list) and all(isinstance(item, str) for item in folders)
    ):
        return False
    excluded = record.get("excluded")
    if isinstance(excluded, dict):
        if not (
            isinstance(excluded.get("pattern"), str) and isinstance(excluded.get("added"), str)
        ):
            return False
        if not isinstance(excluded.get("created"), bool):
            return False
    elif excluded is not None:
        return False
    return (
        optional("before", str)
        and optional("after", str)
        and optional("undo", list)
        and optional("client", str)
        and optional("scope", str)
        and optional("real_path", str)
        and optional("created", bool)
    )


def stet_created(record: Mapping[str, Any]) -> bool:
    """Whether Stet created the file: this install (there was no file before it) or, before
    it, `stet hooks install codex` (`created`: the file held only what that install wrote)."""
    return record.get("before") is None or record.get("created") is True


def write(base: Path, record: dict[str, Any]) -> None:
    name = record_name(Path(record["path"]), record["where"])
    # ASCII: a path that is not UTF-8 (a lone surrogate) is escaped, and read back as it was.
    text = json.dumps(record, ensure_ascii=True, indent=2) + "\n"
    for attempt in (1, 2):
        folder = _folder(base)
        try:
            atomic_write(folder / name, text.encode("ascii"), base, mode=0o600)
            return
        except StetError:
            # The last uninstall may have removed the folder between its making and the write.
            if attempt == 2 or os.path.isdir(folder):
                raise


def _folder(base: Path) -> Path:
    """The records' folder, made when missing; the folders made for it are noted in it
    (`CREATED`), for the last record's removal to take them out again."""
    try:
        created = _missing(inside(base, FOLDER))
        base.mkdir(parents=True, exist_ok=True)  # the user's own state folder, as XDG asks
        folder = make_dirs(base, FOLDER)
        if created:
            note = {"version": VERSION, "created_folders": [str(path) for path in created]}
            text = json.dumps(note, ensure_ascii=True, indent=2) + "\n"
            atomic_write(folder / CREATED, text.encode("ascii"), base, mode=0o600)
    except (OSError, StetError) as error:
        raise StetError(
            f"the record of this install (for stet mcp uninstall) cannot be written to "
            f"{base / FOLDER}: {error}"
        ) from None
    return folder


def _missing(folder: Path) -> list[Path]:
    """`folder` and its parents that do not exist, the deepest first."""
    missing = []
    while not os.path.lexists(folder) and folder.parent != folder:
        missing.append(folder)
        folder = folder.parent
    return missing


def remove(base: Path, path: Path, where: str) -> None:
    """Take out the record; the last one's removal takes out the records' folder too, with
    the folders made for it that are empty, when Stet made them (`CREATED` names them)."""
    with suppress(StetError):
        remove_regular(inside(base, FOLDER / record_name(path, where)), base)
    try:
        folder = inside(base, FOLDER)
        if os.listdir(folder) != [CREATED]:
            return  # a record is left, or something not Stet's, or no note of making it
        note = read_record_object(folder / CREATED, base)
        created = note.get("created_folders") if note is not None else None
        chain = [str(path) for path in (folder, *folder.parents)]
        if not isinstance(created, list) or not created or created != chain[: len(created)]:
            return  # not this folder and those above it: edited by hand, another state folder
        remove_regular(folder / CREATED, base)
    except (OSError, StetError):
        return
    for made in created:
        try:
            os.rmdir(made)  # only while empty
        except OSError:
            return


UNDO_LIMIT = 4096
"""The most bytes of the original an `undo` keeps."""


def undo(after: str, before: str | None) -> list[list[Any]] | None:
    """What turns `after` back into `before`: `[start, end, text]` for each range of
    `after`'s lines that differs (none when `before` is None: the file goes). None when the
    lines kept would hold `UNDO_LIMIT` bytes or more, or a secret (as the redaction gate
    finds them): a record is no copy of the file."""
    if before is None:
        return []
    written = after.splitlines(keepends=True)
    original = before.splitlines(keepends=True)
    matcher = difflib.SequenceMatcher(None, written, original)
    changes: list[list[Any]] = [
        [start, end, "".join(original[first:last])]
        for tag, start, end, first, last in matcher.get_opcodes()
        if tag != "equal"
    ]
    kept = "".join(text for _, _, text in changes)
    if len(kept.encode("utf-8", "surrogatepass")) >= UNDO_LIMIT:
        return None
    from stet_lsp.gate import scan_text

    if scan_text(kept, cache=None):
        return None
    return changes


def undone(after: str, changes: Any) -> str | None:
    """`after` with the `undo` changes made; None when they do not fit it."""
    lines = after.splitlines(keepends=True)
    if not isinstance(changes, list):
        return None
    result: list[str] = []
    position = 0
    for change in changes:
        if not (isinstance(change, list) and len(change) == 3):
            return None
        start, end, text = change
        if not (isinstance(start, int) and isinstance(end, int) and isinstance(text, str)):
            return None
        if not position <= start <= end <= len(lines):
            return None
        result.extend(lines[position:start])
        result.append(text)
        position = end
    result.extend(lines[position:])
    return "".join(result)
