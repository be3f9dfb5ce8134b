"""The interpreter the whole-process benchmarks run, as a user's install would give it.

A user runs `stet` from a virtual environment (pipx, uv tool, a project's .venv): its start-up
processes that environment's own `.pth` files only, and pip compiled every module to
bytecode at install time. A development machine differs in both ways: an editable install
adds an import hook (a `.pth` that imports a finder and pathlib), other `.pth` files may run
code at every start-up (certificate hooks), and PYTHONDONTWRITEBYTECODE can leave modules
compiled anew in every process. Those costs belong to the machine, not to Stet, and they are
large next to a cached re-scan (about 30 ms of `python -c pass` on the bench machine).

`clean_interpreter` makes such an environment: a venv with no pip whose one `.pth` lists
this tree and this interpreter's site-packages as plain paths (the same packages, no hook
runs), with the tree compiled to bytecode. Every process of a comparison runs through it,
`python -c pass` included, so ratios stay like for like; the machine's own `python -c pass`
is reported beside it.
"""

from __future__ import annotations

import os
import site
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Interpreter:
    python: str

    @property
    def stet(self) -> list[str]:
        """`stet` as its console script runs it (no runpy): `cli.run`, which ends without the
        interpreter's teardown once its output is flushed."""
        return [self.python, "-c", "from stet_lsp.cli import run\nrun()"]


def clean_interpreter(folder: Path) -> Interpreter:
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(folder)],
        check=True,
        capture_output=True,
    )
    packages = next((folder / "lib").glob("python*/site-packages"))
    paths = [str(ROOT), *site.getsitepackages()]
    (packages / "stet-bench.pth").write_text("\n".join(paths) + "\n", encoding="utf-8")
    environment = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(ROOT / "stet_lsp")],
        check=True,
        env=environment,
        capture_output=True,
    )
    return Interpreter(str(folder / "bin" / "python"))


def machine_interpreter() -> Interpreter:
    return Interpreter(sys.executable)
