"""Lesson management without engine changes: `lamar add --from FILE` and `lamar search TEXT`."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from lamar import InvalidExperience, Lamar, Status
from lamar.lesson_file import read_lessons

RULES_MD = """# Build lessons

Headings and prose group the bullets; only bullets are lessons.

- When the Xcode build fails after a dependency bump, clear DerivedData before rebuilding, \
because stale module maps survive a clean build.
* When a lint error shows, run the formatter first
1. when a UI test times out on CI, run the failing test by itself first, because the suite shares one simulator
"""


def _lessons(path) -> list:
    with Lamar(str(path)) as lam:
        return lam.experiences()


def test_add_from_markdown_adds_every_bullet_with_its_line(run_cli, tmp_path, store):
    rules = tmp_path / "rules.md"
    rules.write_text(RULES_MD, encoding="utf-8")
    before = {e.id for e in _lessons(store)}
    out = run_cli("add", "--store", store, "--from", rules, "--scope", "project=trace", "--json")
    assert out.returncode == 0, out.stderr
    added = json.loads(out.stdout)
    assert len(added) == 3
    new = [e for e in _lessons(store) if e.id not in before]
    assert [e.id for e in new] == [a["id"] for a in added]
    build, lint, ui = new
    assert build.precondition == "the Xcode build fails after a dependency bump"
    assert build.action == "clear DerivedData before rebuilding"
    assert build.rationale == "stale module maps survive a clean build"
    assert lint.action == "run the formatter first" and lint.rationale == ""
    assert ui.rationale == "the suite shares one simulator"
    assert all(dict(e.scope) == {"project": "trace"} for e in new)
    assert [e.provenance["line"] for e in new] == [5, 6, 7]
    assert {e.provenance["file"] for e in new} == {"rules.md"}


def test_add_from_json_lines_takes_each_lines_scope_and_status(run_cli, tmp_path, store):
    lines = tmp_path / "lessons.jsonl"
    lines.write_text(
        json.dumps({"precondition": "a Go test flakes", "action": "run it with -count=1",
                    "scope": {"language": "go"}}) + "\n\n"
        + json.dumps({"precondition": "a migration fails", "action": "check the lock timeout",
                      "rationale": "long transactions hold it", "status": "candidate"}) + "\n", encoding="utf-8")
    out = run_cli("add", "--store", store, "--from", lines, "--scope", "project=trace", "-q")
    assert out.returncode == 0, out.stderr
    go_id, migration_id = out.stdout.split()
    with Lamar(str(store)) as lam:
        go, migration = lam.get(go_id), lam.get(migration_id)
    assert dict(go.scope) == {"project": "trace", "language": "go"} and go.status is Status.ACTIVE
    assert migration.status is Status.CANDIDATE and migration.rationale == "long transactions hold it"


@pytest.mark.parametrize("name, text, line, words", [
    ("rules.md", RULES_MD + "- Always be kind to the linter\n", 8, "When <precondition>"),
    ("rules.md", "- When the build fails with no comma\n", 1, "no comma"),
    ("rules.md", "# nothing but a heading\n", None, "holds no lesson"),
    ("l.jsonl", '{"precondition": "p", "action": "a"}\n{"precondtion": "p", "action": "a"}\n', 2, "'precondtion'"),
    ("l.jsonl", '{"precondition": "p", "action": "a"}\n[1, 2]\n', 2, "JSON object"),
    ("l.jsonl", '{"precondition": "p", "action": "a"}\n{"precondition": "p"\n', 2, "not JSON"),
    ("l.jsonl", '{"precondition": "p", "action": ""}\n', 1, "action is empty"),
    ("l.jsonl", '{"precondition": "p", "action": "a", "status": "retired"}\n', 1, "active or candidate"),
    ("l.jsonl", '{"precondition": "p", "action": "a", "scope": {"project": 3}}\n', 1, "must be a string"),
    ("l.jsonl", '{"precondition": "p", "action": "a", "scope": "trace"}\n', 1, "object of strings"),
    ("l.jsonl", ('{"precondition": "p", "action": "a"}\n'
                 '{"precondition": "p", "action": "use ghp_abcdefghijklmnopqrstuvwxyz0123456789"}\n'), 2, "secret"),
])
def test_a_bad_line_adds_nothing_and_names_its_line(run_cli, tmp_path, store, name, text, line, words):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    before = store.read_bytes()
    out = run_cli("add", "--store", store, "--from", path)
    assert out.returncode == 1, out.stderr
    assert words in out.stderr and "nothing was added" in out.stderr
    if line is not None:
        assert f"{name}, line {line}:" in out.stderr
    assert store.read_bytes() == before
    with pytest.raises(InvalidExperience):  # the Python-level reader raises a LamarError
        read_lessons(text, name=name, scope={}, status="active")


def test_add_from_refuses_a_missing_file_mixed_options_and_a_missing_store(run_cli, tmp_path, store):
    rules = tmp_path / "rules.md"
    rules.write_text(RULES_MD, encoding="utf-8")
    before = store.read_bytes()
    missing = run_cli("add", "--store", store, "--from", tmp_path / "nope.md")
    assert missing.returncode == 1 and "no such file" in missing.stderr
    mixed = run_cli("add", "--store", store, "--from", rules, "--action", "a")
    assert mixed.returncode == 1 and "leave out --precondition" in mixed.stderr
    neither = run_cli("add", "--store", store)
    assert neither.returncode == 1 and "--from FILE" in neither.stderr
    assert store.read_bytes() == before
    new = tmp_path / "new.db"
    refused = run_cli("add", "--store", new, "--from", rules)
    assert refused.returncode == 2 and "--create" in refused.stderr and not new.exists()
    created = run_cli("add", "--store", new, "--from", rules, "--create")
    assert created.returncode == 0 and created.stdout.startswith(f"added 3 lessons from {rules}\n")
    assert len(_lessons(new)) == 3


def test_add_from_stdin(run_cli, store):
    out = run_cli("add", "--store", store, "--from", "-", "-q",
                  stdin='{"precondition": "stdin works", "action": "read it"}\n')
    assert out.returncode == 0, out.stderr
    with Lamar(str(store)) as lam:
        assert lam.get(out.stdout.strip()).provenance["file"] == "<stdin>"


def test_search_finds_every_word_in_any_case_and_respects_the_filters(run_cli, store, ids, strict_json):
    out = run_cli("search", "--store", store, "FORMATTER", "lint", "--json")
    assert out.returncode == 0, out.stderr
    assert {e["id"] for e in strict_json(out.stdout)} == {ids["neutral"], ids["twin"]}
    by_scope = run_cli("search", "--store", store, "ui", "test", "--scope", "project=trace")
    assert by_scope.returncode == 0
    assert ids["rival"] in by_scope.stdout and ids["counter"] in by_scope.stdout
    assert ids["neutral"] not in by_scope.stdout
    candidates = strict_json(run_cli("search", "--store", store, "test", "--status", "candidate", "--json").stdout)
    assert [e["id"] for e in candidates] == [ids["rival"]]
    scope_word = strict_json(run_cli("search", "--store", store, "language=swift", "--json").stdout)
    assert {e["id"] for e in scope_word} == {ids["neutral"], ids["twin"]}
    none = run_cli("search", "--store", store, "kubernetes")
    assert none.returncode == 0 and "no lesson holds 'kubernetes'" in none.stdout


def test_search_refuses_empty_text_a_bad_scope_and_a_missing_store(run_cli, tmp_path, store):
    before = store.read_bytes()
    assert run_cli("search", "--store", store, " ").returncode == 1
    bad = run_cli("search", "--store", store, "lint", "--scope", "language")
    assert bad.returncode == 1 and "key=value" in bad.stderr
    missing = run_cli("search", "--store", tmp_path / "nope.db", "lint")
    assert missing.returncode == 2 and not (tmp_path / "nope.db").exists()
    assert store.read_bytes() == before


@pytest.mark.parametrize("name, body", [
    ("notes.md", "- When the file starts with a byte order mark, keep its first lesson\n- When two, do three\n"),
    ("lessons.jsonl", ('{"precondition": "the file starts with a byte order mark", "action": "keep its first lesson"}\n'
                       '{"precondition": "two", "action": "do three"}\n')),
])
def test_add_from_a_file_with_a_byte_order_mark_keeps_its_first_lesson(run_cli, tmp_path, store, name, body):
    source = tmp_path / name
    source.write_text(body, encoding="utf-8-sig")  # as Notepad saves UTF-8
    out = run_cli("add", "--store", store, "--from", source, "--json")
    assert out.returncode == 0, out.stderr
    added = json.loads(out.stdout)
    with Lamar(str(store)) as lam:
        first, second = (lam.get(a["id"]) for a in added)
    assert first.precondition == "the file starts with a byte order mark" and first.action == "keep its first lesson"
    assert first.provenance["line"] == 1 and second.action == "do three"


def test_add_from_a_folder_is_a_usage_error(run_cli, tmp_path, store):
    out = run_cli("add", "--store", store, "--from", tmp_path)
    assert out.returncode == 1  # what was typed is wrong; the store is fine
    assert f"--from {tmp_path}: Is a directory; name a lesson file" in out.stderr


def test_add_from_stdin_that_is_not_utf8_says_so(tmp_path, store):
    # Bytes through a real pipe: the interpreter's own stdin decoding is what is under test.
    done = subprocess.run([sys.executable, "-m", "lamar.cli", "add", "--store", str(store), "--from", "-"],
                          input=b"- When caf\xe9 is Latin-1, read it as such\n", capture_output=True, check=False,
                          env={**os.environ, "LC_ALL": "C.UTF-8"}, timeout=60)
    assert done.returncode == 1
    assert done.stderr.decode().strip() == "lamar: error: --from - : stdin is not UTF-8 text"
    with Lamar(str(store)) as lam:
        assert not [e for e in lam.experiences() if "Latin-1" in e.precondition]


def test_add_from_the_same_file_again_adds_only_its_new_lines(run_cli, tmp_path, store):
    # Run again after a line was added to the file, it used to copy every other line as a second arm.
    notes = tmp_path / "notes.md"
    notes.write_text("- When the build fails, clear the cache\n- When the BUILD fails, clear the cache.\n",
                     encoding="utf-8")
    first = run_cli("add", "--store", store, "--from", notes, "-q")
    assert first.returncode == 0, first.stderr
    (kept,) = first.stdout.split()
    assert f"{notes}, line 2: the same lesson as line 1; not added again" in first.stderr
    notes.write_text(notes.read_text(encoding="utf-8") + "- When a test is flaky, run it alone\n", encoding="utf-8")
    again = run_cli("add", "--store", store, "--from", notes)
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith(f"added 1 lesson from {notes} (2 lessons already held, listed above)\n")
    assert f"{notes}, line 1: lamar already holds this lesson as {kept} (active; `lamar show {kept}`)" in again.stderr
    third = run_cli("add", "--store", store, "--from", notes, "--scope", "project=trace", "-q")
    assert len(third.stdout.split()) == 2  # another scope is another lesson
    with Lamar(str(store)) as lam:
        texts = [e.render() for e in lam.experiences() if e.provenance.get("file") == "notes.md"]
    assert sorted(texts) == sorted(["When the build fails, clear the cache.",
                                    "When a test is flaky, run it alone."] * 2)
