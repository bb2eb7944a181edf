"""`lamar edit` and `lamar recall [--dry-run]`: a real subprocess for the main path, the in-process
runner for bad input (each refused with exit 1 and nothing written)."""

from __future__ import annotations

from lamar import Experience, Lamar, Scope
from lamar.store import open_store


def _log(path) -> list[tuple[int, str, str]]:
    store = open_store(path)
    try:
        return [(e.seq, e.kind, e.data_json()) for e in store.read()]
    finally:
        store.close()


def test_edit_stores_a_new_version_and_restarts_its_evidence(lamar_cli, store, ids, strict_json):
    before = Lamar(str(store)).evidence(ids["good"])
    out = lamar_cli("edit", ids["good"][:12], "--store", store, "--action", "clear the module cache",
                    "--scope", "project=trace", "language=swift", "--reason", "narrower", "--json")
    assert out.returncode == 0, out.stderr
    shown = strict_json(out.stdout)
    assert (shown["id"], shown["version"], shown["evidence"]) == (ids["good"], 2, "restarted")
    lam = Lamar(str(store))
    lesson, after = lam.get(ids["good"]), lam.evidence(ids["good"])
    assert (lesson.action, lesson.scope) == ("clear the module cache", Scope(project="trace", language="swift"))
    assert (after.restarts, after.randomized, after.eligible) == (before.restarts + 1, 0, before.eligible)
    (edit,) = [e.data for e in open_store(store).read() if e.kind == "edit"]
    assert (edit["changed"], edit["evidence"], edit["reason"]) == (["action", "scope"], "restart", "narrower")


def test_edit_keeps_the_evidence_of_a_wording_fix(run_cli, sqlite_store, ids):
    before = Lamar(str(sqlite_store)).evidence(ids["good"])
    out = run_cli("edit", ids["good"], "--store", sqlite_store, "--rationale", "stale module maps survive",
                  "--keep-evidence")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(f"edited {ids['good']} (version 2, evidence kept): When the build fails")
    assert Lamar(str(sqlite_store)).evidence(ids["good"]) == before


def test_edit_scope_star_makes_the_lesson_eligible_everywhere(run_cli, sqlite_store, ids):
    out = run_cli("edit", ids["good"], "--store", sqlite_store, "--scope", "*")
    assert out.returncode == 0, out.stderr
    with Lamar(str(sqlite_store)) as lam:
        assert lam.get(ids["good"]).scope == Scope()
        assert ids["good"] in [row.experience.id for row in lam.preview({"project": "shop"}).lessons]
    listed = run_cli("ls", "--store", sqlite_store).stdout
    assert any(line.startswith(ids["good"]) and "  *  " in line for line in listed.splitlines())


def test_bad_edits_exit_1_with_nothing_written(run_cli, sqlite_store, ids):
    log = _log(sqlite_store)
    cases = [
        (["edit", ids["good"]], "needs at least one of"),
        (["edit", "exp_nope", "--action", "x"], "no lesson 'exp_nope'"),
        (["edit", ids["good"], "--action", "  "], "action is empty"),
        (["edit", ids["good"], "--action", "rerun it", "--keep-evidence"], "--keep-evidence"),
        (["edit", ids["good"], "--action", "clear DerivedData before rebuilding"], "nothing to edit"),
        (["edit", ids["good"], "--scope", "project"], "key=value"),
        (["edit", ids["retired"], "--action", "x"],
         f"is retired: revive it first with `lamar revive {ids['retired']}`"),
    ]
    for argv, says in cases:
        out = run_cli(*argv, "--store", sqlite_store)
        assert out.returncode == 1 and says in out.stderr, (argv, out.stderr)
    assert _log(sqlite_store) == log


def test_recall_dry_run_shows_why_and_writes_nothing(lamar_cli, store, ids, strict_json):
    log = _log(store)
    out = lamar_cli("recall", "--store", store, "project=trace", "language=swift", "--dry-run", "--json")
    assert out.returncode == 0, out.stderr
    seen = strict_json(out.stdout)
    rows = {row["id"]: row for row in seen["lessons"]}
    assert seen["logged"] is False and ids["good"] in rows and ids["retired"] not in rows
    good = rows[ids["good"]]
    assert good["verdict"] == "helps" and good["lower"] > 0 and not good["cold"] and good["estimate"] > 0
    cold = [row["id"] for row in seen["lessons"] if row["cold"]]
    assert cold and all(rows[i]["wanted"] and rows[i]["chance"] == 1.0 for i in cold)  # tried first, at +inf
    assert seen["lessons"][:len(cold)] == [rows[i] for i in cold]
    text = lamar_cli("recall", "--store", store, "project=trace", "language=swift", "--dry-run", "--k", "6")
    assert text.returncode == 0
    assert text.stdout.startswith("dry run for project=trace language=swift (k=6): nothing logged")
    assert f"{ids['good']}  yes" in text.stdout
    assert _log(store) == log


def test_recall_logs_an_episode_to_report(run_cli, sqlite_store, strict_json):
    out = run_cli("recall", "--store", sqlite_store, "project=trace", "--json")
    assert out.returncode == 0, out.stderr
    rec = strict_json(out.stdout)
    assert run_cli("report", rec["episode_id"], "shipped", "--store", sqlite_store).returncode == 0
    assert Lamar(str(sqlite_store)).episode(rec["episode_id"]).signal == "shipped"
    bad = run_cli("recall", "--store", sqlite_store, "project", "--dry-run")
    assert bad.returncode == 1 and "key=value" in bad.stderr


def test_a_recall_that_finds_no_lesson_says_their_scopes_did_not_match(run_cli, tmp_path):
    # A dry run without k=v said only "0 eligible lessons", as if the store were empty.
    store = tmp_path / "scoped.db"
    with Lamar(str(store)) as lam:
        lam.add(Experience("the build breaks", "clean the cache", scope=Scope(project="trace", language="swift")))
        lam.add(Experience("a test hangs", "kill the simulator", scope=Scope(team="ios")))
        lam.retire(lam.add(Experience("anything", "the retired lesson's text")))  # unscoped, but retired
    said = ("0 of 2 unretired lessons are eligible: each is scoped (language=..., project=..., team=...) "
            "and this context does not match; pass key=value")
    for argv in (["--dry-run"], [], ["project=trace", "--dry-run"]):
        out = run_cli("recall", "--store", store, *argv)
        assert out.returncode == 0 and out.stdout.splitlines()[-1] == said, (argv, out.stdout)
        assert "cache" not in out.stdout and "swift" not in out.stdout and "lesson's text" not in out.stdout
    found = run_cli("recall", "--store", store, "team=ios", "--dry-run")
    assert "1 eligible lesson" in found.stdout and "unretired" not in found.stdout
    assert "unretired" not in run_cli("recall", "--store", store, "--json").stdout


def test_an_edit_that_loses_the_race_to_another_writer_names_the_commands(run_cli, sqlite_store, ids, monkeypatch):
    """Another process edits the lesson between this edit's read and its write (the same SQLite
    file, a second engine): the edit is refused with commands to run, not the Python advice."""
    import lamar.edit

    original = lamar.edit.write_edit

    def racing(holder, exp, **changes):  # type: ignore[no-untyped-def]
        monkeypatch.setattr(lamar.edit, "write_edit", original)  # the other writer's edit goes straight in
        other = Lamar(str(sqlite_store))
        other.edit(exp.id, rationale="edited by the other writer", evidence="keep")
        other.close()
        return original(holder, exp, **changes)

    monkeypatch.setattr(lamar.edit, "write_edit", racing)
    before = _log(sqlite_store)
    out = run_cli("edit", ids["good"], "--store", sqlite_store, "--action", "clear the module cache")
    assert out.returncode == 2, out.stderr
    assert f"`lamar show {ids['good']}`" in out.stderr and "`lamar edit`" in out.stderr, out.stderr
    assert "(get)" not in out.stderr, out.stderr
    after = _log(sqlite_store)
    assert after[:len(before)] == before and [kind for _, kind, _ in after[len(before):]] == ["edit"]
    assert Lamar(str(sqlite_store)).get(ids["good"]).rationale == "edited by the other writer"


def test_an_empty_or_overlong_reason_is_refused_with_nothing_written(run_cli, sqlite_store, ids):
    """`--reason ""` used to store an empty reason, and a 100 000-character one was stored and
    printed back; both are refused (the cap is a lesson's, MAX_LESSON_CHARS) for every lever."""
    from lamar.safety.boundary import MAX_LESSON_CHARS

    log = _log(sqlite_store)
    levers = [["edit", ids["good"], "--action", "rerun it"], ["retire", ids["good"]], ["revive", ids["retired"]],
              ["erase", ids["neutral"]]]
    for argv in levers:
        for reason, says in (("", "the reason is empty"), ("  ", "the reason is empty"),
                             ("x" * 100_000, f"100,000 characters long, at most {MAX_LESSON_CHARS:,}")):
            out = run_cli(*argv, "--reason", reason, "--store", sqlite_store)
            assert out.returncode == 1 and says in out.stderr, (argv, out.stderr[:300])
            assert "x" * 100 not in out.stderr + out.stdout
    assert _log(sqlite_store) == log
    out = run_cli("retire", ids["good"], "--reason", "y" * MAX_LESSON_CHARS, "--store", sqlite_store)
    assert out.returncode == 0, out.stderr
