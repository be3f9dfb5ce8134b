"""A token wrapped onto the lines after it: a terminal, a console library (`rich`) or
`base64` cuts a long value at its width, and a transcript stores the cut as it was printed
(a raw newline, or `\\n` in a JSON string). A rule finds the value up to the line's end; the
lines that go on with it, each a run of a token's characters alone, are the same value."""

from __future__ import annotations

import re

from stet_lsp.gate import generated, heuristics
from stet_lsp.gate.spans import Span

# A line break as text stores it: raw in a file, escaped in a JSON string (or a log's repr).
_RAW_BREAK = re.compile(r"\r?\n|\\r\\n|\\n")
_ESCAPED_BREAK = re.compile(r"\\r\\n|\\n")
# A whole line of a token's characters (base64's padding at its end only).
_LINE_RUN = re.compile(r"[A-Za-z0-9+/_\-]{8,512}={0,2}")
# The value's last piece, shorter than a line: taken only after lines all cut at one width.
_LAST_PIECE = re.compile(r"[A-Za-z0-9+/_\-]{1,7}={0,2}")
# Where the line a value starts on starts: after a break, raw or escaped (in JSON also a
# string's opening quote).
_LINE_STARTS = ("\n", "\\n")
_JSON_LINE_STARTS = ("\\n", '"')
# What ends a line that holds nothing but the run: a break, a closing quote, the text's end.
_LINE_END = re.compile(r"\r?\n|\\[nr]|[\"'`]|\Z")
_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-")
_HEX = frozenset("0123456789abcdefABCDEF")
_MOST_LINES = 16
# Widths a program cuts its output at without a terminal to ask: PEM's and `openssl base64`'s
# 64, `base64`'s and MIME's 76, `textwrap`'s 70, `fold`'s and `rich`'s 80, and terminals' usual
# ones. A value's first line as wide says it was cut, though it was wrapped once only.
_CUT_WIDTHS = frozenset({64, 70, 72, 76, 79, 80, 100, 120, 132})


# A quoted value's literal continued by another piece of token characters in the same quotes:
# joined by `+` or by the pieces' adjacency (Python's, C's), perhaps over a line break (a
# backslash before it in a shell or Python). In JSON text the quotes are escaped.
_NEXT_PIECE = re.compile(
    r"(?P<quote>[\"'])[ \t]{0,8}\+?[ \t]{0,8}(?:\\?\r?\n[ \t]{0,40}\+?[ \t]{0,8})?"
    r"(?P=quote)(?P<piece>[A-Za-z0-9+/_\-]{1,512}={0,2})(?P=quote)"
)
_JSON_NEXT_PIECE = re.compile(
    r"(?P<quote>\\\"|')[ \t]{0,8}\+?[ \t]{0,8}(?:(?:\\\\)?\\n[ \t]{0,40}\+?[ \t]{0,8})?"
    r"(?P=quote)(?P<piece>[A-Za-z0-9+/_\-]{1,512}={0,2})(?P=quote)"
)


def extend_wrapped(text: str, spans: list[Span], as_json: bool) -> list[Span]:
    """`spans` (sorted, apart), each that ends a line in a token's character run on over the
    lines after it that read as the rest of the value; never into another span. In JSON only
    an escaped break joins: a raw one ends a record."""
    extended = []
    for index, span in enumerate(spans):
        limit = spans[index + 1].start if index + 1 < len(spans) else len(text)
        end = span.end
        if end > span.start and text[end - 1] in _TOKEN_CHARS:
            end = _wrapped_end(text, span.start, end, limit, as_json)
            end = _joined_piece_end(text, span.start, end, limit, as_json)
        extended.append(span if end == span.end else span._replace(end=end))
    return extended


def _wrapped_end(text: str, start: int, end: int, limit: int, as_json: bool) -> int:
    breaks = _ESCAPED_BREAK if as_json else _RAW_BREAK
    hex_value = _HEX.issuperset(text[start:end])
    line_start = max(0, start - 512)
    for mark in _JSON_LINE_STARTS if as_json else _LINE_STARTS:
        found = text.rfind(mark, line_start, start)
        line_start = max(line_start, found + len(mark) if found >= 0 else 0)
    first_width = end - line_start
    widths: list[int] = []
    for _ in range(_MOST_LINES):
        line_break = breaks.match(text, end)
        if line_break is None:
            break
        run = _LINE_RUN.match(text, line_break.end())
        if run is None or run.end() > limit or _LINE_END.match(text, run.end()) is None:
            # A piece shorter than a line ends the value when each line before it was cut at
            # the first one's width, as a terminal or `base64` cuts (two lines at least, or
            # one as wide as a usual cut).
            last = _LAST_PIECE.match(text, line_break.end())
            if (
                (widths or first_width in _CUT_WIDTHS)
                and all(width == first_width for width in widths)
                and last is not None
                and last.end() <= limit
                and _LINE_END.match(text, last.end()) is not None
                # Wrapped once, only the first line's width says it was cut: the piece must
                # read as the value's rest too (`done`, `OK` after it are output).
                and (widths or _continues(last.group(), text[start:end]))
            ):
                end = last.end()
            break
        if not _goes_on(run.group(), hex_value):
            break
        widths.append(run.end() - run.start())
        end = run.end()
        if run.group().endswith("="):
            break  # base64's padding ends the value
    return end


def _continues(piece: str, value: str) -> bool:
    """Whether a short piece reads as the rest of `value`: of the value's alphabet (its kinds
    of characters: lower-case, upper-case, digits, `+/`, `-_`; hex after hex, which is its
    rest even when it spells a word, `fed`), and, after another value, no word (`done`, `OK`)."""
    core = piece.rstrip("=")
    if _HEX.issuperset(value):
        if not _HEX.issuperset(core):
            return False
    elif _is_word(core):
        return False
    return all(_kind(char) in {_kind(other) for other in value} for char in core)


def _is_word(run: str) -> bool:
    """A word a command prints (`done`, `OK`, `Done`): letters, two or more, in one case or
    capitalised, with a vowel, and English letter pairs when three or more; not a generated
    value's letters (`kq`, `Qw`, `Zmq`, `abc`)."""
    if not (run.isalpha() and len(run) >= 2):
        return False
    if not (run.islower() or run.isupper() or run.istitle()):
        return False
    if not any(vowel in run.lower() for vowel in "aeiou"):
        return False
    return len(run) == 2 or generated.letter_pairs_share(run) >= generated.WORDLIKE_PAIRS


def _kind(char: str) -> str:
    if char.isdigit():
        return "0"
    if char.isalpha():
        return "a" if char.islower() else "A"
    return "+" if char in "+/" else "-"


def _goes_on(run: str, hex_value: bool) -> bool:
    """Whether a line of a token's characters reads as the rest of a value: generated, not a
    name or a word; hex (a commit id, a digest) only after a hex value."""
    if not hex_value and _HEX.issuperset(run):
        return False
    if heuristics.is_placeholder(run) or heuristics.is_agent_id(run):
        return False
    core = run.rstrip("=")
    return generated.reads_generated(core, generated.HUMPS_READ) or heuristics.looks_random(
        core, min_length=8, min_entropy=2.5
    )


def _joined_piece_end(text: str, start: int, end: int, limit: int, as_json: bool) -> int:
    """The end of the value's last piece when its literal goes on in another one
    (`"sk-proj-…" "Hk2"`, `'…' +\\n '…'`): a piece of a token's characters alone in the
    same quotes, read as the rest of the value (generated, or shorter than a line of one and
    no word in one case)."""
    piece = (_JSON_NEXT_PIECE if as_json else _NEXT_PIECE).match(text, end)
    if piece is None or piece.end("piece") > limit:
        return end
    quote = piece["quote"]
    if not text.startswith(quote, start - len(quote)):
        return end  # the value is no literal of those quotes
    run = piece["piece"]
    if len(run) >= 8 and not _goes_on(run, _HEX.issuperset(text[start:end])):
        return end
    if len(run) < 8 and run.isalpha() and (run.islower() or run.isupper()):
        return end  # a word (`+ "README"`), not the rest of a key
    return piece.end("piece")
