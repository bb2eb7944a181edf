"""sleep -> review (stdin) -> apply, as subprocesses; mining through the real Ollama SDK
against a local HTTP server that plays the model."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from lamar import Experience, Lamar, Status
from tests.fake_ollama import FakeOllama


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def make_report(run_cli, tmp_path, strict_json):
    """Sleep over a store into a report: one merge (neutral + twin) and one contradiction."""
    def make(store: Path) -> Path:
        path = tmp_path / "report.json"
        out = run_cli("sleep", "--store", store, "--out", path)
        assert out.returncode == 0, out.stderr
        kinds = sorted(p["kind"] for p in strict_json(path.read_text())["proposals"])
        assert kinds == ["contradiction", "merge"]
        return path

    return make


def proposal_ids(path: Path) -> dict[str, str]:
    return {p["kind"]: p["id"] for p in json.loads(path.read_text())["proposals"]}


def test_sleep_with_nothing_to_propose_asks_for_no_review(lamar_cli, tmp_path):
    # A first week's store proposes nothing; sleep still said "next: lamar review R, then lamar apply R",
    # and review then said there was nothing to review.
    store = tmp_path / "young.db"
    with Lamar(str(store)) as lam:
        lam.add(Experience("the tests fail", "run the failing test alone first"))
    out = lamar_cli("sleep", "--store", store, "--out", tmp_path / "r.json")
    assert out.returncode == 0 and out.stdout.startswith("0 proposals, 0 dropped"), out.stderr
    assert "next: lamar review" not in out.stdout and "nothing to review or apply" in out.stdout, out.stdout


def test_sleep_whose_proposals_are_all_applied_says_so_not_that_evidence_is_missing(lamar_cli, tmp_path):
    # An acknowledged contradiction is proposed each night and left out as already applied; the line said no
    # lesson had the evidence or the twin a proposal needs, of a store that had just proposed one.
    store = tmp_path / "answered.db"
    with Lamar(str(store)) as lam:
        lam.add(Experience("the deploy fails", "roll back the release"))
        lam.add(Experience("the deploy fails", "restart the workers"))
        assert len(lam.apply(lam.sleep()).applied) == 1
    out = lamar_cli("sleep", "--store", store, "--out", tmp_path / "r.json")
    assert out.returncode == 0 and "1 proposal already applied, not listed" in out.stdout, out.stdout + out.stderr
    assert "nothing to review or apply: every proposal is already applied" in out.stdout, out.stdout
    assert "evidence or the twin" not in out.stdout, out.stdout


def test_sleep_proposes_without_writing(lamar_cli, store, ids, tmp_path, strict_json):
    before = digest(store)
    out = lamar_cli("sleep", "--store", store, "--out", tmp_path / "r.json")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("2 proposals, 0 dropped")
    assert f"next: lamar review {tmp_path / 'r.json'}" in out.stdout
    saved = strict_json((tmp_path / "r.json").read_text())  # valid JSON: unknown bounds are null
    merge = next(p for p in saved["proposals"] if p["kind"] == "merge")
    assert merge["payload"] == {"into": ids["neutral"], "from": [ids["twin"]]}
    assert merge["evidence"][ids["twin"]]["lower"] is None
    assert digest(store) == before


def test_review_through_stdin_then_apply_the_approved_only(lamar_cli, run_cli, store, ids, make_report):
    report = make_report(store)
    chosen = proposal_ids(report)
    # An unclear answer is asked again; then approve the merge, reject the contradiction.
    out = lamar_cli("review", report, "--store", store, stdin="perhaps\ny\nn\n")
    assert out.returncode == 0, out.stderr
    assert out.stdout.count("approve? [y]es / [n]o / [q]uit:") == 3
    assert "please answer y (approve), n (reject) or q (stop and save)" in out.stdout
    assert "[1/2] merge" in out.stdout and "[2/2] contradiction" in out.stdout
    assert "When a lint error, run the formatter first." in out.stdout  # the lessons, from the store
    assert "1 approved, 1 rejected, 0 undecided" in out.stdout
    saved = json.loads(report.read_text())
    assert saved["approved"] == [chosen["merge"]] and saved["rejected"] == [chosen["contradiction"]]

    nothing_left = run_cli("review", report, "--store", store)
    assert "nothing to review" in nothing_left.stdout

    applied = lamar_cli("apply", report, "--store", store)
    assert applied.returncode == 0, applied.stderr
    assert f"applied  {chosen['merge']}" in applied.stdout and chosen["contradiction"] not in applied.stdout
    lam = Lamar(str(store))
    assert lam.get(ids["twin"]).status is Status.RETIRED
    assert lam.get(ids["neutral"]).provenance["merged_from"] == [ids["twin"]]
    again = run_cli("apply", report, "--store", store, "--json")
    assert json.loads(again.stdout) == {"applied": [], "skipped": [{"id": chosen["merge"], "reason": "already applied",
                                                                     "code": "applied"}]}


def test_review_quit_and_end_of_input_save_what_was_decided(run_cli, json_store, make_report):
    store = json_store
    report = make_report(store)
    chosen = proposal_ids(report)
    out = run_cli("review", report, "--store", store, stdin="q\n")
    assert out.returncode == 0 and "0 approved, 0 rejected, 2 undecided" in out.stdout
    assert json.loads(report.read_text())["approved"] == []
    nothing = run_cli("apply", report, "--store", store)
    assert nothing.returncode == 0 and "nothing applied" in nothing.stdout

    eof = run_cli("review", report, "--store", store, stdin="y\n")  # input ends before the second one
    assert "1 approved, 0 rejected, 1 undecided" in eof.stdout
    first = json.loads(report.read_text())["approved"]
    assert len(first) == 1 and first[0] in chosen.values()
    rest = run_cli("review", report, "--store", store, stdin="n\n")  # only the undecided one is asked
    assert rest.stdout.count("approve?") == 1 and "1 approved, 1 rejected, 0 undecided" in rest.stdout
    fresh = run_cli("review", report, "--store", store, "--again", stdin="n\nn\n")
    assert "0 approved, 2 rejected" in fresh.stdout


def test_review_again_quit_part_way_keeps_the_earlier_decisions(run_cli, json_store, make_report):
    report = make_report(json_store)
    chosen = proposal_ids(report)
    first = run_cli("review", report, "--store", json_store, stdin="y\ny\n")
    assert "2 approved, 0 rejected" in first.stdout
    again = run_cli("review", report, "--store", json_store, "--again", stdin="n\n")  # ends after the first
    assert again.stdout.count("approve?") == 2 and "1 approved, 1 rejected, 0 undecided" in again.stdout
    saved = json.loads(report.read_text())
    order = [p["id"] for p in saved["proposals"]]
    assert saved["rejected"] == order[:1] and saved["approved"] == order[1:]
    assert sorted(order) == sorted(chosen.values())


def test_apply_unreviewed_report_applies_all_or_only(run_cli, sqlite_store, ids, make_report):
    store = sqlite_store
    report = make_report(store)
    chosen = proposal_ids(report)
    only = run_cli("apply", report, "--store", store, "--only", chosen["contradiction"])
    assert only.returncode == 0 and only.stdout.startswith("applied 1, skipped 0")
    assert Lamar(str(store)).get(ids["twin"]).status is Status.ACTIVE  # the merge was not chosen
    everything = run_cli("apply", report, "--store", store)
    assert everything.stdout.startswith("applied 1, skipped 1")
    assert Lamar(str(store)).get(ids["twin"]).status is Status.RETIRED
    unknown = run_cli("apply", report, "--store", store, "--only", "merge_000000000000")
    assert unknown.returncode == 1 and "no proposal 'merge_000000000000'" in unknown.stderr


def test_sleep_review_apply_usage_errors(run_cli, json_store, tmp_path):
    store = json_store
    traces_only = run_cli("sleep", "--store", store, "--traces", tmp_path / "t.jsonl")
    assert traces_only.returncode == 1 and "--model" in traces_only.stderr
    (tmp_path / "t.jsonl").write_text("")
    bad_model = run_cli("sleep", "--store", store, "--traces", tmp_path / "t.jsonl", "--model", "mystery:x")
    assert bad_model.returncode == 1 and "unknown model provider 'mystery'" in bad_model.stderr
    missing = run_cli("review", tmp_path / "absent.json", "--store", store)
    assert missing.returncode == 1 and "lamar sleep --out" in missing.stderr
    (tmp_path / "not-a-report.json").write_text('{"hello": 1}')
    wrong = run_cli("apply", tmp_path / "not-a-report.json", "--store", store)
    assert wrong.returncode == 1 and "is not a sleep report" in wrong.stderr


def test_sleep_says_what_a_traces_path_is_when_it_is_no_file(run_cli, json_store, tmp_path):
    # /dev/null exists: "no trace file /dev/null" sent the user looking for a missing file.
    for path, said in (("/dev/null", "/dev/null is not a regular file; --traces takes a JSON Lines file"),
                       (tmp_path, f"{tmp_path} is a folder; --traces takes a JSON Lines file"),
                       (tmp_path / "absent.jsonl", f"no trace file {tmp_path / 'absent.jsonl'}: pass a JSON Lines")):
        out = run_cli("sleep", "--store", json_store, "--traces", path, "--model", "anthropic:x")
        assert out.returncode == 1 and said in out.stderr, out.stderr


def test_sleep_says_when_the_claude_code_hooks_write_their_trace_file(run_cli, json_store, tmp_path):
    # Before the first traced turn, "pass a JSON Lines file of traces" said neither what writes it nor when.
    traces = tmp_path / "experience.json.claude-code.traces.jsonl"
    unseen = run_cli("sleep", "--store", json_store, "--traces", traces, "--model", "anthropic:x")
    assert unseen.returncode == 1
    assert unseen.stderr.startswith(f"lamar: error: no trace file {traces} yet, and no Claude Code hook has run "
                                    "for its store: the hooks write it as sessions go (a turn once two more have "
                                    "followed it in its session, a session's last turns when it ends)")
    assert "`lamar claude-code status`, run in the repository, says whether they are installed" in unseen.stderr
    (tmp_path / "experience.json.claude-code.state.json").write_text("{}")  # the hooks' first event wrote it
    seen = run_cli("sleep", "--store", json_store, "--traces", traces, "--model", "anthropic:x")
    assert seen.returncode == 1 and seen.stderr == (
        f"lamar: error: no trace file {traces} yet: Lamar's Claude Code hooks write it as sessions go (a turn once "
        "two more have followed it in its session, a session's last turns when it ends); run this again once a "
        "session has ended\n")


def test_sleep_mines_traces_with_a_model_then_apply_adds_a_candidate(lamar_cli, run_cli, json_store, tmp_path,
                                                                   ollama_host):
    store = json_store
    traces = tmp_path / "traces.jsonl"
    rows = [{"id": f"t{i}", "time": 1_700_000_000.0 + i, "context": {"project": "trace"},
             "input": "bump swift-nio and rebuild", "attempted": ["xcodebuild"],
             "tool_errors": ["error: module map not found"], "output": "", "outcome": "reverted",
             "episode_id": None} for i in range(3)]
    traces.write_text("".join(json.dumps(row) + "\n" for row in rows))
    FakeOllama.reply = json.dumps([{"precondition": "a module map is missing after a package bump",
                                    "action": "reset the package caches before building",
                                    "rationale": "the caches keep the old module maps",
                                    "scope": {"project": "trace"}, "trace_ids": ["t0", "t2"]}])
    FakeOllama.prompts = []
    out = lamar_cli("sleep", "--store", store, "--traces", traces, "--model", "ollama:fake-model",
                    "--out", tmp_path / "r.json", extra_env={"OLLAMA_HOST": ollama_host})
    assert out.returncode == 0, out.stderr
    assert "mined 3 traces in 1 model call: 1 candidate lesson" in out.stdout
    assert len(FakeOllama.prompts) == 1 and '"id": "t1"' in FakeOllama.prompts[0]
    candidate = next(p for p in json.loads((tmp_path / "r.json").read_text())["proposals"] if p["kind"] == "candidate")
    # The reviewer sees the traces the lesson was mined from, not an arm's evidence it does not have yet.
    (tmp_path / "copy.json").write_bytes((tmp_path / "r.json").read_bytes())  # decisions go to the copy
    reviewed = run_cli("review", tmp_path / "copy.json", "--store", store, stdin="n\nn\nq\n").stdout
    assert "support when proposed: 2 sessions (reverted 2), 2 with tool errors; 2 traces" in reviewed
    assert "None" not in reviewed
    # The lesson a candidate adds is not stored until apply: it read "(not in this store)", as a hand-edited id does.
    new_id = candidate["payload"]["experience"]["id"]
    assert f"  lesson {new_id} (not stored yet: apply adds it)" in reviewed and "not in this store" not in reviewed
    applied = run_cli("apply", tmp_path / "r.json", "--store", store, "--only", candidate["id"])
    assert applied.returncode == 0, applied.stderr
    lam = Lamar(str(store))
    mined = [e for e in lam.experiences(status="candidate") if e.action == "reset the package caches before building"]
    assert len(mined) == 1 and sorted(mined[0].provenance["traces"]) == ["t0", "t2"]
    shown = run_cli("show", mined[0].id, "--store", store).stdout
    assert "mined by sleep" in shown and "from traces: t0, t2" in shown


def test_sleep_says_what_it_could_not_read_of_a_reply_it_mined(lamar_cli, run_cli, json_store, tmp_path, ollama_host):
    traces = tmp_path / "traces.jsonl"
    traces.write_text("".join(json.dumps({"id": f"t{i}", "time": 1_700_000_000.0 + i, "context": {"project": "trace"},
                                          "input": "bump swift-nio", "tool_errors": ["module map not found"],
                                          "outcome": "reverted"}) + "\n" for i in range(3)))
    FakeOllama.reply = json.dumps([{"precondition": "a module map is missing after a package bump",
                                    "action": "reset the package caches before building",
                                    "scope": {"project": "trace"}, "trace_ids": ["t0", "t2"]},
                                   {"precondition": "the build broke", "action": "rebuild", "scope": "trace"}])
    out = lamar_cli("sleep", "--store", json_store, "--traces", traces, "--model", "ollama:fake-model",
                    "--out", tmp_path / "r.json", extra_env={"OLLAMA_HOST": ollama_host})
    # What was read is mined and saved (exit 0); what was not is said, with how much, where it is kept too.
    assert out.returncode == 0 and "mined 3 traces in 1 model call: 1 candidate lesson" in out.stdout, out.stderr
    lost = ("1 of the 2 lessons the model wrote could not be read as lessons (the first: malformed lesson: "
            "missing keys ['trace_ids'])")
    assert f"sleep: mining lost part of the model's output: {lost}" in out.stderr
    assert json.loads((tmp_path / "r.json").read_text())["summary"]["mining"]["unreadable_lessons"] == 1
    review = run_cli("review", tmp_path / "r.json", "--store", json_store, stdin="q\n")
    assert f"mining read only part of the model's output when this report was made ({lost}" in review.stdout


def test_sleep_with_traces_that_are_not_utf8_is_a_usage_error(run_cli, json_store, tmp_path):
    traces = tmp_path / "traces.jsonl"
    traces.write_bytes(b'{"id": "t0", "context": {"project": "caf\xe9"}}\n')  # Latin-1, not UTF-8
    out = run_cli("sleep", "--store", json_store, "--traces", traces, "--model", "ollama:fake-model",
                  extra_env={"OLLAMA_HOST": "http://127.0.0.1:9"})
    assert out.returncode == 1 and "line 1: not UTF-8 text" in out.stderr and "a bug in Lamar" not in out.stderr


def test_sleep_with_an_unreachable_model_is_exit_2(run_cli, json_store, tmp_path):
    store = json_store
    traces = tmp_path / "traces.jsonl"
    traces.write_text(json.dumps({"id": "t0", "context": {"project": "trace"}, "input": "x"}) + "\n")
    out = run_cli("sleep", "--store", store, "--traces", traces, "--model", "ollama:fake-model",
                  "--out", tmp_path / "r.json", extra_env={"OLLAMA_HOST": "http://127.0.0.1:9"})
    assert out.returncode == 2 and out.stderr.count("lamar: error: mining failed") == 1, out.stderr
    # The summary does not claim the traces were mined: it said "mined 1 trace in 1 model call".
    assert "  mining 1 trace failed after 1 model call: no lesson was mined\n" in out.stdout
    assert "  mined " not in out.stdout, out.stdout
    # The proposals that need no model are saved all the same, and the report says why mining failed.
    saved = json.loads((tmp_path / "r.json").read_text())
    assert sorted(p["kind"] for p in saved["proposals"]) == ["contradiction", "merge"]
    assert "could not reach" in saved["summary"]["mining"]["error"]
    # The reviewer hears what the report lacks before deciding on what it holds.
    review = run_cli("review", tmp_path / "r.json", "--store", store, stdin="q\n")
    assert "mining failed when this report was made" in review.stdout and "could not reach" in review.stdout


def test_a_failed_model_is_said_once(lamar_cli, json_store, tmp_path):
    """The mining logger's warning is for a caller that reads only the proposals; at the command line,
    where no handler is set, Python printed it too, so the same reason came twice before the exit."""
    traces = tmp_path / "traces.jsonl"
    traces.write_text(json.dumps({"id": "t0", "context": {"project": "trace"}, "input": "x"}) + "\n")
    out = lamar_cli("sleep", "--store", json_store, "--traces", traces, "--model", "ollama:fake-model",
                    "--out", tmp_path / "r.json", extra_env={"OLLAMA_HOST": "http://127.0.0.1:9"})
    assert out.returncode == 2 and out.stderr.count("could not reach") == 1, out.stderr
    assert out.stderr.startswith("lamar: error: mining failed, no lesson was mined (could not reach"), out.stderr


def test_sleep_skips_a_repeated_trace_id_with_a_log_line_and_mines_the_rest(lamar_cli, json_store, tmp_path,
                                                                          ollama_host):
    # Issue 38: a Claude Code traces file written twice by an earlier release repeats every id of a
    # session; `lamar sleep --traces` refused the whole file for every session in it.
    store = json_store
    traces = tmp_path / "traces.jsonl"
    rows = [{"id": f"cc-s{i % 2}-1", "time": 1_700_000_000.0 + i, "context": {"project": "trace"},
             "input": "bump swift-nio and rebuild", "attempted": ["xcodebuild"],
             "tool_errors": ["error: module map not found"], "output": "", "outcome": "reverted",
             "metadata": {"source": "claude-code"}} for i in range(4)]
    traces.write_text("".join(json.dumps(row) + "\n" for row in rows))
    FakeOllama.reply = "[]"
    FakeOllama.prompts = []
    out = lamar_cli("sleep", "--store", store, "--traces", traces, "--model", "ollama:fake-model",
                    "--out", tmp_path / "r.json", extra_env={"OLLAMA_HOST": ollama_host})
    assert out.returncode == 0, out.stderr
    assert "mined 2 traces" in out.stdout
    assert "line 3: trace id 'cc-s0-1' repeats" in out.stderr and "line 4: trace id 'cc-s1-1' repeats" in out.stderr
    assert '"id": "cc-s1-1"' in FakeOllama.prompts[0]


def test_out_in_a_missing_folder_is_created_and_a_file_in_the_way_refused_before_any_model_call(
        run_cli, json_store, tmp_path, ollama_host):
    # html, sleep and export alike create the folder of a new output; a file where a folder must be
    # is a usage error before sleep spends a model call.
    traces = tmp_path / "traces.jsonl"
    traces.write_text(json.dumps({"id": "t0", "context": {"project": "trace"}, "input": "x"}) + "\n")
    FakeOllama.reply = "[]"
    FakeOllama.prompts = []
    report = tmp_path / "reports" / "2026" / "r.json"
    out = run_cli("sleep", "--store", json_store, "--traces", traces, "--model", "ollama:fake-model",
                  "--out", report, extra_env={"OLLAMA_HOST": ollama_host})
    assert out.returncode == 0, out.stderr
    assert json.loads(report.read_text())["format"] == "lamar-sleep-report"
    page = tmp_path / "pages" / "lamar.html"
    assert run_cli("html", "--store", json_store, "--out", page).returncode == 0 and page.is_file()
    copy = tmp_path / "copies" / "lamar.json"
    assert run_cli("export", "--store", json_store, "--out", copy).returncode == 0 and copy.is_file()
    blocker = tmp_path / "notes.txt"
    blocker.write_text("mine")
    for kind, target in (("a file", blocker / "r.json"), ("a file's child", blocker / "reports" / "r.json")):
        FakeOllama.prompts = []
        refused = run_cli("sleep", "--store", json_store, "--traces", traces, "--model", "ollama:fake-model",
                          "--out", target, extra_env={"OLLAMA_HOST": ollama_host})
        assert refused.returncode == 1, (kind, refused.stderr)
        assert f"is under {blocker}, which is a file, not a folder" in refused.stderr and ".tmp" not in refused.stderr
        assert FakeOllama.prompts == [] and blocker.read_text() == "mine"
    assert run_cli("html", "--store", json_store, "--out", blocker / "lamar.html").returncode == 1


def test_review_skips_what_apply_says_is_applied_and_marks_what_it_says_is_stale(run_cli, json_store, ids,
                                                                                 make_report):
    report = make_report(json_store)
    chosen = proposal_ids(report)
    # Applied outside review (apply --only here; the UI or Python alike): not asked again, even with --again.
    assert run_cli("apply", report, "--store", json_store, "--only", chosen["contradiction"]).returncode == 0
    Lamar(str(json_store)).retire(ids["twin"], "by hand, after the report")  # the merge is stale now
    out = run_cli("review", report, "--store", json_store, "--again", stdin="n\n")
    assert out.returncode == 0, out.stderr
    assert f"already applied, not asked: {chosen['contradiction']}" in out.stdout
    assert out.stdout.count("approve?") == 1 and f"[1/1] merge {chosen['merge']}" in out.stdout
    assert f"STALE: apply would skip it (lesson {ids['twin']} was retired after the report was made)" in out.stdout
    assert json.loads(report.read_text())["rejected"] == [chosen["merge"]]
    applied_all = run_cli("apply", report, "--store", json_store, "--only", chosen["merge"])
    assert applied_all.returncode == 1  # stale, as review said
    nothing = run_cli("review", report, "--store", json_store)
    assert "nothing to review" in nothing.stdout and "approve?" not in nothing.stdout


def test_reviews_count_of_undecided_leaves_out_what_is_already_applied(run_cli, json_store, make_report):
    # A contradiction acknowledged on an earlier night comes back in every report: applied already, it is
    # no decision left, so a review with nothing left to decide must not end "1 undecided".
    report = make_report(json_store)
    chosen = proposal_ids(report)
    assert run_cli("apply", report, "--store", json_store, "--only", chosen["contradiction"]).returncode == 0
    out = run_cli("review", report, "--store", json_store, stdin="y\n")
    assert out.returncode == 0, out.stderr
    assert "1 approved, 0 rejected, 0 undecided, 1 already applied; saved in" in out.stdout, out.stdout


def test_review_marks_a_proposal_apply_refuses_on_its_store_check(run_cli, json_store, make_report) -> None:
    # Review marked only what describe finds malformed; a merge whose expect was edited out, which
    # apply refuses after reading the store, was asked about as if it would apply.
    report = make_report(json_store)
    chosen = proposal_ids(report)
    data = json.loads(report.read_text())
    for proposal in data["proposals"]:
        if proposal["id"] == chosen["merge"]:
            proposal["expect"] = {}
    report.write_text(json.dumps(data))
    out = run_cli("review", report, "--store", json_store, stdin="n\nn\n")
    assert out.returncode == 0, out.stderr
    merge = out.stdout.split(f"merge {chosen['merge']}")[1].split("approve?")[0]
    assert "REFUSED by apply: the report does not say what status lesson" in merge, out.stdout
    assert out.stdout.count("REFUSED by apply") == 1


def test_sleep_counts_an_acknowledged_contradiction_instead_of_listing_it_every_night(run_cli, store, make_report,
                                                                                     strict_json):
    # Sleep proposes it again, by the same id, as long as both lessons stand; `lamar sleep` listed it
    # every night among what is left to review, though review and apply pass it over as applied.
    chosen = proposal_ids(make_report(store))
    assert run_cli("apply", store.with_name("report.json"), "--store", store,
                   "--only", chosen["contradiction"]).returncode == 0
    out = run_cli("sleep", "--store", store, "--out", store.with_name("night2.json"))
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("1 proposal, 0 dropped\n") and chosen["contradiction"] not in out.stdout
    assert f"  {chosen['merge']}" in out.stdout and "\n1 proposal already applied, not listed\n" in out.stdout
    saved = strict_json(store.with_name("night2.json").read_text())  # the file holds the whole report
    assert sorted(p["id"] for p in saved["proposals"]) == sorted(chosen.values()) and "already_applied" not in saved
    as_json = strict_json(run_cli("sleep", "--store", store, "--json").stdout)
    assert as_json["already_applied"] == [chosen["contradiction"]]
    assert {k: v for k, v in as_json.items() if k not in ("already_applied", "created")} == \
        {k: v for k, v in saved.items() if k != "created"}
    piped = strict_json(run_cli("sleep", "--store", store, "--out", "-").stdout)  # the report alone, as saved
    assert "already_applied" not in piped and len(piped["proposals"]) == 2


@pytest.mark.parametrize("as_json", [False, True])
def test_sleep_keeps_its_report_when_the_store_cannot_say_what_is_applied(run_cli, store, make_report, strict_json,
                                                                         monkeypatch, as_json):
    # Which proposals are applied is asked after sleep ran (its mining may have cost model calls): a
    # store that failed to answer ended the command with an error and no report saved or printed.
    chosen = proposal_ids(make_report(store))
    assert run_cli("apply", store.with_name("report.json"), "--store", store,
                   "--only", chosen["contradiction"]).returncode == 0
    sleep = Lamar.sleep

    def then_closed(lam: Lamar, *args, **kwargs):
        report = sleep(lam, *args, **kwargs)
        lam.store.close()  # the store goes away between the sleep and the question
        return report

    monkeypatch.setattr(Lamar, "sleep", then_closed)
    out = run_cli("sleep", "--store", store, "--out", store.with_name("night2.json"), *(["--json"] if as_json else []))
    assert out.returncode == 0, out.stderr
    assert f"(store unavailable, every proposal listed, applied or not: the store {store} is closed" in out.stderr
    saved = strict_json(store.with_name("night2.json").read_text())
    assert sorted(p["id"] for p in saved["proposals"]) == sorted(chosen.values())
    if as_json:
        assert strict_json(out.stdout)["already_applied"] is None
    else:
        assert out.stdout.startswith("2 proposals, 0 dropped\n") and "already applied" not in out.stdout
        assert f"  {chosen['contradiction']}" in out.stdout


def test_review_of_a_report_wholly_applied_says_to_sleep_again(run_cli, json_store, make_report):
    # It said "--again reviews every proposal afresh", and --again then asked about nothing.
    report = make_report(json_store)
    assert run_cli("apply", report, "--store", json_store).returncode == 0
    for again in ((), ("--again",)):
        out = run_cli("review", report, "--store", json_store, *again)
        assert out.returncode == 0 and "approve?" not in out.stdout
        assert (f"nothing to review in {report}: every proposal in it is applied; for new ones, "
                f"lamar sleep --out {report}") in out.stdout and "--again" not in out.stdout


def test_review_of_a_report_with_no_proposal_says_it_holds_none(run_cli, tmp_path):
    # It said "every proposal in it is applied" of a report that never held one.
    store, report = tmp_path / "s.json", tmp_path / "r.json"
    assert run_cli("add", "--create", "--store", store, "--precondition", "the build fails",
                   "--action", "clear the cache").returncode == 0
    assert run_cli("sleep", "--store", store, "--out", report).stdout.startswith("0 proposals, 0 dropped")
    for again in ((), ("--again",)):
        out = run_cli("review", report, "--store", store, *again)
        assert out.returncode == 0 and "approve?" not in out.stdout
        assert out.stdout == (f"nothing to review in {report}: it holds no proposal; "
                              f"for new ones, lamar sleep --out {report}\n")


def test_a_report_applied_after_an_edit_skips_what_the_edit_changed(run_cli, sqlite_store, ids, make_report):
    store = sqlite_store
    report = make_report(store)
    chosen = proposal_ids(report)
    edit = run_cli("edit", ids["twin"], "--store", store, "--precondition", "a lint error shows up", "--keep-evidence")
    assert edit.returncode == 0, edit.stderr
    shown = run_cli("review", report, "--store", store, stdin="q\n")
    assert f"lesson {ids['twin']} (active, version 2 now, judged at version 1)" in shown.stdout
    out = run_cli("apply", report, "--store", store, "--only", chosen["merge"])
    assert out.stdout.startswith("applied 0, skipped 1"), out.stdout
    assert f"lesson {ids['twin']} was edited after the report was made (version 1 then, 2 now): run sleep again" \
        in out.stdout
    assert Lamar(str(store)).get(ids["twin"]).status is Status.ACTIVE


@pytest.mark.parametrize(("spec", "said"), [
    ("antropic:claude-test", "did you mean 'anthropic:claude-test'"),
    ("llama3.2:3b", "did you mean 'ollama:llama3.2:3b'"),
    ("anthropic:claude-test", "no Anthropic credentials for model 'claude-test': set ANTHROPIC_API_KEY"),
], ids=["typo", "bare-ollama-name", "no-key"])
def test_a_bad_model_spec_or_a_missing_key_is_said_before_the_traces_are_read(run_cli, json_store, tmp_path,
                                                                              monkeypatch, spec, said):
    """The model is set up before the trace file is read: a broken trace file does not hide a
    typo or a missing key, and a large one is not read for nothing."""
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("ANTHROPIC_CONFIG_DIR", raising=False)  # and run_cli's HOME holds no profile
    traces = tmp_path / "traces.jsonl"
    traces.write_text('{"id": "t0", "unknown key": 1}\n')
    out = run_cli("sleep", "--store", json_store, "--traces", traces, "--model", spec, "--out", tmp_path / "r.json")
    assert out.returncode in (1, 2) and said in out.stderr and "traces.jsonl" not in out.stderr, out.stderr
    assert not (tmp_path / "r.json").exists()


def test_max_model_calls_caps_mining_before_any_call(run_cli, json_store, tmp_path):
    # A night's cost is bounded from cron: traces that need more calls than the cap make none
    # (the model address answers nothing, so a call made would fail with "could not reach").
    traces = tmp_path / "traces.jsonl"
    rows = [{"id": f"t{i}", "context": {"project": "trace"}, "input": f"task {i} " + "word " * 2_000}
            for i in range(30)]
    traces.write_text("".join(json.dumps(row) + "\n" for row in rows))
    out = run_cli("sleep", "--store", json_store, "--traces", traces, "--model", "ollama:fake-model",
                  "--max-model-calls", "1", "--out", tmp_path / "r.json",
                  extra_env={"OLLAMA_HOST": "http://127.0.0.1:9"})
    assert out.returncode == 2 and "more than max_model_calls=1; no call was made" in out.stderr, out.stderr
    assert "raise max_model_calls (lamar sleep --max-model-calls)" in out.stderr
    assert "could not reach" not in out.stderr
    for bad in ("0", "1_0", "two"):
        refused = run_cli("sleep", "--store", json_store, "--traces", traces, "--model", "ollama:fake-model",
                          "--max-model-calls", bad)
        assert refused.returncode == 1 and "expected a whole number >= 1" in refused.stderr, refused.stderr
    alone = run_cli("sleep", "--store", json_store, "--max-model-calls", "3")
    assert alone.returncode == 1 and "--max-model-calls caps the model calls of mining" in alone.stderr
    assert "--max-model-calls N" in run_cli("sleep", "--help").stdout


def test_ui_takes_max_model_calls_with_a_model_only_as_sleep_does(run_cli, json_store, tmp_path):
    # Run sleep in `lamar ui` mines too: its model calls are capped by the same flag, refused alike.
    alone = run_cli("ui", "--store", json_store, "--no-browser", "--max-model-calls", "3")
    assert alone.returncode == 1 and "--max-model-calls caps the model calls of mining" in alone.stderr, alone.stderr
    refused = run_cli("ui", "--store", json_store, "--no-browser", "--max-model-calls", "0")
    assert refused.returncode == 1 and "expected a whole number >= 1" in refused.stderr, refused.stderr
    assert "--max-model-calls N" in run_cli("ui", "--help").stdout


# A writer in the middle of its write when the job moves the file: it holds the lock, and its line
# lands in the moved file a moment after the move.
_MID_WRITE = """
import fcntl, json, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o666)
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
while True:
    try:
        if not os.path.samestat(os.stat(sys.argv[1]), os.fstat(fd)):
            break
    except FileNotFoundError:
        break
    time.sleep(0.01)
time.sleep(0.2)
os.write(fd, (json.dumps({"id": sys.argv[2], "context": {}}) + "\\n").encode())
"""


def mid_write(path: Path, id_: str) -> subprocess.Popen[str]:
    writer = subprocess.Popen([sys.executable, "-c", _MID_WRITE, str(path), id_], stdout=subprocess.PIPE, text=True)
    assert writer.stdout is not None and writer.stdout.readline() == "held\n"
    return writer


def mined_ids() -> list[str]:
    """The trace ids of every prompt the fake model was sent, in order."""
    return [found for prompt in FakeOllama.prompts for found in re.findall(r'\{"id": "([^"]+)"', prompt)]


def test_the_pages_nightly_job_consolidates_on_a_night_without_traces(sqlite_store, tmp_path, ollama_host):
    """docs/sleep.md's nightly job installed as a user would, run six nights: the cron line moved
    traces.jsonl away, so the next night with no new trace failed "no trace file" and consolidated nothing;
    the job moved the file only after mining it, so a trace written while sleep ran was never mined
    (nor, once it moved first, one a writer was appending as the file moved)."""
    from lamar.sleep import TraceWriter
    from tests.docblocks import ROOT, parse

    blocks = parse(ROOT / "docs" / "sleep.md")
    (cron,) = [b.code for b in blocks if b.lang == "cron"]
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    installed = {bin_ / "lamar": f'#!/bin/sh\nexec "{sys.executable}" -m lamar.cli "$@"\n',
                 bin_ / "date": '#!/bin/sh\necho "$NIGHT"\n'}  # each run is another night
    for script in (b.code for b in blocks if b.lang == "sh" and b.code.startswith("#!/bin/sh\n# /srv/agent/")):
        installed[tmp_path / script.split()[2].removeprefix("/srv/agent/").rstrip(":")] = script
    for path, text in installed.items():
        path.write_text(text.replace("/srv/agent", str(tmp_path)).replace("anthropic:claude-sonnet-4-5", "ollama:m"))
        path.chmod(0o755)
    (command,) = [line.split(maxsplit=5)[5] for line in cron.splitlines() if not line.startswith("#")]
    command = command.replace("/srv/agent", str(tmp_path)).replace("anthropic:claude-sonnet-4-5", "ollama:m")
    env = {k: v for k, v in os.environ.items() if k != "LAMAR_STORE"}
    env.update(HOME=str(tmp_path / "home"), PATH=f"{bin_}{os.pathsep}{env['PATH']}", OLLAMA_HOST=ollama_host)
    assert sqlite_store == tmp_path / "experience.db"
    traces = tmp_path / "traces.jsonl"

    def write(*ids: str) -> None:
        for id_ in ids:  # as an agent's integration appends, one open and close per trace
            TraceWriter(traces).write({"id": id_, "context": {"project": "trace"}, "input": "bump swift-nio",
                                       "outcome": "reverted"})

    FakeOllama.reply = json.dumps([{"precondition": "a package bump breaks the build", "action": "reset the caches",
                                    "scope": {"project": "trace"}, "trace_ids": ["t0", "t2"]}])
    FakeOllama.prompts = []

    def night(day: str, **extra: str) -> tuple[subprocess.CompletedProcess[str], list[str]]:
        done = subprocess.run(["/bin/sh", "-c", command], env={**env, "NIGHT": day, **extra}, cwd="/",
                              capture_output=True, text=True, timeout=120, check=False)
        report = tmp_path / f"sleep-{day}.json"
        return done, sorted(p["kind"] for p in json.loads(report.read_text())["proposals"]) if report.exists() else []

    write("t0", "t1", "t2")
    FakeOllama.during = lambda: write("late")  # an agent at work while sleep waits for the model
    done, kinds = night("2026-01-01")
    FakeOllama.during = None
    assert done.returncode == 0 and kinds == ["candidate", "contradiction", "merge"], done.stderr
    assert mined_ids() == ["t0", "t1", "t2"]
    assert [t["id"] for t in map(json.loads, traces.read_text().splitlines())] == ["late"]
    done, kinds = night("2026-01-02")  # the trace written during the last run is mined now
    assert done.returncode == 0 and mined_ids() == ["t0", "t1", "t2", "late"], done.stderr
    done, kinds = night("2026-01-03")  # no trace written that day: the store is consolidated all the same
    assert done.returncode == 0 and kinds == ["contradiction", "merge"], done.stderr
    assert len(FakeOllama.prompts) == 2
    write("f0", "f1")
    done, kinds = night("2026-01-04", OLLAMA_HOST="http://127.0.0.1:9")  # the model is down: traces stay
    assert done.returncode == 2 and kinds == ["contradiction", "merge"], done.stderr
    assert sorted(p.name for p in tmp_path.glob("traces-pending-*")) == ["traces-pending-2026-01-04.jsonl"]
    write("g0")
    writer = mid_write(traces, "g1")
    done, kinds = night("2026-01-05")  # the failed night's traces are mined with this night's
    assert writer.wait(60) == 0
    assert done.returncode == 0, done.stderr
    assert sorted(mined_ids()) == ["f0", "f1", "g0", "g1", "late", "t0", "t1", "t2"]  # each once
    done, kinds = night("2026-01-06")  # and never again
    assert done.returncode == 0 and len(FakeOllama.prompts) == 3 and not list(tmp_path.glob("traces-pending-*"))
    # A writer killed mid-line left a record cut off: the night failed on it, and so did every later one.
    write("h0")
    with traces.open("ab") as torn:
        torn.write(b'{"id": "h1", "context": {"pro')
    done, kinds = night("2026-01-07")
    assert done.returncode == 0 and "line 2: the last line is cut off" in done.stderr, done.stderr
    assert mined_ids()[-1] == "h0" and not list(tmp_path.glob("traces-pending-*"))
    # A bad line in the middle still stops the night, and the error names the pending file, not a joined copy.
    write("k0", "k1")
    traces.write_text(traces.read_text().replace('"k0"', '"k0', 1))
    done, kinds = night("2026-01-08")
    assert done.returncode == 1 and "traces-pending-2026-01-08.jsonl, line 1: not valid JSON" in done.stderr


def test_the_pages_auto_apply_job_mines_each_trace_once(sqlite_store, tmp_path, ollama_host):
    """docs/sleep.md's Python auto-apply job run night after night: it read traces.jsonl in place, so a
    night before the first trace failed on the missing file and every later night mined the same traces."""
    from lamar.sleep import TraceWriter
    from tests.docblocks import ROOT, parse

    (code,) = [b.code for b in parse(ROOT / "docs" / "sleep.md")
               if b.lang == "python" and 'from_spec("anthropic:claude-sonnet-4-5")' in b.code and "lam.apply" in b.code]
    code = code.replace("anthropic:claude-sonnet-4-5", "ollama:m")
    env = {k: v for k, v in os.environ.items() if k != "LAMAR_STORE"}
    env.update(HOME=str(tmp_path / "home"), OLLAMA_HOST=ollama_host)
    assert sqlite_store == tmp_path / "experience.db"
    FakeOllama.prompts = []

    def write(*ids: str) -> None:
        for id_ in ids:
            TraceWriter(tmp_path / "traces.jsonl").write({"id": id_, "context": {"project": "trace"}})

    def night(**extra: str) -> None:
        done = subprocess.run([sys.executable, "-c", code], env={**env, **extra}, cwd=tmp_path,
                              capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 0, done.stderr

    night()  # no trace written yet
    write("t0", "t1")
    FakeOllama.during = lambda: write("late")
    night()
    FakeOllama.during = None
    night(OLLAMA_HOST="http://127.0.0.1:9")  # the model is down: "late" waits for the next night
    write("f0")
    writer = mid_write(tmp_path / "traces.jsonl", "f1")
    night()
    assert writer.wait(60) == 0
    night()
    assert sorted(mined_ids()) == ["f0", "f1", "late", "t0", "t1"]  # each once


@pytest.mark.parametrize(("spec", "variable"), [("anthropic:claude-test", "ANTHROPIC_API_KEY"),
                                                ("openai:gpt-test", "OPENAI_API_KEY")])
def test_a_missing_key_is_advice_for_the_command_line(run_cli, json_store, tmp_path, monkeypatch, spec, variable):
    """"or pass api_key=..." is the Python API's way; at the command line only the environment is."""
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_PROFILE", "ANTHROPIC_CONFIG_DIR",
                 "OPENAI_API_KEY", "OPENAI_ADMIN_KEY"):
        monkeypatch.delenv(name, raising=False)
    traces = tmp_path / "traces.jsonl"
    traces.write_text("")
    out = run_cli("sleep", "--store", json_store, "--traces", traces, "--model", spec)
    assert out.returncode == 2 and f"set {variable} in the environment" in out.stderr, out.stderr
    assert "api_key" not in out.stderr and "credentials for model" in out.stderr, out.stderr  # no Python-only option


def test_review_keeps_a_decision_made_elsewhere_while_it_ran(run_cli, json_store, make_report, monkeypatch):
    # A teammate approved a proposal in `lamar ui` while another answered the first one in `lamar review`
    # and quit: the review wrote the report back as it had read it, and the approval was gone.
    from lamar.cli import review
    from lamar.cli.review import load_report, save_report

    report = make_report(json_store)
    first, second = (p["id"] for p in json.loads(report.read_text())["proposals"])
    answers = iter(["n", "q"])

    def ask_while_the_ui_approves(prompt: str) -> str:
        if prompt.startswith("approve?") and not json.loads(report.read_text()).get("approved"):
            elsewhere = load_report(str(report))  # what the UI's Approve does: read, add, save
            save_report(str(report), {**elsewhere, "approved": [second]})
        return next(answers)

    monkeypatch.setattr(review, "_ask", ask_while_the_ui_approves)
    out = run_cli("review", report, "--store", json_store)
    assert out.returncode == 0 and "1 approved, 1 rejected, 0 undecided" in out.stdout, out.stdout + out.stderr
    saved = json.loads(report.read_text())
    assert saved["approved"] == [second] and saved["rejected"] == [first]


def test_apply_only_takes_the_start_of_a_proposal_id(run_cli, sqlite_store, ids, make_report):
    # Other commands take the start of a lesson id; `apply --only contra` answered "no proposal 'contra'".
    report = make_report(sqlite_store)
    chosen = proposal_ids(report)
    start = chosen["contradiction"][:len("contradiction_") + 4]
    only = run_cli("apply", report, "--store", sqlite_store, "--only", start)
    assert only.returncode == 0 and only.stdout.startswith("applied 1, skipped 0"), only.stderr
    assert chosen["contradiction"] in only.stdout


def test_two_reviews_saving_at_once_keep_each_others_answers(run_cli, json_store, make_report, monkeypatch):
    # Two people reviewed one report: the second saved its answers between the first's re-read of the file
    # and its save, and the first wrote back what it had re-read, so the second's rejection was gone.
    from lamar.cli import review
    from lamar.cli.parser import build_parser
    from lamar.store import file_lock

    report = make_report(json_store)
    first, second = (p["id"] for p in json.loads(report.read_text())["proposals"])
    main = threading.current_thread()
    answers = {main: iter(["y", "q"])}
    other_args = build_parser().parse_args(["review", str(report), "--store", str(json_store)])
    other_done: list[int] = []
    others: list[threading.Thread] = []

    def other_review() -> None:
        answers[threading.current_thread()] = iter(["y", "n"])
        other_done.append(review.cmd_review(other_args))

    save = review.save_report

    def save_while_the_other_review_saves(path: str, data: dict) -> None:
        if threading.current_thread() is main and not other_done:
            others.append(threading.Thread(target=other_review))
            others[0].start()
            for _ in range(1000):  # until it has saved, or waits for the report's lock
                if other_done or file_lock._live:
                    break
                others[0].join(0.01)
        save(path, data)

    monkeypatch.setattr(review, "_ask", lambda prompt: next(answers[threading.current_thread()]))
    monkeypatch.setattr(review, "save_report", save_while_the_other_review_saves)
    out = run_cli("review", report, "--store", json_store)
    others[0].join(30)
    assert out.returncode == 0 and other_done == [0], out.stdout + out.stderr
    saved = json.loads(report.read_text())
    assert (saved["approved"], saved["rejected"]) == ([first], [second])
