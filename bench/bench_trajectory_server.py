"""The language server with a very long agent run: a 100,000-event working trajectory open in
the editor (events.jsonl's code lenses, outline and hovers), provenance in a 5,000-line file
a good share of whose lines the run wrote (lenses, hovers, hovers while typing), and the
server's memory. The real server runs over stdio pipes and is spoken to as VS Code speaks
to it (its client capabilities, workspace folders, UTF-16 positions).

Run: python bench/bench_trajectory_server.py [--events N] [--hovers N] [--quick] [--keep DIR]
         [--profile FILE]

The data, made fresh each run (a fixed seed; --keep DIR keeps it):
- a git repository (pygit2): thirty Python-like source files of 80 to 1,200 lines and
  `src/pkg/engine.py` of 5,000 lines, committed as the run's base commit;
- a Claude Code-shaped run replayed over those files, made with the models of
  stet_lsp/trajectory/events.py: sessions of 20 to 60 turns, each turn a user message and
  3 to 20 model requests (reasoning, usage with cache counts, sometimes a message, one tool
  call and its result), tool calls as Claude Code makes them (Read with `cat -n` output of
  the file as it is at that point, 60 lines typical and up to 2,000; Bash with a lognormal
  output length; Edit, Write, Grep, Glob, TodoWrite; Task with a subagent's own requests).
  Each Edit is applied to the file it names and recorded as the importer records a Claude
  Code edit with a structured patch: an anchored file_change whose diff (three lines of
  context) is made by the importers' own `fragment_diff`; about one edit in eight goes to
  the 5,000-line file, whose length stays at 5,000 lines. Which step wrote each line is
  tracked while the diffs are applied, so the lines provenance should attribute are known.
  The files as the run left them are committed on top of the base;
- the working trajectory in `.stet/cache/trajectories/<target key>/`: events.jsonl (steps
  numbered, each line `event_json`), meta.json (`meta.summarise`, `store.meta_json`) and
  narration.md (`narration.render` of every event), written by `Folder.write`;
- the same on a 1,000-event run (the small baseline), and a repository holding only the
  5,000-line file, with no trajectory (the plain baseline).

What is measured, each beside a baseline from the same run:
1. open events.jsonl (didOpen of the whole text) until textDocument/codeLens returns a lens
   for every step, and until textDocument/documentSymbol returns the outline (both asked on
   opening, as an editor asks; the lenses again after the server's workspace/codeLens/refresh;
   the outline once, answered when the server has indexed the file); baseline: the same on
   the 1,000-event trajectory, and a codeLens answer on the plain 5,000-line file;
2. hovers on random step lines of events.jsonl, p50/p99; baseline: hovers on the plain file
   (no Stet items) in the same server;
3. provenance: open the 5,000-line file, wait for its "agent: step" lenses (the server loads
   the repository's trajectories in a worker thread first), then hovers on random attributed
   lines; then typing a line near the top (incremental didChange, one per character), each
   keystroke followed by a hover on an attributed line below it (timed from the didChange:
   the server attributes the new text before it answers), then hovers on the edited text;
   baseline: the same requests on the same file in the repository with no trajectory;
4. the server's resident memory (VmRSS, and its peak VmHWM, from /proc) after all of the
   above; baseline: the server that did the same with the 1,000-event trajectory.
Times are taken from the request's last byte sent to the answer's last byte read (before
the client parses it), with this process's cyclic garbage collector paused (its own pauses
would count as the server's). Targets (the issue): outline and lenses under 2 s, hover p99 under
20 ms, provenance hover p99 under 20 ms, resident memory under 500 MB.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import math
import os
import queue
import random
import re
import shutil
import statistics
import string
import sys
import tempfile
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pygit2

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # lsp_pipe
from lsp_pipe import PipeServer
from pygls.uris import from_fs_path

from stet_lsp.core.targets import resolve_target
from stet_lsp.trajectory.events import (
    AgentMessage,
    EventBase,
    FileChange,
    Reasoning,
    SessionEnd,
    SessionStart,
    SourceRef,
    Subagent,
    ToolCall,
    ToolResult,
    Usage,
    UserMessage,
    event_json,
)
from stet_lsp.trajectory.importers.diffs import file_diff, fragment_diff
from stet_lsp.trajectory.meta import SourceFile, TargetRef, summarise
from stet_lsp.trajectory.narration import render
from stet_lsp.trajectory.store import working_folder

BIG_FILE = "src/pkg/engine.py"
BIG_LINES = 5_000
SMALL_EVENTS = 1_000
MODEL = "claude-sonnet-4-5"
TYPED = "# checked by hand"
"""The line typed near the top of the 5,000-line file, a character a change."""
TYPED_AT = 12
WAIT_SECONDS = 300.0

# --- text that reads like a run ------------------------------------------------------------

VOCABULARY = (
    "the of and to in is that for it with as on be at by this not are but from or have an "
    "which one you all we can test file line value check call result error config parse "
    "return update module function handler request cache state path index step change "
    "before after should would could make sure first then next fix bug failing passes"
)
WORDS = VOCABULARY.split()
NAMES = ("value", "result", "count", "items", "config", "state", "buffer", "offset", "record")
CALLS = ("compute", "parse", "load", "render", "merge", "resolve", "check", "update", "emit")
ALPHANUMERIC = string.ascii_letters + string.digits
EDIT_RESULT = (
    "The file {path} has been updated. Here's the result of running `cat -n` on a snippet of "
    "the edited file:\n"
)
TODO_RESULT = (
    "Todos have been modified successfully. Ensure that you continue to use the todo list to "
    "track your progress. Please proceed with the current tasks if applicable"
)
BASH_COMMANDS = (
    "pytest -q tests/test_{word}.py",
    "git status --short",
    "git diff --stat",
    "ruff check src tests",
    "python -m mypy src",
    "ls -la src/pkg",
    "grep -rn {word} src | head -50",
)


def sentence(rng: random.Random, width: int = 72) -> str:
    words: list[str] = []
    while sum(len(word) + 1 for word in words) < width:
        words.append(rng.choice(WORDS))
    return " ".join(words).capitalize() + "."


def prose(rng: random.Random, lines: int) -> str:
    return "\n".join(sentence(rng) for _ in range(lines))


def lognormal(rng: random.Random, median: float, sigma: float, most: int) -> int:
    return max(1, min(most, int(rng.lognormvariate(math.log(median), sigma))))


def numbered(lines: list[str], first: int) -> str:
    """Lines as Claude Code's Read and Edit results show them (`cat -n` with an arrow)."""
    return "\n".join(f"{number:>6}→{line}" for number, line in enumerate(lines, first))


def file_text(lines: list[str]) -> str:
    return "".join(line + "\n" for line in lines)


class CodeWriter:
    """Python-like source lines in function blocks: most lines distinct, some repeated
    (blank lines, `return None`), as in real code."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.serial = 0

    def lines(self, count: int) -> list[str]:
        found: list[str] = []
        while len(found) < count:
            found += self._block()
        return found[:count]

    def _block(self) -> list[str]:
        rng = self.rng
        self.serial += 1
        n = self.serial
        name = rng.choice(NAMES)
        block = [
            f"def {rng.choice(CALLS)}_{name}_{n}({name}, options=None):",
            f'    """{sentence(rng, 50)}"""',
        ]
        for index in range(rng.randint(2, 12)):
            roll = rng.random()
            if roll < 0.12:
                block += [f"    if {name} is None:", "        return None"]
            elif roll < 0.18:
                block.append("")
            elif roll < 0.26:
                block.append(f"    # {sentence(rng, 40)}")
            else:
                call = rng.choice(CALLS)
                block.append(f"    {name}_{n}_{index} = {call}({name}, {n * 7 + index})")
        block += [f"    return {name}", "", ""]
        return block


# --- the run -------------------------------------------------------------------------------


@dataclass
class Tracked:
    """A source file as the run left it so far, and who wrote each line: the position in the
    run's events of the file_change that wrote it, or None for a line of the base."""

    path: str
    lines: list[str]
    owners: list[int | None]


class Full(Exception):
    """The run has all its events."""


_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def apply_diff(file: Tracked, diff: str, owner: int) -> None:
    """Apply an anchored unified diff to the file; the lines it adds are `owner`'s."""
    old, old_owners = file.lines, file.owners
    lines: list[str] = []
    owners: list[int | None] = []
    position = 0
    body = diff.split("\n")
    index = 0
    while index < len(body):
        header = _HUNK.match(body[index])
        index += 1
        if header is None:
            continue
        old_count = 1 if header[2] is None else int(header[2])
        new_count = 1 if header[4] is None else int(header[4])
        start = int(header[1]) - 1 if old_count else int(header[1])
        lines += old[position:start]
        owners += old_owners[position:start]
        position = start
        while old_count or new_count:
            mark, text = body[index][:1], body[index][1:]
            index += 1
            if mark == " ":
                if old[position] != text:
                    raise AssertionError(f"{file.path}: context does not match at {position}")
                lines.append(text)
                owners.append(old_owners[position])
                position, old_count, new_count = position + 1, old_count - 1, new_count - 1
            elif mark == "-":
                position, old_count = position + 1, old_count - 1
            elif mark == "+":
                lines.append(text)
                owners.append(owner)
                new_count -= 1
    file.lines = lines + old[position:]
    file.owners = owners + old_owners[position:]


class Run:
    """A Claude Code-shaped run over the files, `limit` events long."""

    def __init__(self, limit: int, rng: random.Random, files: dict[str, Tracked]) -> None:
        self.limit = limit
        self.rng = rng
        self.files = files
        self.others = [path for path in files if path != BIG_FILE]
        self.code = CodeWriter(random.Random(rng.random()))
        self.code.serial = 100_000  # distinct from the base's blocks
        self.events: list[EventBase] = []
        self.sessions: list[str] = []
        self.session = ""
        self.record = 0
        self.created = 0
        self.clock = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)

    def make(self) -> list[EventBase]:
        try:
            while True:
                self._session()
        except Full:
            pass
        for step, event in enumerate(self.events, 1):
            event.step = step
        return self.events

    def add(self, kind: type[EventBase], **fields: Any) -> EventBase:
        if len(self.events) >= self.limit:
            raise Full
        self.record += 1
        self.clock += timedelta(seconds=self.rng.uniform(0.3, 9.0))
        stamp = self.clock.isoformat(timespec="milliseconds").replace("+00:00", "Z")
        fields.setdefault("session", self.session)
        source = SourceRef(file=f"{self.session}.jsonl", line=self.record)
        event = kind(source=source, time=stamp, **fields)
        self.events.append(event)
        return event

    def _session(self) -> None:
        rng = self.rng
        self.session = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        self.sessions.append(self.session)
        self.record = 0
        self.add(
            SessionStart,
            harness="claude-code",
            harness_version="2.1.12",
            model=MODEL,
            cwd=".",
            branch="main",
        )
        for _ in range(rng.randint(20, 60)):
            self.add(UserMessage, text=prose(rng, rng.randint(1, 6)))
            for _ in range(rng.randint(3, 20)):
                self._request(None)
            self.add(AgentMessage, text=prose(rng, rng.randint(2, 15)), model=MODEL)
        self.add(SessionEnd)

    def _request(self, agent: str | None) -> None:
        rng = self.rng
        self.add(Reasoning, agent=agent, text=prose(rng, rng.randint(1, 8)))
        self.add(
            Usage,
            agent=agent,
            model=MODEL,
            input_tokens=rng.randint(1, 60),
            output_tokens=rng.randint(20, 1500),
            cache_read_tokens=rng.randint(10_000, 150_000),
            cache_write_tokens=rng.randint(0, 4000),
        )
        if rng.random() < 0.3:
            self.add(AgentMessage, agent=agent, text=prose(rng, rng.randint(1, 10)), model=MODEL)
        roll = rng.random()
        if roll < 0.21:
            self._edit(agent)
        elif roll < 0.22:
            self._write(agent)
        elif roll < 0.49:
            self._bash(agent)
        elif roll < 0.80:
            self._read(agent)
        elif roll < 0.87:
            self._grep(agent)
        elif roll < 0.91:
            self._glob(agent)
        elif roll < 0.96 or agent is not None:
            self._todo(agent)
        else:
            self._task()

    def _call_id(self) -> str:
        return "toolu_01" + "".join(self.rng.choice(ALPHANUMERIC) for _ in range(22))

    def _call(
        self, agent: str | None, name: str, arguments: dict[str, Any], output: str, ok: bool = True
    ) -> str:
        call_id = self._call_id()
        self.add(ToolCall, agent=agent, call_id=call_id, name=name, input=arguments)
        self.add(ToolResult, agent=agent, call_id=call_id, ok=ok, output=output)
        return call_id

    def _pick(self, big_share: float) -> Tracked:
        if self.rng.random() < big_share:
            return self.files[BIG_FILE]
        return self.files[self.rng.choice(self.others)]

    def _edit(self, agent: str | None) -> None:
        rng = self.rng
        file = self._pick(0.12)
        count = len(file.lines)
        removed = rng.randint(1, 6) if rng.random() < 0.85 else rng.randint(8, 30)
        removed = min(removed, count)
        if file.path == BIG_FILE:  # keep it at BIG_LINES, give or take a few
            drift = count - BIG_LINES
            change = rng.randint(-min(drift, 4), 0) if drift > 0 else rng.randint(0, min(-drift, 4))
            added = max(1, removed + change if drift else removed + rng.randint(-1, 1))
        else:
            added = max(1, removed + rng.randint(-2, 4))
        start = rng.randrange(0, count - removed + 1)
        new = self.code.lines(added)
        first, last = max(0, start - 3), min(count, start + removed + 3)
        before = file.lines[first:last]
        after = file.lines[first:start] + new + file.lines[start + removed : last]
        diff = fragment_diff(file.path, file_text(before), file_text(after), first_line=first + 1)
        arguments = {
            "file_path": file.path,
            "old_string": "\n".join(file.lines[start : start + removed]),
            "new_string": "\n".join(new),
        }
        shown = file.lines[max(0, start - 5) : start] + new
        output = EDIT_RESULT.format(path=file.path) + numbered(shown, max(0, start - 5) + 1)
        call_id = self._call(agent, "Edit", arguments, output)
        self.add(
            FileChange,
            agent=agent,
            path=file.path,
            operation="modify",
            diff=diff.text,
            anchored=True,
            call_id=call_id,
            added=diff.added,
            removed=diff.removed,
        )
        apply_diff(file, diff.text, len(self.events) - 1)
        if file.lines[first : first + len(after)] != after:
            raise AssertionError(f"{file.path}: the diff does not make the edit")

    def _write(self, agent: str | None) -> None:
        self.created += 1
        path = f"src/pkg/feature_{self.created}.py"
        lines = self.code.lines(self.rng.randint(20, 200))
        content = file_text(lines)
        call_id = self._call(
            agent,
            "Write",
            {"file_path": path, "content": content},
            f"File created successfully at: {path}",
        )
        diff = file_diff(path, None, content)
        self.add(
            FileChange,
            agent=agent,
            path=path,
            operation="create",
            diff=diff.text,
            anchored=True,
            content=content,
            call_id=call_id,
            added=diff.added,
        )
        self.files[path] = Tracked(path, lines, [len(self.events) - 1] * len(lines))
        self.others.append(path)

    def _read(self, agent: str | None) -> None:
        rng = self.rng
        file = self._pick(0.15)
        limit = lognormal(rng, 60, 1.0, 2000)
        arguments: dict[str, Any] = {"file_path": file.path}
        offset = 0
        if limit < len(file.lines):
            offset = rng.randrange(0, len(file.lines) - limit)
            arguments.update(offset=offset + 1, limit=limit)
        output = numbered(file.lines[offset : offset + limit], offset + 1)
        self._call(agent, "Read", arguments, output)

    def _bash(self, agent: str | None) -> None:
        rng = self.rng
        command = rng.choice(BASH_COMMANDS).format(word=rng.choice(NAMES))
        output = "\n".join(sentence(rng, 60) for _ in range(lognormal(rng, 8, 1.3, 400)))
        arguments = {"command": command, "description": sentence(rng, 30)}
        self._call(agent, "Bash", arguments, output, ok=rng.random() > 0.15)

    def _grep(self, agent: str | None) -> None:
        rng = self.rng
        pattern = rng.choice(NAMES)
        hits = []
        for _ in range(lognormal(rng, 10, 1.0, 200)):
            file = self._pick(0.15)
            number = rng.randrange(len(file.lines))
            hits.append(f"{file.path}:{number + 1}:{file.lines[number]}")
        arguments = {"pattern": pattern, "path": "src", "output_mode": "content", "-n": True}
        self._call(agent, "Grep", arguments, "\n".join(hits))

    def _glob(self, agent: str | None) -> None:
        paths = sorted(self.rng.sample(list(self.files), min(len(self.files), 40)))
        self._call(agent, "Glob", {"pattern": "src/**/*.py"}, "\n".join(paths))

    def _todo(self, agent: str | None) -> None:
        rng = self.rng
        todos = [
            {
                "content": sentence(rng, 40),
                "status": rng.choice(("pending", "in_progress", "completed")),
                "activeForm": sentence(rng, 30),
            }
            for _ in range(rng.randint(3, 8))
        ]
        self._call(agent, "TodoWrite", {"todos": todos}, TODO_RESULT)

    def _task(self) -> None:
        rng = self.rng
        call_id = self._call_id()
        prompt = prose(rng, 5)
        description = sentence(rng, 30)
        arguments = {
            "description": description,
            "prompt": prompt,
            "subagent_type": "general-purpose",
        }
        self.add(ToolCall, call_id=call_id, name="Task", input=arguments)
        agent = f"{rng.getrandbits(32):08x}"
        self.add(Subagent, agent_id=agent, call_id=call_id, description=description)
        self.add(UserMessage, agent=agent, text=prompt)
        for _ in range(rng.randint(2, 10)):
            self._request(agent)
        summary = prose(rng, 6)
        self.add(AgentMessage, agent=agent, text=summary, model=MODEL)
        self.add(ToolResult, call_id=call_id, output=summary)


# --- the repositories ----------------------------------------------------------------------


@dataclass
class World:
    """A repository with a working trajectory, and what the bench needs to know of it."""

    root: Path
    events_path: Path
    steps: int
    size: int
    big_path: Path
    big_lines: int
    attributed: int
    """Lines of the 5,000-line file the run wrote, as tracked while its diffs were applied."""
    big_changes: int
    seconds: float
    kinds: Counter[str] = field(default_factory=Counter)


def commit(repository: pygit2.Repository, message: str, when: datetime) -> str:
    repository.index.add_all()
    repository.index.write()
    tree = repository.index.write_tree()
    signature = pygit2.Signature("Bench", "bench@example.com", int(when.timestamp()), 0)
    parents = [] if repository.head_is_unborn else [repository.head.target]
    return str(repository.create_commit("HEAD", signature, signature, message, tree, parents))


def write_files(root: Path, files: dict[str, Tracked]) -> None:
    for file in files.values():
        path = root / file.path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(file_text(file.lines))


def make_world(root: Path, events: int, seed: int) -> World:
    """A repository whose files a run of `events` events changed, the run as its working
    trajectory."""
    started = time.perf_counter()
    rng = random.Random(seed)
    code = CodeWriter(random.Random(seed + 1))
    files = {BIG_FILE: Tracked(BIG_FILE, code.lines(BIG_LINES), [None] * BIG_LINES)}
    for number in range(1, 31):
        lines = code.lines(rng.randint(80, 1200))
        path = f"src/pkg/module_{number}.py"
        files[path] = Tracked(path, lines, [None] * len(lines))
    repository = pygit2.init_repository(str(root), initial_head="main")
    write_files(root, files)
    base = commit(repository, "The base", datetime(2026, 3, 2, 8, 0, tzinfo=UTC))

    run = Run(events, rng, files)
    made = run.make()
    write_files(root, files)
    commit(repository, "The run's work", run.clock + timedelta(minutes=5))

    target = resolve_target(root)
    folder = working_folder(target)
    sources = [
        SourceFile(
            name=f"{session}.jsonl",
            sha256=hashlib.sha256(session.encode()).hexdigest(),
            format="claude-code",
            session=session,
        )
        for session in run.sessions
    ]
    meta = summarise(
        trajectory_id=folder.id,
        target=TargetRef(kind=target.kind, name=target.name, key=target.key),
        base_commit=base,
        events=made,
        redaction=Counter(),
        dropped=Counter(),
        problems=[],
        sources=sources,
    )
    events_text = "".join(event_json(event) + "\n" for event in made)
    folder.write(events_text.encode("utf-8"), meta, render(meta.model_dump(mode="json"), made))
    big = files[BIG_FILE]
    return World(
        root=root,
        events_path=folder.path / "events.jsonl",
        steps=len(made),
        size=len(events_text.encode()),
        big_path=root / BIG_FILE,
        big_lines=len(big.lines),
        attributed=sum(owner is not None for owner in big.owners),
        big_changes=sum(
            1 for event in made if isinstance(event, FileChange) and event.path == BIG_FILE
        ),
        seconds=time.perf_counter() - started,
        kinds=Counter(event.kind for event in made),
    )


def make_plain(root: Path, big: Path) -> Path:
    """A repository holding only the 5,000-line file, and no trajectory."""
    repository = pygit2.init_repository(str(root), initial_head="main")
    path = root / BIG_FILE
    path.parent.mkdir(parents=True)
    shutil.copyfile(big, path)
    commit(repository, "The file", datetime(2026, 3, 2, 8, 0, tzinfo=UTC))
    return path


# --- the client ----------------------------------------------------------------------------


def vscode_capabilities() -> dict[str, Any]:
    """The client capabilities VS Code sends (pytest-lsp keeps them, from VS Code itself)."""
    from lsprotocol.converters import get_converter
    from pytest_lsp import client_capabilities

    capabilities: dict[str, Any] = get_converter().unstructure(
        client_capabilities("visual-studio-code")
    )
    return capabilities


def uri_of(path: Path) -> str:
    return from_fs_path(str(path)) or ""


@dataclass
class Answer:
    result: Any
    sent: float
    received: float
    size: int

    @property
    def ms(self) -> float:
        return (self.received - self.sent) * 1000


class Client(PipeServer):
    """The server over pipes; each message is stamped when its last byte is read, before the
    client parses it (what is timed is the server and the pipe, not this client's JSON)."""

    def __init__(self, command: list[str] | None = None) -> None:
        self.next_id = 1
        self.version: dict[str, int] = {}
        self.refreshes: list[float] = []
        """When the server asked the client to ask for lenses again (workspace/codeLens/refresh:
        after an index or a provenance load is ready)."""
        super().__init__(command)
        self.pid = self.process.pid

    def received(self, body: bytes) -> dict[str, Any]:
        received = time.perf_counter()
        message = super().received(body)
        message["_received"], message["_bytes"] = received, len(body)
        if message.get("method") == "workspace/codeLens/refresh":
            self.refreshes.append(received)
        return message

    def call(self, method: str, params: Any, timeout: float = WAIT_SECONDS) -> Answer:
        request_id = self.next_id
        self.next_id += 1
        body = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        sent = time.perf_counter()
        self.send_bytes(body.encode())
        answer = self.answer(request_id, timeout)
        if "error" in answer:
            raise SystemExit(f"{method} failed: {answer['error']}")
        return Answer(answer.get("result"), sent, answer["_received"], answer["_bytes"])

    def start(self, folders: list[Path]) -> Client:
        self.call(
            "initialize",
            {
                "processId": os.getpid(),
                "clientInfo": {"name": "Visual Studio Code", "version": "1.96.0"},
                "locale": "en",
                "rootPath": str(folders[0]),
                "rootUri": uri_of(folders[0]),
                "capabilities": vscode_capabilities(),
                "trace": "off",
                "workspaceFolders": [{"uri": uri_of(f), "name": f.name} for f in folders],
            },
        )
        self.send({"method": "initialized", "params": {}})
        return self

    def open_file(self, path: Path, language: str) -> tuple[str, float]:
        """didOpen with the file's text; the time its last byte was sent."""
        uri = uri_of(path)
        item = {"uri": uri, "languageId": language, "version": 1, "text": path.read_text()}
        message = {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {}}
        message["params"] = {"textDocument": item}
        body = json.dumps(message).encode()  # encoded before the clock starts
        self.version[uri] = 1
        self.send_bytes(body)
        return uri, time.perf_counter()

    def request(self, method: str, params: Any) -> int:
        """Send a request without waiting for its answer; its id."""
        request_id = self.next_id
        self.next_id += 1
        body = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        self.send_bytes(body.encode())
        return request_id

    def lenses(self, uri: str) -> Answer:
        return self.call("textDocument/codeLens", {"textDocument": {"uri": uri}})

    def symbols(self, uri: str) -> Answer:
        return self.call("textDocument/documentSymbol", {"textDocument": {"uri": uri}})

    def hover(self, uri: str, line: int) -> Answer:
        position = {"line": line, "character": 4}
        return self.call("textDocument/hover", {"textDocument": {"uri": uri}, "position": position})

    def type_at(self, uri: str, line: int, character: int, text: str) -> None:
        self.version[uri] += 1
        where = {"line": line, "character": character}
        change = {"range": {"start": where, "end": where}, "rangeLength": 0, "text": text}
        params = {
            "textDocument": {"uri": uri, "version": self.version[uri]},
            "contentChanges": [change],
        }
        self.send({"method": "textDocument/didChange", "params": params})

    def stop(self) -> None:
        """Shut the server down as an editor does (a profiled server then writes its stats)."""
        self.call("shutdown", None)
        self.send({"method": "exit"})
        self.process.wait(timeout=120)

    def memory(self) -> dict[str, float]:
        """VmRSS and VmHWM in MB."""
        found = {}
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            name, _, value = line.partition(":")
            if name in ("VmRSS", "VmHWM"):
                found[name] = int(value.split()[0]) / 1024
        return found

    def cpu(self) -> float:
        """The server's CPU seconds so far (all its threads)."""
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# --- the measurements ----------------------------------------------------------------------


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


@dataclass
class Opened:
    """events.jsonl opened: seconds from didOpen to every lens and to the outline, and the
    answer times and sizes once the server has it all."""

    lenses_s: float | None = None
    outline_s: float | None = None
    indexed_s: float | None = None
    """When the server asked for lenses again (its index ready)."""
    polls: int = 0
    lens_ms: list[float] = field(default_factory=list)
    lens_bytes: int = 0
    symbols_ms: list[float] = field(default_factory=list)
    symbols_bytes: int = 0
    sessions: int = 0
    cpu_s: float = 0.0


def open_events(client: Client, world: World) -> Opened:
    """Open events.jsonl as an editor does: ask for its outline and its lenses at once, ask
    for the lenses again whenever the server says they changed (workspace/codeLens/refresh),
    until the outline is there and the lenses are whole. The outline is asked once: LSP has
    no way to make an editor ask for it again, so the server answers it when indexed."""
    cpu = client.cpu()
    uri, sent = client.open_file(world.events_path, "jsonl")
    opened = Opened()
    document = {"textDocument": {"uri": uri}}
    outline = client.request("textDocument/documentSymbol", document)
    lens = client.request("textDocument/codeLens", document)
    asked_again = False
    opened.polls = 1
    while opened.lenses_s is None or opened.outline_s is None:
        if time.perf_counter() - sent > WAIT_SECONDS:
            break
        try:
            message = client.inbox.get(timeout=0.5)
        except queue.Empty:
            continue
        if message.get("method") == "workspace/codeLens/refresh":
            client.send({"id": message["id"], "result": None})
            asked_again = True
        elif "method" in message and "id" in message:
            client.send({"id": message["id"], "result": None})
        elif message.get("id") == outline:
            if message.get("result"):
                opened.outline_s = message["_received"] - sent
                opened.sessions = len(message["result"])
        elif message.get("id") == lens:
            if len(message.get("result") or []) >= world.steps:
                opened.lenses_s = message["_received"] - sent
            lens = None
        if lens is None and asked_again and opened.lenses_s is None:
            lens = client.request("textDocument/codeLens", document)
            asked_again = False
            opened.polls += 1
    opened.cpu_s = client.cpu() - cpu
    opened.indexed_s = next((at - sent for at in client.refreshes if at > sent), None)
    for _ in range(3):
        answer = client.lenses(uri)
        opened.lens_ms.append(answer.ms)
        opened.lens_bytes = answer.size
        answer = client.symbols(uri)
        opened.symbols_ms.append(answer.ms)
        opened.symbols_bytes = answer.size
    return opened


def hovers(client: Client, uri: str, lines: list[int], expect: str | None) -> list[float]:
    """Milliseconds of a hover on each line; each must hold `expect` (None: be empty)."""
    times = []
    for line in lines:
        answer = client.hover(uri, line)
        value = (answer.result or {}).get("contents", {}).get("value", "")
        if (expect is None and answer.result is not None) or (expect and expect not in value):
            raise SystemExit(f"hover on line {line} of {uri}: {str(answer.result)[:300]}")
        times.append(answer.ms)
    return times


_WROTE = re.compile(r"^agent: step \d+ of .+ wrote (\d+) lines?$")


@dataclass
class Provenanced:
    """The 5,000-line file opened: seconds to its provenance lenses, the lines they cover,
    and the hover times."""

    lenses_s: float | None = None
    hunks: int = 0
    lines: list[int] = field(default_factory=list)
    lens_ms: list[float] = field(default_factory=list)
    hover_ms: list[float] = field(default_factory=list)
    typing_ms: list[float] = field(default_factory=list)
    edited_ms: list[float] = field(default_factory=list)
    cpu_s: float = 0.0


def attributed_lines(lenses: list[dict[str, Any]]) -> tuple[int, list[int]]:
    hunks, lines = 0, []
    for lens in lenses:
        found = _WROTE.match(lens.get("command", {}).get("title", ""))
        if found:
            hunks += 1
            first = lens["range"]["start"]["line"]
            lines += range(first, first + int(found.group(1)))
    return hunks, lines


def open_source(client: Client, path: Path, wait: bool) -> tuple[str, Provenanced]:
    """Open the file; with `wait`, until its provenance lenses come."""
    cpu = client.cpu()
    uri, sent = client.open_file(path, "python")
    found = Provenanced()
    while wait and time.perf_counter() - sent < WAIT_SECONDS:
        answer = client.lenses(uri)
        found.hunks, found.lines = attributed_lines(answer.result or [])
        if found.hunks:
            found.lenses_s = answer.received - sent
            break
        time.sleep(0.02)
    found.cpu_s = client.cpu() - cpu
    found.lens_ms = [client.lenses(uri).ms for _ in range(3)]
    return uri, found


def typing(client: Client, uri: str, lines: list[int], expect: str | None) -> list[float]:
    """Type TYPED as a new line at TYPED_AT, a character a didChange, each followed by a hover
    on one of `lines` (moved down by the new line): milliseconds from the didChange to the
    hover's answer."""
    times = []
    for number, text in enumerate(["\n", *TYPED]):
        character = 0 if number == 0 else number - 1
        sent = time.perf_counter()
        client.type_at(uri, TYPED_AT, character, text)
        line = lines[number % len(lines)]
        answer = client.hover(uri, line + 1 if line >= TYPED_AT else line)
        value = (answer.result or {}).get("contents", {}).get("value", "")
        if (expect is None and answer.result is not None) or (expect and expect not in value):
            raise SystemExit(f"hover after typing, line {line}: {str(answer.result)[:300]}")
        times.append((answer.received - sent) * 1000)
    return times


@dataclass
class ServerFigures:
    events: Opened
    event_hover_ms: list[float]
    provenance: Provenanced
    memory: dict[str, float]
    cpu_s: float
    plain: Provenanced | None = None
    plain_hover_ms: list[float] = field(default_factory=list)


def measure(
    world: World, plain: Path | None, count: int, seed: int, profile: Path | None = None
) -> ServerFigures:
    """One server: the trajectory's events.jsonl, then its 5,000-line file; with `plain`,
    the same file in a repository with no trajectory (the baselines). With `profile`, the
    server runs under cProfile (its event loop's thread) and writes its stats there."""
    rng = random.Random(seed)
    folders = [world.root] + ([plain.parents[2]] if plain else [])
    command = None
    if profile is not None:
        command = [sys.executable, "-m", "cProfile", "-o", str(profile), "-m", "stet_lsp.server"]
    client = Client(command).start(folders)
    try:
        opened = open_events(client, world)
        if opened.lenses_s is None or opened.outline_s is None:
            raise SystemExit(f"no lenses or outline for {world.events_path} in {WAIT_SECONDS}s")
        events_uri = uri_of(world.events_path)
        steps = [rng.randrange(world.steps) for _ in range(count)]
        event_hover_ms = hovers(client, events_uri, steps, "**Step ")

        uri, found = open_source(client, world.big_path, wait=world.attributed > 0)
        if not found.lines:
            raise SystemExit(
                f"no provenance lenses on {world.big_path} ({world.attributed} lines written "
                f"by the run) in {WAIT_SECONDS:.0f} s"
            )
        lines = [rng.choice(found.lines) for _ in range(count)]
        found.hover_ms = hovers(client, uri, lines, "**Written by step")
        found.typing_ms = typing(client, uri, lines, "**Written by step")
        moved = [line + 1 if line >= TYPED_AT else line for line in lines]
        found.edited_ms = hovers(client, uri, moved, "**Written by step")

        figures = ServerFigures(opened, event_hover_ms, found, {}, 0.0)
        if plain is not None:
            plain_uri, figures.plain = open_source(client, plain, wait=False)
            figures.plain.hover_ms = hovers(client, plain_uri, lines, None)
            figures.plain.typing_ms = typing(client, plain_uri, lines, None)
            figures.plain.edited_ms = hovers(client, plain_uri, moved, None)
            figures.plain_hover_ms = figures.plain.hover_ms
        time.sleep(1.0)  # let background work (a provenance check, a refresh) settle
        figures.memory = client.memory()
        figures.cpu_s = client.cpu()
        if profile is not None:
            client.stop()
        return figures
    finally:
        if client.process.poll() is None:
            client.close()


# --- the report ----------------------------------------------------------------------------


def verdict(met: bool) -> str:
    return "met" if met else "MISSED"


def p50_p99(times: list[float]) -> str:
    return f"{percentile(times, 0.5):6.2f} / {percentile(times, 0.99):6.2f}"


def report(big: World, small: World, large: ServerFigures, base: ServerFigures) -> None:
    plain = large.plain
    assert plain is not None
    found = large.provenance
    share = big.attributed / big.big_lines
    print(
        f"\n{big.steps:,}-event trajectory: events.jsonl {big.size / 1e6:.1f} MB "
        f"(made in {big.seconds:.0f} s); {BIG_FILE}: {big.big_lines:,} lines, "
        f"{big.big_changes} anchored changes, {big.attributed:,} lines written by the run "
        f"({share:.0%}), {len(set(found.lines)):,} shown attributed in {found.hunks:,} lenses"
    )
    print(
        f"baseline trajectory: {small.steps:,} events, {small.size / 1e6:.2f} MB; its "
        f"{BIG_FILE}: {small.attributed} lines written by the run, "
        f"{len(set(base.provenance.lines))} shown attributed"
    )
    events = large.events
    assert events.lenses_s is not None and events.outline_s is not None
    assert base.events.lenses_s is not None and base.events.outline_s is not None
    rows: list[tuple[str, str, str, str, str]] = [
        (
            "open events.jsonl -> every lens (s)",
            f"{events.lenses_s:.2f}",
            f"{base.events.lenses_s:.2f} ({small.steps:,} events)",
            "< 2 s",
            verdict(events.lenses_s < 2),
        ),
        (
            "open events.jsonl -> outline (s)",
            f"{events.outline_s:.2f}",
            f"{base.events.outline_s:.2f} ({small.steps:,} events)",
            "< 2 s",
            verdict(events.outline_s < 2),
        ),
        (
            "  index ready (codeLens/refresh) (s)",
            f"{events.indexed_s:.2f}" if events.indexed_s is not None else "-",
            f"{base.events.indexed_s:.2f} ({small.steps:,} events)"
            if base.events.indexed_s is not None
            else "-",
            "",
            "",
        ),
        (
            "  codeLens answer, indexed (ms)",
            f"{statistics.median(events.lens_ms):.0f}",
            f"{statistics.median(plain.lens_ms):.1f} (plain file)",
            "",
            f"{events.lens_bytes / 1e6:.1f} MB",
        ),
        (
            "  documentSymbol answer, indexed (ms)",
            f"{statistics.median(events.symbols_ms):.0f}",
            f"{statistics.median(base.events.symbols_ms):.1f} ({small.steps:,} ev.)",
            "",
            f"{events.symbols_bytes / 1e6:.1f} MB",
        ),
        (
            "hover on a step, p50 / p99 (ms)",
            p50_p99(large.event_hover_ms),
            p50_p99(large.plain_hover_ms) + " (plain)",
            "p99 < 20",
            verdict(percentile(large.event_hover_ms, 0.99) < 20),
        ),
        (
            "open 5,000-line file -> provenance lens (s)",
            f"{found.lenses_s:.2f}",
            f"{base.provenance.lenses_s:.2f} ({small.steps:,} ev.)",
            "",
            "",
        ),
        (
            "provenance hover, p50 / p99 (ms)",
            p50_p99(found.hover_ms),
            p50_p99(plain.hover_ms) + " (no traj.)",
            "p99 < 20",
            verdict(percentile(found.hover_ms, 0.99) < 20),
        ),
        (
            "keystroke + hover, p50 / p99 (ms)",
            p50_p99(found.typing_ms),
            p50_p99(plain.typing_ms) + " (no traj.)",
            "p99 < 20",
            verdict(percentile(found.typing_ms, 0.99) < 20),
        ),
        (
            "hover on the edited text, p50 / p99 (ms)",
            p50_p99(found.edited_ms),
            p50_p99(plain.edited_ms) + " (no traj.)",
            "p99 < 20",
            verdict(percentile(found.edited_ms, 0.99) < 20),
        ),
        (
            "server memory after, VmRSS (MB)",
            f"{large.memory['VmRSS']:.0f}",
            f"{base.memory['VmRSS']:.0f} ({small.steps:,} events)",
            "< 500",
            verdict(large.memory["VmRSS"] < 500),
        ),
        (
            "server memory peak, VmHWM (MB)",
            f"{large.memory['VmHWM']:.0f}",
            f"{base.memory['VmHWM']:.0f} ({small.steps:,} events)",
            "< 500",
            verdict(large.memory["VmHWM"] < 500),
        ),
    ]
    print(f"\n  {'':<44} {'figure':>15}   {'baseline':<30} {'target':<9} verdict")
    for name, figure, baseline, target, met in rows:
        print(f"  {name:<44} {figure:>15}   {baseline:<30} {target:<9} {met}")
    print(
        f"\n  server CPU: {events.cpu_s:.1f} s from didOpen of events.jsonl to its lenses and "
        f"outline ({events.polls} lens requests), {found.cpu_s:.1f} s from opening the "
        f"5,000-line file to its provenance lenses; {large.cpu_s:.0f} s in all "
        f"(baseline server {base.cpu_s:.0f} s)"
    )
    print(
        "  as an editor asks: the outline and the lenses at once on opening, the lenses again "
        "after each workspace/codeLens/refresh"
    )
    print(f"  {len(found.typing_ms)} keystrokes typed at line {TYPED_AT + 1}, each then a hover")


def print_profile(path: Path) -> None:
    import pstats

    print(f"\n  profile of the server's event loop thread ({path}), by own time:")
    pstats.Stats(str(path)).sort_stats("tottime").print_stats(18)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--hovers", type=int, default=300)
    parser.add_argument("--quick", action="store_true", help="20,000 events, 100 hovers")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--keep", type=Path, help="make the repositories here and keep them")
    parser.add_argument(
        "--profile",
        type=Path,
        metavar="FILE",
        help="run the big run's server under cProfile (its event loop's thread; the worker "
        "threads that index and load are not seen) and write its stats to FILE; the figures "
        "are then the profiled server's",
    )
    args = parser.parse_args()
    if args.quick:
        args.events, args.hovers = 20_000, 100
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
        folder = str(args.keep)
    else:
        folder = tempfile.mkdtemp(prefix="stet-bench-")
    try:
        # Servers start from compiled bytecode, as an installed package does.
        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
        os.environ["PYTHONPYCACHEPREFIX"] = str(Path(folder) / "bytecode")
        print(f"making a {args.events:,}-event run and a {SMALL_EVENTS:,}-event one ...")
        big = make_world(Path(folder) / "big", args.events, args.seed)
        small = make_world(Path(folder) / "small", SMALL_EVENTS, args.seed)
        plain = make_plain(Path(folder) / "plain", big.big_path)
        print(f"made in {big.seconds:.0f} s and {small.seconds:.0f} s; measuring ...")
        # This process's own cyclic collector is paused while it times the servers: its full
        # collections, walking the runs it made (50-65 ms each), landed inside a request's
        # time now and then, and read as the server's.
        gc.collect()
        gc.disable()
        try:
            base = measure(small, None, args.hovers, args.seed)
            large = measure(big, plain, args.hovers, args.seed, args.profile)
        finally:
            gc.enable()
        report(big, small, large, base)
        print(
            f"\n  machine: {os.cpu_count()} cores, shared (other work may run beside this); "
            f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())} at the end"
        )
        if args.profile:
            print_profile(args.profile)
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
