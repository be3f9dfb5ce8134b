"""The gate's own rules applied to plain text: anchors first, then only the rules they wake."""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass
from functools import lru_cache
from itertools import accumulate
from operator import itemgetter

from stet_lsp.gate import heuristics, syntax
from stet_lsp.gate.allowlist import Allowlist
from stet_lsp.gate.keynames import (
    TEST_RESULTS,
    holds_a_credential_uuid,
    name_parts,
    names_other_words,
)
from stet_lsp.gate.patterns import LazyPattern
from stet_lsp.gate.prefilter import AnchorHit, Prefilter, ascii_lower, prefilter_for
from stet_lsp.gate.rules import (
    EXPECTATION,
    METADATA_KEY_SUFFIXES,
    NO_ARGUMENT_METHODS,
    RULES,
    Rule,
    env_value_rule,
)
from stet_lsp.gate.spans import Span

_IDENTIFIER_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")
# Parts of a name that say the value is public (`public_key`, `NEXT_PUBLIC_API_KEY`).
_PUBLIC = frozenset(("public", "publishable", "pub"))
# Names ending so hold a vendor's public app identifier, which its client code ships
# (`DROPBOX_APP_KEY`, `PUSHER_APP_KEY`, `VITE_PUSHER_APP_KEY`); the secret each pairs with
# (`*_APP_SECRET`) is a credential.
_PUBLIC_ENDINGS = (("dropbox", "app", "key"), ("pusher", "app", "key"), ("pusher", "key"))
_MAX_EXTENSION = 8192
# How far past its anchor a block's header line may go on (`Private-Lines: 28`).
_HEADER_REST = 64
_ELLIPSES = ("...", "…", "\\u2026")
_BEGIN = itemgetter(0)
# The rest of an identifier after an anchor (long enough for any key the identifier rules
# match) when `=` or `:` follows within 9 characters (Go's ` string =`), a quote escaped at
# any depth counting as one (`token\\\\\\\": ` in JSON quoted three times), or a string literal
# in parentheses or braces (C++'s `secret("…")`, `api_key{"…"}`: `rules.DIRECT_INIT`), or a
# test's expectation of it (`expect(token).toBe("…")`, `.to eq "…"`: `rules.COMPARED_LITERAL`),
# or an operator and a literal after its methods (`token?.trim() === "…"`).
_OPERATOR_AFTER = (
    r'(?:(?:\\{1,64}+"|[^=:]){0,8}[=:]'
    r"|(?:\[[0-9]{0,6}\])?[ \t]{0,2}[({][ \t]{0,2}(?:u8|[LuU])?\\{0,64}+[\"']"
    r"|[\"'\]\\()]{0,8}(?:" + EXPECTATION + r")[ \t]{0,4}\\{0,64}+[\"']"
    r"|(?:\(\))?"
    + NO_ARGUMENT_METHODS
    + r"[ \t]{0,4}[=!~]==?[ \t]{0,4}[A-Za-z0-9]{0,2}\\{0,64}+[\"'`])"
)
# A method without arguments the compared name is called with (`token?.trim()`): its name is
# judged as a member of the key's (`token.trim`).
_METHOD_NAME = re.compile(r"(?:\?\.|!!\.|\??->|\.)([A-Za-z_][A-Za-z0-9_]{0,30})\(\)")
_OPERATOR_FOLLOWS = re.compile(_OPERATOR_AFTER)
_KEY_THEN_OPERATOR = re.compile(r"[A-Za-z0-9_.\-]{0,128}+(?=" + _OPERATOR_AFTER + ")")
# From a key's end: a number assigned and nothing after it but the end of a JSON value or of
# the line (`"input_tokens":1234,` in every usage record of a transcript). No identifier rule
# takes a number for a secret.
# A closer counts only where the number's value ends: `{"max_tokens": 4}`, `[{"n":4},{…}]`,
# `secret=42,shares=5` (the next a plain assignment), not a password that starts so
# (`SECRET=4}gi12({Lh…`, `4}}gi…`, `4,k=+M0s…`).
_NUMBER_ASSIGNED = re.compile(
    _OPERATOR_AFTER + r"[ \t]{0,4}-?[0-9]{1,15}+(?:\.[0-9]{1,15}+)?"
    r"(?=[,}\]]{1,8}+(?:[\s\"\\{\[]|\Z)|,[A-Za-z_][\w.]{0,40}=(?:-?[0-9]|[A-Za-z_])"
    r"|[\r\n]|\\[nr]|\Z)"
)
# From a key's end: operator, what may precede a value, the value as the rules see it, and no
# backslash anywhere up to its end (decoding a literal cannot change such an assignment), nor
# a call or brace that may open on an escaped literal (`std::string(\\"…\\")`, `{\\"…\\"}`),
# nor, on the same line, an `=` before an escaped literal: what was read was a declared type
# (`secret: string = \\"…\\"`, `api_key: Optional[str] = \\"…\\"`), nor a fallback on an
# escaped literal (`password = process.env.P || \\"…\\"`: `syntax.FALLBACK_ESCAPED`).
_PLAIN_ASSIGNMENT = re.compile(
    r"[^=:\\]{0,7}[=:][=> \t\"'`]{0,10}+[^\s\"'`,;\\<>(){}\[\]]{0,400}+(?![\\({])"
    r"(?![^\n\\=]{0,60}=(?!=)[ \t]{0,4}\\)(?!" + syntax.FALLBACK_ESCAPED + ")"
)
_PLAIN_ASSIGNMENT_REACH = 7 + 1 + 10 + 400 + 1 + 240 + 8
# A name's characters after an anchor, and how far before it the name may start (the
# least `lead` of the identifier rules: each of them reads the name whole).
_IDENTIFIER_RUN = re.compile(r"[A-Za-z0-9_.\-]{0,128}")
_AGAIN_LEAD = 34
# How far after a construct's opening its further values are read (`Rule.further`).
_FURTHER_REACH = 65536


# After the separator that starts a parameter's name, what surely ends its unquoted value,
# and what may: in a query `;` and `#` end it, in a form body (`-d 'a=1&password=x#y'`) they
# are characters of it.
_QUERY = (re.compile("&"), re.compile("[&;#]"))
_URL_SURE_END = re.compile("[&#]")  # `#` starts a URL's fragment
_PARAMETER_SEPARATORS = {"?": _QUERY, "&": _QUERY, ";": (re.compile(";"), re.compile(";"))}
_QUOTES = frozenset("\"'`")
# What a value opens on right before a name it assigns again (`password: {password: …}`,
# `secret: ["token": …]`, `password: (password=…)`).
_OPENS_ON_A_NAME = re.compile(r"[{\[(][ \t]{0,4}[\"']?")
# A bracket opened right before a name (`{password: …}`, `f(password=…)`), and the one that
# closes it.
_OPENED_BEFORE = re.compile(r"([{\[(])[ \t]{0,4}[\"']?\Z")
_OPENERS = {"}": "{", "]": "[", ")": "("}
# What starts the stretch a single quote's parity is counted over: a newline, raw or escaped
# (`\\n` in a JSON string), a double quote (a JSON string's start).
_LINE_STARTS = ("\n", "\\n", '"')
# `$NAME` whole, and a command-line flag right before a value: attached (`-p'…'`) or a
# blank apart (`-p '…'`, `--password '…'`).
_QUOTED_DOLLAR = re.compile(r"\$[A-Za-z_][A-Za-z0-9_]{0,80}")
_FLAG_BEFORE = re.compile(r"(?<![\w\-])--?[A-Za-z][A-Za-z0-9\-]{0,40}[ \t]?\Z")
# What opens a literal or an argument a value may stand in (`"…"`, `f("…")`, `{…}`).
_LITERAL_OPENERS = frozenset("\"'`({[")
# A test log's verdict line: the verdict, upper-case, starts its line (perhaps indented, or
# after Go's `--- `), then `: ` and the test's name (`PASS: gas/i386/x86-64-pr20141`,
# `UNSUPPORTED: ld-elf/pr26256-2b-alt`, `    --- PASS: TestParse/empty`), or Go's `=== RUN`
# or DejaGnu's `Running <path>.exp ...` that starts a test file's verdicts (GDB's own
# `DUPLICATE:` marks a test's name given twice).
# Of the verdicts only those that say `PASS` are read as a password's name. A line is a
# verdict line by its verdict and its shape, whatever the name after it.
_VERDICT_KEYS = frozenset(("PASS", "XPASS", "KPASS"))
_VERDICT_LEAD = re.compile(r"[ \t]{0,16}(?:--- )?")
# OpenJDK's jtreg says `Passed: ` and the test's path under its suite's root, a source, a
# shell script, an applet's page or a class file's assembly, perhaps one of its cases after
# `#` (`Passed: java/net/httpclient/ManyRequests.java`, `Passed: runtime/condy/BadLDC2_W.jasm`,
# `Passed: tools/javac/T8024039.java#id1`): a line of its summary, alone too. A password is
# written as no relative path to a test's file; `PASS:` and `Password:` name no jtreg verdict.
_JTREG_PASSED = "Passed"
_JTREG_TEST_PATH = re.compile(
    r"(?:[A-Za-z0-9_\-][A-Za-z0-9_.\-]{0,100}/){1,30}[A-Za-z0-9_\-][A-Za-z0-9_.\-]{0,100}"
    r"\.(?:java|jasm|jcod|sh|html)(?:#[A-Za-z0-9_.\-]{1,200})?"
)
_INDENT = re.compile(r"[ \t]{0,16}")
_EXPANSION_NAME = re.compile(syntax.EXPANSION_NAME)
_REFERENCE = re.compile(r"\$[{(A-Za-z_]")
# A literal beside an expansion's code that may be judged as the value read whole was: eight
# characters or more, no blank or `/`, a lower-case letter and a digit or a capital.
_TOKEN_LIKE = re.compile(r"(?=[^\s/]*[a-z])(?=[^\s/]*[A-Z0-9])[A-Za-z0-9][^\s/]{7,}+\Z")
_BRACKETS = {"{": re.compile(r"[{}]"), "(": re.compile(r"[()]")}
# What ends a line after a value: a newline, raw, or in JSON text escaped or the string's end.
_LINE_END = re.compile(r"[ \t]{0,16}\r?(?:\n|\Z)")
_ESCAPED_LINE_END = re.compile(r"[ \t]{0,16}(?:\r?(?:\n|\Z)|(?:\\r)?\\n|\")")
# What Go writes after a test's name on its verdict line: the time the test took.
_GO_VERDICT_TIME = re.compile(r" \([0-9]{1,6}\.[0-9]{2,3}s\)")
_VERDICT_LINE = re.compile(
    r"[ \t]{0,16}(?:(?:--- )?(?:PASS|FAIL|XFAIL|XPASS|SKIP|ERROR|UNRESOLVED|UNSUPPORTED"
    r"|UNTESTED|KPASS|KFAIL|DUPLICATE): |=== (?:RUN|PAUSE|CONT|NAME) "
    r"|Running [^ \t\n\\]{1,300}\.exp \.\.\.)"
)
# How far a verdict line's neighbour is looked for: a test's name and its notes.
_VERDICT_REACH = 400
# A line naming a user (`USER: bob`, `Username: bob`, `login: bob`): a `PASS:` line right
# after it is that login's password, whatever lines follow; a test log names no user
# between its verdicts.
_USERS_NAME_LINE = re.compile(r"[ \t]{0,16}(?i:user(?:[ _]?name)?|login)[ \t]{0,4}[:=]")
_BREAKS = ("\n", "\\n")  # a newline, raw or escaped (`\\n` in a JSON string)
# An OpenPGP key's id or fingerprint (16 or 40 hex digits) under a GPG or PGP key's name: the
# public key that signs a release, as the official Python images set it (`GPG_KEY=A035C8C1…`,
# in every `docker inspect` and `env` of one). A private key exported is no hex; a name that
# also says what else it holds (`GPG_PASSPHRASE`, `PGP_SECRET`, `SIGNING_GPG_TOKEN`) is
# judged as any other, whatever its value looks like.
_OPENPGP_NAME = re.compile(r"(?i:gpg|pgp)")
_OPENPGP_SECRET_NAME = re.compile(r"(?i:pass|secret|token|pwd|auth|private|api|cred|session)")
_OPENPGP_ID = re.compile(r"(?:0x)?(?:[0-9A-Fa-f]{16}|[0-9A-Fa-f]{40})")


# A URL's user given as its password: an account's default (`root:root`, `admin:admin`,
# `guest:guest`) is its working password, however placeholder-like the word.
_ACCOUNT_NAME = re.compile(r"[A-Za-z0-9_.\-]+")


def _repeats_user(match: re.Match[str], value: str) -> bool:
    return (
        "user" in match.re.groupindex
        and match.group("user") == value
        and _ACCOUNT_NAME.fullmatch(value) is not None
    )


def _line_start(text: str, at: int, reach: int, breaks: tuple[str, ...] = _BREAKS) -> int:
    """Where the line holding `at` starts: after a newline (of `breaks`, raw or escaped) or,
    in JSON text (`breaks` escaped too), a string's opening quote, at most `reach` characters
    before `at`; -1 when none is that near. A quote in a line's text (`print "x"`, escaped
    `\\"` in JSON) starts nothing."""
    floor = max(0, at - reach)
    line = -1 if floor else 0
    for mark in breaks:
        found = text.rfind(mark, floor, at)
        if found >= 0:
            line = max(line, found + len(mark))
    if "\\n" in breaks:
        quote = text.rfind('"', max(floor, line), at)
        while quote > 0 and text[quote - 1] == "\\":
            quote = text.rfind('"', max(floor, line), quote)
        if quote >= 0:
            line = quote + 1
    return line


def _after_an_escape(text: str, at: int) -> bool:
    """Whether the character at `at` is the letter of an escape (`\\n`, `\\t`), an odd
    number of backslashes before it."""
    backslashes = 0
    while at - backslashes > 0 and text[at - backslashes - 1] == "\\":
        backslashes += 1
    return backslashes % 2 == 1


def _after_a_break(text: str, at: int) -> bool:
    """Whether the character at `at` is the letter of an escape (`_after_an_escape`), or of a
    line break or tab escaped at any depth (`\\\\npassword:` in a tool's JSON result)."""
    return _after_an_escape(text, at) or (
        text[at : at + 1] in ("n", "r", "t") and text.startswith("\\", at - 1)
    )


def _is_openpgp_id(key: str, value: str) -> bool:
    return (
        _OPENPGP_NAME.search(key) is not None
        and _OPENPGP_SECRET_NAME.search(key) is None
        and _OPENPGP_ID.fullmatch(value) is not None
    )


@dataclass(frozen=True)
class RuleSet:
    rules: tuple[Rule, ...]
    by_anchor: dict[str, tuple[tuple[int, Rule], ...]]
    everywhere: tuple[tuple[int, Rule], ...]
    prefilter: Prefilter
    """Finds the rules' anchors and the keywords given to detect-secrets, in one pass."""
    keywords: frozenset[str]
    key_anchors: frozenset[str]
    """Anchors that wake identifier rules only: a hit not followed by `=` or `:` is skipped."""
    multiline_anchors: frozenset[str]
    """Anchors of rules that read a value over several lines."""


@lru_cache(maxsize=32)
def rule_set(
    strict: bool,
    env_names: tuple[str, ...],
    keywords: tuple[str, ...] = (),
    multiline_only: bool = False,
) -> RuleSet:
    """The active rules (with `multiline_only`, those that read a value over several lines),
    the configured variables' rule first."""
    rules = [rule for rule in RULES if strict or not rule.strict_only]
    if multiline_only:
        rules = [rule for rule in rules if rule.multiline]
    env_rule = env_value_rule(env_names)
    if env_rule is not None and not multiline_only:
        rules.insert(0, env_rule)
    by_anchor: dict[str, list[tuple[int, Rule]]] = {}
    everywhere = []
    for priority, rule in enumerate(rules):
        if not rule.anchors:
            everywhere.append((priority, rule))
        for anchor in rule.anchors:
            by_anchor.setdefault(anchor, []).append((priority, rule))
    return RuleSet(
        rules=tuple(rules),
        by_anchor={anchor: tuple(entries) for anchor, entries in by_anchor.items()},
        everywhere=tuple(everywhere),
        prefilter=prefilter_for(tuple(sorted(set(by_anchor) | set(keywords)))),
        keywords=frozenset(keywords),
        # A name's own words (`token`), not the syntax after one (`rules.LITERAL_IN_A_TUPLE`'s
        # ` in (`).
        key_anchors=frozenset(
            anchor
            for anchor, entries in by_anchor.items()
            if all(rule.start == "identifier" for _, rule in entries)
            and anchor[:1] in _IDENTIFIER_CHARS
        ),
        multiline_anchors=frozenset(
            anchor for anchor, entries in by_anchor.items() if any(r.multiline for _, r in entries)
        ),
    )


def _expansion_operand(
    text: str, key_start: int, key_end: int, start: int
) -> tuple[int, str] | None:
    """Where the text after a shell's parameter expansion's operator starts, and the operator,
    when a value read at `start` after a name at `key_start:key_end` starts in one: read from
    the operator, the name's `:` taken for an assignment (`${DB_PASSWORD:-Xk9…}`, `:?`, `:+`),
    read after `:=` or `=` (`${SECRET_KEY:=…}`), or the expansion's code read for the value
    (`PASSWORD=${PASSWORD:-'…'}`, `syntax.expansion_operand`)."""
    if key_start >= 2 and text.startswith("${", key_start - 2):
        if (
            text.startswith((":-", ":?", ":+"), start - 1)
            and _EXPANSION_NAME.fullmatch(text, key_start, start - 1) is not None
        ):
            return start + 1, text[start]
        if (
            text[key_end:start] in (":=", "=")
            and _EXPANSION_NAME.fullmatch(text, key_start, key_end) is not None
        ):
            return start, "="
    elif (
        key_start >= 1
        and text[key_start - 1] == "{"
        and text.startswith(":-", start - 1)
        and _EXPANSION_NAME.fullmatch(text, key_start, start - 1) is not None
    ):
        # `{API_KEY:-…}`, the `$` left out (`syntax.expansion_operand` reads it from the `{`);
        # `:?`, `:+` and `:=` there may be code's (`{pwd:+x}`)
        return start + 1, "-"
    return syntax.expansion_operand(text, start)


def _closing(text: str, at: int, end: int, opening: str) -> int:
    """Where the bracket that matches an `opening` one (`{`, `(`) closes, looking from `at`
    (just after it) up to `end`; -1 when it does not close before."""
    depth = 1
    for bracket in _BRACKETS[opening].finditer(text, at, end):
        if bracket.group() == opening:
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                return bracket.start()
    return -1


def _past_references(text: str, start: int, end: int) -> int:
    """Where the text at `start` holds no more shell references before `end`: past `${…}`,
    `$(…)` and `$NAME` that a default starts with (`${PASSWORD:-${PREFIX}Xk9…}`,
    `${PASSWORD:-$PREFIX-Xk9…}`); `end` when one does not close before it."""
    while start < end and text[start] == "$":
        if text.startswith("${", start) or text.startswith("$(", start):
            opening = text[start + 1]
            close = _closing(text, start + 2, end, opening)
            if close < 0:
                return end
            start = close + 1
            continue
        name = _EXPANSION_NAME.match(text, start + 1, end)
        if name is None:
            return end  # `$'…'`, a lone `$`, `$1`, `$@`: the reading ends (no literal read)
        start = name.end()
    return start


def _innermost_default(text: str, start: int, end: int) -> int:
    """Where a default starting at `start` holds its literal: past the openings of the
    expansions nested in it (`${PGPASSWORD:-${OTHER:-Xk9…}}`), each a default of its own."""
    while start < end:
        inner = syntax.expansion_operand(text, start)
        if inner is None or inner[1] in "?+":
            break
        start = inner[0]
    return start


def _word_start(text: str, position: int) -> int:
    """Where the run of text without blanks or quotes that holds `position` starts (looking
    back at most 4096 characters): a URL, a form body."""
    floor = max(0, position - 4096)
    return max(text.rfind(mark, floor, position) for mark in (" ", "\t", "\n", '"', "'")) + 1


def _brace_end(text: str, start: int, end: int) -> int:
    """The end of the braced value at `start` (ODBC's `{…}`, where `}}` is a brace), or `end`
    when it does not close before."""
    position = start + 1
    while (close := text.find("}", position, end)) >= 0:
        if text.startswith("}}", close):
            position = close + 2
            continue
        return close + 1
    return end


def is_metadata_key(key: str) -> bool:
    """`token_type`, `max_tokens`, `apiKeyId`: names about a credential, not holding one."""
    parts = name_parts(key)
    return bool(parts) and (
        parts[-1] in METADATA_KEY_SUFFIXES
        or not _PUBLIC.isdisjoint(parts)
        or any(tuple(parts[-len(ending) :]) == ending for ending in _PUBLIC_ENDINGS)
    )


def holds_words_of_no_credential(key: str, value: str) -> bool:
    """Words under a name whose credential letters stand in other words
    (`_reportTokenizationTime: (timeMs:`, `InternalPassthroughApis = Omit<ITerminalApi`):
    no secret; a drawn or signed value there is one (`passthru_db=Xk9m…`, `spring35!`)."""
    return names_other_words(key) and heuristics.reads_as_words(value)


class RuleScanner:
    """Runs one rule set over one text; holds the per-scan state."""

    def __init__(
        self,
        text: str,
        rules: RuleSet,
        *,
        strict: bool,
        allowlist: Allowlist | None,
        lowered: str | None = None,
        escapes: bool = True,
    ) -> None:
        self.text = text
        self.escapes = escapes
        """Whether to collect the hits JSON escapes may hide a secret at (`hits`)."""
        self.lowered = ascii_lower(text) if lowered is None else lowered
        self.rules = rules
        self.strict = strict
        self.allowlist = allowlist
        self.spans: list[Span] = []
        self._tried: set[tuple[int, int]] = set()
        self._judged: dict[tuple[int, str, str | None, bool, bool, bool, bool, bool], bool] = {}
        self._covered_until: dict[int, int] = {}
        self._further_until: dict[int, int] = {}
        """Per rule that reads further values (`Rule.further`): where it read them up to."""
        self._covered_from: dict[int, int] = {}
        """Per rule: where the value that reaches `_covered_until` starts."""
        self._token_until: dict[int, int] = {}
        """Per rule that extends its tokens: the end of the last token it read."""
        self._defaults: list[Span] = []
        """Defaults of shell expansions read with the expansion's code or operator, without
        them: each stands where no rule that reads a default alone took it (`run`)."""
        self._runs: dict[int, tuple[int, int, bool]] = {}
        """Per rule: the run of token characters last read (start, end, whether whole)."""
        self._key_end: tuple[int, int | None] = (-1, None)
        """The last `_assigned_key_end` answer: each hit asks up to three times."""
        self._again: tuple[int, int] = (-1, -1)
        """The end of the name `_assigned_again` read last, and its start when it is assigned
        again (else -1): each anchor in the name asks."""
        self.hits: list[AnchorHit] = []
        """Anchors that found nothing but might behind JSON escapes: worth decoding."""
        self.keyword_hits: list[int] = []
        self.block_hits: list[int] = []
        """Offsets of the anchors of rules that read a value over several lines."""
        self.unmatched_prefixes: list[int] = []
        """Offsets of token prefixes that led to no span: worth a second opinion."""

    def run(self) -> list[Span]:
        by_anchor = self.rules.by_anchor
        keywords = self.rules.keywords
        key_anchors = self.rules.key_anchors
        multiline_anchors = self.rules.multiline_anchors
        # Window rules run after the loop, once over each stretch their anchors' windows
        # cover; their answers for a hit (live, found) complete these then.
        windows: dict[int, list[AnchorHit]] = {}
        undecided_prefixes: list[AnchorHit] = []
        for offset, anchor in self.rules.prefilter.find(self.lowered, self.text):
            if anchor in keywords:
                self.keyword_hits.append(offset)
            if anchor in multiline_anchors:
                self.block_hits.append(offset)
            if anchor not in by_anchor:
                continue
            if anchor in key_anchors:
                key_end = self._assigned_key_end(offset + len(anchor))
                if key_end is None or _NUMBER_ASSIGNED.match(self.text, key_end):
                    continue  # no identifier rule can match here, nor escapes hide one
            found = False
            prefix_rule = False
            live = False
            windowed = False
            # Whether escapes may hide an identifier rule's match here: the same for each.
            hidden: bool | None = None
            # Whether the name is assigned its own assignment again (`pwd=pwd=pwd=…`): the
            # same for each identifier rule.
            again: bool | None = None
            for priority, rule in by_anchor[anchor]:
                if rule.start == "window":
                    if self._window_may_match(rule, offset, len(anchor)):
                        windows.setdefault(priority, []).append((offset, anchor))
                        windowed = True
                    continue
                # No identifier rule takes a name's assignment written again for its value
                # (`_accept`): the next hit reads what is assigned.
                if rule.start == "identifier" and again is None:
                    again = self._assigned_again(offset, offset + len(anchor))
                skipped = again and rule.start == "identifier"
                matched = not skipped and self._try(priority, rule, offset, len(anchor))
                found |= matched
                # A block rule that finds no block has decided: a bare header is no secret.
                prefix_rule |= rule.start == "anchor" and len(anchor) >= 4 and rule.block is None
                if live or matched or not self.escapes:
                    continue
                if rule.start != "identifier":
                    live = self._may_hide_behind_escapes(rule, offset, len(anchor))
                    continue
                if hidden is None:
                    hidden = self._may_hide_behind_escapes(rule, offset, len(anchor))
                live = hidden
            if live:
                self.hits.append((offset, anchor))
            if prefix_rule and not found:
                if windowed:
                    undecided_prefixes.append((offset, anchor))
                else:
                    self.unmatched_prefixes.append(offset)
        if windows:
            self._run_windows(windows, undecided_prefixes)
        for priority, rule in self.rules.everywhere:
            for match in rule.pattern.finditer(self.text):
                self._accept(priority, rule, match)
        if self._defaults:
            self.spans += self._defaults_read_alone_nowhere()
        return self.spans

    def _defaults_read_alone_nowhere(self) -> list[Span]:
        """The defaults read with their expansion's code (`_defaults`) that no span of a rule
        reading a default alone overlaps: those rules found the default's end, the others
        read on to a blank or a quote. Where they judged it no secret, or missed it (no `}`,
        a blank before it), the other reading stands; where it ran on past the expansion's
        `}` (`${API_TOKEN:-Xk9…}7RtZ…`), it stands for what follows."""
        rules = self.rules.rules
        alone = sorted(
            (span.start, span.end)
            for span in self.spans
            if span.priority < len(rules) and rules[span.priority].reads_defaults
        )
        starts = [start for start, _ in alone]
        furthest = list(accumulate((end for _, end in alone), max))
        kept = []
        for span in self._defaults:
            before = bisect_left(starts, span.end)
            if before == 0 or furthest[before - 1] <= span.start:
                kept.append(span)
                continue
            rest = furthest[before - 1]
            rest += self.text.startswith("}", rest)
            if rest < span.end and self.text[rest].isalnum():  # not `/path`, `@host`, …
                kept.append(span._replace(start=rest))
        return kept

    def _window_may_match(self, rule: Rule, offset: int, anchor_length: int) -> bool:
        """A window rule's cheap tests of a hit: what must precede and follow its anchor."""
        if rule.after is not None and rule.after.match(self.text, offset + anchor_length) is None:
            return False
        before = rule.before
        if before is None:
            return True
        return before.search(self.text[max(0, offset - rule.lead) : offset].lower()) is not None

    def _run_windows(
        self, windows: dict[int, list[AnchorHit]], undecided_prefixes: list[AnchorHit]
    ) -> None:
        """Each window rule searches once over every stretch of text its anchors' windows
        cover (overlapping windows joined), so dense anchors cost no more than the text: a
        window per anchor made hostile input (an anchor repeated) quadratic. A hit is live
        (worth decoding behind escapes) when one of its window rules found nothing near it."""
        found: set[AnchorHit] = set()
        live: set[AnchorHit] = set()
        for priority, hits in windows.items():
            rule = self.rules.rules[priority]
            for hit, matched in self._search_windows(priority, rule, hits):
                (found if matched else live).add(hit)
        if live:
            known = set(self.hits)
            self.hits.extend(hit for hit in live if hit not in known)
            self.hits.sort()
        for offset, anchor in undecided_prefixes:
            if (offset, anchor) not in found:
                self.unmatched_prefixes.append(offset)

    def _search_windows(
        self, priority: int, rule: Rule, hits: list[AnchorHit]
    ) -> list[tuple[AnchorHit, bool]]:
        """Searches the windows around `hits` (in order of offset) for `rule`, each stretch
        of overlapping windows once; every hit with whether an accepted match meets its
        window."""
        text = self.text
        size = len(text)
        line_end = -1
        windows: list[tuple[int, int, AnchorHit]] = []
        for hit in hits:
            offset, anchor = hit
            begin = max(0, offset - rule.lead)
            end = min(size, offset + len(anchor) + rule.reach)
            if not rule.multiline:
                newline = text.rfind("\n", begin, offset)
                begin = newline + 1 if newline >= 0 else begin
                if line_end < offset:
                    line_end = text.find("\n", offset)
                    line_end = size if line_end < 0 else line_end
                end = min(end, line_end)
            windows.append((begin, end, hit))
        windows.sort(key=_BEGIN)
        matches: list[tuple[int, int]] = []
        stretch_begin, stretch_end = windows[0][0], windows[0][1]
        for begin, end, _ in windows[1:]:
            if begin > stretch_end:
                matches += self._search_stretch(priority, rule, stretch_begin, stretch_end)
                stretch_begin = begin
            stretch_end = max(stretch_end, end)
        matches += self._search_stretch(priority, rule, stretch_begin, stretch_end)
        answers = []
        index = 0
        for begin, end, hit in windows:
            # Matches come in order, neither starts nor ends going back.
            while index < len(matches) and matches[index][1] <= begin:
                index += 1
            answers.append((hit, index < len(matches) and matches[index][0] < end))
        return answers

    def _search_stretch(
        self, priority: int, rule: Rule, begin: int, end: int
    ) -> list[tuple[int, int]]:
        """The accepted matches of `rule` in text[begin:end], in order. A rejected match
        (a shell reference, a placeholder) does not hide a match starting inside it."""
        accepted = []
        position = begin
        search = rule.pattern.search
        while position < end:
            match = search(self.text, position, end)
            if match is None:
                break
            start, stop = match.span()
            if self._accept(priority, rule, match):
                accepted.append((start, stop))
                position = max(stop, start + 1)
            else:
                position = start + 1
        return accepted

    def _may_hide_behind_escapes(self, rule: Rule, offset: int, anchor_length: int) -> bool:
        """Whether JSON escapes may hide a secret here that the raw text did not show."""
        if rule.start == "identifier":
            key_end = self._assigned_key_end(offset + anchor_length)
            return (
                key_end is not None
                and self._escape_in_assignment(key_end)
                and self._assigns(offset)
            )
        if rule.start == "anchor":
            # `\nghp_...`: the escape's letter defeats the rule's boundary look-behind; a
            # vendor's name assigned a value (`SIDEKIQ_KEY = \"…\"` in a JSON string) or a
            # call's arguments (`setdefault(\"API_TOKEN\", \"…\")`): the escaped quote stands
            # where the rule reads the assignment.
            end = offset + anchor_length
            if "\\" in self.text[max(0, offset - 6) : offset] or self.text.startswith("\\", end):
                return True
            # A block's header ends its line: in JSON text, with an escaped newline.
            if rule.multiline and "\\" in self.text[end : end + _HEADER_REST]:
                return True
            key_end = self._assigned_key_end(end)
            return key_end is not None and self._escape_in_assignment(key_end)
        return True

    def _assigned_key_end(self, anchor_end: int) -> int | None:
        """The end of the identifier holding an anchor when `=` or `:` follows it closely:
        a cheap test every identifier-rule match and every `_assigns` passes."""
        if self._key_end[0] != anchor_end:
            match = _KEY_THEN_OPERATOR.match(self.text, anchor_end)
            self._key_end = (anchor_end, None if match is None else match.end())
        return self._key_end[1]

    def _assigned_again(self, offset: int, anchor_end: int) -> bool:
        """Whether the name holding the anchor at `offset:anchor_end` is assigned, glued, its
        own assignment again (`pwd=pwd=`, `password:password:`)."""
        text = self.text
        name = _IDENTIFIER_RUN.match(text, anchor_end)
        key_end = anchor_end if name is None else name.end()
        if self._again[0] != key_end:
            again = -1
            if text.startswith(("=", ":"), key_end):
                start = offset
                floor = max(0, offset - _AGAIN_LEAD)
                while start > floor and text[start - 1] in _IDENTIFIER_CHARS:
                    start -= 1
                whole = start == 0 or text[start - 1] not in _IDENTIFIER_CHARS
                if whole and text.startswith(text[start : key_end + 1], key_end + 1):
                    again = start
            self._again = (key_end, again)
        # Each identifier rule reads the name whole from an anchor this close to its start.
        start = self._again[1]
        return start >= 0 and offset - start <= _AGAIN_LEAD

    def _escape_in_assignment(self, key_end: int) -> bool:
        """Whether a backslash sits between the key and its value or ends the raw value:
        only then can decoding the literal change what the identifier rules see."""
        if self.text.find("\\", key_end, key_end + _PLAIN_ASSIGNMENT_REACH) < 0:
            return False  # no backslash where the pattern reads: it matches
        return _PLAIN_ASSIGNMENT.match(self.text, key_end) is None

    def _assigns(self, offset: int) -> bool:
        """Whether the identifier at `offset` is a credential's name followed by a value."""
        text = self.text
        end = offset
        while end < len(text) and end - offset < 48 and text[end] in _IDENTIFIER_CHARS:
            end += 1
        if _OPERATOR_FOLLOWS.match(text, end) is None:
            return False
        start = offset
        while start > 0 and offset - start < 48 and text[start - 1] in _IDENTIFIER_CHARS:
            start -= 1
        return not is_metadata_key(text[start:end])

    def _try(self, priority: int, rule: Rule, offset: int, anchor_length: int) -> bool:
        """An anchor or identifier rule at one hit (window rules: `_search_windows`)."""
        text = self.text
        if rule.start == "anchor":
            if offset < self._covered_until.get(priority, -1):
                return True
            if offset < self._token_until.get(priority, -1):
                return False
            match = rule.pattern.match(text, offset)
            return match is not None and self._accept_construct(priority, rule, match)
        if rule.after is not None and rule.after.match(text, offset + anchor_length) is None:
            return False
        start = offset
        floor = max(0, offset - rule.lead)
        while start > floor and text[start - 1] in _IDENTIFIER_CHARS:
            start -= 1
        if (priority, start) in self._tried:
            return False
        self._tried.add((priority, start))
        if start < self._covered_until.get(priority, -1) and not self._opened_on(priority, start):
            return True  # inside a value this rule took: `SECRET_KEY=SECRET_KEY=…` repeated
        match = rule.pattern.match(text, start, offset + anchor_length + rule.reach)
        return match is not None and self._accept_construct(priority, rule, match)

    def _accept_construct(self, priority: int, rule: Rule, match: re.Match[str]) -> bool:
        """The match's value, and the further values of the construct it opens (`Rule.further`)."""
        found = self._accept(priority, rule, match)
        if rule.further is not None:
            found |= self._accept_further(priority, rule, match)
        return found

    def _accept(
        self,
        priority: int,
        rule: Rule,
        match: re.Match[str],
        piece: tuple[int, int] | None = None,
        shown: tuple[int, int] | None = None,
    ) -> bool:
        """Whether the match's value is a secret (its span then added); `piece`: a part of the
        value read in a shell's expansion to judge instead (`_expansion_pieces`), `shown`: the
        part that then goes, when not the one judged."""
        group = "secret" if "secret" in rule.pattern.groupindex else 0
        start, end = match.span(group) if piece is None else piece
        if start < 0:
            return False  # what the pattern reads only to skip (a Stet id in strict mode)
        if "compared" in match.re.groupindex:
            return self._accept_compared(priority, rule, match)
        if rule.block is not None and piece is None:
            block_end = rule.block(self.text, match, rule.reach)
            if block_end is None:
                return False
            end = block_end
        # Hostile text repeats one assignment thousands of times: judge each value once.
        key = match.group("key") if "key" in match.re.groupindex else None
        if key and self.escapes and _after_a_break(self.text, match.start("key")):
            key = key[1:]  # `\\nPASS:` in a JSON string: the escape's `n` is no part of the name
        if (
            key
            and self.text.startswith(key, start)
            and self.text[start + len(key) : start + len(key) + 1] in ("=", ":")
        ):
            # `pwd=pwd=pwd=…`: the value is the assignment written again, whose own hit
            # judges what it assigns.
            return False
        # A value that starts in a shell's parameter expansion (`${DB_PASSWORD:-Xk9…}`): a
        # literal default (`:-`, `:=`, `-`, `=`) is judged as read, and goes without the code
        # before it unless a rule that reads a default alone took it (`_defaults`); else the
        # literal parts the value holds are judged each alone (`_expansion_pieces`).
        operand = None
        if piece is None:
            operand = (
                _expansion_operand(self.text, match.start("key"), match.end("key"), start)
                if key is not None
                else syntax.expansion_operand(self.text, start)
            )
            if operand is not None and (read := self._expansion_pieces(operand, end)):
                code_end, pieces = read
                # Each judged alone, or as the value read whole was if it reads as a token
                # (`${PW:?}x6Ts.MVyx.2XPS`, a dotted literal reads as a name alone; not a path
                # after `$HOME` nor a word, `$USER-secret`).
                found = False
                for part in pieces:
                    found |= self._accept(priority, rule, match, part) or (
                        _TOKEN_LIKE.match(self.text, *part) is not None
                        and self._accept(priority, rule, match, (start, end), part)
                    )
                # Where the value holds no literal, neither does the expansion's code for this
                # rule's other hits in it (`${SECRET_KEY:=$(openssl …)}`); the text after its
                # `}` may (`,password=…`). Those in a literal's expansion judge it as read from
                # there (`-${OTHER}x6Ts.MVyx.2XPS}` from the `-` of `:-`). A value that stops at
                # the (innermost) operator read none of the default: a quote may open it past the
                # value (`${api_key:="Xk9…"` with no `}`, `${A:-${api_key="Xk9…" }}`), for the
                # name's own hit to judge.
                if (
                    not pieces
                    and _innermost_default(self.text, operand[0], end) < end
                    and code_end > self._covered_until.get(priority, -1)
                ):
                    self._covered_until[priority] = code_end
                    self._covered_from[priority] = start
                return found
        # The credential's name the syntax around the value is read from: the key, or a name
        # a rule reads without a key's other checks (`password = options.password;`).
        named = "key" if key is not None else "name" if "name" in match.re.groupindex else None
        if key is not None and self._closes_what_opened_on(match.start("key"), start, end):
            # `{password: Xk9q…}`: the brace closes the mapping, not the value, which is judged
            # without it as it would be bare (`Summer2024!}` reads as code's expression)
            end -= 1
        if named is not None and syntax.value_is_code(
            self.text, match.start(named), match.end(named), start, end
        ):
            return False  # `token: CancellationToken)`, `{password:e,…}`, CSS: code
        form = ""
        if group == "secret" and key is not None:
            surely, maybe, form = self._parameter_ends(match, start, end)
            # Up to a separator that may end the value when what it ends is a secret, else up
            # to the one that surely does (`password=Pa55#w0rd!Xk9&a=1` in a form body).
            if maybe < surely and self._judge(priority, rule, self.text[start:maybe], key):
                end = maybe
            else:
                end = surely
        if rule.extend_run is not None:
            end = self._extended(priority, rule.extend_run, end)
            # A token reaching over this rule's later anchors (`fo1_fo1_…`) holds them: none
            # of them starts a token of its own.
            self._token_until[priority] = max(self._token_until.get(priority, -1), end)
        value = self.text[start:end]
        # A braced value is judged by what the braces hold (`{Xk9q…}` is no `{template}`); a
        # parameter (of a URL, a form body, a connection string) holds text, never code's
        # name (`?secret=x9Kq2mZ7Lp4`, `;Pwd=Hunter2Summer`).
        judged = value[1:-1] if form == "braced" and len(value) > 2 else value
        if (
            not value
            or (key is not None and syntax.names_itself(key, value))
            or heuristics.is_command_substitution(self.text, start, end)
            or heuristics.is_call_on_a_literal(self.text, start, end)
            or syntax.inside_arn(self.text, min(start, match.start()))
        ):
            return False
        if self._shell_quoted_dollar(start, end) or _repeats_user(match, value):
            secret = self._judge(priority, rule, judged, key, literal=True, quoted=True)
        else:
            # Written bare after its name (`password=hunter22`), not a literal in code; an
            # environment line's value (`DB_PASSWORD=…`) is `env-assignment`'s to judge.
            before = self.text[start - 1] if start > 0 else ""
            bare = bool(before) and before not in _LITERAL_OPENERS
            bare &= not (before == "=" and key is not None and key.isupper())
            login = key in TEST_RESULTS and self._is_a_login(match, start)
            verdict = key is not None and not login and self._is_verdict(match, start, end)
            secret = self._judge(
                priority,
                rule,
                judged,
                key,
                literal=form != "",
                bare=bare,
                verdict=verdict,
                login=login,
            )
        if not secret or not self._methods_judged(priority, rule, match, judged, key):
            return False
        if self.text.startswith(_ELLIPSES, end) and heuristics.is_placeholder(value + "..."):
            return False  # `API_KEY=sk-ant-...`: the rules' values stop before a final dot
        if shown is not None:
            self.spans.append(Span(*shown, rule.name, priority, rule.replacement, rule.prefix))
            return True
        if operand is None:
            self.spans.append(Span(start, end, rule.name, priority, rule.replacement, rule.prefix))
        else:
            default = _innermost_default(self.text, operand[0], end)
            self._defaults.append(
                Span(default, end, rule.name, priority, rule.replacement, rule.prefix)
            )
        self._cover(priority, start, end)
        return True

    def _cover(self, priority: int, start: int, end: int) -> None:
        """Notes the value this rule took last, when it reaches further than any before."""
        if end > self._covered_until.get(priority, -1):
            self._covered_until[priority] = end
            self._covered_from[priority] = start

    def _accept_compared(
        self, priority: int, rule: Rule, match: re.Match[str], name: str | None = None
    ) -> bool:
        """A literal written before the credential's name it is compared with (`"…" ==
        token`, `compare_digest("…", token)`), or after it in a construct that named it before
        (`name`: a `case`'s later patterns): judged as the same literal after the name is, the
        name its key. Nothing between them is a value's syntax to read."""
        start, end = match.span("secret")
        key = match.group("compared") if name is None else name
        value = self.text[start:end]
        if not self._judge(priority, rule, value, key) or syntax.names_itself(key, value):
            return False
        if not self._methods_judged(priority, rule, match, value, key):
            return False
        self.spans.append(Span(start, end, rule.name, priority, rule.replacement, rule.prefix))
        self._cover(priority, start, end)
        return True

    def _accept_further(self, priority: int, rule: Rule, match: re.Match[str]) -> bool:
        """Whether any of the further values of the construct `match` opens (`Rule.further`:
        a `case`'s later patterns) is a secret compared with its name; each one found is added.
        A construct that opens within one an earlier match's values were read over is read no
        further (`case "$TOKEN" in "…") case "$TOKEN" in …` repeated reads each arm once)."""
        further = rule.further
        assert further is not None
        if match.start() < self._further_until.get(priority, -1):
            return False
        text = self.text
        key = match.group("compared")
        position = match.end()
        limit = min(len(text), position + _FURTHER_REACH)
        found = False
        while (item := further.match(text, position, limit)) is not None and item.end() > position:
            position = item.end()
            if item.start("secret") >= 0:
                found |= self._accept_compared(priority, rule, item, key)
            if item.start("quote") < 0:
                break  # text read over to where no further value was found
        self._further_until[priority] = position
        return found

    def _methods_judged(
        self, priority: int, rule: Rule, match: re.Match[str], value: str, key: str | None
    ) -> bool:
        """Whether a value compared with what methods without arguments return on its key
        (`token?.trim()`) is judged a secret with them as the key's members too: a method may
        name what else the key holds (`token?.getType()`), and the key alone what it is
        (`secretVersion?.trim()`)."""
        methods = _methods_called(match)
        return not methods or self._judge(priority, rule, value, (key or "") + methods)

    def _expansion_pieces(
        self, operand: tuple[int, str], end: int
    ) -> tuple[int, list[tuple[int, int]]] | None:
        """Where the code of the shell's expansion a value read up to `end` starts in ends
        (past its `}`, or `end`; its operand at `operand`), and the parts of the value judged
        alone; None where the default is a literal, judged with the value. No other default is
        one (`${PW:-$OTHER}`, `-$(openssl rand …)`, `${PW:-}`), nor an error's message after
        `:?`, nor the text after `:+` (`${GITHUB_TOKEN:+--token=$GITHUB_TOKEN}`); what a
        default holds after the references it starts with is (`${PW:-${PREFIX}Xk9…}`,
        `-$PREFIX-Xk9…`, without the join's `-`), and so is what the value runs on to past the
        expansion's `}`, glued to it (`${PW:?}k2Jd…`). The text after a `}` that no literal
        follows (`${PW:-$X},password=…`) is left to the rules' hits in it."""
        text = self.text
        close = _closing(text, operand[0], end, "{")
        limit = end if close < 0 else close
        pieces = []
        if operand[1] not in "?+":
            default = _innermost_default(text, operand[0], end)
            if default < end and text[default] not in "$}":
                return None
            literal = _past_references(text, default, limit)
            reference = _REFERENCE.search(text, literal, limit)
            stop = limit if reference is None else reference.start()
            while literal < stop and text[literal] in "-_:":
                literal += 1
            if literal < stop and text[literal] != "/":  # `${HOME}/.password`: a path
                pieces.append((literal, stop))
        if 0 <= close < end - 1 and (text[close + 1].isalnum() or text[close + 1] in "+!#%*^~"):
            # Not `/path`, `@host`, `,password=…`; up to a reference (`…Xk9${SUFFIX}`).
            reference = _REFERENCE.search(text, close + 1, end)
            pieces.append((close + 1, end if reference is None else reference.start()))
        return (end if close < 0 else close + 1), pieces

    def _is_verdict(self, match: re.Match[str], start: int, end: int) -> bool:
        """Whether the value at `start:end` is the test's name on a verdict line of a test log
        (`_VERDICT_LINE`): its key (`PASS`) starts the line, perhaps indented or after Go's
        `--- `, a colon and one blank stand between them, and the line before or the one
        after is a verdict line too. A lone `PASS: …` is a note's or a mapping's password as
        well as a test's verdict (`USER: bob` then `PASS: hunter22`); jtreg's `Passed: ` and a
        test's path (`_JTREG_TEST_PATH`) alone on its line, perhaps indented, is one alone."""
        text = self.text
        key_start, key_end = match.span("key")
        if key_start > 0 and text.startswith("\\n", key_start - 1):
            key_start += 1  # `\\nPASS` in a JSON string: the escape's `n` is no part of the key
        jtreg = text[key_start:key_end] == _JTREG_PASSED
        if not jtreg and text[key_start:key_end] not in _VERDICT_KEYS:
            return False
        if start != key_end + 2 or not text.startswith(": ", key_end):
            return False
        if jtreg and _JTREG_TEST_PATH.fullmatch(text, start, end) is None:
            return False  # `Passed: Summer2024!`, `Passed: hunter2.java`: a password's
        if not jtreg and not heuristics.reads_as_test_name(text[start:end]):
            return False  # `PASS: P@ssw0rd!2024`, `PASS: s3cr3t`: a password's
        # An escaped line break is one only in JSON text (`printf 'a\nSKIP: x'` is no line).
        breaks = _BREAKS if self.escapes else ("\n",)
        line = _line_start(text, key_start, 24, breaks)
        lead = _INDENT if jtreg else _VERDICT_LEAD
        if line < 0 or lead.fullmatch(text, line, key_start) is None:
            return False
        if jtreg:  # jtreg's summary line names a test alone too, and nothing after it
            return (_ESCAPED_LINE_END if self.escapes else _LINE_END).match(text, end) is not None
        if text.startswith("--- ", key_start - 4) and _GO_VERDICT_TIME.match(text, end):
            return True  # Go's own line, alone too: `--- PASS: TestParse/case_1 (0.00s)`
        previous = self._line_before(line, breaks)
        if previous is not None and _VERDICT_LINE.match(text, *previous) is not None:
            return True
        for mark in breaks:
            found = text.find(mark, end, end + _VERDICT_REACH)
            if found >= 0 and _VERDICT_LINE.match(text, found + len(mark)) is not None:
                return True
        return False

    def _is_a_login(self, match: re.Match[str], start: int) -> bool:
        """Whether the value at `start`, of a test result's key (`PASS`), is a login's
        password, whatever it reads as: the key is assigned with `=` (`PASS=…`, `export
        PASS="…"`), or its line comes right after one naming a user (`USER: bob` then `PASS:
        Summer-2024`, among verdicts too: a test log names no user between them)."""
        text = self.text
        key_start, key_end = match.span("key")
        if "=" in text[key_end:start]:
            return True
        if key_start > 0 and text.startswith("\\n", key_start - 1):
            key_start += 1  # `\\nPASS` in a JSON string: the escape's `n` is no part of the key
        breaks = _BREAKS if self.escapes else ("\n",)
        previous = self._line_before(_line_start(text, key_start, 24, breaks), breaks)
        return previous is not None and _USERS_NAME_LINE.match(text, *previous) is not None

    def _line_before(self, line: int, breaks: tuple[str, ...]) -> tuple[int, int] | None:
        """Where the line right before the one starting at `line` starts and ends (at its
        break, of `breaks`); None when no break ends right before `line` (the text's or a JSON
        string's first line) or that line starts farther than `_VERDICT_REACH` before it."""
        text = self.text
        for mark in breaks:
            if line >= len(mark) and text.startswith(mark, line - len(mark)):
                before = line - len(mark)
                previous = _line_start(text, before, _VERDICT_REACH, breaks)
                return (previous, before) if previous >= 0 else None
        return None

    def _closes_what_opened_on(self, key_start: int, start: int, end: int) -> bool:
        """Whether the value at `start:end` ends in the bracket that closes the one opened
        right before its name (`{password: Xk9q…}`, `f(password=Xk9q…)`), holding no other."""
        text = self.text
        closer = text[end - 1 : end]
        opener = _OPENERS.get(closer)
        if opener is None or end - start < 2 or opener in text[start : end - 1]:
            return False
        before = _OPENED_BEFORE.search(text, max(0, key_start - 8), key_start)
        return before is not None and before.group(1) == opener

    def _opened_on(self, priority: int, start: int) -> bool:
        """Whether the value this rule took last opens a mapping, list or call right before
        the name at `start`: the rule read that value up to a blank, `{password:` of
        `password: {password: Xk9q…}`, which ends before what the name is assigned. The name's
        own assignment reads that (its span joins the first)."""
        opened = self._covered_from.get(priority, -1)
        return opened >= 0 and _OPENS_ON_A_NAME.fullmatch(self.text, opened, start) is not None

    def _judge(
        self,
        priority: int,
        rule: Rule,
        value: str,
        key: str | None,
        literal: bool = False,
        quoted: bool = False,
        bare: bool = False,
        verdict: bool = False,
        login: bool = False,
    ) -> bool:
        judged = (priority, value, key, literal, quoted, bare, verdict, login)
        secret = self._judged.get(judged)
        if secret is None:
            secret = self._is_secret(rule, value, key, literal, quoted, bare, verdict, login)
            self._judged[judged] = secret
        return secret

    def _shell_quoted_dollar(self, start: int, end: int) -> bool:
        """Whether the value at `start:end` is `$NAME` in a shell's single quotes, which expand
        nothing: `mysql -p'$Password'`, `PGPASSWORD='$ecret'`, `--password '$Pa55'` pass the
        characters `$Password` themselves. The quote opens right after a `=` glued to its name
        or after a flag (`-p'…'`, `-p '…'`, `--password '…'`), and opens indeed: an even
        number of single quotes stands before it on the line (since the last newline, raw or
        escaped, or double quote), so the `'` in `sh -c 'mysql -p'$PW''` closes a quote and
        leaves `$PW` to the shell. `"$NAME"`, a bare `$NAME` and `'${NAME}'` (a template's,
        such as a CI's `'${{ … }}'`) stay references; so does `password: '$Password'` in YAML
        or code (a config a program expands), where no flag or glued `=` stands."""
        text = self.text
        if start < 2 or text[start - 1] != "'" or not text.startswith("'", end):
            return False
        if _QUOTED_DOLLAR.fullmatch(text, start, end) is None:
            return False
        before = text[start - 2]
        if before == "=":
            if start < 3 or text[start - 3] not in _IDENTIFIER_CHARS:
                return False
        elif _FLAG_BEFORE.search(text, max(0, start - 64), start - 1) is None:
            return False
        floor = max(0, start - 4096)
        line = max(text.rfind(mark, floor, start - 1) for mark in _LINE_STARTS) + 1
        return text.count("'", max(line, floor), start - 1) % 2 == 0

    def _parameter_ends(self, match: re.Match[str], start: int, end: int) -> tuple[int, int, str]:
        """Where the unquoted value of a parameter of a query (`?password=`, `&token=`) or of
        a connection string (`;Password=`) surely ends, where it may, and its form:
        `;Encrypt=true` or `&remember=1` after it is not part of the secret. In a URL's query
        (a `?` before the name) `#` ends it too, and the form is "url"; in a form body
        (`-d 'a=1&password=x#y'`, form "body") `#` and `;` may be its characters. A
        connection string's value ("connection") in braces (`PWD={a;b}`, `}}` a brace within)
        ends at its closing brace, form "braced". (end, end, "") for a value of any other
        assignment."""
        key_start = match.start("key")
        text = self.text
        if key_start < 1 or text[start - 1] in _QUOTES:
            return end, end, ""
        opener = text[key_start - 1]
        separators = _PARAMETER_SEPARATORS.get(opener)
        if separators is None:
            return end, end, ""
        if opener == ";" and text.startswith("{", start):
            closed = _brace_end(text, start, end)
            return closed, closed, "braced"
        url = opener == "?" or "?" in text[_word_start(text, key_start) : key_start]
        if url:
            separators = (_URL_SURE_END, separators[1])
        ends = [separator.search(text, start, end) for separator in separators]
        surely, maybe = (end if found is None else found.start() for found in ends)
        return surely, maybe, "url" if url else "connection" if opener == ";" else "body"

    def _extended(self, priority: int, run: LazyPattern, end: int) -> int:
        """Where the token goes on to (at most `_MAX_EXTENSION` characters past `end`). The
        run last read for this rule is remembered, so a later match inside it reads on from
        where that one stopped instead of again from its own end."""
        limit = min(len(self.text), end + _MAX_EXTENSION)
        origin, known, complete = self._runs.get(priority, (-1, -1, False))
        if origin <= end <= known:
            if complete:
                return min(known, limit)
            read_from = known
        else:
            origin = read_from = end
        match = run.match(self.text, read_from, limit)
        stop = read_from if match is None else match.end()
        self._runs[priority] = (origin, stop, stop < limit or limit == len(self.text))
        return stop

    def _is_secret(
        self,
        rule: Rule,
        value: str,
        key: str | None,
        literal: bool = False,
        quoted: bool = False,
        bare: bool = False,
        verdict: bool = False,
        login: bool = False,
    ) -> bool:
        """Whether `value` of `rule` (assigned to `key`) is a secret; `literal`: the value is
        text, never code's name (a parameter's, `_parameter_ends`); `quoted`: the value is
        `$NAME` in a shell's single quotes (`_shell_quoted_dollar`), characters, never a
        reference, which the rule's own check would take it for; `bare`: the value stands
        right after its name's `=` or `:`, in no quote, call or braces; `verdict`: the value
        follows a verdict in a test log (`_is_verdict`) and reads as a test's name; `login`: the
        value of a test result's key is a login's password (`_is_a_login`), never a test's."""
        if rule.replacement is not None:
            return True
        if heuristics.is_documented_example(value):
            return False
        if self.allowlist is not None and self.allowlist.allows(value):
            return False
        if key is not None and is_metadata_key(key):
            return False
        if key is not None and holds_words_of_no_credential(key, value):
            return False
        if key is not None and heuristics.names_a_private_class(key, value):
            return False
        if heuristics.ends_a_sentence(key, value):
            value = value[:-1]  # judged as what it is before the sentence's `.`
        if key is not None and _is_openpgp_id(key, value):
            return False
        if (
            key in TEST_RESULTS
            and not login
            and (
                syntax.is_test_path(value)
                or heuristics.names_a_go_test(value)
                or (
                    heuristics.looks_like_reference(value)
                    # Outside a test log's verdicts `PASS: hunter22` is a password's, as after
                    # `password:` (`USER: bob` then `PASS: hunter22`); `PASSED:` names none.
                    and not (
                        key == "PASS"
                        and bare
                        and rule.written_passwords
                        and heuristics.is_written_password(key, value)
                    )
                )
            )
        ):
            return False  # a test runner's result names a test: `--- PASS: TestParse/empty`
        if verdict:
            return False  # `PASS: ld-x86-64/pr20253-1g`, `PASS: -Bsymbolic-functions` in a log
        if quoted:
            return True
        if rule.check is None or rule.check(value, self.strict):
            return True
        if key is not None and heuristics.is_drawn_uuid(value) and holds_a_credential_uuid(key):
            return True  # `HEROKU_API_KEY=3f2a…`, `password: <uuidgen's>`: the checks take
            # a UUID for an id
        if bare and rule.written_passwords and heuristics.is_written_password(key or "", value):
            return True
        return literal and heuristics.looks_like_env_literal(value)


def _methods_called(match: re.Match[str]) -> str:
    """The methods without arguments a match read called on its name, as its members
    (`token?.trim()` compared: `.trim`), or nothing."""
    if "method" not in match.re.groupindex or not match.group("method"):
        return ""
    return _METHOD_NAME.sub(r".\1", match.group("method"))
