"""What a gate run depends on besides the text.

A repository decides how strictly everything Stet writes into it is redacted: its reviewed
allowlist (`.stet/gate-allowlist.toml`) and its gate settings (`.stet/gate.toml`: strict
mode and environment variable names), both committed, both read by `load_config`, the one
function every front end calls before it writes or checks a `.stet/` artifact. A front end
may add to the repository's settings (the editor's `stet.gate.*`, a command's `--strict` and
`--env-name`): strict when either says so, the union of the names. It can never take away
from them.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from stet_lsp.core.errors import StetError
from stet_lsp.core.safefs import read_regular
from stet_lsp.gate.allowlist import Allowlist

SETTINGS_PATH = Path(".stet") / "gate.toml"
"""The repository's gate settings, committed and reviewed beside the allowlist."""
SETTINGS_KEYS = ("strict", "env_names")
MAX_SETTINGS_BYTES = 64 * 1024
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,199}")


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
        from stet_lsp.gate.rules import RULESET_VERSION  # the rules load when first scanned

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


@dataclass(frozen=True)
class GateSettings:
    """A repository's `.stet/gate.toml`:

    ```toml
    strict = true                       # public-repository mode for everything written
    env_names = ["ACME_CONFIG"]         # values assigned to these are always redacted
    ```
    """

    strict: bool = False
    env_names: tuple[str, ...] = ()

    @classmethod
    def load(cls, repo_root: Path | str) -> GateSettings:
        """The repository's settings (the defaults when it has no file). StetError, naming the
        file, when it cannot be read as settings: nothing is written with settings other than
        the ones the repository asks for."""
        root = Path(repo_root)
        content = read_regular(root / SETTINGS_PATH, root, limit=MAX_SETTINGS_BYTES + 1)
        if content is None:
            return cls()
        return cls.parse(content)

    @classmethod
    def parse(cls, content: bytes, source: str = str(SETTINGS_PATH)) -> GateSettings:
        if len(content) > MAX_SETTINGS_BYTES:
            raise StetError(f"{source}: larger than {MAX_SETTINGS_BYTES} bytes; not gate settings")
        import tomllib  # only a repository with settings pays for the TOML parser

        try:
            data = tomllib.loads(content.decode("utf-8"))
        except (UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
            raise StetError(
                f"{source}: cannot read: {error}: correct it (TOML; docs/gate.md names its "
                "settings) or remove it"
            ) from error
        except RecursionError:  # arrays or tables nested deeper than the parser goes
            raise StetError(f"{source}: cannot read: nested too deeply") from None
        unknown = sorted(set(data) - set(SETTINGS_KEYS))
        if unknown:
            raise StetError(
                f"{source}: unknown keys: {', '.join(unknown)} (known: {', '.join(SETTINGS_KEYS)})"
            )
        strict = data.get("strict", False)
        if not isinstance(strict, bool):
            raise StetError(f"{source}: `strict` must be true or false, not {strict!r}")
        names = data.get("env_names", [])
        if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
            raise StetError(f"{source}: `env_names` must be a list of strings")
        bad = [name for name in names if not _ENV_NAME.fullmatch(name)]
        if bad:
            raise StetError(
                f"{source}: `env_names`: {bad[0]!r} is not an environment variable name "
                "(a letter or `_`, then letters, digits, `_`, `.` or `-`)"
            )
        return cls(strict=strict, env_names=tuple(sorted(set(names))))


def load_config(
    repo_root: Path | str,
    strict: bool = False,
    env_names: Iterable[str] = (),
    cache_dir: Path | None = None,
    *,
    lenient: bool = False,
) -> GateConfig:
    """The configuration of a repository: its reviewed allowlist and its gate settings
    (`.stet/gate.toml`), with what a front end adds: strict when either asks for it, the
    union of the environment variable names. StetError, naming the file, when either file is
    malformed; `lenient` (for what is shown, not written) flags more instead, never less: a
    malformed allowlist allows nothing, malformed settings leave strict on, and neither
    drops the other file's part."""
    root = Path(repo_root)
    try:
        settings = GateSettings.load(root)
    except StetError:
        if not lenient:
            raise
        settings = GateSettings(strict=True)
    try:
        allowlist = Allowlist.load(root)
    except StetError:
        if not lenient:
            raise
        allowlist = None
    return GateConfig(
        strict=strict or settings.strict,
        env_names=(*settings.env_names, *env_names),
        allowlist=allowlist,
        cache_dir=cache_dir,
    )
