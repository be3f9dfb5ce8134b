"""The list prices an estimate uses, by model."""

import pytest

from stet_lsp.trajectory.pricing import prices


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("claude-opus-4-20250514", (15.0, 75.0)),
        ("claude-opus-4-1-20250805", (15.0, 75.0)),
        ("claude-opus-4-5-20251101", (5.0, 25.0)),
        ("claude-opus-4-6", (5.0, 25.0)),  # not the family's 4.0 price, three times as much
        ("anthropic/claude-sonnet-4-5", (3.0, 15.0)),
        ("claude-sonnet-4@20250514", (3.0, 15.0)),
        ("gpt-5-mini-2025-08-07", (0.25, 2.0)),
        ("gpt-5.3-codex", (1.75, 14.0)),
        ("gpt-4o-2024-08-06", (2.5, 10.0)),
        ("gpt-4o-2024-05-13", (5.0, 15.0)),  # a snapshot the table names has its own price
    ],
)
def test_a_model_is_priced_by_its_name_or_its_snapshots(
    model: str, expected: tuple[float, float]
) -> None:
    found = prices(model)
    assert found is not None and found[:2] == expected


@pytest.mark.parametrize(
    "model",
    [
        "llama-3-70b",
        None,
        "gpt-5.6",  # a later version is no gpt-5
        "gpt-5-pro",  # twelve times gpt-5's price
        "o3-pro",
        "gemini-2.5-flash-image",
        "claude-opus-4-7",  # not the price of claude-opus-4
    ],
)
def test_a_model_the_table_does_not_name_gets_no_estimate(model: str | None) -> None:
    assert prices(model) is None


def test_input_written_to_an_openai_cache_costs_what_uncached_input_does() -> None:
    """Codex counts apart the input written to the cache (within the input before 0.145):
    the estimate does not change for it."""
    from stet_lsp.trajectory.events import SourceRef, Usage
    from stet_lsp.trajectory.pricing import estimate_cost

    at = {"session": "s", "source": SourceRef(file="rollout.jsonl", line=3), "model": "gpt-5"}
    split = Usage(**at, input_tokens=400, cache_write_tokens=600)
    whole = Usage(**at, input_tokens=1000)
    assert estimate_cost(split) == estimate_cost(whole) == pytest.approx(0.00125)
