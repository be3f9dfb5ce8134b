"""What a command that prints a secret printed (`op read …`, `vault kv get -field=…`), where a
transcript keeps the command and its output apart: a tool call's input in one record, its
result in another, each its own JSON string, so the `printed-secret` rule, which reads the
output on the line after its command, never sees the two together. An importer that paired
them asks here, and the values go to `stream.redact_blocks` as known ones."""

from __future__ import annotations

from stet_lsp.gate.config import GateConfig
from stet_lsp.gate.findings import Finding
from stet_lsp.gate.scan import scan_text


def printed_secrets(
    command: str, output: str, config: GateConfig
) -> tuple[str, list[Finding]] | None:
    """The text a terminal would show (the command's last line, then the output's first) and
    the secrets found in it as what `command` printed; None when there are none."""
    # The rules' modules load each other (rules.py first): through `scan`, loaded above.
    from stet_lsp.gate.rules_generic import PRINTED_SECRET, PRINTING_COMMANDS

    if not any(anchor in command for anchor in PRINTING_COMMANDS):
        return None
    shown = command.rstrip().rsplit("\n", 1)[-1]
    first = output.lstrip("\r\n").split("\n", 1)[0]
    text = f"{shown}\n{first}\n"
    found = [
        finding
        for finding in scan_text(text, config=config, path="printed.txt", cache=None)
        if finding.rule == PRINTED_SECRET.name and finding.offset > len(shown)
    ]
    return (text, found) if found else None
