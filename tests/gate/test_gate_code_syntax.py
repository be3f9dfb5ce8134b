"""Code whose syntax shows that what follows a credential's name is code, not a literal: a
type annotation (`token: CancellationToken)`), an expression as an object literal's property
or an assignment (`{password:e,rawPassword:t}`, `(tokenKeys && …)`), CSS
(`.codicon-gist-secret:before{…}`, `--token-color:#3c3c3c;`), a constant named after itself
(`PASSWORD_TOO_LONG = "passwordTooLong"`). Each is checked raw and as a transcript
carries it (a tool result's JSON string, a tool's JSON output quoted again); the literals
beside it are still found."""

from __future__ import annotations

import re

import pytest
from test_gate_providers import framed

from stet_lsp.gate import ResultCache, redact_text


def _left_whole(text: str) -> None:
    for content, path, _ in framed(text):
        assert redact_text(content, path=path, cache=ResultCache()).text == content, content


def _redacted(text: str, secret: str) -> None:
    for content, path, unquote in framed(text):
        shown = unquote(redact_text(content, path=path, cache=ResultCache()).text)
        assert secret not in shown, content
        assert "[REDACTED:" in shown, content


@pytest.mark.parametrize(
    "code",
    [
        "export function provide(document: TextDocument, token: CancellationToken): "
        "Promise<Item[]> {\n",
        "  let token: Token<SyntaxKind.Identifier>;\n",
        "    type ColonToken = PunctuationToken<SyntaxKind.ColonToken>;\n",
        "    accessToken: Record<string, AccessTokenEntity>;\n",
        "    frontFace(mode: GLenum, token: GLenum): void;\n",
        "    removeOutdatedAccount(accountKey: string): void {\n",
        "        const idTokenMap: Map<string, IdTokenEntity> = new Map();\n",
        "    private_key: PKCS7PrivateKeyTypes,\n",
        "    _token_collection_cache: Dict[Tuple[int, str], int] = {}\n",
        "def check(password: str | None, token: Optional[Token]) -> bool:\n",
    ],
)
def test_a_type_annotation_is_no_value(code: str) -> None:
    """A parameter's, a declaration's or a member's type after `:` (a name, type arguments,
    arrays, unions), followed by `)`, `,`, `;`, `=`, `{`, `|` or the line's end."""
    _left_whole(code)


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("token: Xk9q2LmWp4Rt\n", "Xk9q2LmWp4Rt"),
        ("password: Summer2024!\n", "Summer2024!"),
        ("  token: Xk9q2LmWp4Rt,\n", "Xk9q2LmWp4Rt"),
        ("function login(token: Xk9q2LmWp4Rt) {}\n", "Xk9q2LmWp4Rt"),
        ('  password: "Hunter2024!",\n', "Hunter2024!"),
        ("[database]\npassword: Zq8#Wm3!Rt6\n", "Zq8#Wm3!Rt6"),
        # A YAML key's plain value reads as written as a type's name does.
        ("db:\n  api_token: BlueSkyRunner2024\n", "BlueSkyRunner2024"),
        ("config:\n  token: WinterIsComing99\n", "WinterIsComing99"),
    ],
)
def test_a_value_where_a_type_could_stand_is_still_found(text: str, secret: str) -> None:
    """A generated run is no type's name, a quoted literal is a value, a password's signs no
    type holds: YAML, INI and plain text keep their values."""
    _redacted(text, secret)


@pytest.mark.parametrize(
    "code",
    [
        "  const x = { password:e,rawPassword:t };\n",
        "constructor({password:e,passwordVerification:t}){super({start(){}})}\n",
        "return{token:t,text:o,start:i,length:n-i}};let o=0;\n",
        "function i(e,t){this.decoder=e,this.pass=!1,this.options=t||{}}\n",
        "t.SemanticTokensRangeRequest={})).method=a;\n",
        "        const refreshTokenKeys = (tokenKeys && tokenKeys.refreshToken) ||\n",
        "    let pos = state.bMarks[startLine] + state.tShift[startLine]\n",
        "ge.sendNotification(d.type,{token:t,value:r}),onUnhandledProgress:z.event\n",
        "                idToken: idToken?.secret,\n",
        "        const refreshToken = invoke(this.cacheManager.getRefreshToken.bind(this))\n",
        "x.readToken_dot=function(){var e=this.input}\n",
        "        token = (String.Double, 'x')\n",
        "        statetokens = tokendefs[statestack[-1]]\n",
    ],
)
def test_an_expression_is_no_value(code: str) -> None:
    """Names, numbers and operators with a bracket, `=>`, `&&`, `||`, `?.`, a leading `!`,
    or a comma before the next property: minified and written code alike."""
    _left_whole(code)


@pytest.mark.parametrize(
    "code",
    [
        "z[A][r.CHARACTER_TOKEN]=z[A][r.NULL_CHARACTER_TOKEN]=se,z[A][r.WHITESPACE_TOKEN]=pe;\n",
        'Object.defineProperty(t,"__esModule",{value:!0}),t.ProgressType=t.ProgressToken='
        "t.createMessageConnection=t.NullLogger=void 0;\n",
        "ut.Lexer=wo,ut.lexer=wo.lex,ut.Tokenizer=jd,ut.Hooks=_d,ut.parse=ut;\n",
        're={"accent-token":1,mathord:1,"op-token":1,spacing:1,textord:1};\n',
        "try{n=t(new Wk(this.a,e),i&&r?r.token:tt.None)}catch(o){throw o}\n",
    ],
)
def test_a_chained_or_subscripted_assignment_is_no_value(code: str) -> None:
    """Minified code's chains of assignments (`t.A=t.B=void 0`, `a=b,c.d=e`), a subscript's
    `]=`, a quoted property's name, a conditional's `?a.token:b`."""
    _left_whole(code)


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ('const x = { password: "Hunter2024!", user: u };\n', "Hunter2024!"),
        ("const x = {token:'ghp_Xk9q2LmWp4RtZq8Wm3Rt6Yp1Ks4Lx9Tz7Bn3'};\n", "ghp_"),
        ("{password:Xk9q2LmWp4Rt(z),user:u}\n", "Xk9q2LmWp4Rt"),
        ("password: (Hunter2024\n", "(Hunter2024"),
        ("DB_PASSWORD=hunter2[Summer]x\n", "hunter2[Summer]x"),
        ("Server=h;Uid=u;Pwd={Hunter2Summer};Encrypt=yes\n", "Hunter2Summer"),
        ("+DB_PASSWORD=2FSAju)rwTSs/$1W^XubSi\n", "2FSAju)rwTSs/$1W^XubSi"),
        (
            "+SECRET_KEY=v-5v)o7aoh0gl$fsgbfnwfuc=*8ftr^^botukpvw_q!gdle88g\n",
            "v-5v)o7aoh0gl$fsgbfnwfuc=*8ftr^^botukpvw_q!gdle88g",
        ),
        ("password = Zq8#Wm3!Rt6\n", "Zq8#Wm3!Rt6"),
        ("token: Xk9q2LmWp4Rt\n", "Xk9q2LmWp4Rt"),
        ("DB_PASSWORD=a.b=Xk9q2LmWp4Rt\n", "Xk9q2LmWp4Rt"),
        ('{"password":Xk9q2LmWp4Rt.x=1}\n', "Xk9q2LmWp4Rt"),
    ],
)
def test_a_literal_beside_code_is_still_found(text: str, secret: str) -> None:
    """A quoted literal, a generated run, a YAML value at its line's start and an environment
    file's line keep their values."""
    _redacted(text, secret)


@pytest.mark.parametrize(
    "css",
    [
        '  .codicon-gist-secret:before{content:"\\eb45"}\n',
        '.a{color:red}.codicon-gist-secret:before{content:"\\eb45"}.codicon-key:before{x:y}\n',
        ".codicon-key:before,.codicon-secret-token:hover{color:red}\n",
        ".secret-token:nth-child(2n+1){display:none}\n",
        ".token-secret:not(.hidden) span{x:y}\n",
        ":root{--vscode-editor-tokenForeground:#3c3c3c;--token-secret-color:rgba(12,34,56,0.5);"
        "--password-bg:var(--vscode-input-background)}\n",
    ],
)
def test_css_is_no_value(css: str) -> None:
    """A selector's pseudo-class or pseudo-element after a class named for a credential, and
    a declaration's colour, CSS function or length."""
    _left_whole(css)


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        (".x{token:Xk9q2LmWp4Rt}\n", "Xk9q2LmWp4Rt"),
        (".x{--token:#Xk9q2LmWp4Rt}\n", "Xk9q2LmWp4Rt"),
        ("token:#a1b2c3d4e5f6a7b8c9\n", "a1b2c3d4e5f6a7b8c9"),
        ("password: Summer2024!\n", "Summer2024!"),
    ],
)
def test_a_value_beside_css_is_still_found(text: str, secret: str) -> None:
    """A generated run after a property's colon, a hex run longer than a colour's."""
    _redacted(text, secret)


@pytest.mark.parametrize(
    "code",
    [
        'export const PASSWORD_TOO_LONG = "passwordTooLong";\n',
        "const RefreshTokenClientAcquireTokenWithCachedRefreshToken = "
        '"refreshTokenClientAcquireTokenWithCachedRefreshToken";\n',
        'export declare const FLOW_NEW_PASSWORD_REQUIRED_V2 = "FlowNewPasswordRequiredResultV2";\n',
        "exports.SignUpSubmitPasswordResult = SignUpSubmitPasswordResult;\n",
        'export const PlatformAuthDOMGetToken = "platformAuthDOMGetToken";\n',
        "    RESET_PASSWORD_UNSUPPORTED = 'reset_password_unsupported'\n",
    ],
)
def test_a_constant_named_after_itself_is_no_value(code: str) -> None:
    """An event's, an error code's or an export's name as its constant's value: the same
    words, or one more among three or more."""
    _left_whole(code)


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ('const DB_PASSWORD = "dbPassword2024x";\n', "dbPassword2024x"),
        ('const ADMIN_TOKEN = "Xk9q2LmWp4RtZq8W";\n', "Xk9q2LmWp4RtZq8W"),
        ('const PASSWORD = "Hunter2024!";\n', "Hunter2024!"),
        ('API_TOKEN = "apiTokenXk9q2LmWp4Rt"\n', "apiTokenXk9q2LmWp4Rt"),
    ],
)
def test_a_value_holding_its_names_words_is_still_found(text: str, secret: str) -> None:
    """Words of the name with digits or a generated run beside them are a value."""
    _redacted(text, secret)


@pytest.mark.parametrize(
    "text",
    [
        'let secret: string = "Hunter2024!xQ";\n',
        'secret: str = "Hunter2024!xQ"\n',
        'api_key: Optional[str] = "Hunter2024!xQ"\n',
        'token: str | None = "Hunter2024!xQ"\n',
    ],
)
def test_a_literal_after_a_declared_type_is_found_in_a_transcript(text: str) -> None:
    """In a JSON string the literal's quotes are escaped: the declared type read first (a
    plain value, `string`) must not hide the literal after `=` from the decoded scan."""
    _redacted(text, "Hunter2024!xQ")


_MARKER = re.compile(r"\[REDACTED:[a-z0-9\-]+#1\]")


def _only_the_secret(text: str, secret: str) -> None:
    """`text` raw and as a transcript carries it: the secret alone goes, the code beside it
    stays as it is."""
    for content, path, unquote in framed(text):
        shown = unquote(redact_text(content, path=path, cache=ResultCache()).text)
        assert secret not in shown, content
        assert _MARKER.sub(lambda _: secret, shown) == text, shown


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        (
            'const token = require("../token-utils");\nconst apiToken = "Xk9q2LmWp4RtZ8vB";\n',
            "Xk9q2LmWp4RtZ8vB",
        ),
        (
            'const tokenCredential = require("./tokenCredential.js");\nconst token = require("Xk9q2LmWp4RtZ8vB");\n',
            "Xk9q2LmWp4RtZ8vB",
        ),
        (
            "const CachingMinipassPipeline = require('./pipeline.js')\nconst token = decrypt(\"Xk9q2LmWp4RtZ8vB\");\n",
            "Xk9q2LmWp4RtZ8vB",
        ),
        (
            'const fs_minipass_1 = require("@isaacs/fs-minipass");\nconst password = "hunter2x9Q!";\n',
            "hunter2x9Q!",
        ),
        (
            'exports.setThePassword = require("./url-state-machine").setThePassword;\nAPI_TOKEN=Xk9q2LmWp4RtZ8vB\n',
            "Xk9q2LmWp4RtZ8vB",
        ),
    ],
)
def test_a_modules_path_is_no_value(text: str, secret: str) -> None:
    """The path given to `require(…)` or `import(…)` names a module (relative, scoped, or a
    package's name in words); a literal that reads as generated, in a call too, is a value."""
    _only_the_secret(text, secret)


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        (
            "Server=db;Database=app;User Id=sa;Password=Xk9q2LmWp4Rt;\nconst password = options.password;\n",
            "Xk9q2LmWp4Rt",
        ),
        (
            'conn = "Server=db; Password=Hunter2Summer;"\npassword = process.env.PASSWORD;\n',
            "Hunter2Summer",
        ),
        (
            "password = Xk9q.2LmW;\nconst password = input.password || process.env.NPM_PASSWORD;\n",
            "Xk9q.2LmW",
        ),
        (
            "password = hunter2Summer!;\n    const password = await readUserInfo.password()\n",
            "hunter2Summer!",
        ),
        (
            "password = Tr0ub4dor&3x\nconst password = this.options.proxy.password || '';\n",
            "Tr0ub4dor&3x",
        ),
        (
            'password = Xk9q2LmWp4Rt || true\nconst password = isSet ? options.password : "";\n',
            "Xk9q2LmWp4Rt || true",
        ),
        (
            "DB_PASSWORD=Summer2024x && npm start\nconst password = querystring.unescape(parsedUrl.password);\n",
            "Summer2024x",
        ),
        (
            "export API_TOKEN=Xk9q2LmWp4RtZ8vB && ./deploy.sh\n        username, password = decode_auth(entry['auth'])\n",
            "Xk9q2LmWp4RtZ8vB",
        ),
        (
            'password = "hunter2x9Q!"\n        password = enforce_bytes(auth[1], name="auth")\n',
            "hunter2x9Q!",
        ),
        (
            'token = Xk9q2LmWp4Rt && echo ok\n    password = quote(kwargs.pop("password", "") or "", safe=PASSWORD_SAFE)\n',
            "Xk9q2LmWp4Rt",
        ),
    ],
)
def test_a_statements_expression_is_no_password(text: str, secret: str) -> None:
    """`password = <expression>;` in code (a blank on both sides of `=`: a member's access, a
    call, an operator of code) is no connection string's `Password=…;`; a connection
    string's, an ini file's and a shell line's values are found beside it."""
    _only_the_secret(text, secret)


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ('  password: "[type=password]",\n  password: "[Xk9q2LmWp4Rt]",\n', "[Xk9q2LmWp4Rt]"),
        (
            'x={checkbox:"[type=checkbox]",password:"[type=password]"}\n  password: "[type=Xk9q2LmWp4Rt]",\n',
            "[type=Xk9q2LmWp4Rt]",
        ),
        (
            '{"input:password":"inp[type=password]","input:date":"inp[type=date]"}\n  password: "hunter2x9Q!",\n',
            "hunter2x9Q!",
        ),
    ],
)
def test_a_css_attribute_selector_is_no_value(text: str, secret: str) -> None:
    """`[name=value]` in words, perhaps after an element's name, selects elements."""
    _only_the_secret(text, secret)


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("  [token: string]: Token;\n[token: Xk9q2LmWp4Rt]: 1\n", "Xk9q2LmWp4Rt]:"),
        (
            "let _killedTokenDictionary: { [token: string]: number } = {};\ntoken: Xk9q2LmWp4Rt\n",
            "Xk9q2LmWp4Rt",
        ),
        (
            'const lowerCaseTokenText = isAfterTypeOnlyImportSpecifierModifier ? "" : text;\nconst token = `Xk9q2LmWp4Rt${suffix}`;\n',
            "Xk9q2LmWp4Rt${suffix}",
        ),
        (
            "node.questionToken = questionOrExclamationToken && isQuestionToken(node) ? a : b;\npassword: Xk9q2LmWp4Rt ? yes\n",
            "Xk9q2LmWp4Rt ? yes",
        ),
        (
            'const isValidKeyword = isClassLike(node) ? isClassMemberCompletionKeyword : isInterfaceOrTypeLiteralCompletionKeyword;\nconst apiToken = "Xk9q2LmWp4RtZ8vB";\n',
            "Xk9q2LmWp4RtZ8vB",
        ),
        (
            "let secret: string = \"Xk9q2LmWp4RtZ8vB\";\nconst UNEXPECTED_TOKEN = /^Unexpected token '?(.)'?(,)? /i\n",
            "Xk9q2LmWp4RtZ8vB",
        ),
        (
            "api_key: Optional[str] = \"Xk9q2LmWp4RtZ8vB\"\nconst tokenizeIncludingWhitespace = new RegExp(`[${extendedWordChars}]+|\\\\s+|[^${extendedWordChars}]`, 'ug');\n",
            "Xk9q2LmWp4RtZ8vB",
        ),
    ],
)
def test_an_index_signature_a_conditional_and_a_patterns_literal_are_no_value(
    text: str, secret: str
) -> None:
    """A TypeScript index signature's key type, an operand of a conditional or of `&&`, a
    regular expression's literal, a template literal of substituted names; a type's place
    holding a generated name, a template holding a generated run and declared literals are
    values."""
    _only_the_secret(text, secret)


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        (
            "  return {\n    askPassSetInConfig: config?.core?.askpass\n  };\napi_token: BlueSkyRunner2024\n",
            "BlueSkyRunner2024",
        ),
        (
            "    askPassSetInConfig: config?.core?.askpass !== undefined,\ntoken: Xk9q2LmWp4Rt?.foo\n",
            "Xk9q2LmWp4Rt?.foo",
        ),
        ("    askPass: config?.core?.askpass\npassword: hunter2x9Q!\n", "hunter2x9Q!"),
    ],
)
def test_an_optional_chain_as_an_objects_last_member_is_no_value(text: str, secret: str) -> None:
    """A pretty-printed object's last member at its line's start, an optional chain of
    names, reads as YAML; a YAML key's plain values beside it are found."""
    _only_the_secret(text, secret)
