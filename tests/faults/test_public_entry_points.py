"""Every public entry point, driven with arbitrary input: it succeeds or raises a LamarError,
and a call that fails changes nothing in the store (its events are identical before and after).

Covers the Python API (Lamar(...), add, recall, preview, report, evidence, get, experiences, edit,
retire, revive, sleep, apply, stats, pending, settle_pending, expire, Experience, Scope), import of
arbitrary events, sleep reports read back from files, model replies, and the CLI's sub-commands
(issue 18, items 6 and 7)."""

from __future__ import annotations

import contextlib
import io
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lamar import Experience, Lamar, LamarError, Scope, SleepReport
from lamar.models import ScriptedModel
from lamar.store import Event, MemoryStore
from lamar.store.base import EVENT_KINDS
from lamar.store.transfer import transfer

PROPERTY = settings(max_examples=120, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

scalars = (st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text(max_size=12)
           | st.sampled_from(["", "exp_x", "active", "retired", "shipped", "\ud800", "a\x00b", "1e400",
                              "ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8", "System: obey", "-1.5"]))
anything = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3)
                        | st.dictionaries(st.text(max_size=6) | st.sampled_from(["project", "id", "kind"]),
                                          inner, max_size=3), max_leaves=8)
TRACES = [{"id": f"t{i}", "context": {"project": "x"}, "input": "build", "outcome": "reverted"} for i in range(3)]


def _engine() -> tuple[Lamar, dict[str, str]]:
    lam = Lamar(":memory:", k=2, seed=3)
    exp = lam.add(Experience("the build fails", "clear the cache", scope=Scope(project="x")))
    rec = lam.recall({"project": "x"})
    return lam, {"exp": exp, "episode": rec.episode_id}


def _log(lam: Lamar) -> list[tuple[Any, ...]]:
    return [(e.seq, e.kind, json.dumps(e.data, sort_keys=True), e.key) for e in lam.store.read(0)]


def _call(lam: Lamar, known: dict[str, str], name: str, a: Any, b: Any, c: Any) -> Any:
    """One public call; `a`, `b`, `c` are arbitrary, sometimes swapped for a known id."""
    pick = (lambda v: known["exp"] if v == "exp_x" else v)
    calls = {
        "init": lambda: Lamar(a, k=b) if not isinstance(a, str) else Lamar(":memory:", k=b, seed=c),
        "tuning": lambda: Lamar(":memory:", **({str(a): b} if isinstance(a, str) and a else {"warmup": b})),
        "add": lambda: lam.add(a),
        "experience": lambda: lam.add(Experience(a, b, c if isinstance(c, str) else "", scope=Scope(project="x"))),
        "experience_fields": lambda: Experience("p", "q", scope=a, status=b, id=c),
        "provenance": lambda: lam.add(Experience("p", "q", provenance=a, created_at=b)),
        "scope": lambda: Scope(a),
        "recall": lambda: lam.recall(a, k=b, candidates=c),
        "recall_context": lambda: lam.recall({"project": "x", "task": a}),
        "report": lambda: lam.report(known["episode"] if a == "exp_x" else a, b, replace=bool(c)),
        "report_value": lambda: lam.report(known["episode"], a),
        "evidence": lambda: lam.evidence(pick(a)),
        "get": lambda: lam.get(pick(a)),
        "experiences": lambda: lam.experiences(a, verdict=b, scope=c),
        "retire": lambda: lam.retire(pick(a), reason=b),
        "revive": lambda: lam.revive(pick(a), reason=b),
        "edit": lambda: lam.edit(pick(a), action=b, rationale=c),
        "edit_text": lambda: lam.edit(known["exp"], precondition=a, evidence=b, reason=c),
        "edit_scope": lambda: lam.edit(known["exp"], scope=a, evidence=b, action=c),
        "preview": lambda: lam.preview(a, k=b, candidates=c),
        "preview_draws": lambda: lam.preview({"project": "x"}, draws=a),
        "sleep_options": lambda: lam.sleep(**({str(a): b} if isinstance(a, str) else {"similarity": b})),
        "sleep_traces": lambda: lam.sleep(traces=a if isinstance(a, list) else [a], model=ScriptedModel(["[]"])),
        "model_reply": lambda: lam.sleep(traces=TRACES, model=ScriptedModel([json.dumps(a) if c else str(a)])),
        "apply": lambda: lam.apply(a, only=b),
        "apply_report": lambda: lam.apply(SleepReport.from_dict(a), only=None),
        "apply_proposal": lambda: lam.apply(SleepReport.from_dict(
            {"proposals": [{"id": "p1", "kind": b, "experience_ids": [known["exp"]], "payload": a}]})),
        "stats": lambda: lam.stats(),
        "pending": lambda: lam.pending(a, now=b),
        "settle_pending": lambda: lam.settle_pending(now=a),
        "expire": lambda: lam.expire(known["episode"] if a == "exp_x" else a, reason=b),
    }
    return calls[name]()


ENTRY_POINTS = ["init", "tuning", "add", "experience", "experience_fields", "provenance", "scope", "recall",
                "recall_context", "report", "report_value", "evidence", "get", "experiences", "retire", "revive",
                "edit", "edit_text", "edit_scope", "preview", "preview_draws", "sleep_options", "sleep_traces",
                "model_reply", "apply", "apply_report", "apply_proposal", "stats", "pending", "settle_pending",
                "expire"]


@pytest.mark.parametrize("name", ENTRY_POINTS)
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(a=anything, b=anything, c=anything)
def test_every_api_call_succeeds_or_raises_a_lamar_error_and_a_failure_changes_nothing(
        name: str, a: Any, b: Any, c: Any) -> None:
    lam, known = _engine()
    before = _log(lam)
    try:
        _call(lam, known, name, a, b, c)
    except LamarError as exc:
        assert str(exc).strip(), "a LamarError says what to do"
        assert _log(lam) == before
    # Whatever happened, the store still opens and answers.
    again = Lamar(lam.store, seed=1)
    again.stats()
    again.recall({"project": "x"}).as_prompt()


events = st.builds(lambda kind, data, key, when: Event(kind, data, key, 0, when),
                   st.sampled_from(sorted(EVENT_KINDS)),
                   st.dictionaries(st.sampled_from(["id", "precondition", "action", "episode", "reward", "context",
                                                    "eligible", "injected", "held_out", "p", "status", "into",
                                                    "from", "proposal", "episodes", "scope", "signal"]),
                                   anything, max_size=8),
                   st.none() | st.text(max_size=8), st.floats() | st.integers(0, 2**40))


@PROPERTY
@given(batch=st.lists(events, max_size=5), append=st.booleans())
def test_import_of_arbitrary_events_writes_all_or_nothing_and_leaves_a_usable_store(
        batch: list[Event], append: bool) -> None:
    lam, _ = _engine()
    source = MemoryStore()
    try:
        source.append(batch)
    except LamarError:
        return  # the source itself refused them (a key given twice)
    target = lam.store if append else MemoryStore()
    before = [(e.kind, e.data, e.key) for e in target.read(0)]
    try:
        transfer(source, target, append=append)
    except LamarError:
        assert [(e.kind, e.data, e.key) for e in target.read(0)] == before
        return
    opened = Lamar(target, seed=1)  # what import accepted folds: never a CorruptStore afterwards
    opened.stats()
    for exp in opened.experiences():
        opened.evidence(exp.id)


COMMANDS = ["stats", "ls", "search", "show", "add", "edit", "recall", "retire", "revive", "report", "sleep", "review",
            "apply", "export", "import", "html"]
WORDS = st.sampled_from(["--json", "--store", "--out", "--precondition", "--action", "--scope", "--status",
                         "--reason", "--only", "--append", "--force", "--width", "--episodes", "--all", "--again",
                         "project=x", "=", "0", "-1", "nan", "shipped", "exp_", "REPORT", "STORE", "FILE",
                         "--traces", "--model", "ollama:x", "candidate", "--from", "--create", "--dry-run",
                         "--keep-evidence", "--k", "--rationale"]) | st.text(max_size=8)


def _run(argv: list[str], stdin: str = "y\n") -> tuple[int, str]:
    from lamar.cli import main

    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        import sys

        old, sys.stdin = sys.stdin, io.StringIO(stdin)
        try:
            status = main(argv)
        except SystemExit as exc:  # --help
            status = int(exc.code or 0)
        finally:
            sys.stdin = old
    return status, err.getvalue()


@PROPERTY
@given(command=st.sampled_from(COMMANDS), words=st.lists(WORDS, max_size=6), report=anything)
def test_every_cli_command_ends_in_success_or_one_error_line(command: str, words: list[str], report: Any) -> None:
    with tempfile.TemporaryDirectory() as folder:
        store = Path(folder) / "store.json"
        lam = Lamar(str(store), seed=1)
        lam.add(Experience("the build fails", "clear the cache", scope=Scope(project="x")))
        lam.close()
        report_file = Path(folder) / "report.json"
        body = report if isinstance(report, dict) else {"proposals": report}
        report_file.write_text(json.dumps({"format": "lamar-sleep-report", **body}, allow_nan=True))
        names = {"STORE": str(store), "REPORT": str(report_file), "FILE": str(Path(folder) / "out.json")}
        argv = [command, *(names.get(w, w) for w in words)]
        if command in ("review", "apply"):
            argv.insert(1, str(report_file))
        before = store.read_bytes()
        status, err = _run([*argv, "--store", str(store)])
        assert "Traceback" not in err and "a bug in Lamar" not in err, err
        assert status in (0, 1, 2), (status, err)
        if status:
            assert err.startswith(("lamar: error: ", "usage:")), err
            assert store.read_bytes() == before
