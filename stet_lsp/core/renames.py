"""A renamed branch keeps its style sheet: `git branch -m old new` names the sheet's target
anew, and the sheet of `old` (keyed by the old name) would otherwise be stranded, and then
removed by retention as the sheet of a branch that no longer exists.

Git records a rename in the branch's reflog ("Branch: renamed refs/heads/old to
refs/heads/new", libgit2 with a small b), which moves with the branch; that record is the
only evidence taken. A sheet moves only to a name that has no sheet of its own, under both
sheets' locks, its header (and the title Stet wrote) naming the new branch.

A detached HEAD moved on by a commit (an amend, a rebase: `core/lineage.py`) takes the sheet
of the commit it came from the same way, so that no move merges two sheets.

A name can change hands: after `git branch -m a tmp; git branch -m b a; git branch -m tmp b`
(two branches' names swapped) the branch now called `b` finds a sheet of that name that the
other branch wrote while it was `b`. A sheet last written before the current branch took its
name by a rename (in an earlier second than its reflog's record of it), while the branch that
was renamed away from that name last before held it (in one of its stays under the name, from
the second it took the name, by a rename or by its making, to the second it left it), is that
branch's: it moves to that branch's name when that has none, and the current branch then
follows its own former names. A sheet written in no stay of that branch under the name stays
where it is. Two sheets each waiting
for the other's name (the swap made with no Stet command between the renames) stay where
they are."""

from __future__ import annotations

import os
import re
from contextlib import ExitStack

from stet_lsp.core.errors import StetError
from stet_lsp.core.gitindex import index_holds
from stet_lsp.core.locking import held, remove_held
from stet_lsp.core.records import FrozenRecord
from stet_lsp.core.reflogs import reflog
from stet_lsp.core.safefs import atomic_write, read_regular, remove_regular, unchanged_since
from stet_lsp.core.sheet_format import SHEET_LIMIT, SheetDocument, written_name
from stet_lsp.core.targets import Target

TYPE_CHECKING = False  # as typing's, without importing typing (start-up of the command line)
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Final

    import pygit2

_RENAMED = re.compile(r"branch: renamed refs/heads/(.+?) to refs/heads/(.+)", re.IGNORECASE)


class Move(FrozenRecord):
    """A sheet moved from `path` to `to`; `target`: the name its branch had."""

    __slots__ = ("path", "reason", "target", "to")
    path: Final[Path]
    to: Final[Path]
    target: Final[str]
    reason: Final[str]

    def __init__(self, path: Path, to: Path, target: str, reason: str) -> None:
        self.path, self.to, self.target, self.reason = path, to, target, reason

    @classmethod
    def of(cls, source: Target, destination: Target) -> Move:
        if source.kind == "detached" and destination.kind == "branch":
            reason = f"branch {destination.name!r} was made from detached HEAD {source.name}"
        elif source.kind == "detached":
            reason = f"HEAD moved on from {source.name} to {destination.name}"
        else:
            reason = f"branch {source.name!r} was renamed to {destination.name!r}"
        return cls(source.sheet_path, destination.sheet_path, source.name, reason)

    def to_dict(self) -> dict[str, str]:
        return {
            "path": str(self.path),
            "to": str(self.to),
            "target": self.target,
            "reason": self.reason,
        }


def former_names(repo: pygit2.Repository, branch: str) -> list[str]:
    """The names the local branch `branch` had before, newest first (from its reflog)."""
    names: list[str] = []
    for _, old, _ in _renames_in_log(repo, branch):
        if old not in names and old != branch:
            names.append(old)
    return names


def _renames_in_log(repo: pygit2.Repository, branch: str) -> list[tuple[int, str, str]]:
    """The renames the reflog of the local branch `branch` records: (time, old name, new
    name), newest first."""
    import pygit2

    try:
        entries = list(reflog(repo, f"refs/heads/{branch}"))
    except (pygit2.GitError, KeyError, ValueError):  # no branch, no reflog, or one git cannot read
        return []
    found = []
    for entry, message in entries:
        matched = _RENAMED.fullmatch(message.strip())
        if matched:
            found.append((entry.committer.time, matched.group(1), matched.group(2)))
    return found


def previous_holder(repo: pygit2.Repository, current: Target, written: float) -> Target | None:
    """The branch that had `current`'s name before `current` took it by a rename, when its
    sheet was last `written` (a time) while that branch held the name: the branch renamed
    away from the name last before `current` took it. None when the sheet may be `current`'s
    own (written since it took the name, or in the same second; `current` itself the last
    to leave the name, renamed back to it), was written in none of the other branch's stays
    under the name (from the second it took the name to the second it left it: the sheet of
    another branch that held the name), or no branch or several (of the same second) left
    it."""
    if current.kind != "branch":
        return None
    took = next(
        (
            t
            for t, old, new in _renames_in_log(repo, current.name)
            if new == current.name and old != new
        ),
        None,
    )
    if took is None or int(written) >= took:
        return None
    left: list[tuple[int, list[tuple[int, int]], str]] = []
    for branch in repo.branches.local:
        stays = _stays(repo, branch, current.name, took)
        if stays:
            left.append((stays[0][1], stays, branch))
    left.sort(key=lambda found: found[0], reverse=True)
    if not left or (len(left) > 1 and left[0][0] == left[1][0]):
        return None
    _, stays, holder = left[0]
    if holder == current.name or not any(came <= int(written) <= away for came, away in stays):
        return None
    return Target(current.root, "branch", holder)


def _stays(repo: pygit2.Repository, branch: str, name: str, until: int) -> list[tuple[int, int]]:
    """When the local branch `branch` held `name` before leaving it by a rename no later than
    `until`: (the time it took the name, the time it left it) each time, newest first. It took
    the name by the rename before, or else when its reflog starts (when the branch was made
    under that name; later, never earlier, when git expired the oldest entries). A stay whose
    start the reflog does not tell ends the list: none when it is the last."""
    renames = _renames_in_log(repo, branch)
    stays: list[tuple[int, int]] = []
    for index, (left, old, _) in enumerate(renames):
        if old != name or left > until:
            continue
        if index + 1 < len(renames):
            came, _, new = renames[index + 1]
            if new != name:
                break  # a reflog that does not say when the branch took the name
            stays.append((came, left))
            continue
        oldest = _oldest_entry_time(repo, branch)
        if oldest is not None:
            stays.append((oldest, left))
    return stays


def _oldest_entry_time(repo: pygit2.Repository, branch: str) -> int | None:
    import pygit2

    reference = repo.references.get(f"refs/heads/{branch}")
    if reference is None:
        return None
    try:
        entries = list(reference.log())
    except (pygit2.GitError, KeyError, ValueError):
        return None
    return entries[-1].committer.time if entries else None


def renamed_branches(repo: pygit2.Repository) -> dict[str, str]:
    """Each former name of a local branch that is no branch now → the branch it became."""
    branches = set(repo.branches.local)
    renamed: dict[str, str] = {}
    for branch in sorted(branches):
        for old in former_names(repo, branch):
            if old not in branches:
                renamed.setdefault(old, branch)
    return renamed


def former_targets(repo: pygit2.Repository, current: Target) -> list[Target]:
    """The targets whose sheet and working trajectory `current` takes over, nearest first: a
    branch's former names that are no branch now, then the detached HEADs it was made from;
    or the detached HEADs a detached HEAD continues."""
    if current.kind == "detached":
        from stet_lsp.core.lineage import earlier_heads

        return earlier_heads(repo, current)
    if current.kind != "branch":
        return []
    from stet_lsp.core.lineage import heads_made_into

    branches = set(repo.branches.local)
    names = former_names(repo, current.name)
    renamed = [Target(current.root, "branch", old) for old in names if old not in branches]
    return renamed + heads_made_into(repo, current, [current.name, *names])


def follow_rename(repo: pygit2.Repository, current: Target) -> Move | None:
    """Give the current target, when it has no sheet, the sheet of the nearest of its
    `former_targets` that has one; a sheet it has that the branch it took its name from
    wrote goes to that branch first (`give_back`). The last move made, or None."""
    if current.kind == "named":
        return None
    given = give_back(repo, current)
    if os.path.lexists(current.sheet_path) or not current.sheet_path.parent.is_dir():
        return given
    for source in former_targets(repo, current):
        try:
            judged = os.lstat(source.sheet_path)
        except OSError:
            continue
        return move_sheet(source, current, judged) or given
    return given


def give_back(repo: pygit2.Repository, current: Target) -> Move | None:
    """Move the sheet of `current`'s name to the branch that wrote it under that name before
    `current` took the name (`previous_holder`), when that branch has none. The move made,
    or None."""
    if current.kind != "branch":
        return None
    try:
        judged = os.lstat(current.sheet_path)
    except OSError:
        return None
    holder = previous_holder(repo, current, judged.st_mtime)
    if holder is None or os.path.lexists(holder.sheet_path):
        return None
    return move_sheet(current, holder, judged)


def kept_apart(repo: pygit2.Repository, current: Target) -> Target | None:
    """The nearest of `current`'s former targets that has a sheet while `current` has one of
    its own: the two are never merged, and the older one is not followed."""
    if not os.path.lexists(current.sheet_path):
        return None
    return next((t for t in former_targets(repo, current) if os.path.lexists(t.sheet_path)), None)


def move_sheet(source: Target, destination: Target, judged: os.stat_result) -> Move | None:
    """Move `source`'s sheet to `destination`, which has none, when it is still the file
    `judged` (same inode, size and time): under both locks, neither waited for. The move
    made, or None (a writer holds a lock, the file changed, or is not `source`'s sheet)."""
    root = source.root
    old, new = source.sheet_path, destination.sheet_path
    old_lock = old.with_name(old.name + ".lock")
    with ExitStack() as stack:
        try:
            # A sheet the repository commits stays, and gets no lock file beside it.
            if index_holds(root, old.relative_to(root).as_posix()):
                return None
            if not stack.enter_context(held(old_lock, root, 0)):
                return None
            if not stack.enter_context(held(new.with_name(new.name + ".lock"), root, 0)):
                return None
            if not unchanged_since(old, judged) or os.path.lexists(new):
                return None
            data = read_regular(old, root, limit=SHEET_LIMIT + 1)
            if data is None or len(data) > SHEET_LIMIT:
                return None
            text = _retargeted(data.decode("utf-8"), source, destination)
            if text is None:
                return None
            atomic_write(new, text.encode("utf-8"), root, mode=0o600)
            remove_regular(old, root)
            remove_held(old_lock, root)
        except (OSError, StetError, UnicodeDecodeError, ValueError):
            return None
    return Move.of(source, destination)


def _retargeted(text: str, source: Target, destination: Target) -> str | None:
    """The sheet `text` naming `destination` as its target; None unless it names `source`."""
    try:
        document = SheetDocument.parse(text)
    except Exception:  # a file the parser cannot read is not proven to be the sheet
        return None
    meta = document.meta
    written = (meta.target_kind, written_name(meta.target_name))
    if written != (source.kind, written_name(source.name)):
        return None
    moved = meta.copy()
    moved.target_kind, moved.target_name = destination.kind, written_name(destination.name)
    document.set_meta(moved)
    title = f"# Style sheet: {written_name(source.label)}\n"
    if document.preamble and document.preamble[0] == title:
        document.preamble[0] = f"# Style sheet: {written_name(destination.label)}\n"
    return document.render()
