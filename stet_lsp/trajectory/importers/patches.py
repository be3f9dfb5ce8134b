"""A patch (a git diff, or a plain unified one, of several files) as file changes: what
SWE-agent submits and what OpenHands' evaluation and resolver outputs record as a run's
`git_patch`."""

from __future__ import annotations

import codecs
import re
from typing import Literal

from stet_lsp.trajectory.events import FileChange, SourceRef
from stet_lsp.trajectory.importers import diffs
from stet_lsp.trajectory.importers.base import new_event
from stet_lsp.trajectory.importers.edits import change_fields

Operation = Literal["create", "modify", "delete", "rename"]


def patch_changes(
    patch: str, session: str, source: SourceRef, call_id: str | None
) -> list[FileChange]:
    """One anchored file change per file of a git (or plain unified) diff, each made by
    `call_id` when known."""
    changes: list[FileChange] = []
    for section in _split_patch(patch):
        parsed = _parse_section(section)
        if parsed is None:
            continue
        path, operation, old_path, diff_text = parsed
        diff = diffs.Diff(diff_text, *diffs.count(diff_text), anchored=True)
        fields = change_fields(path, operation, diff, old_path=old_path)
        changes.append(
            new_event(FileChange, session=session, source=source, call_id=call_id, **fields)
        )
    return changes


def whole_text(change: FileChange) -> str | None:
    """The file a patch's change created (its text after) or deleted (its text before), from
    the diff's lines; None for another change, or a diff without hunks (a binary file's, whose
    lines the patch does not hold, or an empty file's, which git writes the same)."""
    if change.operation not in ("create", "delete") or "\n@@ " not in change.diff:
        return None
    mark = "+" if change.operation == "create" else "-"
    lines: list[str] = []
    in_hunk = False
    for line in change.diff.splitlines(keepends=True):
        if line.startswith("@@"):
            in_hunk = True
        elif not in_hunk:
            continue
        elif line.startswith(mark):
            lines.append(line[1:])
        elif line.startswith("\\") and lines:
            lines[-1] = lines[-1].rstrip("\r\n")  # `\ No newline at end of file`
    return "".join(lines)


def _split_patch(patch: str) -> list[list[str]]:
    sections: list[list[str]] = []
    current: list[str] | None = None
    lines = patch.splitlines(keepends=True)
    for index, line in enumerate(lines):
        starts_git = line.startswith("diff --git ")
        starts_plain = (
            line.startswith("--- ")
            and index + 1 < len(lines)
            and lines[index + 1].startswith("+++ ")
            and (current is None or any(part.startswith("@@") for part in current))
        )
        if starts_git or starts_plain:
            current = [line]
            sections.append(current)
        elif current is not None:
            current.append(line)
    return sections


def _parse_section(lines: list[str]) -> tuple[str, Operation, str | None, str] | None:
    old_path: str | None = None
    new_path: str | None = None
    operation: Operation = "modify"
    if lines[0].startswith("diff --git "):
        old_path, new_path = _git_header_paths(lines[0][len("diff --git ") :].rstrip("\r\n"))
    body_start = len(lines)
    for index, line in enumerate(lines):
        text = line.rstrip("\r\n")
        if text.startswith("new file mode"):
            operation = "create"
        elif text.startswith("deleted file mode"):
            operation = "delete"
        elif text.startswith("rename from "):
            operation, old_path = "rename", text[len("rename from ") :]
        elif text.startswith("rename to "):
            new_path = text[len("rename to ") :]
        elif text.startswith("--- ") and index + 1 < len(lines):
            side = _diff_path(text[4:])
            if side is None:
                operation = "create"
            else:
                old_path = side
            after = _diff_path(lines[index + 1].rstrip("\r\n")[4:])
            if after is None:
                operation = "delete"
            else:
                new_path = after
            body_start = index
            break
    path = old_path if operation == "delete" else new_path or old_path
    if not path:
        return None
    diff_text = "".join(lines[body_start:])
    return path, operation, old_path if operation == "rename" else None, diff_text


def _git_header_paths(rest: str) -> tuple[str | None, str | None]:
    if rest.startswith('"'):  # quoted names: `"a/caf\303\251.txt" "b/caf\303\251.txt"`
        quoted = _QUOTED_PAIR.fullmatch(rest)
        if quoted is None:
            return None, None
        old, new = (_unquoted(name) for name in quoted.groups())
        if old.startswith("a/") and new.startswith("b/"):
            return old[2:], new[2:]
        return None, None
    if rest.startswith("a/") and " b/" in rest:
        old, _, new = rest[2:].rpartition(" b/")
        return old, new
    return None, None


def _diff_path(side: str) -> str | None:
    if side.startswith('"'):
        end = _QUOTED.match(side)
        side = _unquoted(end.group()) if end is not None else side
    else:
        side = side.split("\t", 1)[0].strip()
    if side == "/dev/null":
        return None
    if side.startswith(("a/", "b/")):
        return side[2:]
    return side


# Git quotes a name with special or non-ASCII characters C-style, UTF-8 bytes in octal.
_QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"')
_QUOTED_PAIR = re.compile(r'("(?:[^"\\]|\\.)*") ("(?:[^"\\]|\\.)*")')


def _unquoted(name: str) -> str:
    if not (len(name) >= 2 and name[0] == name[-1] == '"'):
        return name
    raw = codecs.escape_decode(name[1:-1].encode("ascii", "backslashreplace"))[0]
    return bytes(raw).decode("utf-8", "replace")
