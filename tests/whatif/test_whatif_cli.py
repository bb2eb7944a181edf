"""`lamar whatif` on a real SQLite store: the table, --json, the options, the refusals and exit codes."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from lamar import Experience, Lamar, Scope, Signal
from lamar.cli import main
from lamar.store import open_store
from lamar.store.base import Event
from lamar.whatif.estimators import narrowest


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = main(list(argv))
    return status, out.getvalue(), err.getvalue()


def _with_a_coin(path: Path) -> int:
    """Episodes in the log with at least one lesson on a coin (0 < p < 1), counted from the store."""
    store = open_store(str(path))
    try:
        return sum(1 for e in store.read(0) if e.kind == "episode" and any(0.0 < p < 1.0 for p in e.data["p"].values()))
    finally:
        store.close()


def test_the_table_shows_each_policy_beside_the_logged_one(logged: Path) -> None:
    status, out, err = run("whatif", "--store", str(logged))
    assert status == 0, err
    coins = _with_a_coin(logged)
    assert 0 < coins < 800  # the engine flips a coin only where a verdict is within reach
    assert f"800 logged, 800 reported, {coins} of them with a coin" in out
    lines = out.splitlines()
    for policy in ("logged", "none", "proven", "today", "holdout:0", "k:1"):
        assert any(line.startswith(policy + " ") for line in lines), policy
    assert "outside: share of episodes" in out


def test_json_carries_every_estimator_with_its_interval(logged: Path) -> None:
    status, out, _ = run("whatif", "--store", str(logged), "--json", "--policy", "none", "--policy", "holdout:0.3")
    assert status == 0
    data = json.loads(out)
    assert [row["policy"] for row in data["alternatives"]] == ["none", "holdout:0.3"]
    row = data["alternatives"][1]
    assert set(row["success"]) == {"logged", "ips", "snips", "dr", "pi", "pi-dr"}
    dr = row["success"]["dr"]
    # Holding out 30% is supported where the log flipped a coin, or where nothing was wanted.
    assert dr["lower"] <= dr["value"] <= dr["upper"] and dr["n"] == row["supported"]
    assert _with_a_coin(logged) // 2 <= row["supported"] < 800
    with Lamar(str(logged)) as lam:
        direct = lam.whatif(["none", "holdout:0.3"]).to_dict()
    assert data == json.loads(json.dumps(direct))


def test_scope_since_and_estimators(logged: Path) -> None:
    status, out, _ = run("whatif", "--store", str(logged), "--json", "--scope", "task=deploy_service",
                         "--since", "0", "--policy", "none")
    assert status == 0
    data = json.loads(out)
    assert 100 < data["reported"] < 300  # one task of four
    status, out, _ = run("whatif", "--store", str(logged), "--policy", "none", "--estimator", "ips",
                         "--estimator", "pi")
    assert status == 0
    assert [line.split()[1] for line in out.splitlines() if line.startswith("none ")] == ["ips", "pi"]
    status, out, _ = run("whatif", "--store", str(logged), "--policy", "none", "--policy", "NONE", "--estimator",
                         "pi", "--estimator", "ips", "--estimator", "pi")
    assert status == 0  # each policy and each estimator asked twice is one row
    assert [line.split()[1] for line in out.splitlines() if line.startswith("none ")] == ["pi", "ips"]
    status, out, _ = run("whatif", "--store", str(logged), "--since", "1d", "--json")
    assert status == 0 and json.loads(out)["reported"] == 800  # the fixture logged them minutes ago
    status, _, err = run("whatif", "--store", str(logged), "--since", "2999-01-01")
    assert status == 1 and "0 reported episode(s) in this selection" in err


def test_a_scope_value_no_episode_has_is_named_with_the_values_there(logged: Path) -> None:
    # --scope task=deploy_servce (a typo) was told only "0 reported episode(s) in this selection".
    status, _, err = run("whatif", "--store", str(logged), "--scope", "task=deploy_servce")
    assert status == 1 and "scope task='deploy_servce' matches none of the logged episodes' contexts" in err, err
    assert "the values of 'task' there: " in err and "'deploy_service'" in err, err
    status, _, err = run("whatif", "--store", str(logged), "--scope", "tsk=deploy_service")
    assert status == 1 and "none has the key 'tsk'; the keys there: " in err and "'task'" in err, err
    status, _, err = run("whatif", "--store", str(logged), "--scope", "task=deploy_service", "--since", "2999-01-01")
    assert status == 1 and "0 reported episode(s) in this selection" in err, err  # the pair is there: since is not


def test_refusals_name_what_is_missing(tmp_path: Path, logged: Path) -> None:
    path = tmp_path / "few.db"
    with Lamar(str(path)) as lam:
        lam.add(Experience("a deploy fails", "drain the pods"))
        lam.report(lam.recall({"task": "deploy"}).episode_id, Signal.SHIPPED)
    status, _, err = run("whatif", "--store", str(path))
    assert status == 1 and "1 reported episode(s)" in err and "at least 30" in err
    status, _, err = run("whatif", "--store", str(tmp_path / "absent.db"))
    assert status == 2 and "no store at" in err
    status, _, err = run("whatif", "--store", str(logged), "--policy", "sometimes")
    assert status == 1 and "unknown policy 'sometimes'" in err
    status, _, err = run("whatif", "--store", str(logged), "--policy", "holdot:0.1")
    assert status == 1 and "unknown policy 'holdot:0.1' (did you mean 'holdout:0.1'?)" in err, err
    for when in ("last tuesday", "nan", "inf", "9" * 400 + "d"):
        status, _, err = run("whatif", "--store", str(logged), "--since", when)
        assert status == 1 and "--since takes" in err, when


def test_a_policy_the_log_cannot_support_is_said_so_and_gives_no_number(tmp_path: Path) -> None:
    # k = 1 everywhere: every episode's one slot was taken while other lessons sat at p = 0, so
    # three slots would need lessons the log never tried there.
    # An episode in which the selector wanted no lesson would have been the same with three slots:
    # a warm-up of 20 keeps every lesson wanted (cold) for all 60 episodes.
    path = tmp_path / "one.db"
    taken = 0
    with Lamar(str(path), k=1, seed=2, warmup=20) as lam:
        for action in ("pin the seeds", "mock the clock", "retry the network"):
            lam.add(Experience("a test is flaky", action))
        for i in range(60):
            rec = lam.recall({"task": "flaky"})
            lam.report(rec.episode_id, Signal.SHIPPED if i % 2 else Signal.REASKED)
            episode = lam.episode(rec.episode_id)
            taken += bool(episode.injected or episode.held_out)
    assert taken == 60
    status, out, _ = run("whatif", "--store", str(path), "--json", "--policy", "k:3")
    assert status == 0
    (row,) = json.loads(out)["alternatives"]
    assert row["outside"] == 1.0 and row["supported"] == 0
    assert all(value is None for value in row["success"]["dr"].values() if value != 0)
    status, out, _ = run("whatif", "--store", str(path), "--policy", "k:3")
    assert "not evaluable" in out and "every episode is outside the support" in out


def test_equal_outcomes_on_few_episodes_print_an_interval_not_a_point(tmp_path: Path) -> None:
    # Every episode shipped: the sample spread is 0 everywhere, and no memory rests on the few
    # episodes with a lesson held out. An interval of zero width would claim certainty.
    path = tmp_path / "same.db"
    with Lamar(str(path), k=2, seed=1) as lam:
        for action in ("pin the seeds", "mock the clock", "retry the network"):
            lam.add(Experience("a test is flaky", action, scope=Scope(task="flaky")))
        for _ in range(40):
            lam.report(lam.recall({"task": "flaky"}).episode_id, Signal.SHIPPED)
    status, out, err = run("whatif", "--store", str(path), "--policy", "none", "--estimator", "dr")
    assert status == 0, err
    assert "100.0% [100.0, 100.0]" not in out and "[+1.000, +1.000]" not in out
    status, out, _ = run("whatif", "--store", str(path), "--json", "--policy", "none")
    (row,) = json.loads(out)["alternatives"]
    assert 0 < row["effective"] < 30
    for name, estimate in row["success"].items():  # the logged policy's rests on every supported episode
        episodes = row["supported"] if name == "logged" else row["effective"]
        assert estimate["upper"] - estimate["lower"] >= narrowest(episodes, 1.0) - 1e-9, name
    logged = row["success"]["logged"]
    assert logged["lower"] == pytest.approx(1.0 - narrowest(row["supported"], 1.0)) and logged["upper"] == 1.0


def test_an_interval_over_the_whole_range_says_why_and_what_to_read(logged: Path) -> None:
    # In 800 episodes the log never held out both wanted lessons at once often enough for `none`:
    # its doubly robust interval is the whole range, which the table says, pointing at PI-DR, and
    # the row is thin: the coins predict few effective episodes, whatever the weights it saw.
    status, out, _ = run("whatif", "--store", str(logged), "--json", "--policy", "none", "--policy", "holdout:0")
    assert status == 0
    none, holdout = json.loads(out)["alternatives"]
    assert (none["success"]["dr"]["lower"], none["success"]["dr"]["upper"]) == (0.0, 1.0) and none["thin"]
    assert holdout["success"]["dr"]["upper"] - holdout["success"]["dr"]["lower"] < 0.2
    status, out, _ = run("whatif", "--store", str(logged), "--policy", "none", "--policy", "holdout:0")
    notes = [line for line in out.splitlines() if "spans the whole range" in line]
    assert len(notes) == 1 and notes[0].startswith("none: dr spans the whole range") and "pi-dr" in notes[0]


def test_without_takes_a_lesson_id_shortened_as_every_command_takes_it(tmp_path: Path) -> None:
    path = tmp_path / "ids.db"
    with Lamar(str(path), k=2, seed=1, holdout=0.3) as lam:
        ids = [lam.add(Experience("a test is flaky", action)) for action in ("pin the seeds", "mock the clock")]
        for i in range(60):
            lam.report(lam.recall({"task": "flaky"}).episode_id, Signal.SHIPPED if i % 3 else Signal.CORRECTED)
    lesson = ids[0]
    short = next(lesson[:n] for n in range(5, len(lesson)) if sum(i.startswith(lesson[:n]) for i in ids) == 1)
    status, out, err = run("whatif", "--store", str(path), "--json", "--policy", f"without:{short}")
    assert status == 0, err
    status, full, _ = run("whatif", "--store", str(path), "--json", "--policy", f"without:{lesson}")
    assert json.loads(out) == json.loads(full)
    assert [row["policy"] for row in json.loads(out)["alternatives"]] == [f"without:{lesson}"]
    status, _, err = run("whatif", "--store", str(path), "--policy", "without:exp_")
    assert status == 1 and "give more of the id" in err


def test_a_policy_with_one_supported_episode_is_not_said_to_have_none(tmp_path: Path) -> None:
    # One lesson, injected at p = 1 in 39 episodes and held out by its coin in one: no memory is
    # supported in that one episode alone, too few to estimate from, and the table says so.
    path = tmp_path / "one.db"
    _one_lesson_log(path, [(j == 0, 0.8 if j == 0 else 1.0, 1.0) for j in range(40)])
    status, out, err = run("whatif", "--store", str(path), "--json", "--policy", "none")
    assert status == 0, err
    (row,) = json.loads(out)["alternatives"]
    assert row["supported"] == 1 and row["effective"] == pytest.approx(1.0)
    status, out, _ = run("whatif", "--store", str(path), "--policy", "none")
    assert "every episode is outside the support" not in out
    assert "none: only 1 of 40 episodes is inside the support, too few to estimate from" in out
    (line,) = [line for line in out.splitlines() if line.startswith("none ")]
    assert line.split()[1:4] == ["-", "98%", "1"]


def test_the_legend_of_outside_covers_a_policy_that_leaves_lessons_out(logged: Path) -> None:
    # No memory injects nothing, yet most episodes are outside its support: there the log injected
    # a wanted lesson for certain (p = 1), which the legend must say as well as the other case.
    status, out, _ = run("whatif", "--store", str(logged), "--json", "--policy", "none")
    (row,) = json.loads(out)["alternatives"]
    assert status == 0 and row["outside"] > 0.5
    status, out, _ = run("whatif", "--store", str(logged), "--policy", "none")
    assert status == 0
    legend = " ".join(out[out.index("outside: share of episodes"):].splitlines()[:2])
    assert "inject a lesson the log left out for certain" in legend
    assert "leave out one it injected for certain" in legend


def shares_store(path: Path) -> tuple[str, str]:
    """Lessons (A, B) over 500 episodes: A had a coin in 2 (p = 1 elsewhere), B in all but 1, so no
    memory rests on 2 episodes (not none), and leaving B out drops 1 episode (not none)."""
    with Lamar(str(path)) as lam:
        a, b = (lam.add(Experience("a test is flaky", action)) for action in ("pin the seeds", "mock the clock"))
    store = open_store(str(path))
    try:
        events = []
        for j in range(500):
            p = {a: 0.8 if j < 2 else 1.0, b: 1.0 if j == 499 else 0.8}
            held = [i for i in (a, b) if p[i] < 1.0 and (j + (i == b)) % 5 == 0]
            events += [Event("episode", {"id": f"ep_{j}", "context": {"task": "flaky"}, "eligible": [a, b],
                                         "injected": [i for i in (a, b) if i not in held], "held_out": held, "p": p},
                             key=f"episode:ep_{j}"),
                       Event("outcome", {"episode": f"ep_{j}", "reward": 1.0 if j % 3 else -1.0,
                                         "signal": "shipped" if j % 3 else "reverted", "replace": False},
                             key=f"outcome:ep_{j}")]
        store.append(events)
    finally:
        store.close()
    return a, b


def test_an_outside_share_is_not_rounded_to_all_or_nothing(tmp_path: Path) -> None:
    path = tmp_path / "shares.db"
    _, b = shares_store(path)
    status, out, err = run("whatif", "--store", str(path), "--json", "--policy", "none", "--policy", f"without:{b}")
    assert status == 0, err
    none, without = json.loads(out)["alternatives"]
    assert (none["supported"], without["supported"]) == (2, 499)
    status, out, _ = run("whatif", "--store", str(path), "--policy", "none", "--policy", f"without:{b}")
    outside = {line.split()[0]: line.split()[2] for line in out.splitlines() if line.startswith(("none ", "without:"))}
    assert outside == {"none": ">99%", f"without:{b}": "<1%"}


def test_episodes_compacted_away_are_said_to_be_left_out(tmp_path: Path) -> None:
    # A compaction folds old episodes into counts: `lamar stats` still counts them, the what-if
    # cannot (their coins are gone), and the table says so rather than disagree without a word.
    path = tmp_path / "compacted.db"
    with Lamar(str(path), k=2, seed=1, holdout=0.3) as lam:
        for action in ("pin the seeds", "mock the clock"):
            lam.add(Experience("a test is flaky", action))
        for i in range(200):
            lam.report(lam.recall({"task": "flaky"}).episode_id, Signal.SHIPPED if i % 3 else Signal.CORRECTED)
        sleep = lam.sleep(keep_last=60)
        lam.apply(sleep, only=[p.id for p in sleep.of_kind("compact")])
        compacted = lam.stats()["compacted"]["episodes"]
    assert compacted > 100
    status, out, err = run("whatif", "--store", str(path), "--policy", "holdout:0")
    assert status == 0, err
    assert f"{200 - compacted} logged" in out
    assert f"{compacted} older episodes compacted by sleep are left out" in out
    status, out, _ = run("whatif", "--store", str(tmp_path / "compacted.db"), "--json", "--policy", "holdout:0")
    assert json.loads(out)["logged"] == 200 - compacted


def test_minus_zero_is_the_holdout_zero_and_one_row_with_it(logged: Path) -> None:
    status, out, err = run("whatif", "--store", str(logged), "--json", "--policy", "holdout:0", "--policy",
                           "holdout:-0")
    assert status == 0, err
    (row,) = json.loads(out)["alternatives"]
    assert row["policy"] == "holdout:0" and row["description"].endswith("held out at 0%")


def test_a_k_is_read_as_typed_and_held_to_the_engines_most_slots(logged: Path) -> None:
    typed = "k:1000"
    status, out, err = run("whatif", "--store", str(logged), "--json", "--policy", typed)
    assert status == 0, err
    (row,) = json.loads(out)["alternatives"]
    assert row["policy"] == typed and row["description"].startswith("1000 slots")
    # A k past the engine's most slots named a row as long as the k typed (k:99999999999 ran).
    for k in ("1000.5", "1001", "99999999999", "12345678901234567890123"):
        status, _, err = run("whatif", "--store", str(logged), "--policy", f"k:{k}")
        said = f"policy 'k:{k}': k is a whole number from 1 to 1,000 written in digits (such as k:2); got '{k}'"
        assert (status, err) == (1, f"lamar: error: {said}\n"), k


def test_a_holdout_and_since_are_read_as_typed(logged: Path) -> None:
    # float() read `0_5` as 5.0 and `0_0` as a holdout of 0, and Arabic-Indic digits as ours.
    for policy in ("holdout:0_0", "holdout:\u0660.5", "holdout:\uff10.5"):
        status, _, err = run("whatif", "--store", str(logged), "--policy", policy)
        assert status == 1 and "is not a number written in ASCII digits (such as holdout:0.05)" in err, policy
    for when in ("1_000", "\u0661\u0660", "\u0661d", "\u0662\u0660\u0662\u0666-01-01"):
        status, _, err = run("whatif", "--store", str(logged), "--since", when)
        assert status == 1 and "--since takes" in err, when
    status, _, err = run("whatif", "--store", str(logged), "--since", " 1e3 ", "--policy", "holdout:.05")
    assert status == 0, err


def test_the_ui_page_shows_outside_shares_and_their_legend_as_the_cli_does(tmp_path: Path) -> None:
    from lamar_ui.pages import whatif_page

    path = tmp_path / "shares.db"
    _, b = shares_store(path)
    with Lamar(str(path)) as lam:
        page = whatif_page(lam.whatif(["none", f"without:{b}"]), "")
    cells = {row.split('"')[1]: row for row in page.split('<tr data-policy=')[1:]}
    assert ">&gt;99%</td>" in cells["none"] and ">&lt;1%</td>" in cells[f"without:{b}"]
    assert "inject a lesson the log left out for certain, or leave out one it injected for certain" in page


def test_proven_with_nothing_proven_says_why_its_row_repeats_none(logged: Path) -> None:
    from lamar_ui.pages import whatif_page

    # No lesson of this gym log is proven yet: `proven` injects nothing, as `none` does.
    status, out, err = run("whatif", "--store", str(logged), "--policy", "none", "--policy", "proven")
    assert status == 0, err
    rows = [line.split(None, 2)[2] for line in out.splitlines() if line.startswith(("none ", "proven "))]
    assert len(rows) == 2 and rows[0] == rows[1]
    assert "proven: no lesson eligible in these episodes is proven to help today, so it injects nothing: " \
           "the same as none" in out
    with Lamar(str(logged)) as lam:
        page = whatif_page(lam.whatif(["none", "proven"]), "")
    assert "so it injects nothing: the same as none</td>" in page.split('<tr data-policy="proven">')[1]


def test_an_estimate_past_what_is_possible_is_shown_inside_its_interval(tmp_path: Path) -> None:
    # One lesson on a coin of 0.8 in 40 episodes, held out in 12 (8 expected) that all shipped:
    # no memory weighs each of them by 1 / 0.2 = 5, and IPS sums to 12 x 5 / 40 = 150% success.
    path = tmp_path / "thin.db"
    _one_lesson_log(path, [(j < 12, 0.8, 1.0 if j < 12 or j % 2 else -1.0) for j in range(40)])
    status, out, err = run("whatif", "--store", str(path), "--json", "--policy", "none")
    assert status == 0, err
    (row,) = json.loads(out)["alternatives"]
    for outcome, low in (("success", 0.0), ("reward", -1.0)):
        for name, e in row[outcome].items():
            assert low <= e["lower"] <= e["value"] <= e["upper"] <= 1.0, (outcome, name)
    # --json keeps the estimators' own values beside the ones shown
    assert row["success"]["ips"]["raw"] == pytest.approx(1.5) and row["reward"]["dr"]["raw"] > 1.0
    for e in (*row["success"].values(), *row["reward"].values()):
        assert e["value"] == min(max(e["raw"], e["lower"]), e["upper"])
    status, out, err = run("whatif", "--store", str(path), "--policy", "none",
                           "--estimator", "dr", "--estimator", "ips")
    assert status == 0, err
    cells = [line.split()[5:9] for line in out.splitlines() if line.startswith("none ")]  # after "12 thin"
    assert cells == [["100.0%", f"[{100 * row['success'][name]['lower']:.1f},", "100.0]", "+1.000"]
                     for name in ("dr", "ips")]


def test_the_table_quotes_the_interval_for_this_reading_and_anytime_the_sequence(logged: Path) -> None:
    status, out, _ = run("whatif", "--store", str(logged), "--json", "--policy", "holdout:0.3")
    assert status == 0
    (row,) = json.loads(out)["alternatives"]
    dr = row["success"]["dr"]
    assert dr["anytime_lower"] < dr["lower"] < dr["upper"] < dr["anytime_upper"]
    shown = {}
    for flag in ((), ("--anytime",)):
        status, out, err = run("whatif", "--store", str(logged), "--policy", "holdout:0.3", *flag)
        assert status == 0, err
        (line,) = [line for line in out.splitlines() if line.startswith("holdout:0.3 ")]
        shown[flag] = (line, out)
    line, out = shown[()]
    assert f"[{100 * dr['lower']:.1f}, {100 * dr['upper']:.1f}]" in line and "success [95%]" in out
    assert "[95%]: the interval for this one reading of the log" in out
    line, out = shown[("--anytime",)]
    assert f"[{100 * dr['anytime_lower']:.1f}, {100 * dr['anytime_upper']:.1f}]" in line
    assert "success [anytime 95%]" in out and "valid however often you ask" in out


def _one_lesson_log(path: Path, episodes: list[tuple[bool, float, float]]) -> None:
    """A store of one lesson and these episodes, each (held out by its coin, its p, the reward)."""
    with Lamar(str(path)) as lam:
        lesson = lam.add(Experience("a test is flaky", "pin the seeds"))
    store = open_store(str(path))
    try:
        for j, (held, p, reward) in enumerate(episodes):
            store.append([Event("episode", {"id": f"ep_{j}", "context": {"task": "flaky"}, "eligible": [lesson],
                                            "injected": [] if held else [lesson], "held_out": [lesson] if held else [],
                                            "p": {lesson: p}}, key=f"episode:ep_{j}"),
                          Event("outcome", {"episode": f"ep_{j}", "reward": reward, "replace": False,
                                            "signal": "shipped" if reward > 0 else "corrected"},
                                key=f"outcome:ep_{j}")])
    finally:
        store.close()


def test_an_episode_id_given_for_a_lesson_is_called_one_by_show_and_whatif(tmp_path: Path) -> None:
    # `lamar show` and `lamar whatif`'s without:ID built their own refusals, which said only "no lesson",
    # where the engine (and the MCP tools) say that the id is an episode's.
    path = tmp_path / "ids.db"
    with Lamar(str(path), k=2, seed=1, holdout=0.3) as lam:
        lam.add(Experience("a test is flaky", "pin the seeds"))
        episodes = [lam.recall({"task": "flaky"}).episode_id for _ in range(40)]
        for i, episode in enumerate(episodes):
            lam.report(episode, Signal.SHIPPED if i % 3 else Signal.CORRECTED)
    note = "(that is an episode id, not a lesson id); `lamar ls` lists the ids"
    status, _, err = run("show", "--store", str(path), episodes[0])
    assert status == 1 and f"no lesson '{episodes[0]}' in store {path} {note}" in err, err
    status, _, err = run("whatif", "--store", str(path), "--policy", f"without:{episodes[0]}")
    assert status == 1 and f"policy 'without:{episodes[0]}': no lesson '{episodes[0]}' in store {path} {note}" in err
    status, _, err = run("show", "--store", str(path), "exp_0123456789abcdef")  # neither kind: no note
    assert status == 1 and f"no lesson 'exp_0123456789abcdef' in store {path}; `lamar ls`" in err, err
