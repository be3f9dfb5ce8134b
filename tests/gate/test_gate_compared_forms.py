"""Literals compared with a credential's name in the forms code and tests write them beyond
`==` and a plain name: a null-safe member (`req?.client_secret`), a test framework's
assertion (AVA's `t.is`, Hamcrest's `is(…)`, Jest's `toMatch`, RSpec's `be ==`), a literal
wrapped in its bytes or prefixed (`[]byte("…")`, `Buffer.from("…")`, `b"…"`) and a shell's
test with the literal first or its `case`. Each is redacted raw and as a transcript carries
it (a tool result's JSON string, a tool's JSON output quoted again); a comparison of such a
name with an ordinary literal stays as it is, as it does with the name first."""

from __future__ import annotations

import re

import pytest
from test_gate_code_syntax import _left_whole, _redacted
from test_gate_providers import framed

from stet_lsp.gate import ResultCache, redact_text

_TOKEN = "Xk9mQ2vLp8rT4wZ3nB"
_HEX = "d41d8cd98f00b204e9800998ecf8427e"
_PASSWORD = "Summer2024!"


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        (f'if ("{_TOKEN}" === req?.client_secret) {{\n', _TOKEN),
        (f"if ('{_TOKEN}' !== req.body?.apiKey) return res.sendStatus(401);\n", _TOKEN),
        (f'if ("{_HEX}" == user?.password) {{\n', _HEX),
        (f"if ('{_TOKEN}' === $user?->apiKey) {{\n", _TOKEN),
        (f'if (req?.client_secret === "{_TOKEN}") {{\n', _TOKEN),
        (f'if (user?.password == "{_PASSWORD}") {{\n', _PASSWORD),
        (f'if (!hmac.compare_digest(req?.token, "{_TOKEN}")) {{\n', _TOKEN),
        (f'if ("{_TOKEN}" == user!!.password) return true\n', _TOKEN),
        (f'if ("{_TOKEN}" === obj?.["apiKey"]) {{\n', _TOKEN),
    ],
)
def test_a_literal_compared_with_a_null_safe_member_is_found(text: str, secret: str) -> None:
    _redacted(text, secret)


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        (f'if (token?.trim() === "{_TOKEN}") {{\n', _TOKEN),
        (f'if (token.trim() == "{_TOKEN}") {{\n', _TOKEN),
        (f'if password.strip() == "{_PASSWORD}":\n', _PASSWORD),
        (f'if (apiKey.toLowerCase() === "{_HEX}") {{\n', _HEX),
        (f'if (req.body?.token?.trim().toLowerCase() !== "{_TOKEN}") {{\n', _TOKEN),
        (f'if (token!!.trim() == "{_TOKEN}") return true\n', _TOKEN),
        (f"if ($apiKey->trim() === '{_TOKEN}') {{\n", _TOKEN),
        (f'if ("{_TOKEN}" === token?.trim()) {{\n', _TOKEN),
    ],
)
def test_a_literal_compared_with_a_method_of_a_credential_is_found(text: str, secret: str) -> None:
    _redacted(text, secret)


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        (f't.is(token, "{_TOKEN}");\n', _TOKEN),
        (f't.is("{_TOKEN}", apiKey);\n', _TOKEN),
        (f"t.deepEqual(client_secret, '{_HEX}');\n", _HEX),
        (f't.not(password, "{_PASSWORD}");\n', _PASSWORD),
        (f'assertThat(token, is("{_TOKEN}"));\n', _TOKEN),
        (f'assertThat(apiKey, equalTo("{_TOKEN}"));\n', _TOKEN),
        (f'assertThat(secret, is(equalTo("{_HEX}")));\n', _HEX),
        (f'assertThat(token, Matchers.is("{_TOKEN}"));\n', _TOKEN),
        (f'assertThat(apiKey, CoreMatchers.equalTo("{_TOKEN}"));\n', _TOKEN),
        (f't.is(config.get("token"), "{_TOKEN}");\n', _TOKEN),
        (f'self.assertEqual(os.environ["API_KEY"], "{_HEX}")\n', _HEX),
        (f'XCTAssertEqual(token, "{_TOKEN}")\n', _TOKEN),
        (f'expect(token).toMatch("{_TOKEN}");\n', _TOKEN),
        (f'expect(passwordInput).toHaveValue("{_PASSWORD}");\n', _PASSWORD),
        (f'expect(headers.authToken).toContain("{_TOKEN}");\n', _TOKEN),
        (f'expect(token).to be == "{_TOKEN}"\n', _TOKEN),
        (f'expect(token).to match "{_TOKEN}"\n', _TOKEN),
        (f'expect(api_key).not_to eq("{_HEX}")\n', _HEX),
        (f'token.should.equal("{_TOKEN}");\n', _TOKEN),
        (f"password.should.not.eql('{_PASSWORD}');\n", _PASSWORD),
        (f'expect(token).to.equal("{_TOKEN}");\n', _TOKEN),
        (f'assertThat("the token is kept", token, is("{_TOKEN}"));\n', _TOKEN),
        (f'assertEquals("stored key", "{_HEX}", apiKey);\n', _HEX),
        (f'assertThat(token, `is`("{_TOKEN}"))\n', _TOKEN),
    ],
)
def test_a_literal_a_test_framework_compares_with_a_credential_is_found(
    text: str, secret: str
) -> None:
    _redacted(text, secret)


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        (
            f'if subtle.ConstantTimeCompare([]byte(token), []byte("{_TOKEN}")) != 1 {{\n',
            _TOKEN,
        ),
        (f'if !hmac.Equal([]byte(apiKey), []byte("{_HEX}")) {{\n', _HEX),
        (f'subtle.ConstantTimeCompare([]byte("{_TOKEN}"), []byte(token))\n', _TOKEN),
        (f'crypto.timingSafeEqual(Buffer.from(token), Buffer.from("{_TOKEN}"))\n', _TOKEN),
        (
            f"crypto.timingSafeEqual(Buffer.from(secret, 'utf8'), Buffer.from('{_HEX}', 'utf8'))\n",
            _HEX,
        ),
        (f'crypto.timingSafeEqual(Buffer.from("{_TOKEN}"), Buffer.from(apiKey))\n', _TOKEN),
        (f'if token == b"{_TOKEN}":\n', _TOKEN),
        (f'if api_key != f"{_TOKEN}":\n', _TOKEN),
        (f'if not hmac.compare_digest(token, b"{_TOKEN}"):\n', _TOKEN),
        (f'if not hmac.compare_digest(b"{_HEX}", secret):\n', _HEX),
        (f'if b"{_PASSWORD}" == password:\n', _PASSWORD),
        (
            f'subtle.ConstantTimeCompare([]byte(r.Header.Get("X-API-Key")), []byte("{_TOKEN}"))\n',
            _TOKEN,
        ),
        (
            f'crypto.timingSafeEqual(Buffer.from(req.headers["x-api-key"]), Buffer.from("{_HEX}"))\n',
            _HEX,
        ),
        (f'compare_digest(request.headers["X-Token"].encode(), b"{_TOKEN}")\n', _TOKEN),
        (f'if (token == R"({_TOKEN})") {{\n', _TOKEN),
        (f'if (apiKey != u8R"key({_HEX})key") {{\n', _HEX),
    ],
)
def test_a_wrapped_or_prefixed_literal_compared_with_a_credential_is_found(
    text: str, secret: str
) -> None:
    _redacted(text, secret)


def test_a_raw_string_compared_loses_what_it_holds_and_keeps_its_parentheses() -> None:
    text = f'if (token == R"({_TOKEN})") {{\n'
    for content, path, unquote in framed(text):
        shown = unquote(redact_text(content, path=path, cache=ResultCache()).text)
        assert re.fullmatch(r'if \(token == R"\(\[REDACTED:[^\]]+\]\)"\) \{\n', shown), shown


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        (f'if token in ("{_TOKEN}", "other"):\n', _TOKEN),
        (f'if api_key not in ["v2", "{_HEX}"]:\n', _HEX),
        (f"if password in {{'{_PASSWORD}'}}:\n", _PASSWORD),
        (f'if token in ("a1{_TOKEN}", b"{_TOKEN}"):\n', _TOKEN),
    ],
)
def test_a_literal_a_credential_is_tested_for_membership_in_is_found(
    text: str, secret: str
) -> None:
    _redacted(text, secret)


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        (f'if [ "{_TOKEN}" = "$TOKEN" ]; then\n', _TOKEN),
        (f'if [[ "{_TOKEN}" == "$API_KEY" ]]; then\n', _TOKEN),
        (f'if [ "{_HEX}" != "${{SECRET_KEY}}" ]; then\n', _HEX),
        (f'case "$TOKEN" in\n  "{_TOKEN}") echo ok ;;\nesac\n', _TOKEN),
        (f'case "${{API_KEY}}" in "{_HEX}") exit 0;; esac\n', _HEX),
        (f"case $DB_PASSWORD in\n  {_PASSWORD}) echo ok ;;\nesac\n", _PASSWORD),
        (f'if [ "{_TOKEN}" = "${{GITHUB_TOKEN:-}}" ]; then\n', _TOKEN),
        (f'test "{_TOKEN}" != "$API_KEY" && exit 1\n', _TOKEN),
        (f'case "${{TOKEN:-}}" in\n  "{_TOKEN}") echo ok ;;\nesac\n', _TOKEN),
        (f'case "$TOKEN" in\n  --help) usage ;;\n  "{_TOKEN}") echo ok ;;\nesac\n', _TOKEN),
        (
            f'case "$API_KEY" in\n  ghp_*) gh ;;\n  "a1{_HEX}") a; b ;;\n  "{_HEX}") echo ok ;;\nesac\n',
            _HEX,
        ),
        (f"case $DB_PASSWORD in -h|{_PASSWORD}) echo ok ;; esac\n", _PASSWORD),
        (f'case "$TOKEN" in\n  # the production token\n  "{_TOKEN}") echo ok ;;\nesac\n', _TOKEN),
        (
            f'case "$TOKEN" in\n  "v1.2.3") old ;;&\n  *) ;&\n  \'{_TOKEN}\') echo ok ;;\nesac\n',
            _TOKEN,
        ),
    ],
)
def test_a_shell_test_with_the_literal_first_is_found(text: str, secret: str) -> None:
    _redacted(text, secret)


@pytest.mark.parametrize(
    "code",
    [
        # a member of a credential's name, or a name that says what kind of value it holds
        'if ("RS256" === token?.alg) {\n',
        f'if ("{_TOKEN}" == token?.type) {{\n',
        'if (user?.tokenType == "Bearer") {\n',
        'if ("2.1.0" === req?.apiKeyVersion) {\n',
        # a method naming what else the name holds, one with arguments, a member compared
        f'if (token?.getType() == "{_TOKEN}") {{\n',
        f'if token.startswith("{_TOKEN}"):\n',
        f'if (token.type == "{_TOKEN}") {{\n',
        'if (secretVersion?.trim() === "text/html;charset=UTF-8") {\n',
        'if (tokenEndpoint?.trim() === "europe-west4") {\n',
        'if (secret.getName()?.trim() === "us-central1") {\n',
        'if ("europe-west4" === csrf_token_name?.trim()) {\n',
        'if (token?.trim() === "Bearer") {\n',
        # a test's expectations of such names and of what a value holds
        't.is(token.type, "Identifier");\n',
        "t.is(tokenizer.decode(ids), 'Hello2 world');\n",
        'assertThat(tokenType, is("Bearer"));\n',
        'assertThat(token.getAlgorithm(), is(equalTo("HS256")));\n',
        'expect(token).toContain("Bearer ");\n',
        'expect(token).toMatch("^[A-Za-z0-9]{32}$");\n',
        'expect(secretName).toHaveValue("db-password-2");\n',
        'expect(token.kind).to be == "StringLiteral2"\n',
        'expect(token.kind).to match "StringLiteral2"\n',
        'token.type.should.equal("Identifier2");\n',
        'expect(tokenType).to.equal("Bearer2x");\n',
        'assertThat("reason", token.getAlgorithm(), is("HS256"));\n',
        'assertThat(secretName, `is`("db-password-2"))\n',
        't.is(tokens.get("count"), "abc123X9");\n',
        'assertEquals(map.get("token_type"), "Bearer2x");\n',
        'compare_digest(request.headers["X-Token-Kind"].encode(), b"hmac2")\n',
        # a wrapped word, a formatted string's template
        'if subtle.ConstantTimeCompare([]byte(tokenType), []byte("Bearer")) == 1 {\n',
        'crypto.timingSafeEqual(Buffer.from(token_type), Buffer.from("Bearer"))\n',
        'if api_key == f"sk-{suffix}":\n',
        'if token == b"Bearer":\n',
        'if b"application/json" == token_type:\n',
        # a raw string or a membership test of ordinary words
        'if (tokenType == R"(application/json)") {\n',
        'if (accessKey.status == R"(0.8.22-rc2)") {\n',
        'if token_type in ("Bearer2", "Basic2x"):\n',
        'if token.alg in ("HS256", "RS256"):\n',
        'if secret_name in ["db-password-2"]:\n',
        # a shell's test of a name that holds no credential, a mapping's entry
        'if [ "v1.2.3" = "$TOKEN_VERSION" ]; then\n',
        'if [ "production" = "$SECRET_BACKEND" ]; then\n',
        'if [ "us-east-1" = "$AWS_REGION" ]; then\n',
        'case "$TOKEN_TYPE" in\n  "Bearer2") echo ok ;;\nesac\n',
        'case "$PASSWORD_MODE" in\n  file) read_file ;;\nesac\n',
        'case "$TOKEN" in\n  ghp_*) echo github ;;\nesac\n',
        'case "$TOKEN_TYPE" in\n  basic) b ;;\n  "Bearer2") echo ok ;;\nesac\n',
        'case "$TOKEN" in\n  --help) usage ;;\n  ghp_*|"v1.2.3") echo ok ;;\nesac\n',
        f'case "$TOKEN" in\n  a) x\nesac\ncase "$MODE" in\n  b) y ;;\n  "{_TOKEN}") z ;;\nesac\n',
        '"api_token" = "${var.token}"\n',
        'tags = { "Secret1x" = "${var.token}" }\n',
        # a Nix attribute set naming its values by expansions
        '  "registry-1.docker.io" = "${password}";\n',
        '  "oauth2-proxy" = "${clientSecret}";\n',
        '  "X-Api-Key-2" = "${apiKey}";\n',
        # a template literal with a field is no literal
        "t.is(token, `v2-${id}`);\n",
        "t.is(`${prefix}-2abc`, token);\n",
        "assertThat(token, is(`${prefix}2x`));\n",
    ],
)
def test_an_ordinary_literal_compared_so_stays(code: str) -> None:
    _left_whole(code)
