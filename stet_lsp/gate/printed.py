"""What a command that prints a secret printed (`op read …`, `vault kv get -field=…`), where a
transcript keeps the command and its output apart: a tool call's input in one record, its
result in another, each its own JSON string, so the `printed-secret` rule, which reads the
output on the line after its command, never sees the two together. An importer that paired
them asks here, and the values go to `stream.redact_blocks` as known ones."""

from __future__ import annotations

import re

from stet_lsp.gate.config import GateConfig
from stet_lsp.gate.findings import Finding
from stet_lsp.gate.scan import scan_text

# Where a shell runs one command after another: a new line, `;`, `&&`, `||`.
_COMMAND_BREAK = re.compile(r"\n|;|&&|\|\|")
# Commands that print nothing: a comment, a change of folder, a variable set or exported
# (`export DB_PASSWORD="$(op read …)"` keeps what it read), a shell option.
_SILENT = re.compile(r"(?:#|cd(?:\s|$)|export\s|unset\s|set\s+[-+]|[A-Za-z_]\w*=\S*$)|$")
# `echo` of words and variables, no flag and no command's output: one line, not a value.
_ONE_LINE = re.compile(r"echo(?:\s+(?!-)(?:[^`$]|\$(?!\())*)?$")
# What stands in for a printed value when asking whether a command prints one.
_PROBE = "\nPr0beValue\n"


def printed_secrets(
    command: str, output: str, config: GateConfig
) -> tuple[str, list[Finding]] | None:
    """The text a terminal would show (each printing command, then the line of the output
    it printed) and the secrets found in it as what `command` printed; None when there are
    none."""
    # The rules' modules load each other (rules.py first): through `scan`, loaded above.
    from stet_lsp.gate.rules_generic import PRINTED_SECRET, PRINTING_COMMANDS

    if not any(anchor in command for anchor in PRINTING_COMMANDS):
        return None
    lines = output.lstrip("\r\n").split("\n")
    shown: list[str] = []
    values: list[tuple[int, int]] = []
    length = 0
    read = 0  # the output's lines the commands so far printed
    for part in _COMMAND_BREAK.split(command):
        part = part.strip()
        if read == len(lines):
            break
        if PRINTED_SECRET.pattern.search(part + _PROBE) is not None:
            # Each printing command prints its value on a line of its own, in order.
            line = lines[read]
            shown.append(f"{part}\n{line}\n")
            values.append((length + len(part) + 1, length + len(part) + 1 + len(line)))
            length += len(shown[-1])
            read += 1
        elif _ONE_LINE.match(part) is not None:
            read += 1  # `echo "DB:"` before the value
        elif values and _SILENT.match(part) is None:
            break  # what this one printed, if anything, stands between the lines and theirs
    if not shown:
        return None
    text = "".join(shown)
    found = [
        finding
        for finding in scan_text(text, config=config, path="printed.txt", cache=None)
        if finding.rule == PRINTED_SECRET.name
        and any(start <= finding.offset < end for start, end in values)
    ]
    return (text, found) if found else None
