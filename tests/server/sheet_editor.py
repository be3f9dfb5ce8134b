"""A scripted editor holding a style sheet open over raw JSON-RPC: it types, writes the file
and says it saved in separate steps, and answers the server's edits by applying, refusing or
holding them, so that a test can set the server's poll of the disk between any two steps."""

from __future__ import annotations

import queue
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lsp_pipe import PipeServer
from pygls.uris import from_fs_path

from stet_lsp.core.sheet import StyleSheet
from stet_lsp.core.sheet_format import SheetDocument
from stet_lsp.core.targets import resolve_target

NO_EDITS: dict[str, Any] = {"workspace": {"applyEdit": False}}
EDITS: dict[str, Any] = {
    "workspace": {"applyEdit": True, "workspaceEdit": {"documentChanges": True}}
}
POLLED_SECONDS = 1.5
"""Long enough for the server's poll of the disk (every 0.3 s) to read what changed."""


def entry_texts(text: str) -> list[str]:
    return sorted(entry.text for entry in SheetDocument.parse(text).entries())


def add(root: Path, text: str) -> None:
    """Another writer (the command line, an agent) adds a note to the sheet on disk."""
    StyleSheet(resolve_target(root)).add(text, author="agent")


class SheetEditor:
    """`answers` the server's workspace/applyEdit: "apply", "refuse" or "hold" (kept in
    `held`, answered by `answer`)."""

    def __init__(self, root: Path, capabilities: dict[str, Any], answers: str = "refuse") -> None:
        self.sheet = StyleSheet(resolve_target(root))
        self.uri = from_fs_path(str(self.sheet.path)) or ""
        self.server = PipeServer().initialize(capabilities, [from_fs_path(str(root)) or ""])
        self.answers = answers
        self.held: list[dict[str, Any]] = []
        self.seen: list[dict[str, Any]] = []
        self.version = 1
        self.text = ""
        self.request_id = 100

    def open(self) -> None:
        self.text = self.sheet.path.read_text(encoding="utf-8")
        self.server.open(self.uri, self.text, "markdown")
        self.sync()

    def type(self, text: str) -> None:
        self.text, self.version = text, self.version + 1
        change = {"textDocument": {"uri": self.uri, "version": self.version}}
        change["contentChanges"] = [{"text": text}]
        self.server.send({"method": "textDocument/didChange", "params": change})

    def type_entry(self, text: str) -> None:
        self.type(f"{self.text}- {text}\n")

    def write(self) -> str:
        """Write the buffer to disk, not saying so yet; the text written."""
        self.sheet.path.write_text(self.text, encoding="utf-8")
        return self.text

    def did_save(self, written: str | None = None) -> None:
        """Say the buffer was saved (with the text written, as the server asks)."""
        saved = {"uri": self.uri}
        params = {"textDocument": saved, "text": self.text if written is None else written}
        self.server.send({"method": "textDocument/didSave", "params": params})

    def save(self) -> None:
        self.did_save(self.write())

    def close(self) -> None:
        params = {"textDocument": {"uri": self.uri}}
        self.server.send({"method": "textDocument/didClose", "params": params})

    def request(self, method: str, params: Any) -> dict[str, Any]:
        self.request_id += 1
        asked = self.request_id
        self.server.send({"id": asked, "method": method, "params": params})
        return self.pump(until=lambda m: m.get("id") == asked and "method" not in m)

    def sync(self) -> None:
        """Wait until the server has read every message sent so far (it reads in order)."""
        self.request("textDocument/documentSymbol", {"textDocument": {"uri": self.uri}})

    def answer(self, request: dict[str, Any], applied: bool) -> None:
        if applied:
            self._apply(request["params"]["edit"])
        self.server.send({"id": request["id"], "result": {"applied": applied}})

    def _apply(self, edit: dict[str, Any]) -> None:
        edits = [e for change in edit.get("documentChanges") or [] for e in change["edits"]]
        edits += [e for found in (edit.get("changes") or {}).values() for e in found]
        text = self.text
        for item in sorted(edits, key=lambda e: _offset(text, e["range"]["start"]), reverse=True):
            start, end = _offset(text, item["range"]["start"]), _offset(text, item["range"]["end"])
            text = text[:start] + item["newText"] + text[end:]
        self.type(text)

    def _handle(self, message: dict[str, Any]) -> None:
        self.seen.append(message)
        if "method" not in message or "id" not in message:
            return
        if message["method"] != "workspace/applyEdit":
            self.server.send({"id": message["id"], "result": None})
        elif self.answers == "hold":
            self.held.append(message)
        else:
            self.answer(message, self.answers == "apply")

    def pump(
        self, seconds: float = 0.0, until: Callable[[dict[str, Any]], bool] | None = None
    ) -> dict[str, Any]:
        """Handle the server's messages for `seconds`, or until one matches `until`."""
        deadline = time.monotonic() + (seconds if until is None else 30)
        while (left := deadline - time.monotonic()) > 0:
            try:
                message = self.server.inbox.get(timeout=min(left, 0.05))
            except queue.Empty:
                continue
            self._handle(message)
            if until is not None and until(message):
                return message
        if until is not None:
            raise TimeoutError("the server sent no such message")
        return {}

    def polled(self, seconds: float = POLLED_SECONDS) -> None:
        """Let the server's poll read the disk (answering what the server asks meanwhile)."""
        self.pump(seconds)

    def messages(self, word: str) -> list[str]:
        return [
            m["params"]["message"]
            for m in self.seen
            if m.get("method") == "window/showMessage" and word in m["params"]["message"]
        ]

    def wait_not_merged(self) -> None:
        self.pump(
            until=lambda m: m.get("method") == "window/showMessage" and "not merged" in str(m)
        )

    def disk(self) -> list[str]:
        return entry_texts(self.sheet.path.read_text(encoding="utf-8"))

    def on_disk_within(self, expected: list[str], seconds: float = 10) -> list[str]:
        """The disk's entries once they were `expected` (or `seconds` ran out) and the
        server's poll has read them again: what it does with them, not a passing state."""
        deadline = time.monotonic() + seconds
        while self.disk() != expected and time.monotonic() < deadline:
            self.pump(0.1)
        self.polled()
        return self.disk()


def _offset(text: str, position: dict[str, int]) -> int:
    lines = text.split("\n")
    line = min(position["line"], len(lines) - 1)
    return sum(len(each) + 1 for each in lines[:line]) + min(
        position["character"], len(lines[line])
    )
