"""`memdeck expire ID --in 7d | --at TIME | --never`: set or clear a memory's own expiry."""

from __future__ import annotations

import argparse

from memdeck.cli._common import add_json, memory_id, open_store, principal, print_json, scope_of
from memdeck.core.errors import MemdeckError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "expire",
        help="set when a memory expires (hidden at once, purged with a receipt by maintenance)",
    )
    p.add_argument("ids", nargs="+", metavar="ID", type=memory_id, help="the memories' ids")
    p.add_argument("--in", dest="expires_in", help="a duration from now, e.g. 90s, 30m, 12h, 7d, 2w")
    p.add_argument("--at", dest="expires_at", help="an ISO 8601 time, e.g. 2027-01-01 or 2027-01-01T09:00Z")
    p.add_argument(
        "--never", action="store_true", help="clear the memory's own expiry (its tier's TTL still applies)"
    )
    p.add_argument(
        "--principal", action="append", type=principal, help="only if they are this principal's (repeatable)"
    )
    add_json(p)
    p.set_defaults(func=cmd_expire)


def cmd_expire(args: argparse.Namespace) -> int:
    from memdeck.core.storage.expiry import expiry_time

    given = sum(
        x is not None and x is not False for x in (args.expires_in, args.expires_at, args.never or None)
    )
    if given != 1:
        raise MemdeckError("give exactly one of --in, --at or --never")
    when = None if args.never else expiry_time(args.expires_in, args.expires_at)
    store = open_store(args)
    scope = scope_of(args)
    from memdeck.core.records import iso

    out = []
    for mem_id in args.ids:
        memory = store.set_expiry(mem_id, when, scope)
        out.append({"id": memory.id, "expires_at": iso(memory.expires_at)})
    if args.json:
        print_json(out)
    else:
        for row in out:
            print(f"{row['id']}: expires {row['expires_at'] or 'by its tier TTL only'}")
    return 0
