"""Typed settings: from initializationOptions, workspace/configuration and
didChangeConfiguration. A bad value gets a message and its default; it never stops the server."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from lsprotocol import types

SEVERITIES = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "information": types.DiagnosticSeverity.Information,
    "hint": types.DiagnosticSeverity.Hint,
}


@dataclass(frozen=True)
class Settings:
    marker: str = "stet"
    """The margin-note marker word: `stet:` and `stet(<kind>):` in comments."""
    remove_comment_on_record: bool = True
    margin_severity: str = "hint"
    entry_severity: str = "information"
    brief_budget: int = 800
    ttl_days: float = 30.0
    gate_strict: bool = False
    """The gate's public-repository mode: broader entropy rules, lower thresholds."""
    gate_env_names: tuple[str, ...] = ()
    """Environment variables whose values the gate always redacts."""

    def severity(self, name: str) -> types.DiagnosticSeverity:
        return SEVERITIES[getattr(self, f"{name}_severity")]


# setting name -> (path in the client's `stet` section, check)
def _word(value: Any) -> str:
    if (
        not isinstance(value, str)
        or not value.strip(" :")
        or any(c.isspace() for c in value.strip())
    ):
        raise ValueError("a word such as 'stet' (optionally with a trailing ':')")
    return value.strip().rstrip(":")


def _boolean(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError("true or false")
    return value


def _severity(value: Any) -> str:
    if value not in SEVERITIES:
        raise ValueError(f"one of {', '.join(SEVERITIES)}")
    return str(value)


def _positive_int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError("a whole number of 1 or more")
    return value


def _days(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise ValueError("a number of days, 0 or more")
    return float(value)


def _names(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(n, str) and n for n in value):
        raise ValueError("a list of environment variable names")
    return tuple(value)


_SCHEMA: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "marker": ("marker", _word),
    "remove_comment_on_record": ("margin.removeCommentOnRecord", _boolean),
    "margin_severity": ("margin.severity", _severity),
    "entry_severity": ("entries.severity", _severity),
    "brief_budget": ("brief.budget", _positive_int),
    "ttl_days": ("sheet.ttlDays", _days),
    "gate_strict": ("gate.strict", _boolean),
    "gate_env_names": ("gate.envNames", _names),
}
assert set(_SCHEMA) == {field.name for field in fields(Settings)}


def parse_settings(raw: Any, base: Settings | None = None) -> tuple[Settings, list[str]]:
    """Settings from the client's `stet` object (nested, or with dotted keys); unknown keys
    are ignored, bad values reported and replaced by the default."""
    settings = base or Settings()
    if raw is None or raw == [] or raw == "":
        return settings, []  # an empty Lua table arrives as []
    if not isinstance(raw, Mapping):
        return settings, [f"Stet settings must be an object, not {type(raw).__name__}"]
    if isinstance(raw.get("stet"), Mapping):
        raw = raw["stet"]
    problems = []
    changes: dict[str, Any] = {}
    defaults = Settings()
    for name, (path, check) in _SCHEMA.items():
        found, value = _lookup(raw, path)
        if not found:
            continue
        try:
            changes[name] = check(value)
        except ValueError as error:
            default = getattr(defaults, name)
            problems.append(
                f"Stet setting stet.{path} = {value!r} is not {error}; using {default!r}"
            )
            changes[name] = getattr(defaults, name)
    return replace(settings, **changes), problems


def _lookup(raw: Mapping[str, Any], path: str) -> tuple[bool, Any]:
    if path in raw:
        return True, raw[path]
    node: Any = raw
    for part in path.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return False, None
        node = node[part]
    return True, node
