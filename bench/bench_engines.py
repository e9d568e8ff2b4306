"""Do the two recall engines rank LoCoMo the same? Each question asked of both, in the same store.

    python bench/bench_engines.py [--conversations N] [--out bench/RESULTS-engines.md]

Follows bench_locomo.py's protocol (core/tuning/locomo.py: each conversation in its own fresh store, one
episodic memory per turn, the default profile, k = 10, access counts and traces off) but asks every
question twice, with ``[recall] engine = "memory"`` and ``"lance"``, and compares the ten ids returned:
same ids in the same order, same ids, and recall@10 of each engine. Writes RESULTS-engines.md.
"""

from __future__ import annotations

import argparse
import copy
import os
import platform
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA = (
    Path(os.environ.get("MEMDECK_SHARED_DATA", REPO.parent / "shared" / "data")) / "locomo" / "locomo10.json"
)


def run(path: Path, limit: int | None) -> dict[str, Any]:
    from memdeck.core.config import Profile
    from memdeck.core.embed import make_embedder
    from memdeck.core.store import Store
    from memdeck.core.tuning.locomo import conversation_inputs, eval_config, load_locomo, question_metrics

    conversations, _defects = load_locomo(path)
    conversations = conversations[:limit] if limit else conversations
    config = eval_config()
    embedder = make_embedder(config)
    profile = Profile()
    same = same_set = n = 0
    recall10: dict[str, list[float]] = {"memory": [], "lance": []}
    seconds: dict[str, float] = {"memory": 0.0, "lance": 0.0}
    examples: list[dict[str, Any]] = []
    for conv in conversations:
        with tempfile.TemporaryDirectory(prefix="memdeck-engines-") as tmp:
            store = Store.open(Path(tmp) / "store", embedder=embedder, config=copy.deepcopy(config))
            try:
                results = store.remember_many(conversation_inputs(conv))
                dia = {r.memory.id: t.dia_id for r, t in zip(results, conv.turns, strict=True) if r.memory}
                for q in conv.questions:
                    got = {}
                    for engine in ("memory", "lance"):
                        store.engine.config["recall"]["engine"] = engine
                        t0 = time.perf_counter()
                        res = store.recall(
                            q.question,
                            principal=conv.sample_id,
                            k=10,
                            profile=profile,
                            record_access=False,
                            trace=False,
                            source="eval",
                        )
                        seconds[engine] += time.perf_counter() - t0 - res.timings_ms["embed"] / 1000
                        got[engine] = [item.memory.id for item in res.items]
                        ranked = [dia.get(i, "") for i in got[engine]]
                        recall10[engine].append(question_metrics(ranked, q.evidence)["R@10"])
                    n += 1
                    same += got["memory"] == got["lance"]
                    same_set += set(got["memory"]) == set(got["lance"])
                    if got["memory"] != got["lance"] and len(examples) < 5:
                        examples.append(
                            {
                                "sample": conv.sample_id,
                                "question": q.question,
                                "memory": [dia.get(i) for i in got["memory"]],
                                "lance": [dia.get(i) for i in got["lance"]],
                            }
                        )
            finally:
                store.close()
        print(
            f"{conv.sample_id}: {n} questions so far, {same} in the same order", file=sys.stderr, flush=True
        )
    return {
        "questions": n,
        "same_order": same,
        "same_set": same_set,
        "recall_at_10": {e: sum(v) / len(v) if v else 0.0 for e, v in recall10.items()},
        "recall_ms_per_question": {e: 1000 * s / max(n, 1) for e, s in seconds.items()},
        "examples": examples,
        "conversations": len(conversations),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--conversations", type=int, default=None)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "RESULTS-engines.md")
    args = parser.parse_args()
    load0 = [round(x, 2) for x in os.getloadavg()]
    t0 = time.perf_counter()
    r = run(args.data, args.conversations)
    lines = [
        "### Recall engines on LoCoMo",
        "",
        f"Run {datetime.now(UTC).strftime('%Y-%m-%d %H:%M')} UTC on {platform.platform()}, {os.cpu_count()} CPUs; "
        f"load average {load0} at the start, {[round(x, 2) for x in os.getloadavg()]} at the end; "
        f"{time.perf_counter() - t0:.0f} s. `python bench/bench_engines.py`: {r['conversations']} conversations, "
        f"{r['questions']} questions (every category), the default profile, k = 10, each question asked of "
        "both engines in the same store.",
        "",
        "| | value |",
        "|---|---|",
        f"| same ids in the same order | {r['same_order']} / {r['questions']} |",
        f"| same ids | {r['same_set']} / {r['questions']} |",
        f"| recall@10, memory / lance | {r['recall_at_10']['memory']:.4f} / {r['recall_at_10']['lance']:.4f} |",
        f"| recall per question excl. embedding, memory / lance | "
        f"{r['recall_ms_per_question']['memory']:.1f} / {r['recall_ms_per_question']['lance']:.1f} ms |",
        "",
    ]
    if r["examples"]:
        lines += ["Questions where the order differs (dialogue ids, memory then lance):", ""]
        lines += [f"- {e['sample']}: {e['question']!r}: {e['memory']} / {e['lance']}" for e in r["examples"]]
        lines.append("")
    args.out.write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
