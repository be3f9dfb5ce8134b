"""Margin notes over stdio: diagnostics, code actions, recording, for both client flavours."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import pytest_lsp
from lsp_harness import (
    CLIENTS,
    SERVER,
    buffers,
    diagnostics,
    edit_range,
    eventually,
    execute,
    open_file,
    start,
    text_edits,
    units,
)
from lsprotocol import types
from margin_lines import notes_among_repeated_lines
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from stet_lsp.core.anchors import locate
from stet_lsp.core.comments import SYNTAXES, CommentIndex
from stet_lsp.core.locking import held
from stet_lsp.core.margin import find_notes, line_after_removals
from stet_lsp.core.sheet import StyleSheet
from stet_lsp.core.targets import resolve_target


@pytest_lsp.fixture(config=SERVER, params=CLIENTS)
async def client(request: pytest.FixtureRequest, lsp_client: LanguageClient):  # type: ignore[no-untyped-def]
    await start(lsp_client, request.param)
    yield
    await lsp_client.shutdown_session()


SOURCE = """import requests

# stet: use the retry helper,
# it handles 429s
response = requests.get(url)
text = "# stet: not a note, a string"
total = compute()  # stet(ruled-out): caching here broke invalidation
"""


async def test_a_long_files_notes_take_the_edits_made_while_it_was_lexed(
    client: LanguageClient, root: Path
) -> None:
    # Over 5,000 lines, the comments are lexed in a worker: edits sent right after opening
    # (a note typed at the top, ten lines removed above the last note) are in the notes it
    # finds, a note inside a string is none, and a request waits for them.
    lines = ["x = 1"] * 30_000 + ['s = """', "# stet: inside a string", '"""'] + ["y = 2"] * 30_000
    path = root / "src" / "long.py"
    path.write_text("\n".join([*lines, "# stet: the last line's note", ""]))
    document = open_file(client, path)
    start = types.Position(line=0, character=0)
    edit_range(client, document, types.Range(start=start, end=start), "# stet: typed at the top\n")
    removed = types.Range(
        start=types.Position(line=11, character=0), end=types.Position(line=21, character=0)
    )
    edit_range(client, document, removed, "")
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=document),
            range=types.Range(start=start, end=start),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    assert "Record margin note to style sheet" in [action.title for action in actions or []]

    def notes(found: list[types.Diagnostic]) -> list[tuple[int, str]]:
        return [(d.range.start.line, d.message) for d in found if d.code == "margin-note"]

    async def both() -> list[tuple[int, str]] | None:
        found = notes(await diagnostics(client, document))
        return found if len(found) == 2 else None

    [top, last] = await eventually(both, timeout=30)
    assert top[0] == 0 and "typed at the top" in top[1]
    assert last[0] == 60_003 + 1 - 10 and "the last line's note" in last[1]


async def test_a_string_opened_above_a_long_files_notes_is_lexed_in_steps(
    client: LanguageClient, root: Path
) -> None:
    """A string opened at the top of 20,000 lines changes how each of them lexes: relexed a
    step at a time (the loop answers meanwhile), the note below is then inside the string,
    and out of it again once the opener is taken away."""
    path = root / "src" / "long.py"
    path.write_text("\n".join(["# stet: the top note", *["x = 1"] * 20_000, "# stet: the end", ""]))
    document = open_file(client, path)

    def notes(found: list[types.Diagnostic]) -> list[int]:
        return [d.range.start.line for d in found if d.code == "margin-note"]

    async def showing(expected: list[int]) -> list[int] | None:
        found = notes(await diagnostics(client, document))
        return found if found == expected else None

    await eventually(lambda: showing([0, 20_001]), timeout=30)
    opener = types.Position(line=1, character=0)
    edit_range(client, document, types.Range(start=opener, end=opener), 's = """\n')
    await eventually(lambda: showing([0]), timeout=30)
    after = types.Position(line=2, character=0)
    edit_range(client, document, types.Range(start=opener, end=after), "")
    await eventually(lambda: showing([0, 20_001]), timeout=30)


async def test_margin_notes_become_hints_and_are_recorded(
    client: LanguageClient, root: Path
) -> None:
    path = root / "src" / "fetch.py"
    path.write_text(SOURCE)
    document = open_file(client, path)

    found = await eventually(lambda: diagnostics(client, document))
    notes = [d for d in found if d.code == "margin-note"]
    assert [(d.range.start.line, d.severity) for d in notes] == [
        (2, types.DiagnosticSeverity.Hint),
        (6, types.DiagnosticSeverity.Hint),
    ]
    assert all(d.source == "stet" and d.message.startswith("margin note (") for d in notes)
    assert "use the retry helper, it handles 429s" in notes[0].message
    assert notes[0].data == {"type": "margin", "uri": document, "line": 2}

    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=document),
            range=notes[0].range,
            context=types.CodeActionContext(diagnostics=[notes[0]]),
        )
    )
    titles = [action.title for action in actions or []]
    assert titles == ["Record margin note to style sheet", "Record all margin notes in this file"]
    record = actions[0].command  # type: ignore[index,union-attr]
    result = await execute(client, record.command, **record.arguments[0])
    assert result["removed"] is True
    [entry] = result["recorded"]
    assert entry["kind"] == "markup" and entry["author"] == "human"
    assert entry["text"] == "use the retry helper, it handles 429s"
    # Anchored to the code under the comment, at its line once the comment is gone.
    assert entry["anchor"] == {
        "path": "src/fetch.py",
        "line": 3,
        "text": "response = requests.get(url)",
    }
    [edit] = client.applied_edits  # type: ignore[attr-defined]
    [change] = text_edits(edit, document)
    assert (change.range.start.line, change.range.end.line, change.new_text) == (2, 4, "")

    sheet = StyleSheet(resolve_target(root))
    assert [e.text for e in sheet.entries()] == ["use the retry helper, it handles 429s"]


async def test_incremental_edits_rescan_like_a_fresh_open(
    client: LanguageClient, root: Path
) -> None:
    lines = ["import os", "", "x = '🙂'  # plain", "y = 2", '"""', "docstring", '"""', "z = 3"]
    path = root / "src" / "edited.py"
    path.write_text("\n".join(lines))
    document = open_file(client, path)
    edits = [
        # (line, start, end line, end, new text) in str columns, converted to UTF-16 below
        (2, len("x = '🙂'  # "), 2, len(lines[2]), "stet: after an emoji"),
        (3, 0, 3, 0, "# stet(convention): inserted\n# over two lines\n"),
        (6, 0, 6, 3, ""),  # unopens the docstring: its closing quotes now open a string
        (9, 0, 9, 0, "# stet: inside that string\n"),  # so this is no note
        (8, 0, 8, 3, ""),  # until those quotes go too
    ]
    version = 1
    for line, column, end_line, end, text in edits:
        current = lines
        range_ = types.Range(
            start=types.Position(line=line, character=units(client, current[line][:column])),
            end=types.Position(line=end_line, character=units(client, current[end_line][:end])),
        )
        version += 1
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=document, version=version),
                content_changes=[types.TextDocumentContentChangePartial(range=range_, text=text)],
            )
        )
        merged = current[line][:column] + text + current[end_line][end:]
        lines = current[:line] + merged.split("\n") + current[end_line + 1 :]
    final = root / "src" / "fresh.py"
    final.write_text("\n".join(lines))
    fresh = open_file(client, final)

    def shape(found: list[types.Diagnostic]) -> list[tuple[int, int, int, int, str]]:
        return [
            (
                d.range.start.line,
                d.range.start.character,
                d.range.end.line,
                d.range.end.character,
                d.message,
            )
            for d in found
            if d.code == "margin-note"
        ]

    async def same() -> bool:
        edited = shape(await diagnostics(client, document))
        return bool(edited) and edited == shape(await diagnostics(client, fresh))

    await eventually(same)
    assert [d[4].split("): ", 1)[1] for d in shape(await diagnostics(client, document))] == [
        "after an emoji",
        "inserted over two lines",
        "inside that string",
    ]


async def test_recording_a_note_inside_a_doc_comment_keeps_the_comment_closed(
    client: LanguageClient, root: Path
) -> None:
    path = root / "src" / "size.c"
    path.write_text(
        "#include <stddef.h>\n"
        "\n"
        "/**\n"
        " * Returns the size.\n"
        " * stet: use the cached size\n"
        " */\n"
        "size_t size(void);\n"
        "/*\n"
        " * Frees it.\n"
        " * stet(convention): check for NULL first */\n"
        "void release(void *p);\n"
    )
    document = open_file(client, path, "c")
    found = await eventually(lambda: diagnostics(client, document))
    assert [d.range.start.line for d in found if d.code == "margin-note"] == [4, 9]

    first = await execute(client, "stet.margin.record", uri=document, line=4)
    assert first["removed"] is True
    assert [entry["anchor"] for entry in first["recorded"]] == [
        {"path": "src/size.c", "line": 6, "text": "size_t size(void);"}
    ]
    expected = (
        "#include <stddef.h>\n"
        "\n"
        "/**\n"
        " * Returns the size.\n"
        " */\n"
        "size_t size(void);\n"
        "/*\n"
        " * Frees it.\n"
        " * stet(convention): check for NULL first */\n"
        "void release(void *p);\n"
    )
    assert buffers(client)[document].text == expected

    async def rescanned() -> bool:
        notes = [d for d in await diagnostics(client, document) if d.code == "margin-note"]
        return [d.range.start.line for d in notes] == [8]

    await eventually(rescanned)
    second = await execute(client, "stet.margin.record", uri=document, line=8)
    assert second["removed"] is True
    assert [entry["anchor"] for entry in second["recorded"]] == [
        {"path": "src/size.c", "line": 10, "text": "void release(void *p);"}
    ]
    assert buffers(client)[document].text == expected.replace(
        " * stet(convention): check for NULL first */\n", " */\n"
    )
    listed = await execute(client, "stet.note.list", uri=document)
    assert sorted(
        (e["anchor"]["line"], e["placement"]["line"], e["text"]) for e in listed["entries"]
    ) == [(6, 6, "use the cached size"), (10, 10, "check for NULL first")]


async def test_recording_all_notes_anchors_each_past_every_removal_above_it(
    client: LanguageClient, root: Path
) -> None:
    path = root / "src" / "batch.py"
    path.write_text(
        "# stet: one\n"
        "first = 1\n"
        "# stet: two,\n"
        "# over two lines\n"
        "second = 2\n"
        "# stet: three\n"
        "result = compute()\n"
    )
    document = open_file(client, path)
    found = await eventually(lambda: diagnostics(client, document))
    assert [d.range.start.line for d in found if d.code == "margin-note"] == [0, 2, 5]

    answer = await execute(client, "stet.margin.record", uri=document, all=True)
    assert answer["removed"] is True
    assert buffers(client)[document].text == "first = 1\nsecond = 2\nresult = compute()\n"
    assert client.edit_labels[-1] == "Record 3 margin notes"  # type: ignore[attr-defined]
    assert [(e["text"], e["anchor"]) for e in answer["recorded"]] == [
        ("one", {"path": "src/batch.py", "line": 1, "text": "first = 1"}),
        ("two, over two lines", {"path": "src/batch.py", "line": 2, "text": "second = 2"}),
        ("three", {"path": "src/batch.py", "line": 3, "text": "result = compute()"}),
    ]
    stored = {e.text: e.anchor.line for e in StyleSheet(resolve_target(root)).entries()}
    assert stored == {"one": 1, "two, over two lines": 2, "three": 3}


async def test_recording_all_of_many_notes_among_repeated_lines_anchors_each_as_alone(
    client: LanguageClient, root: Path
) -> None:
    """A file of repeated lines with a hundred notes of every shape (on their own lines, over
    two lines, after code) recorded at once: each entry is anchored where moving its note's
    anchor past every removal above it puts it, in the text the removals leave, and is shown
    on that line."""
    lines = notes_among_repeated_lines(600)
    path = root / "src" / "handlers.py"
    path.write_text("\n".join(lines) + "\n")
    notes = find_notes(lines, CommentIndex(lines, SYNTAXES["python"]))
    assert len(notes) > 100
    removals = [note.removal for note in notes]
    left = list(lines)
    for note in sorted(notes, key=lambda note: note.line, reverse=True):
        line, column, end_line, end = note.removal
        left[line : end_line + 1] = [left[line][:column] + left[end_line][end:]]
    anchors = [line_after_removals(note.anchor_line, removals) for note in notes]
    expected = [
        (note.text, line + 1, left[line].strip()) for note, line in zip(notes, anchors, strict=True)
    ]
    document = open_file(client, path)
    await eventually(lambda: diagnostics(client, document))

    answer = await execute(client, "stet.margin.record", uri=document, all=True)

    assert answer["removed"] is True
    assert buffers(client)[document].text == "\n".join(left) + "\n"
    recorded = [(e["text"], e["anchor"]["line"], e["anchor"]["text"]) for e in answer["recorded"]]
    assert recorded == expected
    stored = StyleSheet(resolve_target(root)).entries()  # in the sheet, by kind
    assert sorted((e.text, e.anchor.line, e.anchor.text) for e in stored if e.anchor) == sorted(
        expected
    )

    async def shown() -> list[int] | None:
        found = await diagnostics(client, document)
        entries = [d for d in found if isinstance(d.data, dict) and d.data["type"] == "entry"]
        lines = sorted(d.range.start.line for d in entries)
        return lines if len(lines) == len(expected) else None

    assert await eventually(shown, timeout=15) == sorted(line - 1 for _, line, _ in expected)


async def test_a_note_at_the_end_of_a_line_anchors_to_the_line_without_it(
    client: LanguageClient, root: Path
) -> None:
    """Recording removes a note written after code on its line: the anchor is that line as it
    reads once the note is gone, so the entry is found there (it was anchored to the text
    with the comment, and lost as soon as the comment went)."""
    path = root / "src" / "double.py"
    path.write_text("def g(x):\n    return x * 2  # stet: double, not square\n")
    document = open_file(client, path)
    await eventually(lambda: diagnostics(client, document))

    answer = await execute(client, "stet.margin.record", uri=document, line=1)
    assert answer["removed"] is True
    assert buffers(client)[document].text == "def g(x):\n    return x * 2\n"
    assert client.edit_labels[-1] == "Record margin note"  # type: ignore[attr-defined]
    [entry] = answer["recorded"]
    assert entry["anchor"] == {"path": "src/double.py", "line": 2, "text": "return x * 2"}
    path.write_text(buffers(client)[document].text)
    [stored] = StyleSheet(resolve_target(root)).entries()
    assert locate(stored.anchor, path.read_text().split("\n")) == 2


async def test_recording_where_there_is_no_margin_note_says_where(
    client: LanguageClient, root: Path
) -> None:
    """A file without margin notes ("Record all margin notes in this file", the editors'
    record-all command) names the file and what a note looks like; a line without one, the
    line (1-based, as editors show it); both with `data.reason` "no-margin-note", for a
    client to say it as what it is, not as a failure."""
    path = root / "src" / "plain.py"
    path.write_text("x = 1\ny = 2\n")
    document = open_file(client, path)
    for arguments, message in [
        ({"all": True}, "src/plain.py holds no margin note to record (a comment holding 'stet:')"),
        (
            {"line": 1},
            "there is no margin note on line 2 to record (a comment holding 'stet:'; the "
            "whole file's: record all)",
        ),
    ]:
        with pytest.raises(JsonRpcException) as refused:
            await client.workspace_execute_command_async(
                types.ExecuteCommandParams(
                    command="stet.margin.record", arguments=[{"uri": document, **arguments}]
                )
            )
        assert refused.value.message == message
        assert refused.value.data == {"reason": "no-margin-note"}


async def test_a_note_recorded_while_typed_under_a_repeated_version_is_left_in_place(
    client: LanguageClient, root: Path
) -> None:
    """The text changed while the note was written to the sheet (held up by the sheet's
    lock), under the same version the client sent before (a client may repeat one): the
    removal computed for the old text is not sent, so the line typed above is not cut."""
    path = root / "src" / "fetch.py"
    path.write_text(SOURCE)
    document = open_file(client, path)
    await eventually(lambda: diagnostics(client, document))
    sheet = StyleSheet(resolve_target(root))
    sheet.add("before")  # the sheet and its lock file exist
    lock = sheet.path.with_name(sheet.path.name + ".lock")
    with held(lock, root, 0) as acquired:
        assert acquired
        recording = asyncio.ensure_future(
            execute(client, "stet.margin.record", uri=document, line=2)
        )
        await asyncio.sleep(0.5)  # the write waits for the lock
        typed = "# typed while it waited\n" + SOURCE
        buffers(client)[document].text = typed
        top = types.Position(line=0, character=0)
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=document, version=1),
                content_changes=[
                    types.TextDocumentContentChangePartial(
                        range=types.Range(start=top, end=top), text="# typed while it waited\n"
                    )
                ],
            )
        )
        await asyncio.sleep(0.3)
    result = await recording
    assert [entry["text"] for entry in result["recorded"]] == [
        "use the retry helper, it handles 429s"
    ]
    assert result["removed"] is False
    assert client.applied_edits == []  # type: ignore[attr-defined]
    assert buffers(client)[document].text == typed
