"""Entries anchored in an open document follow its edits: moved with the lines above them,
found by similarity when their line is edited, lost when it goes, and found again when
their text is typed back, always where `stet check` (`anchors.locate`) places them."""

from __future__ import annotations

from pathlib import Path

import pytest
import pytest_lsp
from hypothesis import given
from hypothesis import strategies as st
from lsp_harness import (
    CLIENTS,
    SERVER,
    buffers,
    diagnostics,
    edit_range,
    eventually,
    open_file,
    start,
)
from lsprotocol import types
from pytest_lsp import LanguageClient

from stet_lsp.core.anchors import locate
from stet_lsp.core.lines import split_lines
from stet_lsp.core.model import Anchor
from stet_lsp.core.sheet import StyleSheet
from stet_lsp.core.targets import resolve_target
from stet_lsp.server.features.entries import SEARCH_ON_LOOP, changed

TOTAL = "total = compute_the_total(items, tax_rate)"
RENDER = "def render_the_invoice(customer, invoice):"
CACHE = "cache = build_the_lookup_cache(entries, size)"


@pytest_lsp.fixture(config=SERVER, params=CLIENTS)
async def client(request: pytest.FixtureRequest, lsp_client: LanguageClient):  # type: ignore[no-untyped-def]
    await start(lsp_client, request.param)
    yield
    await lsp_client.shutdown_session()


def at(line: int, character: int = 0) -> types.Position:
    return types.Position(line=line, character=character)


def replace_line(client: LanguageClient, document: str, line: int, text: str) -> None:
    old = split_lines(buffers(client)[document].text)[line]
    edit_range(client, document, types.Range(start=at(line), end=at(line, len(old))), text)


@pytest.mark.parametrize(
    "size", [40, 3 * SEARCH_ON_LOOP], ids=["searched on the loop", "searched in a worker"]
)
async def test_entries_follow_edits_and_are_found_again(
    client: LanguageClient, root: Path, size: int
) -> None:
    lines = [f"n{number}" for number in range(size)]  # short: nothing like the anchored lines
    lines[9], lines[24] = TOTAL, RENDER
    path = root / "src" / "big.py"
    path.write_text("\n".join(lines) + "\n")
    sheet = StyleSheet(resolve_target(root))
    anchors = {
        "total": Anchor("src/big.py", 10, TOTAL),
        "moved": Anchor("src/big.py", 20, RENDER),  # its line is 5 lines further down
        "lost": Anchor("src/big.py", 15, CACHE),  # no line is like it
    }
    ids = {sheet.add(name, anchor=anchor).id: name for name, anchor in anchors.items()}
    document = open_file(client, path)

    async def shown() -> dict[str, int]:
        # The outline waits for the server's background work on the document.
        await client.text_document_document_symbol_async(
            types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier(uri=document))
        )
        return {
            ids[found.data["entryId"]]: found.range.start.line
            for found in await diagnostics(client, document)
            if isinstance(found.data, dict) and found.data.get("type") == "entry"
        }

    async def placed(expected: dict[str, int]) -> None:
        """Shown at `expected` (0-based), which is where `stet check` places them."""
        text = split_lines(buffers(client)[document].text)
        located = {name: locate(anchor, text) for name, anchor in anchors.items()}
        assert {name: line - 1 for name, line in located.items() if line} == expected
        await eventually(lambda: _equal(shown(), expected), timeout=10)

    await placed({"total": 9, "moved": 24})
    edit_range(client, document, types.Range(start=at(0), end=at(0)), "a\nb\nc\n")
    await placed({"total": 12, "moved": 27})
    replace_line(client, document, 12, TOTAL.replace("tax_rate", "tax_rates"))
    await placed({"total": 12, "moved": 27})  # found by similarity
    edit_range(client, document, types.Range(start=at(27), end=at(28)), "")
    await placed({"total": 12})  # its line is gone
    replace_line(client, document, size - 10, CACHE)
    await placed({"total": 12, "lost": size - 10})  # typed back
    replace_line(client, document, 5, RENDER)
    await placed({"total": 12, "lost": size - 10, "moved": 5})
    # Edits sent together, while the server may still be searching.
    replace_line(client, document, 5, "gone again")
    edit_range(client, document, types.Range(start=at(0), end=at(0)), "d\n")
    replace_line(client, document, 30, RENDER.replace("invoice)", "invoices)"))
    edit_range(client, document, types.Range(start=at(13), end=at(14)), "")  # the total's line
    await placed({"lost": size - 10, "moved": 29})


async def _equal(shown: object, expected: dict[str, int]) -> bool:
    return await shown == expected  # type: ignore[misc]


@given(
    size=st.integers(0, 1500),
    start=st.integers(0, 1500),
    removed=st.integers(0, 700),
    added=st.lists(st.sampled_from(["a", "b", "", "line 7"]), max_size=700),
)
def test_the_edit_found_between_two_versions_turns_one_into_the_other(
    size: int, start: int, removed: int, added: list[str]
) -> None:
    old = [f"line {number % 50}" for number in range(size)]
    new = old[:start] + added + old[start + removed :]
    edit = changed(old, new)
    if edit is None:
        assert old == new
        return
    first, gone, put = edit
    assert old[:first] + put + old[first + gone :] == new
    # The smallest such edit: its first and last lines differ.
    assert first == min(len(old), len(new)) or old[first] != new[first]
    last_old, last_new = first + gone - 1, first + len(put) - 1
    assert last_old < first or last_new < first or old[last_old] != new[last_new]
