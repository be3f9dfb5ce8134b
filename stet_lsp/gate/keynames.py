"""What a credential's name says: its parts (`DB_PASSWORD`, `dbPassword`), a test log's
verdicts that stand where a name would (`PASS:`), and the names a drawn UUID is a secret
under."""

from __future__ import annotations

import re

CAMEL_BOUNDARY = re.compile(r"([a-z0-9])([A-Z])")
KEY_PARTS = re.compile(r"[_.\-]+")
# The words a test runner's result line starts with (Go's `--- PASS:`, automake's and
# DejaGnu's `PASS:`, `XPASS:`, jtreg's `Passed:`): what follows names a test.
TEST_RESULTS = frozenset(("PASS", "XPASS", "PASSED", "Passed"))

# A name a drawn UUID is a credential under (`holds_a_credential_uuid`): a password's, an API
# key's, a secret's; an upper-case snake name (an environment's, a constant's, a JSON or YAML
# key) ending in `_TOKEN`, `_SECRET` or `_PASSWORD` (`SNYK_TOKEN`), unless the word before
# says the token is none (`NEXT_PAGE_TOKEN`, `DEVICE_TOKEN`), or in `_KEY` after a word that
# says a credential (`LICENSE_KEY`, `MASTER_KEY`: `TENANT_KEY`, `SITE_KEY`, `S3_KEY` hold ids,
# and a vendor's `ACME_KEY` is left to the vendor's rule); a token named for access in any case
# (`access_token`, `refreshToken`: an OAuth server's UUID tokens). Other names keep their
# UUIDs: ids (`secret_id`, `api_key_id`: metadata), and tokens in lower or camel case
# (`token`, `pageToken`, `next_page_token`, `client_token`), which are cursors, idempotency
# and invitation tokens far more often than credentials.
_UUID_PASSWORD_PARTS = frozenset(("pwd", "pass"))
_UUID_PASSWORD_ENDINGS = ("password", "passwd", "passphrase")
_UUID_ENV_ENDINGS = frozenset(("token", "secret", "password"))
_UUID_ACCESS_TOKENS = frozenset(("access", "refresh", "auth", "api", "bearer"))
_CREDENTIAL_KEYS = frozenset(
    (
        "api",
        "access",
        "secret",
        "private",
        "auth",
        "authentication",
        "authorization",
        "master",
        "signing",
        "sign",
        "hmac",
        "jwt",
        "encryption",
        "encrypt",
        "decryption",
        "cipher",
        "crypto",
        "license",
        "licence",
        "product",
        "activation",
        "app",
        "application",
        "service",
        "server",
        "admin",
        "root",
        "deploy",
        "consumer",
        "subscription",
        "integration",
        "ingest",
        "ingestion",
        "webhook",
        "cookie",
        "shared",
        "management",
    )
)
_NOT_A_CREDENTIAL = frozenset(
    (
        "page",
        "next",
        "continuation",
        "cursor",
        "resume",
        "idempotency",
        "dedup",
        "deduplication",
        "client",
        "sync",
        "cancellation",
        "request",
        "correlation",
        "trace",
        "cache",
        # a device's or a push service's registration
        "device",
        "push",
        "fcm",
        "gcm",
        "apns",
        "registration",
        # a form's, or a link's mailed once
        "csrf",
        "xsrf",
        "invite",
        "invitation",
        "reset",
        "verification",
        "verify",
        "confirmation",
        "confirm",
        "unsubscribe",
        # an OAuth flow's round trip
        "state",
        "nonce",
    )
)
# `pass` after these is a pass of some work, not a password (`boarding_pass`, `render_pass`).
_NOT_A_PASSWORD = frozenset(
    (
        "boarding",
        "render",
        "first",
        "second",
        "third",
        "last",
        "final",
        "single",
        "multi",
        "compile",
        "compiler",
        "build",
        "test",
        "bus",
        "season",
        "day",
    )
)
# Words that hold a credential's letters and name something else in code: a tokenizer and
# the tokens it makes, data passed through, a passive force, a passage, a secretary. Not
# `bypass` (`MAINTENANCE_BYPASS`, `OTP_BYPASS` hold a code that is a secret).
_OTHER_WORDS = re.compile(
    r"(?:de)?tokeni[sz](?:e|ed|er|ers|es|ing|ation|ations)?|tokens|passthr(?:ough|u)|passed"
    r"|passive|passages?|passengers?|compass(?:es)?|secretar(?:y|ies|iat)"
)
_CREDENTIAL_LETTERS = re.compile(
    r"secret|token|pass|pwd|pw|key|auth|cred|sign|header|cookie|session|bearer|jwt|private|cert"
    r"|pin|otp|code|access|login|hmac|salt"
)
_ENV_NAME = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")
# An upper-case run before a capitalised word (`XApiKey`, `OAuthToken`).
_ACRONYM_BOUNDARY = re.compile(r"([A-Z])([A-Z][a-z])")
_NAME_NUMBER = re.compile(r"_?[0-9]+\Z")


def holds_a_credential_uuid(key: str) -> bool:
    """Whether a UUID assigned to `key` is a credential: `password`, `DB_PASS`, `PGPASSWORD`,
    `api_key`, `x-api-key`, `client_secret`, `SECRET_KEY`, `aws_secret_access_key`,
    `SNYK_TOKEN`, `LICENSE_KEY`, `access_token`. A diff's `+` or `-` before the name, a
    namespace (`ns:apiKey`) and a number after it (`DB_PASSWORD_2`) are not judged; an
    upper-case name may be an object's member (`process.env.ACME_TOKEN`)."""
    if key in TEST_RESULTS:
        return False  # `--- PASS: <a test's UUID>`
    if key == "--token":
        return True  # a command's token (`mytool --token=…`; `-token` may be a diff's line)
    name = _NAME_NUMBER.sub("", key.lstrip("+-").rpartition(":")[2])
    split = CAMEL_BOUNDARY.sub(r"\1_\2", _ACRONYM_BOUNDARY.sub(r"\1_\2", name))
    parts = KEY_PARTS.split(split.lower().strip("_.-"))
    last = parts[-1]
    before = parts[-2] if len(parts) > 1 else ""
    if last == "pass" and before in _NOT_A_PASSWORD:
        return False
    if last == "key" and "kms" in parts:
        return False  # a KMS key's id: `AWS_KMS_KEY`, `SSE_KMS_KEY`
    if last in _UUID_PASSWORD_PARTS or last.endswith(_UUID_PASSWORD_ENDINGS):
        return True
    if last.endswith("apikey") or (before, last) == ("api", "key"):
        return True
    if last.endswith(("secret", "secretkey")) or (last == "key" and "secret" in parts):
        return True
    if last == "token" and (
        before in _UUID_ACCESS_TOKENS or (parts[0] == "x" and before not in _NOT_A_CREDENTIAL)
    ):
        return True  # or an HTTP header's (`X-Consul-Token`, `X-Vault-Token`; not `X-CSRF-Token`)
    if _ENV_NAME.fullmatch(name.rpartition(".")[2]) is None:
        return False
    if last == "key":
        return before in _CREDENTIAL_KEYS
    return last in _UUID_ENV_ENDINGS and before not in _NOT_A_CREDENTIAL


def name_parts(key: str) -> list[str]:
    """A name's words in lower case (`dbPassword`, `DB_PASSWORD`: `db`, `password`)."""
    return KEY_PARTS.split(CAMEL_BOUNDARY.sub(r"\1_\2", key).lower().strip("_.-"))


def names_other_words(key: str) -> bool:
    """Whether a name's credential letters stand only in words that name something else
    (`_reportTokenizationTime`, `InternalPassthroughApis`, `passedOptions`,
    `SEMANTIC_TOKENS_FULL`): one of its parts is such a word, and no other holds a
    credential's letters (`tokenizerSecret` names a secret). A name of that word alone is
    left to the rules (`Passed: <password>` may be a test log's or a login's)."""
    parts = name_parts(key)
    if len(parts) < 2:
        return False
    rest = [part for part in parts if _OTHER_WORDS.fullmatch(part) is None]
    return len(rest) < len(parts) and not any(_CREDENTIAL_LETTERS.search(part) for part in rest)
