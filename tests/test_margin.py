"""Margin notes in many languages, and incremental re-lexing equal to a full one."""

from __future__ import annotations

from typing import NoReturn

import pytest
from bounded import within
from hypothesis import given, settings
from hypothesis import strategies as st
from margin_lines import notes_among_repeated_lines

from stet_lsp.core import comments
from stet_lsp.core.comments import SYNTAXES, CommentIndex, language_of
from stet_lsp.core.margin import (
    MarginNote,
    anchor_lines_after_removal,
    find_notes,
    line_after_removals,
    without_notes,
)


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


# Strings and comments each language's lexer must tell apart: (language, text, the notes).
LEXING_CASES = [
    # YAML: a quote opens a string only where a scalar starts; "#" opens a comment only at the
    # line's start or after a blank; '' is a quote inside single quotes.
    (
        "yaml apostrophe in a plain scalar",
        "yaml",
        "msg: don't  # stet: note\n",
        [(0, "markup", "note")],
    ),
    ("yaml apostrophe in a list item", "yaml", "- it's here # stet: x\n", [(0, "markup", "x")]),
    ("yaml doubled quote", "yaml", "k: 'it''s # no' # stet: yes\n", [(0, "markup", "yes")]),
    ("yaml escaped double quote", "yaml", 'k: "a \\" # no" # stet: yes\n', [(0, "markup", "yes")]),
    ("yaml quoted key", "yaml", "'# stet: no': 1 # stet: yes\n", [(0, "markup", "yes")]),
    (
        "yaml flow sequence",
        "yaml",
        "k: ['# stet: no', \"b\"] # stet: yes\n",
        [(0, "markup", "yes")],
    ),
    ("yaml hash inside a word", "yaml", "k: a#stet: no\n", []),
    ("yaml quote after blanks", "yaml", "k:  'a # no'  # stet: yes\n", [(0, "markup", "yes")]),
    ("yaml quote after a word", "yaml", "k: x 'a # stet: yes\n", [(0, "markup", "yes")]),
    (
        "yaml quotes in a flow sequence",
        "yaml",
        "- [ 'a', \"b\",'# no' ] # stet: yes\n",
        [(0, "markup", "yes")],
    ),
    # YAML: a block scalar's lines (more indented than the key or `-` holding it) are text.
    (
        "yaml literal block scalar",
        "yaml",
        "run: |\n  echo hi # stet: no\n\n  # stet: no\n# stet: yes\nk: 1 # stet: too\n",
        [(4, "markup", "yes"), (5, "markup", "too")],
    ),
    (
        "yaml folded block scalar in a list item, stripped",
        "yaml",
        "- name: x\n  script: >-\n    a # stet: no\n    # stet: no\n  # stet: yes\n",
        [(4, "markup", "yes")],
    ),
    (
        "yaml block scalar kept, its blank lines inside it",
        "yaml",
        "a:\n  b: |+\n    x\n\n    # stet: no\n\n  # stet: yes\n",
        [(6, "markup", "yes")],
    ),
    (
        "yaml block scalar with an indentation indicator",
        "yaml",
        "k: |2\n    # stet: no\n  x # stet: no\n# stet: yes\n",
        [(3, "markup", "yes")],
    ),
    (
        "yaml sequence entry block scalar, indicator and chomping",
        "yaml",
        "- >1-\n  # stet: no\n # stet: no\n# stet: yes\n",
        [(3, "markup", "yes")],
    ),
    (
        "yaml block scalar after a tag and an anchor",
        "yaml",
        "k: !!str &a >+\n  # stet: no\nj: 2 # stet: yes\n",
        [(2, "markup", "yes")],
    ),
    (
        "yaml comment on a block scalar's header",
        "yaml",
        "k: | # stet: header\n  # stet: no\n",
        [(0, "markup", "header")],
    ),
    (
        "yaml empty block scalar",
        "yaml",
        "- key: |\n  # stet: yes\n  other: 1\n",
        [(1, "markup", "yes")],
    ),
    (
        "yaml document of a block scalar",
        "yaml",
        "--- |\n# stet: no\n...\n# stet: yes\n",
        [(3, "markup", "yes")],
    ),
    (
        "yaml bar in plain and quoted scalars",
        "yaml",
        "cmd: a |\n  # stet: yes\nk: '|'\n  # stet: too\nx: a|\n  # stet: three\n",
        [(1, "markup", "yes"), (3, "markup", "too"), (5, "markup", "three")],
    ),
    # Rust: '"' is a char, 'a a lifetime; raw strings hold backslashes and quotes as written.
    (
        "rust char literal of a quote",
        "rust",
        "let q = '\"'; // stet: after a char\n",
        [(0, "markup", "after a char")],
    ),
    (
        "rust escaped quote char",
        "rust",
        "let q = '\\''; let r = '\"'; // stet: yes\n",
        [(0, "markup", "yes")],
    ),
    (
        "rust lifetimes",
        "rust",
        "fn f<'a>(s: &'a str) -> &'a str { s } // stet: lifetimes\n",
        [(0, "markup", "lifetimes")],
    ),
    (
        "rust lifetime before a string",
        "rust",
        "fn f<'a>() -> &'a str { \"// stet: no\" } // stet: yes\n",
        [(0, "markup", "yes")],
    ),
    ("rust raw string at a line's start", "rust", 'r"\\" // stet: yes\n', [(0, "markup", "yes")]),
    ("rust byte char", "rust", "let b = b'\"'; // stet: yes\n", [(0, "markup", "yes")]),
    (
        "rust unicode char",
        "rust",
        "let c = '\\u{22}'; let d = '\"'; // stet: yes\n",
        [(0, "markup", "yes")],
    ),
    (
        "rust raw string ending in a backslash",
        "rust",
        'let p = r"C:\\dir\\"; // stet: raw path\n',
        [(0, "markup", "raw path")],
    ),
    (
        "rust raw string with hashes",
        "rust",
        'let s = r#"say "// stet: no" here"#; // stet: yes\n',
        [(0, "markup", "yes")],
    ),
    (
        "rust raw string over lines",
        "rust",
        'let s = r##"\n// stet: no "# still\n"##; // stet: yes\n',
        [(2, "markup", "yes")],
    ),
    ("rust byte raw string", "rust", 'let b = br"\\"; // stet: yes\n', [(0, "markup", "yes")]),
    (
        "rust string over lines",
        "rust",
        'let s = "one\n// stet: no\n"; // stet: yes\n',
        [(2, "markup", "yes")],
    ),
    ("rust raw identifier", "rust", "let r#type = 1; // stet: yes\n", [(0, "markup", "yes")]),
    (
        "rust char literals around a block comment",
        "rust",
        "let v = ['a', 'b' /* x */, '\"', 'c']; // stet: yes\n",
        [(0, "markup", "yes")],
    ),
    (
        "rust char literals around strings",
        "rust",
        "let v = ['a', \"// stet: no\", '\\'', r\"// no\", 'b', '/']; // stet: yes\n",
        [(0, "markup", "yes")],
    ),
    # C#: verbatim strings double their quotes and keep backslashes; raw strings open with
    # three quotes or more and close with as many.
    (
        "csharp verbatim path",
        "csharp",
        'var p = @"C:\\path\\"; // stet: verbatim\n',
        [(0, "markup", "verbatim")],
    ),
    (
        "csharp verbatim doubled quote",
        "csharp",
        'var q = @"a ""// stet: no"" \\"; // stet: yes\n',
        [(0, "markup", "yes")],
    ),
    (
        "csharp interpolated verbatim",
        "csharp",
        'var p = $@"C:\\{d}\\"; var q = @$"\\"; // stet: yes\n',
        [(0, "markup", "yes")],
    ),
    (
        "csharp verbatim over lines",
        "csharp",
        'var s = @"\n// stet: no\n"; // stet: yes\n',
        [(2, "markup", "yes")],
    ),
    (
        "csharp raw string",
        "csharp",
        'var r = """He said "// stet: no" ok"""; // stet: yes\n',
        [(0, "markup", "yes")],
    ),
    (
        "csharp raw string of four quotes",
        "csharp",
        'var r = """"a """ // stet: no""""; // stet: yes\n',
        [(0, "markup", "yes")],
    ),
    (
        "csharp raw string over lines",
        "csharp",
        'var r = $"""\n    // stet: no\n    """; // stet: yes\n',
        [(2, "markup", "yes")],
    ),
    (
        "csharp raw string, then a string",
        "csharp",
        'var s = """a"""; var t = "// stet: no"; // stet: yes\n',
        [(0, "markup", "yes")],
    ),
    ("csharp empty string", "csharp", 'var e = ""; // stet: yes\n', [(0, "markup", "yes")]),
    ("csharp char of a quote", "csharp", "var c = '\"'; // stet: yes\n", [(0, "markup", "yes")]),
    # Shell: a heredoc's body is text; "#" opens a comment only where a word starts; single
    # quotes have no escape; a backslash quotes the next character.
    (
        "shell heredoc",
        "shellscript",
        "cat <<EOF\n# stet: no\nEOF\n# stet: yes\n",
        [(3, "markup", "yes")],
    ),
    (
        "shell heredoc quoted, tabs stripped",
        "shellscript",
        "cat <<-'EOF'\n\t# stet: no\n\tEOF\necho hi # stet: yes\n",
        [(3, "markup", "yes")],
    ),
    (
        "shell heredoc double-quoted delimiter",
        "shellscript",
        'cat << "END"\n# stet: no\nEND\n# stet: yes\n',
        [(3, "markup", "yes")],
    ),
    (
        "shell heredoc terminator needs its own line",
        "shellscript",
        "cat <<EOF\n# stet: no\n EOF\nEOF x\n# stet: no\nEOF\n# stet: yes\n",
        [(6, "markup", "yes")],
    ),
    (
        "shell heredoc without the dash keeps tabs",
        "shellscript",
        "cat <<EOF\n\tEOF\n# stet: no\nEOF\n",
        [],
    ),
    (
        "shell comment on the heredoc's line",
        "shellscript",
        "cat <<EOF | sort # stet: on the opener\nb # stet: no\nEOF\n",
        [(0, "markup", "on the opener")],
    ),
    (
        "shell two heredocs",
        "shellscript",
        'f <<A <<"B"\n# stet: no\nA\n# stet: no\nB\n# stet: yes\n',
        [(5, "markup", "yes")],
    ),
    (
        "shell arithmetic shift",
        "shellscript",
        "echo $((1 << x)) # stet: shift\n# stet: next\n",
        [(0, "markup", "shift"), (1, "markup", "next")],
    ),
    (
        "shell arithmetic over lines",
        "shellscript",
        "x=$((\n  a << b ))\necho hi # stet: n\n",
        [(2, "markup", "n")],
    ),
    (
        "shell arithmetic command over lines",
        "shellscript",
        "(( a\n  << b )) # stet: shift\n# stet: next\n",
        [(1, "markup", "shift"), (2, "markup", "next")],
    ),
    (
        "shell nested arithmetic over lines, then a heredoc",
        "shellscript",
        "x=$(( ((a\n  << b)) <<\n  c )) <<E # stet: opener\n# stet: no\nE\n# stet: yes\n",
        [(2, "markup", "opener"), (5, "markup", "yes")],
    ),
    (
        "shell heredoc before arithmetic over lines",
        "shellscript",
        "cat <<EOF; x=$((1 +\n  2 << 3)) # stet: shift\n# stet: no\nEOF\n# stet: yes\n",
        [(1, "markup", "shift"), (4, "markup", "yes")],
    ),
    (
        "shell here-string",
        "shellscript",
        'cat <<< "x" # stet: here-string\n# stet: next\n',
        [(0, "markup", "here-string"), (1, "markup", "next")],
    ),
    (
        "shell dollar hash",
        "shellscript",
        'echo $# "# stet: no" # stet: yes\n',
        [(0, "markup", "yes")],
    ),
    (
        "shell length of an array",
        "shellscript",
        'echo ${#a[@]} "# stet: no" # stet: yes\n',
        [(0, "markup", "yes")],
    ),
    (
        "shell backslash in single quotes",
        "shellscript",
        "echo 'a\\' # stet: yes\n",
        [(0, "markup", "yes")],
    ),
    ("shell escaped quote", "shellscript", 'echo \\"x # stet: yes\n', [(0, "markup", "yes")]),
    ("shell escaped hash", "shellscript", "echo \\# stet: no\n", []),
    (
        "shell quotes nested in a command substitution",
        "shellscript",
        'out="$(grep -c "don\'t" f)" # stet: not seen\n# stet: after\nls # stet: too\n',
        [(1, "markup", "after"), (2, "markup", "too")],
    ),
    # Lua: long strings and long comments, of any level up to three `=`.
    ("lua long string", "lua", "s = [[ -- stet: no ]] -- stet: yes\n", [(0, "markup", "yes")]),
    (
        "lua long string of level two over lines",
        "lua",
        "s = [==[\n-- stet: no\n]] still ]==] -- stet: yes\n",
        [(2, "markup", "yes")],
    ),
    (
        "lua long comment of level one",
        "lua",
        "--[=[\nstet: inside\n]=] x = t[a[1]] -- no note\n",
        [(1, "markup", "inside")],
    ),
    ("lua table index", "lua", "x = t[a[1]] -- stet: yes\n", [(0, "markup", "yes")]),
    # Rust: block comments nest.
    (
        "rust nested block comment",
        "rust",
        '/* a /* b */ c " */ x(); // stet: yes\n',
        [(0, "markup", "yes")],
    ),
    (
        "rust nested block comment over lines",
        "rust",
        '/* outer\n/* inner */\nstill " outer */ let s = "// stet: no"; // stet: yes\n',
        [(2, "markup", "yes")],
    ),
    (
        "c block comments do not nest",
        "c",
        '/* a /* b */ x = "*/"; // stet: yes\n',
        [(0, "markup", "yes")],
    ),
    # JavaScript: a regular expression literal holds no string and no comment.
    (
        "javascript regex of a quote",
        "javascript",
        'r = /"/; // stet: yes\n',
        [(0, "markup", "yes")],
    ),
    (
        "javascript regex of slashes",
        "javascript",
        "r = /\\/\\/ stet: no/g; // stet: yes\n",
        [(0, "markup", "yes")],
    ),
    (
        "javascript regex class of a slash and a quote",
        "javascript",
        "if (/[/'\"]/.test(s)) f(); // stet: yes\n",
        [(0, "markup", "yes")],
    ),
    (
        "javascript regex after return",
        "typescript",
        "return /'/.test(s); // stet: yes\n",
        [(0, "markup", "yes")],
    ),
    (
        "javascript regex after an arrow",
        "javascript",
        "f = s => /'/.test(s); // stet: yes\n",
        [(0, "markup", "yes")],
    ),
    (
        "javascript division after a brace or at a line's start",
        "javascript",
        'x = {a: 1} / 2 + "\'"; // stet: yes\nsum\n/ count; // stet: too\n',
        [(0, "markup", "yes"), (2, "markup", "too")],
    ),
    (
        "javascript division is no regex",
        "javascript",
        "x = a / b / c; // stet: yes\ny = f(a) / 2 / 3; // stet: too\n",
        [(0, "markup", "yes"), (1, "markup", "too")],
    ),
    (
        "shell comment after an operator",
        "shellscript",
        "true;# stet: yes\n",
        [(0, "markup", "yes")],
    ),
    # Python: a raw string's backslash still keeps the quote after it from closing it.
    (
        "python raw string of two backslashes",
        "python",
        'x = r"\\\\" # stet: yes\n',
        [(0, "markup", "yes")],
    ),
    (
        "python raw string with an escaped quote",
        "python",
        "x = r'\\'' # stet: yes\n",
        [(0, "markup", "yes")],
    ),
    (
        "python raw string never closed",
        "python",
        'x = r"\\" # stet: no\ny = 1 # stet: yes\n',
        [(1, "markup", "yes")],
    ),
    ("python raw triple-quoted", "python", 'x = r"""\\"""" # stet: yes\n', [(0, "markup", "yes")]),
    (
        "python raw triple-quoted over lines",
        "python",
        "x = rb'''\\\n# stet: no\n'''  # stet: yes\n",
        [(2, "markup", "yes")],
    ),
    # Python 3.12: an f-string's replacement field may hold strings in the same quotes, nested
    # f-strings, and comments where it goes on over lines.
    (
        "python f-string holding a string in its own quotes",
        "python",
        'x = f"{d["# stet: no"]}" # stet: yes\n',
        [(0, "markup", "yes")],
    ),
    (
        "python f-string field over lines",
        "python",
        'x = f"{", ".join([\n    a,  # stet: inside\n])} # stet: no"\ny = 1 # stet: yes\n',
        [(1, "markup", "inside"), (3, "markup", "yes")],
    ),
    (
        "python nested f-strings in one quote",
        "python",
        'x = f"{f"{f"{\'#\'}"}"}" # stet: yes\n',
        [(0, "markup", "yes")],
    ),
    (
        "python raw f-string",
        "python",
        'x = rf"\\{d["# stet: no"]}\\"" # stet: yes\n',
        [(0, "markup", "yes")],
    ),
    (
        "python f-string with a hash in a nested string and the same quotes",
        "python",
        'x = f"{x["a"]} # stet: no"\ny = f"{\'#\'} {d["k"]}" # stet: yes\n',
        [(1, "markup", "yes")],
    ),
    (
        "python f-string spec, conversion and doubled braces",
        "python",
        'x = f"{v:{w}} {{#}} {v!r:>{w}} \\N{EM DASH}" # stet: yes\n',
        [(0, "markup", "yes")],
    ),
    (
        "python triple-quoted f-string over lines",
        "python",
        'x = f"""a\n{d["k"]} # stet: no\n{x:\'>3}"""  # stet: yes\n',
        [(2, "markup", "yes")],
    ),
    (
        "python strings before 3.12",
        "python",
        "x = f'{y}' + rb'\\\\' + u\"#\" # stet: yes\nif\"a\" in s: pass # stet: too\n",
        [(0, "markup", "yes"), (1, "markup", "too")],
    ),
    # Go: a raw string (backticks) has no escapes and may span lines.
    (
        "go raw string ending in a backslash",
        "go",
        "var p = `C:\\dir\\` // stet: raw\n",
        [(0, "markup", "raw")],
    ),
    (
        "go raw string over lines",
        "go",
        "s := `\n// stet: no\n` // stet: yes\n",
        [(2, "markup", "yes")],
    ),
    ("go rune of a quote", "go", "c := '\"' // stet: yes\n", [(0, "markup", "yes")]),
    (
        "javascript template keeps its escapes",
        "javascript",
        "s = `\\`// stet: no`; // stet: yes\n",
        [(0, "markup", "yes")],
    ),
]


@pytest.mark.parametrize(
    "language, text, expected",
    [case[1:] for case in LEXING_CASES],
    ids=[case[0] for case in LEXING_CASES],
)
def test_strings_and_comments_each_lexer_tells_apart(
    language: str, text: str, expected: list[tuple[int, str, str]]
) -> None:
    assert notes_in(text, language) == expected


# Lines full of quotes, and text in each language where no token stands.
QUOTE_HEAVY = [
    (
        "rust",
        "let v = ['a', '\"', '\\'']; fn f<'a>(s: &'a str) -> &'a str { \"s\" } // it's\n",
        "fn f<'a>(s: &'a str) {}",
    ),
    (
        "yaml",
        "- k: \"v # x\"  # it's 'quoted', don't\nmsg: don't 'say' it's # c\n",
        "msg: don't a#b c'd'",
    ),
    (
        "csharp",
        'var s = "a\\"b"; var p = @"c\\"; var q = $@"d"; char c = \'x\'; // it\'s\n',
        "var x = a * b;",
    ),
    (
        "shellscript",
        "echo \"$x\" 'it''s' $((a << 2)) a#b $# | grep 'a#b' # it's\n",
        "echo a#b $# ${#a[@]}",
    ),
]


@pytest.mark.parametrize(
    "language, text, plain", QUOTE_HEAVY, ids=[case[0] for case in QUOTE_HEAVY]
)
def test_quote_heavy_lines_take_no_second_match(
    language: str, text: str, plain: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each token's alternative is told by its first character or its text, and an apostrophe
    or `#` inside a word is no token: matching every token again, and stopping at every
    apostrophe, made quote-heavy files lex two to three times slower."""

    def matched_again(*args: object) -> NoReturn:
        raise AssertionError(f"a token matched again: {args}")

    monkeypatch.setattr(comments._Lexicon, "which", matched_again)
    comments._lexicon.cache_clear()
    assert notes_in(text, language) == []
    assert comments._lexicon(SYNTAXES[language]).pattern.search(plain) is None


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
        own.removal == (2, 0, 4, 0)
        and own.anchor_line == 4
        and anchor_lines_after_removal([own]) == [2]
    )
    assert trailing.removal == (5, 8, 5, len(lines[5])) and trailing.anchor_line == 5


def recorded(text: str, language: str) -> tuple[str, list[int]]:
    """The text once every note in it is removed, as recording them all does, and each note's
    anchor line (0-based) in that text."""
    lines = text.split("\n")
    notes = find_notes(lines, CommentIndex(lines, SYNTAXES[language]))
    return "\n".join(without_notes(lines, notes)), anchor_lines_after_removal(notes)


BLOCK_CASES = [
    (
        "c doc comment, closer on its own line",
        "c",
        "/**\n * Returns the size.\n * stet: use the cached size\n */\nint size(void);\n",
        "/**\n * Returns the size.\n */\nint size(void);\n",
        [3],
    ),
    (
        "c doc comment, closer after the note",
        "c",
        "/**\n * Returns the size.\n * stet: use the cached size */\nint size(void);\n",
        "/**\n * Returns the size.\n */\nint size(void);\n",
        [3],
    ),
    (
        "c doc comment, note over two lines, closer after it",
        "c",
        "/**\n * Returns the size.\n * stet: use the\n * cached size */\nint size(void);\n",
        "/**\n * Returns the size.\n */\nint size(void);\n",
        [3],
    ),
    (
        "c block comment, note over two lines, closer on its own line",
        "c",
        "/* Returns the size.\n   stet: use the\n   cached size\n */\nint size(void);\n",
        "/* Returns the size.\n */\nint size(void);\n",
        [2],
    ),
    (
        "c block comment, code after the closer",
        "c",
        "/*\n * Size.\n * stet: cached */ int size(void);\n",
        "/*\n * Size.\n */ int size(void);\n",
        [2],
    ),
    (
        "c one-line block comment",
        "c",
        "/* stet: use the cached size */\nint size(void);\n",
        "int size(void);\n",
        [0],
    ),
    (
        "c block comment opened on the note's line",
        "c",
        "/* stet: use the\n * cached size\n */\nint size(void);\n",
        "int size(void);\n",
        [0],
    ),
    (
        "html comment, closer on its own line",
        "html",
        "<!--\n  The header.\n  stet: sentence case\n-->\n<h1>Hi</h1>\n",
        "<!--\n  The header.\n-->\n<h1>Hi</h1>\n",
        [3],
    ),
    (
        "html comment, closer after the note",
        "html",
        "<!--\n  The header.\n  stet: sentence case -->\n<h1>Hi</h1>\n",
        "<!--\n  The header.\n  -->\n<h1>Hi</h1>\n",
        [3],
    ),
    (
        "markdown comment, closer on its own line",
        "markdown",
        "# Title\n\n<!--\nDraft.\nstet: sentence case\n-->\nText\n",
        "# Title\n\n<!--\nDraft.\n-->\nText\n",
        [5],
    ),
    (
        "markdown one-line comment",
        "markdown",
        "<!-- stet: sentence case -->\n# Title\n",
        "# Title\n",
        [0],
    ),
    (
        "ruby =begin block",
        "ruby",
        "=begin\nDocs.\nstet: freeze strings\n=end\nx = 1\n",
        "=begin\nDocs.\n=end\nx = 1\n",
        [3],
    ),
    (
        "lua block, closer on its own line",
        "lua",
        "--[[\nDocs.\nstet: locals\n]]\nlocal x = 1\n",
        "--[[\nDocs.\n]]\nlocal x = 1\n",
        [3],
    ),
    (
        "lua block, closer after the note",
        "lua",
        "--[[\nDocs.\n  stet: locals ]]\nlocal x = 1\n",
        "--[[\nDocs.\n  ]]\nlocal x = 1\n",
        [3],
    ),
    (
        "c one-line block comment between code",
        "javascript",
        "  bar(); /* stet: inline block */ baz();\n",
        "  bar(); baz();\n",
        [0],
    ),
    (
        "c one-line block comment before code",
        "c",
        "  /* stet: checked */ int size(void);\n",
        "  int size(void);\n",
        [0],
    ),
    (
        "c block comment over two lines, code after its closer",
        "c",
        "x(); /* stet: one\n   two */ y();\n",
        "x(); y();\n",
        [0],
    ),
    (
        "text before the note inside the comment",
        "c",
        "/**\n * Returns the size. stet: cached\n */\nint size(void);\n",
        "/**\n * Returns the size. */\nint size(void);\n",
        [2],
    ),
]


@pytest.mark.parametrize(
    "language, text, expected, anchors",
    [case[1:] for case in BLOCK_CASES],
    ids=[case[0] for case in BLOCK_CASES],
)
def test_removing_a_note_in_a_block_comment_keeps_the_comment_closed(
    language: str, text: str, expected: str, anchors: list[int]
) -> None:
    after, lines = recorded(text, language)
    assert after == expected
    assert lines == anchors
    [note] = find_notes(text.split("\n"), CommentIndex(text.split("\n"), SYNTAXES[language]))
    assert anchor_lines_after_removal([note]) == anchors[:1]


def test_notes_recorded_together_anchor_past_every_removal_above() -> None:
    text = (
        "# stet: one\n"
        "x = 1\n"
        "# stet: two\n"
        "# goes on\n"
        "y = 2\n"
        "# stet: three\n"
        "result = compute()\n"
        "z = 3  # stet: trailing\n"
    )
    lines = text.split("\n")
    notes = find_notes(lines, CommentIndex(lines, SYNTAXES["python"]))
    # Alone, each note's anchor moves only by its own removal.
    assert [anchor_lines_after_removal([note])[0] for note in notes] == [0, 2, 5, 7]
    after, anchors = recorded(text, "python")
    assert after == "x = 1\ny = 2\nresult = compute()\nz = 3\n"
    assert anchors == [0, 1, 2, 3]
    assert [after.split("\n")[line] for line in anchors] == [
        "x = 1",
        "y = 2",
        "result = compute()",
        "z = 3",
    ]


def test_notes_in_block_comments_recorded_together() -> None:
    text = (
        "/**\n"
        " * Returns the size.\n"
        " * stet: use the cached size\n"
        " */\n"
        "int size(void);\n"
        "/* stet(convention): const */\n"
        "int count(void);\n"
        "/*\n"
        " * Frees it.\n"
        " * stet: check for NULL */\n"
        "void release(void);\n"
    )
    after, anchors = recorded(text, "c")
    assert after == (
        "/**\n"
        " * Returns the size.\n"
        " */\n"
        "int size(void);\n"
        "int count(void);\n"
        "/*\n"
        " * Frees it.\n"
        " */\n"
        "void release(void);\n"
    )
    assert anchors == [3, 4, 8]


def test_line_after_removals() -> None:
    removals = [(1, 0, 3, 0), (5, 4, 6, 2)]
    # Above, between, after; a line inside a removal joins the line it starts on.
    assert [line_after_removals(line, removals) for line in (0, 3, 4, 5, 6, 7)] == [
        0,
        1,
        2,
        3,
        3,
        4,
    ]
    assert line_after_removals(2, removals) == 1


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
        "cat <<EOF",
        "EOF",
        "\tEOF",
        "f <<-'E' <<B",
        "E",
        "B",
        'r#"',
        '"#',
        '@"',
        "'\"'",
        "don't",
        "k: 'a''b",
        "x=$((",
        "((",
        "a << b ))",
        "))",
        "k: |",
        "- >2-",
        "    text",
        'f"{x["',
        '"]}"',
        "f'''{",
    ]
)


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.lists(line_pieces, max_size=3).map(" ".join), min_size=1, max_size=30),
    st.lists(st.lists(line_pieces, max_size=3).map(" ".join), max_size=5),
    st.integers(0, 40),
    st.integers(0, 5),
    st.sampled_from(["python", "javascript", "go", "c", "rust", "csharp", "shellscript", "yaml"]),
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


edit_pieces = st.tuples(
    st.integers(0, 40),
    st.integers(0, 4),
    st.lists(st.lists(line_pieces, max_size=3).map(" ".join), max_size=4),
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.lists(line_pieces, max_size=3).map(" ".join), min_size=1, max_size=30),
    st.lists(edit_pieces, max_size=10),
    st.sampled_from(["python", "javascript", "go", "c", "rust", "csharp", "shellscript", "yaml"]),
)
def test_edits_caught_up_after_a_lex_equal_a_full_lex(
    before: list[str], edits: list[tuple[int, int, list[str]]], language: str
) -> None:
    """The index of a text lexed while edits were made to it (a long text, lexed off the
    loop), those edits spliced in and their lines lexed, is the index of the edited text."""
    syntax = SYNTAXES[language]
    lines = list(before)
    made = []
    for at, removed, inserted in edits:
        at = min(at, len(lines) - 1)
        removed = max(1, min(removed, len(lines) - at))
        added = inserted or ([""] if len(lines) == removed else [])
        lines[at : at + removed] = added
        made.append((at, removed, len(added)))
    index = CommentIndex(before, syntax)
    index.catch_up(lines, made)
    fresh = CommentIndex(lines, syntax)
    assert index.starts == fresh.starts
    assert index.comments == fresh.comments


def test_edits_far_apart_are_lexed_each_where_it_is() -> None:
    # A note typed at the top and a line changed at the end of a long file while it was
    # lexed: two lines lexed again, not the 20,000 between them.
    lines = [f"x = {number}  # comment {number}" for number in range(20_000)]
    index = CommentIndex(lines, SYNTAXES["python"])
    edited = ["# stet: at the top", *lines[1:-1], "y = 2"]
    assert index.catch_up(edited, [(0, 1, 1), (19_999, 1, 1)]) == 2
    assert index.comments == CommentIndex(edited, SYNTAXES["python"]).comments


HOSTILE = [
    ("yaml", ["'", " '", ": '", "''", '"\\', "a#", "- |", ": >-", " - ? :"]),
    ("rust", ["'", "'\\u{", "r#", "r" + "#" * 50, 'br"\\', '"\\', "/*", "/**/", "/*/"]),
    ("csharp", ['"', '"""', '@"', '""', '$@"\\']),
    ("shellscript", ["<<'", '<<"', "<<a ", "$((<<'x", "\\", "a#", "$'\\'"]),
    ("python", ['r"\\', '"""\\', "'''", 'f"{', "f'{(", 'f"{"', "f'''{'''", 'f"{x:{']),
    ("go", ["`\\", "'\\'"]),
    (
        "javascript",
        [
            "=/[",
            "(/\\",
            "=/[(/",
            "(/[" + "a" * 63,
            "=/" + "\\/" * 300,
            "(/'",
            "[" + "/[" * 31 + "]",
        ],
    ),
]


@pytest.mark.parametrize(
    "language, piece",
    [(language, piece) for language, pieces in HOSTILE for piece in pieces],
)
def test_lexing_hostile_text_stays_linear(language: str, piece: str) -> None:
    """200,000 characters of one piece, as one line and as lines of 80: a lexer that looked
    again at what it passed would take minutes."""
    text = piece * (200_000 // len(piece))
    for lines in ([text], [text[at : at + 80] for at in range(0, len(text), 80)]):
        within(20, lambda lines=lines: CommentIndex(lines, SYNTAXES[language]))


@pytest.mark.parametrize(
    "language, text",
    [
        ("shellscript", "cat <<" + "E" * 100_000 + "\n" + "x\n" * 100_000),
        ("shellscript", "cat " + "<<a " * 50_000 + "\n" + "a\n" * 100_000),
        ("shellscript", "cat <<-E\n" + "\t" * 100_000 + "x\n" + "\tE\n" * 100_000),
        ("csharp", 'r = $"' + '"' * 100_000 + "\n" + "x\n" * 100_000),
        ("rust", "r = r" + "#" * 100_000 + '"\n' + "x\n" * 100_000),
        ("shellscript", "cat <<" + "E" * 100_000 + " $((\n" + "x <<a\n" * 100_000),
        ("shellscript", "cat " + ("<<" + "E" * 6_000 + " ") * 16 + "$((\n" + "))<<b((\n" * 100_000),
    ],
    ids=[
        "long delimiter",
        "many heredocs",
        "tabs",
        "long raw opener",
        "many hashes",
        "long delimiter over arithmetic",
        "many heredocs over arithmetic",
    ],
)
def test_long_lived_states_cost_each_line_its_own_length(language: str, text: str) -> None:
    lines = text.split("\n")
    index = within(20, lambda: CommentIndex(lines, SYNTAXES[language]))
    within(20, lambda: index.update(["x", *lines[1:]], 0, 1, 1))  # all of it again


def test_an_update_past_its_limit_says_so_and_a_fresh_lex_is_the_answer() -> None:
    """A string opened above thousands of lines changes how every one of them lexes: with a
    limit, update stops past it (None) rather than lex them all where it was called (the
    server's loop), and the caller lexes the text again whole."""
    syntax = SYNTAXES["python"]
    lines = ["x = 1  # stet: note"] * 10_000
    index = CommentIndex(lines, syntax)
    opened = ['"""', *lines]
    assert index.update(opened, 0, 0, 1, limit=2000) is None
    closed_again = CommentIndex(opened, syntax)
    assert closed_again.update(lines, 0, 1, 0, limit=2000) is None
    # So does bringing a lexed text up to edits made while it was lexed (a string closed).
    lexed_before = CommentIndex(opened, syntax)
    assert lexed_before.catch_up(lines, [(0, 1, 0)], limit=2000) is None
    # Within the limit, the same answer as a full lex.
    small = CommentIndex(lines[:100], syntax)
    assert small.update(['"""', *lines[:100]], 0, 0, 1, limit=2000) == 101
    assert small.comments == CommentIndex(['"""', *lines[:100]], syntax).comments


def test_notes_in_a_run_of_comments_anchor_to_the_nearest_code() -> None:
    """Each note of a long run of comments anchors to the first code line after it (or, at
    the file's end, the last one before it), whatever the others found on the way; a file of
    nothing but notes is read once, not once a note (it held a server for minutes)."""
    layout = ["x = 1"] + ["# stet: a"] * 3 + ["", "# plain", "y = 2"] + ["# stet: b"] * 4
    lines = "\n".join(layout).split("\n")
    notes = find_notes(lines, CommentIndex(lines, SYNTAXES["python"]))
    assert [(note.line, note.anchor_line) for note in notes] == [
        (1, 6),
        (2, 6),
        (3, 6),
        (7, 6),
        (8, 6),
        (9, 6),
        (10, 6),
    ]
    many = ["# stet: n"] * 50_000
    index = CommentIndex(many, SYNTAXES["python"])
    assert len(within(30, lambda: find_notes(many, index))) == 50_000


def removed_one_at_a_time(lines: list[str], notes: list[MarginNote]) -> list[str]:
    """Each note's removal made in the list itself, from the last note up: what recording
    them did before the lines were copied once (a whole list moved a note)."""
    kept = list(lines)
    for note in sorted(notes, key=lambda note: note.line, reverse=True):
        line, column, end_line, end = note.removal
        tail = kept[end_line][end:] if end_line < len(kept) else ""
        kept[line : end_line + 1] = [kept[line][:column] + tail]
    return kept


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.lists(line_pieces, max_size=3).map(" ".join), min_size=1, max_size=40),
    st.sampled_from(["python", "javascript", "go", "c", "rust", "csharp", "shellscript", "yaml"]),
)
def test_notes_recorded_together_move_as_each_removal_moves_them(
    lines: list[str], language: str
) -> None:
    """Recording every note of a file computes the anchors and the text left in one pass
    over the notes and the lines: the same as moving each anchor past every removal, and
    making each removal in turn."""
    notes = find_notes(lines, CommentIndex(lines, SYNTAXES[language]))
    removals = [note.removal for note in notes]
    assert anchor_lines_after_removal(notes) == [
        line_after_removals(note.anchor_line, removals) for note in notes
    ]
    assert without_notes(lines, notes) == removed_one_at_a_time(lines, notes)


def test_hundreds_of_notes_among_repeated_lines_are_recorded_as_one_at_a_time() -> None:
    lines = notes_among_repeated_lines(4_000)
    notes = find_notes(lines, CommentIndex(lines, SYNTAXES["python"]))
    assert len(notes) > 600
    removals = [note.removal for note in notes]
    assert anchor_lines_after_removal(notes) == [
        line_after_removals(note.anchor_line, removals) for note in notes
    ]
    assert without_notes(lines, notes) == removed_one_at_a_time(lines, notes)
