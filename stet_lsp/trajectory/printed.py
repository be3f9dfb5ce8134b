"""What a shell command that prints a secret printed, told by pairing its tool call with its
result: the gate reads each event's JSON line apart, so `printed-secret` never sees a command
(`op read op://vault/db/password`) beside its output in a transcript (gate/printed.py)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from stet_lsp.trajectory.events import EventBase, ToolCall, ToolResult

if TYPE_CHECKING:
    from stet_lsp.gate.config import GateConfig
    from stet_lsp.gate.findings import Finding

# The lines a harness puts before a command's output, up to its `Output:` (Codex: `Exit code:
# 0` or `Chunk ID: …`, `Wall time: …`, `Process exited with code 0`, then `Output:` on a line
# of its own; Gemini CLI and Qwen Code: `Command: …`, `Directory: …`, then `Output: …`).
_HEADER = re.compile(r"(?:[A-Z][^\n]{0,200}\n){0,8}?Output:(?:\n| )")
# What Codex writes before an output it cut short, after its header or as the output's start
# (`Total output lines: 900`, then a blank line, perhaps after a `Warning: truncated output
# (original token count: …)` line): the command's first line comes after the blank one.
_TRUNCATED = re.compile(
    r"(?:Warning: truncated output \(original token count: [0-9]{1,12}\)\n)?"
    r"Total output lines: [0-9]{1,12}\n\n"
)
# A command's arguments, which run nothing else.
_ARGUMENTS = r"(?:[ \t][^;&|\n`$()<>]{0,200})?"
# A command alone that starts its output with no blank line of its own (after a `cd … &&`,
# piped into `head` at most): a listing, a file's text, a version; not `npm run` (which
# prints one first), nor `git log` and `echo`, whose formats may.
_PLAIN = re.compile(
    r"[ \t]*(?:cd[ \t][^;&|\n]{1,200}&&[ \t]*)?"
    r"(?:(?:ls|pwd|wc|find|date|whoami|uname|cat|head|tail"
    r"|git[ \t]+(?:status|branch|diff|rev-parse))"
    + _ARGUMENTS
    + r"|[\w.+-]{1,40}[ \t]+(?:--version|-V))"
    r"(?:[ \t]*\|[ \t]*(?:head|tail|wc|sort)" + _ARGUMENTS + r"){0,3}[ \t]*\Z"
)
# The status lines Gemini CLI and Qwen Code write after it (`Error: (none)`, `Exit Code: 0`,
# `Signal: (none)`, `Background PIDs: (none)`, `Process Group PGID: 12`): the output's last
# line is what the command printed last.
_STATUS = re.compile(
    r"(?:\n(?:Error: \(none\)|Exit Code: -?[0-9]{1,10}|Signal: [^\n]{0,80}"
    r"|Background PIDs: [^\n]{0,200}|Process Group PGID: [^\n]{0,40}))+\n?\Z"
)


def secrets_calls_printed(
    events: Iterable[EventBase], config: GateConfig
) -> list[tuple[str, list[Finding]]]:
    """For each call's result that holds what its command printed as a secret: the text the
    gate read (command, then output) and what it found there."""
    from stet_lsp.gate.printed import printed_secrets

    commands: dict[str, str] = {}
    calls: list[tuple[str, str, bool]] = []  # each call's command, what it printed, success
    for event in events:
        if isinstance(event, ToolCall):
            command = _command(event.input)
            if command:
                commands[event.call_id] = command
        elif isinstance(event, ToolResult) and event.call_id in commands:
            calls.append((commands[event.call_id], _printed(event.output), event.ok))
    blank = _harness_blank_lines(calls)
    known: list[tuple[str, list[Finding]]] = []
    for command, output, ok in calls:
        found = printed_secrets(command, output, config, succeeded=ok, harness_blank_lines=blank)
        if found is not None:
            known.append(found)
    return known


def _harness_blank_lines(calls: list[tuple[str, str, bool]]) -> int:
    """How many blank lines the harness puts before every command's output (some start
    each with one): as many as each output starts with, of two commands or more known to
    print none first themselves (`_PLAIN`: `ls`, `git status`), when every such output that
    holds anything starts with some; else none. Other commands may (`npm run` does)."""
    counts = [
        _leading_blank_lines(output)
        for command, output, _ in calls
        if output.strip() and _PLAIN.match(command)
    ]
    return min(counts) if len(counts) >= 2 else 0


def _leading_blank_lines(output: str) -> int:
    """How many lines with nothing on them (a `\r` at most) the output starts with."""
    lines = output.split("\n")
    count = 0
    while count < len(lines) - 1 and not lines[count].strip("\r"):
        count += 1
    return count


def _command(tool_input: dict[str, Any]) -> str | None:
    """The shell command of a call's input (`command` or `cmd`, a string or an argv list)."""
    command = tool_input.get("command", tool_input.get("cmd"))
    if isinstance(command, list):
        return " ".join(part for part in command if isinstance(part, str))
    return command if isinstance(command, str) else None


def _printed(output: str) -> str:
    """What the command printed: the output after its harness's header and its note of a
    cut, when it has them, and before the status lines after the header."""
    header = _HEADER.match(output, 0, 2000)
    start = 0 if header is None else header.end()
    if truncated := _TRUNCATED.match(output, start):
        start = truncated.end()
    if header is None:
        return output[start:]
    status = _STATUS.search(output, max(start, len(output) - 1000))
    return output[start : len(output) if status is None else status.start() + 1]
