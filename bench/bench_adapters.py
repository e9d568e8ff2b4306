"""What the framework adapters cost on top of the Python API: p50 per call through the adapter against the
equivalent Store call, interleaved call by call in one store so load and store growth hit both alike.

    LangGraph MemdeckStore          equivalent Store call
    put (a new key)                 remember (same text, tags, meta)
    get (by namespace and key)      get (by id)
    search (query, limit 10)        recall (same query, k 10, same tier)
    search (no query, limit 10)     list (limit 10)
    Agents SDK MemdeckSession
    add_items (one turn: 2 items)   remember_many (2 episodes)
    get_items (last 20)             list (episodic, limit 20)

    .venv/bin/python bench/bench_adapters.py [--memories 2000] [--calls 200] [--foreign 0.0] [--model] [--out FILE]

The hash embedder by default (the embedding is the same work on both sides; without it the difference is
not drowned in the model's variance); ``--model`` uses the packaged all-MiniLM-L6-v2.
Target: adapter overhead (adapter p50 - Store p50) <= 1 ms per call.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import emit, locomo_texts, machine_info, percentiles

from memdeck.core.config import load_config
from memdeck.core.embed import HashEmbedder, SentenceTransformerEmbedder
from memdeck.core.filters import Scope
from memdeck.core.records import MemoryInput
from memdeck.core.store import Store
from memdeck.integrations.langgraph import MemdeckStore
from memdeck.integrations.openai_agents import MemdeckSession


def texts(n: int) -> list[str]:
    try:
        found = locomo_texts(n)
    except Exception:  # noqa: BLE001 - no shared data on this machine: generated sentences instead
        found = []
    rng = random.Random(11)
    words = ["tea", "garden", "deploy", "server", "cat", "lisbon", "budget", "report", "bike", "trip", "dentist",
             "passport", "drawer", "seat", "flight", "peanuts", "rosa", "friday"]
    while len(found) < n:
        found.append(" ".join(rng.choice(words) for _ in range(12)) + f" #{len(found)}")
    return found[:n]


def timed(fn: Callable[[], Any]) -> float:
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1000


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--memories", type=int, default=2000)
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--model", action="store_true")
    ap.add_argument("--foreign", type=float, default=0.0,
                    help="share of the principal's memories written outside the adapter (0 to 1)")
    ap.add_argument("--out")
    args = ap.parse_args()

    if args.model:
        embedder: Any = SentenceTransformerEmbedder()
        embedder.load()
    else:
        embedder = HashEmbedder()
    root = Path(tempfile.mkdtemp(prefix="memdeck-bench-adapters-")) / "store"
    store = Store.open(root, embedder=embedder, config=load_config())
    lg = MemdeckStore(store)
    pool = texts(args.memories + 4 * args.calls)
    ns = ("alice", "bench-agent", "facts")
    started = datetime.now(UTC)
    load_before = machine_info()["load_avg"]

    # Prefill: through the adapter, and (--foreign) memories of the same principal written by other means,
    # which a search with a query must not see (recall is narrowed to the namespace inside the query).
    half = args.memories - int(args.memories * args.foreign)
    for n, text in enumerate(pool[:half]):
        lg.put(ns, f"pre-{n}", {"text": text, "n": n})
    store.remember_many([MemoryInput(text=t, tier="semantic", principal="alice", agent="other", force=True)
                         for t in pool[half:args.memories]])
    rest = iter(pool[args.memories:])
    rng = random.Random(5)
    queries = [" ".join(t.split()[:4]) for t in rng.sample(pool[:args.memories], args.calls)]
    ids = {m.meta["langgraph"]["key"]: m.id for m in lg._listed(ns)}
    keys = rng.choices(sorted(ids), k=args.calls)

    session = MemdeckSession(store, "bench-session", principal="alice", agent="bench-agent")
    raw_session = "bench-session-raw"
    for n in range(50):
        session.add_items_sync([{"role": "user", "content": f"question {n} {pool[n]}"}])

    samples: dict[str, list[float]] = {}

    def pair(name: str, adapter: Callable[[], Any], direct: Callable[[], Any]) -> None:
        # Alternate which goes first, so neither always pays a cold cache.
        first, second = (adapter, direct) if len(samples.get(f"{name} adapter", [])) % 2 == 0 else (direct, adapter)
        t_first, t_second = timed(first), timed(second)
        t_adapter, t_direct = (t_first, t_second) if first is adapter else (t_second, t_first)
        samples.setdefault(f"{name} adapter", []).append(t_adapter)
        samples.setdefault(f"{name} store", []).append(t_direct)

    scope = Scope.of("alice")
    loop = asyncio.new_event_loop()  # the SDK awaits the session inside its own running loop
    for i in range(args.calls):
        key, query = keys[i], queries[i]
        a_text, b_text = next(rest), next(rest)
        pair("langgraph put",
             lambda: lg.put(ns, f"new-{i}", {"text": a_text}),
             lambda: store.remember(b_text, tier="semantic", principal="alice", agent="bench-agent",
                                    tags=["langgraph", "facts"], meta={"value": {"text": b_text}}, force=True))
        pair("langgraph get", lambda: lg.get(ns, key), lambda: store.get(ids[key], scope))
        pair("langgraph search (query)", lambda: lg.search(("alice", "bench-agent"), query=query, limit=10),
             lambda: store.recall(query, principal="alice", agent="bench-agent", tiers=["semantic"], k=10,
                                  source="langgraph"))
        pair("langgraph search (list)", lambda: lg.search(("alice", "bench-agent"), limit=10),
             lambda: store.list(scope, tier="semantic", limit=10))
        turn = [{"role": "user", "content": next(rest)}, {"role": "assistant", "content": "ok " + a_text[:40]}]
        raw_turn = [MemoryInput(text=f"{t['role']}: {t['content']}", tier="episodic", principal="alice",
                                agent="bench-agent", force=True, extra={"session": raw_session, "closed": False},
                                meta={"openai_agents": {"item": t}}) for t in turn]
        pair("session add_items", lambda: loop.run_until_complete(session.add_items(turn)),
             lambda: store.remember_many(raw_turn))
        pair("session get_items", lambda: loop.run_until_complete(session.get_items(limit=20)),
             lambda: store.list(scope, tier="episodic", limit=20))

    loop.close()
    rows = []
    for name in dict.fromkeys(k.rsplit(" ", 1)[0] for k in samples):
        a, s = percentiles(samples[f"{name} adapter"]), percentiles(samples[f"{name} store"])
        rows.append({"call": name, "adapter": a, "store": s, "overhead_p50_ms": a["p50"] - s["p50"]})
    result = {
        "bench": "adapters", "started": started.isoformat(timespec="seconds"),
        "embedder": "all-MiniLM-L6-v2" if args.model else "hash", "memories": args.memories,
        "calls": args.calls, "foreign": args.foreign, "machine": machine_info(), "load_avg_before": load_before, "rows": rows,
    }
    emit(result, args.out)
    print(f"{'call':28} {'adapter p50':>12} {'store p50':>10} {'overhead':>9}", file=sys.stderr)
    for r in rows:
        print(f"{r['call']:28} {r['adapter']['p50']:12.2f} {r['store']['p50']:10.2f} {r['overhead_p50_ms']:9.2f}",
              file=sys.stderr)
    store.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
