"""SHA-256 from CPython's own module (stet_lsp/core/digests.py) is hashlib's: sheet file names
and provisional ids must not change with the module they come from."""

from __future__ import annotations

import hashlib

from hypothesis import given
from hypothesis import strategies as st

from stet_lsp.core.digests import sha256
from stet_lsp.core.targets import target_key


@given(st.binary(max_size=4096))
def test_the_digest_is_hashlib_s(data: bytes) -> None:
    assert sha256(data).hexdigest() == hashlib.sha256(data).hexdigest()
    streamed = sha256()
    streamed.update(data[:7])
    streamed.update(data[7:])
    assert streamed.digest() == hashlib.sha256(data).digest()


def test_a_sheet_key_is_what_it_always_was() -> None:
    # The key of `main`, written before the digest moved off hashlib: existing sheets keep it.
    digest = hashlib.sha256(b"branch\0main").hexdigest()[:24]
    assert target_key("branch", "main") == f"branch--main--{digest}"
    assert target_key("named", "PR #12 Ünïcode") == (
        "named--pr-12-unicode--" + hashlib.sha256("named\0PR #12 Ünïcode".encode()).hexdigest()[:24]
    )
