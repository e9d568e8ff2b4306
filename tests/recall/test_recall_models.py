"""The store's embedding model decides the thresholds and fusion weights that depend on it.

A store records the model its vectors were made with; consolidation's merge cosine, the contradiction
shortlist's topic gate, the graph's name resolution, recall's relevance floor and its fusion weights are
read from that model's row in ``core/models.py`` (or a profile's section for the model), and an explicit
``[thresholds]`` / profile value still overrides them. The embedder here only stands in for a model by
name, with vectors chosen so each pair sits between the two models' thresholds (plumbing, not meaning).
"""

from __future__ import annotations

import hashlib
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memdeck.core import models
from memdeck.core.config import (
    FUSION_KEYS,
    Profile,
    RecallSettings,
    Settings,
    load_config,
    load_profile,
    model_thresholds,
    save_profile,
)
from memdeck.core.consolidate import consolidate, contradictions, thresholds
from memdeck.core.errors import MemdeckError
from memdeck.core.filters import Scope
from memdeck.core.graph.memory.write import GraphBatch
from memdeck.core.store import Store

DIM = 16


def _unit(seed: str) -> np.ndarray:
    rng = np.random.default_rng(int(hashlib.sha256(seed.encode()).hexdigest()[:8], 16))
    v = rng.normal(size=DIM)
    return (v / np.linalg.norm(v)).astype(np.float32)


def _pair(cosine: float) -> tuple[np.ndarray, np.ndarray]:
    """Two unit vectors whose dot product is ``cosine``."""
    a = np.zeros(DIM, dtype=np.float32)
    b = np.zeros(DIM, dtype=np.float32)
    a[0] = 1.0
    b[0], b[1] = cosine, math.sqrt(1 - cosine**2)
    return a, b


class NamedEmbedder:
    """Vectors from a table (texts not in it get an unrelated random direction), under a model's name."""

    semantic = True
    available = True
    loaded = True
    error = None

    def __init__(self, name: str, table: dict[str, np.ndarray]) -> None:
        self.name = name
        self.dim = DIM
        self.table = table

    def load(self) -> None:
        pass

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def encode(self, texts: list[str]) -> np.ndarray:
        return np.stack([self.table.get(t, _unit(t)) for t in texts]).astype(np.float32)


def _open(path: Path, model: str, table: dict[str, np.ndarray], **sections: Any) -> Store:
    config = load_config()
    for section, values in sections.items():
        config[section] = {**config.get(section, {}), **values}
    return Store.open(path, embedder=NamedEmbedder(model, table), config=config)


MPNET, MINILM = models.MPNET, models.MINILM


def test_each_store_reads_its_own_models_thresholds(tmp_path: Path) -> None:
    on_mpnet = _open(tmp_path / "a", MPNET, {})
    on_minilm = _open(tmp_path / "b", MINILM, {})
    try:
        assert on_mpnet.engine.embedding_model == MPNET
        assert thresholds(on_mpnet.engine) == models.MODELS["mpnet"].thresholds
        assert thresholds(on_minilm.engine) == models.MODELS["minilm"].thresholds
        assert (
            GraphBatch(on_mpnet.engine, "alice").near_match
            == models.MODELS["mpnet"].thresholds.name_near_match
        )
        assert GraphBatch(on_minilm.engine, "alice").near_match == 0.9
    finally:
        on_mpnet.close()
        on_minilm.close()


def test_an_explicit_threshold_overrides_the_models(tmp_path: Path) -> None:
    s = _open(tmp_path / "s", MPNET, {}, thresholds={"near_duplicate": 0.97, "name_near_match": 0.95})
    try:
        got = thresholds(s.engine)
        assert (got.near_duplicate, got.topic_gate) == (0.97, models.MODELS["mpnet"].thresholds.topic_gate)
        assert GraphBatch(s.engine, "alice").near_match == 0.95
    finally:
        s.close()


def _merged(tmp_path: Path, model: str, cosine: float, **sections: Any) -> int:
    a_text, b_text = "The deploy key rotates every month", "The deploy key is rotated monthly"
    a, b = _pair(cosine)
    s = _open(tmp_path / model, model, {a_text: a, b_text: b}, **sections)
    try:
        s.remember(a_text, principal="alice", tier="semantic")
        s.remember(b_text, principal="alice", tier="semantic")
        return len(consolidate(s.engine, "alice").merged)
    finally:
        s.close()


def test_consolidation_merges_at_the_stores_models_cosine(tmp_path: Path) -> None:
    # 0.923 is at or above MiniLM's merge cosine (0.92) and below MPNet's (0.926).
    assert _merged(tmp_path / "1", MINILM, 0.923) == 1
    assert _merged(tmp_path / "2", MPNET, 0.923) == 0
    assert _merged(tmp_path / "3", MINILM, 0.923, thresholds={"near_duplicate": 0.95}) == 0


def _flagged(tmp_path: Path, model: str, cosine: float, **sections: Any) -> int:
    a_text, b_text = (
        "The nightly backup job runs on the old server",
        "The nightly backup job does not run on the old server",
    )
    a, b = _pair(cosine)
    s = _open(tmp_path / model, model, {a_text: a, b_text: b}, **sections)
    try:
        s.remember(a_text, principal="alice", tier="semantic")
        s.remember(b_text, principal="alice", tier="semantic")
        consolidate(s.engine, "alice")
        return len(contradictions(s.engine, Scope.of("alice")))
    finally:
        s.close()


def test_the_contradiction_shortlist_uses_the_stores_models_topic_gate(tmp_path: Path) -> None:
    # 0.495 is below MiniLM's topic gate (0.5) and at or above MPNet's (0.49).
    assert _flagged(tmp_path / "1", MINILM, 0.495) == 0
    assert _flagged(tmp_path / "2", MPNET, 0.495) == 1
    assert _flagged(tmp_path / "3", MPNET, 0.495, thresholds={"topic_gate": 0.5}) == 0


def test_recall_takes_the_floor_and_fusion_of_the_stores_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    query, text = "pre-production database location", "Staging runs on db-stage-2"
    q, m = _pair(0.3)  # no shared word: relevance comes from the cosine alone (0.6 * 0.3 / 1.3 = 0.14)
    mpnet = models.MODELS["mpnet"]
    monkeypatch.setitem(
        models.MODELS,
        "mpnet",
        models.ModelSpec(
            mpnet.key,
            mpnet.name,
            mpnet.dim,
            models.Thresholds(mpnet.thresholds.near_duplicate, mpnet.thresholds.topic_gate, 0.2, 0.81),
            parts=mpnet.parts,
            fusion={"keyword_blend": 0.25, "neighbour_weight": 0.2, "session_weight": 0.1},
        ),
    )
    found = {}
    for model in (MINILM, MPNET):
        s = _open(tmp_path / model, model, {query: q, text: m})
        try:
            s.remember(text, principal="alice")
            # The built-in profile made now carries the (patched) model table's fusion for each model.
            result = s.recall(
                query, principal="alice", k=5, record_access=False, trace=False, profile=Profile()
            )
            found[model] = ([i.memory.text for i in result.items], result.candidates.keyword_blend)
            # A profile that sets its own floor keeps it whatever the model.
            lower = s.recall(
                query,
                principal="alice",
                k=5,
                record_access=False,
                trace=False,
                profile=Profile(min_relevance=0.05),
            )
            assert [i.memory.text for i in lower.items] == [text]
        finally:
            s.close()
    assert found[MINILM] == ([text], 0.4)
    assert found[MPNET] == ([], 0.25)  # relevance 0.14 is under this model's floor of 0.2


def test_a_profiles_section_for_a_model_sets_its_fusion() -> None:
    recall = RecallSettings()
    measured = {key: tuple(spec.fusion[k] for k in FUSION_KEYS) for key, spec in models.MODELS.items()}
    # A profile without a models section: each model's measured values; MiniLM's are the [recall] defaults.
    plain = Profile.from_dict("plain", {"weights": {"relevance": 0.6}})
    assert plain.fusion_for(MINILM, recall) == measured["minilm"] == (0.4, 0.2, 0.1)
    assert plain.fusion_for(MPNET, recall) == measured["mpnet"]
    assert plain.fusion_for("some/other-model", recall) == (0.4, 0.2, 0.1)
    mine = Profile.from_dict("mine", {"models": {"mpnet": {"keyword_blend": 0.25}}})
    assert mine.fusion_for(MPNET, recall) == (0.25, *measured["mpnet"][1:])
    assert mine.fusion_for("all-mpnet-base-v2", recall) == mine.fusion_for("mpnet", recall)
    assert mine.fusion_for(MINILM, recall) == measured["minilm"]
    # A [recall] value given in the config wins over the profile's entry.
    assert mine.fusion_for(MPNET, RecallSettings(keyword_blend=0.5)) == (0.5, *measured["mpnet"][1:])
    # A model memdeck does not know takes MiniLM's thresholds.
    assert model_thresholds(Settings(), "some/other-model") == models.MODELS["minilm"].thresholds


def test_a_profiles_model_section_is_saved_read_back_and_checked(tmp_path: Path) -> None:
    path = tmp_path / "profiles.toml"
    tuned = Profile.from_dict("tuned", {"models": {"mpnet": {"neighbour_weight": 0.35}}})
    save_profile(tuned, path)
    text = path.read_text(encoding="utf-8")
    assert "models" in text and "min_relevance" not in text  # only what the profile sets itself
    back = load_profile("tuned", path)
    assert back.models["mpnet"]["neighbour_weight"] == 0.35 and not back.floor_given
    with pytest.raises(MemdeckError, match="unknown fusion weight 'blend'"):
        Profile.from_dict("bad", {"models": {"mpnet": {"blend": 0.3}}})
    with pytest.raises(MemdeckError, match="keyword_blend must be between 0 and 1"):
        Profile.from_dict("bad", {"models": {"mpnet": {"keyword_blend": 3}}})
