"""aider's chat history: `.aider.chat.history.md`, Markdown appended to by every aider run.

What aider writes, line by line:

* `# aider chat started at 2025-07-15 11:38:37`: a run starts (local time, no zone). Each run
  is a session of its own inside the one file: a session_start/session_end pair whose session
  id is the file's id and the run's 1-based index (`<file id>-3`).
* `> text  `: aider's own output, each message ending in two spaces (a Markdown line break).
  A message of several lines gets `> ` on its first line only, the rest follow bare up to the
  line that ends in text and exactly two spaces and is followed by more output, a blank line
  or the end of the file (the token report with cache counts, the report of edits that failed
  to apply, the output of `/test` and `/run`, whose `>       assert x` lines and diff lines
  ending in two spaces are its own, and, right after the command, its `> ` lines too; later
  versions write each line as a message). Aider writes nothing inside an answer: a `> ` line
  there is a Markdown quote unless it ends in the two spaces itself, or the first line after
  it that does is followed by more output or a blank line and no blank line comes between (a
  Markdown text whose line breaks are two spaces goes on bare). The start of a run announces
  `Aider v0.85.1`, `Main model: gpt-4o with diff edit format` (or `Model: ...`; older versions
  both models on one line, `Models: <main> with diff edit format, weak model <weak>`, and
  those of 2023 the model alone, `Model: gpt-4`), `Weak model: ...`, `Git repo: .git with 16
  files`; later come `Tokens: 2.3k sent, 150 received. Cost: $0.01 message, $0.05 session.`
  after each model request, `Applied edit to <path>`, `Commit <sha> <message>`, `Running
  <command>` (a shell command the model suggested), questions with their answers (`Create new
  file? (Y)es/(N)o [Yes]: y`; in mid-2024 `Create new file? [Y/n] y`; older versions `Allow
  creation of new file <path>? y`), warnings and errors.
* `#### text  `: what the user typed; a multi-line input is consecutive `#### ` lines (`<blank>`
  for an empty input). Slash commands (`/add file`, `/model x`) are user messages too. A
  question answered by an earlier "all"/"skip" is written this way as well, and is kept as
  aider output. So is what aider sends the model as the user's (a raw event saying what it
  is): the message of `/ask x`, `/code x`, `/architect x` and `/context x` (`x` again, right
  after the command) and of `/ok` (`Ok, please go ahead and make those changes.`), the question
  `/help x` sends with aider's documentation (`# Question: x` and `# Relevant docs:`, wherever
  it comes), the lint errors it asks the model to fix (`# Fix any errors below, if
  possible.`), and an architect's plan given to the editor: the answer before it (in architect
  mode, or after `/architect x`), or that answer without the reasoning aider removes first
  (`<think>` … `</think>`, and all before a `</think>` without its opener).
* anything else: the model's answer (Markdown), until the next `> `/`#### ` line. It may start
  with the model's reasoning in `<thinking-content-...>`/`<think>` tags (a reasoning event),
  or with reasoning that only a `</think>` ends (models served with the opener in their
  prompt): all before that closer is the reasoning when it is the answer's first, no
  `<think>` comes before it, it starts a line outside a fence, a Markdown quote and a
  SEARCH/REPLACE block, and the model is known to reason so or more answers of its run do.

How they map: user input -> user_message; an answer -> agent_message (with the model the run
announced last); its *SEARCH/REPLACE* blocks (a file path line, a fence, `<<<<<<< SEARCH`,
`=======`, `>>>>>>> REPLACE`; before them `<<<<<<< ORIGINAL` … `>>>>>>> UPDATED`, then
`<<<<<<< HEAD` … `>>>>>>> updated`, the path on the line above the opener or the fence) ->
file_change events, only for the files aider reports `Applied edit to <path>` for (or the
blocks a failure report says were applied), as unanchored fragment diffs, the path as the
repository names it (`./notes.md` is `notes.md`, and the `docs\\notes.md` of aider on Windows
`docs/notes.md`); an empty SEARCH for a file aider asked to create -> a created file with its
whole content. With the `udiff` edit format each hunk of a unified diff in a `diff` fence
(`--- `/`+++ ` headers, `@@ ... @@` lines without line numbers) is such a block: its ` ` and
`-` lines the SEARCH text, its ` ` and `+` lines the REPLACE. With the `whole` edit format a
file listing (path line and fenced content) is the new content of a file aider applied. A fence
is triple backticks, or the `<source>` … `</source>` (and `<code>`, `<pre>`, `<codeblock>`,
`<sourcecode>`) aider writes code in when a file in the chat holds triple backticks. `Tokens:`
-> usage (one a request, `2.3k` read as 2300; the `message` cost is the request's, aider
starting it again after each report); `Commit` -> commit; `Running` -> a `shell` tool call
(aider does not record the output); `^C KeyboardInterrupt` -> an interrupting error; `The LLM
did not conform to the edit format.` and `Exception while updating files:` with the report
after them (the exception's text, each of its lines a message, up to aider's next own output:
an interruption, a failed commit, the warning that the chat is too long, the reflections'
limit, a question) -> error; a request the model's API failed (`litellm.RateLimitError: …`,
`litellm.Timeout: …`; `Unexpected error: …` in versions of mid-2024, later the exception's
traceback, its first frame `in send_message`, then its text again), or whose answer the
model's token limit cut off (`Model gpt-4o has hit a token limit!`) -> error, with what aider
prints after it up to a question or, after a traceback, the exception's text (the error's
description, a traceback, the token counts, links, `Retrying in 0.2 seconds...`); a text of
several lines comes again whole (or in part, without the notes a traceback adds: the report
ends where it stops), and a line of it that reads as an error of its own (litellm's text) is
still the report's. All other output (announcements, questions, warnings, model switches) is
kept in order as raw events, consecutive lines together; announcements also fill in the
session_start (version, model) and a later `Model:` line (after `/model`, `/chat-mode`,
`/architect`) sets the model of the answers and usage after it. Files whose trailing spaces
were stripped by an editor lose the message boundaries: then every `> `/`#### ` line is taken
as aider output or user input.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from stet_lsp.core.errors import StetError
from stet_lsp.trajectory.events import (
    AgentMessage,
    Commit,
    Error,
    EventBase,
    FileChange,
    RawEvent,
    Reasoning,
    SessionEnd,
    SessionStart,
    SourceRef,
    ToolCall,
    Usage,
    UserMessage,
)
from stet_lsp.trajectory.importers import diffs
from stet_lsp.trajectory.importers.base import Importer, ParsedSession, new_event
from stet_lsp.trajectory.importers.edits import change_fields
from stet_lsp.trajectory.importers.fields import cost_field, count_field
from stet_lsp.trajectory.importers.files import not_utf8, open_source, read_text

Made = TypeVar("Made", bound=EventBase)

RUN_HEADER = "# aider chat started at"
_HEAD = re.compile(r"<{5,9} SEARCH>?\s*$")
_DIVIDER = re.compile(r"={5,9}\s*$")
_UPDATED = re.compile(r">{5,9} REPLACE\s*$")
# The edit blocks of aider before SEARCH/REPLACE, opener -> closer: `ORIGINAL` … `UPDATED`
# (aider of 2023), then `HEAD` … `updated`. A block ends only with its own closer: a merge
# conflict an answer quotes (`<<<<<<< HEAD` … `>>>>>>> main`) is no edit.
_OLDER_BLOCKS = {"<<<<<<< ORIGINAL": ">>>>>>> UPDATED", "<<<<<<< HEAD": ">>>>>>> updated"}
_VERSION = re.compile(r"Aider v(\S+)")
# `Models: <main> with <format> edit format, weak model <weak>` in older versions (0.48),
# `Model: <main> using <format> edit format` in 0.19, the model alone (`Model: gpt-4`) before;
# 0.50 marks a model that can go on past its output limit with `♾️` before the format.
_MODEL = re.compile(
    r"(Main model|Models?|Editor model): (\S+)"
    r"(?: (?:with|using) (?:\u267e\ufe0f? )?(\S+) edit format.*)?$"
)
_TOKENS = re.compile(
    r"Tokens: ([\d.,]+k?) sent(?:, ([\d.,]+k?) cache write)?(?:, ([\d.,]+k?) cache hit)?,"
    r" ([\d.,]+k?) received\."
)
_COST = re.compile(r"Cost: \$([\d.]+) (message|request), \$([\d.]+) session\.")
# How older aider (0.48 and the versions of 2023) asked before making a file: its path in
# the question, `Create new file?` only later.
_ALLOW_CREATION = re.compile(r"Allow creation of new file (.+)\? (\S+)")
_COMMIT = re.compile(r"Commit ([0-9a-f]{7,40}) (.*)", re.DOTALL)
_FAILED_BLOCK = re.compile(
    r"^## SearchReplaceNoExactMatch: This SEARCH block failed to exactly match lines in (.+)$",
    re.MULTILINE,
)
_REASONING_TAGS = (("<thinking-content-", "</thinking-content-"), ("<think>", "</think>"))
_THINK_CLOSER = "</think>"
# Models that write their reasoning, then a `</think>` without its opener (served with the
# opener in their prompt): aider itself removes the reasoning so for DeepSeek's R1 (its names,
# `deepseek-r1`, `deepseekr1:8b`, and R1's distillations); the others are R1's kin served so
# (QwQ, Qwen3, `phi-4-reasoning`). Models that return their reasoning apart (`deepseek-reasoner`,
# `…:thinking`, `…-flash-thinking`) write no such closer.
_REASONING_MODEL = re.compile(
    r"(?:deepseek|(?<![a-z0-9]))r1(?![0-9])|qwq|qwen3|phi-4-reasoning", re.IGNORECASE
)
_UPDATE_FAILED = "Exception while updating files:"
_ERROR_STARTS = ("The LLM did not conform to the edit format.", _UPDATE_FAILED)
# What aider prints after the exception's text of a failed edit, which is none of it: the
# commit of the files it did edit failing (`Unable to commit: …`, `Unable to add <path>: …`),
# then, sending the model the exception, the warning that the chat is too long (its question
# ends a report anyway), or the notice that it stops doing so; its own notices and warnings
# (`Added <path> to the chat.`, `Warning: …`, `Warning for <model>: …`) and its documentation's
# links.
_AFTER_UPDATE_FAILED = re.compile(
    r"Unable to (?:add|diff|commit)\b|Failed to generate commit message!"
    r"|Your estimated chat context of |Only \d+ reflections allowed, stopping\."
    r"|Added \S.* to the chat\.$|Warning(?: for \S+)?: |https://aider\.chat/"
)
# A request of the model that failed: the API's error, as litellm names its exceptions, an
# exception aider caught while sending (`Unexpected error: …`, in versions of mid-2024; later
# the traceback, see `_SEND_TRACEBACK`), or an answer the model's token limit cut off (aider
# applies none of it). What aider prints after one (its description, a traceback, token counts,
# links, the retry notice) is the error's report, up to a question (or aider asking again for
# an answer it can read) or a failed edit.
_FAILED_REQUEST = re.compile(
    r"litellm\.(?:\w+Error|Timeout): |Unexpected error: |Model \S+ has hit a token limit!"
    r"|Traceback \(most recent call last\):"
)
# Since late 2024 aider prints an exception it caught while sending as its traceback, each line
# a message, then the exception's text again: a traceback is that only when its first frame is
# the sending (other tracebacks are output: a linter's, a command's).
_TRACEBACK = "Traceback (most recent call last):"
# The exception's name a traceback ends with, its module's before it (`openai.APIError`; a
# class made in a function `app.load.<locals>.BadConfig`), and its text's first line.
_RAISED = re.compile(r"([A-Za-z_][\w.<>]*): (.*)")
# The most lines of an exception's text looked for again after its traceback.
_EXCEPTION_LINES = 200
_SEND_TRACEBACK = re.compile(r'> File ".+", line \d+, in send_message\s*')
_FAILED_REQUEST_ENDS = re.compile(r"\(Y\)es/\(N\)o|Please answer with one of:|SEARCH/REPLACE block")
# The commands that send their text to the model, which aider writes again as input; `/ok`
# sends `_OK_MESSAGE` through `/code`.
_CHAT_COMMANDS = ("ask", "code", "architect", "context", "help", "ok")
# Every command of aider's (0.86), for telling the prefix of one from an ambiguous one.
_COMMANDS = (
    *_CHAT_COMMANDS,
    "add",
    "chat-mode",
    "clear",
    "commit",
    "copy",
    "copy-context",
    "diff",
    "drop",
    "edit",
    "editor",
    "editor-model",
    "exit",
    "git",
    "lint",
    "load",
    "ls",
    "map",
    "map-refresh",
    "model",
    "models",
    "multiline-mode",
    "paste",
    "quit",
    "read-only",
    "reasoning-effort",
    "report",
    "reset",
    "run",
    "save",
    "settings",
    "test",
    "think-tokens",
    "tokens",
    "undo",
    "voice",
    "weak-model",
    "web",
)
_OK_MESSAGE = "Ok, please go ahead and make those changes."
# The closing tags of the reasoning aider removes from an architect's answer before handing it
# to the editor: a model's `think`, aider's own when the API sends the reasoning apart.
_REASONING_CLOSER = re.compile(r"</(think|thinking-content-[0-9a-f]+)>")
# What aider asks the model to fix after linting the files it edited (`/lint`, `--auto-lint`).
_LINT_REPORT = "# Fix any errors below, if possible."
# Messages that end the report an error start is followed by.
_KNOWN_STARTS = ("Tokens: ", "Applied edit to ", "Commit ", "Running ", "Aider v")


class AiderImporter:
    name = "aider"
    label = "aider chat history Markdown"

    def sniff(self, head: str) -> bool:
        text = head.lstrip("\ufeff\r\n")
        if text[:1] in ("{", "["):
            return False
        return text.startswith(RUN_HEADER) or ("\n" + RUN_HEADER) in text

    def parse(self, path: Path) -> ParsedSession:
        text, undecodable = read_text(path)
        if not text.strip():
            raise StetError(f"{path}: empty aider chat history")
        session = ParsedSession(format=self.name, session_id=history_id(path))
        session.sources[path.name] = path
        session.problems += [not_utf8(path.name, *where) for where in undecodable]
        lines = [line.rstrip("\r") for line in text.split("\n")]
        _History(session, path.name, lines).read()
        return session


IMPORTERS: dict[str, Importer] = {AiderImporter.name: AiderImporter()}


def history_id(path: Path) -> str:
    """The history's session id, stable while aider appends to the file: the first 16 hex
    digits of the sha256 of its first line that is not blank (the first run's start, to the
    second)."""
    with open_source(path) as stream:
        while line := stream.readline(_FIRST_LINE_BYTES):
            if line.strip():
                return first_line_id(line)
    return first_line_id(b"")


def first_line_id(line: bytes) -> str:
    """The id of a history whose first line that is not blank is `line`."""
    return hashlib.sha256(line.rstrip(b"\r\n")).hexdigest()[:16]


_FIRST_LINE_BYTES = 64 * 1024


# --- reading the file into blocks ----------------------------------------------------------


@dataclass
class _Block:
    """A run header, an aider message, a user input or an answer; `line` is 1-based."""

    kind: str  # "run", "aider", "user", "answer"
    line: int
    lines: list[str]

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


def _blocks(lines: list[str]) -> Iterator[_Block]:
    """The file's blocks in order. Whether aider kept its two-space line ends decides where a
    message of aider output or an answer ends (see the module docstring)."""
    strict = _keeps_line_breaks(lines)
    count = len(lines)
    index = 0
    answer: _Block | None = None
    while index < count:
        line = lines[index]
        marker = line[:1]
        if marker != "#" and marker != ">":
            # Most lines: answer text (or blank lines between blocks).
            if answer is not None:
                answer.lines.append(line)
            elif line.strip():
                answer = _Block("answer", index + 1, [line])
            index += 1
            continue
        if line.startswith(RUN_HEADER):
            if answer is not None:
                yield answer
                answer = None
            yield _Block("run", index + 1, [line[len(RUN_HEADER) :].strip()])
            index += 1
            continue
        end = _aider_message_end(lines, index, strict, answer is not None)
        if end is not None:
            if answer is not None:
                yield answer
                answer = None
            message = [_unquote(lines[index])] + [
                part.rstrip() for part in lines[index + 1 : end + 1]
            ]
            # Answers and user input follow a blank line: bare lines right after aider output
            # are more of it (a padded multi-line question subject, a bare cost line).
            while end + 1 < count and _continues_output(lines[end + 1]):
                end += 1
                message.append(lines[end].rstrip())
            yield _Block("aider", index + 1, message)
            index = end + 1
            continue
        if line.startswith("####") and (not strict or answer is None or line.endswith("  ")):
            if answer is not None:
                yield answer
                answer = None
            start = index
            user = []
            while index < count and lines[index].startswith("####"):
                user.append(lines[index][5:].rstrip() if len(lines[index]) > 4 else "")
                index += 1
            yield _Block("user", start + 1, user)
            continue
        if answer is None:
            if line.strip():
                answer = _Block("answer", index + 1, [line])
        else:
            answer.lines.append(line)
        index += 1
    if answer is not None:
        yield answer


def _continues_output(line: str) -> bool:
    return bool(line.strip()) and not line.startswith((">", "####", RUN_HEADER))


def _keeps_line_breaks(lines: list[str]) -> bool:
    seen = 0
    for line in lines:
        if line.startswith(("> ", "#### ")):
            if line.endswith("  "):
                return True
            seen += 1
            if seen > 200:
                break
    return False


def _aider_message_end(lines: list[str], index: int, strict: bool, in_answer: bool) -> int | None:
    """The index of the last line of the aider message starting at `index`, or None when that
    line is not aider output (a Markdown quote inside an answer, `>>>>>>> REPLACE`)."""
    line = lines[index]
    if not (line.startswith("> ") or line.rstrip() == ">"):
        return None
    if not strict or line.endswith("  ") or not line[1:].strip():
        return index
    # Right after input or output (not after a blank line, as an answer's quote is) the line
    # is aider's: its `> ` lines are the output's own (`/run cat notes.md` of a Markdown file).
    follows_output = not in_answer and index > 0 and lines[index - 1] != ""
    # The message goes on to the line aider ended it with (its bare lines can hold
    # `>>>>>>> REPLACE` and the like), unless another message or input comes first.
    for ahead in range(index + 1, len(lines)):
        following = lines[ahead]
        if following.startswith(("####", RUN_HEADER)):
            break
        if (
            following.startswith("> ")
            and not follows_output
            and (in_answer or not _quoted_in_output(following))
        ):
            break
        # No message aider writes after an answer holds a blank line: the quote is the answer's.
        if in_answer and not following.strip():
            break
        if not _ends_message(following):
            continue
        # Text ending in two spaces (a Markdown line break in an answer, a line of a diff
        # `/run` shows) ends a message only where aider would write on after it.
        if not _after_message(lines, ahead + 1):
            if in_answer:
                break
            continue
        return ahead
    # Every message aider writes ends in the two spaces: without them this is a Markdown
    # quote of an answer (a token report cut off at the end of the file aside).
    return index if line.startswith("> Tokens: ") else None


def _ends_message(line: str) -> bool:
    """Whether aider may have ended a message with this line: text, then the two spaces (it
    strips the message before adding them, so a line of spaces, or of code padded with more,
    is inside one)."""
    return line.endswith("  ") and len(line) > 2 and not line[-3].isspace()


def _quoted_in_output(line: str) -> bool:
    """Whether a `>` line inside aider's output is the output's own (a failing test's
    `>       assert x`): aider strips what it writes, so none of its messages starts with a
    space."""
    return line.startswith(">  ") and bool(line[2:].strip())


def _after_message(lines: list[str], index: int) -> bool:
    """Whether the line at `index` can follow a message: more output, or the blank line before
    an answer, an input or a run."""
    return index >= len(lines) or lines[index] == "" or lines[index].startswith(">")


def _unquote(line: str) -> str:
    return line[2:].rstrip() if line.startswith("> ") else line[1:].strip()


# --- the events of a history ---------------------------------------------------------------


@dataclass
class _Edit:
    """A SEARCH/REPLACE block (or, with `whole`, a file listing) of an answer."""

    path: str
    search: str
    replace: str
    whole: bool = False
    done: bool = False


@dataclass
class _Run:
    index: int
    session: str
    start: SessionStart
    model: str | None = None
    edit_format: str | None = None
    editor_format: str | None = None
    announced: bool = True  # until the first user input, announcements describe the run
    last_line: int = 1
    interrupted: bool = False


@dataclass
class _Traceback:
    """The report of a request aider failed to send (a traceback, then the exception's text
    again, see `_SEND_TRACEBACK`), read a message at a time: its lines, the lines that may raise
    the exception (`ValueError: bad operand`) by their text's first line (`bad operand`), and
    that text printed again so far (its raising line, the line it came again at)."""

    error: Error
    lines: list[str] = field(default_factory=list)
    raising: dict[str, list[int]] = field(default_factory=dict)
    again: list[tuple[int, int]] = field(default_factory=list)
    whole: bool = False

    def takes(self, first: str) -> bool:
        """Whether a message starting with `first` is more of the report: not once the text came
        again whole, nor when it came again in part and this is not its next line (the notes a
        traceback adds to the exception's text, which `str()` leaves out, are not printed again;
        a text whose first line comes again inside it is cut there)."""
        if self.whole:
            return False
        return not self.again or any(self._next(part) == first for part in self.again)

    def add(self, text: str) -> None:
        for line in text.split("\n"):
            self._add_line(line)

    def _add_line(self, line: str) -> None:
        index = len(self.lines)
        self.again = [part for part in self.again if self._next(part) == line]
        if any(index + 1 - start == start - raised for raised, start in self.again):
            self.whole = True
        for raised in reversed(self.raising.get(line, ())):
            if index - raised > _EXCEPTION_LINES:
                break
            if index == raised + 1:
                self.whole = True  # a text of one line, printed again
            else:
                self.again.append((raised, index))
        raising = _RAISED.fullmatch(line)
        if raising is not None:
            self.raising.setdefault(raising.group(2), []).append(index)
        self.lines.append(line)

    def _next(self, part: tuple[int, int]) -> str:
        """The line of the text printed again that comes next."""
        raised, start = part
        return self.lines[raised + len(self.lines) - start]


@dataclass
class _History:
    session: ParsedSession
    source: str
    lines: list[str]
    run: _Run | None = None
    edits: list[_Edit] = field(default_factory=list)
    created: set[str] = field(default_factory=set)
    raw: _Block | None = None
    architect_plan_next: bool = False
    last_answer: str | None = None  # the last answer since the last user message, as written
    # The mode a command sent the last user message's request in (`ask` for `/ask x`,
    # `architect` for `/architect x`); None for the run's.
    request_mode: str | None = None
    traceback: _Traceback | None = None  # the report of the last traceback of a failed send
    # The models (by run index and name) more than one answer of which in that run ends its
    # reasoning with a `</think>` left without its opener (see `_reads_unopened_closer`).
    closing_runs: set[tuple[int, str]] = field(default_factory=set)

    @property
    def events(self) -> list[EventBase]:
        return self.session.events

    def ref(self, line: int) -> SourceRef:
        return SourceRef(file=self.source, line=line)

    def emit(self, kind: type[Made], line: int, **fields: Any) -> Made:
        assert self.run is not None
        event = new_event(kind, session=self.run.session, source=self.ref(line), **fields)
        self.events.append(event)
        return event

    def read(self) -> None:
        blocks = list(_blocks(self.lines))
        self.closing_runs = _runs_closing_reasoning(blocks)
        for block in blocks:
            if block.kind == "run":
                self._end_run()
                self._start_run(block.line, block.lines[0])
                continue
            if self.run is None:
                self._start_run(1, None, implicit=True)
            assert self.run is not None
            self.run.last_line = block.line + len(block.lines) - 1
            if block.kind == "aider":
                self._aider(block)
                continue
            self._flush_raw()
            if block.kind == "user":
                self._user(block)
            else:
                self._answer(block)
        self._end_run()

    def _start_run(self, line: int, started: str | None, implicit: bool = False) -> None:
        index = 0 if implicit else self._next_run_index()
        session = f"{self.session.session_id}-{index}"
        time = started.replace(" ", "T", 1) if started else None
        start = new_event(
            SessionStart, session=session, source=self.ref(line), time=time, harness="aider"
        )
        self.events.append(start)
        self.run = _Run(index=index, session=session, start=start, last_line=line)
        self.edits = []
        self.created = set()
        self.architect_plan_next = False
        self.last_answer = None
        self.request_mode = None

    def _next_run_index(self) -> int:
        return (self.run.index + 1) if self.run is not None else 1

    def _end_run(self) -> None:
        if self.run is None:
            return
        self._flush_raw()
        self.emit(
            SessionEnd,
            self.run.last_line,
            reason="interrupted" if self.run.interrupted else None,
        )

    # --- user input and answers ---

    def _user(self, block: _Block) -> None:
        assert self.run is not None
        self.run.announced = False
        self.run.interrupted = False
        text = "\n".join(block.lines)
        if text == "<blank>":
            text = ""
        if len(block.lines) == 1 and "(Y)es/(N)o" in text and "]: " in text:
            # A question answered by an earlier "all" or "skip": aider's output.
            self._raw_line(block.line, text)
            self._flush_raw()
            return
        sent = self._sent_by_aider(text)
        if sent is not None:
            self.emit(RawEvent, block.line, record=text, reason=sent)
            return
        self.last_answer = None
        sent_by_command = _command_message(text)
        self.request_mode = sent_by_command[0] if sent_by_command else None
        self.emit(UserMessage, block.line, text=text)

    def _sent_by_aider(self, text: str) -> str | None:
        """Why input aider wrote as the user's is its own, or None when the user typed it: the
        message of `/ask`, `/code`, `/architect` or `/context` (the command's text after its
        name) or of `/ok` (aider's request to go ahead), written right after the command; the
        question `/help` sends with aider's documentation; the lint errors aider asks the model
        to fix; an architect's plan given to the editor (after `Edit the files?`, or at once: the
        answer before it, with or without the reasoning aider removes, in architect mode)."""
        if self.architect_plan_next:
            self.architect_plan_next = False
            return "architect plan sent to editor"
        last = self.events[-1] if self.events else None
        typed = last.text if isinstance(last, UserMessage) else ""
        sent_by_command = _command_message(typed)
        if sent_by_command is not None and _same_text(sent_by_command[1], text):
            return f"message of {typed.partition(' ')[0]} sent to the model"
        # `/help` may write other output before it (the install of its extras, another
        # command typed meanwhile).
        if text.startswith("# Question: ") and "\n# Relevant docs:" in text:
            return "question of /help sent to the model with aider's documentation"
        if text.startswith(_LINT_REPORT):
            return "lint errors sent to the model"
        if self._architect_answers() and self._repeats_last_answer(text):
            return "architect plan sent to editor"
        return None

    def _repeats_last_answer(self, text: str) -> bool:
        answer = self.last_answer
        return answer is not None and any(_same_text(plan, text) for plan in _plans(answer))

    def _architect_answers(self) -> bool:
        """Whether the last request went to an architect, whose answer aider may hand the
        editor without asking."""
        assert self.run is not None
        if self.request_mode is not None:
            return self.request_mode == "architect"
        return self.run.edit_format == "architect"

    def _answer(self, block: _Block) -> None:
        assert self.run is not None
        self.run.interrupted = False
        lines = list(block.lines)
        while lines and not lines[-1].strip():
            lines.pop()
        written = "\n".join(lines).strip()
        first = block.line
        reasoning, lines, first = _split_reasoning(lines, first, self._reads_unopened_closer())
        if reasoning.strip():
            self.emit(Reasoning, block.line, text=reasoning.strip())
        text = "\n".join(lines).strip()
        self.last_answer = written
        self.created = set()
        if not text:
            # Reasoning alone is still the answer aider applies: one without edits.
            self.edits = []
            return
        self.emit(AgentMessage, first, text=text, model=self.run.model)
        if self._whole_format():
            # aider writes each fenced listing as the whole file, markers and all: a
            # SEARCH/REPLACE block the model wrote anyway is not applied as one.
            self.edits = _file_listings(lines)
        elif self._active_format().startswith("udiff"):
            self.edits = _unified_diff_hunks(lines)
        else:
            self.edits = _search_replace_blocks(lines) if "<<<<<" in text else []

    def _reads_unopened_closer(self) -> bool:
        """Whether the answers of the model at work may end their reasoning with a `</think>`
        left without its opener: the model is known to write reasoning so
        (`_REASONING_MODEL`), or more than one answer of this model in this run does. aider
        itself removes such reasoning only for a model whose settings name the `think` tag (by
        default DeepSeek R1's names, any model a user configures so), which the history does
        not record. An answer about the tag (the closer alone on its line, more prose after
        it) has the same shape, so one such answer of a model known by no name is left whole:
        a model served under a name of its own with a single answer in its run keeps its
        reasoning in the agent message."""
        assert self.run is not None
        model = self.run.model or ""
        known = _REASONING_MODEL.search(model) is not None
        return known or (self.run.index, model) in self.closing_runs

    def _active_format(self) -> str:
        """The edit format of the answers: the editor's in architect mode."""
        assert self.run is not None
        active = self.run.edit_format
        if active == "architect":
            active = self.run.editor_format
        return active or ""

    def _whole_format(self) -> bool:
        return "whole" in self._active_format()

    # --- aider output ---

    def _aider(self, block: _Block) -> None:
        assert self.run is not None
        text = block.text.strip()
        if not text:
            return
        first = block.lines[0]
        if self._exception_text_continues(first, text):
            return
        starts_error = first.startswith(_ERROR_STARTS) or _FAILED_REQUEST.match(first)
        if starts_error and first != _TRACEBACK:
            self._error(block.line, text)
        elif self._error_continues(first, text):
            # A traceback after `Unexpected error: …` (aider of mid-2024) is its report's.
            return
        elif first == _TRACEBACK and self._failed_send(block):
            self._error(block.line, text)
        elif first.startswith("Tokens: "):
            self._flush_raw()
            self._usage(block.line, text)
        elif first.startswith("Applied edit to "):
            self._flush_raw()
            self._applied(block.line, first[len("Applied edit to ") :].strip())
        elif first.startswith("Commit ") and (commit := _COMMIT.fullmatch(text)):
            self._flush_raw()
            self.emit(Commit, block.line, sha=commit.group(1), message=commit.group(2).strip())
        elif first.startswith("Running ") and len(block.lines) == 1:
            self._flush_raw()
            command = first[len("Running ") :]
            call_id = f"{self.run.session}-shell-{block.line}"
            self.emit(
                ToolCall, block.line, call_id=call_id, name="shell", input={"command": command}
            )
        elif first == "^C KeyboardInterrupt":
            self._flush_raw()
            self.emit(Error, block.line, message=first, interrupt=True)
            self.run.interrupted = True
        elif "SEARCH/REPLACE block" in first and "failed to match" in first:
            self._flush_raw()
            self.emit(Error, block.line, message=text)
            self._error_report(text)
        else:
            self._announcement(first)
            self._answer_question(first)
            self._raw_line(block.line, text)

    def _exception_text_continues(self, first: str, text: str) -> bool:
        """A message of the exception a traceback's report awaits (the text after the
        traceback's last frame, and that text again) joins it before anything else is read: a
        line of it can read as an error's start (`litellm.APIError: …`, printed again)."""
        report = self._open_traceback()
        return report is not None and report.takes(first) and self._error_continues(first, text)

    def _open_traceback(self) -> _Traceback | None:
        """The report of a failed send that the last event is, while it may grow."""
        report = self.traceback
        if report is None or not self.events or self.events[-1] is not report.error:
            return None
        return report

    def _error_continues(self, first: str, text: str) -> bool:
        """A message after an error start that belongs to its report joins that error (only
        while nothing after the error was kept as aider output, so the order stays). An
        interruption (`^C again to exit`, `^C KeyboardInterrupt`) ends any report."""
        last = self.events[-1] if self.events else None
        if not isinstance(last, Error) or last.interrupt or first.startswith(_KNOWN_STARTS):
            return False
        if self.raw is not None or first.startswith("^C"):
            return False
        if _FAILED_REQUEST.match(last.message):
            if _FAILED_REQUEST_ENDS.search(text):
                return False
            report = self._open_traceback()
            if report is not None:
                if not report.takes(first):
                    return False
                report.add(text)
            last.message += "\n" + text
            return True
        if not last.message.startswith(_ERROR_STARTS):
            return False
        if last.message.startswith(_UPDATE_FAILED):
            # aider writes the exception's text right after, each line a message, then output
            # of its own.
            if _FAILED_REQUEST_ENDS.search(text) or _AFTER_UPDATE_FAILED.match(first):
                return False
        elif not (first.startswith("https://aider.chat/") or "\n" in text or "SEARCH" in text):
            return False
        last.message += "\n" + text
        self._error_report(text)
        return True

    def _error(self, line: int, text: str) -> None:
        self._flush_raw()
        error = self.emit(Error, line, message=text)
        if text.startswith(_TRACEBACK):
            self.traceback = _Traceback(error)
            self.traceback.add(text)
        if not _FAILED_REQUEST.match(text):
            self._error_report(text)

    def _failed_send(self, block: _Block) -> bool:
        """Whether the traceback starting at `block` is of a request aider failed to send: its
        first frame is the sending."""
        following = block.line - 1 + len(block.lines)
        return following < len(self.lines) and bool(
            _SEND_TRACEBACK.fullmatch(self.lines[following])
        )

    def _announcement(self, first: str) -> None:
        assert self.run is not None
        if not first.startswith(("Aider v", "Models: ")) and "odel: " not in first:
            return
        version = _VERSION.fullmatch(first)
        if version and self.run.announced:
            self.run.start.harness_version = version.group(1)
        model = _MODEL.match(first)
        if model is None:
            return
        role, name, edit_format = model.groups()
        if role == "Editor model":
            self.run.editor_format = edit_format
            return
        self.run.model = name
        self.run.edit_format = edit_format.rstrip(",") if edit_format else None
        if self.run.announced:
            self.run.start.model = name

    def _answer_question(self, first: str) -> None:
        """Notes the answers that matter later: a new file aider may create, an architect's
        plan the editor is given."""
        older = _ALLOW_CREATION.fullmatch(first)
        if older is not None:
            if older.group(2).lower().startswith("y"):
                self.created.add(older.group(1))
            return
        # `Create new file? (Y)es/(N)o [Yes]: y`, in versions of mid-2024 `… [Y/n] y`.
        if "]: " not in first and "] " not in first:
            return
        answer = first.rsplit(" ", 1)[-1].lower()
        yes = answer.startswith(("y", "a"))
        if first.startswith("Create new file?") and yes and self.raw is not None:
            subject = self.raw.lines[-1].strip()
            if subject:
                self.created.add(subject)
        elif first.startswith("Edit the files?") and yes:
            self.architect_plan_next = True

    def _raw_line(self, line: int, text: str) -> None:
        if self.raw is None:
            self.raw = _Block("aider", line, [text])
        else:
            self.raw.lines.append(text)

    def _flush_raw(self) -> None:
        if self.raw is None or self.run is None:
            self.raw = None
            return
        self.emit(RawEvent, self.raw.line, record=self.raw.text, reason="aider output")
        self.raw = None

    def _usage(self, line: int, text: str) -> None:
        assert self.run is not None
        tokens = _TOKENS.search(text)
        if tokens is None:
            self._raw_line(line, text)
            return
        sent, cache_write, cache_hit, received = (_count(group) for group in tokens.groups())
        cost = None
        found = _COST.search(text)
        if found is not None:
            # The cost of the request(s) this report counts (`request` before aider 0.59).
            cost = _cost(found.group(1))
        self.emit(
            Usage,
            line,
            model=self.run.model,
            # aider counts cache writes (and providers count cache hits) in the tokens sent.
            input_tokens=max(0, sent - cache_write - cache_hit),
            output_tokens=received,
            cache_read_tokens=cache_hit,
            cache_write_tokens=cache_write,
            cost_usd=cost,
            cost_basis="reported" if cost is not None else None,
        )

    def _applied(self, line: int, path: str) -> None:
        edits = _edits_for(self.edits, path)
        if not edits:
            self.emit(FileChange, line, path=_in_repository(path), operation="modify")
            return
        for edit in edits:
            self._file_change(line, path, edit)

    def _error_report(self, text: str) -> None:
        """Edits the failure report says were applied although it lists others as failed."""
        if "were applied successfully" not in text:
            return
        failed = _failed_blocks(text)
        line = self.events[-1].source.line
        for edit in self.edits:
            if edit.done or (_normal(edit.path), edit.search.strip()) in failed:
                continue
            self._file_change(line, edit.path, edit)

    def _file_change(self, line: int, path: str, edit: _Edit) -> None:
        edit.done = True
        created = path in self.created or edit.path in self.created
        path = _in_repository(path)
        if created and not edit.search.strip():
            diff = diffs.file_diff(path, None, edit.replace)
            operation = "create"
            content: str | None = edit.replace
        elif edit.whole:
            diff = diffs.Diff("", 0, 0, False)
            operation = "modify"
            content = edit.replace
        else:
            diff = diffs.fragment_diff(path, edit.search, edit.replace)
            operation = "modify"
            content = None
        self.emit(FileChange, line, **change_fields(path, operation, diff, content))


# --- answers: reasoning, edit blocks, file listings ----------------------------------------


def _split_reasoning(lines: list[str], first: int, unopened: bool) -> tuple[str, list[str], int]:
    """(the reasoning an answer starts with, the rest, the line the rest starts on): what is
    inside the `<think>` (or aider's `<thinking-content-…>`) block it opens with, or, when
    `unopened`, all before a `</think>` left without its opener (see `_unopened_closer`)."""
    if not lines:
        return "", lines, first
    opening = lines[0].strip()
    for start, end in _REASONING_TAGS:
        if not opening.startswith(start):
            continue
        for index in range(len(lines)):
            if lines[index].strip().startswith(end):
                return _after_reasoning(
                    "\n".join(lines[1:index]), lines[index + 1 :], index + 1, first
                )
        return "", lines, first
    closer = _unopened_closer(lines) if unopened else None
    if closer is None:
        return "", lines, first
    rest = lines[closer][len(_THINK_CLOSER) :].strip()
    after = ([rest] if rest else []) + lines[closer + 1 :]
    skipped = closer if rest else closer + 1
    return _after_reasoning("\n".join(lines[:closer]), after, skipped, first)


def _after_reasoning(
    reasoning: str, rest: list[str], skipped: int, first: int
) -> tuple[str, list[str], int]:
    while rest and not rest[0].strip():
        rest = rest[1:]
        skipped += 1
    return reasoning, rest, first + skipped


def _unopened_closer(lines: list[str]) -> int | None:
    """The index of the line a `</think>` without its opener starts, or None: some reasoning
    models (DeepSeek R1 served with the opener in its prompt) write their reasoning, then
    `</think>`, then the answer, and aider writes it so. Only the answer's first `</think>`
    (aider removes all up to the first) counts, none after a `<think>`, and only at the start
    of a line outside a fence, a Markdown quote (its `>` lines and the lines that go on from
    them without a blank line) and a SEARCH/REPLACE block (`<<<<<<< SEARCH` up to `>>>>>>>
    REPLACE`, fenced or not): there it is the answer's text, an edit of a prompt or prose
    about the tag. A block the reasoning drafted and left (a `<<<<<<< SEARCH` whose next marker
    after the closer is another block's head, or none) is no block the closer stands in."""
    if not any(_THINK_CLOSER in line for line in lines):
        return None

    end: str | None = None
    quoted = False
    editing = False
    for index, line in enumerate(lines):
        stripped = line.strip()
        if "<think>" in line:
            return None
        if end is None:
            quoted = line.startswith(">") or (quoted and bool(stripped))
        if _THINK_CLOSER in line:
            editing = editing and _replaced_after(lines, index)
            outside = end is None and not quoted and not editing
            return index if outside and line.startswith(_THINK_CLOSER) else None
        if stripped.startswith("<<<<<") and _HEAD.match(stripped):
            editing = True
        elif editing and _is_updated(stripped):
            editing = False
        if end is None:
            end = _fence_end(stripped)
        elif _closes_fence(stripped, end):
            end = None
    return None


def _replaced_after(lines: list[str], index: int) -> bool:
    """Whether the first edit block marker after line `index` closes a block (`>>>>>>>
    REPLACE`), rather than opening one."""
    for line in lines[index + 1 :]:
        stripped = line.strip()
        if stripped.startswith("<<<<<") and _HEAD.match(stripped):
            return False
        if _is_updated(stripped):
            return True
    return False


def _runs_closing_reasoning(blocks: list[_Block]) -> set[tuple[int, str]]:
    """The models (by the run's index, as `_History` counts runs, and the model's name, as its
    announcements and `/model` switches give it) more than one answer of which in that run
    ends its reasoning with a `</think>` left without its opener."""
    counts: dict[tuple[int, str], int] = {}
    run = 0
    model = ""
    for block in blocks:
        if block.kind == "run":
            run += 1
            model = ""
        elif block.kind == "aider" and (named := _MODEL.match(block.lines[0])) is not None:
            if named.group(1) != "Editor model":
                model = named.group(2)
        elif block.kind == "answer" and _closes_unopened(block.lines):
            counts[run, model] = counts.get((run, model), 0) + 1
    return {key for key, count in counts.items() if count > 1}


def _closes_unopened(lines: list[str]) -> bool:
    """Whether an answer's reasoning ends with a `</think>` left without its opener."""
    opening = next((line.strip() for line in lines if line.strip()), "")
    if opening.startswith(tuple(start for start, _ in _REASONING_TAGS)):
        return False
    return _unopened_closer(lines) is not None


def _search_replace_blocks(lines: list[str]) -> list[_Edit]:
    """The SEARCH/REPLACE blocks of an answer, read the way aider reads them: the path is on
    one of the three lines before `<<<<<<< SEARCH` (fences between), else the previous
    block's."""
    edits: list[_Edit] = []
    path: str | None = None
    index = 0
    count = len(lines)
    while index < count:
        stripped = lines[index].strip()
        closer = _OLDER_BLOCKS.get(stripped)
        if closer is not None:
            block = _older_block(lines, index, closer)
            if block is not None:
                path = _filename(lines[max(0, index - 3) : index]) or path
                if path:
                    edits.append(_Edit(path, _joined(block[0]), _joined(block[1])))
                index = block[2]
            index += 1
            continue
        if not (stripped.startswith("<<<<<") and _HEAD.match(stripped)):
            index += 1
            continue
        path = _filename(lines[max(0, index - 3) : index]) or path
        search: list[str] = []
        index += 1
        while index < count and not _is_divider(lines[index]):
            search.append(lines[index])
            index += 1
        replace: list[str] = []
        index += 1
        while index < count and not (_is_divider(lines[index]) or _is_updated(lines[index])):
            replace.append(lines[index])
            index += 1
        if index >= count:
            break
        if path:
            edits.append(_Edit(path, _joined(search), _joined(replace)))
        index += 1
    return edits


def _older_block(
    lines: list[str], opener: int, closer: str
) -> tuple[list[str], list[str], int] | None:
    """(search, replace, the closer's index) of the older edit block opened at `opener`, or
    None when the lines after it are not a divider and then `closer` (no other marker)."""
    parts: list[list[str]] = [[]]
    for index in range(opener + 1, len(lines)):
        stripped = lines[index].strip()
        if stripped == closer and len(parts) == 2:
            return parts[0], parts[1], index
        if _is_divider(lines[index]) and len(parts) == 1:
            parts.append([])
        elif stripped.startswith(("<<<<<<<", ">>>>>>>")) or _is_divider(lines[index]):
            return None
        else:
            parts[-1].append(lines[index])
    return None


def _is_divider(line: str) -> bool:
    stripped = line.strip()
    return stripped.startswith("=====") and _DIVIDER.match(stripped) is not None


def _is_updated(line: str) -> bool:
    stripped = line.strip()
    return stripped.startswith(">>>>>") and _UPDATED.match(stripped) is not None


def _chat_command(command: str) -> str | None:
    """The command `/name` is when it sends its text to the model (aider takes a command by
    its name or a prefix no other command's name starts with: `/arch`; it refuses `/c` and
    `/a` as ambiguous and sends nothing), else None."""
    name = command[1:]
    if command[:1] != "/" or not name:
        return None
    if name in _CHAT_COMMANDS:
        return name
    matching = [c for c in _COMMANDS if c.startswith(name)]
    return matching[0] if len(matching) == 1 and matching[0] in _CHAT_COMMANDS else None


def _command_message(typed: str) -> tuple[str, str] | None:
    """(the mode, the message) of input that sends the model a message through a command:
    `/ask x` sends `x` in `ask` mode, `/ok` its request to go ahead (with what follows it)
    through `/code`; None for other input (`/ask` alone switches modes)."""
    command, _, rest = typed.partition(" ")
    name = _chat_command(command)
    if name == "ok":
        return "code", f"{_OK_MESSAGE} {rest.strip()}".rstrip()
    if name is None or not rest.strip():
        return None
    return name, rest


def _plans(answer: str) -> set[str]:
    """What aider may hand the editor for an architect's answer: the answer, and the answer
    without its reasoning the way aider removes it (each `<think>` … `</think>`, then
    everything up to a closing tag left without its opener), for each reasoning tag in it."""
    plans = {answer}
    for tag in set(_REASONING_CLOSER.findall(answer)):
        closer = f"</{tag}>"
        plan = re.sub(f"<{re.escape(tag)}>.*?{re.escape(closer)}", "", answer, flags=re.DOTALL)
        plan = plan.strip()
        if closer in plan:
            plan = plan.split(closer, 1)[1].strip()
        if plan:  # aider hands the editor no plan that is reasoning alone
            plans.add(plan)
    return plans


def _same_text(first: str, second: str) -> bool:
    """Whether two texts are the same but for the spaces aider strips from line ends."""
    return _unpadded(first) == _unpadded(second)


def _unpadded(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip().split("\n"))


def _joined(lines: list[str]) -> str:
    return "".join(line + "\n" for line in lines)


# The fences aider writes code in besides triple backticks, when a file in the chat holds
# those (aider's `all_fences`): `<source>` … `</source>` and the like, the opening tag alone
# on its line with the language (or the file's name) after it; prose that starts with a tag
# (`<code>render()</code> now escapes…`) opens nothing.
_TAG_FENCE = re.compile(r"<(source|code|pre|codeblock|sourcecode)>[^\s<]*\s*")


def _fence_end(line: str) -> str | None:
    """The line a fence this line opens ends with (its start), or None: backticks, as many as
    open it (a fence of four closes only with four or more, see `_closes_fence`), or one of
    aider's tag fences (`<source>python` ends with `</source>`)."""
    if line.startswith("```"):
        return line[: len(line) - len(line.lstrip("`"))]
    tag = _TAG_FENCE.fullmatch(line) if line.startswith("<") else None
    return f"</{tag.group(1)}>" if tag else None


def _closes_fence(line: str, end: str) -> bool:
    """Whether the stripped `line` closes a fence `_fence_end` gave `end` for, as Markdown reads
    it: backticks alone, at least as many as opened it (CommonMark), or the closing tag."""
    if end.startswith("`"):
        return line.startswith(end) and not line.lstrip("`")
    return line.startswith(end)


def _filename(before: list[str]) -> str | None:
    found: list[str] = []
    for line in reversed(before):
        name = _strip_filename(line)
        if name:
            found.append(name)
        if _fence_end(line) is None:
            break
    for name in found:
        if "." in name:
            return name
    return found[0] if found else None


def _strip_filename(line: str) -> str | None:
    name = line.strip()
    if name == "...":
        return None
    if _fence_end(name) is not None:
        candidate = name.lstrip("`") if name.startswith("```") else name.split(">", 1)[1]
        return candidate if candidate and ("." in candidate or "/" in candidate) else None
    name = name.rstrip(":").lstrip("#").strip().strip("`").strip("*")
    return name or None


def _file_listings(lines: list[str]) -> list[_Edit]:
    """The file listings of a `whole` answer: a path line, then the file in a fence (what
    starts with another fence inside is the file's)."""
    edits: list[_Edit] = []
    path: str | None = None
    content: list[str] = []
    end: str | None = None
    for index, line in enumerate(lines):
        if end is not None:
            if not line.startswith(end):
                content.append(line)
                continue
            if path:
                edits.append(_Edit(path, "", _joined(content), whole=True))
            end, path, content = None, None, []
            continue
        end = _fence_end(line)
        if end is None:
            continue
        if end.startswith("`"):
            end = "```"  # aider ends a listing at any line that starts with three backticks
        previous = lines[index - 1] if index else ""
        path = previous.strip().strip("*").rstrip(":").strip("`").lstrip("#").strip() or None
        if path is not None and len(path) > 250:
            path = None
    return edits


def _unified_diff_hunks(lines: list[str]) -> list[_Edit]:
    """The hunks of a `udiff` answer, read the way aider reads them: each `diff` fence holds
    a file's `--- `/`+++ ` headers (the path is the `+++` one; more headers in the fence start
    another file) and hunks after `@@ ... @@` lines (no line numbers); a hunk is its ` ` and
    `-` lines before, its ` ` and `+` lines after, and one without `-` or `+` lines none."""
    edits: list[_Edit] = []
    index = 0
    while index < len(lines):
        if not lines[index].startswith("```diff"):
            index += 1
            continue
        end = index + 1
        while end < len(lines) and not lines[end].startswith("```"):
            end += 1
        block = [*lines[index + 1 : end], "@@ @@"]
        path: str | None = None
        if len(block) > 2 and block[0].startswith("--- ") and block[1].startswith("+++ "):
            path, block = block[1][4:].strip(), block[2:]
        hunk: list[str] = []
        changed = False
        for line in block:
            hunk.append(line)
            if not line:
                continue
            if line.startswith("+++ ") and len(hunk) > 1 and hunk[-2].startswith("--- "):
                hunk = hunk[:-3] if len(hunk) > 2 and not hunk[-3] else hunk[:-2]
                if changed and path:
                    edits.append(_hunk_edit(path, hunk))
                path, hunk, changed = line[4:].strip(), [], False
            elif line[0] in "-+":
                changed = True
            elif line[0] == "@":
                if changed and path:
                    edits.append(_hunk_edit(path, hunk[:-1]))
                hunk, changed = [], False
        index = end + 1
    return edits


def _hunk_edit(path: str, hunk: list[str]) -> _Edit:
    before: list[str] = []
    after: list[str] = []
    for line in hunk:
        op, text = (line[0], line[1:]) if line else (" ", "")
        if op in " -":
            before.append(text)
        if op in " +":
            after.append(text)
    return _Edit(path, _joined(before), _joined(after))


def _edits_for(edits: list[_Edit], path: str) -> list[_Edit]:
    wanted = _normal(path)
    found = [edit for edit in edits if not edit.done and _normal(edit.path) == wanted]
    if found:
        return found
    name = Path(wanted).name
    return [edit for edit in edits if not edit.done and Path(_normal(edit.path)).name == name]


def _normal(path: str) -> str:
    """A path to compare: aider on Windows reports `a\\b.py` for a block's `a/b.py`."""
    path = path.replace("\\", "/")
    return path[2:] if path.startswith("./") else path


def _in_repository(path: str) -> str:
    """The path of a change as the repository names it: aider reports the name the model
    wrote, `./report.md` for `report.md` too, and on Windows `app\\main.py` for
    `app/main.py`. A path with slashes keeps its backslashes (a Markdown formatter's escape,
    `account\\_.tsx`, is no separator)."""
    if "/" not in path:
        path = path.replace("\\", "/")
    while path.startswith("./") and len(path) > 2:
        path = path[2:].lstrip("/")
    return path


def _failed_blocks(report: str) -> set[tuple[str, str]]:
    """(path, SEARCH text) of each block a failure report lists."""
    failed: set[tuple[str, str]] = set()
    for match in _FAILED_BLOCK.finditer(report):
        rest = report[match.end() :]
        start = rest.find("<<<<<<< SEARCH\n")
        divider = rest.find("\n=======\n", start)
        if start == -1 or divider == -1:
            continue
        search = rest[start + len("<<<<<<< SEARCH\n") : divider + 1]
        failed.add((_normal(match.group(1).strip()), search.strip()))
    return failed


def _count(value: str | None) -> int:
    """A token count as aider prints it: `150`, `2.3k`, `11k` (older: `1,234`)."""
    if not value:
        return 0
    value = value.replace(",", "")
    try:
        if value.endswith("k"):
            return count_field(round(float(value[:-1]) * 1000))
        return count_field(round(float(value)))
    except (ValueError, OverflowError):  # not a number (`1.2.3`), or past a float (infinite)
        return 0


def _cost(value: str) -> float | None:
    """A cost as aider prints it (`0.03`); None when it is no number a cost can be."""
    try:
        return cost_field(float(value))
    except ValueError:
        return None
