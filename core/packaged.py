"""Labelled texts shipped with the package, and the packaged model's vectors of them.

Each set is ``core/data/NAME.json`` (``{"about", "model", KEY: [[label, text], ...]}``) with ``NAME.npy``
beside it: the texts' vectors under ``model`` (float16), written by ``bench/make_packaged_vectors.py``. The
memory-type examples (:mod:`memdeck.core.memtypes`) and the known names of entity kinds
(:mod:`memdeck.core.graph.memory.kinds`) are such sets. Under another model the texts are embedded instead.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from importlib import resources
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np


def _read(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        resources.files("memdeck.core").joinpath("data", f"{name}.json").read_text("utf-8")
    )
    return data


def labelled(name: str, key: str) -> list[tuple[str, str]]:
    """The set's (label, text) pairs, in file order."""
    return [(str(label), str(text)) for label, text in _read(name)[key]]


def model_of(name: str) -> str:
    """The model whose vectors of the set are shipped."""
    return str(_read(name)["model"])


def vectors(
    name: str, model: str, texts: list[str], embed: Callable[[list[str]], np.ndarray] | None
) -> np.ndarray | None:
    """The texts' vectors under ``model`` (float32): the shipped ones when ``model`` is the set's and they
    match the texts, else ``embed(texts)``; None when neither can be had."""
    import numpy as np

    if model == model_of(name):
        with resources.files("memdeck.core").joinpath("data", f"{name}.npy").open("rb") as f:
            shipped = np.load(f)
        if shipped.shape[0] == len(texts):
            return np.asarray(shipped, dtype=np.float32)
    if embed is None:
        return None
    return np.asarray(embed(texts), dtype=np.float32)


__all__ = ["labelled", "model_of", "vectors"]
