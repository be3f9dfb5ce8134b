"""Resolve the target (repository + branch, or an explicit name) and its safe sheet key."""

from __future__ import annotations

import json
import os
import re
import time
import unicodedata
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path

from stet_lsp.core.digests import sha256
from stet_lsp.core.errors import NotInRepository, StetError
from stet_lsp.core.records import FrozenRecord

TYPE_CHECKING = False  # as typing's, without importing typing (start-up of the command line)
if TYPE_CHECKING:
    from typing import Final, Literal

    import pygit2

    TargetKind = Literal["branch", "detached", "named"]

STET_DIR = ".stet"


def is_stet_file(relative: str) -> bool:
    """Whether the repository-relative POSIX path is one of Stet's own files (the sheet,
    trajectories, skills, settings): they hold no margin notes."""
    return relative.startswith(STET_DIR + "/")


SHEETS_DIR = Path(STET_DIR) / "cache" / "sheets"
_SLUG_LENGTH = 48
_UNSAFE = re.compile(r"[^a-z0-9._-]+")


class Target(FrozenRecord):
    """One unit of work. `kind` + `name` identify it; `root` is the repository's work tree."""

    __slots__ = ("kind", "name", "root")
    root: Final[Path]
    kind: Final[TargetKind]
    name: Final[str]

    def __init__(self, root: Path, kind: TargetKind, name: str) -> None:
        self.root = root
        self.kind = kind
        self.name = name

    @property
    def key(self) -> str:
        """A file name that is safe for any name and distinct for distinct targets.

        The readable slug is lossy (lowercased, unsafe characters folded) so the key also
        carries a hash of the exact kind and name: two names that differ only in case or in
        folded characters still get different keys, also on case-insensitive file systems.
        """
        return target_key(self.kind, self.name)

    @property
    def sheet_path(self) -> Path:
        return self.root / SHEETS_DIR / f"{self.key}.md"

    @property
    def label(self) -> str:
        return self.name if self.kind != "detached" else f"detached HEAD {self.name}"


def target_key(kind: str, name: str) -> str:
    digest = sha256(f"{kind}\0{name}".encode("utf-8", "surrogatepass")).hexdigest()[:24]
    folded = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode().lower()
    slug = _UNSAFE.sub("-", folded).strip(".-_")[:_SLUG_LENGTH].rstrip(".-_")
    return f"{kind}--{slug}--{digest}" if slug else f"{kind}--{digest}"


def common_git_dir(git_dir: Path) -> Path:
    """The git folder a repository's folders share: a linked worktree's main one (where
    `info/exclude` and `hooks/` are), else `git_dir` itself."""
    from stet_lsp.core.safefs import read_regular

    pointer = read_regular(git_dir / "commondir", git_dir)
    if pointer is None:
        return git_dir.resolve()
    return (git_dir / pointer.decode("utf-8").strip()).resolve()


def open_repository(path: Path | str) -> pygit2.Repository:
    start = Path(path).resolve()
    repo = find_repository(start)
    _refuse_lost_git_folder(start, repo)
    if repo is None:
        raise NotInRepository(f"not inside a git repository: {start}")
    if repo.is_bare or repo.workdir is None:
        raise StetError(f"the repository at {repo.path} has no work tree")
    return repo


def _refuse_lost_git_folder(start: Path, repo: pygit2.Repository | None) -> None:
    """Refuse a `.git` file on the way up from `start` (a linked work tree's, a submodule's)
    whose `gitdir:` names a folder that does not open, nearer than the repository found: its
    repository was moved or removed. git stops there; looking further up would take the
    folder for part of a repository around it (a work tree kept inside the main one), and
    work on that one's branch."""
    around = Path(repo.workdir).resolve() if repo is not None and repo.workdir else None
    for folder in git_holders(start):
        if folder == around:
            return
        marker = folder / ".git"
        if not marker.is_file() or marker.is_symlink():
            continue
        try:
            with open(marker, "rb") as stream:
                first = stream.readline(4096).decode("utf-8", "surrogateescape")
        except OSError:
            continue
        if first.startswith("gitdir:"):
            named = first[len("gitdir:") :].strip()
            raise StetError(
                f"{marker} names the git folder {named}, which does not open (its repository "
                "was moved or removed, say): run `git worktree repair` in that repository, or "
                "remove the .git file; as git does, Stet looks no further up"
            )


def git_holders(path: Path) -> Iterator[Path]:
    """The folders at or above `path` (as given: resolve it first where links should be
    followed), nearest first, that hold a `.git` of any kind, even one that does not open."""
    return (folder for folder in (path, *path.parents) if os.path.lexists(folder / ".git"))


def find_repository(path: Path | str) -> pygit2.Repository | None:
    """The repository whose work tree holds `path`: that of the nearest folder at or above it
    holding a `.git` that opens (a folder, a link to one, or a file naming one: a worktree,
    a submodule, `--separate-git-dir`). Outside any work tree, a bare repository `path` is
    in; None when there is none.

    libgit2 alone takes any folder on the way up that is laid out as a git folder (HEAD,
    objects/, refs/) for the repository, and git lets such a folder be committed: a cloned
    repository could then name any folder as its work tree (`core.worktree`) and send Stet's
    reads and writes there. A git folder inside a work tree is one of that work tree's files
    (a test fixture, say), as it is when git looks from the work tree's root."""
    import pygit2  # a front end that never opens a repository never loads libgit2

    start = Path(path).resolve()
    for folder in git_holders(start):
        try:
            repo = pygit2.Repository(str(folder), pygit2.enums.RepositoryOpenFlag.NO_SEARCH)
        except pygit2.GitError as error:
            if "config" in str(error):  # a repository, which git refuses too
                raise StetError(f"cannot open the repository: {error}") from None
            continue  # not a repository's (an empty `.git`, say): git looks further up too
        named = Path(repo.workdir).resolve() if repo.workdir else None
        if named != folder:
            raise StetError(
                f"{start}: the git folder of {folder} ({repo.path}) names another work tree "
                f"({named or 'none'}): refused"
            )
        return repo
    found = pygit2.discover_repository(str(start))
    if found is None:
        return None
    try:
        repo = pygit2.Repository(found)
    except pygit2.GitError as error:
        raise StetError(f"cannot open the repository: {error}") from None
    if repo.workdir is not None:
        raise StetError(
            f"{start}: no folder holding a .git is above it, and the git folder found there "
            f"({found}) names a work tree ({repo.workdir}): refused"
        )
    return repo


def repository_root(repo: pygit2.Repository) -> Path:
    return Path(repo.workdir).resolve()


def current_target(repo: pygit2.Repository) -> Target:
    """The branch HEAD names (or the commit a detached HEAD is at); a HEAD git cannot read
    (a loop of references, a name git refuses) is an error saying so."""
    import pygit2

    try:
        return _head_target(repo)
    except (pygit2.GitError, ValueError) as error:  # InvalidSpecError is a ValueError
        raise StetError(f"git cannot read HEAD in {repo.path}: {error}") from None


def _head_target(repo: pygit2.Repository) -> Target:
    root = repository_root(repo)
    if repo.head_is_unborn:
        # Same kind and name as after the first commit, so the sheet carries over.
        head = repo.references.get("HEAD")
        ref = str(head.target) if head is not None else "refs/heads/main"
        return Target(root, "branch", ref.removeprefix("refs/heads/"))
    if repo.head_is_detached:
        rebased = _branch_being_rebased(Path(repo.path))
        if rebased is not None:
            return Target(root, "branch", rebased)
        return Target(root, "detached", repo[repo.head.target].short_id)
    return Target(root, "branch", repo.head.shorthand)


def _branch_being_rebased(git_dir: Path) -> str | None:
    """The branch a rebase in progress works on (HEAD is detached until it ends), as git
    status names it: from `rebase-merge/head-name` or `rebase-apply/head-name`."""
    for folder in ("rebase-merge", "rebase-apply"):
        try:
            with open(git_dir / folder / "head-name", encoding="utf-8") as stream:
                name = stream.read(4096).strip()
        except (OSError, UnicodeDecodeError):
            continue
        if name.startswith("refs/heads/") and len(name) > len("refs/heads/"):
            return name.removeprefix("refs/heads/")
    return None


def resolve_target(path: Path | str = ".", explicit: str | None = None) -> Target:
    """The target for a path inside a repository; `explicit` names one (a PR, say) instead."""
    if explicit is None:
        known = _known_branch(Path(path))
        if known is not None:
            return known
    repo = open_repository(path)
    if explicit is None:
        target = current_target(repo)
        _remember_branch(repo, target)
        _follow_rename(repo, target)
        return target
    if not explicit or not explicit.strip():
        raise StetError("a target name cannot be empty")
    if len(explicit) > 1024:
        raise StetError("a target name is limited to 1024 characters")
    return Target(repository_root(repo), "named", explicit)


def names_a_branch(target: Target) -> bool:
    """Whether a named target bears a local branch's name (`--target main`): it is a target
    of its own all the same, apart from that branch's sheet and trajectory."""
    if target.kind != "named":
        return False
    try:
        return target.name in open_repository(target.root).branches.local
    except (StetError, ValueError):
        return False


# The branch a repository's HEAD named, kept in `.stet/cache/head.json` with HEAD's status
# (size, times, inode), so the commands agents call often resolve their target without
# loading libgit2 while HEAD is unchanged. Only a plain repository (`.git` a folder at the
# root, no variable steering where git looks) on a branch is remembered, where
# `.stet/.gitignore` ignores the cache (a repository that commits it would see the file), and
# not when HEAD changed within two seconds of being read (a later change could keep the same
# times).
_HEAD_CACHE = Path(STET_DIR) / "cache" / "head.json"
_RACY_NANOSECONDS = 2_000_000_000
_DISCOVERY_VARIABLES = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_COMMON_DIR",
    "GIT_CEILING_DIRECTORIES",
    "GIT_DISCOVERY_ACROSS_FILESYSTEM",
)


def _head_status(git_dir: Path) -> list[int] | None:
    try:
        status = os.lstat(git_dir / "HEAD")
    except OSError:
        return None
    return [status.st_size, status.st_mtime_ns, status.st_ctime_ns, status.st_ino, status.st_dev]


def _plain_root(start: Path) -> Path | None:
    """The work tree holding `start` when git would find it by walking up to a `.git`
    folder; None when a variable or a `.git` file (a worktree, a submodule) decides."""
    if any(name in os.environ for name in _DISCOVERY_VARIABLES):
        return None
    folder = next(git_holders(start), None)
    if folder is None:
        return None
    git = folder / ".git"
    return folder if git.is_dir() and not git.is_symlink() else None


def _known_branch(path: Path) -> Target | None:
    from stet_lsp.core.safefs import read_record_object

    try:
        root = _plain_root(path.resolve())
        if root is None or not os.path.isdir(root / STET_DIR):
            return None
        data = read_record_object(root / _HEAD_CACHE, root)  # no more than a record's size
    except OSError:
        return None
    if not isinstance(data, dict) or data.get("root") != str(root):
        return None
    status, read_at, name = data.get("status"), data.get("read_at"), data.get("branch")
    if not isinstance(read_at, int) or not isinstance(name, str) or not name:
        return None
    if not isinstance(status, list) or len(status) != 5:
        return None
    if status != _head_status(root / ".git") or status[1] + _RACY_NANOSECONDS >= read_at:
        return None
    return Target(root, "branch", name)


def _follow_rename(repo: pygit2.Repository, target: Target) -> None:
    """A branch renamed since its sheet was written gets that sheet (and a sheet its new name
    had goes to the branch that wrote it), and a detached HEAD a commit moved on gets the
    sheet of the commit before (`core/renames.py`)."""
    from stet_lsp.core.renames import follow_rename

    follow_rename(repo, target)


def _remember_branch(repo: pygit2.Repository, target: Target) -> None:
    from stet_lsp.core.safefs import atomic_write, ignores_cache

    root = target.root
    if target.kind != "branch" or _plain_root(root) != root:
        return
    if Path(repo.path).resolve() != (root / ".git").resolve():
        return
    if not os.path.isdir(root / STET_DIR / "cache"):  # Stet writes nothing new for this
        return
    if not ignores_cache(root):  # a repository that commits `.stet/cache` would see it
        return
    status, now = _head_status(root / ".git"), time.time_ns()
    if status is None or status[1] + _RACY_NANOSECONDS >= now:
        return  # it would not be believed: nothing to write
    entry = {"root": str(root), "status": status, "read_at": now, "branch": target.name}
    with suppress(OSError, StetError):
        atomic_write(root / _HEAD_CACHE, json.dumps(entry).encode("utf-8"), root)
