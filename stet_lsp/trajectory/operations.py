"""The trajectory operations both front ends run (`stet trajectory …` and the language
server's commands): one operation, one result shape (docs/cli.md, docs/commands.md)."""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from stet_lsp.core.errors import StetError
from stet_lsp.core.operations import JSON_VERSION
from stet_lsp.core.safefs import inside, read_regular
from stet_lsp.core.targets import Target
from stet_lsp.trajectory.importing import ImportResult, Progress, import_transcript

if TYPE_CHECKING:
    import pygit2

    from stet_lsp.gate.config import GateConfig
    from stet_lsp.trajectory.feedback import Verdict
    from stet_lsp.trajectory.sessions import SessionInfo
    from stet_lsp.trajectory.store import Folder


def import_session(
    target: Target,
    *,
    path: Path | None = None,
    session: str | None = None,
    latest: bool = False,
    harness: str | None = None,
    format_name: str | None = None,
    progress: Progress | None = None,
    reached: Path | None = None,
    gate_config: GateConfig | None = None,
) -> ImportResult:
    """Import a transcript file, a session found by id (or prefix), or the newest session,
    through the gate with `gate_config` (else the repository's)."""
    if session == "":
        raise StetError("a session id cannot be empty (`stet trajectory sessions` lists them)")
    if sum(1 for given in (path, session, latest or None) if given) != 1:
        raise StetError("give one of a transcript path, a session id or latest")
    if path is None:
        from stet_lsp.trajectory.sessions import match_session  # a path needs no discovery

        found = sessions_of(target, harness, reached)
        if session is not None:
            if harness and not found:
                raise StetError(_none_found(target, harness))
            path = match_session(found, session).path
        elif found:
            # The one written to last (a session resumed today may have started last week),
            # of those that hold something: a harness creates a session's file before
            # anything is in it (that one fails with its own message when it is the only one).
            path = max([s for s in found if s.size] or found[:1], key=_written_at).path
        else:
            raise StetError(_none_found(target, harness))
    return import_transcript(
        target, path, format_name=format_name, progress=progress, gate_config=gate_config
    )


def _none_found(target: Target, harness: str | None) -> str:
    of = f" of {harness}" if harness else ""
    return f"no agent sessions{of} found for {target.root}: give the transcript's path instead"


def _written_at(session: SessionInfo) -> int:
    try:
        return os.stat(session.path).st_mtime_ns
    except OSError:
        return -1


def document(fields: dict[str, Any]) -> dict[str, Any]:
    """A JSON result as both front ends give it: with the JSON version first."""
    return {"version": JSON_VERSION, **fields}


def marked(verdict: Verdict, entry: dict[str, Any] | None) -> dict[str, Any]:
    """A step's mark as every front end gives it: the verdict as the line written to the
    feedback file holds it (fields without a value left out), and the style-sheet entry
    added for it, or None."""
    import json

    return document({"verdict": json.loads(verdict.line()), "entry": entry})


def sessions_of(
    target: Target, harness: str | None = None, reached: Path | None = None
) -> list[SessionInfo]:
    """The target's sessions. `reached` is the folder the repository was reached through
    (a link to it, say): harnesses name their folders after the path they were started in."""
    from stet_lsp.trajectory.sessions import find_sessions

    root = _spelled_root(reached, target.root) if reached is not None else target.root
    return [s for s in find_sessions(root) if not harness or s.harness == harness]


def _spelled_root(reached: Path, root: Path) -> Path:
    """The repository's root as `reached` spells it: its ancestor that resolves to `root`."""
    absolute = Path(os.path.abspath(reached))
    for candidate in (absolute, *absolute.parents):
        if os.path.realpath(candidate) == str(root):
            return candidate
    return root


def session_rows(
    target: Target, harness: str | None = None, reached: Path | None = None
) -> dict[str, Any]:
    from stet_lsp.gate import load_config, redact_text
    from stet_lsp.trajectory.continuation import committed_sessions, gated_ids
    from stet_lsp.trajectory.importing import imported_sessions
    from stet_lsp.trajectory.renames import follow_rename

    config = load_config(target.root)
    follow_rename(target, config)  # a renamed branch's sessions are imported all the same
    imported = imported_sessions(target)
    committed = committed_sessions(target.root)
    found = sessions_of(target, harness, reached)
    # The committed trajectories name each session as the gate wrote its id.
    ids = [s.session_id for s in found]
    held_as = gated_ids(ids, config) if committed else {id: id for id in ids}

    def gated(prompt: str | None) -> str | None:
        # Shown to a person or a harness as the trajectory list's brief is: through the gate.
        return redact_text(prompt, config=config, path="prompt.txt").text if prompt else prompt

    return document(
        {
            "sessions": [
                {
                    "harness": s.harness,
                    "session": s.session_id,
                    "started": s.started,
                    "first_prompt": gated(s.first_prompt),
                    "size": s.size,
                    "path": str(s.path),
                    "imported": (s.harness, s.session_id) in imported,
                    "committed": committed.get((s.harness, held_as[s.session_id]), []),
                }
                for s in found
            ]
        }
    )


def trajectory_rows(target: Target, gate_config: GateConfig | None = None) -> dict[str, Any]:
    """Every trajectory of the target's repository (the target's own working one after a
    rename of its branch under its new name: `follow_rename`, composing with `gate_config`)."""
    from stet_lsp.core.targets import open_repository
    from stet_lsp.trajectory.renames import follow_rename, orphaned
    from stet_lsp.trajectory.store import folders

    follow_rename(target, gate_config)
    rows: list[dict[str, Any]] = []
    problems: list[dict[str, str]] = []
    repository: pygit2.Repository | None = None
    for folder in folders(target.root):
        try:
            meta = folder.read_meta()
        except (StetError, RecursionError) as error:  # one unreadable trajectory, not all
            message = str(error) if isinstance(error, StetError) else "meta.json: nested too deep"
            problems.append({"path": str(folder.relative), "message": message})
            continue
        left = False  # its branch deleted or its detached HEAD left: `stet capstone --target NAME`
        if folder.working and meta.target.kind in ("branch", "detached"):
            if repository is None:
                repository = open_repository(target.root)
            left = orphaned(repository, target.root, meta.target.kind, meta.target.name)
        rows.append(
            {
                "id": folder.id,
                "working": folder.working,
                "path": str(folder.relative),
                "target": meta.target.name,
                "steps": meta.steps,
                "started": meta.started,
                "ended": meta.ended,
                # meta.json keeps each version of a harness apart; a name is shown once.
                "harnesses": list(dict.fromkeys(h.name for h in meta.harnesses)),
                "brief": meta.brief,
                "orphaned": left,
            }
        )
    return document({"trajectories": rows, "problems": problems})


TRAJECTORY_FILES = {"narration": "narration.md", "events": "events.jsonl", "meta": "meta.json"}


def trajectory_file(
    target: Target,
    wanted: str | None,
    which: str,
    step: int | None = None,
    gate_config: GateConfig | None = None,
    editor_lines: Mapping[Path, Sequence[str]] | None = None,
) -> tuple[Path, int]:
    """A file of the trajectory `wanted` (an id or prefix; the target's working one without),
    `which` one of TRAJECTORY_FILES, and the 0-based line where `step` shows in it (0
    without a step; meta.json, which shows none, is refused one): in the editor's text when
    `editor_lines` (by path) holds the file."""
    from stet_lsp.trajectory.index import NarrationIndex, TrajectoryIndex

    name = TRAJECTORY_FILES.get(which)
    if name is None:
        raise StetError(f"{which!r} is not a trajectory file: {', '.join(TRAJECTORY_FILES)}")
    if step is not None and name == "meta.json":
        raise StetError(
            f"meta.json holds no steps: open it without step {step}, or open the narration "
            "or the events at it"
        )
    folder = trajectory_folder(target, wanted, gate_config)
    path = _file_of(folder, name)
    if step is None:
        return path, 0
    text = _text_of(path, target.root, editor_lines)
    line: int | None
    if name == "narration.md":
        line = NarrationIndex(text).line_of(step)
    else:
        try:
            line = TrajectoryIndex.from_events_text(text).get(step).line
        except KeyError:
            line = None
    if line is None:
        raise StetError(f"no step {step} in {folder.relative / name}")
    return path, line


def trajectory_steps(
    folder: Folder, *, from_step: int = 1, limit: int | None = None
) -> dict[str, Any]:
    """The steps of the trajectory in `folder`, from step `from_step` on, at most `limit` of
    them (all without): `{version, trajectory, total, more, steps}`, `total` the number of
    steps in the trajectory, `more` how many from `from_step` on the limit left out, each step
    `{step, kind, agent, time, summary, abandoned}`."""
    from stet_lsp.trajectory.outline import summary

    events = folder.read_events()
    wanted = [e for e in events if e.step >= from_step]
    listed = wanted if limit is None else wanted[:limit]
    steps = [
        {
            "step": e.step,
            "kind": e.kind,
            "agent": e.agent,
            "time": e.time,
            "summary": summary(e),
            "abandoned": e.abandoned,
        }
        for e in listed
    ]
    more = len(wanted) - len(listed)
    return document({"trajectory": folder.id, "total": len(events), "more": more, "steps": steps})


def trajectory_tree(
    target: Target,
    wanted: str | None,
    gate_config: GateConfig | None = None,
    editor_lines: Mapping[Path, Sequence[str]] | None = None,
) -> dict[str, Any]:
    """The outline of the trajectory `wanted` (an id or prefix; the target's working one
    without) with every step under its session, turn or subagent: `{version, trajectory,
    path, nodes}`, `path` its events.jsonl and `nodes` as outline.tree gives them (of the
    editor's text when `editor_lines`, by path, holds the file)."""
    from stet_lsp.trajectory.index import TrajectoryIndex
    from stet_lsp.trajectory.outline import tree

    folder = trajectory_folder(target, wanted, gate_config)
    path = _file_of(folder, TRAJECTORY_FILES["events"])
    index = TrajectoryIndex.from_events_text(_text_of(path, target.root, editor_lines))
    return document({"trajectory": folder.id, "path": str(path), "nodes": tree(index)})


def _text_of(path: Path, root: Path, editor_lines: Mapping[Path, Sequence[str]] | None) -> str:
    """The file's text as the editor holds it (`editor_lines`, by path), else on disk."""
    lines = editor_lines.get(path) if editor_lines is not None else None
    if lines is not None:
        return "\n".join(lines)
    return _disk_text(path, root)


def _disk_text(path: Path, root: Path) -> str:
    """A trajectory file's text on disk ("" when there is none); events.jsonl's as its
    reader reads it."""
    from stet_lsp.trajectory.eventsfile import read_events_text
    from stet_lsp.trajectory.store import EVENTS

    if path.name == EVENTS:
        return read_events_text(path, root) or ""
    return (read_regular(path, root) or b"").decode("utf-8", "replace")


def trajectory_folder(
    target: Target, wanted: str | None, gate_config: GateConfig | None = None
) -> Folder:
    """The trajectory `wanted` (an id or prefix), else the target's working one (moved to a
    renamed branch's name first, composed with `gate_config`): an error that says what to do
    when the target has none (never imported, or committed by a capstone)."""
    from stet_lsp.trajectory.renames import follow_rename
    from stet_lsp.trajectory.store import META, find_folder, settle_if_free, working_folder

    if wanted is not None:  # an empty id is refused, not taken for the working one
        return find_folder(target.root, wanted)
    follow_rename(target, gate_config)
    folder = working_folder(target)
    settle_if_free(folder)
    if not (folder.path / META).is_file():
        raise StetError(
            f"{target.label} has no working trajectory yet: import an agent session (Stet's "
            "import command in the editor, or stet trajectory import) or graduate an entry "
            "first, or name a committed trajectory"
        )
    return folder


def _file_of(folder: Folder, name: str) -> Path:
    """The trajectory's file `name`: a regular file in its folder (a link anywhere on the way
    or a FIFO in a cloned repository is refused, never followed or opened)."""
    path = inside(folder.root, folder.relative / name)
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        raise StetError(f"{folder.relative / name}: no such file") from None
    if not stat.S_ISREG(mode):
        raise StetError(f"{folder.relative / name}: not a regular file; Stet does not open it")
    return path


def mark_at(
    target: Target,
    path: Path,
    content: str | None,
    line: int,
    verdict: str,
    text: str | None,
    gate_config: GateConfig | None = None,
) -> Verdict:
    """A verdict on the step shown at 0-based `line` of a trajectory's events.jsonl or
    narration.md (`content`: an editor's unsaved text, else the file on disk)."""
    from stet_lsp.trajectory.feedback import mark_step
    from stet_lsp.trajectory.outline import step_at
    from stet_lsp.trajectory.store import EVENTS, NARRATION, folder_of

    if line < 0:
        raise StetError(f"a line is 0 or more, not {line}")
    folder = folder_of(target.root, path)
    if folder is None:
        raise StetError(_not_a_trajectory_file(target.root, path))
    if path.name not in (EVENTS, NARRATION):
        # meta.json and the rest show no steps, and are not read to find that out
        raise StetError(f"{path.name} shows no steps: mark one in {EVENTS} or {NARRATION}")
    shown = content
    if content is None:
        content = _disk_text(path, target.root)
    step = step_at(path.name, content, line)
    if step is None:
        raise StetError(f"no step at line {line + 1} of {path.name}")
    if shown is not None:
        _refuse_renumbered(path, target.root, shown, line, step)
    return mark_step(target.root, folder, step, verdict, text, gate_config=gate_config)


def _not_a_trajectory_file(root: Path, path: Path) -> str:
    """Why `path` names no trajectory: a working trajectory's file left open in an editor
    after a capstone committed it says where it went."""
    from stet_lsp.trajectory.capstone import committed_as
    from stet_lsp.trajectory.store import COMMITTED, WORKING

    if path.parent.parent == root / WORKING and not os.path.lexists(path.parent):
        trajectory = committed_as(root, path.parent.name)
        if trajectory is not None:
            return (
                f"{path.name} is no longer there: a capstone committed its trajectory as "
                f"{trajectory}; mark the step in {COMMITTED / trajectory / path.name}"
            )
        return f"{path.name} is no longer there: its working trajectory is gone"
    return f"{path.name} is not a file of a trajectory"


def _refuse_renumbered(path: Path, root: Path, shown: str, line: int, step: int) -> None:
    """StetError when step `step` on disk is another event than the editor's text shows on
    `line` (an import placed an earlier session before it since the editor read the file).
    An event is told by its session and source in events.jsonl, by the line that opens its
    step in narration.md (its number, kind, and time or content)."""
    from stet_lsp.trajectory.index import NarrationIndex, StepLine, TrajectoryIndex
    from stet_lsp.trajectory.store import EVENTS

    disk = _disk_text(path, root)
    if disk == shown:
        return

    def event(text: str, find: Callable[[TrajectoryIndex], StepLine | None]) -> Any:
        index = TrajectoryIndex.from_events_text(text)
        try:
            entry = find(index)
        except KeyError:  # no such step: marking it says so
            return None
        record = index.record(entry) if entry is not None else None
        return (record.get("session"), record.get("source")) if record is not None else None

    def opening(text: str) -> str | None:
        """The step's opening line without its anchors (a call's line gains its result's
        when the result is imported later)."""
        number = NarrationIndex(text).line_of(step)
        if number is None:
            return None
        return _ANCHORS.sub("", text.split("\n", number + 1)[number], count=1)

    if path.name == EVENTS:
        on_disk = event(disk, lambda index: index.get(step))
        in_editor = event(shown, lambda index: index.at_line(line))
    else:
        on_disk, in_editor = opening(disk), opening(shown)
    if on_disk is not None and on_disk != in_editor:
        raise StetError(
            f"{path.name} changed on disk since the editor read it: step {step} is another "
            f"event now; reload the file, then mark the step on line {line + 1} again"
        )


_ANCHORS = re.compile(r'(?:<a id="step-\d+"></a>)+')


def mark_by_step(
    target: Target,
    wanted: str | None,
    step: int,
    verdict: str,
    text: str | None,
    gate_config: GateConfig | None = None,
) -> Verdict:
    """A verdict on step `step` of the trajectory `wanted` (an id or prefix; the target's
    working one without)."""
    from stet_lsp.trajectory.feedback import mark_step

    folder = trajectory_folder(target, wanted, gate_config)
    return mark_step(target.root, folder, step, verdict, text, gate_config=gate_config)


_CHANGE_FIELDS = (
    "operation",
    "time",
    "session",
    "agent",
    "call_id",
    "message",
    "message_step",
    "message_kind",
)
"""What `line_origins` gives of a step's change (provenance.StepDetail's fields)."""


def line_origins(root: Path, path: Path | str, line: int | None = None) -> dict[str, Any]:
    """Which trajectory step wrote the lines of the file at `path` (absolute, or relative to
    the current folder) as it is on disk: each run of lines one step wrote (1-based,
    inclusive), with the change and the agent's message that led to it; with `line`
    (1-based), only the run holding that line. Every trajectory of the repository counts,
    committed and working (as the editors' provenance lenses and hovers)."""
    from dataclasses import asdict

    from stet_lsp.core.anchors import check_line, read_text, relative_path
    from stet_lsp.core.lines import lines_of
    from stet_lsp.trajectory.provenance import Provenance

    relative = relative_path(root, path)
    text = read_text(root / relative, root)
    count = len(lines_of(text))
    if line is not None:
        check_line(relative, count, line)
    provenance = Provenance.load(root)
    if line is None:
        hunks = provenance.hunks(relative, text)
    else:
        held = provenance.at(relative, text, line - 1)
        hunks = [held] if held is not None else []
    runs: list[dict[str, Any]] = []
    for hunk in hunks:
        detail = provenance.step(hunk.trajectory, hunk.step)
        known = asdict(detail) if detail is not None else {}
        runs.append(
            {
                "first_line": hunk.first_line + 1,
                "last_line": hunk.last_line + 1,
                "trajectory": hunk.trajectory,
                "step": hunk.step,
                "written_as": hunk.path,
                **{name: known.get(name) for name in _CHANGE_FIELDS},
            }
        )
    return document(
        {
            "path": relative,
            "lines": count,
            "runs": runs,
            "unattributed": [asdict(item) for item in provenance.unattributed(relative)],
            "problems": list(provenance.problems),
        }
    )
