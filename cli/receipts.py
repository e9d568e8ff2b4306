"""`memdeck receipts list | show ID | verify FILE_OR_ID | verify --all | export ID DEST`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from memdeck.cli._common import safe
from memdeck.core.errors import IntegrityError, MemdeckError
from memdeck.core.paths import resolve_store
from memdeck.core.receipts import ReceiptBook, VerifyReport, team, to_markdown, verify_file
from memdeck.core.receipts.verify import check_public_key


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
        description="Exit 0 when valid; otherwise one line per problem on stderr and exit 5.",
    )
    p.add_argument(
        "target", metavar="FILE_OR_ID", nargs="?", help="a receipt file, or a receipt id in the store"
    )
    p.add_argument("--all", action="store_true", help="verify every receipt and the chain between them")
    p.add_argument(
        "--public-key", metavar="BASE64",
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
    return ReceiptBook(resolve_store(getattr(args, "store", None)))


def _print_json(value: Any) -> None:
    print(json.dumps(value, indent=2, ensure_ascii=False))


def cmd_list(args: argparse.Namespace) -> int:
    rows = _book(args).list()
    if getattr(args, "json", False):
        _print_json(rows)
        return 0
    if not rows:
        print("no deletion receipts yet")
        return 0
    print(f"{'ID':<14} {'ISSUED (UTC)':<20} {'PRINCIPAL':<14} {'DEL':>4} {'CASC':>4} {'CHECKS':<6}  REASON")
    for r in rows:
        issued = str(r["issued_at"] or "")[:19].replace("T", " ")
        print(
            f"{str(r['receipt_id'])[:12]:<14} {issued:<20} {safe(r['principal'])[:14]:<14} "
            f"{r['n_deleted']:>4} {r['n_cascade']:>4} {'ok' if r['all_checks_passed'] else 'FAIL':<6}  "
            f"{safe(' '.join(str(r['reason'] or '').split()))[:60]}"
        )
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    receipt = _book(args).get(args.id)
    if getattr(args, "json", False):
        _print_json(receipt)
    else:
        sys.stdout.write(to_markdown(receipt))
    return 0


def _report_failure(report: VerifyReport, what: str) -> None:
    for problem in report.problems:
        print(problem, file=sys.stderr)
    n = len(report.problems)
    raise IntegrityError(f"{what} failed verification: {n} problem{'' if n == 1 else 's'} (listed above)")


def cmd_verify(args: argparse.Namespace) -> int:
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
            report.problems.append(f"the chain is signed with {report.public_key}, not the --public-key given")
            report.ok = False
    else:
        if not args.target:
            raise MemdeckError("give a receipt file or id to verify, or --all for the whole chain")
        path = Path(args.target).expanduser()
        if not path.is_file():
            path = _book(args).path_of(args.target)
        pinned = check_public_key(args.public_key) if args.public_key else None
        report = verify_file(path, pinned)
        what = f"receipt {path}"
    if getattr(args, "json", False):
        _print_json(report.to_dict())
    for warning in report.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if not report.ok:
        _report_failure(report, what)
    if not getattr(args, "json", False):
        print(f"ok: {report.checked} receipt{'' if report.checked == 1 else 's'} verified ({what})")
        source = {"pinned": "the key given with --public-key", "store": "the store's receipt key",
                  "embedded": "the key embedded in the receipt only"}[report.key_source]
        print(f"key checked: {report.public_key or '-'} ({source})")
        if report.head_count is not None:
            print(f"signed HEAD: {report.head_count} receipt{'' if report.head_count == 1 else 's'} in the chain")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    fmt = args.format or ("md" if str(args.dest).lower().endswith(".md") else "json")
    written = _book(args).export(args.id, Path(args.dest), fmt)
    if getattr(args, "json", False):
        _print_json({"path": str(written), "format": fmt})
    else:
        print(written)
    return 0
