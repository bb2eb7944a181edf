"""A recall context's `auth` and `pat` keys sort episodes (a method, a name): their label values are stored as
given, so evidence by value stays apart, while a credential under them or under a key that names one is not."""

from __future__ import annotations

from pathlib import Path

from lamar import Experience, Lamar, Scope
from lamar.safety import scrub_context


def test_a_label_under_auth_or_pat_is_kept_and_a_password_key_still_goes_whole() -> None:
    kept, kinds = scrub_context({"auth": "oauth", "pat": "main", "AUTH ": "saml", "db_password": "hunter2"})
    assert kept == {"auth": "oauth", "pat": "main", "AUTH ": "saml", "db_password": "[REDACTED:password]"}
    assert kinds == ["password"]


def test_a_credential_under_auth_is_still_scrubbed() -> None:
    token = "ghp_" + "a1B2c3D4e5" * 4
    kept, _ = scrub_context({"auth": f"token {token}", "auth_token": "short"})
    assert token not in kept["auth"] and "[REDACTED:github-token]" in kept["auth"]
    assert kept["auth_token"] == "[REDACTED:secret]"


def test_two_auth_methods_stay_two_logged_contexts_on_a_real_store(tmp_path: Path) -> None:
    path = str(tmp_path / "store.db")
    lam = Lamar(path, seed=3)
    lam.add(Experience("the login fails", "renew the session", scope=Scope(task="login"), id="exp_login"))
    recalled = [lam.recall({"task": "login", "auth": method}) for method in ("oauth", "saml")]
    assert [rec.context["auth"] for rec in recalled] == ["oauth", "saml"]
    lam.close()
    again = Lamar(path, seed=3)
    assert [again.episode(rec.episode_id).context["auth"] for rec in recalled] == ["oauth", "saml"]
    again.close()
