"""`lamar` writing to a stream whose encoding is not UTF-8 (an ASCII or Latin-1 locale, Windows
redirecting to a file): every lesson prints, characters the encoding lacks as escapes, and
`--json` stays JSON that reads back as stored. The real command runs in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lamar import Experience, Lamar, Scope

ACTION = "run ›make‹ again — it caches 🚀"


def _lamar(tmp_path: Path, encoding: str, *args: str) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if k not in ("LAMAR_STORE", "PYTHONUTF8")}
    env.update(HOME=str(tmp_path), PYTHONIOENCODING=encoding)
    return subprocess.run([sys.executable, "-m", "lamar.cli", *args], capture_output=True, cwd=tmp_path, env=env,
                          timeout=60, check=False)


@pytest.fixture
def store(tmp_path: Path) -> tuple[Path, str]:
    path = tmp_path / "experience.json"
    with Lamar(str(path), seed=1) as lam:
        exp_id = lam.add(Experience("the café build fails", ACTION, scope=Scope(project="café")))
        lam.add(Experience("the café build fails.", ACTION.capitalize(), scope=Scope(project="café")))
        lam.report(lam.recall({"project": "café"}).episode_id, "shipped")
    return path, exp_id


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_every_command_prints_a_lesson_the_encoding_cannot_write(
        tmp_path: Path, store: tuple[Path, str], encoding: str) -> None:
    path, exp_id = store
    for command in (["ls"], ["show", exp_id], ["search", "build"], ["recall", "project=caf\u00e9"],
                    ["recall", "--dry-run", "project=caf\u00e9"], ["sleep"]):
        done = _lamar(tmp_path, encoding, "--store", str(path), *command)
        assert done.returncode == 0, (command, done.stderr)
        text = done.stdout.decode(encoding)
        # `lamar recall` has no seed to set: its evidence coin now and then holds both lessons out of a recall,
        # and then the episode line says so instead.
        held = command == ["recall", "project=caf\u00e9"] and ": 0 lessons injected, 2 held out" in text
        assert "\\u2014 it caches \\ud83d\\ude80" in text or command == ["sleep"] or held, (command, text)

    listed = _lamar(tmp_path, encoding, "--store", str(path), "ls", "--json")
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.isascii()  # JSON a reader in any encoding takes, UTF-8 first
    assert {lesson["id"]: lesson["scope"] for lesson in json.loads(listed.stdout)}[exp_id] == {"project": "café"}

    # A report printed to a file in that encoding is one `lamar review` reads.
    report = _lamar(tmp_path, encoding, "--store", str(path), "sleep", "--out", "-")
    assert report.returncode == 0 and report.stdout.isascii(), report.stderr
    (tmp_path / "report.json").write_bytes(report.stdout)
    reviewed = _lamar(tmp_path, encoding, "--store", str(path), "review", "report.json")
    assert reviewed.returncode == 0, reviewed.stderr
    assert "caches \\ud83d\\ude80" in reviewed.stdout.decode(encoding)
