"""Typed settings: nested or dotted keys, defaults, clear messages for bad values; pulled from
the client and re-read when it says they changed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest_lsp
from lsp_harness import SERVER, diagnostics, eventually, open_file, start
from lsprotocol import types
from pytest_lsp import LanguageClient

from stet_lsp.server.settings import SCHEMA, Settings, json_schema, parse_settings


def test_nested_and_dotted_keys() -> None:
    settings, problems = parse_settings(
        {
            "stet": {
                "marker": "review:",
                "margin": {"removeCommentOnRecord": False},
                "gate.strict": True,
                "gate": {"envNames": ["DB_PASSWORD"]},
                "brief": {"budget": 1200.0},
            }
        }
    )
    assert problems == []
    assert settings.marker == "review"
    assert settings.remove_comment_on_record is False
    assert settings.gate_strict is True and settings.gate_env_names == ("DB_PASSWORD",)
    assert settings.brief_budget == 1200 and isinstance(settings.brief_budget, int)


def test_keys_named_as_a_settings_file_names_them() -> None:
    """`stet.margin.severity`, as VS Code's settings.json and the settings tables name it,
    in `initializationOptions` or a pushed `settings` object: read, not passed over."""
    settings, problems = parse_settings({"stet.margin.severity": "error", "stet.gate.strict": True})
    assert problems == []
    assert settings.margin_severity == "error" and settings.gate_strict is True


def test_bad_values_get_a_message_and_the_default() -> None:
    base = Settings(brief_budget=300)
    settings, problems = parse_settings(
        {
            "brief": {"budget": "lots"},
            "entries": {"severity": "loud"},
            "marker": "two words",
            "sheet": {"ttlDays": -1},
            "gate": {"envNames": "TOKEN"},
            "margin": {"removeCommentOnRecord": "yes"},
        },
        base,
    )
    assert settings == Settings()
    assert len(problems) == 6
    assert (
        'Stet setting stet.brief.budget = "lots" is not a whole number of 1 or more; using 800'
        in problems
    )
    assert any("stet.entries.severity" in p and "information or hint" in p for p in problems)
    assert any(
        "stet.sheet.ttlDays = -1 is not a number, 0 or more; using 30" in p for p in problems
    )


def test_empty_and_odd_shapes() -> None:
    assert parse_settings(None) == (Settings(), [])
    assert parse_settings([]) == (Settings(), [])  # an empty Lua table
    settings, problems = parse_settings(42)
    assert settings == Settings() and "must be an object" in problems[0]
    assert parse_settings({"unknown": 1}) == (
        Settings(),
        ["Stet setting stet.unknown is not one of Stet's settings (ignored)"],
    )


def test_every_field_is_declared_once_with_its_default() -> None:
    schema = json_schema()["properties"]
    assert [item.name for item in SCHEMA] == list(Settings.__dataclass_fields__)
    assert schema["stet.brief.budget"] == {
        "type": "integer",
        "default": 800,
        "minimum": 1,
        "description": "Token budget of the brief for the next agent run.",
    }
    assert schema["stet.gate.envNames"]["default"] == []
    assert schema["stet.margin.severity"]["enum"] == ["error", "warning", "information", "hint"]


@pytest_lsp.fixture(config=SERVER)
async def pulling(lsp_client: LanguageClient):  # type: ignore[no-untyped-def]
    lsp_client.set_configuration(
        {"marker": "review", "margin": {"severity": "warning"}, "brief": {"budget": 0}},
        section="stet",
    )
    await start(lsp_client, "visual-studio-code")
    yield
    await lsp_client.shutdown_session()


async def test_settings_are_pulled_and_changes_watched(pulling: LanguageClient, root: Path) -> None:
    path = root / "src" / "notes.py"
    path.write_text("# review: pulled marker\n# stet: default marker\nx = 1\n")
    document = open_file(pulling, path)

    def noted(text: str, severity: types.DiagnosticSeverity) -> Any:
        async def check() -> Any:
            found = await diagnostics(pulling, document)
            return [d for d in found if text in d.message and d.severity == severity]

        return check

    assert await eventually(noted("pulled marker", types.DiagnosticSeverity.Warning))
    [registration] = await eventually(
        lambda: [
            r
            for r in pulling.registered  # type: ignore[attr-defined]
            if r.method == types.WORKSPACE_DID_CHANGE_CONFIGURATION
        ]
    )
    assert registration.method == types.WORKSPACE_DID_CHANGE_CONFIGURATION
    assert registration.register_options == {"section": "stet"}

    pulling.set_configuration(
        {"marker": "stet", "margin": {"severity": "error"}, "brief": {"budget": 0}},
        section="stet",
    )
    # What a client registered with a section sends; the server asks for the current values.
    pulling.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    assert await eventually(noted("default marker", types.DiagnosticSeverity.Error))
    budget = [m for m in pulling.messages if "stet.brief.budget" in m.message]
    assert len(budget) == 1, "the same bad value is reported once"
