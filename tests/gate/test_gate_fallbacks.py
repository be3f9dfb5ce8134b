"""A credential's fallback or default in code: the literal code falls back on when a lookup
finds nothing (`password = process.env.DB_PASSWORD || '…'`, `os.getenv("API_TOKEN", "…")`)
is the credential's value, judged as a literal right after the name is. Only the literal
goes, never the code before it; placeholders, words and names stay. Each is checked raw and
as a transcript carries it (a tool result's JSON string, a tool's JSON output quoted
again)."""

from __future__ import annotations

import pytest
from test_gate_providers import framed, redacted_everywhere

from stet_lsp.gate import ResultCache, redact_text

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
