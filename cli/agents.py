"""mcp, import, export, sync, consolidate, contradictions: the commands agents and their tooling use."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from memdeck.cli._common import add_json, open_store, principal, print_json, safe, short, tier
from memdeck.core.errors import IntegrityError, MemdeckError
from memdeck.core.filters import Scope


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("mcp", help="serve memories to agents over the Model Context Protocol (stdio)")
    p.add_argument(
        "--principal", type=principal, help="whose memories the agent may use (default: $MEMDECK_PRINCIPAL)"
    )
    p.add_argument(
        "--agent",
        type=principal,
        help="the agent's name, stamped on what it writes (default: $MEMDECK_AGENT)",
    )
    p.set_defaults(func=cmd_mcp)

    p = sub.add_parser(
        "import", help="import memories: memdeck JSONL, a folder of Markdown files, a mem0 export"
    )
    p.add_argument("path", help="a .jsonl file, a mem0 .json export, a .md file or a folder of them")
    p.add_argument(
        "--principal",
        type=principal,
        help="whose memories (required for Markdown; for JSONL only that principal's records)",
    )
    p.add_argument("--agent", type=principal, help="the writer recorded when a record names none")
    p.add_argument(
        "--format",
        default="auto",
        choices=["auto", "jsonl", "markdown", "mem0"],
        help="the input's format (default auto: from the file's name and content)",
    )
    p.add_argument("--tier", type=tier, help="tier for Markdown chunks and mem0 memories (default semantic)")
    p.add_argument("--progress", action="store_true", help="show progress even when stderr is not a terminal")
    add_json(p)
    p.set_defaults(func=cmd_import)

    p = sub.add_parser("export", help="export memories as JSONL (vectors are recomputed on import)")
    p.add_argument("path", help="output file ('-' for standard output)")
    p.add_argument("--principal", action="append", type=principal, help="only this principal (repeatable)")
    p.add_argument("--tier", type=tier, help="only this tier: episodic, semantic or procedural")
    p.add_argument("--state", choices=["active", "deprecated"], help="only this state (default: both)")
    add_json(p)
    p.set_defaults(func=cmd_export)

    p = sub.add_parser(
        "sync", help="re-index a folder of Markdown memory files (changed and removed chunks forgotten)"
    )
    p.add_argument("folder", help="the folder of Markdown files (MEMORY.md, memory/*.md, ...)")
    p.add_argument("--principal", required=True, type=principal, help="whose memories they are")
    p.add_argument("--agent", type=principal, help="the writer recorded on the chunks (default: import)")
    p.add_argument("--tier", type=tier, help="tier for the chunks (default semantic)")
    p.add_argument("--progress", action="store_true", help="show progress even when stderr is not a terminal")
    p.add_argument(
        "--dry-run", action="store_true", help="list what would be added, updated and removed; change nothing"
    )
    p.add_argument(
        "--yes",
        action="store_true",
        help="go ahead even when more than [sync] max_remove / max_remove_fraction would be forgotten",
    )
    add_json(p)
    p.set_defaults(func=cmd_sync)

    p = sub.add_parser(
        "consolidate", help="turn episodes into facts, merge near-duplicates, flag contradictions"
    )
    p.add_argument(
        "--principal",
        required=True,
        action="append",
        type=principal,
        help="whose memories (repeatable; one at a time)",
    )
    add_json(p)
    p.set_defaults(func=cmd_consolidate)

    p = sub.add_parser("contradictions", help="list facts flagged as contradicting each other")
    p.add_argument("--principal", action="append", type=principal, help="only this principal's (repeatable)")
    add_json(p)
    p.set_defaults(func=cmd_contradictions)


def cmd_mcp(args: argparse.Namespace) -> int:
    from memdeck.cli._common import warn_unknown_settings
    from memdeck.cli.mcp import serve
    from memdeck.core.config import load_settings

    # A bad value stops the server here, with one line; unknown keys are warnings. Both go to stderr, which
    # MCP clients keep in their server log.
    warn_unknown_settings(load_settings())
    return serve(args.principal, args.agent, args.store)


def _problem(where: str, what: str) -> None:
    print(f"memdeck: {safe(where)}: {safe(what)}; skipped", file=sys.stderr)


def _progress(args: argparse.Namespace, label: str, unit: str):
    from memdeck.cli._common import TextProgress

    if args.progress or sys.stderr.isatty():
        return TextProgress(label, unit)
    return None


def _finish(args: argparse.Namespace, report) -> int:
    if args.json:
        print_json(report.to_json())
    else:
        print(report.summary())
    if report.failed_receipts:
        ids = ", ".join(r[:12] for r in report.failed_receipts)
        raise IntegrityError(
            f"{len(report.failed_receipts)} forget(s) of replaced or removed memories finished with failed checks "
            f"(receipts {ids}); see `memdeck receipts show ID`, then `memdeck forget --recheck ID`"
        )
    wrote = report.imported + report.unchanged + report.replaced + report.removed + report.skipped_low_value
    if report.malformed and not wrote and not report.skipped_other_principal:
        print(
            f"memdeck: error: nothing in {report.source} could be imported ({report.malformed} malformed)",
            file=sys.stderr,
        )
        return 2
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    from memdeck.core.exchange import detect_format, import_path

    path = Path(args.path).expanduser()
    if not path.exists():
        raise MemdeckError(f"no such file or folder: {path}")
    fmt = detect_format(path) if args.format == "auto" else args.format
    unit = {"jsonl": "bytes", "mem0": "records", "markdown": "files"}[fmt]
    if fmt == "markdown" and not args.principal:
        raise MemdeckError("importing Markdown files needs --principal (whose memories they are)")
    store = open_store(args, create=True)
    bar = _progress(args, "importing", unit)
    try:
        report = import_path(
            store.engine,
            path,
            principal=args.principal,
            agent=args.agent,
            fmt=fmt,
            tier=args.tier,
            on_problem=_problem,
            progress=bar,
        )
    finally:
        if bar is not None:
            bar.close()
    return _finish(args, report)


def cmd_sync(args: argparse.Namespace) -> int:
    from memdeck.core.exchange import sync_markdown

    if not Path(args.folder).expanduser().is_dir():
        raise MemdeckError(f"no such folder: {args.folder}")
    store = open_store(args, create=True)
    bar = _progress(args, "syncing", "files")
    try:
        report = sync_markdown(
            store.engine,
            args.folder,
            args.principal,
            agent=args.agent,
            tier=args.tier,
            on_problem=_problem,
            progress=bar,
            dry_run=args.dry_run,
            confirm=args.yes,
        )
    finally:
        if bar is not None:
            bar.close()
    if report.dry_run and not args.json:
        for step in report.plan:
            print(
                f"would {step['action']}: {safe(step['where'] or '')}"
                + (f"  {step['id']}" if step["id"] else "")
            )
    return _finish(args, report)


def cmd_export(args: argparse.Namespace) -> int:
    from memdeck.core.exchange import export_jsonl

    store = open_store(args)
    scope = Scope.of(*args.principal) if args.principal else Scope.everyone()
    if args.path == "-":
        count = export_jsonl(store.engine, sys.stdout, scope, tier=args.tier, state=args.state)
        print(f"memdeck: exported {count} memories", file=sys.stderr)
        return 0
    count = export_jsonl(store.engine, args.path, scope, tier=args.tier, state=args.state)
    if args.json:
        print_json({"path": str(Path(args.path).resolve()), "count": count})
    else:
        print(f"exported {count} memories to {args.path}")
    return 0


def cmd_consolidate(args: argparse.Namespace) -> int:
    from memdeck.core.consolidate import consolidate, report_line

    store = open_store(args)
    reports = [consolidate(store.engine, p) for p in dict.fromkeys(args.principal)]
    if args.json:
        print_json(reports[0].to_json() if len(reports) == 1 else [r.to_json() for r in reports])
    else:
        for report in reports:
            print(report_line(report))
    return 0


def cmd_contradictions(args: argparse.Namespace) -> int:
    from memdeck.core.consolidate import contradictions

    store = open_store(args)
    scope = Scope.of(*args.principal) if args.principal else Scope.everyone()
    found = contradictions(store.engine, scope)
    if args.json:
        print_json([c.to_json() for c in found])
        return 0
    if not found:
        print("no contradictions")
    for c in found:
        print(f"{safe(c.principal)}: {safe(c.summary)}  [{c.key}]")
        print(f"   {c.a_id}  {short(c.a_text, 70)}")
        print(f"   {c.b_id}  {short(c.b_text, 70)}")
    if found:
        print(
            f"{len(found)} contradiction{'s' if len(found) != 1 else ''} to review "
            "(memdeck review keep-left|keep-right|merge|dismiss KEY)"
        )
    return 0
