"""An anchor kept in step with a document's edits (`AnchorTrack`, as the language server
keeps it) is placed exactly where `locate` (as `stet check` places it) finds it."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from stet_lsp.core.anchors import AnchorTrack, exact_lines, exact_lines_of, locate, similar_lines
from stet_lsp.core.model import Anchor

TEXT = "total = compute_the_total(items, tax)"
# Lines that are the anchored text (rarely: else it would seldom be lost), like it (found
# by similarity, with different ratios), or unlike it.
EXACT = [TEXT, "    " + TEXT]
SIMILAR = [
    "total = compute_the_total(items, taxes)",
    "total = compute_the_totals(item, tax)",
    "totals = compute_a_total(items)",
    "total = compute_the_total(items, tax=0)",
]
OTHER = ["return None", "", "x = 1", "def compute_the_total(items, tax):", "short"]
LINES = EXACT + 4 * SIMILAR + 4 * OTHER
ANCHORS = [
    Anchor("a.py", 5, TEXT),
    Anchor("a.py", 1, TEXT),
    Anchor("a.py", 30, TEXT),
    Anchor("a.py", 3, "short"),
    Anchor("a.py", 4, "return None"),
    Anchor("a.py", 2, ""),
    Anchor("a.py", 40, ""),
    Anchor("a.py", 6, "no line is anything like this one at all"),
]

line_texts = st.lists(st.sampled_from(LINES), max_size=12)
edits = st.lists(st.tuples(st.integers(0, 40), st.integers(0, 4), line_texts), max_size=8)


def replay(
    track: AnchorTrack,
    lines: list[str],
    changes: list[tuple[int, int, list[str]]],
    searching: random.Random,
) -> None:
    """Apply each change to `lines` and `track`, sometimes without searching the added lines
    (the similar lines are then searched again, as the server does in a worker), checking
    the track against `locate` after each."""
    pending: list[tuple[int, int, list[str]]] | None = None
    snapshot: list[str] = []
    for start, removed, added in changes:
        start = min(start, len(lines))
        removed = min(removed, len(lines) - start)
        lines[start : start + removed] = added
        track.edit(start, removed, added, search=searching.random() < 0.7)
        if pending is not None:
            pending.append((start, removed, added))
        if not track.known and pending is None and searching.random() < 0.5:
            snapshot, pending = list(lines), []  # a search starts on this version
        elif pending is not None and searching.random() < 0.5:
            track.adopt(similar_lines(track.anchor.text, snapshot), pending)
            pending = None
        if track.known:
            assert track.line(len(lines)) == locate(track.anchor, lines)
    if not track.known:
        track.adopt(similar_lines(track.anchor.text, lines), [])
    assert track.known
    assert track.line(len(lines)) == locate(track.anchor, lines)


@settings(max_examples=300, deadline=None)
@given(start=line_texts, changes=edits, seed=st.integers(0, 1000))
def test_a_tracked_anchor_is_placed_as_locate_places_it(
    start: list[str], changes: list[tuple[int, int, list[str]]], seed: int
) -> None:
    for anchor in ANCHORS:
        lines = list(start)
        track = AnchorTrack(anchor, lines)
        if not track.known:
            track.adopt(similar_lines(anchor.text, lines), [])
        assert track.line(len(lines)) == locate(anchor, lines)
        replay(track, lines, changes, random.Random(seed))


def test_a_lost_anchor_is_found_again_when_its_text_is_typed_back() -> None:
    lines = [f"line_{n} = {n}" for n in range(100)]
    lines[50] = TEXT
    anchor = Anchor("a.py", 51, TEXT)
    track = AnchorTrack(anchor, lines)
    assert track.line(len(lines)) == 51
    lines[50:51] = ["something else entirely, nothing like it"]
    track.edit(50, 1, lines[50:51])
    assert not track.known and track.line(len(lines)) is None
    track.adopt(similar_lines(TEXT, lines), [])
    assert track.line(len(lines)) is None  # lost
    lines[10:10] = ["", "total = compute_the_total(items, taxes)"]
    track.edit(10, 0, lines[10:12])
    assert track.line(len(lines)) == 12 == locate(anchor, lines)  # found by similarity
    lines[70:70] = [TEXT]
    track.edit(70, 0, [TEXT])
    assert track.line(len(lines)) == 71 == locate(anchor, lines)  # the text itself wins


def test_many_texts_are_found_in_one_pass_as_each_alone() -> None:
    """`exact_lines_of`, which the server uses to place a file's many new entries at once,
    finds for each text the lines `exact_lines` finds for it alone: blanks around a line and
    a byte order mark do not count, a long line is known by its first 200 characters."""
    long = "x" * 300
    lines = [
        "\ufeffdef handler(request):",
        "    return request.send()",
        "",
        "def handler(request):  ",
        "  def handler(request):",
        "return request.send()",
        long,
        long + "y",
        "# def handler(request):",
    ] * 50
    texts = ["def handler(request):", "return request.send()", "x" * 200, "absent"]
    assert exact_lines_of(texts, lines) == {text: exact_lines(text, lines) for text in texts}
    assert len(exact_lines_of(texts, lines)["def handler(request):"]) == 150
