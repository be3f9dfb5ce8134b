"""A JSON-RPC message's id read without decoding the message: for one nested too deep to
decode, or not UTF-8, which still gets its answer (the language server and `stet mcp`)."""

from __future__ import annotations

import json
import re

_TOP_LEVEL_ID = re.compile(rb'"id"\s*:\s*(-?\d+(?![\d.eE])|"(?:[^"\\]|\\.)*")')
"""A whole number or a string; a number with a fraction or an exponent (`2.5`, `7e2`) is no
id to read (its digits before the point are another request's id)."""


def top_level_id(body: bytes) -> int | str | None:
    """The id of a message too deep to decode, or not UTF-8: the `"id"` member at the
    outermost level."""
    depth, in_string, escaped = 0, False, False
    for index, byte in enumerate(body):
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:  # quote
                in_string = False
            continue
        if byte == 0x22:
            if depth == 1:
                match = _TOP_LEVEL_ID.match(body, index)
                if match:
                    try:
                        value = json.loads(match.group(1))
                    except ValueError:  # a string id that is not UTF-8
                        return None
                    return value if isinstance(value, str | int) else None
            in_string = True
        elif byte in b"{[":
            depth += 1
        elif byte in b"}]":
            depth -= 1
    return None
