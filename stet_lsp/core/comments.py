"""Comments in source text, per language, found line by line so edits re-lex only what changed.

A small lexer that knows each language's line comments, block comments and string literals
(so a marker inside a string is not a comment). It keeps the lexer state at the start of
every line; after an edit it re-lexes from the first changed line until the state at a line
start matches what it was before, which for ordinary edits is right after the edit.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import PurePosixPath


@dataclass(frozen=True)
class Syntax:
    line: tuple[str, ...] = ()
    blocks: tuple[tuple[str, str], ...] = ()
    strings: tuple[str, ...] = ()
    """String delimiters, longest first; a string ends at the same delimiter."""
    multiline_strings: tuple[str, ...] = ()
    escape: str = "\\"


_C_LIKE = Syntax(line=("//",), blocks=(("/*", "*/"),), strings=('"', "'"))
_HASH = Syntax(line=("#",), strings=('"', "'"))
SYNTAXES: dict[str, Syntax] = {
    "python": Syntax(
        line=("#",),
        strings=('"""', "'''", '"', "'"),
        multiline_strings=('"""', "'''"),
    ),
    "javascript": Syntax(
        line=("//",), blocks=(("/*", "*/"),), strings=("`", '"', "'"), multiline_strings=("`",)
    ),
    "go": Syntax(
        line=("//",), blocks=(("/*", "*/"),), strings=("`", '"', "'"), multiline_strings=("`",)
    ),
    "rust": Syntax(line=("//",), blocks=(("/*", "*/"),), strings=('"',)),
    "c": _C_LIKE,
    "java": _C_LIKE,
    "csharp": _C_LIKE,
    "ruby": Syntax(line=("#",), blocks=(("=begin", "=end"),), strings=('"', "'")),
    "shellscript": _HASH,
    "lua": Syntax(line=("--",), blocks=(("--[[", "]]"),), strings=('"', "'")),
    "sql": Syntax(line=("--",), blocks=(("/*", "*/"),), strings=("'", '"')),
    "yaml": _HASH,
    "toml": Syntax(line=("#",), strings=('"""', "'''", '"', "'"), multiline_strings=('"""', "'''")),
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


# Lexer state at a line start: None (code), ("block", index of the block syntax) or
# ("string", its delimiter).
State = tuple[str, int | str] | None


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


def lex_line(line: str, state: State, syntax: Syntax) -> tuple[list[Comment], State]:
    """Comments on one line, and the state the next line starts in. A block comment or string
    carried over from the line before is read as if its opener stood, empty, at column 0."""
    comments: list[Comment] = []
    position = 0
    length = len(line)
    code_before = False
    pattern, table = _tokens(syntax)
    while position < length or state is not None:
        if state is not None:
            kind, carried = state
            token, start, state = "", position, None
            index = carried if isinstance(carried, int) else 0
            delimiter = carried if isinstance(carried, str) else ""
        else:
            found = pattern.search(line, position)
            if found is None:
                return comments, None  # code to the end of the line
            token, start = found.group(), found.start()
            kind, index = table[token]
            delimiter = token
            code_before = code_before or bool(line[position:start].strip())
            if token == "=begin" and start != 0:  # Ruby's block comment starts a line
                code_before, position = True, start + 1
                continue
        body = start + len(token)
        if kind == "line":
            comments.append(Comment(body, length, token, code_before, False, length, start))
            return comments, None
        if kind == "block":
            closer = syntax.blocks[index][1]
            close = line.find(closer, body)
            end, after = (length, length) if close < 0 else (close, close + len(closer))
            comments.append(Comment(body, end, token, code_before, True, after, start))
            if close < 0:
                return comments, ("block", index)
            position, code_before = after, True
            continue
        close = _string_end(line, body, delimiter, syntax.escape)
        code_before = True
        if close < 0:
            if delimiter in syntax.multiline_strings:
                return comments, ("string", delimiter)
            return comments, None  # an unterminated single-line string ends with its line
        position = close
    return comments, state


@lru_cache(maxsize=64)
def _tokens(syntax: Syntax) -> tuple[re.Pattern[str], dict[str, tuple[str, int]]]:
    """One pattern for everything that opens a comment or a string, so the lexer jumps from
    token to token instead of looking at every character. At one position block openers win
    over line comments (Lua's "--[[" starts with "--"), and longer tokens over shorter."""
    table: dict[str, tuple[str, int]] = {}
    ordered = []
    for kind, tokens in (
        ("block", [opener for opener, _ in syntax.blocks]),
        ("line", list(syntax.line)),
        ("string", list(syntax.strings)),
    ):
        for token in sorted(tokens, key=len, reverse=True):
            if token not in table:
                table[token] = (kind, tokens.index(token) if kind == "block" else 0)
                ordered.append(token)
    if not ordered:
        return re.compile(r"(?!)"), table
    return re.compile("|".join(re.escape(token) for token in ordered)), table


def _string_end(line: str, position: int, delimiter: str, escape: str) -> int:
    """The index just past the closing delimiter, or -1 when the string goes on."""
    while True:
        close = line.find(delimiter, position)
        if close < 0:
            return -1
        backslashes = 0
        cursor = close - 1
        while cursor >= position and line[cursor] == escape:
            backslashes += 1
            cursor -= 1
        if backslashes % 2 == 0:
            return close + len(delimiter)
        position = close + 1


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

    def update(self, lines: list[str], first: int, removed: int, added: int) -> int:
        """Lines [first, first+removed) were replaced by `added` lines; `lines` is the new text.
        Returns how many lines were re-lexed."""
        state: State = None
        if first > 0:
            _, state = lex_line(lines[first - 1], self.starts[first - 1], self.syntax)
        self.starts[first : first + removed] = [None] * added
        self.comments[first : first + removed] = [()] * added
        return self._relex(lines, first, state, first + added - 1)

    def _relex(self, lines: list[str], first: int, state: State, stop_after: int) -> int:
        """Lex from `first`, which starts in `state`; past `stop_after` stop as soon as a line
        starts in the state it started in before (what follows is unchanged)."""
        count = len(lines)
        del self.starts[count:]
        del self.comments[count:]
        number = first
        while number < count:
            known = number < len(self.starts)
            if number > stop_after and known and self.starts[number] == state:
                break
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
