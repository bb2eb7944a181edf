"""Sleep and apply run by `lamar.cancel.in_thread` stop at their next model call or proposal once the
async caller is cancelled, and the cancelled await ends once they have (OpenAI SDK, HTTP mocked)."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import httpx2
import pytest

from lamar import Trace
from lamar.cancel import Cancelled, in_thread, stopped_by
from tests.twins import TRACE_ROWS, openai_model, twins

pytest.importorskip("openai", reason="the openai extra is not installed")

TRACES = [Trace.from_dict(row) for row in TRACE_ROWS]


def test_a_cancelled_sleep_calls_the_model_no_more_and_nothing_is_applied(tmp_path: Path) -> None:
    asked, release = threading.Event(), threading.Event()
    requests: list[httpx2.Request] = []

    def answer(request: httpx2.Request) -> httpx2.Response:
        requests.append(request)
        asked.set()
        release.wait(10)  # the first batch's answer is slow; the caller gives up meanwhile
        return httpx2.Response(500, json={"error": {"message": "overloaded", "type": "server_error"}})

    model = openai_model(answer)
    lam = twins(tmp_path / "lessons.db")
    before = len(lam.store.read())
    ended: list[BaseException] = []

    def nightly() -> object:  # what an async caller runs in a thread: sleep, then apply what it proposed
        try:
            return lam.apply(lam.sleep(traces=TRACES, model=model, max_prompt_tokens=1_500))
        except BaseException as exc:
            ended.append(exc)
            raise

    async def caller() -> None:
        work = asyncio.ensure_future(in_thread(nightly))
        await asyncio.to_thread(asked.wait, 10)
        work.cancel()
        with pytest.raises(asyncio.CancelledError):
            await work
        # The await ended once the thread had stopped: nothing of it runs on past this line.
        assert len(ended) == 1 and isinstance(ended[0], Cancelled)

    asyncio.run(caller())
    release.set()  # the abandoned call's answer comes, to nobody, and is not retried
    for thread in threading.enumerate():
        if thread.name == "lamar-model-call":
            thread.join(10)
    assert len(requests) == 1  # neither the second batch nor a retry of the first was sent
    assert len(lam.store.read()) == before  # the merge sleep would have proposed was not applied
    lam.close()


def test_an_apply_cancelled_before_a_proposal_writes_it_not_and_says_how_to_finish(tmp_path: Path) -> None:
    lam = twins(tmp_path / "lessons.db")
    report = lam.sleep()
    (merge,) = report.proposals
    before = len(lam.store.read())
    stop = threading.Event()
    stop.set()
    with stopped_by(stop), pytest.raises(Cancelled) as raised:
        lam.apply(report)
    assert str(raised.value) == (f"cancelled by its async caller; apply stopped at proposal {merge.id}, none applied "
                                 "before it: apply the report again to carry out the rest (what is in the store "
                                 "already is skipped as applied)")
    assert len(lam.store.read()) == before
    assert lam.apply(report).applied == [merge.id]  # the store was left whole: applying again finishes it
    lam.close()


def test_an_uncancelled_in_thread_returns_what_the_call_returns(tmp_path: Path) -> None:
    lam = twins(tmp_path / "lessons.db")
    report = asyncio.run(in_thread(lam.sleep))
    assert [p.kind for p in report] == ["merge"]
    assert asyncio.run(in_thread(lam.apply, report)).applied == [report.proposals[0].id]
    lam.close()
