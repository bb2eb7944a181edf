"""Benchmark of `lamar mcp`: stdio start time, recall/report latency, concurrent HTTP clients,
`propose_lessons` at its input limit, the recall tool's own work and the lessons tool as the store grows."""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession

from lamar import Experience, Lamar, Scope
from lamar_mcp.checks import MAX_FREE_TEXT
from lamar_mcp.launch import child_env, http_server, http_session, lamar_command, stdio_session

CONTEXT = {"project": "p0", "language": "swift", "task": "build_fails"}


def make_store(path: Path, lessons: int) -> None:
    """A SQLite store whose lessons spread over five projects, a fifth of them eligible for CONTEXT."""
    with Lamar(str(path), seed=0) as lam:
        _fill(lam, lessons)


def _fill(lam: Lamar, lessons: int) -> None:
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


async def _http_client(url: str, number: int, episodes: int) -> None:
    async with http_session(url) as session:
        for i in range(episodes):
            result = await session.call_tool("recall", {"context": {**CONTEXT, "client": str(number)}})
            await session.call_tool("report", {"episode_id": result.structured_content["episode_id"],
                                               "signal": ("shipped", "corrected")[i % 2]})


def time_http(store: Path, clients: int, episodes: int) -> tuple[float, float, float]:
    """Wall seconds for `clients` concurrent HTTP clients x `episodes` recall+report pairs each,
    with the CPU seconds the clients (this process) and the server process (its whole life) used."""

    async def run(url: str) -> None:
        async with anyio.create_task_group() as group:
            for number in range(clients):
                group.start_soon(_http_client, url, number, episodes)

    server_before = _children_cpu()
    with http_server(store, "--seed", "0") as url:
        began, cpu = time.perf_counter(), time.process_time()
        anyio.run(run, url)
        wall, client_cpu = time.perf_counter() - began, time.process_time() - cpu
    return wall, client_cpu, _children_cpu() - server_before


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


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


def lesson_bullets(limit: int) -> str:
    """Distinct one-line lessons, as many as fit in `limit` characters (propose_lessons' input limit)."""
    lines: list[str] = []
    used = 0
    while True:
        line = f"- When case {len(lines)} arises, do step {len(lines)}.\n"
        if used + len(line) > limit:
            return "".join(lines)
        lines.append(line)
        used += len(line)


async def _propose_over(session: ClientSession, text: str) -> float:
    began = time.perf_counter()
    result = await session.call_tool("propose_lessons", {"lessons": text, "scope": {"language": "go"}})
    seconds = time.perf_counter() - began
    if result.is_error:
        raise RuntimeError(f"propose_lessons was refused: {result.content}")
    return seconds


def time_propose(folder: Path, lessons: int, runs: int) -> dict[str, list[float]]:
    """Seconds of one `propose_lessons` call at its input limit, each run on a fresh copy of the store:
    called on `LamarTools` in process, over stdio and over HTTP."""
    from lamar_mcp.checks import MAX_FREE_TEXT
    from lamar_mcp.tools import LamarTools

    text = lesson_bullets(MAX_FREE_TEXT)
    out: dict[str, list[float]] = {"in process": [], "stdio": [], "http": []}
    for run in range(runs):
        for way, seconds in out.items():
            store = folder / f"propose-{way.replace(' ', '-')}-{run}.db"
            make_store(store, lessons)
            if way == "in process":
                with Lamar(str(store), seed=0) as lam:
                    began = time.perf_counter()
                    LamarTools(lam).propose_lessons(text, {"language": "go"})
                    seconds.append(time.perf_counter() - began)
            elif way == "stdio":
                async def over_stdio(path: Path = store) -> float:
                    async with stdio_session(path) as session:
                        return await _propose_over(session, text)
                seconds.append(anyio.run(over_stdio))
            else:
                with http_server(store) as url:
                    async def over_http(where: str = url) -> float:
                        async with http_session(where) as session:
                            return await _propose_over(session, text)
                    seconds.append(anyio.run(over_http))
    return out


def time_recall_tool(backend: str, lessons: int, calls: int) -> tuple[list[float], list[float], float]:
    """Milliseconds of each `LamarTools.recall` and each `Lamar.recall` on one store of `lessons` (the
    tool's own work is the difference), and the lessons the tool read from the engine per call."""
    from lamar_mcp.tools import LamarTools

    with tempfile.TemporaryDirectory() as folder:
        store = ":memory:" if backend == "memory" else str(Path(folder) / "recall.db")
        with Lamar(store, seed=0) as lam:
            _fill(lam, lessons)
            tools = LamarTools(lam)
            tools.recall(CONTEXT)  # a server's first call reads what it keeps of the lessons
            handed = counting(lam)
            through, direct = [], []
            for _ in range(calls):
                began = time.perf_counter()
                tools.recall(CONTEXT)
                through.append((time.perf_counter() - began) * 1000)
                began = time.perf_counter()
                lam.recall(CONTEXT)
                direct.append((time.perf_counter() - began) * 1000)
    return through, direct, handed[0] / calls


async def _walk_lessons(session: ClientSession) -> tuple[float, int, float, int, float, int]:
    """One `lessons` call with no argument (milliseconds, characters of its text), then every page from
    the first, following `next_cursor` while there is one (seconds, pages), then one read of the
    lamar://lessons resource (milliseconds, characters)."""
    began = time.perf_counter()
    first = await session.call_tool("lessons", {})
    ms, chars = (time.perf_counter() - began) * 1000, sum(len(getattr(c, "text", "")) for c in first.content)
    seconds, pages = await _every_page(session)
    began = time.perf_counter()
    read = await session.read_resource("lamar://lessons")
    read_ms, read_chars = (time.perf_counter() - began) * 1000, sum(len(getattr(c, "text", "")) for c in read.contents)
    return ms, chars, seconds, pages, read_ms, read_chars


async def _every_page(session: ClientSession) -> tuple[float, int]:
    """Every page of `lessons` from the first, following `next_cursor` while there is one (seconds, pages)."""
    arguments: dict[str, Any] = {}
    began, pages = time.perf_counter(), 0
    while True:
        result = await session.call_tool("lessons", arguments)
        if result.is_error:
            raise RuntimeError(f"lessons was refused: {result.content}")
        pages += 1
        cursor = result.structured_content.get("next_cursor")
        if not cursor:
            return time.perf_counter() - began, pages
        arguments = {"cursor": cursor}


def time_lessons_tool(folder: Path, lessons: int, calls: int) -> list[tuple[float, int, float, int, float, int]]:
    """`_walk_lessons` `calls` times over one stdio session on a SQLite store of `lessons` lessons,
    after one call that lets the server read the store."""
    store = folder / f"lessons-{lessons}.db"
    make_store(store, lessons)

    async def run() -> list[tuple[float, int, float, int, float, int]]:
        async with stdio_session(store) as session:
            await session.call_tool("lessons", {"status": "retired"})
            return [await _walk_lessons(session) for _ in range(calls)]
    return anyio.run(run)


def counting(lam: Lamar) -> list[int]:
    """Count the lessons `lam` hands out from now on (its reads wrapped on this instance only)."""
    handed = [0]
    for name in ("experiences", "get"):
        read = getattr(lam, name)

        def counted(*args: Any, _read: Any = read, **kwargs: Any) -> Any:
            found = _read(*args, **kwargs)
            handed[0] += len(found) if isinstance(found, list) else 1
            return found

        setattr(lam, name, counted)
    return handed


def _summary(values: Sequence[float], unit: str) -> str:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return f"median {statistics.median(ordered):7.3f} {unit}   p95 {p95:7.3f} {unit}   (n={len(ordered)})"


def main(argv: Sequence[str] | None = None) -> None:
    """Print every figure next to its baselines from the same run.

        python -m lamar_mcp.bench [--lessons 50] [--calls 200] [--starts 5] [--http-clients 8] [--http-episodes 200]
                                  [--propose-runs 3 [--only-propose]] [--recall-sizes 100,1000 [--only-recall]]
                                  [--lessons-sizes 1000,10000 [--lessons-calls 5] [--only-lessons]]

    The start is printed next to a bare `lamar --help` process and to a process that only imports
    the SDK (the floor the SDK sets), the protocol's latency next to the same engine call in process,
    the recall tool (in process, no protocol) next to the engine's recall on the same store, and the
    lessons tool's first answer (time and size) next to walking all of its pages, and one read of
    the lamar://lessons resource.
    """
    parser = argparse.ArgumentParser(prog="python -m lamar_mcp.bench", description=__doc__.splitlines()[0])
    parser.add_argument("--lessons", type=int, default=50, help="lessons in the store (50)")
    parser.add_argument("--calls", type=int, default=200, help="recall + report pairs timed (200)")
    parser.add_argument("--starts", type=int, default=5, help="server starts timed (5)")
    parser.add_argument("--http-clients", type=int, default=8, help="concurrent HTTP clients (8)")
    parser.add_argument("--propose-runs", type=int, default=0,
                        help="propose_lessons calls at its input limit timed per way of calling it (0 skips)")
    parser.add_argument("--only-propose", action="store_true", help="time only propose_lessons")
    parser.add_argument("--recall-sizes", default="",
                        help="store sizes at which to time the recall tool in process, in memory and in SQLite "
                             "(100,1000: comma-separated; empty skips)")
    parser.add_argument("--only-recall", action="store_true", help="time only the recall tool (--recall-sizes)")
    parser.add_argument("--lessons-sizes", default="",
                        help="store sizes at which to time the lessons tool over stdio, its first answer and "
                             "every page, and a read of lamar://lessons (1000,10000: comma-separated; empty skips)")
    parser.add_argument("--lessons-calls", type=int, default=5, help="lessons walks timed per size (5)")
    parser.add_argument("--only-lessons", action="store_true", help="time only the lessons tool (--lessons-sizes)")
    parser.add_argument("--http-episodes", type=int, default=200, help="episodes per HTTP client (200; 0 skips)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        store = Path(folder) / "bench.db"
        make_store(store, args.lessons)
        print(f"store: SQLite, {args.lessons} lessons, {args.lessons // 5} eligible per recall")
        if args.propose_runs:
            lines = lesson_bullets(MAX_FREE_TEXT).count("\n")
            for way, seconds in time_propose(Path(folder), args.lessons, args.propose_runs).items():
                print(f"propose_lessons, {lines} lines, {way:10}  {_summary(seconds, 's')}")
        for size in (int(n) for n in args.recall_sizes.split(",") if n.strip()):
            for backend in ("memory", "sqlite"):
                through, direct, read = time_recall_tool(backend, size, args.calls)
                print(f"recall tool, {backend:6} {size:6} lessons  {_summary(through, 'ms')}   "
                      f"lessons read per call {read:.0f}")
                print(f"Lamar.recall, {backend:6} {size:6} lessons {_summary(direct, 'ms')}")
        for size in (int(n) for n in args.lessons_sizes.split(",") if n.strip()):
            walks = time_lessons_tool(Path(folder), size, args.lessons_calls)
            print(f"lessons tool, {size:6} lessons, first call   {_summary([w[0] for w in walks], 'ms')}   "
                  f"answer {walks[0][1]} characters")
            print(f"lessons tool, {size:6} lessons, every page   {_summary([w[2] for w in walks], 's')}   "
                  f"{walks[0][3]} pages")
            print(f"lamar://lessons, {size:6} lessons, one read {_summary([w[4] for w in walks], 'ms')}   "
                  f"answer {walks[0][5]} characters")
        if args.only_propose or args.only_recall or args.only_lessons:
            return
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
        if args.http_episodes:
            n = args.http_clients * args.http_episodes
            wall, client_cpu, server_cpu = time_http(store, args.http_clients, args.http_episodes)
            print(f"http   {args.http_clients} clients x {args.http_episodes} episodes at once   {wall:7.2f} s wall "
                  f"({n / wall:.0f} episodes/s); CPU per episode: clients {client_cpu / n * 1000:.2f} ms, "
                  f"server {server_cpu / n * 1000:.2f} ms (its start included)")


if __name__ == "__main__":
    main()
