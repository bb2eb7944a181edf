"""What sleep takes to check a model reply of many lessons (a server that ignores `max_tokens`), the reply scripted
and no model called: seconds (wall and CPU) per reply size and their ratio to the smallest,
`python tools/mining_reply_cost.py [--lessons N ...]` (docs/sleep.md, "What mining costs")."""

from __future__ import annotations

import argparse
import json
import random
import time

from lamar import Experience, Lamar, Scope, Trace
from lamar.models import ScriptedModel

_CONTEXT = {"project": "shop", "language": "swift"}
_WORDS = ("build", "module", "cache", "lint", "schema", "migration", "token", "package", "resolver", "target",
          "simulator", "archive", "signing", "profile", "linker", "header", "bridge", "plugin", "fixture", "snapshot",
          "keychain", "bundle", "asset", "locale", "network", "timeout", "retry", "queue", "worker", "socket")


def reply(n: int, seed: int = 0) -> str:
    """`n` lessons of different words, each citing the traces, as a model would send them."""
    rng = random.Random(seed)
    lessons = []
    for i in range(n):
        a, b, c, d = rng.sample(_WORDS, 4)
        lessons.append({"precondition": f"the {a} {b} step fails on run {i}", "action": f"reset the {c} {d} first",
                        "rationale": f"a stale {a} {c} survives a clean build", "scope": _CONTEXT,
                        "trace_ids": ["t1", "t2", "t3"]})
    return json.dumps(lessons)


def seconds(n: int) -> tuple[float, float, int]:
    """Wall and CPU seconds of one sleep whose model replies `n` lessons, and the candidates it proposed: on a
    loaded machine the CPU seconds grow with the work alone."""
    lam = Lamar(":memory:", seed=1)
    for i in range(5):
        lam.add(Experience(f"the web lint fails on rule {i}", f"run the fixer for rule {i}", scope=Scope(_CONTEXT)))
    traces = [Trace(f"t{i}", _CONTEXT, time=1000.0 + i, input="fix the build", attempted=["swift build"],
                    tool_errors=["error: module map is stale"], outcome="reverted") for i in range(1, 5)]
    model = ScriptedModel([reply(n)], model="scripted-v1")
    start, cpu = time.perf_counter(), time.process_time()
    report = lam.sleep(traces=traces, model=model)
    return time.perf_counter() - start, time.process_time() - cpu, len(report.of_kind("candidate"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lessons", type=int, nargs="+", default=[500, 1000, 1500])
    sizes = parser.parse_args().lessons
    print("Sleep checking one scripted reply of N lessons (4 traces, 5 stored lessons)")
    print("lessons  candidates  seconds  CPU seconds  CPU ratio to the first")
    first = None
    for n in sizes:
        took, cpu, candidates = seconds(n)
        first = first or cpu
        print(f"{n:>7}  {candidates:>10}  {took:>7.1f}  {cpu:>11.1f}  {cpu / first:>22.1f}", flush=True)


if __name__ == "__main__":
    main()
