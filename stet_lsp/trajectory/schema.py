"""The open format as JSON Schema (draft 2020-12), generated from the models of events.py and
meta.py. docs/schema/ holds the generated files; after a model changes, regenerate them with
`python -m stet_lsp.trajectory.schema` (a test fails until they match)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from stet_lsp.trajectory.events import EVENT_ADAPTER, SCHEMA_VERSION
from stet_lsp.trajectory.meta import Meta

DIALECT = "https://json-schema.org/draft/2020-12/schema"
BASE_URI = "https://stet.dev/schema"
EVENT_FILE = "trajectory-event.schema.json"
META_FILE = "trajectory-meta.schema.json"
DEFAULT_FOLDER = Path("docs") / "schema"


def event_schema() -> dict[str, Any]:
    """One line of events.jsonl: an object of one of the event kinds, chosen by `kind`."""
    schema = EVENT_ADAPTER.json_schema()
    for definition in schema["$defs"].values():
        # `kind` has a default in each model, but a line without it names no kind: readers
        # (Stet's own among them) reject it, so the schema requires it.
        if "kind" in definition.get("properties", {}):
            definition["required"] = ["kind", *definition.get("required", [])]
    return _headed(
        schema,
        "trajectory-event",
        "Stet trajectory event",
        f"One line of a trajectory's events.jsonl (format {SCHEMA_VERSION}): one JSON object "
        "whose `kind` says which event it is. Fields left at their default are omitted.",
    )


def meta_schema() -> dict[str, Any]:
    """A trajectory's meta.json."""
    return _headed(
        Meta.model_json_schema(),
        "trajectory-meta",
        "Stet trajectory meta.json",
        f"A trajectory's header (format {SCHEMA_VERSION}), computed from its events and the "
        "records of its import: target, base commit, harnesses, models, times, token and cost "
        "totals, files changed, the redaction report and the transcripts it came from.",
    )


def schema_texts() -> dict[str, str]:
    """The file name and exact text of each schema file, as write_schemas writes them."""
    return {EVENT_FILE: _text(event_schema()), META_FILE: _text(meta_schema())}


def write_schemas(folder: Path) -> list[Path]:
    """Both schema files in `folder` (made if missing); the same models give the same bytes."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in schema_texts().items():
        path = folder / name
        path.write_text(text, encoding="utf-8", newline="\n")
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m stet_lsp.trajectory.schema",
        description="Write the trajectory format's JSON Schema files.",
    )
    parser.add_argument(
        "folder", nargs="?", type=Path, default=DEFAULT_FOLDER, help="default: docs/schema"
    )
    args = parser.parse_args(argv)
    for path in write_schemas(args.folder):
        print(path)
    return 0


def _headed(schema: dict[str, Any], name: str, title: str, description: str) -> dict[str, Any]:
    """The schema with its identity first, then pydantic's keys in pydantic's order."""
    body = {key: value for key, value in schema.items() if key not in ("title", "description")}
    return {
        "$schema": DIALECT,
        "$id": f"{BASE_URI}/{name}-{SCHEMA_VERSION}.json",
        "title": title,
        "description": description,
        **body,
    }


def _text(schema: dict[str, Any]) -> str:
    return json.dumps(schema, ensure_ascii=False, indent=2) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
