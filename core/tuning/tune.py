"""Search weights and half-lives that maximise nDCG@k on the saved judgments.

Judged queries are split deterministically by a hash of (principal, query): about 70 % train, 30 % held
out. The search is seeded random sampling followed by local perturbation of the best so far, scored on
the train split only; the held-out split reports how the result generalises. Each query is recalled once
and re-ranked per trial (see :mod:`memdeck.core.tuning.evaluate`), so a trial costs microseconds per query.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from memdeck.core.config import COMPONENTS, DEFAULT_HALF_LIFE_DAYS, Profile, load_profile, save_profile
from memdeck.core.errors import MemdeckError
from memdeck.core.filters import Scope
from memdeck.core.tuning.evaluate import Prepared, judged_queries, prepare, score

if TYPE_CHECKING:
    from memdeck.core.storage.engine import Engine

TRAIN_SHARE = 0.7
HALF_LIFE_RANGE = (1.0, 3650.0)


def split_of(query: str, principal: str) -> str:
    """'train' or 'test', fixed for a (principal, query) pair across runs and machines."""
    digest = hashlib.sha256(f"{principal}\x00{query}".encode()).digest()
    return "train" if int.from_bytes(digest[:4], "big") / 2**32 < TRAIN_SHARE else "test"


def _random_profile(rng: np.random.Generator, name: str) -> Profile:
    weights = dict.fromkeys(COMPONENTS, 0.0)
    weights["relevance"] = float(rng.uniform(0.2, 1.0))
    for c in COMPONENTS[1:]:
        weights[c] = 0.0 if rng.random() < 0.35 else float(rng.uniform(0.0, 0.5))
    lo, hi = (math.log(v) for v in HALF_LIFE_RANGE)
    half = {t: float(math.exp(rng.uniform(lo, hi))) for t in DEFAULT_HALF_LIFE_DAYS}
    return Profile(name, weights, half)


def _perturb(rng: np.random.Generator, base: Profile, scale: float) -> Profile:
    weights = dict(base.weights)
    for c in rng.choice(COMPONENTS, size=int(rng.integers(1, 3)), replace=False):
        weights[str(c)] = float(np.clip(weights[str(c)] + rng.normal(0, scale), 0.0, 1.0))
    half = dict(base.half_life_days)
    if rng.random() < 0.4:
        tier = str(rng.choice(list(half)))
        half[tier] = float(np.clip(half[tier] * math.exp(rng.normal(0, 1.0)), *HALF_LIFE_RANGE))
    return Profile(base.name, weights, half)


def _round(profile: Profile, name: str) -> Profile:
    return Profile(
        name,
        {c: round(profile.weights.get(c, 0.0), 3) for c in COMPONENTS},
        {t: round(v, 1) for t, v in profile.half_life_days.items()},
    )


def search(
    train: Sequence[Prepared], start: Profile, *, trials: int, seed: int, k: int
) -> tuple[Profile, float, int]:
    """Seeded random search, then local refinement; returns (best, its train nDCG, trials run)."""
    key = f"ndcg@{k}"
    rng = np.random.default_rng(seed)

    def objective(p: Profile) -> float:
        return float(score(train, p, k).get(key, 0.0))

    best, best_value = start, objective(start)
    explore = max(trials // 2, 1)
    for n in range(1, trials):
        candidate = (
            _random_profile(rng, "trial")
            if n < explore
            else _perturb(rng, best, 0.15 * (1 - n / trials) + 0.02)
        )
        value = objective(candidate)
        # Strictly better only: on a tie the earlier (simpler, closer to the start) profile stays.
        if value > best_value + 1e-12:
            best, best_value = candidate, value
    return best, best_value, trials


def tune(
    store: Engine,
    *,
    trials: int = 200,
    seed: int = 0,
    k: int = 10,
    start: Profile | str | None = None,
    save: str | None = None,
    scope: Scope = Scope.everyone(),
) -> dict[str, Any]:
    """Tune a profile on the train split; report both splits; optionally save it under ``save``."""
    if trials < 1:
        raise MemdeckError("--trials must be at least 1")
    base = start if isinstance(start, Profile) else load_profile(start)
    queries = [q for q in judged_queries(store, scope) if q.relevant]
    if not queries:
        raise MemdeckError("no judged queries with a relevant memory: judge some recalls first")
    prepared = prepare(store, queries, k)
    train = [p for p in prepared if split_of(p.judged.query, p.judged.principal) == "train"]
    test = [p for p in prepared if split_of(p.judged.query, p.judged.principal) == "test"]
    if not train:
        raise MemdeckError(
            f"all {len(prepared)} judged queries fell in the held-out split; judge more queries"
        )
    best, _, ran = search(train, base, trials=trials, seed=seed, k=k)
    tuned = _round(best, save or "tuned")
    out: dict[str, Any] = {
        "k": k,
        "trials": ran,
        "seed": seed,
        "split": {
            "train": len(train),
            "test": len(test),
            "rule": f"sha256(principal, query) < {TRAIN_SHARE}",
        },
        "start": base.to_dict(),
        "tuned": tuned.to_dict(),
        "train": {"start": score(train, base, k), "tuned": score(train, tuned, k)},
        "test": {"start": score(test, base, k), "tuned": score(test, tuned, k)} if test else None,
    }
    if save:
        out["saved_to"] = str(save_profile(tuned))
    return out
