"""Provenance, audit reasons and refused ids at the boundary where lessons come in."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lamar import Experience, InvalidArgument, InvalidExperience, Lamar
from lamar.sleep.kinds import kind_of
from lamar.sleep.proposals import Proposal, SleepReport

AWS = "AKIA" + "IOSFODNN7EXAMPLQ"
GITHUB = "ghp_" + "a1B2c3D4e5" * 4
BLOB = "x" * 3_000_000


@pytest.fixture(params=["memory", "sqlite", "json"])
def where(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return {"memory": ":memory:", "sqlite": str(tmp_path / "s.db"), "json": str(tmp_path / "s.json")}[request.param]


def _on_disk(where: str) -> str:
    return "" if where == ":memory:" else Path(where).read_text(errors="replace")


def _candidate_report(provenance: dict[str, Any]) -> SleepReport:
    exp = {"id": "exp_new", "precondition": "the UI test times out", "action": "run it alone", "rationale": "",
           "scope": {"project": "trace"}, "status": "candidate", "provenance": provenance, "created_at": 0.0}
    return SleepReport.from_dict({"proposals": [{
        "id": "candidate_x", "kind": "candidate", "experience_ids": ["exp_new"], "reason": "mined",
        "evidence": {}, "payload": {"experience": exp}, "expect": {}}]})


def test_a_secret_in_the_provenance_is_redacted_by_add(where: str) -> None:
    lam = Lamar(where)
    provenance = {"source": "manual", "note": f"from the shell: export AWS_ACCESS_KEY_ID={AWS}",
                  "steps": [{"token": GITHUB, "n": 3}], GITHUB: "keyed"}
    exp_id = lam.add(Experience("the push is refused", "log in again", provenance=provenance))
    shown = lam.get(exp_id).provenance if where == ":memory:" else Lamar(where).get(exp_id).provenance
    assert shown == {"source": "manual", "note": "from the shell: export AWS_ACCESS_KEY_ID=[REDACTED:aws-access-key]",
                     "steps": [{"token": "[REDACTED:github-token]", "n": 3}], "[REDACTED:github-token]": "keyed"}
    assert AWS not in _on_disk(where) and GITHUB not in _on_disk(where)


def test_a_clean_provenance_is_stored_exactly_as_given(where: str) -> None:
    provenance = {"source": "rules", "file": "CLAUDE.md", "line": 12, "by": "Zoë", "traces": ["t1", "t2"],
                  "score": 0.25, "nested": {"ok": True, "none": None, "commit": "3f2a9c1e"}}
    exp_id = Lamar(where).add(Experience("the build fails", "clear the cache", provenance=provenance))
    stored = Lamar(where).get(exp_id).provenance if where != ":memory:" else provenance
    assert json.dumps(stored, sort_keys=True) == json.dumps(provenance, sort_keys=True)


def test_a_huge_provenance_is_refused_by_add_with_what_to_do(where: str) -> None:
    lam = Lamar(where)
    with pytest.raises(InvalidExperience, match=r"provenance is 3,000,0\d\d characters long as JSON, at most 16,000"):
        lam.add(Experience("the deploy fails", "retry once", provenance={"source": "manual", "blob": BLOB}))
    assert lam.stats()["experiences"] == 0


def test_a_hand_edited_candidates_provenance_is_redacted_or_refused_at_apply(where: str) -> None:
    lam = Lamar(where)
    result = lam.apply(_candidate_report({"source": "mined", "traces": ["t1"], "model": f"token {GITHUB}"}))
    assert result.applied == ["candidate_x"]
    assert lam.get("exp_new").provenance["model"] == "token [REDACTED:github-token]"
    assert GITHUB not in _on_disk(where)
    other = Lamar(":memory:")
    result = other.apply(_candidate_report({"source": "mined", "blob": BLOB}))
    assert result.applied == [] and "at most 16,000" in result.skipped[0][1]
    assert other.stats()["experiences"] == 0


def test_a_retire_reason_is_scrubbed_and_bounded(where: str) -> None:
    lam = Lamar(where)
    exp_id = lam.add(Experience("the build fails", "clear the cache"))
    with pytest.raises(InvalidArgument, match="at most 6,000: say why in a few sentences"):
        lam.retire(exp_id, reason="y" * 6_001)
    lam.retire(exp_id, reason=f"it leaked {GITHUB}")
    reasons = [e.data["reason"] for e in lam.store.read(0) if e.kind == "status"]
    assert reasons == ["it leaked [REDACTED:github-token]"]
    assert GITHUB not in _on_disk(where)


@pytest.mark.parametrize("kind", ["retire", "promote", "narrow"])
def test_a_reports_reason_is_scrubbed_and_a_long_one_refused(kind: str) -> None:
    payload = {"key": "lang", "value": "py"} if kind == "narrow" else {}
    proposal = Proposal(id=f"{kind}_1", kind=kind, experience_ids=("exp_a",), reason=f"see {AWS}",
                        payload=payload, expect={"exp_a": "active"})
    (event,) = kind_of(proposal).events(proposal)
    assert event.data["reason"] == f"sleep {kind}: see [REDACTED:aws-access-key]"
    long = Proposal(id=f"{kind}_2", kind=kind, experience_ids=("exp_a",), reason="y" * 6_001, payload=payload)
    lam = Lamar(":memory:")
    lam.add(Experience("the build fails", "clear the cache", id="exp_a"))
    result = lam.apply(SleepReport(proposals=[long]))
    assert result.applied == []
    assert "its reason is 6,001 characters long, at most 6,000: shorten it in the report" in result.skipped[0][1]


def test_a_long_missing_lesson_id_is_cut_in_apply_and_review(where: str, tmp_path: Path) -> None:
    from lamar.cli import main

    lam = Lamar(where)
    lam.add(Experience("the build fails", "clear the cache", id="exp_a"))
    ghost = "exp_" + "g" * 100_000
    proposal = Proposal(id="merge_1", kind="merge", experience_ids=(ghost, "exp_a"), reason="same",
                        payload={"into": ghost, "from": ["exp_a"]})
    result = lam.apply(SleepReport(proposals=[proposal]))
    (why,) = [reason for _, reason in result.skipped]
    assert "is not in this store" in why and "(100004 characters)" in why and len(why) < 400
    if where != ":memory:":
        del lam
        path = tmp_path / "report.json"
        path.write_text(json.dumps(SleepReport(proposals=[proposal]).to_dict()))
        import contextlib
        import io

        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()), \
                pytest.MonkeyPatch.context() as patch:
            patch.setattr("sys.stdin", io.StringIO("q\n"))
            main(["review", str(path), "--store", where])
        (line,) = [line for line in out.getvalue().splitlines() if "(not in this store)" in line]
        assert "(100004 characters)" in line and len(line) < 400


def test_import_redacts_provenance_and_reasons_and_refuses_a_huge_provenance(tmp_path: Path) -> None:
    from lamar.cli import main
    from lamar.store import Event

    source = Lamar(str(tmp_path / "source.json"))
    exp = {"id": "exp_a", "precondition": "the build fails", "action": "clear the cache", "rationale": "",
           "scope": {}, "status": "active", "provenance": {"source": "manual", "note": f"key {AWS}"},
           "created_at": 1_700_000_000.0}
    source.store.append([Event("experience", exp, key="experience:exp_a"),
                         Event("status", {"id": "exp_a", "status": "retired", "reason": f"leaked {GITHUB}"})])
    assert main(["import", str(tmp_path / "source.json"), "--store", str(tmp_path / "copy.db")]) == 0
    copy = Lamar(str(tmp_path / "copy.db"))
    assert copy.get("exp_a").provenance == {"source": "manual", "note": "key [REDACTED:aws-access-key]"}
    assert [e.data["reason"] for e in copy.store.read(0) if e.kind == "status"] == ["leaked [REDACTED:github-token]"]
    huge = Lamar(str(tmp_path / "huge.json"))
    huge.store.append([Event("experience", {**exp, "id": "exp_b", "provenance": {"blob": BLOB}},
                             key="experience:exp_b")])
    assert main(["import", str(tmp_path / "huge.json"), "--store", str(tmp_path / "huge.db")]) == 1
    assert not (tmp_path / "huge.db").exists() or Lamar(str(tmp_path / "huge.db")).stats()["experiences"] == 0
