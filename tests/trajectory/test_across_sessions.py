"""A value one session of a working trajectory gives away only by its context (an assignment
to a secret's name, a command that printed it) stays redacted where another session of the
trajectory shows it bare, whichever session is imported first."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pygit2
import pytest
from claude_transcript import START, Transcript

from stet_lsp.core.targets import resolve_target
from stet_lsp.trajectory.store import working_folder

Stet = Callable[..., tuple[int, str, str]]
VALUE = "hunter2Summer"
PRINTED = "Xk9mQ2vLp8rT4wZ"
SESSION_A = "aaaaaaaa-1111-4222-8333-444455556666"
SESSION_B = "bbbbbbbb-1111-4222-8333-444455556666"


def telling(root: Path, tmp_path: Path) -> Path:
    """Session A: sets the value where its context gives it away, and prints another."""
    transcript = (
        Transcript(root, SESSION_A)
        .user("Set up the API client")
        .tool("toolu_a1", "Bash", {"command": f"export API_TOKEN={VALUE}"}, "")
        .tool("toolu_a2", "Bash", {"command": "printenv GITHUB_TOKEN"}, f"{PRINTED}\n")
        .say("Done.")
    )
    return transcript.save(tmp_path / "a" / f"{SESSION_A}.jsonl")


def bare(root: Path, tmp_path: Path) -> Path:
    """Session B, an hour later: shows both values where no rule sees them."""
    transcript = (
        Transcript(root, SESSION_B, START + timedelta(hours=1))
        .user("What is in the notes?")
        .tool("toolu_b1", "Bash", {"command": "cat notes.txt"}, f"{VALUE}\n{PRINTED}\n")
        .say(f"They hold {VALUE}.")
    )
    return transcript.save(tmp_path / "b" / f"{SESSION_B}.jsonl")


def imported(stet: Stet, root: Path, source: Path) -> dict[str, object]:
    code, out, err = stet("-C", str(root), "trajectory", "import", "--json", str(source))
    assert code == 0, err
    result: dict[str, object] = json.loads(out)
    return result


def holding(root: Path, *values: str) -> list[str]:
    """The files under .stet/ that hold one of `values`."""
    return sorted(
        str(path.relative_to(root))
        for path in (root / ".stet").rglob("*")
        if path.is_file() and any(value.encode() in path.read_bytes() for value in values)
    )


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(root)): path.read_bytes()
        for path in sorted((root / ".stet").rglob("*"))
        if path.is_file() and not path.name.endswith(".lock")
    }


@pytest.mark.parametrize("order", ["telling first", "bare first"])
def test_a_value_one_session_gives_away_stays_redacted_in_the_others(
    root: Path, tmp_path: Path, stet: Stet, order: str
) -> None:
    sources = [telling(root, tmp_path), bare(root, tmp_path)]
    if order == "bare first":
        sources.reverse()
    for source in sources:
        imported(stet, root, source)

    assert holding(root, VALUE, PRINTED) == []
    folder = working_folder(resolve_target(root)).path
    events = (folder / "events.jsonl").read_text()
    narration = (folder / "narration.md").read_text()
    assert "They hold [REDACTED:" in events and "They hold [REDACTED:" in narration
    records = [json.loads(path.read_text()) for path in (folder / "sessions").glob("*.json")]
    meta = json.loads((folder / "meta.json").read_text())
    assert sum(meta["redaction"].values()) == sum(
        sum(record["redaction"].values()) for record in records
    )

    before = snapshot(root)
    for source in sources:
        assert imported(stet, root, source)["changed"] is False
    assert snapshot(root) == before


@pytest.fixture
def committing_root(repo: pygit2.Repository) -> Path:
    repo.config["user.name"] = "Ada Reviewer"
    repo.config["user.email"] = "ada@example.invalid"
    return Path(repo.workdir).resolve()


def test_a_value_a_committed_session_gave_away_stays_redacted_in_the_next_working_trajectory(
    committing_root: Path, tmp_path: Path, stet: Stet
) -> None:
    """The capstone archived the working trajectory that held the telling session: its stored
    lines, compared with its transcript read again, tell the values."""
    root = committing_root
    imported(stet, root, telling(root, tmp_path))
    assert stet("-C", str(root), "capstone")[0] == 0
    source = bare(root, tmp_path)
    result = imported(stet, root, source)

    assert result["warnings"] == []
    assert holding(root, VALUE, PRINTED) == []
    before = snapshot(root)
    assert imported(stet, root, source)["changed"] is False
    assert snapshot(root) == before


def test_a_value_shown_bare_in_a_committed_session_stays_there(
    committing_root: Path, tmp_path: Path, stet: Stet
) -> None:
    """A capstone committed the session that shows the value bare before the one that gives it
    away was imported: the committed trajectory (and its archived working one) keep it; the
    next working trajectory does not."""
    root = committing_root
    imported(stet, root, bare(root, tmp_path))
    assert stet("-C", str(root), "capstone")[0] == 0
    imported(stet, root, telling(root, tmp_path))

    assert all(
        path.startswith((".stet/trajectories/", ".stet/cache/trajectories/.archive/"))
        for path in holding(root, VALUE, PRINTED)
    )


def test_a_session_whose_transcript_is_gone_is_named_in_a_warning(
    root: Path, tmp_path: Path, stet: Stet
) -> None:
    telling_source = telling(root, tmp_path)
    imported(stet, root, telling_source)
    telling_source.unlink()
    result = imported(stet, root, bare(root, tmp_path))

    (warning,) = result["warnings"]
    assert isinstance(warning, str)
    assert f"session {SESSION_A}'s values redacted in" in warning
    assert "its transcript cannot be read again" in warning
    code, out, _ = stet("-C", str(root), "trajectory", "import", str(bare(root, tmp_path)))
    assert code == 0 and "warning" not in out  # unchanged: nothing was compared


def test_a_session_whose_transcript_moved_its_lines_is_named_in_a_warning(
    root: Path, tmp_path: Path, stet: Stet
) -> None:
    """A line added before the others: the stored events that hold a marker are no longer
    at their lines, and their values cannot be read again."""
    telling_source = telling(root, tmp_path)
    imported(stet, root, telling_source)
    summary = json.dumps({"type": "summary", "summary": "Setup", "leafUuid": "x-0001"})
    telling_source.write_text(summary + "\n" + telling_source.read_text())
    result = imported(stet, root, bare(root, tmp_path))

    (warning,) = result["warnings"]
    assert isinstance(warning, str)
    assert "no longer read so" in warning and str(telling_source) in warning


def test_a_session_whose_record_names_no_transcript_is_named_in_a_warning(
    root: Path, tmp_path: Path, stet: Stet
) -> None:
    """A record written before records named their transcript."""
    imported(stet, root, telling(root, tmp_path))
    folder = working_folder(resolve_target(root)).path
    (path,) = (folder / "sessions").glob("*.json")
    record = json.loads(path.read_text())
    del record["transcript"]
    path.write_text(json.dumps(record, indent=2) + "\n")
    result = imported(stet, root, bare(root, tmp_path))

    assert result["warnings"] == [
        f"session {SESSION_A}'s values redacted in .stet/cache/trajectories/"
        f"{resolve_target(root).key}/sessions/{path.stem}.jsonl may show in this session: "
        "its record names no transcript"
    ]


@pytest.mark.parametrize("order", ["telling first", "bare first"])
def test_a_short_printed_value_stays_redacted_in_the_others(
    root: Path, tmp_path: Path, stet: Stet, order: str
) -> None:
    """A command printed a value of six characters, which its session redacts wherever it
    stands, as words are not: read again from that session's lines too."""
    short = "x7k2pq"
    telling_source = (
        Transcript(root, SESSION_A)
        .user("Check the token")
        .tool("toolu_a1", "Bash", {"command": "printenv GITHUB_TOKEN"}, f"{short}\n")
        .save(tmp_path / "a" / f"{SESSION_A}.jsonl")
    )
    bare_source = (
        Transcript(root, SESSION_B, START + timedelta(hours=1))
        .user("What is in the notes?")
        .tool("toolu_b1", "Bash", {"command": "cat notes.txt"}, f"token {short}\n")
        .save(tmp_path / "b" / f"{SESSION_B}.jsonl")
    )
    first, second = [telling_source, bare_source][:: 1 if order == "telling first" else -1]
    imported(stet, root, first)
    # A process of its own: the other session's lines are read before the gate is loaded.
    command = ["-C", str(root), "trajectory", "import", "--json", str(second)]
    done = subprocess.run(
        [sys.executable, "-m", "stet_lsp", *command],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["warnings"] == []

    assert holding(root, short) == []


def test_a_transcript_that_fails_to_read_again_is_named_in_a_warning(
    root: Path, tmp_path: Path, stet: Stet
) -> None:
    """Another session's transcript overwritten with a damaged zstd frame: its values cannot
    be read again, which this import says, and goes on."""
    telling_source = telling(root, tmp_path)
    imported(stet, root, telling_source)
    telling_source.write_bytes(b"\x28\xb5\x2f\xfd" + b"\x00\xff" * 64)
    result = imported(stet, root, bare(root, tmp_path))

    (warning,) = result["warnings"]
    assert isinstance(warning, str) and "cannot be read again" in warning


def test_an_archive_behind_a_link_is_not_read(root: Path, tmp_path: Path, stet: Stet) -> None:
    """A repository may hold `.archive` as a link to elsewhere: imports go on, reading
    nothing there."""
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / f"{resolve_target(root).key}-1" / "sessions").mkdir(parents=True)
    archive = root / ".stet" / "cache" / "trajectories" / ".archive"
    archive.parent.mkdir(parents=True, exist_ok=True)
    archive.symlink_to(elsewhere)

    result = imported(stet, root, telling(root, tmp_path))
    assert result["warnings"] == []


def test_an_archive_git_tracks_is_not_read(
    repo: pygit2.Repository, root: Path, tmp_path: Path, stet: Stet
) -> None:
    """A repository that commits `.stet/cache/trajectories/.archive` brought it: none of its
    records is read (one naming a transcript that is not there would be warned about), and
    the import says that the archive was left."""
    imported(stet, root, telling(root, tmp_path))
    folder = working_folder(resolve_target(root)).path
    (record_path,) = (folder / "sessions").glob("*.json")
    record = json.loads(record_path.read_text())
    archived = root / ".stet/cache/trajectories/.archive" / f"{resolve_target(root).key}-1"
    (archived / "sessions").mkdir(parents=True)
    stem = "cccccccc-1111-4222-8333-444455556666"
    for suffix in (".json", ".jsonl"):
        source = record_path.with_suffix(suffix)
        text = source.read_text().replace(SESSION_A, stem)
        if suffix == ".json":
            text = json.dumps({**json.loads(text), "transcript": str(tmp_path / "gone.jsonl")})
        (archived / "sessions" / f"{stem}{suffix}").write_text(text)
    assert "[REDACTED:" in (archived / "sessions" / f"{stem}.jsonl").read_text()
    assert record["transcript"]

    untracked = imported(stet, root, bare(root, tmp_path))["warnings"]
    assert any(f"{stem}.jsonl may show" in warning for warning in untracked)  # type: ignore[operator]
    repo.index.add((archived / "sessions" / f"{stem}.json").relative_to(root).as_posix())
    repo.index.write()
    source = bare(root, tmp_path)
    source.write_text(source.read_text().replace("What is in the notes?", "And now?"))
    assert imported(stet, root, source)["warnings"] == [
        "the sessions archived under .stet/cache/trajectories/.archive are not read (git "
        "tracks files there): a value only their context gave away may show in this session"
    ]


@pytest.mark.parametrize("index", ["version 4", "a tracked path holding .archive's"])
def test_an_archived_session_is_read_whatever_the_index_looks_like(
    committing_root: Path, tmp_path: Path, stet: Stet, index: str
) -> None:
    """Whether git tracks anything under `.archive` is read from the index file's bytes when
    they tell; when they do not (a version 4 index compresses its paths; another path holds
    the same bytes), libgit2 says, and the archive is read."""
    root = committing_root
    imported(stet, root, telling(root, tmp_path))
    assert stet("-C", str(root), "capstone")[0] == 0
    if index == "version 4":
        subprocess.run(["git", "update-index", "--index-version", "4"], cwd=root, check=True)
    else:
        nested = root / "examples" / ".stet/cache/trajectories/.archive/README.md"
        nested.parent.mkdir(parents=True)
        nested.write_text("An example.\n")
        subprocess.run(["git", "add", "-f", str(nested)], cwd=root, check=True)
    result = imported(stet, root, bare(root, tmp_path))

    assert result["warnings"] == []
    assert holding(root, VALUE, PRINTED) == []


def test_an_archived_folder_that_cannot_be_read_is_named_in_a_warning(
    committing_root: Path, tmp_path: Path, stet: Stet
) -> None:
    """A record in an archive that is a link: the folder is left, and the import says so."""
    root = committing_root
    imported(stet, root, telling(root, tmp_path))
    assert stet("-C", str(root), "capstone")[0] == 0
    (archived,) = (root / ".stet/cache/trajectories/.archive").iterdir()
    (archived / "sessions" / "zzzz.json").symlink_to(tmp_path / "elsewhere.json")
    result = imported(stet, root, bare(root, tmp_path))

    (warning,) = result["warnings"]
    assert isinstance(warning, str) and "cannot be read" in warning and archived.name in warning
