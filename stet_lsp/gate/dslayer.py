"""detect-secrets 1.5.0 as a second opinion on keyword contexts.

Its settings are empty until configured, so the plugins are chosen here and instantiated once
under `transient_settings`. Its filters are applied explicitly, a deliberate subset:

- kept: sequential strings, UUIDs, templated values, `$`-prefixed values, indirect references
  (`x = get_secret()`), non-alphanumeric values;
- left out: `is_line_allowlisted` (an in-line pragma must never switch the gate off),
  `is_likely_id_string` (it silences a whole line after any `*_id` key), and the file-level
  filters (the gate scans text, not files).

It is slow and its keyword patterns backtrack badly on long lines, so it only sees bounded
windows around its own keywords, and only where the gate's rules found nothing.
"""

from __future__ import annotations

import re
import sys
import threading
import types
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

from stet_lsp.gate import heuristics
from stet_lsp.gate.allowlist import Allowlist
from stet_lsp.gate.engine import is_metadata_key
from stet_lsp.gate.spans import Span

_REGEX_PLUGINS = (
    "ArtifactoryDetector",
    "AWSKeyDetector",
    "AzureStorageKeyDetector",
    "BasicAuthDetector",
    "CloudantDetector",
    "DiscordBotTokenDetector",
    "GitHubTokenDetector",
    "GitLabTokenDetector",
    "IbmCloudIamDetector",
    "IbmCosHmacDetector",
    "JwtTokenDetector",
    "KeywordDetector",
    "MailchimpDetector",
    "NpmDetector",
    "OpenAIDetector",
    "PrivateKeyDetector",
    "PypiTokenDetector",
    "SendGridDetector",
    "SlackDetector",
    "SoftlayerDetector",
    "SquareOAuthDetector",
    "StripeDetector",
    "TelegramBotTokenDetector",
    "TwilioKeyDetector",
)
# Entropy plugins flag every quoted hash and id in a transcript: strict mode only.
_ENTROPY_PLUGINS = (
    {"name": "Base64HighEntropyString", "limit": 4.5},
    {"name": "HexHighEntropyString", "limit": 3.0},
)
# The KeywordDetector's own vocabulary, plus the services of the other plugins.
DS_ANCHORS = (
    "api_key",
    "apikey",
    "api-key",
    "auth_key",
    "authkey",
    "service_key",
    "account_key",
    "db_key",
    "database_key",
    "priv_key",
    "private_key",
    "client_key",
    "db_pass",
    "database_pass",
    "key_pass",
    "password",
    "passwd",
    "pwd",
    "secret",
    "contrase",
    "cloudant",
    "ibm_",
)
WINDOW_BEFORE = 240
WINDOW_AFTER = 360
# Widening stops at quotes, brackets and URL or assignment punctuation.
_VALUE_STOP = frozenset(" \t\r\n\"'`,;<>()[]{}\\:@/?&=\x1b")
_KEY_BEFORE = re.compile(
    r"([A-Za-z0-9_.\-]{1,80})[\"']?\]?[ \t]{0,4}(?::=|=>|=|:)[ \t]{0,4}[\"'`]?$"
)
_RULE_NAME = re.compile(r"[^a-z0-9]+")
# PrivateKeyDetector's markers for the PEM and SSH2 headers the gate's private-key rules
# handle: it reports only the header, which without key material after it is a mention.
_OWN_KEY_HEADERS = frozenset(
    {
        "BEGIN DSA PRIVATE KEY",
        "BEGIN EC PRIVATE KEY",
        "BEGIN OPENSSH PRIVATE KEY",
        "BEGIN PGP PRIVATE KEY BLOCK",
        "BEGIN PRIVATE KEY",
        "BEGIN RSA PRIVATE KEY",
        "BEGIN SSH2 ENCRYPTED PRIVATE KEY",
    }
)
# detect-secrets' keyword patterns are quadratic in runs of word characters: windows holding
# a long run are left to the gate's own rules, which see every such token anyway.
_LONG_WORD_RUN = re.compile(r"\w{64}")
_BUDGET_BASE = 256 * 1024
_BUDGET_SHARE = 10
"""At most base + 1/share of the text goes through detect-secrets (deterministic bound)."""
_lock = threading.Lock()
# detect-secrets' is_indirect_reference (`x = f(...)`, `x = a["k"]`) searches
# `([^\v=!:]*)\s*(:=?|[!=]{1,3})\s*([\w.-]+[\[\(][^\v]*[\]\)])`: its first group may be
# empty, so a match exists exactly when the operator and what follows match somewhere. Searching
# from the operator gives the same answer without retrying the unbounded prefix at every offset.
# A control sequence still open where a widened token would start (`ESC[1;` before `32m…`;
# ESC raw or as a JSON escape), and the rest of it: parameters, intermediates, the final byte.
_CONTROL_OPEN = re.compile(r"(?:\x1b|\\u001[bB])\[[0-?]{0,64}\Z")
_CONTROL_TAIL = re.compile(r"[0-?]{0,64}[ -/]{0,8}[@-~]")
_INDIRECT_REFERENCE = re.compile(r"(?::=?|[!=]{1,3})\s*[\w.-]+[\[\(][^\v]*[\]\)]")


# detect-secrets takes a while to import (it loads requests): only on the first scan, so the
# language server answers `initialize` without it.
@lru_cache(maxsize=1)
def _heuristic() -> Any:
    from detect_secrets.filters import heuristic

    return heuristic


@lru_cache(maxsize=2)
def _plugins(strict: bool) -> tuple[Any, ...]:
    config: dict[str, Any] = {"plugins_used": [{"name": name} for name in _REGEX_PLUGINS]}
    if strict:
        config["plugins_used"].extend(_ENTROPY_PLUGINS)
    # transient_settings swaps a process-wide singleton: serialise it. The plugins' modules
    # load in get_plugins.
    with _lock, _without_requests():
        from detect_secrets.settings import get_plugins, transient_settings

        with transient_settings(config):
            return tuple(get_plugins())


@contextmanager
def _without_requests() -> Iterator[None]:
    """detect-secrets imports `requests` (a third of a whole scan's start-up) only to verify
    secrets online, which the gate never asks of it: no verification filter is configured, so
    no plugin's `verify` runs. While detect-secrets loads, `requests` is a stand-in module
    whose attributes are inert; a process that imported the real one keeps it, and the name is
    freed afterwards so a later `import requests` gets the real module."""
    if "requests" in sys.modules or "detect_secrets" in sys.modules:
        yield
        return
    stand_in = _InertModule("requests")
    sys.modules["requests"] = stand_in
    try:
        yield
    finally:
        if sys.modules.get("requests") is stand_in:
            del sys.modules["requests"]


class _InertModule(types.ModuleType):
    """A module whose every attribute is an inert placeholder (annotations such as
    `-> requests.Response`, `except requests.exceptions.RequestException` never reached)."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return _InertModule(f"{self.__name__}.{name}")


def _is_indirect_reference(window: str) -> bool:
    """detect-secrets' `is_indirect_reference`, as fast: lines over 1,000 characters are not."""
    return len(window) <= 1000 and _INDIRECT_REFERENCE.search(window) is not None


def _is_filtered(value: str) -> bool:
    heuristic = _heuristic()
    return bool(
        heuristic.is_sequential_string(value)
        or heuristic.is_potential_uuid(value)
        or heuristic.is_templated_secret(value)
        or heuristic.is_prefixed_with_dollar_sign(value)
        or heuristic.is_not_alphanumeric_string(value)
    )


def rule_name(secret_type: str) -> str:
    return "ds-" + _RULE_NAME.sub("-", secret_type.lower()).strip("-")


def _expand(text: str, start: int, end: int, lower: int, upper: int) -> tuple[int, int]:
    """detect-secrets reports values, often cut short: widen to the whole token, but not
    into the terminal control sequence it may follow (`ESC[1;32m` + token)."""
    reported = start
    while start > lower and text[start - 1] not in _VALUE_STOP:
        start -= 1
    if start < reported and _CONTROL_OPEN.search(text, max(lower, start - 64), start):
        tail = _CONTROL_TAIL.match(text, start, reported)
        if tail is not None:
            start = tail.end()
    while end < upper and text[end] not in _VALUE_STOP:
        end += 1
    return start, end


def scan_windows(
    text: str,
    offsets: Iterable[int],
    *,
    strict: bool,
    covered: list[Span],
    allowlist: Allowlist | None,
    filename: str,
    priority: int,
) -> list[Span]:
    """Run the plugins on windows around `offsets` (keywords, unmatched prefixes)."""
    offsets = set(offsets)
    if not offsets:
        return []
    windows = _windows(text, sorted(offsets))
    covered_ranges = sorted((s.start, s.end) for s in covered)
    plugins = _plugins(strict)
    spans: list[Span] = []
    budget = _BUDGET_BASE + len(text) // _BUDGET_SHARE
    for begin, end in windows:
        window = text[begin:end]
        budget -= len(window)
        if budget < 0:
            break
        if _LONG_WORD_RUN.search(window) or _is_indirect_reference(window):
            continue
        for plugin in plugins:
            for found in plugin.analyze_line(filename=filename, line=window, line_number=0):
                value = found.secret_value
                if not value or _is_filtered(value) or heuristics.is_placeholder(value):
                    continue
                if value in _OWN_KEY_HEADERS:
                    continue  # the private-key rule judged the header and what follows it
                spans.extend(
                    _locate(text, window, begin, end, value, found.type, covered_ranges, priority)
                )
    return [span for span in spans if _is_secret(text, span, allowlist)]


def _is_secret(text: str, span: Span, allowlist: Allowlist | None) -> bool:
    value = text[span.start : span.end]
    if (
        heuristics.is_placeholder(value)
        or heuristics.is_documented_example(value)
        or heuristics.is_agent_id(value)
        or heuristics.is_hash_or_uuid(value)
        or (allowlist is not None and allowlist.allows(value))
    ):
        return False
    key = _KEY_BEFORE.search(text, max(0, span.start - 100), span.start)
    return key is None or not is_metadata_key(key.group(1))


def _windows(text: str, offsets: list[int]) -> list[tuple[int, int]]:
    """Line-bounded windows around each offset, overlapping ones joined, each capped."""
    windows: list[tuple[int, int]] = []
    for offset in offsets:
        begin = max(0, offset - WINDOW_BEFORE)
        end = min(len(text), offset + WINDOW_AFTER)
        newline = text.rfind("\n", begin, offset)
        begin = newline + 1 if newline >= 0 else begin
        newline = text.find("\n", offset, end)
        end = newline if newline >= 0 else end
        if windows and begin <= windows[-1][1] and end - windows[-1][0] <= 2 * WINDOW_AFTER:
            windows[-1] = (windows[-1][0], max(end, windows[-1][1]))
        else:
            windows.append((begin, end))
    return windows


def _locate(
    text: str,
    window: str,
    begin: int,
    end: int,
    value: str,
    secret_type: str,
    covered: list[tuple[int, int]],
    priority: int,
) -> list[Span]:
    spans = []
    at = window.find(value)
    while at >= 0:
        start, stop = _expand(
            text,
            begin + at,
            begin + at + len(value),
            max(0, begin - 1024),
            min(len(text), end + 1024),
        )
        if not any(s <= start and stop <= e for s, e in covered):
            spans.append(Span(start, stop, rule_name(secret_type), priority))
        at = window.find(value, at + len(value))
    return spans
