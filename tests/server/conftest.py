from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # lsp_pipe
from lsp_pipe import PipeServer


@pytest.fixture
def raw() -> Iterator[PipeServer]:
    """The server over raw JSON-RPC, initialized with no capabilities."""
    server = PipeServer().initialize()
    yield server
    server.close()
