"""Trajectory tests: the public transcript samples (tests using them skip when absent)."""

from __future__ import annotations

from pathlib import Path

import pytest

SAMPLES = Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "transcripts"


def sample(relative: str) -> Path:
    """A public sample under ../shared/fixtures/transcripts/, or skip the test."""
    path = SAMPLES / relative
    if not path.is_file():
        pytest.skip(f"public sample {relative} is not here")
    return path
