"""The aider chat history importer: hand-written histories in aider's own shapes, odd input,
and the public sample."""

from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path
from typing import TypeVar

import pytest
from samples import sample

from stet_lsp.core.errors import StetError
from stet_lsp.trajectory.events import (
    AgentMessage,
    Commit,
    Error,
    EventBase,
    FileChange,
    RawEvent,
    Reasoning,
    SessionEnd,
    SessionStart,
    ToolCall,
    Usage,
    UserMessage,
)
from stet_lsp.trajectory.importers.aider import IMPORTERS

AIDER = IMPORTERS["aider"]
Kind = TypeVar("Kind", bound=EventBase)

# Two runs as aider writes them: `> ` output and `#### ` input end in two spaces (written `¶`
# here), answers are bare Markdown after a blank line.
HISTORY = """
# aider chat started at 2025-07-15 11:38:37

> /usr/bin/aider¶
> Aider v0.85.1¶
> Main model: gpt-4o with diff edit format¶
> Weak model: gpt-4o-mini¶
> Git repo: .git with 16 files¶

#### add a greeting¶
#### and a farewell¶

<think>
The user wants two functions.
</think>

Here are the edits:

hello.py
```python
<<<<<<< SEARCH
def main():
    pass
=======
def main():
    print("hello")
>>>>>>> REPLACE
```

bye.py
```python
<<<<<<< SEARCH
=======
print("bye")
>>>>>>> REPLACE
```

other.py
```python
<<<<<<< SEARCH
x = 1
=======
x = 2
>>>>>>> REPLACE
```

> Tokens: 2.3k sent, 1.2k cache write, 5.0k cache hit, 150 received.
Cost: $0.01 message, $0.05 session.¶
> bye.py¶
> Create new file? (Y)es/(N)o [Yes]: y¶
> Applied edit to hello.py¶
> Applied edit to bye.py¶
> Commit abc1234 feat: greet and say goodbye¶
> mkdir -p out                               ¶
touch out/a.txt out/b.txt out/c.txt out/d.txt¶
> Run shell commands? (Y)es/(N)o/(D)on't ask again [Yes]: y¶
> Running mkdir -p out¶
> You can use /undo to undo and discard each aider commit.¶

#### /add util.py¶
> Added util.py to the chat¶

#### Add file to the chat? (Y)es/(N)o/(A)ll/(S)kip all/(D)on't ask again [Yes]: all¶

#### fix util¶

util.py
```python
<<<<<<< SEARCH
a = 1
=======
a = 10
>>>>>>> REPLACE
```

util.py
```python
<<<<<<< SEARCH
b = 2
=======
b = 20
>>>>>>> REPLACE
```

> Tokens: 11k sent, 338 received. Cost: $0.03 message, $0.08 session.¶
> The LLM did not conform to the edit format.¶
> https://aider.chat/docs/troubleshooting/edit-errors.html¶
> # 1 SEARCH/REPLACE block failed to match!

## SearchReplaceNoExactMatch: This SEARCH block failed to exactly match lines in util.py
<<<<<<< SEARCH
b = 2
=======
b = 20
>>>>>>> REPLACE

The SEARCH section must exactly match an existing block of lines including all white space, comments, indentation, docstrings, etc

# The other 1 SEARCH/REPLACE block were applied successfully.
Don't re-send them.
Just reply with fixed versions of the block above that failed to match.¶
> Commit def5678 fix: util¶

#### /model claude-3-5-sonnet¶
> Aider v0.85.1¶
> Main model: claude-3-5-sonnet with whole edit format¶

#### rewrite notes¶

> quoted in the answer

notes.txt
```
all new
```

> Tokens: 1,234 sent, 56 received. Cost: $0.000123 request, $0.09 session.¶
> Applied edit to notes.txt¶
>¶
> ^C KeyboardInterrupt¶

# aider chat started at 2025-07-16 09:00:00

> Aider v0.86.0¶
> Model: gpt-4.1 with diff edit format¶

#### hi¶

Hello!

> Tokens: 900 sent, 5 received.¶
""".replace("¶", "  ")


def write(tmp_path: Path, text: str | bytes, name: str = ".aider.chat.history.md") -> Path:
    path = tmp_path / name
    if isinstance(text, str):
        path.write_text(text, encoding="utf-8")
    else:
        path.write_bytes(text)
    return path


def of(events: list[EventBase], kind: type[Kind]) -> list[Kind]:
    return [event for event in events if isinstance(event, kind)]


def line_of(text: str, needle: str) -> int:
    return next(n for n, line in enumerate(text.split("\n"), 1) if line.startswith(needle))


def test_runs_are_sessions_of_their_own(tmp_path: Path) -> None:
    path = write(tmp_path, HISTORY)
    parsed = AIDER.parse(path)
    first = next(line for line in path.read_bytes().splitlines() if line.strip())
    digest = hashlib.sha256(first).hexdigest()[:16]  # the first run's start line
    assert parsed.session_id == digest
    assert parsed.sources == {path.name: path}
    starts = of(parsed.events, SessionStart)
    ends = of(parsed.events, SessionEnd)
    assert [s.session for s in starts] == [f"{digest}-1", f"{digest}-2"]
    assert [e.session for e in ends] == [f"{digest}-1", f"{digest}-2"]
    first, second = starts
    assert isinstance(first, SessionStart) and isinstance(second, SessionStart)
    assert (first.harness, first.harness_version, first.model) == ("aider", "0.85.1", "gpt-4o")
    assert first.time == "2025-07-15T11:38:37"
    assert first.source.line == 2
    assert (second.harness_version, second.model, second.time) == (
        "0.86.0",
        "gpt-4.1",
        "2025-07-16T09:00:00",
    )
    # Every run's events sit between its start and its end.
    kinds = [event.kind for event in parsed.events]
    assert kinds[0] == "session_start" and kinds[-1] == "session_end"
    assert kinds.count("session_start") == kinds.count("session_end") == 2
    end_first = parsed.events.index(ends[0])
    assert parsed.events[end_first + 1] is second
    assert isinstance(ends[0], SessionEnd) and ends[0].reason == "interrupted"
    assert all(event.step == 0 and event.agent is None for event in parsed.events)
    assert all(event.source.file == path.name for event in parsed.events)


def test_user_input_answers_and_reasoning(tmp_path: Path) -> None:
    parsed = AIDER.parse(write(tmp_path, HISTORY))
    users = [event.text for event in of(parsed.events, UserMessage)]
    assert users == [
        "add a greeting\nand a farewell",
        "/add util.py",
        "fix util",
        "/model claude-3-5-sonnet",
        "rewrite notes",
        "hi",
    ]
    first_user = of(parsed.events, UserMessage)[0]
    assert first_user.source.line == line_of(HISTORY, "#### add a greeting")
    reasoning = of(parsed.events, Reasoning)
    assert [r.text for r in reasoning] == ["The user wants two functions."]
    answers = of(parsed.events, AgentMessage)
    first = answers[0]
    assert isinstance(first, AgentMessage)
    assert first.text.startswith("Here are the edits:\n\nhello.py\n```python\n<<<<<<< SEARCH")
    assert first.source.line == line_of(HISTORY, "Here are the edits:")
    assert first.model == "gpt-4o"
    # A quote inside an answer (no two-space line end) stays in the answer.
    notes = next(a for a in answers if "notes.txt" in a.text)
    assert isinstance(notes, AgentMessage)
    assert notes.text.startswith("> quoted in the answer\n\nnotes.txt")
    assert notes.model == "claude-3-5-sonnet"
    # A question answered by an earlier "all" is aider's output, not the user's.
    raws = [r.record for r in of(parsed.events, RawEvent)]
    assert any(str(r).startswith("Add file to the chat?") for r in raws)
    assert any("Weak model: gpt-4o-mini" in str(r) for r in raws)
    assert any("Added util.py to the chat" in str(r) for r in raws)


def test_applied_edits_become_file_changes(tmp_path: Path) -> None:
    parsed = AIDER.parse(write(tmp_path, HISTORY))
    changes = of(parsed.events, FileChange)
    assert [(c.path, c.operation) for c in changes] == [
        ("hello.py", "modify"),
        ("bye.py", "create"),
        ("util.py", "modify"),
        ("notes.txt", "modify"),
    ]
    hello, bye, util, notes = changes
    assert isinstance(hello, FileChange)
    assert not hello.anchored
    assert hello.diff.startswith("--- a/hello.py\n+++ b/hello.py\n@@ -1,2 +1,2 @@\n")
    assert '+    print("hello")\n' in hello.diff and "-    pass\n" in hello.diff
    assert (hello.added, hello.removed) == (1, 1)
    assert hello.source.line == line_of(HISTORY, "> Applied edit to hello.py")
    assert isinstance(bye, FileChange)
    assert bye.anchored and bye.content == 'print("bye")\n'
    assert bye.diff.startswith("--- /dev/null\n+++ b/bye.py\n@@ -0,0 +1 @@\n")
    # other.py was proposed but never applied: it stays in the answer only.
    assert "other.py" not in {c.path for c in changes}
    # The failure report says the other block was applied: a = 10, not b = 20.
    assert isinstance(util, FileChange)
    assert "+a = 10\n" in util.diff and "b = 20" not in util.diff
    # `whole` edit format: the listing is the file's new content.
    assert isinstance(notes, FileChange)
    assert notes.content == "all new\n" and notes.diff == ""


def test_a_search_replace_block_in_whole_format_is_the_whole_file(tmp_path: Path) -> None:
    """In `whole` format aider writes each fenced listing as the file, whatever it holds: a
    SEARCH/REPLACE block the model wrote anyway is one applied edit with the markers in
    it, not a second edit read the other way (as in a public history)."""
    history = """# aider chat started at 2025-07-15 10:00:00

> Aider v0.85.1¶
> Main model: claude-3-5-sonnet with whole edit format¶

#### fix the check¶

check.py
```python
<<<<<<< SEARCH
old = 1
=======
new = 2
>>>>>>> REPLACE
```

> Tokens: 1,234 sent, 56 received.¶
> Applied edit to check.py¶
""".replace("¶", "  ")
    changes = of(AIDER.parse(write(tmp_path, history)).events, FileChange)
    assert [c.path for c in changes] == ["check.py"]
    assert changes[0].content == "<<<<<<< SEARCH\nold = 1\n=======\nnew = 2\n>>>>>>> REPLACE\n"


def test_a_path_the_model_wrote_with_a_leading_dot_is_the_repository_path(
    tmp_path: Path,
) -> None:
    """aider reports the name the model wrote (`./report.md`, in a public history): the change
    is to `report.md`, the name every other change to that file has."""
    history = """# aider chat started at 2026-04-22 22:40:12

> Aider v0.86.2¶
> Main model: gpt-4.1 with whole edit format¶

#### write the report¶

./report.md
```markdown
# Report
```

> Tokens: 1.2k sent, 30 received.¶
> ./report.md¶
> Create new file? (Y)es/(N)o [Yes]: y¶
> Applied edit to ./report.md¶

#### and the notes¶

./docs/notes.md
```
one
```

> Tokens: 1.3k sent, 20 received.¶
> Applied edit to ./docs/notes.md¶
""".replace("¶", "  ")
    changes = of(AIDER.parse(write(tmp_path, history)).events, FileChange)
    assert [(c.path, c.operation) for c in changes] == [
        ("report.md", "create"),
        ("docs/notes.md", "modify"),
    ]
    assert changes[0].diff.startswith("--- /dev/null\n+++ b/report.md\n")
    assert changes[0].content == "# Report\n"
    assert changes[1].content == "one\n"


def test_original_updated_blocks_of_aider_in_2023(tmp_path: Path) -> None:
    """aider of mid-2023 (a public history) wrote its edits as `<<<<<<< ORIGINAL` …
    `>>>>>>> UPDATED` blocks, the path inside the fence: every applied edit was a change
    without a diff or content."""
    history = """# aider chat started at 2023-07-09 16:04:08

> /opt/homebrew/bin/aider ./¶
> Model: gpt-4¶
> Git repo: .git¶

#### NameError: name 'sys' is not defined¶

Add the import:

```python
game/main.py
<<<<<<< ORIGINAL
import pygame
=======
import pygame
import sys
>>>>>>> UPDATED
```

And the constant:

```python
game/main.py
<<<<<<< ORIGINAL
FPS = 15
=======
FPS = 30
>>>>>>> UPDATED
```

> Applied edit to game/main.py¶
> Commit 06f2242 aider: Added the import.¶
""".replace("¶", "  ")
    changes = of(AIDER.parse(write(tmp_path, history)).events, FileChange)
    assert [(c.path, c.operation) for c in changes] == [
        ("game/main.py", "modify"),
        ("game/main.py", "modify"),
    ]
    imported, constant = changes
    assert imported.diff.startswith("--- a/game/main.py\n+++ b/game/main.py\n")
    assert "+import sys\n" in imported.diff and (imported.added, imported.removed) == (1, 0)
    assert "-FPS = 15\n+FPS = 30\n" in constant.diff


def test_the_creation_question_of_older_aider(tmp_path: Path) -> None:
    """Older aider asked `Allow creation of new file <path>? y` where it now asks `Create new
    file?` (public histories of 0.48.1 and of 2023): the files it made from an empty SEARCH
    were modifications of an empty file, not created files with their content."""
    history = """# aider chat started at 2024-08-08 13:15:45

> Aider v0.48.1¶
> Main model: claude-3-5-sonnet-20240620 with diff edit format¶

#### set up the app¶

app.py
```python
<<<<<<< SEARCH
=======
import streamlit as st
>>>>>>> REPLACE
```

requirements.txt
```
<<<<<<< SEARCH
=======
streamlit
>>>>>>> REPLACE
```

notes.md
```
<<<<<<< SEARCH
=======
# Notes
>>>>>>> REPLACE
```

> Tokens: 5,359 sent, 961 received. Cost: $0.03 request, $0.03 session.¶
> Allow creation of new file app.py? y¶
> Allow creation of new file requirements.txt? yes¶
> Add requirements.txt to git? y¶
> Allow creation of new file notes.md? n¶
> Skipping edits to notes.md¶
> Applied edit to app.py¶
> Applied edit to requirements.txt¶
""".replace("¶", "  ")
    changes = of(AIDER.parse(write(tmp_path, history)).events, FileChange)
    assert [(c.path, c.operation, c.content) for c in changes] == [
        ("app.py", "create", "import streamlit as st\n"),
        ("requirements.txt", "create", "streamlit\n"),
    ]
    assert changes[0].diff.startswith("--- /dev/null\n+++ b/app.py\n@@ -0,0 +1 @@\n")


def test_the_model_lines_of_older_aider(tmp_path: Path) -> None:
    """Older aider announced its two models on one `Models:` line (a public 0.48.1 history),
    and in 2023 the model alone (`Model: gpt-4`): the runs had no model, their answers and
    usage none to be priced by, and a `whole` edit format went unseen."""
    history = """# aider chat started at 2024-08-08 13:15:45

> Aider v0.48.1¶
> Models: claude-3-5-sonnet-20240620 with whole edit format, weak model claude-3-haiku-20240307¶
> Git repo: .git with 1 files¶

#### rewrite the notes¶

notes.md
```
all new
```

> Tokens: 5,359 sent, 961 received. Cost: $0.03 request, $0.03 session.¶
> Applied edit to notes.md¶

# aider chat started at 2023-07-09 16:04:08

> Model: gpt-4¶
> Git repo: .git¶

#### hi¶

Hello.
""".replace("¶", "  ")
    parsed = AIDER.parse(write(tmp_path, history))
    sonnet = "claude-3-5-sonnet-20240620"
    assert [s.model for s in of(parsed.events, SessionStart)] == [sonnet, "gpt-4"]
    assert [a.model for a in of(parsed.events, AgentMessage)] == [sonnet, "gpt-4"]
    assert [u.model for u in of(parsed.events, Usage)] == [sonnet]
    changes = of(parsed.events, FileChange)
    assert [(c.path, c.content) for c in changes] == [("notes.md", "all new\n")]


def test_a_model_line_that_marks_infinite_output(tmp_path: Path) -> None:
    """aider 0.50 marked a model that can go on past its output limit with `♾️` before the
    edit format (`Model: deepseek/deepseek-coder with ♾️ diff edit format`, a public
    history): the run had no model."""
    history = """# aider chat started at 2024-08-20 21:00:03

> Aider v0.50.1¶
> Model: deepseek/deepseek-coder with ♾️ whole edit format¶

#### rewrite the notes¶

notes.md
```
all new
```

> Tokens: 4,012 sent, 80 received. Cost: $0.0006 message, $0.0006 session.¶
> Applied edit to notes.md¶

# aider chat started at 2024-08-20 21:16:13

> Aider v0.50.1¶
> Models: claude-3-5-sonnet-20240620 with ♾️ diff edit format, weak model claude-3-haiku-20240307¶

#### hi¶

Hello.
""".replace("¶", "  ")
    parsed = AIDER.parse(write(tmp_path, history))
    deepseek, sonnet = "deepseek/deepseek-coder", "claude-3-5-sonnet-20240620"
    assert [s.model for s in of(parsed.events, SessionStart)] == [deepseek, sonnet]
    assert [a.model for a in of(parsed.events, AgentMessage)] == [deepseek, sonnet]
    assert [u.model for u in of(parsed.events, Usage)] == [deepseek]
    changes = of(parsed.events, FileChange)
    assert [(c.path, c.content) for c in changes] == [("notes.md", "all new\n")]


def test_unified_diff_edits(tmp_path: Path) -> None:
    """With the `udiff` edit format (aider 0.19 on, announced `using udiff edit format` then)
    the model writes each edit as a unified diff in a `diff` fence, its hunks headed `@@ ...
    @@` without line numbers (a public 0.19.1 history): the run had no model, and every
    applied edit was a change without a diff or content."""
    history = """# aider chat started at 2023-12-30 11:20:27

> Aider v0.19.1¶
> Model: gpt-4-1106-preview using udiff edit format¶

#### write the game¶

Here are the diffs:

`Game.java`:
```diff
--- /dev/null
+++ Game.java
@@ ... @@
+public class Game {
+    private int size = 6;
+}
```

`Board.java`:
```diff
--- Board.java
+++ Board.java
@@ ... @@
 public class Board {
-    int cells;
+    int cells = 36;
     int rows;
@@ ... @@
     void reset() {
-        cells = 0;
+        cells = 36;
     }
```

> Allow creation of new file Game.java? y¶
> Applied edit to Game.java¶
> Applied edit to Board.java¶
> Commit b23ad35 aider: Write the game.¶
""".replace("¶", "  ")
    parsed = AIDER.parse(write(tmp_path, history))
    assert of(parsed.events, SessionStart)[0].model == "gpt-4-1106-preview"
    changes = of(parsed.events, FileChange)
    assert [(c.path, c.operation) for c in changes] == [
        ("Game.java", "create"),
        ("Board.java", "modify"),
        ("Board.java", "modify"),
    ]
    game, first, second = changes
    assert game.content == "public class Game {\n    private int size = 6;\n}\n"
    assert first.diff == (
        "--- a/Board.java\n+++ b/Board.java\n@@ -1,3 +1,3 @@\n"
        " public class Board {\n-    int cells;\n+    int cells = 36;\n     int rows;\n"
    )
    assert "-        cells = 0;\n+        cells = 36;\n" in second.diff


def test_head_updated_blocks_and_a_quoted_merge_conflict(tmp_path: Path) -> None:
    """Between ORIGINAL/UPDATED and SEARCH/REPLACE aider wrote `<<<<<<< HEAD` …
    `>>>>>>> updated` blocks. A merge conflict an answer quotes opens with the same line but
    ends with another: it is no edit, and the edit after it is read as it was written."""
    history = """# aider chat started at 2023-10-02 09:00:00

> Model: gpt-4 with diff edit format¶

#### resolve the conflict¶

The file holds:

```
<<<<<<< HEAD
x = 1
=======
x = 2
>>>>>>> feature
```

conf.py
```python
<<<<<<< HEAD
x = 1
=======
x = 3
>>>>>>> updated
```

> Applied edit to conf.py¶
""".replace("¶", "  ")
    changes = of(AIDER.parse(write(tmp_path, history)).events, FileChange)
    assert [(c.path, c.operation) for c in changes] == [("conf.py", "modify")]
    assert "-x = 1\n+x = 3\n" in changes[0].diff
    # In a SEARCH/REPLACE history a quoted conflict stays out of the edits just the same.
    modern = history.replace("> Model: gpt-4 with", "> Main model: gpt-4o with")
    modern = modern.replace(
        "<<<<<<< HEAD\nx = 1\n=======\nx = 3\n>>>>>>> updated",
        "<<<<<<< SEARCH\nx = 1\n=======\nx = 3\n>>>>>>> REPLACE",
    )
    changes = of(AIDER.parse(write(tmp_path, modern)).events, FileChange)
    assert [c.diff.count("+x = 3\n") for c in changes] == [1]


def test_paths_aider_wrote_on_windows_are_the_repository_paths(tmp_path: Path) -> None:
    """aider on Windows lists the chat's files as `app\\components\\Footer.tsx`, and the model
    names them so above its blocks (a public 0.50.1 history): the change was to a file named
    with backslashes, not to `app/components/Footer.tsx`, which other changes name."""
    history = """# aider chat started at 2024-08-20 14:08:19

> Aider v0.50.1¶
> Main model: claude-3-5-sonnet-20240620 with diff edit format¶

#### restyle the footer¶

app\\components\\Footer.tsx
```tsx
<<<<<<< SEARCH
<footer>
=======
<footer className="dark">
>>>>>>> REPLACE
```

app\\components\\Legal.tsx
```tsx
<<<<<<< SEARCH
=======
export const Legal = () => null;
>>>>>>> REPLACE
```

> Tokens: 7,919 sent, 413 received. Cost: $0.03 message, $0.07 session.¶
> app\\components\\Legal.tsx¶
> Create new file? (Y)es/(N)o [Yes]: y¶
> Applied edit to app\\components\\Footer.tsx¶
> Applied edit to app\\components\\Legal.tsx¶
""".replace("¶", "  ")
    changes = of(AIDER.parse(write(tmp_path, history)).events, FileChange)
    assert [(c.path, c.operation) for c in changes] == [
        ("app/components/Footer.tsx", "modify"),
        ("app/components/Legal.tsx", "create"),
    ]
    assert changes[0].diff.startswith(
        "--- a/app/components/Footer.tsx\n+++ b/app/components/Footer.tsx\n"
    )
    assert changes[1].diff.startswith("--- /dev/null\n+++ b/app/components/Legal.tsx\n")
    # A path with slashes is not a Windows path: its backslash is no separator.
    escaped = history.replace("app\\components\\Legal.tsx", "app/components/Le\\_gal.tsx")
    changes = of(AIDER.parse(write(tmp_path, escaped)).events, FileChange)
    assert [c.path for c in changes] == ["app/components/Footer.tsx", "app/components/Le\\_gal.tsx"]


def test_edits_in_the_fences_aider_uses_when_a_file_holds_backticks(tmp_path: Path) -> None:
    """When a file in the chat holds triple backticks aider writes code in another fence,
    `<source>` … `</source>` (a public aider 0.85 history, architect mode with an
    editor-whole editor: 68 applied edits, every one a change without content). A listing
    in such a fence is the file, backticks inside it included, and a SEARCH/REPLACE block
    opened by one names the path above it."""
    history = """# aider chat started at 2025-09-01 10:00:00

> Aider v0.85.2¶
> Model: gpt-5 with editor-whole edit format¶

#### write the docs¶

docs/usage.md
<source>
# Usage

```sh
make run
```
</source>

> Tokens: 3.7k sent, 2.2k received.¶
> docs/usage.md¶
> Create new file? (Y)es/(N)o [Yes]: y¶
> Applied edit to docs/usage.md¶

#### /chat-mode diff¶
> Model: gpt-5 with diff edit format¶

#### fix the run target¶

docs/usage.md
<source>markdown
<<<<<<< SEARCH
make run
=======
make serve
>>>>>>> REPLACE
</source>

> Tokens: 4.1k sent, 120 received.¶
> Applied edit to docs/usage.md¶
""".replace("¶", "  ")
    changes = of(AIDER.parse(write(tmp_path, history)).events, FileChange)
    assert [(c.path, c.operation) for c in changes] == [
        ("docs/usage.md", "create"),
        ("docs/usage.md", "modify"),
    ]
    assert changes[0].content == "# Usage\n\n```sh\nmake run\n```\n"
    assert "-make run\n+make serve\n" in changes[1].diff


def test_prose_that_starts_with_a_tag_opens_no_fence(tmp_path: Path) -> None:
    """A line of an answer starting `<code>` (inline code in prose) was taken for a tag
    fence: everything after it, the file's listing too, was its content until a `</code>`
    line that never came, and the applied edit had no content."""
    history = """# aider chat started at 2025-09-01 10:00:00

> Aider v0.86.1¶
> Model: gpt-4.1 with whole edit format¶

#### escape the input¶

<code>render()</code> now escapes its input.

app.py
```python
def render(text):
    return escape(text)
```

> Tokens: 1.2k sent, 80 received.¶
> Applied edit to app.py¶
""".replace("¶", "  ")
    changes = of(AIDER.parse(write(tmp_path, history)).events, FileChange)
    assert [(c.path, c.operation) for c in changes] == [("app.py", "modify")]
    assert changes[0].content == "def render(text):\n    return escape(text)\n"


def test_usage_commits_shell_and_errors(tmp_path: Path) -> None:
    parsed = AIDER.parse(write(tmp_path, HISTORY))
    usage = of(parsed.events, Usage)
    assert len(usage) == 4
    first = usage[0]
    assert isinstance(first, Usage)
    # 2.3k sent counts the 1.2k cache write and the 5.0k cache hit... as aider prints it.
    assert (first.input_tokens, first.cache_write_tokens, first.cache_read_tokens) == (
        0,
        1200,
        5000,
    )
    assert first.output_tokens == 150
    assert first.cost_usd == 0.01 and first.cost_basis == "reported"
    assert first.source.line == line_of(HISTORY, "> Tokens: 2.3k")
    second, third, fourth = usage[1:]
    assert isinstance(second, Usage) and isinstance(third, Usage) and isinstance(fourth, Usage)
    assert (second.input_tokens, second.output_tokens, second.cost_usd) == (11000, 338, 0.03)
    assert (third.input_tokens, third.cost_usd, third.model) == (
        1234,
        0.000123,
        "claude-3-5-sonnet",
    )
    assert (fourth.input_tokens, fourth.cost_usd, fourth.cost_basis) == (900, None, None)
    commits = of(parsed.events, Commit)
    assert [(c.sha, c.message) for c in commits] == [
        ("abc1234", "feat: greet and say goodbye"),
        ("def5678", "fix: util"),
    ]
    calls = of(parsed.events, ToolCall)
    assert [(c.name, c.input) for c in calls] == [("shell", {"command": "mkdir -p out"})]
    # The padded two-line question subject stays one piece of aider output.
    raws = [str(r.record) for r in of(parsed.events, RawEvent)]
    assert any(r.startswith("mkdir -p out") and "touch out/a.txt" in r for r in raws)
    errors = of(parsed.events, Error)
    assert len(errors) == 2
    conform, interrupt = errors
    assert isinstance(conform, Error) and isinstance(interrupt, Error)
    assert conform.message.startswith("The LLM did not conform to the edit format.\nhttps://")
    assert "# 1 SEARCH/REPLACE block failed to match!" in conform.message
    assert "Just reply with fixed versions" in conform.message
    assert interrupt.message == "^C KeyboardInterrupt" and interrupt.interrupt


def test_token_counts_and_costs_past_what_a_run_reports_are_no_figures(tmp_path: Path) -> None:
    """A count or cost past 2**63 (past a float: 400 digits), or that is no number (`1.2.3`),
    is read as none, never an error."""
    nines = "9" * 400
    reports = [
        f"Tokens: {nines} sent, 5 received. Cost: ${nines} message, $1.00 session.",
        f"Tokens: {'9' * 300} sent, {'9' * 20}k received. Cost: $1.2.3 message, $1.00 session.",
        f"Tokens: 12 sent, {'9' * 30} received. Cost: ${'9' * 30} message, $1.00 session.",
        "Tokens: 12 sent, 5 received. Cost: $0.25 message, $1.00 session.",
    ]
    history = "# aider chat started at 2025-07-15 11:38:37\n\n#### hello  \n\nHi.\n\n" + "".join(
        f"> {report}  \n" for report in reports
    )
    usage = of(AIDER.parse(write(tmp_path, history)).events, Usage)
    assert [(u.input_tokens, u.output_tokens, u.cost_usd) for u in usage] == [
        (0, 5, None),
        (0, 0, None),
        (12, 0, None),
        (12, 5, 0.25),
    ]


def test_history_without_trailing_spaces(tmp_path: Path) -> None:
    stripped = "\n".join(line.rstrip() for line in HISTORY.split("\n"))
    parsed = AIDER.parse(write(tmp_path, stripped))
    counts = Counter(event.kind for event in parsed.events)
    assert counts["session_start"] == 2 and counts["session_end"] == 2
    assert of(parsed.events, UserMessage)[0].text == "add a greeting\nand a farewell"
    changes = of(parsed.events, FileChange)
    assert [c.path for c in changes][:2] == ["hello.py", "bye.py"]
    usage = of(parsed.events, Usage)
    assert usage[0].cost_usd == 0.01


def test_odd_input(tmp_path: Path) -> None:
    # Content before the first run header, invalid UTF-8, a huge answer, a cut-off last line.
    big = "x" * (2 * 1024 * 1024)
    raw = (
        b"stray line\n\n# aider chat started at 2025-01-01 00:00:00\n\n#### caf\xe9  \n\n"
        + big.encode()
        + b"\n\n> Tokens: 10 sent, 2 rec"
    )
    parsed = AIDER.parse(write(tmp_path, raw))
    starts = of(parsed.events, SessionStart)
    assert [s.session.rsplit("-", 1)[1] for s in starts] == ["0", "1"]
    users = of(parsed.events, UserMessage)
    assert users[0].text == "caf\ufffd"
    # The replaced byte is a problem of its line, as in the JSON Lines formats.
    assert [(p.source, p.line, p.message) for p in parsed.problems] == [
        (".aider.chat.history.md", 5, "bytes that are not UTF-8 at column 9, read as U+FFFD")
    ]
    answers = of(parsed.events, AgentMessage)
    assert answers[0].text == "stray line"
    assert answers[1].text == big
    # The cut-off token report cannot be read: it is kept as aider output.
    assert of(parsed.events, RawEvent)[-1].record == "Tokens: 10 sent, 2 rec"
    assert parsed.events[-1].kind == "session_end"
    with pytest.raises(StetError):
        AIDER.parse(write(tmp_path, "\n\n", "empty.md"))


def test_sniff() -> None:
    assert AIDER.sniff(HISTORY)
    assert AIDER.sniff("# aider chat started at 2025-01-01 00:00:00\n")
    assert AIDER.sniff("\ufeff\n# aider chat started at 2025-01-01 00:00:00\n")
    assert AIDER.sniff("notes\n\n# aider chat started at 2025-01-01 00:00:00\n\n#### hi  \n")
    assert not AIDER.sniff('{"type":"user","message":"# aider chat started at 2025"}\n')
    assert not AIDER.sniff('[{"role": "user", "content": "x"}]')
    assert not AIDER.sniff("# My notes\n\nSome text about aider chat started at noon.\n")


def test_public_sample() -> None:
    path = sample("aider/afi-core__.aider.chat.history.md")
    parsed = AIDER.parse(path)
    counts = Counter(event.kind for event in parsed.events)
    assert counts["session_start"] == counts["session_end"] == 9
    assert counts["commit"] == 13
    assert counts["file_change"] == 20
    assert counts["usage"] == counts["agent_message"] == 39
    first = parsed.events[0]
    assert isinstance(first, SessionStart)
    assert (first.time, first.harness_version, first.model) == (
        "2025-07-15T11:38:37",
        "0.85.1",
        "gpt-4o",
    )
    created = [
        c
        for c in of(parsed.events, FileChange)
        if isinstance(c, FileChange) and c.operation == "create"
    ]
    assert [c.path for c in created][:2] == ["aider-afi.sh", "sync-afi.sh"]
    assert created[0].content == (
        '#!/bin/bash\n# Script to aid AFI operations\n\necho "Aiding AFI operations..."\n'
        "# Add your aiding logic here\n"
    )
    # The two blocks the failure report says were applied; the failed one is not a change.
    report = next(e for e in of(parsed.events, Error) if "failed to match" in e.message)
    after = parsed.events[parsed.events.index(report) + 1 :][:3]
    assert [(e.kind, getattr(e, "path", None)) for e in after] == [
        ("file_change", "tests/poi_validator.test.ts"),
        ("file_change", "tests/poi_validator.test.ts"),
        ("commit", None),
    ]


def test_a_failed_request_of_the_model_is_an_error(tmp_path: Path) -> None:
    history = """
# aider chat started at 2026-01-05 10:00:00

> Aider v0.86.2¶
> Model: gpt-4.1 with diff edit format¶

#### hi¶
> litellm.RateLimitError: RateLimitError: OpenAIException - slow down¶
> The API provider has rate limited you. Try again later or check your quotas.¶
> Retrying in 0.2 seconds...¶
> litellm.Timeout: Timeout: OpenAIException - no answer¶
> The API provider timed out without returning a response. They may be down or overloaded.¶
> Retrying in 0.5 seconds...¶
> litellm.AuthenticationError: AuthenticationError: OpenAIException - bad key¶
> The API provider is not able to authenticate you. Check your API key.¶
> https://platform.example.com/account/api-keys¶
> Open URL for more info? (Y)es/(N)o/(D)on't ask again [Yes]: n¶
> litellm.set_verbose is on¶
""".replace("¶", "  ")
    parsed = AIDER.parse(write(tmp_path, history))
    errors = of(parsed.events, Error)
    assert [error.message.split("\n") for error in errors] == [
        [
            "litellm.RateLimitError: RateLimitError: OpenAIException - slow down",
            "The API provider has rate limited you. Try again later or check your quotas.",
            "Retrying in 0.2 seconds...",
        ],
        [
            "litellm.Timeout: Timeout: OpenAIException - no answer",
            "The API provider timed out without returning a response. They may be down or "
            "overloaded.",
            "Retrying in 0.5 seconds...",
        ],
        [
            "litellm.AuthenticationError: AuthenticationError: OpenAIException - bad key",
            "The API provider is not able to authenticate you. Check your API key.",
            "https://platform.example.com/account/api-keys",
        ],
    ]
    assert not any(error.interrupt for error in errors)
    assert errors[0].source.line == line_of(history, "> litellm.RateLimitError")
    # The question after the links, and output that only names litellm, stay aider output.
    raws = [str(raw.record) for raw in of(parsed.events, RawEvent)]
    assert raws[-1].startswith("Open URL for more info?")
    assert raws[-1].endswith("litellm.set_verbose is on")


def test_a_failed_request_keeps_its_whole_report_in_order(tmp_path: Path) -> None:
    history = """
# aider chat started at 2026-01-05 10:00:00

> Aider v0.86.2¶
> Model: gpt-4.1 with diff edit format¶

#### hi¶
> litellm.BadRequestError: LLM Provider NOT provided. You passed model=nvidia/x¶
> Pass model as E.g. For 'Huggingface' pass in `completion(model='huggingface/x')`¶
> https://docs.litellm.ai/docs/providers¶
> Open URL for more info? (Y)es/(N)o/(D)on't ask again [Yes]: y¶
> https://docs.litellm.ai/docs/providers¶

#### again¶
> litellm.APIConnectionError: AzureException APIConnectionError - peer closed connection¶
> Traceback (most recent call last):¶
> File "/x/httpx/_transports/default.py", line 72, in map_httpcore_exceptions¶
> httpcore.RemoteProtocolError: peer closed connection¶
> Retrying in 0.2 seconds...¶
""".replace("¶", "  ")
    parsed = AIDER.parse(write(tmp_path, history))
    errors = of(parsed.events, Error)
    assert [error.message.split("\n") for error in errors] == [
        [
            "litellm.BadRequestError: LLM Provider NOT provided. You passed model=nvidia/x",
            "Pass model as E.g. For 'Huggingface' pass in `completion(model='huggingface/x')`",
            "https://docs.litellm.ai/docs/providers",
        ],
        [
            "litellm.APIConnectionError: AzureException APIConnectionError - peer closed "
            "connection",
            "Traceback (most recent call last):",
            'File "/x/httpx/_transports/default.py", line 72, in map_httpcore_exceptions',
            "httpcore.RemoteProtocolError: peer closed connection",
            "Retrying in 0.2 seconds...",
        ],
    ]
    # After the question (aider output kept raw) a link no longer joins the error above it.
    raws = [str(raw.record) for raw in of(parsed.events, RawEvent)]
    assert any(
        raw.startswith("Open URL for more info?") and raw.endswith("docs/providers") for raw in raws
    )


def test_a_markdown_quote_in_an_answer_stays_in_it(tmp_path: Path) -> None:
    """A `> ` line of an answer is a Markdown quote unless aider could have ended a message
    where it stops: a file listing holding a quote and, further on, a line of spaces (a public
    0.86.2 history, `whole` format), and an answer quoting a line before text whose Markdown
    line breaks are two spaces (another, 0.86.2), were cut at the quote, the listings after it
    read from the middle of a fence: the applied files had no content."""
    history = """# aider chat started at 2026-04-22 09:06:43

> Aider v0.86.2¶
> Model: ollama/qwen3 with whole edit format¶

#### update the readme¶

README.md
```
# Signals

> **A modular library for standard signals.**

## Use
    ¶
Import it.
```

> Tokens: 6.7k sent, 2.4k received.¶
> Applied edit to README.md¶

#### how should the classes split?¶

Split by component:

> **Optionally** merge Engine and Transmission.

### `Wheel`
**State**¶
- `Marker2D wheelMarker`

> Tokens: 7.4k sent, 2.0k received. Cost: $0.10 message, $0.10 session.¶
""".replace("¶", "  ")
    parsed = AIDER.parse(write(tmp_path, history))
    answers = [a.text for a in of(parsed.events, AgentMessage)]
    assert len(answers) == 2
    assert "> **A modular library for standard signals.**" in answers[0]
    assert answers[1].startswith("Split by component:\n\n> **Optionally** merge")
    assert answers[1].endswith("- `Marker2D wheelMarker`")
    changes = of(parsed.events, FileChange)
    assert [(c.path, c.operation) for c in changes] == [("README.md", "modify")]
    content = changes[0].content
    assert content is not None and content.startswith("# Signals\n\n> **A modular")
    assert content.endswith("Import it.\n")
    raws = [str(r.record) for r in of(parsed.events, RawEvent)]
    assert not any("Optionally" in r or "modular" in r for r in raws)


def test_test_output_is_one_message(tmp_path: Path) -> None:
    """Older aider wrote the output of `/test` as one message, bare after its first line and
    ending in the two spaces; the `>` lines pytest marks failing code with, and the lines of
    spaces in the code it shows, cut it into pieces, some read as answers (aider's own
    history, 0.47 to 0.51)."""
    history = """# aider chat started at 2024-07-30 08:12:10

> Aider v0.47.2-dev¶
> Models: claude-3-5-sonnet-20240620 with diff edit format, weak model claude-3-haiku-20240307¶

#### /test pytest tests/test_repomap.py¶
> ============================= test session starts ==============================
collected 1 item

tests/test_repomap.py F                                                  [100%]

    def test_map(self):
        root = make_root()
    ¶
>       assert build(root) == 2
E       assert 1 == 2

tests/test_repomap.py:9: AssertionError
========================= 1 failed in 0.12s ==========================¶

#### fix it¶

Done.
""".replace("¶", "  ")
    parsed = AIDER.parse(write(tmp_path, history))
    assert [a.text for a in of(parsed.events, AgentMessage)] == ["Done."]
    assert [u.text for u in of(parsed.events, UserMessage)] == [
        "/test pytest tests/test_repomap.py",
        "fix it",
    ]
    output = [str(r.record) for r in of(parsed.events, RawEvent)][-1]
    assert output.startswith("============================= test session starts")
    assert ">       assert build(root) == 2" in output
    assert output.endswith("1 failed in 0.12s ==========================")


def test_an_ambiguous_command_sends_nothing(tmp_path: Path) -> None:
    """aider refuses a prefix several commands share (`/c`: `/code`, `/commit`, `/clear`…) and
    sends nothing: the same text typed next is the person's prompt; a prefix of one command's
    name alone (`/arch`) is that command."""
    history = """# aider chat started at 2025-05-24 16:50:45

> Aider v0.83.2¶

#### /c fix the server¶
> Ambiguous command: /c¶

#### fix the server¶

Done.

> Tokens: 2.0k sent, 40 received. Cost: $0.01 message, $0.01 session.¶

#### /arc plan the cache¶

#### plan the cache¶

Cache the settings.
""".replace("¶", "  ")
    parsed = AIDER.parse(write(tmp_path, history))
    assert [u.text for u in of(parsed.events, UserMessage)] == [
        "/c fix the server",
        "fix the server",
        "/arc plan the cache",
    ]
    sent = [r.reason for r in of(parsed.events, RawEvent) if r.reason != "aider output"]
    assert sent == ["message of /arc sent to the model"]


def test_input_aider_writes_as_the_users(tmp_path: Path) -> None:
    """aider writes the message of `/ask x` (and `/code x`, `/architect x`) again as input,
    `/help x` the question it sends with its documentation, the lint errors it asks the model
    to fix, and an architect's plan handed to the editor without asking `Edit the files?`:
    all were user messages (public histories of 0.79 to 0.86, and aider's own)."""
    history = """# aider chat started at 2025-05-24 16:50:45

> Aider v0.83.2¶
> Main model: gemini/gemini-2.5-pro with architect edit format¶
> Editor model: gemini/gemini-2.5-pro with editor-whole edit format¶

#### /ask what does delta mean?¶

#### what does delta mean?¶

The time since the last frame.

> Tokens: 2.0k sent, 40 received. Cost: $0.01 message, $0.01 session.¶

#### /architect fix the server¶
#### it fails to start¶

#### fix the server¶
#### it fails to start¶

Make `main.py` load the settings first.¶

> Tokens: 3.0k sent, 577 received. Cost: $0.01 message, $0.02 session.¶

#### Make `main.py` load the settings first.¶

main.py
```
load_settings()
```

> Tokens: 3.5k sent, 20 received. Cost: $0.01 message, $0.03 session.¶
> Applied edit to main.py¶
> Fix lint errors in main.py? (Y)es/(N)o [Yes]: y¶

#### # Fix any errors below, if possible.¶
#### ¶
#### ## Running: flake8 main.py¶
#### ¶
#### main.py:1:1: F821 undefined name 'load_settings'¶

main.py
```
from settings import load_settings
load_settings()
```

> Tokens: 4.0k sent, 25 received. Cost: $0.01 message, $0.04 session.¶
> Applied edit to main.py¶

#### /help how do I undo?¶

#### # Question:  how do I undo?¶
#### ¶
#### # Relevant docs:¶
#### ¶
#### <doc>¶
#### Use /undo.¶
#### </doc>¶

Type `/undo`.
""".replace("¶", "  ")
    parsed = AIDER.parse(write(tmp_path, history))
    assert [u.text for u in of(parsed.events, UserMessage)] == [
        "/ask what does delta mean?",
        "/architect fix the server\nit fails to start",
        "/help how do I undo?",
    ]
    sent = [(r.reason, str(r.record).split("\n")[0]) for r in of(parsed.events, RawEvent)]
    assert [(reason, first) for reason, first in sent if reason != "aider output"] == [
        ("message of /ask sent to the model", "what does delta mean?"),
        ("message of /architect sent to the model", "fix the server"),
        ("architect plan sent to editor", "Make `main.py` load the settings first."),
        ("lint errors sent to the model", "# Fix any errors below, if possible."),
        (
            "question of /help sent to the model with aider's documentation",
            "# Question:  how do I undo?",
        ),
    ]
    assert len(of(parsed.events, AgentMessage)) == 5
    changes = of(parsed.events, FileChange)
    assert [(c.path, c.content) for c in changes] == [
        ("main.py", "load_settings()\n"),
        ("main.py", "from settings import load_settings\nload_settings()\n"),
    ]


def test_failed_requests_of_mid_2024_and_the_token_limit(tmp_path: Path) -> None:
    """aider of mid-2024 reported a request that failed as `Unexpected error: …` (aider's own
    history, 0.47 to 0.51), and any version an answer the model's token limit cut off with
    `Model … has hit a token limit!` and the counts (public histories of 0.79 and 0.86): both
    were kept as aider output, not errors."""
    history = """# aider chat started at 2024-08-06 14:13:01

> Aider v0.48.0¶
> Models: claude-3-5-sonnet-20240620 with diff edit format, weak model claude-3-haiku-20240307¶

#### add a test¶
> Unexpected error: litellm.InternalServerError: AnthropicException - Overloaded.¶

#### add a test¶
> Unexpected error: litellm.APIConnectionError: OpenAIException - {¶
> "error": {¶
> "code": 429¶
> }¶
> }¶

#### add a test¶
>¶
>¶
> Model claude-3-5-sonnet-20240620 has hit a token limit!¶
> Token counts below are approximate.¶
>¶
> Input tokens: ~206,529 of 200,000 -- possibly exhausted context window!¶
> https://aider.chat/docs/troubleshooting/token-limits.html¶
> Please answer with one of: yes, no, don't¶
> Open URL for more info? (Y)es/(N)o/(D)on't ask again [Yes]: n¶
""".replace("¶", "  ")
    parsed = AIDER.parse(write(tmp_path, history))
    errors = of(parsed.events, Error)
    assert [error.message.split("\n") for error in errors] == [
        ["Unexpected error: litellm.InternalServerError: AnthropicException - Overloaded."],
        [
            "Unexpected error: litellm.APIConnectionError: OpenAIException - {",
            '"error": {',
            '"code": 429',
            "}",
            "}",
        ],
        [
            "Model claude-3-5-sonnet-20240620 has hit a token limit!",
            "Token counts below are approximate.",
            "Input tokens: ~206,529 of 200,000 -- possibly exhausted context window!",
            "https://aider.chat/docs/troubleshooting/token-limits.html",
        ],
    ]
    assert not any(error.interrupt for error in errors)
    assert errors[2].source.line == line_of(history, "> Model claude-3-5-sonnet")
    # Asking again for an answer, and the question, stay aider output.
    raws = [str(raw.record) for raw in of(parsed.events, RawEvent)]
    assert raws[-1] == (
        "Please answer with one of: yes, no, don't\n"
        "Open URL for more info? (Y)es/(N)o/(D)on't ask again [Yes]: n"
    )


def test_the_creation_question_of_mid_2024(tmp_path: Path) -> None:
    """aider of mid-2024 asked `Create new file? [Y/n] y` (aider's own history, 0.50 and
    0.51): the file it made from an empty SEARCH was a modification of an empty file."""
    history = """# aider chat started at 2024-08-21 21:00:00

> Aider v0.51.2-dev¶
> Main model: claude-3-5-sonnet-20240620 with diff edit format, prompt cache, infinite output¶

#### add a script¶

run.sh
```bash
<<<<<<< SEARCH
=======
echo hi
>>>>>>> REPLACE
```

> Tokens: 11k sent, 182 received. Cost: $0.04 message, $0.07 session.¶
> run.sh¶
> Create new file? [Y/n] y¶
> Applied edit to run.sh¶
""".replace("¶", "  ")
    changes = of(AIDER.parse(write(tmp_path, history)).events, FileChange)
    assert [(c.path, c.operation, c.content) for c in changes] == [
        ("run.sh", "create", "echo hi\n")
    ]


def test_an_architect_plan_is_the_answer_without_the_reasoning_aider_removes(
    tmp_path: Path,
) -> None:
    """aider hands the editor an architect's answer without the reasoning up to `</think>`
    (its opener missing from what a model like DeepSeek R1 writes): the plan was a user message
    (a public 0.7x history, nine times). An answer whose reasoning aider keeps is the plan
    whole."""
    history = """# aider chat started at 2025-02-10 09:00:00

> Aider v0.74.1¶
> Model: openai/deepseek-r1 with architect edit format¶
> Editor model: openai/deepseek-r1 with editor-diff edit format¶

#### fix the server¶

Okay, so the user wants the server fixed.
</think>

Load the settings first in `main.py`.

> Tokens: 3.0k sent, 577 received.¶

#### Load the settings first in `main.py`.¶

main.py
```python
<<<<<<< SEARCH
=======
load_settings()
>>>>>>> REPLACE
```

> Tokens: 3.5k sent, 20 received.¶

#### and log it¶

<think>
Needs a log line.
</think>

Log the settings.

> Tokens: 4.0k sent, 40 received.¶

#### <think>¶
#### Needs a log line.¶
#### </think>¶
#### ¶
#### Log the settings.¶

Done.
""".replace("¶", "  ")
    parsed = AIDER.parse(write(tmp_path, history))
    assert [u.text for u in of(parsed.events, UserMessage)] == ["fix the server", "and log it"]
    plans = [r for r in of(parsed.events, RawEvent) if r.reason == "architect plan sent to editor"]
    assert [str(r.record).split("\n")[-1] for r in plans] == [
        "Load the settings first in `main.py`.",
        "Log the settings.",
    ]
    assert [r.source.line for r in plans] == [
        line_of(history, "#### Load the settings"),
        line_of(history, "#### <think>"),
    ]


def test_an_answer_typed_again_is_a_plan_only_in_architect_mode(tmp_path: Path) -> None:
    """Input the same as the answer before it is an architect's plan only where an architect
    answered: the run's mode, or `/architect x`. In a `diff` run a user who typed the word
    the model answered lost it to aider output."""
    history = """# aider chat started at 2025-05-24 16:50:45

> Aider v0.83.2¶
> Main model: gpt-4o with diff edit format¶

#### Reply with just the word: ready¶

ready

> Tokens: 2.0k sent, 4 received.¶

#### ready¶

Great, what next?

> Tokens: 2.1k sent, 6 received.¶

#### /architect rename it¶

#### rename it¶

Rename `run` to `start`.

> Tokens: 2.2k sent, 8 received.¶

#### Rename `run` to `start`.¶

Renamed.
""".replace("¶", "  ")
    parsed = AIDER.parse(write(tmp_path, history))
    assert [u.text for u in of(parsed.events, UserMessage)] == [
        "Reply with just the word: ready",
        "ready",
        "/architect rename it",
    ]
    sent = [(r.reason, str(r.record)) for r in of(parsed.events, RawEvent)][1:]
    assert sent == [
        ("message of /architect sent to the model", "rename it"),
        ("architect plan sent to editor", "Rename `run` to `start`."),
    ]


def test_input_aider_sends_after_other_output_and_for_ok(tmp_path: Path) -> None:
    """The question `/help` sends with aider's documentation can come after other output (a
    command typed while its extras installed: aider's own history, 0.48), and `/ok` sends its
    request to go ahead through `/code` (aider since 2026): both were user messages."""
    history = """# aider chat started at 2024-08-12 14:28:55

> Aider v0.48.0¶
> Models: claude-3-5-sonnet-20240620 with diff edit format, weak model claude-3-haiku-20240307¶

#### /help what is this tool?¶

#### /diff¶
> Diff since cb24f8c...¶

#### # Question:  what is this tool?¶
#### ¶
#### # Relevant docs:¶
#### ¶
#### <doc>¶
#### aider edits code in your repo.¶
#### </doc>¶

It edits your code.

# aider chat started at 2026-03-02 10:00:00

> Aider v0.87.0¶
> Main model: gpt-5 with diff edit format¶

#### /ask should we cache it?¶

#### should we cache it?¶

Yes, in memory.

#### /ok and add a test¶

#### Ok, please go ahead and make those changes. and add a test¶

Done.
""".replace("¶", "  ")
    parsed = AIDER.parse(write(tmp_path, history))
    assert [u.text for u in of(parsed.events, UserMessage)] == [
        "/help what is this tool?",
        "/diff",
        "/ask should we cache it?",
        "/ok and add a test",
    ]
    sent = [(r.reason, str(r.record).split("\n")[0]) for r in of(parsed.events, RawEvent)]
    assert [(reason, first) for reason, first in sent if reason != "aider output"] == [
        (
            "question of /help sent to the model with aider's documentation",
            "# Question:  what is this tool?",
        ),
        ("message of /ask sent to the model", "should we cache it?"),
        (
            "message of /ok sent to the model",
            "Ok, please go ahead and make those changes. and add a test",
        ),
    ]


def test_run_output_is_one_message(tmp_path: Path) -> None:
    """aider of mid-2024 wrote the output of `/run` as one message: a diff line ending in two
    spaces (a Markdown line break in the diffed file) ended it, the rest read as an answer, and
    a `> ` quote in a Markdown file it printed made the whole output an answer (aider's own
    history, 0.48)."""
    history = """# aider chat started at 2024-08-06 14:13:01

> Aider v0.48.0¶
> Models: claude-3-5-sonnet-20240620 with diff edit format, weak model claude-3-haiku-20240307¶

#### /run git diff¶
> diff --git a/README.md b/README.md
--- a/README.md
+++ b/README.md
@@ -1,4 +1,4 @@
 Usage:¶
-run it
+run it twice

 Done.¶
> Add the output to the chat? n¶

#### /run cat NOTES.md¶
> # Notes

> Keep it short.
Ship on Fridays.¶
> Add the output to the chat? y¶

#### summarize¶

Short notes.
""".replace("¶", "  ")
    parsed = AIDER.parse(write(tmp_path, history))
    assert [a.text for a in of(parsed.events, AgentMessage)] == ["Short notes."]
    outputs = [str(r.record) for r in of(parsed.events, RawEvent)][1:]
    assert outputs == [
        "diff --git a/README.md b/README.md\n--- a/README.md\n+++ b/README.md\n"
        "@@ -1,4 +1,4 @@\n Usage:\n-run it\n+run it twice\n\n Done.\n"
        "Add the output to the chat? n",
        "# Notes\n\n> Keep it short.\nShip on Fridays.\nAdd the output to the chat? y",
    ]


def test_a_quote_before_a_paragraph_with_line_breaks_stays_in_the_answer(
    tmp_path: Path,
) -> None:
    """A quote in an answer, a blank line, then a paragraph ending in two spaces before a blank
    line: the quote and the paragraph were read as aider output, cutting the answer in three.
    No message aider writes after an answer holds a blank line."""
    history = """# aider chat started at 2025-05-01 10:00:00

> Aider v0.85.1¶
> Main model: gpt-4o with diff edit format¶

#### explain¶

Here is what the docs say:

> Use the flag carefully.

After that, restart.¶

That's all.

> Tokens: 2.0k sent, 40 received.¶
""".replace("¶", "  ")
    parsed = AIDER.parse(write(tmp_path, history))
    assert [a.text for a in of(parsed.events, AgentMessage)] == [
        "Here is what the docs say:\n\n> Use the flag carefully.\n\n"
        "After that, restart.  \n\nThat's all."
    ]
    assert [str(r.record) for r in of(parsed.events, RawEvent)][1:] == []
    assert len(of(parsed.events, Usage)) == 1


def test_a_failed_request_aider_prints_as_a_traceback(tmp_path: Path) -> None:
    """Since late 2024 aider prints an exception it caught while sending as its traceback, then
    the exception's text (a public 0.84 history): kept as aider output, not an error. A
    traceback a linter printed is output still."""
    history = """# aider chat started at 2025-06-02 11:00:00

> Aider v0.84.0¶
> Main model: gpt-4o with diff edit format¶

#### what does this do?¶

It parses the config.

> Traceback (most recent call last):¶
> File "/opt/aider/coders/base_coder.py", line 1454, in send_message¶
> yield from self.send(messages, functions=self.functions)¶
> File "/opt/aider/coders/base_coder.py", line 2090, in compute_costs_from_tokens¶
> cost += tokens * 1.25¶
> ~~~~~~~^~~~~~¶
> TypeError: can't multiply sequence by non-int of type 'float'¶
> can't multiply sequence by non-int of type 'float'¶
> Copied code context to clipboard.¶

#### /lint¶
> # Fix any errors below, if possible.¶
>¶
> Traceback (most recent call last):¶
> File "main.py", line 3¶
> SyntaxError: unterminated string literal¶
""".replace("¶", "  ")
    parsed = AIDER.parse(write(tmp_path, history))
    errors = of(parsed.events, Error)
    assert len(errors) == 1
    lines = errors[0].message.split("\n")
    assert lines[0] == "Traceback (most recent call last):"
    assert lines[-2:] == [
        "TypeError: can't multiply sequence by non-int of type 'float'",
        "can't multiply sequence by non-int of type 'float'",
    ]
    assert errors[0].source.line == line_of(history, "> Traceback")
    raws = [str(r.record) for r in of(parsed.events, RawEvent)]
    assert raws[1] == "Copied code context to clipboard."
    assert raws[2].startswith("# Fix any errors below, if possible.\nTraceback (most recent")


def test_reasoning_that_only_a_closing_think_tag_ends(tmp_path: Path) -> None:
    """A model served with `<think>` in its prompt (DeepSeek R1 on a local server) writes its
    reasoning, then `</think>`, then the answer, and aider writes the answer so: the reasoning
    was part of the agent message, and an edit in it could be read as the answer's. A closer
    inside a fence, in a Markdown quote or after a `<think>`, or typed by the user, ends no
    reasoning."""
    history = """# aider chat started at 2025-02-10 09:00:00

> Aider v0.74.1¶
> Model: ollama_chat/deepseek-r1:14b with diff edit format¶

#### fix the server¶

Okay, the user wants the server fixed.
Maybe main.py needs the settings loaded.
</think>

Load the settings first:

main.py
```python
<<<<<<< SEARCH
=======
load_settings()
>>>>>>> REPLACE
```

> Applied edit to main.py¶

#### and log it¶

The log line goes after loading.
</think>Add a log line.

#### how do I close the tag?¶

Write the closer on its own line:

```html
</think>
```

> a quote of the closer:
> </think>

> a quote going on:
</think>

and `<think>` opens it, the closer
</think>
ends it.

#### Plan:¶
#### </think>¶
#### go¶

Going.
""".replace("¶", "  ")
    parsed = AIDER.parse(write(tmp_path, history))
    assert [r.text for r in of(parsed.events, Reasoning)] == [
        "Okay, the user wants the server fixed.\nMaybe main.py needs the settings loaded.",
        "The log line goes after loading.",
    ]
    answers = of(parsed.events, AgentMessage)
    assert answers[0].text.startswith("Load the settings first:\n\nmain.py")
    assert answers[0].source.line == line_of(history, "Load the settings first:")
    assert answers[1].text == "Add a log line."
    assert answers[1].source.line == line_of(history, "</think>Add a log line.")
    # The answer's edit is read after the reasoning: the file change holds it.
    changes = of(parsed.events, FileChange)
    assert [(c.path, c.diff is not None and "+load_settings()" in c.diff) for c in changes] == [
        ("main.py", True)
    ]
    assert answers[2].text.startswith("Write the closer on its own line:")
    assert answers[2].text.endswith("</think>\nends it.")
    assert "Plan:\n</think>\ngo" in [u.text for u in of(parsed.events, UserMessage)]
    assert answers[3].text == "Going."


def test_an_exception_text_of_several_lines_stays_whole_in_its_error(tmp_path: Path) -> None:
    """aider writes each line of an exception's text as a message: after the traceback of a
    failed request the text comes again, and only when all of it did is the report whole (the
    report took in the output after it, and litellm's text, again, started an error of its
    own). `Exception while updating files:` is followed by the exception's text, which was
    aider output."""
    history = """# aider chat started at 2025-06-02 11:00:00

> Aider v0.84.0¶
> Main model: openrouter/deepseek/deepseek-r1 with diff edit format¶

#### what does this do?¶
> Traceback (most recent call last):¶
> File "/opt/aider/coders/base_coder.py", line 1454, in send_message¶
> yield from self.send(messages, functions=self.functions)¶
> File "/opt/aider/models.py", line 1012, in send_completion¶
> res = litellm.completion(**kwargs)¶
> litellm.exceptions.APIError: litellm.APIError: APIError: OpenrouterException - {¶
> "error": "upstream failed"¶
> }¶
> litellm.APIError: APIError: OpenrouterException - {¶
> "error": "upstream failed"¶
> }¶
> Copied code context to clipboard.¶

#### again¶
> Traceback (most recent call last):¶
> File "/opt/aider/coders/base_coder.py", line 1454, in send_message¶
> yield from self.send(messages, functions=self.functions)¶
> ValueError: Bad response from the provider:¶
> status: 500¶
> Bad response from the provider:¶
> status: 500¶
> Copied code context to clipboard.¶

#### fix it¶

main.py
```python
<<<<<<< SEARCH
x = 1
=======
x = 2
>>>>>>> REPLACE
```

> Exception while updating files:¶
> 'utf-8' codec can't decode byte 0xff in position 0:¶
> invalid start byte¶
> Only 3 reflections allowed, stopping.¶
""".replace("¶", "  ")
    parsed = AIDER.parse(write(tmp_path, history))
    errors = of(parsed.events, Error)
    assert [error.message.split("\n") for error in errors] == [
        [
            "Traceback (most recent call last):",
            'File "/opt/aider/coders/base_coder.py", line 1454, in send_message',
            "yield from self.send(messages, functions=self.functions)",
            'File "/opt/aider/models.py", line 1012, in send_completion',
            "res = litellm.completion(**kwargs)",
            "litellm.exceptions.APIError: litellm.APIError: APIError: OpenrouterException - {",
            '"error": "upstream failed"',
            "}",
            "litellm.APIError: APIError: OpenrouterException - {",
            '"error": "upstream failed"',
            "}",
        ],
        [
            "Traceback (most recent call last):",
            'File "/opt/aider/coders/base_coder.py", line 1454, in send_message',
            "yield from self.send(messages, functions=self.functions)",
            "ValueError: Bad response from the provider:",
            "status: 500",
            "Bad response from the provider:",
            "status: 500",
        ],
        [
            "Exception while updating files:",
            "'utf-8' codec can't decode byte 0xff in position 0:",
            "invalid start byte",
        ],
    ]
    tracebacks = [n for n, line in enumerate(history.split("\n"), 1) if line.startswith("> Trace")]
    assert [e.source.line for e in errors] == [
        *tracebacks,
        line_of(history, "> Exception while updating files:"),
    ]
    # What aider printed after each report stays its output.
    raws = [str(r.record) for r in of(parsed.events, RawEvent)]
    assert raws[-3:] == [
        "Copied code context to clipboard.",
        "Copied code context to clipboard.",
        "Only 3 reflections allowed, stopping.",
    ]


FAILED_EDIT = """# aider chat started at 2025-06-02 11:00:00

> Aider v0.84.0¶
> Main model: gpt-4o with diff edit format¶

#### fix it¶

main.py
```python
<<<<<<< SEARCH
x = 1
=======
x = 2
>>>>>>> REPLACE
```

> Exception while updating files:¶
"""


@pytest.mark.parametrize(
    ("after", "text", "output"),
    [
        (
            # Interrupted while sending the model the exception (a public 0.51 history).
            "> argument of type 'NoneType' is not iterable¶\n>¶\n>¶\n> ^C again to exit¶\n"
            ">¶\n>¶\n> ^C KeyboardInterrupt¶\n",
            ["argument of type 'NoneType' is not iterable"],
            ["^C again to exit"],
        ),
        (
            "> [Errno 28] No space left on device¶\n"
            "> Unable to commit: Cmd('git') failed due to: exit code(128)¶\n"
            "> Only 3 reflections allowed, stopping.¶\n",
            ["[Errno 28] No space left on device"],
            [
                "Unable to commit: Cmd('git') failed due to: exit code(128)\n"
                "Only 3 reflections allowed, stopping."
            ],
        ),
        (
            "> [Errno 13] Permission denied: 'main.py'¶\n"
            "> Your estimated chat context of 130,000 tokens exceeds the 128,000 token limit"
            " for gpt-4o!¶\n"
            "> To reduce the chat context:¶\n"
            "> - Use /drop to remove unneeded files from the chat¶\n"
            "> Try to proceed anyway? (Y)es/(N)o [Yes]: n¶\n\n#### next¶\n",
            ["[Errno 13] Permission denied: 'main.py'"],
            [
                "Your estimated chat context of 130,000 tokens exceeds the 128,000 token limit"
                " for gpt-4o!\nTo reduce the chat context:\n"
                "- Use /drop to remove unneeded files from the chat\n"
                "Try to proceed anyway? (Y)es/(N)o [Yes]: n"
            ],
        ),
        (
            "> list index out of range¶\n> Added src/util.py to the chat.¶\n"
            "> Warning: it's best to only add files that need changes to the chat.¶\n"
            "> https://aider.chat/docs/troubleshooting/edit-errors.html¶\n",
            ["list index out of range"],
            [
                "Added src/util.py to the chat.\n"
                "Warning: it's best to only add files that need changes to the chat.\n"
                "https://aider.chat/docs/troubleshooting/edit-errors.html"
            ],
        ),
    ],
    ids=["interrupted", "commit-failed", "context-too-long", "notices"],
)
def test_what_aider_prints_after_a_failed_edits_exception_is_not_its_text(
    tmp_path: Path, after: str, text: list[str], output: list[str]
) -> None:
    """After the exception's text of a failed edit aider commits what it did edit, then sends
    the model the exception (warning first when the chat is too long) or stops: the error took
    in the interruption (losing it), the failed commit, the warning with its question, and
    aider's notices, warnings and links."""
    history = (FAILED_EDIT + after).replace("¶", "  ")
    parsed = AIDER.parse(write(tmp_path, history))
    errors = of(parsed.events, Error)
    assert errors[0].message.split("\n") == ["Exception while updating files:", *text]
    assert [str(r.record) for r in of(parsed.events, RawEvent)][1:] == output
    interrupted = "KeyboardInterrupt" in after
    assert [e.message for e in errors[1:]] == (["^C KeyboardInterrupt"] if interrupted else [])
    assert [e.interrupt for e in errors] == [False, *([True] if interrupted else [])]
    end = of(parsed.events, SessionEnd)[-1]
    assert end.reason == ("interrupted" if interrupted else None)


EDITED_CLOSER = """# aider chat started at 2025-06-02 11:00:00

> Aider v0.84.0¶
> Main model: {model} with diff edit format¶

#### document the closing tag¶

README.md
````markdown
<<<<<<< SEARCH
```
DeepSeek ends its reasoning with a closing tag.
```
=======
```
DeepSeek ends its reasoning with:
</think>
```
>>>>>>> REPLACE
````

> Applied edit to README.md¶

#### strip the closer from the template¶

prompt.txt
<<<<<<< SEARCH
</think>
Answer:
=======
Answer:
>>>>>>> REPLACE

> Applied edit to prompt.txt¶

#### how does the README show them?¶

As two blocks:

````markdown
```
The answer.
```

```
The reasoning.
</think>
```
````
"""


@pytest.mark.parametrize("model", ["gpt-4o", "ollama_chat/deepseek-r1:14b"])
def test_a_closer_in_a_longer_fence_or_an_edit_block_ends_no_reasoning(
    tmp_path: Path, model: str
) -> None:
    """A fence of four backticks closes only at four (CommonMark): the ``` inside it ended it,
    and a `</think>` after was read as the end of reasoning, as was one inside a
    SEARCH/REPLACE block without a fence; the edit then lost its start and its diff."""
    history = EDITED_CLOSER.format(model=model).replace("¶", "  ")
    parsed = AIDER.parse(write(tmp_path, history))
    assert of(parsed.events, Reasoning) == []
    answers = of(parsed.events, AgentMessage)
    assert [a.text.split("\n")[0] for a in answers] == ["README.md", "prompt.txt", "As two blocks:"]
    assert [a.source.line for a in answers] == [
        line_of(history, "README.md"),
        line_of(history, "prompt.txt"),
        line_of(history, "As two blocks:"),
    ]
    assert answers[2].text.endswith("The reasoning.\n</think>\n```\n````")
    diffs = [str(c.diff) for c in of(parsed.events, FileChange)]
    assert "+</think>\n" in diffs[0] and "-DeepSeek ends its reasoning with a closing" in diffs[0]
    assert "-</think>\n" in diffs[1]


PROSE_CLOSER = """
#### what tag closes the reasoning block?¶

The closing tag goes on its own line:

</think>

After it comes the answer the user sees.
"""


def test_prose_about_the_closer_is_reasoning_only_where_the_run_reasons_so(
    tmp_path: Path,
) -> None:
    """An answer about the tag, the closer alone on its line, reads as reasoning then an
    answer: a model not known to reason so (its name) splits there only when another answer of
    its run does too."""
    run = "# aider chat started at 2025-06-02 1{0}:00:00\n\n> Aider v0.84.0¶\n> Main model: {1}¶\n"
    history = (
        run.format(1, "gpt-4o with diff edit format")
        + PROSE_CLOSER
        + run.format(2, "openai/local-model with diff edit format")
        + PROSE_CLOSER
        + PROSE_CLOSER
        + run.format(3, "openai/deepseek-ai/DeepSeek-R1-Distill-Qwen-7B with ask edit format")
        + PROSE_CLOSER
    ).replace("¶", "  ")
    parsed = AIDER.parse(write(tmp_path, history))
    answers = [(a.session[-1], a.text.split("\n")[0]) for a in of(parsed.events, AgentMessage)]
    assert answers == [
        ("1", "The closing tag goes on its own line:"),
        ("2", "After it comes the answer the user sees."),
        ("2", "After it comes the answer the user sees."),
        ("3", "After it comes the answer the user sees."),
    ]
    reasonings = of(parsed.events, Reasoning)
    assert [(r.session[-1], r.text) for r in reasonings] == [
        (index, "The closing tag goes on its own line:") for index in "223"
    ]


def test_an_answer_of_reasoning_alone_has_no_edits(tmp_path: Path) -> None:
    """An answer that is reasoning and its closer alone left the edits of the answer before
    it: an `Applied edit` after it took that answer's diff."""
    history = """# aider chat started at 2025-06-02 11:00:00

> Aider v0.84.0¶
> Main model: ollama_chat/deepseek-r1:14b with diff edit format¶

#### go¶

main.py
```python
<<<<<<< SEARCH
x = 1
=======
x = 2
>>>>>>> REPLACE
```

#### more¶

I think the edit
</think>

> Applied edit to main.py¶
""".replace("¶", "  ")
    parsed = AIDER.parse(write(tmp_path, history))
    assert [r.text for r in of(parsed.events, Reasoning)] == ["I think the edit"]
    assert len(of(parsed.events, AgentMessage)) == 1
    (change,) = of(parsed.events, FileChange)
    # aider reports the edit, but no block of this answer holds it.
    assert (change.path, change.operation, change.diff) == ("main.py", "modify", "")
    assert change.source.line == line_of(history, "> Applied edit to main.py")


def test_an_exception_text_that_comes_again_in_part_ends_there(tmp_path: Path) -> None:
    """A traceback adds the exception's notes to its text, which aider prints again without
    them: the report took in the output after it. A long text (150 lines) comes again whole."""
    long_text = [f"row {n}: bad" for n in range(150)]
    history = (
        """# aider chat started at 2025-06-02 11:00:00

> Aider v0.84.0¶
> Main model: gpt-4o with diff edit format¶

#### what does this do?¶
> Traceback (most recent call last):¶
> File "/opt/aider/coders/base_coder.py", line 1454, in send_message¶
> yield from self.send(messages, functions=self.functions)¶
> ValueError: Bad response from the provider:¶
> status: 500¶
> body: upstream¶
> Bad response from the provider:¶
> status: 500¶
> Copied code context to clipboard.¶

#### again¶
> Traceback (most recent call last):¶
> File "/opt/aider/coders/base_coder.py", line 1454, in send_message¶
> yield from self.send(messages, functions=self.functions)¶
"""
        + f"> ValueError: {long_text[0]}¶\n"
        + "".join(f"> {line}¶\n" for line in long_text[1:] + long_text)
        + "> Copied code context to clipboard.¶\n"
    ).replace("¶", "  ")
    parsed = AIDER.parse(write(tmp_path, history))
    errors = of(parsed.events, Error)
    assert errors[0].message.split("\n")[3:] == [
        "ValueError: Bad response from the provider:",
        "status: 500",
        "body: upstream",
        "Bad response from the provider:",
        "status: 500",
    ]
    assert errors[1].message.split("\n")[3:] == [
        f"ValueError: {long_text[0]}",
        *long_text[1:],
        *long_text,
    ]
    raws = [str(r.record) for r in of(parsed.events, RawEvent)]
    assert raws[1:] == ["Copied code context to clipboard."] * 2


def test_a_drafted_edit_in_reasoning_and_a_model_switch_decide_no_closer(tmp_path: Path) -> None:
    """R1's reasoning may draft an edit block it leaves (a `<<<<<<< SEARCH` and no `>>>>>>>
    REPLACE` before the real block's head): its `</think>` still ends the reasoning, and the
    real block is the edit. The answers counted for an unnamed model are that model's: after
    `/model gpt-4o` an answer about the tag is no reasoning."""
    drafted = """# aider chat started at 2025-06-02 11:00:00

> Aider v0.84.0¶
> Main model: ollama_chat/deepseekr1:8b with diff edit format¶

#### fix¶

Okay, I need a SEARCH/REPLACE block. Let me draft:
<<<<<<< SEARCH
x = 1
=======
Hmm, wait, the file has x = 1 twice. I should include more context.
</think>

main.py
```python
<<<<<<< SEARCH
y = 0
x = 1
=======
y = 0
x = 2
>>>>>>> REPLACE
```

> Applied edit to main.py¶
""".replace("¶", "  ")
    events = AIDER.parse(write(tmp_path, drafted)).events
    (reasoning,) = of(events, Reasoning)
    assert reasoning.text.endswith("I should include more context.")
    (change,) = of(events, FileChange)
    assert "-x = 1\n+x = 2\n" in (change.diff or "")

    switched = """# aider chat started at 2025-06-02 11:00:00

> Aider v0.84.0¶
> Main model: openai/local with diff edit format¶

#### go¶

Okay, the user wants x.
</think>

Here is x.

#### go2¶

Okay, more.
</think>

Here is y.

#### /model gpt-4o¶
> Aider v0.84.0¶
> Main model: gpt-4o with diff edit format¶

#### what tag closes the reasoning block?¶

The closing tag goes on its own line:

</think>

After it comes the answer the user sees.
""".replace("¶", "  ")
    events = AIDER.parse(write(tmp_path, switched)).events
    assert [r.text for r in of(events, Reasoning)] == ["Okay, the user wants x.", "Okay, more."]
    assert of(events, AgentMessage)[-1].text.startswith("The closing tag goes on its own line:")
