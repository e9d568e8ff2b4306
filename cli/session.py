"""`memdeck session close ID --principal P`: close a session (its episodes closed, consolidation queued)."""

from __future__ import annotations

import argparse
from typing import Any

from memdeck.cli._common import add_json, open_store, principal, print_json


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("session", help="close an agent session (queues its consolidation)")
    inner = p.add_subparsers(dest="session_command", required=True, metavar="close")
    c = inner.add_parser("close", help="mark a session's episodes closed and queue its consolidation")
    c.add_argument("id", help="the session id")
    c.add_argument("--principal", required=True, type=principal, help="whose session")
    c.add_argument(
        "--now", action="store_true", help="consolidate now instead of leaving it to the scheduler"
    )
    add_json(c)
    c.set_defaults(func=cmd_close)


def cmd_close(args: argparse.Namespace) -> int:
    store = open_store(args)
    out: dict[str, Any] = dict(store.close_session(args.id, args.principal))
    if args.now:
        from memdeck.core.maintenance.scheduler import Scheduler

        task = Scheduler(store.engine).run("sessions")
        out["consolidation"] = task.to_json()
    if args.json:
        print_json(out)
    else:
        print(
            f"closed session {out['session']} ({out['closed']} of {out['episodes']} episodes were open); "
            + (out["consolidation"]["summary"] if args.now else "consolidation queued")
        )
    return 0
