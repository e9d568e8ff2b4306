"""What the framework adapters cost on top of the Python API: p50 per call through the adapter against the
Store call that does the same work, interleaved call by call in one store so load and store growth hit both
alike.

    LangGraph MemdeckStore          equivalent Store call (same text, tags, meta, k, filters, trace/access)
    put (a new key)                 remember(key=...) with the item's tags and meta
    get (by namespace and key)      get (by id)
    search (query, limit 10)        recall (k 10, the namespace's RecallFilter, same tier, agent, source)
    search (no query, limit 10)     list (the namespace's tag, active, limit 10, with meta)
    Agents SDK MemdeckSession
    add_items (one turn: 2 items)   remember_many (2 episodes with the session's tags and meta)
    get_items (last 20)             list (episodic, the session's tag, active, limit 20, with meta)

Two reference calls are timed beside them, not counted in the overhead: a plain ``remember`` (no key, two
tags: what the put row was once measured against) and ``recall`` without the namespace filter. They show
what the keyed, namespaced write and the narrowed recall cost in the core, which is no adapter code.

Each adapter's store is wrapped so that the time spent inside Store methods is counted: "own" is the
adapter call's time minus that, i.e. the adapter's own code (and, for the session, the hop to the worker
thread the SDK's async methods run in). Unlike the difference of two p50s it is not stretched by noise
in the store calls, which on a loaded machine is larger than the target.

    .venv/bin/python bench/bench_adapters.py [--memories 2000] [--calls 200] [--foreign 0.0] [--model] [--out FILE]

The hash embedder by default (the embedding is the same work on both sides; without it the difference is
not drowned in the model's variance); ``--model`` uses the packaged all-MiniLM-L6-v2.
Target: adapter overhead (adapter p50 - Store p50) <= 1 ms per call.
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
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

from memdeck.core import filters as F
from memdeck.core.config import load_config
from memdeck.core.embed import HashEmbedder, SentenceTransformerEmbedder
from memdeck.core.filters import Scope
from memdeck.core.records import MemoryInput
from memdeck.core.store import Store
from memdeck.integrations.langgraph import _NOINDEX_TAG, MARKER_TAG, MemdeckStore, _key_tag, _ns_tag
from memdeck.integrations.openai_agents import MARKER_TAG as SESSION_MARKER
from memdeck.integrations.openai_agents import MemdeckSession, _session_tag, render_item


def texts(n: int) -> list[str]:
    try:
        found = locomo_texts(n)
    except Exception:  # noqa: BLE001 - no shared data on this machine: generated sentences instead
        found = []
    rng = random.Random(11)
    words = [
        "tea",
        "garden",
        "deploy",
        "server",
        "cat",
        "lisbon",
        "budget",
        "report",
        "bike",
        "trip",
        "dentist",
        "passport",
        "drawer",
        "seat",
        "flight",
        "peanuts",
        "rosa",
        "friday",
    ]
    while len(found) < n:
        found.append(" ".join(rng.choice(words) for _ in range(12)) + f" #{len(found)}")
    return found[:n]


def timed(fn: Callable[[], Any]) -> float:
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1000


class Metered:
    """A Store whose methods count the time spent inside them (``inside``, seconds). Everything else is
    the store's own attribute; a Store method's inner calls are not counted twice (they go to the store)."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self.inside = 0.0

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._store, name)
        if not inspect.ismethod(attr):
            return attr

        def metered(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return attr(*args, **kwargs)
            finally:
                self.inside += time.perf_counter() - t0

        return metered


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--memories", type=int, default=2000)
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--model", action="store_true")
    ap.add_argument(
        "--foreign",
        type=float,
        default=0.0,
        help="share of the principal's memories written outside the adapter (0 to 1)",
    )
    ap.add_argument("--out")
    args = ap.parse_args()

    if args.model:
        embedder: Any = SentenceTransformerEmbedder()
        embedder.load()
    else:
        embedder = HashEmbedder()
    root = Path(tempfile.mkdtemp(prefix="memdeck-bench-adapters-")) / "store"
    store = Store.open(root, embedder=embedder, config=load_config())
    metered = Metered(store)
    lg = MemdeckStore(metered)  # type: ignore[arg-type]
    pool = texts(args.memories + 4 * args.calls)
    ns = ("alice", "bench-agent", "facts")
    prefix = ns[:2]
    started = datetime.now(UTC)
    load_before = machine_info()["load_avg"]

    # Prefill: through the adapter, and (--foreign) memories of the same principal written by other means,
    # which a search with a query must not see (recall is narrowed to the namespace inside the query).
    half = args.memories - int(args.memories * args.foreign)
    for n, text in enumerate(pool[:half]):
        lg.put(ns, f"pre-{n}", {"text": text, "n": n})
    store.remember_many(
        [
            MemoryInput(text=t, tier="semantic", principal="alice", agent="other", force=True)
            for t in pool[half : args.memories]
        ]
    )
    rest = iter(pool[args.memories :])
    rng = random.Random(5)
    queries = [" ".join(t.split()[:4]) for t in rng.sample(pool[: args.memories], args.calls)]
    ids = {m.meta["langgraph"]["key"]: m.id for m in lg._listed(ns)}
    keys = rng.choices(sorted(ids), k=args.calls)

    session = MemdeckSession(metered, "bench-session", principal="alice", agent="bench-agent")  # type: ignore[arg-type]
    raw_session = "bench-session-raw"
    for n in range(50):
        session.add_items_sync([{"role": "user", "content": f"question {n} {pool[n]}"}])

    # What the adapters put on the memories they write, for the equivalent Store calls.
    lg_tags = [MARKER_TAG, *ns[2:], *(_ns_tag(ns[:n]) for n in range(1, len(ns) + 1))]
    narrowed = F.RecallFilter.of(tags=[MARKER_TAG, _ns_tag(prefix)], without_tags=[_NOINDEX_TAG])
    raw_tags = [SESSION_MARKER, _session_tag(raw_session)]

    samples: dict[str, list[float]] = {}

    def measure(
        name: str,
        adapter: Callable[[], Any],
        direct: Callable[[], Any],
        reference: Callable[[], Any] | None = None,
    ) -> None:
        # Rotate which goes first, so none always pays a cold cache.
        calls = [("adapter", adapter), ("store", direct), *([("reference", reference)] if reference else [])]
        turn = len(samples.get(f"{name} adapter", [])) % len(calls)
        for side, fn in calls[turn:] + calls[:turn]:
            metered.inside = 0.0
            took = timed(fn)
            samples.setdefault(f"{name} {side}", []).append(took)
            if side == "adapter":
                samples.setdefault(f"{name} own", []).append(took - metered.inside * 1000)

    scope = Scope.of("alice")
    loop = asyncio.new_event_loop()  # the SDK awaits the session inside its own running loop
    for i in range(args.calls):
        key, query = keys[i], queries[i]
        a_text, b_text, c_text = next(rest), next(rest), next(rest)
        raw_key = f"raw-{i}"
        measure(
            "langgraph put",
            lambda: lg.put(ns, f"new-{i}", {"text": a_text}),
            lambda: store.remember(
                b_text,
                tier="semantic",
                principal="alice",
                agent="bench-agent",
                tags=lg_tags,
                importance=0.5,
                meta={
                    "langgraph": {"namespace": list(ns), "key": raw_key, "created_ts": time.time()},
                    "value": {"text": b_text},
                },
                force=True,
                key=_key_tag(ns, raw_key),
            ),
            lambda: store.remember(
                c_text,
                tier="semantic",
                principal="alice",
                agent="bench-agent",
                tags=[MARKER_TAG, "facts"],
                meta={"value": {"text": c_text}},
                force=True,
            ),
        )
        measure("langgraph get", lambda: lg.get(ns, key), lambda: store.get(ids[key], scope))
        measure(
            "langgraph search (query)",
            lambda: lg.search(prefix, query=query, limit=10),
            lambda: store.recall(
                query,
                scope=scope,
                agent="bench-agent",
                tiers=["semantic"],
                k=10,
                source="langgraph",
                filters=narrowed,
            ),
            lambda: store.recall(
                query, scope=scope, agent="bench-agent", tiers=["semantic"], k=10, source="langgraph"
            ),
        )
        measure(
            "langgraph search (list)",
            lambda: lg.search(prefix, limit=10),
            lambda: store.list(
                scope, tier="semantic", tag=_ns_tag(prefix), state="active", limit=10, with_meta=True
            ),
        )
        turn = [
            {"role": "user", "content": next(rest)},
            {"role": "assistant", "content": "ok " + a_text[:40]},
        ]
        raw_turn = [
            MemoryInput(
                text=render_item(t),
                tier="episodic",
                principal="alice",
                agent="bench-agent",
                tags=raw_tags,
                importance=0.5,
                force=True,
                extra={"session": raw_session, "closed": False},
                meta={"openai_agents": {"seq": 2 * i + n, "item": t}},
            )
            for n, t in enumerate(turn)
        ]
        measure(
            "session add_items",
            lambda: loop.run_until_complete(session.add_items(turn)),
            lambda: store.remember_many(raw_turn),
        )
        measure(
            "session get_items",
            lambda: loop.run_until_complete(session.get_items(limit=20)),
            lambda: store.list(
                scope,
                tier="episodic",
                tag=_session_tag("bench-session"),
                state="active",
                limit=20,
                with_meta=True,
            ),
        )

    loop.close()
    rows = []
    for name in dict.fromkeys(k.rsplit(" ", 1)[0] for k in samples):
        a, s = percentiles(samples[f"{name} adapter"]), percentiles(samples[f"{name} store"])
        row: dict[str, Any] = {
            "call": name,
            "adapter": a,
            "store": s,
            "own": percentiles(samples[f"{name} own"]),
            "overhead_p50_ms": a["p50"] - s["p50"],
        }
        if f"{name} reference" in samples:
            row["reference"] = percentiles(samples[f"{name} reference"])
        rows.append(row)
    result = {
        "bench": "adapters",
        "started": started.isoformat(timespec="seconds"),
        "embedder": "all-MiniLM-L6-v2" if args.model else "hash",
        "memories": args.memories,
        "calls": args.calls,
        "foreign": args.foreign,
        "machine": machine_info(),
        "load_avg_before": load_before,
        "rows": rows,
    }
    emit(result, args.out)
    print(
        f"{'call':26} {'adapter p50':>11} {'store p50':>10} {'overhead':>9} {'own p50':>8} {'own p95':>8} "
        f"{'reference p50':>14}",
        file=sys.stderr,
    )
    for r in rows:
        ref = f"{r['reference']['p50']:14.2f}" if "reference" in r else ""
        print(
            f"{r['call']:26} {r['adapter']['p50']:11.2f} {r['store']['p50']:10.2f} {r['overhead_p50_ms']:9.2f} "
            f"{r['own']['p50']:8.2f} {r['own']['p95']:8.2f} {ref}",
            file=sys.stderr,
        )
    store.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
