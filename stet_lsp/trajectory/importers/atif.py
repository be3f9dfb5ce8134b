"""ATIF: the Agent Trajectory Interchange Format (Harbor's `trajectory.json`, v1.0 to v1.8).

One JSON document. The root carries `schema_version` ("ATIF-v1.x"), `session_id`, `agent`
(`name`, `version`, `model_name`, `tool_definitions`, `extra`), `steps`, `final_metrics`,
`notes`, `extra`, and since v1.7 `trajectory_id` and `subagent_trajectories` (whole
trajectories embedded in the file). Each step has `step_id`, `timestamp` and `source`:

* `user`: a user message (`message`).
* `agent`: one model turn: `message`, `reasoning_content`, `model_name`, `tool_calls`
  (`tool_call_id`, `function_name`, `arguments`), `observation.results` (`source_call_id`,
  `content`, `subagent_trajectory_ref`), `metrics` (`prompt_tokens` including cached ones,
  `completion_tokens`, `cached_tokens`, `cost_usd`, `extra`) and since v1.7 `llm_call_count`
  (0: a step no model request made; more than 1: metrics summed over that many requests).
* `system`: the system prompt, or a harness event; `extra.context_management` marks a
  compaction (its summary is in the step or in the subagent trajectory it refers to).

Since v1.5 `is_copied_context` marks steps copied from an earlier trajectory for context (a
continuation after summarisation): they are not imported again and are counted in
`dropped.copied_context`. Since v1.6 `message` and result `content` may be a list of content
parts (`text`, `image`, and since v1.8 `audio`, whose `source.path` names the media file).

Subagents: a result's `subagent_trajectory_ref` names a trajectory embedded in
`subagent_trajectories` (by `trajectory_id`) or stored in another file (`trajectory_path`,
relative to this one); its steps follow the call's result as the subagent's events. A
trajectory continued in another file (`continued_trajectory_ref`) is read on as the same
session.

This module also holds what the JSON-document importers share: reading a document with the
line each of its records starts on, sniffing a document from its first bytes, and file
changes recorded only as edit tools' arguments.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from json.decoder import scanstring  # type: ignore[attr-defined]
from pathlib import Path
from typing import Any, Literal, TypeVar

from stet_lsp.core.errors import StetError
from stet_lsp.trajectory.events import (
    AgentMessage,
    Compaction,
    EventBase,
    FileChange,
    RawEvent,
    Reasoning,
    SessionEnd,
    SessionStart,
    SourceRef,
    Subagent,
    ToolCall,
    ToolResult,
    Usage,
    UserMessage,
)
from stet_lsp.trajectory.importers.base import ParsedSession, Problem
from stet_lsp.trajectory.importers.diffs import Diff, file_diff, fragment_diff
from stet_lsp.trajectory.importers.files import open_text

FORMAT = "atif"

E = TypeVar("E", bound=EventBase)

# ---------------------------------------------------------------------------------------------
# JSON documents with line numbers
# ---------------------------------------------------------------------------------------------

# Which parts of a document to locate: a dict names the members of an object to descend into,
# a one-element list applies its element to every item of an array, None decodes the value
# whole. Every value reached through a spec has its offset recorded under its JSON pointer.
Spec = dict[str, Any] | list[Any] | None

_DECODER = json.JSONDecoder()
_WHITESPACE = re.compile(r"[ \t\n\r]*")


class _Stop(Exception):
    def __init__(self, position: int, message: str) -> None:
        super().__init__(message)
        self.position = position
        self.message = message


class JsonDocument:
    """A file that is one JSON document, decoded with the offset of each located value, so
    that a record inside it can name the line it starts on. A document cut short decodes as
    far as it goes (`error` then says where it stopped)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.offsets: dict[str, int] = {}
        self.error: tuple[int, str] | None = None
        self._lines: dict[int, int] | None = None

    @classmethod
    def read(cls, path: Path) -> JsonDocument:
        with open_text(path) as stream:
            return cls(stream.read())

    def load(self, spec: Spec) -> Any:
        """The document's value (None when not even its start is JSON)."""
        holder: list[Any] = []
        try:
            end = self._value(self._skip(0), spec, "", holder.append)
            end = self._skip(end)
            if end < len(self.text):
                raise _Stop(end, "more data after the JSON document")
        except _Stop as stop:
            self.error = (stop.position, stop.message)
        return holder[0] if holder else None

    def line(self, pointer: str) -> int:
        """The 1-based line the value at `pointer` starts on (1 when it was not located)."""
        offset = self.offsets.get(pointer)
        return 1 if offset is None else self.line_at(offset)

    def line_at(self, offset: int) -> int:
        if self._lines is None:
            # One pass over the located offsets in order: linear in the document's size.
            self._lines = {}
            line, last = 1, 0
            for position in sorted({*self.offsets.values()}):
                line += self.text.count("\n", last, position)
                last = position
                self._lines[position] = line
        found = self._lines.get(offset)
        return found if found is not None else 1 + self.text.count("\n", 0, offset)

    def problem(self, source: str) -> Problem | None:
        if self.error is None:
            return None
        position, message = self.error
        return Problem(source, self.line_at(position), f"not JSON: {message}")

    def _skip(self, position: int) -> int:
        match = _WHITESPACE.match(self.text, position)
        return match.end() if match else position

    def _decode(self, position: int) -> tuple[Any, int]:
        try:
            return _DECODER.raw_decode(self.text, position)
        except json.JSONDecodeError as error:
            raise _Stop(error.pos, error.msg) from None

    def _value(self, position: int, spec: Spec, pointer: str, put: Callable[[Any], Any]) -> int:
        self.offsets[pointer] = position
        opening = self.text[position : position + 1]
        if isinstance(spec, dict) and opening == "{":
            return self._object(position, spec, pointer, put)
        if isinstance(spec, list) and opening == "[":
            return self._array(position, spec[0], pointer, put)
        value, end = self._decode(position)
        put(value)
        return end

    def _object(
        self, position: int, spec: dict[str, Any], pointer: str, put: Callable[[Any], Any]
    ) -> int:
        text = self.text
        members: dict[str, Any] = {}
        put(members)
        position = self._skip(position + 1)
        if text.startswith("}", position):
            return position + 1
        while True:
            if not text.startswith('"', position):
                raise _Stop(position, "expected a member name")
            try:
                key, position = scanstring(text, position + 1)
            except ValueError as error:
                raise _Stop(position, str(error)) from None
            position = self._skip(position)
            if not text.startswith(":", position):
                raise _Stop(position, "expected ':'")
            position = self._skip(position + 1)
            if key in spec:
                put_member = partial(members.__setitem__, key)
                position = self._value(position, spec[key], f"{pointer}/{escape(key)}", put_member)
            else:
                members[key], position = self._decode(position)
            position = self._skip(position)
            if text.startswith(",", position):
                position = self._skip(position + 1)
            elif text.startswith("}", position):
                return position + 1
            else:
                raise _Stop(position, "expected ',' or '}'")

    def _array(self, position: int, spec: Spec, pointer: str, put: Callable[[Any], Any]) -> int:
        text = self.text
        items: list[Any] = []
        put(items)
        position = self._skip(position + 1)
        if text.startswith("]", position):
            return position + 1
        while True:
            position = self._value(position, spec, f"{pointer}/{len(items)}", items.append)
            position = self._skip(position)
            if text.startswith(",", position):
                position = self._skip(position + 1)
            elif text.startswith("]", position):
                return position + 1
            else:
                raise _Stop(position, "expected ',' or ']'")


def escape(key: str) -> str:
    """A member name as a JSON Pointer token."""
    return key.replace("~", "~0").replace("/", "~1")


def leading_members(head: str, path: Sequence[str | int] = ()) -> dict[str, Any]:
    """The members of the object at `path` (member names and 0 for an array's first item)
    that are whole within `head`, the start of a file; a member cut off by the end of `head`
    maps to None. Empty when `head` does not start that way. For sniffing: cheap, and never
    fooled by JSON quoted inside a string."""
    found: dict[str, Any] = {}
    document = JsonDocument(head)
    try:
        position = document._skip(0)
        for step in path:
            position = _enter(document, position, step)
        if not head.startswith("{", position):
            return found
        position = document._skip(position + 1)
        while head.startswith('"', position):
            key, position = scanstring(head, position + 1)
            position = document._skip(position)
            if not head.startswith(":", position):
                break
            found[key] = None
            found[key], position = document._decode(document._skip(position + 1))
            position = document._skip(position)
            if not head.startswith(",", position):
                break
            position = document._skip(position + 1)
    except (_Stop, ValueError):
        pass
    return found


def _enter(document: JsonDocument, position: int, step: str | int) -> int:
    head = document.text
    if isinstance(step, int):
        if not head.startswith("[", position):
            raise _Stop(position, "not an array")
        return document._skip(position + 1)
    if not head.startswith("{", position):
        raise _Stop(position, "not an object")
    position = document._skip(position + 1)
    while head.startswith('"', position):
        key, position = scanstring(head, position + 1)
        position = document._skip(position)
        if not head.startswith(":", position):
            break
        position = document._skip(position + 1)
        if key == step:
            return position
        _, position = document._decode(position)
        position = document._skip(position)
        if not head.startswith(",", position):
            break
        position = document._skip(position + 1)
    raise _Stop(position, f"no member {step!r}")


def file_digest(path: Path) -> str:
    """The first 16 hex digits of the SHA-256 of a file's bytes: the session id of a
    transcript that names none."""
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for block in iter(partial(stream.read, 1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:16]


# ---------------------------------------------------------------------------------------------
# Small readers of loosely typed records
# ---------------------------------------------------------------------------------------------


def text_field(value: Any) -> str | None:
    """A non-empty string, else None."""
    return value if isinstance(value, str) and value else None


def count_field(value: Any) -> int:
    """A token count as a non-negative int (0 when missing or not a number)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    return max(int(value), 0)


def cost_field(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def mapping(value: Any) -> dict[str, Any]:
    """A JSON object, or an empty one in place of anything else."""
    return value if isinstance(value, dict) else {}


def sequence(value: Any) -> list[Any]:
    """A JSON array, or an empty one in place of anything else."""
    return value if isinstance(value, list) else []


def as_text(value: Any) -> str:
    """A tool's output or argument as text: strings as they are, other JSON compactly."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return json.dumps(value, ensure_ascii=False)


# ---------------------------------------------------------------------------------------------
# File changes known only from an edit tool's arguments
# ---------------------------------------------------------------------------------------------


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
    fields: dict[str, Any] = {"path": edit.path, "operation": edit.operation}
    if edit.diff is not None:
        fields.update(
            diff=edit.diff.text,
            anchored=edit.diff.anchored,
            added=edit.diff.added,
            removed=edit.diff.removed,
        )
    if edit.content is not None:
        fields["content"] = edit.content
    return fields


# ---------------------------------------------------------------------------------------------
# The importer
# ---------------------------------------------------------------------------------------------

# A trajectory, its embedded subagent trajectories (recursively) and their steps are located.
_TRAJECTORY: dict[str, Any] = {"steps": [None]}
_TRAJECTORY["subagent_trajectories"] = [_TRAJECTORY]

_SCHEMA = re.compile(r'"schema_version"\s*:\s*"ATIF-v')
_ERROR_MARK = "[error] tool reported failure"


class AtifImporter:
    name = FORMAT
    label = "ATIF trajectory JSON (v1.0-v1.8)"

    def sniff(self, head: str) -> bool:
        """A JSON object whose `schema_version` starts "ATIF-v" (usually its first member)."""
        if not head.lstrip().startswith("{"):
            return False
        version = leading_members(head).get("schema_version")
        if isinstance(version, str):
            return version.startswith("ATIF-v")
        return _SCHEMA.search(head) is not None

    def parse(self, path: Path) -> ParsedSession:
        return _Reader(path).read()


IMPORTERS = {FORMAT: AtifImporter()}


@dataclass
class _File:
    """One ATIF file being read: the session's own or one it refers to."""

    name: str
    path: Path
    document: JsonDocument
    root: dict[str, Any]


@dataclass
class _Trajectory:
    """A trajectory inside a file, where it is (its JSON pointer) and who ran it."""

    file: _File
    value: dict[str, Any]
    pointer: str
    agent: str | None
    embedded: dict[str, tuple[dict[str, Any], str]] = field(default_factory=dict)


@dataclass
class _Call:
    name: str
    arguments: dict[str, Any]
    answered: bool = False


class _Reader:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.folder = path.parent
        self.parsed = ParsedSession(format=FORMAT, session_id="")
        self.calls: dict[str, _Call] = {}
        self.visited: set[Path] = set()
        self.placed: set[tuple[str, str]] = set()  # (file, pointer) of subagent trajectories
        self.last: SourceRef | None = None
        self.last_time: str | None = None

    def read(self) -> ParsedSession:
        main = self._open(self.path, self.path.name)
        if main is None:
            raise StetError(f"{self.path}: not an ATIF trajectory (no JSON object)")
        root = main.root
        self.parsed.session_id = (
            text_field(root.get("session_id"))
            or text_field(root.get("trajectory_id"))
            or file_digest(self.path)
        )
        self._start(main)
        current: _File | None = main
        while current is not None:
            trajectory = _Trajectory(current, current.root, "", None)
            self._trajectory(trajectory, leftovers=True)
            current = self._continuation(current)
        self._emit(SessionEnd, self.last or SourceRef(file=main.name, line=1), self.last_time, None)
        return self.parsed

    # -- files ----------------------------------------------------------------------------

    def _open(self, path: Path, name: str) -> _File | None:
        resolved = path.resolve()
        if resolved in self.visited:
            return None
        self.visited.add(resolved)
        document = JsonDocument.read(path)
        root = document.load(_TRAJECTORY)
        problem = document.problem(name)
        if problem is not None:
            self.parsed.problems.append(problem)
        if not isinstance(root, dict):
            return None
        self.parsed.sources[name] = path
        return _File(name, path, document, root)

    def _related(self, reference: Any) -> tuple[Path, str] | None:
        """A file another trajectory refers to: a path relative to this one's folder (or
        one whose name is in it), never outside that folder."""
        relative = text_field(reference)
        if relative is None or "://" in relative:
            return None
        folder = self.folder.resolve()
        for candidate in (self.folder / relative, self.folder / Path(relative).name):
            resolved = candidate.resolve()
            if resolved.is_file() and resolved.is_relative_to(folder):
                return candidate, resolved.relative_to(folder).as_posix()
        return None

    def _continuation(self, current: _File) -> _File | None:
        found = self._related(current.root.get("continued_trajectory_ref"))
        return None if found is None else self._open(*found)

    # -- session start ----------------------------------------------------------------------

    def _start(self, main: _File) -> None:
        root = main.root
        agent = mapping(root.get("agent"))
        extras = [e for e in (agent.get("extra"), root.get("extra")) if isinstance(e, dict)]
        steps = sequence(root.get("steps"))
        first_time = next(
            (t for s in steps if isinstance(s, dict) and (t := text_field(s.get("timestamp")))),
            None,
        )
        model = text_field(agent.get("model_name")) or next(
            (m for s in steps if isinstance(s, dict) and (m := text_field(s.get("model_name")))),
            None,
        )
        self._emit(
            SessionStart,
            SourceRef(file=main.name, line=1, pointer=""),
            first_time,
            None,
            harness=text_field(agent.get("name")) or FORMAT,
            harness_version=text_field(agent.get("version")),
            model=model,
            cwd=_single(extras, ("cwd", "working_dir", "cwds")),
            branch=_single(extras, ("git_branch", "branch", "gitBranch", "git_branches")),
            commit=_single(extras, ("git_commit", "commit", "commit_hash")),
        )

    # -- trajectories -----------------------------------------------------------------------

    def _trajectory(self, trajectory: _Trajectory, leftovers: bool) -> None:
        value = trajectory.value
        embedded = value.get("subagent_trajectories")
        if isinstance(embedded, list):
            for index, sub in enumerate(embedded):
                if isinstance(sub, dict) and (key := text_field(sub.get("trajectory_id"))):
                    pointer = f"{trajectory.pointer}/subagent_trajectories/{index}"
                    trajectory.embedded[key] = (sub, pointer)
        steps = value.get("steps")
        if not isinstance(steps, list):
            at = self._at(trajectory.file, trajectory.pointer)
            self._emit(
                RawEvent,
                at,
                None,
                trajectory.agent,
                record=value,
                reason="trajectory without steps",
            )
            return
        for index, step in enumerate(steps):
            self._step(trajectory, step, f"{trajectory.pointer}/steps/{index}")
        if leftovers:
            # Embedded subagents no result refers to still belong to the session.
            for key, (sub, pointer) in trajectory.embedded.items():
                if (trajectory.file.name, pointer) not in self.placed:
                    at = self._at(trajectory.file, pointer)
                    self._subagent(trajectory, key, None, _agent_name(sub), at, None)

    def _step(self, trajectory: _Trajectory, step: Any, pointer: str) -> None:
        file, agent = trajectory.file, trajectory.agent
        time = text_field(step.get("timestamp")) if isinstance(step, dict) else None
        at = self._at(file, pointer)
        if not isinstance(step, dict):
            self._emit(RawEvent, at, None, agent, record=step, reason="step is not a JSON object")
            return
        if step.get("is_copied_context") is True:
            self.parsed.dropped["copied_context"] += 1
            return
        source = step.get("source")
        if source == "user":
            text = _content_text(step.get("message"))
            if text:
                self._emit(UserMessage, at, time, agent, text=text)
        elif source == "agent":
            self._agent_step(trajectory, step, at, time)
        elif source == "system":
            self._system_step(step, at, time, agent)
        else:
            reason = "step has no source" if source is None else f"unknown step source {source!r}"
            self._emit(RawEvent, at, time, agent, record=step, reason=reason)
            return
        self._results(trajectory, step, pointer, at, time)

    def _system_step(
        self, step: dict[str, Any], at: SourceRef, time: str | None, agent: str | None
    ) -> None:
        """A system prompt has no event of its own and is kept as it is; a context
        management step is a compaction."""
        extra = mapping(step.get("extra"))
        if isinstance(extra.get("context_management"), dict):
            summary = _content_text(step.get("message")) or "context compacted"
            self._emit(Compaction, at, time, agent, summary=summary)
        else:
            self._emit(
                RawEvent, at, time, agent, record=step, reason="system prompt or harness message"
            )

    def _agent_step(
        self, trajectory: _Trajectory, step: dict[str, Any], at: SourceRef, time: str | None
    ) -> None:
        agent = trajectory.agent
        model = text_field(step.get("model_name")) or _agent_model(trajectory.file.root)
        reasoning = text_field(step.get("reasoning_content"))
        if reasoning:
            self._emit(Reasoning, at, time, agent, text=reasoning)
        text = _content_text(step.get("message"))
        if text:
            self._emit(AgentMessage, at, time, agent, text=text, model=model)
        calls = step.get("tool_calls")
        for call in calls if isinstance(calls, list) else []:
            if not isinstance(call, dict) or not text_field(call.get("tool_call_id")):
                self._emit(RawEvent, at, time, agent, record=call, reason="tool call without an id")
                continue
            call_id, name = call["tool_call_id"], as_text(call.get("function_name")) or "tool"
            arguments = _arguments(call.get("arguments"))
            self.calls[call_id] = _Call(name, arguments)
            self._emit(ToolCall, at, time, agent, call_id=call_id, name=name, input=arguments)
        metrics = step.get("metrics")
        if isinstance(metrics, dict) and step.get("llm_call_count") != 0:
            self._usage(metrics, model, at, time, agent)

    def _usage(
        self,
        metrics: dict[str, Any],
        model: str | None,
        at: SourceRef,
        time: str | None,
        agent: str | None,
    ) -> None:
        """`prompt_tokens` counts cached and cache-written tokens too; Usage counts them apart."""
        extra = mapping(metrics.get("extra"))
        cached = count_field(metrics.get("cached_tokens"))
        written = count_field(
            extra.get("cache_creation_input_tokens", extra.get("cache_write_input_tokens"))
        )
        prompt = count_field(metrics.get("prompt_tokens"))
        output = count_field(metrics.get("completion_tokens"))
        cost = cost_field(metrics.get("cost_usd"))
        if not (prompt or output or cached or cost):
            return
        self._emit(
            Usage,
            at,
            time,
            agent,
            model=model,
            input_tokens=max(prompt - cached - written, 0),
            output_tokens=output,
            cache_read_tokens=cached,
            cache_write_tokens=written,
            cost_usd=cost,
            cost_basis="reported" if cost is not None else None,
        )

    def _results(
        self,
        trajectory: _Trajectory,
        step: dict[str, Any],
        pointer: str,
        at: SourceRef,
        time: str | None,
    ) -> None:
        observation = step.get("observation")
        if observation is None:
            return
        results = observation.get("results") if isinstance(observation, dict) else None
        if not isinstance(results, list):
            self._emit(
                RawEvent,
                at,
                time,
                trajectory.agent,
                record=observation,
                reason="observation without results",
            )
            return
        calls = step.get("tool_calls")
        own_calls = [
            call_id
            for c in (calls if isinstance(calls, list) else [])
            if isinstance(c, dict) and (call_id := text_field(c.get("tool_call_id")))
        ]
        for result in results:
            self._result(trajectory, result, own_calls, at, time)

    def _result(
        self,
        trajectory: _Trajectory,
        result: Any,
        own_calls: list[str],
        at: SourceRef,
        time: str | None,
    ) -> None:
        agent = trajectory.agent
        if not isinstance(result, dict):
            self._emit(
                RawEvent,
                at,
                time,
                agent,
                record=result,
                reason="observation result is not a JSON object",
            )
            return
        call_id = text_field(result.get("source_call_id"))
        if call_id is None:
            # A producer that left the id out of a step's only call still meant that call.
            open_calls = [c for c in own_calls if not self.calls[c].answered]
            if len(open_calls) == 1 and len(own_calls) == 1 and result.get("content") is not None:
                call_id = open_calls[0]
        refs = result.get("subagent_trajectory_ref")
        for ref in refs if isinstance(refs, list) else [refs] if isinstance(refs, dict) else []:
            self._reference(trajectory, ref, call_id, at, time)
        content = result.get("content")
        if call_id is None or call_id not in self.calls:
            if content is not None or refs is None:
                reason = "observation result without a tool call"
                self._emit(RawEvent, at, time, agent, record=result, reason=reason)
            return
        call = self.calls[call_id]
        call.answered = True
        output = _content_text(content)
        extra = mapping(result.get("extra"))
        failed = extra.get("is_error") is True or extra.get("tool_result_is_error") is True
        ok = not failed and _ERROR_MARK not in output
        self._emit(ToolResult, at, time, agent, call_id=call_id, ok=ok, output=output)
        if ok:
            for edit in edits_from_arguments(call.name, call.arguments, output):
                self._emit(FileChange, at, time, agent, call_id=call_id, **file_change_fields(edit))

    # -- subagents --------------------------------------------------------------------------

    def _reference(
        self,
        trajectory: _Trajectory,
        ref: Any,
        call_id: str | None,
        at: SourceRef,
        time: str | None,
    ) -> None:
        if not isinstance(ref, dict):
            self._emit(
                RawEvent,
                at,
                time,
                trajectory.agent,
                record=ref,
                reason="subagent reference is not a JSON object",
            )
            return
        key = text_field(ref.get("trajectory_id"))
        path = text_field(ref.get("trajectory_path"))
        agent_id = key or text_field(ref.get("session_id")) or path
        if agent_id is None:
            self._emit(
                RawEvent,
                at,
                time,
                trajectory.agent,
                record=ref,
                reason="subagent reference without an id",
            )
            return
        extra = mapping(ref.get("extra"))
        description = text_field(extra.get("summary")) or text_field(extra.get("agent_name"))
        self._subagent(trajectory, agent_id, call_id, description, at, time, key=key, path=path)

    def _subagent(
        self,
        parent: _Trajectory,
        agent_id: str,
        call_id: str | None,
        description: str | None,
        at: SourceRef,
        time: str | None,
        key: str | None = None,
        path: str | None = None,
    ) -> None:
        self._emit(
            Subagent,
            at,
            time,
            parent.agent,
            agent_id=agent_id,
            call_id=call_id,
            description=description,
        )
        found = parent.embedded.get(key or agent_id)
        if found is not None and (parent.file.name, found[1]) not in self.placed:
            value, pointer = found
            self.placed.add((parent.file.name, pointer))
            self._trajectory(_Trajectory(parent.file, value, pointer, agent_id), leftovers=True)
            return
        related = self._related(path)
        if related is not None and (sub := self._open(*related)) is not None:
            self._trajectory(_Trajectory(sub, sub.root, "", agent_id), leftovers=True)

    # -- helpers ----------------------------------------------------------------------------

    def _at(self, file: _File, pointer: str) -> SourceRef:
        return SourceRef(file=file.name, line=file.document.line(pointer), pointer=pointer)

    def _emit(
        self, kind: type[E], at: SourceRef, time: str | None, agent: str | None, **fields: Any
    ) -> E:
        event = kind(session=self.parsed.session_id, source=at, time=time, agent=agent, **fields)
        self.parsed.events.append(event)
        if agent is None and kind is not SessionStart:
            self.last, self.last_time = at, time or self.last_time
        return event


def _content_text(content: Any) -> str:
    """A message or result's text: a string, or content parts (text; images and audio by
    their file)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return as_text(content)
    texts = []
    for part in content:
        if not isinstance(part, dict):
            texts.append(as_text(part))
        elif part.get("type") == "text":
            texts.append(as_text(part.get("text")))
        else:
            source = mapping(part.get("source"))
            texts.append(f"[{part.get('type', 'content')}: {as_text(source.get('path'))}]")
    return "\n".join(texts)


def _arguments(value: Any) -> dict[str, Any]:
    """A call's arguments as an object (some producers write them as a JSON string)."""
    if isinstance(value, str):
        try:
            decoded = json.loads(value)
        except ValueError:
            decoded = None
        value = decoded if isinstance(decoded, dict) else value
    return value if isinstance(value, dict) else {"arguments": value}


def _agent_model(root: dict[str, Any]) -> str | None:
    agent = root.get("agent")
    return text_field(agent.get("model_name")) if isinstance(agent, dict) else None


def _agent_name(trajectory: dict[str, Any]) -> str | None:
    agent = trajectory.get("agent")
    return text_field(agent.get("name")) if isinstance(agent, dict) else None


def _single(extras: Iterable[dict[str, Any]], keys: Sequence[str]) -> str | None:
    """A value the root or agent `extra` records under one of `keys`: a string, or a list
    holding exactly one."""
    for extra in extras:
        for key in keys:
            value = extra.get(key)
            if isinstance(value, list) and len(value) == 1:
                value = value[0]
            if text_field(value):
                return str(value)
    return None
