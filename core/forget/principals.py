"""Principal names stored before names were normalised (NFC, trimmed; :func:`records.check_principal`).

A store written by an older memdeck can hold "José" decomposed, or "alice ", in its rows, its edit history,
its trace log and as the name its vault is keyed and encrypted under; reads and forgets now use the
normalised name and would miss them, a forget by name included. :func:`normalise_principals` rewrites them
once, as a schema migration on open (schema 3, ``Engine._migrate``), under the store's exclusive lock.
Tombstones (keyed by a hash of the name) are not rewritten.
"""

from __future__ import annotations

import logging
import unicodedata
from typing import TYPE_CHECKING, Any

import pyarrow.compute as pc

from memdeck.core import filters as F
from memdeck.core.privacy.vault import Vault
from memdeck.core.records import HISTORY, STORED_TIERS

if TYPE_CHECKING:
    from memdeck.core.storage.engine import Engine

log = logging.getLogger("memdeck.storage")


def normalised_name(name: str) -> str:
    """The name as :func:`records.check_principal` stores it (without refusing anything: a migration keeps
    every row, whatever its name)."""
    return unicodedata.normalize("NFC", name).strip()


def normalise_principals(store: Engine) -> dict[str, str]:
    """Rewrite every stored principal name that is not normalised; returns {old name: new name}."""
    renamed: dict[str, str] = {}
    for name in (*STORED_TIERS, HISTORY):
        if not store.has_table(name):
            continue
        tbl = store.db.open_table(name)
        names = pc.unique(tbl.to_lance().to_table(columns=["principal"])["principal"]).to_pylist()
        for old in names:
            new = normalised_name(old) if old else old
            if new and new != old:
                tbl.update(where=F.eq("principal", old), values={"principal": new})
                renamed[old] = new
    if not renamed:
        return renamed
    vault = Vault(store.layout.vault)
    for old, new in renamed.items():
        if vault.exists(old) and not vault.rename(old, new):
            log.warning(
                "the vault of %r could not be merged into %r's (both exist); its values stay "
                "revealable only under the old spelling",
                old,
                new,
            )
    _rename_in_traces(store, renamed)
    log.info("normalised %d principal name(s)", len(renamed))
    return renamed


def _rename_in_traces(store: Engine, renamed: dict[str, str]) -> None:
    from memdeck.core.storage.logdb import connection, log_path

    path = log_path(store)
    if not path.exists():
        return
    with connection(path, create=False) as con:
        if con is None:
            return
        tables = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
        for old, new in renamed.items():
            params: list[Any] = [new, old]
            for table in ("trace_candidates", "judgments", "feedback", "injections"):
                if table in tables:
                    con.execute(f"UPDATE {table} SET principal = ? WHERE principal = ?", params)
            if "traces" in tables:
                con.execute(
                    "UPDATE traces SET principals = list_transform(principals, lambda x: CASE WHEN x = ? THEN ? ELSE x END) "
                    "WHERE list_contains(principals, ?)",
                    [old, new, old],
                )
