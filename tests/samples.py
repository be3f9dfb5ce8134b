"""The public transcript samples in ../shared/fixtures/transcripts (never copied here): tests
that use them skip when the folder is absent."""

from __future__ import annotations

from pathlib import Path

import pytest

SAMPLES = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "transcripts"


def sample(relative: str) -> Path:
    """A public sample under ../shared/fixtures/transcripts/, or skip the test."""
    path = SAMPLES / relative
    if not path.is_file():
        pytest.skip(f"public sample {relative} is not here")
    return path
