"""`lamar mcp` on the command line: option errors, and the extra it names when the SDK is missing."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from lamar.cli import main
from lamar.extras import install_command


def test_host_and_port_belong_to_http(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mcp", "--store", str(store), "--port", "9000"]) == 1
    assert "apply to --transport http" in capsys.readouterr().err
    assert main(["mcp", "--store", str(store), "--transport", "http", "--port", "70000"]) == 1
    assert "expected a port number 0-65535" in capsys.readouterr().err


def test_read_only_never_creates_a_store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "none.db"
    assert main(["mcp", "--store", str(missing), "--read-only"]) == 2
    assert "no store at" in capsys.readouterr().err
    assert not missing.exists()


def test_without_the_sdk_the_error_names_the_extra(store: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    for name in [m for m in sys.modules if m == "lamar_mcp" or m.startswith(("lamar_mcp.", "mcp.", "mcp_types"))]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "mcp", None)  # what `import mcp` meets when the SDK is absent
    assert main(["mcp", "--store", str(store)]) == 2
    assert f"the mcp extra: {install_command('mcp')}" in capsys.readouterr().err


@pytest.mark.parametrize("command", [["mcp"], ["mcp", "--read-only"], ["ls"]])
def test_a_store_another_process_keeps_locked_says_what_a_command_line_user_can_do(
        store: Path, command: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The lock error must not send a command line user to the Python API's `timeout=`, which no command
    takes, but say to start it again once the other writer is done."""
    import functools
    import sqlite3

    import lamar.cli.session
    from lamar.store import open_store

    # The store's 30 s wait, shortened: the message is what is checked, not the wait.
    monkeypatch.setattr(lamar.cli.session, "open_store", functools.partial(open_store, timeout=0.2))
    other = sqlite3.connect(store, isolation_level=None)
    other.execute("PRAGMA journal_mode=DELETE")
    other.execute("BEGIN EXCLUSIVE")  # another process in the middle of a transaction on a non-WAL file
    try:
        before = store.read_bytes()
        assert main([*command, "--store", str(store)]) == 2
        said = capsys.readouterr().err
        assert "another connection holds its lock" in said
        assert "timeout=" not in said
        assert "once that writer is done" in said
        assert ("restart the server" if command[0] == "mcp" else "run the command again") in said
        assert store.read_bytes() == before
    finally:
        other.execute("COMMIT")
        other.close()


def test_the_command_lines_busy_advice_replaces_the_stores_by_its_field_whatever_its_words(
        store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The store's busy refusal carries its advice (`timeout=`) as its `advice`, and the command line puts its
    own in its place by that field: reworded at its source, the Python API's advice still never reaches a user."""
    import functools
    import sqlite3

    import lamar.cli.session
    from lamar import StoreError
    from lamar.cli.session import open_raw
    from lamar.store import open_store, sqlite_checks

    reworded = "wait until that writer has finished, or give a longer timeout="
    monkeypatch.setattr(sqlite_checks, "BUSY_ADVICE", reworded)
    monkeypatch.setattr(lamar.cli.session, "open_store", functools.partial(open_store, timeout=0.2))
    other = sqlite3.connect(store, isolation_level=None)
    other.execute("PRAGMA journal_mode=DELETE")
    other.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(StoreError) as refused:
            open_raw(str(store), create=False, busy="run it again later")
    finally:
        other.execute("COMMIT")
        other.close()
    cause = refused.value.__cause__
    assert isinstance(cause, StoreError) and cause.advice == reworded and str(cause).endswith(reworded)
    assert refused.value.advice == "run it again later" and str(refused.value).endswith(": run it again later")
    assert "timeout=" not in str(refused.value) and "another connection holds its lock" in str(refused.value)


@pytest.mark.parametrize("argv", [["mcp", "--store", ""], ["mcp", "--port", "9000"]])
def test_a_usage_error_is_said_before_the_missing_sdk(tmp_path: Path, argv: list[str], monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """docs/cli.md: an empty --store is a usage error on every command, `lamar mcp` included; a user
    who installs the extra first should not meet it only afterwards."""
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in [m for m in sys.modules if m == "lamar_mcp" or m.startswith(("lamar_mcp.", "mcp.", "mcp_types"))]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "mcp", None)
    assert main(argv) == 1
    said = capsys.readouterr().err
    assert "the mcp extra" not in said and ("--store is empty" in said or "apply to --transport http" in said), said


def test_store_timeout_sets_the_wait_for_another_writers_lock(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A client's `--store-timeout 0.2` is the wait the lock error names, and the advice offers a longer one."""
    import sqlite3

    other = sqlite3.connect(store, isolation_level=None)
    other.execute("PRAGMA journal_mode=DELETE")
    other.execute("BEGIN EXCLUSIVE")
    try:
        assert main(["mcp", "--store", str(store), "--store-timeout", "0.2"]) == 2
        said = capsys.readouterr().err
        assert "past the 0.2 s wait" in said, said
        assert "restart the server once that writer is done" in said and "a longer --store-timeout" in said, said
    finally:
        other.execute("COMMIT")
        other.close()


@pytest.mark.parametrize("value", ["-1", "nan", "inf", "1_0", "soon"])
def test_store_timeout_is_a_finite_number_of_seconds(store: Path, value: str,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mcp", "--store", str(store), "--store-timeout", value]) == 1
    assert "expected the seconds to wait" in capsys.readouterr().err


def test_store_timeout_belongs_to_file_stores(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mcp", "--store", ":memory:", "--store-timeout", "5"]) == 1
    assert "--store-timeout applies to a SQLite or JSON store" in capsys.readouterr().err
