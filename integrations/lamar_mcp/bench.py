"""Benchmark of `lamar mcp` over stdio: server start time and recall/report latency through the protocol.

    python -m lamar_mcp.bench [--lessons 50] [--calls 200] [--starts 5]

Each figure is printed next to its baselines from the same run: the start next to a bare
`lamar --help` process and to a process that only imports the SDK (the floor the SDK sets),
the protocol's latency next to the same engine call in process.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import anyio

from lamar import Experience, Lamar, Scope
from lamar_mcp.launch import child_env, lamar_command, stdio_session

CONTEXT = {"project": "p0", "language": "swift", "task": "build_fails"}


def make_store(path: Path, lessons: int) -> None:
    """A SQLite store whose lessons spread over five projects, a fifth of them eligible for CONTEXT."""
    with Lamar(str(path), seed=0) as lam:
        for i in range(lessons):
            lam.add(Experience(f"situation {i} arises", f"do thing {i}", "it worked before",
                               scope=Scope(project=f"p{i % 5}")))


async def time_starts(store: Path, starts: int) -> list[float]:
    """Seconds from spawning `lamar mcp` to a completed initialize handshake, once per start."""
    out = []
    for _ in range(starts):
        began = time.perf_counter()
        async with stdio_session(store) as session:
            out.append(time.perf_counter() - began)
            await session.list_tools()
    return out


def time_process(argv: Sequence[str], starts: int) -> list[float]:
    """Seconds a process takes from spawn to exit, once per start."""
    out = []
    for _ in range(starts):
        began = time.perf_counter()
        subprocess.run(argv, env=child_env(), check=True, capture_output=True)
        out.append(time.perf_counter() - began)
    return out


async def time_calls(store: Path, calls: int) -> tuple[list[float], list[float]]:
    """Milliseconds of each recall and each report through one stdio session."""
    recalls, reports = [], []
    async with stdio_session(store, "--seed", "0") as session:
        for i in range(calls):
            began = time.perf_counter()
            result = await session.call_tool("recall", {"context": CONTEXT})
            recalls.append((time.perf_counter() - began) * 1000)
            began = time.perf_counter()
            await session.call_tool("report", {"episode_id": result.structured_content["episode_id"],
                                               "signal": ("shipped", "corrected")[i % 2]})
            reports.append((time.perf_counter() - began) * 1000)
    return recalls, reports


def time_in_process(store: Path, calls: int) -> tuple[list[float], list[float]]:
    """The same recall and report, called on the engine directly (no protocol)."""
    recalls, reports = [], []
    with Lamar(str(store), seed=0) as lam:
        for i in range(calls):
            began = time.perf_counter()
            rec = lam.recall(CONTEXT)
            recalls.append((time.perf_counter() - began) * 1000)
            began = time.perf_counter()
            lam.report(rec.episode_id, ("shipped", "corrected")[i % 2])
            reports.append((time.perf_counter() - began) * 1000)
    return recalls, reports


def _summary(values: Sequence[float], unit: str) -> str:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return f"median {statistics.median(ordered):7.3f} {unit}   p95 {p95:7.3f} {unit}   (n={len(ordered)})"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m lamar_mcp.bench", description=__doc__.splitlines()[0])
    parser.add_argument("--lessons", type=int, default=50, help="lessons in the store (50)")
    parser.add_argument("--calls", type=int, default=200, help="recall + report pairs timed (200)")
    parser.add_argument("--starts", type=int, default=5, help="server starts timed (5)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        store = Path(folder) / "bench.db"
        make_store(store, args.lessons)
        print(f"store: SQLite, {args.lessons} lessons, {args.lessons // 5} eligible per recall")
        bare = time_process([*lamar_command(), "--help"], args.starts)
        sdk = time_process([sys.executable, "-c", "import mcp.server.mcpserver"], args.starts)
        print(f"start  `lamar --help` process       {_summary(bare, 's')}")
        print(f"start  python importing the MCP SDK {_summary(sdk, 's')}")
        print(f"start  `lamar mcp` to initialized   {_summary(anyio.run(time_starts, store, args.starts), 's')}")
        over_mcp = anyio.run(time_calls, store, args.calls)
        direct = time_in_process(store, args.calls)
        print(f"recall over MCP stdio               {_summary(over_mcp[0], 'ms')}")
        print(f"recall in process                   {_summary(direct[0], 'ms')}")
        print(f"report over MCP stdio               {_summary(over_mcp[1], 'ms')}")
        print(f"report in process                   {_summary(direct[1], 'ms')}")


if __name__ == "__main__":
    main()
