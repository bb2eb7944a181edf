"""An eraser SIGKILLed between its scrub, which put back the text another erase had just taken out
of the snapshot both lessons are in, and its check for that: its erase event stays pending, so
the next writer scrubs every erased lesson again and neither text is left in the files."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from lamar import Experience, Lamar
from lamar.policy.fold import ERASED
from lamar.state import erasure
from tests.at_once import _CONTEXT

_FIRST, _SECOND = "Ottoline Brandquist", "Aurelio Fenwick"
_ERASE = "import sys\nfrom lamar import Lamar\nwith Lamar(sys.argv[1]) as lam:\n    lam.erase(sys.argv[2], by='ops')\n"


def _erase_killed_after_its_scrub(location: str, first: str, second: str, steps: Any) -> None:
    """Erase `first`; between reading the log and writing its scrub, another process erases
    `second` to the end; then stop for good once the scrub is written."""
    lam = Lamar(location)
    scrub = lam.store.scrub  # type: ignore[attr-defined]

    def stopping(events: Any) -> int:
        texts = [e for e in events if e.kind != "erase"]
        if texts:
            done = subprocess.run([sys.executable, "-c", _ERASE, location, second],
                                  capture_output=True, text=True, timeout=120, check=False)
            steps["said"].put(done.returncode)
        written: int = scrub(events)
        if texts:
            steps["stopped"].set()
            steps["never"].wait(120)
        return written

    lam.store.scrub = stopping  # type: ignore[attr-defined]
    lam.erase(first, by="ops")


def _texts(folder: Path) -> list[str]:
    return [name for name in (_FIRST, _SECOND) if any(
        name.encode() in path.read_bytes() for path in folder.iterdir() if path.is_file())]


@pytest.mark.parametrize("suffix", ["db", "json"])
def test_an_eraser_killed_before_its_put_back_check_leaves_its_erase_pending_for_the_next_writer(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, suffix: str) -> None:
    location = str(tmp_path / f"shared.{suffix}")
    lam = Lamar(location)
    first = lam.add(Experience(f"{_FIRST} reports a crash", f"ask {_FIRST} for the log"))
    second = lam.add(Experience(f"{_SECOND} reports a hang", f"ask {_SECOND} for the trace"))
    lam.report(lam.recall({}).episode_id, 1.0)
    assert lam.checkpoint()  # a snapshot holding both lessons
    lam.close()
    steps = {"stopped": _CONTEXT.Event(), "never": _CONTEXT.Event(), "said": _CONTEXT.Queue()}
    eraser = _CONTEXT.Process(target=_erase_killed_after_its_scrub, args=(location, first, second, steps))
    eraser.start()
    try:
        assert steps["stopped"].wait(120)
        os.kill(eraser.pid or 0, signal.SIGKILL)
    finally:
        eraser.join(60)
    assert steps["said"].get(timeout=10) == 0  # the second erase ran to its end
    assert _texts(tmp_path) == [_SECOND]  # the killed eraser's scrub put the second text back
    with Lamar(location) as reader:  # a reader only: it leaves the store as it was
        stored = reader.store.read(0)
    assert [e.data["id"] for e in stored if e.kind == "erase" and e.data.get("pending")] == [first]
    monkeypatch.setattr(erasure, "GRACE", 0.0)  # the eraser's grace is over
    with Lamar(location, seed=3) as writer:
        writer.recall({"task": "x"})
        assert (writer.get(first).action, writer.get(second).action) == (ERASED, ERASED)
    assert _texts(tmp_path) == []
    with Lamar(location) as again:
        assert [e.data.get("pending") for e in again.store.read(0) if e.kind == "erase"] == [None, None]
