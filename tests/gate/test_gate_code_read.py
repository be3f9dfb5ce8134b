"""Code an agent reads, as libraries write it (each line from a TypeScript, JavaScript or
Python library on this machine's path, where the gate redacted a name or an expression): a
name whose credential word is part of another word (`Tokenizer`, `Passthrough`), a name of
written words with short ones among them (`endTagInSelectInTable`), an expression's opening
(`(__spec__.parent`), a format string's positional fields, a type or a name compared or
assigned, a regular expression's group, code's text (a private class's name, a style, markup,
a special token). Each is checked raw and as a transcript carries it; the secrets written in the same places are still found, and so is
a literal compared with a credential's name."""

from __future__ import annotations

import pytest
from test_gate_code_syntax import _left_whole, _redacted
from test_gate_providers import framed

from stet_lsp.gate import ResultCache, redact_text
from stet_lsp.gate.generated import reads_generated


@pytest.mark.parametrize(
    "code",
    [
        # parse5's tree builder: a name of words, `In` among them, and its function
        "_[IN_SELECT_IN_TABLE_MODE][Tokenizer.END_TAG_TOKEN] = endTagInSelectInTable;\n"
        "function endTagInSelectInTable(p, token) {\n",
        # names of written words under a name holding `key` or `header` (awscli, email)
        "            src_key='EmrManagedMasterSecurityGroup',\n",
        "MalformedHeaderDefect = MissingHeaderBodySeparatorDefect\n",
    ],
)
def test_a_name_of_written_words_is_no_value(code: str) -> None:
    _left_whole(code)


@pytest.mark.parametrize(
    "code",
    [
        "\t\tprivate readonly _reportTokenizationTime: (timeMs: number, lineLength: number)"
        " => void,\n",
        "\t\tprivate readonly _createBackgroundTokenizer: ((textModel: ITextModel) => void),\n",
        "type InternalPassthroughApis = Omit<ITerminalApi, 'buffer' | 'parser'>;\n",
        "\t\tpassedOptions: [...state.passedOptions, option],\n",
        'TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL = "textDocument/semanticTokens/full"\n',
        # sympy's muscle model: the name of a class, found once, stood on 29 lines
        "            fiber_force_length_passive=FiberForceLengthPassiveDeGroote2016,\n",
    ],
)
def test_a_credential_word_inside_another_word_names_no_credential(code: str) -> None:
    _left_whole(code)


@pytest.mark.parametrize(
    "code",
    [
        # pydantic's lazy imports: the one `Secret…` entry made `(__spec__.parent` a value
        # found once, and so redacted on each of its 144 lines
        "_dynamic_imports = {\n"
        "    'SecretStr': (__spec__.parent, '.types'),\n"
        "    'BaseModel': (__spec__.parent, '.main'),\n"
        "}\n",
        "password = password + b'\\x00' * (blocksize - len(password))\n",
        "  if(typeof strict === 'string') {\n    password = strict;\n  }\n",
    ],
)
def test_an_expression_after_a_credentials_name_is_no_value(code: str) -> None:
    _left_whole(code)


@pytest.mark.parametrize(
    "code",
    [
        "    UnexpectedToken: 'Unexpected token %0',\n",
        "        auth_token_config = '//{}{}:_authToken'.format(\n",
        "    key_or_pass = r'(?:key|pwd|password|pass|token)'\n",
    ],
)
def test_a_format_string_or_a_pattern_is_no_value(code: str) -> None:
    _left_whole(code)


@pytest.mark.parametrize(
    "code",
    [
        "  if (!callback && !hash && typeof password === 'function') {\n",
        # words compared with a token's name: a lexer's states and kinds (Jinja's)
        '                        elif token == "#bygroup":\n',
        '        if token.type == "IDENTIFIER":\n',
        '    if token_kind != "string_literal":\n',
        '        elif tok.type != "endfor":\n',
        '        if (token.equals("IDENT")) {\n',
        '        self.assertEqual(token.type, "IDENTIFIER")\n',
        '        self.assertEqual(tokens, "hello world")\n',
        '      if (scheme.apiKeyLocation !== "header") {\n',
        'export const apiKeyAuthenticationPolicyName = "apiKeyAuthenticationPolicy";\n',
        # the same with the literal first, and a test's expectations of such names
        'if "Bearer" == token_type:\n',
        '        if ("Bearer".equalsIgnoreCase(tokenType)) {\n',
        '        if "IDENTIFIER" == token.type:\n',
        '    expect(token.type).toBe("Identifier");\n',
        '    expect(tokens).toEqual(["a", "b"]);\n',
        '    assert.Equal(t, "Bearer", tokenType)\n',
        '    assert.equal(token.kind, "Punctuator");\n',
        # a call's or an element's value, and names the assignments' anchors do not read
        'assert "Hello,world2" == tokenizer.decode([15496, 11, 995])\n',
        'assertEquals("user-123", tokenService.getSubject(jwt));\n',
        'if ("Qwen2.5-7B" == token.get("typ")) {\n',
        'assert "a94a8fe5ccb19ba61c4c0873d391e987982fbbd3" == sha1_password(pw)\n',
        'if ("RSA-OAEP-256" == encryptionKey.alg) {\n',
        'if ("claude-3-opus".equals(signingKey.alg)) {\n',
    ],
)
def test_a_type_test_or_a_name_of_a_credential_is_no_value(code: str) -> None:
    _left_whole(code)


@pytest.mark.parametrize(
    "code",
    [
        # a string annotation naming a private class (cryptography's OpenSSL backend)
        '    backend: "Backend", private_key: "_EllipticCurvePrivateKey", data: bytes\n',
        '    def __init__(self, private_key: "_RSAPrivateKey") -> None:\n',
        # terminal styles (pygments, IPython), markup in a doctest (html5lib)
        '    Token.Comment: "italic #A3AAB2",\n',
        "            Token.PromptNum: '#ansibrightgreen bold',\n",
        ">>> token_stream = parse('<html><body><p>Hi!</p></body></html>')\n",
        "            Token.Prompt: '#ansibrightgreen',\n",
        # a language model's special tokens, in code and in a tokenizer's configuration
        'if token == "<|im_start|>":\n',
        '{"bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>"}\n',
        '  "pad_token": "<|reserved_special_token_247|>",\n',
        "    style = Style.from_dict({'bottom-toolbar': 'bg:#ffffff #000000'})\n",
        '  "eos_token": "<\uff5cend\u2581of\u2581sentence\uff5c>",\n',
        # a docstring's argument and its type (rich's console), a list comprehension
        "            password: (bool, optional): Hide typed text. Defaults to False.\n",
        "        self.secrets_paths: list[Path] = [Path(p).expanduser().resolve() for p in paths]\n",
        # a comparison is no connection string's `password=` (CPython's test_smtplib)
        "        self._authenticated(user, password == sim_auth[1])\n",
        "    return password === confirmPassword;\n",
        "  if (password == other) return;\n",
    ],
)
def test_code_text_is_no_value(code: str) -> None:
    _left_whole(code)


# A literal of 264 characters written before the name: read as far back as 400.
_LONG = "Xk9mQ2vLp8rT4wZ3nB7cE1" * 12


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ('if (password === "hunter2Summer") {\n', "hunter2Summer"),
        ('if (password !== "Xk9mQ2vLp8rT4wZ3nB") {\n', "Xk9mQ2vLp8rT4wZ3nB"),
        # a literal compared with a credential's name, as one assigned to it is judged
        ('if session_token == "UStPKR0CsTy4Q":\n', "UStPKR0CsTy4Q"),
        ("if (apiKey !== 'Xk9mQ2vLp8rT4wZ3nB') return res.status(401);\n", "Xk9mQ2vLp8rT4wZ3nB"),
        ('if token != "d41d8cd98f00b204e9800998ecf8427e" {\n', "d41d8cd98f00b204e9800998ecf8427e"),
        ('if req.headers["x-api-token"] == "Xk9mQ2vLp8rT4wZ3nB":\n', "Xk9mQ2vLp8rT4wZ3nB"),
        ('assert webhookSecret === "whk9mQ2vLp8rT4wZ3nB7"\n', "whk9mQ2vLp8rT4wZ3nB7"),
        ('if os.getenv("API_TOKEN") == "Xk9mQ2vLp8rT4wZ3nB":\n', "Xk9mQ2vLp8rT4wZ3nB"),
        ('if r.Header.Get("X-Api-Token") != "Xk9mQ2vLp8rT4wZ3nB" {\n', "Xk9mQ2vLp8rT4wZ3nB"),
        ('if token.strip() == "Xk9mQ2vLp8rT4wZ3nB":\n', "Xk9mQ2vLp8rT4wZ3nB"),
        ('if (!apiKey.equalsIgnoreCase("Xk9mQ2vLp8rT4wZ3nB")) {\n', "Xk9mQ2vLp8rT4wZ3nB"),
        ('if not hmac.compare_digest(token, "Xk9mQ2vLp8rT4wZ3nB"):\n', "Xk9mQ2vLp8rT4wZ3nB"),
        ("if (hash_equals($apiKey, 'Xk9mQ2vLp8rT4wZ3nB')) {\n", "Xk9mQ2vLp8rT4wZ3nB"),
        ('        self.assertEqual(api_token, "Xk9mQ2vLp8rT4wZ3nB")\n', "Xk9mQ2vLp8rT4wZ3nB"),
        ('    assert_eq!(token, "Xk9mQ2vLp8rT4wZ3nB");\n', "Xk9mQ2vLp8rT4wZ3nB"),
        # the literal first, a test's expectation, Lua's `~=`, a shell's test of `${NAME}`
        ('if "Xk9mQ2vLp8rT4wZ3nB" == token:\n', "Xk9mQ2vLp8rT4wZ3nB"),
        ("if ('Xk9mQ2vLp8rT4wZ3nB' !== this.apiToken) {\n", "Xk9mQ2vLp8rT4wZ3nB"),
        ('if ("Xk9mQ2vLp8rT4wZ3nB".equals(apiKey)) {\n', "Xk9mQ2vLp8rT4wZ3nB"),
        ('assert "UStPKR0CsTy4Q" == os.getenv("API_TOKEN")\n', "UStPKR0CsTy4Q"),
        ('if "Xk9mQ2vLp8rT4wZ3nB" == req.headers["x-api-token"]:\n', "Xk9mQ2vLp8rT4wZ3nB"),
        ('if not hmac.compare_digest("Xk9mQ2vLp8rT4wZ3nB", token):\n', "Xk9mQ2vLp8rT4wZ3nB"),
        ('if (strcmp("Xk9mQ2vLp8rT4wZ3nB", $password) == 0) {\n', "Xk9mQ2vLp8rT4wZ3nB"),
        ('expect(token).toBe("Xk9mQ2vLp8rT4wZ3nB");\n', "Xk9mQ2vLp8rT4wZ3nB"),
        ("expect(headers['X-Api-Key']).not.toEqual('Xk9mQ2vLp8rT4wZ3nB');\n", "Xk9mQ2vLp8rT4wZ3nB"),
        ('expect(api_key).to eq "Xk9mQ2vLp8rT4wZ3nB"\n', "Xk9mQ2vLp8rT4wZ3nB"),
        ('if token ~= "Xk9mQ2vLp8rT4wZ3nB" then\n', "Xk9mQ2vLp8rT4wZ3nB"),
        ('if [ "${API_TOKEN}" = "Xk9mQ2vLp8rT4wZ3nB" ]; then\n', "Xk9mQ2vLp8rT4wZ3nB"),
        # test frameworks' and languages' comparing calls, either order
        ('assert.Equal(t, "Xk9mQ2vLp8rT4wZ3nB", token)\n', "Xk9mQ2vLp8rT4wZ3nB"),
        ('require.Equal(s.T(), apiKey, "Xk9mQ2vLp8rT4wZ3nB")\n', "Xk9mQ2vLp8rT4wZ3nB"),
        ('assert.strictEqual(token, "Xk9mQ2vLp8rT4wZ3nB");\n', "Xk9mQ2vLp8rT4wZ3nB"),
        ('Assert.AreEqual("Xk9mQ2vLp8rT4wZ3nB", secretKey);\n', "Xk9mQ2vLp8rT4wZ3nB"),
        ('if (string.Equals(token, "Xk9mQ2vLp8rT4wZ3nB")) {\n', "Xk9mQ2vLp8rT4wZ3nB"),
        ('if (Objects.equals("Xk9mQ2vLp8rT4wZ3nB", apiKey)) {\n', "Xk9mQ2vLp8rT4wZ3nB"),
        ('assertEquals("Xk9mQ2vLp8rT4wZ3nB", token);\n', "Xk9mQ2vLp8rT4wZ3nB"),
        ("if ('Xk9mQ2vLp8rT4wZ3nB' === $this->apiKey) {\n", "Xk9mQ2vLp8rT4wZ3nB"),
        ('if "Xk9mQ2vLp8rT4wZ3nB"  == token:\n', "Xk9mQ2vLp8rT4wZ3nB"),
        ('if "' + _LONG + '" == token:\n', _LONG),
        (
            'expect(localStorage.getItem("token")).toBe("Xk9mQ2vLp8rT4wZ3nB");\n',
            "Xk9mQ2vLp8rT4wZ3nB",
        ),
        ('expect(getToken()).resolves.toBe("Xk9mQ2vLp8rT4wZ3nB");\n', "Xk9mQ2vLp8rT4wZ3nB"),
        ('expect(token).to.equal("Xk9mQ2vLp8rT4wZ3nB");\n', "Xk9mQ2vLp8rT4wZ3nB"),
        ('assertThat(apiKey).isEqualTo("Xk9mQ2vLp8rT4wZ3nB");\n', "Xk9mQ2vLp8rT4wZ3nB"),
        ('token shouldBe "Xk9mQ2vLp8rT4wZ3nB"\n', "Xk9mQ2vLp8rT4wZ3nB"),
        ('EXPECT_EQ(token, "Xk9mQ2vLp8rT4wZ3nB");\n', "Xk9mQ2vLp8rT4wZ3nB"),
        ('$this->assertSame("Xk9mQ2vLp8rT4wZ3nB", $apiKey);\n', "Xk9mQ2vLp8rT4wZ3nB"),
        ('if ("Xk9mQ2vLp8rT4wZ3nB".Equals(password)) {\n', "Xk9mQ2vLp8rT4wZ3nB"),
        ('if (client_secret.Equals("Xk9mQ2vLp8rT4wZ3nB")) {\n', "Xk9mQ2vLp8rT4wZ3nB"),
        ('if strings.EqualFold(password, "Xk9mQ2vLp8rT4wZ3nB") {\n', "Xk9mQ2vLp8rT4wZ3nB"),
        ('token = "#Xk9mQ2vLp8rT"\n', "#Xk9mQ2vLp8rT"),
        ("API_TOKEN = '#fptvlapfqpyydwh'\n", "#fptvlapfqpyydwh"),
        ('{"password": "#silvermountain"}\n', "#silvermountain"),
        ('password = "<|Xk9mQ2vLp8|>"\n', "<|Xk9mQ2vLp8|>"),
        # what follows code's opening is judged too; a private name under a secret's name
        ("Password: <b>Xk9mQ2vLp8rT4wZ3nB</b>\n", "Xk9mQ2vLp8rT4wZ3nB"),
        ('token = "[Orange(x)DBzHXes3UmeihfhYxz"\n', "DBzHXes3UmeihfhYxz"),
        ('x_token = "<|lightning_baseball85|>"\n', "lightning_baseball85"),
        ('password = "<|Summer2024!|>"\n', "Summer2024!"),
        ('password = "_CorrectHorseBatteryStaple"\n', "_CorrectHorseBatteryStaple"),
        ("const secret = '_FalconEagleBattery';\n", "_FalconEagleBattery"),
        ('token = "#a3f2b1 #ffe012"\n', "#a3f2b1 #ffe012"),
        # secrets in the shapes of code's text
        ('password = "_Summer2024"\n', "_Summer2024"),
        ('secret: "_XkqmQ2vLp8rT4bZ"\n', "_XkqmQ2vLp8rT4bZ"),
        ("    password: (Xk9mQ2vLp8) the x\n", "Xk9mQ2vLp8"),
        ('token = "[Hunter2(x)"\n', "[Hunter2(x)"),
        ("Password=Xk9mQ2vLp8;\n", "Xk9mQ2vLp8"),
        ('tokenizerSecret = "Xk9mQ2vLp8rT4wZ3nB"\n', "Xk9mQ2vLp8rT4wZ3nB"),
        ('passthrough_token = "Xk9mQ2vLp8rT4wZ3nB"\n', "Xk9mQ2vLp8rT4wZ3nB"),
        ('AUTH_KEY = "IeftMcMpaQwIeXOztTptXSJSWppfNfww"\n', "IeftMcMpaQwIeXOztTptXSJSWppfNfww"),
        ("password = hunter22;\n", "hunter22"),
        ("Server=db;Password = hunter22;\n", "hunter22"),
        ("password = hunter22 & more\n", "hunter22 & more"),
        ("password: (Xk9mQ2vLp8rT\n", "Xk9mQ2vLp8rT"),
        ("password: (Summer2024!\n", "Summer2024!"),
        ("token: 'Xk9%0mQ2vLp8rT'\n", "Xk9%0mQ2vLp8rT"),
        ('password = "Xk9{}mQ2vLp8rT"\n', "Xk9{}mQ2vLp8rT"),
        # a bypass code is a secret; a value beside a name that also says one
        (
            "MAINTENANCE_BYPASS=Xk9mQ2vLp8rT4wZ3nB7cQ1wE5rT6yU8i\n",
            "Xk9mQ2vLp8rT4wZ3nB7cQ1wE5rT6yU8i",
        ),
        ('{"bypassCode": "Xk9mQ2vLp8rT4wZ3nB7c"}\n', "Xk9mQ2vLp8rT4wZ3nB7c"),
        ("OTP_BYPASS=Xk9mQ2vLp8rT4wZ3nB7c\n", "Xk9mQ2vLp8rT4wZ3nB7c"),
        # a password under a name whose credential word is another word's
        ('const cfg = { detokenizeUser: "spring35!" };\n', "spring35!"),
        ("--from-literal=TOKENS_VERCEL='Autumn2008?'\n", "Autumn2008?"),
        (
            'passthru_db="XKy1fePGW/LlPsgkhx+R2f4p+GzWv3CUXm8ZPDhjH"\n',
            "XKy1fePGW/LlPsgkhx+R2f4p+GzWv3CUXm8ZPDhjH",
        ),
        # a connection string's first field, whatever its case and blanks
        ("PASSWORD = akba93vm6q;\n", "akba93vm6q"),
        ("Password= nkfrpr7u;\n", "nkfrpr7u"),
        ("PWD = go7gtnqyki;\n", "go7gtnqyki"),
        # dotted words in brackets, positional fields inside words
        ('password = "(Pepper.rocket2214"\n', "(Pepper.rocket2214"),
        ('{"token": "((horse.battery.coffee70"}\n', "((horse.battery.coffee70"),
        ('password = "Summer{0}2024"\n', "Summer{0}2024"),
        ('password = "pepper{}tiger63"\n', "pepper{}tiger63"),
    ],
)
def test_secrets_written_in_those_places_are_still_found(text: str, secret: str) -> None:
    _redacted(text, secret)


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        # a YAML phrase after a docstring-like type, a bare value after `==`: the readings of
        # code's text and of comparisons hide neither, raw or in a tool result (quoted twice,
        # neither is read)
        ("password: (prod) Tr0ub4dor&3 horse\n", "Tr0ub4dor&3"),
        ("check that password == aEhWzjRci8hIoTWijV\n", "aEhWzjRci8hIoTWijV"),
    ],
)
def test_secrets_after_an_opening_or_a_comparison_are_found(text: str, secret: str) -> None:
    for content, path, unquote in framed(text)[:2]:
        shown = unquote(redact_text(content, path=path, cache=ResultCache()).text)
        assert secret not in shown, content


@pytest.mark.parametrize(
    ("value", "generated"),
    [
        ("endTagInSelectInTable", False),
        ("isUpToDateOrNot", False),
        ("getValueOrDefaultInOrder", False),
        # a capital and a letter making `It`, `In`, `Is` by chance, not between two words
        ("XqJIt1342112125076", True),
        ("aInBoCdEfGh12", True),
    ],
)
def test_short_words_between_a_names_words_are_humps(value: str, generated: bool) -> None:
    assert reads_generated(value, 8) is generated
