"""Percent-encoded URLs: the values behind `%XX` escapes, mapped back to the raw text.

Only escapes that decode to a character that is not a URL delimiter are decoded, so the
URL keeps its structure (userinfo, path, query) and the rules see `ghp_A...` where the text
has `ghp_%41...`. A span found in the decoded URL maps back to whole escape sequences.
A token whose escapes hide its structure (a form body or a URL quoted in a parameter, a value
written in escapes alone) is also read with every escape decoded, twice-encoded ones too.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from operator import itemgetter

from stet_lsp.gate.jsonaware import View, view_replacing

# A URL (or a query string) runs to the next space, quote, bracket or backslash (a JSON escape
# ends the raw token; the decoded JSON view is scanned on its own).
_URL_RUN = re.compile(r"[^ \t\r\n\"'`<>()\[\]{}\\]*")
_MAX_URL = 4096
_PERCENT = re.compile(r"%([0-9A-Fa-f]{2})")
_HEX = re.compile(r"[0-9A-Fa-f]+")
_FIRST_TWO = itemgetter(slice(0, 2))
# A Windows `%NAME%` reference (`%DB_PASSWORD%`, `%APPDATA%`) is no escape, though it may
# start like one: its name holds a character no `%XX` run does (`%C3%` is UTF-8's).
_REFERENCE = re.compile(r"%[A-Za-z_][A-Za-z0-9_]*%")
# Any such reference whose name is not hex: a token without one decodes with no look at them.
_NAMED_REFERENCE = re.compile(r"%(?:[A-Fa-f][0-9A-Fa-f]*+)?[G-Zg-z_][A-Za-z0-9_]*+%")
# Delimiters and characters that would change what the URL says are left encoded.
_KEEP_ENCODED = frozenset(":/?#[]@!$&'()*,;=%\"<>\\`{}|^ ")
_HEX_PAIRS = [a + b for a in "0123456789ABCDEFabcdef" for b in "0123456789ABCDEFabcdef"]
# What each escape's two hex digits decode to in a URL's view (None: left encoded), and with
# every escape decoded.
_URL_CHAR = {
    pair: char if char not in _KEEP_ENCODED and char.isprintable() else None
    for pair in _HEX_PAIRS
    for char in [chr(int(pair, 16))]
}


def _escapes_of(chars: dict[str, str | None]) -> re.Pattern[str]:
    """A `%XX` escape `chars` decodes, as one character class per first digit: one search
    tells a token that holds none (an alternation of every pair is twenty times slower)."""
    seconds: dict[str, str] = {}
    for pair, char in chars.items():
        if char is not None:
            seconds[pair[0]] = seconds.get(pair[0], "") + pair[1]
    return re.compile("%(?:" + "|".join(f"{a}[{b}]" for a, b in seconds.items()) + ")")


_URL_DECODED_ESCAPE = _escapes_of(_URL_CHAR)
_ANY_CHAR = {
    pair: char if char.isprintable() or char in "\t\r\n" else None
    for pair in _HEX_PAIRS
    for char in [chr(int(pair, 16))]
}


def url_views(text: str) -> list[View]:
    """Decoded views of the URL-like tokens of `text` that hold a `%XX` escape."""
    views: list[View] = []
    backwards = ""
    size = len(text)
    position = 0
    while (escape := _PERCENT.search(text, position)) is not None:
        hit = escape.start()
        if not backwards:
            backwards = text[::-1]
        floor = max(0, hit - _MAX_URL)
        # The token's start, found in the text read backwards (a run of the same characters).
        back = _URL_RUN.match(backwards, size - hit, size - floor)
        start = hit - (back.end() - back.start()) if back else hit
        run = _URL_RUN.match(text, hit, min(size, hit + _MAX_URL))
        end = run.end() if run else hit
        position = end
        token = text[start:end]
        if "=" in token or "@" in token or "://" in token:
            view = _decode(text, start, end)
            if view is not None:
                views.append(view)
        if _encodes_structure(text, start, end):
            whole = _decode_every_escape(text, start, end)
            if whole is not None:
                views.append(whole)
    return views


def _encodes_structure(text: str, start: int, end: int) -> bool:
    """Whether a token's escapes hide what a rule reads: two delimiters or more (a form body
    or a URL quoted in a parameter, `data=%7B%22api_key%22%3A%22…`,
    `next=https%3A%2F%2F…%3Ftoken%3D…`), or a value written in escapes alone
    (`%67%68%70%5F…`, a token passed through a URL encoder outside a URL)."""
    escapes = text.count("%", start, end)
    if escapes < 2:
        return False
    if escapes >= _ENCODED_VALUE and escapes * 3 * 2 >= end - start:
        return True
    # Most such tokens are a search's words or a path (`q=a%20b`, `%2Fdocs%2F`): read again
    # only where the decoded text names a credential, a header or a URL's userinfo.
    # (An encoder leaves letters as they are: the words show in the raw token; a delimiter
    # encoded twice, `%253A`, is read as encoded once.)
    token = _TWICE_ENCODED.sub("%", text[start:end].lower())
    if not any(hint in token for hint in _CREDENTIAL_HINTS) and not (
        ("@" in token or "%40" in token) and ("://" in token or "%3a%2f%2f" in token)
    ):
        return False
    delimiters = 0
    for match in _NESTED_PERCENT.finditer(text, start, end):
        delimiters += chr(int(match.group(1), 16)) in _KEEP_ENCODED
        if delimiters >= 2:
            return True
    return False


# An escape, or an escape's `%` escaped again (`%253D` is `%3D`, which is `=`), in a text
# encoded twice (a URL in a parameter of a URL in a parameter).
_NESTED_PERCENT = re.compile(r"%(?:25)*([0-9A-Fa-f]{2})")
_TWICE_ENCODED = re.compile(r"%(?:25)+(?=[0-9a-f]{2})")
_ENCODED_VALUE = 8
_CREDENTIAL_HINTS = (
    "key", "token", "secret", "pass", "pwd", "auth", "bearer", "sig", "session", "cookie",
    "credential", "private",
)  # fmt: skip


def _decode(text: str, start: int, end: int) -> View | None:
    """The token with every escape decoded that stands for no delimiter."""
    if _URL_DECODED_ESCAPE.search(text, start, end) is None:
        return None  # a form body's JSON, a quoted URL: delimiters alone, left encoded
    return _decoded_view(text, start, end, _URL_CHAR, _decoded_escapes)


def _decode_every_escape(text: str, start: int, end: int) -> View | None:
    """The token with every escape decoded, a `%25` before one too (encoded twice)."""
    return _decoded_view(text, start, end, _ANY_CHAR, _every_escape, nested=True)


def _decoded_view(
    text: str,
    start: int,
    end: int,
    chars_of: dict[str, str | None],
    replaced: Callable[[str, int, int], Iterator[tuple[int, int, str]]],
    nested: bool = False,
) -> View | None:
    """The token with its escapes (each `%25` before one too when `nested`) decoded by
    `chars_of` (None: left as it is); None when none is."""
    token = text[start:end]
    if _NAMED_REFERENCE.search(token) is not None or (nested and "%25" in token):
        return view_replacing(text, start, end, replaced(text, start, end))
    # Each piece after a `%` starts with the escape's two hex digits (or is no escape): split
    # on the character and looked up in built-ins, it costs a fraction of a regular
    # expression's split.
    pieces = token.split("%")
    escaped = pieces[1:]
    chars = list(map(chars_of.get, map(_FIRST_TWO, escaped)))
    if not any(chars):
        return None
    decoded = [pieces[0]]
    decoded += (
        "%" + piece if char is None else char + piece[2:]
        for char, piece in zip(chars, escaped, strict=True)
    )
    return View("".join(decoded), start, lambda: _marks(start, replaced(text, start, end)))


def _marks(start: int, replaced: Iterator[tuple[int, int, str]]) -> list[tuple[int, int, int]]:
    """A view's marks (as `view_replacing` makes them) of the escapes `replaced`."""
    marks = []
    shrunk = 0
    for raw_start, raw_end, _ in replaced:
        marks.append((raw_start - start - shrunk, raw_start, raw_end))
        shrunk += raw_end - raw_start - 1
    return marks


def _every_escape(text: str, start: int, end: int) -> Iterator[tuple[int, int, str]]:
    for match in _NESTED_PERCENT.finditer(text, start, end):
        reference = _REFERENCE.match(text, match.start(), end)
        if reference is not None and not _HEX.fullmatch(reference.group()[1:-1]):
            continue
        char = chr(int(match.group(1), 16))
        if char.isprintable() or char in "\t\r\n":
            yield match.start(), match.end(), char


def _decoded_escapes(text: str, start: int, end: int) -> Iterator[tuple[int, int, str]]:
    for match in _PERCENT.finditer(text, start, end):
        reference = _REFERENCE.match(text, match.start(), end)
        if reference is not None and not _HEX.fullmatch(reference.group()[1:-1]):
            continue
        char = chr(int(match.group(1), 16))
        if char not in _KEEP_ENCODED and char.isprintable():
            yield match.start(), match.end(), char
