"""MCP server start-up: time from spawning `memdeck mcp` to the answer to `initialize`, and to the first
recall's answer, with the hash embedder and with the real packaged model (loaded in the background).

    python bench/bench_mcp.py [--runs 3]     # writes bench/RESULTS-mcp.md
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def _once(home: Path) -> tuple[float, float]:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "memdeck.cli", "mcp", "--principal", "alice", "--agent", "bench"],
        env={"MEMDECK_HOME": str(home)},
    )
    start = time.perf_counter()
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        init = time.perf_counter() - start
        result = await session.call_tool("recall", {"query": "where is the passport", "k": 5})
        assert not result.is_error, result.content
        first = time.perf_counter() - start
    return init, first


def _home(model: str) -> Path:
    home = Path(tempfile.mkdtemp(prefix="memdeck-bench-mcp-"))
    if model != "default":
        (home / "config.toml").write_text(f'[embedding]\nmodel = "{model}"\n', encoding="utf-8")
    from memdeck.core.config import load_config
    from memdeck.core.embed import HashEmbedder
    from memdeck.core.store import Store

    os.environ["MEMDECK_HOME"] = str(home)
    store = Store.open(home / "store", embedder=HashEmbedder() if model != "default" else None, config=load_config())
    store.remember("Alice keeps her passport in the blue drawer", tier="semantic", principal="alice")
    store.close()
    return home


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    rows = []
    for model in ("hash-384", "default"):
        home = _home(model)
        inits, firsts = [], []
        for _ in range(args.runs):
            init, first = anyio.run(_once, home)
            inits.append(init)
            firsts.append(first)
        rows.append((model, inits, firsts))
        print(model, [round(x, 2) for x in inits], [round(x, 2) for x in firsts])
    import mcp

    lines = [
        "# MCP server start-up",
        "",
        f"Measured {datetime.now(UTC):%Y-%m-%d} on {platform.machine()}, {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}, mcp {getattr(mcp, '__version__', '') or _version('mcp')}; "
        f"`python bench/bench_mcp.py --runs {args.runs}`. Each run spawns `python -m memdeck.cli mcp` through the "
        "SDK's stdio client on a one-memory store; times are from the spawn. "
        f"Load average when written: {os.getloadavg()[0]:.1f} (the machine is shared; on an idle one the "
        "imports alone take about 3 s of CPU: lancedb through memdeck.core's package imports, then the SDK).",
        "",
        "| embedder | initialize answered (median, min-max) | first recall answered (median, min-max) |",
        "|---|---|---|",
    ]
    for model, inits, firsts in rows:
        name = "all-MiniLM-L6-v2 (loaded in a background thread)" if model == "default" else model
        lines.append(
            f"| {name} | {statistics.median(inits):.2f} s ({min(inits):.2f}-{max(inits):.2f}) | "
            f"{statistics.median(firsts):.2f} s ({min(firsts):.2f}-{max(firsts):.2f}) |"
        )
    lines += [
        "",
        "`initialize` waits only for Python, the MCP SDK and memdeck's imports; the store opens and the model "
        "loads in a background thread, so the first recall waits for the model when it comes early.",
        "",
    ]
    out = Path(__file__).with_name("RESULTS-mcp.md")
    out.write_text("\n".join(lines), encoding="utf-8")
    print(f"wrote {out}")


def _version(name: str) -> str:
    from importlib.metadata import version

    return version(name)


if __name__ == "__main__":
    main()
