"""The in-memory recall index (core/recall/index.py): the same ranking as LanceDB's searches, kept in step
with the tables, never holding another principal's rows, nothing forgotten left in memory, bounded."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest

from memdeck.core.filters import RecallFilter, Scope
from memdeck.core.recall import bm25
from memdeck.core.recall.index import recall_index
from memdeck.core.recall.search import keyword_search
from memdeck.core.records import MemoryInput, now
from memdeck.core.store import Store

TOPICS = [
    ("passport", "renew the passport before the trip to Lisbon in March"),
    ("dentist", "the dentist appointment moved to Thursday at nine"),
    ("garden", "planted tomatoes and basil along the sunny garden fence"),
    ("budget", "monthly budget caps groceries at four hundred euros"),
    ("running", "running club meets on Saturdays; she runs ten kilometres"),
    ("coffee", "prefers oat milk flat whites, never sugar in coffee"),
    ("deploy", "deploys go out on Tuesdays after the staging checks pass"),
    ("allergy", "allergic to peanuts and shellfish, carries an epipen"),
    ("music", "learning jazz piano, practising scales every evening"),
    ("car", "the car's winter tyres are stored at the garage on Elm street"),
]
PEOPLE = ["alice", "bob", "carol"]
AGENTS = ["scribe", "planner"]


def _fill(store: Store) -> None:
    """A few hundred memories of three principals in every tier, each tier written and indexed in one go
    (so LanceDB's full-text index covers every row, as after maintenance)."""
    items: list[MemoryInput] = []
    for p, person in enumerate(PEOPLE):
        for t, (topic, text) in enumerate(TOPICS):
            for v in range(3):
                agent = AGENTS[(t + v) % 2]
                items.append(
                    MemoryInput(
                        text=f"{person.title()} note {v}: {text}" + (" (again)" if v == 2 else ""),
                        tier="semantic",
                        principal=person,
                        agent=agent,
                        tags=[topic, f"v{v}"],
                        importance=round(0.2 + 0.07 * ((t + v + p) % 10), 2),
                        force=True,
                    )
                )
                items.append(
                    MemoryInput(
                        text=f'{person.title()} said, "{text.capitalize()}" during chat {v}',
                        tier="episodic",
                        principal=person,
                        agent=agent,
                        tags=[topic],
                        extra={"session": f"{person}-s{t % 4}"},
                        force=True,
                    )
                )
            items.append(
                MemoryInput(
                    text=f"How to handle {topic} for {person}: check the notes, then {text}",
                    tier="procedural",
                    principal=person,
                    agent="planner",
                    extra={"name": f"{topic}-howto"},
                )
            )
    store.remember_many(items)
    for tier in ("episodic", "semantic", "procedural"):
        store.engine.ensure_indexes(tier)
        store.engine.compact(tier)


def _both(store: Store, query: str, **kwargs: object) -> tuple[list[str], list[str]]:
    out = []
    kept = store.settings
    for engine in ("memory", "lance"):
        store.settings = kept.with_changes(recall={"engine": engine})
        res = store.recall(query, record_access=False, trace=False, **kwargs)  # type: ignore[arg-type]
        out.append([item.memory.id for item in res.items])
    store.settings = kept
    return out[0], out[1]


QUERIES = [
    "when does the passport need renewing",
    "dentist Thursday",
    "what grows in the garden",
    "how much for groceries",
    "running on Saturday",
    "coffee with oat milk",
    "when do deploys happen",
    "food allergies",
    "piano practice",
    "where are the winter tyres",
    "Lisbon trip",
    "again",
    "sugar",
    "staging checks",
    "tomatoes basil",
    "ten kilometres run",
    "epipen",
    "jazz scales evening",
    "garage Elm street",
    "budget euros",
    "note 1",
    "chat 2 dentist",
    "how to handle deploy",
    "renew",
    "runs",
    "checks pass",
    "milk",
    "Saturdays club",
    "monthly caps",
    "winter",
]


# Every row of these small scopes scored (LanceDB's engine reads them into a ``OneRecallPartition``), and each
# channel's shortlist alone (LanceDB's searches, as in a scope larger than ``score_all_rows``).
@pytest.mark.parametrize("score_all_rows", [5_000, 0], ids=["every-row", "shortlists"])
def test_both_engines_rank_the_same_memories_in_the_same_order(
    model_store: Store, score_all_rows: int
) -> None:
    _fill(model_store)
    model_store.settings = model_store.settings.with_changes(recall={"score_all_rows": score_all_rows})
    since = now() - timedelta(days=1)
    variants: list[dict[str, object]] = [
        {"principal": "alice"},
        {"principal": "bob", "k": 5},
        {"principal": ["alice", "carol"], "k": 15},
        {"scope": Scope.everyone(), "k": 20},
        {"principal": "carol", "tiers": ["episodic"]},
        {"principal": "alice", "tiers": ["semantic", "procedural"]},
        {"principal": "bob", "written_by": "scribe"},
        {"principal": "alice", "filters": RecallFilter.of(tags=["v1"])},
        {"principal": "carol", "filters": RecallFilter.of(min_importance=0.5, since=since)},
        {"principal": "bob", "include_deprecated": True},
        {"principal": "alice", "keyword_only": "model not loaded"},
    ]
    compared = differing = 0
    for n, query in enumerate(QUERIES):
        for kwargs in (variants[n % len(variants)], variants[(n + 5) % len(variants)]):
            memory, lance = _both(model_store, query, **kwargs)
            compared += 1
            differing += memory != lance
            assert memory == lance, (query, kwargs)
    assert compared == 2 * len(QUERIES) and differing == 0


def test_the_index_tokenises_as_the_full_text_index(store: Store) -> None:
    texts = [
        "Running runs; the runner ran.",
        "Doing what she did, he does it",
        "Café au lait, naïve façade",
        "don't can't won't",
        "Generously caresses happiness",
        "under_score and hyphen-ated words",
        "ÉCOLE Straße 42 km",
        "x" * 45 + " long token",
        "The THE the",
        "organisation organization organize",
    ]
    # One write, so the index is built over every row with its configured tokenizer. (Rows folded in later
    # by optimize_indices matched "don", "t" and "won", stop words the index's own tokenizer drops.)
    store.remember_many([MemoryInput(text=t, tier="semantic", principal="ann", force=True) for t in texts])
    tbl = store.engine.table("semantic")
    rows = tbl.to_lance().to_table(columns=["id", "text"]).to_pylist()
    words = sorted(
        {w for t in texts for w in bm25._TOKEN.findall(t.lower())} | {"run", "do", "cafe", "ecole"}
    )
    for word in words:
        found = {r["id"] for r in keyword_search(tbl, word, None, 100, ["id"])}
        term = bm25.terms(word)
        mine = {r["id"] for r in rows if term and term[0] in bm25.terms(r["text"])}
        assert mine == found, (word, term)


def test_the_index_follows_writes_updates_and_deletes(store: Store) -> None:
    first = store.remember("the boiler needs a service in October", tier="semantic", principal="ann").memory
    store.recall("boiler", principal="ann", record_access=False)
    index = recall_index(store.engine)
    assert index is not None and len(index.loads) == 1

    second = store.remember("the boiler pressure dropped overnight", tier="semantic", principal="ann").memory
    assert {i.memory.id for i in store.recall("boiler", principal="ann", record_access=False).items} == {
        first.id,
        second.id,
    }

    store.recall("boiler", principal="ann")  # access counts: a new version that rewrites two rows
    store.engine.flush_access()
    res = store.recall("boiler", principal="ann", record_access=False)
    assert {i.memory.access_count for i in res.items} == {1}
    part = next(iter(index.partitions.values()))
    assert len(index.loads) == 1 and part.rows == 2  # caught up fragment by fragment, never reloaded

    store.deprecate(second.id, "fixed")
    assert [i.memory.id for i in store.recall("boiler", principal="ann", record_access=False).items] == [
        first.id
    ]
    assert second.id in [
        i.memory.id
        for i in store.recall("boiler", principal="ann", record_access=False, include_deprecated=True).items
    ]


def test_a_forgotten_memory_leaves_the_index(store: Store) -> None:
    keep = store.remember("the spare key is under the blue pot", tier="semantic", principal="ann").memory
    gone = store.remember("the safe code is under the blue lamp", tier="semantic", principal="ann").memory
    assert len(store.recall("blue", principal="ann", record_access=False).items) == 2
    store.forget([gone.id], "asked to")
    assert (
        recall_index(store.engine) is not None and not recall_index(store.engine).partitions
    )  # dropped at the purge
    # A background thread of this store (the trace writer, the graph's indexer) that takes the store's lock
    # after the purge drops the index once more; the next recall loads the partition again.
    part = None
    for _ in range(20):
        found = store.recall("blue", principal="ann", record_access=False).items
        assert [i.memory.id for i in found] == [keep.id]
        loaded = list(recall_index(store.engine).partitions.values())  # type: ignore[union-attr]
        if loaded:
            part = loaded[0]
            break
    assert part is not None, "no recall after the forget went through the index"
    held = part.arrow().column("id").to_pylist()
    assert gone.id not in held and all(m.id != gone.id for m in part.memo.values())


def test_another_process_changes_reach_the_index(open_store, tmp_path) -> None:
    a = open_store(tmp_path / "shared")
    b = open_store(tmp_path / "shared")
    old = a.remember("the printer jams on thick paper", tier="semantic", principal="ann").memory
    assert [i.memory.id for i in b.recall("printer", principal="ann", record_access=False).items] == [old.id]
    new = a.remember("the printer toner is low", tier="semantic", principal="ann").memory
    assert {i.memory.id for i in b.recall("printer", principal="ann", record_access=False).items} == {
        old.id,
        new.id,
    }
    a.forget([old.id], "outdated")
    assert [i.memory.id for i in b.recall("printer", principal="ann", record_access=False).items] == [new.id]
    part = next(iter(recall_index(b.engine).partitions.values()))  # type: ignore[union-attr]
    alive = part.cols["alive"]
    assert old.id not in [m for m, ok in zip(part.arrow().column("id").to_pylist(), alive, strict=True) if ok]


def test_expiry_takes_effect_at_query_time(store: Store) -> None:
    soon = store.remember(
        "the parcel locker code is 4471",
        tier="semantic",
        principal="ann",
        expires_at=now() + timedelta(seconds=1.5),
    ).memory
    assert [
        i.memory.id for i in store.recall("parcel locker", principal="ann", record_access=False).items
    ] == [soon.id]
    version = store.engine.table("semantic").version
    time.sleep(1.6)
    assert store.recall("parcel locker", principal="ann", record_access=False).items == []
    assert store.engine.table("semantic").version == version  # nothing was written: the index read the clock


def test_another_principals_rows_never_enter_the_partition(store: Store) -> None:
    store.remember("ann keeps bees", tier="semantic", principal="ann")
    store.remember("bob keeps bees too", tier="semantic", principal="bob")
    assert [i.memory.principal for i in store.recall("bees", principal="ann", record_access=False).items] == [
        "ann"
    ]
    (part,) = recall_index(store.engine).partitions.values()  # type: ignore[union-attr]
    assert set(part.arrow().column("principal").to_pylist()) == {"ann"}


def test_the_index_is_bounded(open_store) -> None:
    s = open_store(recall={"index_max_rows": 6})
    for person in ("ann", "bob"):
        s.remember_many(
            [
                MemoryInput(text=f"{person} fact {n} about tea", tier="semantic", principal=person)
                for n in range(4)
            ]
        )
    s.recall("tea", principal="ann", record_access=False)
    s.recall("tea", principal="bob", record_access=False)
    assert [key[1] for key in recall_index(s.engine).partitions] == ["principal = 'bob'"]  # ann's went first
    assert recall_index(s.engine).rows() <= 6
    memory, lance = _both(s, "tea fact", scope=Scope.everyone())  # 8 rows: LanceDB answers
    assert memory == lance and len(memory) == 8
    assert all(key[1] is not None for key in recall_index(s.engine).partitions)


def test_a_large_scope_loads_in_the_background_and_lancedb_answers_meanwhile(open_store) -> None:
    s = open_store(recall={"index_sync_rows": 5})
    s.remember_many(
        [
            MemoryInput(
                text=f"ann fact {n} about tea and {TOPICS[n % 10][1]}", tier="semantic", principal="ann"
            )
            for n in range(30)
        ]
    )
    first = [i.memory.id for i in s.recall("tea passport", principal="ann", k=5, record_access=False).items]
    index = recall_index(s.engine)
    assert index is not None
    index.wait(30)
    assert [key[1] for key in index.partitions] == ["principal = 'ann'"]
    assert index.loads and index.loads[-1]["rows"] == 30 and not index.loading
    again = [i.memory.id for i in s.recall("tea passport", principal="ann", k=5, record_access=False).items]
    assert again == first  # LanceDB then the index: the same memories in the same order


def test_a_one_shot_command_never_loads_a_large_scope(open_store) -> None:
    s = open_store(recall={"index_sync_rows": 5})
    s.engine.index_loads_in_background = False
    s.remember_many(
        [MemoryInput(text=f"ann fact {n} about tea", tier="semantic", principal="ann") for n in range(30)]
    )
    assert len(s.recall("tea", principal="ann", k=5, record_access=False).items) == 5
    assert recall_index(s.engine) is not None
    recall_index(s.engine).wait(30)
    assert not recall_index(s.engine).partitions and not recall_index(s.engine).loads


def test_the_command_line_opens_stores_for_one_shot_recall(tmp_path) -> None:
    import argparse

    from memdeck.cli._common import open_store as cli_open

    store = cli_open(argparse.Namespace(store=str(tmp_path / "cli-store")), create=True)
    try:
        assert store.engine.index_loads_in_background is False
    finally:
        store.close()


def test_both_engines_give_every_candidate_the_same_components(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The index scores from its own columns (recency's anchor, reinforced importance, frequency, pinned,
    trust) without making a Memory per candidate; the LanceDB path scores from Memory objects. Every
    candidate both find gets the same components, for memories that differ in each of them."""
    store.remember_many(
        [
            MemoryInput(
                text=f"ann's note {n} on the garden shed roof",
                tier="semantic",
                principal="ann",
                importance=0.123456 + 0.1 * (n % 5),
                agent=AGENTS[n % 2],
                force=True,
            )
            for n in range(12)
        ]
        + [
            MemoryInput(
                text=f"ann said the garden shed roof leaks, turn {n}",
                tier="episodic",
                principal="ann",
                extra={"session": f"s{n % 3}", "started_at": now() - timedelta(days=n)},
                created_at=now() - timedelta(days=n + 1),
                force=True,
            )
            for n in range(9)
        ]
        + [
            MemoryInput(
                text="how to patch the garden shed roof: felt, then nails",
                tier="procedural",
                principal="ann",
                extra={"name": "shed-roof"},
            ),
        ]
    )
    fact = store.remember("the garden shed roof was patched in May", tier="semantic", principal="ann").memory
    again = store.remember("the garden shed roof was patched in May", tier="semantic", principal="ann")
    assert again.memory.id == fact.id and (again.memory.evidence_count or 0) >= 2  # reinforced
    store.pin(fact.id)
    store.recall("garden shed", principal="ann")  # access counts
    store.engine.flush_access()
    for tier in ("episodic", "semantic", "procedural"):
        store.engine.ensure_indexes(tier)
        store.engine.compact(tier)
    seen = {}
    # One clock for both recalls: recency moves with time, and rounding at 1e-6 would see it move.
    frozen = now()
    monkeypatch.setattr("memdeck.core.recall.search.now", lambda: frozen)
    for engine in ("memory", "lance"):
        store.settings = store.settings.with_changes(recall={"engine": engine})
        res = store.recall("garden shed roof", principal="ann", k=30, record_access=False, trace=False)
        _total, comps = res.candidates.scores(res.profile)
        seen[engine] = {mem_id: comps[:, i].round(6).tolist() for i, mem_id in enumerate(res.candidates.ids)}
    store.settings = store.settings.with_changes(recall={"engine": "memory"})
    assert seen["memory"] == seen["lance"]
    components = list(zip(*seen["memory"].values(), strict=True))
    assert len(set(components[1])) > 3 and len(set(components[2])) > 1 and len(set(components[3])) > 3
    assert set(components[4]) == {0.0, 1.0}  # pinned and not


def test_a_candidate_made_after_the_partition_renumbered_its_rows_is_the_right_memory(store: Store) -> None:
    store.remember_many(
        [
            MemoryInput(text=f"ann's tea note {n}", tier="semantic", principal="ann", force=True)
            for n in range(8)
        ]
    )
    res = store.recall("tea note", principal="ann", k=3, record_access=False, trace=False)
    (part,) = recall_index(store.engine).partitions.values()  # type: ignore[union-attr]
    with part.lock:
        part._kill(part.cols["alive"] & (part.cols["addr"] == part.cols["addr"][0]))
        part._compact()  # what many updates do: dead rows dropped, the rest renumbered
    assert part.generation == 1
    made = res.candidates.candidates  # every candidate, made only now
    assert [c.memory.id for c in made] == res.candidates.ids
    assert all(c.memory.text.startswith("ann's tea note") for c in made)


def test_a_kept_result_does_not_keep_a_dropped_partition_alive(store: Store) -> None:
    """The app keeps its last result; a partition the index drops (a purge, or least recently used) must be
    freed with its vectors all the same, and the result's candidates still be made right."""
    import gc
    import weakref

    store.remember_many(
        [
            MemoryInput(text=f"ann's kettle note {n}", tier="semantic", principal="ann", force=True)
            for n in range(6)
        ]
    )
    res = store.recall("kettle note", principal="ann", k=2, record_access=False, trace=False)
    index = recall_index(store.engine)
    assert index is not None
    (part,) = index.partitions.values()
    gone = weakref.ref(part)
    del part
    index.clear()
    gc.collect()
    assert gone() is None
    made = res.candidates.candidates
    assert [c.memory.id for c in made] == res.candidates.ids
    assert all(c.memory.text.startswith("ann's kettle note") for c in made)


def test_an_empty_partition_follows_a_change_to_another_principals_rows(open_store, tmp_path) -> None:
    """A reader's partition for a principal with no rows yet survives a purge that rewrites other rows."""
    a = open_store(tmp_path / "shared")
    b = open_store(tmp_path / "shared")
    old = a.remember("the printer jams on thick paper", tier="semantic", principal="ann").memory
    a.remember("the kettle is descaled monthly", tier="semantic", principal="ann")
    assert b.recall("printer", principal="cy", record_access=False).items == []  # an empty partition is kept
    a.forget([old.id], "outdated")  # rewrites ann's fragment: the partition sees a fragment gone
    assert b.recall("printer", principal="cy", record_access=False).items == []
    new = a.remember("cy's printer is on the second floor", tier="semantic", principal="cy").memory
    assert [i.memory.id for i in b.recall("printer", principal="cy", record_access=False).items] == [new.id]
