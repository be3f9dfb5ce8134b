"""Codex reasoning items: the readable summary is kept as a reasoning event, the encrypted part
is dropped and counted (`dropped.opaque_reasoning`), whether a summary sits beside it or not."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from samples import sample

from stet_lsp.core.targets import resolve_target
from stet_lsp.trajectory.events import Reasoning, event_json
from stet_lsp.trajectory.importers.codex import CodexImporter
from stet_lsp.trajectory.importing import import_transcript
from stet_lsp.trajectory.store import working_folder

CODEX = CodexImporter()
SESSION = "019b64e5-57fa-7463-b644-fba7e456f905"
T0 = "2026-01-02T03:04:05.000Z"
SECRET_REASONING = "gAAAAABpENCRYPTEDREASONING"


def rollout(path: Path, *reasoning: dict[str, Any]) -> Path:
    records: list[dict[str, Any]] = [
        {
            "timestamp": T0,
            "type": "session_meta",
            "payload": {"id": SESSION, "timestamp": T0, "cwd": "/work", "cli_version": "0.77.0"},
        },
        {
            "timestamp": T0,
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "list the files"}],
            },
        },
    ]
    records += [
        {"timestamp": T0, "type": "response_item", "payload": {"type": "reasoning", **payload}}
        for payload in reasoning
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def summary(text: str) -> list[dict[str, str]]:
    return [{"type": "summary_text", "text": text}]


def test_encrypted_reasoning_beside_a_summary_is_counted(tmp_path: Path) -> None:
    session = CODEX.parse(
        rollout(
            tmp_path / "rollout.jsonl",
            {"summary": summary("Reading the tree."), "encrypted_content": SECRET_REASONING},
            {"summary": [], "encrypted_content": SECRET_REASONING},
            {"summary": summary("No encrypted part.")},
            {"summary": summary("Empty encrypted part."), "encrypted_content": ""},
        )
    )
    texts = [event.text for event in session.events if isinstance(event, Reasoning)]
    assert texts == ["Reading the tree.", "No encrypted part.", "Empty encrypted part."]
    # The summarised item and the bare one: two encrypted parts left out, both counted.
    assert session.dropped == {"opaque_reasoning": 2}
    assert SECRET_REASONING not in "".join(event_json(event) for event in session.events)


def test_meta_json_counts_them_after_an_import(root: Path, tmp_path: Path) -> None:
    source = rollout(
        tmp_path / "rollout.jsonl",
        {"summary": summary("Reading the tree."), "encrypted_content": SECRET_REASONING},
    )
    target = resolve_target(root)
    result = import_transcript(target, source)
    assert result.dropped == {"opaque_reasoning": 1}
    folder = working_folder(target).path
    meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    assert meta["dropped"] == {"opaque_reasoning": 1}
    events = (folder / "events.jsonl").read_text(encoding="utf-8")
    assert '"kind":"reasoning"' in events and SECRET_REASONING not in events


def test_the_public_synthetic_rollout_counts_its_encrypted_reasoning(root: Path) -> None:
    source = sample(
        "codex/claude-code-log__rollout-2026-01-02T03-04-05-11111111-1111-4111-8111-111111111111.jsonl"
    )
    target = resolve_target(root)
    import_transcript(target, source)
    folder = working_folder(target).path
    meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    # and the event stream's copies of the prompt and the answer
    assert meta["dropped"] == {"opaque_reasoning": 1, "repeated_event": 2}
    events = (folder / "events.jsonl").read_text(encoding="utf-8")
    assert "I will inspect the synthetic directory." in events
    assert "SYNTHETIC_ENCRYPTED_CONTENT" not in events
