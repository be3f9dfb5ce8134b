"""What a command that prints a secret printed (`op read …`, `vault kv get -field=…`), where a
transcript keeps the command and its output apart: a tool call's input in one record, its
result in another, each its own JSON string, so the `printed-secret` rule, which reads the
output on the line after its command, never sees the two together. An importer that paired
them asks here, and the values go to `stream.redact_blocks` as known ones."""

from __future__ import annotations

import bisect
import re
import shlex
from collections.abc import Iterable

from stet_lsp.gate.config import GateConfig
from stet_lsp.gate.findings import Finding
from stet_lsp.gate.heuristics import reads_as_written
from stet_lsp.gate.scan import scan_text

# What the shell reads past when it looks for where a command ends: a quoted string, an
# escaped character (a line's `\` before its new line too), a comment, `$(…)` or `(…)`
# (their `;` and lines are theirs), and the new line, `;`, `&&`, `||` or `&` (not `2>&1`,
# `&>`, `|&`) that ends a command (kept, to know what ran a command only when the one
# before it succeeded or failed, and what runs in the background).
_SHELL_TOKEN = re.compile(
    # (the first characters any of them starts with, up front, let the search skip the rest)
    r"(?=[\n;&|'\"`\\#()$])"
    r"(?:'[^']*'|\"[^\"\\]*(?:\\.[^\"\\]*)*\"|`[^`\\]*(?:\\.[^`\\]*)*`|\\.|#(?<![^\s;&|()]#)[^\n]*"
    r"|(?P<open>\$?\()|(?P<close>\))|(?P<end>\n|;|&&|\|\||&(?<![<>|]&)(?!>))|(?P<unclosed>['\"`]))",
    re.DOTALL,
)
# Commands that print nothing: a comment, the word that closes a group or a body (`}`,
# `done`, `fi`, `esac`), a change of folder, a variable set or exported
# (`export DB_PASSWORD="$(op read …)"` keeps what it read), a shell option, a test
# (`test -f x`, `[ -n "$X" ]`, `true`), arithmetic (`(( n++ ))`), what changes files or the
# shell quietly (`mkdir -p`, `eval $(op signin)`, `source ./env.sh`, `sleep 1`), and a
# command whose output goes to a file (`make > build.log`). Any other command may print
# lines of its own.
_SILENT = re.compile(
    r"(?:#|(?:\}|done|fi|esac)$|cd(?:\s|$)|export\s|unset\s|set\s+[-+]|[A-Za-z_]\w*=(?:[^\s\"']|\"[^\"]*\"|'[^']*')*$"
    r"|(?:test|\[\[?)\s[^>|]*$|(?:true|false|:)(?:\s|$)|\(\([^()]*\)\)$"
    r"|(?:mkdir|touch|chmod|chown|cp|mv|rm|ln|sleep|eval|source|\.|wait|umask|trap|shopt)\s"
    r")|$"
)
# Its output sent to a file, searched for in a command with no `|` (a pattern that matched
# the whole command read the text before it over and over).
_TO_FILE = re.compile(r"(?:^|(?<=\s))(?:&>|1?>>?)(?!&)")
# `echo` of words and variables, no flag, no command's output and no new line in quotes: one
# line, not a value. (The blanks before the words are all read by one of its parts.)
_ONE_LINE = re.compile(r"echo(?:\s+(?![-\s])(?:[^`$\n]|\$(?!\())*)?$")
# What sends an `echo`'s line elsewhere or to a command that may print none (`> file`,
# `>&2`, `| grep …`): it prints a line, or none.
_ELSEWHERE = re.compile(r"[>|]")
# A redirection of a command's errors alone (`2>/dev/null`, `2>> err.log`, `2>&1`).
_ERRORS_REDIRECTED = re.compile(r"(?<!\S)2>>?(?:&[12](?!\S)|[ \t]{0,2}[^\s|>;&<]+)")
# What a command prints, as far as the pairing knows.
(
    _VALUE,
    _MAYBE_VALUE,
    _UNENDED_VALUE,
    _VALUES,
    _SOME_VALUES,
    _LINE,
    _MAYBE_LINE,
    _NOTHING,
    _LINES,
    _ASIDE,
) = (
    "value",
    "value or none",
    "value or none, and no line end",
    "a value each",
    "a value or none each",
    "line",
    "line or none",
    "nothing",
    "lines",
    "lines at any time",
)
# A `printf` format that prints its argument, and one that ends its line.
_PRINTF_FORMATS = ("'%s'", '"%s"', "%s", "'%s\\n'", '"%s\\n"', "%s\\n")
# A variable `printf` prints whole, on a line of its own with one of those formats: `"$X"`,
# `"${X}"` (unquoted, a value with blanks is split into several arguments, a line each).
_PRINTF_VARIABLE = re.compile(r'"\$(\{)?[A-Za-z_]\w*(?(1)\})"')
_VARIABLE_NAME = re.compile(r"[A-Za-z_]\w*")
# What stands in for a printed value when asking whether a command prints one.
_PROBE = "\nPr0beValue\n"
# What may stand before a command's name: variables set for it alone (`LANG=C op read …`),
# the commands that run the one after them (`sudo`, `command`, `exec`, `time`, `env`), the
# words that open a group or a body (`{ op read …; }`, `do`, `then`, `else`, `!`), and what
# runs a command elsewhere and prints what it printed (`ssh host 'op read …'`, `bash -c
# "…"`, `docker exec app printenv X`, `kubectl exec pod -- …`).
_PREFIX = re.compile(
    r"(?:[A-Za-z_]\w*=(?:[^\s\"'\\]|\\.|\"[^\"]*\"|'[^']*')*\s+"
    r"|(?:sudo|command|exec|time|env|\{|do|then|else|!)\s+"
    r"|ssh\s+(?:-[ipoFJlLRDbceEmOQSWwB]\s+[^\s'\"-][^\s'\"]*\s+|-[A-Za-z0-9]+\s+)*"
    r"[^\s'\"-][^\s'\"]*\s+['\"]?"
    r"|(?:ba|z|k|da)?sh\s+(?:-[a-z]+\s+)*-[a-z]*c\s+['\"]?"
    r"|(?:docker|podman)\s+exec\s+(?:-[euw]\s+[^\s'\"-][^\s'\"]*\s+|-[A-Za-z-]+\s+)*"
    r"[^\s'\"-][^\s'\"]*\s+"
    r"|kubectl\s+exec\s+[^;&|\n]{0,200}?\s--\s+['\"]?)*"
)
# The most lines of the output one printing command may have printed, as far as the pairing
# knows (echoes that may print none before it), before the pairing stops.
_CANDIDATES = 8
# How much of a command stands before a line it printed: the rule reads its value within a
# few hundred characters of the command's name, and a megabyte's command shown before each
# of its lines would be scanned as many times.
_SHOWN_COMMAND = 2048


def printed_secrets(
    command: str,
    output: str,
    config: GateConfig,
    *,
    succeeded: bool = True,
    harness_blank_lines: int = 0,
) -> tuple[str, list[Finding]] | None:
    """The text a terminal would show (each printing command, then the line of the output
    it printed, or each it may have) and the secrets found in it as what `command` printed;
    None when there are none. The lines are counted from the output's start and, when the
    call `succeeded`, from its end too. The first `harness_blank_lines` blank lines of the
    output are known to be the harness's, which it puts before every output: no command
    printed them."""
    # The rules' modules load each other (rules.py first): through `scan`, loaded above.
    from stet_lsp.gate.rules_generic import PRINTED_SECRET, PRINTING_COMMANDS

    if not any(anchor in command for anchor in PRINTING_COMMANDS):
        return None
    lines = output.split("\n")
    # The lines that hold anything, and the blank ones around them an `echo` may have
    # printed (the new line that ends the last line is none).
    head = 0
    while head < len(lines) and not lines[head].strip("\r"):
        head += 1
    end = len(lines)
    while end > head and not lines[end - 1].strip("\r"):
        end -= 1
    trailing = max(0, len(lines) - end - output.endswith("\n"))
    parts = _commands(command)
    count = output.count("\n") + (output[-1:] not in ("", "\n"))
    kinds = _Kinds(parts, succeeded, count)
    pairs = _pairs(
        kinds, lines, head, end, trailing, succeeded=succeeded, harness=harness_blank_lines
    )
    failed = _failed_read(kinds, lines[head].rstrip("\r") if head < end else "")
    if failed is not None:
        # An `op read` whose error the output starts with printed no value: a line paired
        # with it is what another command printed (`ls; op read …; true`: the last line is
        # what `ls` printed), taken only when it reads as generated, as any such line is;
        # the other printing commands are paired again with it printing none.
        again = _Kinds(parts, succeeded, count, failed=failed)
        pairs = {pair: sure and pair[0][0] != failed for pair, sure in pairs.items()}
        for pair, sure in _pairs(
            again, lines, head, end, trailing, succeeded=succeeded, harness=harness_blank_lines
        ).items():
            pairs[pair] = pairs.get(pair, False) or sure
        kinds.printing_command.update(again.printing_command)
        kinds.endings.update(again.endings)
    if not pairs:
        return None
    shown: list[str] = []
    values: list[tuple[int, int]] = []  # where each shown line is, in the text
    surely: list[bool] = []  # whether each is surely the printing command's line
    length = 0
    for (printed, line), sure in pairs.items():
        held = [lines[line]]
        # A value its line goes on after (`echo -n "$X"; echo done`: `<value>done`): the line,
        # whose value is a token of its own nowhere else, and the value alone.
        ending = kinds.endings.get(printed[0], "") if printed[1] == 0 else ""
        whole = held[0].rstrip("\r")
        if ending and whole == ending:
            continue  # the value is empty: the line is what printed after it
        if ending and whole.endswith(ending):
            held.append(whole[: -len(ending)])
        for printed_line in held:
            shown.append(f"{kinds.printing_command[printed]}\n")
            start = length + len(shown[-1])
            values.append((start, start + len(printed_line)))
            surely.append(sure)
            shown.append(f"{printed_line}\n")
            length = values[-1][1] + 1
    text = "".join(shown)
    starts = [start for start, _ in values]  # in order: a finding is in the last before it
    found: dict[str, Finding] = {}  # each value once, where it was first found
    for finding in scan_text(text, config=config, path="printed.txt", cache=None):
        at = bisect.bisect_right(starts, finding.offset) - 1
        if finding.rule != PRINTED_SECRET.name or at < 0 or finding.offset >= values[at][1]:
            continue
        value = text[finding.offset : finding.end_offset]
        # A line another command may have printed is taken only when it reads as generated:
        # a file's or a branch's name reads as written (`Makefile`, `setup-Config2024.yaml`).
        if surely[at] or not reads_as_written(value):
            found.setdefault(value, finding)
    return (text, list(found.values())) if found else None


def _pairs(
    kinds: _Kinds,
    lines: list[str],
    head: int,
    end: int,
    trailing: int,
    *,
    succeeded: bool,
    harness: int,
) -> dict[tuple[tuple[int, int], int], bool]:
    """Each printing command (its place, and the line of its own it prints) with each line
    of the output from `head` to `end` it may have printed, and whether that line is surely
    its (not when another command may have printed it: see `_paired`). Of the `head` blank
    lines before them, the first `harness` are the harness's."""
    pairs: dict[tuple[tuple[int, int], int], bool] = {}
    blank = max(0, head - harness)
    forwards = _paired(kinds, range(len(kinds)), end - head, blank, from_start=True)
    if blank and not harness:
        # A blank line no echo printed is the value, empty, or one a harness put before
        # the output (not known here): read as the harness's, the lines after it are the
        # values', none surely (`op read …; ls` printed `\nsetup-Config2024.yaml\n…`,
        # an empty value, or the value after the harness's blank line).
        forwards += _paired(
            kinds, range(len(kinds)), end - head, blank, from_start=True, harness_blank=True
        )
    for (printed, line), sure in forwards:
        pairs[printed, head + line] = pairs.get((printed, head + line), False) or sure
    # Counted from the end: what the last printing commands printed ends the output when
    # what runs after them prints nothing or echoes its lines. Not when the call failed (a
    # printing command that failed printed its error, maybe before the other lines), nor
    # when a command sent to the background may print its lines after theirs.
    counted = succeeded and not kinds.in_background()
    if counted:
        backwards = _paired(
            kinds, reversed(range(len(kinds))), end - head, trailing, from_start=False
        )
        for (printed, line), sure in backwards:
            pair = (printed, end - 1 - line)
            pairs[pair] = pairs.get(pair, False) or sure
    last = kinds.last()
    if head < end and last is not None and kinds[last] == _VALUE:
        # The last command, when it prints a value, and the output's first line, as a
        # terminal shows them when it runs one printing command: a value the pairing above
        # missed (the call failed, a command it does not know printed nothing, or wrote to
        # its error output, which a harness puts after the value) is still found. Asked of
        # an output of one line; of more, when the call succeeded (the last command's
        # status is the call's: one that failed printed no value) and the count from the
        # end did not find what the last command printed, its empty value (a blank last
        # line) or a last line of one run of characters: a last line of words is what
        # another command wrote after it (`git checkout main && op read …`: `Switched to
        # branch 'main'`).
        told = counted and (trailing > 0 or len(lines[end - 1].split()) == 1)
        if end - head == 1 or (succeeded and not told):
            pairs[(last, 0), head] = True
    return pairs


class _Kinds:
    """What each command prints, as far as the pairing knows (`parts` as `_commands` gives
    them), read when the pairing asks: a value, a value each of several variables, a line, a
    line or none, nothing, lines of its own; or lines at any time, sent to the background.
    The output has `lines` lines."""

    def __init__(
        self, parts: list[str], succeeded: bool, lines: int, *, failed: int | None = None
    ) -> None:
        from stet_lsp.gate.rules_generic import PRINTED_SECRET, PRINTING_COMMANDS

        self.parts = parts
        self.failed = failed  # a printing command that surely failed, printing nothing
        self.lines = lines
        self.known: dict[int, str] = {}
        # Each printing command as it is shown, by its place and the line of its own it
        # prints (the first, or the variable's of a print of several): from its name on.
        self.printing_command: dict[tuple[int, int], str] = {}
        # How many lines a print of several variables prints, by its place.
        self.widths: dict[int, int] = {}
        # What a print that ends no line (`echo -n "$X"`, `printf '%s' "$X"`) prints after its
        # value (`printf %s\n "$X"`: `n`), by its place; and, when known, all its line holds
        # after the value (`echo -n "$X"; echo done`: `done`), and the echo that ends it.
        self.suffixes: dict[int, str] = {}
        self.endings: dict[int, str] = {}
        self.ended_by: dict[int, int] = {}
        self.printing = PRINTED_SECRET.pattern
        self.names = tuple({anchor.split()[0] for anchor in PRINTING_COMMANDS})
        # The commands that succeeded, when the call did: its last, and those before it that
        # `&&` joins to it (not after `||`: `… || true` succeeds when what ran before failed).
        self.succeeded: set[int] = set()
        at = self.last() if succeeded else None
        while at is not None and (at == 0 or parts[2 * at - 1] != "||"):
            self.succeeded.add(at)
            at = at - 1 if at > 0 and parts[2 * at - 1] == "&&" else None

    def __len__(self) -> int:
        return (len(self.parts) + 1) // 2

    def __getitem__(self, at: int) -> str:
        if at not in self.known:
            self.known[at] = self._kind(2 * at)
        return self.known[at]

    def last(self) -> int | None:
        """The last command that holds anything but the word that closes a group or a
        body (`}`, `done`, `fi`, `esac`)."""
        at = len(self) - 1
        while at >= 0 and self.parts[2 * at].strip() in ("", "}", "done", "fi", "esac"):
            at -= 1
        return at if at >= 0 else None

    def told(self, at: int) -> bool:
        """Whether the print of several variables at `at`, each printed or not, surely
        printed them all: every other command prints nothing or an echo's line, and the
        output has a line more than theirs for each variable."""
        echoed = 0
        for other in range(len(self)):
            if other != at and self[other] not in (_NOTHING, _LINE):
                return False
            echoed += self[other] == _LINE
        return self.lines - echoed == self.widths[at]

    def in_background(self) -> bool:
        """Whether a command that may print lines runs in the background."""
        return "&" in self.parts[1::2] and any(
            self.parts[index] == "&" and self[index // 2] == _ASIDE
            for index in range(1, len(self.parts), 2)
        )

    def _value_printed(self, at: int, name: str) -> str:
        """What a printing command prints: a secret manager's and `echo`'s (`echo
        "$DB_PASSWORD"`, empty when it is not set) and `printf '%s\\n'`'s value, on a line of
        its own; `printenv`'s value, or none when the variable is not set (then it fails);
        the value of `echo -n` and `printf '%s'`, or none, with no line end. Of several
        variables, `printenv` and `printf` print lines, as many as they are set. A
        redirection of its errors (`2>/dev/null`) is no argument."""
        words = _ERRORS_REDIRECTED.sub(" ", name).split()
        if words[0] == "printenv":
            if len(words) != 2:
                return _LINES
            return _VALUE if at in self.succeeded else _MAYBE_VALUE
        if words[0] == "echo":
            if words[1].startswith("-") and "n" in words[1]:
                self.suffixes[at] = ""
                return _UNENDED_VALUE
            return _VALUE
        if words[0] == "printf":
            formatted = len(words) > 1 and words[1] in _PRINTF_FORMATS
            if len(words) != 2 + formatted:
                return _LINES
            if formatted and words[1] == "%s\\n":
                # Unquoted, `%s\n` is `%sn` to the shell: the value, then `n`, and no line
                # end. Paired as a line of its own: the value is in it, what prints next or not.
                self.suffixes[at] = "n"
                return _VALUE
            if formatted and words[1].endswith(("\\n'", '\\n"')):
                return _VALUE
            self.suffixes[at] = ""
            return _UNENDED_VALUE
        if words[0] == "op" and any(
            word in ("-o", "--out-file") or word.startswith("--out-file=") for word in words
        ):
            return _NOTHING  # written to a file
        return _VALUE

    def _each_printed(self, name: str) -> list[str | None] | None:
        """A print of several variables that prints each on a line of its own (`printenv
        DB_PASSWORD API_TOKEN`, `printf '%s\\n' "$DB_PASSWORD" "$API_TOKEN"`): for each line,
        the command that prints it alone when it prints a credential's value, else None.
        None when it is no such print, or prints no credential's value."""
        words = name.split()
        if words[0] == "printenv" and len(words) > 2:
            arguments, variable, command = words[1:], _VARIABLE_NAME, "printenv"
        elif (
            words[0] == "printf"
            and len(words) > 3
            # Quoted: unquoted, the shell reads `%s\\n` as `%sn`, and all goes on one line.
            and words[1] in ("'%s\\n'", '"%s\\n"')
        ):
            arguments, variable, command = (
                words[2:],
                _PRINTF_VARIABLE,
                f"printf {words[1]}",
            )
        else:
            return None
        if not all(variable.fullmatch(argument) for argument in arguments):
            return None
        each = [f"{command} {argument}" for argument in arguments]
        printing = [shown if self.printing.match(shown + _PROBE) else None for shown in each]
        return printing if any(printing) else None

    def _line_ended(self, at: int, kind: str) -> str:
        """What the print at `at`, which ends no line of its own, prints: a line, when an
        `echo` of known words after it surely ends that line (the commands between print
        nothing); else `kind`. Its line's ending is kept when known."""
        suffix = self.suffixes[at]
        after = at + 1
        # (the print never fails: what `&&` joins to it runs; what may fail stops an echo
        # after it)
        joined: tuple[str, ...] = (";", "\n", "&&")
        while after < len(self) and self.parts[2 * after - 1] in joined:
            whole = self.parts[2 * after].strip()
            words = _echoed_words(whole)
            if words is not None:
                self.ended_by[after] = at
                if suffix + words:
                    self.endings[at] = suffix + words
                return _VALUE
            if _SILENT.match(whole) is None:
                break
            joined = (";", "\n")
            after += 1
        else:
            if after == len(self) and suffix:
                self.endings[at] = suffix  # the output's last line: the value, then `n`
        return kind

    def _ends_a_value_s_line(self, at: int) -> bool:
        """Whether the command at `at` is the `echo` that ends the line of a print before it
        that ends none (`_line_ended`)."""
        if _echoed_words(self.parts[2 * at].strip()) is None:
            return False
        before = at - 1
        while before >= 0 and _SILENT.match(self.parts[2 * before].strip()) is not None:
            before -= 1
        if before < 0:
            return False
        self[before]  # (its kind tells which echo ends its line)
        return self.ended_by.get(at) == before

    def _kind(self, index: int) -> str:
        parts = self.parts
        whole = parts[index].strip()
        if not whole or index // 2 == self.failed:
            return _NOTHING
        # The command itself, its name first: not a printing command's text in its arguments
        # (`grep -rl 'echo $API_TOKEN' .`, `git commit -m "… op read …"`).
        name = whole[_PREFIX.match(whole).end() :]  # type: ignore[union-attr]
        each = self._each_printed(name) if len(name) <= _SHOWN_COMMAND else None
        if each is not None:
            # (`printenv` of a variable not set prints no line, and fails)
            printenv = name.startswith("printenv")
            kind = _SOME_VALUES if printenv and index // 2 not in self.succeeded else _VALUES
            self.widths[index // 2] = len(each)
            for line, shown in enumerate(each):
                if shown is not None:
                    self.printing_command[index // 2, line] = shown
        elif (
            len(name) <= _SHOWN_COMMAND
            and name.startswith(self.names)
            and self.printing.match(name + _PROBE) is not None
        ):
            kind = self._value_printed(index // 2, name)
            self.printing_command[index // 2, 0] = name
            if index // 2 in self.suffixes:
                kind = self._line_ended(index // 2, kind)
        elif self._ends_a_value_s_line(index // 2):
            kind = _NOTHING  # its line is the value's, counted with it
        elif _ONE_LINE.match(whole) is not None:
            # `echo "DB:"` before the value; one that runs only when the command before it
            # failed or succeeded, or whose line goes elsewhere, may print none.
            if (index > 0 and parts[index - 1] in ("&&", "||")) or _ELSEWHERE.search(whole):
                kind = _MAYBE_LINE
            else:
                kind = _LINE
        elif _SILENT.match(whole) is not None or (
            "|" not in whole and _TO_FILE.search(whole) is not None
        ):
            kind = _NOTHING
        else:
            kind = _LINES
        if index + 1 < len(parts) and parts[index + 1] == "&" and kind != _NOTHING:
            kind = _ASIDE
        return kind


# An `echo` of words it prints as they are: no flag, variable, command's output, escape,
# pattern or redirection (`echo done`, `echo "all set"`, `echo`).
_ECHOED = re.compile(
    r"echo(?:[ \t]+(?P<words>[^\s$`\\*?\[{~<>|&;()#!-][^$`\\*?\[{~<>|&;()#!]*?))?[ \t]*"
)


def _echoed_words(command: str) -> str | None:
    """The line an `echo` of words prints (without its end), or None when it is no such
    `echo`."""
    echo = _ECHOED.fullmatch(command)
    if echo is None:
        return None
    try:
        words = shlex.split(echo.group("words") or "")
    except ValueError:
        return None
    return None if words and words[0].startswith("-") else " ".join(words)


# The line the 1Password CLI writes when `op read` fails (`[ERROR] 2026/01/01 10:00:00 …`).
_OP_ERROR = re.compile(r"\[ERROR\] [0-9]{4}/[0-9]{2}/[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2} ")
# Commands that run no other program: none of their lines is the CLI's.
_RUNS_NOTHING = frozenset(
    ("ls", "pwd", "whoami", "date", "hostname", "tree", "du", "df", "wc", "stat", "uname", "id")
)
_RUNS_OTHERS = frozenset(("source", ".", "eval", "exec", "trap", "wait"))
_OP_WORD = re.compile(r"(?<![\w.-])op(?![\w.-])")


def _failed_read(kinds: _Kinds, first: str) -> int | None:
    """The call's `op read` when the output's `first` line is its error, as a harness that
    puts the error output first shows it: the call's only `op`, the others commands that
    print nothing, an echo's line or what runs no other program (`ls`, `pwd`); and it did
    not surely succeed. None when it may have printed its value."""
    if _OP_ERROR.match(first) is None:
        return None
    read = None
    for at in range(len(kinds)):
        whole = kinds.parts[2 * at].strip()
        name = whole[_PREFIX.match(whole).end() :]  # type: ignore[union-attr]
        kind = kinds[at]
        word = name.partition(" ")[0]
        # (a script sourced or a command whose output goes to a file may run `op`; an echo of
        # a variable, or whose line goes elsewhere, may print a value the pairing does not
        # read: `op read … || echo "$DB_PASS"`)
        quiet = (
            (kind in (_LINE, _MAYBE_LINE) and _echoed_words(name) is not None)
            or (kind == _NOTHING and _SILENT.match(whole) and word not in _RUNS_OTHERS)
            or word in _RUNS_NOTHING
        )
        if (at, 0) in kinds.printing_command and name.startswith("op read "):
            if read is not None:
                return None
            read = at
        elif not quiet or _OP_WORD.search(whole) is not None or re.search(r"`|\$\(|ERROR", whole):
            return None
    return None if read is None or read in kinds.succeeded else read


def _paired(
    kinds: _Kinds,
    order: Iterable[int],
    count: int,
    blank: int,
    *,
    from_start: bool,
    harness_blank: bool = False,
) -> list[tuple[tuple[tuple[int, int], int], bool]]:
    """Each printing command (its place in `kinds`, and the line of its own it prints) with
    each of the `count` lines that hold anything it may have printed (their place), the
    commands running in the `order` given (`from_start`, or from the end) and printing the
    lines in that order, after `blank` lines an `echo` may have printed; and whether no other
    command may have printed that line. A blank line no echo printed is the value the first
    printing command printed, empty; or, when `harness_blank`, one the harness put before
    the output, and then no line is surely a printing command's."""
    pairs: list[tuple[tuple[int, int], int]] = []
    # The lines the commands so far printed: the echoes' that surely did, those that may
    # have, and the printing commands'; and the lines paired already.
    echoed = maybe = paired = taken = 0
    harnessed = False  # blank lines read as the harness's
    unended = False  # a value with no line end printed: what prints next continues its line
    for at in order:
        kind = kinds[at]
        first = max(0, echoed - blank) + paired
        last = min(echoed + maybe + paired, count - 1)
        # (what this one prints, if anything, may be on the lines from `first` on)
        printing = kind in (_LINES, _ASIDE) or (unended and kind != _NOTHING)
        if first > last or last - first >= _CANDIDATES or (unended and kind != _NOTHING):
            break
        if kind in (_VALUE, _MAYBE_VALUE, _UNENDED_VALUE):
            if paired == 0 and blank > echoed + maybe:
                if not harness_blank:
                    break  # a blank line no echo printed: the value this one printed is blank
                blank, harnessed = echoed + maybe, True
            if kind == _UNENDED_VALUE and not from_start and echoed + maybe + paired:
                break  # its value begins the line a command after it printed
            # Each printing command prints its value on a line of its own, in order: each
            # line it may have printed is paired with it once.
            pairs += (((at, 0), line) for line in range(max(first, taken), last + 1))
            if kind == _VALUE:
                taken = max(taken, last + 1)
                paired += 1
            else:
                # (`printenv X` of a variable not set, `echo -n "$X"` of an empty one,
                # print none: the line may be another's)
                maybe += 1
                unended = from_start and kind == _UNENDED_VALUE
        elif kind in (_VALUES, _SOME_VALUES):
            # A line each, in order, where the lines before them are known and theirs are
            # there; each variable's own when they surely all printed one.
            width = kinds.widths[at]
            if first != echoed + maybe + paired or first + width > count:
                break
            if paired == 0 and blank > echoed + maybe:
                if not harness_blank:
                    break
                blank, harnessed = echoed + maybe, True
            if kind == _SOME_VALUES and not kinds.told(at):
                break
            printed = range(width) if from_start else reversed(range(width))
            pairs += (
                ((at, variable), first + line)
                for line, variable in enumerate(printed)
                if (at, variable) in kinds.printing_command
            )
            taken = max(taken, first + width)
            paired += width
        elif kind == _MAYBE_LINE:
            maybe += 1
        elif kind == _LINE:
            echoed += 1
        elif kind != _NOTHING:
            break  # what this one printed, if anything, stands between the lines and theirs
    else:
        return [(pair, not harnessed) for pair in pairs]
    # A line from `first` on may be one the command the pairing stopped at printed (`test -f
    # x || echo missing; op read …; ls`: the second line is the value or what `ls` printed):
    # only the lines before it are known; those after it are still the printing commands'
    # when that command prints lines of its own, which a generated value is not
    # (`printenv X; ls`: the first line is the value, or what `ls` printed).
    return [
        (pair, pair[1] < first and not harnessed) for pair in pairs if pair[1] < first or printing
    ]


def _commands(command: str) -> list[str]:
    """The commands a shell runs one after another, each followed by what ends it (as
    `re.split` with a group gives them): a `;` or a new line inside quotes, a comment,
    `$(…)` or a here-document's body ends none. A quote never closed holds the rest, as the
    shell would read it."""
    parts: list[str] = []
    start = depth = position = line = 0
    bodies = _HereDocuments(command)
    while (token := _SHELL_TOKEN.search(command, position)) is not None:
        position = token.end()
        if token.group("unclosed") is not None:
            break
        if token.group("open") is not None:
            depth += 1
        elif token.group("close") is not None:
            depth = max(0, depth - 1)
        elif token.group("end") is not None and depth == 0:
            parts += (command[start : token.start()], token.group())
            start = token.end()
            if token.group() == "\n":
                # The lines of the here-documents the line opened are none of its commands:
                # the next starts after the last one's closing word.
                position = start = bodies.end(line, token.start(), token.end())
                line = start
    parts.append(command[start:])
    return parts


# A here-document's operator (`<<EOF`, `<< 'EOF'`, `<<-"EOF"`; not `<<<`) and its word, or
# arithmetic (`(( n++ ))`, `$((1 << 2))`), read past whole: its `<<` shifts bits. Arithmetic
# never closed on its line holds the rest of it.
_HERE_DOCUMENT = re.compile(
    r"\(\((?:[^)]|\)(?!\)))*(?:\)\)|$)"
    r"|(?<!<)<<(?!<)(-?)[ \t]*(?:'([^'\n]+)'|\"([^\"\n]+)\"|\\?([A-Za-z_][\w.-]*))"
)


class _HereDocuments:
    """Where the here-documents a line of a command opens end: after the line that holds
    the word alone (its tabs before it read past for `<<-`)."""

    def __init__(self, command: str) -> None:
        self.command = command
        self.lines: dict[str, list[int]] | None = None  # each line's starts, by its text
        self.untabbed: dict[str, list[int]] = {}

    def end(self, line: int, line_end: int, body: int) -> int:
        """Where the command after the line from `line` to `line_end` starts: at `body`, or
        after the here-documents the line opens, when each is closed."""
        text = self.command[line:line_end]
        if "<<" not in text:
            return body
        for operator in _HERE_DOCUMENT.finditer(text):
            word = operator.group(2) or operator.group(3) or operator.group(4)
            if word is None:
                continue  # arithmetic
            closing = self._line(word, body, tabs=operator.group(1) == "-")
            if closing is None:
                return body  # never closed: read as commands, not as a body
            body = closing
        return body

    def _line(self, word: str, after: int, *, tabs: bool) -> int | None:
        """The end of the first line from `after` on that holds `word` alone."""
        if self.lines is None:
            # Each line once, by its text and by its text after its tabs, however many
            # here-documents are looked for.
            self.lines, self.untabbed = {}, {}
            start = 0
            for line in self.command.split("\n"):
                text = line.rstrip("\r")
                self.lines.setdefault(text, []).append(start)
                self.untabbed.setdefault(text.lstrip("\t"), []).append(start)
                start += len(line) + 1
        starts = (self.untabbed if tabs else self.lines).get(word, [])
        at = bisect.bisect_left(starts, after)
        if at == len(starts):
            return None
        end = self.command.find("\n", starts[at])
        return len(self.command) if end < 0 else end
