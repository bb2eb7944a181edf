"""What the cancel tests of sleep share: a store whose sleep proposes a merge, traces that take two model
calls to mine, and an OpenAI model whose HTTP the test answers."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lamar import Experience, Lamar, Scope

if TYPE_CHECKING:
    import httpx2

    from lamar.models.openai import OpenAIModel

# Long enough that a 1,500-token prompt holds only some of them: mining asks the model more than once.
TRACE_ROWS: list[dict[str, Any]] = [
    {"id": f"t{i}", "time": float(i), "context": {"project": "demo"}, "input": "the build broke " + "x" * 1_400,
     "tool_errors": ["module map is stale"], "outcome": "reverted"} for i in range(6)]


def twins(path: Path) -> Lamar:
    """A store where sleep proposes a merge, which apply would write."""
    lam = Lamar(str(path))
    lam.add(Experience("tests are flaky", "rerun the failing test once", scope=Scope(project="demo")))
    lam.add(Experience("Tests are flaky.", "Rerun the failing test once!", scope=Scope(project="demo")))
    return lam


def openai_model(answer: Callable[[httpx2.Request], httpx2.Response]) -> OpenAIModel:
    """The real OpenAI adapter, whose requests `answer` answers (the caller skips without the openai extra)."""
    import httpx2

    from lamar.models.openai import OpenAIModel

    client = httpx2.Client(transport=httpx2.MockTransport(answer))
    return OpenAIModel("gpt-test", api="chat", api_key="sk-test", http_client=client, max_retries=2)
