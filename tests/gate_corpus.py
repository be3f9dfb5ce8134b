"""A generated corpus for the redaction gate: planted credentials in many contexts, and
look-alikes that are not secrets. Every value is built at run time from a public prefix and a
seeded random body: nothing here is, or was ever, a real credential.

Shared by the gate's tests and by bench/bench_gate.py.
"""

from __future__ import annotations

import base64
import json
import os
import random
import string
from collections.abc import Callable
from dataclasses import dataclass, field

from corpus_parts import ALNUM, B64, B64URL, HEX, UPPER_ALNUM, pick, shaped, uuid4

__all__ = ["ALNUM", "B64", "B64URL", "HEX", "UPPER_ALNUM", "pick", "uuid4"]

CONTEXTS = ("json", "shell", "env", "yaml", "python", "markdown", "diff")

FIXED_SEED = 20250101
SEED_VARIABLE = "STET_GATE_SEED"
if os.environ.get(SEED_VARIABLE) == "random":
    os.environ[SEED_VARIABLE] = str(random.SystemRandom().randrange(1, 2**31))
CHOSEN_SEED = int(os.environ[SEED_VARIABLE]) if os.environ.get(SEED_VARIABLE) else None
"""A seed named for this run (`STET_GATE_SEED=<seed>`): the corpus tests plant its values
too, to run a failure again; `STET_GATE_SEED=random` draws one, to plant values no run
planted before (the test header names it). A drawn seed is written to the environment, so
pytest-xdist's workers, started after tests/conftest.py imports this, draw the same values
and collect the same tests."""
RUN_SEEDS: tuple[int, ...] = (FIXED_SEED, 7, 965852704)
"""The seeds whose values the corpus tests plant: the same on every run, so a test fails
for a change in the gate, not for the values a run happened to draw (the chosen seed last)."""
if CHOSEN_SEED is not None and CHOSEN_SEED not in RUN_SEEDS:
    RUN_SEEDS += (CHOSEN_SEED,)


def seed_note(seed: int) -> str:
    """How to run a failure on `seed` again."""
    return f"seed {seed}: {SEED_VARIABLE}={seed} reproduces it"


@dataclass(frozen=True)
class Case:
    format: str
    context: str
    path: str
    text: str
    secrets: tuple[str, ...]
    """The sensitive parts: none of their 8-character fragments may survive redaction."""
    env_names: tuple[str, ...] = ()


@dataclass(frozen=True)
class Negative:
    kind: str
    context: str
    path: str
    text: str


@dataclass(frozen=True)
class Format:
    name: str
    variable: str
    service: str
    make: Callable[[random.Random], tuple[str, tuple[str, ...]]]
    """rng -> (the value as written, its sensitive parts)."""
    env_names: tuple[str, ...] = field(default=())


def _prefixed(
    prefix: str, alphabet: str, length: int
) -> Callable[[random.Random], tuple[str, tuple[str, ...]]]:
    def make(rng: random.Random) -> tuple[str, tuple[str, ...]]:
        body = pick(rng, alphabet, length)
        return prefix + body, (body,)

    return make


def _pem(kind: str, lines: int = 12) -> Callable[[random.Random], tuple[str, tuple[str, ...]]]:
    def make(rng: random.Random) -> tuple[str, tuple[str, ...]]:
        body = [pick(rng, B64, 64) for _ in range(lines)]
        head = f"-----BEGIN {kind}-----"
        tail = f"-----END {kind}-----"
        return "\n".join([head, *body, tail]), tuple(body)

    return make


def _pem_encrypted(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    """A legacy encrypted PEM key: `Proc-Type` and `DEK-Info` header lines, a blank line."""
    body = tuple(pick(rng, B64, 64) for _ in range(8))
    iv = pick(rng, HEX, 32).upper()
    lines = [
        "-----BEGIN RSA PRIVATE KEY-----",
        "Proc-Type: 4,ENCRYPTED",
        f"DEK-Info: AES-128-CBC,{iv}",
        "",
        *body,
        "-----END RSA PRIVATE KEY-----",
    ]
    return "\n".join(lines), body


def _pgp_armored(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    """An armored PGP secret key: armor headers, a blank line, the body, the checksum."""
    body = tuple(pick(rng, B64, 64) for _ in range(8))
    lines = [
        "-----BEGIN PGP PRIVATE KEY BLOCK-----",
        "Version: GnuPG v2",
        "Comment: exported for the build machine",
        "",
        *body,
        "=" + pick(rng, B64, 4),
        "-----END PGP PRIVATE KEY BLOCK-----",
    ]
    return "\n".join(lines), body


def _ssh2(label: str) -> Callable[[random.Random], tuple[str, tuple[str, ...]]]:
    """An SSH.com SSH2 private key (RFC 4716 framing): header lines, the comment continued on
    a second line with `\\`, the base64 body in lines of 70 (it starts `P2/56wAAA`, the
    format's magic number), the END line."""

    def make(rng: random.Random) -> tuple[str, tuple[str, ...]]:
        body = ("P2/56wAAA" + pick(rng, B64, 61), *(pick(rng, B64, 70) for _ in range(9)))
        body = (*body, pick(rng, B64, 30) + "==")
        user = pick(rng, string.ascii_lowercase, 6)
        lines = [
            f"---- BEGIN {label} ----",
            f"Subject: {user}",
            f'Comment: "2048-bit rsa, {user}@build-01, Mon Jan 06 2025 09:14:\\',
            '02 +0000"',
            *body,
            f"---- END {label} ----",
        ]
        return "\n".join(lines), body

    return make


def _basic(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    password = pick(rng, ALNUM, 18)
    encoded = base64.b64encode(f"deploy:{password}".encode()).decode()
    return f"Authorization: Basic {encoded}", (encoded,)


def _password_url(scheme: str, user: str) -> Callable[[random.Random], tuple[str, tuple[str, ...]]]:
    def make(rng: random.Random) -> tuple[str, tuple[str, ...]]:
        password = pick(rng, ALNUM, 20)
        return f"{scheme}://{user}:{password}@db.internal:5432/app", (password,)

    return make


def _gcp_service_account(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    key, key_parts = _pem("PRIVATE KEY", 8)(rng)
    key_id = pick(rng, HEX, 40)
    document = {
        "type": "service_account",
        "project_id": "demo-project",
        "private_key_id": key_id,
        "private_key": key + "\n",
        "client_email": "ci@demo-project.iam.gserviceaccount.com",
    }
    return json.dumps(document), (key_id, *key_parts)


def _jwt(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    def segment(data: dict[str, object]) -> str:
        return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")

    header = segment({"alg": "HS256", "typ": "JWT"})
    payload = segment({"sub": pick(rng, HEX, 12), "iat": rng.randrange(10**9, 2 * 10**9)})
    signature = pick(rng, B64URL, 43)
    return f"{header}.{payload}.{signature}", (payload[-16:], signature)


FORMATS: tuple[Format, ...] = (
    Format("aws-access-key-id", "AWS_ACCESS_KEY_ID", "AWS", _prefixed("AKIA", UPPER_ALNUM, 16)),
    Format("aws-sts-key-id", "AWS_ACCESS_KEY_ID", "AWS", _prefixed("ASIA", UPPER_ALNUM, 16)),
    Format("aws-secret-key", "AWS_SECRET_ACCESS_KEY", "AWS", shaped(("s", ALNUM + "/+", 40))),
    Format("github-classic", "GITHUB_TOKEN", "GitHub", _prefixed("ghp_", ALNUM, 36)),
    Format("github-oauth", "GH_OAUTH", "GitHub", _prefixed("gho_", ALNUM, 36)),
    Format("github-user-app", "GH_APP_USER", "GitHub", _prefixed("ghu_", ALNUM, 36)),
    Format("github-app", "GH_APP", "GitHub", _prefixed("ghs_", ALNUM, 36)),
    Format("github-refresh", "GH_REFRESH", "GitHub", _prefixed("ghr_", ALNUM, 76)),
    Format(
        "github-fine-grained",
        "GH_PAT",
        "GitHub",
        shaped("github_pat_", ("s", ALNUM, 22), "_", ("s", ALNUM, 59)),
    ),
    Format("gitlab-pat", "GITLAB_TOKEN", "GitLab", _prefixed("glpat-", ALNUM, 20)),
    Format("gitlab-deploy", "CI_DEPLOY", "GitLab", _prefixed("gldt-", ALNUM, 20)),
    Format(
        "slack-bot",
        "SLACK_BOT",
        "Slack",
        shaped(
            "xoxb-", ("d", string.digits, 11), "-", ("d", string.digits, 13), "-", ("s", ALNUM, 24)
        ),
    ),
    Format(
        "slack-user",
        "SLACK_USER",
        "Slack",
        shaped(
            "xoxp-", ("d", string.digits, 11), "-", ("d", string.digits, 12), "-", ("s", HEX, 32)
        ),
    ),
    Format(
        "slack-app",
        "SLACK_APP",
        "Slack",
        shaped(
            "xapp-1-A", ("s", UPPER_ALNUM, 10), "-", ("d", string.digits, 13), "-", ("s", HEX, 64)
        ),
    ),
    Format(
        "slack-webhook",
        "SLACK_HOOK",
        "Slack",
        shaped(
            "https://hooks.slack.com/services/T",
            ("s", UPPER_ALNUM, 10),
            "/B",
            ("s", UPPER_ALNUM, 10),
            "/",
            ("s", ALNUM, 24),
        ),
    ),
    Format("stripe-live", "STRIPE_KEY", "Stripe", _prefixed("sk_live_", ALNUM, 48)),
    Format("stripe-restricted", "STRIPE_RK", "Stripe", _prefixed("rk_live_", ALNUM, 48)),
    Format("stripe-webhook", "STRIPE_WH", "Stripe", _prefixed("whsec_", ALNUM, 32)),
    Format("openai-project", "OPENAI_KEY", "OpenAI", _prefixed("sk-proj-", B64URL, 120)),
    Format(
        "openai-legacy",
        "OPENAI_KEY",
        "OpenAI",
        shaped("sk-", ("s", ALNUM, 20), "T3BlbkFJ", ("s", ALNUM, 20)),
    ),
    Format(
        "anthropic",
        "ANTHROPIC_KEY",
        "Anthropic",
        shaped("sk-ant-api03-", ("s", B64URL, 93), "AA"),
    ),
    Format("google-api-key", "GOOGLE_KEY", "Google", _prefixed("AIza", B64URL, 35)),
    Format("gcp-service-account", "GCP_SA", "GCP", _gcp_service_account),
    Format(
        "azure-storage",
        "AZURE_CONN",
        "Azure",
        shaped(
            "DefaultEndpointsProtocol=https;AccountName=demo;AccountKey=",
            ("s", ALNUM + "+/", 86),
            "==;EndpointSuffix=core.windows.net",
        ),
    ),
    Format(
        "azure-client-secret",
        "AZURE_CLIENT",
        "Azure",
        shaped(("s", ALNUM, 3), "8Q~", ("s", ALNUM + "_~.-", 34)),
    ),
    Format("huggingface", "HF_TOKEN", "Hugging Face", _prefixed("hf_", string.ascii_letters, 34)),
    Format("npm", "NPM_TOKEN", "npm", _prefixed("npm_", ALNUM, 36)),
    Format("pypi", "PYPI_TOKEN", "PyPI", _prefixed("pypi-AgEIcHlwaS5vcmc", B64URL, 120)),
    Format("twilio", "TWILIO_KEY", "Twilio", _prefixed("SK", HEX, 32)),
    Format(
        "sendgrid",
        "SENDGRID",
        "SendGrid",
        shaped("SG.", ("s", B64URL, 22), ".", ("s", B64URL, 43)),
    ),
    Format("mailchimp", "MAILCHIMP", "Mailchimp", shaped(("s", HEX, 32), "-us14")),
    Format(
        "discord-bot",
        "DISCORD_BOT",
        "Discord",
        shaped("M", ("s", ALNUM, 25), ".", "G", ("s", ALNUM, 5), ".", ("s", B64URL, 38)),
    ),
    Format(
        "discord-webhook",
        "DISCORD_HOOK",
        "Discord",
        shaped(
            "https://discord.com/api/webhooks/", ("d", string.digits, 18), "/", ("s", B64URL, 68)
        ),
    ),
    Format(
        "telegram",
        "TELEGRAM_BOT",
        "Telegram",
        shaped(("d", string.digits, 10), ":AA", ("s", B64URL, 33)),
    ),
    Format("shopify", "SHOPIFY", "Shopify", _prefixed("shpat_", HEX, 32)),
    Format("digitalocean", "DO_TOKEN", "DigitalOcean", _prefixed("dop_v1_", HEX, 64)),
    Format("databricks", "DATABRICKS", "Databricks", _prefixed("dapi", HEX, 32)),
    Format("vault", "VAULT", "Vault", _prefixed("hvs.", B64URL, 90)),
    Format("doppler", "DOPPLER", "Doppler", _prefixed("dp.pt.", ALNUM, 43)),
    Format("pulumi", "PULUMI", "Pulumi", _prefixed("pul-", HEX, 40)),
    Format("sentry", "SENTRY_AUTH", "Sentry", _prefixed("sntrys_eyJpYXQiOjE", ALNUM, 90)),
    Format("heroku", "HEROKU_KEY", "Heroku", _prefixed("HRKU-AA", B64URL, 58)),
    Format("linear", "LINEAR", "Linear", _prefixed("lin_api_", ALNUM, 40)),
    Format("postman", "POSTMAN", "Postman", shaped("PMAK-", ("s", HEX, 24), "-", ("s", HEX, 34))),
    Format("grafana-cloud", "GRAFANA", "Grafana", _prefixed("glc_", ALNUM, 80)),
    Format(
        "grafana-sa",
        "GRAFANA_SA",
        "Grafana",
        shaped("glsa_", ("s", ALNUM, 32), "_", ("s", HEX, 8)),
    ),
    Format("newrelic", "NEW_RELIC", "New Relic", _prefixed("NRAK-", UPPER_ALNUM, 27)),
    Format(
        "dynatrace",
        "DYNATRACE",
        "Dynatrace",
        shaped("dt0c01.", ("s", UPPER_ALNUM, 24), ".", ("s", UPPER_ALNUM, 64)),
    ),
    Format("jwt", "SESSION_JWT", "auth", _jwt),
    Format("rsa-key", "DEPLOY_KEY", "SSH", _pem("RSA PRIVATE KEY")),
    Format("openssh-key", "SSH_KEY", "SSH", _pem("OPENSSH PRIVATE KEY")),
    Format("ec-key", "EC_KEY", "TLS", _pem("EC PRIVATE KEY", 4)),
    Format("pkcs8-key", "TLS_KEY", "TLS", _pem("PRIVATE KEY")),
    Format("encrypted-key", "ENC_KEY", "TLS", _pem("ENCRYPTED PRIVATE KEY")),
    Format("pgp-key", "PGP_KEY", "PGP", _pem("PGP PRIVATE KEY BLOCK")),
    Format("postgres-url", "DATABASE_URL", "Postgres", _password_url("postgres", "app")),
    Format("redis-url", "REDIS_URL", "Redis", _password_url("redis", "")),
    Format(
        "adonet",
        "SQL_CONN",
        "SQL Server",
        shaped("Server=tcp:db.internal;Database=app;User ID=app;Password=", ("s", ALNUM, 20), ";"),
    ),
    Format(
        "jdbc",
        "JDBC_URL",
        "MySQL",
        shaped("jdbc:mysql://db:3306/app?user=app&password=", ("s", ALNUM, 20), "&ssl=true"),
    ),
    Format("basic-auth", "AUTH_HEADER", "HTTP", _basic),
    Format("bearer", "AUTH_HEADER", "HTTP", shaped("Authorization: Bearer ", ("s", B64URL, 40))),
    Format("client-secret", "CLIENT_SECRET", "OAuth", shaped(("s", ALNUM, 32))),
    Format("db-password", "DB_PASSWORD", "database", shaped(("s", ALNUM + "!#%", 18))),
    Format("age-key", "AGE_KEY", "age", _prefixed("AGE-SECRET-KEY-1", UPPER_ALNUM, 58)),
    Format("atlassian", "JIRA_TOKEN", "Atlassian", _prefixed("ATATT3xFfGF0", B64URL, 180)),
    Format("groq", "GROQ_KEY", "Groq", _prefixed("gsk_", ALNUM, 52)),
    Format("mailgun", "MAILGUN", "Mailgun", _prefixed("key-", HEX, 32)),
    Format(
        "configured-env",
        "ACME_PASS",
        "Acme",
        shaped(("s", string.ascii_lowercase, 10)),
        env_names=("ACME_PASS",),
    ),
)


def _indent(text: str, prefix: str) -> str:
    return "\n".join(prefix + line for line in text.splitlines())


def render(context: str, fmt: Format, value: str, rng: random.Random) -> tuple[str, str]:
    """(path, text) of `value` written the way `context` writes it."""
    name = fmt.variable
    multiline = "\n" in value
    if context == "json":
        tool_output = f"$ cat .env\n{name}={value}\nDEBUG=false\n"
        event = {
            "type": "user",
            "uuid": uuid4(rng),
            "message": {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_01" + pick(rng, ALNUM, 22),
                        "content": tool_output,
                    }
                ],
            },
        }
        other = {"type": "assistant", "message": {"content": [{"type": "text", "text": "Done."}]}}
        return "events.jsonl", json.dumps(event) + "\n" + json.dumps(other) + "\n"
    if context == "shell":
        if multiline:
            return "session.sh", f"cat > key.pem <<'EOF'\n{value}\nEOF\nchmod 600 key.pem\n"
        return "session.sh", f"$ export {name}='{value}' && ./deploy.sh --env prod\n"
    if context == "env":
        quoted = f'"{value}"' if multiline or " " in value else value
        return ".env", f"# {fmt.service}\nDEBUG=false\n{name}={quoted}\nPORT=8080\n"
    if context == "yaml":
        if multiline:
            return (
                "config.yaml",
                f"{fmt.service.lower()}:\n  {name.lower()}: |\n{_indent(value, '    ')}\n",
            )
        return "config.yaml", f'{fmt.service.lower()}:\n  {name.lower()}: "{value}"\n  retries: 3\n'
    if context == "python":
        if multiline:
            return "settings.py", f'{name} = """{value}"""\n'
        return "settings.py", f'import os\n\n{name} = "{value}"\nTIMEOUT = 30\n'
    if context == "markdown":
        if multiline:
            return "notes.md", f"The {fmt.service} credential:\n\n```\n{value}\n```\n"
        return "notes.md", f"Use the {fmt.service} credential `{value}` for staging.\n"
    if context == "diff":
        added = "\n".join(f"+{line}" for line in f"{name}={value}".splitlines())
        return "change.diff", (
            "diff --git a/.env b/.env\n--- a/.env\n+++ b/.env\n@@ -1,2 +1,3 @@\n"
            f" DEBUG=false\n{added}\n PORT=8080\n"
        )
    raise ValueError(context)


def positive_cases(seed: int = FIXED_SEED) -> list[Case]:
    rng = random.Random(seed)
    cases = []
    for fmt in FORMATS:
        for context in CONTEXTS:
            value, secrets = fmt.make(rng)
            path, text = render(context, fmt, value, rng)
            cases.append(Case(fmt.name, context, path, text, secrets, fmt.env_names))
    return cases


def _negative_values(rng: random.Random) -> list[tuple[str, str]]:
    sha = pick(rng, HEX, 40)
    uuid = uuid4(rng)
    image = base64.b64encode(bytes(rng.randrange(256) for _ in range(300))).decode()
    integrity = base64.b64encode(bytes(rng.randrange(256) for _ in range(64))).decode()
    public_key = "\n".join(pick(rng, B64, 64) for _ in range(6))
    return [
        ("git-sha", f"commit {sha}"),
        ("git-sha-assignment", f"head_sha = {sha}"),
        ("uuid", f"request_id: {uuid}"),
        ("session-uuid", f"sessionId={uuid}"),
        ("image", f"data:image/png;base64,{image}"),
        ("lock-integrity", f"integrity sha512-{integrity}"),
        ("lock-hash", f"hash = sha256:{pick(rng, HEX, 64)}"),
        ("docker-digest", f"image: python@sha256:{pick(rng, HEX, 64)}"),
        ("aws-example", "aws_access_key_id = AKIA" + "IOSFODNN7EXAMPLE"),
        (
            "aws-example-secret",
            "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "EXAMPLEKEY",
        ),
        ("placeholder-angle", "GITHUB_TOKEN=<your-token>"),
        ("placeholder-x", "api_key: xxxxxxxxxxxxxxxxxxxxxxxx"),
        ("placeholder-stars", "password: ************"),
        ("env-reference", "token: ${GITHUB_TOKEN}"),
        ("env-dollar", "API_KEY=$API_KEY"),
        ("env-lookup", 'password = os.environ["DB_PASSWORD"]'),
        ("template", "secret: {{ vault.secret }}"),
        ("ssh-public-key", f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{pick(rng, B64, 43)} dev@laptop"),
        ("public-key-block", f"-----BEGIN PUBLIC KEY-----\n{public_key}\n-----END PUBLIC KEY-----"),
        (
            "ssh2-public-key-block",
            "---- BEGIN SSH2 PUBLIC KEY ----\n"
            'Comment: "2048-bit rsa, dev@laptop, converted from OpenSSH"\n'
            f"{public_key}\n---- END SSH2 PUBLIC KEY ----",
        ),
        ("certificate", f"-----BEGIN CERTIFICATE-----\n{public_key}\n-----END CERTIFICATE-----"),
        ("tool-use-id", f'"tool_use_id": "toolu_01{pick(rng, ALNUM, 22)}"'),
        ("call-id", f'"call_id": "call_{pick(rng, ALNUM, 24)}"'),
        ("message-id", f'"id": "msg_01{pick(rng, ALNUM, 22)}"'),
        ("max-tokens", "max_tokens: 4096"),
        ("usage", '"usage": {"input_tokens": 1200, "output_tokens": 345}'),
        ("token-type", "token_type: bearer"),
        ("prose-password", "Reset your password from the account settings page."),
        ("prose-basic", "Basic usage is covered in the README, Bearer authentication too."),
        ("code-getter", "def get_token(self) -> str: return self._token"),
        ("key-id", f"api_key_id = {pick(rng, ALNUM, 24)}"),
        ("url-no-password", "postgres://app@localhost:5432/app and redis://localhost:6379/0"),
        ("url-placeholder", "postgres://user:password@localhost:5432/db"),
        ("version", "version = 1.24.3-rc.1+build.5"),
        ("semver-deps", "pydantic>=2.7,<3 pygit2>=1.15,<2"),
        ("path", "/usr/local/lib/python3.11/site-packages/detect_secrets/core/scan.py"),
        ("hex-color", "color: #1e90ff; background: #fafafa"),
        ("css-hash", f"app.{pick(rng, HEX, 20)}.js"),
        ("secret-name", "secret_name: prod-database-credentials"),
        ("password-field", "password_field = forms.CharField(widget=forms.PasswordInput)"),
        ("public-stripe", f"pk_live_{pick(rng, ALNUM, 24)}"),
        ("redacted", "token: [REDACTED:github-token#1]"),
        *PEM_CODE_NEGATIVES,
        *PLACEHOLDER_NEGATIVES,
    ]


# Code and documentation that handle PEM keys: a header and a footer with no key material
# between them (code, a regular expression, prose) is not a key.
PEM_CODE_NEGATIVES = [
    (
        "pem-constants",
        'HEADER = "-----BEGIN PRIVATE KEY-----"\n\n\n'
        "def wrap(body: str) -> str:\n"
        '    return HEADER + "\\n" + body + "\\n" + FOOTER\n\n\n'
        'FOOTER = "-----END PRIVATE KEY-----"',
    ),
    (
        "pem-constants-adjacent",
        'BEGIN = "-----BEGIN RSA PRIVATE KEY-----"\nEND = "-----END RSA PRIVATE KEY-----"',
    ),
    (
        "pem-constants-rust",
        'const BEGIN: &str = "-----BEGIN PGP PRIVATE KEY BLOCK-----";\n'
        "// the armored body follows the header line\n"
        'const END: &str = "-----END PGP PRIVATE KEY BLOCK-----";',
    ),
    (
        "pem-line-checks",
        "if (line.startsWith('-----BEGIN EC PRIVATE KEY-----')) {\n  inKey = true;\n"
        "} else if (line.startsWith('-----END EC PRIVATE KEY-----')) {\n  inKey = false;\n}",
    ),
    (
        "pem-regex",
        'PEM = re.compile(r"-----BEGIN OPENSSH PRIVATE KEY-----\\n([A-Za-z0-9+/=\\n]+)'
        '-----END OPENSSH PRIVATE KEY-----")',
    ),
    (
        "pem-regex-labels",
        'KEY = re.compile(r"-----BEGIN (?P<label>[A-Z ]+)-----\\s+(?P<body>[A-Za-z0-9+/=\\s]+)'
        '\\s+-----END (?P=label)-----")',
    ),
    (
        "pem-doc",
        "A PKCS#8 key starts with `-----BEGIN PRIVATE KEY-----` and ends with "
        "`-----END PRIVATE KEY-----`; the lines between are the base64 of its DER encoding.",
    ),
    (
        "pem-doc-elided",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA...\n-----END RSA PRIVATE KEY-----",
    ),
    (
        "pem-doc-template",
        "-----BEGIN ENCRYPTED PRIVATE KEY-----\n<your key here>\n-----END ENCRYPTED PRIVATE KEY-----",
    ),
    ("pem-header-mention", "The file starts with -----BEGIN OPENSSH PRIVATE KEY----- as usual."),
    (
        "ssh2-constants",
        'SSH2_BEGIN = "---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----"\n'
        'SSH2_END = "---- END SSH2 ENCRYPTED PRIVATE KEY ----"',
    ),
    (
        "ssh2-doc",
        "An SSH.com key starts with `---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----`, then header "
        "lines such as `Comment: ...`, and ends with `---- END SSH2 ENCRYPTED PRIVATE KEY ----`.",
    ),
    (
        "ssh2-doc-elided",
        '---- BEGIN SSH2 PRIVATE KEY ----\nComment: "rsa-key"\nP2/56wAAA...\n'
        "---- END SSH2 PRIVATE KEY ----",
    ),
    ("pem-footer-mention", "and it must end with -----END RSA PRIVATE KEY----- on its own line"),
]

# Values that stand for a credential in documentation and examples.
PLACEHOLDER_NEGATIVES = [
    ("placeholder-sk-dots", 'api_key = "sk-..."'),
    ("placeholder-sk-ant-dots", 'api_key = "sk-ant-..."'),
    ("placeholder-anthropic-dots", "ANTHROPIC_API_KEY=sk-ant-api03-..."),
    ("placeholder-openai-project-dots", 'export OPENAI_API_KEY="sk-proj-..."'),
    ("placeholder-sk-ellipsis", 'api_key = "sk-…"'),
    ("placeholder-sk-ant-ellipsis", "api_key = 'sk-ant-…'"),
    ("placeholder-masked", 'OPENAI_API_KEY="sk-...AbCd"'),
    ("placeholder-replace-me", 'SECRET_KEY = "REPLACE_ME"'),
    ("placeholder-replace-me-dashed", "DJANGO_SECRET_KEY=replace-me"),
    ("placeholder-replace-with", 'password: "REPLACE_WITH_YOUR_PASSWORD"'),
    ("placeholder-changeme", 'DB_PASSWORD="changeme"'),
    ("placeholder-change-me", "JWT_SECRET=change-me"),
    ("placeholder-changeit", "keystore_password: changeit"),
    ("placeholder-fill-me", "client_secret: FILL_ME_IN"),
]


# Every kind of private key, with the END line of its own label.
KEY_LABELS = (
    "RSA PRIVATE KEY",
    "EC PRIVATE KEY",
    "DSA PRIVATE KEY",
    "OPENSSH PRIVATE KEY",
    "ENCRYPTED PRIVATE KEY",
    "PGP PRIVATE KEY BLOCK",
    "PRIVATE KEY",
)
KEY_MAKERS: dict[str, Callable[[random.Random], tuple[str, tuple[str, ...]]]] = {
    **{label: _pem(label) for label in KEY_LABELS},
    "RSA PRIVATE KEY (Proc-Type)": _pem_encrypted,
    "PGP PRIVATE KEY BLOCK (armored)": _pgp_armored,
    "SSH2 ENCRYPTED PRIVATE KEY": _ssh2("SSH2 ENCRYPTED PRIVATE KEY"),
    "SSH2 PRIVATE KEY": _ssh2("SSH2 PRIVATE KEY"),
}


def _concatenated(block: str) -> str:
    """Code that builds the key from one string literal a line."""
    escaped = block.replace("\\", "\\\\").replace('"', '\\"')
    lines = "".join(f'    "{line}\\n"\n' for line in escaped.split("\n"))
    return f"KEY = (\n{lines})\n"


def _numbered(text: str) -> str:
    """A file as a Read tool shows it: each line after its number and a tab."""
    return "".join(f"{number:6}\t{line}\n" for number, line in enumerate(text.splitlines(), 1))


def key_block_cases(seed: int = 20250103) -> list[Case]:
    """Each kind of key block written whole, the way files and transcripts hold it."""
    rng = random.Random(seed)
    cases = []
    for kind, make in KEY_MAKERS.items():
        block, secrets = make(rng)
        tool = {"type": "tool_result", "tool_use_id": "toolu_01" + pick(rng, ALNUM, 22)}
        written = {
            "plain": ("key.pem", f"{block}\n"),
            "json-string": ("key.json", json.dumps({"name": "deploy", "key": block + "\n"})),
            "jsonl-record": (
                "events.jsonl",
                json.dumps({"type": "user", "message": {"content": [{**tool, "content": block}]}})
                + "\n",
            ),
            "json-lines-array": (
                "events.jsonl",
                json.dumps({"type": "tool", "lines": block.split("\n"), "n": 1}) + "\n",
            ),
            "python-concatenated": ("keys.py", _concatenated(block)),
            "jsonl-concatenated": (
                "events.jsonl",
                json.dumps({"type": "tool", "content": _concatenated(block)}) + "\n",
            ),
            "jsonl-read-concatenated": (
                "events.jsonl",
                json.dumps({"type": "tool", "output": _numbered(_concatenated(block))}) + "\n",
            ),
        }
        for context, (path, text) in written.items():
            cases.append(Case(kind, context, path, text, secrets))
    return cases


def negative_cases(seed: int = 20250102) -> list[Negative]:
    rng = random.Random(seed)
    negatives = []
    for kind, value in [
        *_negative_values(rng),
        *generic_negative_values(rng),
        *provider_negatives(rng),
    ]:
        negatives.append(Negative(kind, "text", "notes.md", f"Note: {value}\n"))
        event = {"type": "assistant", "message": {"content": [{"type": "text", "text": value}]}}
        negatives.append(Negative(kind, "json", "events.jsonl", json.dumps(event) + "\n"))
        negatives.append(
            Negative(
                kind, "yaml", "config.yaml", f"settings:\n  note: |\n{_indent(value, '    ')}\n"
            )
        )
    return negatives


def surviving_fragments(
    redacted: str, secrets: tuple[str, ...], size: int = 8, planted_in: str | None = None
) -> list[str]:
    """Fragments of the planted secrets that are still in the redacted text. With
    `planted_in` (the text before redaction), a fragment is counted only where the redacted
    text holds it more often than the text around the secrets did: a record's own UUID may
    share eight characters with a UUID-shaped key (`-465b-a0`: only four of them are random)."""
    around = ""
    if planted_in is not None:
        around = planted_in
        for secret in secrets:
            around = around.replace(secret, "\0")
    left = []
    for secret in secrets:
        for start in range(0, max(1, len(secret) - size + 1)):
            fragment = secret[start : start + size]
            if len(fragment) == size and redacted.count(fragment) > around.count(fragment):
                left.append(fragment)
                break
    return left


_WORDS = [
    "the",
    "of",
    "and",
    "to",
    "in",
    "is",
    "for",
    "on",
    "that",
    "with",
    "this",
    "file",
    "function",
    "return",
    "value",
    "error",
    "import",
    "def",
    "class",
    "self",
    "test",
    "data",
    "path",
    "line",
    "run",
    "tool",
    "result",
    "output",
    "input",
    "model",
    "content",
    "text",
    "message",
    "config",
    "parser",
    "request",
    "response",
    "client",
    "server",
    "cache",
    "index",
    "token_count",
    "user_id",
    "retry",
]


def filler_event(rng: random.Random) -> str:
    """One transcript-like JSONL line without secrets (but with ids, hashes and code)."""
    kind = rng.random()
    if kind < 0.45:
        lines = []
        for _ in range(rng.randint(5, 40)):
            name = "_".join(rng.choice(_WORDS) for _ in range(rng.randint(1, 3)))
            lines.append(
                f"    {name} = {rng.choice(_WORDS)}.{rng.choice(_WORDS)}({rng.randint(0, 999)}, "
                f"'{rng.choice(_WORDS)}')  # {rng.choice(_WORDS)} {rng.choice(_WORDS)}"
            )
        event = {
            "type": "user",
            "uuid": uuid4(rng),
            "message": {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_01" + pick(rng, ALNUM, 22),
                        "content": "\n".join(lines),
                    }
                ],
            },
            "cwd": "/work/project",
            "gitBranch": "main",
        }
    else:
        text = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(20, 250)))
        event = {
            "type": "assistant",
            "message": {
                "id": "msg_01" + pick(rng, ALNUM, 22),
                "content": [{"type": "text", "text": text}],
                "usage": {
                    "input_tokens": rng.randint(1, 9999),
                    "output_tokens": rng.randint(1, 999),
                },
            },
            "commit": pick(rng, HEX, 40),
        }
    return json.dumps(event)


def transcript(
    size: int, seed: int = 7, plant_every: int = 200
) -> tuple[str, list[tuple[str, ...]]]:
    """A JSONL transcript of about `size` characters with secrets planted in tool output."""
    rng = random.Random(seed)
    planted: list[tuple[str, ...]] = []
    lines: list[str] = []
    total = 0
    count = 0
    while total < size:
        if count % plant_every == plant_every - 1:
            fmt = FORMATS[len(planted) % len(FORMATS)]
            if fmt.env_names:
                fmt = FORMATS[0]
            value, secrets = fmt.make(rng)
            _, text = render("json", fmt, value, rng)
            line = text.splitlines()[0]
            planted.append(secrets)
        else:
            line = filler_event(rng)
        lines.append(line)
        total += len(line) + 1
        count += 1
    return "\n".join(lines) + "\n", planted


from gate_corpus_generic import GENERIC_FORMATS, generic_negative_values  # noqa: E402

FORMATS = (*FORMATS, *GENERIC_FORMATS)

from gate_corpus_providers import PROVIDER_FORMATS, provider_negatives  # noqa: E402

FORMATS = (*FORMATS, *(Format(*spec) for spec in PROVIDER_FORMATS))

# Last, so that a seed plants the same values as before in every format above.
FORMATS = (
    *FORMATS,
    Format("ssh2-key", "SSH2_KEY", "SSH", _ssh2("SSH2 ENCRYPTED PRIVATE KEY")),
    Format("ssh2-plain-key", "SSH2_KEY", "SSH", _ssh2("SSH2 PRIVATE KEY")),
)
