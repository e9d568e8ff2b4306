"""doctor: check a store for damaged data files, rows whose text no longer matches its hash, bad receipts."""

from __future__ import annotations

import argparse
import sys

from memdeck.cli._common import add_json, open_store, print_json

EXIT_PROBLEMS = 5  # as `receipts verify`: verification failed


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "doctor",
        help="check the store: every table scans, every row matches its content hash",
        description="Read every row of every table and check each row's text against its content_sha256; "
        "check indices and the receipt chain. Exit 0 when healthy, 5 when a problem is found.",
    )
    p.add_argument("--tier", action="append", help="check only this table (repeatable; default all)")
    p.add_argument("--no-receipts", action="store_true", help="skip the receipt chain check")
    add_json(p)
    p.set_defaults(func=cmd_doctor)


def cmd_doctor(args: argparse.Namespace) -> int:
    from memdeck.core.errors import MemdeckError
    from memdeck.core.maintenance.doctor import diagnose
    from memdeck.core.records import HISTORY, STORED_TIERS

    tables = None
    if args.tier:
        for t in args.tier:
            if t not in (*STORED_TIERS, HISTORY):
                raise MemdeckError(f"unknown table {t!r}; use one of: {', '.join((*STORED_TIERS, HISTORY))}")
        tables = list(dict.fromkeys(args.tier))
    store = open_store(args)
    report = diagnose(store.engine, tables=tables, receipts=not args.no_receipts, quiet=True)
    engine = store.engine
    model = {"name": engine.embedding_model, "dim": engine.dim, "available": engine.embedder.available}
    if args.json:
        print_json({**report.to_json(), "model": model})
    else:
        for line in report.lines():
            print(line)
        state = "loads" if model["available"] else f"cannot load: {engine.embedder.error}"
        print(f"model: {model['name']} ({model['dim']} d), {state}")
    if not report.ok:
        print(f"memdeck: error: {len(report.problems)} problem(s) found in {report.store}", file=sys.stderr)
        return EXIT_PROBLEMS
    return 0
