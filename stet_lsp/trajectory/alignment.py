"""Aligning two texts line by line: each text a list of ids, one for each distinct line text.

Pairs are kept as a list of ints (for each reference line, the current line it pairs with,
or -1) rather than as tuples: an editor aligns on every new text, and thousands of tuples a
call, some alive when the garbage collector runs, make its full collections frequent.
"""

from __future__ import annotations

import itertools
from bisect import bisect_left
from collections import Counter
from collections.abc import Sequence

PLACEHOLDER = -1
"""A reference line whose text is unknown: it pairs with no current line."""
ABSENT = -2
"""A current line whose text no reference line has."""
SMALL_STRETCH = 4096
"""The largest stretch (known reference lines x current lines) solved exactly."""
EDIT_SCRIPT_BUDGET = 40_000_000
"""Lines x edits: a stretch of few distinct lines (braces, `pass`) is aligned exactly when
its sides differ by at most this many edits per line of it (Myers' O(ND) diff), and by at
most EDIT_SCRIPT_EDITS (the edits' own bookkeeping grows as their square)."""
EDIT_SCRIPT_EDITS = 400


def align(reference: Sequence[int], current: Sequence[int]) -> list[int]:
    """For each reference line, the index of the current line it pairs with (-1: none).
    Paired lines are equal and both sides' indices increase; ids below 0 never pair
    (`PLACEHOLDER` in the reference, `ABSENT` in the current text)."""
    ref, cur = list(reference), list(current)  # one type: slices of both compare equal
    paired = [-1] * len(ref)
    stack = [(0, len(ref), 0, len(cur))]
    while stack:
        stack.extend(_stretch(ref, cur, *stack.pop(), paired))
    return paired


Stretch = tuple[int, int, int, int]


def _stretch(
    ref: list[int], cur: list[int], rlo: int, rhi: int, clo: int, chi: int, paired: list[int]
) -> list[Stretch]:
    """Pairs what is certain in one stretch and returns the stretches left to align."""
    head = _head_length(ref, cur, rlo, clo, min(rhi - rlo, chi - clo))
    paired[rlo : rlo + head] = range(clo, clo + head)
    rlo, clo = rlo + head, clo + head
    tail = _tail_length(ref, cur, rhi, chi, min(rhi - rlo, chi - clo))
    paired[rhi - tail : rhi] = range(chi - tail, chi)
    rhi, chi = rhi - tail, chi - tail
    if rlo >= rhi or clo >= chi:
        return []
    if rhi - rlo == 1 or chi - clo == 1:
        _pair_single(ref, cur, (rlo, rhi, clo, chi), paired)
        return []
    if rhi - rlo == chi - clo and _same_places(ref, cur, rlo, rhi, clo):
        _pair_in_place(ref, rlo, rhi, clo, paired)
        return []
    anchors = _unique_pairs(ref, cur, rlo, rhi, clo, chi)
    if not anchors[0]:
        known = sum(1 for i in range(rlo, rhi) if ref[i] >= 0)
        if known == 0:
            return []
        if known * (chi - clo) <= SMALL_STRETCH:
            _pair_common_subsequence(ref, cur, (rlo, rhi, clo, chi), paired)
            return []
        if _pair_by_edit_script(ref, cur, (rlo, rhi, clo, chi), paired):
            return []
        anchors = _rarest_pairs(ref, cur, rlo, rhi, clo, chi)
        if not anchors[0]:
            return []
    return _between(ref, cur, anchors, (rlo, rhi, clo, chi), paired)


def _head_length(ref: list[int], cur: list[int], rlo: int, clo: int, limit: int) -> int:
    """How many lines from (rlo, clo) on are equal, found by comparing growing slices (in
    C) rather than line by line."""
    length, step = 0, 8
    while length < limit:
        size = min(step, limit - length)
        if ref[rlo + length : rlo + length + size] == cur[clo + length : clo + length + size]:
            length, step = length + size, step * 2
        elif size == 1:
            break
        else:
            step = size // 2
    return length


def _tail_length(ref: list[int], cur: list[int], rhi: int, chi: int, limit: int) -> int:
    """How many lines before (rhi, chi) are equal."""
    length, step = 0, 8
    while length < limit:
        size = min(step, limit - length)
        if ref[rhi - length - size : rhi - length] == cur[chi - length - size : chi - length]:
            length, step = length + size, step * 2
        elif size == 1:
            break
        else:
            step = size // 2
    return length


def _pair_single(ref: list[int], cur: list[int], stretch: Stretch, paired: list[int]) -> None:
    """A stretch of one line on a side: it pairs with the first equal line of the other."""
    rlo, rhi, clo, chi = stretch
    if rhi - rlo == 1:
        if ref[rlo] >= 0:
            j = next((j for j in range(clo, chi) if cur[j] == ref[rlo]), -1)
            paired[rlo] = j
        return
    i = next((i for i in range(rlo, rhi) if ref[i] == cur[clo]), -1)
    if i >= 0:
        paired[i] = clo


def _same_places(ref: list[int], cur: list[int], rlo: int, rhi: int, clo: int) -> bool:
    """Whether every known reference line of the stretch equals the current line at its
    place (the stretch has the same length on both sides)."""
    if ref[rlo:rhi] == cur[clo : clo + rhi - rlo]:
        return True
    shift = clo - rlo
    return all(ref[i] < 0 or ref[i] == cur[i + shift] for i in range(rlo, rhi))


def _pair_in_place(ref: list[int], rlo: int, rhi: int, clo: int, paired: list[int]) -> None:
    paired[rlo:rhi] = range(clo, clo + rhi - rlo)
    for i in range(rlo, rhi):
        if ref[i] < 0:
            paired[i] = -1


Anchors = tuple[list[int], list[int]]
"""Paired reference and current indices, both increasing, as two lists."""


def _unique_pairs(
    ref: list[int], cur: list[int], rlo: int, rhi: int, clo: int, chi: int
) -> Anchors:
    """Lines that stand once in each side of the stretch, paired, the longest run of pairs
    in order on both sides (patience)."""
    ref_part, cur_part = ref[rlo:rhi], cur[clo:chi]
    ref_counts, cur_counts = Counter(ref_part), Counter(cur_part)
    cur_place = {value: j for j, value in enumerate(cur_part, clo)}
    ref_points = [
        i
        for i, value in enumerate(ref_part, rlo)
        if value >= 0 and ref_counts[value] == 1 and cur_counts.get(value) == 1
    ]
    return _increasing(ref_points, [cur_place[ref[i]] for i in ref_points])


def _pair_by_edit_script(
    ref: list[int], cur: list[int], stretch: Stretch, paired: list[int]
) -> bool:
    """A long stretch where no line is unique (a file of braces and `pass`): the shortest
    edit script between its sides (Myers' O(ND) diff), when it is short enough for the
    budget; pairing the rarest line's places in order would pair lines an edit had shifted.
    Whether it paired the stretch."""
    rlo, rhi, clo, chi = stretch
    n, m = rhi - rlo, chi - clo
    limit = min(n + m, EDIT_SCRIPT_EDITS, EDIT_SCRIPT_BUDGET // max(n + m, 1))
    furthest = [0] * (2 * limit + 3)  # by diagonal k = x - y, at index k + limit + 1
    middle = limit + 1
    trace: list[list[int]] = []  # after each d: the furthest x of diagonals -d..d
    for d in range(limit + 1):
        for k in range(-d, d + 1, 2):
            if k == -d or (k != d and furthest[middle + k - 1] < furthest[middle + k + 1]):
                x = furthest[middle + k + 1]  # a current line inserted
            else:
                x = furthest[middle + k - 1] + 1  # a reference line left out
            y = x - k
            if not (0 <= x <= n and 0 <= y <= m):
                furthest[middle + k] = _OFF_GRID  # past a side: no path goes on from here
                continue
            if x < n and y < m:
                x += _head_length(ref, cur, rlo + x, clo + y, min(n - x, m - y))
            furthest[middle + k] = x
            if x == n and x - k == m:
                trace.append(furthest[middle - d : middle + d + 1])
                _pair_edit_script(trace, n, m, rlo, clo, paired)
                return True
        trace.append(furthest[middle - d : middle + d + 1])
    return False


_OFF_GRID = -(1 << 40)


def _pair_edit_script(
    trace: list[list[int]], n: int, m: int, rlo: int, clo: int, paired: list[int]
) -> None:
    """Walks the edit script back from its end, pairing the lines of its diagonal runs."""
    x, y = n, m
    for d in range(len(trace) - 1, 0, -1):
        before = trace[d - 1]  # diagonals -(d-1)..d-1, at index k + d - 1
        k = x - y
        if k == -d or (k != d and before[k - 1 + d - 1] < before[k + 1 + d - 1]):
            k_before = k + 1
        else:
            k_before = k - 1
        x_before = before[k_before + d - 1]
        y_before = x_before - k_before
        start = max(x_before + (k_before == k - 1), 0)  # where the run after the edit began
        run = min(x - start, y - (y_before + (k_before == k + 1)))
        for step in range(run):
            paired[rlo + x - 1 - step] = clo + y - 1 - step
        x, y = x_before, y_before
    for step in range(min(x, y)):  # the run from the start
        paired[rlo + step] = clo + step


def _rarest_pairs(
    ref: list[int], cur: list[int], rlo: int, rhi: int, clo: int, chi: int
) -> Anchors:
    """A stretch where no line is unique: the least frequent common line's places, paired
    in order, as anchors (the stretches between them become smaller)."""
    ref_counts = Counter(value for value in ref[rlo:rhi] if value >= 0)
    cur_counts = Counter(cur[clo:chi])
    common = [value for value in ref_counts if value in cur_counts]
    if not common:
        return [], []
    rarest = min(common, key=lambda value: (ref_counts[value] + cur_counts[value], value))
    ref_points = [i for i in range(rlo, rhi) if ref[i] == rarest]
    cur_points = [j for j in range(clo, chi) if cur[j] == rarest]
    size = min(len(ref_points), len(cur_points))
    return ref_points[:size], cur_points[:size]


def _increasing(ref_points: list[int], cur_points: list[int]) -> Anchors:
    """The longest run of pairs whose current indices increase too (the reference indices
    already do)."""
    if all(a < b for a, b in itertools.pairwise(cur_points)):
        return ref_points, cur_points
    tails: list[int] = []  # the current index ending the best run of each length
    tail_at: list[int] = []  # the pair ending it
    previous: list[int] = []
    for number, j in enumerate(cur_points):
        length = bisect_left(tails, j)
        if length == len(tails):
            tails.append(j)
            tail_at.append(number)
        else:
            tails[length] = j
            tail_at[length] = number
        previous.append(tail_at[length - 1] if length else -1)
    chosen: list[int] = []
    number = tail_at[-1] if tail_at else -1
    while number >= 0:
        chosen.append(number)
        number = previous[number]
    chosen.reverse()
    return [ref_points[n] for n in chosen], [cur_points[n] for n in chosen]


def _between(
    ref: list[int], cur: list[int], anchors: Anchors, stretch: Stretch, paired: list[int]
) -> list[Stretch]:
    """Pairs the anchors and returns the stretches between them that are left to align; one
    of the same length on both sides whose known lines all stand at their places pairs at
    once (most of them do)."""
    rlo, rhi, clo, chi = stretch
    left: list[Stretch] = []
    ref_points, cur_points = anchors
    for i, j in zip([*ref_points, rhi], [*cur_points, chi], strict=True):
        if i < rhi:
            paired[i] = j
        if i > rlo and j > clo:
            if i - rlo == j - clo and _same_places(ref, cur, rlo, i, clo):
                _pair_in_place(ref, rlo, i, clo, paired)
            else:
                left.append((rlo, i, clo, j))
        rlo, clo = i + 1, j + 1
    return left


def _pair_common_subsequence(
    ref: list[int], cur: list[int], stretch: Stretch, paired: list[int]
) -> None:
    """The longest common subsequence of the known reference lines and the current lines of
    a small stretch (dynamic programming)."""
    rlo, rhi, clo, chi = stretch
    rows = [i for i in range(rlo, rhi) if ref[i] >= 0]
    columns = list(range(clo, chi))
    width = len(columns) + 1
    table = [0] * ((len(rows) + 1) * width)
    for r in range(len(rows) - 1, -1, -1):
        value = ref[rows[r]]
        here, below = r * width, (r + 1) * width
        for c in range(len(columns) - 1, -1, -1):
            if cur[columns[c]] == value:
                table[here + c] = table[below + c + 1] + 1
            else:
                table[here + c] = max(table[below + c], table[here + c + 1])
    r = c = 0
    while r < len(rows) and c < len(columns):
        if cur[columns[c]] == ref[rows[r]]:
            paired[rows[r]] = columns[c]
            r, c = r + 1, c + 1
        elif table[(r + 1) * width + c] >= table[r * width + c + 1]:
            r += 1
        else:
            c += 1


def pair_moved(
    ref: Sequence[int],
    cur: Sequence[int],
    paired: list[int],
    movable: frozenset[int],
    steps: Sequence[int],
) -> bool:
    """Pairs attributed lines that moved past others (the ordered alignment leaves them
    out): an unpaired attributed line whose distinctive text stands once among the unpaired
    lines on each side, then the equal unpaired lines around it (the rest of a moved
    block). Whether any was paired."""
    loose = [
        i
        for i, j in enumerate(paired)
        if j < 0 and i < len(steps) and steps[i] and ref[i] in movable
    ]
    if not loose:
        return False
    moved = False
    taken = set(paired)
    free = [j for j in range(len(cur)) if j not in taken and cur[j] >= 0]
    free_counts = Counter(cur[j] for j in free)
    free_place = {cur[j]: j for j in free}
    loose_counts = Counter(ref[i] for i in loose)
    for i in loose:
        value = ref[i]
        if paired[i] >= 0 or loose_counts[value] != 1 or free_counts.get(value) != 1:
            continue
        j = free_place[value]
        if j in taken:
            continue
        paired[i] = j
        taken.add(j)
        moved = True
        for direction in (-1, 1):
            _grow_moved(ref, cur, paired, taken, (i, j), direction)
    return moved


def _grow_moved(
    ref: Sequence[int],
    cur: Sequence[int],
    paired: list[int],
    taken: set[int],
    start: tuple[int, int],
    direction: int,
) -> None:
    i, j = start[0] + direction, start[1] + direction
    while 0 <= i < len(ref) and 0 <= j < len(cur):
        if paired[i] >= 0 or j in taken or ref[i] < 0 or ref[i] != cur[j]:
            return
        paired[i] = j
        taken.add(j)
        i, j = i + direction, j + direction
