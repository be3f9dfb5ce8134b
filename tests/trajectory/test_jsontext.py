"""The fast JSON writers give json.dumps' text, byte for byte, whatever the value."""

from __future__ import annotations

import datetime
import json
import random
from typing import Any

import pytest

from stet_lsp.trajectory import jsontext
from stet_lsp.trajectory.events import (
    RawEvent,
    SourceRef,
    ToolCall,
    Usage,
    UserMessage,
    event_json,
)

_PIECES = ["a", " ", "\n", '"', "\\", "é", "😀", "\x00", "\x1f", "\x7f", "\u2028", "<", "\ud800"]


def _value(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth > 3 or roll < 0.35:
        return rng.choice(
            [
                "".join(rng.choice(_PIECES) for _ in range(rng.randint(0, 6))),
                rng.randint(-(10**25), 10**25),
                rng.random() * 10 ** rng.randint(-10, 20),
                float("nan"),
                -0.0,
                datetime.date(2026, 1, 2),
                (1, "a"),
                True,
                None,
            ]
        )
    if roll < 0.6:
        return [_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    keys = ["k", "é", 1, 2.5, True, None, "x\ud800"]
    return {rng.choice(keys): _value(rng, depth + 1) for _ in range(rng.randint(0, 4))}


def _outcome(write: Any, value: Any) -> str | type[BaseException]:
    try:
        return str(write(value))
    except Exception as error:  # both writers must refuse the same values
        return type(error)


@pytest.mark.parametrize("seed", range(4))
def test_compact_and_indented_are_json_dumps(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(2000):
        value = _value(rng)
        assert _outcome(lambda v: jsontext.compact(v, default=str), value) == _outcome(
            lambda v: json.dumps(v, ensure_ascii=False, separators=(",", ":"), default=str), value
        )
        assert _outcome(lambda v: jsontext.indented(v, default=str), value) == _outcome(
            lambda v: json.dumps(v, ensure_ascii=False, indent=2, default=str), value
        )


def _written_by_json_dumps(event: Any) -> str:
    fields = event.model_dump(mode="json", exclude_defaults=True)
    fields.pop("kind", None)
    return json.dumps({"kind": event.kind, **fields}, ensure_ascii=False, separators=(",", ":"))


def test_event_json_is_json_dumps_for_floats_surrogates_and_plain_values() -> None:
    source = SourceRef(file="s.jsonl", line=3)
    events = [
        Usage(session="s", source=source, input_tokens=5, cost_usd=1.5e-05),
        Usage(session="s", source=source, cost_usd=12345678901234567.0, cost_basis="reported"),
        RawEvent(session="s", source=source, record={"n": [1e16, 2, None], "é": "😀"}),
        RawEvent(session="s", agent="a", time="t", source=source, record="x\ud800y"),
        ToolCall(session="s", source=source, call_id="c", name="Bash", input={"command": "ls"}),
        ToolCall(session="s", step=4, source=source, call_id="c", name="n", input={"k": 10**30}),
        ToolCall(session="s", source=source, call_id="c", name="n", input={"t": [0.5, 1e-07]}),
        UserMessage(session="s", source=SourceRef(file="x\udc80", line=1), text="a\ud800"),
    ]
    for event in events:
        assert _outcome(event_json, event) == _outcome(_written_by_json_dumps, event)


def test_lone_surrogates_become_replacement_characters_and_pairs_stay() -> None:
    assert jsontext.without_lone_surrogates("a\ud800b\udfffc") == "a\ufffdb\ufffdc"
    text = "plain, é and 😀"
    assert jsontext.without_lone_surrogates(text) is text
