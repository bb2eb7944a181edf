"""Judging the judge: lamar's verdicts read after every report and at checkpoints, against the
truth at that moment, and what sleep proposes; one `VerdictTracker` per lamar run."""

from __future__ import annotations

import math
from typing import Any

from lamar.gym.config import GymConfig
from lamar.gym.policies import LamarPolicy
from lamar.gym.recorder import GRACE, needed_randomized
from lamar.gym.world import LANGUAGES, Kind, World, lessons_by_task
from lamar.policy import Evidence, Verdict
from lamar.policy.alpha import lesson_alpha


class VerdictTracker:
    """Looks at the engine's evidence every `checkpoint` episodes (and on every episode of the
    fossil's task after the flip, until it is judged harms), and judges the judge."""

    def __init__(self, policy: LamarPolicy, world: World, config: GymConfig) -> None:
        self.policy = policy
        self.world = world
        self.config = config
        n = len(world.lessons)
        self.first_helps: list[int | None] = [None] * n
        self.first_harms: list[int | None] = [None] * n
        self.snapshots: dict[str, list[dict[str, Any]]] = {}
        self.randomized_at_flip = [0] * n
        self.lifts: list[dict[str, Any]] = []
        self.fossil_task_episodes = 0
        self.fossil_withdrawn: int | None = None  # fossil-task episodes after the flip
        self.fossil_harms: int | None = None
        self._by_task = lessons_by_task(world.lessons)
        self.wrong_reads = 0  # (report, lesson) reads whose verdict contradicted the truth then
        self.wrong_lessons: set[int] = set()
        self.wrong_kinds: dict[str, int] = {}
        self.reads = 0
        self.sleeps: dict[str, dict[str, Any]] = {}

    def monitor(self, t: int, task: int) -> None:
        """Call after every report (at episode `t`, of an episode of `task`): judge the verdict of
        every lesson the report touched against the truth at `t`.

        A verdict the truth outgrew (the fossil's helps after the flip) is wrong only once the
        lesson has had `GRACE` randomized episodes since the change: what no bound can avoid
        is not counted. A split lesson's lift depends on where it is injected, so it is judged
        per slice instead: helps in Python or harms in Swift is wrong.
        """
        world, policy = self.world, self.policy
        for lesson in self._by_task[task]:
            ev = policy.evidence(lesson)
            self.reads += 1
            kind = world.lessons[lesson].kind
            wrong = ""
            if kind is Kind.SPLIT:
                swift, python = (ev.slices.get(f"language={name}") for name in LANGUAGES)
                if swift is not None and swift.verdict is Verdict.HARMS:
                    wrong = "split_swift_harms"
                elif python is not None and python.verdict is Verdict.HELPS:
                    wrong = "split_python_helps"
            else:
                truth = world.effect(lesson, t)
                if ev.verdict is Verdict.HELPS and truth <= 0.0:
                    since = policy.randomized[lesson] - (self.randomized_at_flip[lesson]
                                                         if t >= world.flip and kind is Kind.FOSSIL else 0)
                    if kind is not Kind.FOSSIL or t < world.flip or since >= GRACE:
                        wrong = f"{kind.value}_helps"
                elif ev.verdict is Verdict.HARMS and truth >= 0.0:
                    wrong = f"{kind.value}_harms"
            if wrong:
                self.wrong_reads += 1
                self.wrong_lessons.add(lesson)
                self.wrong_kinds[wrong] = self.wrong_kinds.get(wrong, 0) + 1

    def after(self, t: int, task: int) -> None:
        """Call once episode `t` has been reported."""
        done = t + 1
        world, config = self.world, self.config
        if t >= world.flip and task == world.fossil_task:
            self.fossil_task_episodes += 1
            if self.fossil_harms is None:
                verdict = self.policy.evidence(world.fossil).verdict
                if verdict is not Verdict.HELPS and self.fossil_withdrawn is None:
                    self.fossil_withdrawn = self.fossil_task_episodes
                if verdict is Verdict.HARMS:
                    self.fossil_harms = self.fossil_task_episodes
        at = "flip" if done == world.flip else "end" if done == world.episodes else None
        if done % config.checkpoint and done % config.lift_every and at is None:
            return
        evidence = [self.policy.evidence(lesson.index) for lesson in world.lessons]
        for i, ev in enumerate(evidence):
            if ev.verdict is Verdict.HELPS and self.first_helps[i] is None:
                self.first_helps[i] = done
            elif ev.verdict is Verdict.HARMS and self.first_harms[i] is None:
                self.first_harms[i] = done
        if done % config.lift_every == 0 or at is not None:
            for lesson, ev in zip(world.lessons, evidence, strict=True):
                self.lifts.append({"series": "lift", "episode": done, "lesson": lesson.id,
                                   "kind": lesson.kind.value, "value": ev.lift, "lower": _finite(ev.lower),
                                   "upper": _finite(ev.upper), "verdict": ev.verdict.value})
        if at == "flip":
            self.randomized_at_flip = list(self.policy.randomized)
        if done in config.sleep_at or at == "end":
            self._sleep("end" if at == "end" else str(done), t)
        if at is not None:
            record = self._of_record()
            self.snapshots[at] = [{**self._snapshot(i, ev, t), "of_record": record[i]} for i, ev in enumerate(evidence)]

    def _sleep(self, label: str, t: int) -> None:
        """Ask sleep for proposals (apply none): which lessons it would retire and narrow."""
        world = self.world
        report = self.policy.lam.sleep()
        index = self.policy.index
        retire = {index[i] for p in report.of_kind("retire") for i in p.experience_ids}
        narrow = {index[p.experience_ids[0]]: p.payload for p in report.of_kind("narrow")}
        harmful = {lesson.index for lesson in world.lessons if world.effect(lesson.index, t) < 0.0
                   and lesson.kind is not Kind.SPLIT}
        out: dict[str, Any] = {
            "retire_harmful": len(retire & harmful), "harmful": len(harmful),
            "retire_wrong": len(retire - harmful),
            "retire_false": sum(1 for i in retire if world.lessons[i].kind is Kind.FALSE),
            "retire_fossil": world.fossil in retire,
        }
        if world.split is not None:
            payload = narrow.get(world.split)
            out["narrow_split"] = payload is not None and payload.get("value") == LANGUAGES[0]
            out["narrow_wrong"] = len(set(narrow) - {world.split}) + (payload is not None and not out["narrow_split"])
        self.sleeps[label] = out

    def _of_record(self) -> list[str]:
        """Each lesson's verdict of record by e-BH over the whole world's lessons (a look)."""
        lam = self.policy.lam
        ids = [lesson.id for lesson in self.world.lessons]
        record = lam.verdicts_of_record()
        return [record.get(i, Verdict.UNKNOWN).value for i in ids]

    def _snapshot(self, lesson: int, ev: Evidence, t: int) -> dict[str, Any]:
        world = self.world
        truth = world.effect(lesson, t)
        changed = world.lessons[lesson].kind is Kind.FOSSIL and t >= world.flip
        # Randomized episodes since the world last changed for this lesson: what the physics allowed.
        since = self.policy.randomized[lesson] - (self.randomized_at_flip[lesson] if changed else 0)
        return {"truth": truth, "verdict": ev.verdict.value, "lift": ev.lift, "lower": _finite(ev.lower),
                "upper": _finite(ev.upper), "randomized": ev.randomized, "randomized_since_change": since,
                "restarts": ev.restarts}

    def judge(self, reward_sd: float) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """(run-row columns, one row per lesson): verdicts against the truth at the flip and the end."""
        world = self.world
        holdout = self.policy.lam.policy.holdout
        cols: dict[str, Any] = {}
        lessons = [{"lesson": lesson.id, "task": lesson.task, "kind": lesson.kind.value, "rank": lesson.index + 1,
                    "effect_pre": world.effect(lesson.index, 0),
                    "effect_post": world.effect(lesson.index, world.episodes - 1),
                    "first_helps": self.first_helps[lesson.index],
                    "first_harms": self.first_harms[lesson.index]} for lesson in world.lessons]
        for at in ("flip", "end"):
            tally = dict.fromkeys((
                "helpful", "helps", "ebh_helps", "ebh_wrong", "helpful_provable", "harmful", "harms",
                "harmful_provable", "wrong_helpful_harms", "wrong_harmful_helps", "wrong_inert_helps",
                "wrong_inert_harms",
            ), 0)
            for lesson, row, snap in zip(world.lessons, lessons, self.snapshots[at], strict=True):
                # Both sides are randomized by the evidence coin; each lesson's level is its own.
                tuned = self.policy.lam.policy
                alpha = tuned.alpha_helps if snap["truth"] > 0 else tuned.alpha_harms
                needed = needed_randomized(snap["truth"], holdout,
                                           lesson_alpha(alpha, lesson.index + 1, int(snap["restarts"]) + 1))
                provable = snap["randomized_since_change"] >= needed
                side = "helpful" if snap["truth"] > 0 else "harmful" if snap["truth"] < 0 else "inert"
                verdict = snap["verdict"]
                if row["kind"] == "split":
                    pass  # its truth depends on the language: judged per slice by `monitor`
                elif side == "helpful":
                    tally["helpful"] += 1
                    tally["helps"] += verdict == "helps"
                    tally["ebh_helps"] += snap["of_record"] == "helps"
                    tally["helpful_provable"] += provable
                    tally["wrong_helpful_harms"] += verdict == "harms"
                elif side == "harmful":
                    tally["harmful"] += 1
                    tally["harms"] += verdict == "harms"
                    tally["harmful_provable"] += provable
                    tally["wrong_harmful_helps"] += verdict == "helps"
                else:
                    tally["wrong_inert_helps"] += verdict == "helps"
                    tally["wrong_inert_harms"] += verdict == "harms"
                row.update({f"{key}_{at}": value for key, value in snap.items()})
                row[f"needed_{at}"] = needed if math.isfinite(needed) else None
                row[f"provable_{at}"] = provable
            tally["ebh_wrong"] = sum(
                1 for row, snap in zip(lessons, self.snapshots[at], strict=True)
                if row["kind"] != "split" and ((snap["of_record"] == "helps" and snap["truth"] <= 0)
                                               or (snap["of_record"] == "harms" and snap["truth"] >= 0)))
            tally["wrong"] = sum(v for key, v in tally.items() if key.startswith("wrong_"))
            cols.update({f"{key}_{at}": value for key, value in tally.items()})
        fossil_end = self.snapshots["end"][world.fossil]["verdict"]
        fossil_helped = self.snapshots["flip"][world.fossil]["verdict"] == "helps"
        cols.update({
            "fossil_helps_at_flip": fossil_helped,
            "fossil_verdict_end": fossil_end,
            "fossil_withdrawn_end": fossil_end != "helps",
            # None also when it held no helps verdict at the flip: then there was nothing to withdraw.
            "fossil_withdraw_latency": self.fossil_withdrawn if fossil_helped else None,
            "fossil_harms_latency": self.fossil_harms,
            "holdout_q": holdout,
            "monitored_reads": self.reads,
            "monitored_wrong_reads": self.wrong_reads,
            "monitored_wrong_lessons": len(self.wrong_lessons),
            "monitored_wrong_kinds": ",".join(f"{k}:{v}" for k, v in sorted(self.wrong_kinds.items())) or None,
            "harms_false_end": sum(1 for lesson in world.lessons if lesson.kind is Kind.FALSE
                                   and self.snapshots["end"][lesson.index]["verdict"] == "harms"),
            "false_lessons": sum(1 for lesson in world.lessons if lesson.kind is Kind.FALSE),
        })
        for label, figures in self.sleeps.items():
            cols.update({f"sleep_{key}_{label}": value for key, value in figures.items()})
        return cols, lessons


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None
