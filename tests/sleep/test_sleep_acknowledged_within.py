"""A contradiction whose lessons are among those of one the store acknowledged stays acknowledged, by its own id."""

from __future__ import annotations

import dataclasses

from lamar import Experience, Lamar, Proposal, Scope


def test_a_pair_among_the_lessons_of_an_acknowledged_contradiction_is_not_asked_again() -> None:
    # A store acknowledged every lesson of a standing context as one contradiction (as a Lamar that flagged the
    # whole context proposed it); sleep flags the two lessons that conflict and must not ask about them again.
    lam = Lamar(":memory:", seed=1)
    shop = Scope(project="shop")
    squash = lam.add(Experience("working on shop", "always squash merges", scope=shop))
    never = lam.add(Experience("working on shop", "never squash merges", scope=shop))
    branches = lam.add(Experience("working on shop", "name branches after their ticket", scope=shop))
    report = lam.sleep()
    (pair,) = report.of_kind("contradiction")
    assert list(pair.experience_ids) == [squash, never]
    whole = [squash, never, branches]
    old = dataclasses.replace(pair, id=Proposal.make_id("contradiction", whole), experience_ids=tuple(whole),
                              expect={i: "active" for i in whole})
    assert lam.apply(dataclasses.replace(report, proposals=[old])).applied == [old.id]
    tabs = lam.add(Experience("working on shop", "use tabs", scope=shop))
    spaces = lam.add(Experience("working on shop", "use spaces", scope=shop))
    left = lam.sleep()
    assert [list(p.experience_ids) for p in left.of_kind("contradiction")] == [[tabs, spaces]]
    assert left.summary["already_applied"] == [pair.id]
    again = lam.sleep(include_applied=True)
    assert [p.id for p in again.of_kind("contradiction")][:1] == [pair.id]  # its own id, night after night
    skips = lam.would_skip(again)
    assert skips[pair.id].startswith("already applied") and old.id in skips[pair.id], skips
    assert lam.apply(again, only=[pair.id]).codes == {pair.id: "applied"}
