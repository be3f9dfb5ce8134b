"""Estimated cost of a request whose harness did not report one: list prices in US dollars per
million tokens, by model family (the longest matching name prefix wins). An estimate is always
marked as one (`cost_basis: "estimated"`); a model not listed gets no estimate."""

from __future__ import annotations

from stet_lsp.trajectory.events import Usage

# (input, output, cache read, cache write) per million tokens, public list prices (2025).
_PRICES: dict[str, tuple[float, float, float, float]] = {
    "claude-opus-4-5": (5.0, 25.0, 0.5, 6.25),
    "claude-opus-4": (15.0, 75.0, 1.5, 18.75),
    "claude-sonnet-4": (3.0, 15.0, 0.3, 3.75),
    "claude-3-7-sonnet": (3.0, 15.0, 0.3, 3.75),
    "claude-3-5-sonnet": (3.0, 15.0, 0.3, 3.75),
    "claude-haiku-4-5": (1.0, 5.0, 0.1, 1.25),
    "claude-3-5-haiku": (0.8, 4.0, 0.08, 1.0),
    "gpt-5": (1.25, 10.0, 0.125, 0.0),
    "gpt-5-mini": (0.25, 2.0, 0.025, 0.0),
    "gpt-4.1": (2.0, 8.0, 0.5, 0.0),
    "gpt-4.1-mini": (0.4, 1.6, 0.1, 0.0),
    "gpt-4o": (2.5, 10.0, 1.25, 0.0),
    "gpt-4o-mini": (0.15, 0.6, 0.075, 0.0),
    "o3": (2.0, 8.0, 0.5, 0.0),
    "o4-mini": (1.1, 4.4, 0.275, 0.0),
    "gemini-2.5-pro": (1.25, 10.0, 0.31, 0.0),
    "gemini-2.5-flash": (0.3, 2.5, 0.075, 0.0),
}


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
