"""Transcripts that look like real ones, for the gate's benchmark.

`measure` reads agent transcripts (Claude Code JSONL, Codex rollout JSONL, aider Markdown,
SWE-agent `.traj`, ATIF JSON) and returns what makes the gate's work: the share of records
holding a home-directory path, the lengths of tool outputs, the share of tool outputs that
show a file with numbered lines (Claude Code's Read), and the share of JSON string literals
holding escapes (`\\"`, `\\n`, `\\u`). `realistic_transcript` generates Claude
Code-shaped JSONL matching those figures, with secrets planted in tool output; `describe`
measures generated text the same way, so the two can be printed side by side.

Run: python bench/transcripts.py [SAMPLES_DIR] [--size-mb 10]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # gate_corpus
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import gate_corpus

from stet_lsp.gate.homepaths import count_home_paths

SAMPLES = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "transcripts"
_LITERAL = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
# A file as a Read tool shows it: each line after its number and a tab or `→`.
_NUMBERED_LINE = re.compile(r"(?m)^ {0,8}\d{1,7}[\t→]")


@dataclass
class Shares:
    """What a set of transcripts looks like to the gate."""

    records: int = 0
    with_home: int = 0
    tool_outputs: list[int] = field(default_factory=list)
    literals: int = 0
    escaped: dict[str, int] = field(default_factory=lambda: {'\\"': 0, "\\n": 0, "\\u": 0})
    home_paths: int = 0
    size: int = 0
    numbered: tuple[int, int] = (0, 0)
    """(tool outputs with numbered lines, tool outputs looked at)."""

    @property
    def home_share(self) -> float:
        return self.with_home / self.records if self.records else 0.0

    @property
    def numbered_share(self) -> float:
        return self.numbered[0] / self.numbered[1] if self.numbered[1] else 0.0

    def add_output(self, text: str) -> None:
        self.tool_outputs.append(len(text))
        found = len(_NUMBERED_LINE.findall(text, 0, 4096)) >= 2
        self.numbered = (self.numbered[0] + found, self.numbered[1] + 1)

    def escape_share(self, escape: str) -> float:
        return self.escaped[escape] / self.literals if self.literals else 0.0

    def add_record(self, raw: str) -> None:
        self.records += 1
        homes = count_home_paths(raw)
        self.home_paths += homes
        self.with_home += homes > 0

    def add_literals(self, raw: str) -> None:
        for match in _LITERAL.finditer(raw):
            self.literals += 1
            body = match.group(1)
            if "\\" in body:
                for escape in self.escaped:
                    self.escaped[escape] += escape in body

    def summary(self) -> dict[str, float]:
        outputs = sorted(self.tool_outputs) or [0]
        return {
            "records": self.records,
            "records with a home path %": 100 * self.home_share,
            "home paths per record": self.home_paths / max(1, self.records),
            "tool outputs": len(self.tool_outputs),
            "tool output median chars": statistics.median(outputs),
            "tool output p90 chars": outputs[int(0.9 * (len(outputs) - 1))],
            "tool output max chars": outputs[-1],
            "tool outputs numbered %": 100 * self.numbered_share,
            'literals with \\" %': 100 * self.escape_share('\\"'),
            "literals with \\n %": 100 * self.escape_share("\\n"),
            "literals with \\u %": 100 * self.escape_share("\\u"),
        }


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_text_of(item) for item in content)
    if isinstance(content, dict):
        return _text_of(content.get("text") or content.get("content") or content.get("output"))
    return ""


def _jsonl_outputs(record: dict[str, Any]) -> Iterator[str]:
    message = record.get("message")
    if isinstance(message, dict) and isinstance(message.get("content"), list):
        for item in message["content"]:
            if isinstance(item, dict) and item.get("type") == "tool_result":
                yield _text_of(item.get("content"))
    payload = record.get("payload")
    if isinstance(payload, dict) and str(payload.get("type", "")).endswith("_call_output"):
        yield _text_of(payload.get("output"))


def measure(root: Path = SAMPLES) -> Shares:
    shares = Shares()
    for path in sorted(root.rglob("*")):
        if not path.is_file():
            continue
        raw = path.read_text(encoding="utf-8", errors="replace")
        shares.size += len(raw.encode("utf-8"))
        suffix = path.suffix
        if suffix == ".jsonl":
            shares.add_literals(raw)
            for line in raw.splitlines():
                if not line.strip():
                    continue
                shares.add_record(line)
                record = json.loads(line)
                for output in _jsonl_outputs(record):
                    shares.add_output(output)
        elif suffix in (".json", ".traj"):
            shares.add_literals(raw)
            data = json.loads(raw)
            steps = data.get("steps") or data.get("trajectory") or []
            for step in steps:
                shares.add_record(json.dumps(step))
                if "observation" in step:
                    observation = step["observation"]
                    if isinstance(observation, dict):
                        for result in observation.get("results", []):
                            shares.add_output(_text_of(result.get("content")))
                    else:
                        shares.add_output(_text_of(observation))
        elif suffix == ".md":
            # aider: a record is a turn (a `#### ` user message and what follows it).
            for turn in re.split(r"\n(?=#### )", raw):
                shares.add_record(turn)
    return shares


JSON_FORMATS = ("claude-code", "codex", "atif", "swe-agent")


def measure_formats(root: Path = SAMPLES) -> dict[str, Shares]:
    """Per format (one folder each), and "json": every JSON format pooled."""
    found = {folder.name: measure(folder) for folder in sorted(root.iterdir()) if folder.is_dir()}
    pooled = Shares()
    for name in JSON_FORMATS:
        part = found.get(name)
        if part is None:
            continue
        pooled.records += part.records
        pooled.with_home += part.with_home
        pooled.home_paths += part.home_paths
        pooled.tool_outputs += part.tool_outputs
        pooled.numbered = (
            pooled.numbered[0] + part.numbered[0],
            pooled.numbered[1] + part.numbered[1],
        )
        pooled.literals += part.literals
        pooled.size += part.size
        for escape in pooled.escaped:
            pooled.escaped[escape] += part.escaped[escape]
    found["json"] = pooled
    return found


def targets(formats: dict[str, Shares]) -> Shares:
    """What to generate: Claude Code's share of records with a home path (the generated text
    is Claude Code JSONL; container formats such as SWE-agent hold none), and tool-output
    lengths and escape shares pooled over every JSON format."""
    target = formats["json"]
    local = formats.get("claude-code")
    if local is not None and local.records:
        target = Shares(
            records=local.records,
            with_home=local.with_home,
            tool_outputs=target.tool_outputs,
            literals=target.literals,
            escaped=dict(target.escaped),
            home_paths=local.home_paths,
            size=target.size,
            numbered=local.numbered,  # Claude Code's Read shows numbered lines; others do not
        )
    return target


def describe(text: str) -> Shares:
    """The same figures for generated JSONL (tool outputs as Claude Code writes them)."""
    shares = Shares(size=len(text.encode("utf-8")))
    shares.add_literals(text)
    for line in text.splitlines():
        shares.add_record(line)
        for output in _jsonl_outputs(json.loads(line)):
            shares.add_output(output)
    return shares


# -- generation ---------------------------------------------------------------------------

_USERS = ("alice", "bob.smith", "dev", "m-garcia", "ci_user", "pat")
_PROJECTS = ("payments", "cli", "homelab", "api-server", "notebooks")
_WORDS = [
    "retry",
    "session",
    "config",
    "handler",
    "request",
    "response",
    "cache",
    "index",
    "build",
    "deploy",
    "token_count",
    "user_id",
    "module",
    "parser",
    "schema",
    "import",
    "export",
    "client",
    "server",
    "worker",
    "queue",
    "branch",
    "commit",
    "test",
    "fixture",
    "assert",
    "value",
    "result",
    "error",
    "warning",
    "path",
    "file",
    "line",
    "column",
]
_NON_ASCII = "éüñøß—→…“”✓"


def _code_line(rng: random.Random, home: str, quotes: bool, unicode_: bool) -> str:
    words = [rng.choice(_WORDS) for _ in range(rng.randint(2, 6))]
    line = f"    {words[0]} = {words[1]}({rng.randint(0, 999)})  # {' '.join(words[2:])}"
    if quotes:
        line += f' "{rng.choice(_WORDS)}"'
    if unicode_:
        line += " " + rng.choice(_NON_ASCII)
    if rng.random() < 0.08:
        line += f"  # see {home}/{rng.choice(_WORDS)}/{rng.choice(_WORDS)}.py"
    return line


def _tool_output(rng: random.Random, length: int, home: str, shares: Shares) -> str:
    lines: list[str] = []
    total = 0
    quotes = rng.random() < min(1.0, 20 * shares.escape_share('\\"'))
    unicode_ = rng.random() < min(1.0, 150 * shares.escape_share("\\u"))
    while total < length:
        line = _code_line(rng, home, quotes and rng.random() < 0.5, unicode_ and rng.random() < 0.2)
        lines.append(line)
        total += len(line) + 1
    return "\n".join(lines)[: max(1, length)]


def _planted(rng: random.Random, count: int) -> tuple[str, tuple[str, ...]]:
    formats = [f for f in gate_corpus.FORMATS if not f.env_names]
    fmt = formats[count % len(formats)]
    value, secrets = fmt.make(rng)
    _, text = gate_corpus.render(rng.choice(("env", "shell", "yaml", "python")), fmt, value, rng)
    return text, secrets


def realistic_transcript(
    size: int, shares: Shares, seed: int = 11, plant_every: int = 150
) -> tuple[str, list[tuple[str, ...]]]:
    """Claude Code-shaped JSONL of about `size` characters matching `shares`, with a secret
    planted in a tool output every `plant_every` records."""
    rng = random.Random(seed)
    user = rng.choice(_USERS)
    home = f"/home/{user}"
    cwd = f"{home}/src/{rng.choice(_PROJECTS)}"
    lengths = shares.tool_outputs or [2000]
    planted: list[tuple[str, ...]] = []
    lines: list[str] = []
    total = 0
    count = 0
    ensure_ascii = shares.escape_share("\\u") > 0.001
    while total < size:
        count += 1
        record: dict[str, Any] = {
            "parentUuid": gate_corpus.uuid4(rng),
            "isSidechain": False,
            "userType": "external",
            "sessionId": "48f428f9-72d8-40b2-9594-953019809473",
            "version": "2.1.12",
            "gitBranch": "feature/retry",
            "uuid": gate_corpus.uuid4(rng),
            "timestamp": f"2026-01-22T03:{count // 60 % 60:02d}:{count % 60:02d}.213Z",
        }
        local = rng.random() < shares.home_share
        place = cwd if local else "."
        if local:
            record["cwd"] = cwd
        kind = count % 3
        tool_id = "toolu_01" + gate_corpus.pick(rng, gate_corpus.ALNUM, 22)
        if kind == 0:
            target = f"{place}/{rng.choice(_WORDS)}/{rng.choice(_WORDS)}.py"
            record.update(
                type="assistant",
                message={
                    "id": "msg_01" + gate_corpus.pick(rng, gate_corpus.ALNUM, 22),
                    "role": "assistant",
                    "content": [
                        {
                            "type": "tool_use",
                            "id": tool_id,
                            "name": rng.choice(("Read", "Bash", "Edit")),
                            "input": {
                                "file_path": target,
                                "command": f'cd {place} && pytest -k "{kind}"',
                            },
                        }
                    ],
                    "usage": {"input_tokens": rng.randint(1, 9999), "output_tokens": 42},
                },
            )
        elif kind == 1:
            length = max(1, int(rng.choice(lengths) * rng.uniform(0.8, 1.2)))
            output = _tool_output(rng, length, home if local else "~", shares)
            if count % plant_every == 1:
                secret_text, secrets = _planted(rng, len(planted))
                cut = output.rfind("\n", 0, len(output) // 2) + 1
                output = output[:cut] + secret_text + "\n" + output[cut:]
                planted.append(secrets)
            if rng.random() < shares.numbered_share:  # a file as the Read tool shows it
                output = "".join(f"{n:6}→{line}\n" for n, line in enumerate(output.split("\n"), 1))
            record.update(
                type="user",
                message={
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": tool_id, "content": output}],
                },
                toolUseResult={"stdout": output[:200], "stderr": "", "interrupted": False},
            )
        else:
            text = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(20, 200)))
            if rng.random() < 0.8:
                text = text.replace(" value ", ' "value"\n\n').replace(" test ", "\n- test ")
            record["message"] = {"content": [{"type": "thinking", "thinking": text[:400]}]}
            if rng.random() < 0.5:
                record["message"]["content"].append({"type": "text", "text": "Done.\nNext."})
            record.update(
                type="assistant",
                message={
                    "id": "msg_01" + gate_corpus.pick(rng, gate_corpus.ALNUM, 22),
                    "role": "assistant",
                    "content": [
                        {"type": "text", "text": f"Editing {place}/app.py: {text}"},
                        *record["message"]["content"],
                    ],
                },
            )
        line = json.dumps(record, ensure_ascii=ensure_ascii, separators=(",", ":"))
        lines.append(line)
        total += len(line) + 1
    return "\n".join(lines) + "\n", planted


def side_by_side(samples: Shares, generated: Shares) -> str:
    left, right = samples.summary(), generated.summary()
    rows = [f"{'':<28} {'samples':>12} {'generated':>12}"]
    rows.append(f"{'size MB':<28} {samples.size / 1e6:>12.2f} {generated.size / 1e6:>12.2f}")
    for name in left:
        rows.append(f"{name:<28} {left[name]:>12.1f} {right[name]:>12.1f}")
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("samples", nargs="?", type=Path, default=SAMPLES)
    parser.add_argument("--size-mb", type=float, default=10.0)
    options = parser.parse_args()
    formats = measure_formats(options.samples)
    for name, shares in formats.items():
        summary = ", ".join(f"{k} {v:.1f}" for k, v in shares.summary().items())
        print(f"{name}: {summary}")
    target = targets(formats)
    text, planted = realistic_transcript(int(options.size_mb * 1e6), target)
    print(side_by_side(target, describe(text)))
    print(f"planted secrets: {len(planted)}")


if __name__ == "__main__":
    main()
