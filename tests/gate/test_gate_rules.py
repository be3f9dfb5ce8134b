"""Individual rules, previews, allowlist, environment names, home paths."""

import json
import random
from collections.abc import Callable

import gate_corpus
import pytest
from test_gate_providers import redacted_everywhere

from stet_lsp.core.errors import StetError
from stet_lsp.gate import (
    RULE_NAMES,
    Allowlist,
    GateConfig,
    ResultCache,
    count_home_paths,
    normalize_home_paths,
    redact_text,
    scan_text,
)
from stet_lsp.gate.stream import scan_blocks

RNG = random.Random(99)


def token(prefix: str, alphabet: str = gate_corpus.ALNUM, length: int = 36) -> str:
    return prefix + gate_corpus.pick(RNG, alphabet, length)


def test_finding_positions_are_zero_based_characters() -> None:
    secret = token("ghp_")
    text = f"first line\n  é {secret} tail\n"
    [finding] = scan_text(text)
    assert (finding.line, finding.column) == (1, 4)
    assert (finding.end_line, finding.end_column) == (1, 4 + len(secret))
    assert text[finding.offset : finding.end_offset] == secret


def test_preview_shows_at_most_the_public_prefix() -> None:
    secret = token("ghp_")
    [finding] = scan_text(f"token {secret}")
    assert finding.preview == "gh…"
    assert secret[4:8] not in finding.preview


def test_previews_never_contain_secret_bodies() -> None:
    for case in gate_corpus.positive_cases()[:200]:
        for finding in scan_text(case.text, path=case.path):
            for secret in case.secrets:
                assert secret[:4] not in finding.preview or len(finding.preview) <= 3


def test_rule_names_are_marker_safe() -> None:
    for name in RULE_NAMES:
        assert name == name.lower() and all(c.isalnum() or c == "-" for c in name)


def test_whole_private_key_block_is_one_span() -> None:
    key, _parts = gate_corpus._pem("OPENSSH PRIVATE KEY")(RNG)
    text = f"before\n{key}\nafter\n"
    [finding] = scan_text(text)
    assert text[finding.offset : finding.end_offset] == key
    assert redact_text(text).text == "before\n[REDACTED:private-key#1]\nafter\n"


def test_truncated_private_key_still_redacts_its_body() -> None:
    key, parts = gate_corpus._pem("RSA PRIVATE KEY")(RNG)
    truncated = key.rsplit("\n", 3)[0]
    redacted = redact_text(f"log: {truncated}\n").text
    assert not gate_corpus.surviving_fragments(redacted, parts[:-2])


def test_whole_token_is_redacted_not_the_reported_value() -> None:
    body = gate_corpus.pick(RNG, gate_corpus.ALNUM, 36)
    text = f"x=ghp_{body}-_tail y"
    assert redact_text(text).text == "x=[REDACTED:github-token#1] y"


@pytest.mark.parametrize(
    "text",
    [
        "aws_access_key_id = AKIA" + "IOSFODNN7EXAMPLE",
        "GITHUB_TOKEN=<your-token>",
        "token: ${GITHUB_TOKEN}",
        "api_key: xxxxxxxxxxxxxxxxxxxxxxxx",
        "password: ${DB_PASSWORD}",
        "max_tokens: 4096",
        "pk_live_" + "a1B2c3D4" * 3,
        "https://example.org/images/3/35/2019-114-xoxo-festival-2.jpg",
        "    { &hf_measurementgapconfigurationdescription_r15,",
        "static int hf_measurementgapconfigurationdescription;",
        '_keyStr: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=",',
        'ID_ALPHABET_KEY = "0123456789abcdefghijklmnopqrstuvwxyz"',
    ],
)
def test_known_non_secrets(text: str) -> None:
    assert scan_text(text) == []


def test_legacy_slack_tokens_are_numbers_then_hex() -> None:
    token = "xoxs-" + "6150392847-7261839405-9182736450-" + "5e0c7a9b2d4f6183"
    assert [f.rule for f in scan_text(f"SLACK={token}")] == ["slack-token"]


PLACEHOLDERS = [
    'api_key = "sk-..."',
    'api_key = "sk-ant-..."',
    "api_key = 'sk-proj-...'",
    "ANTHROPIC_API_KEY=sk-ant-api03-...",
    "OPENAI_API_KEY=sk-...",
    'api_key = "sk-…"',
    "api_key = 'sk-ant-…'",
    'OPENAI_API_KEY="sk-...AbCd"',
    'SECRET_KEY = "REPLACE_ME"',
    "DJANGO_SECRET_KEY=replace-me",
    'password: "REPLACE_WITH_YOUR_PASSWORD"',
    'DB_PASSWORD="changeme"',
    "JWT_SECRET=change-me",
    "keystore_password: changeit",
    "client_secret: FILL_ME_IN",
    'token = "..."',
]


@pytest.mark.parametrize("text", PLACEHOLDERS)
def test_placeholders_are_not_secrets(text: str) -> None:
    assert scan_text(text, path="settings.py") == []
    for ensure_ascii in (True, False):
        record = json.dumps({"text": text}, ensure_ascii=ensure_ascii) + "\n"
        assert scan_text(record, path="events.jsonl") == []


@pytest.mark.parametrize(
    "template",
    ['api_key = "{}..."', "API_KEY={}...", 'password = "{}…"', "SECRET_KEY={}..."],
)
def test_a_real_value_cut_short_by_dots_is_still_a_secret(template: str) -> None:
    body = gate_corpus.pick(RNG, gate_corpus.ALNUM, 24)
    for value in (body, "sk-ant-api03-" + body, "Xy9#kL2m" + body):
        text = template.format(value)
        redacted = redact_text(text).text
        assert body not in redacted, text
        record = json.dumps({"text": text}) + "\n"
        assert body not in redact_text(record, path="events.jsonl").text, text


def test_in_band_pragma_cannot_switch_the_gate_off() -> None:
    secret = token("ghp_")
    for pragma in ("# pragma: allowlist secret", "# nosec", "// gitleaks:allow", "stet-gate: off"):
        assert scan_text(f"{secret}  {pragma}\n")
        assert scan_text(f"{pragma}\n{secret}\n")


def test_allowlist_values_and_patterns(tmp_path) -> None:
    allowed = token("ghp_")
    pattern_allowed = token("sk_test_", length=30)
    other = token("ghp_")
    (tmp_path / ".stet").mkdir()
    (tmp_path / ".stet" / "gate-allowlist.toml").write_text(
        f'values = ["{allowed}"]\npatterns = ["sk_test_[A-Za-z0-9]{{30}}"]\n'
    )
    allowlist = Allowlist.load(tmp_path)
    config = GateConfig(allowlist=allowlist)
    text = f"{allowed}\n{pattern_allowed}\n{other}\n"
    assert [f.line for f in scan_text(text, config=config)] == [2]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('patterns = [".*"]', "empty string"),
        ('patterns = ["("]', "invalid pattern"),
        ('patterns = ["(?<=key=)ghp_[a-z]+"]', "no look-around"),
        ('patterns = ["tok_[[:digit:]]+"]', "read differently in RE2 and Python"),
        ('patterns = ["a{,3}b"]', "read differently in RE2 and Python"),
        ('patterns = ["a++"]', "possessive"),
        ("values = 3", "lists of strings"),
        ("colour = []", "unknown keys"),
        ("values = [", "cannot read"),
    ],
)
def test_bad_allowlists_are_user_errors(tmp_path, content: str, message: str) -> None:
    (tmp_path / ".stet").mkdir()
    (tmp_path / ".stet" / "gate-allowlist.toml").write_text(content)
    with pytest.raises(StetError, match=message):
        Allowlist.load(tmp_path)


def test_an_allowlist_pattern_re_would_backtrack_on_does_not_hold_the_gate(tmp_path) -> None:
    """A cloned repository's allowlist is read before anyone reviewed it: a pattern that
    backtracks exponentially under `re` (overlapping alternatives under `+`) must not hold
    the gate. The scan runs in a process of its own; no answer within 60 s is a hang."""
    import subprocess
    import sys

    (tmp_path / ".stet").mkdir()
    (tmp_path / ".stet" / "gate-allowlist.toml").write_text(
        'patterns = ["ghp_([A-Za-z0-9]|[A-Za-z0-9])+!"]\n'
    )
    (tmp_path / "notes.md").write_text(f"x\n{token('ghp_')}\n")
    done = subprocess.run(
        [sys.executable, "-m", "stet_lsp", "gate", "scan", "notes.md"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1 and done.stdout.startswith("notes.md:2:1: github-token")


def test_configured_environment_names_in_every_syntax() -> None:
    config = GateConfig(env_names=("ACME_PASS",))
    for text in ("ACME_PASS=lowentropy", "ACME_PASS: lowentropy", '"ACME_PASS": "lowentropy"'):
        assert "lowentropy" not in redact_text(text, config=config).text
    assert redact_text("OTHER=lowentropy", config=config).text == "OTHER=lowentropy"


@pytest.mark.parametrize(
    "document",
    [
        {"command": ["acme:", "acme_pass:", '"hkxrmosshl"', "retries:", "3"]},
        {"command": ["ACME_PASS=", "hkxrmosshl"]},
        {"settings": {"ACME_PASS=": "v", "ACME_PASS:": ["w"], "acme_pass:": {"x": 1}}},
    ],
)
def test_a_configured_name_ending_a_json_string_never_breaks_the_json(
    document: dict[str, object],
) -> None:
    """The name at the end of one string, its value in the next: the quote between them
    ends the string, and a span over the `,` or `:` after it made invalid JSON (an import's
    session file then could not be read back)."""
    text = json.dumps(document)
    redacted = redact_text(text, config=GateConfig(env_names=("ACME_PASS",)), path="e.jsonl")
    assert json.loads(redacted.text) is not None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("cd /home/alice/src/app", "cd ~/src/app"),
        ("open /Users/bob.smith/Library", "open ~/Library"),
        ("C:\\Users\\carol\\repo", "~\\repo"),
        ("/home/dave", "~"),
        ("/srv/home/x stays", "/srv/home/x stays"),
        ("/Users/Shared/x stays", "/Users/Shared/x stays"),
        ("--- a//home/erin/p/x.py\n+++ b//home/erin/p/x.py", "--- a/~/p/x.py\n+++ b/~/p/x.py"),
        ('"--- a//Users/fay/x\\n+++ b//Users/fay/x"', '"--- a/~/x\\n+++ b/~/x"'),
        ("data//home/x/y stays", "data//home/x/y stays"),
        ('{"uri": "file:///home/gil/p/a.py"}', '{"uri": "file://~/p/a.py"}'),
        ('{"uri": "file:///Users/hal/wks/cli/x"}', '{"uri": "file://~/wks/cli/x"}'),
        ("file:///C:/Users/ivy/x.py", "file:///~/x.py"),
        ("file:///c%3A/Users/jo/x.py", "file:///c%3A~/x.py"),
        ("file:///srv/home/x stays", "file:///srv/home/x stays"),
        # Windows' extended-length prefix, as Rust's `std::fs::canonicalize` writes a path.
        ("error: \\\\?\\C:\\Users\\bob\\x\\Cargo.toml", "error: \\\\?\\~\\x\\Cargo.toml"),
        ('"\\\\\\\\?\\\\C:\\\\Users\\\\bob\\\\x"', '"\\\\\\\\?\\\\~\\\\x"'),
        ("//?/C:/Users/bob/x", "//?/~/x"),
        ("\\\\?\\C:\\Users\\Public\\x stays", "\\\\?\\C:\\Users\\Public\\x stays"),
        # Its device prefix, `\\.\`, alike.
        ("\\\\.\\C:\\Users\\bob\\x", "\\\\.\\~\\x"),
        ('"\\\\\\\\.\\\\C:\\\\Users\\\\bob\\\\x"', '"\\\\\\\\.\\\\~\\\\x"'),
        ("//./C:/Users/bob/x", "//./~/x"),
        # A share's path names a folder of another machine, not a home folder, and stays.
        (
            "\\\\?\\UNC\\srv\\share\\Users\\bob\\x stays",
            "\\\\?\\UNC\\srv\\share\\Users\\bob\\x stays",
        ),
        ("\\\\srv\\share\\Users\\bob\\x stays", "\\\\srv\\share\\Users\\bob\\x stays"),
        # Other schemes, and VS Code's links to a file.
        ("oil:///home/beau/src/app.py", "oil://~/src/app.py"),
        ("sftp:///home/kim/notes", "sftp://~/notes"),
        ("vscode://file/home/lee/a.py:3", "vscode://file~/a.py:3"),
        ("vscode://file/C:/Users/mo/a.py", "vscode://file/~/a.py"),
        ('"oil:\\/\\/\\/home\\/nia\\/x"', '"oil:\\/\\/~\\/x"'),
        ("https://example.com/home/x stays", "https://example.com/home/x stays"),
        # Slashes escaped as PHP's json_encode writes them: the rest keeps its escaping.
        ('{"cwd": "\\/home\\/alice\\/proj\\/x.py"}', '{"cwd": "~\\/proj\\/x.py"}'),
        ('"\\/Users\\/bob\\/Library"', '"~\\/Library"'),
        ('"\\/home\\/dave"', '"~"'),
        ('"cat \\/home\\/ann\\/.env\\n\\/home\\/bo x"', '"cat ~\\/.env\\n~ x"'),
        ('"C:\\/Users\\/carol\\/repo"', '"~\\/repo"'),
        ('"+++ b\\/\\/home\\/erin\\/p\\/x.py"', '"+++ b\\/~\\/p\\/x.py"'),
        ('{"uri": "file:\\/\\/\\/home\\/gil\\/a.py"}', '{"uri": "file:\\/\\/~\\/a.py"}'),
        ('"\\/srv\\/home\\/x stays"', '"\\/srv\\/home\\/x stays"'),
        ('"data\\/\\/home\\/x\\/y stays"', '"data\\/\\/home\\/x\\/y stays"'),
        ('"\\/Users\\/Shared\\/x stays"', '"\\/Users\\/Shared\\/x stays"'),
        ('"\\/homework\\/x stays"', '"\\/homework\\/x stays"'),
        # The same inside a JSON string, every `\\` escaped again.
        ('{"b": "\\\\/Users\\\\/bob\\\\/x"}', '{"b": "~\\\\/x"}'),
        ('"\\\\/home\\\\/dave"', '"~"'),
        ('"C:\\\\/Users\\\\/carol\\\\/repo"', '"~\\\\/repo"'),
        ('"cd C:\\\\/Users\\\\nls stays"', '"cd C:\\\\/Users\\\\nls stays"'),
        ('"cd C:\\\\/Users\\\\\\\\bob"', '"cd ~"'),
        ('"..\\\\/..\\\\/home\\\\/bob\\\\/b.go"', '"..\\\\/..\\\\/~\\\\/b.go"'),
        ('"file:\\\\/\\\\/\\\\/home\\\\/gil"', '"file:\\\\/\\\\/~"'),
        ('"cd \\\\\\"\\\\/Users\\\\/Jo Lee\\\\\\""', '"cd \\\\\\"~\\\\\\""'),
        ('"cd \\\\\\"..\\\\/Users\\\\/Jo Lee\\\\\\""', '"cd \\\\\\"..\\\\/~\\\\\\""'),
        ('"\\\\/srv\\\\/home\\\\/x stays"', '"\\\\/srv\\\\/home\\\\/x stays"'),
        ('"..\\\\/Users\\\\/UserDto.cs stays"', '"..\\\\/Users\\\\/UserDto.cs stays"'),
        # A relative path that climbs into a home folder keeps its `../`.
        ("../../Users/alex/cli/a.go:10", "../../~/cli/a.go:10"),
        ('"out": "../../home/bob/b.go:1\\n../Users/cy"', '"out": "../../~/b.go:1\\n../~"'),
        ('"..\\/..\\/home\\/bob\\/b.go"', '"..\\/..\\/~\\/b.go"'),
        ("../../Users/Shared/x stays", "../../Users/Shared/x stays"),
        ("./home/x/y stays", "./home/x/y stays"),
        # The same on Windows, its `\\` doubled in JSON, or twice over as Python prints it.
        ("..\\..\\Users\\bob\\cli\\a.go:10", "..\\..\\~\\cli\\a.go:10"),
        ('"out": "..\\\\..\\\\Users\\\\bob\\\\x"', '"out": "..\\\\..\\\\~\\\\x"'),
        ('"..\\\\\\\\Users\\\\\\\\bob\\\\\\\\x"', '"..\\\\\\\\~\\\\\\\\x"'),
        ("..\\Users\\Mi Notebook\\x", "..\\~\\x"),
        # Separators mixed, as a `../` joined to a Windows path.
        ("../../Users\\bob\\x", "../../~\\x"),
        ('"../Users\\\\Mi Notebook\\\\x"', '"../~\\\\x"'),
        ('"../Users\\nls stays"', '"../Users\\nls stays"'),
        ("../Users\\UserDto.cs stays", "../Users\\UserDto.cs stays"),
        ("../Users\\Shared\\x stays", "../Users\\Shared\\x stays"),
        ("..\\..\\Users\\Shared\\x stays", "..\\..\\Users\\Shared\\x stays"),
        (".\\Users\\bob\\x stays", ".\\Users\\bob\\x stays"),
        ("..\\users\\views.py stays", "..\\users\\views.py stays"),
        # A `\\` doubled before `Users` is doubled after it: a lone `\\` there starts a JSON
        # escape (`C:\\Users`, then a line break), not a user's folder.
        ('"cd C:\\\\Users\\nls stays"', '"cd C:\\\\Users\\nls stays"'),
        ('"..\\\\..\\\\Users\\nls stays"', '"..\\\\..\\\\Users\\nls stays"'),
        ("'C:\\\\Users\\\\bob' and C:/Users\\cy", "'~' and ~"),
        # After a `/` before `Users`, a lone `\\` that starts a JSON escape is no separator.
        ('{"a": "cd C:/Users\\nls stays"}', '{"a": "cd C:/Users\\nls stays"}'),
        ('"C:\\/Users\\tls\\" stays"', '"C:\\/Users\\tls\\" stays"'),
        ('"C:/Users\\u00e9 stays"', '"C:/Users\\u00e9 stays"'),
        ('"C:/Users\\\\nls\\\\x"', '"~\\\\x"'),
        # A user name with a space: whole before a separator or ending a quoted path, else
        # the path ends at the space, so the words after a path in prose stay.
        ("> C:\\Users\\Asus Laptop\\.local\\bin\\aider", "> ~\\.local\\bin\\aider"),
        ("cd /Users/Jo Ann Lee/src", "cd ~/src"),
        # Windows takes either separator, and a path may change them after the user name.
        ("C:\\Users\\John Smith/proj", "~/proj"),
        ('"C:\\\\Users\\\\John Smith/proj"', '"~/proj"'),
        ("C:/Users/John Smith/proj", "~/proj"),
        ("C:\\Users\\bob/proj", "~/proj"),
        ('{"cwd": "C:\\\\Users\\\\John Smith\\\\proj"}', '{"cwd": "~\\\\proj"}'),
        ('{"cwd": "C:\\\\Users\\\\John Smith"}', '{"cwd": "~"}'),
        ("cd 'C:\\Users\\John Smith'", "cd '~'"),
        ("cd '/Users/Jo Ann 2'", "cd '~'"),
        # A quoted path of a name with spaces is taken whole, whatever its words' case (a
        # name's words cannot be told from a sentence's: a quoted sentence that starts with a
        # home folder loses up to three words rather than a name its last ones); an
        # apostrophe closes no quote.
        ('{"cwd": "C:\\\\Users\\\\Jan van Dijk"}', '{"cwd": "~"}'),
        ('"C:\\\\Users\\\\María de la Cruz"', '"~"'),
        ("cd 'C:\\Users\\Ana de Souza'", "cd '~'"),
        ('{"cwd": "/Users/Jan van Dijk"}', '{"cwd": "~"}'),
        ('"C:\\Users\\john smith"', '"~"'),
        ('{"msg": "/Users/bob is the user"}', '{"msg": "~"}'),
        ("'C:\\Users\\bob is Bob's folder'", "'~ is Bob's folder'"),
        ('"cd \\"\\/Users\\/jo and more\\""', '"cd \\"~\\""'),
        # So is a quoted relative path that climbs into a home folder.
        ('"..\\\\Users\\\\John Smith"', '"..\\\\~"'),
        ("cd '../../Users/Jo Ann Lee'", "cd '../../~'"),
        ('"cd \\"..\\/Users\\/Jo Lee\\""', '"cd \\"..\\/~\\""'),
        ('"../Users\\\\Ana de Souza"', '"../~"'),
        ("'../Users/bob is Bob's'", "'../~ is Bob's'"),
        # Either separator after a Windows user name, as `os.path.join` mixes them.
        ("C:/Users/John Smith\\proj\\a.py", "~\\proj\\a.py"),
        ('"C:/Users/John Smith\\\\proj"', '"~\\\\proj"'),
        ('"C:\\\\Users\\/bob\\/x"', '"~\\/x"'),
        # A relative path's `Users` folder holding a file is a project's folder.
        (
            '<Compile Include="..\\Users\\UserDto.cs" />',
            '<Compile Include="..\\Users\\UserDto.cs" />',
        ),
        (
            "..\\Users\\UsersController.cs(12,5): error",
            "..\\Users\\UsersController.cs(12,5): error",
        ),
        ('import x from "../Users/UserList.tsx"', 'import x from "../Users/UserList.tsx"'),
        ('"..\\\\Users\\\\UserDto.cs"', '"..\\\\Users\\\\UserDto.cs"'),
        ('"cd \\"\\/Users\\/Jo Lee\\""', '"cd \\"~\\""'),
        ("C:\\Users\\bob and then", "~ and then"),
        ("C:\\Users\\John Smith", "~ Smith"),
        ('"C:\\\\Users\\\\bob and then\\nnext"', '"~ and then\\nnext"'),
        ("/Users/bob and C:\\Users\\cy\\x", "~ and ~\\x"),
        ("C:\\Users\\Default User\\x stays", "C:\\Users\\Default User\\x stays"),
        ("file:///C:/Users/John%20Smith/x.py", "file:///~/x.py"),
        # A user name of any letters, also as JSON escapes them; an escaped ASCII character
        # after a name is not part of it.
        ("C:\\Users\\José\\x and /home/łukasz/src", "~\\x and ~/src"),
        ('"C:\\\\Users\\\\Jos\\u00e9\\\\x"', '"~\\\\x"'),
        ('"/home/bob\\u003e x"', '"~\\u003e x"'),
    ],
)
def test_home_paths_become_tilde(text: str, expected: str) -> None:
    assert redact_text(text).text == expected


def test_home_paths_are_a_normalisation_not_findings() -> None:
    secret = "ghp_" + gate_corpus.pick(RNG, gate_corpus.ALNUM, 36)
    records = [
        {"cwd": "/home/alice/proj", "out": f"cat /home/alice/.env\nT={secret}\n/home/bob x"},
        {"path": "C:\\Users\\carol\\repo\\a.py", "mac": "/Users/dan/Library"},
    ]
    raw = "".join(json.dumps(record) + "\n" for record in records)
    assert [f.rule for f in scan_text(raw, path="e.jsonl")] == ["github-token"]
    assert count_home_paths(raw) == 5
    result = redact_text(raw, path="e.jsonl")
    assert [json.loads(line) for line in result.text.splitlines()] == [
        {"cwd": "~/proj", "out": "cat ~/.env\nT=[REDACTED:github-token#1]\n~ x"},
        {"path": "~\\repo\\a.py", "mac": "~/Library"},
    ]
    assert result.report.counts() == {"github-token": 1, "home-path": 5}
    assert result.report.to_dict()["rules"]["home-path"] == {"count": 5}
    assert normalize_home_paths(result.text) == result.text
    assert redact_text(result.text, path="e.jsonl").text == result.text


def test_home_paths_with_escaped_slashes_in_json_lines() -> None:
    records = [
        {"cwd": "/home/alice/proj", "out": "cat /home/alice/.env\n/Users/bob/x"},
        {"path": "C:/Users/carol/repo/a.py", "other": "/srv/home/x"},
    ]
    # PHP's json_encode (and some tools) escape every slash.
    raw = "".join(json.dumps(record).replace("/", "\\/") + "\n" for record in records)
    assert count_home_paths(raw) == 4
    result = redact_text(raw, path="e.jsonl")
    assert "\\/home\\/alice" not in result.text and "\\/Users\\/bob" not in result.text
    assert [json.loads(line) for line in result.text.splitlines()] == [
        {"cwd": "~/proj", "out": "cat ~/.env\n~/x"},
        {"path": "~/repo/a.py", "other": "/srv/home/x"},
    ]
    assert result.report.counts() == {"home-path": 4}
    assert normalize_home_paths(result.text) == result.text


def test_home_paths_with_escaped_slashes_inside_a_json_string() -> None:
    """PHP's output in a transcript: its `\\/` escaped again in the record's string."""
    php = json.dumps({"cwd": "/home/alice/proj", "mac": "/Users/Jo Ann", "win": "C:/Users/cy/r"})
    raw = json.dumps({"content": php.replace("/", "\\/")}) + "\n"
    assert "\\\\/home\\\\/alice" in raw
    result = redact_text(raw, path="e.jsonl")
    assert json.loads(json.loads(result.text)["content"]) == {
        "cwd": "~/proj",
        "mac": "~",
        "win": "~/r",
    }
    assert result.report.counts() == {"home-path": 3}
    assert normalize_home_paths(result.text) == result.text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("cd C:/Users\\nancy\\proj", "cd ~\\proj"),
        ("C:/Users\\tom\\x and C:/Users\\ursula", "~\\x and ~"),
        ("../Users\\nancy\\x", "../~\\x"),
    ],
)
def test_a_backslash_after_users_in_plain_text_is_a_separator(text: str, expected: str) -> None:
    """In text that is no JSON (a log, the narration), a `\\` after `C:/Users` is a separator
    (`os.path.join` mixes them) whatever follows it: `\\nancy` is no JSON line break. The
    same path in a JSON file loses its name too, its `\\` escaped there, while JSON's own line
    break after `C:/Users` stays one."""
    for path in ("notes.txt", "narration.md"):
        result = redact_text(text, path=path)
        assert result.text == expected
        assert scan_blocks(lambda: [text], GateConfig(), path).home_paths == text.count("Users")
    record = json.dumps({"content": text}) + "\n"
    assert json.loads(redact_text(record, path="e.jsonl").text) == {"content": expected}
    kept = '{"a": "cd C:/Users\\nls"}\n'
    assert redact_text(kept, path="e.jsonl").text == kept
    assert scan_blocks(lambda: [kept], GateConfig(), "e.jsonl").home_paths == 0


def test_a_backslash_after_users_in_source_code_is_a_separator() -> None:
    """Source code is other text too. In a string literal, `\\t` after `C:/Users` is an escape
    when the program runs, but the name after it (`tom`: a Windows path whose `\\` was left
    unescaped) is written in the file all the same, and a raw string's or a comment's `\\`
    escapes nothing: a program's own line break after `C:/Users` takes the word after it."""
    source = (
        'data = "C:/Users\\tom\\data.csv"\n'
        'raw = r"C:/Users\\nancy\\x"\n'
        "# C:/Users\\rachel\\x\n"
        'print("C:/Users\\nDone")\n'
    )
    assert redact_text(source, path="load.py").text == (
        'data = "~\\data.csv"\nraw = r"~\\x"\n# ~\\x\nprint("~")\n'
    )


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("\\\\wsl$\\Ubuntu\\home\\bob\\proj", "~\\proj"),
        ("\\\\wsl.localhost\\Ubuntu-22.04\\home\\bob\\proj", "~\\proj"),
        ("//wsl$/Ubuntu/home/bob/proj", "~/proj"),
        ("//wsl.localhost/Debian/home/bob", "~"),
        ("\\\\WSL$\\Ubuntu/home/bob/proj", "~/proj"),
        ("\\\\wsl.LocalHost\\Ubuntu\\home\\bob\\proj", "~\\proj"),
        ("\\\\?\\UNC\\wsl.localhost\\Ubuntu\\home\\bob\\proj", "\\\\?\\~\\proj"),
        ("\\\\host\\C$\\Users\\bob\\proj", "~\\proj"),
        ("\\\\192.168.1.5\\d$\\Users\\John Smith\\proj", "~\\proj"),
        ("//host/c$/users/bob/proj", "~/proj"),
        ("\\\\?\\UNC\\host\\C$\\Users\\bob\\proj", "\\\\?\\~\\proj"),
        ("/mnt/c/Users/bob/proj", "~/proj"),
        ("/mnt/d/users/John Smith/proj", "~/proj"),
        ("/cygdrive/c/Users/bob/proj", "~/proj"),
        ("/c/Users/bob/proj", "~/proj"),
        # Git Bash, MSYS2 and Cygwin read a name whatever its case, and people type it so.
        ("/c/users/bob/proj", "~/proj"),
        ("/cygdrive/c/users/bob/proj", "~/proj"),
        ("file:///mnt/c/Users/bob/a.py", "file://~/a.py"),
    ],
)
def test_a_home_seen_through_a_share_or_a_mount_loses_its_user(path: str, expected: str) -> None:
    """WSL's share of a distribution (`\\\\wsl$\\<distro>\\home\\<user>`), a drive's
    administrative share (`\\\\<host>\\C$\\Users\\<user>`) and a Windows drive where WSL,
    Cygwin or Git Bash mount it (`/mnt/c/Users/<user>`) hold a home folder: it becomes `~` as
    any other, in plain text, in JSON, as Python prints it, and with PHP's escaped slashes."""
    assert redact_text(f"cd {path} && ls", path="notes.txt").text == f"cd {expected} && ls"
    record = json.dumps({"cwd": path, "out": f"ls {path}"}) + "\n"
    result = redact_text(record, path="e.jsonl")
    assert json.loads(result.text) == {"cwd": expected, "out": f"ls {expected}"}
    assert result.report.counts() == {"home-path": 2}
    assert normalize_home_paths(result.text) == result.text
    printed = f"No such file: {path!r}"
    assert redact_text(printed, path="notes.txt").text == f"No such file: {expected!r}"
    inside = json.dumps({"content": printed}) + "\n"
    redacted = json.loads(redact_text(inside, path="e.jsonl").text)
    assert redacted == {"content": f"No such file: {expected!r}"}
    escaped = json.dumps({"cwd": path}).replace("/", "\\/") + "\n"
    assert json.loads(redact_text(escaped, path="e.jsonl").text) == {"cwd": expected}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("cd /d/Users/bob/src", "cd ~/src"),
        ('"/c/Users/bob"', '"~"'),
        ("'/c/Users/bob'", "'~'"),
        ("`/c/Users/bob/x`", "`~/x`"),
        ("PREFIX=/c/Users/bob", "PREFIX=~"),
        ("PATH=/usr/bin:/c/Users/bob/bin", "PATH=/usr/bin:~/bin"),
        ("sys.path[0:0] = ['/c/users/bob/lib']", "sys.path[0:0] = ['~/lib']"),
        ("(/c/Users/bob) and >/c/Users/bob/log", "(~) and >~/log"),
        ("curl -d @/c/Users/bob/body.json", "curl -d @~/body.json"),
        ("x\n/c/Users/bob", "x\n~"),
        ("/C/Users/bob/x", "~/x"),
        ("文件在/c/Users/bob/proj下", "文件在~/proj下"),
        ("“/c/Users/bob/proj”", "“~/proj”"),
        ("cd x&&/c/Users/bob/bin", "cd x&&~/bin"),
        ("vscode://file/c/Users/bob/a.py:3", "vscode://file~/a.py:3"),
        ("git diff HEAD /c/Users/bob/a.py", "git diff HEAD ~/a.py"),
        # A route's first segment: a floppy drive's letter, after an HTTP method, after a
        # word, a host, another folder or a variable.
        ("GET /r/Users/list", "GET /r/Users/list"),
        ("POST   /c/users/bob", "POST   /c/users/bob"),
        # A lower-case `users` after a bare letter other than `c`: a route's.
        ('fetch("/r/users/list")', 'fetch("/r/users/list")'),
        ('href="/d/users/7"', 'href="/d/users/7"'),
        ('"GET /r/Users/list HTTP/1.1" 200', '"GET /r/Users/list HTTP/1.1" 200'),
        ('see "/a/Users/settings"', 'see "/a/Users/settings"'),
        ("/b/Users/x", "/b/Users/x"),
        ("/api/v1/r/Users/list", "/api/v1/r/Users/list"),
        ("https://host/r/Users/x", "https://host/r/Users/x"),
        ("http://localhost:8080/c/Users/bob", "http://localhost:8080/c/Users/bob"),
        ("${HOME}/c/Users/bob", "${HOME}/c/Users/bob"),
        ("%APPDATA%/c/Users/bob", "%APPDATA%/c/Users/bob"),
        ("v1.2/c/Users/bob", "v1.2/c/Users/bob"),
    ],
)
def test_a_git_bash_mount_starts_a_path_and_a_route_stays(text: str, expected: str) -> None:
    """Git Bash and MSYS2 mount a drive at its letter, the first segment of an absolute path
    (`/c/Users/<user>`), which a web route's first segment may be too (`GET /r/Users/list`):
    the letter is a disk's (not `a` or `b`) and starts the path, not after an HTTP method, a
    word, a host or another folder, in plain text, in JSON and with PHP's escaped slashes."""
    assert redact_text(text, path="notes.txt").text == expected
    record = json.dumps({"content": text}) + "\n"
    result = redact_text(record, path="e.jsonl").text
    assert json.loads(result) == {"content": expected}
    escaped = record.replace("/", "\\/")
    assert json.loads(redact_text(escaped, path="e.jsonl").text) == {"content": expected}


@pytest.mark.parametrize("path", ["/home/bob/proj", "/Users/bob/proj", "/c/Users/bob/proj"])
def test_a_home_after_a_character_json_escapes_loses_its_user(path: str) -> None:
    """Python's `json.dumps` writes a character outside ASCII as `\\uXXXX`: a path after one
    starts there as it does after the character itself."""
    record = json.dumps({"content": f"文件在{path}下"}) + "\n"
    assert "\\u5728/" in record
    redacted = redact_text(record, path="e.jsonl").text
    assert json.loads(redacted) == {"content": "文件在~/proj下"}
    # an ASCII letter escaped so is a letter, after which no path starts
    escaped_letter = '{"content": "x\\u0041' + path + '"}\n'
    assert redact_text(escaped_letter, path="e.jsonl").text == escaped_letter


@pytest.mark.parametrize(
    ("uri", "expected"),
    [
        ("vscode-remote://wsl%2Bubuntu/home/bob/p/a.py", "vscode-remote://wsl%2Bubuntu~/p/a.py"),
        ("vscode-remote://wsl+Ubuntu/home/bob", "vscode-remote://wsl+Ubuntu~"),
        (
            "vscode-remote://ssh-remote%2Bbuild-01/home/bob/p",
            "vscode-remote://ssh-remote%2Bbuild-01~/p",
        ),
        (
            "vscode-remote://ssh-remote+mac.local/Users/bob/x",
            "vscode-remote://ssh-remote+mac.local~/x",
        ),
        ("vscode-remote://ssh-remote+win/c:/Users/bob/x", "vscode-remote://ssh-remote+win~/x"),
        ("vscode-remote://wsl%2Bubuntu/mnt/c/Users/bob/p", "vscode-remote://wsl%2Bubuntu~/p"),
        (
            f"vscode-remote://dev-container%2B{'7b22' * 100}/home/bob",
            f"vscode-remote://dev-container%2B{'7b22' * 100}~",
        ),
        # Only right after the remote's authority: another folder's `home` is none.
        ("vscode-remote://wsl+Ubuntu/srv/home/bob", "vscode-remote://wsl+Ubuntu/srv/home/bob"),
        ("https://example.com/home/bob", "https://example.com/home/bob"),
    ],
)
def test_a_home_on_a_vscode_remote_loses_its_user(uri: str, expected: str) -> None:
    """VS Code names a file on a remote machine (WSL, SSH) by a URI whose path starts right
    after the remote's authority: `vscode-remote://wsl%2Bubuntu/home/bob/…`. The letter before
    `/home` made it no home path, and the user's name stayed."""
    assert redact_text(f"open {uri}\n", path="notes.txt").text == f"open {expected}\n"
    record = json.dumps({"uri": uri}) + "\n"
    assert json.loads(redact_text(record, path="e.jsonl").text) == {"uri": expected}
    escaped = record.replace("/", "\\/")  # PHP's json_encode escapes its slashes
    assert json.loads(redact_text(escaped, path="e.jsonl").text) == {"uri": expected}


@pytest.mark.parametrize(
    "path",
    [
        # Another share's `Users` or `home` folder is not known to be a home.
        "\\\\server\\share\\Users\\bob\\x",
        "\\\\?\\UNC\\server\\share\\Users\\bob\\x",
        "\\\\server\\share\\home\\bob\\x",
        "\\\\wsl$\\Ubuntu\\srv\\home\\bob",
        "\\\\host\\C$\\Users\\Public\\x",
        "\\\\wsl$\\Ubuntu\\home\\linuxbrew\\x",
        "C$\\Users\\bob\\x",
        "/mnt/c/Users/Public/x",
        "/srv/mnt/c/Users/bob/x",
        "https://example.com/c/Users/bob",
        "https://example.com/c/users/bob",
    ],
)
def test_a_share_or_mount_that_is_no_home_stays(path: str) -> None:
    assert redact_text(f"cd {path}", path="notes.txt").text == f"cd {path}"
    record = json.dumps({"cwd": path}) + "\n"
    assert redact_text(record, path="e.jsonl").text == record


@pytest.mark.parametrize("prefix", ["", "\\\\?\\", "\\\\.\\"])
@pytest.mark.parametrize("user", ["bob", "Mi Notebook"])
def test_windows_home_paths_as_python_prints_them(user: str, prefix: str) -> None:
    """Python's repr of a Windows path doubles every `\\`; the same written into JSON has four
    to a separator. Both become `~`, the rest keeping its escaping, and so does a path after
    Windows' extended-length or device prefix (`\\\\?\\`, `\\\\.\\`), which stays."""
    denied = "PermissionError: [Errno 13] Permission denied: "
    printed = denied + repr(f"{prefix}C:\\Users\\{user}\\AppData\\x.db")
    expected = denied + repr(f"{prefix}~\\AppData\\x.db")
    assert redact_text(printed).text == expected
    raw = json.dumps({"content": printed}) + "\n"
    assert f"C:\\\\\\\\Users\\\\\\\\{user}" in raw
    result = redact_text(raw, path="e.jsonl")
    assert json.loads(result.text) == {"content": expected}
    assert result.report.counts() == {"home-path": 1}
    assert normalize_home_paths(result.text) == result.text


def test_url_passwords_only_the_password_goes() -> None:
    password = gate_corpus.pick(RNG, gate_corpus.ALNUM, 16)
    text = f"redis://:{password}@cache:6379/0 and postgres://app:{password}@db/app"
    assert redact_text(text).text == (
        "redis://:[REDACTED:url-password#1]@cache:6379/0 and "
        "postgres://app:[REDACTED:url-password#1]@db/app"
    )


@pytest.mark.parametrize(
    ("line", "path"),
    [
        ("{url}", "notes.txt"),
        ("EMAIL_URL: {url}", "config.yaml"),
        ("MAIL_URL={url}", "app.env"),
        ('{{"url": "{url}"}}', "events.jsonl"),
        ('{{"url": "{escaped}"}}', "events.jsonl"),
    ],
)
def test_a_key_named_user_in_a_url_keeps_the_host(line: str, path: str) -> None:
    """SendGrid's SMTP relay takes the user `apikey` and the key as its password: the user's
    name is no assignment whose value runs on over the host."""
    key = token("SG.", length=22) + "." + gate_corpus.pick(RNG, gate_corpus.ALNUM, 43)
    url = f"smtp://apikey:{key}@smtp.sendgrid.net:587"
    text = line.format(url=url, escaped=url.replace("/", "\\/")) + "\n"
    redacted = redact_text(text, path=path, cache=ResultCache()).text
    assert key[3:] not in redacted
    assert "[REDACTED:sendgrid-api-key#1]@smtp.sendgrid.net:587" in redacted


@pytest.mark.parametrize(
    ("url", "password"),
    [
        ("https://token:{pw}@git.example.com/a.git", "Xk9q2LmWp4/Zq8Wm3Rt6Y"),
        (
            "smtp://apikey:{pw}@email-smtp.us-east-1.amazonaws.com:587",
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYq8Zt2LmWp9q",
        ),
        ("https://secret:{pw}", "Zq8Wm3Rt6YxK"),
    ],
)
@pytest.mark.parametrize("json_line", [False, True])
def test_a_url_password_with_a_slash_or_no_host_is_redacted(
    url: str, password: str, json_line: bool
) -> None:
    """A password holding a `/`, or with no host after it, is no password `url-password`
    reads: after a user named for a credential it stays the assignment's value."""
    line = "git remote add origin " + url.format(pw=password)
    text = json.dumps({"type": "tool_result", "content": line}) if json_line else line
    redacted = redact_text(text + "\n", path="events.jsonl" if json_line else "notes.txt").text
    assert not any(piece in redacted for piece in password.split("/"))
    assert "[REDACTED:secret-assignment#1]" in redacted


@pytest.mark.parametrize(
    "url",
    [
        "mysql://root:root@localhost:3306/app",
        "postgres://postgres:postgres@localhost/app",
        "mongodb://admin:admin@db:27017",
        "mysql://test:test@127.0.0.1/test",
        "amqp://guest:guest@rabbit:5672",
        "mysql://app:app@db/app",
        "mysql://user:root@db/app",
        "jdbc:oracle:thin:system/system@db:1521:xe",
    ],
)
def test_a_urls_default_password_goes_like_any_other(url: str) -> None:
    """A URL's password is a password whatever it reads as: a short word (`root`, `app`,
    which three letters or fewer no longer make a mask) and the account's own name given
    again (`root:root`, `admin:admin`: the default that works), as `postgres:postgres`."""
    result = redact_text(url + "\n")
    assert [finding.rule for finding in result.findings] in (["url-password"], ["jdbc-password"])
    assert result.text.count("[REDACTED:") == 1 and "@" in result.text


@pytest.mark.parametrize(
    "url",
    [
        "postgres://user:password@localhost/app",
        "mysql://root:pass@db",
        "postgres://u:changeme@h/app",
        "mysql://root:xxxx@db",
        "mysql://root:***@db",
        "postgres://${DB_USER}:${DB_USER}@db",
    ],
)
def test_a_urls_placeholder_password_stays(url: str) -> None:
    assert redact_text(url + "\n").findings == []


def _openssh_body() -> str:
    rng = random.Random("openssh-body")
    body = "b3BlbnNzaC1rZXktdjEAAAAA" + gate_corpus.pick(rng, gate_corpus.ALNUM + "+/", 2000)
    return "\n".join(body[at : at + 70] for at in range(0, len(body), 70))


@pytest.mark.parametrize(
    ("make", "rule"),
    [
        (lambda rng: "secret_" + gate_corpus.pick(rng, gate_corpus.ALNUM, 43), "notion-token"),
        (
            lambda rng: (
                "AAAA"
                + gate_corpus.pick(rng, gate_corpus.B64URL, 7)
                + ":APA91b"
                + gate_corpus.pick(rng, gate_corpus.B64URL, 134)
            ),
            "fcm-server-key",
        ),
        (lambda rng: _openssh_body(), "private-key"),
    ],
)
def test_a_format_known_by_its_shape_is_found_in_prose_and_a_transcript(
    make: Callable[[random.Random], str], rule: str
) -> None:
    """A Notion integration secret, a legacy FCM server key and an OpenSSH private key's body
    without its header need no name beside them."""
    secret = make(random.Random(rule))
    text = f"Here it is:\n{secret}\nthat is all\n"
    result = redact_text(text)
    assert [finding.rule for finding in result.findings] == [rule]
    assert result.text == f"Here it is:\n[REDACTED:{rule}#1]\nthat is all\n"
    record = json.dumps({"content": text}) + "\n"
    redacted = json.loads(redact_text(record, path="events.jsonl").text)["content"]
    assert redacted == f"Here it is:\n[REDACTED:{rule}#1]\nthat is all\n"


@pytest.mark.parametrize(
    "text",
    [
        "secret_key_base = settings.SECRET_KEY",
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl",
        "a device's id is AAAAd6uQOsJ:APA91b and so on",
    ],
)
def test_look_alikes_of_those_formats_stay(text: str) -> None:
    assert redact_text(text + "\n").findings == []


_PRINTED = "Xk9q2LmWp4TzR7vB"


@pytest.mark.parametrize(
    "command",
    [
        "op read op://vault/db/password",
        'op read "op://vault/db/password"',
        "terraform output -raw db_password",
        "vault kv get -field=password secret/db",
        "vault read -field=token auth/token/lookup-self",
        "gcloud secrets versions access latest --secret=db-password",
        'echo "$DB_PASSWORD"',
        "echo ${API_TOKEN}",
        "echo -n $AWS_SECRET_ACCESS_KEY",
        'echo -e "$DB_PASSWORD"',
        "echo -ne $API_TOKEN",
        'echo -E "$DB_PASSPHRASE"',
        "printf '%s\\n' \"$SECRET_KEY\"",
        "printenv GITHUB_TOKEN",
    ],
)
def test_what_a_command_that_prints_a_secret_printed_on_the_next_line_goes(
    command: str,
) -> None:
    """In a terminal's log and in a tool's output quoted in a transcript: the line the
    command printed, alone, after the command's line."""
    text = f"$ {command}\n{_PRINTED}\n$ echo done\n"
    result = redact_text(text)
    assert result.text == f"$ {command}\n[REDACTED:printed-secret#1]\n$ echo done\n"
    record = json.dumps({"content": text}) + "\n"
    assert _PRINTED not in redact_text(record, path="events.jsonl").text


@pytest.mark.parametrize(
    "text",
    [
        "DB=$(op read op://vault/db/password)\nexport-DB-now\n",
        "op read op://vault/db/password > pw.txt\nchmod-600-pw\n",
        "op read op://vault/db/password | docker login --password-stdin\nLoginSucceeded\n",
        "Run op read to fetch it\nhttps://developer.1password.com/docs/cli\n",
        "$ terraform output -raw instance_id\ni-0abc123def4567890\n",
        "$ terraform output -raw endpoint\nhttps://db.example.com:5432\n",
        "$ vault kv get secret/db\n====== Data ======\nKey Value\n",
        "$ op read op://a/b/c\n[ERROR] 2024/01/01 item not found\n",
        "$ op read op://a/b/c\ndeactivate\n",
        # a variable's value that is no credential, or what is said of one
        "$ echo $HOME\nHomeDir2024x\n",
        '$ echo "$PATH"\nUsrBin2024x\n',
        "$ echo $PWD\nProject2024x\n",
        "$ echo $BYPASS_CACHE\nCacheOff2024\n",
        # a count of tests passed, no password
        "$ echo $PASS\nPassed128x\n",
        '$ echo "$NUM_PASS"\nPassed128x\n',
        "$ echo $TOKEN_PATH\nTokens2024x\n",
        "$ printenv MAX_TOKENS\nLimit4096x\n",
        "$ echo ${#API_TOKEN}\nLength40x\n",
        "$ echo $API_TOKEN | wc -c\nCount41x\n",
        # the command's text in a quoted argument: a pattern searched for
        "$ grep -rl 'echo $API_TOKEN' .\nMakefile\n",
        '$ grep -rl "printenv GITHUB_TOKEN" .\nDockerfile\n',
        "$ rg -l 'op read op://' .\nMakefile\n",
    ],
)
def test_a_line_after_such_a_command_that_is_not_its_secret_stays(text: str) -> None:
    assert redact_text(text).findings == []


def test_an_aws_secret_beside_its_key_id_or_after_its_name_and_blanks() -> None:
    """The 40-character secret with no `=` after its name (`aws configure set`, a table's
    column) or with no name at all beside an access key id (a console's credentials.csv,
    positional boto3 arguments, a table's rows), raw and in a transcript."""
    rng = random.Random("aws-secret-beside-id")
    key_id = "AKIA" + gate_corpus.pick(rng, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)
    secret = "Pt7" + gate_corpus.pick(rng, gate_corpus.B64.replace("=", ""), 36) + "a"
    for text in (
        f"aws configure set aws_secret_access_key {secret}",
        f"secret_access_key {secret}",
        f"| SecretAccessKey | {secret} |",
        f"User name,Access key ID,Secret access key\nci,{key_id},{secret}\n",
        f"s3 = boto3.client('s3', '{key_id}', '{secret}')",
        f"|  AccessKeyId     |  {key_id}  |\n|  SecretAccessKey |  {secret}  |\n",
    ):
        redacted_everywhere(text, secret, "aws-secret-access-key")
    commit = gate_corpus.pick(rng, gate_corpus.HEX, 40)
    path_40 = "/home/runner/work/project/src/components"
    for text in (
        f"{key_id} was rotated in commit {commit}",
        f"{key_id} {path_40}",
        f"{key_id}\n\n\n\nlater: {secret}",  # not beside the id
        f"Asia/Tokyo {secret}",
    ):
        found = [f.rule for f in scan_text(text, path="notes.txt")]
        assert "aws-secret-access-key" not in found, text


def test_an_aws_secret_before_its_key_id() -> None:
    """The pair the other way round, unnamed: the secret first, its key id on the same line or
    one of the two after it (a file written `secret,id`, a script's lines), raw and in a
    transcript quoted once or twice (where the id follows an escaped newline)."""
    rng = random.Random("aws-secret-before-id")
    key_id = "AKIA" + gate_corpus.pick(rng, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)
    secret = "Pt7" + gate_corpus.pick(rng, gate_corpus.B64.replace("=", ""), 36) + "a"
    for text in (
        f"{secret},{key_id}\n",
        f"{secret}\n{key_id}\n",
        f"secret: {secret}\n# rotated 2026-01-04\nid: {key_id}\n",
    ):
        redacted_everywhere(text, secret, "aws-secret-access-key")
        assert key_id not in redact_text(json.dumps({"c": json.dumps([text])})).text
    commit = gate_corpus.pick(rng, gate_corpus.HEX, 40)
    for text in (
        f"commit {commit}\n{key_id} was rotated",
        f"{secret}\n\n\n\n{key_id}",  # not beside the id
        f"/home/runner/work/project/src/components {key_id}",
    ):
        found = [f.rule for f in scan_text(text, path="notes.txt")]
        assert "aws-secret-access-key" not in found, text
