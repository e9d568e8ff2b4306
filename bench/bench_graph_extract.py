"""Entity and relation extraction quality and speed on the labelled sample.

    python bench/bench_graph_extract.py [--gold tests/data/graph_extraction_gold.jsonl]
                                        [--out bench/RESULTS-graph-extract.md] [--errors dev|heldout]

The sample is hand-written (general shapes: personal facts, work and team facts, "Name: text" turns, dates,
negations, products and versions, places, quoted titles, handles, sentences with no entity). Each line has a
``split``:
  dev            the extractor was developed against these;
  heldout-early  60 written before the extractor's code, never used to change it (but written by the same
                 hand that chose the extractor's conventions, so flattering);
  heldout        the last 60 written, after the extractor worked, more conversational; scored only.

Scoring, per sentence, over sets:
  * entities: by ``normalise_name``; precision, recall and F1 summed over sentences (micro).
  * kind accuracy: over matched entities, the extracted kind equals the labelled kind.
  * relations: by (normalised subject, predicate, normalised object); precision and recall (micro).
Timing: each sentence is extracted ``--repeat`` times; the median wall time per sentence is kept, and
p50/p95/max over sentences are reported, with the mean CPU time of this process per sentence beside them.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memdeck.core.graph.extract import extract, normalise_name

REPO = Path(__file__).resolve().parent.parent
SPLITS = (
    "dev",
    "heldout-early",
    "heldout",
    "heldout-kinds",
    "heldout-kinds2",
    "heldout-kinds3",
    "heldout-kinds4",
)


def load(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


Refiner = Callable[[list[str], list[str]], list[str]]


def model_refiner(leave_out: list[dict[str, Any]] | None = None) -> Refiner:
    """Guessed kinds read from the names' embeddings, as the graph does when it indexes a memory.

    ``leave_out``: labelled rows whose names are taken out of the known names first, so that a split is
    never judged by its own labels (the known names include the labelled names of every split but
    heldout-kinds3)."""
    from memdeck.core.config import EmbeddingSettings
    from memdeck.core.embed import make_embedder
    from memdeck.core.graph.memory.kinds import known_names, prototypes, refine_all

    embedder = make_embedder(EmbeddingSettings())  # the default model, as a new store uses it
    model = embedder.name
    protos = prototypes(model, embedder.encode)
    if leave_out:
        keys = {normalise_name(e["name"]) for row in leave_out for e in row["entities"]}
        protos = protos.without({n for _k, n in known_names() if normalise_name(n) in keys})

    def refine(names: list[str], kinds: list[str]) -> list[str]:
        return refine_all(kinds, embedder.encode(names), model, embedder.encode, protos)

    return refine


def score(rows: list[dict[str, Any]], errors: bool = False, refiner: Refiner | None = None) -> dict[str, Any]:
    ent_tp = ent_fp = ent_fn = kind_ok = rel_tp = rel_fp = rel_fn = 0
    for row in rows:
        got = extract(row["text"])
        gold_e = {normalise_name(e["name"]): e["kind"] for e in row["entities"]}
        got_e: dict[str, str] = {}
        guessed = [e for e in got.entities if e.guessed]
        refined = (
            dict(
                zip(
                    [e.name for e in guessed],
                    refiner([e.name for e in guessed], [e.kind for e in guessed]),
                    strict=True,
                )
            )
            if refiner and guessed
            else {}
        )
        for e in got.entities:
            got_e.setdefault(normalise_name(e.name), refined.get(e.name, e.kind))
        matched = gold_e.keys() & got_e.keys()
        ent_tp += len(matched)
        ent_fp += len(got_e.keys() - gold_e.keys())
        ent_fn += len(gold_e.keys() - got_e.keys())
        kind_ok += sum(gold_e[k] == got_e[k] for k in matched)
        if row["relations"] is None:  # a split labelled for entities and kinds only
            gold_r = got_r = set()
        else:
            gold_r = {
                (normalise_name(r["subject"]), r["predicate"], normalise_name(r["object"]))
                for r in row["relations"]
            }
            got_r = {
                (normalise_name(r.subject), r.predicate, normalise_name(r.object)) for r in got.relations
            }
        rel_tp += len(gold_r & got_r)
        rel_fp += len(got_r - gold_r)
        rel_fn += len(gold_r - got_r)
        if errors:
            problems = [f"  entity missed {k!r}" for k in gold_e.keys() - got_e.keys()]
            problems += [f"  entity extra {k!r} ({got_e[k]})" for k in got_e.keys() - gold_e.keys()]
            problems += [
                f"  kind {k!r}: {got_e[k]} (gold {gold_e[k]})" for k in matched if gold_e[k] != got_e[k]
            ]
            problems += [f"  relation missed {r}" for r in gold_r - got_r]
            problems += [f"  relation extra {r}" for r in got_r - gold_r]
            if problems:
                print(row["text"], *problems, sep="\n")
    p = ent_tp / (ent_tp + ent_fp) if ent_tp + ent_fp else 1.0
    r = ent_tp / (ent_tp + ent_fn) if ent_tp + ent_fn else 1.0
    return {
        "sentences": len(rows),
        "entity_gold": ent_tp + ent_fn,
        "entity_p": p,
        "entity_r": r,
        "entity_f1": 2 * p * r / (p + r) if p + r else 0.0,
        "kind_accuracy": kind_ok / ent_tp if ent_tp else 0.0,
        "relation_gold": rel_tp + rel_fn,
        "relation_p": rel_tp / (rel_tp + rel_fp) if rel_tp + rel_fp else 1.0,
        "relation_r": rel_tp / (rel_tp + rel_fn) if rel_tp + rel_fn else 1.0,
    }


def refine_cost(rows: list[dict[str, Any]]) -> tuple[float, int]:
    """Median time to read one guessed name's kind from its vector (the vector given), and the known names."""
    from memdeck.core.config import EmbeddingSettings
    from memdeck.core.embed import make_embedder
    from memdeck.core.graph.memory.kinds import known_names, prototypes, refine

    embedder = make_embedder(EmbeddingSettings())
    protos = prototypes(embedder.name, embedder.encode)
    names = sorted({e.name for r in rows for e in extract(r["text"]).entities if e.guessed})[:200]
    vectors = embedder.encode(names)
    runs = []
    for vector in vectors:
        t0 = time.perf_counter()
        for _ in range(20):
            refine("person", vector, protos)
        runs.append((time.perf_counter() - t0) / 20 * 1e6)
    return statistics.median(runs), len(known_names())


def timing(texts: list[str], repeat: int) -> dict[str, float]:
    per_sentence = []
    for text in texts:
        runs = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            extract(text)
            runs.append(time.perf_counter() - t0)
        per_sentence.append(statistics.median(runs) * 1e6)
    per_sentence.sort()
    cpu0 = time.process_time()
    for _ in range(repeat):
        for text in texts:
            extract(text)
    cpu_mean = (time.process_time() - cpu0) / (repeat * len(texts)) * 1e6
    return {
        "cpu_mean_us": cpu_mean,
        "p50_us": per_sentence[len(per_sentence) // 2],
        "p95_us": per_sentence[min(len(per_sentence) - 1, int(len(per_sentence) * 0.95))],
        "max_us": per_sentence[-1],
        "mean_us": statistics.fmean(per_sentence),
    }


def report(
    results: dict[str, dict[str, Any]],
    speed: dict[str, float],
    load_avg: tuple[float, ...],
    command: str,
    refine_us: float,
    known_rows: int,
) -> str:
    from memdeck.core.graph.memory.kinds import MARGIN, NEAREST, PAIR_MARGIN, PHRASE_WEIGHT

    lines = [
        "## Graph extraction (core/graph/extract.py)",
        "",
        f"Run {datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {platform.platform()}, {os.cpu_count()} CPUs "
        f"(load average {load_avg[0]:.2f} {load_avg[1]:.2f} {load_avg[2]:.2f} at the start), "
        f"Python {platform.python_version()}. `{command}`.",
        "",
        "Sample: tests/data/graph_extraction_gold.jsonl, hand-written general sentences. `dev`: used while",
        "building the extractor. `heldout-early`: 60 written before the extractor's code and never used to change",
        "it, but labelled by the hand that chose its conventions (flattering). `heldout`: the last 60 written, after",
        "the extractor worked, more conversational. `heldout-kinds` (46) and `heldout-kinds2` (49): labelled for",
        "entities and kinds only, written before the first and the second revision of the kinds (bare names of",
        "places, companies and software; meetings, quarters, acronyms, lowercase tools), each the honest estimate",
        "of its revision and read for errors afterwards. `heldout-kinds3` (45 sentences, 112 entities of every",
        "kind, names of many origins, tools in lower and upper case) was written before this third revision and",
        "scored once on the code before it (baseline: kind accuracy 0.590 text only, 0.676 + model), never read",
        "while the known names were chosen (none of its names is among them), scored once more after the known",
        'names were in, then read for errors; the only change after that read ("from X" may also become a',
        "product) was measured on `heldout-kinds4` (36 sentences, 79 entities), written before it and scored",
        "once before (baseline: 0.581 text only, 0.716 + model) and once after. **`heldout-kinds4` is the honest",
        "estimate of this revision.**",
        "",
        "The third revision (core/graph/memory/kinds.py, core/data/kind_names.json): a guessed name's kind is",
        "scored with the model against each kind's phrases (as before) and, new, against about a thousand known",
        "names of each kind: first names of many origins, cities, countries and regions, companies and",
        "institutions, software and devices, and the labelled names of the earlier splits (a name labelled with two",
        f"kinds is left out). A kind's score is {PHRASE_WEIGHT} x the nearest phrase's cosine + {1 - PHRASE_WEIGHT:.1f} x the mean",
        f"cosine of its {NEAREST} nearest known names; a guessed person takes another kind that beats person by {MARGIN},",
        'a kind read only from "at X" or "from X" the other of place and organisation (or, after "from", a',
        f"product) that beats it by {PAIR_MARGIN}. The settings were chosen on `dev` to `heldout-kinds2`, each split",
        "scored with its own names taken out of the known names; every `+ model` row below is scored that way too",
        "(a split never meets its own labels), which is conservative for names the lists do hold: the",
        "`heldout-kinds4 + model, shipped names` row is the same split with the names as shipped (19 of its 79",
        "names are among them: Lufthansa, Munich, Postman, Excel, ...).",
        "",
        "`+ model`: the kinds the graph stores when it indexes a memory (only names marked `guessed` by the text",
        "are read from the model; a kind the text states is kept).",
        "",
        "| split | sentences | gold entities | entity P | entity R | entity F1 | kind acc. | gold relations "
        "| relation P | relation R |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, s in results.items():
        lines.append(
            f"| {name} | {s['sentences']} | {s['entity_gold']} | {s['entity_p']:.3f} | {s['entity_r']:.3f} "
            f"| {s['entity_f1']:.3f} | {s['kind_accuracy']:.3f} | {s['relation_gold']} | {s['relation_p']:.3f} "
            f"| {s['relation_r']:.3f} |"
        )
    lines += [
        "",
        "Targets: entity P and R >= 0.85, relation P >= 0.8; kind accuracy (the share of matched entities given",
        "their labelled kind, i.e. the kinds' precision) >= 0.9.",
        "",
        f"**The kinds' target is not met on new text**: on `heldout-kinds4`, never tuned on, kind accuracy is "
        f"{results['heldout-kinds4 + model']['kind_accuracy']:.3f} with the model, its own names left out (baseline",
        f"0.716), {results['heldout-kinds4 + model, shipped names']['kind_accuracy']:.3f} with the names as shipped, and "
        f"{results['heldout-kinds4']['kind_accuracy']:.3f} from the text alone; on `heldout-kinds3`",
        f"{results['heldout-kinds3 + model']['kind_accuracy']:.3f} (baseline 0.676; the same before the last change). On the earlier "
        "splits, each without its own names, the model now gives dev",
        f"{results['dev + model']['kind_accuracy']:.3f}, heldout {results['heldout + model']['kind_accuracy']:.3f}, heldout-kinds "
        f"{results['heldout-kinds + model']['kind_accuracy']:.3f}, heldout-kinds2 "
        f"{results['heldout-kinds2 + model']['kind_accuracy']:.3f} (0.959, 0.920, 0.875, 0.885 before, phrases only). What is left, read",
        "on `heldout-kinds3`: the packaged model does not know many real names well enough from the name alone",
        "(Kinshasa, Baku, Marrakesh, Espoo and Busan score closer to a person than to a place; Notion, Linear,",
        "Figma and Obsidian are ordinary words or read as people; Oxfam, Unilever and Lidl stay people), and",
        'a name after "in" is taken for a place from the text ("live in Grafana", "in Rust", "in Bitwarden"), a',
        'kind the model is not asked about (making "in X" a guess contradicted the rule that "in Lisbon" is not',
        "one, and gained nothing on the development splits, so it was dropped). A better reading needs the",
        "name's context (the words around it), which the graph does not pass to the kinds today.",
        "Entity recall stays below 1 for lowercase tools (vim, tmux, helm, argocd, postgres, terraform: a name is",
        "found by its capital) and for titles and names that contain lowercase words (Save the Children, Half of a",
        "Yellow Sun). Kinds feed recall's ranking in one place only: the `unnamed_query_weight` part leaves out",
        "of the query the words the graph knows as a person.",
        "",
        "Cost: the known names' vectors for the packaged model are shipped (core/data/kind_names.npy, written by",
        f"bench/make_packaged_vectors.py); reading one guessed name's kind is one product with a {known_rows} x 384",
        f"matrix and the phrases, {refine_us:.0f} µs per name (median), against the embedding of the name itself",
        "that entity resolution computes anyway.",
        "",
        "Read with care: every sentence and label was written by the author of the extractor, who also chose its",
        "conventions (which predicates exist, that a holiday is a date); text written by others will score lower,",
        "as the `heldout` row (written last, never used to change the extractor) already shows for kinds and",
        'relation recall. Known weak spots, from the dev mistakes: the kind of a bare name with no cue ("likes',
        'Radiohead", "Japan is ...": default person), relations through he/she/they (never resolved), verbs',
        "outside `words.VERBS`, clauses that separate a subject from its verb. No NLP library is used: spaCy's",
        "models and NLTK's chunker data are downloads, which the extractor must not need.",
        "",
        "Time per sentence (median of repeated runs per sentence, over all sentences): "
        f"p50 {speed['p50_us']:.0f} µs, p95 {speed['p95_us']:.0f} µs, max {speed['max_us']:.0f} µs, "
        f"mean {speed['mean_us']:.0f} µs; this process's CPU time per sentence, mean {speed['cpu_mean_us']:.0f} µs "
        "(the machine was shared: see the load average).",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gold", type=Path, default=REPO / "tests" / "data" / "graph_extraction_gold.jsonl")
    ap.add_argument("--out", type=Path, default=REPO / "bench" / "RESULTS-graph-extract.md")
    ap.add_argument("--repeat", type=int, default=50)
    ap.add_argument("--errors", choices=list(SPLITS), help="print the mistakes on one split, write nothing")
    ap.add_argument("--model", action="store_true", help="with --errors: the kinds as the graph refines them")
    ap.add_argument("--dev", action="store_true", help="kind accuracy of every split but heldout-kinds3")
    args = ap.parse_args()
    load_avg = os.getloadavg()
    rows = load(args.gold)
    if args.errors:
        picked = [r for r in rows if r["split"] == args.errors]
        print(
            json.dumps(
                score(picked, errors=True, refiner=model_refiner(picked) if args.model else None), indent=2
            )
        )
        return
    if args.dev:
        for split in SPLITS[:-1]:
            picked = [r for r in rows if r["split"] == split]
            text_only = score(picked)["kind_accuracy"]
            print(
                split,
                f"{text_only:.3f}",
                f"{score(picked, refiner=model_refiner(picked))['kind_accuracy']:.3f}",
            )
        return
    results = {split: score([r for r in rows if r["split"] == split]) for split in SPLITS}
    results["all"] = score(rows)
    for split in SPLITS:
        picked = [r for r in rows if r["split"] == split]
        results[f"{split} + model"] = score(picked, refiner=model_refiner(picked))
    results["all + model"] = score(rows, refiner=model_refiner())
    kinds4 = [r for r in rows if r["split"] == "heldout-kinds4"]
    results["heldout-kinds4 + model, shipped names"] = score(kinds4, refiner=model_refiner())
    refine_us, known_rows = refine_cost(rows)
    speed = timing([r["text"] for r in rows], args.repeat)
    command = "python " + " ".join(Path(a).name if i == 0 else a for i, a in enumerate(sys.argv))
    text = report(
        results,
        speed,
        load_avg,
        command.replace("python bench_", "python bench/bench_"),
        refine_us,
        known_rows,
    )
    args.out.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
