"""Comment lexer speed on 5 MB of real source: a full lex, as opening a long file does.

Run: python bench/bench_lexer.py [--size-mb 5] [--rounds 7] [--baseline REV]

The texts: the Python standard library's modules (this interpreter's `Lib/*.py`, then its
packages, in name order) and npm's JavaScript (`--js DIR`, default the system's
`/usr/lib/node_modules/npm`; skipped when absent), each concatenated until `--size-mb`. Each
is lexed whole (`CommentIndex(lines, syntax)`) and in the server's steps of `LEX_STEP` lines
(`lex_steps`), by this tree's lexer and, with `--baseline REV`, by `stet_lsp/core/comments.py`
as it stands at REV (`git show`), interleaved round by round; the best of `--rounds` counts
(the machine may be shared). Beside the seconds: the comments found (the same count from
both lexers says they agree on the input, unless REV lexes some form differently).
"""

from __future__ import annotations

import argparse
import glob
import importlib.util
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from stet_lsp.core import comments
from stet_lsp.server.documents import LEX_STEP

ROOT = Path(__file__).resolve().parents[1]


def text_of(paths: list[str], size: int) -> list[str]:
    parts: list[str] = []
    total = 0
    for path in paths:
        part = Path(path).read_text(encoding="utf-8", errors="replace")
        parts.append(part)
        total += len(part.encode())
        if total >= size:
            break
    return "".join(parts).split("\n")


def baseline(revision: str) -> ModuleType:
    source = subprocess.run(
        ["git", "show", f"{revision}:stet_lsp/core/comments.py"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    folder = Path(tempfile.mkdtemp())
    (folder / "comments_baseline.py").write_text(source)
    spec = importlib.util.spec_from_file_location(
        "comments_baseline", folder / "comments_baseline.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["comments_baseline"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def full(module: ModuleType, lines: list[str], language: str) -> Callable[[], int]:
    def run() -> int:
        index = module.CommentIndex(lines, module.SYNTAXES[language])
        return sum(map(len, index.comments))

    return run


def stepped(module: ModuleType, lines: list[str], language: str) -> Callable[[], int]:
    def run() -> int:
        index = module.CommentIndex([], module.SYNTAXES[language])
        for _ in index.lex_steps(lines, LEX_STEP):
            pass
        return sum(map(len, index.comments))

    return run


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size-mb", type=float, default=5)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--baseline", help="a git revision whose lexer to measure beside")
    parser.add_argument("--js", default="/usr/lib/node_modules/npm")
    arguments = parser.parse_args()
    size = int(arguments.size_mb * 1_000_000)
    library = sysconfig.get_paths()["stdlib"]
    inputs = [
        (
            "python",
            text_of(
                sorted(glob.glob(f"{library}/*.py")) + sorted(glob.glob(f"{library}/*/*.py")),
                size,
            ),
        )
    ]
    scripts = sorted(glob.glob(f"{arguments.js}/**/*.js", recursive=True))
    if scripts:
        inputs.append(("javascript", text_of(scripts, size)))
    lexers = [("this tree", comments)]
    if arguments.baseline:
        lexers.insert(0, (arguments.baseline, baseline(arguments.baseline)))
    print(f"{'input':<12}{'lexer':<14}{'how':<8}{'lines':>9}{'MB':>6}{'best s':>9}{'comments':>10}")
    for language, lines in inputs:
        megabytes = sum(len(line.encode()) + 1 for line in lines) / 1e6
        for how, make in (("whole", full), ("steps", stepped)):
            runs = [(name, make(module, lines, language)) for name, module in lexers]
            best = {name: float("inf") for name, _ in runs}
            found = {}
            for _ in range(arguments.rounds):
                for name, run in runs:
                    start = time.perf_counter()
                    found[name] = run()
                    best[name] = min(best[name], time.perf_counter() - start)
            for name, _ in runs:
                print(
                    f"{language:<12}{name:<14}{how:<8}{len(lines):>9}{megabytes:>6.1f}"
                    f"{best[name]:>9.3f}{found[name]:>10}"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
