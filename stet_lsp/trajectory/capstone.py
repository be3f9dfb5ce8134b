"""The capstone: the branch's final commit, holding the trajectory of the work up to its parent.

A trajectory cannot sit inside the commit it produced without changing that commit's hash
(ADR-0011), so it is committed on top of the work, as the branch's last commit. The capstone
takes the target's working trajectory (`.stet/cache/trajectories/<key>/`), runs it through
the gate one final time, writes it to `.stet/trajectories/<id>/` and commits exactly those
files on top of HEAD, with pygit2, together with what graduation made for that trajectory:
the skills its `graduation` events name, as the index holds them, with their
`metadata.stet-trajectory` naming the committed id instead of the working one, and the
verdicts on its steps, moved from `.stet/feedback/<key>.jsonl` to `.stet/feedback/<id>.jsonl`,
and `.stet/.gitignore` when neither HEAD nor the index holds one (untracked, a `git clean`
removes it and the cache becomes files to commit). Other staged changes (other `.stet/`
files included) stay staged and are not committed; the rest of the work tree is left alone.

Every refusal is decided before anything is written. The one check that needs the files on
disk, the repository's own commit hooks (pygit2 runs none), runs after
the files are written and undoes that write when a hook fails. The working feedback file is
removed, and the working trajectory moved to `.stet/cache/trajectories/.archive/<key>-<id>/`,
only once the commit is made, so the next import starts a new one and nothing imported is
lost. Before its first write to the work tree it records what it does beside the working
trajectory (`store.capstone_record`), and removes the record once done: a capstone killed
midway is finished by the next command that takes the working trajectory's lock when its
commit was made, and taken back when it was not (`finish_stopped`).

The gate runs with the repository's configuration (`stet_lsp.gate.load_config`: its reviewed
allowlist and `.stet/gate.toml`), or the one a front end passes, which adds its own settings
(the editor's, a command's flags) to the repository's: what is committed passes
`stet gate check`, which reads the same files.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shlex
import signal
import stat
import subprocess
import tempfile
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from stet_lsp.core.errors import StetError
from stet_lsp.core.gitindex import (
    index_error,
    index_lock_left,
    operation_in_progress,
    update_index,
)
from stet_lsp.core.jsonread import object_or_none
from stet_lsp.core.locking import file_lock, held
from stet_lsp.core.safefs import (
    STET_GITIGNORE,
    aside_name,
    atomic_write,
    inside,
    is_temporary,
    make_dirs,
    move_aside,
    open_regular,
    put_back,
    read_regular,
    read_stet_gitignore,
    remove_regular,
    with_stet_rules,
)
from stet_lsp.core.targets import Target, common_git_dir, find_repository, names_a_branch
from stet_lsp.trajectory.events import EventBase, Graduation, parse_event
from stet_lsp.trajectory.eventsfile import events_text
from stet_lsp.trajectory.feedback import (
    FEEDBACK_LIMIT,
    feedback_lock,
    feedback_path,
    merged_lines,
    tracked_feedback,
    tracked_feedback_message,
)
from stet_lsp.trajectory.graduation import INDEX_LOCK, retarget_skill, skill_lock
from stet_lsp.trajectory.importing import compose_pending, pending, secrets_in_sheet
from stet_lsp.trajectory.meta import Meta, first_and_last, summarise
from stet_lsp.trajectory.renames import (
    branch_gone,
    follow_rename,
    former_keys,
    left_behind,
    orphan_named,
    orphaned_targets,
)
from stet_lsp.trajectory.skills import SKILL_LIMIT, skill_path
from stet_lsp.trajectory.store import (
    ARCHIVE,
    COMMITTED,
    EVENTS,
    META,
    NARRATION,
    Folder,
    capstone_record,
    lock_of,
    read_small,
    record_obeyed,
    record_untracked_message,
    tracked_file,
    tracked_message,
    working_folder,
    working_lock,
)
from stet_lsp.trajectory.store import meta_json as dump_meta

if TYPE_CHECKING:
    from collections.abc import Sequence

    import pygit2

    from stet_lsp.gate.config import GateConfig
    from stet_lsp.gate.findings import Finding

Progress = Callable[[str], None]
"""Told the phase the capstone is in: `redacting`, `writing`, `committing`."""

TRAILER = "Stet-Trajectory"
SUPERSEDES_TRAILER = "Stet-Supersedes"

STET = ".stet/"
CACHE = ".stet/cache/"
HOOKS = ("pre-commit", "prepare-commit-msg", "commit-msg")
"""The hooks `git commit -m` runs before committing, in its order; each may refuse."""
_SLUG_LENGTH = 40
_HASH_LENGTH = 12
_SUBJECT_LENGTH = 72
_HOOK_OUTPUT_LINES = 20
_UNSAFE = re.compile(r"[^a-z0-9]+")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_UNCHANGED = "nothing was changed"
_MESSAGE = ("the commit message", "message")
"""The label and the path the gate is given for a commit message (plain text)."""
_TRAILER_LINE = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]*: ")
_STET_TRAILER_LINE = re.compile(rf"(?i)({TRAILER}|{SUPERSEDES_TRAILER})[ \t]*:")


class CapstoneRefused(StetError):
    """A refusal that changed nothing; `reason` names it for a front end (docs/cli.md)."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class PathChange:
    path: str
    status: str
    """`added`, `modified` or `deleted`, against HEAD's tree."""


@dataclass(frozen=True)
class Superseded:
    """The capstone HEAD already was: the new one follows it as the branch's final commit."""

    trajectory: str
    commit: str


@dataclass(frozen=True)
class CapstoneResult:
    target: Target
    trajectory: str
    parent: str
    branch: str | None
    message: str
    paths: list[PathChange]
    dry_run: bool = False
    changed: bool = True
    commit: str | None = None
    supersedes: Superseded | None = None
    archived: str | None = None
    redaction: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    left_staged: list[str] = field(default_factory=list)
    """Staged `.stet/` paths the capstone does not commit (graduation did not make them)."""

    def to_json(self) -> dict[str, Any]:
        from stet_lsp.core.operations import target_json

        return {
            "target": target_json(self.target),
            "trajectory": self.trajectory,
            "dry_run": self.dry_run,
            "changed": self.changed,
            "commit": self.commit,
            "parent": self.parent,
            "branch": self.branch,
            "message": self.message,
            "paths": [{"path": p.path, "status": p.status} for p in self.paths],
            "supersedes": None
            if self.supersedes is None
            else {"trajectory": self.supersedes.trajectory, "commit": self.supersedes.commit},
            "archived": self.archived,
            "redaction": self.redaction,
            "warnings": self.warnings,
            "left_staged": self.left_staged,
        }


def capstone(
    target: Target,
    message: str | None = None,
    dry_run: bool = False,
    allow_detached: bool = False,
    progress: Progress | None = None,
    gate_config: GateConfig | None = None,
) -> CapstoneResult:
    """Commit the target's working trajectory on top of HEAD (or, with `dry_run`, say what
    would be committed). A named target without one (`stet capstone --target NAME`, the
    server's `target`) is the deleted branch or left detached HEAD of that name whose working
    trajectory is left, when there is one (`renames.orphan_named`); the result names the
    target committed. Raises CapstoneRefused, having changed nothing, when it cannot.
    Everything committed passes the gate with `gate_config`, else the repository's."""
    tell = progress or (lambda phase: None)
    if message is not None and not _without_stet_trailers(message).strip():
        raise CapstoneRefused("message", f"the commit message is empty ({_UNCHANGED})")
    config = gate_config or _repository_gate(target)
    repository = _open(target)
    target = orphan_named(target) or target
    follow_rename(target, config, wait=True)
    folder = working_folder(target)
    stopped = _stopped_midway(folder)
    if not pending(folder):
        _require_working(target, folder)
    # Before the lock: a refusal makes no lock file beside a folder the repository commits.
    tracked = tracked_file(folder)
    if tracked is not None:
        raise CapstoneRefused("tracked", tracked_message(folder, tracked))
    tracked = tracked_feedback(target.root, target.key)
    if tracked is not None:
        raise CapstoneRefused("tracked", tracked_feedback_message(tracked))
    # The record the capstone writes before it touches the work tree: a file git tracks there
    # would be overwritten, then removed, and a capstone stopped past its commit would leave a
    # record no command obeys (`record_obeyed`).
    unwritable = record_untracked_message(target.root, capstone_record(folder))
    if unwritable is not None:
        raise CapstoneRefused(*unwritable)
    with working_lock(folder), ExitStack() as held:
        if stopped:  # a capstone stopped after its commit, finished as the lock was taken
            finished = _finished(repository, target, folder)
            if finished is not None:
                return finished
        # What is stored and not composed yet (graduation's events, when its compose failed or
        # stopped) is committed with the rest; a dry run shows it too.
        try:
            compose_pending(target, folder, config)
        except StetError as error:  # a stored session edited by hand: the error says where
            if isinstance(error, CapstoneRefused) or error.reason is None:
                raise
            raise CapstoneRefused(error.reason, str(error)) from None
        _require_working(target, folder)  # again: a capstone that held the lock archived it
        head = _check_repository(repository, target, allow_detached)
        signature = _signature(repository)
        tell("redacting")
        plan = _plan(repository, target, folder, head, message, held, config)
        _check_index_free(repository)  # a dry run says what the capstone would do
        if dry_run:
            return plan.result(dry_run=True)
        if plan.committed:
            # HEAD holds it already (a capstone whose archiving failed, or the same sessions
            # imported again): what that capstone left undone is done now.
            warnings = _settle_index(repository, target, config, plan.trajectory)
            _settle_feedback(target, plan.graduated, warnings)
            archived = _archive(target.root, folder, plan.trajectory, warnings)
            return plan.result(archived=archived, warnings=warnings)
        tell("writing")
        return _apply(repository, target, folder, plan, signature, tell)


# -- checks: each refusal before anything is written ------------------------------------------


def _repository_gate(target: Target) -> GateConfig:
    """The repository's gate configuration; a malformed file refuses the capstone."""
    from stet_lsp.gate import load_config

    try:
        return load_config(target.root)
    except StetError as error:
        raise CapstoneRefused("gate", f"{error} ({_UNCHANGED})") from None


def _open(target: Target) -> pygit2.Repository:
    try:
        repository = find_repository(target.root)
    except StetError as error:
        raise CapstoneRefused("no-repository", f"{error} ({_UNCHANGED})") from None
    if repository is None:
        raise CapstoneRefused("no-repository", f"not inside a git repository: {target.root}")
    if repository.is_bare or repository.workdir is None:
        raise CapstoneRefused(
            "bare",
            f"the repository at {repository.path} is bare: a capstone needs a work tree "
            f"({_UNCHANGED})",
        )
    return repository


def _require_working(target: Target, folder: Folder) -> None:
    """Checked before the lock is taken, so a refusal creates not even a lock file, and
    again once it is held."""
    header = open_regular(folder.path / META, target.root)  # only whether it is there
    if header is not None:
        header.close()
    if header is None:
        left = "".join(
            f"; {left_behind(orphan)}: stet capstone --target {shlex.quote(orphan.name)} commits "
            "it here"
            for orphan in orphaned_targets(target.root)
        )
        if target.kind == "named":  # asked for by name: maybe meant for a left one
            branch = (
                f"; the branch {target.name}'s own is committed with no target named, on "
                "that branch"
                if names_a_branch(target)
                else ""
            )
            raise CapstoneRefused(
                "no-working-trajectory",
                f"{target.name} has no working trajectory to commit: no target of that name "
                "has one, nor did a branch deleted or a detached HEAD left under that name "
                f"leave one (stet trajectory list lists the working trajectories){branch}"
                f"{left} ({_UNCHANGED})",
            )
        raise CapstoneRefused(
            "no-working-trajectory",
            f"{target.label} has no working trajectory to commit: import an agent session "
            f"(Stet's import command in the editor, or stet trajectory import) or graduate "
            f"an entry first{left} ({_UNCHANGED})",
        )


@dataclass(frozen=True)
class _Head:
    commit: pygit2.Commit
    branch: str | None
    """`refs/heads/…`; None for a detached HEAD."""


def _check_repository(repository: pygit2.Repository, target: Target, allow_detached: bool) -> _Head:
    import pygit2

    if repository.head_is_unborn:
        raise CapstoneRefused(
            "unborn",
            f"HEAD has no commit yet: a capstone describes the work up to its parent, so "
            f"commit the work first ({_UNCHANGED})",
        )
    _check_in_progress(repository)
    detached = repository.head_is_detached
    if detached and not allow_detached:
        raise CapstoneRefused(
            "detached",
            "HEAD is detached: check out the branch the work belongs to, or commit on the "
            "detached HEAD (`stet capstone --detached`; the language server's stet.capstone "
            f"takes `detached: true`) ({_UNCHANGED})",
        )
    branch = None if detached else repository.head.name
    _check_target(target, repository, branch)
    try:
        conflicts = repository.index.conflicts
    except pygit2.GitError as error:  # a damaged index file
        raise CapstoneRefused(
            "index", f"the git index cannot be read: {index_error(error)} ({_UNCHANGED})"
        ) from None
    if conflicts is not None:
        raise CapstoneRefused(
            "conflicts", f"the index has unresolved conflicts: resolve them first ({_UNCHANGED})"
        )
    return _Head(repository.head.peel(pygit2.Commit), branch)


def _check_index_free(repository: pygit2.Repository) -> None:
    """git's own lock on the index, held past a moment: committing anyway would leave the
    index without the commit's files, so that the next `git commit` deletes them."""
    lock = index_lock_left(repository)
    if lock is not None:
        raise CapstoneRefused(
            "index",
            f"the git index is locked ({lock}): another git process is using it, or one "
            "stopped and left the file; run the capstone again once it is done, or remove "
            f"that file if no git process is running ({_UNCHANGED})",
        )


def _check_in_progress(repository: pygit2.Repository) -> None:
    """A commit in the middle of a merge, rebase, cherry-pick, revert or bisect would be
    taken into that operation (or lost by it): git's own state first, then its files."""
    what = operation_in_progress(repository)
    if what is not None:
        raise CapstoneRefused(
            "in-progress", f"{what} is in progress: finish or abort it first ({_UNCHANGED})"
        )


def _check_target(target: Target, repository: pygit2.Repository, branch: str | None) -> None:
    """The working trajectory of one branch is never committed on another; a deleted
    branch's (asked for by name: `stet capstone --target NAME`) is committed where HEAD is."""
    if target.kind == "branch" and (branch is None or repository.head.shorthand != target.name):
        if branch_gone(repository, target.name):
            return
        where = repository.head.shorthand if branch else "a detached HEAD"
        raise CapstoneRefused(
            "target",
            f"the target is branch {target.name} but HEAD is on {where}: check out "
            f"{target.name} first ({_UNCHANGED})",
        )


def _signature(repository: pygit2.Repository) -> pygit2.Signature:
    import pygit2

    try:
        return repository.default_signature
    except (KeyError, pygit2.GitError):
        raise CapstoneRefused(
            "signature",
            "git has no author configured: set user.name and user.email "
            f'(git config user.name "…"; git config user.email "…") ({_UNCHANGED})',
        ) from None


# -- the plan: what would be committed, decided without writing ------------------------------


@dataclass(frozen=True)
class _Written:
    """A file the capstone commits from bytes of its own: the moved feedback, a skill whose
    metadata it rewrote."""

    data: bytes
    mode: pygit2.enums.FileMode
    work_tree: bytes | None
    """What the work tree's file becomes (None: it is left as it is)."""
    replaces: pygit2.Oid | None
    """The blob the index held at the path when planned: the index entry is updated only
    while it still holds it (None: always)."""


@dataclass
class _Graduated:
    """What graduation made for the working trajectory, as the capstone commits it."""

    written: dict[str, _Written] = field(default_factory=dict)
    kept: dict[str, pygit2.IndexEntry] = field(default_factory=dict)
    """Graduation's skills committed as the index holds them."""
    feedback: str | None = None
    """The working trajectory's feedback file, removed once the commit is made."""
    warnings: list[str] = field(default_factory=list)


@dataclass
class _Plan:
    target: Target
    head: _Head
    trajectory: str
    files: dict[str, bytes]
    """The trajectory's files by path in the repository, in the order they are written."""
    graduated: _Graduated
    left_staged: list[str]
    tree: pygit2.Index
    """HEAD's tree, in memory."""
    message: str
    supersedes: Superseded | None
    redaction: dict[str, int]
    committed: bool
    paths: list[PathChange]
    gate: GateConfig
    """What every file and the message passed (the hooks' edited message passes it too)."""

    def result(self, **fields: Any) -> CapstoneResult:
        values: dict[str, Any] = {
            "target": self.target,
            "trajectory": self.trajectory,
            "parent": str(self.head.commit.id),
            "branch": _short_branch(self.head.branch),
            "message": self.message,
            "paths": [] if self.committed else self.paths,
            "changed": not self.committed and not fields.get("dry_run", False),
            "supersedes": self.supersedes,
            "redaction": self.redaction,
            "warnings": [] if self.committed else list(self.graduated.warnings),
            "left_staged": [] if self.committed else self.left_staged,
        }
        return CapstoneResult(**(values | fields))


def _plan(
    repository: pygit2.Repository,
    target: Target,
    folder: Folder,
    head: _Head,
    message: str | None,
    held: ExitStack,
    config: GateConfig,
) -> _Plan:
    """`held` keeps the locks taken while planning (the feedback file, graduation's skills)
    until the capstone is done: what the plan read cannot change before it is committed."""
    import pygit2

    try:
        working = folder.read_meta()
    except StetError as error:
        raise CapstoneRefused(
            "no-working-trajectory",
            f"{error}: the file was edited by hand; remove it, then import the session again "
            f"or graduate an entry to compose it again from the stored sessions ({_UNCHANGED})",
        ) from None
    events_text, counts = _gated_events(folder, target, config)
    events = _parse_events(events_text, folder, target)
    trajectory = trajectory_id(target, events_text, events, head.commit, config)
    supersedes = _superseded(head.commit)
    meta = _meta(working, trajectory, events, counts, head.commit, supersedes)
    meta_text = _gated(config, dump_meta(meta), "meta.json")
    meta = _parse_meta(meta_text)
    narration = _render(config, meta, events)
    tree = pygit2.Index()
    tree.read_tree(head.commit.tree)
    relative = (COMMITTED / trajectory).as_posix()
    files = {
        f"{relative}/{EVENTS}": events_text.encode("utf-8"),
        f"{relative}/{NARRATION}": narration.encode("utf-8"),
        f"{relative}/{META}": meta_text.encode("utf-8"),
    }
    committed = _already_committed(tree, files)
    if committed:
        supersedes = None  # HEAD may be this trajectory's own capstone
    graduated = _Graduated()
    if not committed:
        _graduated_skills(repository, target, tree, events, trajectory, held, graduated, config)
    _moved_feedback(target, tree, trajectory, held, graduated, config)
    if not committed:
        _stet_gitignore(repository, target, tree, graduated, config)
    commits = set(files) | set(graduated.written) | set(graduated.kept)
    _check_room(tree, commits)
    return _Plan(
        target=target,
        head=head,
        trajectory=trajectory,
        files=files,
        graduated=graduated,
        left_staged=[path for path in _staged_stet(repository, tree) if path not in commits],
        tree=tree,
        message=_message(config, message, meta.brief, trajectory, supersedes),
        supersedes=supersedes,
        redaction=counts,
        committed=committed,
        paths=_changes(tree, commits),
        gate=config,
    )


def _gated_events(folder: Folder, target: Target, config: GateConfig) -> tuple[str, dict[str, int]]:
    """events.jsonl through the gate once more: rules may have grown since the import, the
    cache is a file anyone can edit, and a note written since may hold a value the events
    repeat bare (`secrets_in_sheet`)."""
    data = read_regular(folder.path / EVENTS, target.root)
    if data is None:
        raise CapstoneRefused(
            "no-working-trajectory",
            f"{folder.relative / EVENTS} is missing: import the session again, or graduate "
            f"an entry, to compose it again from the stored sessions ({_UNCHANGED})",
        )
    from stet_lsp.gate.stream import redact_blocks

    text = events_text(data)
    written: list[str] = []
    known = secrets_in_sheet(target, config)
    report = redact_blocks(lambda: [text], config, EVENTS, written.append, known=known)
    redacted = "".join(written)
    _require_clean(config, redacted, EVENTS)
    return redacted, report.counts()


def _gated(config: GateConfig, text: str, label: str, path: str | None = None) -> str:
    from stet_lsp import gate

    redacted = gate.redact_text(text, config=config, path=path or label, cache=None).text
    _require_clean(config, redacted, label, path or label)
    return redacted


def _require_clean(
    config: GateConfig,
    text: str,
    label: str,
    path: str | None = None,
    fix: str | None = None,
    known: Sequence[tuple[str, list[Finding]]] = (),
) -> None:
    """What the gate still finds after redacting is what it cannot redact (or, with `fix`, a
    text Stet does not redact, saying how to): refuse it. A value a `known` text's findings
    hold (the style sheet's) counts wherever it stands."""
    from stet_lsp import gate
    from stet_lsp.gate.findings import places as gate_places
    from stet_lsp.gate.repeats import Repeats
    from stet_lsp.gate.scan import is_json_path

    findings = gate.scan_text(text, config=config, path=path or label, cache=None)
    if known and not findings:
        repeats = Repeats(is_json_path(path or label))
        for other, found in known:
            repeats.add_known(other, found)
        repeated = repeats.findings(text, findings)
        if repeated:
            raise CapstoneRefused(
                "gate",
                f"{label} repeats a value the style sheet holds as a secret "
                f"({gate_places(repeated)}): take it out, stage the file again and run the "
                f"capstone again ({_UNCHANGED})",
            )
    if findings:
        places = gate_places(findings)
        if fix is not None:
            raise CapstoneRefused(
                "gate", f"{label} holds a secret ({places}): {fix} ({_UNCHANGED})"
            )
        raise CapstoneRefused(
            "gate",
            f"{label}: the gate finds what it cannot redact ({places}); nothing is committed "
            f"until it passes ({_UNCHANGED})",
        )


def _parse_events(text: str, folder: Folder, target: Target) -> list[EventBase]:
    events: list[EventBase] = []
    for number, line in enumerate(text.split("\n"), 1):
        if not line:
            continue
        try:
            events.append(parse_event(line))
        except ValidationError as error:
            raise _not_an_event(folder, target, number, error) from None
    if not events:
        raise CapstoneRefused(
            "no-working-trajectory", f"the working trajectory has no events; {_UNCHANGED}"
        )
    return events


def _not_an_event(
    folder: Folder, target: Target, number: int, error: ValidationError
) -> CapstoneRefused:
    """A line of events.jsonl that is no event: one the gate made so (its reason), or one that
    was none before it, the file edited by hand (said so, with where and what to do)."""
    lines = events_text(read_regular(folder.path / EVENTS, target.root) or b"").split("\n")
    raw = lines[number - 1] if number <= len(lines) else ""
    try:
        parse_event(raw)
    except ValidationError:
        problem = error.errors()[0]["msg"] if error.errors() else str(error)
        return CapstoneRefused(
            "no-working-trajectory",
            f"{folder.relative / EVENTS}:{number} is not a trajectory event ({problem}): the "
            "file was edited by hand; correct or remove that line, or remove the file and "
            f"import the session again, or graduate an entry, to compose it again from the "
            f"stored sessions ({_UNCHANGED})",
        )
    return CapstoneRefused(
        "gate", f"{EVENTS}:{number} is not a trajectory event after the gate ({_UNCHANGED})"
    )


def _parse_meta(text: str) -> Meta:
    try:
        return Meta.model_validate_json(text)
    except ValidationError:
        raise CapstoneRefused(
            "gate", f"{META} is not a trajectory header after the gate ({_UNCHANGED})"
        ) from None


def _render(config: GateConfig, meta: Meta, events: list[EventBase]) -> str:
    from stet_lsp.trajectory.narration import render

    return _gated(config, render(meta.model_dump(mode="json"), events), NARRATION)


def _meta(
    working: Meta,
    trajectory: str,
    events: list[EventBase],
    counts: dict[str, int],
    head: pygit2.Commit,
    supersedes: Superseded | None,
) -> Meta:
    """The header again from the gated events; base_commit is HEAD, the capstone's parent:
    the trajectory describes the work up to it."""
    meta = summarise(
        trajectory_id=trajectory,
        target=working.target,
        base_commit=str(head.id),
        events=events,
        redaction=Counter(working.redaction) + Counter(counts),
        dropped=Counter(working.dropped),
        problems=working.problems,
        sources=working.sources,
    )
    if supersedes is not None and "supersedes" in Meta.model_fields:
        link = {"trajectory": supersedes.trajectory, "commit": supersedes.commit}
        meta = Meta.model_validate(meta.model_dump(mode="json") | {"supersedes": link})
    return meta


def trajectory_id(
    target: Target,
    events_text: str,
    events: list[EventBase],
    head: pygit2.Commit,
    config: GateConfig,
) -> str:
    """`<date>-<slug>-<hash>`: the date of the first event (UTC when its time has a zone; the
    date of HEAD's commit when no event has a time), the target's name folded to
    `[a-z0-9-]` (at most 40 characters; the target's kind when the gate finds a secret in
    the name or the slug: the id names committed files), and the first 12 hex digits of the
    SHA-256 of the committed events.jsonl. Readable in a listing, sorted by date, and
    stable: the same events on the same target always get the same id."""
    started = first_and_last([event.time for event in events if event.time])[0]
    digest = hashlib.sha256(events_text.encode("utf-8")).hexdigest()[:_HASH_LENGTH]
    return f"{_date(started, head)}-{_slug(target, config)}-{digest}"


def _date(started: str | None, head: pygit2.Commit) -> str:
    if started:
        try:
            moment = datetime.fromisoformat(started)
        except ValueError:
            if _DATE.match(started):
                return started[:10]
        else:
            if moment.tzinfo is not None:
                moment = moment.astimezone(UTC)
            return moment.date().isoformat()
    return datetime.fromtimestamp(head.commit_time, UTC).date().isoformat()


def _slug(target: Target, config: GateConfig) -> str:
    from stet_lsp import gate

    folded = unicodedata.normalize("NFKD", target.name).encode("ascii", "ignore").decode()
    slug = _UNSAFE.sub("-", folded.lower()).strip("-")[:_SLUG_LENGTH].rstrip("-")
    for text in (target.name, slug):
        if gate.redact_text(text, config=config, path="target name", cache=None).text != text:
            return target.kind
    return slug or target.kind


def _superseded(head: pygit2.Commit) -> Superseded | None:
    """HEAD is a capstone when its message has the trailer: the new capstone follows it."""
    previous = head.message_trailers.get(TRAILER)
    return None if not previous else Superseded(previous.strip(), str(head.id))


def _message(
    config: GateConfig,
    given: str | None,
    brief: str | None,
    trajectory: str,
    supersedes: Superseded | None,
) -> str:
    """The given message, or `Trajectory: <the brief's first line>`, then the trailers that
    find the trajectory from the commit (git interpret-trailers reads them)."""
    if given is not None:
        body = _without_stet_trailers(given).strip()
    else:
        first = (brief or "").strip().split("\n", 1)[0].strip() or trajectory
        body = _shortened(f"Trajectory: {first}")
    trailers = [f"{TRAILER}: {trajectory}"]
    if supersedes is not None:
        trailers.append(f"{SUPERSEDES_TRAILER}: {supersedes.trajectory}")
    return _gated(config, _with_trailers(body, trailers), *_MESSAGE)


def _without_stet_trailers(message: str) -> str:
    """`message` without lines naming Stet's trailers (a message reused from an earlier
    capstone, a hook that copies one in): the capstone writes them, once each, and a second
    `Stet-Trajectory` would name another trajectory for the commit."""
    if not _STET_TRAILER_LINE.search(message):
        return message
    lines = message.split("\n")
    return "\n".join(line for line in lines if not _STET_TRAILER_LINE.match(line))


def _trailers_of(message: str) -> list[str]:
    """Stet's trailer lines of a message this module made."""
    prefixes = (f"{TRAILER}: ", f"{SUPERSEDES_TRAILER}: ")
    return [line for line in message.split("\n") if line.startswith(prefixes)]


def _shortened(subject: str) -> str:
    if len(subject) <= _SUBJECT_LENGTH:
        return subject
    return subject[: _SUBJECT_LENGTH - 1].rstrip() + "…"


def _staged_stet(repository: pygit2.Repository, tree: pygit2.Index) -> list[str]:
    """The index's `.stet/` paths (the cache aside) that differ from HEAD's tree, and HEAD's
    `.stet/` files the index no longer has: staged, whoever staged them."""
    index = repository.index
    staged = {e.path: e for e in index if e.path.startswith(STET) and not _cached(e.path)}
    changes = [
        path
        for path, entry in staged.items()
        if path not in tree or (tree[path].id, tree[path].mode) != (entry.id, entry.mode)
    ]
    for committed in tree:
        path = committed.path
        if path.startswith(STET) and not _cached(path) and path not in staged:
            changes.append(path)
    return sorted(changes)


def _cached(path: str) -> bool:
    return path.startswith(CACHE)


def _graduated_skills(
    repository: pygit2.Repository,
    target: Target,
    tree: pygit2.Index,
    events: list[EventBase],
    trajectory: str,
    held: ExitStack,
    graduated: _Graduated,
    config: GateConfig,
) -> None:
    """The skills the trajectory's `graduation` events name (the skill route), as the index
    holds them (graduation staged them; a person may have staged an edit since): each through
    the gate (a staged secret refuses the capstone; graduation gates what it writes, a `git
    add` by hand does not), with `metadata.stet-trajectory` naming the committed id for the
    working one. A skill the index does not hold, or holds as HEAD has it once rewritten, is
    not committed."""
    import pygit2

    root = target.root
    working = (target.key, *former_keys(repository, target))
    names = {e.skill for e in events if isinstance(e, Graduation) and e.route == "skill"}
    known = secrets_in_sheet(target, config) if names else []
    for name in sorted(filter(None, names)):
        try:
            relative = skill_path(name).as_posix()
        except StetError:
            continue  # not a name graduation writes (a hand-edited event)
        held.enter_context(skill_lock(root, name))
        index = repository.index
        index.read(False)
        if relative not in index:
            if relative not in tree:
                removed = not os.path.lexists(root / relative)
                graduated.warnings.append(
                    f"{relative} is not staged ({'removed' if removed else 'unstaged'} since "
                    "graduation wrote it): it is not committed, though the trajectory records "
                    "entries graduated into it"
                    + ("" if removed else f"; stage it (git add {relative}) to commit it")
                )
            continue
        entry = index[relative]
        kind, size = repository.odb.read_header(entry.id)
        if kind != pygit2.enums.ObjectType.BLOB:
            continue
        if size > SKILL_LIMIT:
            raise CapstoneRefused(
                "gate",
                f"{relative} (staged): {size:,} bytes, over the {SKILL_LIMIT:,} a skill may "
                f"hold (not read, so not gated): unstage it (git restore --staged {relative}) "
                f"or shorten it ({_UNCHANGED})",
            )
        blob = repository[entry.id]
        if not isinstance(blob, pygit2.Blob):
            continue
        staged = bytes(blob.data)
        text = staged.decode("utf-8", "replace")
        _require_clean(
            config,
            text,
            f"{relative} (staged)",
            relative,
            fix=f"what you staged is committed as it is: redact it (stet gate redact "
            f"--in-place {relative}), stage it again and run the capstone again",
            known=known,
        )
        committed = _retargeted(config, staged, name, working, trajectory)
        if committed is None:
            graduated.warnings.append(
                f"{relative} does not follow the Agent Skills spec: it is committed as staged, "
                f"its metadata.stet-trajectory still naming {target.key}"
            )
            committed = staged
        if committed == staged:
            if relative not in tree or (tree[relative].id, tree[relative].mode) != (
                entry.id,
                entry.mode,
            ):
                graduated.kept[relative] = entry
            continue
        _require_clean(config, committed.decode("utf-8", "replace"), relative, relative)
        work_tree, left = _skill_work_tree(
            config, target, relative, staged, committed, name, working, trajectory
        )
        if left is not None:
            graduated.warnings.append(
                f"{relative} has unstaged changes {left}: they are left as they are, its "
                f"metadata.stet-trajectory naming {target.key}"
            )
        graduated.written[relative] = _Written(committed, entry.mode, work_tree, entry.id)


def _retargeted(
    config: GateConfig, data: bytes, name: str, working: tuple[str, ...], trajectory: str
) -> bytes | None:
    """A skill's bytes with its metadata naming the committed trajectory; None when they are
    not a skill Stet can read."""
    try:
        text = data.decode("utf-8")
        return retarget_skill(text, name, working, trajectory, config).encode("utf-8")
    except (UnicodeDecodeError, StetError):
        return None


def _skill_work_tree(
    config: GateConfig,
    target: Target,
    relative: str,
    staged: bytes,
    committed: bytes,
    name: str,
    working: tuple[str, ...],
    trajectory: str,
) -> tuple[bytes | None, str | None]:
    """What the skill's file in the work tree becomes (None: it stays as it is), and why its
    unstaged changes are left as they are (None: they are not): the committed bytes when it
    holds what was staged; its own text with the metadata rewritten when it has unstaged
    changes; unchanged when it is missing (a deletion not staged), cannot be read as a skill,
    or holds what the gate would redact (a person's text is not rewritten unseen)."""
    from stet_lsp import gate
    from stet_lsp.gate.findings import places as gate_places

    try:
        current = read_small(target.root / relative, target.root, relative, SKILL_LIMIT)
    except StetError:  # over SKILL_LIMIT too: left as it is, with a warning
        return None, "Stet cannot read as a skill"
    if current is None:
        return None, None
    if current == staged:
        return committed, None
    text = current.decode("utf-8", "replace")
    found = gate.scan_text(text, config=config, path=relative, cache=None)
    if found:
        places = gate_places(found)
        return None, f"holding what the gate redacts ({places}; stet gate redact --in-place)"
    rewritten = _retargeted(config, current, name, working, trajectory)
    if rewritten is None:
        return None, "Stet cannot read as a skill"
    return (None if rewritten == current else rewritten), None


def _moved_feedback(
    target: Target,
    tree: pygit2.Index,
    trajectory: str,
    held: ExitStack,
    graduated: _Graduated,
    config: GateConfig,
) -> None:
    """The verdicts on the working trajectory's steps (`.stet/feedback/<key>.jsonl`) moved to
    `.stet/feedback/<id>.jsonl`, each naming the committed id, after what that file holds
    already (a line it holds is not added twice), through the gate."""
    import pygit2

    root = target.root
    source = feedback_path(target.key)
    if not os.path.lexists(inside(root, source)):
        return
    held.enter_context(feedback_lock(root, target.key))
    data = read_small(root / source, root, source, FEEDBACK_LIMIT)
    if data is None:
        return
    graduated.feedback = source.as_posix()
    destination = feedback_path(trajectory)
    # Held when the file is new too: a verdict written to it meanwhile (by a commit hook, say)
    # would be lost when a refused commit takes the capstone's writes back.
    held.enter_context(feedback_lock(root, trajectory))
    stored = read_small(root / destination, root, destination, FEEDBACK_LIMIT) or b""
    lines = merged_lines(stored, data, target.key, trajectory)
    if not lines:
        return
    relative = destination.as_posix()
    joined = "".join(line + "\n" for line in lines)
    text = _gated(config, joined, relative, relative).encode("utf-8")
    if relative in tree and tree[relative].id == pygit2.hash(text):
        return
    graduated.written[relative] = _Written(
        text, pygit2.enums.FileMode.BLOB, work_tree=text, replaces=None
    )


def _stet_gitignore(
    repository: pygit2.Repository,
    target: Target,
    tree: pygit2.Index,
    graduated: _Graduated,
    config: GateConfig,
) -> None:
    """`.stet/.gitignore` (Stet's rules: the cache, a stopped writer's files) with the
    capstone, when neither HEAD nor the index holds one: left untracked, `git clean` takes it
    away and the next `git add -A` commits the cache (the style sheets, the working
    trajectories). The work tree's file, the rules it lacks added (written too), once it
    passes the gate; one staged by hand, or holding what the gate redacts, is left to the
    person."""
    import pygit2

    if STET_GITIGNORE in tree or STET_GITIGNORE in repository.index:
        return
    current = read_stet_gitignore(target.root)
    text = with_stet_rules(current)
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # not UTF-8 as written: the person's to commit
        return
    try:
        _gated(config, text, STET_GITIGNORE)
    except CapstoneRefused:
        graduated.warnings.append(
            f"{STET_GITIGNORE} holds what the gate redacts: not committed (redact it and "
            f"commit it: git add {STET_GITIGNORE})"
        )
        return
    graduated.written[STET_GITIGNORE] = _Written(
        data,
        pygit2.enums.FileMode.BLOB,
        work_tree=data if text != current else None,
        replaces=None,
    )


def _already_committed(tree: pygit2.Index, files: dict[str, bytes]) -> bool:
    """The same id means the same events: HEAD's tree has this trajectory already."""
    import pygit2

    events = next(iter(files))
    return events in tree and tree[events].id == pygit2.hash(files[events])


def _check_room(tree: pygit2.Index, paths: set[str]) -> None:
    """A file HEAD holds where the commit needs a folder (`.stet/trajectories` written as a
    file) would be deleted by the commit, which no one asked for: refused."""
    for path in sorted(paths):
        for folder in PurePosixPath(path).parents:
            if str(folder) != "." and str(folder) in tree:
                raise CapstoneRefused(
                    "path",
                    f"HEAD holds a file at {folder}, where the capstone writes {path}: "
                    f"move or delete that file and commit that first ({_UNCHANGED})",
                )


def _changes(tree: pygit2.Index, paths: set[str]) -> list[PathChange]:
    """Each path the capstone changes, against HEAD's tree."""
    return [PathChange(path, "modified" if path in tree else "added") for path in sorted(paths)]


def _short_branch(branch: str | None) -> str | None:
    return branch.removeprefix("refs/heads/") if branch else None


# -- applying the plan --------------------------------------------------------------------


def _apply(
    repository: pygit2.Repository,
    target: Target,
    folder: Folder,
    plan: _Plan,
    signature: pygit2.Signature,
    tell: Progress,
) -> CapstoneResult:
    tree_id, staging = _write_tree(repository, plan)
    work_tree = dict(plan.files)
    work_tree |= {path: w.work_tree for path, w in plan.graduated.written.items() if w.work_tree}
    record = capstone_record(folder)
    # The name each file it replaces is moved aside under, chosen now and recorded: the
    # copies it makes are told from any other beside the file (one an earlier take-back left).
    asides = {
        path: aside_name(target.root / path, target.root, _WorkTreeWrite.ASIDE)
        for path in work_tree
        if os.path.lexists(inside(target.root, path))
    }
    # Before the first write to the work tree: a capstone stopped from here on is finished
    # or taken back by the next command that takes the working trajectory's lock.
    _write_record(target.root, record, plan, tree_id, staging, work_tree, asides)
    written = _WorkTreeWrite(target.root, asides)
    try:
        written.write(work_tree)
        tell("committing")
        message = _run_hooks(repository, target.root, tree_id, plan.message, plan.gate)
        commit = _commit(repository, plan, signature, message, tree_id)
    except BaseException:
        written.undo()
        with suppress(OSError, StetError):
            remove_regular(record, target.root)
        raise
    written.keep()
    warnings = list(plan.graduated.warnings)
    warnings += _update_index(repository, target.root, staging)
    _remove_working_feedback(target, plan.graduated.feedback, warnings)
    archived = _archive(target.root, folder, plan.trajectory, warnings)
    with suppress(OSError, StetError):  # else the next command finds nothing left to do
        remove_regular(record, target.root)
    return plan.result(commit=str(commit), message=message, archived=archived, warnings=warnings)


@dataclass(frozen=True)
class _Staging:
    """An index entry the commit's blob goes into once the commit is made."""

    blob: pygit2.Oid
    mode: pygit2.enums.FileMode
    replaces: pygit2.Oid | None
    """Only while the index still holds this blob at the path (None: in any case)."""


def _write_tree(
    repository: pygit2.Repository, plan: _Plan
) -> tuple[pygit2.Oid, dict[str, _Staging]]:
    """HEAD's tree with the trajectory's files and graduation's: nothing else. The objects
    written are unreachable until the commit is made."""
    import pygit2

    blob_mode = pygit2.enums.FileMode.BLOB
    staging = {
        path: _Staging(repository.create_blob(data), blob_mode, None)
        for path, data in plan.files.items()
    }
    for path, written in plan.graduated.written.items():
        blob = repository.create_blob(written.data)
        staging[path] = _Staging(blob, written.mode, written.replaces)
    tree = plan.tree
    for path, entry in plan.graduated.kept.items():
        tree.add(pygit2.IndexEntry(path, entry.id, entry.mode))
    for path, staged in staging.items():
        tree.add(pygit2.IndexEntry(path, staged.blob, staged.mode))
    return tree.write_tree(repository), staging


def _commit(
    repository: pygit2.Repository,
    plan: _Plan,
    signature: pygit2.Signature,
    message: str,
    tree_id: pygit2.Oid,
) -> pygit2.Oid:
    """Created through HEAD, so libgit2 moves the branch (or the detached HEAD) only while it
    still points at the parent, and writes the reflog (`commit: <subject>`) as git does."""
    import pygit2

    parent = plan.head.commit.id
    try:
        return repository.create_commit("HEAD", signature, signature, message, tree_id, [parent])
    except pygit2.GitError as error:
        raise CapstoneRefused(
            "head-moved", f"HEAD moved while the capstone was made ({error}); {_UNCHANGED}"
        ) from None


def _update_index(
    repository: pygit2.Repository, root: Path, staging: dict[str, _Staging]
) -> list[str]:
    """The files the capstone wrote enter the index at the commit's blobs (a skill only while
    the index still holds what was planned from); every other entry stays as it was (read
    again: another process may have staged something meanwhile)."""
    import pygit2

    def add_written(index: pygit2.Index) -> None:
        for path, staged in staging.items():
            if staged.replaces is not None and (
                path not in index or index[path].id != staged.replaces
            ):
                continue
            index.add(pygit2.IndexEntry(path, staged.blob, staged.mode))

    try:
        with file_lock(root / INDEX_LOCK, root, "the git index"):
            update_index(repository, add_written)
    except (OSError, StetError, pygit2.GitError) as error:
        paths = " ".join(sorted(staging))
        return [f"the commit is made but the index was not updated ({error}): git add {paths}"]
    return []


_LOOKED_AT = 1000
"""How many commits of the branch's first-parent line a stopped capstone's commit is looked
for in (it is the branch's tip unless commits were made on top of it since)."""


def _write_record(
    root: Path,
    record: Path,
    plan: _Plan,
    tree: pygit2.Oid,
    staging: dict[str, _Staging],
    work_tree: dict[str, bytes],
    asides: dict[str, str],
) -> None:
    """What `finish_stopped` needs to finish or take back this capstone: the commit it makes
    (its parent, its tree, the branch it moves), the files it writes to the work tree (each
    one's blob, those of them that were there before with the name each is moved aside
    under, and the folders it creates for them),
    the index entries it gives them, and the working feedback file it removes (with the
    SHA-256 of what it moved)."""
    import pygit2

    feedback = plan.graduated.feedback
    moved = read_small(root / feedback, root, feedback, FEEDBACK_LIMIT) if feedback else None
    data = {
        "trajectory": plan.trajectory,
        "parent": str(plan.head.commit.id),
        "branch": plan.head.branch,
        "tree": str(tree),
        "written": {path: str(pygit2.hash(data)) for path, data in work_tree.items()},
        "existed": [path for path in work_tree if os.path.lexists(inside(root, path))],
        "asides": asides,
        "created": _missing_folders(root, work_tree),
        "staging": {
            path: [str(staged.blob), int(staged.mode), staged.replaces and str(staged.replaces)]
            for path, staged in staging.items()
        },
        "feedback": feedback,
        "feedback_sha256": hashlib.sha256(moved).hexdigest() if moved is not None else None,
    }
    # ASCII: a branch whose name is not UTF-8 keeps its bytes as escaped surrogates.
    atomic_write(record, json.dumps(data).encode("ascii"), root)


def _missing_folders(root: Path, paths: Iterable[str]) -> list[str]:
    """The folders holding `paths` that are not there yet, each before those inside it."""
    missing: list[str] = []
    for path in paths:
        folder = PurePosixPath(path).parent
        for part in reversed([folder, *folder.parents][:-1]):
            if part.as_posix() not in missing and not os.path.lexists(inside(root, str(part))):
                missing.append(part.as_posix())
    return missing


def finish_stopped(folder: Folder) -> None:
    """A capstone of the working trajectory stopped midway (killed, the power lost), as its
    record (`store.capstone_record`) says; call it holding the working trajectory's lock.
    When its commit was made (the branch holds it): the files it moved aside go, the index
    gets the commit's files (`_index_finished`), the working feedback file goes unless a
    verdict was added to it since, and the working trajectory is archived, as the capstone
    would have done. When it was not: each file it wrote to the work tree is taken back (the
    file it replaced put back; one written where there was none removed while it holds
    what the capstone wrote) with the folders it created, so the repository is as it was.
    Each step can itself be stopped: the record goes last, and the next settling does again
    what is left. A record that is not what a capstone writes (`_read_record`) names nothing
    to do: it goes."""
    import pygit2

    root = folder.root
    record_path = capstone_record(folder)
    if not record_obeyed(root, record_path):
        return  # it came with the repository: nothing it names was done here
    record = _read_record(root, record_path)
    repository = find_repository(root)
    if record is not None and repository is not None and repository.workdir is not None:
        commit: pygit2.Commit | None = None
        unwritten: str | None = None
        try:
            commit = _stopped_commit(repository, record)
            if commit is None:
                _take_back(repository, root, record)
            else:
                unwritten = _finish(repository, folder, record, commit)
        except pygit2.GitError as error:
            # A damaged repository (HEAD naming an object that is not there, an index libgit2
            # cannot read): the record stays, and so does whatever it names, until git can
            # read the repository again.
            shown = record_path.relative_to(root).as_posix()
            done = "taken back" if commit is None else "finished"
            raise StetError(
                f"the capstone stopped midway ({shown}) could not be {done}: git cannot read "
                f"the repository ({error}); repair it (git fsck names what is damaged) and "
                "try again"
            ) from None
        if commit is not None and unwritten is not None:
            # The record stays for the next command. Nothing may be written to the working
            # trajectory meanwhile: finishing archives it, with whatever was added since.
            raise StetError(
                f"the capstone stopped after its commit {str(commit.id)[:12]} cannot be "
                f"finished yet: {unwritten}"
            )
    remove_regular(record_path, root)


_OBJECT_ID = re.compile(r"[0-9a-f]{40}")
_SHA256 = re.compile(r"[0-9a-f]{64}")
_FILE_MODES = (0o100644, 0o100755)


@dataclass(frozen=True)
class _Record:
    """A stopped capstone's record (`_write_record`), its fields checked."""

    trajectory: str
    parent: str
    branch: str | None
    tree: str
    written: dict[str, str]
    existed: list[str] | None  # None: not recorded (a record written before it was)
    asides: dict[str, str] | None  # what each is moved aside as; None: not recorded
    created: list[str]
    staging: dict[str, tuple[str, int, str | None]]
    feedback: str | None
    feedback_sha256: str | None


def _read_record(root: Path, path: Path) -> _Record | None:
    """The capstone record at `path`; None when it cannot be read or is not what a capstone
    writes (each field of its type, each object id hexadecimal, each path one inside the
    work tree): such a record names nothing to finish or take back."""
    try:
        data = read_small(path, root, path.name)
    except StetError:
        return None
    fields = object_or_none(data) if data is not None else None
    if fields is None:
        return None
    written, created, staging = fields.get("written"), fields.get("created"), fields.get("staging")
    trajectory, branch, existed = (
        fields.get("trajectory"),
        fields.get("branch"),
        fields.get("existed"),
    )
    feedback, feedback_sha256 = fields.get("feedback"), fields.get("feedback_sha256")
    asides = fields.get("asides")
    if not (
        isinstance(trajectory, str)
        and _one_name(trajectory)
        and _object_id(fields.get("parent"))
        and _object_id(fields.get("tree"))
        and (branch is None or (isinstance(branch, str) and branch.startswith("refs/heads/")))
        and isinstance(written, dict)
        and all(_work_tree_path(p) and _object_id(b) for p, b in written.items())
        and (
            existed is None
            or (
                isinstance(existed, list)
                and all(isinstance(p, str) and p in written for p in existed)
            )
        )
        and (
            asides is None
            or (
                isinstance(asides, dict)
                and all(p in written and _aside_of(p, name) for p, name in asides.items())
            )
        )
        and isinstance(created, list)
        and all(_work_tree_path(folder) for folder in created)
        and isinstance(staging, dict)
        and all(_work_tree_path(p) and _staged_entry(e) for p, e in staging.items())
        and (feedback is None or _work_tree_path(feedback))
        and (
            feedback_sha256 is None
            or (isinstance(feedback_sha256, str) and _SHA256.fullmatch(feedback_sha256))
        )
    ):
        return None
    return _Record(
        trajectory=trajectory,
        parent=fields["parent"],
        branch=branch,
        tree=fields["tree"],
        written=written,
        existed=existed,
        asides=asides,
        created=created,
        staging={path: (blob, mode, replaces) for path, (blob, mode, replaces) in staging.items()},
        feedback=feedback,
        feedback_sha256=feedback_sha256,
    )


def _aside_of(path: str, name: object) -> bool:
    """Whether `name` is one the capstone moves the file at `path` aside as."""
    pattern = rf"\.{re.escape(PurePosixPath(path).name)}{_WorkTreeWrite.ASIDE}-[0-9a-f]{{16}}"
    return isinstance(name, str) and re.fullmatch(pattern, name) is not None


def _object_id(value: object) -> bool:
    return isinstance(value, str) and _OBJECT_ID.fullmatch(value) is not None


def _one_name(value: str) -> bool:
    """Whether `value` names one file in a folder (no separator, not `.` or `..`)."""
    return bool(value) and value not in (".", "..") and not re.search(r"[/\\\0]", value)


def _work_tree_path(value: object) -> bool:
    """Whether `value` is a path relative to the work tree that stays inside it."""
    if not isinstance(value, str) or not value or "\0" in value or "\\" in value:
        return False
    parts = value.split("/")
    return not value.startswith("/") and all(part not in ("", ".", "..") for part in parts)


def _staged_entry(value: object) -> bool:
    """Whether `value` is an index entry a capstone records: blob, mode, what it replaces."""
    if not (isinstance(value, list) and len(value) == 3):
        return False
    blob, mode, replaces = value
    return (
        _object_id(blob)
        and type(mode) is int
        and mode in _FILE_MODES
        and (replaces is None or _object_id(replaces))
    )


def _stopped_midway(folder: Folder) -> bool:
    """Whether a capstone of the working trajectory was stopped midway: its record is there
    while no capstone holds the working trajectory's lock (one at work writes its record, and
    removes it, under that lock)."""
    record = capstone_record(folder)
    if not os.path.lexists(record) or not record_obeyed(folder.root, record):
        return False
    with held(lock_of(folder), folder.root, 0) as free:
        return free


def _finished(
    repository: pygit2.Repository, target: Target, folder: Folder
) -> CapstoneResult | None:
    """When taking the working trajectory's lock finished a capstone stopped after its commit
    (`finish_stopped` archived the working trajectory), what that capstone did, as running
    it again over a trajectory HEAD holds says (`changed: false`, HEAD the parent); None
    when there is a working trajectory still (the stopped capstone was taken back)."""
    import pygit2

    if os.path.lexists(inside(target.root, folder.relative)) or repository.head_is_unborn:
        return None
    head = repository.head.peel(pygit2.Commit)
    trajectory = (head.message_trailers.get(TRAILER) or "").strip()
    if not trajectory:
        return None
    try:
        names = os.listdir(inside(target.root, ARCHIVE))
    except (OSError, StetError):
        names = []
    prefix = f"{folder.id}-{trajectory}"
    archived = [ARCHIVE / name for name in names if name.startswith(prefix)]
    newest = max(
        archived, key=lambda path: os.lstat(inside(target.root, path)).st_mtime_ns, default=None
    )
    return CapstoneResult(
        target=target,
        trajectory=trajectory,
        parent=str(head.id),
        branch=_short_branch(None if repository.head_is_detached else repository.head.name),
        message=head.message,
        paths=[],
        changed=False,
        archived=None if newest is None else newest.as_posix(),
    )


def _stopped_commit(repository: pygit2.Repository, record: _Record) -> pygit2.Commit | None:
    """The commit the stopped capstone made, when its branch (or the detached HEAD), or HEAD
    (on the branch renamed since, say), holds it: its tree and its parent are the record's."""
    import pygit2

    tree, parent = record.tree, record.parent
    for name in dict.fromkeys((record.branch or "HEAD", "HEAD")):
        try:
            commit: pygit2.Commit | None = repository.references[name].peel(pygit2.Commit)
        except (KeyError, ValueError, pygit2.GitError):
            continue
        for _ in range(_LOOKED_AT):
            if commit is None:
                break
            parents = [str(oid) for oid in commit.parent_ids]
            if str(commit.tree_id) == tree and parents == [parent]:
                return commit
            commit = commit.parents[0] if parents else None
    return None


def _asides(root: Path, path: str, record: _Record) -> list[Path]:
    """What the capstone moved aside at `path` (`_WorkTreeWrite`): the copy its record names,
    when it is there; for a record that names none (one written before records did), every
    copy beside the file."""
    full = inside(root, path)
    if record.asides is not None:
        name = record.asides.get(path)
        aside = None if name is None else full.parent / name
        return [aside] if aside is not None and os.path.lexists(aside) else []
    kept = re.compile(rf"\.{re.escape(full.name)}{_WorkTreeWrite.ASIDE}-[0-9a-f]{{16}}")
    try:
        names = os.listdir(full.parent)
    except (FileNotFoundError, NotADirectoryError):
        return []
    found = [full.parent / name for name in names if kept.fullmatch(name)]
    # The newest last: a copy left beside the file by an earlier take-back may be there too
    # (a rename sets a file's change time).
    return sorted(found, key=lambda aside: os.lstat(aside).st_ctime_ns)


def _take_back(repository: pygit2.Repository, root: Path, record: _Record) -> None:
    """The stopped capstone's writes to the work tree undone: its commit was not made. What
    the user did since stays: a file that holds something else than the capstone wrote is
    theirs; a file that was there before the capstone is never removed (it may hold the
    user's unstaged changes, as the capstone wrote them); and when the index or HEAD holds a
    file as the capstone wrote it, the user took its work (staged or committed it), and
    none of its files is taken back. The copy of what a file kept so held before the
    capstone (`_asides`) goes when git holds those bytes at the path, else stays beside it,
    so that nothing is lost."""
    import pygit2

    index = repository.index
    index.read(False)
    head = None if repository.head_is_unborn else repository.head.peel(pygit2.Commit).tree
    in_git: dict[str, set[str]] = {}
    for path in record.written:
        in_git[path] = {str(index[path].id)} if path in index else set()
        if head is not None:
            with suppress(KeyError):
                in_git[path].add(str(head[path].id))
    parent = repository.get(record.parent)
    started: set[str] = set()  # what git held of the files before the capstone
    for path in record.written:
        if isinstance(parent, pygit2.Commit):
            with suppress(KeyError):
                started.add(f"{path}:{parent.tree[path].id}")
        replaces = record.staging.get(path, (None, None, None))[2]
        if replaces is not None:
            started.add(f"{path}:{replaces}")
    taken = any(
        blob in in_git[path] and f"{path}:{blob}" not in started
        for path, blob in record.written.items()
    )
    existed = record.written.keys() if record.existed is None else set(record.existed)
    for path, blob in reversed(list(record.written.items())):
        full = inside(root, path)
        asides = _asides(root, path, record)
        data = read_regular(full, root)
        held = None if data is None else str(pygit2.hash(data))
        ours = held == blob and not taken  # what the capstone wrote, still its own
        if asides:
            aside = asides[-1]
            if held is None or ours:
                put_back(aside, full, root)
            elif str(pygit2.hashfile(str(aside))) in in_git[path] | {held}:
                remove_regular(aside, root)
        elif ours and path not in existed:
            remove_regular(full, root)
        with suppress(FileNotFoundError, NotADirectoryError):
            for name in os.listdir(full.parent):  # a write stopped before its rename
                if name.startswith(f".{full.name}.") and is_temporary(name):
                    remove_regular(full.parent / name, root)
    for created in reversed(record.created):
        with suppress(OSError):  # a folder holding something else stays
            os.rmdir(inside(root, created))


def _index_finished(
    repository: pygit2.Repository, root: Path, record: _Record, commit: pygit2.Commit
) -> str | None:
    """Each entry the stopped capstone would have given the index, given it where the index
    still holds what the capstone started from (what the commit's parent holds at the path,
    or the skill graduation staged): an entry staged since in another version stays.
    Why the index could not be written, and what to do, if it could not."""
    import pygit2

    parent = commit.parents[0].tree
    wanted: list[tuple[str, pygit2.Oid, int, pygit2.Oid | None]] = []
    for path, (blob, mode, replaces) in record.staging.items():
        if replaces:
            before: pygit2.Oid | None = pygit2.Oid(hex=replaces)
        else:
            try:
                before = parent[path].id
            except KeyError:
                before = None
        wanted.append((path, pygit2.Oid(hex=blob), mode, before))

    def finish(index: pygit2.Index) -> None:
        for path, blob, mode, before in wanted:
            held = index[path].id if path in index else None
            if held != blob and held == before:
                index.add(pygit2.IndexEntry(path, blob, pygit2.enums.FileMode(mode)))

    try:
        with file_lock(root / INDEX_LOCK, root, "the git index"):
            update_index(repository, finish)
    except pygit2.GitError as error:
        return f"git cannot read its index ({error}); repair it (git fsck names what is damaged)"
    except (OSError, StetError) as error:
        return f"{error}; try again once git lets go of its index"
    return None


def _finish(
    repository: pygit2.Repository,
    folder: Folder,
    record: _Record,
    commit: pygit2.Commit,
) -> str | None:
    """The stopped capstone's work after its commit, done; why not, when the index could not
    be written. The index is given the commit's files only while HEAD holds the commit (the
    index of a branch checked out since that lacks it is none of the capstone's business)."""
    import pygit2

    root = folder.root
    for path in record.written:
        # Its own copies alone: one an earlier take-back left may hold the user's only copy
        # of an edit. A record that names none (written before records did) removes none.
        for aside in _asides(root, path, record) if record.asides is not None else []:
            remove_regular(aside, root)
    head = repository.head.peel(pygit2.Commit) if not repository.head_is_unborn else None
    on_it = head is not None and (
        head.id == commit.id or repository.descendant_of(head.id, commit.id)
    )
    if on_it and (unwritten := _index_finished(repository, root, record, commit)) is not None:
        return unwritten
    feedback = record.feedback
    if feedback is not None:
        with feedback_lock(root, folder.id):
            data = read_small(inside(root, feedback), root, feedback, FEEDBACK_LIMIT)
            if data is not None and hashlib.sha256(data).hexdigest() == record.feedback_sha256:
                remove_regular(inside(root, feedback), root)
    if os.path.lexists(inside(root, folder.relative)):
        _archive(root, folder, record.trajectory, [])
    return None


def _settle_index(
    repository: pygit2.Repository, target: Target, config: GateConfig, trajectory: str
) -> list[str]:
    """When HEAD is the capstone that committed `trajectory` and was stopped before it updated
    the index: each `.stet/` file that commit changed enters the index at HEAD's blob (or
    leaves it) where the index holds what the capstone started from (what HEAD's parent held,
    or a skill as graduation staged it). A file staged since in another version stays."""
    import pygit2

    head = repository.head.peel(pygit2.Commit)
    if not head.parents:
        return []
    before, after = head.parents[0].tree, head.tree
    changed = {
        path
        for delta in before.diff_to_tree(after).deltas
        for path in (delta.old_file.path, delta.new_file.path)
        if path.startswith(".stet/")
    }
    if f"{(COMMITTED / trajectory).as_posix()}/{EVENTS}" not in changed:
        return []
    working = (target.key, *former_keys(repository, target))

    def entry(tree: pygit2.Tree, path: str) -> pygit2.Object | None:
        try:
            return tree[path]
        except KeyError:
            return None

    def started_from(path: str, held: pygit2.Oid | None, new: pygit2.Object) -> bool:
        """A skill as graduation staged it: the capstone committed it retargeted."""
        blob = repository.get(held) if held is not None else None
        name = PurePosixPath(path).parent.name
        if not isinstance(blob, pygit2.Blob) or not isinstance(new, pygit2.Blob):
            return False
        if not path.startswith(".stet/skills/") or not path.endswith("/SKILL.md"):
            return False
        return _retargeted(config, blob.data, name, working, trajectory) == new.data

    def settle(index: pygit2.Index) -> None:
        for path in sorted(changed):
            old, new = entry(before, path), entry(after, path)
            held = index[path].id if path in index else None
            if held == (new.id if new else None):
                continue
            if held != (old.id if old else None) and not (
                new is not None and started_from(path, held, new)
            ):
                continue
            if new is None:
                index.remove(path)
            else:
                index.add(pygit2.IndexEntry(path, new.id, new.filemode))

    try:
        with file_lock(target.root / INDEX_LOCK, target.root, "the git index"):
            update_index(repository, settle)
    except (OSError, StetError, pygit2.GitError) as error:
        paths = " ".join(sorted(changed))
        return [f"the index still lacks the commit's files ({error}): git reset -- {paths}"]
    return []


def _remove_working_feedback(target: Target, feedback: str | None, warnings: list[str]) -> None:
    """The working trajectory's verdicts are in the commit now (under its lock, still held):
    their file goes, so the target's next working trajectory starts without them. A file made
    while the capstone ran (no verdicts were moved) is left, and said so."""
    relative = feedback or feedback_path(target.key).as_posix()
    try:
        if feedback is not None:
            remove_regular(target.root / relative, target.root)
        elif os.path.lexists(inside(target.root, relative)):
            warnings.append(
                f"{relative} holds verdicts recorded while the capstone ran: they are not "
                "committed, and name the working trajectory that was committed"
            )
    except (OSError, StetError) as error:
        warnings.append(f"{relative} was not removed ({error}): its verdicts are committed")


def _settle_feedback(target: Target, graduated: _Graduated, warnings: list[str]) -> None:
    """HEAD holds the trajectory already: the working verdicts its commit lacks (recorded
    after the commit was made) join the committed trajectory's file in the work tree, as a
    verdict on that trajectory would, and the working file goes."""
    if graduated.feedback is None:
        return
    for path, written in graduated.written.items():
        try:
            atomic_write(target.root / path, written.data, target.root)
        except (OSError, StetError) as error:
            warnings.append(f"{path} was not written ({error}): {graduated.feedback} is kept")
            return
    _remove_working_feedback(target, graduated.feedback, warnings)


class _WorkTreeWrite:
    """The capstone's files written through the boundary, with what is needed to undo it
    when a hook refuses: each file it replaces, moved aside unread (whatever its size; a
    stop leaves it beside, not lost), and the folders it created."""

    ASIDE = ".stet-before-capstone"

    def __init__(self, root: Path, asides: dict[str, str] | None = None) -> None:
        self.root = root
        self.asides = asides or {}
        self.previous: list[tuple[Path, Path | None]] = []
        self.created: list[Path] = []

    def write(self, files: dict[str, bytes]) -> None:
        """Each file in order (a trajectory's meta.json last: the folder is complete with it)."""
        for path, data in files.items():
            folder = Path(path).parent
            for part in reversed([folder, *folder.parents][:-1]):
                if part not in self.created and not os.path.lexists(inside(self.root, part)):
                    self.created.append(part)
            make_dirs(self.root, folder)
            aside = move_aside(self.root / path, self.root, self.ASIDE, self.asides.get(path))
            self.previous.append((Path(path), aside))
            if aside is None:
                atomic_write(self.root / path, data, self.root)
                continue
            # The file it replaces keeps its permissions: created with them (less the umask,
            # so never wider for a moment), then given them whole.
            mode = stat.S_IMODE(os.lstat(aside).st_mode)
            atomic_write(self.root / path, data, self.root, mode)
            os.chmod(inside(self.root, path), mode)

    def keep(self) -> None:
        """The commit is made: the files moved aside go."""
        for _, aside in self.previous:
            if aside is not None:
                with suppress(OSError):
                    os.unlink(aside)

    def undo(self) -> None:
        """Best effort, so that the refusal that caused it is the error reported."""
        for path, aside in reversed(self.previous):
            with suppress(OSError, StetError):
                if aside is None:
                    remove_regular(self.root / path, self.root)
                else:
                    os.replace(aside, inside(self.root, path))
        for folder in reversed(self.created):
            with suppress(OSError):
                os.rmdir(inside(self.root, folder))


# -- the repository's commit hooks ----------------------------------------------------------


def _run_hooks(
    repository: pygit2.Repository, root: Path, tree: pygit2.Oid, message: str, config: GateConfig
) -> str:
    """pygit2 runs no hooks, so the repository's `pre-commit`, `prepare-commit-msg` and
    `commit-msg` run here, as `git commit -m` runs them: in the work tree, with GIT_INDEX_FILE
    naming an index that holds exactly the commit's tree (a temporary one, as `git commit
    --only` uses), the message hooks given the message's file, which they may edit. A hook's
    changes to that index are not committed."""
    folder = _hooks_folder(repository, root)
    present = [name for name in HOOKS if _executable(folder / name)]
    if not present:
        return message
    with _temporary_index(repository, tree) as (index_file, message_file):
        environment = {**os.environ, "GIT_INDEX_FILE": str(index_file), "GIT_EDITOR": ":"}
        if "pre-commit" in present:
            _run_hook(folder / "pre-commit", [], root, environment)
        if "prepare-commit-msg" in present or "commit-msg" in present:
            message_file.write_text(message, encoding="utf-8")
            if "prepare-commit-msg" in present:  # told the message came from -m
                arguments = [str(message_file), "message"]
                _run_hook(folder / "prepare-commit-msg", arguments, root, environment)
            if "commit-msg" in present:
                _run_hook(folder / "commit-msg", [str(message_file)], root, environment)
            message = _edited_message(config, message_file, _trailers_of(message))
    return message


def _hooks_folder(repository: pygit2.Repository, root: Path) -> Path:
    """`core.hooksPath` (relative to the work tree), else the hooks of the common git folder
    (a linked worktree shares its main repository's)."""
    config = repository.config
    if "core.hooksPath" in config:
        configured = Path(os.path.expanduser(str(config["core.hooksPath"])))
        return configured if configured.is_absolute() else root / configured
    return common_git_dir(Path(repository.path)) / "hooks"


def _executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


@contextmanager
def _temporary_index(
    repository: pygit2.Repository, tree: pygit2.Oid
) -> Iterator[tuple[Path, Path]]:
    """An index file outside the repository holding the commit's tree, and a message file."""
    import pygit2

    with tempfile.TemporaryDirectory(prefix="stet-capstone-") as scratch:
        index_file = Path(scratch) / "index"
        index = pygit2.Index(str(index_file))
        tree_object = repository[tree]
        assert isinstance(tree_object, pygit2.Tree)
        index.read_tree(tree_object)
        index.write()
        yield index_file, Path(scratch) / "COMMIT_EDITMSG"


HOOK_TIMEOUT_SECONDS = 600
"""A hook still running after this long is a refusal (a capstone must never hang the editor)."""


def _run_hook(hook: Path, arguments: list[str], root: Path, environment: dict[str, str]) -> None:
    """The hook's output is captured (a language server's standard output is the protocol)
    and its end quoted in the refusal."""
    try:
        process = subprocess.Popen(
            [str(hook), *arguments],
            cwd=root,
            env=environment,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: a timeout ends all it started
        )
    except OSError as error:
        raise CapstoneRefused(
            "hook", f"the {hook.name} hook could not run: {error.strerror or error}"
        ) from None
    try:
        output, _ = process.communicate(timeout=HOOK_TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(OSError):
            os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise CapstoneRefused(
            "hook",
            f"the {hook.name} hook did not finish within {HOOK_TIMEOUT_SECONDS} s; {_UNCHANGED}",
        ) from None
    if process.returncode != 0:
        lines = output.decode("utf-8", "replace").rstrip().split("\n")
        tail = "\n".join(lines[-_HOOK_OUTPUT_LINES:]).strip()
        raise CapstoneRefused(
            "hook",
            f"the {hook.name} hook failed (exit status {process.returncode}); "
            f"{_UNCHANGED}" + (f":\n{tail}" if tail else ""),
        )


def _edited_message(config: GateConfig, message_file: Path, trailers: list[str]) -> str:
    """The message as the message hooks left it, with Stet's trailers put back at its end (a hook
    that appends a paragraph would otherwise leave them out of the trailer block), through
    the gate again."""
    edited = message_file.read_text(encoding="utf-8", errors="replace")
    lines: list[str] = []
    for line in _without_stet_trailers(edited).rstrip().split("\n"):
        if not line.strip() and lines and not lines[-1].strip():
            continue
        lines.append(line.rstrip())
    text = "\n".join(lines).rstrip()
    if not text:
        raise CapstoneRefused("hook", f"the message hooks left the message empty; {_UNCHANGED}")
    return _gated(config, _with_trailers(text, trailers), *_MESSAGE)


def _with_trailers(text: str, trailers: list[str]) -> str:
    """`text` (stripped) with the trailers at its end: in its last paragraph when that is a
    trailer block already (`Signed-off-by: …`), so git reads them all; else in one of their
    own."""
    last = text.rsplit("\n\n", 1)[-1]
    is_block = "\n\n" in text and all(_TRAILER_LINE.match(line) for line in last.split("\n"))
    joined = "\n".join(trailers)
    return f"{text}\n{joined}\n" if is_block else f"{text}\n\n{joined}\n"


# -- the working trajectory, archived ---------------------------------------------------------


def _archive(root: Path, folder: Folder, trajectory: str, warnings: list[str]) -> str | None:
    """Moved, not deleted: the imported sessions stay at hand should the commit be undone.
    A failure here leaves the commit made: the working trajectory then equals the committed
    one, and a second capstone changes nothing."""
    try:
        make_dirs(root, ARCHIVE)
        destination = _free_name(root, ARCHIVE / f"{folder.id}-{trajectory}")
        os.rename(inside(root, folder.relative), inside(root, destination))
    except (OSError, StetError) as error:
        warnings.append(f"the working trajectory was not archived: {error}")
        return None
    return destination.as_posix()


def committed_as(root: Path, key: str) -> str | None:
    """The committed trajectory the newest capstone of working trajectory `key` made (its
    archive is named after both), when the repository has it."""
    try:
        names = os.listdir(inside(root, ARCHIVE))
    except (OSError, StetError):
        return None
    found = []
    for name in names:
        if name.startswith(f"{key}-"):
            with suppress(OSError):
                made = os.lstat(inside(root, ARCHIVE / name)).st_mtime_ns
                found.append((made, name[len(key) + 1 :]))
    for _, name in sorted(found, reverse=True):
        for trajectory in (name, name.rsplit("-", 1)[0]):  # `-2` when archived twice
            if trajectory and os.path.isdir(inside(root, COMMITTED / trajectory)):
                return trajectory
    return None


def _free_name(root: Path, wanted: Path) -> Path:
    candidate, number = wanted, 1
    while os.path.lexists(inside(root, candidate)):
        number += 1
        candidate = wanted.with_name(f"{wanted.name}-{number}")
    return candidate
