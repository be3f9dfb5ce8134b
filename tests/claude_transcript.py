"""A Claude Code session file written record by record, for tests that import a transcript
for real (into a pygit2 repository) and then look at what the trajectory renders or exports."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

SESSION = "cccccccc-1111-4222-8333-444455556666"
START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


class Transcript:
    """Records as Claude Code 2.x writes them: each message record with the session id, cwd,
    version and branch, chained by parentUuid; harness records (system notices, summaries,
    file-history snapshots) as they appear before a session's first prompt."""

    def __init__(self, cwd: Path | str, session: str = SESSION, start: datetime = START) -> None:
        self.cwd = str(cwd)
        self.session = session
        self.clock = start
        self.records: list[dict[str, Any]] = []
        self.parent: str | None = None
        self.count = 0

    def _next(self) -> tuple[str, str]:
        self.count += 1
        self.clock += timedelta(seconds=2)
        return f"{self.session[:8]}-{self.count:04d}", self.clock.isoformat().replace(
            "+00:00", ".000Z"
        )

    def _record(self, kind: str, message: dict[str, Any], **extra: Any) -> Transcript:
        uuid, time = self._next()
        self.records.append(
            {
                "parentUuid": self.parent,
                "isSidechain": False,
                "userType": "external",
                "cwd": self.cwd,
                "sessionId": self.session,
                "version": "2.1.12",
                "gitBranch": "main",
                "type": kind,
                "message": message,
                "uuid": uuid,
                "timestamp": time,
                **extra,
            }
        )
        self.parent = uuid
        return self

    def notice(self, text: str) -> Transcript:
        """A harness notice (a `system` record): no event kind of its own."""
        uuid, time = self._next()
        self.records.append(
            {
                "parentUuid": self.parent,
                "isSidechain": False,
                "cwd": self.cwd,
                "sessionId": self.session,
                "version": "2.1.12",
                "type": "system",
                "subtype": "stop_hook_summary",
                "content": text,
                "level": "suggestion",
                "uuid": uuid,
                "timestamp": time,
            }
        )
        self.parent = uuid
        return self

    def summary(self, text: str) -> Transcript:
        self.records.append({"type": "summary", "summary": text, "leafUuid": "x-0001"})
        return self

    def user(self, content: Any, **extra: Any) -> Transcript:
        return self._record("user", {"role": "user", "content": content}, **extra)

    def assistant(
        self,
        *blocks: dict[str, Any],
        model: str = "claude-sonnet-4-5-20250929",
        usage: dict[str, int] | None = None,
    ) -> Transcript:
        message = {
            "model": model,
            "id": f"msg_{self.session[:8]}_{self.count:04d}",
            "type": "message",
            "role": "assistant",
            "content": list(blocks),
            "stop_reason": None,
            "usage": usage or {"input_tokens": 100, "output_tokens": 20},
        }
        return self._record("assistant", message, requestId=f"req_{self.count:04d}")

    def say(self, text: str, **fields: Any) -> Transcript:
        return self.assistant({"type": "text", "text": text}, **fields)

    def tool(
        self,
        call_id: str,
        name: str,
        tool_input: dict[str, Any],
        output: str,
        structured: Any = None,
        *,
        thinking: str | None = None,
        **fields: Any,
    ) -> Transcript:
        """A call (after a thinking block, when given) and its result."""
        blocks: list[dict[str, Any]] = []
        if thinking is not None:
            blocks.append(
                {"type": "thinking", "thinking": thinking, "signature": "EqQBCkYIBxgCKkB"}
            )
        blocks.append({"type": "tool_use", "id": call_id, "name": name, "input": tool_input})
        self.assistant(*blocks, **fields)
        result = {"tool_use_id": call_id, "type": "tool_result", "content": output}
        extra = {} if structured is None else {"toolUseResult": structured}
        return self.user([result], **extra)

    def write_file(self, call_id: str, path: str, content: str, **fields: Any) -> Transcript:
        structured = {
            "type": "create",
            "filePath": path,
            "content": content,
            "structuredPatch": [],
            "originalFile": None,
        }
        output = f"File created successfully at: {path}"
        tool_input = {"file_path": path, "content": content}
        return self.tool(call_id, "Write", tool_input, output, structured, **fields)

    def read_file(self, call_id: str, path: str, content: str) -> Transcript:
        numbered = "".join(f"{n:>6}\t{line}\n" for n, line in enumerate(content.splitlines(), 1))
        structured = {
            "type": "text",
            "file": {"filePath": path, "content": content, "numLines": 1, "startLine": 1},
        }
        return self.tool(call_id, "Read", {"file_path": path}, numbered, structured)

    def save(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        text = "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in self.records)
        path.write_text(text, encoding="utf-8")
        return path


def working_session(cwd: Path, path: Path, session: str = SESSION) -> Path:
    """A short session saved at `path`: a request, an answer, a shell command and its output,
    a created file, a closing answer (the kinds an editor's views show, for tests that must run
    where the public samples are absent)."""
    transcript = Transcript(cwd, session)
    transcript.user("Add a retry helper and run the tests.")
    transcript.say("I'll look at the package first.")
    transcript.tool("toolu_01", "Bash", {"command": "ls src"}, "app.py\nutil.py\n")
    transcript.write_file(
        "toolu_02", f"{cwd}/src/retry.py", "def retry(call):\n    return call()\n"
    )
    transcript.tool("toolu_03", "Bash", {"command": "python -m pytest -q"}, "3 passed in 0.02s\n")
    transcript.say("Added src/retry.py; the tests pass.")
    return transcript.save(path)


def unplaced_session(root: Path, tmp_path: Path, session: str = SESSION) -> Path:
    """A session that writes src/u.py and edits it five times, each edit known only by its
    search and replace text: six changes that could not be placed."""
    written = "one\ntwo\nthree\ntwo\n"
    transcript = Transcript(root, session=session)
    transcript.user("Write and fix u.py.")
    path = f"{root}/src/u.py"
    transcript.write_file("toolu_w", path, written)
    text = written
    edits = [("two\n", "TWO\n"), ("two\n", "Two\n"), ("one", "ONE"), ("three", "3"), ("ONE", "1")]
    for number, (old, new) in enumerate(edits):
        edit_input = {"file_path": path, "old_string": old, "new_string": new}
        transcript.tool(f"toolu_e{number}", "Edit", edit_input, f"The file {path} was updated.")
        text = text.replace(old, new, 1)
    (root / "src" / "u.py").write_text(text, encoding="utf-8")
    return transcript.save(tmp_path / f"{session}.jsonl")
