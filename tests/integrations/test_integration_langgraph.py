"""memdeck.integrations.langgraph.MemdeckStore: LangGraph's BaseStore over memdeck.

LangGraph ships no store conformance suite in its wheels (langgraph, langgraph-checkpoint), so the
behaviours its own stores promise are tested here: get/put/delete by namespace and key, search by
prefix with filter, limit and offset, list_namespaces with prefix, suffix, wildcards and max_depth, the
async variants, namespace validation; plus what memdeck adds: the principal/agent mapping, upsert
through forget + remember, recall for queries, and receipts for deletes.
"""

from __future__ import annotations

import asyncio
import hashlib
import re

import pytest
from langgraph.store.base import GetOp, InvalidNamespaceError, ListNamespacesOp, PutOp, SearchOp

from memdeck.core.errors import NotFound
from memdeck.core.filters import Scope
from memdeck.core.receipts.verify import verify_receipt
from memdeck.integrations.langgraph import MARKER_TAG, MemdeckStore, render_value
from tests.paths import ROOT

NS = ("alice", "travel-agent", "facts")


@pytest.fixture
def lg(store):
    return MemdeckStore(store)


def test_put_get_round_trip_under_the_principal_and_agent(lg, store):
    lg.put(NS, "seat", {"text": "Alice prefers an aisle seat", "confidence": 0.9})
    item = lg.get(NS, "seat")
    assert item is not None
    assert item.namespace == NS and item.key == "seat"
    assert item.value == {"text": "Alice prefers an aisle seat", "confidence": 0.9}
    [memory] = store.list(Scope.of("alice"))
    assert memory.principal == "alice" and memory.agent == "travel-agent"
    assert MARKER_TAG in memory.tags and "facts" in memory.tags
    assert "text: Alice prefers an aisle seat" in memory.text and "confidence: 0.9" in memory.text
    assert store.list(Scope.of("bob")) == []
    assert lg.get(("bob", "travel-agent", "facts"), "seat") is None
    assert lg.get(NS, "other") is None
    assert lg.get(("alice", "travel-agent"), "seat") is None  # a namespace is exact for get


def test_one_label_namespace_uses_the_default_agent(store):
    lg = MemdeckStore(store, default_agent="planner")
    lg.put(("carol",), "k", {"memory": "Carol lives in Porto"})
    [memory] = store.list(Scope.of("carol"))
    assert memory.agent == "planner" and memory.text == "Carol lives in Porto"
    assert lg.get(("carol",), "k").value == {"memory": "Carol lives in Porto"}


def test_a_changed_value_replaces_the_old_memory_and_leaves_no_stale_copy(lg, store):
    lg.put(NS, "seat", {"text": "Alice prefers a window seat"})
    [old] = store.list(Scope.of("alice"))
    first = lg.get(NS, "seat")
    lg.put(NS, "seat", {"text": "Alice prefers an aisle seat"})
    memories = store.list(Scope.of("alice"))
    assert [m.text for m in memories] == ["Alice prefers an aisle seat"]
    with pytest.raises(NotFound):
        store.get(old.id)
    receipt = lg.last_receipt
    assert receipt is not None and receipt["outcome"] == "verified" and verify_receipt(receipt) == []
    second = lg.get(NS, "seat")
    assert second.value == {"text": "Alice prefers an aisle seat"}
    assert second.created_at == first.created_at and second.updated_at > first.updated_at
    assert not any("window" in m.text for m in store.list(Scope.everyone(), limit=500))


def test_a_put_of_a_new_key_reads_the_tier_once(lg, store, monkeypatch):
    lg.put(NS, "seat", {"text": "Alice prefers an aisle seat"})
    tbl = store.engine.table("semantic")
    reads = []
    original_search, original_scan = tbl.search, store.engine.scan
    monkeypatch.setattr(tbl, "search", lambda *a, **kw: reads.append("search") or original_search(*a, **kw))
    # Reads of the tier only: the graph tables the write also updates are other tables.
    monkeypatch.setattr(
        store.engine,
        "scan",
        lambda *a, **kw: (a[:1] == ("semantic",) and reads.append("scan")) or original_scan(*a, **kw),
    )
    lg.put(NS, "meal", {"text": "Alice orders the vegetarian meal"})
    assert len(reads) == 1  # the key's lookup is the write's own read
    monkeypatch.undo()
    assert lg.get(NS, "meal").value == {"text": "Alice orders the vegetarian meal"}


def test_an_unchanged_put_keeps_the_memory(lg, store):
    lg.put(NS, "seat", {"text": "Alice prefers an aisle seat"})
    [before] = store.list(Scope.of("alice"))
    lg.put(NS, "seat", {"text": "Alice prefers an aisle seat"})
    [after] = store.list(Scope.of("alice"))
    assert before.id == after.id and lg.receipts == []


def test_the_same_value_under_two_keys_is_two_items(lg, store):
    lg.put(NS, "a", {"text": "Alice likes tea"})
    lg.put(NS, "b", {"text": "Alice likes tea"})
    assert lg.get(NS, "a").key == "a" and lg.get(NS, "b").key == "b"
    assert len(store.list(Scope.of("alice"))) == 2
    lg.delete(NS, "a")
    assert lg.get(NS, "a") is None and lg.get(NS, "b").value == {"text": "Alice likes tea"}


def test_delete_forgets_with_a_verified_receipt(lg, store):
    lg.put(NS, "seat", {"text": "Alice prefers an aisle seat"})
    [memory] = store.list(Scope.of("alice"))
    lg.delete(NS, "seat")
    assert lg.get(NS, "seat") is None
    with pytest.raises(NotFound):
        store.get(memory.id)
    receipt = lg.last_receipt
    assert receipt["outcome"] == "verified" and verify_receipt(receipt) == []
    assert memory.id in str(receipt)
    lg.delete(NS, "seat")  # nothing left: no second receipt
    assert len(lg.receipts) == 1


def _fill(lg):
    lg.put(("alice", "a1", "x"), "k1", {"kind": "food", "n": 1, "tags": {"colour": "red"}})
    lg.put(("alice", "a1", "y"), "k2", {"kind": "food", "n": 5})
    lg.put(("alice", "a2"), "k3", {"kind": "travel", "n": 10})
    lg.put(("bob", "a1", "x"), "k4", {"kind": "food", "n": 2})


def test_search_without_query_lists_a_prefix_with_filter_limit_and_offset(lg):
    _fill(lg)
    assert {i.key for i in lg.search(("alice",))} == {"k1", "k2", "k3"}
    assert {i.key for i in lg.search(("alice", "a1"))} == {"k1", "k2"}
    assert {i.key for i in lg.search(("alice", "a1", "x"))} == {"k1"}
    assert {i.key for i in lg.search(("bob",))} == {"k4"}
    assert {i.key for i in lg.search(())} == {"k1", "k2", "k3", "k4"}
    assert {i.key for i in lg.search(("alice",), filter={"kind": "food"})} == {"k1", "k2"}
    assert {i.key for i in lg.search(("alice",), filter={"n": {"$gt": 1}})} == {"k2", "k3"}
    assert {i.key for i in lg.search(("alice",), filter={"n": {"$gte": 1, "$lt": 10}})} == {"k1", "k2"}
    assert {i.key for i in lg.search(("alice",), filter={"kind": {"$ne": "food"}})} == {"k3"}
    assert {i.key for i in lg.search(("alice",), filter={"tags": {"colour": "red"}})} == {"k1"}
    page1 = lg.search(("alice",), limit=2)
    page2 = lg.search(("alice",), limit=2, offset=2)
    assert len(page1) == 2 and len(page2) == 1
    assert {i.key for i in page1 + page2} == {"k1", "k2", "k3"}
    assert all(i.score is None for i in page1)
    with pytest.raises(ValueError, match="unsupported filter operator"):
        lg.search(("alice",), filter={"n": {"$regex": "x"}})


def test_search_without_a_query_is_one_listing_read(lg, store, monkeypatch):
    _fill(lg)
    scans = []
    original = store.engine.scan
    monkeypatch.setattr(store.engine, "scan", lambda *a, **kw: scans.append(a) or original(*a, **kw))
    page = lg.search(("alice", "a1"), limit=1, offset=1)
    assert len(page) == 1 and page[0].key in {"k1", "k2"} and page[0].value["kind"] == "food"
    assert scans == []  # the listing carries meta: no second read of the page's rows


def test_search_with_a_query_goes_through_recall(lg, store):
    _fill(lg)
    lg.put(("alice", "a1", "x"), "k5", {"text": "Alice is allergic to peanuts", "kind": "health"})
    hits = lg.search(("alice", "a1"), query="peanuts allergy")
    assert hits and hits[0].key == "k5" and hits[0].score is not None and hits[0].score > 0
    assert all(h.namespace[:2] == ("alice", "a1") for h in hits)
    assert lg.last_recall is not None and lg.last_recall.trace_id
    assert lg.last_recall.items[0].components  # every score component, as for any recall
    filtered = lg.search(("alice",), query="food", filter={"kind": "food"})
    assert filtered and {h.key for h in filtered} <= {"k1", "k2"}
    assert lg.search(("bob",), query="food")[0].key == "k4"  # never another principal's
    # Below the profile's relevance floor nothing is returned, however few results that leaves.
    assert lg.search(("bob",), query="peanuts allergy") == []


def test_search_with_a_query_recalls_only_the_namespace_in_one_query(lg, store):
    # Memories of the same principal written by other means match the query better than the item: the
    # namespace is narrowed inside the recall, so one recall with k = limit finds the item.
    store.remember_many(
        [
            {
                "text": f"peanuts allergy peanuts allergy note {n}",
                "principal": "alice",
                "agent": "other",
                "force": True,
            }
            for n in range(40)
        ]
    )
    lg.put(NS, "k5", {"text": "Alice is allergic to peanuts"})
    lg.put(NS, "hidden", {"text": "peanuts allergy plan"}, index=False)
    recalls = []
    store.engine.recall_hooks.append(recalls.append)
    hits = lg.search(("alice", "travel-agent"), query="peanuts allergy", limit=1)
    assert [h.key for h in hits] == ["k5"]
    assert len(recalls) == 1 and recalls[0].k == 1
    assert all(MARKER_TAG in i.memory.tags for i in lg.last_recall.items)


def test_index_false_keeps_an_item_out_of_query_search_only(lg):
    lg.put(NS, "secret-plan", {"text": "Surprise party for Alice on Friday"}, index=False)
    lg.put(NS, "seat", {"text": "Alice prefers an aisle seat"})
    assert "secret-plan" not in {
        h.key for h in lg.search(("alice",), query="Surprise party for Alice on Friday")
    }
    assert "secret-plan" in {h.key for h in lg.search(("alice",))}
    assert lg.get(NS, "secret-plan") is not None


def test_index_fields_choose_the_text(store):
    lg = MemdeckStore(store, index={"fields": ["summary"]})
    lg.put(NS, "k", {"summary": "Alice flies to Lisbon in May", "raw": "blob 123"})
    assert store.list(Scope.of("alice"))[0].text == "Alice flies to Lisbon in May"
    lg.put(NS, "k2", {"summary": "x", "other": {"deep": "Nested text"}}, index=["other.deep"])
    assert {m.text for m in store.list(Scope.of("alice"))} == {"Alice flies to Lisbon in May", "Nested text"}
    with pytest.raises(ValueError, match="own model"):
        MemdeckStore(store, index={"dims": 3, "embed": lambda texts: [[0.0] * 3 for _ in texts]})


def test_render_value():
    assert render_value({"memory": "Will likes AI"}) == "Will likes AI"
    assert render_value({"a": "x", "b": [1, 2]}) == "a: x\nb: [1, 2]"
    assert render_value({"a": {"b": "deep"}}, ["a.b"]) == "deep"
    assert render_value({"a": "x"}, ["missing"]) == "x"
    assert render_value({}) == "{}"


def test_list_namespaces(lg):
    for ns in [
        ("a", "b", "c"),
        ("a", "b", "d", "e"),
        ("a", "b", "d", "i"),
        ("a", "b", "f"),
        ("a", "c", "f"),
        ("z", "b", "c"),
    ]:
        lg.put(ns, "k", {"v": 1})
    assert lg.list_namespaces(prefix=("a", "b"), max_depth=3) == [
        ("a", "b", "c"),
        ("a", "b", "d"),
        ("a", "b", "f"),
    ]
    assert lg.list_namespaces(suffix=("f",)) == [("a", "b", "f"), ("a", "c", "f")]
    assert lg.list_namespaces(prefix=("*", "b"), suffix=("c",)) == [("a", "b", "c"), ("z", "b", "c")]
    assert lg.list_namespaces(max_depth=1) == [("a",), ("z",)]
    everything = lg.list_namespaces()
    assert len(everything) == 6
    assert lg.list_namespaces(limit=2, offset=1) == everything[1:3]
    lg.delete(("a", "c", "f"), "k")
    assert ("a", "c", "f") not in lg.list_namespaces()


def test_batch_runs_ops_in_order(lg):
    results = lg.batch(
        [
            PutOp(NS, "k", {"text": "one"}),
            GetOp(NS, "k"),
            SearchOp(("alice",), None, 10, 0, None),
            ListNamespacesOp(None, None, 100, 0),
            PutOp(NS, "k", None),
            GetOp(NS, "k"),
        ]
    )
    assert results[0] is None and results[1].value == {"text": "one"}
    assert [i.key for i in results[2]] == ["k"] and results[3] == [NS]
    assert results[4] is None and results[5] is None


def test_async_variants(lg, store):
    async def run():
        await lg.aput(NS, "seat", {"text": "Alice prefers an aisle seat"})
        got = await lg.aget(NS, "seat")
        found = await lg.asearch(("alice",), query="aisle")
        spaces = await lg.alist_namespaces()
        await lg.adelete(NS, "seat")
        return got, found, spaces, await lg.aget(NS, "seat")

    got, found, spaces, gone = asyncio.run(run())
    assert got.value["text"] == "Alice prefers an aisle seat"
    assert found[0].key == "seat" and spaces == [NS] and gone is None
    assert lg.last_receipt["outcome"] == "verified"


def test_bad_input_gets_a_clear_error(lg):
    with pytest.raises(TypeError, match="must be a dict"):
        lg.put(NS, "k", ["not", "a", "dict"])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="JSON-serialisable"):
        lg.put(NS, "k", {"when": object()})
    with pytest.raises(InvalidNamespaceError):
        lg.put(("al.ice",), "k", {"v": 1})
    with pytest.raises(InvalidNamespaceError):
        lg.put((), "k", {"v": 1})
    with pytest.raises(InvalidNamespaceError):
        lg.put(("langgraph",), "k", {"v": 1})
    with pytest.raises(InvalidNamespaceError):
        lg.batch([PutOp(("a.b",), "k", {"v": 1})])  # ops passed straight to batch are checked too
    with pytest.raises(NotImplementedError):
        lg.put(NS, "k", {"v": 1}, ttl=5)
    with pytest.raises(ValueError, match="tier"):
        MemdeckStore(lg.store, tier="working")
    assert lg.search(NS) == []  # nothing was written by the refused calls


def test_redaction_applies_to_values(lg):
    lg.put(NS, "contact", {"text": "Alice's e-mail is alice@example.com"})
    value = lg.get(NS, "contact").value
    assert "alice@example.com" not in str(value) and "<EMAIL_1>" in value["text"]
    lg.put(NS, "contact", {"text": "Alice's e-mail is alice@example.com"})
    assert lg.receipts == []  # the same value again is unchanged, though stored redacted


# --- the manual's example (docs/integrations.md) ----------------------------------------------------------------------------------


def readme_block(marker: str) -> str:
    text = (ROOT / "docs" / "integrations.md").read_text(encoding="utf-8")
    match = re.search(re.escape(marker) + r".*?```python\n(.*?)```", text, re.S)
    assert match, f"no example after {marker!r} in docs/integrations.md"
    return match.group(1)


def test_readme_langgraph_example_runs(real_embedder, monkeypatch, capsys):
    """A StateGraph whose nodes put and search through the injected store: the memories show under the
    right principal and agent, are recalled by meaning (real model), and a delete leaves a verified receipt."""
    from memdeck.core import store as store_module

    opened = store_module.Store.open

    def open_with_loaded_model(*args, **kwargs):
        kwargs.setdefault("embedder", real_embedder)
        return opened(*args, **kwargs)

    monkeypatch.setattr(store_module.Store, "open", staticmethod(open_with_loaded_model))
    namespace: dict[str, object] = {}
    exec(
        compile(readme_block("<!-- example: langgraph -->"), "docs/integrations.md:langgraph", "exec"),
        namespace,
    )
    out = capsys.readouterr().out
    assert "aisle seat" in out.splitlines()[0]  # recalled by meaning: the query shares no word with it
    assert "('alice', 'travel-agent'" in out
    assert "verified" in out


def test_an_expired_memory_is_gone_from_every_read_at_once(lg, store):
    lg.put(NS, "old", {"text": "Alice's old phone plan"})
    lg.put(NS, "new", {"text": "Alice's new phone plan"})
    [old] = [m for m in store.list(Scope.of("alice")) if "old" in m.text]
    store.set_expiry(old.id, "2000-01-01T00:00:00Z")
    assert lg.get(NS, "old") is None
    assert {i.key for i in lg.search(("alice",))} == {"new"}
    assert {i.key for i in lg.search(("alice",), filter={"text": {"$ne": ""}})} == {"new"}
    assert "old" not in {i.key for i in lg.search(("alice",), query="old phone plan")}


def test_an_empty_store_answers_nothing(lg):
    assert lg.get(NS, "k") is None
    assert lg.search(("alice",)) == [] and lg.search(("alice",), query="anything") == []
    assert lg.search(("alice",), filter={"kind": "food"}) == [] and lg.list_namespaces() == []


@pytest.mark.parametrize(
    ("first", "second", "key_one", "key_two"),
    [
        (
            ("alice", "agent", "x\x1fy"),
            ("alice", "agent", "x", "y"),
            "k",
            "k",
        ),  # a label holding the separator
        (("alice", "agent"), ("alice", "agent", "\x1e"), "x\x1f\x1e\x1fk", "k"),  # the key marker as a label
        (("alice", "agent", "a\x1fb"), ("alice", "agent", "a\x1fb"), "k", "k\x1f"),  # one namespace, two keys
    ],
)
def test_labels_holding_the_separators_never_share_an_item(lg, store, first, second, key_one, key_two):
    lg.put(first, key_one, {"text": "Alice's locker code is on the red card"})
    lg.put(second, key_two, {"text": "Alice's gym is open until nine"})
    assert lg.get(first, key_one).value == {"text": "Alice's locker code is on the red card"}
    assert lg.get(second, key_two).value == {"text": "Alice's gym is open until nine"}
    assert lg.receipts == []  # no put forgot anything
    assert len(store.list(Scope.of("alice"))) == 2
    lg.put(
        second, key_two, {"text": "Alice's gym is open until ten"}
    )  # a changed value replaces only its own item
    assert lg.get(first, key_one).value == {"text": "Alice's locker code is on the red card"}
    assert lg.get(second, key_two).value == {"text": "Alice's gym is open until ten"}
    lg.delete(second, key_two)
    assert lg.get(first, key_one) is not None and lg.get(second, key_two) is None
    if first != second:
        assert [i.key for i in lg.search(first)] == [key_one]
        assert lg.search(second) == []


def test_plain_namespaces_keep_their_tags(lg, store):
    """Items written before separator-holding labels were told apart are still found: a namespace and key
    without a separator keep the tags they always had."""
    lg.put(NS, "seat", {"text": "Alice prefers an aisle seat"})
    [memory] = store.list(Scope.of("alice"))

    def digest(parts):
        return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:24]

    assert {f"lg-ns:{digest(NS[:n])}" for n in (1, 2, 3)} <= set(memory.tags)
    assert f"lg-key:{digest([*NS, chr(0x1E), 'seat'])}" in memory.tags
