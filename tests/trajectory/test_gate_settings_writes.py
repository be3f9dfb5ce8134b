"""The repository's gate settings (`.stet/gate.toml`: strict mode, environment variable names)
and its reviewed allowlist reach everything Stet writes: an import (events.jsonl,
narration.md), graduation (a skill, the trajectory's notes), a verdict and the capstone's
commit; `stet gate check` reads the same files, so what is committed passes what CI checks.
In real repositories made with pygit2."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pygit2
import pytest
from claude_transcript import Transcript, working_session
from repos import HEAD_CACHE, commit_files, make_repo

from stet_lsp.core.errors import StetError
from stet_lsp.core.sheet import StyleSheet
from stet_lsp.core.targets import Target, resolve_target
from stet_lsp.gate import GateConfig, load_config
from stet_lsp.trajectory.capstone import CapstoneRefused, capstone
from stet_lsp.trajectory.feedback import mark_step, read_verdicts
from stet_lsp.trajectory.graduation import graduate, review
from stet_lsp.trajectory.importing import import_transcript
from stet_lsp.trajectory.store import working_folder
from stet_lsp.trajectory.validate import validate_path

ENV_VALUE = "wolfgang1987"
BARE = "Kx9vQ2mZ7pL4wR8tN3bY6cF1hJ5dG0sA"
"""A random value with no name a rule knows: only strict mode's entropy rule finds it."""
TOKEN = "ghp_" + "Q7x2Lm9Kp4Rt8Vw1Yz3Bc6Df0Gh5Jk2Mn7Ps9T"
SETTINGS = 'strict = true\nenv_names = ["ACME_CONFIG"]\n'
SECRETS = (ENV_VALUE, BARE)


# -- helpers -----------------------------------------------------------------------------------


@pytest.fixture
def repo(tmp_path: Path) -> pygit2.Repository:
    """`main` with one commit and an identity in its own config (the capstone commits)."""
    made = make_repo(tmp_path / "repo", files={"src/app.py": "x = 1\n", "README.md": "hi\n"})
    made.config["user.name"] = "Ada Reviewer"
    made.config["user.email"] = "ada@example.invalid"
    return made


def with_settings(repo: pygit2.Repository, text: str = SETTINGS) -> None:
    commit(repo, {".stet/gate.toml": text}, "gate settings")


def commit(repo: pygit2.Repository, files: dict[str, str], message: str) -> None:
    """Commit `files` on top of HEAD as the index holds it now (the capstone wrote it)."""
    fresh = pygit2.Repository(repo.path)
    fresh.index.read()
    commit_files(fresh, files, message)


def session(root: Path, tmp_path: Path, name: str = "session.jsonl") -> Path:
    """A session whose tool output holds `ACME_CONFIG=wolfgang1987` and whose reply holds a
    bare random value."""
    return (
        Transcript(root)
        .user("Deploy the service with the ACME settings")
        .tool("toolu_1", "Bash", {"command": "cat deploy.env"}, f"ACME_CONFIG={ENV_VALUE}\n")
        .say(f"Deployed. The service answered {BARE} when it came up.")
        .save(tmp_path / name)
    )


def working_text(target: Target) -> dict[str, str]:
    folder = working_folder(target)
    return {
        name: (folder.path / name).read_text(encoding="utf-8")
        for name in ("events.jsonl", "narration.md", "meta.json")
    }


def committed_files(repo: pygit2.Repository) -> dict[str, str]:
    """Every `.stet/` blob of HEAD's tree by path."""
    fresh = pygit2.Repository(repo.path)
    found: dict[str, str] = {}

    def walk(tree: pygit2.Tree, prefix: str) -> None:
        for entry in tree:
            obj = fresh[entry.id]
            if isinstance(obj, pygit2.Tree):
                walk(obj, f"{prefix}{entry.name}/")
            elif f"{prefix}{entry.name}".startswith(".stet/"):
                assert isinstance(obj, pygit2.Blob)
                found[f"{prefix}{entry.name}"] = bytes(obj.data).decode("utf-8")

    walk(fresh.head.peel(pygit2.Commit).tree, "")
    return found


def gate_check(root: Path, monkeypatch: pytest.MonkeyPatch, stet: Any, *options: str) -> int:
    """`stet gate check` as CI runs it, in the repository."""
    monkeypatch.chdir(root)
    code, _, _ = stet("gate", "check", *options)
    return int(code)


def work_tree(root: Path) -> dict[str, bytes | str]:
    return {
        relative: path.read_bytes() if path.is_file() else "folder"
        for path in sorted(root.rglob("*"))
        if ".git" not in path.relative_to(root).parts
        and (relative := path.relative_to(root).as_posix()) != HEAD_CACHE
    }


# -- with the repository's settings ------------------------------------------------------------


def test_the_repository_settings_reach_every_write_and_the_commit_passes_the_check(
    repo: pygit2.Repository,
    root: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    stet: Any,
) -> None:
    with_settings(repo)
    target = resolve_target(root)

    imported = import_transcript(target, session(root, tmp_path))
    assert imported.redaction.get("env-value") == 1
    assert imported.redaction.get("high-entropy-string", 0) >= 1
    texts = working_text(target)
    for name, text in texts.items():
        assert not any(secret in text for secret in SECRETS), name
    assert "ACME_CONFIG=[REDACTED:env-value#1]" in texts["events.jsonl"]
    assert "ACME_CONFIG=[REDACTED:env-value#1]" in texts["narration.md"]
    assert "[REDACTED:high-entropy-string#" in texts["narration.md"]

    sheet = StyleSheet(target)
    convention = sheet.add(
        f"Deploys read ACME_CONFIG={ENV_VALUE} and sign with {BARE}", kind="convention"
    )
    ruled_out = sheet.add(f"Tried ACME_CONFIG={ENV_VALUE} in staging: refused", kind="ruled-out")
    listed = review(target)
    assert not any(secret in listed for secret in SECRETS)
    skill = graduate(target, convention.id, "skill")["skill"]
    assert not any(secret.lower() in skill["name"] for secret in SECRETS)
    skill_text = (root / skill["path"]).read_text(encoding="utf-8")
    assert "[REDACTED:env-value#" in skill_text
    assert not any(secret in skill_text for secret in SECRETS)
    graduate(target, ruled_out.id, "trajectory")
    events = working_text(target)["events.jsonl"]
    assert '"kind":"note"' in events.replace(" ", "")
    assert not any(secret in events for secret in SECRETS)

    verdict = mark_step(root, working_folder(target), 2, "note", f"ACME_CONFIG={ENV_VALUE} !")
    assert verdict.text is not None and ENV_VALUE not in verdict.text

    result = capstone(target)
    assert result.commit is not None
    committed = committed_files(repo)
    paths = set(committed)
    assert f".stet/trajectories/{result.trajectory}/events.jsonl" in paths
    assert skill["path"] in paths
    assert f".stet/feedback/{result.trajectory}.jsonl" in paths
    for path, text in committed.items():
        assert not any(secret in text for secret in SECRETS), path
    assert read_verdicts(root, result.trajectory)

    assert gate_check(root, monkeypatch, stet) == 0
    # What the reproduction ran: the flags as well as the file.
    assert gate_check(root, monkeypatch, stet, "--env-name", "ACME_CONFIG", "--strict") == 0


def test_without_settings_the_values_stay_and_the_check_then_reads_the_settings(
    repo: pygit2.Repository,
    root: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    stet: Any,
) -> None:
    """The previous behaviour without the file: the default gate does not know these values.
    Once the repository asks for strict redaction, `stet gate check` (no flags) holds the
    commit to it."""
    target = resolve_target(root)
    imported = import_transcript(target, session(root, tmp_path))
    assert "env-value" not in imported.redaction
    assert "high-entropy-string" not in imported.redaction
    events = working_text(target)["events.jsonl"]
    assert all(secret in events for secret in SECRETS)
    capstone(target)
    assert gate_check(root, monkeypatch, stet) == 0

    with_settings(repo)
    assert gate_check(root, monkeypatch, stet) == 1


def test_settings_added_after_an_import_gate_the_session_again(
    repo: pygit2.Repository, root: Path, tmp_path: Path
) -> None:
    target = resolve_target(root)
    source = session(root, tmp_path)
    import_transcript(target, source)
    assert ENV_VALUE in working_text(target)["events.jsonl"]
    assert import_transcript(target, source).changed is False

    with_settings(repo)
    again = import_transcript(target, source)
    assert again.changed is True and again.redaction.get("env-value") == 1
    assert not any(secret in working_text(target)["events.jsonl"] for secret in SECRETS)
    assert import_transcript(target, source).changed is False


def test_a_front_ends_settings_add_to_the_repositorys(
    repo: pygit2.Repository, root: Path, tmp_path: Path, stet: Any
) -> None:
    """Strict when either says so, the union of the names: `--env-name` of a writing command
    adds a name to the file's strict mode; a front end never takes the file's away."""
    with_settings(repo, "strict = true\n")
    config = load_config(root, env_names=["OTHER_NAME"])
    assert config.strict is True and config.env_names == ("OTHER_NAME",)
    assert load_config(root, strict=False).strict is True

    code, out, err = stet(
        "trajectory", "import", "-C", str(root), str(session(root, tmp_path)), "--json"
    )
    assert code == 0, err
    assert "env-value" not in json.loads(out)["redaction"]
    assert ENV_VALUE in working_text(resolve_target(root))["events.jsonl"]
    assert BARE not in working_text(resolve_target(root))["events.jsonl"]

    code, out, err = stet(
        "trajectory",
        "import",
        "-C",
        str(root),
        str(session(root, tmp_path, "second.jsonl")),
        "--env-name",
        "ACME_CONFIG",
        "--json",
    )
    assert code == 0, err
    assert json.loads(out)["redaction"]["env-value"] == 1


def test_an_explicit_configuration_is_used_as_given(
    repo: pygit2.Repository, root: Path, tmp_path: Path
) -> None:
    target = resolve_target(root)
    config = GateConfig(env_names=("ACME_CONFIG",))
    result = import_transcript(target, session(root, tmp_path), gate_config=config)
    assert result.redaction.get("env-value") == 1
    assert BARE in working_text(target)["events.jsonl"]  # not strict


# -- a malformed settings file -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "said"),
    [
        ("strict = 'yes'\n", "`strict` must be true or false"),
        ('env_names = "ACME_CONFIG"\n', "`env_names` must be a list of strings"),
        ('env_names = ["ACME CONFIG"]\n', "is not an environment variable name"),
        ("strict = true\nstrickt = true\n", "unknown keys: strickt"),
        ("strict = \n", "cannot read"),
        ("[gate]\nstrict = true\n", "unknown keys: gate"),
    ],
)
def test_a_malformed_settings_file_is_a_clear_error_that_changes_nothing(
    repo: pygit2.Repository,
    root: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    stet: Any,
    content: str,
    said: str,
) -> None:
    target = resolve_target(root)
    source = session(root, tmp_path)
    import_transcript(target, source)  # a working trajectory, made before the file breaks
    sheet = StyleSheet(target)
    entry = sheet.add(f"ACME_CONFIG={ENV_VALUE} is the staging one", kind="convention")
    (root / ".stet" / "gate.toml").write_text(content, encoding="utf-8")
    head = pygit2.Repository(repo.path).head.target
    before = work_tree(root)

    def refuses(run: Any) -> str:
        with pytest.raises(StetError) as caught:
            run()
        message = str(caught.value)
        assert ".stet/gate.toml" in message and said in message, message
        return message

    refuses(lambda: import_transcript(target, session(root, tmp_path, "other.jsonl")))
    refuses(lambda: graduate(target, entry.id, "skill"))
    refuses(lambda: graduate(target, entry.id, "trajectory"))
    refuses(lambda: review(target))
    refuses(lambda: mark_step(root, working_folder(target), 1, "clever"))
    message = refuses(lambda: capstone(target))
    with pytest.raises(CapstoneRefused) as refused:
        capstone(target)
    assert refused.value.reason == "gate" and "nothing was changed" in message

    for command in (
        ["trajectory", "import", "-C", str(root), str(source)],
        ["capstone", "-C", str(root)],
        ["graduate", "-C", str(root), entry.id, "--to", "trajectory"],
    ):
        code, _, err = stet(*command)
        assert code == 1 and ".stet/gate.toml" in err, (command, err)
    monkeypatch.chdir(root)
    code, _, err = stet("gate", "check")
    assert code == 1 and ".stet/gate.toml" in err

    assert work_tree(root) == before
    assert pygit2.Repository(repo.path).head.target == head
    assert StyleSheet(target).get(entry.id).status == "open"


def test_a_settings_file_that_is_a_link_is_refused(
    repo: pygit2.Repository, root: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere.toml"
    outside.write_text("strict = false\n", encoding="utf-8")
    (root / ".stet").mkdir(exist_ok=True)
    os.symlink(outside, root / ".stet" / "gate.toml")
    with pytest.raises(StetError, match="symbolic link"):
        import_transcript(resolve_target(root), session(root, tmp_path))
    assert not (root / ".stet" / "cache" / "trajectories").exists()


# -- the allowlist -----------------------------------------------------------------------------


def test_the_allowlist_is_honoured_by_the_import_and_the_check(
    repo: pygit2.Repository,
    root: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    stet: Any,
) -> None:
    source = (
        Transcript(root)
        .user("Use the documented fixture token")
        .tool("toolu_1", "Bash", {"command": "cat fixture.env"}, f"GITHUB_TOKEN={TOKEN}\n")
        .say("Done.")
        .save(tmp_path / "fixture.jsonl")
    )
    target = resolve_target(root)
    import_transcript(target, source)
    assert TOKEN not in working_text(target)["events.jsonl"]  # no allowlist: redacted

    allowlist = f'values = ["{TOKEN}"]\n'
    commit(repo, {".stet/gate-allowlist.toml": allowlist}, "allowlist")
    result = import_transcript(target, source)
    assert result.changed is True and "github-token" not in result.redaction
    texts = working_text(target)
    assert TOKEN in texts["events.jsonl"] and TOKEN in texts["narration.md"]

    committed = capstone(target)
    events = committed_files(repo)[f".stet/trajectories/{committed.trajectory}/events.jsonl"]
    assert TOKEN in events
    assert gate_check(root, monkeypatch, stet) == 0


def test_strict_mode_leaves_stets_own_ids_whole(
    repo: pygit2.Repository, root: Path, tmp_path: Path
) -> None:
    """A target key (`branch--<slug>--<24 hex>`) and a trajectory id (`<date>-<slug>-<12
    hex>`) are Stet's identifiers, not secrets: strict mode's entropy rule took the key in
    meta.json for one (`"key": "[REDACTED:high-entropy-string#2]"`)."""
    with_settings(repo, "strict = true\n")
    # This branch's key, branch--feature-retry--b4b3deb12fcd358baeda5894, reads as random.
    repo.branches.local.create("feature/retry", repo.head.peel(pygit2.Commit))
    repo.checkout("refs/heads/feature/retry")
    target = resolve_target(root)
    assert target.key == "branch--feature-retry--b4b3deb12fcd358baeda5894"
    import_transcript(target, working_session(root, tmp_path / "session.jsonl"))
    result = capstone(target)
    assert result.commit is not None and result.trajectory is not None
    folder = root / ".stet" / "trajectories" / result.trajectory
    meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    assert meta["target"]["key"] == target.key
    assert meta["id"] == result.trajectory
    assert "[REDACTED:" not in json.dumps(meta)
    assert [issue for issue in validate_path(folder) if issue.severity == "error"] == []
