"""The recall inspector: live re-ranking without a new search, profiles, the context pack, keyword-only mode."""

from __future__ import annotations

import threading
import tomllib
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from textual.app import App
from textual.widgets import Input

from memdeck.core.config import DEFAULT_WEIGHTS, load_profile
from memdeck.core.embed import HashEmbedder
from memdeck.core.filters import Scope
from memdeck.core.records import Memory, now
from memdeck.core.store import Store
from memdeck.tui.screens.inspector import (
    InspectorScreen,
    build_context_pack,
    estimate_tokens,
    rank_moves,
)

pytestmark = pytest.mark.anyio  # the anyio plugin runs these coroutines on asyncio


def _set(screen: InspectorScreen, selector: str, value: str) -> None:
    screen.query_one(selector, Input).value = value


async def _recall(app: App[None], pilot: Any, screen: InspectorScreen, query: str, principal: str) -> None:
    _set(screen, "#inspector-query", query)
    _set(screen, "#inspector-principal", principal)
    await pilot.press("ctrl+r")
    await app.workers.wait_for_complete()
    await pilot.pause()


# --- pure helpers ------------------------------------------------------------------------------------


def _mem(mem_id: str, text: str, importance: float = 0.5) -> Memory:
    return Memory(
        id=mem_id,
        tier="semantic",
        principal="alice",
        text=text,
        importance=importance,
        pinned=True,
        created_at=now(),
    )


class _Scored:
    def __init__(self, memory: Memory) -> None:
        self.memory = memory


def test_estimate_tokens_is_characters_over_four() -> None:
    assert estimate_tokens("x") == 1
    assert estimate_tokens("x" * 8) == 2
    assert estimate_tokens("x" * 9) == 3


def test_context_pack_pins_first_then_ranked_within_budget() -> None:
    pinned = [_mem("p-low", "a" * 40, importance=0.1), _mem("p-high", "b" * 40, importance=0.9)]
    ranked = [_Scored(_mem("r1", "c" * 400)), _Scored(_mem("r2", "d" * 40)), _Scored(_mem("p-low", "a" * 40))]
    pack = build_context_pack(pinned, ranked, budget=40)
    assert [e.memory.id for e in pack.entries] == ["p-high", "p-low", "r1", "r2"]  # p-low appears once
    assert [e.included for e in pack.entries] == [True, True, False, True]  # r1 (100 tokens) does not fit
    assert pack.used == 30 <= pack.budget
    assert [e.source for e in pack.entries] == ["pinned", "pinned", "rank 1", "rank 2"]


def test_rank_moves() -> None:
    assert rank_moves(["a", "b", "c"], ["c", "a", "d"]) == {"c": "▲2", "a": "▼1", "d": "new"}
    assert rank_moves(["a"], ["a"]) == {"a": ""}


# --- the screen ----------------------------------------------------------------------------------------


async def test_raising_the_recency_weight_reorders_without_a_new_search(model_store: Store, host) -> None:
    # Relevance and recency disagree: the fact about coffee is old, the recent one is barely related.
    old = model_store.remember(
        "Alice's favourite coffee is a flat white with oat milk",
        tier="semantic",
        principal="alice",
        created_at=now() - timedelta(days=730),
    ).memory
    new = model_store.remember(
        "Alice renewed her library card this morning",
        tier="semantic",
        principal="alice",
        created_at=now(),
    ).memory
    model_store.remember("Bob drinks his coffee black", tier="semantic", principal="bob")
    searches: list[Any] = []
    model_store.engine.recall_hooks.append(searches.append)

    screen = InspectorScreen(model_store, Scope.everyone())
    app = host(screen)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        _set(screen, "#inspector-weight-recency-input", "0")
        await pilot.pause()
        await _recall(app, pilot, screen, "What coffee does Alice like?", "alice")
        assert len(searches) == 1
        ids = screen.ranked_ids
        assert ids.index(old.id) < ids.index(new.id)
        assert all(s.memory.principal == "alice" for s in screen.ranked)

        _set(screen, "#inspector-weight-recency-input", "5")
        await pilot.pause()
        ids = screen.ranked_ids
        assert ids.index(new.id) < ids.index(old.id)
        assert screen.moves[new.id].startswith("▲")
        assert screen.moves[old.id].startswith("▼")
        assert screen.profile.weights["recency"] == 5.0
        assert len(searches) == 1  # re-ranked the cached candidates: no new search
        assert screen.last_rerank_ms is not None

        # The rendered table follows the new order.
        table = screen.query_one("#inspector-results")
        first = table.coordinate_to_cell_key((0, 0)).row_key.value
        assert first == ids[0]

        # A shorter half-life for semantic memories also changes recency, via the stepper's minus button.
        before = screen.query_one("#inspector-bars").render()
        await pilot.click("#inspector-half-life-semantic-minus")
        await pilot.pause()
        assert screen.profile.half_life_days["semantic"] == pytest.approx(180 / 1.25, abs=0.1)
        assert screen.query_one("#inspector-bars").render() != before


async def test_the_inspector_does_not_count_its_recalls_as_accesses(store: Store, host) -> None:
    mem = store.remember(
        "alice keeps the spare key under the plant pot", tier="semantic", principal="alice"
    ).memory
    screen = InspectorScreen(store, Scope.of("alice"))
    app = host(screen)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        assert screen.query_one("#inspector-principal", Input).value == "alice"  # a one-principal view
        await _recall(app, pilot, screen, "spare key", "alice")
        assert screen.ranked_ids == [mem.id]
    store.close()
    assert store.get(mem.id).access_count == 0


async def test_enter_without_a_principal_puts_the_cursor_in_the_principal_field(store: Store, host) -> None:
    """A person types a query and presses Enter before naming whose memories to search: the message says so
    and the cursor waits in the principal field (not on the results, where typing the name would run other
    keys); the name and Enter then recall."""
    mem = store.remember(
        "alice keeps the spare key under the plant pot", tier="semantic", principal="alice"
    ).memory
    store.remember("bob keeps his bike in the shed", tier="semantic", principal="bob")
    screen = InspectorScreen(store, Scope.everyone())
    app = host(screen)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        await pilot.press("slash")
        assert app.focused is screen.query_one("#inspector-query", Input)
        await pilot.press(*"spare", "space", *"key", "enter")
        await pilot.pause()
        assert "type a principal" in str(screen.query_one("#inspector-status").render())
        assert app.focused is screen.query_one("#inspector-principal", Input)
        assert screen.query_one("#inspector-query", Input).value == "spare key"  # the query kept
        await pilot.press(*"alice", "enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert screen.ranked_ids == [mem.id]
        assert not isinstance(app.focused, Input)  # on the results, so y/n and the weights' keys act there


async def test_a_principal_outside_the_view_is_refused(store: Store, host) -> None:
    store.remember("bob's secret", tier="semantic", principal="bob")
    searches: list[Any] = []
    store.engine.recall_hooks.append(searches.append)
    screen = InspectorScreen(store, Scope.of("alice"))
    app = host(screen)
    async with app.run_test(size=(160, 50)) as pilot:
        await _recall(app, pilot, screen, "secret", "bob")
        assert screen.result is None and screen.ranked == []
        assert "outside" in str(screen.query_one("#inspector-status").render())
    assert searches == []


async def test_save_load_and_reset_profiles(store: Store, memdeck_home: Path, host) -> None:
    store.remember("alice likes tea", tier="semantic", principal="alice")
    screen = InspectorScreen(store, Scope.everyone())
    app = host(screen)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        _set(screen, "#inspector-weight-importance-input", "0.7")
        screen.query_one("#inspector-weight-relevance-input").focus()
        await pilot.press("up")  # up/down step a focused weight by 0.05
        await pilot.pause()
        assert screen.profile.weights["relevance"] == pytest.approx(0.65)
        _set(screen, "#inspector-profile-name", "tuned")
        await pilot.press("ctrl+s")
        await pilot.pause()

        saved = tomllib.loads((memdeck_home / "profiles.toml").read_text(encoding="utf-8"))
        assert saved["profiles"]["tuned"]["weights"]["importance"] == 0.7
        assert load_profile("tuned").weights["relevance"] == pytest.approx(0.65)

        await pilot.press("ctrl+t")  # reset to the defaults
        await pilot.pause()
        # The default importance weight is 0.1 since importance counts by default (#15); it was 0.
        assert screen.profile.weights["importance"] == DEFAULT_WEIGHTS["importance"] == 0.1
        assert screen.query_one("#inspector-weight-importance-input", Input).value == "0.1"

        screen.load_named_profile("tuned")
        await pilot.pause()
        assert screen.profile.weights["importance"] == 0.7
        assert screen.query_one("#inspector-weight-importance-input", Input).value == "0.7"

        _set(screen, "#inspector-profile-name", "")
        await pilot.press("ctrl+s")  # no name: refused, nothing written
        await pilot.pause()
        assert set(
            tomllib.loads((memdeck_home / "profiles.toml").read_text(encoding="utf-8"))["profiles"]
        ) == {"default", "tuned"}


async def test_context_pack_puts_pinned_first_and_keeps_to_the_budget(store: Store, host) -> None:
    pinned = store.remember(
        "alice is allergic to peanuts", tier="semantic", principal="alice", pinned=True
    ).memory
    store.remember("bob's pinned note about peanuts", tier="semantic", principal="bob", pinned=True)
    for i in range(6):
        store.remember(
            f"alice ate peanut noodles at restaurant number {i} " + "and talked a lot " * 5,
            tier="episodic",
            principal="alice",
        )
    screen = InspectorScreen(store, Scope.everyone())
    app = host(screen)
    async with app.run_test(size=(160, 50)) as pilot:
        await _recall(app, pilot, screen, "peanut noodles", "alice")
        _set(screen, "#inspector-budget", "120")
        await pilot.pause()
        pack = screen.context_pack
        assert pack is not None and pack.budget == 120
        assert pack.entries[0].memory.id == pinned.id and pack.entries[0].source == "pinned"
        assert all(e.memory.principal == "alice" for e in pack.entries)
        assert pack.used <= 120
        assert 1 < len(pack.included) < len(pack.entries)  # some ranked results did not fit
        # Counted as `memdeck context` counts what it sends: each rendered line with the store's tokenizer.
        assert all(
            e.rendered.endswith(" ".join(e.memory.text.split())) and e.rendered.startswith(f"[{e.memory.id} ")
            for e in pack.entries
        )
        assert all(e.tokens == store.engine.embedder.count_tokens(e.rendered) for e in pack.entries)
        assert sum(e.tokens for e in pack.included) == pack.used


class SlowModel(HashEmbedder):
    """An embedder that reports not loaded until the test lets it finish loading."""

    def __init__(self) -> None:
        super().__init__()
        self.ready = threading.Event()

    @property
    def loaded(self) -> bool:
        return self.ready.is_set()

    def load(self) -> None:
        self.ready.wait(30)


async def test_keyword_only_until_the_model_loads_then_recalls_again(open_store: Any, host) -> None:
    embedder = SlowModel()
    store = open_store(embedder=embedder)
    store.remember("alice parks her bicycle in the courtyard", tier="semantic", principal="alice")
    screen = InspectorScreen(store, Scope.everyone())
    app = host(screen)
    async with app.run_test(size=(160, 50)) as pilot:
        _set(screen, "#inspector-query", "bicycle courtyard")
        _set(screen, "#inspector-principal", "alice")
        await pilot.press("ctrl+r")
        # The model load is still blocked, so wait for the recall alone (finished workers leave the manager).
        for _ in range(500):
            if screen.result is not None:
                break
            await pilot.pause(0.01)
        assert screen.result.keyword_only
        assert "keyword" in str(screen.query_one("#inspector-status").render())
        assert len(screen.ranked) == 1

        embedder.ready.set()
        await app.workers.wait_for_complete()
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert not screen.result.keyword_only
        assert screen.ranked[0].components["relevance"] > 0


async def test_every_key_is_also_a_palette_command(store: Store, host) -> None:
    screen = InspectorScreen(store, Scope.everyone())
    app = host(screen)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        names = {c.title for c in screen.palette_commands()}
        assert {
            "Inspector: Recall",
            "Inspector: Save profile",
            "Inspector: Reset weights",
            "Inspector: Why not?",
        } <= names
        ids = {b.id for b in InspectorScreen.BINDINGS}  # type: ignore[union-attr]
        assert None not in ids and len(ids) == len(InspectorScreen.BINDINGS)


async def test_judgments_and_feedback_from_the_results(store: Store, host) -> None:
    from memdeck.core.recall import feedback
    from memdeck.core.tuning import evaluate

    first = store.remember(
        "alice's passport expires in March", tier="semantic", principal="alice", agent="scribe"
    ).memory
    screen = InspectorScreen(store, Scope.everyone())
    app = host(screen)
    async with app.run_test(size=(160, 50)) as pilot:
        await _recall(app, pilot, screen, "passport expires", "alice")
        assert screen.ranked_ids[0] == first.id
        screen.query_one("#inspector-results").focus()
        await pilot.press("n")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert screen.judgments == {first.id: False}, str(screen.query_one("#inspector-status").render())
        saved = evaluate.list_judgments(store.engine, Scope.of("alice"))
        assert [(j.memory_id, j.relevant, j.query) for j in saved] == [(first.id, False, "passport expires")]

        await pilot.press("plus")  # useful: the writer's trust goes up
        for _ in range(3):
            await app.workers.wait_for_complete()
            await pilot.pause()
        assert feedback.feedback_counts(store.engine)["scribe"] == {"useful": 1, "total": 1}
        trust = screen.query_one("#inspector-trust")
        assert "1/1 useful" in str(trust.get_row("scribe")[3])


async def test_explain_why_not_and_apply_the_suggested_weights(store: Store, host) -> None:
    top = store.remember(
        "alice tea: alice drinks green tea every day, tea tea", tier="semantic", principal="alice"
    ).memory
    # A weaker keyword match than `top` under BM25 with exact term counts. "alice mentioned tea once" ranked
    # below `top` only while it sat outside the full-text index (a second write before the index was
    # optimised), whose scores then misread its term counts; indexed, it scores 0.749 of the best keyword
    # match and its pin lifts it above `top`, with either recall engine.
    below = store.remember(
        "alice mentioned tea once in passing", tier="semantic", principal="alice", pinned=True
    ).memory
    screen = InspectorScreen(store, Scope.everyone())
    app = host(screen)
    async with app.run_test(size=(160, 50)) as pilot:
        _set(screen, "#inspector-k", "1")
        await _recall(app, pilot, screen, "alice tea", "alice")
        assert screen.ranked_ids == [top.id]

        await pilot.press("w")
        await pilot.pause()
        app.screen.query_one("#inspector-prompt-input", Input).value = below.id
        await pilot.press("enter")
        for _ in range(3):
            await app.workers.wait_for_complete()
            await pilot.pause()
        assert screen.explanation["status"] == "below_k"
        assert screen.suggestion and all(c["weight"] in screen.profile.weights for c in screen.suggestion)

        await pilot.press("a")
        for _ in range(2):
            await pilot.pause()
        assert screen.ranked_ids == [below.id]  # the suggested weights bring it into the top k
        assert screen.moves[below.id] == "new"


async def test_inside_the_app_the_mode_keys_still_work(store: Store) -> None:
    from memdeck.tui.app import MemdeckApp
    from memdeck.tui.screens.analytics import AnalyticsScreen
    from memdeck.tui.screens.receipts import ReceiptsScreen

    store.remember("alice likes tea", tier="semantic", principal="alice")
    app = MemdeckApp(store=store, scope=Scope.everyone(), load_model=False)
    async with app.run_test(size=(160, 50)) as pilot:
        for key, screen_type in (
            ("2", InspectorScreen),
            ("3", AnalyticsScreen),
            ("4", ReceiptsScreen),
            ("2", InspectorScreen),
        ):
            await pilot.press(key)
            for _ in range(3):
                await app.workers.wait_for_complete()
                await pilot.pause()
            assert isinstance(app.screen, screen_type)
        titles = {c.title for c in app.get_system_commands(app.screen)}
        assert "Inspector: Recall" in titles


def _seed_filtered(store: Store) -> dict[str, str]:
    ids = {}
    for key, text, extra in [
        (
            "old",
            "the garden shed key is under the blue pot",
            {"created_at": "2023-03-01T10:00:00Z", "tags": ["home"]},
        ),
        (
            "new",
            "the garden shed key moved to the hook by the door",
            {
                "created_at": "2024-06-01T10:00:00Z",
                "tags": ["home", "keys"],
                "agent": "planner",
                "importance": 0.9,
            },
        ),
        (
            "mid",
            "the garden shed key has a spare with the neighbour",
            {"created_at": "2023-11-01T10:00:00Z", "agent": "planner", "importance": 0.3},
        ),
    ]:
        r = store.remember(text, tier="semantic", principal="alice", force=True, **extra)  # type: ignore[arg-type]
        assert r.memory is not None
        ids[key] = r.memory.id
    return ids


async def _submit_in(app: App[None], pilot: Any, screen: InspectorScreen, selector: str, value: str) -> None:
    _set(screen, selector, value)
    screen.query_one(selector, Input).focus()
    await pilot.press("enter")
    await app.workers.wait_for_complete()
    await pilot.pause()


async def test_filters_narrow_the_recall_inside_the_query_and_enter_recalls_again(store: Store, host) -> None:
    ids = _seed_filtered(store)
    searches: list[Any] = []
    store.engine.recall_hooks.append(searches.append)
    screen = InspectorScreen(store, Scope.of("alice"))
    app = host(screen)
    async with app.run_test(size=(160, 50)) as pilot:
        await _recall(app, pilot, screen, "garden shed key", "alice")
        assert set(screen.ranked_ids) == set(ids.values())
        await _submit_in(app, pilot, screen, "#inspector-tag", "home")
        assert set(screen.ranked_ids) == {ids["old"], ids["new"]}
        await _submit_in(app, pilot, screen, "#inspector-written-by", "planner")
        assert screen.ranked_ids == [ids["new"]]
        assert "filtered: tag home, written by planner" in str(screen.query_one("#inspector-status").render())
        for selector in ("#inspector-tag", "#inspector-written-by"):
            _set(screen, selector, "")
        await _submit_in(app, pilot, screen, "#inspector-since", "2023-06-01")
        assert set(screen.ranked_ids) == {ids["new"], ids["mid"]}
        await _submit_in(app, pilot, screen, "#inspector-until", "2023-11-01")  # a bare date: through its end
        assert screen.ranked_ids == [ids["mid"]]
        _set(screen, "#inspector-since", "")
        _set(screen, "#inspector-until", "")
        await _submit_in(app, pilot, screen, "#inspector-min-importance", "0.6")
        assert screen.ranked_ids == [ids["new"]]
        assert screen.result is not None and screen.result.candidates is not None
        # Every recall was a new search with the filters applied inside it: the candidates are filtered too.
        assert {c.memory.id for c in screen.result.rerank(screen.profile, 10)} == {ids["new"]}
    assert len(searches) == 6


@pytest.mark.parametrize(
    ("selector", "value", "message"),
    [
        ("#inspector-min-importance", "high", "filter: min-importance must be a number between 0 and 1"),
        ("#inspector-min-importance", "1.5", "filter: min-importance must be between 0 and 1"),
        ("#inspector-since", "last tuesday", "filter since: not an ISO 8601 time"),
        ("#inspector-until", "2020-01-01", "filter: since is after until"),
    ],
)
async def test_a_bad_filter_is_one_clear_message_and_no_search(
    store: Store, selector: str, value: str, message: str, host
) -> None:
    _seed_filtered(store)
    screen = InspectorScreen(store, Scope.of("alice"))
    app = host(screen)
    async with app.run_test(size=(160, 50)) as pilot:
        await _recall(app, pilot, screen, "garden shed key", "alice")
        before = screen.ranked_ids
        searches: list[Any] = []
        store.engine.recall_hooks.append(searches.append)
        _set(screen, "#inspector-since", "2021-01-01")
        await _submit_in(app, pilot, screen, selector, value)
        status = str(screen.query_one("#inspector-status").render())
        assert message in status and "--" not in status
        assert searches == [] and screen.ranked_ids == before  # the last good recall stays on screen
        assert len(app.screen_stack) == 2  # a message, not a crash or a dialog


async def test_the_highlighted_result_shows_its_source(store: Store, host) -> None:
    src = {"file": "notes/home.md", "heading": "Keys", "lines": [3, 7]}
    imported = store.remember(
        "the garden shed key is under the blue pot", tier="semantic", principal="alice", meta={"source": src}
    ).memory
    typed = store.remember(
        "the garden shed key has a spare with the neighbour", tier="semantic", principal="alice"
    ).memory
    assert imported is not None and typed is not None
    screen = InspectorScreen(store, Scope.of("alice"))
    app = host(screen)
    async with app.run_test(size=(160, 50)) as pilot:
        await _recall(app, pilot, screen, "garden shed key blue pot", "alice")
        shown = {}
        for _ in screen.ranked_ids:
            assert screen.results.highlighted is not None
            shown[screen.results.highlighted.memory.id] = str(screen.query_one("#inspector-source").render())
            await pilot.press("down")
            await pilot.pause()
        assert shown[imported.id] == "source notes/home.md > Keys, lines 3-7"
        assert shown[typed.id] == "source none (not imported from a file)"
