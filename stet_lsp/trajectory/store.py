"""Trajectory folders on disk: `events.jsonl`, `meta.json`, `narration.md`.

A target's working trajectory lives in `.stet/cache/trajectories/<target-key>/` until the
capstone commits it to `.stet/trajectories/<id>/`. The working folder also keeps each
imported session apart (`sessions/<n>.jsonl` and its record `sessions/<n>.json`) so that a
re-import replaces one session and the trajectory is composed again from all of them.
Everything is written through the repository boundary (stet_lsp/core/safefs.py).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from stet_lsp.core.errors import StetError
from stet_lsp.core.jsonread import object_or_none
from stet_lsp.core.locking import LOCK_TIMEOUT_SECONDS, held
from stet_lsp.core.safefs import (
    atomic_write,
    atomic_writer,
    ensure_stet_gitignore,
    inside,
    is_temporary,
    is_temporary_of,
    make_dirs,
    open_regular,
    put_back_keeping,
    remove_regular,
)
from stet_lsp.core.targets import Target
from stet_lsp.trajectory.events import Event, first_error, parse_event
from stet_lsp.trajectory.eventsfile import read_events_text
from stet_lsp.trajectory.meta import Meta

WORKING = Path(".stet") / "cache" / "trajectories"
COMMITTED = Path(".stet") / "trajectories"
ARCHIVE = WORKING / ".archive"
"""Where a committed working trajectory goes (`folders()` lists no folder without meta.json):
`<target-key>-<id>/`, `<id>` the committed trajectory's."""
EVENTS = "events.jsonl"
HEADER_LIMIT = 16 * 1024 * 1024
"""The most bytes of a trajectory's `meta.json`, or of a session's record
(`sessions/<n>.json`), that are read. A 50 MB Claude Code session of 41,674 events that
changed 1,316 files has a meta.json of 137 KB (its list of files is 96 KB of it, about 73 bytes
a file): 16 MiB holds the header of a run that changed some 200,000 files, while a repository
can commit a meta.json of hundreds of megabytes that git compresses to almost nothing.
events.jsonl has no such limit: it is as long as the run."""
META = "meta.json"
NARRATION = "narration.md"
SESSIONS = "sessions"
KEPT_BEFORE_COMPOSE = ".stet-before-compose"
"""Until a compose is done, each file it replaces is kept beside it (a hard link, not a copy)
as `.<name>.stet-before-compose-<random>`, to put back if it fails (`importing.compose`)."""
KEPT_BEFORE_IMPORT = ".stet-before-import"
"""The same for the stored session an import replaces, until it is composed."""
COMPOSING = "composing"
"""In `sessions/` from the moment a session is stored until a compose has put it into the
trajectory (`mark_composing`): an import that finds it composes again, whatever meta.json
lists. It names, a line each, the imported sessions (their stems) stored and not composed
yet, which go again when their compose does not finish (`settle`); an empty line, or an
empty file, marks what has no transcript to import again (graduation's events) or a folder
moved to a renamed branch's key, which the next compose puts into the trajectory."""
SKILLS_CACHE = Path(".stet") / "cache" / "skills"
"""The lock files of the skills graduation writes (`<name>.lock`), and the record of a
skill's write under way (`<name>.staging`), which settling finishes or takes back."""
SKILL_STAGING = ".staging"
_MARKER_LIMIT = 1 << 20
_STEM = re.compile(r"[0-9a-f]{20}")


@dataclass(frozen=True)
class Folder:
    """One trajectory's folder, inside `root`."""

    root: Path
    relative: Path
    working: bool

    @property
    def path(self) -> Path:
        return self.root / self.relative

    @property
    def id(self) -> str:
        return self.relative.name

    def read_meta(self) -> Meta:
        data = read_small(self.path / META, self.root, self.relative / META)
        if data is None:
            raise StetError(f"{self.relative / META}: no such file")
        try:
            return Meta.model_validate_json(data)
        except ValidationError as error:
            raise StetError(f"{self.relative / META}: {first_error(error, data)}") from None

    def read_events(self) -> list[Event]:
        return [event for _, event in self.iter_events()]

    def iter_events(self) -> Iterator[tuple[int, Event]]:
        text = read_events_text(self.path / EVENTS, self.root)
        if text is None:
            raise StetError(f"{self.relative / EVENTS}: no such file")
        # Only "\n" ends a line (str.splitlines() would also split at a U+2028 in a text).
        for number, line in enumerate(text.split("\n"), 1):
            if not line.strip():
                continue
            try:
                yield number, parse_event(line)
            except ValidationError as error:
                message = first_error(error, line)
                raise StetError(f"{self.relative / EVENTS}:{number}: {message}") from None

    def write(
        self,
        events: bytes | Iterable[bytes],
        meta: Meta,
        narration: str | Iterable[bytes],
        before_meta: Callable[[], None] | None = None,
    ) -> None:
        """narration.md and events.jsonl (each its text, or its pieces' bytes in order), then
        `before_meta` when given, then meta.json, each atomically. The narration goes first:
        pieces made as they are written (rendered and gated) may fail, and then nothing has
        been replaced."""
        ensure_stet_gitignore(self.root)
        make_dirs(self.root, self.relative)
        for name, content in ((NARRATION, narration), (EVENTS, events)):
            with atomic_writer(self.path / name, self.root) as stream:
                if isinstance(content, str):
                    stream.write(content.encode("utf-8"))
                elif isinstance(content, bytes):
                    stream.write(content)
                else:
                    stream.writelines(content)
        if before_meta is not None:
            before_meta()
        # meta.json last: a folder whose meta.json is there is complete.
        atomic_write(self.path / META, meta_json(meta).encode("utf-8"), self.root)


class TooLarge(StetError):
    """A file that is small by design (a trajectory's header, a session's record, a feedback
    file) is larger than its limit: it is not read."""

    def __init__(self, shown: Path | str, size: int, limit: int) -> None:
        self.detail = f"{size:,} bytes, over the {limit:,} such a file may hold (not read)"
        super().__init__(f"{shown}: {self.detail}")


def read_small(
    path: Path, root: Path | None, shown: Path | str, limit: int | None = None
) -> bytes | None:
    """The regular file at `path` (inside `root`, when given), None when there is none;
    TooLarge (naming it as `shown`) when it holds more than `limit` bytes (HEADER_LIMIT by
    default). Its size is checked before anything is read, and no more than the limit is
    ever read."""
    cap = HEADER_LIMIT if limit is None else limit
    stream = open_regular(path, root)
    if stream is None:
        return None
    with stream:
        try:
            size = os.fstat(stream.fileno()).st_size
            data = stream.read(cap + 1) if size <= cap else b""
        except OSError as error:
            raise StetError(f"{shown}: cannot be read ({error.strerror or error})") from None
    if size > cap or len(data) > cap:
        raise TooLarge(shown, max(size, len(data)), cap)
    return data


def refuse_tracked(folder: Folder) -> None:
    """A working trajectory is never committed (`.stet/.gitignore` ignores the cache): one
    whose files git tracks came with the repository (a cloned repository can commit its
    `.stet/cache`) and is not this clone's work, so nothing is imported into it, composed
    from it or committed from it."""
    tracked = tracked_file(folder)
    if tracked is not None:
        raise StetError(tracked_message(folder, tracked))


def tracked_file(folder: Folder) -> str | None:
    """The first file of the folder (or of its `sessions/`) that git tracks, if any (no
    repository, or an index that cannot be read: none)."""
    import os

    from stet_lsp.core.gitindex import index_holds

    names: list[str] = []
    for relative in (folder.relative, folder.relative / "sessions"):
        try:
            listed = os.listdir(inside(folder.root, relative))
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError as error:
            raise StetError(f"cannot list {relative}: {error.strerror or error}") from None
        names += [(relative / name).as_posix() for name in listed]
    return next((name for name in sorted(names) if index_holds(folder.root, name)), None)


def tracked_message(folder: Folder, tracked: str) -> str:
    return (
        f"{tracked} is tracked by git: a working trajectory is never committed, and one "
        f"that came with the repository is not yours. Untrack it (git rm -r --cached "
        f"{folder.relative.as_posix()}), delete it unless it is your own work, and try again; "
        "nothing was changed"
    )


def meta_json(meta: Meta) -> str:
    return json.dumps(meta.model_dump(mode="json"), ensure_ascii=False, indent=2) + "\n"


def working_folder(target: Target) -> Folder:
    return Folder(target.root, WORKING / target.key, working=True)


def folders(root: Path) -> list[Folder]:
    """Every trajectory of the repository: committed ones by id, then working ones (each
    settled first, `settle_if_free`)."""
    found: list[Folder] = []
    for base, working in ((COMMITTED, False), (WORKING, True)):
        try:
            directory = inside(root, base)
        except StetError:
            continue
        if not directory.is_dir():
            continue
        for child in sorted(directory.iterdir()):
            if not child.is_dir() or child.is_symlink():
                continue
            folder = Folder(root, base / child.name, working)
            if working:
                settle_if_free(folder)
            if (child / META).is_file():
                found.append(folder)
    return found


_KEPT = re.compile(r"\.(.+)(\.stet-before-(?:compose|import))-[0-9a-f]{16}")
GRADUATION_SESSION = "graduation"
"""The session id of graduation's events, and the stem of their file in `sessions/`: it has
no transcript, and is composed with a record made from its events when its own is missing."""


def lock_of(folder: Folder) -> Path:
    """The working trajectory's lock file, beside its folder."""
    return folder.path.with_name(folder.path.name + ".lock")


def capstone_record(folder: Folder) -> Path:
    """What a capstone of the working trajectory is doing (`<key>.capstone`, beside its
    folder): written before the capstone writes to the work tree, removed once it is done.
    One left there names a capstone stopped midway, which settling finishes or takes back."""
    return folder.path.with_name(folder.path.name + ".capstone")


def record_obeyed(root: Path, record: Path) -> bool:
    """Whether Stet may act on `record`, a record it keeps in `.stet/cache` of work stopped
    midway (a capstone's, a skill write's): only when git's index surely does not track it.
    The cache is never committed (`.stet/.gitignore` ignores it): a record git tracks (or
    whose tracking cannot be told) came with the repository, and names writes and removals
    of its author's choosing, none of them done here."""
    from stet_lsp.core.gitindex import index_tracks

    return index_tracks(root, record.relative_to(root).as_posix()) is False


def record_untracked_message(root: Path, record: Path) -> tuple[str, str] | None:
    """Why Stet may not write `record`, a record it keeps in `.stet/cache` of work it may be
    stopped in (a capstone's, a skill write's), when git tracks it or whether git does cannot
    be told (`record_obeyed`): one written there would overwrite the repository's file, and
    one left there by a stopped writer would be obeyed by no later command. The reason
    (`tracked`, or `index` when the index cannot be read) and the message; None when git
    surely does not track it."""
    from stet_lsp.core.gitindex import index_tracks

    relative = record.relative_to(root).as_posix()
    tracks = index_tracks(root, relative)
    if tracks is False:
        return None
    if tracks is None:
        return "index", (
            "the git index cannot be read here (a split or sparse index, say), so whether "
            f"git tracks {relative} cannot be told, and Stet writes no record git may track; "
            "nothing was changed"
        )
    return "tracked", (
        f"{relative} is tracked by git: Stet's records in .stet/cache are never committed, "
        f"and one that came with the repository is not yours. Untrack it (git rm --cached "
        f"{relative}), delete it unless it is your own work, and try again; nothing was changed"
    )


def record_tracked(root: Path, record: Path) -> bool:
    """Whether git's index surely tracks `record` (`record_obeyed`'s other certainty)."""
    from stet_lsp.core.gitindex import index_tracks

    return index_tracks(root, record.relative_to(root).as_posix()) is True


@contextmanager
def working_held(folder: Folder, timeout: float = LOCK_TIMEOUT_SECONDS) -> Iterator[bool]:
    """The working trajectory's lock, waited for at most `timeout` seconds (0: tried once);
    yields whether it was taken. Once it is, what a writer killed midway left is settled
    (`settle`) before anything else: every writer of the working trajectory takes its lock
    so (`working_lock`), and none writes over another's leftovers that the next settling
    would undo."""
    with held(lock_of(folder), folder.root, timeout) as acquired:
        if acquired:
            settle(folder)
        yield acquired


@contextmanager
def working_lock(folder: Folder) -> Iterator[None]:
    """`working_held`, or StetError saying the working trajectory is locked. A folder git
    tracks is refused before its lock file is made (`refuse_tracked`): a repository that
    commits `.stet/cache` would see it."""
    refuse_tracked(folder)
    with working_held(folder) as acquired:
        if not acquired:
            raise StetError(
                f"the working trajectory is locked by another process ({lock_of(folder)}); "
                "try again"
            )
        yield


def settle(folder: Folder) -> None:
    """What a compose or an import killed midway (or stopped) kept aside in the working
    trajectory, settled; call it holding the working trajectory's lock (`working_held`
    does). A compose that made its last write (meta.json) was done: the files it kept go, and
    so does the `composing` marker, since it composed every session stored. One that did not
    is undone: each file it kept is put back, and a file of the trajectory it wrote where
    there was none goes (every one of a first compose's, graduation's too, of which the
    marker alone tells: it kept nothing aside), so the trajectory is the one composed
    before, never a mix of two composes' files; settling stopped at any point
    leaves what the next one finishes (`put_back_all`). An imported session whose compose
    did not finish (the marker names it) is taken back with it: the session it replaced is
    put back, a new one goes, and the
    stored sessions are what the trajectory was composed from (a value the compose found and
    redacted in them is back as it was before; importing the session again finds it again).
    An import killed before it marked its session keeps its old session: what it kept is put
    back unless it wrote the session's record. Then a stored session with no record (an
    import killed before it wrote the record of a new session) is taken back, and the
    temporary files of writes killed before their rename go. Nothing a killed writer left
    outlives the next command that reads the trajectory. A folder git tracks is left as it
    is: it came with the repository, and is none of this clone's work (`refuse_tracked`).
    A graduation stopped as it wrote a skill is settled first (`graduation.settle_skills`),
    then a capstone stopped midway: finished when its commit was made (the
    working trajectory then archived), else taken back (`capstone.finish_stopped`); the
    temporary file of a capstone record's write killed before its rename goes."""
    if skill_writes_left(folder.root):
        # Imported here: graduation's module imports this one.
        from stet_lsp.trajectory.graduation import settle_skills

        settle_skills(folder.root)
    record = capstone_record(folder)
    if _regular(record) and record_obeyed(folder.root, record):
        # Imported here: the capstone's module imports this one.
        from stet_lsp.trajectory.capstone import finish_stopped

        finish_stopped(folder)
    elif _regular(record) and not record_tracked(folder.root, record):
        # Maybe a capstone's stopped midway, maybe one that came with the repository: it
        # cannot be finished or taken back, nor known for none of this clone's. Nothing may
        # be written to the working trajectory meanwhile: a finish would archive it, with
        # whatever was added since.
        shown = record.relative_to(folder.root).as_posix()
        raise StetError(
            f"a capstone stopped midway ({shown}) cannot be finished yet: the git index "
            "cannot be read here (a split or sparse index, say), so whether git tracks that "
            "record cannot be told; try again once libgit2 can read the index (git "
            "update-index --no-split-index)"
        )
    for leftover in record_temporaries(folder.root, record):
        remove_regular(leftover, folder.root)
    sessions = folder.path / SESSIONS
    groups: dict[Path, dict[Path, Path]] = {}
    temporary: list[Path] = []
    for relative in (folder.relative, folder.relative / SESSIONS):
        try:
            directory = inside(folder.root, relative)
            names = os.listdir(directory)
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError as error:
            raise StetError(f"cannot list {relative}: {error.strerror or error}") from None
        for name in sorted(names):
            if is_temporary(name) and _regular(directory / name):
                temporary.append(directory / name)
            match = _KEPT.fullmatch(name)
            if match is None or not _regular(directory / name):
                continue  # a folder or a link under such a name is no writer's
            path = directory / match[1]
            if match[2] == KEPT_BEFORE_COMPOSE:
                last = folder.path / META
            elif relative != folder.relative:
                last = path.with_suffix(".json")  # the session's record
            else:
                continue  # an import keeps nothing of this folder's own
            groups.setdefault(last, {})[path] = directory / name
    marked = marked_sessions(folder)
    stems = marked[0] if marked is not None else []
    meta = folder.path / META
    narration = folder.path / NARRATION
    first_unfinished = meta not in groups and _first_compose_unfinished(folder, marked)
    if not (groups or temporary or stems or first_unfinished or _unrecorded(sessions)):
        return
    if tracked_file(folder) is not None:
        return
    kept_by_compose = groups.get(meta, {})
    composed: bool | None = None  # whether a compose finished since the marked were stored
    began = False
    if meta in groups:
        # A compose keeps narration.md first and writes it first, once all it replaces is
        # kept: until then it wrote nothing, and a meta.json with no copy was not kept yet.
        began = _written(narration, kept_by_compose.get(narration), folder.root)
        composed = began and _written(meta, kept_by_compose.get(meta), folder.root)
    elif stems:
        composed = all(
            sessions / f"{stem}.json" not in groups and _listed(folder, stem) for stem in stems
        )
    elif first_unfinished:
        composed = False
    if composed is False and (began or (meta not in kept_by_compose and not _regular(meta))):
        # Written where there was nothing to keep (or, with no meta.json, where there is no
        # trajectory): not there before the compose.
        # events.jsonl first: while narration.md is there, the next settling sees the
        # compose began, and finishes this if it is stopped.
        for name in (EVENTS, NARRATION):
            if folder.path / name not in kept_by_compose and _regular(folder.path / name):
                remove_regular(folder.path / name, folder.root)
    for last, kept in sorted(groups.items(), key=lambda item: item[0] != meta):
        if last == meta:
            done = bool(composed)
        elif composed is not None and last.stem in stems:
            done = composed
        else:
            done = _written(last, kept.get(last), folder.root)
        if done:
            # The last file's copy goes last: while it is there, the others are too.
            for _, aside in sorted(kept.items(), key=lambda item: item[0] == last):
                remove_regular(aside, folder.root)
        else:
            put_back_all(kept, narration if last == meta else last, folder.root)
    if composed is False:
        for stem in stems:  # those kept were put back above: new sessions go, record first
            if sessions / f"{stem}.json" not in groups:
                for path in (sessions / f"{stem}.json", sessions / f"{stem}.jsonl"):
                    remove_regular(path, folder.root)
    for path in [*_unrecorded(sessions), *temporary]:
        remove_regular(path, folder.root)
    if marked is not None and (composed or (composed is False and stems)):
        if composed or not marked[1]:
            remove_regular(sessions / COMPOSING, folder.root)
        else:
            atomic_write(sessions / COMPOSING, b"", folder.root)  # what else it marked stays


def _first_compose_unfinished(folder: Folder, marked: tuple[list[str], bool] | None) -> bool:
    """Whether a first compose of what the marker marks, with no imported session among it
    (graduation's events), may have stopped before meta.json: with no trajectory before it,
    it kept nothing aside, and only the files it wrote (events.jsonl, narration.md where there
    is no meta.json) tell of it."""
    return (
        marked is not None
        and not marked[0]
        and not _regular(folder.path / META)
        and any(_regular(folder.path / name) for name in (EVENTS, NARRATION))
    )


def put_back_all(kept: dict[Path, Path], decisive: Path, root: Path) -> None:
    """Each file of `kept` put back, in steps a stop at any point leaves to the next settling
    to finish: every file put back beside its copy, `decisive` first (the file by which a
    settling tells whether the writer had written: as the one kept again, nothing reads as
    written any more), then the copies let go, the decisive one's last. Put back by renames,
    a file with no copy left would read as one the writer wrote where there was none."""
    ordered = sorted(kept.items(), key=lambda item: item[0] != decisive)
    for path, aside in ordered:
        put_back_keeping(aside, path, root)
    for _, aside in reversed(ordered):
        remove_regular(aside, root)


def marked_sessions(folder: Folder) -> tuple[list[str], bool] | None:
    """What the `composing` marker marks as not composed: the imported sessions it names (their
    stems), and whether it marks anything else; None when there is no marker (a link in its
    place is none)."""
    path = folder.path / SESSIONS / COMPOSING
    if not _regular(path):
        return None
    try:
        data = read_small(path, folder.root, COMPOSING, _MARKER_LIMIT)
    except StetError:
        return [], True
    if data is None:
        return None
    lines = data.decode("utf-8", "replace").split("\n")
    if lines[-1] == "":
        lines.pop()
    stems = [line for line in lines if _STEM.fullmatch(line)]
    return list(dict.fromkeys(stems)), not lines or len(stems) < len(lines)


def mark_composing(folder: Folder, stem: str | None = None) -> None:
    """Mark the working trajectory as not composed until the next compose is done: for the
    imported session `stem` (taken back when its compose does not finish, `settle`), or for
    whatever is stored (None: graduation's events, a folder moved to another key)."""
    marked = marked_sessions(folder)
    stems, other = marked if marked is not None else ([], False)
    if stem is None:
        other = True
    elif stem not in stems:
        stems = [*stems, stem]
    text = ("\n" if other else "") + "".join(f"{name}\n" for name in stems) if stems else ""
    atomic_write(folder.path / SESSIONS / COMPOSING, text.encode("utf-8"), folder.root)


def _listed(folder: Folder, stem: str) -> bool:
    """Whether meta.json lists every source of the stored session `stem` (its record's): a
    compose that wrote meta.json where there was none before put it into the trajectory."""
    try:
        record = read_small(folder.path / SESSIONS / f"{stem}.json", folder.root, stem)
        meta = read_small(folder.path / META, folder.root, META)
    except StetError:
        return False
    sources = _sources(record)
    return bool(sources) and all(source in _sources(meta) for source in sources)


def _sources(data: bytes | None) -> list[object]:
    found = object_or_none(data) if data is not None else None
    listed = found.get("sources") if found is not None else None
    return listed if isinstance(listed, list) else []


def _unrecorded(sessions: Path) -> list[Path]:
    """The stored sessions without a record: an import killed between the two (a record is
    written after its session, and the record of a session imported again is put back with
    it). Graduation's has no transcript to import it again from, and is composed without one."""
    names = _names(sessions)
    return [
        sessions / name
        for name in sorted(names)
        if name.endswith(".jsonl")
        and not name.startswith(".")
        and name != f"{GRADUATION_SESSION}.jsonl"
        and name.removesuffix(".jsonl") + ".json" not in names
        and _regular(sessions / name)
    ]


def _regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _written(last: Path, before: Path | None, root: Path) -> bool:
    """Whether the file at `last` is a new one: none was there before (`before`, what was
    there, kept aside) and one is now, or it is no longer the one kept (a copy, where the
    file system has no hard links, is compared by content)."""
    try:
        now = os.lstat(last)
    except FileNotFoundError:
        return False
    if before is None:
        return True
    kept = os.lstat(before)
    if (now.st_dev, now.st_ino) == (kept.st_dev, kept.st_ino):
        return False
    return not _same_content(last, before, root)


_COMPARED = 1 << 20


def _same_content(one: Path, other: Path, root: Path) -> bool:
    """Whether two regular files inside `root` hold the same bytes, read a block at a time
    (neither is ever held whole: a repository can hold a pair of hundreds of megabytes)."""
    with contextlib.ExitStack() as streams:
        opened = []
        for path in (one, other):
            stream = open_regular(path, root)
            if stream is None:  # gone meanwhile: not the same
                return False
            opened.append(streams.enter_context(stream))
        first, second = opened
        if os.fstat(first.fileno()).st_size != os.fstat(second.fileno()).st_size:
            return False
        while True:
            block = first.read(_COMPARED)
            if block != second.read(_COMPARED):
                return False
            if not block:
                return True


def settle_if_free(folder: Folder) -> None:
    """`settle`, when the working trajectory's lock is free at once: held, a writer is at
    work, and what it kept aside is its own. For the commands that read the
    trajectory; one that cannot settle it (the disk, the permissions) reads it all the
    same. A folder git tracks is not settled, and its lock file is not made: a repository
    that commits `.stet/cache` would see it."""
    try:
        directories = [inside(folder.root, folder.relative)]
        directories.append(directories[0] / SESSIONS)
        left = any(
            _KEPT.fullmatch(name) or is_temporary(name) for d in directories for name in _names(d)
        )
        marked = marked_sessions(folder)
        record = capstone_record(folder)
        stopped = (
            (_regular(record) and record_obeyed(folder.root, record))
            or skill_writes_left(folder.root)
            or bool(record_temporaries(folder.root, record))
        )
        if not (
            left
            or stopped
            or _unrecorded(directories[1])
            or (marked is not None and marked[0])
            or _first_compose_unfinished(folder, marked)
        ):
            return
        if tracked_file(folder) is not None:
            return
        with working_held(folder, 0):
            pass
    except (OSError, StetError):
        pass


def skill_writes_left(root: Path) -> bool:
    """Whether a graduation stopped as it wrote a skill left its record (`SKILL_STAGING`), or
    the temporary file of that record (`skill_record_temporary`), one git does not track
    (`record_obeyed`)."""
    try:
        names = _names(inside(root, SKILLS_CACHE))
    except StetError:
        return False
    return any(
        (name.endswith(SKILL_STAGING) or skill_record_temporary(name) is not None)
        and record_obeyed(root, root / SKILLS_CACHE / name)
        for name in names
    )


def skill_record_temporary(name: str) -> str | None:
    """The name of the skill whose write record (`<skill>.staging`) the file `name` was to
    become, when `name` is exactly the temporary file of that record's write."""
    record = name[1:].rsplit(".", 2)[0]
    if record.endswith(SKILL_STAGING) and is_temporary_of(name, record):
        return record.removesuffix(SKILL_STAGING)
    return None


def record_temporaries(root: Path, record: Path) -> list[Path]:
    """What writes of `record` (a record Stet keeps in `.stet/cache`) killed before their
    rename left beside it: the temporary files of those writes, by their exact name
    (`safefs.is_temporary_of`), regular files git does not track (`record_obeyed`)."""
    folder = inside(root, record.parent)
    return [
        folder / name
        for name in sorted(_names(folder))
        if is_temporary_of(name, record.name)
        and _regular(folder / name)
        and record_obeyed(root, folder / name)
    ]


def _names(directory: Path) -> list[str]:
    try:
        return os.listdir(directory)
    except (FileNotFoundError, NotADirectoryError):
        return []


def folder_of(root: Path, path: Path) -> Folder | None:
    """The trajectory whose folder holds the file at `path`, if any."""
    for folder in folders(root):
        if path.parent == folder.path:
            return folder
    return None


def find_folder(root: Path, trajectory_id: str) -> Folder:
    """A trajectory of the repository by id (or an unambiguous prefix of one)."""
    return pick_folder(folders(root), trajectory_id)


def pick_folder(candidates: list[Folder], trajectory_id: str) -> Folder:
    """The one of `candidates` with the id `trajectory_id`, or the only one whose id starts
    with it; the error names the candidates (and only them). An empty id names none (as a
    prefix it would name every one)."""
    if not trajectory_id:
        raise StetError("a trajectory id cannot be empty (`stet trajectory list` shows the ids)")
    exact = [folder for folder in candidates if folder.id == trajectory_id]
    if exact:
        return exact[0]
    matching = [folder for folder in candidates if folder.id.startswith(trajectory_id)]
    if len(matching) == 1:
        return matching[0]
    if not matching:
        known = ", ".join(folder.id for folder in candidates) or "none yet"
        raise StetError(f"no trajectory {trajectory_id!r} (trajectories: {known})")
    names = ", ".join(folder.id for folder in matching)
    raise StetError(f"{trajectory_id!r} names several trajectories: {names}")
