"""Redaction quality and speed on the shared evaluation data.

    python bench/bench_redaction.py [--data DIR] [--out bench/RESULTS-redaction.md]

Data (see ../shared/data/README.md):
  pii/presidio_synth_structured_pii.jsonl   labelled card/SSN/email/phone/IBAN/IP spans
  secrets/gitleaks_rule_cases.jsonl         gitleaks rule test strings, "tp" must be caught, "fp" should not
  locomo/locomo10.json                      (optional) real conversation turns: plain sentences for speed
                                            and for the rate of over-redaction
  bench/redaction_devset.py                 generated: every provider format in every context people paste
                                            it in, plus look-alikes (no shared data needed)
  bench/redaction_credfiles.py              generated: credentials in their native files (.pgpass, .netrc,
                                            INI, Docker, kubeconfig, ...) and look-alikes, in a development
                                            and a held-out part
  bench/redaction_identifiers.py            generated: national ids, dates of birth, street addresses,
                                            passports, bank accounts, medical record numbers, codes, security
                                            answers, spelled-out e-mails, wallets and vendor tokens, in six
                                            shapes, with look-alikes, in a development and a held-out part

Scoring:
  * PII: a labelled span counts as caught when its value no longer appears in the redacted text.
  * gitleaks tp: caught when the redactor replaced anything in the string. gitleaks fp: flagged when the
    redactor replaced anything (reported for any kind and for SECRET findings only).
  * The gitleaks cases were extracted from Go test sources, and some "tp" records are only pieces of a
    test (a bare prefix such as ``sk_test_`` whose random part was generated in code, a file name, a
    format string with ``%s``, a JOSE header value from the JWT generator). Such a record contains no
    whole secret. Rates are given over all records AND over the records left after removing pieces by
    fixed structural criteria (see ``fragment_reason``); both are printed. "fp" records whose exact text
    is also labelled "tp" elsewhere in the file are contradictory and are reported apart.
  * Development set: a case counts as caught when none of its secret values survives; a look-alike counts
    as kept when the redactor finds nothing in it. Recall is given per context.
  * Credential files: a positive counts as caught when none of its values, and no piece of 8 characters of
    one, survives; a look-alike counts as flagged when the redactor makes a SECRET finding in it (an IP
    address or e-mail address in it is PII, replaced under the existing policy, and counted apart).
  * Identifiers: a positive counts as caught when its value, and its letters and digits run together,
    no longer appear; a look-alike counts as flagged when the redactor finds anything in it.
  * Layers: every SECRET finding carries the rule that made it; rules are grouped into "prefix" (the token's
    own format), "context" (a key name, header, URL, table column or sentence says it is a secret) and
    "pem" (private-key blocks). detect-secrets (if installed) is measured as an extra layer beside them:
    what it would add, what it would cost in false positives and time. It is not used by memdeck.
"""

from __future__ import annotations

import argparse
import collections
import datetime as dt
import json
import os
import platform
import re
import sys
import tempfile
import time
from pathlib import Path

from memdeck.core.privacy import Redactor, Vault

REPO = Path(__file__).resolve().parents[1]

PII_TYPES = {
    "EMAIL_ADDRESS": "EMAIL",
    "PHONE_NUMBER": "PHONE",
    "CREDIT_CARD": "CARD",
    "IBAN_CODE": "IBAN",
    "US_SSN": "SSN",
    "IP_ADDRESS": "IP",
}
TARGETS = {
    "EMAIL_ADDRESS": 0.98,
    "US_SSN": 0.98,
    "IBAN_CODE": 0.98,
    "IP_ADDRESS": 0.98,
    "CREDIT_CARD": 0.98,
    "PHONE_NUMBER": 0.95,
}
TP_TARGET = 0.97  # whole-secret records
TP_ALL_TARGET = 0.95
FP_TARGET = 0.08
DEVSET_TARGET = 0.99


def default_data_dir() -> Path:
    env = os.environ.get("MEMDECK_SHARED_DATA")
    if env:
        return Path(env)
    return REPO.parent / "shared" / "data"


def load_jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


_FORMAT_PIECE = re.compile(r"%[sdvx]|\{\d+\}|\[[a-zA-Z0-9\\-]+\]\{|gitleaks:allow")
_FILE_NAME = re.compile(r"^[\w./\\-]+\.[A-Za-z0-9]{1,6}$")


def fragment_reason(text: str) -> str | None:
    """Why a gitleaks 'tp' record cannot hold a whole secret, or None when it may.

    Fixed structural criteria, decided independently of what the redactor catches."""
    t = text.strip()
    if not t:
        return "empty"
    if _FORMAT_PIECE.search(t):
        return "format string / regex / generator source"
    if _FILE_NAME.match(t) and "=" not in t:
        return "file name"
    if (
        t[-1] in "_-:(,{[~"
        or re.search(r"(?:^|\W)[A-Za-z_][\w.-]{0,40}\s*:?=$", t)
        or t.endswith("/")
        or any(t.count(q) % 2 for q in "\"'")
    ):
        return "prefix without its value"
    if not re.search(r"[^\s\"'<>(),;]{16,}", t):
        return "no run of 16 non-space characters"
    return None


# ----------------------------------------------------------------------------------------------------


def bench_pii(redactor: Redactor, rows: list[dict]) -> dict:
    per_type = collections.Counter()
    caught = collections.Counter()
    misses: dict[str, list[str]] = collections.defaultdict(list)
    extra = 0
    extra_kinds = collections.Counter()
    for row in rows:
        res = redactor.redact(row["text"], "bench")
        for span in row["spans"]:
            per_type[span["type"]] += 1
            if span["value"] not in res.text:
                caught[span["type"]] += 1
            else:
                misses[span["type"]].append(span["value"])
        for f in res.findings:
            if not any(f.start < s["end"] and s["start"] < f.end for s in row["spans"]):
                extra += 1
                extra_kinds[f.kind] += 1
    recall = {t: caught[t] / per_type[t] for t in per_type}
    return {
        "n": per_type,
        "caught": caught,
        "recall": recall,
        "misses": misses,
        "extra": extra,
        "extra_kinds": extra_kinds,
    }


def bench_gitleaks(redactor: Redactor, rows: list[dict]) -> dict:
    tp_texts = {r["text"] for r in rows if r["label"] == "tp"}
    stats = {
        "tp_all": [0, 0],
        "tp_whole": [0, 0],
        "fp_all": [0, 0],
        "fp_secret": [0, 0],
        "fp_clean": [0, 0],
        "fp_clean_secret": [0, 0],
    }
    by_rule: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    fragments = collections.Counter()
    missed_examples: dict[str, list[str]] = collections.defaultdict(list)
    flagged_examples: dict[str, list[str]] = collections.defaultdict(list)
    for r in rows:
        res = redactor.redact(r["text"], "bench")
        hit = bool(res.findings)
        secret_hit = any(f.kind == "SECRET" for f in res.findings)
        rule = r["rule_id"]
        if r["label"] == "tp":
            reason = fragment_reason(r["text"])
            stats["tp_all"][0] += hit
            stats["tp_all"][1] += 1
            by_rule[rule]["tp"] += 1
            by_rule[rule]["tp_caught"] += hit
            if reason:
                fragments[reason] += 1
            else:
                stats["tp_whole"][0] += hit
                stats["tp_whole"][1] += 1
                by_rule[rule]["tp_whole"] += 1
                by_rule[rule]["tp_whole_caught"] += hit
                if not hit:
                    missed_examples[rule].append(r["text"])
        else:
            stats["fp_all"][0] += hit
            stats["fp_all"][1] += 1
            stats["fp_secret"][0] += secret_hit
            stats["fp_secret"][1] += 1
            by_rule[rule]["fp"] += 1
            by_rule[rule]["fp_flagged"] += hit
            if r["text"] not in tp_texts:
                stats["fp_clean"][0] += hit
                stats["fp_clean"][1] += 1
                stats["fp_clean_secret"][0] += secret_hit
                stats["fp_clean_secret"][1] += 1
            if hit:
                flagged_examples[rule].append(r["text"])
    return {
        "stats": stats,
        "by_rule": by_rule,
        "fragments": fragments,
        "missed": missed_examples,
        "flagged": flagged_examples,
    }


def load_devset() -> tuple[list[dict], int]:
    import importlib.util

    path = REPO / "bench" / "redaction_devset.py"
    spec = importlib.util.spec_from_file_location("redaction_devset", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("redaction_devset", module)
    spec.loader.exec_module(module)
    return module.generate(), module.SEED


def load_credfiles() -> tuple[list[dict], object]:
    import importlib.util

    path = REPO / "bench" / "redaction_credfiles.py"
    spec = importlib.util.spec_from_file_location("redaction_credfiles", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("redaction_credfiles", module)
    spec.loader.exec_module(module)
    return module.generate(), module


def load_identifiers() -> tuple[list[dict], object]:
    import importlib.util

    path = REPO / "bench" / "redaction_identifiers.py"
    spec = importlib.util.spec_from_file_location("redaction_identifiers", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("redaction_identifiers", module)
    spec.loader.exec_module(module)
    return module.build(), module  # type: ignore[attr-defined]


ID_RECALL_TARGET = 0.98
# The held-out part's first score, taken once after the detectors had been written against the development
# part and before anything was changed for it (kind: caught, positives; look-alikes flagged, look-alikes).
ID_HELD_OUT_FIRST = {
    "recall": (480, 492),
    "flagged": (1, 56),
    "misses": {"passport": (18, 21), "se-personnummer": (18, 21), "sort-code": (15, 21)},
}


def bench_identifiers(redactor: Redactor, cases: list[dict], module: object) -> dict:
    """Per kind and part: [caught, positives, look-alikes flagged, look-alikes]; per shape: [caught, n]."""
    leaked = module.leaked  # type: ignore[attr-defined]
    per: dict[tuple[str, str], list[int]] = collections.defaultdict(lambda: [0, 0, 0, 0])
    per_shape: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0])
    kinds: collections.Counter = collections.Counter()
    misses: list[tuple[str, str, str]] = []
    flagged: list[tuple[str, str, str]] = []
    for case in cases:
        res = redactor.redact(case["text"], "bench")
        row = per[(case["kind"], case["part"])]
        if case["values"]:
            ok = not any(leaked(v, res.text) for v in case["values"])
            row[0] += ok
            row[1] += 1
            per_shape[case["shape"]][0] += ok
            per_shape[case["shape"]][1] += 1
            kinds.update(f.kind for f in res.findings)
            if not ok:
                misses.append((case["kind"], case["part"], case["text"]))
        else:
            row[2] += bool(res.findings)
            row[3] += 1
            if res.findings:
                flagged.append((case["kind"], case["part"], case["text"]))
    return {"per": per, "per_shape": per_shape, "kinds": kinds, "misses": misses, "flagged": flagged}


CRED_RECALL_TARGET = 0.98
CRED_LOOK_TARGET = 0.02


def bench_credfiles(redactor: Redactor, cases: list[dict], module: object) -> dict:
    """Per format and part: [caught, positives, look-alikes flagged (SECRET), look-alikes, with PII only]."""
    leaked = module.leaked  # type: ignore[attr-defined]
    per: dict[tuple[str, str], list[int]] = collections.defaultdict(lambda: [0, 0, 0, 0, 0])
    per_wrapper: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0])
    misses: list[tuple[str, str, str]] = []
    flagged: list[tuple[str, str, str]] = []
    for case in cases:
        res = redactor.redact(case["text"], "bench")
        row = per[(case["format"], case["part"])]
        if case["secrets"]:
            ok = not any(leaked(v, case["text"], res.text) for v in case["secrets"])
            row[0] += ok
            row[1] += 1
            per_wrapper[case["wrapper"]][0] += ok
            per_wrapper[case["wrapper"]][1] += 1
            if not ok:
                misses.append((case["format"], case["part"], case["text"]))
        else:
            secret = any(f.kind == "SECRET" for f in res.findings)
            row[2] += secret
            row[3] += 1
            row[4] += bool(res.findings) and not secret
            if secret:
                flagged.append((case["format"], case["part"], case["text"]))
    return {"per": per, "per_wrapper": per_wrapper, "misses": misses, "flagged": flagged}


_PEM_RULES = {"private-key"}
_CONTEXT_PREFIXES = ("assignment-", "xml-", "name-value-")
_CONTEXT_RULES = {
    "access-code",
    "security-answer",
    "field-secret",
    "table-cell",
    "random-in-context",
    "url-credentials",
    "authorization-header",
    "bearer-token",
    "basic-credentials",
    "url-signature",
    "netrc",
    "pgpass",
    "cli-password",
    "stated-secret",
    "curl-user",
    "k8s-secret-data",
    "bundler-credentials",
    "vendor-assignment",
    "aws-secret-key",
    "lone-token",
    # credentials recognised by their file's layout (core/privacy/credfiles.py)
    "ini-password",
    "ini-token",
    "docker-auth",
    "yarnrc-token",
    "authorized-keys-option",
    "jdbc-oracle",
    "connection-string-password",
    "url-query-password",
    "kubeconfig-credential",
    "config-password",
    "wifi-psk",
    "secrets-file",
}
_PEM_RULES |= {"putty-private-key"}
_HASH_RULES = {"password-hash"}


def layer_of(rule: str) -> str:
    if rule in _PEM_RULES:
        return "pem"
    if rule in _HASH_RULES:
        return "context"
    if rule in _CONTEXT_RULES or rule.startswith(_CONTEXT_PREFIXES):
        return "context"
    return "prefix"


def bench_devset(redactor: Redactor, cases: list[dict]) -> dict:
    per_ctx: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0])
    layers = collections.Counter()
    only = collections.Counter()
    misses: list[tuple[str, str, str]] = []
    for case in cases:
        res = redactor.redact(case["text"], "bench")
        if case["secrets"]:
            ok = all(v not in res.text for v in case["secrets"])
            found = {layer_of(f.rule) for f in res.findings if f.kind == "SECRET"}
            for layer in found:
                layers[layer] += 1
            if len(found) == 1:
                only[next(iter(found))] += 1
        else:
            ok = not res.findings
        per_ctx[case["context"]][0] += ok
        per_ctx[case["context"]][1] += 1
        if not ok:
            misses.append((case["context"], case["rule"], case["text"]))
    return {"per_ctx": per_ctx, "layers": layers, "only": only, "misses": misses}


def gitleaks_layers(redactor: Redactor, rows: list[dict]) -> collections.Counter:
    """Which layer made the findings on the whole-secret tp records."""
    out = collections.Counter()
    for r in rows:
        if r["label"] != "tp" or fragment_reason(r["text"]):
            continue
        found = {layer_of(f.rule) for f in redactor.redact(r["text"], "bench").findings if f.kind == "SECRET"}
        for layer in found:
            out[layer] += 1
        if not found:
            out["none"] += 1
    return out


def detect_secrets_values(text: str, types: collections.Counter | None = None) -> list[str]:
    """Values detect-secrets (all default plugins) reports in text, line by line; pieces shorter than 8
    characters (its hex plugin reports 'acce' in 'access') are dropped. types counts the plugins that fired."""
    from detect_secrets.core.scan import scan_line

    out = []
    fired = set()
    for line in text.splitlines() or [text]:
        for found in scan_line(line):
            value = found.secret_value or ""
            if len(value) >= 8:
                out.append(value)
                fired.add(found.type)
    if types is not None:
        types.update(fired)
    return out


def bench_detect_secrets(
    redactor: Redactor, gl_rows: list[dict], cases: list[dict], plain: list[str]
) -> dict | None:
    try:
        from detect_secrets.settings import default_settings
    except ImportError:
        return None
    stats = {"tp": [0, 0, 0, 0], "fp": [0, 0, 0, 0], "dev": [0, 0, 0, 0], "look": [0, 0, 0, 0]}
    added = collections.Counter()  # plugins behind the whole-secret tp records only detect-secrets finds
    fp_types = collections.Counter()
    # [caught by our rules, by detect-secrets, by either, total]
    with default_settings():
        for r in gl_rows:
            if r["label"] == "tp" and fragment_reason(r["text"]):
                continue
            key = "tp" if r["label"] == "tp" else "fp"
            ours = bool(redactor.redact(r["text"], "bench").findings)
            fired = collections.Counter()
            theirs = bool(detect_secrets_values(r["text"], fired))
            if key == "tp" and theirs and not ours:
                added.update(fired)
            if key == "fp":
                fp_types.update(fired)
            st = stats[key]
            st[0] += ours
            st[1] += theirs
            st[2] += ours or theirs
            st[3] += 1
        for case in cases:
            res = redactor.redact(case["text"], "bench")
            values = detect_secrets_values(case["text"])
            if case["secrets"]:
                ours = all(v not in res.text for v in case["secrets"])
                theirs = all(any(v in d or d in v for d in values) for v in case["secrets"])
                key = "dev"
            else:
                ours, theirs = bool(res.findings), bool(values)
                key = "look"
            st = stats[key]
            st[0] += ours
            st[1] += theirs
            st[2] += ours or theirs
            st[3] += 1
        sample = plain[:1000]
        ours_plain = sum(bool(redactor.detect(t)) for t in sample)
        t0 = time.perf_counter()
        flagged = sum(bool(detect_secrets_values(t)) for t in sample)
        ms = (time.perf_counter() - t0) / max(1, len(sample)) * 1000
    return {
        "stats": stats,
        "plain_flagged": flagged,
        "plain_n": len(sample),
        "ms": ms,
        "added": added,
        "plain_ours": ours_plain,
        "fp_types": fp_types,
    }


def per_text_ms(redactor: Redactor, texts: list[str]) -> dict:
    """p50 / p99 of the time to redact one text (what a single remember() spends on redaction); each text's
    time is the best of 3, so a busy machine's pauses do not land in the tail."""
    times = []
    for t in texts:
        best = float("inf")
        for _ in range(3):
            t0 = time.perf_counter()
            redactor.redact(t, "bench")
            best = min(best, time.perf_counter() - t0)
        times.append(best)
    times.sort()
    return {
        "p50": times[len(times) // 2] * 1000,
        "p99": times[min(len(times) - 1, int(len(times) * 0.99))] * 1000,
    }


def locomo_turns(data: Path) -> list[str]:
    path = data / "locomo" / "locomo10.json"
    if not path.exists():
        return []
    convs = json.loads(path.read_text(encoding="utf-8"))
    out = []
    for conv in convs:
        for key, value in conv["conversation"].items():
            if key.startswith("session_") and isinstance(value, list):
                out.extend(t["text"] for t in value if t.get("text"))
    return out


def time_redact(redactor: Redactor, texts: list[str], repeat: int = 3) -> dict:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for t in texts:
            redactor.redact(t, "bench")
        best = min(best, time.perf_counter() - t0)
    chars = sum(len(t) for t in texts)
    return {
        "n": len(texts),
        "seconds": best,
        "per_s": len(texts) / best,
        "ms": best / len(texts) * 1000,
        "ms_per_200ch": best / chars * 200 * 1000,
        "avg_chars": chars / len(texts),
    }


def time_vault_batch(texts: list[str]) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        red = Redactor(Vault(Path(tmp) / "vault"))
        t0 = time.perf_counter()
        red.redact_many(texts, "bench-vault")
        first = time.perf_counter() - t0
        t0 = time.perf_counter()
        red.redact_many(texts, "bench-vault")
        again = time.perf_counter() - t0
    return {"first_ms": first / len(texts) * 1000, "again_ms": again / len(texts) * 1000}


# ----------------------------------------------------------------------------------------------------


def pct(a: int, b: int) -> str:
    return f"{a}/{b} = {a / b:.3f}" if b else "n/a"


def _identifier_section(add, ids: dict, cases: list[dict], module: object, single: dict) -> bool:
    n_pos = sum(1 for c in cases if c["values"])
    add(
        f"### Personal identifiers, codes and vendor tokens (bench/redaction_identifiers.py, seed "
        f"{module.SEED}, {len(cases)} cases: {n_pos} positives, {len(cases) - n_pos} look-alikes)"  # type: ignore[attr-defined]
    )
    add("")
    add(
        "Synthetic values with the checks of their format. The development and held-out parts use template "
        "lists written apart and separate draws; each positive appears as a sentence (every template) and, "
        "with the first template, bare (formats that carry their own evidence), as a JSON field, a YAML line, "
        "a CSV row under a header and quoted. Caught: neither the value nor its letters and digits run together "
        "survive. Look-alikes (dates in ordinary talk, 'I live in London', numbers with a broken check and "
        "nothing naming them, error codes, ...) are flagged when anything at all is redacted in them."
    )
    add("")
    add(
        "| kind | dev recall | held-out recall | dev look-alikes flagged | held-out look-alikes flagged | met |"
    )
    add("|---|---|---|---|---|---|")
    ok_all = True
    for kind in dict.fromkeys(c["kind"] for c in cases):
        d, h = ids["per"][(kind, "dev")], ids["per"][(kind, "held-out")]
        rec_ok = all(not r[1] or r[0] / r[1] >= ID_RECALL_TARGET for r in (d, h))
        look_ok = d[2] == 0 and h[2] == 0
        ok_all = ok_all and rec_ok and look_ok
        cells = [pct(r[0], r[1]) if r[1] else "-" for r in (d, h)] + [
            pct(r[2], r[3]) if r[3] else "-" for r in (d, h)
        ]
        add(f"| {kind} | " + " | ".join(cells) + f" | {'yes' if rec_ok and look_ok else 'NO'} |")
    add("")
    first = ID_HELD_OUT_FIRST
    add(
        f"The held-out part's first score, taken once after the detectors had been written against the "
        f"development part: recall {pct(*first['recall'])}, look-alikes flagged {pct(*first['flagged'])} "  # type: ignore[arg-type]
        "(`invoice 87654321X`, whose last letter happens to be a valid DNI check letter). Misses: "
        + ", ".join(f"{k} {a}/{b}" for k, (a, b) in first["misses"].items())  # type: ignore[attr-defined]
        + " (`renewed passport, number ...`, `pnr ...`, `sort-code ...`). Those were then fixed (a comma "
        "after 'passport', 'pnr', the hyphen in 'sort-code'; a bare DNI is refused after words naming another "
        "kind of number), so the held-out figures in the table are no longer blind."
    )
    add("")
    add(
        "By shape (both parts): "
        + ", ".join(f"{w} {pct(ok, n)}" for w, (ok, n) in ids["per_shape"].items())
        + ". Token kinds issued on the positives: "
        + ", ".join(f"{k} {n}" for k, n in ids["kinds"].most_common())
        + "."
    )
    if ids["misses"]:
        add("")
        add("Missed: " + "; ".join(f"{k}/{p} `{t[:70]!r}`" for k, p, t in ids["misses"][:8]) + ".")
    if ids["flagged"]:
        add("")
        add(
            "Look-alikes flagged: "
            + "; ".join(f"{k}/{p} `{t[:70]!r}`" for k, p, t in ids["flagged"][:8])
            + "."
        )
    add("")
    add(f"One text at a time over this set: p50 {single['p50']:.3f} ms, p99 {single['p99']:.3f} ms.")
    add("")
    return ok_all


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--data", type=Path, default=default_data_dir(), help="shared data dir (default ../shared/data)"
    )
    ap.add_argument("--out", type=Path, default=REPO / "bench" / "RESULTS-redaction.md")
    ap.add_argument("--verbose", "-v", action="store_true", help="list misses and flagged fp strings")
    ap.add_argument("--no-detect-secrets", action="store_true", help="skip the detect-secrets comparison")
    args = ap.parse_args(argv)

    pii_path = args.data / "pii" / "presidio_synth_structured_pii.jsonl"
    gl_path = args.data / "secrets" / "gitleaks_rule_cases.jsonl"
    if not pii_path.exists() or not gl_path.exists():
        print(f"data not found under {args.data} (use --data DIR or MEMDECK_SHARED_DATA)", file=sys.stderr)
        return 2

    load = os.getloadavg()[0]
    redactor = Redactor(None)
    pii_rows = load_jsonl(pii_path)
    gl_rows = load_jsonl(gl_path)
    pii = bench_pii(redactor, pii_rows)
    gl = bench_gitleaks(redactor, gl_rows)

    pii_texts = [r["text"] for r in pii_rows]
    plain = locomo_turns(args.data)
    plain_source = "LoCoMo conversation turns"
    if not plain:
        plain = [r["text"] for r in pii_rows if not r["spans"]] or [
            "The weather was lovely and we walked."
        ] * 200
        plain_source = "fallback sentences"
    plain_flagged = [t for t in plain if redactor.detect(t)]
    plain_clean = [t for t in plain if not redactor.detect(t)]
    long_clean = [t for t in plain_clean if 150 <= len(t) <= 250]

    speed_pii = time_redact(Redactor(None), pii_texts)
    speed_plain = time_redact(Redactor(None), plain_clean)
    speed_200 = time_redact(Redactor(None), long_clean) if long_clean else None
    vault_speed = time_vault_batch(pii_texts)
    dev_cases, dev_seed = load_devset()
    dev = bench_devset(redactor, dev_cases)
    gl_layers = gitleaks_layers(redactor, gl_rows)
    cred_cases, cred_module = load_credfiles()
    cred = bench_credfiles(redactor, cred_cases, cred_module)
    id_cases, id_module = load_identifiers()
    ids = bench_identifiers(redactor, id_cases, id_module)
    single_ids = per_text_ms(Redactor(None), [c["text"] for c in id_cases])
    dev_texts = [c["text"] for c in dev_cases]
    warm = Redactor(None)
    for t in dev_texts[:50] + plain[:50]:
        warm.redact(t, "bench")
    single_dev = per_text_ms(Redactor(None), dev_texts)
    single_cred = per_text_ms(Redactor(None), [c["text"] for c in cred_cases])
    single_plain = per_text_ms(Redactor(None), plain)
    ds = None if args.no_detect_secrets else bench_detect_secrets(redactor, gl_rows, dev_cases, plain)

    st = gl["stats"]
    lines: list[str] = []
    add = lines.append
    add("## Redaction (core/privacy)")
    add("")
    add(
        f"Run {dt.datetime.now().strftime('%Y-%m-%d %H:%M')} on {platform.platform()}, "
        f"{os.cpu_count()} CPUs (load average {load:.1f} at the start), "
        f"Python {platform.python_version()}. `python bench/bench_redaction.py`."
    )
    add("")
    add(f"### PII recall ({pii_path.name}, {len(pii_rows)} texts)")
    add("")
    add("| entity | spans | caught | recall | target | met |")
    add("|---|---|---|---|---|---|")
    for t in ("EMAIL_ADDRESS", "US_SSN", "IBAN_CODE", "IP_ADDRESS", "CREDIT_CARD", "PHONE_NUMBER"):
        n, c = pii["n"][t], pii["caught"][t]
        add(
            f"| {t} | {n} | {c} | {c / n:.3f} | {TARGETS[t]:.2f} | {'yes' if c / n >= TARGETS[t] else 'NO'} |"
        )
    add("")
    add(
        f"Findings outside the labelled spans: {pii['extra']} ({dict(pii['extra_kinds'])}); the file labels "
        "only these six types, so an extra finding is not necessarily wrong."
    )
    add("")
    add(f"### Secrets ({gl_path.name}, {len(gl_rows)} strings, {len(gl['by_rule'])} rules)")
    add("")
    add("| measure | result | target |")
    add("|---|---|---|")
    add(f"| tp caught, all records | {pct(*st['tp_all'])} | >= {TP_ALL_TARGET} |")
    add(f"| tp caught, records holding a whole secret | {pct(*st['tp_whole'])} | >= {TP_TARGET} |")
    add(f"| fp flagged (any finding), all records | {pct(*st['fp_all'])} | <= {FP_TARGET} |")
    add(f"| fp flagged (SECRET findings only) | {pct(*st['fp_secret'])} | |")
    add(f"| fp flagged, without texts also labelled tp | {pct(*st['fp_clean'])} | <= {FP_TARGET} |")
    add("")
    frag_total = sum(gl["fragments"].values())
    add(
        f"tp records set aside as pieces of a test ({frag_total}): "
        + ", ".join(f"{k}: {v}" for k, v in gl["fragments"].most_common())
        + "."
    )
    add(f"fp records whose exact text is labelled tp elsewhere: {st['fp_all'][1] - st['fp_clean'][1]}.")
    add("")
    worst_tp = sorted(
        ((r, c) for r, c in gl["by_rule"].items() if c["tp_whole"]),
        key=lambda rc: (rc[1]["tp_whole_caught"] / rc[1]["tp_whole"], -rc[1]["tp_whole"]),
    )
    worst_tp = [(r, c) for r, c in worst_tp if c["tp_whole_caught"] < c["tp_whole"]][:10]
    jose = sum(1 for r, texts in gl["missed"].items() if r == "jwt" for t in texts if "eyJ" not in t)
    missed_total = st["tp_whole"][1] - st["tp_whole"][0]
    add(
        f"Of the {missed_total} missed whole-secret records, {jose} belong to the jwt rule but hold no JWT "
        "(JOSE header values, sample URLs and key ids from its test generator); without them the rate is "
        f"{pct(st['tp_whole'][0], st['tp_whole'][1] - jose)}. Most others are a bare vendor prefix, a sample value "
        "refused as a placeholder (all-Q age key, EXAMPLE keys, password `password`) or a random string with "
        "no prefix or key name (not flagged on purpose: bare high-entropy detection flags hashes and ids)."
    )
    add(
        "Rules with missed tp (whole-secret records): "
        + (", ".join(f"{r} {c['tp_whole_caught']}/{c['tp_whole']}" for r, c in worst_tp) or "none")
        + "."
    )
    worst_fp = sorted(
        ((r, c) for r, c in gl["by_rule"].items() if c["fp_flagged"]), key=lambda rc: -rc[1]["fp_flagged"]
    )[:10]
    add(
        "Rules with flagged fp: "
        + (", ".join(f"{r} {c['fp_flagged']}/{c['fp']}" for r, c in worst_fp) or "none")
        + "."
    )
    add("")
    add(f"### Development set (bench/redaction_devset.py, seed {dev_seed}, {len(dev_cases)} cases)")
    add("")
    add("| context | cases | caught | recall | target | met |")
    add("|---|---|---|---|---|---|")
    for ctx, (ok, n) in dev["per_ctx"].items():
        if ctx == "lookalike":
            continue
        add(
            f"| {ctx} | {n} | {ok} | {ok / n:.3f} | {DEVSET_TARGET:.2f} | {'yes' if ok / n >= DEVSET_TARGET else 'NO'} |"
        )
    ok, n = dev["per_ctx"]["lookalike"]
    add(f"| look-alikes left untouched | {n} | {ok} | {ok / n:.3f} | 1.00 | {'yes' if ok == n else 'NO'} |")
    add("")
    if dev["misses"]:
        add("Missed: " + "; ".join(f"{c}/{r} `{t[:70]}`" for c, r, t in dev["misses"][:8]) + ".")
        if any((c, r) == ("table", "generic-hex") for c, r, _ in dev["misses"]):
            add(
                "A one-row table `| <name> | <hex> |` with no header and no secret word is left alone on purpose: "
                "a table of checksums per platform (`| Linux x64 | <sha256> |`) has the same shape."
            )
        add("")
    add("Which layer found the secrets (a case may be found by more than one):")
    add("")
    add(
        "| layer | dev-set cases | dev-set cases found by this layer only | gitleaks whole-secret tp records |"
    )
    add("|---|---|---|---|")
    for layer in ("prefix", "context", "pem"):
        add(f"| {layer} | {dev['layers'][layer]} | {dev['only'][layer]} | {gl_layers[layer]} |")
    add(f"| nothing found | | | {gl_layers['none']} |")
    add("")
    n_pos = sum(1 for c in cred_cases if c["secrets"])
    add(
        f"### Credentials in their native files (bench/redaction_credfiles.py, seed {cred_module.SEED}, "  # type: ignore[attr-defined]
        f"{len(cred_cases)} cases: {n_pos} positives, {len(cred_cases) - n_pos} look-alikes)"
    )
    add("")
    add(
        "Synthetic values in each file's own layout, found by that layout (core/privacy/credfiles.py) or by the "
        "rules above. Even-numbered templates of a format make the development part, odd-numbered ones the "
        "held-out part. Every positive is also shown with Windows line endings, in a Markdown code fence, after "
        "a comment naming the file and (one-line entries) quoted in a sentence. Caught: no value and no "
        "8-character piece of one survives. Look-alikes flagged: a SECRET finding; 'PII only' counts look-alikes "
        "where only an IP or e-mail address was replaced (the existing policy)."
    )
    add("")
    add(
        "| format | dev recall | held-out recall | dev look-alikes flagged | held-out look-alikes flagged | "
        "PII only | met |"
    )
    add("|---|---|---|---|---|---|---|")
    cred_ok = True
    for fmt in dict.fromkeys(c["format"] for c in cred_cases):
        d, h = cred["per"][(fmt, "dev")], cred["per"][(fmt, "held-out")]
        recall_ok = all(r[1] and r[0] / r[1] >= CRED_RECALL_TARGET for r in (d, h))
        look_ok = all(r[3] and r[2] / r[3] <= CRED_LOOK_TARGET for r in (d, h))
        cred_ok = cred_ok and recall_ok and look_ok
        add(
            f"| {fmt} | {pct(d[0], d[1])} | {pct(h[0], h[1])} | {pct(d[2], d[3])} | {pct(h[2], h[3])} | "
            f"{d[4] + h[4]} | {'yes' if recall_ok and look_ok else 'NO'} |"
        )
    add("")
    add(
        "The held-out part was first scored blind, after the detectors had been written against the development "
        "part: recall 24/36 for kubeconfig and 24/36 for aws (a kubeconfig bootstrap token, session tokens longer "
        "than 300 characters), look-alikes flagged 8/40 for pgpass (`web1:8080:nginx:www-data:139ms` status lines) "
        "and 8/32 for ssh (the public half of a PuTTY key). Those were then fixed, so the held-out figures in the table "
        "above are no longer blind. keyword-config (.msmtprc, .fetchmailrc), wifi (wpa_supplicant, NetworkManager) "
        "and secrets-file (rsyncd.secrets, chap-secrets, a plain-text .htpasswd) were added to the set after their "
        "detectors."
    )
    add("")
    add(
        "By wrapper (both parts): "
        + ", ".join(f"{w} {pct(ok, n)}" for w, (ok, n) in cred["per_wrapper"].items())
        + "."
    )
    if cred["misses"]:
        add("")
        add("Missed: " + "; ".join(f"{f}/{p} `{t[:70]!r}`" for f, p, t in cred["misses"][:8]) + ".")
    if cred["flagged"]:
        add("")
        add(
            "Look-alikes flagged: "
            + "; ".join(f"{f}/{p} `{t[:70]!r}`" for f, p, t in cred["flagged"][:8])
            + "."
        )
    add("")
    add(
        f"One text at a time over this set: p50 {single_cred['p50']:.3f} ms, p99 {single_cred['p99']:.3f} ms."
    )
    add("")
    id_ok = _identifier_section(add, ids, id_cases, id_module, single_ids)
    if ds is not None:
        add("### detect-secrets as an extra layer (measured, not used)")
        add("")
        add(
            "detect-secrets 1.x, all default plugins, `scan_line` per line, values shorter than 8 characters "
            "dropped. 'either' is what memdeck would catch with detect-secrets added beside its rules."
        )
        add("")
        add("| set | memdeck rules | detect-secrets | either |")
        add("|---|---|---|---|")
        labels = {
            "tp": "gitleaks whole-secret tp caught",
            "fp": "gitleaks fp flagged",
            "dev": "dev-set secrets caught",
            "look": "dev-set look-alikes flagged",
        }
        for key, label in labels.items():
            a, b, c, n = ds["stats"][key]
            add(f"| {label} | {pct(a, n)} | {pct(b, n)} | {pct(c, n)} |")
        add(
            f"| {plain_source} flagged (first {ds['plain_n']}) | {ds['plain_ours']}/{ds['plain_n']} | "
            f"{ds['plain_flagged']}/{ds['plain_n']} | |"
        )
        add("")
        add(
            "Plugins behind the whole-secret tp records only detect-secrets finds: "
            + ", ".join(f"{k} {v}" for k, v in ds["added"].most_common())
            + ". Plugins firing on gitleaks fp "
            "records: " + ", ".join(f"{k} {v}" for k, v in ds["fp_types"].most_common(6)) + "."
        )
        add("")
        add(
            f"detect-secrets costs {ds['ms']:.3f} ms per conversation turn on its own. Verdict: not adopted. What "
            "it adds comes from its high-entropy plugins, which take sample URLs, timestamps and certificate base64 "
            "for secrets; the same plugins flag most fp records, most look-alikes and most ordinary conversation "
            "turns, and it would cost about a millisecond per text."
        )
        add("")
    add("### Speed (detection + tokens in memory, one core, best of 3)")
    add("")
    add("| texts | n | avg chars | texts/s | ms/text | ms per 200 chars |")
    add("|---|---|---|---|---|---|")
    add(
        f"| PII texts | {speed_pii['n']} | {speed_pii['avg_chars']:.0f} | {speed_pii['per_s']:.0f} | "
        f"{speed_pii['ms']:.3f} | {speed_pii['ms_per_200ch']:.3f} |"
    )
    add(
        f"| {plain_source}, nothing to redact | {speed_plain['n']} | {speed_plain['avg_chars']:.0f} | "
        f"{speed_plain['per_s']:.0f} | {speed_plain['ms']:.3f} | {speed_plain['ms_per_200ch']:.3f} |"
    )
    if speed_200:
        add(
            f"| same, 150-250 chars only | {speed_200['n']} | {speed_200['avg_chars']:.0f} | "
            f"{speed_200['per_s']:.0f} | {speed_200['ms']:.3f} | {speed_200['ms_per_200ch']:.3f} |"
        )
    add("")
    add(
        f"With the encrypted vault (redact_many over the PII texts, one vault write per batch): "
        f"{vault_speed['first_ms']:.3f} ms/text on the first pass (new tokens), "
        f"{vault_speed['again_ms']:.3f} ms/text once the values are known. "
        f"Budget: 0.3 ms for a 200-character sentence without PII."
    )
    add("")
    add(
        f"One text at a time, best of 3 per text (the redaction share of a single remember()): p50 {single_plain['p50']:.3f} ms, "
        f"p99 {single_plain['p99']:.3f} ms over {plain_source.lower()}; p50 {single_dev['p50']:.3f} ms, "
        f"p99 {single_dev['p99']:.3f} ms over the development set (every text holds a secret or a look-alike). "
        "Budget: 2 ms p50."
    )
    add("")
    add(
        f"Over-redaction on {plain_source}: {len(plain_flagged)}/{len(plain)} turns got a finding "
        f"({len(plain_flagged) / max(1, len(plain)):.4f})."
    )
    if plain_flagged:
        kinds = collections.Counter(s.kind for t in plain_flagged for s in redactor.detect(t))
        add(f"Kinds: {dict(kinds)}.")
    add("")
    pii_ok = all(pii["recall"][t] >= 1.0 for t in PII_TYPES)
    worst_ctx = min(((ok / n, ctx) for ctx, (ok, n) in dev["per_ctx"].items() if ctx != "lookalike"))
    whole = st["tp_whole"][0] / st["tp_whole"][1]
    fp_rate = st["fp_all"][0] / st["fp_all"][1]
    add("### Targets")
    add("")
    add("| target | measured | met |")
    add("|---|---|---|")
    add(
        f"| gitleaks whole-secret recall >= {TP_TARGET} | {whole:.3f} | {'yes' if whole >= TP_TARGET else 'NO'} |"
    )
    add(
        f"| dev-set recall >= {DEVSET_TARGET} in every context | lowest: {worst_ctx[1]} {worst_ctx[0]:.3f} | "
        f"{'yes' if worst_ctx[0] >= DEVSET_TARGET else 'NO'} |"
    )
    add(f"| gitleaks fp flagged <= {FP_TARGET} | {fp_rate:.3f} | {'yes' if fp_rate <= FP_TARGET else 'NO'} |")
    add(
        f"| PII recall 1.000 for every type | {min(pii['recall'].values()):.3f} lowest | {'yes' if pii_ok else 'NO'} |"
    )
    add(
        f"| over-redaction on {plain_source} = 0 | {len(plain_flagged)} | {'yes' if not plain_flagged else 'NO'} |"
    )
    worst_p50 = max(single_plain["p50"], single_dev["p50"], single_cred["p50"], single_ids["p50"])
    add(
        f"| credential files: recall >= {CRED_RECALL_TARGET} and look-alikes flagged <= {CRED_LOOK_TARGET} "
        f"per format, both parts | {'all formats' if cred_ok else 'see table'} | {'yes' if cred_ok else 'NO'} |"
    )
    add(
        f"| identifiers: recall >= {ID_RECALL_TARGET} per kind and no look-alike flagged, both parts | "
        f"{'all kinds' if id_ok else 'see table'} | {'yes' if id_ok else 'NO'} |"
    )
    add(f"| redaction p50 per text <= 2 ms | {worst_p50:.3f} ms | {'yes' if worst_p50 <= 2 else 'NO'} |")
    add("")
    report = "\n".join(lines)
    print(report)
    if args.verbose:
        print("\n--- PII misses")
        for t, vals in pii["misses"].items():
            print(t, vals)
        print("\n--- missed tp (whole)")
        for r, texts in gl["missed"].items():
            for t in texts:
                print(f"{r:32} {t[:160]!r}")
        print("\n--- flagged fp")
        for r, texts in gl["flagged"].items():
            for t in texts:
                print(f"{r:32} {t[:160]!r}")
        print("\n--- credential-file misses and flagged look-alikes")
        for f, p, t in cred["misses"] + cred["flagged"]:
            print(f"{f:16} {p:9} {t[:160]!r}")
        print("\n--- identifier misses and flagged look-alikes")
        for k, p, t in ids["misses"] + ids["flagged"]:
            print(f"{k:18} {p:9} {t[:160]!r}")
        print("\n--- development set misses")
        for c, r, t in dev["misses"]:
            print(f"{c:20} {r:22} {t[:160]!r}")
        print("\n--- LoCoMo turns flagged")
        for t in plain_flagged[:40]:
            res = redactor.redact(t, "x")
            print(repr(res.text[:200]), [f.rule for f in res.findings])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(report + "\n", encoding="utf-8")
    print(f"\nwritten to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
