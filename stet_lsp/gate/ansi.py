"""Terminal colours around a secret: `ESC[32mghp_…ESC[0m` in a command's output.

The final letter of a control sequence (the `m` of `ESC[32m`) stands right before the token
and defeats every rule's boundary. A line holding control sequences is also scanned as a view
in which each whole sequence reads as its one ESC character; a span found there maps back to
the raw text, a sequence next to it never included.
"""

from __future__ import annotations

import re

from stet_lsp.gate.jsonaware import View, view_replacing

# ECMA-48 control sequences: ESC [, parameter bytes, intermediate bytes, one final byte.
# Bounded repetitions keep a hostile run of parameters linear.
_SEQUENCE = re.compile(r"\x1b\[[0-?]{0,64}[ -/]{0,8}[@-~]")
_START = "\x1b["


def ansi_views(text: str) -> list[View]:
    """A view of each line that holds a control sequence, each sequence read as ESC."""
    views: list[View] = []
    position = 0
    while (found := text.find(_START, position)) >= 0:
        start = text.rfind("\n", 0, found) + 1
        end = text.find("\n", found)
        end = len(text) if end < 0 else end
        view = _without_sequences(text, start, end)
        if view is not None:
            views.append(view)
        position = end
    return views


def _without_sequences(text: str, start: int, end: int) -> View | None:
    found = _SEQUENCE.finditer(text, start, end)
    return view_replacing(text, start, end, ((m.start(), m.end(), "\x1b") for m in found))
