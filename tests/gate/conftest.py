import sys
from pathlib import Path

# Shared test code (the credential corpus, which the gate benchmark uses too) lives in tests/.
TESTS = Path(__file__).resolve().parents[1]
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))


def pytest_report_header() -> str:
    import gate_corpus

    seed = gate_corpus.RUN_SEED
    return f"gate corpus: values of seed {seed} this run ({gate_corpus.SEED_VARIABLE}={seed})"
