"""The importers' unified diffs: applied to the file before, each gives the file after; they
are written as `difflib.unified_diff` writes the changes they hold (hunks, ranges, context,
`\\ No newline at end of file`), byte for byte what it writes where the changes are plain,
the same every run, and found in about linear time (libgit2's diff), where difflib's
matching is quadratic."""

from __future__ import annotations

import difflib
import os
import random
import re
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stet_lsp.core.lines import lines_of
from stet_lsp.trajectory.importers import diffs
from stet_lsp.trajectory.importers.diffs import Diff, count, file_diff, fragment_diff

# Few distinct lines, so that files repeat lines (and runs of lines) a lot; with a line of
# each break (and of none) and one holding a NUL.
LINES = ["a\n", "b\n", "c\n", "\n", "}\n", "    return x\n"]
ODD_LINES = ["a\r\n", "b\r", "\r", "c\x00d\n", "a", "\\ No newline at end of file\n"]


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


class Found(difflib.SequenceMatcher[str]):
    """difflib's matcher answering with the changes `diffs` found, so that difflib groups
    them into hunks."""

    def __init__(self, a: list[str], b: list[str]) -> None:
        super().__init__(None, a, b, autojunk=False)
        self.changes = diffs._changes(a, b)

    def get_opcodes(self) -> list[tuple[str, int, int, int, int]]:
        codes, i, j = [], 0, 0
        for i1, i2, j1, j2 in self.changes:
            if i1 > i:
                codes.append(("equal", i, i1, j, j1))
            tag = "replace" if i1 < i2 and j1 < j2 else "delete" if i1 < i2 else "insert"
            codes.append((tag, i1, i2, j1, j2))
            i, j = i2, j2
        if i < len(self.a):
            codes.append(("equal", i, len(self.a), j, len(self.b)))
        return codes


def written_by_difflib(before: str | None, after: str | None) -> str:
    """What `difflib.unified_diff` writes of the changes `diffs` found."""
    old, new = lines_of(before or "", keep_breaks=True), lines_of(after or "", keep_breaks=True)
    for lines in (old, new):
        if lines and not lines[-1].endswith("\n"):
            lines[-1] += "\n\\ No newline at end of file\n"

    def hunks() -> Iterator[str]:
        for group in Found(old, new).get_grouped_opcodes(3):
            first, last = group[0], group[-1]
            old_range = difflib._format_range_unified(first[1], last[2])  # type: ignore[attr-defined]
            new_range = difflib._format_range_unified(first[3], last[4])  # type: ignore[attr-defined]
            yield f"@@ -{old_range} +{new_range} @@\n"
            for tag, i1, i2, j1, j2 in group:
                if tag == "equal":
                    yield from (" " + line for line in old[i1:i2])
                    continue
                yield from ("-" + line for line in old[i1:i2])
                yield from ("+" + line for line in new[j1:j2])

    body = "".join(hunks())
    return diffs.headers("src/app.py", before is None, after is None) + body if body else ""


HUNK = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@\n")


def patched(before: str, text: str) -> str:
    """`before` with the diff applied, checking each hunk's range and every line it keeps
    or removes."""
    old = lines_of(before, keep_breaks=True)
    rows = lines_of(text, keep_breaks=True)
    out: list[str] = []
    assert not rows or (rows[0].startswith("--- ") and rows[1].startswith("+++ "))
    row, at = 2 if rows else 0, 0
    while row < len(rows):
        hunk = HUNK.fullmatch(rows[row])
        assert hunk is not None, rows[row]
        old_start, old_length, new_start, new_length = (
            1 if number is None else int(number) for number in hunk.groups()
        )
        start = old_start - 1 if old_length else old_start
        assert start >= at
        out += old[at:start]
        at = start
        assert len(out) == (new_start - 1 if new_length else new_start)
        row += 1
        kept = written = 0
        while row < len(rows) and not rows[row].startswith("@@ "):
            mark, line = rows[row][0], rows[row][1:]
            if rows[row + 1 : row + 2] == ["\\ No newline at end of file\n"]:
                line, row = line.removesuffix("\n"), row + 1
            if mark in " -":
                assert old[at] == line
                at, kept = at + 1, kept + 1
            if mark in " +":
                out.append(line)
                written += 1
            assert mark in " -+"
            row += 1
        assert (kept, written) == (old_length, new_length)
    return "".join(out + old[at:])


def assert_right(before: str | None, after: str | None) -> Diff:
    """The diff gives `after` from `before`, counts its lines, is written as difflib writes
    its changes, and is the same when made again."""
    diff = file_diff("src/app.py", before, after)
    assert diff == file_diff("src/app.py", before, after)
    assert patched(before or "", diff.text) == (after or "")
    rows = lines_of(diff.text, keep_breaks=True)[2:]
    marks = [row[0] for row in rows]
    assert (diff.added, diff.removed) == (marks.count("+"), marks.count("-"))
    assert diff.text == written_by_difflib(before, after)
    return diff


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
        st.lists(st.sampled_from([*LINES, "new\n", "a\r\n", "n\x00l\n"]), max_size=4),
    ),
    max_size=4,
)


@st.composite
def without_final_newline(draw: st.DrawFn, text: str) -> str:
    return text[:-1] if text.endswith("\n") and draw(st.booleans()) else text


def changed(diff: Diff) -> int:
    return diff.added + diff.removed


def changed_by_difflib(before: str | list[str], after: str | list[str]) -> int:
    """The lines difflib's diff removes and adds (of two texts, or of their lines)."""
    old, new = (
        lines_of(text, keep_breaks=True) if isinstance(text, str) else list(text)
        for text in (before, after)
    )
    for lines in (old, new):
        if lines and not lines[-1].endswith("\n"):
            lines[-1] += "\n\\ No newline at end of file\n"
    codes = difflib.SequenceMatcher(None, old, new).get_opcodes()
    return sum(i2 - i1 + j2 - j1 for tag, i1, i2, j1, j2 in codes if tag != "equal")


def unmatched_where_often(before: str, after: str) -> tuple[list[str], list[str]]:
    """Both sides' lines, each line of a side that stands on the other as often as git's diff
    (xdiff's `xdl_cleanup_records`) allows made unique: the root of the side's line count, as
    `xdl_bogosqrt` rounds it up. Between changed lines git's diff may take such a line for
    changed; it matches none of them, at most, so it changes no more lines than a diff where
    they all are."""
    old, new = lines_of(before, keep_breaks=True), lines_of(after, keep_breaks=True)
    sides = []
    for mark, side, other in (("-", old, new), ("+", new, old)):
        limit, count = 1, len(side)
        while count > 0:
            limit, count = limit * 2, count >> 2
        counts = Counter(other)
        sides.append(
            [
                f"{mark}{index}\n" if counts[line] >= limit else line
                for index, line in enumerate(side)
            ]
        )
    return sides[0], sides[1]


def test_a_line_standing_often_on_the_other_side_may_be_taken_for_changed() -> None:
    """git's diff, not difflib's, where a line stands more often than the root of the file's
    line count on the other side: the one `a` the new text keeps is not matched."""
    before, after = "a\na\na\na\na\na\nb\r", "b\nb\nb\na\nb\rb\nb\nb\n"
    diff = assert_right(before, after)
    assert (diff.removed, diff.added) == (7, 8)
    assert changed_by_difflib(before, after) == 13
    assert changed_by_difflib(*unmatched_where_often(before, after)) == 15


@settings(max_examples=600, deadline=None)
@given(
    data=st.data(),
    lines=st.lists(st.sampled_from(LINES), max_size=40)
    | st.lists(st.sampled_from(LINES + ODD_LINES), max_size=300),
    edits=EDITS,
)
def test_files_with_random_edits(
    data: st.DataObject, lines: list[str], edits: list[tuple[str, int, int, list[str]]]
) -> None:
    before = data.draw(without_final_newline("".join(lines)))
    after = data.draw(without_final_newline("".join(apply(lines, edits))))
    diff = assert_right(before, after)
    # Myers's diff changes the fewest lines (its cost bound is not reached in files this
    # small): never more than difflib's with the lines git's diff may take for changed left
    # unmatched.
    assert changed(diff) <= changed_by_difflib(*unmatched_where_often(before, after))
    assert_right(None, after)
    assert_right(before, None)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32 - 1),
    size=st.sampled_from([199, 200, 450, 1500]),
    distinct=st.sampled_from([2, 6, 40, 400]),
    edits=EDITS,
    breaks=st.sampled_from(["\n", "\r\n", "\r"]),
    final_newline=st.booleans(),
)
def test_long_files_with_popular_lines(
    seed: int,
    size: int,
    distinct: int,
    edits: list[tuple[str, int, int, list[str]]],
    breaks: str,
    final_newline: bool,
) -> None:
    rng = random.Random(seed)
    lines = [f"line {rng.randrange(distinct)}{breaks}" for _ in range(size)]
    before = "".join(lines)
    after = "".join(apply(lines, edits))
    if not final_newline:
        after = after.rstrip(breaks)
    assert_right(before, after)


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
        assert_right(before, after)


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


def test_hunks_meet_where_their_context_would() -> None:
    """Changes 6 lines apart share a hunk, 7 apart do not, as in difflib's diffs."""
    lines = [f"line {n}\n" for n in range(40)]
    for gap in (5, 6, 7, 8):
        after = [*lines]
        after[10] = after[11 + gap] = "changed\n"
        assert_same("".join(lines), "".join(after))
        hunks = file_diff("src/app.py", "".join(lines), "".join(after)).text.count("\n@@ ")
        assert hunks == (1 if gap <= 6 else 2)


def test_a_file_of_popular_lines() -> None:
    """20,000 lines of 50 kinds, one changed: difflib matched no line of the file (each
    stands in over 1% of it) and removed and added all 10,000 lines from there on."""
    rng = random.Random(3)
    lines = [f"line {rng.randrange(50)}\n" for _ in range(20_000)]
    before, after = "".join(lines), "".join([*lines[:10_000], "changed\n", *lines[10_001:]])
    diff = assert_right(before, after)
    assert (diff.added, diff.removed) == (1, 1)
    assert "@@ -9998,7 +9998,7 @@\n" in diff.text


def test_a_long_file_of_repeated_lines() -> None:
    rng = random.Random(1)
    lines = [f"line {rng.randrange(150)}\n" for _ in range(20_000)]
    before = "".join(lines)
    for after_lines in [
        [*lines[:10_000], "changed\n", *lines[10_001:]],
        [*lines[:12], "inserted\n", *lines[12:]],
        [*lines[:-7], *lines[-6:]],
        [*lines, "appended\n"],
    ]:
        assert_same(before, "".join(after_lines))


def test_changes_throughout_a_long_file_take_about_linear_time() -> None:
    """20,000 lines of 300 kinds, every 7th changed: difflib's matching took about 3 minutes
    (it searches each part left between two matches again), the diff takes some 20 ms."""
    rng = random.Random(2)
    lines = [f"line {rng.randrange(300)}\n" for _ in range(20_000)]
    after = [f"changed {n}\n" if n % 7 == 0 else line for n, line in enumerate(lines)]
    start = time.perf_counter()
    diff = file_diff("src/app.py", "".join(lines), "".join(after))
    assert time.perf_counter() - start < 2
    assert (diff.added, diff.removed) == (2_858, 2_858)
    assert patched("".join(lines), diff.text) == "".join(after)


def test_the_diff_is_the_same_in_every_process() -> None:
    """Not hung on the order of a process's string hashes."""
    script = (
        "import random; from stet_lsp.trajectory.importers.diffs import file_diff;"
        "r = random.Random(4); a = [f'{r.randrange(9)}\\n' for _ in range(300)];"
        "b = [x for x in a if r.random() < 0.8] + ['x\\n'] * 5;"
        "print(file_diff('f', ''.join(a), ''.join(b)).text)"
    )
    texts = {
        subprocess.run(
            [sys.executable, "-c", script],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("1", "2")
    }
    assert len(texts) == 1
    assert texts.pop().count("\n@@ ") > 3


def test_fragment_diffs_are_unchanged() -> None:
    for first_line in (None, 1, 40):
        for old, new in [("a\nb\n", "a\nc\n"), ("", "x\ny"), ("x\n", ""), ("a\n" * 5, "a\n" * 6)]:
            text = reference_text("f.py", old, new)
            if first_line not in (None, 1):
                text = diffs._shift(text, first_line - 1)
            expected = Diff(text, *count(text), first_line is not None)
            assert fragment_diff("f.py", old, new, first_line) == expected


def test_lines_that_end_in_a_lone_carriage_return_are_counted() -> None:
    """They are lines of the diff (as attribution reads it), not parts of the next line."""
    diff = assert_right("a\rb\rc\n", "a\rB\rc\n")
    assert diff.text.endswith("@@ -1,3 +1,3 @@\n a\r-b\r+B\r c\n")
    assert (diff.added, diff.removed) == (1, 1)


def test_a_fragment_diff_moves_only_its_hunk_headers() -> None:
    """A line holding a character str.splitlines breaks at (U+2028, a form feed) and then
    what reads as a hunk header keeps its text."""
    for odd in ("\u2028", "\x0c", "\x1c", "\x85"):
        diff = fragment_diff("f.py", f"a{odd}@@ -1 +1 @@ x\n", "b\n", 40)
        assert diff.text == f"--- a/f.py\n+++ b/f.py\n@@ -40 +40 @@\n-a{odd}@@ -1 +1 @@ x\n+b\n"


def test_count_takes_lines_that_read_like_file_headers_inside_a_hunk() -> None:
    change = diffs.file_diff("q.sql", "-- a comment\nselect 1;\n", "++i;\nselect 1;\n")
    assert "\n--- a comment\n+++i;\n" in change.text
    assert (change.added, change.removed) == (1, 1)
    two_files = change.text + diffs.file_diff("r.sql", None, "--- x\n").text
    assert diffs.count(two_files) == (2, 1)
    assert diffs.count("@@\n-a\n+b\n+c\n") == (2, 1)  # a hunk without lengths
