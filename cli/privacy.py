"""memdeck reveal: show a memory with its redaction tokens replaced by the originals, for its principal."""

from __future__ import annotations

import argparse

from memdeck.cli._common import add_json, open_store, print_json
from memdeck.core.filters import Scope


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("reveal", help="show a memory's redacted values (explicit, one principal)")
    p.add_argument("id")
    p.add_argument("--principal", required=True, help="the memory's principal (must match)")
    add_json(p)
    p.set_defaults(func=cmd_reveal)


def reveal_memory(store: object, memory_id: str, principal: str) -> dict[str, object]:
    """The memory's text with this principal's tokens replaced; other principals' tokens stay tokens."""
    from memdeck.core.privacy import Vault

    memory = store.get(memory_id, Scope.of(principal))  # type: ignore[attr-defined]
    vault = Vault(store.layout.vault)  # type: ignore[attr-defined]
    if not vault.exists(principal):
        return {"id": memory.id, "principal": principal, "text": memory.text, "revealed": 0}
    text = vault.reveal(principal, memory.text)
    revealed = sum(1 for token in vault.tokens(principal) if token in memory.text)
    return {"id": memory.id, "principal": principal, "text": text, "revealed": revealed}


def cmd_reveal(args: argparse.Namespace) -> int:
    store = open_store(args)
    shown = reveal_memory(store, args.id, args.principal)
    if args.json:
        print_json(shown)
    else:
        print(shown["text"])
    return 0
