"""A Codex rollout's records and tool outputs, as the importer (`codex.py`) and the linking
of a thread to its parent (`codex_threads.py`) read them alike."""

from __future__ import annotations

import json
import re
from typing import Any

from stet_lsp.core.jsonread import value_or_none

Record = dict[str, Any]

ROLLOUT_TYPES = frozenset(
    {
        "session_meta",
        "response_item",
        "event_msg",
        "turn_context",
        "compacted",
        "token_usage_record",
    }
)
# Response item types a legacy rollout holds bare (and the current format wraps in `payload`).
RESPONSE_ITEM_TYPES = frozenset(
    {
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "local_shell_call",
        "web_search_call",
        "tool_search_call",
        "tool_search_output",
        "image_generation_call",
        "ghost_snapshot",
        "compaction",
        "compaction_summary",
        "context_compaction",
    }
)


# A thread id as it may appear in a file name (Codex's are UUIDs): nothing a glob would read.
SAFE_ID = re.compile(r"[A-Za-z0-9._-]+")


def rollout_record(value: Any) -> tuple[str, Record] | None:
    """(record type, payload) of a record of either format; None when it is not one."""
    if not isinstance(value, dict):
        return None
    kind = value.get("type")
    if not isinstance(kind, str):
        return None
    payload = value.get("payload")
    if kind in ROLLOUT_TYPES and isinstance(payload, dict):
        return kind, payload
    if kind in RESPONSE_ITEM_TYPES and "payload" not in value:
        return "response_item", value
    return None


def text_parts(content: Any) -> list[str]:
    """The texts of a list of content parts (input_text, output_text, summary_text, ...);
    an image part reads as `[image]`, one given by URL as `[image: <url>]` (an address, unlike
    the bytes of a `data:` URL, is kept)."""
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    parts = []
    for part in content:
        if isinstance(part, dict):
            text = part.get("text")
            if isinstance(text, str):
                parts.append(text)
            elif "image" in str(part.get("type", "")):
                url = part.get("image_url")
                if isinstance(url, str) and url.startswith(("http://", "https://")):
                    parts.append(f"[image: {url}]")
                else:
                    parts.append("[image]")
        elif isinstance(part, str):
            parts.append(part)
    return parts


def unread_parts(content: Any) -> list[Any]:
    """The parts of a list of content parts that `text_parts` does not read: neither text nor
    an image (a refusal, a file)."""
    if not isinstance(content, list):
        return []
    return [
        part
        for part in content
        if not isinstance(part, str)
        and not (
            isinstance(part, dict)
            and (isinstance(part.get("text"), str) or "image" in str(part.get("type", "")))
        )
    ]


def inline_images(content: Any) -> int:
    """How many image parts of a list of content parts hold their bytes (a `data:` URL),
    which `text_parts` names (`[image]`) without them."""
    if not isinstance(content, list):
        return 0
    return sum(
        1
        for part in content
        if isinstance(part, dict)
        and "image" in str(part.get("type", ""))
        and str(part.get("image_url", "")).startswith("data:")
    )


def join_texts(parts: list[str]) -> str:
    return "\n".join(parts)


def tool_output(output: Any) -> tuple[str, bool | None]:
    """A tool output's text and, when the output says it, whether the call succeeded."""
    if isinstance(output, str):
        if output.startswith("{"):
            wrapped = value_or_none(output)
            if isinstance(wrapped, dict) and isinstance(wrapped.get("output"), str):
                metadata = wrapped.get("metadata")
                exit_code = metadata.get("exit_code") if isinstance(metadata, dict) else None
                ok = exit_code == 0 if isinstance(exit_code, int) else None
                return wrapped["output"], ok
        exit_code = _header_exit_code(output)
        return output, None if exit_code is None else exit_code == 0
    if isinstance(output, list):
        parts = text_parts(output)
        return join_texts(parts), _code_mode_outcome(parts)
    if isinstance(output, dict):
        # {"content", "success"} of early versions, or a single content part.
        body = output.get("content", output.get("output", output.get("text")))
        if isinstance(body, str | list):
            text = join_texts(text_parts(body))
        else:
            text = json.dumps(output, ensure_ascii=False)
        success = output.get("success")
        return text, success if isinstance(success, bool) else None
    return ("" if output is None else json.dumps(output, ensure_ascii=False)), None


def _header_exit_code(text: str) -> int | None:
    """The exit code in the header Codex puts before a command's output (`Exit code: 1`,
    `Process exited with code 1`, ... then `Output:`)."""
    for line in text[:400].splitlines()[:6]:
        if line.startswith("Output:"):
            break
        for prefix in ("Exit code: ", "Process exited with code "):
            if line.startswith(prefix):
                number = line[len(prefix) :].strip()
                return int(number) if number.lstrip("-").isdigit() else None
    return None


def _code_mode_outcome(parts: list[str]) -> bool | None:
    """Whether a code mode `exec` call failed, from the status Codex puts before what its
    script emitted (codex-rs/core/src/tools/code_mode): `Script failed` (the script threw,
    as when a command could not start) is a failure, as is `Script terminated` (the model
    stopped the running cell, a `wait` with `terminate: true`, before the script's end;
    `exit()` ends one as `Script completed`), and so is a `Script completed` whose
    script emitted the result of a command (`tools.exec_command`: an object with its
    `exit_code` and `output`) that exited non-zero, as a shell call is. None otherwise (no
    such status, a script still running, or one that emitted no command's result)."""
    if not parts:
        return None
    status, _, first = parts[0].partition("\n")
    wall_time, _, first = first.partition("\n")
    if not wall_time.startswith("Wall time ") or not first.startswith("Output:"):
        return None
    if status in ("Script failed", "Script terminated"):
        return False
    if status != "Script completed":
        return None
    emitted = [first.removeprefix("Output:").strip(), *parts[1:]]
    for text in emitted:
        result = value_or_none(text) if text.startswith("{") else None
        if (
            isinstance(result, dict)
            and isinstance(result.get("output"), str)
            and isinstance(result.get("exit_code"), int)
            and result["exit_code"] != 0
        ):
            return False
    return None
