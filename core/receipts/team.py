"""The receipts of a store shared through a bucket: one chain per store in the bucket, every machine's key.

Each machine signs with its own key (``keys/`` of its local store directory) and registers the public half
in the bucket (``_memdeck/keys/<fingerprint>.json``, created once with ``If-None-Match``). Each receipt a
machine issues is also appended to the store's chain in the bucket as a *link*:
``_memdeck/receipts/<seq>-<receipt_id>.json`` holding the signed receipt, the sha256 of the link before it
and the link's own signature (same key). ``_memdeck/receipts/HEAD.json`` names the newest link and the
count; it is replaced with ``If-Match`` only, so two machines cannot both append link ``n`` (purges hold the
lease, so they never race; a machine fenced out is refused here too).

:func:`verify_chain` checks every link: the receipt inside verifies on its own (signature, canonical form),
it and its link are signed by a registered key, the links form one line from the first to HEAD with no gap
or fork, and HEAD is signed by a registered key and counts them all.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, cast

from memdeck.core.errors import IntegrityError, MemdeckError, NotFound
from memdeck.core.receipts.format import _b64, canonical_json, receipt_sha256
from memdeck.core.receipts.types import Receipt
from memdeck.core.receipts.verify import VerifyReport, _b64_strict, outcomes_of, verify_receipt
from memdeck.core.storage.lease import ConditionalObjects

KEYS = "_memdeck/keys/"
LINKS = "_memdeck/receipts/"
HEAD = LINKS + "HEAD.json"
LINK_FORMAT = "memdeck.team-receipt-link/1"
TEAM_HEAD_FORMAT = "memdeck.team-receipts-head/1"


def fingerprint(public_key: str) -> str:
    return hashlib.sha256(public_key.encode()).hexdigest()[:16]


def register_key(objects: ConditionalObjects, public_key: str, machine: str) -> None:
    """Publish this machine's receipt key in the bucket (once)."""
    key = f"{KEYS}{fingerprint(public_key)}.json"
    if objects.get(key) is None:
        objects.create(key, canonical_json({"public_key": public_key, "machine": machine}))


def registered_keys(objects: ConditionalObjects) -> dict[str, str]:
    """public key -> machine, for every key registered in the bucket."""
    out: dict[str, str] = {}
    for key in objects.list(KEYS):
        got = objects.get(key)
        if got is None:
            continue
        try:
            data = json.loads(got[0])
            out[str(data["public_key"])] = str(data.get("machine", ""))
        except (ValueError, KeyError, TypeError):
            continue
    return out


def _signed(body: dict[str, Any], sign: Any, public_key: str) -> bytes:
    body = {**body, "public_key": public_key}
    return canonical_json({**body, "signature": _b64(sign(canonical_json(body)))})


def _signature_ok(obj: dict[str, Any]) -> bool:
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    public = _b64_strict(obj.get("public_key"), 32)
    signature = _b64_strict(obj.get("signature"), 64)
    if public is None or signature is None:
        return False
    try:
        Ed25519PublicKey.from_public_bytes(public).verify(
            signature, canonical_json({k: v for k, v in obj.items() if k != "signature"})
        )
    except (InvalidSignature, ValueError, TypeError):
        return False
    return True


def append(objects: ConditionalObjects, receipt: Receipt, sign: Any, public_key: str) -> bool:
    """Append a receipt to the bucket's chain; False when it is there already (a resumed purge)."""
    rid = str(receipt["receipt_id"])
    if any(k.endswith(f"-{rid}.json") for k in objects.list(LINKS)):
        return False
    got = objects.get(HEAD)
    head: dict[str, Any] = json.loads(got[0]) if got is not None else {"count": 0, "sha256": None}
    seq = int(head["count"]) + 1
    link = _signed(
        {
            "format": LINK_FORMAT,
            "seq": seq,
            "receipt": receipt,
            "receipt_sha256": receipt_sha256(receipt),
            "previous_link_sha256": head["sha256"],
        },
        sign,
        public_key,
    )
    name = f"{LINKS}{seq:08d}-{rid}.json"
    if objects.create(name, link) is None:
        raise IntegrityError(f"link {seq} of the store's receipt chain was written by another machine")
    new_head = _signed(
        {
            "format": TEAM_HEAD_FORMAT,
            "count": seq,
            "sha256": hashlib.sha256(link).hexdigest(),
            "receipt_id": rid,
        },
        sign,
        public_key,
    )
    done = objects.create(HEAD, new_head) if got is None else objects.replace(HEAD, new_head, got[1])
    if done is None:
        objects.delete(name)
        raise IntegrityError("the store's receipt chain moved while this receipt was appended; it was not")
    return True


def links(objects: ConditionalObjects) -> list[tuple[str, bytes]]:
    out = []
    for key in sorted(k for k in objects.list(LINKS) if k != HEAD):
        got = objects.get(key)
        if got is not None:
            out.append((key, got[0]))
    return out


def receipts_since(objects: ConditionalObjects, seq: int) -> list[tuple[int, Receipt]]:
    """(seq, receipt) of every link after ``seq``, in chain order."""
    out = []
    for key in sorted(k for k in objects.list(LINKS) if k != HEAD):
        n = int(key[len(LINKS) :].split("-", 1)[0])  # the listing names the seq: only new links are read
        got = objects.get(key) if n > seq else None
        if got is not None:
            out.append((n, json.loads(got[0])["receipt"]))
    return out


def verify_chain(objects: ConditionalObjects) -> VerifyReport:
    problems: list[str] = []
    keys = registered_keys(objects)
    previous: str | None = None
    entries = links(objects)
    for i, (key, raw) in enumerate(entries, start=1):
        try:
            link = json.loads(raw)
        except ValueError:
            problems.append(f"{key}: not JSON")
            continue
        receipt = link.get("receipt") or {}
        label = f"link {key[len(LINKS) :]}"
        if link.get("seq") != i or not key[len(LINKS) :].startswith(f"{i:08d}-"):
            problems.append(f"{label}: expected link {i} here (a link is missing or out of place)")
        if canonical_json(link) != raw:
            problems.append(f"{label}: not in canonical form (bytes were changed)")
        if not _signature_ok(link):
            problems.append(f"{label}: its signature does not match its content")
        if link.get("public_key") not in keys:
            problems.append(f"{label}: signed with a key no machine registered in the bucket")
        if receipt.get("public_key") != link.get("public_key"):
            problems.append(f"{label}: the receipt and its link are signed by different keys")
        problems.extend(f"{label}: {p}" for p in verify_receipt(receipt))
        if link.get("receipt_sha256") != receipt_sha256(receipt):
            problems.append(f"{label}: the receipt was altered")
        if link.get("previous_link_sha256") != previous:
            problems.append(f"{label}: the link before it is missing or was altered")
        previous = hashlib.sha256(raw).hexdigest()
    got = objects.get(HEAD)
    if got is None:
        if entries:
            problems.append(f"{HEAD} is missing: cannot tell whether the newest receipts were removed")
    else:
        head = json.loads(got[0])
        if not _signature_ok(head) or head.get("public_key") not in keys:
            problems.append(f"{HEAD} is not signed by a registered key")
        if head.get("count") != len(entries) or head.get("sha256") != previous:
            problems.append(f"{HEAD} names link {head.get('count')} but the chain holds {len(entries)}")
    receipts = [r for _, r, _ in shared_receipts(objects, entries=entries, keys=keys)]
    machines = {str(r.get("receipt_id")): keys.get(str(r.get("public_key")), "") for r in receipts}
    return VerifyReport(
        ok=not problems,
        problems=problems,
        checked=len(entries),
        warnings=[],
        public_key=None,
        key_source="bucket",
        outcomes=outcomes_of(receipts, machines),
    )


def shared_receipts(
    objects: ConditionalObjects,
    *,
    entries: list[tuple[str, bytes]] | None = None,
    keys: dict[str, str] | None = None,
) -> list[tuple[int, Receipt, str]]:
    """(seq, receipt, issuing machine) of every receipt in the store's chain in the bucket, in chain order;
    unreadable links are left out (``verify_chain`` reports them)."""
    keys = registered_keys(objects) if keys is None else keys
    out = []
    for _key, raw in links(objects) if entries is None else entries:
        try:
            link = json.loads(raw)
        except ValueError:
            continue
        receipt = link.get("receipt") if isinstance(link, dict) else None
        if isinstance(receipt, dict):
            out.append(
                (int(link.get("seq") or 0), cast(Receipt, receipt), keys.get(str(link.get("public_key")), ""))
            )
    return out


def objects_for(root: Any, config: dict[str, Any] | None = None) -> ConditionalObjects | None:
    """The bucket objects of the store directory at ``root`` when its tables are shared through an S3 bucket
    (as its ``memdeck.json`` records), else None; for commands that read receipts without opening the store."""
    from urllib.parse import urlparse

    from memdeck.core.config import load_settings
    from memdeck.core.storage.lease import S3Objects
    from memdeck.core.storage.objectstore import resolve
    from memdeck.core.storage.teamlock import LEASED_SCHEMES

    _, location = resolve(config if config is not None else load_settings().to_dict(), root)
    if location.uri is None or urlparse(location.uri).scheme.lower() not in LEASED_SCHEMES:
        return None
    return S3Objects(location.uri, location.options)


def find_shared(objects: ConditionalObjects, receipt_id: str) -> tuple[Receipt, str]:
    """(receipt, issuing machine) of the receipt in the bucket chain with this id or unique id prefix."""
    wanted = str(receipt_id).strip()
    found = [
        (r, m) for _, r, m in shared_receipts(objects) if str(r.get("receipt_id", "")).startswith(wanted)
    ]
    exact = [(r, m) for r, m in found if r.get("receipt_id") == wanted]
    if exact:
        return exact[0]
    if not wanted or not found:
        raise NotFound(
            f"no deletion receipt {wanted!r} in this store's chain or in the bucket's (see `memdeck receipts list`)"
        )
    if len(found) > 1:
        shown = ", ".join(str(r.get("receipt_id")) for r, _ in found[:5])
        raise MemdeckError(f"receipt prefix {wanted!r} is ambiguous ({shown}); give more characters")
    return found[0]
