"""Peers: the established bandit libraries (Vowpal Wabbit, river) as gym policies, on the gym's exact worlds
(`--peers`), learning from the same reports as lamar (late, out of order, or never), and their tuning
sweep. The libraries are optional: the `peers` extra."""

from __future__ import annotations

import random
from typing import Any, ClassVar

from lamar.gym.policies import GymPolicy
from lamar.gym.world import World, lessons_by_task
from lamar.signals import Signal


def _require(module: str) -> Any:
    try:
        return __import__(module)
    except ImportError as exc:
        from lamar.extras import needs_extra

        raise ImportError(needs_extra(f"the gym's peer policies need {module}", "peers", exc)) from exc


def require_peers() -> None:
    """Raise the ImportError naming the extra when a peer library is missing: before a run, not in its workers."""
    for module in ("vowpalwabbit", "river"):
        _require(module)


class VowpalPolicy(GymPolicy):
    """Vowpal Wabbit `--ccb_explore_adf`: shared features task (and language), one action per lesson
    of the task (its id), interactions between them, cost = -reward.

    The conditional contextual bandit makes one decision per slot, so k slots give the episode's k
    lessons. `options` picks the exploration: VW's default (epsilon-greedy), SquareCB or bagging
    (see `SWEEP`).
    """

    name = "vw"
    options: ClassVar[str] = ""

    def __init__(self, world: World, k: int, seed: int) -> None:
        super().__init__(world, k, seed)
        vw = _require("vowpalwabbit")
        self._vw = vw.Workspace(f"--ccb_explore_adf --interactions sa --quiet --random_seed {seed} {self.options}")
        self._by_task = lessons_by_task(world.lessons)

    def _lines(self, t: int, task: int) -> list[str]:
        shared = " ".join(f"{key}={value}" for key, value in self.world.context(t, task).items())
        return [f"ccb shared |s {shared}"] + [f"ccb action |a id{i}" for i in self._by_task[task]]

    def choose(self, t: int, task: int) -> tuple[list[int], list[int]]:
        lines = self._lines(t, task)
        slots = min(self.k, len(self._by_task[task]))
        decisions = self._vw.predict(lines + ["ccb slot |"] * slots)
        actions = self._by_task[task]
        chosen = [(actions[slot[0][0]], slot[0][0], slot[0][1]) for slot in decisions]
        self.ticket = (lines, chosen)
        return [lesson for lesson, _, _ in chosen], []

    def learn(self, signal: Signal, ticket: object) -> None:
        assert isinstance(ticket, tuple)
        lines: list[str] = ticket[0]
        chosen: list[tuple[int, int, float]] = ticket[1]
        labels = [f"ccb slot {action}:{-signal.reward}:{p} |" for _, action, p in chosen]
        self._vw.learn(lines + labels)


class RiverPolicy(GymPolicy):
    """river bandits, one per task, k pulls per episode over the lessons not yet pulled.

    The bandit is Thompson sampling on a Beta (`river_ts`) or epsilon-greedy on a mean or a fading
    mean (`river_eps`). Of the context it reads the task alone: it has no features, so the context
    variant's language does not reach it.
    """

    name = "river"

    def __init__(self, world: World, k: int, seed: int) -> None:
        super().__init__(world, k, seed)
        self._by_task = lessons_by_task(world.lessons)
        self._bandits = {task: self.make(random.Random(f"{seed}:{task}").getrandbits(31))
                         for task in self._by_task}

    def make(self, seed: int) -> Any:
        raise NotImplementedError

    def reward(self, signal: Signal) -> Any:
        return signal.reward

    def choose(self, t: int, task: int) -> tuple[list[int], list[int]]:
        bandit, arms = self._bandits[task], list(self._by_task[task])
        chosen = []
        for _ in range(min(self.k, len(arms))):
            arm = bandit.pull(arms)
            arms.remove(arm)
            chosen.append(arm)
        self.ticket = (task, chosen)
        return chosen, []

    def learn(self, signal: Signal, ticket: object) -> None:
        assert isinstance(ticket, tuple)
        task: int = ticket[0]
        chosen: list[int] = ticket[1]
        for arm in chosen:
            self._bandits[task].update(arm, self.reward(signal))


def vw(name: str, options: str) -> type[VowpalPolicy]:
    """A Vowpal Wabbit policy class with these extra command-line options."""
    return type(f"VW_{name}", (VowpalPolicy,), {"name": name, "options": options})


def river_ts(name: str) -> type[RiverPolicy]:
    """river's Thompson sampling on a Beta posterior of success."""
    def make(self: RiverPolicy, seed: int) -> Any:
        river = _require("river.bandit")
        from river import bandit, proba

        del river
        return bandit.ThompsonSampling(reward_obj=proba.Beta(), seed=seed)

    def reward(self: RiverPolicy, signal: Signal) -> Any:
        return bool(signal.success)

    return type(f"River_{name}", (RiverPolicy,), {"name": name, "make": make, "reward": reward})


def river_eps(name: str, epsilon: float, fading: float | None) -> type[RiverPolicy]:
    """river's epsilon-greedy on a mean (or a fading mean, when `fading` is given) of reward."""
    def make(self: RiverPolicy, seed: int) -> Any:
        _require("river.bandit")
        from river import bandit, stats

        mean = stats.Mean() if fading is None else stats.EWMean(fading_factor=fading)
        return bandit.EpsilonGreedy(epsilon=epsilon, reward_obj=mean, seed=seed)

    return type(f"River_{name}", (RiverPolicy,), {"name": name, "make": make})


# Every candidate of the tuning sweep, by family; the first of each family is the library's default.
# Tuning is fair by construction: `python -m lamar.gym.peer_tuning` runs this grid on the tuning
# seeds, never on the reported ones, and prints the best of each family, which `PEERS` fixes.
SWEEP: dict[str, dict[str, type[GymPolicy]]] = {
    "vw-epsilon": {f"vw-e{e}": vw(f"vw-e{e}", f"--epsilon {e}") for e in (".05", ".1", ".2")},
    "vw-squarecb": {f"vw-sq{g}{'nd' if d else ''}": vw(f"vw-sq{g}{'nd' if d else ''}",
                                                     f"--squarecb --gamma_scale {g}" + (" --power_t 0" if d else ""))
                    for g in ("10", "100", "1000") for d in (False, True)},
    "vw-bag": {f"vw-bag{b}{'nd' if d else ''}": vw(f"vw-bag{b}{'nd' if d else ''}",
                                                   f"--bag {b}" + (" --power_t 0" if d else ""))
               for b in ("5", "3", "10") for d in (False, True)},
    "river-ts": {"river-ts": river_ts("river-ts")},
    "river-eps": {f"river-e{str(e)[1:]}{'f' if f else ''}": river_eps(f"river-e{str(e)[1:]}{'f' if f else ''}", e, f)
                  for e in (0.1, 0.05, 0.2) for f in (None, 0.05)},
}
_NAMES = {name: cls for family in SWEEP.values() for name, cls in family.items()}

# The peers `--peers` adds: each family's default beside its best on the tuning seeds (so a
# library is never judged at a setting that only its authors' default chose), SquareCB and bagging
# also with --power_t 0; the sweep's results are in docs/gym.md.
PEERS: tuple[str, ...] = ("vw-e.05", "vw-e.2", "vw-sq10", "vw-sq10nd", "vw-bag5", "vw-bag5nd", "river-ts", "river-e.1",
                          "river-e.1f")


def peer_class(name: str) -> type[GymPolicy] | None:
    """The peer policy class called `name` (any candidate of `SWEEP`), or None."""
    return _NAMES.get(name)


__all__ = ["PEERS", "SWEEP", "RiverPolicy", "VowpalPolicy", "peer_class", "require_peers"]

