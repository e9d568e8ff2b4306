"""The app shows rows whose times cannot be read (written before times were validated): marked, never a
crash, never hidden."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from memdeck.core.filters import Scope
from memdeck.core.store import Store
from memdeck.tui.app import MemdeckApp
from memdeck.tui.screens.browse import BrowseScreen
from memdeck.tui.widgets.memory_table import MemoryTable
from tests.appwait import settle as wait

pytestmark = pytest.mark.anyio


def _plant_bad_time(store: Store, template_id: str, new_id: str, column: str, micros: int) -> None:
    """A copy of one row with another id and a raw time no validated write can produce."""
    tbl = store.engine.table("semantic")
    rows = tbl.to_lance().to_table(filter=f"id = '{template_id}'")
    rows = rows.set_column(rows.schema.get_field_index("id"), "id", pa.array([new_id]))
    text = rows.schema.get_field_index("text")
    rows = rows.set_column(text, rows.schema.field(text), pa.array([f"an old row {new_id}"]))
    field = rows.schema.field(column)
    rows = rows.set_column(
        rows.schema.get_field_index(column), field, pc.cast(pa.array([micros], pa.int64()), field.type)
    )
    tbl.add(rows)


async def settle(app: MemdeckApp, pilot: Any) -> None:
    await wait(app, pilot, 4)


async def test_rows_with_unreadable_times_are_shown_and_marked(store: Store) -> None:
    good = store.remember("a fact with a normal time", tier="semantic", principal="alice").memory
    _plant_bad_time(store, good.id, "sem_far_future", "created_at", 2**62)  # about the year 146,000
    _plant_bad_time(store, good.id, "sem_year_zero", "updated_at", -62_200_000_000 * 1_000_000)
    app = MemdeckApp(store=store, scope=Scope.everyone())
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        assert isinstance(app.screen, BrowseScreen)
        table = app.screen.query_one(MemoryTable)
        rows = [table.row(i) for i in range(table.count or 0)]
        assert {r.id for r in rows if r is not None} == {good.id, "sem_far_future", "sem_year_zero"}
        bad = {r.id: r for r in rows if r is not None and r.unreadable_times}
        assert {k: v.unreadable_times for k, v in bad.items()} == {
            "sem_far_future": ["created_at"],
            "sem_year_zero": ["updated_at"],
        }
        assert bad["sem_far_future"].created_at is None
        lines = [table.render_line(y).text for y in range(1, 4)]
        far = next(line for line in lines if "sem_far_future" in line)
        assert "⚠ unreadable created_at: an old row" in far and "⚠ ?" in far
        zero = next(line for line in lines if "sem_year_zero" in line)
        assert "⚠ unreadable updated_at: an old row" in zero
        fine = next(line for line in lines if "a fact with a normal time" in line)
        assert "⚠" not in fine
