"""What `stet mcp` offers, without the MCP SDK: each tool's name, description and JSON
Schema, the checking of its arguments against that same schema, and the call that does the
work: a function of stet_lsp.core.operations for the style sheet, `mark_step` for a
trajectory's feedback. A result is the document `stet … --json` prints; every failure is a
StetError whose message the server returns as a tool error.

The target is resolved at every call, as the command line does: the repository and branch of
the server's folder, or the explicit `--target`. Only that target's style sheet, its working
trajectory and the committed trajectories are reachable; a file named in an argument must be
a regular file inside the repository (relative, or absolute below the root; no `..`, no
symbolic link, nothing in `.git` or in Stet's private `.stet/cache`).
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from stet_lsp.core import operations
from stet_lsp.core.brief import DEFAULT_BUDGET
from stet_lsp.core.errors import StetError
from stet_lsp.core.model import KINDS, STATUSES
from stet_lsp.core.safefs import inside
from stet_lsp.core.sheet import ENTRY_TEXT_LIMIT, StyleSheet
from stet_lsp.core.targets import Target, resolve_target

if TYPE_CHECKING:
    from stet_lsp.trajectory.store import Folder

SERVER_NAME = "stet"
BRIEF_URI = "stet://brief"

MAX_TEXT = ENTRY_TEXT_LIMIT  # every text a tool takes is an entry's, or a verdict's
"""Characters of a note's text (a verdict's text has the same limit, in feedback.py)."""
MAX_PATH = 4096
MAX_LINE = 2**31 - 1
MAX_BUDGET = 100_000
MAX_STEP = 2**31 - 1
STEPS_LIMIT = 50
"""Steps list_steps gives at once unless asked for more (up to MAX_STEPS_LIMIT)."""
MAX_STEPS_LIMIT = 500
NOTES_LIMIT = 20
"""Entries list_notes gives at once unless asked for more (up to MAX_NOTES_LIMIT)."""
MAX_NOTES_LIMIT = 200
ANY_STATUS = "any"
MAX_FILE_BYTES = 16 * 1024 * 1024
"""An anchor reads its file whole: a larger file is refused, never read."""

AGENT = "agent"
AGENT_KINDS = tuple(kind for kind in KINDS if kind != "markup")
"""`markup` is a person's margin note; an agent writes the other kinds."""
_ID_PATTERN = "^[A-Za-z0-9_-]{1,64}$"
_TRAJECTORY_PATTERN = "^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$"
_PRIVATE = ((".stet", "cache"),)
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")

INSTRUCTIONS = (
    "Stet keeps a style sheet for this branch: working memory that agents and the people "
    "reviewing their work both write, local to this machine and never committed. At the start "
    "of work, read the brief (the get_brief tool, or the stet://brief resource). While you "
    "work, record what the next run on this branch should know with add_note: a convention "
    "the code follows, an approach you ruled out and why, a clarification you received. The "
    "entries are working context, not rules: the repository's instructions and its house "
    "style win where they conflict."
)

BRIEF_DESCRIPTION = (
    "This branch's style sheet as a brief (Markdown): conventions, approaches ruled out, "
    "clarifications and notes that agents and reviewers recorded in earlier runs, within "
    f"{DEFAULT_BUDGET} tokens. Read it at the start of work on this branch."
)


@dataclass(frozen=True)
class Place:
    """Where the server works: the folder it started in (or `-C`) and an explicit target."""

    directory: Path
    target_name: str | None = None
    gone: bool = False
    """The folder the server was started in was removed before it started (it cannot be
    named: the working folder cannot be read); each call says so."""

    def target(self) -> Target:
        if self.gone:
            raise StetError(
                "the folder this server was started in no longer exists; start it again in "
                "a repository's work tree (or give it -C DIR)"
            )
        return resolve_target(self.directory, self.target_name)

    def sheet(self) -> StyleSheet:
        return StyleSheet(self.target())


Handler = Callable[[Place, dict[str, Any]], dict[str, Any]]


@dataclass(frozen=True)
class Tool:
    name: str
    title: str
    description: str
    schema: dict[str, Any]
    run: Handler
    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False


# -- the schemas' parts --------------------------------------------------------------------


def _text(description: str) -> dict[str, Any]:
    return {"type": "string", "minLength": 1, "maxLength": MAX_TEXT, "description": description}


def _file(description: str) -> dict[str, Any]:
    return {"type": "string", "minLength": 1, "maxLength": MAX_PATH, "description": description}


_ID = {
    "type": "string",
    "pattern": _ID_PATTERN,
    "description": "The entry's id, as add_note or list_notes gave it (e.g. csta5p).",
}


_TRAJECTORY = {
    "type": "string",
    "pattern": _TRAJECTORY_PATTERN,
    "description": (
        "A committed trajectory's id (or an unambiguous prefix of it); leave it out for this "
        "branch's working trajectory."
    ),
}


def _object(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "additionalProperties": False,
    }
    if required:
        schema["required"] = list(required)
    return schema


# -- the tools -----------------------------------------------------------------------------


def _add_note(place: Place, arguments: dict[str, Any]) -> dict[str, Any]:
    sheet = place.sheet()
    file, line = arguments.get("file"), arguments.get("line")
    if (file is None) != (line is None):
        raise StetError("file and line go together: give both to anchor the note, or neither")
    relative = repository_file(sheet.target.root, file, must_exist=True) if file else None
    return operations.add_entry(
        sheet,
        arguments["text"],
        kind=arguments.get("kind", "note"),
        author=AGENT,
        file=relative,
        line=line,
    )


def _list_notes(place: Place, arguments: dict[str, Any]) -> dict[str, Any]:
    sheet = place.sheet()
    file = arguments.get("file")
    status = arguments["status"]
    offset = arguments["offset"]
    listed = operations.list_entries(
        sheet,
        kind=arguments.get("kind"),
        author=arguments.get("author"),
        status=None if status == ANY_STATUS else status,
        file=repository_file(sheet.target.root, file, must_exist=False) if file else None,
        offset=offset,
        limit=arguments["limit"],
    )
    if listed["more"]:
        after = offset + len(listed["entries"])
        listed["next"] = (
            f"{listed['more']} more: call list_notes with the same arguments and offset {after}"
        )
    return listed


def _show_note(place: Place, arguments: dict[str, Any]) -> dict[str, Any]:
    return operations.show_entry(place.sheet(), arguments["id"])


def _edit_note(place: Place, arguments: dict[str, Any]) -> dict[str, Any]:
    sheet = place.sheet()
    entry_id = arguments["id"]
    author = sheet.get(entry_id).author
    if author != AGENT:
        raise StetError(
            f"entry {entry_id} was written by a person (author {author}); an agent edits only "
            "its own entries (author agent): add a note of your own instead"
        )
    return operations.edit_entry(sheet, entry_id, arguments["text"])


def _get_brief(place: Place, arguments: dict[str, Any]) -> dict[str, Any]:
    return operations.brief(place.sheet(), arguments.get("budget", DEFAULT_BUDGET))


def _list_steps(place: Place, arguments: dict[str, Any]) -> dict[str, Any]:
    from stet_lsp.trajectory.operations import trajectory_steps

    folder = trajectory_folder(place.target(), arguments.get("trajectory"))
    from_step = arguments["from_step"]
    listed = trajectory_steps(folder, from_step=from_step, limit=arguments["limit"])
    if listed["more"]:
        after = listed["steps"][-1]["step"] + 1 if listed["steps"] else from_step
        listed["next"] = (
            f"{listed['more']} more: call list_steps with the same arguments and from_step {after}"
        )
    return listed


def _mark_step(place: Place, arguments: dict[str, Any]) -> dict[str, Any]:
    from stet_lsp.trajectory.feedback import mark_step, to_sheet
    from stet_lsp.trajectory.operations import marked

    target = place.target()
    folder = trajectory_folder(target, arguments.get("trajectory"))
    note_to_sheet = arguments.get("note_to_sheet", False)
    if note_to_sheet:  # refused before the verdict is written: all or nothing
        StyleSheet(target).refuse_tracked()
        paused, _ = StyleSheet(target).pause_state()
        if paused:
            raise StetError(
                f"the style sheet of {target.label} is paused: leave out note_to_sheet to "
                "record the verdict alone (nothing was written)"
            )
    verdict = mark_step(
        target.root,
        folder,
        arguments["step"],
        arguments["verdict"],
        arguments.get("text"),
        author=AGENT,
    )
    entry = to_sheet(StyleSheet(target), verdict) if note_to_sheet else None
    return marked(verdict, entry)


TOOLS: tuple[Tool, ...] = (
    Tool(
        name="add_note",
        title="Add a note to the style sheet",
        description=(
            "Record what you learned on this branch in Stet's style sheet, the working memory "
            "shared with the people reviewing your work and with the next agent run on this "
            "branch. Use it when you find a convention the code follows (kind convention), "
            "when you rule out an approach, saying why (ruled-out), when someone clarifies "
            "what is wanted (clarification), or for anything else the next run should know "
            "(note). One fact a note, in a sentence or two; give file and line when it is "
            "about a place in the code. Check list_notes first to avoid repeating an entry. "
            "The note is yours (author agent), local to this machine and never committed. "
            "Refused while a person has paused the style sheet."
        ),
        schema=_object(
            {
                "text": _text("The note: one fact, in a sentence or two."),
                "kind": {
                    "type": "string",
                    "enum": list(AGENT_KINDS),
                    "default": "note",
                    "description": (
                        "convention: how this code base does something; ruled-out: an approach "
                        "that does not work here, and why; clarification: what someone told "
                        "you is wanted; note: anything else. (markup is a person's margin note.)"
                    ),
                },
                "file": _file(
                    "Anchor the note to this file: a path relative to the repository's root "
                    "(or absolute, inside it). Give line too."
                ),
                "line": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_LINE,
                    "description": "The 1-based line of file the note is about.",
                },
            },
            ("text",),
        ),
        run=_add_note,
    ),
    Tool(
        name="list_notes",
        title="List the style sheet's entries",
        description=(
            "List the open entries of this branch's style sheet (status any: all of them), "
            "those matching every filter given, a page at a time. Use it before adding a note "
            "(is it recorded already?) and to find the id of an entry to show or edit. "
            "Returns the entries with their ids, kinds, authors, statuses, texts and anchors "
            "(with the line where the anchored code is now), and total, the number matching; "
            "when more is above 0, next says how to get the rest."
        ),
        schema=_object(
            {
                "kind": {"type": "string", "enum": list(KINDS), "description": "Only this kind."},
                "author": {
                    "type": "string",
                    "enum": ["agent", "human"],
                    "description": "Only entries by agents, or only by people.",
                },
                "status": {
                    "type": "string",
                    "enum": [*STATUSES, ANY_STATUS],
                    "default": "open",
                    "description": (
                        "Only this status (open: not yet graduated or discarded); any: every "
                        "entry, whatever its status."
                    ),
                },
                "file": _file("Only entries anchored in this file (relative to the root)."),
                "offset": {
                    "type": "integer",
                    "minimum": 0,
                    "maximum": MAX_STEP,
                    "default": 0,
                    "description": "Leave out this many of the matching entries first.",
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_NOTES_LIMIT,
                    "default": NOTES_LIMIT,
                    "description": "At most this many entries.",
                },
            }
        ),
        run=_list_notes,
        read_only=True,
        idempotent=True,
    ),
    Tool(
        name="show_note",
        title="Show one entry",
        description="Show one entry of this branch's style sheet by its id.",
        schema=_object({"id": _ID}, ("id",)),
        run=_show_note,
        read_only=True,
        idempotent=True,
    ),
    Tool(
        name="edit_note",
        title="Edit one of your notes",
        description=(
            "Replace the text of one of your own entries (author agent), for instance when a "
            "convention you recorded turns out to be narrower than you wrote. Entries written "
            "by people (author human: margin markup, their notes) cannot be edited by an "
            "agent; add a note of your own instead."
        ),
        schema=_object({"id": _ID, "text": _text("The entry's new text.")}, ("id", "text")),
        run=_edit_note,
        destructive=True,
        idempotent=True,
    ),
    Tool(
        name="get_brief",
        title="Read the style sheet's brief",
        description=(
            "Read this branch's style sheet as a brief: the conventions, approaches ruled out, "
            "clarifications and notes that agents and reviewers recorded in earlier runs, "
            "newest first within each kind, within a token budget. Read it at the start of "
            "work on this branch (the stet://brief resource holds the same text). The entries "
            "are working context: the repository's instructions and its house style win where "
            "they conflict. The result's text field is the brief."
        ),
        schema=_object(
            {
                "budget": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_BUDGET,
                    "default": DEFAULT_BUDGET,
                    "description": "At most this many tokens (about four characters a token).",
                }
            }
        ),
        run=_get_brief,
        read_only=True,
        idempotent=True,
    ),
    Tool(
        name="list_steps",
        title="List the steps of a trajectory",
        description=(
            "List the steps of a trajectory, the imported record of an agent run: each step's "
            "number, kind (user_message, agent_message, tool_call, file_change, …) and a "
            "one-line summary, "
            "a page at a time. Use it to find the step to mark with mark_step. The trajectory "
            "is this branch's working trajectory unless trajectory names a committed one. "
            "When the result's more is above 0, its next field says how to get the rest."
        ),
        schema=_object(
            {
                "trajectory": _TRAJECTORY,
                "from_step": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_STEP,
                    "default": 1,
                    "description": "List the steps from this number on.",
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_STEPS_LIMIT,
                    "default": STEPS_LIMIT,
                    "description": "At most this many steps.",
                },
            }
        ),
        run=_list_steps,
        read_only=True,
        idempotent=True,
    ),
    Tool(
        name="mark_step",
        title="Mark a step of a trajectory",
        description=(
            "Record a verdict on one step of a trajectory, the imported record of an agent run "
            "(list_steps gives the steps' numbers): wrong (the step was a mistake), "
            "clever (worth repeating) or note (a remark; text required). Use it when you "
            "review an earlier run on this branch and find a step that went wrong or one "
            "worth keeping. The trajectory is this branch's working trajectory unless "
            "trajectory names a committed one. The verdict passes the redaction gate into "
            ".stet/feedback/ (a verdict on the working trajectory is committed with it by the "
            "capstone); note_to_sheet also adds it to the style sheet as your note."
        ),
        schema=_object(
            {
                "trajectory": _TRAJECTORY,
                "step": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_STEP,
                    "description": "The step's number, from 1.",
                },
                "verdict": {
                    "type": "string",
                    "enum": ["wrong", "clever", "note"],
                    "description": (
                        "wrong: the step was a mistake (say why in text); clever: the step is "
                        "worth repeating; note: a remark on the step, in text (required)."
                    ),
                },
                "text": _text("What is wrong, clever or to note (required for note)."),
                "note_to_sheet": {
                    "type": "boolean",
                    "default": False,
                    "description": "Also add the verdict to this branch's style sheet.",
                },
            },
            ("step", "verdict"),
        ),
        run=_mark_step,
    ),
)

TOOLS_BY_NAME = {tool.name: tool for tool in TOOLS}


def call(place: Place, name: object, arguments: object) -> dict[str, Any]:
    """Run the tool `name` with `arguments` (checked against its schema first)."""
    tool = TOOLS_BY_NAME.get(name) if isinstance(name, str) else None
    if tool is None:
        known = ", ".join(TOOLS_BY_NAME)
        raise StetError(f"no tool {_shown(name)} (the tools are: {known})")
    return tool.run(place, check_arguments(tool.schema, arguments))


def read_brief(place: Place) -> str:
    """The text of the brief resource."""
    text: str = operations.brief(place.sheet())["text"]
    return text


# -- checking arguments against a tool's schema --------------------------------------------


def check_arguments(schema: Mapping[str, Any], arguments: object) -> dict[str, Any]:
    """The arguments after checking each against the schema (the subset of JSON Schema the
    tools use: string, integer and boolean properties with their bounds), defaults filled
    in. A null for an optional argument counts as leaving it out."""
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise StetError(f"the arguments must be a JSON object, not {_shown(arguments)}")
    properties: Mapping[str, Any] = schema["properties"]
    required = schema.get("required", ())
    unknown = [name for name in arguments if name not in properties]
    if unknown:
        names = ", ".join(_shown(name) for name in unknown)
        takes = ", ".join(properties) or "no arguments"
        raise StetError(f"unknown argument {names} (this tool takes: {takes})")
    checked: dict[str, Any] = {}
    for name, rule in properties.items():
        value = arguments.get(name)
        if value is None:
            if name in required:
                raise StetError(f"{name} is required")
            if "default" in rule:
                checked[name] = rule["default"]
            continue
        checked[name] = _check_value(name, rule, value)
    return checked


def _check_value(name: str, rule: Mapping[str, Any], value: object) -> Any:
    kind = rule["type"]
    if kind == "string":
        return _check_string(name, rule, value)
    if kind == "integer":
        return _check_integer(name, rule, value)
    if kind == "boolean":
        if not isinstance(value, bool):
            raise StetError(f"{name} must be true or false, not {_shown(value)}")
        return value
    raise StetError(f"{name}: unsupported schema type {kind!r}")  # a mistake in TOOLS


def _check_string(name: str, rule: Mapping[str, Any], value: object) -> str:
    if not isinstance(value, str):
        raise StetError(f"{name} must be a string, not {_shown(value)}")
    if "enum" in rule and value not in rule["enum"]:
        expected = ", ".join(rule["enum"])
        if name == "kind" and value == "markup":
            raise StetError(
                f"kind markup is a person's margin note; an agent writes one of: {expected}"
            )
        raise StetError(f"unknown {name} {_shown(value)} (expected one of: {expected})")
    if len(value) > rule.get("maxLength", math.inf):
        raise StetError(f"{name} has {len(value)} characters; it takes {rule['maxLength']} at most")
    if not value.strip() and rule.get("minLength", 0) > 0:
        raise StetError(f"{name} cannot be empty")
    if _LONE_SURROGATE.search(value):
        raise StetError(f"{name} holds a lone surrogate (an unpaired \\ud800-\\udfff escape)")
    if "\0" in value:
        raise StetError(f"{name} holds a NUL character")
    if "pattern" in rule and not re.fullmatch(rule["pattern"], value):
        raise StetError(f"{name} {_shown(value)} does not match {rule['pattern']}")
    return value


def _check_integer(name: str, rule: Mapping[str, Any], value: object) -> int:
    if isinstance(value, float) and value.is_integer():
        value = int(value)  # JSON has one number type: 3.0 is the integer 3
    if isinstance(value, bool) or not isinstance(value, int):
        raise StetError(f"{name} must be a whole number, not {_shown(value)}")
    low, high = rule.get("minimum", -math.inf), rule.get("maximum", math.inf)
    if not low <= value <= high:
        raise StetError(f"{name} must be from {low} to {high}, not {value}")
    return value


def _shown(value: object) -> str:
    """A value as an error message quotes it: JSON, at most 80 characters."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 80 else text[:77] + "…"


# -- what the arguments may reach ------------------------------------------------------------


def repository_file(root: Path, value: str, *, must_exist: bool) -> str:
    """`value` as a repository-relative POSIX path, after checking that it stays inside the
    repository: relative (or absolute below `root`), no `..`, no symbolic link on the way,
    nothing in `.git` or `.stet/cache`; with `must_exist`, a regular file of at most
    MAX_FILE_BYTES."""
    path = Path(value)
    if ".." in path.parts:
        raise StetError(f"file {_shown(value)} goes up with '..': name a file in the repository")
    if path.is_absolute():
        relative = _below(root, path)
        if relative is None:
            raise StetError(f"file {_shown(value)} is outside the repository ({root})")
    else:
        relative = path
    parts = relative.parts
    if not parts:
        raise StetError(f"file {_shown(value)} names the repository itself, not a file")
    folded = tuple(part.casefold() for part in parts)
    if ".git" in folded:
        raise StetError(f"file {_shown(value)} is inside .git, which Stet does not read")
    if any(folded[: len(private)] == private for private in _PRIVATE):
        raise StetError(
            f"file {_shown(value)} is in .stet/cache, Stet's private working files "
            "(style sheets and working trajectories): it cannot be read through stet"
        )
    full = inside(root, relative)  # refuses a symbolic link anywhere on the way
    if must_exist:
        try:
            status = os.lstat(full)
        except FileNotFoundError:
            raise StetError(f"no such file in the repository: {relative.as_posix()}") from None
        except OSError as error:
            raise StetError(f"cannot use {relative.as_posix()}: {error.strerror}") from None
        if not stat.S_ISREG(status.st_mode):
            raise StetError(f"{relative.as_posix()} is not a regular file")
        if status.st_size > MAX_FILE_BYTES:
            raise StetError(
                f"{relative.as_posix()} has {status.st_size} bytes; notes anchor in files of "
                f"at most {MAX_FILE_BYTES} bytes"
            )
    return relative.as_posix()


def _below(root: Path, path: Path) -> Path | None:
    """`path` relative to `root`, also when it reaches the root through a link (a temporary
    folder under /tmp that is /private/tmp, say); None when it is outside."""
    try:
        return path.relative_to(root)
    except ValueError:
        pass
    try:
        return path.resolve().relative_to(root)
    except (ValueError, OSError, RuntimeError):
        return None


def trajectory_folder(target: Target, trajectory_id: str | None) -> Folder:
    """The target's working trajectory, or the committed trajectory `trajectory_id` names
    (exactly, or by an unambiguous prefix). Another target's working trajectory is never
    reachable, nor named in a message."""
    from stet_lsp.trajectory import operations
    from stet_lsp.trajectory.store import folders, pick_folder, working_folder

    if trajectory_id is None:
        return operations.trajectory_folder(target, None)
    working = working_folder(target)
    reachable = [
        folder
        for folder in folders(target.root)
        if not folder.working or folder.relative == working.relative
    ]
    return pick_folder(reachable, trajectory_id)
