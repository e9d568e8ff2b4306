"""Forget on a store shared through a bucket against the same forget on a local disk, at 10k and 100k memories.
Writes bench/RESULTS-team-store.md.

    python bench/bench_team_store.py                 # 10k and 100k
    python bench/bench_team_store.py --sizes 10000

The bucket is moto's S3 server, run in its own process on 127.0.0.1 (in memory, no network, sharing the
machine's cores): the figures show what the lease, the journal in the bucket, the receipt chain and reading
every object of the prefix back cost, not a real S3 round trip (a few ms each on AWS, about 1 ms here). Each
(size, location) runs in its own process; the store is built as ``bench_forget.py`` builds it, and each
forget is the full purge with its checks and signed receipt.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_forget import build, forget_one
from common import BENCH, WORK, Timer, bench_env, log, machine_info, peak_rss_mb, run_child

CREDS = {"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench", "AWS_REGION": "us-east-1"}


def child(size: int, where: str, endpoint: str, out: Path) -> None:
    import shutil

    import boto3

    root = WORK / f"team-{where}-{size}"
    storage: dict[str, Any] | None = None
    if where == "bucket":
        bucket = f"bench-{size}-{int(time.time())}"
        boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1").create_bucket(Bucket=bucket)
        storage = {
            "storage_uri": f"s3://{bucket}/team",
            "storage_options": {"aws_endpoint": endpoint, "allow_http": "true", "aws_region": "us-east-1"},
        }
    log(f"building {size:,} memories ({where})")
    store, info = build(size, root, storage)
    runs = [forget_one(store, v) for v in info["victims"][:3]]
    result = {
        "size": size,
        "where": where,
        "build": info,
        "runs": runs,
        "peak_rss_mb": round(peak_rss_mb(), 1),
    }
    if where == "bucket":
        objects = store.engine.lock.objects
        result["objects"] = len(objects.list(""))
    store.close()
    out.write_text(json.dumps(result, indent=2))
    shutil.rmtree(root, ignore_errors=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def report(
    results: list[dict[str, Any]], info: dict[str, Any], started: datetime, load_after: list[float]
) -> str:
    v = info["versions"]
    lines = [
        "## Forget on a shared bucket against a local disk (bench/bench_team_store.py)",
        "",
        (
            f"Run {started:%Y-%m-%d %H:%M} on {info['os']}, {info['cpu']}, {info['cores']} CPUs, {info['ram_gib']} GiB "
            f"(load average {info['load_avg'][0]} at the start, {load_after[0]} at the end: the machine is shared with "
            f"other builds), Python {info['python']}, lancedb {v['lancedb']}, pylance {v['pylance']}. "
            "`python bench/bench_team_store.py`. The bucket is moto's S3 server in its own process on 127.0.0.1."
        ),
        "",
        (
            "One forget = the full purge of one memory: on the bucket also the lease (take, renew at each step, "
            "release), the journal written to the bucket at each step, every object of the prefix listed and read "
            "back for the checks, and the receipt appended to the bucket's chain."
        ),
        "",
        "| memories | where | forget one memory (wall, each run) | median | CPU | slowest steps (ms) | outcome | objects | write |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        if "error" in r:
            lines.append(f"| {r['size']:,} | {r['where']} | failed: {r['error']} | | | | | | |")
            continue
        walls = [x["seconds"] for x in r["runs"]]
        worst = max(r["runs"], key=lambda x: x["seconds"])
        slow = ", ".join(f"{k} {v}" for k, v in sorted(worst["steps_ms"].items(), key=lambda kv: -kv[1])[:3])
        outcome = (
            "verified"
            if all(x["outcome"] == "verified" for x in r["runs"])
            else str([x["failed"] for x in r["runs"]])
        )
        lines.append(
            f"| {r['size']:,} | {r['where']} | {', '.join(f'{w:.2f}' for w in walls)} s | {np.median(walls):.2f} s | "
            f"{np.median([x['cpu_seconds'] for x in r['runs']]):.2f} s | {slow} | {outcome} | "
            f"{r.get('objects', '-')} | {r['build']['write_s']} s |"
        )
    lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", help="comma-separated sizes, e.g. 10000,100000")
    parser.add_argument(
        "--child", nargs=4, metavar=("SIZE", "WHERE", "ENDPOINT", "OUT"), help=argparse.SUPPRESS
    )
    parser.add_argument("--out", default=str(BENCH / "RESULTS-team-store.md"))
    args = parser.parse_args(argv)
    if args.child:
        child(int(args.child[0]), args.child[1], args.child[2], Path(args.child[3]))
        return 0
    sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else [10_000, 100_000]
    started = datetime.now()
    info = machine_info()
    port = free_port()
    env = {**bench_env(), **CREDS}
    server = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    endpoint = f"http://127.0.0.1:{port}"
    results = []
    try:
        time.sleep(3)
        for size in sizes:
            for where in ("local", "bucket"):
                out = WORK / f"team-{where}-{size}.json"
                out.unlink(missing_ok=True)
                with Timer() as t:
                    res = run_child(
                        [sys.executable, __file__, "--child", str(size), where, endpoint, str(out)],
                        timeout=3600,
                        env=env,
                    )
                log(f"{where} {size:,}: {t.seconds:.0f} s")
                if res.ok and out.exists():
                    results.append(json.loads(out.read_text()))
                else:
                    tail = (res.stderr or "").strip().splitlines()[-1:] or ["killed at the time limit"]
                    results.append({"size": size, "where": where, "error": tail[0][:200]})
                    log(f"{where} {size} failed: {res.stderr[-2000:]}")
    finally:
        server.terminate()
        server.wait(timeout=30)
    text = report(results, info, started, [round(x, 2) for x in os.getloadavg()])
    Path(args.out).write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
