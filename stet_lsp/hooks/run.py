"""What the harnesses run: `stet hooks run EVENT`.

- `session-start` (Claude Code's SessionStart; JSON on standard input): prints the target's
  brief as `hookSpecificOutput.additionalContext`.
- `session-end` (Claude Code's SessionEnd; JSON on standard input): imports
  `transcript_path` into the working trajectory.
- `stop` (Claude Code's Stop; JSON on standard input): the same, at most once every
  `--every` seconds (120) per session.
- `codex-notify` (Codex's `notify`; JSON as the last argument): imports the rollout of
  `thread-id`.

Every one of them exits 0, whatever happens: Claude Code reads exit status 2 as "block" (it
would keep a Stop going), and a hook must never hold up a session. What goes wrong is
written to `.stet/cache/hooks/hooks.log` (standard error when there is nowhere to write).

The repository is the one holding the `cwd` the harness reports (Claude Code's project
folder, `$CLAUDE_PROJECT_DIR`, when that is in none, or in one without Stet; the process's
own folder only when no `cwd` is given). The hooks write only into a repository that has a
`.stet` folder, and Codex turns only into one that consented (`stet hooks install codex`).

session-start prints the brief exactly as `stet brief` renders it, paused sheet or not (a
sheet git's index holds is not briefed, nor one that cannot be read: the hook then prints
only a `systemMessage` saying why, for the person, and logs it), and loads neither libgit2
(when HEAD names a branch, see `repository.py`; the index is read from its file,
`core/gitindex.py`) nor the gate.

An import can take longer than a hook may (Claude Code gives SessionEnd hooks 1.5 seconds
unless told otherwise, and ends them when it exits), so the hook checks its input, then
starts the import in a detached worker (the same command with `--worker`, in a session of
its own, its standard streams closed) and returns. The worker takes the session's lock, so
imports of one session never run side by side (a Stop import skips while one runs; the
others wait for it), imports (the same transcript twice changes nothing), logs the outcome,
and gives up after WORKER_SECONDS.
"""

from __future__ import annotations

import io
import json
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from stet_lsp.core.errors import StetError
from stet_lsp.core.targets import Target
from stet_lsp.hooks import files

if TYPE_CHECKING:
    from stet_lsp.trajectory.importing import ImportResult

EVENTS = ("session-start", "session-end", "stop", "codex-notify")
INPUT_LIMIT = 1024 * 1024
"""Bytes of hook input read at most (Claude Code's is a few hundred)."""
INPUT_SECONDS = 5.0
STOP_EVERY_SECONDS = 120.0
WORKER_SECONDS = 600.0
"""A worker gives up after this long, lock wait included."""
_LOCK_RETRY_SECONDS = 2.0
_LOCKED = "is locked by another process"  # core/locking.py's message on a lock timeout

Job = dict[str, Any]
Spawner = Callable[[Path, str, Job], None]


class HookInputError(StetError):
    """The harness's input cannot be used."""


def run_hook(
    event: str | None,
    arguments: Sequence[str],
    *,
    stdin: IO[str] | None = None,
    stdout: IO[str] | None = None,
    env: Mapping[str, str] | None = None,
    spawn: Spawner | None = None,
) -> int:
    """Run one hook; always 0."""
    # No standard input at all (descriptor 0 closed: Python has no sys.stdin) is no input.
    stdin = (sys.stdin or io.StringIO()) if stdin is None else stdin
    stdout = sys.stdout if stdout is None else stdout
    environment = os.environ if env is None else env
    name = event or "run"
    root: Path | None = None
    try:
        options = _options(arguments)
        if "--worker" in options:
            work(name, _job(options["--worker"]), environment)
            return 0
        if event is None:
            raise HookInputError(f"no hook event given; known: {', '.join(EVENTS)}")
        if event not in EVENTS:
            raise HookInputError(f"unknown hook {event!r}; known: {', '.join(EVENTS)}")
        if event == "codex-notify":
            payload = _payload(options.get("json") or _read(stdin))
            if not payload:
                raise HookInputError(
                    "codex-notify got no notification: Codex passes its JSON as the last argument"
                )
        else:
            payload = _payload(_read(stdin))
        root, target = _repository(payload, event, environment)
        if target is None:
            return 0
        if not files.has_stet(target.root):
            return 0  # Stet is not set up here: no brief to give, nothing to write
        if event == "session-start":
            _session_start(target, stdout)
            return 0
        if event == "codex-notify":
            _codex_notify(target.root, payload, spawn or start_worker)
        else:
            _claude_import(target.root, event, payload, options, spawn or start_worker)
    except Exception as error:  # a hook never fails its session
        files.log(root or _fallback_root(environment), name, f"error: {_describe(error)}")
    return 0


def _describe(error: BaseException) -> str:
    return str(error) if isinstance(error, StetError) else f"{type(error).__name__}: {error}"


def _options(arguments: Sequence[str]) -> dict[str, str]:
    """`--worker JOB`, `--every SECONDS` and a last bare argument (Codex's JSON)."""
    options: dict[str, str] = {}
    items = list(arguments)
    while items:
        item = items.pop(0)
        if item in ("--worker", "--every") and items:
            options[item] = items.pop(0)
        elif not item.startswith("--"):
            options["json"] = item
        else:
            raise HookInputError(f"unknown option {item}")
    return options


def _read(stdin: IO[str]) -> str:
    """The hook's input: what arrives on standard input until it ends, or until it holds a
    whole JSON object, or for INPUT_SECONDS at most (a harness that leaves the stream open
    must not hold the hook until its timeout)."""
    try:
        if stdin.isatty():
            return ""
        descriptor = stdin.fileno()
    except (OSError, ValueError):
        descriptor = -1
    try:
        if descriptor < 0 or os.name == "nt":
            # The harness writes UTF-8, whatever the text stream decodes (on Windows the
            # ANSI code page): its bytes are read when it has them.
            raw = getattr(stdin, "buffer", None)
            text = stdin.read(INPUT_LIMIT + 1) if raw is None else _utf8(raw)
        else:
            text = _read_until_complete(descriptor)
    except (OSError, ValueError) as error:  # UnicodeDecodeError is a ValueError
        raise HookInputError(f"cannot read the hook's input: {error}") from None
    if len(text) > INPUT_LIMIT:
        raise HookInputError(f"the hook's input is longer than {INPUT_LIMIT} characters")
    return text


def _utf8(stream: IO[bytes]) -> str:
    """`stream` decoded as UTF-8, read no further than past INPUT_LIMIT bytes."""
    data = stream.read(INPUT_LIMIT + 1)
    if len(data) > INPUT_LIMIT:
        raise HookInputError(f"the hook's input is longer than {INPUT_LIMIT} characters")
    return data.decode("utf-8")


def _read_until_complete(descriptor: int) -> str:
    import select

    data = bytearray()
    deadline = time.monotonic() + INPUT_SECONDS
    while len(data) <= INPUT_LIMIT:
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not select.select([descriptor], [], [], remaining)[0]:
            break
        chunk = os.read(descriptor, 65536)
        if not chunk:
            break
        data += chunk
        if data.rstrip().endswith(b"}") and _is_json(data):
            break
    return data.decode("utf-8")


def _is_json(data: bytes | bytearray) -> bool:
    try:
        json.loads(data)
    except ValueError:
        return False
    except RecursionError:  # whole or not, too deep to decode: no more input makes it JSON
        return True
    return True


def _payload(text: str) -> dict[str, Any]:
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except ValueError as error:
        raise HookInputError(f"the hook's input is not JSON ({error})") from None
    except RecursionError:
        raise HookInputError("the hook's input nests too deeply to decode") from None
    if not isinstance(value, dict):
        raise HookInputError("the hook's input is not a JSON object")
    return value


def _string(payload: Mapping[str, Any], key: str) -> str | None:
    value = payload.get(key)
    return value if isinstance(value, str) and value and "\0" not in value else None


def _repository(
    payload: Mapping[str, Any], event: str, env: Mapping[str, str]
) -> tuple[Path | None, Target | None]:
    """(a root to log into, the target) for the payload's `cwd`; (root or None, None) when
    no repository holds it. A `cwd` in a repository where Stet is not set up (the agent went
    into a nested repository, a submodule or a vendored clone) gives way to Claude Code's
    project folder when Stet is set up there: the session is the project's."""
    from stet_lsp.hooks.repository import find_target

    cwd = _string(payload, "cwd")
    candidates: list[str] = []
    if cwd is not None:
        if not os.path.isabs(cwd):
            raise HookInputError(f"cwd {cwd!r} is not an absolute path")
        candidates.append(cwd)
    if event != "codex-notify":
        candidates.append(env.get("CLAUDE_PROJECT_DIR", ""))
    folder_gone = False
    if cwd is None:
        try:
            candidates.append(os.getcwd())
        except FileNotFoundError:  # the folder the harness started the hook in was removed
            folder_gone = True
    found: Target | None = None
    for candidate in candidates:
        if not candidate:
            continue
        try:
            target = find_target(candidate)
        except StetError:
            continue
        if files.has_stet(target.root):
            return target.root, target
        found = found or target
    if found is None and folder_gone:
        raise HookInputError(
            "the hook's input names no cwd, and the folder the hook was started in no longer "
            "exists (it was removed): no repository to work in"
        )
    return (found.root, found) if found is not None else (None, None)


def _fallback_root(env: Mapping[str, str]) -> Path | None:
    """Where to log when the input named no repository: the project's or the process's."""
    from stet_lsp.hooks.repository import find_target

    def project() -> str:
        return env.get("CLAUDE_PROJECT_DIR", "")

    for candidate in (project, os.getcwd):
        try:
            folder = candidate()
            if folder:
                return find_target(folder).root
        except Exception:  # the process's folder may be gone: log to standard error
            continue
    return None


# -- session-start -----------------------------------------------------------------------------


def _session_start(target: Target, stdout: IO[str]) -> None:
    from stet_lsp.core.errors import TrackedSheetError
    from stet_lsp.core.operations import brief
    from stet_lsp.core.sheet import StyleSheet

    output: dict[str, Any]
    try:
        text = brief(StyleSheet(target))["text"]
    except StetError as refused:
        # Nothing of the sheet goes into the context; the person sees why (systemMessage):
        # a sheet git tracks, or one that cannot be read.
        files.log(target.root, "session-start", f"error: {refused}", own_words=True)
        why = str(refused) if isinstance(refused, TrackedSheetError) else f"no brief: {refused}"
        output = {"systemMessage": f"stet: {why}"}
    else:
        context = {"hookEventName": "SessionStart", "additionalContext": text}
        output = {"hookSpecificOutput": context}
    try:
        # ASCII (other characters as \u escapes): the harness reads UTF-8, and standard output
        # writes the locale's encoding (a pipe on Windows: the ANSI code page), which would
        # garble the brief, or fail on a character it lacks and give none.
        stdout.write(json.dumps(output) + "\n")
        stdout.flush()
    except BrokenPipeError:
        # The harness stopped reading. What is still buffered would fail again at the
        # interpreter's last flush and make the exit status 141: it goes nowhere instead.
        _discard_output(stdout)
        raise


def _discard_output(stream: IO[str]) -> None:
    """Point `stream`'s descriptor at the null device (Python's recipe for a closed pipe)."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
    except OSError:
        return
    try:
        os.dup2(null, stream.fileno())
    except (OSError, ValueError):  # no descriptor (a StringIO): nothing is flushed at exit
        pass
    finally:
        os.close(null)


# -- imports: the hook side --------------------------------------------------------------------


def _claude_import(
    root: Path,
    event: str,
    payload: Mapping[str, Any],
    options: Mapping[str, str],
    spawn: Spawner,
) -> None:
    session = _string(payload, "session_id")
    transcript = _string(payload, "transcript_path")
    if session is None:
        raise HookInputError("the hook's input has no session_id")
    if transcript is None:
        raise HookInputError(f"session {session}: the hook's input has no transcript_path")
    path = Path(transcript)
    if not path.is_absolute():
        raise HookInputError(f"session {session}: transcript_path {transcript!r} is not absolute")
    if not path.is_file():
        raise HookInputError(f"session {session}: no transcript at {transcript}")
    key = files.session_key(session)
    if event == "stop":
        every = _seconds(options.get("--every", str(STOP_EVERY_SECONDS)))
        since = files.seconds_since_stamp(root, key, "stop")
        if since is not None and 0 <= since < every:
            return  # throttled: the last Stop import of this session was too recent
        files.set_stamp(root, key, "stop")
    job = {"root": str(root), "session": session, "transcript": str(path)}
    spawn(root, event, job | {"harness": "claude-code"})


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise HookInputError(f"--every {text!r} is not a number of seconds") from None
    if not value >= 0:
        raise HookInputError(f"--every {text!r} is not a number of seconds")
    return value


def _codex_notify(root: Path, payload: Mapping[str, Any], spawn: Spawner) -> None:
    from stet_lsp.hooks.codex import consented

    if payload.get("type") != "agent-turn-complete":
        return
    if not consented(root):
        return  # this repository did not ask for Codex turns
    thread = _string(payload, "thread-id")
    if thread is None:
        raise HookInputError("the notification has no thread-id")
    spawn(root, "codex-notify", {"root": str(root), "session": thread, "harness": "codex"})


def start_worker(root: Path, event: str, job: Job) -> None:
    """The import of `job`, in a detached process of its own: Claude Code neither waits for
    it nor ends it when the session ends."""
    import subprocess

    command = [sys.executable, "-m", "stet_lsp", "hooks", "run", event, "--worker"]
    options: dict[str, Any] = {}
    if os.name == "nt":
        flags = ("DETACHED_PROCESS", "CREATE_NEW_PROCESS_GROUP", "CREATE_NO_WINDOW")
        options["creationflags"] = sum(getattr(subprocess, flag, 0) for flag in flags)
    else:
        options["start_new_session"] = True
    subprocess.Popen(
        # ASCII: a lone surrogate the harness's JSON wrote ("\ud800") is no argument a
        # process can be given, and the worker reads the same string back.
        [*command, json.dumps(job)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=root,
        close_fds=True,
        **options,
    )


# -- imports: the worker -----------------------------------------------------------------------


def _job(text: str) -> Job:
    try:
        job = json.loads(text)
    except ValueError:
        raise HookInputError("the worker's job is not JSON") from None
    if not isinstance(job, dict) or not all(
        isinstance(job.get(key), str) and job.get(key) for key in ("root", "session", "harness")
    ):
        raise HookInputError("the worker's job lacks root, session or harness")
    return job


def work(event: str, job: Job, env: Mapping[str, str], *, deadline: float = WORKER_SECONDS) -> None:
    """Import the job's session into the working trajectory of the repository at its root,
    holding the session's lock; log what happened. A Stop import skips when the session's
    lock is taken (the import running now, or the next, will see the transcript)."""
    import threading

    root = Path(job["root"])
    session = job["session"]
    started = time.monotonic()

    def give_up() -> None:
        files.log(root, event, f"session {session}: gave up after {deadline:.0f} s")
        os._exit(0)  # the writes are atomic: a cut-off import leaves the previous state

    watchdog = threading.Timer(deadline, give_up)
    watchdog.daemon = True
    watchdog.start()
    try:
        from stet_lsp.core.targets import resolve_target
        from stet_lsp.trajectory.continuation import CommittedAlready

        target = resolve_target(root)
        wait = 0.0 if event == "stop" else max(0.0, deadline - 5.0)
        with files.session_lock(target.root, files.session_key(session), wait) as held:
            if not held:
                files.log(root, event, f"session {session}: an import is running; skipped")
                return
            try:
                result = _import(target, job, env, started + deadline - 5.0)
            except CommittedAlready as error:
                files.log(root, event, f"session {session}: {error.short}; nothing since")
                return
        state = "imported" if result.changed else "unchanged"
        files.log(
            root,
            event,
            f"{job['harness']} session {session}: {state}, {result.events} events in "
            f"{result.folder}",
        )
        for warning in result.warnings:
            files.log(root, event, f"session {session}: warning: {warning}")
    except Exception as error:
        files.log(root, event, f"session {session}: error: {_describe(error)}")
    finally:
        watchdog.cancel()


def _import(target: Target, job: Job, env: Mapping[str, str], until: float) -> ImportResult:
    from stet_lsp.trajectory.importing import import_transcript

    if job["harness"] == "codex":
        path, format_name = _rollout(target.root, job["session"], env), "codex"
    elif job["harness"] == "claude-code" and isinstance(job.get("transcript"), str):
        path, format_name = Path(job["transcript"]), "claude-code"
    else:
        raise HookInputError(f"cannot import a {job['harness']} session")
    while True:
        try:
            return import_transcript(target, path, format_name=format_name)
        except StetError as error:
            # Another session's import holds the working trajectory: wait for it.
            if _LOCKED not in str(error) or time.monotonic() + _LOCK_RETRY_SECONDS > until:
                raise
            time.sleep(_LOCK_RETRY_SECONDS)


def _rollout(root: Path, thread: str, env: Mapping[str, str]) -> Path:
    """The rollout of Codex thread `thread` among this repository's sessions."""
    from stet_lsp.trajectory.sessions import find_sessions

    home = Path(env["HOME"]) if env.get("HOME") else None
    found = [
        s
        for s in find_sessions(root, home=home, env=env)
        if s.harness == "codex" and s.session_id.casefold() == thread.casefold()
    ]
    if not found:
        raise StetError(f"no Codex rollout of thread {thread} was found for {root}")
    return found[0].path
