"""Writes tests/store/fixtures/old-COMMIT.{json,db}: stores an older Lamar built, and what it read them as.
Usage: python tools/old_stores.py [--commit 7a666ea6] [--episodes 120]. The tests open them with this checkout."""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

# The last commit before the SQLite episode table (schema version 3) and the saved state of version 9:
# its stores are migrated by both when this Lamar first writes them. It also erased a lesson's text
# but kept its scope values, which this Lamar reads as "[erased]" (CHANGELOG, "lamar erase kept").
COMMIT = "7a666ea6"
FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "store" / "fixtures"
CONTEXT = {"project": "app", "task": "test", "language": "python"}


def workload(path: str, episodes: int) -> dict[str, list[str]]:
    """Adds, recalls, reports on time, late, replaced and never, an edit, a retire and revive, a
    sleep report applied and one kept on disk (`path`.sleep.json), and an erase, with this `lamar`."""
    from lamar import Experience, Lamar, Scope

    rng = random.Random(5)
    lam = Lamar(path, k=2, seed=1)
    build = lam.add(Experience("the build fails", "clear the module cache", scope=Scope(task="build")))
    other = lam.add(Experience("the build fails", "read the first error", scope=Scope(task="build")))
    for action in ("rerun the failed test alone", "rerun only the failed test"):
        lam.add(Experience("the tests are flaky", action, scope=Scope(project="app")))
    deploy = lam.add(Experience("a deploy hangs", "check the health endpoint first", scope=Scope(task="deploy")))
    late: list[str] = []
    missing: list[str] = []
    for j in range(episodes):
        language = "swift" if rng.random() < 0.5 else "python"
        rec = lam.recall({"project": "app", "task": rng.choice(["build", "test", "deploy"]), "language": language})
        if j % 37 == 0:
            missing.append(rec.episode_id)
        elif j % 11 == 0:
            late.append(rec.episode_id)
        else:
            injected = {e.id for e in rec.experiences}
            good = 0.5 + (0.3 if build in injected else 0.0) - (0.3 if deploy in injected else 0.0)
            lam.report(rec.episode_id, "shipped" if rng.random() < good else "corrected")
    for ep in late:
        lam.report(ep, 1.0 if rng.random() < 0.5 else -0.6)
    lam.report(late[0], -1.0, replace=True)
    lam.edit(deploy, action="check the health endpoint before anything else")
    lam.retire(other, reason="by hand")
    lam.revive(other, reason="back")
    lam.apply(lam.sleep())
    secret = lam.add(Experience("a secret leaks", "rotate the key sk-12345", scope=Scope(task="deploy-acme")))
    lam.erase(secret, by="upgrade")
    kept = lam.sleep().to_dict()
    if "://" not in path:  # a PostgreSQL URL names no file to keep it beside
        Path(path + ".sleep.json").write_text(json.dumps(kept))
    for _ in range(20):
        lam.report(lam.recall(CONTEXT).episode_id, 1.0 if rng.random() < 0.5 else -0.6)
    lam.close()
    return {"missing": missing, "late": late}


def _plain(value: Any) -> Any:
    if isinstance(value, float):
        return None if math.isnan(value) else round(value, 9)
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "value"):
        return value.value
    return value


def read(path: str, episodes: dict[str, list[str]]) -> dict[str, Any]:
    """What the `lamar` on the path reads the store at `path` as: every lesson, its evidence, the
    episodes left late or missing, what is pending."""
    from lamar import Lamar

    lam = Lamar(path, k=2, seed=1)
    try:
        lessons = lam.experiences()
        evidence = {e.id: lam.evidence(e.id) for e in lessons}
        return {
            "lessons": {e.id: _plain(e.to_dict()) for e in lessons},
            "evidence": {i: _plain({k: getattr(ev, k) for k in ("verdict", "randomized", "injected", "held_out",
                                                      "lift", "lower", "upper")})
                         for i, ev in evidence.items()},
            "episodes": {ep: _plain({k: getattr(lam.episode(ep), k) for k in (
                "context", "eligible", "injected", "held_out", "p", "time", "reward", "signal", "reports", "settled")})
                         for ep in episodes["missing"] + episodes["late"]},
            "pending": sorted(p.episode_id for p in lam.pending()),
            "episodes_logged": lam.stats()["episodes"],
        }
    finally:
        lam.close()


def _as_older(commit: str, *args: str) -> str:
    """Run this file under the `lamar` of `commit` (exported with git archive); its stdout."""
    root = Path(__file__).resolve().parent.parent
    with tempfile.TemporaryDirectory() as folder:
        archive = subprocess.run(["git", "archive", commit, "lamar"], capture_output=True, check=True, cwd=root)
        subprocess.run(["tar", "-x", "-C", folder], input=archive.stdout, check=True)
        env = {**os.environ, "PYTHONPATH": folder}
        return subprocess.run([sys.executable, __file__, *args], env=env, cwd=folder, capture_output=True,
                              text=True, check=True).stdout


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--commit", default=COMMIT)
    parser.add_argument("--episodes", type=int, default=120)
    parser.add_argument("--write", help=argparse.SUPPRESS)  # run under the older lamar: build, then read
    args = parser.parse_args(argv)
    if args.write:
        episodes = workload(args.write, args.episodes)
        print(json.dumps({"commit": args.commit, "ids": episodes, "read": read(args.write, episodes)},
                         indent=1, sort_keys=True))
        return 0
    for suffix in ("json", "db"):
        path = FIXTURES / f"old-{args.commit}.{suffix}"
        for old in FIXTURES.glob(path.name + "*"):
            old.unlink()
        out = _as_older(args.commit, "--commit", args.commit, "--episodes", str(args.episodes), "--write", str(path))
        path.with_name(path.name + ".expected").write_text(out)
        path.with_name(path.name + ".lock").unlink(missing_ok=True)
        print(f"{path.name}: {len(json.loads(out)['read']['lessons'])} lessons")
    return 0


if __name__ == "__main__":
    sys.exit(main())
