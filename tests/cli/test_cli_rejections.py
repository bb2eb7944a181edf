"""A proposal rejected in `lamar review` (or listed as rejected when `lamar apply` runs) stays out of the next
`lamar sleep`; `lamar rejections` lists it and `--undo` brings it back. Subprocesses on a temporary HOME."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.cli.test_cli_sleep import make_report as _made
from tests.cli.test_cli_sleep import proposal_ids

make_report = pytest.fixture(_made.__wrapped__)  # the sleep tests' fixture: a merge and a contradiction


def test_a_rejection_in_review_is_left_out_by_the_next_sleep_until_undone(lamar_cli, store, make_report, tmp_path):
    report = make_report(store)
    chosen = proposal_ids(report)
    out = lamar_cli("review", report, "--store", store, stdin="y\nn\n")  # approve the merge, reject the contradiction
    assert out.returncode == 0 and "1 rejection remembered" in out.stdout, out.stdout + out.stderr
    night = lamar_cli("sleep", "--store", store, "--out", tmp_path / "next.json")
    assert night.returncode == 0 and "1 rejected proposal left out (lamar rejections lists them)" in night.stdout
    saved = json.loads((tmp_path / "next.json").read_text())
    assert [p["kind"] for p in saved["proposals"]] == ["merge"]
    assert saved["summary"]["rejected"] == [chosen["contradiction"]]
    listed = lamar_cli("rejections", "--store", store)
    assert listed.returncode == 0 and chosen["contradiction"] in listed.stdout, listed.stdout + listed.stderr
    assert "rested on its lessons' texts" in listed.stdout
    as_json = json.loads(lamar_cli("rejections", "--store", store, "--json").stdout)
    assert [(r["proposal"], r["kind"]) for r in as_json] == [(chosen["contradiction"], "contradiction")]
    undone = lamar_cli("rejections", "--store", store, "--undo", chosen["contradiction"])
    assert undone.returncode == 0 and "the next sleep may propose it again" in undone.stdout, undone.stderr
    again = lamar_cli("sleep", "--store", store, "--out", tmp_path / "after.json")
    assert sorted(proposal_ids(tmp_path / "after.json")) == ["contradiction", "merge"], again.stdout
    missing = lamar_cli("rejections", "--store", store, "--undo", chosen["contradiction"])
    assert missing.returncode == 1 and "no rejection of" in missing.stderr


def test_apply_records_the_rejections_a_report_holds_even_with_nothing_approved(lamar_cli, json_store, make_report,
                                                                               tmp_path):
    report = make_report(json_store)
    chosen = proposal_ids(report)
    data = json.loads(report.read_text())
    data["approved"], data["rejected"] = [], [chosen["contradiction"], chosen["merge"]]  # by hand, or by a script
    report.write_text(json.dumps(data))
    out = lamar_cli("apply", report, "--store", json_store)
    assert out.returncode == 0 and "nothing applied" in out.stdout and "2 rejections remembered" in out.stdout
    night = lamar_cli("sleep", "--store", json_store, "--out", tmp_path / "next.json", "--json")
    assert json.loads(night.stdout)["proposals"] == [], night.stdout
    plain = lamar_cli("sleep", "--store", json_store, "--out", tmp_path / "next.json", "--force")
    assert "2 rejected proposals left out" in plain.stdout, plain.stdout + plain.stderr
    assert "nothing to review or apply: every proposal was rejected" in plain.stdout, plain.stdout
    assert lamar_cli("apply", report, "--store", json_store).stdout.strip().endswith("nothing applied")


def test_review_again_turning_a_no_into_a_yes_undoes_the_rejection(lamar_cli, json_store, make_report, tmp_path):
    report = make_report(json_store)
    chosen = proposal_ids(report)
    lamar_cli("review", report, "--store", json_store, stdin="y\nn\n")
    out = lamar_cli("review", report, "--store", json_store, "--again", stdin="y\ny\n")
    assert out.returncode == 0 and "1 rejection undone" in out.stdout, out.stdout + out.stderr
    assert json.loads(lamar_cli("rejections", "--store", json_store, "--json").stdout) == []
    lamar_cli("sleep", "--store", json_store, "--out", tmp_path / "next.json")
    assert proposal_ids(tmp_path / "next.json")["contradiction"] == chosen["contradiction"]


def test_a_review_without_its_store_keeps_the_rejection_in_the_file_and_says_so(lamar_cli, json_store, make_report,
                                                                                tmp_path):
    report = make_report(json_store)
    out = lamar_cli("review", report, "--store", tmp_path / "elsewhere.json", stdin="y\nn\n")
    assert out.returncode == 0 and "store unavailable, showing ids only" in out.stderr, out.stdout + out.stderr
    assert "(the store did not record the rejections: it was unavailable; `lamar apply` records them)" in out.stdout
    assert json.loads(report.read_text())["rejected"] == [proposal_ids(report)["contradiction"]]
    assert "1 rejection remembered" in lamar_cli("apply", report, "--store", json_store).stdout


@pytest.mark.parametrize("approved", ["none", "merge"])
def test_apply_json_lists_the_rejections_it_recorded(run_cli, json_store, make_report, approved):
    report = make_report(json_store)
    chosen = proposal_ids(report)
    data = json.loads(report.read_text())
    data["approved"] = [] if approved == "none" else [chosen["merge"]]
    data["rejected"] = [chosen["contradiction"]]
    report.write_text(json.dumps(data))
    out = run_cli("apply", report, "--store", json_store, "--json")
    said = json.loads(out.stdout)  # JSON with nothing approved too, not a sentence
    assert said["applied"] == ([] if approved == "none" else [chosen["merge"]]) and said["skipped"] == []
    assert said["rejections_recorded"] == [chosen["contradiction"]]
    again = json.loads(run_cli("apply", report, "--store", json_store, "--json").stdout)
    assert "rejections_recorded" not in again  # recorded already: nothing new to say


def test_stats_counts_the_rejected_proposals_the_last_sleep_left_out(run_cli, json_store, make_report, tmp_path):
    report = make_report(json_store)
    run_cli("review", report, "--store", json_store, stdin="n\nn\n")
    assert run_cli("sleep", "--store", json_store, "--out", tmp_path / "next.json").returncode == 0
    stats = run_cli("stats", "--store", json_store).stdout
    sleep_line = next((line for line in stats.splitlines() if line.startswith("sleep ")), "")
    assert ": 0 proposals (2 rejected left out), no traces mined (report: " in sleep_line, stats
    assert json.loads(run_cli("stats", "--store", json_store, "--json").stdout)["last_sleep"]["rejected"] == 2


def test_an_edited_id_in_the_rejected_list_costs_the_other_rejections_nothing(lamar_cli, json_store, make_report):
    report = make_report(json_store)
    chosen = proposal_ids(report)
    data = json.loads(report.read_text())
    data["proposals"] = [p | {"id": "my merge"} if p["id"] == chosen["merge"] else p for p in data["proposals"]]
    data["approved"], data["rejected"] = [], ["my merge", chosen["contradiction"]]
    report.write_text(json.dumps(data))
    out = lamar_cli("apply", report, "--store", json_store)
    assert out.returncode == 0 and "1 rejection remembered" in out.stdout, out.stdout + out.stderr
    assert "'my merge' is not one sleep makes" in out.stdout and "`lamar apply` records" not in out.stdout
    held = json.loads(lamar_cli("rejections", "--store", json_store, "--json").stdout)
    assert [r["proposal"] for r in held] == [chosen["contradiction"]]


def test_undo_of_what_no_rejection_holds_says_so_each_time(run_cli, store, make_report):
    report = make_report(store)
    run_cli("review", report, "--store", store, stdin="n\nn\n")
    for undo in ("contradiction_0000", "contradiction_0000", "compact", "compact_1a2b"):  # unknown, twice; none held
        out = run_cli("rejections", "--store", store, "--undo", undo)
        assert out.returncode == 1 and "is in force: `lamar rejections` lists those that are" in out.stderr, out
    assert len(json.loads(run_cli("rejections", "--store", store, "--json").stdout)) == 2  # left as they were


def test_undo_on_a_read_only_store_says_to_open_a_writable_copy(run_cli, store, make_report, tmp_path):
    from tests.store.test_sqlite_readers import _read_only_mount

    report = make_report(store)
    run_cli("review", report, "--store", store, stdin="n\nn\n")
    held = [r["proposal"] for r in json.loads(run_cli("rejections", "--store", store, "--json").stdout)]
    folder = tmp_path / "copy"
    folder.mkdir()
    for part in store.parent.glob(store.name + "*"):
        shutil.copy2(part, folder / part.name)
    with _read_only_mount(tmp_path, folder) as mount:
        out = run_cli("rejections", "--store", mount / store.name, "--undo", held[0])
        assert out.returncode == 2 and "cannot be written" in out.stderr, out.stdout + out.stderr
        assert "open a writable copy to change it" in out.stderr
        listed = run_cli("rejections", "--store", mount / store.name, "--json")
        assert [r["proposal"] for r in json.loads(listed.stdout)] == held  # nothing undone
