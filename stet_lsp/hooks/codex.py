"""Codex CLI: its `notify` program imports each finished turn.

Codex runs the program named by the top-level `notify` array of `$CODEX_HOME/config.toml`
(`~/.codex/config.toml` by default) after every turn, with one more argument: a JSON object
such as `{"type": "agent-turn-complete", "thread-id", "turn-id", "cwd", "input-messages",
"last-assistant-message"}`. Stet sets `notify = ["/path/to/stet", "hooks", "run",
"codex-notify"]` (`stet` as `stet mcp install` writes it, `core/launch.py`), which finds the
thread's rollout with the sessions finder and imports it into the working trajectory of the
repository at `cwd`. A notify that starts `stet` another way (by its bare name, as earlier
versions wrote it) is Stet's as well.

That setting is global, so each repository consents on its own: installing in a repository
records `.stet/cache/hooks/codex.json`, and a Codex turn is imported only into a repository
that has it. Codex runs a single notify program: when `notify` already names another one,
Stet refuses and changes nothing (replacing it would silently end the user's notifications;
the message says how to call Stet from that program instead).

The setting is written as two lines at the top of the file (a top-level key must come before
the first table), after a comment that says who wrote them; uninstalling removes exactly
those lines, and a file Stet created (the comment says so) is removed when nothing else is in
it, with the folder it created for it (the comment says that too) while that is empty,
unless it (or its folder) is a symbolic link now: a file moved into a dotfiles repository
and linked back is the user's, and stays, empty. `stet mcp install codex` writes the same
file and records what it created (mcp/records.py): the second of the two installs inherits
that the first created the file and its folder, so the last uninstall removes them. The
notes and the brief reach Codex through its MCP configuration (`stet mcp install codex`,
docs/mcp.md)."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from contextlib import suppress
from pathlib import Path
from typing import Any

from stet_lsp.core.errors import StetError
from stet_lsp.core.launch import by_bare_name, stet_command, stet_prefix
from stet_lsp.core.lines import undecodable_at
from stet_lsp.core.rewrites import retried
from stet_lsp.core.safefs import (
    ChangedMeanwhile,
    atomic_write,
    followed_links,
    holding,
    read_regular,
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

HARNESS = "codex"
HOOK = ["hooks", "run", "codex-notify"]
MARKER = "# Added by `stet hooks install codex` (undo: stet hooks uninstall codex)"
MARKER_CREATED = (
    "# Added by `stet hooks install codex`, which created this file "
    "(undo: stet hooks uninstall codex)"
)
MARKER_CREATED_FOLDER = (
    "# Added by `stet hooks install codex`, which created this file and its folder "
    "(undo: stet hooks uninstall codex)"
)
MARKERS = (MARKER, MARKER_CREATED, MARKER_CREATED_FOLDER)
CONSENT = "codex.json"
"""This repository's consent to imports of Codex turns, under `.stet/cache/hooks/`."""
BOM = "\ufeff"
"""What a Windows editor may start the config with: TOML parsers refuse it; it is kept."""


def notify_program() -> list[str]:
    """The notify program install writes: `stet hooks run codex-notify`."""
    return [*stet_command(), *HOOK]


def notify_line(program: list[str]) -> str:
    return f"notify = {_toml_value(program)}"


def is_stet_notify(value: Any) -> bool:
    """Whether a notify value runs Stet's hook, however `stet` is started (`launch`)."""
    if not isinstance(value, list) or not all(isinstance(word, str) for word in value):
        return False
    start = stet_prefix(value)
    return bool(start) and value[start:] == HOOK


def codex_home(home: Path | None, env: Mapping[str, str]) -> Path | None:
    configured = env.get("CODEX_HOME", "").strip()
    if configured:
        return Path(configured)
    return home / ".codex" if home is not None else None


def config_path(home: Path | None, env: Mapping[str, str]) -> Path:
    """Codex's config.toml, where its symbolic link points when it is one (a dotfiles
    manager's), as `stet mcp install codex` writes it; a link to nothing is refused."""
    folder = codex_home(home, env)
    if folder is None:
        from stet_lsp.core.home import home_problem

        raise StetError(
            f"{home_problem(env)}, and CODEX_HOME is not set: cannot find Codex's config.toml. "
            "Set HOME to your home folder (or CODEX_HOME to Codex's); nothing was changed"
        )
    return followed_links(folder / "config.toml")


def reached_through_link(home: Path | None, env: Mapping[str, str]) -> bool:
    """Whether Codex's config.toml, or its folder, is a symbolic link: the file is then a
    dotfiles manager's (moved into its repository and linked back), whoever created it."""
    folder = codex_home(home, env)
    return folder is not None and (os.path.islink(folder) or os.path.islink(folder / "config.toml"))


def consented(root: Path) -> bool:
    """Whether the repository consented to imports of Codex turns: its record is there and
    git does not track it (a record committed with a repository came with the clone, not
    from `stet hooks install codex` here)."""
    record = read_record(root, CONSENT)
    if record is None or record.get("imports") is not True:
        return False
    return record_tracked(root, CONSENT) is False


# -- the config file -------------------------------------------------------------------------


def require_folder_above(path: Path) -> None:
    """Refuse to create the config when its folder (Codex's, `$CODEX_HOME`) is missing and so
    is the folder that would hold that: Stet creates Codex's folder, which Codex needs, never
    the folders above it (a mistyped CODEX_HOME would leave a tree of them behind; Codex
    itself refuses a CODEX_HOME that does not exist)."""
    folder = path.parent
    if os.path.lexists(folder) or os.path.lexists(folder.parent):
        return
    raise StetError(
        f"{folder.parent} does not exist: Stet creates Codex's folder {folder}, not the "
        "folders above it (is CODEX_HOME mistyped?). Create them first; nothing was changed"
    )


def _write_config(path: Path, content: str, before: str | None) -> None:
    """Write the config, only while it still holds `before` (None: no file)."""
    try:
        path.parent.mkdir(exist_ok=True)  # Codex's folder only (require_folder_above)
        atomic_write(path, content.encode("utf-8"), unchanged=holding(_encoded(before)))
    except ChangedMeanwhile:
        raise ChangedWhileWritten(path) from None
    except OSError as error:
        raise StetError(
            f"cannot write {path}: {error.strerror or error}; nothing was changed"
        ) from None


def _encoded(text: str | None) -> bytes | None:
    return None if text is None else text.encode("utf-8")


def _read_config(path: Path) -> str | None:
    data = read_regular(path)
    if data is None:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise StetError(
            f"{path} is not UTF-8 ({undecodable_at(data, error)}); nothing was changed"
        ) from None


def _parse(text: str, path: Path) -> dict[str, Any]:
    import tomllib

    try:
        return tomllib.loads(text.removeprefix(BOM))
    except tomllib.TOMLDecodeError as error:
        raise StetError(f"{path} is not valid TOML ({error}); nothing was changed") from None


def with_notify(
    text: str | None, program: list[str], *, created: bool = False, new_folder: bool = False
) -> str:
    """The config's text with Stet's notify block (running `program`) at the top (after the
    byte order mark a Windows editor may have started it with). With no text (no file), or
    `created` (`stet mcp install codex` created the file), the marker says Stet created the
    file, and its folder when `new_folder`."""
    line = notify_line(program)
    marker = MARKER
    if text is None or created:
        marker = MARKER_CREATED_FOLDER if new_folder else MARKER_CREATED
    if not text:
        return f"{marker}\n{line}\n"
    bom, text = _split_bom(text)
    end = "\r\n" if "\r\n" in text else "\n"  # the file's own line endings
    return f"{bom}{marker}{end}{line}{end}{end}{text}"


def created_by_install(text: str) -> tuple[bool, bool]:
    """Whether this install created the config whose text this is (its marker says so), and
    the config's folder too: what `stet mcp install codex` inherits when it writes the file
    next (mcp/install.py)."""
    found = without_notify(text)
    return (found[1], found[2]) if found is not None else (False, False)


def _created_by_mcp_install(
    path: Path, home: Path | None, env: Mapping[str, str]
) -> tuple[bool, bool]:
    """Whether `stet mcp install codex` created the config (its record says so, and the file
    is still where it created it), and the config's folder too: inherited by this install's
    marker, so whichever of the two uninstalls last removes them."""
    if home is None:
        return False, False
    from stet_lsp.mcp import records

    base = records.state_base(home, env)
    record = records.read(base, path, records.CODEX_WHERE)
    if record is None or not records.stet_created(record):
        return False, False
    if record.get("real_path", str(path)) != os.path.realpath(path):
        return False, False
    return True, str(path.parent) in (record.get("created_folders") or [])


def renewed_notify(text: str, program: list[str]) -> str | None:
    """The config's text with the notify line Stet wrote (under its marker) running `program`
    instead, its line ending kept; None when the text has no line Stet wrote."""
    bom, text = _split_bom(text)
    lines = text.splitlines(keepends=True)
    index = _stet_line(lines)
    if index is None:
        return None
    line = lines[index]
    lines[index] = notify_line(program) + line[len(line.rstrip("\r\n")) :]
    return bom + "".join(lines)


def _stet_line(lines: list[str]) -> int | None:
    """Where Stet's notify line is: only the pair Stet writes, its marker above its line (the
    same `notify` line without it is a person's, in a profile or quoted in a multi-line
    string). Lines are compared without their line ending, so an editor that changed those is
    no obstacle."""
    bare = [line.rstrip("\r\n") for line in lines]
    return next(
        (n for n in range(1, len(bare)) if bare[n - 1] in MARKERS and _is_notify_line(bare[n])),
        None,
    )


def without_notify(text: str) -> tuple[str, bool, bool] | None:
    """The config's text without Stet's lines, whether Stet created the file, and whether it
    created the file's folder too; None when the text has no line Stet wrote. Lines are
    compared without their line ending, so an editor that changed those is no obstacle."""
    bom, text = _split_bom(text)
    lines = text.splitlines(keepends=True)
    bare = [line.rstrip("\r\n") for line in lines]
    index = _stet_line(lines)
    if index is None:
        return None
    start, end = index - 1, index + 1
    created = bare[start] in (MARKER_CREATED, MARKER_CREATED_FOLDER)
    if start == 0 and end < len(lines) and bare[end] == "":
        end += 1  # the blank line written between Stet's block and the file's text
    rest = "".join(lines[:start] + lines[end:])
    return (bom + rest if rest else rest), created, bare[start] == MARKER_CREATED_FOLDER


def _is_notify_line(line: str) -> bool:
    """Whether the line is a `notify = [...]` line that runs Stet's hook."""
    import tomllib

    if not line.startswith("notify = ["):
        return False
    try:
        return is_stet_notify(tomllib.loads(line).get("notify"))
    except tomllib.TOMLDecodeError:
        return False


def _toml_value(value: Any) -> str:
    """A value read from the config, written as TOML: notify is an array of strings, and a
    JSON string or array of strings is TOML too."""
    return json.dumps(value, ensure_ascii=False, default=str)


def _split_bom(text: str) -> tuple[str, str]:
    """The byte order mark the text starts with ("" when none), and the text after it."""
    return (BOM, text.removeprefix(BOM)) if text.startswith(BOM) else ("", text)


def install(
    root: Path,
    *,
    home: Path | None,
    env: Mapping[str, str],
    dry_run: bool = False,
    keep_notify: bool = False,
) -> dict[str, Any]:
    """`_install`, again while the config changes as it is written."""
    return retried(
        lambda: _install(root, home=home, env=env, dry_run=dry_run, keep_notify=keep_notify)
    )


def _install(
    root: Path,
    *,
    home: Path | None,
    env: Mapping[str, str],
    dry_run: bool,
    keep_notify: bool,
) -> dict[str, Any]:
    """Set notify to Stet and record this repository's consent. With `keep_notify`, a notify
    the config has stays as it is (the user's own notify program calls `stet hooks run
    codex-notify`) and only the consent is recorded; without one there is nothing to keep,
    and Stet's is set, as Codex would otherwise call nothing."""
    if record_tracked(root, CONSENT):
        raise StetError(
            tracked_record_message(CONSENT, "a consent committed with the repository is none")
        )
    path = config_path(home, env)
    text = _read_config(path)
    current = _parse(text, path).get("notify") if text is not None else None
    program = notify_program()
    content = None
    if keep_notify and current is not None:
        pass
    elif is_stet_notify(current):
        # Stet started otherwise (by its bare name, as earlier versions wrote it, or from where
        # it was installed before): as install starts it now.
        if current != program:
            content = renewed_notify(text or "", program)
    elif current is None:
        if text is None:
            require_folder_above(path)
            created, new_folder = True, not os.path.lexists(path.parent)
        else:
            created, new_folder = _created_by_mcp_install(path, home, env)
        content = with_notify(text, program, created=created, new_folder=new_folder)
        if _parse(content, path).get("notify") != program:
            raise StetError(f"{path}: cannot add notify at its top; nothing was changed")
    else:
        raise StetError(
            f"{path} already sets notify = {_toml_value(current)}, and Codex runs one notify "
            "program: "
            "Stet leaves yours in place and changed nothing. To import Codex turns too, have "
            "that program also run `stet hooks run codex-notify` with the same JSON argument "
            "it receives, and record this repository's consent with `stet hooks install codex "
            "--keep-notify`."
        )
    consent = not consented(root)
    if content is not None and not dry_run:
        require_writable(path)
    if not dry_run:
        # The consent first: a repository that refuses it (a link) leaves the config unchanged,
        # and a config that cannot be written takes the consent back. Either way nothing changed.
        if consent:
            write_record(root, CONSENT, {"version": 1, "imports": True})
        if content is not None:
            try:
                _write_config(path, content, text)
            except StetError:
                if consent:
                    remove_record(root, CONSENT)
                raise
    return _result(path, dry_run, config_changed=content is not None, content=content) | {
        "repository": str(root),
        "consent_added": consent,
        "consent_removed": False,
        "kept_notify": keep_notify and current is not None and not is_stet_notify(current),
    }


def uninstall(
    root: Path, *, home: Path | None, env: Mapping[str, str], dry_run: bool = False
) -> dict[str, Any]:
    """`_uninstall`, again while the config changes as it is written."""
    return retried(lambda: _uninstall(root, home=home, env=env, dry_run=dry_run))


def _uninstall(
    root: Path, *, home: Path | None, env: Mapping[str, str], dry_run: bool
) -> dict[str, Any]:
    path = config_path(home, env)
    text = _read_config(path)
    content: str | None = None
    remove_file = kept_created_file = folder_created = False
    changed = False
    if text is not None:
        parsed = _parse(text, path)
        found = without_notify(text)
        if found is None:
            if is_stet_notify(parsed.get("notify")):
                raise StetError(
                    f"{path} sets notify to Stet in a form Stet did not write; remove that "
                    "line by hand (nothing was changed)"
                )
        else:
            content, created, folder_created = found
            if is_stet_notify(_parse(content, path).get("notify")):
                raise StetError(f"{path}: cannot take notify out; nothing was changed")
            changed = True
            # A file Stet created that is reached through a link now lives in a dotfiles
            # repository: it stays, empty, and the link with it.
            kept_created_file = created and not content and reached_through_link(home, env)
            remove_file = created and not content and not kept_created_file
    consent = consented(root)
    if not dry_run:
        if changed:
            require_writable(path)
        if changed and read_regular(path) != _encoded(text):
            raise ChangedWhileWritten(path)
        if remove_file:
            os.unlink(path)
            if folder_created:
                with suppress(OSError):
                    os.rmdir(path.parent)  # only while empty: Codex keeps its own files there
        elif changed and content is not None:
            try:
                atomic_write(path, content.encode("utf-8"), unchanged=holding(_encoded(text)))
            except ChangedMeanwhile:
                raise ChangedWhileWritten(path) from None
        if consent:
            remove_record(root, CONSENT)
    return _result(
        path, dry_run, config_changed=changed, content=None if remove_file else content
    ) | {
        "repository": str(root),
        "consent_added": False,
        "consent_removed": consent,
        "kept_notify": False,
        "removed_file": remove_file,
        "kept_created_file": kept_created_file,
    }


def _result(
    path: Path, dry_run: bool, *, config_changed: bool, content: str | None
) -> dict[str, Any]:
    return {
        "harness": HARNESS,
        "path": str(path),
        "dry_run": dry_run,
        "changed": config_changed,
        "content": content if config_changed else None,
        "notify": notify_program(),
        "removed_file": False,
    }


def status(root: Path, *, home: Path | None, env: Mapping[str, str]) -> dict[str, Any]:
    entry: dict[str, Any] = {"harness": HARNESS, "path": None, "exists": False, "notify": None}
    entry.update({"installed": False, "bare_name": False, "problem": None})
    entry["repository"] = consented(root)
    try:
        path = config_path(home, env)
        entry["path"] = str(path)
        text = _read_config(path)
        entry["exists"] = text is not None
        if text is not None:
            notify = _parse(text, path).get("notify")
            entry["notify"] = notify
            entry["installed"] = is_stet_notify(notify)
            entry["bare_name"] = is_stet_notify(notify) and by_bare_name(notify or [])
    except StetError as error:
        entry["problem"] = as_found(error)
    return entry
