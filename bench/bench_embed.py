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

UNICODE = ["東京タワーは赤い", "Привет, как дела?", "مرحبا بالعالم", "🙂🚀 emoji only 🎉", "e\u0301 combining accent",
           "zero\u200bwidth space", "tab\tand\nnewline", "ΑΒΓ δεζ", "한국어 문장입니다", "हिन्दी वाक्य", "Ça coûte 5 €",
           "naïve café résumé", "straße über Öl", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 math letters", "\u202eright-to-left override"]


def corpus(n: int, seed: int = 5) -> dict[str, list[str]]:
    """Varied texts by kind: conversation turns, PII sentences, unicode, long (past 256 tokens), edge cases."""
    rng = random.Random(seed)
    turns = locomo_texts(4000)
    pii_file = SHARED_DATA / "pii" / "presidio_synth_structured_pii.jsonl"
    pii = [json.loads(line)["text"] for line in pii_file.read_text().splitlines()] if pii_file.exists() else []
    kinds = {
        "conversation": rng.sample(turns, n // 2),
        "pii": rng.sample(pii, min(len(pii), n // 8)) or rng.sample(turns, n // 8),
        "unicode": [f"{rng.choice(UNICODE)} {rng.choice(turns)[:80]} {rng.choice(UNICODE)}" for _ in range(n // 8)],
        "long": [" ".join(rng.sample(turns, rng.randint(15, 60))) for _ in range(n // 8)],
        "edge": ["", " ", "a", "?!", "x" * 1000, "word " * 600, "1234567890", "http://example.com/a?b=c",
                 "def f(x):\n    return x * 2", "   leading and trailing   "] + UNICODE,
    }
    return kinds


def compare(numpy_e: PackagedMiniLM, torch_e: SentenceTransformerEmbedder, kinds: dict[str, list[str]]) -> list[str]:
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


def same_recall(torch_e: SentenceTransformerEmbedder, numpy_e: PackagedMiniLM, rows: int, queries: list[str]) -> str:
    base = Path(tempfile.mkdtemp(prefix="memdeck-bench-embed-"))
    config = load_config()
    written = Store.open(base / "a", embedder=torch_e, config=config)
    written.remember_many([{"text": t, "tier": "semantic", "principal": "alice", "force": True}
                           for t in locomo_texts(rows)])
    written.close()
    shutil.copytree(base / "a", base / "b")  # recall counts hits: each encoder searches its own copy
    with_torch = Store.open(base / "a", embedder=torch_e, config=config)
    with_numpy = Store.open(base / "b", embedder=numpy_e, config=config)
    same = same_set = 0
    for q in queries:
        a = [i.memory.id for i in with_torch.recall(q, scope=Scope.of("alice"), k=10).items]
        b = [i.memory.id for i in with_numpy.recall(q, scope=Scope.of("alice"), k=10).items]
        same += a == b
        same_set += set(a) == set(b)
    with_torch.close()
    with_numpy.close()
    shutil.rmtree(base, ignore_errors=True)
    return (f"Recall on a store of {rows} LoCoMo turns written with torch, {len(queries)} LoCoMo questions, k=10: "
            f"the same ids in the same order for {same} of {len(queries)} queries "
            f"(the same set for {same_set}), torch-embedded query against numpy-embedded query.")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--texts", type=int, default=400)
    parser.add_argument("--store-rows", type=int, default=1000)
    args = parser.parse_args()
    loads = [os.getloadavg()[0]]
    start = time.perf_counter()
    numpy_e = PackagedMiniLM(torch=None)
    numpy_e.load()
    numpy_load = time.perf_counter() - start
    start = time.perf_counter()
    torch_e = SentenceTransformerEmbedder()
    torch_e.load()
    torch_load = time.perf_counter() - start
    kinds = corpus(args.texts)
    table = compare(numpy_e, torch_e, kinds)
    loads.append(os.getloadavg()[0])
    texts = locomo_texts(256)
    queries = [t[:60] for t in random.Random(1).sample(locomo_texts(2000), 30)]
    speed = {"numpy": throughput(numpy_e, texts, queries), "torch": throughput(torch_e, texts, queries)}
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
