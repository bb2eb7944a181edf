"""A `.pgpass` line and a Markdown table's cell are credentials by their own lines, which a lesson's prompt
form joins into one: every way in (add, sleep's mining, the trace writer) reads them before the join."""

from __future__ import annotations

import json
import random
import string
from pathlib import Path

import pytest

from lamar import Experience, InvalidExperience, Lamar, Scope, Trace
from lamar.models import ScriptedModel
from lamar.sleep.traces import TraceWriter, load_traces

ALNUM = string.ascii_letters + string.digits


def lined(seed: int) -> list[tuple[str, str, str]]:
    """(name, secret, multi-line text holding it on a line of its own), fresh from `seed`."""
    rng = random.Random(seed)
    pw = rng.choice(string.ascii_uppercase) + "".join(rng.choice(ALNUM) for _ in range(9)) + rng.choice(string.digits)
    host = rng.choice(["db", "pg", "orders"]) + f"{rng.randrange(1, 99)}.internal.example.com"
    return [
        (".pgpass line", pw, f"psql asks for no password once\n{host}:5432:app:app_rw:{pw}\nis in ~/.pgpass"),
        (".pgpass wildcards", pw, f"add this line\n*:*:*:postgres:{pw}\nthen chmod 600 the file"),
        ("table column", pw, f"log in as\n| user | password |\n|---|---|\n| admin | {pw} |\nand retry"),
        ("table row", pw, f"the staging values:\n| name | value |\n|---|---|\n| password | {pw} |\nuse them"),
        ("unicode line break", pw, f"add this line\u2028{host}:5432:app:app_rw:{pw}\u2028then reconnect"),
    ]


# Near misses: the same layouts with nothing secret in them stay storable.
NEAR_MISSES = [
    "each line of ~/.pgpass reads\nhostname:port:database:username:password\nand the file must be 0600",
    "the build printed\n12:30:45:01:02\nbefore it hung",
    "the options are\n| option | required |\n|---|---|\n| password | yes |\nset the others in .env",
    "the secrets live in Vault\n| name | value |\n|---|---|\n| password | <from vault> |\nnever inline",
]


@pytest.mark.parametrize("seed", range(4))
def test_add_refuses_a_credential_on_a_line_of_its_own(seed: int) -> None:
    lam = Lamar(":memory:")
    for name, secret, text in lined(seed):
        for field in ("precondition", "action", "rationale"):
            parts = {"precondition": "psql asks for a password", "action": "read the staging notes", "rationale": ""}
            parts[field] = text
            with pytest.raises(InvalidExperience, match="looks like a secret") as caught:
                lam.add(Experience(parts["precondition"], parts["action"], parts["rationale"], Scope(project="x")))
            assert secret not in str(caught.value), name
    assert lam.experiences() == []


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_add_keeps_the_same_layouts_without_a_credential(text: str) -> None:
    lam = Lamar(":memory:")
    lesson_id = lam.add(Experience("psql asks for a password", text, "", Scope(project="x")))
    assert lam.get(lesson_id).action == " ".join(text.split())


TRACES = [Trace(f"t{i}", {"project": "x"}, time=1000.0 + i, input="connect to staging", attempted=["psql"],
                tool_errors=["fe_sendauth: no password supplied"], outcome="reverted") for i in range(1, 4)]


def _mined(action: str) -> tuple[list[str], list[str], str]:
    lam = Lamar(":memory:", seed=1)
    reply = json.dumps([{"precondition": "psql asks for a password on staging", "action": action,
                         "rationale": "", "scope": {"project": "x"}, "trace_ids": ["t1", "t2", "t3"]}])
    report = lam.sleep(traces=TRACES, model=ScriptedModel([reply]))
    candidates = [p.payload["experience"]["action"] for p in report.of_kind("candidate")]
    return candidates, [d.reason for d in report.dropped], json.dumps(report.to_dict())


@pytest.mark.parametrize("seed", range(2))
def test_sleep_drops_a_mined_lesson_with_a_credential_on_a_line_of_its_own(seed: int) -> None:
    for name, secret, text in lined(seed):
        candidates, reasons, report = _mined(text)
        assert candidates == [], name
        assert len(reasons) == 1 and "contains what looks like a secret" in reasons[0], name
        assert secret not in report, name


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_sleep_keeps_a_mined_lesson_of_the_same_layout_without_a_credential(text: str) -> None:
    candidates, reasons, _ = _mined(text)
    assert reasons == [] and candidates == [" ".join(text.split())]


def test_the_trace_writer_scrubs_the_lines_as_written(tmp_path: Path) -> None:
    # A trace keeps its line breaks: the same rules read it as the agent wrote it.
    path = tmp_path / "traces.jsonl"
    cases = lined(7)
    TraceWriter(path).write({"id": "t1", "context": {"project": "x"}, "input": cases[0][2],
                             "tool_errors": [text for _, _, text in cases[1:]]})
    written = path.read_text()
    for name, secret, _ in cases:
        assert secret not in written, name
    (trace,) = load_traces(path)
    assert trace.input.count("[REDACTED:password]") == 1 and "is in ~/.pgpass" in trace.input


@pytest.mark.parametrize("seed", range(2))
def test_the_screen_of_proposed_and_imported_lessons_reads_the_lines_as_written(seed: int) -> None:
    # The MCP server's propose_lesson and edit, and rule import, hand the text as written to this screen.
    from lamar.safety.lessons import lesson_refusal

    for name, secret, text in lined(seed):
        reason = lesson_refusal("psql asks for a password", text, "", {"project": "x"})
        assert reason.startswith("contains what looks like a secret") and secret not in reason, name
    for text in NEAR_MISSES:
        assert lesson_refusal("psql asks for a password", text, "", {"project": "x"}) == ""
