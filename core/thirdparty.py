"""Third-party imports that need care: LanceDB without its REST namespace client's eager start-up.

``import lancedb`` imports ``lance_namespace``, which imports the generated REST client
``lance_namespace_urllib3_client``; that package's ``__init__`` builds every API class of the REST namespace
(hundreds of pydantic ``validate_call`` schemas), about 1.8 s of a 2.6 s import on a 2-core machine. A
local or S3 store never talks to a REST namespace. So before LanceDB is first imported, the client package is
registered as a package whose submodules import normally (``lance_namespace`` needs its ``models``) and whose
own ``__init__`` runs the first time anything asks it for a name (``ApiClient``, ``TableApi``, ...): nothing
LanceDB can do is lost, and what memdeck never uses is never paid for. ``bench/bench_startup.py`` measures it.
"""

from __future__ import annotations

import importlib.util
import sys
import threading
from typing import Any

_CLIENT = "lance_namespace_urllib3_client"
_lock = threading.Lock()


def _defer_package_init(name: str) -> None:
    """Register package ``name`` with its ``__init__`` deferred to its first attribute lookup."""
    if name in sys.modules:
        return
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None or spec.submodule_search_locations is None:
        return  # not installed, or not a package: LanceDB imports whatever it imports
    module = importlib.util.module_from_spec(spec)
    state = {"loaded": False}
    loader = spec.loader

    def load_then_get(attr: str) -> Any:
        with _lock:
            if not state["loaded"]:
                state["loaded"] = True
                del module.__dict__["__getattr__"]  # the real __init__ defines the names from now on
                loader.exec_module(module)
        try:
            return module.__dict__[attr]
        except KeyError:
            raise AttributeError(f"module {name!r} has no attribute {attr!r}") from None

    module.__dict__["__getattr__"] = load_then_get
    sys.modules[name] = module


def prepare_lancedb() -> None:
    """Make the next ``import lancedb`` skip the REST namespace client's start-up (a no-op once imported).
    Called when ``memdeck.core`` is imported, so every module of memdeck's that imports LanceDB gets it."""
    if "lancedb" not in sys.modules:
        with _lock:
            _defer_package_init(_CLIENT)
