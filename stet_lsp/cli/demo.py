"""`stet demo`: the flows that exist, walked through in a throwaway repository."""

from __future__ import annotations

import argparse
import json
import random
import string
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pygit2

    from stet_lsp.core.targets import Target

_SERVICE = '''"""Payments service."""

import requests


def charge(customer, amount):
    response = requests.post("https://payments.invalid/charge", json={"amount": amount})
    return response.json()
'''


def register(commands: Any) -> None:
    demo = commands.add_parser("demo", help="walk through Stet in a throwaway repository")
    demo.add_argument("--keep", action="store_true", help="keep the repository afterwards")
    demo.add_argument(
        "--transcript",
        metavar="FILE",
        help="an agent transcript to import and show (default: a short Claude Code session)",
    )
    demo.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    transcript = _checked_transcript(args.transcript) if args.transcript else None
    if args.keep:
        folder = Path(tempfile.mkdtemp(prefix="stet-demo-"))
        _walk(folder, transcript)
        print(f"\nThe repository is kept at {folder}")
    else:
        with tempfile.TemporaryDirectory(prefix="stet-demo-") as name:
            _walk(Path(name), transcript)
    return 0


def _checked_transcript(name: str) -> Path:
    """The transcript to import, checked before the walk: a file that cannot be imported
    fails at once rather than after every other step."""
    from stet_lsp.trajectory.importers import detect
    from stet_lsp.trajectory.importing import transcript_source

    transcript = transcript_source(Path(name).resolve())
    detect(transcript)
    return transcript


def _step(title: str) -> None:
    print(f"\n== {title}")


def _walk(folder: Path, transcript: Path | None) -> None:
    # Loaded only when run: registering `demo` must not load pygit2 or the gate.
    import pygit2

    from stet_lsp.check import check
    from stet_lsp.core.anchors import make_anchor
    from stet_lsp.core.errors import StetError
    from stet_lsp.core.sheet import StyleSheet
    from stet_lsp.core.targets import resolve_target
    from stet_lsp.gate import redact_text, scan_text

    _step(f"A repository on branch feature/payments-retry ({folder})")
    repo = pygit2.init_repository(str(folder), initial_head="feature/payments-retry")
    service = folder / "payments.py"
    service.write_text(_SERVICE, encoding="utf-8")
    _commit(repo, "payments.py", "Add the payments service")
    target = resolve_target(folder)
    sheet = StyleSheet(target)
    print(f"target: {target.label}; style sheet: {target.sheet_path.relative_to(folder)}")

    _step("The agent records what it learned (stet note add --author agent …)")
    learned = sheet.add(
        "HTTP calls go through payments.http.session(), which retries and times out.",
        kind="convention",
        author="agent",
    )
    ruled_out = sheet.add(
        "Tried urllib3's Retry on requests directly: it retries POSTs, double-charging.",
        kind="ruled-out",
        author="agent",
    )
    print(f"agent entries {learned.id} (convention) and {ruled_out.id} (ruled-out)")

    _step("The reviewer marks up the galley at payments.py:7 (stet note add --file --line)")
    markup = sheet.add(
        "No bare requests.post here: use the session helper, it has the idempotency key.",
        kind="markup",
        author="human",
        anchor=make_anchor(folder, service, 7),
    )
    print(f"human entry {markup.id} anchored to payments.py:7")

    _step("Someone adds six lines above the anchored line")
    service.write_text(
        _SERVICE.replace('"""Payments service."""\n', '"""Payments service."""\n' + "#\n" * 6),
        encoding="utf-8",
    )
    line = sheet.current_lines([markup])[markup.id]
    print(f"{markup.id} is found again at payments.py:{line} (it was anchored at line 7)")

    _step("The style sheet is plain Markdown, readable and editable by hand")
    print(target.sheet_path.read_text(encoding="utf-8"), end="")

    _step("The brief for the next agent run (stet brief)")
    print(sheet.brief().text, end="")

    _step("A reviewer leaves a margin note in the code; stet check shows what an editor would")
    service.write_text(
        service.read_text(encoding="utf-8").replace(
            "def charge(",
            "# stet(convention): amounts are integer cents, never floats\ndef charge(",
        ),
        encoding="utf-8",
    )
    for shown in check(repo, target):
        print(shown)
    print("(in the editor: a hint with the code action 'Record margin note to style sheet')")

    _step("A secret pasted into the sheet is caught by the redaction gate (stet gate scan)")
    token = "ghp_" + "".join(random.Random(7).choices(string.ascii_letters + string.digits, k=36))
    secret = sheet.add(
        f"The CI token is {token}; do not log it.", kind="clarification", author="agent"
    )
    for finding in scan_text(target.sheet_path.read_text(encoding="utf-8")):
        print(
            f"line {finding.line + 1}, columns {finding.column + 1}-{finding.end_column}: "
            f"{finding.rule} ({finding.preview}); redacted at graduation"
        )
    redacted = redact_text(target.sheet_path.read_text(encoding="utf-8")).text
    print(next(line for line in redacted.splitlines() if "CI token" in line).split(" <!--")[0])

    _step("Pause without forgetting (stet pause; stet resume)")
    sheet.pause()
    try:
        sheet.add("This should not be recorded.", author="agent")
    except StetError as error:
        print(f"refused: {error}")
    sheet.resume()
    print(f"resumed; still {len(sheet.entries())} entries")

    _trajectory(folder, target, transcript)
    _graduate_and_commit(repo, target, learned.id, ruled_out.id, secret.id)


def _trajectory(folder: Path, target: Target, transcript: Path | None) -> None:
    from stet_lsp.trajectory.importing import import_transcript
    from stet_lsp.trajectory.outline import summary
    from stet_lsp.trajectory.store import working_folder

    _step("The agent's run becomes a trajectory (stet trajectory import; stet trajectory show)")
    with tempfile.TemporaryDirectory(prefix="stet-demo-session-") as scratch:
        if transcript is None:
            transcript = Path(scratch) / "session.jsonl"
            transcript.write_text(_claude_session(folder), encoding="utf-8")
        result = import_transcript(target, transcript)
    redacted = ", ".join(f"{rule} {n}" for rule, n in result.redaction.items()) or "nothing"
    print(f"{result.format} session {result.session}: {result.events} events; redacted {redacted}")
    trajectory = working_folder(target)
    for event in trajectory.read_events()[:40]:
        agent = f"  [{event.agent}]" if event.agent else ""
        print(f"{event.step:>4}  {event.kind:<13} {summary(event, 80)}{agent}")
    print(f"(in {trajectory.relative}: events.jsonl, meta.json, narration.md)")


def _graduate_and_commit(
    repo: pygit2.Repository, target: Target, learned: str, ruled_out: str, secret: str
) -> None:
    from stet_lsp.gate import gitfiles, scan_text
    from stet_lsp.trajectory.capstone import capstone
    from stet_lsp.trajectory.graduation import graduate

    _step("Graduation: the reviewer decides what becomes durable (stet graduate)")
    skill = graduate(target, learned, "skill")["skill"]
    print(f"{learned} -> skill {skill['name']} ({skill['path']}, staged)")
    for entry_id in (ruled_out, secret):
        graduate(target, entry_id, "trajectory")
        print(f"{entry_id} -> a note in the working trajectory (through the gate)")

    _step("The capstone: the trajectory as the branch's last commit (stet capstone)")
    repo.config["user.name"] = "Stet demo"
    repo.config["user.email"] = "demo@stet.invalid"
    result = capstone(target)
    print(f"commit {str(result.commit)[:12]} on {result.branch}: {result.message.splitlines()[0]}")
    for change in result.paths:
        print(f"  {change.status} {change.path}")

    _step("The gate in CI (stet gate check): committed .stet/ files hold no secret")
    artifacts = gitfiles.committed_and_staged(repo)
    found = [(a.label, f) for a in artifacts for f in scan_text(a.data.decode(), path=a.path)]
    print(f"{len(artifacts)} artifact(s) checked, {len(found)} finding(s)")


def _claude_session(folder: Path) -> str:
    """A short Claude Code session in this repository: a request, a read whose output holds
    an access key, an edit, and the answer."""
    original = (folder / "payments.py").read_text(encoding="utf-8")
    old = "    response = requests.post("
    new = "    response = http.session().post("
    line = next(n for n, text in enumerate(original.splitlines(), 1) if text.startswith(old))
    path = str(folder / "payments.py")
    key = "AKIA" + "".join(random.Random(9).choices(string.ascii_uppercase + string.digits, k=16))
    base = {
        "sessionId": "5f0c1b9e-7d2a-4c1e-9a43-2b8f0d6e1a77",
        "version": "2.1.12",
        "gitBranch": "feature/payments-retry",
        "cwd": str(folder),
        "userType": "external",
        "isSidechain": False,
    }
    usage = {"input_tokens": 1200, "output_tokens": 180, "cache_read_input_tokens": 9000}
    records: list[dict[str, Any]] = [
        {
            "type": "user",
            "message": {"role": "user", "content": "Make charge() use the session helper."},
        },
        {
            "type": "assistant",
            "message": {
                "id": "msg_01",
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": [
                    {"type": "thinking", "thinking": "Read the service first.", "signature": "s"},
                    {
                        "type": "tool_use",
                        "id": "toolu_01",
                        "name": "Read",
                        "input": {"file_path": path},
                    },
                ],
                "usage": usage,
            },
        },
        {
            "type": "user",
            "message": {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_01",
                        "content": original + f"\n# debug: AWS_ACCESS_KEY_ID={key}\n",
                    }
                ],
            },
        },
        {
            "type": "assistant",
            "message": {
                "id": "msg_02",
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "toolu_02",
                        "name": "Edit",
                        "input": {"file_path": path, "old_string": old, "new_string": new},
                    }
                ],
                "usage": usage,
            },
        },
        {
            "type": "user",
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "toolu_02", "content": "ok"}],
            },
            "toolUseResult": {
                "filePath": path,
                "oldString": old,
                "newString": new,
                "originalFile": original,
                "structuredPatch": [
                    {
                        "oldStart": line,
                        "oldLines": 1,
                        "newStart": line,
                        "newLines": 1,
                        "lines": [
                            f"-{original.splitlines()[line - 1]}",
                            f"+{new}{original.splitlines()[line - 1][len(old) :]}",
                        ],
                    }
                ],
            },
        },
        {
            "type": "assistant",
            "message": {
                "id": "msg_03",
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": [{"type": "text", "text": "charge() now posts through http.session()."}],
                "usage": usage,
            },
        },
    ]
    lines = []
    for number, record in enumerate(records):
        stamp = f"2026-01-22T10:00:{number * 7:02d}.000Z"
        uuid = f"00000000-0000-4000-8000-{number:012d}"
        parent = f"00000000-0000-4000-8000-{number - 1:012d}" if number else None
        lines.append(
            json.dumps({**base, **record, "uuid": uuid, "parentUuid": parent, "timestamp": stamp})
        )
    return "\n".join(lines) + "\n"


def _commit(repo: pygit2.Repository, path: str, message: str) -> None:
    import pygit2

    repo.index.add(path)
    repo.index.write()
    tree = repo.index.write_tree()
    signature = pygit2.Signature("Stet demo", "demo@stet.invalid")
    parents = [] if repo.head_is_unborn else [repo.head.target]
    repo.create_commit("HEAD", signature, signature, message, tree, parents)
