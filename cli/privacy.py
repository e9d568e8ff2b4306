"""memdeck reveal: show a memory with its redaction tokens replaced by the originals, for its principal."""

from __future__ import annotations

import argparse

from memdeck.cli._common import add_json, open_store, print_json
from memdeck.core.privacy.reveal import reveal_memory


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("reveal", help="show a memory's redacted values (explicit, one principal)")
    p.add_argument("id")
    p.add_argument("--principal", required=True, help="the memory's principal (must match)")
    add_json(p)
    p.set_defaults(func=cmd_reveal)


def cmd_reveal(args: argparse.Namespace) -> int:
    store = open_store(args)
    shown = reveal_memory(store, args.id, args.principal)
    if args.json:
        print_json(shown.to_json())
    else:
        print(shown.text)
    return 0
