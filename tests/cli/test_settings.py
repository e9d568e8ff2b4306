"""config.toml is read into typed settings once: a wrong type or an out-of-range value is refused with one line
naming the key and the file (by the installed command, `memdeck mcp` and the app alike), unknown keys are
warnings naming the nearest known one, and docs/configuration.md is what the settings say."""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import sys
import typing
from pathlib import Path
from typing import Any

import pytest

from memdeck.core.config import (
    DEFAULTS,
    SECTIONS,
    RecallSettings,
    Settings,
    SyncFolder,
    expiry_rules,
    load_config,
    load_settings,
    render_docs,
    unknown_settings,
)
from memdeck.core.errors import MemdeckError
from tests.paths import ROOT

MEMDECK = Path(sys.executable).with_name("memdeck")


def memdeck(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The installed command, with MEMDECK_HOME=home (its config.toml and default store)."""
    assert MEMDECK.exists() or shutil.which("memdeck"), "the memdeck command is not installed"
    env = {**os.environ, "MEMDECK_HOME": str(home)}
    env.pop("MEMDECK_DEBUG", None)
    return subprocess.run(
        [str(MEMDECK), *args], env=env, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL
    )


def write_config(home: Path, body: str) -> Path:
    path = home / "config.toml"
    path.write_text('[embedding]\nmodel = "hash-384"\n' + body, encoding="utf-8")
    return path


# --- the generated page ---------------------------------------------------------------------------------


def test_the_configuration_page_is_what_the_settings_say() -> None:
    assert (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8") == render_docs(), (
        "docs/configuration.md is out of date: python -m memdeck.core.config --write docs/configuration.md"
    )


def test_the_check_command_fails_on_a_stale_page(tmp_path: Path) -> None:
    stale = tmp_path / "configuration.md"
    stale.write_text(render_docs().replace("| `index_sync_rows` |", "| `index_rows` |"), encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "-m", "memdeck.core.config", "--check", str(stale)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 1 and "out of date" in run.stderr
    fresh = subprocess.run(
        [sys.executable, "-m", "memdeck.core.config", "--check", str(ROOT / "docs" / "configuration.md")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert fresh.returncode == 0, fresh.stderr
    written = tmp_path / "written.md"
    subprocess.run(
        [sys.executable, "-m", "memdeck.core.config", "--write", str(written)], check=True, timeout=120
    )
    assert written.read_text(encoding="utf-8") == render_docs()


def test_every_setting_is_documented_on_the_page_with_its_default() -> None:
    page = render_docs()
    for name, kind in SECTIONS.items():
        assert f"### [{name}]" in page and kind.__doc__, name
        for f in dataclasses.fields(kind):
            assert f.metadata.get("doc"), f"{name}.{f.name} has no documentation"
            row = next((line for line in page.splitlines() if line.startswith(f"| `{f.name}` |")), None)
            assert row is not None, f"{name}.{f.name} is not on the page"
    # The prose around the table is kept: the unknown-settings warning and the environment variables.
    assert "a typo such as `[recal]`" in page and "LANCE_FLAT_SEARCH_PERCENT_THRESHOLD=1" in page
    recall_k = next(line for line in page.splitlines() if line.startswith("| `k` |"))
    assert "`10`" in recall_k and "at least 1" in recall_k


# --- one place for each default -------------------------------------------------------------------------


def test_the_defaults_are_the_dataclasses_and_a_config_round_trips() -> None:
    assert Settings.from_mapping(DEFAULTS) == Settings()
    assert load_config(Path("/nonexistent/config.toml")) == DEFAULTS
    assert DEFAULTS["recall"]["k"] == RecallSettings().k == 10
    changed = Settings.from_mapping({"recall": {"k": 3}, "ttl_days": {"episodic": 10}})
    assert Settings.from_mapping(changed.to_dict()) == changed
    assert changed.recall.k == 3 and changed.recall.engine == "memory"  # the rest keeps its default
    # whole numbers given for a number of days are numbers of days
    assert expiry_rules(changed)["episodic"] == (10.0, "last_used")
    assert isinstance(changed.ttl_days.episodic, float)


def test_settings_are_frozen_and_changed_only_through_a_check() -> None:
    settings = Settings()
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.recall.k = 3  # type: ignore[misc]
    lance = settings.with_changes(recall={"engine": "lance"})
    assert lance.recall.engine == "lance" and settings.recall.engine == "memory"
    assert lance.recall.k == settings.recall.k
    with pytest.raises(MemdeckError, match=r"recall\.engine must be one of memory, lance, got 'fast'"):
        settings.with_changes(recall={"engine": "fast"})
    # a typo in the file stays reported after a change; a typo in the change is reported too
    typo = Settings.from_mapping({"recal": {"k": 3}}).with_changes(graph={"deph": 2})
    assert typo.unknown == (
        "unknown section [recal] (did you mean 'recall'?)",
        "unknown setting graph.deph (did you mean 'depth'?)",
    )


def test_every_field_type_is_one_the_checker_knows() -> None:
    known = {bool, int, float, str, tuple[str, ...], tuple[SyncFolder, ...]}
    for name, kind in SECTIONS.items():
        for field_name, hint in typing.get_type_hints(kind).items():
            assert hint in known, f"{name}.{field_name}: {hint}"


# --- checked once, with one line naming the key and the file --------------------------------------------


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ('[recall]\nk = "ten"\n', "recall.k must be a whole number of at least 1, got 'ten'"),
        ("[recall]\nk = 0\n", "recall.k must be a whole number of at least 1, got 0"),
        ("[recall]\nk = 2.5\n", "recall.k must be a whole number of at least 1, got 2.5"),
        ("[recall]\nkeyword_blend = 1.5\n", "recall.keyword_blend must be a number from 0 to 1, got 1.5"),
        ('[recall]\nengine = "fast"\n', "recall.engine must be one of memory, lance, got 'fast'"),
        ('[maintenance]\nenabled = "yes"\n', "maintenance.enabled must be true or false, got 'yes'"),
        ("[maintenance]\nretry_s = -1\n", "maintenance.retry_s must be a number of at least 0, got -1"),
        ("[ttl_days]\nepisodic = inf\n", "ttl_days.episodic must be a number of at least 0, got inf"),
        ("[limits]\nsemantic = true\n", "limits.semantic must be a whole number of at least 0, got True"),
        (
            "[redaction]\nallow_values = [1, 2]\n",
            "redaction.allow_values must be a list of strings, got [1, 2]",
        ),
        ('recall = "fast"\n', "[recall] must be a table, got 'fast'"),
        ('[sync]\nfolders = [{principal = "ann"}]\n', "each entry of sync.folders needs a path"),
        (
            "[store]\nmax_rows_per_fragment = 100\n",
            "store.max_rows_per_fragment must be a whole number of at least 256",
        ),
    ],
)
def test_a_bad_value_is_refused_naming_the_key_and_the_file(tmp_path: Path, body: str, expected: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text(body, encoding="utf-8")
    with pytest.raises(MemdeckError) as caught:
        load_settings(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: ") and expected in message, message
    assert "\n" not in message


def test_good_values_are_taken_in_their_toml_spellings(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(
        '[redaction]\nallow_values = "support@example.com"\n'
        '[sync]\nprincipal = "ann"\nfolders = ["~/notes", {path = "/srv/team", principal = "team"}]\n'
        "[maintenance]\nevict_interval_s = 0\n"
        '[keys]\n"memory.pin" = "ctrl+t"\n',
        encoding="utf-8",
    )
    settings = load_settings(path)
    assert settings.redaction.allow_values == ("support@example.com",)
    assert settings.sync.folders == (SyncFolder("~/notes"), SyncFolder("/srv/team", "team"))
    assert settings.maintenance.evict_interval_s == 0.0
    assert settings.keys == {"memory.pin": "ctrl+t"} and settings.unknown == ()
    assert settings.source == str(path)


def test_unknown_keys_are_warnings_with_the_nearest_known_one() -> None:
    raw = {"graph": {"deph": 2}, "recal": {"k": 3}, "limits": {"episodc": 5}, "storage": {"anything": 1}}
    settings = Settings.from_mapping(raw)
    assert settings.unknown == (
        "unknown setting graph.deph (did you mean 'depth'?)",
        "unknown section [recal] (did you mean 'recall'?)",
        "unknown setting limits.episodc (did you mean 'episodic'?)",
    )
    assert list(settings.unknown) == unknown_settings(raw)
    assert settings.graph.depth == 1 and settings.limits.episodic == 0  # ignored, not taken as a near miss
    assert Settings.from_mapping({"graph": {"zzz": 1}}).unknown == ("unknown setting graph.zzz",)


# --- what a person sees --------------------------------------------------------------------------------


def test_the_command_refuses_a_bad_value_with_one_line(memdeck_home: Path) -> None:
    config = write_config(memdeck_home, "[recall]\nk = 0\n")
    for args in (["list"], ["add", "tea at four", "--tier", "semantic", "--principal", "ann"], ["mcp"]):
        run = memdeck(memdeck_home, *args)
        assert run.returncode != 0, (args, run.stdout)
        lines = run.stderr.splitlines()
        assert lines == [f"memdeck: error: {config}: recall.k must be a whole number of at least 1, got 0"], (
            args,
            run.stderr,
        )
    assert not (memdeck_home / "store").exists()  # nothing ran: not even the store was created

    write_config(memdeck_home, "[recall]\nk = 5\n")
    added = memdeck(memdeck_home, "add", "tea at four", "--tier", "semantic", "--principal", "ann")
    assert added.returncode == 0 and added.stderr == "", added.stderr


def test_the_command_warns_about_an_unknown_key_and_runs(memdeck_home: Path) -> None:
    config = write_config(memdeck_home, "[graph]\ndeph = 2\n")
    added = memdeck(memdeck_home, "add", "tea at four", "--tier", "semantic", "--principal", "ann")
    assert added.returncode == 0, added.stderr
    assert added.stderr.splitlines() == [
        f"memdeck: warning: {config}: unknown setting graph.deph (did you mean 'depth'?); it is ignored"
    ]


@pytest.mark.anyio
async def test_the_app_reports_a_bad_value_and_exits(memdeck_home: Path) -> None:
    from memdeck.core.filters import Scope
    from memdeck.core.store import Store
    from memdeck.tui.app import MemdeckApp

    config = write_config(memdeck_home, '[ttl_from]\nepisodic = "forever"\n')

    def opener() -> tuple[Any, Any]:
        return Store.open(memdeck_home / "store"), Scope.everyone()

    app = MemdeckApp(opener=opener, maintenance=False)
    async with app.run_test(size=(120, 40)) as pilot:
        for _ in range(50):
            if app.return_code is not None:  # the app exits once it has shown why
                break
            await pilot.pause(0.05)
    assert app.return_code == 1
    assert app.open_error == f"{config}: ttl_from.episodic must be one of created, last_used, got 'forever'"
