"""The packaged all-MiniLM-L6-v2 without torch: its BERT forward pass, mean pooling and L2 normalisation in
numpy, reading the model's own ``model.safetensors``, ``tokenizer.json`` and ``config.json``.

Importing sentence-transformers (torch) costs 4-6 s of CPU; this loads in a fraction of a second, so the
first recall of a fresh process is not kept waiting. It computes what sentence-transformers computes, in the
same float32 arithmetic but a different order of operations: vectors from the two agree to within rounding
(cosine >= 0.99999, ``tests/embed/test_embed_numpy.py``; figures in bench/RESULTS-embed.md). That is the only
reason vectors written by one may be searched with the other under the same stored model name.
"""

from __future__ import annotations

import json
import mmap
import os
from pathlib import Path
from typing import Any

import numpy as np

MAX_SEQ_LENGTH = 256  # sentence_bert_config.json of the model; longer texts are truncated, as there
_ERF_P = 0.3275911  # Abramowitz & Stegun 7.1.26: |error| < 1.5e-7, below float32 rounding of GELU's inputs
_ERF_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)


class ModelFilesMissing(RuntimeError):
    """The model directory lacks a file this encoder reads, or holds a model it cannot run."""


def _erf(x: np.ndarray) -> np.ndarray:
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + _ERF_P * a)
    a1, a2, a3, a4, a5 = _ERF_A
    poly = ((((a5 * t + a4) * t + a3) * t + a2) * t + a1) * t
    return np.asarray(sign * (1.0 - poly * np.exp(-a * a)), dtype=x.dtype)


def _gelu(x: np.ndarray) -> np.ndarray:
    """BERT's exact GELU, x * Phi(x), as transformers' ``"gelu"`` (not the tanh approximation)."""
    return np.asarray(0.5 * x * (1.0 + _erf(x * np.float32(0.7071067811865476))), dtype=np.float32)


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    var = np.mean(centred * centred, axis=-1, keepdims=True)
    return np.asarray(centred / np.sqrt(var + np.float32(eps)) * weight + bias, dtype=np.float32)


# safetensors' element types numpy reads as they are stored (little-endian); integer tensors (BERT's position
# ids) are not weights and are skipped.
_FLOAT_TYPES = {"F16": "<f2", "F32": "<f4", "F64": "<f8"}
_OTHER_TYPES = frozenset({"BOOL", "U8", "I8", "U16", "I16", "U32", "I32", "U64", "I64"})


def read_safetensors(file: Path) -> dict[str, np.ndarray]:
    """The floating-point tensors of a safetensors file, as float32 arrays over a read-only memory map of it.

    float32 tensors are not copied: a page is read when a computation first touches it, so a process that
    embeds one query reads the rows of the word embeddings its tokens use, not the whole 47 MB table (the
    file is 90 MB). The format: an 8-byte little-endian header length, a JSON header giving each tensor's
    type, shape and byte range, then the data.
    """
    with open(file, "rb") as fh:
        data = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    try:
        size = int.from_bytes(data[:8], "little")
        header = json.loads(data[8 : 8 + size])
        if not isinstance(header, dict):
            raise ValueError("the header is not a JSON object")
        start = 8 + size
        tensors: dict[str, np.ndarray] = {}
        for name, info in header.items():
            if name == "__metadata__" or info["dtype"] in _OTHER_TYPES:
                continue
            if info["dtype"] not in _FLOAT_TYPES:
                raise ValueError(f"tensor {name} has element type {info['dtype']}, which numpy cannot read")
            dtype = np.dtype(_FLOAT_TYPES[info["dtype"]])
            shape = tuple(int(d) for d in info["shape"])
            begin, end = (int(o) for o in info["data_offsets"])
            count = int(np.prod(shape, dtype=np.int64))
            if end - begin != count * dtype.itemsize or start + end > len(data):
                raise ValueError(f"tensor {name}'s bytes do not match its shape")
            array = np.frombuffer(data, dtype=dtype, count=count, offset=start + begin).reshape(shape)
            tensors[name] = array.astype(np.float32, copy=False)
        return tensors
    except (ValueError, KeyError, TypeError) as exc:
        raise ModelFilesMissing(f"{file} is not a readable safetensors file: {exc}") from None


def _raise_malloc_mmap_threshold() -> None:
    """Let the forward pass's temporaries be reused from the heap.

    glibc serves each block above its mmap threshold (128 kB when a process starts) with a fresh mapping
    and unmaps it when freed, so every batch's temporaries (3 MB for 32 short texts) fault their pages in
    again; freeing such a block raises the threshold to its size, up to 32 MB (mallopt(3), "dynamic mmap
    threshold"). Reading the weights used to free large buffers and did this by chance; mapped weights free
    none, so one 30 MB block (under the 32 MB cap, else the threshold stays) is allocated and freed here:
    32 short texts 231 -> 149 ms, one long text 131 -> 96 ms on the 2-core bench machine (210 and 110 ms with
    the weights read into memory). With another allocator it is one allocation and one free.
    """
    np.empty(30_000_000, dtype=np.uint8)


class _Layer:
    """One transformer block's weights, copied out of the mapped file and laid out for ``x @ w`` (query, key
    and value fused). The file's tensors are not aligned for vector instructions, and matrix products over
    transposed views of them took 12 ms a query instead of 8 ms."""

    def __init__(self, w: dict[str, np.ndarray], prefix: str) -> None:
        def get(name: str) -> np.ndarray:
            return np.array(w[prefix + name])

        def transposed(name: str) -> np.ndarray:
            return np.ascontiguousarray(get(name).T)

        att = "attention.self."
        self.qkv = np.ascontiguousarray(
            np.concatenate([get(att + "query.weight"), get(att + "key.weight"), get(att + "value.weight")]).T
        )
        self.qkv_b = np.concatenate([get(att + "query.bias"), get(att + "key.bias"), get(att + "value.bias")])
        self.out = transposed("attention.output.dense.weight")
        self.out_b = get("attention.output.dense.bias")
        self.ln1 = (get("attention.output.LayerNorm.weight"), get("attention.output.LayerNorm.bias"))
        self.up = transposed("intermediate.dense.weight")
        self.up_b = get("intermediate.dense.bias")
        self.down = transposed("output.dense.weight")
        self.down_b = get("output.dense.bias")
        self.ln2 = (get("output.LayerNorm.weight"), get("output.LayerNorm.bias"))


class NumpyMiniLM:
    """A BERT sentence encoder (mean pooling, normalised) from a sentence-transformers model directory."""

    def __init__(self, path: str | os.PathLike[str], max_seq_length: int | None = None) -> None:
        root = Path(path)
        try:
            config = json.loads((root / "config.json").read_text(encoding="utf-8"))
            pooling = json.loads((root / "1_Pooling" / "config.json").read_text(encoding="utf-8"))
            st_config_file = root / "sentence_bert_config.json"
            st_config = (
                json.loads(st_config_file.read_text(encoding="utf-8")) if st_config_file.is_file() else {}
            )
        except (OSError, ValueError) as exc:
            raise ModelFilesMissing(f"cannot read the model configuration in {root}: {exc}") from None
        if config.get("model_type") != "bert" or config.get("hidden_act") != "gelu":
            raise ModelFilesMissing(f"{root} is not a BERT model with GELU activations")
        if config.get("position_embedding_type", "absolute") != "absolute":
            raise ModelFilesMissing(f"{root} uses {config['position_embedding_type']} position embeddings")
        if not pooling.get("pooling_mode_mean_tokens") or any(
            v for k, v in pooling.items() if k.startswith("pooling_mode_") and k != "pooling_mode_mean_tokens"
        ):
            raise ModelFilesMissing(f"{root} does not use mean pooling alone")
        if st_config.get("do_lower_case"):
            raise ModelFilesMissing(f"{root} asks sentence-transformers to lower-case its input")
        self.dim = int(config["hidden_size"])
        self.heads = int(config["num_attention_heads"])
        self.eps = float(config["layer_norm_eps"])
        self.max_seq_length = int(max_seq_length or st_config.get("max_seq_length") or MAX_SEQ_LENGTH)
        self.max_seq_length = min(self.max_seq_length, int(config["max_position_embeddings"]))
        self.tokenizer = self._load_tokenizer(root)
        from threadpoolctl import ThreadpoolController

        self._threads = ThreadpoolController()
        weights = self._load_weights(root)
        try:
            # The word embeddings (half the file) stay mapped: a query reads only its tokens' rows.
            self.word = weights["embeddings.word_embeddings.weight"]
            self.position = np.array(weights["embeddings.position_embeddings.weight"])
            self.token_type = np.array(weights["embeddings.token_type_embeddings.weight"][0])
            self.emb_ln = (
                np.array(weights["embeddings.LayerNorm.weight"]),
                np.array(weights["embeddings.LayerNorm.bias"]),
            )
            self.layers = [
                _Layer(weights, f"encoder.layer.{i}.") for i in range(int(config["num_hidden_layers"]))
            ]
        except KeyError as exc:
            raise ModelFilesMissing(f"{root}/model.safetensors has no tensor {exc}") from None
        _raise_malloc_mmap_threshold()

    def _load_tokenizer(self, root: Path) -> Any:
        from tokenizers import Tokenizer

        file = root / "tokenizer.json"
        if not file.is_file():
            raise ModelFilesMissing(f"{root} has no tokenizer.json")
        tok = Tokenizer.from_file(str(file))
        # What sentence-transformers asks of the same tokenizer: truncate to max_seq_length, pad to the
        # longest text of the batch (the file itself says 128 and fixed-length padding).
        tok.enable_truncation(self.max_seq_length)
        tok.no_padding()
        return tok

    @staticmethod
    def _load_weights(root: Path) -> dict[str, np.ndarray]:
        file = root / "model.safetensors"
        if not file.is_file():
            raise ModelFilesMissing(f"{root} has no model.safetensors")
        return read_safetensors(file)

    def tokenize(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """Token ids and attention mask, padded to the longest text (both int64, shape (n, length))."""
        encodings = self.tokenizer.encode_batch(texts)
        length = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(texts), length), dtype=np.int64)
        mask = np.zeros((len(texts), length), dtype=np.int64)
        for row, enc in enumerate(encodings):
            ids[row, : len(enc.ids)] = enc.ids
            mask[row, : len(enc.ids)] = 1
        return ids, mask

    def encode(self, texts: list[str], batch_size: int = 32) -> np.ndarray:
        """Normalised float32 sentence vectors, shape (len(texts), dim). Texts are batched by length, so
        little time goes to padding; the result is in the order given."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        lengths = [len(t) for t in texts]
        order = sorted(range(len(texts)), key=lambda i: -lengths[i])
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        # One BLAS thread: on a busy 2-core machine (load 17) OpenBLAS's spinning second thread made one
        # query take 0.6-1.6 s instead of 8-18 ms with one thread; large batches go to torch anyway.
        with self._threads.limit(limits=1, user_api="blas"):
            for start in range(0, len(order), batch_size):
                chunk = order[start : start + batch_size]
                ids, mask = self.tokenize([texts[i] for i in chunk])
                out[chunk] = self._forward(ids, mask)
        return out

    def _forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        n, length = ids.shape
        heads, head_dim, dim = self.heads, self.dim // self.heads, self.dim
        # Tokens stay one (n * length, dim) matrix, so each projection is a single large matrix product
        # (a stacked (n, length, dim) product runs as n small ones, several times slower).
        x = (self.word[ids] + self.position[:length] + self.token_type).reshape(n * length, dim)
        x = _layer_norm(x, *self.emb_ln, self.eps)
        # Padding is kept out of attention by a large negative bias, as transformers does with finfo.min.
        bias = ((1.0 - mask[:, None, None, :].astype(np.float32)) * np.finfo(np.float32).min).astype(
            np.float32
        )
        scale = np.float32(1.0 / np.sqrt(head_dim))
        for layer in self.layers:
            qkv = (
                (x @ layer.qkv + layer.qkv_b).reshape(n, length, 3, heads, head_dim).transpose(2, 0, 3, 1, 4)
            )
            q, k, v = qkv[0], qkv[1], qkv[2]  # (n, heads, length, head_dim)
            scores = (q @ k.transpose(0, 1, 3, 2)) * scale + bias
            scores -= scores.max(axis=-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(axis=-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(n * length, dim)
            x = _layer_norm(context @ layer.out + layer.out_b + x, *layer.ln1, self.eps)
            hidden = _gelu(x @ layer.up + layer.up_b)
            x = _layer_norm(hidden @ layer.down + layer.down_b + x, *layer.ln2, self.eps)
        x = x.reshape(n, length, dim)
        weights = mask.astype(np.float32)[:, :, None]
        pooled = (x * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), np.float32(1e-9))
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return np.asarray(pooled / np.maximum(norms, np.float32(1e-12)), dtype=np.float32)


__all__ = ["MAX_SEQ_LENGTH", "ModelFilesMissing", "NumpyMiniLM", "read_safetensors"]
