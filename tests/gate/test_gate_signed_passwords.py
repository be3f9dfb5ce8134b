"""A password a person wrote often ends in one sign: `Summer2024$`, `Tiger1999.`, `Falcon77?`.
Those signs are a name's (`user$`, `config.password.`) or a type's (`String?`) characters too;
the value goes whole where the same value ending in `!` does, and code stays."""

from __future__ import annotations

import json
import re

import pytest

from stet_lsp.gate import ResultCache, heuristics, redact_text

_MARKER = r"\[REDACTED:[a-z0-9\-]+#1\]"


def _redacted(text: str, form: str) -> str:
    """`text` redacted as written raw, in a tool call's JSON, or in a tool result's JSON
    (escaped twice), and brought back to the raw text."""
    if form == "raw":
        return redact_text(text + "\n", path="notes.txt", cache=ResultCache()).text[:-1]
    if form == "tool_use":
        line = json.dumps({"type": "tool_use", "input": {"command": text}})
        out = redact_text(line + "\n", path="events.jsonl", cache=ResultCache()).text
        return str(json.loads(out)["input"]["command"])
    line = json.dumps({"type": "tool_result", "content": json.dumps({"command": text})})
    out = redact_text(line + "\n", path="events.jsonl", cache=ResultCache()).text
    return str(json.loads(json.loads(out)["content"])["command"])


_PASSWORD_FORMS = [
    'conn = psycopg2.connect(host="db", user="app", password="{v}")',
    "db = MySQLdb.connect(host='db', user='app', passwd='{v}', db='app')",
    "database:\n  host: db\n  password: {v}\n  user: app",
    "[client]\nuser: app\npassword: {v}",
    "spring.datasource.password: {v}",
    "mytool login --password {v} --user app",
    "mysql --user=root --password={v} app",
    "FROM python:3.12-slim\nENV DB_PASSWORD {v}",
    "2024-05-01 12:00:01 INFO connect password={v} user=app",
]
_OTHER_FORMS = [
    "[default]\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = {v}",
    "FROM python:3.12-slim\nARG NPM_TOKEN={v}",
]
_VALUES = ["Tiger1999$", "Summer2024.", "Falcon1977?", "Welcome1$", "Xk9mQ2vLp8rT4$"]


@pytest.mark.parametrize("form", ["raw", "tool_use", "tool_result"])
@pytest.mark.parametrize(
    ("value", "template"),
    [(v, t) for v in _VALUES for t in _PASSWORD_FORMS]
    # a `.` is a password's only after a password's name: `token: Python3.` ends a sentence
    + [(v, t) for v in _VALUES if not v.endswith(".") for t in _OTHER_FORMS],
)
def test_a_password_ending_in_a_sign_goes_whole(value: str, template: str, form: str) -> None:
    text = template.format(v=value)
    expected = re.escape(template).replace(re.escape("{v}"), _MARKER)
    assert re.fullmatch(expected, _redacted(text, form)), _redacted(text, form)


@pytest.mark.parametrize(
    "code",
    [
        # RxJS's and Angular's observables, jQuery's names
        "password: this.password$",
        "  password: this.password$",
        "token$ = this.store.select(selectToken);",
        "const token$ = this.store.select(selectToken);",
        "login({ password: password$ })",
        "const form = { password: password$ };",
        "user$ = this.auth.user$;",
        "token: user$",
        "{ token: subject1$ }",
        "const effects = { authToken: effectOK4$ };",
        "this.token$ = token1$;",
        "token = jQuery$",
        # regular expressions
        'password_regex = "^[a-z0-9]+$"',
        'PASSWORD_PATTERN = "^.{8,}$"',
        "password_regex: ^[a-z0-9]+$",
        # prose ending a sentence or asking
        "password: see the vault.",
        "The token is stored in settings.",
        "Set the password in config.",
        "password: what is it?",
        "token: where?",
        # dotted code, versions, file names
        "password = config.password.",
        "token = self.token.",
        "password: v1.2.3.",
        "token = python3.12.",
        # the key's own name, placeholders
        'password="password$"',
        "password = password$",
        "password: changeme.",
        "password: <password>.",
        # an optional type whose name ends in its width
        "  password: Int32?",
        "  token: Float64?",
    ],
)
@pytest.mark.parametrize("form", ["raw", "tool_use"])
def test_code_prose_and_placeholders_with_a_sign_stay(code: str, form: str) -> None:
    assert _redacted(code, form) == code


@pytest.mark.parametrize(
    ("value", "reference"),
    [
        ("Tiger1999$", False),
        ("Tiger1999.", False),
        ("hunter22.", False),
        ("Xk9mQ2vLp8rT4$", False),
        ("user$", True),
        ("this.password$", True),
        ("subject1$", True),
        ("config.password.", True),
        ("python3.12.", True),
        ("v1.2.3.", True),
    ],
)
def test_a_sign_after_a_word_and_digits_is_no_names(value: str, reference: bool) -> None:
    assert heuristics.looks_like_reference(value) is reference


@pytest.mark.parametrize(
    ("text", "value"),
    [
        # `Tiger999.` varies less than the check asks of three kinds of characters, as much as
        # it asks of four: its `.` is read as `Tiger999!`'s sign
        ('conn = f(password="Tiger999.")', "Tiger999."),
        ("password = Tiger999.", "Tiger999."),
        # under eight characters after a password's name: written by hand, as `Tiger7!` is
        ("password: Tiger7$", "Tiger7$"),
        ("password: Tiger7.", "Tiger7."),
        ("password=summer2024$", "summer2024$"),
    ],
)
def test_a_short_or_plain_password_with_a_sign_goes_whole(text: str, value: str) -> None:
    expected = re.escape(text).replace(re.escape(value), _MARKER)
    assert re.fullmatch(expected, _redacted(text, "raw"))


@pytest.mark.parametrize(
    "prose",
    [
        "Password: see section3.",
        "Password: same as for Windows10.",
        "Password: Required. Default is empty for sqlite3.",
        "Passphrase: see chapter3. It is long.",
        "password: TBD (ticket OPS1234.)",
        "passwd: see shadow5.",
    ],
)
@pytest.mark.parametrize("form", ["raw", "tool_use", "tool_result"])
def test_a_sentence_ending_after_a_word_and_digits_stays(prose: str, form: str) -> None:
    assert _redacted(prose, form) == prose
    assert redact_text(prose + "\n", path="README.md", cache=ResultCache()).text == prose + "\n"


def test_a_password_before_a_sentence_goes_alone() -> None:
    text = "Password: Welcome1. Change it after first login."
    expected = "Password: " + _MARKER + re.escape(". Change it after first login.")
    assert re.fullmatch(expected, _redacted(text, "raw"))


@pytest.mark.parametrize(
    "text",
    [
        "Token: RFC6750.",
        "token: ISO8601.",
        "token: Python3.",
        "token: Ubuntu22.",
        "token: Version2.",
        "secret: section3.",
        "secret: chapter12.",
        "- token: Version2.",
        "## Token: RFC7519.",
        "export TOKEN=Version2.",
        "2024-01-01 INFO token=Refresh1.",
        'token = "Python3."',
        '{"token": "Version2."}',
        "Model tokenizer: Mistral7.",
        "bypass: Route66.",
        "token: myToken2.",
        "token: effectOK4.",
        "aws_secret_access_key = Tiger1999.",
        # after a password's name: too short, or an algorithm's name
        "password: step1.",
        "password: bcrypt12.",
        # a test log's verdict
        "PASS: Test1.",
        "PASS: Test1$",
    ],
)
@pytest.mark.parametrize("form", ["raw", "tool_use", "tool_result"])
def test_a_dot_is_a_password_sign_only_after_a_password_name(text: str, form: str) -> None:
    assert _redacted(text, form) == text


@pytest.mark.parametrize(
    "code",
    [
        "  val apiKey: ApiKey2?",
        "  accessToken: AccessToken2?",
        "  token: TokenV2?",
        "  privateKey: Curve25519?",
        "  token: Float80?",
        "  password: UInt256?",
        "  password: String?",
        # a declared member's type, whatever its name
        "  val password: Vector3?",
        "  override var password: Hash160?",
    ],
)
def test_an_optional_type_with_digits_stays(code: str) -> None:
    text = "class Session {\n" + code + "\n}\n"
    assert redact_text(text, path="Session.kt", cache=ResultCache()).text == text


@pytest.mark.parametrize(
    "text",
    [
        # a `?` after a password's name starting its line
        "password: Passw0rd1?",
        "  password: Tiger1999?",
        # leet words before a `$`
        "password: P4ssw0rd$",
        "password: Passw0rd1$",
        "password: p4ssw0rd$",
        "password: Welc0me1$",
        "password: Adm1n123$",
    ],
)
@pytest.mark.parametrize("form", ["raw", "tool_use", "tool_result"])
def test_a_password_after_its_name_goes_with_its_sign(text: str, form: str) -> None:
    name = text.rpartition(" ")[0]
    expected = re.escape(name + " ") + _MARKER
    assert re.fullmatch(expected, _redacted(text, form)), _redacted(text, form)


@pytest.mark.parametrize(
    "text",
    [
        "PGPASSWORD=Release2.",
        "export PGPASSWORD=Release2.",
        "MYSQLPASSWORD=Release2.",
        "DJANGO_SECRET_KEY=Release2.",
        "MYSQL_PASS=Release2.",
    ],
)
@pytest.mark.parametrize("form", ["raw", "tool_use", "tool_result"])
def test_an_environment_password_keeps_its_dot(text: str, form: str) -> None:
    """An environment's password holds no prose: its last `.` is the value's, which goes whole
    as it did before the `.` could end a sentence (`PGPASSWORD` names no password by its
    words, so the password's-name test does not see it)."""
    redacted = _redacted(text, form)
    assert redacted.startswith(text.removesuffix("Release2.") + "[REDACTED:")
    assert "Release2" not in redacted


@pytest.mark.parametrize(
    "code",
    [
        "fun login(\n    user: String,\n    password: Hash160?\n)",
        "data class Credentials(\n    val user: String,\n    password: Token2?\n)",
        "struct Credentials {\n  password: Secret2?\n}",
        "init(\n    password: Optional2?\n)",
    ],
)
@pytest.mark.parametrize("form", ["raw", "tool_use"])
def test_a_parameters_or_members_optional_type_stays(code: str, form: str) -> None:
    """A key on a line after one ending in `(`, `,` or `{` is a parameter's or a member's: its
    type, digits and `?` (`Hash160?`), is no YAML password. (Escaped twice, in a tool's JSON
    result, the member is not told and the type goes, as before this reading.)"""
    assert _redacted(code, form) == code
