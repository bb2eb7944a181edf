"""`lamar erase`: the lesson's text leaves the store file and every later export, its evidence and
every verdict stay, the audit says who erased it; bad input changes nothing."""

from __future__ import annotations

import re
from pathlib import Path

from lamar import Lamar, Status
from lamar.store import open_store

TEXT = (b"clear DerivedData", b"stale module maps", b"after a dependency bump")


def _stored(path: Path) -> bytes:
    """Every byte of the store and the files beside it (journal, index, saved state)."""
    return b"".join(p.read_bytes() for p in sorted(path.parent.iterdir()) if p.name.startswith(path.name))


def _events(path: Path) -> list[dict[str, object]]:
    store = open_store(str(path))
    try:
        return [e.to_dict() for e in store.read()]
    finally:
        store.close()


def _evidence(path: Path) -> dict[str, tuple[object, ...]]:
    with Lamar(str(path)) as lam:
        return {e.id: (ev.verdict, ev.lift, ev.lower, ev.upper, ev.randomized, ev.injected)
                for e in lam.experiences() for ev in [lam.evidence(e.id)]}


def test_erase_leaves_no_text_in_the_store_or_an_export_and_keeps_every_verdict(lamar_cli, run_cli, store, ids,
                                                                                 tmp_path):
    assert all(word in _stored(store) for word in TEXT)
    before = _evidence(store)
    assert before[ids["good"]][0].value == "helps"
    out = lamar_cli("erase", ids["good"][:12], "--contexts", "--by", "the DPO", "--reason", "a request",
                    "--store", store)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(f"erased {ids['good']}: its text and the contexts of ")
    assert "recorded as erased by the DPO: a request" in out.stdout
    assert not [word for word in TEXT if word in _stored(store)]
    assert _evidence(store) == before  # every lesson's verdict, lift and bounds, the erased one's too
    with Lamar(str(store)) as lam:
        lesson = lam.get(ids["good"])
        assert (lesson.precondition, lesson.action, lesson.status) == ("[erased]", "[erased]", Status.RETIRED)
        assert all(lam.episode(e).context == {} for e in [ids["episode"]] if ids["good"] in lam.episode(e).eligible)
    (audit,) = [e for e in open_store(store).read() if e.kind == "erase"]
    assert (audit.data["id"], audit.data["by"], audit.data["reason"], audit.data["contexts"]) == (
        ids["good"], "the DPO", "a request", True)
    shown = run_cli("show", ids["good"], "--store", store).stdout
    assert "erased by the DPO: a request" in shown
    assert re.search(r"\n  erased: by the DPO at \d{4}-\d\d-\d\d \d\d:\d\d UTC\n", shown), shown  # never raw JSON
    copy = tmp_path / "copy.db"
    assert run_cli("export", "--store", store, "--out", copy).returncode == 0
    assert not [word for word in TEXT if word in _stored(copy)]
    assert _evidence(copy) == before


def test_erase_refuses_bad_input_and_changes_nothing(run_cli, sqlite_store, ids):
    before = _stored(sqlite_store)
    for args, code, message in [
        (("exp_missing",), 1, "lamar ls"),
        ((ids["good"], "--by", " "), 1, "argument --by: the name is empty: say who erases the lesson"),
        ((ids["good"], "--by="), 1, "or leave --by out for your OS user name"),
        ((ids["good"], "--by", "x" * 100_000), 1, "by is 100,000 characters long, at most 6,000"),
        ((ids["good"], "--contexts", "yes"), 1, "unrecognized arguments"),
        ((), 1, "the following arguments are required: id"),
    ]:
        out = run_cli("erase", *args, "--store", sqlite_store)
        assert (out.returncode, message in out.stderr) == (code, True), (args, out.stderr)
        assert _stored(sqlite_store) == before, args
    empty_by = run_cli("erase", ids["good"], "--by", "", "--store", sqlite_store).stderr
    assert "None" not in empty_by and "by names who does it" not in empty_by  # the Python API's terms, not the flag's
    missing = run_cli("erase", ids["good"], "--store", sqlite_store.with_name("typo.db"))
    assert missing.returncode == 2 and "no store at" in missing.stderr
    assert not sqlite_store.with_name("typo.db").exists()
    assert run_cli("erase", ids["good"], "--store", sqlite_store).returncode == 0
    erased = _events(sqlite_store)
    again = run_cli("erase", ids["good"], "--store", sqlite_store)
    assert again.returncode == 0 and "already erased (by" in again.stdout and "no second erase event" in again.stdout
    assert _events(sqlite_store) == erased  # the file compacted again, no event written or changed
    after = _stored(sqlite_store)
    revived = run_cli("revive", ids["good"], "--store", sqlite_store)
    assert revived.returncode == 1 and "was erased" in revived.stderr
    assert "add a new lesson instead (`lamar add`, or Lamar.add)" in revived.stderr  # what to do, not only why
    assert _stored(sqlite_store) == after


def test_erase_prints_json(run_cli, json_store, ids, strict_json):
    out = run_cli("erase", ids["neutral"], "--json", "--store", json_store)
    assert out.returncode == 0, out.stderr
    erased = strict_json(out.stdout)
    assert (erased["id"], erased["episodes"], erased["reason"]) == (ids["neutral"], [], "erased by hand")
    assert erased["events"] >= 1 and erased["by"]
