"""What the server writes (an import, a verdict, a graduation, the capstone) passes the gate
with the repository's `.stet/gate.toml` and the editor's `stet.gate.*` settings added to it;
a malformed file fails the request, names the file and changes nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pygit2
import pytest
import pytest_lsp
from lsp_harness import SERVER, execute, open_file, start, uri
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from stet_lsp.core.sheet import StyleSheet
from stet_lsp.core.targets import resolve_target
from stet_lsp.trajectory.store import working_folder

ENV_VALUE = "wolfgang1987"
BARE = "Kx9vQ2mZ7pL4wR8tN3bY6cF1hJ5dG0sA"
SECRETS = (ENV_VALUE, BARE)
EDITOR = {"gate": {"envNames": ["ACME_CONFIG"]}}


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient):  # type: ignore[no-untyped-def]
    lsp_client.set_configuration(EDITOR, section="stet")
    await start(lsp_client, "visual-studio-code", options=EDITOR)
    yield
    await lsp_client.shutdown_session()


def commit_settings(root: Path, text: str) -> None:
    repository = pygit2.Repository(str(root))
    repository.config["user.name"] = "Reviewer"
    repository.config["user.email"] = "reviewer@example.invalid"
    path = root / ".stet" / "gate.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    index = repository.index
    index.read()
    index.add(".stet/gate.toml")
    index.write()
    signature = repository.default_signature
    tree = index.write_tree()
    repository.create_commit(
        "HEAD", signature, signature, "gate settings", tree, [repository.head.target]
    )


def transcript(root: Path, tmp_path: Path) -> Path:
    """A Claude Code session: the value in a tool's output, the random one in the reply."""
    messages: list[tuple[str, Any]] = [
        ("user", "Deploy the service with the ACME settings"),
        (
            "assistant",
            [
                {
                    "type": "tool_use",
                    "id": "toolu_1",
                    "name": "Bash",
                    "input": {"command": "cat deploy.env"},
                }
            ],
        ),
        (
            "user",
            [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_1",
                    "content": f"ACME_CONFIG={ENV_VALUE}\n",
                }
            ],
        ),
        ("assistant", [{"type": "text", "text": f"Deployed. The service answered {BARE}."}]),
    ]
    records = []
    parent = None
    for number, (role, content) in enumerate(messages, 1):
        message: dict[str, Any] = {"role": role, "content": content}
        if role == "assistant":
            message |= {
                "model": "claude-sonnet-4-5-20250929",
                "id": f"msg_{number:04d}",
                "type": "message",
                "usage": {"input_tokens": 10, "output_tokens": 2},
            }
        uuid = f"cccccccc-{number:04d}"
        records.append(
            {
                "parentUuid": parent,
                "isSidechain": False,
                "userType": "external",
                "cwd": str(root),
                "sessionId": "cccccccc-1111-4222-8333-444455556666",
                "version": "2.1.12",
                "gitBranch": "main",
                "type": role,
                "message": message,
                "uuid": uuid,
                "timestamp": f"2026-03-01T09:00:{number:02d}.000Z",
            }
        )
        parent = uuid
    path = tmp_path / "session.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path


def clean(text: str) -> bool:
    return not any(secret in text for secret in SECRETS)


async def test_the_servers_writes_use_the_repository_and_the_editor_settings(
    client: LanguageClient, root: Path, tmp_path: Path
) -> None:
    """The repository asks for strict mode, the editor adds ACME_CONFIG: both apply."""
    commit_settings(root, "strict = true\n")
    imported = await execute(
        client, "stet.trajectory.import", uri=uri(root), path=str(transcript(root, tmp_path))
    )
    assert imported["redaction"]["env-value"] == 1
    assert imported["redaction"]["high-entropy-string"] >= 1
    folder = working_folder(resolve_target(root))
    for name in ("events.jsonl", "narration.md"):
        assert clean((folder.path / name).read_text(encoding="utf-8")), name

    marked = await execute(
        client, "stet.step.mark", uri=uri(root), step=2, verdict="note", text=f"saw {BARE}"
    )
    assert clean(json.dumps(marked))

    sheet = StyleSheet(resolve_target(root))
    entry = sheet.add(f"ACME_CONFIG={ENV_VALUE} deploys staging", kind="convention")
    document = open_file(client, sheet.path, "markdown")
    line = next(
        n for n, text in enumerate(sheet.path.read_text().split("\n")) if f"id={entry.id}" in text
    )
    here = types.Position(line=line, character=0)
    found = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=document),
            range=types.Range(start=here, end=here),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    action = next(
        a for a in found or [] if isinstance(a, types.CodeAction) and "as a skill" in a.title
    )
    assert action.command is not None and action.command.arguments is not None
    arguments: dict[str, Any] = dict(action.command.arguments[0])
    # A client that asks for the name offers the action's proposal and sends it back.
    arguments["skill"] = arguments["proposedName"]
    asked = await execute(client, "stet.graduate.proposal", uri=uri(root), id=entry.id)
    assert clean(asked["proposed_name"])
    graduated = await execute(client, action.command.command, **arguments)
    skill = graduated["skill"]
    assert clean(skill["name"]) and skill["name"] == asked["proposed_name"]
    assert clean((root / skill["path"]).read_text(encoding="utf-8"))

    done = await execute(client, "stet.capstone", uri=uri(root))
    repository = pygit2.Repository(str(root))
    commit = repository[repository.head.target]
    assert str(commit.id) == done["commit"]
    for change in done["paths"]:
        blob = repository[commit.tree[change["path"]].id]
        assert isinstance(blob, pygit2.Blob)
        assert clean(bytes(blob.data).decode("utf-8")), change["path"]


async def test_a_malformed_settings_file_fails_the_request_and_changes_nothing(
    client: LanguageClient, root: Path, tmp_path: Path
) -> None:
    commit_settings(root, "strict = 'yes'\n")
    with pytest.raises(JsonRpcException, match=r"\.stet/gate\.toml: `strict` must be"):
        await execute(
            client, "stet.trajectory.import", uri=uri(root), path=str(transcript(root, tmp_path))
        )
    assert not working_folder(resolve_target(root)).path.exists()
    with pytest.raises(JsonRpcException, match=r"\.stet/gate\.toml"):
        await execute(client, "stet.capstone", uri=uri(root))
    listed = await execute(client, "stet.trajectory.list", uri=uri(root))
    assert listed == {"version": 1, "trajectories": [], "problems": []}
