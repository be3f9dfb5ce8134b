"""Cheap value checks that separate secrets from look-alikes (ids, hashes, placeholders)."""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections import Counter

# Values the vendors publish in their documentation; never real credentials.
DOCUMENTED_EXAMPLES = frozenset(
    {
        "AKIAIOSFODNN7EXAMPLE",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    }
)

_PLACEHOLDER_WORDS = (
    "redacted",
    "placeholder",
    "changeme",
    "change_me",
    "change-me",
    "changeit",
    "replaceme",
    "replace_me",
    "replace-me",
    "replace_with",
    "replace-with",
    "fillme",
    "fill_me",
    "fill-me",
    "your_",
    "your-",
    "yourtoken",
    "yourkey",
    "dummy",
    "xxxx",
    "****",
    "....",
    "<",
    ">",
    "{{",
    "${",
    "%(",
)
_PLACEHOLDER_VALUES = frozenset(
    {
        "password",
        "passwd",
        "pass",
        "pw",
        "pwd",
        "secret",
        "token",
        "apikey",
        "api_key",
        "none",
        "null",
        "nil",
        "true",
        "false",
        "undefined",
        "string",
        "str",
        "example",
        "test",
        "admin",
        "key",
        "value",
        "secret_key",
        "api-key",
        "api_token",
        "apitoken",
        "access_token",
        "auth_token",
        "client_secret",
        "private_key",
        "foo",
        "bar",
        "foobar",
        "todo",
        "tbd",
        "fixme",
    }
)
# An ellipsis stands for what was left out (`sk-...`, `sk-ant-…`, `ghp_...`): a placeholder
# when what is left is short; a value that keeps this many characters beside it is a real
# one cut short (a truncated log line or tool output) and still a secret. `\u2026` is the
# ellipsis as a JSON escape, as the raw text of a transcript holds it.
_ELLIPSES = ("...", "…", "\\u2026")
_ELLIPSIS_KEEPS = 20
_ARMOR_LINES = ("-----BEGIN ", "-----END ")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_HEX = re.compile(r"[0-9a-fA-F]+")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z_.]*(?:\(\)?)?")
_NUMBER = re.compile(r"[-+]?[0-9][0-9_.,:eE+-]*")
# Identifiers of agent tool calls, messages and requests: opaque, random-looking, not secrets.
_AGENT_ID_PREFIXES = (
    "toolu_",
    "srvtoolu_",
    "call_",
    "msg_",
    "req_",
    "run_",
    "resp_",
    "chatcmpl-",
    "asst_",
    "thread_",
    "file-",
    "file_",
    "fc_",
    "rs_",
    "evt_",
)
_HASH_PREFIXES = ("sha1-", "sha256-", "sha384-", "sha512-", "sha256:", "sha512:", "md5-")


def shannon_entropy(value: str) -> float:
    if not value:
        return 0.0
    length = len(value)
    return -sum(n / length * math.log2(n / length) for n in Counter(value).values())


def is_documented_example(value: str) -> bool:
    return value in DOCUMENTED_EXAMPLES or "EXAMPLE" in value


def is_placeholder(value: str) -> bool:
    """Templating, environment references, masks and the gate's own markers."""
    lowered = value.lower()
    if lowered.strip("\"'`") in _PLACEHOLDER_VALUES:
        return True
    if is_env_reference(value) or value.startswith(("%s", "%(", "%{", "%d")):
        return True
    if any(word in lowered for word in _PLACEHOLDER_WORDS):
        return True
    if _elided(value):
        return True
    if value.lstrip("\"'`").startswith(_ARMOR_LINES):
        return True  # a PEM header or footer: the private-key rule judges what follows it
    return len(set(value)) <= 3


def _elided(value: str) -> bool:
    """`sk-ant-...`: an ellipsis, and too little beside it to be a real value cut short."""
    if not any(ellipsis in value for ellipsis in _ELLIPSES):
        return False
    for ellipsis in _ELLIPSES:
        value = value.replace(ellipsis, "")
    return len(value.strip("\"'`.")) < _ELLIPSIS_KEEPS


def is_agent_id(value: str) -> bool:
    return value.startswith(_AGENT_ID_PREFIXES)


def is_hash_or_uuid(value: str) -> bool:
    """Git object ids, content digests and UUIDs: random, public, everywhere."""
    if value.startswith(_HASH_PREFIXES):
        return True
    if _UUID.fullmatch(value):
        return True
    return len(value) in (7, 8, 12, 40, 64) and _HEX.fullmatch(value) is not None


# Character classes of a value: ASCII values (nearly all) are tested in C, a scan per class.
_ASCII_LOWER = re.compile(r"[a-z]")
_ASCII_UPPER = re.compile(r"[A-Z]")
_ASCII_DIGIT = re.compile(r"[0-9]")
_ASCII_NOT_ALNUM = re.compile(r"[^A-Za-z0-9]")
_ASCII_SYMBOL = re.compile(r"[^A-Za-z0-9_.\- ]")


def _classes(value: str) -> tuple[bool, bool, bool, bool, bool]:
    """Whether `value` holds a lowercase letter, an uppercase letter, a digit, a character
    that is neither letter nor digit, and one that is not a separator (`-_.` or space)
    either."""
    if value.isascii():
        return (
            _ASCII_LOWER.search(value) is not None,
            _ASCII_UPPER.search(value) is not None,
            _ASCII_DIGIT.search(value) is not None,
            _ASCII_NOT_ALNUM.search(value) is not None,
            _ASCII_SYMBOL.search(value) is not None,
        )
    return (
        any(c.islower() for c in value),
        any(c.isupper() for c in value),
        any(c.isdigit() for c in value),
        any(not c.isalnum() for c in value),
        any(not c.isalnum() and c not in _SEPARATORS and c != " " for c in value),
    )


def has_mixed_classes(value: str) -> bool:
    lower, upper, digits, symbol, _ = _classes(value)
    return sum((digits, upper, lower, symbol)) >= 2 and (digits or (upper and lower))


def looks_like_code_or_word(value: str) -> bool:
    """Identifiers, dotted names, numbers, paths and URLs are references, not values."""
    if _NUMBER.fullmatch(value) or _IDENTIFIER.fullmatch(value):
        return True
    if value.startswith(("/", "./", "../", "~/", "http://", "https://", "file:")):
        return True
    return "(" in value or ")" in value


def looks_random(value: str, *, min_length: int, min_entropy: float) -> bool:
    """The shape of a generated credential: long enough, varied, not code, not a marker."""
    if len(value) < min_length or is_placeholder(value) or looks_like_code_or_word(value):
        return False
    if is_agent_id(value) or is_hash_or_uuid(value):
        return False
    return has_mixed_classes(value) and shannon_entropy(value) >= min_entropy


def is_basic_credential(encoded: str) -> bool:
    """`Basic` carries base64("user:password"); prose like "Basic usage" does not decode so."""
    try:
        decoded = base64.b64decode(encoded + "=" * (-len(encoded) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False
    try:
        text = decoded.decode("utf-8")
    except UnicodeDecodeError:
        return False
    _user, colon, password = text.partition(":")
    return bool(colon) and text.isprintable() and bool(password) and not is_placeholder(password)


# Generic classes (values no prefix names): whole values assigned to credential names.
_ENV_REFERENCE = re.compile(r"\$(?:[{(]|[A-Za-z_][A-Za-z0-9_]*(?:/|$))|%[A-Za-z_][A-Za-z0-9_]*%$")
_REFERENCE = re.compile(
    r"[A-Za-z_][A-Za-z0-9_$.]{0,200}"  # names, dotted names...
    r"(?:\([\w$.,:=\s\-'\"]{0,200}\)?|\[[\w$.,:\-'\"]{0,200}\]?)?"  # ...calls, subscripts
    r"|[-+]?[0-9][0-9_.,:eE+\-]*"  # numbers, versions, times
    r"|v?[0-9]{1,6}(?:\.[0-9A-Za-z\-]{1,20}){1,6}(?:\+[0-9A-Za-z.\-]{1,40})?"  # versions
)
_WORDS_ONLY = re.compile(r"[A-Za-z]{1,40}(?:[ _.\-/:][A-Za-z]{1,40}){0,20}")
_HEX_VALUE = re.compile(r"[0-9a-fA-F]{16,1024}")
_BASE64_VALUE = re.compile(r"[A-Za-z0-9+/_\-]{16,4096}={0,2}")
_SEPARATORS = frozenset("-_.")
# Paths have two segments at least (`/9f#Kq2` alone is a value that starts with a slash).
_PATH = re.compile(r"(?:~|\.{1,2})?/[\w.\-]{0,80}(?:/[\w.\-]{0,80}){1,30}")
_URL_SCHEMES = ("http://", "https://", "file:", "data:")


def is_env_reference(value: str) -> bool:
    """`$NAME`, `${NAME}`, `$(command)`, `%NAME%`: a reference to a value, not the value."""
    return _ENV_REFERENCE.match(value) is not None


def looks_like_reference(value: str) -> bool:
    """Code names, calls, subscripts, numbers, versions, paths and URLs."""
    core = value.rstrip(")]},;")
    if not core or _REFERENCE.fullmatch(core) or _WORDS_ONLY.fullmatch(core):
        return True
    return _PATH.fullmatch(value) is not None or value.startswith(_URL_SCHEMES)


def is_encoded_secret(value: str) -> bool:
    """A random hex or base64 value (Laravel's `base64:` prefix allowed): what a name that says
    credential holds. Hash lengths count: `openssl rand -hex 32` looks like a SHA-256."""
    body = value[7:] if value.startswith("base64:") else value
    hexed = _HEX_VALUE.fullmatch(body) is not None
    if not hexed and _BASE64_VALUE.fullmatch(body) is None:
        return False  # the cheap test first: most values are neither
    if is_placeholder(body) or is_agent_id(body) or _UUID.fullmatch(body):
        return False
    if body.startswith(_HASH_PREFIXES) or _PATH.fullmatch(body):
        return False
    if hexed:
        has_letter = any(c.isalpha() for c in body)
        return has_letter and any(c.isdigit() for c in body) and shannon_entropy(body) >= 3.0
    lower, upper, digit, _, _ = _classes(body)
    symbol = "+" in body or "/" in body or "=" in body
    entropy = shannon_entropy(body)
    return upper and lower and (digit or symbol or entropy >= 4.0) and entropy >= 3.5


def looks_like_secret_value(value: str, *, min_length: int = 8, min_entropy: float = 3.0) -> bool:
    """A value assigned to a credential's name: encoded, or password-like (any characters,
    several classes, varied), and neither a placeholder nor a reference."""
    if len(value) < min_length or value != value.strip():
        return False
    if is_placeholder(value) or is_env_reference(value) or is_agent_id(value):
        return False
    if is_encoded_secret(value):
        return True
    if _UUID.fullmatch(value) or value.startswith(_HASH_PREFIXES) or looks_like_reference(value):
        return False
    lower, upper, digits, _, symbol = _classes(value)
    return sum((lower, upper, digits, symbol)) >= 2 and shannon_entropy(value) >= min_entropy
