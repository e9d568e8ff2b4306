"""The context pack (core/recall/context.py): pinned first, never over budget, long memories skipped."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from datetime import timedelta

from memdeck.core.recall.context import ContextPack, build_context_pack, estimate_tokens
from memdeck.core.records import Memory, now


def _mem(
    mem_id: str, tokens: int, *, importance: float = 0.5, pinned: bool = False, age_days: int = 0
) -> Memory:
    return Memory(
        id=mem_id,
        tier="semantic",
        principal="alice",
        text="x" * (4 * tokens),
        importance=importance,
        pinned=pinned,
        created_at=now() - timedelta(days=age_days),
    )


@dataclass
class Result:
    memory: Memory


def test_pinned_memories_come_first_most_important_then_newest() -> None:
    pins = [
        _mem("old", 5, importance=0.5, pinned=True, age_days=9),
        _mem("new", 5, importance=0.5, pinned=True),
        _mem("key", 5, importance=0.9, pinned=True, age_days=30),
    ]
    pack = build_context_pack(pins, [Result(_mem("r1", 5))], budget=100)
    assert [e.memory.id for e in pack.entries] == ["key", "new", "old", "r1"]
    assert [e.source for e in pack.entries] == ["pinned", "pinned", "pinned", "rank 1"]
    assert pack.pinned_included == 3


def test_the_pack_never_goes_over_its_budget() -> None:
    ranked = [Result(_mem(f"r{i}", 7 + i)) for i in range(20)]
    for budget in (0, 1, 7, 8, 30, 61, 250):
        pack = build_context_pack([_mem("p", 6, pinned=True)], ranked, budget)
        assert pack.used <= budget
        assert pack.used == sum(e.tokens for e in pack.included)
        assert all(e.running_total <= budget for e in pack.entries)


def test_a_memory_too_long_for_what_is_left_is_skipped_not_the_end_of_the_pack() -> None:
    ranked = [Result(_mem("short1", 10)), Result(_mem("long", 500)), Result(_mem("short2", 10))]
    pack = build_context_pack([], ranked, budget=50)
    assert [(e.memory.id, e.included) for e in pack.entries] == [
        ("short1", True),
        ("long", False),
        ("short2", True),
    ]
    assert [e.memory.id for e in pack.left_out] == ["long"]
    assert pack.used == 20


def test_a_pinned_result_appears_once_and_a_negative_budget_is_empty() -> None:
    pin = _mem("p", 3, pinned=True)
    pack = build_context_pack([pin], [Result(pin), Result(_mem("r", 3))], budget=-5)
    assert isinstance(pack, ContextPack) and pack.budget == 0
    assert [e.memory.id for e in pack.entries] == ["p", "r"] and pack.included == []


def test_tokens_are_estimated_as_characters_over_four() -> None:
    assert [estimate_tokens(t) for t in ("", "x", "x" * 8, "x" * 9)] == [1, 1, 2, 3]


def test_the_module_imports_no_ui_library() -> None:
    code = "import sys, memdeck.core.recall.context; print(' '.join(sys.modules))"
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    assert "textual" not in loaded and "rich" not in loaded
