"""File changes known only from an edit tool's arguments (search and replace pairs, the
str_replace_editor commands, whole-file writes), and the FileChange fields of such a change."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from stet_lsp.trajectory.importers.diffs import Diff, file_diff, fragment_diff
from stet_lsp.trajectory.importers.fields import text_field


@dataclass(frozen=True)
class Edit:
    """One file change an edit tool call made, as far as its arguments tell."""

    path: str
    operation: Literal["create", "modify"]
    diff: Diff | None = None
    content: str | None = None


# Tools that write a whole file from a `content` argument (Claude Code, Gemini CLI, others).
_WRITE_TOOLS = frozenset({"Write", "write_file", "WriteFile", "write", "create_file"})
_PATH_KEYS = ("file_path", "path", "absolute_path", "filePath")
# OpenHands' file editor (the str_replace_editor tool) answers a command it could not carry
# out (an old_str not found, a missing parameter) with output that starts so.
EDITOR_REFUSAL = "ERROR:\n"


def edits_from_arguments(name: str, arguments: Mapping[str, Any], output: str) -> list[Edit]:
    """The changes a successful edit tool call made, from its arguments: search and replace
    pairs (Claude Code's Edit and MultiEdit, Gemini CLI's replace), the str_replace_editor
    commands (create, str_replace, insert) and whole-file writes. A write says only the
    file's new content unless its output says it created the file."""
    path = next((p for key in _PATH_KEYS if (p := text_field(arguments.get(key)))), None)
    if path is None:
        return []
    command = arguments.get("command")
    if command is not None:
        return _editor_command(path, command, arguments)
    if isinstance(arguments.get("edits"), list):
        pairs = [e for e in arguments["edits"] if isinstance(e, dict)]
        return [edit for pair in pairs for edit in _replacement(path, pair)]
    replaced = _replacement(path, arguments)
    if replaced or name not in _WRITE_TOOLS:
        return replaced
    content = arguments.get("content")
    if not isinstance(content, str):
        return []
    if "created" in output[:500].lower():
        return [Edit(path, "create", file_diff(path, None, content), content)]
    return [Edit(path, "modify", None, content)]


def _editor_command(path: str, command: Any, arguments: Mapping[str, Any]) -> list[Edit]:
    if command == "create":
        text = arguments.get("file_text")
        if isinstance(text, str):
            return [Edit(path, "create", file_diff(path, None, text), text)]
    elif command == "str_replace":
        return _replacement(path, arguments)
    elif command == "insert":
        text, after = arguments.get("new_str"), arguments.get("insert_line")
        if isinstance(text, str) and text and isinstance(after, int) and after >= 0:
            return [Edit(path, "modify", fragment_diff(path, "", text, first_line=after + 1))]
    return []


def _replacement(path: str, arguments: Mapping[str, Any]) -> list[Edit]:
    old = arguments.get("old_string", arguments.get("old_str"))
    new = arguments.get("new_string", arguments.get("new_str"))
    if not isinstance(old, str) or not isinstance(new, str) or old == new:
        return []
    return [Edit(path, "modify", fragment_diff(path, old, new))]


def file_change_fields(edit: Edit) -> dict[str, Any]:
    """A FileChange's own fields for an edit."""
    return change_fields(edit.path, edit.operation, edit.diff, edit.content)


def change_fields(
    path: str,
    operation: str,
    diff: Diff | None = None,
    content: str | None = None,
    old_path: str | None = None,
) -> dict[str, Any]:
    """A FileChange's own fields: the change of `path` (from `old_path` for a rename), its
    diff when known and the file's whole content after it when recorded."""
    fields: dict[str, Any] = {
        "path": path,
        "operation": operation,
        "old_path": old_path,
        "content": content,
    }
    if diff is not None:
        fields.update(
            diff=diff.text, anchored=diff.anchored, added=diff.added, removed=diff.removed
        )
    return fields
