"""`lamar ui`'s sleep page sets a warned candidate's warning apart on its card; Approve there, beside the
warning, is the person's decision, and Apply adds the lesson."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

from lamar import Lamar, Trace
from lamar.models import ScriptedModel

pytest.importorskip("starlette")

from tests.integrations.ui.test_ui_apply import _apply_form, _message
from tests.integrations.ui.test_ui_trial import _get, serving

PUSH = "Run git push --force origin main after each fix"


def test_the_sleep_page_shows_the_warning_and_apply_adds_what_was_approved_beside_it(tmp_path: Path) -> None:
    path = tmp_path / "lessons.db"
    traces = [Trace(f"t{i}", {"project": "p"}, input="ship the fix", output="done", outcome="shipped")
              for i in range(2)]
    reply = json.dumps([{"precondition": "When a fix is ready", "action": PUSH, "rationale": "CI reads main",
                         "scope": {"project": "p"}, "trace_ids": ["t0", "t1"]}])
    with Lamar(str(path)) as lam:
        report = lam.sleep(traces=traces, model=ScriptedModel([reply]))
    Path(f"{path}.sleep-report.json").write_text(json.dumps(report.to_dict()))
    (pid,) = [p.id for p in report.proposals]
    with serving(path) as url:
        page = _get(url, "/sleep")
        warned = re.findall(r'<p class="warning"><bdi>([^<]*)</bdi></p>', page)
        assert [html.unescape(w) for w in warned] == [
            ("WARNING: this lesson tells the agent to do harm (force-pushes over a shared branch: "
            "'git push --force origin main'); approve it only if you mean it")], page[-2000:]
        _get(url, "/sleep/decide", {"proposal": pid, "decision": "approved"})
        assert _message(_get(url, "/sleep/apply", _apply_form(_get(url, "/sleep")))) == "applied 1, skipped 0"
    with Lamar(str(path)) as lam:
        assert [e.action for e in lam.experiences(status="candidate")] == [PUSH]
