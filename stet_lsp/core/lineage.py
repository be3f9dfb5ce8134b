"""A detached HEAD's line of work: the target of a detached HEAD is its commit, so every
`git commit` on it (an amend, a cherry-pick, a rebase's steps) makes a new target, and the
style sheet and working trajectory of the commit before would be stranded there.

HEAD's reflog says where HEAD came from. Read newest first, each entry that moved HEAD to the
commit reached so far by carrying the work on (a commit of any kind, an amend, a
cherry-pick, a revert, a merge or pull, a rebase's start and steps, `git am`, a reset) gives
the commit before it; the walk stops at any other entry. A checkout or switch (`checkout:
moving from X to Y`) is another line of work, as is a move git does not name: a sheet never
follows HEAD across one."""

from __future__ import annotations

import re

from stet_lsp.core.targets import Target

TYPE_CHECKING = False  # as typing's, without importing typing (start-up of the command line)
if TYPE_CHECKING:
    import pygit2

_CARRIES_ON = re.compile(r"(commit|cherry-pick|revert|merge|pull|rebase|am|reset)\b")


def earlier_heads(repo: pygit2.Repository, target: Target) -> list[Target]:
    """The detached HEADs the detached HEAD `target` (HEAD now) continues, nearest first."""
    import pygit2

    if target.kind != "detached" or not repo.head_is_detached:
        return []
    at = repo.head.target
    if repo[at].short_id != target.name:
        return []  # HEAD moved since the target was resolved: its line is not HEAD's
    try:
        entries = repo.references["HEAD"].log()
    except (pygit2.GitError, KeyError, ValueError):  # no reflog, or one git cannot read
        return []
    earlier: list[Target] = []
    seen = {at}
    for entry in entries:
        if entry.oid_new != at or not _CARRIES_ON.match(entry.message or ""):
            break
        at = entry.oid_old
        if at in seen or at not in repo:  # a reset back and forth; none before the first
            break
        seen.add(at)
        earlier.append(Target(target.root, "detached", repo[at].short_id))
    return earlier
