"""Provider credential formats beyond the core catalogue in `rules.py`.

Two kinds of rule live here:

- **Prefix and structure rules**: the provider documents a public prefix (`rnd_`, `dckr_pat_`,
  `pscale_tkn_`) or a fixed structure (`<14>.atlasv1.<64>`, `v1.0-<hex>-<hex>`). The rule runs
  exactly at its prefix, which is its anchor.
- **Keyword rules**: the provider documents no prefix (a bare 32-character hex key, a UUID).
  The rule runs only where the vendor's name starts the identifier a value is assigned to
  (`DATADOG_API_KEY=...`, `linode_token: ...`), or where prose names the vendor right before
  a quoted value; the value must have the vendor's charset and length and look random.

Every repetition is capped, so each match attempt costs a bounded number of steps.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from stet_lsp.gate import generated, heuristics
from stet_lsp.gate.keyblocks import GREP_NUMBERED_LINE
from stet_lsp.gate.patterns import lazy

if TYPE_CHECKING:
    from stet_lsp.gate.rules import Check, Rule

    PROVIDER_RULES: tuple[Rule, ...]

# The catalogue in `rules.py` imports this module at its end, and this module needs `Rule`:
# the table is built on first access (PEP 562), so either module may be imported first.
TOKEN = "A-Za-z0-9_-"
# Not inside a longer run of letters and digits. An escape that stands for a separator ends
# in one (`\n`, `\t`, `\r`; `%20`, `%22`): `printf "ok\nghp_…"`, `?q=%22ghp_…%22`.
NOT_ALNUM_BEFORE = r"(?:(?<![A-Za-z0-9])|(?<=\\[nrt])|(?<=%[0-9A-Fa-f]{2}))"

HEX = "[0-9a-f]"
HEXI = "[0-9a-fA-F]"
UUID = f"{HEXI}{{8}}-{HEXI}{{4}}-{HEXI}{{4}}-{HEXI}{{4}}-{HEXI}{{12}}"
B64 = "A-Za-z0-9+/"
# Between a key and its value: a closing quote or bracket, then `=`, `:`, `:=`, `=>` or Make's
# `::=`, `:::=` and `?=`.
_ASSIGN = r"[\"']?\]?[ \t]{0,4}(?::{1,3}=|\?=|=>|=|:)[ \t]{0,4}"


# A mask in a vendor's charset: one character eight times or more (`0000000000000000`).
_REPEATED = re.compile(r"(.)\1{7,}")


def _placeholder(value: str) -> bool:
    """A reference (`$X`), template, mask or marker, judged on the whole value: a generated
    body may hold `xxxx`, `<`, `%(` or `dummy` by chance, or a run of one character, but it
    is not made of them."""
    if heuristics.starts_with_reference(value) or heuristics.is_placeholder(value):
        return True
    return heuristics.masked_share(value, _REPEATED) >= 0.5


def _random_body(value: str, strict: bool) -> bool:
    """The body after a public prefix: not a placeholder, and varied."""
    body = value.split("_", 1)[-1] if "_" in value[:16] else value
    return not _placeholder(body) and heuristics.shannon_entropy(body) >= 2.5


def _keyed_value(value: str, strict: bool) -> bool:
    """A value a vendor-named key holds: random-looking, not a placeholder, not a word."""
    if _placeholder(value) or len(set(value)) < 6:
        return False
    # The vendor's name, charset and length already say which key this is: a value that
    # repeats a few characters by chance (`EMMMGZEYNM0YSNEU`, 2.95 bits) is still one, and so
    # is one of letters in one case unless they read as words written together by a strict
    # measure (`FIGVEIRSTINNMVQQ`: 60 % of its letter pairs are English ones, `ONDUBUGRMABPETHJ`
    # 80 %; a random run of 16 capitals reaches 70 % one time in 430, 85 % one in 10,000;
    # `DEFAULTPASSWORD` has 86 %, `TESTINGTESTING` 92 %). A placeholder of fewer is redacted:
    # under a vendor's key, in the vendor's charset and length, that costs nothing.
    varied = (
        heuristics.has_mixed_classes(value)
        or generated.has_generated_run(value)
        or (value.isalpha() and generated.letter_pairs_share(value) < _KEYED_WORDS)
    )
    return varied and heuristics.shannon_entropy(value) >= 2.5


_KEYED_WORDS = 0.85


def _keyed_padded(value: str, strict: bool) -> bool:
    """Twitter bearer and Dropbox long-lived tokens hold a documented run of `A`s."""
    return _keyed_value(value.replace("A" * 10, ""), strict)


def _prefixed_not_hash(value: str, strict: bool) -> bool:
    """A prefix that hex digests can start with (`4b1d`): the token is mixed-case alnum."""
    return _random_body(value, strict) and not heuristics.is_hash_or_uuid(value)


def _not_hex_digest(value: str, strict: bool) -> bool:
    """A token of mixed-case letters and digits, which a hex digest after a file's `.ico-`
    (`favicon.ico-7a38…`, a fingerprinted asset) is not."""
    body = value.split("-", 1)[-1]
    return _random_body(value, strict) and re.fullmatch("[0-9a-f]+", body) is None


# An identifier ending so names metadata (`DATADOG_SITE`, `SENTRY_RELEASE_SHA`), not a key.
_NOT_METADATA = "".join(
    "(?<!" + "".join(f"[{c.upper()}{c}]" for c in word) + ")"
    for word in ("id", "sha", "url", "uri", "hash", "name", "site", "host", "region", "version")
)


def _keyed_uuid(value: str, strict: bool) -> bool:
    """UUID-shaped keys (Scaleway, Snyk, Splunk HEC): anything but a placeholder or zeros."""
    return not _placeholder(value) and len(set(value.replace("-", ""))) >= 6


def _base64_jwt(value: str, strict: bool) -> bool:
    """base64 of a JWT: decodes to `eyJ...` with a second `.eyJ` segment."""
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False
    return decoded.startswith(b"eyJ") and b".eyJ" in decoded[:4096]


def _random_mixed(value: str, strict: bool) -> bool:
    """A token after a short prefix that words and encoded blobs also start with (`EAAA`):
    varied, of several character classes, not a placeholder."""
    return (
        not _placeholder(value)
        and heuristics.has_mixed_classes(value)
        and heuristics.shannon_entropy(value) >= 3.5
    )


# An OCI auth token: 20 printable characters, punctuation included (`;`, `(`, `<`, `#`).
_OCI_CHARS = "!#-&(-\\[\\]-_a-~"


_PATH_LIKE = re.compile(r"[\w.\-]{0,20}(?:/[\w.\-]{1,20}){1,10}(?::[\w.\-]{1,20})?/?")


def _oci_auth_token(value: str, strict: bool) -> bool:
    if _placeholder(value) or value.lower().startswith("ocid1."):
        return False
    if _PATH_LIKE.fullmatch(value) or "://" in value:
        return False
    classes = (
        any(c.islower() for c in value),
        any(c.isupper() for c in value),
        any(c.isdigit() for c in value),
        any(not c.isalnum() for c in value),
    )
    return (sum(classes) >= 3 or generated.looks_generated(value)) and len(set(value)) >= 12


# PKCS#12 (`.p12`, `.pfx`) in base64. The file is a DER SEQUENCE with two length bytes
# holding version 3 and another such SEQUENCE (`30 82 xx xx 02 01 03 30 82`), so its base64
# reads `MII??[AQgw]IBAzCC`; the rarer indefinite-length form (`30 80 02 01 03 30 80`) reads
# `MIACAQMwgA`. Wrapped at 64 or 76 columns by `openssl base64`/`base64` (indented in a YAML
# block), or on one line.
# Each line may be indented, start with a diff's `+` or `-` (a `+` only before the indent: it
# is base64's too), and be shown by a Read tool after its number and a tab (or `→`); in JSON
# text (raw, as the rules first see it) the tabs and line ends are escapes, escaped again in
# JSON quoted twice (`\\n`). Shown by `grep`, each line may start with what it writes before a
# line (`path:12:`, `path-13-`) when the first one does, with its number (without one, a YAML
# key holding `.` would read as a path: `tls.p12: MII…` and, after the body, `app.version: 2`).
_LINE_NUMBER = r"(?:\d{1,7}(?:\t|\\{1,3}t|→))"
_INDENT = r"(?:[ \t]|\\{1,3}t){0,16}"
_DIFF_MARK = r"(?:[+\-](?=[ \t]|\\{1,3}t)|-(?=[A-Za-z0-9+/]))?"
# A body a diff adds unindented (`+MIIG…` on each line): the first line's `+` at a line's
# start says so, and then every line starts with one.
_ADDED_LINE = r"(?P<added>(?:^|(?<=\n)|(?<=\\n))\+)?"
_PKCS12_LINE = (
    rf"(?:\r?\n|(?:\\{{1,3}}r)?\\{{1,3}}n)(?(grep){GREP_NUMBERED_LINE}?)"
    rf"(?(added)\+|{_DIFF_MARK}){_INDENT}"
    rf"(?:{_LINE_NUMBER}{_INDENT})?(?!{_LINE_NUMBER})"
)
_PKCS12 = (
    rf"(?:(?:^|(?<=[\n\"])|(?<=\\n))(?P<grep>{GREP_NUMBERED_LINE}){_INDENT}"
    r"(?:[A-Za-z0-9_.\-]{1,64}:[ \t]{1,4})?)?"
    + _ADDED_LINE
    + r"(?P<secret>(?:(?<![A-Za-z0-9+/])|(?<=\\n)|(?<=\\t)|(?(added)(?<=\+)|(?!)))"
    r"(?:MII[A-Za-z0-9+/]{2}[AQgw]IBAzCC|MIACAQMwgA)"
    r"[A-Za-z0-9+/]{20,262144}={0,2}"
    rf"(?:{_PKCS12_LINE}[A-Za-z0-9+/]{{60,76}}={{0,2}}(?![A-Za-z0-9+/])){{0,4000}}"
    # The last line, shorter; a `+` that starts a line of another kind (`+}`, `+other: 1`)
    # is a diff's, and the line not the body's; nor is a run before `:` or `-`, the number
    # `grep` writes before a line.
    rf"(?:{_PKCS12_LINE}(?!\+(?:[^A-Za-z0-9+/]|\Z|[A-Za-z0-9_\-]{{1,64}}:))"
    rf"(?=[A-Za-z]{{0,75}}[0-9+/=])[A-Za-z0-9+/]{{1,76}}={{0,2}}"
    r"(?![A-Za-z0-9+/:\-]))?)"
)


# The vendor's name starts a word and ends at a word's or a camelCase hump's end: `SetSysctl`
# holds no `etsy`, nor `sumOfExposures` a `sumo`.
_WORD_START = r"(?:(?<![A-Za-z])|(?<=[A-Z])(?=[A-Z]))"
_WORD_END = r"(?:(?<![A-Z])|(?![a-z]))"


def _keyword(
    name: str,
    vendors: tuple[str, ...],
    value: str,
    *,
    chars: str,
    check: Check | None = _keyed_value,
) -> Rule:
    """A value with no public prefix, assigned to an identifier that starts with the vendor's
    name (`VENDOR_API_KEY = value`, `vendor-token: "value"`) or quoted in prose right after
    the vendor's name ("the Vendor key `value`"). `vendors` are lowercase literals."""
    from stet_lsp.gate.rules import Rule

    alternatives = "|".join(re.escape(v) for v in vendors)
    return Rule(
        name=name,
        pattern=lazy(
            rf"(?:{_WORD_START}|(?<=\\[nrt]))(?i:{alternatives}){_WORD_END}[A-Za-z0-9_.\-]{{0,40}}+"
            + _NOT_METADATA
            + rf"(?:{_ASSIGN}[\"'`]?|[ \t][^\n`\"'=:]{{0,60}}?[`\"'])"
            rf"(?P<secret>{value})"
        ),
        anchors=vendors,
        reach=200,
        check=check,
        extend_with=chars,
        start="anchor",
    )


# A token after a short prefix (`fc-`, `pa-`, `ak-`) that names, CSS classes and file names
# also start with: not inside a path, a file name, an identifier or base64 (`/fc-<hash>.js`,
# `cache_fc-…`, `…+BSA…`), and not followed by more of one; a diff's or a grep's `+`/`-`
# starting the line is no part of a name.
_NOT_IN_NAME_BEFORE = r"(?:(?<![/.+_\-])|(?<=^[+\-])|(?<=\n[+\-])|(?<=\\n[+\-]))"
_NOT_IN_NAME_AFTER = r"(?![A-Za-z0-9_+/=\-]|\.[A-Za-z0-9])"
_HEX_ONLY = re.compile(r"[0-9a-f]+|[0-9A-F]+")


def _strict_prefix(
    name: str, prefixes: tuple[str, ...], body: str, check: Callable[[str], bool]
) -> Rule:
    """A key of a prefix and a body of one length and alphabet, the body (what follows its
    own prefix) judged by `check`."""
    from stet_lsp.gate.rules import Rule

    def body_check(value: str, strict: bool) -> bool:
        prefix = next((p for p in prefixes if value.startswith(p)), "")
        return check(value[len(prefix) :])

    alternatives = "|".join(re.escape(p) for p in prefixes)
    return Rule(
        name=name,
        pattern=lazy(
            NOT_ALNUM_BEFORE
            + _NOT_IN_NAME_BEFORE
            + f"(?:{alternatives}){body}"
            + _NOT_IN_NAME_AFTER
        ),
        anchors=tuple(p.lower() for p in prefixes),
        prefix=prefixes[0] if len(prefixes) == 1 else "",
        check=body_check,
        start="anchor",
    )


def _random_hex(body: str) -> bool:
    """A hex body drawn at random (letters and digits, varied), not a mask (`000…`)."""
    return (
        not _placeholder(body)
        and heuristics.has_mixed_classes(body)
        and heuristics.shannon_entropy(body) >= 3.0
    )


def _generated(body: str) -> bool:
    """A body of letters and digits (or base64url) that reads as drawn at random: not a name
    written in camelCase or kebab-case (`as-HttpServerConnection`), nor a hex digest (a git
    SHA after `fw_`: a key of these alphabets is hex alone about once in 10^13)."""
    if _placeholder(body) or not heuristics.has_mixed_classes(body) or _HEX_ONLY.fullmatch(body):
        return False
    if heuristics.shannon_entropy(body) < 3.5:
        return False
    runs = re.split(r"[_\-]", body)
    return len(runs) <= 6 and generated.looks_generated("".join(runs))


def _generated_parts(body: str) -> bool:
    """Each dotted part of a body drawn at random (StackHawk's `<20>.<20>`)."""
    return all(_generated(part) for part in body.split("."))


def _salad_secret(body: str) -> bool:
    """SaladCloud's `<org part>_<secret>`: the secret drawn at random."""
    return _generated(body.rpartition("_")[2])


def _asana_secret(value: str, strict: bool) -> bool:
    return _random_hex(value.rsplit(":", 1)[-1])


_KEYED_UUID = "A-Fa-f0-9-"


def _build() -> tuple[Rule, ...]:
    from stet_lsp.gate.rules import Rule
    from stet_lsp.gate.rules import _token as token
    from stet_lsp.gate.rules_generic import STRUCTURE_RULES

    def _token(
        name: str,
        prefixes: tuple[str, ...],
        body: str,
        *,
        extend: str = TOKEN,
        check: Check | None = _random_body,
    ) -> Rule:
        return token(name, prefixes, body, extend=extend, check=check)

    return (
        # --- Cloud and hosting -----------------------------------------------------------------
        _token("alibaba-access-key-id", ("LTAI",), "[A-Za-z0-9]{12,30}", extend="A-Za-z0-9"),
        _keyword("alibaba-secret-key", ("alibaba", "aliyun"), "[A-Za-z0-9]{30}", chars="A-Za-z0-9"),
        _token("tencent-secret-id", ("AKID",), "[A-Za-z0-9]{32,34}", extend="A-Za-z0-9"),
        _keyword(
            "tencent-secret-key", ("tencent", "tencentcloud"), "[A-Za-z0-9]{32}", chars="A-Za-z0-9"
        ),
        _keyword("ibm-cloud-api-key", ("ibm",), "[A-Za-z0-9_\\-]{44}", chars=TOKEN),
        _keyword(
            "scaleway-secret-key",
            ("scw_secret", "scaleway"),
            UUID,
            chars=_KEYED_UUID,
            check=_keyed_uuid,
        ),
        _keyword("linode-token", ("linode",), "[a-f0-9]{64}", chars="a-f0-9"),
        _keyword("vultr-api-key", ("vultr",), "[A-Z0-9]{36}", chars="A-Z0-9"),
        _keyword("hetzner-token", ("hetzner", "hcloud"), "[A-Za-z0-9]{64}", chars="A-Za-z0-9"),
        _keyword(
            "cloudflare-api-token",
            ("cloudflare", "cf_api", "cf-api"),
            "[A-Za-z0-9_\\-]{37,40}",
            chars=TOKEN,
        ),
        _token(
            "cloudflare-origin-ca-key", ("v1.0-",), f"{HEX}{{24}}-{HEX}{{146}}", extend="a-f0-9"
        ),
        _keyword("fastly-api-token", ("fastly",), "[A-Za-z0-9_\\-]{32}", chars=TOKEN),
        _token("netlify-token", ("nfp_", "nfc_", "nfo_"), "[A-Za-z0-9]{36,40}", extend="A-Za-z0-9"),
        _keyword("netlify-legacy-token", ("netlify",), "[A-Za-z0-9_\\-]{40,46}", chars=TOKEN),
        _keyword("vercel-token", ("vercel",), "[A-Za-z0-9]{24}", chars="A-Za-z0-9"),
        _token(
            "flyio-token",
            ("FlyV1 fm1a_", "FlyV1 fm1r_", "FlyV1 fm2_"),
            f"[{B64}_=,\\-]{{64,4000}}",
            extend=TOKEN + "+/=,",
        ),
        _token("flyio-token", ("fo1_",), "[A-Za-z0-9_\\-]{43}", extend=TOKEN),
        _token(
            "flyio-token",
            ("fm1a_", "fm1r_", "fm2_"),
            f"[{B64}]{{100,4000}}={{0,3}}",
            extend=TOKEN + "+/=",
        ),
        _token("render-api-key", ("rnd_",), "[A-Za-z0-9]{32}", extend="A-Za-z0-9"),
        _token("aws-bedrock-api-key", ("ABSK",), f"[{B64}]{{100,600}}={{0,2}}", extend=f"{B64}="),
        _token(
            "aws-bedrock-api-key",
            ("bedrock-api-key-",),
            f"[{B64}]{{100,4000}}={{0,2}}",
            extend=f"{B64}=",
        ),
        _token("yandex-oauth-token", ("y0_",), "[A-Za-z0-9_\\-]{50,80}", extend=TOKEN),
        _token("yandex-api-key", ("AQVN",), "[A-Za-z0-9_\\-]{35,38}", extend=TOKEN),
        _keyword("yandex-static-key", ("yandex",), "YC[A-Za-z0-9_\\-]{38}", chars=TOKEN),
        _token("openshift-token", ("sha256~",), "[A-Za-z0-9_\\-]{43}", extend=TOKEN),
        _keyword(
            "confluent-secret-key", ("confluent",), f"[{B64}]{{64}}", chars=B64, check=_keyed_value
        ),
        _keyword("confluent-api-key", ("confluent",), "[A-Za-z0-9]{16}", chars="A-Za-z0-9"),
        _token(
            "clickhouse-cloud-key",
            ("4b1d",),
            "[A-Za-z0-9]{38}",
            extend="A-Za-z0-9",
            check=_prefixed_not_hash,
        ),
        _token("defined-networking-token", ("dnkey-",), "[a-z0-9=_\\-]{26}-[a-z0-9=_\\-]{52}"),
        Rule(
            name="terraform-cloud-token",
            pattern=lazy(NOT_ALNUM_BEFORE + r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=\-]{60,70}"),
            anchors=(".atlasv1.",),
            lead=14,
            reach=80,
            prefix="",
            check=_random_body,
            extend_with=TOKEN + "=",
        ),
        _token(
            "infracost-api-key",
            ("ico-",),
            "[A-Za-z0-9]{32}",
            extend="A-Za-z0-9",
            check=_not_hex_digest,
        ),
        _token("prefect-api-key", ("pnu_", "pnb_"), "[A-Za-z0-9]{36}", extend="A-Za-z0-9"),
        _token("scalingo-api-token", ("tk-us-", "tk-eu-"), "[A-Za-z0-9_\\-]{48}", extend=TOKEN),
        _token(
            "settlemint-token", ("sm_aat_", "sm_pat_", "sm_sat_"), "[A-Za-z0-9]{16}", extend=TOKEN
        ),
        Rule(
            name="azure-devops-pat",
            pattern=lazy(NOT_ALNUM_BEFORE + r"[A-Za-z0-9]{76}AZDO[A-Za-z0-9]{4}(?![A-Za-z0-9])"),
            anchors=("azdo",),
            lead=80,
            reach=8,
            check=_random_body,
        ),
        _token(
            "databricks-token",
            ("dapi",),
            "[a-f0-9]{32}(?:-[0-9])?(?![A-Za-z0-9])",
            extend="",
            check=_prefixed_not_hash,
        ),
        _keyword(
            "oci-auth-token",
            ("oci_", "oci-", "oci ", "ocir_", "ocir-", "oracle_cloud", "oracle-cloud"),
            f"[{_OCI_CHARS}]{{20}}(?![{_OCI_CHARS}])",
            chars="",
            check=_oci_auth_token,
        ),
        # --- Package registries ----------------------------------------------------------------
        _token("rubygems-api-key", ("rubygems_",), "[a-f0-9]{48}", extend="a-f0-9"),
        _token("nuget-api-key", ("oy2",), "[a-z0-9]{43}", extend="a-z0-9"),
        Rule(
            name="nuget-config-password",
            pattern=lazy(
                r"(?i:<add[ \t]{1,4}key=)\\?[\"'](?i:cleartextpassword|password)\\?[\"'][ \t]{1,4}"
                r"(?i:value=)\\?[\"'](?P<secret>[^\"'\\\r\n]{1,256})\\?[\"']"
            ),
            anchors=("<add key=",),
            reach=320,
            check=lambda value, strict: not _placeholder(value),
            start="anchor",
        ),
        _token("crates-io-token", ("cio",), "[A-Za-z0-9]{32}(?![A-Za-z0-9])"),
        _token("docker-hub-token", ("dckr_pat_", "dckr_oat_"), "[A-Za-z0-9_\\-]{27,40}"),
        _token("artifactory-reference-token", ("cmVmdGtu",), "[A-Za-z0-9]{56,80}"),
        _keyword(
            "jfrog-token",
            ("jfrog", "artifactory", "bintray", "xray"),
            "(?:[A-Za-z0-9]{73}|[A-Za-z0-9]{64})",
            chars="A-Za-z0-9",
        ),
        _token(
            "packagist-token",
            ("packagist_ort_", "packagist_out_", "packagist_uut_", "packagist_uot_"),
            "[A-Za-z0-9]{32,80}",
        ),
        _token("clojars-token", ("CLOJARS_",), "[a-z0-9]{60}", extend="a-z0-9"),
        # --- Source hosting and CI/CD ----------------------------------------------------------
        _token("gitlab-token", ("glffct-",), "[A-Za-z0-9_\\-]{20,64}"),
        Rule(
            name="gitlab-routable-token",
            pattern=lazy(
                NOT_ALNUM_BEFORE + r"gl(?:pat|rt|dt|cbt|ptt|ft|imt|oas|soat|agent|ffct)-"
                r"[A-Za-z0-9_\-]{27,300}\.[0-9a-z]{2}\.[0-9a-z]{7,9}"
            ),
            anchors=("glpat-", "glrt-", "gldt-", "glcbt-", "glptt-", "glft-", "gloas-", "glagent-"),
            prefix="gl",
            check=_random_body,
            extend_with=TOKEN + ".",
            start="anchor",
        ),
        _token("gitlab-runner-registration-token", ("GR1348941",), "[A-Za-z0-9_\\-]{20,40}"),
        Rule(
            name="gitlab-session-cookie",
            pattern=lazy(r"_gitlab_session=(?P<secret>[0-9a-z]{32})"),
            anchors=("_gitlab_session=",),
            reach=40,
            check=_random_body,
            extend_with="0-9a-z",
            start="anchor",
        ),
        _token("bitbucket-app-password", ("ATBB",), "[A-Za-z0-9_=.\\-]{32,40}"),
        _token("atlassian-api-token", ("ATCTT3",), "[A-Za-z0-9_\\-=]{100,300}"),
        _token(
            "circleci-token",
            ("CCIPAT_", "CCIPRJ_"),
            "[A-Za-z0-9]{20,24}_[a-f0-9]{40}",
            extend=TOKEN,
        ),
        _keyword("travis-ci-token", ("travis",), "[A-Za-z0-9_\\-]{22}", chars=TOKEN),
        _token("buildkite-token", ("bkua_",), "[a-f0-9]{40}", extend="a-f0-9"),
        Rule(
            name="harness-token",
            pattern=lazy(
                NOT_ALNUM_BEFORE
                + r"(?:pat|sat)\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}"
                + r"(?![A-Za-z0-9])"
            ),
            anchors=("pat.", "sat."),
            prefix="",
            check=_random_body,
            start="anchor",
        ),
        _keyword("codecov-token", ("codecov",), UUID, chars=_KEYED_UUID, check=_keyed_uuid),
        _keyword("codecov-token", ("codecov",), "[A-Za-z0-9]{32}", chars="A-Za-z0-9"),
        _keyword("drone-ci-token", ("drone",), "[A-Za-z0-9]{32}", chars="A-Za-z0-9"),
        _keyword("octopus-deploy-api-key", ("octopus",), "API-[A-Z0-9]{26,32}", chars="A-Z0-9"),
        _keyword("jenkins-api-token", ("jenkins",), "11[a-f0-9]{32}", chars="a-f0-9"),
        _token("sonar-token", ("squ_", "sqp_", "sqa_"), "[a-f0-9]{40}", extend="a-f0-9"),
        _keyword("sonar-token", ("sonar",), "[A-Za-z0-9]{40}", chars="A-Za-z0-9"),
        _keyword("snyk-token", ("snyk",), UUID, chars=_KEYED_UUID, check=_keyed_uuid),
        _token(
            "snyk-token",
            ("snyk_uat.", "snyk_sat."),
            f"{HEX}{{8}}\\.[A-Za-z0-9_\\-]{{20,4000}}(?:\\.[A-Za-z0-9_\\-]{{10,400}})?",
            extend=TOKEN + ".",
        ),
        _strict_prefix(
            "stackhawk-api-key",
            ("hawk.",),
            "[A-Za-z0-9_\\-]{20}\\.[A-Za-z0-9_\\-]{20}",
            _generated_parts,
        ),
        _strict_prefix("dependency-track-api-key", ("odt_",), "[A-Za-z0-9]{32,255}", _generated),
        _token("rootly-api-key", ("rootly_",), "[a-f0-9]{64}", extend="a-f0-9"),
        # --- Observability ---------------------------------------------------------------------
        _keyword(
            "datadog-api-key",
            ("datadog", "dd_api_key", "dd_app_key", "dd_application_key"),
            "[A-Za-z0-9]{32,40}",
            chars="A-Za-z0-9",
        ),
        _keyword("sentry-legacy-token", ("sentry",), "[a-f0-9]{64}", chars="a-f0-9"),
        _keyword(
            "honeycomb-api-key",
            ("honeycomb",),
            "(?:hc[a-z]{2}k_[A-Za-z0-9]{20,64}|[A-Za-z0-9]{22,32})",
            chars="A-Za-z0-9",
        ),
        _token("honeycomb-api-key", ("hcaik_", "hcxik_"), "[A-Za-z0-9]{20,64}"),
        _keyword("splunk-token", ("splunk",), UUID, chars=_KEYED_UUID, check=_keyed_uuid),
        _keyword("sumo-logic-key", ("sumo",), "[A-Za-z0-9]{64}", chars="A-Za-z0-9"),
        _keyword("logzio-token", ("logz",), "[A-Za-z0-9\\-]{32,36}", chars="A-Za-z0-9-"),
        _keyword("rollbar-token", ("rollbar",), "[a-f0-9]{32}", chars="a-f0-9"),
        _keyword("bugsnag-api-key", ("bugsnag",), "[a-f0-9]{32}", chars="a-f0-9"),
        _keyword(
            "launchdarkly-key",
            ("launchdarkly", "launch_darkly"),
            f"(?:api|sdk|mob)-{UUID}",
            chars=_KEYED_UUID,
            check=_keyed_uuid,
        ),
        _token("new-relic-key", ("NRJS-",), "[a-f0-9]{19}(?![A-Za-z0-9])"),
        _token("posthog-personal-key", ("phx_",), "[A-Za-z0-9]{40,50}"),
        _keyword("pagerduty-token", ("pagerduty",), "[A-Za-z0-9_+\\-]{20}", chars=TOKEN + "+"),
        _keyword("opsgenie-key", ("opsgenie",), UUID, chars=_KEYED_UUID, check=_keyed_uuid),
        # --- Chat, messaging and email ---------------------------------------------------------
        Rule(
            name="teams-webhook",
            pattern=lazy(
                r"https://[A-Za-z0-9\-]{1,64}\.webhook\.office\.com/webhookb2/"
                r"[A-Za-z0-9@\-]{36,80}/IncomingWebhook/[A-Za-z0-9]{32}/[A-Za-z0-9\-]{36}"
                r"(?:/[A-Za-z0-9_\-]{20,80})?"
            ),
            anchors=(".webhook.office.com/",),
            lead=72,
            reach=320,
            prefix="https://",
            extend_with=TOKEN,
        ),
        _keyword("twilio-auth-token", ("twilio",), "[a-f0-9]{32}", chars="a-f0-9"),
        _keyword(
            "mailgun-api-key",
            ("mailgun",),
            "[a-f0-9]{32}-[a-f0-9]{8}-[a-f0-9]{8}",
            chars="a-f0-9-",
        ),
        _keyword("postmark-token", ("postmark",), UUID, chars=_KEYED_UUID, check=_keyed_uuid),
        _keyword("mailjet-key", ("mailjet", "mj_apikey"), "[a-f0-9]{32}", chars="a-f0-9"),
        _keyword("sparkpost-api-key", ("sparkpost",), "[a-f0-9]{40}", chars="a-f0-9"),
        _token("resend-api-key", ("re_",), "[A-Za-z0-9]{8}_[A-Za-z0-9]{24}(?![A-Za-z0-9])"),
        _keyword(
            "messagebird-key", ("messagebird", "message_bird"), "[A-Za-z0-9]{25}", chars="A-Za-z0-9"
        ),
        _keyword("sendbird-token", ("sendbird",), "[a-f0-9]{40}", chars="a-f0-9"),
        _keyword("mattermost-token", ("mattermost",), "[a-z0-9]{26}", chars="a-z0-9"),
        _keyword("gitter-token", ("gitter",), "[a-z0-9_\\-]{40}", chars="a-z0-9_-"),
        _token("intercom-token", ("dG9rO",), f"[{B64}]{{50,120}}={{0,2}}", extend=f"{B64}="),
        _keyword("zendesk-token", ("zendesk",), "[A-Za-z0-9]{40}", chars="A-Za-z0-9"),
        _keyword("vonage-api-secret", ("vonage", "nexmo"), "[A-Za-z0-9]{16}", chars="A-Za-z0-9"),
        _keyword("discord-client-secret", ("discord",), "[A-Za-z0-9_\\-]{32}", chars=TOKEN),
        # --- AI providers ----------------------------------------------------------------------
        _keyword("cohere-api-key", ("cohere", "co_api_key"), "[A-Za-z0-9]{40}", chars="A-Za-z0-9"),
        _keyword("mistral-api-key", ("mistral",), "[A-Za-z0-9]{32}", chars="A-Za-z0-9"),
        _token("openrouter-api-key", ("sk-or-v1-",), "[a-f0-9]{64}", extend="a-f0-9"),
        _token("langfuse-secret-key", ("sk-lf-",), UUID, extend=_KEYED_UUID),
        _token(
            "langsmith-api-key", ("lsv2_pt_", "lsv2_sk_"), "[a-f0-9]{32}_[a-f0-9]{10}", extend=TOKEN
        ),
        _token("pinecone-api-key", ("pcsk_",), "[A-Za-z0-9]{4,8}_[A-Za-z0-9]{40,90}", extend=TOKEN),
        _token("nvidia-api-key", ("nvapi-",), "[A-Za-z0-9_\\-]{64}", extend=TOKEN),
        _token("tavily-api-key", ("tvly-",), "(?:dev-|prod-)?[A-Za-z0-9]{32}", extend=TOKEN),
        _token("elevenlabs-api-key", ("sk_",), "[a-f0-9]{48}(?![A-Za-z0-9])"),
        _keyword("privateai-api-key", ("private_ai", "privateai"), "[a-z0-9]{32}", chars="a-z0-9"),
        _strict_prefix("firecrawl-api-key", ("fc-",), "[a-f0-9]{32}", _random_hex),
        _strict_prefix("fireworks-api-key", ("fw_",), "[A-Za-z0-9]{20,40}", _generated),
        _strict_prefix("together-api-key", ("tgp_v1_",), "[A-Za-z0-9_\\-]{43}", _generated),
        _strict_prefix("cerebras-api-key", ("csk-",), "[a-z0-9]{48}", _generated),
        _strict_prefix("modal-token", ("ak-", "as-"), "[A-Za-z0-9]{22}", _generated),
        _strict_prefix("voyage-api-key", ("pa-",), "[A-Za-z0-9_\\-]{43}", _generated),
        _strict_prefix("brave-search-api-key", ("BSA",), "[A-Za-z0-9_\\-]{27,40}", _generated),
        _strict_prefix("e2b-api-key", ("e2b_",), "[a-f0-9]{40}", _random_hex),
        _strict_prefix("browserbase-api-key", ("bb_live_",), "[A-Za-z0-9_\\-]{20,40}", _generated),
        _strict_prefix("jina-api-key", ("jina_",), "[A-Za-z0-9]{60}", _generated),
        _strict_prefix("deno-deploy-token", ("ddp_", "ddw_"), "[A-Za-z0-9]{36}", _generated),
        _strict_prefix("nightfall-api-key", ("NF-",), "[A-Za-z0-9]{32}", _generated),
        _strict_prefix(
            "salad-cloud-api-key",
            ("salad_cloud_",),
            "[A-Za-z0-9]{1,7}_[A-Za-z0-9]{20,235}",
            _salad_secret,
        ),
        # --- Payments and finance --------------------------------------------------------------
        Rule(
            name="braintree-access-token",
            pattern=lazy(r"access_token\$(?:production|sandbox)\$[a-z0-9]{16}\$[a-f0-9]{32}"),
            anchors=("access_token$",),
            reach=80,
            prefix="access_token$",
            check=_random_body,
            extend_with="a-f0-9",
            start="anchor",
        ),
        _token(
            "adyen-api-key",
            ("AQE",),
            f"[{B64}]{{20,400}}={{0,2}}-[{B64}]{{20,100}}={{0,2}}",
            extend=f"{B64}=-",
        ),
        _token(
            "square-token",
            ("EAAA",),
            "[A-Za-z0-9_\\-]{22,60}(?![A-Za-z0-9_+/=\\-])",
            extend="",
            check=_random_mixed,
        ),
        _keyword("razorpay-key-secret", ("razorpay", "rzp_"), "[A-Za-z0-9]{24}", chars="A-Za-z0-9"),
        _token(
            "plaid-access-token",
            ("access-production-", "access-development-", "access-sandbox-"),
            UUID,
            extend=_KEYED_UUID,
        ),
        _keyword("plaid-secret", ("plaid",), "[A-Za-z0-9]{30}", chars="A-Za-z0-9"),
        _token(
            "flutterwave-secret-key",
            ("FLWSECK_TEST-", "FLWSECK-", "FLWSECK_TEST"),
            "[a-fA-F0-9]{12,32}(?:-X)?",
            extend="a-fA-F0-9",
        ),
        _keyword("coinbase-token", ("coinbase",), "[A-Za-z0-9_\\-]{64}", chars=TOKEN),
        _keyword(
            "gocardless-token",
            ("gocardless",),
            "(?:live|sandbox)_[A-Za-z0-9_=\\-]{40}",
            chars=TOKEN + "=",
        ),
        _keyword("kraken-key", ("kraken",), f"[{B64}_\\-]{{80,90}}={{0,2}}", chars=TOKEN + "+/="),
        _keyword("kucoin-key", ("kucoin",), f"(?:{HEX}{{24}}|{UUID})", chars=_KEYED_UUID),
        _keyword("bittrex-key", ("bittrex",), "[a-z0-9]{32}", chars="a-z0-9"),
        _keyword("finicity-secret", ("finicity",), "[a-z0-9]{20,32}", chars="a-z0-9"),
        _keyword("finnhub-token", ("finnhub",), "[a-z0-9]{20}", chars="a-z0-9"),
        _keyword("mollie-api-key", ("mollie",), "(?:live|test)_[A-Za-z0-9]{30}", chars="A-Za-z0-9"),
        _token(
            "stripe-secret-key", ("sk_prod_", "rk_prod_"), "[A-Za-z0-9]{20,247}", extend="A-Za-z0-9"
        ),
        _token(
            "paddle-api-key",
            ("pdl_live_apikey_", "pdl_sdbx_apikey_"),
            "[A-Za-z0-9_]{40,80}",
        ),
        _keyword("lob-api-key", ("lob",), "(?:live|test)_[a-f0-9]{35}", chars="a-f0-9"),
        # --- Databases as a service ------------------------------------------------------------
        _token(
            "planetscale-token",
            ("pscale_tkn_", "pscale_oauth_", "pscale_pw_"),
            "[A-Za-z0-9_=.\\-]{32,64}",
            extend=TOKEN + "=.",
        ),
        _token("supabase-secret-key", ("sb_secret_",), "[A-Za-z0-9_\\-]{20,64}"),
        _token("neon-api-key", ("napi_",), "[A-Za-z0-9]{64}"),
        _keyword("upstash-token", ("upstash",), "[A-Za-z0-9_=\\-]{40,200}", chars=TOKEN + "="),
        _token("aiven-password", ("AVNS_",), "[A-Za-z0-9_\\-]{19,30}"),
        _keyword(
            "mongodb-atlas-private-key",
            ("mongodb_atlas", "atlas_private"),
            UUID,
            chars=_KEYED_UUID,
            check=_keyed_uuid,
        ),
        # --- SaaS and developer tools ----------------------------------------------------------
        # Tailscale's auth, API and OAuth client keys: `tskey-<kind>-<id>CNTRL-<secret>`.
        _token(
            "tailscale-key",
            ("tskey-",),
            "(?:[a-z]{3,8}-)?[A-Za-z0-9]{6,40}-[A-Za-z0-9]{16,80}",
            extend="A-Za-z0-9",
        ),
        # ngrok's agent authtoken has no prefix: the command or the prose that names it.
        Rule(
            name="ngrok-authtoken",
            pattern=lazy(
                r"(?i:authtoken)(?:[ \t]{1,4}|[ \t]{0,4}(?i:is)?[ \t]{0,4}[:=][ \t]{0,4}[\"'`]?)"
                r"(?P<secret>[1-9][A-Za-z0-9]{20,40}_[A-Za-z0-9]{15,30})(?![A-Za-z0-9_\-])"
            ),
            anchors=("authtoken",),
            reach=120,
            check=_keyed_value,
            start="anchor",
        ),
        _token(
            "1password-service-account-token",
            ("ops_eyJ",),
            "[A-Za-z0-9+/_=\\-]{100,4000}",
            extend=TOKEN + "+/=",
        ),
        _token(
            "1password-secret-key",
            ("A3-",),
            "[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{5,6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}",
            extend="A-Z0-9",
        ),
        _token("doppler-token", ("dp.st.",), "[a-z0-9_\\-]{1,30}\\.[A-Za-z0-9]{40,44}"),
        _token("adobe-client-secret", ("p8e-",), "[A-Za-z0-9_\\-]{32}", extend=TOKEN),
        _keyword(
            "airtable-token",
            ("airtable",),
            f"(?:pat[A-Za-z0-9]{{14}}\\.{HEX}{{64}}|[A-Za-z0-9]{{17}})",
            chars="A-Za-z0-9",
        ),
        _keyword(
            "asana-token",
            ("asana",),
            f"[0-2]/[0-9]{{10,20}}(?:/[0-9]{{10,20}})?:{HEX}{{32}}",
            chars="a-f0-9",
        ),
        _keyword("asana-client-secret", ("asana",), "[A-Za-z0-9]{32}", chars="A-Za-z0-9"),
        Rule(
            # A personal access token without the vendor's name: `2/<user>/<app>:<secret>`
            # (`1/<user>:<secret>` before 2023); Asana's ids are 16 digits that start with 1.
            name="asana-token",
            pattern=lazy(
                NOT_ALNUM_BEFORE + r"(?<![/.:\-])[12]/1[0-9]{15}(?:/1[0-9]{15})?:"
                r"[a-f0-9]{32}(?![A-Za-z0-9_\-])"
            ),
            anchors=("1/1", "2/1"),
            reach=80,
            check=_asana_secret,
            start="anchor",
        ),
        _keyword(
            "atlassian-api-token",
            ("atlassian", "jira", "confluence"),
            "[A-Za-z0-9]{24}",
            chars="A-Za-z0-9",
        ),
        Rule(
            name="authress-key",
            pattern=lazy(
                r"(?<![A-Za-z0-9])(?:sc|ext|scauth|authress)_[a-z0-9]{5,30}\.[a-z0-9]{4,6}"
                r"\.acc[_\-][a-z0-9\-]{10,32}\.[A-Za-z0-9+/_=\-]{30,120}"
            ),
            anchors=(".acc_", ".acc-"),
            lead=48,
            reach=160,
            check=_random_body,
            extend_with=TOKEN + "+/=",
        ),
        _token("hubspot-token", ("pat-na1-", "pat-eu1-"), UUID, extend=_KEYED_UUID),
        _keyword(
            "hubspot-api-key", ("hubspot", "hapikey"), UUID, chars=_KEYED_UUID, check=_keyed_uuid
        ),
        _keyword("okta-token", ("okta",), "00[A-Za-z0-9_\\-]{40}", chars=TOKEN),
        _keyword("auth0-client-secret", ("auth0",), "[A-Za-z0-9_\\-]{64}", chars=TOKEN),
        _keyword(
            "infisical-token",
            ("infisical",),
            f"st\\.{HEX}{{24}}\\.{HEX}{{32}}\\.{HEX}{{32}}",
            chars="a-f0-9",
        ),
        _token(
            "sourcegraph-token",
            ("sgp_", "sgph_"),
            f"(?:{HEXI}{{16}}_|local_)?{HEXI}{{40}}",
            extend="a-fA-F0-9",
        ),
        _token("sourcegraph-token", ("slk_",), "[a-f0-9]{64}", extend="a-f0-9"),
        _keyword("sourcegraph-token", ("sourcegraph",), f"{HEXI}{{40}}", chars="a-fA-F0-9"),
        _token("contentful-token", ("CFPAT-",), "[A-Za-z0-9_\\-]{43}"),
        _keyword("contentful-token", ("contentful",), "[A-Za-z0-9_\\-]{43}", chars=TOKEN),
        _keyword("algolia-api-key", ("algolia",), "[A-Za-z0-9]{32}", chars="A-Za-z0-9"),
        _token(
            "mapbox-secret-token",
            ("sk.eyJ",),
            "[A-Za-z0-9_\\-]{20,400}\\.[A-Za-z0-9_\\-]{20,40}",
            extend=TOKEN,
        ),
        _token("dropbox-token", ("sl.u.", "sl.B", "sl.A"), "[A-Za-z0-9_\\-]{130,2000}"),
        _keyword(
            "dropbox-token",
            ("dropbox",),
            "[a-z0-9]{11}AAAAAAAAAA[A-Za-z0-9_=\\-]{43}",
            chars=TOKEN + "=",
            check=_keyed_padded,
        ),
        _keyword("twitch-token", ("twitch",), "[a-z0-9]{30}", chars="a-z0-9"),
        _keyword(
            "twitter-bearer-token",
            ("twitter", "x_bearer"),
            "A{22}[A-Za-z0-9%]{80,120}",
            chars="A-Za-z0-9%",
            check=_keyed_padded,
        ),
        _keyword("twitter-secret", ("twitter",), "[A-Za-z0-9]{45,50}", chars="A-Za-z0-9"),
        _keyword("twitter-api-key", ("twitter",), "[A-Za-z0-9]{25}", chars="A-Za-z0-9"),
        _keyword("facebook-secret", ("facebook",), "[a-f0-9]{32}", chars="a-f0-9"),
        _keyword(
            "facebook-access-token", ("facebook",), "EAA[A-Za-z0-9]{90,400}", chars="A-Za-z0-9"
        ),
        _token(
            "facebook-access-token",
            ("EAA",),
            "[A-Za-z0-9]{97,400}(?![A-Za-z0-9_+/=\\-])",
            extend="",
            check=_random_mixed,
        ),
        Rule(
            # An app access token: `<app id>|<app secret>` (`%7C` in a query string).
            name="facebook-access-token",
            pattern=lazy(
                r"(?<![0-9])[0-9]{15,16}(?:\||%7[Cc])[A-Za-z0-9_\-]{27,40}(?![A-Za-z0-9_\-])"
            ),
            anchors=("facebook", "fb_", "graph.facebook", "access_token"),
            lead=300,
            reach=300,
            check=lambda value, strict: _random_mixed(value.split("|")[-1][-27:], strict),
        ),
        _keyword("vault-token", ("vault",), "s\\.[A-Za-z0-9]{24}", chars="A-Za-z0-9"),
        _token(
            "intra42-client-secret", ("s-s4t2ud-", "s-s4t2af-"), "[a-f0-9]{64}", extend="a-f0-9"
        ),
        _token("easypost-api-key", ("EZAK", "EZTK"), "[A-Za-z0-9]{54}"),
        _token(
            "duffel-token",
            ("duffel_test_", "duffel_live_"),
            "[A-Za-z0-9_=\\-]{43}",
            extend=TOKEN + "=",
        ),
        _token("frameio-token", ("fio-u-",), "[A-Za-z0-9_=\\-]{64}", extend=TOKEN + "="),
        _token("typeform-token", ("tfp_",), "[A-Za-z0-9_.=\\-]{40,64}", extend=TOKEN + ".="),
        _token("shippo-token", ("shippo_live_", "shippo_test_"), "[a-f0-9]{40}", extend="a-f0-9"),
        _token("readme-api-key", ("rdme_",), "[a-z0-9]{70}", extend="a-z0-9"),
        _keyword("rapidapi-key", ("rapidapi",), "[A-Za-z0-9_\\-]{50}", chars=TOKEN),
        _keyword("squarespace-token", ("squarespace",), UUID, chars=_KEYED_UUID, check=_keyed_uuid),
        _keyword("etsy-token", ("etsy",), "[a-z0-9]{24}", chars="a-z0-9"),
        _keyword("flickr-token", ("flickr",), "[a-z0-9]{32}", chars="a-z0-9"),
        _keyword("freshbooks-token", ("freshbooks",), "[a-z0-9]{64}", chars="a-z0-9"),
        _keyword(
            "nytimes-token", ("nytimes", "nyt_api"), "[A-Za-z0-9=_\\-]{32}", chars=TOKEN + "="
        ),
        _keyword("beamer-token", ("beamer",), "b_[A-Za-z0-9=_\\-]{44}", chars=TOKEN + "="),
        _keyword("adafruit-key", ("adafruit",), "[a-z0-9_\\-]{32}", chars="a-z0-9_-"),
        _keyword("looker-secret", ("looker",), "[A-Za-z0-9]{24}", chars="A-Za-z0-9"),
        _keyword(
            "linkedin-secret", ("linkedin", "linked_in"), "[A-Za-z0-9]{16}", chars="A-Za-z0-9"
        ),
        _keyword("meraki-api-key", ("meraki",), "[a-f0-9]{40}", chars="a-f0-9"),
        Rule(
            name="maxmind-license-key",
            pattern=lazy(NOT_ALNUM_BEFORE + r"[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk(?![A-Za-z0-9])"),
            anchors=("_mmk",),
            lead=40,
            reach=4,
            check=_random_body,
        ),
        _keyword(
            "sidekiq-secret",
            ("contribsys__com", "sidekiq"),
            f"{HEX}{{8}}:{HEX}{{8}}",
            chars="a-f0-9",
            check=lambda value, strict: len(set(value)) >= 6,
        ),
        Rule(
            name="sidekiq-secret",
            pattern=lazy(
                r"https?://(?P<secret>[a-f0-9]{8}:[a-f0-9]{8})@(?:gems|enterprise)\.contribsys\.com"
            ),
            anchors=("contribsys.com",),
            lead=40,
            reach=20,
            check=lambda value, strict: len(set(value)) >= 6,
        ),
        Rule(
            name="pkcs12-content",
            pattern=lazy(_PKCS12),
            anchors=("ibazcc", "miacaqmwga"),
            lead=300,  # back over what `grep` writes before the first line
            reach=300000,
            multiline=True,
            check=None,
        ),
        _token(
            "jwt-base64",
            ("ZXlK",),
            f"[{B64}]{{60,8000}}={{0,2}}",
            check=_base64_jwt,
            extend=f"{B64}=",
        ),
        # --- Structures: Kubernetes Secret manifests, curl credentials ---------------------
        *STRUCTURE_RULES,
    )


_BUILT: list[tuple[Rule, ...]] = []


def __getattr__(name: str) -> object:
    if name == "PROVIDER_RULES":
        if not _BUILT:
            _BUILT.append(_build())
        return _BUILT[0]
    raise AttributeError(name)
