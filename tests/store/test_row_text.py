"""The fold mode's row text (lamar/store/row_text.py): a row decodes to exactly the state that was
encoded, every number of the same type and bits, in both the packed form and the original one."""

from __future__ import annotations

import json
import random

from lamar import Experience, Lamar, Scope, Signal
from lamar.policy.lesson import LessonState
from lamar.store import Event, MemoryStore
from lamar.store.postgres import row_text
from tests.state.seam import folded


def _exact(state: LessonState) -> str:
    """The stored state as JSON text: 3 and 3.0 differ here, where == would call them equal."""
    return json.dumps(row_text.stored(state), sort_keys=True)


def _folded_states(seed: int) -> list[LessonState]:
    """Lessons after a few hundred reports in contexts wider than their scopes (slices), with a
    narrowed scope, a merge and a retire, in a MemoryStore (no PostgreSQL needed)."""
    lam = Lamar(MemoryStore(), k=2, seed=seed)
    rng = random.Random(seed)
    ids = [lam.add(Experience(f"case {i}", f"do {i}", rationale="why " * i, scope=Scope(task="a")))
           for i in range(4)]
    for _ in range(400):
        ctx = {"task": "a", "lang": rng.choice(["py", "go", "rs"]), "repo": rng.choice(["x", "y"])}
        lam.report(lam.recall(ctx).episode_id, rng.choice(list(Signal)))
    lam.store.append([Event("scope", {"id": ids[0], "key": "lang", "value": "py"}),
                      Event("merge", {"into": ids[2], "from": [ids[3]]})])
    lam.retire(ids[1])
    for _ in range(100):
        ctx = {"task": "a", "lang": "py", "repo": rng.choice(["x", "y"])}
        lam.report(lam.recall(ctx).episode_id, rng.choice(list(Signal)))
    states = [folded(lam).lesson(i) for i in ids]
    lam.close()
    return states


def _decoded(text: str) -> LessonState:
    return row_text.decode(text, lambda line: Experience.from_dict(json.loads(line)))


def test_a_row_decodes_to_the_state_encoded_types_and_bits_included() -> None:
    states = [s for seed in range(5) for s in _folded_states(seed)]
    assert sum(len(s.slices.slices) for s in states) >= 10  # the slices are exercised
    for state in states:
        text = row_text.encode(state, row_text.lesson_text(state.experience))
        assert "\n" in text  # the packed form: the lesson's line, then the state's
        back = _decoded(text)
        assert _exact(back) == _exact(state)
        assert back.experience == state.experience
        assert row_text.encode(back, row_text.lesson_text(back.experience)) == text  # stable


def test_the_packed_form_is_shorter_than_the_original_and_the_original_is_still_read() -> None:
    for state in _folded_states(7):
        original = json.dumps(row_text.stored(state))  # as versions up to 6 wrote every row
        packed = row_text.encode(state, row_text.lesson_text(state.experience))
        assert len(packed) < len(original)
        assert _exact(_decoded(original)) == _exact(state)


def test_a_state_holding_something_else_than_a_number_is_written_in_the_original_form() -> None:
    state = _folded_states(3)[0]
    state.arms.tries = True  # not an int as the packing knows it: no number may change its type
    text = row_text.encode(state, row_text.lesson_text(state.experience))
    assert "\n" not in text and _exact(_decoded(text)) == _exact(state)
    state.arms.tries = 2**70  # beyond 64 bits
    text = row_text.encode(state, row_text.lesson_text(state.experience))
    assert "\n" not in text and _exact(_decoded(text)) == _exact(state)


def test_a_row_packed_before_the_detectors_second_statistic_decodes_with_it_at_rest(monkeypatch) -> None:
    from types import SimpleNamespace

    from lamar.policy.change import ChangeDetector

    before = row_text._DETECTOR_BEFORE
    slow = ChangeDetector.__slots__[before:]
    assert slow == ("slow", "slow_w_in", "slow_s_in", "slow_w_out", "slow_s_out")
    states = _folded_states(4)
    assert any(state.detector.slow for state in states)  # the second statistic had moved
    for state in states:
        with monkeypatch.context() as patch:  # the row as the earlier detector's slots packed it
            patch.setattr(row_text, "ChangeDetector",
                          SimpleNamespace(values=lambda detector: ChangeDetector.values(detector)[:before]))
            text = row_text.encode(state, row_text.lesson_text(state.experience))
        back = _decoded(text)
        for name in slow:
            setattr(state.detector, name, 0.0)
        assert _exact(back) == _exact(state)
