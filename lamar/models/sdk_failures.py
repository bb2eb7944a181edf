"""`sdk_failure`: what a failed call of the Anthropic or OpenAI SDK (the two are built alike) says
as a ModelError, for the adapters of both."""

from __future__ import annotations

import re
from types import ModuleType
from typing import Any

from lamar._errors import ModelError
from lamar.models.attempts import out_of_credit, server_wait
from lamar.models.protocol import (
    api_wrote,
    clipped,
    connection_failure,
    redirect_base,
    redirected_to,
    status_failure,
    unexpected_reply,
)
from lamar.models.timeouts import slow_failure


def _said(exc: BaseException, status: int) -> str:
    """The API's own message in `exc`: both SDKs open it with the status the ModelError already gives
    ("Error code: 500 - internal", "500 internal (path: ...)"), which would read twice."""
    return re.sub(rf"^\s*(?:error code:\s*)?{status}\b\s*(?:-\s*)?", "", str(getattr(exc, "message", "")),
                  flags=re.IGNORECASE)


def sdk_failure(provider: str, model: str, client: Any, sdk: ModuleType, error: type[BaseException],
                exc: BaseException, credentials: str) -> ModelError:
    """The ModelError for `exc`, raised by a call through `client`: an SDK `error` (its base class;
    a status or a connection failure said the way every adapter says them), else a ValueError of a
    success status whose body is not JSON. `credentials` says what a refused key asks for."""
    if isinstance(exc, sdk.APIStatusError):
        said = _said(exc, exc.status_code)
        if out_of_credit(exc.status_code, exc.body):
            return ModelError(
                f"{provider} refused the request for model {model!r}: the account is out of credit or quota "
                f"(HTTP {exc.status_code}: {clipped(said, 300)}); nothing was changed: waiting or a smaller "
                f"prompt does not help: check the plan and billing of the key's account (or use another account's "
                f"key: {credentials}), then run sleep again")
        return status_failure(provider, model, exc.status_code, said, credentials=credentials,
                              missing_path="" if api_wrote(exc.body) else str(exc.request.url),
                              moved_to=redirected_to(exc.response),
                              moved_base=redirect_base(exc.response, str(client.base_url)),
                              wait=server_wait(exc.response))
    if isinstance(exc, sdk.APIConnectionError):
        where = str(client.base_url)
        return slow_failure(provider, model, where, exc) or connection_failure(provider, where, exc)
    if isinstance(exc, error):
        return ModelError(f"the {provider} call for model {model!r} failed: {exc}")
    return unexpected_reply(provider, str(client.base_url), exc)


__all__ = ["sdk_failure"]
