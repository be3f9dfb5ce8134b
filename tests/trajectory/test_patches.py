"""Patches as file changes (stet_lsp/trajectory/importers/patches.py): what SWE-agent submits
and OpenHands' outputs record, git's own forms included."""

from __future__ import annotations

from stet_lsp.trajectory.events import SourceRef
from stet_lsp.trajectory.importers.patches import patch_changes

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
