"""Train the learned reading of guessed entity kinds (core/graph/memory/kinds.py) for the packaged model.

    python bench/train_kinds.py [--gold tests/data/graph_extraction_gold.jsonl]
                                [--out core/data/kind_weights.json] [--report bench/RESULTS-kinds-training.md]

Every guessed name of the development splits (bench/bench_graph_extract.py: every split but the last
held-out one, which is never read here) whose labelled kind is a person, place, organisation or product is one
example; its features are :func:`memdeck.core.graph.memory.kinds.features`, computed with the split's own names
taken out of the known names (as the bench scores it: a split never meets its own labels). A multinomial
logistic regression (scikit-learn, L2, C below) is fitted on them all and written with the model's name and
the lists' fingerprint.

The report is a leave-one-split-out estimate: for each development split, with weights fitted on the others,
the precision and coverage of the kinds over its matched entities (every kind the text states counted too, as
the bench does), read six ways: the margins alone (the reading before the weights), the learned reading's
likeliest kind, that kind only at a probability of at least CONFIDENCE (else "other"), the learned kind when
the margins agree or it is that sure, the learned kind when the margins agree, and the learned kind when it
is that sure and the margins agree (shipped: the most precise; the others "other" elsewhere).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.linear_model import LogisticRegression

from memdeck.core.config import EmbeddingSettings
from memdeck.core.embed import make_embedder
from memdeck.core.graph.extract import extract, name_contexts, normalise_name
from memdeck.core.graph.memory import kinds as K

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_graph_extract import DEV_SPLITS, REPO, load

C = 1.0  # L2 strength (inverse); 0.3, 1 and 3 were compared leave-one-split-out, see the report
KINDS = list(K._KINDS)
READINGS = ("rule", "learned", "confident", "agreed", "concur", "both")


def examples(
    rows: list[dict[str, Any]], encode: Callable[[list[str]], np.ndarray], model: str
) -> list[dict[str, Any]]:
    """One record per matched entity of the rows: gold kind, the text's kind, and for a guessed name that is
    not a known name its features and the context's rulings."""
    protos = K.prototypes(model, encode)
    out: list[dict[str, Any]] = []
    for split in sorted({r["split"] for r in rows}):
        own = [r for r in rows if r["split"] == split]
        keys = {normalise_name(e["name"]) for r in own for e in r["entities"]}
        p = protos.without({n for _k, n in K.known_names() if normalise_name(n) in keys})
        for at, row in enumerate(own):
            gold = {normalise_name(e["name"]): e["kind"] for e in row["entities"]}
            got = extract(row["text"])
            contexts = name_contexts(row["text"], got.entities)
            guessed = [(e, c) for e, c in zip(got.entities, contexts, strict=True) if e.guessed]
            units = K._unit(encode([e.name for e, _c in guessed])) if guessed else np.zeros((0, 1))
            masked = K._unit(encode([c.masked for _e, c in guessed if c is not None])) if guessed else None
            m = 0
            seen: set[str] = set()
            for e in got.entities:
                key = normalise_name(e.name)
                if key in seen or key not in gold:
                    continue
                seen.add(key)
                rec: dict[str, Any] = {"split": split, "row": at, "gold": gold[key], "kind": e.kind}
                if e.guessed and K._refinable(e.kind):
                    j = next(j for j, (g, _c) in enumerate(guessed) if g is e)
                    c = guessed[j][1]
                    ctx = None
                    if c is not None:
                        assert masked is not None
                        ctx = masked[sum(1 for g in guessed[:j] if g[1] is not None)]
                    known = p.known(units[j])
                    exclude = c.exclude if c is not None else frozenset()
                    rec.update(
                        exclude=exclude,
                        group=c.group if c is not None else None,
                        partner=c.partner if c is not None else None,
                        known=known if known is not None and known not in exclude else None,
                        x=K.features(p, units[j], ctx, e.kind, exclude, p.scores(units[j], ctx)),
                    )
                    m += 1
                out.append(rec)
    return out


def fit(train: list[dict[str, Any]], c: float = C) -> LogisticRegression:
    xs = [r for r in train if "x" in r and r["known"] is None and r["gold"] in KINDS]
    return LogisticRegression(C=c, max_iter=5000).fit(
        np.stack([r["x"] for r in xs]), np.array([KINDS.index(r["gold"]) for r in xs])
    )


def decide(test: list[dict[str, Any]], model: LogisticRegression) -> list[dict[str, str]]:
    """Per record, as refine_all reads it (known names, partners and groups included): the margins' kind
    (``rule``), the learned reading's likeliest (``learned``), that kind at a probability of at least
    CONFIDENCE (``confident``), when the margins agree or it is that sure (``agreed``), when the margins agree
    (``concur``), and when it is that sure and the margins agree (``both``, shipped); else "other"."""
    out: list[dict[str, str]] = []
    probs: dict[int, np.ndarray] = {}
    scores: dict[int, dict[str, float]] = {}

    def read(kind: str, s: dict[str, float], p: np.ndarray, exclude: frozenset[str]) -> dict[str, str]:
        rule = K._decide(kind, s, exclude)
        allowed = p * np.array([k not in exclude for k in KINDS])
        allowed = allowed / allowed.sum() if allowed.sum() > 0 else allowed
        best = KINDS[int(np.argmax(allowed))]
        return {
            "rule": rule,
            "learned": best,
            "confident": best if allowed.max() >= K.CONFIDENCE else "other",
            "agreed": best if best == rule or allowed.max() >= K.CONFIDENCE else "other",
            "concur": best if best == rule else "other",
            "both": K._read(kind, p, s, exclude),
        }

    for i, r in enumerate(test):
        if "x" not in r or r["known"] is not None:
            k = r["known"] if "x" in r else r["kind"]
            out.append(dict.fromkeys(READINGS, k))
            continue
        probs[i] = model.predict_proba(r["x"][None])[0]
        scores[i] = dict(zip(KINDS, (float(v) for v in r["x"][: len(KINDS)]), strict=True))
        out.append(read(r["kind"], scores[i], probs[i], r["exclude"]))
    groups: dict[tuple[str, int, int], list[int]] = {}
    for i, r in enumerate(test):
        if i in probs and r["group"] is not None:
            groups.setdefault((r["split"], r["row"], r["group"]), []).append(i)
    for members in groups.values():
        partner = test[members[0]]["partner"]
        if partner is not None:
            for i in members:
                out[i] = dict.fromkeys(READINGS, partner)
            continue
        if len(members) < 2 or len({test[i]["kind"] for i in members}) > 1:
            continue
        exclude = frozenset().union(*(test[i]["exclude"] for i in members))
        mean_s = {k: sum(scores[i][k] for i in members) / len(members) for k in KINDS}
        mean_p = sum(probs[i] for i in members) / len(members)
        got = read(test[members[0]]["kind"], mean_s, mean_p, exclude)
        for i in members:
            out[i] = got
    return out


def held_out_table(records: list[dict[str, Any]], splits: list[str], c: float) -> list[str]:
    """One row per split: precision / coverage of each reading, the split's kinds read by weights fitted on
    the other splits. A kind counts as given unless it is "other" where the label is not."""
    lines = []
    totals = {k: [0, 0, 0] for k in READINGS}
    for split in splits:
        test = [r for r in records if r["split"] == split]
        got = decide(test, fit([r for r in records if r["split"] != split], c))
        cells = []
        for reading in READINGS:
            given = [(g[reading], r["gold"]) for g, r in zip(got, test, strict=True)]
            given = [(k, gold) for k, gold in given if k != "other" or gold == "other"]
            right = sum(k == gold for k, gold in given)
            totals[reading][0] += right
            totals[reading][1] += len(given)
            totals[reading][2] += len(test)
            cells.append(f"{right / len(given):.3f} / {len(given) / len(test):.2f}")
        lines.append(f"| {split} | {len(test)} | " + " | ".join(cells) + " |")
    cells = [f"{t[0] / t[1]:.3f} / {t[1] / t[2]:.2f}" for t in totals.values()]
    lines.append(
        f"| all | {sum(t[2] for t in totals.values()) // len(READINGS)} | " + " | ".join(cells) + " |"
    )
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gold", type=Path, default=REPO / "tests" / "data" / "graph_extraction_gold.jsonl")
    ap.add_argument("--out", type=Path, default=REPO / "core" / "data" / "kind_weights.json")
    ap.add_argument("--report", type=Path, default=REPO / "bench" / "RESULTS-kinds-training.md")
    args = ap.parse_args()
    rows = [r for r in load(args.gold) if r["split"] in DEV_SPLITS]
    embedder = make_embedder(EmbeddingSettings())
    records = examples(rows, embedder.encode, embedder.name)
    final = fit(records)
    n = sum(1 for r in records if "x" in r and r["known"] is None and r["gold"] in KINDS)
    weights = {
        "about": "Learned reading of guessed entity kinds; written by bench/train_kinds.py, do not edit.",
        "models": {
            embedder.name: {
                "fingerprint": K.fingerprint(),
                "classes": KINDS,
                "features": K.FEATURES,
                "C": C,
                "examples": n,
                "splits": list(DEV_SPLITS),
                "coef": [[round(float(v), 6) for v in row] for row in final.coef_],
                "intercept": [round(float(v), 6) for v in final.intercept_],
            }
        },
    }
    assert final.coef_.shape == (len(KINDS), K.FEATURES)
    args.out.write_text(json.dumps(weights, indent=1) + "\n", encoding="utf-8")
    splits = [s for s in DEV_SPLITS if any(r["split"] == s for r in records)]
    sure = f"at least {K.CONFIDENCE}"
    head = f"| split | matched | margins | learned | {sure} | {sure} or agreed | agreed | {sure} and agreed (shipped) |"
    rule = "|---|---|" + "---|" * len(READINGS)
    load_avg = " ".join(f"{v:.2f}" for v in os.getloadavg())
    report = [
        "## Learned reading of guessed entity kinds: leave-one-split-out",
        "",
        f"Run {datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {platform.platform()}, {os.cpu_count()} CPUs (load "
        f"average {load_avg}), Python {platform.python_version()}. `python bench/train_kinds.py`.",
        "",
        f"{n} guessed names of the development splits ({', '.join(splits)}), features with each split's own",
        "names taken out of the known names. For each split: weights fitted on the other splits, then over its",
        "matched entities (the kinds the text states included) the precision of the kinds given and the share",
        'given (coverage; "other" where the label is not counts as not given), for six readings: the margins',
        "alone (as before the weights), the learned reading's likeliest kind, and that kind only when its",
        f"probability is at least {K.CONFIDENCE}, when it is that sure or the margins agree, when the margins",
        'agree, and when it is that sure and the margins agree (shipped); else "other". The margins were',
        "built on the splits before heldout-kinds6, so the readings that use them are in-sample there. The",
        f"shipped weights are fitted on every split below at C = {C}.",
        "",
    ]
    for c in (0.3, C, 3.0):
        report += [f"C = {c}: precision / coverage", "", head, rule, *held_out_table(records, splits, c), ""]
    args.report.write_text("\n".join(report), encoding="utf-8")
    print("\n".join(report))


if __name__ == "__main__":
    main()
