"""JSON read from files a user, a harness or a cloned repository wrote, where what is not JSON
counts as nothing. Such a file may be nested deeper than the decoder can follow (a few
thousand `[`), which raises RecursionError, not ValueError: both mean "not JSON" here."""

from __future__ import annotations

from typing import Any


def value_or_none(data: str | bytes) -> Any:
    """The JSON value `data` holds; None when it holds none (nor when it holds `null`)."""
    import json  # not at import: the command line's start-up loads this module

    try:
        return json.loads(data)
    except (ValueError, RecursionError):  # invalid UTF-8 is a ValueError too
        return None


def object_or_none(data: str | bytes) -> dict[str, Any] | None:
    """The JSON object `data` holds; None when it holds another value, or none."""
    value = value_or_none(data)
    return value if isinstance(value, dict) else None
