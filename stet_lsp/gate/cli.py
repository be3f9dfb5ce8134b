"""`stet gate scan | redact | check`: the gate from the command line and from pre-commit.

Registering the commands imports nothing of the gate (nor pygit2): other commands start fast.
Inside a git repository the results are cached on disk in `.stet/cache/gate`, so scanning an
unchanged file again reads its results instead of scanning. Home paths are reported as one
line per file with their count; every secret is reported on its own.
"""

from __future__ import annotations

import argparse
import base64
import io
import json
import os
import re
import stat
import sys
import time
from collections.abc import Callable, Iterator
from functools import lru_cache

from stet_lsp.core.errors import StetError
from stet_lsp.core.safefs import normal_path, open_regular

TYPE_CHECKING = False  # as typing's, without importing typing (start-up of the command line)
if TYPE_CHECKING:
    from hashlib import blake2b
    from pathlib import Path
    from typing import Any, BinaryIO

    from stet_lsp.gate.allowlist import Allowlist
    from stet_lsp.gate.config import GateConfig

_BINARY_PROBE = 8192
CACHE_DIR = os.path.join(".stet", "cache", "gate")
"""The on-disk result cache, relative to the repository root (never committed). Paths here
are strings: a cached re-scan never imports pathlib (with urllib.parse and ipaddress)."""


Report = dict[str, object]
"""One line of `scan`'s report, as `--json` prints it (without the path): a finding
(rule, line, column, end_line, end_column, preview) or a file's home paths (rule
`home-path`, count, and the first one's line and column)."""


def register(commands: Any) -> None:
    """Add `gate` to the top-level parser's sub-commands."""
    gate = commands.add_parser(
        "gate",
        help="scan for and redact secrets (the redaction gate)",
        description="Static, deterministic secret scanning and redaction for .stet/ artifacts.",
    )
    actions = gate.add_subparsers(dest="gate_command", metavar="ACTION", required=True)

    scan = actions.add_parser("scan", help="report secrets in files (exit 1 if any)")
    scan.add_argument("paths", nargs="+", metavar="PATH", help="files or directories")
    scan.add_argument("--json", action="store_true", help="print findings as JSON")
    add_config_options(scan)
    scan.set_defaults(func=run_scan)

    redact = actions.add_parser("redact", help="write a redacted copy of a file")
    redact.add_argument("path", metavar="PATH")
    target = redact.add_mutually_exclusive_group()
    target.add_argument("-o", "--output", metavar="OUT", help="write here instead of stdout")
    target.add_argument("--in-place", action="store_true", help="rewrite PATH")
    redact.add_argument("--report", metavar="FILE", help="write the redaction report (JSON)")
    add_config_options(redact)
    redact.set_defaults(func=run_redact)

    check = actions.add_parser(
        "check",
        help="fail (exit 1) when a .stet/ artifact holds a secret",
        description="Without PATH: every .stet/ file committed in HEAD or staged in the index "
        "(read from git, .stet/cache/ excluded). With PATH: those files on disk.",
    )
    check.add_argument("paths", nargs="*", metavar="PATH")
    check.add_argument("--json", action="store_true", help="print findings as JSON")
    add_config_options(check)
    check.set_defaults(func=run_check)


def add_config_options(parser: argparse.ArgumentParser) -> None:
    """`--strict` and `--env-name`: added to the repository's `.stet/gate.toml` (also by the
    commands that write `.stet/` artifacts: `stet trajectory import|mark`, `stet graduate`,
    `stet capstone`)."""
    parser.add_argument(
        "--strict",
        action="store_true",
        help="public-repository mode: broader entropy rules (also set by .stet/gate.toml)",
    )
    parser.add_argument(
        "--env-name",
        action="append",
        default=[],
        metavar="NAME",
        help="redact values assigned to this environment variable (repeatable; added to "
        "the names in .stet/gate.toml)",
    )


def config_of(root: Path | str, args: argparse.Namespace) -> GateConfig:
    """The repository's gate configuration (allowlist, `.stet/gate.toml`) with what the
    command's `--strict` and `--env-name` add: what a command that writes passes the gate
    with."""
    from stet_lsp.gate.config import load_config

    return load_config(root, strict=args.strict, env_names=args.env_name)


class Setup:
    """Where the command runs and with what options. The rules (slow to compile) load only
    when a file is not in the on-disk cache."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.root, self.has_work_tree = _repository_root(os.getcwd())
        self._cache_dir: str | bool | None = False
        strict: bool = args.strict
        env_names: list[str] = list(args.env_name)
        if os.path.lexists(os.path.join(self.root, _SETTINGS)):  # else tomllib need not load
            # The repository's own settings: what its write paths redacted with is checked
            # with the same (the flags add to them).
            from stet_lsp.gate.config import GateSettings

            settings = GateSettings.load(self.root)
            strict = strict or settings.strict
            env_names += settings.env_names
        self.strict = strict
        self.env_names: tuple[str, ...] = tuple(sorted(set(env_names)))
        self.allowlist: Allowlist | None = None
        if os.path.lexists(os.path.join(self.root, _ALLOWLIST)):  # else tomllib need not load
            from pathlib import Path

            from stet_lsp.gate.allowlist import Allowlist

            self.allowlist = Allowlist.load(Path(self.root))
        self._config: GateConfig | None = None

    @property
    def config(self) -> GateConfig:
        if self._config is None:
            from stet_lsp.gate.config import GateConfig

            self._config = GateConfig(
                strict=self.strict,
                env_names=self.env_names,
                allowlist=self.allowlist,
            )
        return self._config

    @property
    def cache_dir(self) -> str | None:
        """Made the first time a repository's own file is cached."""
        if self._cache_dir is False:
            self._cache_dir = _cache_dir(self.root) if self.has_work_tree else None
        return self._cache_dir  # type: ignore[return-value]

    def file_key(self, label: str, stream: BinaryIO) -> str:
        """The file's cache key: its bytes (SHA-256: hashlib's OpenSSL loads only when a file
        is hashed, and runs about twice as fast as BLAKE2b on a large file), then the gate's
        code, every option, JSON or not."""
        from hashlib import sha256

        content = sha256()
        while block := stream.read(1 << 20):
            content.update(block)
        digest = _digest()
        digest.update(content.digest())
        digest.update(self.options_key(label).encode("utf-8"))
        return digest.hexdigest()

    def options_key(self, label: str) -> str:
        """What besides its bytes decides a file's findings: the gate's code and options."""
        material = [
            _code_version(),
            "strict" if self.strict else "normal",
            self.allowlist.digest if self.allowlist else "",
            # As stet_lsp.gate.scan.is_json_path (not imported: it loads the rules).
            "json" if label.lower().endswith((".json", ".jsonl", ".ndjson")) else "text",
            *self.env_names,
        ]
        return "\0".join(material)


_FILE_FORMAT = 3
"""3: the reports as `--json` prints them (keys: BLAKE2b of the bytes' SHA-256 and options)."""
_ALLOWLIST = os.path.join(".stet", "gate-allowlist.toml")
"""stet_lsp.gate.allowlist.ALLOWLIST_PATH (not imported here: it loads tomllib)."""
_SETTINGS = os.path.join(".stet", "gate.toml")
"""stet_lsp.gate.config.SETTINGS_PATH (not imported here: it loads the rules and tomllib)."""


def _repository_root(start: str) -> tuple[str, bool]:
    """The work tree holding `start` and True; else where git finds a repository (a bare one:
    no work tree, False) or `start` itself. Without GIT_DIR or GIT_WORK_TREE, walking up for
    a `.git` decides it (as `targets.git_holders` walks, on strings: a cached re-scan loads
    neither pathlib nor libgit2)."""
    if "GIT_DIR" not in os.environ and "GIT_WORK_TREE" not in os.environ:
        folder = start
        while True:
            if os.path.lexists(os.path.join(folder, ".git")):
                return folder, True
            parent = os.path.dirname(folder)
            if parent == folder:
                return start, False
            folder = parent
    from stet_lsp.core.targets import find_repository
    from stet_lsp.gate import gitfiles

    repository = find_repository(start)
    if repository is None:
        return start, False
    return str(gitfiles.repository_root(repository)), bool(repository.workdir)


@lru_cache(maxsize=1)
def _code_version() -> str:
    """A digest of the gate's source files and of the line rule its positions use, by name,
    size and modification time: any change to a rule, a check or the span logic (an edit, an
    install) is a new version, whatever RULESET_VERSION says, without reading the sources at
    every start."""
    digest = _digest()
    folder = os.path.dirname(__file__)
    with os.scandir(folder) as entries:
        sources = sorted(entry.path for entry in entries if entry.name.endswith(".py"))
    for source in [*sources, os.path.join(os.path.dirname(folder), "core", "lines.py")]:
        status = os.stat(source)
        mark = f"{os.path.basename(source)}\0{status.st_size}\0{status.st_mtime_ns}\0"
        digest.update(mark.encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


def _digest() -> blake2b:
    """A BLAKE2b hasher for the file keys and entry names. `_blake2` is where hashlib itself
    takes it from; importing hashlib would load OpenSSL, a tenth of a cached re-scan's time."""
    try:
        from _blake2 import blake2b
    except ImportError:  # an interpreter without the module
        from hashlib import blake2b
    return blake2b(digest_size=32)


def _cache_dir(root: str) -> str | None:
    """`.stet/cache/gate` under the work tree, created through no link (and, the first time,
    with `.stet/.gitignore` ignoring `cache/`, as the style sheet's writer does); None if it
    cannot be."""
    from stet_lsp.core.safefs import checked_path

    try:
        if os.path.isdir(os.path.join(root, CACHE_DIR)):
            return checked_path(root, CACHE_DIR)  # no link on the way
        from pathlib import Path

        from stet_lsp.core.safefs import ensure_stet_gitignore, make_dirs

        ensure_stet_gitignore(Path(root))
        return str(make_dirs(root, CACHE_DIR))
    except StetError:
        return None


def _open(path: str) -> BinaryIO:
    stream = open_regular(path)
    if stream is None:
        raise StetError(f"{path}: no such file or directory")
    return stream


BINARY_SKIPPED = "binary content, not scanned"


def _is_binary(stream: BinaryIO) -> bool:
    """Whether the content is binary (a NUL byte early on, and no UTF-16 byte-order mark); the
    stream is left at its start."""
    binary = b"\0" in stream.read(_BINARY_PROBE) and not _utf16(stream)
    stream.seek(0)
    return binary


def _utf8_mark(stream: BinaryIO) -> bool:
    """Whether the content starts with UTF-8's byte-order mark; the stream is left at its start."""
    stream.seek(0)
    mark = stream.read(3)
    stream.seek(0)
    return mark == b"\xef\xbb\xbf"


def _utf16(stream: BinaryIO) -> bool:
    """Whether the content is UTF-16 text: it starts with a byte-order mark (as PowerShell's
    `>` and Windows tools write text), not UTF-32's little-endian one, which starts with it
    (binary, as before). Scanned decoded; the stream is left at its start."""
    stream.seek(0)
    mark = stream.read(4)
    stream.seek(0)
    return mark[:2] in (b"\xff\xfe", b"\xfe\xff") and mark != b"\xff\xfe\0\0"


NOT_REGULAR_SKIPPED = "not a regular file (a named pipe, a socket or a device), not scanned"


def _files(paths: list[str]) -> Iterator[tuple[str, bool]]:
    """Each file of `paths` (a folder walked), and whether it is to be scanned: a named pipe,
    a socket or a device found in a folder holds no content git would commit, and is passed
    over (named on the command line, it is an error, as is any file that cannot be read)."""
    for name in paths:
        if os.path.isdir(name):
            for root, directories, files in os.walk(name):
                directories[:] = sorted(d for d in directories if not _skipped(root, d))
                for file in sorted(files):
                    path = os.path.join(root, file)
                    try:
                        mode = os.lstat(path).st_mode
                    except OSError:
                        mode = stat.S_IFREG  # gone, or unreadable: opening it says which
                    # A link found in a folder is not followed: it may lead out of the tree.
                    if not stat.S_ISLNK(mode):
                        yield normal_path(path), stat.S_ISREG(mode)
        elif os.path.exists(name):
            yield normal_path(name), True
        else:
            raise StetError(f"{name}: no such file or directory")


def _skipped(parent: str, folder: str) -> bool:
    """Folders a walk leaves out: git's, and Stet's cache (working memory, and the gate's own
    results, which a scan would add to as it went); named on the command line, they are
    scanned."""
    return folder == ".git" or (
        folder == "cache" and os.path.basename(os.path.normpath(parent)) == ".stet"
    )


def _emit(
    reports: list[tuple[str, Report]],
    as_json: bool,
    problems: list[dict[str, str]] | None = None,
    skipped: list[tuple[str, str]] | None = None,
) -> None:
    """The findings, and the files not scanned with why (`skipped`); `problems` (check's) go
    into the JSON document only: the text output gives them on standard error."""
    for path, reason in skipped or ():
        print(f"{shown_path(path)}: {reason}", file=sys.stderr)
    if as_json:
        payload: dict[str, object] = {
            "version": 1,
            "count": len(reports),
            "findings": [{**path_fields(path), **report} for path, report in reports],
            "skipped": [{**path_fields(path), "reason": reason} for path, reason in skipped or ()],
        }
        if problems is not None:
            payload["problems"] = problems
        sys.stdout.write(json.dumps(payload, indent=2) + "\n")
        return
    lines = []
    for path, report in reports:
        line, column = _int(report["line"]) + 1, _int(report["column"]) + 1
        place = f"{shown_path(path)}:{line}:{column}: {report['rule']}"
        if "count" in report:  # a file's home paths
            lines.append(f"{place} x{report['count']} (each becomes ~ when redacted)\n")
        else:
            lines.append(f"{place} {report['preview']}\n")
    sys.stdout.write("".join(lines))


_PLAIN_NAME = re.compile(r'[^\x00-\x1f\x7f"\\\ud800-\udfff]*')
_ESCAPES = {"\n": "\\n", "\t": "\\t", "\r": "\\r", '"': '\\"', "\\": "\\\\"}


def shown_path(path: str) -> str:
    """A file name on one line of text output: as it is, or, when it holds a control
    character, a double quote, a backslash or bytes that are not UTF-8, in double quotes
    with C escapes (as git quotes names: `"a\\nb.txt"`, `"c\\377.txt"`)."""
    if _PLAIN_NAME.fullmatch(path):
        return path
    quoted = []
    for char in path:
        if char in _ESCAPES:
            quoted.append(_ESCAPES[char])
        elif char < " " or char == "\x7f" or "\ud800" <= char <= "\udfff":
            raw = char.encode("utf-8", "surrogateescape")
            quoted.append("".join(f"\\{byte:03o}" for byte in raw))
        else:
            quoted.append(char)
    return '"' + "".join(quoted) + '"'


def path_fields(path: str) -> dict[str, str]:
    """A file name in `--json` output: `path` as Unicode text (bytes that are not UTF-8 as
    U+FFFD), and `path_bytes`, the name's bytes in base64, when it is not UTF-8."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        raw = path.encode("utf-8", "surrogateescape")
        return {
            "path": raw.decode("utf-8", "replace"),
            "path_bytes": base64.b64encode(raw).decode("ascii"),
        }
    return {"path": path}


def _int(value: object) -> int:
    return value if isinstance(value, int) else 0


def _within(path: str, root: str) -> bool:
    """Only a repository's own files are cached in it (scanning a file elsewhere from inside
    a repository writes nothing there)."""
    real = os.path.realpath(path)
    return real == root or real.startswith(root.rstrip(os.sep) + os.sep)


def _scan_one(
    label: str, stream: BinaryIO, setup: Setup, on_disk: bool = True
) -> list[Report] | None:
    """The file's secrets one by one, then its home paths as one report: from the on-disk
    cache when the same bytes were scanned with the same gate and options before (then the
    file is not even decoded; a file on disk whose status is unchanged is not even read).
    None for binary content (a NUL byte early on), which is not scanned. The file is read a
    block at a time: memory does not grow with its size."""
    if _is_binary(stream):
        return None
    own = setup.has_work_tree and _within(label, setup.root) and bool(setup.cache_dir)
    key = ""
    status: list[int] | None = None
    started = time.time_ns()
    if own:
        status = _status(stream) if on_disk else None
        key = _known_key(setup, label, status) or ""
        if not key:
            key = setup.file_key(label, stream)
            stream.seek(0)
            _remember_key(setup, label, status, key)
    cached = _cached(setup.cache_dir, key) if key else None
    if cached is not None:
        return cached
    from stet_lsp.gate.stream import scan_blocks, stream_blocks, utf16_blocks

    blocks, parallel = (utf16_blocks(stream), False) if _utf16(stream) else stream_blocks(stream)
    scanned = scan_blocks(blocks, setup.config, label, parallel=parallel)
    reports = [finding.to_dict() for finding in scanned.findings]
    if scanned.first_home_path is not None:
        line, column = scanned.first_home_path
        reports.append(
            {"rule": "home-path", "count": scanned.home_paths, "line": line, "column": column}
        )
    if _utf8_mark(stream):  # an editor shows the text after it: line 0's columns count from there
        for report in reports:
            for line_key, column_key in (("line", "column"), ("end_line", "end_column")):
                if report.get(line_key) == 0 and _int(report[column_key]) > 0:
                    report[column_key] = _int(report[column_key]) - 1
    if (
        key
        and setup.cache_dir is not None
        and _read_as_keyed(setup, label, stream, status, started, key)
    ):
        from stet_lsp.gate.entries import write_entry

        write_entry(setup.cache_dir, _entry_path(key), {"format": _FILE_FORMAT, "reports": reports})
    return reports


def _read_as_keyed(
    setup: Setup, label: str, stream: BinaryIO, status: list[int] | None, started: int, key: str
) -> bool:
    """Whether the bytes just scanned are the ones `key` was made of, so that their findings
    may be kept under it: another writer may have changed a file on disk after it was hashed
    (or its status vouched for it). Its status vouches for it again when unchanged and older
    than the racy window before the scan started; else it is hashed again."""
    if status is None:
        return True  # bytes that cannot change (git's blobs)
    if _status(stream) == status and status[1] + _RACY_NANOSECONDS < started:
        return True
    stream.seek(0)
    return setup.file_key(label, stream) == key


# A file whose status (size, times, inode) is what it was when its bytes were hashed is not
# hashed again, unless it was modified so close to that moment that a later change could
# keep the same times (as git treats "racily clean" files).
_RACY_NANOSECONDS = 2_000_000_000


def _status(stream: BinaryIO) -> list[int]:
    status = os.fstat(stream.fileno())
    return [status.st_size, status.st_mtime_ns, status.st_ctime_ns, status.st_ino, status.st_dev]


def _status_entry(setup: Setup, label: str) -> str:
    material = "\0".join([os.path.realpath(label), setup.options_key(label)])
    digest = _digest()
    digest.update(material.encode("utf-8", "surrogateescape"))
    name = digest.hexdigest()
    return os.path.join("status", name[:2], f"{name}.json")


def _known_key(setup: Setup, label: str, status: list[int] | None) -> str | None:
    from stet_lsp.gate.entries import read_entry

    if status is None or setup.cache_dir is None:
        return None
    entry = read_entry(setup.cache_dir, _status_entry(setup, label))
    if not isinstance(entry, dict) or entry.get("status") != status:
        return None
    hashed_at, key = entry.get("hashed_at"), entry.get("key")
    if not isinstance(hashed_at, int) or not isinstance(key, str):
        return None
    return key if status[1] + _RACY_NANOSECONDS < hashed_at else None


def _remember_key(setup: Setup, label: str, status: list[int] | None, key: str) -> None:
    from stet_lsp.gate.entries import write_entry

    if status is None or setup.cache_dir is None:
        return
    entry = {"status": status, "key": key, "hashed_at": time.time_ns()}
    write_entry(setup.cache_dir, _status_entry(setup, label), entry)


def _entry_path(key: str) -> str:
    return os.path.join("files", key[:2], f"{key}.json")


def _cached(directory: str | None, key: str) -> list[Report] | None:
    from stet_lsp.gate.entries import read_entry

    if directory is None:
        return None
    data = read_entry(directory, _entry_path(key))
    if not isinstance(data, dict) or data.get("format") != _FILE_FORMAT:
        return None
    reports = data.get("reports")
    if not isinstance(reports, list) or not all(_is_report(report) for report in reports):
        return None  # a torn or foreign entry is a miss
    return reports


_FINDING_FIELDS = {
    "rule": str,
    "line": int,
    "column": int,
    "end_line": int,
    "end_column": int,
    "preview": str,
}
_HOME_FIELDS = {"rule": str, "count": int, "line": int, "column": int}


def _is_report(report: object) -> bool:
    """Whether a cached report has exactly the fields of a finding or of a file's home paths."""
    if not isinstance(report, dict):
        return False
    fields = _HOME_FIELDS if "count" in report else _FINDING_FIELDS
    return report.keys() == fields.keys() and all(
        type(report[name]) is kind for name, kind in fields.items()
    )


def _scan_files(
    paths: list[str], setup: Setup
) -> tuple[list[tuple[str, Report]], list[tuple[str, str]]]:
    """The findings in the files of `paths`, and the files not scanned with why (binary
    content; not a regular file, found in a folder)."""
    results: list[tuple[str, Report]] = []
    skipped: list[tuple[str, str]] = []
    for file, regular in _files(paths):
        if not regular:
            skipped.append((file, NOT_REGULAR_SKIPPED))
            continue
        with _open(file) as stream:
            found = _scan_one(str(file), stream, setup)
        if found is None:
            skipped.append((str(file), BINARY_SKIPPED))
        else:
            results.extend((str(file), report) for report in found)
    return results, skipped


def run_scan(args: argparse.Namespace) -> int:
    findings, skipped = _scan_files(args.paths, Setup(args))
    _emit(findings, args.json, skipped=skipped)
    return 1 if findings else 0


def run_redact(args: argparse.Namespace) -> int:
    from pathlib import Path

    from stet_lsp.core.safefs import atomic_write, atomic_writer
    from stet_lsp.gate.stream import redact_blocks, stream_blocks

    source = Path(args.path)
    for option, given in (("-o", args.output), ("--report", args.report)):
        if given == "":
            raise StetError(f"{option}: an empty path; give a file (or leave {option} out)")
    if args.report:
        _report_apart(args.report, args.path, args.output)
    with _open(str(source)) as stream:
        if _utf16(stream):
            raise StetError(
                f"{args.path}: UTF-16 text is not redacted (scanned, it is); convert it to UTF-8 "
                f"first, e.g. iconv -f UTF-16 -t UTF-8"
            )
        if _is_binary(stream):
            raise StetError(f"{args.path}: binary content is not redacted")
        read = _identity(os.fstat(stream.fileno()))
        blocks, parallel = stream_blocks(stream)
        config = Setup(args).config
        if args.in_place or args.output:
            target = source if args.in_place else Path(args.output)
            with atomic_writer(target) as output:
                write = _encoder(output)
                report = redact_blocks(blocks, config, str(source), write, parallel=parallel)
                if args.in_place:
                    _still_the_file_read(str(source), read)
        else:
            sys.stdout.flush()
            write = _encoder(sys.stdout.buffer)
            report = redact_blocks(blocks, config, str(source), write, parallel=parallel)
            sys.stdout.flush()
    if args.report:
        document = {"version": 1, **report.to_dict()}
        atomic_write(Path(args.report), (json.dumps(document, indent=2) + "\n").encode())
    counts = ", ".join(f"{rule} {n}" for rule, n in report.counts().items())
    print(f"redacted {report.total} span(s){': ' + counts if counts else ''}", file=sys.stderr)
    return 0


def _report_apart(report: str, path: str, output: str | None) -> None:
    """The report is written last: named as the file redacted or its redacted copy, it would
    replace it; a folder, or a file in none, could not be written after the redacted text
    was. Refused before anything is read or written."""
    for name, what in ((path, "redacted"), (output, "the redacted copy is written to")):
        if name is not None and _same_path(report, name):
            raise StetError(f"--report {report} is the file {what} ({name}); name another")
    folder = os.path.dirname(report) or "."
    if os.path.isdir(report) or not os.path.isdir(folder):
        where = "is a folder" if os.path.isdir(report) else f"is in no folder ({folder})"
        raise StetError(f"--report {report} {where}: name a file in an existing folder")


def _same_path(one: str, other: str) -> bool:
    if os.path.realpath(one) == os.path.realpath(other):
        return True
    try:
        return os.path.samefile(one, other)  # a hard link
    except OSError:  # either one missing
        return False


def _identity(status: os.stat_result) -> tuple[int, ...]:
    return (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns)


def _still_the_file_read(path: str, read: tuple[int, ...]) -> None:
    """Before an in-place redaction replaces `path`: it must still be the file read, as it was
    read. The file is read by its descriptor, so neither reading sees another writer replace
    it (a rename) or add to it once read; its redaction must not overwrite what they wrote."""
    try:
        now = _identity(os.stat(path))
    except OSError:
        now = ()
    if now != read:
        from stet_lsp.gate.stream import CHANGED

        raise StetError(CHANGED.format(path=path))


def _encoder(output: BinaryIO) -> Callable[[str], object]:
    return lambda text: output.write(text.encode("utf-8", "surrogateescape"))


def run_check(args: argparse.Namespace) -> int:
    setup = Setup(args)
    if args.paths:
        findings, skipped = _scan_files(args.paths, setup)
        checked = len({path for path, _ in findings})
    else:
        from stet_lsp.gate import gitfiles

        repository = gitfiles.open_repository()
        artifacts = gitfiles.committed_and_staged(repository)
        tracked = gitfiles.staged_cache(repository)
        if tracked:
            # Never committed, whatever they hold: the style sheet is private working memory.
            message = "in git's index, though .stet/cache/ is never committed"
            if args.json:
                _emit([], True, [{**path_fields(path), "message": message} for path in tracked])
            for path in tracked:
                print(f"{shown_path(path)}: {message}", file=sys.stderr)
            print(
                "stet gate: take them out of the index (git rm --cached -r .stet/cache) and "
                "commit that",
                file=sys.stderr,
            )
            return 1
        findings, skipped = [], []
        for artifact in artifacts:
            found = _scan_one(artifact.path, io.BytesIO(artifact.data), setup, on_disk=False)
            if found is None:
                skipped.append((artifact.label, BINARY_SKIPPED))
            else:
                findings.extend((artifact.label, report) for report in found)
        checked = len(artifacts) - len(skipped)
    _emit(findings, args.json, [], skipped)
    if findings:
        print(f"stet gate: {len(findings)} unredacted finding(s)", file=sys.stderr)
        return 1
    if not args.paths:
        print(f"stet gate: {checked} artifact(s) clean", file=sys.stderr)
    return 0
