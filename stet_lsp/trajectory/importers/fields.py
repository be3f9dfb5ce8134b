"""Small readers of loosely typed JSON records: a value of the expected type, or a neutral one."""

from __future__ import annotations

import json
import math
from typing import Any


def text_field(value: Any) -> str | None:
    """A non-empty string, else None."""
    return value if isinstance(value, str) and value else None


LARGEST_FIGURE = 2**63 - 1
"""The largest count or cost read: one past it is no figure a run reports (a float cannot hold
it, and past 4,300 digits Python's JSON reader refuses it back)."""


def _figure(value: Any) -> int | float | None:
    """A finite number within ±LARGEST_FIGURE, else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value if -LARGEST_FIGURE <= value <= LARGEST_FIGURE else None


def holds_int_past_figures(value: Any) -> bool:
    """Whether `value` (what `ast.literal_eval` read) holds an int past ±LARGEST_FIGURE, as a
    key or a value at any depth: a hex literal reads into thousands of digits, which no JSON
    reader takes back (nor `str`, past 4,300)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, int) and not -LARGEST_FIGURE <= item <= LARGEST_FIGURE:
            return True
        if isinstance(item, dict):
            stack += [*item.keys(), *item.values()]
        elif isinstance(item, list | tuple | set | frozenset):
            stack += item
    return False


def whole_count(value: Any) -> int | None:
    """A count given as an int (no bool, no float) from 0 to LARGEST_FIGURE, else None."""
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value if 0 <= value <= LARGEST_FIGURE else None


def count_field(value: Any) -> int:
    """A token count as a non-negative int (0 when missing or not a number)."""
    figure = _figure(value)
    return 0 if figure is None else max(int(figure), 0)


def cost_field(value: Any) -> float | None:
    """A number (a cost) as a float; None when missing or not a number."""
    figure = _figure(value)
    return None if figure is None else float(figure)


def mapping(value: Any) -> dict[str, Any]:
    """A JSON object, or an empty one in place of anything else."""
    return value if isinstance(value, dict) else {}


def sequence(value: Any) -> list[Any]:
    """A JSON array, or an empty one in place of anything else."""
    return value if isinstance(value, list) else []


def text_blocks(blocks: list[Any]) -> list[str]:
    """The texts of a message's or a result's content blocks of type `text`, in order."""
    return [
        block["text"]
        for block in blocks
        if isinstance(block, dict)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
    ]


def as_text(value: Any) -> str:
    """A tool's output or argument as text: strings as they are, other JSON compactly."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return json.dumps(value, ensure_ascii=False)
