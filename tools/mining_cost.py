"""What mining asks of a model for 2 000 traces at the defaults, batched as sleep batches them (no model is
called): calls, prompt tokens and the output tokens they may take, for short, medium and long traces,
`python tools/mining_cost.py [--traces N]` (docs/sleep.md, "What mining costs")."""

from __future__ import annotations

import argparse
import inspect
from collections.abc import Callable

from lamar import Trace

_CONTEXT = {"project": "shop", "language": "swift"}


def short(i: int) -> Trace:
    """A line asked, 3 actions, 1 tool error."""
    return Trace(f"run-{i:04d}", _CONTEXT, time=float(i), episode_id=f"ep-{i // 2:04d}",
                 input="the build broke after bumping swift-collections",
                 attempted=["swift build", "swift package resolve", "swift build"],
                 tool_errors=["error: module map file 'Collections.modulemap' is stale"], outcome="reverted")


def medium(i: int) -> Trace:
    """600 characters asked, 10 actions, 5 tool errors."""
    return Trace(f"run-{i:04d}", _CONTEXT, time=float(i), episode_id=f"ep-{i // 2:04d}",
                 input=("the build broke after bumping swift-collections; " * 13)[:600],
                 attempted=[f"swift build --target Target{j}" for j in range(10)],
                 tool_errors=[f"error: module map file 'Module{j}.modulemap' is stale" for j in range(5)],
                 outcome="reverted")


def long(i: int) -> Trace:
    """The question and the answer past their clips, and 10 actions and 10 tool errors past theirs."""
    return Trace(f"run-{i:04d}", _CONTEXT, time=float(i), episode_id=f"ep-{i // 2:04d}",
                 input="the build broke again " * 100, output="rebuilt the module map " * 100,
                 attempted=[f"swift build --target Target{j} " + "-Xswiftc -v " * 40 for j in range(10)],
                 tool_errors=[f"error: module map {j} is stale; " + "note: while building " * 40 for j in range(10)],
                 outcome="reverted")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--traces", type=int, default=2000, help="traces of each kind (default 2000)")
    args = parser.parse_args(argv)
    from lamar.safety import scrub
    from lamar.safety.secrets import REACH
    from lamar.sleep import run_sleep
    from lamar.sleep.mining_prompt import batch_traces

    defaults = {name: value.default for name, value in inspect.signature(run_sleep).parameters.items()}
    prompt_tokens, max_tokens = defaults["max_prompt_tokens"], defaults["max_tokens"]
    kinds: list[tuple[str, Callable[[int], Trace]]] = [("short", short), ("medium", medium), ("long", long)]
    print(f"Mining {args.traces} traces of each kind at the defaults (max_prompt_tokens={prompt_tokens}, "
          f"max_tokens={max_tokens}), two traces a session")
    print(f"{'traces':<8}{'model calls':>12}{'prompt tokens':>15}{'output tokens at most':>23}{'too large alone':>17}")
    for name, make in kinds:
        batches, alone, _ = batch_traces([make(i) for i in range(args.traces)], scrub, prompt_tokens,
                                         REACH)
        print(f"{name:<8}{len(batches):>12,}{sum(b.tokens for b in batches):>15,}"
              f"{len(batches) * max_tokens:>23,}{len(alone):>17,}".replace(",", " "))
    for name, make in kinds:
        print(f"   {name}: {make.__doc__}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
