"""The VS Code extension's README gives a minimal working `settings.json`: every key in it is a
setting the extension contributes (editors/vscode/package.json) and every value is valid for
it there and, for the server's own settings, in the server's settings schema. No editor runs."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from stet_lsp.server.settings import SCHEMA

VSCODE = Path(__file__).resolve().parents[2] / "editors" / "vscode"
MARKER = "<!-- minimal-config -->"
JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "boolean": (bool,),
    "integer": (int,),
    "number": (int, float),
    "array": (list,),
    "object": (dict,),
}


def strip_jsonc(text: str) -> str:
    """JSON with comments (`//`, `/* */`) and trailing commas, as VS Code reads settings.json,
    as plain JSON: comments become spaces and trailing commas go; strings stay as they are."""
    out: list[str] = []
    index, length = 0, len(text)
    while index < length:
        char = text[index]
        if char == '"':
            end = index + 1
            while end < length and text[end] != '"':
                end += 2 if text[end] == "\\" else 1
            out.append(text[index : end + 1])
            index = end + 1
        elif text.startswith("//", index):
            end = text.find("\n", index)
            index = length if end == -1 else end
        elif text.startswith("/*", index):
            end = text.find("*/", index + 2)
            if end == -1:
                raise ValueError("an unclosed /* comment")
            out.append(" ")
            index = end + 2
        else:
            out.append(char)
            index += 1
    plain = "".join(out)
    return re.sub(r",(\s*[}\]])", r"\1", plain)


def readme_settings() -> dict[str, Any]:
    readme = (VSCODE / "README.md").read_text(encoding="utf-8")
    match = re.search(re.escape(MARKER) + r"\s*```(?:jsonc|json)\n(.*?)```", readme, re.DOTALL)
    assert match, f"editors/vscode/README.md has no settings.json block after {MARKER}"
    settings = json.loads(strip_jsonc(match.group(1)))
    assert isinstance(settings, dict) and settings, settings
    return settings


def contributed() -> dict[str, Any]:
    package = json.loads((VSCODE / "package.json").read_text(encoding="utf-8"))
    configuration = package["contributes"]["configuration"]
    sections = configuration if isinstance(configuration, list) else [configuration]
    return {key: value for section in sections for key, value in section["properties"].items()}


def problems(value: Any, schema: dict[str, Any]) -> list[str]:
    """Where `value` breaks a contributed setting's schema (the keywords package.json uses)."""
    found: list[str] = []
    kinds = schema.get("type", [])
    kinds = [kinds] if isinstance(kinds, str) else kinds
    if kinds and not any(
        isinstance(value, JSON_TYPES[kind])
        and not (isinstance(value, bool) and kind in ("integer", "number"))
        and not (kind == "integer" and isinstance(value, float) and not value.is_integer())
        for kind in kinds
    ):
        found.append(f"{value!r} is not {' or '.join(kinds)}")
    if "enum" in schema and value not in schema["enum"]:
        found.append(f"{value!r} is not one of {schema['enum']}")
    if "minimum" in schema and isinstance(value, (int, float)) and value < schema["minimum"]:
        found.append(f"{value!r} is below {schema['minimum']}")
    if "pattern" in schema and isinstance(value, str) and not re.search(schema["pattern"], value):
        found.append(f"{value!r} does not match {schema['pattern']}")
    if "minLength" in schema and isinstance(value, str) and len(value) < schema["minLength"]:
        found.append(f"{value!r} is shorter than {schema['minLength']}")
    if "items" in schema and isinstance(value, list):
        for item in value:
            found += problems(item, schema["items"])
    return found


def test_strip_jsonc_keeps_strings_and_drops_comments_and_trailing_commas() -> None:
    text = '{\n  // a comment\n  "a": "x // y /* z */", /* b */ "b": [1, 2,],\n}'
    assert json.loads(strip_jsonc(text)) == {"a": "x // y /* z */", "b": [1, 2]}


def test_readme_minimal_settings_are_valid_extension_and_server_settings() -> None:
    settings = readme_settings()
    properties = contributed()
    server = {item.key: item for item in SCHEMA}
    for key, value in settings.items():
        assert key in properties, f"{key} is not a setting of the extension"
        assert not problems(value, properties[key]), (key, problems(value, properties[key]))
        if key in server:
            try:
                server[key].parse(value)
            except ValueError:
                pytest.fail(f"{key} = {value!r} is not {server[key].expected()} for the server")
        else:  # the extension's own: how it starts the server, tracing
            assert key.startswith(("stet.server.", "stet.trace.")), key


def test_a_bad_value_would_be_caught() -> None:
    properties = contributed()
    assert problems("loud", properties["stet.margin.severity"])
    assert problems(0, properties["stet.brief.budget"])
    assert problems("800", properties["stet.brief.budget"])
    assert problems(True, properties["stet.brief.budget"])
    assert problems([""], properties["stet.gate.envNames"])
    assert not problems(["API_KEY"], properties["stet.gate.envNames"])
