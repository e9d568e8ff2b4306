"""The memory-type classifier (memdeck.core.memtypes.infer_type) on a hand-labelled set.

    python bench/bench_types.py            # writes bench/RESULTS-types.md
    python bench/bench_types.py --errors   # also prints every miss

Per type and per half of bench/types_set.py: precision is the share of texts the classifier gave that type
which carry it, recall the share of texts that carry it which got it. A text left without a type (None)
counts against recall only: leaving a text untyped is the classifier's way of saying it is unsure.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from types_set import DEV, FRESH, FRESH2, FRESH3, FRESH4, HELDOUT, TYPES, Item  # noqa: E402

from memdeck.core.memtypes import (  # noqa: E402
    TypeExamples,
    example_texts,
    examples_for,
    packaged_model,
    rule_type,
)

Judge = Callable[[Item, "np.ndarray | None"], "str | None"]


def score(
    items: list[Item], judge: Judge, vectors: np.ndarray | None = None
) -> tuple[dict[str, dict[str, float]], list[str]]:
    tp: Counter[str] = Counter()
    predicted: Counter[str] = Counter()
    gold: Counter[str] = Counter()
    misses = []
    for n, item in enumerate(items):
        got = judge(item, None if vectors is None else vectors[n])
        gold[item.type] += 1
        if got is not None:
            predicted[got] += 1
        if got == item.type:
            tp[item.type] += 1
        else:
            misses.append(f"  {item.type:<11} -> {got or '(none)':<11} {item.text}")
    rows: dict[str, dict[str, float]] = {}
    for t in (*TYPES, "all"):
        hit = sum(tp.values()) if t == "all" else tp[t]
        pred = sum(predicted.values()) if t == "all" else predicted[t]
        n = sum(gold.values()) if t == "all" else gold[t]
        rows[t] = {
            "n": n,
            "predicted": pred,
            "precision": hit / pred if pred else 1.0,
            "recall": hit / n if n else 1.0,
        }
    return rows, misses


def rules(item: Item, _vector: np.ndarray | None) -> str | None:
    return rule_type(item.text)


def with_examples(examples: TypeExamples) -> Judge:
    def judge(item: Item, vector: np.ndarray | None) -> str | None:
        assert vector is not None
        return examples.judge(item.text, vector)

    return judge


def without(examples: TypeExamples, texts: set[str]) -> TypeExamples:
    """The shipped examples less a set's own texts: a set is never judged by its own labels."""
    keep = [i for i, (_t, x) in enumerate(example_texts()) if x not in texts]
    return TypeExamples(examples.vectors[keep], tuple(examples.types[i] for i in keep))


def table(rows: dict[str, dict[str, float]]) -> str:
    out = ["| type | texts | given the type | precision | recall |", "|---|---:|---:|---:|---:|"]
    for t, r in rows.items():
        out.append(
            f"| {t} | {int(r['n'])} | {int(r['predicted'])} | {r['precision']:.3f} | {r['recall']:.3f} |"
        )
    return "\n".join(out)


def embed_sets(sets: dict[str, list[Item]]) -> dict[str, np.ndarray]:
    from memdeck.core.config import EmbeddingSettings
    from memdeck.core.embed import make_embedder

    embedder = make_embedder(EmbeddingSettings())  # the packaged model, as a new store uses it
    assert embedder.name == packaged_model()
    return {name: embedder.encode([i.text for i in items]) for name, items in sets.items()}


def cost_ms(items: list[Item], vectors: np.ndarray, judge: Judge, repeat: int = 20) -> float:
    """Median over texts of the time one judgement takes (the text's vector is given, as on the write path)."""
    per_text = []
    for item, vector in zip(items, vectors, strict=True):
        t0 = time.perf_counter()
        for _ in range(repeat):
            judge(item, vector)
        per_text.append((time.perf_counter() - t0) / repeat * 1000)
    return statistics.median(per_text)


FRESH3_AFTER = """| type | texts | given the type | precision | recall |
|---|---:|---:|---:|---:|
| preference | 10 | 6 | 1.000 | 0.600 |
| decision | 10 | 3 | 1.000 | 0.300 |
| fact | 10 | 6 | 0.833 | 0.500 |
| error | 10 | 6 | 1.000 | 0.600 |
| observation | 10 | 7 | 0.857 | 0.600 |
| event | 10 | 8 | 1.000 | 0.800 |
| instruction | 10 | 10 | 1.000 | 1.000 |
| all | 70 | 46 | 0.957 | 0.629 |"""
FRESH3_MISSES = """  preference  -> (none)      I'd much rather do video calls in the afternoon than first thing.
  preference  -> (none)      I'd pick a paperback over an e-reader any day.
  preference  -> (none)      Client wants status reports as a one-page PDF, nothing longer.
  preference  -> observation Quiet carriages on trains, please, whenever I travel.
  decision    -> (none)      The school chose to hold parents' evening online this term.
  decision    -> (none)      Vote result: the club raises the annual fee to 60 euros.
  decision    -> (none)      Final pick for the kitchen worktop is oak, not quartz.
  decision    -> fact        We dropped the idea of a second warehouse; Rotterdam will handle everything.
  decision    -> (none)      Approved by the clinic manager: appointments become 20 minutes long from January.
  decision    -> (none)      The band will record the album live instead of track by track.
  decision    -> (none)      RFC accepted: the mobile client switches to GraphQL.
  fact        -> (none)      The clinic's front desk number is 020 7946 0321.
  fact        -> (none)      The tenancy agreement runs until 31 July 2027.
  fact        -> (none)      CI runs on GitHub Actions with two self-hosted runners.
  fact        -> (none)      The licence key for the DAW is stored in 1Password under "Studio".
  fact        -> (none)      The violin teacher charges 45 pounds per lesson.
  error       -> (none)      The thermostat app keeps logging me out every few minutes.
  error       -> (none)      Our booking form sends two confirmation emails for every reservation.
  error       -> (none)      The label printer prints every label shifted half an inch to the right.
  error       -> (none)      Zoom audio cuts out for the remote students every ten minutes.
  observation -> (none)      Tomatoes on the south bed ripen about a week earlier than the north ones.
  observation -> (none)      Patients booked on Friday afternoons miss appointments more often than others.
  observation -> (none)      The team ships more bugs in the week before a holiday.
  observation -> (none)      Prices at the Saturday market drop in the last hour.
  event       -> (none)      09:30 standup: Li demoed the new search page.
  event       -> (none)      Ran the Cardiff half marathon last Sunday in 1:52."""

# Scored once on 2026-11-27 on the rules of that day, before the model was consulted (see the RESULTS).
FRESH3_BASELINE = """| type | texts | given the type | precision | recall |
|---|---:|---:|---:|---:|
| preference | 10 | 3 | 1.000 | 0.300 |
| decision | 10 | 2 | 1.000 | 0.200 |
| fact | 10 | 6 | 0.833 | 0.500 |
| error | 10 | 0 | 1.000 | 0.000 |
| observation | 10 | 5 | 0.800 | 0.400 |
| event | 10 | 8 | 0.875 | 0.700 |
| instruction | 10 | 4 | 1.000 | 0.400 |
| all | 70 | 28 | 0.893 | 0.357 |"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(BENCH / "RESULTS-types.md"))
    parser.add_argument("--errors", action="store_true", help="print every miss (all sets but fresh4)")
    parser.add_argument(
        "--dev",
        action="store_true",
        help="score only the sets the classifier was developed on; write nothing",
    )
    args = parser.parse_args()
    sets = {"dev": DEV, "held-out": HELDOUT, "fresh": FRESH, "fresh2": FRESH2, "fresh3": FRESH3}
    if not args.dev:
        sets["fresh4"] = FRESH4
    vectors = embed_sets(sets)
    shipped = examples_for(packaged_model(), None)
    assert shipped is not None
    before = {name: score(items, rules) for name, items in sets.items()}
    after = {}
    for name, items in sets.items():
        # Each example set is judged by the examples of the other sets; fresh4 is in no example.
        examples = without(shipped, {i.text for i in items})
        after[name] = score(items, with_examples(examples), vectors[name])
    if args.errors:
        for name in sets:
            if name != "fresh4":
                print(f"{name} misses (+ model):\n" + "\n".join(after[name][1]))
    if args.dev:
        for name in sets:
            print(
                name,
                "rules",
                pr(before[name][0]),
                "+ model",
                pr(after[name][0]),
                "worst",
                worst(after[name][0]),
            )
        return 0
    every = [i for items in sets.values() for i in items]
    every_v = np.vstack([vectors[n] for n in sets])
    ms_rules = cost_ms(every, every_v, rules)
    ms_model = cost_ms(every, every_v, with_examples(shipped))
    f4, f4_miss = after["fresh4"]
    body = (
        f"""# Memory types: rules and the embedding model on hand-labelled sets

Run: `python bench/bench_types.py` on {datetime.now(UTC):%Y-%m-%d} (Python {platform.python_version()}).
Sets: bench/types_set.py. A text left untyped counts against recall only: leaving a text untyped is the
classifier's way of saying it is unsure. `rules` is the wording rules alone (what a store without a semantic
model, the hash embedder, gets); `+ model` is what a store with the packaged model gets on the write path:
the rules, arbitrated by the vote of the nearest labelled examples (memdeck.core.memtypes, examples in
core/data/memtypes_examples.json: the `dev`, `held-out`, `fresh`, `fresh2` and `fresh3` texts,
{len(shipped.types)}).

## The honest estimate: fresh4 ({len(FRESH4)} texts, never tuned on)

This revision was measured twice on text nobody tuned on. `fresh3` (ten per type) was written on 2026-11-27
before the model was consulted for types, in other domains than the earlier sets (a clinic, a garden, a
band, a school, a warehouse, a renovation, a sports club, personal money) and the same mix of chat lines,
notes about the user, tool and log lines and meeting notes; scored once on the rules of that day, never read
while the classifier changed, then scored (first table below) and read. After that read, `fresh4` (ten per
type, other domains again: a vet, a newsroom, a bakery, a lab, home IT, a car, insurance, volunteering,
parenting) was written and scored once on that classifier (its baseline), and then the only change made was
to add the `fresh3` texts to the examples. `fresh4` was never read before this final run.

`fresh4` + model, after (the examples include `fresh3`):

{table(f4)}

Lowest per-type precision on fresh4 + model: {worst(f4)} (target 0.9). Rules alone: {pr(before["fresh4"][0])}.
Baseline (the classifier before `fresh3` joined the examples, scored once): + model 0.972 / 0.500
(observation 0.750, every other type 1.000); rules alone 0.917 / 0.471 (observation 0.600, fact 0.875).

`fresh3`, scored on the classifier before it joined the examples (the first honest estimate):

{FRESH3_AFTER}

Baseline, the same fresh3 texts on the rules before this revision:

{FRESH3_BASELINE}

## Every set, precision / recall (all types), and the lowest per-type precision

| set | texts | before (rules of the previous revision) | rules, after | + model, after | lowest per-type precision, + model |
|---|---:|---|---|---|---:|
"""
        + "\n".join(
            f"| {name} | {len(items)} | {BEFORE[name]} | {pr(before[name][0])} | {pr(after[name][0])} "
            f"| {worst(after[name][0])} |"
            for name, items in sets.items()
        )
        + f"""

`dev`, `held-out`, `fresh`, `fresh2` and `fresh3` are examples the model votes with, so each of them is
scored here with the examples of the other sets only (a text never meets its own label). The rules were
written with `dev`, `held-out` and `fresh` in view, so their `rules` column flatters; `fresh2` was the honest
estimate of the previous revision (rules 0.806 / 0.357 then) and was read for errors in this one: the vote's
settings ({NEIGHBOURS_DOC}) were chosen on the first four sets, leave-one-set-out, and not changed after.

Write-path cost of inferring a type, median per text (the text's vector is the one the write embeds anyway):
before, rules alone {ms_rules:.3f} ms; after, rules + vote {ms_model:.3f} ms (one product with a
{shipped.vectors.shape[0]} x {shipped.vectors.shape[1]} matrix; the write path also runs the rules once more
before the text is embedded, so about {ms_rules + ms_model:.2f} ms in all, against the 10-30 ms the
embedding of one text takes). The examples' vectors for the packaged model are shipped
(core/data/memtypes_examples.npy, written by bench/make_packaged_vectors.py); another semantic model embeds the
{shipped.vectors.shape[0]} examples once per process, at its first write.

## fresh4 misses (gold -> given, + model), read only after the final run

```
{chr(10).join(f4_miss) or "  none"}
```

## fresh3 misses on the classifier before fresh3 joined the examples

```
{FRESH3_MISSES}
```

## Per type, + model

"""
        + "\n\n".join(f"### {name}\n\n{table(after[name][0])}" for name in sets)
        + f"""

## What this shows and what it does not

{CONCLUSION}
"""
    )
    Path(args.out).write_text(body, encoding="utf-8")
    print(table(f4))
    print(f"wrote {args.out}")
    return 0


def pr(rows: dict[str, dict[str, float]], t: str = "all") -> str:
    return f"{rows[t]['precision']:.3f} / {rows[t]['recall']:.3f}"


def worst(rows: dict[str, dict[str, float]]) -> str:
    return f"{min(r['precision'] for t, r in rows.items() if t != 'all'):.3f}"


BEFORE = {
    "dev": "1.000 / 0.975",
    "held-out": "1.000 / 1.000",
    "fresh": "1.000 / 0.714",
    "fresh2": "0.806 / 0.357 (fact 0.615)",
    "fresh3": "0.893 / 0.357 (observation 0.800)",
    "fresh4": "0.917 / 0.471 (observation 0.600)",
}
NEIGHBOURS_DOC = "the 20 nearest examples, weights exp((cosine - best) / 0.1), a rule's type kept at 5% of the vote (10% for fact, event, observation), an untyped text given the winner at 60%"
CONCLUSION = """**Over all types the target is met on text nobody tuned on; per type it is not.** fresh4: precision 0.972
over all types (rules alone 0.917), recall 0.500; six of the seven types make no mistake, observation is
0.750 (one wrong of four: a malfunction said as a regularity, "Wi-Fi drops every time the microwave is on",
taken for an observation). fresh3, the first estimate: 0.957 / 0.629 (baseline 0.893 / 0.357), fact 0.833
(a decision said as a state, "We dropped the idea of a second warehouse; Rotterdam will handle everything")
and observation 0.857 (a preference with "whenever" in it). Adding fresh3 to the examples changed nothing on
fresh4. The per-type figures rest on a handful of texts each (four to seven typed), so one mistake moves
them by 0.15 to 0.25.

The model's part: it vetoes a rule's type its nearest examples do not support (the "X is ..." fact rule
above all: fresh2's fact precision went from 0.615 to 1.000, though fresh2 was read for errors in this
revision; on fresh4 the fact rule's one mistake is vetoed, 0.875 to 1.000) and types texts no rule reads
when the examples clearly agree (fresh3 recall 0.543 with the rules alone, 0.629 with the model). It cannot
read what its examples do not cover, and recall stays around one half: decisions announced as a heading or
in passing ("Lab meeting outcome: ...", "We picked the green paint ..."), numbers and schedules stated as
facts ("serves about 300 families a week"), malfunctions said without a failure word ("reads 40 degrees too
high", "stops mid-run with code E-07") and events with an ordinary past verb ("won a regional award last
night") stay untyped, which costs recall only.

The texts are short, single-sentence notes in plain English, written by one person, who also wrote the
examples the model votes with; a writer with another style will see lower recall, and precision may drop
where a rule fires and the nearest examples happen to agree with it. Real memories are longer and mix types;
the rules return the first that fires (error, instruction, decision, preference, event, observation, fact)
and the vote judges the whole text's vector. Other languages get no type from the rules, and the vote then
types a text only when its examples clearly agree. A writer's own `--type` always wins; without a semantic
model (the hash embedder) the rules alone answer, as before."""


if __name__ == "__main__":
    raise SystemExit(main())
