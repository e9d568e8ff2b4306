"""The demo store tells the truth about its history: a "superseded by" link joins a fact to a newer value of
the same thing, derived facts carry the episodes they were derived from as sources (the detail screen's
links list them), and every view counts the same contradictions on it. Real model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from textual.widgets import OptionList

from memdeck.core.consolidate import contradictions
from memdeck.core.consolidate.contradict import TOPIC_GATE, compare
from memdeck.core.consolidate.review import build_queue
from memdeck.core.demo import build_demo
from memdeck.core.embed import SentenceTransformerEmbedder
from memdeck.core.filters import Scope
from memdeck.core.store import Store
from memdeck.tui.app import MemdeckApp
from memdeck.tui.screens.detail import DetailScreen

pytestmark = pytest.mark.anyio
COLUMNS = ["id", "principal", "text", "state", "superseded_by", "sources", "created_at", "agent"]


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory, real_embedder: SentenceTransformerEmbedder) -> Path:
    root = tmp_path_factory.mktemp("demo")
    (root / "home").mkdir()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MEMDECK_HOME", str(root / "home"))  # no real user's config
        build_demo(
            root / "store", total=400, seed=11, store=Store.open(root / "store", embedder=real_embedder)
        )
    return root / "store"


@pytest.fixture
def demo_store(demo: Path, real_embedder: SentenceTransformerEmbedder) -> Any:
    store = Store.open(demo, embedder=real_embedder)
    yield store
    store.close()


def rows(store: Store, tier: str, columns: list[str]) -> dict[str, dict[str, Any]]:
    table = store.engine.table(tier).to_lance().to_table(columns=columns).to_pylist()
    return {r["id"]: r for r in table}


def test_superseded_by_links_join_a_fact_to_a_newer_value_of_the_same_thing(
    demo_store: Store, real_embedder: SentenceTransformerEmbedder
) -> None:
    facts = rows(demo_store, "semantic", COLUMNS)
    links = [(f, facts[f["superseded_by"]]) for f in facts.values() if f["superseded_by"]]
    assert len(links) >= 5
    vectors = real_embedder.encode([t for old, new in links for t in (old["text"], new["text"])])
    vectors = np.asarray(vectors, dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    for i, (old, new) in enumerate(links):
        assert old["state"] == "deprecated" and new["principal"] == old["principal"]
        assert new["created_at"] > old["created_at"], (old["text"], new["text"])
        assert float(vectors[2 * i] @ vectors[2 * i + 1]) >= TOPIC_GATE, (old["text"], new["text"])
        relation = compare(old["text"], new["text"])
        assert relation.contradicts and relation.attribute, (old["text"], new["text"], relation)


def test_derived_facts_carry_the_episodes_they_came_from(demo_store: Store) -> None:
    facts = rows(demo_store, "semantic", COLUMNS)
    episodes = rows(demo_store, "episodic", ["id", "principal", "derived_facts"])
    sourced = [f for f in facts.values() if f["sources"]]
    assert len(sourced) >= 10
    for fact in sourced:
        for source in fact["sources"]:
            episode = episodes[source]  # every source exists
            assert episode["principal"] == fact["principal"]
            assert fact["text"] in episode["derived_facts"]
    derived = {(e["principal"], t) for e in episodes.values() for t in e["derived_facts"] or []}
    assert derived <= {(f["principal"], f["text"]) for f in sourced}  # every derived statement is a fact


async def test_the_detail_screen_lists_a_derived_facts_source_episodes(demo_store: Store) -> None:
    fact = next(
        f for f in rows(demo_store, "semantic", COLUMNS).values() if f["sources"] and f["state"] == "active"
    )
    app = MemdeckApp(demo_store, Scope.of(fact["principal"]), load_model=False)
    async with app.run_test(size=(160, 50)) as pilot:
        await app.workers.wait_for_complete()
        await app.push_screen(DetailScreen(fact["id"]))
        for _ in range(3):
            await app.workers.wait_for_complete()
            await pilot.pause()
        await pilot.press("l")
        await pilot.pause()
        links = app.screen.query_one("#detail-links", OptionList)
        assert links.has_focus
        ids = {links.get_option_at_index(i).id for i in range(links.option_count)}
        assert set(fact["sources"]) <= ids


def test_the_demo_has_contradictions_to_review_and_every_count_agrees(demo_store: Store) -> None:
    found = contradictions(demo_store.engine, Scope.everyone())
    queue = build_queue(demo_store.engine, Scope.everyone(), ("contradiction",))
    assert found and queue.totals["contradiction"] == len(found) == len(queue.items)
    assert {c.key for c in found} == {i.key for i in queue.items}
