"""The style sheet's operations as both front ends call them: the `stet` command line prints
these results with `--json`, the language server returns them from its commands. Every
argument is checked here, and every result is a JSON-ready dict with `version` and `target`
(docs/cli.md describes the shapes)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path

from stet_lsp.core.anchors import make_anchor, relative_path
from stet_lsp.core.brief import DEFAULT_BUDGET
from stet_lsp.core.errors import StetError, TrackedSheetError
from stet_lsp.core.model import Entry, format_time, parse_time, utc_now
from stet_lsp.core.sheet import EntryFilter, StyleSheet, check_author, check_kind, check_status
from stet_lsp.core.targets import Target

TYPE_CHECKING = False  # as typing's, without importing typing (start-up of the command line)
if TYPE_CHECKING:
    from typing import Any, TypeVar

    _Checked = TypeVar("_Checked")

JSON_VERSION = 1
"""Fields are only ever added within a version."""

Result = dict[str, "Any"]


def target_json(target: Target) -> dict[str, Any]:
    return {"kind": target.kind, "name": target.name, "label": target.label, "key": target.key}


def result(target: Target, **fields: Any) -> Result:
    return {"version": JSON_VERSION, "target": target_json(target), **fields}


def list_entries(
    sheet: StyleSheet,
    *,
    kind: str | None = None,
    author: str | None = None,
    status: str | None = None,
    file: str | Path | None = None,
    texts: Mapping[str, str] | None = None,
    offset: int = 0,
    limit: int | None = None,
) -> Result:
    """The entries that pass every filter given, from the `offset`-th on and at most `limit`
    of them (all without); `total` counts the entries that pass, `more` those after the
    ones listed. `file`: repository-relative or absolute; `texts`: open editor buffers by
    repository-relative path, for the current lines."""
    where = EntryFilter(
        kind=_optional(kind, check_kind, "kind"),
        author=_optional(author, check_author, "author"),
        status=_optional(status, check_status, "status"),
        file=_repository_path(sheet, file) if file is not None else None,
    )
    if offset < 0 or (limit is not None and limit < 0):
        raise StetError(f"offset and limit are counts of entries, not {offset} and {limit}")
    document = sheet.read()
    matching = [entry for entry in document.entries() if where(entry)]
    entries = matching[offset:] if limit is None else matching[offset : offset + limit]
    lines = sheet.current_lines(entries, _texts(texts))
    paused, until = sheet.pause_state()
    return result(
        sheet.target,
        sheet=str(sheet.path),
        paused=paused,
        paused_until=format_time(until) if until else None,
        total=len(matching),
        more=max(0, len(matching) - offset - len(entries)),
        entries=[entry_json(entry, lines) for entry in entries],
        problems=[problem.to_dict() for problem in document.problems],
    )


def show_entry(
    sheet: StyleSheet, entry_id: str, *, texts: Mapping[str, str] | None = None
) -> Result:
    entry = sheet.get(_string(entry_id, "id"))
    return _entry_result(sheet, entry, texts)


def add_entry(
    sheet: StyleSheet,
    text: str,
    *,
    kind: str = "note",
    author: str = "human",
    file: str | Path | None = None,
    line: int | None = None,
    file_text: str | None = None,
) -> Result:
    """Add an entry, anchored to 1-based `line` of `file` (repository-relative or absolute)
    when both are given; `file_text` is that file's editor text, if it is open."""
    checked_kind = check_kind(_string(kind, "kind"))
    checked_author = check_author(_string(author, "author"))
    anchor = None
    if (file is None) != (line is None):
        raise StetError("a file and a line go together: give both to anchor an entry")
    if file is not None and line is not None:
        if isinstance(line, bool) or not isinstance(line, int):
            raise StetError(f"line must be a whole number, not {line!r}")
        anchor = make_anchor(sheet.target.root, _absolute(sheet, file), line, file_text)
    entry = sheet.add(
        _string(text, "text"), kind=checked_kind, author=checked_author, anchor=anchor
    )
    return _entry_result(sheet, entry)


def edit_entry(sheet: StyleSheet, entry_id: str, text: str) -> Result:
    entry = sheet.edit_text(_string(entry_id, "id"), _string(text, "text"))
    return _entry_result(sheet, entry)


def discard_entry(sheet: StyleSheet, entry_id: str) -> Result:
    entry = sheet.set_status(_string(entry_id, "id"), "discarded")
    return _entry_result(sheet, entry)


def brief(
    sheet: StyleSheet, budget: int = DEFAULT_BUDGET, texts: Mapping[str, str] | None = None
) -> Result:
    """The brief; `texts` (unsaved buffers by repository path) place anchors as `list` does."""
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
        raise StetError(f"budget must be a positive number of tokens (1 or more), not {budget!r}")
    refuse_tracked_sheet(sheet)
    return result(sheet.target, **sheet.brief(budget, _texts(texts)).to_dict())


def refuse_tracked_sheet(sheet: StyleSheet) -> None:
    """A sheet git's index holds came with the repository (a clone can commit the sheet of a
    branch its users will check out) or was staged: its text is not this clone's working
    memory and is not briefed to an agent. Its entries can still be listed and shown; every
    write refuses it (`StyleSheet.refuse_tracked`)."""
    relative = sheet.tracked_path()
    if relative is not None:
        raise TrackedSheetError(tracked_sheet_message(sheet.target.label, relative))


def tracked_sheet_message(label: str, relative: str) -> str:
    return (
        f"the style sheet of {label} is not briefed: git's index holds {relative}, so it came "
        "with the repository (or was staged) and is not this clone's own working memory; "
        "its text could steer an agent. Read it first (stet note list). To keep its entries, "
        f"untrack it: git rm --cached {relative}, and commit that (the file and its entries "
        "stay on disk, and the brief gives them from then on); to drop them, delete the file too"
    )


def pause(sheet: StyleSheet, until: str | None = None) -> Result:
    """Refuse new agent and margin entries, until `until` (an ISO date or time) if given."""
    moment = parse_until(until) if until is not None else None
    sheet.pause(moment)
    return result(sheet.target, paused=True, paused_until=format_time(moment) if moment else None)


def resume(sheet: StyleSheet) -> Result:
    """End a pause; `was_paused` says whether one was in effect (false: nothing changed)."""
    was_paused = sheet.resume()
    return result(sheet.target, paused=False, paused_until=None, was_paused=was_paused)


_UNTIL_FORMS = " (such as 2026-12-24, or 2026-12-24T18:00:00Z for a time)"


def parse_until(until: str) -> datetime:
    """An ISO date or time in the future (a bare date is its midnight UTC)."""
    try:
        moment = parse_time(_string(until, "until"))
    except ValueError:
        raise StetError(f"until {until!r} is not an ISO date or time{_UNTIL_FORMS}") from None
    if moment <= utc_now():
        raise StetError(f"until {format_time(moment)} is in the past: give a later one")
    return moment


def entry_json(entry: Entry, lines: Mapping[str, int | None]) -> dict[str, Any]:
    """The entry with `placement`: None without an anchor, else the 1-based line where the
    anchored text is now (None and `lost` when it is gone)."""
    data = entry.to_dict()
    if entry.anchor is None:
        data["placement"] = None
    else:
        line = lines.get(entry.id)
        data["placement"] = {"line": line, "lost": line is None}
    return data


def _entry_result(
    sheet: StyleSheet, entry: Entry, texts: Mapping[str, str] | None = None
) -> Result:
    lines = sheet.current_lines([entry], _texts(texts)) if entry.anchor else {}
    return result(sheet.target, entry=entry_json(entry, lines))


def _optional(value: str | None, check: Callable[[str], _Checked], what: str) -> _Checked | None:
    return None if value is None else check(_string(value, what))


def _string(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise StetError(f"{what} must be a string, not {value!r}")
    return value


def _absolute(sheet: StyleSheet, file: str | Path) -> Path:
    """Relative paths are taken from the repository's root."""
    return sheet.target.root / file


def _repository_path(sheet: StyleSheet, file: str | Path) -> str:
    return relative_path(sheet.target.root, _absolute(sheet, file))


def _texts(texts: Mapping[str, str] | None) -> dict[str, str] | None:
    return dict(texts) if texts is not None else None
