"""What one (policy, seed) run records as it goes: outcomes and slots per episode, the fossil's
fate, the split lesson's injections by language, and what a lesson needs to be provable (the
engine's verdicts are judged in `tracker.py`)."""

from __future__ import annotations

import math
from typing import Any

from lamar.gym.config import GymConfig
from lamar.gym.world import LANGUAGES, Kind, World
from lamar.signals import Signal

KINDS = (Kind.TRUE, Kind.FALSE, Kind.INERT, Kind.FOSSIL, Kind.SPLIT)
GRACE = 300  # randomized episodes after a lesson's change before a verdict it outlived counts as wrong
SPLIT_WINDOW = (1000, 2000)  # episodes in which the context variant's injection rates are read
FOSSIL_WINDOW = 100  # fossil-task episodes in the window that decides "no longer injected"
FOSSIL_GONE = 0.05  # ... when it was injected in fewer than this share of them


def needed_randomized(effect: float, holdout: float, alpha: float) -> float:
    """Randomized eligible episodes a lesson of this effect (success probability) needs before
    its bound at `alpha` is expected to prove it with about 80% power, at the evidence coin
    `holdout` (inf: no effect, or no coin): the bound's own arithmetic (`lamar.audit.physics`).

    >>> round(needed_randomized(0.2, 0.15, 2.5e-4))
    1658
    """
    from lamar.audit.physics import needed

    n = needed(effect, holdout, alpha) if holdout > 0.0 else None
    return math.inf if n is None else float(n)


class Recorder:
    """Outcomes, slots and holdouts of one run, folded into its row at the end."""

    def __init__(self, world: World, config: GymConfig) -> None:
        n = world.episodes
        self.world = world
        self.config = config
        self.success = bytearray(n)
        self.slots = bytearray(n)
        self.fossil_slots = bytearray(n)
        self.kind_slots = {"pre": dict.fromkeys(KINDS, 0), "post": dict.fromkeys(KINDS, 0)}
        self.holdout_cost = {"pre": 0.0, "post": 0.0}
        self.fossil_after_flip: list[bool] = []  # one per episode of the fossil's task after the flip
        self.reward_sum = 0.0
        self.reward_sq = 0.0
        # context variant: (episodes, injections) of the split lesson's task, per window and language
        self.split_counts: dict[tuple[str, str], list[int]] = {}

    def record(self, t: int, task: int, injected: list[int], held_out: list[int], signal: Signal) -> None:
        world = self.world
        phase = "pre" if t < world.flip else "post"
        self.success[t] = signal.success
        self.slots[t] = len(injected)
        counts = self.kind_slots[phase]
        for lesson in injected:
            counts[world.lessons[lesson].kind] += 1
        fossil_in = world.fossil in injected
        self.fossil_slots[t] = fossil_in
        for lesson in held_out:
            # A held-out slot stays empty, so withholding a lesson that helps now costs its effect.
            effect = world.effect(lesson, t)
            if effect > 0.0:
                self.holdout_cost[phase] += effect
        if t >= world.flip and task == world.fossil_task:
            self.fossil_after_flip.append(fossil_in)
        self.reward_sum += signal.reward
        self.reward_sq += signal.reward**2
        if world.split is not None and world.languages is not None and task == world.lessons[world.split].task:
            window = "2000" if SPLIT_WINDOW[0] <= t < SPLIT_WINDOW[1] else "last" if t >= world.episodes - 2000 \
                else None
            if window is not None:
                tally = self.split_counts.setdefault((window, world.languages[t]), [0, 0])
                tally[0] += 1
                tally[1] += world.split in injected

    @property
    def reward_sd(self) -> float:
        n = self.world.episodes
        mean = self.reward_sum / n
        return math.sqrt(max(self.reward_sq / n - mean * mean, 0.0))

    def fossil_off_latency(self) -> int | None:
        """Episodes of the fossil's task from the flip until the fossil is no longer injected:
        the start of the first window of its task's episodes injecting it in under 5% of them."""
        marks = self.fossil_after_flip
        width = min(FOSSIL_WINDOW, len(marks))
        if width == 0:
            return None
        inside = sum(marks[:width])
        for start in range(len(marks) - width + 1):
            if start:
                inside += marks[start + width - 1] - marks[start - 1]
            if inside < FOSSIL_GONE * width:
                return start
        return None

    def row(self) -> dict[str, Any]:
        """The run's scalar measures (the columns of tables 1, 2 and 4)."""
        config, world = self.config, self.world
        out: dict[str, Any] = {}
        for phase, (start, stop) in config.phase_bounds().items():
            out[f"success_{phase}"] = sum(self.success[start:stop]) / max(stop - start, 1)
        for phase in ("pre", "post"):
            start, stop = (0, world.flip) if phase == "pre" else (world.flip, world.episodes)
            slots = sum(self.slots[start:stop])
            out[f"slots_{phase}"] = slots / (stop - start)
            out[f"holdout_cost_{phase}"] = self.holdout_cost[phase] / (stop - start)
            for kind in KINDS:
                out[f"share_{kind.value}_{phase}"] = self.kind_slots[phase][kind] / slots if slots else 0.0
        out["fossil_task"] = world.fossil_task
        out["fossil_off_latency"] = self.fossil_off_latency()
        out["reward_sd"] = self.reward_sd
        out["reported_share"] = sum(world.reported) / world.episodes
        if world.split is not None:
            for window in ("2000", "last"):
                for language in LANGUAGES:
                    episodes, injected = self.split_counts.get((window, language), [0, 0])
                    out[f"split_rate_{language}_{window}"] = injected / episodes if episodes else None
        return out

    def series(self) -> list[dict[str, Any]]:
        """Success rate and the fossil's share of injected slots, per window of episodes."""
        window, n = self.config.window, self.world.episodes
        out = []
        for start in range(0, n, window):
            stop = min(start + window, n)
            slots = sum(self.slots[start:stop])
            out.append({"series": "success", "episode": stop,
                        "value": sum(self.success[start:stop]) / (stop - start)})
            out.append({"series": "fossil_share", "episode": stop,
                        "value": sum(self.fossil_slots[start:stop]) / slots if slots else None})
        return out
