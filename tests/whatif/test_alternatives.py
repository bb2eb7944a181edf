"""The alternatives: what each one changes in an episode, and the names that parse."""

from __future__ import annotations

import pytest

from lamar import InvalidArgument
from lamar.whatif.alternatives import Beliefs, Holdout, NoMemory, Proven, Slots, Today, Without, form, parse
from lamar.whatif.log import Log, LoggedEpisode
from lamar.whatif.slate import Slate

BELIEFS = Beliefs(lift={"a": 0.3, "b": 0.1, "c": -0.2, "d": 0.05}, proven=frozenset({"a"}), k=2,
                  holdout=0.15, holdout_decided=0.05)


def episode(p: dict[str, float], injected: set[str], held_out: frozenset[str] = frozenset()) -> Slate:
    return Slate(p, frozenset(injected), frozenset(held_out))


LOG = Log.of([LoggedEpisode("ep", 0.0, Slate({"a": 0.85, "b": 0.0}, frozenset({"a"})), 1.0, True)])


def test_no_memory_and_without_drop_what_the_log_could_inject() -> None:
    ep = episode({"a": 0.85, "b": 0.5, "c": 0.0}, {"a"})
    assert NoMemory().changes(ep) == {"a": 0.0, "b": 0.0}
    assert Without("b").changes(ep) == {"b": 0.0}
    assert Without("c").changes(ep) == {}  # never injected there: nothing to change


def test_holdout_moves_only_the_wanted_lessons_coins() -> None:
    ep = episode({"a": 0.85, "b": 0.5, "c": 0.95, "d": 0.0}, {"a", "c"})
    assert Holdout(0.0).changes(ep) == {"a": 1.0, "b": 1.0, "c": 1.0}  # d was not wanted: it stays out
    assert Holdout(0.05).changes(ep) == {"a": 0.95, "b": 0.95}  # c already has 0.95


def test_fewer_slots_keep_the_wanted_lessons_that_rank_first_today() -> None:
    ep = episode({"a": 0.85, "b": 0.85, "c": 0.0}, {"a"}, {"b"})
    assert Slots(1, BELIEFS).changes(ep) == {"b": 0.0}
    assert Slots(2, BELIEFS).changes(ep) == {}


def test_fewer_slots_rank_on_the_other_folds_when_given_their_lifts() -> None:
    ep = episode({"a": 0.85, "b": 0.85}, {"a", "b"})
    lifts = ({"a": 0.1, "b": 0.3}, {"a": 0.3, "b": 0.1})  # fold 0 measured b higher, fold 1 a
    assert Slots(1, BELIEFS, lifts).changes(ep, 0) == {"a": 0.0}
    assert Slots(1, BELIEFS, lifts).changes(ep, 1) == {"b": 0.0}
    assert Slots(1, BELIEFS).changes(ep, 1) == {"b": 0.0}  # without them: today's lift (a: 0.3)


def test_more_slots_need_a_lesson_the_log_never_tried_when_its_slots_were_full() -> None:
    full = episode({"a": 0.85, "b": 0.85, "d": 0.0}, {"a", "b"})
    assert Slots(3, BELIEFS).changes(full) == {"d": 0.85}  # p = 0 there: outside the support
    spare = episode({"a": 0.85, "d": 0.0}, {"a"})  # the selector wanted one lesson of two slots
    assert Slots(3, BELIEFS).changes(spare) == {}


def test_proven_and_today_inject_what_is_believed_now() -> None:
    ep = episode({"a": 0.85, "b": 0.85, "c": 0.5, "d": 0.0}, {"a", "b", "c"})
    assert Proven(BELIEFS).changes(ep) == {"a": 0.95, "b": 0.0, "c": 0.0}
    # today: positive lift, at most k = 2, highest first: a (proven, 0.95) and b (0.85); d is third.
    assert Today(BELIEFS).changes(ep) == {"a": 0.95, "c": 0.0}


@pytest.mark.parametrize(("spec", "name"), [("none", "none"), (" Proven ", "proven"), ("holdout:0.05", "holdout:0.05"),
                                            ("k:1", "k:1"), ("without:a", "without:a"), ("today", "today"),
                                            ("logged", "logged"), ("holdout:-0", "holdout:0"),
                                            ("holdout:-0.0", "holdout:0"), ("K:3", "k:3"), (" k: 3 ", "k:3"),
                                            ("k:1000", "k:1000"), ("holdout: 0.5 ", "holdout:0.5")])
def test_names_parse(spec: str, name: str) -> None:
    assert parse(spec, BELIEFS, LOG).name == name


@pytest.mark.parametrize(("spec", "message"), [
    ("nothing", "unknown policy"), ("holdout:1", r"in \[0, 1\)"), ("holdout:x", "not a number"),
    ("holdout:nan", "not a finite number"), ("k:0", "whole number"), ("k:1.5", "whole number"),
    ("k:12345678901234567890123.5", "whole number"), ("k:1e400", "whole number"),
    # k is read as typed: another spelling of a number (a float's, `_`, other scripts' digits) is refused
    ("k:1e99", "written in digits.*got '1e99'"), ("K:3.0", "got '3.0'"), ("k:1_0", "got '1_0'"),
    ("k:\u0663", "got '\u0663'"), ("k:+2", "got '\\+2'"), ("k:9" + "9" * 5000, "written in digits"),
    # k is held to the engine's most slots; a holdout rate is read as typed, as k is
    ("k:1001", "from 1 to 1,000"), ("k:12345678901234567890123", "from 1 to 1,000"),
    ("holdout:0_5", "not a number written in ASCII digits"), ("holdout:\u0660.5", "ASCII digits"),
    ("without:zzz", "no lesson 'zzz' was eligible"), ("none:1", "unknown policy"),
])
def test_bad_names_are_refused_saying_what_is_allowed(spec: str, message: str) -> None:
    with pytest.raises(InvalidArgument, match=message):
        parse(spec, BELIEFS, LOG)


def test_proven_says_it_is_no_memory_when_no_lesson_of_the_log_is_proven() -> None:
    from lamar.whatif.alternatives import NOTHING_PROVEN

    assert parse("proven", BELIEFS, LOG).description != NOTHING_PROVEN  # a is proven and in the log
    elsewhere = Beliefs(lift=BELIEFS.lift, proven=frozenset({"c"}), k=2, holdout=0.15, holdout_decided=0.05)
    assert parse("proven", elsewhere, LOG).description == NOTHING_PROVEN  # c is proven, never eligible here


def test_a_holdout_description_never_rounds_its_rate_to_none_or_all() -> None:
    # "held out at 0%" would describe holdout:0.001 as holdout:0, and 100% is no holdout rate.
    said = {rate: Holdout(rate).description.rsplit(" at ", 1)[1] for rate in
            (0.0, 0.001, 0.004, 0.05, 0.3, 0.9999999, 0.999999999999999)}
    assert said == {0.0: "0%", 0.001: "0.1%", 0.004: "0.4%", 0.05: "5%", 0.3: "30%", 0.9999999: "99.99999%",
                    0.999999999999999: "99.9999999999999%"}


def test_a_slots_description_counts_in_words() -> None:
    # The What if? page of `lamar ui` read "1 slot(s) per recall instead of 2".
    assert parse("k:1", BELIEFS, LOG).description == "1 slot per recall instead of 2"
    assert parse("k:3", BELIEFS, LOG).description == "3 slots per recall instead of 2"


@pytest.mark.parametrize(("spec", "hint"), [
    ("holdot:0.1", "(did you mean 'holdout:0.1'?)"), ("proovn", "(did you mean 'proven'?)"),
    ("withuot:exp_1", "(did you mean 'without:exp_1'?)"), ("Logd", "(did you mean 'logged'?)"),
])
def test_a_mistyped_policy_name_gets_the_one_it_is_close_to(spec: str, hint: str) -> None:
    # Every other mistyped word of the CLI (a command, an option, a signal) is answered with its likely spelling.
    with pytest.raises(InvalidArgument) as caught:
        form(spec)
    assert hint in str(caught.value)


def test_a_policy_far_from_every_name_gets_no_guess() -> None:
    for spec in ("sometimes", "none:1", "k", "x:1"):
        with pytest.raises(InvalidArgument) as caught:
            form(spec)
        assert "did you mean" not in str(caught.value), spec


@pytest.mark.parametrize("spec", ["none,k:1", "none, holdout:0.3", "K:1,without:exp_1"])
def test_several_policies_in_one_name_are_told_to_be_given_one_by_one(spec: str) -> None:
    # `--estimator` and `--policy` are repeated, yet a comma-separated list is the first thing many try.
    with pytest.raises(InvalidArgument) as caught:
        form(spec)
    parts = [part.strip() for part in spec.split(",")]
    assert "one policy per name: give " + " and ".join(map(repr, parts)) in str(caught.value), caught.value
    assert "--policy " + " --policy ".join(parts) in str(caught.value)
