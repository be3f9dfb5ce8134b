"""The settings schema: one declaration of every `stet.*` setting (its key as the editors see
it, type, default, allowed values and description), from which parsing and the JSON Schema
export (`json_schema()`, or `python -m stet_lsp.server.settings`) are derived. The VS Code
`package.json` and the Neovim `lsp/stet.lua` defaults are tested against it.

Settings arrive as initializationOptions, workspace/configuration answers and
didChangeConfiguration pushes, nested (`{"margin": {"severity": …}}`) or with dotted keys
(`{"margin.severity": …}`, or `{"stet.margin.severity": …}` as a settings file names it). A
bad value gets a message and its default; it never stops the
server. A plain dataclass rather than a pydantic model: pydantic would add about 100 ms to
the server's start."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any, Literal, get_args, get_origin, get_type_hints

from lsprotocol import types

from stet_lsp.core.margin import MARKER_EXPECTED, MARKER_PATTERN, clean_marker

if TYPE_CHECKING:
    from pathlib import Path

    from stet_lsp.gate.config import GateConfig

Severity = Literal["error", "warning", "information", "hint"]

SEVERITIES = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "information": types.DiagnosticSeverity.Information,
    "hint": types.DiagnosticSeverity.Hint,
}

SECTION = "stet"
"""The settings' section: `workspace/configuration` asks for it; every key starts with it."""


def about(
    key: str,
    description: str,
    *,
    minimum: float | None = None,
    pattern: str | None = None,
    expect: str | None = None,
    clean: Callable[[Any], Any] | None = None,
) -> dict[str, Any]:
    """The metadata of a field of `Settings`: `key` is its path under `stet.`; `expect` says
    what a string matching `pattern` is, and `clean` normalises a valid value."""
    return {
        "key": f"{SECTION}.{key}",
        "description": description,
        "minimum": minimum,
        "pattern": pattern,
        "expect": expect,
        "clean": clean,
    }


@dataclass(frozen=True)
class Settings:
    """Every setting, declared once: the annotation gives its JSON type (a `Literal` gives the
    allowed values), the default its default, and the metadata (`about`) its key, description
    and limits. The server reads them as attributes: `server.settings.brief_budget`."""

    marker: str = field(
        default="stet",
        metadata=about(
            "marker",
            "The margin-note marker word: a comment holding `stet:` or `stet(<kind>):` becomes "
            "a margin note. A trailing `:` is optional.",
            pattern=MARKER_PATTERN,
            expect=MARKER_EXPECTED,
            clean=clean_marker,
        ),
    )
    remove_comment_on_record: bool = field(
        default=True,
        metadata=about(
            "margin.removeCommentOnRecord",
            "Remove the margin comment from the code once it is recorded to the style sheet.",
        ),
    )
    margin_severity: Severity = field(
        default="hint",
        metadata=about("margin.severity", "Severity of margin-note diagnostics."),
    )
    entry_severity: Severity = field(
        default="information",
        metadata=about(
            "entries.severity",
            "Severity of the diagnostics that show style-sheet entries at their anchors.",
        ),
    )
    brief_budget: int = field(
        default=800,
        metadata=about(
            "brief.budget", "Token budget of the brief for the next agent run.", minimum=1
        ),
    )
    ttl_days: float = field(
        default=30.0,
        metadata=about(
            "sheet.ttlDays",
            "Days after which the style sheet of a branch that is gone may be removed.",
            minimum=0,
        ),
    )
    gate_strict: bool = field(
        default=False,
        metadata=about(
            "gate.strict",
            "Public-repository mode for the redaction gate: broader entropy rules, lower "
            "thresholds.",
        ),
    )
    gate_env_names: tuple[str, ...] = field(
        default=(),
        metadata=about(
            "gate.envNames",
            "Environment variable names whose values the redaction gate always redacts.",
        ),
    )

    def severity(self, name: Literal["margin", "entry"]) -> types.DiagnosticSeverity:
        return SEVERITIES[getattr(self, f"{name}_severity")]

    def gate_config(self, root: Path) -> GateConfig:
        """What the server's writes into the repository at `root` (imports, verdicts,
        graduation, the capstone) pass the gate with: the repository's configuration (its
        allowlist and `.stet/gate.toml`), to which `gate.strict` and `gate.envNames` add.
        StetError, naming the file, when the repository's is malformed. Reads files: call it
        in a worker."""
        from stet_lsp.gate import load_config

        return load_config(root, strict=self.gate_strict, env_names=self.gate_env_names)


JSON_TYPES: dict[Any, str] = {bool: "boolean", int: "integer", float: "number", str: "string"}


@dataclass(frozen=True)
class Setting:
    """One setting as the schema declares it."""

    name: str
    """Its attribute of `Settings`."""
    key: str
    """As the editors see it: `stet.margin.severity`."""
    type: str
    """Its JSON type: boolean, integer, number, string or array (of strings)."""
    default: Any
    """As JSON."""
    description: str
    enum: tuple[str, ...] = ()
    minimum: float | None = None
    pattern: str | None = None
    expect: str | None = None
    clean: Callable[[Any], Any] | None = None

    @property
    def path(self) -> str:
        """The key inside the `stet` section: `margin.severity`."""
        return self.key.removeprefix(f"{SECTION}.")

    def schema(self) -> dict[str, Any]:
        """This setting as a JSON Schema property (the shape of VS Code's
        `contributes.configuration`)."""
        found: dict[str, Any] = {"type": self.type, "default": self.default}
        if self.type == "array":
            found["items"] = {"type": "string", "minLength": 1}
        if self.enum:
            found["enum"] = list(self.enum)
        if self.minimum is not None:
            found["minimum"] = self.minimum
        if self.pattern is not None:
            found["pattern"] = self.pattern
        found["description"] = self.description
        return found

    def expected(self) -> str:
        """What a valid value is, for a message."""
        if self.expect:
            return self.expect
        if self.enum:
            return f"one of {', '.join(self.enum[:-1])} or {self.enum[-1]}"
        least = "" if self.minimum is None else f"{as_json(self.minimum)} or more"
        return {
            "boolean": "true or false",
            "integer": f"a whole number{' of ' + least if least else ''}",
            "number": f"a number{', ' + least if least else ''}",
            "array": "a list of non-empty strings",
        }.get(self.type, "a string")

    def parse(self, value: Any) -> Any:
        """The value as `Settings` holds it; ValueError when it is not valid."""
        kind, number = self.type, isinstance(value, (int, float)) and not isinstance(value, bool)
        if kind == "boolean" and isinstance(value, bool):
            parsed: Any = value
        elif kind == "integer" and number and (isinstance(value, int) or value.is_integer()):
            parsed = int(value)
        elif kind == "number" and number and math.isfinite(value):
            parsed = float(value)  # 1e400 reads as infinity, which is no number of days
        elif kind == "string" and isinstance(value, str):
            parsed = value
        elif kind == "array" and isinstance(value, list):
            if not all(isinstance(item, str) and item for item in value):
                raise ValueError(value)
            parsed = tuple(value)
        else:
            raise ValueError(value)
        if (
            (self.enum and parsed not in self.enum)
            or (self.minimum is not None and parsed < self.minimum)
            or (self.pattern is not None and not re.match(self.pattern, parsed))
        ):
            raise ValueError(value)
        return self.clean(parsed) if self.clean else parsed


def as_json(value: Any) -> Any:
    """A default as the editors write it: a list for a tuple, 30 for 30.0."""
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _declare() -> tuple[Setting, ...]:
    hints = get_type_hints(Settings)
    declared = []
    for item in fields(Settings):
        hint, meta = hints[item.name], item.metadata
        literal = get_origin(hint) is Literal
        kind = "string" if literal else "array" if get_origin(hint) is tuple else JSON_TYPES[hint]
        declared.append(
            Setting(
                name=item.name,
                key=meta["key"],
                type=kind,
                default=as_json(item.default),
                description=meta["description"],
                enum=get_args(hint) if literal else (),
                minimum=meta["minimum"],
                pattern=meta["pattern"],
                expect=meta["expect"],
                clean=meta["clean"],
            )
        )
    return tuple(declared)


SCHEMA: tuple[Setting, ...] = _declare()
"""Every setting, in declaration order."""
DEFAULT = Settings()


def json_schema() -> dict[str, Any]:
    """The settings as a JSON Schema object whose properties are the dotted keys."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Stet settings",
        "type": "object",
        "properties": {item.key: item.schema() for item in SCHEMA},
    }


def defaults() -> dict[str, Any]:
    """The defaults as the nested `stet` section an editor sends."""
    nested: dict[str, Any] = {}
    for item in SCHEMA:
        *parents, last = item.path.split(".")
        node = nested
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = item.default
    return nested


def parse_settings(raw: Any, base: Settings | None = None) -> tuple[Settings, list[str]]:
    """Settings from the client's `stet` object (nested, or with dotted keys, with or without
    `stet.` before them, or wrapped in `{"stet": …}`) over `base`; bad values are reported
    and replaced by the default, unknown keys reported and ignored."""
    settings = base or Settings()
    if raw is None or raw == [] or raw == "":
        return settings, []  # an empty Lua table arrives as []
    if not isinstance(raw, Mapping):
        return settings, [f"Stet settings must be an object, not {type(raw).__name__}"]
    if isinstance(raw.get(SECTION), Mapping):
        raw = raw[SECTION]
    problems = []
    changes: dict[str, Any] = {}
    for item in SCHEMA:
        found, value = _lookup(raw, item.path)
        if not found:
            continue
        try:
            changes[item.name] = item.parse(value)
        except (ValueError, OverflowError):  # a float too big is not a number either
            problems.append(
                f"Stet setting {item.key} = {_show(value)} is not {item.expected()}; "
                f"using {_show(item.default)}"
            )
            changes[item.name] = getattr(DEFAULT, item.name)
    problems += [_unknown_message(key) for key in _unknown_keys(raw, "")]
    return replace(settings, **changes), problems


EDITOR_KEYS = ("server", "trace")
"""Settings of the editors' own under `stet.` (the VS Code extension's `stet.server.path`,
`stet.server.args`, `stet.trace.server`): theirs to read, not the server's."""


def _unknown_keys(raw: Mapping[str, Any], prefix: str) -> list[str]:
    """The keys under `prefix` that name no setting, nor lead to one (a misspelt
    `margin.severty`, a `stet.foo`): ignored, and said."""
    known = {item.path for item in SCHEMA}
    unknown = []
    for key, value in raw.items():
        if not isinstance(key, str):
            continue
        path = prefix + (
            key[len(SECTION) + 1 :] if not prefix and key.startswith(f"{SECTION}.") else key
        )
        if path in known or path.split(".", 1)[0] in EDITOR_KEYS:
            continue
        if any(name.startswith(path + ".") for name in known):
            if isinstance(value, Mapping):
                unknown += _unknown_keys(value, path + ".")
            continue  # a group that is not an object: its settings keep their values
        unknown.append(path)
    return unknown


def _unknown_message(path: str) -> str:
    import difflib

    known = [item.path for item in SCHEMA]
    close = difflib.get_close_matches(path, known, n=1, cutoff=0.7)
    hint = f"; did you mean {SECTION}.{close[0]}?" if close else ""
    return f"Stet setting {SECTION}.{path} is not one of Stet's settings (ignored){hint}"


def _show(value: Any) -> str:
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)


def _lookup(raw: Mapping[str, Any], path: str) -> tuple[bool, Any]:
    for key in (path, f"{SECTION}.{path}"):  # as a settings file names it: `stet.x.y`
        if key in raw:
            return True, raw[key]
    node: Any = raw
    for part in path.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return False, None
        node = node[part]
    return True, node
