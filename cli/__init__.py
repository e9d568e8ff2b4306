"""The ``memdeck`` command line: a thin layer that parses arguments and calls one library method.

Each module named in ``COMMAND_MODULES`` adds its subcommands with a ``register(subparsers)`` function. A
command module imports only what its parser needs at the top (argparse, errors, paths): the library's heavy
parts (LanceDB, the model, the receipts' cryptography, the MCP SDK) are imported inside the command that runs,
so `memdeck --help` and an argument error cost an interpreter start, not a store's.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import sys
import traceback
from collections.abc import Sequence

from memdeck.core.errors import MemdeckError


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        # One line a person can act on, exit 2, as argparse does, but without the usage block.
        self.exit(2, f"memdeck: error: {message} (see {self.prog} --help)\n")


# The modules that add commands (``mcp`` is the server that `memdeck mcp` starts, not a command module).
COMMAND_MODULES = (
    "agents",
    "context",
    "debug",
    "demo",
    "doctor",
    "expire",
    "forget",
    "graph",
    "maintain",
    "memories",
    "model",
    "privacy",
    "receipts",
    "review",
    "session",
)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="memdeck",
        description="A terminal-first memory manager for AI agents.",
    )
    parser.add_argument(
        "--store",
        help="store directory, or s3://bucket/prefix for tables on object storage "
        "(default: $MEMDECK_HOME/store or the data dir)",
    )
    parser.add_argument(
        "--principal",
        dest="app_principal",
        action="append",
        help="open the app scoped to this principal (repeatable; default: all)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in COMMAND_MODULES:
        importlib.import_module(f"{__name__}.{name}").register(sub)
    _store_everywhere(sub)
    return parser


def _store_everywhere(sub: argparse._SubParsersAction) -> None:
    """Accept --store after the command too (``memdeck demo --store X``), not only before it."""
    for child in set(sub.choices.values()):
        if not any("--store" in a.option_strings for a in child._actions):
            child.add_argument("--store", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
        for action in child._actions:
            if isinstance(action, argparse._SubParsersAction):
                _store_everywhere(action)


def _check_utf8(argv: Sequence[str]) -> None:
    for arg in argv:
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            raise MemdeckError(f"argument is not valid UTF-8: {arg.encode('utf-8', 'replace')!r}") from None


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    try:
        _check_utf8(argv)
        args = parser.parse_args(argv)
        from memdeck.cli._common import check_store_arg

        check_store_arg(args)
        if args.command is None:
            from memdeck.cli._common import run_app

            return run_app(args)
        from memdeck.cli._common import close_stores

        try:
            return int(args.func(args) or 0)
        finally:
            close_stores()  # queued traces and ledger rows are written now, not while Python shuts down
    except MemdeckError as exc:
        from memdeck.cli._common import safe

        print(f"memdeck: error: {safe(exc)}", file=sys.stderr)  # errors quote the input they refuse
        return exc.exit_code
    except KeyboardInterrupt:
        print("memdeck: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except BaseException as exc:  # a bug, not bad input: one line, the traceback only on request
        # Rust panics in LanceDB surface as pyo3's PanicException, which is a BaseException.
        if not isinstance(exc, Exception) and type(exc).__name__ != "PanicException":
            raise
        from memdeck.core.storage.objectstore import as_user_error

        user = as_user_error(exc)  # a full or read-only disk is the user's to fix, not a bug
        if user is not None:
            print(f"memdeck: error: {user}", file=sys.stderr)
            return user.exit_code
        if os.environ.get("MEMDECK_DEBUG"):
            traceback.print_exc()
        print(
            f"memdeck: internal error: {type(exc).__name__}: {exc} (set MEMDECK_DEBUG=1 for details)",
            file=sys.stderr,
        )
        return 1


def run() -> None:
    """The installed ``memdeck`` command and ``python -m memdeck.cli``: :func:`main`, then exit with its status.

    When ``main`` returns, every store it opened is closed and its writes are finished; what is left is the
    interpreter's teardown. Frozen first, the objects still alive (Arrow, Lance, the model's weights) are not
    walked once more by the final garbage collection: a recall exits about 0.07 s sooner on the 2-core bench
    machine (bench/RESULTS-startup.md). Tests call ``main`` in-process and keep collecting.
    """
    status = main()
    gc.freeze()
    sys.exit(status)


if __name__ == "__main__":  # pragma: no cover
    run()
