"""Code that names a password is not one: `password = args.password`, `password=password,`,
the shell's `PWD=/work/project`, `proxy_auth=self._proxy_auth`. Connection strings, `.npmrc`
entries and configured environment names are still redacted."""

from __future__ import annotations

import pytest

from stet_lsp.gate import GateConfig, ResultCache, redact_text, scan_text


def _found(text: str, config: GateConfig | None = None) -> list[tuple[str, str]]:
    return [
        (finding.rule, text[finding.offset : finding.end_offset])
        for finding in scan_text(text, config=config, path="notes.txt", cache=ResultCache())
    ]


@pytest.mark.parametrize(
    "code",
    [
        "password = args.password",
        "password = self.password",
        "    password=password,",
        "client = login(user, password=password, timeout=5)",
        "username, password = line.split(':')",
        "password = os.environ.get('DB_PASSWORD')",
        "password = getpass()",
        "password = None",
        "Password = config.database.password",
        "cd /tmp && PWD=/work/project make",
        "PWD=/work/project",
        "pwd = os.getcwd()",
        "proxy_auth=self._proxy_auth",
        "self._auth=self._proxy_auth",
    ],
)
def test_code_naming_a_password_is_not_one(code: str) -> None:
    assert _found(code + "\n") == []


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("Server=tcp:db;Database=app;User Id=sa;Password=hunter2;", "hunter2"),
        ("Password=hunter two;Server=db", "hunter two"),
        ('conn = "Driver={ODBC};Server=db;Uid=sa;Pwd=P@ss w0rd"', "P@ss w0rd"),
        ("Password=S3cr3t!xyz", "S3cr3t!xyz"),
        ("password = Zq8#Wm3!Rt6", "Zq8#Wm3!Rt6"),
        ("Password = my secret phrase 42!", "my secret phrase 42!"),
        ("//registry.npmjs.org/:_authToken=Zq8Wm3Rt6Yp1Ks4Lx9", "Zq8Wm3Rt6Yp1Ks4Lx9"),
        ("_auth=dXNlcjpTM2NyM3RQYTU1", "dXNlcjpTM2NyM3RQYTU1"),
    ],
)
def test_connection_strings_and_npmrc_values_are_secrets(text: str, secret: str) -> None:
    found = _found(text + "\n")
    assert [value for _, value in found] == [secret]


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("host=db password=s3cret dbname=app", "s3cret"),
        ('psql "host=db port=5432 password=Xk9q2LmWp4 dbname=app sslmode=require"', "Xk9q2LmWp4"),
        ("host=db password = Zq8#Wm3!Rt6  dbname = app", "Zq8#Wm3!Rt6"),
        ("Server=db;Password=Xk9q2LmWp4 dbname=app;", "Xk9q2LmWp4"),
    ],
)
def test_a_libpq_password_ends_before_the_next_key(text: str, secret: str) -> None:
    """A libpq connection string separates its `key=value` pairs by blanks (a value holding
    one is quoted): the password is redacted, and the keys after it stay."""
    assert [value for _, value in _found(text + "\n")] == [secret]
    assert "dbname" in redact_text(text, cache=ResultCache()).text


@pytest.mark.parametrize(
    "text",
    [
        "password=Xk9mQ2vLp8",
        "password: Xk9mQ2vLp8",
        "db_password: aB3dE5gH",
        "export API_TOKEN=R4nd0mPw",
        "secret = Tx7rKp2m",
    ],
)
def test_a_short_unquoted_generated_value_is_a_secret(text: str) -> None:
    """Eight to eleven letters and digits drawn at random, unquoted after a credential's name:
    a name's pattern fits them, but they read as generated, not as a name written in code."""
    value = text.rsplit(" ", 1)[-1].split("=")[-1]
    assert [found for _, found in _found(text + "\n")] == [value]


@pytest.mark.parametrize(
    "code",
    [
        "password=userPwd1,",
        "token = myToken1",
        "secret: v1Secret",
        "api_key = apiKey2x",
        "token=k8sToken",
        "password = oauth2Token",
    ],
)
def test_a_short_name_in_code_after_a_credentials_name_stays(code: str) -> None:
    assert _found(code + "\n") == []


@pytest.mark.parametrize("value", ["admin", "test", "password", "foo", "xxxx", "<your-pass>", "x"])
def test_a_configured_name_is_redacted_whatever_its_value(value: str) -> None:
    config = GateConfig(env_names=("MY_SERVICE_PASS",))
    for text in (f"MY_SERVICE_PASS={value}\n", f'{{"MY_SERVICE_PASS": "{value}"}}\n'):
        assert _found(text, config) == [("env-value", value)]
        once = redact_text(text, config=config, cache=ResultCache()).text
        assert once == text.replace(value, "[REDACTED:env-value#1]", 1)
        assert redact_text(once, config=config, cache=ResultCache()).text == once


@pytest.mark.parametrize(
    "text",
    [
        "MY_SERVICE_PASS=\n",
        'MY_SERVICE_PASS=""\n',
        "MY_SERVICE_PASS=$OTHER_PASS\n",
        "MY_SERVICE_PASS=${OTHER_PASS}\n",
        "MY_SERVICE_PASS=%OTHER_PASS%\n",
    ],
)
def test_a_configured_name_with_no_value_or_a_reference_is_left(text: str) -> None:
    assert _found(text, GateConfig(env_names=("MY_SERVICE_PASS",))) == []


@pytest.mark.parametrize("prefix", ["", "+", " ", "-", "    ", "+export "])
def test_an_environment_line_with_operators_in_its_value_is_text_in_a_diff_too(
    prefix: str,
) -> None:
    """A generated value full of code's signs (`&`, `+`, `=`, `((`) on an environment file's
    line is text, also indented or as a diff shows the line (`+SECRET_KEY=…`)."""
    value = "cahos2393o&v&v5qh+oes=((i8a$f2=r2ygqal_i820!=yqj1*"
    text = f"@@ -1,2 +1,3 @@\n DEBUG=false\n{prefix}SECRET_KEY={value}\n PORT=8080\n"
    assert [found for _, found in _found(text)] == [value]
