"""A team of machines on one bucket prefix: moto's S3 server on 127.0.0.1, a bucket per test, and machines that
are separate processes, each with its own local store directory and MEMDECK_HOME."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import subprocess
import sys
import tempfile
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pyarrow as pa
import pytest

from memdeck.core.embed import HashEmbedder
from memdeck.core.store import Store

CREDS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_REGION": "us-east-1"}
TTL = 3.0


@contextlib.contextmanager
def s3_server() -> Iterator[str]:
    """moto's S3 server on 127.0.0.1 (its endpoint), with conditional writes made atomic.

    moto checks ``If-None-Match`` / ``If-Match`` and then stores the object, each request in its own thread,
    so two PUTs of the same key can both pass the check; S3 decides them atomically. Lance commits a table
    version with ``If-None-Match: *``, and under load (pytest -n 6) two writer processes both "created"
    version N and one write was lost. Here a conditional PUT holds a lock from its check to its store, as S3
    behaves; an unconditional PUT is untouched."""
    import moto.server as moto_server
    from moto.s3.responses import S3Response

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    put = S3Response.put_object
    lock = threading.Lock()

    def atomic_put(self: Any) -> Any:
        if self.headers.get("If-None-Match") is None and self.headers.get("If-Match") is None:
            return put(self)
        with lock:
            return put(self)

    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(S3Response, "put_object", atomic_put)
        server.start()
        host, port = server.get_host_and_port()
        try:
            yield f"http://{host}:{port}"
        finally:
            server.stop()


def options(endpoint: str) -> dict[str, str]:
    return {"aws_endpoint": endpoint, "allow_http": "true", "aws_region": "us-east-1"}


MACHINE = textwrap.dedent("""
    import json, sys, time
    from memdeck.core.embed import HashEmbedder
    from memdeck.core.errors import StoreLocked
    from memdeck.core.store import Store
    local, uri, endpoint, mode, arg, out = sys.argv[1:7]
    opts = {"aws_endpoint": endpoint, "allow_http": "true", "aws_region": "us-east-1"}
    store = Store.open(local, embedder=HashEmbedder(), storage_uri=uri, storage_options=opts)
    with open(out, "a") as fh:
        if mode == "write":
            who, batches = arg.split(":")
            for b in range(int(batches)):
                rows = [{"text": f"{who} note {b}-{i}", "tier": "semantic", "principal": who} for i in range(2)]
                while True:
                    try:
                        done = store.remember_many(rows)
                        break
                    except StoreLocked as exc:  # the clear, retryable refusal: try again
                        print(json.dumps({"retry": str(exc)}), file=fh, flush=True)
                for r in done:
                    print(json.dumps({"id": r.memory.id, "text": r.memory.text}), file=fh, flush=True)
        elif mode == "seed":
            done = store.remember_many([{"text": f"doomed zebraquartz{i} memo", "tier": "semantic",
                                         "principal": "carol"} for i in range(int(arg))])
            for r in done:
                print(json.dumps({"id": r.memory.id}), file=fh, flush=True)
        elif mode == "forget":
            ids = [json.loads(line)["id"] for line in open(arg)]
            for k in range(0, len(ids), 5):
                receipt = store.forget(ids[k:k + 5], "user request")
                print(json.dumps({"receipt": receipt["receipt_id"]}), file=fh, flush=True)
    store.close()
""")


class Machines:
    def __init__(self, tmp_path: Path, uri: str, endpoint: str, ttl: float = TTL) -> None:
        self.ttl = ttl
        self.tmp = tmp_path
        self.uri = uri
        self.endpoint = endpoint

    def env(self, name: str, **extra: str) -> dict[str, str]:
        home = self.tmp / f"home-{name}"
        home.mkdir(exist_ok=True)
        (home / "config.toml").write_text(
            f'[embedding]\nmodel = "hash-384"\n\n[storage]\nlease_seconds = {self.ttl}\nendpoint = "{self.endpoint}"\n'
            'region = "us-east-1"\nallow_http = true\n'
        )
        return {**os.environ, **CREDS, "MEMDECK_HOME": str(home), **extra}

    def start(self, name: str, mode: str, arg: str, **extra: str) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            [
                sys.executable,
                "-c",
                MACHINE,
                str(self.tmp / f"machine-{name}"),
                self.uri,
                self.endpoint,
                mode,
                arg,
                str(self.out(name)),
            ],
            env=self.env(name, **extra),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )

    def run(self, name: str, mode: str, arg: str, **extra: str) -> None:
        proc = self.start(name, mode, arg, **extra)
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err.decode()[-3000:]

    def out(self, name: str) -> Path:
        return self.tmp / f"out-{name}.jsonl"

    def lines(self, name: str) -> list[dict[str, str]]:
        path = self.out(name)
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []

    def open(self, name: str, monkeypatch: pytest.MonkeyPatch) -> Store:
        monkeypatch.setenv("MEMDECK_HOME", self.env(name)["MEMDECK_HOME"])
        return Store.open(
            self.tmp / f"machine-{name}",
            embedder=HashEmbedder(),
            storage_uri=self.uri,
            storage_options=options(self.endpoint),
        )


def nothing_forgotten_in_the_prefix(
    endpoint: str, bucket: str, prefix: str, ids: list[str], needle: str
) -> None:
    """Read every object under the prefix: Lance files decoded, everything else raw. Nothing holds a forgotten
    id (receipts aside) or text."""
    from lance.file import LanceFileReader

    s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1")
    keys = [
        o["Key"]
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix + "/")
        for o in page.get("Contents", [])
    ]
    assert any(k.endswith(".lance") for k in keys)
    wanted = {i.encode() for i in ids} | {needle.encode()}
    with tempfile.TemporaryDirectory() as tmp:
        for key in keys:
            path = Path(tmp) / key.replace("/", "_")
            s3.download_file(bucket, key, str(path))
            raw = path.read_bytes().lower()
            # A receipt names the ids it deleted, by design (in the bucket as on a local disk); never the text.
            receipt = key.startswith(prefix + "/_memdeck/receipts/")
            assert not any(w in raw for w in ({needle.encode()} if receipt else wanted)), key
            if key.endswith(".lance"):
                table = LanceFileReader(str(path)).read_all(batch_size=65536).to_table()
                for column in table.columns:
                    if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
                        values = {str(v).lower() for v in column.to_pylist() if v is not None}
                        assert not values & {i.lower() for i in ids}, key
                        assert not any(needle in v for v in values), key
