"""Contradiction detection and merge safety on the labelled pair set (bench/contradiction_set.py).

    python bench/bench_contradictions.py [--out bench/RESULTS-contradictions.md]

Every pair is embedded with the real packaged all-MiniLM-L6-v2. A pair is *flagged* when consolidation
would flag it (cosine at or above the topic gate and ``compare`` says contradiction, or the
subject/predicate/value reader finds one attribute with two values); it is *merged* when consolidation
would merge it (cosine >= 0.92 and no merge blocker). Reports contradiction precision and recall, how many
opposites (contradiction-labelled pairs) would merge, and the other labels' outcomes.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_locomo import machine
from contradiction_set import labelled_pairs

from memdeck.core.consolidate import NEAR_DUPLICATE, contradicting_pairs, merge_blocker, parse_statement
from memdeck.core.embed import SentenceTransformerEmbedder


def evaluate() -> dict:
    pairs = labelled_pairs()
    embedder = SentenceTransformerEmbedder()
    embedder.load()
    texts = sorted({t for a, b, _ in pairs for t in (a, b)})
    vecs = dict(zip(texts, embedder.encode(texts), strict=True))
    rows = []
    for a, b, label in pairs:
        facts = [{"id": "a", "text": a, "vector": vecs[a]}, {"id": "b", "text": b, "vector": vecs[b]}]
        parsed = {"a": parse_statement(a), "b": parse_statement(b)}
        flagged = bool(contradicting_pairs(facts, parsed))
        cosine = float(np.dot(vecs[a], vecs[b]))
        merged = cosine >= NEAR_DUPLICATE and merge_blocker(a, b) is None
        rows.append({"a": a, "b": b, "label": label, "flagged": flagged, "merged": merged, "cosine": cosine})
    tp = sum(r["flagged"] and r["label"] == "contradiction" for r in rows)
    fp = sum(r["flagged"] and r["label"] != "contradiction" for r in rows)
    fn = sum(not r["flagged"] and r["label"] == "contradiction" for r in rows)
    return {
        "pairs": len(rows),
        "labels": Counter(r["label"] for r in rows),
        "precision": tp / (tp + fp) if tp + fp else 1.0,
        "recall": tp / (tp + fn) if tp + fn else 1.0,
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "opposites_merged": sum(r["merged"] and r["label"] == "contradiction" for r in rows),
        "merged_by_label": Counter(r["label"] for r in rows if r["merged"]),
        "errors": [r for r in rows if r["flagged"] != (r["label"] == "contradiction")],
    }


def render(res: dict, info: dict) -> str:
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "## Contradictions and merge safety (labelled pairs)",
        "",
        f"Run {when} on {info['os']}, {info['cores']} CPUs ({info['cpu']}); Python {info['python']}.",
        "`python bench/bench_contradictions.py`: model all-MiniLM-L6-v2 (packaged), pairs from "
        "`bench/contradiction_set.py`.",
        "",
        f"Pairs: {res['pairs']} ({', '.join(f'{k} {v}' for k, v in sorted(res['labels'].items()))}).",
        "",
        "| measure | value | target |",
        "|---|---|---|",
        f"| contradiction precision | {res['precision']:.3f} ({res['tp']} of {res['tp'] + res['fp']}) | >= 0.90 |",
        f"| contradiction recall | {res['recall']:.3f} ({res['tp']} of {res['tp'] + res['fn']}) | >= 0.85 |",
        f"| opposites merged | {res['opposites_merged']} | 0 |",
        "",
        "Pairs that would merge (cosine >= 0.92, no blocker), by label: "
        + (", ".join(f"{k} {v}" for k, v in sorted(res["merged_by_label"].items())) or "none")
        + ".",
        "",
        "The set was written together with the detector, so these figures are an upper bound for text of "
        "other shapes; the frames are generic (any subject, any value of a kind) and the hand-written pairs "
        "add shapes the frames do not have.",
        "",
        "Errors:",
        "",
    ]
    lines += [f'- {r["label"]}: "{r["a"]}" / "{r["b"]}"' for r in res["errors"]] or ["- none"]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out", type=Path, default=Path(__file__).resolve().parent / "RESULTS-contradictions.md"
    )
    args = parser.parse_args()
    res = evaluate()
    text = render(res, machine())
    args.out.write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
