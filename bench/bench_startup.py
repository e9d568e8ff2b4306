"""Start-up of every front door: each one-shot command's wall and CPU time to exit, MCP `initialize` and first
recall against a bare server on the same SDK, the app's first frame and first rows in a pseudo-terminal
(as bench_app.py measures them), and a baseline measured in the same run
(`python -c "import lance, pyarrow"`), so each figure is also a ratio that the machine's load moves less.

    python bench/bench_startup.py [--runs 5]     # writes bench/RESULTS-startup.md

memdeck's own modules are compiled to bytecode first, as installing the package does: with
``PYTHONDONTWRITEBYTECODE`` set (as on some shared machines) an editable tree would otherwise be compiled
from source by every run, a cost no installed copy pays and the baseline and the bare MCP servers, whose
packages are compiled at install, never pay either.

"Cold" is the first run after the store was built (the OS page cache holds the libraries anyway, since the
build imported them: a truly cold disk is not reproducible on a shared machine); "warm" is the median of the
runs after it. CPU is the child's user + system time (os.wait4), which neighbours on a shared machine move
far less than wall time.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from datetime import UTC, datetime
from pathlib import Path

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

PY = sys.executable
BASELINE = [PY, "-c", "import lance, pyarrow"]
COMMANDS: dict[str, list[str]] = {
    "memdeck --help": ["--help"],
    "argument error (`list --since yesterdayish`)": ["list", "--since", "yesterdayish"],
    "memdeck list --principal alice --limit 5": ["list", "--principal", "alice", "--limit", "5"],
    "memdeck show <unknown id>": ["show", "sem_00000000000000000000"],
    "memdeck recall ... --k 5 (model load included)": [
        "recall",
        "where is the passport",
        "--principal",
        "alice",
        "--k",
        "5",
    ],
}
TARGETS = {
    "memdeck --help": 0.3,
    "argument error (`list --since yesterdayish`)": 0.3,
    "memdeck list --principal alice --limit 5": 1.0,
    "memdeck show <unknown id>": 1.0,
    "memdeck recall ... --k 5 (model load included)": 1.5,
}

BARE_MCPSERVER = textwrap.dedent("""
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("bare")

    @server.tool()
    def echo(text: str) -> str:
        return text

    server.run()
""")

BARE_SERVER = textwrap.dedent("""
    import anyio
    from mcp.server.lowlevel import Server
    from mcp.server.stdio import stdio_server

    server = Server("bare")

    async def main():
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)
""")


def run_once(cmd: list[str], home: Path) -> tuple[float, float, float, int]:
    """(wall s, CPU s, peak RSS MB, exit status) of one run of ``cmd``."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        cmd,
        env={**os.environ, "MEMDECK_HOME": str(home)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)


async def mcp_once(params: StdioServerParameters, recall: bool) -> tuple[float, float]:
    start = time.perf_counter()
    first = float("nan")
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        init = time.perf_counter() - start
        if recall:
            result = await session.call_tool("recall", {"query": "where is the passport", "k": 5})
            assert not result.is_error, result.content
            first = time.perf_counter() - start
    return init, first


def app_once(home: Path) -> tuple[float, float]:
    """(first frame, first rows) of `memdeck` (the app) in a pseudo-terminal, in seconds from the spawn."""
    from bench_app import MARKERS, Terminal

    env = {**os.environ, "MEMDECK_HOME": str(home), "TERM": "xterm-256color", "COLUMNS": "140", "LINES": "42"}
    term = Terminal([str(Path(PY).parent / "memdeck")], env)
    frame = term.wait_for(MARKERS["first_frame"], 120)
    rows = term.wait_for(MARKERS["rows"], 120)
    term.quit()
    return (float("nan") if frame is None else frame), (float("nan") if rows is None else rows)


def build_home() -> Path:
    """A one-memory store, written by a child process: a child forked from a parent that had loaded LanceDB
    and the model would report the parent's pages as its own peak RSS."""
    home = Path(tempfile.mkdtemp(prefix="memdeck-bench-startup-"))
    os.environ["MEMDECK_HOME"] = str(home)
    subprocess.run(
        [
            PY,
            "-m",
            "memdeck.cli",
            "add",
            "Alice keeps her passport in the blue drawer",
            "--tier",
            "semantic",
            "--principal",
            "alice",
        ],
        check=True,
        capture_output=True,
    )
    return home


def compile_bytecode() -> int:
    """Compile memdeck's modules to bytecode where they are imported from (what `pip install` does); the
    number of source files."""
    import compileall
    import importlib

    files = 0
    for name in ("memdeck.cli", "memdeck.core", "memdeck.tui", "memdeck.integrations"):
        for folder in importlib.import_module(name).__path__:
            compileall.compile_dir(folder, quiet=1)
            files += sum(1 for _ in Path(folder).rglob("*.py"))
    return files


def med(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    compiled = compile_bytecode()
    home = build_home()
    memdeck = [PY, "-m", "memdeck.cli"]
    loads = [os.getloadavg()[0]]
    results: dict[str, list[tuple[float, float, float, int]]] = {"baseline": []}
    for name in COMMANDS:
        results[name] = []
    for _ in range(args.runs + 1):  # interleaved, so a burst of load hits every command alike
        results["baseline"].append(run_once(BASELINE, home))
        for name, argv in COMMANDS.items():
            results[name].append(run_once([*memdeck, *argv], home))
        loads.append(os.getloadavg()[0])
    bare = Path(home) / "bare_server.py"
    bare.write_text(BARE_SERVER, encoding="utf-8")
    env = {"MEMDECK_HOME": str(home), "PATH": os.environ.get("PATH", "")}
    ours = StdioServerParameters(
        command=PY, args=["-m", "memdeck.cli", "mcp", "--principal", "alice", "--agent", "bench"], env=env
    )
    theirs = StdioServerParameters(command=PY, args=[str(bare)], env=env)
    bare_high = Path(home) / "bare_mcpserver.py"
    bare_high.write_text(BARE_MCPSERVER, encoding="utf-8")
    theirs_high = StdioServerParameters(command=PY, args=[str(bare_high)], env=env)
    mcp_ours, mcp_bare, mcp_bare_high, app = [], [], [], []
    for _ in range(args.runs):
        mcp_bare.append(anyio.run(mcp_once, theirs, False)[0])
        mcp_bare_high.append(anyio.run(mcp_once, theirs_high, False)[0])
        mcp_ours.append(anyio.run(mcp_once, ours, True))
        app.append(app_once(home))
        loads.append(os.getloadavg()[0])

    base_wall = med([r[0] for r in results["baseline"][1:]])
    base_cpu = med([r[1] for r in results["baseline"][1:]])
    lines = [
        "# Start-up: every command, the MCP server",
        "",
        f"Measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {platform.machine()}, {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}; `python bench/bench_startup.py --runs {args.runs}`, on a one-memory store "
        f"with the packaged model. The 1-minute load average ranged {min(loads):.1f}-{max(loads):.1f} during the "
        "runs (the machine is shared), so wall times are upper bounds for an idle machine; CPU times and the "
        "ratios to the baseline, measured interleaved with every command, move less with load. memdeck's "
        f"{compiled} modules were compiled to bytecode first, as installing the package does.",
        "",
        f'Baseline `python -c "import lance, pyarrow"`: wall {base_wall:.2f} s, CPU {base_cpu:.2f} s (warm median).',
        "",
        "| command | exit | cold wall | warm wall (median, min-max) | warm CPU | wall / baseline | peak RSS | "
        "target (idle wall) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name in COMMANDS:
        runs = results[name]
        warm = runs[1:]
        walls = [r[0] for r in warm]
        lines.append(
            f"| {name} | {runs[0][3]} | {runs[0][0]:.2f} s | {med(walls):.2f} s ({min(walls):.2f}-{max(walls):.2f}) "
            f"| {med([r[1] for r in warm]):.2f} s | {med(walls) / base_wall:.1f}x | "
            f"{max(r[2] for r in runs):.0f} MB | <= {TARGETS[name]} s, <= 3x baseline |"
        )
    inits = [i for i, _ in mcp_ours]
    firsts = [f for _, f in mcp_ours]
    lines += [
        "",
        "| MCP, from spawning the server | median (min-max) | against the bare server |",
        "|---|---|---|",
        f"| bare server on the same SDK (`mcp.server.lowlevel.Server`, no tools): `initialize` | "
        f"{med(mcp_bare):.2f} s ({min(mcp_bare):.2f}-{max(mcp_bare):.2f}) | 1.0x |",
        f"| bare server on the SDK's `MCPServer` (the class memdeck's server extends), one tool: `initialize` | "
        f"{med(mcp_bare_high):.2f} s ({min(mcp_bare_high):.2f}-{max(mcp_bare_high):.2f}) | "
        f"{med(mcp_bare_high) / med(mcp_bare):.2f}x |",
        f"| memdeck `initialize` | {med(inits):.2f} s ({min(inits):.2f}-{max(inits):.2f}) | "
        f"{med(inits) / med(mcp_bare):.2f}x the low-level server, {med(inits) / med(mcp_bare_high):.2f}x the "
        "`MCPServer` one (target <= 1.3x) |",
        f"| memdeck first `recall` answered | {med(firsts):.2f} s ({min(firsts):.2f}-{max(firsts):.2f}) | "
        "target <= 1.5 s |",
        "",
        "| the app (`memdeck`, 140x42 pseudo-terminal), from the spawn | median (min-max) | target |",
        "|---|---|---|",
    ]
    for n, what, target in ((0, "first frame", ""), (1, "first rows (`1 memories` on screen)", "<= 1.0 s")):
        times = [a[n] for a in app]
        lines.append(f"| {what} | {med(times):.2f} s ({min(times):.2f}-{max(times):.2f}) | {target} |")
    lines.append("")
    out = Path(__file__).with_name("RESULTS-startup.md")
    out.write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
