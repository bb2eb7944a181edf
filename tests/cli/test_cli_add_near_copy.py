"""`lamar add` of a near-copy of a stored lesson adds it (the user may mean it) and says which lesson it copies."""

from __future__ import annotations

from lamar.program import program_name


def _add(run_cli, store, *args: str):
    return run_cli("add", "--store", store, "--create", "--scope", "project=shop", *args)


def test_a_near_copy_is_added_with_a_warning_naming_the_stored_lesson(run_cli, tmp_path) -> None:
    store = tmp_path / "near.db"
    first = _add(run_cli, store, "-q", "--precondition", "working on shop", "--action", "run the unit tests before "
                 "committing")
    assert first.returncode == 0, first.stderr
    stored = first.stdout.strip()
    twin = _add(run_cli, store, "-q", "--precondition", "working on shop", "--action", "run the tests before "
                "committing")
    assert twin.returncode == 0, twin.stderr
    added = twin.stdout.strip()  # stdout stays the new id alone, for scripts
    assert added.startswith("exp_") and added != stored
    assert f"{added} is a near-copy of {stored}" in twin.stderr, twin.stderr
    assert f"{program_name()} sleep --out" in twin.stderr and f"{program_name()} retire {added}" in twin.stderr
    assert f"{program_name()} edit {stored}" in twin.stderr


def test_no_warning_for_another_lesson_or_another_scope(run_cli, tmp_path) -> None:
    store = tmp_path / "near.db"
    _add(run_cli, store, "--precondition", "working on shop", "--action", "run the unit tests before committing")
    other = _add(run_cli, store, "--precondition", "working on shop", "--action", "never push to main")
    assert other.returncode == 0 and other.stderr == "", other.stderr
    elsewhere = run_cli("add", "--store", store, "--scope", "project=web", "--precondition", "working on shop",
                        "--action", "run the tests before committing")
    assert elsewhere.returncode == 0 and elsewhere.stderr == "", elsewhere.stderr
    negated = _add(run_cli, store, "--precondition", "working on shop", "--action",
                   "never run the unit tests before committing")
    assert negated.returncode == 0 and "near-copy" not in negated.stderr, negated.stderr
