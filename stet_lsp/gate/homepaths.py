"""Home directories: a normalisation, not a finding per occurrence.

`/home/<user>`, `/Users/<user>` and `C:\\Users\\<user>` (also with every `\\` doubled, as JSON
escapes it and Python prints it: `C:\\\\Users\\\\`; doubled twice over, a path Python printed,
then escaped in JSON: `C:\\\\\\\\Users\\\\\\\\`; and with escaped slashes as PHP's json_encode
writes them, `\\/home\\/<user>`, also with their `\\` escaped again inside a JSON string:
`\\\\/home\\\\/<user>`; and the same seen from another system: a Windows home where WSL,
Cygwin or Git Bash mount its drive, `/mnt/c/Users/<user>`, `/cygdrive/c/Users/<user>`,
`/c/Users/<user>`; a WSL distribution's home from Windows, `\\\\wsl$\\Ubuntu\\home\\<user>`;
a home in a drive's administrative share, `\\\\host\\C$\\Users\\<user>`) are personal, not
secret: redaction rewrites every one to `~` in one regex pass over the already redacted text,
and a scan reports how many a file holds. A match never starts or ends inside a JSON escape
sequence and contains no quote, so JSON stays JSON; `~` never starts a new match, so
normalising twice changes nothing.
"""

from __future__ import annotations

import re
from functools import cache
from string import ascii_letters

RULE = "home-path"
REPLACEMENT = "~"

# Any letter (`José`, `Łukasz`), also as JSON escapes one past ASCII and Latin-1's symbols
# (`Jos\u00e9`; never an escaped quote or `>`).
_NAME = r"(?:[\w.\-]|\\u(?!00[0-9A-Ba-b])[0-9A-Fa-f]{4}){1,64}"
_SPACE = r"(?: |%20)"  # %20 in a file URI
_USER = rf"(?!(?:Shared|Public|Default|All Users|runner|linuxbrew)(?![\w.\-])){_NAME}"
# Separators: a `\` doubled in JSON, or twice over for a Windows path as Python prints it
# (`'C:\\Users\\x'`) once written into JSON.
_SEP = r"(?:\\\\\\\\|\\\\/|\\\\|\\/|\\|/)"


def _spaced_user(separator: str) -> str:
    """A user name that may hold spaces (`John Smith`: Windows allows it, and a macOS home
    folder can be renamed so): taken whole only when `separator` follows it
    (`C:\\Users\\John Smith\\proj`), or when the path is a whole quoted string
    (`"C:\\Users\\Jan van Dijk"`, `"..\\Users\\Jan van Dijk"`: a name's words cannot be told
    from a sentence's, so a quoted sentence that starts with a home folder loses up to three
    words, `"/Users/bob is here"` is `"~"`, rather than a name its last ones; an apostrophe,
    `'C:\\Users\\bob's'`, closes no quote; a quote escaped in JSON, once or twice over, `\\"` or
    `\\\\\\"`, closes its own). Else the name ends at its first space, so a path in prose never
    takes the words after it (`C:\\Users\\bob and then` is `~ and then`)."""
    spaced = rf"(?:{_SPACE}{_NAME}){{1,3}}(?={separator})"
    named = rf"(?:{_SPACE}{_NAME}){{1,3}}(?=(?(quote)(?:\\\\)?\\?(?P=quote)(?!\w)|(?!)))"
    return rf"{_USER}(?:{spaced}|{named})?"


_SLASHED = _spaced_user("/")
_ESCAPED = _spaced_user(r"\\/")
_ESCAPED_TWICE = _spaced_user(r"\\\\/")
# The letters after a `\\` that make a JSON escape (`\\n`, `\\t`, `\\r`, `\\u`, `\\"`) where
# a single `\\` may stand for a separator: in JSON text (`_JSON_ESCAPE`); in other text (a
# log, the narration) a `\\` after `C:/Users` is a separator whatever follows (`_NO_ESCAPE`).
_JSON_ESCAPE = r'[nrtu"]'
_NO_ESCAPE = r"(?!)"


def _windows(escape: str, separator: str = "(?P=separator)") -> str:
    """A Windows path may change separators after the user name (`C:\\Users\\John Smith/proj`,
    `C:/Users/John Smith\\proj`, as `os.path.join` writes it); not an `escape`'s `\\`."""
    return _spaced_user(rf"{separator}|/|\\\\|\\(?!{escape})")


# A name of a relative path's `Users` or `home` folder that reads as a file's (`UserDto.cs`):
# a project's folder of that name (`..\\Users\\UserDto.cs`), not a home folder.
_FILE = r"[\w\-]{1,64}\.[A-Za-z][A-Za-z0-9]{0,4}(?![\w.\-])"
_NO_FILE = rf"(?!sers{_SEP}{_FILE})"
# Not inside a longer path or word (`/srv/home/x`, `~/home/x`); a JSON `\n`, `\t` or `\r`
# escape right before the path is a line break, not part of a word; a diff header names an
# absolute path after its `a/` or `b/` (`+++ b//home/x/…`), a URI after its scheme's `://`
# (`file:///home/x/…`, `sftp:///home/x`, `file:///C:/Users/x/…`, `file:///c%3A/Users/x/…`)
# and VS Code's link to a file after `://file` (`vscode://file/home/x/a.py:3`,
# `vscode://file/C:/Users/x/a.py`); the same with
# every slash escaped (`\/home\/x\/…`, `b\/\/home\/x`, `file:\/\/\/home\/x`, `C:\/Users\/x`).
# An escaped path starts at its first `\`, so the rest keeps its escaping: `~\/proj\/x.py`.
# All this also with every `\` of an escaped slash escaped again inside a JSON string
# (`\\/home\\/x`, `file:\\/\\/\\/home\\/x`, `C:\\/Users\\/x`, `..\\/home\\/x`).
# A relative path that climbs into a home folder (`../../Users/x/…`, `..\/home\/x`, and on
# Windows `..\..\Users\x\…`, its `\` doubled or not, and with separators mixed, `../Users\x\…`)
# keeps its `../`: the folder becomes `../../~/…`. A quote right before the path (or before a
# relative path's climbs, `_CLIMBS_QUOTED`) is remembered, for a user name with a space that ends
# a whole quoted path (`_spaced_user`). A `\` doubled before a Windows path's `Users` is doubled
# after it too (or a `/` follows): in JSON, `C:\\Users\nls` is `C:\Users`, a line break and
# `ls`, and no user's folder. After a `/` (or `\/`) before `Users`, a lone `\` after it is a
# separator (`C:/Users\bob`, as `os.path.join` mixes them) unless, in JSON text, it starts a
# JSON escape: there `C:/Users\nls` is `C:/Users`, a line break and `ls`; a slash escaped
# twice before `Users` (`C:\\/Users`) wants one after it too, or a `\` escaped twice (`\\\\`).
# A path starts after a character outside ASCII that JSON escapes as `\uXXXX` as after the
# character itself (`\u5728/home/<user>`, `在/home/<user>` as Python's `json.dumps` writes it);
# an escaped ASCII character (`\u0041`) is a letter as before.
_START = (
    r"(?:(?<![A-Za-z0-9_.~/\\\-])|(?<=\\[nrt])|(?<=\\u00[89A-Fa-f][0-9A-Fa-f])"
    r"|(?<=\\u0[1-9A-Fa-f][0-9A-Fa-f]{2})|(?<=\\u[1-9A-Fa-f][0-9A-Fa-f]{3})|(?<= [ab]/)|(?<=://)"
    r"|(?<=:///)|(?<=://file)|(?<=://file/)"
    r"|(?<=%3[Aa])|(?<= [ab]\\/)|(?<=:\\/\\/)|(?<=:\\/\\/\\/)|(?<=:\\/\\/file)"
    r"|(?<= [ab]\\\\/)|(?<=:\\\\/\\\\/)|(?<=:\\\\/\\\\/\\\\/)|(?<=:\\\\/\\\\/file))"
)
# Windows' extended-length prefix may come before a drive letter (`\\?\C:\Users\x`, as Rust's
# `std::fs::canonicalize` writes a path; in JSON or as Python prints it `\\\\?\\C:\\Users`,
# the latter in JSON `\\\\\\\\?\\\\C:`; `//?/C:/Users/x`), and so may its device prefix
# (`\\.\C:\Users\x`): it stays, `\\?\~\x`.
_EXTENDED_LENGTH = (
    r"(?<=\\\\[?.]\\)|(?<=\\\\\\\\[?.]\\\\)|(?<=\\\\\\\\\\\\\\\\[?.]\\\\\\\\)|(?<=//[?.]/)"
)


# Git Bash's and MSYS2's mount of a drive is a bare letter, which a web route's first segment
# may be too (`GET /r/Users/list`, `"/a/Users/settings"`): the letter is a disk's, never a
# floppy drive's `a` or `b`, and it starts the path as any home's does (`_START`: not after a
# word, a host, a URL's authority or another folder, `/api/v1/r/Users/x`,
# `https://host/r/Users/x`), nor after a variable (`${HOME}/c/Users/x`, `%APPDATA%/c/…`). A
# request's target, after an HTTP method, is a route (`_REQUEST_TARGET`, tested where a
# mount's start is found); `HEAD` is git's too (`git diff HEAD /c/Users/…`), and no method.
_DRIVE_MOUNT_START = r"(?<![}%])"
_DRIVE_MOUNT_LETTER = "[c-zC-Z]"
_REQUEST_TARGET = re.compile(r"\b(?:GET|POST|PUT|PATCH|DELETE|OPTIONS)[ \t]+\Z")


def _mounted(slash: str, user: str) -> str:
    """A Windows home folder where WSL (`/mnt/c/Users/<user>`), Cygwin
    (`/cygdrive/c/Users/<user>`) or Git Bash and MSYS2 (`/c/Users/<user>`) mount its drive,
    `users` in lower case too (the mounts read names whatever their case, and people type
    them so), though after a bare letter only on `c`: a web route's `/d/users/7` keeps its
    text; `slash` as the text writes it (`/`, `\\/`, `\\\\/`)."""
    return (
        rf"(?:{slash}(?:mnt|cygdrive){slash}[A-Za-z]{slash}[Uu]"
        rf"|{_DRIVE_MOUNT_START}{slash}(?:{_DRIVE_MOUNT_LETTER}{slash}U|[cC]{slash}u))"
        rf"sers{slash}{user}"
    )


_MOUNTED = "|".join(
    (_mounted("/", _SLASHED), _mounted(r"\\/", _ESCAPED), _mounted(r"\\\\/", _ESCAPED_TWICE))
)


# A share's path is a home folder when the share is WSL's view of a distribution
# (`\\wsl$\Ubuntu\home\<user>`, `\\wsl.localhost\Ubuntu-22.04\home\<user>`) or a drive's
# administrative share (`\\host\C$\Users\<user>`), also after the extended-length prefix
# (`\\?\UNC\wsl$\…`, which stays, as before a drive), with slashes (`//wsl$/Ubuntu/home/x`)
# and in every escaping a drive's path has. One separator up to the user name, the path's own
# two at its start or the one after `UNC`, or a `/`, escaped or not (`\\wsl$\Ubuntu/home/<user>`).
_UNC_SEPARATOR = r"(?:(?(unc)(?P=unc)|(?P=unc_extended))|(?:\\\\|\\)?/)"


def _share(escape: str) -> str:
    return (
        rf"(?:{_START}(?P<unc>{_SEP})(?P=unc)|(?:{_EXTENDED_LENGTH})UNC(?P<unc_extended>{_SEP}))"
        rf"(?:[Ww][Ss][Ll](?:\$|(?i:\.localhost)){_UNC_SEPARATOR}[\w.\-]{{1,64}}"
        rf"{_UNC_SEPARATOR}home{_UNC_SEPARATOR}{_USER}"
        rf"|[\w.\-]{{1,253}}{_UNC_SEPARATOR}[A-Za-z]\${_UNC_SEPARATOR}[Uu]sers{_UNC_SEPARATOR}"
        rf"{_windows(escape, _UNC_SEPARATOR)})"
    )


def _path(escape: str) -> str:
    """A home path, a `\\` and `escape`'s letter after `C:/Users` or `../Users` being an escape,
    no separator."""
    return (
        rf"(?:{_START}(?:/home/{_USER}|/Users/{_SLASHED}|\\/home\\/{_USER}|\\/Users\\/{_ESCAPED}"
        rf"|\\\\/home\\\\/{_USER}|\\\\/Users\\\\/{_ESCAPED_TWICE}|{_MOUNTED})"
        rf"|{_share(escape)}"
        rf"|(?:(?:{_START}|{_EXTENDED_LENGTH})[A-Za-z]:"
        r"(?:(?P<doubled>\\\\(?:\\\\)?)|(?P<slashed>\\?/)|(?P<escaped_twice>\\\\/)|\\)[Uu]"
        r"(?(doubled)(?=sers(?:(?P=doubled)|/|\\/)))"
        rf"(?(slashed)(?!sers\\{escape}))"
        r"(?(escaped_twice)(?=sers(?:\\\\/|\\\\\\\\|/)))"
        rf"|(?<=\.\.\\)U{_NO_FILE}|(?<=\.\.\\\\)U(?=sers(?:\\\\|/)){_NO_FILE}"
        rf"|(?<=\.\.\\\\\\\\)U(?=sers(?:\\\\\\\\|/)){_NO_FILE}"
        rf"|(?<=\.\./)U(?=sers\\(?!{escape})){_NO_FILE})"
        rf"sers(?P<separator>{_SEP}){_windows(escape)}"
        rf"|(?<=\.\./)(?!(?:home|Users)/{_FILE})(?:home/{_USER}|Users/{_SLASHED})"
        rf"|(?<=\.\.\\/)(?!(?:home|Users)\\/{_FILE})(?:home\\/{_USER}|Users\\/{_ESCAPED})"
        rf"|(?<=\.\.\\\\/)(?!(?:home|Users)\\\\/{_FILE})"
        rf"(?:home\\\\/{_USER}|Users\\\\/{_ESCAPED_TWICE}))"
        r"(?![\w.\-])"
    )


_QUOTE = r"""(?:(?<=(?P<quote>["']))|(?<!["']))"""
# A relative path's quote comes before its climbs, not right before the home folder: this
# reads from the quote over them (`"../../Users/Jo Ann"`), to the home folder at `climbed`.
_CLIMBS_QUOTED = r"""(?P<quote>["'])(?:\.\.(?:\\{0,2}/|\\{1,4}))+(?P<climbed>)"""


@cache
def _patterns(json_text: bool) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """A home path, and one read from the quote before its climbs (`_CLIMBS_QUOTED`), in JSON
    text or in other text; compiled when first needed, as most texts are of one kind."""
    path = _path(_JSON_ESCAPE if json_text else _NO_ESCAPE)
    return re.compile(_QUOTE + path), re.compile(_CLIMBS_QUOTED + path)


# Every match starts at `/home/`, `\/home\/` or `\\/home\\/`, or at `/Users/`, `\/Users\/`,
# `\\/Users\\/` (after the slash, when `..` comes before it), a drive letter before `sers` or
# the `U` after `..\` (or after `../` when a `\` follows `Users`), a drive's mount point before
# `Users`, or a share's leading separators (or its `UNC`) before a drive's share and `Users` or
# before WSL's share, a distribution and `home`: two str.find passes (`home`, `sers`) run
# through megabytes in C, where a regex that tries its look-behind at every position
# (or an alternation of the literals) takes 5-20x longer on a transcript.
_DRIVE_SEPARATORS = frozenset(("\\\\\\\\", "\\\\/", "\\\\", "\\/", "\\", "/"))
_CLIMBS = ("..\\", "..\\\\", "..\\\\\\\\")
_SLASHES = ("\\\\/", "\\/", "/")
"""A `/` as a text writes it: escaped twice, once, or not."""


def _climbs(text: str, slash: int) -> bool:
    """Whether `..` comes right before the `/` (or `\\/`) at `slash`: a relative path into a
    home folder, which starts after that slash."""
    return slash >= 2 and text.startswith("..", slash - 2)


def _mount_start(text: str, users: int) -> int | None:
    """Where a drive's mount point (`/mnt/c/`, `/cygdrive/c/`, `/c/`, its slashes escaped or
    not) starts, when one comes right before the `Users` at `users`; None for a bare letter
    after an HTTP method, a request's target."""
    for slash in _SLASHES:
        width = len(slash)
        drive = users - width - 1
        if (
            drive >= width
            and text[drive] in ascii_letters
            and text.startswith(slash, users - width)
            and text.startswith(slash, drive - width)
        ):
            mount = drive - width
            for root in ("mnt", "cygdrive"):
                at = mount - len(root) - width
                if at >= 0 and text.startswith(slash + root, at):
                    return at
            if _REQUEST_TARGET.search(text, max(mount - 16, 0), mount):
                return None
            return mount
    return None


def _separators_before(text: str, at: int, most: int) -> int:
    """Where the run of up to `most` `\\` and `/` that ends at `at` starts (`at` when none)."""
    start = at
    while start > 0 and at - start < most and text[start - 1] in "\\/":
        start -= 1
    return start


def _name_before(text: str, at: int, most: int) -> int:
    """Where the host's or distribution's name of up to `most` letters that ends at `at`
    starts (`at` when none)."""
    start = at
    while (
        start > 0 and at - start < most and (text[start - 1].isalnum() or text[start - 1] in "_.-")
    ):
        start -= 1
    return start


def _unc_start(text: str, host: int) -> int | None:
    """Where a share's path whose host starts at `host` starts: at its two separators
    (`\\\\host`, `//host`, as escaped), or at the `UNC` of its extended-length form
    (`\\\\?\\UNC\\host`, the prefix before it staying); None with no separator before it."""
    lead = _separators_before(text, host, 8)
    if lead == host:
        return None
    return lead - 3 if lead >= 3 and text.startswith("UNC", lead - 3) else lead


def _share_start(text: str, users: int) -> int | None:
    """Where a share's path starts, when the `Users` at `users` is in a drive's administrative
    share (`\\\\host\\C$\\Users`)."""
    dollar = text.rfind("$", max(users - 5, 0), users - 1)
    drive = dollar - 1
    if drive < 2 or text[drive] not in ascii_letters:
        return None
    if text[dollar + 1 : users] not in _DRIVE_SEPARATORS:
        return None
    host_end = _separators_before(text, drive, 4)
    host = _name_before(text, host_end, 253)
    return _unc_start(text, host) if host_end < drive and host < host_end else None


def _wsl_start(text: str, home: int) -> int | None:
    """Where a share's path starts, when the `home` at `home` is in WSL's share of a
    distribution (`\\\\wsl$\\Ubuntu\\home`, `//wsl.localhost/Ubuntu/home`)."""
    distro_end = _separators_before(text, home, 4)
    distro = _name_before(text, distro_end, 64)
    host_end = _separators_before(text, distro, 4)
    if distro_end == home or distro == distro_end or host_end == distro:
        return None
    for host in ("wsl$", "wsl.localhost"):
        if host_end >= len(host) and text[host_end - len(host) : host_end].lower() == host:
            return _unc_start(text, host_end - len(host))
    return None


def _candidates(text: str) -> list[int]:
    starts: list[int] = []
    index = text.find("home", 1)
    while index >= 0:
        if text[index - 1] in "\\/" and (wsl := _wsl_start(text, index)) is not None:
            starts.append(wsl)
        slash = index - 1
        after = index + 4
        if text[slash] != "/":
            pass
        elif text.startswith("/", after):
            starts.append(index if _climbs(text, slash) else slash)
        elif text.startswith("\\/", after) and slash > 0 and text[slash - 1] == "\\":
            starts.append(index if _climbs(text, slash - 1) else slash - 1)
        elif text.startswith("\\\\/", after) and slash > 1 and text.startswith("\\\\", slash - 2):
            starts.append(index if _climbs(text, slash - 2) else slash - 2)
        index = text.find("home", after)
    index = text.find("sers", 2)
    while index >= 0:
        users = index - 1
        if text[users] in "Uu":
            if text.startswith("/Users/", users - 1):
                starts.append(users if _climbs(text, users - 1) else users - 1)
            elif users >= 2 and text.startswith("\\/Users\\/", users - 2):
                starts.append(users if _climbs(text, users - 2) else users - 2)
            elif users >= 3 and text.startswith("\\\\/Users\\\\/", users - 3):
                starts.append(users if _climbs(text, users - 3) else users - 3)
            # A drive's separator and a climb both end in `\\` or `/` right before `Users`.
            before = text[users - 1]
            if before == "/" and (mount := _mount_start(text, users)) is not None:
                starts.append(mount)
            if before in "\\/":
                colon = text.rfind(":", max(users - 5, 0), users - 1)
                if colon > 0 and text[colon + 1 : users] in _DRIVE_SEPARATORS:
                    starts.append(colon - 1)
                elif (share := _share_start(text, users)) is not None:
                    starts.append(share)
                elif before == "\\":
                    if any(
                        users >= len(climb) and text.startswith(climb, users - len(climb))
                        for climb in _CLIMBS
                    ):
                        starts.append(users)
                elif (
                    users >= 3
                    and text.startswith("\\", users + 5)
                    and text.startswith("..", users - 3)
                ):
                    starts.append(users)
        index = text.find("sers", index + 4)
    starts.sort()
    return starts


def _quoted_climb(text: str, start: int, climb: re.Pattern[str]) -> re.Match[str] | None:
    """The home path at `start` read from the quote that opens a relative path whose climbs
    (`../../`, `..\\`) end at `start`; None when no quote comes before them."""
    at = start
    while True:
        before = at
        while before > 0 and text[before - 1] in "/\\":
            before -= 1
        if before == at or before < 2 or text[before - 2 : before] != "..":
            break
        at = before - 2
    if not start > at > 0 or text[at - 1] not in "\"'":
        return None
    hit = climb.match(text, at - 1)
    return hit if hit is not None and hit.end("climbed") == start else None


# A file on a remote machine as VS Code names it (`vscode-remote://wsl%2Bubuntu/home/<user>/…`,
# `vscode-remote://ssh-remote+host/Users/<user>`, `…+host/c:/Users/<user>`): the home folder
# comes right after the remote's authority, which no look-behind of fixed width can tell.
_REMOTE_AUTHORITY = re.compile(r"vscode-remote:(?://|\\/\\/)[\w.\-%+@]{1,1024}\Z")


_ESCAPED_SLASH = r"\\/"


def _remote(slash: str, user: str) -> str:
    return (
        rf"{slash}(?:home{slash}{_USER}|(?:[A-Za-z]:{slash}|mnt{slash}[A-Za-z]{slash})?"
        rf"[Uu]sers{slash}{user})"
    )


_REMOTE_HOME = re.compile(
    _QUOTE + f"(?:{_remote('/', _SLASHED)}|{_remote(_ESCAPED_SLASH, _ESCAPED)})" + r"(?![\w.\-])"
)


def _remote_home(text: str, start: int) -> re.Match[str] | None:
    """The home path at `start` (its `/home`, `/Users`, `/mnt`, or the drive letter after a
    `/`, its slashes escaped or not) when a VS Code remote's authority comes right before it."""
    if text[start] not in "/\\":
        start -= 2 if text.startswith("\\/", start - 2) else 1
    if start < 0 or _REMOTE_AUTHORITY.search(text, max(start - 1100, 0), start) is None:
        return None
    return _REMOTE_HOME.match(text, start)


def _matches(text: str, json_text: bool) -> list[tuple[int, int]]:
    """(start, end) of every home path, in order, as the home path's pattern (`_patterns`)
    would find them with finditer (a quote before a relative path's climbs counting as right
    before its home folder)."""
    found: list[tuple[int, int]] = []
    end = 0
    home_path, climb = _patterns(json_text)
    match = home_path.match
    remote = "vscode-remote:" in text
    for start in _candidates(text):
        if start < end:
            continue
        if text[start - 1] in "/\\":
            hit = _quoted_climb(text, start, climb) or match(text, start)
        else:
            hit = match(text, start)
        if hit is None and remote and start > 0:
            hit = _remote_home(text, start)
            if hit is not None:
                start = hit.start()  # the `/` before a drive letter
        if hit is not None:
            end = hit.end()
            found.append((start, end))
    return found


# Each function below reads `text` as JSON text unless told it is other text (`json_text`):
# a `\\n` after `C:/Users` is then JSON's line break, no separator and name.


def count_home_paths(text: str, *, json_text: bool = True) -> int:
    """How many home-directory paths `text` holds."""
    return len(_matches(text, json_text))


def first_home_path(text: str, *, json_text: bool = True) -> int | None:
    """Offset of the first home-directory path, or None."""
    found = _matches(text, json_text)
    return found[0][0] if found else None


def home_path_summary(text: str, *, json_text: bool = True) -> tuple[int, int | None]:
    """How many home paths, and where the first starts (one pass)."""
    found = _matches(text, json_text)
    return len(found), (found[0][0] if found else None)


def normalize_home_paths(text: str, *, json_text: bool = True) -> str:
    """`text` with every home-directory path replaced by `~`."""
    return normalize_counted(text, json_text=json_text)[0]


def normalize_counted(text: str, *, json_text: bool = True) -> tuple[str, int]:
    """`text` with every home-directory path replaced by `~`, and how many were replaced."""
    found = _matches(text, json_text)
    if not found:
        return text, 0
    pieces: list[str] = []
    position = 0
    for start, end in found:
        pieces.append(text[position:start])
        pieces.append(REPLACEMENT)
        position = end
    pieces.append(text[position:])
    return "".join(pieces), len(found)
