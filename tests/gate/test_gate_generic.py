"""Generic classes: framework secret keys, hex/base64 values under credential names, passwords
with any character, quoted values in prose; whole-value spans; their look-alikes untouched."""

from __future__ import annotations

import json
import random
import re

import gate_corpus
import gate_corpus_generic
import pytest
from deadline import time_limit

from stet_lsp.gate import GateConfig, ResultCache, redact_text, scan_text
from stet_lsp.gate.rules_generic import GENERIC_RULES

FORMAT_NAMES = {fmt.name for fmt in gate_corpus_generic.GENERIC_FORMATS}
NEGATIVES = gate_corpus.negative_cases()


def _missed(cases: list[gate_corpus.Case]) -> list[tuple[str, str]]:
    missed = []
    for case in cases:
        redacted = redact_text(case.text, config=GateConfig(), path=case.path).text
        if gate_corpus.surviving_fragments(redacted, case.secrets):
            missed.append((case.format, case.context))
    return missed


def test_generic_formats_are_registered_in_the_corpus() -> None:
    assert {fmt.name for fmt in gate_corpus.FORMATS} >= FORMAT_NAMES
    kinds = {negative.kind for negative in NEGATIVES}
    assert {kind for kind, _ in gate_corpus_generic.generic_negative_values(random.Random(1))} <= (
        kinds
    )


@pytest.mark.parametrize("context", gate_corpus.CONTEXTS)
def test_every_generic_class_in_every_context(context: str) -> None:
    cases = [
        case
        for case in gate_corpus.positive_cases()
        if case.format in FORMAT_NAMES and case.context == context
    ]
    assert len(cases) == len(FORMAT_NAMES)
    assert _missed(cases) == []


def test_every_generic_class_in_every_form() -> None:
    """os.environ[...] =, setdefault, Dockerfile ENV, TOML, JSON keys, tool input, Markdown."""
    assert _missed(gate_corpus_generic.form_cases()) == []


def test_framework_settings_as_frameworks_write_them() -> None:
    assert _missed(gate_corpus_generic.framework_cases()) == []


def test_random_values_quoted_in_prose() -> None:
    assert _missed(gate_corpus_generic.prose_cases()) == []


def test_special_characters_anywhere_in_a_value_are_covered() -> None:
    assert _missed(gate_corpus_generic.special_cases()) == []


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ('DB_PASSWORD="p@ss)w#rd%&*!^"\n', "p@ss)w#rd%&*!^"),
        ("DB_PASSWORD=p@ss)w#rd%&*!^ ./run\n", "p@ss)w#rd%&*!^"),
        ("export API_TOKEN='9x~Lq+z/Rw=$k2!'\n", "9x~Lq+z/Rw=$k2!"),
    ],
)
def test_span_is_exactly_the_whole_value(text: str, value: str) -> None:
    findings = scan_text(text, cache=ResultCache())
    assert [text[f.offset : f.end_offset] for f in findings] == [value]


@pytest.mark.parametrize(
    "text",
    [
        "password: {password: Xk9vQ2mLp7Rt}\n",
        "password: [password: Xk9vQ2mLp7Rt]\n",
        "password: (password: Xk9vQ2mLp7Rt)\n",
        "token: {api_key: Xk9vQ2mLp7Rt}\n",
        "DB_PASSWORD=[api_key = Xk9vQ2mLp7Rt]\n",
        'secret: {"password": "Xk9vQ2mLp7Rt"}\n',
        'password = {password = "Xk9vQ2mLp7Rt"}\n',
        "password: [password=Xk9vQ2mLp7Rt]\n",
        "password: (password=hunter2)\n",
    ],
)
@pytest.mark.parametrize("path", ["notes.md", "events.jsonl"])
def test_a_value_assigning_a_credential_again_leaves_nothing_of_it(text: str, path: str) -> None:
    """A credential's name given a mapping, list or call that assigns one again: the outer
    assignment reads its value up to a blank (`{password:`), which ended before the secret;
    the inner assignment, inside that value, was not read. Both are now, raw and in a
    transcript's JSON."""
    value = "hunter2" if "hunter2" in text else "Xk9vQ2mLp7Rt"
    if path.endswith(".jsonl"):
        text = json.dumps({"content": text}) + "\n"
    redacted = redact_text(text, path=path, cache=None).text
    assert value not in redacted
    assert redacted.startswith(text.split(":")[0].split("=")[0])


@pytest.mark.parametrize(
    "nested",
    [
        "password: {password: %s}",
        'secret: {"password": "%s"}',
        'password = {password = "%s"}',
        "password: [password=%s]",
        "config: {password: %s}",
    ],
)
@pytest.mark.parametrize(
    "value", ["Summer2024!", "hunter22", "p4ssw0rd", "Xk9vQ2mLp7Rt", "changeme"]
)
def test_a_value_in_brackets_opened_before_its_name_is_judged_as_a_bare_one(
    nested: str, value: str
) -> None:
    """The value was judged with the bracket that closes the mapping (`Summer2024!}`), which
    reads as code's expression: a short password a person chose, redacted bare, stayed."""
    bare = redact_text(f"password: {value}\n", cache=None).text
    inside = redact_text(nested % value + "\n", cache=None).text
    assert (value in inside) == (value in bare), inside


@pytest.mark.parametrize(
    ("text", "redacted"),
    [
        ("config: {password: Xk9vQ2mLp7Rt}", "config: {password: [REDACTED:secret-assignment#1]}"),
        ("connect(password=Xk9vQ2mLp7Rt)", "connect(password=[REDACTED:secret-assignment#1])"),
        ("auth: [token: Xk9vQ2mLp7Rt]", "auth: [token: [REDACTED:secret-assignment#1]]"),
    ],
)
@pytest.mark.parametrize("path", ["notes.md", "events.jsonl"])
def test_a_value_ends_before_the_bracket_closing_the_one_opened_before_its_name(
    text: str, redacted: str, path: str
) -> None:
    """The value was read up to a blank, the mapping's or call's closing bracket with it
    (`Xk9vQ2mLp7Rt}`): the value looked for again elsewhere in the text was that, and a copy
    of the secret written bare (`I used Xk9vQ2mLp7Rt`) stayed."""
    text = f"{text}\nI connected with Xk9vQ2mLp7Rt.\n"
    expected = f"{redacted}\nI connected with [REDACTED:secret-assignment#1].\n"
    if path.endswith(".jsonl"):
        text, expected = (json.dumps({"content": t}) + "\n" for t in (text, expected))
    assert redact_text(text, path=path, cache=None).text == expected


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("password: !!str Xk9q2LmWp4TzR7vBn3Hc\n", "Xk9q2LmWp4TzR7vBn3Hc"),
        ("  api_key: !!str 'Xk9q2LmWp4TzR7vBn3Hc'\n", "Xk9q2LmWp4TzR7vBn3Hc"),
        ("secret: !!binary WGs5cTJMbVdwNFR6Ujd2Qm4zSGM=\n", "WGs5cTJMbVdwNFR6Ujd2Qm4zSGM="),
    ],
)
def test_a_yaml_tag_before_a_value_is_no_part_of_it(text: str, value: str) -> None:
    """`!!str` and `!!binary` say what the value is: the value after them goes, raw and in a
    transcript's JSON; an application's tag (`!Ref Name`), a reference and a number stay."""
    findings = scan_text(text, cache=ResultCache())
    assert [text[f.offset : f.end_offset] for f in findings] == [value]
    line = json.dumps({"type": "tool_result", "content": text}) + "\n"
    redacted = redact_text(line, path="events.jsonl").text
    assert value not in redacted
    assert json.loads(redacted)["content"] == text.replace(value, "[REDACTED:secret-assignment#1]")
    assert redact_text(redacted, path="events.jsonl").text == redacted
    for other in (
        "password: !Ref DbPassword\n",
        'password: !!str "$DB_PASSWORD"\n',
        "token: !!str your-token-here\n",
        "max_tokens: !!int 4096\n",
    ):
        assert scan_text(other, cache=ResultCache()) == [], other


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("  password: &db_password Xk9q2LmWp4TzR7vBn3Hc\n", "Xk9q2LmWp4TzR7vBn3Hc"),
        ("DB_PASSWORD: &pw 'Xk9q2LmWp4TzR7vBn3Hc'\n", "Xk9q2LmWp4TzR7vBn3Hc"),
        ("api_key: &key !!str Xk9q2LmWp4TzR7vBn3Hc\n", "Xk9q2LmWp4TzR7vBn3Hc"),
        ("secret: !!str &s Xk9q2LmWp4TzR7vBn3Hc\n", "Xk9q2LmWp4TzR7vBn3Hc"),
    ],
)
def test_a_yaml_anchor_before_a_value_is_no_part_of_it(text: str, value: str) -> None:
    """An anchor names the value for aliases (`*db_password`) to repeat: the value after it
    goes, raw and in a transcript's JSON; an alias, an anchor opening a block, Rust's borrows
    (`&mut`, `&str`) and a reference after an anchor stay."""
    findings = scan_text(text, cache=ResultCache())
    assert [text[f.offset : f.end_offset] for f in findings] == [value]
    line = json.dumps({"type": "tool_result", "content": "defaults: &defaults\n" + text}) + "\n"
    redacted = redact_text(line, path="events.jsonl").text
    assert value not in redacted
    assert redact_text(redacted, path="events.jsonl").text == redacted
    for other in (
        "password: *db_password\n",
        "password: &db_password\n",
        "x-secrets: &secrets\n  API_KEY: ${API_KEY}\n",
        "password: &pw <%= ENV['DB_PASSWORD'] %>\n",
        'password: &pw "{{ vault_db_password }}"\n',
        "let token = &mut TokenStream::new();\n",
        "fn login(password: &str, token: &Token) -> bool\n",
        "let password: &'static str = CONFIG.password;\n",
    ):
        assert scan_text(other, cache=ResultCache()) == [], other


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ('    db_password: str = "Vq7#mRz2Lp9xKw4T"\n', "Vq7#mRz2Lp9xKw4T"),
        (
            '    api_key: str | None = "Tq8ZmW3kRx7LpN2vYc5JhB9sDf4G"\n',
            "Tq8ZmW3kRx7LpN2vYc5JhB9sDf4G",
        ),
        ("API_SECRET: Final = 'Tq8ZmW3kRx7LpN2vYc5JhB9sDf4G'\n", "Tq8ZmW3kRx7LpN2vYc5JhB9sDf4G"),
        (
            'export const API_TOKEN: string = "Tq8ZmW3kRx7LpN2vYc5JhB9s";\n',
            "Tq8ZmW3kRx7LpN2vYc5JhB9s",
        ),
        (
            'private val clientSecret: String = "Tq8ZmW3kRx7LpN2vYc5JhB9s"\n',
            "Tq8ZmW3kRx7LpN2vYc5JhB9s",
        ),
        ('const API_KEY: &str = "Tq8ZmW3kRx7LpN2vYc5JhB9s";\n', "Tq8ZmW3kRx7LpN2vYc5JhB9s"),
        ('const deployToken string = "Tq8ZmW3kRx7LpN2vYc5JhB9s"\n', "Tq8ZmW3kRx7LpN2vYc5JhB9s"),
        ('\tdbPassword string = "Vq7#mRz2Lp9xKw4T"\n', "Vq7#mRz2Lp9xKw4T"),
    ],
)
def test_a_value_after_a_declared_type(text: str, value: str) -> None:
    findings = scan_text(text, path="settings.py", cache=ResultCache())
    assert [text[f.offset : f.end_offset] for f in findings] == [value]


@pytest.mark.parametrize(
    "text",
    [
        "    password: Optional[str] = None\n",
        "    api_key: str | None = Field(default=None)\n",
        '    token: str = os.environ["API_TOKEN"]\n',
        "    client_secret: str = settings.client_secret\n",
        '    token: str = ""\n',
        'var apiToken string = os.Getenv("API_TOKEN")\n',
        "func sign(token string) error {\n",
    ],
)
def test_code_after_a_declared_type_stays(text: str) -> None:
    assert scan_text(text, path="settings.py", cache=ResultCache()) == []


@pytest.mark.parametrize(
    "command",
    [
        "vercel deploy --prod --token {value}",
        'heroku login --token "{value}" --scope acme',
        "acme-cli push --api-key {value}",
        "llm --openai_api_key {value} 'hi'",
        "oauth2-proxy --client-secret '{value}'",
        "vault login -token {value}",
        "./deploy.sh --password {value}",
        "aws secretsmanager put-secret-value --secret-id prod/db --secret-string {value}",
        "aws secretsmanager create-secret --name prod/db --secret-string '{value}'",
    ],
)
def test_a_credentials_flag_and_its_value_after_a_blank(command: str) -> None:
    value = "Rk7mZq2XwL9pTv4NcB8yJh3s"
    text = command.format(value=value) + "\n"
    findings = scan_text(text, path="session.sh", cache=ResultCache())
    assert [text[f.offset : f.end_offset] for f in findings] == [value]
    record = json.dumps({"command": text}) + "\n"
    assert value not in redact_text(record, path="events.jsonl").text


@pytest.mark.parametrize(
    "command",
    [
        "gh release upload --token $GITHUB_TOKEN",
        'deploy --token "$(gh auth token)"',
        "deploy --token ${{ secrets.DEPLOY_TOKEN }}",
        "docker login --password-stdin",
        "kubectl create --secret-name db-credentials-prod",
        "cli --api-key <YOUR_API_KEY>",
        "cli --token YOUR_TOKEN_HERE",
        "cli --token-file ~/.config/cli/token",
        "train.py --tokenizer gpt2 --max-tokens 1024",
        "  --token TOKEN         API token (env: VERCEL_TOKEN)",
        "usage: cli [--token TOKEN] [--secret SECRET] [--api-key API_KEY]",
        "cli --password /run/secrets/db_password",
        "cli --secret my_secret_name",
        "docker build --secret id=mysecret,src=mysecret.txt .",
        "docker buildx build --secret id=npmrc,src=$HOME/.npmrc .",
    ],
)
def test_a_credentials_flag_without_a_generated_value_stays(command: str) -> None:
    assert scan_text(command + "\n", path="session.sh", cache=ResultCache()) == []


@pytest.mark.parametrize("operator", ["?=", "::=", ":::="])
def test_a_makefile_assignment_of_a_credential(operator: str) -> None:
    text = (
        f"DEPLOY_TOKEN {operator} Rk7mZq2XwL9pTv4NcB8yJh3s\ntoken_file {operator} ~/.deploy/token\n"
    )
    findings = scan_text(text, path="Makefile", cache=ResultCache())
    assert [text[f.offset : f.end_offset] for f in findings] == ["Rk7mZq2XwL9pTv4NcB8yJh3s"]


def test_a_c_array_of_a_credential() -> None:
    for text, value in (
        ('char wifi_pass[] = "Vq7#mRz2Lp9xKw4T";\n', "Vq7#mRz2Lp9xKw4T"),
        (
            'static const char api_key[25] = "Rk7mZq2XwL9pTv4NcB8yJh3s";\n',
            "Rk7mZq2XwL9pTv4NcB8yJh3s",
        ),
    ):
        findings = scan_text(text, path="main.c", cache=ResultCache())
        assert [text[f.offset : f.end_offset] for f in findings] == [value], text
    for code in ("char password[64];\n", "password[i] = c;\n", "token[0] = next;\n"):
        assert scan_text(code, path="main.c", cache=ResultCache()) == [], code


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ('std::string secret("Wn4#tKq8Zr2mLx7P");\n', "Wn4#tKq8Zr2mLx7P"),
        ('    std::string api_key{"Hq3vTz8Lm2Rx7KcW5pNy"};\n', "Hq3vTz8Lm2Rx7KcW5pNy"),
        ('const std::string db_password { "Wn4#tKq8Zr2mLx7P" };\n', "Wn4#tKq8Zr2mLx7P"),
        ('QString password ("Wn4#tKq8Zr2mLx7P");\n', "Wn4#tKq8Zr2mLx7P"),
        ('static char *auth_token("Hq3vTz8Lm2Rx7KcW5pNy");\n', "Hq3vTz8Lm2Rx7KcW5pNy"),
        ('std::string api_key = {"Hq3vTz8Lm2Rx7KcW5pNy"};\n', "Hq3vTz8Lm2Rx7KcW5pNy"),
        ('const wchar_t* password = L"Wn4#tKq8Zr2mLx7P";\n', "Wn4#tKq8Zr2mLx7P"),
        ('std::string api_token{u8"Hq3vTz8Lm2Rx7KcW5pNy"};\n', "Hq3vTz8Lm2Rx7KcW5pNy"),
        ('const char* password = "Wn4#tKq8Zr2mLx7P";\n', "Wn4#tKq8Zr2mLx7P"),
        ('char const *api_key = "Hq3vTz8Lm2Rx7KcW5pNy";\n', "Hq3vTz8Lm2Rx7KcW5pNy"),
        # A wrapper's literal is the value, not the code before it.
        ('auto token = std::string("Hq3vTz8Lm2Rx7KcW5pNy");\n', "Hq3vTz8Lm2Rx7KcW5pNy"),
        ('String password = new String("Wn4#tKq8Zr2mLx7P");\n', "Wn4#tKq8Zr2mLx7P"),
    ],
)
def test_a_cpp_initialisation_of_a_credential(text: str, value: str) -> None:
    """C++ initialises a declared name with parentheses or braces, and a literal may carry
    an encoding prefix or stand in a constructor's call: the literal is the value."""
    findings = scan_text(text, path="main.cpp", cache=ResultCache())
    assert [text[f.offset : f.end_offset] for f in findings] == [value]
    line = json.dumps({"type": "tool_result", "content": "main.cpp:\n" + text}) + "\n"
    redacted = redact_text(line, path="events.jsonl", cache=ResultCache()).text
    assert value not in redacted
    assert "[REDACTED:secret-assignment#1]" in json.loads(redacted)["content"]


@pytest.mark.parametrize(
    "code",
    [
        "check_password(input);\n",
        'std::string secret(GetEnv("APP_SECRET"));\n',
        "std::string api_key{config.api_key()};\n",
        'std::string password("");\n',
        'QString password(tr("Password"));\n',
        'std::string token = std::getenv("API_TOKEN");\n',
        'auto secret = std::string("/run/secrets/app/secret");\n',
        # A call's literal of words is a prompt or a message; a pattern is no secret.
        'token = tokenizer.encode("Hello world, this is a test")\n',
        'password = input("Enter password: ")\n',
        'TOKEN_RE = re.compile(r"ghp_[A-Za-z0-9]{36}")\n',
        'token = "ghp_[A-Za-z0-9]{36}"\n',
        'SECRET_RE = re.compile(r"(?i)secret\\s*=\\s*(\\S+)")\n',
    ],
)
def test_code_around_a_credentials_name_stays(code: str) -> None:
    assert scan_text(code, path="main.cpp", cache=ResultCache()) == []


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("password: Tr0ub4dor&3 horse battery\n", "Tr0ub4dor&3 horse battery"),
        (
            "db:\n  password: 9vQ!x2Lm violet staple  # rotated in May\n  user: app\n",
            "9vQ!x2Lm violet staple",
        ),
        ("  - smtp_passphrase: lantern Wq7#zK2p orbit\n", "lantern Wq7#zK2p orbit"),
    ],
)
def test_a_yaml_passphrase_goes_whole(text: str, value: str) -> None:
    """A YAML plain scalar runs to the line's end or a comment: a passphrase holding a random
    word is redacted whole, not up to its first blank, also in a transcript's JSON (where
    detect-secrets' keyword plugin reads no line's end)."""
    line = json.dumps({"type": "tool_result", "content": "config.yml:\n" + text}) + "\n"
    findings = scan_text(line, path="events.jsonl", cache=ResultCache())
    assert [(f.rule, line[f.offset : f.end_offset]) for f in findings] == [
        ("secret-assignment", value)
    ]
    redacted = redact_text(line, path="events.jsonl", cache=ResultCache()).text
    assert not any(word in redacted for word in value.split())
    json.loads(redacted)
    assert not any(word in _redacted_raw(text) for word in value.split())


def _redacted_raw(text: str) -> str:
    return redact_text(text, path="config.yml", cache=ResultCache()).text


@pytest.mark.parametrize(
    "text",
    [
        # Words alone: a passphrase, or prose and labels as often; no rule of the gate's own
        # takes them.
        "password: correct horse battery staple\n",
        "Password: see the vault entry\n",
        "password: The one you set at signup.\n",
        "password: ${DB_PASSWORD}\n",
        "password: !vault |\n",
        "password: {{ .Values.db.password }}\n",
    ],
)
def test_a_yaml_password_of_words_or_a_template_stays(text: str) -> None:
    line = json.dumps({"type": "tool_result", "content": text}) + "\n"
    assert scan_text(line, path="events.jsonl", cache=ResultCache()) == []


def test_a_php_string_appended_to_a_credential() -> None:
    text = '$apiSecret .= "Rk7mZq2XwL9pTv4NcB8yJh3s";\n'
    findings = scan_text(text, path="config.php", cache=ResultCache())
    assert [text[f.offset : f.end_offset] for f in findings] == ["Rk7mZq2XwL9pTv4NcB8yJh3s"]


@pytest.mark.parametrize("call", ["os.environ.setdefault", "os.Setenv", "System.setProperty"])
def test_a_credential_set_by_a_call_in_a_transcript(call: str) -> None:
    code = f'{call}("DEPLOY_TOKEN", "Rk7mZq2XwL9pTv4NcB8yJh3s")'
    line = json.dumps({"type": "tool_result", "content": code}) + "\n"
    redacted = redact_text(line, path="events.jsonl", cache=ResultCache()).text
    assert "Rk7mZq2XwL9pTv4NcB8yJh3s" not in redacted
    assert json.loads(redacted)["content"].startswith(f'{call}("DEPLOY_TOKEN", "[REDACTED:')


def test_a_java_system_property_of_a_credential() -> None:
    text = 'System.setProperty("javax.net.ssl.keyStorePassword", "Wn4#tKq8Zr2mLx7P");\n'
    findings = scan_text(text, path="Main.java", cache=ResultCache())
    assert [text[f.offset : f.end_offset] for f in findings] == ["Wn4#tKq8Zr2mLx7P"]
    for code in (
        'System.setProperty("javax.net.ssl.keyStorePassword", password);\n',
        'System.setProperty("javax.net.ssl.trustStore", "/etc/pki/truststore.jks");\n',
    ):
        assert scan_text(code, path="Main.java", cache=ResultCache()) == [], code


def test_generic_negatives_are_untouched() -> None:
    touched = []
    for negative in NEGATIVES:
        if negative.kind.startswith("generic-") and scan_text(negative.text, path=negative.path):
            touched.append((negative.kind, negative.context))
    assert touched == []


def test_false_positive_rate_over_all_negatives_is_at_most_one_percent() -> None:
    touched = sum(bool(scan_text(n.text, path=n.path)) for n in NEGATIVES)
    assert touched / len(NEGATIVES) <= 0.01


def test_redaction_is_idempotent_on_generic_cases() -> None:
    for case in gate_corpus_generic.special_cases()[:40] + gate_corpus_generic.form_cases()[:40]:
        once = redact_text(case.text, path=case.path).text
        assert redact_text(once, path=case.path).text == once


HOSTILE = {
    "framework-secret-key": "SECRET_KEY_BASE=" + "a" * 7 + ' secret_key="' + "(" * 300,
    "credential-assignment": "MY_AUTH_KEY: '" + "A1" * 3000 + " key=" + "b" * 15 + "\\",
    "credential-env-call": 'os.environ.setdefault("API_TOKEN", "' + "x!" * 400 + "\n",
    "credential-dockerfile-env": "\nENV SIGNING_KEY " + "z" * 7 + "\\n" * 10,
    "prose-secret": "the token is `" + "q9" * 150 + " key `" + "`" * 50,
    "secret-assignment": 'db_password="' + "\\x" * 500 + "p@ss)" * 200,
}


@pytest.mark.parametrize("near", HOSTILE.values(), ids=list(HOSTILE))
def test_hostile_near_misses_finish(near: str) -> None:
    assert {rule.name for rule in GENERIC_RULES} <= {
        "framework-secret-key",
        "credential-assignment",
        "prose-secret",
    }
    text = (near + "\n") * (400_000 // (len(near) + 1) + 1)
    text_oneline = re.sub("\n", " ", text)

    for candidate in (text, text_oneline):
        with time_limit(30):
            scan_text(candidate, config=GateConfig(), cache=ResultCache())
        with time_limit(30):
            scan_text(candidate, config=GateConfig(strict=True), path="x.json", cache=None)


@pytest.mark.parametrize(
    "line",
    [
        "--- PASS: TestExtractUserPrompts/Claude_Code_JSONL_with_user_messages (0.00s)",
        "    --- PASS: TestParseV2Config (0.01s)",
        "PASS: tests/integration/run_all.sh",
    ],
)
def test_a_test_runners_result_line_is_no_password(line: str) -> None:
    """Go's `--- PASS: <test>` and automake's `PASS: <script>` name a test."""
    assert scan_text(line + "\n", path="out.txt", cache=None) == []
    assert scan_text(json.dumps({"output": line}) + "\n", path="e.jsonl", cache=None) == []
    assert scan_text(
        "PASS: k9Qm2xR7tLw4Zp8Vn3Hc6Jd1\n", path="out.txt", cache=None
    )  # a value is still one


@pytest.mark.parametrize(
    "line",
    [
        "PASS: binutils-all/i386/empty",
        "XPASS: gas/elf/section-symbol-redef",
        "Passed: compiler/arraycopy/TestArrayCopyAsLoadsStores.java#id0",
        "Passed: java/foreign/TestCircularInit1.java",
    ],
)
def test_a_test_path_in_a_result_line_is_no_password(line: str) -> None:
    """DejaGnu's `PASS: <dir>/<test>` and jtreg's `Passed: <path>.java#<case>` name a test by
    its path, mixed letters and digits included; a password with slashes stays one."""
    assert scan_text(line + "\n", path="log.txt", cache=None) == []
    assert scan_text(json.dumps({"output": line}) + "\n", path="e.jsonl", cache=None) == []
    for secret in (
        "k9Qm/2xR7tLw4/Zp8Vn3Hc6Jd1",
        "Xk9q2LmWp4Tz/R7vBn3Hc6Jd1.sh",
        "hunter2/Xk9q2Lm4",
    ):
        line = f"PASS: {secret}\n"
        assert secret not in redact_text(line, path="log.txt", cache=None).text


@pytest.mark.parametrize(
    "line",
    [
        "PASS: t0001-basic.sh",
        "PASS: t/t5510-fetch.sh",
        "PASS: t/01-basic.t",
        "PASS: 001.t",
        "PASS: test_api.py",
        "PASS: gas/i386/x86-64-pr20141",
    ],
)
def test_a_short_test_files_name_alone_is_no_password(line: str) -> None:
    """A test's script named in a few letters (git's `t0001-basic.sh`, Perl's `t/01-basic.t`)
    has too few letter pairs to be judged by them: its parts, words and numbers, name a test
    on a lone verdict line too; a short value of letters and digits mixed stays a password."""
    assert scan_text(line + "\n", path="log.txt", cache=None) == []
    assert scan_text(json.dumps({"output": line}) + "\n", path="e.jsonl", cache=None) == []
    for secret in ("t/Xk9q2Lm.sh", "t/a1b2c3.t", "xk9q/2lmw.sh", "k9qm/2xr7/tlw4"):
        text = f"PASS: {secret}\n"
        for scanned, path in ((text, "log.txt"), (json.dumps({"o": text}) + "\n", "e.jsonl")):
            assert secret not in redact_text(scanned, path=path, cache=None).text


@pytest.mark.parametrize(
    "log",
    [
        "PASS: gas/i386/x86-64-pr20141\nPASS: -Bsymbolic-functions\nFAIL: ld-elf/pr26256-2b\n",
        "Running /build/binutils-2.40/ld/testsuite/ld-misc/defsym.exp ...\nPASS: ld-misc/defsym1\n",
        "PASS: SORT_BY_NAME(SORT_BY_ALIGNMENT()) --sort-section alignment\n"
        "UNSUPPORTED: ld-elf/compressed1d-alt\n",
        "PASS: gdb.dwarf2/dw2-errno.exp: continue to breakpoint: breakpoint\n"
        "DUPLICATE: gdb.dwarf2/dw2-errno.exp: continue to breakpoint: breakpoint\n",
        "XFAIL: t/basic.sh\nKPASS: t/known-1b\nXPASS: t/flaky-2c\n",
        "=== RUN   TestParse\n    --- PASS: TestParse/utf8_bom-2 (0.00s)\n",
        # a quote in the line before is no line's start
        'PASS: gdb.base/align-c++.exp: get integer valueof "a_char_x_char"\n'
        "PASS: gdb.base/align-c++.exp: print alignof(struct align_pair)\n",
        # in JSON the `n` of `\\n` is no part of the name (`nPASS` reads as a password's)
        "PASS: Dwarf3 function debug info\nPASS: Dwarf5 function debug info\n",
    ],
)
def test_a_test_logs_verdict_lines_name_tests(log: str) -> None:
    """A verdict line of a test log (`PASS:` starting its line, another verdict line before
    or after it) names a test, whatever its letters and digits, unless a part reads as
    generated."""
    assert scan_text(log, path="check.log", cache=None) == []
    assert scan_text(json.dumps({"output": log}) + "\n", path="e.jsonl", cache=None) == []


def test_a_long_test_log_in_a_json_string_keeps_its_tests_names() -> None:
    """A window of a JSON string decoded around a hit started where it fell: right after the
    backslash of a `\\n`, its first line read `nPASS: …`, which is no verdict line, and the
    test's name on it was redacted as a password's (in a log of lines of some lengths)."""
    words = "long-test-name-of-the-assembler-suite-in-binutils-testsuite"
    for width in range(40, 80):
        names = [f"gas/i386/x86-64-pr{20000 + i}-{words}"[:width] for i in range(120)]
        log = "".join(f"PASS: {name}\n" for name in names)
        record = json.dumps({"type": "tool_result", "content": log}) + "\n"
        assert scan_text(record, path="e.jsonl", cache=None) == [], width


def test_a_jtreg_log_in_a_json_string_keeps_its_tests_paths() -> None:
    """A window of a JSON string decoded around a hit ended where it fell: a test's path on
    a jtreg `Passed:` line across that end read as `compiler/c2/TestTopCastIIOn`, without the
    extension that makes it a test's source, and was redacted, with every copy of it."""
    names = [
        "compiler/c2/Test6866651.java",
        "compiler/c2/Test7041100.java",
        "compiler/c2/TestTopCastIIOnUndetectedDeadPath4.java#JDK-8293941",
    ]
    for repeats in range(1, 80, 3):
        log = "".join(f"Passed: {name}\n" for name in names * repeats)
        assert scan_text(log, path="jtreg.log", cache=None) == []
        record = json.dumps({"type": "tool_result", "content": log}) + "\n"
        assert scan_text(record, path="e.jsonl", cache=None) == [], repeats


@pytest.mark.parametrize(
    "line",
    [
        "Passed: runtime/condy/CondyBadLDC2_W.jasm",
        "Passed: runtime/defaultMethods/I2.jasm",
        "Passed: runtime/records/badRecordAttr3.jcod",
        "Passed: java/awt/Focus/8044614/applet2.html",
        "Passed: vmTestbase/gc/ArrayJuggle/Juggle07/Juggle07.java",
        "Passed: runtime/valhalla/field_layout/CompositionTest.java#CompositionTest_no_atomic"
        "_flat_and_nullable_atomic_flat_and_nullable_non_atomic_flat_and_no_nullable_flat",
        "    Passed: runtime/interpreter/Linked4.jasm",
    ],
)
def test_a_jtreg_summary_line_names_a_test_alone(line: str) -> None:
    """jtreg's summary line, `Passed: ` and the test's path under its suite's root (a source,
    a shell script, an applet's page, a class file's assembly, perhaps a case after `#`),
    names a test, alone on its line, whatever its letters and digits: in a log of several,
    with Windows' line ends, and in a transcript's JSON."""
    for text in (f"{line}\n", f"{line}\nPassed: java/lang/String/Chars.java\n", f"{line}\r\n"):
        assert scan_text(text, path="jtreg.log", cache=None) == []
        assert scan_text(json.dumps({"output": text}) + "\n", path="e.jsonl", cache=None) == []


@pytest.mark.parametrize(
    ("text", "password"),
    [
        ("Passed: Summer2024!\n", "Summer2024!"),
        ("Passed: Xk9vQ2mLp7Rt\n", "Xk9vQ2mLp7Rt"),
        # no test's file, or not alone on a line of its own
        ("Passed: k9Qm/2xR7tLw4.jar\n", "k9Qm/2xR7tLw4.jar"),
        ("Passed: k9Qm/2xR7tLw4.java extra\n", "k9Qm/2xR7tLw4.java"),
        ("echo Passed: k9Qm/2xR7tLw4.java\n", "k9Qm/2xR7tLw4.java"),
        ("Passed=k9Qm/2xR7tLw4.java\n", "k9Qm/2xR7tLw4.java"),
        # a password's other names
        ("PASS: k9Qm/2xR7tLw4.java\n", "k9Qm/2xR7tLw4.java"),
        ("PASSED: k9Qm/2xR7tLw4.java\n", "k9Qm/2xR7tLw4.java"),
        ("Password: k9Qm/2xR7tLw4.java\n", "k9Qm/2xR7tLw4.java"),
        ("passwd: k9Qm/2xR7tLw4.java\n", "k9Qm/2xR7tLw4.java"),
        # a login's password, whatever it reads as
        ("User: admin\nPassed: k9Qm/2xR7tLw4.java\n", "k9Qm/2xR7tLw4.java"),
        ("USER: admin\nPassed: runtime/condy/CondyBadLDC2_W.jasm\n", "CondyBadLDC2_W"),
    ],
)
def test_a_password_that_is_no_jtreg_summary_line_stays_one(text: str, password: str) -> None:
    """Only jtreg's own `Passed: ` and a relative test's path alone on its line is a verdict:
    another value, a password's other names, or a login's `Passed:` is still redacted."""
    record = json.dumps({"type": "tool_result", "content": text}) + "\n"
    for scanned, path in ((text, "notes.txt"), (record, "s.jsonl")):
        assert password not in redact_text(scanned, path=path, cache=None).text


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("PASS: ld-elf/pr23591\nPASS: Xk9vQ2mLp7Rt\nFAIL: ld-elf/now-3\n", "Xk9vQ2mLp7Rt"),
        ("PASS: ld-elf/pr23591\nPASS: Xk9q2Lm4\n", "Xk9q2Lm4"),
        # Alone, a note's password as much as a verdict.
        ("PASS: -Bsymbolic-functions\n", "-Bsymbolic-functions"),
        ("USER: bob\nPASS: ld-x86-64/pr20253-1g\n", "ld-x86-64/pr20253-1g"),
        ("echo PASS: ld-x86-64/pr20253-1g\nPASS: ld-elf/pr23591\n", "ld-x86-64/pr20253-1g"),
        ("PASS=Xk9vQ2mLp7Rt\nFAIL: ld-elf/now-3\n", "Xk9vQ2mLp7Rt"),
        ("DB_PASS: Xk9vQ2mLp7Rt\nPASS: ld-elf/pr23591\n", "Xk9vQ2mLp7Rt"),
        ("services:\n  db:\n    environment:\n      PASS: Xk9vQ2mLp7Rt\n", "Xk9vQ2mLp7Rt"),
        # A chosen password's symbols are in no test's name.
        ("PASS: P@ssw0rd!2024\nERROR: x\n", "P@ssw0rd!2024"),
        ("XPASS: Xk9#mQ2$\r\nFAIL: ld-elf/now-3\r\n", "Xk9#mQ2$"),
        # In plain text a `\\n` is two characters, not the break before a verdict line.
        ("PASS: hunter-22x\nuser: bob\nprintf 'ok\\nSKIP: none'\n", "hunter-22x"),
    ],
)
def test_a_password_after_pass_outside_a_verdict_line_stays_one(text: str, value: str) -> None:
    """Only a verdict line of a test log names a test: a generated value after `PASS:` in a
    log, a lone `PASS:` line, one after a line that is no verdict, `PASS=`, `DB_PASS:` and a
    mapping's `PASS:` are a password's assignment."""
    for scanned, path in ((text, "check.log"), (json.dumps({"output": text}) + "\n", "e.jsonl")):
        assert value not in redact_text(scanned, path=path, cache=None).text


_LOG = "PASS: gas/i386/x86-64-pr20141\nFAIL: gas/i386/x86-64-pr20144\n"


@pytest.mark.parametrize("value", ["P@ssw0rd!2024", "Xk9#mQ2$", "Xk9vQ2mLp7Rt", "Xk9q2Lm4"])
def test_a_password_among_a_test_logs_verdicts_is_no_tests_name(value: str) -> None:
    """A verdict line's value that no test suite names a test by is a password's, in a test
    log: one holding a chosen password's symbols, or reading as generated."""
    for text in (f"{_LOG}PASS: {value}\n", f"PASS: {value}\n{_LOG}"):
        for scanned, path in ((text, "check.log"), (json.dumps({"o": text}) + "\n", "e.jsonl")):
            redacted = redact_text(scanned, path=path, cache=None).text
            assert value not in redacted
            assert "x86-64-pr20141" in redacted


@pytest.mark.parametrize(
    "name",
    [
        # words, whatever they say, joined with numbers
        "password-reset-2",
        "admin-login-1",
        "secret-rotation-3",
        "test-passwd-3",
        "Crypt-Password-1",
        "HTTP2-Server-1",
        "tst-Summer3",
        "Summer-2024",
        "s3cr3t-Pa55",
        # hex digits: a digest's, a UUID's, a Go fuzz corpus entry's
        "hash-sha256-abcdef12",
        "123e4567-e89b-12d3",
        "FuzzReverse/582528ddfad69eb5",
        # Go's subtests
        "TestParse/s3cr3t",
        "TestParse/Summer2024",
        # one word
        "Dwarf5",
        "provide-12",
        "TestIssue1234",
    ],
)
def test_a_tests_name_among_verdicts_is_kept_whatever_its_words(name: str) -> None:
    """Test suites name tests by words joined with `-`, `_`, `/`, `.` and numbers, whatever
    the words say: among verdict lines none of them is a password (each was redacted, and
    every copy of it in the file: the scripts' list, the source's path)."""
    for text in (f"{_LOG}PASS: {name}\n", f"PASS: {name}\n{_LOG}"):
        text += f"TESTS = {name}\n# see tests/{name}.sh\n"
        for scanned, path in ((text, "check.log"), (json.dumps({"o": text}) + "\n", "e.jsonl")):
            assert scan_text(scanned, path=path, cache=None) == []


def test_gos_numbered_subtests_among_verdicts_are_tests_names() -> None:
    """Go numbers a subtest given no name or a name given twice (`TestParse/#00`) and a fuzz
    test's seeds (`FuzzReverse/seed#0`): a `#` no password's, and every copy of the name, on
    its `=== RUN` line too, was redacted."""
    log = (
        "=== RUN   TestParse\n=== RUN   TestParse/#00\n=== RUN   TestParse/empty#01\n"
        "--- PASS: TestParse (0.00s)\n    --- PASS: TestParse/#00 (0.00s)\n"
        "    --- PASS: TestParse/empty#01 (0.00s)\n"
        "=== RUN   FuzzReverse\n=== RUN   FuzzReverse/seed#0\n"
        "--- PASS: FuzzReverse (0.00s)\n    --- PASS: FuzzReverse/seed#0 (0.00s)\n"
    )
    assert scan_text(log, path="go.log", cache=None) == []
    assert scan_text(json.dumps({"o": log}) + "\n", path="e.jsonl", cache=None) == []


@pytest.mark.parametrize(
    "line",
    [
        "--- PASS: TestParse/case_1 (0.00s)",
        "    --- PASS: TestLogin/valid_user_2 (0.01s)",
        "--- FAIL: TestParse/Summer2024 (12.345s)",
    ],
)
def test_gos_verdict_line_alone_names_a_test(line: str) -> None:
    """Go's verdict line, `--- PASS: <name> (<seconds>s)`, names a test alone too (a run of
    one test, `go test -run`), as no note's password is written."""
    for text, path in ((f"{line}\n", "go.log"), (json.dumps({"o": f"ok\n{line}\n"}), "e.jsonl")):
        assert scan_text(text, path=path, cache=None) == []


@pytest.mark.parametrize(
    "name",
    [
        "TestParse",
        "Test1",
        "Benchmark1",
        "Benchmark2024",
        "Example1",
        "Fuzz1",
        "BenchmarkParse/size_10",
        "Benchmark1/small",
        "TestParse/size_10",
    ],
)
def test_gos_test_function_alone_names_a_test(name: str) -> None:
    """Go names a test, a benchmark, an example or a fuzz test `Test`, `Benchmark`, `Example`
    or `Fuzz` and no lower-case letter after it: `PASS: Benchmark1` names one as
    `PASS: TestParse` does, on a lone line too, and so does its subtest's name."""
    text = f"PASS: {name}\n"
    for scanned, path in ((text, "go.log"), (json.dumps({"o": text}) + "\n", "e.jsonl")):
        assert scan_text(scanned, path=path, cache=None) == []


@pytest.mark.parametrize(
    "password", ["Benchmarking1", "Testing123", "Fuzzy2024", "TestParse/P@ssw0rd!", "Test!2024x"]
)
def test_a_password_that_starts_as_gos_test_functions_do_is_still_one(password: str) -> None:
    text = f"PASS: {password}\n"
    for scanned, path in ((text, "notes.txt"), (json.dumps({"o": text}) + "\n", "e.jsonl")):
        assert password not in redact_text(scanned, path=path, cache=None).text


def test_a_password_on_a_line_shaped_as_gos_verdict_is_still_one() -> None:
    found = scan_text("--- PASS: P@ssw0rd!2024 (0.00s)\n", path="go.log", cache=None)
    assert [f.rule for f in found] == ["secret-assignment"]
    password = f"{_LOG}PASS: TestParse/Xk9#mQ2$\n"
    assert "Xk9#mQ2$" not in redact_text(password, path="go.log", cache=None).text


def test_a_verdict_line_is_one_by_its_verdict_and_shape_whatever_its_name() -> None:
    """A `PASS:` line is a verdict line for the lines beside it whatever the name on it:
    a Go subtest's name beside one that reads as a password's is a test's all the same."""
    log = (
        "    --- PASS: TestParse/Summer2024 (0.00s)\n"
        "    --- PASS: P@ssw0rd!2024 (0.00s)\n"
        "--- FAIL: TestParse (0.00s)\n"
    )
    for scanned, path in ((log, "go.log"), (json.dumps({"o": log}) + "\n", "e.jsonl")):
        redacted = redact_text(scanned, path=path, cache=None).text
        assert "TestParse/Summer2024" in redacted
        assert "P@ssw0rd!2024" not in redacted


@pytest.mark.parametrize(
    ("text", "password"),
    [
        ("User: bob\nPass: Summer2024\n", "Summer2024"),
        ("User: bob\nPASS: hunter2\n", "hunter2"),
        ("login\nPass: Welcome1\n", "Welcome1"),
        ("login\nPass: qwerty123\n", "qwerty123"),
        ("log\nPASS: Tr0ub4dor\n", "Tr0ub4dor"),
        # beside verdicts, one word written with digits for its letters is no test's name
        (f"{_LOG}PASS: Pa55w0rd\n", "Pa55w0rd"),
        (f"{_LOG}PASS: P4ssw0rd1\n", "P4ssw0rd1"),
    ],
)
def test_a_pass_line_that_is_no_verdict_is_judged_as_a_passwords(text: str, password: str) -> None:
    """A `Pass:` or `PASS:` line that is no test log's verdict line assigns a password, its
    value judged as after `password:`: a word and digits a person chose is redacted, in plain
    text as in a transcript's JSON."""
    record = json.dumps({"type": "tool_result", "content": text}) + "\n"
    for scanned, path in ((text, "notes.txt"), (record, "s.jsonl")):
        redacted = redact_text(scanned, path=path, cache=None).text
        assert password not in redacted
        if _LOG in text:
            assert "x86-64-pr20141" in redacted  # the test's names beside it stay


@pytest.mark.parametrize("user", ["USER: bob", "User: bob", "Username: bob", "login: bob"])
def test_a_pass_line_right_after_a_users_name_is_no_verdict(user: str) -> None:
    """A `PASS:` line right after a line naming a user is the password of that login, though
    a verdict line follows it: a log names no user between its verdicts."""
    text = f"{_LOG}{user}\nPASS: Summer-2024\n{_LOG}"
    for scanned, path in ((text, "notes.txt"), (json.dumps({"o": text}) + "\n", "e.jsonl")):
        redacted = redact_text(scanned, path=path, cache=None).text
        assert "Summer-2024" not in redacted
        assert redacted.count("x86-64-pr20141") == 2  # the test's names beside it stay


@pytest.mark.parametrize(
    ("text", "path", "password"),
    [
        ("USER: admin\nPASS: Benchmark2024\n", "notes.txt", "Benchmark2024"),
        ("USER: admin\nPASS: Test1/Pa55\n", "notes.txt", "Test1/Pa55"),
        ("USER: admin\nPASS: Summer-2024.t\n", "notes.txt", "Summer-2024.t"),
        ("PASS=Test1/Pa55\n", ".env", "Test1/Pa55"),
        ("export PASS=Welcome-1.test\n", "env.sh", "Welcome-1.test"),
        ('PASS="Summer-2024.t"\n', "run.sh", "Summer-2024.t"),
    ],
)
def test_a_logins_password_shaped_as_a_tests_name_is_redacted(
    text: str, path: str, password: str
) -> None:
    """A `PASS:` right after a user's name, or `PASS=`, assigns a login's password: shaped as
    a Go test's function or a test's script (`Benchmark2024`, `Summer-2024.t`), it is no
    test's name, in plain text as in a transcript's JSON."""
    record = json.dumps({"type": "tool_result", "content": text}) + "\n"
    for scanned, scanned_path in ((text, path), (record, "s.jsonl")):
        assert password not in redact_text(scanned, path=scanned_path, cache=None).text


@pytest.mark.parametrize(
    "line",
    [
        "password: HkBDLHFaDXosUduCJI:",
        "api_key: xKqPzWmNvBtRyLsD:",
        "export API_TOKEN=aZbYcXdWeVfUgThSqPoN:",
        "token = 'QkxhaEJsYWhCbGFoQmxhaA:'",
        'client_secret: "aZbYcXdWeVfUgThSqPoN:"',
    ],
)
def test_a_generated_value_ending_in_a_colon_is_a_secret(line: str) -> None:
    """Words with a colon after them are a mapping's next key (`op_secret_key:`), but the
    colon must not hide a generated value's look: these stay secrets."""
    [value] = re.findall(r"[A-Za-z0-9]{12,}:", line)
    assert value not in redact_text(line + "\n", path="notes.txt", cache=None).text


@pytest.mark.parametrize(
    "text",
    [
        '"Resource": "arn:aws:secretsmanager:*:*:secret:aws/ssm/3p/*",\n',
        '"ARN": "arn:aws:secretsmanager:us-west-2:123456789012:secret:MyTestDatabaseSecret-a1b2c3"\n',
        '  "arn:*:ec2:*:*:security-group/*",\n',
        '"Resource": "arn:aws-us-gov:rds:*:*:db:mydb"\n',
    ],
)
def test_an_arn_is_no_assignment_nor_pgpass_line(text: str) -> None:
    """An IAM policy's resources (`secretsmanager:…:secret:…`, `:*:` fields as a `.pgpass`
    line's port): a resource's public name; the secret beside it is still found."""
    assert scan_text(text, path="policy.txt", cache=None) == []
    assert scan_text(json.dumps({"output": text}) + "\n", path="e.jsonl", cache=None) == []
    beside = text.rstrip("\n") + ' "SecretString": "Xk9q2LmWp4Tz#R7vB"\n'
    assert "Xk9q2LmWp4Tz#R7vB" not in redact_text(beside, path="policy.txt", cache=None).text
    pgpass = "db.internal:*:app:deploy:Xk9q2LmWp4Tz\n"
    assert "Xk9q2LmWp4Tz" not in redact_text(text + pgpass, path="notes.txt", cache=None).text


@pytest.mark.parametrize(
    "text",
    [
        '    "AWS::ApiGateway::ApiKey": "48205d4ffd7feba3",\n',
        '    "AWS::AppSync::ApiKey": "3d104ea0be48564b",\n',
        '    "AWS::ACMPCA::CertificateAuthority": "456157e4ff304b13",\n',
    ],
)
def test_a_cloudformation_resource_type_is_no_credentials_name(text: str) -> None:
    """cfn-lint's schema digests by resource type: `AWS::ApiGateway::ApiKey` names a type;
    a key of that name in a template's properties, or `Config::api_key` in C++, is one."""
    assert scan_text(text, path="us_east_1.py", cache=None) == []
    assert scan_text(json.dumps({"output": text}) + "\n", path="e.jsonl", cache=None) == []
    for secret_line in (
        '"ApiKey": "48205d4ffd7feba3c9e1a7b2"\n',
        'Config::api_key = "48205d4ffd7feba3c9e1a7b2";\n',
    ):
        redacted = redact_text(text + secret_line, path="notes.txt", cache=None).text
        assert "48205d4ffd7feba3c9e1a7b2" not in redacted
