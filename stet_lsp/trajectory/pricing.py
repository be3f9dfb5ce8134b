"""Estimated cost of a request whose harness did not report one: list prices in US dollars per
million tokens, by model. An estimate is always marked as one (`cost_basis: "estimated"`); a
model the table does not name gets no estimate.

`usage_cost` and `total_cost` are the one rule for what a request or a run cost: meta.json's
totals, narration.md's cost table and the ATIF export's `total_cost_usd` all use them, so the
same events give them the same figures. A session whose harness reported its whole cost (ATIF's
`final_metrics.total_cost_usd`, kept in `session_end`'s `cost_usd`) costs that."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Literal

from stet_lsp.trajectory.events import EventBase, SessionEnd, Usage

Basis = Literal["reported", "estimated"]
TotalBasis = Literal["reported", "estimated", "mixed"]

Prices = tuple[float, float, float, float]

# (input, output, cache read, cache write) per million tokens: the vendors' public list prices
# (2025-26) of each model named. A model is priced by its own name only, and a dated snapshot
# by its model's (`claude-opus-4-1-20250805` as `claude-opus-4-1`) unless the table names the
# snapshot: a version the table does not name gets no estimate, since a new version may cost
# another price (`gpt-5.2` costs 40% more than `gpt-5`, `claude-opus-4-5` a third of
# `claude-opus-4`). Models that share a price are listed each by name.
# OpenAI lists no price of its own for input written to the cache (Codex counts it since 0.145,
# within the input): such input costs what uncached input costs.
_CLAUDE_OPUS_4 = (15.0, 75.0, 1.5, 18.75)
_CLAUDE_OPUS_4_5 = (5.0, 25.0, 0.5, 6.25)
_CLAUDE_SONNET = (3.0, 15.0, 0.3, 3.75)
_GPT_5 = (1.25, 10.0, 0.125, 1.25)
_GPT_5_MINI = (0.25, 2.0, 0.025, 0.25)
_GPT_5_2 = (1.75, 14.0, 0.175, 1.75)
_PRICES: dict[str, Prices] = {
    "claude-opus-4-6": _CLAUDE_OPUS_4_5,
    "claude-opus-4-5": _CLAUDE_OPUS_4_5,
    "claude-opus-4-1": _CLAUDE_OPUS_4,
    "claude-opus-4-0": _CLAUDE_OPUS_4,
    "claude-opus-4": _CLAUDE_OPUS_4,
    "claude-sonnet-4-6": _CLAUDE_SONNET,
    "claude-sonnet-4-5": _CLAUDE_SONNET,
    "claude-sonnet-4-0": _CLAUDE_SONNET,
    "claude-sonnet-4": _CLAUDE_SONNET,
    "claude-3-7-sonnet": _CLAUDE_SONNET,
    "claude-3-5-sonnet": _CLAUDE_SONNET,
    "claude-haiku-4-5": (1.0, 5.0, 0.1, 1.25),
    "claude-3-5-haiku": (0.8, 4.0, 0.08, 1.0),
    "gpt-5.5": (5.0, 30.0, 0.5, 5.0),
    "gpt-5.4": (2.5, 15.0, 0.25, 2.5),
    "gpt-5.4-mini": (0.75, 4.5, 0.075, 0.75),
    "gpt-5.3-codex": _GPT_5_2,
    "gpt-5.2-codex": _GPT_5_2,
    "gpt-5.2": _GPT_5_2,
    "gpt-5.1-codex-max": _GPT_5,
    "gpt-5.1-codex-mini": _GPT_5_MINI,
    "gpt-5.1-codex": _GPT_5,
    "gpt-5.1": _GPT_5,
    "gpt-5-codex": _GPT_5,
    "gpt-5": _GPT_5,
    "gpt-5-mini": _GPT_5_MINI,
    "gpt-5-nano": (0.05, 0.4, 0.005, 0.05),
    "gpt-4.1": (2.0, 8.0, 0.5, 2.0),
    "gpt-4.1-mini": (0.4, 1.6, 0.1, 0.4),
    "gpt-4.1-nano": (0.1, 0.4, 0.025, 0.1),
    "gpt-4o": (2.5, 10.0, 1.25, 2.5),
    "gpt-4o-2024-05-13": (5.0, 15.0, 5.0, 5.0),  # the first snapshot, dearer, and no cache
    "gpt-4o-mini": (0.15, 0.6, 0.075, 0.15),
    "o3": (2.0, 8.0, 0.5, 2.0),
    "o3-mini": (1.1, 4.4, 0.55, 1.1),
    "o4-mini": (1.1, 4.4, 0.275, 1.1),
    "gemini-2.5-pro": (1.25, 10.0, 0.31, 0.0),
    "gemini-2.5-flash": (0.3, 2.5, 0.075, 0.0),
    "gemini-2.5-flash-lite": (0.1, 0.4, 0.025, 0.0),
}
# The date a snapshot of a model is named with: Anthropic's `-20250805`, OpenAI's
# `-2025-08-07`, Vertex AI's `@20250805`.
_SNAPSHOT = re.compile(r"(?:-|@)(?:\d{8}|\d{4}-\d{2}-\d{2})$")


# A few models across thousands of requests; bounded, since a transcript names them.
@lru_cache(maxsize=256)
def prices(model: str | None) -> Prices | None:
    """The list prices of a model the table names, or of the model a dated snapshot is of."""
    if not model:
        return None
    name = model.lower().rsplit("/", 1)[-1]
    if name in _PRICES:
        return _PRICES[name]
    return _PRICES.get(_SNAPSHOT.sub("", name))


def estimate_cost(usage: Usage) -> float | None:
    found = prices(usage.model)
    if found is None:
        return None
    per_input, per_output, per_read, per_write = found
    return (
        usage.input_tokens * per_input
        + usage.output_tokens * per_output
        + usage.cache_read_tokens * per_read
        + usage.cache_write_tokens * per_write
    ) / 1_000_000


def usage_cost(usage: Usage) -> tuple[float, Basis] | None:
    """What one request cost and how that is known: the cost the harness reported (a cost
    with no basis counts as reported), else an estimate from list prices, else None."""
    if usage.cost_usd is not None:
        return usage.cost_usd, "estimated" if usage.cost_basis == "estimated" else "reported"
    guess = estimate_cost(usage)
    return None if guess is None else (guess, "estimated")


def total_cost(
    usages: Iterable[Usage], session_totals: Mapping[str, float] | None = None
) -> tuple[float | None, TotalBasis | None]:
    """The cost of the requests, summed in their order and rounded to millionths of a dollar,
    and its basis (`mixed` when some costs were reported and some estimated); (None, None)
    when no request has a cost. A session whose harness reported its total
    (`session_totals`, by session id: `session_costs`) counts that total instead of its
    requests' costs."""
    session_totals = session_totals or {}
    cost = 0.0
    bases: set[Basis] = set()
    for usage in usages:
        if usage.session in session_totals:
            continue
        found = usage_cost(usage)
        if found is not None:
            cost += found[0]
            bases.add(found[1])
    for reported in session_totals.values():
        cost += reported
        bases.add("reported")
    if not bases:
        return None, None
    basis: TotalBasis = "mixed" if len(bases) > 1 else next(iter(bases))
    return round(cost, 6), basis


def session_costs(events: Iterable[EventBase]) -> dict[str, float]:
    """The total cost each session's harness reported (`session_end`'s `cost_usd`), by
    session id."""
    totals: dict[str, float] = {}
    for event in events:
        if isinstance(event, SessionEnd) and event.cost_usd is not None:
            totals[event.session] = totals.get(event.session, 0.0) + event.cost_usd
    return totals
