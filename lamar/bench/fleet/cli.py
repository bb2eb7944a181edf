"""Fleet benchmark: `python -m lamar.bench.fleet` prints recall+report throughput, latency and CPU
per episode for 1 to 64 clients sharing one PostgreSQL namespace; its options and its printout."""

from __future__ import annotations

import argparse
import math
import statistics
from typing import Any

from lamar.bench.arguments import counts, names, positive, save_rows, writable
from lamar.bench.fleet.big import measure_big
from lamar.bench.fleet.clients import (
    CLIENTS,
    DEFAULT_MODES,
    DEFAULT_URL,
    MAX_PROCESSES,
    MODES,
    WORKLOADS,
    measure,
    row_seconds,
    run_segment,
)
from lamar.bench.fleet.figures import HEADER, describe_machine, flatness, mode_ratios, row_line, summarize
from lamar.bench.fleet.one_client import measure_compression, measure_grown, measure_lessons


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lamar.bench.fleet", description=__doc__.splitlines()[0])
    parser.add_argument("--clients", default=",".join(map(str, CLIENTS)),
                        help="clients, comma separated ('' for none: only --big)")
    parser.add_argument("--modes", default=",".join(DEFAULT_MODES),
                        help="log (lamar_fold=off), fold (lamar_fold=on), fold-lock (the fold mode, every "
                             "write locking its rows first: how it wrote before its writes were optimistic)")
    parser.add_argument("--workloads", default=",".join(WORKLOADS),
                        help="shared (one context, the same 10 lessons for all), spread (16 projects)")
    parser.add_argument("--seconds", type=float, default=5.0, help="measured run time per configuration")
    parser.add_argument("--lessons", type=int, default=20, help="lessons in the store, half of them eligible")
    parser.add_argument("--postgres", default=DEFAULT_URL, help="server URL (default: $LAMAR_POSTGRES or local)")
    parser.add_argument("--big", type=int, default=0, metavar="EPISODES",
                        help="also time opening a namespace of this many episodes and its first recall")
    parser.add_argument("--control", action="store_true",
                        help="also run 1 client beside 15 busy-looping processes (contention without work)")
    parser.add_argument("--rate", type=float, default=0.0, metavar="EPISODES_PER_S",
                        help="pace each client at this many episodes per second (default 0: as fast as it "
                             "can); below the machine's limit, CPU per episode shows the work, not the queue")
    parser.add_argument("--turn", type=float, default=0.0, metavar="SECONDS",
                        help="each report this long after its recall (default 0: at once), as an agent's turn "
                             "and its user's answer take; other clients' reports move the rows meanwhile")
    parser.add_argument("--rounds", type=int, default=3, metavar="R",
                        help="paced: run the rows in R rounds, each row a part of its time in each (default 3), "
                             "so that a slow spell of the machine falls on every row rather than one")
    parser.add_argument("--min-episodes", type=int, default=60, metavar="N",
                        help="paced: run each row long enough for about N episodes in all (default 60), so "
                             "that even one client's CPU per episode has a usable 95%% interval")
    parser.add_argument("--lesson-counts", default="", metavar="N,N,...",
                        help="also time one client's recall+report in namespaces of these many lessons "
                             "(2 eligible per recall), in each mode")
    parser.add_argument("--grown", type=int, default=0, metavar="ROWS",
                        help="also time one client before and after its tables grow by this many rows of "
                             "another namespace (its statements planned while they were empty)")
    parser.add_argument("--compression", action="store_true",
                        help="also compare one client's CPU per episode with lesson rows of about 2 kB "
                             "compressed (PostgreSQL's default) and stored as they are")
    parser.add_argument("--json", dest="json_out", help="also write the rows to this file")
    args = parser.parse_args(argv)
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    if set(modes) - set(MODES):
        parser.error(f"unknown mode(s) {sorted(set(modes) - set(MODES))}; choose from {', '.join(MODES)}")
    workloads = names(parser, "--workloads", args.workloads, WORKLOADS)
    client_counts = counts(parser, "--clients", args.clients, empty=True)
    lesson_counts = counts(parser, "--lesson-counts", args.lesson_counts, empty=True)
    positive(parser, seconds=args.seconds, rounds=args.rounds, min_episodes=args.min_episodes)
    if args.lessons < 2 or min(args.big, args.grown) < 0 or not 0.0 <= args.rate < math.inf \
            or not 0.0 <= args.turn < math.inf:
        parser.error("--lessons is at least 2 (half of them eligible), --big and --grown at least 0, --rate and "
                     "--turn finite and at least 0")
    writable(parser, "--json", args.json_out)
    pace = (f"each client paced at {args.rate:g} episodes/s (a row runs for {args.min_episodes} episodes if that "
            f"takes longer, in {max(1, args.rounds)} rounds over every row)"
            ) if args.rate else "each client as fast as it can"
    if args.turn:
        pace += f", each report {args.turn:g} s after its recall (latency: the two calls only)"
    print(f"recall+report for {args.seconds:g} s per row, {pace}; {describe_machine(args.postgres)}")
    print("clients: up to 16 processes, then threads in each (processes x threads); the modes of a row "
          "count run one after another; CPU per episode: each client's own thread (mean over clients), and "
          "its PostgreSQL backend's; retries: optimistic writes that found their rows moved, per episode; "
          "queued: the share of reports queued in the inbox (their rows contended) and folded with others; "
          "load: the 1-minute load average as the row began"
          + ("; paced, CPU per episode is the mean over every episode, ± the half-width of its 95 % interval"
             if args.rate else ""))
    print(HEADER)
    rows: list[dict[str, Any]] = []
    configurations = [(workload, clients, mode) for workload in workloads
                      for clients in client_counts for mode in modes]
    rounds = max(1, args.rounds) if args.rate else 1
    segments: dict[tuple[str, int, str], list[dict[str, Any]]] = {c: [] for c in configurations}
    for done in range(rounds):
        for workload, clients, mode in configurations:
            seconds = row_seconds(args.seconds, clients, args.rate, args.min_episodes) / rounds
            segments[workload, clients, mode].append(
                run_segment(mode, workload, clients, seconds, args.lessons, args.postgres, rate=args.rate,
                            turn=args.turn))
            if done == rounds - 1:  # its last segment: the row is complete
                rows.append(summarize(segments[workload, clients, mode]))
                print(row_line(rows[-1]), flush=True)
    if args.control and rows:
        print(f"control: 1 client with {MAX_PROCESSES - 1} busy-looping processes beside it "
              "(the CPU contention of 16 clients, without their work)")
        for workload in workloads:
            for mode in modes:
                row = measure(mode, workload, 1, args.seconds, args.lessons, args.postgres, busy=MAX_PROCESSES - 1)
                rows.append(row)
                print(row_line(row), flush=True)
    flat = flatness(rows) + flatness(rows, "server")
    if flat:
        print("paced, CPU per episode across client counts (± above: each row's 95 % interval, episodes taken as "
              "independent): the highest row's mean over the lowest's")
        print("\n".join(flat))
    compared = mode_ratios(rows, modes)
    if compared:
        print("side by side (same run): episodes/s, p99 and CPU per episode (client + server) over the log mode's")
        print(f"{'workload':<9}{'modes':<14}{'clients':>8}{'episodes/s':>13}{'p99':>13}{'CPU':>13}")
        print("\n".join(compared))
    if args.big:
        big = measure_big(args.postgres, args.big, runs=5)
        rows.append(big)
        built = "" if big["build_s"] is None else f"; built its rows from the log once in {big['build_s']:.0f} s"
        print(f"namespace of {args.big} episodes (fold mode){built}")
        print("open + first recall in a fresh process (imports excluded), 5 runs: "
              + ", ".join(f"{t:.1f}" for t in big["open_recall_ms"]) + " ms; median "
              + f"{statistics.median(big['open_recall_ms']):.1f} ms")
        (first, saved), *later = big["stats_s"]
        print(f"stats in a fresh process: {first:.2f} s with no saved state (folds the whole log"
              + (", saves the state" if saved or later and later[0][1] else "") + "), then "
              + ", ".join(f"{t * 1000:.0f}" for t, _ in later) + " ms"
              + (" (resumed from it)" if all(resumed for _, resumed in later) else " (NOT resumed)"))
    if lesson_counts:
        print("one client, recall+report, in namespaces of many lessons (2 eligible per recall)")
        print(f"{'lessons':>8}  {'mode':<10}{'p50 ms':>9}{'p99 ms':>9}{'client CPU ms':>15}")
        for lessons in lesson_counts:
            for row in measure_lessons(args.postgres, lessons, [m for m in modes if m != "fold-lock"]):
                rows.append(row)
                print(f"{row['lessons']:>8}  {row['mode']:<10}"
                      f"{row['episode_p50_ms']:>9.2f}{row['episode_p99_ms']:>9.2f}"
                      f"{row['client_cpu_ms']:>15.2f}", flush=True)
    if args.grown:
        print(f"one client, recall+report p50 in ms, planned on empty tables, then {args.grown} rows of another "
              "namespace added to the lessons and events tables")
        for row in measure_grown(args.postgres, args.grown, [m for m in modes if m != "fold-lock"]):
            rows.append(row)
            print(f"  {row['mode']:<6} before {row['p50_before_ms']:.2f}, after {row['p50_after_ms']:.2f}", flush=True)
    if args.compression:
        print("one fold-mode client, 10 shared lessons of a few sentences each, CPU per episode with lesson rows "
              "compressed (PostgreSQL's default) or stored as they are (toast_tuple_target 8160)")
        for row in measure_compression(args.postgres):
            rows.append(row)
            print(f"  {'compressed' if row['compressed'] else 'as they are':<12} rows {row['row_bytes']:.0f} B, "
                  f"stored {row['stored_bytes']:.0f} B; client {row['client_cpu_ms']:.3f} ms, "
                  f"server {row['server_cpu_ms']:.3f} ms", flush=True)
    return save_rows(parser.prog, args.json_out, rows) if args.json_out else 0

