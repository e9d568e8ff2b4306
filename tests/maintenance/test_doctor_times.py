"""Issue #14 item 6: doctor names rows whose times cannot be read (written before times were validated)."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from memdeck.core.embed import HashEmbedder
from memdeck.core.filters import Scope
from memdeck.core.maintenance.doctor import diagnose
from memdeck.core.store import Store


def _plant_bad_time(store: Store, template_id: str, new_id: str, column: str, micros: int) -> None:
    """A copy of one row with another id and a raw time no validated write can produce, added straight to
    the table as an older memdeck would have written it."""
    tbl = store.engine.table("semantic")
    rows = tbl.to_lance().to_table(filter=f"id = '{template_id}'")
    rows = rows.set_column(rows.schema.get_field_index("id"), "id", pa.array([new_id]))
    field = rows.schema.field(column)
    bad = pc.cast(pa.array([micros], pa.int64()), field.type)
    rows = rows.set_column(rows.schema.get_field_index(column), field, bad)
    tbl.add(rows)


def test_doctor_reports_rows_with_unreadable_times_by_id(tmp_path) -> None:
    store = Store.open(tmp_path / "s", embedder=HashEmbedder())
    good = store.remember("a fact with a normal time", tier="semantic", principal="alice").memory
    _plant_bad_time(store, good.id, "sem_far_future", "created_at", 2**62)  # about the year 146,000
    _plant_bad_time(store, good.id, "sem_year_zero", "last_reinforced_at", -62_200_000_000 * 1_000_000)
    report = diagnose(store.engine)
    assert not report.ok
    found = [p for p in report.problems if p.check == "unreadable_time"]  # one per fragment
    assert sorted(i for p in found for i in p.ids) == ["sem_far_future", "sem_year_zero"]
    assert {p.table for p in found} == {"semantic"}
    assert {c for p in found for c in p.columns} == {"created_at", "last_reinforced_at"}
    assert good.id not in report.affected_ids
    assert any("sem_far_future" in line for line in report.lines())
    assert store.count(Scope.of("alice")) >= 1
    store.close()


def test_a_store_with_valid_times_has_no_time_problem(tmp_path) -> None:
    store = Store.open(tmp_path / "s", embedder=HashEmbedder())
    store.remember("one", tier="semantic", principal="alice")
    store.remember("two", tier="episodic", principal="alice", created_at="1999-01-01T00:00:00Z")
    assert [p for p in diagnose(store.engine).problems if p.check == "unreadable_time"] == []
    store.close()
