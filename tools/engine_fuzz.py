"""A differential fuzz of engines sharing one store, through the public API only: each seed drives
`--engines` engines with random operations and compares every public read of each engine with a
freshly opened engine's on the same store (docs/stores.md, "What every backend promises").

    python tools/engine_fuzz.py --backend sqlite --engines 2 --steps 1000 --seeds 20 [--profile outcomes] [--every 5]

Backends: memory (one `ExperienceStore(":memory:")` the engines share: each `":memory:"` location
is a store of its own), sqlite, json, postgres (a namespace of its own on 127.0.0.1, deleted after; the
fold mode) and postgres-log (the same in the log mode, `lamar_fold=off`).
An answer the docs rule out (a refused report of a live episode, an accepted one of an episode no
recall made) counts as a mismatch too. Prints each seed's first mismatches, minimized to a short
list of operations with --minimize; exits 1 when any seed has one.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from typing import Any

from lamar import (
    DuplicateReport,
    Experience,
    ExperienceStore,
    InvalidArgument,
    InvalidExperience,
    Lamar,
    LamarError,
    Scope,
    Signal,
    UnknownEpisode,
)

PG_URL = "postgresql://postgres@127.0.0.1:5432/test"
TASKS = ("t0", "t1", "t2")
SIGNALS = (Signal.SHIPPED, Signal.ACCEPTED, Signal.REASKED, Signal.CORRECTED, Signal.REVERTED, 0.5, -0.25)
# Odd seeds expire only when the harness settles "two hours later"; even seeds at every recall.
PENDING_AFTER = (0.0, 3600.0)
# Weights of each operation; a report names an episode an engine recalled (by the step that did).
PROFILES = {
    "outcomes": {"add": 3, "recall": 25, "report": 25, "replace": 12, "late": 6, "unknown": 2, "expire": 4,
                 "settle": 2, "checkpoint": 3, "compact": 2, "apply": 1, "retire": 1, "edit": 1, "reopen": 3,
                 "rebuild": 1},
    "mixed": {"add": 8, "recall": 20, "report": 15, "replace": 6, "late": 3, "unknown": 2, "expire": 3,
              "settle": 2, "checkpoint": 3, "compact": 3, "apply": 1, "retire": 3, "revive": 2, "edit": 3, "erase": 1,
              "sleep": 2, "reopen": 3, "rebuild": 1},
}

Op = dict[str, Any]


class Run:
    """One seed's store, its engines and what they recalled and added (by the step that did it)."""

    def __init__(self, backend: str, engines: int, where: str, seed: int) -> None:
        self.backend = backend
        self.seed = seed
        if backend == "memory":
            self.location: Any = ExperienceStore(":memory:")
        elif backend.startswith("postgres"):
            self.namespace = f"fuzz-{seed}-{uuid.uuid4().hex[:8]}"
            self.location = f"{PG_URL}?lamar_namespace={self.namespace}"
            if backend == "postgres-log":
                self.location += "&lamar_fold=off"
        else:
            suffix = "db" if backend == "sqlite" else "json"
            self.location = os.path.join(where, f"fuzz-{seed}-{uuid.uuid4().hex[:6]}.{suffix}")
        self.engines = [self.open(i) for i in range(engines)]
        self.episodes: dict[int, str] = {}  # step -> episode id
        self.lessons: dict[int, str] = {}  # step -> lesson id
        self.compacted = -1  # the last step whose compaction was applied: an episode before it may be gone
        self.later: Any = None  # a sleep report an `apply` step applies, stale by then
        self.erased: set[str] = set()  # lessons erased: they cannot be revived
        self.gone: set[int] = set()  # steps whose episodes every engine found compacted
        self.rng = random.Random(-seed)  # which episodes a check reads: apart from the operations' draws

    def open(self, i: int, fresh: bool = False) -> Lamar:
        return Lamar(self.location, k=2, seed=None if fresh else self.seed * 100 + i,
                     pending_after=PENDING_AFTER[self.seed % 2])

    def close(self, lam: Lamar) -> None:
        if self.backend != "memory":  # the engines share the memory store: closing one closes it
            lam.close()

    def finish(self) -> None:
        for lam in self.engines:
            self.close(lam)
        if self.backend.startswith("postgres"):
            from lamar.bench.fleet.clients import drop_namespace

            drop_namespace(PG_URL, self.namespace)


def draw(rng: random.Random, run: Run, step: int, engines: int, profile: str) -> Op:
    """The next operation, with everything it names fixed, so that a list of them replays."""
    weights = PROFILES[profile]
    name = rng.choices(list(weights), list(weights.values()))[0]
    op: Op = {"step": step, "op": name, "engine": rng.randrange(engines)}
    if name in ("report", "replace", "late", "expire") and run.episodes:
        # Mostly recent ones; now and then one of the first few, so replacements pile up on them.
        steps = sorted(run.episodes)
        pool = steps[-30:] if (r := rng.random()) < 0.6 else steps[:3] if r < 0.8 else steps
        op["episode"] = rng.choice(pool)
        op["signal"] = rng.randrange(len(SIGNALS))
    elif name in ("retire", "revive", "edit", "erase") and run.lessons:
        op["lesson"] = rng.choice(sorted(run.lessons))
    elif name in ("recall", "add"):
        op["task"] = rng.choice(TASKS)
    elif name == "compact":
        op["keep_last"] = rng.choice((0, 5, 20))
        op["keep_unreported"] = rng.choice((0, 1, 5, 50))
        op["later"] = rng.random() < 0.3
    elif name not in ("unknown", "settle", "checkpoint", "sleep", "apply", "reopen", "rebuild"):
        op["op"] = "recall"
        op["task"] = rng.choice(TASKS)
    return op


def perform(run: Run, op: Op) -> str | None:
    """Carry out `op`; a message when an engine answered what the docs say it must not."""
    lam = run.engines[op["engine"]]
    name = op["op"]
    episode = run.episodes.get(op.get("episode", -1))
    lesson = run.lessons.get(op.get("lesson", -1))
    if name in ("report", "replace", "late", "expire", "retire", "revive", "edit", "erase") and \
            episode is None and lesson is None:
        return None  # the step that recalled or added it was left out (minimizing)
    if name == "add":
        n = op["step"]
        run.lessons[n] = lam.add(Experience(f"case {n}", f"fix {n}", scope=Scope(task=op["task"])))
    elif name == "recall":
        run.episodes[op["step"]] = lam.recall({"task": op["task"]}).episode_id
    elif name in ("report", "replace", "late"):
        assert episode is not None
        try:
            if name == "late":
                lam.expire(episode)  # refused? then the report below is a plain one
            lam.report(episode, SIGNALS[op["signal"]], replace=name == "replace")
        except DuplicateReport:
            if name == "replace":
                return _unless_sealed(run, lam, episode, "replace=True refused")
        except UnknownEpisode:
            return _unless_gone(run, episode, f"report of {episode}, recalled at step {_step_of(run, episode)}")
    elif name == "unknown":
        try:
            lam.report(f"ep-never-{op['step']}", Signal.SHIPPED)
        except UnknownEpisode:
            return None
        return "a report of an episode no recall produced was accepted"
    elif name == "expire":
        assert episode is not None
        try:
            lam.expire(episode)
        except UnknownEpisode:
            return _unless_gone(run, episode, f"expire of {episode}")
    elif name == "settle":
        lam.settle_pending(now=time.time() + 7200)
    elif name == "checkpoint":
        lam.checkpoint()
    elif name in ("compact", "sleep"):
        options = {"keep_last": op["keep_last"], "keep_unreported": op["keep_unreported"]} if name == "compact" else {}
        report = lam.sleep(**options)
        if op.get("later"):
            run.later = report, op["step"]
            return None
        chosen = [p.id for p in report.proposals if name == "sleep" or p.kind == "compact"]
        if any(p.kind == "compact" for p in report.proposals if p.id in lam.apply(report, only=chosen).applied):
            run.compacted = op["step"]
    elif name == "apply":
        if run.later is None:
            return None
        (report, made), run.later = run.later, None
        done = lam.apply(report, only=[p.id for p in report.proposals if p.kind == "compact"]).applied
        if any(p.kind == "compact" for p in report.proposals if p.id in done):
            run.compacted = max(run.compacted, made)  # it drops only episodes recalled before the sleep
    elif name == "retire":
        assert lesson is not None
        lam.retire(lesson)
    elif name == "revive":
        assert lesson is not None
        try:
            lam.revive(lesson)
        except InvalidArgument:
            return None if lesson in run.erased else f"revive of {lesson}, never erased, refused"
        if lesson in run.erased:
            return f"revive of the erased {lesson} accepted"
    elif name == "edit":
        assert lesson is not None
        try:
            lam.edit(lesson, action=f"fix {op['step']} again")
        except InvalidExperience:
            pass  # retired (or erased): the docs say edit refuses it
    elif name == "erase":
        assert lesson is not None
        lam.erase(lesson)
        run.erased.add(lesson)
    elif name == "reopen":
        run.close(lam)
        run.engines[op["engine"]] = run.open(op["engine"])
    elif name == "rebuild":
        lam.rebuild()
    return None


def _step_of(run: Run, episode: str) -> int:
    return next(step for step, e in run.episodes.items() if e == episode)


def _unless_gone(run: Run, episode: str, what: str) -> str | None:
    """An unknown episode is right only when a compaction applied since its recall dropped it, which
    a fresh engine sees too."""
    fresh = run.open(0, fresh=True)
    try:
        fresh.episode(episode)
    except UnknownEpisode:
        if _step_of(run, episode) < run.compacted:
            return None
        return f"{what}: unknown to every engine, though no compaction ran after its recall"
    finally:
        run.close(fresh)
    return f"{what}: UnknownEpisode, though a fresh engine finds it"


def _unless_sealed(run: Run, lam: Lamar, episode: str, what: str) -> str | None:
    record = lam.episode(episode)
    return None if record.sealed else f"{what} for {episode}, whose outcome is not sealed"


# -- reads ---------------------------------------------------------------------------------------

# Not compared: `sealed`, which an engine that had folded the whole log learns only when a write of
# its own meets another process's checkpoint (a replacement it writes is refused then, as in a
# fresh engine), and `number`, -1 in an engine resumed from a saved state until it folds them all.
EPISODE_FIELDS = ("context", "eligible", "injected", "held_out", "p", "reward", "signal", "reports",
                  "settled")


def reads(lam: Lamar, run: Run, steps: list[int]) -> dict[str, Any]:
    """Every public read of the engine, keyed by what was read (of the episodes, those the recalls
    at `steps` logged)."""
    out: dict[str, Any] = {}
    stats = lam.stats()
    stats.pop("store", None)
    out["stats"] = stats
    listed = lam.experiences()
    out["experiences"] = [e.to_dict() for e in listed]
    for status in ("active", "candidate", "retired"):
        out[f"experiences({status})"] = [e.id for e in lam.experiences(status)]
    for e in listed:
        out[f"evidence({e.id})"] = lam.evidence(e.id).to_dict()
        out[f"get({e.id})"] = lam.get(e.id).to_dict()
    out["verdicts_of_record"] = {k: v.value for k, v in lam.verdicts_of_record().items()}
    out["pending"] = [p.episode_id for p in lam.pending()]
    for step in steps:
        episode_id = run.episodes[step]
        try:
            record = lam.episode(episode_id)
        except UnknownEpisode:
            out[f"episode({step})"] = "unknown"
            continue
        out[f"episode({step})"] = {name: getattr(record, name) for name in EPISODE_FIELDS}
    return out


def differences(a: Any, b: Any, path: str = "") -> list[str]:
    """Where two reads differ (floats to 1e-9, relative)."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for key in sorted(set(a) | set(b), key=str):
            if key not in a or key not in b:
                out.append(f"{path}{key}: {a.get(key, '<missing>')!r} != {b.get(key, '<missing>')!r}")
            else:
                out += differences(a[key], b[key], f"{path}{key}.")
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in differences(x, y, f"{path}{i}.")]
    if isinstance(a, float) and isinstance(b, float) and (a == b or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)):
        return []
    return [] if a == b else [f"{path.rstrip('.')}: {a!r} != {b!r}"]


def check(run: Run, whole: bool) -> list[str]:
    """Each engine's reads against those of an engine opened fresh on the store now: of the
    episodes, every one when `whole`, else the newest 20 and 10 others."""
    steps = sorted(set(run.episodes) - run.gone)
    if not whole and len(steps) > 30:
        steps = sorted(run.rng.sample(steps[:-20], 10)) + steps[-20:]
    fresh = run.open(0, fresh=True)
    try:
        want = reads(fresh, run, steps)
    finally:
        run.close(fresh)
    found = []
    for i, lam in enumerate(run.engines):
        found += [f"engine {i} vs fresh: {d}" for d in differences(reads(lam, run, steps), want)]
    if not found:  # compacted for good: read no more (an UnknownEpisode's message costs a scrub)
        run.gone.update(step for step in steps if want[f"episode({step})"] == "unknown")
    return found


# -- a seed, and its minimization ---------------------------------------------------------------

def play(backend: str, engines: int, where: str, seed: int, ops: list[Op] | None, steps: int, profile: str,
         every: int) -> tuple[list[Op], list[str]]:
    """Run a seed (or replay `ops`); the operations done and the first step's mismatches."""
    rng = random.Random(seed)
    run = Run(backend, engines, where, seed)
    done: list[Op] = []
    try:
        for i in range(steps if ops is None else len(ops)):
            op = draw(rng, run, i, engines, profile) if ops is None else ops[i]
            done.append(op)
            try:
                problem = perform(run, op)
            except LamarError as exc:
                problem = f"{type(exc).__name__}: {exc}"
            found = [f"{op}: {problem}"] if problem else []
            last = i == (steps if ops is None else len(ops)) - 1
            if not found and (last or i % every == every - 1):
                found = check(run, whole=last or i % 100 == 99)
            if found:
                return done, found
        return done, []
    finally:
        run.finish()


def minimize(backend: str, engines: int, where: str, seed: int, ops: list[Op], profile: str,
             fails: Callable[[list[str]], bool]) -> list[Op]:
    """The shortest list found by dropping chunks of `ops` while the replay still mismatches."""
    chunk = max(1, len(ops) // 2)
    while chunk >= 1:
        i = 0
        while i < len(ops):
            trial = ops[:i] + ops[i + chunk:]
            if trial and fails(play(backend, engines, where, seed, trial, 0, profile, 1)[1]):
                ops = trial
            else:
                i += chunk
        chunk //= 2
    return ops


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=("memory", "sqlite", "json", "postgres", "postgres-log"),
                        default="sqlite")
    parser.add_argument("--engines", type=int, default=2)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--seeds", type=int, default=20, help="how many seeds, from --first-seed")
    parser.add_argument("--first-seed", type=int, default=1)
    parser.add_argument("--profile", choices=sorted(PROFILES), default="outcomes")
    parser.add_argument("--every", type=int, default=1, help="compare the reads every this many steps")
    parser.add_argument("--minimize", action="store_true", help="shrink each mismatching seed's operations")
    args = parser.parse_args(argv)
    bad = 0
    with tempfile.TemporaryDirectory(prefix="lamar-fuzz-") as where:
        for seed in range(args.first_seed, args.first_seed + args.seeds):
            started = time.perf_counter()
            ops, found = play(args.backend, args.engines, where, seed, None, args.steps, args.profile, args.every)
            took = time.perf_counter() - started
            if not found:
                print(f"seed {seed}: {len(ops)} steps, 0 mismatches ({took:.1f} s)", flush=True)
                continue
            bad += 1
            print(f"seed {seed}: mismatch at step {len(ops) - 1} ({took:.1f} s)")
            for line in found[:10]:
                print(f"  {line}")
            if args.minimize:
                first = found[0].split(": ")[0]
                short = minimize(args.backend, args.engines, where, seed, ops, args.profile,
                                 lambda f, first=first: bool(f) and f[0].split(": ")[0] == first)
                print(f"  minimized to {len(short)} operations:")
                for op in short:
                    print(f"    {op}")
                for line in play(args.backend, args.engines, where, seed, short, 0, args.profile, 1)[1][:5]:
                    print(f"    -> {line}")
            sys.stdout.flush()
    print(f"{args.backend}: {bad} of {args.seeds} seeds mismatched ({args.steps} steps, {args.engines} engines, "
          f"profile {args.profile})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
