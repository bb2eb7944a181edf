"""Sleep leaves out what the store holds as applied, as `lamar sleep` and `lamar review` do."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from lamar import Experience, InvalidArgument, Lamar, StoreError


def acknowledged(path: Path) -> tuple[Lamar, str]:
    """A store whose one contradiction was applied (seen and kept) on an earlier night."""
    lam = Lamar(str(path), seed=0)
    lam.add(Experience("a UI test times out on CI", "raise the test timeout"))
    lam.add(Experience("a UI test times out on CI", "run the failing test alone first"))
    first = lam.sleep()
    (contradiction,) = first.of_kind("contradiction")
    assert lam.apply(first).applied == [contradiction.id]
    return lam, contradiction.id


def test_a_nightly_sleep_does_not_propose_an_acknowledged_contradiction_again(tmp_path: Path) -> None:
    lam, acked = acknowledged(tmp_path / "lamar.db")
    lam.close()
    nightly = Lamar(str(tmp_path / "lamar.db"), seed=0)  # the next night's job, in another process
    report = nightly.sleep()
    assert report.proposals == [] and report.summary["already_applied"] == [acked]
    assert nightly.apply(report).applied == []


def test_include_applied_lists_them_as_the_cli_report_file_does(tmp_path: Path) -> None:
    lam, acked = acknowledged(tmp_path / "lamar.db")
    report = lam.sleep(include_applied=True)
    assert [p.id for p in report] == [acked] and "already_applied" not in report.summary
    assert lam.apply(report).codes == {acked: "applied"}


def test_a_new_proposal_is_listed_beside_the_acknowledged_one_left_out(tmp_path: Path) -> None:
    lam, acked = acknowledged(tmp_path / "lamar.db")
    lam.add(Experience("the build fails after a bump", "clear DerivedData"))
    lam.add(Experience("the build fails after a bump", "clear DerivedData."))
    report = lam.sleep()
    assert [p.kind for p in report] == ["merge"] and report.summary["already_applied"] == [acked]


def test_a_store_that_cannot_say_what_is_applied_costs_the_report_nothing(tmp_path: Path, monkeypatch: Any,
                                                                          caplog: Any) -> None:
    import lamar.sleep

    lam, acked = acknowledged(tmp_path / "lamar.db")

    def unreachable(*args: Any) -> dict[str, str]:
        raise StoreError("the store went away")

    monkeypatch.setattr(lamar.sleep, "would_skip", unreachable)
    with caplog.at_level(logging.WARNING, logger="lamar.sleep"):
        report = lam.sleep()
    assert [p.id for p in report] == [acked] and report.summary["already_applied"] is None
    assert "every proposal, applied or not: the store went away" in caplog.text


def test_include_applied_is_true_or_false(tmp_path: Path) -> None:
    with pytest.raises(InvalidArgument, match="include_applied must be True or False"):
        Lamar(seed=0).sleep(include_applied="yes")  # type: ignore[typeddict-item]
