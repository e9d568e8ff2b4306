"""Every path memdeck reads or writes is decided here.

``MEMDECK_HOME`` overrides both the data and the config directory, so tests and users can point a whole
installation elsewhere with one variable.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

import platformdirs

APP = "memdeck"


def home_override() -> Path | None:
    value = os.environ.get("MEMDECK_HOME")
    return Path(value).expanduser() if value else None


@functools.lru_cache(maxsize=16)
def _platform_directory(kind: str, _environment: tuple[str | None, ...]) -> str:
    """platformdirs' answer for the variables it reads (a recall asks for the profiles file each time)."""
    return platformdirs.user_config_dir(APP) if kind == "config" else platformdirs.user_data_dir(APP)


def _platform_environment() -> tuple[str | None, ...]:
    return tuple(os.environ.get(name) for name in ("HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME"))


def data_directory() -> Path:
    return home_override() or Path(_platform_directory("data", _platform_environment()))


def config_directory() -> Path:
    home = home_override()
    return home if home else Path(_platform_directory("config", _platform_environment()))


def config_file() -> Path:
    return config_directory() / "config.toml"


def profiles_file() -> Path:
    return config_directory() / "profiles.toml"


def default_store() -> Path:
    """The store used when no --store is given."""
    return data_directory() / "store"


def resolve_store(path: str | os.PathLike[str] | None) -> Path:
    return Path(path).expanduser() if path else default_store()


class StoreLayout:
    """The files inside one store directory."""

    def __init__(self, root: Path) -> None:
        self.root = root

    @property
    def meta(self) -> Path:
        return self.root / "memdeck.json"

    @property
    def lance(self) -> Path:
        return self.root / "lance"

    @property
    def analytics(self) -> Path:
        return self.root / "analytics.duckdb"

    @property
    def keys(self) -> Path:
        return self.root / "keys"

    @property
    def vault(self) -> Path:
        return self.root / "vault"

    @property
    def receipts(self) -> Path:
        return self.root / "receipts"

    @property
    def tombstones(self) -> Path:
        return self.root / "tombstones"

    @property
    def journal(self) -> Path:
        return self.root / "journal"

    @property
    def lock(self) -> Path:
        return self.root / "store.lock"
