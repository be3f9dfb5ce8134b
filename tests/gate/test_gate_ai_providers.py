"""AI providers' and agent tools' prefixed keys (Firecrawl, Fireworks, Together, Cerebras,
Modal, Voyage, Brave Search, E2B, Browserbase, Jina, ...): redacted whole where a coding
agent's transcript holds them (prose, a tool call's command, a tool result quoted twice),
and short prefixes left alone on names, CSS classes, paths and hashes."""

from __future__ import annotations

import json
import random

import gate_corpus
import pytest

from stet_lsp.gate import ResultCache, redact_text, scan_text

HEX = gate_corpus.HEX
ALNUM = gate_corpus.ALNUM
LOWER = "abcdefghijklmnopqrstuvwxyz0123456789"
B64URL = gate_corpus.B64URL
DIGITS = "0123456789"


def _pick(rng: random.Random, alphabet: str, size: int) -> str:
    return gate_corpus.pick(rng, alphabet, size)


# (rule, a key of the provider's shape)
KEYS = [
    ("firecrawl-api-key", lambda rng: "fc-" + _pick(rng, HEX, 32)),
    ("fireworks-api-key", lambda rng: "fw_" + _pick(rng, ALNUM, 24)),
    ("together-api-key", lambda rng: "tgp_v1_" + _pick(rng, B64URL, 43)),
    ("cerebras-api-key", lambda rng: "csk-" + _pick(rng, LOWER, 48)),
    ("modal-token", lambda rng: "ak-" + _pick(rng, ALNUM, 22)),
    ("modal-token", lambda rng: "as-" + _pick(rng, ALNUM, 22)),
    ("voyage-api-key", lambda rng: "pa-" + _pick(rng, B64URL, 43)),
    ("brave-search-api-key", lambda rng: "BSA" + _pick(rng, B64URL, 28)),
    ("e2b-api-key", lambda rng: "e2b_" + _pick(rng, HEX, 40)),
    ("browserbase-api-key", lambda rng: "bb_live_" + _pick(rng, B64URL, 27)),
    ("jina-api-key", lambda rng: "jina_" + _pick(rng, ALNUM, 60)),
    ("deno-deploy-token", lambda rng: "ddw_" + _pick(rng, ALNUM, 36)),
    ("nightfall-api-key", lambda rng: "NF-" + _pick(rng, ALNUM, 32)),
    (
        "salad-cloud-api-key",
        lambda rng: f"salad_cloud_{_pick(rng, ALNUM, 6)}_{_pick(rng, ALNUM, 40)}",
    ),
    (
        "snyk-token",
        lambda rng: (
            f"snyk_sat.{_pick(rng, HEX, 8)}.eyJ{_pick(rng, B64URL, 90)}.{_pick(rng, B64URL, 43)}"
        ),
    ),
    (
        "stackhawk-api-key",
        lambda rng: f"hawk.{_pick(rng, B64URL, 20)}.{_pick(rng, B64URL, 20)}",
    ),
    ("dependency-track-api-key", lambda rng: "odt_" + _pick(rng, ALNUM, 32)),
    ("rootly-api-key", lambda rng: "rootly_" + _pick(rng, HEX, 64)),
    ("sourcegraph-token", lambda rng: "slk_" + _pick(rng, HEX, 64)),
    (
        "asana-token",
        lambda rng: f"2/1{_pick(rng, DIGITS, 15)}/1{_pick(rng, DIGITS, 15)}:{_pick(rng, HEX, 32)}",
    ),
    ("asana-token", lambda rng: f"1/1{_pick(rng, DIGITS, 15)}:{_pick(rng, HEX, 32)}"),
]
IDS = [f"{rule}-{index}" for index, (rule, _) in enumerate(KEYS)]


def _contexts(key: str) -> list[tuple[str, str]]:
    """(path, text): prose, a tool call's curl header, a tool result's `export` quoted twice."""
    call = {"type": "tool_use", "input": {"command": f"curl -H 'x-api-key: {key}' https://x.io"}}
    output = json.dumps({"stdout": f"export X_VAR={key}\nok"})
    result = {"type": "tool_result", "content": output}
    return [
        ("notes.md", f"I set it to {key} and ran the tests.\n"),
        ("session.jsonl", json.dumps(call) + "\n"),
        ("session.jsonl", json.dumps(result) + "\n"),
    ]


def _found(text: str, path: str) -> list[tuple[str, str]]:
    return [
        (f.rule, text[f.offset : f.end_offset])
        for f in scan_text(text, path=path, cache=ResultCache())
    ]


@pytest.mark.parametrize(("rule", "make"), KEYS, ids=IDS)
def test_the_key_is_redacted_whole_in_prose_a_tool_call_and_a_tool_result(
    rule: str, make: object
) -> None:
    assert callable(make)
    for seed in range(3):
        key = make(random.Random(f"{rule}:{seed}"))
        for path, text in _contexts(key):
            assert _found(text, path) == [(rule, key)], text
            redacted = redact_text(text, path=path, cache=ResultCache()).text
            assert redacted == text.replace(key, f"[REDACTED:{rule}#1]")


@pytest.mark.parametrize(
    "text",
    [
        # Placeholders and masks in the providers' shapes
        "FIRECRAWL_API_KEY=fc-00000000000000000000000000000000",
        "FIRECRAWL_API_KEY=fc-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "E2B_API_KEY=e2b_0000000000000000000000000000000000000000",
        "MODAL_TOKEN_ID=ak-NOTAREALTOKENSTRINGXYZ",
        "MODAL_TOKEN_SECRET=as-xxxxxxxxxxxxxxxxxxxxxx",
        "VOYAGE_API_KEY=pa-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "BRAVE_API_KEY=BSAxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "FIREWORKS_API_KEY=fw_xxxxxxxxxxxxxxxxxxxxxxxx",
        "CEREBRAS_API_KEY=csk-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "Keys start with fc-, fw_, tgp_v1_, csk-, ak-, as-, pa-, BSA, e2b_ and bb_live_.",
        # CSS classes, words, kebab-case and camelCase names after a short prefix
        '<button class="fc-button fc-button-primary pa-1 pa-md-3">',
        "It works as-is; the ak-47 and the pa-system are unrelated.",
        "as-HttpServerConnection2x and ak-PersistentVolumeClaim5",
        "pa-layout-container-with-sidebar-navigation-x",
        "fw_UpdateFirmwareImageVersion",
        "BSA_CERTIFICATE_AUTHORITY_BUNDLE_PATH_V2",
        "csk-component-selector-keyboard-shortcuts-handler-xy",
        # Hashes after a prefix: a path, a file name, a git SHA, base64
        "cache/fc-3b5d5c3712955042212316173ccf37be/index.js",
        "dist/fc-3b5d5c3712955042212316173ccf37be.js",
        "fc-3b5d5c3712955042212316173ccf37be80017b2f",
        "build_fc-3b5d5c3712955042212316173ccf37be",
        "objects/e2b_9f0b1c8e2a7d4f6b3c5e8a1d2f4b6c8e0a2d4f6b/blob",
        "data:image/png;base64,iVBORw0KGgo+BSAq8Zl3mR2vXy9TkP0wJc7uH4nLe1sQ6/ABCD==",
        "x BSAq8Zl3mR2vXy9TkP0wJc7uH4nLe1sQ6= y",
        # Hex digests after a prefix whose keys are no hex: a git SHA, an MD5, a cut UUID
        "fw_95cb0bfd2977c761298d9624e4b4d4c72a39974a",
        "firmware fw_95cb0bfd2977c761298d9624 built",
        "as-4b5d21971ffe4b4684325a and ak-c79d444008216b65b8fe2f",
        "BSA95cb0bfd2977c761298d9624e4b4d4c7",
        "NF-7694f4a66316e53c8cdd9d9954bd611d NF-7694F4A66316E53C8CDD9D9954BD611D",
        "csk-a1fce436a1fce436a1fce436a1fce436a1fce436a1fce436",
        # Names and files after a longer prefix
        "config.salad_cloud_api_endpoint = x",
        "def salad_cloud_org_settings():",
        "import salad_cloud_sdk_wrapper",
        "salad_cloud_user_password_hash",
        "docs/NF-nQvWys81vp7hB1dx8PpD5KHXe3PYiGkP.pdf",
        "NF-ScanTextForSensitiveDataDetector",
        "hawk.authenticatePayload1.calculateServerMac2X",
        "static/hawk.nQvWys81vp7hB1dx8PpD.5KHXe3PYiGkPnQvWys81.js",
        "/uploads/odt_9Mi4roNL89sM995YTBXaK7JQEVT0mlAm.odt",
        "cache/jina_nQvWys81vp7hB1dx8PpD5KHXe3PYiGkPnQvWys81vp7hB1dx8PpD5KHX.json",
        "build/ddp_nQvWys81vp7hB1dx8PpD5KHXe3PYiGkPab.zip",
        # Asana's project URLs and fractions, not tokens
        "https://app.asana.com/0/1204321093413645/1206789012345678/f",
        "ratio 1/1204321093413645 at 12:34",
    ],
)
def test_a_look_alike_is_left_alone(text: str) -> None:
    assert _found(text + "\n", "notes.md") == []


def test_a_body_is_read_after_the_whole_prefix() -> None:
    """`bb_live_`'s `live_` is the prefix's, not a sixth separator of a base64url body."""
    key = "bb_live_CQbdmh2_-VmWObXH0i-Wn_mZn-3"
    assert _found(f"BROWSERBASE_KEY {key}\n", "notes.md") == [("browserbase-api-key", key)]


@pytest.mark.parametrize("sign", ["+", "-"])
def test_a_key_starting_a_diffs_line_is_redacted(sign: str) -> None:
    """A diff's (or a grep's) `+`/`-` starting the line is no part of a name before the key;
    inside a line it is (`build_fc-…`, `…+BSA…`)."""
    firecrawl = "fc-db5b5fab8f4d3e27dda1494c73cf256d"
    modal = "ak-7xdcg2lMLzgeonyLGcTJFi"
    text = f"{sign}{firecrawl}\n{sign}MODAL_TOKEN_ID={modal}\n{sign}{modal}\n"
    assert _found(text, "change.diff") == [
        ("firecrawl-api-key", firecrawl),
        ("modal-token", modal),
        ("modal-token", modal),
    ]
    escaped = json.dumps({"type": "tool_result", "content": f"@@ -1 +1 @@\n{sign}{firecrawl}\n"})
    assert _found(escaped, "session.jsonl") == [("firecrawl-api-key", firecrawl)]
