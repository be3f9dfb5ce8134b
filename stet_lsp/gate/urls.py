"""Percent-encoded URLs: the values behind `%XX` escapes, mapped back to the raw text.

Only escapes that decode to a character that is not a URL delimiter are decoded, so the
URL keeps its structure (userinfo, path, query) and the rules see `ghp_A...` where the text
has `ghp_%41...`. A span found in the decoded URL maps back to whole escape sequences.
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
        if "=" not in token and "@" not in token and "://" not in token:
            continue
        view = _decode(text, start, end)
        if view is not None:
            views.append(view)
    return views


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
