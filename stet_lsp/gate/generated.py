"""Whether letters and digits read as generated (a key, a token's body) or as written (a
name, words): the letter pairs English words are made of, the humps of camelCase names,
how digits fall among letters."""

from __future__ import annotations

import re

# Letters and digits no one writes as a name or a word: a lowercase letter alone between
# capitals or digits (`HkBD`, `9q2`), digits between letters, or a run of letters with too
# few of the letter pairs English words are made of (`WAZDEKVSLOKPJIGP`: 27 %; names and words
# written together, `DATABASEPASSWORD` or `schemaregistryurl`, have 60 % or more), in one
# case, with capitals throughout (`fnnKZXUQEMVXHjqUjS`), with hardly any (`Ztcn…fjBpvnsDXBnzk`:
# 14 %; camelCase names with acronyms, `getCSRFTokenFromCookie`, keep 45 % or more), or in
# humps no name has (`zbzOsxKaKxyZdudOEo`, `_unlike_a_name`).
_SINGLE_LOWER = re.compile(r"(?<=[A-Z0-9])[a-z](?=[A-Z0-9])")
# A capital and one letter that make a word between two words of a name are a hump of it
# (`endTagInSelectInTable`, `isUpToDate`), not a letter alone.
_TWO_LETTER_WORDS = frozenset(("In", "On", "At", "Is", "It", "Of", "To", "By", "As", "Or", "If",
    "No", "Up", "Do", "Go", "My", "We", "Be", "An", "Us", "So", "Id", "Ok"))  # fmt: skip
_BETWEEN_WORDS = re.compile(r"(?<=[a-z])[A-Z][a-z](?=[A-Z][a-z])")
_INNER_DIGITS = re.compile(r"(?<=[A-Za-z])[0-9]+(?=[A-Za-z])")
_LETTER_RUN = re.compile(r"[A-Za-z]{12,}")
_COMMON_PAIRS_TEXT = (
    "th he in er an re on at en nd ti es or te of ed is it al ar st to nt ng se ha as ou io le"
    " ve co me de hi ri ro ic ne ea ra ce li ch ll be ma si om ur ca el ta la ns di fo ho pe ec"
    " pr no ct us ac ot il tr ly nc et ut ss so rs un lo wa ge ie wh ee wi em ad ol rt po we na"
    " ul ni ts mo ow pa im mi ai sh ir su id os iv ia am fi ci vi pl ig tu ev ld ry mp fe bl ab"
    " gh ty op wo sa ay ex ke fr oo av ag if ap gr od bo sp rd do uc bu ei ov by rm ep tt oc fa"
    " ef cu rn sc gi da yo cr cl du ga qu ue ff ba ey ls va um pp ua up lu go ht ru ug ds lt pi"
    " rc rr eg au ck ew mu br bi pt ak pu"
)
_COMMON_PAIRS = frozenset(_COMMON_PAIRS_TEXT.split())
WORDLIKE_PAIRS = 0.55
_UNWORDLIKE_PAIRS = 0.35
GENERATED_CAPITALS = 0.35
_PAIRS_READ = 64
# The humps of a name written in both cases: an acronym, a word (capitalised or not), a
# capital alone (`getXCoordinate`); digits part them.
_HUMP = re.compile(r"[A-Z]{2,}(?![a-z])|[A-Z]?[a-z]+|[A-Z]")
_NAME_HUMP_LETTERS = 3
HUMPS_READ = 8


def letter_pairs_share(run: str) -> float:
    """The share of a run of letters' pairs (its first 64 letters) that English words are
    made of."""
    lowered = run[:_PAIRS_READ].lower()
    pairs = len(lowered) - 1
    if pairs < 1:
        return 0.0
    return sum(lowered[i : i + 2] in _COMMON_PAIRS for i in range(pairs)) / pairs


def _unlike_a_name(value: str) -> bool:
    """Letters of both cases that are not the humps of a camelCase name: humps of fewer than
    three letters on average (`zbz|Osx|Ka|Kxy|Zdud|O|Eo`), two acronyms or more
    (`SM|Kppexs|R|EZD|Hsouc`), or two letters standing alone (`m|Xhqd|N|Jdeep|Lttfp|ZJ`).
    Names keep words between their capitals (`getCSRFTokenFromCookie`, `HTTPSConnection`,
    `getXCoordinate`: one acronym or none, one letter alone or none)."""
    humps = _HUMP.findall(value)
    acronyms = lone = letters = 0
    for hump in humps:
        letters += len(hump)
        lone += len(hump) == 1
        acronyms += len(hump) >= 2 and hump.isupper()
    return acronyms >= 2 or lone >= 2 or letters < _NAME_HUMP_LETTERS * len(humps)


def _random_case(run: str) -> bool:
    """Letters of both cases whose capitals fall at random: a third of them or more, humps
    unlike a name's, and no acronym of three capitals or more (`AWSServiceRoleForECS`,
    `IAMUserSSHKeys` are names)."""
    if run.isupper() or run.islower():
        return False
    if sum(c.isupper() for c in run) < GENERATED_CAPITALS * len(run):
        return False
    if any(len(hump) >= 3 and hump.isupper() for hump in _HUMP.findall(run)):
        return False
    return _unlike_a_name(run)


def looks_generated(value: str) -> bool:
    """A run of ASCII letters and digits (12 or more) that reads as generated, not written:
    `HkBDLHFaDXosUduCJI`, `Xk9q2Lm4Wp7z`, `SMIGIQAQXLZPPRWG`, `zbzOsxKaKxyZdudOEo`,
    `k331FukcgtgL3tl251`; not `getUserPasswordById`, `HTTPSConnection`, `sha256Digest`,
    `DEFAULTPASSWORD`."""
    return reads_generated(value, 12)


def looks_generated_segment(segment: str) -> bool:
    """A segment of a path-shaped value that reads as generated, as `looks_generated` judges
    a run, from eight characters on: base64 that starts with a slash
    (`/SMKppexsR8EZDHsouc/gikxXjuX0/tT`, `/iXV6OQ7p8p/Nb/t3Kpsz/ZPju1oqR3/`) is not a path;
    `Library`, `PycharmProjects`, `iCloudDrive` are segments of one."""
    return reads_generated(segment, HUMPS_READ)


def _letters_alone(value: str) -> int:
    """The lowercase letters alone between capitals or digits, but for short words between
    two words of a name."""
    return sum(
        value[match.start() - 1 : match.end()] not in _TWO_LETTER_WORDS
        or _BETWEEN_WORDS.match(value, match.start() - 1) is None
        for match in _SINGLE_LOWER.finditer(value)
    )


def reads_generated(value: str, least: int, *, random_case: bool = True) -> bool:
    """`looks_generated` from `least` characters on; with `random_case`, letters of both
    cases also count when their capitals fall at random though their pairs read as English."""
    if len(value) < least or not value.isascii() or not value.isalnum():
        return False
    singles = _letters_alone(value)
    if singles >= 2 or singles + len(_INNER_DIGITS.findall(value)) >= 3:
        return True
    if len(value) >= _ONE_CASE_READ and _one_case_generated(value):
        return True
    runs = _LETTER_RUN.findall(value)
    for run in runs:
        share = letter_pairs_share(run)
        if share >= WORDLIKE_PAIRS:
            # English letter pairs by chance (`wpnEJfoduCrmfIiAipEF`): still generated when
            # capitals are many, in short humps, and none starts an acronym as names have
            if random_case and _random_case(run):
                return True
            continue
        if run.isupper() or run.islower() or share < _UNWORDLIKE_PAIRS:
            return True
        # camelCase with acronyms (`getCSRFTokenFromCookie`) has few capitals, and words
        # between them
        capitals = sum(c.isupper() for c in run)
        if capitals >= GENERATED_CAPITALS * len(run) or _unlike_a_name(run):
            return True
    if runs:
        return False
    # Digits part the letters (`k331FukcgtgL3tl251`, `SMKppexsR8EZDHsouc`): letters of both
    # cases, judged together.
    letters = "".join(c for c in value if c.isalpha())
    if len(letters) < HUMPS_READ or letters.isupper() or letters.islower():
        return False
    return letter_pairs_share(letters) < WORDLIKE_PAIRS and _unlike_a_name(value)


# Letters of one case and digits (`l44ldqbwzb90xya`, `pan0rlykei2iiaa`), 12 characters or
# more: names that hold digits have one group of them or two, between words
# (`yeardays2calendar`, `pos2key2dict`, `py34compat`, `NMDAY366MASK`); a generated value has
# them scattered, and few English letter pairs in the letters between.
_ONE_CASE_READ = 12
_DIGIT_GROUP = re.compile(r"[0-9]+")
_LETTERS = re.compile(r"[A-Za-z]+")
_SCATTERED_DIGITS = 3
_TWO_GROUPS_PAIRS = 0.65
_ONE_GROUP_PAIRS = 0.5


def letter_pairs(value: str) -> tuple[int, int]:
    """How many pairs of letters `value` holds (read inside each run of letters), and how
    many of them are common in English."""
    pairs = common = 0
    for run in _LETTERS.findall(value.lower()):
        for index in range(len(run) - 1):
            pairs += 1
            common += run[index : index + 2] in _COMMON_PAIRS
    return pairs, common


def _one_case_generated(value: str) -> bool:
    """Letters of one case and digits that read as generated: three groups of digits or
    more, or two with fewer than 65 % English letter pairs in the letters around them, or
    one with fewer than half (pairs are read inside each run of letters)."""
    if not (value.islower() or value.isupper()):
        return False
    groups = len(_DIGIT_GROUP.findall(value))
    if groups == 0:
        return False
    if groups >= _SCATTERED_DIGITS:
        return True
    pairs, common = letter_pairs(value)
    share = common / pairs if pairs else 0.0
    return share < (_TWO_GROUPS_PAIRS if groups == 2 else _ONE_GROUP_PAIRS)


_ALNUM_RUN = re.compile(r"[A-Za-z0-9]{12,}")


def has_generated_run(value: str) -> bool:
    """Whether a run of letters and digits in `value` looks generated (`API-XDWWPEJBCFZZ…`)."""
    return any(looks_generated(run) for run in _ALNUM_RUN.findall(value))
