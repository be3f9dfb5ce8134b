"""The Agent Skills format (agentskills.io/specification): names, the validator, the writer."""

from __future__ import annotations

from dataclasses import replace

import pytest
import yaml

from stet_lsp.core.errors import StetError
from stet_lsp.trajectory.skills import (
    Context,
    Skill,
    check_name,
    describe,
    new_skill,
    parse_skill,
    propose_name,
    render_skill,
    rewrite_skill,
    section,
    shorten,
    skill_path,
    validate_skill,
    with_entry,
)

GOOD = """---
name: pdf-processing
description: Extract PDF text, fill forms, merge files. Use when handling PDFs.
license: Apache-2.0
metadata:
  author: example-org
  version: "1.0"
---

# PDF processing
"""


def skill_text(frontmatter: str, body: str = "\n# Body\n") -> str:
    return f"---\n{frontmatter}---\n{body}"


def test_the_specs_own_example_is_valid() -> None:
    assert validate_skill(GOOD) == []
    assert validate_skill(GOOD, folder="pdf-processing") == []
    skill = parse_skill(GOOD)
    assert skill.name == "pdf-processing"
    assert skill.metadata == {"author": "example-org", "version": "1.0"}
    assert skill.optional == {"license": "Apache-2.0"}
    assert skill.body == "\n# PDF processing\n"


@pytest.mark.parametrize(
    ("name", "rule"),
    [
        ("PDF-Processing", "name: only lowercase letters a-z, digits and hyphens"),
        ("-pdf", "name: must not start or end with a hyphen"),
        ("pdf-", "name: must not start or end with a hyphen"),
        ("pdf--processing", "name: must not contain consecutive hyphens"),
        ("a" * 65, "name: at most 64 characters (it has 65)"),
        ("pdf_processing", 'only lowercase letters a-z, digits and hyphens (not "_")'),
        ("café", "only lowercase letters a-z, digits and hyphens"),
        ("", "name: required"),
    ],
)
def test_each_name_rule_is_named(name: str, rule: str) -> None:
    problems = check_name(name)
    assert any(rule in problem for problem in problems), problems
    with pytest.raises(StetError, match="refused"):
        skill_path(name)


def test_good_names() -> None:
    for name in ("pdf-processing", "a", "x" * 64, "http2-retries", "3d"):
        assert check_name(name) == [], name
    assert str(skill_path("retry-helper")) == ".stet/skills/retry-helper/SKILL.md"


def test_the_name_must_match_the_folder() -> None:
    assert validate_skill(GOOD, folder="other") == [
        'name: must match the skill\'s folder name ("other")'
    ]


@pytest.mark.parametrize(
    ("frontmatter", "rule"),
    [
        ("description: no name\n", "name: required"),
        ("name: x\n", "description: required"),
        ('name: x\ndescription: ""\n', "description: required"),
        (f"name: x\ndescription: {'d' * 1025}\n", "description: at most 1,024 characters"),
        ("name: x\ndescription: d\nmood: good\n", 'frontmatter: unknown field "mood"'),
        ("name: x\ndescription: d\nmetadata:\n  version: 1.0\n", 'metadata: "version" must'),
        ("name: x\ndescription: d\nmetadata: [a]\n", "metadata: must be a map"),
        ("name: x\ndescription: d\ncompatibility: ''\n", "compatibility: must be a string of 1"),
        ("name: x\ndescription: d\nallowed-tools: {a: 1}\n", "allowed-tools: must be"),
        ("name: x\ndescription: d\nlicense: 3\n", "license: must be a string"),
        ("name: 12\ndescription: d\n", "name: required, a string"),
        ("name: [x\n", "frontmatter: not valid YAML"),
        ("- a list\n", "frontmatter: must be a YAML mapping"),
    ],
)
def test_each_field_rule_is_named(frontmatter: str, rule: str) -> None:
    problems = validate_skill(skill_text(frontmatter))
    assert any(rule in problem for problem in problems), problems


def test_frontmatter_must_open_and_close() -> None:
    assert validate_skill("# no frontmatter\n") == [
        "frontmatter: SKILL.md must start with a `---` line"
    ]
    assert validate_skill("---\nname: x\n") == ["frontmatter: no closing `---` line"]
    with pytest.raises(StetError, match="closing"):
        parse_skill("---\nname: x\n")


def test_allowed_tools_as_string_or_list() -> None:
    for tools in ("Bash(git:*) Read", "[Read, Write]"):
        assert (
            validate_skill(skill_text(f"name: x\ndescription: d\nallowed-tools: {tools}\n")) == []
        )


def test_size_guidance() -> None:
    long_file = skill_text("name: x\ndescription: d\n", "\n" + "line\n" * 500)
    assert any("size: SKILL.md has" in p and "under 500" in p for p in validate_skill(long_file))
    heavy = skill_text("name: x\ndescription: d\n", "\n" + "word " * 4000 + "\n")
    assert any("recommends under 5,000" in p for p in validate_skill(heavy))
    assert validate_skill(skill_text("name: x\ndescription: d\n", "\n" + "line\n" * 400)) == []


def test_proposed_names() -> None:
    assert propose_name("Use the retry helper for HTTP calls") == "retry-helper-http-calls"
    assert propose_name("HTTP calls go through payments.http.session()") == (
        "http-calls-go-through"
    )
    assert propose_name("Ärger: Straße über Café") == "arger-strae-uber-cafe"
    assert propose_name("the a of [REDACTED:github-token#1]") == "house-style"
    assert propose_name("!!!") == "house-style"
    long = propose_name(
        " ".join(["abcdefghijklmnopqrstuvwxyz"] * 2 + ["zyxwvutsrqponmlkjihgfedcba"])
    )
    assert len(long) <= 64 and check_name(long) == []
    for text in ("x" * 200, "ab " * 50, "A--B", "123 456", "-lead trail-"):
        assert check_name(propose_name(text)) == [], text


def test_rendered_skills_read_back_the_same() -> None:
    """Values YAML would misread bare (`yes`, `1.0`, `#`, `: `, line breaks YAML knows and
    JSON does not) come back as written."""
    odd = 'yes: 1.0 # not a comment\n\u2028next\u0085 \x7f \ufeff é 😀 "quoted" \\'
    skill = Skill(
        name="null",
        description=odd,
        body="\n# Body\n",
        metadata={"stet-entries": "a b", "yes": "no", "odd key": odd},
        optional={"license": "MIT", "allowed-tools": ["Read", "Bash(git:*)"]},
    )
    text = render_skill(skill)
    assert validate_skill(text, folder="null") == []
    fields = yaml.safe_load(text.split("---\n")[1])
    assert fields["name"] == "null" and fields["description"] == odd
    assert fields["metadata"] == skill.metadata
    assert parse_skill(text) == skill
    assert render_skill(parse_skill(text)) == text


def test_a_new_skill_with_an_entry() -> None:
    context = Context("src/app.py", 7, 5, ("a = 1", "b = ```x```", "c = 3"))
    description = describe("Wrap errors with wrap_error(). Always.", "src/app.py")
    assert description == (
        "Wrap errors with wrap_error(). Use when writing or reviewing code in this repository, "
        "such as src/app.py."
    )
    skill = with_entry(
        new_skill("wrap-errors", description, "main"),
        "abc123",
        "Wrap errors with wrap_error().\nNever raise bare.",
        context,
        {"stet-target": "main", "stet-trajectory": "branch--main--x"},
    )
    text = render_skill(skill)
    assert validate_skill(text, folder="wrap-errors") == []
    assert skill.metadata == {
        "stet-entries": "abc123",
        "stet-target": "main",
        "stet-trajectory": "branch--main--x",
    }
    assert (
        "## Wrap errors with wrap_error().\n\nWrap errors with wrap_error().\nNever raise bare."
        in text
    )
    assert "Noted at `src/app.py`, line 7:\n\n````python\na = 1\nb = ```x```\nc = 3\n````\n" in text
    # the same entry again changes nothing; another is added below, its provenance merged
    assert with_entry(skill, "abc123", "again", None, {}) is skill
    more = with_entry(
        skill,
        "def456",
        "Second.",
        None,
        {"stet-target": "other", "stet-trajectory": "branch--main--x"},
    )
    assert more.entry_ids == ["abc123", "def456"]
    assert more.metadata["stet-target"] == "main, other"
    assert more.metadata["stet-trajectory"] == "branch--main--x"
    assert more.body.endswith("\n\n## Second.\n\nSecond.\n")


def test_sections_of_anchors_without_code() -> None:
    assert section("x", Context("a.py", 3, 0, ())).endswith("Noted at `a.py`, line 3.\n")
    odd = section("x", Context("we ird\nname `b`.py", 3, 0, ()))
    assert odd.endswith("Noted at ``we ird\\nname `b`.py``, line 3.\n")  # one line, one span
    omitted = section("x", Context("secret.env", 3, 0, (), omitted=True))
    assert "`.stetignore` names it" in omitted
    heading = section("word " * 40, None).split("\n")[0]
    assert heading.startswith("## word word") and heading.endswith("…") and len(heading) <= 76


def test_an_entrys_markdown_cannot_break_the_skill_around_it() -> None:
    """A heading, a setext underline, an HTML comment or an open fence in an entry's text
    stays in its own section: the next entry's heading is still a heading of the skill."""
    text = "Fence the examples\n# Top heading\nSetext\n---\n<!-- hidden\n```python\nopen fence"
    skill = with_entry(new_skill("house", "House.", "main"), "abc123", text, None, {})
    skill = with_entry(skill, "def456", "Second rule.", None, {})
    body = skill.body.split("## Fence the examples\n\n", 1)[1]
    assert body == (
        "Fence the examples\n\\# Top heading\nSetext\n\\---\n&lt;!-- hidden\n"
        "```python\nopen fence\n```\n\n## Second rule.\n\nSecond rule.\n"
    )
    assert validate_skill(render_skill(skill), folder="house") == []
    closed = "Run it:\n```sh\nmake\n```\nthen push."
    assert section(closed, None) == f"## Run it:\n\n{closed}\n"  # kept as written


def test_description_is_cut_to_fit() -> None:
    description = describe("x" * 5000)
    assert len(description) <= 1024 and description.startswith("x" * 100)
    assert check_name(propose_name("x" * 5000)) == []


def test_shortening_never_cuts_a_marker() -> None:
    marker = "[REDACTED:github-token#1]"
    assert shorten("short", 10) == "short"
    assert shorten("a  b\n c", 10) == "a b c"
    assert shorten("x" * 20 + marker + " tail", 30) == "x" * 20 + "…"
    assert shorten("word " * 10, 20) == "word word word…"
    assert len(shorten("y" * 50, 20)) == 20


HEAD = "---\nname: s\ndescription: d\n"
BODY = "# Hi\n\nBody.\n"
ADDED = '  stet-entries: "a b"\n  stet-target: "main"\n'


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        # A comment before the keys, deeper than they are: the keys' indent is taken.
        ("metadata:\n    # why\n  author: me\n", "metadata:\n    # why\n  author: me\n" + ADDED),
        # A comment at column 0 inside the block does not end it.
        (
            "metadata:\n  author: me\n# ours\n  stet-entries: a\n",
            'metadata:\n  author: me\n# ours\n  stet-entries: "a b"\n  stet-target: "main"\n',
        ),
        ("metadata: null\n", "metadata:\n" + ADDED),
        ("metadata:  # ours\n  author: me\n", "metadata:  # ours\n  author: me\n" + ADDED),
        ("metadata: ~  # none yet\n", "metadata:  # none yet\n" + ADDED),
        ("metadata:\nlicense: MIT\n", "metadata:\n" + ADDED + "license: MIT\n"),
        (
            "metadata:\n  author: me\n  # the end\n",
            "metadata:\n  author: me\n" + ADDED + "  # the end\n",
        ),
        ("", "metadata:\n" + ADDED),
    ],
)
def test_rewrite_skill_changes_only_stets_metadata_lines(written: str, expected: str) -> None:
    text = HEAD + written + "---\n" + BODY
    skill = parse_skill(text, folder="s")
    metadata = skill.metadata | {"stet-entries": "a b", "stet-target": "main"}
    extended = replace(skill, metadata=metadata)
    assert rewrite_skill(text, extended) == HEAD + expected + "---\n" + BODY
    crlf = text.replace("\n", "\r\n")
    whole = (HEAD + expected + "---\n" + BODY).replace("\n", "\r\n")
    assert rewrite_skill(crlf, replace(extended, body=parse_skill(crlf).body)) == whole


@pytest.mark.parametrize("written", ["metadata: {author: me}\n", "metadata: &m\n  author: me\n"])
def test_rewrite_skill_refuses_what_it_cannot_change_line_by_line(written: str) -> None:
    text = HEAD + written + "---\n" + BODY
    skill = parse_skill(text, folder="s")
    with pytest.raises(StetError, match="block mapping"):
        rewrite_skill(text, replace(skill, metadata=skill.metadata | {"stet-entries": "a"}))
