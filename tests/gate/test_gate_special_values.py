"""Values with special characters are redacted whole: a password in a URL holding brackets or
`@`, values holding what a placeholder also holds (`<`, `xxxx`, `${`, `%`), random values of
letters only; and placeholders are judged on the whole value."""

from __future__ import annotations

import json
import random
import re
import string

import pytest

from stet_lsp.gate import GateConfig, ResultCache, redact_text, scan_text
from stet_lsp.gate.generated import looks_generated
from stet_lsp.gate.heuristics import is_placeholder


def _redacted(text: str, path: str = "notes.txt", config: GateConfig | None = None) -> str:
    return redact_text(text, config=config, path=path, cache=ResultCache()).text


@pytest.mark.parametrize(
    ("url", "password"),
    [
        ("postgres://app:u8jz)Pde0)IgxL@db:5432/app", "u8jz)Pde0)IgxL"),
        ("postgres://app:u8jz(Pde0]IgxL@db", "u8jz(Pde0]IgxL"),
        ("postgres://app:u8jz{Pde0}IgxL@db", "u8jz{Pde0}IgxL"),
        # A URL's password runs to the last `@` before the host.
        ("postgres://app:u8jz@Pde0@IgxL@db.internal:5432/app", "u8jz@Pde0@IgxL"),
        ("redis://:k3#Vq@9Lm@cache:6379", "k3#Vq@9Lm"),
    ],
)
def test_a_url_password_with_special_characters_is_redacted_whole(url: str, password: str) -> None:
    redacted = _redacted(f"DATABASE_URL={url}\n")
    assert "[REDACTED:url-password#1]" in redacted
    assert not any(piece in redacted for piece in password.replace("@", " ").split())
    assert "@db" in redacted or "@cache" in redacted


def test_an_at_sign_after_the_host_stays_out_of_the_password() -> None:
    text = "see https://ci:Zq8Wm3Rt6Y@host.example/build?notify=ops@example.com\n"
    redacted = _redacted(text)
    assert redacted == (
        "see https://ci:[REDACTED:url-password#1]@host.example/build?notify=ops@example.com\n"
    )


@pytest.mark.parametrize(
    "code",
    [
        'url = f"postgres://{user}:{password}@{host}/app"',
        'url = "postgres://%s:%s@%s/app" % (user, password, host)',
        "url = `postgres://${user}:${password}@${host}/app`",
        "DATABASE_URL=postgres://app:${DB_PASSWORD}@db/app",
        "DATABASE_URL=postgres://app:<password>@db/app",
        "DATABASE_URL=postgres://app:[password]@db/app",
    ],
)
def test_templates_in_urls_are_not_passwords(code: str) -> None:
    assert scan_text(code + "\n", cache=ResultCache()) == []


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ('DB_PASSWORD="Xk9<q2Lm>Wp4"\n', "Xk9<q2Lm>Wp4"),
        ("DB_PASSWORD=Maxxxx#2024zQ\n", "Maxxxx#2024zQ"),
        ("DB_PASSWORD='aB3${x}Qw9Z'\n", "aB3${x}Qw9Z"),
        ('SECRET_KEY = "axh6tl9067xf9y46b=+pn)hb_5ao#5kr(i=t%(gpl!aqn7zzo7"\n', "axh6tl9067xf"),
        ("GITHUB_TOKEN=ghp_aB3xXxxQ9zLm4Wp7zR2tY6uI8oP0aS1dF3gH\n", "aB3xXxxQ9zLm4Wp7"),
        ("API_TOKEN=rk_test_5ptgjrmR62CwhoUUylQCl2JM8OYGoOXxxXBl3AcXHftSb74G\n", "5ptgjrmR62Cw"),
    ],
)
def test_a_random_value_holding_placeholder_characters_is_a_secret(text: str, secret: str) -> None:
    assert secret not in _redacted(text, "settings.env")


@pytest.mark.parametrize(
    "value",
    [
        "xxxx",
        "xxxxxxxxxxxxxxxx",
        "<your-key>",
        "<YOUR_API_TOKEN>",
        "${VAR}",
        "${DB_PASSWORD:-${FALLBACK}}",
        "$(cat /run/secrets/db)",
        "%(password)s",
        "%s:%s",
        "100%% %s",
        "%USERPROFILE%/${KEY_FILE}",
        "{password}%20",
        "{password}",
        "{{ .Values.db.password }}",
        "changeme",
        "changeme123",
        "REPLACE_ME",
        "your_api_key_here",
        "dummy-token-123",
        "...",
        "sk-...",
        "sk-xxxxxxxxxxxxxxxxxxxx",
        "****************1234",
        "Bearer ${TOKEN}",
        "[REDACTED:github-token#1]",
    ],
)
def test_a_whole_placeholder_is_not_a_secret(value: str) -> None:
    assert is_placeholder(value)
    assert scan_text(f'api_key = "{value}"\npassword: {value}\n', cache=ResultCache()) == []


@pytest.mark.parametrize(
    "value",
    [
        "Xk9<q2Lm>Wp4",
        "Maxxxx#2024zQ",
        "aB3${x}Qw9Z",
        "u8jz)Pde0)IgxL",
        "%1@rmt4#Zq8",
        "%d%MEvboWx@Kih%XCR",  # a `%d`, then a `%` no format string leaves
        "$7^b$(_*-tc2drbfb#r1y9rm2u@dfi38zo&3=@=6!jab)bv@ct",  # no command in its `$( )`
    ],
)
def test_placeholder_characters_inside_a_random_value_are_chance(value: str) -> None:
    assert not is_placeholder(value)


@pytest.mark.parametrize(
    ("command", "secret"),
    [
        ("docker login -u ci -p %1@rmt4#Zq8Wm3 registry.example.com", "%1@rmt4#Zq8Wm3"),
        ("curl -u deploy:%TWK#h8uQ2 https://api.example.com/v1", "%TWK#h8uQ2"),
        ("curl -H 'X-Api-Key: %9fQ2xLm4Wp7zR' https://api.example.com", "%9fQ2xLm4Wp7zR"),
    ],
)
def test_a_value_starting_with_a_percent_sign_is_a_secret(command: str, secret: str) -> None:
    assert secret not in _redacted(command + "\n", "session.sh")


@pytest.mark.parametrize(
    "command",
    [
        "curl -u deploy:%API_PASS% https://api.example.com/v1",
        "docker login -u ci -p %REGISTRY_PASSWORD% registry.example.com",
        "curl -u deploy:<password> https://api.example.com/v1",
    ],
)
def test_windows_references_and_templates_in_commands_are_not_secrets(command: str) -> None:
    assert scan_text(command + "\n", cache=ResultCache()) == []


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("DB_PASSWORD", "HkBDLHFaDXosUduCJI"),
        ("DB_PASSWORD", "uuslKbTTjWGHroROFb"),
        ("OCI_AUTH_TOKEN", "xyKYwJdysvSjlAkdsMvM"),
        ("CONFLUENT_API_KEY", "SMIGIQAQXLZPPRWG"),
        ("CONFLUENT_API_KEY", "WAZDEKVSLOKPJIGP"),
        ("ETSY_API_KEY", "nkfpfbaapsernwzbymrvvknd"),
        ("SECRET_KEY_BASE", "/SaWnaKn0DpyxXUXB91/WuHIwvjT/ARhReZNuWP47M/uYmK4FIcl0wV3wdjfwovT"),
        # Capitals in one case whose letter pairs are 60 % English ones, under a vendor's name.
        ("CONFLUENT_API_KEY", "FIGVEIRSTINNMVQQ"),
        # Few capitals, yet not the humps of a name; digits parting the letters.
        ("DB_PASSWORD", "zbzOsxKaKxyZdudOEo"),
        ("DB_PASSWORD", "mXhqdNJdeepLttfpZJ"),
        ("DB_PASSWORD", "k331FukcgtgL3tl251"),
        # Letter pairs 63 % English by chance, but capitals at random: a third, in short humps.
        ("OCI_AUTH_TOKEN", "wpnEJfoduCrmfIiAipEF"),
        # Base64 of letters alone, a few repeated by chance (entropy 3.99).
        ("PROXY_HEADER", "IeftMcMpaQwIeXOztTptXSJSWppfNfww"),
        # base64 that starts with a slash, its segments short.
        ("PROXY_HEADER", "/ITQ/wLotJmRhhqBFyhmrlz1/MEMKTZd"),
        ("PROXY_HEADER", "/iXV6OQ7p8p/Nb/t3Kpsz/ZPju1oqR3/"),
        ("PROXY_HEADER", "/SMKppexsR8EZDHsouc/gikxXjuX0/tT"),
    ],
)
@pytest.mark.parametrize("context", ["env", "json"])
def test_a_random_value_of_letters_is_a_secret(name: str, value: str, context: str) -> None:
    """Letters only (no digit by chance), or base64 that starts with a slash: generated
    values that a name's or a path's pattern happens to fit."""
    line = f"{name}={value}\n"
    if context == "json":
        text = json.dumps({"type": "tool_result", "content": "$ cat .env\n" + line}) + "\n"
        redacted = _redacted(text, "events.jsonl")
        json.loads(redacted)
    else:
        redacted = _redacted(line, "settings.env")
    assert value[1:9] not in redacted


@pytest.mark.parametrize(
    "name",
    [
        "getUserPasswordById",
        "HTTPSConnection",
        "XMLHttpRequest",
        "sha256Digest",
        "DEFAULTPASSWORD",
        "schemaregistryurl",
        "strengthsAndWeaknesses",
        # Few English letter pairs, acronyms, a letter alone, digits: still names.
        "maxChunkSize",
        "SizeOnlySync",
        "getXCoordinate",
        "HTTPSConnectionPool",
        "IPvAnyAddress",
        "getCSRFTokenFromCookie",
        "sha256HexDigest",
        "ec2InstanceIdList",
        # Many capitals in short humps, but acronyms of three letters or more: names.
        "AWSServiceRoleForECS",
        "IAMUserSSHKeys",
    ],
)
def test_names_people_write_are_not_generated(name: str) -> None:
    assert not looks_generated(name)
    assert scan_text(f"api_key = {name}\nsecret: {name}\n", cache=ResultCache()) == []


@pytest.mark.parametrize(
    "text",
    [
        "secret: /Users/alice/Library/ApplicationSupport/Code/User\n",
        "SECRET_DIR=/home/runner/work/PaymentsService/PaymentsService\n",
        "token_cache: /opt/homebrew/Cellar/openssl/3/lib/engines\n",
        # Short capitalised segments: joined, their capitals fall as a random value's do.
        "SSH_KEY=/Users/JD/Dev/Ops/CI/Keys/Prod/Id\n",
        "api_key: /Volumes/HD/Ops/DB/Keys/Prod/Api/Key\n",
    ],
)
def test_paths_in_both_cases_stay_paths(text: str) -> None:
    assert scan_text(text, path="settings.env", cache=ResultCache()) == []


def test_a_bearer_token_with_underscores_is_not_a_code_name() -> None:
    """`_` between runs of letters made the whole value look like an identifier."""
    token = "Ztcn_TBE_A_fjBpvnsDXBnzkJjiGHpzmF_DwiUgn"
    text = f"Use the HTTP credential `Authorization: Bearer {token}` for staging.\n"
    assert token[12:24] not in _redacted(text, "notes.md")
    assert scan_text("Bearer get_user_by_name_and_email\n", cache=ResultCache()) == []


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        # An agent-id prefix (`fc_`) at the start of a Django key that goes on with symbols.
        ("SECRET_KEY = 'fc_52@mp9r%v^po-40gor8+i1=io-kc3bs1&yq))jek3ao*%h3'\n", "mp9r%v^po-40"),
        # A Windows reference's shape around a random value.
        ('<add key="ClearTextPassword" value="%tuZDpgeAk75fenMF%" />\n', "tuZDpgeAk75f"),
        # 32 hex digits that repeat a few by chance (2.83 bits a digit).
        ("ADMIN_PASS=13f1b93b998838b8cc33bd8bbb8cb817\n", "13f1b93b9988"),
        # A vendor's prefix and a body of capitals only.
        ("OCTOPUS_API_KEY=API-XDWWPEJBCFZZLFJICEHIDCYDDB\n", "XDWWPEJBCFZZ"),
    ],
)
def test_random_values_in_the_shape_of_something_else_are_secrets(text: str, secret: str) -> None:
    assert secret not in _redacted(text, "settings.env")


@pytest.mark.parametrize(
    "text",
    [
        '{"tool_use_id": "toolu_01JUB70HMp6vL4wIQSVdhhRc", "id": "fc_68a1b2c3d4e5f6a7b8c9"}\n',
        '<add key="ClearTextPassword" value="%NUGET_PASSWORD%" />\n',
        "ADMIN_PASS=%AdminPassword%\n",
    ],
)
def test_agent_ids_and_windows_references_are_not_secrets(text: str) -> None:
    assert scan_text(text, path="settings.env", cache=ResultCache()) == []


STET_IDS = (
    "branch--master--8c885b53df4b058d6fd3773c",
    "branch--feature-retry--b4b3deb12fcd358baeda5894",
    "branch--release-1.2--9fef2d12134fcb185efe3563",
    "named--pr-1234-fix-the-retry-loop--21877a40b5f865a73c2b7e60",
    "detached--8c885b53df4b058d6fd3773c",
    "2026-12-02-feature-retry-8c885b53df4b",
    "2026-01-22-master-b4b3deb12fcd",
)


@pytest.mark.parametrize("key", STET_IDS)
def test_strict_mode_leaves_stets_own_ids_whole(key: str) -> None:
    """Target keys and trajectory ids, in meta.json, a skill's `stet-trajectory`, a path."""
    strict = GateConfig(strict=True)
    for text in (
        json.dumps({"target": {"key": key, "kind": "branch"}}),
        f"metadata:\n  stet-trajectory: {key}\n",
        f"see .stet/trajectories/{key}/meta.json and trajectories/{key}/events\n",
    ):
        assert scan_text(text, config=strict, path="meta.json", cache=None) == []


@pytest.mark.parametrize(
    "value",
    [
        "branch--master--8c885b53df4b058d6fd3773cX9kQ2",  # more after the hex
        "branch--Xk9q2Lm4Wp7zRt5Yb8Nc3Vd6Xk9q2Lm4--8c885b53df4b058d6fd3773c",  # no slug
        "Xk9q2Lm4Wp7zRt5Yb8Nc3Vd6-8c885b53df4b",
        "token--Xk9q2Lm4Wp7zRt5Yb8Nc3Vd6",
        # A secret joined to a whole id is judged on its own, not as a path.
        "branch--master--8c885b53df4b058d6fd3773c/Xk9q2Lm4Wp7zRt5Yb8Nc3Vd6Qa1",
        "2026-12-02-feature-retry-8c885b53df4b/Xk9q2Lm4Wp7zRt5Yb8Nc3Vd6Qa1",
        "Xk9q2Lm4Wp7zRt5Yb8Nc3Vd6Qa1+branch--master--8c885b53df4b058d6fd3773c",
    ],
)
def test_strict_mode_still_redacts_values_shaped_near_stets_ids(value: str) -> None:
    strict = GateConfig(strict=True)
    redacted = redact_text(f"value: {value}\n", config=strict, path="x.md", cache=None).text
    assert "Xk9q2Lm4" not in redacted and "X9kQ2" not in redacted


@pytest.mark.parametrize(
    ("text", "redacted"),
    [
        (
            "Server=db;Password=x9Kq2mZ7;Encrypt=true",
            "Server=db;Password=[REDACTED:query-password#1];Encrypt=true",
        ),
        (
            "https://h/login?password=x9Kq2mZ7&remember=1",
            "https://h/login?password=[REDACTED:query-password#1]&remember=1",
        ),
        (
            "https://h/cb?access_token=Xk9q2Lm4Wp7zRt5Y&state=1#top",
            "https://h/cb?access_token=[REDACTED:secret-assignment#1]&state=1#top",
        ),
        (
            'Server=db;Password="x9K;q2mZ7";Encrypt=true',
            'Server=db;Password="[REDACTED:secret-assignment#1]";Encrypt=true',
        ),
    ],
)
def test_a_parameters_value_ends_at_the_next_separator(text: str, redacted: str) -> None:
    """The generic assignment's value ran on over `;Encrypt=true` and `&remember=1` and was
    merged into the password's span; a quoted value keeps its separators."""
    assert _redacted(text) == redacted


@pytest.mark.parametrize(
    ("text", "path", "redacted"),
    [
        (
            "CONN=Driver={ODBC Driver 17};Server=db;UID=sa;PWD={Xk9;q2Lm4Wp7zRt5Y};Encrypt=yes",
            "x.env",
            "CONN=Driver={ODBC Driver 17};Server=db;UID=sa;PWD=[REDACTED:query-password#1];"
            "Encrypt=yes",
        ),
        (
            "Server=db;Password={x9K}}q2;mZ7};Encrypt=true",
            "x.md",
            "Server=db;Password=[REDACTED:query-password#1];Encrypt=true",
        ),
        (
            "curl -X POST https://h/login -d 'username=bob&password=Pa55#w0rd!Xk9q2Lm'",
            "login.sh",
            "curl -X POST https://h/login -d 'username=bob&password=[REDACTED:secret-assignment#1]'",
        ),
        (
            '{"cmd": "curl -d \'user=bob&password=Pa55#w0rd!Xk9q2Lm\'"}',
            "t.jsonl",
            '{"cmd": "curl -d \'user=bob&password=[REDACTED:secret-assignment#1]\'"}',
        ),
        (
            "https://h/x?a=1&password=Xk9;q2Lm4Wp7zRt5Y&b=2",
            "x.md",
            "https://h/x?a=1&password=[REDACTED:secret-assignment#1]&b=2",
        ),
        (
            "curl -d 'a=1&api_key=Xk9#q2Lm4Wp7zRt5Y'",
            "x.sh",
            "curl -d 'a=1&api_key=[REDACTED:secret-assignment#1]'",
        ),
    ],
)
def test_a_separator_that_may_be_part_of_the_value_never_lets_it_through(
    text: str, path: str, redacted: str
) -> None:
    """A value in braces holds `;` (ODBC); in a form body `#` and `;` are characters of the
    value. Cut there, the value was left in part or, too short to judge, whole: it now ends
    at the closing brace, or at the next `&` when what a `#` or `;` ends is no secret."""
    assert redact_text(text, path=path, cache=None).text == redacted


@pytest.mark.parametrize(
    ("text", "path", "secret"),
    [
        ("DB_PASSWORD=l44ldqbwzb90xya\n", ".env", "l44ldqbwzb90xya"),
        ("DB_PASSWORD=pan0rlykei2iiaa\n", ".env", "pan0rlykei2iiaa"),
        ("CLIENT_SECRET=7dcqphcylosh3k\n", ".env", "7dcqphcylosh3k"),
        ("SECRET_KEY=OBVPEKFEAQ78ZT\n", ".env", "OBVPEKFEAQ78ZT"),
        ("export DB_PASSWORD=pan0rlykei2iiaa\n", "deploy.sh", "pan0rlykei2iiaa"),
        ("password: l44ldqbwzb90xya\n", "config.yaml", "l44ldqbwzb90xya"),
        ("db:\n  password: pan0rlykei2iiaa\n", "config.yml", "pan0rlykei2iiaa"),
        ('{"password": pan0rlykei2iiaa}\n', "settings.json", "pan0rlykei2iiaa"),
        ("{password: l44ldqbwzb90xya}\n", "settings.json", "l44ldqbwzb90xya"),
        ("api_token = l44ldqbwzb90xya\n", "settings.ini", "l44ldqbwzb90xya"),
    ],
)
def test_a_generated_value_of_one_case_and_digits_is_a_secret(
    text: str, path: str, secret: str
) -> None:
    """Unquoted, a run of lowercase letters and digits fit a name's pattern and was taken for
    a reference a third of the time (`l44ldqbwzb90xya`); digits scattered among letters with
    few English letter pairs are generated, not written."""
    redacted = _redacted(text, path=path)
    assert secret not in redacted
    assert "[REDACTED:" in redacted


@pytest.mark.parametrize(
    "code",
    [
        "password=password",
        "token = self.token",
        "api_key=get_key()",
        'secret=os.environ["X"]',
        "pwd=/work/x",
        "password=db_password2",
        "token=access_token_v2",
        "secret_key=base64_secret",
        "password=yeardays2calendar",
        "token=pos2key2dict",
        "secret=monthdays2calendar",
        "password=sha256digest",
        "token=oauth2authorizer",
        "secret=NMDAY366MASK",
        "password=utf1632prober",
    ],
)
@pytest.mark.parametrize("path", ["x.py", ".env"])
def test_code_names_with_digits_are_not_generated_values(code: str, path: str) -> None:
    assert scan_text(f"{code}\n", path=path, cache=None) == []


@pytest.mark.parametrize(
    "value", ["l44ldqbwzb90xya", "pan0rlykei2iiaa", "obvpekfeaq78", "OBVPEKFEAQ78ZT"]
)
def test_one_case_and_digits_looks_generated(value: str) -> None:
    assert looks_generated(value)


@pytest.mark.parametrize(
    "value",
    ["yeardays2calendar", "monthdays2calendar", "pos2key2dict", "py39compat12", "BRAINPOOLP256R1"],
)
def test_a_name_with_digits_does_not_look_generated(value: str) -> None:
    assert not looks_generated(value)


@pytest.mark.parametrize("path", ["notes.md", "t.jsonl"])
def test_every_keyword_value_of_a_long_line_is_found(path: str) -> None:
    """detect-secrets' keyword plugin reports the first value of a line only, and one window
    of the gate can hold several assignments: the second password of a line was left when no
    window of its own started near it."""
    line = '"password": "Pa55w0rdSummer2024", ' + "note " * 27 + ' "password": "Xupe5GjrnmZxYT", '
    line = line.ljust(350, ".") + "password reset; "
    line = line.ljust(400, ".") + "password reset; " + "." * 400
    text = line if path == "notes.md" else json.dumps({"o": line}) + "\n"
    redacted = redact_text(text, path=path, cache=None).text
    assert "Pa55w0rdSummer2024" not in redacted and "Xupe5GjrnmZxYT" not in redacted
    # A configuration's line of several credentials: each value, not the first alone.
    values = ["Pa55w0rdSummer2024", "Xupe5GjrnmZxYT", "q2Lm4Wp7zRt5Yb8N", "Wp7zRt5Yq2Lm4Xk9"]
    names = ["password", "secret", "api_key", "token"]
    config = ", ".join(f'"{name}": "{value}"' for name, value in zip(names, values, strict=True))
    config = "{" + config + ', "note": "' + "rotate these " * 20 + '"}'
    for text, where in ((config + "\n", "notes.md"), (json.dumps({"o": config}) + "\n", "e.jsonl")):
        redacted = redact_text(text, path=where, cache=None).text
        assert [value for value in values if value in redacted] == [], where


@pytest.mark.parametrize(
    "line",
    [
        "DB_PASSWORD=hunter2Summer",
        "DB_PASSWORD=hunter2Summer # prod",
        "export DB_PASSWORD=hunter2Summer; ./run",
        "echo 'DB_PASSWORD=hunter2Summer' >> .env",
        "DB_PASSWORD=hunter2_Summer",
        "ENV DB_PASSWORD=hunter2Summer",
        "  - DB_PASSWORD=hunter2Summer",
        "API_TOKEN=CorrectHorse9Battery",
        "DB_PASSWORD_2=Xupe5GjrnmZxYT",
        "+DB_PASSWORD=hunter2Summer",  # a diff's added line
        "-DB_PASSWORD=hunter2Summer",  # and its removed one
        "+OCI_AUTH_TOKEN=cidhdDLXsgIcdWnltHtw",  # letters only (a corpus seed's value)
        "    +DB_PASSWORD=hunter2Summer",  # indented, as in a Markdown code block
        "  12 +DB_PASSWORD=hunter2Summer",  # a numbered view
        "mvn test -DDB_PASSWORD=hunter2Summer",
    ],
)
def test_an_env_files_credential_that_reads_as_a_name(line: str) -> None:
    """An environment file's value is the value itself, in a file, a shell line, a compose
    file, and a transcript's output once or twice escaped (a rollout's tool output)."""
    inner = json.dumps({"output": f"DB_HOST=db\n{line}\nDEBUG=1\n"})
    for text, path in (
        (line + "\n", ".env"),
        (json.dumps({"output": f"$ cat .env\n{line}\n"}) + "\n", "e.jsonl"),
        (json.dumps({"type": "function_call_output", "output": inner}) + "\n", "rollout.jsonl"),
    ):
        redacted = redact_text(text, path=path, cache=None).text
        assert not any(v in redacted for v in ("hunter2", "Horse9", "Xupe5", "cidhdDLX")), (
            path,
            redacted,
        )


@pytest.mark.parametrize(
    "line",
    [
        "TOKENIZER=cl100kBase",
        "HF_TOKENIZER=BertBaseUncased",
        "TOKEN_ISSUER=MyCompany",
        "AUTH_TOKEN_HEADER=XAuthToken",
        "TOKEN_STORAGE=localStorage",
        "PASSWORD_HASHING=Argon2id",
        "PASSWORD_HASHER=argon2id",
        "PASSWORD_CIPHER=Aes256Gcm",
        "JWT_SECRET_ENCODING=base64url",
        "MAPBOX_ACCESS_TOKEN=pk.eyJ1IjoibWFwYm94IiwiYSI6ImNpejY4M.rJcFIG214AriISLbB6B5aw",
        "DB_PASSWORD=settings.DB_PASSWORD",
        "call(DB_PASSWORD=hunter2Summer)",
        "{DB_PASSWORD=hunter2Summer}",
        "DB_PASSWORD=changeme",
        "DB_PASSWORD = hunter2Summer",
        "total = base+DB_PASSWORD=hunter2Summer",
    ],
)
def test_env_lines_that_hold_no_credential_stay(line: str) -> None:
    assert scan_text(line + "\n", path=".env", cache=None) == []


@pytest.mark.parametrize(
    ("text", "redacted"),
    [
        (
            "https://docs.example.com/api?api_key=demo#authentication",
            "https://docs.example.com/api?api_key=demo#authentication",
        ),
        ("https://h/x?a=1&token=foo#L10-L20", "https://h/x?a=1&token=foo#L10-L20"),
        # Metadata about a credential stays, in a URL too.
        ("https://h/x?token_type=bearerAbc123&a=1", "https://h/x?token_type=bearerAbc123&a=1"),
        (
            "https://h/x?secret=x9Kq2mZ7Lp4#frag",
            "https://h/x?secret=[REDACTED:secret-assignment#1]#frag",
        ),
        (
            "Server=h;Uid=u;Pwd={Hunter2Summer};Encrypt=yes",
            "Server=h;Uid=u;Pwd=[REDACTED:secret-assignment#1];Encrypt=yes",
        ),
        (
            "Server=h;Uid=u;Pwd={Xk9q2Lm4Wp7zRt5Y};Encrypt=yes",
            "Server=h;Uid=u;Pwd=[REDACTED:secret-assignment#1];Encrypt=yes",
        ),
        ("Server=h;Uid=u;Pwd={password};Encrypt=yes", "Server=h;Uid=u;Pwd={password};Encrypt=yes"),
    ],
)
def test_a_urls_fragment_ends_a_value_and_parameters_hold_text(text: str, redacted: str) -> None:
    """In a URL's query `#` starts the fragment: never part of a value. A parameter of a URL
    or a connection string is text, never code's name: a braced one is judged by what the
    braces hold."""
    assert redact_text(text, path="notes.md", cache=None).text == redacted


@pytest.mark.parametrize(
    "line",
    [
        "set DB_PASSWORD=%DB_PASSWORD%",
        "java -DDB_PASSWORD=%DB_PASSWORD% -jar app.jar",
        "nuget sources add -Password %NUGET_API_KEY%",
    ],
)
def test_a_windows_reference_is_no_percent_escape(line: str) -> None:
    """`%DB_PASSWORD%` starts like the escape `%DB`: decoded so, it read as a random value."""
    assert scan_text(line + "\n", path="build.cmd", cache=None) == []


@pytest.mark.parametrize(
    "text",
    [
        "SLACK_BOT_TOKEN=xoxb-my-bot-token\n",
        'export SLACK_TOKEN="xoxb-test-token"\n',
        "slack:\n  token: xoxb-my-slack-bot-token-here\n",
        "Set the token to xoxb-your-token-here in the app's settings.\n",
        "SLACK_APP_TOKEN=xapp-1-my-app-token\n",
        'curl -H "Authorization: Bearer xoxb-my-bot-token" https://slack.com/api/auth.test\n',
        # detect-secrets' Slack pattern takes a number then a word: this is prose.
        "We will party like it is xoxo-2024-forever, she wrote.\n",
        "OPENSHIFT_TOKEN=sha256~XXXX_PUT_YOUR_TOKEN_HERE_XXXX\n",
        "oc login --token=sha256~XXXX_PUT_YOUR_TOKEN_HERE_XXXX --server=https://api.c1:6443\n",
    ],
)
def test_a_tokens_shape_written_in_words_is_a_placeholder(text: str) -> None:
    assert scan_text(text, cache=ResultCache()) == []
    assert scan_text(json.dumps({"content": text}) + "\n", path="e.jsonl") == []


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        (
            "SLACK_BOT_TOKEN={}",
            "xoxb-2048-4195736209183-Hq3vTz8Lm2Rx7KcW5pNyJd4B",
        ),
        (
            "token: {}",
            "xoxp-2048-4195736209183-5190372846-9f3e7a1c2b8d4e6f0a5c3b9d7e1f2a4c",
        ),
        ("SLACK_APP_TOKEN={}", "xapp-1-A05QZ7K2M3N-6021538479261-7d2f9c4b1e8a3f6d"),
        ("a legacy {} token", "xoxs-4195736209-5190372846-6021538479-0f9e8d7c6b5a"),
        ("oc login --token={}", "sha256~Hq3vTz8Lm2Rx7KcW5pNyJd4BwE6sF1gA9uK0rT2yXcQ"),
    ],
)
def test_a_real_looking_slack_or_openshift_token_is_still_a_secret(text: str, secret: str) -> None:
    redacted = _redacted(text.format(secret) + "\n")
    assert secret.split("-")[-1] not in redacted and "[REDACTED:" in redacted


@pytest.mark.parametrize(
    "line",
    [
        "GITHUB_TOKEN=`gh auth token`",
        "export OPENAI_API_KEY=`cat ~/.key`",
        "export DATADOG_API_KEY=`cat ~/.dd/apikey.txt`",
        "STRIPE_API_KEY=`pass show stripe/live`",
        "export ANTHROPIC_API_KEY=`op read op://Private/anthropic/credential`",
        "export SECRET_KEY=`openssl rand -hex 32`",
        "export DB_PASSWORD=`vault kv get -field=password secret/db`",
        "HF_TOKEN=`huggingface-cli auth token --quiet`",
    ],
)
def test_a_command_substituted_for_a_credential_is_no_value(line: str) -> None:
    """Backticks after `NAME=` run a command: the variable holds what it prints, which is
    not in the text."""
    assert scan_text(line + "\n", cache=ResultCache()) == []
    assert scan_text(json.dumps({"command": line}) + "\n", path="e.jsonl") == []


@pytest.mark.parametrize(
    ("line", "secret"),
    [
        ("OPENAI_API_KEY=`Hq3vTz8Lm2Rx7KcW5pNyJd4BwE6sF1gA`", "Hq3vTz8Lm2Rx7KcW5pNyJd4BwE6sF1gA"),
        ("the api key is `Hq3vTz8Lm2Rx7KcW5pNyJd4BwE6`", "Hq3vTz8Lm2Rx7KcW5pNyJd4BwE6"),
        # A passphrase that starts with a command's name, or holds a word a command's
        # arguments would (`:`), is no command.
        ("export DB_PASSWORD=`security Blanket99! Rainbow#7`", "Blanket99! Rainbow#7"),
        ("DB_PASS=`vault K9#mq2!Lp zz`", "K9#mq2!Lp"),
        ("export DB_PASSWORD=`Summer2024 pass:word`", "Summer2024 pass:word"),
    ],
)
def test_a_backticked_value_or_a_command_printing_one_is_still_a_secret(
    line: str, secret: str
) -> None:
    assert secret not in _redacted(line + "\n")


@pytest.mark.parametrize(
    "password",
    [
        "dJSY1rbN}Pc[0-vP^YY4",  # a class's start `[0-v`, no repeat after it
        "Pa(?=ss)w0rd99",  # a lookahead's opening
        "aB3dE[5-9]fG7hJ",  # a class, no repeat after it
        "MyS3cretPass{",  # ends in a brace, no literal in it
        "Tr0ub4dor.Xyz9{",
    ],
)
def test_a_password_that_reads_partly_as_code_or_a_pattern_is_a_secret(password: str) -> None:
    """A value was no secret when it held a regular expression's construct (3 of 1,500
    random symbol passwords of 20 characters), or ended in `(` or `{` as a call does: a
    pattern needs a class or an escape and a repeat after it, and a call a string literal in
    it (`std::string("…")`)."""
    for text, path in [
        (f"DB_PASSWORD={password}\n", ".env"),
        (f"db:\n  password: {password}\n", "config.yaml"),
        (json.dumps({"content": f"DB_PASSWORD={password}"}) + "\n", "s.jsonl"),
    ]:
        assert password not in _redacted(text, path), (text, path)
    pattern = 'TOKEN_RE = re.compile(r"ghp_[A-Za-z0-9]{36}")\n'
    assert _redacted(pattern, "scan.py") == pattern


@pytest.mark.parametrize(
    "password",
    [
        "4}gi12({LhEWXBjU$Bh(",
        "7]vbmaIV51GOKBVD*FG.",
        "4,k=+M0s8_?lrAY4qUy}",
        "86]|Rv|/~5VvJ_0V(A3f",
    ],
)
def test_a_generated_password_with_brackets_in_an_environment_line_goes_whole(
    password: str,
) -> None:
    """The generic rules stop a value at a bracket, a brace or a comma, so a generated
    password holding one early kept most of it (23 of 3,000 random symbol passwords of 20
    characters in `DB_PASSWORD=…` lines; 8 now, none of them for this)."""
    for text, path in [
        (f"DB_PASSWORD={password}\n", ".env"),
        (f"export APP_SECRET={password}\n", "deploy.sh"),
        (json.dumps({"output": f"DB_PASSWORD={password}\nDEBUG=1"}) + "\n", "s.jsonl"),
    ]:
        redacted = _redacted(text, path)
        assert password[:6] not in redacted and password[-6:] not in redacted, redacted


@pytest.mark.parametrize(
    "line",
    [
        "DB_PASSWORD=${DB_PASSWORD:-secret}",
        "DB_PASSWORD=<your-password>",
        "DB_PASSWORD=%(db_pass)s",
        "APP_SECRET=$(cat /run/secrets/app)",
        "DB_PASSWORD={{vault_db_password}}",
        "POSTGRES_PASSWORD=changeme!",
    ],
)
def test_a_reference_or_placeholder_in_an_environment_line_stays(line: str) -> None:
    assert _redacted(line + "\n", ".env") == line + "\n"


@pytest.mark.parametrize(
    ("text", "path"),
    [
        ('PASSWORD_REGEX = r"^(?=.*[a-z])(?=.*[A-Z])(?=.*\\d)(?=.*[@$!%*?&]).{8,}$"', "v.py"),
        ("const passwordRegex = /^(?=.*[a-z])(?=.*[0-9])(?=.*[!@#$%^&*]).{8,}$/;", "v.js"),
        ("password_regex: '^(?=.*[A-Z])(?=.*[0-9])(?=.*[^A-Za-z0-9]).{12,}$'", "v.yaml"),
        ('SECRET_RE = re.compile(r"[_A-Za-z0-9]{32}")', "v.py"),
        ('TOKEN_PATTERN = r"(ghp|gho)_([A-Za-z0-9]){36}"', "v.py"),
        ('SECRET_MASK = r"(?<=password=)[^&]+"', "v.py"),
        ("var secretRe = regexp.MustCompile(`(?i)(password|secret)=([^&\\s]+)`)", "v.go"),
        ('password_chars = "[a-zA-Z0-9!@#%^&*]"', "v.py"),
        ('var password = new NetworkCredential("user", pwd).Password;', "v.cs"),
        ('let secret = SecretString::new("abc".to_string());', "v.rs"),
        ('String password = new String("abc".getBytes(), UTF_8);', "v.java"),
        ("Auth(password_min=8,password_max=64)", "v.py"),
        ("shamir.split(secret=42,shares=5,threshold=3)", "v.py"),
        ("PASSWORD_HISTORY=5,PASSWORD_MIN_AGE=1", ".env"),
        ('[{"max_tokens":4},{"max_tokens":5}]', "v.json"),
        ("DB_PASSWORD=`echo ${DATABASE_URL#*:} | cut -d@ -f1`", "v.sh"),
    ],
)
def test_patterns_calls_counts_and_commands_under_a_credentials_name_stay(
    text: str, path: str
) -> None:
    """A password's regular expression (lookaheads on `.*`, a class of a range repeated, a
    group repeated), code calling on a literal and going on (`("user", pwd).Password`),
    counts in a keyword list written without blanks, and a shell expansion's `#` in a
    command are no secrets, raw or in a transcript."""
    assert _redacted(text + "\n", path) == text + "\n"
    line = json.dumps({"type": "tool_result", "content": text}) + "\n"
    assert _redacted(line, "s.jsonl") == line


def test_few_random_passwords_read_as_patterns() -> None:
    """A pattern needs a sure construct or two hints: of 20,000 random passwords (letters,
    digits and signs) none reads as one; the last rule took 3 of 1,500 for one."""
    from stet_lsp.gate.heuristics import looks_like_pattern

    rng = random.Random(11)
    alphabet = string.ascii_letters + string.digits + "!@#$%^&*()-_=+[]{}|;:,.<>?/~"
    passwords = ["".join(rng.choice(alphabet) for _ in range(20)) for _ in range(20_000)]
    assert sum(map(looks_like_pattern, passwords)) <= 2


def test_a_password_starting_with_a_digit_and_closers_is_no_count() -> None:
    for line in ("SECRET=4}}gi12({LhEWXBjU$Bh(\n", "SECRET=4,k=+M0s8_?lrAY4qUy}\n"):
        assert "LhEWXBjU" not in _redacted(line, ".env") and "M0s8_" not in _redacted(line, ".env")


@pytest.mark.parametrize(
    "password",
    [
        "HXQYl.NnA2gVNe0DMXnU",
        "V$3t_9c5QDD$zswlwWwC",
        "NmL[wvHY$ECcni-vH:4t",
        "_X.e(jMSe}]~76|4oCTi",
        "ktda*8*&o{cT67a1}ov7",
        "{{Nc4RU#Fu&Ns$r{xFsz",
        "YXbHRwijg3TI4nLoV0[p",
        "jtWnOfTsx2In(Z.teBp3",
        "gS.v()%@w.FMN8%9K,%s",
        "{%pOD(t1cy5+KESGc1mJ",
        "or{fYumGPBVml9q}wKuj",
        "bZW:IJiiSlLatAp-VSrd",
        "z_Q8DFEX0cea9_v8M5K[",
        "9}]Z16#^UR[3MKA7R6e1",
        "3]}TL]>Z0aoqb497|4Ld",
    ],
)
def test_a_generated_password_that_reads_as_code_or_a_template_goes_whole(
    password: str,
) -> None:
    """An environment line's value is text, not code: a generated password that only starts
    like a name, a call or a subscript, holds a dotted run of generated letters, a `$` between
    them, an open `{{` or a `{…}` around a generated run, or a `#` inside a word (no comment
    there), was kept whole (11 of 3,000 random symbol passwords of 20 characters)."""
    for text, path in [
        (f"DB_PASSWORD={password}\n", ".env"),
        (f"export APP_SECRET={password}\n", "deploy.sh"),
        (json.dumps({"output": f"DB_PASSWORD={password}\nDEBUG=1"}) + "\n", "s.jsonl"),
    ]:
        redacted = _redacted(text, path)
        assert password not in redacted, (text, redacted)


@pytest.mark.parametrize(
    "line",
    [
        "DB_PASSWORD=settings.DB_PASSWORD",
        "DB_PASSWORD=os.getenv('DB_PASSWORD')",
        "DB_PASSWORD=os.environ['DB_PASSWORD']",
        "DB_PASSWORD=base64.b64decode('x')",
        "SECRET_KEY=get_random_secret_key()",
        "DB_PASSWORD=args.password,",
        "SECRET_KEY=get_secret_key(),",
        "SECRET_KEY=os.urandom(24)",
        "DB_PASSWORD=app_$ENV_pass",
        "DB_PASSWORD=${DB_USER}_$STAGE",
        "DB_PASSWORD={{.Values.db.password}}",
        'DB_PASSWORD={{.Values.pw|default "x"}}',
        "DB_PASSWORD=prefix-{stage}-suffix",
        "DB_PASSWORD=vault:secret/data/db",
    ],
)
def test_code_references_and_templates_in_an_environment_line_stay(line: str) -> None:
    assert _redacted(line + "\n", ".env") == line + "\n"


def test_a_hash_starts_a_comment_only_after_a_blank() -> None:
    redacted = _redacted("DB_PASSWORD=hunter2Summer # the old one\n", ".env")
    assert "hunter2Summer" not in redacted and redacted.endswith(" # the old one\n"), redacted


@pytest.mark.parametrize(
    "text",
    [
        "TOKEN=`echo Xk9q2LmWp4TzR7vBqW3e`\n",
        "export API_TOKEN=`echo -n Xk9q2LmWp4TzR7vBqW3e`\n",
        'GH_TOKEN="`echo Xk9q2LmWp4TzR7vBqW3e`"\n',
        "AUTH_TOKEN=`echo -n Xk9q2LmWp4TzR7vBqW3e | base64`\n",
    ],
)
def test_a_generated_run_echoed_in_backticks_is_the_value(text: str) -> None:
    """``TOKEN=`echo Xk9q…` ``: the command prints the value, which stands in the text; no
    rule took it (a token's value is letters and digits, and the backticks' blank ends it)."""
    for body, path in [(text, "run.sh"), (json.dumps({"output": text}) + "\n", "s.jsonl")]:
        redacted = _redacted(body, path)
        assert "Xk9q2LmWp4TzR7vBqW3e" not in redacted, redacted
    for kept in (
        "TOKEN=`gh auth token`\n",
        "TOKEN=`echo $GITHUB_TOKEN`\n",
        "TOKEN=`echo hello-world-token`\n",
    ):
        assert _redacted(kept, "run.sh") == kept


@pytest.mark.parametrize(
    "line",
    [
        '<span class="hljs-keyword">const</span> password = <span class="hljs-string">'
        "'Password used to generate key'</span>;",
        '<span class="hljs-keyword">const</span> password = <span class="hljs-keyword">new'
        '</span> <span class="hljs-title class_">Password</span>(…);',
    ],
)
def test_markup_after_a_password_is_no_value(line: str) -> None:
    """Highlighted code in a page's HTML (Node's API docs): the tag that opens the value's
    markup is no password, nor is any copy of it the page holds thousands of."""
    text = line + "\n" + '<span class="hljs-title">x</span>\n'
    assert scan_text(text, path="crypto.html", cache=None) == []
    for secret in ("<k9Qm2 xR7tLw4=", "<Xk9q#2LmWp4", "<k9Qm2xR7tLw4>"):
        assert secret not in _redacted(f"password = {secret}\n")
    assert "Xk9q2LmWp4" not in _redacted('<span>password = "Xk9q2LmWp4Tz"</span>\n')


@pytest.mark.parametrize(
    ("text", "password"),
    [
        ("password=hunter22\n", "hunter22"),
        ("PASSWORD: correcthorse1\n", "correcthorse1"),
        ("db:\n  password: hunter2\n", "hunter2"),
        ("export DB_PASS=Summer2024!\n", "Summer2024!"),
        ("mysql_root_password = Welcome1\n", "Welcome1"),
        ("adminPassword: MONKEY99\n", "MONKEY99"),
        ("password=p4ssw0rd\n", "p4ssw0rd"),
        ("PASSWORD: s3cr3t!x\n", "s3cr3t!x"),
        ("db_pass: Pa55word\n", "Pa55word"),
        ("password=l33tsp34k\n", "l33tsp34k"),
        ("password: P@ssw0rd\n", "P@ssw0rd"),
        ("password=pa$$word\n", "pa$$word"),
        ("password=s3cret\n", "s3cret"),
        ("PASSWORD: passw0rd\n", "passw0rd"),
        ("admin_password: adm1n123\n", "adm1n123"),
        # A file's extension after it is the password's too, read as a name or a type else.
        ("Password: hunter2.java\n", "hunter2.java"),
        ("password=hunter2.java\n", "hunter2.java"),
        ("db:\n  password: Summer2024.txt\n", "Summer2024"),
        ("password=p4ssw0rd.txt\n", "p4ssw0rd.txt"),
        ("password: p4ssw0rd.txt\n", "p4ssw0rd.txt"),
        ("Password: Hunter2.Java\n", "Hunter2.Java"),
    ],
)
@pytest.mark.parametrize("path", ["notes.md", "config.yaml", "events.jsonl"])
def test_a_written_password_after_a_passwords_name_is_redacted(
    text: str, password: str, path: str
) -> None:
    """A short password a person chose, a word then digits or symbols or a word written with
    digits for some letters (`p4ssw0rd`), written bare after a password's name: no test of
    randomness takes it, the name says what it is."""
    if path.endswith(".jsonl"):
        text = json.dumps({"type": "tool_result", "content": text}) + "\n"
    redacted = _redacted(text, path=path)
    assert password not in redacted
    assert "[REDACTED:secret-assignment#1]" in redacted


@pytest.mark.parametrize(
    "text",
    [
        "password=password\n",
        "password: str\n",
        "password: changeme\n",
        "password=password1\n",
        'password=os.environ["DB_PASSWORD"]\n',
        "password=new_password2\n",
        "password = oauth2Token\n",
        "password_hasher=pbkdf2\n",
        "password_encoder=bcrypt12\n",
        "password = password.encode(latin1)\n",
        "PASS: TestParse2\n",  # a test runner's result
        "bypass=route66\n",
        "compass: north99\n",
        "passed=tests12\n",
        "password=${DB_PASSWORD}\n",
        "password_min_length=8\n",
        "password=True\n",
        "password_hash=md5crypt\n",
        "password_source=ipv4addr\n",
        "password_cert=x509cert\n",
        # A name holding one number between its words, not digits for a password's letters.
        "password_logger: log4jconfig\n",
        "password_model=llama3chat\n",
        "password_model: gpt4turbo\n",
        "password_storage = s3bucket\n",
        "password: html5input\n",
        "password=web3token\n",
        "password_sample=mp4video\n",
        "password_cipher=tls13cipher\n",
        "password_ssh=x11forward\n",
        "password_model: claude3opus\n",
        "password_host=m1chip\n",
        # A file that holds the password, named as such or by its path; a word before an
        # extension; a test runner's result.
        "password_file: secrets2.txt\n",
        "passwordFile: hunter2.txt\n",
        "--password-file=pw2024.txt\n",
        "secret_path: hunter2.txt\n",
        "password: ./pw.txt\n",
        "password: /etc/pw2024.txt\n",
        "password: config.yaml\n",
        "password=hunter.java\n",
        "PASS: Parser2.java\n",
        # A key about a password rather than one: its last word names a file or a check.
        "password_filename: creds2024.yaml\n",
        "password_files: hunter2.txt\n",
        "password_script: Summer2024.gpg\n",
        "passwordValidator: Validator2.ts\n",
    ],
)
def test_a_passwords_name_before_code_a_setting_or_a_placeholder_keeps_it(text: str) -> None:
    assert [
        f.rule for f in scan_text(text, cache=ResultCache()) if f.rule == "secret-assignment"
    ] == []


# A quoted value may hold a backslash and the other quotes from its first character on: a
# shell's single quotes keep `\` as it is, double quotes hold an apostrophe, single quotes a
# double quote. Each line and the value the marker must cover, backslash and quote included.
_QUOTED_FROM_THE_START = [
    ("$ export API_TOKEN='Qm7\\zP4kLw9xRt2vBn8s'", "Qm7\\zP4kLw9xRt2vBn8s"),
    ('DB_PASSWORD="it\'s-Secr3t-Pw9x"', "it's-Secr3t-Pw9x"),
    ("password: 'hun\"ter2Kx9Lm'", 'hun"ter2Kx9Lm'),
    ("token = '\\Qm7zP4kLw9xRt2vBn8s'", "\\Qm7zP4kLw9xRt2vBn8s"),
    ('api_key = "Zk8\\\\Wq2nTr5vLp0xYc3"', "Zk8\\\\Wq2nTr5vLp0xYc3"),
    ('password = "Xk\\"9mQ2vLp8rT4"', 'Xk\\"9mQ2vLp8rT4'),
    ('password = "\\"Xk9mQ2vLp8rT4\\""', '\\"Xk9mQ2vLp8rT4\\"'),
    ("api_key: str = 'hun\"ter2Kx9Lm'", 'hun"ter2Kx9Lm'),
    ('SECRET_KEY = "it\'s-Secr3t-Pw9x"', "it's-Secr3t-Pw9x"),
    ("password = process.env.DB_PASSWORD || 'Qm7\\zP4kLw9xRt2vBn8s'", "Qm7\\zP4kLw9xRt2vBn8s"),
    ("token = os.getenv('TOKEN') or 'hun\"ter2Kx9Lm'", 'hun"ter2Kx9Lm'),
    ("db = os.environ.get('DB_PASS', \"it's-Secr3t-Pw9x\")", "it's-Secr3t-Pw9x"),
    ("process.env.API_KEY ?? 'Qm7\\zP4kLw9xRt2vBn8s'", "Qm7\\zP4kLw9xRt2vBn8s"),
    # Python's and JavaScript's escaped apostrophe in single quotes: the value goes on.
    ("password = 'Xk9m\\'Q2vLp8rT4'", "Xk9m\\'Q2vLp8rT4"),
    ("const apiKey = 'it\\'s-Secr3t-Pw9x';", "it\\'s-Secr3t-Pw9x"),
    ("export TOKEN='Zk8mQ2vLp8\\' && echo done", "Zk8mQ2vLp8\\"),
    # A shell's closing quote after a backslash, more quotes on the line: not read on.
    ("export API_TOKEN='Zk8mQ2vLp8rT4wZs\\' && echo 'done'", "Zk8mQ2vLp8rT4wZs\\"),
    ("export API_TOKEN='Zk8mQ2vLp8rT4wZs\\';export USER='bob'", "Zk8mQ2vLp8rT4wZs\\"),
    ("password = 'Zk8mQ2vLp8rT4wZs\\'  # don't commit", "Zk8mQ2vLp8rT4wZs\\"),
    # An escaped quote is a sign of the value's when it is judged.
    ("token: 'Kb&G\\0H\\'nh&D'", "Kb&G\\0H\\'nh&D"),
]


_MARKER = "[REDACTED:secret-assignment#1]"


def _written(line: str, form: str) -> tuple[str, str]:
    """The line as a file holds it (`text`), or a transcript's tool call (`tool_use`: its
    backslashes and double quotes escaped once), or a tool's result holding it in a JSON
    document (`tool_result_of_json`: escaped twice); and the file's name."""
    if form == "text":
        return line + "\n", "notes.txt"
    if form == "tool_use":
        return json.dumps({"type": "tool_use", "input": {"command": line}}) + "\n", "events.jsonl"
    result = {"type": "tool_result", "content": json.dumps({"command": line})}
    return json.dumps(result) + "\n", "events.jsonl"


@pytest.mark.parametrize(("line", "value"), _QUOTED_FROM_THE_START)
@pytest.mark.parametrize("form", ["text", "tool_use"])
def test_a_quoted_value_opening_on_a_backslash_or_the_other_quote_goes_whole(
    line: str, value: str, form: str
) -> None:
    """Such a value stayed in clear: the first six characters after its quote were asked to
    hold no quote and no backslash. In a transcript's tool call the backslash and the double
    quote are escaped again (`'Qm7\\\\zP4…'`, `\\"it's-…\\"`)."""
    assert _redacted(*_written(line, form)) == _written(line.replace(value, _MARKER), form)[0]


# A single-quoted value closed and opened again around its own quote: a shell's `'\''`, YAML's
# and SQL's doubled quote. Each line and the value the marker must cover, from the first quote
# to the last.
_REOPENED_QUOTES = [
    ("export DB_PASSWORD='it'\\''s-Secr3t-Kx9'", "it'\\''s-Secr3t-Kx9"),
    ("export DB_PASSWORD='Zq8'\\''mW4vLp2rT'", "Zq8'\\''mW4vLp2rT"),
    ("DB_PASSWORD='Xk9mQ2vL'\\''p8rT4' ./run.sh", "Xk9mQ2vL'\\''p8rT4"),
    ("password: 'it''s-Secr3t-Kx9'", "it''s-Secr3t-Kx9"),
    ("password: 'Zq8mW''4vLp2rT'", "Zq8mW''4vLp2rT"),
    ("UPDATE users SET password = 'it''s-Secr3t-Kx9' WHERE id = 1", "it''s-Secr3t-Kx9"),
    # A backslash before a quote reopened is the value's own: a shell's and YAML's single
    # quotes keep it as it is.
    ("db_password: 'p@K''#Lzyvh_k\\''fX*C3m'", "p@K''#Lzyvh_k\\''fX*C3m"),
    ("export DB_PASSWORD='Xk9mQ2\\'\\''vLp8rT4'", "Xk9mQ2\\'\\''vLp8rT4"),
]


@pytest.mark.parametrize(("line", "value"), _REOPENED_QUOTES)
@pytest.mark.parametrize("form", ["text", "tool_use", "tool_result_of_json"])
def test_a_value_its_quotes_close_and_open_again_goes_whole(
    line: str, value: str, form: str
) -> None:
    """Such a value stayed in clear, or its tail did: it was read to the first quote, and
    `it` is no secret. In a transcript its backslashes are escaped once, or twice in a JSON
    document a tool returned."""
    assert _redacted(*_written(line, form)) == _written(line.replace(value, _MARKER), form)[0]


@pytest.mark.parametrize(
    "line",
    [
        "export DB_PASSWORD='iFwV'\\''^LXL'",
        "db_password: 'Eb&f''g^gL'",
        "UPDATE users SET db_password = 'VV;*.''@+o' WHERE id = 1;",
    ],
)
def test_a_short_value_its_quotes_close_and_open_again_keeps_no_tail(line: str) -> None:
    """detect-secrets reads such a value to its first quote: its span goes on to the quote
    that closes the value, as the rules read it; its second part stayed in clear."""
    redacted = _redacted(line + "\n", "notes.txt")
    assert "[REDACTED:" in redacted
    assert redacted.rstrip("\n").endswith(("]'", "]' WHERE id = 1;")), redacted


@pytest.mark.parametrize(
    "line",
    [
        "echo 'don'\\''t panic' && export TOKEN='abc'",
        "msg='it'\\''s fine'",
        "password: 'don''t-know'",
        "password_hint: 'it''s-your-name'",
        "secret_name: 'db''password'",
        "token = 'xxxxxxxx''xxxx'",
        "x = f(token='', other='abc')",
        'psql -c "ALTER USER app WITH PASSWORD \'" || pw || "\'"',
        # A word's apostrophe written so is a word's still; a triple-quoted literal's quotes
        # are no value's.
        "password='don''t-log-this'",
        "password='don'\\''t-log-this'",
        "password: 'don'\\''t-know'",
        "api_token: 'it''s-in-the-vault'",
    ],
)
def test_words_whose_quotes_close_and_open_again_stay(line: str) -> None:
    for text, path in (
        (line + "\n", "notes.txt"),
        (json.dumps({"type": "tool_use", "input": {"command": line}}) + "\n", "s.jsonl"),
    ):
        assert _redacted(text, path) == text


def test_each_value_of_a_shell_session_goes_whole() -> None:
    text = (
        "$ export API_TOKEN='Qm7\\zP4kLw9xRt2vBn8s'\n"
        "$ export OTHER=1\n"
        'DB_PASSWORD="it\'s-Secr3t-Pw9x"\n'
        "password: 'hun\"ter2Kx9Lm'\n"
    )
    assert _redacted(text) == (
        "$ export API_TOKEN='[REDACTED:secret-assignment#1]'\n"
        "$ export OTHER=1\n"
        'DB_PASSWORD="[REDACTED:secret-assignment#2]"\n'
        "password: '[REDACTED:secret-assignment#3]'\n"
    )


@pytest.mark.parametrize("special", ["\\", '"', "'"])
@pytest.mark.parametrize("position", range(6))
def test_a_backslash_or_a_quote_anywhere_in_the_first_characters_is_covered(
    special: str, position: int
) -> None:
    """At each of the first six places of a random password, in the quotes that hold it as
    it is (a shell's and YAML's single quotes a backslash and `"`, double quotes `'`), raw
    and in a transcript's tool call."""
    rng = random.Random(f"{special}{position}")
    body = rng.choice(string.digits) + "".join(
        rng.choice(string.ascii_letters + string.digits) for _ in range(15)
    )
    value = body[:position] + special + body[position:]
    quote = '"' if special == "'" else "'"
    for line in (
        f"export DB_PASSWORD={quote}{value}{quote} && make",
        f"password: {quote}{value}{quote}",
        f"API_TOKEN = {quote}{value}{quote}",
    ):
        for text, path in (
            (line + "\n", "notes.txt"),
            (json.dumps({"type": "tool_use", "input": {"command": line}}) + "\n", "s.jsonl"),
        ):
            redacted = _redacted(text, path)
            assert body[:8] not in redacted and body[-8:] not in redacted, redacted


@pytest.mark.parametrize(
    "line",
    [
        "sep = '\\\\t'",
        "sep = '\\t'",
        "pattern = '\\\\d+\\\\s*'",
        "password_re = '^\\\\w{8,}$'",
        "token = r'\\bghp_\\w+'",
        'token = "\\"$TOKEN\\""',
        "token = '\"$GITHUB_TOKEN\"'",
        "token = \"'$TOKEN'\"",
        "password: '\"quoted\"'",
        'password: "it\'s a trap"',
        'token = "don\'t-log-this"',
        'password: "user\'s-password"',
        "password = '\\n'.join(parts)",
        "token = '\\x00\\x01'",
        "token = '\\x1b[0m\\x1b[1m'",
        "secret_key = '\\\\N{BULLET}\\\\N{BULLET}'",
        "secret_file = 'C:\\\\Users\\\\x\\\\secret.txt'",
        "secret_file = 'D:\\\\keys\\\\prod\\\\secret.txt'",
        "token = '\\\\\\\\server\\\\share\\\\tok'",
        "PASSWORD='${DB_PASSWORD}'",
        'token = "%s\\n" % tok',
        'password = "\\"%s\\"" % pw',
        'password = "%-20s\\t%s\\n"',
        "secret = '%s\\\\%s' % (a, b)",
        "_token_end = r'(?=\\s|#|[)\\]]|$)'",
        'password_style = "\\x1b[1;31mERR\\x1b[0m"',
        'TOKEN_STYLE = "\\033[1;34m%s\\033[0m"',
        'secret = "\\x1b[31mERROR\\x1b[0m"',
        'secret = "\\\\\\\\?\\\\C:\\\\keys\\\\secret.pem"',
    ],
)
@pytest.mark.parametrize("strict", [False, True], ids=["normal", "strict"])
def test_escapes_quotes_and_paths_a_literal_opens_on_are_no_secret(line: str, strict: bool) -> None:
    """Code's escapes (`'\\t'`, `'\\x00\\x01'`), a regular expression, a reference in quotes
    of the other kind or escaped ones, a phrase or words with an apostrophe, a Windows path
    and format strings, right after a credential's name: raw and in a tool call."""
    config = GateConfig(strict=strict)
    for text, path in (
        (line + "\n", "notes.txt"),
        (json.dumps({"type": "tool_use", "input": {"command": line}}) + "\n", "s.jsonl"),
    ):
        assert "[REDACTED:" not in _redacted(text, path, config), text


@pytest.mark.parametrize(
    ("line", "value"),
    [
        ("export API_TOKEN='xi5CvQ\\0USHL'", "xi5CvQ\\0USHL"),
        ('password = "KTm7HT\'T17mK"', "KTm7HT'T17mK"),
        ('const apiKey = "xUQUkxkQ8f\\\'v";', "xUQUkxkQ8f\\'v"),
        ('export API_TOKEN="UU66g8\\\\jJJ7f"', "UU66g8\\\\jJJ7f"),
        ('client_secret = "R1$Fw3FxQdm\'\\QOoBHEmc"', "R1$Fw3FxQdm'\\QOoBHEmc"),
        ('token = os.getenv("TOKEN", "cQODOWlgQl\\3cA")', "cQODOWlgQl\\3cA"),
        ("token: 'TitCp.u\\033DoaJTtG'", "TitCp.u\\033DoaJTtG"),
        ('export API_TOKEN="Krs40OKR\\tY\\nA9"', "Krs40OKR\\tY\\nA9"),
        ('password = "uEOcQM\\\'fntOH\\tG-TWMR"', "uEOcQM\\'fntOH\\tG-TWMR"),
        ('password = "XSdlc8\\B\\b~_Qm"', "XSdlc8\\B\\b~_Qm"),
    ],
)
def test_one_backslash_or_apostrophe_in_a_short_password_is_the_password_s_own(
    line: str, value: str
) -> None:
    """A single `\\0`, `\\n`, `\\'` or other backslash, or an apostrophe between capitals, in a
    short random password is read as its own character: taken out (as code's escape, a word's
    apostrophe) it left too few kinds of character to count as a password. Code's escapes
    taken out of one leave no name (`Krs40OKRYA9`), a character's code stands as a sign
    (`\\033`), and two word boundaries by chance make no regular expression."""
    for text, path in (
        (line + "\n", "notes.txt"),
        (json.dumps({"type": "tool_use", "input": {"command": line}}) + "\n", "s.jsonl"),
    ):
        redacted = _redacted(text, path)
        assert "[REDACTED:" in redacted and value[:6] not in redacted, redacted
        assert value[-4:] not in redacted, redacted


def test_a_value_ending_in_a_backslash_keeps_the_argument_after_it() -> None:
    """`'…\\'` before `, ` closes the literal, as a shell's quote would: the next argument
    and its name stay (the value was read on to the next quote, taking `other=` with it)."""
    line = "f(token='Xk9mQ2vLp8rT4wZs\\', other='Qm7zP4kLw9xRt2vB')\n"
    assert (
        _redacted(line) == "f(token='[REDACTED:secret-assignment#1]', other='Qm7zP4kLw9xRt2vB')\n"
    )


@pytest.mark.parametrize("path", ["config.toml", "settings.py", "notes.txt"])
def test_a_triple_quoted_value_keeps_its_quotes(path: str) -> None:
    """Its quotes are no quotes closed and opened again: the marker stands between them."""
    redacted = _redacted("password = '''Xk9mQ2vLp8rT4'''\n", path)
    assert redacted.startswith("password = '''[REDACTED:") and redacted.endswith("]'''\n")


@pytest.mark.parametrize(
    ("line", "value"),
    [
        ("export DB_PASSWORD=$'Xk9mQ2vLp8rT4'", "Xk9mQ2vLp8rT4"),
        ("PASSWORD=$'hunter2\\nabc' ./start.sh", "hunter2\\nabc"),
        ("password=$'it\\'s-Secr3t-Kx9'", "it\\'s-Secr3t-Kx9"),
    ],
)
@pytest.mark.parametrize("form", ["text", "tool_use"])
def test_a_shells_ansi_c_quoted_value_goes_whole(line: str, value: str, form: str) -> None:
    """`$'…'` was read as a bare value that ends at its quote: `$`, no secret."""
    assert _redacted(*_written(line, form)) == _written(line.replace(value, _MARKER), form)[0]


@pytest.mark.parametrize(
    "line", ["export GREETING=$'Hello\\nWorld'", "export TOKEN=$'\\e[31m'", "IFS=$'\\n\\t'"]
)
def test_ansi_c_quoted_text_that_is_no_secret_stays(line: str) -> None:
    assert _redacted(line + "\n", "notes.txt") == line + "\n"


# A shell's parameter expansion supplying a credential's default, and the default the marker
# must cover: the literal alone, not the `${NAME:-` before it nor the `}` after it.
_EXPANSION_DEFAULTS = [
    ("PASSWORD=${PASSWORD:-'Xk9mQ2vLp8rT4wZ'}", "Xk9mQ2vLp8rT4wZ"),
    ("export PASSWORD=${PASSWORD:-'Xk9mQ2vLp8rT4wZ'}", "Xk9mQ2vLp8rT4wZ"),
    ("PASSWORD={PASSWORD:-'Xk9mQ2vLp8rT4wZ'}", "Xk9mQ2vLp8rT4wZ"),
    ('PASSWORD=${PASSWORD:-"Xk9mQ2vLp8rT4wZ"}', "Xk9mQ2vLp8rT4wZ"),
    ('DB_PASSWORD="${DB_PASSWORD:-Xk9mQ2vLp8rT4wZ}"', "Xk9mQ2vLp8rT4wZ"),
    ("DB_PASSWORD=${DB_PASSWORD:-Xk9mQ2vLp8rT4wZ}", "Xk9mQ2vLp8rT4wZ"),
    ("API_TOKEN=${API_TOKEN:=Xk9mQ2vLp8rT4wZ}", "Xk9mQ2vLp8rT4wZ"),
    ("SECRET=${SECRET-Xk9mQ2vLp8rT4wZ}", "Xk9mQ2vLp8rT4wZ"),
    ("${DB_PASSWORD=hunter2Summer}", "hunter2Summer"),
    ("    POSTGRES_PASSWORD: ${POSTGRES_PASSWORD:-Xk9mQ2vLp8rT4wZ}", "Xk9mQ2vLp8rT4wZ"),
    ("      - POSTGRES_PASSWORD=${POSTGRES_PASSWORD:-Xk9mQ2vLp8rT4wZ}", "Xk9mQ2vLp8rT4wZ"),
    # Whatever it is assigned to, the default of a variable that names a credential.
    ('export PGPASSWORD="${DB_PASS:-Ptf8454Jd55}"', "Ptf8454Jd55"),
    ("psql --password=${APP_DB_PASSWORD:-Summer-2024-Kx9}", "Summer-2024-Kx9"),
    # Judged as an environment line's value: a password of words and digits, signs.
    ('DB_PASSWORD="${DB_PASSWORD:-hunter2Summer}"', "hunter2Summer"),
    ('POSTFIX_PASS="${POSTFIX_PASS:-MyPa$$w0rd}"', "MyPa$$w0rd"),
    ('DB_PASSWORD="${DB_PASSWORD:-4]gi12(LhEWXBj}"', "4]gi12(LhEWXBj"),
]


@pytest.mark.parametrize(("line", "value"), _EXPANSION_DEFAULTS)
@pytest.mark.parametrize("form", ["text", "tool_use", "tool_result_of_json"])
def test_a_shell_expansions_default_goes_alone(line: str, value: str, form: str) -> None:
    """A quoted default stayed in clear: `connection-string-password` and the generic rule
    took `${PASSWORD:-` before it for the value. A bare one was read from the `-` of `:-`
    (the name's `:` taken for an assignment), and `${SECRET-…}` not at all."""
    assert _redacted(*_written(line, form)) == _written(line.replace(value, _MARKER), form)[0]


@pytest.mark.parametrize(
    "line",
    [
        "PASSWORD=${PASSWORD:-changeme}",
        "PASSWORD=${PASSWORD:-}",
        "PASSWORD=${PASSWORD:-$OTHER}",
        "PASSWORD=${PASSWORD:-'$OTHER_PASSWORD'}",
        "HOME=${HOME:-/root}",
        'name="${1:-default}"',
        "PASSWORD_FILE=${PASSWORD_FILE:-/run/secrets/db_password}",
        "export PGPASSWORD=${PGPASSWORD:-}",
        "    POSTGRES_PASSWORD: ${POSTGRES_PASSWORD:-postgres}",
        'ADMIN_PASS="${KEYCLOAK_ADMIN_PASSWORD:-admin}"',
        "API_KEY_HEADER=${API_KEY_HEADER:-X-Api-Key}",
        'SECRET_KEY="${BACKUP_SECRET_KEY:-${MINIO_SECRET_KEY:-${MINIO_ROOT_PASSWORD:-}}}"',
        "GRAFANA_PASSWORD=${GRAFANA_PASSWORD:-$(openssl rand -base64 16)}",
        "gcp_secret_key=${GCP_SECRET_KEY:-$HOME/secrets/service-account-key.json}",
        'export SESSION_SECRET="${SESSION_SECRET:-pulse-dev-secret-key}"',
        'ADMIN_TOKEN="${ADMIN_TOKEN:-your_admin_token_here}"',
        ': "${DB_PASSWORD:?DB_PASSWORD is required}"',
        "args=${GITHUB_TOKEN:+--token=$GITHUB_TOKEN}",
        "MAX_TOKENS=${MAX_TOKENS:-8192}",
    ],
)
def test_references_placeholders_and_paths_an_expansion_defaults_to_stay(line: str) -> None:
    """Judged as any value after a credential's name is: the code before a default is never
    one (`${PASSWORD:-` was taken for a password before `'$OTHER_PASSWORD'`), nor a path after
    the `-` of `:-` (`-$HOME/…` was), an error's message after `:?` or the text after `:+`
    (`?DB_PASSWORD`, `+--token=$GITHUB_TOKEN` were)."""
    for form in ("text", "tool_use", "tool_result_of_json"):
        text, path = _written(line, form)
        assert _redacted(text, path) == text


# Defaults the rules that read one alone miss (no `}`, a blank before it) or judge no secret
# (dotted, dashed, underscored, a `$` inside, a quote inside): the older reading, from the
# operator or from the expansion's `${`, still redacts them, from the default's start on.
_DEFAULTS_READ_ON = [
    (
        "DB_PASSWORD=${DB_PASSWORD:-k2Jd9XqP0vLm7RtZ4wYb8NcHs3GfA6Ue",
        "k2Jd9XqP0vLm7RtZ4wYb8NcHs3GfA6Ue",
    ),
    ("API_KEY=${API_KEY:-k2Jd9XqP0vLm7RtZ4wYb8NcHs3GfA6Ue", "k2Jd9XqP0vLm7RtZ4wYb8NcHs3GfA6Ue"),
    ('export DB_PASSWORD="${DB_PASSWORD:-Xk9mQ2vLp8rT4wZ', "Xk9mQ2vLp8rT4wZ"),
    ("echo ${API_TOKEN:-Zq8Wm3Rt6Yk2Lp9Hn", "Zq8Wm3Rt6Yk2Lp9Hn"),
    ("POSTGRES_PASSWORD: ${POSTGRES_PASSWORD:-Xk9mQ2vLp8rT4wZ", "Xk9mQ2vLp8rT4wZ"),
    (
        "DB_PASSWORD=${DB_PASSWORD:-k2Jd9XqP0vLm7RtZ4wYb8NcHs3GfA6Ue }",
        "k2Jd9XqP0vLm7RtZ4wYb8NcHs3GfA6Ue",
    ),
    ("PASSWORD=${PASSWORD:-Xk9mQ2vLp8rT4wZ }", "Xk9mQ2vLp8rT4wZ"),
    ("DB_PASSWORD=${DB_PASSWORD:-Xk9mQ2vLp8rT4wZ )", "Xk9mQ2vLp8rT4wZ"),
    ("DB_PASSWORD=${DB_PASSWORD:-XqvZIKK.IlxooWQQ.NV4Nj}", "XqvZIKK.IlxooWQQ.NV4Nj"),
    (
        "API_KEY=${API_KEY:-k2Jd9XqP.0vLm7RtZ4.wYb8NcHs3GfA6Ue}",
        "k2Jd9XqP.0vLm7RtZ4.wYb8NcHs3GfA6Ue",
    ),
    ("DB_PASSWORD=${DB_PASSWORD:-My.Secret.Pass9}", "My.Secret.Pass9"),
    ("DB_PASSWORD=${DB_PASSWORD:-pa55.w0rd.X}", "pa55.w0rd.X"),
    ("ACCESS_TOKEN=${ACCESS_TOKEN:-kX9mQ2vL.p8rT4wZ.aBcd9}", "kX9mQ2vL.p8rT4wZ.aBcd9"),
    ("API_TOKEN=${API_TOKEN:-hMwZX-cdeu-LcFIY}", "hMwZX-cdeu-LcFIY"),
    ("API_TOKEN=${API_TOKEN:-Aldvi_WjCTC_SLzXZ}", "Aldvi_WjCTC_SLzXZ"),
    ("API_TOKEN=${API_TOKEN:-Sunshine5648$Kp}", "Sunshine5648$Kp"),
    ("echo ${API_KEY:-COeTAJ-zhTj-igML}", "COeTAJ-zhTj-igML"),
    # Read up to the quote, the backslash: what it read goes, as before.
    ('PASSWORD=${PASSWORD:-Xk9mQ2vL"p8rT4wZ"}', "Xk9mQ2vL"),
    ("export PASSWORD=${PASSWORD:-Xk9m\\ Q2vLp8rT}", "Xk9m"),
    ("export PASSWORD=${PASSWORD:-Xk9m\\}Q2vLp8rT}", "Xk9m"),
]


@pytest.mark.parametrize(("line", "value"), _DEFAULTS_READ_ON)
@pytest.mark.parametrize("form", ["text", "tool_use", "tool_result_of_json"])
def test_a_default_the_expansion_rules_miss_still_goes(line: str, value: str, form: str) -> None:
    """The older rules read these from the `-` of `:-` or from `${`; a block on every value
    that starts in an expansion left them in clear. Only the code before the default stays."""
    before, after = _written(line.replace(value, "@VALUE@"), form)[0].split("@VALUE@")
    out = _redacted(*_written(line, form))
    assert re.fullmatch(re.escape(before) + r"\[REDACTED:[a-z\-]+#1\]" + re.escape(after), out)


# The default of a name an environment line's rules know is judged as the line `NAME=value`
# would be: where that line stays, so does the expansion; where it goes, so does the default.
@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("BYPASS", "proxy8080"),
        ("TEST_PASS", "allGreen1"),
        ("FIRST_PASS", "analysis1"),
        ("X264_PASS", "twoPass2"),
        ("DB_PASSWORD", "postgres"),
        ("CREDENTIAL", "DefaultAzureCredential"),
        ("MY_PWD", "workDir2"),
        ("SIGNING_KEY", "ReleaseKey"),
        ("ADMIN_PASSWORD", "test1234"),
        ("DB_PASSWORD", "hunter2Summer"),
    ],
)
def test_an_env_lines_expansion_default_is_judged_as_the_line(name: str, value: str) -> None:
    plain = _redacted(f"{name}={value}\n")
    for line in (f"{name}=${{{name}:-{value}}}", f'export {name}="${{{name}:-{value}}}"'):
        assert (value in _redacted(line + "\n")) == (value in plain), line


@pytest.mark.parametrize(
    "line",
    [
        # `…PASS` names no password on an environment line: a pass of a test, a proxy's bypass.
        "echo ${BYPASS:-proxy8080}",
        'echo "${TEST_PASS:-allGreen1}"',
        # Outside an environment line's assignment a default is judged as a literal only.
        "az login --identity ${AZURE_CREDENTIAL:-ManagedIdentity}",
        "    AZURE_CREDENTIAL: ${AZURE_CREDENTIAL:-AzureCliCredential}",
        "cd ${MY_PWD:-workDir2}",
        "gpg --local-user ${SIGNING_KEY:-ReleaseKey}",
        # A command `:=` assigns: the shell runs it, the text holds no value.
        "SECRET_KEY=${SECRET_KEY:=$(openssl rand -hex 32)}",
        ": ${SECRET_KEY:=$(openssl rand -hex 32)}",
    ],
)
def test_words_and_commands_an_expansion_defaults_to_stay(line: str) -> None:
    for form in ("text", "tool_use", "tool_result_of_json"):
        text, path = _written(line, form)
        assert _redacted(text, path) == text


def test_a_name_at_the_texts_start_is_read_whatever_the_text_ends_with() -> None:
    # The two characters before a name at the text's start are none: never the text's last two.
    alone = _redacted("PASSWORD:-Xk9mQ2vLp8rT4wZ")
    assert _MARKER in alone
    assert _redacted("PASSWORD:-Xk9mQ2vLp8rT4wZ ${") == alone + " ${"


# A user's password given in SQL, and the value the marker must cover.
_SQL_PASSWORDS = [
    ("CREATE USER 'app'@'%' IDENTIFIED BY 'Xk9q#2Lm!Wp4z';", "Xk9q#2Lm!Wp4z"),
    ("create user app identified by 'it''s-Secr3t-Kx9';", "it''s-Secr3t-Kx9"),
    (
        "CREATE USER IF NOT EXISTS 'app'@'localhost' IDENTIFIED BY 'u8jz)Pde0)IgxL';",
        "u8jz)Pde0)IgxL",
    ),
    (
        "ALTER USER 'root'@'localhost' IDENTIFIED WITH mysql_native_password BY 'Zq8mW4&vLp2rT';",
        "Zq8mW4&vLp2rT",
    ),
    ("GRANT ALL ON app.* TO 'app'@'%' IDENTIFIED BY 'Qm7-zP4.kX9w';", "Qm7-zP4.kX9w"),
    ("mysql -uroot -e \"CREATE USER 'app'@'%' IDENTIFIED BY 'Xk9q#2Lm!Wp4z';\"", "Xk9q#2Lm!Wp4z"),
    ('mysql -uroot -e \'CREATE USER "app"@"%" IDENTIFIED BY "Xk9q#2Lm!Wp4z";\'', "Xk9q#2Lm!Wp4z"),
    ("ALTER ROLE app WITH PASSWORD '%&1Y5dR3#il';", "%&1Y5dR3#il"),
    ("CREATE USER app WITH LOGIN PASSWORD '^.CD18fl$NP';", "^.CD18fl$NP"),
    ("CREATE ROLE app WITH LOGIN SUPERUSER ENCRYPTED PASSWORD 'Xk9q#2Lm!Wp4z';", "Xk9q#2Lm!Wp4z"),
    ("psql -U postgres -c \"ALTER USER postgres PASSWORD 'Xk9q#2Lm!Wp4z';\"", "Xk9q#2Lm!Wp4z"),
    ("SET PASSWORD FOR 'app'@'%' = 'Xk9q#2Lm!Wp4z';", "Xk9q#2Lm!Wp4z"),
    ("SET PASSWORD FOR app@localhost = PASSWORD('Xk9q#2Lm!Wp4z');", "Xk9q#2Lm!Wp4z"),
    # A statement broken over lines, as a migration or a script writes it.
    ("CREATE USER app\n  IDENTIFIED BY 'Xk9q#2Lm!Wp4z';", "Xk9q#2Lm!Wp4z"),
    ("CREATE USER 'app'@'%'\r\n    IDENTIFIED BY 'Xk9q#2Lm!Wp4z';", "Xk9q#2Lm!Wp4z"),
    (
        "ALTER USER 'root'@'localhost'\n  IDENTIFIED WITH mysql_native_password\n  BY 'Zq8mW4vLp2rT';",
        "Zq8mW4vLp2rT",
    ),
    ("CREATE USER app\nIDENTIFIED\nBY 'Xk9q#2Lm!Wp4z';", "Xk9q#2Lm!Wp4z"),
    ("SET PASSWORD FOR 'app'@'%'\n  = PASSWORD('Xk9q#2Lm!Wp4z');", "Xk9q#2Lm!Wp4z"),
    # The account in session: MySQL's USER() and CURRENT_USER().
    ("ALTER USER USER() IDENTIFIED BY 'Xk9q#2Lm!Wp4z';", "Xk9q#2Lm!Wp4z"),
    ("SET PASSWORD FOR CURRENT_USER() = 'Xk9q#2Lm!Wp4z';", "Xk9q#2Lm!Wp4z"),
    # Oracle's unquoted password, where the statement ends or a clause follows it.
    ("CREATE USER scott IDENTIFIED BY Tiger_2024;", "Tiger_2024"),
    ("SQL> CREATE USER scott\n  2  IDENTIFIED BY Tiger_2024x;", "Tiger_2024x"),
    ("ALTER USER scott IDENTIFIED BY Tiger_2024x REPLACE tiger;", "Tiger_2024x"),
    ("ALTER USER system IDENTIFIED BY Oracle123\n/", "Oracle123"),
    ("mysql> CREATE USER 'app'@'%'\n    -> IDENTIFIED BY 'Xk9q#2Lm!Wp4z';", "Xk9q#2Lm!Wp4z"),
    ("CREATE USER app\n\tIDENTIFIED BY 'Xk9q#2Lm!Wp4z';", "Xk9q#2Lm!Wp4z"),
    ("CREATE USER app IDENTIFIED BY\n  'Xk9q#2Lm!Wp4z';", "Xk9q#2Lm!Wp4z"),
    ("CREATE USER app IDENTIFIED BY Xq9_$mK#2z DEFAULT TABLESPACE users;", "Xq9_$mK#2z"),
    ("CREATE USER app\n  IDENTIFIED BY Xk9mQ2vLp8\n  QUOTA UNLIMITED ON users;", "Xk9mQ2vLp8"),
    ('sqlplus / as sysdba <<< "ALTER USER system IDENTIFIED BY Oracle123"', "Oracle123"),
]


@pytest.mark.parametrize(
    "line",
    [
        "CREATE USER 'a'@'%' IDENTIFIED BY 'Zq8mW4vLp2rT', 'b'@'%' IDENTIFIED BY 'Xk9q#2Lm!Wp4z';",
        "CREATE USER 'a'@'%' IDENTIFIED BY 'Zq8mW4vLp2rT', b@'10.%' IDENTIFIED BY 'Xk9q#2Lm!Wp4z';",
        "ALTER USER a@localhost IDENTIFIED BY 'Zq8mW4vLp2rT',\n  b@localhost IDENTIFIED WITH"
        " sha256_password BY 'Xk9q#2Lm!Wp4z';",
    ],
)
@pytest.mark.parametrize("form", ["text", "tool_use", "tool_result_of_json"])
def test_each_password_of_a_statement_naming_several_users_goes(line: str, form: str) -> None:
    """The second account's password stayed in clear: no `CREATE USER` stood right before it."""
    expected = line.replace("Zq8mW4vLp2rT", "[REDACTED:sql-password#1]").replace(
        "Xk9q#2Lm!Wp4z", "[REDACTED:sql-password#2]"
    )
    assert _redacted(*_written(line, form)) == _written(expected, form)[0]


@pytest.mark.parametrize(("line", "value"), _SQL_PASSWORDS)
@pytest.mark.parametrize("form", ["text", "tool_use", "tool_result_of_json"])
def test_a_password_sql_gives_a_user_goes_whole(line: str, value: str, form: str) -> None:
    """Such a password stayed in clear: no credential's name stands before it (MySQL's and
    MariaDB's `IDENTIFIED BY '…'`, `SET PASSWORD … = '…'`), whatever the value reads; after
    PostgreSQL's `PASSWORD` only a random value of ten characters or more went, as prose."""
    marker = "[REDACTED:sql-password#1]"
    assert _redacted(*_written(line, form)) == _written(line.replace(value, marker), form)[0]


@pytest.mark.parametrize("form", ["text", "tool_use"])
def test_a_password_in_sql_a_read_tool_numbered_goes_whole(form: str) -> None:
    line = "     1\u2192CREATE USER app\n     2\u2192  IDENTIFIED BY 'Xk9q#2Lm!Wp4z';"
    marker = "[REDACTED:sql-password#1]"
    expected = _written(line.replace("Xk9q#2Lm!Wp4z", marker), form)[0]
    assert _redacted(*_written(line, form)) == expected


@pytest.mark.parametrize(
    "line",
    [
        "CREATE USER 'app'@'%' IDENTIFIED BY 'password';",
        "CREATE USER 'app'@'%' IDENTIFIED BY '<password>';",
        "CREATE USER 'app'@'%' IDENTIFIED BY '${DB_PASSWORD}';",
        "CREATE USER app IDENTIFIED BY '%(password)s';",
        "CREATE USER app IDENTIFIED BY '{{ db_password }}';",
        "CREATE USER 'app'@'%' IDENTIFIED BY RANDOM PASSWORD;",
        "UPDATE users SET password = '%s' WHERE id = %s",
        "CREATE USER 'app'@'%' IDENTIFIED WITH caching_sha2_password AS '$A$005$Zq8mW4vLp2rT9';",
        "CREATE USER app IDENTIFIED BY VALUES 'S:0D5E3A4F1B2C';",
        "ALTER USER app WITH PASSWORD '${DB_PASSWORD}';",
        "ALTER USER app WITH PASSWORD :'password';",
        "ALTER USER app WITH PASSWORD NULL;",
        'cur.execute("ALTER USER app WITH PASSWORD %s", (password,))',
        "cur.execute(f\"ALTER USER {user} WITH PASSWORD '{password}'\")",
        'cursor.execute("CREATE USER %s IDENTIFIED BY %s", (user, password))',
        "cursor.execute(f\"CREATE USER {user} IDENTIFIED BY '{password}'\")",
        "Removes the directory identified by `path`.",
        'that have the same value for all columns identified by "aOrderBy".',
        "into a VLAN identified by a VLAN interface index (%NL80211_ATTR_STA_VLAN).",
        'The account is identified by "svc-deploy2" in the audit log.',
        # No statement that makes or changes a user stands before it: prose.
        "Requests are forwarded to endpoints identified by 'service-name' labels.",
        "grants access to users identified by 'ldap-group-admins'",
        'Authentication of the user bob identified by "bob.smith" failed.',
        "When a user changes their password 'expired' flags are reset.",
        "Items tagged 'a', those identified by 'the-name', stay.",
        "CREATE USER app IDENTIFIED BY password;",
        "CREATE USER app IDENTIFIED BY &pw;",
        "CREATE USER app IDENTIFIED BY $DB_PASS;",
        "CREATE USER app IDENTIFIED EXTERNALLY;",
        "create user accounts identified by email addresses",
        # Wrapped prose, and an address after a quote and a comma.
        "Administrators can create user accounts identified by username\nand password",
        "You can create user accounts identified by Kerberos\nprincipals",
        "alter user bob identified by something\nelse entirely",
        "You can create user accounts identified by email;",
        "Tags: 'alpha', bob@example.com identified by 'Robert Smith' in the log.",
        "Signed: 'Team', jane@corp.com\nidentified by badge",
        # A statement ended before the next line: no account stands before `IDENTIFIED`.
        "CREATE USER app;\nIDENTIFIED BY 'Xk9q#2Lm!Wp4z' is what the manual shows next.",
        "the role admin has password 'required' set",
        # MySQL's hash of a password.
        "SET PASSWORD FOR 'app'@'%' = '*6BB4837EB74329105EE4568DDA7DC67ED2CA2AD9';",
    ],
)
def test_sql_templates_hashes_and_prose_identified_by_a_name_stay(line: str) -> None:
    for form in ("text", "tool_use", "tool_result_of_json"):
        text, path = _written(line, form)
        assert _redacted(text, path) == text


@pytest.mark.parametrize(
    ("line", "default", "after"),
    [
        (
            "API_TOKEN=${API_TOKEN:-k2Jd9XqP0vLm}7RtZ4wYb8NcHs3GfA6Ue",
            "k2Jd9XqP0vLm",
            "7RtZ4wYb8NcHs3GfA6Ue",
        ),
        (
            'PASSWORD="${PASSWORD:-Xk9mQ2vLp8rT4wZ}k2Jd9XqP0vLm7RtZ4"',
            "Xk9mQ2vLp8rT4wZ",
            "k2Jd9XqP0vLm7RtZ4",
        ),
    ],
)
@pytest.mark.parametrize("form", ["text", "tool_use", "tool_result_of_json"])
def test_a_value_running_on_past_an_expansions_default_goes_on(
    line: str, default: str, after: str, form: str
) -> None:
    """The older reading of such a value took it whole; the default goes alone, and what
    follows the `}` goes too, not only the default."""
    redacted = _redacted(*_written(line, form))
    assert default not in redacted and after not in redacted, redacted
    assert "${" in redacted


@pytest.mark.parametrize(
    ("line", "default"),
    [
        ("DB_PASSWORD=${PGPASSWORD:-${OTHER:-k2Jd9XqP0vLm7RtZ4wYb8", "k2Jd9XqP0vLm7RtZ4wYb8"),
        (
            "DB_PASSWORD=${PGPASSWORD:-${DB_PASSWORD-k2Jd9XqP0vLm7RtZ4wYb8 }}",
            "k2Jd9XqP0vLm7RtZ4wYb8",
        ),
        ("API_KEY=${SECRET_KEY:-${API_KEY-unMf_KHkhSTN_e3CLm }}", "unMf_KHkhSTN_e3CLm"),
    ],
)
@pytest.mark.parametrize("form", ["text", "tool_use", "tool_result_of_json"])
def test_a_default_nested_in_another_goes_alone(line: str, default: str, form: str) -> None:
    """An expansion nested in another's default is no literal, but the default it holds is."""
    text, path = _written(line, form)
    redacted = _redacted(text, path)
    assert default not in redacted
    assert redacted == text.replace(default, _MARKER)


def _marked(redacted: str) -> str:
    """The text with each marker, of whichever rule, as `<>`."""
    return re.sub(r"\[REDACTED:[a-z0-9-]+#[0-9]+\]", "<>", redacted)


@pytest.mark.parametrize(
    ("line", "secret"),
    [
        # A default's literal after the references it starts with.
        ("PASSWORD=${PASSWORD:-${OTHER}Xk9mQ2vLp8rT4wZ}", "Xk9mQ2vLp8rT4wZ"),
        ("PASSWORD=${PASSWORD:-$PREFIX-Xk9mQ2vLp8rT4wZ}", "Xk9mQ2vLp8rT4wZ"),
        (
            'export DB_PASSWORD="${DB_PASSWORD:-${ENV}_x6Tsvb.MVyxuD.2XPSqo}"',
            "x6Tsvb.MVyxuD.2XPSqo",
        ),
        ('PGPASSWORD="${DB_PASS:-${PREFIX}k2JdQm7zP4vLx9}"', "k2JdQm7zP4vLx9"),
        # The value's text past an expansion that holds no literal default.
        ("PASSWORD=${PASSWORD:-$X},password=Xk9mQ2vLp8rT4wZ", "Xk9mQ2vLp8rT4wZ"),
        ("PASSWORD=${PASSWORD:?}k2JdQm7zP4vLx9", "k2JdQm7zP4vLx9"),
        ("API_TOKEN=${API_TOKEN:+x}+WD#whInF~DEb", "+WD#whInF~DEb"),
        ("SECRET_KEY=${SECRET_KEY:-$X}fVckT_LJSby_hfhbZ", "fVckT_LJSby_hfhbZ"),
        # `{…}` without its `$`: the default alone, without the `-` of `:-`.
        ("API_KEY={API_KEY:-sqRKx9mQ2vLp8rT4wZ}", "sqRKx9mQ2vLp8rT4wZ"),
    ],
)
@pytest.mark.parametrize("form", ["text", "tool_use", "tool_result_of_json"])
def test_a_literal_beside_an_expansions_code_goes_alone(line: str, secret: str, form: str) -> None:
    """Such literals stayed in clear, or went with the `-` of `:-`: the value read from the
    expansion was left out whole where its default started with `$` or was no default."""
    text, path = _written(line, form)
    assert _marked(_redacted(text, path)) == text.replace(secret, "<>")


@pytest.mark.parametrize(
    "line",
    [
        "DB_PASSWORD=${DB_PASSWORD:-${POSTGRES_PASSWORD}}",
        "PASSWORD=${PASSWORD:-$(openssl rand -hex 32)}",
        "SECRET_KEY=${SECRET_KEY:-$(cat /run/secrets/key)}",
        "GCP_SECRET_KEY=${GCP_SECRET_KEY:-$HOME/.config/gcloud/key.json}",
        "PASSWORD=${PASSWORD:-${HOME}/.password}",
        "PASSWORD=${PASSWORD:-${USER}_dev}",
        "PASSWORD=${PASSWORD:-$USER-secret}",
        "PASSWORD=${PASSWORD:-${USER}_development}",
        "TOKEN=${TOKEN:-}",
        "DB_URL=postgres://app:${DB_PASSWORD:-$PW}@db:5432/app",
    ],
)
def test_references_and_paths_beside_an_expansions_code_stay(line: str) -> None:
    """A reference, a command, a path after `$HOME` and a word after a reference hold no
    secret."""
    for form in ("text", "tool_use", "tool_result_of_json"):
        text, path = _written(line, form)
        assert _redacted(text, path) == text


@pytest.mark.parametrize(
    ("line", "secret"),
    [
        # A quoted default no `}` closes right after: the name's own hit reads it.
        ('api_key=${api_key:="Xk9mQ2vLp8rT4wZ"', "Xk9mQ2vLp8rT4wZ"),
        ("API_TOKEN: ${API_TOKEN:='AUaAw4P#@iYQMVzk' }", "AUaAw4P#@iYQMVzk"),
        ('authToken=${API_TOKEN:-${authToken="Summer9518!zz" }}', "Summer9518!zz"),
        # A password holding a brace: read up to the first `}`.
        ("PASSWORD=${PASSWORD:-Xk9{mQ2vLp8rT4wZ}", "Xk9{mQ2vLp8rT4wZ"),
        # Text glued after the `}` ends at a reference.
        ("PASSWORD=${PASSWORD:?}Xk9mQ2vLp8rT4wZ${SUFFIX}", "Xk9mQ2vLp8rT4wZ"),
        ("PASSWORD=${PASSWORD:?}Xk9mQ2vLp8rT4wZ$SUFFIX", "Xk9mQ2vLp8rT4wZ"),
    ],
)
@pytest.mark.parametrize("form", ["text", "tool_use", "tool_result_of_json"])
def test_a_default_past_the_value_read_or_holding_a_brace_goes(
    line: str, secret: str, form: str
) -> None:
    text, path = _written(line, form)
    assert _marked(_redacted(text, path)) == text.replace(secret, "<>")
