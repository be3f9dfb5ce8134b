"""meta.json of hand-built events, as an import computes it (tests that write or render
trajectories without importing a transcript)."""

from __future__ import annotations

from collections import Counter

from stet_lsp.trajectory.events import EventBase
from stet_lsp.trajectory.meta import Meta, TargetRef, summarise

BRANCH = TargetRef(kind="branch", name="main", key="k")


def summary(events: list[EventBase], trajectory_id: str = "t", target: TargetRef = BRANCH) -> Meta:
    return summarise(
        trajectory_id=trajectory_id,
        target=target,
        base_commit=None,
        events=events,
        redaction=Counter(),
        dropped=Counter(),
        problems=[],
        sources=[],
    )
