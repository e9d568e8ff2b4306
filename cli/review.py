"""review: the review queue (contradictions, near-duplicates, TTL due, stale, low-trust writers)."""

from __future__ import annotations

import argparse
from typing import Any

from memdeck.cli._common import add_json, open_store, print_json, short
from memdeck.core.filters import Scope


def register(sub: Any) -> None:
    p = sub.add_parser("review", help="what to review: contradictions, near-duplicates, TTL due, stale, low trust")
    p.add_argument("--principal", action="append", help="whose memories (repeatable; default everyone's)")
    p.add_argument("--kind", action="append", help="only these kinds (repeatable)")
    add_json(p)
    p.set_defaults(func=cmd_review)


def cmd_review(args: argparse.Namespace) -> int:
    from memdeck.core.consolidate.review import KINDS, review_queue

    store = open_store(args)
    scope = Scope.of(*args.principal) if args.principal else Scope.everyone()
    items = review_queue(store, scope, tuple(args.kind) if args.kind else KINDS)
    if args.json:
        print_json([i.to_json() for i in items])
        return 0
    if not items:
        print("nothing to review")
    for item in items:
        print(f"{item.kind:<15} {item.principal}: {item.reason}")
        print(f"   {item.left['id']}  {short(item.left['text'], 70)}")
        if item.right:
            print(f"   {item.right['id']}  {short(item.right['text'], 70)}")
    return 0
