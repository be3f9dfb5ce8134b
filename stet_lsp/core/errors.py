"""The one error type the front ends turn into a message (CLI) or a JSON-RPC error (server)."""


class StetError(Exception):
    """A failure the user can act on; its message is shown as is."""

    reason: str | None = None
    """A name a front end can tell this failure by (the capstone's refusals: docs/cli.md);
    the language server sends it as the error's `data.reason`."""


class NotInRepository(StetError):
    """No git repository holds the folder; the command line adds how to name one (`-C`)."""


class TrackedSheetError(StetError):
    """A style sheet git's index holds: committed with the repository (or staged), it is not
    this clone's own working memory: its text is not given to an agent as such, and nothing
    is written to it."""
