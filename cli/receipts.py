"""`memdeck receipts list | show ID | verify FILE_OR_ID | verify --all | export ID DEST`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memdeck.cli._common import safe
from memdeck.core.errors import IntegrityError, MemdeckError, NotFound
from memdeck.core.paths import resolve_store
from memdeck.core.textsafe import json_safe

if TYPE_CHECKING:
    from memdeck.core.receipts import Receipt, ReceiptBook, ReceiptRow, VerifyReport


def register(subparsers: Any) -> None:
    """Add the `receipts` command and its subcommands to the main parser's subparsers."""
    parser = subparsers.add_parser(
        "receipts",
        help="list, show, verify and export signed deletion receipts",
        description="Signed deletion receipts: one per forget, chained so that removing one shows.",
    )
    sub = parser.add_subparsers(dest="receipts_command", metavar="{list,show,verify,export}")
    sub.required = True

    p = sub.add_parser("list", help="list the receipts in chain order")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("show", help="show one receipt")
    p.add_argument("id", metavar="ID", help="receipt id or a unique prefix of it")
    form = p.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true", help="print the signed receipt JSON")
    form.add_argument("--markdown", action="store_true", help="print the Markdown summary (the default)")
    p.set_defaults(func=cmd_show)

    p = sub.add_parser(
        "verify",
        help="verify a receipt's signature and chain link, or the whole chain with --all",
        description=(
            "Prints each receipt's signature result and outcome. Exit 0 when every signature, the chain and "
            "every receipt's outcome are good; otherwise one line per problem on stderr and exit 5 (a receipt "
            "whose purge's checks failed counts, unless a later `memdeck forget --recheck` verified it)."
        ),
    )
    p.add_argument(
        "target", metavar="FILE_OR_ID", nargs="?", help="a receipt file, or a receipt id in the store"
    )
    p.add_argument("--all", action="store_true", help="verify every receipt and the chain between them")
    p.add_argument(
        "--public-key",
        metavar="BASE64",
        help="the signer's Ed25519 public key (a receipt's public_key): the receipt must be signed with it",
    )
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=cmd_verify)

    p = sub.add_parser("export", help="write a receipt to a file or folder")
    p.add_argument("id", metavar="ID", help="receipt id or a unique prefix of it")
    p.add_argument("dest", metavar="DEST", help="file or existing folder to write to")
    p.add_argument(
        "--format",
        choices=("json", "md"),
        default=None,
        help="json: the signed receipt (default; .md destinations default to md); md: a summary",
    )
    p.add_argument("--json", action="store_true", help="print the written path as JSON")
    p.set_defaults(func=cmd_export)


def _book(args: argparse.Namespace) -> ReceiptBook:
    from memdeck.core.receipts import ReceiptBook

    return ReceiptBook(resolve_store(getattr(args, "store", None)))


def _print_json(value: Any) -> None:
    print(json_safe(json.dumps(value, indent=2, ensure_ascii=False)))


THIS_MACHINE = "this machine"


def _rows(book: ReceiptBook) -> list[ReceiptRow]:
    """This machine's receipts, then, on a store shared through a bucket, the other machines' receipts from
    the store's chain there; each says who issued it and its outcome."""
    from memdeck.core.receipts import team
    from memdeck.core.receipts.verify import outcomes_of

    rows = book.list()
    for r in rows:
        r["issued_by"] = THIS_MACHINE
    objects = team.objects_for(book.root)
    if objects is not None:
        mine = {r["receipt_id"] for r in rows}
        shared = team.shared_receipts(objects)
        outcomes = {o["receipt_id"]: o for o in outcomes_of([r for _, r, _ in shared])}
        for _, receipt, machine in shared:
            rid = str(receipt.get("receipt_id"))
            if rid in mine:
                if outcomes[rid]["settled_by"]:  # settled by a recheck another machine made
                    next(r for r in rows if r["receipt_id"] == rid)["settled_by"] = outcomes[rid][
                        "settled_by"
                    ]
                continue
            rows.append(
                {
                    "receipt_id": rid,
                    "issued_at": receipt.get("issued_at"),
                    "principal": receipt.get("principal"),
                    "reason": receipt.get("reason"),
                    "n_deleted": len(receipt.get("deleted") or []),
                    "n_cascade": len(receipt.get("cascade") or []),
                    "all_checks_passed": not outcomes[rid]["failed"],
                    "outcome": outcomes[rid]["outcome"],
                    "settled_by": outcomes[rid]["settled_by"],
                    "path": None,
                    "issued_by": machine or "another machine",
                }
            )
    return rows


def _get(book: ReceiptBook, receipt_id: str) -> tuple[Receipt, str]:
    """(receipt, issued by): this machine's, else one in the store's chain in the bucket."""
    from memdeck.core.receipts import team

    try:
        return book.get(receipt_id), THIS_MACHINE
    except NotFound:
        objects = team.objects_for(book.root)
        if objects is None:
            raise
        receipt, machine = team.find_shared(objects, receipt_id)
        return receipt, machine or "another machine"


def cmd_list(args: argparse.Namespace) -> int:
    rows = _rows(_book(args))
    if getattr(args, "json", False):
        _print_json(rows)
        return 0
    if not rows:
        print("no deletion receipts yet")
        return 0
    print(
        f"{'ID':<14} {'ISSUED (UTC)':<20} {'PRINCIPAL':<14} {'DEL':>4} {'CASC':>4} {'OUTCOME':<14} "
        f"{'ISSUED BY':<16}  REASON"
    )
    for r in rows:
        issued = str(r["issued_at"] or "")[:19].replace("T", " ")
        outcome = str(r["outcome"] or "?") + (" (rechecked)" if r.get("settled_by") else "")
        print(
            f"{str(r['receipt_id'])[:12]:<14} {issued:<20} {safe(r['principal'])[:14]:<14} "
            f"{r['n_deleted']:>4} {r['n_cascade']:>4} {outcome:<14} {safe(str(r['issued_by']))[:16]:<16}  "
            f"{safe(' '.join(str(r['reason'] or '').split()))[:60]}"
        )
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    from memdeck.core.receipts import to_markdown

    receipt, machine = _get(_book(args), args.id)
    if getattr(args, "json", False):
        _print_json(receipt)
    else:
        sys.stdout.write(to_markdown(receipt))
        if machine != THIS_MACHINE:
            print(f"\nIssued by {safe(machine)} (from the store's receipt chain in the bucket).")
    return 0


def _report_failure(report: VerifyReport, what: str) -> None:
    for problem in report.problems:
        print(problem, file=sys.stderr)
    n = len(report.problems)
    raise IntegrityError(f"{what} failed verification: {n} problem{'' if n == 1 else 's'} (listed above)")


def cmd_verify(args: argparse.Namespace) -> int:
    from memdeck.core.receipts import team, verify_file
    from memdeck.core.receipts.verify import check_public_key

    if args.all:
        if args.target:
            raise MemdeckError("give either FILE_OR_ID or --all, not both")
        book = _book(args)
        report = book.verify_chain()
        what = f"the receipt chain in {book.dir}"
        objects = team.objects_for(book.root)
        if objects is not None:  # a store shared through a bucket: one chain there, every machine's receipts
            shared = team.verify_chain(objects)
            report.problems.extend(f"bucket chain: {p}" for p in shared.problems)
            report.ok = report.ok and shared.ok
            what += f" and the store's chain in the bucket ({shared.checked} receipts)"
        if args.public_key and report.public_key != check_public_key(args.public_key):
            report.problems.append(
                f"the chain is signed with {report.public_key}, not the --public-key given"
            )
            report.ok = False
    else:
        if not args.target:
            raise MemdeckError("give a receipt file or id to verify, or --all for the whole chain")
        pinned = check_public_key(args.public_key) if args.public_key else None
        path = Path(args.target).expanduser()
        if path.is_file():
            report = verify_file(path, pinned)
            what = f"receipt {path}"
        else:
            book = _book(args)
            try:
                path = book.path_of(args.target)
            except NotFound:
                report, what = _verify_shared(book, args.target, pinned)
            else:
                report = verify_file(path, pinned)
                what = f"receipt {path}"
    as_json = getattr(args, "json", False)
    if as_json:
        _print_json(report.to_dict())
    for warning in report.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if not as_json:
        _print_outcomes(report)
    if not report.ok:
        _report_failure(report, what)
    if not as_json:
        print(f"signatures ok: {report.checked} receipt{'' if report.checked == 1 else 's'} ({what})")
        source = {
            "pinned": "the key given with --public-key",
            "store": "the store's receipt key",
            "embedded": "the key embedded in the receipt only",
            "bucket": "the keys registered in the bucket",
        }
        print(f"key checked: {report.public_key or '-'} ({source[report.key_source]})")
        if report.head_count is not None:
            print(
                f"signed HEAD: {report.head_count} receipt{'' if report.head_count == 1 else 's'} in the chain"
            )
    bad = report.unverified
    if bad:
        ids = ", ".join(o["receipt_id"][:12] for o in bad[:5]) + (" …" if len(bad) > 5 else "")
        raise IntegrityError(
            f"{len(bad)} receipt{'' if len(bad) == 1 else 's'} signed but not verified: the purge's checks failed "
            f"({ids}); remove what they found, then `memdeck forget --recheck ID`"
        )
    if not as_json:
        print(f"ok: every receipt checked records a verified forget ({what})")
    return 0


def _verify_shared(book: ReceiptBook, target: str, pinned: str | None) -> tuple[VerifyReport, str]:
    """A receipt another machine issued, from the store's chain in the bucket: its signature by a key a
    machine registered there (or the pinned one) and its outcome."""
    from memdeck.core.receipts import VerifyReport, team, verify_receipt
    from memdeck.core.receipts.verify import outcomes_of

    objects = team.objects_for(book.root)
    if objects is None:
        book.path_of(target)  # raises the usual NotFound
    assert objects is not None
    receipt, machine = team.find_shared(objects, target)
    keys = team.registered_keys(objects)
    problems = [f"receipt {receipt.get('receipt_id')}: {p}" for p in verify_receipt(receipt)]
    key = receipt.get("public_key")
    if pinned is not None and key != pinned:
        problems.append(f"receipt {receipt.get('receipt_id')}: signed with {key}, not the --public-key given")
    elif pinned is None and key not in keys:
        problems.append(
            f"receipt {receipt.get('receipt_id')}: signed with a key no machine registered in the bucket"
        )
    rechecks = [
        r for _, r, _ in team.shared_receipts(objects) if r.get("rechecks") == receipt.get("receipt_id")
    ]
    report = VerifyReport(
        ok=not problems,
        problems=problems,
        checked=1,
        public_key=key if isinstance(key, str) else None,
        key_source="pinned" if pinned else "bucket",
        outcomes=[{**outcomes_of([receipt, *rechecks])[0], "machine": machine}],
    )
    return (
        report,
        f"receipt {receipt.get('receipt_id')} issued by {machine or 'another machine'}, from the bucket",
    )


def _print_outcomes(report: VerifyReport) -> None:
    """One line a receipt: its id, its signature's result, and what its purge's checks found."""
    bad_ids = {p.split(":", 1)[0] for p in report.problems}
    for o in report.outcomes:
        rid = o["receipt_id"]
        signature = "signature FAILED" if any(rid in b for b in bad_ids) else "signature ok"
        outcome = o["outcome"]
        if o["failed"]:
            outcome += f" ({', '.join(o['failed'][:4])}{' …' if len(o['failed']) > 4 else ''})"
        if o["settled_by"]:
            outcome += f", settled by verified recheck {o['settled_by'][:12]}"
        machine = f"  issued by {safe(o['machine'])}" if o.get("machine") else ""
        print(f"{rid[:12]:<14} {signature:<17} outcome: {outcome}{machine}")


def cmd_export(args: argparse.Namespace) -> int:
    from memdeck.core.receipts.book import export_receipt

    fmt = args.format or ("md" if str(args.dest).lower().endswith(".md") else "json")
    book = _book(args)
    try:
        written = book.export(args.id, Path(args.dest), fmt)
    except NotFound:
        receipt, _ = _get(book, args.id)
        written = export_receipt(receipt, Path(args.dest), fmt)
    if getattr(args, "json", False):
        _print_json({"path": str(written), "format": fmt})
    else:
        print(written)
    return 0
