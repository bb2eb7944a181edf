"""Frictions a new user met: a closed pipe, a lever pulled twice, a chart without a legend."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from lamar import Experience, Lamar, Status
from lamar.store import open_store


def _status_events(store: Path, exp_id: str) -> list[dict[str, str]]:
    return [e.data for e in open_store(store).read() if e.kind == "status" and e.data["id"] == exp_id]


def test_a_closed_pipe_ends_quietly_with_status_0(sqlite_store: Path, tmp_path: Path) -> None:
    for command in (["stats"], ["ls"], ["show", "exp_"]):
        read, write = os.pipe()
        os.close(read)  # the reader is gone before the first byte, as after `| head -1` has its line
        try:
            done = subprocess.run([sys.executable, "-m", "lamar.cli", *command, "--store", str(sqlite_store)],
                                  stdout=write, stderr=subprocess.PIPE, text=True, cwd=tmp_path, timeout=60,
                                  check=False)
        finally:
            os.close(write)
        if command[0] == "show":  # an ambiguous prefix is still a usage error, pipe or not
            assert done.returncode == 1 and "lamar: error:" in done.stderr
            continue
        assert done.returncode == 0, done.stderr
        assert done.stderr == ""


def test_head_takes_the_first_line_and_lamar_exits_0(sqlite_store: Path, tmp_path: Path) -> None:
    script = f'set -o pipefail; "{sys.executable}" -m lamar.cli ls --store "{sqlite_store}" | head -1'
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, cwd=tmp_path, timeout=60,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[:3] == ["id", "status", "verdict"]
    assert "Broken pipe" not in done.stderr and done.stderr == ""


def test_retire_twice_says_so_and_writes_nothing(lamar_cli, sqlite_store: Path, ids: dict[str, str]) -> None:
    first = lamar_cli("retire", ids["good"], "--store", sqlite_store, "--reason", "the build system changed")
    assert first.returncode == 0, first.stderr
    events = len(open_store(sqlite_store).read())
    again = lamar_cli("retire", ids["good"], "--store", sqlite_store, "--reason", "again")
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == f"{ids['good']} is already retired; nothing written"
    assert len(open_store(sqlite_store).read()) == events
    assert _status_events(sqlite_store, ids["good"]) == [
        {"id": ids["good"], "status": "retired", "reason": "the build system changed"}]


def test_revive_an_active_lesson_says_so_and_writes_nothing(run_cli, sqlite_store: Path,
                                                           ids: dict[str, str]) -> None:
    events = len(open_store(sqlite_store).read())
    out = run_cli("revive", ids["good"][:12], "--store", sqlite_store)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"{ids['good']} is already active; nothing written"
    assert len(open_store(sqlite_store).read()) == events and _status_events(sqlite_store, ids["good"]) == []
    # A candidate is not active: reviving it still makes it active, once.
    revived = run_cli("revive", ids["rival"], "--store", sqlite_store)
    assert revived.stdout.startswith(f"revived {ids['rival']} as active")
    assert Lamar(str(sqlite_store)).get(ids["rival"]).status is Status.ACTIVE
    # And a retired lesson comes back once; the second revive is the no-op.
    assert run_cli("revive", ids["retired"], "--store", sqlite_store).stdout.startswith("revived")
    assert "already active" in run_cli("revive", ids["retired"], "--store", sqlite_store).stdout
    assert [e["status"] for e in _status_events(sqlite_store, ids["retired"])] == ["retired", "active"]


def test_the_show_chart_has_a_legend_for_every_glyph(run_cli, sqlite_store: Path, ids: dict[str, str]) -> None:
    out = run_cli("show", ids["good"], "--store", sqlite_store)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("evidence over time"))
    end = next(i for i in range(start, len(lines)) if lines[i].strip().startswith("chart:"))
    legend = lines[end]
    chart = [line for line in lines[start:end] if line.startswith("  20")]  # rows start with the year
    glyphs = {ch for row in chart for ch in row.split()[-1]}
    assert glyphs and glyphs <= {"*", "-", "|", ".", "<", ">"}
    for glyph in glyphs:
        assert f" {glyph} " in legend, glyph


def test_a_context_without_a_value_shows_a_command_to_copy(run_cli, sqlite_store: Path) -> None:
    # The example was "like the context project=trace", which no shell runs.
    done = run_cli("recall", "task", "--store", sqlite_store)
    assert done.returncode == 1  # a usage error the command found, as the CLI's others
    assert "the context takes key=value pairs, like lamar recall project=trace; got 'task'" in done.stderr


def test_a_key_given_twice_with_two_values_is_refused_and_nothing_is_written(run_cli, sqlite_store: Path) -> None:
    # The later value used to replace the earlier one unseen: a lesson scoped, or an episode logged, for
    # a project the person did not mean.
    before = [(e.seq, e.kind) for e in open_store(sqlite_store).read()]
    for command in (["recall", "project=trace", "project=shop"],
                    ["add", "--precondition", "p", "--action", "a", "--scope", "project=trace", "project=shop"],
                    ["ls", "--scope", "project=trace", "--scope", "project=shop"]):
        done = run_cli(*command, "--store", sqlite_store)
        assert done.returncode == 1, command
        assert "gives 'project' twice (project=trace and project=shop): keep the one you mean" in done.stderr
    assert [(e.seq, e.kind) for e in open_store(sqlite_store).read()] == before
    same = run_cli("recall", "project=trace", "project=trace", "--store", sqlite_store, "--dry-run")
    assert same.returncode == 0, same.stderr  # the same value twice says one thing


def test_a_positional_a_list_option_took_is_named_with_where_to_put_it(lamar_cli, sqlite_store: Path,
                                                                        ids: dict[str, str]) -> None:
    # `--scope k=v TEXT` gives TEXT to --scope, and argparse then says TEXT is missing, which it was not.
    before = sqlite_store.read_bytes()
    for command, missing in [(["search", "--scope", "project=trace", "cache"], "TEXT"),
                             (["edit", "--scope", "project=x", ids["good"]], "id"),
                             (["apply", "--only", "abc", "report.json"], "REPORT.json")]:
        done = lamar_cli(*command, "--store", sqlite_store)
        assert done.returncode == 1 and "Traceback" not in done.stderr, command
        assert f"the following arguments are required: {missing}\n{command[1]} reads every word after it, " \
               f"up to the next option, as its list: put {missing} before {command[1]}, or end the list with --" \
               in done.stderr
    for command in (["search", "--scope", "project=trace"], ["search", "--status", "active"],
                    ["edit", "--action", "y"]):
        done = lamar_cli(*command, "--store", sqlite_store)  # left out, not taken: no word about lists
        assert done.returncode == 1 and "the following arguments are required" in done.stderr, command
        assert "reads every word after it" not in done.stderr, command
    ended = lamar_cli("--store", sqlite_store, "search", "--scope", "project=trace", "--", "DerivedData")
    assert ended.returncode == 0 and ids["good"] in ended.stdout, ended.stderr
    assert sqlite_store.read_bytes() == before


def test_a_word_no_option_took_is_answered_with_the_commands_own_usage(lamar_cli, sqlite_store: Path,
                                                                        ids: dict[str, str]) -> None:
    # The top level's usage ("lamar [-h] ... COMMAND") and `lamar --help` answered a mistyped option of
    # `lamar ls`, whose options it does not list; a close spelling is named.
    before = sqlite_store.read_bytes()
    for command, said, usage in [
        (["ls", "--stauts", "active"], "unrecognized arguments: --stauts active (did you mean --status?)", "ls"),
        (["report", ids["episode"], "shipped", "--replce"], "--replce (did you mean --replace?)", "report"),
        (["stats", "extra"], "unrecognized arguments: extra\n", "stats"),
        (["claude-code", "status", "--bogus"], "unrecognized arguments: --bogus\n", "claude-code status"),
    ]:
        done = lamar_cli("--store", sqlite_store, *command)
        assert done.returncode == 1 and said in done.stderr, done.stderr
        assert f"usage: lamar {usage} [-h]" in done.stderr
        assert f"(run `lamar {usage} --help` for details)" in done.stderr
        assert "usage: lamar [-h]" not in done.stderr and "Traceback" not in done.stderr
    assert sqlite_store.read_bytes() == before


def test_words_after_an_option_join_the_commands_list_of_words(lamar_cli, sqlite_store: Path,
                                                                ids: dict[str, str]) -> None:
    # argparse stopped the context at --dry-run, and `task=build` was an unrecognized argument.
    before = sqlite_store.read_bytes()
    done = lamar_cli("--store", sqlite_store, "recall", "project=trace", "--dry-run", "language=swift", "task=build")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("dry run for project=trace language=swift task=build (k=3): nothing logged")
    found = lamar_cli("--store", sqlite_store, "search", "DerivedData", "--status", "active", "rebuilding")
    assert found.returncode == 0 and ids["good"] in found.stdout, found.stderr
    stray = lamar_cli("--store", sqlite_store, "recall", "project=trace", "--dry-run", "-x")
    assert stray.returncode == 1 and "unrecognized arguments: -x" in stray.stderr  # an option is no context word
    assert sqlite_store.read_bytes() == before


def test_a_scope_key_no_lesson_has_is_named_with_the_keys_they_have(lamar_cli, sqlite_store: Path) -> None:
    # `--scope Project=trace` found nothing and said only "no lessons match", where recall names the keys.
    before = sqlite_store.read_bytes()
    listed = lamar_cli("--store", sqlite_store, "ls", "--scope", "Project=trace")
    assert listed.returncode == 0 and listed.stdout.strip() == (
        "no lessons match (no lesson is scoped by Project; their scopes' keys: language, project)"), listed.stdout
    found = lamar_cli("--store", sqlite_store, "search", "lint", "--scope", "lang=swift")
    assert found.stdout.strip() == ("no lesson holds 'lint' in that scope (no lesson is scoped by lang; their "
                                    "scopes' keys: language, project)"), found.stdout
    value = lamar_cli("--store", sqlite_store, "ls", "--scope", "project=nope")  # a key they have: no hint
    assert value.stdout.strip() == "no lessons match"
    assert sqlite_store.read_bytes() == before


def test_a_lesson_given_as_words_shows_the_add_command_with_options(run_cli, sqlite_store: Path) -> None:
    done = run_cli("add", "when a test is flaky", "pin the seed's value", "--store", sqlite_store)
    assert done.returncode == 1
    assert ("lamar add takes the lesson as options: lamar add --precondition 'when a test is flaky' "
            "--action 'pin the seed'\"'\"'s value'") in done.stderr
    assert run_cli("ls", "--store", sqlite_store).stdout.count("pin the seed") == 0  # nothing was added
    stray = run_cli("stats", "extra", "--store", sqlite_store)
    assert stray.returncode == 1 and "unrecognized arguments: extra" in stray.stderr
    assert "lamar add takes" not in stray.stderr



def test_an_ambiguous_prefix_lists_its_matches_and_marks_only_what_it_leaves_out(run_cli, tmp_path: Path) -> None:
    def store_of(name: str, count: int) -> Path:
        path = tmp_path / f"{name}.db"
        with Lamar(str(path)) as lam:
            for n in range(count):
                lam.add(Experience(f"situation {n}", "do it", id=f"exp_{name}{n}"))
        return path

    five = run_cli("show", "exp_ab", "--store", store_of("ab", 5))
    assert five.returncode == 1
    assert "is the start of 5 lesson ids (exp_ab0, exp_ab1, exp_ab2, ...): give more of the id" in five.stderr
    two = run_cli("show", "exp_cd", "--store", store_of("cd", 2))
    assert two.returncode == 1
    assert "is the start of 2 lesson ids (exp_cd0, exp_cd1): give more of the id" in two.stderr


def test_every_argument_of_every_command_says_what_it_is_in_help() -> None:
    """`lamar retire --help` listed its `id` and `lamar html --help` its `--out` with no word about them."""
    import argparse

    from lamar.cli.parser import build_parser

    bare = []

    def walk(name: str, parser: argparse.ArgumentParser) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub_name, sub in action.choices.items():
                    walk(f"{name} {sub_name}", sub)
            elif not action.help:
                bare.append(f"{name} {'/'.join(action.option_strings) or action.dest}")

    walk("lamar", build_parser())
    assert bare == []


def test_export_rules_to_a_folder_is_a_usage_error(lamar_cli, sqlite_store: Path, tmp_path: Path) -> None:
    for to, said in ((str(tmp_path), f"--to {str(tmp_path)!r} is a folder: name the rules file"),
                     ("", "--to is empty: name the rules file")):  # not "'' is a folder", what Path("") is
        done = lamar_cli("export-rules", "--store", sqlite_store, "--to", to)
        assert (done.returncode, done.stdout) == (1, ""), done.stderr
        assert done.stderr.startswith(f"lamar: error: {said}"), done.stderr
    assert not (tmp_path / "CLAUDE.md").exists()


def test_review_and_apply_without_a_report_say_which_file_they_take(lamar_cli, sqlite_store: Path) -> None:
    # After `lamar sleep`, `lamar review` alone answered only "the following arguments are required: REPORT.json",
    # which named no way to make one.
    for command in ("review", "apply"):
        done = lamar_cli(command, "--store", sqlite_store)
        assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
        assert "the following arguments are required: REPORT.json\nREPORT.json is the file `lamar sleep --out " \
               "REPORT.json` saves; `lamar stats` names the last one a sleep saved" in done.stderr, done.stderr
    swallowed = lamar_cli("apply", "--only", "abc", "report.json", "--store", sqlite_store)
    assert "is the file" not in swallowed.stderr  # the list took it: that is the one thing to say
