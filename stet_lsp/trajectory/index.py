"""What an editor shows of an open trajectory: an index of `events.jsonl` (one entry a line
holding an event) with each step's code lens title, hover, outline place, file targets and
workspace symbol, and the step anchors of a `narration.md`.

Indexing reads from each line only what titles and the outline need (msgspec, which skips the
other fields unbuilt; what it refuses, such as NaN or a number out of its range, is read with
json as the schema reads it); the full event (the pydantic model, `step_detail.py`) is parsed
only for the step a hover asks about. Document
lines are 0-based here, as editors count them; file targets are 1-based lines of the changed
file, as its diff counts them. Nothing here knows an editor protocol.
"""

from __future__ import annotations

import bisect
import json
import math
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import msgspec

from stet_lsp.core.jsonread import object_or_none
from stet_lsp.trajectory.paths import repository_path

# How long a one-line summary (a lens title's detail, a symbol's name) gets.
SUMMARY_CHARS = 80
ABANDONED = "abandoned · "
"""What a step's summary starts with when a rewind left its branch of the conversation."""
TURN_NAME_CHARS = 60
# Tool arguments that say best what a call does, in order of preference.
_MINUS = "\u2212"
"""narration.MINUS (not imported: narration loads the event models)."""
SALIENT_INPUT_KEYS = (
    "file_path",
    "path",
    "filePath",
    "absolute_path",
    "command",
    "cmd",
    "pattern",
    "query",
    "url",
    "description",
    "prompt",
)

FENCE_LINE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
# Numbers of at most 10 digits, as attribution reads them: Python reads no number of over
# 4,300 digits (ValueError), and a committed trajectory can write one anywhere.
_HUNK_HEADER = re.compile(r"^@@ -\d{1,10}(?:,\d{1,10})? \+(\d{1,10})(?:,\d{1,10})? @@")
# A line of narration.md that may open or close a code block, hold anchors or be a heading
# (after a line break: a search for a literal first character is fast).
_MARK = r"(?P<quote>(?:> ?)*)(?: {0,3}(?:`{3}|~{3})|<a id=|#{2,3} )"
_MARK_LINE = re.compile(_MARK)
_NEXT_MARK_LINE = re.compile("\n" + _MARK)
_ANCHORS = re.compile(r'(?:<a id="step-\d{1,10}"></a>)+')
_ANCHOR_STEP = re.compile(r'<a id="step-(\d{1,10})"></a>')
_SECTION_HEADING = re.compile(r"^#{2,3} ")


# --- what the index keeps -------------------------------------------------------------------


class StepLine(NamedTuple):
    """One line of events.jsonl that holds an event: where it is and what titles need.

    `line` is 0-based; `step` is 0 when the line has none. `title` is what lenses, symbols and
    the outline show: `12 · tool_call Edit src/app.py`. `tool` is the tool of a call (and of
    the call a result answers); `agent_id` the subagent a `subagent` step starts."""

    line: int
    step: int
    kind: str
    session: str
    agent: str | None
    time: str | None
    summary: str
    title: str
    call_id: str | None
    tool: str | None
    agent_id: str | None


@dataclass(slots=True)
class OutlineNode:
    """A node of the outline: a session, a turn or a subagent. `line` is the line that names
    it (a session's start, a turn's request, the step that started a subagent);
    `first_line`/`last_line` span its steps and its children; `step` is the step it stands
    for, if any. Steps are not nodes (each step has its lens): `steps` are the ones it holds
    itself, its children's not included."""

    name: str
    detail: str
    kind: str
    line: int
    first_line: int
    last_line: int
    step: int | None = None
    children: list[OutlineNode] = field(default_factory=list)
    steps: list[StepLine] = field(default_factory=list)


class SymbolMatch(NamedTuple):
    step: int
    name: str
    line: int
    kind: str


class LineIssue(NamedTuple):
    """A problem of one line of events.jsonl (0-based); severity "error" or "warning"."""

    line: int
    message: str
    severity: str


StepRef = int | StepLine


class TrajectoryIndex:
    """The steps of an events.jsonl text, in the order of its lines."""

    def __init__(self, lines: Sequence[str]) -> None:
        """`lines`: of the text, without their breaks (kept, not copied: do not change it)."""
        builder = _Builder()
        for number, line in enumerate(lines):
            builder.add(number, line)
        self.lines = lines
        self.steps = builder.steps
        # (session, call id) -> position in `steps` of the call; a call's and its result's
        # positions -> each other's.
        self._calls = builder.calls
        self._pairs = builder.pairs
        self._by_step: dict[int, int] = {}
        for position, entry in enumerate(self.steps):
            self._by_step.setdefault(entry.step, position)
        self._lines = [entry.line for entry in self.steps]
        self._outline: list[OutlineNode] | None = None
        self._issues: list[LineIssue] | None = None
        self._search_keys: list[str] | None = None

    @classmethod
    def from_events_text(cls, text: str) -> TrajectoryIndex:
        """Only "\n" ends a line (as in validate): a U+2028 inside a text does not."""
        return cls(text.split("\n"))

    # -- finding steps --

    def get(self, step: StepRef) -> StepLine:
        """The entry of a step: by its number (the first line holding it when numbers
        repeat), or the entry itself. KeyError when no line holds that step."""
        if isinstance(step, StepLine):
            return step
        position = self._by_step.get(step)
        if position is None:
            raise KeyError(f"no step {step}")
        return self.steps[position]

    def at_line(self, line: int) -> StepLine | None:
        """The step on a 0-based line of the document, if the line holds one."""
        position = self._position(line)
        return self.steps[position] if position is not None else None

    def _position(self, line: int) -> int | None:
        position = bisect.bisect_left(self._lines, line)
        if position < len(self._lines) and self._lines[position] == line:
            return position
        return None

    def partner(self, entry: StepLine) -> StepLine | None:
        """The result of a call, or the call of a result."""
        position = self._position(entry.line)
        partner = self._pairs.get(position) if position is not None else None
        return self.steps[partner] if partner is not None else None

    # -- what the editor shows --

    def lens_title(self, step: StepRef) -> str:
        """`12 · tool_call Edit src/app.py`: number, kind and a short summary."""
        return self.get(step).title

    def hover(self, step: StepRef) -> str:
        """Markdown with the step's detail; a call shows its result and a result its call."""
        from stet_lsp.trajectory.step_detail import hover  # loads the event models

        return hover(self, self.get(step))

    def outline(self) -> list[OutlineNode]:
        """Sessions, their turns, and subagents under the turn (or subagent) whose call
        started them (built once, then shared: do not change the nodes)."""
        if self._outline is None:
            self._outline = _OutlineBuilder(self).build()
        return self._outline

    def file_targets(self, step: StepRef) -> list[tuple[str, int]]:
        """Where a file_change lands: its path in the repository (a session recorded in
        another folder or machine is mapped through its recorded working folder) and, for
        an anchored diff, each hunk's first changed line in the file right after the change
        (1-based); otherwise line 1. Nothing for a deletion, a file outside the repository
        or a step that is not a file change."""
        entry = self.get(step)
        if entry.kind != "file_change":
            return []
        record = self.record(entry)
        recorded = record.get("path") if record is not None else None
        if record is None or not isinstance(recorded, str) or record.get("operation") == "delete":
            return []
        path = repository_path(recorded, self._session_cwd(entry.session))
        if path is None:
            return []
        diff = record.get("diff")
        if record.get("anchored") is True and isinstance(diff, str):
            lines = changed_lines(diff)
            if lines:
                return [(path, line) for line in lines]
        return [(path, 1)]

    def symbols(self, query: str, limit: int | None = None) -> list[SymbolMatch]:
        """Steps whose title holds every word of `query` (case-insensitive), in order."""
        words = query.lower().split()
        if self._search_keys is None:
            self._search_keys = [entry.title.lower() for entry in self.steps]
        found: list[SymbolMatch] = []
        for entry, key in zip(self.steps, self._search_keys, strict=True):
            if all(word in key for word in words):
                found.append(SymbolMatch(entry.step, entry.title, entry.line, entry.kind))
                if limit is not None and len(found) >= limit:
                    break
        return found

    def issues(self) -> list[LineIssue]:
        """Every line that is not an event of the schema, steps out of sequence, results of
        no earlier call (checked once, on the first call: it parses every line)."""
        if self._issues is None:
            from stet_lsp.trajectory.validate import validate_events  # the event models

            found, _ = validate_events(self.lines)
            self._issues = [
                LineIssue(issue.line - 1, issue.message, issue.severity) for issue in found
            ]
        return self._issues

    # -- reading one step in full --

    def line_text(self, step: StepRef) -> str:
        entry = self.get(step)
        return self.lines[entry.line]

    def record(self, entry: StepLine) -> dict[str, Any] | None:
        return object_or_none(self.line_text(entry))

    def _session_cwd(self, session: str) -> str | None:
        """The working folder `session` recorded at its start (relative to the repository
        when it was inside it: `.`)."""
        for entry in self.steps:
            if entry.kind == "session_start" and entry.session == session:
                record = self.record(entry)
                cwd = record.get("cwd") if record is not None else None
                return cwd if isinstance(cwd, str) else None
        return None

    def call_step(self, session: str, call_id: str | None) -> int | None:
        """The step of the call `call_id` of `session`, if an event made it; else of the one
        call of that id in another session (a Codex subagent thread, a session of its own, is
        started by a call of its parent's session)."""
        if not call_id:
            return None
        position = self._calls.get((session, call_id))
        if position is None:
            elsewhere = [at for (_, made), at in self._calls.items() if made == call_id]
            position = elsewhere[0] if len(elsewhere) == 1 else None
        return self.steps[position].step if position is not None else None


# --- indexing -------------------------------------------------------------------------------


class _Builder:
    """Reads lines into StepLines, pairing calls with their results on the way."""

    def __init__(self) -> None:
        self.steps: list[StepLine] = []
        # (session, call_id) -> position of the call; `waiting` only until its result comes.
        self.calls: dict[tuple[str, str], int] = {}
        self.waiting: dict[tuple[str, str], int] = {}
        self.pairs: dict[int, int] = {}
        # One copy of each repeated string (sessions, kinds, agents, tools).
        self.shared: dict[str, str] = {}

    def add(self, line: int, text: str) -> None:
        # Runs once a line of files with 100,000 lines: calls are kept few.
        try:
            record = _FIELDS.decode(text)
        except (msgspec.MsgspecError, UnicodeEncodeError, RecursionError):  # nested too deep
            found = _read_as_json(text)
            if found is None:
                return
            record = found
        kind = record.kind
        if type(kind) is not str:
            return
        shared = self.shared
        session = record.session
        session = shared.setdefault(session, session) if type(session) is str else ""
        call_id = tool = agent_id = None
        if kind in _LINKED_KINDS:
            call_id, tool, agent_id = self._link(kind, session, record)
        describe = _SUMMARIES.get(kind)
        summary = _fit(describe(record), SUMMARY_CHARS) if describe is not None else ""
        if kind == "tool_result":
            summary = f"{tool or call_id or ''} {summary}".lstrip()
        if record.abandoned is True:
            summary = f"{ABANDONED}{summary}".rstrip()
        step = record.step if type(record.step) is int and record.step > 0 else 0
        agent = record.agent
        time = record.time
        if "\\ud" in text or "\\uD" in text:  # a lone surrogate, maybe: written as U+FFFD
            kind, summary, session = (_characters(part) for part in (kind, summary, session))
            call_id, tool, agent_id, agent, time = (
                _characters(part) if type(part) is str else part
                for part in (call_id, tool, agent_id, agent, time)
            )
        kind = shared.setdefault(kind, kind)
        self.steps.append(
            _new_step(
                StepLine,
                (
                    line,
                    step,
                    kind,
                    session,
                    shared.setdefault(agent, agent) if type(agent) is str else None,
                    time if type(time) is str else None,
                    summary,
                    f"{step} · {kind} {summary}".rstrip(),
                    call_id,
                    tool,
                    agent_id,
                ),
            )
        )

    def _link(
        self, kind: str, session: str, record: _Fields
    ) -> tuple[str | None, str | None, str | None]:
        """(call id, tool, subagent id) of a call, a result or a subagent; a result is paired
        with the earliest unanswered call of its id in its session."""
        call_id = _optional_text(record.call_id)
        position = len(self.steps)
        if kind == "subagent":
            return call_id, None, self._share(record.agent_id)
        tool = self._share(record.name) if kind == "tool_call" else None
        if call_id is None:
            return None, tool, None
        key = (session, call_id)
        if kind == "tool_call":
            self.calls[key] = self.waiting[key] = position
            return call_id, tool, None
        call = self.waiting.pop(key, None)
        if call is None:
            return call_id, None, None
        self.pairs[call] = position
        self.pairs[position] = call
        return call_id, self.steps[call].tool, None

    def _share(self, value: Any) -> str | None:
        return self.shared.setdefault(value, value) if isinstance(value, str) else None


_LINKED_KINDS = frozenset({"tool_call", "tool_result", "subagent"})


class _Fields(msgspec.Struct):
    """The fields of an event line that the index reads (its place, its pairing, its
    title). Decoding skips every other field without building it: a line's output, diff
    or content is never materialised unless a title needs it."""

    kind: Any = None
    step: Any = None
    session: Any = None
    agent: Any = None
    time: Any = None
    call_id: Any = None
    name: Any = None
    agent_id: Any = None
    harness: Any = None
    harness_version: Any = None
    model: Any = None
    text: Any = None
    summary: Any = None
    input: Any = None
    ok: Any = None
    output: Any = None
    operation: Any = None
    path: Any = None
    added: Any = None
    removed: Any = None
    old_path: Any = None
    cache_read_tokens: Any = None
    cache_write_tokens: Any = None
    input_tokens: Any = None
    output_tokens: Any = None
    cost_usd: Any = None
    description: Any = None
    sha: Any = None
    message: Any = None
    interrupt: Any = None
    entry_kind: Any = None
    entry_id: Any = None
    route: Any = None
    skill: Any = None
    edited: Any = None
    reason: Any = None
    abandoned: Any = None
    resumes_after: Any = None

    def get(self, key: str) -> Any:
        return getattr(self, key, None)


_FIELDS = msgspec.json.Decoder(_Fields)


def _read_as_json(line: str) -> _Fields | None:
    """The fields of a line msgspec refuses (NaN, Infinity, a number out of its range, a lone
    surrogate) as json reads it; None for what is not a JSON object."""
    try:
        value = json.loads(line)
        return msgspec.convert(value, _Fields) if isinstance(value, dict) else None
    except (ValueError, RecursionError, msgspec.MsgspecError):
        return None


_new_step = tuple.__new__  # a StepLine from its fields in order, without NamedTuple's checks


# --- one-line summaries, from the JSON of a line ----------------------------------------------


def _session_start_summary(record: _Fields) -> str:
    words = [record.harness, record.harness_version, record.model]
    return " ".join(word for word in words if isinstance(word, str) and word)


def _text_summary(key: str) -> Callable[[_Fields], str]:
    return lambda record: _head(_text(record.get(key)))


def _tool_call_summary(record: _Fields) -> str:
    name = _text(record.name)
    arguments = record.input
    gist = _input_gist(arguments) if isinstance(arguments, dict) else ""
    if not gist or gist == name or gist.startswith(f"{name} "):
        return gist or name  # a command that starts with the tool's name says it already
    return f"{name} {gist}"


def _input_gist(arguments: dict[str, Any]) -> str:
    for key in SALIENT_INPUT_KEYS:
        value = arguments.get(key)
        if isinstance(value, str) and value.strip():
            return _head(value)
        if isinstance(value, list) and value and all(isinstance(item, str) for item in value):
            return _head(" ".join(value[:20]))
    first = next((value for value in arguments.values() if isinstance(value, str)), "")
    return _head(first)


def _tool_result_summary(record: _Fields) -> str:
    state = "error" if record.ok is False else "ok"
    output = _text(record.output)
    if not output:
        return f"{state} · no output"
    lines = output.count("\n") + (0 if output.endswith("\n") else 1)
    return f"{state} · {lines:,} line" + ("" if lines == 1 else "s")


def _file_change_summary(record: _Fields) -> str:
    operation = _text(record.operation)
    path = _text(record.path)
    counts = f"+{_count(record.added):,} {_MINUS}{_count(record.removed):,}"
    old_path = record.old_path
    moved = f" (from {old_path})" if isinstance(old_path, str) and old_path else ""
    shown = "" if operation == "modify" else f"{operation} "
    return f"{shown}{path}{moved} {counts}"


def _usage_summary(record: _Fields) -> str:
    cached = _count(record.cache_read_tokens) + _count(record.cache_write_tokens)
    cache = f" (+{cached:,} cache)" if cached else ""
    text = f"{_count(record.input_tokens):,} in{cache} / "
    text += f"{_count(record.output_tokens):,} out"
    return text + _cost_summary(record)


def _cost_summary(record: _Fields) -> str:
    cost = record.cost_usd
    if isinstance(cost, int | float) and not isinstance(cost, bool) and math.isfinite(cost):
        return f" · ${cost:.4f}"
    return ""


def _session_end_summary(record: _Fields) -> str:
    """How the session ended, and the cost its harness reported for it."""
    parts = [_head(_text(record.reason)), _cost_summary(record).removeprefix(" · ")]
    if parts[1]:
        parts[1] += " reported"
    return " · ".join(part for part in parts if part)


def _subagent_summary(record: _Fields) -> str:
    description = _text(record.description)
    agent_id = _text(record.agent_id)
    return f"{agent_id}: {_head(description)}" if description else agent_id


def _commit_summary(record: _Fields) -> str:
    sha = _text(record.sha)[:10]
    message = _head(_text(record.message))
    return f"{sha} {message}" if sha else message


def _error_summary(record: _Fields) -> str:
    message = _head(_text(record.message))
    return f"interrupted: {message}" if record.interrupt is True else message


def _note_summary(record: _Fields) -> str:
    return f"[{_text(record.entry_kind)}] {_head(_text(record.text))}"


def graduation_summary(
    entry_id: str, entry_kind: str, route: str, skill: str | None, edited: bool
) -> str:
    """A graduation decision: which entry went where (`[convention] csta5p → skill http-calls`);
    the outline's summary of the event too."""
    where = {"trajectory": "the trajectory", "discard": "discarded", "skill": "a skill"}.get(
        route, route
    )
    if route == "skill" and skill:
        where = f"skill {skill}"
    return f"[{entry_kind}] {entry_id} → {where}" + (" (text edited)" if edited else "")


def _graduation_summary(record: _Fields) -> str:
    skill = record.skill
    return graduation_summary(
        _text(record.entry_id),
        _text(record.entry_kind),
        _text(record.route),
        skill if isinstance(skill, str) else None,
        record.edited is True,
    )


def _rewind_summary(record: _Fields) -> str:
    after = record.resumes_after
    line = after.get("line") if isinstance(after, dict) else None
    if type(line) is int:
        return f"back to line {line} of {_text(after.get('file'))}"
    return "back to the start"


def _raw_summary(record: _Fields) -> str:
    return _head(_text(record.reason)) or "kept as recorded"


_SUMMARIES: dict[str, Callable[[_Fields], str]] = {
    "session_start": _session_start_summary,
    "user_message": _text_summary("text"),
    "agent_message": _text_summary("text"),
    "reasoning": _text_summary("text"),
    "tool_call": _tool_call_summary,
    "tool_result": _tool_result_summary,
    "file_change": _file_change_summary,
    "usage": _usage_summary,
    "compaction": _text_summary("summary"),
    "subagent": _subagent_summary,
    "rewind": _rewind_summary,
    "commit": _commit_summary,
    "error": _error_summary,
    "note": _note_summary,
    "graduation": _graduation_summary,
    "session_end": _session_end_summary,
    "raw": _raw_summary,
}


# --- the outline ------------------------------------------------------------------------------


class _OutlineBuilder:
    """Sessions in order of their first step; in each, one node a turn (from each request of
    the user to the main agent); a subagent under the node that holds the call that started
    it (in its own session, else the one call of that id in another: a Codex subagent thread is
    a session of its own). Each node spans the steps it holds."""

    def __init__(self, index: TrajectoryIndex) -> None:
        self.index = index
        self.roots: list[OutlineNode] = []
        self.sessions: dict[str, OutlineNode] = {}
        self.turns: dict[str, OutlineNode] = {}
        self.turn_counts: dict[str, int] = {}
        self.agents: dict[tuple[str, str], OutlineNode] = {}
        self.calls: dict[tuple[str, str], OutlineNode] = {}
        self.call_ids: dict[str, tuple[str, OutlineNode] | None] = {}
        """By call id alone: the session that made the call and the node holding it (its
        last call of that id, as in `calls`); None when two sessions made one."""

    def build(self) -> list[OutlineNode]:
        for entry in self.index.steps:
            self._place(entry)
        for root in self.roots:
            _span(root)
        return self.roots

    def _place(self, entry: StepLine) -> None:
        session = self._session(entry)
        if entry.kind == "session_start" and session.step is None:
            _name_session(session, entry)
            session.steps.append(entry)
        elif entry.kind == "user_message" and entry.agent is None:
            self._start_turn(session, entry)
        elif entry.kind == "subagent" and self._starts_subagent(entry):
            self._subagent(entry)
        else:
            holder = self._container(entry)
            holder.steps.append(entry)
            holder.last_line = max(holder.last_line, entry.line)
            if entry.kind == "tool_call" and entry.call_id is not None:
                self.calls[entry.session, entry.call_id] = holder
                known = self.call_ids.get(entry.call_id, (entry.session, holder))
                same = known is not None and known[0] == entry.session
                self.call_ids[entry.call_id] = (entry.session, holder) if same else None

    def _session(self, entry: StepLine) -> OutlineNode:
        node = self.sessions.get(entry.session)
        if node is None:
            name = entry.session or "session"
            node = OutlineNode(name, entry.session, "session", entry.line, entry.line, entry.line)
            self.sessions[entry.session] = node
            self.roots.append(node)
        return node

    def _start_turn(self, session: OutlineNode, entry: StepLine) -> None:
        number = self.turn_counts.get(entry.session, 0) + 1
        self.turn_counts[entry.session] = number
        name = _first_words(entry.summary, TURN_NAME_CHARS) or f"Turn {number}"
        turn = OutlineNode(name, f"turn {number}", "turn", entry.line, entry.line, entry.line)
        turn.step = entry.step
        turn.steps.append(entry)
        session.children.append(turn)
        self.turns[entry.session] = turn

    def _container(self, entry: StepLine) -> OutlineNode:
        """Where a step of `entry.agent` goes: its subagent, else the session's turn."""
        if entry.agent is not None:
            return self._agent(entry.session, entry.agent, entry)
        return self.turns.get(entry.session) or self.sessions[entry.session]

    def _agent(self, session: str, agent: str, entry: StepLine) -> OutlineNode:
        """The node of a subagent, made where its first step is when no `subagent` step
        started it before."""
        node = self.agents.get((session, agent))
        if node is None:
            node = OutlineNode(agent, "subagent", "subagent", entry.line, entry.line, entry.line)
            self.agents[session, agent] = node
            parent = self.turns.get(session) or self.sessions[session]
            parent.children.append(node)
        return node

    def _starts_subagent(self, entry: StepLine) -> bool:
        """Whether a `subagent` step is the first to start its subagent (a later one for the
        same subagent is a step like any other)."""
        if entry.agent_id is None:
            return False
        node = self.agents.get((entry.session, entry.agent_id))
        return node is None or node.step is None

    def _subagent(self, entry: StepLine) -> None:
        assert entry.agent_id is not None
        key = (entry.session, entry.agent_id)
        node = self.agents.get(key)
        if node is None:
            node = OutlineNode("", "", "subagent", entry.line, entry.line, entry.line)
            self.agents[key] = node
            call = self.calls.get((entry.session, entry.call_id or ""))
            if call is None and entry.call_id is not None:  # a call of its parent's session
                made = self.call_ids.get(entry.call_id)
                call = made[1] if made is not None else None
            parent = call if call is not None else self._container(entry)
            parent.children.append(node)
        node.name = entry.summary or entry.agent_id
        node.detail = f"subagent · step {entry.step}"
        node.line = entry.line
        node.step = entry.step
        node.steps.append(entry)


def _name_session(node: OutlineNode, entry: StepLine) -> None:
    parts = [entry.summary, entry.time or ""]
    node.name = " · ".join(part for part in parts if part) or node.name
    node.line = entry.line
    node.step = entry.step


def _span(node: OutlineNode) -> None:
    """Stretch each node over its children (its own steps it spans already)."""
    first, last = node.first_line, node.last_line
    for child in node.children:
        _span(child)
        first = min(first, child.first_line)
        last = max(last, child.last_line)
    node.first_line, node.last_line = first, last


# --- file targets -----------------------------------------------------------------------------


def changed_lines(diff: str) -> list[int]:
    """For each hunk of an anchored unified diff, the first line it changes in the file after
    the change (1-based): its first added line, else where it removed lines."""
    found: list[int] = []
    start = current = 0
    pending = False
    for line in diff.split("\n"):
        header = _HUNK_HEADER.match(line)
        if header is not None:
            if pending:
                found.append(max(start, 1))
            start = current = int(header.group(1))
            pending = True
        elif not pending or line.startswith("\\"):
            continue
        elif line.startswith(("+", "-")):
            found.append(max(current, 1))
            pending = False
        else:
            current += 1
    if pending:
        found.append(max(start, 1))
    return found


# --- narration.md ------------------------------------------------------------------------------


def narration_steps(text: str) -> dict[int, int]:
    """The 0-based line of each step's anchor (`<a id="step-N"></a>`) in a narration.md.
    A call and its result share the call's line; anchor-like text inside code blocks is
    content, not an anchor."""
    return NarrationIndex(text).steps


class NarrationIndex:
    """Both ways between a narration.md's lines and the steps it narrates."""

    def __init__(self, text: str) -> None:
        # step -> the line of its first anchor
        self.steps: dict[int, int] = {}
        self._starts: list[int] = []
        self._owners: list[int | None] = []
        for line, step in _narration_marks(text):
            if step is not None:
                self.steps.setdefault(step, line)
            if self._starts and self._starts[-1] == line:
                continue  # a second anchor on a line (a call's result): the line is the call's
            self._starts.append(line)
            self._owners.append(step)

    def line_of(self, step: int) -> int | None:
        return self.steps.get(step)

    def step_at(self, line: int) -> int | None:
        """The step a line belongs to: the nearest anchor above it (or on it), unless a
        section or turn heading comes between them."""
        position = bisect.bisect_right(self._starts, line) - 1
        return self._owners[position] if position >= 0 else None


def _narration_marks(text: str) -> Iterator[tuple[int, int | None]]:
    """(line, step) of each anchor in order, and (line, None) of each section or turn
    heading, which ends the step above it."""
    fence = ""
    number = counted = 0
    for start, quote_end in _mark_lines(text):
        number += text.count("\n", counted, start)
        counted = start
        end = text.find("\n", start)
        inner = text[quote_end : end if end >= 0 else len(text)]
        if fence:
            fence = _still_open(fence, inner)
            continue
        opening = FENCE_LINE.match(inner)
        if opening is not None and not (opening.group(1)[0] == "`" and "`" in opening.group(2)):
            fence = opening.group(1)
        elif inner.startswith("<a id="):
            anchors = _ANCHORS.match(inner)
            for step in _ANCHOR_STEP.findall(anchors.group() if anchors else ""):
                yield number, int(step)
        elif quote_end == start and _SECTION_HEADING.match(inner):
            yield number, None


def _mark_lines(text: str) -> Iterator[tuple[int, int]]:
    """(start, end of the quote marks) of each line that may open or close a code block,
    hold anchors or be a heading: the only lines worth a look."""
    first = _MARK_LINE.match(text)
    if first is not None:
        yield 0, first.end("quote")
    for match in _NEXT_MARK_LINE.finditer(text):
        yield match.start() + 1, match.end("quote")


def _still_open(fence: str, line: str) -> str:
    """The open fence after `line`: "" when the line closes it."""
    closing = FENCE_LINE.match(line)
    if closing is None:
        return fence
    run, rest = closing.group(1), closing.group(2)
    closes = run[0] == fence[0] and len(run) >= len(fence) and not rest.strip()
    return "" if closes else fence


# --- small helpers -----------------------------------------------------------------------------


def _head(text: str) -> str:
    """The start of a text on one line, cut a little past what a summary shows."""
    return " ".join(text[: SUMMARY_CHARS * 2].split())


def _fit(text: str, width: int) -> str:
    """A summary cut to `width` (the summaries are one line already but for stray breaks)."""
    if "\n" in text or "\r" in text:
        text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1].rstrip() + "…"


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
"""What a `\\ud800` escape with no pair decodes to: no character, so no text a client reads
(as UTF-8 or UTF-16) can hold it."""


def _characters(text: str) -> str:
    return _LONE_SURROGATE.sub("\ufffd", text)


def _first_words(text: str, width: int) -> str:
    if len(text) <= width:
        return text
    cut = text[: width - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > width // 2 else cut).rstrip() + "…"


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _optional_text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0
