"""The bandit libraries as gym peers: they run on the gym's worlds, learn, and need their extra."""

from __future__ import annotations

import sys

import pytest

from lamar.gym import GymConfig, run_gym
from lamar.gym.metrics import column, runs_of
from lamar.gym.peers import PEERS, SWEEP, peer_class
from lamar.gym.world import World


def test_every_peer_learns_on_the_gym_world_from_late_reports() -> None:
    config = GymConfig(episodes=1500, seeds=1, workers=1, policies=("none", "oracle", *PEERS), report_delay=10,
                       sleep_at=())
    result = run_gym(config)
    for name in PEERS:
        (row,) = runs_of(result.runs, name)
        assert row["slots_pre"] == 2.0  # k lessons every episode, none held out
        assert row["captured_pre"] > 0.2, name  # better than injecting nothing, by a margin
        assert row["holdout_cost_pre"] == 0.0
    assert column(runs_of(result.runs, "none"), "captured_pre") == [0.0]


def test_the_sweep_starts_each_family_with_the_default_and_peers_come_from_it() -> None:
    names = {name for family in SWEEP.values() for name in family}
    assert set(PEERS) <= names
    assert next(iter(SWEEP["vw-epsilon"])) == "vw-e.05"  # VW's default epsilon
    assert all(peer_class(name) is not None for name in PEERS) and peer_class("lamar") is None


def test_a_peer_without_its_library_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "vowpalwabbit", None)
    cls = peer_class("vw-sq10")
    assert cls is not None
    with pytest.raises(ImportError, match=r"the peers extra: .* install .*\[peers\]"):
        cls(World(0, 200), 2, 0)
