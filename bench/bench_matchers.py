"""Hyperscan and RE2 against the gate's matching: the anchor prefilter, then the rule regexes.

Run: python bench/bench_matchers.py [--size-mb 10] [--rounds 5] [--samples DIR]
(the libraries: `pip install -e '.[bench]'`; without them the script says so and exits 0)

All figures come from one run on one realistic transcript (bench/transcripts.py, the text
bench/bench_gate.py measures). Every matcher runs `--rounds` times, interleaved with the
others, and the best wall time counts (the machine may be shared); compile times are shown
apart, once.

1. Prefilter: the anchors the gate gives its one pass (the rule set `_scan_chunk` builds for a
   JSONL transcript with the default config: rule anchors, detect-secrets keywords, `%`, JSON
   escapes and name joints), over the whole ASCII-lowercased text. `automaton` is today's
   `Prefilter.find` (Aho-Corasick DFA, every overlapping hit, sorted by offset then anchor).
   `hyperscan` compiles the same anchors as literals (SOM_LEFTMOST), collects every
   (start, anchor) hit through its callback and sorts them the same way: "equal" says whether
   the list is exactly `Prefilter.find`'s. `re2` runs one alternation of the anchors with
   finditer: RE2 reports no overlapping hits, so it finds fewer, and is never "equal".
2. Rules: how many of the gate's rule regexes (each rule's main pattern) compile in each
   engine, as written and with a leading boundary look-behind `(?<![...])` dropped (a
   one-character test a caller could redo on each hit), and why the others fail (the engine's
   message, and the features the failing patterns use, parsed by Python's own regex parser).
   The compatible rules then run over the whole text: Hyperscan as one database
   (SOM_LEFTMOST; it reports every match end, overlapping, so its hits are many), RE2 and
   Python `re` (the reference for "equal": the same hit count per rule) with per-rule
   finditer. Beside them, `gate rules` is the gate's own rule pass (`RuleScanner.run` on each
   chunk `split_chunks` cuts, as `_scan_chunk` calls it): all rules, prefilter included, hits
   validated and turned into spans. That is not equal work: it runs every rule, the engines
   only those they accept, and it validates while they only match.

Read the table's seconds and MB/s (higher is faster); the last lines are computed from them.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # gate_corpus
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # transcripts

import transcripts

from stet_lsp.gate import dslayer, scan
from stet_lsp.gate.config import GateConfig
from stet_lsp.gate.engine import RuleScanner, RuleSet, rule_set
from stet_lsp.gate.prefilter import AnchorHit, Prefilter, ascii_lower

try:
    import hyperscan
    import re2
except ImportError as missing:
    print(
        f"bench_matchers: {missing.name} is not installed, nothing measured "
        "(pip install -e '.[bench]' installs hyperscan)"
    )
    sys.exit(0)

MB = 1_000_000
# A leading boundary look-behind, as most rules start (`(?<![A-Za-z0-9])ghp_...`).
_LEADING_LOOKBEHIND = re.compile(r"\(\?<!\[[^\]]*\]\)")
_RE2_REPEAT_LIMIT = 1000


@dataclass
class Row:
    matcher: str
    seconds: float
    hits: int
    equal: str


def gate_config() -> GateConfig:
    return GateConfig()


def gate_rules(config: GateConfig) -> RuleSet:
    """The rule set `_scan_chunk` builds for a JSON chunk (percent escapes included)."""
    ds_keywords = dslayer.DS_ANCHORS if config.use_detect_secrets else ()
    own = (*scan._PERCENT, *scan._JSON_KEYWORDS)
    return rule_set(config.strict, config.env_names, (*ds_keywords, *own))


def best_of(actions: dict[str, Callable[[], Any]], rounds: int) -> dict[str, tuple[Any, float]]:
    """Each action's last result and best wall time over `rounds` interleaved rounds."""
    best = {name: float("inf") for name in actions}
    results: dict[str, Any] = {}
    for _ in range(rounds):
        for name, action in actions.items():
            start = time.perf_counter()
            results[name] = action()
            best[name] = min(best[name], time.perf_counter() - start)
    return {name: (results[name], best[name]) for name in actions}


def timed_once(action: Callable[[], Any]) -> tuple[Any, float]:
    start = time.perf_counter()
    result = action()
    return result, time.perf_counter() - start


# --- 1. prefilter -----------------------------------------------------------------------


class HyperscanPrefilter:
    """The anchors as Hyperscan literals; hits ordered as `Prefilter.find` orders them."""

    def __init__(self, anchors: tuple[str, ...]) -> None:
        self.anchors = anchors  # sorted, as Prefilter's: ids sort like anchors
        self.database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
        expressions = [anchor.encode("ascii") for anchor in anchors]
        ids = list(range(len(anchors)))
        try:
            self.database.compile(
                expressions=expressions,
                ids=ids,
                flags=hyperscan.HS_FLAG_SOM_LEFTMOST,
                literal=True,
            )
            self.mode = "literal mode"
        except (hyperscan.error, TypeError):
            self.database.compile(
                expressions=[re.escape(anchor).encode("ascii") for anchor in anchors],
                ids=ids,
                flags=hyperscan.HS_FLAG_SOM_LEFTMOST,
            )
            self.mode = "escaped regexes"

    def find(self, lowered: str) -> list[AnchorHit]:
        found: list[tuple[int, int]] = []
        append = found.append

        def on_match(index: int, start: int, end: int, flags: int, context: object) -> None:
            append((start, index))

        self.database.scan(lowered.encode("ascii", "replace"), match_event_handler=on_match)
        found.sort()
        anchors = self.anchors
        return [(start, anchors[index]) for start, index in found]


class Re2Prefilter:
    """One RE2 alternation of the anchors, shortest first (leftmost-first semantics: the
    shortest anchor at a start wins, so the next search resumes soonest)."""

    def __init__(self, anchors: tuple[str, ...]) -> None:
        options = re2.Options()
        options.log_errors = False
        ordered = sorted(anchors, key=lambda anchor: (len(anchor), anchor))
        alternation = b"|".join(re2.escape(anchor.encode("ascii")) for anchor in ordered)
        self.regexp = re2.compile(alternation, options)

    def find(self, lowered: str) -> list[tuple[int, bytes]]:
        data = lowered.encode("ascii", "replace")
        return [(match.start(), match.group()) for match in self.regexp.finditer(data)]


# --- 2. rules ---------------------------------------------------------------------------


def features(source: str, flags: int) -> set[str]:
    """The constructs a pattern uses that Hyperscan or RE2 may refuse."""
    from re import _constants as c  # type: ignore[attr-defined]
    from re import _parser  # type: ignore[attr-defined]

    found: set[str] = set()

    def walk(items: Iterable[tuple[Any, Any]]) -> None:
        for op, av in items:
            if op in (c.ASSERT, c.ASSERT_NOT):
                found.add("look-behind" if av[0] < 0 else "look-ahead")
                walk(av[1])
            elif op in (c.GROUPREF, c.GROUPREF_EXISTS):
                found.add("backreference")
            elif op is c.ATOMIC_GROUP:
                found.add("atomic group")
                walk(av)
            elif op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT):
                if op is c.POSSESSIVE_REPEAT:
                    found.add("possessive quantifier")
                if av[1] != c.MAXREPEAT and av[1] > _RE2_REPEAT_LIMIT:
                    found.add(f"repeat > {_RE2_REPEAT_LIMIT}")
                walk(av[2])
            elif op is c.SUBPATTERN:
                walk(av[3])
            elif op is c.BRANCH:
                for branch in av[1]:
                    walk(branch)

    walk(_parser.parse(source, flags))
    return found


@dataclass
class Compiled:
    """The rules one engine accepts, and why it refuses the others."""

    engine: str
    accepted: list[tuple[str, str, int]]  # (rule name, source, flags)
    messages: Counter[str]
    features: Counter[str]

    def summary(self, total: int) -> str:
        refused = total - len(self.accepted)
        parts = [f"{self.engine}: {len(self.accepted)}/{total} compile"]
        if refused:
            parts.append(
                "refused: "
                + "; ".join(f"{message} x{n}" for message, n in self.messages.most_common())
            )
            parts.append(
                "the refused use: "
                + ", ".join(f"{feature} {n}" for feature, n in self.features.most_common())
            )
        return "\n    ".join(parts)


def hyperscan_flags(flags: int) -> int:
    converted = hyperscan.HS_FLAG_SOM_LEFTMOST
    if flags & re.MULTILINE:
        converted |= hyperscan.HS_FLAG_MULTILINE
    if flags & re.IGNORECASE:
        converted |= hyperscan.HS_FLAG_CASELESS
    if flags & re.DOTALL:
        converted |= hyperscan.HS_FLAG_DOTALL
    return converted


def re2_source(source: str, flags: int) -> bytes:
    inline = "".join(
        letter
        for flag, letter in ((re.MULTILINE, "m"), (re.IGNORECASE, "i"), (re.DOTALL, "s"))
        if flags & flag
    )
    return (f"(?{inline})" if inline else "").encode() + source.encode()


def re2_options() -> Any:
    options = re2.Options()
    options.log_errors = False
    return options


def compile_each(patterns: list[tuple[str, str, int]]) -> tuple[Compiled, Compiled]:
    """Each pattern compiled alone in Hyperscan (SOM_LEFTMOST) and in RE2."""
    engines = (
        Compiled("hyperscan", [], Counter(), Counter()),
        Compiled("re2", [], Counter(), Counter()),
    )
    options = re2_options()
    for name, source, flags in patterns:
        for compiled in engines:
            try:
                if compiled.engine == "hyperscan":
                    hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK).compile(
                        expressions=[source.encode()], flags=hyperscan_flags(flags)
                    )
                else:
                    re2.compile(re2_source(source, flags), options)
            except (hyperscan.error, re2.error) as error:
                message = str(error).removeprefix("b'").removesuffix("'")
                message = re.sub(r"\{[0-9,]+\}\??", "{m,n}", message)
                compiled.messages[message] += 1
                compiled.features.update(features(source, flags) or {"none of these"})
            else:
                compiled.accepted.append((name, source, flags))
    return engines


def hyperscan_rules(accepted: list[tuple[str, str, int]]) -> tuple[Any, float, str]:
    """One database of every accepted rule; its compile time, or why it failed."""
    database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    start = time.perf_counter()
    try:
        database.compile(
            expressions=[source.encode() for _, source, _ in accepted],
            ids=list(range(len(accepted))),
            flags=[hyperscan_flags(flags) for _, _, flags in accepted],
        )
    except hyperscan.error as error:
        return None, time.perf_counter() - start, str(error)
    return database, time.perf_counter() - start, ""


def hyperscan_count(database: Any, data: bytes) -> int:
    hits = [0]

    def on_match(index: int, start: int, end: int, flags: int, context: object) -> None:
        hits[0] += 1

    database.scan(data, match_event_handler=on_match)
    return hits[0]


def per_rule_counts(compiled: list[Any], text: Any) -> list[int]:
    return [sum(1 for _ in pattern.finditer(text)) for pattern in compiled]


def gate_rule_pass(chunks: list[str], rules: RuleSet, config: GateConfig) -> int:
    spans = 0
    for chunk in chunks:
        scanner = RuleScanner(
            chunk,
            rules,
            strict=config.strict,
            allowlist=config.allowlist,
            lowered=ascii_lower(chunk),
        )
        spans += len(scanner.run())
    return spans


# --- report -----------------------------------------------------------------------------


def table(rows: list[Row], size: int) -> str:
    lines = [f"{'matcher':<46} {'seconds':>8} {'MB/s':>8} {'hits':>10}  equal"]
    for row in rows:
        rate = size / MB / row.seconds if row.seconds > 0 else float("inf")
        lines.append(
            f"{row.matcher:<46} {row.seconds:>8.3f} {rate:>8.1f} {row.hits:>10,}  {row.equal}"
        )
    return "\n".join(lines)


def ratio(slow: float, fast: float) -> str:
    return f"{slow / fast:.1f}x" if fast > 0 else "inf"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--size-mb", type=float, default=10.0)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--samples", type=Path, default=transcripts.SAMPLES)
    options = parser.parse_args()
    rounds = max(1, options.rounds)

    formats = transcripts.measure_formats(options.samples)
    text, _ = transcripts.realistic_transcript(
        int(options.size_mb * MB), transcripts.targets(formats)
    )
    size = len(text)
    lowered = ascii_lower(text)
    data = text.encode("utf-8")
    chunks = scan.split_chunks(text)
    config = gate_config()
    rules = gate_rules(config)
    prefilter = rules.prefilter
    plain = tuple(a for a in prefilter.anchors if a.isascii() and "?" not in a)
    print(
        f"text: {size / MB:.1f} MB realistic transcript, {len(chunks)} gate chunks; "
        f"{len(prefilter.anchors)} anchors ({len(prefilter.anchors) - len(plain)} not plain "
        f"ASCII, left out of hyperscan and re2), {len(rules.rules)} rules; "
        f"best of {rounds} rounds"
    )

    # 1. prefilter
    _, automaton_compile = timed_once(lambda: Prefilter(prefilter.anchors))
    hs_prefilter, hs_compile = timed_once(lambda: HyperscanPrefilter(plain))
    re2_prefilter, re2_compile = timed_once(lambda: Re2Prefilter(plain))
    print(
        f"prefilter compile: automaton {automaton_compile:.3f} s, "
        f"hyperscan {hs_compile:.3f} s ({hs_prefilter.mode}), "
        f"re2 {re2_compile:.3f} s"
    )
    measured = best_of(
        {
            "automaton": lambda: prefilter.find(lowered),
            "hyperscan": lambda: hs_prefilter.find(lowered),
            "re2": lambda: re2_prefilter.find(lowered),
        },
        rounds,
    )
    current, automaton_seconds = measured["automaton"]
    hs_hits, hs_seconds = measured["hyperscan"]
    re2_hits, re2_seconds = measured["re2"]
    hs_equal = hs_hits == current
    current_set = set(current)
    re2_in_current = sum((start, anchor.decode()) in current_set for start, anchor in re2_hits)
    print(
        f"prefilter hits: automaton {len(current):,}; hyperscan {len(hs_hits):,}, equal list: "
        f"{'yes' if hs_equal else 'NO'}; re2 {len(re2_hits):,} "
        f"({len(re2_hits) / max(1, len(current)):.1%} of the automaton's, "
        f"{re2_in_current:,} of them among its hits; no overlapping hits)"
    )
    rows = [
        Row("prefilter: automaton (Prefilter.find)", automaton_seconds, len(current), "current"),
        Row(f"prefilter: hyperscan ({len(plain)} literals)", hs_seconds, len(hs_hits), "yes"),
        Row("prefilter: re2 (one alternation, finditer)", re2_seconds, len(re2_hits), "no"),
    ]
    if not hs_equal:
        rows[1].equal = "NO"

    # 2. rules
    written = [(rule.name, rule.pattern.source, rule.pattern.flags) for rule in rules.rules]
    relaxed = [
        (name, _LEADING_LOOKBEHIND.sub("", source, count=1), flags)
        for name, source, flags in written
    ]
    print("rule regexes as written:")
    hs_written, re2_written = compile_each(written)
    print("  " + hs_written.summary(len(written)))
    print("  " + re2_written.summary(len(written)))
    print("rule regexes with a leading boundary look-behind dropped:")
    hs_relaxed, re2_relaxed = compile_each(relaxed)
    print("  " + hs_relaxed.summary(len(relaxed)))
    print("  " + re2_relaxed.summary(len(relaxed)))

    actions: dict[str, Callable[[], Any]] = {
        "gate": lambda: gate_rule_pass(chunks, rules, config),
    }
    labels = {"gate": f"rules: gate pass ({len(rules.rules)} rules, validates)"}
    options_re2 = re2_options()
    compile_lines = []
    for tier, hs_compiled, re2_compiled in (
        ("as written", hs_written, re2_written),
        ("look-behind dropped", hs_relaxed, re2_relaxed),
    ):
        if hs_compiled.accepted:
            database, seconds, error = hyperscan_rules(hs_compiled.accepted)
            compile_lines.append(
                f"hyperscan database, {tier}: "
                + (f"{seconds:.3f} s" if database is not None else f"FAILED ({error})")
            )
            if database is not None:
                key = f"hs {tier}"
                actions[key] = partial(hyperscan_count, database, data)
                labels[key] = f"rules: hyperscan, {len(hs_compiled.accepted)} {tier}"
        if re2_compiled.accepted:
            start = time.perf_counter()
            compiled_re2 = [
                re2.compile(re2_source(source, flags), options_re2)
                for _, source, flags in re2_compiled.accepted
            ]
            compile_lines.append(f"re2 rules, {tier}: {time.perf_counter() - start:.3f} s")
            compiled_re = [re.compile(source, flags) for _, source, flags in re2_compiled.accepted]
            key = f"re2 {tier}"
            actions[key] = partial(per_rule_counts, compiled_re2, data)
            labels[key] = f"rules: re2, {len(compiled_re2)} {tier}"
            actions[f"re {tier}"] = partial(per_rule_counts, compiled_re, text)
            labels[f"re {tier}"] = f"rules: python re, same {len(compiled_re)} {tier}"
    print("compile: " + "; ".join(compile_lines))
    measured = best_of(actions, rounds)
    for key, (result, seconds) in measured.items():
        hits = result if isinstance(result, int) else sum(result)
        equal = "-"
        if key.startswith("re2 "):
            reference = measured["re " + key.removeprefix("re2 ")][0]
            equal = "yes" if result == reference else "NO (per-rule counts differ)"
        elif key.startswith("re "):
            equal = "reference"
        elif key == "gate":
            equal = "spans"
        rows.append(Row(labels[key], seconds, hits, equal))

    print()
    print(table(rows, size))
    print(
        "note: the gate pass is not equal work: it runs all rules (prefilter included) and "
        "validates hits into spans; the engines only match the rules they accept, and "
        "hyperscan counts every match end (overlapping)"
    )
    gate_seconds = measured["gate"][1]
    hs_key = "hs look-behind dropped"
    rules_line = (
        f"rules: hyperscan compiles {len(hs_written.accepted)}/{len(written)} as written, "
        f"{len(hs_relaxed.accepted)} with the look-behind dropped; re2 "
        f"{len(re2_written.accepted)} and {len(re2_relaxed.accepted)}"
    )
    if hs_key in measured:
        rules_line += (
            f" (of {len(written)}); hyperscan's one pass over its {len(hs_relaxed.accepted)} "
            f"takes {measured[hs_key][1] / gate_seconds:.2f}x the time of the gate's rule pass"
        )
    saved = automaton_seconds - hs_seconds
    print(
        f"conclusion: prefilter: hyperscan {ratio(automaton_seconds, hs_seconds)} as fast as "
        f"the automaton (same hits: {'yes' if hs_equal else 'no'}), saving {saved * 1000:.0f} ms"
        f" = {saved / gate_seconds:.0%} of the gate's rule pass; re2 "
        f"{ratio(automaton_seconds, re2_seconds)} as fast, "
        f"{len(re2_hits) / max(1, len(current)):.1%} of the hits; {rules_line}"
    )


if __name__ == "__main__":
    main()
