"""Two erases at once, one with contexts: the other's scrub of the checkpoint, from a read before
the first's write, puts back the slices that write took out. Their names are contexts the first
blanked in the same write, so the other's check finds them in its earlier read, not in the log."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from lamar import Experience, Lamar, Signal
from lamar.experience import Scope

_NAME, _OTHER = "Vexmoor Quillane", "Aurelio Fenwick"
_ERASE = ("import sys\nfrom lamar import Lamar\nwith Lamar(sys.argv[1]) as lam:\n"
          "    lam.erase(sys.argv[2], contexts=True, by='ops')\n")


def _slices(log: list[Any]) -> list[Any]:
    """The slices named by the blanked user that the log's checkpoints keep."""
    return [s for e in log if e.kind == "snapshot" for raw in e.data["lessons"]
            for s in (raw.get("slices") or {}).get("slices", ()) if s[1] == _NAME]


@pytest.mark.parametrize("suffix", ["db", "json"])
def test_a_later_scrub_of_the_checkpoint_loses_the_slices_an_erase_with_contexts_took_out(
        tmp_path: Path, suffix: str) -> None:
    location = str(tmp_path / f"shared.{suffix}")
    lam = Lamar(location, k=3, seed=4)
    other = lam.add(Experience(f"{_OTHER} reports a hang", f"ask {_OTHER} for the trace", scope=Scope(task="t")))
    lam.add(Experience("the build fails", "clear the cache", scope=Scope(task="t")))
    rng = random.Random(4)
    for n in range(60):  # slices named by the user, in the checkpoint; the secret lesson is in none of them
        lam.report(lam.recall({"task": "t", "user": _NAME if n % 2 else "plain"}).episode_id,
                   rng.choice(list(Signal)))
    assert lam.checkpoint() and _slices(lam.store.read(0))
    secret = lam.add(Experience("a crash", "ask for the log", scope=Scope(task="t")))
    lam.report(lam.recall({"task": "t", "user": _NAME}).episode_id, Signal.SHIPPED)  # logged, after the checkpoint
    lam.close()
    eraser = Lamar(location)
    scrub = eraser.store.scrub  # type: ignore[attr-defined]
    said: list[int] = []

    def late(events: Any) -> int:
        if any(e.kind == "snapshot" for e in events) and not said:  # read before, written after the other erase
            said.append(subprocess.run([sys.executable, "-c", _ERASE, location, secret], capture_output=True,
                                       text=True, timeout=120, check=False).returncode)
        written: int = scrub(events)
        return written

    eraser.store.scrub = late  # type: ignore[attr-defined]
    eraser.erase(other, by="ops")
    eraser.close()
    assert said == [0]
    with Lamar(location) as reader:
        stored = reader.store.read(0)
    assert not [e for e in stored if e.kind == "erase" and e.data.get("pending")]
    assert _slices(stored) == []  # the erase with contexts took them out; the later scrub put them back
