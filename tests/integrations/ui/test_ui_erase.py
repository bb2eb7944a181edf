"""`lamar ui` erases a lesson from its page: asked once more, then the text is gone from the page
and the store file, its evidence kept; no further lever is offered."""

from __future__ import annotations

import html
import random
import re
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

from lamar import Experience, Lamar, Scope, Signal

pytest.importorskip("starlette")

from tests.integrations.ui.test_ui_trial import _get, serving

NAME = "Philippa Marchbanks"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, Path, str]]:
    path = tmp_path / "lessons.db"
    with Lamar(str(path), seed=3) as lam:
        exp_id = lam.add(Experience(f"{NAME}'s build fails", f"ask {NAME}", scope=Scope(project="trace")))
        rng = random.Random(3)
        for _ in range(30):
            rec = lam.recall({"project": "trace", "user": "pmarchbanks"})
            lam.report(rec.episode_id, rng.choice(list(Signal)))
    with serving(path) as url:
        yield url, path, exp_id


def _stored(path: Path) -> bytes:
    return b"".join(p.read_bytes() for p in path.parent.iterdir() if p.name.startswith(path.name))


def test_erase_asks_then_removes_the_text_and_keeps_the_evidence(server: tuple[str, Path, str]) -> None:
    url, path, exp_id = server
    with Lamar(str(path)) as lam:
        before = lam.evidence(exp_id)
    page = html.unescape(_get(url, f"/lessons/{quote(exp_id, safe='')}"))
    assert "Retire…" in page and "Erase…" in page
    question = html.unescape(_get(url, f"/lessons/{quote(exp_id, safe='')}/erase"))
    assert "Erase this lesson?" in question and "cannot be undone" in question and 'name="contexts"' in question
    assert NAME.encode() in _stored(path)  # asking changed nothing
    with pytest.raises(urllib.error.HTTPError):  # no token: refused
        urllib.request.urlopen(urllib.request.Request(url.split("/?token=")[0] + f"/lessons/{exp_id}/erase",
                                                      data=b"confirm=yes&contexts=yes"), timeout=30)
    assert NAME.encode() in _stored(path)
    shown = html.unescape(_get(url, f"/lessons/{quote(exp_id, safe='')}/erase",
                               {"confirm": "yes", "contexts": "yes", "reason": "a name"}))
    assert NAME not in shown and "erased: its text is gone" in shown
    assert "When [erased], [erased]." in re.sub(r"</?bdi>", "", shown)  # each field isolated (lamar_ui.bidi)
    assert "Revive…" not in shown and "Erase…" not in shown
    assert "erased by " in shown and ": a name" in shown  # the audit trail
    assert NAME.encode() not in _stored(path) and b"pmarchbanks" not in _stored(path)
    with Lamar(str(path)) as lam:
        after = lam.evidence(exp_id)
    assert (after.verdict, after.lift, after.lower, after.upper) == (before.verdict, before.lift, before.lower,
                                                                     before.upper)
