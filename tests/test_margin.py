"""Margin notes in many languages, and incremental re-lexing equal to a full one."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stet_lsp.core.comments import SYNTAXES, CommentIndex, language_of
from stet_lsp.core.margin import find_notes


def notes_in(text: str, language: str, marker: str = "stet") -> list[tuple[int, str, str]]:
    lines = text.split("\n")
    return [
        (note.line, note.kind, note.text)
        for note in find_notes(lines, CommentIndex(lines, SYNTAXES[language]), marker)
    ]


CASES = [
    (
        "python",
        '# stet: wrap errors\nx = 1\ns = "# stet: no"\n"""\n# stet: no\n"""\n',
        [(0, "markup", "wrap errors")],
    ),
    (
        "javascript",
        "const a = 1; // stet(convention): use const\nconst s = '// stet: no';\nconst t = `\n// stet: no\n`;\n",
        [(0, "convention", "use const")],
    ),
    (
        "typescript",
        "/* stet(ruled-out): zod v4\n * breaks our types */\nlet x: number;\n",
        [(0, "ruled-out", "zod v4 breaks our types")],
    ),
    (
        "go",
        "// stet: use errors.Join\n// for several errors\nfunc f() {}\nvar s = `// stet: no`\n",
        [(0, "markup", "use errors.Join for several errors")],
    ),
    ("rust", 'let s = "// stet: no"; // stet(note): borrow here\n', [(0, "note", "borrow here")]),
    ("c", "int x; /* stet: prefer size_t */\n", [(0, "markup", "prefer size_t")]),
    (
        "cpp",
        "// stet(clarification): owner is the caller\nint* p;\n",
        [(0, "clarification", "owner is the caller")],
    ),
    ("java", 'String s = "/* stet: no */"; // stet: final\n', [(0, "markup", "final")]),
    ("csharp", 'var s = "x"; // stet: use var\n', [(0, "markup", "use var")]),
    ("ruby", "# stet: freeze strings\nx = '# stet: no'\n", [(0, "markup", "freeze strings")]),
    ("shellscript", "echo '# stet: no' # stet: quote vars\n", [(0, "markup", "quote vars")]),
    (
        "lua",
        'local s = "-- stet: no" -- stet: local\n--[[ stet(convention): tables\n]]\n',
        [(0, "markup", "local"), (1, "convention", "tables")],
    ),
    (
        "sql",
        "SELECT '-- stet: no'; -- stet: index this\n/* stet: no star */ SELECT 1;\n",
        [(0, "markup", "index this"), (1, "markup", "no star")],
    ),
    ("yaml", 'key: "# stet: no" # stet: pin versions\n', [(0, "markup", "pin versions")]),
    ("toml", 'name = "# stet: no" # stet: sort keys\n', [(0, "markup", "sort keys")]),
    ("html", "<p>x</p> <!-- stet: use semantic tags -->\n", [(0, "markup", "use semantic tags")]),
    (
        "markdown",
        "Text\n\n<!-- stet(convention): sentence case\n     headings -->\n",
        [(2, "convention", "sentence case headings")],
    ),
]


@pytest.mark.parametrize("language, text, expected", CASES, ids=[case[0] for case in CASES])
def test_margin_notes_in_each_language(
    language: str, text: str, expected: list[tuple[int, str, str]]
) -> None:
    assert notes_in(text, language) == expected


def test_language_from_path_or_id() -> None:
    assert language_of("a/b.tsx") == "typescript"
    assert language_of("Dockerfile") == "dockerfile"
    assert language_of("x.unknown") == "plain"
    assert notes_in("; stet: in an ini file\nvalue = 'it''s'\n", "plain") == [
        (0, "markup", "in an ini file")
    ]
    assert language_of("x.txt", "python") == "python"


def test_marker_is_configurable_and_words_must_stand_alone() -> None:
    assert notes_in("# review: check this\n\n# stet: old\n", "python", "review:") == [
        (0, "markup", "check this")
    ]
    assert notes_in("# restet: no\n# my-stet: no\n", "python") == []


def test_note_removal_and_anchor_lines() -> None:
    lines = [
        "import os",
        "",
        "# stet: about f",
        "# more",
        "def f():",
        "    pass  # stet: trailing",
        "",
    ]
    own, trailing = find_notes(lines, CommentIndex(lines, SYNTAXES["python"]))
    assert (
        own.removal == (2, 0, 4, 0) and own.anchor_line == 4 and own.anchor_line_after_removal == 2
    )
    assert trailing.removal == (5, 8, 5, len(lines[5])) and trailing.anchor_line == 5


line_pieces = st.sampled_from(
    [
        "x = 1",
        "# stet: a",
        '"""',
        "'''",
        '"',
        "s = '#'",
        "  # more",
        "",
        "/*",
        "*/",
        "// stet(ruled-out): b",
        "`",
        "y  # stet: c",
    ]
)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.lists(line_pieces, max_size=3).map(" ".join), min_size=1, max_size=30),
    st.lists(st.lists(line_pieces, max_size=3).map(" ".join), max_size=5),
    st.integers(0, 40),
    st.integers(0, 5),
    st.sampled_from(["python", "javascript", "go", "c"]),
)
def test_incremental_relexing_equals_a_full_lex(
    before: list[str], inserted: list[str], at: int, removed: int, language: str
) -> None:
    syntax = SYNTAXES[language]
    at = min(at, len(before) - 1)
    removed = min(removed, len(before) - at)
    removed = max(removed, 1)
    after = before[:at] + inserted + before[at + removed :]
    if not after:
        after = [""]
        inserted = [""] if at == 0 else inserted
    index = CommentIndex(before, syntax)
    index.update(after, at, removed, len(after) - (len(before) - removed))
    fresh = CommentIndex(after, syntax)
    assert index.starts == fresh.starts
    assert index.comments == fresh.comments
