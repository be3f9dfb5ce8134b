"""A transcript git tracks in the repository (an aider history committed with it), in real
repositories made with pygit2: what the commit the working trajectory started from holds came
with the checkout, and an import leaves it out."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pygit2
import pytest
from repos import commit_files, make_repo

from stet_lsp.core.errors import StetError
from stet_lsp.core.targets import resolve_target
from stet_lsp.trajectory.checkout import CAME_WITH_CHECKOUT
from stet_lsp.trajectory.importing import import_transcript
from stet_lsp.trajectory.store import EVENTS, working_folder

HISTORY = ".aider.chat.history.md"
AUTHORS_RUN = """
# aider chat started at 2025-07-15 11:38:37

> Aider v0.85.1
> Main model: gpt-4o with diff edit format

#### add a comment at the top of config.ts

Please add `config.ts` to the chat.

> Tokens: 3.2k sent, 21 received. Cost: $0.0082 message, $0.0082 session.
"""


def run(started: str, request: str) -> str:
    return f"\n# aider chat started at {started}\n\n#### {request}\n\nDone.\n"


def user_messages(root: Path) -> list[str]:
    events = (working_folder(resolve_target(root)).path / EVENTS).read_text().splitlines()
    return [e["text"] for e in map(json.loads, events) if e["kind"] == "user_message"]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    made = make_repo(tmp_path / "repo", files={HISTORY: AUTHORS_RUN})
    return Path(made.workdir)


def test_the_runs_a_clone_came_with_are_left_out(root: Path) -> None:
    history = root / HISTORY
    history.write_text(AUTHORS_RUN + run("2026-02-01 09:00:00", "now the README"))
    result = import_transcript(resolve_target(root), history)
    assert user_messages(root) == ["now the README"]
    assert result.dropped[CAME_WITH_CHECKOUT] > 0


def test_a_history_as_the_commit_has_it_is_refused(root: Path) -> None:
    with pytest.raises(StetError, match="came with the checkout"):
        import_transcript(resolve_target(root), root / HISTORY)
    assert not (working_folder(resolve_target(root)).path / EVENTS).exists()


def test_committing_ones_own_history_keeps_what_was_imported(root: Path) -> None:
    # The cut is the commit the working trajectory started from, not HEAD.
    history = root / HISTORY
    history.write_text(AUTHORS_RUN + run("2026-02-01 09:00:00", "now the README"))
    import_transcript(resolve_target(root), history)
    commit_files(pygit2.Repository(root), {HISTORY: history.read_text()}, "keep the history")
    history.write_text(history.read_text() + run("2026-02-02 10:00:00", "and the tests"))
    import_transcript(resolve_target(root), history)
    assert user_messages(root) == ["now the README", "and the tests"]


def test_a_rewritten_history_is_imported_whole(root: Path) -> None:
    history = root / HISTORY
    history.write_text(run("2026-02-01 09:00:00", "now the README") + AUTHORS_RUN)
    import_transcript(resolve_target(root), history)
    assert user_messages(root) == ["now the README", "add a comment at the top of config.ts"]


def test_an_untracked_history_is_imported_whole(tmp_path: Path) -> None:
    root = Path(make_repo(tmp_path / "fresh", files={"a.py": "x = 1\n"}).workdir)
    (root / HISTORY).write_text(AUTHORS_RUN)
    import_transcript(resolve_target(root), root / HISTORY)
    assert user_messages(root) == ["add a comment at the top of config.ts"]


def test_the_command_line_says_what_it_left_out_and_why_it_refuses(
    root: Path, stet: Callable[..., tuple[int, str, str]]
) -> None:
    code, out, err = stet("trajectory", "import", HISTORY, "-C", str(root))
    assert code == 1 and out == ""
    assert "it came with the checkout, and has nothing written here since" in err
    (root / HISTORY).write_text(AUTHORS_RUN + run("2026-02-01 09:00:00", "now the README"))
    code, out, err = stet("trajectory", "import", str(root / HISTORY), "-C", str(root), "--json")
    assert (code, err) == (0, "")
    document = json.loads(out)
    assert document["dropped"] == {CAME_WITH_CHECKOUT: document["dropped"][CAME_WITH_CHECKOUT]}
    assert document["dropped"][CAME_WITH_CHECKOUT] > 0
    assert user_messages(root) == ["now the README"]
