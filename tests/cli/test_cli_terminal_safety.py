"""A scope value an agent wrote cannot drive the terminal of the person who runs `lamar ls` or `lamar show`.

Lesson text is cleaned when stored, but scope values keep what the agent sent: an ESC sequence in
one reached the terminal raw (it can clear the screen or recolour what follows), and a bidi
override could reverse the rest of the line. The real command runs in a subprocess.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from lamar import Experience, Lamar, Scope

HOSTILE = {"project": "t\x1b[2J", "note": "s\u202er"}


def _lamar(store: Path, *args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "lamar.cli", "--store", str(store), *args],
                          capture_output=True, text=True, timeout=60, check=True)
    return done.stdout


def test_control_and_bidi_characters_in_a_scope_are_printed_as_escapes(tmp_path: Path) -> None:
    store = tmp_path / "lessons.db"
    lam = Lamar(str(store))
    exp_id = lam.add(Experience("the build fails", "clear DerivedData", scope=Scope(HOSTILE)))
    assert dict(lam.get(exp_id).scope) == HOSTILE  # stored as sent: nothing is lost
    lam.close()
    for out in (_lamar(store, "ls"), _lamar(store, "show", exp_id)):
        assert "\x1b" not in out and "\u202e" not in out
        assert "project=t\\x1b[2J" in out and "note=s\\u202er" in out
