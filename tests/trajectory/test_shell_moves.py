"""The files a shell command moved, read from its command line, only where that is certain."""

from __future__ import annotations

import pytest

from stet_lsp.trajectory.importers.shell_moves import moved_paths


@pytest.mark.parametrize(
    ("command", "moves"),
    [
        ("mv src/a.py lib/b.py", [("/repo/src/a.py", "/repo/lib/b.py")]),
        ("git mv -f old.py new.py", [("/repo/old.py", "/repo/new.py")]),
        ("mv a.py lib", [("/repo/a.py", "/repo/lib/a.py")]),  # a suffix into none: a folder
        ("mv Makefile build", [("/repo/Makefile", "/repo/build")]),
        ("mv a.py b.py lib/", [("/repo/a.py", "/repo/lib/a.py"), ("/repo/b.py", "/repo/lib/b.py")]),
        ('mv "my file.py" ./other.py', [("/repo/my file.py", "/repo/other.py")]),
        ("mv -- -odd.py even.py", [("/repo/-odd.py", "/repo/even.py")]),
        ("ls && mv a.py b.py; git add -A", [("/repo/a.py", "/repo/b.py")]),
        (
            "mv a.py b.py\nmv b.py c.py",
            [("/repo/a.py", "/repo/b.py"), ("/repo/b.py", "/repo/c.py")],
        ),
        ("mv ../out.py in.py", [("/out.py", "/repo/in.py")]),
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
        "mv -t lib a.py",  # the destination first
        "mv a.py b.py &",
        "mv 'unterminated b.py",
        "mv a.py",
        "echo mv a.py b.py > script.sh",
    ],
)
def test_commands_whose_moves_are_not_certain_move_nothing(command: str) -> None:
    assert moved_paths(command, "/repo") == []


def test_no_folder_known_no_move() -> None:
    assert moved_paths("mv a.py b.py", None) == []
    assert moved_paths("mv a.py b.py", "relative/folder") == []
