"""`memdeck forget ID ... --reason R` and `memdeck forget --principal P --reason R`."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from memdeck.cli._common import add_json, open_store, print_json, safe, short
from memdeck.core.errors import IntegrityError, MemdeckError
from memdeck.core.filters import Scope

if TYPE_CHECKING:
    from memdeck.core.receipts import Receipt


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "forget",
        help="purge memories for good and sign a deletion receipt",
        description=(
            "Remove memories from every version, index, edit history and trace log, together with the facts "
            "derived only from them; check that nothing readable remains and sign a receipt. With IDs, "
            "--principal limits which memories may be named; with no IDs, --principal forgets everything "
            "of that principal. Exits 5 if a check failed (the receipt records which)."
        ),
    )
    p.add_argument("ids", nargs="*", metavar="ID", help="memory ids to forget")
    p.add_argument("--reason", help="why (kept in the receipt); required unless --recheck")
    p.add_argument(
        "--recheck",
        metavar="RECEIPT",
        help="run a receipt's checks again (after removing what they found) and sign a follow-up receipt",
    )
    p.add_argument("--principal", help="the principal whose memories these are (required with no IDs)")
    p.add_argument(
        "--dry-run", action="store_true", help="show what would be removed and changed; change nothing"
    )
    add_json(p)
    p.set_defaults(func=cmd_forget)


def cmd_forget(args: argparse.Namespace) -> int:
    if args.recheck is not None:
        if args.ids or args.principal or args.dry_run or args.reason:
            raise MemdeckError("--recheck RECEIPT takes no ids, --principal, --reason or --dry-run")
        return _recheck(args)
    if not args.ids and not args.principal:
        raise MemdeckError(
            "give memory ids to forget, or --principal P to forget everything of one principal"
        )
    if not args.reason or not args.reason.strip():
        raise MemdeckError("--reason is required: say why (it is kept in the deletion receipt)")
    store = open_store(args)
    scope = Scope.of(args.principal) if args.principal else Scope.everyone()
    if args.dry_run:
        plan = store.plan_forget(args.ids, scope) if args.ids else store.plan_forget_principal(args.principal)
        if args.json:
            print_json(plan.to_json())
        else:
            _print_plan(plan)
        return 0
    progress = None if args.json or not sys.stderr.isatty() else _progress
    if args.ids:
        receipt = store.forget(args.ids, args.reason, scope, progress=progress)
    else:
        receipt = store.forget_principal(args.principal, args.reason, progress=progress)
    return _report(args, store, receipt, "the purge finished but")


def _recheck(args: argparse.Namespace) -> int:
    from memdeck.core.forget.recheck import recheck

    store = open_store(args)
    progress = None if args.json or not sys.stderr.isatty() else _progress
    receipt = recheck(store.engine, args.recheck, progress=progress)
    return _report(args, store, receipt, f"rechecked receipt {receipt['rechecks']}:")


def _report(args: argparse.Namespace, store: Any, receipt: Receipt, lead: str) -> int:
    from memdeck.core.receipts import ReceiptBook

    failed = [c["name"] for c in receipt.get("checks", []) if not c.get("passed")]
    if args.json:
        print_json(receipt)
    else:
        path = ReceiptBook(store.root).path_of(receipt["receipt_id"])
        _print_receipt(receipt, str(path))
    if failed:
        rid = receipt["receipt_id"]
        raise IntegrityError(
            f"{lead} {len(failed)} check(s) failed: {', '.join(failed)} (receipt {rid} records them; see "
            f"`memdeck receipts show {rid[:12]}`, remove what they found, then `memdeck forget --recheck {rid[:12]}`)"
        )
    return 0


def _progress(message: str) -> None:
    print(f"  {message}…", file=sys.stderr)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _memories(n: int) -> str:
    return f"{n} {'memory' if n == 1 else 'memories'}"


def _print_plan(plan: Any) -> None:
    what = "everything of" if plan.whole_principal else "from"
    print(f"would forget {_memories(len(plan.deleted))} {what} {plan.principal}")
    for m in plan.deleted[:50]:
        print(f"  - {m.id}  {m.tier:<10} {short(m.text, 60)}")
    if len(plan.deleted) > 50:
        print(f"  … and {len(plan.deleted) - 50} more")
    for m, why in plan.cascade_delete:
        print(f"  - {m.id}  {m.tier:<10} {short(m.text, 40)}  ({why})")
    for m, why in plan.cascade_update:
        print(f"  ~ {m.id}  {m.tier:<10} {short(m.text, 40)}  ({why})")
    if plan.history_versions:
        print(f"  and {_plural(plan.history_versions, 'earlier version')} from the edit history")


def _print_receipt(receipt: Receipt, path: str) -> None:
    gone = int(receipt.get("cascade_deleted") or 0)
    changed = int(receipt.get("cascade_updated") or 0)
    extra = (f" (+{gone} derived)" if gone else "") + (f", {changed} updated" if changed else "")
    if receipt.get("trigger") == "recheck":
        print(
            f"rechecked receipt {safe(str(receipt.get('rechecks')))}: {_memories(len(receipt.get('deleted', [])))} "
            f"of {safe(receipt['principal'])}; follow-up receipt {receipt['receipt_id']}"
        )
    else:
        print(
            f"forgot {_memories(len(receipt.get('deleted', [])))}{extra} of {safe(receipt['principal'])}; "
            f"receipt {receipt['receipt_id']}"
        )
    print(f"  {path}")
    checks = receipt.get("checks", [])
    passed = sum(1 for c in checks if c.get("passed"))
    print(f"  checks: {passed}/{len(checks)} passed; outcome: {receipt.get('outcome', '?')}")
    for c in checks:
        if not c.get("passed"):
            print(f"  FAILED {c['name']}: {c.get('detail', '')}")
