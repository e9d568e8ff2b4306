"""What forgetting takes from the redaction vaults: the values only forgotten memories held.

A purge prunes (or, for a whole principal, destroys) the vault of the machine it runs on. A store shared
through a bucket has one vault per machine, so every other machine drops the same values when it sees the
purge's receipt in the bucket (:func:`memdeck.core.forget.bucket.catch_up`), with :func:`drop_forgotten`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, NotRequired, TypedDict

import pyarrow as pa

from memdeck.core import filters as F
from memdeck.core.errors import MemdeckError
from memdeck.core.privacy.vault import OPERATOR_VAULT, Vault
from memdeck.core.records import tokens_in
from memdeck.core.storage.tables import dataset, table_names

if TYPE_CHECKING:
    from memdeck.core.storage.engine import Engine


def surviving_tokens(store: Engine, principal: str) -> set[str]:
    """Every vault token that a stored row of ``principal`` (any tier, or the edit history) holds."""
    found: set[str] = set()
    for name in table_names(store):
        ds = dataset(store, name)
        cols = [
            f.name
            for f in ds.schema
            if f.name != "vector"
            and (
                pa.types.is_string(f.type)
                or pa.types.is_large_string(f.type)
                or pa.types.is_list(f.type)
                or pa.types.is_large_list(f.type)
            )
        ]
        for batch in ds.to_batches(columns=cols, filter=F.eq("principal", principal)):
            for col in batch.columns:
                for value in col.to_pylist():
                    if value:
                        found |= tokens_in(
                            value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
                        )
    return found


def prune_operator_vault(store: Engine, values: set[str]) -> int | str | None:
    """Remove these values from the operator's vault too (a whole-store recall that typed one: the trace
    log's redacted queries resolve there), so a forgotten value is revealed nowhere. The number removed,
    ``"damaged"`` when that vault cannot be read (``memdeck doctor`` names it), None when there was none."""
    vault = Vault(store.layout.vault)
    if not values or not vault.exists(OPERATOR_VAULT):
        return None
    try:
        typed = {t for t, v in vault.tokens(OPERATOR_VAULT).items() if v in values}
    except MemdeckError:
        return "damaged"
    return vault.prune(OPERATOR_VAULT, typed) if typed else None


class VaultDrop(TypedDict):
    """What :func:`drop_forgotten` did to the vault: ``none``, ``damaged``, ``destroyed`` (with how many
    values it held when it could be read), ``kept`` or ``pruned`` (with how many values went)."""

    vault: str
    tokens: NotRequired[int]
    pruned: NotRequired[int]


def drop_forgotten(
    store: Engine,
    principal: str,
    *,
    whole: bool,
    forgotten: Callable[[str], bool] | None = None,
) -> VaultDrop:
    """Drop from this machine's vault of ``principal`` what a purge on another machine forgot.

    ``whole``: the principal was forgotten; the vault is destroyed (crypto-shredded) when no row of theirs
    is left, else every value no remaining row uses goes (rows written since the purge keep theirs). Else
    the tokens ``forgotten`` accepts go, unless a remaining row still uses one."""
    vault = Vault(store.layout.vault)
    if not vault.exists(principal):
        return {"vault": "none"}
    survivors = surviving_tokens(store, principal)
    try:
        mine = vault.tokens(principal)
    except MemdeckError:  # damaged: nobody can read it; a whole principal's is destroyed all the same
        if whole and not survivors:
            vault.destroy(principal)
            store.reset_redactor()
            return {"vault": "destroyed"}
        return {"vault": "damaged"}
    if whole and not survivors:
        prune_operator_vault(store, set(mine.values()))
        vault.destroy(principal)
        store.reset_redactor()  # it may hold the destroyed key in memory
        return {"vault": "destroyed", "tokens": len(mine)}
    gone = {t for t in mine if t not in survivors and (whole or (forgotten is not None and forgotten(t)))}
    if not gone:
        return {"vault": "kept", "pruned": 0}
    prune_operator_vault(store, {mine[t] for t in gone})
    removed = vault.prune(principal, gone)
    store.reset_redactor()  # its vault holds the pruned values in memory
    return {"vault": "pruned", "pruned": removed}
