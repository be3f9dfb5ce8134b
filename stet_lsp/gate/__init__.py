"""The redaction gate: static, deterministic secret scanning and redaction.

Everything written into a committed `.stet/` artifact passes through here first. No editor
protocol is imported: the command line and the language server call the same functions.

Names load on first use, so importing a submodule (the command line's registration in
`stet_lsp.gate.cli`) does not load the rules, the prefilter or detect-secrets.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # as typing's, without importing typing (start-up of the command line)
if TYPE_CHECKING:
    from typing import Any

    from stet_lsp.gate.allowlist import ALLOWLIST_PATH, Allowlist
    from stet_lsp.gate.cache import DEFAULT_CACHE, ResultCache
    from stet_lsp.gate.config import SETTINGS_PATH, GateConfig, GateSettings, load_config
    from stet_lsp.gate.findings import Finding
    from stet_lsp.gate.homepaths import count_home_paths, normalize_home_paths
    from stet_lsp.gate.redact import (
        RedactionResult,
        Replacement,
        apply_redaction,
        redact_text,
    )
    from stet_lsp.gate.report import Location, RedactionReport
    from stet_lsp.gate.rules import RULE_NAMES, RULESET_VERSION
    from stet_lsp.gate.scan import is_json_path, scan_text
    from stet_lsp.gate.stetignore import StetIgnore

_WHERE = {
    "ALLOWLIST_PATH": "allowlist",
    "Allowlist": "allowlist",
    "DEFAULT_CACHE": "cache",
    "ResultCache": "cache",
    "GateConfig": "config",
    "GateSettings": "config",
    "SETTINGS_PATH": "config",
    "load_config": "config",
    "Finding": "findings",
    "count_home_paths": "homepaths",
    "normalize_home_paths": "homepaths",
    "RedactionResult": "redact",
    "Replacement": "redact",
    "apply_redaction": "redact",
    "redact_text": "redact",
    "Location": "report",
    "RedactionReport": "report",
    "RULE_NAMES": "rules",
    "RULESET_VERSION": "rules",
    "is_json_path": "scan",
    "scan_text": "scan",
    "StetIgnore": "stetignore",
}

__all__ = [
    "ALLOWLIST_PATH",
    "DEFAULT_CACHE",
    "RULESET_VERSION",
    "RULE_NAMES",
    "SETTINGS_PATH",
    "Allowlist",
    "Finding",
    "GateConfig",
    "GateSettings",
    "Location",
    "RedactionReport",
    "RedactionResult",
    "Replacement",
    "ResultCache",
    "StetIgnore",
    "apply_redaction",
    "count_home_paths",
    "is_json_path",
    "load_config",
    "normalize_home_paths",
    "redact_text",
    "scan_text",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
