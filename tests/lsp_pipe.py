"""A language server as a subprocess, spoken to in raw JSON-RPC frames (used by the server
benchmark and by the protocol-level tests, which need to send what typed clients cannot)."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any


class PipeServer:
    def __init__(self, command: list[str] | None = None, stderr: Any = subprocess.DEVNULL) -> None:
        self.process = subprocess.Popen(
            command or [sys.executable, "-m", "stet_lsp.server"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
        )
        self.inbox: queue.Queue[dict[str, Any]] = queue.Queue()
        self.logged: list[str] = []
        """The messages of the server's window/logMessage notifications so far."""
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        while True:
            length = 0
            while True:
                line = stream.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            message = self.received(stream.read(length))
            if message.get("method") == "window/logMessage":
                self.logged.append(message["params"]["message"])
            self.inbox.put(message)

    def received(self, body: bytes) -> dict[str, Any]:
        """A message read from the server (a subclass may stamp it)."""
        message: dict[str, Any] = json.loads(body)
        return message

    def initialize(
        self, capabilities: dict[str, Any] | None = None, folders: list[str] | None = None
    ) -> PipeServer:
        """Initialize the session (`folders`: workspace folder URIs) and say it is done."""
        params: dict[str, Any] = {"capabilities": capabilities or {}}
        if folders:
            params["workspaceFolders"] = [{"uri": f, "name": f.rsplit("/", 1)[-1]} for f in folders]
        self.send({"id": 1, "method": "initialize", "params": params})
        assert "result" in self.answer(1)
        self.send({"method": "initialized", "params": {}})
        return self

    def open(self, uri: str, text: str, language: str = "python") -> str:
        item = {"uri": uri, "languageId": language, "version": 1, "text": text}
        self.send({"method": "textDocument/didOpen", "params": {"textDocument": item}})
        return uri

    def send_bytes(self, body: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def send(self, message: dict[str, Any]) -> None:
        self.send_bytes(json.dumps({"jsonrpc": "2.0", **message}).encode())

    def wait_for(
        self, predicate: Callable[[dict[str, Any]], bool], timeout: float = 30
    ) -> dict[str, Any]:
        """The first message matching `predicate`; requests from the server on the way get a
        null result."""
        deadline = time.monotonic() + timeout
        while True:
            message = self.inbox.get(timeout=max(deadline - time.monotonic(), 0.01))
            if "method" in message and "id" in message:
                self.send({"id": message["id"], "result": None})
            if predicate(message):
                return message

    def answer(self, request_id: int, timeout: float = 15) -> dict[str, Any]:
        return self.wait_for(
            lambda message: message.get("id") == request_id and "method" not in message, timeout
        )

    def close(self) -> None:
        self.process.kill()
        self.process.wait(timeout=10)
