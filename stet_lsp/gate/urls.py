"""Percent-encoded URLs: the values behind `%XX` escapes, mapped back to the raw text.

Only escapes that decode to a character that is not a URL delimiter are decoded, so the
URL keeps its structure (userinfo, path, query) and the rules see `ghp_A...` where the text
has `ghp_%41...`. A span found in the decoded URL maps back to whole escape sequences.
A token whose escapes hide its structure (a form body or a URL quoted in a parameter, a value
written in escapes alone) is also read with every escape decoded, twice-encoded ones too.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from stet_lsp.gate.jsonaware import View, view_replacing

# A URL (or a query string) runs to the next space, quote, bracket or backslash (a JSON escape
# ends the raw token; the decoded JSON view is scanned on its own).
_URL_STOP = frozenset(" \t\r\n\"'`<>()[]{}\\")
_MAX_URL = 4096
_PERCENT = re.compile(r"%([0-9A-Fa-f]{2})")
_HEX = re.compile(r"[0-9A-Fa-f]+")
# A Windows `%NAME%` reference (`%DB_PASSWORD%`, `%APPDATA%`) is no escape, though it may
# start like one: its name holds a character no `%XX` run does (`%C3%` is UTF-8's).
_REFERENCE = re.compile(r"%[A-Za-z_][A-Za-z0-9_]*%")
# Delimiters and characters that would change what the URL says are left encoded.
_KEEP_ENCODED = frozenset(":/?#[]@!$&'()*,;=%\"<>\\`{}|^ ")


def url_views(text: str, hits: list[int]) -> list[View]:
    """Decoded views of the URL-like tokens holding the `%` at each offset in `hits`."""
    views: list[View] = []
    done_until = -1
    for hit in hits:
        if hit < done_until or _PERCENT.match(text, hit) is None:
            continue
        start = hit
        floor = max(0, hit - _MAX_URL)
        while start > floor and text[start - 1] not in _URL_STOP:
            start -= 1
        end = hit
        ceiling = min(len(text), hit + _MAX_URL)
        while end < ceiling and text[end] not in _URL_STOP:
            end += 1
        done_until = end
        token = text[start:end]
        if "=" in token or "@" in token or "://" in token:
            view = _decode(text, start, end)
            if view is not None:
                views.append(view)
        if _encodes_structure(text, start, end):
            whole = view_replacing(text, start, end, _every_escape(text, start, end))
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


def _every_escape(text: str, start: int, end: int) -> Iterator[tuple[int, int, str]]:
    for match in _NESTED_PERCENT.finditer(text, start, end):
        reference = _REFERENCE.match(text, match.start(), end)
        if reference is not None and not _HEX.fullmatch(reference.group()[1:-1]):
            continue
        char = chr(int(match.group(1), 16))
        if char.isprintable() or char in "\t\r\n":
            yield match.start(), match.end(), char


def _decode(text: str, start: int, end: int) -> View | None:
    return view_replacing(text, start, end, _decoded_escapes(text, start, end))


def _decoded_escapes(text: str, start: int, end: int) -> Iterator[tuple[int, int, str]]:
    for match in _PERCENT.finditer(text, start, end):
        reference = _REFERENCE.match(text, match.start(), end)
        if reference is not None and not _HEX.fullmatch(reference.group()[1:-1]):
            continue
        char = chr(int(match.group(1), 16))
        if char not in _KEEP_ENCODED and char.isprintable():
            yield match.start(), match.end(), char
