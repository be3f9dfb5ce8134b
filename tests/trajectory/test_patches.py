"""Patches as file changes (stet_lsp/trajectory/importers/patches.py): what SWE-agent submits
and OpenHands' outputs record, git's own forms included."""

from __future__ import annotations

from stet_lsp.trajectory.events import SourceRef
from stet_lsp.trajectory.importers.patches import patch_changes, whole_text

AT = SourceRef(file="run.json", line=1, pointer="/git_patch")


def changes(patch: str) -> list[tuple[str, str, str | None, int, int]]:
    found = patch_changes(patch, "s", AT, None)
    return [(c.path, c.operation, c.old_path, c.added, c.removed) for c in found]


def test_names_git_quotes_are_read_as_the_files_names() -> None:
    """Git writes a name with a space, a quote or a non-ASCII character in C-style quotes,
    its UTF-8 bytes in octal: the change names the file, not the quoted form."""
    patch = (
        'diff --git "a/caf\\303\\251.txt" "b/caf\\303\\251.txt"\n'
        "index 1b2c3d4..5e6f7a8 100644\n"
        '--- "a/caf\\303\\251.txt"\n'
        '+++ "b/caf\\303\\251.txt"\n'
        "@@ -1 +1 @@\n-a\n+b\n"
        'diff --git "a/new \\"file\\".txt" "b/new \\"file\\".txt"\n'
        "new file mode 100644\n"
        "index 0000000..1b2c3d4\n"
        "--- /dev/null\n"
        '+++ "b/new \\"file\\".txt"\n'
        "@@ -0,0 +1 @@\n+x\n"
        "diff --git a/plain.txt b/plain.txt\n"
        "deleted file mode 100644\n"
        "index 1b2c3d4..0000000\n"
        "--- a/plain.txt\n"
        "+++ /dev/null\n"
        "@@ -1 +0,0 @@\n-gone\n"
    )
    assert changes(patch) == [
        ("café.txt", "modify", None, 1, 1),
        ('new "file".txt', "create", None, 1, 0),
        ("plain.txt", "delete", None, 0, 1),
    ]


def test_a_rename_and_a_binary_file() -> None:
    patch = (
        "diff --git a/old.py b/new.py\n"
        "similarity index 90%\n"
        "rename from old.py\n"
        "rename to new.py\n"
        "--- a/old.py\n"
        "+++ b/new.py\n"
        "@@ -1 +1 @@\n-x = 1\n+x = 2\n"
        "diff --git a/logo.png b/logo.png\n"
        "index 1b2c3d4..5e6f7a8 100644\n"
        "Binary files a/logo.png and b/logo.png differ\n"
    )
    assert changes(patch) == [
        ("new.py", "rename", "old.py", 1, 1),
        ("logo.png", "modify", None, 0, 0),
    ]


def test_the_text_of_a_file_a_patch_deleted_or_created() -> None:
    """A deletion holds the file's text before, a creation its text after (the last line
    without its break where git says so). A binary file's is not in the patch, which writes
    an empty file the same way (no hunks): neither is known, nor a modification's."""
    patch = (
        "diff --git a/old.py b/old.py\n"
        "deleted file mode 100644\n"
        "--- a/old.py\n"
        "+++ /dev/null\n"
        "@@ -1,2 +0,0 @@\n-x = 1\n-y = 2\n"
        "diff --git a/new.py b/new.py\n"
        "new file mode 100644\n"
        "--- /dev/null\n"
        "+++ b/new.py\n"
        "@@ -0,0 +1,2 @@\n+x = 1\n+y = 3\n\\ No newline at end of file\n"
        "diff --git a/empty.py b/empty.py\n"
        "new file mode 100644\n"
        "index 0000000..e69de29\n"
        "diff --git a/logo.png b/logo.png\n"
        "deleted file mode 100644\n"
        "Binary files a/logo.png and /dev/null differ\n"
        "diff --git a/app.py b/app.py\n"
        "--- a/app.py\n"
        "+++ b/app.py\n"
        "@@ -1 +1 @@\n-a\n+b\n"
    )
    texts = [whole_text(change) for change in patch_changes(patch, "s", AT, None)]
    assert texts == ["x = 1\ny = 2\n", "x = 1\ny = 3", None, None, None]


def test_a_hunk_length_of_thousands_of_digits_is_no_length() -> None:
    """Python reads no number of over 4,300 digits (ValueError): a submitted patch holding one
    stopped the import with a traceback. Such a header gives no lengths: its lines count by
    their marks, as in a hunk without them."""
    huge = "9" * 5_000
    patch = f"--- a/x.txt\n+++ b/x.txt\n@@ -1,{huge} +1,{huge} @@\n-a\n+b\n"
    assert changes(patch) == [("x.txt", "modify", None, 1, 1)]
