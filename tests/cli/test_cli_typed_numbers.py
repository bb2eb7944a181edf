"""Numbers typed on the command line are read as typed (ASCII digits): int() and float() also read
`1_0` as 10 and other scripts' digits as ours, which ran a command on a number nobody typed."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize(("args", "says"), [
    (("recall", "project=x", "--dry-run", "--k", "1_0"), "expected a number of slots, a whole number >= 0 in digits"),
    (("recall", "project=x", "--dry-run", "--k", "\u0661"), "got '\u0661'"),
    (("recall", "project=x", "--dry-run", "--k", "1001"), "at most 1,000 (more than a prompt holds"),
    (("recall", "project=x", "--dry-run", "--k", "99999999999"), "at most 1,000"),
    (("recall", "project=x", "--k", "1001"), "at most 1,000"),
    (("ls", "--width", "1_0"), "expected a whole number >= 1 in digits"),
    (("show", "exp_x", "--episodes", "\u0665"), "expected a whole number >= 1 in digits"),
    (("ui", "--port", "8_000"), "expected a port number 0-65535 in digits"),
    (("mcp", "--transport", "http", "--port", "\u0668\u0660\u0660\u0660"), "expected a port number 0-65535"),
    (("mcp", "--seed", "1_0"), "expected a whole number in digits (such as 7)"),
])
def test_a_number_not_typed_in_ascii_digits_is_refused(run_cli, sqlite_store, args, says):  # type: ignore[no-untyped-def]
    before = run_cli("stats", "--store", sqlite_store, "--json").stdout
    out = run_cli(*args, "--store", sqlite_store)
    assert out.returncode == 1 and says in out.stderr, (args, out.stderr)
    assert run_cli("stats", "--store", sqlite_store, "--json").stdout == before  # nothing logged


def test_numbers_typed_in_ascii_digits_still_pass(run_cli, sqlite_store):  # type: ignore[no-untyped-def]
    out = run_cli("recall", "project=x", "--dry-run", "--json", "--k", " 1000 ", "--store", sqlite_store)
    assert out.returncode == 0 and '"k": 1000' in out.stdout, out.stderr
    assert run_cli("ls", "--width", "12", "--store", sqlite_store).returncode == 0
