"""What a session stored before held redacted, found again in the session gated anew: the
values at its markers' places, read from the same events' lines."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pygit2
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
) -> list[tuple[str, int, str]]:
    stored = tmp_path / "session.jsonl"
    stored.write_text("".join(text + "\n" for text in before))
    earlier = RedactedBefore.read([stored], tmp_path, config or GateConfig())
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


def test_an_event_from_another_file_or_line_is_the_same_event(tmp_path: Path) -> None:
    """A file renamed (with others), a record written again further on: what the event holds
    tells it, not where it came from."""
    before = [line("got [REDACTED:npm-auth-token#1] back", file="a.jsonl")]
    for now in (line(f"got {TOKEN} back", file="b.jsonl"), line(f"got {TOKEN} back", number=9)):
        assert values(tmp_path, before, [now]) == [("npm-auth-token", 1, TOKEN)]


def test_an_event_of_another_kind_or_time_or_text_is_another(tmp_path: Path) -> None:
    """The fields before the source and the text up to the marker key the event."""
    before = [line("got [REDACTED:npm-auth-token#1] back")]
    others = [
        line(f"got {TOKEN} back", kind="user_message"),
        line(f"did {TOKEN} back"),
        line(f"got {TOKEN} back").replace('"session":"s"', '"session":"s","time":"t"'),
    ]
    assert values(tmp_path, before, others) == []


def test_a_value_is_read_between_the_texts_around_its_marker(tmp_path: Path) -> None:
    """A window of text either side of a marker finds the value: the text grown further
    on, a field written after it, and a second value apart from the first change nothing."""
    said = "The registry login went through. " * 3
    before = [line(f"{said}It answered [REDACTED:npm-auth-token#1] at once. {said}")]
    now = line(f"{said}It answered {TOKEN} at once. {said}And {OTHER} later.")
    now = now.removesuffix("}") + ',"model":"m"}'
    assert values(tmp_path, before, [now]) == [("npm-auth-token", 1, TOKEN)]


def test_markers_far_apart_are_read_each_in_its_own_window(tmp_path: Path) -> None:
    far = "x" * 300
    before = [line(f"a [REDACTED:npm-auth-token#1] {far} b [REDACTED:generic-secret#2] c")]
    now = [line(f"a {TOKEN} {far}{far} b {OTHER} c")]
    assert values(tmp_path, before, now) == [
        ("generic-secret", 2, OTHER),
        ("npm-auth-token", 1, TOKEN),
    ]


def test_an_event_abandoned_since_is_the_same_event(tmp_path: Path) -> None:
    """A rewind in what the transcript gained since abandons the events before it."""
    before = [line("got [REDACTED:npm-auth-token#1] back")]
    now = [line(f"got {TOKEN} back", abandoned=True)]
    assert values(tmp_path, before, now) == [("npm-auth-token", 1, TOKEN)]


# -- a session imported again through the command line ---------------------------------------

SESSION_A = "aaaaaaaa-1111-4222-8333-444455556666"
SESSION_B = "bbbbbbbb-1111-4222-8333-444455556666"
NPM_TOKEN = "kq8ZrT2vLx9NwB4mYp7Hs"
CARRIED = "[REDACTED:npm-auth-token#1]"
Stet = Callable[..., tuple[int, str, str]]


def imported(stet: Stet, root: Path, source: Path) -> None:
    code, _, err = stet("trajectory", "import", str(source), "-C", str(root))
    assert code == 0, err


def carried_from_another_session(stet: Stet, root: Path, tmp_path: Path) -> Path:
    """Session B's command sets NPM_TOKEN where only the narration's gate sees it: the compose
    carries it into every stored session. The working trajectory's folder."""
    command = ["npm", "config", "set", "//registry.npmjs.org/:_authToken", NPM_TOKEN]
    publish = (
        Transcript(root, SESSION_B, START + timedelta(hours=1))
        .user("Publish the package.")
        .tool("toolu_p", "mcp__shell__exec", {"command": command}, "done")
    )
    imported(stet, root, publish.save(tmp_path / f"{SESSION_B}.jsonl"))
    folder = working_folder(resolve_target(root)).path
    assert [path.name for path in files_holding(folder, NPM_TOKEN)] == []
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
        .say(f"The registry answered {NPM_TOKEN} for the login as {OTHER}.")
    )
    source = first.save(tmp_path / f"{SESSION_A}.jsonl")
    imported(stet, root, source)
    folder = carried_from_another_session(stet, root, tmp_path)

    first.user("How do I set it?").say(f"Run: export API_KEY={OTHER}").save(source)
    imported(stet, root, source)
    assert files_holding(folder, NPM_TOKEN) == []
    assert files_holding(folder, OTHER) == []
    assert (folder / "events.jsonl").read_text().count(CARRIED) == 2


def gemini_message(message_id: str, second: int, content: str, **more: object) -> dict[str, object]:
    stamp = f"2026-03-01T08:00:{second:02d}.000Z"
    kind = "user" if message_id.startswith("u") else "gemini"
    return {"id": message_id, "timestamp": stamp, "type": kind, "content": content, **more}


def test_a_carried_value_stays_redacted_in_a_message_written_again_at_another_line(
    root: Path, tmp_path: Path, stet: Stet
) -> None:
    """Gemini CLI writes a message again, whole, when it changes (its tokens counted): the
    event comes from the later line now, and is the same event."""
    reply = gemini_message("g1", 2, f"The registry answered {NPM_TOKEN} for the login.")
    records: list[dict[str, object]] = [
        {"sessionId": SESSION_A, "projectHash": "7302", "startTime": "2026-03-01T08:00:00Z"},
        gemini_message("u1", 1, "Log in to the registry."),
        reply,
    ]
    source = tmp_path / "chats" / "session-2026-03-01T08-00-aaaaaaaa.jsonl"
    source.parent.mkdir()

    def save() -> None:
        source.write_text("".join(json.dumps(record) + "\n" for record in records))

    save()
    imported(stet, root, source)
    folder = carried_from_another_session(stet, root, tmp_path)

    tokens = {"input": 100, "output": 10, "cached": 0, "thoughts": 0, "tool": 0, "total": 110}
    records += [
        gemini_message("u2", 3, "Thanks."),
        {**reply, "tokens": tokens, "model": "gemini-3-flash-preview"},
        gemini_message("g2", 4, f"Noted; {NPM_TOKEN} is kept in the user's npmrc."),
    ]
    save()
    imported(stet, root, source)
    assert files_holding(folder, NPM_TOKEN) == []
    assert (folder / "events.jsonl").read_text().count(CARRIED) == 3


def test_a_carried_value_stays_redacted_when_the_session_file_and_its_subagents_are_renamed(
    root: Path, tmp_path: Path, stet: Stet
) -> None:
    """A Claude Code session file renamed with the folder of its subagents' files: every
    source file has another name, and each event is the same."""
    first = (
        Transcript(root, SESSION_A)
        .user("Log in to the registry.")
        .say(f"The registry answered {NPM_TOKEN} for the login.")
    )
    helper = Transcript(root, "acheck1", START + timedelta(seconds=30))
    helper.user("Check the login.").say(f"{NPM_TOKEN} logs in.")
    for record in helper.records:
        record.update(sessionId=SESSION_A, isSidechain=True, agentId="acheck1")
    source = first.save(tmp_path / f"{SESSION_A}.jsonl")
    helper.save(tmp_path / SESSION_A / "subagents" / "agent-acheck1.jsonl")
    imported(stet, root, source)
    folder = carried_from_another_session(stet, root, tmp_path)
    assert (folder / "events.jsonl").read_text().count(CARRIED) == 3

    moved = tmp_path / "moved"
    moved.mkdir()
    (tmp_path / SESSION_A).rename(moved / "renamed")
    source = first.user("Thanks.").say("Done.").save(moved / "renamed.jsonl")
    imported(stet, root, source)
    assert files_holding(folder, NPM_TOKEN) == []
    assert (folder / "events.jsonl").read_text().count(CARRIED) == 3


def test_a_carried_value_stays_redacted_in_what_a_session_brings_after_a_capstone(
    repo: pygit2.Repository, root: Path, tmp_path: Path, stet: Stet
) -> None:
    """The capstone commits the session with the carried value redacted, and the working
    trajectory starts anew. The session goes on, naming the value again: imported, it brings
    only what came since, where no rule sees the value; the committed trajectory's events of
    the part it holds show the value redacted, and it stays so in what came since."""
    repo.config["user.name"] = "Ada Reviewer"
    repo.config["user.email"] = "ada@example.invalid"
    first = (
        Transcript(root, SESSION_A)
        .user("Log in to the registry.")
        .say(f"The registry answered {NPM_TOKEN} for the login.")
    )
    source = first.save(tmp_path / f"{SESSION_A}.jsonl")
    imported(stet, root, source)
    carried_from_another_session(stet, root, tmp_path)
    code, _, err = stet("capstone", "-C", str(root))
    assert code == 0, err

    first.user("Thanks.").say(f"Noted; {NPM_TOKEN} is kept in the user's npmrc.").save(source)
    imported(stet, root, source)
    folder = working_folder(resolve_target(root)).path
    assert files_holding(root / ".stet", NPM_TOKEN) == []
    assert (folder / "events.jsonl").read_text().count(CARRIED) == 1
