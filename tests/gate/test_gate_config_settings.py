"""A repository's gate settings, `.stet/gate.toml`: read through the boundary, refused with
the file's name when malformed, added to (never taken from) by a front end's own settings,
and read by `stet gate scan|redact|check` as by every writer."""

from __future__ import annotations

import os
from pathlib import Path

import pygit2
import pytest

from stet_lsp.cli import main
from stet_lsp.core.errors import StetError
from stet_lsp.gate import SETTINGS_PATH, GateConfig, GateSettings, load_config

ENV_LINE = "ACME_CONFIG=wolfgang1987\n"
BARE_LINE = "the service answered Kx9vQ2mZ7pL4wR8tN3bY6cF1hJ5dG0sA when it came up\n"


def run(*argv: str) -> int:
    return main(["gate", *argv])


@pytest.fixture
def repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository with a work tree (so results are cached on disk), as the current folder."""
    root = tmp_path / "repo"
    pygit2.init_repository(str(root), initial_head="main")
    monkeypatch.chdir(root)
    return root


def settings_file(root: Path, text: str) -> None:
    path = root / SETTINGS_PATH
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_no_file_is_the_defaults(tmp_path: Path) -> None:
    assert GateSettings.load(tmp_path) == GateSettings()
    assert load_config(tmp_path) == GateConfig()


def test_a_file_sets_strict_and_names(tmp_path: Path) -> None:
    settings_file(
        tmp_path, '# reviewed\nstrict = true\nenv_names = ["B_NAME", "A.NAME", "B_NAME"]\n'
    )
    assert GateSettings.load(tmp_path) == GateSettings(True, ("A.NAME", "B_NAME"))
    config = load_config(tmp_path)
    assert config.strict is True and config.env_names == ("A.NAME", "B_NAME")


def test_a_front_end_adds_and_never_takes_away(tmp_path: Path) -> None:
    settings_file(tmp_path, 'env_names = ["FROM_FILE"]\n')
    config = load_config(tmp_path, strict=True, env_names=["FROM_EDITOR", "FROM_FILE"])
    assert config.strict is True and config.env_names == ("FROM_EDITOR", "FROM_FILE")
    settings_file(tmp_path, "strict = true\n")
    assert load_config(tmp_path, strict=False).strict is True
    assert load_config(tmp_path).fingerprint != load_config(tmp_path.parent).fingerprint


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (b"strict = 1\n", "`strict` must be true or false"),
        (b"env_names = [1]\n", "`env_names` must be a list of strings"),
        (b'env_names = ["9LIVES"]\n', "'9LIVES' is not an environment variable name"),
        (b'env_names = [""]\n', "'' is not an environment variable name"),
        (b"values = []\n", "unknown keys: values"),
        (b"strict = true\nstrict = false\n", "cannot read"),
        (b"\xff\xfe", "cannot read"),
        (b"# " + b"x" * (65 * 1024) + b"\n", "larger than"),
    ],
)
def test_a_malformed_file_is_refused_naming_it(tmp_path: Path, content: bytes, said: str) -> None:
    path = tmp_path / SETTINGS_PATH
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    with pytest.raises(StetError) as caught:
        load_config(tmp_path)
    assert str(caught.value).startswith(f"{SETTINGS_PATH.as_posix()}: ")
    assert said in str(caught.value)


def test_a_link_or_a_folder_is_not_read(tmp_path: Path) -> None:
    outside = tmp_path / "outside.toml"
    outside.write_text("strict = false\n", encoding="utf-8")
    root = tmp_path / "repo"
    (root / ".stet").mkdir(parents=True)
    os.symlink(outside, root / SETTINGS_PATH)
    with pytest.raises(StetError, match="symbolic link"):
        load_config(root)
    os.unlink(root / SETTINGS_PATH)
    (root / SETTINGS_PATH).mkdir()
    with pytest.raises(StetError):
        load_config(root)


def test_scan_and_redact_read_the_repositorys_settings(
    repository: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (repository / "run.log").write_text(ENV_LINE + BARE_LINE, encoding="utf-8")
    assert run("scan", "run.log") == 0  # cached on disk with the default options
    settings_file(repository, 'env_names = ["ACME_CONFIG"]\n')
    assert run("scan", "run.log") == 1  # another configuration: not the cached answer
    assert "env-value" in capsys.readouterr().out
    settings_file(repository, 'strict = true\nenv_names = ["ACME_CONFIG"]\n')
    assert run("redact", "run.log", "--in-place") == 0
    redacted = (repository / "run.log").read_text(encoding="utf-8")
    assert "wolfgang1987" not in redacted and "Kx9vQ2mZ7pL4wR8tN3bY6cF1hJ5dG0sA" not in redacted
    assert run("scan", "run.log") == 0


def test_flags_add_to_the_file(repository: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repository / "run.log").write_text(ENV_LINE + BARE_LINE, encoding="utf-8")
    settings_file(repository, "strict = true\n")
    assert run("scan", "run.log", "--json") == 1
    rules = capsys.readouterr().out
    assert "high-entropy-string" in rules and "env-value" not in rules
    assert run("scan", "run.log", "--env-name", "ACME_CONFIG") == 1
    assert "env-value" in capsys.readouterr().out


def test_check_refuses_a_malformed_file(
    repository: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings_file(repository, "strict = maybe\n")
    assert run("check") == 1
    err = capsys.readouterr().err
    assert ".stet/gate.toml: cannot read" in err
    assert err.rstrip().endswith("correct it (TOML; docs/gate.md names its settings) or remove it")


def test_what_is_shown_keeps_each_files_part_when_the_other_is_broken(repository: Path) -> None:
    """`stet check` and the editor flag more, never less: a broken allowlist does not drop the
    repository's settings, and broken settings leave strict on without dropping the allowlist."""
    from stet_lsp.check import gate_config
    from stet_lsp.gate.allowlist import ALLOWLIST_PATH

    settings_file(repository, 'strict = true\nenv_names = ["ACME_CONFIG"]\n')
    allowlist = repository / ALLOWLIST_PATH
    allowlist.write_text("this is [not an allowlist\n", encoding="utf-8")
    config = gate_config(repository)
    assert (config.strict, config.env_names, config.allowlist) == (True, ("ACME_CONFIG",), None)

    allowlist.unlink()
    settings_file(repository, "strict = maybe\n")
    assert gate_config(repository, env_names=["OTHER"]).strict
    assert gate_config(repository, env_names=["OTHER"]).env_names == ("OTHER",)


def test_an_oversized_allowlist_or_stetignore_is_refused_unread(tmp_path: Path) -> None:
    """A repository can commit a `.stet/gate-allowlist.toml` or `.stetignore` of gigabytes
    (git compresses zeros to almost nothing): every gate run or import read it whole. One a
    byte over its limit (a sparse file) is refused, naming it, and no more than the limit and
    a byte is read."""
    import tracemalloc

    from stet_lsp.gate.allowlist import ALLOWLIST_PATH, MAX_ALLOWLIST_BYTES
    from stet_lsp.gate.stetignore import MAX_BYTES, STETIGNORE, StetIgnore

    allowlist = tmp_path / ALLOWLIST_PATH
    allowlist.parent.mkdir(parents=True)
    allowlist.touch()
    os.truncate(allowlist, MAX_ALLOWLIST_BYTES + 1)
    with pytest.raises(StetError) as caught:
        load_config(tmp_path)
    assert str(caught.value).startswith(f"{ALLOWLIST_PATH.as_posix()}: larger than ")
    allowlist.write_bytes(b'values = ["x"]\n' + b"#" * (MAX_ALLOWLIST_BYTES - 16) + b"\n")
    assert load_config(tmp_path).allowlist is not None  # the limit itself is read

    ignore = tmp_path / STETIGNORE
    ignore.touch()
    os.truncate(ignore, 64 * MAX_BYTES)
    tracemalloc.start()
    try:
        with pytest.raises(StetError) as caught:
            StetIgnore.load(tmp_path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert str(caught.value).startswith(f"{STETIGNORE}: larger than {MAX_BYTES:,} bytes; not read")
    assert "shorten it" in str(caught.value)
    assert peak < 4 * MAX_BYTES


@pytest.mark.parametrize("name", ["gate.toml", "gate-allowlist.toml"])
def test_a_cloned_file_nested_too_deeply_is_refused_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    """A clone can commit a `.stet/gate.toml` or allowlist of arrays nested some thousands
    deep, well under its size limit: the TOML parser recurses and raised RecursionError, a
    traceback from every command and an internal error from the servers. It is malformed
    like any other: an error naming it, and what is shown still flags (strict on)."""
    from repos import hostile_clone

    root = hostile_clone(tmp_path, {f".stet/{name}": "a = " + "[" * 30_000 + "\n"})
    monkeypatch.chdir(root)
    assert run("check") == 1
    err = capsys.readouterr().err
    assert f".stet/{name}: cannot read: nested too deeply" in err and "Traceback" not in err
    shown = load_config(root, lenient=True)
    assert shown.allowlist is None and shown.strict is (name == "gate.toml")
