"""Read-only commands (stats, ls, show) against real JSON and SQLite stores, as subprocesses."""

from __future__ import annotations

import hashlib
import random
from pathlib import Path

import pytest

from lamar import Experience, Lamar, Scope
from lamar.policy.config import holdout_lever
from lamar.store import open_store

COMMANDS = ["stats", "ls", "search", "show", "add", "retire", "revive", "report", "sleep", "review", "apply", "export",
            "import", "html"]


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def episodes_with(path: Path, field: str, exp_id: str) -> list[str]:
    """Ids of the logged episodes whose `field` (injected / held_out) lists the lesson."""
    store = open_store(path)
    try:
        return [e.data["id"] for e in store.read() if e.kind == "episode" and exp_id in e.data[field]]
    finally:
        store.close()


def test_help_of_every_command_exits_0(lamar_cli, run_cli):
    top = lamar_cli("--help")
    assert top.returncode == 0
    for name in COMMANDS:
        assert name in top.stdout
    # Every status `main` returns, as docs/cli.md lists them.
    assert ("Exit status: 0 ok, 1 usage error (the message says what to do), 2 store error or a model "
            "that failed during sleep, 3 a bug in Lamar" in " ".join(top.stdout.split()))
    assert lamar_cli("show", "--help").returncode == 0
    for name in COMMANDS:
        sub = run_cli(name, "--help")
        assert sub.returncode == 0, sub.stderr
        assert f"usage: lamar {name}" in sub.stdout


def test_stats_counts_lessons_episodes_and_reports(lamar_cli, run_cli, store, strict_json):
    before = digest(store)
    text = run_cli("stats", "--store", store)
    data = lamar_cli("--store", store, "stats", "--json")  # --store before the command works too
    assert text.returncode == data.returncode == 0, text.stderr + data.stderr
    stats = strict_json(data.stdout)
    truth = Lamar(str(store)).stats()
    assert stats["experiences"] == truth["experiences"] == 6
    assert stats["by_status"] == {"candidate": 1, "active": 4, "retired": 1}
    assert stats["by_verdict"]["helps"] == 1
    assert stats["episodes"] == 242 and stats["reports"] == 241 and stats["unreported"] == 1
    assert stats["unreported_share"] == pytest.approx(1 / 242)
    assert 0.05 < stats["holdout_rate"] < 0.4  # the builder's coin, q = 0.4, where a verdict was within reach
    assert stats["holdout_cost"]["per_report"] > 0  # the proven lesson was withheld sometimes
    assert stats["bytes"] > 0 and stats["events"] == truth["events"]
    assert "242: 241 reported, 1 never reported (0.4%)" in text.stdout
    assert "1 helps, 0 harms, 4 unknown" in text.stdout
    assert digest(store) == before


def test_stats_with_no_verdict_yet_says_when_to_expect_one(run_cli, tmp_path):
    # A first week: every lesson unknown. "0 helps, 0 harms, 3 unknown" alone read as a store that is not
    # learning; the line under it says none is proven yet, how long a proof takes at this holdout and why.
    store = tmp_path / "week.db"
    lam = Lamar(str(store), seed=5)
    lam.add(Experience("the build fails", "clear the cache", scope=Scope(task="build")))
    lam.add(Experience("a test is flaky", "pin the seeds", scope=Scope(task="test")))
    for i in range(40):
        lam.report(lam.recall({"task": "build" if i % 2 else "test"}).episode_id, "shipped" if i % 3 else "reverted")
    lam.close()
    out = run_cli("stats", "--store", store)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    at = next(j for j, line in enumerate(lines) if line.startswith("verdicts "))
    assert lines[at] == "verdicts   0 helps, 0 harms, 2 unknown (of the 2 not retired)"
    assert lines[at + 1].startswith("           none proven yet, as expected in a young store: at holdout=0.04 "), lines
    end = next(j for j, line in enumerate(lines) if line.startswith("episodes "))
    said = " ".join(line.strip() for line in lines[at + 1:end])
    assert "docs/gym.md" in said and "holdout=0.15" in said and "year" in said, said
    command = f"claude-code install --store {store} --holdout 0.15`"  # the store read, not the default
    assert any(command in line for line in lines[at + 1:end]), lines  # on one line, to be copied as printed


def test_ls_lists_one_line_per_lesson_with_filters(lamar_cli, run_cli, store, ids, strict_json):
    out = lamar_cli("ls", "--store", store)
    assert out.returncode == 0, out.stderr
    table, *notes = out.stdout.split("\n\n")  # under the table: the lessons the selection dropped, if any
    lines = table.splitlines()[1:]
    assert len(lines) == 6 and all(note.startswith("dropped by the selection") for note in notes), out.stdout
    good = next(line for line in lines if line.startswith(ids["good"]))
    assert " helps " in good and "project=trace" in good and "When the build fails" in good
    assert "[+0." in good  # a finite interval above zero
    retired = next(line for line in lines if line.startswith(ids["retired"]))
    assert "n/a" in retired and "retired" in retired

    helps = run_cli("ls", "--store", store, "--verdict", "helps", "--json")
    assert [row["id"] for row in strict_json(helps.stdout)] == [ids["good"]]
    swift = run_cli("ls", "--store", store, "--scope", "language=swift", "--status", "active", "--json")
    assert [row["id"] for row in strict_json(swift.stdout)] == [ids["neutral"], ids["twin"]]
    none = run_cli("ls", "--store", store, "--verdict", "harms")
    assert none.returncode == 0 and none.stdout.strip() == "no lessons match"


def test_ls_of_a_store_with_no_lessons_names_import_rules(run_cli, tmp_path):
    # A Claude Code user's first `lamar ls` said only "add one with `lamar add`", while the CLAUDE.md
    # beside them held the rules `import-rules` makes lessons of.
    store = tmp_path / "empty.db"
    Lamar(str(store)).close()
    out = run_cli("ls", "--store", store)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == (f"no lessons yet: `lamar import-rules --store {store}` shows the rules of this "
                                  "repository's CLAUDE.md or AGENTS.md as lessons (add --apply to keep them); "
                                  f"`lamar add --store {store} --precondition .. --action .. --scope "
                                  f"project={tmp_path.name}` writes one by hand for this project (without --scope, "
                                  "for every project)")


def test_ls_and_search_take_any_width_of_one_or_more(run_cli, store):
    for command in (["ls"], ["search", "lint"]):
        for width in ("1", "3", "4"):
            out = run_cli(*command, "--store", store, "--width", width)
            assert out.returncode == 0, (command, width, out.stderr)
            rows = [line for line in out.stdout.splitlines()[1:] if line.startswith("exp_")]
            assert rows and all(len(row.rsplit("  ", 1)[-1]) <= int(width) for row in rows)


def test_ls_json_has_null_for_unknown_bounds(run_cli, json_store, ids, strict_json):
    rows = {row["id"]: row for row in strict_json(run_cli("ls", "--store", json_store, "--json").stdout)}
    retired = rows[ids["retired"]]["evidence"]
    assert retired["lower"] is None and retired["upper"] is None and retired["randomized"] == 0
    good = rows[ids["good"]]["evidence"]
    assert 0 < good["lower"] < good["lift"] < good["upper"]


def test_show_prints_provenance_history_chart_and_episodes(lamar_cli, store, ids):
    out = lamar_cli("show", ids["good"][:9], "--store", store)  # a unique prefix is enough
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert text.startswith(f"{ids['good']}  (active)")
    assert "because stale module maps survive a clean build" in text
    assert "added by hand" in text
    assert "evidence over time (kept by the engine" in text and "the last row is now" in text
    chart = [line for line in text.splitlines() if line.rstrip().endswith(("-", ".", ">", "<")) and "|" in line]
    assert 2 <= len(chart) <= 12
    assert "helps" in chart[-1] and "*" in chart[-1]
    assert f"injected in {len(episodes_with(store, 'injected', ids['good']))} episodes" in text
    assert "not reported" in text and "(the latest 10; --all lists every one)" in text


def test_show_json_trajectory_ends_at_current_evidence(run_cli, sqlite_store, ids, strict_json):
    shown = strict_json(run_cli("show", ids["good"], "--store", sqlite_store, "--json").stdout)
    now = Lamar(str(sqlite_store)).evidence(ids["good"])
    last = shown["trajectory"][-1]
    assert last["verdict"] == "helps" and last["lift"] == pytest.approx(now.lift)
    assert last["randomized"] == now.randomized
    assert shown["trajectory"][0]["lower"] is None  # one episode: no interval yet, null not -Infinity
    randomized = [p["randomized"] for p in shown["trajectory"]]
    assert randomized == sorted(randomized)
    injected = episodes_with(sqlite_store, "injected", ids["good"])
    assert [a["episode_id"] for a in shown["injected_in"]] == injected
    assert shown["held_out_in"] == len(episodes_with(sqlite_store, "held_out", ids["good"])) > 0
    assert shown["injected_in"][-1]["reward"] is None  # the last episode was never reported
    assert shown["history"][0]["event"] == "added as active"


def test_show_retired_lesson_lists_the_reason(run_cli, json_store, ids):
    out = run_cli("show", ids["retired"], "--store", json_store)
    assert out.returncode == 0
    assert "set retired: masks real failures" in out.stdout
    assert "no reported episode has had this lesson eligible yet" in out.stdout


def test_show_unknown_id_is_a_usage_error(run_cli, sqlite_store):
    out = run_cli("show", "exp_nope", "--store", sqlite_store)
    assert out.returncode == 1
    assert "no lesson 'exp_nope'" in out.stderr and "lamar ls" in out.stderr
    ambiguous = run_cli("show", "exp_", "--store", sqlite_store)
    assert ambiguous.returncode == 1 and "give more of the id" in ambiguous.stderr


def test_read_only_commands_leave_the_store_untouched(run_cli, store, ids, tmp_path):
    before = digest(store)
    runs = [
        ("stats",), ("stats", "--json"), ("ls",), ("ls", "--json"), ("show", ids["good"]),
        ("html", "--out", tmp_path / "page.html"), ("export", "--out", tmp_path / "copy.json"),
        ("sleep", "--out", tmp_path / "report.json"),
    ]
    for args in runs:
        out = run_cli(*args, "--store", store)
        assert out.returncode == 0, (args, out.stderr)
    assert digest(store) == before
    assert not store.with_name(store.name + ".lock").exists()  # a JSON read takes no lock


def test_missing_store_is_not_created(lamar_cli, run_cli, tmp_path):
    missing = tmp_path / "nowhere" / "experience.json"
    for args in (("ls",), ("show", "exp_x"), ("html", "--out", tmp_path / "p.html"), ("sleep",)):
        out = run_cli(*args, "--store", missing)
        assert out.returncode == 2, args
        assert f"no store at {missing}" in out.stderr
        # The user did pass --store: telling them to pass one was advice they had already followed.
        assert "check --store and $LAMAR_STORE for a typo" in out.stderr and "pass --store PATH" not in out.stderr
    assert not missing.parent.exists()
    default = lamar_cli("stats")  # no --store, no LAMAR_STORE: ~/.lamar/experience.json
    assert default.returncode == 2 and ".lamar/experience.json" in default.stderr
    assert "pass --store PATH or set LAMAR_STORE" in default.stderr
    assert not (tmp_path / "home" / ".lamar").exists()


def test_store_from_environment(run_cli, json_store, strict_json):
    out = run_cli("stats", "--json", extra_env={"LAMAR_STORE": str(json_store)})
    assert out.returncode == 0 and strict_json(out.stdout)["experiences"] == 6


@pytest.mark.parametrize("suffix, body", [(".json", b'{"format": "lamar", "events": [\n'),
                                          (".db", b"this is not an sqlite file" * 100)])
def test_corrupt_store_is_a_store_error_and_left_untouched(lamar_cli, run_cli, tmp_path, suffix, body):
    path = tmp_path / f"broken{suffix}"
    path.write_bytes(body)
    out = lamar_cli("stats", "--store", path)
    assert out.returncode == 2 and str(path) in out.stderr and out.stdout == ""
    for args in (("ls", "--json"), ("show", "exp_x"), ("add", "--precondition", "p", "--action", "a")):
        out = run_cli(*args, "--store", path)
        assert out.returncode == 2, (args, out.stderr)
        assert str(path) in out.stderr and out.stdout == ""
    assert path.read_bytes() == body


def test_usage_errors_exit_1_and_say_what_to_do(lamar_cli, run_cli, sqlite_store):
    out = lamar_cli("frobnicate", "--store", sqlite_store)
    assert out.returncode == 1 and "invalid choice" in out.stderr and "lamar --help" in out.stderr
    cases = [
        (("frobnicate",), "invalid choice"),
        ((), "name a command"),
        (("ls", "--verdict", "great"), "invalid choice: 'great'"),
        (("ls", "--scope", "project"), "key=value"),
        (("add", "--action", "a"), "--precondition"),
        (("show",), "the following arguments are required: id"),
        (("show", "exp_x", "--episodes", "0"), "expected a whole number >= 1"),
    ]
    for args, message in cases:
        out = run_cli(*args, "--store", sqlite_store)
        assert out.returncode == 1, (args, out.returncode, out.stderr)
        assert message in out.stderr, (args, out.stderr)
        assert "--help" in out.stderr or "lamar stats" in out.stderr or "key=value" in out.stderr


def test_show_lists_an_expired_episode_as_expired(run_cli, sqlite_store, ids):
    lam = Lamar(str(sqlite_store))
    last = episodes_with(sqlite_store, "injected", ids["good"])[-1]  # never reported
    assert lam.expire(last, "the run failed") is True
    out = run_cli("show", ids["good"], "--store", sqlite_store)
    assert out.returncode == 0, out.stderr
    assert f"{last}  expired" in out.stdout


def test_a_python_call_typed_as_a_command_is_pointed_to_the_command_that_does_it(run_cli):
    """The docs teach recall, report, evidence and sleep; `lamar evidence` only listed the 23 commands."""
    out = run_cli("evidence", "exp_1234")
    assert out.returncode == 1
    assert "`lamar evidence` is not a command: a lesson's evidence is in `lamar show ID`" in out.stderr
    assert "`lamar claude-code status`" in run_cli("status").stderr
    # The MCP tool, the Python call and the claude-code actions a reader of those pages types bare.
    for word, where in (("lessons", "`lamar ls`"), ("get", "`lamar show ID`"), ("settle", "`lamar claude-code settle`"),
                        ("uninstall", "`lamar claude-code uninstall`"), ("trust", "`lamar claude-code trust`"),
                        ("hook", "`lamar claude-code hook`"),
                        ("init", "a store is created by the first `lamar add --create"),
                        ("help", "`lamar --help` lists the commands")):
        assert f"`lamar {word}` is not a command: {where}" in run_cli(word).stderr, word
    assert "is not a command" not in run_cli("frobnicate").stderr


def test_a_mistyped_command_is_answered_with_the_one_it_is_close_to(run_cli):
    """`lamar shw ID` listed all 23 commands; a mistyped option already got "did you mean"."""
    for typed, meant in (("shw", "show"), ("stat", "stats"), ("reveiw", "review"), ("wahtif", "whatif")):
        out = run_cli(typed, "exp_1234")
        assert out.returncode == 1 and f"did you mean `lamar {meant}`?" in out.stderr, (typed, out.stderr)
    assert "did you mean" not in run_cli("frobnicate").stderr


def one_pending_each_way(lam: Lamar) -> str:
    """A lesson with 12 episodes, all reported but one that injected it and one that held it out."""
    from lamar import Experience, Scope

    exp_id = lam.add(Experience("the build fails", "clear the cache", scope=Scope(project="x"), status="active"))
    left: dict[str, str] = {}
    for _ in range(12):
        rec = lam.recall({"project": "x"})
        side = "held" if exp_id in lam.episode(rec.episode_id).held_out else "injected" if rec.ids else ""
        if side and side not in left:
            left[side] = rec.episode_id
        else:
            lam.report(rec.episode_id, 1.0)
    assert len(left) == 2
    return exp_id


@pytest.mark.parametrize("suffix", [".json", ".db"])
def test_ls_and_show_count_injections_alike_and_say_which_await_their_outcome(run_cli, tmp_path, suffix,
                                                                                strict_json):
    # `ls` counts the reported episodes (those the lift reads), `show` every logged one: the
    # difference is the episodes still pending, and `show` says how many those are.
    path = tmp_path / f"counts{suffix}"
    lam = Lamar(str(path), seed=3, holdout=0.5)
    exp_id = one_pending_each_way(lam)
    lam.close()
    injected, held_out = episodes_with(path, "injected", exp_id), episodes_with(path, "held_out", exp_id)
    (row,) = strict_json(run_cli("ls", "--store", path, "--json").stdout)
    assert row["evidence"]["injected"] == len(injected) - 1 and row["evidence"]["held_out"] == len(held_out) - 1
    table = run_cli("ls", "--store", path).stdout.splitlines()[1].split()  # id status verdict lift [lo, hi] inj held
    assert table[6:8] == [str(len(injected) - 1), str(len(held_out) - 1)]
    shown = run_cli("show", exp_id, "--store", path).stdout
    assert (f"injected in {len(injected)} episodes (1 awaiting its outcome), "
            f"held out in {len(held_out)} (1 awaiting its outcome)") in shown


def test_show_of_a_chosen_lesson_without_a_coin_says_its_verdict_is_out_of_reach(run_cli, tmp_path):
    # A first week: a lesson that helps is chosen nearly every time, yet its coin stopped after a few
    # episodes (its verdict out of reach at the default holdout), so "unknown" would never change; show says so.
    store = tmp_path / "week.db"
    lam = Lamar(str(store), seed=5)
    build = lam.add(Experience("the build fails", "clear the cache", scope=Scope(task="build")))
    rng = random.Random(5)
    for _ in range(40):
        rec = lam.recall({"task": "build"})
        lam.report(rec.episode_id, "shipped" if rng.random() < (0.7 if build in rec.ids else 0.5) else "reverted")
    assert lam.preview({"task": "build"}).lessons[0].holdout == 0.0
    lam.close()
    out = run_cli("show", "--store", store, build)
    assert out.returncode == 0, out.stderr
    said = " ".join(out.stdout.split("\n\nprovenance")[0].split())
    assert "coin none where its scope is recalled: at holdout=0.04 its verdict is out of reach" in said, said
    assert "lamar recall --dry-run" in said and holdout_lever(store=str(store)) in said, said
    assert '"The evidence coin, and where it is spent"' in said, said
    shown = out.stdout.split("\n\nprovenance")[0].splitlines()
    commands = [span for span in said.split("`")[1::2] if span.startswith("lamar ")]
    assert commands and all(any(command in line for line in shown) for command in commands), shown  # each whole
    fresh = Lamar(str(store), seed=5)
    new = fresh.add(Experience("a test is flaky", "pin the seeds", scope=Scope(task="test")))
    fresh.close()
    assert "coin " not in run_cli("show", "--store", store, new).stdout  # a cold lesson gets its coin
