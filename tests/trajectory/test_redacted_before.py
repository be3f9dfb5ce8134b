"""What a session stored before held redacted, found again in the session gated anew: the
values at its markers' places, read from the same events' lines."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

from claude_transcript import START, Transcript

from stet_lsp.core.targets import resolve_target
from stet_lsp.gate.allowlist import Allowlist
from stet_lsp.gate.config import GateConfig
from stet_lsp.trajectory.redacted_before import RedactedBefore
from stet_lsp.trajectory.store import working_folder

TOKEN = "kq8ZrT2vLx9NwB4mYp7Hs"
OTHER = "Zp4Wq9LmT2xR7vKc8NbY"


def line(
    text: str,
    file: str = "a.jsonl",
    number: int = 2,
    kind: str = "agent_message",
    abandoned: bool = False,
) -> str:
    event: dict[str, object] = {
        "kind": kind,
        "session": "s",
        "source": {"file": file, "line": number},
    }
    if abandoned:
        event["abandoned"] = True
    event["text"] = text
    return json.dumps(event, ensure_ascii=False, separators=(",", ":"))


def values(
    tmp_path: Path,
    before: list[str],
    now: list[str],
    config: GateConfig | None = None,
    names: tuple[list[str], list[str]] = (["a.jsonl"], ["a.jsonl"]),
) -> list[tuple[str, int, str]]:
    stored = tmp_path / "session.jsonl"
    stored.write_text("".join(text + "\n" for text in before))
    earlier = RedactedBefore.read(stored, tmp_path, config or GateConfig(), *names)
    if earlier is None:
        return []
    text = "".join(text + "\n" for text in now)
    # Cut anywhere: a line may cross from one chunk into the next.
    chunks = [text[:37], text[37:90], text[90:]]
    return sorted(earlier.values(iter(chunks)))


def test_the_values_at_the_markers_of_the_same_event_are_found(tmp_path: Path) -> None:
    before = [
        line("starting", number=1, kind="user_message"),
        line("got [REDACTED:npm-auth-token#1] and [REDACTED:generic-secret#3] back"),
    ]
    now = [
        line("starting", number=1, kind="user_message"),
        line(f"got {TOKEN} and {OTHER} back"),
        line(f"{TOKEN} again", number=3),
    ]
    assert values(tmp_path, before, now) == [
        ("generic-secret", 3, OTHER),
        ("npm-auth-token", 1, TOKEN),
    ]


def test_a_value_is_read_inside_its_string_escapes_and_all(tmp_path: Path) -> None:
    """A value holds no quote but an escaped one: the text after a marker that closes its
    string is found where the string closes, not inside the value."""
    value = 'Qm9x"Ly7Tz8Kp2'
    event = {"kind": "tool_call", "session": "s", "source": {"file": "a.jsonl", "line": 2}}
    before = {**event, "input": {"a": "[REDACTED:generic-secret#1]", "b": "[REDACTED:jwt#2]"}}
    now = {**event, "input": {"a": value, "b": OTHER}}
    lines = [json.dumps(e, separators=(",", ":")) for e in (before, now)]
    assert values(tmp_path, lines[:1], lines[1:]) == [
        ("generic-secret", 1, json.dumps(value)[1:-1]),
        ("jwt", 2, OTHER),
    ]


def test_nothing_is_found_where_the_line_is_redacted_too_or_reads_otherwise(
    tmp_path: Path,
) -> None:
    """A marker in both lines (another number, even) holds no value; another event at the
    same place, or text that no value could be (a word), gives none either; neither does a
    value the allowlist allows now."""
    before = [
        line("got [REDACTED:npm-auth-token#1] back"),
        line("it is [REDACTED:generic-secret#1]", number=3),
        line("said [REDACTED:generic-secret#2]", number=4),
        line("key [REDACTED:generic-secret#3]", number=5),
    ]
    now = [
        line("got [REDACTED:npm-auth-token#2] back"),
        line("it was something else entirely", number=3),
        line("said development", number=4),
        line(f"key {OTHER}", number=5),
    ]
    allowed = GateConfig(allowlist=Allowlist.from_entries([OTHER], []))
    assert values(tmp_path, before, now, allowed) == []
    assert values(tmp_path, before, now) == [("generic-secret", 3, OTHER)]


def test_a_renamed_source_file_is_the_same_file(tmp_path: Path) -> None:
    before = [line("got [REDACTED:npm-auth-token#1] back", file="a.jsonl")]
    now = [line(f"got {TOKEN} back", file="a2.jsonl")]
    renamed = (["a.jsonl"], ["a2.jsonl"])
    assert values(tmp_path, before, now, names=renamed) == [("npm-auth-token", 1, TOKEN)]
    assert values(tmp_path, before, now) == []


def test_an_event_abandoned_since_is_the_same_event(tmp_path: Path) -> None:
    """A rewind in what the transcript gained since abandons the events before it."""
    before = [line("got [REDACTED:npm-auth-token#1] back")]
    now = [line(f"got {TOKEN} back", abandoned=True)]
    assert values(tmp_path, before, now) == [("npm-auth-token", 1, TOKEN)]


# -- a session imported again through the command line ---------------------------------------

SESSION_A = "aaaaaaaa-1111-4222-8333-444455556666"
SESSION_B = "bbbbbbbb-1111-4222-8333-444455556666"
CARRIED = "[REDACTED:npm-auth-token#1]"
Stet = Callable[..., tuple[int, str, str]]


def imported(stet: Stet, root: Path, source: Path) -> None:
    code, _, err = stet("trajectory", "import", str(source), "-C", str(root))
    assert code == 0, err


def carried_from_another_session(stet: Stet, root: Path, tmp_path: Path) -> Path:
    """Session B's command sets TOKEN where only the narration's gate sees it: the compose
    carries it into every stored session. The working trajectory's folder."""
    command = ["npm", "config", "set", "//registry.npmjs.org/:_authToken", TOKEN]
    publish = (
        Transcript(root, SESSION_B, START + timedelta(hours=1))
        .user("Publish the package.")
        .tool("toolu_p", "mcp__shell__exec", {"command": command}, "done")
    )
    imported(stet, root, publish.save(tmp_path / f"{SESSION_B}.jsonl"))
    folder = working_folder(resolve_target(root)).path
    assert files_holding(folder, TOKEN) == []
    return folder


def files_holding(folder: Path, value: str) -> list[Path]:
    return [
        path for path in sorted(folder.rglob("*")) if path.is_file() and value in path.read_text()
    ]


def test_a_carried_value_stays_redacted_on_a_line_whose_other_text_is_redacted_now(
    root: Path, tmp_path: Path, stet: Stet
) -> None:
    """The line that held the carried marker also shows a value the grown session gives away
    (an assignment a rule sees): gated again, the line has a new marker beside the value
    carried into it, and is still the line that held it redacted."""
    first = (
        Transcript(root, SESSION_A)
        .user("Log in to the registry.")
        .say(f"The registry answered {TOKEN} for the login as {OTHER}.")
    )
    source = first.save(tmp_path / f"{SESSION_A}.jsonl")
    imported(stet, root, source)
    folder = carried_from_another_session(stet, root, tmp_path)
    assert CARRIED in (folder / "events.jsonl").read_text()

    first.user("How do I set it?").say(f"Run: export API_KEY={OTHER}").save(source)
    imported(stet, root, source)
    assert files_holding(folder, TOKEN) == []
    assert files_holding(folder, OTHER) == []
    assert (folder / "events.jsonl").read_text().count(CARRIED) == 2


def test_a_carried_value_stays_redacted_on_a_line_whose_other_text_was_redacted_already(
    root: Path, tmp_path: Path, stet: Stet
) -> None:
    """The line that held the carried marker held a marker of the gate's own too, for a value
    its session gives away then as now: the value carried into it is still read."""
    first = (
        Transcript(root, SESSION_A)
        .user("Log in to the registry.")
        .say(f"The registry answered {TOKEN}; run export API_KEY={OTHER} next.")
    )
    source = first.save(tmp_path / f"{SESSION_A}.jsonl")
    imported(stet, root, source)
    folder = carried_from_another_session(stet, root, tmp_path)
    assert files_holding(folder, OTHER) == []

    first.user("Thanks.").say("Noted.").save(source)
    imported(stet, root, source)
    assert files_holding(folder, TOKEN) == []
    assert files_holding(folder, OTHER) == []
    assert (folder / "events.jsonl").read_text().count(CARRIED) == 2


def test_a_text_within_a_value_found_again_is_no_value_of_its_own(
    root: Path, tmp_path: Path, stet: Stet
) -> None:
    """Two keys printed one after the other are two markers with a line break between them:
    read again before any marker, the first key's own first line is the text between them.
    The gate finds both keys again, so nothing is read for them, and a reply that quotes that
    first line keeps it (and both keys keep their numbers)."""
    keys = [
        "-----BEGIN RSA PRIVATE KEY-----\n"
        + "\n".join(body[i : i + 64] for i in range(0, len(body), 64))
        + "\n-----END RSA PRIVATE KEY-----"
        for body in (
            "MIIEow" + "Kq8ZrT2vLx9NwB4mYp7Hs" * 19,
            "MIIEpA" + "Qm3Vb8Xc2Zn5Lk7Jh4Gf6" * 19,
        )
    ]
    first = (
        Transcript(root, SESSION_A)
        .user("Show both keys.")
        .tool("toolu_1", "Bash", {"command": "cat a.pem b.pem"}, "\n".join(keys) + "\n")
    )
    source = first.save(tmp_path / f"{SESSION_A}.jsonl")
    imported(stet, root, source)
    folder = working_folder(resolve_target(root)).path
    events = (folder / "events.jsonl").read_text()
    assert "[REDACTED:private-key#1]\\n[REDACTED:private-key#2]" in events

    quoted = "Its first line reads -----BEGIN RSA PRIVATE KEY----- and nothing else."
    first.say(quoted).save(source)
    imported(stet, root, source)
    events = (folder / "events.jsonl").read_text()
    assert quoted in events
    assert "[REDACTED:private-key#1]\\n[REDACTED:private-key#2]" in events
