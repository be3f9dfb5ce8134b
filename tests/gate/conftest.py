import sys
from pathlib import Path

# The corpus generator lives beside the benchmark, which imports it too.
BENCH = Path(__file__).resolve().parents[2] / "bench"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))
