"""Reading the log: the engine's rules for outcomes, on a real SQLite store, and the refusals."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from lamar import Experience, InvalidArgument, Lamar, LamarError, Scope, Signal
from lamar.policy.config import Policy, holdout_lever
from lamar.whatif import whatif
from lamar.whatif.alternatives import Holdout, Without
from lamar.whatif.log import read_log


def _engine(path: Path) -> Lamar:
    lam = Lamar(str(path), k=2, seed=11)
    for action in ("pin the seeds", "mock the clock", "retry the network"):
        lam.add(Experience("a test is flaky", action, scope=Scope(task="flaky")))
    lam.add(Experience("a deploy fails", "drain the pods", scope=Scope(task="deploy")))
    return lam


def test_replaced_expired_and_unreported_episodes_are_read_as_the_engine_reads_them(tmp_path: Path) -> None:
    lam = _engine(tmp_path / "s.db")
    recs = [lam.recall({"task": "flaky"}) for _ in range(6)]
    lam.report(recs[0].episode_id, Signal.SHIPPED)
    lam.report(recs[1].episode_id, Signal.REVERTED)
    lam.report(recs[1].episode_id, Signal.ACCEPTED, replace=True)  # the replacement counts
    lam.report(recs[2].episode_id, -0.25)  # a number with no signal: success is reward > 0
    lam.expire(recs[3].episode_id)  # no reward
    lam.report(recs[4].episode_id, 0.5)
    # recs[5] is never reported
    log = read_log(lam.store)
    assert log.logged == 6
    by_id = {e.id: e for e in log.episodes}
    assert set(by_id) == {r.episode_id for r in recs[:3]} | {recs[4].episode_id}
    assert (by_id[recs[1].episode_id].reward, by_id[recs[1].episode_id].success) == (0.6, True)
    assert (by_id[recs[2].episode_id].reward, by_id[recs[2].episode_id].success) == (-0.25, False)
    assert by_id[recs[4].episode_id].success is True
    for rec in recs[:3]:
        episode = by_id[rec.episode_id]
        assert dict(episode.slate.p) == rec.propensities
        assert episode.slate.injected == frozenset(rec.ids) and episode.slate.held_out == frozenset(rec.held_out)
        assert episode.reward == lam.episode(rec.episode_id).reward
    lam.close()


def test_a_checkpoint_keeps_the_episodes_its_snapshot_holds(tmp_path: Path) -> None:
    lam = _engine(tmp_path / "s.db")
    before = []
    for i in range(8):
        rec = lam.recall({"task": "flaky"})
        lam.report(rec.episode_id, Signal.SHIPPED if i % 2 else Signal.CORRECTED)
        before.append(rec.episode_id)
    expected = {e.id: (e.reward, e.slate) for e in read_log(lam.store).episodes}
    assert lam.checkpoint()
    assert lam.store.read(0)[0].kind == "snapshot"
    rec = lam.recall({"task": "flaky"})
    lam.report(rec.episode_id, Signal.ACCEPTED)
    after = read_log(lam.store)
    assert {e.id: (e.reward, e.slate) for e in after.episodes if e.id in expected} == expected
    assert [e.id for e in after.episodes] == [*before, rec.episode_id]
    lam.close()


def test_since_and_scope_select_episodes(tmp_path: Path) -> None:
    lam = _engine(tmp_path / "s.db")
    for task in ("flaky", "deploy", "flaky"):
        rec = lam.recall({"task": task, "project": "x"})
        lam.report(rec.episode_id, Signal.SHIPPED)
    assert len(read_log(lam.store, scope={"task": "flaky"}).episodes) == 2
    assert len(read_log(lam.store, scope={"task": "flaky", "project": "y"}).episodes) == 0
    times = [e.time for e in read_log(lam.store).episodes]
    assert len(read_log(lam.store, since=times[1]).episodes) == 2
    assert len(read_log(lam.store, since=times[-1] + 1.0).episodes) == 0
    lam.close()


def test_too_few_episodes_are_refused_naming_what_is_missing(tmp_path: Path) -> None:
    lam = _engine(tmp_path / "s.db")
    for _ in range(5):
        lam.report(lam.recall({"task": "flaky"}).episode_id, Signal.SHIPPED)
    with pytest.raises(LamarError, match=r"has 5 reported episode\(s\).*at least 30"):
        lam.whatif()
    # A misspelt policy is named first: more episodes would not make it right.
    with pytest.raises(InvalidArgument, match="unknown policy 'no-memory'"):
        lam.whatif("no-memory")
    with pytest.raises(InvalidArgument, match="holdout rate"):
        lam.whatif(["none", "holdout:2"])
    lam.close()


def test_a_log_that_never_flipped_a_coin_is_refused(tmp_path: Path) -> None:
    # The lessons were eligible and wanted, but the holdout was 0: every wanted lesson at p = 1.
    lam = Lamar(str(tmp_path / "s.db"), k=2, seed=11, holdout=0.0)
    lam.add(Experience("a test is flaky", "pin the seeds", scope=Scope(task="flaky")))
    for _ in range(40):
        lam.report(lam.recall({"task": "flaky"}).episode_id, Signal.SHIPPED)
    assert all(set(e.slate.p.values()) == {1.0} for e in read_log(lam.store).episodes)
    with pytest.raises(LamarError, match="none with a logged coin.*holdout") as refused:
        whatif(lam)
    assert f"(the default: {holdout_lever(Policy().holdout)})" in str(refused.value)
    lam.close()


def test_a_log_where_no_lesson_was_eligible_is_told_to_add_lessons_not_a_holdout(tmp_path: Path) -> None:
    # Every recall came from a context where no lesson was eligible: no propensity was ever logged,
    # and the holdout (the default, above zero) is not what is missing.
    lam = _engine(tmp_path / "s.db")
    for _ in range(40):
        lam.report(lam.recall({"task": "build"}).episode_id, Signal.SHIPPED)
    assert all(not e.slate.p for e in read_log(lam.store).episodes)
    with pytest.raises(LamarError, match="no lesson was eligible in any of them") as refused:
        whatif(lam)
    assert "Add lessons whose scope matches" in str(refused.value) and "holdout" not in str(refused.value)
    with pytest.raises(LamarError, match="no lesson was eligible"):
        whatif(lam, scope={"task": "build"})
    lam.close()


def test_an_empty_store_is_refused(tmp_path: Path) -> None:
    with Lamar(str(tmp_path / "empty.db")) as lam, pytest.raises(LamarError, match="0 reported episode") as refused:
        lam.whatif("none")
    # Reporting cannot help where fewer than 30 episodes were logged at all: they are logged first.
    said = str(refused.value)
    assert "report more outcomes" not in said and said.endswith(
        "log more episodes and report them (lamar recall KEY=VALUE ..., or your agent's hooks, then lamar report "
        "EPISODE SIGNAL)"), said


def test_the_advice_to_widen_since_and_scope_comes_only_where_they_narrowed_the_log(tmp_path: Path) -> None:
    # `lamar ui` and a bare `lamar whatif` select nothing: widening what they never set cannot help.
    lam = _engine(tmp_path / "s.db")
    for i in range(35):
        rec = lam.recall({"task": "flaky"})
        if i < 5:
            lam.report(rec.episode_id, Signal.SHIPPED)
    with pytest.raises(LamarError) as refused:
        lam.whatif()
    said = str(refused.value)
    assert said.endswith("report more outcomes (lamar report EPISODE SIGNAL)"), said
    assert "widen" not in said.rpartition(" has ")[2] and "selection" not in said.rpartition(" has ")[2]
    # A scope every episode has, and a since before the first, leave nothing out: nothing to widen.
    for selection in ({"scope": {"task": "flaky"}}, {"since": 0.0}):
        with pytest.raises(LamarError) as refused:
            lam.whatif(**selection)  # type: ignore[arg-type]
        assert str(refused.value) == said, selection
    for _ in range(40):
        lam.report(lam.recall({"task": "deploy"}).episode_id, Signal.SHIPPED)
    with pytest.raises(LamarError, match=r"5 reported episode\(s\) in this selection .*or widen since/scope$"):
        lam.whatif(scope={"task": "flaky"})
    lam.close()
    bare = _engine(tmp_path / "bare.db")
    for _ in range(40):
        bare.report(bare.recall({"task": "build"}).episode_id, Signal.SHIPPED)
    with pytest.raises(LamarError, match="no lesson was eligible") as refused:
        bare.whatif()
    assert str(refused.value).endswith("shows which are eligible)"), refused.value
    with pytest.raises(LamarError, match="no lesson was eligible") as refused:
        bare.whatif(scope={"task": "build"})  # no episode of the store had one
    assert str(refused.value).endswith("shows which are eligible)"), refused.value
    for _ in range(10):
        bare.report(bare.recall({"task": "flaky"}).episode_id, Signal.SHIPPED)
    with pytest.raises(LamarError, match="or widen since/scope to episodes that had some$"):
        bare.whatif(scope={"task": "build"})
    bare.close()


def test_a_selection_of_a_store_with_too_few_episodes_in_all_is_not_told_to_widen(tmp_path: Path) -> None:
    # Widening since/scope reaches the whole store at most: where it holds no episode, or fewer than 30
    # reported, that cannot help, and "in this selection" only says so where the selection left some out.
    lam = _engine(tmp_path / "s.db")
    said = []
    for _ in range(2):
        for selection in ({"scope": {"task": "flaky"}}, {"since": 0.0}, {"scope": {"task": "flaky"}, "since": 0.0}):
            with pytest.raises(LamarError, match="0 reported episode") as refused:
                lam.whatif(**selection)  # type: ignore[arg-type]
            said.append(str(refused.value))
        for i in range(20):
            lam.report(lam.recall({"task": "deploy" if i % 2 else "flaky"}).episode_id, Signal.SHIPPED)
    assert all("widen" not in text and text.endswith("then lamar report EPISODE SIGNAL)") for text in said), said
    assert all("selection" not in text.rpartition(" has ")[2] for text in said[:3]), said
    assert "10 reported episode(s) in this selection (10 logged)" in said[3], said
    lam.close()


def test_a_policy_that_is_neither_a_name_nor_an_alternative_is_refused(tmp_path: Path) -> None:
    lam = _engine(tmp_path / "s.db")
    for _ in range(40):
        lam.report(lam.recall({"task": "flaky"}).episode_id, Signal.SHIPPED)
    with pytest.raises(InvalidArgument, match="a policy is a name"):
        lam.whatif([3])
    with pytest.raises(InvalidArgument, match="since is a time"):
        lam.whatif("none", since="yesterday")  # type: ignore[arg-type]
    for since in (float("nan"), float("inf"), 10**400):
        with pytest.raises(InvalidArgument, match="since is a time"):
            lam.whatif("none", since=since)
    lam.close()



def test_a_scope_value_that_is_not_a_string_is_named(tmp_path: Path) -> None:
    lam = _engine(tmp_path / "s.db")
    for _ in range(40):
        lam.report(lam.recall({"task": "flaky"}).episode_id, Signal.SHIPPED)
    for scope, named in (({"task": 1}, "'task' must be a string; got int"), ({1: "flaky"}, "keys must be"),
                         ({"task": None}, "'task' is None .null.: leave the key out")):
        with pytest.raises(InvalidArgument, match=f"scope selects episodes by their context, and .*{named}"):
            lam.whatif("none", scope=scope)  # type: ignore[dict-item]
    assert lam.whatif("none", scope={"task": "flaky"}).reported == 40
    lam.close()


def test_an_empty_list_of_policies_is_refused(tmp_path: Path) -> None:
    with Lamar(str(tmp_path / "empty.db")) as lam:
        for nothing in ([], ()):
            with pytest.raises(InvalidArgument, match="policy is an empty list"):
                lam.whatif(nothing)


def test_each_policy_is_one_row_named_as_it_can_be_asked_again(tmp_path: Path) -> None:
    lam = _engine(tmp_path / "s.db")
    for _ in range(40):
        lam.report(lam.recall({"task": "flaky"}).episode_id, Signal.SHIPPED)
    report = lam.whatif(["holdout:0.999999999", "K:1", "k:1", "holdout:0.30", "holdout:.3", "none", " NONE"])
    assert [row.policy for row in report.alternatives] == ["holdout:0.999999999", "k:1", "holdout:0.3", "none"]
    again = lam.whatif([row.policy for row in report.alternatives])
    assert [row.to_dict() for row in again.alternatives] == [row.to_dict() for row in report.alternatives]
    assert report[" K:1 "] is report["k:1"] and report["holdout:.30"] is report["holdout:0.3"]
    with pytest.raises(KeyError, match=r"no row 'k:2' in this report; its rows: 'holdout:0.999999999', 'k:1', "
                                        r"'holdout:0.3', 'none' \(ask whatif for it\)"):
        report["k:2"]
    with pytest.raises(InvalidArgument, match="got bytes"):  # not each of its bytes, an int
        lam.whatif(b"none")
    one = Holdout(0.5)
    assert [row.policy for row in lam.whatif([one, one]).alternatives] == ["holdout:0.5"]
    for spelt in ([one, "holdout:0.5"], ["holdout:.50", one, Holdout(0.5)]):  # one policy, two spellings
        assert [row.policy for row in lam.whatif(spelt).alternatives] == ["holdout:0.5"]
    with pytest.raises(InvalidArgument, match="two different policies are named 'holdout:0.5'"):
        lam.whatif([one, "holdout:0.5", _Named("holdout:0.5")])
    with pytest.raises(InvalidArgument, match="two different policies are named 'k:1'"):
        lam.whatif(["k:1", _Named("k:1")])  # compared once the log gives k:1 its beliefs
    lam.close()


@dataclasses.dataclass(frozen=True)
class _Named:
    """An Alternative that takes another policy's name and changes nothing."""

    name: str
    description: str = "a policy under a name already taken"

    def changes(self, episode: object, fold: int = 0) -> dict[str, float]:
        return {}


def test_without_a_lesson_not_in_the_selection_says_whether_it_exists_and_what_to_do(tmp_path: Path) -> None:
    lam = Lamar(str(tmp_path / "s.db"), k=2, seed=3, holdout=0.3)
    flaky = lam.add(Experience("a test is flaky", "pin the seeds", scope=Scope(task="flaky")))
    build = lam.add(Experience("the build fails", "clear the cache", scope=Scope(task="build")))
    never = lam.add(Experience("a deploy fails", "drain the pods", scope=Scope(task="deploy")))
    for i in range(80):
        rec = lam.recall({"task": "flaky" if i % 2 else "build"})
        lam.report(rec.episode_id, Signal.SHIPPED if i % 3 else Signal.CORRECTED)
    assert lam.whatif(f"without:{build}")[f"without:{build}"].episodes == 80
    # The lesson exists, and the scope left out every episode it was eligible in.
    with pytest.raises(InvalidArgument, match=f"lesson '{build}' was not eligible in the episodes since/scope "
                                              "select: widen them") as refused:
        lam.whatif(f"without:{build}", scope={"task": "flaky"})
    assert "lamar ls" not in str(refused.value)
    with pytest.raises(InvalidArgument, match=f"lesson '{never}' was not eligible in any reported episode"):
        lam.whatif(f"without:{never}")
    # Python's own pointer to the ids; `lamar whatif` words it as the command line's (test_whatif_cli).
    with pytest.raises(InvalidArgument, match=r"no lesson 'exp_nope' in store .*; Lamar.experiences\(\) lists the "
                                              r"lesson ids$"):
        lam.whatif("without:exp_nope")
    with pytest.raises(InvalidArgument, match=r"no lesson 'exp_nope' in store"):
        lam.whatif([Without("exp_nope")])  # the Alternative, as the name is
    with pytest.raises(InvalidArgument, match=f"lesson '{never}' was not eligible in any reported episode"):
        lam.whatif(Without(never))
    assert lam.whatif(f"without:{flaky}", scope={"task": "flaky"}).reported == 40
    lam.close()


@dataclasses.dataclass(frozen=True)
class _Gives:
    """An Alternative that gives one lesson the same inclusion probability in every episode."""

    lesson: str
    pi: object
    name: str = "custom"
    description: str = "one lesson at a fixed probability"

    def changes(self, episode: object, fold: int = 0) -> dict[str, object]:
        return {self.lesson: self.pi}


def test_an_alternative_that_gives_no_probability_is_refused_by_name(tmp_path: Path) -> None:
    lam = Lamar(str(tmp_path / "s.db"), k=2, seed=3, holdout=0.3)
    flaky = lam.add(Experience("a test is flaky", "pin the seeds", scope=Scope(task="flaky")))
    for i in range(60):
        lam.report(lam.recall({"task": "flaky"}).episode_id, Signal.SHIPPED if i % 3 else Signal.CORRECTED)
    for pi, said in ((1.5, "1.5"), (-0.2, "-0.2"), (float("nan"), "nan"), (float("inf"), "inf"), ("0.5", "'0.5'"),
                     (None, "None")):
        with pytest.raises(InvalidArgument, match=rf"policy 'custom' gives lesson '{flaky}' the inclusion "
                                                  rf"probability {said}.*a number in \[0, 1\]"):
            lam.whatif([_Gives(flaky, pi)])
    with pytest.raises(InvalidArgument, match=r"policy 'holdout:1.5' gives .* a number in \[0, 1\]"):
        lam.whatif([Holdout(1.5)])
    with pytest.raises(InvalidArgument, match=r"policy 'listed': changes\(\) returns a mapping .*got list"):
        lam.whatif([_Listed()])
    # A lesson not eligible in an episode is one the log left out there for certain (p = 0).
    assert lam.whatif([_Gives("exp_elsewhere", 0.0)])["custom"].supported == 60
    assert lam.whatif([_Gives("exp_elsewhere", 0.5)])["custom"].supported == 0
    lam.close()


@dataclasses.dataclass(frozen=True)
class _Listed:
    name: str = "listed"
    description: str = "changes as a list"

    def changes(self, episode: object, fold: int = 0) -> list[str]:
        return ["a"]


def test_a_very_long_name_lesson_or_value_is_shortened_in_the_message(tmp_path: Path) -> None:
    lam = Lamar(str(tmp_path / "s.db"), k=2, seed=3, holdout=0.3)
    flaky = lam.add(Experience("a test is flaky", "pin the seeds", scope=Scope(task="flaky")))
    for i in range(40):
        lam.report(lam.recall({"task": "flaky"}).episode_id, Signal.SHIPPED if i % 3 else Signal.CORRECTED)
    long = "x" * 100_000
    for alternative in ([_Gives("exp_" + long, 1.5, name="p_" + long)], [_Gives(flaky, "9" * 100_000)],
                        "without:exp_" + long, "holdout:" + long, [_Listed(name="p_" + long)]):
        with pytest.raises(InvalidArgument) as refused:
            lam.whatif(alternative)  # type: ignore[arg-type]
        assert len(str(refused.value)) < 600 and "100" in str(refused.value), str(refused.value)[:300]
    lam.close()


def test_without_a_lesson_no_logged_episode_had_eligible_says_why(tmp_path: Path) -> None:
    # Each of these lessons has a scope the logged contexts match, so "no context matched" would be untrue.
    lam = Lamar(str(tmp_path / "s.db"), k=3, seed=5, holdout=0.3)
    pair = [lam.add(Experience("a test is flaky", action, scope=Scope(task="flaky")))
            for action in ("pin the seeds", "pin the random seeds")]
    lam.apply(report := lam.sleep(), only=[p.id for p in report if p.kind == "merge"])
    copy, keeper = sorted(pair, key=lambda lesson: lam.get(lesson).provenance.get("merged_into") is None)
    assert lam.get(copy).provenance.get("merged_into") == keeper
    old = lam.add(Experience("a test is flaky", "retry the network", scope=Scope(task="flaky")))
    for i in range(60):
        rec = lam.recall({"task": "flaky"})
        lam.report(rec.episode_id, Signal.SHIPPED if keeper in rec.ids or i % 4 == 0 else Signal.CORRECTED)
    lam.retire(old)
    lam.apply(report := lam.sleep(keep_last=0), only=[p.id for p in report if p.kind == "compact"])
    for i in range(40):
        rec = lam.recall({"task": "flaky"})
        lam.report(rec.episode_id, Signal.SHIPPED if keeper in rec.ids or i % 4 == 0 else Signal.CORRECTED)
    new = lam.add(Experience("a test is flaky", "quarantine it", scope=Scope(task="flaky")))
    said = {}
    for lesson in (copy, old, new):
        for since in (None, 0.0):  # a selection that left nothing out is no reason to widen it
            with pytest.raises(InvalidArgument, match=f"lesson '{lesson}' was not eligible in any reported "
                                                      "episode") as refused:
                lam.whatif(f"without:{lesson}", since=since)
            assert "no context matched" not in str(refused.value) and "widen" not in str(refused.value)
            said[lesson] = str(refused.value)
    assert f"merged into '{keeper}': ask for without:{keeper} instead" in said[copy]
    assert "compacted by sleep" in said[old]
    assert "added after the last reported episode its scope matches" in said[new]
    lam.close()


def test_a_selection_without_a_coin_under_a_holdout_above_zero_is_not_told_to_keep_one(tmp_path: Path) -> None:
    # The holdout is 0.3: the coins stopped once no verdict was within reach (a lesson that changes nothing),
    # so only the first episodes carry one, and a selection after them, or a log compacted past them, has none.
    lam = Lamar(str(tmp_path / "s.db"), k=2, seed=11, holdout=0.3)
    lam.add(Experience("a test is flaky", "pin the seeds", scope=Scope(task="flaky")))
    for i in range(120):
        lam.report(lam.recall({"task": "flaky"}).episode_id, Signal.SHIPPED if i % 2 else Signal.CORRECTED)
    episodes = read_log(lam.store).episodes
    last = max(j for j, e in enumerate(episodes) if any(0.0 < p < 1.0 for p in e.slate.p.values()))
    assert last < 20
    with pytest.raises(LamarError, match="none with a logged coin") as refused:
        lam.whatif(since=episodes[last + 1].time)
    said = str(refused.value)
    assert "never randomized" not in said and "within reach" in said, said
    assert said.endswith("widen since/scope to episodes that had some"), said
    lam.apply(report := lam.sleep(keep_last=100), only=[p.id for p in report if p.kind == "compact"])
    with pytest.raises(LamarError, match="none with a logged coin") as refused:
        lam.whatif()
    said = str(refused.value)
    assert "within reach" in said and "widen" not in said, said
    lam.close()


def test_without_a_merged_lesson_whose_episodes_were_compacted_says_they_were(tmp_path: Path) -> None:
    # Merged after it was eligible in episodes that sleep then compacted: what leaves it out of every
    # episode is the compaction, and the lesson it was merged into speaks only for the episodes after.
    lam = Lamar(str(tmp_path / "s.db"), k=3, seed=5, holdout=0.3)
    pair = [lam.add(Experience("a test is flaky", action, scope=Scope(task="flaky")))
            for action in ("pin the seeds", "pin the random seeds")]
    for i in range(40):
        lam.report(lam.recall({"task": "flaky"}).episode_id, Signal.SHIPPED if i % 3 else Signal.CORRECTED)
    lam.apply(report := lam.sleep(), only=[p.id for p in report if p.kind == "merge"])
    copy, keeper = sorted(pair, key=lambda lesson: lam.get(lesson).provenance.get("merged_into") is None)
    assert lam.get(copy).provenance.get("merged_into") == keeper and lam.evidence(copy).eligible == 40
    lam.apply(report := lam.sleep(keep_last=0), only=[p.id for p in report if p.kind == "compact"])
    for i in range(60):
        rec = lam.recall({"task": "flaky"})
        lam.report(rec.episode_id, Signal.SHIPPED if pair[0] in rec.ids or i % 4 == 0 else Signal.CORRECTED)
    with pytest.raises(InvalidArgument, match=f"lesson '{copy}' was not eligible in any reported episode") as refused:
        lam.whatif(f"without:{copy}")
    said = str(refused.value)
    assert "compacted by sleep" in said and f"merged into '{keeper}'" in said, said
    lam.close()


@pytest.mark.parametrize("holdout", [None, 0.3])
def test_a_selection_without_a_coin_names_this_stores_holdout_and_the_trade_of_a_higher_one(
        tmp_path: Path, holdout: float | None) -> None:
    # A first week at the default holdout: the coins stop once no verdict is within reach, so a recent
    # selection has none. "Keep the holdout above zero" tells a user already above it nothing: the message
    # names the holdout the store runs at, the lever (a higher one) and what it costs.
    tuning = {} if holdout is None else {"holdout": holdout}
    lam = Lamar(str(tmp_path / "s.db"), k=2, seed=11, **tuning)
    lam.add(Experience("a test is flaky", "pin the seeds", scope=Scope(task="flaky")))
    for i in range(120):
        lam.report(lam.recall({"task": "flaky"}).episode_id, Signal.SHIPPED if i % 2 else Signal.CORRECTED)
    episodes = read_log(lam.store).episodes
    last = max(j for j, e in enumerate(episodes) if any(0.0 < p < 1.0 for p in e.slate.p.values()))
    with pytest.raises(LamarError, match="none with a logged coin") as refused:
        lam.whatif(since=episodes[last + 1].time)
    said = str(refused.value)
    assert f"this store's holdout={lam.policy.holdout:g}" in said, said
    assert "keep the holdout above zero" not in said, said
    assert holdout_lever() in said and "lift" in said, said
    assert '"What a project can expect: volume"' in said, said
    assert said.endswith("and ask again once episodes with a coin are logged, "
                         "or widen since/scope to episodes that had some"), said
    lam.close()


def test_a_selection_that_is_answered_never_reads_the_whole_log(tmp_path: Path, monkeypatch) -> None:
    # The whole log only words a refusal (whether widening since/scope would help): an answered selection
    # would fold the store's log a second time for nothing.
    import time

    import lamar.whatif.ask

    lam = Lamar(str(tmp_path / "s.db"), k=2, seed=11, holdout=0.5)
    for action in ("pin the seeds", "mock the clock"):
        lam.add(Experience("a test is flaky", action, scope=Scope(task="flaky")))
    for i in range(60):
        lam.report(lam.recall({"task": "flaky"}).episode_id, Signal.SHIPPED if i % 2 else Signal.REVERTED)
    reads: list[tuple[object, ...]] = []
    read = lamar.whatif.ask.read_log

    def counted(store, *selection):  # type: ignore[no-untyped-def]
        reads.append(selection)
        return read(store, *selection)

    monkeypatch.setattr(lamar.whatif.ask, "read_log", counted)
    report = lam.whatif("none", scope={"task": "flaky"})
    assert report.alternatives and reads == [(None, {"task": "flaky"})], reads  # the selection alone
    reads.clear()
    with pytest.raises(LamarError, match="in this selection"):
        lam.whatif("none", since=time.time() + 60)
    assert () in reads, reads  # a refusal still reads the whole log to word its advice
    lam.close()
