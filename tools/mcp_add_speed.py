"""Milliseconds per lesson that `lamar mcp` stores one call at a time, as the store grows (SQLite, JSON, memory).

    python tools/mcp_add_speed.py                                  # this tree, at 200, 500 and 1000 lessons
    PYTHONPATH=../base:../base/integrations python tools/mcp_add_speed.py --sizes 200,500
    python tools/mcp_add_speed.py --profile --sizes 1000 --backends sqlite   # where the time goes

Each size starts from an empty store and calls `LamarTools.propose_lesson` (the tool's own code, without
the protocol) once per lesson, every lesson in one scope, so each add is compared with every lesson
before it. "last" is the mean of the last tenth of the adds: what one more add costs at that size.
"lessons read" is how many lessons the engine handed the tools per add (`Lamar.experiences` and
`Lamar.get`), the figure that grows with the store when an add reads every lesson again.
Figures go in the commit message of a change to the tools' adds.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import tempfile
import time
from pathlib import Path

BACKENDS = {"sqlite": "lessons.db", "json": "lessons.json", "memory": ":memory:"}


def run(backend: str, size: int, profile: bool) -> tuple[list[float], int]:
    """Seconds of each of `size` proposals on a fresh store; lessons the engine handed out in all."""
    from lamar import Lamar
    from lamar_mcp.bench import counting
    from lamar_mcp.tools import LamarTools

    with tempfile.TemporaryDirectory() as folder:
        name = BACKENDS[backend]
        lam = Lamar(name if name == ":memory:" else str(Path(folder) / name), seed=0)
        tools = LamarTools(lam, cwd=folder)
        handed = counting(lam)
        times = []
        profiler = cProfile.Profile() if profile else None
        for i in range(size):
            if profiler:
                profiler.enable()
            began = time.perf_counter()
            tools.propose_lesson(f"the build of module {i} fails on a clean checkout",
                                 f"regenerate the stubs of package {i}", scope={"project": "shop"})
            times.append(time.perf_counter() - began)
            if profiler:
                profiler.disable()
        lam.close()
    if profiler:
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(25)
    return times, handed[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="200,500,1000", help="lessons per run (200,500,1000)")
    parser.add_argument("--backends", default="sqlite,json,memory", help="stores to time (sqlite,json,memory)")
    parser.add_argument("--profile", action="store_true", help="print where the time goes")
    args = parser.parse_args()
    for backend in args.backends.split(","):
        for size in (int(s) for s in args.sizes.split(",")):
            times, handed = run(backend, size, args.profile)
            tail = times[-max(1, size // 10):]
            print(f"{backend:7} {size:5} lessons   mean {statistics.mean(times) * 1000:7.2f} ms/add   "
                  f"last {statistics.mean(tail) * 1000:7.2f} ms/add   lessons read {handed / size:8.1f}/add")


if __name__ == "__main__":
    main()
