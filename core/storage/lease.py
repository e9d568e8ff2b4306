"""A lease in a bucket: one purge at a time per store across machines, with an expiry and a fencing token.

Built on conditional writes only (``If-None-Match: *`` to create, ``If-Match: <etag>`` to replace), which
AWS S3, current MinIO and R2 honour, so no other service is needed:

- ``_memdeck/lease.json`` holds ``{"holder", "token", "state": "held" | "free", "ttl"}``. Taking it is a
  conditional replace of the version just read, with ``token + 1``: two machines racing cannot both win, and
  the token only grows (the fencing token, and the store's purge epoch). The holder renews it (a replace of
  its own etag) every third of its ``ttl``; releasing writes ``state: free`` the same way.
- Expiry never compares clocks of two machines: a lease counts as expired when this machine has seen the
  same version of it (same etag) for longer than its ``ttl`` on its own monotonic clock; only then may it
  replace that version. The holder trusts its lease for ``ttl`` minus a margin after its last renewal began.
- Writers announce themselves with an object under ``_memdeck/writers/`` for the length of a commit, then
  read the lease; a purge takes the lease, then waits until no writer object is left (or one has not been
  renewed for its ``ttl``: a crashed writer). With a strongly consistent store one of the two always sees
  the other, so a purge never removes files a writer has written but not yet committed.

:class:`S3Objects` (boto3) and :class:`LocalObjects` (a directory, with ``flock`` for the compare-and-swap)
implement the same small interface, so the lease behaves the same on both.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlparse

from memdeck.core.errors import MemdeckError, StoreLocked

LEASE_KEY = "_memdeck/lease.json"
WRITERS = "_memdeck/writers/"
DEFAULT_TTL_S = 30.0
POLL_S = 0.1


class LeaseLost(StoreLocked):
    """This machine's lease expired and another took it: the step it was about to do is refused."""


class ConditionalObjects(Protocol):
    """Small objects with compare-and-swap, relative to a store's prefix."""

    def get(self, key: str) -> tuple[bytes, str] | None: ...
    def create(self, key: str, body: bytes) -> str | None: ...  # None: it exists
    def replace(self, key: str, body: bytes, etag: str) -> str | None: ...  # None: not that version
    def put(self, key: str, body: bytes) -> str: ...
    def delete(self, key: str) -> None: ...
    def list(self, prefix: str) -> list[str]: ...


def holder_name() -> str:
    """Who holds a lease, for messages: the machine, the process and a random part."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


class S3Objects:
    """:class:`ConditionalObjects` in an S3 bucket under the store's prefix, through boto3."""

    def __init__(self, uri: str, options: dict[str, str] | None = None) -> None:
        try:
            import boto3
            from botocore.config import Config
        except ImportError:  # a third-party extra, not memdeck's own code
            raise MemdeckError(
                "a store shared through an S3 bucket needs boto3 for its lease: pip install 'memdeck[s3]'"
            ) from None

        options = options or {}
        parsed = urlparse(uri)
        self.bucket = parsed.netloc
        self.prefix = parsed.path.strip("/") + "/" if parsed.path.strip("/") else ""
        self.client: Any = boto3.client(
            "s3",
            endpoint_url=options.get("aws_endpoint") or None,
            region_name=options.get("aws_region") or os.environ.get("AWS_REGION") or "us-east-1",
            aws_access_key_id=options.get("aws_access_key_id"),
            aws_secret_access_key=options.get("aws_secret_access_key"),
            aws_session_token=options.get("aws_session_token"),
            config=Config(retries={"max_attempts": 3, "mode": "standard"}),
        )

    def _key(self, key: str) -> str:
        return self.prefix + key

    @staticmethod
    def _status(exc: Exception) -> int:
        return int(getattr(exc, "response", {}).get("ResponseMetadata", {}).get("HTTPStatusCode", 0))

    def get(self, key: str) -> tuple[bytes, str] | None:
        try:
            out = self.client.get_object(Bucket=self.bucket, Key=self._key(key))
        except self.client.exceptions.NoSuchKey:
            return None
        return out["Body"].read(), str(out["ETag"])

    def create(self, key: str, body: bytes) -> str | None:
        return self._conditional(key, body, IfNoneMatch="*")

    def replace(self, key: str, body: bytes, etag: str) -> str | None:
        return self._conditional(key, body, IfMatch=etag)

    def _conditional(self, key: str, body: bytes, **condition: str) -> str | None:
        from botocore.exceptions import ClientError

        try:
            out = self.client.put_object(Bucket=self.bucket, Key=self._key(key), Body=body, **condition)
        except ClientError as exc:
            # 412: the precondition failed; 409: a concurrent conditional write won; 404: If-Match on a key
            # that is gone (some servers answer that instead of 412).
            if self._status(exc) in (404, 409, 412):
                return None
            raise
        return str(out["ETag"])

    def put(self, key: str, body: bytes) -> str:
        return str(self.client.put_object(Bucket=self.bucket, Key=self._key(key), Body=body)["ETag"])

    def delete(self, key: str) -> None:
        self.client.delete_object(Bucket=self.bucket, Key=self._key(key))

    def list(self, prefix: str) -> list[str]:
        keys: list[str] = []
        paginator = self.client.get_paginator("list_objects_v2")
        for page in paginator.paginate(Bucket=self.bucket, Prefix=self._key(prefix)):
            keys.extend(str(o["Key"])[len(self.prefix) :] for o in page.get("Contents", []))
        return keys


class LocalObjects:
    """:class:`ConditionalObjects` in a local directory; the etag is the content's hash and a ``flock`` on
    one file makes each compare-and-swap atomic between processes."""

    def __init__(self, root: Path) -> None:
        self.root = root

    @contextlib.contextmanager
    def _cas(self) -> Iterator[None]:
        self.root.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.root / ".cas.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def get(self, key: str) -> tuple[bytes, str] | None:
        try:
            body = (self.root / key).read_bytes()
        except FileNotFoundError:
            return None
        return body, hashlib.sha256(body).hexdigest()

    def _write(self, key: str, body: bytes) -> str:
        from memdeck.core.files import write_atomic_bytes

        path = self.root / key
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic_bytes(path, body, 0o600)
        return hashlib.sha256(body).hexdigest()

    def create(self, key: str, body: bytes) -> str | None:
        with self._cas():
            return None if (self.root / key).exists() else self._write(key, body)

    def replace(self, key: str, body: bytes, etag: str) -> str | None:
        with self._cas():
            current = self.get(key)
            return self._write(key, body) if current is not None and current[1] == etag else None

    def put(self, key: str, body: bytes) -> str:
        with self._cas():
            return self._write(key, body)

    def delete(self, key: str) -> None:
        with self._cas(), contextlib.suppress(FileNotFoundError):
            (self.root / key).unlink()

    def list(self, prefix: str) -> list[str]:
        base = self.root / prefix
        directory = base if prefix.endswith("/") else base.parent
        if not directory.is_dir():
            return []
        return sorted(
            str(p.relative_to(self.root))
            for p in directory.rglob("*")
            if p.is_file() and str(p.relative_to(self.root)).startswith(prefix)
        )


@dataclass
class LeaseView:
    """The lease as last read: who, which token, held or free, and the version (etag) read."""

    holder: str
    token: int
    held: bool
    ttl: float
    etag: str | None  # None: no lease object yet

    @classmethod
    def parse(cls, got: tuple[bytes, str] | None) -> LeaseView:
        if got is None:
            return cls("", 0, False, 0.0, None)
        try:
            data = json.loads(got[0])
            return cls(
                str(data["holder"]),
                int(data["token"]),
                data.get("state") == "held",
                float(data.get("ttl", DEFAULT_TTL_S)),
                got[1],
            )
        except (ValueError, KeyError, TypeError):
            raise MemdeckError(f"the store's lease object {LEASE_KEY} is damaged") from None


class Lease:
    """This process's side of the bucket lease (see the module docstring)."""

    def __init__(
        self, objects: ConditionalObjects, *, ttl: float = DEFAULT_TTL_S, holder: str | None = None
    ) -> None:
        self.objects = objects
        self.ttl = ttl
        self.holder = holder or holder_name()
        self.token: int | None = None  # set while this process holds the lease
        self._etag: str | None = None
        self._renewed_at = 0.0  # monotonic time the last successful renewal began
        self._seen: tuple[str | None, float] = (None, 0.0)  # (etag, first seen) for expiry
        self._lost: str | None = None  # why the last lease was lost, for every later refusal
        self._mutex = threading.Lock()
        self._heartbeat: threading.Thread | None = None
        self._stop = threading.Event()

    # -- reading --

    def view(self) -> LeaseView:
        view = LeaseView.parse(self.objects.get(LEASE_KEY))
        if view.etag != self._seen[0]:
            self._seen = (view.etag, time.monotonic())
        return view

    def expired(self, view: LeaseView) -> bool:
        """Held, but this machine has seen that same version for longer than its ttl."""
        return view.held and view.etag == self._seen[0] and time.monotonic() - self._seen[1] > view.ttl

    def busy(self, view: LeaseView) -> bool:
        """Another holder has it now (held and not expired)."""
        return view.held and view.holder != self.holder and not self.expired(view)

    def break_expired(self, view: LeaseView) -> LeaseView | None:
        """Fence out the holder of an expired lease (its token + 1, free) before writing past it: without
        this, a holder that was only paused would resume with its lease intact. None if it changed meanwhile."""
        body = json.dumps(
            {
                "holder": self.holder,
                "token": view.token + 1,
                "state": "free",
                "ttl": view.ttl,
                "broken": view.holder,
            },
            sort_keys=True,
        ).encode()
        etag = self.objects.replace(LEASE_KEY, body, view.etag) if view.etag else None
        return None if etag is None else LeaseView(self.holder, view.token + 1, False, view.ttl, etag)

    # -- holding --

    def _body(self, token: int, state: str) -> bytes:
        return json.dumps(
            {"holder": self.holder, "token": token, "state": state, "ttl": self.ttl, "pid": os.getpid()},
            sort_keys=True,
        ).encode()

    def try_acquire(self) -> bool:
        view = self.view()
        if view.held and not self.expired(view):
            return False
        token = view.token + 1
        began = time.monotonic()
        body = self._body(token, "held")
        etag = (
            self.objects.create(LEASE_KEY, body)
            if view.etag is None
            else self.objects.replace(LEASE_KEY, body, view.etag)
        )
        if etag is None:
            return False  # another machine replaced it first
        with self._mutex:
            self.token, self._etag, self._renewed_at, self._lost = token, etag, began, None
        self._start_heartbeat()
        return True

    def acquire(self, timeout: float) -> int:
        deadline = time.monotonic() + timeout
        while not self.try_acquire():
            if time.monotonic() >= deadline:
                view = self.view()
                raise StoreLocked(
                    f"the store is busy: a forget on {view.holder or 'another machine'} holds its lease "
                    f"(token {view.token}); try again"
                )
            time.sleep(POLL_S)
        assert self.token is not None
        return self.token

    def renew(self) -> None:
        """Extend the lease; :class:`LeaseLost` if another machine took it meanwhile."""
        with self._mutex:
            if self.token is None or self._etag is None:
                raise LeaseLost(self._lost or "this process holds no lease on the store")
            began = time.monotonic()
            etag = self.objects.replace(LEASE_KEY, self._body(self.token, "held"), self._etag)
            if etag is None:
                self._lost = (
                    f"the store's lease (token {self.token}) expired and another machine took it; this forget "
                    "stopped before its next step, and that machine finishes it"
                )
                self.token = self._etag = None
                raise LeaseLost(self._lost)
            self._etag, self._renewed_at = etag, began

    def fence(self) -> int:
        """Before a destructive step: renew the exact version this process wrote (``If-Match``), which
        fails if another machine took the lease meanwhile. Returns the fencing token."""
        self.renew()
        assert self.token is not None
        return self.token

    def release(self) -> None:
        self._stop_heartbeat()
        with self._mutex:
            token, etag = self.token, self._etag
            self.token = self._etag = None
        if token is not None and etag is not None:
            self.objects.replace(
                LEASE_KEY, self._body(token, "free"), etag
            )  # None: lost already, nothing to do

    # -- heartbeat --

    def _start_heartbeat(self) -> None:
        self._stop.clear()
        self._heartbeat = threading.Thread(target=self._beat, name="memdeck-lease", daemon=True)
        self._heartbeat.start()

    def _stop_heartbeat(self) -> None:
        self._stop.set()
        if self._heartbeat is not None and self._heartbeat is not threading.current_thread():
            self._heartbeat.join(timeout=5)
        self._heartbeat = None

    def _beat(self) -> None:
        while not self._stop.wait(self.ttl / 3):
            try:
                self.renew()
            except LeaseLost:
                return
            except Exception:  # noqa: BLE001 - a failed request: the next beat (or the fence) tries again
                continue


class Writers:
    """The objects writers keep under ``_memdeck/writers/`` for the length of a commit."""

    def __init__(
        self, objects: ConditionalObjects, *, ttl: float = DEFAULT_TTL_S, holder: str | None = None
    ) -> None:
        self.objects = objects
        self.ttl = ttl
        self.holder = holder or holder_name()
        self._seen: dict[str, tuple[str, float]] = {}

    def announce(self) -> str:
        key = f"{WRITERS}{self.holder.replace(':', '-')}-{uuid.uuid4().hex[:12]}.json"
        self.objects.put(
            key, json.dumps({"holder": self.holder, "ttl": self.ttl, "at": time.time()}).encode()
        )
        return key

    def renew(self, key: str) -> None:
        self.objects.put(
            key, json.dumps({"holder": self.holder, "ttl": self.ttl, "at": time.time()}).encode()
        )

    def withdraw(self, key: str) -> None:
        self.objects.delete(key)

    def active(self) -> list[str]:
        """Writer objects not yet expired; one seen unchanged for longer than its ttl is a crashed writer's,
        and is removed."""
        live = []
        now = time.monotonic()
        for key in self.objects.list(WRITERS):
            got = self.objects.get(key)
            if got is None:
                continue
            etag = got[1]
            seen = self._seen.get(key)
            if seen is None or seen[0] != etag:
                self._seen[key] = (etag, now)
                live.append(key)
            elif now - seen[1] > self.ttl:
                self.objects.delete(key)
            else:
                live.append(key)
        return live


def create_once(objects: ConditionalObjects, key: str, make: Callable[[], bytes]) -> bytes:
    """The body of ``key``, created with ``make()`` when absent (``If-None-Match: *``): every machine that
    races to create it ends up reading the one body that won."""
    got = objects.get(key)
    if got is not None:
        return got[0]
    body = make()
    if objects.create(key, body) is not None:
        return body
    got = objects.get(key)
    if got is None:  # created and removed between the two requests: nothing memdeck does
        raise MemdeckError(f"the object {key} in the store's bucket vanished while it was created; try again")
    return got[0]
