"""Following a trajectory's lines through its file changes: which step wrote each line of a
file as it is after all of them. The changes are followed in the order they were made, which
is not the trajectory's when a session went on after a later one started.

A change's anchored diff (hunk line numbers that are the file's own) moves the lines
attributed so far and adds its own. The diff is only right about the lines if the file was as
the trajectory left it: a person may have edited the file between two changes (or between two
imported sessions). Where a change says what the file held before it (its recorded content
with its diff taken back, or what the trajectory's last change left when the diff agrees with
it), the lines attributed so far are first aligned with that text, so that lines the person
inserted, removed or rewrote move them or drop out. Where it does not say, a diff whose lines
disagree with the lines attributed so far leaves those lines out (listed with a reason) rather
than place them where they no longer are. An unanchored change (an edit recorded as its text
only) is placed where its search text is in the text the trajectory left, when it is
there once; else it has no position: it is left out, and so are the lines it may have
moved. A rename takes a file's lines to its new path; a folder's (a shell's `mv`), those of
every file under it. A move out of the repository (to a path the import left absolute) ends
the attribution of what moved, and a move from outside onto a path ends the attribution of
what was there.
"""

from __future__ import annotations

import heapq
import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from stet_lsp.core.lines import lines_of
from stet_lsp.gate.stetignore import OMITTED
from stet_lsp.trajectory.alignment import ABSENT, PLACEHOLDER, align
from stet_lsp.trajectory.events import EventBase, FileChange
from stet_lsp.trajectory.paths import repository_path

# At most ten digits a number: a longer one is no line of a file, and int() refuses one of
# thousands of digits.
_HUNK_HEADER = re.compile(r"@@ -(\d{1,10})(?:,(\d{1,10}))? \+(\d{1,10})(?:,(\d{1,10}))? @@")

LINE_LIMIT = 1_000_000
"""The last line a change's diff may place lines at. Placing lines takes room for every line
above them, so a diff (in a trajectory a repository commits) placing lines further down is
left out: at line 100,000,000 it would take gigabytes."""


@dataclass(frozen=True)
class Hunk:
    """One `@@` hunk of a unified diff: the first old and new line it covers and its lines as
    (" ", "-" or "+", text without the newline)."""

    old_first: int
    new_first: int
    lines: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class LineOrigin:
    """Who wrote a line: the trajectory step of the change, and the line's text."""

    step: int
    text: str


@dataclass(frozen=True)
class LeftOut:
    """A change whose lines have no position, or lines a change left without one."""

    path: str
    step: int
    reason: str
    lines: int


def parse_hunks(diff: str) -> list[Hunk]:
    """The hunks of a one-file unified diff, in order. Hunk bodies are read by the counts in
    their headers, so a removed line that starts with `--` is not taken for a header; a
    header with no count means one line; an empty side (`-5,0`) starts after its line."""
    hunks: list[Hunk] = []
    lines = lines_of(diff)
    index = 0
    while index < len(lines):
        match = _HUNK_HEADER.match(lines[index])
        index += 1
        if not match:
            continue
        old_start, old_count, new_start, new_count = match.groups()
        old_left = 1 if old_count is None else int(old_count)
        new_left = 1 if new_count is None else int(new_count)
        body: list[tuple[str, str]] = []
        last_lines: list[int] = []  # the lines `\ No newline at end of file` follows
        while index < len(lines) and (old_left > 0 or new_left > 0):
            line = lines[index]
            op, text = (line[:1], line[1:]) if line else (" ", "")
            if op == "\\":
                last_lines.append(len(body) - 1)
                index += 1
                continue
            if op not in " -+":
                break
            body.append((op, text))
            old_left -= op != "+"
            new_left -= op != "-"
            index += 1
        if index < len(lines) and lines[index].startswith("\\"):  # after the hunk's last line
            last_lines.append(len(body) - 1)
        body = _break_only(body, last_lines)
        old_first = int(old_start) + (not any(op != "+" for op, _ in body))
        new_first = int(new_start) + (not any(op != "-" for op, _ in body))
        hunks.append(Hunk(old_first, new_first, tuple(body)))
    return hunks


def _break_only(body: list[tuple[str, str]], last_lines: list[int]) -> list[tuple[str, str]]:
    """The hunk's lines with a file's last line that only gained or lost its line break made
    one context line: its removed and added copies are the same line, which the change did
    not write. The lines of either side between the two copies stay on their side of it."""
    for index in last_lines:
        op, text = body[index] if index >= 0 else (" ", "")
        if op == " ":
            continue
        other = "+" if op == "-" else "-"
        span = range(index + 1, len(body)) if op == "-" else range(index - 1, -1, -1)
        copy = next((j for j in span if body[j][0] == " " or body[j] == (other, text)), None)
        if copy is None or body[copy][0] == " ":
            continue
        first, last = sorted((index, copy))
        between = body[first + 1 : last]
        added = [line for line in between if line[0] == "+"]
        removed = [line for line in between if line[0] == "-"]
        return [*body[:first], *added, (" ", text), *removed, *body[last + 1 :]]
    return body


def apply_hunks(
    lines: dict[int, LineOrigin], hunks: Sequence[Hunk], step: int
) -> dict[int, LineOrigin]:
    """The lines followed after a change: kept lines move by the lines inserted or removed
    above them, removed lines drop out, the lines the change added are the step's, and its
    context lines not followed yet are followed as step 0."""
    moved: dict[int, int | None] = {}
    added: dict[int, LineOrigin] = {}
    context: dict[int, LineOrigin] = {}
    after_hunk: list[int] = []  # the first old line after each hunk
    shift_after: list[int] = []  # how far the lines after each hunk move
    for hunk in sorted(hunks, key=lambda hunk: hunk.old_first):
        old, new = hunk.old_first, hunk.new_first
        for op, text in hunk.lines:
            if op == "+":
                added[new] = LineOrigin(step, text)
                new += 1
                continue
            moved[old] = new if op == " " else None
            if op == " ":
                context[new] = LineOrigin(0, text)
            old += 1
            new += op == " "
        after_hunk.append(old)
        shift_after.append(new - old)
    result: dict[int, LineOrigin] = {}
    for line, origin in lines.items():
        if line in moved:
            target = moved[line]
            if target is None:
                continue
        else:
            index = bisect_right(after_hunk, line) - 1
            target = line + (shift_after[index] if index >= 0 else 0)
        result[target] = origin
    for line, origin in context.items():
        result.setdefault(line, origin)
    result.update(added)
    return result


def patched(lines: Sequence[str], hunks: Sequence[Hunk]) -> list[str] | None:
    """`lines` with the hunks applied, or None when their context or removed lines do not
    agree with `lines`."""
    result: list[str] = []
    index = 0
    for hunk in sorted(hunks, key=lambda hunk: hunk.old_first):
        start = hunk.old_first - 1
        if start < index or start > len(lines):
            return None
        result.extend(lines[index:start])
        index = start
        for op, text in hunk.lines:
            if op == "+":
                result.append(text)
                continue
            if index >= len(lines) or lines[index] != text:
                return None
            if op == " ":
                result.append(text)
            index += 1
    result.extend(lines[index:])
    return result


def reversed_hunks(hunks: Sequence[Hunk]) -> list[Hunk]:
    """The hunks that take the file back from after the change to before it."""
    swap = {"+": "-", "-": "+"}
    return [
        Hunk(hunk.new_first, hunk.old_first, tuple((swap.get(op, op), t) for op, t in hunk.lines))
        for hunk in hunks
    ]


@dataclass
class _Slots:
    """A file's lines followed, kept while every one agrees with the file's whole text as
    the trajectory left it (`text`, which a change edits in place): each line's origin (None
    when not followed) at its index, and where it came in the order of the dict the lines
    would be held in (which a malformed diff's lines, colliding, depend on), so that a plain
    change costs what its hunks hold, not what the file does."""

    text: list[str]
    origins: list[LineOrigin | None]
    order: list[int]
    next: int
    size: int

    @classmethod
    def of(cls, lines: dict[int, LineOrigin], text: list[str]) -> _Slots | None:
        """The lines in slots beside a copy of `text`, or None when one is not its line."""
        origins: list[LineOrigin | None] = [None] * len(text)
        order = [0] * len(text)
        for seen, (number, origin) in enumerate(lines.items()):
            if not 0 < number <= len(text) or text[number - 1] != origin.text:
                return None
            origins[number - 1], order[number - 1] = origin, seen
        return cls(list(text), origins, order, len(lines), len(lines))

    def __bool__(self) -> bool:
        return self.size > 0

    def numbered(self) -> dict[int, LineOrigin]:
        """The lines by number, in the order `apply_hunks` would have left them."""
        held = [index for index, origin in enumerate(self.origins) if origin is not None]
        held.sort(key=self.order.__getitem__)
        return {index + 1: origin for index in held if (origin := self.origins[index])}

    def apply(self, hunks: Sequence[Hunk], step: int) -> None:
        """`apply_hunks` and `patched` for hunks in order, apart, each where the hunks above
        it left its lines, whose read lines agree with the text (`_in_place`)."""
        contexts = sum(op == " " for hunk in hunks for op, _ in hunk.lines)
        fresh, added = self.next, self.next + contexts
        self.next = added + sum(op == "+" for hunk in hunks for op, _ in hunk.lines)
        pieces = []
        for hunk in hunks:
            start = index = hunk.old_first - 1
            origins: list[LineOrigin | None] = []
            order: list[int] = []
            text: list[str] = []
            for op, line in hunk.lines:
                if op == "-":
                    self.size -= self.origins[index] is not None
                    index += 1
                    continue
                if op == "+":
                    origins.append(LineOrigin(step, line))
                    order.append(added)
                    added += 1
                    self.size += 1
                else:
                    origin = self.origins[index]
                    if origin is None:
                        origin, place = LineOrigin(0, line), fresh
                        fresh += 1
                        self.size += 1
                    else:
                        place = self.order[index]
                    origins.append(origin)
                    order.append(place)
                    index += 1
                text.append(line)
            pieces.append((start, index, origins, order, text))
        for start, end, origins, order, text in reversed(pieces):
            self.origins[start:end] = origins
            self.order[start:end] = order
            self.text[start:end] = text


def _in_place(hunks: Sequence[Hunk], text: list[str]) -> list[Hunk] | None:
    """The hunks in order when `_Slots.apply` can apply them to `text`: `patched` would, and
    each starts where the hunks above it moved its first line (as a diff of the file's own
    places does); else None."""
    ordered = sorted(hunks, key=lambda hunk: hunk.old_first)
    index = shift = 0
    for hunk in ordered:
        start = hunk.old_first - 1
        if start < index or start > len(text) or hunk.new_first - hunk.old_first != shift:
            return None
        index = start
        for op, line in hunk.lines:
            if op == "+":
                shift += 1
                continue
            if index >= len(text) or text[index] != line:
                return None
            shift -= op == "-"
            index += 1
    return ordered


def _advanced(
    lines: dict[int, LineOrigin] | _Slots,
    known: list[str],
    after: list[str] | None,
    hunks: Sequence[Hunk],
    step: int,
) -> _Slots | None:
    """The lines after an anchored change, in time proportional to its hunks, where the
    general way (`_found`, `_aligned`, `apply_hunks`, `patched`) gives the same lines and
    text at a cost proportional to the file: the change found the text the trajectory left
    (its recorded result with its diff taken back is that text, or it records none), the
    lines followed agree with that text, and its hunks apply in place (`_in_place`)."""
    ordered = _in_place(hunks, known)
    if ordered is None:
        return None
    if after is not None and patched(after, reversed_hunks(hunks)) != known:
        return None
    if isinstance(lines, _Slots):
        slots = lines if lines.text is known else None
    else:
        slots = _Slots.of(lines, known)
    if slots is not None:
        slots.apply(ordered, step)
    return slots


def _numbered(lines: dict[int, LineOrigin] | _Slots) -> dict[int, LineOrigin]:
    return lines.numbered() if isinstance(lines, _Slots) else lines


@dataclass
class Attribution:
    """Each file's lines followed (1-based, in the file after all the changes followed): the
    lines a step wrote and, as step 0, the others whose text a diff showed (its context);
    what could not be placed; and each file's whole text after its last change where that is
    known (recorded, or an earlier known text with anchored diffs applied): a string until
    its lines are needed."""

    _followed: dict[str, dict[int, LineOrigin] | _Slots] = field(default_factory=dict)
    left_out: list[LeftOut] = field(default_factory=list)
    texts: dict[str, str | list[str]] = field(default_factory=dict)
    earlier: Callable[[FileChange, int], list[str] | None] | None = None
    """The text a file the trajectory has not changed yet held before a change to it (and its
    step), from elsewhere (git), to place an unanchored change in."""
    touched: set[str] = field(default_factory=set)
    """The paths a change followed so far changed."""

    @property
    def followed(self) -> dict[str, dict[int, LineOrigin]]:
        """Each file's lines followed, by line number: as they are now (a copy, which the
        changes followed after do not change)."""
        for path, lines in self._followed.items():
            if isinstance(lines, _Slots):
                self._followed[path] = lines.numbered()
        return dict(self._followed)  # type: ignore[arg-type]  # every value is a dict now

    @property
    def files(self) -> dict[str, dict[int, LineOrigin]]:
        """Each file's attributed lines: those a step wrote."""
        written = (
            (path, {n: origin for n, origin in lines.items() if origin.step})
            for path, lines in self.followed.items()
        )
        return {path: lines for path, lines in written if lines}

    def text_lines(self, path: str) -> list[str] | None:
        lines = self._followed.get(path)
        if isinstance(lines, _Slots):  # its text is changed in place by the changes followed
            self._followed[path] = lines.numbered()
        text = self.texts.get(path)
        if isinstance(text, str):
            text = self.texts[path] = lines_of(text)
        return text

    def follow(self, change: FileChange, step: int, content: str | None = None) -> None:
        """Follows one change (`content`: the file after it, when not in the change)."""
        files, texts = self._followed, self.texts
        first_touch = change.path not in self.touched and change.old_path not in self.touched
        self.touched.update(path for path in (change.path, change.old_path) if path)
        if change.operation == "rename" and change.old_path:
            if _outside(change.path):  # moved out of the repository: gone from it
                self._forget(change.old_path)
                return
            if _outside(change.old_path):  # from outside onto `path`: not what the run wrote
                self._forget(change.path)
                return
            if self._moved_folder(change):
                return
        if change.operation == "delete":
            self._forget(change.path)
            return
        lines = files.pop(change.path, {})
        known = texts.pop(change.path, None)
        if change.operation == "rename" and change.old_path not in (None, "", change.path):
            lines = files.pop(change.old_path, {})
            known = texts.pop(change.old_path, None)
        if change.diff == OMITTED:  # a .stetignore'd file's change: what it was is not kept
            self.left_out.append(LeftOut(change.path, step, "ignored (.stetignore)", change.added))
            self._leave_out(change.path, lines, f"moved by the ignored change of step {step}")
            return
        after: str | list[str] | None = change.content if content is None else content
        hunks = parse_hunks(change.diff)
        if any(max(h.old_first, h.new_first) + len(h.lines) > LINE_LIMIT for h in hunks):
            beyond = f"placed past line {LINE_LIMIT:,}"
            self.left_out.append(LeftOut(change.path, step, beyond, change.added))
            self._leave_out(change.path, lines, f"moved by the change of step {step}, {beyond}")
            return
        anchored = change.anchored
        if hunks and not anchored and change.operation != "create":
            located = _located(hunks, _split(known))
            if located is None and known is None and first_touch and self.earlier is not None:
                before = self.earlier(change, step)
                located = _located(hunks, before)
                known = before if located is not None else None
            if located is not None:
                hunks, anchored = located, True
        if (
            not change.diff
            and not anchored
            and after is not None
            and change.operation in ("create", "modify")
        ):
            # The file after the change, and no diff recorded (a write whose result the harness
            # did not record; an anchored empty diff is a change that changed nothing): its
            # diff from the text the trajectory left, else its place is unknown.
            before = [] if change.operation == "create" else _split(known)
            if before is None:
                reason = "no diff, and the file before it is not known"
                self.left_out.append(LeftOut(change.path, step, reason, len(_split(after) or ())))
            else:
                hunks, anchored = _whole_diff(change.path, before, _split(after) or []), True
        if change.operation == "create" and not any(op != "+" for h in hunks for op, _ in h.lines):
            # A new file: its lines are where the diff says, whatever the importer could anchor.
            lines = apply_hunks({}, hunks, step)
            if after is None and anchored:
                after = patched([], hunks)
        elif hunks and not anchored:
            self.left_out.append(LeftOut(change.path, step, "unanchored", change.added))
            self._leave_out(change.path, lines, f"moved by the unanchored change of step {step}")
            lines = {}
        else:  # anchored, or no hunks (a rename, the same text written again)
            known, after = _split(known), _split(after)
            slots = _advanced(lines, known, after, hunks, step) if known and lines else None
            if slots is not None:
                if slots.size:
                    files[change.path] = slots
                texts[change.path] = slots.text
                return
            lines = _numbered(lines)
            found = _found(known, after, hunks) if lines or after is None else None
            if found is not None:
                lines = _aligned(lines, known, found)
            elif lines and (known is not None or _disagrees(lines, hunks)):
                # The diff does not apply to the text the trajectory left, or to the lines
                # followed: the file was edited outside it, and where is not known.
                reason = f"moved by an edit made outside the trajectory before step {step}"
                self._leave_out(change.path, lines, reason)
                lines = {}
            lines = apply_hunks(lines, hunks, step)
            if after is None and found is not None:
                after = patched(found, hunks)
        if lines:
            files[change.path] = lines
        if after is not None:
            texts[change.path] = after

    def _moved_folder(self, change: FileChange) -> bool:
        """A rename of a folder (`mv src lib` in a shell): every file followed under it
        moves with it. False when the old path is a file followed, or holds none."""
        old = change.old_path or ""
        if old in self._followed or old in self.texts:
            return False
        prefix, new = old.rstrip("/") + "/", change.path.rstrip("/") + "/"
        inside = sorted(path for path in {*self._followed, *self.texts} if path.startswith(prefix))
        for path in inside:
            moved = new + path[len(prefix) :]
            if path in self._followed:
                self._followed[moved] = self._followed.pop(path)
            if path in self.texts:
                self.texts[moved] = self.texts.pop(path)
        return bool(inside)

    def _forget(self, path: str) -> None:
        """The file at `path` is gone, or a folder there with every file under it."""
        prefix = path.rstrip("/") + "/"
        gone = [name for name in {*self._followed, *self.texts} if name.startswith(prefix)]
        for name in [path, *gone]:
            self._followed.pop(name, None)
            self.texts.pop(name, None)

    def _leave_out(self, path: str, lines: dict[int, LineOrigin] | _Slots, reason: str) -> None:
        steps = Counter(origin.step for origin in _numbered(lines).values() if origin.step)
        for earlier, count in sorted(steps.items()):
            self.left_out.append(LeftOut(path, earlier, reason, count))


def line_attribution(
    events: Sequence[EventBase],
    earlier: Callable[[FileChange, int], list[str] | None] | None = None,
) -> Attribution:
    """Who wrote which line of each file, following every file change in the order they were
    made (`made_order`). A change's step is its event's `step` (its 1-based position in
    `events` before the trajectory is stored). `earlier`: as `Attribution.earlier`."""
    changes = [
        (event, event.step or position)
        for position, event in enumerate(events, 1)
        if isinstance(event, FileChange) and not rewound(event.abandoned, event.operation)
    ]
    attribution = Attribution(earlier=earlier)
    for index in made_order([(change.session, change.time) for change, _ in changes]):
        attribution.follow(*changes[index])
    return attribution


def made_order(changes: Sequence[tuple[str, str | None]]) -> list[int]:
    """The order in which changes, given by session and time in the trajectory's order, were
    made: each session's in its own order, the sessions' merged by time. Sessions are
    composed in the order they started, and one may go on after another started (resumed
    the next day, or run beside it). A change without a time takes its session's time before
    it, else its session's first time; in a session without times, the time of the change
    before it in the trajectory."""
    moments = [epoch(time) for _, time in changes]
    first: dict[str, float] = {}
    for (session, _), moment in zip(changes, moments, strict=True):
        if moment is not None:
            first.setdefault(session, moment)
    sessions: dict[str, list[tuple[float, int]]] = {}
    before = float("-inf")
    for index, ((session, _), moment) in enumerate(zip(changes, moments, strict=True)):
        if moment is None:
            own = sessions.get(session)
            moment = own[-1][0] if own else first.get(session, before)
        sessions.setdefault(session, []).append((moment, index))
        before = moment
    return [index for _, index in heapq.merge(*sessions.values())]


def epoch(time: str | None) -> float | None:
    """An ISO 8601 time as seconds since the epoch (UTC when it names no zone), or None."""
    if not time:
        return None
    try:
        moment = datetime.fromisoformat(time.replace("Z", "+00:00"))
    except ValueError:
        return None
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


def rewound(abandoned: object, operation: object) -> bool:
    """Whether a file change is left out of the lines followed: it is on a branch a rewind
    abandoned, made with a file tool, which the rewind is taken to have restored (the
    harness does not record whether it did); a move by a shell command is followed, as no
    rewind undoes a command."""
    return abandoned is True and operation != "rename"


def _outside(path: str) -> bool:
    """A path no repository-relative path is (absolute, `~/…`, or above the root), as the
    import leaves the paths outside the repository."""
    return repository_path(path, None) is None


def _whole_diff(path: str, before: list[str], after: list[str]) -> list[Hunk]:
    from stet_lsp.trajectory.importers.diffs import file_diff

    joined = ("".join(line + "\n" for line in text) for text in (before, after))
    return parse_hunks(file_diff(path, next(joined), next(joined)).text)


def _split(text: str | list[str] | None) -> list[str] | None:
    return lines_of(text) if isinstance(text, str) else text


def _located(hunks: Sequence[Hunk], known: list[str] | None) -> list[Hunk] | None:
    """An unanchored change's hunks placed in the text the trajectory left, when there is one
    place only where every hunk's context and removed lines are, the hunks keeping their
    distances (a search and replace finds its search text once: Claude Code's Edit refuses
    a text found twice). None when the change reads no line, or reads them at no place or
    at several."""
    ordered = sorted(hunks, key=lambda hunk: hunk.old_first)
    reads = [[text for op, text in hunk.lines if op != "+"] for hunk in ordered]
    if known is None or not reads[0]:
        return None
    first, found = reads[0], None
    for start in _places(known, first[0]):
        shift = start + 1 - ordered[0].old_first
        if all(
            known[h.old_first - 1 + shift : h.old_first - 1 + shift + len(r)] == r
            for h, r in zip(ordered, reads, strict=True)
            if r
        ):
            if found is not None:
                return None  # a second place
            found = shift
    if found is None:
        return None
    placed = [Hunk(h.old_first + found, h.new_first + found, h.lines) for h in ordered]
    return placed if patched(known, placed) is not None else None


def _places(lines: list[str], line: str) -> Iterator[int]:
    """Where `line` is in `lines`, in order (list.index finds each without a loop of Python
    over every line)."""
    start = 0
    while True:
        try:
            start = lines.index(line, start)
        except ValueError:
            return
        yield start
        start += 1


def _found(
    known: list[str] | None, after: list[str] | None, hunks: Sequence[Hunk]
) -> list[str] | None:
    """The whole file as the change found it: its recorded result with the diff taken back,
    else the text the trajectory left when the diff applies to it; None when neither is
    known."""
    if after is not None:
        before = patched(after, reversed_hunks(hunks))
        if before is not None:
            return before
    if known is not None and patched(known, hunks) is not None:
        return known
    return None


def _aligned(
    lines: dict[int, LineOrigin], known: list[str] | None, found: list[str]
) -> dict[int, LineOrigin]:
    """The attributed lines placed in `found`, the text the next change found: where they
    are when it still holds each at its place, else where an alignment of the text they were
    in (the trajectory's last known text of the file, or the attributed lines alone) with
    `found` pairs them; a line it does not pair was edited or removed since and drops out."""
    if all(0 < n <= len(found) and found[n - 1] == origin.text for n, origin in lines.items()):
        return lines
    lines = {n: origin for n, origin in lines.items() if n > 0}  # a malformed diff's line 0
    ids: dict[str, int] = {}
    if known is not None and all(
        0 < n <= len(known) and known[n - 1] == origin.text for n, origin in lines.items()
    ):
        reference = [ids.setdefault(text, len(ids)) for text in known]
    else:
        texts = {n: origin.text for n, origin in lines.items()}
        reference = [
            ids.setdefault(texts[n], len(ids)) if n in texts else PLACEHOLDER
            for n in range(1, max(texts, default=0) + 1)
        ]
    paired = align(reference, [ids.get(text, ABSENT) for text in found])
    return {
        paired[n - 1] + 1: origin
        for n, origin in lines.items()
        if n <= len(paired) and paired[n - 1] >= 0
    }


def _disagrees(lines: dict[int, LineOrigin], hunks: Sequence[Hunk]) -> bool:
    """Whether a line the diff says the file held (context or removed) is, at its place, an
    attributed line of other text."""
    for hunk in hunks:
        number = hunk.old_first
        for op, text in hunk.lines:
            if op == "+":
                continue
            origin = lines.get(number)
            if origin is not None and origin.text != text:
                return True
            number += 1
    return False
