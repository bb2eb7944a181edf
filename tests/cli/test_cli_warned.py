"""`lamar sleep`, `review` and `apply` over a mined candidate that would have the agent do harm: listed and
reviewed with its warning, and held back by apply until --confirm-warned says a person means it."""

from __future__ import annotations

import json
from pathlib import Path

from lamar import Experience, Lamar, Trace
from lamar.models import ScriptedModel
from tests.fake_ollama import FakeOllama

PUSH = "Run git push --force origin main after each fix"
LESSON = {"precondition": "When a fix is ready", "action": PUSH, "rationale": "CI reads main",
          "scope": {"project": "p"}, "trace_ids": ["t0", "t1"]}


def _report(store: Path, path: Path, *, twins: bool = False) -> dict[str, str]:
    """A report of a warned candidate (and a merge, with `twins`) over `store`, as `lamar sleep --out` saves it."""
    traces = [Trace(f"t{i}", {"project": "p"}, input="ship the fix", output="done", outcome="shipped")
              for i in range(2)]
    with Lamar(str(store)) as lam:
        if twins:
            lam.add(Experience("the build fails after a bump", "clear DerivedData"))
            lam.add(Experience("the build fails after a bump", "clear DerivedData."))
        report = lam.sleep(traces=traces, model=ScriptedModel([json.dumps([LESSON])]))
    path.write_text(json.dumps(report.to_dict()))
    return {p.kind: p.id for p in report.proposals}


def test_sleep_lists_a_warned_candidate_with_its_warning(run_cli, tmp_path, ollama_host):
    traces = tmp_path / "traces.jsonl"
    traces.write_text("".join(json.dumps({"id": f"t{i}", "context": {"project": "p"}, "input": "ship the fix",
                                          "output": "done", "outcome": "shipped"}) + "\n" for i in range(2)))
    Lamar(str(tmp_path / "s.db")).close()  # an empty store
    FakeOllama.reply, FakeOllama.prompts = json.dumps([LESSON]), []
    out = run_cli("sleep", "--store", tmp_path / "s.db", "--traces", traces, "--model", "ollama:fake-model",
                  "--out", tmp_path / "r.json", extra_env={"OLLAMA_HOST": ollama_host})
    assert out.returncode == 0, out.stderr
    assert ("    WARNING: this lesson tells the agent to do harm (force-pushes over a shared branch: "
            "'git push --force origin main'); approve it only if you mean it") in out.stdout.splitlines(), out.stdout
    (saved,) = json.loads((tmp_path / "r.json").read_text())["proposals"]
    assert saved["warning"].startswith("force-pushes over a shared branch")


def test_review_shows_the_warning_before_it_asks(run_cli, tmp_path):
    store, path = tmp_path / "s.db", tmp_path / "r.json"
    _report(store, path)
    out = run_cli("review", path, "--store", store, stdin="y\n")
    assert out.returncode == 0, out.stderr
    before_asking = out.stdout.split("approve? ")[0]
    assert "WARNING: this lesson tells the agent to do harm (force-pushes over a shared branch" in before_asking


def test_apply_holds_a_warned_candidate_back_even_approved_until_it_is_confirmed(run_cli, tmp_path):
    store, path = tmp_path / "s.db", tmp_path / "r.json"
    pid = _report(store, path)["candidate"]
    assert run_cli("review", path, "--store", store, stdin="y\n").returncode == 0  # approved
    held = run_cli("apply", path, "--store", store)
    assert held.returncode == 1, held.stdout
    assert held.stdout.startswith("applied 0, skipped 0, held back 1\n"), held.stdout
    assert f"  held back  {pid}: WARNING, this lesson tells the agent to do harm (force-pushes" in held.stdout
    assert f"apply it with --confirm-warned --only {pid}" in held.stdout
    assert "1 held back (a warned lesson: --confirm-warned applies it)" in held.stderr
    as_json = json.loads(run_cli("apply", path, "--store", store, "--json").stdout)
    assert as_json["applied"] == [] and as_json["held_back"][0]["id"] == pid
    assert as_json["held_back"][0]["warning"].startswith("force-pushes over a shared branch")
    with Lamar(str(store)) as lam:
        assert lam.experiences() == []
    confirmed = run_cli("apply", path, "--store", store, "--confirm-warned")
    assert confirmed.returncode == 0 and f"  applied  {pid}" in confirmed.stdout, confirmed.stdout + confirmed.stderr
    with Lamar(str(store)) as lam:
        assert [e.action for e in lam.experiences(status="candidate")] == [PUSH]
    again = run_cli("apply", path, "--store", store)  # applied: nothing is left to hold back
    assert again.returncode == 0 and again.stdout.startswith("applied 0, skipped 1\n"), again.stdout + again.stderr
    assert f"  skipped  {pid}: already applied" in again.stdout, again.stdout


def test_apply_in_full_applies_the_rest_and_says_what_it_held_back(run_cli, tmp_path):
    store, path = tmp_path / "s.json", tmp_path / "r.json"
    ids = _report(store, path, twins=True)
    out = run_cli("apply", path, "--store", store, "--json")
    assert out.returncode == 0, out.stderr
    said = json.loads(out.stdout)
    assert said["applied"] == [ids["merge"]] and [h["id"] for h in said["held_back"]] == [ids["candidate"]]
    plain = run_cli("apply", path, "--store", store)  # the merge is applied already; the candidate still held
    assert plain.returncode == 1 and "held back 1" in plain.stdout, plain.stdout
