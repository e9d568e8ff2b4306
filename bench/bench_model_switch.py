"""Switching a 10k store's embedding model, killed with SIGKILL twice midway, then finished: nothing lost.

A store of N memories (two thirds episodic, a third semantic, three principals) is built with the hash
embedder at 384 dimensions through `memdeck import`, then switched to the 768-dimension hash embedder with
`memdeck model use hash-768` (the same plumbing as MiniLM to MPNet, with no download and no model time, so the
figures are the switch's own cost). The switch is killed with SIGKILL once in the episodic table and once in
the semantic one; between the kills the store must still answer on its old vectors. The third run finishes.
Then every row must be there, 768-d, with its own text's vector, and recall must find a marker row.

    python bench/bench_model_switch.py [--size 10000] [--out bench/RESULTS-model-switch.md]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import lance
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import machine_info

from memdeck.core.embed import HashEmbedder

MEMDECK = Path(sys.executable).with_name("memdeck")
PRINCIPALS = ("alice", "bob", "chen")


def memdeck(env: dict[str, str], store: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(MEMDECK), "--store", str(store), *args], env=env, capture_output=True, text=True, check=False
    )


def vectors(store: Path) -> dict[str, tuple[str, np.ndarray]]:
    out: dict[str, tuple[str, np.ndarray]] = {}
    for tier in ("episodic", "semantic"):
        path = store / "lance" / f"{tier}.lance"
        if not path.exists():
            continue
        table = lance.dataset(str(path)).to_table(columns=["id", "text", "vector"])
        ids, texts = table.column("id").to_pylist(), table.column("text").to_pylist()
        vecs = np.asarray(table.column("vector").to_pylist(), dtype=np.float32)
        out.update({i: (t, v) for i, t, v in zip(ids, texts, vecs, strict=True)})
    return out


def kill_when(env: dict[str, str], store: Path, tier: str, at: int) -> tuple[float, list[str]]:
    """Run the switch and SIGKILL it once the progress of ``tier`` reaches ``at`` rows."""
    start = time.monotonic()
    proc = subprocess.Popen(
        [str(MEMDECK), "--store", str(store), "model", "use", "hash-768", "--batch-size", "256"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    seen: list[str] = []
    while True:
        line = proc.stderr.readline()
        if not line:
            break
        seen.append(line.rstrip())
        if line.startswith(f"re-embedding {tier}") and int(line.split()[-1].split("/")[0]) >= at:
            break
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=60)
    if proc.returncode != -signal.SIGKILL:
        raise SystemExit(f"the switch ended before the kill (exit {proc.returncode}): {seen[-3:]}")
    return time.monotonic() - start, seen


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--out", default=str(Path(__file__).with_name("RESULTS-model-switch.md")))
    args = parser.parse_args()
    n = args.size
    loads = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        home = root / "home"
        home.mkdir()
        (home / "config.toml").write_text('[embedding]\nmodel = "hash-384"\n', encoding="utf-8")
        env = {**os.environ, "MEMDECK_HOME": str(home)}
        store = root / "store"
        lines = [
            json.dumps(
                {
                    "text": f"note {i}: the marker word token{i} and some ordinary words about day {i % 97}",
                    "tier": "episodic" if i % 3 else "semantic",
                    "principal": PRINCIPALS[i % len(PRINCIPALS)],
                }
            )
            for i in range(n)
        ]
        (root / "in.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        t0 = time.monotonic()
        done = memdeck(env, store, "import", str(root / "in.jsonl"))
        assert done.returncode == 0, done.stderr
        build_s = time.monotonic() - t0
        before = vectors(store)
        assert len(before) == n and {v.shape for _, v in before.values()} == {(384,)}
        episodic = sum(1 for i in range(n) if i % 3)

        kill1_s, _ = kill_when(env, store, "episodic", episodic // 2)
        loads.append(os.getloadavg()[0])
        meta = json.loads((store / "memdeck.json").read_text())
        still_old = (meta["embedding_model"], meta["dim"]) == ("hash-384", 384)
        hit = json.loads(memdeck(env, store, "recall", "token17", "--principal", "chen", "--json").stdout)
        answers_between = (
            bool(hit) and hit[0]["text"].startswith("note 17:") and hit[0]["model"] == "hash-384"
        )

        kill2_s, seen2 = kill_when(env, store, "semantic", (n - episodic) // 2)
        resumed_first = next(ln for ln in seen2 if ln.startswith("re-embedding episodic"))
        loads.append(os.getloadavg()[0])

        t0 = time.monotonic()
        final = memdeck(env, store, "model", "use", "hash-768", "--batch-size", "256")
        finish_s = time.monotonic() - t0
        assert final.returncode == 0, final.stderr
        loads.append(os.getloadavg()[0])
        after = vectors(store)
        expected = HashEmbedder(768)
        ids = sorted(after)
        texts = [after[i][0] for i in ids]
        got = np.stack([after[i][1] for i in ids])
        own_vectors = bool(np.allclose(got, expected.encode(texts), atol=1e-6))
        meta = json.loads((store / "memdeck.json").read_text())
        hit = json.loads(memdeck(env, store, "recall", "token9998", "--principal", "chen", "--json").stdout)
        checks = {
            "every row kept (ids before == ids after)": set(after) == set(before),
            "every row 768-d": {v.shape for _, v in after.values()} == {(768,)},
            "every row carries its own text's vector": own_vectors,
            "the store records hash-768 / 768": (meta["embedding_model"], meta["dim"]) == ("hash-768", 768),
            "no shadow tables left (store/reembed)": not (store / "reembed").exists(),
            "after kill 1: the store still says hash-384": still_old,
            "after kill 1: recall answers on the old vectors": answers_between,
            "run 2 resumed where run 1 stopped (its first episodic progress >= half)": int(
                resumed_first.split()[-1].split("/")[0]
            )
            >= episodic // 2,
            "recall finds a marker row on the new vectors": bool(hit)
            and hit[0]["text"].startswith("note 9998:")
            and hit[0]["model"] == "hash-768",
        }
    children_rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0
    info = machine_info()
    rows = "\n".join(f"| {name} | {'yes' if ok else '**NO**'} |" for name, ok in checks.items())
    text = f"""# Switching a store's embedding model: {n:,} memories, killed twice, finished

Run {time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())} on {info.get("cpu", "?")} ({info.get("cores", "?")} CPUs), Python {info.get("python", "?")};
`python bench/bench_model_switch.py --size {n}`. 1-minute load average {min(loads):.1f}-{max(loads):.1f}.

The store ({n:,} memories: {episodic:,} episodic, {n - episodic:,} semantic, {len(PRINCIPALS)} principals) is built with
the 384-d hash embedder through `memdeck import`, then `memdeck model use hash-768 --batch-size 256` is killed with
SIGKILL halfway through the episodic table, run again and killed halfway through the semantic table, then run a
third time to the end. The hash embedders cost almost nothing, so the times are the switch's own (reading,
writing shadow tables, the swap), not a model's.

| step | wall |
|---|---|
| build ({n:,} memories, import) | {build_s:.1f} s |
| run 1, until killed | {kill1_s:.1f} s |
| run 2 (resumed), until killed | {kill2_s:.1f} s |
| run 3 (resumed), to the end including the swap | {finish_s:.1f} s |

Peak RSS of the largest child process (any step): {children_rss:.0f} MB.

| check | passed |
|---|---|
{rows}
"""
    Path(args.out).write_text(text, encoding="utf-8")
    print(text)
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
