"""CLI fixtures: stores with real evidence built once through the Python API, and a runner
that calls `python -m lamar.cli` as a subprocess, as a user or a git hook would."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import os
import random
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from lamar import Experience, Lamar, Scope, Signal
from lamar.store import open_store
from lamar.store.transfer import transfer

EPISODES = 240


def build_store(path: Path, *, episodes: int = EPISODES, seed: int = 7) -> dict[str, str]:
    """Fill the store at `path` with lessons, episodes and outcomes (a short seeded loop).

    Returns ids by role: "good" (proven to help), "neutral" (no effect), "twin" (a duplicate
    of neutral: sleep proposes a merge), "rival" (a candidate) and "counter" (the same
    situation, another action: a contradiction), "retired" (retired by hand), "episode"
    (the last episode, unreported).
    """
    lam = Lamar(str(path), k=3, seed=seed, holdout=0.4)
    scope = Scope(project="trace")
    ids = {
        "good": lam.add(Experience("the build fails after a dependency bump", "clear DerivedData before rebuilding",
                                   "stale module maps survive a clean build", scope=scope)),
        "neutral": lam.add(Experience("a lint error", "run the formatter first", scope=Scope(language="swift"))),
    }
    rng = random.Random(seed)
    for _ in range(episodes):
        rec = lam.recall({"project": "trace", "language": "swift"})
        reward = 0.1 + (0.5 if ids["good"] in rec.ids else 0.0) + rng.gauss(0.0, 0.25)
        lam.report(rec.episode_id, max(-1.0, min(1.0, reward)))
    ids["twin"] = lam.add(Experience("A lint error.", "Run the formatter first.", scope=Scope(language="swift")))
    ids["rival"] = lam.add(Experience("a UI test times out on CI", "raise the test timeout to 60 seconds",
                                      scope=scope, status="candidate"))
    ids["counter"] = lam.add(Experience("a UI test times out on CI", "run the failing test alone first",
                                        scope=scope))
    ids["retired"] = lam.add(Experience("tests are flaky", "retry them until green", scope=scope))
    lam.retire(ids["retired"], "masks real failures")
    rec = lam.recall({"project": "trace", "language": "swift"})
    lam.report(rec.episode_id, Signal.SHIPPED)
    ids["episode"] = lam.recall({"project": "trace"}).episode_id
    lam.close()
    return ids


@dataclasses.dataclass(frozen=True)
class Built:
    sqlite: Path
    json: Path
    ids: dict[str, str]


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    folder = tmp_path_factory.mktemp("built")
    sqlite = folder / "experience.db"
    ids = build_store(sqlite)
    # The JSON twin is a copy of the log (a JSON store rewrites its file per event: slow to fill).
    source, target = open_store(sqlite), open_store(folder / "experience.json")
    transfer(source, target)
    source.close()
    target.close()
    return Built(sqlite=sqlite, json=folder / "experience.json", ids=ids)


@pytest.fixture(params=["json", "sqlite"])
def store(request: pytest.FixtureRequest, built: Built, tmp_path: Path) -> Path:
    """A private copy of the built store, in each backend."""
    source = built.json if request.param == "json" else built.sqlite
    target = tmp_path / source.name
    shutil.copyfile(source, target)
    return target


@pytest.fixture
def json_store(built: Built, tmp_path: Path) -> Path:
    target = tmp_path / "experience.json"
    shutil.copyfile(built.json, target)
    return target


@pytest.fixture
def sqlite_store(built: Built, tmp_path: Path) -> Path:
    target = tmp_path / "experience.db"
    shutil.copyfile(built.sqlite, target)
    return target


@pytest.fixture
def ids(built: Built) -> dict[str, str]:
    return built.ids


Run = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def lamar_cli(tmp_path: Path) -> Run:
    """Run `python -m lamar.cli ARGS` in a clean environment (HOME in tmp, no LAMAR_STORE)."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k != "LAMAR_STORE"}
    env["HOME"] = str(home)

    def run(*args: str | os.PathLike[str], stdin: str = "", extra_env: dict[str, str] | None = None,
            ) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "lamar.cli", *map(str, args)], input=stdin,
                              capture_output=True, text=True, check=False, cwd=tmp_path,
                              env={**env, **(extra_env or {})}, timeout=60)

    return run


@pytest.fixture
def run_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Run:
    """`lamar.cli.main(ARGS)` in this process (same environment as `lamar_cli`), for the many
    cases where a subprocess per call would only add start-up time."""
    from lamar.cli import main

    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    monkeypatch.delenv("LAMAR_STORE", raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(tmp_path)

    def run(*args: str | os.PathLike[str], stdin: str = "", extra_env: dict[str, str] | None = None,
            ) -> subprocess.CompletedProcess[str]:
        argv = [str(a) for a in args]
        out, err = io.StringIO(), io.StringIO()
        with monkeypatch.context() as patch:
            for key, value in (extra_env or {}).items():
                patch.setenv(key, value)
            patch.setattr(sys, "stdin", io.StringIO(stdin))
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    status = main(argv)
                except SystemExit as exc:  # --help
                    status = int(exc.code or 0)
        return subprocess.CompletedProcess(argv, status, out.getvalue(), err.getvalue())

    return run


def _refuse(token: str) -> object:
    raise ValueError(f"invalid JSON constant {token}")


@pytest.fixture
def strict_json() -> Callable[[str], object]:
    """json.loads that refuses Infinity and NaN, as JSON readers outside Python do."""
    return lambda text: json.loads(text, parse_constant=_refuse)
