"""The file changes a Claude Code tool call made, from its result (`toolUseResult`): a Write's
file, an Edit's or MultiEdit's structured patch or its edits applied to the file before it, a
notebook cell."""

from __future__ import annotations

from typing import Any

from stet_lsp.trajectory.importers.diffs import Diff, file_diff, fragment_diff, hunks_diff
from stet_lsp.trajectory.importers.edits import change_fields

_EDIT_TOOLS = frozenset({"Edit", "MultiEdit"})


def backgrounded(tool_input: dict[str, Any], output: str) -> bool:
    """A Bash call still running when its result was written: asked to run in the
    background, or sent there (by the person, or for running long)."""
    return tool_input.get("run_in_background") is True or output.startswith(
        "Command running in background"
    )


def file_changes(
    name: str, tool_input: dict[str, Any], structured: Any, output: str
) -> list[dict[str, Any]]:
    """The FileChange fields of a successful Edit, MultiEdit, Write or NotebookEdit call:
    from the tool's structured result when there is one, else from the call's input."""
    if name not in _EDIT_TOOLS and name not in ("Write", "NotebookEdit"):
        return []
    result = structured if isinstance(structured, dict) else {}
    path = (
        _text(result.get("filePath"))
        or _text(result.get("notebook_path"))
        or _text(tool_input.get("file_path"))
        or _text(tool_input.get("notebook_path"))
    )
    if not path:
        return []
    if name == "NotebookEdit":
        return _notebook_change(path, result)
    if name == "Write":
        return [_write_change(path, tool_input, result, output)]
    return _edit_changes(path, name, tool_input, result, output)


def tool_of_result(structured: Any) -> str:
    """The file tool a structured result came from, for a result whose call is not in the
    file."""
    if not isinstance(structured, dict) or "filePath" not in structured:
        return ""
    if structured.get("type") in ("create", "update"):
        return "Write"
    if "edits" in structured:
        return "MultiEdit"
    return "Edit" if "structuredPatch" in structured else ""


def _write_change(
    path: str, tool_input: dict[str, Any], result: dict[str, Any], output: str
) -> dict[str, Any]:
    content = _text(result.get("content"))
    if content is None:
        content = _text(tool_input.get("content")) or ""
    original = _text(result.get("originalFile"))
    if result.get("type") == "create" or (not result and output.startswith("File created")):
        return change_fields(path, "create", file_diff(path, None, content), content)
    if original is not None:
        return change_fields(path, "modify", file_diff(path, original, content), content)
    hunks = _hunks_diff(path, result.get("structuredPatch"))
    if hunks is not None:
        return change_fields(path, "modify", hunks, content)
    return change_fields(path, "modify", content=content)


def _edit_changes(
    path: str, name: str, tool_input: dict[str, Any], result: dict[str, Any], output: str
) -> list[dict[str, Any]]:
    edits = _edits(name, tool_input, result)
    original = _text(result.get("originalFile"))
    if original is None:
        original = _text(result.get("originalFileContents"))
    if original is not None:
        after = _apply_edits(original, edits)
        if after is not None:
            return [change_fields(path, "modify", file_diff(path, original, after), after)]
    hunks = _hunks_diff(path, result.get("structuredPatch"))
    if hunks is not None:
        return [change_fields(path, "modify", hunks)]
    if len(edits) == 1 and edits[0][0] == "" and output.startswith("File created"):
        return [change_fields(path, "create", file_diff(path, None, edits[0][1]), edits[0][1])]
    return [change_fields(path, "modify", fragment_diff(path, old, new)) for old, new, _ in edits]


def _notebook_change(path: str, result: dict[str, Any]) -> list[dict[str, Any]]:
    before, after = _text(result.get("original_file")), _text(result.get("updated_file"))
    if before is None or after is None:
        return []
    return [change_fields(path, "modify", file_diff(path, before, after), after)]


def _edits(
    name: str, tool_input: dict[str, Any], result: dict[str, Any]
) -> list[tuple[str, str, bool]]:
    """(old text, new text, replace all) of each replacement the call made."""
    if name == "Edit":
        old = _text(result.get("oldString"))
        new = _text(result.get("newString"))
        if old is None or new is None:
            old, new = _text(tool_input.get("old_string")), _text(tool_input.get("new_string"))
        replace_all = result.get("replaceAll", tool_input.get("replace_all"))
        return [(old, new, replace_all is True)] if old is not None and new is not None else []
    listed = result.get("edits")
    if not isinstance(listed, list):
        listed = tool_input.get("edits")
    edits = []
    for edit in listed if isinstance(listed, list) else []:
        if isinstance(edit, dict):
            old, new = _text(edit.get("old_string")), _text(edit.get("new_string"))
            if old is not None and new is not None:
                edits.append((old, new, edit.get("replace_all") is True))
    return edits


def _apply_edits(original: str, edits: list[tuple[str, str, bool]]) -> str | None:
    """The file after the replacements, as the Edit tool makes them, or None when one of them
    does not apply as written. A replacement with nothing that deletes text ending where a
    line does takes the line's break too (the tool leaves no empty line behind)."""
    if not edits:
        return None
    text = original
    for old, new, replace_all in edits:
        if old == "":
            if text:
                return None
            text = new
        elif old not in text:
            return None
        else:
            if new == "" and not old.endswith("\n") and old + "\n" in text:
                old += "\n"
            text = text.replace(old, new) if replace_all else text.replace(old, new, 1)
    return text


def _hunks_diff(path: str, hunks: Any) -> Diff | None:
    """A unified diff from the tool's structuredPatch hunks (real line numbers: anchored)."""
    if not isinstance(hunks, list) or not hunks:
        return None
    parts = []
    for hunk in hunks:
        if not isinstance(hunk, dict) or not isinstance(hunk.get("lines"), list):
            return None
        spans = [hunk.get(k) for k in ("oldStart", "oldLines", "newStart", "newLines")]
        if not all(isinstance(n, int) for n in spans):
            return None
        parts.append(f"@@ -{spans[0]},{spans[1]} +{spans[2]},{spans[3]} @@\n")
        parts.extend(f"{line}\n" for line in hunk["lines"] if isinstance(line, str))
    return hunks_diff(path, "".join(parts))


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None
