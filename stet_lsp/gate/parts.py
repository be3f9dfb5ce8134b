"""The parts of a long secret printed truncated (`Xk9q2LmWp4Tz…`, `…R7vBn3Hc6Jd1`): found as
copies of it (stet_lsp/gate/repeats.py) and given its marker (stet_lsp/gate/redact.py).

A value of `PARTIAL_FROM` characters or more has two pieces a part of it holds: its first
characters, `PIECE` at least and 8 past what every key of its format starts with (`ghp_`, a
webhook's URL, PyPI's macaroon header, a Slack token's workspace and user numbers), and its
last `PIECE`. A piece is of a token's characters alone (no blank, quote, `=`, `:`, `;`, `,`
or bracket: `sk-password=` is the start of an assignment a generic rule took whole), has
`_DISTINCT` different characters (`xxxxxxxxxxxx` is a filler's), and could be a value
itself (`repeats.repeatable`). A value whose text at the end of that prefix is base64 JSON
(`eyJ…`: a JWT's header, a 1Password service account's descriptor) or a JWT in base64
(`ZXlK…`) has no first piece unless a `.` ends that header within it.
"""

from __future__ import annotations

import re
from functools import cache

PARTIAL_FROM = 16
PIECE = 12
"""The fewest characters of a value a part holds."""
_PAST_PREFIX = 8
_DISTINCT = 6
_SEPARATOR = re.compile(r"[\s\"'`\\=:;,<>(){}\[\]]")
# Known beginnings longer than a rule's prefix: a PyPI token's macaroon names `pypi.org`.
_PUBLIC_HEADS = {"pypi-token": ("pypi-AgEIcHlwaS5vcmc",)}
# Numbers after the prefix name an account or an app, not a secret: a Slack token's
# workspace and user (`xoxb-1234567890123-98765…-`, `xapp-1-A0123456789-`), after the letter
# of the token's kind when the prefix stops before it.
_NUMBERS = re.compile(r"(?:[A-Za-z]{1,3}-)?(?:[A-Z]?[0-9]+-)+")


def pieces(value: str, rule: str) -> list[tuple[bool, str]]:
    """(at the head, piece) for each piece of `value` (found by `rule`) a part of it holds."""
    if len(value) < PARTIAL_FROM:
        return []
    found = []
    head = _head_length(value, rule)
    if head is not None and head < len(value):
        found.append((True, value[:head]))
    found.append((False, value[-PIECE:]))
    return [(at_head, piece) for at_head, piece in found if _may_be_piece(piece)]


def pieces_held(part: str, rule: str) -> list[tuple[bool, str]]:
    """(at the head, piece) for each piece a value that `part` is a part of would have."""
    head = _head_length(part, rule)
    found = [(True, part[:head])] if head is not None and head <= len(part) else []
    return found + ([(False, part[-PIECE:])] if len(part) >= PIECE else [])


def _head_length(value: str, rule: str) -> int | None:
    lowered = value[:64].lower()
    public = max((len(p) for p in _public_heads(rule) if lowered.startswith(p)), default=0)
    numbers = _NUMBERS.match(value, public)
    end = public if numbers is None else numbers.end()
    if "eyJ" in value[max(0, end - 3) : end + 3] or value.startswith("ZXlK", end):
        # Base64 JSON (a JWT's header, a service account's descriptor), or a JWT in base64:
        # the same first characters in every key made alike.
        dot = value.find(".", end)
        if dot < 0:
            return None
        end = dot + 1
    return max(PIECE, end + _PAST_PREFIX)


def _may_be_piece(piece: str) -> bool:
    from stet_lsp.gate.repeats import repeatable  # which imports this module

    return _SEPARATOR.search(piece) is None and len(set(piece)) >= _DISTINCT and repeatable(piece)


@cache
def _public_heads(rule: str) -> tuple[str, ...]:
    """What values of a format start with, lower-cased, by rule: the anchors of its rules
    that match from their anchor (a finding keeps only a preview's first two characters of
    it; a name's rules anchor on the name, `password`, not the value)."""
    from stet_lsp.gate.rules import RULES  # large, and needed only once a secret is found

    own = [r for r in RULES if r.name == rule]
    heads = {anchor for r in own if r.start == "anchor" for anchor in r.anchors}
    heads |= {r.prefix.lower() for r in own if r.prefix}
    return (*heads, *(head.lower() for head in _PUBLIC_HEADS.get(rule, ())))
