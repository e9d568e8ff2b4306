"""The packaged model in numpy gives the vectors sentence-transformers (torch) gives, so a store may be
written by one and searched with the other under the same model name; and the first answer needs no torch."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from memdeck.core import Scope
from memdeck.core.config import EmbeddingSettings, Settings
from memdeck.core.embed import (
    TORCH_BATCH_MIN,
    PackagedMiniLM,
    SentenceTransformerEmbedder,
    make_embedder,
)
from memdeck.core.embed_numpy import ModelFilesMissing, NumpyMiniLM, read_safetensors
from memdeck.core.errors import MemdeckError

_PHRASES = (
    "alice keeps her passport in the blue drawer the meeting moved to thursday afternoon because bob is "
    "travelling remember that the dog needs medicine twice a day deploy the service after the database "
    "migration finishes invoice 4471 was paid on march 3rd café naïve résumé straße"
)
WORDS = _PHRASES.split()
UNICODE = [
    "東京タワーは赤い",
    "Привет, как дела?",
    "مرحبا بالعالم",
    "🙂🚀 emoji only 🎉",
    "e\u0301 combining",
    "zero\u200bwidth",
    "tab\tand\nnewline",
    "ΑΒΓ δεζ",
    "한국어 문장입니다",
    "हिन्दी वाक्य",
]


FACTS = [
    "Alice keeps her passport in the blue drawer of the hall cabinet.",
    "The team meeting moved to Thursday afternoon because Bob is travelling.",
    "The dog needs its heart medicine twice a day, with food.",
    "Invoice 4471 from the printer company was paid on March 3rd.",
    "Deploy the billing service only after the database migration finishes.",
    "Carol is allergic to peanuts and shellfish.",
    "The wifi network at the cabin is called pinewood and has no password.",
    "Dan prefers aisle seats on long flights.",
    "The car's next service is due at 60,000 kilometres.",
    "Grandma's birthday is on the 14th of July; she likes lilies.",
    "The staging cluster runs Kubernetes 1.31 in the Frankfurt region.",
    "Erin's daughter starts school in September at Oak Street Primary.",
    "東京の事務所は月曜日に休みです。",
    "Le dentiste a déplacé le rendez-vous de Marc à vendredi matin.",
    "The recipe for the lemon cake uses three eggs and no butter.",
    "Frank's parking spot at the office is number 42 on level two.",
]


def varied_texts(n: int = 100, seed: int = 7) -> list[str]:
    """Short, medium and long texts (past the 256-token truncation), unicode and edge cases."""
    rng = random.Random(seed)
    texts = ["", " ", "a", "?!", "x" * 600, "word " * 400]
    texts += UNICODE
    while len(texts) < n:
        size = rng.choice([2, 5, 12, 30, 80, 200, 450])
        words = [rng.choice(WORDS) for _ in range(size)]
        if rng.random() < 0.3:
            words.insert(rng.randrange(len(words)), rng.choice(UNICODE))
        texts.append(" ".join(words))
    return texts[:n]


@pytest.fixture(scope="module")
def numpy_model(packaged_model: Path) -> NumpyMiniLM:
    return NumpyMiniLM(str(packaged_model))


def test_numpy_and_torch_give_the_same_vectors(numpy_model, real_embedder):
    texts = varied_texts(100)
    mine = numpy_model.encode(texts)
    theirs = real_embedder.encode(texts)
    assert mine.dtype == np.float32 and mine.shape == theirs.shape == (100, 384)
    cosines = np.sum(mine * theirs, axis=1) / (np.linalg.norm(mine, axis=1) * np.linalg.norm(theirs, axis=1))
    assert cosines.min() >= 0.99999, (cosines.min(), texts[int(cosines.argmin())][:80])
    assert np.abs(mine - theirs).max() < 1e-4
    assert np.allclose(np.linalg.norm(mine, axis=1), 1.0, atol=1e-5)


def test_a_batch_gives_each_text_the_vector_it_gets_alone(numpy_model):
    texts = varied_texts(20, seed=3)
    together = numpy_model.encode(texts, batch_size=7)
    alone = np.stack([numpy_model.encode([t])[0] for t in texts])
    assert np.abs(together - alone).max() < 1e-5


def test_a_store_written_with_torch_recalls_the_same_ids_in_order_with_numpy(
    open_store, tmp_path, real_embedder
):
    texts = FACTS + UNICODE
    written = open_store(tmp_path / "store", embedder=real_embedder)
    written.remember_many(
        [{"text": t, "tier": "semantic", "principal": "alice", "force": True} for t in texts]
    )
    # Nothing but the query vector may differ between the two recalls: no access counts, no traces.
    for query in [
        "where is the passport",
        "when is the meeting",
        "dog medicine",
        "invoice payment",
        "東京",
        "allergies",
        "school",
    ]:
        ids = []
        for embedder in (real_embedder, PackagedMiniLM(torch=None)):
            written.embedder = embedder
            assert written.engine.embedding_model == embedder.name
            items = written.recall(
                query, scope=Scope.of("alice"), k=10, record_access=False, trace=False
            ).items
            ids.append([i.memory.id for i in items])
        assert ids[1] == ids[0] and ids[0], query


def test_the_default_embedder_is_the_numpy_one_with_torch_for_large_batches():
    embedder = make_embedder(EmbeddingSettings())
    assert isinstance(embedder, PackagedMiniLM)
    assert (
        isinstance(embedder.torch, SentenceTransformerEmbedder)
        and embedder.torch_batch_min == TORCH_BATCH_MIN
    )
    assert make_embedder(EmbeddingSettings(backend="numpy")).torch is None  # type: ignore[attr-defined]
    assert isinstance(make_embedder(EmbeddingSettings(backend="torch")), SentenceTransformerEmbedder)
    other = make_embedder(EmbeddingSettings(model="some/other-model"))
    assert isinstance(other, SentenceTransformerEmbedder) and other.name == "some/other-model"
    with pytest.raises(MemdeckError, match=r"embedding\.backend"):
        Settings.from_mapping({"embedding": {"backend": "onnx"}})
    with pytest.raises(MemdeckError, match="torch_batch_min"):
        Settings.from_mapping({"embedding": {"torch_batch_min": 0}})


def test_only_a_large_batch_loads_torch_and_then_torch_takes_every_batch(monkeypatch):
    calls: list[int] = []

    class FakeTorch(SentenceTransformerEmbedder):
        def encode(self, texts: list[str]) -> np.ndarray:
            calls.append(len(texts))
            return np.ones((len(texts), 384), dtype=np.float32)

    embedder = PackagedMiniLM(FakeTorch(), torch_batch_min=4)
    embedder.encode(["one", "two", "three"])
    assert calls == []
    embedder.encode(["a", "b", "c", "d"])
    assert calls == [4]
    monkeypatch.setattr(FakeTorch, "loaded", property(lambda self: True))
    embedder.encode(["once torch is loaded, it takes small batches too"])
    assert calls == [4, 1]


def test_embedding_a_query_with_the_default_model_imports_no_torch():
    code = (
        "import sys; from memdeck.core.config import EmbeddingSettings; from memdeck.core.embed import make_embedder; e = make_embedder(EmbeddingSettings()); "
        "v = e.encode(['where is the passport']); assert v.shape == (1, 384), v.shape; "
        "print('torch' in sys.modules, 'sentence_transformers' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "False"]


def _safetensors(path: Path, tensors: dict[str, tuple[str, list[int], bytes]]) -> Path:
    """A safetensors file written by hand: header length, JSON header, data."""
    header: dict[str, object] = {"__metadata__": {"format": "pt"}}
    data = b""
    for name, (dtype, shape, raw) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    body = json.dumps(header).encode()
    path.write_bytes(len(body).to_bytes(8, "little") + body + data)
    return path


def test_the_weights_are_read_from_a_map_of_the_file_and_the_word_table_is_never_copied(numpy_model):
    # The word embeddings are half the file: a query touches only its tokens' rows.
    assert not numpy_model.word.flags.writeable and not numpy_model.word.flags.owndata
    assert numpy_model.word.shape == (30522, 384) and numpy_model.word.dtype == np.float32
    # What the layers compute with is copied out and aligned (the file's tensors are not).
    assert all(layer.up.flags.c_contiguous and layer.up.flags.owndata for layer in numpy_model.layers)


def test_read_safetensors_gives_float_tensors_skips_integers_and_refuses_what_it_cannot_read(tmp_path):
    weights = np.arange(6, dtype="<f4").reshape(2, 3)
    good = _safetensors(
        tmp_path / "good.safetensors",
        {
            "w": ("F32", [2, 3], weights.tobytes()),
            "h": ("F16", [2], np.array([1.5, -2.0], dtype="<f2").tobytes()),
            "ids": ("I64", [2], np.array([0, 1], dtype="<i8").tobytes()),
        },
    )
    read = read_safetensors(good)
    assert sorted(read) == ["h", "w"]
    assert np.array_equal(read["w"], weights) and read["w"].dtype == np.float32
    assert read["h"].tolist() == [1.5, -2.0] and read["h"].dtype == np.float32

    bf16 = _safetensors(tmp_path / "bf16.safetensors", {"w": ("BF16", [2], b"\0\0\0\0")})
    short = _safetensors(tmp_path / "short.safetensors", {"w": ("F32", [4], weights.tobytes()[:8])})
    for bad in (bf16, short):
        with pytest.raises(ModelFilesMissing, match="not a readable safetensors file"):
            read_safetensors(bad)
    garbage = tmp_path / "garbage.safetensors"
    garbage.write_bytes(b"\x05\0\0\0\0\0\0\0{oops")
    with pytest.raises(ModelFilesMissing):
        read_safetensors(garbage)
