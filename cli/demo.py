"""memdeck demo: build a realistic demo store and open the app on it."""

from __future__ import annotations

import argparse
import sys
import time

from memdeck.cli._common import positive_int, run_app
from memdeck.core.errors import MemdeckError
from memdeck.core.paths import resolve_store


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="build a demo store (principals, agents, all tiers) and open the app")
    p.add_argument("--no-app", action="store_true", help="only build the store")
    p.add_argument("--size", type=positive_int, default=2000, help="number of memories (default 2000)")
    p.add_argument("--seed", type=int, default=7, help="random seed of the generated history (default 7)")
    p.add_argument("--rebuild", action="store_true", help="build again even if the store exists")
    p.set_defaults(func=cmd_demo)


def cmd_demo(args: argparse.Namespace) -> int:
    import shutil

    from memdeck.core.demo import build_demo

    root = resolve_store(args.store) if args.store else resolve_store(None).with_name("demo")
    if root.exists() and any(root.iterdir()):
        if args.rebuild:
            if not (root / "memdeck.json").exists():
                raise MemdeckError(f"{root} is not a memdeck store; refusing to delete it")
            shutil.rmtree(root)
        elif not (root / "memdeck.json").exists():
            raise MemdeckError(f"{root} exists and is not a memdeck store; pick another --store")
    if not (root / "memdeck.json").exists():
        started = time.monotonic()
        print(f"building the demo store in {root} (loading the embedding model)…", file=sys.stderr)

        def progress(done: int, total: int) -> None:
            print(f"\r  {done}/{total} memories", end="", file=sys.stderr, flush=True)

        build_demo(root, total=args.size, seed=args.seed, progress=progress)
        print(f"\n  done in {time.monotonic() - started:.1f}s", file=sys.stderr)
    else:
        print(f"using the existing demo store in {root} (--rebuild to start over)", file=sys.stderr)
    if args.no_app:
        print(root)
        return 0
    args.store = str(root)
    return run_app(args)
