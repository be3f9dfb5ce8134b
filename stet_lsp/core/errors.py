"""The one error type the front ends turn into a message (CLI) or a JSON-RPC error (server)."""


class StetError(Exception):
    """A failure the user can act on; its message is shown as is."""


class TrackedSheetError(StetError):
    """A style sheet git's index holds: committed with the repository (or staged), it is not
    this clone's own working memory, and its text is not given to an agent as such."""
