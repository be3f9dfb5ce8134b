"""What a gate run depends on besides the text."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from stet_lsp.gate.allowlist import Allowlist
from stet_lsp.gate.rules import RULESET_VERSION


@dataclass(frozen=True)
class GateConfig:
    strict: bool = False
    """For public repositories: entropy rules everywhere, lower thresholds."""
    env_names: tuple[str, ...] = ()
    """Environment variable names whose assigned values are always redacted."""
    allowlist: Allowlist | None = None
    use_detect_secrets: bool = True
    cache_dir: Path | None = field(default=None, compare=False)
    """Where chunk results persist between processes (e.g. `.stet/cache/gate`); None: memory."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "env_names", tuple(sorted(set(self.env_names))))

    @property
    def fingerprint(self) -> str:
        """Everything that changes results, for cache keys."""
        material = "\0".join(
            [
                RULESET_VERSION,
                "strict" if self.strict else "normal",
                "ds" if self.use_detect_secrets else "own",
                self.allowlist.digest if self.allowlist else "",
                *self.env_names,
            ]
        )
        return hashlib.sha256(material.encode("utf-8")).hexdigest()[:16]


def load_config(
    repo_root: Path,
    strict: bool = False,
    env_names: Iterable[str] = (),
    cache_dir: Path | None = None,
) -> GateConfig:
    """The configuration of a repository: its reviewed allowlist, if any."""
    return GateConfig(
        strict=strict,
        env_names=tuple(env_names),
        allowlist=Allowlist.load(repo_root),
        cache_dir=cache_dir,
    )
