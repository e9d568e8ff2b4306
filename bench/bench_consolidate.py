"""Consolidation at a realistic size for one person: LoCoMo conversations as episodes (each session one
episode, its turns the events), plus derived facts, with the real model; first run and an idle re-run.

    python bench/bench_consolidate.py [--conversations 10]     # writes bench/RESULTS-consolidate.md
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--conversations", type=int, default=10)
    args = parser.parse_args()
    from conftest import shared_data

    from memdeck.core.consolidate import consolidate, contradictions
    from memdeck.core.filters import Scope
    from memdeck.core.store import MemoryInput, Store

    data_dir = shared_data()
    if data_dir is None:
        raise SystemExit("LoCoMo data not found (../shared/data or $MEMDECK_SHARED_DATA)")
    convs = json.loads((data_dir / "locomo" / "locomo10.json").read_text())[: args.conversations]
    home = Path(tempfile.mkdtemp(prefix="memdeck-bench-cons-"))
    os.environ["MEMDECK_HOME"] = str(home)
    store = Store.open(home / "store")
    inputs = []
    for n, conv in enumerate(convs):
        c = conv["conversation"]
        principal = f"user{n}"
        for key in sorted(k for k in c if k.startswith("session_") and not k.endswith("date_time")):
            turns = c[key]
            events = [{"role": t["speaker"], "text": t["text"]} for t in turns]
            summary = (conv.get("session_summary") or {}).get(f"{key}_summary") or " ".join(
                t["text"] for t in turns[:3]
            )
            facts = list((conv.get("observation", {}).get(f"{key}_observation", {}) or {}).values())
            derived = [f[0] if isinstance(f, list) else str(f) for group in facts for f in group][:20]
            inputs.append(
                MemoryInput(
                    text=summary,
                    tier="episodic",
                    principal=principal,
                    agent="bench",
                    extra={"events": events, "derived_facts": derived},
                )
            )
    t0 = time.perf_counter()
    store.remember_many(inputs)
    write_s = time.perf_counter() - t0
    rows = []
    for n in range(len(convs)):
        principal = f"user{n}"
        t0 = time.perf_counter()
        first = consolidate(store.engine, principal)
        t1 = time.perf_counter()
        second = consolidate(store.engine, principal)
        t2 = time.perf_counter()
        rows.append(
            (
                principal,
                first,
                t1 - t0,
                second,
                t2 - t1,
                len(contradictions(store.engine, Scope.of(principal))),
            )
        )
        print(
            principal,
            first.episodes_scanned,
            len(first.facts_added),
            len(first.merged),
            round(t1 - t0, 2),
            second.changed,
            round(t2 - t1, 2),
        )
    store.close()
    lines = [
        "# Consolidation",
        "",
        f"Measured {datetime.now(UTC):%Y-%m-%d} on {platform.machine()}, {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}, all-MiniLM-L6-v2 on CPU; load average {os.getloadavg()[0]:.1f} "
        f"(shared machine). `python bench/bench_consolidate.py --conversations {args.conversations}`.",
        "",
        "Each LoCoMo conversation is one principal; each session one episode (its summary as the text, its turns as events, its "
        "`observation` lists as derived facts, at most 20). Writing the episodes took "
        f"{write_s:.1f} s for {len(inputs)} episodes.",
        "",
        "| principal | episodes | facts added | merged | contradictions | first run | second run | second run changed |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for principal, first, s1, second, s2, ncontra in rows:
        lines.append(
            f"| {principal} | {first.episodes_scanned} | {len(first.facts_added)} | {len(first.merged)} | {ncontra} | "
            f"{s1:.2f} s | {s2:.2f} s | {second.changed} |"
        )
    lines.append("")
    out = Path(__file__).with_name("RESULTS-consolidate.md")
    out.write_text("\n".join(lines), encoding="utf-8")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
