"""OpenHands' cumulative metrics, the same in its V0 event lists and V1 conversations: each
snapshot (`accumulated_cost`, `accumulated_token_usage`) holds the totals so far, and a Usage
event is what one added since the one before."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stet_lsp.trajectory.importers.fields import cost_field, count_field, mapping, text_field

Totals = tuple[float, int, int, int, int]  # cost, prompt, output, cache read, cache write
_NONE: Totals = (0.0, 0, 0, 0, 0)


class CumulativeUsage:
    """The totals last seen of each metrics source (an LLM of a V1 conversation; V0 has one)."""

    def __init__(self) -> None:
        self._seen: dict[str, Totals] = {}

    def added(self, snapshot: Mapping[str, Any], source: str = "") -> dict[str, Any] | None:
        """The Usage fields of what `snapshot` added since `source`'s last one, None when it
        added nothing. Totals that went down started over (a resumed conversation). The cost
        is reported when the snapshot's cost grew: OpenHands adds a request's cost only when
        it could price it, so a total that stayed the same (`0.0` all along for a model it has
        no price for) says nothing of what the tokens cost. `model` is None when its usage
        names none."""
        tokens = mapping(snapshot.get("accumulated_token_usage"))
        reported = cost_field(snapshot.get("accumulated_cost"))
        totals: Totals = (
            reported or 0.0,
            count_field(tokens.get("prompt_tokens")),
            count_field(tokens.get("completion_tokens")),
            count_field(tokens.get("cache_read_tokens")),
            count_field(tokens.get("cache_write_tokens")),
        )
        before = self._seen.get(source, _NONE)
        if any(now < then for now, then in zip(totals, before, strict=True)):
            before = _NONE
        self._seen[source] = totals
        cost, prompt, output, cached, written = (
            now - then for now, then in zip(totals, before, strict=True)
        )
        if not (prompt or output or cost):
            return None
        priced = reported is not None and cost > 0
        return {
            "model": text_field(tokens.get("model")),
            "input_tokens": max(int(prompt - cached - written), 0),
            "output_tokens": int(output),
            "cache_read_tokens": int(cached),
            "cache_write_tokens": int(written),
            "cost_usd": round(cost, 10) if priced else None,
            "cost_basis": "reported" if priced else None,
        }
