"""Retrieval recall@k on a LoCoMo-format file, through the normal recall path.

Each conversation goes into its own fresh temporary store: one episodic memory per turn, dated with its
session's date, embedded by the store's embedder. Each question is asked with ``store.recall`` under the
default profile, against its own conversation only, and scored on the turns its ``evidence`` names.

Protocol (the data README's): a turn's text is ``<speaker> said, "<text>"`` plus `` and shared
<caption>`` for image turns; multi-id evidence strings are split, obvious typos repaired, ids that still
match no turn dropped, and questions left without evidence skipped. Every such case is counted and
reported in ``result["defects"]``.
"""

from __future__ import annotations

import json
import re
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from memdeck.core.config import Settings
from memdeck.core.errors import MemdeckError
from memdeck.core.tuning.evaluate import mrr_at, ndcg_at, recall_at

# The held-out protocol: weights are chosen on the tune half and reported on both. Fixed here, by position
# in the file, so no run can pick its own split.
SPLITS = {"tune": range(5), "heldout": range(5, 10)}
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
CUTOFFS = (1, 5, 10)
_ID = re.compile(r"D(\d+):(\d+)")


@dataclass
class Turn:
    dia_id: str
    session: int
    speaker: str
    text: str  # the protocol's memory text
    at: datetime  # the session's date (plus the turn's position in seconds, to keep order)
    session_at: datetime


@dataclass
class Question:
    question: str
    category: int
    evidence: list[str]  # repaired, existing turn ids


@dataclass
class Conversation:
    sample_id: str
    turns: list[Turn]
    questions: list[Question]


@dataclass
class Defects:
    """Every data defect met while loading, with how it was handled."""

    empty_evidence: list[str] = field(default_factory=list)  # questions skipped: no evidence given
    split: list[tuple[str, list[str]]] = field(default_factory=list)  # "D8:6; D9:17" -> two ids
    repaired: list[tuple[str, str]] = field(default_factory=list)  # "D:11:26" -> "D11:26"
    dropped: list[tuple[str, str]] = field(default_factory=list)  # (sample, id): matches no turn
    unparseable: list[tuple[str, str]] = field(default_factory=list)  # (sample, string): no id at all
    left_without_evidence: list[str] = field(default_factory=list)  # skipped after dropping ids
    undated: list[tuple[str, int, str]] = field(default_factory=list)  # (sample, session, raw date)
    uncategorised: list[str] = field(default_factory=list)  # questions whose category could not be read

    def to_json(self) -> dict[str, Any]:
        return {
            "empty_evidence": {
                "count": len(self.empty_evidence),
                "handling": "question skipped",
                "questions": self.empty_evidence,
            },
            "split": {
                "count": len(self.split),
                "handling": "string split into its ids",
                "cases": [{"raw": r, "ids": ids} for r, ids in self.split],
            },
            "repaired": {
                "count": len(self.repaired),
                "handling": "typo repaired",
                "cases": [{"raw": r, "id": i} for r, i in self.repaired],
            },
            "unparseable": {
                "count": len(self.unparseable),
                "handling": "string dropped (names no turn)",
                "cases": [{"sample": s, "raw": r} for s, r in self.unparseable],
            },
            "dropped": {
                "count": len(self.dropped),
                "handling": "id dropped (matches no turn)",
                "cases": [{"sample": s, "id": i} for s, i in self.dropped],
            },
            "left_without_evidence": {
                "count": len(self.left_without_evidence),
                "handling": "question skipped",
                "questions": self.left_without_evidence,
            },
            "undated": {
                "count": len(self.undated),
                "handling": "session dated one day after the one before it (the first: 2000-01-01)",
                "cases": [{"sample": s, "session": n, "raw": r} for s, n, r in self.undated],
            },
            "uncategorised": {
                "count": len(self.uncategorised),
                "handling": "question scored under category 0",
                "questions": self.uncategorised,
            },
        }


# --- loading ------------------------------------------------------------------------------------------


_DATE_FORMATS = (
    "%I:%M %p on %d %B, %Y",
    "%I:%M %p on %d %b, %Y",
    "%I:%M %p on %B %d, %Y",
    "%I:%M %p on %b %d, %Y",
    "%I:%M%p on %d %B, %Y",
    "%H:%M on %d %B, %Y",
    "%I:%M %p, %d %B %Y",
    "%d %B %Y, %I:%M %p",
    "%d %B, %Y",
    "%d %B %Y",
    "%B %d, %Y",
    "%b %d, %Y",
    "%Y/%m/%d %H:%M",
    "%Y/%m/%d",
    "%m/%d/%Y %H:%M",
    "%m/%d/%Y",
)


def parse_session_date(value: str) -> datetime:
    """'1:56 pm on 8 May, 2023' -> an aware datetime (UTC when the file gives no zone). Also ISO 8601,
    '2023/05/20 (Sat) 02:21', '8 May 2023' and other common shapes of the same layout's other data sets."""
    text = " ".join(str(value).split())
    text = " ".join(re.sub(r"\((?:mon|tue|wed|thu|fri|sat|sun)[a-z]*\.?\)", " ", text, flags=re.I).split())
    for fmt in _DATE_FORMATS:
        try:
            return datetime.strptime(text, fmt).replace(tzinfo=UTC)
        except ValueError:
            continue
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise MemdeckError(f"cannot read the session date {value!r}") from None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


# Category names some files in this layout use instead of LoCoMo's numbers.
_CATEGORY_NAMES = {
    "multi-hop": 1,
    "multihop": 1,
    "temporal": 2,
    "temporal-reasoning": 2,
    "open-domain": 3,
    "opendomain": 3,
    "single-hop": 4,
    "singlehop": 4,
    "adversarial": 5,
}


def _category(raw: object) -> int | None:
    """LoCoMo's category number (1-5), from a number, a numeric string or a category name; None if unknown."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return raw
    text = str(raw).strip().lower().replace("_", "-").replace(" ", "-")
    if text.isdigit():
        return int(text)
    return _CATEGORY_NAMES.get(text)


def turn_text(turn: dict[str, Any]) -> str:
    said = turn.get("text", turn.get("content", ""))
    text = f'{turn.get("speaker", "")} said, "{said}"'
    if turn.get("blip_caption"):
        text += f" and shared {turn['blip_caption']}"
    return text


def _evidence_ids(raw: str, defects: Defects) -> list[str]:
    """Split and repair one evidence string; returns candidate ids (not yet checked against turns)."""
    parts = [p for p in re.split(r"[;,\s]+", raw.strip()) if p]
    if len(parts) > 1:
        defects.split.append((raw, parts))
    out = []
    for part in parts:
        if re.fullmatch(r"D\d+:\d+", part) and not re.search(r":0\d", part):
            out.append(part)
            continue
        # Obvious typos: a stray colon after the D ("D:11:26"), a zero-padded turn ("D30:05").
        m = re.fullmatch(r"D:?(\d+):0*(\d+)", part)
        if m:
            fixed = f"D{int(m.group(1))}:{int(m.group(2))}"
            defects.repaired.append((part, fixed))
            out.append(fixed)
        else:
            out.append(part)  # kept as is; it will match no turn and be dropped (and counted)
    return out


def load_locomo(path: str | Path) -> tuple[list[Conversation], Defects]:
    """Read a LoCoMo-format JSON file into conversations, repairing and counting evidence defects."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise MemdeckError(f"no such file: {path}") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise MemdeckError(f"cannot read {path} as JSON: {exc}") from None
    if not isinstance(data, list) or not all(isinstance(s, dict) and "conversation" in s for s in data):
        raise MemdeckError(f"{path} is not a LoCoMo-format file (a list of samples with 'conversation')")
    defects = Defects()
    conversations = []
    for n, sample in enumerate(data):
        sample_id = str(sample.get("sample_id") or f"conv-{n}")
        conv = sample["conversation"]
        turns: list[Turn] = []
        numbers = sorted(int(k.split("_")[1]) for k in conv if re.fullmatch(r"session_\d+", k))
        previous: datetime | None = None
        for s in numbers:
            items = [t for t in conv.get(f"session_{s}") or [] if isinstance(t, dict)]
            if not items:
                continue
            date = conv.get(f"session_{s}_date_time") or conv.get(f"session_{s}_date")
            try:
                start = parse_session_date(str(date)) if date else None
            except MemdeckError:
                start = None
            if start is None:  # ordered by session number, so recency still follows the conversation
                defects.undated.append((sample_id, s, str(date or "")))
                start = previous + timedelta(days=1) if previous else datetime(2000, 1, 1, tzinfo=UTC)
            previous = start
            for i, t in enumerate(items):
                turns.append(
                    Turn(
                        dia_id=str(t.get("dia_id") or f"D{s}:{i + 1}"),
                        session=s,
                        speaker=str(t.get("speaker", "")),
                        text=turn_text(t),
                        at=start + timedelta(seconds=i),
                        session_at=start,
                    )
                )
        known = {t.dia_id for t in turns}
        questions = []
        for q in sample.get("qa") or []:
            if not isinstance(q, dict):
                continue
            label = f"{sample_id}: {q.get('question', '')}"
            raw = q.get("evidence") or []
            if isinstance(raw, str):  # one evidence string rather than a list of them
                raw = [raw]
            if not raw:
                defects.empty_evidence.append(label)
                continue
            ids: list[str] = []
            for item in raw:
                for cand in _evidence_ids(str(item), defects):
                    if cand in known:
                        ids.append(cand)
                    elif _ID.fullmatch(cand):
                        defects.dropped.append((sample_id, cand))
                    else:
                        defects.unparseable.append((sample_id, cand))
            ids = list(dict.fromkeys(ids))
            if not ids:
                defects.left_without_evidence.append(label)
                continue
            category = _category(q.get("category", 0))
            if category is None:
                defects.uncategorised.append(label)
                category = 0
            questions.append(Question(str(q.get("question", "")), category, ids))
        conversations.append(Conversation(sample_id, turns, questions))
    return conversations, defects


# --- metrics --------------------------------------------------------------------------------------------


def question_metrics(ranked: Sequence[str], relevant: Iterable[str]) -> dict[str, float]:
    rel = list(relevant)
    out = {f"R@{k}": recall_at(ranked, rel, k) for k in CUTOFFS}
    out["nDCG@10"] = ndcg_at(ranked, rel, 10)
    out["MRR"] = mrr_at(ranked, rel, 10)
    return out


def aggregate(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Mean of each metric over per-question rows (each with 'category' and 'metrics')."""

    def mean(sel: list[dict[str, Any]]) -> dict[str, Any]:
        if not sel:
            return {"questions": 0}
        keys = sel[0]["metrics"].keys()
        out: dict[str, Any] = {"questions": len(sel)}
        out.update({k: round(sum(r["metrics"][k] for r in sel) / len(sel), 4) for k in keys})
        return out

    by_cat = {f"{c} {name}": mean([r for r in rows if r["category"] == c]) for c, name in CATEGORIES.items()}
    return {
        "categories 1-4": mean([r for r in rows if 1 <= r["category"] <= 4]),
        "all 1-5": mean(list(rows)),
        "by category": by_cat,
    }


def by_split(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """``aggregate`` of each half of ``SPLITS`` that the rows cover."""
    return {name: aggregate(sel) for name in SPLITS if (sel := [r for r in rows if r.get("split") == name])}


# --- the run ------------------------------------------------------------------------------------------


def conversation_inputs(conv: Conversation) -> list[dict[str, Any]]:
    """One episodic memory per turn, dated with its session (so recency means what it would in use)."""
    return [
        {
            "text": t.text,
            "tier": "episodic",
            "principal": conv.sample_id,
            "agent": "locomo",
            "created_at": t.at,
            "extra": {"session": f"{conv.sample_id}/session_{t.session}", "started_at": t.at},
            "meta": {"dia_id": t.dia_id},
        }
        for t in conv.turns
    ]


def eval_config() -> Settings:
    """The default settings, minus what would make the run depend on its own order or the user's setup."""
    # Redaction changes nothing in this synthetic data but would fill a vault; traces are off so the
    # run leaves nothing behind. Access counts are not recorded (recall(record_access=False)) so an
    # earlier question never changes a later one's frequency component.
    return Settings().with_changes(redaction={"enabled": False}, traces={"enabled": False})


def evaluate_locomo(
    path: str | Path,
    *,
    limit_conversations: int | None = None,
    embedder: Any = None,
    profile: Any = None,
    k: int = 10,
    progress: Callable[[str], None] | None = None,
    config: Settings | None = None,
    compare: dict[str, Any] | None = None,
    split: str = "all",
    variants: dict[str, dict[str, Any]] | None = None,
    only: Sequence[int] | None = None,
) -> dict[str, Any]:
    """Run the benchmark; returns the figures (see module docstring) as a JSON-ready dict.

    ``compare`` maps names to other profiles: each question's candidates are re-ranked under them too
    (no new search), and their figures go in ``result["compare"]``. ``split`` takes the conversations of
    one half of ``SPLITS`` ("tune" or "heldout") or "all"; every result also has each half's figures
    (``by split``). ``variants`` maps names to ``[recall]`` settings: each question is asked again with
    those settings over the same store (so the same embeddings), and their figures go in
    ``result["variants"]``. ``only`` keeps the conversations at these positions in the file (within the
    split), e.g. to finish a run that was stopped.
    """
    from memdeck.core.config import Profile
    from memdeck.core.embed import make_embedder
    from memdeck.core.store import Store

    conversations, defects = load_locomo(path)
    if split not in ("all", *SPLITS):
        raise MemdeckError(f"split must be one of all, {', '.join(SPLITS)}; got {split!r}")
    half = {n: name for name, span in SPLITS.items() for n in span}
    numbered = list(enumerate(conversations))
    if split != "all":
        numbered = [(n, c) for n, c in numbered if half.get(n) == split]
    if only is not None:
        numbered = [(n, c) for n, c in numbered if n in set(only)]
    if limit_conversations is not None:
        numbered = numbered[:limit_conversations]
    config = config or eval_config()
    embedder = embedder if embedder is not None else make_embedder(config.embedding)
    profile = profile or Profile()  # the built-in defaults, whatever a user saved as "default"
    rows: list[dict[str, Any]] = []
    extra_rows: dict[str, list[dict[str, Any]]] = {}
    variant_rows: dict[str, list[dict[str, Any]]] = {name: [] for name in variants or {}}
    timings = {"load_s": 0.0, "recall_s": 0.0}
    started = time.perf_counter()
    turns = 0
    for number, conv in numbered:
        with tempfile.TemporaryDirectory(prefix="memdeck-locomo-") as tmp:
            store = Store.open(Path(tmp) / "store", embedder=embedder, config=config)
            try:
                t0 = time.perf_counter()
                results = store.remember_many(conversation_inputs(conv))
                id_to_dia = {
                    r.memory.id: t.dia_id for r, t in zip(results, conv.turns, strict=True) if r.memory
                }
                turns += len(conv.turns)
                timings["load_s"] += time.perf_counter() - t0
                t0 = time.perf_counter()
                for q in conv.questions:
                    result = store.recall(
                        q.question,
                        principal=conv.sample_id,
                        k=k,
                        profile=profile,
                        record_access=False,
                        trace=False,
                        source="eval",
                    )
                    ranked = [id_to_dia.get(item.memory.id, "") for item in result.items]
                    rows.append(
                        {
                            "sample": conv.sample_id,
                            "split": half.get(number, "none"),
                            "question": q.question,
                            "category": q.category,
                            "evidence": q.evidence,
                            "ranked": ranked,
                            "metrics": question_metrics(ranked, q.evidence),
                        }
                    )
                    for name, other in (compare or {}).items():
                        alt = [id_to_dia.get(s.memory.id, "") for s in result.rerank(other, k)]
                        extra_rows.setdefault(name, []).append(
                            {"category": q.category, "metrics": question_metrics(alt, q.evidence)}
                        )
                    for name, settings in (variants or {}).items():
                        saved = store.settings
                        store.settings = saved.with_changes(recall=settings)
                        try:
                            other_result = store.recall(
                                q.question,
                                principal=conv.sample_id,
                                k=k,
                                profile=profile,
                                record_access=False,
                                trace=False,
                                source="eval",
                            )
                        finally:
                            store.settings = saved
                        alt = [id_to_dia.get(item.memory.id, "") for item in other_result.items]
                        variant_rows[name].append(
                            {
                                "split": half.get(number, "none"),
                                "category": q.category,
                                "metrics": question_metrics(alt, q.evidence),
                            }
                        )
                timings["recall_s"] += time.perf_counter() - t0
            finally:
                store.close()
        if progress:
            progress(f"{conv.sample_id}: {len(conv.turns)} turns, {len(conv.questions)} questions")
    total = time.perf_counter() - started
    return {
        "data": str(path),
        "conversations": len(numbered),
        "split": split,
        "turns": turns,
        "questions": len(rows),
        "profile": profile.to_dict(),
        "embedding_model": getattr(embedder, "name", "?"),
        "k": k,
        "results": aggregate(rows),
        "by split": by_split(rows),
        "variants": {
            name: {"settings": (variants or {})[name], "results": aggregate(r), "by split": by_split(r)}
            for name, r in variant_rows.items()
        },
        "compare": {
            name: {"profile": (compare or {})[name].to_dict(), "results": aggregate(r)}
            for name, r in extra_rows.items()
        },
        "defects": defects.to_json(),
        "run_time_s": {
            "total": round(total, 1),
            "load_and_embed": round(timings["load_s"], 1),
            "recall": round(timings["recall_s"], 1),
        },
        "per_question": rows,
    }


def render(report: dict[str, Any]) -> str:
    """The report as text: a table per group, the defects and how each was handled, the run time."""
    lines = [
        f"LoCoMo retrieval: {report['conversations']} conversations, {report['turns']} turns, "
        f"{report['questions']} questions scored; profile {report['profile']['name']}, "
        f"model {report['embedding_model']}",
        "",
        f"{'':<22} {'n':>5} {'R@1':>7} {'R@5':>7} {'R@10':>7} {'nDCG@10':>8} {'MRR':>7}",
    ]
    res = report["results"]
    groups = [("categories 1-4", res["categories 1-4"]), ("all 1-5", res["all 1-5"])]
    groups += [(f"  {name}", row) for name, row in res["by category"].items()]
    for name, row in groups:
        if not row.get("questions"):
            lines.append(f"{name:<22} {0:>5}")
            continue
        lines.append(
            f"{name:<22} {row['questions']:>5} {row['R@1']:>7.3f} {row['R@5']:>7.3f} {row['R@10']:>7.3f} "
            f"{row['nDCG@10']:>8.3f} {row['MRR']:>7.3f}"
        )
    for name, body in (report.get("compare") or {}).items():
        other = body["results"]
        lines.append(
            f"same candidates re-ranked under {name}: categories 1-4 R@10 {other['categories 1-4'].get('R@10', 0):.3f}, "
            f"all 1-5 R@10 {other['all 1-5'].get('R@10', 0):.3f}"
        )
    lines += ["", "Data defects (whole file) and how each was handled:"]
    for kind, body in report["defects"].items():
        cases = body.get("cases") or body.get("questions") or []
        shown = "; ".join(
            c if isinstance(c, str) else ", ".join(f"{k}={v}" for k, v in c.items()) for c in cases[:6]
        )
        lines.append(f"  {kind}: {body['count']} -> {body['handling']}" + (f" [{shown}]" if shown else ""))
    t = report["run_time_s"]
    lines += ["", f"run time {t['total']} s (load and embed {t['load_and_embed']} s, recall {t['recall']} s)"]
    return "\n".join(lines)
