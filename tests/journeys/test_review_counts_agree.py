"""One count of contradictions everywhere a person can look: core, `memdeck contradictions --json`,
`memdeck review --json`, the Review screen and the Analytics screen agree on a store no consolidation has
run on, and all of them move together when a pair is resolved (keep right in the app, dismiss from the
command line). Review rows say what each pair is. Real model: contradictions are about meaning."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable, Static

from memdeck.core.consolidate import contradictions
from memdeck.core.consolidate.review import review_queue
from memdeck.core.filters import Scope
from memdeck.core.store import Store
from memdeck.tui.app import MemdeckApp
from memdeck.tui.screens.analytics import AnalyticsScreen
from memdeck.tui.screens.review import ReviewScreen
from tests.appwait import settle as wait

pytestmark = pytest.mark.anyio
MEMDECK = str(Path(sys.executable).with_name("memdeck"))
EVERYONE = Scope.everyone()

FACTS = [  # (principal, text, created_at): pairs that cannot both hold, and facts that clash with nothing
    ("alice", "We use PostgreSQL", "2024-01-01T00:00:00Z"),
    ("alice", "We use MySQL", "2024-02-01T00:00:00Z"),
    ("alice", "The deadline for the Atlas launch is March", "2024-01-05T00:00:00Z"),
    ("alice", "The deadline for the Atlas launch is May", "2024-03-05T00:00:00Z"),
    ("alice", "The user likes dark mode", "2024-01-07T00:00:00Z"),
    ("alice", "The user dislikes dark mode", "2024-01-09T00:00:00Z"),
    ("alice", "Alice plays the piano", "2024-01-10T00:00:00Z"),
    ("alice", "Alice plays the guitar", "2024-01-11T00:00:00Z"),
    ("bob", "Bob lives in Berlin", "2024-01-01T00:00:00Z"),
    ("bob", "Bob lives in Lisbon", "2024-05-01T00:00:00Z"),
    ("bob", "Bob has a cat named Miso", "2024-01-01T00:00:00Z"),
]


@pytest.fixture
def seeded(model_store: Store) -> Store:
    for principal, text, when in FACTS:
        assert (
            model_store.remember(text, tier="semantic", principal=principal, created_at=when).memory
            is not None
        )
    return model_store


def cli(store: Store, *args: str) -> Any:
    env = {**os.environ}
    env.pop("MEMDECK_DEBUG", None)
    r = subprocess.run(
        [MEMDECK, *args, "--store", str(store.root)], env=env, capture_output=True, text=True, timeout=300
    )
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def cli_counts(store: Store) -> tuple[set[str], set[str]]:
    """The contradiction keys `memdeck contradictions --json` and `memdeck review --json` list."""
    listed = {c["key"] for c in cli(store, "contradictions", "--json")}
    queued = {i["key"] for i in cli(store, "review", "--json") if i["kind"] == "contradiction"}
    return listed, queued


async def settle(app: Any, pilot: Any) -> None:
    await wait(app, pilot, 4)


def review_rows(screen: ReviewScreen) -> list[list[str]]:
    table = screen.query_one("#review-list", DataTable)
    return [[str(c) for c in table.get_row_at(r)] for r in range(table.row_count)]


def analytics_keys(screen: AnalyticsScreen) -> set[str]:
    table = screen.query_one("#analytics-contradictions", DataTable)
    return {str(row.value) for row in table.rows}


async def test_every_view_counts_the_same_contradictions_before_and_after_a_pair_is_resolved(
    seeded: Store,
) -> None:
    core = {c.key for c in contradictions(seeded.engine, EVERYONE)}
    pairs = {frozenset((c.a_text, c.b_text)) for c in contradictions(seeded.engine, EVERYONE)}
    assert {
        frozenset(("We use PostgreSQL", "We use MySQL")),
        frozenset(("Bob lives in Berlin", "Bob lives in Lisbon")),
        frozenset(("The user likes dark mode", "The user dislikes dark mode")),
    } <= pairs
    assert frozenset(("Alice plays the piano", "Alice plays the guitar")) not in pairs  # both can hold
    assert cli_counts(seeded) == (core, core)

    app = MemdeckApp(seeded, EVERYONE, load_model=False)
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(app, pilot)
        await pilot.press("3")
        await settle(app, pilot)
        analytics = app.screen
        assert isinstance(analytics, AnalyticsScreen)
        assert analytics_keys(analytics) == core
        summary = str(analytics.query_one("#analytics-contradictions-summary", Static).render())
        assert summary.startswith(f"{len(core)} contradictions to review")

        await pilot.press("5")
        await settle(app, pilot)
        review = app.screen
        assert isinstance(review, ReviewScreen)
        assert {i.key for i in review.items if i.kind == "contradiction"} == core
        assert f"To review: {len(core)} contradictions" in str(
            review.query_one("#review-status", Static).render()
        )

        first = review.current()
        assert first is not None and first.kind == "contradiction" and first.right is not None
        await pilot.press(
            "right_square_bracket"
        )  # keep right: the left is deprecated, superseded by the right
        await settle(app, pilot)
        assert seeded.get(first.left["id"]).superseded_by == first.right["id"]
        after = {c.key for c in contradictions(seeded.engine, EVERYONE)}
        assert first.key not in after and after < core
        assert {i.key for i in review.items if i.kind == "contradiction"} == after
        assert f"To review: {len(after)} contradictions" in str(
            review.query_one("#review-status", Static).render()
        )

        await pilot.press("3")  # the Analytics screen recomputes on coming back after a change
        await settle(app, pilot)
        assert analytics_keys(analytics) == after
    assert cli_counts(seeded) == (after, after)

    dismissed = sorted(after)[0]
    r = subprocess.run(
        [MEMDECK, "review", "dismiss", dismissed, "--store", str(seeded.root)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    left = {c.key for c in contradictions(seeded.engine, EVERYONE)}
    assert left == after - {dismissed}
    assert cli_counts(seeded) == (left, left)
    assert {i.key for i in review_queue(seeded.engine, EVERYONE) if i.kind == "contradiction"} == left


async def test_review_rows_say_what_each_pair_is(seeded: Store) -> None:
    app = MemdeckApp(seeded, Scope.of("alice"), load_model=False)
    async with app.run_test(size=(220, 50)) as pilot:
        await settle(app, pilot)
        await pilot.press("5")
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, ReviewScreen)
        rows = {(row[3], row[4]): row for row in review_rows(screen) if row[0] == "contradiction"}
        assert len(rows) == len(contradictions(seeded.engine, Scope.of("alice"))) >= 3
        whats = [row[2] for row in rows.values()]
        assert len(set(whats)) == len(whats)  # no two rows read the same
        by_texts = {frozenset(k): row[2] for k, row in rows.items()}
        assert {"PostgreSQL", "MySQL"} <= set(
            by_texts[frozenset(("We use PostgreSQL", "We use MySQL"))].split()
        )
        deadline = by_texts[
            frozenset(
                ("The deadline for the Atlas launch is March", "The deadline for the Atlas launch is May")
            )
        ]
        assert "March" in deadline and "May" in deadline
        assert "opposites" in by_texts[frozenset(("The user likes dark mode", "The user dislikes dark mode"))]
