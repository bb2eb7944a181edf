"""An account out of credit or quota: the adapters say to check the plan and billing, not to wait or send
less (the real anthropic and openai SDKs, HTTP mocked at the transport)."""

from __future__ import annotations

from typing import Any

import httpx2
import pytest

from lamar import ModelError

pytest.importorskip("anthropic", reason="the anthropic extra is not installed")
pytest.importorskip("openai", reason="the openai extra is not installed")
from lamar.models.anthropic import AnthropicModel
from lamar.models.openai import OpenAIModel

OPENAI_QUOTA = {"error": {"message": "You exceeded your current quota, please check your plan and billing details.",
                          "type": "insufficient_quota", "param": None, "code": "insufficient_quota"}}
ANTHROPIC_CREDIT = {"type": "error", "error": {"type": "invalid_request_error", "message": (
    "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or "
    "purchase credits.")}}
ANTHROPIC_BILLING = {"type": "error", "error": {"type": "billing_error", "message": "Billing issue on this account."}}


def _model(provider: str, status: int, body: dict[str, Any], sent: list[object] | None = None) -> Any:
    def answer(request: httpx2.Request) -> httpx2.Response:
        if sent is not None:
            sent.append(request)
        return httpx2.Response(status, json=body)

    client = httpx2.Client(transport=httpx2.MockTransport(answer))
    if provider == "anthropic":
        return AnthropicModel("claude-test", api_key="sk-ant-test", http_client=client)
    return OpenAIModel("gpt-test", api_key="sk-test", http_client=client)


@pytest.mark.parametrize(("provider", "status", "body"), [
    ("openai", 429, OPENAI_QUOTA),
    ("anthropic", 400, ANTHROPIC_CREDIT),
    ("anthropic", 402, ANTHROPIC_BILLING),
])
def test_an_account_out_of_credit_says_to_check_its_billing(provider: str, status: int, body: dict[str, Any]) -> None:
    sent: list[object] = []
    with pytest.raises(ModelError) as caught:
        _model(provider, status, body, sent).complete("hello", max_tokens=16)
    assert len(sent) == 1  # no retry: the prompt is not sent again to an account that cannot pay for it
    said = str(caught.value)
    assert "billing" in said and f"HTTP {status}" in said
    # Waiting, a smaller prompt or another model name would not help.
    assert "wait and run sleep again" not in said and "max_prompt_tokens" not in said and "model name" not in said


def test_a_rate_limit_still_says_to_wait() -> None:
    slow_down = {"error": {"message": "Rate limit reached for requests", "type": "requests",
                           "code": "rate_limit_exceeded"}}
    sent: list[object] = []
    with pytest.raises(ModelError, match="wait and run sleep again"):
        _model("openai", 429, slow_down, sent).complete("hello", max_tokens=16)
    assert len(sent) == 3  # the SDKs' two retries
