"""Provider rules (`stet_lsp.gate.rules_providers`): every format in every context, whole
values redacted, and linear time on near-misses."""

from __future__ import annotations

import base64
import json
import random
import re
import string
from collections.abc import Callable, Iterator

import gate_corpus
import gate_corpus_providers
import pytest
from deadline import processor_time, time_limit

from stet_lsp.gate import GateConfig, ResultCache, redact_text, scan_text
from stet_lsp.gate.rules import RULES
from stet_lsp.gate.rules_providers import PROVIDER_RULES

PROVIDER_NAMES = {spec[0] for spec in gate_corpus_providers.PROVIDER_FORMATS}
FORMATS = [fmt for fmt in gate_corpus.FORMATS if fmt.name in PROVIDER_NAMES]


def test_provider_rules_are_registered() -> None:
    assert set(PROVIDER_RULES) <= set(RULES)
    assert len(gate_corpus.FORMATS) >= 150
    assert len(FORMATS) == len(gate_corpus_providers.PROVIDER_FORMATS)


def test_provider_rules_are_well_formed() -> None:
    for rule in PROVIDER_RULES:
        assert rule.anchors, rule.name
        assert all(anchor == anchor.lower() for anchor in rule.anchors), rule.name
        assert rule.name == rule.name.lower()
        # A preview shows at most the public prefix, never part of a body.
        if rule.start == "anchor" and rule.prefix:
            assert any(a.startswith(rule.prefix.lower()) for a in rule.anchors), rule.name


@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.name)
def test_provider_format_is_fully_redacted_in_every_context(fmt: gate_corpus.Format) -> None:
    for seed in gate_corpus.RUN_SEEDS:
        rng = random.Random(f"{seed}:{fmt.name}")
        for context in gate_corpus.CONTEXTS:
            value, secrets = fmt.make(rng)
            path, text = gate_corpus.render(context, fmt, value, rng)
            redacted = redact_text(text, config=GateConfig(), path=path).text
            left = gate_corpus.surviving_fragments(redacted, secrets, planted_in=text)
            assert not left, (
                f"{fmt.name} in {context}: {left} survived ({gate_corpus.seed_note(seed)})"
                f"\n{redacted}"
            )


def test_every_provider_rule_finds_its_format() -> None:
    """Each new rule names at least one corpus format (it is not shadowed or dead)."""
    named: set[str] = set()
    rng = random.Random(11)
    for fmt in FORMATS:
        for context in gate_corpus.CONTEXTS:
            value, _ = fmt.make(rng)
            path, text = gate_corpus.render(context, fmt, value, rng)
            named.update(finding.rule for finding in scan_text(text, path=path))
    missing = {rule.name for rule in PROVIDER_RULES} - named
    assert not missing


def _near_misses(rule_anchor: str, prefix: str) -> Iterator[str]:
    """Long runs of a token charset after the literal, in the cases rules are written in."""
    literals = {rule_anchor, rule_anchor.upper(), prefix or rule_anchor}
    runs = ("A", "a1", "0f", "-_", "+/", "=", " `", ".", "_=", ":")
    for literal in literals:
        for run in runs:
            yield (literal + "_KEY = " + run * 2000)[:6000]
            yield ((literal + run * 40 + " ") * 200)[:6000]


@pytest.mark.parametrize("rule", PROVIDER_RULES, ids=lambda r: f"{r.name}-{r.anchors[0]}")
def test_provider_pattern_is_linear_on_near_misses(rule: object) -> None:
    from stet_lsp.gate.rules import Rule

    assert isinstance(rule, Rule)
    with time_limit(20):
        for anchor in rule.anchors:
            for text in _near_misses(anchor, rule.prefix):
                started = processor_time()
                for _ in rule.pattern.finditer(text):
                    pass
                assert processor_time() - started < 5


def test_one_megabyte_of_provider_near_misses_is_scanned_and_redacted() -> None:
    rng = random.Random(5)
    pieces = []
    for rule in PROVIDER_RULES:
        for anchor in rule.anchors:
            literal = rule.prefix or anchor
            pieces.append(literal + gate_corpus.pick(rng, gate_corpus.ALNUM, rng.randrange(3, 30)))
            pieces.append(anchor.upper() + "_TOKEN=" + "x" * rng.randrange(1, 60))
    line = " ".join(rng.choice(pieces) for _ in range(40_000))[:1_000_000]
    secret = "rnd_" + gate_corpus.pick(rng, gate_corpus.ALNUM, 32)
    with time_limit(120):
        for strict in (False, True):
            result = redact_text(
                line + " " + secret, config=GateConfig(strict=strict), cache=ResultCache()
            )
            assert secret not in result.text


def _found(text: str, path: str = "notes.md") -> list[tuple[str, str]]:
    return [(f.rule, text[f.offset : f.end_offset]) for f in scan_text(text, path=path)]


def _b64(rng: random.Random, size: int) -> str:
    return base64.b64encode(gate_corpus.pick(rng, gate_corpus.ALNUM, size).encode()).decode()


def test_square_and_facebook_tokens_without_a_vendor_name() -> None:
    rng = random.Random(41)
    square = "EAAA" + gate_corpus.pick(rng, gate_corpus.B64URL, 60)
    page = "EAAG" + gate_corpus.pick(rng, gate_corpus.ALNUM, 160)
    app = "1308742762612587|" + gate_corpus.pick(rng, gate_corpus.B64URL, 27)
    assert _found(f"ARG token={square}\n") == [("square-token", square)]
    assert _found(f"Use `{page}` for the page.\n") == [("facebook-access-token", page)]
    assert _found(f"facebook app token {app}\n") == [("facebook-access-token", app)]
    for text in (
        "payload EAAAAQAAAAEAAAABAAAAAQAAAAEAAAAB and EAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n",
        "aws-cli@sha256:eaaa" + gate_corpus.pick(rng, gate_corpus.HEX, 60) + "\n",
        "EAAA" + gate_corpus.pick(rng, gate_corpus.B64, 200) + "+/==\n",  # inside base64
        "order 1308742762612587|status\n",  # no vendor, not random
    ):
        assert _found(text) == [], text


def test_an_airtable_personal_access_token_without_the_vendors_name() -> None:
    rng = random.Random(43)
    token = "pat" + gate_corpus.pick(rng, gate_corpus.ALNUM, 14) + "."
    token += gate_corpus.pick(rng, gate_corpus.HEX, 64)
    assert _found(f"fetch(url, {{ headers: h({token!r}) }})\n") == [("airtable-token", token)]
    assert _found(f"I used {token} for the base.\n") == [("airtable-token", token)]
    assert _found(json.dumps({"content": f"ok\n{token}"}) + "\n") == [("airtable-token", token)]
    for text in (
        f"the path is /tmp/x{token}\n",  # inside a longer run: a part of something else
        "import path.to.module; pathologically.long\n",
        f"{token[:-1]}\n",  # one hex short
        f"{token.upper()}\n",  # the hex is lower-case
    ):
        assert _found(text) == [], text


def test_oracle_cloud_auth_token() -> None:
    token = "Ab3;kZ9(qR7<mT2#xW5p"
    for text, path in (
        (f'OCI_AUTH_TOKEN="{token}"\n', "session.sh"),
        (json.dumps({"oci_auth_token": token}) + "\n", "events.jsonl"),
        (f"Use the OCI credential `{token}` for the registry.\n", "notes.md"),
    ):
        found = scan_text(text, path=path)
        assert [f.rule for f in found] == ["oci-auth-token"], text
        assert token in text[found[0].offset : found[0].end_offset] or path.endswith("jsonl")
    for text in (
        "OCI_USER_OCID=ocid1.user.oc1..aaaaaaaab3xnqk2vq2vz6rjzqzrhp5aq4syjv3x7o2wf4pqgm\n",
        "OCI_FINGERPRINT=12:34:56:78:90:ab:cd:ef:12:34:56:78:90:ab:cd:ef\n",
        "OCI_REGION=us-ashburn-1\n",
        "the OCI image `ghcr.io/acme/app:1.0` runs\n",
        "OCI_AUTH_TOKEN=${OCI_AUTH_TOKEN}\n",
    ):
        assert _found(text) == [], text


def test_pkcs12_content_in_base64() -> None:
    rng = random.Random(42)
    der = bytes([0x30, 0x82, 0x09, 0xCF, 0x02, 0x01, 0x03, 0x30, 0x82, 0x09, 0x85])
    encoded = base64.b64encode(der + bytes(rng.randrange(256) for _ in range(900))).decode()
    wrapped = "\n".join(encoded[i : i + 64] for i in range(0, len(encoded), 64))
    text = f"$ base64 client.p12\n{wrapped}\nEOF\n$ echo done\n"
    assert _found(text, "session.sh") == [("pkcs12-content", wrapped)]
    assert _found(f'P12="{encoded}"\n', ".env") == [("pkcs12-content", encoded)]
    line = json.dumps({"content": text}) + "\n"
    redacted = redact_text(line, path="events.jsonl").text
    assert json.loads(redacted)["content"] == (
        "$ base64 client.p12\n[REDACTED:pkcs12-content#1]\nEOF\n$ echo done\n"
    )
    # An X.509 certificate is public: its DER starts `30 82 .. .. 30 82`, not version 3.
    cert = "MIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBaMQswCQYDVQQGEwJJRTES"
    assert _found(f"-----BEGIN CERTIFICATE-----\n{cert}\n-----END CERTIFICATE-----\n") == []
    assert _found(f"cert: {cert}\n") == []


@pytest.mark.parametrize(
    ("shown", "start"),
    [
        # A Read tool's view: each line after its number and a tab.
        (lambda lines: "".join(f"{n:6}\t{line}\n" for n, line in enumerate(lines, 1)), "     1\t"),
        (lambda lines: "\r\n".join(lines) + "\r\n", ""),  # a file with CRLF line ends
        (lambda lines: "p12: |\n" + "".join(f"\t{line}\n" for line in lines), "p12: |\n\t"),
    ],
    ids=["read-numbered", "crlf", "tab-indented"],
)
def test_pkcs12_content_over_lines_in_json(shown: Callable[[list[str]], str], start: str) -> None:
    """In JSON text the rule first sees line ends, tabs and all as escapes: each body goes
    whole, the one after it too."""
    rng = random.Random(44)
    der = bytes([0x30, 0x82, 0x09, 0xCF, 0x02, 0x01, 0x03, 0x30, 0x82, 0x09, 0x85])
    bodies = []
    for _ in range(2):
        encoded = base64.b64encode(der + bytes(rng.randrange(256) for _ in range(1500))).decode()
        bodies.append([encoded[i : i + 64] for i in range(0, len(encoded), 64)])
    records = [
        {"kind": "tool_result", "call_id": "toolu_01", "output": shown(bodies[0])},
        {"kind": "tool_result", "call_id": "toolu_02", "output": "\n".join(bodies[1]) + "\n"},
    ]
    text = "".join(json.dumps(record) + "\n" for record in records)

    redacted = redact_text(text, path="events.jsonl").text

    assert gate_corpus.surviving_fragments(redacted, tuple(bodies[0] + bodies[1])) == []
    first, second = (json.loads(line)["output"] for line in redacted.splitlines())
    assert re.fullmatch(re.escape(start) + r"\[REDACTED:pkcs12-content#1\]\r?\n", first)
    assert second == "[REDACTED:pkcs12-content#2]\n"
    plain = redact_text(shown(bodies[0]), path="out.txt").text  # the same text, not JSON
    assert re.fullmatch(re.escape(start) + r"\[REDACTED:pkcs12-content#1\]\r?\n", plain)


@pytest.mark.parametrize("indent", ["", "    ", "\t"], ids=["bare", "spaces", "tab"])
def test_pkcs12_content_in_json_quoted_twice(indent: str) -> None:
    """A tool's output that is JSON itself, in a transcript's string: the line ends and tabs
    are escaped twice (`\\\\n`), and every line of the body goes."""
    rng = random.Random(45)
    der = bytes([0x30, 0x82, 0x09, 0xCF, 0x02, 0x01, 0x03, 0x30, 0x82, 0x09, 0x85])
    encoded = base64.b64encode(der + bytes(rng.randrange(256) for _ in range(900))).decode()
    lines = [encoded[i : i + 64] for i in range(0, len(encoded), 64)]
    shown = "p12: |\n" + "".join(f"{indent}{line}\n" for line in lines)
    output = json.dumps({"output": shown, "metadata": {"exit_code": 0}})
    text = json.dumps({"type": "function_call_output", "output": output}) + "\n"

    redacted = redact_text(text, path="events.jsonl").text

    assert gate_corpus.surviving_fragments(redacted, tuple(lines)) == []
    inner = json.loads(json.loads(redacted)["output"])
    assert inner["output"] == f"p12: |\n{indent}[REDACTED:pkcs12-content#1]\n"


@pytest.mark.parametrize("sign", ["+", "-"], ids=["added", "removed"])
@pytest.mark.parametrize("size", [1000, 900], ids=["last-line-short", "last-line-full"])
@pytest.mark.parametrize("after", ["other: 1", "}", "  - x2", ""])
def test_pkcs12_content_in_a_diff_of_a_yaml_block(sign: str, size: int, after: str) -> None:
    """`+p12: |` then `+    MIIG…` (or `-`): every line of the body goes, and the diff's
    lines stay lines (the next one's `+` is no part of the body)."""
    rng = random.Random(46)
    der = bytes([0x30, 0x82, 0x06, 0x1F, 0x02, 0x01, 0x03, 0x30, 0x82, 0x05, 0xE5])
    encoded = base64.b64encode(der + bytes(rng.randrange(256) for _ in range(size))).decode()
    lines = [encoded[i : i + 64] for i in range(0, len(encoded), 64)]
    assert (len(lines[-1]) == 64) == (size == 900)
    diff = f" config:\n{sign}p12: |\n" + "".join(f"{sign}    {line}\n" for line in lines)
    diff += f"{sign}{after}\n"
    expected = f" config:\n{sign}p12: |\n{sign}    [REDACTED:pkcs12-content#1]\n{sign}{after}\n"
    for content, path, unquote in framed(diff, "change.diff"):
        redacted = redact_text(content, path=path).text
        assert unquote(redacted) == expected, content
        assert redact_text(redacted, path=path).text == redacted


@pytest.mark.parametrize("sign", ["+", "-"], ids=["added", "removed"])
@pytest.mark.parametrize("after", ["other: 1", "}", ""])
def test_pkcs12_content_a_diff_adds_or_removes_unindented(sign: str, after: str) -> None:
    """A `.p12` file's base64 as a diff writes it: `+MIIG…` on every line (a `+` before
    base64 is base64's own anywhere else)."""
    rng = random.Random(48)
    der = bytes([0x30, 0x82, 0x06, 0x1F, 0x02, 0x01, 0x03, 0x30, 0x82, 0x05, 0xE5])
    # 1,010 bytes: the last line ends in `=` (a last line of letters alone is taken for a
    # word, docs/gate.md)
    encoded = base64.b64encode(der + bytes(rng.randrange(256) for _ in range(999))).decode()
    lines = [encoded[i : i + 64] for i in range(0, len(encoded), 64)]
    diff = "@@ -0,0 +1,17 @@\n" + "".join(f"{sign}{line}\n" for line in lines) + f" {after}\n"
    expected = f"@@ -0,0 +1,17 @@\n{sign}[REDACTED:pkcs12-content#1]\n {after}\n"
    for content, path, unquote in framed(diff, "change.diff"):
        redacted = redact_text(content, path=path).text
        assert gate_corpus.surviving_fragments(unquote(redacted), tuple(lines)) == []
        assert unquote(redacted) == expected, content
        assert redact_text(redacted, path=path).text == redacted


def test_kubernetes_secret_manifests() -> None:
    rng = random.Random(43)
    password, token = _b64(rng, 20), _b64(rng, 32)
    after = (
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: app\ntype: Opaque\n"
        f"data:\n  password: {password}\n  api-token: {token}\n"
    )
    before = f"apiVersion: v1\ndata:\n  password: {password}\nkind: Secret\nmetadata:\n  name: db\n"
    string_data = "kind: Secret\nstringData:\n  password: hunter2-Xy9!\n"
    # A file the Secret holds, whose own keys include a `data:` deeper in (Spring Boot's).
    spring = (
        "kind: Secret\nstringData:\n  application.yaml: |\n    spring:\n      data:\n"
        f"        redis:\n          signing-salt: {password}\n          token: {token}\n"
    )
    listed = (
        "apiVersion: v1\nitems:\n- apiVersion: v1\n  data:\n"
        f"    password: {password}\n    api-token: {token}\n  kind: Secret\nkind: List\n"
    )
    as_json = json.dumps({"apiVersion": "v1", "data": {"password": password}, "kind": "Secret"})
    for text, path in (
        (after, "secret.yaml"),
        (before, "notes.md"),
        (string_data, "notes.md"),
        (spring, "secret.yaml"),
        (listed, "notes.md"),
        (as_json + "\n", "secret.json"),
        (json.dumps({"content": before}) + "\n", "events.jsonl"),
        (json.dumps({"content": json.dumps(json.loads(as_json), indent=2)}) + "\n", "e.jsonl"),
    ):
        redacted = redact_text(text, path=path).text
        assert "kubernetes-secret#1" in redacted, text
        assert password not in redacted and "hunter2" not in redacted and token not in redacted
    for text in (
        "apiVersion: v1\nkind: ConfigMap\ndata:\n  mode: production\n  workers: '4'\n",
        "kind: Secret\nstringData:\n  password: {{ .Values.dbPassword }}\n  token: ''\n",
        # A Secret's neighbour across a document separator keeps its data.
        "apiVersion: v1\nkind: ConfigMap\ndata:\n  mode: production\n---\nkind: Secret\n",
        "kind: Secret\nmetadata:\n  name: x\n---\nkind: ConfigMap\ndata:\n  mode: production\n",
        "kind: ExternalSecret\ndata:\n  - secretKey: password\n",
    ):
        assert _found(text, "k8s.yaml") == [], text


def test_registry_logins_with_a_password_on_the_command_line() -> None:
    cases = [
        ("docker login -u ci -p dckr_pat_1abcXYZ9mnQ registry.example.com", "dckr_pat_1abcXYZ9mnQ"),
        ('podman login --password="Qw3rty!2345zz" quay.io', "Qw3rty!2345zz"),
        ("helm registry login -u me -p 'x7Kq2LmZ9wTr' reg.io", "x7Kq2LmZ9wTr"),
        ("docker login --username=ci --password=S3cr3tPassw0rdXY docker.io", "S3cr3tPassw0rdXY"),
    ]
    for command, value in cases:
        for text, path in ((command + "\n", "session.sh"), (json.dumps([command]), "e.json")):
            redacted = redact_text(text, path=path).text
            assert "[REDACTED:registry-login-password" in redacted, text
            assert value not in redacted, text
    for text in (
        "echo x | docker login -u ci --password-stdin ghcr.io",
        "docker login -p $REGISTRY_PASSWORD ghcr.io",
        "docker login -p <password> registry.example.com",
        "docker logout registry.example.com && docker pull app:1",
    ):
        assert scan_text(text + "\n", path="session.sh") == [], text


def test_passwords_given_to_a_tool_by_its_command_line_flag() -> None:
    """`mysql -pSECRET`, `sshpass -p`, `redis-cli -a`, `sqlcmd -P`, `mongosh -p`,
    `ldapsearch -w`, `keytool -storepass`, `az login -p`, `twine upload -p`, `smbclient -U
    user%SECRET`, `echo SECRET | sudo -S`: the value only, raw and in a transcript."""
    rng = random.Random("cli-password")
    pw = "Jr5" + gate_corpus.pick(rng, gate_corpus.ALNUM, 13)
    commands = [
        f"mysql -u root -p{pw} -h db",
        f"mysql -u root -p'{pw}' -h db",
        f'mysqldump --user=root -p"{pw}" app > dump.sql',
        f"sshpass -p {pw} ssh deploy@10.0.0.4",
        f"sshpass -p'{pw}' scp a deploy@10.0.0.4:",
        f"redis-cli -h cache -a {pw} ping",
        f"sqlcmd -S db -U sa -P '{pw}' -Q 'select 1'",
        f"mongosh --host db -u admin -p {pw} --authenticationDatabase admin",
        f"ldapsearch -x -D cn=admin,dc=corp -w {pw} -b dc=corp",
        f"keytool -list -keystore app.jks -storepass {pw}",
        f"az login --service-principal -u 1c2d3e4f-aaaa-bbbb-cccc-123456789abc -p {pw} --tenant t",
        f"twine upload -u deploy -p {pw} dist/*",
        f"smbclient //fs/share -U admin%{pw}",
        f"smbclient //fs/share -U 'admin%{pw}' -c ls",
        f"echo '{pw}' | sudo -S apt-get install -y jq",
        f"echo {pw} | sudo -u root -S true",
        f"openssl rsa -in key.pem -passin pass:{pw} -out plain.pem",
    ]
    for command in commands:
        for text, path in (
            (command + "\n", "session.sh"),
            (json.dumps({"type": "tool_use", "input": {"command": command}}) + "\n", "e.jsonl"),
            (json.dumps({"content": json.dumps({"cmd": command})}) + "\n", "e.jsonl"),
        ):
            redacted = redact_text(text, path=path).text
            assert pw not in redacted, text
            assert "[REDACTED:cli-password#1]" in redacted, text
            # The command and its other arguments stay.
            assert redacted.split("[REDACTED")[0] == text.split(pw)[0], text
    for text in (
        "mysql -p",
        "mysql -u root -p -h db",
        "mysql -u root -p mydb < dump.sql",
        "mysql -u root -p$MYSQL_PWD -h db",
        'mysql -u root -p"${PASS}" -h db',
        "mysql -u root -p<password> -h db",
        "mysql -u root -p**** -h db",
        "docker run -p 8080:8080 app",
        "python -m http.server -p 8000",
        "sshpass -f pw.txt ssh -p 2222 deploy@10.0.0.4",
        "redis-cli -a $REDIS_PASSWORD ping",
        "ldapsearch -x -W -D cn=admin,dc=corp",
        "keytool -list -storepass:env STOREPASS",
        "az login --service-principal -u x -p ~/certs/sp.pem --tenant t",
        "echo $SUDO_PASS | sudo -S true",
        "echo hello | sudo tee /etc/motd",
    ):
        for line, path in ((text + "\n", "session.sh"), (json.dumps([text]) + "\n", "e.jsonl")):
            assert _found(line, path) == [], text


def framed(text: str, raw_path: str = "notes.txt") -> list[tuple[str, str, Callable[[str], str]]]:
    """`text` as the gate meets it in a transcript: raw, in a tool result's JSON string, and
    in a tool's JSON output quoted again; each with the path it is gated as and a reader of
    the text back out of it."""
    return [
        (text, raw_path, lambda redacted: redacted),
        (
            json.dumps({"type": "tool_result", "content": text}) + "\n",
            "events.jsonl",
            lambda redacted: json.loads(redacted)["content"],
        ),
        (
            json.dumps({"content": json.dumps({"stdout": text})}) + "\n",
            "events.jsonl",
            lambda redacted: json.loads(json.loads(redacted)["content"])["stdout"],
        ),
    ]


def redacted_everywhere(text: str, secret: str, rule: str, *, exact: bool = False) -> None:
    """`text` redacted raw, inside a transcript's JSON string and quoted twice: the secret
    goes, under `rule`'s marker, the JSON stays valid and redacting again changes nothing;
    `exact`: the raw text's one change is the secret made the marker."""
    marker = f"[REDACTED:{rule}#1]"
    for content, path, unquote in framed(text):
        redacted = redact_text(content, path=path).text
        assert secret not in redacted, content
        assert marker in redacted, content
        assert redact_text(redacted, path=path).text == redacted, content
        shown = unquote(redacted)  # the JSON framings still read as JSON
        if exact:
            assert shown == text.replace(secret, marker)


def _untouched_everywhere(text: str) -> None:
    for content, path in ((text, "notes.txt"), (json.dumps([text]) + "\n", "e.jsonl")):
        assert _found(content, path) == [], text


@pytest.mark.parametrize(
    ("text", "secret", "rule"),
    [
        ("mysql -uroot -p'$9xK2mQ7vLp3Zt' db", "$9xK2mQ7vLp3Zt", "cli-password"),
        ("mysql -uroot -p$9xK2mQ7vLp3Zt db", "$9xK2mQ7vLp3Zt", "cli-password"),
        ("sshpass -p '$xK2mQ7vLp3Zt' ssh deploy@10.0.0.4", "$xK2mQ7vLp3Zt", "cli-password"),
        (
            "docker login -u me -p '$7Qw3rTy8Ui2Op' r.io",
            "$7Qw3rTy8Ui2Op",
            "registry-login-password",
        ),
        ("docker login -u me -p $Qw3rTy8Ui2Op r.io", "$Qw3rTy8Ui2Op", "registry-login-password"),
        ("curl -H 'Authorization: Bearer $5aB8cD2eF4gH6jK9' https://a", "$5aB8cD2eF4gH6jK9", None),
        ("curl -u admin:'9a$bcK2mQ7vLp' https://a", "9a$bcK2mQ7vLp", "curl-auth-user"),
        ("DEPLOY_TOKEN=$Q7ZLM4R2XW9T3BNV8", "Q7ZLM4R2XW9T3BNV8", "secret-assignment"),
        # A name, then a sign no reference is followed by: a password, single-quoted.
        ("mysql -uroot -p'$uperSecret2024!' db", "$uperSecret2024!", "cli-password"),
        ("docker login -p '$ecretPassw0rd#' r.io", "$ecretPassw0rd#", "registry-login-password"),
    ],
)
def test_a_password_that_starts_with_a_dollar_is_no_reference(
    text: str, secret: str, rule: str | None
) -> None:
    """A random value may start with `$`: only a reference a shell expands (`$NAME`, `${…}`,
    `$(…`) stands for a value, and a name is written, not a generated run."""
    if rule is None:
        assert secret not in redact_text(text + "\n", path="session.sh").text
    else:
        redacted_everywhere(text, secret, rule)


@pytest.mark.parametrize(
    "command",
    [
        "smbclient //fs/share -U 'admin%{pw}' -c ls",
        'smbclient //fs/share -U "admin%{pw}" -c ls',
        "smbclient //fs/share --user='admin%{pw}'",
        "smbclient //fs/share -U 'CORP\\admin%{pw}' -c ls",
        'rpcclient -U "EXAMPLE\\Administrator%{pw}" host',
        "smbclient //fs/share -U admin%'{pw}' -c ls",
    ],
)
def test_a_quoted_samba_password_runs_to_its_quote(command: str) -> None:
    """`-U 'user%password'`: signs a shell word cannot hold unquoted (`&`, `;`, `|`) are the
    password's own inside the quotes."""
    for pw in ("&87zcpVMw0qDPAjd6", "0ZFv1niU&K8iO;5|Ag"):
        redacted_everywhere(command.format(pw=pw), pw, "cli-password")


def test_references_that_start_a_flags_or_keys_value_stay() -> None:
    for text in (
        "mysql -u root -p${DB_PASS:?missing} -h db",
        "docker login -u AWS -p $(aws ecr get-login-password) r.io",
        "docker login -u me -p $CI_REGISTRY_PASSWORD r.io",
        'curl -H "Authorization: Bearer ${GITHUB_TOKEN}" https://a',
        "curl -u admin:${ADMIN_PASSWORD:-x} https://a",
        "CONFLUENT_API_KEY=$CONFLUENT_KEY_FROM_VAULT",
        "mysql -u root -p$1 -h db",
        'curl -u "$USER:$PASS" https://a',
        "mysql -u root -p$DB_PASS; echo done",
        # `$$`: the `$` escaped for Make and Docker Compose, which hand the shell `$NAME`.
        "test: mysqladmin ping -h localhost -u root -p$$MYSQL_ROOT_PASSWORD",
        "docker login -u $$CI_REGISTRY_USER -p $$CI_REGISTRY_PASSWORD $$CI_REGISTRY",
        "curl -u admin:$$ADMIN_PASSWORD https://a",
        # A path: relative, under home, or absolute of two segments.
        "az login --service-principal -u x -p ./sp-cert --tenant t",
        "az login --service-principal -u x -p ~/sp.json --tenant t",
        "keytool -list -keystore app.jks -storepass /run/secrets/store",
    ):
        _untouched_everywhere(text)


@pytest.mark.parametrize(
    ("text", "secret", "rule"),
    [
        ("mysql -uroot -p'$Password' shop", "$Password", "cli-password"),
        ("PGPASSWORD='$ecret' psql -h db -U app", "$ecret", "secret-assignment"),
        ("export DB_PASSWORD='$Summer' && ./migrate", "$Summer", "secret-assignment"),
        ("sshpass -p '$Hunter' ssh deploy@10.0.0.4", "$Hunter", "cli-password"),
        ("redis-cli -a '$Tr0ub4dor' ping", "$Tr0ub4dor", "cli-password"),
        ("docker login -u me -p '$Password' r.io", "$Password", "registry-login-password"),
        ("echo \"it's up\" && mysql -uroot -p'$Password' shop", "$Password", "cli-password"),
    ],
)
def test_a_single_quoted_dollar_name_is_the_password_itself(
    text: str, secret: str, rule: str
) -> None:
    """A shell expands nothing in single quotes: `-p'$Password'` passes the nine characters
    `$Password`, which are the password."""
    redacted_everywhere(text, secret, rule)


def test_a_dollar_name_the_shell_expands_stays_a_reference() -> None:
    for text in (
        'mysql -uroot -p"$Password" shop',
        "mysql -uroot -p$Password shop",
        'PGPASSWORD="$DB_PASS" psql -h db',
        # The quote before `$` closes the one `sh -c` opened: the shell expands `$MYSQL_PW`.
        "sh -c 'mysql -uroot -p'$MYSQL_PW' shop'",
        # A template's braces: a CI fills them in before any shell runs.
        "mysql -uroot -p'${{ secrets.DB_PASSWORD }}' shop",
        "PGPASSWORD='${DB_PASS}' psql",
        # Code and YAML: no flag, no `=` glued to a name; a program may expand it.
        "password: '$Password'",
        "db_password = '$Password'",
    ):
        _untouched_everywhere(text)


@pytest.mark.parametrize("operator", ["::=", ":::=", "?="])
@pytest.mark.parametrize(
    ("line", "rule"),
    [
        ("DATADOG_API_KEY {op} 7c1e4b9a2f8d3c6e0b5a9f2d4c8e1a7b", "datadog-api-key"),
        ("HEROKU_API_KEY {op} 4f8a2c9e-1b7d-4f6a-9c5e-8b2d9f1a4c7e", "heroku-api-key"),
        ("TWILIO_AUTH_TOKEN {op} 9e2b7c4a1f8d3e6b0c5a2f9d4e7b1c8a", "twilio-auth-token"),
        ("GITHUB_TOKEN {op} ghp_Tq8ZmW3kRx7LpN2vYc5JhB9sDf4GaE6uKw1n", "github-token"),
    ],
)
def test_a_vendors_key_assigned_by_make(operator: str, line: str, rule: str) -> None:
    """Make's `::=`, `:::=` and `?=` assign as `=` does: the vendor's own rule finds the key
    (a Heroku key is a UUID, which no generic rule takes)."""
    text = line.format(op=operator)
    value = text.rsplit(" ", 1)[1]
    assert _found(text + "\n", path="Makefile") == [(rule, value)]


def test_a_vendors_keyed_value_quoted_in_a_transcripts_json() -> None:
    """`NAME = "value"` inside a JSON string reads `= \\"value\\"`: the escaped quote stood
    where the vendor's keyword rule reads the assignment, and the literal was not decoded."""
    redacted_everywhere(
        'BUNDLE_ENTERPRISE__CONTRIBSYS__COM = "cd18fc9f:b6494384"\nTIMEOUT = 30\n',
        "cd18fc9f:b6494384",
        "sidekiq-secret",
    )


@pytest.mark.parametrize(
    "text",
    [
        # scp's `-p` keeps file times: only sshpass's own options come before the password.
        "sshpass -f ~/.pw scp -p report.txt host:/tmp/",
        # After a redirection, not a MySQL option.
        "mysql -u root mydb < dump.sql > out.txt 2>errors -preserve",
        # Tags that only end like a password's name.
        "<compass>north</compass> <pass>first</pass> <bypass>yes</bypass>",
        # A credential's name, not its value.
        "define('TOKEN_HEADER', 'X-Auth-Token');",
        "env:\n- name: AUTH_TOKEN_HEADER\n  value: X-Auth-Token\n",
        # A path beside a key id.
        "aws_access_key_id = AKIAQWERTYUIOPASDFGH\n# see src/main/java/com/Example/Auth/Service2x",
    ],
)
def test_lookalikes_of_the_command_line_and_file_rules_stay(text: str) -> None:
    redacted = redact_text(text, path="notes.txt").text
    markers = re.findall(r"\[REDACTED:([a-z-]+)#", redacted)
    assert [rule for rule in markers if rule != "aws-access-key-id"] == []


@pytest.mark.parametrize(
    "command",
    [
        "echo '{pw}' | docker login -u bot --password-stdin ghcr.io",
        'echo -n "{pw}" | podman login quay.io -u bot --password-stdin',
        "printf '%s' {pw} | helm registry login r.example.com -u a --password-stdin",
    ],
)
def test_a_password_echoed_into_a_registry_login(command: str) -> None:
    pw = "Xk9" + gate_corpus.pick(random.Random("stdin"), gate_corpus.ALNUM, 17)
    text = command.format(pw=pw)
    redacted_everywhere(text, pw, "registry-login-password", exact=True)
    for safe in (
        'echo "$CR_PAT" | docker login ghcr.io -u bot --password-stdin',
        'echo "${{ secrets.GITHUB_TOKEN }}" | docker login ghcr.io -u bot --password-stdin',
        "cat ~/.docker-pw | docker login -u bot --password-stdin",
    ):
        _untouched_everywhere(safe)


def test_a_credential_set_with_setx() -> None:
    """Windows' `setx NAME value`, as fish's `set -x NAME value`: the value of a credential's
    name, whatever it looks like; references, placeholders, paths and metadata stay."""
    pw = "Xk9" + gate_corpus.pick(random.Random("setx"), gate_corpus.ALNUM, 17)
    for text in (f"setx DB_PASSWORD {pw}", f'setx GITHUB_TOKEN "{pw}" /M'):
        redacted_everywhere(text, pw, "cli-password", exact=True)
    for text in (
        "setx DB_PASSWORD %DB_PASSWORD%",
        "setx API_TOKEN_FILE C:\\keys\\token.txt",
        "setx TOKEN_TYPE bearer",
        "setx GITHUB_TOKEN <your-token>",
        'setx PATH "%PATH%;C:\\bin"',
    ):
        _untouched_everywhere(text)


def test_netrc_passwords_on_one_line_or_several() -> None:
    pw = "Jr5" + gate_corpus.pick(random.Random("netrc"), gate_corpus.ALNUM, 15)
    for text in (
        f"machine github.com login ci password {pw}\n",
        f"machine github.com\n  login ci-bot\n  password {pw}\nmachine gitlab.com\n",
        f"machine api.heroku.com\n    login me@example.com\n    password {pw}\n",
        f'machine nexus.corp login deploy account ops password "{pw}"\n',
        # A diff's added or removed lines, the first one at a line's or a string's start.
        f"+machine h\n+  login u\n+  password {pw}\n",
        f"-machine h\n-  login u\n-  password {pw}\n",
        f"@@ -1,3 +0,0 @@\n-machine h\n-  login u\n-  password {pw}\n",
    ):
        redacted_everywhere(text, pw, "netrc-password")
        redacted = redact_text(text, path="change.diff").text
        assert redact_text(redacted, path="change.diff").text == redacted
    for text in (
        "machine learning password reset flow",
        f"a virtual-machine h login u password {pw}",
        "machine github.com login ci password $NETRC_PASSWORD",
        "machine github.com login ci",
    ):
        _untouched_everywhere(text)


@pytest.mark.parametrize("pw", ["n&9WVV8Ia%LEpqzNnr", "&L8D_*DjOx~DJZz73", "pF~O&vY4z-e;Zm2R|nz"])
def test_netrc_passwords_keep_signs_a_shell_would_read(pw: str) -> None:
    """No shell reads `.netrc`: `&`, `;` and `|` are the password's, which goes whole."""
    for text in (
        f"machine api.example.com login app password {pw}\n",
        f"machine api.example.com\n  login app\n  password {pw}\n",
    ):
        redacted_everywhere(text, pw, "netrc-password", exact=True)


@pytest.mark.parametrize(
    "line",
    [
        "echo machine github.com login x password $TOKEN&&chmod 600 ~/.netrc",
        "echo machine h login u password $PW|tee ~/.netrc",
        "echo machine h login u password $PW>>~/.netrc",
        "machine h login u password %PW%&&echo done",
    ],
)
def test_a_reference_a_shell_writes_to_netrc_ends_at_the_shells_operator(line: str) -> None:
    """A shell writing the file: what follows the reference is its next command."""
    _untouched_everywhere(line + "\n")


def test_xml_elements_named_as_credentials() -> None:
    rng = random.Random("xml")
    pw = "Jr5" + gate_corpus.pick(rng, gate_corpus.ALNUM, 15)
    key = gate_corpus.pick(rng, gate_corpus.ALNUM, 32)
    for text, secret in (
        (f"<password>{pw}</password>", pw),
        (f"<server><id>corp</id><username>deploy</username><password>{pw}</password></server>", pw),
        (f'<ossrhPassword encrypted="false">{pw}</ossrhPassword>', pw),
        (f"<passphrase>{pw}</passphrase>", pw),
        (f"<settings>\n  <apiKey>{key}</apiKey>\n</settings>", key),
        (f"<client_secret>{key}</client_secret>", key),
        # A formatter's layout: the value alone on its line.
        (f"<server>\n  <password>\n    {pw}\n  </password>\n</server>", pw),
        (f"<apiToken>\r\n    {key}\r\n</apiToken>", key),
    ):
        redacted_everywhere(text, secret, "xml-secret")
    for text in (
        "<password>\n  ${env.DEPLOY_PASSWORD}\n</password>",
        "<password>${env.DEPLOY_PASSWORD}</password>",
        "<password></password>",
        "<password>****</password>",
        "<token>IDENTIFIER</token>",
        "<passwordPolicy>strong</passwordPolicy>",
        "<apiKey>your-api-key</apiKey>",
    ):
        _untouched_everywhere(text)


def test_credentials_as_yaml_block_scalars() -> None:
    """`password: |` or `client_secret: >-` with the value on the indented lines after it:
    every line of the block, raw and in a transcript (where its newlines are escapes)."""
    rng = random.Random("yaml-block")
    pw = "Jr5" + gate_corpus.pick(rng, gate_corpus.ALNUM + "#%!", 17)
    key = gate_corpus.pick(rng, gate_corpus.ALNUM, 40)
    for text, secret in (
        (f"database:\n  password: |\n    {pw}\n  host: db.internal\n", pw),
        (f"oauth:\n  client_secret: >-\n    {pw}\n  client_id: web\n", pw),
        (f"- name: deploy\n  api_key: |-  # rotated monthly\n\n    {key}\n", key),
        (f"signing_key: |\n  {key[:20]}\n  {key[20:]}\n", key[20:]),
        (f"users:\n  - password: |\n      {pw}\n    name: deploy\n", pw),
    ):
        redacted_everywhere(text, secret, "yaml-block-secret")
    for text in (
        "description: |\n  The password must be rotated every 90 days.\n",
        "steps:\n  - run: |\n      echo $TOKEN_PATH\n",
        "password_policy: |\n  min-length-12\n",
        "password: |\n  {{ .Values.db.password }}\n",
        "token: |\n  ${CI_JOB_TOKEN}\n",
        "password: |\nnext: top-level\n",
    ):
        _untouched_everywhere(text)


def test_credentials_as_toml_multiline_strings() -> None:
    """`password = \"\"\"…\"\"\"` and its literal form with single quotes, on one line or over
    several."""
    pw = "Jr5" + gate_corpus.pick(random.Random("toml-multiline"), gate_corpus.ALNUM, 17)
    for text in (
        f'[database]\npassword = """{pw}"""\n',
        f"[database]\npassword = '''{pw}'''\n",
        f'[smtp]\nauth_token = """\n{pw}\n"""\n',
    ):
        redacted_everywhere(text, pw, "toml-multiline-secret")
    for text in (
        'description = """The password is rotated monthly."""\n',
        'password_hint = """ask ops"""\n',
        'password = """${DB_PASSWORD}"""\n',
        "token = '''<your-token>'''\n",
    ):
        _untouched_everywhere(text)


def test_dotnet_app_settings_of_a_credential() -> None:
    """`<add key="DbPassword" value="…" />` in `appSettings`: the value of a key named as a
    credential (NuGet's `ClearTextPassword` is `nuget-config-password`'s)."""
    pw = "Jr5" + gate_corpus.pick(random.Random("appsettings"), gate_corpus.ALNUM, 15)
    for text in (
        f'<appSettings>\n  <add key="DbPassword" value="{pw}" />\n</appSettings>',
        f"<add key='StripeApiKey' value='sk{pw}'/>",
        f'<add key="Smtp.Password"\n     value="{pw}" />',
    ):
        redacted_everywhere(text, pw, "xml-secret")
    for text in (
        '<add key="PasswordMinLength" value="12" />',
        '<add key="DbPasswordFile" value="/run/secrets/db" />',
        '<add key="ClearTextPassword" value="%NUGET_PASSWORD%" />',
        '<add key="ApiKey" value="your-api-key" />',
    ):
        _untouched_everywhere(text)


def test_the_signature_of_a_signed_url() -> None:
    """AWS's presigned `X-Amz-Signature=`, Google Cloud Storage's `X-Goog-Signature=` and an
    app's `?signature=`: whoever holds the URL may use it until it expires."""
    rng = random.Random("signed-url")
    hex64 = gate_corpus.pick(rng, gate_corpus.HEX, 64)
    token = gate_corpus.pick(rng, gate_corpus.ALNUM, 32)
    for text, secret in (
        (
            "https://bucket.s3.amazonaws.com/report.csv?X-Amz-Algorithm=AWS4-HMAC-SHA256"
            "&X-Amz-Date=20260101T000000Z&X-Amz-Expires=3600&X-Amz-SignedHeaders=host"
            f"&X-Amz-Signature={hex64}",
            hex64,
        ),
        (
            "https://storage.googleapis.com/bucket/o?X-Goog-Algorithm=GOOG4-RSA-SHA256"
            f"&X-Goog-Date=20260101T000000Z&X-Goog-Expires=900&X-Goog-Signature={hex64}{hex64}",
            hex64,
        ),
        (f"https://cdn.example.com/f.zip?expires=1767225600&signature={token}", token),
        (f'curl "https://cdn.example.com/f.zip?signature={token}&expires=1"', token),
        (
            '<a href="https://bucket.s3.amazonaws.com/report.csv?X-Amz-Expires=3600'
            f'&amp;X-Amz-Signature={hex64}">report</a>',
            hex64,
        ),
    ):
        redacted_everywhere(text, secret, "signed-url-signature")
    for text in (
        "https://example.com/verify?signature=none&user=4",
        "https://example.com/?signature=sha256",
        "https://bucket.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Expires=3600",
        f"the document signature={token} is in the footer",
    ):
        _untouched_everywhere(text)


def test_an_environment_file_encoded_in_base64() -> None:
    """`echo <blob> | base64 -d > .env`, a CI variable or a ConfigMap's value holding a whole
    `.env` in base64: the run, when it decodes to a credential's name assigned a value (the
    name found as base64 writes it at each of the three byte alignments)."""
    rng = random.Random("base64-env")
    pw = "Jr5" + gate_corpus.pick(rng, gate_corpus.ALNUM, 15)
    for lead in ("", "#", "##"):  # each alignment of the name in the encoding
        blob = base64.b64encode(
            f"{lead}APP_ENV=production\nDB_PASSWORD={pw}\nPORT=8080\n".encode()
        ).decode()
        for text in (
            f"echo {blob} | base64 -d > .env",
            f"env:\n  ENV_FILE: {blob}\n",
            f"kind: ConfigMap\ndata:\n  app.env: {blob}\n",
        ):
            redacted_everywhere(text, blob, "base64-encoded-secrets")
    for decoded in (
        "The password must be rotated every 90 days.\n",
        "DB_PASSWORD=${DB_PASSWORD}\n",
        "PASSWORD_MIN_LENGTH=12\nTOKEN_TTL=3600\n",
        "token_type: bearer\n",
        "API_KEY=true\n",
    ):
        _untouched_everywhere(f"echo {base64.b64encode(decoded.encode()).decode()} | base64 -d")
    noise = base64.b64encode(bytes(rng.randrange(256) for _ in range(300))).decode()
    _untouched_everywhere(f"data:image/png;base64,{noise}UEFTU1dPUkQ{noise}")


def test_php_define_of_a_credential() -> None:
    pw = "Jr5" + gate_corpus.pick(random.Random("define"), gate_corpus.ALNUM, 15)
    for text in (
        f"define( 'DB_PASSWORD', '{pw}' );",
        f'define("AUTH_KEY", "{pw}");',
        f"define('SECURE_AUTH_SALT', '{pw}');",
        f"define ('STRIPE_SECRET', 'x{pw}');",
    ):
        redacted_everywhere(text, pw, "php-define-secret")
    for text in (
        "define( 'DB_PASSWORD', 'password_here' );",
        "define( 'DB_PASSWORD', getenv('DB_PASSWORD') );",
        "define( 'AUTH_KEY', 'put your unique phrase here' );",
        "define( 'DB_HOST', 'db.internal:3306' );",
        "define( 'DB_PASSWORD', '' );",
    ):
        _untouched_everywhere(text)


def test_c_define_of_a_credential() -> None:
    """`#define PASSWORD "…"` in C and C++: the literal is the value, as on an environment
    line, so a password that reads as a name goes too; a token's or key's must look random."""
    pw = "Jr5" + gate_corpus.pick(random.Random("c-define"), gate_corpus.ALNUM, 15)
    for text, value in (
        (f'#define PASSWORD "{pw}"', pw),
        (f'#define API_KEY "{pw}"', pw),
        (f'  #define MQTT_PASSWORD   "x{pw}#!"  // broker', f"x{pw}#!"),
        (f'#define APP_SECRET L"{pw}"', pw),
        ('#define WIFI_PASSWORD "mySecretPass123"', "mySecretPass123"),
        ('#define DB_PASS "Summer2024!"', "Summer2024!"),
    ):
        redacted_everywhere(text, value, "c-define-secret")
    for text in (
        "#define PASSWORD_LEN 32",
        '#define API_KEY "YOUR_API_KEY"',
        '#define API_KEY_HEADER "X-Api-Key"',
        '#define PASSWORD_PROMPT "Enter password: "',
        '#define PASSWORD_FIELD "password"',
        '#define SECRET_FILE "/etc/app/secret"',
        '#define AUTH_TOKEN "Authorization"',
        '#define PASSWORD "${DB_PASSWORD}"',
        '#define TOKEN "%s"',
        '#define COMPASS "NorthEast2"',
        '#define PASSWORD ""',
    ):
        _untouched_everywhere(text)


def test_name_and_value_pairs_in_yaml_and_json() -> None:
    pw = "Jr5" + gate_corpus.pick(random.Random("pairs"), gate_corpus.ALNUM, 15)
    for text in (
        f'env:\n- name: DB_PASSWORD\n  value: "{pw}"\n',
        f"env:\n  - name: DB_PASSWORD\n    value: {pw}\n",
        f"Parameters:\n  - ParameterKey: DBPassword\n    ParameterValue: {pw}\n",
        json.dumps([{"Key": "DB_PASSWORD", "Value": pw}]),
        json.dumps({"Parameters": [{"ParameterKey": "DBPassword", "ParameterValue": pw}]}),
        json.dumps({"environment": [{"name": "API_TOKEN", "value": pw}]}, indent=2),
    ):
        redacted_everywhere(text, pw, "name-value-secret")
    for text in (
        "env:\n- name: DB_PASSWORD\n  valueFrom:\n    secretKeyRef:\n      name: db\n",
        "env:\n- name: DB_PASSWORD\n  value: $(DB_PASS)\n",
        '- name: API_TOKEN\n  value: "{{ .Values.token }}"\n',
        "env:\n- name: DB_HOST\n  value: db.internal\n",
        json.dumps([{"Key": "Environment", "Value": "production"}]),
        json.dumps([{"name": "DB_PASSWORD_FILE", "value": "/run/secrets/db"}]),
    ):
        _untouched_everywhere(text)


def test_curl_user_and_header_credentials() -> None:
    cases = [
        ("curl --cacert ca.crt -u elastic:P@ssw0rd$1 https://localhost:9200", "elastic:P@ssw0rd$1"),
        (
            'curl -s --user "j.smith:dB2yF6@qL9vZm1P#4J" https://api.test',
            "j.smith:dB2yF6@qL9vZm1P#4J",
        ),
        (
            "curl -k -X POST https://x/hello \\\n  -H 'Content-type: text/plain' \\\n"
            "  -u developer:yqDVtkqPECriaLRi\n",
            "developer:yqDVtkqPECriaLRi",
        ),
        (
            'curl -H "Authorization: Token 22cb987851bc5659229114c62e60c79abd0d2c08" https://a',
            "22cb987851bc5659229114c62e60c79abd0d2c08",
        ),
        ("curl -H 'apikey: c4ed6c21-9dd5-4a05-8e3f-c56d1151cce8' https://a", None),
        ('curl -X POST --header "Api-Token: Sk94HG7f6KBq" https://a', "Sk94HG7f6KBq"),
    ]
    for command, value in cases:
        for text, path in ((command + "\n", "session.sh"), (json.dumps([command]), "e.json")):
            redacted = redact_text(text, path=path).text
            assert "[REDACTED:curl-auth-" in redacted, text
            if value is not None and path == "session.sh":
                assert value not in redacted
                assert any(v == value for _, v in _found(text, path)), text
    for text in (
        'curl -u "$API_USER:$API_PASS" https://api.internal',
        "curl -u admin: https://localhost:9200",
        "curl -u admin:password https://localhost:9200",
        "docker run -u 1000:1000 app && curl https://x",
        'curl -H "Authorization: Bearer $TOKEN" -H "X-Auth-Email: ops@example.com" https://x',
        'curl -H "Content-Type: application/json" -H "X-GitHub-Api-Version: 2022-11-28" https://x',
    ):
        assert _found(text + "\n", "session.sh") == [], text


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        (
            "export JFROG_ACCESS_TOKEN=AHIS3hlyosbohKagkXGStSOyLzXSQuwev1sNkhGeLgr9ug8O0scwygEE6mmiqVpX",
            "jfrog-token",
        ),
        ("JIRA_API_TOKEN=Zk3LmQ9pRt2XvB7nWc4YhJ6s", "atlassian-api-token"),
        ("ASANA_CLIENT_SECRET=kR4mZ8qL2vX6nB9tW3cY7hJ5sD1fG0aP", "asana-client-secret"),
        ("CONFLUENT_API_KEY=KQ7ZLM4R2XW9T3BN", "confluent-api-key"),
        ("CODECOV_TOKEN=kR4mZ8qL2vX6nB9tW3cY7hJ5sD1fG0aP", "codecov-token"),
        ("TWITTER_API_KEY=kR4mZ8qL2vX6nB9tW3cY7hJ5s", "twitter-api-key"),
        ("VAULT_TOKEN=s.ZC9Ecf4M5g9o34Q6RkzGsj0z", "vault-token"),
        ("SONAR_TOKEN=11d1abfe47feb1850709b6c3ba371d1f34509282", "sonar-token"),
        ("SOURCEGRAPH_TOKEN=6d2FabeB6ADd229Bc199FabA28fD3efb57dF0bD3", "sourcegraph-token"),
        ("sgp_local_d7dfFD43cF2503B1da673EB560aAa3e80f16FA42", "sourcegraph-token"),
        ("STRIPE_KEY=sk_prod_51OuEMLAlTWGaDypquDn9aZigaJOsa9NR1w1BxZXs9J", "stripe-secret-key"),
        ("DATABRICKS_HOST=x dapic06ed3bb5aa7ad18a4bcd39680cb587d", "databricks-token"),
        ("s-s4t2ud-" + "d91c558a2ba6b47f" * 4, "intra42-client-secret"),
        ("A3-ASWWYB-798JRYLJVD4-23DC2-86TVM-H43EB", "1password-secret-key"),
        ("https://cafeb4b3:d3adb33f@enterprise.contribsys.com/", "sidekiq-secret"),
        ("harness: pat.jSYomKKXDDF4e1WF0_zm0m.hEqFvmTCSVH2oBbDUK8gaLnt.FFOxrjyu3rC0yfLbdeFk", None),
    ],
)
def test_vendor_shapes(text: str, rule: str | None) -> None:
    found = _found(text + "\n", "settings.env")
    assert found, text
    if rule is not None:
        assert found[0][0] == rule
        assert found[0][1] in text and len(found[0][1]) >= 16


@pytest.mark.parametrize(
    "text",
    [
        "JFROG_URL=https://acme.jfrog.io/artifactory/api/npm/npm-remote",
        "JIRA_PROJECT_KEY=PLATFORM",
        "CONFLUENT_CLUSTER_ID=lkc-9q8w7e",
        "SONAR_PROJECT_KEY=acme_payments-service",
        "SOURCEGRAPH_COMMIT_SHA=" + "0123456789abcdef" * 2 + "01234567",
        "VAULT_ADDR=https://vault.internal:8200",
        "TWITTER_HANDLE=acme_engineering",
        "ASANA_WORKSPACE_ID=1204567890123456",
        # A vendor's name across a word's or a hump's edge is no vendor.
        "sumOfWeights = 7Hq2LmX9pR4tKv8ZcW3nB6yJ1sDf5GaQ0eUiOoPlKjHgFdSaMnBvCxZq2W3E4R5T;",
        'SetSysctl = "q7k2m9x4p1z8w3r6t5y0b2n4"',
        # A fingerprinted asset's digest after `.ico-`, no Infracost key.
        'ICON_URL="https://cdn.example.com/img/favicon.ico-3f9a8c1e7b2d4a6f9e0c1b3a5d7f9e2c.png"',
    ],
)
def test_vendor_shapes_leave_metadata_alone(text: str) -> None:
    assert _found(text + "\n", "settings.env") == []


@pytest.mark.parametrize(
    "unit",
    [
        "kind: Secret\ndata:\n" + "  k: " + "A" * 300 + "\n",
        "data:\n" + ("  " + "x" * 400 + "\n") * 3 + "kind: Secret\n",
        '"kind": "Secret", "data": {' + '"k": "v", ' * 40,
        "curl " + "a " * 200 + "\\\n",
        "curl -u " + "user" * 100 + " -H 'X-Api-Key: " + "k" * 300,
        "MIIJzwIBAzCC" + "A" * 500 + "\n" + ("B" * 64 + "\n") * 5,
        "helm registry login " + "-u x " * 200 + "--password",
    ],
)
def test_structure_rules_are_linear(unit: str) -> None:
    text = (unit * (300_000 // len(unit) + 1))[:300_000]
    with time_limit(60):
        for path in ("notes.md", "events.jsonl"):
            started = processor_time()
            redact_text(text, path=path, cache=None)
            assert processor_time() - started < 20


def test_public_app_keys_stay_and_laravel_app_key_goes() -> None:
    """Dropbox and Pusher app keys are public (the apps' client code ships them): only
    Laravel's bare `APP_KEY` is a framework secret; the secrets paired with those keys go."""
    rng = random.Random(43)
    lower = string.ascii_lowercase + string.digits
    for text in (
        f"DROPBOX_APP_KEY={gate_corpus.pick(rng, lower, 15)}",
        f"dropbox.app_key = '{gate_corpus.pick(rng, lower, 15)}'",
        f"const dropboxAppKey = '{gate_corpus.pick(rng, lower, 15)}';",
        f"PUSHER_APP_KEY={gate_corpus.pick(rng, gate_corpus.HEX, 20)}",
        f"MIX_PUSHER_APP_KEY={gate_corpus.pick(rng, gate_corpus.HEX, 20)}",
        f'VITE_PUSHER_APP_KEY="{gate_corpus.pick(rng, gate_corpus.HEX, 20)}"',
        f"PUSHER_KEY={gate_corpus.pick(rng, gate_corpus.HEX, 20)}",
    ):
        assert _found(text + "\n", "settings.env") == [], text
        quoted = json.dumps({"type": "tool_result", "content": f"$ cat .env\n{text}\nX=1\n"})
        assert _found(quoted + "\n", "events.jsonl") == [], text
    laravel = "base64:" + _b64(rng, 32)
    plain = gate_corpus.pick(rng, gate_corpus.ALNUM, 32)
    pusher_secret = gate_corpus.pick(rng, gate_corpus.HEX, 20)
    for text, rule, secret in (
        (f"APP_NAME=Demo\nAPP_KEY={laravel}\n", "framework-secret-key", laravel),
        (f"APP_KEY={plain}\n", "framework-secret-key", plain),
        (f'laravel:\n  app_key: "{laravel}"\n', "framework-secret-key", laravel),
        (f"PUSHER_APP_SECRET={pusher_secret}\n", "secret-assignment", pusher_secret),
    ):
        assert _found(text, "settings.env") == [(rule, secret)], text


def test_twilio_account_sids_stay_and_twilio_credentials_go() -> None:
    """An account SID (`AC` + 32 hex) names an account: detect-secrets' Twilio plugin reports
    it, the gate does not. API keys, their secrets and auth tokens are redacted."""
    rng = random.Random(44)
    sid = "AC" + gate_corpus.pick(rng, gate_corpus.HEX, 32)
    api_key = "SK" + gate_corpus.pick(rng, gate_corpus.HEX, 32)
    auth_token = gate_corpus.pick(rng, gate_corpus.HEX, 32)
    api_secret = gate_corpus.pick(rng, gate_corpus.ALNUM, 32)
    for text in (
        f"TWILIO_ACCOUNT_SID={sid}",
        f'twilio_secret_ref: "vault:twilio" account_sid: "{sid}"',
        f"twilio secret: see https://api.twilio.com/2010-04-01/Accounts/{sid}/Messages.json",
        f"twilio secret: GET https://api.twilio.com/2010-04-01/Accounts/{sid}.json",
        f"The Twilio api_key belongs to account {sid}.",
    ):
        assert _found(text + "\n", "settings.env") == [], text
        quoted = json.dumps({"type": "tool_result", "content": text})
        assert _found(quoted + "\n", "events.jsonl") == [], text
    env = (
        f"TWILIO_ACCOUNT_SID={sid}\nTWILIO_AUTH_TOKEN={auth_token}\n"
        f"TWILIO_API_KEY={api_key}\nTWILIO_API_SECRET={api_secret}\n"
    )
    assert _found(env, "settings.env") == [
        ("twilio-auth-token", auth_token),
        ("twilio-api-key", api_key),
        ("secret-assignment", api_secret),
    ]
    redacted = redact_text(env, path="settings.env", cache=ResultCache()).text
    assert sid in redacted
    assert auth_token not in redacted and api_key not in redacted and api_secret not in redacted
    # What detect-secrets alone reports stays reported unless it is exactly an account SID.
    lower = string.ascii_lowercase + string.digits
    other_key = "SK" + gate_corpus.pick(rng, lower, 32)
    longer = sid + gate_corpus.pick(rng, gate_corpus.HEX, 2)
    for text, secret in (
        (f"Twilio key {other_key} was shown once.", other_key),
        (f"TWILIO_ACCOUNT_SID={longer}", longer),
    ):
        assert _found(text + "\n", "settings.env") == [("ds-twilio-api-key", secret)], text


def test_npm_and_yarn_tokens_set_on_the_command_line() -> None:
    """`npm config set //registry/:_authToken TOKEN` (a blank, not `=`), `npm set`, pnpm's and
    yarn 1's, yarn 2's `npmAuthToken`: the token only, raw and in a transcript."""
    token = gate_corpus.pick(random.Random("npm-config"), gate_corpus.ALNUM, 36)
    for text in (
        f"npm config set //registry.example.com/:_authToken {token}",
        f"npm set //npm.pkg.github.com/:_authToken '{token}'",
        f'pnpm config set "//registry.corp/:_authToken" "{token}"',
        f"yarn config set npmAuthToken {token}",
        f"yarn config set -H 'npmRegistries[\"//npm.corp\"].npmAuthToken' {token}",
    ):
        redacted_everywhere(text, token, "npm-auth-token")
    for text in (
        "npm config set registry https://registry.npmjs.org/",
        "npm config set //registry.example.com/:_authToken $NPM_TOKEN",
        'npm config set //registry.example.com/:_authToken "${NPM_TOKEN}"',
        "npm config get //registry.example.com/:_authToken",
        "npm config delete //registry.example.com/:_authToken",
        "yarn config set npmRegistryServer https://npm.corp.example.com",
        "yarn config set npmAuthToken <your-token>",
    ):
        _untouched_everywhere(text)


def test_authorization_and_cookie_headers_outside_curl() -> None:
    """An HTTP dump's `Authorization: token <40 hex>` (a GitHub OAuth token, which a digest's
    shape excused), and each generated value of a `Cookie:` or `Set-Cookie:` header."""
    rng = random.Random("headers")
    hex_token = gate_corpus.pick(rng, gate_corpus.HEX, 40)
    redacted_everywhere(f"Authorization: token {hex_token}\n", hex_token, "authorization-header")
    redacted_everywhere(f"> authorization: Token {hex_token}\n", hex_token, "authorization-header")
    session = gate_corpus.pick(rng, gate_corpus.ALNUM, 48)
    csrf = gate_corpus.pick(rng, gate_corpus.ALNUM, 32)
    for text in (
        f"< Set-Cookie: session={session}; Path=/; HttpOnly\n",
        f"Set-Cookie: __Host-sid={session}; Secure; SameSite=Lax\n",
        f"Cookie: sessionid={session}; theme=dark\n",
    ):
        redacted_everywhere(text, session, "cookie-value")
    redacted = redact_text(f"Cookie: sessionid={session}; csrftoken={csrf}\n").text
    assert session not in redacted and csrf not in redacted
    assert (
        redacted
        == "Cookie: sessionid=[REDACTED:cookie-value#1]; csrftoken=[REDACTED:cookie-value#2]\n"
    )
    for text in (
        "< Set-Cookie: theme=dark; Path=/; Max-Age=31536000; Expires=Wed, 21 Oct 2026 07:28:00 GMT",
        "Cookie: lang=en-US; consent=accepted",
        "Set-Cookie: id=a3fb; HttpOnly",
        "Authorization: token $GITHUB_TOKEN",
        "Authorization: token 0000000000000000000000000000000000000000",
        "Set the Authorization: Token header to your access token.",
    ):
        _untouched_everywhere(text)


def test_http_client_auth_tuples_and_basic_auth_objects() -> None:
    """`requests`/`httpx` `auth=('user', 'SECRET')`, `HTTPBasicAuth('user', 'SECRET')`,
    `HTTPDigestAuth`, `httpx.BasicAuth`: the password literal only."""
    pw = "Jr5" + gate_corpus.pick(random.Random("http-auth"), gate_corpus.ALNUM, 13)
    for text in (
        f"requests.get(url, auth=('admin', '{pw}'))",
        f'httpx.get(url, auth=("admin", "{pw}"), timeout=5)',
        f"session.auth = ('ci-bot', '{pw}')",
        f"r = requests.post(u, auth=HTTPBasicAuth('admin', '{pw}'))",
        f"auth = HTTPDigestAuth('admin', '{pw}')",
        f"client = httpx.Client(auth=httpx.BasicAuth(username='admin', password='{pw}'))",
        f'aiohttp.BasicAuth("admin", "{pw}")',
    ):
        redacted_everywhere(text, pw, "http-auth-password")
    for text in (
        "requests.get(url, auth=(user, password))",
        "requests.get(url, auth=('admin', os.environ['API_PASSWORD']))",
        "HTTPBasicAuth(settings.USER, settings.PASSWORD)",
        "requests.get(url, auth=('admin', ''))",
        "requests.get(url, auth=('user', 'password'))",
        "requests.get(url, auth=('admin', '$API_PASSWORD'))",
    ):
        _untouched_everywhere(text)


def test_pgpass_lines() -> None:
    """`.pgpass`'s `host:port:database:user:password`: the last field only."""
    pw = "Jr5" + gate_corpus.pick(random.Random("pgpass"), gate_corpus.ALNUM, 13)
    for text in (
        f"db.prod:5432:app:app:{pw}\n",
        f"*:*:*:postgres:{pw}\n",
        f"10.0.0.4:6432:*:deploy:{pw}\n",
        f'echo "db-primary.internal:25060:defaultdb:doadmin:{pw}" >> ~/.pgpass\n',
        f"$ cat ~/.pgpass\nreplica.corp:5439:warehouse:etl:{pw}\n",
    ):
        redacted_everywhere(text, pw, "pgpass-password")
    for text in (
        "psql -h db.prod -p 5432 -U app",
        "localhost:5432:app",
        "db.prod:5432:app:app:$PGPASSWORD",
        "db.prod:5432:app:app:*",
        "src/db.py:5432:    x = a:b:c",
        "10:30:45:123:456",
        "hostname:port:database:username:password",
    ):
        _untouched_everywhere(text)


def test_pgpass_lines_a_tool_printed_keep_no_password() -> None:
    """`cat ~/.pgpass` in a transcript: its last line ends the output's JSON string, and a
    tool's JSON output escapes its line breaks twice; neither ends the password's reading."""
    first, last = "Jr5Xk9mQ2vLp8rT4", "Jr5Qm7zP4kLw9xR2"
    printed = f"localhost:5432:appdb:app:{first}\ndb.internal:5432:*:admin:{last}"
    for output in (printed, printed + "\n"):
        for content in (output, [{"type": "text", "text": output}], json.dumps({"stdout": output})):
            text = json.dumps({"type": "tool_result", "content": content}) + "\n"
            redacted = redact_text(text, path="events.jsonl", cache=None).text
            assert first not in redacted and last not in redacted, redacted
            assert redacted.count("[REDACTED:pgpass-password#") == 2
    # A string's only line, closed as JSON and Python close one, is a key, not a tool's output.
    for text in (
        '{"key": "session:5432:user:1234:active"}',
        'CACHE_KEY = "lock:*:job:nightly:owner",',
        'keys: ["ns:*:pod:web:ready"]',
    ):
        assert redact_text(text + "\n", path="notes.txt", cache=None).text == text + "\n"


def test_secrets_set_through_a_cli() -> None:
    """`gh secret set NAME --body SECRET`/`-b`, `echo SECRET | vercel env add NAME`, `fly
    secrets set NAME=SECRET` and `heroku config:set NAME=SECRET` of a credential's name (a
    value the environment rules found too plain: `DB_PASSWORD=Summer2024x`, lower case)."""
    rng = random.Random("setters")
    token = gate_corpus.pick(rng, gate_corpus.ALNUM, 40)
    for text in (
        f"gh secret set DEPLOY_KEY --body '{token}'",
        f"gh secret set DEPLOY_KEY -b {token} --repo acme/app",
        f'gh secret set NPM_TOKEN -b"{token}"',
        f"echo -n '{token}' | vercel env add API_TOKEN production",
        f"printf '%s' {token} | npx vercel env add STRIPE_SECRET_KEY preview",
    ):
        redacted_everywhere(text, token, "cli-password")
    for text, secret in (
        ("flyctl secrets set db_password=Summer2024x -a app", "Summer2024x"),
        ("fly secrets set --stage DATABASE_PASSWORD=hunter2Summer", "hunter2Summer"),
        ("heroku config:set -a app smtp_password=winter2025", "winter2025"),
    ):
        redacted_everywhere(text, secret, "cli-password")
    for text in (
        "gh secret set DEPLOY_KEY < key.txt",
        'gh secret set DEPLOY_KEY --body "$DEPLOY_KEY"',
        "gh secret list",
        "gh variable set REGION --body eu-west-1",
        "echo $TOKEN | vercel env add API_TOKEN production",
        "echo yes | vercel env add REGION production",
        "fly secrets set DB_PASSWORD=$DB_PASSWORD",
        "heroku config:set WEB_CONCURRENCY=3 LOG_LEVEL=debug",
        "heroku config:set DB_PASSWORD_FILE=/run/secrets/db",
    ):
        _untouched_everywhere(text)


def test_powershell_secure_strings_and_fish_exports() -> None:
    """`ConvertTo-SecureString 'SECRET' -AsPlainText` (or the string piped in) and fish's
    `set -x DB_PASSWORD SECRET` (`-gx`, `-Ux`, `--export`): the value only."""
    pw = "Jr5" + gate_corpus.pick(random.Random("ps-fish"), gate_corpus.ALNUM, 13)
    for text in (
        f"$pw = ConvertTo-SecureString '{pw}' -AsPlainText -Force",
        f'ConvertTo-SecureString -String "{pw}" -AsPlainText -Force',
        f"$s = '{pw}' | ConvertTo-SecureString -AsPlainText -Force",
        f"set -x DB_PASSWORD {pw}",
        f"set -gx API_TOKEN '{pw}'",
        f"set -Ux GITHUB_TOKEN {pw}",
        f"set --export --global db_password {pw}",
    ):
        redacted_everywhere(text, pw, "cli-password")
    for text in (
        "$pw = ConvertTo-SecureString $env:ADMIN_PASSWORD -AsPlainText -Force",
        "$pw = Read-Host -AsSecureString",
        "ConvertTo-SecureString $encrypted -Key $key",
        "set -x PATH $HOME/bin $PATH",
        "set -gx API_TOKEN (cat ~/.config/token)",
        "set -gx API_TOKEN $API_TOKEN",
        "set -x",
        "set -x DB_PASSWORD_FILE /run/secrets/db",
    ):
        _untouched_everywhere(text)


def test_archive_and_htpasswd_passwords_on_the_command_line() -> None:
    """`zip -P`, `unzip -P`, `7z a -pSECRET`, `openssl enc -k`, `htpasswd -b file user SECRET`:
    the value only, and only after these tools."""
    pw = "Jr5" + gate_corpus.pick(random.Random("archives"), gate_corpus.ALNUM, 13)
    for text in (
        f"zip -P {pw} secret.zip data.csv",
        f"zip -r -P '{pw}' backup.zip data/",
        f"unzip -P {pw} secret.zip",
        f"7z a -p{pw} archive.7z dir",
        f"7za x -p'{pw}' archive.7z -o/tmp/x",
        f"openssl enc -aes-256-cbc -salt -k {pw} -in a.tar -out a.tar.enc",
        f"htpasswd -b .htpasswd admin {pw}",
        f"htpasswd -bcB /etc/nginx/.htpasswd admin '{pw}'",
        f"htpasswd -nbB admin {pw} > users.txt",
        f"htpasswd -c -b -C 12 .htpasswd admin {pw}",
    ):
        redacted_everywhere(text, pw, "cli-password")
    for text in (
        "zip -r backup.zip data/",
        "zip -P $ZIP_PASSWORD secret.zip data.csv",
        "7z a -p archive.7z dir",
        "7z a archive.7z dir -mx=9",
        "gzip -P 4 file",
        "openssl enc -aes-256-cbc -kfile key.txt -in a -out b",
        "openssl s_client -connect host:443",
        "htpasswd -c .htpasswd admin",
        "htpasswd -B .htpasswd admin",
        "htpasswd -b .htpasswd admin $HTPASSWD",
    ):
        _untouched_everywhere(text)


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ('network={\n    ssid="HomeNet"\n    psk="Wifi2024Secure!"\n}\n', "Wifi2024Secure!"),
        ("[wifi-security]\nkey-mgmt=wpa-psk\npsk=Wifi2024Secure!\n", "Wifi2024Secure!"),
        ("psk=" + "3f8a9c1e7b" * 6 + "3f2a\n", "3f8a9c1e7b" * 6 + "3f2a"),
        ("wpa_passphrase HomeNet Wifi2024Secure! > wpa.conf\n", "Wifi2024Secure!"),
        ('wpa_passphrase "Home Net" "correct horse battery"\n', "correct horse battery"),
        ("nmcli dev wifi connect HomeNet password Wifi2024Secure!\n", "Wifi2024Secure!"),
        ("nmcli con modify home wifi-sec.psk 'Wifi 2024 Secure'\n", "Wifi 2024 Secure"),
        # A passphrase made of one piece said three times is a passphrase all the same.
        ("nmcli dev wifi connect home password hunter22hunter22hunter22\n", "hunter22" * 3),
        ('psk="abc123abc123abc123"\n', "abc123" * 3),
        ("wpa_passphrase HomeNet qwertyqwertyqwerty\n", "qwerty" * 3),
        ("psk=Ab1!Ab1!Ab1!\n", "Ab1!" * 3),
    ],
)
def test_a_wifi_networks_passphrase_is_redacted(text: str, secret: str) -> None:
    for content, path, unquote in framed(text):
        redacted = redact_text(content, path=path).text
        assert secret not in unquote(redacted), content
        assert "[REDACTED:wifi-password#1]" in redacted, content


@pytest.mark.parametrize(
    "text",
    [
        "key-mgmt=wpa-psk\n",
        "psk=$WIFI_PSK\n",
        'psk="your-passphrase"\n',
        "psk=/etc/NetworkManager/wifi.psk\n",
        "usage: wpa_passphrase ssid passphrase\n",
        'nmcli dev wifi connect HomeNet password "$WIFI_PASS"\n',
        "nmcli --ask dev wifi connect HomeNet\n",
        "psk=" * 50 + "\n",  # the key again, each one's value the next
        "psk=key=key=key=\n",  # the key's form repeated
        "psk=xxxxxxxxxxxx\n",  # one character over and over
    ],
)
def test_a_wifi_settings_reference_or_usage_stays(text: str) -> None:
    assert _found(text) == []


def test_a_value_a_workflow_masks_is_redacted_and_a_reference_stays() -> None:
    value = "Pz4Rt7Yu1Io3LkWq"
    redacted_everywhere(f'echo "::add-mask::{value}"\n', value, "masked-value")
    redacted_everywhere(f"::add-mask::{value}\n", value, "masked-value")
    for text in (
        'echo "::add-mask::$TOKEN"\n',
        'echo "::add-mask::${{ steps.login.outputs.token }}"\n',
        "The ::add-mask:: command hides a value in the log.\n",
    ):
        assert _found(text) == [], text


@pytest.mark.parametrize(
    "text",
    [
        '{"bearer": {"repo.example.org": "@@"}}\n',
        '{\n    "bearer": {\n        "repo.example.org": "@@"\n    }\n}\n',
        '{"gitlab-token": {"gitlab.example.org:8443": "@@"}}\n',
        '{"bearer": {"a.example.org": "Qw8eRt5yUi2oPa7s", "pkgs.example.com": "@@"}}\n',
    ],
)
def test_a_composer_auth_json_token_is_redacted_and_its_host_stays(text: str) -> None:
    """Composer's `auth.json` holds a token per host under `bearer` (and `github-oauth`,
    `gitlab-token`, `gitlab-oauth`): each token goes, each host stays."""
    token = "Xk9q2LmWp4TzR7vBn3Hc6Jd1"
    redacted_everywhere(text.replace("@@", token), token, "composer-auth-token")
    redacted = redact_text(text.replace("@@", token), path="auth.json").text
    assert ".example." in redacted and "Qw8eRt5yUi2oPa7s" not in redacted


@pytest.mark.parametrize(
    "text",
    [
        '{"bearer": {"repo.example.org": "${COMPOSER_TOKEN}"}}\n',
        '{"bearer": {"repo.example.org": "your-token-here"}}\n',
        '{"securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}}\n',
    ],
)
def test_a_composer_reference_or_an_openapi_scheme_stays(text: str) -> None:
    _untouched_everywhere(text)


@pytest.mark.parametrize(
    "text",
    [
        "<settingsSecurity>\n  <master>@@</master>\n</settingsSecurity>\n",
        "<settingsSecurity><master>@@</master></settingsSecurity>\n",
        "<master>set on 2026-03-11 @@</master>\n",
    ],
)
def test_a_maven_master_password_is_redacted(text: str) -> None:
    """`settings-security.xml`'s `<master>{…}</master>` decrypts every password of Maven's
    `settings.xml` with a key Maven builds in: it is as good as the password itself."""
    master = "{L+bX9REL8CAH/EkcFM4NPLUxjaEZ6nQ79feSk+xDxhE=}"
    redacted_everywhere(text.replace("@@", master), master, "xml-secret")


@pytest.mark.parametrize(
    "text", ["<branch><master>true</master></branch>\n", "<master>${env.MASTER}</master>\n"]
)
def test_a_master_element_of_no_encrypted_password_stays(text: str) -> None:
    _untouched_everywhere(text)
