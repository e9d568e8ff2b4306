"""Start-up of the MCP server and of a one-shot `memdeck recall`: time from spawning the process to the answer
to `initialize` and to the first recall's answer, and the CLI's wall time, each with the process's peak RSS;
with the packaged model in numpy (the default backend) and in torch, and where the imports' time goes.

    python bench/bench_mcp.py [--runs 3]     # writes bench/RESULTS-mcp.md
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

NOTES = "## Notes"
BACKENDS = {"numpy": "numpy (default: auto)", "torch": "torch"}

# Each phase of start-up, in a fresh interpreter, measured as CPU seconds inside it (wall time on a shared
# machine says more about the neighbours).
PHASES = {
    "interpreter + memdeck's CLI parser": "from memdeck.cli import build_parser; build_parser()",
    "+ the MCP SDK (all `initialize` needs)": "from memdeck.cli import build_parser; build_parser(); "
    "from memdeck.cli.mcp import _server_class; _server_class()",
    "lancedb alone": "import lancedb",
    "numpy model load (tokenizers, safetensors, weights)": "from memdeck.core.embed import PackagedMiniLM; "
    "PackagedMiniLM().load()",
    "torch model load (sentence-transformers)": "from memdeck.core.embed import SentenceTransformerEmbedder; "
    "SentenceTransformerEmbedder().load()",
}


def _server_usage() -> tuple[float, float]:
    """Peak RSS (MB) and CPU time so far (s) of this process's memdeck child (the server the SDK spawned),
    from /proc. CPU time says what the start-up costs apart from the machine's other load."""
    peak = cpu = 0.0
    tick = os.sysconf("SC_CLK_TCK")
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) != os.getpid() or b"memdeck.cli" not in (entry / "cmdline").read_bytes():
                continue
            cpu = max(cpu, (int(fields[11]) + int(fields[12])) / tick)
            for line in (entry / "status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    peak = max(peak, int(line.split()[1]) / 1024)
        except (OSError, ValueError, IndexError):
            continue
    return peak, cpu


async def _mcp_once(home: Path) -> tuple[float, float, float, float, float]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memdeck.cli", "mcp", "--principal", "alice", "--agent", "bench"],
        env={"MEMDECK_HOME": str(home)},
    )
    start = time.perf_counter()
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        init = time.perf_counter() - start
        _, init_cpu = _server_usage()
        result = await session.call_tool("recall", {"query": "where is the passport", "k": 5})
        assert not result.is_error, result.content
        first = time.perf_counter() - start
        rss, first_cpu = _server_usage()
    return init, first, rss, init_cpu, first_cpu


def _cli_once(home: Path) -> tuple[float, float]:
    cmd = [
        sys.executable,
        "-m",
        "memdeck.cli",
        "recall",
        "where is the passport",
        "--principal",
        "alice",
        "--k",
        "5",
        "--json",
    ]
    start = time.perf_counter()
    proc = subprocess.Popen(
        cmd, env={**os.environ, "MEMDECK_HOME": str(home)}, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    out = proc.stdout.read() if proc.stdout else b""
    assert status == 0 and b"passport" in out, (
        status,
        out[-300:],
        proc.stderr.read() if proc.stderr else b"",
    )
    return wall, usage.ru_maxrss / 1024


def _home(backend: str) -> Path:
    home = Path(tempfile.mkdtemp(prefix="memdeck-bench-mcp-"))
    (home / "config.toml").write_text(f'[embedding]\nbackend = "{backend}"\n', encoding="utf-8")
    from memdeck.core.config import load_config
    from memdeck.core.store import Store

    os.environ["MEMDECK_HOME"] = str(home)
    store = Store.open(home / "store", config=load_config())
    store.remember("Alice keeps her passport in the blue drawer", tier="semantic", principal="alice")
    store.close()
    return home


def _phase_cpu(code: str, runs: int) -> float:
    timed = f"import time; t = time.process_time(); {code}; print(time.process_time() - t)"
    values = []
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", timed], capture_output=True, text=True, check=True)
        values.append(float(out.stdout.split()[-1]))
    return statistics.median(values)


def _cell(values: list[float], unit: str = "s") -> str:
    if unit == "MB":
        return f"{max(values):.0f} MB"
    return f"{statistics.median(values):.2f} s ({min(values):.2f}-{max(values):.2f})"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    loads = [os.getloadavg()[0]]
    rows = []
    for backend in BACKENDS:
        home = _home(backend)
        inits, firsts, rss, walls, cli_rss, cpus = [], [], [], [], [], []
        for _ in range(args.runs):
            init, first, peak, init_cpu, first_cpu = anyio.run(_mcp_once, home)
            inits.append(init)
            firsts.append(first)
            rss.append(peak)
            cpus.append((init_cpu, first_cpu))
            wall, peak = _cli_once(home)
            walls.append(wall)
            cli_rss.append(peak)
            loads.append(os.getloadavg()[0])
        rows.append((backend, inits, firsts, rss, walls, cli_rss, cpus))
        print(
            backend, [round(x, 2) for x in inits], [round(x, 2) for x in firsts], [round(x, 2) for x in walls]
        )
    phases = {name: _phase_cpu(code, args.runs) for name, code in PHASES.items()}
    loads.append(os.getloadavg()[0])
    print(phases)
    import mcp

    lines = [
        "# MCP server and CLI start-up",
        "",
        f"Measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {platform.machine()}, {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}, mcp {getattr(mcp, '__version__', '') or _version('mcp')}; "
        f"`python bench/bench_mcp.py --runs {args.runs}`. The machine is shared with other work: the 1-minute "
        f"load average ranged {min(loads):.1f}-{max(loads):.1f} during the runs, so wall times here are "
        "upper bounds for an idle machine.",
        "",
        "Each MCP run spawns `python -m memdeck.cli mcp` through the SDK's stdio client on a one-memory store; "
        'times are from the spawn. Each CLI run is `python -m memdeck.cli recall "where is the passport" '
        "--principal alice --k 5 --json`, wall time to exit. Peak RSS is the process's high-water mark "
        "(VmHWM for the server, taken after the first recall; ru_maxrss for the CLI). Server CPU is the user + "
        "system time the server process had used when each answer arrived: on an idle machine its wall "
        "times come close to these (the start-up runs mostly on one interpreter lock). Targets: initialize "
        "<= 1 s, first recall <= 3 s after the spawn.",
        "",
        "| embedding backend | MCP initialize (median, min-max) | MCP first recall | server CPU by "
        "initialize / first recall | MCP peak RSS | CLI recall wall | CLI peak RSS |",
        "|---|---|---|---|---|---|---|",
    ]
    for backend, inits, firsts, rss, walls, cli_rss, cpus in rows:
        cpu = f"{statistics.median(c[0] for c in cpus):.2f} s / {statistics.median(c[1] for c in cpus):.2f} s"
        lines.append(
            f"| {BACKENDS[backend]} | {_cell(inits)} | {_cell(firsts)} | {cpu} | {_cell(rss, 'MB')} | "
            f"{_cell(walls)} | {_cell(cli_rss, 'MB')} |"
        )
    lines += [
        "",
        "Where start-up goes: CPU seconds of each phase in a fresh interpreter (median of the runs).",
        "",
        "| phase | CPU |",
        "|---|---|",
    ]
    for name, cpu in phases.items():
        lines.append(f"| {name} | {cpu:.2f} s |")
    lines += [
        "",
        "`initialize` waits only for the interpreter, the CLI parser and the MCP SDK. The store opens (lancedb) "
        "and the model loads in a background thread started once the SDK is imported; the maintenance "
        "scheduler's first run waits 5 s, at a lower priority. The first recall waits for the store and the "
        "model.",
        "",
    ]
    out = Path(__file__).with_name("RESULTS-mcp.md")
    old = out.read_text(encoding="utf-8") if out.exists() else ""
    notes = old[old.index(NOTES) :] if NOTES in old else ""  # written by hand: kept across runs
    out.write_text("\n".join(lines) + ("\n" + notes if notes else ""), encoding="utf-8")
    print(f"wrote {out}")


def _version(name: str) -> str:
    from importlib.metadata import version

    return version(name)


if __name__ == "__main__":
    main()
