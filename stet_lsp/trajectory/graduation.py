"""Graduation: the only way an entry of the style sheet becomes durable.

A person decides, entry by entry, where each goes: into the trajectory (a `note` event of the
target's working trajectory, committed with the capstone), into a proposed skill
(`.stet/skills/<name>/SKILL.md`, staged in the git index for review; the capstone commits the
skills the working trajectory's `graduation` events name), or nowhere (discarded).
Nothing is promoted on its own: `review` proposes a route for every open entry and
`apply_review` carries out only the lines a person checked.

Every byte written passes the redaction gate first. Each decision is a `graduation` event in
the working trajectory, kept with the notes in a session of their own
(`sessions/graduation.jsonl`), which compose orders among the imported sessions by its first
time. The entry's status changes last, through the sheet's own locked, atomic writer, so a
graduation stopped halfway leaves the entry open and doing it again adds nothing twice.

The gate runs with the repository's configuration (`stet_lsp.gate.load_config`: its reviewed
allowlist and `.stet/gate.toml`), or the one a front end passes as `gate_config`, which adds
its own settings (the editor's, a command's flags) to the repository's.

This module joins the style sheet (core), the gate and the trajectory package, so it lives
here: core imports neither.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
from collections import Counter
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, Literal, TypeGuard, get_args

from stet_lsp.core.errors import StetError
from stet_lsp.core.gitindex import index_error, update_index
from stet_lsp.core.jsonread import object_or_none
from stet_lsp.core.lines import split_lines
from stet_lsp.core.locking import file_lock
from stet_lsp.core.model import KINDS, SECTION_TITLES, Entry, Status, format_time, utc_now
from stet_lsp.core.operations import Result, entry_json, result
from stet_lsp.core.safefs import (
    atomic_write,
    ensure_stet_gitignore,
    inside,
    make_dirs,
    read_regular,
    remove_regular,
)
from stet_lsp.core.sheet import StyleSheet, find_entry, missing_entry
from stet_lsp.core.sheet_format import SheetDocument, normalize_text
from stet_lsp.core.targets import Target, open_repository
from stet_lsp.trajectory.events import Graduation, Note, SourceRef, event_json, parse_event
from stet_lsp.trajectory.importing import (
    GRADUATION_IMPORTER,
    RECORD_FORMAT,
    compose_pending,
    read_record,
    write_session,
)
from stet_lsp.trajectory.jsontext import without_lone_surrogates
from stet_lsp.trajectory.renames import follow_rename
from stet_lsp.trajectory.skills import (
    META_TARGET,
    META_TRAJECTORY,
    SKILL_LIMIT,
    Context,
    Skill,
    check_name,
    describe,
    new_skill,
    parse_skill,
    propose_name,
    render_skill,
    rewrite_skill,
    shorten,
    skill_path,
    validate_skill,
    with_entry,
)
from stet_lsp.trajectory.store import (
    GRADUATION_SESSION,
    SESSIONS,
    SKILL_STAGING,
    SKILLS_CACHE,
    Folder,
    TooLarge,
    read_small,
    record_obeyed,
    record_untracked_message,
    refuse_tracked,
    skill_record_temporary,
    working_folder,
    working_lock,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from stet_lsp.gate.config import GateConfig
    from stet_lsp.gate.findings import Finding
    from stet_lsp.gate.redact import RedactionResult

    Known = Sequence[tuple[str, list[Finding]]]
    """Other texts and the secrets found in them (the style sheet), redacted wherever their
    values stand."""

Route = Literal["trajectory", "skill", "discard"]
ROUTES: tuple[Route, ...] = get_args(Route)
STATUS_OF: dict[Route, Status] = {
    "trajectory": "graduated-trajectory",
    "skill": "graduated-skill",
    "discard": "discarded",
}
SESSION = GRADUATION_SESSION
IMPORTER = GRADUATION_IMPORTER
NOTE_MAX_AGE = timedelta(days=14)
"""A note older than this is proposed for discarding: scratch nobody came back to."""
CONTEXT_AROUND = 2
"""Lines shown before and after an anchored line in a skill."""
SKILL_LOCKS = SKILLS_CACHE
"""Lock files of the skills being written: in the cache, never in a committed folder."""
INDEX_LOCK = Path(".stet") / "cache" / "git-index"
"""The lock Stet's writers of the git index take (its file is `git-index.lock`)."""
REVIEW_VERSION = 1

_SUMMARY_CHARS = 100
_HEADER = re.compile(
    r"<!-- stet-review version=(?P<version>\d+) kind=(?P<kind>[a-z]+) "
    r'target=(?P<target>"(?:[^"\\]|\\.)*") -->'
)
_REVIEW_LINE = re.compile(
    r"^\s*[-*+]\s+\[(?P<mark>[ xX])\]\s+(?P<id>[A-Za-z0-9_-]{1,64})\s+(?:→|->)\s+"
    r"(?P<route>trajectory|discard|skill(?::(?P<skill>\S*))?)(?:\s+(?:—|--|-)(?:\s.*)?)?\s*$"
)
# What looks like a checkbox a person meant: a bullet or a number before `[` (spaces or not),
# or `[x]` alone; `_REVIEW_LINE` reads only the form `--review` writes.
_CHECKBOX = re.compile(r"^\s*(?:(?:[-*+]|\d+[.)])\s*\[|\[[ xX]?\])")
_REDACTED = re.compile(r"\[REDACTED:[^\]]*\]")


@dataclass(frozen=True)
class SkillOutcome:
    """What graduating into a skill did."""

    name: str
    path: str
    proposed: str
    created: bool
    added: bool
    staged: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "path": self.path,
            "proposed_name": self.proposed,
            "created": self.created,
            "added": self.added,
        }


@dataclass(frozen=True)
class Proposal:
    """The route the review proposes for one open entry, and why."""

    entry: Entry
    route: Route
    skill: str | None
    reason: str
    text: str
    """The entry's text after the gate: what the review shows and the skill name comes from."""

    @property
    def route_text(self) -> str:
        return f"skill:{self.skill}" if self.route == "skill" else self.route


@dataclass(frozen=True)
class ReviewLine:
    """One entry's line of a review document: `line` is its 1-based line number."""

    line: int
    checked: bool
    entry_id: str
    route: Route
    skill: str | None


# -- graduating one entry -----------------------------------------------------------------------


def graduate(
    sheet_or_target: StyleSheet | Target,
    entry_id: str,
    route: str,
    skill_name: str | None = None,
    text: str | None = None,
    *,
    now: datetime | None = None,
    gate_config: GateConfig | None = None,
    recreate: bool = False,
) -> Result:
    """Carry out a person's decision on one open entry: `route` `trajectory`, `skill` (into
    `skill_name`, or a name proposed from the text) or `discard`; `text` replaces the entry's
    text in what graduates. A skill deleted on purpose (in a commit on HEAD's line, or by a
    staged deletion) is refused unless `recreate`. Returns `version`, `target`, `entry` (with
    its new status), `route`, `trajectory` (the working trajectory that records the decision),
    `skill` (skill route only), `edited` and `staged` (repository-relative paths put in the
    git index).
    What is written passes the gate with `gate_config`, else the repository's."""
    sheet = _sheet_of(sheet_or_target)
    config = _config_of(sheet, gate_config)
    follow_rename(sheet.target, config, wait=True)  # before the sheet's lock: it may compose
    result = _graduate(sheet, entry_id, route, skill_name, text, now, config, recreate)
    _compose(sheet.target, config)
    return result


def _graduate(
    sheet: StyleSheet,
    entry_id: str,
    route: str,
    skill_name: str | None,
    text: str | None,
    now: datetime | None,
    config: GateConfig,
    recreate: bool = False,
) -> Result:
    """`graduate` up to storing its events: the working trajectory is composed after the
    sheet's lock is let go (composing a long trajectory takes seconds, which the agents'
    notes would wait for)."""
    # Before the sheet's lock, whose file a repository that commits `.stet/cache` would see.
    refuse_tracked(working_folder(sheet.target))
    # Under the sheet's lock from reading the entry to closing it: an edit or a discard made
    # meanwhile waits, instead of being closed over with the text it replaced. A failure
    # writes nothing to the sheet.
    with sheet.edit() as document:
        entry, chosen, body = checked_decision(sheet, entry_id, route, skill_name, text, document)
        edited = body != entry.text
        moment = now or utc_now()
        outcome = (
            _into_skill(sheet, entry, body, skill_name, config, recreate)
            if chosen == "skill"
            else None
        )
        folder = _record(sheet, entry, chosen, body, edited, outcome, moment, config)
        entry.status = STATUS_OF[chosen]
        document.touch(entry.id)
    return _result(sheet, entry, chosen, folder, edited, outcome)


def _compose(target: Target, config: GateConfig) -> None:
    """The working trajectory composed with the events graduation stored. A failure here
    leaves them stored and marked: the next import, graduation or capstone composes them."""
    folder = working_folder(target)
    try:
        with working_lock(folder):
            compose_pending(target, folder, config)
    except StetError as error:
        why = str(error).removesuffix("; nothing was changed")
        raise StetError(
            f"graduated, but the working trajectory was not composed: {why} (the next "
            "import, graduation or capstone composes it)"
        ) from None


def checked_decision(
    sheet: StyleSheet,
    entry_id: str,
    route: str,
    skill_name: str | None,
    text: str | None,
    document: SheetDocument | None = None,
) -> tuple[Entry, Route, str]:
    """The entry (of `document` when given, else of the sheet as it reads now), the route
    and the text that graduates, refused as `graduate` refuses the request; nothing is
    written (an editor's buffer takes the new status first)."""
    chosen = check_route(route)
    entry = find_entry(document or sheet.read(), _string(entry_id, "id"), sheet.target.label)
    _check_request(entry, chosen, skill_name, text)
    if skill_name is not None:
        from stet_lsp.trajectory.skills import skill_path

        skill_path(skill_name)
    return entry, chosen, entry.text if text is None else _edited(text)


def skill_proposal(
    sheet_or_target: StyleSheet | Target, entry_id: str, *, gate_config: GateConfig | None = None
) -> Result:
    """The skill name the skill route would propose for an entry (from its text after the
    gate), for a client that asks a person for the name first: `entry`, `proposed_name`."""
    sheet = _sheet_of(sheet_or_target)
    config = _config_of(sheet, gate_config)
    entry = sheet.get(_string(entry_id, "id"))
    lines = sheet.current_lines([entry]) if entry.anchor else {}
    proposed = proposed_name(entry.text, config, sheet_secrets(sheet, config))
    return result(sheet.target, entry=entry_json(entry, lines), proposed_name=proposed)


def _result(
    sheet: StyleSheet,
    entry: Entry,
    route: Route,
    folder: Folder,
    edited: bool,
    outcome: SkillOutcome | None,
) -> Result:
    """The one shape the CLI prints and the language server returns (docs/cli.md)."""
    lines = sheet.current_lines([entry]) if entry.anchor else {}
    fields: dict[str, Any] = {"entry": entry_json(entry, lines), "route": route}
    fields["trajectory"] = folder.id
    if outcome is not None:
        fields["skill"] = outcome.to_json()
    fields["edited"] = edited
    fields["staged"] = [outcome.path] if outcome is not None and outcome.staged else []
    return result(sheet.target, **fields)


def check_route(route: object) -> Route:
    for known in ROUTES:
        if route == known:
            return known
    raise StetError(f"unknown route {route!r} (expected one of: {', '.join(ROUTES)})")


def _check_request(entry: Entry, route: Route, skill_name: object, text: object) -> None:
    """Refuse what cannot be meant, before anything is written."""
    if entry.status != "open":
        raise StetError(
            f"entry {entry.id} is {entry.status}: only open entries graduate (nothing was changed)"
        )
    if skill_name is not None and (route != "skill" or not isinstance(skill_name, str)):
        raise StetError("a skill name goes with the skill route, as a string")
    if text is not None and route == "discard":
        raise StetError("a discarded entry keeps no text: give a text only to graduate it")


def _edited(text: object) -> str:
    body = normalize_text(_string(text, "text"))
    if not body:
        raise StetError("the text to graduate is empty; to drop the entry, discard it")
    return body


# -- into a skill -------------------------------------------------------------------------------


def proposed_name(text: str, config: GateConfig, known: Known = ()) -> str:
    """`propose_name` of the text after the gate (as SKILL.md, with `config`, and the values
    of `known` texts: `sheet_secrets`): no part of a secret can reach a folder name."""
    return propose_name(_gate(text, "SKILL.md", config, known))


def _into_skill(
    sheet: StyleSheet,
    entry: Entry,
    body: str,
    skill_name: str | None,
    config: GateConfig,
    recreate: bool = False,
) -> SkillOutcome:
    """Write the entry into the skill's SKILL.md (creating it, unless it was deleted on
    purpose and not `recreate`) and stage that file alone. The name is proposed from the text
    after the gate, so no part of a secret can reach a folder name."""
    target = sheet.target
    known = sheet_secrets(sheet, config)
    proposed = proposed_name(body, config, known)
    name = proposed if skill_name is None else skill_name
    relative = skill_path(name)  # refused here, naming the rule, when the name breaks one
    root = target.root
    _refuse_in_progress(root, relative)
    _refuse_tracked_record(root, relative, untold=False)  # before the skill's lock
    settle_skills(root)  # before the skill's lock, which settling takes
    with skill_lock(root, name):
        current, existing_text = _existing_skill(root, relative, name)
        if current is None:
            _refuse_left_out(root, relative, name)
        index_text = _refuse_written_secrets(root, relative, existing_text, config)
        if current is None and not recreate:
            _refuse_deleted(root, relative, name)
        section = _section(sheet, entry, body, name, current, existing_text, config, known)
        skill, extended, text, context, provenance = section
        added = extended is not skill
        if added:
            # A person's unstaged changes to the file stay unstaged: the index gets its own
            # version with the entry added, the work tree its own. A skill made anew
            # (--recreate) keeps nothing of the version the index held.
            staged_data = None
            if current is not None and index_text is not None and index_text != existing_text:
                staged_skill = _parsed_staged(index_text, relative, name)
                staged_data = _checked_text(
                    with_entry(staged_skill, entry.id, text, context, provenance),
                    index_text,
                    config,
                )
            previous = existing_text if current else None
            _write_skill(root, relative, extended, previous, config, staged_data)
        staged = added or _stage_if_missing(root, relative, existing_text, config)
    return SkillOutcome(
        name, str(relative), proposed, created=current is None, added=added, staged=staged
    )


def _section(
    sheet: StyleSheet,
    entry: Entry,
    body: str,
    name: str,
    current: Skill | None,
    existing_text: str,
    config: GateConfig,
    known: Known = (),
) -> tuple[Skill, Skill, str, Any, dict[str, str]]:
    """The skill `name` as it is (or new), the same with the entry's section (the skill
    itself when it has the section already), and the section's gated text, context and
    provenance."""
    target = sheet.target
    provenance = {META_TARGET: target.label, META_TRAJECTORY: working_folder(target).id}
    context, hidden = _context(sheet, entry, config)
    text, context = _gated_section(body, context, hidden, existing_text, config, known)
    where = entry.anchor.path if entry.anchor else None
    skill = current or new_skill(name, describe(text, where), target.label)
    return skill, with_entry(skill, entry.id, text, context, provenance), text, context, provenance


def _skills_after(
    sheet: StyleSheet, lines: list[ReviewLine], config: GateConfig, recreate: bool = False
) -> list[str]:
    """What each checked skill line would make of its skill, line after line, checked as
    graduation checks it (the spec, the size, a deletion on purpose): the problems, before
    anything is written."""
    entries = {entry.id: entry for entry in sheet.entries()}
    made: dict[str, tuple[Skill | None, str]] = {}
    problems = []
    known = sheet_secrets(sheet, config)
    for line in lines:
        entry = entries.get(line.entry_id)
        if line.route != "skill" or entry is None:
            continue
        name = line.skill or proposed_name(entry.text, config, known)
        try:
            if name not in made:
                relative = skill_path(name)
                _refuse_in_progress(sheet.target.root, relative)
                _refuse_tracked_record(sheet.target.root, relative, untold=False)
                made[name] = _existing_skill(sheet.target.root, relative, name)
                root = sheet.target.root
                if made[name][0] is None:
                    _refuse_left_out(root, relative, name)
                _refuse_written_secrets(root, relative, made[name][1], config)
                if made[name][0] is None and not recreate:
                    _refuse_deleted(root, relative, name)
            current, existing_text = made[name]
            skill, extended, *_ = _section(
                sheet, entry, entry.text, name, current, existing_text, config, known
            )
            if extended is not skill:
                data = _checked_text(extended, existing_text if current else None, config)
                made[name] = (extended, data.decode("utf-8"))
        except StetError as error:
            problems.append(f"line {line.line}: {str(error).removesuffix('; nothing was changed')}")
    return problems


def skill_lock(root: Path, name: str) -> AbstractContextManager[None]:
    """The lock every writer of the skill `name` holds (graduation, the capstone)."""
    return file_lock(root / SKILL_LOCKS / name, root, f"the skill {name}")


def retarget_skill(
    text: str, name: str, working: tuple[str, ...], committed: str, gate_config: GateConfig
) -> str:
    """The SKILL.md `text` of the skill `name` with the working trajectory (any of the ids
    `working`: its key, and those it had before its branch was renamed) named as `committed`
    in `metadata.stet-trajectory` (the capstone commits a working trajectory under an id of
    its own), read and written as graduation reads and writes a skill (the
    text as written but for the changed metadata line), through the gate with `gate_config`
    (the repository's, as every writer's) and checked against the spec; `text` itself when
    its metadata does not name `working`. StetError when the text does not follow the spec."""
    skill = parse_skill(text, folder=name)
    listed = [value for value in skill.metadata.get(META_TRAJECTORY, "").split(" ") if value]

    def is_working(value: str) -> bool:  # as written, or as the gate left a key it redacted
        return value in working or any(_names(value, key) for key in working)

    if not any(is_working(value) for value in listed):
        return text
    renamed: list[str] = []
    for value in listed:
        value = committed if is_working(value) else value
        if value not in renamed:
            renamed.append(value)
    metadata = skill.metadata | {META_TRAJECTORY: " ".join(renamed)}
    rewritten = _gate(_rendered(replace(skill, metadata=metadata), text), "SKILL.md", gate_config)
    problems = validate_skill(rewritten, folder=name)
    if problems:
        raise StetError(
            f"the skill {name} would break the Agent Skills spec: {'; '.join(problems)}"
        )
    return rewritten


def _rendered(skill: Skill, previous: str | None) -> str:
    """The skill's SKILL.md: a new one in Stet's form; one a person may have written with
    its frontmatter kept as written (`rewrite_skill`), or refused when it cannot be."""
    if previous is None:
        return render_skill(skill)
    try:
        return rewrite_skill(previous, skill)
    except StetError as error:
        raise StetError(
            f"the skill {skill.name}'s frontmatter cannot be extended as written: {error}; "
            "nothing was changed"
        ) from None


def _gated_section(
    body: str,
    context: Context | None,
    hidden: tuple[_Hidden, ...],
    existing: str,
    config: GateConfig,
    known: Known = (),
) -> tuple[str, Context | None]:
    """The entry's text and its code through the gate with one numbering, continuing the
    skill's own markers: a secret in both gets the same marker. The description and heading
    are cut from this text, never from the raw one (a cut secret may not be recognised).
    What the gate found in the whole file (`hidden`) is replaced in the code first, and in
    the entry's text where it quotes it."""
    if context is None or not context.lines:
        return _gate_parts([body], "SKILL.md", config, existing, known)[0], context
    code, markers = _hide(context.lines, hidden, existing + "\n" + body)
    for value in sorted(markers, key=len, reverse=True):
        body = body.replace(value, markers[value])
    text, code = _gate_parts([body, code], "SKILL.md", config, existing, known)
    return text, replace(context, lines=tuple(code.split("\n")))


@dataclass(frozen=True)
class _Hidden:
    """Part of a line of an entry's code that the gate finds a secret in, read in the whole
    file: a private key's block seen from its middle is found only from its header."""

    line: int
    """The line's index in the code."""
    start: int
    end: int
    rule: str
    value: str
    """What the gate found, whole: its lines in the code share one marker."""
    replacement: str | None


def _hide(
    lines: tuple[str, ...], hidden: tuple[_Hidden, ...], numbered: str
) -> tuple[str, dict[str, str]]:
    """The code with each hidden part replaced by a marker numbered after those `numbered`
    uses, and each value and part of a line so replaced (of 8 characters or more) with its
    marker, for the text that quotes them."""
    from stet_lsp.gate.redact import used_numbers

    edited = list(lines)
    highest = used_numbers(numbered)
    markers: dict[tuple[str, str], str] = {}
    for part in hidden:
        key = (part.rule, part.value)
        if part.replacement is None and key not in markers:
            highest[part.rule] = highest.get(part.rule, 0) + 1
            markers[key] = f"[REDACTED:{part.rule}#{highest[part.rule]}]"
    quoted: dict[str, str] = {}
    for part in sorted(hidden, key=lambda part: (part.line, -part.start)):
        line = edited[part.line]
        marker = part.replacement or markers[(part.rule, part.value)]
        for value in (part.value, line[part.start : part.end]):
            if part.replacement is None and len(value.strip()) >= 8:
                quoted[value] = marker
        edited[part.line] = line[: part.start] + marker + line[part.end :]
    return "\n".join(edited), quoted


def _existing_skill(root: Path, relative: PurePosixPath, name: str) -> tuple[Skill | None, str]:
    """The skill already at `relative` (None when there is none) and its text; refused when it
    is over SKILL_LIMIT bytes, none of it read."""
    try:
        data = read_small(root / relative, root, relative.as_posix(), SKILL_LIMIT)
    except TooLarge as error:
        raise StetError(
            f"{relative}: {error.detail}; a skill is far smaller: choose another skill name, or "
            "shorten the file first; nothing was changed"
        ) from None
    if data is None:
        return None, ""
    try:
        text = data.decode("utf-8")
        return parse_skill(text, folder=name), text
    except UnicodeDecodeError:
        raise StetError(f"{relative} is not UTF-8; nothing was changed") from None
    except StetError as error:
        raise StetError(
            f"{relative} does not follow the Agent Skills spec ({error}); fix it before "
            "graduating into it, or choose another skill name; nothing was changed"
        ) from None


def _refuse_in_progress(root: Path, relative: PurePosixPath) -> None:
    """A skill staged in the middle of a merge, rebase, cherry-pick, revert or `git am` would
    be committed by that operation (the merge commit, the commit replayed), not reviewed and
    committed with the capstone: refused until it is done. A bisect commits nothing."""
    import pygit2

    from stet_lsp.core.gitindex import operation_in_progress

    try:
        what = operation_in_progress(open_repository(root))
    except (pygit2.GitError, StetError):
        return
    if what is not None and what != "a bisect":
        raise StetError(
            f"{what} is in progress: {relative} staged now would be committed by it; finish "
            "or abort it first, then graduate into the skill; nothing was changed"
        )


DELETION_WALK_LIMIT = 1000
"""The most commits of HEAD's line looked through for the one that deleted a skill."""


def _refuse_left_out(root: Path, relative: PurePosixPath, name: str) -> None:
    """Refuse the skill `name` that the work tree lacks only because a sparse checkout leaves
    it out (git's index marks it skip-worktree): it is not deleted, and writing it, even anew
    with --recreate, would replace what git holds of it unseen."""
    from stet_lsp.core.gitindex import outside_sparse_checkout

    if not outside_sparse_checkout(root, relative.as_posix()):
        return
    if _sparse_checkout(root):
        raise StetError(
            f"the skill {name} is outside the sparse checkout ({relative} is left out of the "
            f"work tree): include it (git sparse-checkout add {relative.parent}) and "
            "graduate again; nothing was changed"
        )
    raise StetError(  # marked by hand, as `git update-index --skip-worktree` marks a file
        f"the skill {name} is marked skip-worktree in git's index ({relative} is left out of "
        f"the work tree): bring it back (git update-index --no-skip-worktree {relative} && "
        f"git checkout -- {relative}) and graduate again; nothing was changed"
    )


def _sparse_checkout(root: Path) -> bool:
    """Whether the repository's configuration turns git's sparse checkout on."""
    import pygit2

    try:
        return open_repository(root).config.get_bool("core.sparseCheckout")
    except (KeyError, StetError, pygit2.GitError, ValueError):
        return False


def _refuse_deleted(root: Path, relative: PurePosixPath, name: str) -> None:
    """Refuse to create the skill `name` anew when it was deleted on purpose: the index holds
    it (a deletion from the work tree), HEAD holds it and the index does not (a staged
    deletion), or a commit on HEAD's first-parent line removed it. Graduating into it would
    bring back what someone took out."""
    how = deleted_skill(root, relative)
    if how is not None:
        raise StetError(
            f"the skill {name} was deleted ({how}): graduating into it would bring it back; "
            "choose another skill name, or graduate again with --recreate to make it anew; "
            "nothing was changed"
        )


def deleted_skill(root: Path, relative: PurePosixPath) -> str | None:
    """How the skill at `relative`, which the work tree does not hold, was deleted on purpose
    (from the work tree, a staged deletion, or the commit that removed it), else None."""
    import pygit2

    try:
        repository = open_repository(root)
        if relative.as_posix() in repository.index:
            return "from the work tree, its deletion not staged"
        if repository.head_is_unborn:
            return None
        commit = repository.head.peel(pygit2.Commit)
        if relative.as_posix() in commit.tree:
            return "its deletion is staged"
        for _ in range(DELETION_WALK_LIMIT):
            if not commit.parents:
                return None
            parent = commit.parents[0]
            if relative.as_posix() in parent.tree:
                summary = commit.message.split("\n", 1)[0].strip()
                return f"in commit {commit.short_id}, {summary!r}"
            commit = parent
    except (pygit2.GitError, StetError, KeyError, ValueError):
        return None
    return None


def _refuse_written_secrets(
    root: Path, relative: PurePosixPath, existing_text: str, config: GateConfig
) -> str | None:
    """Refuse a skill whose file, or the version the index holds of it, holds what the gate
    redacts; the index's text (None when it holds none)."""
    _refuse_secrets(existing_text, relative, config)
    index_text = _index_text(root, relative)
    if index_text is not None and index_text != existing_text:
        _refuse_secrets(index_text, relative, config, staged=True)
    return index_text


def _refuse_secrets(
    text: str, relative: PurePosixPath, config: GateConfig, staged: bool = False
) -> None:
    """A skill's file (or, `staged`, the version the index holds) holding what the gate
    redacts (typed in by hand) is not rewritten through the gate unseen: refused, saying
    how to redact it."""
    from stet_lsp.gate import scan_text
    from stet_lsp.gate.findings import places as gate_places

    found = scan_text(text, config=config, path=relative.as_posix(), cache=None) if text else []
    if not found:
        return
    places = gate_places(found)
    if staged:
        raise StetError(
            f"the staged {relative} holds a secret ({places}), and the file has unstaged "
            f"changes: stage the work tree's version (git add {relative}) or redact the "
            "staged one, and graduate again; nothing was changed"
        )
    raise StetError(
        f"{relative} holds a secret ({places}): redact it (stet gate redact --in-place "
        f"{relative}) and graduate again; nothing was changed"
    )


def _index_text(root: Path, relative: PurePosixPath) -> str | None:
    """The text the git index holds at `relative` (None when it holds none)."""
    import pygit2

    try:
        repository = open_repository(root)
        if relative.as_posix() not in repository.index:
            return None
        blob = repository.get(repository.index[relative.as_posix()].id)
    except (pygit2.GitError, OSError) as error:
        raise StetError(
            f"{relative} could not be staged: {index_error(error)}; nothing was changed"
        ) from None
    return blob.data.decode("utf-8", "replace") if isinstance(blob, pygit2.Blob) else None


def _parsed_staged(text: str, relative: PurePosixPath, name: str) -> Skill:
    try:
        return parse_skill(text, folder=name)
    except StetError as error:
        raise StetError(
            f"the staged {relative} does not follow the Agent Skills spec ({error}), and the "
            "file has unstaged changes: stage or undo them first; nothing was changed"
        ) from None


def _checked_text(skill: Skill, previous: str | None, config: GateConfig) -> bytes:
    """The skill rendered (keeping `previous`'s layout), gated and checked against the spec."""
    text = _gate(_rendered(skill, previous), "SKILL.md", config)
    problems = validate_skill(text, folder=skill.name)
    if problems:
        raise StetError(
            f"the skill {skill.name} would break the Agent Skills spec: {'; '.join(problems)} "
            "(choose another skill name, or shorten the text); nothing was changed"
        )
    return text.encode("utf-8")


def _write_skill(
    root: Path,
    relative: PurePosixPath,
    skill: Skill,
    previous: str | None,
    config: GateConfig,
    staged_data: bytes | None = None,
) -> None:
    """Gate, check against the spec, write atomically, stage (`staged_data` when the index is
    to get another version than the work tree); when staging fails, the file is put back as
    it was (`previous`; None: there was none), so trying again does it all. A record of the
    write (`_record_skill_write`) stays from before the file is written until it is staged:
    killed in between, the next command puts the file back (`settle_skills`)."""
    data = _checked_text(skill, previous, config)
    _refuse_tracked_record(root, relative)
    staged = data if staged_data is None else staged_data
    folders = [relative.parent, *relative.parent.parents][:-1]  # deepest first, not "."
    created = [folder for folder in folders if not os.path.isdir(root / folder)]
    record = _record_skill_write(root, relative, previous, data, staged, created)
    make_dirs(root, str(relative.parent))
    atomic_write(root / relative, data, root)
    try:
        stage(root, relative, staged)
    except StetError:
        _put_back_skill(root, relative, previous, created)
        remove_regular(record, root)
        raise
    remove_regular(record, root)


def _put_back_skill(
    root: Path, relative: PurePosixPath, previous: bytes | str | None, created: list[PurePosixPath]
) -> None:
    """The skill's file as it was before a graduation wrote it (None: there was none; then
    the folders made for it go too, when empty)."""
    if previous is None:
        remove_regular(root / relative, root)
        for folder in created:
            with contextlib.suppress(OSError):  # a folder holding something else stays
                os.rmdir(inside(root, folder.as_posix()))
    else:
        text = previous.encode("utf-8") if isinstance(previous, str) else previous
        atomic_write(root / relative, text, root)


def _refuse_tracked_record(root: Path, relative: PurePosixPath, *, untold: bool = True) -> None:
    """Refused, before anything is written, when git tracks the record a write of the skill
    at `relative` keeps (`_record_skill_write`), or (`untold`) whether it does cannot be
    told: the write would overwrite the repository's file and then remove it, and a record
    left by a graduation stopped midway would be obeyed by no later command
    (`record_obeyed`). Checked without `untold` before the skill's lock is taken, whose file
    a repository that commits `.stet/cache` would see; an index that cannot be read is
    refused at the write, after the refusals that name the skill's own problem."""
    record = root / SKILLS_CACHE / f"{relative.parent.name}{SKILL_STAGING}"
    unwritable = record_untracked_message(root, record)
    if unwritable is not None and (untold or unwritable[0] == "tracked"):
        raise StetError(unwritable[1])


def _record_skill_write(
    root: Path,
    relative: PurePosixPath,
    previous: str | None,
    data: bytes,
    staged: bytes,
    created: list[PurePosixPath],
) -> Path:
    """`.stet/cache/skills/<name>.staging`: the skill's path, what the work tree held (a blob
    in git's object database; null: no file), what is written there and what is staged (the
    blobs' ids), and the folders made for it."""
    import pygit2

    repository = open_repository(root)
    before = None if previous is None else repository.create_blob(previous.encode("utf-8"))
    record = root / SKILLS_CACHE / f"{relative.parent.name}{SKILL_STAGING}"
    fields = {
        "path": relative.as_posix(),
        "before": None if before is None else str(before),
        "written": str(pygit2.hash(data)),
        "staged": str(pygit2.hash(staged)),
        "created": [folder.as_posix() for folder in created],
    }
    make_dirs(root, SKILLS_CACHE)
    atomic_write(record, json.dumps(fields).encode("ascii"), root)
    return record


def settle_skills(root: Path) -> None:
    """Each skill write a graduation stopped midway (killed, the power lost) left its record
    of: finished when the index holds what it staged (the record goes), else taken back
    while the work tree holds what it wrote: the file it replaced written again, or, where
    there was none, removed with the folders made for it. The work tree and the index are
    then as they were before that graduation, which can be run again."""
    import pygit2

    try:
        names = sorted(os.listdir(inside(root, SKILLS_CACHE)))
    except (FileNotFoundError, NotADirectoryError):
        return
    except OSError as error:
        raise StetError(f"cannot list {SKILLS_CACHE}: {error.strerror or error}") from None
    for name in names:
        record = root / SKILLS_CACHE / name
        # One git tracks came with the repository: nothing it names was done here.
        if name.endswith(SKILL_STAGING) and record_obeyed(root, record):
            with skill_lock(root, name.removesuffix(SKILL_STAGING)):
                try:
                    fields = object_or_none(read_small(record, root, name) or b"") or {}
                except StetError:  # too large: no record a graduation wrote
                    fields = {}
                try:
                    _settle_skill_write(root, fields)
                except pygit2.GitError as error:
                    raise StetError(
                        f"the graduation stopped as it wrote {fields.get('path')} could not be "
                        f"settled: {error}"
                    ) from None
                remove_regular(record, root)
        skill = skill_record_temporary(name)
        if skill is not None and not check_name(skill) and record_obeyed(root, record):
            # A write of a record killed before its rename: under the skill's lock, since
            # the write that made it holds that lock.
            with skill_lock(root, skill), contextlib.suppress(FileNotFoundError):
                if stat.S_ISREG(os.lstat(record).st_mode):  # never a link's target
                    remove_regular(record, root)


def _settle_skill_write(root: Path, fields: dict[str, Any]) -> None:
    """One stopped skill write (`_record_skill_write`'s fields) taken back, unless it was
    staged or its file was written over since."""
    import pygit2

    path, before, created = fields.get("path"), fields.get("before"), fields.get("created")
    if not (
        _skill_path(path)
        and (before is None or _object_id(before))
        and _object_id(fields.get("written"))
        and _object_id(fields.get("staged"))
        and isinstance(created, list)
        and all(folder in _folders_of(path) for folder in created)
    ):
        return  # not a record a graduation wrote: it names nothing to take back
    repository = open_repository(root)
    index = repository.index
    index.read(False)
    if path in index and str(index[path].id) == fields.get("staged"):
        return  # staged: the graduation got past its write
    relative = PurePosixPath(path)
    written = read_regular(inside(root, path), root)
    if written is None or str(pygit2.hash(written)) != fields.get("written"):
        return  # not written yet, or written over since: not the graduation's to take back
    blob = repository.get(before) if isinstance(before, str) else None
    if before is not None and not isinstance(blob, pygit2.Blob):
        return  # what it held is gone from the object database: the file stays
    previous = bytes(blob.data) if isinstance(blob, pygit2.Blob) else None
    _put_back_skill(root, relative, previous, [PurePosixPath(folder) for folder in created])


def _skill_path(value: object) -> TypeGuard[str]:
    """Whether `value` is a path below `.stet/skills/` that stays there."""
    if not isinstance(value, str) or "\0" in value or "\\" in value:
        return False
    parts = value.split("/")
    return (
        parts[:2] == [".stet", "skills"]
        and len(parts) > 2
        and all(part not in ("", ".", "..") for part in parts)
    )


def _folders_of(path: str) -> list[str]:
    """The folders holding `path`, below the work tree's root: those a skill write can make."""
    return [folder.as_posix() for folder in PurePosixPath(path).parents][:-1]


def _object_id(value: object) -> bool:
    return isinstance(value, str) and re.fullmatch(r"[0-9a-f]{40}", value) is not None


def _stage_if_missing(root: Path, relative: PurePosixPath, text: str, config: GateConfig) -> bool:
    """Stage a skill the index does not hold at all (a graduation stopped between writing it
    and staging it), as the gate passes it (the file may have been edited since); one the
    index holds, in any version, is left to the person."""
    with _index_lock(root):
        if relative.as_posix() in open_repository(root).index:
            return False
    stage(root, relative, _gate(text, "SKILL.md", config).encode("utf-8"))
    return True


def stage(root: Path, relative: PurePosixPath, data: bytes) -> None:
    """Put exactly `data` at `relative` in the git index: one blob, one index entry, the
    index written back. Every other entry, staged or not, stays as it was."""
    import pygit2

    with _index_lock(root):
        repository = open_repository(root)
        try:
            blob = repository.create_blob(data)
            entry = pygit2.IndexEntry(relative.as_posix(), blob, pygit2.enums.FileMode.BLOB)
            update_index(repository, lambda index: index.add(entry))
        except pygit2.GitError as error:
            raise StetError(
                f"{relative} could not be staged: {index_error(error, repository)}; "
                "nothing was changed"
            ) from None


def _index_lock(root: Path) -> AbstractContextManager[None]:
    """Stet's writers of the git index, one at a time (libgit2 refuses a second writer while
    the first holds `index.lock`; git itself is not held back by this)."""
    return file_lock(root / INDEX_LOCK, root, "the git index")


def _context(
    sheet: StyleSheet, entry: Entry, config: GateConfig
) -> tuple[Context | None, tuple[_Hidden, ...]]:
    """The anchored code around the entry's current line (none for a lost anchor, only the
    path for a file `.stetignore` names), and what the gate finds in it read in the whole
    file."""
    from stet_lsp.gate.stetignore import StetIgnore

    anchor = entry.anchor
    if anchor is None:
        return None, ()
    root = sheet.target.root
    line = sheet.current_lines([entry]).get(entry.id)
    if StetIgnore.load(root).matches(anchor.path):
        return Context(anchor.path, line or anchor.line, 0, (), omitted=True), ()
    lines = _file_lines(root, anchor.path) if line is not None else None
    if line is None or lines is None:
        return Context(anchor.path, anchor.line, 0, ()), ()
    first, last = max(1, line - CONTEXT_AROUND), min(len(lines), line + CONTEXT_AROUND)
    hidden = _found_in_file(lines, first, last, anchor.path, config)
    return Context(anchor.path, line, first, tuple(lines[first - 1 : last])), hidden


def _found_in_file(
    lines: list[str], first: int, last: int, path: str, config: GateConfig
) -> tuple[_Hidden, ...]:
    """The parts of lines `first` to `last` (1-based) that the gate finds a secret in when it
    reads the whole file, and not when it reads those lines alone (their own findings are
    redacted with the entry's text, one numbering for both)."""
    from stet_lsp.gate import scan_text

    starts = [0]
    for text in lines:
        starts.append(starts[-1] + len(text) + 1)
    window = starts[first - 1], starts[last] - 1
    own = scan_text("\n".join(lines[first - 1 : last]), config=config, path=path, cache=None)
    text, hidden = "\n".join(lines), []
    for finding in scan_text(text, config=config, path=path, cache=None):
        start, end = max(finding.offset, window[0]), min(finding.end_offset, window[1])
        if start >= end or any(
            seen.offset <= start - window[0] and end - window[0] <= seen.end_offset for seen in own
        ):
            continue
        value = text[finding.offset : finding.end_offset]
        for number in range(first, last + 1):
            begin = starts[number - 1]
            cut = max(start, begin) - begin, min(end, begin + len(lines[number - 1])) - begin
            if cut[0] < cut[1]:
                hidden.append(
                    _Hidden(number - first, *cut, finding.rule, value, finding.replacement)
                )
    return tuple(hidden)


def _file_lines(root: Path, path: str) -> list[str] | None:
    """The lines of a text file inside the repository; None for anything else."""
    try:
        data = read_regular(root / path, root)
    except StetError:
        return None
    if data is None or b"\0" in data:
        return None
    lines = split_lines(data.decode("utf-8", "replace"))
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()  # the text after the last line break is no line of the file
    return lines


# -- the working trajectory ---------------------------------------------------------------------


def _record(
    sheet: StyleSheet,
    entry: Entry,
    route: Route,
    body: str,
    edited: bool,
    outcome: SkillOutcome | None,
    moment: datetime,
    config: GateConfig,
) -> Folder:
    """The decision (and, into the trajectory, the note) stored as events of the working
    trajectory, to be composed (`_compose`)."""
    target = sheet.target
    source = SourceRef(
        file=sheet.path.relative_to(target.root).as_posix(), line=max(1, entry.source_line)
    )
    common: dict[str, Any] = {"session": SESSION, "time": format_time(moment), "source": source}
    events: list[Note | Graduation] = []
    if route == "trajectory":
        events.append(
            Note(**common, entry_id=entry.id, entry_kind=entry.kind, text=body, author=entry.author)
        )
    renamed = outcome is not None and outcome.proposed != outcome.name
    events.append(
        Graduation(
            **common,
            entry_id=entry.id,
            entry_kind=entry.kind,
            route=route,
            skill=outcome.name if outcome else None,
            edited=edited,
            proposed_name=outcome.proposed if outcome and renamed else None,
        )
    )
    folder = working_folder(target)
    ensure_stet_gitignore(target.root)
    known = sheet_secrets(sheet, config)
    with working_lock(folder):
        _append(target, folder, events, config, known)
    return folder


def _append(
    target: Target,
    folder: Folder,
    events: list[Note | Graduation],
    config: GateConfig,
    known: Known = (),
) -> None:
    """Add the events to graduation's session, through the gate. The whole session is gated
    again (what it held is redacted already, and the gate is idempotent) so that markers
    are numbered across it; an event already there (the same decision, a graduation done
    again after it stopped halfway) is not added twice."""
    data = read_regular(folder.path / SESSIONS / f"{SESSION}.jsonl", target.root)
    old = [line for line in (data or b"").decode("utf-8", "replace").split("\n") if line]
    new = [without_lone_surrogates(event_json(event)) for event in events]
    joined = "".join(line + "\n" for line in old + new)
    gated = _gate_result(joined, "events.jsonl", config, known)
    lines = [line for line in gated.text.split("\n") if line]
    seen = {_identity(line) for line in lines[: len(old)]}
    kept = lines[: len(old)]
    for line in lines[len(old) :]:
        if _identity(line) not in seen:
            seen.add(_identity(line))
            kept.append(line)
    if len(kept) == len(old):
        return
    record = read_record(folder, SESSION) or {}
    counts = Counter(record.get("redaction", {}))
    counts.update(gated.report.counts())
    text = "".join(line + "\n" for line in kept)
    write_session(target, folder, SESSION, text, _session_record(record, kept, counts, config))


def _session_record(
    previous: dict[str, Any], lines: list[str], counts: Counter[str], config: GateConfig
) -> dict[str, Any]:
    """The record compose reads: its first time places the session among the others."""
    first = previous.get("first_time") or next(
        (event.time for event in map(parse_event, lines) if event.time), None
    )
    record: dict[str, Any] = {
        "format": RECORD_FORMAT,
        "importer": IMPORTER,
        "session": SESSION,
        "first_time": first,
        "events": len(lines),
        "sources": [],
        "redaction": dict(sorted(counts.items())),
        "dropped": {},
        "problems": [],
    }
    gated = _gate(json.dumps(record, ensure_ascii=False), "record.json", config)
    loaded: dict[str, Any] = json.loads(gated)
    return loaded


def _identity(line: str) -> str:
    """An event without its time and step: the same decision recorded twice compares equal."""
    try:
        event = parse_event(line)
    except ValueError:
        return line
    fields = event.model_dump(mode="json", exclude={"time", "step"})
    return json.dumps(fields, sort_keys=True)


# -- the review ---------------------------------------------------------------------------------


def proposals(
    sheet_or_target: StyleSheet | Target,
    now: datetime | None = None,
    *,
    gate_config: GateConfig | None = None,
) -> list[Proposal]:
    """A route for every open entry, by simple rules a person can check at a glance:
    a convention → a skill named from its text; ruled-out, clarification and margin markup →
    the trajectory; a note → the trajectory, or discard when it is older than 14 days."""
    sheet = _sheet_of(sheet_or_target)
    config = _config_of(sheet, gate_config)
    moment = now or utc_now()
    open_entries = [entry for entry in sheet.entries() if entry.status == "open"]
    known = sheet_secrets(sheet, config)
    return [_propose(entry, moment, config, known) for entry in open_entries]


def _propose(entry: Entry, now: datetime, config: GateConfig, known: Known) -> Proposal:
    # the same gate as graduation: the same name
    gated = _gate(entry.text, "SKILL.md", config, known)
    if entry.kind == "convention":
        return Proposal(entry, "skill", propose_name(gated), "a convention is house style", gated)
    if entry.kind == "note" and entry.has_time and now - entry.created > NOTE_MAX_AGE:
        return Proposal(entry, "discard", None, "a note older than 14 days", gated)
    return Proposal(entry, "trajectory", None, "part of the record of this work", gated)


def review(
    sheet_or_target: StyleSheet | Target,
    *,
    now: datetime | None = None,
    gate_config: GateConfig | None = None,
) -> str:
    """The graduation review: Markdown listing every open entry with its proposed route, one
    line each (`- [ ] <id> → <route> — <text>`), by kind. Checking a line's box (and
    changing its route, if wanted) and passing the document to `apply_review` carries it
    out; the document itself changes nothing. It passes the gate (entries may hold secrets
    and the file may be saved anywhere)."""
    sheet = _sheet_of(sheet_or_target)
    config = _config_of(sheet, gate_config)
    return render_review(sheet.target, proposals(sheet, now, gate_config=config), config)


def render_review(
    target: Target, found: list[Proposal], gate_config: GateConfig | None = None
) -> str:
    """The review document of `found` (see `review`); its header names the target, so a
    review can never be applied to another target's sheet."""
    # The name as a JSON string that cannot close the comment it is in.
    label = json.dumps(target.name, ensure_ascii=False)
    label = label.replace("<", "\\u003c").replace(">", "\\u003e")
    header = [
        f"# Graduation review: {target.label}",
        f"<!-- stet-review version={REVIEW_VERSION} kind={target.kind} target={label} -->",
        "",
        "Every open entry of the style sheet, with a proposed route. Check the box of each",
        "line to carry out (`[x]`), change its route if you like (`trajectory`, `skill:NAME`",
        "or `discard`), then run `stet graduate --apply FILE`. Unchecked lines change nothing.",
        'In an editor, the quick fixes do it: "Accept the proposal" on a line, "Accept every',
        'proposal" anywhere.',
        "",
        "Proposed: a convention becomes a skill named from its text; ruled-out approaches,",
        "clarifications and margin markup go into the trajectory; a note goes into the",
        "trajectory, or is discarded when it is older than 14 days.",
    ]
    body: list[str] = []
    for kind in KINDS:
        of_kind = [proposal for proposal in found if proposal.entry.kind == kind]
        if of_kind:
            body += ["", f"## {SECTION_TITLES[kind]}", ""]
            body += [_review_line(proposal) for proposal in of_kind]
    if not found:
        body = ["", "No open entries."]
    config = gate_config if gate_config is not None else _repository_gate(target.root)
    return _gate("\n".join(header + body) + "\n", "review.md", config)


def _review_line(proposal: Proposal) -> str:
    text = shorten(proposal.text, _SUMMARY_CHARS)  # the gated text, cut after the gate
    return f"- [ ] {proposal.entry.id} → {proposal.route_text} — {text}"


def parse_review(text: str) -> tuple[tuple[str, str] | None, list[ReviewLine]]:
    """The target a review document names ((kind, name), None without a header) and its
    entry lines. A line that looks like one (`- [`) but cannot be read is an error with its
    number, so a typo is never taken for "not checked"."""
    header = _HEADER.search(text)
    named = None
    if header is not None:
        # Compared as digits: a person edits the review, and Python reads no number of over
        # 4,300 digits.
        if header["version"].lstrip("0") != str(REVIEW_VERSION):
            raise StetError(
                f"review version {shorten(header['version'], 20)}: this Stet reads version "
                f"{REVIEW_VERSION}"
            )
        try:
            named = (header["kind"], str(json.loads(header["target"])))
        except ValueError:  # an escape JSON has not (`\q`)
            raise StetError(
                f"the review's header names no target it can read: {header['target'][:80]}; "
                "nothing was changed"
            ) from None
    lines = []
    for number, line in enumerate(split_lines(text), 1):
        found = _REVIEW_LINE.match(line)
        if found is None:
            if _CHECKBOX.match(line):
                raise StetError(
                    f"line {number}: not a review line (`- [ ] ID → trajectory|skill:NAME|"
                    f"discard — text`): {line.strip()[:80]!r}; nothing was changed"
                )
            continue
        route = check_route(found["route"].partition(":")[0])
        skill = found["skill"] or None
        lines.append(ReviewLine(number, found["mark"] != " ", found["id"], route, skill))
    return named, lines


def checked_review(
    sheet: StyleSheet,
    document_text: str,
    gate_config: GateConfig | None = None,
    recreate: bool = False,
) -> list[ReviewLine]:
    """The checked lines of a review document, refused as `apply_review` refuses them (no
    header, another target's review, an entry that is not open or named twice, an invalid
    skill name, a skill deleted on purpose unless `recreate`); nothing is written."""
    named, lines = parse_review(_string(document_text, "document"))
    target = sheet.target
    if named is None:
        raise StetError(
            "this review has no header naming its target (`<!-- stet-review version=1 "
            'kind=… target="…" -->`, as `stet graduate --review` writes it); nothing was changed'
        )
    if named[0] != target.kind or not _names(named[1], target.name):
        raise StetError(
            f"this review is for target {named[1]!r}, not {target.name!r}; nothing was changed"
        )
    checked = [line for line in lines if line.checked]
    _check_lines(sheet, checked, _config_of(sheet, gate_config), recreate)
    return checked


def _names(header: str, name: str) -> bool:
    """Whether a review's header names the target `name`: the same name, or the name as the
    gate left it in the review (a branch named with a token, or a random suffix in strict
    mode), each marker standing for what it replaced."""
    if header == name:
        return True
    parts = _REDACTED.split(header)
    if len(parts) == 1:
        return False
    return re.fullmatch(".+".join(re.escape(part) for part in parts), name) is not None


def apply_review(
    sheet_or_target: StyleSheet | Target,
    document_text: str,
    *,
    gate_config: GateConfig | None = None,
    recreate: bool = False,
) -> list[Result]:
    """Carry out the checked lines of a review document, in order; each result is
    `graduate`'s. Every checked line is checked first (the entry exists, is open, is named
    once, its skill name is valid, the skill it extends can be read and was not deleted on
    purpose unless `recreate`, and extended follows the spec): one bad line changes nothing.
    A line that still fails as it is carried out (the disk, a lock) stops the apply; the
    lines before it stay done, as the error says."""
    sheet = _sheet_of(sheet_or_target)
    config = _config_of(sheet, gate_config)
    checked = checked_review(sheet, document_text, config, recreate)
    if checked:
        follow_rename(sheet.target, config, wait=True)
    results: list[Result] = []
    failed: StetError | None = None
    for line in checked:
        try:
            results.append(
                _graduate(
                    sheet, line.entry_id, line.route, line.skill, None, None, config, recreate
                )
            )
        except StetError as error:
            # What only carrying it out finds (a skill past the size limit): the lines before
            # it stay done, and the error says so, not that nothing was changed.
            why = str(error).removesuffix("; nothing was changed")
            done = len(results)
            failed = StetError(
                f"line {line.line}: {why}; the {done} checked line(s) before it were carried "
                "out, it and those after it were not"
            )
            break
    if results:  # once for the whole review
        _compose(sheet.target, config)
    if failed is not None:
        raise failed
    return results


def _check_lines(
    sheet: StyleSheet, lines: list[ReviewLine], config: GateConfig, recreate: bool = False
) -> None:
    entries = {entry.id: entry for entry in sheet.entries()}
    problems = []
    seen: set[str] = set()
    for line in lines:
        entry = entries.get(line.entry_id)
        if entry is None:
            problems.append(f"line {line.line}: {missing_entry(line.entry_id, sheet.target.label)}")
        elif entry.status != "open":
            problems.append(f"line {line.line}: entry {entry.id} is {entry.status}, not open")
        if line.entry_id in seen:
            problems.append(f"line {line.line}: entry {line.entry_id} is checked twice")
        seen.add(line.entry_id)
        if line.skill is not None:
            naming = check_name(line.skill)
            problems += [f"line {line.line}: {problem}" for problem in naming]
            if not naming:  # a skill that cannot be extended fails here, not halfway
                try:
                    _existing_skill(sheet.target.root, skill_path(line.skill), line.skill)
                except StetError as error:
                    why = str(error).removesuffix("; nothing was changed")
                    problems.append(f"line {line.line}: {why}")
    if not problems:  # each skill as the lines before it leave it: past the size limit, say
        problems = _skills_after(sheet, lines, config, recreate)
    if problems:
        raise StetError("; ".join(problems) + "; nothing was changed")


# -- helpers ------------------------------------------------------------------------------------


def _sheet_of(sheet_or_target: StyleSheet | Target) -> StyleSheet:
    if isinstance(sheet_or_target, StyleSheet):
        return sheet_or_target
    if isinstance(sheet_or_target, Target):
        return StyleSheet(sheet_or_target)
    raise StetError(f"expected a style sheet or a target, not {sheet_or_target!r}")


def _string(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise StetError(f"{what} must be a string, not {value!r}")
    return value


def _config_of(sheet: StyleSheet, given: GateConfig | None) -> GateConfig:
    """`given`, else the repository's gate configuration (read before anything is written:
    a malformed file changes nothing)."""
    return given if given is not None else _repository_gate(sheet.target.root)


def _repository_gate(root: Path) -> GateConfig:
    from stet_lsp.gate import load_config

    return load_config(root)


def _gate(text: str, path: str, config: GateConfig | None, known: Known = ()) -> str:
    return _gate_result(text, path, config, known).text


def _gate_parts(
    parts: list[str], path: str, config: GateConfig, existing: str = "", known: Known = ()
) -> list[str]:
    """Texts that will stand side by side, through the gate with one numbering that follows
    the markers `existing` already uses: a value gets the same marker in every part, and a
    value found in one part (or in a `known` text: the style sheet) is redacted in the others
    too."""
    from stet_lsp.gate import scan_text
    from stet_lsp.gate.redact import Numbering, apply_redaction, used_numbers
    from stet_lsp.gate.repeats import Repeats
    from stet_lsp.gate.scan import is_json_path

    clean = [without_lone_surrogates(part) for part in parts]
    highest = used_numbers(existing)
    for part in clean:
        used_numbers(part, highest)
    numbering = Numbering(highest)
    found = [scan_text(part, config=config, path=path, cache=None) for part in clean]
    repeats = Repeats(is_json_path(path))
    for part, findings in zip(clean, found, strict=True):
        repeats.add_findings(part, findings)
        numbering.know(part, findings)
    for text, findings in known:  # after the parts' own: a value they hold keeps their marker
        repeats.add_known(text, findings)
        numbering.know(text, findings)
    return [
        apply_redaction(
            part, findings + repeats.findings(part, findings), path=path, numbering=numbering
        ).text
        for part, findings in zip(clean, found, strict=True)
    ]


def _gate_result(
    text: str, path: str, config: GateConfig | None, known: Known = ()
) -> RedactionResult:
    """The redaction gate, without its result cache: the same text always gives the same
    bytes, and nothing of it is kept in memory. A value a `known` text's findings hold is
    redacted wherever it stands."""
    from stet_lsp.gate import redact_text, scan_text
    from stet_lsp.gate.redact import Numbering, apply_redaction, used_numbers
    from stet_lsp.gate.repeats import Repeats
    from stet_lsp.gate.scan import is_json_path

    clean = without_lone_surrogates(text)
    if not known:
        return redact_text(clean, config=config, path=path, cache=None)
    found = scan_text(clean, config=config, path=path, cache=None)
    numbering = Numbering(used_numbers(clean))
    numbering.know(clean, found)
    repeats = Repeats(is_json_path(path))
    repeats.add_findings(clean, found)
    for other, findings in known:  # after the text's own: a value it holds keeps its marker
        repeats.add_known(other, findings)
        numbering.know(other, findings)
    return apply_redaction(
        clean, found + repeats.findings(clean, found), path=path, numbering=numbering
    )


def sheet_secrets(sheet: StyleSheet, config: GateConfig) -> Known:
    """The sheet's text and the secrets the gate finds in it (`secrets_in_sheet`), for every
    text graduation gates: a value one entry holds as a secret is one in another entry."""
    from stet_lsp.trajectory.importing import secrets_in_sheet

    return secrets_in_sheet(sheet.target, config, sheet.buffer)


REVIEWS = Path(".stet") / "cache" / "graduation"
"""Where the editor's review documents are written (one per target, never committed)."""


def write_review(target: Target, gate_config: GateConfig | None = None) -> tuple[Path, int]:
    """Write the target's review document to REVIEWS/<target-key>.review.md (the style
    sheet is <target-key>.md: the name tells them apart): its path and how many open
    entries it lists."""
    from stet_lsp.core.safefs import atomic_write, make_dirs, remove_regular

    text = review(target, gate_config=gate_config)
    folder = make_dirs(target.root, REVIEWS)
    path = folder / f"{target.key}.review.md"
    atomic_write(path, text.encode("utf-8"), target.root)
    remove_regular(folder / f"{target.key}.md", target.root)  # the name reviews had before
    return path, len(parse_review(text)[1])


def checked_only(text: str, numbers: set[int] | None) -> str:
    """The review with exactly the entry lines `numbers` (1-based; None: all) checked; a
    number that is no entry line is an error (accepting it would do nothing)."""
    _, lines = parse_review(text)
    held = {line.line for line in lines}
    if numbers is not None and (missing := sorted(numbers - held)):
        raise StetError(f"line {missing[0]}: no entry's proposal on it; nothing was changed")
    wanted = held if numbers is None else numbers
    rows = split_lines(text)
    for line in lines:
        row = rows[line.line - 1]
        box = row.index("[")
        rows[line.line - 1] = (
            f"{row[: box + 1]}{'x' if line.line in wanted else ' '}{row[box + 2 :]}"
        )
    return "\n".join(rows)
