"""Generic classes for the gate's corpus: values that no prefix names (framework secret keys,
hex and base64 values under credential names, passwords with any character), the extra forms
they are written in, and the look-alikes that must stay. Values are generated per run from a
seed; nothing here is, or was ever, a real credential.

Registered in gate_corpus.py (imported at its end, so import gate_corpus first).
"""

from __future__ import annotations

import base64
import json
import random
import string
from collections.abc import Callable

from gate_corpus import ALNUM, B64URL, HEX, Case, Format, pick, uuid4

Make = Callable[[random.Random], tuple[str, tuple[str, ...]]]
# Characters secret keys contain; each is tried at the start, middle and end of a value.
SPECIALS = ")#%@&*!^$~+=/"
DJANGO_CHARS = string.ascii_lowercase + string.digits + "!@#$%^&*(-_=+)"


def _run(alphabet: str, length: int, prefix: str = "") -> Make:
    def make(rng: random.Random) -> tuple[str, tuple[str, ...]]:
        body = pick(rng, alphabet, length)
        return prefix + body, (body,)

    return make


def _b64(count: int, prefix: str = "", urlsafe: bool = False) -> Make:
    def make(rng: random.Random) -> tuple[str, tuple[str, ...]]:
        raw = bytes(rng.randrange(256) for _ in range(count))
        body = (base64.urlsafe_b64encode if urlsafe else base64.b64encode)(raw).decode()
        return prefix + body, (body,)

    return make


def _django(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    body = pick(rng, DJANGO_CHARS, 50)
    return body, (body,)


def password_body(rng: random.Random, length: int = 16) -> str:
    """A random password body: starts with a digit, so `$`+body is no variable reference."""
    return rng.choice(string.digits) + pick(rng, ALNUM, length - 1)


def _password(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    chars = list(password_body(rng, 18))
    for special in rng.sample(SPECIALS, 4):
        chars.insert(rng.randrange(1, len(chars)), special)
    value = "".join(chars)
    return value, (value,)


GENERIC_FORMATS: tuple[Format, ...] = (
    Format("django-secret-key", "SECRET_KEY", "Django", _django),
    Format("rails-secret-key-base", "SECRET_KEY_BASE", "Rails", _run(HEX, 128)),
    Format("laravel-app-key", "APP_KEY", "Laravel", _b64(32, "base64:")),
    Format("flask-secret-key", "FLASK_SECRET_KEY", "Flask", _run(HEX, 48)),
    Format("express-session-secret", "SESSION_SECRET", "Express", _b64(32, urlsafe=True)),
    Format("nextauth-secret", "NEXTAUTH_SECRET", "NextAuth", _b64(32)),
    Format("jwt-secret", "JWT_SECRET", "JWT", _run(HEX, 64)),
    Format("phoenix-secret-key-base", "SECRET_KEY_BASE", "Phoenix", _b64(48)),
    Format("symfony-app-secret", "APP_SECRET", "Symfony", _run(HEX, 32)),
    Format("aspnet-validation-key", "VALIDATION_KEY", "ASP.NET", _run("0123456789ABCDEF", 64)),
    Format("hex-auth", "UPSTREAM_AUTH", "proxy", _run(HEX, 40)),
    Format("base64-header", "PROXY_HEADER", "proxy", _b64(24)),
    Format("base64-credential", "SMTP_CREDENTIAL", "SMTP", _b64(30, urlsafe=True)),
    Format("hex-pass", "ADMIN_PASS", "admin", _run(HEX, 32)),
    Format("hex-signing", "WEBHOOK_SIGNING_KEY", "webhooks", _run(HEX, 64)),
    Format("base64-key", "ENCRYPTION_MASTER_KEY", "KMS", _b64(32)),
    Format("hex-token", "SERVICE_TOKEN", "service", _run(HEX, 40)),
    Format("special-password", "DB_PASSWORD", "database", _password),
)


# Extra forms: how else agents and projects write a credential under a name.
def _forms(name: str, value: str) -> list[tuple[str, str, str]]:
    lower = name.lower()
    command = f"export {name}={value} && ./deploy.sh"
    tool_use = {
        "type": "assistant",
        "message": {
            "content": [
                {
                    "type": "tool_use",
                    "id": "toolu_01" + "A" * 22,
                    "name": "Bash",
                    "input": {"command": command},
                }
            ]
        },
    }
    return [
        ("os-environ", "setup.py", f'import os\nos.environ["{name}"] = "{value}"\n'),
        ("setdefault", "setup.py", f'os.environ.setdefault("{name}", "{value}")\n'),
        ("dockerfile-env", "Dockerfile", f"FROM python:3.12\nENV {name} {value}\nRUN true\n"),
        ("dockerfile-env-eq", "Dockerfile", f'FROM python:3.12\nENV {name}="{value}"\n'),
        ("toml", "config.toml", f'[server]\n{lower} = "{value}"\nport = 8080\n'),
        ("json-key", "config.json", json.dumps({"server": {lower: value, "port": 8080}}) + "\n"),
        ("json-tool-input", "events.jsonl", json.dumps(tool_use) + "\n"),
        ("markdown-key", "notes.md", f"- **{name}**: `{value}`\n- port: 8080\n"),
        ("yaml-bare", "config.yaml", f"env:\n  {name}: {value}\n  PORT: 8080\n"),
    ]


def form_cases(seed: int = 20250201) -> list[Case]:
    rng = random.Random(seed)
    cases = []
    for fmt in GENERIC_FORMATS:
        for index in range(len(_forms("N", "v"))):
            value, secrets = fmt.make(rng)
            form, path, text = _forms(fmt.variable, value)[index]
            cases.append(Case(fmt.name, form, path, text, secrets))
    return cases


def framework_cases(seed: int = 20250202) -> list[Case]:
    """Framework settings as the frameworks write them."""
    rng = random.Random(seed)

    def hexv(n: int) -> str:
        return pick(rng, HEX, n)

    items = [
        ("django", "settings.py", "SECRET_KEY = '{v}'\n", _django(rng)[0]),
        ("flask", "app.py", "app.secret_key = '{v}'\n", hexv(48)),
        ("flask-config", "app.py", "app.config['SECRET_KEY'] = \"{v}\"\n", hexv(32)),
        ("rails", "secrets.yml", "production:\n  secret_key_base: {v}\n", hexv(128)),
        ("rails-ruby", "application.rb", 'config.secret_key_base = "{v}"\n', hexv(128)),
        ("phoenix", "config.exs", '  secret_key_base: "{v}",\n', _b64(48)(rng)[0]),
        ("laravel", ".env", "APP_NAME=Demo\nAPP_KEY={v}\n", _b64(32, "base64:")(rng)[0]),
        ("symfony", ".env", "APP_ENV=prod\nAPP_SECRET={v}\n", hexv(32)),
        ("express", "app.js", "app.use(session({{ secret: '{v}' }}))\n", pick(rng, B64URL, 32)),
        ("nextauth", ".env.local", "NEXTAUTH_SECRET={v}\n", _b64(32)(rng)[0]),
        ("jwt", "config.js", "const JWT_SECRET = `{v}`;\n", hexv(64)),
        (
            "machinekey",
            "web.config",
            '<machineKey validationKey="{v}" decryptionKey="{w}" validation="SHA1" />\n',
            hexv(64).upper(),
        ),
    ]
    cases = []
    for name, path, template, value in items:
        other = hexv(48).upper()
        text = template.format(v=value, w=other)
        secrets = (value, other) if "{w}" in template else (value,)
        cases.append(Case(f"framework-{name}", "framework", path, text, secrets))
    return cases


def prose_cases(seed: int = 20250203) -> list[Case]:
    """Random values quoted next to a credential word in prose (Markdown, chat text)."""
    rng = random.Random(seed)
    templates = [
        "The token is `{v}` until Friday.",
        "Set the API key `{v}` in the dashboard.",
        "The password was '{v}', I rotated it.",
        'The secret is "{v}".',
        "Use the credential `{v}` for staging.",
        "Its signing key is `{v}`.",
    ]
    cases = []
    for template in templates:
        value = password_body(rng, 20)
        text = template.format(v=value)
        event = {"type": "assistant", "message": {"content": [{"type": "text", "text": text}]}}
        cases.append(Case("prose", "markdown", "notes.md", text + "\n", (value,)))
        cases.append(Case("prose", "json", "events.jsonl", json.dumps(event) + "\n", (value,)))
    return cases


def special_cases(seed: int = 20250204) -> list[Case]:
    """Each special character at the start, middle and end of a password, in each context."""
    rng = random.Random(seed)
    cases = []
    for special in SPECIALS:
        for position in ("start", "middle", "end"):
            body = password_body(rng, 16)
            value = {
                "start": special + body,
                "middle": body[:8] + special + body[8:],
                "end": body + special,
            }[position]
            tool = {"type": "tool_result", "content": f"$ cat .env\nDB_PASSWORD={value}\nX=1\n"}
            texts = [
                ("env-quoted", ".env", f'DB_PASSWORD="{value}"\nPORT=1\n'),
                ("env", ".env", f"DB_PASSWORD={value}\nPORT=1\n"),
                ("shell", "run.sh", f"export DB_PASSWORD='{value}' && make\n"),
                ("yaml", "db.yaml", f'db:\n  password: "{value}"\n'),
                ("python", "settings.py", f'DB_PASSWORD = "{value}"\n'),
                ("json", "events.jsonl", json.dumps(tool) + "\n"),
                ("markdown", "notes.md", f"password: `{value}`\n"),
                ("mysql", "run.sh", f"mysql -u root -p'{value}' -h db\n"),
                ("docker-login", "run.sh", f"docker login -u ci -p '{value}' r.example.io\n"),
                ("curl-header", "run.sh", f'curl -H "Authorization: Bearer {value}" https://a\n'),
            ]
            for context, path, text in texts:
                label = f"special-{special}-{position}"
                cases.append(Case(label, context, path, text, (value,)))
    return cases


def generic_negative_values(rng: random.Random) -> list[tuple[str, str]]:
    """Look-alikes near credential names and words: they must stay untouched."""
    sha = pick(rng, HEX, 40)
    sha256 = pick(rng, HEX, 64)
    image = base64.b64encode(bytes(rng.randrange(256) for _ in range(120))).decode()
    integrity = base64.b64encode(bytes(rng.randrange(256) for _ in range(64))).decode()
    return [
        ("generic-git-sha", f"Merged {sha} into main; the key change is in scan.py."),
        ("generic-commit-key", f"commit_sha: {sha}"),
        ("generic-lock-sha", f'"checksum": "sha256:{sha256}"'),
        ("generic-lock-integrity", f'"integrity": "sha512-{integrity}"'),
        ("generic-token-hash", f"token_hash = {sha256}"),
        ("generic-uuid-token", f"session_token_id: {uuid4(rng)}"),
        ("generic-uuid-key", f"idempotency_key: {uuid4(rng)}"),
        ("generic-image-key", f'"thumbnail": "data:image/png;base64,{image}"'),
        ("generic-placeholder-angle", "SECRET_KEY=<your-secret-key>"),
        ("generic-placeholder-x", "APP_KEY=base64:xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx="),
        ("generic-placeholder-change", "JWT_SECRET=changeme-in-production"),
        ("generic-env-ref", "NEXTAUTH_SECRET=${NEXTAUTH_SECRET}"),
        ("generic-actions-secret", "API_AUTH: ${{ secrets.API_AUTH }}"),
        ("generic-template", 'SESSION_SECRET="{{ session_secret }}"'),
        ("generic-env-lookup", 'SECRET_KEY = os.environ["DJANGO_SECRET_KEY"]'),
        ("generic-getenv", 'app.secret_key = os.getenv("FLASK_SECRET_KEY")'),
        ("generic-settings-ref", "signing_key = settings.WEBHOOK_SIGNING_KEY"),
        ("generic-public-key", f"public_key: AAAAC3NzaC1lZDI1NTE5AAAAI{pick(rng, ALNUM, 43)}"),
        ("generic-publishable", f"STRIPE_PUBLISHABLE_KEY=pk_test_{pick(rng, ALNUM, 24)}"),
        ("generic-ssh-rsa", f"authorized_key: ssh-rsa AAAAB3NzaC1yc2E{pick(rng, ALNUM, 60)}"),
        ("generic-aws-doc", "aws_access_key_id: AKIA" + "IOSFODNN7EXAMPLE"),
        ("generic-version-key", "cache_key_version: 1.24.3"),
        ("generic-css-key", "key-color: #1e90ff; header-bg: #fafafa"),
        ("generic-path-key", "SSH_KEY=/etc/ssh/keys/deploy_ed25519"),
        ("generic-secret-path", "DB_PASSWORD_FILE=/run/secrets/db_password"),
        ("generic-key-words", "sort_key: created_at"),
        ("generic-auth-mode", "auth: oauth2-client-credentials"),
        ("generic-prose-key", "The key is `max_tokens` and the token is `input_tokens`."),
        ("generic-prose-code", "The password is `os.environ['DB_PASSWORD']`."),
        ("generic-header-name", "AUTH_HEADER: X-Api-Key"),
        ("generic-redacted", "SECRET_KEY=[REDACTED:framework-secret-key#1]"),
        ("generic-pass-count", "tests_passed: 142/150"),
        ("generic-bypass", "bypass_cache = true"),
    ]
