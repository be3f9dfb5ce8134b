"""The files a shell command moved, read from its command line, only where that is certain."""

from __future__ import annotations

import pytest

from stet_lsp.trajectory.importers.shell_moves import moved_paths


@pytest.mark.parametrize(
    ("command", "moves"),
    [
        ("mv src/a.py lib/b.py", [("/repo/src/a.py", "/repo/lib/b.py")]),
        ("git mv -f old.py new.py", [("/repo/old.py", "/repo/new.py")]),
        ("mv .env .env.bak", [("/repo/.env", "/repo/.env.bak")]),
        ("mv a.py b.py lib/", [("/repo/a.py", "/repo/lib/a.py"), ("/repo/b.py", "/repo/lib/b.py")]),
        ("mv pkg other lib", [("/repo/pkg", "/repo/lib/pkg"), ("/repo/other", "/repo/lib/other")]),
        ('mv "my file.py" ./other.py', [("/repo/my file.py", "/repo/other.py")]),
        ("mv -- -odd.py even.py", [("/repo/-odd.py", "/repo/even.py")]),
        ("git status && mv a.py b.py && git add -A", [("/repo/a.py", "/repo/b.py")]),
        ("mv ../out.py in.py", [("/out.py", "/repo/in.py")]),
        ("m''v a.py b.py", [("/repo/a.py", "/repo/b.py")]),  # quotes inside a word
        ('git "m"v a.py b.py', [("/repo/a.py", "/repo/b.py")]),
    ],
)
def test_moves_whose_meaning_is_certain(command: str, moves: list[tuple[str, str]]) -> None:
    assert moved_paths(command, "/repo") == moves


@pytest.mark.parametrize(
    "command",
    [
        "cd src && mv a.py b.py",  # the folder changed first
        "mv *.py lib/",  # a glob
        "mv $FILE b.py",
        "mv a.py b.py | tee log",
        "mv a.py ~/b.py",
        "(mv a.py b.py)",
        "mv a.py b.py &",
        "mv 'unterminated b.py",
        "mv a.py",
        "echo mv a.py b.py > script.sh",
        "mv -t lib a.py",  # the destination first
        "mv -n a.py b.py",  # may skip the move and succeed
        "mv -i a.py b.py",
        "git mv -k a.py b.py",
        "git mv -n a.py b.py",  # a dry run
        "mv a.py lib",  # lib may be a folder: a.py would go into it
        "mv pkg lib",
        "mv a.py lib/",
        "mv a.py .",
        "mv a.py b.py .",
        "ls; mv a.py b.py",  # the mv may have failed and the whole still succeeded
        "git status\nmv a.py b.py",
        "mv a.py b.py # was c.py",
        "if test -e a.py; then mv a.py b.py; fi",
        "builtin cd sub && mv a.py b.py",
        "exit 0 && mv a.py b.py",  # the shell ends, with 0, before the mv
        "set -e && mv a.py b.py",
        "mv a.py b.py\r",  # bash keeps the carriage return in the name
    ],
)
def test_commands_whose_moves_are_not_certain_move_nothing(command: str) -> None:
    assert moved_paths(command, "/repo") == []


def test_no_folder_known_no_move() -> None:
    assert moved_paths("mv a.py b.py", None) == []
    assert moved_paths("mv a.py b.py", "relative/folder") == []
