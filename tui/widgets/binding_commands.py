"""Every described binding of a screen as a command-palette command, so nothing is keyboard-only.

Two ways in: :func:`binding_system_commands` for an app whose ``get_system_commands`` asks the screen for
``palette_commands()`` (memdeck's app does), and :class:`BindingCommands`, a provider any app can put in a
screen's or its own ``COMMANDS``. Use one or the other, not both, or each command shows twice.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from typing import Any

from textual.app import SystemCommand
from textual.binding import Binding
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.screen import Screen


def binding_commands(screen: Screen[Any], prefix: str = "") -> Iterator[tuple[str, str, str]]:
    """(command name, help, action) for each of the screen's own bindings that has a description."""
    prefix = prefix or type(screen).__name__.removesuffix("Screen")
    seen: set[str] = set()
    for binding in screen.BINDINGS:
        if not isinstance(binding, Binding) or not binding.description or binding.action in seen:
            continue
        seen.add(binding.action)
        yield f"{prefix}: {binding.description}", binding.tooltip or binding.description, binding.action


def binding_system_commands(screen: Screen[Any], prefix: str = "") -> Iterator[SystemCommand]:
    """The screen's bindings as :class:`SystemCommand` s (for ``palette_commands()``)."""
    for name, help_text, action in binding_commands(screen, prefix):
        yield SystemCommand(name, help_text, partial(screen.run_action, action))


class BindingCommands(Provider):
    """Commands for the calling screen's bindings (those with a description)."""

    def _commands(self) -> Iterator[tuple[str, str, str]]:
        return binding_commands(self.screen)

    async def discover(self) -> Hits:
        for name, help_text, action in self._commands():
            yield DiscoveryHit(name, partial(self.screen.run_action, action), help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, help_text, action in self._commands():
            score = matcher.match(name)
            if score > 0:
                yield Hit(
                    score,
                    matcher.highlight(name),
                    partial(self.screen.run_action, action),
                    text=name,
                    help=help_text,
                )
