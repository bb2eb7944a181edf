"""The store conformance suite's part on recalled contexts: a credential in a context value never reaches the
store, and the lessons a context matches are those its scope matches as given, on every backend."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lamar.engine import Lamar
from lamar.experience import Experience, Scope
from lamar.signals import Signal

if TYPE_CHECKING:  # type checkers see the TestCase this mixin is used with
    from unittest import TestCase

    _Case = TestCase
else:  # at run time a plain class: neither unittest nor pytest collects the suite, only a subclass
    _Case = object

_TOKEN = "ghp_" + "Zq7Vw3Xk9Lm2Np5Rt8Yb4Cd6Fg1Hj0Ks3Qa7We9"
_PASSWORD = "Vexmoor-hunter-42"


class ContextConformance(_Case):
    """Mixed into `lamar.conformance.StoreConformance`, which says where a store lives and what it can do."""

    loc: str
    persistent: bool

    def open(self, location: str) -> Any:
        raise NotImplementedError

    def stored_bytes(self, store: Any) -> bytes:
        raise NotImplementedError

    def test_a_credential_in_a_context_is_stored_scrubbed_and_matches_as_given(self) -> None:
        lam = Lamar(self.open(self.loc), k=3, seed=0)
        self.addCleanup(lam.close)
        deploy = lam.add(Experience("the deploy fails", "rerun the pipeline", scope=Scope(task="deploy")))
        anywhere = lam.add(Experience("a push is refused", "pull first"))
        scrubbed = "push with [REDACTED:github-token]"
        # A scope may name the placeholder; a context holding the key itself still does not equal it.
        named = lam.add(Experience("the note is redacted", "ask for it again", scope=Scope(note=scrubbed)))
        lessons = {exp.id: exp for exp in lam.experiences()}
        for n in range(40):
            context = {"task": "deploy", "note": f"push with {_TOKEN}" if n % 2 else "plain"}
            if n % 4 == 1:
                context["db_password"] = _PASSWORD  # a credential by its key alone
            rec = lam.recall(context)
            self.assertEqual(set(rec.eligible), {i for i, e in lessons.items() if e.scope.matches(context)})
            logged = lam.episode(rec.episode_id).context
            self.assertEqual(dict(rec.context), dict(logged))
            self.assertEqual(logged["note"], scrubbed if n % 2 else "plain")
            if n % 4 == 1:
                self.assertEqual(logged["db_password"], "[REDACTED:password]")
            lam.report(rec.episode_id, Signal.SHIPPED if n % 3 else Signal.REVERTED)
        self.assertIn(named, lam.recall({"note": scrubbed}).eligible)  # the placeholder as given
        self.assertTrue({deploy, anywhere} <= set(lessons))
        before = {exp_id: lam.evidence(exp_id) for exp_id in lessons}
        if self.persistent:
            lam.close()  # saves the state beside the log: one more copy
            lam = Lamar(self.open(self.loc), k=3, seed=0)
            self.addCleanup(lam.close)
            # Folded again from the log, the evidence is what the recalls built.
            self.assertEqual({exp_id: lam.evidence(exp_id) for exp_id in lessons}, before)
        stored = self.stored_bytes(lam.store)
        for secret in (_TOKEN, _TOKEN[4:20], _PASSWORD):
            self.assertNotIn(secret.encode(), stored, f"{secret!r} is stored")
        self.assertIn(b"[REDACTED:github-token]", stored)
