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
