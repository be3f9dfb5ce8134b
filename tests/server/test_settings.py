"""Typed settings: nested or dotted keys, defaults, clear messages for bad values."""

from __future__ import annotations

from stet_lsp.server.settings import Settings, parse_settings


def test_nested_and_dotted_keys() -> None:
    settings, problems = parse_settings(
        {
            "stet": {
                "marker": "review:",
                "margin": {"removeCommentOnRecord": False},
                "gate.strict": True,
                "gate": {"envNames": ["DB_PASSWORD"]},
            }
        }
    )
    assert problems == []
    assert settings.marker == "review"
    assert settings.remove_comment_on_record is False
    assert settings.gate_strict is True and settings.gate_env_names == ("DB_PASSWORD",)


def test_bad_values_get_a_message_and_the_default() -> None:
    base = Settings(brief_budget=300)
    settings, problems = parse_settings(
        {
            "brief": {"budget": "lots"},
            "entries": {"severity": "loud"},
            "marker": "two words",
            "sheet": {"ttlDays": -1},
            "gate": {"envNames": "TOKEN"},
        },
        base,
    )
    assert settings == Settings()
    assert len(problems) == 5
    assert any("stet.brief.budget = 'lots'" in p and "using 800" in p for p in problems)


def test_empty_and_odd_shapes() -> None:
    assert parse_settings(None) == (Settings(), [])
    assert parse_settings([]) == (Settings(), [])  # an empty Lua table
    settings, problems = parse_settings(42)
    assert settings == Settings() and "must be an object" in problems[0]
    assert parse_settings({"unknown": 1}) == (Settings(), [])
