"""The redaction gate: static, deterministic secret scanning and redaction.

Everything written into a committed `.stet/` artifact passes through here first. No editor
protocol is imported: the command line and the language server call the same functions.
"""

from stet_lsp.gate.allowlist import ALLOWLIST_PATH, Allowlist
from stet_lsp.gate.cache import DEFAULT_CACHE, ResultCache
from stet_lsp.gate.config import GateConfig, load_config
from stet_lsp.gate.findings import Finding
from stet_lsp.gate.redact import RedactionResult, Replacement, apply_redaction, redact_text
from stet_lsp.gate.report import Location, RedactionReport
from stet_lsp.gate.rules import RULE_NAMES, RULESET_VERSION
from stet_lsp.gate.scan import is_json_path, scan_text
from stet_lsp.gate.stetignore import StetIgnore

__all__ = [
    "ALLOWLIST_PATH",
    "DEFAULT_CACHE",
    "RULESET_VERSION",
    "RULE_NAMES",
    "Allowlist",
    "Finding",
    "GateConfig",
    "Location",
    "RedactionReport",
    "RedactionResult",
    "Replacement",
    "ResultCache",
    "StetIgnore",
    "apply_redaction",
    "is_json_path",
    "load_config",
    "redact_text",
    "scan_text",
]
