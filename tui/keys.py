"""Keys and text fields: which keys a focused field types rather than passing on to the screen's bindings.

Textual sends a key to the focused widget first; an ``Input`` or ``TextArea`` keeps every printable key, so a
binding on ``q``, ``/`` or ``+`` does nothing while one has the focus and must not be offered in the footer.
Textual hides such bindings itself only for keys whose names it can turn back into a character, which
misses ``slash``, ``plus`` and ``minus``; :func:`typed_character` knows every printable ASCII key.
"""

from __future__ import annotations

import string
from typing import TYPE_CHECKING

from textual.keys import _character_to_key, key_to_character
from textual.widgets import Input, TextArea

if TYPE_CHECKING:
    from textual.binding import ActiveBinding
    from textual.widget import Widget

# Textual's own names for printable ASCII keys ("slash" for "/"), the names a pressed key arrives with.
_KEY_CHARACTERS = {_character_to_key(c): c for c in string.printable if c.isprintable()}


def typed_character(key: str) -> str | None:
    """The character pressing ``key`` types (``"/"`` for ``"slash"``), or None for ``ctrl+r``, ``f5``..."""
    return _KEY_CHARACTERS.get(key) or key_to_character(key)


def is_text_field(widget: Widget | None) -> bool:
    """A widget a person types text into: it keeps printable keys, and Escape leaves it."""
    return isinstance(widget, (Input, TextArea))


def keys_it_types(widget: Widget | None, key: str) -> bool:
    """Whether ``widget``, focused, takes ``key`` for itself (so no binding on that key runs)."""
    if widget is None:
        return False
    character = typed_character(key)
    return character is not None and character.isprintable() and widget.check_consume_key(key, character)


def shown_bindings(bindings: dict[str, ActiveBinding], focused: Widget | None) -> dict[str, ActiveBinding]:
    """The footer's bindings without those whose key the focused widget would type."""
    if focused is None:
        return bindings
    return {key: b for key, b in bindings.items() if not keys_it_types(focused, key)}
