"""`stet gate scan | redact | check` on odd files: what changes while it is read, names that
collide, and what git's index holds besides files."""

import os
import random
from pathlib import Path
from typing import Any

import gate_corpus
import pytest

from stet_lsp.cli import main
from stet_lsp.gate import stream

RNG = random.Random(47)


def ghp() -> str:
    return "ghp_" + gate_corpus.pick(RNG, gate_corpus.ALNUM, 36)


def run(argv: list[str]) -> int:
    return main(["gate", *argv])


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_file_replaced_while_it_is_redacted_in_place_is_kept(
    in_tmp: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The file is read by its descriptor: another writer that replaces it (a rename, as
    every Stet writer does) between the two readings is not seen by them, and its content
    must not be overwritten by the redaction of the old one."""
    source = in_tmp / "n.md"
    source.write_text(f"token {ghp()}\n")
    fresh = "written meanwhile by another writer\n"
    again = stream._again

    def replaced_between_the_readings(*args: Any, **kwargs: Any) -> Any:
        (in_tmp / "new.md").write_text(fresh)
        os.replace(in_tmp / "new.md", source)
        return again(*args, **kwargs)

    monkeypatch.setattr(stream, "_again", replaced_between_the_readings)
    assert run(["redact", "n.md", "--in-place"]) == 1
    assert "n.md changed while it was read" in capsys.readouterr().err
    assert source.read_text() == fresh
    assert sorted(path.name for path in in_tmp.iterdir()) == ["n.md"]


def test_a_file_appended_to_after_it_was_read_is_not_redacted_in_place(
    in_tmp: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    source = in_tmp / "n.md"
    original = f"token {ghp()}\n"
    source.write_text(original)
    redact_blocks = stream.redact_blocks

    def appended_once_read(*args: Any, **kwargs: Any) -> Any:
        report = redact_blocks(*args, **kwargs)
        with source.open("a") as appending:
            appending.write("a line appended meanwhile\n")
        return report

    monkeypatch.setattr(stream, "redact_blocks", appended_once_read)
    assert run(["redact", "n.md", "--in-place"]) == 1
    assert "n.md changed while it was read" in capsys.readouterr().err
    assert source.read_text() == original + "a line appended meanwhile\n"
