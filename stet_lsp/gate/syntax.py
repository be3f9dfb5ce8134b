"""What the syntax around a value a rule read after a credential's name says it is, when that
is no secret: code (the name's type, an expression or an operand of one, a module's path, a
pattern's or a template's literal, CSS, a constant named after itself),
markup, a resource's name (an ARN, a CloudFormation type), a test a runner's result names.
Each reads the text around the value, not the value alone: the same characters in YAML, an
`.env` file or a quoted literal stay a value."""

from __future__ import annotations

import re
from functools import lru_cache

from stet_lsp.gate.generated import letter_pairs
from stet_lsp.gate.heuristics import is_written_password, reads_as_written
from stet_lsp.gate.patterns import lazy


def value_is_code(text: str, key_start: int, key_end: int, start: int, end: int) -> bool:
    """Whether what a rule read at `start:end` after the name at `key_start:key_end` is code,
    not the name's value: the name ends a CloudFormation resource type, or the value is the
    name's type (also an index signature's), an expression or an operand of one, CSS, a
    module's path, a regular expression's or a template's literal."""
    return (
        names_a_resource_type(text, key_start)
        or annotates_a_type(text, key_start, key_end, start)
        or is_index_signature(text, key_start, key_end, start)
        or is_code_expression(text, key_start, key_end, start, end)
        or is_code_operand(text, key_start, key_end, start, end)
        or is_code_statement(text, key_end, start, end)
        or is_css(text, key_start, key_end, start)
        or is_attribute_selector(text, start, end)
        or names_a_module(text, start, end)
        or is_regex_literal(text, start)
        or is_template_of_names(text, start, end)
    )


# An Amazon Resource Name: `arn:<partition>:<service>:<region>:<account>:<resource>`, the
# partition `aws`, `aws-cn`, `aws-us-gov`, … or a policy's `*`.
_ARN = re.compile(r"arn:(?:aws(?:-[a-z]{1,10}){0,3}|\*):[a-z0-9*\-]{0,40}:")
_TOKEN_ENDS = frozenset(" \t\r\n\"'`,;=([{<>|")
_ARN_READ = 512


def inside_arn(text: str, offset: int) -> bool:
    """Whether `offset` is inside an ARN (`arn:aws:secretsmanager:*:*:secret:db-*`, `arn:*:
    ec2:*:*:security-group/*`): a resource's name, public, whose fields no credential's
    assignment or `.pgpass` line are."""
    start = offset
    floor = max(0, offset - _ARN_READ)
    while start > floor and text[start - 1] not in _TOKEN_ENDS:
        start -= 1
    return _ARN.match(text, start) is not None


# A CloudFormation resource type's namespace before a name (`"AWS::ApiGateway::ApiKey":`,
# `AWS::SecretsManager::Secret`, `Alexa::ASK::Skill`, `Custom::…`): a type, not a credential.
_RESOURCE_TYPE = re.compile(r"(?<![A-Za-z0-9_])(?:AWS|Alexa|Custom)::(?:[A-Za-z0-9]{1,64}::)?\Z")


def names_a_resource_type(text: str, key_start: int) -> bool:
    """Whether the name at `key_start` ends a CloudFormation resource type (see
    `_RESOURCE_TYPE`): what is assigned to it is the type's data (a schema's digest)."""
    return _RESOURCE_TYPE.search(text, max(0, key_start - 80), key_start) is not None


# A type annotation in code (TypeScript, Python, Rust, Kotlin, Swift): a name's type after
# `:` in a parameter list (`token: CancellationToken)`), a declaration (`let token:
# Token<SyntaxKind.Identifier>;`), an interface's or a class's member (`  token: string;`): a
# type's name, dotted, with type arguments (`<…>`, `[…]`), arrays (`[]`), `?`, and unions or
# intersections of such; then `)`, `,`, `;`, `=`, `{`, `|`, `&` or the line's end.
_TYPE_NAME = re.compile(r"[A-Za-z_$][\w$]{0,80}(?:\.[A-Za-z_$][\w$]{0,80}){0,8}")
_TYPE_ARGUMENT_CHARS = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$.,|&? \t[]<>()"
)
_BRACKETS = {"<": ">", "[": "]", "(": ")"}
_TYPE_READ = 240
_TYPE_JOINT = re.compile(r"[ \t]{0,2}[|&][ \t]{0,2}")
_CODE_AFTER_TYPE = re.compile(r"[ \t]{0,4}[),;={|&]")
_LINE_END = re.compile(r"[ \t]{0,4}(?:\r|\n|\\[rn]|\\?\"|\Z)")
_ANNOTATION_COLON = re.compile(r"[ \t]{0,4}:[ \t]{0,4}")
# What stands before a name that is annotated: a parameter list's `(` or `,`, or a
# declaration's keyword.
_ANNOTATED_NAME_BEFORE = re.compile(
    r"(?:[(,][ \t]{0,4}"
    r"|(?:^|[^\w$]|\\[nrt])(?:let|const|var|readonly|declare|private|public|protected|static)"
    r"[ \t]{1,4})\Z"
)
# Or the line's start (raw or escaped in JSON): a member of an interface or a class, which is
# a YAML key too: its type must then show as code (`;` or `=` after it, or a type's syntax in
# it), as `token: WinterIsComing99` at a line's end is a YAML value.
_MEMBER_BEFORE = re.compile(
    r"(?:^|[\r\n\"]|\\[nr])[ \t]{0,40}(?:[A-Za-z_$][\w$]{0,40}[ \t]{1,4}){0,3}\Z"
)
_TYPE_SYNTAX = re.compile(r"[<\[.|&?]")
# Letters and digits before a file's extension (`hunter2.java`, `Summer2024.txt`,
# `p4ssw0rd.txt`) are a value (a password, a file's name) written at a YAML key's line end,
# not a member's dotted type.
_DIGITS_BEFORE_EXTENSION = re.compile(r"[A-Za-z0-9$]*[0-9][A-Za-z0-9$]*\.[A-Za-z][A-Za-z0-9]{0,4}")
# So is a password written by hand with digits then `?` after a password's name
# (`password: Tiger1999?`, `password: Passw0rd1?`); an optional type's name ends in digits
# that are a width (`Int32?`, `UInt8?`, `Float80?`), and after another name a humped or
# numbered name is a type's (`apiKey: ApiKey2?`, `privateKey: Curve25519?`).
_WIDTH_BEFORE_QUESTION = re.compile(r"[A-Za-z]{1,40}(?:8|16|32|64|80|128|256)\?")
# A YAML key starts its line (perhaps an item's, after `- `); a word before it declares code's
# member (`val password: Vector3?`, `override var password: Hash160?`).
_KEY_STARTS_LINE = re.compile(r"(?:^|[\r\n\"]|\\[nr])[ \t]{0,40}(?:-[ \t]{1,4})?\Z")
# A line before it that ends in `(`, `,` or `{` opens a parameter list or a body: the key is a
# parameter's or a member's (`fun login(` then `    password: Hash160?`), not YAML's.
_OPENED_ON_THE_LINE_BEFORE = re.compile(r"[(,{][ \t]*(?:\r?\n|(?:\\+r)?\\+n)[ \t]{0,40}\Z")
# A type alias (`type ColonToken = PunctuationToken<SyntaxKind.ColonToken>;`).
_TYPE_ALIAS = re.compile(r"(?:^|[^\w$]|\\[nrt])type[ \t]{1,4}\Z")
_ALIAS_EQUALS = re.compile(r"[ \t]{0,4}=[ \t]{0,4}")


def _type_arguments_end(text: str, position: int, limit: int) -> int | None:
    """Where the bracket at `position` closes, over a type's arguments only; None when it does
    not close before `limit` or holds what no type does."""
    closers = []
    index = position
    while index < limit:
        char = text[index]
        if char in _BRACKETS:
            closers.append(_BRACKETS[char])
        elif char in ">])":
            if not closers or closers.pop() != char:
                return None
            if not closers:
                return index + 1
        elif char not in _TYPE_ARGUMENT_CHARS:
            return None
        index += 1
    return None


def _type_end(text: str, position: int) -> int | None:
    """The end of the type written at `position` (see `_TYPE_NAME`), or None."""
    limit = min(len(text), position + _TYPE_READ)
    while True:
        name = _TYPE_NAME.match(text, position, limit)
        if name is None:
            return None
        position = name.end()
        while position < limit and text[position] in "<[?":
            if text[position] == "?" or text.startswith("[]", position):
                position += 1 if text[position] == "?" else 2
                continue
            end = _type_arguments_end(text, position, limit)
            if end is None:
                return None
            position = end
        joint = _TYPE_JOINT.match(text, position, limit)
        if joint is None or _TYPE_NAME.match(text, joint.end(), limit) is None:
            return position
        position = joint.end()


def _written_before_question(key: str, value: str) -> bool:
    """Whether `value` ending in `?` is a password written by hand after a password's name
    (`_WIDTH_BEFORE_QUESTION`)."""
    return (
        value.endswith("?")
        and any(c.isdigit() for c in value)
        and _WIDTH_BEFORE_QUESTION.fullmatch(value) is None
        and is_written_password(key, value)
    )


def annotates_a_type(text: str, key_start: int, key_end: int, start: int) -> bool:
    """Whether what a rule read as a credential's value, at `start` after the name at
    `key_start:key_end` and a colon, is the name's type (see `_TYPE_NAME`): the name stands in
    a parameter list, a declaration or as a member (or it is a type alias's, before `=`), the
    type is followed by what ends one, and its names read as written, not drawn (`token:
    Xk9q2LmWp4Rt` in YAML is a value)."""
    if text.startswith("\\", key_start - 1):
        key_start += 1  # the name after an escaped newline (`\naccessToken:` in JSON)
    before = max(0, key_start - 80)
    member = False
    if _ANNOTATION_COLON.fullmatch(text, key_end, start) is not None:
        if _ANNOTATED_NAME_BEFORE.search(text, before, key_start) is None:
            member = _MEMBER_BEFORE.search(text, before, key_start) is not None
            if not member:
                return False
    elif _ALIAS_EQUALS.fullmatch(text, key_end, start) is not None:
        if _TYPE_ALIAS.search(text, before, key_start) is None:
            return False
    else:
        return False
    end = _type_end(text, start)
    if end is None:
        return False
    if _CODE_AFTER_TYPE.match(text, end) is None:
        if _LINE_END.match(text, end) is None:
            return False
        if member and (
            _TYPE_SYNTAX.search(text, start, end) is None
            or _DIGITS_BEFORE_EXTENSION.fullmatch(text, start, end) is not None
            or (
                _KEY_STARTS_LINE.search(text, before, key_start) is not None
                and _OPENED_ON_THE_LINE_BEFORE.search(text, before, key_start) is None
                and _written_before_question(text[key_start:key_end], text[start:end])
            )
        ):
            return False  # a YAML key's plain value: `token: WinterIsComing99`
    return reads_as_written(text[start:end])


# An expression in code as a credential's name's value, unquoted (JavaScript, TypeScript,
# Python): `{token:t,text:o}` and `{password:e,rawPassword:t}` in minified code, `(tokenKeys &&
# …)`, `!0,this._emitCurrentToken()`, `[startLine`, `function(e){…`, `invoke(this.cache…`,
# `idToken?.secret`. It holds names, numbers and operators only (no blank, quote, `#`, `@`, …),
# and what only code writes: a bracket, `=>`, `&&`, `||`, `?.`, a leading `!` or `=`, or a
# comma before the next property or assignment (`,text:`, `,this.options=`).
_EXPRESSION_CHARS = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$.,;:!?()[]{}=<>&|+-*/%~^"
)
_EXPRESSION_SIGN = re.compile(
    r"[()\[\]{}]|=>|&&|\|\||\?\.|^[!=]|,[A-Za-z_$][\w$]{0,80}(?:\.[A-Za-z_$][\w$]{0,80}){0,8}[:=]"
    r"|^[A-Za-z_$][\w$]{0,80}(?:\.[A-Za-z_$][\w$]{0,80}){1,8}=(?!=)"
)
# The operator between the name and the value: `:` (a property), `=` or `=>`; after a quoted
# name's quote (`{"accent-token":1,mathord:1}`) or a subscript's `]` (`z[A][r.EOF_TOKEN]=…`).
_EXPRESSION_OPERATOR = re.compile(r"[\"']?\]?[ \t]{0,4}(?::|=>?)[ \t]{0,4}")
# Before a property's name: an object literal's `{` or `,`, an argument list's `(`, a
# conditional's `?` (`i&&r?r.token:Je.None`); the name may be quoted.
_PROPERTY_BEFORE = re.compile(r"[{,(?][ \t]{0,4}[\"']?\Z")
_MEMBER_END = re.compile(r",[ \t]{0,4}(?:\r|\n|\\{1,64}[rn]|\Z)")
# An environment file's line (`DB_PASSWORD=…` at the line's start): text, never code.
# An environment file's name at its line's start, indented or as a diff's line shows it, after
# the number a file view puts before each line (`     6\t`, `     6→`).
_ENV_LINE_NAME = re.compile(
    r"(?:^|[\r\n\"]|\\[nr])(?:[ \t]{0,16}[0-9]{1,7}(?:\t|→))?"
    r"[+\- ]?[ \t]{0,8}(?:export[ \t]{1,4})?\Z"
)
_UPPER_NAME = re.compile(r"[A-Z][A-Z0-9_]*")
_PARAMETER_OPENERS = ("?", "&", ";")
# An optional chain of names (`config?.core?.askpass`): what a pretty-printed object's last
# member holds at its line's start (no comma after it), where a YAML key's value stands too.
_OPTIONAL_CHAIN = re.compile(
    r"[A-Za-z_$][\w$]{0,80}(?:\??\.[A-Za-z_$][\w$]{0,80}){0,8}\?\.[A-Za-z_$][\w$]{0,80}"
    r"(?:\??\.[A-Za-z_$][\w$]{0,80}){0,8}"
)
# What no expression holds, and a generated password often does: a number with letters
# joined to it (`5v`, `2FSAju`; not a hexadecimal `0x1f`, an exponent `1e5` or a BigInt
# `10n`), or a name or number right after a closing bracket (`)o7`, `]x`).
_NO_EXPRESSION = re.compile(
    r"(?<![\w$])(?!0[xX][0-9a-fA-F]+(?![\w$]))(?>[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?n?)"
    r"[A-Za-z_$]"
    r"|[)\]][\w$]"
)


def is_code_expression(text: str, key_start: int, key_end: int, start: int, end: int) -> bool:
    """Whether the unquoted value `text[start:end]` a rule read after the name at
    `key_start:key_end` is an expression in code (see `_EXPRESSION_SIGN`), its names written,
    not drawn (`Xk9q2LmWp4Rt(…)` is a value). After `:` the name is an object literal's
    property or an argument's (after `{`, `,` or `(`, or ending in a comma at the line's
    end): a YAML key at its line's start is followed by text, its value unquoted. An
    environment file's line and a query's or a connection string's parameter (a plain name
    after `?`, `&` or `;`) are text too."""
    if start < 1 or text[start - 1] in "\"'`":
        return False
    operator = _EXPRESSION_OPERATOR.fullmatch(text, key_end, start)
    if operator is None:
        return False
    if text.startswith("\\", key_start - 1):
        key_start += 1
    elif text.startswith(_PARAMETER_OPENERS, key_start - 1) and "." not in text[key_start:key_end]:
        return False  # a query's or a connection string's parameter holds text (`;Pwd={…}`)
    before = max(0, key_start - 80)
    if ":" in operator.group():
        # A pretty-printed object literal's member ends in a comma at its line's end.
        member = _MEMBER_END.match(text, end) is not None
        if (
            not member
            and _PROPERTY_BEFORE.search(text, before, key_start) is None
            and _OPTIONAL_CHAIN.fullmatch(text, start, end) is None
        ):
            return False  # a YAML key's value, unless an optional chain (`config?.core?.x`)
    elif (
        _UPPER_NAME.fullmatch(text, key_start, key_end)
        and _ENV_LINE_NAME.search(text, before, key_start) is not None
    ):
        return False
    return _reads_as_expression(text[start:end])


@lru_cache(maxsize=256)
def _reads_as_expression(value: str) -> bool:
    """Whether `value` is written as an expression (`is_code_expression`). Each hit of an
    assignment repeated (`password:{password:{…`) reads the same value up to its rule's
    reach again: its hundreds of characters are read once."""
    if not _EXPRESSION_CHARS.issuperset(value) or _EXPRESSION_SIGN.search(value) is None:
        return False
    if _NO_EXPRESSION.search(value) is not None:
        return False
    return reads_as_written(value)


# An operand of code's operators (`lowerCaseTokenText = isAfterTypeOnlyModifier ? "" : …`,
# `node.questionToken = questionOrExclamationToken && …`): a name or a chain of names, a
# blank, then an operator only code writes between blanks; after ` = ` (blanks on both sides:
# no shell's or environment file's assignment) or as a conditional's branch (`cond ? tokenKey
# : otherKey`, a blank before the colon, where YAML and prose write none).
_OPERAND = re.compile(r"!{0,2}[A-Za-z_$][\w$]{0,80}(?:\??\.[A-Za-z_$][\w$]{0,80}){0,8}")
_OPERATOR_AFTER = re.compile(r"[ \t]{1,4}(?:\?\??|&&|\|\||===?|!==?|instanceof|or|and|if)[ \t]")
_SPACED_EQUALS = re.compile(r"[ \t]{1,4}=[ \t]{1,4}")
_BRANCH_BEFORE = re.compile(r"[\w$)\]][ \t]{1,4}\?[ \t]{1,4}\Z")
_BRANCH_COLON = re.compile(r"[ \t]{1,4}:[ \t]{1,4}")
_BRANCH_END = re.compile(r"[ \t]{0,4}(?:[;,)\]}]|\r|\n|\\[rn]|\Z)")


def is_code_operand(text: str, key_start: int, key_end: int, start: int, end: int) -> bool:
    """Whether the unquoted value `text[start:end]` is a name of code (see `_OPERAND`) that an
    operator of code follows after ` = `, or the else branch of a conditional whose then
    branch is the credential's name; its names read as written (`token = Xk9q2LmWp4Rt &&` is
    a value)."""
    if start < 1 or text[start - 1] in "\"'`" or _OPERAND.fullmatch(text, start, end) is None:
        return False
    if _SPACED_EQUALS.fullmatch(text, key_end, start) is not None:
        if _OPERATOR_AFTER.match(text, end) is None:
            return False
    elif (
        _BRANCH_COLON.fullmatch(text, key_end, start) is None
        or _BRANCH_BEFORE.search(text, max(0, key_start - 8), key_start) is None
        or _BRANCH_END.match(text, end) is None
    ):
        return False
    return reads_as_written(text[start:end])


# A statement's value in code after ` = ` (a blank on both sides, as no shell's or
# environment file's line writes it), read up to its `;` or the line's end: names, numbers,
# operators and brackets, with a member's access, a call, a subscript, a conditional or
# another operator only code writes (`password = options.password;`, `const password =
# input.password || process.env.NPM_PASSWORD;`, Python's `password = quote(kwargs.pop(`).
_STATEMENT_CHARS = _EXPRESSION_CHARS | frozenset(" \t")
_STATEMENT_SIGN = re.compile(
    r"[A-Za-z_$][\w$]{0,80}\??\.[A-Za-z_$]|[(\[]|\?\?|&&|\|\||[ \t]\?[ \t]"
    r"|^(?:await|new|typeof|yield)[ \t]"
)


def is_code_statement(text: str, key_end: int, start: int, end: int) -> bool:
    """Whether the unquoted value `text[start:end]` after ` = ` is an expression in code (see
    `_STATEMENT_SIGN`), its names written, not drawn, and no number with letters joined to it
    (`password = Xk9q.2LmW;` is a value)."""
    if start < 1 or text[start - 1] in "\"'`":
        return False
    if _SPACED_EQUALS.fullmatch(text, key_end, start) is None:
        return False
    value = text[start:end]
    if not _STATEMENT_CHARS.issuperset(value) or _STATEMENT_SIGN.search(value) is None:
        return False
    return _NO_EXPRESSION.search(value) is None and reads_as_written(value)


# A TypeScript index signature (`[token: string]: Token`, `{ [secretKey: string]: number }`):
# the name after `[`, its key's type, then `]` and the member's `:`.
_INDEX_OPEN = re.compile(r"\[[ \t]{0,4}\Z")
_INDEX_CLOSE = re.compile(r"[ \t]{0,4}\][ \t]{0,4}\??:")


def is_index_signature(text: str, key_start: int, key_end: int, start: int) -> bool:
    """Whether the name at `key_start:key_end` is an index signature's parameter and what a
    rule read after its colon is the key's type (see `_INDEX_OPEN`, `_INDEX_CLOSE`)."""
    if _INDEX_OPEN.search(text, max(0, key_start - 8), key_start) is None:
        return False
    if _ANNOTATION_COLON.fullmatch(text, key_end, start) is None:
        return False
    end = _type_end(text, start)
    return (
        end is not None
        and _INDEX_CLOSE.match(text, end) is not None
        and reads_as_written(text[start:end])
    )


# A module's specifier as the argument of `require(…)`, `require.resolve(…)` or `import(…)`
# (`const token = require("../token-utils")`, `TokenBucket_1 = require("./TokenBucket")`): a
# path, relative (`./`, `../`), of a scoped package (`@scope/name`), `node:`'s, or a
# package's name and path in words.
_MODULE_CALL = re.compile(
    r"(?<![\w$.])(?:require(?:\.resolve)?|import)[ \t]{0,2}\([ \t]{0,2}\\{0,3}[\"'`]\Z"
)
_MODULE_PATH = re.compile(r"[\w.\-@+~:]{1,120}(?:/[\w.\-@+~]{1,120}){0,30}")
_MODULE_PREFIXES = ("./", "../", "@", "node:")


def names_a_module(text: str, start: int, end: int) -> bool:
    """Whether the quoted value `text[start:end]` is a module's specifier given to
    `require(…)` or `import(…)` (see `_MODULE_CALL`): a relative or scoped path, or one whose
    names read as written (`require("Xk9q2LmWp4Rt")` is a value)."""
    if start < 1 or text[start - 1] not in "\"'`":
        return False
    if _MODULE_CALL.search(text, max(0, start - 28), start) is None:
        return False
    value = text[start:end]
    if _MODULE_PATH.fullmatch(value) is None:
        return False
    return value.startswith(_MODULE_PREFIXES) or reads_as_written(value)


# A regular expression's literal in code (`const UNEXPECTED_TOKEN = /^Unexpected token/i`):
# `/`, a body on one line (escapes and classes, in which `/` may stand), `/`, flags, then what
# ends an expression; its body holds a pattern's syntax.
_REGEX_LITERAL = re.compile(
    r"/(?![/*])(?P<body>(?:[^/\\\[\r\n]|\\[^\r\n]|\[(?:[^\]\\\r\n]|\\[^\r\n]){0,200}\]){1,400})"
    r"/[dgimsuvy]{0,8}(?=[ \t]{0,4}(?:[;,)\]}.:?|&]|\\{0,3}\"|\r|\n|\\{1,3}[rn]|\Z))"
)
_PATTERN_SYNTAX = re.compile(r"[\^$\\\[(|]|[^\\][+*?]")


def is_regex_literal(text: str, start: int) -> bool:
    """Whether the unquoted value a rule read at `start` opens a regular expression's literal
    (see `_REGEX_LITERAL`) whose body holds a pattern's syntax and reads as written (`token =
    /Xk9q2LmWp4Rt/` is a value)."""
    if not text.startswith("/", start) or text[start - 1 : start] in ('"', "'", "`"):
        return False
    literal = _REGEX_LITERAL.match(text, start)
    if literal is None:
        return False
    body = literal.group("body")
    return _PATTERN_SYNTAX.search(body) is not None and reads_as_written(body)


# A template literal whose variable parts are names of code (`new RegExp(`[${wordChars}]+|\\s+`)`,
# `` `${scheme}://${host}` ``): the rest holds no digit in a word, no run that reads as
# generated: `` `${user}:Summer2024` `` and `` `${prefix}Xk9q2LmWp4Rt` `` are values.
_SUBSTITUTION = re.compile(
    r"\$\{[ \t]{0,2}[A-Za-z_$][\w$]{0,80}(?:\??\.[A-Za-z_$][\w$]{0,80}){0,8}[ \t]{0,2}\}"
)
_TEMPLATE_REST = re.compile(r"[^A-Za-z0-9]*(?:[A-Za-z]{1,40}[^A-Za-z0-9]{1,40})*[A-Za-z]{0,40}")


def is_template_of_names(text: str, start: int, end: int) -> bool:
    """Whether the value `text[start:end]` in backquotes is a template literal of names
    substituted (see `_SUBSTITUTION`) and of signs and words without digits around them."""
    if start < 1 or text[start - 1] != "`" or not text.startswith("`", end):
        return False
    value = text[start:end]
    if _SUBSTITUTION.search(value) is None:
        return False
    rest = _SUBSTITUTION.sub(" ", value)
    if "${" in rest or _TEMPLATE_REST.fullmatch(rest) is None:
        return False
    return reads_as_written(value)


# A CSS attribute selector in a string (`password: "[type=password]"`, `"inp[type=password]"`):
# an element's name or `*`, then `[name=value]` (`~=`, `|=`, `^=`, `$=`, `*=`), in words.
_ATTRIBUTE_SELECTOR = re.compile(
    r"(?:[A-Za-z][\w\-]{0,40}|\*)?(?:\[[A-Za-z_][\w\-]{0,40}[~|^$*]?=[\w\-]{1,40}\]){1,4}"
    r"(?:[:.#][\w\-]{1,40})*"
)


def is_attribute_selector(text: str, start: int, end: int) -> bool:
    """Whether the quoted value `text[start:end]` is a CSS attribute selector (see
    `_ATTRIBUTE_SELECTOR`) in words (`"[tok=Xk9q2LmWp4Rt]"` is a value)."""
    if start < 1 or text[start - 1] not in "\"'`":
        return False
    if _ATTRIBUTE_SELECTOR.fullmatch(text, start, end) is None:
        return False
    return reads_as_written(text[start:end])


# CSS: a selector's pseudo-class or pseudo-element after a class's name holding a credential's
# word (`.codicon-gist-secret:before{content:…}`, `.secret-token:nth-child(2n+1){`), then what
# goes on a selector or opens its block; and a declaration's value (`--token-color:#3c3c3c;`,
# `--secret-bg:rgba(12,34,56,0.5)`, `var(--x)`), after the block's `{` or a `;`.
_PSEUDO = re.compile(
    r":?(?:-(?:webkit|moz|ms)-[a-z\-]{1,40}|before|after|hover|focus|focus-within|focus-visible"
    r"|active|visited|link|target|checked|disabled|enabled|empty|root|not|is|where|has"
    r"|first-child|last-child|only-child|nth-child|nth-last-child|first-of-type|last-of-type"
    r"|only-of-type|nth-of-type|placeholder|placeholder-shown|selection|marker|backdrop"
    r"|first-line|first-letter|autofill|invalid|valid|required|optional|read-only|read-write"
    r"|indeterminate|default|defined|host|part|slotted|scope|lang|dir|any-link)"
    r"(?:\([^()\s\\\"']{0,80}\))?(?=[{,:.\[#>+~) ]|\Z)"
)
_DECLARATION_BEFORE = re.compile(r"[{;][ \t]{0,4}\Z")
_CSS_VALUE = re.compile(
    r"(?:rgba?|hsla?|hwb|lab|lch|color-mix|var|calc|url|env)\("
    r"|(?:#[0-9a-fA-F]{3,8}|-?[0-9]{1,6}(?:\.[0-9]{1,6})?(?:px|em|rem|%|s|ms|vh|vw|pt|fr|deg)?)"
    r"(?=[;}!,) ]|\Z)"
)


def is_css(text: str, key_start: int, key_end: int, start: int) -> bool:
    """Whether what a rule read as a credential's value after `:` is CSS: a pseudo-class or
    pseudo-element of a selector (see `_PSEUDO`), or a declaration's value after the block's
    `{` or a `;` (a colour, a function of CSS, a length)."""
    if not text.startswith(":", key_end) or key_end + 1 != start:
        return False
    if _PSEUDO.match(text, start) is not None:
        return True
    return (
        _DECLARATION_BEFORE.search(text, max(0, key_start - 8), key_start) is not None
        and _CSS_VALUE.match(text, start) is not None
    )


# A constant whose value is its own name written another way (`PASSWORD_TOO_LONG =
# "passwordTooLong"`, `RefreshTokenClient… = "refreshTokenClient…"`, `exports.PasswordState =
# PasswordState`, `FLOW_NEW_PASSWORD_REQUIRED_V2 = "FlowNewPasswordRequiredResultV2"`): an
# event's, an error code's or an export's name, not a secret.
_NAME_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_NAME_VALUE = re.compile(r"[A-Za-z_$][\w$\-]{0,200}")
_NAME_WORDS_MORE = 3


def _name_words(name: str) -> list[str]:
    return [word.lower() for word in _NAME_WORD.findall(name)]


def names_itself(key: str, value: str) -> bool:
    """Whether `value` is the name `key` (its last dotted part) written another way: the same
    words in order (`_NAME_WORD`: camelCase humps, acronyms, runs of digits), or, for a name
    of three words or more, those and one more word of letters among them; a value that reads
    as generated is none."""
    if _NAME_VALUE.fullmatch(value) is None or not reads_as_written(value):
        return False
    name = _name_words(key.rsplit(".", 1)[-1])
    words = _name_words(value)
    if not name or words == name:
        return bool(name)
    if len(name) < _NAME_WORDS_MORE or len(words) != len(name) + 1:
        return False
    for index, word in enumerate(words):
        if word.isalpha() and words[:index] + words[index + 1 :] == name:
            return True
    return False


# An HTML or XML tag opening, its attributes up to the quote that ends the value a rule read
# (`password = <span class="hljs-string">…`: highlighted code in a page's HTML).
_TAG_OPENING = re.compile(r"<[A-Za-z]{1,15}[1-6]?(?:[ \t]{1,4}[A-Za-z][A-Za-z:\-]{0,30}=?){1,8}")


def is_tag_opening(value: str) -> bool:
    """Whether `value` is markup: a tag's name, a blank and attributes' names, letters alone
    (`<span class=`, `<h2 id=`); not a password that starts with `<` (`<k9Qm2 xR7tLw4=`)."""
    return _TAG_OPENING.fullmatch(value) is not None


# A test a runner's result line names (`PASS: binutils-all/i386/empty`, jtreg's `Passed:
# compiler/arraycopy/TestArrayCopy.java#id0`, git's `t0001-basic.sh`): a test's source or
# script, perhaps in folders, or a relative path of three segments or more in lower case,
# perhaps a case after `#`, in words.
_TEST_PATH = re.compile(r"[\w\-][\w.\-]{0,80}(?:/[\w.\-]{1,80}){0,30}(?:#[\w.\-]{1,80})?")
# A part of a test's name with too few letter pairs to judge by them (`t0001-basic.sh`,
# `t/01-basic.t`, `gas/i386/x86-64-pr20141`): a word, a number, or a word and a number.
_TEST_NAME_PART = re.compile(r"(?:[A-Z]?[a-z]+){1,4}[0-9]*|[A-Z]{1,8}[0-9]*|[0-9]+[a-z]?")
_TEST_NAME_PARTS = re.compile(r"[/._\-]")
# The extension of a test's source or script.
_TEST_EXTENSION = re.compile(
    r"\.(?:java|kt|scala|py|sh|bash|bats|exp|t|pl|rb|js|mjs|ts|go|rs|c|cc|cpp|cs|swift|php|lua"
    r"|sql|test|tst)$"
)


def is_test_path(value: str) -> bool:
    """Whether `value` is a path naming a test (see `_TEST_PATH`); not a password holding
    slashes (`k9Qm/2xR7tLw4/Zp8Vn3Hc`: no extension, capitals, few English letter pairs)."""
    if _TEST_PATH.fullmatch(value) is None:
        return False
    segments = value.split("#", 1)[0].split("/")
    if _TEST_EXTENSION.search(segments[-1]) is not None:
        least, share = 8, 0.55
    elif len(segments) >= 3 and value.lower() == value:
        least, share = 10, 0.7
    else:
        return False
    pairs, common = letter_pairs(value)
    if pairs < least and not all(
        _TEST_NAME_PART.fullmatch(part) for part in _TEST_NAME_PARTS.split(value) if part
    ):
        return False  # too few pairs to tell: `Xk9q2Lm.sh` is no test's script
    # Words and names (`binutils-all/i386/empty`, `TestFloatJNIArgs`) are made of English
    # letter pairs; base64 and random letters hold about 30 % of them.
    return common >= share * pairs


# A literal code falls back on when a credential's lookup finds nothing: the right operand of
# `||`, `??`, `?:` or `or` (`password = process.env.DB_PASSWORD || '…'`, `token =
# getenv('TOKEN') or '…'`), a conditional's branch (`token = isProd ? process.env.TOKEN :
# '…'`, Python's `password = os.environ["DB_PASSWORD"] if prod else '…'`), or a lookup's
# default argument (`os.environ.get('DB_PASS', '…')`, `os.getenv("API_TOKEN", "…")`,
# `settings.get("client_secret", "…")`). The literal is the credential's value when the lookup
# finds none, and is judged as a literal right after the name is; the code before it never is
# a value. These are pieces of the rules' patterns (`rules.FALLBACK_ASSIGNMENT`,
# `rules.LOOKUP_DEFAULT`).


def _nested_call(depth: int) -> str:
    """A call's arguments in parentheses, calls nested in them up to `depth` levels deep in
    all (`str(os.getenv("X"))`, `f(g(h(x)))`): within a level, up to eight parts, each a run
    without parentheses of up to 160 characters or a call one level down. Each part starts
    with a character the other cannot, and every repeat is possessive, so a match attempt
    reads each character once."""
    call = r"\([^()\r\n;]{0,160}+\)"
    for _ in range(depth - 1):
        call = r"\((?:[^()\r\n;]{1,160}+|" + call + r"){0,8}+\)"
    return call


_CALL = _nested_call(3)
# An operand of code: a name or a chain of names, with calls (see `_CALL`) and subscripts
# (`process.env.DB_PASSWORD`, `os.environ.get('DB_PASS')`, `input.password`, `opts?.token`,
# `cfg.get(env("X"))`), perhaps after `!`, `await` or `typeof`.
CODE_OPERAND: str = (
    r"!{0,2}(?:(?:await|typeof)[ \t]{1,4})?[A-Za-z_$][\w$]{0,80}+"
    r"(?:\??\.[A-Za-z_$][\w$]{0,80}+|" + _CALL + r"|\[[^\[\]\r\n;]{0,80}+\]){0,12}+"
)
# The operators that fall back on their right operand, with the blanks around them: `||`,
# `??`, the Elvis operator `?:` (Kotlin, Groovy, PHP: `System.getenv("TOKEN") ?: "…"`), and
# `or` (with its blanks: `x or'…'` is no Python).
FALLS_BACK: str = r"(?:[ \t]{0,4}(?:\|\||\?\?|\?:)[ \t]{0,4}|[ \t]{1,4}or[ \t]{1,4})"
# A condition (of `? :` or of Python's `if … else`): up to eight terms, each an operand, a
# short literal in words or a number, perhaps after `not`, joined by comparisons (`===`, `!=`,
# `<=`, `is not`, `in`, `not in`) and by `&&`, `||`, `and` or `or`: `isProd`, `env === 'dev'`,
# `os.getenv('CI') is None`, `'DB_PASS' in os.environ`, `cfg and cfg.password`. (Each term is
# written once in the pattern: its operand holds nested calls, and copies of it made the rules'
# patterns slow to compile.)
_WORD_LITERAL = r"[\"'][\w.\-]{0,40}+[\"']"
_NUMBER = r"-?[0-9]{1,12}+(?:\.[0-9]{1,12}+)?"
_TERM = r"(?:not[ \t]{1,4})?(?:" + CODE_OPERAND + r"|" + _WORD_LITERAL + r"|" + _NUMBER + r")"
_OPERATOR = (
    r"(?:[ \t]{0,4}(?:[!=]==?|[<>]=?|&&|\|\|)[ \t]{0,4}"
    r"|[ \t]{1,4}(?:is(?:[ \t]{1,4}not)?|(?:not[ \t]{1,4})?in|and|or)[ \t]{1,4})"
)
_MORE_TERMS = r"(?:" + _OPERATOR + _TERM + r"){0,7}"
_CONDITION = _TERM + _MORE_TERMS
# Python's conditional expression from the `if` after its first operand to the `else` before
# the literal (`os.environ["DB_PASSWORD"] if prod else '…'`, `key if key else '…'`).
_PYTHON_ELSE = r"[ \t]{1,4}if[ \t]{1,4}" + _CONDITION + r"[ \t]{1,4}else[ \t]{1,4}"
# What stands between a credential's name with its assignment and the literal it falls back on
# (an opening parenthesis may come first: `password = (process.env.P || '…')`): an operand,
# then a fallback operator after it and up to three more (`a.secret || b.secret || '…'`), or
# a conditional: the rest of a condition it starts (compared, joined to more tests: `env ===
# 'dev' && !ci`, perhaps closed by `)`), ` ? ` and the literal either right after (the then
# branch) or after another operand and ` : ` (the else branch); or Python's conditional
# expression with the literal as its else branch (see `_PYTHON_ELSE`; a literal in its then
# branch stands right after the name). The first operand is read once.
_MORE_FALLBACKS = r"(?:" + CODE_OPERAND + FALLS_BACK + r"){0,3}"
_BRANCH = (
    _MORE_TERMS
    + r"(?:[ \t]{0,2}\))?[ \t]{1,4}\?[ \t]{1,4}(?:"
    + CODE_OPERAND
    + r"[ \t]{1,4}:[ \t]{1,4})?"
)
FALLBACK_CHAIN: str = (
    r"\(?[ \t]{0,2}"
    + CODE_OPERAND
    + r"(?:"
    + FALLS_BACK
    + _MORE_FALLBACKS
    + r"|"
    + _BRANCH
    + r"|"
    + _PYTHON_ELSE
    + r")"
)
# The rule's cheap test from a credential's assignment on: the code falling back, then a
# quote, which a JSON string may escape (`|| \\"…\\"`).
FALLBACK_AHEAD: str = FALLBACK_CHAIN + r"\\{0,64}+[\"'`]"
# The same test where a JSON string escapes the literal's quote (`|| \\"…\\"`, `else \\"…\\"`),
# perhaps quotes in the code before it too (`os.environ[\\"DB_PASSWORD\\"] if prod else
# \\"…\\"`): the engine decodes the string for the rule to read it (`engine._PLAIN_ASSIGNMENT`).
FALLBACK_ESCAPED: str = (
    r"(?:[^\r\n\\;]|\\{1,64}+[\"']){0,240}?(?:\|\||\?\?|\?:|[ \t]or|[ \t][?:]|[ \t]else)"
    r"[ \t]{0,4}\\"
)
# A shell's parameter expansion that supplies a default (`${DB_PASSWORD:-…}`, `${API_TOKEN:=…}`,
# `${SECRET-…}`, `${SECRET=…}`), in a script, an environment file or a compose file's
# interpolation: the variable's name, then the operator before the default. The default is
# the variable's value when it is unset (or empty, with `:`): a literal, never the code before
# it. After a credential's assignment its `$` is sometimes left out (`PASSWORD={PASSWORD:-'…'}`).
EXPANSION_NAME: str = r"[A-Za-z_][A-Za-z0-9_]{0,80}+"
EXPANSION_OPERATOR: str = r":?[-=]"
# An expansion's opening up to its operator (`:?` and `:+` too); without its `$` with a colon
# only: `{Hunter2-Summer}` is an ODBC password in braces.
_EXPANSION_OPENING = re.compile(
    r"\$\{" + EXPANSION_NAME + r":?[-=?+]|\{" + EXPANSION_NAME + r":[-=?+]"
)


def expansion_operand(text: str, at: int) -> tuple[int, str] | None:
    """Where what follows a shell's parameter expansion's opening and operator starts, and the
    operator, when one starts at `at` (`${PASSWORD:-`, `{PASSWORD:-`, `${TOKEN:?`): a rule that
    reads a value up to a quote or a blank takes the code before a default for it."""
    opening = _EXPANSION_OPENING.match(text, at)
    return None if opening is None else (opening.end(), text[opening.end() - 1])


# A lookup of a configured value by a key that names a credential: a call (`getenv(`,
# `.get(`, `.fetch(`, Java's `getOrDefault(`, `getProperty(`) or a subscript (`env[`,
# `environ[`) with the key quoted, or a member of the environment (`process.env.KEY`,
# `import.meta.env.KEY`); then the default argument after `,`, or a fallback after the call's
# `)`, the subscript's `]` or the member: an operator's right operand, or the else branch of
# a conditional the lookup is the condition or the first branch of (`process.env.API_KEY ?
# process.env.API_KEY : '…'`, `os.environ["DB_PASSWORD"] if "DB_PASSWORD" in os.environ else
# '…'`).
LOOKUP_OPEN: str = (
    r"(?:(?:(?<![\w$])(?i:getenv|getordefault|getproperty)|\.(?i:get|fetch))\([ \t]{0,4}[\"'`]"
    r"|(?<![\w$])(?i:env|environ)\[[ \t]{0,4}[\"'`]"
    r"|(?<![\w$])(?i:env)\.)"
)
_LOOKUP_FALLBACK = (
    r"(?:"
    + FALLS_BACK
    + r"|"
    + _PYTHON_ELSE
    + r"|"
    + _MORE_TERMS
    + r"[ \t]{1,4}\?[ \t]{1,4}"
    + CODE_OPERAND
    + r"[ \t]{1,4}:[ \t]{1,4})"
)
LOOKUP_DEFAULT: str = (
    r"(?:[\"'`][ \t]{0,4},[ \t]{0,4}|(?:[\"'`][ \t]{0,4}[)\]])?" + _LOOKUP_FALLBACK + r")"
)
# Compiled on first use, as the rules' patterns are (a YAML password's value is rare).
_FALLBACK_VALUE = lazy(
    r"(?P<code>" + FALLBACK_CHAIN + r")(?:\"[^\"\r\n]*\"|'[^'\r\n]*'|`[^`\r\n]*`)"
    r"[ \t]{0,4}[,;)}\]]{0,4}"
)


def falls_back_on_a_literal(value: str) -> bool:
    """Whether `value`, read after a credential's name to its line's end (a YAML plain
    scalar's reading: `password: process.env.DB_PASSWORD || '…',` in a pretty-printed object),
    is code falling back on a literal (see `FALLBACK_CHAIN`), its names written, not drawn:
    the literal alone is the value, and `rules.FALLBACK_ASSIGNMENT` judges it."""
    code = _FALLBACK_VALUE.fullmatch(value)
    return code is not None and reads_as_written(code["code"])
