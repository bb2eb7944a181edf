"""The next command sleep and review print is one the user's shell runs: a full path when `lamar` is not on PATH."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

NO_LAMAR = {"PATH": "/usr/bin:/bin"}  # Lamar run by its full path or `python -m lamar`: its bin folder not on PATH


@pytest.fixture
def beside() -> str:
    script = Path(sys.executable).with_name("lamar")
    if not script.is_file():
        pytest.skip("this environment has no lamar script beside its Python")
    return shlex.quote(str(script.absolute()))


def test_sleep_and_review_name_the_lamar_that_ran(lamar_cli, store, tmp_path, beside) -> None:
    report = tmp_path / "r.json"
    out = lamar_cli("sleep", "--store", store, "--out", report, extra_env=NO_LAMAR)
    assert out.returncode == 0, out.stderr
    assert f"next: {beside} review {report}, then {beside} apply {report}" in out.stdout, out.stdout
    out = lamar_cli("review", report, "--store", store, stdin="y\nn\n", extra_env=NO_LAMAR)
    assert out.returncode == 0, out.stderr
    assert f"Next: {beside} apply {report}" in out.stdout, out.stdout
    assert " lamar " not in out.stdout.replace(f"{beside} ", ""), out.stdout


def test_on_path_the_advice_says_a_bare_lamar(lamar_cli, store, tmp_path, beside) -> None:
    on_path = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"}
    out = lamar_cli("sleep", "--store", store, "--out", tmp_path / "r.json", extra_env=on_path)
    assert f"next: lamar review {tmp_path / 'r.json'}" in out.stdout, out.stdout
