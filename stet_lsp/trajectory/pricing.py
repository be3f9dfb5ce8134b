"""Estimated cost of a request whose harness did not report one: list prices in US dollars per
million tokens, by model family (the longest matching name prefix wins). An estimate is always
marked as one (`cost_basis: "estimated"`); a model not listed gets no estimate.

`usage_cost` and `total_cost` are the one rule for what a request or a run cost: meta.json's
totals, narration.md's cost table and the ATIF export's `total_cost_usd` all use them, so the
same events give them the same figures. A session whose harness reported its whole cost (ATIF's
`final_metrics.total_cost_usd`, kept in `session_end`'s `cost_usd`) costs that."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Literal

from stet_lsp.trajectory.events import EventBase, SessionEnd, Usage

Basis = Literal["reported", "estimated"]
TotalBasis = Literal["reported", "estimated", "mixed"]

# (input, output, cache read, cache write) per million tokens, public list prices (2025-26).
# A version not listed takes its family's price (`claude-opus-4-1` that of `claude-opus-4`).
# OpenAI lists no price of its own for input written to the cache (Codex counts it since 0.145,
# within the input): such input costs what uncached input costs.
_PRICES: dict[str, tuple[float, float, float, float]] = {
    "claude-opus-4-6": (5.0, 25.0, 0.5, 6.25),
    "claude-opus-4-5": (5.0, 25.0, 0.5, 6.25),
    "claude-opus-4": (15.0, 75.0, 1.5, 18.75),
    "claude-sonnet-4": (3.0, 15.0, 0.3, 3.75),
    "claude-3-7-sonnet": (3.0, 15.0, 0.3, 3.75),
    "claude-3-5-sonnet": (3.0, 15.0, 0.3, 3.75),
    "claude-haiku-4-5": (1.0, 5.0, 0.1, 1.25),
    "claude-3-5-haiku": (0.8, 4.0, 0.08, 1.0),
    "gpt-5": (1.25, 10.0, 0.125, 1.25),
    "gpt-5-mini": (0.25, 2.0, 0.025, 0.25),
    "gpt-4.1": (2.0, 8.0, 0.5, 2.0),
    "gpt-4.1-mini": (0.4, 1.6, 0.1, 0.4),
    "gpt-4o": (2.5, 10.0, 1.25, 2.5),
    "gpt-4o-mini": (0.15, 0.6, 0.075, 0.15),
    "o3": (2.0, 8.0, 0.5, 2.0),
    "o4-mini": (1.1, 4.4, 0.275, 1.1),
    "gemini-2.5-pro": (1.25, 10.0, 0.31, 0.0),
    "gemini-2.5-flash": (0.3, 2.5, 0.075, 0.0),
}


# A few models across thousands of requests; bounded, since a transcript names them.
@lru_cache(maxsize=256)
def prices(model: str | None) -> tuple[float, float, float, float] | None:
    if not model:
        return None
    name = model.lower().rsplit("/", 1)[-1]
    best = max((prefix for prefix in _PRICES if name.startswith(prefix)), key=len, default=None)
    return None if best is None else _PRICES[best]


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
