"""`memdeck maintain`: finish interrupted purges, evict expired memories, compact, keep indices up."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from memdeck.cli._common import add_json, open_store, print_json
from memdeck.core.errors import MemdeckError
from memdeck.core.textsafe import json_safe

if TYPE_CHECKING:
    from memdeck.core.store import Store


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "maintain",
        help="evict expired memories (TTL), compact tables, update indices",
        description=(
            "Finish purges a killed process left half done, forget memories past their tier's ttl_days "
            "(each eviction signs a receipt with reason 'ttl'), merge small fragments and fold new rows into "
            "the indices. Safe to run while the app or agents use the store."
        ),
    )
    p.add_argument("--no-evict", action="store_true", help="skip TTL eviction")
    p.add_argument(
        "--watch",
        action="store_true",
        help="keep running: the maintenance scheduler on the intervals in [maintenance] (a daemon)",
    )
    add_json(p)
    p.set_defaults(func=cmd_maintain)


def cmd_maintain(args: argparse.Namespace) -> int:
    from memdeck.core.maintenance.maintain import maintain

    store = open_store(args)
    if args.watch:
        return _watch(store, args.json)
    progress = None if args.json or not sys.stderr.isatty() else (lambda m: print(f"  {m}…", file=sys.stderr))
    report = maintain(store.engine, evict=not args.no_evict, progress=progress)
    if args.json:
        print_json(report)
    else:
        for r in report["recovered"]:
            print(
                f"finished an interrupted purge: receipt {r['receipt_id']} ({r['deleted']} memories of {r['principal']})"
            )
        evicted = sum(r["deleted"] for r in report["evicted"])
        print(f"evicted {evicted} expired memories ({len(report['evicted'])} receipts)")
        for r in report["evicted"]:
            print(f"  receipt {r['receipt_id']}: {r['deleted']} of {r['principal']}, {r['outcome']}")
        for name, entry in report["tables"].items():
            if "rows" in entry:
                print(f"{name:<11} {entry['rows']:>9} rows in {entry['fragments']} fragments")
        print(f"done in {report['seconds']:.1f}s")
    failed = [
        r["receipt_id"] for r in report["evicted"] + report["recovered"] if r.get("outcome") != "verified"
    ]
    if report["errors"]:
        raise MemdeckError(f"maintenance incomplete: {'; '.join(report['errors'])}")
    if failed:
        raise MemdeckError(
            f"{len(failed)} purge(s) finished with failed checks: receipts {', '.join(failed)}"
        )
    return 0


def _watch(store: Store, as_json: bool) -> int:
    """Run the scheduler in the foreground until interrupted; one line per task run."""
    import json
    import threading

    from memdeck.core.maintenance.scheduler import Scheduler, TaskStatus

    def show(task: TaskStatus) -> None:
        if as_json:
            print(json_safe(json.dumps(task.to_json(), ensure_ascii=False)), flush=True)
        else:
            stamp = task.to_json()["last_run"]
            print(f"{stamp}  {task.name:<9} {'ok ' if task.ok else 'FAILED'} {task.summary}", flush=True)

    scheduler = Scheduler(store.engine, on_change=show)
    if not scheduler.enabled:
        raise MemdeckError("maintenance is disabled in the config ([maintenance] enabled = false)")
    scheduler.start()
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        scheduler.stop()
    return 0
