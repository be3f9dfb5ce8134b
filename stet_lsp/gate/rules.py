"""The gate's own rule catalogue: current credential formats, each tied to literal anchors.

Every pattern caps its repetitions so that a match attempt costs a bounded number of steps,
and every rule names the lowercase literals (anchors) near which it can match: the prefilter
finds anchors in one pass and only then runs the rules that need them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from stet_lsp.gate import generated, heuristics, syntax
from stet_lsp.gate.keyblocks import key_block_end, ssh2_key_block_end
from stet_lsp.gate.patterns import LazyPattern, lazy

# Bump whenever a rule, a check or the span logic changes: cached results depend on it.
RULESET_VERSION = "2026.119"

Check = Callable[[str, bool], bool]
"""(secret value, strict mode) -> whether the value is a secret."""
BlockEnd = Callable[[str, re.Match[str], int], int | None]
"""(text, the match, reach) -> where the block the match starts ends; None: no block."""

TOKEN = "A-Za-z0-9_-"
BASE64 = "A-Za-z0-9+/="
# Not inside a longer run of letters and digits. An escape that stands for a separator ends
# in one (`\n`, `\t`, `\r`; `%20`, `%22`): `printf "ok\nghp_…"`, `?q=%22ghp_…%22`.
NOT_ALNUM_BEFORE = r"(?:(?<![A-Za-z0-9])|(?<=\\[nrt])|(?<=%[0-9A-Fa-f]{2}))"
# A line's end, and the next line's number and tab (or `→`) when a Read tool shows the file.
_NUMBERED_LINE_END = r"\r?\n(?:[ \t]{0,16}\d{1,7}(?:\t|→))?"


@dataclass(frozen=True)
class Rule:
    name: str
    pattern: LazyPattern
    anchors: tuple[str, ...]
    """Lowercase literals; the rule runs only near them. Empty: the rule runs on all text."""
    lead: int = 0
    """How far before an anchor a match may start."""
    reach: int = 512
    """How far after an anchor a match may end."""
    prefix: str = ""
    """The public literal every value of this kind starts with (shown in previews)."""
    check: Check | None = None
    extend_with: str = ""
    """Characters that continue the token after the match (redact the whole token)."""
    multiline: bool = False
    strict_only: bool = False
    replacement: str | None = None
    """A fixed replacement; None means a numbered `[REDACTED:<rule>#<n>]` marker."""
    block: BlockEnd | None = None
    """For blocks (key files): where the block a match starts ends, within `reach` of it;
    None rejects the match."""
    after: LazyPattern | None = None
    """For identifier and window rules: what must follow the anchor for any match there (a
    cheap test: a window rule's hit without it is neither searched nor decoded)."""
    before: LazyPattern | None = None
    """For window rules: what the `lead` characters before a hit must hold for any match
    there (a cheap test: a hit without it is neither searched nor decoded behind escapes).
    It is searched in those characters in lower case, so it is written in lower case without
    `(?i:…)`: the regular expression engine skips ahead to a literal's first character only in
    a pattern that ignores no case (ten times faster on transcripts)."""
    written_passwords: bool = False
    """For assignments: a short password a person wrote after a password's name is a secret
    though the check finds it no random value (`heuristics.is_written_password`)."""
    reads_defaults: bool = False
    """For the rules that read a shell expansion's default alone (`EXPANSION_DEFAULTS`): another
    rule's reading of a default from the expansion's code stands only where none took it."""
    further: LazyPattern | None = None
    """For anchor rules whose match names what it compares (group `compared`): the further
    values of the same construct, each read from where the last one read ended, the first
    from the match's end (a `case`'s patterns after its first); group `secret` where one is a
    literal to judge. An item without group `quote` is text read over where no further value
    was found (an arm's body whose end is not near): the reading ends with it."""
    start: str = "window"
    """Where a match may start: "anchor" (prefix rules: exactly at the anchor), "identifier"
    (at the start of the identifier holding the anchor), or "window" (search around it)."""
    extend_chars: frozenset[str] = field(init=False, repr=False, compare=False)
    extend_run: LazyPattern | None = field(init=False, repr=False, compare=False)
    """A run of `extend_chars` (possessive), matched in one call."""

    def __post_init__(self) -> None:
        chars: set[str] = set()
        spec = self.extend_with
        index = 0
        while index < len(spec):
            if index + 2 < len(spec) and spec[index + 1] == "-":
                chars.update(chr(c) for c in range(ord(spec[index]), ord(spec[index + 2]) + 1))
                index += 3
            else:
                chars.add(spec[index])
                index += 1
        object.__setattr__(self, "extend_chars", frozenset(chars))
        run = "".join(re.escape(char) for char in sorted(chars))
        object.__setattr__(self, "extend_run", lazy(f"[{run}]*+") if chars else None)


def _not_placeholder(value: str, strict: bool) -> bool:
    return not heuristics.is_placeholder(value)


def _random_body(value: str, strict: bool) -> bool:
    body = value.split("_", 1)[-1] if "_" in value[:12] else value
    return not heuristics.is_placeholder(body) and heuristics.shannon_entropy(body) >= 2.5


def _mixed_case_body(value: str, strict: bool) -> bool:
    body = value.split("_", 1)[-1]
    return body != body.lower() and body != body.upper() and _random_body(value, strict)


def _random_value(value: str, strict: bool) -> bool:
    return heuristics.looks_random(value, min_length=8, min_entropy=2.5 if strict else 3.0)


def _bearer_value(value: str, strict: bool) -> bool:
    return heuristics.looks_random(value, min_length=12 if strict else 16, min_entropy=3.0)


def _header_bearer_value(value: str, strict: bool) -> bool:
    """The credential after an `Authorization` header's `Bearer`: the header says what it is,
    so an API's short key (`Bearer Xk9mQ2vLp8rT`) is one from 8 characters, where `bearer`
    alone (prose's `bearer token`) asks `_bearer_value`'s length, and a drawn UUID is one
    (an OAuth server's, Consul's tokens). Names written as code (`Bearer accessToken`,
    `Bearer myToken2`), placeholders and digests stay."""
    if _bearer_value(value, strict) or heuristics.is_drawn_uuid(value):
        return True
    return (
        len(value) >= 8
        and heuristics.has_mixed_classes(value)
        and heuristics.shannon_entropy(value) >= 2.5
        and not heuristics.is_placeholder(value)
        and not heuristics.is_hash_or_uuid(value)
        and not heuristics.is_agent_id(value)
        and not heuristics.written_names(value)
    )


def _telegram_secret(value: str, strict: bool) -> bool:
    """A bot token's secret after `:AA` varies (a run of one character or a word is none)."""
    secret = value.partition(":")[2]
    return heuristics.shannon_entropy(secret) >= 3.0 and not heuristics.is_placeholder(secret)


def _authorization_value(value: str, strict: bool) -> bool:
    """A scheme's credential (`Authorization: token …`): random, or hex of 32 characters or
    more (GitHub's 40-hex OAuth tokens and old personal tokens, which a content digest's
    shape would otherwise excuse: after the header's name and scheme, no digest stands)."""
    if _bearer_value(value, strict):
        return True
    return (
        len(value) >= 32
        and heuristics.is_hash_or_uuid(value)
        and not value.isdigit()
        and heuristics.shannon_entropy(value) >= 3.0
        and not heuristics.is_placeholder(value)
    )


def _basic_value(value: str, strict: bool) -> bool:
    return heuristics.is_basic_credential(value)


def _password_value(value: str, strict: bool, word_of_few_letters: bool = True) -> bool:
    """Any characters (`u8jz)Pde0)IgxL`), unless the whole value stands for one: a template or
    reference (`{password}`, `%(pw)s`, `${DB_PASS}`), a placeholder word or a mask; or it is
    markup (`<span class=`)."""
    stripped = value.strip()
    return (
        bool(stripped)
        and not heuristics.is_placeholder(stripped, word_of_few_letters=word_of_few_letters)
        and not syntax.is_tag_opening(stripped)
    )


# What comes before a user's password in SQL (`sql-password`): `IDENTIFIED BY` right after a
# user's account in a statement that makes or changes one (`CREATE USER 'app'@'%'`, `CREATE
# USER IF NOT EXISTS app`, `ALTER USER app`, `GRANT … TO app@localhost`: prose's "sent to
# endpoints identified by 'name'" is none), or `SET PASSWORD FOR` an account (`SET PASSWORD
# = '…'` is an assignment, as is an `UPDATE`'s `SET password = '…'`). A single or a double
# quote opens the literal (a backquote names an identifier).
_SQL_ACCOUNT = r"(?:(?:current_)?user\(\)|[^\s;,()]{1,160})"
_SQL_USER_STATEMENT = r"\b(?:create|alter)[ \t]{1,4}"
# Blanks between a statement's words after the account (before and after `IDENTIFIED`, `WITH
# plugin`, `BY`, `=`), where a statement is often broken over lines (`CREATE USER app` and
# `  IDENTIFIED BY '…'` below it): the break raw, or escaped once or twice in a transcript.
# Blanks after a break may be escaped tabs; a client's prompt may continue the line (mysql's
# `->`, SQL*Plus's line number).
_SQL_GAP = (
    r"(?:[ \t]{1,4}|[ \t]{0,4}(?:\\{1,3}r)?(?:\r?\n|\\{1,3}n)(?:[ \t]|\\{1,3}t){0,12}"
    r"(?:(?:->|\d{1,4})[ \t]{1,4})?)"
)
_SQL_IDENTIFIED_BY = (
    r"(?:(?:" + _SQL_USER_STATEMENT + r"user(?:[ \t]{1,4}if[ \t]{1,4}not[ \t]{1,4}exists)?"
    r"|\bgrant[ \t][^;\r\n]{1,120}?[ \t]to)[ \t]{1,4}"
    # The next account of a statement naming several, after the last one's password: a user
    # at a host written as SQL writes one (`'b'@'%'`, `b@'10.%'`, `b@localhost`;
    # `bob@example.com` after a comma and a quote may be prose's).
    + r"|(?<=['\"])[ \t]{0,4},(?:[ \t]{0,4}|"
    + _SQL_GAP
    + r")(?=['\"`][^'\"`\s]{1,80}['\"`]@|[\w$.-]{1,80}@(?:['\"`%]|localhost\b)))"
    + _SQL_ACCOUNT
    + _SQL_GAP
    + r"identified"
    + _SQL_GAP
    + r"(?:with[ \t]{1,4}[A-Za-z0-9_'\"]{1,64}"
    + _SQL_GAP
    + r")?by"
)
_SQL_PASSWORD_BEFORE = (
    r"(?i:"
    + _SQL_IDENTIFIED_BY
    + r"|\bset[ \t]{1,4}password[ \t]{1,4}for[ \t]{1,4}"
    + _SQL_ACCOUNT
    + r"(?:[ \t]{0,4}|"
    + _SQL_GAP
    + r")=(?:[ \t]{0,4}password[ \t]{0,2}\()?)(?:[ \t]{0,4}|"
    + _SQL_GAP
    + r")"
)
# Oracle's password may stand unquoted (`CREATE USER app IDENTIFIED BY Tiger_2024;`): a word of
# letters, digits, `_`, `$` and `#` after `IDENTIFIED BY` that holds a digit, one of `_$#` or a
# capital after a small letter (prose's "identified by email" and "by Kerberos" hold none),
# where the statement ends (`;`, a quote, the text's end) or one of its clauses follows, on the
# line or the next (prose goes on); not `BY PASSWORD`, `BY RANDOM PASSWORD`, `BY VALUES`, nor a
# reference (`$PW`, `&pw`, `:pw`).
_ORACLE_CLAUSE = (
    r"(?i:default|temporary|local|quota|profile|password|account|container|replace|enable|http)\b"
)
_SQL_UNQUOTED_PASSWORD = (
    r"(?i:" + _SQL_IDENTIFIED_BY + r")[ \t]{1,4}(?P<secret>(?!(?i:password|random|values)\b)"
    r"(?=[A-Za-z][A-Za-z0-9_$#]{0,126}(?:[0-9_$#]|(?<=[a-z])[A-Z]))[A-Za-z][A-Za-z0-9_$#]{2,127})"
    r"(?=[ \t]{0,8}(?:[;\"']|(?:\\{1,3}[rn]){0,2}(?:\\{1,3}\"|$)|(?:\r?\n|\\{1,3}n)[ \t]{0,4}/)"
    r"|(?:[ \t]{1,8}|" + _SQL_GAP + r")" + _ORACLE_CLAUSE + r")"
)
_QUOTED_ONLY = r"(?=[\"'])"
# PostgreSQL's `CREATE USER app WITH LOGIN PASSWORD '…'`, `ALTER ROLE app PASSWORD '…'`: its
# options, then `[ENCRYPTED] PASSWORD` and a string literal (single quotes).
_SQL_ROLE_PASSWORD_BEFORE = (
    r"(?i:"
    + _SQL_USER_STATEMENT
    + r"(?:user|role)[ \t]{1,4}"
    + _SQL_ACCOUNT
    + r"[ \t]{1,4}(?:with[ \t]{1,4})?(?:[A-Za-z_]{1,20}[ \t]{1,4}){0,6}?"
    r"(?:encrypted[ \t]{1,4})?password[ \t]{1,4})(?=')"
)


_MYSQL_HASH = re.compile(r"\*[0-9A-Fa-f]{40}")


def _sql_password(value: str, strict: bool) -> bool:
    """A password SQL gives a user: what `_password_value` takes, but for MySQL's hash of one
    (`SET PASSWORD FOR app = '*6BB4…'`, `*` and 40 hexadecimal digits)."""
    return _MYSQL_HASH.fullmatch(value) is None and _password_value(value, strict)


def _userinfo_password(value: str, strict: bool) -> bool:
    """A URL's password (`mysql://root:root@`, `jdbc:oracle:thin:scott/tiger@`): what
    `_password_value` takes, a short word too (`root`, `app`): a password stands there."""
    return _password_value(value, strict, word_of_few_letters=False)


def _assigned_password(value: str, strict: bool) -> bool:
    """`password = value` outside a connection string (code, an ini file, a shell line): the
    checks of `secret-assignment`. A name, an attribute (`args.password`, `self.password`), a
    call, a path, a number or the key's own name (`password=password,`), also when an
    argument list goes on after it, is code, not a secret; a value of words keeps its spaces
    (`Password = my secret phrase 42!`)."""
    core = value.strip()
    # An argument list goes on after the name: `password=password, timeout=5)`.
    head = _ARGUMENT_END.split(core, maxsplit=1)[0].strip()
    if heuristics.looks_like_reference(core) or heuristics.looks_like_reference(head):
        return False
    operand = _OPERAND.match(core)
    if operand is not None and heuristics.looks_like_reference(operand.group("name")):
        return False  # an expression: `password = password + b'\x00' * pad`
    if syntax.is_tag_opening(core):
        return False  # highlighted code in HTML: `password = <span class="hljs-string">`
    return _generic_check(core, strict)


_ARGUMENT_END = re.compile(r"[,)]")
# The password's own name or an attribute, then an operator between blanks: code's
# expression (`password + b'\x00'`, `self.password * 2`); `thunder + eagle45@` and
# `castle_falcon ++ eagle1997` are passphrases.
_OPERAND = re.compile(
    r"(?P<name>pass(?:word|wd)?|pwd|[a-z_]\w{0,40}(?:\.[A-Za-z_]\w{0,40}){1,4})[ \t]+[-+*/%|&][ \t]"
)


def _unpunctuated(word: str) -> str:
    """A phrase's word without the `.`, `,` or `?` after it (and a closing bracket): the
    sentence's, not the word's (`Password: see section3.`, `password: TBD (ticket OPS1234.)`)."""
    word = word.rstrip(")]}")
    return word[:-1] if word.endswith((".", ",", "?")) else word


def _yaml_passphrase(value: str, strict: bool) -> bool:
    """A YAML password's plain scalar of several words (`password: Tr0ub4dor&3 horse
    battery`): a secret when one of its words is one by itself (the rest of the phrase goes
    with it) and the whole passes `_assigned_password`. Words alone (`correct horse battery
    staple`) read as prose or a label (`Password: see the vault entry`, `password: The one
    you set at signup.`) as often as a passphrase, and stay; a single word is the generic
    rules' to judge, and so is code falling back on a literal (`password:
    process.env.DB_PASSWORD || '…',` in a pretty-printed object: the literal alone)."""
    words = value.split()
    return (
        len(words) > 1
        and not syntax.falls_back_on_a_literal(value)
        and not heuristics.is_code_text(value)
        and any(_generic_check(_unpunctuated(word), strict) for word in words)
        and _assigned_password(value, strict)
    )


# A connection string's value (at most 256 characters and 4 spaces) reaches an end (`;`, a
# quote, the line's end): tested first in one pass, so a `Password= ` repeated along a line
# does not try every length up to 256 at each.
_VALUE_THEN_END = r"(?=[^;\"'\r\n\\]{1,260}+(?:[;\"'\r\n]|$))"
# The next key of a libpq connection string (`host=db password=s3cret dbname=app`): its values
# are separated by blanks (one holding a blank is quoted), so a password ends before it. Its
# keywords are lower-case and hold a value (`<k9Qm2 xR7tLw4=` is one password).
_NEXT_KEY = r"[ \t]+[a-z_][a-z0-9_]{0,40}[ \t]{0,4}=[ \t]{0,4}[^\s=]"
_CONNECTION_VALUE = r"(?P<secret>(?:(?!" + _NEXT_KEY + r")[^;\"'\r\n\\]){1,256}?)[ \t]{0,4}"


def _npm_auth(value: str, strict: bool) -> bool:
    """An `.npmrc` `_auth`/`_authToken` value; not code assigning one (`self._proxy_auth`)."""
    return not heuristics.is_placeholder(value) and not heuristics.looks_like_attribute(value)


def _env_value(value: str, strict: bool) -> bool:
    """A configured name's value, whatever it looks like (`admin`, `test`, `xxxx`): only a
    reference to another variable (`$VAR`, `${VAR}`, `%VAR%`) and the gate's own marker stay
    (an empty value is no match)."""
    return not heuristics.is_env_reference(value) and "[REDACTED:" not in value


# A line's characters up to an AWS secret, never over another key id (whose own match starts
# there) nor an escaped newline.
_AWS_LINE = r"(?:[^\r\n\\A]|\\(?!n)|A(?!KIA|SIA)){0,240}?"


def _aws_secret_beside_id(value: str, strict: bool) -> bool:
    if value.count("/") >= 3:
        return False  # a path (`src/main/java/Example/...`); a secret has one slash in 64
    has = (any(c.isupper() for c in value), any(c.islower() for c in value))
    digits = any(c.isdigit() for c in value)
    return all(has) and digits and heuristics.looks_random(value, min_length=40, min_entropy=4.0)


def _high_entropy(value: str, strict: bool) -> bool:
    # `trajectories/<trajectory id>/events` is no secret; what is joined to an id is judged
    # on its own (`<trajectory id>/Xk9q2Lm4…`).
    return any(
        heuristics.looks_random(part, min_length=24, min_entropy=4.0)
        and any(c.isdigit() for c in part)
        for part in heuristics.parts_beside_stet_ids(value)
    )


def _token(
    name: str,
    prefixes: tuple[str, ...],
    body: str,
    *,
    extend: str = TOKEN,
    check: Check | None = _random_body,
    flags: int = 0,
) -> Rule:
    """A credential that starts with a fixed public prefix."""
    alternatives = "|".join(re.escape(p) for p in prefixes)
    return Rule(
        name=name,
        pattern=lazy(rf"{NOT_ALNUM_BEFORE}(?:{alternatives}){body}", flags),
        anchors=tuple(p.lower() for p in prefixes),
        prefix=prefixes[0] if len(prefixes) == 1 else _common_prefix(prefixes),
        check=check,
        extend_with=extend,
        start="anchor",
    )


def _common_prefix(prefixes: tuple[str, ...]) -> str:
    first, last = min(prefixes), max(prefixes)
    length = 0
    while length < min(len(first), len(last)) and first[length] == last[length]:
        length += 1
    return first[:length]


# Key names that hold a credential, and suffixes that turn such a name into metadata.
SECRET_KEY_WORDS = (
    r"secret|token|pass|pwd|api[_\-]?key|access[_\-]?key|private[_\-]?key"
    r"|auth[_\-]?key|client[_\-]?key|credentials?|signing[_\-]?key|encryption[_\-]?key"
)
# A name holding a credential's word (`DB_PASSWORD`, `self.api_token`, `x-api-key`).
CREDENTIAL_KEY = r"[A-Za-z0-9_.\-]{0,40}?(?i:" + SECRET_KEY_WORDS + r")[A-Za-z0-9_.\-]{0,30}"
_ASSIGN = r"[\"']?\]?[ \t]{0,4}(?::{1,3}=|\?=|=>|=|:)[ \t]{0,4}"


# A declared type between a name and its `=`: `api_key: str = "…"` (Python, TypeScript, Rust,
# Kotlin, Swift), `Optional[str]`, `str | None`, `&'static str`, `Map<String, String>`.
_TYPE_ANNOTATION = (
    r"[ \t]{0,4}:[ \t]{0,4}(?:&(?:'static[ \t])?)?[A-Za-z][A-Za-z0-9_.]{0,30}"
    r"(?:\[[A-Za-z0-9_., ]{1,30}\]|<[A-Za-z0-9_., ]{1,30}>)?\??"
    r"(?:[ \t]{0,2}\|[ \t]{0,2}[A-Za-z][A-Za-z0-9_.]{0,30})?[ \t]{0,4}=(?![=>])"
)
# Go declares the type after the name, without a colon: `const apiKey string = "…"`.
_GO_STRING = r"[ \t]string[ \t]=(?!=)"
# What may stand between a credential's name and its value (`"]`, `**` in Markdown, a C
# array's `[]` or `[33]` included); Make's `?=`, `::=` and `:::=` and PHP's `.=` assign too.
KEY_ASSIGN: str = (
    r"(?:\[[0-9]{0,6}\])?[\"'\]*]{0,3}(?:"
    + _TYPE_ANNOTATION
    + "|"
    + _GO_STRING
    + r"|[ \t]{0,4}(?::{1,3}=|[?.]=|=>|=|:))[ \t]{0,4}"
)
# A YAML core tag before a value says what it is (`password: !!str Xk9q…`, `!!binary`), and an
# anchor names it for aliases to repeat (`password: &db_password Xk9q…`, `*db_password`): the
# value follows them, in either order. (An application's own tags, CloudFormation's `!Ref
# Name`, name a reference.)
_YAML_TAG = r"(?:(?:!!(?:str|binary)|&(?!mut[ \t])[^\s\[\]{},&*!\\\"']{1,40})[ \t]{1,4}){0,2}"
# A value's first six characters: no blank (`'in #security'` is a message). In quotes they may
# hold a backslash and the other quotes, as the literal does (`'Qm7\zP4…'`, a shell's single
# quotes keeping `\` as it is; `"it's-Secr3t…"`, `'hun"ter2…'`; `"Zk8\\Wq…"`, `"Xk\"9m…"`),
# not the quote that closes it; bare, no quote or backslash.
_DOUBLE_QUOTED_SIX = r"(?:[^\s\"\\]|\\\S){6}"
# A single-quoted literal closed and opened again inside a value (`heuristics.REOPENED_QUOTE`),
# never right after its opening quote, which was then a closing one (`echo 'password='\\''…'`).
# A backslash before it is the value's own (single quotes keep it as it is).
_REOPENED = heuristics.REOPENED_QUOTE
_KEPT_BACKSLASH = r"\\(?='(?:\\{1,8}')?'[^'\s])"
_NOT_REOPENED_FIRST = r"(?!\\{1,8}''[^'\s])"
_SINGLE_QUOTED_SIX = _NOT_REOPENED_FIRST + rf"(?:[^\s'\\]|{_KEPT_BACKSLASH}|\\\S|{_REOPENED}){{6}}"
_BACKQUOTED_SIX = r"[^\s`]{6}"
_FIRST_SIX = (
    rf"(?:\"{_DOUBLE_QUOTED_SIX}|'{_SINGLE_QUOTED_SIX}|`{_BACKQUOTED_SIX}|[^\s\"'`\\]{{6}})"
)
# A literal's opening quote, its first six characters after it.
_OPENING_QUOTE = (
    rf"(?:\"(?={_DOUBLE_QUOTED_SIX})"
    rf"|'(?={_SINGLE_QUOTED_SIX})"
    rf"|`(?={_BACKQUOTED_SIX}))"
)
# The first characters of a value, quoted or not, in braces, after `new` or with a literal's
# prefix or a YAML tag (a cheap test before the full pattern).
# A shell's ANSI-C quoting opens a single-quoted value with `$` (`export DB_PASSWORD=$'Xk9…'`).
_ANSI_C = r"\$(?=')"
VALUE_START: str = (
    _YAML_TAG + rf"(?:new[ \t]{{1,2}}|[({{][ \t]{{0,2}})?(?:u8|[LuUbr]|{_ANSI_C})?" + _FIRST_SIX
)


# Before a quoted value: a call or constructor wrapping the literal (`std::string("…")`,
# `new String("…")`, `QString("…")`, `String::from("…")`, a brace list `{"…"}`), whose
# literal is the value, not the code before it, when it holds no blank (a call's literal of
# words is a prompt, a message, a label: `input("Enter password: ")`); and a string
# literal's prefix (C++'s `L`, `u8`, `u`, `U`, Python's `b`, `r`, `u`, a shell's `$'…'`).
_VALUE_WRAPPER = (
    r"(?:(?:new[ \t]{1,2})?[A-Za-z_][A-Za-z0-9_:.]{0,60}(?:<[A-Za-z0-9_:, ]{1,40}>)?[ \t]?)?"
    r"[({][ \t]{0,2}(?:u8|[LuUbr])?(?=[\"'`][^\s\"'`]{1,400}[\"'`])"
    rf"|(?:u8|[LuUbr])(?=[\"'`])|{_ANSI_C}"
)


# A URL's userinfo after its `://` (`:\/\/` in JSON), as `url-password` reads it. No `[` in
# the user: a token as the user (`https://ghp_…@github.com`) is redacted to a marker,
# `[REDACTED:github-token#1]`, whose `:` is no password's. The password runs up to the last
# `@` before the host (`u8jz@Pde0@IgxL@db`): after an `@` in the password, no `?` or `#` (a
# query or fragment's `@` is not the host's).
URL_USER = r"[^\s:@/\"'<>\\\[]{0,128}"
URL_PASSWORD = r"[^\s@/\"'<>\\]{1,256}+(?:@[^\s@/\"'<>\\?#]{1,256}+){0,8}"
URL_HOST_AFTER = r"@(?=[A-Za-z0-9\[._\-])"
URL_USERINFO = URL_USER + ":" + URL_PASSWORD + URL_HOST_AFTER


def _single_quoted(least: int, most: int) -> str:
    """A single-quoted literal's content: up to a quote no backslash escapes (Python's and
    JavaScript's `'Xk9m\\'Q2…'`), else to the first quote (a shell's `'Zk8m…\\'` keeps its
    backslash and ends there). A quote after a backslash is taken for an escaped one only
    inside a word: before a blank, `;`, `&`, `|`, `)` or `,` it is a shell's closing quote
    (`'Zk8m…\\' && echo 'done'`, `f(token='…\\', other='…')`), and a value with a blank in it
    ends at the first quote. Quotes closed and opened again inside it are its own (`_REOPENED`:
    a shell's `'it'\\''s…'`, YAML's `'it''s…'`)."""
    return (
        rf"(?<='){_NOT_REOPENED_FIRST}(?:{_SINGLE_QUOTED_CHARACTER}{{{least},{most}}}+(?=')"
        rf"|[^'\r\n]{{{least},{most}}}+(?='))"
    )


_SINGLE_QUOTED_CHARACTER = (
    rf"(?:[^'\\\s]|\\[^'\s]|\\'(?![\s;&|),]|'[^'\s])|{_KEPT_BACKSLASH}|{_REOPENED})"
)
SINGLE_QUOTED_ON: str = rf"{_SINGLE_QUOTED_CHARACTER}*+(?=')"
"""The rest of a single-quoted value without blanks from a point inside it, to the quote that
closes it: past its quotes closed and opened again (`_REOPENED`)."""


# A bare value of letters and digits then `.` (`Tiger1999.`) keeps its `.` right after a `=`,
# or at its line's end or before another option (`--user`, `user=`): the checks read it as a
# password's sign after a password's name only (`heuristics.ends_a_sentence`). After any
# other value, or before more words (`Password: Welcome1. Change it`), a last `.` ends a
# sentence (`password: see the vault.`, `token=Xk9mQ2vLp8rT.`) and stays outside the value.
_KEPT_DOT = (
    rf"(?={heuristics.WORD_DIGITS_DOT}(?![^\s\"'`\\]))"
    r"(?:(?<==)|(?![A-Za-z0-9]{4,52}\.[ \t]+(?![\w.\-]{1,40}=|-)\S))"
)


def whole_value(least: int, most: int = 400) -> str:
    """A whole value as group `secret`: up to its closing quote when quoted (any character a
    secret key holds, escapes included), else up to whitespace (minus trailing `.,;`, but the
    `.` of letters and digits, `_KEPT_DOT`). A quoted value may stand in a call or
    braces, or carry a literal's prefix (`_VALUE_WRAPPER`), or a YAML tag (`_YAML_TAG`)."""
    return (
        _YAML_TAG
        + r"(?:"
        + _VALUE_WRAPPER
        + r")?[\"'`]?(?P<secret>"
        + rf"(?<=\")(?:[^\"\\\r\n]|\\[^\r\n]){{{least},{most}}}+(?=\")|"
        + _single_quoted(least, most)
        + rf"|(?<=`)[^`\r\n]{{{least},{most}}}+(?=`)"
        + rf"|{_KEPT_DOT}[^\s\"'`\\]{{{least},{most}}}"
        + rf"|[^\s\"'`\\]{{{least},{most}}}(?<![.,;])"
        + r")"
    )


def quoted_value(least: int, most: int = 400) -> str:
    """A quoted literal's content as group `secret`, as `whole_value` reads one: up to its
    closing quote (escapes included in double quotes and, where one closes it, in single
    quotes); a template literal in backquotes holds no substitution (`${…}`). Its first six
    characters are those `VALUE_START` asks of a literal after a credential's name (no blank:
    `'in #security'` is a message)."""
    return _OPENING_QUOTE + r"(?P<secret>" + _quoted_content(least, most) + r")"


def _quoted_content(least: int, most: int) -> str:
    """What `quoted_value` reads inside the quotes it opens on."""
    return (
        rf"(?<=\")(?:[^\"\\\r\n]|\\[^\r\n]){{{least},{most}}}+(?=\")|"
        + _single_quoted(least, most)
        + rf"|(?<=`)(?:[^`$\r\n]|\$(?!\{{)){{{least},{most}}}+(?=`)"
    )


# A YAML alias or anchor as the whole value (`password: *db_password`, `&defaults` opening a
# block), in the lower case anchors are written in: a password may start with `*` or `&`.
_YAML_NODE_NAME = re.compile(r"[*&][a-z][a-z0-9_\-]{0,60}")


def _generic_check(value: str, strict: bool) -> bool:
    if _YAML_NODE_NAME.fullmatch(value) and heuristics.looks_like_reference(value[1:]):
        return False
    return heuristics.looks_like_secret_value(
        value, min_length=6 if strict else 8, min_entropy=2.5 if strict else 3.0
    )


GENERIC_ASSIGNMENT = Rule(
    name="secret-assignment",
    pattern=lazy(
        # Not a URL's user whose password `url-password` reads (`smtp://apikey:SG.…@smtp.
        # sendgrid.net`), where an assignment's value would run on over the host; one it
        # cannot read (`https://token:Xk9q/Zq8W@host`, no host at all) is the assignment's.
        r"(?<![A-Za-z0-9_.\-])(?:(?<!://)(?<!:\\/\\/)|(?!" + URL_USERINFO + r"))"
        r"(?P<key>" + CREDENTIAL_KEY + ")" + KEY_ASSIGN + whole_value(6)
    ),
    anchors=(
        "secret",
        "token",
        "pass",
        "pwd",
        "api_key",
        "apikey",
        "api-key",
        "access_key",
        "accesskey",
        "private_key",
        "privatekey",
        "auth_key",
        "authkey",
        "client_key",
        "credentials",
        "signing_key",
        "encryption_key",
    ),
    lead=48,
    reach=480,
    check=_generic_check,
    after=lazy(r"[A-Za-z0-9_.\-]{0,128}" + KEY_ASSIGN + VALUE_START),
    start="identifier",
    written_passwords=True,
)
# A literal compared with a credential's name (`if token == "…":`, `apiKey !== '…'`, Go's
# `token != "…"`, Lua's `token ~= "…"`, Java's `token.equals("…")`, a test's
# `expect(token).toBe("…")` or RSpec's `expect(token).to eq "…"`, a shell's `[ "${TOKEN}" =
# "…" ]`, `os.getenv("API_TOKEN") == "…"`, `token.strip() == "…"`): a value the code accepts
# or refuses is one it holds, judged as an assignment's literal is. Quoted only: a bare word
# after `==` is code's name. A literal with neither a digit nor both cases (a lexer's `token ==
# "STRING"`, `tok != "endfor"`) is left before it is read: such words are no secret after a
# credential's name either.
_OPERATORS = ("==", "!=", "~=")
_OPERATOR = r"(?:={2,3}|!={1,2}|~=)"
# A test's expectation of what stands before it: Jest's `.toBe(`, `.not.toEqual(`,
# `.resolves.toStrictEqual(`, `.toMatch(`, `.toContain(`, `.toHaveValue(`, chai's `.to.equal(`,
# `.to.not.eq(` and `.should.equal(` (right after the name), AssertJ's `.isEqualTo(`, RSpec's
# `.to eq `, `.to eql(`, `.to match `, `.not_to eq `, `.to be == `, kotest's `shouldBe` (after
# the `)` of `expect(…)`, `assertThat(…)`).
EXPECTATION = (
    r"\.(?:(?:resolves|rejects|not)\.){0,2}"
    r"(?:toBe|toEqual|toStrictEqual|toMatch|toContain|toHaveValue)\(|\.isEqualTo\("
    r"|\.(?:to|should)\.(?:not\.)?(?:eql?|equal)\("
    r"|\.(?:to|to_not|not_to)[ \t]{1,4}(?:eql?|match|be[ \t]{1,4}==)(?:\(|[ \t])"
    r"|[ \t]{1,4}shouldBe[ \t]{1,4}"
)
# Methods without arguments called on the compared name (`token?.trim()`, `apiKey.toLowerCase()`,
# `password.strip().lower()`, Kotlin's `token!!.trim()`), group `method`: judged as part of the
# name (`token?.getType()` names a type).
_METHOD_CALL = r"(?:\?\.|!!\.|\??->|\.)[A-Za-z_][A-Za-z0-9_]{0,30}\(\)"
NO_ARGUMENT_METHODS = r"(?:" + _METHOD_CALL + r"){1,2}"
_COMPARED = (
    r"(?:\(\))?(?P<method>"
    + NO_ARGUMENT_METHODS
    + r")?(?:\}[\"']?[ \t]{1,4}=(?!=)|[\"'\])}]{0,3}(?:[ \t]{0,4}"
    + _OPERATOR
    + r"|\.[Ee]quals(?:IgnoreCase)?\(|"
    + EXPECTATION
    + r"))[ \t]{0,4}"
)
# A string literal's prefix: Python's bytes, raw and formatted strings (`b"…"`, `rb'…'`,
# `f"…"`, a formatted one only without a field: `f"sk-{suffix}"` is a template), C++'s
# (`u8"…"`, `L"…"`).
_LITERAL_PREFIX = (
    r"(?:[bB][rR]?|[rR][bB]?|(?:[fF][rR]?|[rR][fF])(?=\\{0,8}[\"'][^\"'{\r\n]{0,400}[\"'])"
    r"|u8|[uUL])?"
)
_LITERAL_CHARACTER = r"[^\"'`\r\n]{0,400}?"
_DIGIT_OR_BOTH_CASES = (
    rf"(?:(?={_LITERAL_CHARACTER}[0-9])|(?={_LITERAL_CHARACTER}[a-z])(?={_LITERAL_CHARACTER}[A-Z]))"
)
# C++'s raw string (`R"(…)"`, `u8R"key(…)key"`): its delimiter, and what it holds (no quote, as
# a credential's literal holds none).
_RAW_STRING_OPENS = r"(?:u8|[uUL])?R\"(?P<delimiter>[A-Za-z0-9_]{0,16})\("
_RAW_STRING_CONTENT = r"(?:[^)\"\r\n]|\)(?!(?P=delimiter)\")){6,400}+(?=\)(?P=delimiter)\")"
COMPARED_LITERAL = Rule(
    name="secret-assignment",
    pattern=lazy(
        r"(?<![A-Za-z0-9_.\-])(?P<key>"
        + CREDENTIAL_KEY
        + ")"
        + _COMPARED
        + r"(?:"
        + _RAW_STRING_OPENS
        + r"|"
        + _LITERAL_PREFIX
        + _OPENING_QUOTE
        + r")(?P<secret>(?(delimiter)"
        + _RAW_STRING_CONTENT
        + r"|(?:"
        + _quoted_content(6, 400)
        + r")))"
    ),
    anchors=GENERIC_ASSIGNMENT.anchors,
    lead=48,
    reach=480,
    check=_generic_check,
    after=lazy(
        r"[A-Za-z0-9_.\-]{0,128}"
        + _COMPARED
        + r"(?:(?:u8|[uUL])?R|"
        + _LITERAL_PREFIX
        + r")\\{0,8}[\"'`]"
        + _DIGIT_OR_BOTH_CASES
    ),
    start="identifier",
)
# Members before the compared name, null-safe ones too (`req?.`, Kotlin's `user?.` and
# `user!!.`, PHP's `$this->` and `$user?->`): the name is the last member, as a name's first
# reading reads it from its last `?.` on.
_MEMBERS = r"(?:[A-Za-z_][A-Za-z0-9_.]{0,40}(?:\?\.|!!\.|\??->)){0,3}"
# A literal a comparing call takes beside a credential's name, the name first
# (`hmac.compare_digest(token, "…")`, `strcmp(password, "…")`, PHP's `hash_equals($key,
# '…')`, Rails' `secure_compare(token, "…")`, a test's `assertEqual(api_key, "…")`, Rust's
# `assert_eq!(token, "…")`, Node's `assert.strictEqual(token, "…")`, Go's `assert.Equal(t,
# token, "…")`, C#'s `string.Equals(token, "…")`, AVA's `t.is(token, "…")`, Hamcrest's
# `assertThat(token, is("…"))`, Go's `subtle.ConstantTimeCompare([]byte(token), []byte("…"))`,
# Node's `crypto.timingSafeEqual(Buffer.from(token), Buffer.from("…"))`, Python's bytes
# `compare_digest(token, b"…")`), read as a compared literal is, raw or escaped in a
# transcript's JSON (a literal holding a quote, a backslash or a blank is not read so).
_COMPARING_CALLS = (
    "compare_digest(",
    "strcmp(",
    "strncmp(",
    "strcasecmp(",
    "hash_equals(",
    "secure_compare(",
    "constant_time_compare(",
    "timingsafeequal(",
    "assertequal(",
    "assertequals(",
    "assert_eq!(",
    "assert_ne!(",
    "assert_equal(",
    "assert.equal(",
    "assert.strictequal(",
    "assert.notequal(",
    "assert.notstrictequal(",
    "assert.deepequal(",
    "require.equal(",
    "require.notequal(",
    "assert.areequal(",
    "assert.arenotequal(",
    "string.equals(",
    "objects.equals(",
    "strings.equalfold(",
    "assertsame(",
    "assertnotsame(",
    "expect_eq(",
    "assert_eq(",
    "expect_streq(",
    "assert_streq(",
    "assertthat(",
    "xctassertequal(",
    "constanttimecompare(",
    "hmac.equal(",
    "bytes.equal(",
)
# AVA's assertions on its test's `t`, a name of their own.
_AVA_CALLS = ("t.is(", "t.not(", "t.deepequal(", "t.notdeepequal(")
# The call and its first arguments; Go's testify takes its test first (`assert.Equal(t, token,
# "…")`, `require.Equal(s.T(), …)`), Hamcrest and JUnit 4 a message.
_COMPARING_CALL = (
    r"(?i:"
    + "|".join(re.escape(call) for call in _COMPARING_CALLS)
    + "|"
    + "|".join(r"(?<![A-Za-z0-9_$.])" + re.escape(call) for call in _AVA_CALLS)
    + r")[ \t]{0,4}(?:[A-Za-z]{1,8}(?:\.T\(\))?,[ \t]{0,4})?"
    # A message first (Hamcrest's `assertThat("reason", token, is("…"))`, JUnit 4's
    # `assertEquals("message", "…", token)`).
    r"(?:\\{0,8}\"[^\"\\\r\n]{1,120}\\{0,8}\",[ \t]{0,4})?"
)
# What an argument may be wrapped in: the bytes of a string (Go's `[]byte(…)`, Node's
# `Buffer.from(…)`), a Hamcrest matcher (`is(…)`, `equalTo(…)`, `is(equalTo(…))`, named with
# its class: `Matchers.is(…)`, Kotlin's `` `is`(…) ``); and what
# follows a wrapped argument: Node's encoding (`Buffer.from(token, "utf8")`) and the
# wrappers' closing parentheses.
_WRAPPED = (
    r"(?:(?:\[\]byte|Buffer\.from|(?:(?:Core)?Matchers\.)?(?:is|`is`|not|equalTo(?:IgnoringCase)?))"
    r"\([ \t]{0,4}){0,2}"
)
_UNWRAPPED = (
    r"(?:[ \t]{0,4},[ \t]{0,4}\\{0,8}[\"'](?i:utf-?8|ascii|latin1|binary|hex|base64)"
    r"\\{0,8}[\"'])?(?:[ \t]{0,4}\)){0,2}"
)
# A quoted literal, escaped as a transcript's JSON may hold it; a template with a field
# (`\`v2-${id}\``, `"${prefix}x"`) is none.
_ESCAPED_LITERAL = (
    r"\\{0,8}(?P<quote>[\"'`])(?![^\"'`\\\s]{0,400}?\$\{)"
    + _DIGIT_OR_BOTH_CASES
    + r"(?P<secret>[^\"'`\\\s]{6,400})\\{0,8}(?P=quote)"
)
# A call or subscript a name is looked up by (`os.getenv("…")`, `headers["…"]`,
# `obj?.["…"]`), before the name.
_LOOKUP = r"[A-Za-z_][A-Za-z0-9_.]{0,40}(?:\?\.)?[(\[]\\{0,8}[\"']?"
COMPARED_IN_A_CALL = Rule(
    name="secret-assignment",
    pattern=lazy(
        _COMPARING_CALL
        + _WRAPPED
        + r"\$?"
        + _MEMBERS
        + r"(?P<lookup>"
        + _LOOKUP
        + r")?(?P<key>"
        + CREDENTIAL_KEY
        + r")(?:\(\))?"
        # The lookup's end, and a method of what it found (`headers["X-Token"].encode()`).
        + r"(?(lookup)\\{0,8}[\"']?[)\]](?:\.[A-Za-z_][A-Za-z0-9_]{0,20}\(\))?)"
        + _UNWRAPPED
        + r"[ \t]{0,4},[ \t]{0,4}"
        + _WRAPPED
        + _LITERAL_PREFIX
        + _ESCAPED_LITERAL
    ),
    anchors=(*_COMPARING_CALLS, *_AVA_CALLS),
    reach=560,
    check=_generic_check,
    start="anchor",
)
# The same literals written first (`"…" == token`, `"…".equals(apiKey)`, `"…" ===
# process.env.API_TOKEN`, `"…" == os.getenv("API_TOKEN")`, `compare_digest("…", token)`,
# `"…" === req?.client_secret`, a shell's `[ "…" = "$TOKEN" ]`): the name after the literal is
# its key (`compared`), judged as a name before its value is. A call's name is no
# credential's (`"…" == tokenizer.decode(ids)`), nor is an element's or a member's after it
# (`"…" == token?.type`).
_COMPARED_NAME = (
    r"[ \t]{0,4}(?:[$&]|\\{0,8}\"?\$\{?)?" + _MEMBERS + r"(?:" + _LOOKUP + r")?"
    r"(?P<compared>" + CREDENTIAL_KEY + r")(?:\(\))?(?P<method>" + NO_ARGUMENT_METHODS + r")?"
    r"(?![A-Za-z0-9_.\-(\[]|\?(?:[.\[]|->)|!!\.)"
)
# A default in a variable's expansion (`${TOKEN:-}`, `${API_KEY-none}`).
_DEFAULT_IN_A_TEST = r"(?::?[-=?+][^}\s\"'\\]{0,40})?"
# A shell's test (`[ "…" = "$TOKEN" ]`): its `=` compares a quoted literal with a variable's
# expansion, blanks around it (HCL's `"…" = "${var.token}"` is a map's key).
_SHELL_TEST = (
    r"[ \t]{1,4}=(?=[ \t]{1,4}\\{0,8}\"?\$\{?[A-Za-z_][A-Za-z0-9_]{0,80}"
    + _DEFAULT_IN_A_TEST
    + r"\}?\\{0,8}\"?(?:[ \t;]|\]|$))"
)
# What opens a shell's test before its first operand (a Nix attribute set's `"…" = "${x}";`
# is no test).
_OPENS_A_TEST = (
    r"(?P<test>(?<=\[[ \t])|(?<=\[\[[ \t])|(?<=\[[ \t]{2})|(?<=\[\[[ \t]{2})|(?<=test[ \t]))?"
)
LITERAL_COMPARED = Rule(
    name="secret-assignment",
    pattern=lazy(
        # Not after a backslash: the literal's escapes are read from the first.
        r"(?<![A-Za-z0-9_\\])"
        + _OPENS_A_TEST
        + _LITERAL_PREFIX
        + _ESCAPED_LITERAL
        + r"(?:[ \t]{0,4}"
        + _OPERATOR
        + r"|\.[Ee]quals(?:IgnoreCase)?\(|(?(test)"
        + _SHELL_TEST
        + r"|(?!)))"
        + _COMPARED_NAME
    ),
    # The literal's closing quote and the operator: far rarer than a credential's words, whose
    # hits stay those of assignments alone (`RuleSet.key_anchors`).
    anchors=(
        *(
            quote + blank + operator
            for quote in "\"'`"
            for blank in ("", " ", "  ", "\t")
            for operator in _OPERATORS
        ),
        '".equals',
        "'.equals",
        '" =',
        "' =",
    ),
    lead=460,
    reach=140,
    check=_generic_check,
    # A name holding one of the words an assignment's name is read for.
    after=lazy(
        r"(?:={1,2}|(?:IgnoreCase)?\()?[ \t]{0,4}(?:[$&]|\\{0,8}\"?\$\{?)?"
        + _MEMBERS
        + r"(?:"
        + _LOOKUP
        + r")?[A-Za-z0-9_.\-]{0,40}?(?i:"
        + "|".join(re.escape(word) for word in GENERIC_ASSIGNMENT.anchors)
        + ")"
    ),
)
LITERAL_IN_A_CALL = Rule(
    name="secret-assignment",
    pattern=lazy(
        _COMPARING_CALL
        + _WRAPPED
        + _LITERAL_PREFIX
        + _ESCAPED_LITERAL
        + _UNWRAPPED
        + r"[ \t]{0,4},[ \t]{0,4}"
        + _WRAPPED
        + _COMPARED_NAME
    ),
    anchors=(*_COMPARING_CALLS, *_AVA_CALLS),
    reach=560,
    check=_generic_check,
    start="anchor",
)
# A shell's `case` on a credential's expansion and its patterns, the first on the same line or
# the next, perhaps after comment lines (`case "$TOKEN" in` then `"…")`): a literal compared
# with the name, quoted or bare (a glob is none), and each one after it (`further`).
_CASE_GAP = r"(?:[ \t]|\r?\n|\\{1,8}[nrt]|#[^\r\n\\]{0,400}+)"
# A character of an arm's body: up to its `;;`, `;&` or `;;&`, never past an `esac`.
_ARM_BODY = r"(?:[^;\\e]|\\[\s\S]|;(?![;&])|e(?!sac(?![A-Za-z0-9_])))"
CASE_PATTERN = Rule(
    name="secret-assignment",
    pattern=lazy(
        r"(?<![A-Za-z0-9_])case[ \t]{1,4}\\{0,8}\"?\$\{?(?P<compared>"
        + CREDENTIAL_KEY
        + r")"
        + _DEFAULT_IN_A_TEST
        + r"\}?\\{0,8}\"?[ \t]{1,4}in(?![A-Za-z0-9_])(?:"
        + _CASE_GAP
        + r"{1,40}+\(?[ \t]{0,4}\\{0,8}(?P<quote>[\"']?)"
        + _DIGIT_OR_BOTH_CASES
        + r"(?P<secret>[^\"'`\\\s|()*?\[\]]{6,400})\\{0,8}(?P=quote)[ \t]{0,4}[|)])?"
    ),
    anchors=("case ", "case\t"),
    reach=560,
    check=_generic_check,
    start="anchor",
    # From the case's `in` or its first pattern's `|` or `)`: the next alternative of the same
    # arm after `|`; after `)` the arm's body up to its `;;` (or `;&`, `;;&`), no `esac`
    # within; then the next arm's pattern. Any pattern is read to step over (`ghp_*)`,
    # `--help)`), a literal's is its `secret`. A body with no end within its reach, or whose
    # end no pattern follows, is read over once and ends the reading (a `case` opened in it
    # reads it no more, so each body is read once).
    further=lazy(
        r"(?:(?<=\|)[ \t]{0,4}"
        r"|(?<=\))"
        + _ARM_BODY
        + r"{0,2000}+;(?:;&?|&)"
        + _CASE_GAP
        + r"{0,40}+|(?<![|)])"
        + _CASE_GAP
        + r"{1,40}+)\(?[ \t]{0,4}\\{0,8}(?P<quote>[\"']?)(?:(?=[^\"'`\\\s|()*?\[\]]{6})"
        + _DIGIT_OR_BOTH_CASES
        + r"(?P<secret>[^\"'`\\\s|()*?\[\]]{6,400})|[^\"'`\\\s|()]{1,400}?)\\{0,8}(?P=quote)"
        r"[ \t]{0,4}[|)]|(?<=\))" + _ARM_BODY + r"{1,2000}+"
    ),
)
# A literal among those a credential's name is tested for membership in, on the same line
# (Python's `if token in ("…", "…"):`, `not in ["…"]`, `in {"…"}`): the first, and each one
# after it (`further`), judged as a compared literal is; any other literal is stepped over.
_MEMBERSHIP = r"[ \t]{1,4}(?:not[ \t]{1,4})?in[ \t]{1,4}[(\[{][ \t]{0,4}"
LITERAL_IN_A_TUPLE = Rule(
    name="secret-assignment",
    pattern=lazy(
        r"(?<![A-Za-z0-9_.\-])(?P<compared>"
        + CREDENTIAL_KEY
        + r")(?:\(\))?"
        + _MEMBERSHIP
        + r"(?:"
        + _LITERAL_PREFIX
        + _ESCAPED_LITERAL
        + r")?"
    ),
    # The test and its first quote (escaped in JSON), rarer than a credential's words; the name
    # is read back from it.
    anchors=tuple(
        negation + " in " + bracket + quote
        for negation in ("", " not")
        for bracket in "([{"
        for quote in ('"', "'", "\\")
    ),
    lead=64,
    reach=480,
    check=_generic_check,
    start="identifier",
    further=lazy(
        # The first literal where the match read none (`in ("v2", "…")`), then each after a comma.
        r"(?:[ \t]{0,4},[ \t]{0,4}|(?<=[(\[{ \t]))"
        + _LITERAL_PREFIX
        + r"\\{0,8}(?P<quote>[\"'])(?:(?=[^\"'`\\\s]{6})"
        + _DIGIT_OR_BOTH_CASES
        + r"(?P<secret>[^\"'`\\\s]{6,400})|[^\"'\\\r\n]{0,400}?)\\{0,8}(?P=quote)"
    ),
)
# A literal code falls back on after a credential's assignment (`password =
# process.env.DB_PASSWORD || '…'`, `{token: opts.token ?? "…"}`, `token = getenv('TOKEN') or
# '…'`, `password = str(os.getenv("DB_PASSWORD")) or '…'`, `token = isProd ?
# process.env.TOKEN : '…'`, `password = os.environ["DB_PASSWORD"] if prod else '…'`, Kotlin's
# `System.getenv("TOKEN") ?: "…"`; `syntax.FALLBACK_CHAIN`): the literal only, judged as
# `secret-assignment` judges one right after the name.
FALLBACK_ASSIGNMENT = Rule(
    name="secret-assignment",
    pattern=lazy(
        r"(?<![A-Za-z0-9_.\-])(?P<key>"
        + CREDENTIAL_KEY
        + ")"
        + KEY_ASSIGN
        + syntax.FALLBACK_CHAIN
        + quoted_value(6)
    ),
    anchors=GENERIC_ASSIGNMENT.anchors,
    lead=48,
    reach=720,
    check=_generic_check,
    after=lazy(r"[A-Za-z0-9_.\-]{0,128}" + KEY_ASSIGN + syntax.FALLBACK_AHEAD),
    start="identifier",
)
# The default of a lookup whose key names a credential (`os.environ.get('DB_PASS', '…')`,
# `os.getenv("API_TOKEN", "…")`, `settings.get("client_secret", "…")`, `process.env.API_KEY
# ?? '…'`, `ENV['TOKEN'] || '…'`, `os.environ["DB_PASSWORD"] if prod else '…'`;
# `syntax.LOOKUP_OPEN`, `syntax.LOOKUP_DEFAULT`), whatever the name it is assigned to.
_LOOKUP_KEY = r"[A-Za-z0-9_.\-]{0,40}?(?i:" + SECRET_KEY_WORDS + r")"
LOOKUP_DEFAULT = Rule(
    name="secret-assignment",
    pattern=lazy(
        syntax.LOOKUP_OPEN
        + r"(?P<key>"
        + _LOOKUP_KEY
        + r"[A-Za-z0-9_.\-]{0,30}+)"
        + syntax.LOOKUP_DEFAULT
        + quoted_value(6)
    ),
    anchors=(
        "getenv(",
        ".get(",
        ".fetch(",
        "getordefault(",
        "getproperty(",
        "env[",
        "environ[",
        "env.",
    ),
    reach=560,
    check=_generic_check,
    # A quoted key (`getenv("API_TOKEN"`, maybe escaped) or an environment's member's name.
    after=lazy(
        r"(?:[ \t]{0,4}\\{0,64}+[\"'`][A-Za-z0-9_.\-]{0,40}?|[A-Za-z0-9_]{0,40}?)(?i:"
        + SECRET_KEY_WORDS
        + r")"
    ),
)
# The default a shell's parameter expansion supplies (`syntax.EXPANSION_NAME`,
# `syntax.EXPANSION_OPERATOR`), after a credential's assignment (`PASSWORD=${PASSWORD:-'…'}`,
# `export DB_PASSWORD="${DB_PASSWORD:-…}"`, `POSTGRES_PASSWORD: ${POSTGRES_PASSWORD:-…}` in a
# compose file, `{PASSWORD:-'…'}` without its `$`) or as the default of a variable that names
# one (`${API_TOKEN:=…}`, whatever it is assigned to): the literal alone, quoted or bare up to
# the `}` that closes the expansion, never the code before it. A bare default holds no
# expansion or command of its own (`${PASSWORD:-$OTHER}`, `${A:-${B}}`).
_DEFAULT_AFTER_OPERATOR = (
    r"(?:" + _OPENING_QUOTE + r")?(?P<secret>"
    r"(?<=\")(?:[^\"\\\r\n]|\\[^\r\n]){6,400}+(?=\"\})"
    r"|(?<=')[^'\r\n]{6,400}+(?='\})"
    r"|(?<=[-=])(?!\$)(?:(?!\$[{(])[^\s}\"'`\\]){6,400}+(?=\})"
    r")"
)
_EXPANSION_DEFAULT = syntax.EXPANSION_OPERATOR + _DEFAULT_AFTER_OPERATOR
_EXPANSION_AFTER_KEY = r"(?:\\{0,8}[\"'])?\$?\{"


def _default_rule(pattern: str, after: str, anchors: tuple[str, ...], check: Check) -> Rule:
    """A rule that reads a parameter expansion's default alone (`reads_defaults`), from the
    identifier holding its anchor; `after`: what must follow the anchor there."""
    return Rule(
        name="secret-assignment",
        pattern=lazy(pattern),
        anchors=anchors,
        lead=48,
        reach=560,
        check=check,
        after=lazy(after),
        reads_defaults=True,
        start="identifier",
    )


def _expansion_rules(
    key: str, name: str, anchors: tuple[str, ...], check: Check
) -> tuple[Rule, Rule]:
    """The rules that read a parameter expansion's default (`_EXPANSION_DEFAULT`) after the
    assignment of a name `key` matches, and after the expansion's `${` and a variable's name
    `name` matches, as `check` judges it."""
    outer = _default_rule(
        r"(?<![A-Za-z0-9_.\-])(?P<key>"
        + key
        + ")"
        + KEY_ASSIGN
        + _EXPANSION_AFTER_KEY
        + syntax.EXPANSION_NAME
        + _EXPANSION_DEFAULT,
        r"[A-Za-z0-9_.\-]{0,128}" + KEY_ASSIGN + _EXPANSION_AFTER_KEY + "[A-Za-z_]",
        anchors,
        check,
    )
    inner = _default_rule(
        r"(?<=\$\{)(?P<key>" + name + ")" + _EXPANSION_DEFAULT,
        r"[A-Za-z0-9_]{0,72}+" + syntax.EXPANSION_OPERATOR,
        anchors,
        check,
    )
    return outer, inner


# Judged as a literal after a credential's name is (`secret-assignment`'s check); the default
# of an upper-case name an environment line's rules know is judged as such a line's value too
# (`ENV_EXPANSION_DEFAULTS`).
EXPANSION_DEFAULTS = _expansion_rules(
    CREDENTIAL_KEY,
    r"[A-Za-z0-9_]{0,40}?(?i:" + SECRET_KEY_WORDS + r")[A-Za-z0-9_]{0,30}+",
    GENERIC_ASSIGNMENT.anchors,
    _generic_check,
)
# C++'s direct and list initialisation of a declared name (`std::string secret("…")`,
# `std::string api_key{"…"}`, `QString password ("…")`, `char token[] {"…"}`): a type, `*` or
# `&` before the name, a string literal in the parentheses or braces. A call with no type
# before its name (`check_password("…")`, `user.set_password("…")`) is not read so.
DIRECT_INIT = r"(?:\[[0-9]{0,6}\])?[ \t]{0,2}(?=[({][ \t]{0,2}(?:u8|[LuU])?[\"'])"
DIRECT_INIT_ASSIGNMENT = Rule(
    name="secret-assignment",
    pattern=lazy(
        r"(?:(?<=[A-Za-z0-9_>][ \t])|(?<=[*&]))(?P<key>[A-Za-z0-9_]{0,40}?(?i:"
        + SECRET_KEY_WORDS
        + r")[A-Za-z0-9_]{0,30})"
        + DIRECT_INIT
        + whole_value(6)
    ),
    anchors=GENERIC_ASSIGNMENT.anchors,
    lead=48,
    reach=480,
    check=_generic_check,
    after=lazy(r"[A-Za-z0-9_]{0,128}" + DIRECT_INIT),
    start="identifier",
)
# A command's flag named for a credential and its value after a blank (`vercel deploy --token
# …`, `--api-key …`, `vault login -token …`): the flag's name ends in the credential's word
# (`--token-file`, `--password-stdin`, `--max-tokens` name no value), and the value must look
# generated, as an assignment's (a reference, a placeholder, a path, a word stay), and not a
# spec of `name=value` pairs (BuildKit's `--secret id=npmrc,src=…` names a file). A flag's
# `=` (`--token=…`) is an assignment. AWS CLI's `--secret-string` is the secret itself.
_FLAG_WORDS = r"token|secret(?:[_\-]string)?|password|passwd|api[_\-]?key"
FLAG_ASSIGNMENT = Rule(
    name="secret-assignment",
    pattern=lazy(
        r"(?<![A-Za-z0-9_.\-])--?(?P<key>(?:[A-Za-z0-9]{1,20}[_\-]){0,3}(?i:"
        + _FLAG_WORDS
        + r"))[ \t]{1,4}(?!-)(?![A-Za-z_]{1,20}=)"
        + whole_value(6)
    ),
    anchors=(
        "-token ",
        "-secret ",
        "-secret-string ",
        "-password ",
        "-passwd ",
        "-api-key ",
        "-apikey ",
        "_key ",
    ),
    lead=72,
    reach=480,
    check=_generic_check,
)
# A key ending so names metadata about a credential, not the credential.
METADATA_KEY_SUFFIXES = (
    "id",
    "ids",
    "name",
    "names",
    "type",
    "types",
    "file",
    "path",
    "dir",
    "url",
    "uri",
    "count",
    "len",
    "length",
    "size",
    "limit",
    "tokens",
    "env",
    "var",
    "ref",
    "field",
    "prefix",
    "arn",
    "version",
    "ttl",
    "expiry",
    "expires",
    "at",
    "usage",
    "budget",
    "label",
    "hint",
    "format",
    "policy",
    "endpoint",
    "mode",
    "kind",
    "source",
    "provider",
    "manager",
    "store",
    "class",
    "method",
    "rotation",
    "location",
    "scope",
    "scopes",
    "hash",
    "digest",
    "checksum",
    "fingerprint",
    "sha",
    "thumbprint",
    "hasher",
    "algorithm",
    "algo",
    "backend",
    "scheme",
    "strategy",
    "timeout",
    "lifetime",
    "rounds",
    "template",
    "enabled",
    "required",
)


def build_rules() -> tuple[Rule, ...]:
    """Specific formats first: when two rules cover the same text the earlier one names it."""
    hexd = "[0-9a-fA-F]"
    rules = [
        Rule(
            name="private-key",
            pattern=lazy(r"-----BEGIN(?P<label>[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?)-----"),
            anchors=("-----begin",),
            reach=70000,
            prefix="-----BEGIN",
            multiline=True,
            start="anchor",
            # Up to the END line of the same label over key material only; a key cut short
            # (a truncated log) still loses its whole body; a bare header is no secret.
            block=key_block_end,
        ),
        # OpenVPN's static key (`openvpn --genkey`, inline in a profile's `<tls-auth>` or
        # `<tls-crypt>`): 2048 bits shared by both ends, in hex lines.
        Rule(
            name="private-key",
            pattern=lazy(r"-----BEGIN(?P<label> OpenVPN (?:tls-crypt-v2 )?Static key V1)-----"),
            anchors=("-----begin openvpn ",),
            reach=70000,
            prefix="-----BEGIN",
            multiline=True,
            start="anchor",
            block=key_block_end,
        ),
        # An OpenSSH private key's body without its header (a copy of its lines, a grep):
        # base64 of `openssh-key-v1\0`, which no public key starts with, and the base64
        # lines after it (16 characters or more each; a wrapped last piece is `wrapped.py`'s).
        Rule(
            name="private-key",
            pattern=lazy(
                NOT_ALNUM_BEFORE + r"b3BlbnNzaC1rZXktdjEAAAAA[A-Za-z0-9+/]{0,4096}={0,2}"
                r"(?:(?:\r?\n|\\n)[A-Za-z0-9+/]{16,4096}={0,2}){0,400}"
            ),
            anchors=("b3blbnnzac1rzxktdjeaaaaa",),
            reach=70000,
            prefix="b3BlbnNzaC1rZXktdjE",
            multiline=True,
            start="anchor",
        ),
        # SSH.com's SSH2 keys (RFC 4716 framing): header lines, the body, the END line.
        Rule(
            name="private-key",
            pattern=lazy(r"---- BEGIN (?P<label>SSH2 (?:ENCRYPTED )?PRIVATE KEY) ----"),
            anchors=("---- begin ssh2",),
            reach=70000,
            prefix="---- BEGIN",
            multiline=True,
            start="anchor",
            block=ssh2_key_block_end,
        ),
        Rule(
            name="putty-private-key",
            # The private lines, each whole (a run over the newlines took `Private` of the
            # MAC line and left the MAC), then the MAC; each line may follow its number and a
            # tab (or `→`), as a Read tool shows a file.
            pattern=lazy(
                rf"Private-Lines:[ \t]{{0,4}}\d{{1,3}}{_NUMBERED_LINE_END}"
                rf"(?:[A-Za-z0-9+/=]{{1,128}}+(?:{_NUMBERED_LINE_END}|\Z)){{1,128}}+"
                r"(?:Private-MAC:[ \t]{0,4}[0-9a-fA-F]{1,128})?"
            ),
            anchors=("private-lines:",),
            reach=17000,
            multiline=True,
            start="anchor",
        ),
        _token("age-secret-key", ("AGE-SECRET-KEY-1",), "[0-9A-Z]{58}"),
        Rule(
            name="aws-access-key-id",
            # After an escaped newline too (`\nAKIA…` in JSON quoted twice: its `n` is no boundary).
            pattern=lazy(
                r"(?:(?<![A-Za-z0-9])|(?<=\\n))(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Z0-9])"
            ),
            # ASIA/ABIA/ACCA are common letters: look for them only near an "aws" mention.
            anchors=("akia", "aws"),
            lead=300,
            reach=300,
            prefix="A",
            check=_random_body,
        ),
        Rule(
            name="aws-secret-access-key",
            pattern=lazy(
                r"(?i:aws[_\-]?secret[_\-]?(?:access[_\-]?)?key|secret[_\-]?access[_\-]?key)"
                # `= value`, or blanks (`aws configure set aws_secret_access_key <value>`), or
                # a table's column (`| SecretAccessKey | <value> |`)
                + r"(?:"
                + _ASSIGN
                + r"|[ \t]{1,4}(?:\|[ \t]{1,4})?)"
                + r"[\"'`]?(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"
            ),
            anchors=(
                "aws_secret",
                "aws-secret",
                "awssecret",
                "secret_access_key",
                "secretaccesskey",
            ),
            lead=12,
            reach=120,
            check=_not_placeholder,
            start="anchor",
        ),
        # The secret beside its key id, unnamed: a console's `credentials.csv` (`user,AKIA…,
        # <secret>`), `boto3.client('s3', 'AKIA…', '<secret>')`, a table's row. A run of 40
        # base64 characters, random in both cases and digits (a commit id is hex), on the id's
        # line or one of the two after it, before any other id.
        Rule(
            name="aws-secret-access-key",
            pattern=lazy(
                NOT_ALNUM_BEFORE
                + r"(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])"
                + r"(?:"
                + _AWS_LINE
                + r"(?:\r?\n|\\n)){0,2}?"
                + _AWS_LINE
                + r"(?<![A-Za-z0-9/+=])(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"
            ),
            anchors=("akia", "asia"),
            reach=700,
            multiline=True,
            check=_aws_secret_beside_id,
        ),
        # The same pair the other way round: the secret first, its key id on the same line or
        # one of the two after it (`<secret>,AKIA…` in a file written so, a script's secret
        # line above its id line), before any other id.
        Rule(
            name="aws-secret-access-key",
            pattern=lazy(
                r"(?:(?<![A-Za-z0-9/+=])|(?<=\\n))(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"
                + r"(?:"
                + _AWS_LINE
                + r"(?:\r?\n|\\n)){0,2}?"
                + _AWS_LINE
                + r"(?:(?<![A-Za-z0-9])|(?<=\\n))(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])"
            ),
            anchors=("akia", "asia"),
            lead=800,
            reach=20,
            multiline=True,
            check=_aws_secret_beside_id,
            after=lazy(r"[A-Z0-9]{16}(?![A-Za-z0-9])"),
        ),
        _token("github-fine-grained-token", ("github_pat_",), "[A-Za-z0-9_]{50,255}"),
        _token("github-token", ("ghp_",), "[A-Za-z0-9]{36,251}"),
        _token("github-oauth-token", ("gho_",), "[A-Za-z0-9]{36,251}"),
        _token("github-app-token", ("ghu_", "ghs_"), "[A-Za-z0-9]{36,251}"),
        _token("github-refresh-token", ("ghr_",), "[A-Za-z0-9]{36,251}"),
        _token(
            "gitlab-token",
            tuple(
                f"gl{kind}-"
                for kind in ("pat", "dt", "rt", "ptt", "cbt", "ft", "imt", "oas", "soat", "agent")
            ),
            "[A-Za-z0-9_\\-]{20,64}",
        ),
        _token(
            "slack-token",
            (*tuple(f"xox{kind}-" for kind in "abpre"), "xoxe.xox", "xapp-"),
            "[A-Za-z0-9\\-]{10,250}",
        ),
        # Legacy tokens: three numbers, then hex. "xoxo" alone is also everyday text.
        _token("slack-token", ("xoxo-", "xoxs-"), "[0-9]+-[0-9]+-[0-9]+-[A-Fa-f0-9]{8,64}"),
        Rule(
            name="slack-webhook",
            pattern=lazy(
                r"https?://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/\-]{20,200}"
            ),
            anchors=("hooks.slack.com",),
            lead=8,
            reach=240,
            prefix="https://hooks.slack.com/",
        ),
        _token(
            "stripe-secret-key",
            ("sk_live_", "sk_test_", "rk_live_", "rk_test_"),
            "[A-Za-z0-9]{20,247}",
        ),
        _token("stripe-webhook-secret", ("whsec_",), "[A-Za-z0-9+/=]{24,128}"),
        _token("anthropic-api-key", ("sk-ant-",), "[A-Za-z0-9_\\-]{20,250}"),
        _token(
            "openai-api-key",
            ("sk-proj-", "sk-svcacct-", "sk-admin-", "sk-None-"),
            "[A-Za-z0-9_\\-]{20,250}",
        ),
        Rule(
            name="openai-api-key",
            pattern=lazy(
                NOT_ALNUM_BEFORE + r"sk-(?!ant-|proj-|svcacct-|admin-)[A-Za-z0-9]{20,128}"
                r"(?![A-Za-z0-9_\-])"
            ),
            anchors=("sk-",),
            prefix="sk-",
            check=lambda value, strict: heuristics.looks_random(
                value[3:], min_length=20, min_entropy=3.5
            ),
        ),
        _token("google-api-key", ("AIza",), "[0-9A-Za-z_\\-]{35}"),
        _token("google-oauth-client-secret", ("GOCSPX-",), "[A-Za-z0-9_\\-]{24,40}"),
        _token(
            "google-oauth-access-token", ("ya29.",), "[A-Za-z0-9_\\-]{20,2048}", extend=TOKEN + "."
        ),
        Rule(
            name="gcp-private-key-id",
            pattern=lazy(r"\"private_key_id\"[ \t]{0,4}:[ \t]{0,4}\"(?P<secret>[0-9a-f]{40})\""),
            anchors=("private_key_id",),
            lead=1,
            reach=64,
        ),
        Rule(
            name="azure-storage-key",
            pattern=lazy(
                r"(?i:accountkey|sharedaccesskey)[ \t]{0,2}=[ \t]{0,2}"
                r"(?P<secret>[A-Za-z0-9+/]{40,90}={0,2})"
            ),
            anchors=("accountkey", "sharedaccesskey"),
            reach=120,
            start="anchor",
        ),
        Rule(
            name="azure-client-secret",
            pattern=lazy(
                r"(?<![A-Za-z0-9_~.\-])[A-Za-z0-9_~.\-]{3}\dQ~[A-Za-z0-9_~.\-]{31,34}(?![A-Za-z0-9_~.\-])"
            ),
            anchors=("q~",),
            lead=4,
            reach=40,
            check=_random_body,
        ),
        Rule(
            name="azure-sas-signature",
            pattern=lazy(r"(?<=[?&])sig=(?P<secret>[A-Za-z0-9%+/]{40,120}(?:={1,2}|%3[dD]){0,2})"),
            anchors=("sig=",),
            reach=140,
            start="anchor",
        ),
        # A C identifier (Wireshark's hf_<protocol>_<field>) is one case and goes on with _.
        _token(
            "huggingface-token",
            ("hf_",),
            "[A-Za-z0-9]{30,40}(?![A-Za-z0-9_])",
            check=_mixed_case_body,
        ),
        _token("huggingface-org-token", ("api_org_",), "[A-Za-z0-9]{30,40}"),
        _token("npm-token", ("npm_",), "[A-Za-z0-9]{36}"),
        Rule(
            name="npm-auth-token",
            # `_auth` starts its key (`//registry/:_authToken=`), not `proxy_auth=`.
            pattern=lazy(
                r"(?<![A-Za-z0-9])_auth(?:Token)?[ \t]{0,2}=[ \t]{0,2}(?P<secret>[^\s\"'\\]{8,256})"
            ),
            anchors=("_authtoken", "_auth="),
            reach=280,
            check=_npm_auth,
            start="anchor",
        ),
        _token("pypi-token", ("pypi-AgE",), "[A-Za-z0-9_\\-]{50,400}"),
        _token("twilio-api-key", ("SK",), "[0-9a-fA-F]{32}(?![A-Za-z0-9])", check=_random_body),
        _token("sendgrid-api-key", ("SG.",), "[A-Za-z0-9_\\-]{22}\\.[A-Za-z0-9_\\-]{43}"),
        Rule(
            name="mailchimp-api-key",
            pattern=lazy(NOT_ALNUM_BEFORE + r"[0-9a-f]{32}-us\d{1,2}(?![A-Za-z0-9])"),
            anchors=("-us",),
            lead=33,
            reach=8,
        ),
        _token("mailgun-api-key", ("key-",), "[0-9a-f]{32}(?![A-Za-z0-9])"),
        _token("brevo-api-key", ("xkeysib-",), "[a-f0-9]{64}-[A-Za-z0-9]{16}"),
        Rule(
            name="discord-bot-token",
            pattern=lazy(
                r"(?<![A-Za-z0-9_\-])[MNO][A-Za-z0-9_\-]{23,27}\.[A-Za-z0-9_\-]{6,7}\."
                r"[A-Za-z0-9_\-]{27,40}(?![A-Za-z0-9_\-])"
            ),
            anchors=("discord", "bot "),
            reach=400,
            check=_random_body,
        ),
        Rule(
            name="discord-webhook",
            pattern=lazy(
                r"discord(?:app)?\.com/api/webhooks/\d{5,30}/(?P<secret>[A-Za-z0-9_\-]{50,100})"
            ),
            anchors=("/api/webhooks/",),
            lead=20,
            reach=200,
        ),
        Rule(
            name="telegram-bot-token",
            pattern=lazy(r"(?<![0-9])\d{8,10}:AA[A-Za-z0-9_\-]{32,34}(?![A-Za-z0-9_\-])"),
            anchors=("bot",),
            lead=300,
            reach=300,
        ),
        # Without `bot` in sight (`I set it to 7213808860:AAH1…`): the `:AA` that starts every
        # token's secret, after the bot's id.
        Rule(
            name="telegram-bot-token",
            pattern=lazy(r"(?<![0-9])\d{8,10}:AA[A-Za-z0-9_\-]{32,34}(?![A-Za-z0-9_\-])"),
            anchors=(":aa",),
            lead=11,
            reach=35,
            check=_telegram_secret,
        ),
        _token("shopify-token", ("shpat_", "shpca_", "shppa_", "shpss_"), "[a-fA-F0-9]{32}"),
        _token("digitalocean-token", ("dop_v1_", "doo_v1_", "dor_v1_"), "[a-f0-9]{64}"),
        Rule(
            name="databricks-token",
            pattern=lazy(NOT_ALNUM_BEFORE + r"dapi[a-f0-9]{32}(?:-\d)?(?![A-Za-z0-9])"),
            anchors=("databricks",),
            lead=300,
            reach=300,
            prefix="dapi",
        ),
        _token("vault-token", ("hvs.", "hvb.", "hvr."), "[A-Za-z0-9_\\-]{24,255}"),
        _token(
            "doppler-token",
            tuple(f"dp.{kind}." for kind in ("pt", "st", "sa", "ct", "scim", "audit")),
            "[A-Za-z0-9]{40,44}",
        ),
        _token("pulumi-token", ("pul-",), "[a-f0-9]{40}"),
        _token(
            "sentry-token", ("sntrys_", "sntryu_"), "[A-Za-z0-9+/=_]{50,400}", extend=TOKEN + "+/="
        ),
        _token("heroku-api-key", ("HRKU-",), "[A-Za-z0-9_\\-]{20,100}"),
        Rule(
            name="heroku-api-key",
            # A name ending so names metadata (`HEROKU_APP_ID`) holds a public UUID.
            pattern=lazy(
                r"(?P<key>(?i:heroku)[A-Za-z0-9_\-]{0,30})" + _ASSIGN + r"[\"'`]?(?P<secret>"
                r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})"
            ),
            anchors=("heroku",),
            reach=120,
            start="anchor",
        ),
        _token("linear-api-key", ("lin_api_", "lin_oauth_"), "[A-Za-z0-9]{40,64}"),
        _token("postman-api-key", ("PMAK-",), f"{hexd}{{24}}-{hexd}{{34}}"),
        _token("grafana-token", ("glc_",), "[A-Za-z0-9+/]{32,400}={0,2}", extend=TOKEN + "+/="),
        _token("grafana-service-account-token", ("glsa_",), f"[A-Za-z0-9]{{32}}_{hexd}{{8}}"),
        _token("grafana-api-key", ("eyJrIjoi",), "[A-Za-z0-9+/]{30,400}={0,2}", extend=BASE64),
        _token("new-relic-key", ("NRAK-", "NRII-", "NRJS-", "NRRA-"), "[A-Za-z0-9]{20,40}"),
        Rule(
            name="new-relic-license-key",
            pattern=lazy(NOT_ALNUM_BEFORE + r"[a-f0-9]{36}NRAL(?![A-Za-z0-9])"),
            anchors=("newrelic", "new_relic", "new-relic"),
            lead=300,
            reach=300,
        ),
        _token(
            "dynatrace-token",
            ("dt0c01.", "dt0s01.", "dt0s02.", "dt0s16."),
            "[A-Za-z0-9]{24}\\.[A-Za-z0-9]{64}",
            extend=TOKEN + ".",
        ),
        _token("atlassian-api-token", ("ATATT3",), "[A-Za-z0-9_\\-=]{100,300}"),
        _token("artifactory-api-key", ("AKCp",), "[A-Za-z0-9]{60,80}"),
        _token("square-token", ("sq0csp-", "sq0atp-"), "[A-Za-z0-9_\\-]{22,100}"),
        _token("supabase-token", ("sbp_",), "[a-f0-9]{40}"),
        _token("figma-token", ("figd_",), "[A-Za-z0-9_\\-]{40,64}"),
        _token("notion-token", ("ntn_",), "[A-Za-z0-9]{40,60}"),
        # Notion's internal integration secret, `secret_` and 43 letters and digits, in prose too.
        _token("notion-token", ("secret_",), "[A-Za-z0-9]{43}(?![A-Za-z0-9_])", extend=""),
        # An Airtable personal access token, `pat`, 14 letters and digits, `.` and 64 hex: the
        # dot and the hex after it say what it is where no vendor's name stands beside it. No
        # anchor: `pat` starts every `path`, and a search for the whole shape, its literal
        # first, costs far less than a hit of each (the name beside it is `airtable-token`'s
        # provider rule).
        Rule(
            name="airtable-token",
            pattern=lazy(
                r"pat(?:(?<![A-Za-z0-9]pat)|(?<=\\[nrt]pat)|(?<=%[0-9A-Fa-f]{2}pat))"
                r"[A-Za-z0-9]{14}\.[a-f0-9]{64}(?![A-Za-z0-9_])"
            ),
            anchors=(),
            prefix="pat",
            check=_random_body,
        ),
        # A legacy Firebase Cloud Messaging server key: `AAAA`, 7 characters, `:APA91b`, 134.
        Rule(
            name="fcm-server-key",
            pattern=lazy(
                NOT_ALNUM_BEFORE
                + r"AAAA[A-Za-z0-9_\-]{7}:APA91b[A-Za-z0-9_\-]{134}(?![A-Za-z0-9_\-])"
            ),
            anchors=(":apa91b",),
            lead=11,
            reach=140,
            prefix="AAAA",
        ),
        _token("groq-api-key", ("gsk_",), "[A-Za-z0-9]{48,64}"),
        _token("replicate-token", ("r8_",), "[A-Za-z0-9]{37,40}"),
        _token("perplexity-api-key", ("pplx-",), "[A-Za-z0-9]{40,64}"),
        _token("xai-api-key", ("xai-",), "[A-Za-z0-9]{60,100}"),
        _token(
            "jwt",
            ("eyJ",),
            "[A-Za-z0-9_\\-]{8,4000}\\.eyJ[A-Za-z0-9_\\-]{8,8000}\\.[A-Za-z0-9_\\-]{0,4000}",
            extend=TOKEN,
            check=None,
        ),
        Rule(
            name="url-password",
            pattern=lazy(
                r":(?://|\\/\\/)(?P<user>"
                + URL_USER
                + r"):(?P<secret>"
                + URL_PASSWORD
                + r")"
                + URL_HOST_AFTER
            ),
            anchors=("://", ":\\/\\/"),
            reach=400,
            check=_userinfo_password,
            start="anchor",
        ),
        Rule(
            name="jdbc-password",
            pattern=lazy(
                r"jdbc:oracle:[a-z]{1,10}:(?P<user>[^/\s:@\"']{1,64})/(?P<secret>[^@\s\"']{1,128})@"
            ),
            anchors=("jdbc:oracle",),
            reach=220,
            check=_userinfo_password,
            start="anchor",
        ),
        Rule(
            name="query-password",
            pattern=lazy(
                r"(?<=[?&;])(?i:password|passwd|pwd|pass)=(?P<secret>[^&;\s\"'#\\]{1,256})"
            ),
            anchors=("password=", "passwd=", "pwd=", "pass="),
            lead=1,
            reach=280,
            check=_password_value,
            start="anchor",
        ),
        # SQL's password for a user: `CREATE USER 'app'@'%' IDENTIFIED BY '…'` (MySQL,
        # MariaDB, Oracle; `ALTER USER`, `GRANT … TO 'app'@'%' IDENTIFIED BY '…'`, `IDENTIFIED
        # WITH caching_sha2_password BY '…'`) and `SET PASSWORD FOR … = '…'` (`=
        # PASSWORD('…')` of old): a literal there is a password whatever it reads. A hash
        # stays (`BY PASSWORD '*…'`, Oracle's `BY VALUES '…'`, `AS '…'`), as do `BY RANDOM
        # PASSWORD` and prose's "the key identified by `name`". Oracle's unquoted password
        # (`_SQL_UNQUOTED_PASSWORD`). And PostgreSQL's literal after `PASSWORD` in the options
        # of `CREATE`/`ALTER USER` or `ROLE`.
        Rule(
            name="sql-password",
            pattern=lazy(_SQL_PASSWORD_BEFORE + _QUOTED_ONLY + quoted_value(6)),
            anchors=("identified", "set password"),
            lead=320,
            reach=480,
            check=_sql_password,
            multiline=True,
        ),
        Rule(
            name="sql-password",
            pattern=lazy(_SQL_UNQUOTED_PASSWORD),
            anchors=("identified",),
            lead=320,
            reach=300,
            check=_sql_password,
            multiline=True,
        ),
        Rule(
            name="sql-password",
            pattern=lazy(_SQL_ROLE_PASSWORD_BEFORE + quoted_value(6)),
            anchors=("password '",),
            lead=300,
            reach=480,
            check=_sql_password,
        ),
        # ADO.NET/ODBC `Password=`/`Pwd=` between `;` separators: any value but a template.
        # Not code's statement assigning a name of letters to a variable, first on its line
        # or after a blank (`password = strict;`, `password = options;`).
        Rule(
            name="connection-string-password",
            pattern=lazy(
                r"(?:(?P<separated>(?<=;))|(?:(?<=^)|(?<=[\s\"']))"
                r"(?![ \t]{0,4}password[ \t]{1,4}={1,3}[ \t]{1,4}[a-z_$][A-Za-z_$]{0,80};))"
                r"[ \t]{0,4}(?P<name>(?i:password|pwd))[ \t]{0,4}={1,3}[ \t]{0,4}"
                + _VALUE_THEN_END
                + _CONNECTION_VALUE
                # after a `;`, up to the next, a libpq key or the string's end; else a `;`
                # must follow
                + r"(?(separated)(?=;|[\"'\r\n]|$|"
                + _NEXT_KEY
                + r")|(?=;))",
                re.MULTILINE,
            ),
            anchors=("password", "pwd"),
            lead=6,
            reach=300,
            check=_password_value,
        ),
        # `password = value` elsewhere (an ini file, code, a shell line; not `PWD=`, the shell's
        # working directory): a value that looks like a password, not code.
        Rule(
            name="connection-string-password",
            pattern=lazy(
                r"(?:(?<=^)|(?<=[\s\"']))[ \t]{0,4}(?P<name>(?i:password))[ \t]{0,4}"
                r"={1,3}[ \t]{0,4}"
                + _VALUE_THEN_END
                + _CONNECTION_VALUE
                + r"(?=[\"'\r\n]|$|"
                + _NEXT_KEY
                + ")",
                re.MULTILINE,
            ),
            anchors=("password",),
            lead=6,
            reach=300,
            check=_assigned_password,
        ),
        # YAML's `password: value` on a key that starts its line: a plain scalar runs to the
        # line's end or a comment (` #`), blanks included; the generic rules read only its
        # first word, and `password: Tr0ub4dor&3 horse battery` kept the rest of the phrase.
        Rule(
            name="secret-assignment",
            pattern=lazy(
                r"(?:(?<=^)|(?<=\\n))[ \t]{0,16}(?:-[ \t]{1,4})?"
                r"[A-Za-z0-9_.\-]{0,40}?(?i:password|passwd|passphrase)[ \t]{0,4}:[ \t]{1,4}"
                r"(?P<secret>[^\s\"'`|>&*!{\[#%@\\][^\r\n\"\\]{0,255}?)[ \t]{0,4}"
                r"(?=[ \t]#|[\r\n\"]|\\[nr]|$)",
                re.MULTILINE,
            ),
            anchors=("password", "passwd", "passphrase"),
            lead=64,
            reach=320,
            check=_yaml_passphrase,
        ),
        Rule(
            name="basic-auth",
            pattern=lazy(
                r"(?<![A-Za-z0-9])(?i:basic)[ \t]{1,4}(?P<secret>[A-Za-z0-9+/]{8,2000}={0,2})"
                r"(?![A-Za-z0-9+/=])"
            ),
            anchors=("basic",),
            reach=2100,
            check=_basic_value,
            start="anchor",
        ),
        Rule(
            name="bearer-token",
            pattern=lazy(
                r"(?<![A-Za-z0-9])(?i:bearer)[ \t]{1,4}(?P<secret>[A-Za-z0-9\-._~+/]{12,4000}=*)"
            ),
            anchors=("bearer",),
            reach=4100,
            check=_bearer_value,
            start="anchor",
        ),
        Rule(
            name="bearer-token",
            pattern=lazy(
                r"(?i:authorization)[\"']?[ \t]{0,4}[:=][ \t]{0,4}[\"']?(?i:bearer)[ \t]{1,4}"
                r"(?P<secret>[A-Za-z0-9\-._~+/]{8,4000}=*)(?![A-Za-z0-9\-._~+/=])"
            ),
            anchors=("authorization",),
            reach=4100,
            check=_header_bearer_value,
            start="anchor",
        ),
        Rule(
            name="authorization-header",
            pattern=lazy(
                r"(?i:authorization)[\"']?[ \t]{0,4}[:=][ \t]{0,4}[\"']?"
                r"(?i:token|bot|apikey|api-key|key|sso-key|digest)[ \t]{1,4}"
                r"(?P<secret>[A-Za-z0-9\-._~+/:=]{12,2000})"
            ),
            anchors=("authorization",),
            reach=2100,
            check=_authorization_value,
            start="anchor",
        ),
        GENERIC_ASSIGNMENT,
        DIRECT_INIT_ASSIGNMENT,
        FLAG_ASSIGNMENT,
        FALLBACK_ASSIGNMENT,
        COMPARED_LITERAL,
        COMPARED_IN_A_CALL,
        LITERAL_COMPARED,
        LITERAL_IN_A_CALL,
        CASE_PATTERN,
        LITERAL_IN_A_TUPLE,
        LOOKUP_DEFAULT,
        *EXPANSION_DEFAULTS,
        *ENV_ASSIGNMENTS,
        *ENV_EXPANSION_DEFAULTS,
        ENV_ECHOED,
        Rule(
            name="high-entropy-string",
            # A Stet id where the run starts is read whole and skipped (no `secret` group):
            # a target's key, a trajectory's id (`heuristics.STET_ID`).
            pattern=lazy(
                r"(?<![A-Za-z0-9+/_\-])(?:(?:"
                + heuristics.STET_ID
                + r")(?![A-Za-z0-9+/_\-=])|(?P<secret>[A-Za-z0-9+/_\-]{24,512}={0,2})"
                r"(?![A-Za-z0-9+/_\-=]))"
            ),
            anchors=(),
            check=_high_entropy,
            strict_only=True,
        ),
    ]
    return tuple(rules)


def _env_literal(value: str, strict: bool) -> bool:
    return heuristics.looks_like_env_literal(value)


_PLAIN_PASSWORD = re.compile(r"[A-Za-z0-9_.\-]+")


def _signed_password(value: str, strict: bool) -> bool:
    """A password holding a sign besides `_ . -` (those without are `_env_literal`'s) that
    reads as one: not a reference, a placeholder or a template."""
    return _PLAIN_PASSWORD.fullmatch(value) is None and heuristics.looks_like_env_password(value)


_PASSWORD_NAMES = r"PASSWORD|PASSWD|PWD|SECRET|SECRET_?KEY"
_KEY_NAMES = (
    r"TOKEN|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|AUTH_?KEY|CLIENT_?KEY|CREDENTIALS?"
    r"|SIGNING_?KEY|ENCRYPTION_?KEY"
)


# An environment file's line (`DB_PASSWORD=hunter2Summer`, `export API_TOKEN=…`, `ENV …`,
# `- …` in a compose file): an upper-case name that ends in a credential's word, after the
# line's start, a space or a quote; `=` with no space; the value up to a space, `;`, `#`, a
# quote or the line's end (raw, or escaped once or more in JSON). `secret-assignment` takes a
# value of letters and digits for a name (code's `password=userPassword2`); code does not look
# so (a name assigned to a name has spaces around `=`), and the shell reads the value as text.
# A password's value may hold `_ . -` too; a token's or key's may not: a dotted or underscored
# one (`pk.eyJ…`, `live_…`) is often a public client token, left to `secret-assignment`.
# (The start of a name read back over identifier characters takes the `n` of an escaped
# newline along: `\\nDB_PASSWORD`.)
# A diff's added or removed line puts its `+` or `-` before the name, at the line's start or
# after indentation, a line number or a quote (a `-` is read back with the name, a `+` not).
_ENV_NAME_START = (
    r"(?:\A|(?<=[\s\"'])|(?<=\\n)|(?<=\\)n|(?<=\A\+)|(?<=[\s\"'│]\+)|(?<=\\n\+))-?"
    r"(?P<key>(?:[A-Z][A-Z0-9_]{0,40}?)?(?:"
)
_ENV_VALUE_END = r"(?=[\s;#'`]|\\+[nr]|\\*\"|\Z)"
_ENV_KEY_ANCHORS = (
    "token",
    "api_key",
    "apikey",
    "access_key",
    "private_key",
    "auth_key",
    "client_key",
    "credential",
    "signing_key",
    "encryption_key",
)
_ENV_ANCHORS = ("password", "passwd", "pwd", "secret", *_ENV_KEY_ANCHORS)
ENV_ASSIGNMENTS = tuple(
    Rule(
        name="env-assignment",
        pattern=lazy(
            _ENV_NAME_START
            + words
            + r")(?:_?[0-9]{1,3})?)=(?P<secret>"
            + value
            + ")"
            + _ENV_VALUE_END
        ),
        anchors=_ENV_ANCHORS,
        lead=48,
        reach=320,
        check=check,
        after=lazy(after),
        start="identifier",
    )
    for words, value, check, after in (
        (
            _PASSWORD_NAMES,
            r"[A-Za-z0-9][A-Za-z0-9_.\-]{7,255}+",
            _env_literal,
            r"[A-Za-z0-9_]{0,72}=\w",
        ),
        (
            _KEY_NAMES,
            r"[A-Za-z0-9]{8,255}+",
            _env_literal,
            r"[A-Za-z0-9_]{0,72}=[A-Za-z0-9]{8}",
        ),
        # A generated password's signs (`DB_PASSWORD=4}gi12({LhEWXBjU$Bh(`): the generic rules
        # stop a value at a bracket or a comma, and a line holding one kept most of it.
        (
            _PASSWORD_NAMES,
            r"[^\s;#'`\"\\$][^\s;'`\"\\]{7,255}+",
            _signed_password,
            r"[A-Za-z0-9_]{0,72}=[^\s;#'`\"\\$]",
        ),
    )
)


_ENV_PASSWORD_VALUE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]{7,255}")
_ENV_SIGNED_VALUE = re.compile(r"[^\s;#'`\"\\$][^\s;'`\"\\]{7,255}")
_ENV_KEY_VALUE = re.compile(r"[A-Za-z0-9]{8,255}")


def _env_password_default(value: str, strict: bool) -> bool:
    return (_ENV_PASSWORD_VALUE.fullmatch(value) is not None and _env_literal(value, strict)) or (
        _ENV_SIGNED_VALUE.fullmatch(value) is not None and _signed_password(value, strict)
    )


def _env_key_default(value: str, strict: bool) -> bool:
    return _ENV_KEY_VALUE.fullmatch(value) is not None and _env_literal(value, strict)


def _env_expansion_defaults(
    words: str, anchors: tuple[str, ...], check: Check
) -> tuple[Rule, Rule]:
    name = r"(?:[A-Z][A-Z0-9_]{0,40}?)?(?:" + words + r")(?:_?[0-9]{1,3})?"
    assigned = _default_rule(
        r"(?<=\$\{)(?P<key>" + name + "):?=" + _DEFAULT_AFTER_OPERATOR,
        r"[A-Za-z0-9_]{0,72}+:?=",
        anchors,
        check,
    )
    return assigned, _default_rule(
        _ENV_NAME_START
        + words
        + r")(?:_?[0-9]{1,3})?)="
        + _EXPANSION_AFTER_KEY
        + syntax.EXPANSION_NAME
        + _EXPANSION_DEFAULT,
        r"[A-Za-z0-9_]{0,72}=" + _EXPANSION_AFTER_KEY + "[A-Za-z_]",
        anchors,
        check,
    )


# A parameter expansion's default (`EXPANSION_DEFAULTS`) an environment line assigns
# (`DB_PASSWORD=${DB_PASSWORD:-hunter2Summer}`, `export DB_PASSWORD="${DB_PASSWORD:-…}"`, `-
# API_TOKEN=${API_TOKEN:-…}` in a compose file), or one `=` or `:=` assigns to its variable
# (`${DB_PASSWORD:=hunter2Summer}` sets `DB_PASSWORD` when unset), is judged as the line
# `NAME=value` would be (`ENV_ASSIGNMENTS`): the shell and compose read it as text. The same
# names (upper case, no `…PASS`), values and checks; elsewhere (`echo ${API_KEY:-…}`, `KEY:
# ${KEY:-…}` in YAML) the default is judged as a literal only.
ENV_EXPANSION_DEFAULTS = (
    *_env_expansion_defaults(
        _PASSWORD_NAMES, ("password", "passwd", "pwd", "secret"), _env_password_default
    ),
    *_env_expansion_defaults(_KEY_NAMES, _ENV_KEY_ANCHORS, _env_key_default),
)


def _echoed_value(value: str, strict: bool) -> bool:
    return generated.has_generated_run(value) or heuristics.is_encoded_secret(value)


# A generated run a command in backticks prints (``TOKEN=`echo Xk9q2LmWp4TzR7vB…` ``): the
# variable holds it, and it stands in the text. A command that prints a credential from
# elsewhere (``TOKEN=`gh auth token` ``) holds none.
ENV_ECHOED = Rule(
    name="env-assignment",
    pattern=lazy(
        _ENV_NAME_START
        + _PASSWORD_NAMES
        + "|"
        + _KEY_NAMES
        + r")(?:_?[0-9]{1,3})?)=(?:\\{0,7}\")?`"
        r"(?:echo|printf)(?:[ \t]{1,4}-[neE]{1,3})?[ \t]{1,4}(?P<secret>[A-Za-z0-9+/=_\-]{12,255}+)"
        r"(?:[ \t]{1,4}\|[^`\r\n]{1,80})?`"
    ),
    anchors=_ENV_ANCHORS,
    lead=48,
    reach=320,
    check=_echoed_value,
    after=lazy(r"[A-Za-z0-9_]{0,72}=(?:\\{0,7}\")?`(?:echo|printf)"),
    start="identifier",
)


def env_value_rule(names: tuple[str, ...]) -> Rule | None:
    """Values assigned to the configured environment variable names, in any common syntax."""
    if not names:
        return None
    alternatives = "|".join(re.escape(name) for name in sorted(set(names), key=len, reverse=True))
    return Rule(
        name="env-value",
        pattern=lazy(
            # After an escaped newline too (`\nACME_PASS=…` in JSON quoted twice: its `n` is
            # no boundary).
            rf"(?:(?<![A-Za-z0-9_])|(?<=\\n))(?i:{alternatives})[\"']?"
            r"[ \t]{0,4}(?:=|:)[ \t]{0,4}[\"']?"
            # Not from JSON's structure: in `"ACME_PASS:","v"` or `{"ACME_PASS=":"v"}` the
            # quote ends a string, and a span over `,` or `:` would break the JSON.
            r"(?P<secret>[^\s\"'\\,:\[\]{}][^\s\"'\\]{0,999})"
        ),
        anchors=tuple(sorted({name.lower() for name in names})),
        reach=1100,
        check=_env_value,
    )


from stet_lsp.gate.rules_generic import GENERIC_RULES  # noqa: E402 (needs Rule)
from stet_lsp.gate.rules_providers import PROVIDER_RULES  # noqa: E402 (needs Rule)

RULES: tuple[Rule, ...] = PROVIDER_RULES + build_rules() + GENERIC_RULES
RULE_NAMES: frozenset[str] = frozenset(rule.name for rule in RULES) | {"env-value"}
