"""The manual levers (add, retire, revive, report): each a subprocess run, each an event in the log."""

from __future__ import annotations

import pytest

from lamar import Lamar, Signal, Status
from lamar.store import open_store


def test_add_creates_the_store_and_the_lesson(lamar_cli, run_cli, tmp_path, strict_json):
    path = tmp_path / "new" / "experience.db"
    out = lamar_cli("add", "--create", "--store", path, "--precondition", "the Xcode build fails after a bump",
                    "--action", "clear DerivedData", "--rationale", "stale module maps",
                    "--scope", "project=trace", "language=swift", "--json")
    assert out.returncode == 0, out.stderr
    added = strict_json(out.stdout)
    lesson = Lamar(str(path)).get(added["id"])
    assert lesson.scope == {"project": "trace", "language": "swift"}
    assert lesson.status is Status.ACTIVE and lesson.rationale == "stale module maps"
    assert lesson.provenance["source"] == "manual"
    quiet = run_cli("add", "--store", path, "--precondition", "p", "--action", "a", "--status", "candidate", "-q")
    assert quiet.stdout.strip().startswith("exp_") and len(quiet.stdout.split()) == 1
    assert Lamar(str(path)).get(quiet.stdout.strip()).status is Status.CANDIDATE


def test_add_defaults_to_the_home_store(run_cli, tmp_path):
    out = run_cli("add", "--create", "--precondition", "p", "--action", "a")
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "home" / ".lamar" / "experience.json").is_file()


def test_add_refuses_a_store_that_does_not_exist_without_create(run_cli, tmp_path, sqlite_store):
    """A mistyped --store used to start a new, empty store silently; the lesson went nowhere useful."""
    typo = tmp_path / "experiense.db"
    out = run_cli("add", "--store", typo, "--precondition", "p", "--action", "a")
    assert out.returncode == 2 and "no store at" in out.stderr and "--create" in out.stderr
    assert not typo.exists() and not (tmp_path / "home" / ".lamar").exists()
    before = sqlite_store.read_bytes()
    assert run_cli("add", "--store", sqlite_store, "--precondition", "p", "--action", "a").returncode == 0
    assert sqlite_store.read_bytes() != before  # an existing store needs no --create


def test_add_refuses_an_empty_action(run_cli, tmp_path):
    path = tmp_path / "s.json"
    out = run_cli("add", "--store", path, "--precondition", "p", "--action", "  ")
    assert out.returncode == 1 and "action is empty" in out.stderr
    assert not path.exists()


def test_retire_and_revive_are_recorded_with_reasons(lamar_cli, run_cli, store, ids):
    out = lamar_cli("retire", ids["good"], "--store", store, "--reason", "the build system changed")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"retired {ids['good']}: the build system changed"
    assert Lamar(str(store)).get(ids["good"]).status is Status.RETIRED
    back = run_cli("revive", ids["good"][:10], "--store", store)
    assert back.returncode == 0 and Lamar(str(store)).get(ids["good"]).status is Status.ACTIVE
    status_events = [e.data for e in open_store(store).read() if e.kind == "status" and e.data["id"] == ids["good"]]
    assert status_events == [
        {"id": ids["good"], "status": "retired", "reason": "the build system changed"},
        {"id": ids["good"], "status": "active", "reason": "revived by hand"},
    ]
    shown = run_cli("show", ids["good"], "--store", store).stdout
    assert "set retired: the build system changed" in shown and "set active: revived by hand" in shown
    missing = run_cli("retire", "exp_missing", "--store", store)
    assert missing.returncode == 1 and "lamar ls" in missing.stderr


def test_report_by_signal_name_then_replace_with_a_float(lamar_cli, run_cli, store, ids):
    episode = ids["episode"]
    out = lamar_cli("report", episode, "REVERTED", "--store", store)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"reported {episode}: reverted"
    assert Lamar(str(store)).episode(episode).reward == -1.0
    again = run_cli("report", episode, "shipped", "--store", store)
    assert again.returncode == 1 and "already reported (reverted)" in again.stderr and "--replace" in again.stderr
    replaced = run_cli("report", episode, "-0.25", "--replace", "--store", store)
    assert replaced.returncode == 0, replaced.stderr
    assert replaced.stdout.strip() == f"reported {episode}: reward -0.25 (replacing the earlier outcome)"
    assert Lamar(str(store)).episode(episode).reward == -0.25


def test_replace_on_an_episode_with_no_outcome_says_it_replaced_nothing(run_cli, store):
    # A git hook passes --replace to every revert, reported or not: an episode with no outcome yet has none
    # to replace, and the CLI must not say it replaced one.
    with Lamar(str(store)) as lam:
        episode = lam.recall({"project": "trace"}).episode_id
    out = run_cli("report", episode, "reverted", "--replace", "--store", store)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"reported {episode}: reverted (it had no outcome: nothing replaced)"


@pytest.mark.parametrize(("signal", "reward"), [("-1", -1.0), ("-0.5", -0.5), ("-0.5e0", -0.5), ("-.5", -0.5),
                                              ("-1e-1", -0.1), ("-5E-1", -0.5)])
def test_a_negative_number_is_the_signal_in_any_spelling(run_cli, sqlite_store, ids, signal, reward):
    # argparse took the exponent forms for an option and said the signal was missing; `-2e0` is read, and refused.
    for order in ((ids["episode"], signal, "--replace"), ("--replace", ids["episode"], signal)):
        out = run_cli("report", *order, "--store", sqlite_store)
        assert out.returncode == 0, (order, out.stderr)
        assert Lamar(str(sqlite_store)).episode(ids["episode"]).reward == reward
    out = run_cli("report", ids["episode"], "-2e0", "--replace", "--store", sqlite_store)
    assert out.returncode == 1 and "outside [-1, 1]" in out.stderr, out.stderr


def test_report_refuses_bad_input_with_exit_1(run_cli, sqlite_store, ids):
    for args, message in [
        (("ep_unknown", "shipped"), "no episode 'ep_unknown'"),
        ((ids["episode"], "great"), "unknown signal 'great'"),
        ((ids["episode"], "1.5"), "outside [-1, 1]"),
        ((ids["episode"], "nan"), "outside [-1, 1]"),
        # float() reads these as 10.0 and 1.0; a reward is read as typed, and these are not numbers
        ((ids["episode"], "1_0"), "unknown signal '1_0'"),
        ((ids["episode"], "\u0661"), "unknown signal '\u0661'"),
    ]:
        out = run_cli("report", *args, "--store", sqlite_store)
        assert out.returncode == 1, (args, out.stderr)
        assert message in out.stderr, (args, out.stderr)
    assert Lamar(str(sqlite_store)).episode(ids["episode"]).reward is None


def test_report_on_a_missing_store_is_a_store_error(run_cli, tmp_path):
    out = run_cli("report", "ep_x", "shipped", "--store", tmp_path / "none.json")
    assert out.returncode == 2 and "no store at" in out.stderr
    assert not (tmp_path / "none.json").exists()


def test_a_missing_store_names_the_store_beside_it(run_cli, tmp_path):
    """`lamar claude-code install --store ~/.lamar/experience.db`, then `lamar ls`: the default .json is missing."""
    home_store = tmp_path / "home" / ".lamar" / "experience.db"
    assert run_cli("add", "--create", "--store", home_store, "--precondition", "p", "--action", "a").returncode == 0
    out = run_cli("ls")
    assert out.returncode == 2
    assert out.stderr.strip().endswith(f"; there is one at {home_store}: pass --store {home_store}, or export "
                                       f"LAMAR_STORE={home_store} for every command")
    assert "there is one at" not in run_cli("--store", tmp_path / "other.json", "ls").stderr


@pytest.mark.parametrize(("url", "said"), [
    ("redis://127.0.0.1:6379/0", "cannot tell the backend of a redis:// URL"),
    ("sqlite:///x.db", "is a sqlite: URL, and a store location is a file path: pass the path itself: 'x.db'"),
    ("notes.txt", "cannot tell the backend of 'notes.txt'"),
])
@pytest.mark.parametrize("command", [["ls"], ["stats"], ["search", "build"]], ids=["ls", "stats", "search"])
def test_a_read_command_given_a_location_no_backend_takes_says_why_not_no_store(lamar_cli, url, said, command):
    """The store's own refusal speaks, not "no store at redis:/..." with the slashes collapsed."""
    out = lamar_cli("--store", url, *command)
    assert out.returncode == 2 and said in out.stderr and "no store at" not in out.stderr, out.stderr


def test_report_of_a_lesson_id_says_it_is_one_and_changes_nothing(run_cli, sqlite_store, ids):
    """`lamar recall` prints an episode id and lesson ids; the one passed for the other is named as such."""
    before = sqlite_store.read_bytes()
    out = run_cli("report", ids["good"], "shipped", "--store", sqlite_store)
    assert out.returncode == 1 and "Traceback" not in out.stderr, out.stderr
    assert f"no episode '{ids['good']}' in store {sqlite_store} (that is a lesson id, not an episode id): " \
           "report the episode_id that recall() returned" in out.stderr
    other = run_cli("report", "exp_0000000000000000", "shipped", "--store", sqlite_store)
    assert other.returncode == 1 and "that is a lesson id" not in other.stderr  # no such lesson: nothing to say
    assert sqlite_store.read_bytes() == before


def test_report_names_the_signal_a_near_miss_is_close_to(run_cli, sqlite_store, ids):
    """`lamar report EP revert` was refused with the bare list; a word that could mean two outcomes
    ("correct": corrected, or it was right) gets no guess."""
    for typed, said in [("revert", "unknown signal 'revert' (did you mean 'reverted'?)"),
                        ("Shiped", "unknown signal 'Shiped' (did you mean 'shipped'?)"),
                        ("accept", "(did you mean 'accepted'?)")]:
        out = run_cli("report", ids["episode"], typed, "--store", sqlite_store)
        assert out.returncode == 1 and said in out.stderr, (typed, out.stderr)
    for typed in ("fixed", "merge", "correct"):
        out = run_cli("report", ids["episode"], typed, "--store", sqlite_store)
        assert out.returncode == 1 and "unknown signal" in out.stderr and "did you mean" not in out.stderr, typed
    assert Lamar(str(sqlite_store)).episode(ids["episode"]).reward is None


def test_report_with_its_two_words_swapped_gives_the_command_in_order(run_cli, sqlite_store, ids):
    """`lamar report shipped ep_...` was refused as an unknown signal 'ep_...', leaving the user to see why."""
    for typed in ("shipped", "-0.5", "Re-asked"):
        out = run_cli("report", typed, ids["episode"], "--store", sqlite_store)
        assert out.returncode == 1, out.stderr
        assert f"the episode id comes first: lamar report {ids['episode']} {typed}" in out.stderr, out.stderr
    assert Lamar(str(sqlite_store)).episode(ids["episode"]).reward is None


def test_add_from_a_rules_file_names_import_rules(run_cli, sqlite_store, tmp_path):
    """A CLAUDE.md's rules are not "When X, Y" bullets: `lamar add --from CLAUDE.md` refused its first one and
    left the user there; the rules file has a command of its own."""
    (tmp_path / "CLAUDE.md").write_text("## Commands\n\n- `make dev` - start the dev server\n", encoding="utf-8")
    (tmp_path / "notes.md").write_text("- Always run the tests\n", encoding="utf-8")
    out = run_cli("add", "--from", tmp_path / "CLAUDE.md", "--store", sqlite_store)
    assert out.returncode == 1 and "CLAUDE.md, line 3: a lesson bullet reads" in out.stderr, out.stderr
    assert f"lamar import-rules --file {tmp_path / 'CLAUDE.md'}" in out.stderr, out.stderr
    other = run_cli("add", "--from", tmp_path / "notes.md", "--store", sqlite_store)
    assert other.returncode == 1 and "import-rules" not in other.stderr, other.stderr


def test_a_duplicate_report_gives_the_command_that_replaces_it_and_a_final_one_none(run_cli, tmp_path):
    # The CLI said "pass --replace" to every refusal, also of an outcome a checkpoint made final,
    # where --replace fails the same way (and the user had passed it).
    path = tmp_path / "sealed.json"
    lam = Lamar(str(path))
    episode = lam.recall({}).episode_id
    lam.report(episode, Signal.SHIPPED)
    again = run_cli("report", episode, "reverted", "--store", path)
    assert again.returncode == 1, again.stderr
    assert again.stderr.strip() == (f"lamar: error: episode {episode} was already reported (shipped); to replace "
                                    f"that outcome: lamar report {episode} reverted --replace")
    assert lam.checkpoint() is True
    lam.close()
    for extra in ((), ("--replace",)):
        final = run_cli("report", episode, "reverted", *extra, "--store", path)
        assert final.returncode == 1 and "is final" in final.stderr and "--replace" not in final.stderr, final.stderr


def test_a_report_that_repeats_the_outcome_says_there_is_nothing_to_do(run_cli, tmp_path):
    # Offering `--replace` to replace "shipped" by "shipped" sent the user to a command that changes nothing.
    path = tmp_path / "same.json"
    lam = Lamar(str(path))
    episode = lam.recall({}).episode_id
    lam.report(episode, Signal.SHIPPED)
    other = lam.recall({}).episode_id
    lam.report(other, -0.25)
    lam.close()
    again = run_cli("report", episode, "SHIPPED", "--store", path)
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == f"episode {episode} is already reported shipped: nothing to do"
    number = run_cli("report", other, "-.25", "--store", path)
    assert number.returncode == 0 and "already reported reward -0.25: nothing to do" in number.stdout, number.stderr
    differs = run_cli("report", other, "1", "--store", path)
    assert differs.returncode == 1 and "--replace" in differs.stderr, differs.stderr
    assert Lamar(str(path)).episode(episode).reports == 1
