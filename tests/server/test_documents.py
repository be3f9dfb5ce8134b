"""A document's lines kept in step with a client's edits, where the client counts lines as the
protocol does (`\\n`, `\\r\\n` and a lone `\\r` each end one)."""

from __future__ import annotations

from bounded import within
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from lsprotocol import types
from pygls.workspace import PositionCodec

from stet_lsp.core.lines import LineIndex, split_lines
from stet_lsp.server.documents import DocumentState, new_document
from stet_lsp.server.positions import server_position
from stet_lsp.server.sheet_sync import line_edit

CODEC = PositionCodec(types.PositionEncodingKind.Utf16)
TEXT = st.text(alphabet="ab\r\n", max_size=12)


def edit(state: DocumentState, text: str, start: int, end: int, new: str) -> str:
    """Sends the client's edit of `text` (characters `start` to `end` replaced by `new`) and
    returns the client's text after it."""
    index = LineIndex(text)
    first, last = index.position(start), index.position(end)
    state.apply(
        types.TextDocumentContentChangePartial(
            range=types.Range(types.Position(*first), types.Position(*last)), text=new
        ),
        CODEC,
    )
    return text[:start] + new + text[end:]


def addressable(text: str, offset: int) -> bool:
    """A position can name any offset but the one between a `\\r\\n`'s two characters."""
    return not (0 < offset < len(text) and text[offset - 1] == "\r" and text[offset] == "\n")


@settings(max_examples=400, deadline=None)
@given(TEXT, st.lists(st.tuples(st.integers(0, 20), st.integers(0, 20), TEXT), max_size=6))
def test_the_lines_are_the_clients_after_any_edits(
    text: str, edits: list[tuple[int, int, str]]
) -> None:
    state = new_document("untitled:1", text, "plaintext", 1)
    for start, end, new in edits:
        start, end = sorted((min(start, len(text)), min(end, len(text))))
        if not (addressable(text, start) and addressable(text, end)):
            continue
        text = edit(state, text, start, end, new)
        assert state.lines == split_lines(text)
        assert state.text == "\n".join(split_lines(text))


def test_a_lone_cr_and_the_lf_typed_after_it_are_one_break() -> None:
    state = new_document("untitled:1", "one\rtwo\nthree", "plaintext", 1)
    text = edit(state, "one\rtwo\nthree", 4, 4, "\n")  # after the \r: "one\r\ntwo"
    assert state.lines == ["one", "two", "three"] == split_lines(text)
    assert state.line_edits[-1] == (0, 2, 2)


def test_a_cr_typed_before_an_lf_is_one_break_with_it() -> None:
    state = new_document("untitled:1", "one\ntwo\nthree", "plaintext", 1)
    edit(state, "one\ntwo\nthree", 3, 3, "\r")
    assert state.lines == ["one", "two", "three"]
    assert state.line_edits[-1] == (0, 1, 1)


def test_deleting_what_stood_between_a_cr_and_an_lf_joins_them() -> None:
    state = new_document("untitled:1", "one\rx\ntwo", "plaintext", 1)
    edit(state, "one\rx\ntwo", 4, 5, "")
    assert state.lines == ["one", "two"]
    assert state.line_edits[-1] == (0, 2, 1)


def apply_edit(lines: list[str], edit: types.TextEdit) -> list[str]:
    text = "\n".join(lines)
    index = LineIndex(text)

    def offset(position: types.Position) -> int:
        return index.starts[position.line] + position.character

    start, end = offset(edit.range.start), offset(edit.range.end)
    return split_lines(text[:start] + edit.new_text + text[end:])


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(["- a", "- b", "", "## Notes"]), max_size=6),
    st.lists(st.sampled_from(["- a", "- b", "", "## Notes"]), max_size=6),
)
def test_a_sheet_edit_turns_the_old_lines_into_the_new_within_the_text(
    old: list[str], new: list[str]
) -> None:
    """The edit a merge sends: lines inserted before the break that ends the text are
    inserted from the end of the line before it, never from the position past that break,
    which Neovim reads as a line past the buffer's end (and leaves an empty line)."""
    before, after = [*old, ""], [*new, ""]  # texts that end in a line break, as sheets do
    assume(before != after)
    edit = line_edit(CODEC, before, after)
    assert apply_edit(before, edit) == after
    if edit.range.start == edit.range.end and len(before) > 1:
        assert edit.range.start.line < len(before) - 1


UNITS = {
    types.PositionEncodingKind.Utf8: lambda text: len(text.encode("utf-8", "surrogatepass")),
    types.PositionEncodingKind.Utf16: lambda text: (
        len(text.encode("utf-16-le", "surrogatepass")) // 2
    ),
    types.PositionEncodingKind.Utf32: len,
}


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(sorted(UNITS)),
    st.text(alphabet="a é€😀\ud800", min_size=1, max_size=12),
    st.integers(0, 40),
)
def test_a_client_position_is_the_first_index_that_many_code_units_in(
    encoding: types.PositionEncodingKind, line: str, character: int
) -> None:
    """A position inside a character (half of a surrogate pair, a byte of a UTF-8 sequence)
    is past that character; one past the line's end is its end."""
    codec = PositionCodec(encoding)
    units = UNITS[encoding]
    _, index = server_position(codec, [line], types.Position(0, character))
    expected = next((at for at in range(len(line) + 1) if units(line[:at]) >= character), len(line))
    assert index == expected


def test_hundreds_of_changes_to_one_long_line_of_other_than_ascii_are_quick() -> None:
    """An edit replacing every secret of a long line (a redaction) comes as a change per
    secret: each change's positions were found by walking the line a character at a time in
    Python, 600 changes of a 25 KB line took 16 s."""
    tokens = [f"ghp_{number:036d}" for number in range(600)]
    state = new_document("untitled:1", "# sheet\n- é😀 " + " ".join(tokens) + "\n", "markdown", 1)

    def redact_from_the_end() -> None:
        for token in reversed(tokens):
            start = state.lines[1].rindex(token)
            units = len(state.lines[1][:start].encode("utf-16-le")) // 2
            state.apply(
                types.TextDocumentContentChangePartial(
                    range=types.Range(types.Position(1, units), types.Position(1, units + 40)),
                    text="[REDACTED]",
                ),
                CODEC,
            )

    within(5, redact_from_the_end)
    assert state.lines[1] == "- é😀 " + " ".join(["[REDACTED]"] * 600)
