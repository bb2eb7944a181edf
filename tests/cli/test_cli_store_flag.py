"""Where the store is: --store, else $LAMAR_STORE, else the default in the (temporary) home folder;
an empty --store is refused, never read as the default."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path
from typing import Any

import pytest

from lamar import Experience, Lamar

EMPTY = "--store is empty: name a store (--store PATH), or leave the flag out"


def digests(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


@pytest.fixture
def default_store(run_cli: Any, tmp_path: Path) -> Path:
    """The default store, made in the test's own HOME (run_cli sets HOME to tmp_path/home)."""
    added = run_cli("add", "--precondition", "the build fails", "--action", "read the first error", "--create")
    assert added.returncode == 0, added.stderr
    folder = tmp_path / "home" / ".lamar"
    assert (folder / "experience.json").exists()
    return folder


@pytest.mark.parametrize("command", [
    ("stats",), ("ls",), ("show", "exp_0"), ("recall", "project=x"), ("retire", "exp_0"),
    ("add", "--precondition", "a deploy fails", "--action", "retry it"), ("import-rules", "--apply"),
    ("claude-code", "status"), ("claude-code", "install"),
])
@pytest.mark.parametrize("where", ["after", "before", "equals"])
def test_an_empty_store_flag_is_refused_and_the_default_store_left_alone(
        run_cli: Any, default_store: Path, tmp_path: Path, command: tuple[str, ...], where: str) -> None:
    (tmp_path / "CLAUDE.md").write_text("- Never push to main\n")
    before = digests(default_store)
    if where == "after":
        argv = [*command, "--store", ""]
    elif where == "before":
        argv = ["--store", "", *command]
    else:
        argv = [*command, "--store="]
    out = run_cli(*argv, stdin="")
    assert out.returncode == 1, (out.stdout, out.stderr)
    assert EMPTY in out.stderr and "Traceback" not in out.stderr
    assert "experience.json" not in out.stdout  # the default store was not shown as the one used
    assert digests(default_store) == before
    assert not (tmp_path / ".claude").exists()  # install wrote no hook entries


@pytest.mark.parametrize("argv", [("mcp", "--store", ""), ("--store", "", "mcp"), ("mcp", "--store=")])
def test_lamar_mcp_refuses_an_empty_store_flag_before_serving(
        lamar_cli: Any, default_store: Path, argv: tuple[str, ...]) -> None:
    # A subprocess, as an MCP client starts it: importing the SDK binds its client's stderr.
    before = digests(default_store)
    out = lamar_cli(*argv)
    assert out.returncode == 1 and EMPTY in out.stderr and out.stdout == ""
    assert digests(default_store) == before


def test_a_blank_store_flag_is_refused_too(run_cli: Any, default_store: Path) -> None:
    out = run_cli("stats", "--store", "  ")
    assert out.returncode == 1 and EMPTY in out.stderr


def test_without_the_flag_the_environment_then_the_default_store_is_used(
        run_cli: Any, default_store: Path, tmp_path: Path) -> None:
    default = run_cli("stats", "--json")
    assert default.returncode == 0 and str(default_store / "experience.json") in default.stdout
    other = tmp_path / "other.json"
    assert run_cli("add", "--precondition", "a", "--action", "do b", "--create", "--store", other).returncode == 0
    named = run_cli("stats", "--json", extra_env={"LAMAR_STORE": str(other)})
    assert named.returncode == 0 and str(other) in named.stdout
    flag = run_cli("stats", "--json", "--store", other, extra_env={"LAMAR_STORE": str(default_store / "x.json")})
    assert flag.returncode == 0 and str(other) in flag.stdout


@pytest.mark.parametrize("name", ["lessons.db", "lessons.json"])
def test_a_store_path_that_is_a_folder_says_so_and_what_to_name(lamar_cli: Any, tmp_path: Path, name: str) -> None:
    """`--store` naming a folder: SQLite said only "unable to open database file" and the JSON store
    "[Errno 21] Is a directory"; both say it is a folder and to name the store file in it."""
    folder = tmp_path / name
    folder.mkdir()
    for args in (("stats",), ("add", "--create", "--precondition", "p", "--action", "a")):
        done = lamar_cli("--store", folder, *args)
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
        assert f"{folder} is a folder, not a store: name the store file in it" in done.stderr
    assert list(folder.iterdir()) == []


@pytest.mark.parametrize("name", ["experience.db", "experience.json"])
def test_a_folder_holding_a_store_names_that_store(lamar_cli: Any, tmp_path: Path, name: str) -> None:
    # `--store ~/.lamar` where the folder holds experience.json was told to name experience.db.
    lam = Lamar(str(tmp_path / name))
    lam.add(Experience("p", "a"))
    lam.close()
    done = lamar_cli("--store", tmp_path, "stats")
    assert done.returncode == 2 and f"(e.g. --store {tmp_path / name})" in done.stderr, done.stderr


@pytest.mark.parametrize("command", [("stats",), ("ls",), ("show", "exp_0"), ("export", "--out", "copy.db")])
def test_a_postgresql_store_without_psycopg_names_the_postgres_extra(
        command: tuple[str, ...], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A read-only command asks the server whether the namespace holds a store before it opens one;
    that question said only "No module named 'psycopg'", where opening the store names the extra."""
    from lamar.cli import main
    from lamar.extras import install_command

    monkeypatch.setitem(sys.modules, "psycopg", None)  # what `import psycopg` meets without the extra
    assert main(["--store", "postgresql://127.0.0.1/test", *command]) == 2
    said = capsys.readouterr().err
    assert f"a PostgreSQL store needs psycopg 3 (import of psycopg halted; None in sys.modules), the postgres extra: " \
           f"{install_command('postgres')}" in said, said


def test_a_sleep_report_given_as_the_store_is_named_one(run_cli: Any, tmp_path: Path) -> None:
    # `lamar ls --store report.json` was told only that the file is JSON but not a store.
    store = tmp_path / "s.json"
    run_cli("add", "--create", "--store", store, "--precondition", "a lint error", "--action", "run the formatter")
    assert run_cli("sleep", "--store", store, "--out", tmp_path / "report.json").returncode == 0
    before = (tmp_path / "report.json").read_bytes()
    done = run_cli("ls", "--store", tmp_path / "report.json")
    assert done.returncode == 2 and f"{tmp_path / 'report.json'} is a sleep report, not a store" in done.stderr
    assert f"`lamar review {tmp_path / 'report.json'}`" in done.stderr, done.stderr
    assert (tmp_path / "report.json").read_bytes() == before
