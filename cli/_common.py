"""Helpers shared by the CLI command modules."""

from __future__ import annotations

import argparse
import json
import sys
from typing import IO, TYPE_CHECKING, Any

from memdeck.core.filters import Scope
from memdeck.core.textsafe import escape_unsafe, json_safe

if TYPE_CHECKING:  # records pulls in pyarrow; the parser and the app's first paint must not wait for it
    from memdeck.core.records import Memory


def add_json(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON")


def check_store_arg(args: argparse.Namespace) -> None:
    """``--store`` names a store, or a folder that may become one: an empty value (an unset variable in
    ``--store "$DIR"``) is refused rather than read as the default store, and so is a folder that holds
    other things (nothing in it is created or has its modes changed)."""
    store = getattr(args, "store", None)
    if store is None:
        return
    from memdeck.core.paths import check_store_folder, resolve_store
    from memdeck.core.storage.objectstore import is_remote_uri

    root = resolve_store(store)  # refuses an empty path
    if not is_remote_uri(store):
        check_store_folder(root)


def open_store(args: argparse.Namespace, *, create: bool = False) -> Any:
    from memdeck.core.store import Store

    store = Store.open(getattr(args, "store", None), create=create)
    store.index_loads_in_background = False  # one command, then the process exits: a large scope reads LanceDB
    return store


def scope_of(args: argparse.Namespace) -> Scope:
    """The principals a command may touch: --principal if given, else the whole store (operator use)."""
    principals = getattr(args, "principal", None) or getattr(args, "app_principal", None)
    if not principals:
        return Scope.everyone()
    if isinstance(principals, str):
        principals = [principals]
    return Scope.of(*principals)


def print_json(data: Any) -> None:
    # C1 controls and bidi overrides escaped too: an agent's text can only ever appear as text.
    sys.stdout.write(json_safe(json.dumps(data, ensure_ascii=False, indent=2, default=_default)) + "\n")


def _default(value: Any) -> Any:
    if hasattr(value, "isoformat"):
        from memdeck.core.records import iso

        return iso(value)
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def safe(text: object, *, keep_newlines: bool = False) -> str:
    """Text for a human-readable line: every control character and ESC shown escaped (``\\x1b``).

    Every printer of agent-written text (memory text, tags, names, queries, reasons) goes through this;
    ``--json`` output is escaped by the JSON encoder instead. With ``keep_newlines`` a newline stays a newline
    (for multi-line bodies such as a context pack); everything else is still escaped.
    """
    value = str(text)
    if keep_newlines:
        return "\n".join(escape_unsafe(line) for line in value.split("\n"))
    return escape_unsafe(value)


def short(text: str, width: int = 80) -> str:
    text = safe(" ".join(text.split()))
    return text if len(text) <= width else text[: width - 1] + "…"


def print_memory_line(m: Memory) -> None:
    flags = ("*" if m.pinned else " ") + ("D" if m.state == "deprecated" else " ")
    print(f"{m.id}  {m.tier:<10} {flags} {safe(m.principal):<12} {safe(m.agent):<10} {short(m.text, 70)}")


def print_memory(m: Memory) -> None:
    data = m.to_json()
    width = max(len(k) for k in data)
    for key, value in data.items():
        if value in (None, [], {}, ""):
            continue
        if isinstance(value, (list, dict)):
            value = json.dumps(value, ensure_ascii=False)
        print(f"{key:<{width}}  {safe(value)}")


def parse_csv(value: str | None) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()] if value else []


def positive_int(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {value!r}") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"expected a number of at least 1, got {number}")
    return number


def run_app(args: argparse.Namespace) -> int:
    """`memdeck` with no command: open the Textual app on the store."""
    from memdeck.tui.app import run  # imported here: the app's imports are not paid by other commands
    principals = getattr(args, "app_principal", None)
    return int(run(store_path=args.store, principals=principals) or 0)


class TextProgress:
    """A plain-text progress line on stderr: redrawn in place on a terminal, a line per 10 % otherwise."""

    def __init__(self, label: str, unit: str, stream: IO[str] | None = None) -> None:
        self.label = label
        self.unit = unit
        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._last = -1
        self._drawn = False

    def __call__(self, done: int, total: int) -> None:
        pct = 100 if total <= 0 else min(100, int(done * 100 / total))
        if self.tty:
            bar = "#" * (pct // 5) + "." * (20 - pct // 5)
            self.stream.write(f"\r{self.label} [{bar}] {pct:3d}%  {done:,}/{total:,} {self.unit}")
            self._drawn = True
        elif pct // 10 != self._last // 10 or (pct == 100 and self._last != 100):
            self.stream.write(f"{self.label}: {pct}% ({done:,}/{total:,} {self.unit})\n")
        self._last = pct
        self.stream.flush()

    def close(self) -> None:
        if self.tty and self._drawn:
            self.stream.write("\n")
            self.stream.flush()
