"""Comments in source text, per language, found line by line so edits re-lex only what changed.

A small lexer that knows each language's line comments, block comments and string literals
(so a marker inside a string is not a comment), with the forms that hide a comment opener
or a quote: raw strings (Rust's r#"…"#, Go's backticks, C#'s verbatim @"…" and its raw
strings of three quotes or more), Rust's char literals beside its lifetimes and its nested
block comments, YAML's quotes that open only where a scalar starts and its block scalars
(`key: |`, whose more indented lines are text), the shell's here-documents, Lua's long
strings and comments (`[==[ … ]==]`), JavaScript's regular expression literals where an
expression starts (`/"/`), Python's f-strings, whose replacement fields hold expressions
(strings in the same quotes, `f"{d["k"]}"`, and comments over lines, as in Python 3.12),
and a `#` that opens a comment only where a word starts (YAML, the shell). It is linear in
the text: one regular expression finds the tokens, skipping to the characters they can
start with.

It keeps the lexer state at the start of every line; after an edit it re-lexes from the
first changed line until the state at a line start matches what it was before, which for
ordinary edits is right after the edit.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import islice
from pathlib import PurePosixPath


@dataclass(frozen=True)
class Quote:
    """A string literal. `opener` is a regular expression for what opens it, one branch that
    starts with a literal character; the string ends at `closer`, or when that is None at
    the opener's quote characters in reverse order (the opener without its leading letters,
    `@` and `$`: Rust's `r##"` ends at `"##`, a C# raw string's run of quotes at as many
    quotes, `@"` at `"`)."""

    opener: str
    closer: str | None = None
    escape: str = "\\"
    """The escape character ("" for none): a closer after an odd number of them goes on."""
    doubled: bool = False
    """The closer written twice stands for itself (YAML's `''`, C#'s verbatim `""`)."""
    multiline: bool = False
    scalar_start: bool = False
    """Opens only where a YAML scalar starts: at the line's start (after blanks) or after one
    of `: - ? [ { ,`, so an apostrophe in plain text (`msg: don't`) opens nothing."""


def quotes(
    *delimiters: str, multiline: tuple[str, ...] = (), escape: str = "\\"
) -> tuple[Quote, ...]:
    """Quotes that open and close with the same literal delimiter, in the order given (put
    longer delimiters first: three quotes before one)."""
    return tuple(
        Quote(re.escape(delimiter), escape=escape, multiline=delimiter in multiline)
        for delimiter in delimiters
    )


@dataclass(frozen=True, eq=False)  # hashed by identity: the lexer looks it up every line
class Syntax:
    line: tuple[str, ...] = ()
    blocks: tuple[tuple[str, str], ...] = ()
    strings: tuple[Quote, ...] = ()
    """Tried in this order where several open at the same place."""
    comment_after: str | None = None
    """When set, a line comment opens only at the line's start or after one of these
    characters: YAML's and the shell's `#` opens one only where a word starts (`a#b`, `$#`,
    `${#x}` are not comments)."""
    code: tuple[str, ...] = ()
    """Regular expressions (each one branch starting with a literal character) for code that
    holds a quote or comment opener and is neither: Rust's char literals (`'"'`), the
    shell's backslash-quoted characters (`\\#`)."""
    heredocs: bool = False
    """The shell's here-documents (`<<EOF`, `<<-'EOF'`): their lines hold no comment."""
    nested: bool = False
    """Block comments nest (Rust's `/* a /* b */ c */` is one comment)."""
    regex_literals: bool = False
    """JavaScript's regular expression literals (`_REGEX_START`) hold no comment or string."""
    fstrings: bool = False
    """Python's f-strings (and t-strings): the expressions in their replacement fields may
    hold strings in the same quotes (`f"{d["k"]}"`, Python 3.12), nested f-strings, and
    comments where a field goes on over lines."""
    block_scalars: bool = False
    """YAML's block scalars (`key: |`, `- >-`, `key: |2`): the more indented lines after the
    header are text, and hold no comment."""


_C_LIKE = Syntax(line=("//",), blocks=(("/*", "*/"),), strings=quotes('"', "'"))
_HASH = Syntax(line=("#",), strings=quotes('"', "'"))
# A Rust raw string (r"…", r#"…"#, br"…", cr"…") where no identifier goes on.
_RUST_RAW = tuple(
    Quote(f'{prefix}(?<![A-Za-z0-9_]{prefix})#*"', escape="", multiline=True)
    for prefix in ("r", "br", "cr")
)
# A Rust char literal: one character or one escape between apostrophes ('a is a lifetime).
_RUST_ONE_CHAR = r"'(?:[^\\'\n]|\\(?:u\{[0-9A-Fa-f_]{1,8}\}|x[0-9A-Fa-f]{2}|.))'"
# Char literals with code between them that holds no quote or slash (so no other token),
# taken as one token: ['a', 'b', 'c'] costs the lexer one step, not three.
_RUST_CHAR = _RUST_ONE_CHAR + "(?:[^'\"/\n]*+" + _RUST_ONE_CHAR + ")*+"
# A JavaScript regular expression literal (`/"/`, `/\/\/x/`, `/[/"]/g`) where an expression
# starts: after `( , = : [ ! & | ? { ;` (or one blank after it), `=>` or `return`; a `/`
# after a name, a number, `)` or `}` divides. The token is the opening `/`; its body is read
# by `_REGEX_BODY` within `_REGEX_REACH` characters (literals are short), so a line of
# openers that never close costs each a bounded look.
_REGEX_START = (
    r"/(?:(?<=[(,=:\[!&|?{;]/)|(?<=[(,=:\[!&|?{;][ \t]/)|(?<==>/)|(?<==> /)|(?<=return /))"
    r"(?![/*])"
)
_REGEX_BODY = re.compile(r"(?:[^/\\\[\n]|\\.|\[(?:[^\]\\\n]|\\.)*+\])++/[A-Za-z]*+")
_REGEX_REACH = 256
SYNTAXES: dict[str, Syntax] = {
    "python": Syntax(
        line=("#",),
        strings=quotes('"""', "'''", '"', "'", multiline=('"""', "'''")),
        fstrings=True,
    ),
    "javascript": Syntax(
        line=("//",),
        blocks=(("/*", "*/"),),
        strings=quotes("`", '"', "'", multiline=("`",)),
        regex_literals=True,
    ),
    "go": Syntax(
        line=("//",),
        blocks=(("/*", "*/"),),
        strings=(Quote("`", escape="", multiline=True), *quotes('"', "'")),
    ),
    "rust": Syntax(
        line=("//",),
        blocks=(("/*", "*/"),),
        strings=(*_RUST_RAW, Quote('"', multiline=True)),
        code=(_RUST_CHAR,),
        nested=True,
    ),
    "c": _C_LIKE,
    "java": _C_LIKE,
    "csharp": Syntax(
        line=("//",),
        blocks=(("/*", "*/"),),
        strings=(
            Quote('"""+', escape="", multiline=True),  # raw: as many quotes close it
            Quote(r'@\$?"', escape="", doubled=True, multiline=True),  # verbatim
            Quote(r'\$@"', escape="", doubled=True, multiline=True),
            *quotes('"', "'"),
        ),
    ),
    "ruby": Syntax(line=("#",), blocks=(("=begin", "=end"),), strings=quotes('"', "'")),
    "shellscript": Syntax(
        line=("#",),
        # A quote ends with its line: the lexer does not follow quotes nested in "$( … )",
        # and one misread there would otherwise hide every comment after it.
        strings=(Quote(r"\$'"), Quote("'", escape=""), Quote('"')),
        comment_after=" \t;&|()<>",
        code=(r"\\.",),
        heredocs=True,
    ),
    "lua": Syntax(
        line=("--",),
        # Long comments and strings of level 0 to 3 (`--[==[ … ]==]`, `[=[ … ]=]`).
        blocks=tuple((f"--[{'=' * level}[", f"]{'=' * level}]") for level in range(4)),
        strings=(*quotes('"', "'"), Quote(r"\[=*\[", escape="", multiline=True)),
    ),
    "sql": Syntax(line=("--",), blocks=(("/*", "*/"),), strings=quotes("'", '"')),
    "yaml": Syntax(
        line=("#",),
        strings=(
            Quote('"', scalar_start=True),
            Quote("'", escape="", doubled=True, scalar_start=True),
        ),
        comment_after=" \t",
        block_scalars=True,
    ),
    "toml": Syntax(line=("#",), strings=quotes('"""', "'''", '"', "'", multiline=('"""', "'''"))),
    "html": Syntax(blocks=(("<!--", "-->"),)),
    "markdown": Syntax(blocks=(("<!--", "-->"),)),
}
SYNTAXES["typescript"] = SYNTAXES["javascriptreact"] = SYNTAXES["javascript"]
SYNTAXES["typescriptreact"] = SYNTAXES["javascript"]
SYNTAXES["cpp"] = SYNTAXES["objective-c"] = _C_LIKE
SYNTAXES["sh"] = SYNTAXES["bash"] = SYNTAXES["zsh"] = SYNTAXES["shellscript"]
SYNTAXES["xml"] = SYNTAXES["vue"] = SYNTAXES["html"]
SYNTAXES["dockerfile"] = SYNTAXES["make"] = SYNTAXES["makefile"] = _HASH

_EXTENSIONS = {
    ".py": "python", ".pyi": "python", ".js": "javascript", ".mjs": "javascript",
    ".cjs": "javascript", ".jsx": "javascript", ".ts": "typescript", ".tsx": "typescript",
    ".go": "go", ".rs": "rust", ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp",
    ".cxx": "cpp", ".hpp": "cpp", ".hh": "cpp", ".java": "java", ".cs": "csharp",
    ".rb": "ruby", ".sh": "shellscript", ".bash": "shellscript", ".zsh": "shellscript",
    ".lua": "lua", ".sql": "sql", ".yaml": "yaml", ".yml": "yaml", ".toml": "toml",
    ".html": "html", ".htm": "html", ".xml": "xml", ".vue": "html", ".md": "markdown",
    ".markdown": "markdown", ".kt": "java", ".swift": "c", ".scala": "java", ".php": "c",
}  # fmt: skip
_FILE_NAMES = {"Dockerfile": "dockerfile", "Makefile": "make", "Gemfile": "ruby"}


# Any other text: the common line-comment leaders, and no strings (prose has apostrophes).
SYNTAXES["plain"] = Syntax(line=("#", "//", "--", ";"))


def language_of(path: str, language_id: str | None = None) -> str:
    """The syntax name for a document: the editor's language id when known, else by name,
    else plain text."""
    if language_id and language_id in SYNTAXES:
        return language_id
    name = PurePosixPath(path)
    return _FILE_NAMES.get(name.name) or _EXTENSIONS.get(name.suffix.lower()) or "plain"


# Lexer state at a line start: None (code), ("block", index of the block syntax, its depth
# where blocks nest and it is over one, else ""),
# ("string", index of the quote, its closer), ("heredoc", length of the first, the
# here-documents still to end: one a line, each its delimiter after "-" when leading tabs
# are stripped, else "=") or ("arithmetic", depth * _ARITHMETIC + pending, here-documents)
# in the shell's $(( … )) or (( … )) over lines, where << shifts: `depth` of them open, and
# `pending` here-documents opened outside them, whose bodies start on the line after the one
# that closes the last; ("scalar", n, "") in a YAML block scalar whose text is indented more
# than n, ("scalar", n, "=") once its text is known to be indented n; ("fstring", 0, frames)
# in a Python f-string that goes on (see `_fstring`). A state carried from
# line to line is the same string object, so comparing and keeping it costs nothing per line.
State = tuple[str, int, str] | None


@dataclass(frozen=True)
class Comment:
    """The comment text on one line: [start, end) columns (str indices), without delimiters.

    `opener` is the delimiter that opened it on this line ("" for a block comment carried
    over from an earlier line); `closed` says whether a block comment ends on this line.
    """

    start: int
    end: int
    opener: str
    code_before: bool
    """Whether code precedes the comment on this line (a trailing comment)."""
    block: bool
    end_with_delimiter: int
    """Where the comment ends including its closing delimiter."""
    start_with_delimiter: int


def lex_line(line: str, state: State, syntax: Syntax) -> tuple[Sequence[Comment], State]:
    """Comments on one line (an empty tuple for none: most lines, kept for every line of a
    document), and the state the next line starts in. A block comment or string carried
    over from the line before is read as if its opener stood, empty, at column 0.

    Linear in the line's length: the pattern jumps from token to token, every search for a
    closer starts where the last one ended, and nothing is searched twice but a line that
    starts in a string or block comment, first asked whether its closer is in it at all.
    Code without a token, and a line inside a string or block comment, take one search."""
    lexicon = _lexicon(syntax)
    search = lexicon.pattern.search
    if state is not None:
        if state[0] == "heredoc":
            return (), _heredoc_line(line, state)
        if state[0] == "scalar":
            following = _block_scalar_line(line, state)
            if following is not None:
                return (), following
            state = None  # the block scalar ended before this line
        elif state[0] == "string" and state[2] not in line:  # a line inside a string
            return (), state
        elif (
            state[0] == "block" and not syntax.nested and syntax.blocks[state[1]][1] not in line
        ):  # a line inside a block comment
            length = len(line)
            return (Comment(0, length, "", False, True, length, 0),), state
    first_token = search(line) if state is None else None
    if first_token is None and state is None:  # code alone, the most frequent line
        return (), _block_scalar(line, len(line)) if syntax.block_scalars else None
    comments: list[Comment] = []
    position = 0
    length = len(line)
    code_before = False
    only, table = lexicon.only, lexicon.table
    heredocs: list[str] = []  # opened on this line: their bodies start on the next
    arithmetic = 0  # the shell's $(( … )) and (( … )) open here, where << shifts
    carried, pending = "", 0  # here-documents opened before the arithmetic going on here
    if state is not None and state[0] == "fstring":  # carried over from the line before
        position, state, hash_at = _fstring(line, 0, state[2].split(" "), state)
        if hash_at >= 0:
            comments.append(Comment(hash_at + 1, length, "#", True, False, length, hash_at))
        if position < 0:
            return comments or (), state
        code_before = True
    going_on = state if state is not None and state[0] == "arithmetic" else None
    if going_on is not None:
        arithmetic, pending = divmod(going_on[1], _ARITHMETIC)
        carried, state = going_on[2], None
    while position < length or state is not None:
        if state is not None:
            kind, index, closer = state
            token, start, state = "", position, None
        else:
            found = first_token or search(line, position)  # the first was found before
            first_token = None
            if found is None:
                break  # code to the end of the line
            token, start = found.group(), found.start()
            known = only.get(token[0]) or table.get(token)
            kind, index = known if known is not None else lexicon.which(line, start)
            if kind == "code":  # the most frequent token in some languages: taken first
                code_before, position = True, start + len(token)
                continue
            code_before = code_before or bool(line[position:start].strip())
            if kind == "string":
                quote = syntax.strings[index]
                if quote.scalar_start and not _starts_scalar(line, start):
                    code_before, position = True, start + 1
                    continue
                closer = lexicon.closers[index] or _closer(token)
            elif kind == "block":
                if token == "=begin" and start != 0:  # Ruby's block comment starts a line
                    code_before, position = True, start + 1
                    continue
            elif kind == "regex":  # its body, if it closes near; else a `/` that divides
                body_match = _REGEX_BODY.match(line, start + 1, start + 1 + _REGEX_REACH)
                code_before, position = True, body_match.end() if body_match else start + 1
                continue
            elif kind != "line":  # the shell's here-documents and arithmetic
                code_before, position = True, start + len(token)
                if kind == "arithmetic":
                    arithmetic += 1
                elif kind == "arithmetic-end":
                    arithmetic = max(arithmetic - 1, 0)
                elif kind == "heredoc":
                    if arithmetic:
                        position = start + 2  # a shift
                        continue
                    if pending + len(heredocs) < _HEREDOCS_A_LINE:
                        heredocs.append(_heredoc(line, start))
                continue
        body = start + len(token)
        if kind == "line":
            comments.append(Comment(body, length, token, code_before, False, length, start))
            break
        if kind == "block":
            block_opener, block_closer = syntax.blocks[index]
            if syntax.nested:  # how deep: carried in the state ("" is one level)
                depth = int(closer) if token == "" and closer else 1
                close, depth = _nested_close(line, body, block_opener, block_closer, depth)
            else:
                close, depth = line.find(block_closer, body), 1
            end, after_close = (length, length) if close < 0 else (close, close + len(block_closer))
            comments.append(Comment(body, end, token, code_before, True, after_close, start))
            if close < 0:
                return comments or (), ("block", index, "" if depth == 1 else str(depth))
            position, code_before = after_close, True
            continue
        if token and syntax.fstrings and start and line[start - 1] in _PREFIX_LETTERS:
            raw = _fstring_prefix(line, start)
            if raw is not None:  # an f-string: its replacement fields are read too
                close, state, hash_at = _fstring(line, body, [f"L{raw}{closer}"], None)
                if hash_at >= 0:
                    comments.append(Comment(hash_at + 1, length, "#", True, False, length, hash_at))
                if close < 0:
                    return comments or (), state
                position, code_before = close, True
                continue
        quote = syntax.strings[index]
        close = line.find(closer, body)
        if close >= 0:
            past = close + len(closer)
            if (quote.doubled and line.startswith(closer, past)) or (
                quote.escape and close > body and line[close - 1] == quote.escape
            ):
                past = _string_end(line, body, closer, quote)  # doubled or escaped
            close = past
        code_before = True
        if close < 0:
            if quote.multiline:
                return comments or (), ("string", index, closer)
            if syntax.block_scalars:
                return comments or (), None  # nor does it end in a block scalar's header
            break  # an unterminated single-line string ends with its line
        position = close
    if syntax.block_scalars:  # the code (before a comment) may end in a block scalar's header
        return comments or (), _block_scalar(
            line, comments[-1].start_with_delimiter if comments else length
        )
    if heredocs:
        opened = "\n".join(heredocs)
        carried = f"{carried}\n{opened}" if carried else opened
    if arithmetic:  # it goes on over the next line, where << still shifts
        count = arithmetic * _ARITHMETIC + pending + len(heredocs)
        if going_on is not None and going_on[1] == count and going_on[2] is carried:
            return comments or (), going_on
        return comments or (), ("arithmetic", count, carried)
    if carried:
        first = carried.find("\n")
        return comments or (), ("heredoc", first if first >= 0 else len(carried), carried)
    return comments or (), None


_PREFIX_LETTERS = frozenset("fFtTrR")
_F_PREFIXES = frozenset(("f", "rf", "fr", "t", "rt", "tr"))


def _fstring_prefix(line: str, start: int) -> str | None:
    """For a quote at `start` after one of `_PREFIX_LETTERS`: "r" when its prefix makes a raw
    f-string (or t-string), "-" when an f-string, None when it is no f-string (`r"`, `if"`)."""
    first = start - 1
    while first > 0 and start - first < 3 and line[first - 1] in _PREFIX_LETTERS:
        first -= 1
    if first > 0 and (line[first - 1].isalnum() or line[first - 1] == "_"):
        return None  # the letters end a longer name
    prefix = line[first:start].lower()
    if prefix not in _F_PREFIXES:
        return None
    return "r" if "r" in prefix else "-"


# What the f-string scanner stops at: in a literal part (its quote's first character,
# braces and backslashes), in a plain string inside an expression (its quote, backslashes),
# in an expression (quotes, brackets, `:` that opens a format spec, `#`) and in a spec.
_F_LITERAL = {quote: re.compile(rf"[{quote}{{}}\\]") for quote in "\"'"}
_F_STRING = {quote: re.compile(rf"[{quote}\\]") for quote in "\"'"}
_F_EXPRESSION = re.compile(r"[][(){}'\":#]")
_F_SPEC = re.compile(r"[{}'\"]")
_F_DEPTH = 32
"""Frames an f-string may nest (Python allows some 150 levels; real code uses two or three);
deeper, the rest of the line is taken to be in the string, and the next starts afresh."""


def _fstring(line: str, position: int, stack: list[str], carried: State) -> tuple[int, State, int]:
    """Reads an f-string from `position`, in the frames of `stack` (the innermost last):
    `L` a literal part, `Q` a plain string in an expression (each with "r" when raw, else
    "-", then its closing quotes), `E` an expression with its brackets' depth, `S` a format
    spec. Returns where the f-string ends (-1 when it goes on past the line), the state the
    next line starts in, and where a comment opens in an expression (-1: none), which ends
    the line. `carried` is the state the line started in, kept as the same object when the
    line leaves it as it was."""
    length = len(line)
    while stack and len(stack) <= _F_DEPTH:
        frame = stack[-1]
        mode = frame[0]
        if mode == "E":
            found = _F_EXPRESSION.search(line, position)
        elif mode == "S":
            found = _F_SPEC.search(line, position)
        else:
            found = (_F_LITERAL if mode == "L" else _F_STRING)[frame[2]].search(line, position)
        if found is None:
            break
        at = found.start()
        character = line[at]
        position = at + 1
        if mode == "L" or mode == "Q":
            if character == "\\":
                following = line[at + 1 : at + 2]
                if following == "N" and frame[1] != "r" and line.startswith("{", at + 2):
                    named = line.find("}", at + 3)  # \N{NAME}: no replacement field
                    position = named + 1 if named >= 0 else length
                elif following not in ("{", "}"):
                    position = at + 2  # an escaped character (in a raw string, kept as is)
            elif character in "{}":
                if line.startswith(character, position):
                    position += 1  # {{ or }}: a brace in the text
                elif character == "{":
                    stack.append("E0")
            elif line.startswith(frame[2:], at):
                position = at + len(frame) - 2
                stack.pop()
        elif mode == "S":
            if character == "{":
                stack.append("E0")
            elif character == "}":
                stack.pop()
            elif stack[-2][0] == "L" and line.startswith(stack[-2][2:], at):  # its quote: the end
                position = at + len(stack[-2]) - 2
                del stack[-2:]
        elif character == "#":
            return -1, _fstring_state(stack, carried), at
        elif character in "'\"":
            closer = character * 3 if line.startswith(character * 3, at) else character
            position = at + len(closer)
            raw = _fstring_prefix(line, at) if at and line[at - 1] in _PREFIX_LETTERS else None
            if raw is not None:
                stack.append(f"L{raw}{closer}")
            else:
                raw = "r" if at and line[at - 1] in "rR" else "-"
                stack.append(f"Q{raw}{closer}")
        elif character in "([{":
            stack[-1] = f"E{int(frame[1:]) + 1}"
        elif character == ":":
            if frame == "E0":
                stack[-1] = "S"  # the format spec
        elif frame != "E0":
            stack[-1] = f"E{int(frame[1:]) - 1}"  # a closing bracket
        elif character == "}":
            stack.pop()  # the replacement field ends
    if not stack:
        return position, None, -1
    if len(stack) > _F_DEPTH:
        return -1, None, -1
    return -1, _fstring_state(stack, carried), -1


def _fstring_state(stack: list[str], carried: State) -> State:
    """The state after a line that ends inside an f-string: its frames, while the innermost
    is an expression (Python 3.12 lets a replacement field go on over lines) or a
    triple-quoted literal part or string, or a spec in one; else None (the string was never
    closed, and ends with its line)."""
    top = stack[-1]
    if top[0] == "S":  # as its f-string: the literal part below the specs and fields in it
        top = next(frame for frame in reversed(stack) if frame[0] == "L")
    if top[0] != "E" and len(top) < 5:
        return None
    frames = " ".join(stack)
    if carried is not None and carried[2] == frames:
        return carried
    return ("fstring", 0, frames)


def _block_scalar(line: str, end: int) -> State:
    """The state after a YAML line whose code, up to `end`, ends in a block scalar's header:
    `|` or `>`, an indentation indicator and a chomping indicator in either order (`|-`,
    `>+`, `|2`, `>2-`), after tags and anchors (`!!str`, `&a`) where a node starts: a
    mapping's value (`key: |`, `- key: |`), a sequence's entry (`- |`), a document (`--- |`)
    or a line alone. Its text is the lines after, more indented than the node holding it
    (the key, the `-`); None when the code ends otherwise.

    Reads back from `end` over the header, blanks and words (each once): one look at the
    last character for most lines."""
    at = end - 1
    while at >= 0 and line[at] in " \t\r":
        at -= 1
    indicators = 0
    while at >= 0 and indicators < 2 and line[at] in _SCALAR_INDICATORS:
        at, indicators = at - 1, indicators + 1
    if at < 0 or line[at] not in "|>":
        return None
    header = at
    given = line[header + 1 : header + 1 + indicators]
    digits = sum(character.isdigit() for character in given)
    if digits > 1 or indicators - digits > 1:
        return None
    at -= 1
    while True:  # blanks, then a tag or an anchor, or the word before them
        if at >= 0 and line[at] not in " \t":
            return None  # `a|`: no header
        while at >= 0 and line[at] in " \t":
            at -= 1
        if at < 0:
            break
        word_end = at
        while at >= 0 and line[at] not in " \t":
            at -= 1
        if line[at + 1] not in "!&":
            at = word_end
            break
    column = len(line) - len(line.lstrip(" "))  # past the indentation and `- `, `? `, `: `
    indicator = -1  # where the last of those stands
    while column + 1 < len(line) and line[column] in "-?:" and line[column + 1] in " \t":
        indicator = column
        column += 1
        while column < len(line) and line[column] in " \t":
            column += 1
    if at < 0:
        parent = column - 1 if indicator < 0 else indicator  # a header alone, or after `- `
    elif at == indicator:
        parent = indicator  # `- |`, `? |`, `: |`
    elif line[at] == ":" and column < at:
        parent = column  # `key: |`: its text is indented past the key
    elif at == 2 and line.startswith("---"):
        parent = -1  # `--- |`: a document that is a block scalar
    else:
        return None
    if digits:
        return ("scalar", parent + int(next(c for c in given if c.isdigit())), "=")
    return ("scalar", parent, "")


_SCALAR_INDICATORS = frozenset("+-123456789")


def _block_scalar_line(line: str, state: tuple[str, int, str]) -> State:
    """The state after a line of a YAML block scalar, or None when the line is no part of
    it (it is lexed as YAML then). Blank lines are part of it; the first other line sets its
    indentation, when its header gave none (`("scalar", n, "")`: more than n); a line
    indented less ends it, and so does a document marker at column 0."""
    _, indent, known = state
    text = line.lstrip(" ")
    if not text or text.isspace():
        return state
    spaces = len(line) - len(text)
    if not known:
        return ("scalar", spaces, "=") if spaces > indent else None
    if spaces >= indent and not (
        spaces == 0 and text.startswith(("---", "...")) and (len(text) == 3 or text[3] in " \t\r")
    ):
        return state
    return None


def _nested_close(
    line: str, position: int, opener: str, closer: str, depth: int
) -> tuple[int, int]:
    """Where a nesting block comment `depth` levels deep at `position` closes on this line
    (-1: it goes on), and how deep it is at the line's end."""
    while True:
        close = line.find(closer, position)
        if close < 0:
            return -1, depth + line.count(opener, position)
        opened = line.find(opener, position, close)
        if opened >= 0:
            depth, position = depth + 1, opened + len(opener)
            continue
        depth -= 1
        if depth == 0:
            return close, 1
        position = close + len(closer)


def _starts_scalar(line: str, start: int) -> bool:
    """Whether a YAML scalar may start at `start`: nothing but blanks before it on the line,
    or one of `: - ? [ { ,` before those blanks. Scans back over blanks only, which no token
    search passes twice."""
    before = start - 1
    while before >= 0 and line[before] in " \t":
        before -= 1
    return before < 0 or line[before] in ":-?[{,"


def _closer(opener: str) -> str:
    """A string's closer from its opener: the quote characters in reverse order, brackets
    turned (Lua's `[==[` ends at `]==]`)."""
    return opener.lstrip("@$abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")[::-1].translate(
        _TURNED
    )


_TURNED = str.maketrans("[]", "][")


# The shell's here-document operator and its delimiter word: quoted ('EOF', "EOF"), after a
# backslash (\EOF) or bare (a name, then anything up to a blank, operator or quote). Not
# the here-string <<<.
_HEREDOC = (
    r"<(?<!<<)<(?P<strip>-?)[ \t]*"
    r"""(?:'(?P<single>[^']*)'|"(?P<double>[^"]*)"|\\?(?P<bare>[A-Za-z_][^\s;&|()<>'"`\\]*))"""
)

_HEREDOC_AT = re.compile(_HEREDOC)

_HEREDOCS_A_LINE = 16
"""Here-documents a line may open (more are read as code), so a state stays small; as many
may be pending over lines of arithmetic."""

_ARITHMETIC = _HEREDOCS_A_LINE + 1
"""An arithmetic state's depth and pending here-documents are one number: one more than
could be pending per level of depth."""


def _heredoc(line: str, start: int) -> str:
    found = _HEREDOC_AT.match(line, start)
    assert found is not None  # the token pattern matched it there
    groups = found.groupdict()
    delimiter = next(
        groups[name] for name in ("single", "double", "bare") if groups[name] is not None
    )
    return ("-" if groups["strip"] else "=") + delimiter


def _heredoc_line(line: str, state: tuple[str, int, str]) -> State:
    """The state after a line of a here-document's body: the next here-document (or code)
    once the line is the delimiter alone (after leading tabs, with `<<-`). The delimiter is
    compared where it stands in the state, never copied: a line costs its own length."""
    _, first, pending = state
    text = line[:-1] if line.endswith("\r") else line
    if pending[0] == "-":
        text = text.lstrip("\t")
    if len(text) != first - 1 or not pending.startswith(text, 1):
        return state
    if first == len(pending):
        return None  # the last one ended
    rest = pending[first + 1 :]
    end = rest.find("\n")
    return ("heredoc", end if end >= 0 else len(rest), rest)


class _Lexicon:
    """A syntax's tokens: one pattern for everything that opens a comment or a string (or is
    code holding such an opener), so the lexer jumps from token to token instead of looking
    at every character. At one position the first alternative that matches is the token:
    block openers (Lua's "--[[" starts with "--"), line comments (longer first), strings in
    their order, code, the shell's here-documents and arithmetic.

    Every alternative is one branch starting with a literal character, and the pattern has
    no groups: either would keep the regex engine from skipping to the characters a token
    can start with. Where a comment opens only after some characters (`comment_after`) or a
    quote only where a YAML scalar starts, a lookbehind after the literal says so, and the
    pattern passes over a `#` or an apostrophe inside a word without stopping there.

    The token's alternative is then known from its first character when only one
    alternative starts with it, or from its text when it is a literal that no alternative
    before it could have matched; else it is the first of them that matches there."""

    def __init__(self, syntax: Syntax) -> None:
        alternatives: list[tuple[str, str, int]] = []  # (regular expression, kind, index)
        for kind, tokens in (
            ("block", [opener for opener, _ in syntax.blocks]),
            ("line", list(syntax.line)),
        ):
            for token in sorted(tokens, key=len, reverse=True):
                index = tokens.index(token) if kind == "block" else 0
                expression = re.escape(token)
                if kind == "line" and syntax.comment_after is not None:
                    after = "".join(re.escape(character) for character in syntax.comment_after)
                    expression += f"(?<![^{after}]{expression})"
                alternatives.append((expression, kind, index))
        for n, quote in enumerate(syntax.strings):
            expression = quote.opener
            if quote.scalar_start:
                assert _literal_closer(expression), f"{expression!r} is no literal"
                expression += rf"(?<![^ \t:?\[{{,\-]{expression})"  # see _starts_scalar
            alternatives.append((expression, "string", n))
        alternatives += [(code, "code", 0) for code in syntax.code]
        if syntax.regex_literals:
            alternatives.append((_REGEX_START, "regex", 0))
        if syntax.heredocs:
            alternatives += [
                (_HEREDOC, "heredoc", 0),
                (r"\$\(\(", "arithmetic", 0),
                (r"\(\(", "arithmetic", 0),
                (r"\)\)", "arithmetic-end", 0),
            ]
        self.by_first: dict[str, list[tuple[re.Pattern[str], str, int]]] = {}
        for expression, kind, index in alternatives:
            escaped = expression.startswith("\\")
            first = expression[1] if escaped else expression[0]
            assert escaped or first not in "([.^$\\", f"{expression!r} starts with no literal"
            self.by_first.setdefault(first, []).append((re.compile(expression), kind, index))
        self.only = {
            first: (found[0][1], found[0][2])
            for first, found in self.by_first.items()
            if len(found) == 1
        }
        """The alternative of a token by its first character, where one starts with it."""
        self.table: dict[str, tuple[str, int]] = {}
        """The alternative of a token by its text: a literal that no alternative before it
        could have matched as that text (C#'s lone quote, after its raw-string opener of
        three quotes or more), the first of equal ones."""
        for found in self.by_first.values():
            for number, (compiled, kind, index) in enumerate(found):
                literal = re.sub(r"\\(.)", r"\1", compiled.pattern)
                if re.escape(literal) == compiled.pattern and not any(
                    _may_match(earlier.pattern, literal) for earlier, _, _ in found[:number]
                ):
                    self.table[literal] = kind, index
        unnamed = [re.sub(r"\(\?P<\w+>", "(?:", expression) for expression, _, _ in alternatives]
        self.pattern = re.compile("|".join(unnamed) if unnamed else "(?!)")
        self.closers = tuple(
            quote.closer if quote.closer is not None else _literal_closer(quote.opener)
            for quote in syntax.strings
        )
        """Each quote's closer when it does not depend on the opener's text, else ""."""

    def which(self, line: str, start: int) -> tuple[str, int]:
        """The kind and index of the alternative that matched at `start`, where neither
        `only` nor `table` tells."""
        for expression, kind, index in self.by_first[line[start]]:
            if expression.match(line, start):
                return kind, index
        raise AssertionError(f"no alternative matches at {start} in {line!r}")


def _may_match(expression: str, text: str) -> bool:
    """Whether a match of `expression` somewhere could be `text`. Told by matching the text
    alone, unless the expression looks around or holds an anchor (which the text alone
    does not show); then it may."""
    if re.escape(literal := re.sub(r"\\(.)", r"\1", expression)) == expression:
        return literal == text
    return re.fullmatch(expression, text) is not None or any(
        sign in expression for sign in ("(?=", "(?!", "(?<", "\\b", "\\B", "\\A", "\\Z", "^", "$")
    )


def _literal_closer(opener: str) -> str:
    literal = re.sub(r"\\(.)", r"\1", opener)
    return _closer(literal) if re.escape(literal) == opener else ""


@lru_cache(maxsize=64)
def _lexicon(syntax: Syntax) -> _Lexicon:
    return _Lexicon(syntax)


def _string_end(line: str, position: int, closer: str, quote: Quote) -> int:
    """The index just past the string's closer, or -1 when the string goes on."""
    escape = quote.escape
    while True:
        close = line.find(closer, position)
        if close < 0:
            return -1
        if quote.doubled and line.startswith(closer, close + len(closer)):
            position = close + 2 * len(closer)
            continue
        if escape:
            backslashes = 0
            cursor = close - 1
            while cursor >= position and line[cursor] == escape:
                backslashes += 1
                cursor -= 1
            if backslashes % 2:
                position = close + 1
                continue
        return close + len(closer)


class CommentIndex:
    """Comments of a whole document, kept current under edits by re-lexing changed lines."""

    def __init__(self, lines: list[str], syntax: Syntax, lex: bool = True) -> None:
        """`lex=False` for a document whose comments nobody reads (Stet's own files): the
        lines are taken to hold none, and only edited lines are lexed."""
        self.syntax = syntax
        self.starts: list[State] = []
        self.comments: list[Sequence[Comment]] = []
        if lex:
            self._relex(lines, 0, None, len(lines))
        else:
            self.starts = [None] * len(lines)
            self.comments = [()] * len(lines)

    def lex_steps(self, lines: list[str], step: int) -> Iterator[None]:
        """Lexes `lines` into this index (made from no lines), `step` lines at a time,
        pausing after each step: a long text lexed between other work."""
        state: State = None
        syntax, starts, comments = self.syntax, self.starts, self.comments
        for first in range(0, len(lines), step):
            for line in lines[first : first + step]:
                found, following = lex_line(line, state, syntax)
                starts.append(state)
                comments.append(found)
                state = following
            yield

    def _extend(self, lines: Iterable[str], state: State) -> None:
        """Lexes `lines`, the first starting in `state`, onto the end of this index."""
        syntax, starts, comments = self.syntax, self.starts, self.comments
        for line in lines:
            found, following = lex_line(line, state, syntax)
            starts.append(state)
            comments.append(found)
            state = following

    def update(
        self, lines: list[str], first: int, removed: int, added: int, limit: int | None = None
    ) -> int | None:
        """Lines [first, first+removed) were replaced by `added` lines; `lines` is the new text.
        Returns how many lines were re-lexed; None when that would pass `limit` (a string
        opened above thousands of lines): the index is then to be lexed again whole."""
        self.splice(first, removed, added)
        try:
            return self.relex(lines, first, first + added - 1, limit)
        except _PastLimit:
            return None

    def splice(self, first: int, removed: int, added: int) -> None:
        """Lines [first, first+removed) were replaced by `added` lines, not lexed yet."""
        self.starts[first : first + removed] = [None] * added
        self.comments[first : first + removed] = [()] * added

    def relex(self, lines: list[str], first: int, last: int, limit: int | None = None) -> int:
        """Lexes lines `first` to `last` of `lines` (which changed), then on until a line
        starts in the state it started in before. Returns how many lines were lexed; raises
        _PastLimit when that would pass `limit`."""
        state: State = None
        if 0 < first <= len(self.starts):
            _, state = lex_line(lines[first - 1], self.starts[first - 1], self.syntax)
        return self._relex(lines, first, state, last, limit)

    def catch_up(
        self, lines: list[str], edits: Iterable[tuple[int, int, int]], limit: int | None = None
    ) -> int | None:
        """The index of an earlier text brought to `lines`, that text with `edits` (each
        (first, removed, added), as `update` takes them) made in order since: the edits are
        spliced in, then the lines they touched lexed, each stretch of them on its own.
        Returns how many lines were lexed; None when a stretch's relex would pass `limit`
        (the index is then to be lexed again whole)."""
        spans: list[tuple[int, int]] = []
        for first, removed, added in edits:
            self.splice(first, removed, added)
            spans = _widened(spans, first, removed, added)
        try:
            return sum(self.relex(lines, min(low, len(lines)), high, limit) for low, high in spans)
        except _PastLimit:
            return None

    def _relex(
        self, lines: list[str], first: int, state: State, stop_after: int, limit: int | None = None
    ) -> int:
        """Lex from `first`, which starts in `state`; past `stop_after` stop as soon as a line
        starts in the state it started in before (what follows is unchanged); _PastLimit
        once `limit` lines past it were lexed."""
        count = len(lines)
        del self.starts[count:]
        del self.comments[count:]
        number = first
        while number < count:
            if number == len(self.starts):  # nothing lexed from here on: lex it straight
                self._extend(islice(lines, number, None), state)
                return count - first
            known = number < len(self.starts)
            if number > stop_after and known and self.starts[number] == state:
                break
            if limit is not None and number - stop_after > limit:
                raise _PastLimit
            found, following = lex_line(lines[number], state, self.syntax)
            if known:
                self.starts[number] = state
                self.comments[number] = found
            else:
                self.starts.append(state)
                self.comments.append(found)
            state = following
            number += 1
        return number - first


class _PastLimit(Exception):
    """A relex would go on past its limit."""


def _widened(
    spans: list[tuple[int, int]], first: int, removed: int, added: int
) -> list[tuple[int, int]]:
    """The stretches of lines (first, last; in order, apart) touched by earlier edits and by
    this one, in the text after it."""
    shift = added - removed
    low, high = first, max(first, first + added - 1)
    kept: list[tuple[int, int]] = []
    for start, end in spans:
        if end < first:
            kept.append((start, end))  # above the edit
        elif start >= first + removed:
            kept.append((start + shift, end + shift))  # below it: moved
        else:  # among the lines it replaced
            low = min(low, start)
            high = max(high, end + shift if end >= first + removed else high)
    kept.append((low, high))
    kept.sort()
    merged: list[tuple[int, int]] = []
    for start, end in kept:
        if merged and start <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged
