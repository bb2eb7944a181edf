"""`lamar stats` says when the last sleep ran and what its mining did, so that a nightly cron job's
failures show where a user looks, with what to do."""

from __future__ import annotations

import json
from pathlib import Path

from tests.fake_ollama import FakeOllama


def _traces(tmp_path: Path) -> Path:
    traces = tmp_path / "traces.jsonl"
    traces.write_text("".join(json.dumps({"id": f"t{i}", "time": 1_700_000_000.0 + i, "context": {"project": "trace"},
                                          "input": "bump swift-nio", "tool_errors": ["module map not found"],
                                          "outcome": "reverted"}) + "\n" for i in range(3)))
    return traces


def test_stats_says_the_last_sleeps_mining_failed_and_what_to_do(lamar_cli, run_cli, json_store, tmp_path,
                                                                  ollama_host):
    FakeOllama.reply = "I would rather not answer in JSON tonight."  # every reply unreadable
    out = lamar_cli("sleep", "--store", json_store, "--traces", _traces(tmp_path), "--model", "ollama:fake-model",
                    "--out", tmp_path / "r.json", extra_env={"OLLAMA_HOST": ollama_host})
    assert out.returncode == 2, out.stderr
    stats = run_cli("stats", "--store", json_store).stdout
    sleep_line = next((line for line in stats.splitlines() if line.startswith("sleep ")), "")
    assert " UTC (0 min ago): 2 proposals (report: " in sleep_line, stats
    assert ("mining     MINING FAILED: 3 traces, 1 model call, no lesson mined: no reply of the model held a lesson "
            "list (1 of 1 unreadable") in stats
    assert "check the model, then run sleep again" in stats
    last = json.loads(run_cli("stats", "--store", json_store, "--json").stdout)["last_sleep"]
    assert last["mining"]["traces"] == 3 and "no reply of the model held a lesson list" in last["mining"]["error"]


def test_stats_counts_what_the_last_sleep_mined_and_lost(lamar_cli, run_cli, json_store, tmp_path, ollama_host):
    assert "none recorded" in run_cli("stats", "--store", json_store).stdout
    FakeOllama.reply = json.dumps([{"precondition": "a module map is missing after a package bump",
                                    "action": "reset the package caches before building",
                                    "scope": {"project": "trace"}, "trace_ids": ["t0", "t2"]},
                                   {"precondition": "the build broke", "action": "rebuild", "scope": "trace"}])
    out = lamar_cli("sleep", "--store", json_store, "--traces", _traces(tmp_path), "--model", "ollama:fake-model",
                    extra_env={"OLLAMA_HOST": ollama_host})
    assert out.returncode == 0, out.stderr
    stats = run_cli("stats", "--store", json_store).stdout
    assert ("mining     mined 3 traces in 1 model call: 1 candidate lesson; LOST 1 unreadable lesson: 1 of the 2 "
            "lessons the model wrote could not be read as lessons") in stats, stats
    assert "run sleep again on those traces, or check the model" in stats


def test_stats_reads_a_hand_edited_last_sleep_without_failing(run_cli, json_store):
    figures = json_store.with_name(json_store.name + ".last-sleep.json")
    figures.write_text('{"format": "lamar-last-sleep", "created": NaN}')
    assert "none recorded" in run_cli("stats", "--store", json_store).stdout
    figures.write_text(json.dumps({"format": "lamar-last-sleep", "created": 1.7e9, "proposals": "many",
                                   "mining": {"traces": 2, "error": "timed out\nlamar: all is well"}}))
    stats = run_cli("stats", "--store", json_store).stdout
    assert ": 0 proposals" in stats and "no lesson mined: timed out lamar: all is well: fix the model" in stats
    assert not any(line.startswith("lamar: all") for line in stats.splitlines())


def test_stats_shows_a_sleep_called_from_python_as_one_the_cli_ran(run_cli, json_store, tmp_path):
    from lamar import Lamar

    with Lamar(str(json_store)) as lam:
        made = lam.sleep()
    stats = run_cli("stats", "--store", json_store).stdout
    sleep_line = next((line for line in stats.splitlines() if line.startswith("sleep ")), "")
    assert f" UTC (0 min ago): {len(made.proposals)} proposal" in sleep_line and "no traces mined" in sleep_line, stats
    last = json.loads(run_cli("stats", "--store", json_store, "--json").stdout)["last_sleep"]
    assert last["created"] == made.created and last["report"] is None
    # A store Lamar names by no file (in memory, or a third-party store's name) leaves no file behind.
    with Lamar(":memory:") as lam:
        lam.sleep()
    kept = sorted(p.name for p in tmp_path.iterdir() if "last-sleep" in p.name)
    assert kept == [json_store.name + ".last-sleep.json"]


def _writes_of_the_last_sleep(monkeypatch) -> list[str]:
    """Each write of a last-sleep file this process makes, by the one function every recorder writes through."""
    from lamar import atomic

    written: list[str] = []
    replace = atomic.replace_file

    def counting(path, data, *args, **kwargs):
        if str(path).endswith(".last-sleep.json"):
            written.append(json.loads(data)["report"])
        return replace(path, data, *args, **kwargs)

    monkeypatch.setattr(atomic, "replace_file", counting)
    return written


def test_lamar_sleep_records_its_run_once_and_stats_shows_that_one(run_cli, json_store, tmp_path, monkeypatch):
    written = _writes_of_the_last_sleep(monkeypatch)
    out = tmp_path / "r.json"
    assert run_cli("sleep", "--store", json_store, "--out", out).returncode == 0
    assert written == [str(out)]  # once, naming its report: not first without it and then again
    stats = run_cli("stats", "--store", json_store).stdout
    sleep_lines = [line for line in stats.splitlines() if line.startswith("sleep ")]
    assert len(sleep_lines) == 1 and sleep_lines[0].endswith(f"(report: {out})"), stats
    # A place that cannot take the figures is said once, not by the sleep and again by the command.
    kept = json_store.with_name(json_store.name + ".last-sleep.json")
    kept.unlink()
    kept.mkdir()
    done = run_cli("sleep", "--store", json_store, "--out", tmp_path / "r2.json")
    assert done.returncode == 0 and done.stderr.count("were not kept") == 1, done.stderr
