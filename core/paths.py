"""Every path memdeck reads or writes is decided here.

``MEMDECK_HOME`` overrides both the data and the config directory, so tests and users can point a whole
installation elsewhere with one variable.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

import platformdirs

from memdeck.core.errors import MemdeckError

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
    """The store directory: ``path``, or the default store when none is given. An empty path is refused
    (``--store ""`` from an unset variable must not quietly mean the default store)."""
    if path is None:
        return default_store()
    if not str(os.fspath(path)).strip():
        raise MemdeckError(
            "the store path is empty; give a store folder, or leave --store out for the default store"
        )
    return Path(path).expanduser()


# What a store directory holds (StoreLayout), and the memdeck.json temporaries of its first write.
STORE_ENTRIES = frozenset(
    {
        "memdeck.json",
        "lance",
        "analytics.duckdb",
        "keys",
        "vault",
        "receipts",
        "tombstones",
        "journal",
        "store.lock",
        "store.lock.gate",
        "traces",
    }
)


def check_store_folder(root: Path) -> None:
    """Refuse to make a store of a folder that holds something else.

    A folder with ``memdeck.json`` is a store; an empty or missing one becomes one. A folder holding only
    what a store holds (a creation that stopped before ``memdeck.json`` was written) is finished as one.
    Anything else (``--store ~/Documents`` by mistake) is refused before a file in it is created or its
    modes are changed.
    """
    if not root.is_dir() or (root / "memdeck.json").exists():
        return
    try:
        names = [entry.name for entry in os.scandir(root)]
    except OSError as exc:
        raise MemdeckError(f"cannot read the store folder {root}: {exc.strerror or exc}") from None
    others = sorted(n for n in names if n not in STORE_ENTRIES and not n.startswith("memdeck.json.tmp"))
    if others:
        shown = ", ".join(others[:3]) + (f" and {len(others) - 3} more" if len(others) > 3 else "")
        raise MemdeckError(
            f"{root} is not a memdeck store and not empty (it holds {shown}); nothing in it was changed. "
            "Give a new or empty folder for a new store"
        )


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
