"""Stores an older Lamar built (tools/old_stores.py names the commit) open with this one, read as that
Lamar read them, keep working, and are refused by that Lamar once this one has written them."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from lamar import Lamar, SleepReport
from tools.old_stores import COMMIT, CONTEXT, read

FIXTURES = Path(__file__).parent / "fixtures"
NAMES = [f"old-{COMMIT}.json", f"old-{COMMIT}.db"]


def _copy(name: str, folder: Path, *, sidecars: bool = True) -> Path:
    for part in FIXTURES.glob(name + "*"):
        if part.name.endswith((".expected", ".sleep.json")) or (not sidecars and part.name != name):
            continue
        shutil.copy(part, folder / part.name)
    return folder / name


def _expected(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / (name + ".expected")).read_text())  # type: ignore[no-any-return]


def _as_read_now(old: dict[str, Any]) -> dict[str, Any]:
    """What this Lamar reads where the CHANGELOG says it changed: an erased lesson's scope values read
    "[erased]" ("`lamar erase` kept an erased lesson's scope values")."""
    now = json.loads(json.dumps(old))
    for lesson in now["lessons"].values():
        if "erased" in lesson["provenance"]:
            lesson["scope"] = {key: "[erased]" for key in lesson["scope"]}
    return now


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("sidecars", [True, False], ids=["with-state", "log-only"])
def test_an_older_store_reads_as_its_lamar_read_it(tmp_path: Path, name: str, sidecars: bool) -> None:
    expected = _expected(name)
    path = _copy(name, tmp_path, sidecars=sidecars)
    assert read(str(path), expected["ids"]) == _as_read_now(expected["read"])


@pytest.mark.parametrize("name", NAMES)
def test_an_older_store_keeps_working_and_reopens_the_same(tmp_path: Path, name: str) -> None:
    expected = _expected(name)
    ids = expected["ids"]
    path = _copy(name, tmp_path)
    with Lamar(str(path), k=2, seed=1) as lam:
        late = ids["missing"][0]
        lam.report(late, "shipped")  # an episode the older Lamar never heard of, reported now
        for _ in range(10):
            lam.report(lam.recall(CONTEXT).episode_id, "corrected")
        assert lam.episode(late).reward == 1.0
        assert lam.stats()["episodes"] == expected["read"]["episodes_logged"] + 10
        report = SleepReport.from_dict(json.loads((FIXTURES / (name + ".sleep.json")).read_text()))
        lam.apply(report)  # a report the older Lamar wrote to disk: applied or skipped, never a crash
    again = read(str(path), ids)
    for sidecar in (".state", ".index"):
        path.with_name(path.name + sidecar).unlink(missing_ok=True)
    if path.suffix == ".db":
        with sqlite3.connect(path) as db:
            db.execute("DELETE FROM state")
    assert read(str(path), ids) == again  # the state this Lamar saved is what its log folds to
    assert late not in again["pending"] and set(again["pending"]) == set(expected["read"]["pending"]) - {late}


def test_an_older_erase_leaves_its_scope_values_until_the_lesson_is_erased_again(tmp_path: Path) -> None:
    for name in NAMES:
        path = _copy(name, tmp_path)
        erased = next(i for i, e in _expected(name)["read"]["lessons"].items() if "erased" in e["provenance"])
        value = _expected(name)["read"]["lessons"][erased]["scope"]["task"]
        assert value.encode() in path.read_bytes()
        with Lamar(str(path)) as lam:
            assert lam.get(erased).scope == {"task": "[erased]"}
            assert lam.erase(erased, by="upgrade").again
        assert value.encode() not in path.read_bytes()
        if path.suffix == ".json":
            assert all(value.encode() not in p.read_bytes() for p in tmp_path.glob(path.name + ".*"))


def older_lamar(folder: Path, commit: str = COMMIT) -> Path | None:
    """The lamar package of `commit`, exported from this repository's history into `folder` (None where it is
    not in this clone's history)."""
    root = Path(__file__).resolve().parents[2]
    archive = subprocess.run(["git", "archive", commit, "lamar"], capture_output=True, cwd=root, check=False)
    if archive.returncode != 0:
        return None
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive.stdout, check=True)
    return folder


@pytest.mark.parametrize("name", NAMES)
def test_the_older_lamar_refuses_or_reads_whole_a_store_this_one_wrote(tmp_path: Path, name: str) -> None:
    (tmp_path / "older").mkdir()
    older = older_lamar(tmp_path / "older")
    if older is None:
        pytest.skip(f"commit {COMMIT} is not in this clone's history")
    path = _copy(name, tmp_path)
    with Lamar(str(path), k=2, seed=1) as lam:
        lam.edit(next(e.id for e in lam.experiences() if e.status.value == "active"), action="a new wording")
        lam.report(lam.recall(CONTEXT).episode_id, "shipped")
    before = path.read_bytes()
    now = read(str(path), _expected(name)["ids"])
    script = ("import sys\nfrom lamar import Lamar, LamarError\ntry:\n    lam = Lamar(sys.argv[1])\n"
              "except LamarError as exc:\n    print('refused:', exc)\n"
              "else:\n    print('opened', len(lam.experiences()))")
    done = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True, text=True,
                          env={"PYTHONPATH": str(older)}, cwd=older, check=True)
    if path.suffix == ".db":  # the episode table of schema version 3 is one that Lamar would leave behind
        assert done.stdout.startswith("refused:") and "upgrade lamar" in done.stdout, done.stdout
        assert path.read_bytes() == before
    else:  # the JSON format is the same, and every kind this one wrote is one it folds
        assert done.stdout.strip() == f"opened {len(now['lessons'])}", done.stdout
    assert read(str(path), _expected(name)["ids"]) == now
