"""Apply of a report edited by hand, or stopped part-way: nothing changes that review did not show
or apply did not say."""

from __future__ import annotations

from pathlib import Path

import pytest

from lamar import Experience, Lamar, SleepReport, Status


def _twins(path: Path) -> Lamar:
    lam = Lamar(str(path), seed=1)
    lam.add(Experience("the build fails after a bump", "clear DerivedData"))
    lam.add(Experience("the build fails after a bump", "clear DerivedData."))
    return lam


@pytest.mark.parametrize("expect", ["removed", "partial"])
def test_a_merge_whose_expect_was_edited_out_is_refused_not_applied_over_a_retirement(
        tmp_path: Path, expect: str) -> None:
    # The statuses a proposal expects are what tells apply a lesson changed since: without them a merge
    # into a lesson retired since went in, and retired the live lesson too.
    with _twins(tmp_path / "s.db") as lam:
        (merge,) = lam.sleep().proposals
        into = merge.payload["into"]
        data = merge.to_dict()
        data["expect"] = {} if expect == "removed" else {i: s for i, s in merge.expect.items() if i != into}
        edited = SleepReport.from_dict({**lam.sleep().to_dict(), "proposals": [data]})
        lam.retire(into, "by hand")
        result = lam.apply(edited)
        assert result.applied == [] and result.codes == {merge.id: "refused"}
        assert f"the report does not say what status lesson {into} had" in result.skipped[0][1]
        assert [e.status for e in lam.experiences()].count(Status.ACTIVE) == 1


@pytest.mark.parametrize("stop", ["full", "ctrl-c"])
def test_a_store_failing_part_way_through_apply_says_which_proposals_went_in(tmp_path: Path, stop: str) -> None:
    # A full disk at the second merge: the store's message ("its previous contents are intact")
    # said nothing of the first merge, already applied.
    from lamar import StoreError
    from lamar.store import SqliteStore

    class FullAtSecond(SqliteStore):
        appends = 0

        def append(self, events):  # type: ignore[no-untyped-def]
            if any(e.kind == "applied" for e in events):
                self.appends += 1
                if self.appends == 2 and stop == "ctrl-c":
                    raise KeyboardInterrupt
                if self.appends == 2:
                    raise StoreError(f"could not write {self.location}: No space left on device")
            return super().append(events)

    lam = Lamar(FullAtSecond(tmp_path / "s.db"), seed=1)
    report, first, second = _two_merges(lam)
    with pytest.raises(StoreError if stop == "full" else KeyboardInterrupt) as raised:
        lam.apply(report)
    assert str(raised.value).startswith("could not write" if stop == "full" else "interrupted")
    assert f"apply stopped at proposal {second}, 1 applied before it ({first})" in str(raised.value)
    assert lam.apply(report).applied == [second]
    lam.close()


def test_a_store_failing_after_a_proposal_was_written_says_it_was_written(tmp_path: Path) -> None:
    from lamar import StoreError
    from lamar.store import SqliteStore

    class UnreadableAfterSecond(SqliteStore):
        appends = 0

        def append(self, events):  # type: ignore[no-untyped-def]
            self.appends += any(e.kind == "applied" for e in events)
            return super().append(events)

        def read(self, after=0):  # type: ignore[no-untyped-def]
            if self.appends == 2:
                raise StoreError(f"{self.location}: the connection was lost")
            return super().read(after)

    lam = Lamar(UnreadableAfterSecond(tmp_path / "s.db"), seed=1)
    report, first, second = _two_merges(lam)
    with pytest.raises(StoreError) as raised:
        lam.apply(report)
    assert f"apply stopped after writing proposal {second}, 1 applied before it ({first})" in str(raised.value)


def _two_merges(lam: Lamar) -> tuple[SleepReport, str, str]:
    """Two pairs of duplicates added, and the report of the sleep that proposes merging each pair."""
    lam.add(Experience("tests are flaky", "rerun the failing test once"))
    lam.add(Experience("Tests are flaky.", "Rerun the failing test once!"))
    lam.add(Experience("the linter fails on imports", "sort the imports with isort"))
    lam.add(Experience("The linter fails on imports!", "Sort the imports with isort."))
    report = lam.sleep()
    first, second = [p.id for p in report.proposals if p.kind == "merge"]
    return report, first, second


@pytest.mark.parametrize("kind", ["retire", "merge", "narrow", "unknown"])
def test_hand_edited_ids_in_review_lines_and_refusals_are_cut_to_their_ends(tmp_path: Path, kind: str) -> None:
    # Review's describe lines and apply's refusals showed an id edited into the report whole: a
    # 100 000-character id made a 100 000-character line. They are shown as other refusals show them.
    from lamar.sleep.kinds import describe
    from lamar.sleep.proposals import Proposal

    huge = "exp_" + "x" * 99_992 + "_end"
    with _twins(tmp_path / "s.db") as lam:
        (merge,) = lam.sleep().proposals
        into, (source,) = merge.payload["into"], merge.payload["from"]
        edits = {"retire": {"kind": "retire", "experience_ids": [huge]},
                 "merge": {"payload": {"into": into, "from": [huge]}, "experience_ids": [into, huge]},
                 "narrow": {"kind": "narrow", "experience_ids": [huge], "payload": {"key": "os", "value": "mac"}},
                 "unknown": {"id": huge, "kind": huge}}[kind]
        edited = Proposal.from_dict({**merge.to_dict(), **edits})
        shown = describe(edited)
        assert shown and all(len(line) < 400 for line in shown), shown
        assert "_end'" in shown[0] and "(100000 characters)" in shown[0]
        refusal = Proposal.from_dict({**merge.to_dict(), "id": huge, "experience_ids": [source]})
        (line,) = describe(refusal)
        assert line.startswith("  REFUSED by apply: merge proposal 'exp_x") and len(line) < 400, line
        result = lam.apply(SleepReport.from_dict({**lam.sleep().to_dict(), "proposals": [refusal.to_dict()]}))
        assert result.codes == {huge: "refused"} and len(result.skipped[0][1]) < 400


def test_a_narrowing_reads_as_a_sentence_in_review(tmp_path: Path) -> None:
    # The id is quoted: "narrow lesson 'exp_1''s scope" read as a typo, in `lamar review` and on lamar ui's cards.
    from lamar.sleep.kinds import describe
    from lamar.sleep.proposals import Proposal

    with _twins(tmp_path / "s.db") as lam:
        (merge,) = lam.sleep().proposals
        into = merge.payload["into"]
        narrow = Proposal.from_dict({**merge.to_dict(), "kind": "narrow", "experience_ids": [into],
                                     "payload": {"key": "language", "value": "swift"}})
        (line,) = describe(narrow)
    assert line.startswith(f"  narrow the scope of lesson '{into}': add language=swift (it stays eligible"), line
    assert "''" not in line
