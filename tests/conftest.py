"""Shared fixtures: real git repositories made with pygit2."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pygit2
import pytest

SIGNATURE = pygit2.Signature("Stet tests", "tests@stet.invalid", 1_700_000_000, 0)
FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures"


def commit_files(
    repo: pygit2.Repository, files: dict[str, str], message: str = "change"
) -> pygit2.Oid:
    root = Path(repo.workdir)
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
        repo.index.add(name)
    repo.index.write()
    tree = repo.index.write_tree()
    parents = [] if repo.head_is_unborn else [repo.head.target]
    return repo.create_commit("HEAD", SIGNATURE, SIGNATURE, message, tree, parents)


def make_repo(
    folder: Path, branch: str = "main", files: dict[str, str] | None = None
) -> pygit2.Repository:
    repo = pygit2.init_repository(str(folder), initial_head=branch)
    if files is not None:
        commit_files(repo, files, "initial")
    return repo


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
