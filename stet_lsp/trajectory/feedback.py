"""Human verdicts on a trajectory's steps: `.stet/feedback/<trajectory-id>.jsonl`.

One verdict a line, appended (the file is a log: the same verdict twice is recorded twice):

    {"schema_version":"1.0","trajectory":"…","step":12,"session":"…","kind":"tool_call",
     "source":{"file":"….jsonl","line":40},"part":1,"verdict":"wrong","text":"…","author":"human",
     "time":"2026-03-01T09:00:00Z"}

`step` is the step's number when it was marked; `session`, `source` (the transcript and line
the event came from), `part` (its place among the events made from that one record) and
`kind` find the same step again if the steps are numbered anew (another session imported
before it): see `current_step`. Fields left empty (`text`, `source.pointer`) are omitted.
Every line passes the redaction gate (with the repository's configuration: its allowlist and
`.stet/gate.toml`, or what a front end passes) before it is written, and the file is replaced
atomically under a lock (kept in `.stet/cache/`, which is never committed), so concurrent
writers never tear or lose a line.

Verdicts on a working trajectory are kept under its id, the target's key, until the capstone
commits it: the capstone moves them to the committed id's file (`moved_lines`), holding the
same lock (`feedback_lock`), and commits that file with the trajectory. That working file is
never committed itself: one git tracks came with the repository (a cloned repository can commit
`.stet/feedback/<key>.jsonl` for a branch), and its verdicts are not this clone's, so no step is
marked into it and the capstone refuses to move it (`refuse_tracked_feedback`). Nor is a step
marked of a working trajectory git tracks (`refuse_tracked`): its steps are none of this clone's.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from stet_lsp.core.errors import StetError
from stet_lsp.core.jsonread import object_or_none
from stet_lsp.core.locking import file_lock, held
from stet_lsp.core.model import AUTHORS, Author, Kind, choice, format_time, parse_time, utc_now
from stet_lsp.core.safefs import atomic_write, ensure_stet_gitignore, make_dirs
from stet_lsp.trajectory.events import EventBase, SourceRef, first_error
from stet_lsp.trajectory.jsontext import without_lone_surrogates

if TYPE_CHECKING:
    from stet_lsp.core.sheet import StyleSheet
    from stet_lsp.gate.config import GateConfig
    from stet_lsp.trajectory.store import Folder

FEEDBACK = Path(".stet") / "feedback"
LOCKS = Path(".stet") / "cache" / "feedback"
"""Lock files: beside a path in the cache, so no lock file ever lands in a committed folder."""
FEEDBACK_VERSION = "1.0"
FEEDBACK_LIMIT = 64 * 1024 * 1024
"""The most bytes of a feedback file read (to list its verdicts, or to add one): a verdict
holds at most MAX_TEXT characters, so this is thousands of the longest and hundreds of
thousands of short ones, while a repository could commit a file of hundreds of megabytes
that git compresses to almost nothing."""
MAX_TEXT = 20_000
"""Characters of a verdict's text: a remark on a step, not a document."""

VerdictName = Literal["wrong", "clever", "note"]
VERDICTS: tuple[VerdictName, ...] = get_args(VerdictName)
SHEET_KINDS: dict[VerdictName, Kind] = {"wrong": "markup", "clever": "convention", "note": "note"}
AGENT_SHEET_KINDS: dict[VerdictName, Kind] = {**SHEET_KINDS, "wrong": "ruled-out"}
"""An agent's verdicts: `markup` is a person's margin note, which an agent never writes."""

_Choice = TypeVar("_Choice", bound=str)


class Verdict(BaseModel):
    """One human (or agent) verdict on one step of a trajectory."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: str = FEEDBACK_VERSION
    trajectory: str = Field(description="the trajectory's id")
    step: int = Field(ge=1, description="the step's number when it was marked")
    session: str = Field(description="the agent session the step belongs to")
    kind: str = Field(description="the step's event kind")
    source: SourceRef = Field(description="where the step's event came from")
    part: int = Field(
        0, ge=0, description="the event's place (from 0) among those of its source record"
    )
    verdict: VerdictName
    text: str | None = Field(None, description="optional for wrong and clever; a note's text")
    author: Author = "human"
    time: str = Field(description="when it was marked, UTC, ISO 8601")

    @field_validator("time")
    @classmethod
    def _iso_time(cls, value: str) -> str:
        parse_time(value)  # a ValueError becomes a validation error
        return value

    @model_validator(mode="after")
    def _note_has_text(self) -> Verdict:
        if self.verdict == "note" and not self.text:
            raise ValueError("a note needs a text")
        return self

    def line(self) -> str:
        """The verdict as one line of the feedback file (without its newline)."""
        fields = self.model_dump(mode="json", exclude_none=True)
        return json.dumps(fields, ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True)
class Skipped:
    """A line of a feedback file that is not a verdict."""

    line: int
    message: str


@dataclass(frozen=True)
class Feedback:
    verdicts: list[Verdict] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)


def feedback_path(trajectory_id: str) -> Path:
    """`.stet/feedback/<trajectory-id>.jsonl`, relative to the repository's root."""
    return FEEDBACK / f"{_checked_id(trajectory_id)}.jsonl"


def feedback_lock(root: Path, trajectory_id: str) -> AbstractContextManager[None]:
    """The lock every writer of a trajectory's feedback file holds (marking a step, the
    capstone moving a working trajectory's verdicts, a rename moving them)."""
    name = feedback_path(trajectory_id).name
    return file_lock(root / LOCKS / name, root, "the feedback file")


def feedback_held(root: Path, trajectory_id: str, timeout: float) -> AbstractContextManager[bool]:
    """`feedback_lock`'s lock, waited for at most `timeout` seconds: whether it was taken."""
    name = feedback_path(trajectory_id).name
    return held(root / LOCKS / f"{name}.lock", root, timeout)


def tracked_feedback(root: Path, trajectory_id: str) -> str | None:
    """The feedback file of `trajectory_id` (a working trajectory's: the target's key) when
    git's index holds it, else None."""
    from stet_lsp.core.gitindex import index_holds

    relative = feedback_path(trajectory_id).as_posix()
    return relative if index_holds(root, relative) else None


def tracked_feedback_message(relative: str) -> str:
    return (
        f"{relative} is tracked by git: the verdicts on a working trajectory are never "
        "committed as they are, and a file that came with the repository is not yours. "
        f"Untrack it (git rm --cached {relative}), delete it unless the verdicts in it are "
        "your own, and try again; nothing was changed"
    )


def refuse_tracked_feedback(root: Path, trajectory_id: str) -> None:
    """StetError when git tracks the working trajectory's feedback file (see the module)."""
    tracked = tracked_feedback(root, trajectory_id)
    if tracked is not None:
        raise StetError(tracked_feedback_message(tracked))


def merged_lines(held: bytes, data: bytes, old_id: str, new_id: str) -> list[str]:
    """The lines of the feedback file `held` (empty ones left out), then those of `data`
    moved from `old_id` to `new_id` (`moved_lines`) that it does not hold already."""
    existing = [line for line in held.decode("utf-8", "replace").split("\n") if line.strip()]
    return existing + [line for line in moved_lines(data, old_id, new_id) if line not in existing]


def moved_lines(data: bytes, old_id: str, new_id: str) -> list[str]:
    """The lines of a feedback file (empty ones left out), each verdict of trajectory
    `old_id` naming `new_id` instead: a JSON object whose `trajectory` is `old_id` gets the new
    id, written as `Verdict.line` writes (keys in their order, no spaces); any other line is
    kept as it is."""
    _checked_id(new_id)
    moved: list[str] = []
    for line in data.decode("utf-8", "replace").split("\n"):
        if not line.strip():
            continue
        fields = object_or_none(line)
        if fields is not None and fields.get("trajectory") == old_id:
            fields["trajectory"] = new_id
            text = json.dumps(fields, ensure_ascii=False, separators=(",", ":"))
            line = without_lone_surrogates(text)
        moved.append(line)
    return moved


def move_feedback(root: Path, old_id: str, new_id: str) -> bool:
    """The verdicts on trajectory `old_id` moved to `new_id`'s file (a working trajectory that
    moved to a renamed branch's key): each naming `new_id`, after the lines that file holds
    (none twice), as they were gated when written; the old file removed. Call it holding
    both files' locks (`feedback_held`). Nothing moves when git tracks either file (neither
    is this clone's to change). Whether anything moved."""
    from stet_lsp.core.safefs import inside, remove_regular
    from stet_lsp.trajectory.store import read_small

    source, destination = feedback_path(old_id), feedback_path(new_id)
    if not os.path.lexists(inside(root, source)):
        return False
    if tracked_feedback(root, old_id) or tracked_feedback(root, new_id):
        return False
    data = read_small(root / source, root, source, FEEDBACK_LIMIT)
    if data is None:
        return False
    existing = read_small(root / destination, root, destination, FEEDBACK_LIMIT) or b""
    lines = merged_lines(existing, data, old_id, new_id)
    atomic_write(root / destination, "".join(line + "\n" for line in lines).encode(), root)
    remove_regular(root / source, root)
    return True


def mark_step(
    root: Path,
    folder: Folder,
    step: int,
    verdict: str,
    text: str | None = None,
    author: str = "human",
    now: datetime | None = None,
    gate_config: GateConfig | None = None,
) -> Verdict:
    """Record a verdict on `step` of the trajectory in `folder`: checked, through the gate
    (`gate_config`, else the repository's), appended to the trajectory's feedback file.
    Returns the verdict as written (redacted)."""
    from stet_lsp.gate import load_config
    from stet_lsp.trajectory.store import refuse_tracked

    if folder.working:
        refuse_tracked(folder)
        refuse_tracked_feedback(root, folder.id)
    config = gate_config if gate_config is not None else load_config(root)
    name = _checked(verdict, VERDICTS, "verdict")
    who = _checked(author, AUTHORS, "author")
    body = _checked_text(name, text)
    event, part = _find_step(folder, step)
    marked = Verdict(
        trajectory=folder.id,
        step=event.step,
        session=event.session,
        kind=event.kind,
        source=event.source,
        part=part,
        verdict=name,
        text=body,
        author=who,
        time=format_time(now or utc_now()),
    )
    gated = _gated(marked, config)
    _append(root, folder, gated.line())
    return gated


def read_feedback(root: Path, trajectory_id: str) -> Feedback:
    """Every verdict of a trajectory, in the order recorded, and the lines that are not one
    (StetError when the file is over FEEDBACK_LIMIT)."""
    from stet_lsp.trajectory.store import read_small

    relative = feedback_path(trajectory_id)
    data = read_small(root / relative, root, relative, FEEDBACK_LIMIT)
    if data is None:
        return Feedback()
    verdicts: list[Verdict] = []
    skipped: list[Skipped] = []
    for number, line in enumerate(data.decode("utf-8", "replace").split("\n"), 1):
        if not line.strip():
            continue
        try:
            verdicts.append(Verdict.model_validate_json(line))
        except ValidationError as error:
            skipped.append(Skipped(number, first_error(error, line)))
    return Feedback(verdicts, skipped)


def read_verdicts(root: Path, trajectory_id: str) -> list[Verdict]:
    """The verdicts of a trajectory (read_feedback reports the lines skipped)."""
    return read_feedback(root, trajectory_id).verdicts


def current_step(folder: Folder, verdict: Verdict) -> int | None:
    """The number the verdict's step has in the trajectory now (None: it is gone)."""
    wanted = (verdict.session, verdict.source, verdict.part)
    for event, part in _with_parts(folder):
        if (event.session, event.source, part) == wanted:
            return event.step if event.kind == verdict.kind else None
    return None


def sheet_text(verdict: Verdict) -> str:
    """The style-sheet entry's text for a verdict: which step, what was said."""
    where = f"step {verdict.step} ({verdict.kind}) of trajectory {verdict.trajectory}"
    if verdict.verdict == "note":
        return f"Note on {where}: {verdict.text}"
    said = f": {verdict.text}" if verdict.text else "."
    return f"{where[0].upper()}{where[1:]} was {verdict.verdict}{said}"


def to_sheet(sheet: StyleSheet, verdict: Verdict) -> dict[str, Any]:
    """Add the verdict to `sheet` (a target's style sheet, or the server's view of an open
    one), so the next agent run sees it; the new entry as `stet note add --json` shows it."""
    from stet_lsp.core.operations import add_entry

    kinds = AGENT_SHEET_KINDS if verdict.author == "agent" else SHEET_KINDS
    kind = kinds[verdict.verdict]
    added = add_entry(sheet, sheet_text(verdict), kind=kind, author=verdict.author)
    entry: dict[str, Any] = added["entry"]
    return entry


# -- helpers ----------------------------------------------------------------------------


def _checked_id(trajectory_id: str) -> str:
    bad = not trajectory_id or trajectory_id in {".", ".."} or "\0" in trajectory_id
    if bad or "/" in trajectory_id or "\\" in trajectory_id:
        raise StetError(f"{trajectory_id!r} is not a trajectory id")
    return trajectory_id


def _checked(value: object, allowed: tuple[_Choice, ...], what: str) -> _Choice:
    if not isinstance(value, str):
        raise StetError(f"{what} must be a string, not {value!r}")
    try:
        return choice(value, allowed, what)
    except ValueError as error:
        raise StetError(str(error)) from None


def _checked_text(verdict: VerdictName, text: str | None) -> str | None:
    if text is not None and not isinstance(text, str):
        raise StetError(f"text must be a string, not {text!r}")
    body = without_lone_surrogates(text or "").strip()
    if verdict == "note" and not body:
        raise StetError("a note needs a text")
    if len(body) > MAX_TEXT:
        raise StetError(f"the text has {len(body)} characters; a verdict takes {MAX_TEXT} at most")
    return body or None


def _find_step(folder: Folder, step: int) -> tuple[EventBase, int]:
    """The event of `step` and its part (see Verdict.part)."""
    if isinstance(step, bool) or not isinstance(step, int) or step < 1:
        raise StetError(f"a step is a whole number from 1, not {step!r}")
    last = 0
    for event, part in _with_parts(folder):
        if event.step == step:
            return event, part
        last = max(last, event.step)
    steps = f"its steps are 1 to {last}" if last else "it has no steps"
    raise StetError(f"trajectory {folder.id} has no step {step} ({steps}); nothing was written")


def _with_parts(folder: Folder) -> Iterator[tuple[EventBase, int]]:
    """Each event with its place among the events made from the same source record."""
    seen: Counter[tuple[str, SourceRef]] = Counter()
    for _, event in folder.iter_events():
        key = (event.session, event.source)
        yield event, seen[key]
        seen[key] += 1


def _gated(verdict: Verdict, config: GateConfig) -> Verdict:
    """The verdict after the redaction gate (secrets replaced, home paths as `~`)."""
    from stet_lsp.gate import redact_text

    line = verdict.line()
    result = redact_text(line, config=config, path="feedback.jsonl", json_mode=True, cache=None)
    try:
        return Verdict.model_validate_json(result.text)
    except ValidationError as error:  # the gate keeps JSON valid; this guards the model
        raise StetError(f"the redacted verdict is not valid: {first_error(error)}") from None


def _append(root: Path, trajectory: Folder, line: str) -> None:
    """Add `line` to the trajectory's feedback file under the lock: read, append, replace
    atomically; refused when the trajectory is gone by the time the lock is taken (a
    capstone, which holds the lock, committed the working one meanwhile: its feedback file
    would be left to the next working trajectory)."""
    from stet_lsp.trajectory.store import EVENTS, read_small

    relative = feedback_path(trajectory.id)
    folder = make_dirs(root, relative.parent)
    ensure_stet_gitignore(root)
    path = folder / relative.name
    with feedback_lock(root, relative.stem):
        if not os.path.lexists(trajectory.path / EVENTS):
            raise StetError(
                f"trajectory {trajectory.id} was committed or removed while the verdict waited "
                "(nothing was written): mark the step in the trajectory it became "
                "(stet trajectory list)"
            )
        current = read_small(path, root, relative, FEEDBACK_LIMIT) or b""
        if current and not current.endswith(b"\n"):
            current += b"\n"  # a hand edit without a final newline keeps its last line
        atomic_write(path, current + line.encode("utf-8") + b"\n", root)
