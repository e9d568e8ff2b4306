"""The footer of every screen: Textual's, rebuilt only when the keys it shows have changed.

Textual's footer rebuilds all its keys (a dozen widgets, each styled anew) every time a screen's bindings are
refreshed: on every focus change, every ``refresh_bindings`` and once per request even when several arrive
in the same frame. While the app starts that is half a dozen rebuilds of identical keys, ahead of the first
rows. This footer rebuilds once per frame at most, and only when a key, its label, its tooltip or whether it
is enabled differs from what it shows.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer


class KeyFooter(Footer):
    """A :class:`~textual.widgets.Footer` that skips rebuilds which would show the same keys."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._shown: Hashable | None = None  # what the keys on screen were built from
        self._rebuild_pending = False

    def _keys_shown(self) -> Hashable:
        app = self.app
        return (
            self.show_command_palette and app.ENABLE_COMMAND_PALETTE,
            tuple(
                (
                    binding.key,
                    app.get_key_display(binding),
                    binding.action,
                    binding.description,
                    binding.show,
                    binding.group,
                    enabled,
                    tooltip,
                )
                for _node, binding, enabled, tooltip in self.screen.active_bindings.values()
            ),
        )

    def compose(self) -> ComposeResult:
        self._shown = self._keys_shown() if self._bindings_ready else None
        yield from super().compose()

    def bindings_changed(self, screen: Screen[Any]) -> None:
        self._bindings_ready = True
        if not screen.app.app_focus:
            return
        if self.is_attached and screen is self.screen and not self._rebuild_pending:
            self._rebuild_pending = True
            self.call_after_refresh(self._rebuild)

    async def _rebuild(self) -> None:
        self._rebuild_pending = False
        if self.is_attached and self._keys_shown() != self._shown:
            await self.recompose()
