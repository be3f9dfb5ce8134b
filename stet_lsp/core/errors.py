"""The one error type the front ends turn into a message (CLI) or a JSON-RPC error (server)."""


class StetError(Exception):
    """A failure the user can act on; its message is shown as is."""
