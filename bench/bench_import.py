"""Benchmark of `stet trajectory import` on a large Claude Code session: the whole process
beside the floor (a process reading the file and json.loads of every line) in the same run,
then where the import's time goes, phase by phase, in-process.

Run: python bench/bench_import.py [--size-mb 50] [--rounds 3] [--skip-breakdown] [--profile]

Targets (the issue): floor seconds / import seconds >= 0.3, the gate included; peak memory
reported as a multiple of the file size.

The session: bench/transcripts.py's generator matches the public samples' tool-output
lengths, escapes and home paths, but its records are not a conversation the Claude Code
importer reads as one (no tool_use/tool_result pairing, no prompts, no Edit or Write results,
usage on tool_use records only). `shape` rewrites them into what Claude Code writes, field
for field like the public sample: turns opened by a prompt (after a file-history snapshot)
and closed by the Stop hook's progress, stop-hook summary and turn duration; replies whose
thinking (signed), text and tool_use blocks are one record each, repeating the request's
message id, model, usage and request id; every tool_use answered by its tool_result with the
tool's structured result beside it (a Read's file, a Bash's stdout, an Edit's originalFile
and structuredPatch, a Write's created content); parentUuid chained, timestamps in order.
The generator's tool outputs (and the secrets planted in them) become the tools' outputs,
the Edits' original files and the Writes' contents. The session's cwd becomes the bench
repository, as when importing a session that worked in it (--keep-cwd: not).

Whole processes run --rounds times, interleaved, best wall time kept (the machine may be
shared); the import is cold each round (.stet/cache/trajectories removed). Peak memory is
each process's maximum resident set from /usr/bin/time -f %M. They run through the
interpreter a user's install gives (bench/interpreters.py), as the gate's bench does.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import hashlib
import io
import json
import os
import pstats
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # gate_corpus
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # transcripts

import gate_corpus
import transcripts
from interpreters import Interpreter, clean_interpreter

MB = 1_000_000
SAMPLE = Path("claude-code") / "entireio-cli__37_995ebed6e4_0_full.jsonl"  # under --samples
FLOOR = "import json, sys\nfor line in open(sys.argv[1], 'rb'):\n    json.loads(line)\n"
TIME = "/usr/bin/time"
PROFILE_PREFIX = 5 * MB  # the record and event profiles read this much of each transcript

# -- the session ---------------------------------------------------------------------------

_MODEL = "claude-opus-4-5-20251101"
_SLUG = "greedy-mixing-hennessy"
_STOP_HOOK = "go run ${CLAUDE_PROJECT_DIR}/cmd/entire/main.go hooks claude-code stop"
_START_HOOK = "go run ${CLAUDE_PROJECT_DIR}/cmd/entire/main.go hooks claude-code session-start"
_PROMPTS = (
    "The {0} {1} fails when the {2} is empty; fix it and add a test.",
    "Why does {0} retry the {1} twice? Look at {2} and explain.",
    "Refactor the {0} {1} so the {2} handler shares it, keep the behaviour.",
    "Run the tests for {0} and fix what fails in the {1} {2}.",
)


class _Shaper:
    """Claude Code records, written as JSONL, from the generator's records (see the module's
    docstring); `write` takes them in order and returns False once `size` is reached."""

    def __init__(self, first: dict[str, Any], cwd: str, size: int, seed: int) -> None:
        self.rng = random.Random(seed)
        self.cwd = cwd
        self.size = size
        self.common = {
            "sessionId": first["sessionId"],
            "version": first["version"],
            "gitBranch": first["gitBranch"],
        }
        self.out = io.StringIO()
        self.written = 0
        self.parent: str | None = None
        self.clock = datetime(2026, 1, 22, 3, 0, 0, tzinfo=UTC)
        self.turn_start = self.clock
        self.turn_budget = 0
        self.turn_calls = 0
        self.turns = 0
        self.request: dict[str, Any] | None = None
        self.request_has_call = False
        self.pending_call: dict[str, Any] | None = None
        self.edited: list[str] = []
        self._start()

    # -- records ---------------------------------------------------------------------------

    def _emit(self, record: dict[str, Any]) -> None:
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
        self.out.write(line)
        self.out.write("\n")
        self.written += len(line.encode("utf-8")) + 1
        if "uuid" in record:
            self.parent = record["uuid"]

    def _stamp(self, low: float, high: float) -> str:
        self.clock += timedelta(seconds=self.rng.uniform(low, high))
        return self.clock.strftime("%Y-%m-%dT%H:%M:%S.") + f"{self.clock.microsecond // 1000:03d}Z"

    def _record(self, kind: str, pause: tuple[float, float], **fields: Any) -> dict[str, Any]:
        """A conversation record: the header every one repeats, then `fields`."""
        header = {
            "parentUuid": self.parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": self.cwd,
            **self.common,
            "slug": _SLUG,
            "type": kind,
        }
        uuid = fields.pop("uuid", None) or gate_corpus.uuid4(self.rng)
        tail = {
            k: fields.pop(k) for k in ("toolUseResult", "sourceToolAssistantUUID") if k in fields
        }
        return {**header, **fields, "uuid": uuid, "timestamp": self._stamp(*pause), **tail}

    def _hook_progress(self, event: str, name: str, command: str) -> None:
        call = gate_corpus.uuid4(self.rng)
        data = {"type": "hook_progress", "hookEvent": event, "hookName": name, "command": command}
        self._emit(
            self._record("progress", (0.0, 0.1), data=data, parentToolUseID=call, toolUseID=call)
        )

    def _start(self) -> None:
        for _ in range(3):
            self._summary()
        self._hook_progress("SessionStart", "SessionStart:startup", _START_HOOK)

    def _summary(self) -> None:
        words = [self.rng.choice(transcripts._WORDS).title() for _ in range(4)]
        leaf = gate_corpus.uuid4(self.rng)
        self._emit({"type": "summary", "summary": " ".join(words), "leafUuid": leaf})

    def _open_turn(self) -> None:
        self._close_turn()
        self.turns += 1
        if self.turns % 10 == 0:
            self._summary()
        prompt_id = gate_corpus.uuid4(self.rng)
        backups = {
            path: {
                "backupFileName": f"{gate_corpus.pick(self.rng, gate_corpus.HEX, 16)}@v2",
                "version": 2,
                "backupTime": self.clock.isoformat().replace("+00:00", "Z"),
            }
            for path in self.edited[-5:]
        }
        snapshot = {"messageId": prompt_id, "trackedFileBackups": backups}
        snapshot["timestamp"] = self._stamp(5, 240)
        self._emit(
            {
                "type": "file-history-snapshot",
                "messageId": prompt_id,
                "snapshot": snapshot,
                "isSnapshotUpdate": False,
            }
        )
        words = [self.rng.choice(transcripts._WORDS) for _ in range(3)]
        text = self.rng.choice(_PROMPTS).format(*words)
        if self.rng.random() < 0.5:
            text += "\n\n" + " ".join(self.rng.choice(transcripts._WORDS) for _ in range(40))
        self.turn_start = self.clock
        self._emit(
            self._record(
                "user",
                (0.2, 1.0),
                message={"role": "user", "content": text},
                uuid=prompt_id,
                thinkingMetadata={"level": "high", "disabled": False, "triggers": []},
            )
        )
        self.turn_budget = self.rng.randint(2, 12)
        self.turn_calls = 0
        self.request = None

    def _close_turn(self) -> None:
        if not self.turns:
            return
        self._hook_progress("Stop", "Stop", _STOP_HOOK)
        hook = {"command": _STOP_HOOK}
        tool_use = gate_corpus.uuid4(self.rng)
        self._emit(
            self._record(
                "system",
                (0.1, 3.0),
                subtype="stop_hook_summary",
                hookCount=1,
                hookInfos=[hook],
                hookErrors=[],
                preventedContinuation=False,
                stopReason="",
                hasOutput=True,
                level="suggestion",
                toolUseID=tool_use,
            )
        )
        duration = int((self.clock - self.turn_start).total_seconds() * 1000)
        self._emit(
            self._record(
                "system", (0.0, 0.01), subtype="turn_duration", durationMs=duration, isMeta=False
            )
        )

    def _new_request(self) -> None:
        cached = self.rng.randint(20_000, 150_000)
        self.request = {
            "id": "msg_01" + gate_corpus.pick(self.rng, gate_corpus.ALNUM, 22),
            "requestId": "req_011C" + gate_corpus.pick(self.rng, gate_corpus.ALNUM, 20),
            "usage": {
                "input_tokens": self.rng.randint(1, 12),
                "cache_creation_input_tokens": self.rng.randint(0, 4000),
                "cache_read_input_tokens": cached,
                "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0},
                "output_tokens": self.rng.randint(1, 900),
                "service_tier": "standard",
            },
        }
        self.request_has_call = False

    def _assistant(self, block: dict[str, Any], pause: tuple[float, float]) -> dict[str, Any]:
        assert self.request is not None
        message = {
            "model": _MODEL,
            "id": self.request["id"],
            "type": "message",
            "role": "assistant",
            "content": [block],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": self.request["usage"],
        }
        record = self._record(
            "assistant", pause, message=message, requestId=self.request["requestId"]
        )
        self._emit(record)
        return record

    # -- the generator's records -----------------------------------------------------------

    def write(self, record: dict[str, Any]) -> bool:
        """Takes the next generator record; False once the session is `size` long."""
        content = record["message"]["content"]
        kind = content[0]["type"]
        if kind == "tool_use":
            self.pending_call = content[0]
        elif kind == "tool_result":
            if self.turns == 0:
                self._open_turn()
            self._call_and_result(self.pending_call, content[0]["content"])
            self.pending_call = None
        else:
            if self.turns == 0 or self.turn_calls >= self.turn_budget:
                self._open_turn()
            self._reply(content)
        return self.written < self.size

    def finish(self) -> str:
        self._close_turn()
        return self.out.getvalue()

    def _reply(self, content: list[dict[str, Any]]) -> None:
        """Thinking (signed) first, then the text blocks, one record each, one request."""
        self._new_request()
        for block in sorted(content, key=lambda b: b["type"] != "thinking"):
            if block["type"] == "thinking":
                length = self.rng.randint(400, 1600)
                signature = gate_corpus.pick(self.rng, gate_corpus.B64, length)
                block = {**block, "signature": signature}
            self._assistant(block, (0.3, 4.0))

    def _call_and_result(self, call: dict[str, Any] | None, output: str) -> None:
        name = call["name"] if call else "Read"
        path = call["input"]["file_path"] if call else f"{self.cwd}/app.py"
        path = self.cwd + path[1:] if path.startswith("./") else path
        lines = output.split("\n")
        changed = [i for i, line in enumerate(lines) if line.strip()]
        if name == "Edit" and not changed:
            name = "Read"
        if name == "Edit" and self.rng.random() < 0.25:
            name = "Write"
            stem = path.rsplit("/", 1)[0]
            path = f"{stem}/{self.rng.choice(transcripts._WORDS)}_{self.turns}.py"
        if name == "Read":
            tool_input: dict[str, Any] = {"file_path": path}
            result_text = output
            count = len(lines)
            file = {"filePath": path, "content": output, "numLines": count}
            structured: Any = {
                "type": "text",
                "file": {**file, "startLine": 1, "totalLines": count},
            }
        elif name == "Bash":
            command = call["input"]["command"] if call else "pytest -q"
            tool_input = {"command": command, "description": "Run the tests"}
            result_text = output
            structured = {"stdout": output, "stderr": "", "interrupted": False, "isImage": False}
        elif name == "Write":
            tool_input = {"file_path": path, "content": output}
            result_text = f"File created successfully at: {path}"
            structured = {
                "type": "create",
                "filePath": path,
                "content": output,
                "structuredPatch": [],
                "originalFile": None,
            }
            self.edited.append(path)
        else:
            tool_input, structured = self._edit(path, lines, changed)
            result_text = f"The file {path} has been updated successfully."
            self.edited.append(path)
        if self.request is None or self.request_has_call:
            self._new_request()
        call_id = (
            call["id"] if call else "toolu_01" + gate_corpus.pick(self.rng, gate_corpus.ALNUM, 22)
        )
        block = {"type": "tool_use", "id": call_id, "name": name, "input": tool_input}
        used = self._assistant(block, (0.3, 3.0))
        self.request_has_call = True
        result = {"tool_use_id": call_id, "type": "tool_result", "content": result_text}
        self._emit(
            self._record(
                "user",
                (0.05, 8.0),
                message={"role": "user", "content": [result]},
                toolUseResult=structured,
                sourceToolAssistantUUID=used["uuid"],
            )
        )
        self.turn_calls += 1

    def _edit(
        self, path: str, lines: list[str], changed: list[int]
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """An Edit of one line of the file (the generator's output) and its structured result,
        with the 3-line-context hunk Claude Code records."""
        at = self.rng.choice(changed)
        old = lines[at]
        words = [w for w in transcripts._WORDS if w in old]
        if words:
            word = self.rng.choice(words)
            new = old.replace(word, self.rng.choice(transcripts._WORDS), 1)
        else:
            new = old + "  # edited"
        if new == old:
            new = old + "  # edited"
        start, end = max(0, at - 3), min(len(lines), at + 4)
        hunk = [
            *(" " + line for line in lines[start:at]),
            "-" + old,
            "+" + new,
            *(" " + line for line in lines[at + 1 : end]),
        ]
        span = end - start
        patch = [{"oldStart": start + 1, "oldLines": span, "newStart": start + 1, "newLines": span}]
        patch[0]["lines"] = hunk
        tool_input = {"replace_all": False, "file_path": path, "old_string": old, "new_string": new}
        structured = {
            "filePath": path,
            "oldString": old,
            "newString": new,
            "originalFile": "\n".join(lines),
            "structuredPatch": patch,
            "userModified": False,
            "replaceAll": False,
        }
        return tool_input, structured


def shape(generated: str, size: int, seed: int = 7) -> tuple[str, str]:
    """Claude Code JSONL of about `size` bytes from the generator's text (which must be long
    enough; see `session`), and the cwd it names."""
    lines = iter(generated.splitlines())
    first = json.loads(next(lines))
    head = (json.loads(line) for line in generated[: 1 << 20].splitlines()[:100])
    cwd = next((r["cwd"] for r in head if isinstance(r.get("cwd"), str)), "/home/dev/src/app")
    shaper = _Shaper(first, cwd, size, seed)
    going = shaper.write(first)
    for line in lines:
        if not going:
            break
        going = shaper.write(json.loads(line))
    return shaper.finish(), cwd


def session(size: int, target: transcripts.Shares) -> tuple[str, str, str, list[tuple[str, ...]]]:
    """(the generator's text, the shaped session of about `size` bytes, its cwd, the secrets
    planted): the generator runs at `size` and again longer while shaping runs out of it."""
    want = size
    while True:
        generated, planted = transcripts.realistic_transcript(want, target)
        shaped, cwd = shape(generated, size)
        if len(shaped.encode("utf-8")) >= size or want > 8 * size:
            return generated, shaped, cwd, planted
        want = int(want * 1.5)


# -- how alike: records, events, gate figures -----------------------------------------------


def record_profile(text: str) -> dict[str, float]:
    """What the Claude Code importer needs, per 100 records or as a share of the records it
    applies to."""
    counts: Counter[str] = Counter()
    seen_calls: set[str] = set()
    previous_uuid: str | None = None
    previous_time = ""
    for line in text.splitlines():
        record = json.loads(line)
        counts["records"] += 1
        counts["bytes"] += len(line.encode("utf-8")) + 1
        kind = record.get("type")
        counts[f"type {kind}"] += 1
        if "parentUuid" in record:
            counts["with parentUuid"] += 1
            counts["parentUuid = the record before"] += bool(
                previous_uuid and record["parentUuid"] == previous_uuid
            )
        previous_uuid = record.get("uuid", previous_uuid)
        stamp = record.get("timestamp")
        if stamp:
            counts["with timestamp"] += 1
            counts["timestamp in order"] += stamp >= previous_time
            previous_time = stamp
        if kind in ("user", "assistant", "system", "progress"):
            counts["conversation"] += 1
            counts["conversation with cwd"] += "cwd" in record
        message = record.get("message")
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        blocks = content if isinstance(content, list) else []
        if kind == "user" and isinstance(content, str):
            counts["prompts"] += 1
        if kind == "assistant":
            counts["assistant"] += 1
            counts["with message.id"] += "id" in message
            counts["with model"] += "model" in message
            counts["with usage"] += isinstance(message.get("usage"), dict)
            counts["with requestId"] += "requestId" in record
            counts["one block"] += len(blocks) == 1
        for block in blocks:
            btype = block.get("type")
            if btype == "thinking":
                counts["thinking"] += 1
                counts["thinking signed"] += bool(block.get("signature"))
                counts["signature bytes"] += len(block.get("signature") or "")
            elif btype == "tool_use":
                counts["tool_use"] += 1
                seen_calls.add(block.get("id"))
            elif btype == "tool_result":
                counts["tool_result"] += 1
                counts["result of an earlier call"] += block.get("tool_use_id") in seen_calls
                structured = record.get("toolUseResult")
                counts["result with toolUseResult"] += structured is not None
                counts["toolUseResult bytes"] += len(json.dumps(structured, ensure_ascii=False))
                if isinstance(structured, dict):
                    counts["Edit structuredPatch"] += bool(structured.get("structuredPatch"))
                    counts["Write create"] += structured.get("type") == "create"
    per = 100 / max(1, counts["records"])

    def share(part: str, whole: str) -> float:
        return 100 * counts[part] / counts[whole] if counts[whole] else float("nan")

    return {
        "records": counts["records"],
        "user prompts /100 rec": counts["prompts"] * per,
        "assistant records /100 rec": counts["assistant"] * per,
        "  with message.id %": share("with message.id", "assistant"),
        "  with model %": share("with model", "assistant"),
        "  with usage %": share("with usage", "assistant"),
        "  with requestId %": share("with requestId", "assistant"),
        "  one content block %": share("one block", "assistant"),
        "thinking blocks signed %": share("thinking signed", "thinking"),
        "tool_use blocks /100 rec": counts["tool_use"] * per,
        "tool_result blocks /100 rec": counts["tool_result"] * per,
        "  naming an earlier tool_use %": share("result of an earlier call", "tool_result"),
        "  with toolUseResult %": share("result with toolUseResult", "tool_result"),
        "Edit structuredPatch /100 rec": counts["Edit structuredPatch"] * per,
        "Write create /100 rec": counts["Write create"] * per,
        "toolUseResult bytes %": share("toolUseResult bytes", "bytes"),
        "thinking signature bytes %": share("signature bytes", "bytes"),
        "parentUuid = record before %": share("parentUuid = the record before", "with parentUuid"),
        "timestamps in order %": share("timestamp in order", "with timestamp"),
        "conversation recs with cwd %": share("conversation with cwd", "conversation"),
        "summary /100 rec": counts["type summary"] * per,
        "progress /100 rec": counts["type progress"] * per,
        "system /100 rec": counts["type system"] * per,
        "file-history-snapshot /100 rec": counts["type file-history-snapshot"] * per,
    }


def event_profile(path: Path) -> dict[str, float]:
    """The events the Claude Code importer makes of the file, per 100 source records."""
    from stet_lsp.trajectory.importers.claude_code import ClaudeCodeImporter

    parsed = ClaudeCodeImporter().parse(path)
    records = sum(1 for line in path.read_text(encoding="utf-8").splitlines() if line.strip())
    kinds = Counter(event.kind for event in parsed.events)
    calls = {getattr(e, "call_id", None) for e in parsed.events if e.kind == "tool_call"}
    results = [e for e in parsed.events if e.kind == "tool_result"]
    per = 100 / max(1, records)
    profile = {
        f"{kind} /100 rec": kinds[kind] * per
        for kind in (
            "user_message",
            "agent_message",
            "reasoning",
            "tool_call",
            "tool_result",
            "file_change",
            "usage",
            "raw",
        )
    }
    paired = sum(getattr(r, "call_id", None) in calls for r in results)
    profile["results paired with a call %"] = 100 * paired / len(results) if results else 0.0
    profile["problems"] = len(parsed.problems)
    return profile


def prefix(text: str, size: int) -> str:
    cut = text[:size]
    return cut[: cut.rfind("\n") + 1] if len(text) > size else text


def columns(title: str, rows: dict[str, list[float]], names: list[str]) -> str:
    out = [f"{title:<32}" + "".join(f"{name:>14}" for name in names)]
    for label, values in rows.items():
        out.append(f"{label:<32}" + "".join(f"{value:>14.1f}" for value in values))
    return "\n".join(out)


def compare(
    samples: Path,
    formats: dict[str, transcripts.Shares],
    generated: str,
    shaped: str,
    imported: str,
    work: Path,
) -> None:
    """Side by side: the public sample, the generator's records and the shaped session, as
    the importer needs them (records, events) and as the gate sees them (bench_gate's
    figures, against the pooled samples it was matched to)."""
    target = transcripts.targets(formats)
    sample = (samples / SAMPLE).read_text(encoding="utf-8")
    texts = [sample, prefix(generated, PROFILE_PREFIX), prefix(shaped, PROFILE_PREFIX)]
    names = ["sample", "generator", "shaped"]
    profiles = [record_profile(text) for text in texts]
    print("\n== records: the public sample beside the generator's and the shaped session's")
    print(f"(generator and shaped: their first {PROFILE_PREFIX / MB:.0f} MB)")
    rows = {label: [p[label] for p in profiles] for label in profiles[0]}
    print(columns("", rows, names))
    events = []
    for name, text in zip(names, texts, strict=True):
        path = work / f"profile-{name}.jsonl"
        path.write_text(text, encoding="utf-8")
        events.append(event_profile(path))
        path.unlink()
    print("\n== events the Claude Code importer makes of them")
    print(columns("", {label: [e[label] for e in events] for label in events[0]}, names))
    print("\n== as the gate sees them (bench/transcripts.py's figures)")
    described = [
        transcripts.describe(prefix(generated, PROFILE_PREFIX)),
        transcripts.describe(prefix(shaped, PROFILE_PREFIX)),
        transcripts.describe(prefix(imported, PROFILE_PREFIX)),
    ]
    own = formats["claude-code"].summary()
    summaries = [target.summary(), own, *(d.summary() for d in described)]
    names = ["samples", "cc sample", "generator", "shaped", "cwd=repo"]
    print(columns("", {k: [s[k] for s in summaries] for k in summaries[0]}, names))
    print(
        "samples: the generator's targets (Claude Code's home-path share; the JSON formats'\n"
        "  pooled tool outputs and escapes); cc sample: the Claude Code sample alone;\n"
        "  shaped: every conversation record names the cwd, as Claude Code's do, and a tool's\n"
        "  output is in its tool_result and again in toolUseResult; non-ASCII written as is;\n"
        "  cwd=repo: the cwd made the bench repository (the import relativises it before the gate)"
    )


# -- whole processes -----------------------------------------------------------------------


@dataclass
class Run:
    seconds: float
    peak_mb: float
    stdout: str


def run_process(argv: list[str], cwd: Path) -> Run:
    """Wall time, peak resident memory (/usr/bin/time -f %M) and output of one process."""
    timed = [TIME, "-f", "%M", *argv] if os.path.exists(TIME) else argv
    start = time.perf_counter()
    done = subprocess.run(timed, cwd=cwd, capture_output=True)
    seconds = time.perf_counter() - start
    errors = done.stderr.decode("utf-8", "replace")
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited with {done.returncode}:\n{errors[-4000:]}")
    peaks = [line for line in errors.strip().splitlines() if line.strip().isdigit()]
    peak = int(peaks[-1]) / 1024 if timed is not argv and peaks else float("nan")
    return Run(seconds, peak, done.stdout.decode("utf-8", "replace"))


def make_repository(root: Path) -> None:
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "README.md").write_text("bench\n", encoding="utf-8")
    git = ["git", "-C", str(root), "-c", "user.name=bench", "-c", "user.email=bench@example.com"]
    subprocess.run([*git, "add", "README.md"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "start"], check=True)


def whole_processes(source: Path, repo: Path, rounds: int) -> dict[str, Run]:
    """The import and the floor as processes, through the interpreter a user's install gives
    (bench/interpreters.py)."""
    with tempfile.TemporaryDirectory(prefix="stet-bench-venv-") as venv:
        return _whole_processes(source, repo, rounds, clean_interpreter(Path(venv)))


def _whole_processes(
    source: Path, repo: Path, rounds: int, interpreter: Interpreter
) -> dict[str, Run]:
    python = interpreter.python
    working = repo / ".stet" / "cache" / "trajectories"
    commands = {
        "floor: read + json.loads per line": [python, "-c", FLOOR, str(source)],
        "stet trajectory import --json (cold)": [
            *interpreter.stet,
            "trajectory",
            "import",
            str(source),
            "--json",
        ],
        "python -c pass (start-up)": [python, "-c", "pass"],
    }
    best: dict[str, Run] = {}
    for round_ in range(rounds):
        for title, argv in commands.items():
            if "import" in title:
                shutil.rmtree(working, ignore_errors=True)  # cold: nothing imported yet
            result = run_process(argv, repo)
            if "import" in title:
                answer = json.loads(result.stdout)
                if not answer.get("changed"):
                    raise SystemExit(f"the import changed nothing: {answer}")
            if title not in best or result.seconds < best[title].seconds:
                best[title] = result
            print(f"  round {round_ + 1}: {title}: {result.seconds:.2f} s", flush=True)
    return best


# -- where the time goes -------------------------------------------------------------------


@dataclass
class Clock:
    profile: bool = False
    times: dict[str, float] = field(default_factory=dict)
    profiles: dict[str, cProfile.Profile] = field(default_factory=dict)

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        profiler = cProfile.Profile() if self.profile else None
        start = time.perf_counter()
        if profiler is not None:
            profiler.enable()
        try:
            yield
        finally:
            if profiler is not None:
                profiler.disable()
                self.profiles[name] = profiler
            self.times[name] = self.times.get(name, 0.0) + time.perf_counter() - start


def phases(root: Path, source: Path, clock: Clock) -> dict[str, int]:
    """import_transcript's pieces, one after the other as it runs them (stet_lsp/trajectory/
    importing.py: import_transcript, _store_session, compose), each on the clock. A copy of
    that code: `breakdown` checks that it writes the same events.jsonl as the CLI."""
    from stet_lsp.core.collector import collector_paused as paused
    from stet_lsp.core.safefs import atomic_write, atomic_writer, make_dirs, read_regular
    from stet_lsp.core.targets import resolve_target
    from stet_lsp.gate import GateConfig, redact_text
    from stet_lsp.gate.parallel import MIN_PARALLEL_SIZE
    from stet_lsp.gate.stetignore import StetIgnore
    from stet_lsp.gate.stream import redact_blocks, redact_runs
    from stet_lsp.trajectory import importing
    from stet_lsp.trajectory.events import SessionStart, parse_event
    from stet_lsp.trajectory.importers import detect
    from stet_lsp.trajectory.meta import ProblemRecord, SourceFile, TargetRef, summarise
    from stet_lsp.trajectory.normalize import Normalizer
    from stet_lsp.trajectory.store import working_folder

    target = resolve_target(root)
    with clock.phase("parse: detect + Claude Code importer"), paused():
        importing.transcript_source(source)
        chosen = detect(source)
        parsed = chosen.parse(source)
    with clock.phase("parse: sha256 of the source"):
        sources = [
            SourceFile(
                name=name,
                sha256=importing._sha256(path),
                format=parsed.format,
                session=parsed.session_id,
            )
            for name, path in sorted(parsed.sources.items())
        ]
    folder = working_folder(target)
    stem = importing._session_stem(parsed)
    with paused():
        with clock.phase("normalise: .stetignore"):
            cwds = [e.cwd for e in parsed.events if isinstance(e, SessionStart) and e.cwd]
            normalizer = Normalizer(target.root, StetIgnore.load(target.root), cwds)
            events = normalizer.events(parsed.events)
        with clock.phase("serialise: events, paths made relative"):
            blocks = importing._jsonl_blocks(events, normalizer, [])
        first_time = next((event.time for event in events if event.time), None)
        counts = {"events": len(events), "session bytes": sum(len(b.encode()) for b in blocks)}
        del events, parsed.events[:]
        sessions = make_dirs(target.root, folder.relative / importing.SESSIONS)
        with (
            clock.phase("gate: session JSONL, written as gated"),
            atomic_writer(sessions / f"{stem}.jsonl", target.root) as stream,
        ):
            report = redact_blocks(
                lambda whole=blocks: whole,
                GateConfig(),
                "events.jsonl",
                lambda chunk: stream.write(chunk.encode("utf-8")),
                parallel=sum(map(len, blocks)) >= MIN_PARALLEL_SIZE,
            )
        with clock.phase("gate: session record"):
            record: dict[str, Any] = {
                "format": importing._RECORD_FORMAT,
                "importer": parsed.format,
                "session": parsed.session_id,
                "first_time": first_time,
                "events": counts["events"],
                "sources": [source.model_dump() for source in sources],
                "redaction": dict(sorted(report.counts().items())),
                "dropped": dict(sorted(parsed.dropped.items())),
                "problems": [
                    {"source": p.source, "line": p.line, "message": p.message}
                    for p in parsed.problems
                ],
            }
            gated_record = redact_text(json.dumps(record, ensure_ascii=False), path="record.json")
            record = json.loads(gated_record.text)
            record_text = json.dumps(record, ensure_ascii=False, indent=2) + "\n"
            atomic_write(sessions / f"{stem}.json", record_text.encode("utf-8"), target.root)
    del parsed, blocks
    with paused():
        with clock.phase("compose: read sessions + step numbers"):
            lines: list[str] = []
            redaction: Counter[str] = Counter()
            dropped: Counter[str] = Counter()
            problems: list[ProblemRecord] = []
            source_files: list[SourceFile] = []
            for name, entry in importing._records(folder):
                stored = read_regular(folder.path / importing.SESSIONS / f"{name}.jsonl", root)
                assert stored is not None
                for raw in stored.split(b"\n"):
                    if raw:
                        line = raw.decode("utf-8", "replace")
                        stepped = importing._with_step(line, len(lines) + 1)
                        assert stepped is not None
                        lines.append(stepped)
                redaction.update(entry.get("redaction", {}))
                dropped.update(entry.get("dropped", {}))
                problems += [ProblemRecord(**problem) for problem in entry.get("problems", [])]
                source_files += [SourceFile(**source) for source in entry.get("sources", [])]
        with clock.phase("compose: parse_event (pydantic)"):
            composed = [parse_event(line) for line in lines]
        with clock.phase("compose: meta (summarise)"):
            meta = summarise(
                trajectory_id=folder.id,
                target=TargetRef(kind=target.kind, name=target.name, key=target.key),
                base_commit=importing._previous_base(folder),
                events=composed,
                redaction=redaction,
                dropped=dropped,
                problems=problems,
                sources=source_files,
            )
            if meta.base_commit is None:
                meta.base_commit = importing._head(target.root)
        with clock.phase("compose: narration, rendered + gated"):
            gated = list(importing.gated_narration(meta, composed, lines, GateConfig()))
        composed.clear()
        with clock.phase("compose: write events, narration, meta"):
            folder.write(
                (line.encode() + b"\n" for line in lines),
                meta,
                (text.encode("utf-8") for text in gated),
            )
    counts["narration bytes"] = sum(len(text.encode("utf-8")) for text in gated)
    # The gate alone on the narration (in the import it runs with the rendering), on its runs
    # as written: not a phase.
    start = time.perf_counter()
    alone = redact_runs(
        range(len(gated)), gated.__getitem__, GateConfig(), "narration.md", {}, parallel=True
    )
    for _ in alone:
        pass
    counts["narration gate ms"] = round(1000 * (time.perf_counter() - start))
    return counts


def events_digest(repo: Path) -> str:
    found = sorted((repo / ".stet" / "cache" / "trajectories").glob("*/events.jsonl"))
    if not found:
        return "missing"
    return hashlib.sha256(found[0].read_bytes()).hexdigest()[:16]


def breakdown(source: Path, repo: Path, rounds: int, profile: bool, floor: float) -> None:
    from stet_lsp.core.targets import resolve_target
    from stet_lsp.trajectory.importing import import_transcript

    size = source.stat().st_size / MB
    working = repo / ".stet" / "cache" / "trajectories"
    cli_digest = events_digest(repo)  # the last whole-process import left its output
    best: dict[str, float] = {}
    counts: dict[str, int] = {}
    for _ in range(rounds):
        shutil.rmtree(working, ignore_errors=True)
        gc.collect()
        clock = Clock()
        counts = phases(repo, source, clock)
        for name, seconds in clock.times.items():
            best[name] = min(best.get(name, float("inf")), seconds)
    digest = events_digest(repo)
    whole = float("inf")
    for _ in range(rounds):
        shutil.rmtree(working, ignore_errors=True)
        gc.collect()
        start = time.perf_counter()
        import_transcript(resolve_target(repo), source)
        whole = min(whole, time.perf_counter() - start)
    total = sum(best.values())
    print(f"\n== where the import's time goes, in-process, best of {rounds} per phase")
    print(
        f"{counts['events']} events, session JSONL {counts['session bytes'] / MB:.1f} MB, "
        f"narration {counts['narration bytes'] / MB:.1f} MB, from a {size:.1f} MB file"
    )
    print(f"{'phase':<40} {'s':>8} {'share':>7} {'file MB/s':>10}")
    for name, seconds in best.items():
        print(f"{name:<40} {seconds:>8.3f} {100 * seconds / total:>6.1f}% {size / seconds:>10.1f}")
    print(f"{'sum of the phases':<40} {total:>8.3f} {100.0:>6.1f}% {size / total:>10.1f}")
    print(f"{'import_transcript whole (in-process)':<40} {whole:>8.3f}")
    groups: Counter[str] = Counter()
    for name, seconds in best.items():
        groups[name.split(":")[0]] += seconds
    print("by stage: " + ", ".join(f"{k} {100 * v / total:.0f}%" for k, v in groups.items()))
    gate = best["gate: session JSONL, written as gated"] + counts["narration gate ms"] / 1000
    print(
        f"the gate alone on what the import writes: {gate:.3f} s; an import that parsed at the "
        f"floor's speed and did nothing but gate would score {floor / (floor + gate):.3f}"
    )
    same = "yes" if digest == cli_digest else f"NO ({digest} vs {cli_digest})"
    print(f"events.jsonl the same bytes as the CLI's: {same}")
    if profile:
        shutil.rmtree(working, ignore_errors=True)
        gc.collect()
        clock = Clock(profile=True)
        phases(repo, source, clock)
        for name, profiler in clock.profiles.items():
            if best[name] < 0.05 * total:
                continue
            print(f"\n-- cProfile: {name} (top functions by own time; profiled, so slower)")
            stream = io.StringIO()
            stats = pstats.Stats(profiler, stream=stream)
            stats.sort_stats("tottime").print_stats(12)
            body = stream.getvalue()
            start = body.find("   ncalls")
            print(body[start:].rstrip() if start >= 0 else body.rstrip())


def check_planted(shaped: str, repo: Path, planted: list[tuple[str, ...]]) -> tuple[int, int]:
    """(planted secrets in the session, those still whole in events.jsonl or narration.md)."""
    folder = next((repo / ".stet" / "cache" / "trajectories").glob("*/"), None)
    if folder is None:
        return 0, 0
    written = (folder / "events.jsonl").read_text(encoding="utf-8", errors="replace")
    written += (folder / "narration.md").read_text(encoding="utf-8", errors="replace")
    inside = [secrets for secrets in planted if all(s in shaped for s in secrets)]
    left = sum(any(s in written for s in secrets if len(s) >= 8) for secrets in inside)
    return len(inside), left


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size-mb", type=float, default=50.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--skip-breakdown", action="store_true", help="whole processes only")
    parser.add_argument(
        "--profile", action="store_true", help="cProfile the phases over 5%% of the time"
    )
    parser.add_argument("--keep-cwd", action="store_true", help="keep the session's own cwd")
    parser.add_argument("--samples", type=Path, default=transcripts.SAMPLES)
    options = parser.parse_args()
    size = int(options.size_mb * MB)

    start = time.perf_counter()
    formats = transcripts.measure_formats(options.samples)
    target = transcripts.targets(formats)
    generated, shaped, cwd, planted = session(size, target)
    print(f"generated and shaped in {time.perf_counter() - start:.1f} s")
    with tempfile.TemporaryDirectory(prefix="stet-bench-import-") as name:
        work = Path(name).resolve()
        repo = work / "repo"
        make_repository(repo)
        imported = shaped if options.keep_cwd else shaped.replace(cwd, str(repo))
        compare(options.samples, formats, generated, shaped, imported, work)
        del generated
        projects = work / ".claude" / "projects" / str(repo).replace("/", "-")
        projects.mkdir(parents=True)
        source = projects / "48f428f9-72d8-40b2-9594-953019809473.jsonl"
        source.write_text(imported, encoding="utf-8")
        file_mb = source.stat().st_size / MB
        print(
            f"\nsession: {file_mb:.1f} MB, {imported.count(chr(10))} records, cwd "
            + ("kept" if options.keep_cwd else "= the bench repository")
        )
        del shaped
        print(f"\n== whole processes, best of {options.rounds}, interleaved")
        best = whole_processes(source, repo, options.rounds)
        inside, left = check_planted(imported, repo, planted)
        del imported
        cpus = os.cpu_count()
        print(f"\n{'process':<40} {'s':>8} {'MB/s':>8} {'peak MB':>8} {'peak/file':>9}")
        for title, run in best.items():
            rate = f"{file_mb / run.seconds:>8.1f}" if "pass" not in title else f"{'':>8}"
            peak = f"{run.peak_mb / file_mb:>8.1f}x" if "pass" not in title else ""
            print(f"{title:<40} {run.seconds:>8.3f} {rate} {run.peak_mb:>8.0f} {peak}")
        floor = best["floor: read + json.loads per line"]
        stet = best["stet trajectory import --json (cold)"]
        ratio = floor.seconds / stet.seconds
        verdict = "met" if ratio >= 0.3 else "MISSED"
        print(f"ratio floor / import: {ratio:.3f} (target >= 0.3): {verdict}")
        print(f"peak memory of the import: {stet.peak_mb / file_mb:.1f}x the file")
        answer = json.loads(stet.stdout)
        redacted = sum(answer.get("redaction", {}).values())
        print(
            f"import: {answer['events']} events, {redacted} spans redacted; planted secrets "
            f"in the session: {inside}, still whole in events.jsonl/narration.md: {left}"
        )
        print(f"(Python {sys.version.split()[0]}, {cpus} CPUs; the machine may be shared)")
        if not options.skip_breakdown:
            breakdown(source, repo, options.rounds, options.profile, floor.seconds)


if __name__ == "__main__":
    main()
