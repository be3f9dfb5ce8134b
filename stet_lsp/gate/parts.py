"""The parts of a long secret printed truncated (`Xk9q2LmWp4Tz…`, `…R7vBn3Hc6Jd1`): found as
copies of it (stet_lsp/gate/repeats.py) and given its marker (stet_lsp/gate/redact.py)."""

from __future__ import annotations

from functools import cache

PIECE = 12
"""The fewest characters of a value a part holds."""
_PAST_PREFIX = 8
"""The fewest a part holds past the public prefix its format shares with every other key of
the kind (`ghp_`, a webhook's URL)."""


def ends(value: str, rule: str, prefix: str = "") -> tuple[str, str]:
    """The shortest first and last characters of `value` (found by `rule`, whose format starts
    with `prefix`) that a part of it holds: "" where the value holds none."""
    if len(value) < PIECE:
        return "", ""
    public = _rule_prefixes().get(rule, prefix)
    head = value[: max(PIECE, len(public) + _PAST_PREFIX)] if value.startswith(public) else ""
    return head, value[-PIECE:]


def holds(whole: str, part: str, at_head: bool) -> bool:
    return whole.startswith(part) if at_head else whole.endswith(part)


@cache
def _rule_prefixes() -> dict[str, str]:
    """What every value of a format starts with, by rule: a finding keeps only a preview's
    first two characters of it."""
    from stet_lsp.gate.rules import RULES  # large, and needed only once a secret is found

    return {rule.name: rule.prefix for rule in RULES if rule.prefix}
