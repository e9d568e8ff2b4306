"""A bare app to show one screen, as the real app would."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from textual.app import App
from textual.screen import Screen

from memdeck.tui.app import STYLESHEET


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
