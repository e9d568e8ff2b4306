"""Where a store's tables live: the local ``lance/`` directory, or an object-store URI.

A store is always a local directory (``memdeck.json``, keys, receipts, vault, journal, traces, lock). Its
LanceDB tables can live in a bucket instead, shared by machines that each keep their own local directory:

- ``[storage] uri`` in ``config.toml`` for the default store (commands without ``--store``)::

      [storage]
      uri = "s3://bucket/prefix"          # absent = <store>/lance
      endpoint = "http://127.0.0.1:9000"  # S3-compatible servers (MinIO, Ceph, ...); absent = AWS
      region = "eu-west-1"
      allow_http = false                   # true only for a plain-HTTP endpoint
      [storage.options]                    # passed to Lance as they are

- ``--store s3://bucket/prefix`` (or ``Store.open("s3://...")``) for any bucket, its local directory under
  ``<data dir>/remote/``; ``Store.open(path, storage_uri=..., storage_options=...)`` from the API.

Credentials come from the environment (``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``,
``AWS_SESSION_TOKEN``) or the machine's role, never from the config file. A store directory records its
table location (not the credentials) in ``memdeck.json`` and keeps it, so a later change of config cannot
silently point it at other tables.
"""

from __future__ import annotations

import errno
import json
import os
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from memdeck.core.errors import MemdeckError

if TYPE_CHECKING:
    from memdeck.core.storage.base import Tables

REMOTE_SCHEMES = ("s3", "s3+ddb", "gs", "az", "abfs", "memory")
_CREDENTIAL_KEYS = (
    "aws_access_key_id",
    "aws_secret_access_key",
    "aws_session_token",
    "aws_token",
    "access_key_id",
    "secret_access_key",
    "session_token",
    "token",
)
# Every spelling of the endpoint option Lance accepts (its S3 keys are matched case-insensitively), and
# Lance allows plain HTTP when any option whose name contains "allow_http" is truthy.
_ENDPOINT_KEYS = ("aws_endpoint", "aws_endpoint_url", "endpoint", "endpoint_url")
_TRUTHY = ("1", "true", "on", "yes", "y")


def canonical_options(options: dict[str, str], where: str) -> dict[str, str]:
    """Storage options under one name each, as Lance reads them: names lower-cased, every spelling of the
    endpoint as ``aws_endpoint`` and every option naming ``allow_http`` as ``allow_http``. Two spellings of
    one option with different values are refused (which one Lance takes is not for a file to decide)."""
    out: dict[str, str] = {}
    for key, value in options.items():
        name = str(key).strip().lower()
        if name in _ENDPOINT_KEYS:
            name = "aws_endpoint"
        elif "allow_http" in name:
            name = "allow_http"
        if name in out and out[name] != value:
            raise MemdeckError(
                f"{where} gives {name} twice, with different values ({key!r} and another spelling)"
            )
        out[name] = value
    return out


def _plain_http(endpoint: str) -> bool:
    """Whether an endpoint would be reached without TLS (anything but https://, whatever its case)."""
    return bool(endpoint.strip()) and not endpoint.strip().lower().startswith("https://")


@dataclass(frozen=True)
class StorageLocation:
    """The Lance URI of a store's tables and the options Lance needs to reach it."""

    uri: str | None = None  # None: the store directory's own lance/ folder
    options: dict[str, str] = field(default_factory=dict)

    @property
    def remote(self) -> bool:
        return self.uri is not None

    def describe(self) -> str:
        """The location without secrets, for messages and ``doctor``."""
        if self.uri is None:
            return "local"
        endpoint = self.options.get("aws_endpoint")
        return f"{self.uri} (endpoint {endpoint})" if endpoint else self.uri


def is_remote_uri(value: str | os.PathLike[str] | None) -> bool:
    if value is None:
        return False
    scheme = urlparse(str(value)).scheme.lower()
    return scheme in REMOTE_SCHEMES


def check_uri(uri: Any) -> str:
    if not isinstance(uri, str) or not uri.strip():
        raise MemdeckError("storage.uri must be a URI such as s3://bucket/prefix")
    uri = uri.strip().rstrip("/")
    parsed = urlparse(uri)
    if parsed.scheme.lower() not in REMOTE_SCHEMES:
        raise MemdeckError(
            f"storage.uri {uri!r} is not an object-store URI; use s3://bucket/prefix (or leave it out for a "
            "local store)"
        )
    if parsed.scheme != "memory" and not parsed.netloc:
        raise MemdeckError(f"storage.uri {uri!r} names no bucket; use s3://bucket/prefix")
    return uri


def _flag(value: Any, name: str) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower()
    raise MemdeckError(f"storage.{name} must be true or false, got {value!r}")


def location_from_config(config: dict[str, Any]) -> StorageLocation:
    """The table location a config asks for; local when it has no ``[storage] uri``."""
    uri = _section(config).get("uri")
    if uri in (None, ""):
        return StorageLocation()
    return StorageLocation(check_uri(uri), options_from_config(config))


def _section(config: dict[str, Any]) -> dict[str, Any]:
    section = config.get("storage") or {}
    if not isinstance(section, dict):
        raise MemdeckError("[storage] in the config must be a table")
    return section


def options_from_config(config: dict[str, Any]) -> dict[str, str]:
    """Endpoint, region and extra Lance options from ``[storage]``, plus credentials from the environment."""
    section = _section(config)
    options: dict[str, str] = {}
    extra = section.get("options") or {}
    if not isinstance(extra, dict):
        raise MemdeckError("[storage.options] must be a table of strings")
    extra = canonical_options(extra, "[storage.options]")
    for key, value in extra.items():
        if str(key).lower() in _CREDENTIAL_KEYS:
            raise MemdeckError(
                f"storage.options.{key}: keep credentials out of the config; set AWS_ACCESS_KEY_ID and "
                "AWS_SECRET_ACCESS_KEY in the environment"
            )
        options[str(key)] = value if isinstance(value, str) else _flag(value, f"options.{key}")
    if section.get("endpoint"):
        endpoint = str(section["endpoint"]).strip()
        if urlparse(endpoint).scheme.lower() not in ("http", "https"):
            raise MemdeckError(f"storage.endpoint {endpoint!r} must start with http:// or https://")
        options["aws_endpoint"] = endpoint
        if _plain_http(endpoint) and _flag(section.get("allow_http", False), "allow_http") != "true":
            raise MemdeckError("storage.endpoint is plain http://; set storage.allow_http = true to allow it")
    if section.get("region"):
        options["aws_region"] = str(section["region"])
    if "allow_http" in section:
        options["allow_http"] = _flag(section["allow_http"], "allow_http")
    if _plain_http(options.get("aws_endpoint", "")) and not _allows_http(options):
        raise MemdeckError(
            f"the endpoint {options['aws_endpoint']} is not https://; set storage.allow_http = true to allow it"
        )
    options.update(credentials_from_env())
    return options


def _allows_http(options: dict[str, str]) -> bool:
    return str(options.get("allow_http", "")).strip().lower() in _TRUTHY


def credentials_from_env() -> dict[str, str]:
    """AWS credentials from the environment, passed explicitly so a custom endpoint gets them too."""
    out: dict[str, str] = {}
    for env, key in (
        ("AWS_ACCESS_KEY_ID", "aws_access_key_id"),
        ("AWS_SECRET_ACCESS_KEY", "aws_secret_access_key"),
        ("AWS_SESSION_TOKEN", "aws_session_token"),
    ):
        value = os.environ.get(env)
        if value:
            out[key] = value
    return out


def resolve(
    config: dict[str, Any],
    path: str | os.PathLike[str] | None,
    uri: str | None = None,
    options: dict[str, str] | None = None,
) -> tuple[Path, StorageLocation]:
    """The local store directory and its table location, for :meth:`Store.open`.

    In order: an explicit ``uri`` (the API's ``storage_uri``); a path that is itself a URI
    (``--store s3://bucket/prefix``, whose local directory is ``<data dir>/remote/<bucket>-<prefix>``);
    the URI a store directory recorded when it was created; for the default store only, the config's
    ``[storage] uri`` (so ``memdeck demo --store X`` never writes into the team's bucket). Otherwise local.
    """
    from memdeck.core.paths import data_directory, resolve_store

    if uri is None and is_remote_uri(path):
        uri = check_uri(str(path))
        path = data_directory() / "remote" / _slug(uri)
    root = resolve_store(path)
    recorded_uri, recorded_options = _recorded(root)
    if uri is None:
        uri = recorded_uri
        if path is None:
            configured = _section(config).get("uri")
            uri = check_uri(configured) if configured not in (None, "") else uri
    if uri is None:
        return root, StorageLocation()
    # What the store directory recorded (endpoint, region) is the base; the config and the caller override.
    configured = {**options_from_config(config), **canonical_options(options or {}, "storage_options")}
    _check_recorded_endpoint(config, root, recorded_options, configured)
    # Plain HTTP is only ever the configuration's (or the caller's) decision, never the directory's; nor
    # are credentials, whatever they are called there.
    recorded_options = {
        k: v for k, v in recorded_options.items() if k != "allow_http" and k not in _CREDENTIAL_KEYS
    }
    merged = {**recorded_options, **configured}
    endpoint = merged.get("aws_endpoint", "")
    if _plain_http(endpoint) and not _allows_http(configured):
        raise MemdeckError(
            f"the endpoint {endpoint} is plain http://, which would send your AWS credentials unencrypted; "
            "set storage.allow_http = true in the config to allow it"
        )
    return root, StorageLocation(check_uri(uri), merged)


def _check_recorded_endpoint(
    config: dict[str, Any], root: Path, recorded: dict[str, str], configured: dict[str, str]
) -> None:
    """Refuse a store directory that names another endpoint than the configured one, unless confirmed.

    The AWS credentials of the environment go to whatever endpoint the tables are reached through, and a
    store directory can come from anyone (a copy, an archive); its ``memdeck.json`` must not choose where
    they are sent. ``storage.accept_recorded_endpoint = true`` in the config confirms it.
    """
    theirs = (recorded.get("aws_endpoint") or "").strip()
    ours = (configured.get("aws_endpoint") or "").strip()
    if not theirs or theirs == ours:
        return
    if _flag(_section(config).get("accept_recorded_endpoint", False), "accept_recorded_endpoint") == "true":
        return
    raise MemdeckError(
        f"store {root} names the endpoint {theirs}, but the configured one is {ours or 'AWS'}; your AWS "
        "credentials would be sent there. Set storage.endpoint to it, or storage.accept_recorded_endpoint = "
        "true in the config to confirm"
    )


def _slug(uri: str) -> str:
    parsed = urlparse(uri)
    text = f"{parsed.netloc}{parsed.path}".strip("/")
    return "".join(c if c.isalnum() or c in "-_." else "-" for c in text) or "bucket"


def _recorded(root: Path) -> tuple[str | None, dict[str, str]]:
    try:
        meta = json.loads((root / "memdeck.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None, {}  # no store yet, or unreadable (Store.open reports that itself)
    if not isinstance(meta, dict):
        return None, {}
    uri = meta.get("storage_uri")
    options = meta.get("storage_options")
    options = {str(k): str(v) for k, v in options.items()} if isinstance(options, dict) else {}
    options = canonical_options(options, f"{root / 'memdeck.json'}")
    return (uri if isinstance(uri, str) and uri else None), options


def bind(store: Tables, location: StorageLocation) -> None:
    """Record the table location in the store's ``memdeck.json`` on first use; refuse a different one later.

    Without this, adding ``[storage] uri`` to the config would quietly open an empty bucket in place of a
    store's local tables (or the reverse), and every read would miss.
    """
    meta = store.meta
    recorded = meta.get("storage_uri")
    wanted = location.uri
    if recorded == wanted:
        return
    if recorded is None and "storage_uri" not in meta:
        has_local = store.layout.lance.is_dir() and any(store.layout.lance.glob("*.lance"))
        if wanted is not None and has_local:
            raise MemdeckError(
                f"store {store.root} keeps its tables locally in {store.layout.lance}, but this open puts "
                f"them at {wanted}; remove storage.uri from the config or use a new store directory"
            )
        if wanted is None:
            return  # a local store created before this field existed
        from memdeck.core.files import write_atomic_text

        meta["storage_uri"] = wanted
        # Endpoint and region too (never credentials), so the directory alone says where its tables are.
        meta["storage_options"] = {
            k: v for k, v in location.options.items() if k.lower() not in _CREDENTIAL_KEYS
        }
        write_atomic_text(store.layout.meta, json.dumps(meta, indent=2) + "\n", 0o600)
        return
    where = recorded or f"{store.layout.lance} (local)"
    raise MemdeckError(
        f"store {store.root} keeps its tables at {where}, but this open asks for {wanted or 'local tables'}; "
        "fix storage.uri in the config or use another store directory"
    )


class RemoteTables:
    """Which tables exist at a remote URI, listed at most once a second (a listing is a request)."""

    def __init__(self, db: Any, ttl: float = 1.0) -> None:
        self.db = db
        self.ttl = ttl
        self._names: set[str] = set()
        self._at = 0.0

    def exists(self, name: str) -> bool:
        if name in self._names:
            return True
        if time.monotonic() - self._at > self.ttl:
            self._names = set(_list_tables(self.db))
            self._at = time.monotonic()
        return name in self._names


def _list_tables(db: Any) -> list[str]:
    try:
        listed = db.list_tables()
    except AttributeError:  # older LanceDB
        return list(db.table_names())
    names = getattr(listed, "tables", listed)
    return [str(n) for n in names]


# --- errors a person can act on -----------------------------------------------------------------------

_ERRNO_TEXT = {
    errno.ENOSPC: (
        "no space left on the device",
        "free space and try again",
        "No space left on device",
        "os error 28",
    ),
    errno.EDQUOT: (
        "disk quota exceeded",
        "free space or raise the quota and try again",
        "Disk quota exceeded",
        "os error 122",
    ),
    errno.EROFS: (
        "the store is read-only (its file system is mounted read-only)",
        "make it writable, or work on a copy on a writable disk",
        "Read-only file system",
        "os error 30",
    ),
}


# Lance's words for a file it cannot parse (a truncated manifest, data file or index): the path it names.
_DAMAGED_FILE = re.compile(r"(?:Encountered corrupt file|corrupt file)\s+([^:]+\.(?:manifest|lance|txn|idx))")


# Lance's words for a data file shorter than its own footer says (a truncated fragment).
_UNREADABLE_DATA = re.compile(
    r"failed to fill whole buffer|file size is too small|unexpected end of file", re.I
)


def as_user_error(exc: BaseException) -> MemdeckError | None:
    """A MemdeckError for a storage failure a person can fix (disk full, quota, read-only), else None.

    Lance reports these as RuntimeError or OSError with the OS message inside its own text, so both the
    errno and the message are checked.
    """
    if isinstance(exc, MemdeckError):
        return exc
    code = getattr(exc, "errno", None)
    text = str(exc)
    if _UNREADABLE_DATA.search(text):
        return MemdeckError(
            "a data file of the store is damaged (Lance: "
            + " ".join(text.split())[:160]
            + "): it cannot be read, "
            "and nothing was changed. `memdeck doctor` names the file and the rows it can still read; restore "
            "the store's lance folder from a backup"
        )
    if "_versions" in text and "not found" in text.lower():
        return MemdeckError(
            "a table's version manifests cannot be found (its _versions folder is missing, or a forget in another "
            "process replaced the version being read): nothing was changed. Try again; if it persists, "
            "`memdeck doctor` checks every table"
        )
    damaged = _DAMAGED_FILE.search(text)
    if damaged:
        return MemdeckError(
            f"a file of the store is damaged ({damaged.group(1).strip()}): it cannot be read, and nothing was "
            "changed. `memdeck doctor` checks every table; restore the store's lance folder from a backup"
        )
    for number, (what, fix, *needles) in _ERRNO_TEXT.items():
        if code == number or any(n in text for n in needles):
            return MemdeckError(
                f"cannot write to the store: {what}; this write was not completed, and what was stored "
                f"before it is intact ({fix})"
            )
    return None


def vanished_version(exc: BaseException) -> bool:
    """A commit failed because a purge in another process removed the table version this handle was on
    (Lance: ``RuntimeError: lance error: Not found ... _versions/N.manifest``). Nothing was written."""
    text = str(exc).lower()
    return "not found" in text and ("manifest" in text or "_versions" in text)


RACED_WRITE = (
    "cannot write to the store: a forget in another process removed the table version this write was made "
    "against; nothing was written (try again)"
)


@contextmanager
def write_errors() -> Iterator[None]:
    """Turn a full or read-only disk under a write into one clear MemdeckError."""
    try:
        yield
    except (OSError, RuntimeError, ValueError) as exc:
        user = as_user_error(exc)
        if user is None:
            raise
        raise user from exc
