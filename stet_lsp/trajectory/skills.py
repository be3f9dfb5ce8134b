"""Proposed house style in the Agent Skills format: `.stet/skills/<name>/SKILL.md`.

The format is the open Agent Skills specification (https://agentskills.io/specification; its
source is docs/specification.mdx in github.com/agentskills/agentskills, whose `skills-ref`
validator checks the same rules). A SKILL.md is YAML frontmatter between two `---` lines,
then a Markdown body. The rules checked here, each problem named by its field:

- only the spec's fields: `name`, `description`, `license`, `compatibility`, `metadata`,
  `allowed-tools`;
- `name`: 1 to 64 characters, lowercase letters `a-z`, digits and hyphens only, no hyphen
  first or last, no `--`, and equal to the skill's folder name;
- `description`: a string of 1 to 1,024 characters (what the skill does and when to use it);
- `compatibility`: 1 to 500 characters; `license`: a string; `allowed-tools`: a string or a
  list of strings;
- `metadata`: a map from string keys to string values;
- size: the spec's guidance, SKILL.md under 500 lines and its body under about 5,000 tokens
  (four characters a token, the estimate the brief uses). Stet never writes a skill past it.

Stet writes the frontmatter itself, in a fixed order with every value but the name quoted
(JSON strings, which YAML reads as double-quoted scalars), so the same skill always gives the
same bytes and no value can be misread (`yes`, `1.0`, a `#`). It reads frontmatter with
PyYAML's safe loader (installed with detect-secrets, which needs it).
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass, field, replace
from pathlib import PurePosixPath
from typing import Any

from stet_lsp.core.errors import StetError
from stet_lsp.trajectory.jsontext import without_lone_surrogates

SKILLS = PurePosixPath(".stet") / "skills"
SKILL_FILE = "SKILL.md"
NAME_MAX = 64
DESCRIPTION_MAX = 1024
COMPATIBILITY_MAX = 500
FILE_LINES_MAX = 500
BODY_TOKENS_MAX = 5000
CHARS_PER_TOKEN = 4
SKILL_LIMIT = 4 * 1024 * 1024
"""The most bytes of a SKILL.md that are read (graduation extending it, the capstone committing
it): the spec keeps a skill under 500 lines and its body under about 5,000 tokens, some 20 KB,
while a repository could commit a SKILL.md of gigabytes that git compresses to almost nothing.
One over it is refused, naming it, before any of it is read."""
FIELDS = ("name", "description", "license", "compatibility", "allowed-tools", "metadata")
"""The spec's frontmatter fields, in the order Stet writes them."""

META_ENTRIES = "stet-entries"
META_TARGET = "stet-target"
META_TRAJECTORY = "stet-trajectory"
_METADATA_LINE = re.compile(
    r"metadata\s*:[ \t]*(?:(?:null|Null|NULL|~)(?=[ \t]|$))?[ \t]*(?:#.*)?$"
)
_NULL_METADATA = re.compile(r"^(metadata\s*:)[ \t]*(?:null|Null|NULL|~)(?=[ \t]|$)")
_BLOCK_KEY = re.compile(r"""\s+("(?:[^"\\]|\\.)*"|'[^']*'|[^\s:#'"][^:#]*?)\s*:(\s|$)""")
"""Provenance under `metadata`: the style-sheet entry ids (space-separated), the targets they
came from (comma-separated names) and the working trajectories that recorded them."""

DEFAULT_NAME = "house-style"
CONTEXT_LINE_CHARS = 200
_SUMMARY_CHARS = 300
_HEADING_CHARS = 72
_NAME_WORDS = 4
_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_NAME_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-")
_PLAIN_KEY = re.compile(r"[A-Za-z][A-Za-z0-9_.-]*")
_MARKER = re.compile(r"\[(?:REDACTED|OMITTED):[^\]]*\]")
# What YAML cannot hold as a raw character in a double-quoted scalar, or reads as a line break.
_YAML_UNSAFE = re.compile(
    "[^\t\n\r\x20-\x7e\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]|[\u2028\u2029\ufeff]"
)
_COMMON_WORDS = """a an the and or but of to in on at for with by from as is are was were be been
being it its this that these those there here we you they our your their use uses using used
always should must do does don doesn can could would will shall may might into onto than then so
such via per when where which who what how why if else also only just very all any each every
instead"""
_STOP_WORDS = frozenset(_COMMON_WORDS.split())
"""Words left out of a proposed skill name: they say nothing of what the skill is about."""
_LANGUAGES = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".ts": "typescript",
    ".tsx": "tsx",
    ".jsx": "jsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".kt": "kotlin",
    ".rb": "ruby",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".hpp": "cpp",
    ".cs": "csharp",
    ".swift": "swift",
    ".php": "php",
    ".sh": "sh",
    ".lua": "lua",
    ".sql": "sql",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".toml": "toml",
    ".json": "json",
    ".md": "markdown",
}


@dataclass
class Skill:
    """One SKILL.md: the spec's fields and the Markdown body (kept as written)."""

    name: str
    description: str
    body: str
    metadata: dict[str, str] = field(default_factory=dict)
    optional: dict[str, Any] = field(default_factory=dict)
    """`license`, `compatibility` and `allowed-tools` as read."""

    @property
    def entry_ids(self) -> list[str]:
        return self.metadata.get(META_ENTRIES, "").split()


@dataclass(frozen=True)
class Context:
    """The code an entry was anchored to: a few lines around its current line."""

    path: str
    line: int
    first: int
    lines: tuple[str, ...]
    omitted: bool = False
    """True when `.stetignore` names the file: its path is shown, never its content."""


# -- names ------------------------------------------------------------------------------------


def check_name(name: object, folder: str | None = None) -> list[str]:
    """What is wrong with `name` as a skill's name (empty: nothing), each problem naming the
    spec's rule; `folder`: the name of the folder the SKILL.md is in."""
    if not isinstance(name, str) or not name:
        return ["name: required, a string of 1 to 64 characters"]
    problems = []
    if len(name) > NAME_MAX:
        problems.append(f"name: at most {NAME_MAX} characters (it has {len(name)})")
    odd = "".join(sorted({char for char in name if char not in _NAME_CHARACTERS}))
    if odd:
        problems.append(
            f"name: only lowercase letters a-z, digits and hyphens (not {json.dumps(odd)})"
        )
    if name.startswith("-") or name.endswith("-"):
        problems.append("name: must not start or end with a hyphen")
    if "--" in name:
        problems.append("name: must not contain consecutive hyphens (--)")
    if folder is not None and folder != name:
        problems.append(f"name: must match the skill's folder name ({json.dumps(folder)})")
    return problems


def propose_gated_name(text: str) -> str:
    """`propose_name` of the text after the gate (as SKILL.md): no part of a secret can reach
    a folder name."""
    from stet_lsp.gate import redact_text

    return propose_name(
        redact_text(without_lone_surrogates(text), path="SKILL.md", cache=None).text
    )


def propose_name(text: str) -> str:
    """A skill name from an entry's text: its first few words that say something (common
    words, one-letter words and redaction markers left out), lowercased, ASCII, joined by
    hyphens, at most 64 characters; `house-style` when no word is left."""
    plain = unicodedata.normalize("NFKD", _MARKER.sub(" ", text))
    words: list[str] = []
    for word in re.findall(r"[a-z0-9]+", plain.encode("ascii", "ignore").decode().lower()):
        if len(word) > 1 and word not in _STOP_WORDS and word not in words:
            words.append(word[:NAME_MAX])
        if len(words) == _NAME_WORDS:
            break
    while len("-".join(words)) > NAME_MAX:
        words.pop()
    return "-".join(words) or DEFAULT_NAME


def skill_path(name: str) -> PurePosixPath:
    """`.stet/skills/<name>/SKILL.md`, relative to the repository (the name is checked)."""
    problems = check_name(name)
    if problems:
        raise StetError(f"skill name {json.dumps(name)} refused: {'; '.join(problems)}")
    return SKILLS / name / SKILL_FILE


# -- reading and checking ---------------------------------------------------------------------


def validate_skill(text: str, folder: str | None = None) -> list[str]:
    """Every way `text` breaks the Agent Skills spec (empty: none), each naming its rule;
    `folder`: the skill's folder name, which `name` must equal."""
    try:
        fields, body = _split(text)
    except StetError as error:
        return [str(error)]
    problems = [
        f"frontmatter: unknown field {json.dumps(str(key))} (the spec allows {', '.join(FIELDS)})"
        for key in fields
        if key not in FIELDS
    ]
    problems += check_name(fields.get("name"), folder)
    problems += _check_description(fields.get("description"))
    problems += _check_optional(fields)
    problems += _check_metadata(fields.get("metadata"))
    problems += _check_size(text, body)
    return problems


def parse_skill(text: str, folder: str | None = None) -> Skill:
    """A SKILL.md that follows the spec (StetError naming every rule it breaks otherwise)."""
    problems = validate_skill(text, folder)
    if problems:
        raise StetError("; ".join(problems))
    fields, body = _split(text)
    metadata = fields.get("metadata") or {}
    optional = {key: fields[key] for key in FIELDS[2:5] if key in fields}
    return Skill(fields["name"], fields["description"], body, dict(metadata), optional)


def _split(text: str) -> tuple[dict[Any, Any], str]:
    """The frontmatter as a mapping, and the body (what follows the closing `---`)."""
    import yaml

    lines = text.split("\n")
    if not lines or lines[0].rstrip("\r") != "---":
        raise StetError("frontmatter: SKILL.md must start with a `---` line")
    closing = next((n for n, line in enumerate(lines[1:], 1) if line.rstrip("\r") == "---"), None)
    if closing is None:
        raise StetError("frontmatter: no closing `---` line")
    try:
        fields = yaml.safe_load("\n".join(lines[1:closing]))
    except yaml.YAMLError as error:
        where = getattr(error, "problem_mark", None)
        at = f" at line {where.line + 2}" if where is not None else ""
        raise StetError(f"frontmatter: not valid YAML{at}") from None
    except RecursionError:  # flow collections nested deeper than the parser goes
        raise StetError("frontmatter: not valid YAML (nested too deeply)") from None
    if not isinstance(fields, dict):
        raise StetError("frontmatter: must be a YAML mapping of fields")
    return fields, "\n".join(lines[closing + 1 :])


def _check_description(description: object) -> list[str]:
    if not isinstance(description, str) or not description.strip():
        return ["description: required, 1 to 1,024 characters saying what the skill does and when"]
    if len(description) > DESCRIPTION_MAX:
        return [f"description: at most 1,024 characters (it has {len(description):,})"]
    return []


def _check_optional(fields: dict[Any, Any]) -> list[str]:
    problems = []
    if "license" in fields and not isinstance(fields["license"], str):
        problems.append("license: must be a string (a license name or a bundled file)")
    if "compatibility" in fields:
        value = fields["compatibility"]
        if not isinstance(value, str) or not 1 <= len(value) <= COMPATIBILITY_MAX:
            problems.append("compatibility: must be a string of 1 to 500 characters")
    if "allowed-tools" in fields:
        tools = fields["allowed-tools"]
        listed = isinstance(tools, list) and all(isinstance(tool, str) for tool in tools)
        if not isinstance(tools, str) and not listed:
            problems.append("allowed-tools: must be a space-delimited string or a list of strings")
    return problems


def _check_metadata(metadata: object) -> list[str]:
    if metadata is None:
        return []
    if not isinstance(metadata, dict):
        return ["metadata: must be a map from string keys to string values"]
    return [
        f"metadata: {json.dumps(str(key))} must be a string key with a string value"
        for key, value in metadata.items()
        if not isinstance(key, str) or not isinstance(value, str)
    ]


def _check_size(text: str, body: str) -> list[str]:
    problems = []
    lines = len(text.rstrip("\n").split("\n"))
    if lines >= FILE_LINES_MAX:
        problems.append(f"size: SKILL.md has {lines} lines; the spec keeps it under 500")
    tokens = -(-len(body) // CHARS_PER_TOKEN)
    if tokens >= BODY_TOKENS_MAX:
        problems.append(
            f"size: the body is about {tokens:,} tokens; the spec recommends under 5,000"
        )
    return problems


# -- writing ----------------------------------------------------------------------------------


def render_skill(skill: Skill) -> str:
    """The SKILL.md text: frontmatter in the spec's field order, then the body."""
    lines = ["---", f"name: {_scalar(skill.name)}", f"description: {_quoted(skill.description)}"]
    for key, value in skill.optional.items():
        lines.append(f"{key}: {_value(value)}")
    if skill.metadata:
        lines.append("metadata:")
        lines += [f"  {_key(key)}: {_quoted(value)}" for key, value in skill.metadata.items()]
    lines.append("---")
    return "\n".join(lines) + "\n" + skill.body


def rewrite_skill(written: str, skill: Skill) -> str:
    """`skill`, which was read from `written` (its metadata and body since changed), with the
    frontmatter kept as the person wrote it (comments, order, folded scalars, line endings):
    only the metadata keys whose values changed are rewritten in place, or added after the
    `metadata` block's last key (a block made when there is none, or it is empty or null).
    StetError when the frontmatter cannot be changed so (metadata written as a flow
    mapping, an anchor, a quoted key), or would read back otherwise."""
    crlf = "\r\n" in written
    lines = written.replace("\r\n", "\n").split("\n")
    closing = next(n for n, line in enumerate(lines[1:], 1) if line == "---")
    front = lines[1:closing]
    before = parse_skill(written, folder=skill.name)
    changed = {k: v for k, v in skill.metadata.items() if before.metadata.get(k) != v}
    start = next((n for n, line in enumerate(front) if _METADATA_LINE.match(line)), None)
    if start is None:
        if any(re.match(r"[\"']?metadata[\"']?\s*:", line) for line in front):
            raise StetError("write its metadata as a block mapping (`metadata:`, a key a line)")
        front.append("metadata:")
        start = len(front) - 1
    else:
        # A null value goes; the rest of the line (its comment) stays as written.
        front[start] = _NULL_METADATA.sub(r"\1", front[start])
    end = start + 1
    while end < len(front) and (_blank_or_comment(front[end]) or front[end][:1] in (" ", "\t")):
        end += 1
    block = front[start + 1 : end]
    keys = [n for n, line in enumerate(block) if not _blank_or_comment(line)]
    indent = block[keys[0]][: len(block[keys[0]]) - len(block[keys[0]].lstrip())] if keys else "  "
    for key, value in changed.items():
        line = f"{indent}{_key(key)}: {_quoted(value)}"
        found = next(
            (
                n
                for n in keys
                if _key_of(block[n]) == key and block[n][len(indent) :][:1] not in (" ", "\t")
            ),
            None,
        )
        if found is not None:
            block[found] = line
        else:
            at = keys[-1] + 1 if keys else 0
            block.insert(at, line)
            keys = [*[n for n in keys if n < at], at, *[n + 1 for n in keys if n >= at]]
    front[start + 1 : end] = block
    text = "\n".join(["---", *front, "---"]) + "\n" + skill.body.replace("\r\n", "\n")
    if crlf:
        text = text.replace("\n", "\r\n")
    # The frontmatter read back (the whole file is checked against the spec by the caller:
    # a body grown past its size is the skill's problem, not its frontmatter's).
    fields, _ = _split(text)
    optional = {key: fields[key] for key in FIELDS[2:5] if key in fields}
    metadata = dict(fields.get("metadata") or {})
    if (fields.get("name"), fields.get("description"), optional, metadata) != (
        skill.name,
        skill.description,
        skill.optional,
        skill.metadata,
    ):
        raise StetError("its frontmatter would not read back the same once changed")
    return text


def _blank_or_comment(line: str) -> bool:
    return not line.strip() or line.lstrip().startswith("#")


def _key_of(line: str) -> str | None:
    """The key of a `key: value` line of a block mapping (quoted or not)."""
    import yaml

    found = _BLOCK_KEY.match(line)
    if found is None:
        return None
    try:
        key = yaml.safe_load(found.group(1))
    except yaml.YAMLError:
        return None
    return key if isinstance(key, str) else None


def new_skill(name: str, description: str, target_label: str) -> Skill:
    """An empty skill: its title and a paragraph saying where it came from."""
    title = name.replace("-", " ").capitalize()
    body = (
        f"\n# {title}\n\n"
        f"House style proposed from the style sheet of `{target_label}` by Stet's graduation.\n"
        "Each section below is one style-sheet entry, reviewed like any change; the\n"
        "repository's own instructions take precedence over it.\n"
    )
    return Skill(name=name, description=description, body=body)


def describe(text: str, where: str | None = None) -> str:
    """A description (1 to 1,024 characters): what the skill holds, from the entry's first
    sentence, and when to use it."""
    first = " ".join(_strip(text).split())
    sentence = shorten(re.split(r"(?<=[.!?])\s", first, maxsplit=1)[0], _SUMMARY_CHARS)
    if not sentence.endswith((".", "!", "?", "…")):
        sentence += "."
    scope = f", such as {where}" if where else ""
    return f"{sentence} Use when writing or reviewing code in this repository{scope}."


def with_entry(
    skill: Skill,
    entry_id: str,
    text: str,
    context: Context | None,
    provenance: dict[str, str],
) -> Skill:
    """The skill with the entry added as a section at the end of its body and its id (and
    where it came from: `stet-target`, `stet-trajectory`) in `metadata`; the same skill when
    the entry is already in it."""
    if entry_id in skill.entry_ids:
        return skill
    metadata = dict(skill.metadata)
    metadata[META_ENTRIES] = " ".join([*skill.entry_ids, entry_id])
    for key, value in provenance.items():
        separator = ", " if key == META_TARGET else " "
        known = [v for v in metadata.get(key, "").split(separator) if v]
        metadata[key] = separator.join(known if value in known else [*known, value])
    body = skill.body.rstrip("\n") + "\n\n" + section(text, context)
    return replace(skill, body=body, metadata=metadata)


def section(text: str, context: Context | None) -> str:
    """An entry as a body section: a heading from its first line, its text, and the code it
    was anchored to. The text is Markdown that cannot break the skill around it (as in
    narration.md): a heading or setext underline in it is escaped, HTML shown as text, and a
    fence it leaves open closed, so the next entry's section is not swallowed by it."""
    from stet_lsp.trajectory.narration import contained_markdown

    clean = _strip(text)
    first_line = clean.split("\n", 1)[0]
    parts = [f"## {shorten(first_line, _HEADING_CHARS)}", "", *contained_markdown(clean)]
    if context is not None:
        parts += ["", *_context_lines(context)]
    return "\n".join(parts) + "\n"


def shorten(text: str, limit: int) -> str:
    """`text` on one line in at most `limit` characters: cut at a space when there is one in
    its second half, never inside a redaction marker, and ended with "…". Cut only text
    that passed the gate: a secret cut short is one the gate may no longer recognise."""
    one = " ".join(text.split())
    if len(one) <= limit:
        return one
    cut = one[: limit - 1]
    for marker in _MARKER.finditer(one):
        if marker.start() < len(cut) < marker.end():
            cut = cut[: marker.start()]
    space = cut.rfind(" ")
    if space > len(cut) // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:") + "…"


def _context_lines(context: Context) -> list[str]:
    where = f"{_code_span(context.path)}, line {context.line}"
    if context.omitted:
        return [f"Noted at {where} (its content is not shown: `.stetignore` names it)."]
    if not context.lines:
        return [f"Noted at {where}."]
    shown = [line[:CONTEXT_LINE_CHARS] for line in context.lines]
    longest = max((len(run) for line in shown for run in re.findall("`+", line)), default=0)
    fence = "`" * max(3, longest + 1)
    language = _LANGUAGES.get(PurePosixPath(context.path).suffix.lower(), "")
    return [f"Noted at {where}:", "", f"{fence}{language}", *shown, fence]


def _code_span(text: str) -> str:
    """`text` as one Markdown code span on one line: a line break (a file may be named with
    one) written `\\n`, the backticks around it more than any run inside."""
    flat = text.replace("\r", "\\r").replace("\n", "\\n")
    ticks = "`" * (max((len(run) for run in re.findall("`+", flat)), default=0) + 1)
    padding = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{ticks}{padding}{flat}{padding}{ticks}"


def _strip(text: str) -> str:
    return without_lone_surrogates(text).strip()


def _scalar(name: str) -> str:
    """A name bare when YAML reads it back as the same string (`null`, `yes` it would not)."""
    import yaml

    return name if _NAME.fullmatch(name) and yaml.safe_load(name) == name else _quoted(name)


def _key(key: str) -> str:
    import yaml

    return key if _PLAIN_KEY.fullmatch(key) and yaml.safe_load(key) == key else _quoted(key)


def _value(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_quoted(str(item)) for item in value) + "]"
    return _quoted(str(value))


def _quoted(value: str) -> str:
    """A JSON string, which YAML reads as the same double-quoted scalar once the characters
    YAML cannot hold raw (or reads as line breaks) are escaped too."""
    text = json.dumps(without_lone_surrogates(value), ensure_ascii=False)
    return _YAML_UNSAFE.sub(lambda found: f"\\u{ord(found.group()):04x}", text)
