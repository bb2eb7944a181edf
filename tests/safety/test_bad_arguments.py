"""Issue 38 item 8: arguments that reached Python's own errors instead of an `InvalidArgument` naming them."""

from __future__ import annotations

import pytest

from lamar import Experience, InvalidArgument, Lamar
from lamar.models import ScriptedModel


@pytest.mark.parametrize("candidates", [[None, {}], [None], [{}], ["exp_a", None], [b"exp_a"]])
def test_recall_names_candidates_that_are_not_ids(candidates: list[object]) -> None:
    lam = Lamar(":memory:", seed=1)
    lam.add(Experience("the build fails", "clear DerivedData"))
    with pytest.raises(InvalidArgument, match="candidates"):
        lam.recall({}, candidates=candidates)  # type: ignore[arg-type]
    assert lam.stats()["episodes"] == 0


@pytest.mark.parametrize("traces", [5, 2.5, b"traces.jsonl", object()])
def test_sleep_names_traces_that_are_neither_a_path_nor_an_iterable(traces: object) -> None:
    lam = Lamar(":memory:", seed=1)
    with pytest.raises(InvalidArgument, match="traces"):
        lam.sleep(traces=traces, model=ScriptedModel(["[]"]))
