"""`python -m lamar.audit`: run the verdict audit and print JSON lines and a table.

    python -m lamar.audit --runs 200 --episodes 4000 --jobs 1 --json rows.jsonl
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing
import sys
import time
from typing import Any

from lamar import LamarError
from lamar.arguments import policy
from lamar.audit.physics import render as render_physics
from lamar.audit.runner import run_one
from lamar.audit.scenarios import SCENARIOS
from lamar.audit.summary import summarize, table
from lamar.bench.arguments import command, processes, quiet_worker
from lamar.gym.__main__ import _tuning


def _job(args: tuple[str, int, int, dict[str, Any]]) -> dict[str, Any]:
    scenario, seed, episodes, tuning = args
    return run_one(scenario, seed, episodes, **tuning)


_MAX_RUNS = 100_000
_MAX_NULL = 1_000_000
_MAX_EPISODES = 1_000_000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lamar.audit", description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200, help="runs (seeds) per scenario")
    parser.add_argument("--episodes", type=int, default=4000, help="episodes per run (changes happen at half)")
    parser.add_argument("--scenario", action="append", choices=sorted(SCENARIOS),
                        help="run only these scenarios (repeatable); default all")
    parser.add_argument("--seed", type=int, default=0, help="first seed")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes")
    parser.add_argument("--json", dest="json_out", help="also append each run's row to this JSON-lines file")
    parser.add_argument("--lamar", type=_tuning, default=(), metavar="NAME=VALUE,...",
                        help="the engine's tuning for every run (fields of lamar.policy.Policy, e.g. holdout=0.3)")
    parser.add_argument("--quiet", action="store_true", help="print only the table")
    mode = parser.add_mutually_exclusive_group()  # each prints its own table and exits
    mode.add_argument("--physics", action="store_true", help="print the physical limits and exit")
    mode.add_argument("--summarize", metavar="ROWS", help="print the table of a JSON-lines file of rows and exit")
    mode.add_argument("--null", type=int, metavar="N", help="the bound's null calibration: N replicates of an inert "
                      "lesson at the engine's per-lesson level (and at 0.05), then exit")
    args = parser.parse_args(argv)
    if min(args.runs, args.jobs) < 1 or args.episodes < 100 or args.seed < 0:
        parser.error("--runs and --jobs are at least 1, --episodes at least 100 (the change is at half) "
                     "and --seed at least 0")
    # The list of runs is built whole before the first: a huge count would fill the memory instead.
    if args.runs > _MAX_RUNS:
        parser.error(f"--runs is at most {_MAX_RUNS:_} per scenario; got {args.runs:_}")
    processes(parser, "--jobs", args.jobs)
    if args.episodes > _MAX_EPISODES:  # one run went on for ever, printing nothing
        parser.error(f"--episodes is from 100 to {_MAX_EPISODES:_} per run; got {args.episodes:_}: give fewer")
    if args.scenario and len(set(args.scenario)) < len(args.scenario):  # ran, and counted, its runs twice
        twice = next(name for i, name in enumerate(args.scenario) if name in args.scenario[:i])
        parser.error(f"--scenario {twice} is given twice; give each scenario once")
    unused = _unused(args, vars(parser.parse_args([])))
    if unused:
        parser.error(unused)
    if args.null is not None and not 2 <= args.null <= _MAX_NULL:
        parser.error(f"--null is from 2 to {_MAX_NULL:_}, the replicates being split over the coins 0.04 and 0.15; "
                     f"got {args.null:_}")
    try:
        policy(dict(args.lamar))  # a misspelt knob is named now, not as a traceback from the first run
    except LamarError as exc:
        parser.error(str(exc))
    if args.physics:
        print(render_physics())
        return 0
    if args.null is not None:
        from lamar.audit.null import calibrate

        started = time.perf_counter()
        print(calibrate(args.null, args.jobs))
        print(f"\n{time.perf_counter() - started:.0f} s")
        return 0
    if args.summarize:
        try:
            print(table(summarize(_rows(args.summarize))))
        except LamarError as exc:
            parser.error(str(exc))
        return 0
    if args.json_out is not None and not args.json_out.strip():
        parser.error("--json names no file (an empty name); name the file to append to, or leave --json out")
    names = args.scenario or list(SCENARIOS)
    work = [(name, seed, args.episodes, dict(args.lamar)) for name in names
            for seed in range(args.seed, args.seed + args.runs)]
    started = time.perf_counter()
    rows: list[dict[str, Any]] = []
    try:
        out = open(args.json_out, "a", encoding="utf-8") if args.json_out else None  # noqa: SIM115
    except OSError as exc:
        parser.error(f"--json {args.json_out}: cannot append to it ({exc.strerror}); "
                     "name a file in a folder that exists")
    try:
        if min(args.jobs, len(work)) > 1:  # never more processes than runs: each one costs a start-up
            with multiprocessing.Pool(min(args.jobs, len(work)), initializer=quiet_worker) as pool:
                results = pool.imap(_job, work, chunksize=1)
                for row in results:
                    rows.append(_emit(row, out, args.quiet))
        else:
            for item in work:
                rows.append(_emit(_job(item), out, args.quiet))
    except _NotAppended as exc:
        # Caught here, not around the whole run, so an OSError of the run's own keeps its traceback.
        print(f"python -m lamar.audit: error: --json {args.json_out}: cannot append a run's row ({exc}); the rows "
              "of the runs before it are there: make room or name a file elsewhere, and run again", file=sys.stderr)
        return 1
    finally:
        if out is not None:
            with contextlib.suppress(OSError):  # every row was flushed and checked; a failed one is said above
                out.close()
    summaries = summarize(rows)
    for s in summaries:
        if not args.quiet:
            print(json.dumps({"summary": s}), flush=True)
    print(f"\n{len(rows)} runs of {args.episodes} episodes, seeds {args.seed}..{args.seed + args.runs - 1}, "
          f"{time.perf_counter() - started:.0f} s")
    print(table(summaries))
    return 0


def _unused(args: argparse.Namespace, defaults: dict[str, Any]) -> str | None:
    """What to say of a flag that --physics, --summarize or --null would ignore (a --json file never
    written, a tuning never applied), or None."""
    mode = ("--physics" if args.physics else "--summarize" if args.summarize
            else "--null" if args.null is not None else None)
    if mode is None:
        return None
    read = ("jobs",) if mode == "--null" else ()
    for name in ("runs", "episodes", "scenario", "seed", "jobs", "json_out", "lamar"):
        if name not in read and getattr(args, name) != defaults[name]:
            flag = "--json" if name == "json_out" else "--" + name
            return f"{flag} is not used by {mode}, which prints its own table and exits; leave it out"
    return None


_ROW_KEYS = ("scenario", "episodes", "wrong_helps", "wrong_harms", "success", "holdout_cost")


def _rows(path: str) -> list[dict[str, Any]]:
    """The rows of a JSON-lines file that --json wrote.

    Raises:
        LamarError: the file cannot be read, or a line is not a run's row, or it holds none.
    """
    try:
        with open(path, encoding="utf-8") as rows_file:
            lines = rows_file.readlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise LamarError(f"--summarize {path}: cannot read it ({exc}); name the file that --json wrote") from None
    rows = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            row = None
        if not isinstance(row, dict) or any(key not in row for key in _ROW_KEYS):
            raise LamarError(f"--summarize {path}: line {number} is not a run's row (one JSON object with "
                             f"{', '.join(_ROW_KEYS)}); name the file that --json wrote")
        rows.append(row)
    if not rows:
        raise LamarError(f"--summarize {path}: it holds no row; name the file that --json wrote")
    return rows


class _NotAppended(Exception):
    """The --json file did not take a row (a full disk); its message is the cause."""


def _emit(row: dict[str, Any], out: Any, quiet: bool) -> dict[str, Any]:
    line = json.dumps(row)
    if out is not None:
        try:
            out.write(line + "\n")
            out.flush()
        except OSError as exc:
            raise _NotAppended(exc.strerror or str(exc)) from exc
    if not quiet:
        print(line, flush=True)
    return row


if __name__ == "__main__":
    sys.exit(command("python -m lamar.audit", main))
