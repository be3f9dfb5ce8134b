"""SHA-256 for sheet keys and provisional ids, from CPython's own module where it has one:
hashlib loads OpenSSL first, which costs the command line more at start than the digests."""

from __future__ import annotations

__all__ = ["sha256"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hashlib import sha256
else:
    try:
        from _sha2 import sha256  # Python 3.12 and later
    except ImportError:
        try:
            from _sha256 import sha256  # Python 3.11
        except ImportError:  # an interpreter built without them
            from hashlib import sha256
