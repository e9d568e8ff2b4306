"""memdeck reveal: a memory with its redaction tokens replaced by the originals, for its principal;
memdeck redact --rescan: today's rules over what is already stored."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from memdeck.cli._common import add_json, memory_id, open_store, principal, print_json, safe
from memdeck.core.errors import IntegrityError, MemdeckError

if TYPE_CHECKING:
    from memdeck.core.forget.rescan import RescanPreview


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("reveal", help="show a memory's redacted values (explicit, one principal)")
    p.add_argument("id", type=memory_id, help="the memory's id")
    p.add_argument("--principal", required=True, type=principal, help="the memory's principal (must match)")
    add_json(p)
    p.set_defaults(func=cmd_reveal)
    register_redact(sub)


def cmd_reveal(args: argparse.Namespace) -> int:
    store = open_store(args)
    from memdeck.core.privacy.reveal import reveal_memory

    shown = reveal_memory(store.engine, args.id, args.principal)
    if args.json:
        print_json(shown.to_json())
    else:
        print(safe(shown.text, keep_newlines=True))
    return 0


def register_redact(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "redact",
        help="run today's redaction rules over what is stored (--rescan)",
        description=(
            "With --rescan: run today's redaction rules over every stored memory (text, name, tags, metadata, "
            "events, derived facts, steps) and the edit history, replace what older rules missed by the "
            "principal's stable tokens (the originals go into the vault), re-embed the changed memories, purge "
            "the old values from every version, index and the trace log, check by reading every file back and "
            "sign one receipt per principal. --dry-run lists ids, kinds and counts and writes nothing. "
            "Exits 5 if a check failed (the receipt records which)."
        ),
    )
    p.add_argument("--rescan", action="store_true", help="re-scan the stored memories")
    p.add_argument("--principal", type=principal, help="only this principal's memories")
    p.add_argument("--dry-run", action="store_true", help="list what would change; write nothing")
    add_json(p)
    p.set_defaults(func=cmd_redact)


def cmd_redact(args: argparse.Namespace) -> int:
    from memdeck.core.forget.rescan import plan_rescan, rescan

    if not args.rescan:
        raise MemdeckError("memdeck redact needs --rescan (redaction of new writes is always on)")
    store = open_store(args)
    if args.dry_run:
        summary = plan_rescan(store.engine, args.principal).to_json()
        summary["dry_run"] = True
    else:
        progress = None if args.json or not sys.stderr.isatty() else _progress
        summary = rescan(store.engine, args.principal, progress=progress)
    if args.json:
        print_json(summary)
    else:
        _print_summary(summary, dry_run=args.dry_run)
    if summary.get("outcome") == "checks_failed":
        raise IntegrityError("re-scan finished but a check failed; see the receipt's checks")
    return 0


def _progress(message: str) -> None:
    print(f"  {message}…", file=sys.stderr)


def _print_summary(summary: RescanPreview, *, dry_run: bool) -> None:
    counts = summary["counts"]
    kinds = ", ".join(f"{k} {v}" for k, v in counts["kinds"].items()) or "none"
    verb = "would redact" if dry_run else "redacted"
    print(
        f"{verb} {counts['values']} values ({kinds}) in {counts['memories']} memories and "
        f"{counts['history_versions']} earlier versions"
    )
    for m in summary["memories"]:
        found = ", ".join(f"{k} {v}" for k, v in m["kinds"].items())
        print(f"  {m['id']}  {m['tier']:<10} {m['principal']:<12} {found}  ({', '.join(m['columns'])})")
    for h in summary["history"]:
        found = ", ".join(f"{k} {v}" for k, v in h["kinds"].items())
        print(f"  {h['memory_id']} v{h['version']}  history    {h['principal']:<12} {found}")
    if dry_run:
        print("nothing was changed (dry run)")
        return
    if summary.get("receipts"):
        print(f"outcome: {summary['outcome']}; receipts: {', '.join(summary['receipts'])}")
    else:
        print("nothing to re-scan: no stored value is missed by today's rules")
