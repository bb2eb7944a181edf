"""Several processes on one store, each with its own engine, mixing every write (recall, report,
add, edit, retire, erase, sleep and apply, checkpoint) while, with --kill, one of them is SIGKILLed
at random moments and restarted; then every engine's state is compared with a fresh engine's fold.

    python tools/multiproc_stress.py --backend sqlite --workers 4 --ops 300 [--kill] [--seed 1]
    python tools/multiproc_stress.py --backend postgres --url postgresql://postgres@127.0.0.1:5432/test

Prints the operations done, the kills (and how many stopped an operation half way), the refusals
by kind and every defect; exits 1 on a mismatch between engines, a lost or doubled report, a lost
lesson, an erased text left in the store's files, an error that is not a LamarError, a CorruptStore
(the store is sound), or an operation slower than --slow seconds.
"""

from __future__ import annotations

import argparse
import collections
import json
import multiprocessing
import os
import random
import signal
import sys
import tempfile
import time
import traceback
import uuid
from pathlib import Path
from typing import Any

TASKS = ("t0", "t1", "t2")
OPS = (("recall", 30), ("report", 22), ("replace", 3), ("add", 8), ("edit", 7), ("retire", 4),
       ("revive", 4), ("erase", 2), ("apply", 4), ("checkpoint", 3), ("expire", 3), ("settle", 2),
       ("read", 8))
_RECALLED: list[str] = []  # the episodes this worker recalled lately, for `replace`


def _log(fd: int, *words: str) -> None:
    os.write(fd, (json.dumps(words) + "\n").encode())


def _lines(path: Path) -> list[list[str]]:
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:  # a line cut by a SIGKILL
            pass
    return out


def fingerprint(lam: Any) -> dict[str, Any]:
    """What every engine on the store must agree on, as JSON."""
    stats = lam.stats()
    stats.pop("store")
    lessons = lam.experiences()
    return {"lessons": [e.to_dict() for e in lessons],
            "evidence": {e.id: repr(lam.evidence(e.id)) for e in lessons},
            "stats": json.loads(json.dumps(stats, default=repr))}


def _one(lam: Any, op: str, rng: random.Random, fd: int, tag: str) -> None:
    from lamar import Experience, Scope, Signal

    if op == "recall":
        rec = lam.recall({"task": rng.choice(TASKS)})
        _log(fd, "recall", rec.episode_id)
        _RECALLED[:] = [*_RECALLED[-49:], rec.episode_id]
    elif op in ("report", "replace", "expire"):
        if op == "replace":  # any episode this worker recalled lately, reported or not
            if not _RECALLED:
                return
            ep = rng.choice(_RECALLED)
        else:  # any worker's pending episode: two workers may race for it
            pending = lam.pending()
            if not pending:
                return
            ep = rng.choice(pending).episode_id
        if op == "expire":
            if lam.expire(ep):
                _log(fd, "expire", ep)
            return
        sig = rng.choice(list(Signal))
        lam.report(ep, sig, replace=op == "replace")
        _log(fd, op, ep, sig.value)
    elif op == "add":
        text = f"{tag} case {uuid.uuid4().hex[:8]}"
        exp_id = lam.add(Experience(text, f"do {text}", scope=Scope(task=rng.choice(TASKS))))
        _log(fd, "add", exp_id, text)
    elif op in ("edit", "retire", "revive", "erase"):
        lessons = lam.experiences()
        if not lessons:
            return
        exp = rng.choice(lessons)
        if op == "edit":
            text = f"{tag} edit {uuid.uuid4().hex[:8]}"
            lam.edit(exp.id, action=f"do {text}", reason="stress")
            _log(fd, "edit", exp.id, f"do {text}")
        elif op == "erase":
            lam.erase(exp.id, reason="stress")
            _log(fd, "erase", exp.id)
        else:
            getattr(lam, op)(exp.id)
            _log(fd, op, exp.id)
    elif op == "apply":
        result = lam.apply(lam.sleep())
        _log(fd, "apply", str(len(result.applied)))
    elif op == "checkpoint":
        _log(fd, "checkpoint", str(lam.checkpoint()))
    elif op == "settle":
        lam.settle_pending()
    else:
        lessons = lam.experiences()
        if lessons:
            lam.evidence(rng.choice(lessons).id)
        lam.stats()


def worker(location: str, folder: str, index: int, generation: int, ops: int, seed: int,
           mix: dict[str, int]) -> None:
    """Do `ops` operations (fewer if an earlier generation of this worker did some), then wait for
    the go file and write this engine's fingerprint."""
    from lamar import CorruptStore, Lamar, LamarError

    base = Path(folder)
    rng = random.Random(seed * 1000 + index * 100 + generation)
    log = base / f"w{index}.log"
    done = sum(1 for line in _lines(log) if line[0] == "op")
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    errors = os.open(base / f"w{index}.errors", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    names, weights = zip(*mix.items())
    try:
        lam = Lamar(location, k=2, seed=seed + index)
    except Exception as exc:  # a store a killed writer left that does not open: what the harness hunts
        _log(errors, "open", type(exc).__name__, str(exc)[:300], traceback.format_exc()[-3000:])
        raise
    for i in range(done, ops):
        op = rng.choices(names, weights)[0]
        _log(fd, "begin", op)
        start = time.monotonic()
        try:
            _one(lam, op, rng, fd, f"w{index}g{generation}n{i}")
        except CorruptStore as exc:  # the store is not corrupt: what the harness hunts too
            _log(errors, op, type(exc).__name__, str(exc)[:300], traceback.format_exc()[-3000:])
        except LamarError as exc:
            _log(fd, "lamar-error", op, type(exc).__name__, str(exc)[:300])
        except Exception as exc:  # noqa: BLE001 - what the harness hunts
            _log(errors, op, type(exc).__name__, str(exc)[:300], traceback.format_exc()[-2000:])
        _log(fd, "op", op, f"{time.monotonic() - start:.3f}")
    (base / f"w{index}.done").touch()
    while not (base / "go").exists():
        time.sleep(0.02)
    (base / f"w{index}.state").write_text(json.dumps(fingerprint(lam), sort_keys=True))
    lam.close()


def _start(ctx: Any, args: argparse.Namespace, folder: str, index: int, generation: int) -> Any:
    proc = ctx.Process(target=worker,
                       args=(args.location, folder, index, generation, args.ops, args.seed, args.mix))
    proc.start()
    return proc


def _diff(a: Any, b: Any, where: str = "") -> str:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b), key=str):
            if a.get(key) != b.get(key):
                return _diff(a.get(key), b.get(key), f"{where}.{key}")
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{where}: {len(a)} items vs {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y:
                return _diff(x, y, f"{where}[{i}]")
    return f"{where}: {str(a)[:200]} vs {str(b)[:200]}"


def check(args: argparse.Namespace, folder: Path) -> list[str]:
    """The defects a finished run left: each a line."""
    from lamar import Lamar

    problems = []
    lam = Lamar(args.location, k=2, seed=0)
    fresh = json.loads(json.dumps(fingerprint(lam), sort_keys=True))
    for index in range(args.workers):
        state = json.loads((folder / f"w{index}.state").read_text())
        if state != fresh:
            problems.append(f"worker {index} differs from a fresh engine: {_diff(state, fresh)}")
    lam.rebuild()
    rebuilt = json.loads(json.dumps(fingerprint(lam), sort_keys=True))
    if rebuilt != fresh:
        problems.append(f"a rebuild differs from a fresh engine: {_diff(rebuilt, fresh)}")
    events = lam.store.read()
    # A second outcome of an episode is stored as a replacement (a report after an expiry too).
    firsts = collections.Counter(e.data["episode"] for e in events if e.kind == "outcome" and not e.data.get("replace"))
    lines = [line for i in range(args.workers) for line in _lines(folder / f"w{i}.log")]
    doubled = [ep for ep, n in firsts.items() if n > 1]
    if doubled:
        problems.append(f"{len(doubled)} episodes have two first outcomes: {doubled[:3]}")
    compacted = lam.stats()["compacted"]["reports"]
    lost = []
    for line in lines:
        if line[0] == "report":
            try:
                if lam.episode(line[1]).reward is None:
                    lost.append(line[1])
            except Exception:  # noqa: BLE001 - compacted away
                if not compacted:
                    lost.append(line[1])
    if lost:
        problems.append(f"{len(lost)} completed reports lost: {lost[:3]}")
    known = {e.id for e in lam.experiences()}
    added = [line[1] for line in lines if line[0] == "add"]
    missing = [i for i in added if i not in known]
    if missing:
        problems.append(f"{len(missing)} added lessons missing: {missing[:3]}")
    erased = {line[1] for line in lines if line[0] == "erase"}
    texts = [(line[1], line[2]) for line in lines if line[0] in ("add", "edit") and line[1] in erased]
    lam.close()
    if args.backend != "postgres":
        blob = b"".join(p.read_bytes() for p in Path(args.location).parent.iterdir()
                        if p.name.startswith(Path(args.location).name))
        kept = [t for _, t in texts if t.encode() in blob]
        if kept:
            problems.append(f"{len(kept)} texts of erased lessons still in the store's files: {kept[:3]}")
    for index in range(args.workers):
        for line in _lines(folder / f"w{index}.errors"):
            problems.append(f"worker {index}, {line[0]}: {line[1]}: {line[2]}\n{line[3]}")
    slow = [(line[1], float(line[2])) for line in lines if line[0] == "op" and float(line[2]) > args.slow]
    if slow:
        problems.append(f"{len(slow)} operations slower than {args.slow} s: {slow[:5]}")
    return problems


def run(args: argparse.Namespace) -> int:
    from lamar import Experience, Lamar, Scope

    folder = Path(tempfile.mkdtemp(prefix="multiproc-"))
    if args.backend == "sqlite":
        args.location = str(folder / "store" / "shared.db")
    elif args.backend == "json":
        args.location = str(folder / "store" / "shared.json")
    else:
        from urllib.parse import quote, urlencode

        args.namespace = f"stress-{uuid.uuid4().hex[:12]}"
        sep = "&" if "?" in args.url else "?"
        args.location = f"{args.url}{sep}{urlencode({'lamar_namespace': args.namespace}, quote_via=quote)}"
        if args.fold:
            args.location += "&lamar_fold=on"
    (folder / "store").mkdir()
    lam = Lamar(args.location, k=2, seed=0)
    for i in range(6):  # near-duplicate pairs, so that sleep proposes merges
        lam.add(Experience(f"seed case {i // 2}", f"do {i // 2}" + "." * (i % 2), scope=Scope(task=TASKS[i % 3])))
    lam.close()
    ctx = multiprocessing.get_context("fork")
    rng = random.Random(args.seed)
    started = time.monotonic()
    procs = {i: _start(ctx, args, str(folder), i, 0) for i in range(args.workers)}
    generation = collections.Counter[int]()
    kills = 0
    while not all((folder / f"w{i}.done").exists() for i in procs):
        time.sleep(rng.random() * args.kill_every if args.kill else 0.05)
        if time.monotonic() - started > args.timeout:
            print("timed out waiting for the workers", file=sys.stderr)
            break
        for i, proc in procs.items():
            if not proc.is_alive() and not (folder / f"w{i}.done").exists():
                print(f"worker {i} died with exit code {proc.exitcode}", file=sys.stderr)
                generation[i] += 1
                procs[i] = _start(ctx, args, str(folder), i, generation[i])
        if args.kill:
            alive = [i for i, p in procs.items() if p.is_alive() and not (folder / f"w{i}.done").exists()]
            if alive:
                i = rng.choice(alive)
                os.kill(procs[i].pid, signal.SIGKILL)
                procs[i].join()
                kills += 1
                generation[i] += 1
                procs[i] = _start(ctx, args, str(folder), i, generation[i])
    (folder / "go").touch()
    for proc in procs.values():
        proc.join(120)
    elapsed = time.monotonic() - started
    lines = [line for i in range(args.workers) for line in _lines(folder / f"w{i}.log")]
    done = collections.Counter(line[1] for line in lines if line[0] == "op")
    refused = collections.Counter(f"{line[1]}:{line[2]}" for line in lines if line[0] == "lamar-error")
    halfway = collections.Counter[str]()  # operations a kill stopped: a "begin" with no "op" after it
    for i in range(args.workers):
        begun = None
        for line in _lines(folder / f"w{i}.log"):
            if line[0] == "begin":
                if begun is not None:
                    halfway[begun] += 1
                begun = line[1]
            elif line[0] == "op":
                begun = None
    slowest = max((float(line[2]) for line in lines if line[0] == "op"), default=0.0)
    problems = check(args, folder)
    print(f"{args.backend}: {args.workers} workers x {args.ops} ops, seed {args.seed}, {kills} kills, "
          f"{sum(done.values())} operations in {elapsed:.1f} s, the slowest {slowest:.2f} s")
    print(f"  kills inside an operation: {sum(halfway.values())} "
          f"({', '.join(f'{k} {v}' for k, v in sorted(halfway.items())) or 'none'})")
    print("  done: " + ", ".join(f"{k} {v}" for k, v in sorted(done.items())))
    print("  refused (LamarError): " + (", ".join(f"{k} {v}" for k, v in sorted(refused.items())) or "none"))
    print(f"  mismatches and defects: {len(problems)}")
    for problem in problems:
        print("  - " + problem)
    if args.backend == "postgres":
        from lamar.bench.fleet.clients import drop_namespace

        drop_namespace(args.url, args.namespace)
    if not problems and not args.keep:
        import shutil

        shutil.rmtree(folder)
    else:
        print(f"  kept {folder}")
    return 1 if problems else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=("sqlite", "json", "postgres"), default="sqlite")
    parser.add_argument("--url", default="postgresql://postgres@127.0.0.1:5432/test")
    parser.add_argument("--fold", action="store_true", help="PostgreSQL's fold mode (lamar_fold=on)")
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--ops", type=int, default=300, help="operations per worker")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--kill", action="store_true", help="SIGKILL a random worker at random moments")
    parser.add_argument("--kill-every", type=float, default=0.5, help="at most this many seconds between kills")
    parser.add_argument("--slow", type=float, default=30.0, help="an operation slower than this is a defect")
    parser.add_argument("--timeout", type=float, default=1800.0)
    parser.add_argument("--keep", action="store_true", help="keep the folder even when all is well")
    parser.add_argument("--weights", default="", help="change operations' weights: erase=10,replace=20")
    args = parser.parse_args()
    args.mix = dict(OPS)
    for item in filter(None, args.weights.split(",")):
        name, _, weight = item.partition("=")
        if name not in args.mix:
            parser.error(f"no operation {name!r}: one of {', '.join(args.mix)}")
        args.mix[name] = int(weight)
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
