"""Model-dependent cosine thresholds, carried from MiniLM to another model by matching shares of pairs.

    python bench/bench_model_thresholds.py [--model mpnet]

memdeck's thresholds (merge cosine, contradiction topic gate, entity-name near match) were set on
all-MiniLM-L6-v2's similarity scale. Another model spreads the same pairs differently, so each threshold is
carried over as the cosine that leaves the same share of a labelled set of pairs at or above it: the
statement pairs of bench/contradiction_set.py (paraphrases, refinements, contradictions, look-alikes) for
the statement thresholds, and pairs of entity names (the same name spelled otherwise, and different names)
for the name threshold. Prints the MiniLM threshold, its share, and the other model's matching cosine.

The relevance floor (``min_relevance``) is carried the same way as the cosine at which a memory that
matches by meaning alone (no shared word, no session context) reaches it: relevance is then
``(1 - keyword_blend) * cosine / (1 + neighbour_weight + session_weight)``, so MiniLM's floor of 0.1 is a
cosine of 0.217 under the default fusion; that cosine is carried over the statement and name pairs
together and turned back into a floor with the same formula.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from contradiction_set import labelled_pairs

NAMES = [
    ("Jonathan Smith", "Jon Smith"),
    ("Dr. Chen", "Doctor Chen"),
    ("Acme Corp", "Acme Corporation"),
    ("New York City", "NYC"),
    ("Priya Patel", "Priya"),
    ("Marco Rossi", "Marco"),
    ("Globex", "Globex Inc"),
    ("the billing service", "billing service"),
    ("Lisbon", "Lisboa"),
    ("OpenStreetMap", "Open Street Map"),
]


def cosines(embedder: object, pairs: list[tuple[str, str]]) -> np.ndarray:
    texts = sorted({t for pair in pairs for t in pair})
    vectors = embedder.encode(texts)  # type: ignore[attr-defined]
    at = {t: vectors[i] for i, t in enumerate(texts)}
    return np.array([float(np.dot(at[a], at[b])) for a, b in pairs])


def carry(base: np.ndarray, other: np.ndarray, threshold: float) -> tuple[float, float]:
    """The share of pairs at or above ``threshold`` on the base model, and the other model's cosine that
    leaves the same share at or above it."""
    share = float(np.mean(base >= threshold))
    if share <= 0.0:
        return share, float(other.max())
    return share, float(np.quantile(other, 1.0 - share, method="inverted_cdf"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="mpnet")
    args = parser.parse_args()
    from memdeck.core import models
    from memdeck.core.config import RecallSettings, load_settings
    from memdeck.core.embed import make_embedder

    settings = load_settings().embedding
    base = make_embedder(settings, "minilm")
    other = make_embedder(settings, args.model)
    other.load()
    statements = [(a, b) for a, b, _label in labelled_pairs()]
    names = list(NAMES)
    plain = [a for a, _ in NAMES]
    names += [(a, b) for a, b in itertools.combinations(plain, 2)]  # different names: should stay apart
    t = models.MODELS["minilm"].thresholds
    rows = []
    s_base, s_other = cosines(base, statements), cosines(other, statements)
    n_base, n_other = cosines(base, names), cosines(other, names)
    for label, value, b, o in (
        ("near_duplicate", t.near_duplicate, s_base, s_other),
        ("topic_gate", t.topic_gate, s_base, s_other),
        ("name_near_match", t.name_near_match, n_base, n_other),
    ):
        share, carried = carry(b, o, value)
        rows.append((label, value, share, carried))
    # The floor as the cosine of a meaning-only match, carried over every pair, and back.
    fusion = RecallSettings()
    scale = (1 - fusion.keyword_blend) / (1 + fusion.neighbour_weight + fusion.session_weight)
    share, carried = carry(
        np.concatenate([s_base, n_base]), np.concatenate([s_other, n_other]), t.min_relevance / scale
    )
    rows.append(("min_relevance", t.min_relevance, share, carried * scale))
    print(f"{len(statements)} statement pairs, {len(names)} name pairs; {other.name}")
    print("| threshold | MiniLM | share of pairs at or above | " + other.name + " |")
    print("|---|---|---|---|")
    for label, value, share, carried in rows:
        print(f"| {label} | {value:.2f} | {share:.3f} | {carried:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
