"""`stet gate scan | redact | check`: the gate from the command line and from pre-commit."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pygit2

from stet_lsp.core.errors import StetError
from stet_lsp.core.safefs import atomic_write, read_regular
from stet_lsp.gate import gitfiles
from stet_lsp.gate.config import GateConfig, load_config
from stet_lsp.gate.findings import Finding
from stet_lsp.gate.redact import redact_text
from stet_lsp.gate.scan import scan_text

_BINARY_PROBE = 8192


def register(commands: Any) -> None:
    """Add `gate` to the top-level parser's sub-commands."""
    gate = commands.add_parser(
        "gate",
        help="scan for and redact secrets (the redaction gate)",
        description="Static, deterministic secret scanning and redaction for .stet/ artifacts.",
    )
    actions = gate.add_subparsers(dest="gate_command", metavar="ACTION", required=True)

    scan = actions.add_parser("scan", help="report secrets in files (exit 1 if any)")
    scan.add_argument("paths", nargs="+", metavar="PATH", help="files or directories")
    scan.add_argument("--json", action="store_true", help="print findings as JSON")
    _add_config_options(scan)
    scan.set_defaults(func=run_scan)

    redact = actions.add_parser("redact", help="write a redacted copy of a file")
    redact.add_argument("path", metavar="PATH")
    target = redact.add_mutually_exclusive_group()
    target.add_argument("-o", "--output", metavar="OUT", help="write here instead of stdout")
    target.add_argument("--in-place", action="store_true", help="rewrite PATH")
    redact.add_argument("--report", metavar="FILE", help="write the redaction report (JSON)")
    _add_config_options(redact)
    redact.set_defaults(func=run_redact)

    check = actions.add_parser(
        "check",
        help="fail (exit 1) when a .stet/ artifact holds a secret",
        description="Without PATH: every .stet/ file committed in HEAD or staged in the index "
        "(read from git, .stet/cache/ excluded). With PATH: those files on disk.",
    )
    check.add_argument("paths", nargs="*", metavar="PATH")
    check.add_argument("--json", action="store_true", help="print findings as JSON")
    _add_config_options(check)
    check.set_defaults(func=run_check)


def _add_config_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--strict", action="store_true", help="public-repository mode: broader entropy rules"
    )
    parser.add_argument(
        "--env-name",
        action="append",
        default=[],
        metavar="NAME",
        help="redact values assigned to this environment variable (repeatable)",
    )


def _config(args: argparse.Namespace) -> GateConfig:
    found = pygit2.discover_repository(os.getcwd())
    root = Path(os.getcwd())
    if found is not None:
        repository = pygit2.Repository(found)
        root = gitfiles.repository_root(repository)
    return load_config(root, strict=args.strict, env_names=args.env_name)


def _decode(data: bytes) -> str | None:
    """Text, or None for binary content (a NUL byte early on)."""
    if b"\0" in data[:_BINARY_PROBE]:
        return None
    return data.decode("utf-8", "surrogateescape")


def _read(path: Path) -> str | None:
    data = read_regular(path)
    if data is None:
        raise StetError(f"{path}: no such file or directory")
    return _decode(data)


def _files(paths: list[str]) -> Iterator[Path]:
    for name in paths:
        path = Path(name)
        if path.is_dir():
            for root, directories, files in os.walk(path):
                directories[:] = sorted(d for d in directories if d != ".git")
                for file in sorted(files):
                    # A link found in a folder is not followed: it may lead out of the tree.
                    if not os.path.islink(os.path.join(root, file)):
                        yield Path(root) / file
        elif path.exists():
            yield path
        else:
            raise StetError(f"{name}: no such file or directory")


def _emit(findings: list[tuple[str, Finding]], as_json: bool) -> None:
    if as_json:
        payload = {
            "count": len(findings),
            "findings": [{"path": path, **finding.to_dict()} for path, finding in findings],
        }
        print(json.dumps(payload, indent=2))
        return
    for path, finding in findings:
        print(f"{path}:{finding.line + 1}:{finding.column + 1}: {finding.rule} {finding.preview}")


def _scan_files(paths: list[str], config: GateConfig) -> list[tuple[str, Finding]]:
    results: list[tuple[str, Finding]] = []
    for file in _files(paths):
        text = _read(file)
        if text is None:
            continue
        results.extend((str(file), f) for f in scan_text(text, config=config, path=str(file)))
    return results


def run_scan(args: argparse.Namespace) -> int:
    findings = _scan_files(args.paths, _config(args))
    _emit(findings, args.json)
    return 1 if findings else 0


def run_redact(args: argparse.Namespace) -> int:
    source = Path(args.path)
    text = _read(source)
    if text is None:
        raise StetError(f"{args.path}: binary content is not redacted")
    result = redact_text(text, config=_config(args), path=str(source))
    data = result.text.encode("utf-8", "surrogateescape")
    if args.in_place or args.output:
        atomic_write(source if args.in_place else Path(args.output), data)
    else:
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    if args.report:
        report = json.dumps(result.report.to_dict(), indent=2) + "\n"
        atomic_write(Path(args.report), report.encode("utf-8"))
    counts = ", ".join(f"{rule} {n}" for rule, n in result.report.counts().items())
    print(
        f"redacted {result.report.total} span(s){': ' + counts if counts else ''}", file=sys.stderr
    )
    return 0


def run_check(args: argparse.Namespace) -> int:
    config = _config(args)
    if args.paths:
        findings = _scan_files(args.paths, config)
        checked = len({path for path, _ in findings})
    else:
        repository = gitfiles.open_repository()
        artifacts = gitfiles.committed_and_staged(repository)
        findings = []
        for artifact in artifacts:
            text = _decode(artifact.data)
            if text is None:
                continue
            found = scan_text(text, config=config, path=artifact.path)
            findings.extend((artifact.label, finding) for finding in found)
        checked = len(artifacts)
    _emit(findings, args.json)
    if findings:
        print(f"stet gate: {len(findings)} unredacted secret(s) found", file=sys.stderr)
        return 1
    if not args.paths:
        print(f"stet gate: {checked} artifact(s) clean", file=sys.stderr)
    return 0
