"""Generic classes that no prefix names: framework secret keys, hex and base64 values assigned
to any name that says credential, credentials set through environment calls and Dockerfile
`ENV`, and random-looking values quoted next to a credential word in prose.

Each rule anchors on credential words. The assignment rules start at the identifier holding
the anchor (`start="identifier"`: the engine skips the hit unless `=` or `:` follows the
identifier closely); the others start exactly at their anchor. Every repetition is capped.
"""

from __future__ import annotations

from stet_lsp.gate import heuristics
from stet_lsp.gate.patterns import lazy
from stet_lsp.gate.rules import KEY_ASSIGN, VALUE_START, Rule, whole_value

_KEY = r"(?<![A-Za-z0-9_.\-])(?P<key>[A-Za-z0-9_.\-]{1,96}+)"
# Names that say credential (a key must contain one to be worth a look).
_CREDENTIAL_WORD = r"(?i:secret|token|pass|pwd|key|auth|credential|signing|header)"

# Framework secret keys, as the frameworks name them (a dotted or prefixed form included:
# `app.secret_key`, `config.secret_key_base`, `DJANGO_SECRET_KEY`).
_FRAMEWORK_NAMES = (
    "secret_key_base",  # Rails, Phoenix
    "secret_key",  # Django, Flask
    "secretkey",
    "app_key",  # Laravel
    "app_secret",  # Symfony
    "nextauth_secret",
    "auth_secret",
    "jwt_secret",
    "jwt_secret_key",
    "session_secret",
    "cookie_secret",
    "secret_token",  # Rails before 4
    "validationkey",  # ASP.NET machineKey
    "decryptionkey",
)


def _framework_check(value: str, strict: bool) -> bool:
    return heuristics.looks_like_secret_value(value, min_length=8, min_entropy=2.5)


def _encoded_check(value: str, strict: bool) -> bool:
    return heuristics.is_encoded_secret(value)


def _prose_check(value: str, strict: bool) -> bool:
    return " " not in value and heuristics.looks_like_secret_value(
        value, min_length=10 if strict else 12, min_entropy=3.0 if strict else 3.2
    )


FRAMEWORK_SECRET_KEY = Rule(
    name="framework-secret-key",
    pattern=lazy(
        r"(?<![A-Za-z0-9_.\-])(?P<key>(?:[A-Za-z0-9_]{1,30}[._])?(?i:"
        + "|".join(_FRAMEWORK_NAMES)
        + r"))(?![A-Za-z0-9_\-])"
        + KEY_ASSIGN
        + whole_value(8, 600)
    ),
    anchors=_FRAMEWORK_NAMES,
    lead=34,
    reach=660,
    check=_framework_check,
    after=lazy(r"[A-Za-z0-9_]{0,8}" + KEY_ASSIGN + VALUE_START),
    start="identifier",
)

# Hex and base64 values assigned to any name that says credential: `*_KEY`, `*_AUTH*`,
# `*_HEADER`, `*_CREDENTIAL*`, `*_PASS*`, `*_SIGNING*`, `*_SECRET*`, `*_TOKEN*`.
CREDENTIAL_ASSIGNMENT = Rule(
    name="credential-assignment",
    pattern=lazy(_KEY + KEY_ASSIGN + whole_value(16, 4096)),
    anchors=("key", "auth", "pass", "credential", "signing", "header", "secret", "token"),
    lead=64,
    reach=4200,
    check=_encoded_check,
    after=lazy(r"[A-Za-z0-9_.\-]{0,96}" + KEY_ASSIGN + r"[\"'`]?(?:base64:)?[A-Za-z0-9+/_\-]{16}"),
    start="identifier",
)

# `os.environ.setdefault("JWT_SECRET", "…")`, `os.putenv(…)`, `t.Setenv(…)`, `setenv(…)`.
ENV_CALL = Rule(
    name="credential-assignment",
    pattern=lazy(
        r"(?i:setdefault|putenv|setenv|set_env)\([ \t]{0,4}[\"']"
        r"(?P<key>(?=[A-Za-z0-9_.\-]{0,80}?" + _CREDENTIAL_WORD + r")[A-Za-z0-9_.\-]{1,80}+)"
        r"[\"'][ \t]{0,4},[ \t]{0,4}" + whole_value(8)
    ),
    anchors=("setdefault(", "putenv(", "setenv(", "set_env("),
    reach=520,
    check=_framework_check,
    start="anchor",
)

# Dockerfile `ENV NAME value` (the `ENV NAME=value` form is an ordinary assignment).
DOCKERFILE_ENV = Rule(
    name="credential-assignment",
    pattern=lazy(
        r"(?:\r?\n|\\n)[ \t]{0,4}(?:ENV|env)[ \t]{1,4}"
        r"(?P<key>(?=[A-Za-z0-9_]{0,80}?" + _CREDENTIAL_WORD + r")[A-Za-z0-9_]{1,80}+)"
        r"[ \t]{1,4}" + whole_value(8)
    ),
    anchors=("\nenv ", "\nenv\t", "\\nenv ", "\\nenv\t"),
    reach=520,
    check=_framework_check,
    start="anchor",
)

# "the token is `a8f3…`", "API key `…`", "the password was '…'": a quoted random value
# right after a credential word.
_PROSE_WORDS = ("token", "key", "password", "passphrase", "secret", "credential")
PROSE_SECRET = Rule(
    name="prose-secret",
    pattern=lazy(
        r"(?i:" + "|".join(_PROSE_WORDS) + r")s?[ \t]{1,3}(?:(?i:is|was)[ \t:]{1,3})?"
        r"\\?[`'\"](?P<secret>(?<=`)[^`\s]{10,200}+(?=`)|(?<=')[^'\s]{10,200}+(?=')"
        r"|(?<=\")[^\"\s\\]{10,200}+(?=\\?\"))"
    ),
    anchors=tuple(
        f"{word}{tail}" for word in _PROSE_WORDS for tail in (" is ", " was ", " `", " '", ' "')
    ),
    reach=220,
    check=_prose_check,
    start="anchor",
)

GENERIC_RULES: tuple[Rule, ...] = (
    FRAMEWORK_SECRET_KEY,
    CREDENTIAL_ASSIGNMENT,
    ENV_CALL,
    DOCKERFILE_ENV,
    PROSE_SECRET,
)
