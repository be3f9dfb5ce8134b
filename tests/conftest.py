"""Shared fixtures: real git repositories made with pygit2."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import gate_corpus  # noqa: F401  (draws a seed asked for before pytest-xdist starts workers)
import pygit2
import pytest
from repos import make_repo

FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures"


@pytest.fixture
def repo(tmp_path: Path) -> pygit2.Repository:
    """A repository on `main` with one commit holding `src/app.py`."""
    lines = [f"line {number}\n" for number in range(1, 21)]
    return make_repo(tmp_path / "repo", files={"src/app.py": "".join(lines), "README.md": "hi\n"})


@pytest.fixture
def root(repo: pygit2.Repository) -> Path:
    return Path(repo.workdir).resolve()


@pytest.fixture
def stet(capsys: pytest.CaptureFixture[str]) -> Callable[..., tuple[int, str, str]]:
    """Run the `stet` command line in-process: (exit code, stdout, stderr)."""
    from stet_lsp.cli import main

    def run(*args: str) -> tuple[int, str, str]:
        capsys.readouterr()
        try:
            code = main(list(args))
        except SystemExit as exit:
            code = int(exit.code or 0)
        out, err = capsys.readouterr()
        return code, out, err

    return run
