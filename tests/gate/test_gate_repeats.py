"""A value the gate found once is redacted wherever it stands again in the same text
(stet_lsp/gate/repeats.py), before or after the place it was found, in one text or a
stream of chunks; words and short values are not looked for again."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from claude_transcript import Transcript
from repos import make_repo

from stet_lsp.core.errors import StetError
from stet_lsp.core.targets import resolve_target
from stet_lsp.gate import GateConfig, redact_text, scan_text
from stet_lsp.gate.repeats import repeatable
from stet_lsp.gate.scan import CHUNK_SIZE
from stet_lsp.gate.stream import Carried, redact_blocks, redact_runs, scan_blocks, text_blocks
from stet_lsp.trajectory.importing import import_transcript
from stet_lsp.trajectory.store import working_folder

TOKEN = "k9Qm2xR7tLw4Zp8Vn3Hc6Jd1"
MARKER = "[REDACTED:secret-assignment#1]"


def test_a_value_found_once_is_redacted_everywhere_with_its_marker() -> None:
    text = (
        f"la valeur (é✓) est {TOKEN}\n"
        f"export API_TOKEN={TOKEN}\n"
        f"curl -H 'X-Custom: {TOKEN}' https://api.example.com\n"
        f"echo {TOKEN}{TOKEN}\n"
    )
    result = redact_text(text, path="run.sh", cache=None)
    assert TOKEN not in result.text
    assert result.text.count(MARKER) == 5
    assert [f.line for f in scan_text(text, path="run.sh", cache=None)] == [0, 1, 2, 3, 3]
    assert redact_text(result.text, path="run.sh", cache=None).text == result.text


def test_in_a_transcript_an_echoed_value_goes_and_the_json_stays_valid() -> None:
    records = [
        {
            "type": "assistant",
            "message": {"content": [{"type": "text", "text": f"I'll use {TOKEN}"}]},
        },
        {"type": "user", "content": [{"type": "tool_result", "content": f"API_TOKEN={TOKEN}\n"}]},
        {
            "type": "assistant",
            "message": {"content": [{"type": "text", "text": f"`{TOKEN}` works"}]},
        },
    ]
    text = "".join(json.dumps(record) + "\n" for record in records)
    redacted = redact_text(text, path="session.jsonl", cache=None).text
    assert TOKEN not in redacted
    assert [json.loads(line) for line in redacted.splitlines()]  # still JSON Lines


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("APP_ENV=development\nrun in development mode\n", "development"),  # words alone
        ("API_TOKEN=Zq8#k2\nZq8#k2 again\n", "Zq8#k2 again"),  # too short to look for
    ],
)
def test_words_and_short_values_are_not_looked_for_again(text: str, kept: str) -> None:
    config = GateConfig(env_names=frozenset({"APP_ENV", "API_TOKEN"}))
    redacted = redact_text(text, config=config, path=".env", cache=None).text
    assert redacted.splitlines()[0].endswith("#1]")  # the value where its name says so
    assert kept in redacted


def _stream(found_late: bool) -> str:
    """Two chunks at least: the echo (whole and in part) in the first, the assignment that
    gives the value away in the last (or the other way round)."""
    echo = json.dumps({"type": "assistant", "content": f"I used {TOKEN} ({TOKEN[:16]}…)"})
    found = json.dumps({"type": "tool_result", "content": f"export API_TOKEN={TOKEN}"})
    filler = [json.dumps({"type": "tool_result", "content": "x" * 2000})] * (CHUNK_SIZE // 1000)
    lines = [echo, *filler, found] if found_late else [found, *filler, echo]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("parallel", [False, True])
@pytest.mark.parametrize("found_late", [False, True])
def test_a_stream_redacts_a_value_found_in_any_chunk_in_every_chunk(
    parallel: bool, found_late: bool
) -> None:
    text = _stream(found_late)
    data = text.encode("utf-8")

    def blocks() -> list[str]:
        return list(text_blocks(io.BytesIO(data), 1 << 16))

    written: list[str] = []
    report = redact_blocks(blocks, GateConfig(), "e.jsonl", written.append, parallel=parallel)
    whole = redact_text(text, path="e.jsonl", cache=None)
    assert "".join(written) == whole.text
    assert TOKEN[:16] not in whole.text and whole.text.count(MARKER) == 3
    assert report.counts() == {"secret-assignment": 3}
    scanned = scan_blocks(blocks, GateConfig(), "e.jsonl", parallel=parallel)
    assert scanned.findings == scan_text(text, path="e.jsonl", cache=None)


def test_a_file_that_changes_between_the_two_readings_is_an_error() -> None:
    texts = iter([_stream(True), _stream(True).replace("x" * 2000, "y" * 2000, 1)])
    with pytest.raises(StetError, match="changed while it was read"):
        redact_blocks(lambda: [next(texts)], GateConfig(), "e.jsonl", lambda _: None)


def test_undecodable_bytes_beside_a_repeated_value() -> None:
    """A file's bytes that are not UTF-8 stay as lone surrogates in its text: the value is
    looked for there too."""
    data = f"export API_TOKEN={TOKEN}\n".encode() + b"\xff" + f"{TOKEN}\n".encode()
    text = "".join(text_blocks(io.BytesIO(data)))
    assert "\udcff" in text
    redacted = redact_text(text, path="run.sh", cache=None).text
    assert TOKEN not in redacted and redacted.count(MARKER) == 2


def test_runs_redact_a_value_in_the_runs_after_the_one_it_was_found_in() -> None:
    runs = ["before: nothing here\n", f"API_TOKEN={TOKEN}\n", f"then {TOKEN} again\n"]
    out = list(redact_runs(range(3), runs.__getitem__, GateConfig(), "n.md", {}))
    assert out == [runs[0], f"API_TOKEN={MARKER}\n", f"then {MARKER} again\n"]


def test_values_one_document_found_are_redacted_in_the_json_of_another() -> None:
    """What the narration's gate finds is carried into events.jsonl: the same marker, in the
    JSON's own writing of the value (a quote escaped), the JSON still valid."""
    quoted = 'k9Qm2xR7"tLw4Zp8Vn3'
    runs = [f"API_TOKEN={TOKEN}\n", f"DB_PASSWORD='{quoted}'\n"]
    carried = Carried()
    gated = "".join(
        redact_runs(range(2), runs.__getitem__, GateConfig(), "n.md", {}, carried=carried)
    )
    assert TOKEN not in gated and quoted not in gated
    lines = [
        json.dumps({"command": ["app", "--profile", TOKEN]}),
        json.dumps({"note": f"the password is {quoted}"}),
        json.dumps({"note": "nothing here"}),
    ]
    counts: dict[str, int] = {}

    shown = list(carried.redact_json_lines(lines, "events.jsonl", counts))

    assert json.loads(shown[0]) == {"command": ["app", "--profile", MARKER]}
    second = json.loads(shown[1])["note"]
    assert quoted not in second and second.startswith("the password is [REDACTED:")
    assert second.removeprefix("the password is ") in gated  # the narration's own marker
    assert shown[2] == lines[2]
    assert sum(counts.values()) == 2


def test_a_value_that_ends_a_summary_leaves_the_closing_tag() -> None:
    """The narration shows a command in `<summary>…</summary>`: a password that ends the
    command is redacted, the tag stays (and the value is found again further on)."""
    text = f'<summary>Tool: Bash — redis-cli -a {TOKEN}</summary>\n\n    "{TOKEN}"\n'
    redacted = redact_text(text, path="narration.md", cache=None).text
    assert redacted == (
        "<summary>Tool: Bash — redis-cli -a [REDACTED:cli-password#1]</summary>\n\n"
        '    "[REDACTED:cli-password#1]"\n'
    )


def test_an_imported_session_keeps_no_copy_of_a_token_the_agent_repeated(
    tmp_path: Path,
) -> None:
    """The agent reads a token from `.env`, then quotes it back in its reply and in a command
    of its own, and its first characters in a summary: neither events.jsonl nor narration.md
    keeps any of it."""
    repo = make_repo(tmp_path / "repo", files={"README.md": "hi\n"})
    root = Path(repo.workdir).resolve()
    session = "00000001-1111-4222-8333-444455556666"
    source = (
        Transcript(root, session)
        .user("Call the staging API")
        .tool("toolu_1", "Bash", {"command": "cat .env"}, f"API_TOKEN={TOKEN}\n")
        .tool("toolu_2", "Bash", {"command": f"curl -H 'X-Custom: {TOKEN}' https://a"}, "ok")
        .say(f"Done: the call went through with {TOKEN}.")
        .say(f"(The token starts {TOKEN[:16]}…; rotate it after the demo.)")
        .save(tmp_path / f"{session}.jsonl")
    )
    import_transcript(resolve_target(root), source)
    folder = working_folder(resolve_target(root)).path
    for name in ("events.jsonl", "narration.md"):
        written = (folder / name).read_text(encoding="utf-8")
        assert TOKEN[:12] not in written and TOKEN[-12:] not in written, name
        assert MARKER in written, name


def test_a_copy_stands_as_a_token_of_its_own_and_json_stays_valid() -> None:
    """A number that holds a found password is no copy of it, nor is a JSON number; in JSON
    a copy is one only on whole escape sequences inside a string (after `\\n` it is one)."""
    lines = [
        {"cmd": "mysql -uroot -p12345678 app"},
        {"timestamp": 1712345678901, "port": 12345678, "said": "x 12345678 y"},
        {"cmd": "export API_TOKEN=e9AZZG6bVce1"},
        {"out": "café9AZZG6bVce1 and line\ne9AZZG6bVce1\n"},
    ]
    text = "".join(json.dumps(line) + "\n" for line in lines)  # é as \u00e9
    redacted = redact_text(text, path="session.jsonl", cache=None).text
    records = [json.loads(line) for line in redacted.splitlines()]
    assert records[1] == {
        "timestamp": 1712345678901,
        "port": 12345678,
        "said": "x [REDACTED:cli-password#1] y",
    }
    assert records[3] == {"out": f"café9AZZG6bVce1 and line\n{MARKER}\n"}
    plain = redact_text("mysql -pab12cd34 x\ngit checkout 9fab12cd34e1\n", path="r.sh", cache=None)
    assert plain.text.endswith("git checkout 9fab12cd34e1\n")


def test_overlapping_copies_are_one_span_and_letters_alone_are_looked_for() -> None:
    text = (
        "API_TOKEN=Qx7Zq8vK2mP9\nDB_PASSWORD=mP9xLr4TbW3k\necho Qx7Zq8vK2mP9xLr4TbW3k\n"
        "export SERVICE_TOKEN=QfpGamJvHSDURXpqvGUF\ncurl -H 'X-Custom: QfpGamJvHSDURXpqvGUF'\n"
    )
    redacted = redact_text(text, path="run.sh", cache=None).text
    assert "xLr4TbW3k" not in redacted and "Qx7Zq8vK2m" not in redacted
    assert "QfpGamJvHSDURXpqvGUF" not in redacted


def test_an_automaton_searched_again_and_again_finds_the_same_copies() -> None:
    """After a few searches the values are searched for by a DFA: the same spans."""
    from stet_lsp.gate.repeats import _SEARCHES_BEFORE_DFA, Repeats
    from stet_lsp.gate.spans import Span

    values = ["Qx7Zq8vK2mP9", "mP9xLr4TbW3k", "QfpGamJvHSDURXpqvGUF", "Qx7Zq8vK2mP9xLr4"]
    head = "".join(f"K{i}={value}\n" for i, value in enumerate(values))
    spans = [
        Span(head.index(value), head.index(value) + len(value), "secret-assignment", 0)
        for value in values
    ]
    texts = [
        "echo Qx7Zq8vK2mP9xLr4TbW3k é✓ QfpGamJvHSDURXpqvGUF\n",
        "ü QfpGamJvHSDURXpqvGUFQfpGamJvHSDURXpqvGUF mP9xLr4TbW3k\n",
        "nothing\n",
    ]
    repeats = Repeats()
    repeats.add(head, spans)
    first = [repeats.spans(text, []) for text in texts]
    assert first[0] and first[1] and not first[2]
    for _ in range(_SEARCHES_BEFORE_DFA + 2):
        assert [repeats.spans(text, []) for text in texts] == first


def test_key_blocks_are_left_to_their_own_rule() -> None:
    """A long value is not looked for again (an automaton of hundreds of key blocks took
    gigabytes): a key block's own rule finds it wherever it stands."""
    keys = [
        "-----BEGIN OPENSSH PRIVATE KEY-----\n"
        + "\n".join(
            f"b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAA{n:06d}{i:04d}" for i in range(60)
        )
        + "\n-----END OPENSSH PRIVATE KEY-----\n"
        for n in range(300)
    ]
    assert not any(repeatable(key.strip()) for key in keys)
    result = redact_text("".join(keys), path="keys.txt", cache=None)
    assert "b3BlbnNzaC1y" not in result.text
    assert result.report.counts() == {"private-key": 300}


def test_code_a_generic_rule_took_for_a_value_is_not_looked_for_again() -> None:
    """Seen in public transcripts: a call or an f-string's subscript after a token's name,
    and a printed token's first characters (a JWT's header alone). Each may be taken where
    it stands; its copies elsewhere are more code, not a secret."""
    text = (
        'access_token = create_access_token({"sub": user.id})\n'
        "then create_access_token({'sub': 2}) again\n"
        "print(f\"New refresh token: {new_tokens['refresh_token'][:20]}...\")\n"
        "x = {new_tokens['a']}\n"
        "New refresh token: eyJhbGciOiJIUzI1NiIs...\n"
        "first refresh token created: eyJhbGciOiJIUzI1NiIs...\n"
    )
    redacted = redact_text(text, path="run.py", cache=None).text
    assert "then create_access_token({'sub': 2}) again" in redacted
    assert "x = {new_tokens['a']}" in redacted
    assert "first refresh token created: eyJhbGciOiJIUzI1NiIs...\n" in redacted


def test_a_long_value_printed_truncated_is_redacted_with_its_marker() -> None:
    """`no part of a secret survives`: its first or last characters printed alone, before or
    after the place it was found, under its marker; another value that only starts alike
    runs on past them and stays, and so do too few characters past a format's prefix."""
    github = "ghp_" + TOKEN + "Ab12Cd34Ef56"
    text = (
        f"the key starts {TOKEN[:14]}… and ends …{TOKEN[-13:]} as you said\n"
        f"export API_TOKEN={TOKEN}\n"
        f"echo ${{API_TOKEN:0:16}} prints {TOKEN[:16]}\n"
        f"ends with ...{TOKEN[-13:]}\n"
        f"another: {TOKEN[:14]}Zz99Yy88Xx77 stays\n"
        f"export GITHUB_TOKEN={github}\n"
        f"gh says: Token: {github[:13]}*************\n"
        f"too little: {github[:11]}...\n"
    )
    result = redact_text(text, path="run.sh", cache=None)
    lines = result.text.splitlines()
    assert lines[:4] == [
        f"the key starts {MARKER}… and ends …{MARKER} as you said",
        f"export API_TOKEN={MARKER}",
        f"echo ${{API_TOKEN:0:16}} prints {MARKER}",
        f"ends with ...{MARKER}",
    ]
    assert lines[4] == f"another: {TOKEN[:14]}Zz99Yy88Xx77 stays"
    assert lines[6] == "gh says: Token: [REDACTED:github-token#1]*************"
    assert lines[7] == f"too little: {github[:11]}..."
    assert redact_text(result.text, path="run.sh", cache=None).text == result.text


def test_in_json_a_part_of_a_value_goes_and_the_json_stays_valid() -> None:
    records = [
        {"type": "user", "content": f"export API_TOKEN={TOKEN}"},
        {"type": "assistant", "content": f"Set. It begins {TOKEN[:15]}...\n{TOKEN[-12:]}"},
        {"type": "tool_result", "content": "xxxxxxxxxxxxxxxxxxxxxxxxxxxx " * 40},
    ]
    text = "".join(json.dumps(record) + "\n" for record in records)
    redacted = redact_text(text, path="session.jsonl", cache=None).text
    said = [json.loads(line)["content"] for line in redacted.splitlines()]
    assert said[1] == f"Set. It begins {MARKER}...\n{MARKER}"
    assert said[2] == records[2]["content"]


def test_parts_of_values_that_start_alike_take_the_marker_of_the_one_they_hold() -> None:
    """Two tokens sharing their first characters: a part takes the number of the one it is
    a part of; values a rule found keep numbers of their own, even one that starts another
    (`Xk9q2LmWp4Tz` and `Xk9q2LmWp4Tz7Q9r`)."""
    other = TOKEN[:12] + "ZZzz99YYyy88"
    text = (
        f"export API_TOKEN={TOKEN}\nexport OTHER_TOKEN={other}\nmasked {other[:16]}…\n"
        "export A_TOKEN=Xk9q2LmWp4Tz\nexport B_TOKEN=Xk9q2LmWp4Tz7Q\nexport C_TOKEN=0Xk9q2LmWp4Tz\n"
        "export D_TOKEN=Xk9q2LmWp4Tz7Q9r\n"
    )
    lines = redact_text(text, path="run.sh", cache=None).text.splitlines()
    numbers = [line.rsplit("#", 1)[-1] for line in lines]
    assert numbers == ["1]", "2]", "2]…", "3]", "4]", "5]", "6]"]


def test_a_part_holds_characters_past_what_every_key_of_its_format_starts_with() -> None:
    """The prefix of a format with several (Square's `EAAA` and `sq0`) is known; PyPI's
    macaroon header and a Slack token's workspace and user numbers are public, so text
    naming them stays, while a part of the token past them goes."""
    square = "EAAA" + "lZ8nQ2xK7tRm4Wp9Vb3Hc6Jd1Fg5Ys0Ue8Ai2Oq7Nk4Mr9Lt3Bx6Cv1Zw5"
    pypi = "pypi-AgEIcHlwaS5vcmcCJDk3ZjM0YjVhLWJlZWYtNDc3Zi1hYjFkLTFmYjA1ZDg2NWQ0MwACKlsz" + TOKEN
    slack = "xoxb-1234567890123-9876543210987-" + TOKEN[::-1]
    text = (
        f"square: {square}\nhead: {square[:20]}…\n"
        f"TWINE_PASSWORD={pypi}\ntokens start pypi-AgEIcHlwaS5vcmc… here\n"
        f"SLACK_BOT_TOKEN={slack}\nworkspace xoxb-1234567890123-… and …{slack[-16:]}\n"
    )
    lines = redact_text(text, path="run.sh", cache=None).text.splitlines()
    assert lines[1] == "head: [REDACTED:square-token#1]…"
    assert lines[3] == "tokens start pypi-AgEIcHlwaS5vcmc… here"
    assert lines[5] == "workspace xoxb-1234567890123-… and …[REDACTED:slack-token#1]"


def test_more_public_heads_stay() -> None:
    """Every prefix a format allows is public (Slack's `xoxe.xoxp-1-`, `xapp-1-` and its app's
    number), and so is base64 JSON after or within it (a 1Password service account's
    `ops_eyJ…`) and a JWT in base64 (`ZXlK…`)."""
    refresh = "xoxe.xoxp-1-Mi0yLTQ1NjE3ODkwMTIzLTk4NzY1NDMyMTA5ODc" + TOKEN
    app = "xapp-1-A0123456789-1234567890123-" + TOKEN[::-1] + "ab12cd34ef56ab12cd34"
    ops = "ops_eyJzaWduSW5BZGRyZXNzIjoibXkuMXBhc3N3b3JkLmNvbSIsInVzZXJBdXRoIjp7Im1ldGhvZCI6" + TOKEN
    text = (
        f"token: {refresh}\nrefresh tokens look like xoxe.xoxp-1-… here\n"
        f"token: {app}\napp tokens look like xapp-1-A0123456789-… here\n"
        f"OP_SERVICE_ACCOUNT_TOKEN={ops}\nthey start ops_eyJzaWduSW5BZGRyZXNz… here\n"
    )
    lines = redact_text(text, path="run.sh", cache=None).text.splitlines()
    assert lines[0].startswith("token: [REDACTED:") and lines[2].startswith("token: [REDACTED:")
    assert lines[1] == "refresh tokens look like xoxe.xoxp-1-… here"
    assert lines[3] == "app tokens look like xapp-1-A0123456789-… here"
    assert lines[5] == "they start ops_eyJzaWduSW5BZGRyZXNz… here"


def test_a_last_part_after_an_escape_in_json_is_redacted() -> None:
    """Read back from its end, a part may run into the escape before it (`\\u2026`, whose
    last digit the value holds): it starts after the escape, and goes."""
    value = "Ab3dEf5GhJ7kLm9NpQ2R6t4VwX8yZzQqW"
    records = [{"c": f"export API_TOKEN={value}"}, {"c": f"it ends …{value[-12:]} ok"}]
    text = "".join(json.dumps(record) + "\n" for record in records)  # … as \u2026
    redacted = redact_text(text, path="s.jsonl", cache=None).text
    said = [json.loads(line)["c"] for line in redacted.splitlines()]
    assert said[1] == "it ends …[REDACTED:secret-assignment#1] ok"


def test_a_value_whose_first_characters_stand_again_inside_it() -> None:
    """A copy read on inside another (the value repeats its first characters) still starts
    a copy of its own: no 12 characters of the value are left."""
    value = "Qa7-Zb9-Qa7-Zb9-Qa7-Xy4Wk2Lm"
    text = f"export API_TOKEN={value}\nlog: Qa7-Zb9-Qa7-Zb9-Qa7-Zb9-Qa7-Xy4W…\n"
    redacted = redact_text(text, path="run.sh", cache=None).text
    assert "Qa7-Xy4W" not in redacted


def test_a_stream_numbers_copies_glued_together_as_the_whole_text_does() -> None:
    """Two values glued in a later chunk are one copy of neither: a stream learns only what
    rules found, as the whole text does, and writes the same bytes."""
    one, two = "Hq7Zr2Mx9LpWaB3cD4eF5gH6", "D4eF5gH6Jk8Lm2Nn4Pp6Qq8"
    head = [
        json.dumps({"c": f"export ONE_TOKEN={one}"}),
        json.dumps({"c": f"export TWO_TOKEN={two}"}),
    ]
    filler = [json.dumps({"type": "tool_result", "content": "x" * 2000})] * (CHUNK_SIZE // 1000)
    tail = [json.dumps({"c": f"{one[:16]}… and {one}{two[8:]}"})]
    text = "\n".join([*head, *filler, *tail]) + "\n"
    data = text.encode("utf-8")

    def blocks() -> list[str]:
        return list(text_blocks(io.BytesIO(data), 1 << 16))

    written: list[str] = []
    redact_blocks(blocks, GateConfig(), "e.jsonl", written.append)
    whole = redact_text(text, path="e.jsonl", cache=None).text
    assert "".join(written) == whole
    last = json.loads(whole.splitlines()[-1])["c"]
    assert last.startswith("[REDACTED:secret-assignment#1]… and [REDACTED:")


# A secret holding a backslash (a Python literal: one backslash), and a tool's output that
# printed it in a JSON config.
BACKSLASHED = "Zr7\\qW3nB5tY8z"
CONFIG = json.dumps({"db": {"secret": BACKSLASHED}})


@pytest.mark.parametrize(
    ("text", "path"),
    [
        # The config shown as it is (a narration's tool output): escaped once.
        (f"{CONFIG}\nDone. OK {BACKSLASHED}\n", "narration.md"),
        # The config in a transcript's line: escaped twice; the message once, as JSON does.
        (
            json.dumps({"content": CONFIG + "\n"})
            + "\n"
            + json.dumps({"text": f"Done. OK {BACKSLASHED}"})
            + "\n",
            "events.jsonl",
        ),
    ],
)
def test_a_value_found_json_escaped_is_redacted_where_it_stands_decoded(
    text: str, path: str
) -> None:
    """A value found in a JSON document (its backslash written `\\\\`, or `\\\\\\\\` in a
    JSON string) is the same secret as the value written bare in an agent's message, and
    takes the same marker there."""
    result = redact_text(text, path=path, cache=None)
    assert "qW3nB5tY8z" not in result.text
    assert result.text.count("[REDACTED:secret-assignment#1]") == 2
    assert "#2]" not in result.text
    assert redact_text(result.text, path=path, cache=None).text == result.text
    if path.endswith(".jsonl"):
        assert [json.loads(line) for line in result.text.splitlines()]


def test_a_value_found_json_escaped_in_a_stream_and_in_the_json_of_another() -> None:
    """The same in a stream of chunks, and carried from the narration into the events'
    JSON, under the narration's marker."""
    text = f"{CONFIG}\n" + "filler line\n" * (CHUNK_SIZE // 12) + f"Done. OK {BACKSLASHED}\n"
    data = text.encode("utf-8")
    written: list[str] = []
    redact_blocks(
        lambda: list(text_blocks(io.BytesIO(data), 1 << 16)), GateConfig(), "n.md", written.append
    )
    assert "qW3nB5tY8z" not in "".join(written)
    assert "".join(written).count("[REDACTED:secret-assignment#1]") == 2

    carried = Carried()
    runs = [f"{CONFIG}\n"]
    gated = "".join(
        redact_runs(range(1), runs.__getitem__, GateConfig(), "n.md", {}, carried=carried)
    )
    assert "qW3nB5tY8z" not in gated
    line = json.dumps({"text": f"Done. OK {BACKSLASHED}"})
    counts: dict[str, int] = {}
    shown = list(carried.redact_json_lines([line], "events.jsonl", counts))
    assert json.loads(shown[0]) == {"text": "Done. OK [REDACTED:secret-assignment#1]"}


def test_an_imported_session_keeps_no_value_a_printed_json_config_held(tmp_path: Path) -> None:
    """The agent prints a JSON config whose values hold a quote and a backslash, then names
    both values bare: narration.md and events.jsonl keep none of either, each value under one
    marker everywhere."""
    quoted = 'Xk9"mQ2vLp8rT4'
    repo = make_repo(tmp_path / "repo", files={"README.md": "hi\n"})
    root = Path(repo.workdir).resolve()
    session = "00000001-1111-4222-8333-444455556666"
    config = json.dumps({"password": quoted, "db": {"secret": BACKSLASHED}})
    source = (
        Transcript(root, session)
        .user("Check the config")
        .tool("toolu_1", "Bash", {"command": "cat config.json"}, config + "\n")
        .say(f"Done. OK {quoted} {BACKSLASHED}")
        .save(tmp_path / f"{session}.jsonl")
    )
    import_transcript(resolve_target(root), source)
    folder = working_folder(resolve_target(root)).path
    for name in ("events.jsonl", "narration.md"):
        written = (folder / name).read_text(encoding="utf-8")
        assert "Xk9" not in written and "mQ2vLp8rT4" not in written, name
        assert "Zr7" not in written and "qW3nB5tY8z" not in written, name
        assert written.count("[REDACTED:secret-assignment#1]") == 2, name
        assert written.count("[REDACTED:secret-assignment#2]") == 2, name


@pytest.mark.parametrize(
    "value",
    [
        'Xk9"mQ2vLp8rT4wZ',  # an escaped quote
        'Xk9"mQ2vLp8 rT4wZq',  # an escaped quote, a blank after it
        "Xk9mQ2vLp8rT4wZ\\",  # an escaped backslash that the closing quote follows
        'Xk9mQ2vLp8rT4wZ\\"q',  # an escaped backslash, then an escaped quote
    ],
)
@pytest.mark.parametrize("where", ["input", "result"])
def test_an_imported_session_keeps_no_part_of_an_escaped_json_value(
    tmp_path: Path, value: str, where: str
) -> None:
    """A value with escaped quotes or backslashes in a tool call's input, or in the JSON
    config its output prints (compact, as a tool writes it): events.jsonl and narration.md
    keep none of it, and the key after it stays."""
    repo = make_repo(tmp_path / "repo", files={"README.md": "hi\n"})
    root = Path(repo.workdir).resolve()
    session = "00000001-1111-4222-8333-444455556666"
    config = {"password": value, "x": "kept"}
    tool_input: dict[str, object] = {"command": "deploy"}
    output = "deployed\n"
    if where == "input":
        tool_input["config"] = config
    else:
        output = json.dumps(config, separators=(",", ":")) + "\n"
    source = (
        Transcript(root, session)
        .user("Deploy it")
        .tool("toolu_1", "Bash", tool_input, output)
        .say("Done.")
        .save(tmp_path / f"{session}.jsonl")
    )
    import_transcript(resolve_target(root), source)
    folder = working_folder(resolve_target(root)).path
    for name in ("events.jsonl", "narration.md"):
        written = (folder / name).read_text(encoding="utf-8")
        assert "mQ2vLp8" not in written and "rT4wZ" not in written, name
    events = [json.loads(line) for line in (folder / "events.jsonl").open(encoding="utf-8")]
    if where == "input":
        (call,) = [event for event in events if event["kind"] == "tool_call"]
        shown = call["input"]["config"]
    else:
        (result,) = [event for event in events if event["kind"] == "tool_result"]
        shown = json.loads(result["output"])
    assert shown["x"] == "kept" and re.fullmatch(r"\[REDACTED:[a-z-]+#1\]", shown["password"])
