"""The packaged all-MiniLM-L6-v2 in numpy against sentence-transformers (torch): the same vectors (max abs
difference, min cosine over several hundred varied texts), the same recall (ids and order on a real store),
load time and throughput for single queries and batches.

    python bench/bench_embed.py [--texts 400] [--store-rows 1000]     # writes bench/RESULTS-embed.md
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import SHARED_DATA, locomo_texts, peak_rss_mb

from memdeck.core import Scope
from memdeck.core.config import load_config
from memdeck.core.embed import PackagedMiniLM, SentenceTransformerEmbedder
from memdeck.core.store import Store

UNICODE = [
    "東京タワーは赤い",
    "Привет, как дела?",
    "مرحبا بالعالم",
    "🙂🚀 emoji only 🎉",
    "e\u0301 combining accent",
    "zero\u200bwidth space",
    "tab\tand\nnewline",
    "ΑΒΓ δεζ",
    "한국어 문장입니다",
    "हिन्दी वाक्य",
    "Ça coûte 5 €",
    "naïve café résumé",
    "straße über Öl",
    "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 math letters",
    "\u202eright-to-left override",
]


def corpus(n: int, seed: int = 5) -> dict[str, list[str]]:
    """Varied texts by kind: conversation turns, PII sentences, unicode, long (past 256 tokens), edge cases."""
    rng = random.Random(seed)
    turns = locomo_texts(4000)
    pii_file = SHARED_DATA / "pii" / "presidio_synth_structured_pii.jsonl"
    pii = (
        [json.loads(line)["text"] for line in pii_file.read_text().splitlines()] if pii_file.exists() else []
    )
    kinds = {
        "conversation": rng.sample(turns, n // 2),
        "pii": rng.sample(pii, min(len(pii), n // 8)) or rng.sample(turns, n // 8),
        "unicode": [
            f"{rng.choice(UNICODE)} {rng.choice(turns)[:80]} {rng.choice(UNICODE)}" for _ in range(n // 8)
        ],
        "long": [" ".join(rng.sample(turns, rng.randint(15, 60))) for _ in range(n // 8)],
        "edge": [
            "",
            " ",
            "a",
            "?!",
            "x" * 1000,
            "word " * 600,
            "1234567890",
            "http://example.com/a?b=c",
            "def f(x):\n    return x * 2",
            "   leading and trailing   ",
        ]
        + UNICODE,
    }
    return kinds


def compare(
    numpy_e: PackagedMiniLM, torch_e: SentenceTransformerEmbedder, kinds: dict[str, list[str]]
) -> list[str]:
    lines = ["| texts | n | max abs difference | min cosine |", "|---|---|---|---|"]
    every_a, every_b = [], []
    for kind, texts in kinds.items():
        a, b = numpy_e.encode(texts), torch_e.encode(texts)
        every_a.append(a)
        every_b.append(b)
        cos = np.sum(a * b, axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
        lines.append(f"| {kind} | {len(texts)} | {np.abs(a - b).max():.2e} | {cos.min():.7f} |")
    a, b = np.concatenate(every_a), np.concatenate(every_b)
    cos = np.sum(a * b, axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    lines.append(f"| **all** | {len(a)} | {np.abs(a - b).max():.2e} | {cos.min():.7f} |")
    return lines


def throughput(embed: object, texts: list[str], queries: list[str]) -> tuple[float, float, float]:
    """(median ms for one short query, texts/s for the whole batch, texts/s for batches of 16)."""
    encode = embed.encode  # type: ignore[attr-defined]
    encode(queries[:2])
    times = []
    for q in queries:
        start = time.perf_counter()
        encode([q])
        times.append((time.perf_counter() - start) * 1000)
    start = time.perf_counter()
    encode(texts)
    batch = len(texts) / (time.perf_counter() - start)
    start = time.perf_counter()
    for i in range(0, len(texts), 16):
        encode(texts[i : i + 16])
    small = len(texts) / (time.perf_counter() - start)
    return statistics.median(times), batch, small


def same_recall(
    torch_e: SentenceTransformerEmbedder, numpy_e: PackagedMiniLM, rows: int, queries: list[str]
) -> str:
    """Each query recalled twice from one store written with torch, with the query embedded by each encoder;
    access counts and traces are left alone, so nothing but the query vector differs between the two."""
    base = Path(tempfile.mkdtemp(prefix="memdeck-bench-embed-"))
    store = Store.open(base / "store", embedder=torch_e, config=load_config())
    store.remember_many(
        [{"text": t, "tier": "semantic", "principal": "alice", "force": True} for t in locomo_texts(rows)]
    )
    same = same_set = 0
    gaps: list[float] = []
    for q in queries:
        runs = []
        for embedder in (torch_e, numpy_e):
            store.engine.embedder = embedder
            runs.append(
                store.recall(q, scope=Scope.of("alice"), k=10, record_access=False, trace=False).items
            )
        a, b = ([i.memory.id for i in r] for r in runs)
        same += a == b
        same_set += set(a) == set(b)
        if a != b:  # how close were the scores the two orders disagree on?
            gaps.append(max(abs(x.score - y.score) for x, y in zip(runs[0], runs[1], strict=False)))
    store.close()
    shutil.rmtree(base, ignore_errors=True)
    line = (
        f"Recall on a store of {rows} LoCoMo turns written with torch, {len(queries)} LoCoMo questions, k=10, "
        f"the query embedded by torch and by numpy: the same ids in the same order for {same} of "
        f"{len(queries)} queries (the same set for {same_set})."
    )
    if gaps:
        line += f" Where the order differs, the largest score difference at a rank is {max(gaps):.2e}."
    return line


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--texts", type=int, default=400)
    parser.add_argument("--store-rows", type=int, default=1000)
    args = parser.parse_args()
    loads = [os.getloadavg()[0]]
    texts = locomo_texts(256)
    queries = [t[:60] for t in random.Random(1).sample(locomo_texts(2000), 30)]
    start = time.perf_counter()
    numpy_e = PackagedMiniLM(torch=None)
    numpy_e.load()
    numpy_load = time.perf_counter() - start
    speed = {"numpy": throughput(numpy_e, texts, queries)}  # measured before torch is in the process
    start = time.perf_counter()
    torch_e = SentenceTransformerEmbedder()
    torch_e.load()
    torch_load = time.perf_counter() - start
    speed["torch"] = throughput(torch_e, texts, queries)
    loads.append(os.getloadavg()[0])
    table = compare(numpy_e, torch_e, corpus(args.texts))
    loads.append(os.getloadavg()[0])
    questions = []
    locomo = SHARED_DATA / "locomo" / "locomo10.json"
    if locomo.exists():
        questions = [q["question"] for q in json.loads(locomo.read_text())[0]["qa"]][:50]
    recall_line = same_recall(torch_e, numpy_e, args.store_rows, questions or queries)
    loads.append(os.getloadavg()[0])
    lines = [
        "# The packaged model in numpy and in torch",
        "",
        f"Measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {platform.machine()}, {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}, numpy {np.__version__}; `python bench/bench_embed.py --texts {args.texts} "
        f"--store-rows {args.store_rows}`. The machine is shared: the 1-minute load average ranged "
        f"{min(loads):.1f}-{max(loads):.1f}, which slows and scatters every timing below.",
        "",
        f"Load (in this process, warm file cache): numpy {numpy_load:.2f} s, torch (sentence-transformers "
        f"import and model) {torch_load:.2f} s.",
        "",
        "Vectors, numpy against torch, on the same texts:",
        "",
        *table,
        "",
        recall_line,
        "",
        "| backend | one short query (median) | 256 texts in one call | 256 texts in calls of 16 |",
        "|---|---|---|---|",
    ]
    for name, (single, batch, small) in speed.items():
        lines.append(f"| {name} | {single:.1f} ms | {batch:.0f} texts/s | {small:.0f} texts/s |")
    lines += ["", f"Peak RSS of this process: {peak_rss_mb():.0f} MB.", ""]
    out = Path(__file__).with_name("RESULTS-embed.md")
    out.write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
