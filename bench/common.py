"""Shared pieces of the benchmark suite: machine facts, peak RSS, percentiles, child processes, and the
synthetic data set every system is measured on.

The synthetic set is deterministic for a size: clustered, normalised 384-dimensional vectors (so nearest
neighbours mean something and recall@10 of an ANN index is a fair question), generated text whose words
follow the clusters (so full-text search finds the same rows the vectors do), ten principals of equal
share, and queries made from stored rows (a vector near the row, a few of its words). It is written once
under ``bench/.work/data-<size>/`` and every store (memdeck, Chroma, the prototype) is built from it.
"""

from __future__ import annotations

import json
import os
import platform
import resource
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
WORK = BENCH / ".work"
SHARED_DATA = Path(os.environ.get("MEMDECK_SHARED_DATA", REPO.parent / "shared" / "data"))

DIM = 384
PRINCIPALS = [f"user-{i}" for i in range(10)]
AGENTS = ["assistant", "coder", "scheduler", "researcher"]
SEED = 20261122
CHUNK = 100_000  # rows generated and written per batch


# --- machine, memory, timing ------------------------------------------------------------------------


def peak_rss_mb() -> float:
    """Peak resident set size of this process so far (Linux reports kilobytes)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def ram_gib() -> float:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                return int(line.split()[1]) / 1024 / 1024
    except OSError:
        pass
    return 0.0


def version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"


VERSIONED = [
    "lancedb",
    "pylance",
    "duckdb",
    "textual",
    "torch",
    "sentence-transformers",
    "numpy",
    "pyarrow",
    "chromadb",
]


def machine_info() -> dict[str, Any]:
    return {
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "ram_gib": round(ram_gib(), 1),
        "os": platform.platform(),
        "python": platform.python_version(),
        "versions": {p: version(p) for p in VERSIONED},
        "load_avg": [round(x, 2) for x in os.getloadavg()],
    }


def percentiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {"p50": float("nan"), "p95": float("nan"), "mean": float("nan"), "n": 0}
    arr = np.asarray(values, dtype=np.float64)
    return {
        "p50": float(np.percentile(arr, 50)),
        "p95": float(np.percentile(arr, 95)),
        "mean": float(arr.mean()),
        "n": int(arr.size),
    }


class Timer:
    """Wall time, and this process's CPU time (all threads): on a shared machine the CPU time shows the
    work done even when other processes stretch the wall time."""

    def __enter__(self) -> Timer:
        self.t0 = time.perf_counter()
        self.c0 = time.process_time()
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = time.perf_counter() - self.t0
        self.cpu_seconds = time.process_time() - self.c0

    @property
    def cpu_ms(self) -> float:
        return self.cpu_seconds * 1000

    @property
    def ms(self) -> float:
        return self.seconds * 1000


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# --- child processes --------------------------------------------------------------------------------


@dataclass
class ChildResult:
    cmd: list[str]
    returncode: int | None  # None: killed at the time limit
    seconds: float
    peak_rss_mb: float  # of the child and the descendants it waited for
    stdout: str
    stderr: str

    @property
    def ok(self) -> bool:
        return self.returncode == 0


def run_child(
    cmd: list[str], timeout: float, env: dict[str, str] | None = None, cwd: Path = REPO
) -> ChildResult:
    """Run a command with a time limit and measure its own peak RSS with wait4 (not the runner's)."""
    out_path = WORK / "logs" / f"child-{os.getpid()}-{time.monotonic_ns()}"
    out_path.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    with open(f"{out_path}.out", "w+") as out, open(f"{out_path}.err", "w+") as err:
        # A new session so a time-limit kill takes the child's own children with it.
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=env, cwd=cwd, start_new_session=True)
        rc: int | None = None
        rss_kb = 0
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                rc = os.waitstatus_to_exitcode(status)
                rss_kb = usage.ru_maxrss
                break
            if time.perf_counter() - t0 > timeout:
                os.killpg(proc.pid, 9)
                _, status, usage = os.wait4(proc.pid, 0)
                rss_kb = usage.ru_maxrss
                rc = None
                break
            time.sleep(0.2)
        proc.returncode = rc if rc is not None else -9
        seconds = time.perf_counter() - t0
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    for suffix in (".out", ".err"):  # the caller keeps what it needs
        Path(f"{out_path}{suffix}").unlink(missing_ok=True)
    return ChildResult(cmd, rc, seconds, rss_kb / 1024.0, stdout, stderr)


def bench_env() -> dict[str, str]:
    """The environment for benchmark children: an empty MEMDECK_HOME so no user config or store is read."""
    env = dict(os.environ)
    home = WORK / "home"
    home.mkdir(parents=True, exist_ok=True)
    env["MEMDECK_HOME"] = str(home)
    env.setdefault("TOKENIZERS_PARALLELISM", "false")
    env.setdefault("HF_HUB_OFFLINE", "1")
    env.setdefault("TRANSFORMERS_OFFLINE", "1")
    env["PYTHONUNBUFFERED"] = "1"
    return env


def emit(result: dict[str, Any], out: str | None) -> None:
    """Write a benchmark's JSON result (with its own peak RSS) to a file or stdout."""
    result = {**result, "peak_rss_mb": round(peak_rss_mb(), 1)}
    text = json.dumps(result, indent=2, default=str)
    if out:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).write_text(text + "\n", encoding="utf-8")
    else:
        print(text)


# --- real text --------------------------------------------------------------------------------------


def locomo_texts(limit: int) -> list[str]:
    """Real conversational sentences (LoCoMo turns) for ingest: what an agent actually writes."""
    path = SHARED_DATA / "locomo" / "locomo10.json"
    texts: list[str] = []
    if path.exists():
        data = json.loads(path.read_text(encoding="utf-8"))
        for conv in data:
            c = conv["conversation"]
            for key in sorted(k for k in c if k.startswith("session_") and not k.endswith("date_time")):
                for turn in c[key]:
                    text = f'{turn["speaker"]} said, "{turn["text"]}"'
                    if turn.get("blip_caption"):
                        text += f" and shared {turn['blip_caption']}"
                    texts.append(text)
    if not texts:  # no shared data: generated sentences still time the model
        rng = np.random.default_rng(SEED)
        vocab = vocabulary()
        texts = [" ".join(rng.choice(vocab, size=14)) for _ in range(limit)]
    while len(texts) < limit:
        texts = texts + [f"{t} (again)" for t in texts]
    return texts[:limit]


# --- synthetic data ---------------------------------------------------------------------------------

_SYLLABLES = [
    "ka",
    "lo",
    "mi",
    "ne",
    "ru",
    "sa",
    "ti",
    "vo",
    "ze",
    "pa",
    "do",
    "fi",
    "gu",
    "he",
    "ja",
    "ko",
    "li",
    "ma",
    "no",
    "pe",
    "qu",
    "ri",
    "so",
    "tu",
    "va",
    "wi",
    "xo",
    "ya",
    "zu",
    "be",
]


def vocabulary(size: int = 30_000) -> np.ndarray:
    """Deterministic pseudo-words (no stop words, no stemming surprises: each is its own term)."""
    n = len(_SYLLABLES)
    words = []
    for i in range(size):
        a, b, c = i % n, (i // n) % n, (i // (n * n)) % n
        words.append(_SYLLABLES[a] + _SYLLABLES[b] + _SYLLABLES[c] + "x")
    return np.array(words)


@dataclass
class Dataset:
    """A generated data set on disk: vectors (memmap), row metadata, queries."""

    root: Path
    size: int

    @property
    def vectors(self) -> np.ndarray:
        return np.load(self.root / "vectors.npy", mmap_mode="r")

    @property
    def principal_idx(self) -> np.ndarray:
        return np.load(self.root / "principal.npy")

    def texts(self) -> list[str]:
        with open(self.root / "texts.txt", encoding="utf-8") as fh:
            return fh.read().split("\n")[: self.size]

    def queries(self) -> list[dict[str, Any]]:
        return json.loads((self.root / "queries.json").read_text(encoding="utf-8"))

    def query_vectors(self) -> np.ndarray:
        return np.load(self.root / "query_vectors.npy")

    def ids(self) -> list[str]:
        return [row_id(i) for i in range(self.size)]

    def created_at(self) -> np.ndarray:
        return np.load(self.root / "age_days.npy")


def row_id(i: int) -> str:
    return f"sem_{i:020x}"


def dataset(size: int, n_queries: int = 300) -> Dataset:
    """The data set of this size, generated on first use and cached under bench/.work/."""
    root = WORK / f"data-{size}"
    done = root / "done"
    if done.exists():
        return Dataset(root, size)
    root.mkdir(parents=True, exist_ok=True)
    log(f"generating {size:,} rows of synthetic data in {root}")
    rng = np.random.default_rng(SEED + size)
    n_clusters = max(64, size // 1000)
    centers = rng.standard_normal((n_clusters, DIM)).astype(np.float32)
    centers /= np.linalg.norm(centers, axis=1, keepdims=True)
    vocab = vocabulary()
    # Topic words per cluster: the text of a row shares words with its vector's neighbours.
    topic = rng.integers(0, len(vocab), size=(n_clusters, 8))
    vectors = np.lib.format.open_memmap(root / "vectors.npy", mode="w+", dtype=np.float32, shape=(size, DIM))
    cluster = rng.integers(0, n_clusters, size=size)
    principal = np.arange(size) % len(PRINCIPALS)
    rng.shuffle(principal)
    # Zipf-like general vocabulary: a few common words, a long tail of rare ones.
    ranks = np.arange(1, len(vocab) + 1, dtype=np.float64)
    word_p = 1.0 / ranks**1.05
    word_p /= word_p.sum()
    with open(root / "texts.txt", "w", encoding="utf-8") as fh:
        for start in range(0, size, CHUNK):
            end = min(size, start + CHUNK)
            n = end - start
            noise = rng.standard_normal((n, DIM)).astype(np.float32) / np.sqrt(DIM)
            v = centers[cluster[start:end]] + 0.8 * noise
            v /= np.linalg.norm(v, axis=1, keepdims=True)
            vectors[start:end] = v
            lengths = rng.integers(6, 17, size=n)
            general = rng.choice(len(vocab), size=(n, 16), p=word_p)
            picks = rng.integers(0, 8, size=(n, 3))
            lines = []
            for j in range(n):
                t = topic[cluster[start + j]][picks[j]]
                words = list(vocab[general[j, : lengths[j]]]) + list(vocab[t])
                lines.append(" ".join(words))
            fh.write("\n".join(lines))
            fh.write("\n" if end < size else "")
    vectors.flush()
    np.save(root / "principal.npy", principal.astype(np.int16))
    np.save(root / "cluster.npy", cluster.astype(np.int32))
    np.save(root / "age_days.npy", rng.uniform(0, 365, size=size).astype(np.float32))
    # Queries: a stored row's vector plus noise (its nearest neighbours are its cluster-mates), and three
    # of its words, so both channels have real answers.
    del vectors
    vectors = np.load(root / "vectors.npy", mmap_mode="r")
    texts = Dataset(root, size).texts()
    targets = rng.choice(size, size=n_queries, replace=False)
    qv = np.asarray(vectors[np.sort(targets)], dtype=np.float32)[np.argsort(np.argsort(targets))]
    qv = qv + 0.5 * rng.standard_normal(qv.shape).astype(np.float32) / np.sqrt(DIM)
    qv /= np.linalg.norm(qv, axis=1, keepdims=True)
    np.save(root / "query_vectors.npy", qv.astype(np.float32))
    queries = []
    for n, t in enumerate(targets):
        words = texts[int(t)].split()
        chosen = [words[-1], words[-2], words[int(rng.integers(0, max(1, len(words) - 3)))]]
        queries.append(
            {"n": n, "target": int(t), "principal": PRINCIPALS[int(principal[t])], "text": " ".join(chosen)}
        )
    (root / "queries.json").write_text(json.dumps(queries), encoding="utf-8")
    done.write_text("ok\n")
    return Dataset(root, size)


def base_time() -> datetime:
    """A fixed 'now' for generated timestamps, so cached stores stay comparable between runs."""
    return datetime(2026, 11, 1, tzinfo=UTC)


def stamps(age_days: np.ndarray) -> np.ndarray:
    base = np.datetime64(base_time().replace(tzinfo=None), "us")
    return base - (age_days.astype(np.float64) * 86400e6).astype("timedelta64[us]")


def exact_top_k(vectors: np.ndarray, mask_rows: np.ndarray, query: np.ndarray, k: int = 10) -> np.ndarray:
    """Exact cosine top-k over the given rows (vectors are normalised): the ground truth for recall@k."""
    sims = np.asarray(vectors[mask_rows], dtype=np.float32) @ query
    top = np.argpartition(-sims, k)[:k]
    return mask_rows[top[np.argsort(-sims[top])]]


def fmt_ms(value: float | None) -> str:
    if value is None or value != value:
        return "-"
    return f"{value:.1f}" if value < 100 else f"{value:.0f}"


# --- LoCoMo as ordinary chat ----------------------------------------------------------------------------


def locomo_sessions() -> list[dict[str, list[dict[str, Any]]]] | None:
    """Each LoCoMo conversation's sessions (``session_N`` -> its turns, in order), or None when the shared
    data is not here. For checks that something offline proposes nothing from ordinary chat."""
    path = SHARED_DATA / "locomo" / "locomo10.json"
    if not path.exists():
        return None
    out = []
    for sample in json.loads(path.read_text(encoding="utf-8")):
        conv = sample["conversation"]
        out.append(
            {
                key: turns
                for key, turns in conv.items()
                if key.startswith("session_") and not key.endswith("date_time") and isinstance(turns, list)
            }
        )
    return out
