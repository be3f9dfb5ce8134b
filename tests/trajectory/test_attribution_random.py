"""Line attribution on random trajectories, against what the general way of following a change
gave before plain changes were followed in place (`attribution._Slots`): the lines followed (in
their dicts' order), what was left out and each file's text, for fixed seeds. The digests in
`attribution_digests.json` were written by that code (f5df436f's attribution.py) on the diffs
the importers make now: `python test_attribution_random.py` writes them anew (run it only
against a checkout whose attribution is known good; the diffs change the inputs)."""

from __future__ import annotations

import hashlib
import json
import os
import random
import subprocess
import sys
from pathlib import Path

from bounded import within

from stet_lsp.trajectory.attribution import Attribution, line_attribution
from stet_lsp.trajectory.events import FileChange, SourceRef
from stet_lsp.trajectory.importers.diffs import file_diff, fragment_diff, hunks_diff

DIGESTS = Path(__file__).with_name("attribution_digests.json")
CASES = 400
PATHS = ("src/a.py", "src/b.py", "lib/c.py")


def _change(step: int, path: str, operation: str, diff: str, **fields: object) -> FileChange:
    return FileChange(
        session="s",
        step=step,
        source=SourceRef(file="session.jsonl", line=step),
        path=path,
        operation=operation,  # type: ignore[arg-type]
        diff=diff,
        **fields,  # type: ignore[arg-type]
    )


def _text(lines: list[str]) -> str:
    return "".join(line + "\n" for line in lines)


def _edited(rng: random.Random, lines: list[str], step: int) -> list[str]:
    """The lines with a few small edits (lines replaced, inserted, removed), from a small
    vocabulary so that lines repeat."""
    lines = list(lines)
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        at = rng.randrange(len(lines) + 1)
        kind = rng.random()
        new = [rng.choice(("pass", "x = 1", "", f"s{step}", f"y = {rng.randrange(4)}"))]
        if kind < 0.4 and at < len(lines):
            lines[at : at + 1] = new
        elif kind < 0.7:
            lines[at:at] = new * rng.choice((1, 2))
        elif at < len(lines):
            del lines[at : at + rng.choice((1, 2))]
    return lines


def _hunks(rng: random.Random, before: list[str], after: list[str]) -> str:
    """The diff's hunks, sometimes with their places made wrong (a malformed or stale diff)."""
    hunks = file_diff("f", _text(before), _text(after)).text
    body = hunks[hunks.find("@@") :] if "@@" in hunks else ""
    if body and rng.random() < 0.15:
        parts = body.split(" ")
        numbers = [i for i, part in enumerate(parts) if part[:1] in "-+" and part[1:2].isdigit()]
        if numbers:
            i = rng.choice(numbers)
            head, _, tail = parts[i].partition(",")
            moved = max(0, int(head[1:]) + rng.choice((-2, -1, 1, 3)))
            parts[i] = f"{head[0]}{moved}" + (f",{tail}" if tail else "")
            body = " ".join(parts)
    return body


def trajectory(seed: int) -> list[FileChange]:
    """Random changes to a few files: anchored diffs with and without the file after them,
    diffs made against a text a person edited first, malformed diffs, search and replace
    edits, writes without a diff, renames of files and folders, deletions."""
    rng = random.Random(seed)
    files: dict[str, list[str]] = {}
    changes: list[FileChange] = []
    for step in range(1, rng.randrange(5, 60)):
        path = rng.choice([*files, *PATHS]) if files else rng.choice(PATHS)
        if path not in files:
            files[path] = [rng.choice(("a", "b", "pass", f"c{step}")) for _ in range(8)]
            text = _text(files[path])
            diff = file_diff(path, None, text)
            content = text if rng.random() < 0.7 else None
            changes.append(_change(step, path, "create", diff.text, anchored=True, content=content))
            continue
        kind = rng.random()
        if kind < 0.08 and files[path]:  # a person's edit, outside the trajectory
            files[path] = _edited(rng, files[path], step)
            kind = rng.random() * 0.55
        before = files[path]
        if kind < 0.45:
            after = _edited(rng, before, step)
            if rng.random() < 0.1:  # a diff made against a text the trajectory never saw
                before = _edited(rng, before, step)
            content = _text(after) if rng.random() < 0.5 else None
            diff = hunks_diff(path, _hunks(rng, before, after)).text
            changes.append(_change(step, path, "modify", diff, anchored=True, content=content))
        elif kind < 0.65 and before:
            at = rng.randrange(len(before))
            old = before[at : at + rng.choice((1, 2))]
            new = [*old[:1], f"e{step}"] if rng.random() < 0.5 else [f"e{step}"]
            after = [*before[:at], *new, *before[at + len(old) :]]
            anchor = at + 1 if rng.random() < 0.2 else None
            diff = fragment_diff(path, _text(old), _text(new), anchor)
            changes.append(_change(step, path, "modify", diff.text, anchored=diff.anchored))
        elif kind < 0.72:
            after = _edited(rng, before, step)
            changes.append(_change(step, path, "modify", "", content=_text(after)))
        elif kind < 0.8:
            target = rng.choice([p for p in PATHS if p != path] + ["src/z.py"])
            if rng.random() < 0.3:  # the folder
                folder, new_folder = path.rsplit("/", 1)[0], rng.choice(("src", "lib", "pkg"))
                moved = {p: v for p, v in files.items() if p.startswith(folder + "/")}
                for old_path, lines in moved.items():
                    del files[old_path]
                    files[new_folder + old_path[len(folder) :]] = lines
                changes.append(_change(step, new_folder, "rename", "", old_path=folder))
                continue
            files[target] = files.pop(path)
            changes.append(_change(step, target, "rename", "", old_path=path, anchored=True))
            continue
        elif kind < 0.85:
            del files[path]
            changes.append(_change(step, path, "delete", "", anchored=True))
            continue
        else:
            after = _edited(rng, before, step)
            diff = file_diff(path, _text(before), _text(after))
            changes.append(_change(step, path, "modify", diff.text, anchored=True))
        files[path] = after
    return changes


def outcome(attribution: Attribution) -> dict[str, object]:
    """What was followed, the files by path (a folder's files move in the order of a set),
    each file's lines in their dict's order."""
    followed = {
        path: [[n, o.step, o.text] for n, o in lines.items()]
        for path, lines in sorted(attribution.followed.items())
    }
    return {
        "followed": followed,
        "left_out": [[i.path, i.step, i.reason, i.lines] for i in attribution.left_out],
        "texts": {path: attribution.text_lines(path) for path in sorted(attribution.texts)},
    }


def digest(seed: int) -> str:
    attribution = line_attribution(trajectory(seed))
    text = json.dumps(outcome(attribution), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def test_random_trajectories_are_attributed_as_before() -> None:
    expected = json.loads(DIGESTS.read_text(encoding="utf-8"))
    assert len(expected) == CASES
    differ = [seed for seed in range(CASES) if digest(seed) != expected[seed]]
    assert differ == []


def _long_file(length: int) -> tuple[list[str], list[FileChange]]:
    """The lines of a long file of distinct lines, and the change that created it."""
    lines = [f"v{n} = {n}" for n in range(length)]
    created = file_diff("big.py", None, _text(lines)).text
    return lines, [_change(1, "big.py", "create", created, anchored=True)]


def test_edits_cost_what_they_change() -> None:
    """Small anchored edits to a long file cost what their hunks hold, not what the file
    does: 10,000 of them to a file of 3,000 lines took 9 s when each cost the file."""
    length = 3000
    lines, changes = _long_file(length)
    rng = random.Random(5)
    for step in range(2, 10_002):
        at = rng.randrange(3, length - 3)
        context = "".join(f" {line}\n" for line in lines[at - 3 : at])
        hunk = f"@@ -{at - 2},5 +{at - 2},5 @@\n{context}-{lines[at]}\n+e{step}\n {lines[at + 1]}\n"
        changes.append(_change(step, "big.py", "modify", hunk, anchored=True))
        lines[at] = f"e{step}"
    attribution = within(3.0, lambda: line_attribution(changes))
    assert attribution.text_lines("big.py") == lines
    assert {n: o.text for n, o in attribution.files["big.py"].items()} == dict(enumerate(lines, 1))


def test_unanchored_edits_cost_no_loop_over_the_file() -> None:
    """Edits known by their search and replace text only, placed where their text is in a
    long file, then followed as anchored ones: 10,000 of them to a file of 3,000 lines took
    8 s when each cost the file in loops of Python."""
    length = 3000
    lines, changes = _long_file(length)
    rng = random.Random(6)
    for step in range(2, 10_002):
        at = rng.randrange(length)
        diff = fragment_diff("big.py", f"{lines[at]}\n", f"e{step}\n")
        changes.append(_change(step, "big.py", "modify", diff.text))
        lines[at] = f"e{step}"
    attribution = within(2.0, lambda: line_attribution(changes))
    assert attribution.left_out == []
    assert attribution.text_lines("big.py") == lines


def test_a_rename_onto_its_own_path_keeps_the_files_lines() -> None:
    """`mv ./src/a.py src/a.py`: the lines are where they were (they were dropped)."""
    created = file_diff("src/a.py", None, "one\ntwo\n").text
    changes = [
        _change(1, "src/a.py", "create", created, anchored=True),
        _change(2, "src/a.py", "rename", "", anchored=True, old_path="src/a.py"),
    ]
    attribution = line_attribution(changes)
    assert attribution.text_lines("src/a.py") == ["one", "two"]
    assert [origin.step for origin in attribution.files["src/a.py"].values()] == [1, 1]


def test_what_followed_gives_stays_as_it_was_given() -> None:
    """A later change put its in-place list where the dict given out was."""
    created = file_diff("f.py", None, "a\nb\nc\n").text
    attribution = line_attribution([_change(1, "f.py", "create", created, anchored=True)])
    held = attribution.followed
    added = file_diff("f.py", "a\nb\nc\n", "a\nb\nc\nd\n").text
    attribution.follow(_change(2, "f.py", "modify", added, anchored=True), 2)
    assert [origin.step for origin in held["f.py"].values()] == [1, 1, 1]
    assert [origin.step for origin in attribution.followed["f.py"].values()] == [1, 1, 1, 2]


def test_a_folder_moved_keeps_its_files_in_one_order_whatever_the_hash_seed() -> None:
    """The files a folder's move takes along were met in a set's order, which the string
    hash's seed decides: `followed` listed them in another order from one run to the next."""
    script = (
        "import sys, json; sys.path[:0] = sys.argv[1:]\n"
        "from test_attribution_random import _change, file_diff, line_attribution\n"
        "paths = [f'src/m{n}.py' for n in range(40)]\n"
        "changes = [_change(n + 1, p, 'create', file_diff(p, None, 'x\\n').text,"
        " anchored=True) for n, p in enumerate(paths)]\n"
        "changes.append(_change(99, 'lib', 'rename', '', anchored=True, old_path='src'))\n"
        "print(json.dumps(list(line_attribution(changes).followed)))\n"
    )
    here = Path(__file__).resolve().parent
    orders = {
        subprocess.run(
            [sys.executable, "-c", script, str(here), str(here.parent)],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("1", "2", "3")
    }
    assert len(orders) == 1, orders
    assert json.loads(orders.pop()) == sorted(f"lib/m{n}.py" for n in range(40))


if __name__ == "__main__":
    written = [digest(seed) for seed in range(CASES)]
    DIGESTS.write_text(json.dumps(written, indent=0) + "\n", encoding="utf-8")
    sys.stdout.write(f"{len(written)} digests written to {DIGESTS}\n")
