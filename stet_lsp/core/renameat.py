"""Linux's `renameat2`: two names' files exchanged in one step, or a name given only while it is
free. A write that replaces a file only while it holds what was read (a harness's settings,
which the harness writes too, without a lock) checks that, and then renames: a writer between
the two is lost. Exchanged instead, the file replaced is at hand, and is checked again.

Where the call is missing (another system, an old C library, a file system without it), each
function says so, and the caller renames as before."""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

_AT_FDCWD = -100
_RENAME_NOREPLACE = 1
_RENAME_EXCHANGE = 2
_UNSUPPORTED = {"ENOSYS", "EINVAL", "ENOTSUP", "EOPNOTSUPP"}

_call: Callable[..., int] | bool | None = None  # looked up on first use; False: there is none


def exchange(first: str, second: str) -> bool:
    """Exchange the files at two existing names; False when this system cannot (nothing
    done). OSError for what else failed (a name missing: ENOENT)."""
    return _renameat2(first, second, _RENAME_EXCHANGE)


def rename_unless_taken(source: str, target: str) -> bool:
    """Rename `source` to `target` unless `target` exists (FileExistsError then); False when
    this system cannot tell (nothing done)."""
    return _renameat2(source, target, _RENAME_NOREPLACE)


def _renameat2(source: str, target: str, flags: int) -> bool:
    call = _function()
    if call is None:
        return False
    if call(_AT_FDCWD, os.fsencode(source), _AT_FDCWD, os.fsencode(target), flags) == 0:
        return True
    import ctypes
    import errno

    number = ctypes.get_errno()
    if errno.errorcode.get(number) in _UNSUPPORTED:
        return False
    raise OSError(number, os.strerror(number), source, None, target)


def _function() -> Callable[..., int] | None:
    global _call
    if _call is None:
        _call = _look_up()  # set once found: a thread asking meanwhile looks it up too
    return _call if callable(_call) else None


def _look_up() -> Callable[..., int] | bool:
    if os.name != "posix":
        return False
    try:
        import ctypes  # a Python built without libffi has none

        function = ctypes.CDLL(None, use_errno=True).renameat2
    except (ImportError, OSError, AttributeError):
        return False
    function.argtypes = [
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_uint,
    ]
    function.restype = ctypes.c_int
    return function
