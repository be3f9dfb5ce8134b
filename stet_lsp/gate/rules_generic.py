"""Generic classes that no prefix names: framework secret keys, hex and base64 values assigned
to any name that says credential, credentials set through environment calls and Dockerfile
`ENV`, and random-looking values quoted next to a credential word in prose; and structures
that hold credentials whatever they look like (Kubernetes Secret manifests, `curl -u` and
`curl -H` credentials).

Each rule anchors on credential words. The assignment rules start at the identifier holding
the anchor (`start="identifier"`: the engine skips the hit unless `=` or `:` follows the
identifier closely); the others start exactly at their anchor. Every repetition is capped.
"""

from __future__ import annotations

import base64
import json
import re
from dataclasses import replace

from stet_lsp.gate import heuristics
from stet_lsp.gate.keyblocks import GREP_LINE
from stet_lsp.gate.patterns import lazy
from stet_lsp.gate.rules import (
    KEY_ASSIGN,
    METADATA_KEY_SUFFIXES,
    SECRET_KEY_WORDS,
    VALUE_START,
    Check,
    Rule,
    whole_value,
)

_KEY = r"(?<![A-Za-z0-9_.\-])(?P<key>[A-Za-z0-9_.\-]{1,96}+)"
# Names that say credential (a key must contain one to be worth a look).
_CREDENTIAL_WORD = r"(?i:secret|token|pass|pwd|key|auth|credential|signing|header)"

# Framework secret keys, as the frameworks name them (a dotted or prefixed form included:
# `app.secret_key`, `config.secret_key_base`, `DJANGO_SECRET_KEY`).
_FRAMEWORK_NAMES = (
    "secret_key_base",  # Rails, Phoenix
    "secret_key",  # Django, Flask
    "secretkey",
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
# Laravel's `APP_KEY`, only bare: a vendor's `<VENDOR>_APP_KEY` (Dropbox, Pusher) or
# `dropbox.app_key` names a public app identifier, not a secret.
_BARE_FRAMEWORK_NAMES = ("app_key",)


def _framework_check(value: str, strict: bool) -> bool:
    return heuristics.looks_like_secret_value(value, min_length=8, min_entropy=2.5)


def _encoded_check(value: str, strict: bool) -> bool:
    return heuristics.is_encoded_secret(value) or _lower_alnum_secret(value)


def _lower_alnum_secret(value: str) -> bool:
    """A random run of lowercase letters and digits (many vendors' token alphabet), which
    base64's mixed-case test misses: long, letters and digits throughout, varied."""
    if not 24 <= len(value) <= 128 or not value.isalnum() or not value.islower():
        return False
    digits = sum(c.isdigit() for c in value)
    return (
        digits >= 4
        and len(value) - digits >= 8
        and heuristics.shannon_entropy(value) >= 3.8
        and not heuristics.is_placeholder(value)
    )


def _prose_check(value: str, strict: bool) -> bool:
    return " " not in value and heuristics.looks_like_secret_value(
        value, min_length=10 if strict else 12, min_entropy=3.0 if strict else 3.2
    )


FRAMEWORK_SECRET_KEY = Rule(
    name="framework-secret-key",
    pattern=lazy(
        r"(?<![A-Za-z0-9_.\-])(?P<key>(?:[A-Za-z0-9_]{1,30}[._])?(?i:"
        + "|".join(_FRAMEWORK_NAMES)
        + r")|(?i:"
        + "|".join(_BARE_FRAMEWORK_NAMES)
        + r"))(?![A-Za-z0-9_\-])"
        + KEY_ASSIGN
        + whole_value(8, 600)
    ),
    anchors=(*_FRAMEWORK_NAMES, *_BARE_FRAMEWORK_NAMES),
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

# `os.environ.setdefault("JWT_SECRET", "…")`, `os.putenv(…)`, `t.Setenv(…)`, `setenv(…)`,
# Java's `System.setProperty("db.password", "…")`.
ENV_CALL = Rule(
    name="credential-assignment",
    pattern=lazy(
        r"(?i:setdefault|putenv|setenv|set_env|setproperty)\([ \t]{0,4}[\"']"
        r"(?P<key>(?=[A-Za-z0-9_.\-]{0,80}?" + _CREDENTIAL_WORD + r")[A-Za-z0-9_.\-]{1,80}+)"
        r"[\"'][ \t]{0,4},[ \t]{0,4}" + whole_value(8)
    ),
    anchors=("setdefault(", "putenv(", "setenv(", "set_env(", "setproperty("),
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

# --- Structures that hold credentials whatever the values look like -------------------------
# The curl rules search a window from their anchor on (not `start="anchor"`): a `curl `
# without credentials is no token prefix that detect-secrets should look behind.

_NEWLINE = r"(?:\r?\n|\\n)"
# A Kubernetes Secret manifest in YAML: every value of its `data:` (base64) or `stringData:`
# block, the block's lines indented under the header. `kubectl get secret -o yaml` writes
# `data:` before `kind: Secret`; hand-written manifests put it after. Neither side may
# reach over a `---` document separator (a ConfigMap's `data:` is not secret). The block takes
# every line indented under its header, possessively: nothing is retried at a shorter length.
# A `kind:` line ends it (a list item's header may start on an indented anchor, whose
# indentation the match then only partly sees).
_SECRET_KIND = r"kind:[ \t]{0,4}[\"']?(?i:secret)[\"']?[ \t]{0,4}"
# A line in between: its characters, an escape (`\"`) but never an escaped newline (`\n`), so
# where a line ends is never ambiguous.
_LINE_CHAR = r"(?:[^\r\n\\]|\\[^n\r\n])"
_LINE_END = r"(?:\r|\n|\\n|$)"
# Between `kind: Secret` and its data block, never another line ending in `kind: Secret` (as
# the anchors write it: that line's own match starts there), nor between a data block and its
# `kind: Secret` another data block's header (a ConfigMap's `data:` in a list before a
# Secret): each line is read by one match only, so a file of such lines stays linear.
_OTHER_LINE_AFTER_KIND = (
    r"(?:"
    + _NEWLINE
    + r"(?!---)(?!"
    + _LINE_CHAR
    + r"{0,500}?kind:(?: [\"']?)?(?i:secret)[\"']?[ \t]{0,4}"
    + _LINE_END
    + r")"
    + _LINE_CHAR
    + r"{0,500}?){0,60}?"
)
_OTHER_LINE_BEFORE_KIND = (
    r"(?:"
    + _NEWLINE
    + r"(?!---)(?![ \t]{0,12}(?:data|stringData):[ \t]{0,4}(?:#[^\r\n]{0,200})?"
    + _LINE_END
    + r")"
    + _LINE_CHAR
    + r"{0,500}?){0,60}?"
)
# A data block's header; a line of the block is never one (each header's own match starts
# there, so lines of headers, `data:` repeated, are each read once).
_DATA_HEADER = r"(?:data|stringData):[ \t]{0,4}(?:#[^\r\n]{0,200})?"
_NOT_HEADER = r"(?!kind:)(?!" + _DATA_HEADER + _LINE_END + r")"
# The block's lines: at the first one's indentation (`inner`), any line but a header; deeper,
# any line (a `data:` of a file the Secret holds, `application.yaml: |` and Spring's `data:`).
_DATA_BLOCK = (
    r"(?P<indent>[ \t]{0,12})"
    + _DATA_HEADER
    + _NEWLINE
    + r"(?P=indent)(?P<inner>[ \t]{1,16})"
    + _NOT_HEADER
    + r"(?P<secret>[^\s\\][^\r\n\\]{0,65536}+(?:"
    + _NEWLINE
    + r"(?P=indent)(?P=inner)(?:[ \t]{1,16}+|"
    + _NOT_HEADER
    + r")[^\s\\][^\r\n\\]{0,65536}+){0,500}+)"
)
_K8S_ANCHORS = ("kind: secret", 'kind: "secret"', "kind: 'secret'", "kind:secret")


def _manifest_values(block: str, strict: bool) -> bool:
    """A data block holds at least one value that is neither empty nor a template."""
    for line in block.replace("\\n", "\n").splitlines():
        key, colon, value = line.strip().partition(":")
        if not colon:  # a line of a block scalar (`key: |`)
            value = key
        value = value.strip().strip("\"'")
        if key.startswith("#") or "[REDACTED:" in line or value in ("", "|", ">", "|-", ">-"):
            continue
        if value.startswith(("{{", "${", "$(")) or heuristics.is_placeholder(value):
            continue
        return True
    return False


KUBERNETES_SECRET_AFTER_KIND = Rule(
    name="kubernetes-secret",
    pattern=lazy(_SECRET_KIND + _OTHER_LINE_AFTER_KIND + _NEWLINE + _DATA_BLOCK),
    anchors=_K8S_ANCHORS,
    reach=70000,
    multiline=True,
    check=_manifest_values,
    start="anchor",
)
KUBERNETES_SECRET_BEFORE_KIND = Rule(
    name="kubernetes-secret",
    pattern=lazy(
        r"(?:\r?\n|\\n)?"
        + _DATA_BLOCK
        + r"(?="
        + _OTHER_LINE_BEFORE_KIND
        + _NEWLINE
        + r"[ \t]{0,12}"
        + _SECRET_KIND
        + r"(?:$|[\r\n\\]))",
        re.MULTILINE,
    ),
    # The header ends its line; what precedes it on the line is indentation.
    anchors=tuple(
        f"{before}{header}:{after}"
        for before in ("\n", " ", "\t", "\\n")
        for header in ("data", "stringdata")
        for after in ("\n", "\r\n", "\\n")
    ),
    reach=70000,
    multiline=True,
    check=_manifest_values,
    start="anchor",
)
# The same manifest as JSON (`kubectl get secret -o json`), raw or inside a JSON string.
KUBERNETES_SECRET_JSON = Rule(
    name="kubernetes-secret",
    pattern=lazy(r"\\?\"(?:data|stringData)\\?\":[ \t]{0,4}\{(?P<secret>[^{}]{1,65536}?)\}"),
    anchors=('"kind": "secret"', '\\"kind\\": \\"secret\\"', '"kind":"secret"'),
    lead=20000,
    reach=20000,
    multiline=True,
    check=lambda value, strict: ":" in value and _manifest_values(value.replace(",", "\n"), strict),
)

# Terraform's sensitive values in JSON: an output marked sensitive (`terraform output -json`
# writes `"sensitive": true` before its `"value"`, a state file's `outputs` after it) and a
# `random_password`'s `result` in a state file (`terraform state pull`, `cat
# terraform.tfstate`); raw, or in a JSON string (`\"value\": \"…\"`). An output of a list,
# set, map or object type is sensitive whole (`["pw1", "pw2"]`, `{"password": "…"}`).
_TF_JSON_STRING = r'"(?:[^"\\\r\n]|\\.){0,4096}"'


def _json_brackets(depth: int) -> str:
    """A raw JSON list or object, nested `depth` levels deep at most."""
    item = r'[^\[\]{}"\\]'
    for _ in range(depth):
        inner = rf"(?:{_TF_JSON_STRING}|{item}){{0,4096}}"
        brackets = rf"\[{inner}\]|\{{{inner}\}}"
        item = rf'(?:[^\[\]{{}}"\\]|{brackets})'
    return brackets


# A string's characters with their escapes: raw JSON (`ab\"c`), or JSON inside a JSON string
# (`\"ab\\\"c\"`), where the string's own quotes are `\"` and its escapes doubled.
_TF_RAW_CHARACTERS = r'(?<=(?<!\\)")(?:[^"\\\r\n]|\\.){1,4096}(?=")'
_TF_QUOTED_CHARACTERS = (
    r'(?<=\\")(?:[^"\\\r\n]|\\\\(?:\\[\\"]|[^"\\\r\n])|\\[^"\\\r\n]){1,4096}(?=\\")'
)
_TF_STRING = (
    r"(?:\\?\")?(?P<secret>"
    + _TF_RAW_CHARACTERS
    + "|"
    + _TF_QUOTED_CHARACTERS
    + r'|(?<!")(?:'
    + _json_brackets(3)
    + "))"
)
_TF_SENSITIVE = r"\\?\"sensitive\\?\":[ \t]{0,4}true"
_TF_VALUE = r"\\?\"value\\?\":[ \t]{0,4}"


def _tf_then(after: str, gap: str = r"[^{}]") -> str:
    """`after` further in the same output: never past the object's end, though an object
    type's description between holds braces (`"type": ["object", {"password": "string"}]`).
    Text without braces is one lazy run of `gap`, as fast as before such types were read;
    the braced groups are read (each run to one taken whole) only when it fails."""
    braced = rf"(?:{gap}{{0,400}}+(?=\{{)(?:" + _json_brackets(2) + r")){1,8}"
    return rf"(?:{gap}{{0,400}}?{after}|{braced}{gap}{{0,400}}?{after})"


_TF_SENSITIVE_ANCHORS = ('"sensitive": true', '"sensitive":true', '\\"sensitive\\": true')
# From an anchor to its `"value"`, never over another anchor: of a run of them, the last one
# alone reads the value (a list's or object's read is long, when it fails the longest).
_TF_GAP_TO_VALUE = r'(?:(?!"sensitive": ?true|\\"sensitive\\": true)[^{}])'


def _terraform_value(value: str, strict: bool) -> bool:
    if "[REDACTED:" in value:
        return False
    if value.startswith(("[", "{")):
        return any(not heuristics.is_placeholder(leaf) for leaf in _json_strings(value))
    return not heuristics.is_placeholder(value)


def _json_strings(value: str) -> list[str]:
    """The strings a JSON list or object holds at any depth, its keys apart."""
    try:
        nodes = [json.loads(value)]
    except ValueError:
        return []
    strings = []
    while nodes:
        node = nodes.pop()
        if isinstance(node, str):
            strings.append(node)
        elif isinstance(node, (dict, list)):
            nodes.extend(node.values() if isinstance(node, dict) else node)
    return strings


TERRAFORM_SECRETS = (
    Rule(
        name="terraform-sensitive-value",
        pattern=lazy(_TF_SENSITIVE + _tf_then(_TF_VALUE, _TF_GAP_TO_VALUE) + _TF_STRING),
        anchors=_TF_SENSITIVE_ANCHORS,
        lead=2,
        reach=4600,
        multiline=True,
        check=_terraform_value,
        start="anchor",
    ),
    Rule(
        name="terraform-sensitive-value",
        pattern=lazy(_TF_VALUE + _TF_STRING + r"(?=" + _tf_then(_TF_SENSITIVE) + r")"),
        anchors=_TF_SENSITIVE_ANCHORS,
        lead=4600,
        reach=30,
        multiline=True,
        check=_terraform_value,
    ),
    Rule(
        name="terraform-sensitive-value",
        pattern=lazy(
            r"\\?\"type\\?\":[ \t]{0,4}\\?\"random_password\\?\""
            # Within the resource: never past the next one's `"type"`.
            r"(?:(?!\\?\"type\\?\":)[\s\S]){0,3000}?"
            r"\\?\"result\\?\":[ \t]{0,4}" + _TF_STRING
        ),
        anchors=('random_password\\"', 'random_password"'),
        lead=12,
        reach=3200,
        multiline=True,
        check=_terraform_value,
    ),
)


# `curl -u user:password`, `curl --user 'user:password'` (the whole pair: a user name next to
# its password is as sensitive), also on a continuation line of the same command.
_CURL_VALUE = (
    r"[\"']?(?P<secret>(?<=\")[^\"\r\n]{3,256}(?=\")|(?<=')[^'\r\n]{3,256}(?=')"
    r"|[^\s\"']{1,128}:[\"']?[^\s\"']{3,256}[\"']?)"
)


# The command's text up to its `-u`, never over another `curl ` (whose own match starts
# there): each character is read by one command's match only.
_CURL_GAP = r"(?:[^\r\nc]|c(?!url[ \t])){0,400}?"


def _curl_user(value: str, strict: bool) -> bool:
    if "[REDACTED:" in value:
        return False
    _, colon, password = value.partition(":")
    password = password.strip("\"'")
    if not colon or len(password) < 3:
        return False
    if heuristics.starts_with_reference(password) or password.isdigit():
        return False
    return not heuristics.is_placeholder(password)  # `{pw}`, `<password>`, `%PASS%`


CURL_USER = Rule(
    name="curl-auth-user",
    pattern=lazy(
        r"curl(?=[ \t])(?:" + _CURL_GAP + r"\\\r?\n){0,8}?" + _CURL_GAP + r"(?<=[ \t])"
        r"(?:-u|--user)(?:=|[ \t]{1,4})" + _CURL_VALUE
    ),
    anchors=("curl ", "curl\t"),
    reach=4000,
    multiline=True,
    check=_curl_user,
)

# `-H "Authorization: <scheme> <value>"`, `--header 'X-Api-Key: <value>'`: a header whose
# name says credential, in a command line (the name is not followed by `=`, so the
# assignment rules do not see it).
_HEADER_NAME = (
    r"(?P<key>[A-Za-z0-9_\-]{0,40}(?i:auth|key|token|secret|session|password|cookie)"
    r"[A-Za-z0-9_\-]{0,40})(?<![Ee]mail)(?<![Uu]ser)(?<![Uu]sername)(?<![Tt]ype)"
)
_SCHEME = (
    r"(?:(?i:basic|bearer|token|api-token|apikey|api-key|key|sso-key|digest|bot|ssws|splunk)"
    r"[ \t]{1,4})?"
)


def _header_value(value: str, strict: bool) -> bool:
    if heuristics.starts_with_reference(value) or heuristics.is_placeholder(value):
        return False
    return len(set(value)) >= 6


CURL_HEADER = Rule(
    name="curl-auth-header",
    pattern=lazy(
        r"(?:-H|--header)(?:=|[ \t]{0,5})\\?[\"']"
        + _HEADER_NAME
        + r":[ \t]{0,5}"
        + _SCHEME
        + r"(?P<secret>[^\s\"'\\]{8,4000})\\?[\"']"
    ),
    anchors=('-h "', "-h '", '-h"', "-h'", '-h \\"', "--header"),
    reach=4200,
    check=_header_value,
)


# `docker login -u me -p <password>` (and podman, nerdctl, helm registry, oras): the password
# given on the command line rather than through --password-stdin.
def _login_password(value: str, strict: bool) -> bool:
    if heuristics.starts_with_reference(value) or heuristics.is_placeholder(value):
        return False
    return len(value) >= 6 and len(set(value)) >= 5


# The command's text up to its `-p`, never over another registry login (whose own match
# starts there).
_LOGIN_GAP = (
    r"(?:[^\r\n|;&dpnor]"
    r"|(?!(?:docker|podman|nerdctl|oras|registry)[ \t]{1,4}login[ \t])[dpnor]){0,300}?"
)
REGISTRY_LOGIN = Rule(
    name="registry-login-password",
    pattern=lazy(
        r"(?:docker|podman|nerdctl|oras|helm[ 	]{1,4}registry)[ 	]{1,4}login(?=[ 	])"
        + _LOGIN_GAP
        + r"[ 	](?:-p|--password)(?:=|[ 	]{1,4})[\"']?"
        r"(?P<secret>(?<=\")[^\"\r\n]{1,256}(?=\")|(?<=')[^'\r\n]{1,256}(?=')"
        r"|[^\s\"']{1,256})"
    ),
    anchors=("docker login", "podman login", "nerdctl login", "oras login", "registry login"),
    lead=12,  # `helm ` before `registry login`
    reach=600,
    check=_login_password,
)


# Passwords given on a command line by the flag each tool reads them from (`mysql -pSECRET`,
# `sshpass -p SECRET`, `redis-cli -a SECRET`, `ldapsearch -w SECRET`, ...): the value only, and
# only after one of these tools (`-p 8080` is another tool's port). A flag alone (`mysql -p`,
# which prompts), a shell reference (`-p$MYSQL_PWD`, `-p"${PASS}"`), a placeholder
# (`<password>`, `****`), a short number (`ssh -p 2222` after `sshpass -f file`) and a
# certificate's path (`az login -p ~/cert.pem`) stay.
def _flag_password(value: str, strict: bool) -> bool:
    if "[REDACTED:" in value or _path_like(value) or heuristics.starts_with_reference(value):
        return False
    if value.lower().endswith((".pem", ".pfx", ".p12", ".crt", ".key")):
        return False
    if value.isdigit() and len(value) <= 5:
        return False
    if _NAMED_LIKE_A_CREDENTIAL.fullmatch(value):
        return False  # a name, not a value: `define('TOKEN_HEADER', 'X-Auth-Token')`
    return len(value) >= 4 and len(set(value)) >= 3 and not heuristics.is_placeholder(value)


def _path_like(value: str) -> bool:
    """A relative or home path (`./token`, `~/sp.json`), or an absolute one of two segments
    or more (`/etc/mysql/pw`; a password may start with `/`)."""
    return value.startswith(("./", "../", "~/")) or heuristics.is_path(value)


# Words joined by `-` or `_`, one of them a credential's (`X-Auth-Token`, `api_key`).
_NAMED_LIKE_A_CREDENTIAL = re.compile(
    r"(?=.*(?i:token|auth|pass|secret|key))[A-Za-z]+(?:[-_][A-Za-z]+)+"
)


# A flag's value: quoted (any character but the quote), or a shell word (no `;|&`).
_FLAG_WORD = r"(?<=\")[^\"\r\n]{1,256}(?=\")|(?<=')[^'\r\n]{1,256}(?=')|[^\s\"'\\;|&`]{1,256}"
_FLAG_VALUE = r"[\"']?(?P<secret>" + _FLAG_WORD + ")"


_BLANK = lazy(r"[ \t]|\\{1,7}t")  # a tab escaped in JSON too


def _command_password(
    tools: tuple[str, ...], flags: str, *, leading: bool = False, value: str = _FLAG_VALUE
) -> Rule:
    """`<tool> ... <flag><value>` on one command line (never past `|`, `;`, `&`, a
    redirection or the line's end, nor over the next of these tools, whose own match starts
    there: linear on a line of the tool repeated). `flags` is what comes between a blank and
    the value; `leading`: the flag is among the options before the command the tool runs
    (`sshpass -p X scp -p file`: scp's `-p` is no password)."""
    names = "|".join(re.escape(tool).replace(r"\ ", r"[ \t]{1,4}") for tool in tools)
    firsts = "".join(sorted({tool[0] for tool in tools}))
    if leading:  # options, each maybe with its argument, then the flag
        gap = r"(?:[ \t]{1,4}-[A-Za-z]{1,2}(?:[ \t]{1,4}[^\s\-][^\s]{0,255})?){0,4}?[ \t]{1,4}"
    else:
        gap = (
            r"(?:[^\r\n|;&<>\\"
            + firsts
            + r"]|\\(?![nr])|(?!(?:"
            + names
            + r")[ \t])["
            + firsts
            + r"]){0,400}?"
        )
    return Rule(
        name="cli-password",
        pattern=lazy(
            r"(?<![A-Za-z0-9_\-])(?:"
            + names
            + r")(?=[ \t])"
            + gap
            + r"(?<=[ \t])(?:"
            + flags
            + r")"
            + value
        ),
        anchors=tuple(sorted({tool.lower() for tool in tools})),
        reach=700,
        check=_flag_password,
        after=_BLANK,  # `7z` in base64 is no command
    )


# What a GitHub Actions step asks the runner to mask in its logs is a secret by its own word:
# `echo "::add-mask::<value>"` (a reference, `$TOKEN`, `${{ steps.x.outputs.token }}`, stays).
ADD_MASK = Rule(
    name="masked-value",
    pattern=lazy(r"::add-mask::(?P<secret>[^\s\"'`\\]{4,512})"),
    anchors=("::add-mask::",),
    reach=530,
    check=_flag_password,
    start="anchor",
)


def _wifi_passphrase(value: str, strict: bool) -> bool:
    # A command's usage names its argument: `wpa_passphrase ssid passphrase`.
    if value.lower() in ("passphrase", "password", "psk"):
        return False
    return not _assignments_or_one_character_repeated(value) and _flag_password(value, strict)


_REPEATED_PIECE = re.compile(r"(.{1,8}?)\1{2,}", re.DOTALL)


def _assignments_or_one_character_repeated(value: str) -> bool:
    """`key=key=key=`, `ps=ps=ps=p` (a key's form written again, each `psk=` of
    `psk=psk=…` reading the next as its value) or `xxxxxxxx`: a piece of at most 8
    characters three times or more, then the start of it, that holds `=` or is one
    character. A passphrase of one word said three times (`hunter22hunter22hunter22`) is
    a passphrase all the same."""
    repeated = _REPEATED_PIECE.match(value)
    if repeated is None:
        return False
    piece = repeated.group(1)
    if not piece.startswith(value[repeated.end() :]):
        return False
    return "=" in piece or len(set(piece)) == 1


# A Wi-Fi network's passphrase (8 to 63 characters) or its 64 hex digits of pre-shared key:
# wpa_supplicant's and NetworkManager's `psk=` (quoted or not; `psk` is no credential's name
# the assignment rules know), `wpa_passphrase <ssid> <passphrase>`, `nmcli … wifi connect
# <ssid> password <passphrase>` and its `wifi-sec.psk <passphrase>`. `psk=psk=…` is the key
# written again, no passphrase.
WIFI_PASSWORD = Rule(
    name="wifi-password",
    pattern=lazy(
        r"(?:(?<![A-Za-z0-9_.\-])|(?<=\\n))(?:psk[ \t]{0,4}=[ \t]{0,4}(?!psk[ \t]{0,4}=)"
        r"|wpa_passphrase[ \t]{1,4}"
        r"(?:\\?\"[^\"\r\n]{1,32}\\?\"|'[^'\r\n]{1,32}'|[^\s\"']{1,32})[ \t]{1,4}"
        r"|nmcli[ \t][^\r\n|;&]{0,200}?[ \t](?:password|wifi-sec\.psk)[ \t]{1,4})"
        + whole_value(8, 64)
    ),
    anchors=("psk=", "psk =", "wpa_passphrase ", "nmcli "),
    reach=400,
    check=_wifi_passphrase,
)


_MYSQL_TOOLS = tuple(
    f"{base}{tail}"
    for base, tails in (
        ("mysql", ("", "dump", "admin", "import", "check", "show", "pump", "slap")),
        ("mariadb", ("", "-dump", "-admin", "-import", "-check", "dump", "admin")),
    )
    for tail in tails
)
_MONGO_TOOLS = tuple(
    f"mongo{tail}"
    for tail in ("", "sh", "dump", "restore", "export", "import", "stat", "top", "files")
)
_LDAP_TOOLS = tuple(
    f"ldap{tail}"
    for tail in ("search", "add", "modify", "delete", "whoami", "passwd", "modrdn", "compare")
)
COMMAND_PASSWORDS = (
    # The MySQL clients read `-p` with the value attached only (`-p value` prompts).
    _command_password(_MYSQL_TOOLS, r"-p(?=[^\s])"),
    _command_password(("sshpass",), r"-p[ \t]{0,4}", leading=True),
    _command_password(("redis-cli",), r"(?:-a|--pass)(?:=|[ \t]{1,4})"),
    _command_password(("sqlcmd", "bcp", "osql"), r"-P[ \t]{0,4}"),
    _command_password(_MONGO_TOOLS, r"(?:-p|--password)(?:=|[ \t]{1,4})"),
    _command_password(_LDAP_TOOLS, r"-w[ \t]{0,4}"),
    _command_password(("keytool", "jarsigner"), r"-(?:src|dest)?(?:store|key)pass[ \t]{1,4}(?!-)"),
    _command_password(("openssl",), r"-pass(?:in|out)?[ \t]{1,4}pass:"),
    _command_password(("az login", "twine upload"), r"(?:-p|--password)(?:=|[ \t]{1,4})"),
    # Samba's `-U [DOMAIN\]user%password`: the password after the `%`, up to the quote that
    # opened the user's name, if one did (`'admin%pa&ss'`), else as any flag's value.
    _command_password(
        ("smbclient", "rpcclient", "smbcacls", "smbget"),
        r"(?:-U|--user(?:name)?)(?:=|[ \t]{0,4})(?:\\?(?P<quote>[\"'])|)"
        r"(?:[^\s%\"'\\]|\\{1,4}(?![\\\"']|$)){1,128}%",
        value=r"(?(quote)|[\"']?)(?P<secret>(?(quote)(?:(?!\\?(?P=quote))[^\r\n]){1,256}"
        r"(?=\\?(?P=quote))|(?:" + _FLAG_WORD + r")))",
    ),
    # `openssl enc -k SECRET` (the legacy key phrase) besides `-pass pass:`.
    _command_password(("openssl",), r"-k[ \t]{1,4}(?!-)"),
    # `zip -P SECRET`, `unzip -P SECRET`; 7-Zip's `-pSECRET` (attached: `-p` alone prompts).
    _command_password(("zip", "unzip", "zipcloak"), r"(?:-P|--password)(?:=|[ \t]{1,4})(?!-)"),
    _command_password(("7z", "7za", "7zz", "7zr"), r"-p(?=[^\s])"),
    # `gh secret set NAME --body SECRET` (`-b SECRET`, `-bSECRET`): the body is the secret.
    _command_password(("gh secret set",), r"(?:-b|--body)(?:=|[ \t]{0,4})(?!-)"),
)

# A value echoed into a command that reads it from its input: `echo -n VALUE |`, `printf
# '%s\n' VALUE |` (the value is group `secret`; the command follows).
_PIPED_VALUE = (
    r"(?<![A-Za-z0-9_\-])(?:echo|printf)[ \t]{1,4}(?:-[neE]{1,3}[ \t]{1,4})?"
    r"(?:[\"']%s(?:\\n)?[\"'][ \t]{1,4})?" + _FLAG_VALUE + r"[\"']?[ \t]{0,4}\|[ \t]{0,4}"
)

# `echo 'password' | sudo -S ...` (also `printf`): sudo reads the password from its input.
SUDO_STDIN = Rule(
    name="cli-password",
    pattern=lazy(
        _PIPED_VALUE + r"sudo"
        r"(?:[ \t]{1,4}-{1,2}[A-Za-z][A-Za-z=\-]{0,20}(?:[ \t]{1,4}[A-Za-z0-9_.\-]{1,32})?){0,4}?"
        r"[ \t]{1,4}(?:-[A-Za-z]{0,4}S|--stdin)(?![A-Za-z])"
    ),
    anchors=("| sudo", "|sudo"),
    lead=300,
    reach=200,
    check=_flag_password,
)

# `echo 'password' | docker login -u bot --password-stdin ghcr.io` (podman, nerdctl, oras, helm
# registry): the safe form of a login, unless the value echoed is the password itself rather
# than a reference (`echo "$CR_PAT" |` stays).
REGISTRY_LOGIN_STDIN = Rule(
    name="registry-login-password",
    pattern=lazy(
        _PIPED_VALUE + r"(?:docker|podman|nerdctl|oras|helm[ \t]{1,4}registry)[ \t]{1,4}login"
        r"(?:[ \t]{1,4}[^\s|;&<>\\]{1,256}){0,8}?[ \t]{1,4}--password-stdin(?![A-Za-z0-9_\-])"
    ),
    anchors=tuple(
        f"|{gap}{tool}"
        for tool in ("docker", "podman", "nerdctl", "oras", "helm")
        for gap in ("", " ")
    ),
    lead=300,
    reach=2400,
    check=_login_password,
)

# A name holding a credential's word (the assignment rules' list), read whole.
_CREDENTIAL_NAME = (
    r"(?P<key>(?=[A-Za-z0-9_.\-]{0,60}?(?i:" + SECRET_KEY_WORDS + r"))[A-Za-z0-9_.\-]{1,96}+)"
)

# `htpasswd -b[c|B|…] file user SECRET`, `htpasswd -nb user SECRET`: with `-b` the password is
# the command's last argument (without `-b` htpasswd prompts).
_HTPASSWD_FLAG = r"[ \t]{1,4}-[A-Za-z]{1,8}(?:[ \t]{1,4}[0-9]{1,3})?"
_COMMAND_END = r"(?=[\"']?(?:[ \t]{0,4}(?:[\r\n;|&>)\"'\\]|$)))"
HTPASSWD_BATCH = Rule(
    name="cli-password",
    pattern=lazy(
        r"(?<![A-Za-z0-9_\-])htpasswd(?=(?:"
        + _HTPASSWD_FLAG
        + r"){0,3}?[ \t]{1,4}-[A-Za-z]{0,7}b)(?:"
        + _HTPASSWD_FLAG
        + r"){1,4}+(?:[ \t]{1,4}[^\s\-\"'\\;|&][^\s\"'\\;|&]{0,255}+){1,2}[ \t]{1,4}"
        + _FLAG_VALUE
        + _COMMAND_END
    ),
    anchors=("htpasswd",),
    reach=900,
    check=_flag_password,
)

# `npm config set //registry.example.com/:_authToken SECRET` (also `npm set`, pnpm's, yarn
# 1's), and yarn 2+'s `yarn config set npmAuthToken SECRET` (`npmAuthIdent user:password`,
# `npmRegistries["//…"].npmAuthToken`): the value after a blank (`=` is `npm-auth-token`'s).
NPM_CONFIG_SET = Rule(
    name="npm-auth-token",
    pattern=lazy(
        r"(?<![A-Za-z0-9_\-])(?:p?npm(?:[ \t]{1,4}config)?|yarn[ \t]{1,4}config)[ \t]{1,4}set"
        r"(?:[ \t]{1,4}-[A-Za-z\-]{1,12})?[ \t]{1,4}[\"']?"
        r"(?:(?:[^\s'\\]|\\\"){0,300}?[:.\"'\]])?(?:_auth(?:Token)?|_password|npmAuth(?:Token|Ident))"
        r"[\"']?[ \t]{1,4}" + _FLAG_VALUE
    ),
    anchors=("npm config set", "npm set", "yarn config set"),
    lead=1,
    reach=800,
    check=lambda value, strict: (
        _flag_password(value, strict) and not heuristics.looks_like_attribute(value)
    ),
)


# An HTTP dump's cookies (`Cookie: a=…; b=…`, `< Set-Cookie: session=…; Path=/`): each value
# that looks generated (a session id, a CSRF token); attributes (`Path=/`, `Expires=…`) and
# short or worded values stay. Read from the header's name to the line's end.
def _cookie_value(value: str, strict: bool) -> bool:
    if "[REDACTED:" in value or heuristics.is_placeholder(value):
        return False
    if heuristics.is_hash_or_uuid(value):
        return len(value) >= 32 and heuristics.shannon_entropy(value) >= 3.0
    return heuristics.looks_random(value, min_length=16, min_entropy=3.0) or _lower_alnum_secret(
        value
    )


COOKIE_VALUES = Rule(
    name="cookie-value",
    pattern=lazy(
        r"(?:(?<![A-Za-z0-9_\-])(?i:set-cookie|cookie)[ \t]{0,4}:|;)[ \t]{0,4}"
        r"[A-Za-z0-9_.\-]{1,64}=[\"']?(?P<secret>[^;\s\"'\\,]{16,4096})"
    ),
    anchors=("cookie:", "cookie :"),
    lead=4,  # `set-`
    reach=4200,
    check=_cookie_value,
)

# `requests.get(url, auth=('user', 'SECRET'))`, httpx's `auth=("user", "SECRET")`,
# `HTTPBasicAuth('user', 'SECRET')`, `HTTPDigestAuth`, `httpx.BasicAuth`, aiohttp's
# `BasicAuth(…)`: the password as a literal (names and calls stay).
HTTP_AUTH_PASSWORD = Rule(
    name="http-auth-password",
    pattern=lazy(
        r"(?:(?<![A-Za-z0-9_])auth[ \t]{0,2}=[ \t]{0,2}\(|(?:HTTP(?:Basic|Digest|Proxy)Auth"
        r"|(?<![A-Za-z0-9_])(?:Basic|Digest)Auth)[ \t]{0,2}\()[ \t]{0,4}"
        r"(?:login[ \t]{0,2}=[ \t]{0,2}|username[ \t]{0,2}=[ \t]{0,2})?"
        r"(?P<q1>\\{0,3}[\"'])[^\"'\\\r\n]{0,128}(?P=q1)[ \t]{0,4},[ \t]{0,4}"
        r"(?:password[ \t]{0,2}=[ \t]{0,2})?(?P<q2>\\{0,3}[\"'])"
        r"(?P<secret>(?:[^\r\n\"'\\]|\\(?![\\\"'])){1,256}+)(?P=q2)"
    ),
    anchors=("auth=(", "auth =(", "auth= (", "auth = (", "basicauth(", "digestauth(", "proxyauth("),
    lead=12,
    reach=700,
    check=_flag_password,
)

# A `.pgpass` line, `host:port:database:user:password` (a port's digits or `*`): the last
# field only, the line's last (its line break escaped once or more in a transcript; or the
# JSON string closing, where the line follows an escaped break: the last line a tool printed,
# not a string's only line, `{"key": "session:5432:user:1234:active"}`). Found at a port the
# line names (`:5432:`, `:*:`, …) or near the file's name (`echo "…" >> ~/.pgpass`, `cat
# ~/.pgpass`).
_PGPASS_FIELD = r"(?:[A-Za-z0-9_.$\-]{1,63}|\*)"
PGPASS_PASSWORD = Rule(
    name="pgpass-password",
    pattern=lazy(
        r"(?:^|(?<=[\s\"'+>])|(?<=\\n)(?P<after_break>))"
        r"(?:[A-Za-z0-9_.\-]{1,253}|\*):(?:[0-9]{1,5}|\*):"
        + _PGPASS_FIELD
        + r":"
        + _PGPASS_FIELD
        + r":(?P<secret>[^\s\"'\\]{1,256})"
        + r"(?=[\"']?[ \t]{0,4}(?:[\r\n>]|\\{1,8}[nr\"]|$)"
        + r"|(?(after_break)\"[ \t]{0,4}[,}\]]|(?!)))",
        re.MULTILINE,
    ),
    anchors=(":5432:", ":5433:", ":5434:", ":6432:", ":25060:", ":*:", "pgpass"),
    lead=270,
    reach=2000,
    multiline=True,
    check=_flag_password,
)


# A credential's name then its value on a command line that sets secrets: fish's `set -x
# DB_PASSWORD SECRET` (`-gx`, `-Ux`, `--export`), `fly secrets set API_KEY=SECRET`, `heroku
# config:set DB_PASSWORD=SECRET`: any value but a reference, a command substitution or a
# placeholder (the environment-file rules want a value that looks generated).
def _named_value(value: str, strict: bool) -> bool:
    return not value.startswith("(") and _flag_password(value, strict)


FISH_SET = Rule(
    name="cli-password",
    pattern=lazy(
        r"(?<![A-Za-z0-9_\-])set(?=(?:[ \t]{1,4}-[A-Za-z]{1,4}){0,2}?[ \t]{1,4}"
        r"(?:-[A-Za-z]{0,3}x|--export))(?:[ \t]{1,4}-{1,2}[A-Za-z]{1,9}){1,3}[ \t]{1,4}"
        + _CREDENTIAL_NAME
        + r"[ \t]{1,4}"
        + _FLAG_VALUE
    ),
    anchors=("set -", "set\t-"),
    reach=500,
    check=_named_value,
)
# Windows' `setx DB_PASSWORD SECRET` (`/M` after it: the machine's environment).
SETX = Rule(
    name="cli-password",
    pattern=lazy(
        r"(?<![A-Za-z0-9_\-])(?i:setx)[ \t]{1,4}" + _CREDENTIAL_NAME + r"[ \t]{1,4}" + _FLAG_VALUE
    ),
    anchors=("setx ", "setx\t"),
    reach=500,
    check=_named_value,
)
SECRET_SETTERS = Rule(
    name="cli-password",
    pattern=lazy(
        r"(?<![A-Za-z0-9_\-])(?:(?:flyctl|fly)[ \t]{1,4}secrets[ \t]{1,4}set"
        # At most eight words before the name: unbounded, each of many commands on one line
        # scanned to the line's end (quadratic).
        r"|heroku[ \t]{1,4}config:set)(?:[ \t]{1,4}[^\s=;|&]{1,128}(?=[ \t])){0,8}?[ \t]{1,4}"
        + _CREDENTIAL_NAME
        + r"="
        + _FLAG_VALUE
    ),
    anchors=("secrets set", "config:set"),
    lead=8,
    reach=900,
    check=_named_value,
)

# `echo -n SECRET | vercel env add API_TOKEN production` (also `printf`): vercel reads the
# value from its input.
VERCEL_ENV_STDIN = Rule(
    name="cli-password",
    pattern=lazy(
        _PIPED_VALUE
        + r"(?:npx[ \t]{1,4})?vercel[ \t]{1,4}env[ \t]{1,4}add[ \t]{1,4}"
        + _CREDENTIAL_NAME
    ),
    anchors=("| vercel", "|vercel", "| npx vercel"),
    lead=300,
    reach=200,
    check=_flag_password,
)

# Options between a command's words and its arguments (`--global`, `-g`, `--auth`, `--vault-name
# kv`): at most six, each a flag and maybe its word.
_OPTIONS = r"(?:[ \t]{1,4}--?[A-Za-z][A-Za-z\-]{0,30}(?:=[^\s;|&]{1,128})?){0,6}?"
_WORD = r"[^\s\"'\\;|&<>]{1,256}"


# Secret stores and package managers' credential settings, on their command line:
# `aws ssm put-parameter … --value SECRET`, `az keyvault secret set … --value SECRET`, `cargo
# login TOKEN`, `poetry config http-basic.<repo> user SECRET` (composer's too), `composer
# config github-oauth.github.com TOKEN` (`gitlab-token.`, `gitlab-oauth.`, `bearer.`), `git
# config github.token TOKEN` (a key ending in a credential's word), `dotnet user-secrets set
# "Stripe:SecretKey" "SECRET"` and `netlify env:set API_KEY SECRET` of a credential's name.
def _stored_value(value: str, strict: bool) -> bool:
    """A value given to a secret store; not a file the CLI reads it from (`file://pw.txt`)."""
    return not value.startswith(("file://", "fileb://")) and _flag_password(value, strict)


CREDENTIAL_SETTERS = (
    replace(
        _command_password(
            ("aws ssm put-parameter", "az keyvault secret set"), r"--value(?:[ \t]{1,4}|=)"
        ),
        check=_stored_value,
    ),
    Rule(
        name="cli-password",
        pattern=lazy(
            r"(?<![A-Za-z0-9_\-])cargo[ \t]{1,4}login"
            r"(?:[ \t]{1,4}--registry(?:[ \t]{1,4}|=)" + _WORD + r")?[ \t]{1,4}" + _FLAG_VALUE
        ),
        anchors=("cargo login",),
        reach=400,
        check=_flag_password,
    ),
    Rule(
        name="cli-password",
        pattern=lazy(
            r"(?<![A-Za-z0-9_\-])(?:poetry|composer)[ \t]{1,4}config"
            + _OPTIONS
            + r"[ \t]{1,4}http-basic\.[^\s]{1,128}[ \t]{1,4}[\"']?"
            + _WORD
            + r"[\"']?[ \t]{1,4}"
            + _FLAG_VALUE
        ),
        anchors=("http-basic.",),
        lead=80,
        reach=700,
        check=_flag_password,
    ),
    Rule(
        name="cli-password",
        pattern=lazy(
            r"(?<![A-Za-z0-9_\-])composer[ \t]{1,4}config"
            + _OPTIONS
            + r"[ \t]{1,4}(?:github-oauth|gitlab-token|gitlab-oauth|bearer)\.[^\s]{1,128}"
            r"[ \t]{1,4}" + _FLAG_VALUE
        ),
        anchors=("github-oauth.", "gitlab-token.", "gitlab-oauth.", "bearer."),
        lead=80,
        reach=600,
        check=_flag_password,
    ),
    Rule(
        name="cli-password",
        pattern=lazy(
            r"(?<![A-Za-z0-9_\-])git[ \t]{1,4}config"
            + _OPTIONS
            + r"[ \t]{1,4}[A-Za-z0-9_.\-]{0,96}(?i:token|password|secret)[ \t]{1,4}"
            + _FLAG_VALUE
        ),
        anchors=("git config",),
        reach=600,
        check=_named_value,
    ),
    Rule(
        name="cli-password",
        pattern=lazy(
            r"(?<![A-Za-z0-9_\-])(?:dotnet[ \t]{1,4}user-secrets[ \t]{1,4}set"
            r"|netlify[ \t]{1,4}env:set)"
            + _OPTIONS
            + r"[ \t]{1,4}[\"']?(?=[A-Za-z0-9_.:\-]{0,60}?(?i:"
            + SECRET_KEY_WORDS
            + r"))[A-Za-z0-9_.:\-]{1,96}[\"']?[ \t]{1,4}"
            + _FLAG_VALUE
        ),
        anchors=("user-secrets set", "env:set"),
        lead=16,
        reach=600,
        check=_named_value,
    ),
)

# Commands that read a credential from their input, given it by `echo SECRET |` or a
# here-string (`<<< SECRET`): `gh auth login --with-token`, `gcloud secrets create NAME
# --data-file=-` (`versions add`), and with a here-string also `docker login
# --password-stdin` (podman's, nerdctl's), `vercel env add NAME` and `sudo -S`.
_READS_STDIN = (
    r"gh[ \t]{1,4}auth[ \t]{1,4}login[^\r\n|;&<>]{0,200}?--with-token(?![A-Za-z0-9_\-])"
    r"|gcloud[ \t]{1,4}secrets[ \t]{1,4}(?:create|versions[ \t]{1,4}add)"
    r"[^\r\n|;&<>]{0,300}?--data-file[ \t=]{1,4}-(?![A-Za-z0-9_\-])"
)
STDIN_CREDENTIALS = (
    Rule(
        name="cli-password",
        pattern=lazy(_PIPED_VALUE + r"(?:" + _READS_STDIN + r")"),
        anchors=("| gh", "|gh", "| gcloud", "|gcloud"),
        lead=300,
        reach=400,
        check=_flag_password,
    ),
    Rule(
        name="cli-password",
        pattern=lazy(
            r"(?<![A-Za-z0-9_\-])(?:"
            + _READS_STDIN
            + r"|(?:docker|podman|nerdctl)[ \t]{1,4}login[^\r\n|;&<>]{0,300}?--password-stdin"
            r"|vercel[ \t]{1,4}env[ \t]{1,4}add[^\r\n|;&<>]{1,200}?"
            r"|sudo[ \t]{1,4}(?:-[A-Za-z]{0,4}S|--stdin)[^\r\n|;&<>]{0,300}?"
            r")[ \t]{0,4}<<<[ \t]{0,4}" + _FLAG_VALUE
        ),
        anchors=("<<<",),
        lead=400,
        reach=300,
        check=_flag_password,
    ),
)

# PowerShell's `ConvertTo-SecureString 'SECRET' -AsPlainText -Force` (`-String "…"`, or the
# string piped in): the plain text.
_AS_PLAIN_TEXT = r"[ \t]{1,4}(?:-Force[ \t]{1,4})?-AsPlainText"
SECURE_STRINGS = (
    Rule(
        name="cli-password",
        pattern=lazy(
            r"(?i:convertto-securestring)[ \t]{1,4}(?:-String[ \t]{1,4})?"
            + _FLAG_VALUE
            + r"[\"']?"
            + _AS_PLAIN_TEXT
        ),
        anchors=("convertto-securestring",),
        reach=400,
        check=_flag_password,
    ),
    Rule(
        name="cli-password",
        pattern=lazy(
            r"(?<![A-Za-z0-9_\-])(?P<quote>\\{0,3}[\"'])(?P<secret>[^\"'\r\n\\]{1,256})(?P=quote)"
            r"[ \t]{0,4}\|[ \t]{0,4}(?i:convertto-securestring)" + _AS_PLAIN_TEXT
        ),
        anchors=("convertto-securestring",),
        lead=300,
        reach=40,
        check=_flag_password,
    ),
)


# `.netrc`: `machine <host> login <user> [account <a>] password <secret>`, on one line or
# over several (a login before the password: "machine learning password reset" is prose).
# (A diff's `+` or `-` may start each line, the first one's too: `-machine` at a line's or a
# string's start is a removed line's, where `-` elsewhere joins a word, `virtual-machine`.
# After an escaped newline too: `\nmachine …` in JSON quoted twice, whose `n` is no boundary.
# And after what `grep` writes before a line, `.netrc:2:`, `.netrc-3-`, `3-`: a context
# line's `-` before `machine` follows the line's number.)
_GREP_LINE = GREP_LINE + "?"
_NETRC_LINE = r"(?:\r?\n|\\n)" + _GREP_LINE + r"[+\-]?[ \t]{0,8}"
_NETRC_SEP = r"(?:[ \t]{1,8}|[ \t]{0,8}" + _NETRC_LINE + r"(?:" + _NETRC_LINE + r")?)"
# The password: quoted, or a token up to a blank (no shell reads the file: `&`, `;`, `|` and
# a backquote are its characters, `n&9WVV8Ia%LE…`). A reference ends where a shell's operator
# stands: the line is a shell's that writes the file (`echo … password $TOKEN&&chmod 600 …`).
_NETRC_VALUE = (
    r"[\"']?(?P<secret>(?<=\")[^\"\r\n]{1,256}(?=\")|(?<=')[^'\r\n]{1,256}(?=')"
    r"|(?=[$%])[^\s\"'\\;|&`<>]{1,256}|[^\s\"'\\]{1,256})"
)
NETRC_PASSWORD = Rule(
    name="netrc-password",
    pattern=lazy(
        r"(?:(?<![A-Za-z0-9_\-])|(?<=\\n)|(?<=\\n-)|(?<=-)(?<![^\n\"'0-9]-))"
        r"machine[ \t]{1,4}[^\s\\]{1,256}"
        + _NETRC_SEP
        + r"login[ \t]{1,4}[^\s\\]{1,256}(?:"
        + _NETRC_SEP
        + r"account[ \t]{1,4}[^\s\\]{1,256})?"
        + _NETRC_SEP
        + r"password[ \t]{1,4}"
        + _NETRC_VALUE
    ),
    anchors=("machine",),
    reach=900,
    multiline=True,
    check=_flag_password,
)

# XML elements named so (`<password>…</password>`, `<ossrhPassword>`, `<apiKey>`, with or
# without attributes, the value on its own line or not), found at the closing tag. A
# password's element holds any value but a reference or a placeholder; a token's or a key's
# must look like a secret (`<token>IDENT </token>` in a grammar is none).
_XML_PASSWORD_WORDS = ("password", "passwd", "pwd", "passphrase")  # not `pass`: <compass>
_XML_OTHER_WORDS = (
    *(
        f"{word}{joint}key"
        for word in (
            "api",
            "access",
            "private",
            "auth",
            "client",
            "signing",
            "encryption",
            "secret",
        )
        for joint in ("", "_", "-")
    ),
    "secret",
    "token",
    "credential",
    "credentials",
)


def _xml_element(words: tuple[str, ...], check: Check) -> Rule:
    return Rule(
        name="xml-secret",
        pattern=lazy(
            r"<(?P<key>(?:[A-Za-z_][A-Za-z0-9_.:\-]{0,60}?)?(?i:"
            + "|".join(re.escape(word) for word in words)
            + r"))(?:[ \t][^<>\r\n]{0,200})?>"
            # The value on the element's line, or alone on the next (a formatter's layout;
            # the line breaks raw or escaped in a JSON string).
            + r"(?:[ \t]{0,40}(?:\r?\n|(?:\\r)?\\n)[ \t]{0,40})?"
            + r"(?P<secret>[^<>\r\n]{1,400}?)"
            + r"(?:(?:\r?\n|(?:\\r)?\\n)[ \t]{0,40})?</(?P=key)>"
        ),
        anchors=tuple(f"{word}>" for word in words),
        lead=720,
        reach=2,
        multiline=True,
        check=check,
    )


def _generic_value(value: str, strict: bool) -> bool:
    return heuristics.looks_like_secret_value(value, min_length=8, min_entropy=3.0)


# Maven's `settings-security.xml`: `<master>{…}</master>`, the master password that decrypts
# every password of `settings.xml`, encrypted with a key Maven 3 builds in, so as good as
# plain; text may stand around the braces (a note on when it was set). Base64 in braces:
# `<master>` elsewhere (a branch's name, a flag) stays.
_MAVEN_MASTER = re.compile(r"\{[A-Za-z0-9+/]{16,}={0,2}\}")


def _maven_master(value: str, strict: bool) -> bool:
    return _MAVEN_MASTER.search(value) is not None


XML_SECRETS = (
    _xml_element(_XML_PASSWORD_WORDS, _flag_password),
    _xml_element(_XML_OTHER_WORDS, _generic_value),
    _xml_element(("master",), _maven_master),
)


# Composer's `auth.json` (also `COMPOSER_AUTH` and `composer.json`'s `config`): a token per
# host under `bearer`, `github-oauth`, `gitlab-token` or `gitlab-oauth`, `{"bearer":
# {"repo.example.org": "…"}}`. One rule per place in the object, as a host's token is found
# only after the key: the first four hosts (a file holds one or two).
_COMPOSER_KEYS = ("bearer", "github-oauth", "gitlab-token", "gitlab-oauth")
_JSON_BLANK = r"[ \t\r\n]{0,16}"
# A host's name, dotted (an OpenAPI scheme's `"bearer": {"type": "http"}` names no host).
_COMPOSER_HOST = (
    _JSON_BLANK
    + r'"[A-Za-z0-9\-]{1,63}(?:\.[A-Za-z0-9\-]{1,63}){1,8}(?::[0-9]{1,5})?"'
    + _JSON_BLANK
    + ":"
    + _JSON_BLANK
)
_COMPOSER_OTHER = _COMPOSER_HOST + r'"[^"\\\r\n]{0,400}"' + _JSON_BLANK + ","


def _composer_token(position: int) -> Rule:
    return Rule(
        name="composer-auth-token",
        pattern=lazy(
            r'"(?:'
            + "|".join(_COMPOSER_KEYS)
            + r')"'
            + _JSON_BLANK
            + ":"
            + _JSON_BLANK
            + r"\{"
            + _COMPOSER_OTHER * position
            + _COMPOSER_HOST
            + r'"(?P<secret>[^"\\\r\n]{1,400})"'
        ),
        anchors=tuple(f'"{key}"' for key in _COMPOSER_KEYS),
        lead=1,
        reach=2000,
        multiline=True,
        check=_flag_password,
        start="anchor",
    )


COMPOSER_TOKENS = tuple(_composer_token(position) for position in range(4))


# PHP `define( 'DB_PASSWORD', '…' );` and WordPress's keys and salts (`AUTH_SALT`, `NONCE_KEY`,
# `LOGGED_IN_KEY`).
def _defined_value(value: str, strict: bool) -> bool:
    return not value.lower().endswith("_here") and _flag_password(value, strict)


PHP_DEFINE = Rule(
    name="php-define-secret",
    pattern=lazy(
        r"define[ \t]{0,2}\([ \t]{0,4}(?P<quote>\\{0,3}[\"'])"
        r"(?P<key>(?=[A-Za-z0-9_]{0,60}?(?i:"
        + SECRET_KEY_WORDS
        + r"|salt|nonce_key|logged_in_key))[A-Za-z0-9_]{1,96}+)"
        # WordPress aligns the values in a column (`'AUTH_KEY',         '…'`: 9 blanks).
        r"(?P=quote)[ \t]{0,4},[ \t]{0,16}(?P<open>\\{0,3}[\"'])"
        # The value up to its quote: no quote or escaped quote inside (read in one pass).
        r"(?P<secret>(?:[^\r\n\"'\\]|\\(?![\\\"'])){1,400}+)(?P=open)[ \t]{0,4}\)"
    ),
    anchors=("define(", "define ("),
    reach=600,
    check=_defined_value,
    start="anchor",
)


# C and C++ `#define PASSWORD "…"`, `#define API_KEY L"…"`: a macro of a credential's name
# (not metadata: `PASSWORD_LEN`, `API_KEY_HEADER`) whose value is a string literal. A
# password's literal is the value itself, as on an environment line: one that reads as a name
# (`"mySecretPass123"`) is a password too; a token's or key's must look random (a macro
# `TOKEN_HEADER` holds `"Authorization"`). A placeholder, a reference, a credential's name
# (`"X-Api-Key"`, `"userPassword"`: letters alone holding a credential's word), a message (a
# blank inside) and a literal of words or a path stay.
_NAMES_A_CREDENTIAL = re.compile(r"(?i:pass|pwd|secret|token|key|auth|credential)")


def _c_defined_password(value: str, strict: bool) -> bool:
    if _NAMED_LIKE_A_CREDENTIAL.fullmatch(value) or _path_like(value) or " " in value:
        return False  # a literal holding a blank is a message (`"Enter the password: "`)
    if value.isalpha() and _NAMES_A_CREDENTIAL.search(value):
        return False  # a name about a credential: OpenSSL's `LN_userPassword "userPassword"`
    if re.fullmatch(r"[A-Za-z0-9_.\-]+", value):
        return heuristics.looks_like_env_literal(value)
    return heuristics.looks_like_env_password(value)


def _c_defined_key(value: str, strict: bool) -> bool:
    return " " not in value and heuristics.looks_like_secret_value(value)


def _c_define(words: str, check: Check) -> Rule:
    return Rule(
        name="c-define-secret",
        pattern=lazy(
            r"#[ \t]{0,4}define[ \t]{1,8}"
            r"(?P<key>[A-Za-z0-9_]{0,60}?(?i:" + words + r")(?:_?[0-9]{1,3})?)"
            r"[ \t]{1,16}(?:u8|[LuU])?(?P<open>\\{0,3}\")"
            # The value up to its quote: no quote or escaped quote inside (read in one pass).
            r"(?P<secret>(?:[^\r\n\"\\]|\\(?![\\\"])){1,400}+)(?P=open)"
        ),
        anchors=("define",),
        lead=8,
        reach=600,
        check=check,
        before=lazy("#"),  # prose's and JavaScript's `define` are not searched
    )


C_DEFINES = (
    _c_define(
        r"password|passwd|pwd|(?<![A-Za-z])pass|passphrase|secret|secret_?key", _c_defined_password
    ),
    _c_define(SECRET_KEY_WORDS, _c_defined_key),
)

# A credential's name and its value as a pair of fields: Kubernetes' and ECS's `env` lists in
# YAML (`- name: DB_PASSWORD` then `value: …`) and JSON (`{"name": …, "value": …}`), AWS's
# `{"Key": …, "Value": …}` tags and parameters, CloudFormation's `ParameterKey` and
# `ParameterValue`. A reference (`$(DB_PASS)`, `{{ … }}`) or a placeholder stays.
_PAIR_NAME = r"(?i:name|key|parameterkey)"
# The credential's name before the value's key (quotes escaped at any depth): without it a
# `"value":` (common in JSON a tool printed) is neither read nor decoded. In lower case, as
# `Rule.before` is searched.
_PAIR_BEFORE = lazy(
    r"(?:name|key|parameterkey)\\{0,7}[\"']?[ \t\r\n]{0,32}:[ \t\r\n]{0,32}\\{0,7}[\"']?"
    r"[a-z0-9_.\-]{0,60}?(?:" + SECRET_KEY_WORDS + r")"
)
_PAIR_VALUE = r"(?i:value|parametervalue)"
NAME_VALUE_PAIRS = (
    Rule(
        name="name-value-secret",
        pattern=lazy(
            r"(?<![A-Za-z0-9_])"
            + _PAIR_NAME
            + r":[ \t]{1,4}[\"']?"
            + _CREDENTIAL_NAME
            + r"[\"']?[ \t]{0,4}(?:\r?\n|\\n)"
            + _GREP_LINE
            + r"[+\-]?[ \t]{0,16}(?:-[ \t]{1,4})?"
            + _PAIR_VALUE
            + r":[ \t]{1,4}"
            + whole_value(1, 1000)
        ),
        anchors=("value:",),
        lead=200,
        reach=1100,
        multiline=True,
        check=_flag_password,
        before=_PAIR_BEFORE,
    ),
    Rule(
        name="name-value-secret",
        pattern=lazy(
            r"\""
            + _PAIR_NAME
            + r"\"[ \t\r\n]{0,32}:[ \t\r\n]{0,32}\""
            + _CREDENTIAL_NAME
            + r"\"[ \t\r\n]{0,32},[ \t\r\n]{0,32}\""
            + _PAIR_VALUE
            + r"\"[ \t\r\n]{0,32}:[ \t\r\n]{0,32}\"(?P<secret>(?:[^\"\\\r\n]|\\[^\r\n]){1,1000}+)\""
        ),
        # `value\":` is the same key in a JSON string, at any depth (decoded around the hit,
        # then read).
        anchors=('value":', 'value" :', "value\\"),
        lead=300,
        reach=1100,
        multiline=True,
        check=_flag_password,
        before=_PAIR_BEFORE,
    ),
)

# A credential's value as a YAML block scalar (`password: |`, `client_secret: >-`, `api_key:
# |-  # comment`): the lines indented under the key, every one of them, raw or with escaped
# newlines (a JSON string quoted in another). The key's own indentation (a list item's `- `
# included) is repeated on each line of the block, deeper, so a line less indented ends it
# (a diff's `+` or `-` may start each line, after what `grep` writes before it, `path:3:`,
# `path-4-`). A template, a reference, a placeholder and a
# block of prose (a line of more than three blanks, or of words and punctuation only) stay;
# a name ending so names metadata (`password_policy: |`) stays.
_BLOCK_HEADER = r"[|>][+\-]?[1-9]?[+\-]?(?:[ \t]{1,4}#[^\r\n\\]{0,200})?"


# The block's lines after what `grep` writes before each (only when it wrote it before the
# key's line too: a YAML key holding `.`, `app.version: 2`, reads as a path).
_GREP_BLOCK_LINE = r"(?(grep)" + GREP_LINE + r")"
_GREP_LINES = re.compile(r"(?:\r?\n|\\n)" + GREP_LINE)

_PROSE = re.compile(r"[A-Za-z ,.;:'!?()\-]+")
_BARE_TOKEN = re.compile(r"[A-Za-z0-9_\-]+")


def _block_value(value: str, strict: bool) -> bool:
    value = _GREP_LINES.sub("\n", value)  # the lines as the file holds them
    lines = [line.strip() for line in value.replace("\\n", "\n").splitlines() if line.strip()]
    if not lines or any(line.count(" ") > 3 for line in lines):
        return False
    if any(" " in line and _PROSE.fullmatch(line) for line in lines):
        return False  # words and punctuation only: `Ask the ops team.`
    # A block scalar is text, never evaluated: a bare run of letters and digits in it is the
    # value, however much it reads like a name (`Lzrl74VvjgR13PzvZNGD` has a name's humps);
    # a dotted name, a call or a URL is a reference to one.
    first = lines[0]
    reference = heuristics.looks_like_reference(first) and not _BARE_TOKEN.fullmatch(first)
    return _flag_password(first, strict) and not reference


YAML_BLOCK_SECRET = Rule(
    name="yaml-block-secret",
    pattern=lazy(
        r"(?:^|(?<=[\n\"])|(?<=\\n))(?P<grep>"
        + GREP_LINE
        + r")?[+\-]?(?P<indent>[ \t]{0,32})(?P<dash>-[ \t]{1,4})?[\"']?"
        + _CREDENTIAL_NAME
        + r"[\"']?[ \t]{0,4}:[ \t]{1,4}"
        + _BLOCK_HEADER
        + r"[ \t]{0,64}"
        + _NEWLINE
        + r"(?:"
        + _GREP_BLOCK_LINE
        + r"[ \t]{0,64}"
        + _NEWLINE
        + r"){0,4}"
        # The block: each line indented past the key (blank lines inside it included).
        # Under a list item's first key (`- password: |`) the block is indented past the key,
        # where the item's `- ` stood.
        + _GREP_BLOCK_LINE
        + r"[+\-]?(?P=indent)(?P<inner>(?(dash)[ \t]{2,5})[ \t]{1,32})(?P<secret>[^\s\\]"
        + _LINE_CHAR
        + r"{0,2000}+(?:(?:"
        + _NEWLINE
        + _GREP_BLOCK_LINE
        + r"[ \t]{0,64}){0,4}"
        + _NEWLINE
        + _GREP_BLOCK_LINE
        + r"[+\-]?(?P=indent)(?P=inner)"
        + _LINE_CHAR
        + r"{1,2000}+){0,200}+)",
        re.MULTILINE,
    ),
    anchors=(": |", ": >"),
    lead=140,
    reach=8000,
    multiline=True,
    check=_block_value,
    # The header ends its line (raw, or escaped in a JSON string at any depth).
    after=lazy(r"[+\-]?[1-9]?[+\-]?[ \t]{0,4}(?:#[^\r\n\\]{0,200})?(?:\r?\n|\\{1,7}[nr])"),
    before=lazy(r"(?:" + SECRET_KEY_WORDS + r")[a-z0-9_.\-]{0,60}[\"']?[ \t]{0,4}$"),
)

# A TOML multi-line string assigned to a credential's name: `password = """…"""` and the
# literal form (three single quotes), on one line or over several (a newline right after the
# opening quotes is not part of the value). The value holds no quote.
_TOML_QUOTES = ('"""', "'''", '\\"\\"\\"', '\\\\\\"\\\\\\"\\\\\\"')
TOML_MULTILINE_SECRET = Rule(
    name="toml-multiline-secret",
    pattern=lazy(
        r"(?<![A-Za-z0-9_.\-])\"?"
        + _CREDENTIAL_NAME
        + r"\"?[ \t]{0,4}=[ \t]{0,4}(?P<quote>\"\"\"|''')(?:\r?\n)?"
        + r"(?P<secret>[^\"'\r\n]{1,1000}+(?:\r?\n[^\"'\r\n]{1,1000}+){0,40}+)(?:\r?\n)?"
        + r"(?P=quote)"
    ),
    anchors=tuple(f"={blank}{quote}" for blank in ("", " ") for quote in _TOML_QUOTES),
    lead=140,
    reach=42000,
    multiline=True,
    check=_block_value,
    before=lazy(r"(?:" + SECRET_KEY_WORDS + r")[a-z0-9_.\-]{0,60}\\{0,7}\"?[ \t]{0,4}$"),
)

# .NET's `appSettings`: `<add key="DbPassword" value="…" />`, a credential's name as the key,
# its value as the attribute after it.
XML_ADD_KEY = Rule(
    name="xml-secret",
    pattern=lazy(
        r"<add[ \t\r\n]{1,16}key[ \t]{0,4}=[ \t]{0,4}(?P<q1>[\"'])"
        + _CREDENTIAL_NAME
        + r"(?P=q1)[ \t\r\n]{1,16}value[ \t]{0,4}=[ \t]{0,4}(?P<q2>[\"'])"
        + r"(?P<secret>[^\"'<>\r\n]{1,400})(?P=q2)"
    ),
    anchors=("<add key=", "<add  key="),
    reach=600,
    multiline=True,
    check=_flag_password,
)


# The signature of a signed URL: AWS's presigned `X-Amz-Signature=`, Google Cloud Storage's
# `X-Goog-Signature=`, and a CDN's or an app's `?signature=` (Azure's SAS `sig=` is
# `azure-sas-signature`): anyone holding the URL may use it until it expires. A value that
# looks generated (hex of 32 or more, or a random run); `signature=none`, `signature=v1` stay.
def _url_signature(value: str, strict: bool) -> bool:
    if heuristics.is_hash_or_uuid(value):
        return len(value) >= 32 and heuristics.shannon_entropy(value) >= 3.0
    return heuristics.looks_random(value.replace("%", ""), min_length=16, min_entropy=3.0)


SIGNED_URL = Rule(
    name="signed-url-signature",
    pattern=lazy(
        # After `?` or `&`, or `&amp;` in a URL HTML or XML escaped (a page's link).
        r"(?:(?<=[?&])|(?<=&amp;))(?i:x-amz-signature|x-goog-signature|signature)="
        r"(?P<secret>[A-Za-z0-9%+/_.~=\-]{16,2048}+)"
    ),
    anchors=("signature=",),
    lead=17,
    reach=2100,
    check=_url_signature,
)


# An environment file encoded in base64 (`echo <blob> | base64 -d > .env`, a CI variable, a
# manifest's value outside a `kind: Secret`): found by a credential's name as base64 writes it
# at each of the three byte alignments (`PASSWORD` is `UEFTU1dPUkQ`, `BBU1NXT1JE` or `QVNTV09SR`
# inside a run), the whole run taken when it decodes to text assigning a value to such a name.
def _base64_cores(word: str) -> tuple[str, ...]:
    """The characters of `word`'s base64 that do not depend on its neighbours, per alignment."""
    cores = []
    for shift in range(3):
        encoded = base64.b64encode(b"\0" * shift + word.encode()).decode()
        start = -(-8 * shift // 6)
        end = 8 * (shift + len(word)) // 6
        cores.append(encoded[start:end].lower())
    return tuple(cores)


_ENCODED_NAMES = ("PASSWORD", "SECRET", "TOKEN", "API_KEY", "PASSWD")
_DECODED_ASSIGNMENT = re.compile(
    r"^[ \t]{0,8}(?:export[ \t]{1,4})?(?P<key>[A-Za-z0-9_.\-]{0,60}?(?i:" + SECRET_KEY_WORDS + r")"
    r"[A-Za-z0-9_.\-]{0,60})[ \t]{0,4}[=:][ \t]{0,4}[\"']?(?P<value>[^\s\"']{1,256})",
    re.MULTILINE,
)


def _encoded_assignments(value: str, strict: bool) -> bool:
    """The run decodes to text with a line assigning a credential's name (not metadata's:
    `PASSWORD_MIN_LENGTH`) a value as an environment file's rule wants it."""
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True).decode()
    except (ValueError, UnicodeDecodeError):
        return False
    return any(
        re.split(r"[_.\-]", match.group("key").lower())[-1] not in METADATA_KEY_SUFFIXES
        and heuristics.looks_like_env_literal(match.group("value"))
        for match in _DECODED_ASSIGNMENT.finditer(decoded)
    )


ENCODED_ENV_FILE = Rule(
    name="base64-encoded-secrets",
    pattern=lazy(
        r"(?<![A-Za-z0-9+/=])(?P<secret>[A-Za-z0-9+/]{16,65536}+={0,2})(?![A-Za-z0-9+/=])"
    ),
    anchors=tuple(core for name in _ENCODED_NAMES for core in _base64_cores(name)),
    lead=65536,
    reach=65536,
    check=_encoded_assignments,
)

# A command that prints a secret, then what it printed alone on the next line, in a terminal's
# log or a tool's output (`op read op://vault/item/password`, `terraform output -raw
# db_password`, `vault kv get -field=password secret/db`, `gcloud secrets versions access
# latest --secret=db`, `echo "$DB_PASSWORD"`). Not a command whose output goes elsewhere
# (`$(op read …)`, `| …`, `> file`) nor one a quote opens (a pattern searched for:
# `grep -rl 'echo $API_TOKEN' .`); the line after it holds one run of characters and
# nothing else.
PRINTING_COMMANDS = (
    "op read ",
    "terraform output -raw ",
    "vault kv get ",
    "vault read ",
    "gcloud secrets versions access ",
    # (not `echo ` alone: a megabyte of `echo ` each asked took seconds; the pattern reads
    # each name followed by the one space its anchors hold, and any flag of `echo`)
    "echo $",
    'echo "$',
    'echo \\"$',
    "echo -",
    "printf ",
    "printenv ",
)
# A variable named for a credential: a credential's word (`PASSWORD`, `PASSWD`,
# `PASSPHRASE`, `PASS_KEY`, `TOKEN`, `SECRET`, `API_KEY`, `PRIVATE_KEY`, `CREDENTIALS`)
# ending its name, the words before it each followed by `_` (`DB_PASSWORD`, `GITHUB_TOKEN`,
# `AWS_SECRET_ACCESS_KEY`); not the shell's working folder (`$PWD`), a word inside another
# (`$BYPASS`), `PASS` alone (as often a count of tests passed as a password: `$NUM_PASS`)
# nor metadata about a credential (`$TOKEN_PATH`, `$MAX_TOKENS`, `$PASSWORD_FILE`).
_CREDENTIAL_VARIABLE = (
    r"(?!(?:OLD)?PWD\b)(?:[A-Za-z0-9]{1,40}_){0,8}(?i:pass(?:word|wd|phrase|_?key)|(?!pass)(?:"
    + SECRET_KEY_WORDS
    + r"))(?i:_?key)?(?:_?[0-9]{1,3})?(?![A-Za-z0-9_])"
)
# Its value, as `echo`, `printf` and `printenv` print it on a line of its own (`echo
# "$DB_PASSWORD"`, `echo ${API_TOKEN}`, `printf '%s\n' "$SECRET_KEY"`, `printenv
# GITHUB_TOKEN`; the quote JSON-escaped in a transcript too).
_VARIABLE = r'(?:\\?")?\$\{?' + _CREDENTIAL_VARIABLE
_PRINTED_VARIABLE = (
    r"echo (?:-[neE]{1,3}[ \t]{1,4})?"
    + _VARIABLE
    + r"|printf [ \t]{0,3}(?:(?:'%s(?:\\n)?'|\"%s(?:\\n)?\"|%s(?:\\n)?)[ \t]{1,4})?"
    + _VARIABLE
    + r"|printenv [ \t]{0,3}"
    + _CREDENTIAL_VARIABLE
)
# The rest of a command's line, up to what would send its output elsewhere: a redirection of
# its errors alone (`2>/dev/null`, `2>&1`) sends none.
# (atomic: its target read in one way only, or the rest's repetition splits it every way)
_STDERR_REDIRECTION = r"(?<![\w>&])2>>?(?>&[12](?![\w])|[ \t]{0,2}[^\s\\|>)`;&<]{1,256})"
_COMMAND_REST = r"(?:" + _STDERR_REDIRECTION + r"|[^\r\n\\|>)`;&]|\\[^nr])"
PRINTED_SECRET = Rule(
    name="printed-secret",
    pattern=lazy(
        # (not a quoted argument's text: `grep -rl 'op read' .`, `grep "printenv X" .`)
        r"(?<![(`\w'\"-])(?:op read |gcloud secrets versions access "
        # an output named for a credential; one field of a Vault secret
        r"|terraform output -raw [^\s\\|>)`;&]{0,64}(?i:pass|secret|token|key|pwd|cred|auth)"
        r"|vault (?:kv get|read) "
        + _COMMAND_REST
        + r"{0,128}-field[= ]|"
        + _PRINTED_VARIABLE
        + r")"
        + _COMMAND_REST
        + r"{0,256}(?:\r?\n|\\r\\n|\\n)(?P<secret>[^\s\"'`\\]{6,512})(?=\r?\n|\\[nr]|[\"'`]|\Z)"
    ),
    anchors=PRINTING_COMMANDS,
    reach=800,
    multiline=True,
    check=lambda value, strict: (
        not value.endswith(":") and heuristics.looks_like_env_literal(value)
    ),
    start="anchor",
)

STRUCTURE_RULES: tuple[Rule, ...] = (
    PRINTED_SECRET,
    KUBERNETES_SECRET_AFTER_KIND,
    KUBERNETES_SECRET_BEFORE_KIND,
    KUBERNETES_SECRET_JSON,
    CURL_USER,
    CURL_HEADER,
    REGISTRY_LOGIN,
    *COMMAND_PASSWORDS,
    SUDO_STDIN,
    REGISTRY_LOGIN_STDIN,
    HTPASSWD_BATCH,
    NPM_CONFIG_SET,
    COOKIE_VALUES,
    HTTP_AUTH_PASSWORD,
    PGPASS_PASSWORD,
    FISH_SET,
    SETX,
    SECRET_SETTERS,
    VERCEL_ENV_STDIN,
    *CREDENTIAL_SETTERS,
    *STDIN_CREDENTIALS,
    *TERRAFORM_SECRETS,
    WIFI_PASSWORD,
    ADD_MASK,
    *SECURE_STRINGS,
    NETRC_PASSWORD,
    *XML_SECRETS,
    XML_ADD_KEY,
    *COMPOSER_TOKENS,
    YAML_BLOCK_SECRET,
    TOML_MULTILINE_SECRET,
    SIGNED_URL,
    ENCODED_ENV_FILE,
    PHP_DEFINE,
    *C_DEFINES,
    *NAME_VALUE_PAIRS,
)
"""Registered with the provider rules (`rules_providers.PROVIDER_RULES`): they name what
they find ahead of the assignment rules."""

GENERIC_RULES: tuple[Rule, ...] = (
    FRAMEWORK_SECRET_KEY,
    CREDENTIAL_ASSIGNMENT,
    ENV_CALL,
    DOCKERFILE_ENV,
    PROSE_SECRET,
)
