import sys
from pathlib import Path

import pytest

# Shared test code (the credential corpus, which the gate benchmark uses too) lives in tests/.
TESTS = Path(__file__).resolve().parents[1]
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))


def pytest_report_header() -> str:
    import gate_corpus

    seeds = ", ".join(map(str, gate_corpus.RUN_SEEDS))
    return f"gate corpus: values of seeds {seeds} ({gate_corpus.SEED_VARIABLE}=<seed> adds one)"


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The test's own folder, as the current folder (the command line's paths are relative)."""
    monkeypatch.chdir(tmp_path)
    return tmp_path
