"""`python -m lamar.gym.peer_tuning`: its arguments are read by argparse, refused before any run."""

from __future__ import annotations

import subprocess
import sys

import pytest

from lamar.gym import peer_tuning


def test_help_says_what_it_runs() -> None:
    done = subprocess.run([sys.executable, "-m", "lamar.gym.peer_tuning", "--help"], capture_output=True, text=True,
                          check=False, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "usage: python -m lamar.gym.peer_tuning" in done.stdout and "--family" in done.stdout


@pytest.mark.parametrize("argv, says", [
    (["0"], "workers must be at least 1"),
    (["100000"], "workers is from 1 to"),
    (["two"], "invalid int value"),
    (["--family", "0"], "--family is the number of tuning worlds"),
    (["--family", "100001"], "--family is the number of tuning worlds"),
])
def test_a_bad_argument_is_refused_before_any_run(argv: list[str], says: str, capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    ran: list[object] = []
    monkeypatch.setattr(peer_tuning, "tune", lambda **kw: ran.append(kw) or "")
    monkeypatch.setattr(peer_tuning, "tune_family", lambda *a, **kw: ran.append(a) or "")
    with pytest.raises(SystemExit) as exited:
        peer_tuning.main(argv)
    assert exited.value.code == 2 and says in capsys.readouterr().err and not ran


def test_the_documented_forms_reach_the_sweeps(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[str, object]] = []
    monkeypatch.setattr(peer_tuning, "tune", lambda **kw: calls.append(("gym", kw)) or "")
    monkeypatch.setattr(peer_tuning, "tune_family", lambda worlds, **kw: calls.append(("family", (worlds, kw))) or "")
    peer_tuning.main(["2"])
    peer_tuning.main(["--family", "16"])
    assert calls == [("gym", {"workers": 2}), ("family", (16, {"workers": None}))]
