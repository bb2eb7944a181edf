"""Logged stores for the what-if tests: the engine run through a seeded gym world, kept in SQLite."""

from __future__ import annotations

from pathlib import Path

import pytest

from lamar.gym.policies import LamarPolicy
from lamar.gym.world import World
from lamar.store import open_store


def gym_store(path: Path, seed: int = 5, episodes: int = 800, k: int = 2) -> LamarPolicy:
    """Run the engine through `episodes` of a gym world (every episode reported) and copy its log
    into a SQLite file at `path`; returns the policy, whose engine still holds the same log."""
    world = World(seed, episodes)
    policy = LamarPolicy(world, k, seed)
    for t in range(episodes):
        injected, _ = policy.choose(t, world.tasks[t])
        policy.learn(world.outcome(t, injected), policy.ticket)
    store = open_store(str(path))
    try:
        store.append([type(e)(kind=e.kind, data=e.data, key=e.key, time=e.time) for e in policy.lam.store.read(0)])
    finally:
        store.close()
    return policy


@pytest.fixture(scope="module")
def logged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite store holding 800 logged episodes of the gym's seed 5, k = 2."""
    path = tmp_path_factory.mktemp("whatif") / "gym.db"
    gym_store(path)
    return path


@pytest.fixture(autouse=True)
def cache_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The what-if cache goes to a folder of the test's own, never the user's ~/.cache."""
    folder = tmp_path_factory.mktemp("cache")
    monkeypatch.setenv("XDG_CACHE_HOME", str(folder))
    return folder
