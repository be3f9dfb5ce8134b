"""A credential's fallback or default in code: the literal code falls back on when a lookup
finds nothing (`password = process.env.DB_PASSWORD || '…'`, `os.getenv("API_TOKEN", "…")`,
`password = os.environ["DB_PASSWORD"] if prod else '…'`) is the credential's value, judged as
a literal right after the name is. Only the literal goes, never the code before it;
placeholders, words and names stay. Each is checked raw and as a transcript carries it (a tool
result's JSON string, a tool's JSON output quoted again)."""

from __future__ import annotations

import json

import pytest
from deadline import time_limit
from test_gate_providers import framed, redacted_everywhere

from stet_lsp.gate import GateConfig, ResultCache, redact_text, scan_text

RULE = "secret-assignment"


@pytest.mark.parametrize(
    ("line", "secret"),
    [
        # The right operand of `||`, `??`, `or` after a credential's assignment.
        (
            "password = process.env.DB_PASSWORD || 'hV8pQ2zL9wXr4TgB7nYcK3'",
            "hV8pQ2zL9wXr4TgB7nYcK3",
        ),
        (
            "const secret = process.env.S ?? 'a8f3e9c1b7d2f6a4e0c8b3d9f1a7e2c6'",
            "a8f3e9c1b7d2f6a4e0c8b3d9f1a7e2c6",
        ),
        ("token = getenv('TOKEN') or 'hV8pQ2zL9wXr4TgB7nYcK3'", "hV8pQ2zL9wXr4TgB7nYcK3"),
        ("{password: input.password || 'Xk9q2LmWp4RtZ8vB'}", "Xk9q2LmWp4RtZ8vB"),
        ('const cfg = {token: opts.token ?? "Xk9q2LmWp4RtZ8vB"}', "Xk9q2LmWp4RtZ8vB"),
        ("apiKey: process.env.API_KEY || `Xk9q2LmWp4RtZ8vB`,", "Xk9q2LmWp4RtZ8vB"),
        ("this.token = options.token || 'Xk9q2LmWp4RtZ8vB';", "Xk9q2LmWp4RtZ8vB"),
        ("const apiKey: string = process.env.KEY ?? 'Xk9q2LmWp4RtZ8vB';", "Xk9q2LmWp4RtZ8vB"),
        ("password = (process.env.P || 'Xk9q2LmWp4RtZ8vB')", "Xk9q2LmWp4RtZ8vB"),
        ("secret = a.secret || b.secret || 'Xk9q2LmWp4RtZ8vB'", "Xk9q2LmWp4RtZ8vB"),
        ("password = os.environ.get('DB_PASS') or 'Xk9q2LmWp4RtZ8vB'", "Xk9q2LmWp4RtZ8vB"),
        # A conditional's branch.
        ("token = isProd ? process.env.TOKEN : 'Xk9q2LmWp4RtZ8vB';", "Xk9q2LmWp4RtZ8vB"),
        ("const secret = env === 'dev' ? 'Xk9q2LmWp4RtZ8vB' : vault.secret;", "Xk9q2LmWp4RtZ8vB"),
        # The default of a lookup whose key names a credential.
        (
            "password = os.environ.get('DB_PASS', 'hV8pQ2zL9wXr4TgB7nYcK3')",
            "hV8pQ2zL9wXr4TgB7nYcK3",
        ),
        ('token = os.getenv("API_TOKEN", "hV8pQ2zL9wXr4TgB7nYcK3")', "hV8pQ2zL9wXr4TgB7nYcK3"),
        ('secret = settings.get("client_secret", "Xk9q2LmWp4RtZ8vB")', "Xk9q2LmWp4RtZ8vB"),
        ("db = os.getenv('DB_PASSWORD', 'Xk9q2LmWp4RtZ8vB')", "Xk9q2LmWp4RtZ8vB"),
        ("const pw = process.env.DB_PASSWORD || 'Xk9q2LmWp4RtZ8vB';", "Xk9q2LmWp4RtZ8vB"),
        ("const k = import.meta.env.VITE_API_KEY ?? 'Xk9q2LmWp4RtZ8vB';", "Xk9q2LmWp4RtZ8vB"),
        ("const k = process.env['API_TOKEN'] || 'Xk9q2LmWp4RtZ8vB';", "Xk9q2LmWp4RtZ8vB"),
        ("pw = ENV.fetch('DB_PASSWORD', 'Xk9q2LmWp4RtZ8vB')", "Xk9q2LmWp4RtZ8vB"),
        ("pw = ENV['DB_PASSWORD'] || 'Xk9q2LmWp4RtZ8vB'", "Xk9q2LmWp4RtZ8vB"),
        ('String pw = System.getProperty("db.password", "Xk9q2LmWp4RtZ8vB");', "Xk9q2LmWp4RtZ8vB"),
        (
            'String t = System.getenv().getOrDefault("API_TOKEN", "Xk9q2LmWp4RtZ8vB");',
            "Xk9q2LmWp4RtZ8vB",
        ),
    ],
)
def test_a_generated_fallback_is_redacted_alone(line: str, secret: str) -> None:
    """The literal becomes the marker, raw and in a transcript's JSON; the code before it
    (the lookup, the operator, the name) stays exactly as it was."""
    redacted_everywhere(line + "\n", secret, RULE, exact=True)


@pytest.mark.parametrize(
    ("line", "secret"),
    [
        # Python's conditional expression: the literal in its else branch, after an operand
        # and a condition (names, calls, `not`, `is None`, `in`, `==`, `and`, `or`).
        (
            'password = os.environ["DB_PASSWORD"] if prod else "s3cr3t-Pr0d-2024!xyz"',
            "s3cr3t-Pr0d-2024!xyz",
        ),
        ("api_key = key if key else 'Qm7vT2xK9pLw4RzN8cYb3HdF'", "Qm7vT2xK9pLw4RzN8cYb3HdF"),
        (
            "token = os.getenv('TOKEN') if os.getenv('CI') is None else 'os70Qxvfl3ALVq4GpJyAX47V'",
            "os70Qxvfl3ALVq4GpJyAX47V",
        ),
        (
            "db_pass = os.environ['DB_PASS'] if 'DB_PASS' in os.environ else 'hBLC8XwZvpRBQ2Jh3AYl'",
            "hBLC8XwZvpRBQ2Jh3AYl",
        ),
        ("password = cfg.password if cfg and cfg.password else 'Winter2024!'", "Winter2024!"),
        (
            'api_token = settings.API_TOKEN if settings.API_TOKEN is not None else "Rk7mZq2XwL9p"',
            "Rk7mZq2XwL9p",
        ),
        (
            '    "password": os.environ["PG_PASS"] if env == "prod" else "Tr0ub4dor&3x",',
            "Tr0ub4dor&3x",
        ),
        (
            'password = (os.environ["DB_PASSWORD"] if prod else "mV4pQ9zL2wXr8TgB")',
            "mV4pQ9zL2wXr8TgB",
        ),
        (
            'SECRET_KEY = os.environ.get("SECRET_KEY") if not DEBUG else "k8#Qz2!vLp7@Xm4$Wn9rT5yB"',
            "k8#Qz2!vLp7@Xm4$Wn9rT5yB",
        ),
        # The lookup's key names the credential, whatever the name assigned.
        (
            'db = os.environ["DB_PASSWORD"] if prod else "s3cr3t-Pr0d-2024!xyz"',
            "s3cr3t-Pr0d-2024!xyz",
        ),
        # A JavaScript conditional whose condition joins tests (`&&`, `||`), is parenthesised
        # or starts with `typeof`, or whose branch calls within calls.
        (
            "const token = isProd && !ci ? vault.read(path) : 'SlkjcVs8IMAJ03qGSyxb';",
            "SlkjcVs8IMAJ03qGSyxb",
        ),
        (
            "const token = (env === 'prod') ? await fetchSecret() : 'SlkjcVs8IMAJ03qGSyxb';",
            "SlkjcVs8IMAJ03qGSyxb",
        ),
        (
            "const token = process.env.NODE_ENV === 'production' ? getToken(load(cfg)) : "
            "'SlkjcVs8IMAJ03qGSyxbhYZg';",
            "SlkjcVs8IMAJ03qGSyxbhYZg",
        ),
        (
            'apiKey: isProd ? secrets.get(env("API_KEY")) : "Rk7mZq2XwL9pTv4NcB8yJh3s",',
            "Rk7mZq2XwL9pTv4NcB8yJh3s",
        ),
        (
            "const secret = typeof s === 'string' ? s : 'Qm7vT2xK9pLw4RzN8cYb3HdF';",
            "Qm7vT2xK9pLw4RzN8cYb3HdF",
        ),
        # Operands with calls nested two and three deep before the fallback.
        (
            'password = str(os.getenv("DB_PASSWORD")) or "4K6NC41ZElcN19fWuoZgFz"',
            "4K6NC41ZElcN19fWuoZgFz",
        ),
        ("token = f(g(x)) || '30kFtevEO9ysQYaoYO7mzY'", "30kFtevEO9ysQYaoYO7mzY"),
        ('secret = cfg.get(env("X")) ?? "xImyXgHaTysVIu4Xva5Rfh"', "xImyXgHaTysVIu4Xva5Rfh"),
        (
            'password = decrypt(read_file(os.environ["PW_FILE"])) or "Winter2024!"',
            "Winter2024!",
        ),
        (
            'token = os.environ.get("TOKEN", cfg.get("token")) or "hV8pQ2zL9wXr4TgB7nYcK3"',
            "hV8pQ2zL9wXr4TgB7nYcK3",
        ),
        (
            "const password = decrypt(read(process.env.PW_FILE)) || 'TKvumOtfzW6MHrwxXFB4';",
            "TKvumOtfzW6MHrwxXFB4",
        ),
        # The Elvis operator (Kotlin, Groovy, PHP).
        (
            'val password = System.getenv("DB_PASSWORD") ?: "Qm7vT2xK9pLw4RzN8cYb3HdF"',
            "Qm7vT2xK9pLw4RzN8cYb3HdF",
        ),
        ("def token = props.token ?: 'Qm7vT2xK9pLw4RzN8cYb3HdF'", "Qm7vT2xK9pLw4RzN8cYb3HdF"),
    ],
)
def test_a_conditional_or_nested_fallback_is_redacted_alone(line: str, secret: str) -> None:
    """The literal a conditional's else branch or a fallback after nested calls holds becomes
    the marker, raw and in a transcript's JSON; the code before it stays exactly as it was."""
    redacted_everywhere(line + "\n", secret, RULE, exact=True)


@pytest.mark.parametrize(
    "line",
    [
        'password = os.environ["DB_PASSWORD"] if prod else "changeme"',
        'password = os.environ["DB_PASSWORD"] if prod else ""',
        'password = os.environ["DB_PASSWORD"] if prod else "development"',
        'password = os.environ["DB_PASSWORD"] if prod else "<password>"',
        'token = os.environ["TOKEN"] if prod else "your-token-here"',
        "token_type = t if t else 'Bearer'",
        "secret = vault.read(path) if vault else 'in #security'",
        'password = prompt("Password: ") if interactive else getpass()',
        "password = os.environ['DB_PASSWORD'] if prod else DEFAULT_PASSWORD",
        "password = str(os.getenv('DB_PASSWORD')) or 'localhost'",
        "token = f(g(x)) || DEFAULT_TOKEN",
        "token = f(g(h(x))) or 'your-token-here'",
        "const token = isProd && !ci ? process.env.TOKEN : 'not-a-secret'",
        "const token = typeof t === 'string' ? t : ''",
        'val token = config.token ?: "changeme"',
        "name = os.environ['SECRET_NAME'] if prod else 'prod-db-credentials'",
        "interface Options { token?: string; password?: Secret }",
    ],
)
def test_a_written_conditional_or_nested_fallback_stays(line: str) -> None:
    """A placeholder, a word, an empty literal, a name, a message or a call in a conditional's
    else branch or after nested calls is no secret, nor is an optional member's type."""
    for content, path, _ in framed(line + "\n"):
        assert redact_text(content, path=path, cache=ResultCache()).text == content, content


def test_a_settings_module_with_conditional_defaults() -> None:
    """A Django settings module an agent reads: each generated default goes, each lookup, name
    and word stays."""
    text = (
        "DATABASES = {\n"
        '    "default": {\n'
        '        "HOST": os.environ.get("DB_HOST") or "localhost",\n'
        '        "PASSWORD": os.environ["DB_PASSWORD"] if PROD else "s3cr3t-Pr0d-2024!xyz",\n'
        "    }\n"
        "}\n"
        'API_TOKEN = str(os.getenv("API_TOKEN")) or "hV8pQ2zL9wXr4TgB7nYcK3"\n'
        'ENVIRONMENT = "production" if PROD else "development"\n'
    )
    for content, path, unquote in framed(text, raw_path="settings.py"):
        shown = unquote(redact_text(content, path=path, cache=ResultCache()).text)
        assert "s3cr3t-Pr0d-2024!xyz" not in shown
        assert "hV8pQ2zL9wXr4TgB7nYcK3" not in shown
        assert 'if PROD else "[REDACTED:secret-assignment#' in shown
        assert 'str(os.getenv("API_TOKEN")) or "[REDACTED:secret-assignment#' in shown
        assert '"localhost"' in shown and '"development"' in shown


@pytest.mark.parametrize(
    "unit",
    [
        "password = a if not b is not not c and ",
        "password = a if 'x' in ",
        "password = f(g(h(i(j(",
        "password = f(" + "g(x) " * 20,
        "token = a && b === c || !d ? ",
        "token = (a) ? b.c(d(e)) ",
        "x = os.getenv('TOKEN') if a and b ",
        "val token = a ?: ",
        'password = os.environ[\\"DB_PASSWORD\\"] if prod else ',
    ],
)
def test_a_line_of_near_fallbacks_is_scanned_in_linear_time(unit: str) -> None:
    """100,000 characters of conditions, nested calls and operators that never reach a
    literal, raw and in a JSON string: each attempt reads a bounded stretch once."""
    hostile = (unit * (100_000 // len(unit) + 1))[:100_000]
    secret = "hV8pQ2zL9wXr4TgB7nYcK3"
    text = f"{hostile}\npassword = os.environ['DB_PASSWORD'] if prod else '{secret}'\n"
    for content, path in ((text, "notes.txt"), (json.dumps({"content": text}) + "\n", "e.jsonl")):
        with time_limit(30, repr(unit)):
            redacted = redact_text(content, path=path, cache=None).text
        assert secret not in redacted


@pytest.mark.parametrize(
    "line",
    [
        "PASSWORD=correcthorse",
        "DB_PASSWORD=correcthorsebatterystaple",
        "POSTGRES_PASSWORD=postgres",
        "SECRET_KEY=development",
    ],
)
def test_an_environment_value_of_lower_case_letters_alone_stays_unless_named(line: str) -> None:
    """The trade docs/gate.md describes: an environment line's value of lower-case letters
    alone reads as a word or words (`postgres`, `development`, `correcthorse`), which the
    gate's own rules leave everywhere, a published default as often as a passphrase; the
    repository's `env_names` take it whatever it is. A capital or a digit makes it a value of
    the name's."""
    name, value = line.split("=", 1)
    for content, path, _ in framed(line + "\n", raw_path=".env"):
        assert scan_text(content, path=path, cache=ResultCache()) == [], content
        named = GateConfig(env_names=frozenset({name}))
        shown = redact_text(content, config=named, path=path, cache=ResultCache()).text
        assert value not in shown and "[REDACTED:env-value#1]" in shown, content
    for other in (value.capitalize(), value + "7"):
        redacted_everywhere(f"{name}={other}\n", other, "env-assignment")


@pytest.mark.parametrize(
    "line",
    [
        "password = process.env.DB_PASSWORD || ''",
        "password = process.env.DB_PASSWORD || 'changeme'",
        "const host = process.env.HOST ?? 'localhost'",
        "const token = process.env.TOKEN ?? 'localhost'",
        "const secret = process.env.NODE_ENV || 'development'",
        "password = os.getenv('DB_PASSWORD', '')",
        'token = getenv("TOKEN", "your-token-here")',
        "password = input.password || 'password'",
        "password = process.env.PASSWORD || process.env.OTHER",
        "token = process.env.TOKEN || DEFAULT_TOKEN",
        "const token = opts.token ?? `${prefix}Xk9q2LmWp4RtZ8vB`",
        "token = os.getenv('TOKEN_URL', 'https://auth.example.com/token')",
        "name = os.getenv('SECRET_NAME', 'prod-db-credentials')",
        "kind = headers.get('token_type', 'Bearer')",
        "token = request.args.get('token', 'anonymous')",
        "const password = isProd ? process.env.PASSWORD : 'not-a-secret'",
        "return token || 'Bearer'",
        "const tokenizer = opts.tokenizer || 'whitespace'",
        "    password: process.env.DB_PASSWORD || 'localhost',",
        "x = os.environ.get('DETECT_SECRETS_SECURITY_TEAM', 'in #security')",
    ],
)
def test_a_written_fallback_stays(line: str) -> None:
    """An empty literal, a placeholder, a word, a URL, a name, a reference, a message or a
    template with a substitution is no secret, nor is a default under a metadata key's name;
    a pretty-printed object's member is no YAML plain scalar to take whole."""
    for content, path, _ in framed(line + "\n"):
        assert redact_text(content, path=path, cache=ResultCache()).text == content, content


def test_a_fallback_is_found_in_a_config_file() -> None:
    """A config module an agent reads: every generated default goes, each name and lookup
    stays."""
    text = (
        "module.exports = {\n"
        "  db: {\n"
        "    host: process.env.DB_HOST || 'localhost',\n"
        "    password: process.env.DB_PASSWORD || 'hV8pQ2zL9wXr4TgB7nYcK3',\n"
        "  },\n"
        "  jwtSecret: process.env.JWT_SECRET ?? 'a8f3e9c1b7d2f6a4e0c8b3d9f1a7e2c6',\n"
        "  env: process.env.NODE_ENV || 'development',\n"
        "};\n"
    )
    for content, path, unquote in framed(text, raw_path="config.js"):
        shown = unquote(redact_text(content, path=path, cache=ResultCache()).text)
        assert "hV8pQ2zL9wXr4TgB7nYcK3" not in shown
        assert "a8f3e9c1b7d2f6a4e0c8b3d9f1a7e2c6" not in shown
        assert "process.env.DB_PASSWORD || '[REDACTED:secret-assignment#" in shown
        assert "process.env.JWT_SECRET ?? '[REDACTED:secret-assignment#" in shown
        assert "'localhost'" in shown and "'development'" in shown
