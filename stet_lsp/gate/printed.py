"""What a command that prints a secret printed (`op read …`, `vault kv get -field=…`), where a
transcript keeps the command and its output apart: a tool call's input in one record, its
result in another, each its own JSON string, so the `printed-secret` rule, which reads the
output on the line after its command, never sees the two together. An importer that paired
them asks here, and the values go to `stream.redact_blocks` as known ones."""

from __future__ import annotations

import bisect
import re

from stet_lsp.gate.config import GateConfig
from stet_lsp.gate.findings import Finding
from stet_lsp.gate.scan import scan_text

# What the shell reads past when it looks for where a command ends: a quoted string, an
# escaped character (a line's `\` before its new line too), a comment, `$(…)` or `(…)`
# (their `;` and lines are theirs), and the new line, `;`, `&&` or `||` that ends a command
# (kept, to know what ran a command only when the one before it succeeded or failed).
_SHELL_TOKEN = re.compile(
    r"'[^']*'|\"[^\"\\]*(?:\\.[^\"\\]*)*\"|`[^`\\]*(?:\\.[^`\\]*)*`|\\.|(?<![^\s;&|()])#[^\n]*"
    r"|(?P<open>\$?\()|(?P<close>\))|(?P<end>\n|;|&&|\|\|)|(?P<unclosed>['\"`])",
    re.DOTALL,
)
# Commands that print nothing: a comment, a change of folder, a variable set or exported
# (`export DB_PASSWORD="$(op read …)"` keeps what it read), a shell option, a test
# (`test -f x`, `[ -n "$X" ]`, `true`), what changes files or the shell quietly (`mkdir -p`,
# `eval $(op signin)`, `source ./env.sh`, `sleep 1`), and a command whose output goes to a
# file (`make > build.log`). Any other command may print lines of its own.
_SILENT = re.compile(
    r"(?:#|cd(?:\s|$)|export\s|unset\s|set\s+[-+]|[A-Za-z_]\w*=(?:[^\s\"']|\"[^\"]*\"|'[^']*')*$"
    r"|(?:test|\[\[?)\s[^>|]*$|(?:true|false|:)(?:\s|$)"
    r"|(?:mkdir|touch|chmod|chown|cp|mv|rm|ln|sleep|eval|source|\.|wait|umask|trap|shopt)\s"
    r"|[^|]*(?:^|\s)(?:&>|1?>>?)(?!&)[^|]*$)|$"
)
# `echo` of words and variables, no flag, no command's output and no new line in quotes: one
# line, not a value.
_ONE_LINE = re.compile(r"echo(?:\s+(?!-)(?:[^`$\n]|\$(?!\())*)?$")
# What sends an `echo`'s line elsewhere or to a command that may print none (`> file`,
# `>&2`, `| grep …`): it prints a line, or none.
_ELSEWHERE = re.compile(r"[>|]")
# What stands in for a printed value when asking whether a command prints one.
_PROBE = "\nPr0beValue\n"
# The most lines of the output one printing command may have printed, as far as the pairing
# knows (echoes that may print none before it), before the pairing stops.
_CANDIDATES = 8
# How much of a command stands before a line it printed: the rule reads its value within a
# few hundred characters of the command's name, and a megabyte's command shown before each
# of its lines would be scanned as many times.
_SHOWN_COMMAND = 2048


def printed_secrets(
    command: str, output: str, config: GateConfig
) -> tuple[str, list[Finding]] | None:
    """The text a terminal would show (each printing command, then the line of the output
    it printed, or each it may have; then the command's last line and the output's first)
    and the secrets found in it as what `command` printed; None when there are none."""
    # The rules' modules load each other (rules.py first): through `scan`, loaded above.
    from stet_lsp.gate.rules_generic import PRINTED_SECRET, PRINTING_COMMANDS

    if not any(anchor in command for anchor in PRINTING_COMMANDS):
        return None
    printed = output.lstrip("\r\n")
    # Blank lines an `echo` may have printed before the first that holds anything.
    blank = output[: len(output) - len(printed)].count("\n")
    lines = printed.split("\n")
    shown: list[str] = []
    values: list[tuple[int, int]] = []  # where each shown line is, in the text
    length = 0
    # The output's lines the commands so far printed: the echoes' that surely did, those
    # that may have, and the printing commands'; and the lines shown already.
    echoed = maybe = paired = taken = 0
    parts = _commands(command)
    for index in range(0, len(parts), 2):
        whole = parts[index].strip()
        part = whole[-_SHOWN_COMMAND:]  # what is shown; what kind of command, from all of it
        first = max(0, echoed - blank) + paired
        last = min(echoed + maybe + paired, len(lines) - 1)
        if first > last or last - first >= _CANDIDATES:
            break
        # Read on its last line: a line in quotes before it (`git commit -m "op read …\n…"`)
        # is no command of its own.
        if PRINTED_SECRET.pattern.search(part.rsplit("\n", 1)[-1] + _PROBE) is not None:
            # Each printing command prints its value on a line of its own, in order: each
            # line it may have printed is shown once, after it.
            for line in lines[max(first, taken) : last + 1]:
                shown.append(f"{part}\n")
                values.append((length + len(shown[-1]), length + len(shown[-1]) + len(line)))
                shown.append(f"{line}\n")
                length = values[-1][1] + 1
            taken = max(taken, last + 1)
            paired += 1
        elif _ONE_LINE.match(whole) is not None:
            # `echo "DB:"` before the value; one that runs only when the command before it
            # failed or succeeded, or whose line goes elsewhere, may print none.
            if (index > 0 and parts[index - 1] in ("&&", "||")) or _ELSEWHERE.search(whole):
                maybe += 1
            else:
                echoed += 1
        elif _SILENT.match(whole) is None:
            break  # what this one printed, if anything, stands between the lines and theirs
    # The command's last line and the output's first, as a terminal shows them when it runs
    # one printing command: a value the pairing above missed is still found, as it was when
    # this was the only pair asked.
    tail = command.rstrip().rsplit("\n", 1)[-1][-_SHOWN_COMMAND:]
    shown.append(f"{tail}\n{lines[0]}\n")
    values.append((length + len(tail) + 1, length + len(shown[-1])))
    text = "".join(shown)
    starts = [start for start, _ in values]  # in order: a finding is in the last before it
    found: dict[str, Finding] = {}  # each value once, where it was first found
    for finding in scan_text(text, config=config, path="printed.txt", cache=None):
        at = bisect.bisect_right(starts, finding.offset) - 1
        if finding.rule == PRINTED_SECRET.name and at >= 0 and finding.offset < values[at][1]:
            found.setdefault(text[finding.offset : finding.end_offset], finding)
    return (text, list(found.values())) if found else None


def _commands(command: str) -> list[str]:
    """The commands a shell runs one after another, each followed by what ends it (as
    `re.split` with a group gives them): a `;` or a new line inside quotes, a comment or
    `$(…)` ends none. A quote never closed holds the rest, as the shell would read it."""
    parts: list[str] = []
    start = depth = 0
    for token in _SHELL_TOKEN.finditer(command):
        if token.group("unclosed") is not None:
            break
        if token.group("open") is not None:
            depth += 1
        elif token.group("close") is not None:
            depth = max(0, depth - 1)
        elif token.group("end") is not None and depth == 0:
            parts += (command[start : token.start()], token.group())
            start = token.end()
    parts.append(command[start:])
    return parts
