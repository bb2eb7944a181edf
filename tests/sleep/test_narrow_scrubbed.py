"""A slice whose value a recall scrubbed is never proposed as a narrowed scope: no context as given equals it."""

from __future__ import annotations

import random
from pathlib import Path

from lamar import Experience, Lamar, Scope
from lamar.store import Event, open_store
from tests.policy.test_context import _reward

_SCRUBBED = {"project": "app", "task": "build", "remote": "https://[REDACTED:url-token]@git.example.com/app"}
_PLAIN = {"project": "app", "task": "build", "remote": "https://git.example.com/app"}


def _split(location: str, helped: dict[str, str], harmed: dict[str, str]) -> str:
    """A lesson randomized in both slices of `remote`, helping in one and harming in the other."""
    rng = random.Random(7)
    lesson = Experience(
        "the build fails", "clear the module cache", scope=Scope(task="build")
    ).with_identity()
    events = [Event("experience", lesson.to_dict(), key=f"experience:{lesson.id}")]
    for j in range(1600):
        context, injected = (helped if rng.random() < 0.5 else harmed), rng.random() < 0.5
        effect = (0.3 if context is helped else -0.3) if injected else 0.0
        events.append(
            Event(
                "episode",
                {
                    "id": f"ep{j}",
                    "context": context,
                    "eligible": [lesson.id],
                    "injected": [lesson.id] if injected else [],
                    "held_out": [] if injected else [lesson.id],
                    "p": {lesson.id: 0.5},
                },
                key=f"episode:ep{j}",
            )
        )
        events.append(
            Event(
                "outcome",
                {
                    "episode": f"ep{j}",
                    "reward": _reward(rng, 0.45 + effect),
                    "signal": None,
                    "replace": False,
                },
                key=f"outcome:ep{j}",
            )
        )
    store = open_store(location)
    store.append(events)
    store.close()
    return lesson.id


def test_a_lesson_helping_where_the_value_was_scrubbed_is_not_narrowed_to_it(tmp_path: Path) -> None:
    lesson = _split(str(tmp_path / "scrubbed.db"), _SCRUBBED, _PLAIN)
    with Lamar(str(tmp_path / "scrubbed.db"), seed=1) as lam:
        narrowed = [p for p in lam.sleep().proposals if p.kind == "narrow" and lesson in p.experience_ids]
    assert narrowed == []


def test_the_same_split_on_plain_values_is_narrowed(tmp_path: Path) -> None:
    plain = dict(_SCRUBBED, remote="https://git.example.com/fork")
    lesson = _split(str(tmp_path / "plain.db"), plain, _PLAIN)
    with Lamar(str(tmp_path / "plain.db"), seed=1) as lam:
        narrowed = [p for p in lam.sleep().proposals if p.kind == "narrow" and lesson in p.experience_ids]
    assert [p.payload["value"] for p in narrowed] == [plain["remote"]]
