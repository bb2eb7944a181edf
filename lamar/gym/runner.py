"""Running the gym: one (policy, seed) job per process slot, gathered into flat rows (`GymResult`).

The views (`report.render`, `plot.plot_result`) depend on the result; nothing here imports them."""

from __future__ import annotations

import dataclasses
import heapq
import multiprocessing
import os
import time
from collections.abc import Callable
from typing import Any, TypeVar

from lamar.bench.arguments import quiet_worker
from lamar.gym.config import GymConfig
from lamar.gym.peers import peer_class
from lamar.gym.policies import LamarPolicy, make_policy
from lamar.gym.recorder import Recorder
from lamar.gym.result import GymResult, Row
from lamar.gym.tracker import VerdictTracker
from lamar.gym.world import World
from lamar.signals import Signal

Progress = Callable[[int, int], None]


def run_job(config: GymConfig, policy_name: str, seed: int) -> dict[str, list[Row]]:
    """Run one policy on one seeded world; returns its run, lesson and series rows."""
    started = time.process_time()
    world = World(seed, config.episodes, config.base, config.help_effect, config.hurt_effect,
                  lessons=config.lessons, report_rate=config.report_rate, report_delay=config.report_delay,
                  context=config.context)
    peer = peer_class(policy_name)
    policy = (peer(world, config.k, seed) if peer is not None
              else make_policy(policy_name, world, config.k, seed, dict(config.tuning)))
    recorder = Recorder(world, config)
    tracker = VerdictTracker(policy, world, config) if type(policy) is LamarPolicy else None  # the v2 has no sleep
    tasks, reported, delays = world.tasks, world.reported, world.delays
    pending: list[tuple[int, int, object, Signal]] = []  # (due, episode, ticket, signal): a heap
    for t in range(world.episodes):
        task = tasks[t]
        injected, held_out = policy.choose(t, task)
        signal = world.outcome(t, injected)
        recorder.record(t, task, injected, held_out, signal)
        if reported[t]:
            heapq.heappush(pending, (t + delays[t], t, policy.ticket, signal))
        while pending and pending[0][0] <= t:  # due now: late ones arrive out of order
            _, episode, ticket, due_signal = heapq.heappop(pending)
            policy.learn(due_signal, ticket)
            if tracker is not None:
                tracker.monitor(t, tasks[episode])
        if tracker is not None:
            tracker.after(t, task)
    key = {"policy": policy_name, "seed": seed}
    run: Row = {"table": "run", **key, "episodes": config.episodes, "flip": world.flip, "k": config.k,
                "base": config.base, "help_effect": config.help_effect, "hurt_effect": config.hurt_effect,
                "lessons_per_task": config.lessons, "report_rate": config.report_rate,
                "report_delay": config.report_delay, "context": config.context,
                "lamar_tuning": ",".join(f"{k}={v}" for k, v in config.tuning) or None, **recorder.row()}
    lessons: list[Row] = []
    series: list[Row] = recorder.series()
    if tracker is None and isinstance(policy, LamarPolicy):
        run.update(end_verdicts(policy, world))
    if tracker is not None:
        cols, lesson_rows = tracker.judge(recorder.reward_sd)
        run.update(cols)
        lessons = [{"table": "lesson", **key, **row} for row in lesson_rows]
        series += tracker.lifts
    series = [{"table": "series", **key, **row} for row in series]
    # CPU seconds travel beside the rows, never in them: rows must be identical run after run.
    return {"runs": [run], "lessons": lessons, "series": series,
            "cpu": [{"seconds": time.process_time() - started}]}


def end_verdicts(policy: LamarPolicy, world: World) -> Row:
    """The verdicts at the end against the truth then, for an engine the tracker does not follow
    (the frozen second design): the columns of the frontier."""
    end = world.episodes - 1
    out = dict.fromkeys(("helpful_end", "helps_end", "harmful_end", "harms_end", "wrong_end"), 0)
    for lesson in world.lessons:
        verdict, truth = policy.evidence(lesson.index).verdict.value, world.effect(lesson.index, end)
        side = "helpful" if truth > 0.0 else "harmful" if truth < 0.0 else None
        if side is not None:
            out[f"{side}_end"] += 1
            right = "helps" if side == "helpful" else "harms"
            out[f"{right}_end"] += verdict == right
        out["wrong_end"] += (verdict == "helps" and truth <= 0.0) or (verdict == "harms" and truth >= 0.0)
    return out


def _job(args: tuple[GymConfig, str, int]) -> dict[str, list[Row]]:
    return run_job(*args)


T = TypeVar("T")
R = TypeVar("R")


def run_jobs(job: Callable[[T], R], jobs: list[T], workers: int, progress: Progress | None) -> list[R]:
    """Every job's result, in the order they finish, on `workers` processes (1: in this one)."""
    results: list[R] = []
    if progress is not None:
        progress(0, len(jobs))
    if workers <= 1:
        for args in jobs:
            results.append(job(args))
            if progress is not None:
                progress(len(results), len(jobs))
        return results
    with multiprocessing.get_context().Pool(workers, initializer=quiet_worker) as pool:
        for result in pool.imap_unordered(job, jobs, chunksize=1):
            results.append(result)
            if progress is not None:
                progress(len(results), len(jobs))
    return results


def run_gym(config: GymConfig | None = None, *, progress: Progress | None = None,
            **overrides: Any) -> GymResult:
    """Run every (policy, seed) job of the gym, in parallel, and gather the rows.

    Args:
        config: the run (default `GymConfig()`); keyword `overrides` replace its fields.
        progress: called as `progress(done, total)` after each finished job.

    Returns:
        A `GymResult`; the same config always yields the same rows.

    >>> r = run_gym(episodes=200, seeds=1, policies=("none", "oracle"), workers=1)
    >>> [(row["policy"], row["success_pre"] > 0) for row in r.runs]
    [('none', True), ('oracle', True)]
    """
    config = dataclasses.replace(config or GymConfig(), **overrides)
    started = time.perf_counter()
    # The engine's jobs are the long ones: start them first so the last jobs are short.
    order = sorted(config.policies, key=lambda name: name != "lamar")
    jobs = [(config, name, seed) for name in order for seed in config.seed_list]
    workers = min(config.workers or os.cpu_count() or 1, len(jobs))
    results = run_jobs(_job, jobs, workers, progress)
    rank = {name: i for i, name in enumerate(config.policies)}
    results.sort(key=lambda r: (rank[r["runs"][0]["policy"]], r["runs"][0]["seed"]))
    runs = _uniform([row for r in results for row in r["runs"]])
    _add_captured(runs)
    return GymResult(
        config=config,
        runs=runs,
        lessons=_uniform([row for r in results for row in r["lessons"]]),
        series=_uniform([row for r in results for row in r["series"]]),
        elapsed=time.perf_counter() - started,
        workers=workers,
        cpu=sum(r["cpu"][0]["seconds"] for r in results),
    )


def _add_captured(runs: list[Row]) -> None:
    """Each run's share of the oracle's gain over `none` on the same seed, before and after the flip,
    and the share its evidence coin gave up (its direct price of proof)."""
    by_key = {(row["policy"], row["seed"]): row for row in runs}
    for row in runs:
        none, oracle = by_key.get(("none", row["seed"])), by_key.get(("oracle", row["seed"]))
        for phase in ("pre", "post"):
            value = price = None
            if none is not None and oracle is not None:
                gain = oracle[f"success_{phase}"] - none[f"success_{phase}"]
                if gain > 0.0:
                    value = (row[f"success_{phase}"] - none[f"success_{phase}"]) / gain
                    # the evidence coin's direct price in the same units: each held-out slot stays
                    # empty, so it gives up exactly the held-out lesson's effect
                    price = row["holdout_cost_" + phase] / gain
            row[f"captured_{phase}"] = value
            row[f"price_{phase}"] = price


def _uniform(rows: list[Row]) -> list[Row]:
    """Give every row the same keys, in first-seen order (missing ones None), for a tidy DataFrame."""
    keys: dict[str, None] = {}
    for row in rows:
        keys.update(dict.fromkeys(row))
    return [{key: row.get(key) for key in keys} for row in rows]
