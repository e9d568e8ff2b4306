"""Helpers shared by the CLI command modules."""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import IO, TYPE_CHECKING, Any

from memdeck.core.filters import Scope
from memdeck.core.textsafe import UNSAFE, escape_unsafe, json_safe

if TYPE_CHECKING:  # records pulls in pyarrow; the parser and the app's first paint must not wait for it
    from memdeck.core.config import Settings
    from memdeck.core.records import Memory
    from memdeck.core.store import Store


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


_opened: list[Any] = []  # the stores this command opened, closed by close_stores() before the process exits


_warned: set[str] = set()


def warn_unknown_settings(settings: Settings) -> None:
    """One line on stderr per setting of config.toml that memdeck does not read (once per process)."""
    for line in settings.unknown:
        if line not in _warned:
            _warned.add(line)
            print(f"memdeck: warning: {safe(settings.source)}: {safe(line)}; it is ignored", file=sys.stderr)


def open_store(
    args: argparse.Namespace,
    *,
    create: bool = False,
    embeds: bool = False,
    loading: tuple[Settings | None, Any] | None = None,
) -> Store:
    """The store ``--store`` names. ``embeds``: the command will embed text (a recall, a write), so the
    store's model starts loading in a thread first, while the store's own modules import and it opens;
    ``loading``: what :func:`model_loading` returned, when the command started the load even earlier."""
    if loading is None:
        loading = model_loading(getattr(args, "store", None)) if embeds else (None, None)
    config, embedder = loading
    from memdeck.core.store import Store

    store = Store.open(getattr(args, "store", None), create=create, config=config, embedder=embedder)
    warn_unknown_settings(store.engine.settings)
    store.engine.index_loads_in_background = (
        False  # one command, then the process exits: a large scope reads LanceDB
    )
    _opened.append(store)
    return store


def model_loading(store: str | None) -> tuple[Settings | None, Any]:
    """The settings and the embedder of the store at ``store``, as :meth:`Store.open` would make them, the
    model already loading in a daemon thread (pass both to ``Store.open``); (None, None) when they cannot be
    had without opening the store (it then reports why itself)."""
    import threading

    from memdeck.core.config import load_settings
    from memdeck.core.embed import EmbeddingUnavailable, make_embedder
    from memdeck.core.errors import MemdeckError
    from memdeck.core.models import chosen_model
    from memdeck.core.paths import StoreLayout
    from memdeck.core.storage.objectstore import resolve

    try:
        settings = load_settings()
        root, _ = resolve(settings.to_dict(), store)
        embedder = make_embedder(settings.embedding, chosen_model(StoreLayout(root).meta))
    except MemdeckError:
        return None, None

    def load() -> None:
        try:
            embedder.load()
        except EmbeddingUnavailable:
            pass  # the embedder keeps the reason; recall reports it and searches by keyword

    threading.Thread(target=load, name="memdeck-model-load", daemon=True).start()
    return settings, embedder


def close_stores() -> None:
    """Finish the opened stores' background work (queued traces, ledger rows, access counts) now.

    ``main`` calls this when a command returns, while the interpreter is fully alive: work left to the
    store's exit hook runs while Python shuts down, when DuckDB no longer reads Python-side Arrow data and
    queued traces would be lost.
    """
    while _opened:
        _opened.pop().close()


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
        if isinstance(value, str) and "\n" in value:  # a text of several lines is shown as lines, indented
            first, *rest = safe(value, keep_newlines=True).split("\n")
            print(f"{key:<{width}}  {first}")
            for line in rest:
                print(f"{'':<{width}}  {line}")
            continue
        print(f"{key:<{width}}  {safe(value)}")


def parse_csv(value: str | None) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()] if value else []


# --- argument types: checked while parsing, so a typo costs no store open ------------------------------
# A type that raises argparse.ArgumentTypeError is refused as argparse refuses a bad option (one line, exit 2);
# one that raises MemdeckError passes through parse_args to main, which prints it and returns its exit code.

DURATION_HELP = "30m, 12h, 7d, 2w (that long ago), an ISO 8601 date (2025-03-04) or time (2025-03-04T09:30Z)"
MAX_ID_CHARS = 128  # what an import accepts for an id


def _type_error(exc: Exception) -> argparse.ArgumentTypeError:
    return argparse.ArgumentTypeError(str(exc))


def memory_id(value: str) -> str:
    """A memory id as memdeck writes them (``sem_…``) or an import kept them: non-empty, at most 128
    characters, no control characters or surrounding spaces. Refused with MemdeckError (a bad id is an
    error like an unknown one: ``main`` prints its one line and returns its exit code)."""
    from memdeck.core.errors import MemdeckError

    if not value:
        raise MemdeckError("a memory id is empty")
    if len(value) > MAX_ID_CHARS:
        raise MemdeckError(f"not a memory id: {len(value)} characters (ids have at most {MAX_ID_CHARS})")
    if value != value.strip() or UNSAFE.search(value):
        raise MemdeckError(f"not a memory id: {safe(value)!r} (spaces or control characters)")
    return value


def trace_id(value: str) -> str:
    from memdeck.core.errors import MemdeckError

    if not re.fullmatch(r"trc_[0-9a-f]{1,64}", value):
        raise MemdeckError(f"not a trace id: {safe(value)!r} (trace ids look like trc_3f9a…)")
    return value


def tier(value: str) -> str:
    from memdeck.core.records import STORED_TIERS

    if value not in STORED_TIERS:
        raise argparse.ArgumentTypeError(
            f"unknown tier {safe(value)!r}; use one of: {', '.join(STORED_TIERS)}"
        )
    return value


def principal(value: str) -> str:
    """A principal or agent name, checked (and normalised) as every write and read checks it; refused with
    check_principal's MemdeckError."""
    # From names, not records, which loads pyarrow (`memdeck mcp` parses this before its handshake).
    from memdeck.core.names import check_principal

    return check_principal(value)


def importance(value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"importance must be a number from 0 to 1, got {safe(value)!r}"
        ) from None
    if not 0.0 <= number <= 1.0:
        raise argparse.ArgumentTypeError(f"importance must be from 0 to 1, got {safe(value)!r}")
    return number


_RELATIVE = re.compile(r"^\d+(?:\.\d+)?\s*[smhdw]$")


def _when(value: str, *, end_of_day: bool) -> datetime:
    from memdeck.core.errors import MemdeckError
    from memdeck.core.times import now, parse_duration, parse_time

    text = value.strip()
    try:
        if _RELATIVE.match(text):
            return now() - parse_duration(text)
        when = parse_time(text)
    except MemdeckError as exc:
        if _RELATIVE.match(text):
            raise _type_error(exc) from None
        raise argparse.ArgumentTypeError(
            f"not a date, time or duration: {safe(value)!r}; use {DURATION_HELP}"
        ) from None
    if when is None:
        raise argparse.ArgumentTypeError(f"a date, time or duration is needed; use {DURATION_HELP}")
    if end_of_day and len(text) == 10:  # a bare date as an upper bound: through its last moment
        when += timedelta(days=1, microseconds=-1)
    return when


def since(value: str) -> datetime:
    """``--since``: a relative duration (``7d``: seven days ago) or an ISO 8601 date or time."""
    return _when(value, end_of_day=False)


def until(value: str) -> datetime:
    """``--until``: as ``--since``; a bare date includes that whole day."""
    return _when(value, end_of_day=True)


def sort_field(value: str) -> str:
    from memdeck.core.storage.browse import SORTABLE

    if value not in SORTABLE:
        raise argparse.ArgumentTypeError(f"cannot sort by {safe(value)!r}; use one of: {', '.join(SORTABLE)}")
    return value


def _int_at_least(value: str, least: int) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {safe(value)!r}") from None
    if number < least:
        raise argparse.ArgumentTypeError(f"expected a number of at least {least}, got {number}")
    return number


def non_negative_int(value: str) -> int:
    return _int_at_least(value, 0)


def text_arg(value: str, what: str = "text") -> str:
    """A text argument checked as a write checks it (not empty, no NUL), before any store is opened;
    ``-`` reads standard input."""
    from memdeck.core.errors import MemdeckError
    from memdeck.core.records import check_text

    if value == "-":
        data = sys.stdin.buffer.read()
        try:
            value = data.decode("utf-8")
        except UnicodeDecodeError:
            raise MemdeckError("standard input is not valid UTF-8") from None
    return check_text(value, what)


def note(message: str) -> None:
    """A hint on stderr beside a command's normal output (stdout stays what --json promises)."""
    print(f"memdeck: note: {message}", file=sys.stderr)


def note_unknown_principals(store: Any, names: Sequence[str] | None) -> bool:
    """When a command found nothing: say which of the named principals have no memory at all (a typo
    looks exactly like an empty result). Only the number of principals in the store is told, not who.
    Returns whether anything was said."""
    if not names:
        return False
    from memdeck.core.filters import Scope

    unknown = [n for n in dict.fromkeys(names) if store.count(Scope.of(n)) == 0]
    if not unknown:
        return False
    total = len(store.principals())
    held = f"the store holds memories of {total} principal{'s' if total != 1 else ''}"
    for name in unknown:
        note(f"no memory has principal {safe(name)!r} ({held})")
    return True


def positive_int(value: str) -> int:
    return _int_at_least(value, 1)


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
