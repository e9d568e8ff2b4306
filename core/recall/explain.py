"""Why (not): where one memory stood in one recall, and the smallest weight change that would return it.

The answer walks the recall's path in order:

1. visibility: a memory outside the caller's scope, or one that does not exist, gets the same answer,
   "not visible in this scope", and nothing else (no state, no score, no hint that it exists);
2. filters: a deprecated or being-forgotten memory is left out before search; a memory past its tier's
   TTL is reported (recall still sees it until the expiry sweep acts on it);
3. channels: its exact cosine to the query and its rank by vector among the scope's rows of its tier, and
   its keyword (BM25) score and rank, against the per-tier candidate limit each channel has;
4. scoring: its components and score beside the k-th result's, and the smallest change of one weight
   (then of a pair) within [0, 1] that brings it into the top k. Weights only re-rank candidates, so for a
   memory that was no candidate the answer also says what k would have made it one.
"""

from __future__ import annotations

import itertools
import math
from typing import TYPE_CHECKING, Any, Literal, NotRequired, TypedDict

import numpy as np

from memdeck.core import filters as F
from memdeck.core.config import COMPONENTS, Profile, expiry_rules, load_profile
from memdeck.core.errors import MemdeckError, NotFound
from memdeck.core.filters import Scope
from memdeck.core.recall import timecue
from memdeck.core.records import check_text, now

if TYPE_CHECKING:
    from memdeck.core.storage.engine import Engine

NOT_VISIBLE = "not visible in this scope"
WEIGHT_RANGE = (0.0, 1.0)
KEYWORD_RANK_LIMIT = 100_000  # beyond this many keyword matches the rank is reported as "> limit"

Status = Literal["not_visible", "filtered", "below_floor", "returned", "below_k", "not_candidate"]


# "from" is a keyword: the functional form keeps the JSON key. The tier's TTL as the expiry filter applies it.
TtlInfo = TypedDict(
    "TtlInfo",
    {"days": float, "from": str, "age_days": float, "expired": bool, "note": NotRequired[str]},
)


class VectorChannel(TypedDict):
    candidate_limit: int
    cosine: NotRequired[float]
    rank: NotRequired[int]
    reached: NotRequired[bool]
    note: NotRequired[str]


class KeywordChannel(TypedDict):
    candidate_limit: int
    rank: NotRequired[int | None]
    score: NotRequired[float]
    reached: NotRequired[bool]
    note: NotRequired[str]
    matches: NotRequired[int]


class GraphChannel(TypedDict):
    score: float
    rank: int | None
    query_entities: NotRequired[int]
    reached_entities: NotRequired[int]
    reached_memories: NotRequired[int]
    note: NotRequired[str]


class Channels(TypedDict):
    """Each channel's view of the memory in this recall."""

    vector: VectorChannel
    keyword: KeywordChannel
    rows_in_scope: int
    graph: NotRequired[GraphChannel]


WeightStep = TypedDict("WeightStep", {"weight": str, "from": float, "to": float, "rank": int})


class WeightChange(TypedDict):
    """The smallest change of one weight (``single``), else two (``pair``), that returns the memory."""

    kind: Literal["single", "pair", "none"]
    change: NotRequired[list[WeightStep]]
    alternatives: NotRequired[list[list[WeightStep]]]
    note: NotRequired[str]


class ImportanceInfo(TypedDict):
    """Importance as stored (reinforced by evidence) and as scored, after decaying with disuse."""

    stored: float
    effective: float
    idle_days: float | None  # since a recall last returned it; None: never
    half_life_days: float


class TimeCue(TypedDict):
    """The query asks when (``recall.timecue``): whether the memory states a time, and what that does to its
    match."""

    states_time: bool
    match_factor: float  # 1 + time_cue_weight where it states a time, else 1


class Explanation(TypedDict):
    """What ``memdeck explain`` prints as JSON: where one memory stood in one recall, and why."""

    query: str
    memory_id: str
    k: int
    profile: str
    status: NotRequired[Status]  # set on every answer; absent only while it is being built
    reason: NotRequired[str]
    tier: NotRequired[str]
    ttl: NotRequired[TtlInfo | None]
    state: NotRequired[str]
    returned: NotRequired[list[str]]
    channels: NotRequired[Channels]
    components: NotRequired[dict[str, float]]
    score: NotRequired[float]
    min_relevance: NotRequired[float]
    below_floor: NotRequired[bool]
    kth_score: NotRequired[float]
    rank: NotRequired[int]
    weight_change: NotRequired[WeightChange]
    would_rank: NotRequired[int]
    k_needed: NotRequired[int | None]
    importance: NotRequired[ImportanceInfo]
    time_cue: NotRequired[TimeCue]


def explain(
    store: Engine,
    query: str,
    memory_id: str,
    scope: Scope,
    k: int = 10,
    profile: Profile | str | None = None,
    *,
    tiers: list[str] | None = None,
) -> Explanation:
    """Where ``memory_id`` stood in the recall of ``query`` for ``scope``; see the module docstring.

    Returns a JSON-ready dict with ``status`` one of: ``not_visible``, ``filtered``, ``returned``,
    ``below_k`` (a candidate ranked below k), ``not_candidate`` (neither channel reached it).
    """
    check_text(query, "query")
    if not isinstance(k, int) or not 1 <= k <= 1000:
        raise MemdeckError(f"k must be between 1 and 1000, got {k!r}")
    prof = profile if isinstance(profile, Profile) else load_profile(profile or store.settings.recall.profile)
    base: Explanation = {"query": query, "memory_id": memory_id, "k": k, "profile": prof.name}
    try:
        memory = store.get(memory_id, scope)
    except NotFound:
        return {**base, "status": "not_visible", "reason": NOT_VISIBLE}
    if tiers and memory.tier not in tiers:
        return {
            **base,
            "status": "filtered",
            "tier": memory.tier,
            "reason": f"it is a {memory.tier} memory and the recall searched {', '.join(tiers)}",
        }
    base["tier"] = memory.tier
    base["ttl"] = _ttl(store, memory)
    if memory.state != "active":
        why = {
            "deprecated": "deprecated"
            + (f" ({memory.deprecation_reason})" if memory.deprecation_reason else ""),
            "forgotten-pending": "being forgotten",
        }.get(memory.state, memory.state)
        return {
            **base,
            "status": "filtered",
            "state": memory.state,
            "reason": f"{why}: recall leaves out memories that are not active",
        }

    from memdeck.core.recall.search import recall

    # The recall itself, unrecorded: no access counted, no trace logged.
    result = store.read_retry(lambda: recall(store, query, scope=scope, tiers=tiers, k=k, profile=prof))
    result.source = "explain"
    base["returned"] = [s.memory.id for s in result.items]
    channels = _channels(store, result, memory, scope)
    channels["graph"] = _graph_channel(store, result, memory, scope)
    base["channels"] = channels
    cset = result.candidates
    if cset.time_weight > 0:
        states = timecue.states_time(memory.text)
        base["time_cue"] = {
            "states_time": states,
            "match_factor": round(1.0 + cset.time_weight, 6) if states else 1.0,
        }
    index = cset.index_of(memory.id)
    candidate = index is not None
    if index is None:
        from memdeck.core.recall.search import extra_candidate

        extra = extra_candidate(
            store,
            result,
            memory,
            channels["vector"].get("cosine"),
            channels["keyword"].get("score"),
            channels["vector"].get("rank"),
            channels["keyword"].get("rank"),
        )
        extra.graph = float(channels["graph"]["score"])
        cset = cset.including(extra)
        index = len(cset) - 1
    total, comps = cset.scores(prof, result.keyword_only)
    order = _order(cset, total)
    base["components"] = {name: round(float(comps[j, index]), 6) for j, name in enumerate(COMPONENTS)}
    base["score"] = round(float(total[index]), 6)
    base["importance"] = _importance(cset, prof, index, comps)
    floor = prof.floor(cset.model_floor)  # the profile's, else the store's model's
    base["min_relevance"] = floor
    kept = cset.above_floor(prof, result.keyword_only)  # judged without the time cue
    relevance = float(cset.fusion(result.keyword_only)["floor"][index])
    base["below_floor"] = not kept[index]
    if candidate and not kept[index]:
        return {
            **base,
            "status": "below_floor",
            "reason": f"relevance {relevance:.3f} is below the profile's floor (min_relevance "
            f"{floor:g}): no weight returns it; lower min_relevance to see it",
        }
    order = order[kept[order] | (order == index)]
    rank = int(np.where(order == index)[0][0]) + 1
    if len(order) >= k:
        base["kth_score"] = round(float(total[order[k - 1]]), 6)
    if candidate and rank <= k:
        return {**base, "status": "returned", "rank": rank, "reason": f"returned at rank {rank}"}

    change = smallest_change(cset, prof, index, k, result.keyword_only)
    base["weight_change"] = change
    if candidate:
        return {
            **base,
            "status": "below_k",
            "rank": rank,
            "reason": f"a candidate, but ranked {rank} under {prof.name} (top {k} returned)",
        }
    need = _k_needed(store, channels, k)
    base["would_rank"] = rank
    base["k_needed"] = need
    reason = "no channel reached it: " + _channel_words(channels)
    reason += "; weights only re-rank candidates, so no weight change can return it"
    if need is not None:
        reason += f"; a recall with k >= {need} would make it a candidate"
    if base["below_floor"]:
        reason += f"; its relevance is also below the floor (min_relevance {floor:g})"
    return {**base, "status": "not_candidate", "reason": reason}


def _importance(cset: Any, prof: Profile, index: int, comps: np.ndarray) -> ImportanceInfo:
    """Importance as stored (reinforced by evidence) and as scored, after decaying with disuse."""
    from memdeck.core.recall.scoring import importance_half_life

    idle = float(cset.idle_days[index])
    return {
        "stored": round(float(cset.importance[index]), 6),
        "effective": round(float(comps[COMPONENTS.index("importance"), index]), 6),
        "idle_days": None if math.isnan(idle) else round(idle, 2),
        "half_life_days": importance_half_life(prof),
    }


def _graph_channel(store: Engine, result: Any, memory: Any, scope: Scope) -> GraphChannel:
    """The graph channel's view of the memory: its score, its rank among every memory the graph reached
    from the query's entities, and how many entities the query named and the traversal reached."""
    from memdeck.core.graph.memory.recall import graph_channel

    if not store.graph_enabled:
        return {"score": 0.0, "rank": None, "note": "the graph channel is off ([graph] enabled = false)"}
    depth = store.settings.graph.depth
    hits = graph_channel(store, scope, result.query, None, 1_000_000, depth)
    rank = hits.ranked.index(memory.id) + 1 if memory.id in hits.scores else None
    out: GraphChannel = {
        "score": round(hits.scores.get(memory.id, 0.0), 6),
        "rank": rank,
        "query_entities": len(hits.entities),
        "reached_entities": hits.reached,
        "reached_memories": len(hits.scores),
    }
    if rank is None:
        out["note"] = (
            "the query names no entity"
            if not hits.entities
            else "it mentions none of the entities the query reaches"
        )
    return out


def _order(cset: Any, total: np.ndarray) -> np.ndarray:
    return np.lexsort((np.arange(len(total)), -cset.similarity, -total))


def _ttl(store: Engine, memory: Any) -> TtlInfo | None:
    """The tier's TTL as the expiry filter applies it: counted from the write, or for ``ttl_from =
    "last_used"`` from the last recall that returned the memory (else the write); never for a pinned one."""
    days, start = expiry_rules(store.settings)[memory.tier]
    if days <= 0 or memory.created_at is None:
        return None
    used = start == "last_used" and memory.last_accessed is not None
    anchor = memory.last_accessed if used else memory.created_at
    age = (now() - anchor).total_seconds() / 86400
    out: TtlInfo = {
        "days": days,
        "from": "last_used" if used else "created",
        "age_days": round(age, 2),
        "expired": age > days and not memory.pinned,
    }
    if memory.pinned:
        out["note"] = "pinned: a TTL never expires it"
    elif out["expired"]:
        out["note"] = "past its TTL: hidden from recall, list and export; the next maintenance purges it"
    return out


def _channels(store: Engine, result: Any, memory: Any, scope: Scope) -> Channels:
    """Exact cosine and keyword score of the memory, and its ranks in each channel for its tier."""
    from memdeck.core.recall.search import candidate_limit, keyword_search, state_filter

    tbl = store.table(memory.tier)
    where = F.all_of(scope.where(), state_filter(False))
    limit = candidate_limit(store, result.k)
    vector: VectorChannel = {"candidate_limit": limit}
    qvec = None
    if not result.keyword_only:
        qvec = store.query_vector(result.query)
        mvec = store.get_vector(memory)
        if mvec is not None and not memory.meta.get("unembedded"):
            cos = float(np.dot(mvec, qvec))
            vector["cosine"] = round(cos, 6)
            vector["rank"] = _vector_rank(tbl, where, qvec, cos)
            vector["reached"] = vector["rank"] <= limit
        else:
            vector["note"] = "this memory has no embedding (written while the model was unavailable)"
    else:
        vector["note"] = "semantic search was unavailable for this recall"
    keyword: KeywordChannel = {"candidate_limit": limit}
    rows_in_scope = tbl.count_rows(where)
    cap = max(1, min(rows_in_scope, KEYWORD_RANK_LIMIT))
    hits = keyword_search(tbl, result.query, where, cap, ["id"])
    for n, row in enumerate(hits, start=1):
        if row["id"] == memory.id:
            keyword.update(
                {"rank": n, "score": round(float(row.get("_score") or 0.0), 6), "reached": n <= limit}
            )
            break
    else:
        keyword["rank"] = None
        keyword["note"] = (
            "no query word matches it" if len(hits) < cap else f"not among the first {cap} keyword matches"
        )
        keyword["reached"] = False
    keyword["matches"] = len(hits)
    return {"vector": vector, "keyword": keyword, "rows_in_scope": rows_in_scope}


def _vector_rank(tbl: Any, where: str | None, qvec: np.ndarray, cos: float) -> int:
    """1 + how many of the scope's rows are strictly closer to the query (exact, by brute force)."""
    import pyarrow as pa

    ds = tbl.to_lance()
    better = 0
    for batch in ds.to_batches(columns=["vector"], filter=where, batch_size=8192):
        col = batch.column("vector")
        if len(col) == 0:
            continue
        flat = col.flatten() if isinstance(col, pa.FixedSizeListArray) else pa.concat_arrays([col]).flatten()
        mat = np.asarray(flat.to_numpy(zero_copy_only=False), dtype=np.float32).reshape(len(col), -1)
        better += int(np.count_nonzero(mat @ qvec > cos + 1e-7))
    return better + 1


def _channel_words(ch: Channels) -> str:
    parts = []
    v, kw = ch["vector"], ch["keyword"]
    if "rank" in v:
        parts.append(
            f"vector rank {v['rank']} (cosine {v['cosine']:.3f}) beyond the {v['candidate_limit']} "
            "candidates the vector search takes"
        )
    if kw.get("rank"):
        parts.append(f"keyword rank {kw['rank']} beyond the {kw['candidate_limit']} keyword candidates")
    else:
        parts.append(
            "no keyword match" if kw.get("note", "").startswith("no") else kw.get("note", "no keyword rank")
        )
    return "; ".join(parts)


def _k_needed(store: Engine, channels: Channels, k: int) -> int | None:
    from memdeck.core.recall.search import candidate_limit

    ranks = [r for r in (channels["vector"].get("rank"), channels["keyword"].get("rank")) if r]
    if not ranks:
        return None
    best = min(ranks)
    for kk in range(k, 1001):
        if candidate_limit(store, kk) >= best:
            return kk
    return None


# --- the smallest weight change -----------------------------------------------------------------------


def _count_above(scores: np.ndarray, target: int) -> np.ndarray:
    """For each row of ``scores`` (trials x candidates): how many candidates score above the target."""
    others = np.delete(scores, target, axis=1)
    return np.count_nonzero(others >= scores[:, [target]] - 1e-12, axis=1)


def _single(
    comps: np.ndarray, w: np.ndarray, target: int, k: int, c: int, base_shift: np.ndarray | None = None
) -> float | None:
    """Smallest |delta| on weight ``c`` (weight kept in range) that puts ``target`` in the top k."""
    s = w @ comps if base_shift is None else w @ comps + base_shift
    lo, hi = WEIGHT_RANGE[0] - w[c], max(WEIGHT_RANGE[1], w[c]) - w[c]
    d = comps[c] - comps[c, target]
    g = s - s[target]
    with np.errstate(divide="ignore", invalid="ignore"):
        cross = np.where(d != 0, -g / d, np.nan)
    pts = cross[np.isfinite(cross)]
    eps = 1e-6
    deltas = np.concatenate([[0.0, lo, hi], pts + eps, pts - eps])
    deltas = deltas[(deltas >= lo - 1e-12) & (deltas <= hi + 1e-12)]
    trial = s[None, :] + deltas[:, None] * comps[c][None, :]
    ok = deltas[_count_above(trial, target) < k]
    if ok.size == 0:
        return None
    return float(ok[np.argmin(np.abs(ok))])


def smallest_change(
    cset: Any, profile: Profile, target: int, k: int, keyword_only: bool = False
) -> WeightChange:
    """The smallest change of one weight, else of two, within [0, 1] that ranks ``target`` in the top k.

    Each proposal is checked by re-ranking under the changed profile; the reported weights are rounded
    to three decimals in the direction of the change.
    """
    _, comps = cset.scores(profile, keyword_only)
    w = np.array([profile.weights.get(c, 0.0) for c in COMPONENTS], dtype=np.float64)
    singles = []
    for c in range(len(COMPONENTS)):
        delta = _single(comps, w, target, k, c)
        if delta is not None and delta != 0.0:
            checked = _checked(cset, profile, target, k, keyword_only, {COMPONENTS[c]: w[c] + delta})
            if checked:
                singles.append((abs(delta), checked))
    if singles:
        singles.sort(key=lambda x: x[0])
        return {"kind": "single", "change": singles[0][1], "alternatives": [s[1] for s in singles[1:3]]}
    pairs = []
    for a, b in itertools.permutations(range(len(COMPONENTS)), 2):
        lo, hi = WEIGHT_RANGE[0] - w[a], max(WEIGHT_RANGE[1], w[a]) - w[a]
        for da in np.linspace(lo, hi, 21):
            if abs(da) < 1e-9:
                continue
            db = _single(comps, w, target, k, b, base_shift=da * comps[a])
            if db is None:
                continue
            checked = _checked(
                cset, profile, target, k, keyword_only, {COMPONENTS[a]: w[a] + da, COMPONENTS[b]: w[b] + db}
            )
            if checked:
                pairs.append((abs(da) + abs(db), checked))
    if pairs:
        pairs.sort(key=lambda x: x[0])
        return {"kind": "pair", "change": pairs[0][1]}
    return {"kind": "none", "note": f"no change of one or two weights within [0, 1] ranks it in the top {k}"}


def _checked(
    cset: Any, profile: Profile, target: int, k: int, keyword_only: bool, new: dict[str, float]
) -> list[WeightStep] | None:
    weights = dict(profile.weights)
    for name, value in new.items():
        old = weights.get(name, 0.0)
        step = math.ceil if value > old else math.floor
        weights[name] = min(max(step(value * 1000) / 1000, WEIGHT_RANGE[0]), max(WEIGHT_RANGE[1], old))
    changed = profile.with_weights(**weights)
    total, _ = cset.scores(changed, keyword_only)
    rank = int(np.where(_order(cset, total) == target)[0][0]) + 1
    if rank > k:
        return None
    return [
        {"weight": name, "from": round(profile.weights.get(name, 0.0), 6), "to": weights[name], "rank": rank}
        for name in new
    ]


# --- text ---------------------------------------------------------------------------------------------


def render(report: Explanation) -> str:
    """A few lines a person can read."""
    lines = [
        f"{report['memory_id']} for {report['query']!r} (k={report['k']}, profile {report['profile']}):",
        f"  {report['reason']}",
    ]
    if report["status"] == "not_visible":
        return "\n".join(lines)
    ttl = report.get("ttl")
    if ttl and ttl.get("expired"):
        since = "since its last use" if ttl.get("from") == "last_used" else "since it was written"
        lines.append(f"  TTL: {ttl['age_days']:.0f} days {since}, TTL {ttl['days']:.0f} days: {ttl['note']}")
    ch = report.get("channels")
    if ch:
        v, kw = ch["vector"], ch["keyword"]
        if "rank" in v:
            lines.append(
                f"  vector:  cosine {v['cosine']:.3f}, rank {v['rank']} of {ch['rows_in_scope']} "
                f"(candidates: first {v['candidate_limit']})"
            )
        elif v.get("note"):
            lines.append(f"  vector:  {v['note']}")
        if kw.get("rank"):
            lines.append(
                f"  keyword: score {kw['score']:.3f}, rank {kw['rank']} of {kw['matches']} matches "
                f"(candidates: first {kw['candidate_limit']})"
            )
        else:
            lines.append(f"  keyword: {kw.get('note', 'no match')}")
        g = ch.get("graph")
        if g and g.get("rank"):
            lines.append(
                f"  graph:   score {g['score']:.3f}, rank {g['rank']} of {g['reached_memories']} memories reached "
                f"from {g['query_entities']} entities the query names"
            )
        elif g:
            lines.append(f"  graph:   {g.get('note', 'not reached')}")
    cue = report.get("time_cue")
    if cue:
        lines.append(
            f"  time:    the query asks when and this memory states a time: its match counts x{cue['match_factor']:.2f}"
            if cue["states_time"]
            else "  time:    the query asks when; this memory states no time, so its match is not raised"
        )
    if "components" in report:
        comp = "  ".join(f"{k} {v:.3f}" for k, v in report["components"].items())
        kth = f", k-th result {report['kth_score']:.3f}" if "kth_score" in report else ""
        lines.append(f"  score {report['score']:.3f}{kth}: {comp}")
    imp = report.get("importance")
    if imp:
        idle = imp["idle_days"]
        since = "never returned by a recall" if idle is None else f"last returned {idle:.0f} days ago"
        lines.append(
            f"  importance: stored {imp['stored']:.3f}, effective {imp['effective']:.3f} ({since}; "
            f"halves every {imp['half_life_days']:g} days unused)"
        )
    change = report.get("weight_change")
    if change:
        prefix = "if it were a candidate, " if report["status"] == "not_candidate" else ""
        if change["kind"] == "none":
            lines.append(f"  {prefix}{change['note']}")
        else:
            parts = ", ".join(f"{c['weight']} {c['from']:g} -> {c['to']:g}" for c in change["change"])
            lines.append(f"  {prefix}smallest weight change: {parts} (rank {change['change'][0]['rank']})")
    return "\n".join(lines)


__all__ = ["NOT_VISIBLE", "explain", "render", "smallest_change"]
