"""Rewinds in a Claude Code session: the session file is a tree (`uuid`, `parentUuid`), and a
prompt that branches off before the last message leaves the branch after that point. The
events stay in file order; the branch left is marked `abandoned` and a `rewind` event starts
the new one. Hook progress beside the messages, side chains and compactions are no rewind."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from samples import sample
from test_export import validate_atif, validate_with_harbor
from test_import_claude_code import (
    COMMON,
    IMPORTER,
    assistant,
    file_history_delta,
    of,
    result,
    tool_use,
    user,
    write,
)

from stet_lsp.core.targets import resolve_target
from stet_lsp.trajectory.attribution import line_attribution
from stet_lsp.trajectory.events import (
    Compaction,
    EventBase,
    FileChange,
    RawEvent,
    Rewind,
    SourceRef,
    Subagent,
    UserMessage,
    parse_event,
)
from stet_lsp.trajectory.export_agent_trace import to_agent_trace
from stet_lsp.trajectory.export_atif import to_atif
from stet_lsp.trajectory.importers.atif import IMPORTERS as ATIF_IMPORTERS
from stet_lsp.trajectory.importing import import_transcript
from stet_lsp.trajectory.index import TrajectoryIndex
from stet_lsp.trajectory.provenance import Provenance
from stet_lsp.trajectory.step_detail import hover
from stet_lsp.trajectory.store import working_folder

ATIF = ATIF_IMPORTERS["atif"]
FILE = "/work/app/fetch.py"
BEFORE = "def fetch(url):\n    return get(url)\n"
RETRY = "def fetch(url):\n    for _ in range(3):\n        return get(url)\n"
EXPONENTIAL = "def fetch(url):\n    return backoff(get, url, factor=2)\n"
LINEAR = "def fetch(url):\n    return backoff(get, url, step=1)\n"


def at(second: int) -> str:
    return f"2026-02-01T10:00:{second:02d}Z"


def snapshot(message_id: str, update: bool = False) -> dict[str, Any]:
    backups = {"fetch.py": {"backupFileName": "4f1c@v1", "version": 1, "backupTime": at(0)}}
    return {
        "type": "file-history-snapshot",
        "messageId": message_id,
        "snapshot": {"messageId": message_id, "trackedFileBackups": backups, "timestamp": at(0)},
        "isSnapshotUpdate": update,
    }


def edit(
    call: str, uuid: str, parent: str, second: int, old: str, new: str
) -> list[dict[str, Any]]:
    """An Edit call of the whole function and its result, which records the file before."""
    tool = tool_use(call, "Edit", {"file_path": FILE, "old_string": old, "new_string": new})
    structured = {"filePath": FILE, "oldString": old, "newString": new, "originalFile": old}
    return [
        assistant(uuid, parent, f"msg_{uuid}", [tool], at(second)),
        user(
            f"r{uuid}",
            uuid,
            [result(call, f"The file {FILE} has been updated.")],
            at(second + 1),
            toolUseResult=structured,
        ),
    ]


def system(uuid: str, parent: str | None, second: int, **fields: Any) -> dict[str, Any]:
    record = {"parentUuid": parent, **COMMON, "type": "system", "uuid": uuid}
    return record | {"timestamp": at(second), "level": "info", **fields}


def progress(uuid: str, parent: str, second: int) -> dict[str, Any]:
    data = {"type": "hook_progress", "hookEvent": "PostToolUse", "hookName": "PostToolUse:Edit"}
    record = {"parentUuid": parent, **COMMON, "type": "progress", "uuid": uuid, "data": data}
    return record | {"timestamp": at(second), "toolUseID": "t2", "parentToolUseID": "t2"}


def say(uuid: str, parent: str, text: str, second: int) -> dict[str, Any]:
    return assistant(uuid, parent, f"msg_{uuid}", [{"type": "text", "text": text}], at(second))


def before_the_rewind() -> list[Any]:
    """Two turns: an Edit, then a second prompt whose Edit (and a hook's progress beside its
    answer) the user will rewind."""
    return [
        snapshot("u1"),
        user("u1", None, "Add retries to fetch", at(1)),
        *edit("t1", "a1", "u1", 2, BEFORE, RETRY),
        say("a2", "ra1", "Added three tries.", 4),
        system("s1", "a2", 5, subtype="stop_hook_summary", content="hooks ran"),
        snapshot("u2"),
        user("u2", "s1", "Now make the retries exponential", at(6)),
        *edit("t2", "a3", "u2", 7, RETRY, EXPONENTIAL),
        progress("p2", "ra3", 9),
        say("a4", "ra3", "Exponential now.", 10),
        snapshot("u2", update=True),
    ]


def rewound_session(tmp_path: Path) -> Path:
    """The user edits the second prompt (a rewind to before it), goes on, compacts, runs a
    subagent on a side chain, then rewinds that last turn with Esc Esc."""
    subagent_prompt = "Check fetch.py"
    records = [
        *before_the_rewind(),
        snapshot("u3"),
        user("u3", "s1", "Make the retries linear instead", at(12)),  # line 15: the rewind
        *edit("t3", "a5", "u3", 13, RETRY, LINEAR),
        say("a6", "ra5", "Linear now.", 15),
        system("c1", None, 16, subtype="compact_boundary", content="Conversation compacted")
        | {"logicalParentUuid": "a6"},
        user("cs", "c1", "Summary: fetch retries linearly.", at(17), isCompactSummary=True),
        user("u4", "cs", "Check it with a subagent", at(18)),
        assistant(
            "a7",
            "u4",
            "msg_a7",
            [tool_use("t4", "Task", {"description": "check", "prompt": subagent_prompt})],
            at(19),
        ),
        user("sc1", None, subagent_prompt, at(20), isSidechain=True),
        say("sc2", "sc1", "Looks fine.", 21) | {"isSidechain": True},
        user("r7", "a7", [result("t4", "Looks fine.")], at(22)),
        say("a8", "r7", "The subagent found nothing.", 23),
        user("u5", "cs", "Never mind the check; summarise", at(24)),  # line 27: Esc Esc
        say("a9", "u5", "Retries are linear.", 25),
    ]
    return write(tmp_path / "rewound.jsonl", records)


def flags(events: list[EventBase]) -> list[tuple[str, bool]]:
    return [(event.kind, event.abandoned) for event in events]


def test_a_rewind_marks_the_branch_it_left_and_starts_the_new_one(tmp_path: Path) -> None:
    events = IMPORTER.parse(rewound_session(tmp_path)).events
    prompts = [(m.text, m.abandoned) for m in of(events, UserMessage) if m.agent is None]
    assert prompts == [
        ("Add retries to fetch", False),
        ("Now make the retries exponential", True),
        ("Make the retries linear instead", False),
        ("Check it with a subagent", True),
        ("Never mind the check; summarise", False),
    ]
    changes = [(c.call_id, c.abandoned) for c in of(events, FileChange)]
    assert changes == [("t1", False), ("t2", True), ("t3", False)]
    rewinds = of(events, Rewind)
    # Each rewind shares its source with the prompt after it and names the message it kept.
    assert [(r.source.line, r.resumes_after) for r in rewinds] == [
        (15, SourceRef(file="rewound.jsonl", line=5)),  # "Added three tries."
        (27, SourceRef(file="rewound.jsonl", line=20)),  # the compaction's summary
    ]
    for rewind in rewinds:
        after = events[events.index(rewind) + 1]
        assert isinstance(after, UserMessage) and after.source == rewind.source
        assert not rewind.abandoned and not after.abandoned
    # What the new branch hangs from stays (the turn's stop hook); the hook progress beside
    # the abandoned answer and the snapshots of the abandoned prompt go with it; the snapshot
    # of the new prompt stays.
    raw = [(e.source.line, e.abandoned) for e in of(events, RawEvent)]
    assert raw == [(1, False), (6, False), (7, True), (11, True), (13, True), (14, False)]
    # The subagent of the call on the last abandoned turn is abandoned with it; the
    # compaction before it is not.
    (subagent,) = of(events, Subagent)
    assert subagent.abandoned and subagent.call_id == "t4"
    assert all(e.abandoned for e in events if e.agent == subagent.agent_id)
    assert [c.abandoned for c in of(events, Compaction)] == [False]
    # Everything but the rewound spans is kept, and events stay in file order.
    lines = [event.source.line for event in events]
    assert lines == sorted(lines)
    abandoned = sorted({e.source.line for e in events if e.abandoned})
    assert abandoned == [7, 8, 9, 10, 11, 12, 13, 21, 22, 23, 24, 25, 26]


def test_hook_progress_a_compaction_and_a_side_chain_are_no_rewind(tmp_path: Path) -> None:
    records = [
        *before_the_rewind(),
        system("c1", None, 12, subtype="compact_boundary", content="Conversation compacted")
        | {"logicalParentUuid": "a4"},
        user("cs", "c1", "Summary: exponential retries.", at(13), isCompactSummary=True),
        user("u3", "cs", "Check it with a subagent", at(14)),
        assistant("a7", "u3", "msg_a7", [tool_use("t4", "Task", {"prompt": "Check"})], at(15)),
        user("sc1", None, "Check", at(16), isSidechain=True),
        say("sc2", "sc1", "Fine.", 17) | {"isSidechain": True},
        user("sc3", "sc2", "Check again", at(18), isSidechain=True),
        user("r7", "a7", [result("t4", "Fine.")], at(19)),
        # A prompt after a turn whose last records are system records hanging off the answer.
        system("s2", "r7", 20, subtype="turn_duration"),
        progress("p3", "r7", 21),
        user("u4", "p3", "Thanks", at(22)),
    ]
    events = IMPORTER.parse(write(tmp_path / "linear.jsonl", records)).events
    assert not of(events, Rewind)
    assert not [event for event in events if event.abandoned]


def test_hook_records_that_lead_to_no_message_are_no_rewind(tmp_path: Path) -> None:
    """Claude Code 2.1 (public sessions of entireio/cli): a Stop hook's progress hangs from a
    record the file does not hold, and the next prompt hangs from that progress; a plan
    implemented in a cleared context starts from SessionStart hook progress without a parent.
    Neither goes back to an earlier message."""
    records = [
        *before_the_rewind(),
        progress("p3", "not-in-the-file", 11),
        system("s3", "p3", 12, subtype="stop_hook_summary", content="hooks ran"),
        system("s4", "s3", 13, subtype="turn_duration"),
        snapshot("u3"),
        user("u3", "s4", "What is remaining?", at(14)),
        say("a5", "u3", "Nothing.", 15),
        progress("p4", "", 16) | {"parentUuid": None},
        progress("p5", "p4", 17),
        user("u4", "p5", "Implement the following plan: linear retries", at(18)),
        say("a6", "u4", "Implemented.", 19),
    ]
    events = IMPORTER.parse(write(tmp_path / "hooks.jsonl", records)).events
    assert not of(events, Rewind)
    assert not [event for event in events if event.abandoned]


def test_a_local_command_and_a_continue_after_exit_are_no_rewind(tmp_path: Path) -> None:
    """Claude Code writes a local command's caveat, name and output as user records after the
    turn (`/model`, `/exit`); the next prompt hangs from the output, or, after `/exit` and
    `claude --continue`, from the turn before the command (entireio/cli's public sessions)."""
    caveat = "<local-command-caveat>Caveat: generated by local commands.</local-command-caveat>"
    records = [
        *before_the_rewind(),
        system("s2", "a4", 11, subtype="turn_duration"),
        user("c1", "s2", caveat, at(12), isMeta=True),
        user("c2", "c1", "<command-name>/model</command-name>", at(12)),
        user("c3", "c2", "<local-command-stdout>Set model to opus</local-command-stdout>", at(12)),
        user("u3", "c3", "Make the retries linear instead", at(13)),
        say("a5", "u3", "Linear now.", 14),
        system("s3", "a5", 15, subtype="turn_duration"),
        user("c4", "s3", caveat, at(16), isMeta=True),
        user("c5", "c4", "<command-name>/exit</command-name>", at(16)),
        user("c6", "c5", "<local-command-stdout>Bye!</local-command-stdout>", at(16)),
        user("u4", "s3", "Why linear?", at(30)),
        say("a6", "u4", "It was asked for.", 31),
    ]
    events = IMPORTER.parse(write(tmp_path / "commands.jsonl", records)).events
    assert not of(events, Rewind)
    assert not [event for event in events if event.abandoned]


def test_a_rewind_that_starts_with_a_local_command(tmp_path: Path) -> None:
    """Back to before the second prompt, then `/model` before the next prompt: one rewind,
    where the command's records start the new branch."""
    caveat = "<local-command-caveat>Caveat: generated by local commands.</local-command-caveat>"
    records = [
        *before_the_rewind(),
        user("c1", "a2", caveat, at(12), isMeta=True),
        user("c2", "c1", "<command-name>/model</command-name>", at(12)),  # line 15
        user("c3", "c2", "<local-command-stdout>Set model to opus</local-command-stdout>", at(12)),
        user("u3", "c3", "Make the retries linear instead", at(13)),
        say("a5", "u3", "Linear now.", 14),
    ]
    events = IMPORTER.parse(write(tmp_path / "command.jsonl", records)).events
    rewinds = of(events, Rewind)
    assert [(r.source.line, r.resumes_after) for r in rewinds] == [
        (15, SourceRef(file="command.jsonl", line=5))
    ]
    prompts = [(m.text, m.abandoned) for m in of(events, UserMessage) if m.agent is None]
    assert [text for text, abandoned in prompts if abandoned] == [
        "Now make the retries exponential"
    ]
    assert ("Make the retries linear instead", False) in prompts


def test_file_history_deltas_go_with_the_prompt_they_name(tmp_path: Path) -> None:
    """Later 2.1 builds add each edited file's backup as a `file-history-delta` naming the
    prompt (`messageId`): those of the abandoned prompt are abandoned with it, those of the
    prompts that stay (the new one's too) stay."""
    records = [
        *before_the_rewind(),
        file_history_delta("u2", "fetch.py", version=2),  # line 14
        snapshot("u3"),
        user("u3", "s1", "Make the retries linear instead", at(12)),  # the rewind
        file_history_delta("u3", "fetch.py", version=2),  # line 17
        *edit("t3", "a5", "u3", 13, RETRY, LINEAR),
        file_history_delta("u1", "util.py"),  # line 20: written late, for a prompt that stays
    ]
    events = IMPORTER.parse(write(tmp_path / "deltas.jsonl", records)).events
    assert [r.source.line for r in of(events, Rewind)] == [16]
    deltas = [e for e in of(events, RawEvent) if e.record.get("type") == "file-history-delta"]
    assert [(d.source.line, d.abandoned) for d in deltas] == [(14, True), (17, False), (20, False)]
    assert {d.reason for d in deltas} == {
        "file history delta (one file's backup for rewinding edits)"
    }


def test_the_public_sample_has_no_rewind() -> None:
    """Claude Code 2.1.12: hook progress and stop-hook records hang off the tree beside the
    messages (lines 44-46, 53-57), which is no rewind."""
    path = sample("claude-code/entireio-cli__37_995ebed6e4_0_full.jsonl")
    events = IMPORTER.parse(path).events
    assert not of(events, Rewind)
    assert not [event for event in events if event.abandoned]


# -- imported for real: narration, attribution, provenance, export ---------------------------


APP = "".join(f"line {number}\n" for number in range(1, 21))  # the `repo` fixture's src/app.py


def app_edit(
    root: Path, call: str, uuid: str, parent: str, second: int, before: str, line: int, new: str
) -> tuple[list[dict[str, Any]], str]:
    """An Edit of one line of src/app.py as Claude Code records it: its structured patch
    (the hunk's real line numbers) and no copy of the file (as before Claude Code 1.0.50).
    Returns the records and the file after it."""
    old = f"line {line}\n"
    after = before.replace(old, new, 1)
    path = f"{root}/src/app.py"
    tool = tool_use(call, "Edit", {"file_path": path, "old_string": old, "new_string": new})
    hunk = {
        "oldStart": line,
        "oldLines": 1,
        "newStart": line,
        "newLines": 1,
        "lines": [f"-{old[:-1]}", f"+{new[:-1]}"],
    }
    structured = {"filePath": path, "oldString": old, "newString": new}
    structured["structuredPatch"] = [hunk]  # type: ignore[assignment]
    here = {"cwd": str(root)}
    records = [
        assistant(uuid, parent, f"msg_{uuid}", [tool], at(second), **here),
        user(
            f"r{uuid}",
            uuid,
            [result(call, f"The file {path} has been updated successfully.")],
            at(second + 1),
            toolUseResult=structured,
            **here,
        ),
    ]
    return records, after


def rewound_app(root: Path, tmp_path: Path) -> tuple[Path, str, str]:
    """Line 5 rewritten; then line 10, on a turn the user rewinds; then line 15 on the new
    branch. Returns the transcript and src/app.py with the code restored and with it kept."""
    here = {"cwd": str(root)}
    five, after_five = app_edit(root, "t1", "a1", "u1", 2, APP, 5, "FIVE = 5\n")
    ten, after_ten = app_edit(root, "t2", "a3", "u2", 7, after_five, 10, "TEN = 10\n")
    restored_fifteen, restored = app_edit(
        root, "t3", "a5", "u3", 13, after_five, 15, "FIFTEEN = 15\n"
    )
    kept = after_ten.replace("line 15\n", "FIFTEEN = 15\n")
    records = [
        user("u1", None, "Name line five", at(1), **here),
        *five,
        say("a2", "ra1", "Line five is FIVE.", 4) | here,
        user("u2", "a2", "Name line ten", at(6), **here),
        *ten,
        say("a4", "ra3", "Line ten is TEN.", 10) | here,
        user("u3", "a2", "Name line fifteen instead", at(12), **here),  # the rewind
        *restored_fifteen,
        say("a6", "ra5", "Line fifteen is FIFTEEN.", 15) | here,
    ]
    return write(tmp_path / "rewound-app.jsonl", records), restored, kept


def imported(root: Path, source: Path) -> tuple[dict[str, Any], list[EventBase], str]:
    target = resolve_target(root)
    import_transcript(target, source)
    folder = working_folder(target).path
    meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    lines = (folder / "events.jsonl").read_text(encoding="utf-8").splitlines()
    events: list[EventBase] = [parse_event(line) for line in lines]
    return meta, events, (folder / "narration.md").read_text(encoding="utf-8")


def step_of(events: list[EventBase], call_id: str) -> int:
    (step,) = [e.step for e in of(events, FileChange) if e.call_id == call_id]
    return step


def test_events_jsonl_says_which_steps_a_rewind_abandoned(root: Path, tmp_path: Path) -> None:
    source, _restored, _kept = rewound_app(root, tmp_path)
    _meta, _events, _narration = imported(root, source)
    folder = working_folder(resolve_target(root)).path
    lines = [json.loads(line) for line in (folder / "events.jsonl").read_text().splitlines()]
    # A reader without Stet: the abandoned steps carry "abandoned":true, the rewind is a kind.
    abandoned = [line["step"] for line in lines if line.get("abandoned") is True]
    (rewind,) = [line for line in lines if line["kind"] == "rewind"]
    prompt = next(line for line in lines if line.get("text") == "Name line ten")
    answer = next(line for line in lines if line.get("text") == "Line ten is TEN.")
    assert abandoned == list(range(prompt["step"], answer["step"] + 2))  # and its usage
    kept = next(line for line in lines if line.get("text") == "Line five is FIVE.")
    assert rewind["resumes_after"] == {"file": "rewound-app.jsonl", "line": kept["source"]["line"]}
    assert rewind["step"] == abandoned[-1] + 1
    assert "abandoned" not in rewind
    # The editor's index (lenses, outline) titles them so.
    index = TrajectoryIndex.from_events_text((folder / "events.jsonl").read_text())
    line = kept["source"]["line"]
    assert index.get(rewind["step"]).title == (
        f"{rewind['step']} · rewind back to line {line} of rewound-app.jsonl"
    )
    assert (
        index.get(prompt["step"]).title
        == f"{prompt['step']} · user_message abandoned · Name line ten"
    )
    assert "abandoned" not in index.get(rewind["step"] + 1).title


def test_the_hover_and_show_say_what_a_rewind_left(
    root: Path, tmp_path: Path, stet: Callable[..., tuple[int, str, str]]
) -> None:
    source, _restored, _kept = rewound_app(root, tmp_path)
    _meta, events, _narration = imported(root, source)
    (rewind,) = of(events, Rewind)
    kept = next(e for e in events if getattr(e, "text", None) == "Line five is FIVE.")
    prompt = next(e for e in events if getattr(e, "text", None) == "Name line ten")
    index = TrajectoryIndex.from_events_text(
        (working_folder(resolve_target(root)).path / "events.jsonl").read_text()
    )
    shown = hover(index, index.get(rewind.step))
    assert f"go on from line {kept.source.line} of `rewound-app.jsonl`" in shown
    assert "abandoned" not in shown.splitlines()[0]
    assert "abandoned: a later rewind left" in hover(index, index.get(prompt.step))
    assert "abandoned" not in hover(index, index.get(rewind.step + 1)).splitlines()[0]
    code, out, err = stet("trajectory", "show", "--json", "-C", str(root))
    assert code == 0, err
    steps = {row["step"]: row for row in json.loads(out)["steps"]}
    assert steps[prompt.step]["abandoned"] is True
    assert steps[prompt.step]["summary"] == "abandoned · Name line ten"
    assert steps[rewind.step] | {"agent": None} == {
        "step": rewind.step,
        "kind": "rewind",
        "agent": None,
        "time": rewind.time,
        "summary": f"back to line {kept.source.line} of rewound-app.jsonl",
        "abandoned": False,
    }


def test_narration_shows_the_rewind_and_the_abandoned_steps(root: Path, tmp_path: Path) -> None:
    source, _restored, _kept = rewound_app(root, tmp_path)
    _meta, events, narration = imported(root, source)
    (rewind,) = of(events, Rewind)
    kept = next(e for e in events if getattr(e, "text", None) == "Line five is FIVE.")
    left = [e.step for e in events if e.abandoned]
    assert f"Step {rewind.step} · Rewind" in narration
    assert (
        f"took the conversation back to step [{kept.step}](#step-{kept.step}) and went on "
        f"from there: steps [{left[0]}](#step-{left[0]}) to [{left[-1]}](#step-{left[-1]}) "
        "were abandoned."
    ) in narration
    for event in events:
        if event.abandoned:
            assert f'<a id="step-{event.step}"></a>' in narration
        if event.abandoned and event.kind != "tool_result":  # a result is in its call's block
            assert f"Step {event.step} · abandoned · " in narration
    for event in events:
        if not event.abandoned:
            assert f"Step {event.step} · abandoned" not in narration


def test_lines_of_an_abandoned_edit_are_credited_to_no_step(root: Path, tmp_path: Path) -> None:
    """Restored code: the abandoned edit's line is not in the file; the attribution the
    Agent Trace export writes, followed through the changes, must not place it there."""
    source, restored, _kept = rewound_app(root, tmp_path)
    meta, events, _narration = imported(root, source)
    five, ten, fifteen = (step_of(events, call) for call in ("t1", "t2", "t3"))
    followed = line_attribution(events).files["src/app.py"]
    assert {line: origin.step for line, origin in followed.items()} == {5: five, 15: fifteen}
    trace = to_agent_trace(meta, events)
    credited = json.dumps(trace)
    assert f'"step": {ten}' not in credited and f"#step-{ten}" not in credited
    (traced,) = [file for file in trace["files"] if file["path"] == "src/app.py"]
    ranges = [
        (r["start_line"], r["end_line"])
        for conversation in traced["conversations"]
        for r in conversation["ranges"]
    ]
    assert sorted(ranges) == [(5, 5), (15, 15)]
    write_text(root / "src/app.py", restored)
    provenance = Provenance.load(root)
    steps = {line.line: line.step for line in provenance.attribute("src/app.py", restored)}
    assert steps == {4: five, 14: fifteen}


def test_kept_code_of_an_abandoned_edit_is_not_credited_either(root: Path, tmp_path: Path) -> None:
    """Restore conversation only: the line is in the file, written outside what the
    conversation kept; no step is credited with it (docs/trajectory-format.md, `rewind`)."""
    source, _restored, kept = rewound_app(root, tmp_path)
    _meta, events, _narration = imported(root, source)
    five, fifteen = step_of(events, "t1"), step_of(events, "t3")
    write_text(root / "src/app.py", kept)
    provenance = Provenance.load(root)
    steps = {line.line: line.step for line in provenance.attribute("src/app.py", kept)}
    assert steps == {4: five, 14: fifteen}


def test_the_atif_export_marks_abandoned_steps_and_the_rewind(root: Path, tmp_path: Path) -> None:
    source, _restored, _kept = rewound_app(root, tmp_path)
    meta, events, _narration = imported(root, source)
    doc = to_atif(meta, events)
    validate_atif(doc)
    validate_with_harbor(doc, required=False)
    marked = [
        (step["source"], step["message"].split("\n")[0][:30])
        for step in doc["steps"]
        if step.get("extra", {}).get("abandoned") is True
    ]
    assert marked == [("user", "Name line ten"), ("agent", ""), ("agent", "Line ten is TEN.")]
    (rewind,) = [step for step in doc["steps"] if "rewind" in step.get("extra", {})]
    assert rewind["source"] == "system" and "rewound" in rewind["message"]
    assert rewind["extra"]["rewind"]["resumes_after"]["file"] == "rewound-app.jsonl"
    following = doc["steps"][doc["steps"].index(rewind) + 1]
    assert following["message"] == "Name line fifteen instead"
    # The abandoned requests were paid for: the totals count them.
    prompt = sum(step.get("metrics", {}).get("prompt_tokens", 0) for step in doc["steps"])
    assert doc["final_metrics"]["total_prompt_tokens"] == prompt == 60
    # Imported again, the marks come back: the same steps abandoned, the rewind going back
    # to the step of the answer it kept.
    path = tmp_path / "exported.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    again = ATIF.parse(path).events
    assert [(e.kind, e.abandoned) for e in again if e.abandoned] == [
        ("user_message", True),
        ("tool_call", True),
        ("usage", True),
        ("tool_result", True),
        ("file_change", True),
        ("agent_message", True),
        ("usage", True),
    ]
    (back,) = of(again, Rewind)
    kept = doc["steps"].index(rewind) - len(marked) - 1
    assert back.resumes_after is not None and back.resumes_after.pointer == f"/steps/{kept}"
    assert doc["steps"][kept]["message"] == "Line five is FIVE."


def write_text(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")
