"""`python -m lamar.gym`: run the memory gym and print its tables (standard library only)."""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable, Sequence
from typing import TextIO

from lamar.bench.arguments import command, processes, writable
from lamar.gym.config import GymConfig
from lamar.gym.family import TUNING_SEEDS
from lamar.gym.plot import plot_result
from lamar.gym.policies import POLICIES, VARIANT_POLICIES
from lamar.gym.report import render, what_it_shows
from lamar.gym.runner import run_gym

_DEFAULTS = GymConfig()


class ProgressBar:
    """Finished jobs on a stream (stderr): a bar redrawn in place on a terminal, else a line at each
    tenth and whenever `every` seconds have passed since the last line.

    A log file or a CI log keeps every character written, so redraws are for a terminal only; the
    engine's jobs run first and are the long ones, so a line per tenth alone leaves a log silent long
    enough to look hung.
    """

    def __init__(self, stream: TextIO, width: int = 30, every: float = 10.0,
                 clock: Callable[[], float] = time.perf_counter) -> None:
        self.stream = stream
        self.width = width
        self.every = every
        self._clock = clock
        self.started = clock()
        self._redraw = _is_terminal(stream)
        self._tenth: int | None = None
        self._written = (-1, self.started)  # the count and the time of the last line

    def __call__(self, done: int, total: int) -> None:
        now = self._clock()
        elapsed = now - self.started
        if not self._redraw:
            tenth = 10 * done // max(total, 1)
            due = done != self._written[0] and now - self._written[1] >= self.every
            if tenth != self._tenth or due:  # a new run of jobs starts again at 0
                self._tenth, self._written = tenth, (done, now)
                self.stream.write(f"{done}/{total} runs  {elapsed:.1f} s\n")
                self.stream.flush()
            return
        filled = self.width * done // max(total, 1)
        bar = "#" * filled + "-" * (self.width - filled)
        self.stream.write(f"\r[{bar}] {done}/{total} runs  {elapsed:5.1f} s")
        if done == total:
            self.stream.write("\n")
        self.stream.flush()


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


def _policies(text: str) -> tuple[str, ...]:
    from lamar.gym.peers import peer_class

    names = tuple(name.strip() for name in text.split(",") if name.strip())
    unknown = [name for name in names if name not in POLICIES + VARIANT_POLICIES and peer_class(name) is None]
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"choose from {', '.join(POLICIES)} (comma-separated); got {text!r}")
    return names


def _tuning(text: str) -> tuple[tuple[str, float], ...]:
    pairs: list[tuple[str, float]] = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, sep, value = part.partition("=")
        try:
            number = float(value)
        except ValueError:
            number = math.nan
        if not sep or math.isnan(number):
            raise argparse.ArgumentTypeError(f"expected NAME=NUMBER pairs (e.g. discount=0.995); got {part!r}")
        if any(name.strip() == known for known, _ in pairs):  # the last one won, silently
            raise argparse.ArgumentTypeError(f"{name.strip()} is given twice; give each knob once")
        pairs.append((name.strip(), int(number) if number.is_integer() and "." not in value else number))
    return tuple(pairs)


def _parser() -> argparse.ArgumentParser:
    d = _DEFAULTS
    parser = argparse.ArgumentParser(
        prog="python -m lamar.gym",
        description="The memory gym: five lesson-selection policies on the same seeded worlds, where one "
                    "helpful lesson silently turns harmful halfway through.",
    )
    parser.add_argument("--episodes", type=int, default=d.episodes,
                        help="episodes per run; the world flips at half (default %(default)s)")
    parser.add_argument("--seeds", type=int, default=d.seeds,
                        help="number of seeded worlds (default %(default)s)")
    parser.add_argument("--first-seed", type=int, default=d.first_seed,
                        help="first seed (default %(default)s)")
    parser.add_argument("--k", type=int, default=d.k,
                        help="lesson slots per episode, from 1 to --lessons minus 1 (default %(default)s)")
    parser.add_argument("--base", type=float, default=d.base,
                        help="success probability with no lesson (default %(default).2f)")
    parser.add_argument("--help-effect", type=float, default=d.help_effect,
                        help="success probability a helpful lesson adds (default %(default).2f)")
    parser.add_argument("--hurt-effect", type=float, default=d.hurt_effect,
                        help="success probability a harmful lesson removes (default %(default).2f)")
    parser.add_argument("--effect", type=float, default=None,
                        help="set both --help-effect and --hurt-effect to this size")
    parser.add_argument("--lessons", type=int, default=d.lessons,
                        help="lessons per task: one helpful, one harmful, the rest inert (default %(default)s)")
    parser.add_argument("--report-rate", type=float, default=d.report_rate,
                        help="chance that an episode is ever reported (default %(default)s)")
    parser.add_argument("--report-delay", type=int, default=d.report_delay,
                        help="reports arrive up to N episodes late, out of order (default %(default)s)")
    parser.add_argument("--context", action="store_true",
                        help="the context variant: episodes carry a language and one task-wide lesson helps "
                             "in Swift and hurts in Python")
    parser.add_argument("--variants", action="store_true",
                        help="run the table of variants (effects, lessons per task, missing and late reports, "
                             "context) instead of one world, and print one line per variant")
    parser.add_argument("--policies", type=_policies, default=d.policies,
                        help=f"comma-separated policies to run (default {','.join(POLICIES)})")
    parser.add_argument("--lamar", type=_tuning, default=(), metavar="NAME=VALUE,...",
                        help="tune lamar's engine for this run (fields of lamar.policy.Policy, e.g. "
                             "discount=0.995; with --family, a tuned lamar runs beside the defaults); "
                             "measure on seeds other than the reported ones")
    parser.add_argument("--peers", action="store_true",
                        help="also run the bandit libraries' policies, tuned on other seeds (Vowpal Wabbit, "
                             "river; needs the peers extra)")
    parser.add_argument("--family", type=int, metavar="N", default=None,
                        help="run N drawn worlds of the family instead (docs/gym.md, 'The family'): lamar, lamar with "
                             "its randomized evidence off, the second design, and with --peers the libraries")
    parser.add_argument("--tuning-seeds", action="store_true",
                        help="with --family: draw the worlds from the tuning seeds (never reported)")
    parser.add_argument("--frontier", action="store_true",
                        help="captured against helps and harms proven at 5 evidence budgets, today's design beside "
                             "the second one (on the gym's world, or on the family with --family)")
    parser.add_argument("--volume", action="store_true",
                        help="weeks until a +0.2 lesson is proven at 300 episodes a week (and a team's 3 000)")
    parser.add_argument("--workers", type=int, default=None,
                        help="processes running (policy, seed) jobs (default: one per CPU)")
    parser.add_argument("--json", metavar="FILE",
                        help="write every row to FILE: a JSON array of flat objects for pandas.read_json")
    parser.add_argument("--plot", metavar="FILE.png", help="draw success over time, the fossil's slot share "
                        "and lamar's lifts (needs the plot extra)")
    parser.add_argument("--goals", action="store_true",
                        help="also print the project's research goals and whether this run met each one "
                             "(PASS/MISS; the exit status stays 0: a goal missed is a finding, not a failure)")
    parser.add_argument("--quiet", action="store_true",
                        help="no progress (a bar on a terminal, else a line at each tenth and every 10 s)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the gym from the command line; returns the exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        help_effect = args.help_effect if args.effect is None else args.effect
        hurt_effect = args.hurt_effect if args.effect is None else args.effect
        policies = args.policies
        if args.peers:
            from lamar.gym.peers import PEERS

            policies = tuple(policies) + tuple(p for p in PEERS if p not in policies)
        config = GymConfig(
            episodes=args.episodes, seeds=args.seeds, first_seed=args.first_seed, k=args.k, base=args.base,
            help_effect=help_effect, hurt_effect=hurt_effect, policies=policies,
            workers=args.workers, lessons=args.lessons, report_rate=args.report_rate,
            report_delay=args.report_delay, context=args.context, tuning=args.lamar,
        )
    except (TypeError, ValueError) as exc:
        parser.error(str(exc))
    processes(parser, "--workers", args.workers)
    if args.family is not None and not 1 <= args.family <= TUNING_SEEDS:
        parser.error(f"--family is the number of worlds to draw, from 1 to {TUNING_SEEDS:_} (the reported worlds "
                     f"stop where the tuning worlds start); got {args.family:_}")
    if args.lamar and (args.volume or args.frontier):
        parser.error("--lamar tunes the gym's run and --family's; --frontier and --volume set the engine themselves")
    unused = _unused(args, vars(parser.parse_args([])))
    if unused:
        parser.error(unused)
    writable(parser, "--json", args.json)
    writable(parser, "--plot", args.plot)
    # Fail before the run, not after it or inside its workers, when an optional package is missing,
    # with the extra to install rather than a traceback.
    try:
        if args.plot:
            from lamar.gym.plot import require_matplotlib

            require_matplotlib()
        if args.peers:
            from lamar.gym.peers import require_peers

            require_peers()
    except ImportError as exc:
        parser.error(str(exc))
    progress = None if args.quiet else ProgressBar(sys.stderr)
    try:
        return _run(args, config, progress)
    except OSError as exc:
        if not args.json or exc.filename != args.json:
            raise
        # The rows could not be written (a full disk): one line, and the file that was there is whole.
        print(f"python -m lamar.gym: error: {exc.strerror}", file=sys.stderr)
        return 1


def _run(args: argparse.Namespace, config: GymConfig, progress: ProgressBar | None) -> int:
    """The chosen mode's run, its tables printed and its files written."""
    started = time.perf_counter()
    if args.volume or args.family is not None or args.frontier:
        print(_measure(args, config, progress))
        print(f"\nelapsed: {time.perf_counter() - started:.1f} s wall clock")
        return 0
    if args.variants:
        from lamar.gym.variants import VARIANTS, render_variants, run_variants

        started = time.perf_counter()
        results = run_variants(config, progress=progress)
        print(render_variants(results))
        print(f"\nelapsed: {time.perf_counter() - started:.1f} s wall clock, "
              f"{sum(r.cpu for r in results.values()):.1f} s CPU ({len(VARIANTS)} variants)")
        return 0
    result = run_gym(config, progress=progress)
    print(render(result, targets=args.goals))
    if not args.goals:
        print(what_it_shows(result))
    if args.json:
        result.to_json(args.json)
        print(f"\nrows: {len(result.rows)} written to {args.json}")
    if args.plot:
        plot_result(result, args.plot)
        print(f"plot: {args.plot}")
    runs = len(config.policies) * config.seeds
    print(f"\nelapsed: {result.elapsed:.1f} s wall clock, {result.cpu:.1f} s CPU ({runs} runs on "
          f"{result.workers} worker{'s' if result.workers != 1 else ''})")
    return 0


# The flags that describe the gym's own run: --volume runs a project of its own and reads none.
_WORLD_FLAGS = ("episodes", "seeds", "first_seed", "k", "base", "help_effect", "hurt_effect", "effect", "lessons",
                "report_rate", "report_delay", "context", "policies", "peers")


def _unused(args: argparse.Namespace, defaults: dict[str, object]) -> str | None:
    """What to say of a flag the chosen mode would ignore (its file never written), or None."""
    mode = ("--volume" if args.volume else "--family" if args.family is not None else
            "--frontier" if args.frontier else "--variants" if args.variants else None)
    if mode == "--volume":
        changed = [name for name in _WORLD_FLAGS if getattr(args, name) != defaults[name]]
        if changed:
            flag = "--" + changed[0].replace("_", "-")
            return (f"{flag} is not used by --volume, which runs its own project of 30 lessons over 6 tasks "
                    "(docs/gym.md, \"What a project can expect: volume\"); leave it out")
    ignored = [("--json", bool(args.json) and mode in ("--volume", "--variants")),
               ("--plot", bool(args.plot) and mode is not None), ("--goals", args.goals and mode is not None),
               ("--variants", args.variants and mode != "--variants"),
               ("--tuning-seeds", args.tuning_seeds and args.family is None)]
    flags = [flag for flag, on in ignored if on]
    if not flags:
        return None
    if flags[0] == "--tuning-seeds":
        return "--tuning-seeds draws the worlds of --family N; give --family too"
    return f"{flags[0]} is not used by {mode} (docs/gym.md names what each mode prints and writes); leave it out"


def _measure(args: argparse.Namespace, config: GymConfig, progress: ProgressBar | None) -> str:
    """The measuring modes: --volume, --family, --frontier."""
    from lamar.gym import modes

    if args.volume:
        from lamar.gym.volume import volume

        return volume(workers=args.workers)
    if args.family is not None:
        run = modes.family_frontier if args.frontier else modes.family_mode
        kwargs = {} if args.frontier else {"peers": args.peers, "lamar": args.lamar}
        return run(args.family, tuning=args.tuning_seeds, workers=args.workers, progress=progress,
                   json_path=args.json, **kwargs)
    return modes.gym_frontier(config, progress=progress, json_path=args.json)


if __name__ == "__main__":
    sys.exit(command("python -m lamar.gym", main))
