"""Private-key blocks: a `-----BEGIN … PRIVATE KEY-----` header and the key material after it.

A header joins the `-----END` line of the same label only over key material: base64 lines,
PEM and PGP armor header lines (`Proc-Type:`, `DEK-Info:`, `Version:`, `Comment:`, …), the
PGP checksum, and what writes lines around them in files and transcripts (newlines, also as
`\\n` or `\\\\n` escapes, indentation, quotes and commas of concatenated strings or of a
JSON array of lines, `+` of a diff or of concatenation, comment and quote marks and line
numbers starting a line). Anything else ends the material: code, prose, a JSON key, another
record. Without the matching END line right after it, the header and the material that
follows it are the span (a key cut short loses its body); a header with no base64 run after
it is only a mention, not a secret.

SSH2 private keys (RFC 4716's framing, as SSH.com/Tectia and PuTTYgen export them:
`---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----`, or `---- BEGIN SSH2 PRIVATE KEY ----`) are
blocks the same way, up to `---- END <label> ----`: after the header come header lines
(`Comment: "…"`, `Subject: …`, `x-…: …`; a line ending in `\\` goes on on the next, raw or
escaped) and then the base64 body.

Called only where the prefilter found a header, and bounded by the rule's reach.
"""

from __future__ import annotations

import re
from itertools import chain

# Between key-material tokens: whitespace, quotes, commas, and escapes that stand for them
# (`\n` in a JSON string, `\\n` in a JSON string holding code, `\"`, `\/`, a line continuation),
# the `+` or `.` that joins strings in code;
# at a line's start, the marks of a comment, a quote or a diff (`#`, `>`, `*`, `;`, `+`, `-`)
# and a line number (`cat -n`, an agent's file view: `     2\t`, `     2→`), or what `grep`
# writes before a line (`path:12:`, `path-12-`, `path:`).
_ARMOR_HEADERS = r"(?:Proc-Type|DEK-Info|Version|Comment|Hash|Charset|MessageID)"
# What `grep` writes before each line: `path:12:` (a match with -n), `path-12-` (a context
# line of -A/-B/-C), `12-` (one file's context line), `path:` or `path-` (no -n; the path
# holds `.` or `/`). The path is read to the last separator before a line number (a key's
# line holds neither `:` nor `-`), so a path with `-` in it is read whole.
_GREP_PATH = r"(?!" + _ARMOR_HEADERS + r":)[A-Za-z0-9_./~@+\-]{1,200}"
GREP_PREFIX = (
    r"(?:" + _GREP_PATH + r"[:\-][0-9]{1,7}[:\-]"
    r"|(?=[A-Za-z0-9_~@+\-]{0,100}[./])" + _GREP_PATH + r"[:\-]"
    r"|[0-9]{1,7}+-(?!-))"
)
# The same before a line of a value other rules read over several lines (netrc, YAML blocks,
# a name and its value, PKCS#12), and a match line's `12:` of `grep -n` on one file (here a
# line number's form).
GREP_LINE = r"(?:" + GREP_PREFIX + r"|[0-9]{1,7}+:)"
# Its forms with a line number (`-n`): a path alone, `app.version:`, reads as a YAML key too.
GREP_NUMBERED_LINE = r"(?:" + _GREP_PATH + r"[:\-][0-9]{1,7}[:\-]|[0-9]{1,7}+[:\-](?!-))"
_GAP = (
    r"(?:(?:(?<=\n)|(?<=\\n))[ \t]{0,16}+"
    r"(?:[#>*;]{1,3}+|[+\-](?!-)|[0-9]{1,7}+(?:\t|\\t|→|\\u2192| ?[:|] ?)|" + GREP_PREFIX + r")"
    r"|[ \t\r\n\f\"'`,]|\\[nrt\"'\\/\r\n]|[+.](?=[ \t\r\n\"'`]))"
)
_GAP_RUN = _GAP + r"{0,256}+"
# Not a name followed by `:` (a JSON key, a label in prose or code).
_NOT_A_NAME = r"(?![\"'`]?[ \t]{0,8}:)"
_TOKEN = (
    r"(?:"
    + _ARMOR_HEADERS
    + r":[^\r\n\"'\\]{0,256}+"  # a header line, up to its end (or an escaped newline)
    r"|=[A-Za-z0-9+/]{4}(?![A-Za-z0-9+/=])"  # the PGP checksum
    # A key's line: a base64 run as long as no word; a shorter one only as the last line
    # before an END line (words after a key, or code, are not part of it).
    r"|[A-Za-z0-9+/]{20,65536}+={0,2}+"
    + _NOT_A_NAME
    + r"|[A-Za-z0-9+/]{1,19}+={0,2}+(?="
    + _GAP_RUN
    + r"-----END)"
    r")"
)
# Tokens and the gaps before them, possessive: linear, and it ends after the last token.
_MATERIAL = re.compile(r"(?:" + _GAP_RUN + _TOKEN + r")*+")
# An SSH2 key's body: base64 lines only (its header lines come first, on their own).
_SSH2_TOKEN = (
    r"(?:[A-Za-z0-9+/]{20,65536}+={0,2}+"
    + _NOT_A_NAME
    + r"|[A-Za-z0-9+/]{1,19}+={0,2}+(?="
    + _GAP_RUN
    + r"---- END)"
    r")"
)
_SSH2_MATERIAL = re.compile(r"(?:" + _GAP_RUN + _SSH2_TOKEN + r")*+")
# An SSH2 header line (`Comment: "2048-bit RSA, …"`): a tag, `:`, the value up to the line's
# end. A line that ends in `\` goes on on the next, written raw (`\` and a newline), in a JSON
# string (an escaped `\\` before the `\n` escape) or in a string inside one (`\\\\`, `\\n`),
# maybe across the quotes that join two strings of code or of a JSON array (`\\", "`).
# Escapes that end no line (`\"`, `\\`, `\/`) are part of the value; a quote, raw or escaped,
# followed by what follows a string in JSON or code (`,`, `]`, `}`, `:`, `+`, `)`) ends it,
# and so does `----` (a continued line never runs into the next BEGIN or END line: each
# header reads its own lines only). RFC 4716 caps a value at 1024 bytes.
_AFTER_STRING = r"[ \t]{0,16}[,\]}:+)]"
_GLUE = (
    r"(?:[\"'][ \t]{0,16}+[+,]?[ \t\r\n]{0,64}+[\"']"
    r"|\\[\"'][ \t]{0,16}+[+,]?(?:[ \t]|\\[rnt]){0,64}+\\[\"'])"
)
_CONTINUED = (
    r"(?:\\\\\\\\(?:\\\\r)?\\\\n|\\\\(?:\\r)?\\n|\\\r?\n)(?:" + _GLUE + r")?"
    r"|(?:\\\\\\\\|\\\\)" + _GLUE
)
_SSH2_VALUE = (
    r"(?:" + _CONTINUED + r"|[^\r\n\\\"'\-]|-(?!---)|[\"'](?!" + _AFTER_STRING + r")"
    r"|\\(?![nr]|\\[nr]|[\"']" + _AFTER_STRING + r")[^\r\n]"
    r"){0,1024}+"
)
_SSH2_HEADER_TAG = r"[A-Za-z][A-Za-z0-9_\-]{0,63}:"
_SSH2_HEADERS = re.compile(r"(?:" + _GAP_RUN + _SSH2_HEADER_TAG + _SSH2_VALUE + r"){0,64}+")
# A header line in the framings only the line-by-line check knows (`// Comment: "…"`).
_SSH2_HEADER_LINE = re.compile(r"^[^A-Za-z0-9]{0,16}" + _SSH2_HEADER_TAG + r"[ \t]")
_GAPS = re.compile(_GAP_RUN)
# At least one run this long: a key's lines are 64 or 70 characters, prose words are short.
_KEY_RUN = re.compile(r"[A-Za-z0-9+/]{32}")
# What ends a line of a key, however it is written: a newline, an escaped one, an HTML break,
# a SQL CHR(10).
_LINE_BREAKS = re.compile(r"\r?\n|\\+[nr]|<br\s*/?>|CHR\(10\)", re.IGNORECASE)
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/]{8,}+={0,2}")
_WORD = re.compile(r"[A-Za-z]{3}")
_ARMOR_LINE = re.compile(_ARMOR_HEADERS + ":")
_FRAMED_REACH = 16384
"""How far after a header a framed key's END line is looked for (a 4096-bit RSA key is
about 3.3 KB): the work per header stays bounded when a text repeats headers."""


def key_block_end(text: str, header: re.Match[str], reach: int) -> int | None:
    """Where the key block that `header` starts ends: after the END line of the same label
    when only key material stands between, else after the key material that follows the
    header; None when no key material follows (a mention of the header, not a key)."""
    footer = "-----END" + header.group("label") + "-----"
    start = header.end()
    return _block_end(text, start, start, footer, reach, _MATERIAL, _ARMOR_LINE)


def ssh2_key_block_end(text: str, header: re.Match[str], reach: int) -> int | None:
    """`key_block_end` for an SSH2 key: its header lines, then its base64 body, then
    `---- END <label> ----`."""
    footer = "---- END " + header.group("label") + " ----"
    start = header.end()
    headers = _SSH2_HEADERS.match(text, start, start + reach)
    body = start if headers is None else headers.end()
    return _block_end(text, start, body, footer, reach, _SSH2_MATERIAL, _SSH2_HEADER_LINE)


def _block_end(
    text: str,
    start: int,
    body: int,
    footer: str,
    reach: int,
    material_pattern: re.Pattern[str],
    header_line: re.Pattern[str],
) -> int | None:
    """Where a key block whose header ends at `start` and whose key material starts at
    `body` ends (see `key_block_end`)."""
    material = material_pattern.match(text, body, start + reach)
    end = body if material is None else material.end()
    gaps = _GAPS.match(text, end)
    after = end if gaps is None else gaps.end()
    if text.startswith(footer, after) and _KEY_RUN.search(text, body, end) is not None:
        return after + len(footer)
    # Lines framed in a way the material does not know (`// `, `-- `, ANSI colours, `<br>`,
    # `> - `, SQL `' || CHR(10) || '`): up to the END line of the same label when the lines
    # between hold a key's runs and nothing that reads as words. Code or prose between a
    # header and a footer (constants, a parser, documentation) has words, and stays.
    footer_at = text.find(footer, body, start + min(reach, _FRAMED_REACH))
    # From the start of the line the material starts on: a header value read as ending
    # early (`Comment: "rsa-key", 2048 bit`) leaves the rest of its line, which is a header's.
    if footer_at >= 0 and _only_framed_key_lines(
        text, _line_start(text, start, body), footer_at, header_line
    ):
        return footer_at + len(footer)
    return end if _KEY_RUN.search(text, body, end) is not None else None


def _line_start(text: str, start: int, position: int) -> int:
    """Where the line holding `position` starts, at `start` or after."""
    line_start = start
    for found in _LINE_BREAKS.finditer(text, start, position):
        line_start = found.end()
    return line_start


def _continues(line_break: str) -> bool:
    """Whether an escaped line break is a backslash and a newline: at quoting level k a
    newline is 2**(k-1) backslashes and `n`, a backslash before it 2**k more, so together
    3 * 2**(k-1); any other count is a plain newline."""
    count = len(line_break) - len(line_break.lstrip("\\"))
    return count >= 3 and count // (count & -count) == 3


def _only_framed_key_lines(
    text: str, start: int, end: int, header_line: re.Pattern[str] = _ARMOR_LINE
) -> bool:
    """Whether `text[start:end]` is a key's lines in some framing: one run of a key's length
    at least, and no line with a word once its base64 runs are taken out (an armor header
    line aside). Line by line, stopping at the first word: a repeated header ends it at once.
    A header's line that ends in a backslash goes on on the next (written raw, or before an
    escaped newline: `_continues`)."""
    found = False
    continued = False
    position = start
    for found_break in chain(_LINE_BREAKS.finditer(text, start, end), (None,)):
        line = text[position : end if found_break is None else found_break.start()]
        line_break = "" if found_break is None else found_break.group()
        if found_break is not None:
            position = found_break.end()
        if continued or header_line.search(line):
            continued = line.rstrip(" \t\r").endswith("\\") or _continues(line_break)
            continue
        found = found or _KEY_RUN.search(line) is not None
        if _WORD.search(_BASE64_RUN.sub("", line)):
            return False
    return found
