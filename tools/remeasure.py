"""Every command whose output or figures the docs quote, and a runner that takes them all again in turn.

`python tools/remeasure.py --list` shows them, cheapest first; `--out DIR [--only PATTERN]` runs them.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Measurement:
    """One command as a docs page shows it, the section that shows it, and the others that quote it.

    `minutes` is about how long it runs on a shared 2-core machine: it only sets the order.
    """

    doc: str
    heading: str
    command: str
    minutes: float
    also: tuple[tuple[str, str], ...] = ()


_GYM, _DECISIONS, _WHATIF = "docs/gym.md", "docs/decisions.md", "docs/whatif.md"
_LIMITS, _CONTEXT, _SPEED = "docs/limitations.md", "docs/context.md", "docs/speed.md"
_GOALS = (_GYM, "The goals at a glance")
_DETECTOR, _FRONTIER = "The fall detector's level and arming", "The frontier: what each point of reward buys"
_EVERY_FALL, _ANATOMY = "A detector for every fall size", "The anatomy of a drop"
_WINDOW, _FADING = "A test inside the watch window", "A fading mean that lowers the draw"
_FADE = "python tools/fading_draw.py 20 --tuning-seeds"
_MARGIN = "A level scaled by the slot's margin"
_AUDIT = "python -m lamar.audit --runs 100 --episodes 4000 --jobs 2 --quiet"
_MCP = "python -m lamar_mcp.bench"
_PG, _FLEET = "docs/postgres.md", "python -m lamar.bench.fleet"

# Kept by hand: tests/test_remeasure.py checks that each command stands in its section, and that every
# command the docs show with its output is here or in NOT_RUN, so the list cannot drift.
MEASUREMENTS: tuple[Measurement, ...] = (
    Measurement(_DECISIONS, "The figures", "python -m lamar.audit --physics", 0.2, (
        (_DECISIONS, "The evidence coin, and where it is spent"),
        (_DECISIONS, "A moving world: the fall detector closes the segment"),
        (_CONTEXT, "Evidence per slice"), (_LIMITS, "Verdicts"), _GOALS)),
    Measurement("README.md", "Does it work? The memory gym", "python -m lamar.gym", 0.5),
    Measurement("docs/rules.md", "Import", "python tools/rule_lines.py", 0.2),
    Measurement("docs/rules.md", "Import", "python tools/rule_lines.py --held-out", 0.2),
    Measurement(_GYM, _FRONTIER, "python tools/proof_ceiling.py", 1,
                ((_LIMITS, "The gym: what proof costs"),)),
    Measurement(_GYM, _FRONTIER, "python tools/proof_ceiling.py --price-pre 3 --price-post 3", 1),
    Measurement("docs/mcp.md", "Figures", f"{_MCP} --propose-runs 1 --only-propose", 1),
    Measurement("docs/mcp.md", "Figures", f"{_MCP} --recall-sizes 100,1000,10000 --only-recall", 3),
    Measurement("docs/mcp.md", "Figures", f"{_MCP} --lessons-sizes 1000,10000 --lessons-calls 3 --only-lessons", 10),
    Measurement(_GYM, "Soft change points in the selection",
                "python -m lamar.bench --sizes 10 --backends memory --eligible 6 --reps 3000", 1),
    Measurement(_GYM, "Soft change points in the selection",
                "python tools/changepoint_sweep.py --bench 500", 2),
    Measurement(_CONTEXT, "Cost",
                "python -m lamar.bench --sizes 10,1000 --eligible 6 --backends memory --reps 5000", 2),
    Measurement(_GYM, "The goals at a glance",
                "python -m lamar.bench --sizes 10,10000 --backends memory --eligible 6 --reps 3000", 3),
    Measurement("docs/mcp.md", "Figures", _MCP, 3),
    Measurement("docs/mcp.md", "Figures",
                f"{_MCP} --starts 5 --calls 200 --http-clients 8 --http-episodes 50", 3),
    Measurement(_GYM, "What a project can expect: volume", "python -m lamar.gym --volume --workers 2", 3,
                ((_LIMITS, "Verdicts"),)),
    Measurement(_GYM, "The context variant", "python -m lamar.gym --context --workers 2", 3,
                ((_CONTEXT, "In the gym"),)),
    Measurement(_GYM, "The default run, beside the peers",
                "python -m lamar.gym --peers --goals --workers 2 --json gym.json", 4),
    Measurement("docs/claude-code.md", "Speed",
                "python -m lamar_claude_code.bench --episodes 100000 --runs 200", 5),
    Measurement(_WHATIF, "What the reach rule costs the interval",
                "python tools/whatif_coverage.py --coins 0.3 0.1 --seeds 200 --episodes 600", 5,
                ((_LIMITS, "What if?"), (_DECISIONS, "The evidence coin, and where it is spent"))),
    Measurement(_WHATIF, "What the reach rule costs the interval",
                "python tools/whatif_coverage.py --coins 0.04 --seeds 100 --episodes 3000", 5,
                ((_LIMITS, "What if?"), (_DECISIONS, "The evidence coin, and where it is spent"))),
    Measurement(_WHATIF, "Checked on the gym: coverage",
                "python tools/whatif_anatomy.py --seeds 20 --policy none", 5),
    Measurement(_GYM, "A level that grows with the lesson's age",
                "python tools/detector_sweep.py 40 --tuning-seeds --settings 16.5/15//8@500,16.5/15//8@1500,"
                "16.5/15//10@300,16.5/15//5@500,16.5/50//8@500,16.5/15//6@1000", 6),
    Measurement(_GYM, "The forgetting frontier", "python -m lamar.gym.forgetting 40 --tuning-seeds "
                "--discounts 1,0.9995,0.999,0.998,0.995 --workers 2", 6),
    Measurement(_GYM, "The forgetting frontier", "python -m lamar.gym.forgetting 60 --workers 2", 7,
                (_GOALS,)),
    Measurement(_GYM, "Restarting on less of the excursion", "python tools/detector_sweep.py 40 "
                "--tuning-seeds --settings 16.5/50/10,16.5/50/5,8/50,8/50/10,8/50/5,5/15,5/15/10,5/15/5", 7),
    Measurement("docs/guarantees.md", "No secret leaves through memory", "python tools/third_corpus.py", 0.2),
    Measurement("docs/guarantees.md", "No secret leaves through memory", "python tools/sixth_corpus.py", 0.2),
    Measurement("docs/guarantees.md", "No secret leaves through memory", "python tools/seventh_corpus.py", 0.2),
    Measurement("docs/sleep.md", "What counts as a contradiction",
                "python tools/contradiction_pairs.py --before dd4e6c7d", 0.2),
    Measurement("docs/sleep.md", "What mining costs", "python tools/mining_cost.py", 0.5),
    Measurement("docs/sleep.md", "What mining costs", "python tools/mining_reply_cost.py", 0.5),
    Measurement("docs/sleep.md", "How often a dropped lesson truly helps", "python tools/dropped_truth.py 60", 6),
    Measurement("docs/sleep.md", "How often a dropped lesson truly helps",
                "python tools/idle_draw.py 20 --tuning-seeds --settings 100,400 --workers 2", 12),
    Measurement("docs/sleep.md", "What counts as a near-duplicate", "python tools/lesson_pairs.py --before 228f750d",
                0.2),
    Measurement("docs/guarantees.md", "No secret leaves through memory", "python tools/fourth_corpus.py", 0.2),
    Measurement("docs/guarantees.md", "Bounded growth", "python -m lamar.bench.growth", 8,
                (("docs/guarantees.md", "Figures"), (_SPEED, "A million episodes"))),
    Measurement("docs/guarantees.md", "Bounded growth", "python -m lamar.bench.growth --episodes 0 "
                "--plain-episodes 0 --plain-sqlite-episodes 0 --sqlite-episodes 1000000", 8),
    Measurement(_GYM, _DETECTOR, "python tools/detector_sweep.py 40 --tuning-seeds --gym-first-seed 100 "
                "--settings 12/50,8/50,24/50,16/15,12/15,8/15,6/15,5/15,4/15", 8),
    Measurement(_GYM, _DETECTOR, "python tools/detector_sweep.py 60 --gym-first-seed 0 "
                "--settings 12/50,8/50,24/50,16/15,8/15,5/15,4/15", 10, (_GOALS,)),
    Measurement(_GYM, "The family of drawn worlds", "python -m lamar.gym --family 60 --peers --workers 2",
                10, ((_LIMITS, "Verdicts"),)),
    Measurement(_GYM, _FRONTIER, "python -m lamar.gym --frontier --workers 2", 10),
    Measurement(_GYM, "Peers", "python -m lamar.gym.peer_tuning 2", 10),
    Measurement(_WHATIF, "Checked on the gym: coverage", "python -m lamar.whatif.check", 10,
                ((_LIMITS, "What if?"), (_DECISIONS, "The evidence coin, and where it is spent"))),
    Measurement(_SPEED, "Recall and report as the store grows", "python -m lamar.bench", 11),
    Measurement(_DECISIONS, "The figures", f"{_AUDIT} --json rows.jsonl", 15,
                ((_LIMITS, "Honest limitations"),)),
    Measurement(_DECISIONS, "The figures", f"{_AUDIT} --lamar holdout=0.3 --scenario flip "
                "--scenario fall_020_m005 --scenario stop_020 --scenario stop_010 --scenario stop_020_drift "
                "--scenario drift_falling --scenario square_250", 15, (_GOALS,)),
    Measurement(_GYM, _FRONTIER, "python -m lamar.gym --family 40 --frontier --workers 2", 15),
    Measurement(_GYM, "Harder worlds",
                "python -m lamar.gym --variants --policies none,qvalue,lamar,oracle --workers 2", 15),
    Measurement(_DECISIONS, "The figures", "python -m lamar.audit --null 100000 --jobs 2", 20, (_GOALS,)),
    Measurement(_GYM, _DETECTOR, "python tools/detector_sweep.py 40 --tuning-seeds --gym-first-seed 1000 "
                "--gym-seeds 200 --settings 14/50,12/50,14/50/10,12/50/10,12/50/20", 20),
    Measurement(_GYM, "Peers", "python -m lamar.gym.peer_tuning --family 16", 20),
    Measurement(_DECISIONS, "The defaults, and what they trade",
                "python -m lamar.gym --family 96 --tuning-seeds --lamar explore=0.65", 25),
    Measurement(_WHATIF, "The reach rule's trade",
                "python tools/reach_sweep.py --gym-first-seed 0 --worlds 60", 30,
                ((_DECISIONS, "The evidence coin, and where it is spent"),)),
    Measurement(_GYM, "Soft change points in the selection", "python tools/changepoint_sweep.py 40 "
                "--tuning-seeds --settings 200,500,2000,200-,500-,2000-", 30),
    Measurement(_GYM, _EVERY_FALL, "python tools/glr_sweep.py --null --settings 10,8,c13.5", 10),
    Measurement(_GYM, _EVERY_FALL, "python tools/glr_sweep.py 20 --tuning-seeds --settings 10,8 --workers 1", 20),
    Measurement(_GYM, _EVERY_FALL, "python tools/glr_sweep.py 60 --gym-first-seed 0 --settings 10 --workers 1", 40,
                (_GOALS,)),
    Measurement(_GYM, _EVERY_FALL, "python tools/glr_sweep.py --bench 10", 1),
    Measurement(_GYM, _ANATOMY, "python tools/drop_anatomy.py 80 --tuning-seeds", 8),
    Measurement(_GYM, _ANATOMY, "python tools/drop_anatomy.py 80 --tuning-seeds --spread 0.05", 8),
    Measurement(_GYM, _ANATOMY, "python tools/drop_anatomy.py 40 --tuning-seeds --spreads 0.05,0", 16),
    Measurement(_GYM, _ANATOMY, "python tools/drop_anatomy.py 60 --gym-first-seed 0 --spreads 0.05", 20, (_GOALS,)),
    Measurement(_GYM, _WINDOW, "python tools/window_test.py --null --settings fire,arm,arm@0.0021,arm@0.02", 6),
    Measurement(_GYM, _WINDOW, "python tools/window_test.py 40 --tuning-seeds --settings fire,arm", 25),
    Measurement(_GYM, _WINDOW, "python tools/window_test.py 80 --tuning-seeds --anatomy arm", 25),
    Measurement(_GYM, _WINDOW, "python tools/window_test.py 80 --tuning-seeds --anatomy arm --spread 0.05", 25),
    Measurement(_GYM, _FADING, f"{_FADE} --settings m10-z2,m10-z1,m20-z2,m10-z2-n0.5 --workers 2", 16),
    Measurement(_GYM, _FADING, f"{_FADE} --settings m10-z2-idle,m10-z1-idle --workers 2", 12),
    Measurement(_GYM, _FADING, "python tools/fading_draw.py 40 --tuning-seeds --settings m10-z2,m10-z1 --workers 2", 17,
                (_GOALS,)),
    Measurement(_GYM, _FADING, "python tools/fading_draw.py 40 --tuning-seeds --spread 0.05 "
                "--settings engine,m10-z2,m10-z1-idle --workers 2", 23),
    Measurement(_GYM, _FADING, "python tools/fading_draw.py 60 --gym-first-seed 0 --spread 0.05 --settings engine "
                "--workers 2", 23),
    Measurement(_GYM, _MARGIN, "python tools/slot_margin.py --gym-only --settings 8@0.3,8@0.15,12@0.15,8@0.08 "
                "--workers 2", 25),
    Measurement(_GYM, _MARGIN, "python tools/slot_margin.py 20 --tuning-seeds --settings 8@0.15~1,8@0.15~2 "
                "--workers 2", 40),
    Measurement(_PG, "What each call costs in the fold mode",
                f'{_FLEET} --clients "" --workloads "" --compression', 2),
    Measurement(_PG, "Outgrowing one server", "python -m lamar.bench.placement", 1),
    Measurement(_PG, "The floor: what an episode's messages cost (machine B)",
                "python -m lamar.bench.floor --clients 1,16,64 --messages 3,5", 2),
    Measurement(_PG, "The fleet benchmark (machine A)",
                f"{_FLEET} --seconds 5 --workloads spread,shared --modes log,fold", 4),
    Measurement(_PG, "The fleet benchmark (machine A)",
                f"{_FLEET} --seconds 10 --rate 1 --workloads spread,shared --modes log,fold", 5),
    Measurement(_PG, "Paced runs with intervals (machine C)",
                f"{_FLEET} --seconds 10 --rate 1 --workloads spread,shared --modes fold", 6),
    Measurement(_PG, "The fleet benchmark (machine A)", f'{_FLEET} --clients "" --workloads "" --big 1000000', 20),
    Measurement(_PG, "A checkpoint beside its writers", "python tools/pg_checkpoint_hold.py --episodes 16000", 3),
    Measurement("docs/guarantees.md", "Figures", "python tools/kill_loop.py --kills 200", 45),
    Measurement(_SPEED, "Measurement", "env -u PYTHONDONTWRITEBYTECODE python -m lamar.bench --cold "
                "--runs 15 --hook-runs 30 --skip warm,quickstart", 40),
)

# Commands the docs show with their output that no list can take again, each with why.
NOT_RUN: dict[str, str] = {
    "python tools/copy_speed.py --episodes 16000 --runs 5 OLD NEW": "compares two checkouts a person picks",
    "python -m lamar.gym --volume": "names the project tools/reach_sweep.py reads; its own run is listed",
    "python tools/team_store.py --lessons 5000 --episodes 50000 --against OLD_CHECKOUT":
        "compares with an older checkout a person picks",
    "python tools/ui_pages.py --runs 1 --against OLD_CHECKOUT":
        "compares with an older checkout a person picks",
    "python tools/langgraph_turn.py --postgres URL --against OLD_CHECKOUT":
        "compares with an older checkout a person picks",
    "python tools/langgraph_store_trips.py --postgres URL --against OLD_CHECKOUT":
        "compares with an older checkout a person picks",
    "python tools/context_scrub_speed.py --against OLD_CHECKOUT": "compares with an older checkout a person picks",
    "python tools/reader_fold.py --sqlite --episodes 1000 4000 16000":
        "its table sets the code before a fix (an older checkout, on PYTHONPATH) beside the code after",
}


def ordered(measurements: Sequence[Measurement] = MEASUREMENTS) -> list[Measurement]:
    """The measurements cheapest first (a stable sort, so equal estimates keep the list's order)."""
    return sorted(measurements, key=lambda m: m.minutes)


def slug(command: str) -> str:
    """A file name's part for a command: its words without `python -m`, `python tools/` or `env -u X`."""
    words = re.sub(r"^(env -u \S+ )*python (-m |tools/)?", "", command)
    return re.sub(r"[^a-z0-9.]+", "-", words.lower()).strip("-.")[:60].rstrip("-.")


def argv_and_env(command: str) -> tuple[list[str], dict[str, str]]:
    """The command's argv with this interpreter for `python`, and its environment.

    PYTHONDONTWRITEBYTECODE is always dropped: the benchmarks time a normal install, which writes
    bytecode caches. The checkout comes first on PYTHONPATH, so `lamar` is this checkout's.
    """
    argv = shlex.split(command)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    while argv[:2] == ["env", "-u"]:
        env.pop(argv[2], None)
        argv = argv[3:]
    if argv[0] == "python":
        argv[0] = sys.executable
        if len(argv) > 1 and argv[1].startswith("tools/"):
            argv[1] = str(ROOT / argv[1])
    paths = [str(ROOT), str(ROOT / "integrations"), *filter(None, [env.get("PYTHONPATH")])]
    env["PYTHONPATH"] = os.pathsep.join(paths)
    return argv, env


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _header(m: Measurement, started: str, ended: str, code: str) -> str:
    places = "; ".join(f'{doc}, "{heading}"' for doc, heading in ((m.doc, m.heading), *m.also))
    return (f"command: {m.command}\nquoted in: {places}\nstarted: {started}\nended: {ended}\n"
            f"exit code: {code}\n\n")


def run_one(m: Measurement, path: Path) -> int:
    """Run one measurement in `path`'s folder, its output (stdout and stderr) to `path` under a header.

    The output streams to a `.part` file while it runs, so a long run can be watched; the header
    needs the end, so the file is written whole when the command ends. On Ctrl+C the command is
    stopped and what it wrote kept as NAME.interrupted.txt, and KeyboardInterrupt goes on up.
    """
    argv, env = argv_and_env(m.command)
    part = path.with_suffix(".part")
    started = _now()
    with part.open("w", encoding="utf-8") as out:
        try:
            process = subprocess.Popen(argv, cwd=path.parent, env=env, stdout=out, stderr=subprocess.STDOUT)
        except OSError as exc:  # a program that is not there fails this one, not the run
            out.write(f"could not start: {exc}\n")
            out.close()
            _finish(part, path, _header(m, started, _now(), "127"))
            return 127
        try:
            code = process.wait()
        except KeyboardInterrupt:
            process.terminate()
            process.wait()
            _finish(part, path.with_suffix(".interrupted.txt"), _header(m, started, _now(), "interrupted"))
            raise
    _finish(part, path, _header(m, started, _now(), str(code)))
    return code


def _finish(part: Path, path: Path, header: str) -> None:
    path.write_text(header + part.read_text(encoding="utf-8", errors="replace"), encoding="utf-8")
    part.unlink()


def run(measurements: Sequence[Measurement], out: Path, only: str | None, echo: TextIO) -> int:
    """Run the measurements matching `only` one after another into `out`; 1 if any failed, 130 on Ctrl+C.

    Files are numbered by place in the whole list, so a run with `--only` writes the same names.
    """
    out.mkdir(parents=True, exist_ok=True)
    chosen = _chosen(measurements, only)
    if not chosen:
        print(f"no measurement matches {only!r} (see --list)", file=echo)
        return 2
    failed = finished = 0
    try:
        for n, m in chosen:
            path = out / f"{n:02d}-{slug(m.command)}.txt"
            print(f"{n:02d} running  {m.command}", file=echo, flush=True)
            began = time.monotonic()
            code = run_one(m, path)
            finished += 1
            failed += code != 0
            print(f"{n:02d} {time.monotonic() - began:8.1f} s  exit {code}  {path}", file=echo, flush=True)
    except KeyboardInterrupt:
        print(f"stopped by Ctrl+C: {finished} of {len(chosen)} finished, kept in {out}", file=echo)
        return 130
    print(f"{finished} ran, {failed} failed; outputs in {out}", file=echo)
    return 1 if failed else 0


def _chosen(measurements: Sequence[Measurement], only: str | None) -> list[tuple[int, Measurement]]:
    """The measurements whose command, or a docs file or heading that quotes it, match `only`, each with
    its number in the whole list."""
    def text(m: Measurement) -> str:
        return " ".join([m.command, *(f"{doc} {heading}" for doc, heading in ((m.doc, m.heading), *m.also))])

    return [(n, m) for n, m in enumerate(ordered(measurements), 1)
            if only is None or re.search(only, text(m), re.IGNORECASE)]


def listing(measurements: Sequence[Measurement] = MEASUREMENTS, only: str | None = None) -> str:
    """One line per measurement, cheapest first: number, estimate, docs file, heading, command."""
    return "".join(f'{n:02d}  ~{m.minutes:g} min  {m.doc}  "{m.heading}"  {m.command}\n'
                   for n, m in _chosen(measurements, only))


def _pattern(text: str) -> str:
    try:
        re.compile(text)
    except re.error as exc:
        raise argparse.ArgumentTypeError(f"not a regular expression: {exc}") from exc
    return text


def main(argv: Sequence[str] | None = None, measurements: Sequence[Measurement] = MEASUREMENTS) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--list", action="store_true", help="print the commands, cheapest first, and stop")
    group.add_argument("--out", type=Path, help="the folder for the outputs, NN-<slug>.txt each")
    parser.add_argument("--only", type=_pattern,
                        help="only those whose command, or a docs file or heading quoting it, match this regex")
    args = parser.parse_args(argv)
    if args.list:
        sys.stdout.write(listing(measurements, args.only))
        return 0
    return run(measurements, args.out.resolve(), args.only, sys.stdout)


if __name__ == "__main__":
    sys.exit(main())
