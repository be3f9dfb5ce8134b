"""What a file held before a trajectory first changed it, from git: the text an unanchored
change (known only by its search and replace text) is placed in when the trajectory holds no
earlier text of the file. Provenance and the Agent Trace export read it alike."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from stet_lsp.core.errors import StetError
from stet_lsp.core.lines import lines_of
from stet_lsp.trajectory.attribution import epoch
from stet_lsp.trajectory.events import Commit, EventBase, FileChange

if TYPE_CHECKING:
    import pygit2


class GitTexts:
    """A file's text before a change, in the parent of the first commit the change's session
    recorded after it (aider commits each edit it applies), else in the commit the trajectory
    was imported on when that commit is older than the change (a trajectory imported after
    its work was committed has a base that holds the work); None when neither holds it as
    text."""

    def __init__(self, root: Path, base_commit: str | None) -> None:
        self.root = root
        self.base_commit = base_commit
        self.commits: list[tuple[str, int, str]] = []
        """Each commit the sessions recorded: session, step, sha."""
        self.repository: pygit2.Repository | None = None

    @classmethod
    def of_events(
        cls, root: Path, base_commit: str | None, events: Iterable[EventBase]
    ) -> GitTexts:
        """For a trajectory's events in order, their commits recorded (a step is the event's
        `step`, else its 1-based position)."""
        texts = cls(root, base_commit)
        for position, event in enumerate(events, 1):
            if isinstance(event, Commit) and event.sha:
                texts.commits.append((event.session, event.step or position, event.sha))
        return texts

    def earlier(self, change: FileChange, step: int) -> list[str] | None:
        import pygit2

        from stet_lsp.core.targets import open_repository

        after = next(
            (sha for session, at, sha in self.commits if session == change.session and at > step),
            None,
        )
        made = epoch(change.time) if change.time else None
        # (revision, whether it must be older than the change): the base may hold the work
        # already (a trajectory imported after its commits).
        revisions = [(f"{after}^", False)] if after else []
        if self.base_commit and made is not None:
            revisions.append((self.base_commit, True))
        if self.repository is None:
            try:
                self.repository = open_repository(self.root)
            except (StetError, pygit2.GitError):
                return None
        for revision, older in revisions:
            try:
                commit = self.repository.revparse_single(revision).peel(pygit2.Commit)
                blob = commit.tree[change.path]
            except (KeyError, ValueError, pygit2.GitError):
                continue
            if older and made is not None and commit.commit_time > made:
                continue
            if isinstance(blob, pygit2.Blob) and not blob.is_binary:
                return lines_of(blob.data.decode("utf-8", "replace"))
        return None
