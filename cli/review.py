"""review: the review queue (contradictions, near-duplicates, TTL due, stale, low-trust writers), and the
decisions the app's Review screen makes with one key: keep-left, keep-right, merge, dismiss."""

from __future__ import annotations

import argparse
from typing import Any

from memdeck.cli._common import add_json, open_store, print_json, safe, short
from memdeck.core.filters import Scope

ACTIONS = {
    "keep-left": "keep the left memory of a pair; the right is deprecated, superseded by it",
    "keep-right": "keep the right memory of a pair; the left is deprecated, superseded by it",
    "merge": "merge a pair into its older memory (the newer is deprecated, superseded by it)",
    "dismiss": "leave an item out of the queue from now on",
}


def register(sub: Any) -> None:
    p = sub.add_parser(
        "review", help="what to review: contradictions, near-duplicates, TTL due, stale, low trust, routines"
    )
    p.add_argument("--principal", action="append", help="whose memories (repeatable; default everyone's)")
    p.add_argument("--kind", action="append", help="only these kinds (repeatable)")
    add_json(p)
    p.set_defaults(func=cmd_review)
    actions = p.add_subparsers(
        dest="review_action",
        metavar="{keep-left,keep-right,merge,dismiss} ITEM",
        help="decide one item (ITEM: its key, as `memdeck review --json` lists it)",
    )
    for name, helptext in ACTIONS.items():
        a = actions.add_parser(name, help=helptext, description=helptext)
        a.add_argument(
            "item", metavar="ITEM", help="the item's key, e.g. contradiction:sem_...:sem_... or stale:epi_..."
        )
        # SUPPRESS: `memdeck review --json merge ITEM` keeps the --json given before the action.
        a.add_argument(
            "--principal",
            action="append",
            default=argparse.SUPPRESS,
            help="whose memories (repeatable; default everyone's)",
        )
        a.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print JSON")
        a.set_defaults(func=cmd_review_action, review_action=name)


def cmd_review(args: argparse.Namespace) -> int:
    from memdeck.core.consolidate.review import KINDS, build_queue

    store = open_store(args)
    scope = Scope.of(*args.principal) if args.principal else Scope.everyone()
    queue = build_queue(store.engine, scope, tuple(args.kind) if args.kind else KINDS)
    items = queue.items
    if args.json:
        print_json([i.to_json() for i in items])
        return 0
    if not items:
        print("nothing to review")
    for item in items:
        print(f"{item.kind:<15} {safe(item.principal)}: {safe(item.reason)}  [{safe(item.key)}]")
        print(f"   {item.left['id']}  {short(item.left['text'], 70)}")
        if item.right:
            print(f"   {item.right['id']}  {short(item.right['text'], 70)}")
    if queue.counts_line():
        print("to review: " + queue.counts_line())
    return 0


def cmd_review_action(args: argparse.Namespace) -> int:
    from memdeck.core.consolidate.review import decide

    store = open_store(args)
    scope = Scope.of(*args.principal) if args.principal else Scope.everyone()
    done = decide(store.engine, args.item, args.review_action, scope)
    if args.json:
        print_json(done)
    elif done["action"] == "dismiss":
        print(f"dismissed {safe(done['key'])}: it is left out of the queue from now on")
    else:
        print(
            f"kept {done['kept']}; deprecated {done['deprecated']}, superseded by it "
            f"(undo: memdeck undeprecate {done['deprecated']})"
        )
    return 0
