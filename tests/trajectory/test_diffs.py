"""The importers' unified diffs are what `difflib.unified_diff` writes, to the byte, however
`file_diff` gets there faster (a common head and tail is not searched when it is certain that
difflib would match it first)."""

from __future__ import annotations

import difflib
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stet_lsp.trajectory.importers import diffs
from stet_lsp.trajectory.importers.diffs import Diff, count, file_diff, fragment_diff

# Few distinct lines, so that files repeat lines (and runs of lines) a lot.
LINES = ["a\n", "b\n", "c\n", "\n", "}\n", "    return x\n"]


def reference_text(path: str, before: str | None, after: str | None) -> str:
    """The diff as the importers made it before: plain difflib over the whole files."""
    old = (before or "").splitlines(keepends=True)
    new = (after or "").splitlines(keepends=True)
    for lines in (old, new):
        if lines and not lines[-1].endswith("\n"):
            lines[-1] += "\n\\ No newline at end of file\n"
    from_file = "/dev/null" if before is None else f"a/{path}"
    to_file = "/dev/null" if after is None else f"b/{path}"
    return "".join(difflib.unified_diff(old, new, from_file, to_file, n=3, lineterm="\n"))


def reference(path: str, before: str | None, after: str | None) -> Diff:
    text = reference_text(path, before, after)
    return Diff(text, *count(text), True)


def assert_same(before: str | None, after: str | None) -> None:
    assert file_diff("src/app.py", before, after) == reference("src/app.py", before, after)


def apply(lines: list[str], edits: list[tuple[str, int, int, list[str]]]) -> list[str]:
    """The lines after edits (kind, where as a fraction of 0..len, how many, new lines):
    inserts, deletions, replacements and copies of a run of the file to elsewhere in it."""
    new = list(lines)
    for kind, where, size, added in edits:
        at = where * len(new) // 1000
        if kind == "insert":
            new[at:at] = added
        elif kind == "delete":
            del new[at : at + size]
        elif kind == "replace":
            new[at : at + size] = added
        else:
            start = size * len(new) // 1000
            new[at:at] = new[start : start + len(added) * 5]
    return new


EDITS = st.lists(
    st.tuples(
        st.sampled_from(["insert", "delete", "replace", "copy"]),
        # The very start and end of the file as often as anywhere else.
        st.one_of(st.just(0), st.just(1000), st.integers(0, 1000)),
        st.integers(0, 6),
        st.lists(st.sampled_from([*LINES, "new\n", "other\n"]), max_size=4),
    ),
    max_size=4,
)


@st.composite
def without_final_newline(draw: st.DrawFn, text: str) -> str:
    return text[:-1] if text.endswith("\n") and draw(st.booleans()) else text


@settings(max_examples=600, deadline=None)
@given(data=st.data(), lines=st.lists(st.sampled_from(LINES), max_size=40), edits=EDITS)
def test_small_files_with_random_edits(
    data: st.DataObject, lines: list[str], edits: list[tuple[str, int, int, list[str]]]
) -> None:
    before = data.draw(without_final_newline("".join(lines)))
    after = data.draw(without_final_newline("".join(apply(lines, edits))))
    assert_same(before, after)
    assert_same(None, after)
    assert_same(before, None)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32 - 1),
    size=st.sampled_from([199, 200, 450, 1500]),
    distinct=st.sampled_from([2, 6, 40, 400]),
    edits=EDITS,
    final_newline=st.booleans(),
)
def test_long_files_with_popular_lines(
    seed: int,
    size: int,
    distinct: int,
    edits: list[tuple[str, int, int, list[str]]],
    final_newline: bool,
) -> None:
    """Files of 200 lines or more: difflib leaves out of its runs the lines that stand in
    over 1% of the file, which cutting off the common head and tail would change."""
    rng = random.Random(seed)
    lines = [f"line {rng.randrange(distinct)}\n" for _ in range(size)]
    before = "".join(lines)
    after = "".join(apply(lines, edits))
    if not final_newline:
        after = after.rstrip("\n")
    assert_same(before, after)


def test_empty_files_and_missing_final_newlines() -> None:
    for before, after in [
        ("", ""),
        ("", "a\n"),
        ("a\n", ""),
        (None, ""),
        ("", None),
        (None, "a"),
        ("a", None),
        ("a", "a\n"),
        ("a\n", "a"),
        ("a\nb", "a\nc"),
        ("x\n" * 10 + "y", "x\n" * 10 + "y\n"),
    ]:
        assert_same(before, after)


def test_edits_at_the_very_start_and_end() -> None:
    lines = [f"line {n}\n" for n in range(50)]
    text = "".join(lines)
    for after in [
        "first\n" + text,
        text + "last\n",
        "".join(lines[1:]),
        "".join(lines[:-1]),
        "first\n" + "".join(lines[1:-1]) + "last\n",
        text[:-1],
    ]:
        assert_same(text, after)
        assert_same(after, text)


def test_where_cutting_off_the_common_ends_would_change_the_diff() -> None:
    """difflib's own diff stands where a simpler one exists: a longer run than the common
    head elsewhere, lines popular in the whole file, a tail that difflib's match extends."""
    run = "".join(f"{n}\n" for n in range(1, 6))
    assert_same(run + "X\n" + run + "6\n", run + "6\n")
    # 20,000 lines of 50 kinds: every line is popular and difflib matches none of them.
    rng = random.Random(3)
    lines = [f"line {rng.randrange(50)}\n" for _ in range(20_000)]
    before, after = "".join(lines), "".join([*lines[:10_000], "changed\n", *lines[10_001:]])
    diff = file_diff("src/app.py", before, after)
    assert diff == reference("src/app.py", before, after)
    assert (diff.added, diff.removed) == (10_000, 10_000)
    # The head ends in a popular line that also ends the inserted lines: difflib's match of
    # the tail takes it in.
    head = [line for n in range(150) for line in (f"u{n}\n", "P\n")]
    tail = [f"t{n}\n" for n in range(5)]
    assert_same("".join(head + tail), "".join([*head, "m\n", "P\n", *tail]))


def test_a_long_file_of_repeated_lines() -> None:
    """20,000 lines of 150 kinds (each line in about 130 places, not quite popular): difflib
    alone searches the whole file twice at about 2.7 million steps each; the common head and
    tail are matched without searching."""
    rng = random.Random(1)
    lines = [f"line {rng.randrange(150)}\n" for _ in range(20_000)]
    before = "".join(lines)
    for after_lines in [
        [*lines[:10_000], "changed\n", *lines[10_001:]],
        [*lines[:12], "inserted\n", *lines[12:]],
        [*lines[:-7], *lines[-6:]],
        [*lines, "appended\n"],
    ]:
        after = "".join(after_lines)
        assert_same(before, after)
        assert diffs._Matcher(lines, after_lines)._known  # the shortcut is taken


def test_fragment_diffs_are_unchanged() -> None:
    for first_line in (None, 1, 40):
        for old, new in [("a\nb\n", "a\nc\n"), ("", "x\ny"), ("x\n", ""), ("a\n" * 5, "a\n" * 6)]:
            text = reference_text("f.py", old, new)
            if first_line not in (None, 1):
                text = diffs._shift(text, first_line - 1)
            expected = Diff(text, *count(text), first_line is not None)
            assert fragment_diff("f.py", old, new, first_line) == expected


def test_count_takes_lines_that_read_like_file_headers_inside_a_hunk() -> None:
    change = diffs.file_diff("q.sql", "-- a comment\nselect 1;\n", "++i;\nselect 1;\n")
    assert "\n--- a comment\n+++i;\n" in change.text
    assert (change.added, change.removed) == (1, 1)
    two_files = change.text + diffs.file_diff("r.sql", None, "--- x\n").text
    assert diffs.count(two_files) == (2, 1)
    assert diffs.count("@@\n-a\n+b\n+c\n") == (2, 1)  # a hunk without lengths


def test_a_file_whose_lines_seldom_repeat_is_left_to_difflib() -> None:
    """Proving the common head and tail would take longer than difflib's searches, which step
    through about one place a line: the shortcut is not tried, and the diff is the same."""
    lines = [f"line {n}\n" for n in range(2_000)]
    after_lines = [*lines[:1_000], "changed\n", *lines[1_001:]]
    assert not diffs._Matcher(lines, after_lines)._known
    assert_same("".join(lines), "".join(after_lines))
