"""Principal isolation: every read path filters by principal before scoring; hostile names see nothing."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memdeck.core import MemdeckError, NotFound, Scope
from memdeck.core.records import check_principal
from memdeck.core.storage.browse import BrowseQuery, Browser

HOSTILE = [
    "x' OR '1'='1",
    "nobody' OR '1'='1",
    "a') OR (principal != '",
    "' OR true --",
    "\\' OR 1=1 --",
    "%",
    "alice%",
    "*",
    "alice\x00",
    "ALICE",
]
# " alice" was in HOSTILE, expected to see nothing. Names are now normalised (NFC, trimmed) on every path,
# so " alice" names alice herself: see test_a_name_normalises_to_one_principal. Isolation holds between
# distinct normalised names, which the hypothesis test below checks for every string.


@pytest.fixture
def populated(store):
    for who in ("alice", "bob"):
        for i in range(5):
            store.remember(f"{who} private note {i} about tea", tier="semantic", principal=who)
            store.remember(f"{who} meeting {i} about tea", tier="episodic", principal=who)
    return store


@pytest.mark.parametrize("principal", HOSTILE)
def test_hostile_principal_sees_nothing(populated, principal):
    if "\x00" in principal:  # refused outright with a clear error
        with pytest.raises(MemdeckError):
            populated.recall("tea", principal=principal)
        with pytest.raises(MemdeckError):
            populated.list(Scope.of(principal))
        return
    result = populated.recall("tea", principal=principal, record_access=False)
    assert result.items == []
    assert len(result.candidates) == 0
    assert populated.list(Scope.of(principal), limit=100) == []
    assert populated.count(Scope.of(principal)) == 0


def test_a_name_normalises_to_one_principal(populated):
    """ " alice" and "alice " are alice: the same rows, and never bob's."""
    for name in (" alice", "alice ", "\talice\n".strip() + " "):
        assert {m.principal for m in populated.list(Scope.of(name), limit=100)} == {"alice"}
        result = populated.recall("tea", principal=name, k=50, record_access=False)
        assert result.items and {i.memory.principal for i in result.items} == {"alice"}


def test_scope_filters_every_read_path(populated):
    alice = Scope.of("alice")
    result = populated.recall("tea", principal="alice", k=50, record_access=False)
    assert result.items and {i.memory.principal for i in result.items} == {"alice"}
    assert {c.memory.principal for c in result.candidates.candidates} == {"alice"}
    assert {m.principal for m in populated.list(alice, limit=100)} == {"alice"}
    bob_id = populated.list(Scope.of("bob"), limit=1)[0].id
    with pytest.raises(NotFound):
        populated.get(bob_id, alice)
    browser = Browser(populated.engine, alice)
    assert browser.count(BrowseQuery()) == 10
    # Narrowing to another principal inside a scope never widens it.
    assert browser.count(BrowseQuery(principal="bob")) == 0


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(principal=st.text(min_size=1, max_size=40).filter(lambda p: p.strip() and p not in ("alice", "bob")))
def test_arbitrary_principal_strings_never_see_others(populated, principal):
    clean = principal.replace("\x00", "")
    if clean in ("alice", "bob"):
        return
    try:
        normalised = check_principal(principal)
    except MemdeckError:
        normalised = None
    if normalised in ("alice", "bob"):  # the same name written differently: that principal, by design
        return
    try:
        result = populated.recall("private note tea", principal=principal, record_access=False)
    except Exception as exc:  # noqa: BLE001 - only a clean validation error is acceptable
        assert isinstance(exc, MemdeckError)
        return
    assert normalised is not None  # a name check_principal refuses is refused on the read path too
    assert result.items == []
    assert populated.list(Scope.of(principal), limit=10) == []


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(principal=st.text(min_size=1, max_size=30).filter(lambda p: p.strip() and "\x00" not in p))
def test_arbitrary_principal_round_trips(store, principal):
    # Stored as normalised (NFC, trimmed); a name with control characters or mixed scripts is refused.
    try:
        expected = check_principal(principal)
    except MemdeckError:
        with pytest.raises(MemdeckError):
            store.remember("round trip", tier="semantic", principal=principal)
        return
    mem = store.remember("round trip", tier="semantic", principal=principal).memory
    assert mem.principal == expected
    assert store.get(mem.id, Scope.of(principal)).principal == expected
    hits = store.recall("round trip", principal=principal, record_access=False)
    assert [i.memory.id for i in hits.items] == [mem.id]


def test_filtered_keyword_search_matches_search_then_filter(tmp_path):
    """The principal filter runs inside the full-text search: as a mask over the posting lists for a large
    principal, row by row for one under 1 % of the table. Both must give exactly the top hits an unfiltered
    search gives once other principals' rows are dropped, and never a row of another principal."""
    import os
    import random

    from memdeck.core import filters as F
    from memdeck.core.embed import HashEmbedder
    from memdeck.core.recall.search import keyword_search, state_filter
    from memdeck.core.store import Store

    assert os.environ.get("LANCE_FLAT_SEARCH_PERCENT_THRESHOLD") == "1"
    store = Store.open(tmp_path / "store", embedder=HashEmbedder())
    words = ["harbor", "lantern", "orchard", "meadow", "copper", "violet", "summit", "thistle"]
    items = []
    for i in range(3000):
        # "big" holds 30 % of the rows, "mid" 5 %, "tiny" 0.5 % (under the 1 % line), the rest spread thin.
        principal = (
            "big" if i % 10 < 3 else "mid" if i % 20 == 3 else "tiny" if i % 200 == 4 else f"p{i % 37}"
        )
        rng = random.Random(i)
        text = " ".join(rng.choice(words) for _ in range(rng.randint(2, 6))) + f" note {i}"
        items.append({"text": text, "tier": "semantic", "principal": principal})
    store.remember_many(items)
    store.engine.ensure_indexes("semantic")
    tbl = store.engine.table("semantic")
    everything = keyword_search(tbl, "harbor lantern", None, 3000, ["id", "principal"])
    assert len(everything) > 100
    for principal in ("big", "mid", "tiny"):
        where = F.all_of(Scope.of(principal).where(), state_filter(False))
        got = keyword_search(tbl, "harbor lantern", where, 15, ["id", "principal"])
        assert got and all(r["principal"] == principal for r in got)
        expected = [r for r in everything if r["principal"] == principal][:15]
        assert sorted(round(r["_score"], 4) for r in got) == sorted(round(r["_score"], 4) for r in expected)
    store.close()
