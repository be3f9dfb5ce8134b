"""The result cache and .stetignore."""

import random

import gate_corpus

from stet_lsp.gate import GateConfig, ResultCache, StetIgnore, scan_text
from stet_lsp.gate.stetignore import OMITTED

RNG = random.Random(8)


def text_with_secret() -> str:
    return "log line\n" * 10 + "ghp_" + gate_corpus.pick(RNG, gate_corpus.ALNUM, 36) + "\n"


def test_memory_cache_returns_the_same_findings() -> None:
    cache = ResultCache()
    text = text_with_secret()
    first = scan_text(text, cache=cache)
    assert scan_text(text, cache=cache) == first == scan_text(text, cache=None)


def test_cache_keys_depend_on_configuration() -> None:
    cache = ResultCache()
    text = "ACME_PASS=lowentropy\n"
    assert scan_text(text, cache=cache) == []
    assert scan_text(text, config=GateConfig(env_names=("ACME_PASS",)), cache=cache) != []


def test_disk_cache_survives_a_new_process_cache(tmp_path) -> None:
    config = GateConfig(cache_dir=tmp_path / "gate")
    text = text_with_secret()
    first = scan_text(text, config=config, cache=ResultCache())
    assert list((tmp_path / "gate").rglob("*.json"))
    assert scan_text(text, config=config, cache=ResultCache()) == first


def test_corrupt_disk_entries_are_misses(tmp_path) -> None:
    config = GateConfig(cache_dir=tmp_path)
    text = text_with_secret()
    first = scan_text(text, config=config, cache=ResultCache())
    for entry in tmp_path.rglob("*.json"):
        entry.write_text("{torn")
    assert scan_text(text, config=config, cache=ResultCache()) == first


def test_stetignore_uses_gitignore_syntax(tmp_path) -> None:
    (tmp_path / ".stetignore").write_text("secrets/\n*.pem\n!public.pem\n/.env\n")
    ignore = StetIgnore.load(tmp_path)
    assert ignore.matches("secrets/prod.yaml")
    assert ignore.matches("deploy/key.pem")
    assert not ignore.matches("deploy/public.pem")
    assert ignore.matches(".env") and not ignore.matches("app/.env")
    assert ignore.matches("./secrets/x") and ignore.matches("secrets\\x")
    assert not ignore.matches("src/main.py")
    assert ignore.omit("deploy/key.pem", "content") == OMITTED
    assert ignore.omit("src/main.py", "content") == "content"


def test_missing_stetignore_ignores_nothing(tmp_path) -> None:
    assert not StetIgnore.load(tmp_path).matches("anything")
    assert StetIgnore.load(tmp_path).empty


def test_a_stetignore_of_comments_ignores_nothing_and_one_pattern_is_not_empty(tmp_path) -> None:
    (tmp_path / ".stetignore").write_text("# nothing yet\n\n")
    ignore = StetIgnore.load(tmp_path)
    assert ignore.empty and not ignore.matches("anything") and not ignore.matches(".env")
    assert not StetIgnore.from_lines(["# only", "!kept.txt"]).matches("kept.txt")
    assert not StetIgnore.from_lines(["*.pem"]).empty


def test_a_stetignore_pattern_re_would_backtrack_on_does_not_hold_an_import(tmp_path) -> None:
    """A cloned repository's `.stetignore` is read before review: a pattern of many `*`
    backtracked for minutes under `re` on one long path (30 characters: 31 s). Matched in a
    process of its own; no answer within 60 s is a hang."""
    import subprocess
    import sys

    (tmp_path / ".stetignore").write_text("*a" * 24 + " b\n*.env\n")
    code = (
        "import sys; from pathlib import Path; from stet_lsp.gate import StetIgnore; "
        "ignore = StetIgnore.load(Path(sys.argv[1])); "
        "print(ignore.matches('a' * 40), ignore.matches('x/.env'))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=60
    )
    assert done.stdout.split() == ["False", "True"], done.stderr


def test_a_stetignore_pattern_re2_cannot_take_is_refused(tmp_path) -> None:
    """Refused, not matched some other way: what `.stetignore` hides must not leak."""
    import warnings

    import pytest

    from stet_lsp.core.errors import StetError

    (tmp_path / ".stetignore").write_text("secrets[[:digit:]].txt\n")
    with (
        warnings.catch_warnings(),  # pathspec's own `re` reads `[[` as a nested set to come
        pytest.raises(StetError, match="POSIX classes"),
    ):
        warnings.simplefilter("ignore", FutureWarning)
        StetIgnore.load(tmp_path)
