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
import sys
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from types_set import DEV, FRESH, FRESH2, HELDOUT, TYPES, Item  # noqa: E402

from memdeck.core.memtypes import infer_type  # noqa: E402


def score(items: list[Item]) -> tuple[dict[str, dict[str, float]], list[str]]:
    tp: Counter[str] = Counter()
    predicted: Counter[str] = Counter()
    gold: Counter[str] = Counter()
    misses = []
    for item in items:
        got = infer_type(item.text)
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


def table(rows: dict[str, dict[str, float]]) -> str:
    out = ["| type | texts | given the type | precision | recall |", "|---|---:|---:|---:|---:|"]
    for t, r in rows.items():
        out.append(
            f"| {t} | {int(r['n'])} | {int(r['predicted'])} | {r['precision']:.3f} | {r['recall']:.3f} |"
        )
    return "\n".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(BENCH / "RESULTS-types.md"))
    parser.add_argument("--errors", action="store_true", help="print every miss")
    args = parser.parse_args()
    dev, dev_miss = score(DEV)
    held, held_miss = score(HELDOUT)
    fresh, fresh_miss = score(FRESH)
    fresh2, fresh2_miss = score(FRESH2)
    if args.errors:
        print("dev misses:\n" + "\n".join(dev_miss))
        print("held-out misses:\n" + "\n".join(held_miss))
        print("fresh misses:\n" + "\n".join(fresh_miss))
        print("fresh2 misses:\n" + "\n".join(fresh2_miss))
    worst = min(r["precision"] for t, r in held.items() if t != "all")
    worst_fresh = min(r["precision"] for t, r in fresh.items() if t != "all")
    worst_fresh2 = min(r["precision"] for t, r in fresh2.items() if t != "all")

    def pr(rows: dict[str, dict[str, float]], t: str = "all") -> str:
        return f"{rows[t]['precision']:.3f} / {rows[t]['recall']:.3f}"

    body = f"""# Memory types: the rule-based classifier on a hand-labelled set

Run: `python bench/bench_types.py` on {datetime.now(UTC):%Y-%m-%d} (Python {platform.python_version()}).
Set: bench/types_set.py. `dev` ({len(DEV)}) and `held-out` ({len(HELDOUT)}) were written in one sitting
before the first rules, 10 to 12 per type; `fresh` ({len(FRESH)}, six per type) after those rules were frozen.
The first rules were written with `dev` and `held-out` in view and revised on 2026-11-27 with `fresh` in view
too, so none of the three is a fair test any more.
`fresh2` ({len(FRESH2)}, ten per type) was written on 2026-11-27 before the second revision: everyday
phrasing as people tell an assistant and as agents write notes (chat lines, notes about "the user", log and
tool lines). It was scored once on the rules of that day (the baseline below), never read for errors while the
rules changed, and scored once more at the end: **it is the honest estimate.** A text left untyped counts
against recall only: leaving a text untyped is the classifier's way of saying it is unsure.

## Before and after the second revision (precision / recall, all types)

| part | before (rules of 2026-11-27 morning) | after | lowest per-type precision after |
|---|---|---|---:|
| fresh2, never tuned on | 0.793 / 0.329 (fact 0.615, event 0.833) | {pr(fresh2)} (fact {fresh2["fact"]["precision"]:.3f}) | {worst_fresh2:.3f} |
| fresh (tuned on in this revision) | 0.824 / 0.333 (fact 0.500) | {pr(fresh)} | {worst_fresh:.3f} |
| held-out | 1.000 / 1.000 | {pr(held)} | {worst:.3f} |
| dev | 1.000 / 0.975 | {pr(dev)} | {min(r["precision"] for t, r in dev.items() if t != "all"):.3f} |

What changed (core/memtypes.py), from the misses on `dev`, `held-out` and `fresh` only: "X is / has ..." is a
fact only when it states one, not a comparison ("is noticeably faster"), a plan or an ongoing change ("the plan
is", "is going to", "is switching"), a liking ("a big fan of"), a hedge or a judgement; words ending in -ed
that are not past verbs ("need", "hundred") no longer make an event; more wordings of a choice made ("we
opted for", "made up my mind", "final call", "the plan is to", "we're switching"), a failure ("ran out of
memory", "connection reset", "broke", "rejected"), a liking ("not a fan of"), a tendency ("sounds tired",
"takes longer", "whenever") and a conditional instruction ("If Rita asks ..., point her to ...").
The packaged model is not consulted: a type is inferred on the write path from the text alone.

## fresh2, never tuned on ({len(FRESH2)} texts), after

{table(fresh2)}

Lowest per-type precision on fresh2: {worst_fresh2:.3f} (target 0.9).

Baseline, the same texts on the rules before this revision (scored once, on 2026-11-27):

| type | texts | given the type | precision | recall |
|---|---:|---:|---:|---:|
| preference | 10 | 1 | 1.000 | 0.100 |
| decision | 10 | 0 | 1.000 | 0.000 |
| fact | 10 | 13 | 0.615 | 0.800 |
| error | 10 | 2 | 1.000 | 0.200 |
| observation | 10 | 4 | 1.000 | 0.400 |
| event | 10 | 6 | 0.833 | 0.500 |
| instruction | 10 | 3 | 1.000 | 0.300 |
| all | 70 | 29 | 0.793 | 0.329 |

## Misses on fresh2 (gold -> given), read only after the final run

```
{chr(10).join(fresh2_miss) or "  none"}
```

## Fresh ({len(FRESH)} texts; seen while revising)

{table(fresh)}

## Held-out ({len(HELDOUT)} texts)

{table(held)}

Lowest per-type precision on held-out: {worst:.3f} (target 0.9).

## Development ({len(DEV)} texts)

{table(dev)}

## Misses on the fresh set (gold -> given)

```
{chr(10).join(fresh_miss) or "  none"}
```

## Held-out misses

```
{chr(10).join(held_miss) or "  none"}
```

## What this shows and what it does not

**The target is not met on text nobody tuned on:** fresh2 precision is {fresh2["all"]["precision"]:.2f} over
all types (baseline {0.793:.2f}), recall {fresh2["all"]["recall"]:.2f}; the lowest per-type precision is
{worst_fresh2:.2f}. Five of the seven types make no mistake there. The fact rule still takes "X is / are ..."
sentences for facts (fact precision {fresh2["fact"]["precision"]:.2f}): a preference ("Jazz is my go-to"), a
decision said as a state ("We are not going to renew ...", "The launch is postponed ..."), an error said as a
state ("The deploy pipeline is stuck ...", "Tests are red on main ..."); and the event rule took a decision
made at a meeting ("Agreed in today's sync: ...") for an event (event precision
{fresh2["event"]["precision"]:.2f}). Recall stays low: agent notes ("The user likes ...",
"User decided to ..."), verbless notes ("Green tea over coffee, every time.", "Settled: ...") and instructions
that open with a clause ("When summarising meetings, list ...") get no type. A type never feeds recall's
ranking (it is a filter and a column), so an untyped memory loses nothing but the type filter.

The texts are short, single-sentence notes in plain English, written by one person; the rules are
wording rules (an exception name, "we decided", "I prefer", a stated time with a past verb, "seems",
"X is Y"). Real memories written by agents are longer and mix types (an event that mentions a decision);
the classifier then returns the first rule that fires, in the order error, instruction, decision,
preference, event, observation, fact. Other languages get no type. A writer's own `--type` always wins.
"""
    Path(args.out).write_text(body, encoding="utf-8")
    print(table(fresh2))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
