"""Trajectory tests: the public transcript samples (tests using them skip when absent)."""

from __future__ import annotations

from samples import SAMPLES, sample

__all__ = ["SAMPLES", "sample"]
