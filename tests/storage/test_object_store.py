"""Object storage: the same store with its tables in an S3 bucket (a local S3 server on 127.0.0.1).

Lance commits a table version by writing its manifest with ``If-None-Match: *``; the server here honours
that precondition, as AWS S3 does, so two writers racing for one version cannot both win and nothing
is lost. The server is started and stopped by these tests and listens on loopback only.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator

import boto3
import pytest

from memdeck.cli import main
from memdeck.core import MemdeckError, Scope
from memdeck.core.embed import HashEmbedder
from memdeck.core.maintenance.doctor import diagnose
from memdeck.core.storage.objectstore import location_from_config
from memdeck.core.store import Store
from tests.teamkit import CREDS, s3_server


@pytest.fixture(scope="module")
def s3_endpoint() -> Iterator[str]:
    with s3_server() as endpoint:
        yield endpoint


@pytest.fixture
def bucket(s3_endpoint: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    for key, value in CREDS.items():
        monkeypatch.setenv(key, value)
    name = "memdeck-" + request.node.name.replace("_", "-").lower()[:40].strip("-")
    boto3.client("s3", endpoint_url=s3_endpoint, region_name="us-east-1").create_bucket(Bucket=name)
    return name


def storage_toml(uri: str, endpoint: str) -> str:
    return (
        f'[embedding]\nmodel = "hash-384"\n\n[storage]\nuri = "{uri}"\nendpoint = "{endpoint}"\n'
        'region = "us-east-1"\nallow_http = true\n'
    )


def keys_in(endpoint: str, bucket: str) -> list[str]:
    listed = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1").list_objects_v2(Bucket=bucket)
    return [o["Key"] for o in listed.get("Contents", [])]


def test_the_default_store_lives_in_the_bucket_and_reopens(memdeck_home, s3_endpoint, bucket, capsys):
    """``[storage] uri`` in the config puts the default store's tables (no --store) in the bucket."""
    (memdeck_home / "config.toml").write_text(storage_toml(f"s3://{bucket}/team", s3_endpoint))
    path = memdeck_home / "store"  # the default store under MEMDECK_HOME
    store = Store.open(embedder=HashEmbedder())
    ids = [
        store.remember("the deploy key rotates monthly", tier="semantic", principal="alice").memory.id,
        store.remember("standup moved to 10:00", tier="episodic", principal="alice").memory.id,
        store.remember("release\nrun tests\ntag\npush", tier="procedural", principal="bob").memory.id,
    ]
    hits = store.recall("deploy key", principal="alice", record_access=False)
    assert hits.items[0].memory.id == ids[0]
    assert diagnose(store.engine).ok
    store.close()

    # Tables are in the bucket; the local directory keeps only what is private to this machine.
    assert not (path / "lance").exists()
    assert any(k.startswith("team/semantic.lance/_versions/") for k in keys_in(s3_endpoint, bucket))
    meta = json.loads((path / "memdeck.json").read_text())
    assert meta["storage_uri"] == f"s3://{bucket}/team"
    assert meta["storage_options"]["aws_endpoint"] == s3_endpoint
    assert "testing" not in json.dumps(meta)  # credentials are never written down

    again = Store.open(path, embedder=HashEmbedder(), create=False)
    assert again.count() == 3 and again.engine.tiers_present() == ["episodic", "semantic", "procedural"]
    assert again.get(ids[2], Scope.of("bob")).text.startswith("release")
    again.close()

    # The command line reads the same config and store.
    assert main(["recall", "deploy key", "--principal", "alice", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["id"] == ids[0]


def test_store_option_takes_a_bucket_uri(memdeck_home, s3_endpoint, bucket, capsys):
    """``--store s3://bucket/prefix``: endpoint and region from [storage], a local directory under remote/."""
    (memdeck_home / "config.toml").write_text(
        '[embedding]\nmodel = "hash-384"\n\n'
        f'[storage]\nendpoint = "{s3_endpoint}"\nregion = "us-east-1"\nallow_http = true\n'
    )
    uri = f"s3://{bucket}/cli"
    add = ["add", "the printer is on floor 3", "--tier", "semantic", "--principal", "dan", "--json"]
    assert main([*add, "--store", uri]) == 0
    added = json.loads(capsys.readouterr().out)["memory"]["id"]
    assert main(["list", "--principal", "dan", "--json", "--store", uri]) == 0
    assert [m["id"] for m in json.loads(capsys.readouterr().out)] == [added]
    local = memdeck_home / "remote" / f"{bucket}-cli"
    assert json.loads((local / "memdeck.json").read_text())["storage_uri"] == uri
    # Another machine (here: another MEMDECK_HOME) reads the same bucket with no store of its own yet.
    shutil.rmtree(local)
    assert main(["list", "--principal", "dan", "--json", "--store", uri]) == 0
    assert [m["id"] for m in json.loads(capsys.readouterr().out)] == [added]
    assert any(k.startswith("cli/semantic.lance/") for k in keys_in(s3_endpoint, bucket))


def test_a_second_machine_sees_the_first_ones_writes(tmp_path, s3_endpoint, bucket):
    uri = f"s3://{bucket}/shared"
    opts = {"aws_endpoint": s3_endpoint, "allow_http": "true", "aws_region": "us-east-1"}
    a = Store.open(tmp_path / "machine-a", embedder=HashEmbedder(), storage_uri=uri, storage_options=opts)
    b = Store.open(
        tmp_path / "machine-b",
        embedder=HashEmbedder(),
        storage_uri=uri,
        storage_options=opts,
        read_consistency=0,
    )
    mem = a.remember("the VPN config lives in the wiki", tier="semantic", principal="carol").memory
    assert b.get(mem.id, Scope.of("carol")).text == mem.text
    assert b.count(Scope.of("carol")) == 1
    a.close()
    b.close()


def test_the_store_directory_is_bound_to_its_table_location(tmp_path, memdeck_home, s3_endpoint, bucket):
    # A default store with local tables is not silently switched to the bucket by a config change.
    local = Store.open(embedder=HashEmbedder())
    local.remember("a local fact", tier="semantic", principal="p")
    local.close()
    (memdeck_home / "config.toml").write_text(storage_toml(f"s3://{bucket}/x", s3_endpoint))
    with pytest.raises(MemdeckError, match="keeps its tables locally"):
        Store.open(embedder=HashEmbedder())

    # The config's URI is for the default store only: another directory (a demo, a test) stays local.
    other = Store.open(tmp_path / "demo", embedder=HashEmbedder())
    other.remember("a demo fact", tier="semantic", principal="p")
    other.close()
    assert (tmp_path / "demo" / "lance" / "semantic.lance").is_dir()
    assert not any(k.startswith("x/") for k in keys_in(s3_endpoint, bucket))

    # A store created on the bucket remembers where (and how to reach it). Without the config naming that
    # endpoint, opening it needs a confirmation in the config (the AWS credentials go there), and plain
    # HTTP the config's allow_http: the directory alone no longer decides either (issue #14).
    opts = {"aws_endpoint": s3_endpoint, "allow_http": "true", "aws_region": "us-east-1"}
    remote = Store.open(
        tmp_path / "r", embedder=HashEmbedder(), storage_uri=f"s3://{bucket}/r", storage_options=opts
    )
    remote.remember("a remote fact", tier="semantic", principal="p")
    remote.close()
    (memdeck_home / "config.toml").write_text('[embedding]\nmodel = "hash-384"\n')
    with pytest.raises(MemdeckError, match="accept_recorded_endpoint"):
        Store.open(tmp_path / "r", embedder=HashEmbedder(), create=False)
    (memdeck_home / "config.toml").write_text(
        '[embedding]\nmodel = "hash-384"\n\n[storage]\naccept_recorded_endpoint = true\nallow_http = true\n'
    )
    again = Store.open(tmp_path / "r", embedder=HashEmbedder(), create=False)
    assert [m.text for m in again.list()] == ["a remote fact"]
    again.close()
    with pytest.raises(MemdeckError, match=f"s3://{bucket}/r"):
        Store.open(tmp_path / "r", embedder=HashEmbedder(), storage_uri=f"s3://{bucket}/elsewhere")


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ({"uri": "/var/lib/memdeck"}, "not an object-store URI"),
        ({"uri": "s3://"}, "names no bucket"),
        ({"uri": "s3://b/p", "endpoint": "http://127.0.0.1:9"}, "allow_http"),
        ({"uri": "s3://b/p", "endpoint": "ftp://host"}, "http"),
        ({"uri": "s3://b/p", "allow_http": "maybe"}, "true or false"),
        ({"uri": "s3://b/p", "options": {"aws_secret_access_key": "x"}}, "credentials"),
    ],
)
def test_bad_storage_config_is_one_clear_error(section, message):
    with pytest.raises(MemdeckError, match=message):
        location_from_config({"storage": section})


def test_credentials_come_from_the_environment(monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    loc = location_from_config({"storage": {"uri": "s3://b/p/", "region": "eu-west-1"}})
    assert loc.uri == "s3://b/p"
    assert loc.options == {
        "aws_region": "eu-west-1",
        "aws_access_key_id": "AKIDEXAMPLE",
        "aws_secret_access_key": "secret",
    }
    assert "secret" not in loc.describe()


WRITER = textwrap.dedent("""
    import sys
    from memdeck.core.embed import HashEmbedder
    from memdeck.core.store import Store
    local, uri, endpoint, who, batches = sys.argv[1:6]
    opts = {"aws_endpoint": endpoint, "allow_http": "true", "aws_region": "us-east-1"}
    store = Store.open(local, embedder=HashEmbedder(), storage_uri=uri, storage_options=opts)
    for b in range(int(batches)):
        store.remember_many([{"text": f"{who} fact {b}-{i}", "tier": "semantic", "principal": who}
                             for i in range(3)]
                            + [{"text": f"{who} episode {b}", "tier": "episodic", "principal": who}])
    store.close()
""")


def test_two_writers_on_one_bucket_lose_nothing(tmp_path, s3_endpoint, bucket):
    """Two machines' stores (own local directories, own LanceDB handles) writing at once, as threads."""
    uri = f"s3://{bucket}/team"
    opts = {"aws_endpoint": s3_endpoint, "allow_http": "true", "aws_region": "us-east-1"}
    stores = {
        who: Store.open(
            tmp_path / f"machine-{who}", embedder=HashEmbedder(), storage_uri=uri, storage_options=opts
        )
        for who in ("ann", "ben")
    }
    stores["ann"].remember("seed", tier="semantic", principal="seed")  # both race on appends, not on creation
    failures: list[BaseException] = []

    def write(who: str) -> None:
        try:
            for b in range(6):
                stores[who].remember_many(
                    [{"text": f"{who} fact {b}-{i}", "tier": "semantic", "principal": who} for i in range(3)]
                )
        except BaseException as exc:  # noqa: BLE001
            failures.append(exc)

    threads = [threading.Thread(target=write, args=(who,)) for who in stores]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not failures, failures
    reader = Store.open(tmp_path / "reader", embedder=HashEmbedder(), storage_uri=uri, storage_options=opts)
    for who in stores:
        assert {m.text for m in reader.list(Scope.of(who), limit=100)} == {
            f"{who} fact {b}-{i}" for b in range(6) for i in range(3)
        }
    assert reader.count() == 37
    for s in (*stores.values(), reader):
        s.close()


@pytest.mark.slow
def test_two_writer_processes_on_one_bucket_lose_nothing(tmp_path, s3_endpoint, bucket):
    uri = f"s3://{bucket}/team"
    batches = 12
    env = {**os.environ, **CREDS, "MEMDECK_HOME": str(tmp_path / "home")}
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                WRITER,
                str(tmp_path / f"machine-{who}"),
                uri,
                s3_endpoint,
                who,
                str(batches),
            ],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for who in ("ann", "ben")
    ]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err.decode()[-2000:]
    opts = {"aws_endpoint": s3_endpoint, "allow_http": "true", "aws_region": "us-east-1"}
    store = Store.open(tmp_path / "reader", embedder=HashEmbedder(), storage_uri=uri, storage_options=opts)
    for who in ("ann", "ben"):
        texts = {m.text for m in store.list(Scope.of(who), limit=1000)}
        expected = {f"{who} fact {b}-{i}" for b in range(batches) for i in range(3)}
        expected |= {f"{who} episode {b}" for b in range(batches)}
        assert texts == expected
    assert store.count() == 2 * batches * 4
    assert diagnose(store.engine).ok
    store.close()


def test_an_append_refused_by_a_concurrent_creation_is_made_again(tmp_path):
    """Two machines creating one table at once: LanceDB commits the later creation as an overwrite (empty, same
    schema), and an append made against the earlier one is refused. memdeck appends again on the new version
    instead of failing the write."""
    import lance
    import pyarrow as pa

    store = Store.open(tmp_path / "store", embedder=HashEmbedder(), read_consistency=3600)
    store.remember("first", tier="episodic", principal="ann")
    uri = f"{store.engine.uri}/episodic.lance"
    empty = pa.Table.from_pylist([], schema=store.engine.table("episodic").schema)
    lance.write_dataset(empty, uri, mode="overwrite")  # the other machine's creation, as LanceDB commits it
    kept = store.remember("second", tier="episodic", principal="ann").memory
    store.engine.refresh()
    assert [m.id for m in store.list(Scope.of("ann"), limit=10)] == [kept.id]
    store.close()
