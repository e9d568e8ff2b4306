"""Store analytics (DuckDB over the Lance tables): the numbers on a small store, and principal isolation."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from textual.widgets import DataTable

from memdeck.core import filters as F
from memdeck.core.filters import Scope
from memdeck.core.store import MemoryInput, Store

AT = datetime(2025, 6, 1, tzinfo=UTC)
HOSTILE = "x' OR '1'='1"
SNEAKY = "a\\'b\"); DROP VIEW memories; --"


def _day(days_before: float) -> datetime:
    return AT - timedelta(days=days_before)


@pytest.fixture
def filled(store: Store) -> Store:
    items = [
        # alice: five memories over three months, two agents, one pinned
        MemoryInput(
            "alice went to Lisbon in January",
            "episodic",
            "alice",
            agent="mario",
            importance=0.05,
            created_at=datetime(2025, 1, 10, tzinfo=UTC),
        ),
        MemoryInput(
            "alice had a call about the budget",
            "episodic",
            "alice",
            agent="mario",
            importance=0.55,
            created_at=datetime(2025, 1, 20, tzinfo=UTC),
        ),
        MemoryInput(
            "alice prefers green tea",
            "semantic",
            "alice",
            agent="luigi",
            importance=0.95,
            pinned=True,
            created_at=datetime(2025, 3, 5, tzinfo=UTC),
        ),
        MemoryInput(
            "the cat sat on the mat near the door",
            "episodic",
            "alice",
            agent="mario",
            importance=1.0,
            created_at=_day(2),
        ),
        MemoryInput(
            "the door near the mat the cat sat on",
            "episodic",
            "alice",
            agent="mario",
            importance=0.5,
            created_at=_day(1),
        ),
        # bob: the same two sentences (a duplicate only within one principal), and one procedure
        MemoryInput(
            "the cat sat on the mat near the door",
            "episodic",
            "bob",
            agent="peach",
            importance=0.5,
            created_at=_day(3),
        ),
        MemoryInput(
            "deploy: run tests\nbuild\nship",
            "procedural",
            "bob",
            agent="peach",
            importance=0.5,
            created_at=_day(400),
        ),
        # principals whose names are SQL
        MemoryInput(
            "hostile principal's only memory",
            "semantic",
            HOSTILE,
            agent="mallory",
            importance=0.5,
            created_at=_day(10),
        ),
        MemoryInput(
            "sneaky principal's only memory",
            "semantic",
            SNEAKY,
            agent="mallory",
            importance=0.5,
            created_at=_day(10),
        ),
    ]
    results = store.remember_many(items)
    assert all(r.action == "added" for r in results)
    return store


def _ids(store: Store, principal: str) -> dict[str, str]:
    return {m.text: m.id for m in store.list(Scope.of(principal), limit=100)}


def test_summary_breakdown_and_distributions(filled: Store) -> None:
    a = filled.analytics(Scope.everyone())
    s = a.summary()
    assert s["total"] == 9
    assert s["per_tier"] == {"episodic": 5, "semantic": 3, "procedural": 1}
    assert s["pinned"] == 1
    assert s["principals"] == 4
    assert s["agents"] == 4

    by_agent = {r["key"]: r["n"] for r in a.breakdown("agent")}
    assert by_agent == {"mario": 4, "luigi": 1, "peach": 2, "mallory": 2}

    alice = filled.analytics(Scope.of("alice"))
    hist = alice.importance_histogram(bins=10)
    assert [h["n"] for h in hist] == [1, 0, 0, 0, 0, 2, 0, 0, 0, 2]  # 1.0 falls in the last bin
    ages = {h["label"]: h["n"] for h in alice.age_histogram(at=AT)}
    assert ages["1-7 days"] == 2
    assert ages["90-365 days"] == 2  # the two January memories
    assert ages["30-90 days"] == 1
    assert sum(ages.values()) == 5


def test_counts_over_time_per_month_and_week(filled: Store) -> None:
    alice = filled.analytics(Scope.of("alice"))
    monthly = alice.over_time(by="agent", period="month")
    assert monthly.buckets[:2] == ["2025-01-01", "2025-03-01"]
    assert monthly.counts["mario"][0] == 2
    assert monthly.counts["luigi"][1] == 1
    assert sum(monthly.total()) == 5

    weekly = alice.over_time(by="tier", period="week")
    assert len(weekly.buckets) >= 3
    # ISO weeks start on Monday: 2025-01-10 (Fri) and 2025-01-20 (Mon) are in different weeks.
    assert "2025-01-06" in weekly.buckets and "2025-01-20" in weekly.buckets


def test_top_keys_fold_the_rest_into_other(filled: Store) -> None:
    series = filled.analytics(Scope.everyone()).over_time(by="principal", period="year", top=2)
    assert set(series.counts) == {"alice", "bob", "other"}
    assert sum(series.counts["other"]) == 2
    assert list(series.counts)[-1] == "other"


def test_most_least_recalled_and_stale(filled: Store) -> None:
    ids = _ids(filled, "alice")
    tea = ids["alice prefers green tea"]
    lisbon = ids["alice went to Lisbon in January"]
    filled.engine.record_access([("semantic", tea)] * 3 + [("episodic", lisbon)])
    filled.close()  # joins the background access update

    alice = filled.analytics(Scope.of("alice"))
    most = alice.most_recalled(10)
    assert [(r["id"], r["recalls"]) for r in most] == [(tea, 3), (lisbon, 1)]
    assert most[0]["last_recalled"] is not None
    least = alice.least_recalled(2)
    assert all(r["recalls"] == 0 for r in least)
    assert least[0]["id"] == ids["alice had a call about the budget"]  # oldest never-recalled first

    # Just recalled: not stale. Never recalled and older than 30 days: stale.
    stale = alice.stale(days=30, at=datetime.now(UTC))
    stale_ids = {r["id"] for r in stale["rows"]}
    assert ids["alice had a call about the budget"] in stale_ids
    assert tea not in stale_ids and lisbon not in stale_ids
    assert stale["count"] == len(stale["rows"]) == 3
    assert stale["per_tier"] == {"episodic": 3}
    assert stale["active"] == 5


def test_near_duplicates_stay_within_one_principal(filled: Store) -> None:
    ids = _ids(filled, "alice")
    clusters = filled.analytics(Scope.everyone()).near_duplicates()
    # The hash embedder gives the same vector to the same bag of words: one cluster for alice only;
    # bob's copy of the sentence is not alice's duplicate, and alone it is no cluster.
    assert len(clusters) == 1
    c = clusters[0]
    assert c.principal == "alice" and c.tier == "episodic"
    assert set(c.ids) == {
        ids["the cat sat on the mat near the door"],
        ids["the door near the mat the cat sat on"],
    }
    assert c.max_similarity == pytest.approx(1.0, abs=1e-5)


def test_a_sample_of_one_per_tier_finds_nothing(filled: Store) -> None:
    a = filled.analytics(Scope.of("alice"))
    assert a.near_duplicates(sample_per_tier=1) == []


@pytest.mark.parametrize("principal", [HOSTILE, SNEAKY])
def test_principal_isolation_with_sql_in_the_name(filled: Store, principal: str) -> None:
    bob_ids = set(_ids(filled, "bob").values())
    a = filled.analytics(Scope.of(principal))
    assert a.summary()["total"] == 1
    assert a.summary()["principals"] == 1
    assert [r["key"] for r in a.breakdown("principal")] == [principal]
    assert {r["principal"] for r in a.least_recalled(50)} == {principal}
    assert a.near_duplicates() == []
    assert set(a.over_time(by="principal").counts) == {principal}
    assert [r["agent"] for r in a.agent_trust()] == ["mallory"]
    # Another principal's ids give no preview through this scope.
    assert a.previews(list(bob_ids)) == {}
    own = list(_ids(filled, principal).values())
    assert list(a.previews(own).values()) == [
        f"{'hostile' if principal == HOSTILE else 'sneaky'} principal's only memory"
    ]


def test_a_scope_of_several_principals(filled: Store) -> None:
    a = filled.analytics(Scope.of("bob", HOSTILE))
    assert a.summary()["total"] == 3
    assert {r["key"] for r in a.breakdown("principal")} == {"bob", HOSTILE}


def test_forgotten_pending_rows_are_not_counted(filled: Store) -> None:
    victim = _ids(filled, "bob")["the cat sat on the mat near the door"]
    filled.engine.table("episodic").update(where=F.eq("id", victim), values={"state": "forgotten-pending"})
    a = filled.analytics(Scope.of("bob"))
    assert a.summary()["total"] == 1
    assert victim not in {r["id"] for r in a.least_recalled(10)}


def test_nothing_is_written_to_disk(filled: Store, tmp_path: Path) -> None:
    before = {p for p in tmp_path.rglob("*") if p.is_file()}
    a = filled.analytics(Scope.everyone())
    a.summary()
    a.near_duplicates()
    a.previews(list(_ids(filled, "alice").values()))
    after = {p for p in tmp_path.rglob("*") if p.is_file()}
    assert not [p for p in after - before if "duckdb" in p.name or p.suffix in (".wal", ".db")]
    assert not filled.engine.layout.analytics.exists()


def test_empty_store_and_bad_arguments(store: Store) -> None:
    a = store.analytics(Scope.everyone())
    assert a.summary()["total"] == 0
    assert a.over_time().buckets == []
    assert a.near_duplicates() == []
    assert a.stale(30)["count"] == 0
    with pytest.raises(ValueError):
        a.over_time(by="text; DROP VIEW memories")
    with pytest.raises(ValueError):
        a.over_time(period="fortnight")
    with pytest.raises(ValueError):
        a.stale(days=-1)


# --- the screen ----------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_analytics_screen_fills_every_section_for_its_scope_only(filled: Store, host) -> None:
    from memdeck.tui.screens.analytics import AnalyticsScreen

    screen = AnalyticsScreen(filled, Scope.of(HOSTILE))
    app = host(screen)
    async with app.run_test(size=(150, 45)) as pilot:
        for _ in range(3):
            await app.workers.wait_for_complete()
            await pilot.pause()
        assert set(screen.data) == {
            "summary",
            "over_time",
            "breakdown",
            "importance",
            "age",
            "recall",
            "stale",
            "duplicates",
            "contradictions",
            "trust",
        }
        assert screen.data["summary"]["total"] == 1
        assert "1 memories" in str(screen.query_one("#analytics-summary").render())
        least = screen.query_one("#analytics-least", DataTable)
        assert least.row_count == 1
        assert str(least.get_row_at(0)[3]) == HOSTILE  # cells are plain Text now (never markup)
        assert str(least.get_row_at(0)[6]) == "hostile principal's only memory"

        await pilot.press("g")  # split by the next group: principal
        for _ in range(2):
            await app.workers.wait_for_complete()
            await pilot.pause()
        assert screen.group == "principal"
        assert set(screen.data["over_time"].counts) == {HOSTILE}
        assert screen.query_one("#analytics-breakdown", DataTable).get_row_at(0)[0].plain == HOSTILE
        names = {c.title for c in screen.palette_commands()}
        assert {"Analytics: Refresh", "Analytics: Split by", "Analytics: Week/month"} <= names
