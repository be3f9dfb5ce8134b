"""A detached HEAD's line of work: the target of a detached HEAD is its commit, so every
`git commit` on it (an amend, a cherry-pick, a rebase's steps) makes a new target, and the
style sheet and working trajectory of the commit before would be stranded there.

HEAD's reflog says where HEAD came from. Read newest first, each entry that moved HEAD to the
commit reached so far by carrying the work on (a commit of any kind, an amend, a
cherry-pick, a revert, a merge or pull, a rebase's start and steps, `git am`, a reset) gives
the commit before it; the walk stops at any other entry. A checkout or switch (`checkout:
moving from X to Y`) is another line of work, as is a move git does not name: a sheet never
follows HEAD across one.

Except into a branch made where HEAD was detached (`git switch -c`, `git checkout -b`, or
`git branch` then a checkout of it): git's own advice for keeping a detached HEAD's commits.
The branch's reflog starts with `branch: Created from HEAD` at commit C, and HEAD's reflog
moved from C, detached, to that branch; the branch continues the detached HEAD at C and the
ones before it."""

from __future__ import annotations

import re

from stet_lsp.core.reflogs import log_message, reflog
from stet_lsp.core.targets import Target

TYPE_CHECKING = False  # as typing's, without importing typing (start-up of the command line)
if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    import pygit2

_CARRIES_ON = re.compile(r"(commit|cherry-pick|revert|merge|pull|rebase|am|reset)\b")


def earlier_heads(repo: pygit2.Repository, target: Target) -> list[Target]:
    """The detached HEADs the detached HEAD `target` (HEAD now) continues, nearest first."""
    import pygit2

    if target.kind != "detached" or not repo.head_is_detached:
        return []
    at = repo.head.target
    if not isinstance(at, pygit2.Oid) or repo[at].short_id != target.name:
        return []  # HEAD moved since the target was resolved: its line is not HEAD's
    try:
        entries = reflog(repo, "HEAD")
    except (pygit2.GitError, KeyError, ValueError):  # no reflog, or one git cannot read
        return []
    return _carried_to(repo, target.root, entries, at)


_CHECKOUT_FROM_COMMIT = re.compile(r"checkout: moving from ([0-9a-f]{40}|[0-9a-f]{64}) to (.+)")
_CREATED_FROM_HEAD = "branch: Created from HEAD"


def heads_made_into(repo: pygit2.Repository, target: Target, names: list[str]) -> list[Target]:
    """The detached HEADs the branch `target` (also called `names` before) was made from,
    nearest first: the one it was created at, and those that one continues."""
    import pygit2

    reference = repo.references.get(f"refs/heads/{target.name}")
    if reference is None:
        return []
    try:
        created = list(reference.log())[-1]
        entries = reflog(repo, "HEAD")
    except (pygit2.GitError, KeyError, ValueError, IndexError):  # no reflog, or an odd one
        return []
    if log_message(created).strip() != _CREATED_FROM_HEAD:
        return []
    at, since = created.oid_new, created.committer.time
    for entry, message in entries:
        if entry.committer.time < since:
            return []  # older than the branch: HEAD never moved from its commit onto it
        moved = _CHECKOUT_FROM_COMMIT.fullmatch(message.strip())
        if (
            moved is not None
            and entry.oid_old == at
            and moved.group(1) == str(at)
            and moved.group(2) in names
        ):
            if at not in repo:
                return []
            here = Target(target.root, "detached", repo[at].short_id)
            return [here, *_carried_to(repo, target.root, entries, at)]
    return []


def _carried_to(
    repo: pygit2.Repository,
    root: Path,
    entries: Iterator[tuple[pygit2.RefLogEntry, str]],
    at: pygit2.Oid,
) -> list[Target]:
    """The detached HEADs that HEAD's reflog `entries` (newest first, from HEAD at `at` on,
    each with its message) carried on to `at`, nearest first."""
    earlier: list[Target] = []
    seen = {at}
    for entry, message in entries:
        if entry.oid_new != at or not _CARRIES_ON.match(message):
            break
        at = entry.oid_old
        if at in seen or at not in repo:  # a reset back and forth; none before the first
            break
        seen.add(at)
        earlier.append(Target(root, "detached", repo[at].short_id))
    return earlier
